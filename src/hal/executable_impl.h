// weft: what an executable implementation provides.
//
// Every executable embeds weft_executable_t at offset 0: the ref-counted
// base, the domain of the device that made it (hal/domain.h) and the
// device-neutral signatures of its kernels, which validation reads. The
// code itself (CPU functions, a GPU module) is the implementation's.
#ifndef WEFT_HAL_EXECUTABLE_IMPL_H_
#define WEFT_HAL_EXECUTABLE_IMPL_H_

#include "hal/domain.h"
#include "hal/resource.h"
#include "weft/executable.h"

typedef struct weft_executable_vtable_t {
  // Must be first (see resource.h). Frees the executable.
  void (*destroy)(weft_executable_t* executable);
} weft_executable_vtable_t;

struct weft_executable_t {
  weft_resource_t resource;  // vtable: weft_executable_vtable_t
  weft_allocator_t allocator;
  weft_domain_t domain;
  weft_executable_format_t format;
  // Owned by the implementation; valid while the executable lives.
  const char* name;
  uint32_t kernel_count;
  const weft_kernel_info_t* kernels;
};

// Initialises the base fields (one reference).
void weft_executable_initialize(const weft_executable_vtable_t* vtable,
                                weft_allocator_t allocator,
                                weft_domain_t domain,
                                weft_executable_format_t format,
                                const char* name, uint32_t kernel_count,
                                const weft_kernel_info_t* kernels,
                                weft_executable_t* out_executable);

static inline const weft_executable_vtable_t* weft_executable_vtable(
    const weft_executable_t* executable) {
  return (const weft_executable_vtable_t*)executable->resource.vtable;
}

// Checks a dispatch of kernel |kernel_ordinal| of |executable| against its
// signature: the ordinal in range and |constant_count| and |binding_count|
// equal to the kernel's. A |workgroup_count| with a zero dimension is
// allowed (the dispatch does nothing). INVALID_ARGUMENT naming the kernel,
// the library and the values, prefixed with |what| (the caller, e.g.
// "weft_device_queue_dispatch").
weft_status_t weft_dispatch_validate(const weft_executable_t* executable,
                                     uint32_t kernel_ordinal,
                                     const uint32_t workgroup_count[3],
                                     uint32_t constant_count,
                                     uint32_t binding_count, const char* what);

// INVALID_ARGUMENT unless |executable| can run in |domain| (made by a
// device of that domain), naming the executable and |device_id|, prefixed
// with |what|.
weft_status_t weft_executable_validate_domain(
    const weft_executable_t* executable, weft_domain_t domain,
    const char* device_id, const char* what);

#endif  // WEFT_HAL_EXECUTABLE_IMPL_H_
