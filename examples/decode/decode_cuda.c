// weft decode example: the decoder's CUDA executable (decode_cuda.h).
#include "decode_cuda.h"

#include <string.h>

#include "decode_cuda_ptx.h"
#include "decode_model.h"

_Static_assert(DECODE_CUDA_DTYPE_F32 == DECODE_DTYPE_F32 &&
                   DECODE_CUDA_DTYPE_F16 == DECODE_DTYPE_F16,
               "cuda/decode_kernels.cu's dtypes are decode_dtype_t's");
_Static_assert(DECODE_KERNEL_COUNT == 13,
               "a kernel added to decode_kernels.h needs its CUDA twin and "
               "block size here");

// Threads of each kernel's block, in decode_kernels.h's order.
static const uint32_t kDecodeCudaBlockSizes[DECODE_KERNEL_COUNT] = {
    [DECODE_KERNEL_EMBED] = DECODE_CUDA_ROW_WISE_THREADS,
    [DECODE_KERNEL_QKV] = DECODE_CUDA_ROW_THREADS,
    [DECODE_KERNEL_ATTENTION] = DECODE_CUDA_ATTENTION_THREADS,
    [DECODE_KERNEL_MATVEC_ADD] = DECODE_CUDA_ROW_THREADS,
    [DECODE_KERNEL_FFN] = DECODE_CUDA_ROW_THREADS,
    [DECODE_KERNEL_CLASSIFIER] = DECODE_CUDA_ROW_THREADS,
    [DECODE_KERNEL_ARGMAX] = DECODE_CUDA_ARGMAX_THREADS,
    [DECODE_KERNEL_BATCH_EMBED] = DECODE_CUDA_ROW_WISE_THREADS,
    [DECODE_KERNEL_BATCH_RMSNORM] = DECODE_CUDA_ROW_WISE_THREADS,
    [DECODE_KERNEL_BATCH_QUANTIZE] = DECODE_CUDA_QUANTIZE_THREADS,
    [DECODE_KERNEL_GEMM] = DECODE_CUDA_GEMM_THREADS,
    [DECODE_KERNEL_BATCH_ROPE] = DECODE_CUDA_ROW_WISE_THREADS,
    [DECODE_KERNEL_BATCH_ATTENTION] = DECODE_CUDA_ATTENTION_THREADS,
};

bool decode_cuda_kernels_available(void) {
#if defined(DECODE_HAVE_CUDA_KERNELS)
  return true;
#else
  return false;
#endif
}

weft_status_t decode_cuda_executable_source(
    weft_kernel_def_t kernels[DECODE_KERNEL_COUNT],
    weft_executable_source_t* out_source) {
  memset(out_source, 0, sizeof(*out_source));
  if (!decode_cuda_kernels_available()) {
    return WEFT_STATUS(UNAVAILABLE,
                       "decode: no CUDA kernels in this build (nvcc was not "
                       "found when it was configured; see "
                       "cmake/WeftCuda.cmake)");
  }
  // The CPU table's names, counts and local memory (the scores of
  // attention: the same dynamic shared memory), the CUDA bodies' blocks.
  const weft_kernel_library_t* library = decode_kernels_library();
  for (uint32_t i = 0; i < DECODE_KERNEL_COUNT; ++i) {
    kernels[i] = library->kernels[i];
    kernels[i].fn = NULL;
    kernels[i].workgroup_size[0] = kDecodeCudaBlockSizes[i];
    kernels[i].workgroup_size[1] = 1;
    kernels[i].workgroup_size[2] = 1;
  }
#if defined(DECODE_HAVE_CUDA_KERNELS)
  *out_source = weft_executable_source_cuda(
      WEFT_EXECUTABLE_FORMAT_CUDA_PTX, "decode_kernels", decode_cuda_ptx,
      decode_cuda_ptx_size, DECODE_KERNEL_COUNT, kernels);
#endif
  return WEFT_OK;
}

bool decode_cuda_is_device(const weft_device_t* device) {
  return strcmp(weft_device_driver_name(device), "cuda") == 0;
}
