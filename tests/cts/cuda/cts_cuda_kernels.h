// The CTS's kernels for CUDA (cts_kernels.cu), compiled by nvcc at build
// time and embedded: PTX for compute_90 and a fatbin for sm_90, described
// by the CTS's GPU kernel table (gpu_kernel_table.h). Built only where nvcc
// is (WEFT_NVCC): the weft_cts_cuda_kernels static library.
#ifndef WEFT_TESTS_CTS_CUDA_CTS_CUDA_KERNELS_H_
#define WEFT_TESTS_CTS_CUDA_CTS_CUDA_KERNELS_H_

#include <stddef.h>
#include <stdint.h>

#include "gpu_kernel_table.h"

#ifdef __cplusplus
extern "C" {
#endif

// The PTX text, NUL-terminated; the size counts the text without the NUL.
extern const unsigned char weft_cts_cuda_ptx[];
extern const size_t weft_cts_cuda_ptx_size;

// The fatbin (sm_90 SASS), weft_cts_cuda_fatbin_size bytes.
extern const unsigned char weft_cts_cuda_fatbin[];
extern const size_t weft_cts_cuda_fatbin_size;


#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_TESTS_CTS_CUDA_CTS_CUDA_KERNELS_H_
