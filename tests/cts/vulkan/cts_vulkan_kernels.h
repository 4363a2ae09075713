// The CTS's kernels for Vulkan (kernels/*.comp), compiled to one SPIR-V
// module at build time and embedded, described by the CTS's GPU kernel
// table (gpu_kernel_table.h). Built only where glslangValidator and
// spirv-tools are: the weft_cts_vulkan_kernels static library.
#ifndef WEFT_TESTS_CTS_VULKAN_CTS_VULKAN_KERNELS_H_
#define WEFT_TESTS_CTS_VULKAN_CTS_VULKAN_KERNELS_H_

#include <stddef.h>
#include <stdint.h>

#include "gpu_kernel_table.h"

#ifdef __cplusplus
extern "C" {
#endif

// The module, weft_cts_vulkan_spirv_size bytes (whole words).
extern const unsigned char weft_cts_vulkan_spirv[];
extern const size_t weft_cts_vulkan_spirv_size;


#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_TESTS_CTS_VULKAN_CTS_VULKAN_KERNELS_H_
