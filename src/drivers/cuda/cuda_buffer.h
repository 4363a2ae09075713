// weft cuda driver: buffers in GPU memory.
//
// Three kinds, one vtable:
//  - device memory (cuMemAlloc): what a buffer without HOST_VISIBLE gets;
//    the host cannot map it (its contents move through the queue);
//  - pinned host memory mapped into the device (cuMemHostAlloc with
//    DEVICEMAP): what HOST_VISIBLE asks for; the host maps it, kernels and
//    copies reach it through its device address;
//  - queue-ordered memory (weft_device_queue_alloca): the handle exists at
//    once, the memory from the stream-ordered pool between the ALLOCA and
//    DEALLOCA ops (cuMemAllocFromPoolAsync / cuMemFreeAsync on the stream).
// Every buffer is placed in its device's domain (HOST_VISIBLE for pinned
// memory), so CPU devices reach pinned buffers and nothing else.
//
// A buffer keeps its device's context alive through the event pool, which
// retains the primary context (buffers may outlive their device).
#ifndef WEFT_DRIVERS_CUDA_CUDA_BUFFER_H_
#define WEFT_DRIVERS_CUDA_CUDA_BUFFER_H_

#include <stdbool.h>

#include "drivers/cuda/cuda_event_pool.h"
#include "hal/buffer_impl.h"

typedef enum weft_cuda_buffer_kind_e {
  WEFT_CUDA_BUFFER_DEVICE = 0,
  WEFT_CUDA_BUFFER_HOST_PINNED = 1,
  WEFT_CUDA_BUFFER_QUEUE_ORDERED = 2,
} weft_cuda_buffer_kind_t;

// Allocates a buffer of |byte_length| bytes in |domain| for |params|:
// pinned host memory when params.type asks for HOST_VISIBLE, device memory
// otherwise, zeroed (device memory on |streams|[0], with the other
// |stream_count| - 1 streams waiting for it, ahead of any op). The context
// must be current. |pool| is retained.
weft_status_t weft_cuda_buffer_allocate(weft_cuda_event_pool_t* pool,
                                        const CUstream* streams,
                                        uint32_t stream_count,
                                        weft_domain_t domain,
                                        weft_buffer_params_t params,
                                        weft_device_size_t byte_length,
                                        weft_allocator_t allocator,
                                        weft_buffer_t** out_buffer);

// Creates the handle of a queue-ordered buffer (no memory yet).
weft_status_t weft_cuda_buffer_create_queue_ordered(
    weft_cuda_event_pool_t* pool, weft_domain_t domain,
    weft_buffer_params_t params, weft_device_size_t byte_length,
    weft_allocator_t allocator, weft_buffer_t** out_buffer);

// The device address of byte |offset| of |buffer| (offset relative to
// |buffer|, a subspan or a root) into |out_pointer|. FAILED_PRECONDITION
// for a queue-ordered buffer outside its ALLOCA..DEALLOCA; INVALID_ARGUMENT
// for a buffer that is not a cuda buffer (validation keeps those out).
weft_status_t weft_cuda_buffer_device_pointer(const weft_buffer_t* buffer,
                                              weft_device_size_t offset,
                                              CUdeviceptr* out_pointer);

// ALLOCA: takes memory for the queue-ordered |buffer| from |memory_pool|
// on |stream| (the context must be current).
weft_status_t weft_cuda_buffer_commit(weft_buffer_t* buffer,
                                      CUmemoryPool memory_pool,
                                      CUstream stream);
// DEALLOCA: gives it back on |stream|.
weft_status_t weft_cuda_buffer_decommit(weft_buffer_t* buffer,
                                        CUstream stream);

#endif  // WEFT_DRIVERS_CUDA_CUDA_BUFFER_H_
