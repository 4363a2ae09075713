// weft benchmarks: VM programs that drive a device through the hal module.
//
// VmPipelines: |count| pipelines of three dependent queue operations each
// (fill a -> copy a to b -> fill the head of b, ordered by one semaphore
// per pipeline at 1, 2, 3) on small buffers of their own, either as one VM
// invocation per pipeline, all on one thread through a loop, or as one host
// thread per pipeline submitting with the C API and blocking on its last
// value.
//
// VmMlp: the MLP example's forward pass (examples/mlp/mlp.wvm) the way
// weft-run runs it (the module loaded from its file, linked with the hal
// module, invoked with weft_vm_invoke_sync on buffer-view inputs), against
// the same two dense dispatches submitted from C.
#ifndef WEFT_BENCH_VM_HAL_PROGRAMS_H_
#define WEFT_BENCH_VM_HAL_PROGRAMS_H_

#include <stdint.h>

#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

//===----------------------------------------------------------------------===//
// VmPipelines
//===----------------------------------------------------------------------===//

typedef struct weft_bench_pipelines_t weft_bench_pipelines_t;

// Opens |device_string|, links the pipeline program with the hal module
// and allocates |count| pairs of buffers. With |with_threads| it also
// starts |count| host threads, parked until weft_bench_pipelines_run_threads.
// |out_pipelines| is set even on failure (destroy it).
weft_status_t weft_bench_pipelines_create(const char* device_string,
                                          uint32_t count, int with_threads,
                                          weft_bench_pipelines_t** out_pipelines);

// Stops the threads and frees everything. NULL is a no-op.
void weft_bench_pipelines_destroy(weft_bench_pipelines_t* pipelines);

// Submits one invocation per pipeline to the loop and runs it until every
// one ended. Fails with the first failed invocation's status.
weft_status_t weft_bench_pipelines_run_loop(weft_bench_pipelines_t* pipelines);

// Lets every thread run its pipeline once (submit, block on the last value)
// and waits for all. Fails with the first failed thread's status.
weft_status_t weft_bench_pipelines_run_threads(
    weft_bench_pipelines_t* pipelines);

// Clears every target buffer, runs every pipeline once more (through the
// loop or the threads) and checks every byte of every target.
weft_status_t weft_bench_pipelines_verify(weft_bench_pipelines_t* pipelines,
                                          int through_loop);

// Heap bytes per pipeline held while every pipeline waits on a gate the
// host has not signalled yet (|heap_bytes| reads the allocator's total),
// with the pools already warm: |out_invocation_bytes| for the VM (each
// invocation parked on its await, with its semaphore, fences and queued
// operations) and |out_c_bytes| for the same operations submitted from C
// (a semaphore and three queued operations). Then opens the gate and
// checks everything completed.
weft_status_t weft_bench_pipelines_measure_parked(
    weft_bench_pipelines_t* pipelines, int64_t (*heap_bytes)(void),
    int64_t* out_invocation_bytes, int64_t* out_c_bytes);

//===----------------------------------------------------------------------===//
// VmMlp
//===----------------------------------------------------------------------===//

typedef struct weft_bench_mlp_t weft_bench_mlp_t;

// Loads |program_path| (the MLP example) on |device_string| with the MLP
// kernel library registered statically as "kernels", and makes the inputs
// x[k1], w1[k1 x n1], b1[n1], w2[n1 x n2], b2[n2] (deterministic values) as
// device buffers and buffer views. |out_mlp| is set even on failure.
weft_status_t weft_bench_mlp_create(const char* device_string,
                                    const char* program_path, uint32_t k1,
                                    uint32_t n1, uint32_t n2,
                                    weft_bench_mlp_t** out_mlp);

void weft_bench_mlp_destroy(weft_bench_mlp_t* mlp);

// One forward pass through the VM: weft_vm_invoke_sync of mlp.forward.
weft_status_t weft_bench_mlp_forward_vm(weft_bench_mlp_t* mlp);

// One forward pass from C: allocate the hidden and output buffers, two
// dense dispatches ordered by a semaphore, wait for the second.
weft_status_t weft_bench_mlp_forward_c(weft_bench_mlp_t* mlp);

// Runs one pass each way and checks the two outputs are the same bits and
// agree with a host computation in double precision (1e-4 relative).
weft_status_t weft_bench_mlp_check(weft_bench_mlp_t* mlp);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_BENCH_VM_HAL_PROGRAMS_H_
