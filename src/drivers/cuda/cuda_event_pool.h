// weft cuda driver: a pool of CUDA events.
//
// Every issued operation records one event after its work (what the
// completion thread waits on, and what another op's in-stream wait and a
// semaphore's device timepoint point at). Creating and destroying a CUevent
// per op costs driver calls, so events are ref-counted and recycled:
// acquired with one reference, shared by retaining, and back in the pool's
// free list at the last release. Events have timing disabled (cheaper to
// record) unless asked for timed ones (a traced op's start and end, whose
// difference is its GPU time); the completion path decides whether they
// block-sync or spin.
//
// Events outlive the device that made them when a semaphore still holds one
// (a device timepoint, cuda_semaphore.h), so the pool is ref-counted: its
// device holds one reference and every event out of the pool another. The
// last release destroys the free events and lets go of the primary context
// the pool retained.
#ifndef WEFT_DRIVERS_CUDA_CUDA_EVENT_POOL_H_
#define WEFT_DRIVERS_CUDA_CUDA_EVENT_POOL_H_

#include <stdbool.h>

#include "base/atomics.h"
#include "base/mutex.h"
#include "drivers/cuda/cuda_symbols.h"
#include "weft/allocator.h"

typedef struct weft_cuda_event_pool_t weft_cuda_event_pool_t;

typedef struct weft_cuda_event_t {
  weft_cuda_event_pool_t* pool;
  CUevent handle;
  // The stream it was last recorded on (an in-stream wait on the same
  // stream is already ordered).
  CUstream stream;
  bool timed;  // made without CU_EVENT_DISABLE_TIMING
  weft_atomic_uint32_t ref_count;
  struct weft_cuda_event_t* next_free;
} weft_cuda_event_t;

struct weft_cuda_event_pool_t {
  const weft_cuda_symbols_t* symbols;
  CUdevice cu_device;
  CUcontext context;  // the primary context, retained by the pool
  weft_allocator_t allocator;
  unsigned int flags;  // cuEventCreate flags, timing not disabled
  weft_slim_mutex_t mutex;
  weft_cuda_event_t* free_heads[2];  // untimed, timed; guarded by |mutex|
  // One for the device plus one per event out of the pool.
  weft_atomic_uint32_t ref_count;
};

// Creates a pool of events of |cu_device|'s primary context (retained
// here), with cuEventCreate |flags| (CU_EVENT_DISABLE_TIMING is added for
// untimed events). One reference, the device's.
weft_status_t weft_cuda_event_pool_create(const weft_cuda_symbols_t* symbols,
                                          CUdevice cu_device,
                                          unsigned int flags,
                                          weft_allocator_t allocator,
                                          weft_cuda_event_pool_t** out_pool);

// Adds a reference (a word pool, cuda_word_pool.h, keeps the context
// through its event pool).
static inline void weft_cuda_event_pool_retain(weft_cuda_event_pool_t* pool) {
  weft_atomic_fetch_add(&pool->ref_count, 1u, memory_order_relaxed);
}

// Drops a reference; the last destroys the free events (pushing the
// context on this thread) and releases the primary context.
void weft_cuda_event_pool_release(weft_cuda_event_pool_t* pool);

// A free event (or a new one; the context must be current), one reference;
// |timed| for one that cuEventElapsedTime can measure.
weft_status_t weft_cuda_event_pool_acquire(weft_cuda_event_pool_t* pool,
                                           bool timed,
                                           weft_cuda_event_t** out_event);

static inline void weft_cuda_event_retain(weft_cuda_event_t* event) {
  weft_atomic_fetch_add(&event->ref_count, 1u, memory_order_relaxed);
}

// Drops a reference; the last puts the event back in its pool.
void weft_cuda_event_release(weft_cuda_event_t* event);

#endif  // WEFT_DRIVERS_CUDA_CUDA_EVENT_POOL_H_
