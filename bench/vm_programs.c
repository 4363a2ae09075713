// weft benchmarks: VM programs (see vm_programs.h).
#include "vm_programs.h"

#include <stdlib.h>
#include <string.h>

#include "base/thread.h"
// The interpreter and a context's instances directly (internals): the
// benchmarks time the dispatch loop without an invocation around it.
#include "vm/context_impl.h"
#include "vm/interpreter.h"
#include "vm/module_impl.h"
#include "weft/vm/loop.h"

#define I(op_, a_, b_, c_) \
  {.op = WEFT_VM_OP_##op_, .reserved = 0, .a = (a_), .b = (b_), .c = (c_)}
#define IMM(op_, a_, imm_) \
  {.op = WEFT_VM_OP_##op_, .reserved = 0, .a = (a_), .imm = (imm_)}

static const weft_vm_instruction_t kCode[] = {
    // int_loop: 0..7
    IMM(CONST_I64, 1, 0),  // s1 = 0 (sum)
    IMM(CONST_I64, 2, 0),  // s2 = 0 (i)
    IMM(CONST_I64, 3, 1),  // s3 = 3
    IMM(CONST_I64, 4, 2),  // s4 = 1
    I(MUL_I64, 5, 2, 3),   // 4: s5 = i * 3
    I(ADD_I64, 1, 1, 5),   // s = s + s5
    I(ADD_I64, 2, 2, 4),   // i += 1
    I(LT_I64_S, 6, 2, 0),  // s6 = i < n
    IMM(BR_IF, 6, 4),      // 8
    IMM(RET, 0, 0),        // ret (s1)
    // float_loop: 10..
    IMM(CONST_F64, 1, 3),  // s1 = 0.0 (x)
    IMM(CONST_I64, 2, 0),  // s2 = 0 (i)
    IMM(CONST_F64, 3, 4),  // s3 = 0.999
    IMM(CONST_F64, 4, 5),  // s4 = 1.5
    IMM(CONST_I64, 5, 2),  // s5 = 1
    I(MUL_F64, 1, 1, 3),   // 5: x *= 0.999
    I(ADD_F64, 1, 1, 4),   // x += 1.5
    I(ADD_I64, 2, 2, 5),   // i += 1
    I(LT_I64_S, 6, 2, 0),  // s6 = i < n
    IMM(BR_IF, 6, 5),
    IMM(RET, 0, 0),  // ret (s1)
    // call_loop: 21..
    IMM(CONST_I64, 1, 0),  // s1 = 0 (acc)
    IMM(CONST_I64, 2, 0),  // s2 = 0 (i)
    IMM(CONST_I64, 4, 2),  // s4 = 1
    IMM(CALL, 3, 1),       // 3: s1 = add2(s1, s4)
    I(ADD_I64, 2, 2, 4),   // i += 1
    I(LT_I64_S, 6, 2, 0),  // s6 = i < n
    IMM(BR_IF, 6, 3),
    IMM(RET, 0, 0),  // ret (s1)
    // native_loop: 29..
    IMM(CONST_I64, 1, 0),
    IMM(CONST_I64, 2, 0),
    IMM(CONST_I64, 4, 2),
    IMM(CALL_IMPORT, 0, 1),  // 3: s1 = bench.add2(s1, s4)
    I(ADD_I64, 2, 2, 4),
    I(LT_I64_S, 6, 2, 0),
    IMM(BR_IF, 6, 3),
    IMM(RET, 0, 0),
    // add2: 37..
    I(ADD_I64, 2, 0, 1),
    IMM(RET, 0, 4),  // ret (s2)
    // pingpong(a: r, b: r, n: i64) -> (i64): 39..
    IMM(CONST_I64, 1, 2),    // s1 = 1 (i)
    IMM(CONST_I64, 2, 2),    // s2 = 1
    IMM(CALL_IMPORT, 1, 5),  // 2: bench.signal(r0, s1)
    IMM(CALL_IMPORT, 2, 7),  // bench.await(r1, s1)
    I(ADD_I64, 1, 1, 2),     // i += 1
    I(LE_I64_S, 3, 1, 0),    // s3 = i <= n
    IMM(BR_IF, 3, 2),
    IMM(RET, 0, 0),  // ret (s1)
    // wait_once(s: r, v: i64) -> (): 47..
    IMM(CALL_IMPORT, 2, 9),  // bench.await(r0, s0)
    IMM(RET, 0, 0),          // ret ()
};

// [0] ret s1; [1..3] call args s1, s4 and result s1; [4] ret s2;
// [5..6] signal(r0, s1); [7..8] await(r1, s1).
// [9..10] await(r0, s0).
static const uint16_t kOperands[] = {1, 1, 4, 1, 2, 0, 1, 1, 1, 0, 0};
static uint64_t g_constants[6];

static const uint8_t kLoopTypes[] = {WEFT_VM_TYPE_I64, WEFT_VM_TYPE_I64};
static const uint8_t kFloatTypes[] = {WEFT_VM_TYPE_I64, WEFT_VM_TYPE_F64};
static const uint8_t kAdd2Types[] = {WEFT_VM_TYPE_I64, WEFT_VM_TYPE_I64,
                                     WEFT_VM_TYPE_I64};

static const uint8_t kPingPongTypes[] = {WEFT_VM_TYPE_REF, WEFT_VM_TYPE_REF,
                                         WEFT_VM_TYPE_I64, WEFT_VM_TYPE_I64};
static const uint8_t kSemaphoreValueTypes[] = {WEFT_VM_TYPE_REF,
                                               WEFT_VM_TYPE_I64};

// All exported: the benchmarks call each from the host.
#define EXPORTED WEFT_VM_FUNCTION_FLAG_EXPORT
static const weft_vm_function_t kFunctions[] = {
    {"int_loop", {1, 1, kLoopTypes, NULL}, 7, 0, 0, 10, EXPORTED},
    {"float_loop", {1, 1, kFloatTypes, NULL}, 7, 0, 10, 11, EXPORTED},
    {"call_loop", {1, 1, kLoopTypes, NULL}, 7, 0, 21, 8, EXPORTED},
    {"add2", {2, 1, kAdd2Types, NULL}, 3, 0, 37, 2, EXPORTED},
    {"native_loop", {1, 1, kLoopTypes, NULL}, 7, 0, 29, 8, EXPORTED},
    {"pingpong", {3, 1, kPingPongTypes, NULL}, 4, 2, 39, 8, EXPORTED},
    {"wait_once", {2, 0, kSemaphoreValueTypes, NULL}, 1, 1, 47, 2, EXPORTED},
};
#undef EXPORTED

static const weft_vm_import_t kImports[] = {
    {"bench", "add2", {2, 1, kAdd2Types, NULL}},
    {"bench", "signal", {2, 0, kSemaphoreValueTypes, "(r<semaphore>,i64)->()"}},
    {"bench", "await", {2, 0, kSemaphoreValueTypes, "(r<semaphore>,i64)->()"}},
};

static weft_status_t bench_add2(weft_vm_native_call_t* call) {
  call->results[0].i64 = call->args[0].i64 + call->args[1].i64;
  return WEFT_OK;
}

static void bench_semaphore_retain(void* object) {
  weft_semaphore_retain((weft_semaphore_t*)object);
}
static void bench_semaphore_release(void* object) {
  weft_semaphore_release((weft_semaphore_t*)object);
}
static const weft_vm_ref_type_t kBenchSemaphoreType = {
    "semaphore", bench_semaphore_retain, bench_semaphore_release};

static weft_status_t bench_signal(weft_vm_native_call_t* call) {
  return weft_semaphore_signal((weft_semaphore_t*)call->args[0].ref.object,
                               (uint64_t)call->args[1].i64);
}

// Yields until the semaphore reaches the value (the loop's path).
static weft_status_t bench_await(weft_vm_native_call_t* call) {
  if (call->pc == 1) {
    weft_status_t result = call->wait_result;
    call->wait_result = WEFT_OK;
    return result;
  }
  weft_semaphore_t* semaphore = (weft_semaphore_t*)call->args[0].ref.object;
  const uint64_t value = (uint64_t)call->args[1].i64;
  uint64_t current = 0;
  weft_status_t status = weft_semaphore_query(semaphore, &current);
  if (!weft_status_is_ok(status) || current >= value) return status;
  weft_vm_wait_frame_begin(call, WEFT_WAIT_MODE_ALL,
                           WEFT_TIME_INFINITE_FUTURE);
  status = weft_vm_wait_frame_add(call, semaphore, value);
  if (!weft_status_is_ok(status)) return status;
  call->pc = 1;
  return weft_status_from_code(WEFT_STATUS_DEFERRED);
}

static const weft_vm_native_function_t kNativeFunctions[] = {
    {"add2", "(i64, i64) -> (i64)", bench_add2},
    {"signal", "(r<semaphore>, i64) -> ()", bench_signal},
    {"await", "(r<semaphore>, i64) -> ()", bench_await},
};
static const weft_vm_native_module_def_t kNativeModule = {
    .name = "bench",
    .function_count = 3,
    .functions = kNativeFunctions,
};

struct weft_bench_vm_t {
  weft_vm_context_t* context;
  const weft_vm_instance_t* instance;
  weft_vm_stack_t stack;
};

static const uint32_t kProgramFunctions[WEFT_BENCH_VM_PROGRAM_COUNT_] = {
    0, 1, 2, 4};

weft_status_t weft_bench_vm_create(weft_bench_vm_t** out_vm) {
  *out_vm = NULL;
  const double f64s[3] = {0.0, 0.999, 1.5};
  g_constants[0] = 0;
  g_constants[1] = 3;
  g_constants[2] = 1;
  memcpy(&g_constants[3], f64s, sizeof(f64s));
  weft_allocator_t allocator = weft_allocator_system();
  // The module owns its bytecode as one allocation: copy the header; the
  // tables stay static.
  weft_vm_bytecode_t* bytecode = NULL;
  weft_status_t status =
      weft_allocator_malloc(allocator, sizeof(*bytecode), (void**)&bytecode);
  if (!weft_status_is_ok(status)) return status;
  *bytecode = (weft_vm_bytecode_t){
      .name = "programs",
      .function_count = sizeof(kFunctions) / sizeof(kFunctions[0]),
      .functions = kFunctions,
      .import_count = 3,
      .imports = kImports,
      .code_count = sizeof(kCode) / sizeof(kCode[0]),
      .code = kCode,
      .operand_count = sizeof(kOperands) / sizeof(kOperands[0]),
      .operands = kOperands,
      .constant_count = 6,
      .constants = g_constants,
  };
  weft_vm_module_t* modules[2] = {NULL, NULL};
  status = weft_vm_module_create_bytecode(allocator, bytecode, &modules[0]);
  if (weft_status_is_ok(status)) {
    status = weft_vm_module_create_native(allocator, &kNativeModule,
                                          &modules[1]);
  }
  weft_bench_vm_t* vm = NULL;
  if (weft_status_is_ok(status)) {
    vm = calloc(1, sizeof(*vm));
    if (!vm) status = WEFT_STATUS(RESOURCE_EXHAUSTED, "bench vm");
  }
  if (weft_status_is_ok(status)) {
    status = weft_vm_context_create(modules, 2, allocator, &vm->context);
  }
  weft_vm_module_release(modules[0]);
  weft_vm_module_release(modules[1]);
  if (weft_status_is_ok(status)) {
    vm->instance = &vm->context->instances[0];
    weft_vm_stack_initialize(allocator, 0, &vm->stack);
    *out_vm = vm;
  } else {
    free(vm);
  }
  return status;
}

void weft_bench_vm_destroy(weft_bench_vm_t* vm) {
  if (!vm) return;
  weft_vm_stack_deinitialize(&vm->stack);
  weft_vm_context_release(vm->context);
  free(vm);
}

weft_status_t weft_bench_vm_run(weft_bench_vm_t* vm,
                                weft_bench_vm_program_t program, int64_t n,
                                uint64_t* out_bits) {
  weft_vm_value_t arg = {.type = WEFT_VM_TYPE_I64, .i64 = n};
  weft_vm_value_t result = {0};
  weft_status_t status = weft_vm_interpreter_begin(
      &vm->stack, vm->instance, NULL, kProgramFunctions[program], &arg, 1);
  weft_vm_run_state_t state = WEFT_VM_RUN_YIELDED;
  while (weft_status_is_ok(status) && state == WEFT_VM_RUN_YIELDED) {
    status = weft_vm_interpreter_run(&vm->stack, UINT64_MAX, &result, 1,
                                     &state);
  }
  *out_bits = result.bits;
  return status;
}

//===----------------------------------------------------------------------===//
// VmAwait
//===----------------------------------------------------------------------===//

// The partner thread lives as long as the bench: a thread made for each
// round starts, as often as not, on the caller's CPU, and the two then
// spin and yield on one CPU (about 3 us a round trip on 2 vCPUs) until the
// kernel moves one, which a round of a few hundred microseconds rarely
// outlasts.
struct weft_bench_await_partner_t {
  // Round r may start once |go| reaches r; |a| and |b| are that round's
  // pair, set before the signal (each retained for the partner).
  weft_semaphore_t* go;
  weft_semaphore_t* a;
  weft_semaphore_t* b;
  int64_t round_trips;
  uint64_t round;
  weft_thread_t* thread;
};

// Each round: waits for a >= i, then signals b = i, for every i.
static int weft_bench_partner_main(void* user_data) {
  weft_bench_await_partner_t* partner = (weft_bench_await_partner_t*)user_data;
  const weft_timeout_t forever = {WEFT_TIMEOUT_ABSOLUTE,
                                  WEFT_TIME_INFINITE_FUTURE};
  for (uint64_t round = 1;; ++round) {
    // The destroy fails |go|: the failure (a status to free) ends the
    // thread.
    weft_status_t status = weft_semaphore_wait(partner->go, round, forever);
    if (!weft_status_is_ok(status)) {
      weft_status_ignore(status);
      break;
    }
    weft_semaphore_t* a = partner->a;
    weft_semaphore_t* b = partner->b;
    for (int64_t i = 1; i <= partner->round_trips; ++i) {
      status = weft_semaphore_wait(a, (uint64_t)i, forever);
      if (!weft_status_is_ok(status)) {
        weft_status_ignore(status);
        break;
      }
      weft_status_ignore(weft_semaphore_signal(b, (uint64_t)i));
    }
    weft_semaphore_release(a);
    weft_semaphore_release(b);
  }
  return 0;
}

weft_status_t weft_bench_await_partner_create(int64_t round_trips,
                                         weft_bench_await_partner_t** out) {
  *out = NULL;
  weft_allocator_t allocator = weft_allocator_system();
  weft_bench_await_partner_t* partner = NULL;
  weft_status_t status =
      weft_allocator_malloc(allocator, sizeof(*partner), (void**)&partner);
  if (!weft_status_is_ok(status)) return status;
  partner->round_trips = round_trips;
  status = weft_semaphore_create(allocator, 0, &partner->go);
  if (weft_status_is_ok(status)) {
    status = weft_thread_create(weft_bench_partner_main, partner, NULL,
                                allocator, &partner->thread);
  }
  if (weft_status_is_ok(status)) {
    *out = partner;
  } else {
    weft_bench_await_partner_destroy(partner);
  }
  return status;
}

void weft_bench_await_partner_destroy(weft_bench_await_partner_t* partner) {
  if (!partner) return;
  if (partner->thread) {
    weft_semaphore_fail(partner->go,
                        WEFT_STATUS(CANCELLED, "await partner destroyed"));
    weft_thread_join(partner->thread);
  }
  weft_semaphore_release(partner->go);
  weft_allocator_free(weft_allocator_system(), partner);
}

typedef struct weft_bench_await_result_t {
  weft_status_t status;
  int done;
} weft_bench_await_result_t;

static void weft_bench_await_done(void* user_data,
                                  weft_vm_loop_invocation_t* invocation,
                                  weft_status_t status,
                                  weft_vm_value_t* results,
                                  uint32_t result_count) {
  weft_bench_await_result_t* result = (weft_bench_await_result_t*)user_data;
  result->status = status;
  result->done = 1;
}

weft_status_t weft_bench_vm_await(weft_bench_vm_t* vm,
                                  weft_bench_await_partner_t* partner,
                                  int through_loop) {
  weft_allocator_t allocator = weft_allocator_system();
  const int64_t round_trips = partner->round_trips;
  weft_semaphore_t* a = NULL;
  weft_semaphore_t* b = NULL;
  weft_status_t status = weft_semaphore_create(allocator, 0, &a);
  if (weft_status_is_ok(status)) {
    status = weft_semaphore_create(allocator, 0, &b);
  }
  if (weft_status_is_ok(status)) {
    // The partner's references, released at the end of its round.
    weft_semaphore_retain(a);
    weft_semaphore_retain(b);
    partner->a = a;
    partner->b = b;
    status = weft_semaphore_signal(partner->go, ++partner->round);
    if (!weft_status_is_ok(status)) {
      weft_semaphore_release(a);
      weft_semaphore_release(b);
    }
  }
  if (weft_status_is_ok(status) && through_loop) {
    weft_vm_loop_t* loop = NULL;
    weft_vm_loop_options_t options = {0};
    status = weft_vm_loop_create(options, allocator, &loop);
    weft_bench_await_result_t result = {WEFT_OK, 0};
    if (weft_status_is_ok(status)) {
      weft_vm_value_t args[3] = {
          {.type = WEFT_VM_TYPE_REF, .ref = {a, &kBenchSemaphoreType}},
          {.type = WEFT_VM_TYPE_REF, .ref = {b, &kBenchSemaphoreType}},
          {.type = WEFT_VM_TYPE_I64, .i64 = round_trips}};
      status = weft_vm_loop_submit(loop, vm->context, "programs.pingpong",
                                   args, 3, 1, weft_bench_await_done, &result,
                                   NULL);
    }
    if (weft_status_is_ok(status)) {
      status = weft_vm_loop_run(loop, WEFT_TIME_INFINITE_FUTURE);
    }
    if (weft_status_is_ok(status)) status = result.status;
    weft_vm_loop_destroy(loop);
  } else if (weft_status_is_ok(status)) {
    const weft_timeout_t forever = {WEFT_TIMEOUT_ABSOLUTE,
                                    WEFT_TIME_INFINITE_FUTURE};
    for (int64_t i = 1; weft_status_is_ok(status) && i <= round_trips; ++i) {
      status = weft_semaphore_signal(a, (uint64_t)i);
      if (weft_status_is_ok(status)) {
        status = weft_semaphore_wait(b, (uint64_t)i, forever);
      }
    }
  }
  if (!weft_status_is_ok(status) && a) {
    // Ends the partner's round.
    weft_semaphore_fail(a, WEFT_STATUS(CANCELLED, "bench stopped"));
  }
  weft_semaphore_release(a);
  weft_semaphore_release(b);
  return status;
}

//===----------------------------------------------------------------------===//
// Memory of suspended invocations
//===----------------------------------------------------------------------===//

static void weft_bench_count_done(void* user_data,
                                  weft_vm_loop_invocation_t* invocation,
                                  weft_status_t status,
                                  weft_vm_value_t* results,
                                  uint32_t result_count) {
  if (weft_status_is_ok(status)) ++*(int64_t*)user_data;
  weft_status_free(status);
}

weft_status_t weft_bench_vm_suspend(weft_bench_vm_t* vm, int64_t count,
                                    int64_t (*heap_bytes)(void),
                                    int64_t* out_bytes_per_invocation) {
  weft_allocator_t allocator = weft_allocator_system();
  weft_semaphore_t* semaphore = NULL;
  weft_status_t status = weft_semaphore_create(allocator, 0, &semaphore);
  weft_vm_loop_t* loop = NULL;
  if (weft_status_is_ok(status)) {
    weft_vm_loop_options_t options = {0};
    status = weft_vm_loop_create(options, allocator, &loop);
  }
  int64_t completed = 0;
  const int64_t before = heap_bytes();
  for (int64_t i = 0; weft_status_is_ok(status) && i < count; ++i) {
    weft_vm_value_t args[2] = {
        {.type = WEFT_VM_TYPE_REF, .ref = {semaphore, &kBenchSemaphoreType}},
        {.type = WEFT_VM_TYPE_I64, .i64 = 1}};
    status = weft_vm_loop_submit(loop, vm->context, "programs.wait_once", args,
                                 2, 0, weft_bench_count_done, &completed,
                                 NULL);
  }
  if (weft_status_is_ok(status)) {
    // Runs every invocation to its await; they all park.
    weft_status_t run_status = weft_vm_loop_run(loop, weft_time_now());
    weft_status_ignore(run_status);
    *out_bytes_per_invocation = (heap_bytes() - before) / count;
    status = weft_semaphore_signal(semaphore, 1);
  }
  if (weft_status_is_ok(status)) {
    status = weft_vm_loop_run(loop, WEFT_TIME_INFINITE_FUTURE);
  }
  if (weft_status_is_ok(status) && completed != count) {
    status = WEFT_STATUS(INTERNAL, "%lld of %lld invocations completed",
                         (long long)completed, (long long)count);
  }
  weft_vm_loop_destroy(loop);
  weft_semaphore_release(semaphore);
  return status;
}
