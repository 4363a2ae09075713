// weft cuda driver: the CUDA driver API entry points weft uses, resolved at
// run time.
//
// The driver never links libcuda: it dlopens libcuda.so.1 (or the library
// WEFT_CUDA_DRIVER_LIBRARY names, e.g. the CPU test double in
// tests/cuda_double) and resolves every entry point below into one table.
// The list is the whole of weft's dependence on the driver API: a test
// double implements exactly these.
//
// Names go through cuda.h's macros, so a versioned entry point resolves to
// the symbol the header means (cuMemAlloc is "cuMemAlloc_v2") and each
// table member has the header's own prototype.
#ifndef WEFT_DRIVERS_CUDA_CUDA_SYMBOLS_H_
#define WEFT_DRIVERS_CUDA_CUDA_SYMBOLS_H_

#include <cuda.h>

#include "weft/status.h"

// X(name): every entry point weft calls.
#define WEFT_CUDA_SYMBOLS(X)         \
  /* Errors and initialisation */    \
  X(cuGetErrorName)                  \
  X(cuGetErrorString)                \
  X(cuInit)                          \
  X(cuDriverGetVersion)              \
  /* Devices and contexts */         \
  X(cuDeviceGetCount)                \
  X(cuDeviceGet)                     \
  X(cuDeviceGetName)                 \
  X(cuDeviceTotalMem)                \
  X(cuDeviceGetAttribute)            \
  X(cuDevicePrimaryCtxRetain)        \
  X(cuDevicePrimaryCtxRelease)       \
  X(cuCtxPushCurrent)                \
  X(cuCtxPopCurrent)                 \
  /* Streams and events */           \
  X(cuStreamCreate)                  \
  X(cuStreamDestroy)                 \
  X(cuStreamSynchronize)             \
  X(cuStreamWaitEvent)               \
  X(cuLaunchHostFunc)                \
  X(cuStreamWaitValue64)             \
  X(cuStreamWriteValue64)            \
  X(cuEventCreate)                   \
  X(cuEventDestroy)                  \
  X(cuEventRecord)                   \
  X(cuEventSynchronize)              \
  X(cuEventQuery)                    \
  X(cuEventElapsedTime)              \
  /* Memory */                       \
  X(cuMemAlloc)                      \
  X(cuMemFree)                       \
  X(cuMemHostAlloc)                  \
  X(cuMemFreeHost)                   \
  X(cuMemHostGetDevicePointer)       \
  X(cuMemsetD8Async)                 \
  X(cuMemsetD16Async)                \
  X(cuMemsetD32Async)                \
  X(cuMemcpyAsync)                   \
  X(cuMemcpyHtoDAsync)               \
  X(cuDeviceGetDefaultMemPool)       \
  X(cuMemPoolSetAttribute)           \
  X(cuMemAllocFromPoolAsync)         \
  X(cuMemFreeAsync)                  \
  /* Modules and kernels */          \
  X(cuModuleLoadData)                \
  X(cuModuleUnload)                  \
  X(cuModuleGetFunction)             \
  X(cuFuncSetAttribute)              \
  X(cuLaunchKernel)                  \
  /* Graphs */                       \
  X(cuGraphCreate)                   \
  X(cuGraphDestroy)                  \
  X(cuGraphAddKernelNode)            \
  X(cuGraphAddMemsetNode)            \
  X(cuGraphAddMemcpyNode)            \
  X(cuGraphAddEmptyNode)             \
  X(cuGraphInstantiate)              \
  X(cuGraphExecDestroy)              \
  X(cuGraphLaunch)                   \
  X(cuGraphExecKernelNodeSetParams)  \
  X(cuGraphExecMemsetNodeSetParams)  \
  X(cuGraphExecMemcpyNodeSetParams)

typedef struct weft_cuda_symbols_t {
  // The library handle from dlopen.
  void* library;
#define WEFT_CUDA_SYMBOL_MEMBER(name) __typeof__(name)* name;
  WEFT_CUDA_SYMBOLS(WEFT_CUDA_SYMBOL_MEMBER)
#undef WEFT_CUDA_SYMBOL_MEMBER
} weft_cuda_symbols_t;

// The environment variable naming a driver library to load instead of
// libcuda.so.1 (the test double in tests; never needed with a GPU).
#define WEFT_CUDA_DRIVER_LIBRARY_ENV "WEFT_CUDA_DRIVER_LIBRARY"

// Loads the driver library once per process and resolves every entry
// point, then calls cuInit(0). The table lives until the process ends.
// UNAVAILABLE with the reason when the library is missing, an entry point
// is absent (an older driver) or cuInit fails (no GPU, no driver loaded:
// the error's name and string).
weft_status_t weft_cuda_symbols_get(const weft_cuda_symbols_t** out_symbols);

// The status for |result| of |call| (e.g. "cuMemAlloc(1048576 bytes)"),
// translated once here: OK for CUDA_SUCCESS, otherwise a code chosen from
// the error (out of memory: RESOURCE_EXHAUSTED; no device or driver:
// UNAVAILABLE; an invalid value or handle: INVALID_ARGUMENT; a not-ready
// query: DEFERRED; anything else: INTERNAL) and a message naming the call,
// the error's name and its string: "cuMemAlloc(1048576 bytes) failed:
// CUDA_ERROR_OUT_OF_MEMORY (out of memory)". Out of line: the error path.
weft_status_t weft_cuda_result_to_status_slow(
    const weft_cuda_symbols_t* symbols, CUresult result, const char* call);

static inline weft_status_t weft_cuda_result_to_status(
    const weft_cuda_symbols_t* symbols, CUresult result, const char* call) {
  return result == CUDA_SUCCESS
             ? WEFT_OK
             : weft_cuda_result_to_status_slow(symbols, result, call);
}

// Calls |symbols|->fn(args...) and translates the result, naming the call
// by its source text: WEFT_CUDA_CALL(symbols, cuStreamSynchronize(stream)).
#define WEFT_CUDA_CALL(symbols, expr) \
  weft_cuda_result_to_status((symbols), (symbols)->expr, #expr)

#endif  // WEFT_DRIVERS_CUDA_CUDA_SYMBOLS_H_
