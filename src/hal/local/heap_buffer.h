// weft: buffers backed by host memory.
//
// A heap buffer owns 64-byte aligned host memory taken from an allocator (in
// the same allocation as the buffer object), or wraps host memory owned by
// someone else and calls a release callback when destroyed. Both are plain
// root buffers: map/unmap return pointers into the memory; flush and
// invalidate are no-ops (host memory is coherent with the CPU). An
// allocated buffer's whole 2 MiB pages are advised to be transparent huge
// pages on Linux (1.04-1.11x on a 1.1B model's bandwidth-bound decode).
#ifndef WEFT_HAL_LOCAL_HEAP_BUFFER_H_
#define WEFT_HAL_LOCAL_HEAP_BUFFER_H_

#include "weft/buffer.h"

// Alignment of the memory of every allocated heap buffer.
#define WEFT_HEAP_BUFFER_ALIGNMENT 64

// Allocates a buffer of |byte_length| zeroed bytes (0 is allowed and
// allocates no memory) with |params| canonicalised. The object and its
// memory come from |allocator| in one allocation, so a failing allocator
// fails the call with RESOURCE_EXHAUSTED and leaks nothing.
weft_status_t weft_heap_buffer_allocate(weft_allocator_t allocator,
                                        weft_buffer_params_t params,
                                        weft_device_size_t byte_length,
                                        weft_buffer_t** out_buffer);

// Called once when a wrapping buffer is destroyed.
typedef void (*weft_heap_buffer_release_fn_t)(void* user_data,
                                              void* host_ptr);

// Wraps |byte_length| bytes of host memory at |host_ptr| (any alignment;
// may be NULL only when |byte_length| is 0). The buffer does not own the
// memory: |release_fn| (may be NULL) is called with |release_user_data| and
// |host_ptr| when the buffer is destroyed. If this call fails, |release_fn|
// is not called and the caller still owns the memory. Only |allocator|'s
// small object allocation can fail.
weft_status_t weft_heap_buffer_wrap(weft_allocator_t allocator,
                                    weft_buffer_params_t params,
                                    void* host_ptr,
                                    weft_device_size_t byte_length,
                                    weft_heap_buffer_release_fn_t release_fn,
                                    void* release_user_data,
                                    weft_buffer_t** out_buffer);

// True when |buffer|'s memory (its allocated buffer's) is a heap buffer.
bool weft_buffer_is_heap(const weft_buffer_t* buffer);

#endif  // WEFT_HAL_LOCAL_HEAP_BUFFER_H_
