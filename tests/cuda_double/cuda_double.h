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
//   WEFT_CUDA_DOUBLE_QUEUE_DEPTH the initial weft_cuda_double_set_queue_depth
//                                (default 1024; 0: unbounded).
//   WEFT_CUDA_DOUBLE_STREAM_MEM_OPS  0 or 1, the initial
//                                weft_cuda_double_set_stream_mem_ops
//                                (default 1).
//   WEFT_CUDA_DOUBLE_TWINS       CPU twins for a process that cannot call
//                                weft_cuda_double_register_twins itself
//                                (weft-decode --device=cuda in a test):
//                                PATH:SYMBOL[;PATH:SYMBOL...], each a
//                                shared object dlopened (never closed)
//                                and its exported weft_kernel_library_
//                                query_fn_t SYMBOL called with
//                                WEFT_KERNEL_ABI_VERSION, the library it
//                                returns registered as twins. Read once,
//                                at the first lookup of a kernel
//                                (cuModuleLoadData or
//                                cuModuleGetFunction), not at cuInit; a
//                                library that does not load or gives no
//                                table aborts the process.
//
// Stream memory operations (cuStreamWaitValue64, cuStreamWriteValue64) as
// the CUDA documentation gives them: the word is a device pointer (device
// or pool memory, or mapped host memory through cuMemHostGetDevicePointer)
// aligned to 8 bytes, else CUDA_ERROR_INVALID_VALUE; GEQ is the cyclic
// (int64_t)(*addr - value) >= 0; CU_STREAM_WAIT_VALUE_FLUSH is
// CUDA_ERROR_NOT_SUPPORTED (CAN_FLUSH_REMOTE_WRITES is 0). A wait notices
// host stores within about 100 us and other streams' writes at once.
//
// Teardown with a wait unmet. The real driver's cuStreamDestroy returns at
// once and frees the stream when its work completes, so an unmet wait
// leaves it, and every op behind it, pending for good (events recorded
// behind it never complete); a driver must release its waiters by writing
// their words before it destroys their streams. The double's
// cuStreamDestroy waits for the stream's work, as before; a wait still
// unmet then is given 1 s more (a write queued elsewhere may still land),
// then abandoned: it completes unmet, the tasks behind it run, and
// cuStreamDestroy returns CUDA_ERROR_ILLEGAL_STATE with the stream
// destroyed all the same. cuStreamSynchronize and cuEventSynchronize wait
// behind an unmet wait for as long as it stays unmet, as on a GPU;
// cuDevicePrimaryCtxRelease does not touch streams (see
// cuda_double_impl.h), so it returns and the wait goes on polling.
//
// Besides the driver API the library exports the weft_cuda_double_*
// controls below; a test resolves them with dlsym as it does the API.
#ifndef WEFT_TESTS_CUDA_DOUBLE_CUDA_DOUBLE_H_
#define WEFT_TESTS_CUDA_DOUBLE_CUDA_DOUBLE_H_

#include <cuda.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/kernel_abi.h"

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

// The most tasks a stream created after this call holds queued and not
// completed; a call that would queue one more (a copy, fill, launch, host
// function, event record or wait, value wait or write...) blocks its
// thread until the stream completes one, as the real driver blocks once a
// GPU's command queue is full behind an unmet wait. 0: unbounded. Streams
// that exist keep theirs. Thread-safe.
void weft_cuda_double_set_queue_depth(uint32_t depth);

// The number of calls that found their stream's queue full and blocked
// (see weft_cuda_double_set_queue_depth), counted as each starts to wait:
// a test learns that a thread is blocked in one without a timer.
// Thread-safe.
uint64_t weft_cuda_double_full_queue_waits(void);

// Whether the devices report CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS
// and CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR as 1 (the default);
// while false both read 0 and cuStreamWaitValue64 and cuStreamWriteValue64
// fail with CUDA_ERROR_NOT_SUPPORTED, so a driver's event fallback can be
// tested. Ops already queued are unaffected. Thread-safe.
void weft_cuda_double_set_stream_mem_ops(bool supported);

// The number of kernel launches made: successful cuLaunchKernel calls plus
// the kernel nodes of successful cuGraphLaunch calls, counted at the call
// (not when the stream runs them). Thread-safe.
uint64_t weft_cuda_double_launch_count(void);

// The number of calls of |entry_point| (the API name, "cuStreamWaitValue64")
// made so far, successful or not. Thread-safe.
uint64_t weft_cuda_double_call_count(const char* entry_point);

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
// pointer (8 bytes), '8' a uint64_t, '4' a uint32_t. A registered twin
// (weft_cuda_double_register_twins) has |twin| instead of |fn|.
typedef struct weft_cuda_double_kernel_t {
  const char* name;
  const char* signature;
  weft_cuda_double_kernel_fn_t fn;
  const weft_kernel_def_t* twin;
} weft_cuda_double_kernel_t;

// Registers the kernels of |library| (weft/kernel_abi.h) as CPU twins:
// a PTX entry of the same name then runs as that CPU kernel. The entry
// takes weft's CUDA parameters (weft/executable.h): each binding's
// pointer, each binding's length (uint64_t), each constant (uint32_t),
// then the four status words; a module whose entry takes other sizes is
// INVALID_PTX. Each block is one workgroup (its workgroup_id the block
// index, the kernel's workgroup_size as given, the launch's dynamic
// shared memory as its local memory); a non-zero return is stored in
// the status words as a failing CUDA block stores its code. A name the
// double's own registry has, or one registered before, keeps its first
// implementation. |library| must outlive the process's use of the
// double. Thread-safe.
void weft_cuda_double_register_twins(const weft_kernel_library_t* library);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_TESTS_CUDA_DOUBLE_CUDA_DOUBLE_H_
