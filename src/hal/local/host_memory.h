// weft: device memory entries for drivers whose memory is host memory.
//
// Every CPU driver allocates its buffers from the device's host allocator,
// so these are their device vtable entries as they are (device_impl.h).
#ifndef WEFT_HAL_LOCAL_HOST_MEMORY_H_
#define WEFT_HAL_LOCAL_HOST_MEMORY_H_

#include "hal/device_impl.h"

// allocate_buffer: a heap buffer (heap_buffer.h).
weft_status_t weft_host_memory_allocate_buffer(weft_device_t* device,
                                               weft_buffer_params_t params,
                                               weft_device_size_t byte_length,
                                               weft_buffer_t** out_buffer);

// create_transient_buffer: a transient buffer (transient_buffer.h) whose
// memory the ALLOCA op commits.
weft_status_t weft_host_memory_create_transient_buffer(
    weft_device_t* device, weft_buffer_params_t params,
    weft_device_size_t byte_length, weft_buffer_t** out_buffer);

// The device vtable entries above, for a driver's vtable initializer.
#define WEFT_HOST_MEMORY_DEVICE_ENTRIES                           \
  .allocate_buffer = weft_host_memory_allocate_buffer,            \
  .create_transient_buffer = weft_host_memory_create_transient_buffer

#endif  // WEFT_HAL_LOCAL_HOST_MEMORY_H_
