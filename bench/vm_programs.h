// weft benchmarks: the VM programs VmLoop and VmCall run, built as
// bytecode in memory, and a runner that calls them.
#ifndef WEFT_BENCH_VM_PROGRAMS_H_
#define WEFT_BENCH_VM_PROGRAMS_H_

#include <stdint.h>

#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum weft_bench_vm_program_e {
  // int_loop(n: i64) -> (i64): s = 0; for i in [0, n): s = s + i * 3.
  WEFT_BENCH_VM_INT_LOOP = 0,
  // float_loop(n: i64) -> (f64): x = 0; n times: x = x * 0.999 + 1.5.
  WEFT_BENCH_VM_FLOAT_LOOP,
  // call_loop(n: i64) -> (i64): n calls of add2(a, b) -> (a + b).
  WEFT_BENCH_VM_CALL_LOOP,
  // native_loop(n: i64) -> (i64): n calls of the native bench.add2.
  WEFT_BENCH_VM_NATIVE_LOOP,
  WEFT_BENCH_VM_PROGRAM_COUNT_,
} weft_bench_vm_program_t;

typedef struct weft_bench_vm_t weft_bench_vm_t;

// Builds the programs and a context linking them with the native module.
weft_status_t weft_bench_vm_create(weft_bench_vm_t** out_vm);
void weft_bench_vm_destroy(weft_bench_vm_t* vm);

// Runs |program| with argument |n|; |out_bits| receives the result's bits.
weft_status_t weft_bench_vm_run(weft_bench_vm_t* vm,
                                weft_bench_vm_program_t program, int64_t n,
                                uint64_t* out_bits);

// VmAwait: a partner thread (made once, with the partner) and rounds of
// |round_trips| round trips with it over two fresh semaphores (the partner
// waits for a >= i and signals b = i).
typedef struct weft_bench_await_partner_t weft_bench_await_partner_t;
weft_status_t weft_bench_await_partner_create(int64_t round_trips,
                                         weft_bench_await_partner_t** out);
void weft_bench_await_partner_destroy(weft_bench_await_partner_t* partner);

// One round. With |through_loop| the caller's side is a VM invocation on a
// loop (it signals a and awaits b, yielding until the partner's signal
// hands it back); without, it is the host doing the same with a blocking
// wait.
weft_status_t weft_bench_vm_await(weft_bench_vm_t* vm,
                                  weft_bench_await_partner_t* partner,
                                  int through_loop);

// Parks |count| invocations on a loop, each awaiting one semaphore through
// a bytecode function, and reports the heap bytes each holds while
// suspended (|heap_bytes| reads the allocator's total); then releases them
// all and checks they completed.
weft_status_t weft_bench_vm_suspend(weft_bench_vm_t* vm, int64_t count,
                                    int64_t (*heap_bytes)(void),
                                    int64_t* out_bytes_per_invocation);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_BENCH_VM_PROGRAMS_H_
