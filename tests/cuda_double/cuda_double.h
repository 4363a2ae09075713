// weft's CUDA test double: what tests see of it besides the driver API.
//
// libweft_cuda_double.so is a TEST DOUBLE. It is never shipped or installed.
// It implements, on the CPU, exactly the subset of the CUDA driver API that
// weft uses (the entry points of src/drivers/cuda/cuda_symbols.h), so the
// cuda driver's own logic runs in CI on machines without a GPU. The driver
// loads it instead of libcuda.so.1 when WEFT_CUDA_DRIVER_LIBRARY names its
// path. See cuda_double_impl.h for the model (streams are threads, device
// pointers are host addresses, kernels are host functions) and for how it
// differs from the real driver.
//
// Environment, read by the first successful cuInit:
//   WEFT_CUDA_DOUBLE_DEVICES     device count (default 1, at most 16); 0 makes
//                                cuInit fail with CUDA_ERROR_NO_DEVICE.
//   WEFT_CUDA_DOUBLE_MEMORY      bytes of memory per device (default 1 GiB);
//                                allocations past it fail with
//                                CUDA_ERROR_OUT_OF_MEMORY.
//   WEFT_CUDA_DOUBLE_LATENCY_US  a delay before each stream task, to widen
//                                races in tests (default 0).
//
// Besides the driver API the library exports the weft_cuda_double_*
// controls below; a test resolves them with dlsym as it does the API.
#ifndef WEFT_TESTS_CUDA_DOUBLE_CUDA_DOUBLE_H_
#define WEFT_TESTS_CUDA_DOUBLE_CUDA_DOUBLE_H_

#include <cuda.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

//===----------------------------------------------------------------------===//
// Controls for tests
//===----------------------------------------------------------------------===//

// The number of live allocations: cuMemAlloc, cuMemHostAlloc and
// cuMemAllocFromPoolAsync memory not yet freed (a pool allocation whose
// cuMemFreeAsync the stream has not reached yet still counts). A test that
// released everything expects 0. Thread-safe.
size_t weft_cuda_double_live_allocations(void);

// Makes the next call of |entry_point| return |result| without doing
// anything. |entry_point| is the API name ("cuMemAlloc") or the exported
// symbol ("cuMemAlloc_v2", "cuGraphInstantiateWithFlags"). Arming the same
// entry point twice fails its next two calls, in order. At most 64 armed
// failures at once (more abort the process: a broken test). Thread-safe.
void weft_cuda_double_fail_next(const char* entry_point, CUresult result);

// The number of kernel launches made: successful cuLaunchKernel calls plus
// the kernel nodes of successful cuGraphLaunch calls, counted at the call
// (not when the stream runs them). Thread-safe.
uint64_t weft_cuda_double_launch_count(void);

//===----------------------------------------------------------------------===//
// Host implementations of kernels
//===----------------------------------------------------------------------===//

// A grid or block shape, or a block's index, as CUDA's dim3.
typedef struct weft_cuda_double_dim3_t {
  uint32_t x;
  uint32_t y;
  uint32_t z;
} weft_cuda_double_dim3_t;

// What one block of a launch sees.
typedef struct weft_cuda_double_block_t {
  weft_cuda_double_dim3_t grid_dim;
  weft_cuda_double_dim3_t block_dim;
  weft_cuda_double_dim3_t block_idx;
  // The launch's dynamic shared memory: shared_memory_size zeroed bytes
  // (NULL when 0), fresh for each block.
  void* shared_memory;
  size_t shared_memory_size;
} weft_cuda_double_block_t;

// The host implementation of a kernel: runs one block, looping over the
// block's threads itself. |params|[i] points at the value of parameter i,
// copied at launch (as the driver copies kernelParams), in an 8-byte
// aligned slot of the size the kernel's signature gives.
typedef void (*weft_cuda_double_kernel_fn_t)(
    const weft_cuda_double_block_t* block, void* const* params);

// A kernel the double can run: cuModuleGetFunction finds |name| only if
// it is both an .entry of the module's PTX and in the double's registry.
// |signature| gives the parameters in order, one character each: 'p' a
// pointer (8 bytes), '8' a uint64_t, '4' a uint32_t.
typedef struct weft_cuda_double_kernel_t {
  const char* name;
  const char* signature;
  weft_cuda_double_kernel_fn_t fn;
} weft_cuda_double_kernel_t;

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_TESTS_CUDA_DOUBLE_CUDA_DOUBLE_H_
