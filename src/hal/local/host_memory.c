// weft: device memory entries for host-memory drivers (see host_memory.h).
#include "hal/local/host_memory.h"

#include "hal/local/heap_buffer.h"
#include "hal/local/transient_buffer.h"

weft_status_t weft_host_memory_allocate_buffer(weft_device_t* device,
                                               weft_buffer_params_t params,
                                               weft_device_size_t byte_length,
                                               weft_buffer_t** out_buffer) {
  return weft_heap_buffer_allocate(device->host_allocator, params, byte_length,
                                   out_buffer);
}

weft_status_t weft_host_memory_create_transient_buffer(
    weft_device_t* device, weft_buffer_params_t params,
    weft_device_size_t byte_length, weft_buffer_t** out_buffer) {
  return weft_transient_buffer_create(device->host_allocator, params,
                                      byte_length, out_buffer);
}
