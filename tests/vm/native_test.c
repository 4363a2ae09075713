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
#include "vm_test_modules.h"
#include "weft/vm/invocation.h"
#include "weft/vm/list.h"

#define expect_ok vm_test_expect_ok
#define expect_error vm_test_expect_error
#define AWAIT_SIGNATURE VM_TEST_AWAIT_SIGNATURE

static weft_status_t call_wait(weft_vm_context_t* context,
                               weft_semaphore_t* semaphore, int64_t value,
                               int64_t timeout_ns, int32_t* out_code) {
  weft_vm_value_t args[3] = {
      {.type = WEFT_VM_TYPE_REF, .ref = {semaphore, &kVmTestSemaphoreType}},
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
  weft_vm_module_t* m = vm_test_make_m(AWAIT_SIGNATURE, "add");
  weft_vm_context_t* context = vm_test_make_context(m);
  assert_int_equal(g_vm_test_state_count, 1);
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
  assert_int_equal(g_vm_test_state_count, 0);
}

static int g_nop_calls = 0;
static weft_status_t nop(weft_vm_native_call_t* call) {
  ++g_nop_calls;
  return WEFT_OK;
}

// A native function of no arguments and no results, invoked first thing:
// its frame holds no values, and the stack has none allocated yet.
static void calls_a_native_without_values(void** state) {
  static const weft_vm_native_function_t kFunctions[] = {
      {"nop", "() -> ()", nop}};
  const weft_vm_native_module_def_t def = {
      .name = "n", .function_count = 1, .functions = kFunctions};
  weft_vm_module_t* module = NULL;
  weft_vm_context_t* context = NULL;
  expect_ok(weft_vm_module_create_native(weft_allocator_system(), &def,
                                         &module));
  expect_ok(weft_vm_context_create(&module, 1, weft_allocator_system(),
                                   &context));
  g_nop_calls = 0;
  expect_ok(weft_vm_invoke_sync(context, "n.nop", NULL, 0, NULL, 0, 0,
                                weft_allocator_system()));
  assert_int_equal(g_nop_calls, 1);
  weft_vm_context_release(context);
  weft_vm_module_release(module);
}

static void link_errors_name_both_sides(void** state) {
  weft_vm_module_t* t = NULL;
  expect_ok(weft_vm_module_create_native(weft_allocator_system(), &kVmTestTModule,
                                         &t));
  weft_vm_context_t* context = NULL;
  // The import's signature differs from the native one: both are named.
  weft_vm_module_t* m = vm_test_make_m("(r<semaphore>,i64,i32)->(i32)", "add");
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
  m = vm_test_make_m(AWAIT_SIGNATURE, "addd");
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
  assert_int_equal(g_vm_test_state_count, 0);
}

static void native_arguments_checked(void** state) {
  weft_vm_module_t* m = vm_test_make_m(AWAIT_SIGNATURE, "add");
  weft_vm_context_t* context = vm_test_make_context(m);
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
                           .ref = {semaphore, &kVmTestSemaphoreType}};
  expect_error(weft_vm_invoke_sync(context, "t.list_size", &wrong, 1, &result,
                                   1, 0, weft_allocator_system()),
               WEFT_STATUS_INVALID_ARGUMENT, "is a 'semaphore', not a 'list'");
  weft_semaphore_release(semaphore);
  weft_vm_context_release(context);
  weft_vm_module_release(m);
}

// A bytecode function's signature is checked where values cross it: the
// host's arguments at the call, every `ret`'s results (from the host or
// from another bytecode function).
static void bytecode_refs_checked(void** state) {
  static const char kText[] =
      "module typed\n"
      "func @pass (r<semaphore>) -> (r<semaphore>) export\n"
      "  ret (r0)\n"
      "end\n"
      "func @wrong (r<list>) -> (r<semaphore>) export\n"
      "  ret (r0)\n"
      "end\n"
      "func @maybe (r<semaphore>?) -> (r<semaphore>?) export\n"
      "  ret (r0)\n"
      "end\n"
      "func @outer (r<list>) -> (r<semaphore>) export\n"
      "  call @wrong(r0) -> (r1)\n"
      "  ret (r1)\n"
      "end\n";
  weft_vm_module_t* typed = NULL;
  expect_ok(weft_vm_module_load_bytes("typed.wvm", kText, sizeof(kText) - 1,
                                      weft_allocator_system(), &typed));
  weft_vm_context_t* context = vm_test_make_context(typed);
  weft_semaphore_t* semaphore = NULL;
  expect_ok(weft_semaphore_create(weft_allocator_system(), 0, &semaphore));
  weft_vm_list_t* list = NULL;
  expect_ok(weft_vm_list_create(weft_allocator_system(), 0, &list));
  const weft_vm_value_t sem_arg = vm_test_semaphore_value(semaphore);
  const weft_vm_value_t list_arg = {.type = WEFT_VM_TYPE_REF,
                                    .ref = weft_vm_list_as_ref(list)};
  const weft_vm_value_t null_arg = {.type = WEFT_VM_TYPE_REF};
  weft_vm_value_t result = {0};

  expect_ok(weft_vm_invoke_sync(context, "typed.pass", &sem_arg, 1, &result, 1,
                                0, weft_allocator_system()));
  assert_ptr_equal(result.ref.object, semaphore);
  weft_vm_ref_release(result.ref);
  // The host's arguments.
  expect_error(weft_vm_invoke_sync(context, "typed.pass", &list_arg, 1,
                                   &result, 1, 0, weft_allocator_system()),
               WEFT_STATUS_INVALID_ARGUMENT,
               "typed.pass: argument 0 is a 'list', not a 'semaphore'");
  expect_error(weft_vm_invoke_sync(context, "typed.pass", &null_arg, 1,
                                   &result, 1, 0, weft_allocator_system()),
               WEFT_STATUS_INVALID_ARGUMENT,
               "typed.pass: argument 0 is null but the signature");
  // `ret` of a value of another type, to the host and to a caller.
  expect_error(weft_vm_invoke_sync(context, "typed.wrong", &list_arg, 1,
                                   &result, 1, 0, weft_allocator_system()),
               WEFT_STATUS_INVALID_ARGUMENT,
               "typed.wrong: result 0 is a 'list', not a 'semaphore'; in ret "
               "at typed.wrong");
  expect_error(weft_vm_invoke_sync(context, "typed.outer", &list_arg, 1,
                                   &result, 1, 0, weft_allocator_system()),
               WEFT_STATUS_INVALID_ARGUMENT,
               "typed.wrong: result 0 is a 'list', not a 'semaphore'");
  assert_null(result.ref.object);
  // '?' lets null through both ways.
  expect_ok(weft_vm_invoke_sync(context, "typed.maybe", &null_arg, 1, &result,
                                1, 0, weft_allocator_system()));
  assert_null(result.ref.object);

  weft_vm_list_release(list);
  weft_semaphore_release(semaphore);
  weft_vm_context_release(context);
  weft_vm_module_release(typed);
}

// `export` decides what is called from outside a module: the host's
// calls by name, and other modules' imports (a link error).
static void only_exported_functions_are_called_from_outside(void** state) {
  static const char kText[] =
      "module lib\n"
      "func @inner (i32) -> (i32)\n"
      "  ret (s0)\n"
      "end\n"
      "func @outer (i32) -> (i32) export\n"
      "  call @inner(s0) -> (s1)\n"
      "  ret (s1)\n"
      "end\n";
  static const char kUser[] =
      "module user\n"
      "import lib.inner (i32) -> (i32)\n"
      "func @run (i32) -> (i32) export\n"
      "  call.import lib.inner(s0) -> (s1)\n"
      "  ret (s1)\n"
      "end\n";
  weft_vm_module_t* lib = NULL;
  expect_ok(weft_vm_module_load_bytes("lib.wvm", kText, sizeof(kText) - 1,
                                      weft_allocator_system(), &lib));
  weft_vm_context_t* context = vm_test_make_context(lib);
  weft_vm_value_t arg = {.type = WEFT_VM_TYPE_I32, .i32 = 7};
  weft_vm_value_t result = {0};
  expect_ok(weft_vm_invoke_sync(context, "lib.outer", &arg, 1, &result, 1, 0,
                                weft_allocator_system()));
  assert_int_equal(result.i32, 7);
  expect_error(weft_vm_invoke_sync(context, "lib.inner", &arg, 1, &result, 1,
                                   0, weft_allocator_system()),
               WEFT_STATUS_NOT_FOUND,
               "module 'lib' does not export 'inner' (only functions marked "
               "`export` are called from outside it; it exports outer)");
  weft_vm_module_t* found = NULL;
  uint32_t index = 7;
  expect_error(weft_vm_context_lookup(context, "lib.inner", &found, &index),
               WEFT_STATUS_NOT_FOUND, "does not export 'inner'");
  assert_null(found);
  assert_int_equal(index, 0);
  weft_vm_context_release(context);

  weft_vm_module_t* user = NULL;
  expect_ok(weft_vm_module_load_bytes("user.wvm", kUser, sizeof(kUser) - 1,
                                      weft_allocator_system(), &user));
  weft_vm_module_t* modules[2] = {lib, user};
  context = NULL;
  expect_error(weft_vm_context_create(modules, 2, weft_allocator_system(),
                                      &context),
               WEFT_STATUS_NOT_FOUND,
               "does not export 'inner' (only functions marked `export` are "
               "called from outside it; it exports outer); for the import "
               "lib.inner of module 'user'");
  assert_null(context);
  weft_vm_module_release(user);
  weft_vm_module_release(lib);
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
  weft_vm_module_t* m = vm_test_make_m(AWAIT_SIGNATURE, "add");
  weft_vm_context_t* context = vm_test_make_context(m);
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
      cmocka_unit_test(calls_a_native_without_values),
      cmocka_unit_test(link_errors_name_both_sides),
      cmocka_unit_test(native_arguments_checked),
      cmocka_unit_test(bytecode_refs_checked),
      cmocka_unit_test(only_exported_functions_are_called_from_outside),
      cmocka_unit_test(waits_block_in_place),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
