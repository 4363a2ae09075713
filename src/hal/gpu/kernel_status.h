// weft: how a GPU kernel reports failure, what every GPU driver shares.
//
// A CPU kernel returns non-zero to fail; a GPU kernel cannot return
// anything, so it writes a status slot the driver gives each dispatch:
// the first failing workgroup stores its code (non-zero) in |code| with a
// compare-and-swap from 0 and, if it was first, its workgroup index. The
// driver reads the slots once the op completed and fails it in the same
// words a CPU kernel's failure has ("kernel 'k' (library 'l') failed in
// workgroup (x, y, z) with code c"), so a user reads one message whatever
// the driver.
//
// The slots live in host-visible memory the GPU writes. A device keeps
// them in a ring: each dispatch or execute takes one slot per dispatch at
// issue and gives them back at completion; ops on one GPU queue complete in
// issue order, so the ring frees in the order it allocates.
#ifndef WEFT_HAL_GPU_KERNEL_STATUS_H_
#define WEFT_HAL_GPU_KERNEL_STATUS_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hal/queue_op.h"

// One dispatch's status slot, as a kernel writes it.
typedef struct weft_gpu_kernel_status_t {
  uint32_t code;
  uint32_t block[3];
} weft_gpu_kernel_status_t;

// A ring of |capacity| slots; the caller guards it (the device mutex).
typedef struct weft_gpu_status_ring_t {
  uint32_t capacity;
  uint32_t head;  // first slot in use
  uint32_t tail;  // next free slot
  uint32_t ops;   // ops holding slots
} weft_gpu_status_ring_t;

static inline void weft_gpu_status_ring_initialize(
    uint32_t capacity, weft_gpu_status_ring_t* out_ring) {
  *out_ring = (weft_gpu_status_ring_t){capacity, 0, 0, 0};
}

// Takes |count| consecutive slots into |*out_first|; false when the ring
// has no room for them now (or ever: |count| > capacity - 1). The caller
// zeroes them.
bool weft_gpu_status_ring_acquire(weft_gpu_status_ring_t* ring, uint32_t count,
                                  uint32_t* out_first);

// Gives back the |count| slots from |first|, the oldest taken.
void weft_gpu_status_ring_release(weft_gpu_status_ring_t* ring, uint32_t first,
                                  uint32_t count);

// Gives back the slots from |first| taken by the last acquire, before any
// other (an op that failed to issue).
void weft_gpu_status_ring_unacquire(weft_gpu_status_ring_t* ring,
                                    uint32_t first);

// The status slots |op| takes: 1 for a DISPATCH, one per dispatch of an
// EXECUTE's command buffer (at least 1), 0 for other ops.
uint32_t weft_gpu_kernel_status_slot_count(const weft_queue_op_t* op);

// The failure the kernels of |op| (a DISPATCH, or an EXECUTE with one slot
// per dispatch in recording order) reported in the |count| slots at
// |slots|, |stride| bytes apart, or OK: the first slot holding a code,
// worded as a CPU kernel's failure, with the command named for an execute
// and the op annotated.
weft_status_t weft_gpu_kernel_failure(const weft_queue_op_t* op,
                                      const volatile void* slots,
                                      size_t stride, uint32_t count);

#endif  // WEFT_HAL_GPU_KERNEL_STATUS_H_
