// weft: the device vtable entries CPU drivers share (see cpu_device.h).
#include "hal/local/cpu_device.h"

#include "hal/local/cpu_executable.h"
#include "hal/local/heap_buffer.h"
#include "hal/local/transient_buffer.h"

weft_status_t weft_cpu_device_allocate_buffer(weft_device_t* device,
                                              weft_buffer_params_t params,
                                              weft_device_size_t byte_length,
                                              weft_buffer_t** out_buffer) {
  return weft_heap_buffer_allocate(device->host_allocator, params, byte_length,
                                   out_buffer);
}

weft_status_t weft_cpu_device_create_transient_buffer(
    weft_device_t* device, weft_buffer_params_t params,
    weft_device_size_t byte_length, weft_buffer_t** out_buffer) {
  return weft_transient_buffer_create(device->host_allocator, params,
                                      byte_length, out_buffer);
}

weft_status_t weft_cpu_device_create_executable(
    weft_device_t* device, weft_executable_source_t source,
    weft_executable_t** out_executable) {
  return weft_cpu_executable_create(device->host_allocator, device->id, source,
                                    out_executable);
}
