// weft example kernel library.
//
// A kernel library is a table of kernels behind one query function. This one
// is linked into the example, and a device makes an executable of it with
//   weft_device_create_executable(
//       device, weft_executable_source_cpu_static(weft_example_kernels_query),
//       &exe)
// The same source built as a shared object exporting
// weft_kernel_library_query (WEFT_KERNEL_LIBRARY_QUERY_SYMBOL) could be
// loaded at run time with weft_executable_source_cpu_shared_object(path).
//
// Kernels:
//   "saxpy"  y[i] = a * x[i] + y[i] for i < count.
//            binding 0: x (f32, read), binding 1: y (f32, read and written);
//            constant 0: a (the bits of an f32), constant 1: count.
//            Each workgroup handles WEFT_EXAMPLE_SAXPY_WORKGROUP_ELEMENTS
//            consecutive elements: dispatch ceil(count / that) workgroups.
#ifndef WEFT_EXAMPLES_KERNELS_EXAMPLE_KERNELS_H_
#define WEFT_EXAMPLES_KERNELS_EXAMPLE_KERNELS_H_

#include <stdint.h>

#include "weft/kernel_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_EXAMPLE_SAXPY_WORKGROUP_ELEMENTS 256u

// Returns the library table for |abi_version|, or NULL when the library was
// built for another ABI version.
const weft_kernel_library_t* weft_example_kernels_query(uint32_t abi_version);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_EXAMPLES_KERNELS_EXAMPLE_KERNELS_H_
