// weft's CUDA test double: what its files share. A TEST DOUBLE, never
// shipped or installed (see cuda_double.h).
//
// The model:
//  - Devices and contexts: N devices (WEFT_CUDA_DOUBLE_DEVICES), one
//    refcounted primary context each; the current context is a
//    thread-local stack (cuCtxPushCurrent/cuCtxPopCurrent). Every entry
//    point that works on memory, streams, events, modules or graphs needs a
//    current, retained context, else CUDA_ERROR_INVALID_CONTEXT (none) or
//    CUDA_ERROR_CONTEXT_IS_DESTROYED (its primary context was released): a
//    driver thread that forgot to push fails loudly. The exceptions are
//    cuEventQuery (the API documents no INVALID_CONTEXT for it; threads that
//    only poll need not push), cuDeviceGetDefaultMemPool and
//    cuMemPoolSetAttribute (device-level, like the other cuDevice* calls).
//    Work goes only to streams, and launches only use functions, of the
//    current context (else CUDA_ERROR_INVALID_CONTEXT); synchronizing or
//    destroying a stream, and waiting on an event, work across contexts.
//  - Streams: one worker thread each, running a FIFO of tasks strictly in
//    order, at most a queue depth of them pending (an enqueue into a full
//    stream blocks). The NULL stream, CU_STREAM_LEGACY and
//    CU_STREAM_PER_THREAD are not streams here: CUDA_ERROR_INVALID_HANDLE.
//  - Stream memory operations: a value wait is a task that polls its word
//    (and wakes on any stream's value write) until its condition holds.
//  - Events: a generation counter. cuEventRecord starts generation g+1 and
//    queues a task that completes it; the event's state is that of its
//    latest generation, and waits wait for the generation current when they
//    were made, exactly, even when records on several streams complete out
//    of order.
//  - Memory: device pointers are host addresses. A registry holds every
//    live allocation, so device ranges are checked when work is queued
//    (CUDA_ERROR_INVALID_VALUE, where the GPU would fault later) and tests
//    can count leaks.
//  - Kernels: a PTX module names its .entry functions; a function exists
//    only if the double also has a host implementation of that name
//    (cuda_double_kernels.c). A launch copies its parameters by the
//    kernel's signature and runs the host function once per block.
//  - Graphs: kernel, memset, memcpy (1D) and empty nodes; a launch runs an
//    exec's nodes, as they were at the launch call, in a topological order
//    that runs independent nodes latest-added first (so a driver that
//    forgot a dependency sees its nodes run in the wrong order).
//
// Locks: one mutex for the global state (devices, contexts, armed
// failures, knobs), one for the allocation registry, one that value writes
// broadcast under, one per stream, event, graph and exec. No code path
// holds two of them at once.
#ifndef WEFT_TESTS_CUDA_DOUBLE_CUDA_DOUBLE_IMPL_H_
#define WEFT_TESTS_CUDA_DOUBLE_CUDA_DOUBLE_IMPL_H_

#include <cuda.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda_double.h"

// Entry points and controls are the library's only exports; it is built
// with -fvisibility=hidden.
#define WEFT_CUDA_DOUBLE_EXPORT __attribute__((visibility("default")))

#define WEFT_CUDA_DOUBLE_MAX_DEVICES 16
// The most parameters a kernel signature may have.
#define WEFT_CUDA_DOUBLE_MAX_PARAMS 32

// Tags at the start of every handle, so a handle of the wrong kind (or
// none) is CUDA_ERROR_INVALID_HANDLE rather than a crash.
typedef enum weft_cuda_double_magic_e {
  WEFT_CUDA_DOUBLE_MAGIC_CONTEXT = 0x43545831u,
  WEFT_CUDA_DOUBLE_MAGIC_STREAM = 0x53544d31u,
  WEFT_CUDA_DOUBLE_MAGIC_EVENT = 0x45564e31u,
  WEFT_CUDA_DOUBLE_MAGIC_POOL = 0x504f4c31u,
  WEFT_CUDA_DOUBLE_MAGIC_MODULE = 0x4d4f4431u,
  WEFT_CUDA_DOUBLE_MAGIC_FUNCTION = 0x464e4331u,
  WEFT_CUDA_DOUBLE_MAGIC_GRAPH = 0x47525031u,
  WEFT_CUDA_DOUBLE_MAGIC_NODE = 0x4e4f4431u,
  WEFT_CUDA_DOUBLE_MAGIC_EXEC = 0x45584531u,
} weft_cuda_double_magic_t;

//===----------------------------------------------------------------------===//
// Entry, devices and contexts (cuda_double_device.c)
//===----------------------------------------------------------------------===//

struct CUctx_st {
  uint32_t magic;
  CUdevice device;
  // Primary context retains; guarded by the global state's mutex.
  uint32_t retain_count;
};

#define WEFT_CUDA_DOUBLE_STRINGIFY_(x) #x
#define WEFT_CUDA_DOUBLE_STRINGIFY(x) WEFT_CUDA_DOUBLE_STRINGIFY_(x)

// What every entry point does first: a failure armed by
// weft_cuda_double_fail_next for |name| (the API name) or |symbol| (the
// exported name), then CUDA_ERROR_NOT_INITIALIZED before a successful
// cuInit, then, when |out_context| is not NULL, the current context (see
// the model above).
CUresult weft_cuda_double__enter(const char* name, const char* symbol,
                                 CUcontext* out_context);

// weft_cuda_double__enter for entry point |fn|, named both ways: `#fn` is
// the name as written, the second the name cuda.h's macros make of it.
#define WEFT_CUDA_DOUBLE_ENTER(fn, out_context) \
  weft_cuda_double__enter(#fn, WEFT_CUDA_DOUBLE_STRINGIFY(fn), (out_context))

// CUDA_SUCCESS when |device| is an ordinal of this process's devices.
CUresult weft_cuda_double__check_device(CUdevice device);

// The memory of each device in bytes, fixed by cuInit.
size_t weft_cuda_double__device_memory(void);

// The delay before each stream task, fixed by cuInit.
uint64_t weft_cuda_double__latency_us(void);

// The queue depth of streams created now (0: unbounded).
uint32_t weft_cuda_double__queue_depth(void);

// Whether the devices report 64-bit stream memory operations (and
// CU_STREAM_WAIT_VALUE_NOR); cuStreamWaitValue64 and cuStreamWriteValue64
// fail with CUDA_ERROR_NOT_SUPPORTED while they do not.
bool weft_cuda_double__stream_mem_ops_supported(void);

// Adds |count| to weft_cuda_double_launch_count.
void weft_cuda_double__count_launches(uint64_t count);

// Now on CLOCK_MONOTONIC in nanoseconds.
uint64_t weft_cuda_double__now_ns(void);

//===----------------------------------------------------------------------===//
// Streams (cuda_double_stream.c)
//===----------------------------------------------------------------------===//

typedef struct weft_cuda_double_task_t weft_cuda_double_task_t;

// Runs |task| on its stream's worker and releases what the task holds,
// but not the task itself: the worker frees that afterwards.
typedef void (*weft_cuda_double_task_fn_t)(weft_cuda_double_task_t* task);

// The head of every stream task; a task is one malloc'ed block that
// starts with this.
struct weft_cuda_double_task_t {
  weft_cuda_double_task_t* next;
  weft_cuda_double_task_fn_t run;
};

// CUDA_SUCCESS when |stream| is a live stream of |context| (of any context
// when |context| is NULL); CUDA_ERROR_INVALID_HANDLE when it is not a
// stream (the NULL and legacy streams included), CUDA_ERROR_INVALID_CONTEXT
// when it is another context's.
CUresult weft_cuda_double__check_stream(CUstream stream, CUcontext context);

// Allocates a task of |size| bytes (at least the head) that will run
// |run|; NULL when out of memory.
weft_cuda_double_task_t* weft_cuda_double__task_allocate(
    size_t size, weft_cuda_double_task_fn_t run);

// Appends |task| to |stream|'s FIFO; the stream owns it from here. Blocks
// while the stream holds its queue depth of tasks not yet completed, so it
// must not be called from the stream's own worker (CUDA forbids API calls
// in host functions for the same reason) or with a lock a task may need.
void weft_cuda_double__stream_enqueue(CUstream stream,
                                      weft_cuda_double_task_t* task);

// Whether cuStreamDestroy has begun on |stream|; a task of |stream| may
// ask (the stream lives until its worker has left).
bool weft_cuda_double__stream_is_shutting_down(CUstream stream);

// Makes |stream|'s cuStreamDestroy return CUDA_ERROR_ILLEGAL_STATE: one of
// its value waits was abandoned unmet.
void weft_cuda_double__stream_note_abandoned_wait(CUstream stream);

//===----------------------------------------------------------------------===//
// Memory (cuda_double_memory.c)
//===----------------------------------------------------------------------===//

// CUDA_SUCCESS when [|address|, |address| + |size|) lies inside one live
// device, pool or host allocation (what a device may touch);
// CUDA_ERROR_INVALID_VALUE otherwise.
CUresult weft_cuda_double__check_device_range(CUdeviceptr address, size_t size);

// For copies through unified addressing, where any host memory is fair: a
// range that starts inside a live allocation must end inside it
// (CUDA_ERROR_INVALID_VALUE); one outside every allocation is host memory.
CUresult weft_cuda_double__check_unified_range(CUdeviceptr address,
                                               size_t size);

// Fills |count| elements of |element_size| bytes (1, 2 or 4) at |dst| with
// the low bytes of |value|.
void weft_cuda_double__fill(void* dst, uint32_t value, uint32_t element_size,
                            size_t count);

//===----------------------------------------------------------------------===//
// Modules and kernels (cuda_double_module.c, cuda_double_kernels.c)
//===----------------------------------------------------------------------===//

// A host implementation from the double's registry, or a registered
// twin, or NULL.
const weft_cuda_double_kernel_t* weft_cuda_double__find_kernel(
    const char* name);

// Runs one block of the twin |kernel| with the launch's parameter values
// |params| (one 8-byte slot each, in signature order).
void weft_cuda_double__twin_run(const weft_cuda_double_kernel_t* kernel,
                                const weft_cuda_double_block_t* block,
                                const uint64_t* params);

// One launch as captured at its call: what runs on the stream later,
// independent of the caller's memory and of the function's module.
typedef struct weft_cuda_double_launch_t {
  const weft_cuda_double_kernel_t* kernel;
  weft_cuda_double_dim3_t grid_dim;
  weft_cuda_double_dim3_t block_dim;
  uint32_t shared_memory_size;
  uint32_t param_count;
  // Each parameter's value in an 8-byte slot, by the kernel's signature.
  uint64_t params[WEFT_CUDA_DOUBLE_MAX_PARAMS];
} weft_cuda_double_launch_t;

// Checks a launch of |function| the way cuLaunchKernel does (a function of
// |context|, the current one; shape, shared memory, parameters; |extra| is
// not supported) and copies it, parameter values included, into
// |out_launch|.
CUresult weft_cuda_double__launch_capture(
    CUcontext context, CUfunction function, unsigned int grid_x,
    unsigned int grid_y, unsigned int grid_z, unsigned int block_x,
    unsigned int block_y, unsigned int block_z, unsigned int shared_memory_size,
    void** kernel_params, void** extra, weft_cuda_double_launch_t* out_launch);

// Runs every block of |launch| on this thread.
void weft_cuda_double__launch_run(const weft_cuda_double_launch_t* launch);

#endif  // WEFT_TESTS_CUDA_DOUBLE_CUDA_DOUBLE_IMPL_H_
