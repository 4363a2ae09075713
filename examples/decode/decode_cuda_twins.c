// weft decode example: the decoder's CPU kernels as a shared module for
// the CUDA test double (tests/cuda_double/cuda_double.h), which runs them
// as the CPU twins of cuda/decode_kernels.cu's entries when
// WEFT_CUDA_DOUBLE_TWINS names this module and
// decode_cuda_twins_query: weft-decode --device=cuda then runs on the
// double without code of its own for it. A test module, never installed.
#include "decode_kernels.h"

// decode_kernels_query, exported (the module's only symbol).
__attribute__((visibility("default"))) const weft_kernel_library_t*
decode_cuda_twins_query(uint32_t abi_version);

const weft_kernel_library_t* decode_cuda_twins_query(uint32_t abi_version) {
  return decode_kernels_query(abi_version);
}
