// weft cuda driver: executables, CUDA modules loaded from PTX or a
// cubin/fatbin image with a kernel table (weft/executable.h says how the
// table and the kernels' parameters look).
#ifndef WEFT_DRIVERS_CUDA_CUDA_EXECUTABLE_H_
#define WEFT_DRIVERS_CUDA_CUDA_EXECUTABLE_H_

#include "drivers/cuda/cuda_event_pool.h"
#include "hal/executable_impl.h"

// What a launch of one kernel needs.
typedef struct weft_cuda_kernel_t {
  CUfunction function;
  uint32_t block_size[3];
  uint32_t shared_memory_size;
  uint32_t binding_count;
  uint32_t constant_count;
} weft_cuda_kernel_t;

// Loads |source| (format CUDA_PTX or CUDA_IMAGE) into the current context
// and looks up every kernel of its table. INVALID_ARGUMENT for a source
// without data or table, a kernel without a name or with a zero block
// dimension; the driver's error, naming the library and the kernel, when
// loading or a lookup fails. |pool| is retained (the context).
weft_status_t weft_cuda_executable_create(weft_cuda_event_pool_t* pool,
                                          weft_domain_t domain,
                                          weft_executable_source_t source,
                                          weft_allocator_t allocator,
                                          weft_executable_t** out_executable);

// Kernel |ordinal| of a cuda executable (validated by the HAL), or NULL
// for an executable of another kind.
const weft_cuda_kernel_t* weft_cuda_executable_kernel(
    const weft_executable_t* executable, uint32_t ordinal);

#endif  // WEFT_DRIVERS_CUDA_CUDA_EXECUTABLE_H_
