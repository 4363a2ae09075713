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

// The kernel table of a GPU format's source (weft/executable.h: CUDA_*,
// SPIRV), shared by the drivers that read one.
//
// INVALID_ARGUMENT, naming "<driver> executable '<name>'", unless |source|
// has a kernel table whose every kernel has a name.
weft_status_t weft_executable_check_kernel_table(
    const weft_executable_source_t* source, const char* driver,
    const char* name);
// Bytes weft_executable_copy_kernel_table writes: |name| and each kernel's
// name, NUL-terminated.
size_t weft_executable_kernel_table_strings_size(
    const weft_executable_source_t* source, const char* name);
// Copies |name| and the table's names into |strings| and describes each
// kernel in |infos| (source->kernel_count of them, naming the copies);
// returns the copy of |name|. The table must have passed the check.
const char* weft_executable_copy_kernel_table(
    const weft_executable_source_t* source, const char* name, char* strings,
    weft_kernel_info_t* infos);

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
