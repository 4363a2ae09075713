// Tests for native modules, contexts (linking) and synchronous invocations
// whose native calls wait on semaphores (src/vm/module, context,
// invocation).
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
#include "vm/invocation.h"
#include "vm/list.h"

static void expect_ok(weft_status_t status) {
  if (!weft_status_is_ok(status)) {
    char text[2048];
    weft_status_format(status, text, sizeof(text));
    weft_status_free(status);
    fail_msg("unexpected error: %s", text);
  }
}

static void expect_error(weft_status_t status, weft_status_code_t code,
                         const char* needle) {
  char text[2048];
  weft_status_format(status, text, sizeof(text));
  weft_status_code_t actual = weft_status_code(status);
  weft_status_free(status);
  if (actual != code || !strstr(text, needle)) {
    fail_msg("expected %s with '%s', got: %s", weft_status_code_string(code),
             needle, text);
  }
}

//===----------------------------------------------------------------------===//
// A native module "t" and a semaphore ref type
//===----------------------------------------------------------------------===//

static void semaphore_retain(void* object) {
  weft_semaphore_retain((weft_semaphore_t*)object);
}
static void semaphore_release(void* object) {
  weft_semaphore_release((weft_semaphore_t*)object);
}
static const weft_vm_ref_type_t kSemaphoreType = {"semaphore",
                                                  semaphore_retain,
                                                  semaphore_release};

static weft_status_t t_add(weft_vm_native_call_t* call) {
  call->results[0].i32 = call->args[0].i32 + call->args[1].i32;
  return WEFT_OK;
}

// await(semaphore, value, timeout_ns) -> (code): 0 when reached, the
// DEADLINE_EXCEEDED code when the timeout passed; a failed semaphore fails
// the call with its message.
static weft_status_t t_await(weft_vm_native_call_t* call) {
  if (call->pc == 0) {
    weft_semaphore_t* semaphore = (weft_semaphore_t*)call->args[0].ref.object;
    const uint64_t value = (uint64_t)call->args[1].i64;
    uint64_t current = 0;
    weft_status_t status = weft_semaphore_query(semaphore, &current);
    if (!weft_status_is_ok(status)) return status;
    if (current >= value) {
      call->results[0].i32 = 0;
      return WEFT_OK;
    }
    const int64_t timeout = call->args[2].i64;
    weft_vm_wait_frame_begin(call, WEFT_WAIT_MODE_ALL,
                             timeout < 0 ? WEFT_TIME_INFINITE_FUTURE
                                         : weft_time_now() + timeout);
    status = weft_vm_wait_frame_add(call, semaphore, value);
    if (!weft_status_is_ok(status)) return status;
    call->pc = 1;
    return weft_status_from_code(WEFT_STATUS_DEFERRED);
  }
  weft_status_t result = call->wait_result;
  call->wait_result = WEFT_OK;
  if (weft_status_is(result, WEFT_STATUS_DEADLINE_EXCEEDED)) {
    weft_status_free(result);
    call->results[0].i32 = WEFT_STATUS_DEADLINE_EXCEEDED;
    return WEFT_OK;
  }
  if (!weft_status_is_ok(result)) return result;
  call->results[0].i32 = 0;
  return WEFT_OK;
}

static weft_status_t t_list_size(weft_vm_native_call_t* call) {
  const weft_vm_list_t* list = (const weft_vm_list_t*)call->args[0].ref.object;
  call->results[0].i32 = list ? (int32_t)list->size : -1;
  return WEFT_OK;
}

static int g_state_count = 0;
static weft_status_t t_create_state(void* user_data, weft_allocator_t allocator,
                                    void** out_state) {
  ++g_state_count;
  *out_state = &g_state_count;
  return WEFT_OK;
}
static void t_destroy_state(void* user_data, void* state) { --g_state_count; }

static const weft_vm_native_function_t kTFunctions[] = {
    {"add", "(i32, i32) -> (i32)", t_add},
    {"await", "(r<semaphore>, i64, i64) -> (i32)", t_await},
    {"list_size", "(r<list>?) -> (i32)", t_list_size},
    {"strict_list_size", "(r<list>) -> (i32)", t_list_size},
};
static const weft_vm_native_module_def_t kTModule = {
    .name = "t",
    .function_count = 4,
    .functions = kTFunctions,
    .create_state = t_create_state,
    .destroy_state = t_destroy_state,
};

//===----------------------------------------------------------------------===//
// A bytecode module "m" calling t.await (built directly)
//===----------------------------------------------------------------------===//

// m.wait(s: r<semaphore>, value: i64, timeout: i64) -> (i32):
//   call.import t.await(r0, s0, s1) -> (s2); ret (s2)
// m.sum(a: i32, b: i32) -> (i32): call.import t.add(s0, s1) -> (s2); ...
typedef struct m_module_t {
  weft_vm_bytecode_t bytecode;
  weft_vm_function_t functions[2];
  weft_vm_import_t imports[2];
  weft_vm_instruction_t code[4];
  uint16_t operands[8];
} m_module_t;

static const uint8_t kWaitTypes[] = {WEFT_VM_TYPE_REF, WEFT_VM_TYPE_I64,
                                     WEFT_VM_TYPE_I64, WEFT_VM_TYPE_I32};
static const uint8_t kSumTypes[] = {WEFT_VM_TYPE_I32, WEFT_VM_TYPE_I32,
                                    WEFT_VM_TYPE_I32};

// Makes module m (one allocation, as the assembler would) importing
// t.await with |await_signature| and t.add with |add_name|.
static weft_vm_module_t* make_m(const char* await_signature,
                                const char* add_name) {
  m_module_t* m = NULL;
  expect_ok(weft_allocator_malloc(weft_allocator_system(), sizeof(*m),
                                  (void**)&m));
  m->functions[0] = (weft_vm_function_t){"wait", {3, 1, kWaitTypes, NULL},
                                         3, 1, 0, 2};
  m->functions[1] = (weft_vm_function_t){"sum", {2, 1, kSumTypes, NULL}, 3,
                                         0, 2, 2};
  m->imports[0] = (weft_vm_import_t){
      "t", "await", {3, 1, kWaitTypes, await_signature}};
  m->imports[1] = (weft_vm_import_t){"t", add_name, {2, 1, kSumTypes, NULL}};
  const uint16_t operands[] = {0, 0, 1, 2, 2, 0, 1, 2};
  memcpy(m->operands, operands, sizeof(operands));
  m->code[0] = (weft_vm_instruction_t){.op = WEFT_VM_OP_CALL_IMPORT, .a = 0,
                                       .imm = 0};
  m->code[1] = (weft_vm_instruction_t){.op = WEFT_VM_OP_RET, .imm = 4};
  m->code[2] = (weft_vm_instruction_t){.op = WEFT_VM_OP_CALL_IMPORT, .a = 1,
                                       .imm = 5};
  m->code[3] = (weft_vm_instruction_t){.op = WEFT_VM_OP_RET, .imm = 7};
  m->bytecode = (weft_vm_bytecode_t){
      .name = "m",
      .function_count = 2,
      .functions = m->functions,
      .import_count = 2,
      .imports = m->imports,
      .code_count = 4,
      .code = m->code,
      .operand_count = 8,
      .operands = m->operands,
  };
  weft_vm_module_t* module = NULL;
  expect_ok(weft_vm_module_create_bytecode(weft_allocator_system(),
                                           &m->bytecode, &module));
  return module;
}

#define AWAIT_SIGNATURE "(r<semaphore>,i64,i64)->(i32)"

static weft_vm_context_t* make_context(weft_vm_module_t* m) {
  weft_vm_module_t* t = NULL;
  expect_ok(weft_vm_module_create_native(weft_allocator_system(), &kTModule,
                                         &t));
  weft_vm_module_t* modules[2] = {m, t};
  weft_vm_context_t* context = NULL;
  expect_ok(weft_vm_context_create(modules, 2, weft_allocator_system(),
                                   &context));
  weft_vm_module_release(t);
  return context;
}

static weft_status_t call_wait(weft_vm_context_t* context,
                               weft_semaphore_t* semaphore, int64_t value,
                               int64_t timeout_ns, int32_t* out_code) {
  weft_vm_value_t args[3] = {
      {.type = WEFT_VM_TYPE_REF, .ref = {semaphore, &kSemaphoreType}},
      {.type = WEFT_VM_TYPE_I64, .i64 = value},
      {.type = WEFT_VM_TYPE_I64, .i64 = timeout_ns}};
  weft_vm_value_t result = {0};
  weft_status_t status = weft_vm_invoke_sync(context, "m.wait", args, 3,
                                             &result, 1, 0,
                                             weft_allocator_system());
  *out_code = result.i32;
  return status;
}

static void links_and_calls_natives(void** state) {
  weft_vm_module_t* m = make_m(AWAIT_SIGNATURE, "add");
  weft_vm_context_t* context = make_context(m);
  assert_int_equal(g_state_count, 1);
  weft_vm_value_t args[2] = {{.type = WEFT_VM_TYPE_I32, .i32 = 40},
                             {.type = WEFT_VM_TYPE_I32, .i32 = 2}};
  weft_vm_value_t result = {0};
  expect_ok(weft_vm_invoke_sync(context, "m.sum", args, 2, &result, 1, 0,
                                weft_allocator_system()));
  assert_int_equal(result.i32, 42);
  // A native function can be invoked directly too.
  expect_ok(weft_vm_invoke_sync(context, "t.add", args, 2, &result, 1, 0,
                                weft_allocator_system()));
  assert_int_equal(result.i32, 42);
  weft_vm_context_release(context);
  weft_vm_module_release(m);
  assert_int_equal(g_state_count, 0);
}

static void link_errors_name_both_sides(void** state) {
  weft_vm_module_t* t = NULL;
  expect_ok(weft_vm_module_create_native(weft_allocator_system(), &kTModule,
                                         &t));
  weft_vm_context_t* context = NULL;
  // The import's signature differs from the native one: both are named.
  weft_vm_module_t* m = make_m("(r<semaphore>,i64,i32)->(i32)", "add");
  weft_vm_module_t* modules[2] = {m, t};
  weft_status_t status =
      weft_vm_context_create(modules, 2, weft_allocator_system(), &context);
  char text[1024];
  weft_status_format(status, text, sizeof(text));
  assert_int_equal(weft_status_code(status), WEFT_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(text, "(r<semaphore>,i64,i32)->(i32)"));
  assert_non_null(strstr(text, AWAIT_SIGNATURE));
  weft_status_free(status);
  assert_null(context);
  weft_vm_module_release(m);
  // A missing function lists what the module has.
  m = make_m(AWAIT_SIGNATURE, "addd");
  modules[0] = m;
  expect_error(
      weft_vm_context_create(modules, 2, weft_allocator_system(), &context),
      WEFT_STATUS_NOT_FOUND, "module 't' has no function 'addd'");
  // A missing module.
  expect_error(
      weft_vm_context_create(modules, 1, weft_allocator_system(), &context),
      WEFT_STATUS_NOT_FOUND, "the context has no module 't'");
  weft_vm_module_release(m);
  weft_vm_module_release(t);
  assert_int_equal(g_state_count, 0);
}

static void native_arguments_checked(void** state) {
  weft_vm_module_t* m = make_m(AWAIT_SIGNATURE, "add");
  weft_vm_context_t* context = make_context(m);
  weft_vm_value_t result = {0};
  weft_vm_value_t null_arg = {.type = WEFT_VM_TYPE_REF};
  // r<list>? takes null; r<list> does not.
  expect_ok(weft_vm_invoke_sync(context, "t.list_size", &null_arg, 1, &result,
                                1, 0, weft_allocator_system()));
  assert_int_equal(result.i32, -1);
  expect_error(weft_vm_invoke_sync(context, "t.strict_list_size", &null_arg, 1,
                                   &result, 1, 0, weft_allocator_system()),
               WEFT_STATUS_INVALID_ARGUMENT,
               "t.strict_list_size: argument 0 is null");
  // A ref of another type.
  weft_semaphore_t* semaphore = NULL;
  expect_ok(weft_semaphore_create(weft_allocator_system(), 0, &semaphore));
  weft_vm_value_t wrong = {.type = WEFT_VM_TYPE_REF,
                           .ref = {semaphore, &kSemaphoreType}};
  expect_error(weft_vm_invoke_sync(context, "t.list_size", &wrong, 1, &result,
                                   1, 0, weft_allocator_system()),
               WEFT_STATUS_INVALID_ARGUMENT, "is a 'semaphore', not a 'list'");
  weft_semaphore_release(semaphore);
  weft_vm_context_release(context);
  weft_vm_module_release(m);
}

typedef struct signal_later_t {
  weft_semaphore_t* semaphore;
  uint64_t value;
  bool fail;
} signal_later_t;

static int signal_later_main(void* user_data) {
  signal_later_t* later = (signal_later_t*)user_data;
  // Late enough that the invocation is already waiting (either order is
  // correct; this one exercises the wait).
  struct timespec delay = {0, 5 * 1000000};
  nanosleep(&delay, NULL);
  if (later->fail) {
    weft_semaphore_fail(later->semaphore,
                        WEFT_STATUS(DATA_LOSS, "the producer died"));
  } else {
    weft_status_ignore(weft_semaphore_signal(later->semaphore, later->value));
  }
  return 0;
}

static void waits_block_in_place(void** state) {
  weft_vm_module_t* m = make_m(AWAIT_SIGNATURE, "add");
  weft_vm_context_t* context = make_context(m);
  weft_semaphore_t* semaphore = NULL;
  expect_ok(weft_semaphore_create(weft_allocator_system(), 1, &semaphore));
  int32_t code = -1;
  // Reached already: no wait.
  expect_ok(call_wait(context, semaphore, 1, -1, &code));
  assert_int_equal(code, 0);
  // Reached later from another thread.
  signal_later_t later = {semaphore, 3, false};
  weft_thread_t* thread = NULL;
  expect_ok(weft_thread_create(signal_later_main, &later, NULL,
                               weft_allocator_system(), &thread));
  expect_ok(call_wait(context, semaphore, 3, -1, &code));
  assert_int_equal(code, 0);
  weft_thread_join(thread);
  // A deadline is a value for the program, not a failure.
  expect_ok(call_wait(context, semaphore, 9, 1000000, &code));
  assert_int_equal(code, WEFT_STATUS_DEADLINE_EXCEEDED);
  // A failure ends the invocation with the original message and the stack.
  later = (signal_later_t){semaphore, 0, true};
  expect_ok(weft_thread_create(signal_later_main, &later, NULL,
                               weft_allocator_system(), &thread));
  weft_status_t status = call_wait(context, semaphore, 9, -1, &code);
  weft_thread_join(thread);
  char text[2048];
  weft_status_format(status, text, sizeof(text));
  assert_int_equal(weft_status_code(status), WEFT_STATUS_DATA_LOSS);
  assert_non_null(strstr(text, "the producer died"));
  assert_non_null(strstr(text, "VM stack: at t.await (native), at m.wait"));
  weft_status_free(status);
  weft_semaphore_release(semaphore);
  weft_vm_context_release(context);
  weft_vm_module_release(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(links_and_calls_natives),
      cmocka_unit_test(link_errors_name_both_sides),
      cmocka_unit_test(native_arguments_checked),
      cmocka_unit_test(waits_block_in_place),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
