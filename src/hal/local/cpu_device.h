// weft: the device vtable entries every CPU driver shares.
//
// A CPU driver's memory is host memory from the device's host allocator and
// its code is host code, so how its devices make buffers and executables is
// the same for all of them (device_impl.h).
#ifndef WEFT_HAL_LOCAL_CPU_DEVICE_H_
#define WEFT_HAL_LOCAL_CPU_DEVICE_H_

#include "hal/device_impl.h"

// allocate_buffer: a heap buffer (heap_buffer.h).
weft_status_t weft_cpu_device_allocate_buffer(weft_device_t* device,
                                              weft_buffer_params_t params,
                                              weft_device_size_t byte_length,
                                              weft_buffer_t** out_buffer);

// create_transient_buffer: a transient buffer (transient_buffer.h) whose
// memory the ALLOCA op commits.
weft_status_t weft_cpu_device_create_transient_buffer(
    weft_device_t* device, weft_buffer_params_t params,
    weft_device_size_t byte_length, weft_buffer_t** out_buffer);

// create_executable: a CPU kernel library (cpu_executable.h).
weft_status_t weft_cpu_device_create_executable(
    weft_device_t* device, weft_executable_source_t source,
    weft_executable_t** out_executable);

// The device vtable entries above, for a driver's vtable initializer.
#define WEFT_CPU_DEVICE_ENTRIES                                       \
  .allocate_buffer = weft_cpu_device_allocate_buffer,                 \
  .create_transient_buffer = weft_cpu_device_create_transient_buffer, \
  .create_executable = weft_cpu_device_create_executable

#endif  // WEFT_HAL_LOCAL_CPU_DEVICE_H_
