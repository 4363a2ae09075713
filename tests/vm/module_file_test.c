// Tests for src/vm/module_file: a module loads from text or binary bytes
// (told apart by the binary magic) and from a file, and runs.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
// clang-format off
#include <cmocka.h>
// clang-format on

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vm/binary.h"
#include "vm/module_impl.h"
#include "vm_test_modules.h"
#include "weft/vm/invocation.h"

#define expect_ok vm_test_expect_ok
#define expect_error vm_test_expect_error

static const char kText[] =
    "module calc\n"
    "func @triple (i32)->(i32) export\n"
    "  const.i32 s1, 3\n"
    "  mul.i32 s2, s0, s1\n"
    "  ret (s2)\n"
    "end\n";

static int32_t call_triple(weft_vm_module_t* module, int32_t x) {
  weft_vm_context_t* context = NULL;
  expect_ok(weft_vm_context_create(&module, 1, weft_allocator_system(),
                                   &context));
  weft_vm_value_t arg = {.type = WEFT_VM_TYPE_I32, .i32 = x};
  weft_vm_value_t result = {0};
  expect_ok(weft_vm_invoke_sync(context, "calc.triple", &arg, 1, &result, 1,
                                0, weft_allocator_system()));
  weft_vm_context_release(context);
  return result.i32;
}

static void text_and_binary_bytes(void** state) {
  weft_allocator_t allocator = weft_allocator_system();
  weft_vm_module_t* module = NULL;
  expect_ok(weft_vm_module_load_bytes("calc.wvm", (const uint8_t*)kText,
                                      sizeof(kText) - 1, allocator, &module));
  assert_int_equal(call_triple(module, 14), 42);
  // The same module written as binary loads through the magic.
  uint8_t* binary = NULL;
  size_t binary_length = 0;
  expect_ok(weft_vm_binary_write(module->bytecode, allocator, &binary,
                                 &binary_length));
  weft_vm_module_release(module);
  expect_ok(weft_vm_module_load_bytes("calc.wvmb", binary, binary_length,
                                      allocator, &module));
  assert_int_equal(call_triple(module, -2), -6);
  weft_vm_module_release(module);
  // A truncated binary names the file.
  expect_error(weft_vm_module_load_bytes("calc.wvmb", binary, 30, allocator,
                                         &module),
               WEFT_STATUS_INVALID_ARGUMENT, "'calc.wvmb'");
  assert_null(module);
  weft_allocator_free(allocator, binary);
  // Text errors carry the file, line and column.
  expect_error(weft_vm_module_load_bytes("bad.wvm",
                                         (const uint8_t*)"module m\nfunc",
                                         13, allocator, &module),
               WEFT_STATUS_INVALID_ARGUMENT, "bad.wvm:2:");
}

static void files(void** state) {
  char path[] = "/tmp/weft_module_file_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, kText, sizeof(kText) - 1),
                   (ssize_t)(sizeof(kText) - 1));
  close(fd);
  weft_vm_module_t* module = NULL;
  expect_ok(weft_vm_module_load_file(path, weft_allocator_system(), &module));
  assert_int_equal(call_triple(module, 5), 15);
  weft_vm_module_release(module);
  unlink(path);
  expect_error(weft_vm_module_load_file("/nonexistent/x.wvm",
                                        weft_allocator_system(), &module),
               WEFT_STATUS_NOT_FOUND, "cannot open the module '/nonexistent/x.wvm'");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(text_and_binary_bytes),
      cmocka_unit_test(files),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
