// Tests for weft/vm/tensor_type.h: a function's declared names and tensor
// types read through the public API, from a module loaded as text and as
// binary; functions without declarations, native functions and indices
// past the counts read as empty; element type names.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
// clang-format off
#include <cmocka.h>
// clang-format on

#include <stdlib.h>
#include <string.h>

#include "vm/binary.h"
#include "vm/module_impl.h"
#include "vm_test_modules.h"
#include "weft/vm/tensor_type.h"

#define expect_ok vm_test_expect_ok

static const char kText[] =
    "module mlp\n"
    "func @forward(r<hal.buffer_view>, r<hal.buffer_view>, i32, r) -> "
    "(r<hal.buffer_view>, r) export\n"
    "  arg x: K f32\n"
    "  arg w: Kx16 f32\n"
    "  arg relu\n"
    "  arg scale: f64\n"
    "  result y: 16 f32\n"
    "  result extra: ?xBATCHxK i8\n"
    "  ret (r0, r1)\n"
    "end\n"
    "func @plain(i32) -> (i32)\n"
    "  ret (s0)\n"
    "end\n";

// Reads value |index| of |role| of function 0, which must be declared.
static weft_vm_value_decl_t read_decl(const weft_vm_module_t* module,
                                      weft_vm_value_role_t role,
                                      uint32_t index) {
  weft_vm_value_decl_t decl;
  assert_true(
      weft_vm_module_function_value_decl(module, 0, role, index, &decl));
  return decl;
}

// Checks what kText declares, in |module|.
static void expect_forward(const weft_vm_module_t* module) {
  assert_int_equal(weft_vm_module_function_symbol_count(module, 0), 2);
  weft_vm_value_decl_t x = read_decl(module, WEFT_VM_VALUE_ARGUMENT, 0);
  assert_string_equal(x.name, "x");
  assert_int_equal(x.type.element_type, WEFT_VM_ELEMENT_TYPE_F32);
  assert_int_equal(x.type.rank, 1);
  assert_int_equal(x.type.dims[0].kind, WEFT_VM_DIM_SYMBOL);
  assert_int_equal(x.type.dims[0].symbol, 0);
  assert_string_equal(x.type.dims[0].symbol_name, "K");
  weft_vm_value_decl_t w = read_decl(module, WEFT_VM_VALUE_ARGUMENT, 1);
  assert_int_equal(w.type.rank, 2);
  assert_string_equal(w.type.dims[0].symbol_name, "K");
  assert_int_equal(w.type.dims[1].kind, WEFT_VM_DIM_STATIC);
  assert_int_equal(w.type.dims[1].size, 16);
  assert_null(w.type.dims[1].symbol_name);
  weft_vm_value_decl_t relu = read_decl(module, WEFT_VM_VALUE_ARGUMENT, 2);
  assert_string_equal(relu.name, "relu");
  assert_int_equal(relu.type.element_type, WEFT_VM_ELEMENT_TYPE_NONE);
  assert_int_equal(relu.type.rank, 0);
  weft_vm_value_decl_t scale = read_decl(module, WEFT_VM_VALUE_ARGUMENT, 3);
  assert_int_equal(scale.type.element_type, WEFT_VM_ELEMENT_TYPE_F64);
  assert_int_equal(scale.type.rank, 0);
  weft_vm_value_decl_t y = read_decl(module, WEFT_VM_VALUE_RESULT, 0);
  assert_string_equal(y.name, "y");
  assert_int_equal(y.type.dims[0].size, 16);
  weft_vm_value_decl_t extra = read_decl(module, WEFT_VM_VALUE_RESULT, 1);
  assert_int_equal(extra.type.element_type, WEFT_VM_ELEMENT_TYPE_I8);
  assert_int_equal(extra.type.rank, 3);
  assert_int_equal(extra.type.dims[0].kind, WEFT_VM_DIM_DYNAMIC);
  assert_int_equal(extra.type.dims[1].symbol, 1);
  assert_string_equal(extra.type.dims[1].symbol_name, "BATCH");
  assert_int_equal(extra.type.dims[2].symbol, 0);
  // Past the counts, an unknown role: empty.
  weft_vm_value_decl_t none;
  assert_false(weft_vm_module_function_value_decl(
      module, 0, WEFT_VM_VALUE_ARGUMENT, 4, &none));
  assert_string_equal(none.name, "");
  assert_int_equal(none.type.element_type, WEFT_VM_ELEMENT_TYPE_NONE);
  assert_false(weft_vm_module_function_value_decl(
      module, 0, WEFT_VM_VALUE_RESULT, 2, &none));
  assert_false(weft_vm_module_function_value_decl(
      module, 0, (weft_vm_value_role_t)7, 0, &none));
  // A function without declarations, and one past the count.
  assert_false(weft_vm_module_function_value_decl(
      module, 1, WEFT_VM_VALUE_ARGUMENT, 0, &none));
  assert_string_equal(none.name, "");
  assert_int_equal(weft_vm_module_function_symbol_count(module, 1), 0);
  assert_false(weft_vm_module_function_value_decl(
      module, 2, WEFT_VM_VALUE_ARGUMENT, 0, &none));
  assert_int_equal(weft_vm_module_function_symbol_count(module, 2), 0);
}

static void text_and_binary(void** state) {
  weft_allocator_t allocator = weft_allocator_system();
  weft_vm_module_t* module = NULL;
  expect_ok(weft_vm_module_load_bytes("mlp.wvm", kText, sizeof(kText) - 1,
                                      allocator, &module));
  expect_forward(module);
  uint8_t* binary = NULL;
  size_t length = 0;
  expect_ok(weft_vm_binary_write(module->bytecode, allocator, &binary,
                                 &length));
  weft_vm_module_release(module);
  expect_ok(weft_vm_module_load_bytes("mlp.wvmb", binary, length, allocator,
                                      &module));
  expect_forward(module);
  weft_vm_module_release(module);
  weft_allocator_free(allocator, binary);
}

static weft_status_t native_noop(weft_vm_native_call_t* call) {
  return WEFT_OK;
}

// Native functions declare nothing; NULL reads as empty.
static void native_and_null(void** state) {
  static const weft_vm_native_function_t kFunctions[] = {
      {"noop", "(r)->()", native_noop}};
  static const weft_vm_native_module_def_t kDef = {
      .name = "n", .function_count = 1, .functions = kFunctions};
  weft_vm_module_t* module = NULL;
  expect_ok(
      weft_vm_module_create_native(weft_allocator_system(), &kDef, &module));
  weft_vm_value_decl_t decl;
  assert_false(weft_vm_module_function_value_decl(
      module, 0, WEFT_VM_VALUE_ARGUMENT, 0, &decl));
  assert_string_equal(decl.name, "");
  assert_int_equal(weft_vm_module_function_symbol_count(module, 0), 0);
  weft_vm_module_release(module);
  assert_false(weft_vm_module_function_value_decl(
      NULL, 0, WEFT_VM_VALUE_ARGUMENT, 0, &decl));
  assert_string_equal(decl.name, "");
  assert_false(weft_vm_module_function_value_decl(
      NULL, 0, WEFT_VM_VALUE_ARGUMENT, 0, NULL));
  assert_int_equal(weft_vm_module_function_symbol_count(NULL, 0), 0);
}

static void element_type_names(void** state) {
  static const char* const kNames[] = {"f16", "f32", "f64", "i8",
                                       "i16", "i32", "i64", "u8",
                                       "u16", "u32", "u64"};
  for (int i = 1; i < WEFT_VM_ELEMENT_TYPE_COUNT_; ++i) {
    assert_string_equal(
        weft_vm_element_type_name((weft_vm_element_type_t)i), kNames[i - 1]);
  }
  assert_string_equal(weft_vm_element_type_name(WEFT_VM_ELEMENT_TYPE_NONE),
                      "none");
  assert_string_equal(
      weft_vm_element_type_name((weft_vm_element_type_t)99), "none");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(text_and_binary),
      cmocka_unit_test(native_and_null),
      cmocka_unit_test(element_type_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
