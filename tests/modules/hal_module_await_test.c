// Tests for the hal module's awaits (src/modules/hal/await.c):
// semaphore.await, fence.await and fence.await_list, synchronously
// (weft_vm_invoke_sync blocking in place, the sources reached by another
// thread) and on the loop (two invocations ping-ponging on one thread,
// queue work on other threads reaching them); deadlines as values;
// failures with their original message and the VM stack; sources already
// reached dropped and the rest deduplicated.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
// clang-format off
#include <cmocka.h>
// clang-format on

#include <string.h>
#include <time.h>

#include "base/thread.h"
#include "hal_module_test_util.h"
#include "vm/context_impl.h"
#include "vm/module_impl.h"
#include "weft/fence.h"
#include "weft/vm/loop.h"

#define expect_ok vm_test_expect_ok
#define expect_error vm_test_expect_error
#define REF hal_test_ref
#define NUL hal_test_null
#define I32 hal_test_i32
#define I64 hal_test_i64

// Signals (or fails) a semaphore from another thread after a delay, late
// enough that the awaiting side is already waiting (either order is
// correct; this one exercises the wait).
typedef struct later_t {
  weft_semaphore_t* semaphore;
  uint64_t value;
  // A failure to fail the semaphore with instead (NULL: signal).
  weft_status_code_t fail_code;
  const char* fail_message;
  weft_thread_t* thread;
} later_t;

static int later_main(void* user_data) {
  later_t* later = (later_t*)user_data;
  struct timespec delay = {0, 5 * 1000000};
  nanosleep(&delay, NULL);
  if (later->fail_message) {
    weft_semaphore_fail(later->semaphore,
                        weft_status_make_(__FILE__, __LINE__, later->fail_code,
                                          "%s", later->fail_message));
  } else {
    expect_ok(weft_semaphore_signal(later->semaphore, later->value));
  }
  return 0;
}

static void later_start(later_t* later) {
  expect_ok(weft_thread_create(later_main, later, NULL, weft_allocator_system(),
                               &later->thread));
}

static weft_semaphore_t* new_semaphore(hal_test_t* t, int64_t initial) {
  weft_vm_value_t semaphore = hal_test_call_ok(
      t, "semaphore.create", HAL_ARGS(REF(t->device), I64(initial)));
  assert_ptr_equal(semaphore.ref.type, &kWeftHalSemaphoreType);
  return (weft_semaphore_t*)semaphore.ref.object;
}

static weft_fence_t* fence_at(hal_test_t* t, weft_semaphore_t* semaphore,
                              int64_t value) {
  return (weft_fence_t*)hal_test_call_ok(t, "fence.at",
                                         HAL_ARGS(REF(semaphore), I64(value)))
      .ref.object;
}

static weft_status_t semaphore_await(hal_test_t* t, weft_semaphore_t* semaphore,
                                     int64_t value, int64_t timeout_ns,
                                     int32_t* out_code) {
  weft_vm_value_t code = {0};
  weft_status_t status =
      hal_test_call(t, "semaphore.await",
                    HAL_ARGS(REF(semaphore), I64(value), I64(timeout_ns)),
                    &code, 1);
  *out_code = code.i32;
  return status;
}

//===----------------------------------------------------------------------===//
// Synchronous
//===----------------------------------------------------------------------===//

static void semaphore_await_sync_body(hal_test_t* t) {
  weft_semaphore_t* semaphore = new_semaphore(t, 0);
  weft_vm_value_t query[2] = {{0}};
  expect_ok(hal_test_call(t, "semaphore.query", HAL_ARGS(REF(semaphore)),
                          query, 2));
  assert_int_equal(query[0].i32, 0);
  assert_int_equal(query[1].i64, 0);
  int32_t code = -1;
  // Reached already: no wait.
  expect_ok(semaphore_await(t, semaphore, 0, -1, &code));
  assert_int_equal(code, 0);
  // Reached later by another thread.
  later_t later = {.semaphore = semaphore, .value = 3};
  later_start(&later);
  expect_ok(semaphore_await(t, semaphore, 3, -1, &code));
  assert_int_equal(code, 0);
  weft_thread_join(later.thread);
  // The program signals too.
  expect_ok(hal_test_call(t, "semaphore.signal", HAL_ARGS(REF(semaphore), I64(4)),
                          NULL, 0));
  expect_ok(semaphore_await(t, semaphore, 4, 0, &code));
  assert_int_equal(code, 0);
  // A deadline is a value for the program, not a failure; a zero timeout
  // polls.
  expect_ok(semaphore_await(t, semaphore, 9, 1000000, &code));
  assert_int_equal(code, WEFT_STATUS_DEADLINE_EXCEEDED);
  expect_ok(semaphore_await(t, semaphore, 9, 0, &code));
  assert_int_equal(code, WEFT_STATUS_DEADLINE_EXCEEDED);
  // A failure while waiting fails the call with the original message and
  // the VM stack.
  later = (later_t){.semaphore = semaphore,
                    .fail_code = WEFT_STATUS_DATA_LOSS,
                    .fail_message = "the producer died"};
  later_start(&later);
  weft_status_t status = semaphore_await(t, semaphore, 9, -1, &code);
  weft_thread_join(later.thread);
  char text[2048];
  weft_status_format(status, text, sizeof(text));
  assert_int_equal(weft_status_code(status), WEFT_STATUS_DATA_LOSS);
  assert_non_null(strstr(text, "the producer died"));
  assert_non_null(strstr(text, "VM stack: at hal.semaphore.await (native)"));
  weft_status_free(status);
  // Failed already: the call fails at entry, the same way.
  expect_error(semaphore_await(t, semaphore, 9, -1, &code),
               WEFT_STATUS_DATA_LOSS, "the producer died");
  // A query reports the failure as a value, with the last value reached.
  expect_ok(hal_test_call(t, "semaphore.query", HAL_ARGS(REF(semaphore)),
                          query, 2));
  assert_int_equal(query[0].i32, WEFT_STATUS_DATA_LOSS);
  assert_int_equal(query[1].i64, 4);
  // Signalling a failed semaphore is the HAL's error.
  expect_error(hal_test_call(t, "semaphore.signal",
                             HAL_ARGS(REF(semaphore), I64(10)), NULL, 0),
               WEFT_STATUS_DATA_LOSS, "the producer died");
  weft_semaphore_release(semaphore);
  // semaphore.fail from the program.
  semaphore = new_semaphore(t, 0);
  expect_ok(hal_test_call(t, "semaphore.fail",
                          HAL_ARGS(REF(semaphore), I32(WEFT_STATUS_ABORTED)),
                          NULL, 0));
  expect_error(semaphore_await(t, semaphore, 1, -1, &code),
               WEFT_STATUS_ABORTED,
               "failed by the program (hal.semaphore.fail)");
  weft_semaphore_release(semaphore);
}

static void semaphore_await_sync(void** state) {
  hal_test_for_each_device(semaphore_await_sync_body);
}

static void fence_await_sync_body(hal_test_t* t) {
  // A null fence is reached.
  assert_int_equal(hal_test_await(t, NULL, -1), 0);
  assert_int_equal(hal_test_call_ok(t, "fence.query", HAL_ARGS(NUL())).i32, 0);
  // Two fences on one semaphore, joined: the larger value.
  weft_semaphore_t* semaphore = new_semaphore(t, 0);
  weft_fence_t* one = fence_at(t, semaphore, 1);
  weft_fence_t* two = fence_at(t, semaphore, 2);
  weft_vm_value_t joined = hal_test_call_ok(t, "fence.join",
                                            HAL_ARGS(REF(one), REF(two)));
  weft_fence_t* both = (weft_fence_t*)joined.ref.object;
  assert_int_equal(weft_fence_count(both), 1);
  assert_int_equal(weft_fence_as_list(both).values[0], 2);
  assert_int_equal(hal_test_call_ok(t, "fence.query", HAL_ARGS(joined)).i32,
                   WEFT_STATUS_DEFERRED);
  assert_int_equal(hal_test_await(t, both, 1000000),
                   WEFT_STATUS_DEADLINE_EXCEEDED);
  expect_ok(weft_semaphore_signal(semaphore, 1));
  assert_int_equal(hal_test_await(t, one, -1), 0);
  assert_int_equal(hal_test_await(t, both, 0), WEFT_STATUS_DEADLINE_EXCEEDED);
  later_t later = {.semaphore = semaphore, .value = 2};
  later_start(&later);
  assert_int_equal(hal_test_await(t, both, -1), 0);
  weft_thread_join(later.thread);
  assert_int_equal(hal_test_call_ok(t, "fence.query", HAL_ARGS(joined)).i32, 0);
  // Joining two nulls is null.
  weft_vm_value_t none =
      hal_test_call_ok(t, "fence.join", HAL_ARGS(NUL(), NUL()));
  assert_null(none.ref.object);
  // fence.signal and fence.fail from the program.
  weft_fence_t* signalled = hal_test_new_fence(t);
  expect_ok(hal_test_call(t, "fence.signal", HAL_ARGS(REF(signalled)), NULL, 0));
  assert_int_equal(hal_test_await(t, signalled, -1), 0);
  weft_fence_t* failed = hal_test_new_fence(t);
  expect_ok(hal_test_call(t, "fence.fail",
                          HAL_ARGS(REF(failed), I32(WEFT_STATUS_UNAVAILABLE)),
                          NULL, 0));
  assert_int_equal(hal_test_call_ok(t, "fence.query", HAL_ARGS(REF(failed))).i32,
                   WEFT_STATUS_UNAVAILABLE);
  weft_vm_value_t code = {0};
  expect_error(hal_test_call(t, "fence.await", HAL_ARGS(REF(failed), I64(-1)),
                             &code, 1),
               WEFT_STATUS_UNAVAILABLE, "failed by the program (hal.fence.fail)");
  // A semaphore failed with DEADLINE_EXCEEDED (and a message) is a
  // failure, not a deadline the program sees as a value.
  weft_fence_t* timed_out = hal_test_new_fence(t);
  later = (later_t){.semaphore = weft_fence_as_list(timed_out).semaphores[0],
                    .fail_code = WEFT_STATUS_DEADLINE_EXCEEDED,
                    .fail_message = "the upstream timed out"};
  later_start(&later);
  expect_error(hal_test_call(t, "fence.await",
                             HAL_ARGS(REF(timed_out), I64(-1)), &code, 1),
               WEFT_STATUS_DEADLINE_EXCEEDED, "the upstream timed out");
  weft_thread_join(later.thread);
  weft_fence_release(timed_out);
  weft_fence_release(failed);
  weft_fence_release(signalled);
  weft_vm_ref_release(joined.ref);
  weft_fence_release(two);
  weft_fence_release(one);
  weft_semaphore_release(semaphore);
}

static void fence_await_sync(void** state) {
  hal_test_for_each_device(fence_await_sync_body);
}

// Names a program gives its semaphores reach the messages of waits that
// fail, in place of the semaphore's address.
static void names_body(hal_test_t* t) {
  weft_vm_bytes_t* layer = hal_test_make_bytes("layer1");
  weft_vm_value_t named = hal_test_call_ok(
      t, "fence.create_named", HAL_ARGS(REF(t->device), hal_test_bytes(layer)));
  weft_fence_t* fence = (weft_fence_t*)named.ref.object;
  assert_string_equal(
      weft_semaphore_name(weft_fence_as_list(fence).semaphores[0]), "layer1");
  expect_ok(hal_test_call(t, "fence.signal", HAL_ARGS(REF(fence)), NULL, 0));
  expect_error(hal_test_call(t, "fence.signal", HAL_ARGS(REF(fence)), NULL, 0),
               WEFT_STATUS_INVALID_ARGUMENT,
               "semaphore 'layer1': signal to 1 but already at 1");

  weft_semaphore_t* semaphore = new_semaphore(t, 0);
  weft_vm_bytes_t* step = hal_test_make_bytes("step");
  expect_ok(hal_test_call(t, "semaphore.set_name",
                          HAL_ARGS(REF(semaphore), hal_test_bytes(step)), NULL,
                          0));
  assert_string_equal(weft_semaphore_name(semaphore), "step");
  expect_ok(hal_test_call(t, "semaphore.fail",
                          HAL_ARGS(REF(semaphore), I32(WEFT_STATUS_ABORTED)),
                          NULL, 0));
  expect_error(hal_test_call(t, "semaphore.signal",
                             HAL_ARGS(REF(semaphore), I64(1)), NULL, 0),
               WEFT_STATUS_ABORTED,
               "while signalling semaphore 'step' to 1 (it has failed)");

  // A name with a NUL in it is refused, naming the argument.
  weft_vm_bytes_t* bad = NULL;
  expect_ok(weft_vm_bytes_create(weft_allocator_system(), "a\0b", 3, &bad));
  expect_error(hal_test_call(t, "semaphore.set_name",
                             HAL_ARGS(REF(semaphore), hal_test_bytes(bad)),
                             NULL, 0),
               WEFT_STATUS_INVALID_ARGUMENT, "name");
  assert_string_equal(weft_semaphore_name(semaphore), "step");
  weft_vm_value_t none = {0};
  expect_error(hal_test_call(t, "fence.create_named",
                             HAL_ARGS(REF(t->device), hal_test_bytes(bad)),
                             &none, 1),
               WEFT_STATUS_INVALID_ARGUMENT, "name");
  assert_null(none.ref.object);

  hal_test_release_bytes(bad);
  hal_test_release_bytes(step);
  hal_test_release_bytes(layer);
  weft_semaphore_release(semaphore);
  weft_vm_ref_release(named.ref);
}

static void names(void** state) { hal_test_for_each_device(names_body); }

// Calls native function "fence.await_list" of the module directly, to see
// the wait frame it describes: the sources already reached are dropped,
// two fences on one semaphore become one source with the larger value.
static void await_list_dedups(void** state) {
  hal_test_t test;
  hal_test_t* t = &test;
  hal_test_setup("local-sync", t);
  weft_semaphore_t* a = new_semaphore(t, 0);
  weft_semaphore_t* b = new_semaphore(t, 1);
  weft_fence_t* a1 = fence_at(t, a, 1);
  weft_fence_t* a2 = fence_at(t, a, 2);
  weft_fence_t* b1 = fence_at(t, b, 1);  // reached
  weft_vm_list_t* fences =
      hal_test_make_list(HAL_ARGS(REF(a1), NUL(), REF(b1), REF(a2)));
  uint32_t index = 0;
  expect_ok(weft_vm_module_lookup(t->module, "fence.await_list", &index));
  const weft_vm_native_function_t* function =
      &t->module->native->functions[index];
  weft_vm_value_t args[2] = {hal_test_list(fences), I64(-1)};
  weft_vm_value_t result = {.type = WEFT_VM_TYPE_I32};
  weft_vm_wait_frame_t frame;
  memset(&frame, 0, sizeof(frame));
  frame.allocator = weft_allocator_system();
  weft_vm_wait_frame_clear(&frame);
  weft_vm_native_call_t call = {
      .module_state = t->context->instances[0].state,
      .args = args,
      .results = &result,
      .wait = &frame,
      .allocator = weft_allocator_system(),
  };
  weft_status_t status = function->fn(&call);
  assert_int_equal(weft_status_code(status), WEFT_STATUS_DEFERRED);
  weft_status_ignore(status);
  assert_int_equal(call.pc, 1);
  assert_int_equal(frame.mode, WEFT_WAIT_MODE_ALL);
  assert_int_equal(frame.deadline, WEFT_TIME_INFINITE_FUTURE);
  assert_int_equal(frame.count, 1);
  assert_ptr_equal(frame.semaphores[0], a);
  assert_int_equal(frame.values[0], 2);
  // Resumed with the wait reached: 0.
  call.wait_result = WEFT_OK;
  expect_ok(function->fn(&call));
  assert_int_equal(result.i32, 0);
  // Resumed with the bare deadline code: the code as the value.
  call.wait_result = weft_status_from_code(WEFT_STATUS_DEADLINE_EXCEEDED);
  expect_ok(function->fn(&call));
  assert_int_equal(result.i32, WEFT_STATUS_DEADLINE_EXCEEDED);
  weft_vm_wait_frame_clear(&frame);
  // Signalled to 1: the source left is still a at 2.
  expect_ok(weft_semaphore_signal(a, 1));
  call.pc = 0;
  status = function->fn(&call);
  assert_int_equal(weft_status_code(status), WEFT_STATUS_DEFERRED);
  weft_status_ignore(status);
  assert_int_equal(frame.count, 1);
  assert_int_equal(frame.values[0], 2);
  weft_vm_wait_frame_clear(&frame);
  // Through the VM: a deadline until a reaches 2, then 0 at once.
  weft_vm_value_t code = hal_test_call_ok(
      t, "fence.await_list", HAL_ARGS(hal_test_list(fences), I64(1000000)));
  assert_int_equal(code.i32, WEFT_STATUS_DEADLINE_EXCEEDED);
  expect_ok(weft_semaphore_signal(a, 2));
  call.pc = 0;
  expect_ok(function->fn(&call));
  assert_int_equal(result.i32, 0);
  assert_int_equal(frame.count, 0);
  code = hal_test_call_ok(t, "fence.await_list",
                          HAL_ARGS(hal_test_list(fences), I64(-1)));
  assert_int_equal(code.i32, 0);
  // A failed source fails the call at entry and leaves the frame empty.
  weft_semaphore_fail(b, WEFT_STATUS(DATA_LOSS, "b is gone"));
  call.pc = 0;
  expect_error(function->fn(&call), WEFT_STATUS_DATA_LOSS, "b is gone");
  assert_int_equal(frame.count, 0);
  hal_test_release_list(fences);
  weft_fence_release(b1);
  weft_fence_release(a2);
  weft_fence_release(a1);
  weft_semaphore_release(b);
  weft_semaphore_release(a);
  hal_test_teardown(t);
}

//===----------------------------------------------------------------------===//
// The loop
//===----------------------------------------------------------------------===//

// A bytecode module "pp" importing hal.semaphore.signal and
// hal.semaphore.await (built directly, as the assembler would):
//   ping(a, b, n) -> (i64): for i in 1..n: signal(b, i); await(a, i, -1)
//   pong(a, b, n) -> (i64): for i in 1..n: await(b, i, -1); signal(a, i)
// Each returns n + 1.
typedef struct pp_module_t {
  weft_vm_bytecode_t bytecode;
  weft_vm_function_t functions[2];
  weft_vm_import_t imports[2];
  weft_vm_instruction_t code[18];
  uint16_t operands[14];
  uint64_t constants[2];
} pp_module_t;

static const uint8_t kRelayTypes[] = {WEFT_VM_TYPE_REF, WEFT_VM_TYPE_REF,
                                      WEFT_VM_TYPE_I64, WEFT_VM_TYPE_I64};
static const uint8_t kSignalTypes[] = {WEFT_VM_TYPE_REF, WEFT_VM_TYPE_I64};
static const uint8_t kAwaitTypes[] = {WEFT_VM_TYPE_REF, WEFT_VM_TYPE_I64,
                                      WEFT_VM_TYPE_I64, WEFT_VM_TYPE_I32};

#define OP(op_, a_, b_, c_) \
  (weft_vm_instruction_t) { .op = WEFT_VM_OP_##op_, .a = (a_), .b = (b_), .c = (c_) }
#define OP_IMM(op_, a_, imm_) \
  (weft_vm_instruction_t) { .op = WEFT_VM_OP_##op_, .a = (a_), .imm = (imm_) }

// Writes one relay function's code at |code|: s1 = i, s2 = 1, s3 = -1,
// s4 = the await's code, s5 = i <= n; the calls at |first| and |second|
// (import, operand list) in the loop body.
static void pp_write_relay(weft_vm_instruction_t* code, uint16_t first_import,
                           uint32_t first_operands, uint16_t second_import,
                           uint32_t second_operands, uint32_t ret_operands) {
  code[0] = OP_IMM(CONST_I64, 1, 0);
  code[1] = OP_IMM(CONST_I64, 2, 0);
  code[2] = OP_IMM(CONST_I64, 3, 1);
  code[3] = OP_IMM(CALL_IMPORT, first_import, first_operands);
  code[4] = OP_IMM(CALL_IMPORT, second_import, second_operands);
  code[5] = OP(ADD_I64, 1, 1, 2);
  code[6] = OP(LE_I64_S, 5, 1, 0);
  code[7] = OP_IMM(BR_IF, 5, 3);
  code[8] = OP_IMM(RET, 0, ret_operands);
}

static weft_vm_module_t* make_pp_module(void) {
  pp_module_t* m = NULL;
  expect_ok(weft_allocator_malloc(weft_allocator_system(), sizeof(*m),
                                  (void**)&m));
  memset(m, 0, sizeof(*m));
  // Both exported: the test calls them from the host.
  m->functions[0] = (weft_vm_function_t){"ping", {3, 1, kRelayTypes, NULL},
                                         6, 2, 0, 9,
                                         WEFT_VM_FUNCTION_FLAG_EXPORT};
  m->functions[1] = (weft_vm_function_t){"pong", {3, 1, kRelayTypes, NULL},
                                         6, 2, 9, 9,
                                         WEFT_VM_FUNCTION_FLAG_EXPORT};
  m->imports[0] = (weft_vm_import_t){
      "hal", "semaphore.signal",
      {2, 0, kSignalTypes, "(r<hal.semaphore>,i64)->()"}};
  m->imports[1] = (weft_vm_import_t){
      "hal", "semaphore.await",
      {3, 1, kAwaitTypes, "(r<hal.semaphore>,i64,i64)->(i32)"}};
  // ping: signal(r1, s1) at 0; await(r0, s1, s3) -> s4 at 2; ret s1 at 6.
  // pong: await(r1, s1, s3) -> s4 at 7; signal(r0, s1) at 11; ret s1 at 13.
  const uint16_t operands[14] = {1, 1, 0, 1, 3, 4, 1,
                                 1, 1, 3, 4, 0, 1, 1};
  memcpy(m->operands, operands, sizeof(operands));
  pp_write_relay(&m->code[0], 0, 0, 1, 2, 6);
  pp_write_relay(&m->code[9], 1, 7, 0, 11, 13);
  m->constants[0] = 1;
  m->constants[1] = (uint64_t)-1;
  m->bytecode = (weft_vm_bytecode_t){
      .name = "pp",
      .function_count = 2,
      .functions = m->functions,
      .import_count = 2,
      .imports = m->imports,
      .code_count = 18,
      .code = m->code,
      .operand_count = 14,
      .operands = m->operands,
      .constant_count = 2,
      .constants = m->constants,
  };
  weft_vm_module_t* module = NULL;
  expect_ok(weft_vm_module_create_bytecode(weft_allocator_system(),
                                           &m->bytecode, &module));
  return module;
}

// What the loop's done functions saw.
typedef struct outcomes_t {
  int done;
  int ok;
  int failed;
  // Per tag (the user_data's index): the first result's bits, or the
  // failure's text.
  uint64_t result[4];
  char message[4][1024];
} outcomes_t;

typedef struct tagged_t {
  outcomes_t* outcomes;
  int tag;
} tagged_t;

static void record_done(void* user_data, weft_vm_loop_invocation_t* invocation,
                        weft_status_t status, weft_vm_value_t* results,
                        uint32_t result_count) {
  tagged_t* tagged = (tagged_t*)user_data;
  outcomes_t* outcomes = tagged->outcomes;
  ++outcomes->done;
  if (weft_status_is_ok(status)) {
    ++outcomes->ok;
    outcomes->result[tagged->tag] = result_count ? results[0].bits : 0;
  } else {
    ++outcomes->failed;
    weft_status_format(status, outcomes->message[tagged->tag],
                       sizeof(outcomes->message[0]));
    weft_status_free(status);
  }
}

// Two invocations on one thread hand control back and forth through two
// semaphores, each await a yield of its invocation.
static void loop_ping_pong_body(hal_test_t* t) {
  enum { kRounds = 200 };
  weft_vm_module_t* pp = make_pp_module();
  weft_vm_module_t* modules[2] = {pp, t->module};
  weft_vm_context_t* context = NULL;
  expect_ok(weft_vm_context_create(modules, 2, weft_allocator_system(),
                                   &context));
  weft_vm_loop_t* loop = NULL;
  expect_ok(weft_vm_loop_create((weft_vm_loop_options_t){0},
                                weft_allocator_system(), &loop));
  weft_semaphore_t* a = new_semaphore(t, 0);
  weft_semaphore_t* b = new_semaphore(t, 0);
  outcomes_t outcomes = {0};
  tagged_t ping_tag = {&outcomes, 0};
  tagged_t pong_tag = {&outcomes, 1};
  const weft_vm_value_t args[3] = {REF(a), REF(b), I64(kRounds)};
  expect_ok(weft_vm_loop_submit(loop, context, "pp.ping", args, 3, 1,
                                record_done, &ping_tag, NULL));
  expect_ok(weft_vm_loop_submit(loop, context, "pp.pong", args, 3, 1,
                                record_done, &pong_tag, NULL));
  expect_ok(weft_vm_loop_run(loop, weft_time_now() + 60ll * 1000000000));
  assert_int_equal(outcomes.ok, 2);
  assert_int_equal(outcomes.result[0], kRounds + 1);
  assert_int_equal(outcomes.result[1], kRounds + 1);
  uint64_t value = 0;
  expect_ok(weft_semaphore_query(a, &value));
  assert_int_equal(value, kRounds);
  expect_ok(weft_semaphore_query(b, &value));
  assert_int_equal(value, kRounds);
  weft_semaphore_release(b);
  weft_semaphore_release(a);
  weft_vm_loop_destroy(loop);
  weft_vm_context_release(context);
  weft_vm_module_release(pp);
}

static void loop_ping_pong(void** state) {
  hal_test_for_each_device(loop_ping_pong_body);
}

// Awaits on the loop reached by queue work (on local-task, from a worker
// thread) gated by another thread; a deadline as a value; a failure with
// its original message and the VM stack.
static void loop_awaits_body(hal_test_t* t) {
  weft_vm_loop_t* loop = NULL;
  expect_ok(weft_vm_loop_create((weft_vm_loop_options_t){0},
                                weft_allocator_system(), &loop));
  outcomes_t outcomes = {0};
  tagged_t tags[4] = {{&outcomes, 0}, {&outcomes, 1}, {&outcomes, 2},
                      {&outcomes, 3}};
  // 0: awaits the fill's signal fence, which waits on a gate.
  weft_semaphore_t* gate = new_semaphore(t, 0);
  weft_fence_t* gate_fence = fence_at(t, gate, 1);
  weft_fence_t* filled = hal_test_new_fence(t);
  weft_buffer_t* buffer = hal_test_allocate(t, 64);
  const weft_vm_value_t await_filled[2] = {REF(filled), I64(-1)};
  expect_ok(weft_vm_loop_submit(loop, t->context, "hal.fence.await",
                                await_filled, 2, 1, record_done, &tags[0],
                                NULL));
  expect_ok(hal_test_call(t, "queue.fill",
                          HAL_ARGS(REF(t->device), REF(gate_fence), REF(filled),
                                   REF(buffer), I64(0), I64(64), I32(0x3C),
                                   I32(1)),
                          NULL, 0));
  // 1: a deadline.
  weft_fence_t* never = hal_test_new_fence(t);
  const weft_vm_value_t await_never[2] = {REF(never), I64(2000000)};
  expect_ok(weft_vm_loop_submit(loop, t->context, "hal.fence.await",
                                await_never, 2, 1, record_done, &tags[1],
                                NULL));
  // 2: a semaphore another thread fails.
  weft_semaphore_t* doomed = new_semaphore(t, 0);
  const weft_vm_value_t await_doomed[3] = {REF(doomed), I64(1), I64(-1)};
  expect_ok(weft_vm_loop_submit(loop, t->context, "hal.semaphore.await",
                                await_doomed, 3, 1, record_done, &tags[2],
                                NULL));
  // 3: fence.await_list over the fill and the gate (already ours by then).
  weft_vm_list_t* fences =
      hal_test_make_list(HAL_ARGS(REF(filled), REF(gate_fence)));
  const weft_vm_value_t await_list[2] = {hal_test_list(fences), I64(-1)};
  expect_ok(weft_vm_loop_submit(loop, t->context, "hal.fence.await_list",
                                await_list, 2, 1, record_done, &tags[3],
                                NULL));
  later_t open_gate = {.semaphore = gate, .value = 1};
  later_t fail = {.semaphore = doomed,
                  .fail_code = WEFT_STATUS_ABORTED,
                  .fail_message = "the stage was aborted"};
  later_start(&open_gate);
  later_start(&fail);
  expect_ok(weft_vm_loop_run(loop, weft_time_now() + 60ll * 1000000000));
  weft_thread_join(open_gate.thread);
  weft_thread_join(fail.thread);
  assert_int_equal(outcomes.done, 4);
  assert_int_equal(outcomes.ok, 3);
  assert_int_equal((int32_t)outcomes.result[0], 0);
  assert_int_equal((int32_t)outcomes.result[1], WEFT_STATUS_DEADLINE_EXCEEDED);
  assert_int_equal((int32_t)outcomes.result[3], 0);
  assert_non_null(strstr(outcomes.message[2], "ABORTED"));
  assert_non_null(strstr(outcomes.message[2], "the stage was aborted"));
  assert_non_null(
      strstr(outcomes.message[2], "VM stack: at hal.semaphore.await (native)"));
  uint8_t bytes[64];
  expect_ok(weft_buffer_map_read(buffer, 0, bytes, sizeof(bytes)));
  assert_int_equal(bytes[0], 0x3C);
  assert_int_equal(bytes[63], 0x3C);
  hal_test_release_list(fences);
  weft_semaphore_release(doomed);
  weft_fence_release(never);
  weft_buffer_release(buffer);
  weft_fence_release(filled);
  weft_fence_release(gate_fence);
  weft_semaphore_release(gate);
  weft_vm_loop_destroy(loop);
}

static void loop_awaits(void** state) {
  hal_test_for_each_device(loop_awaits_body);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(semaphore_await_sync),
      cmocka_unit_test(fence_await_sync),
      cmocka_unit_test(names),
      cmocka_unit_test(await_list_dedups),
      cmocka_unit_test(loop_ping_pong),
      cmocka_unit_test(loop_awaits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
