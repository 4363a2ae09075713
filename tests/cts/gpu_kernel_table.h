// The kernel table of the CTS's GPU kernels (tests/cts/cuda, CUDA C, and
// tests/cts/vulkan, GLSL): what a GPU module does not say about its
// kernels (see weft/executable.h). The CPU library's names, binding counts,
// constant counts and workgroup sizes (tests/cts/test_kernels.c), with fn
// NULL, so one CTS runs on every driver.
#ifndef WEFT_TESTS_CTS_GPU_KERNEL_TABLE_H_
#define WEFT_TESTS_CTS_GPU_KERNEL_TABLE_H_

#include <stdint.h>

#include "weft/kernel_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

// scale_offset, abs_range, write_ids and fail, in the CPU library's order.
extern const weft_kernel_def_t weft_cts_gpu_kernel_table[];
extern const uint32_t weft_cts_gpu_kernel_count;

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_TESTS_CTS_GPU_KERNEL_TABLE_H_
