// weft: allocators.
//
// An allocator is a value {self, ctl} passed into every create call and kept
// by the object it created, which frees with it. Memory is zeroed by default.
// A zeroed allocator (no ctl) is refused: INVALID_ARGUMENT.
//
// NULL: pointer arguments are required unless the function's comment says
// "|x| may be NULL" (see "NULL arguments" in weft/status.h).
#ifndef WEFT_ALLOCATOR_H_
#define WEFT_ALLOCATOR_H_

#include <stddef.h>
#include <stdint.h>

#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum weft_allocator_command_e {
  // Allocate |byte_length| zeroed bytes into *inout_ptr.
  WEFT_ALLOCATOR_COMMAND_CALLOC = 0,
  // Allocate |byte_length| uninitialised bytes into *inout_ptr.
  WEFT_ALLOCATOR_COMMAND_MALLOC = 1,
  // Resize *inout_ptr (may be NULL) to |byte_length| bytes.
  WEFT_ALLOCATOR_COMMAND_REALLOC = 2,
  // Free *inout_ptr (may be NULL).
  WEFT_ALLOCATOR_COMMAND_FREE = 3,
} weft_allocator_command_t;

typedef weft_status_t (*weft_allocator_ctl_fn_t)(
    void* self, weft_allocator_command_t command, size_t byte_length,
    void** inout_ptr);

typedef struct weft_allocator_t {
  void* self;
  weft_allocator_ctl_fn_t ctl;
} weft_allocator_t;

// The C library allocator (malloc/calloc/realloc/free).
weft_allocator_t weft_allocator_system(void);

// Allocates |byte_length| zeroed bytes. RESOURCE_EXHAUSTED on failure, with
// the size in the message. A zero length allocates nothing and yields NULL.
weft_status_t weft_allocator_malloc(weft_allocator_t allocator,
                                    size_t byte_length, void** out_ptr);

// Allocates |byte_length| bytes without zeroing them.
weft_status_t weft_allocator_malloc_uninitialized(weft_allocator_t allocator,
                                                  size_t byte_length,
                                                  void** out_ptr);

// Resizes *inout_ptr to |byte_length| bytes; on failure *inout_ptr is kept.
weft_status_t weft_allocator_realloc(weft_allocator_t allocator,
                                     size_t byte_length, void** inout_ptr);

// Allocates count * element_size zeroed bytes, failing with INVALID_ARGUMENT
// if the product overflows.
weft_status_t weft_allocator_malloc_array(weft_allocator_t allocator,
                                          size_t count, size_t element_size,
                                          void** out_ptr);

// Frees |ptr|. |ptr| may be NULL (a no-op).
void weft_allocator_free(weft_allocator_t allocator, void* ptr);

// Allocates |byte_length| zeroed bytes at an address that is a multiple of
// |alignment| (a power of two, at most 4096): for objects that keep fields
// on cache lines of their own (alignas(64)), which the allocator's own
// 16-byte alignment would shift across lines. Built on the allocator's
// ordinary commands (it takes up to |alignment| + 8 bytes more), so any
// allocator works. Free with weft_allocator_free_aligned, never with
// weft_allocator_free.
weft_status_t weft_allocator_malloc_aligned(weft_allocator_t allocator,
                                            size_t byte_length,
                                            size_t alignment, void** out_ptr);

// Frees what weft_allocator_malloc_aligned returned. |ptr| may be NULL.
void weft_allocator_free_aligned(weft_allocator_t allocator, void* ptr);

// An allocator that forwards to |base| and fails allocation number
// |fail_at| (0-based, counting CALLOC/MALLOC/REALLOC calls) and every one
// after it while |fail_at| >= 0. Used by fault-injection tests.
// Caller-owned storage; not thread-safe beyond atomic counting.
typedef struct weft_failing_allocator_t {
  weft_allocator_t base;
  int64_t fail_at;
  // Number of allocation requests seen so far (atomic).
  int64_t request_count;
  // Number of allocation requests that were failed on purpose (atomic).
  int64_t failure_count;
} weft_failing_allocator_t;

// Initialises |storage| to forward to |base| and fail the |fail_at|-th
// allocation and all later ones (-1 never fails). Returns the allocator value
// that uses it (a zeroed allocator, refused by every allocation, when
// |storage| is NULL).
weft_allocator_t weft_failing_allocator_initialize(
    weft_allocator_t base, int64_t fail_at, weft_failing_allocator_t* storage);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_ALLOCATOR_H_
