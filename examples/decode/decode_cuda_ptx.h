// weft decode example: cuda/decode_kernels.cu as PTX (compute_75),
// compiled by nvcc at build time and embedded (cmake/embed_file.cmake).
// Defined only where nvcc was found (decode_cuda.c reads it then).
#ifndef WEFT_EXAMPLES_DECODE_DECODE_CUDA_PTX_H_
#define WEFT_EXAMPLES_DECODE_DECODE_CUDA_PTX_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

// The PTX text, NUL-terminated; the size counts the text without the NUL.
extern const unsigned char decode_cuda_ptx[];
extern const size_t decode_cuda_ptx_size;

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_EXAMPLES_DECODE_DECODE_CUDA_PTX_H_
