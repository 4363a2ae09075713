// Tests for the hal module's check of buffer views against declared tensor
// types (weft_hal_check_arguments, weft_hal_check_results): matching
// values pass and bind symbols, shared across arguments and results; each
// kind of mismatch gives its message and hints (element type, rank, static
// size, a symbol another value bound, transposed, a scalar, null or
// another ref where a tensor goes, counts); dynamic dimensions and rank 0;
// undeclared and native functions; NULL arguments.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
// clang-format off
#include <cmocka.h>
// clang-format on

#include <string.h>

#include "vm_test_modules.h"
#include "weft/device.h"
#include "weft/vm/hal.h"
#include "weft/vm/tensor_type.h"

#define expect_ok vm_test_expect_ok

static const char kProgram[] =
    "module t\n"
    "func @forward(r<hal.buffer_view>, r<hal.buffer_view>, "
    "r<hal.buffer_view>, i32) -> (r<hal.buffer_view>, r<hal.buffer_view>)\n"
    "  arg x: K f32\n"
    "  arg w1: KxN f32\n"
    "  arg b1: N f32\n"
    "  arg relu\n"
    "  result y: N f32\n"
    "  result z: M f32\n"
    "  ret (r0, r1)\n"
    "end\n"
    "func @shapes(r<hal.buffer_view>, r, r<hal.buffer_view>?) -> ()\n"
    "  arg d: ?x4 i8\n"
    "  arg s: f64\n"
    "  arg q: NxN u16\n"
    "  ret ()\n"
    "end\n"
    "func @plain(r<hal.buffer_view>) -> (r<hal.buffer_view>)\n"
    "  ret (r0)\n"
    "end\n";

enum { kForward = 0, kShapes = 1, kPlain = 2 };

// What every case uses: the program, a device and one buffer that every
// view views (views are only shapes here: nothing reads them).
typedef struct fixture_t {
  weft_vm_module_t* module;
  weft_device_t* device;
  weft_buffer_t* buffer;
  // Views made by view(), released at teardown.
  weft_hal_buffer_view_t* views[256];
  int view_count;
} fixture_t;

static int setup(void** state) {
  static fixture_t fixture;
  memset(&fixture, 0, sizeof(fixture));
  weft_allocator_t allocator = weft_allocator_system();
  expect_ok(weft_vm_module_load_bytes("t.wvm", kProgram, sizeof(kProgram) - 1,
                                      allocator, &fixture.module));
  expect_ok(weft_device_create("local-sync", allocator, &fixture.device));
  weft_buffer_params_t params = {0};
  expect_ok(weft_device_allocate_buffer(fixture.device, params, 4096,
                                        &fixture.buffer));
  *state = &fixture;
  return 0;
}

static int teardown(void** state) {
  fixture_t* fixture = (fixture_t*)*state;
  for (int i = 0; i < fixture->view_count; ++i) {
    weft_hal_buffer_view_release(fixture->views[i]);
  }
  weft_buffer_release(fixture->buffer);
  weft_device_release(fixture->device);
  weft_vm_module_release(fixture->module);
  return 0;
}

// A value holding a |rank|-dimensional view of |type| (kept until
// teardown).
static weft_vm_value_t view(fixture_t* fixture, weft_hal_element_type_t type,
                            uint32_t rank, int64_t d0, int64_t d1) {
  const int64_t shape[2] = {d0, d1};
  weft_hal_buffer_view_t* made = NULL;
  expect_ok(weft_hal_buffer_view_create(fixture->buffer, 0, type, rank, shape,
                                        weft_allocator_system(), &made));
  assert_true(fixture->view_count < 256);
  fixture->views[fixture->view_count++] = made;
  return weft_vm_value_ref(weft_hal_module_wrap_buffer_view(made));
}

#define F32 WEFT_HAL_ELEMENT_TYPE_F32

// Expects INVALID_ARGUMENT with exactly |message|.
static void expect_message(weft_status_t status, const char* message) {
  if (!weft_status_is(status, WEFT_STATUS_INVALID_ARGUMENT) ||
      strcmp(weft_status_message(status), message) != 0) {
    fail_msg("expected INVALID_ARGUMENT '%s', got %s",
             message,
             weft_status_is_ok(status) ? "OK" : weft_status_message(status));
  }
  weft_status_free(status);
}

// forward's arguments with x of |x|, w1 of |w1| and b1 of |b1|.
static weft_status_t check_forward(fixture_t* fixture, weft_vm_value_t x,
                                   weft_vm_value_t w1, weft_vm_value_t b1,
                                   weft_hal_tensor_check_t* check) {
  const weft_vm_value_t args[4] = {x, w1, b1, weft_vm_value_i32(1)};
  return weft_hal_check_arguments(fixture->module, kForward, args, 4, check);
}

// Matching values pass; symbols are bound by the first value using them,
// arguments' sizes carry over to the results, which bind their own.
static void matching_values_bind_symbols(void** state) {
  fixture_t* f = (fixture_t*)*state;
  weft_hal_tensor_check_t check;
  expect_ok(check_forward(f, view(f, F32, 1, 8, 0), view(f, F32, 2, 8, 16),
                          view(f, F32, 1, 16, 0), &check));
  assert_ptr_equal(check.module, f->module);
  assert_int_equal(check.function, kForward);
  assert_int_equal(check.symbol_count, 3);  // K, N, M
  assert_int_equal(check.symbol_sizes[0], 8);
  assert_int_equal(check.symbol_values[0], 0);  // from x
  assert_int_equal(check.symbol_sizes[1], 16);
  assert_int_equal(check.symbol_values[1], 1);  // from w1
  assert_false(check.symbol_from_result[1]);
  assert_int_equal(check.symbol_sizes[2], -1);  // M: results only
  const weft_vm_value_t results[2] = {view(f, F32, 1, 16, 0),
                                      view(f, F32, 1, 5, 0)};
  expect_ok(weft_hal_check_results(&check, results, 2));
  assert_int_equal(check.symbol_sizes[2], 5);
  assert_int_equal(check.symbol_values[2], 1);
  assert_true(check.symbol_from_result[2]);
}

static void element_type_mismatch(void** state) {
  fixture_t* f = (fixture_t*)*state;
  weft_hal_tensor_check_t check;
  expect_message(
      check_forward(f, view(f, WEFT_HAL_ELEMENT_TYPE_F64, 1, 8, 0),
                    view(f, F32, 2, 8, 16), view(f, F32, 1, 16, 0), &check),
      "forward: argument 1 'x' must be K f32, got 8 f64 (element type f64, "
      "not f32)");
  expect_message(
      check_forward(f, view(f, WEFT_HAL_ELEMENT_TYPE_I32, 1, 8, 0),
                    view(f, F32, 2, 8, 16), view(f, F32, 1, 16, 0), &check),
      "forward: argument 1 'x' must be K f32, got 8 i32 (element type i32, "
      "not f32)");
}

static void rank_mismatch(void** state) {
  fixture_t* f = (fixture_t*)*state;
  weft_hal_tensor_check_t check;
  expect_message(
      check_forward(f, view(f, F32, 2, 2, 4), view(f, F32, 2, 8, 16),
                    view(f, F32, 1, 16, 0), &check),
      "forward: argument 1 'x' must be K f32, got 2x4 f32 (rank 2, not 1)");
}

// A symbol another value bound: its size and who bound it.
static void symbol_mismatch(void** state) {
  fixture_t* f = (fixture_t*)*state;
  weft_hal_tensor_check_t check;
  expect_message(
      check_forward(f, view(f, F32, 1, 5, 0), view(f, F32, 2, 8, 16),
                    view(f, F32, 1, 16, 0), &check),
      "forward: argument 2 'w1' must be 5xN f32, got 8x16 f32 (K is 5 from "
      "argument 1 'x')");
  expect_message(
      check_forward(f, view(f, F32, 1, 8, 0), view(f, F32, 2, 8, 16),
                    view(f, F32, 1, 15, 0), &check),
      "forward: argument 3 'b1' must be 16 f32, got 15 f32 (N is 16 from "
      "argument 2 'w1')");
}

static void transposed(void** state) {
  fixture_t* f = (fixture_t*)*state;
  weft_hal_tensor_check_t check;
  expect_message(
      check_forward(f, view(f, F32, 1, 8, 0), view(f, F32, 2, 16, 8),
                    view(f, F32, 1, 16, 0), &check),
      "forward: argument 2 'w1' must be 8xN f32, got 16x8 f32 (transposed?; "
      "K is 8 from argument 1 'x')");
  // A static dimension: ?x4 given 4x3.
  const weft_vm_value_t args[3] = {
      view(f, WEFT_HAL_ELEMENT_TYPE_I8, 2, 4, 3),
      view(f, WEFT_HAL_ELEMENT_TYPE_F64, 0, 0, 0),
      view(f, WEFT_HAL_ELEMENT_TYPE_U16, 2, 2, 2)};
  expect_message(
      weft_hal_check_arguments(f->module, kShapes, args, 3, &check),
      "shapes: argument 1 'd' must be ?x4 i8, got 4x3 i8 (transposed?; "
      "dimension 1 is 3, not 4)");
}

// Scalars, null and other refs where a tensor goes.
static void not_a_buffer_view(void** state) {
  fixture_t* f = (fixture_t*)*state;
  weft_hal_tensor_check_t check;
  expect_message(check_forward(f, weft_vm_value_i32(7), view(f, F32, 2, 8, 16),
                               view(f, F32, 1, 16, 0), &check),
                 "forward: argument 1 'x' must be a buffer view of K f32, got "
                 "an i32 scalar");
  expect_message(
      check_forward(f, weft_vm_value_ref(weft_vm_ref_null()),
                    view(f, F32, 2, 8, 16), view(f, F32, 1, 16, 0), &check),
      "forward: argument 1 'x' must be a buffer view of K f32, got null");
  weft_vm_ref_t buffer = weft_vm_ref_null();
  expect_ok(weft_hal_module_wrap(f->buffer, &buffer));
  expect_message(
      check_forward(f, view(f, F32, 1, 8, 0), view(f, F32, 2, 8, 16),
                    weft_vm_value_ref(buffer), &check),
      "forward: argument 3 'b1' must be a buffer view of 16 f32, got a "
      "hal.buffer ref");
  // Null, even where the signature allows it (r<hal.buffer_view>?): a
  // declared tensor type asks for a buffer view.
  const weft_vm_value_t args[3] = {
      view(f, WEFT_HAL_ELEMENT_TYPE_I8, 2, 1, 4),
      view(f, WEFT_HAL_ELEMENT_TYPE_F64, 0, 0, 0),
      weft_vm_value_ref(weft_vm_ref_null())};
  expect_message(
      weft_hal_check_arguments(f->module, kShapes, args, 3, &check),
      "shapes: argument 3 'q' must be a buffer view of NxN u16, got null");
}

static void counts(void** state) {
  fixture_t* f = (fixture_t*)*state;
  weft_hal_tensor_check_t check;
  const weft_vm_value_t args[3] = {view(f, F32, 1, 8, 0),
                                   view(f, F32, 2, 8, 16),
                                   view(f, F32, 1, 16, 0)};
  expect_message(weft_hal_check_arguments(f->module, kForward, args, 3, &check),
                 "forward: 3 arguments given, it takes 4");
  expect_ok(check_forward(f, args[0], args[1], args[2], &check));
  expect_message(weft_hal_check_results(&check, args, 1),
                 "forward: 1 results given, it returns 2");
}

// Results: the arguments' bindings hold, then each result's own.
static void result_mismatch(void** state) {
  fixture_t* f = (fixture_t*)*state;
  weft_hal_tensor_check_t check;
  expect_ok(check_forward(f, view(f, F32, 1, 8, 0), view(f, F32, 2, 8, 16),
                          view(f, F32, 1, 16, 0), &check));
  const weft_vm_value_t wrong_y[2] = {view(f, F32, 1, 8, 0),
                                      view(f, F32, 1, 5, 0)};
  expect_message(weft_hal_check_results(&check, wrong_y, 2),
                 "forward: result 1 'y' must be 16 f32, got 8 f32 (N is 16 "
                 "from argument 2 'w1')");
  const weft_vm_value_t wrong_z[2] = {
      view(f, F32, 1, 16, 0), view(f, WEFT_HAL_ELEMENT_TYPE_F16, 1, 5, 0)};
  expect_message(weft_hal_check_results(&check, wrong_z, 2),
                 "forward: result 2 'z' must be M f32, got 5 f16 (element "
                 "type f16, not f32)");
  assert_int_equal(check.symbol_sizes[2], -1);  // a failed value binds none
}

// '?' takes any size; rank 0 is the element type alone; a symbol used
// twice in one value must agree with itself.
static void dynamic_rank0_and_repeated_symbols(void** state) {
  fixture_t* f = (fixture_t*)*state;
  weft_hal_tensor_check_t check;
  for (int64_t rows = 0; rows < 300; rows += 99) {
    const weft_vm_value_t args[3] = {
        view(f, WEFT_HAL_ELEMENT_TYPE_I8, 2, rows, 4),
        view(f, WEFT_HAL_ELEMENT_TYPE_F64, 0, 0, 0),
        view(f, WEFT_HAL_ELEMENT_TYPE_U16, 2, 3, 3)};
    expect_ok(weft_hal_check_arguments(f->module, kShapes, args, 3, &check));
    assert_int_equal(check.symbol_sizes[0], 3);
  }
  weft_vm_value_t args[3] = {view(f, WEFT_HAL_ELEMENT_TYPE_I8, 2, 2, 5),
                             view(f, WEFT_HAL_ELEMENT_TYPE_F64, 0, 0, 0),
                             view(f, WEFT_HAL_ELEMENT_TYPE_U16, 2, 3, 3)};
  expect_message(weft_hal_check_arguments(f->module, kShapes, args, 3, &check),
                 "shapes: argument 1 'd' must be ?x4 i8, got 2x5 i8 "
                 "(dimension 1 is 5, not 4)");
  args[0] = view(f, WEFT_HAL_ELEMENT_TYPE_I8, 2, 2, 4);
  args[1] = view(f, WEFT_HAL_ELEMENT_TYPE_F64, 1, 1, 0);
  expect_message(weft_hal_check_arguments(f->module, kShapes, args, 3, &check),
                 "shapes: argument 2 's' must be f64, got 1 f64 (rank 1, not "
                 "0)");
  args[1] = view(f, WEFT_HAL_ELEMENT_TYPE_F64, 0, 0, 0);
  args[2] = view(f, WEFT_HAL_ELEMENT_TYPE_U16, 2, 3, 4);
  expect_message(weft_hal_check_arguments(f->module, kShapes, args, 3, &check),
                 "shapes: argument 3 'q' must be NxN u16, got 3x4 u16 (N is 3 "
                 "from its dimension 0)");
}

// Nothing declared: any values of the right count pass (a native
// function's too).
static void undeclared_functions(void** state) {
  fixture_t* f = (fixture_t*)*state;
  weft_hal_tensor_check_t check;
  const weft_vm_value_t anything = weft_vm_value_i64(3);
  expect_ok(weft_hal_check_arguments(f->module, kPlain, &anything, 1, &check));
  expect_ok(weft_hal_check_results(&check, &anything, 1));
  assert_int_equal(check.symbol_count, 0);
  weft_vm_module_t* hal = NULL;
  expect_ok(weft_hal_module_create(NULL, weft_allocator_system(), &hal));
  uint32_t index = 0;
  expect_ok(weft_vm_module_lookup(hal, "buffer_view.rank", &index));
  expect_ok(weft_hal_check_arguments(hal, index, &anything, 1, &check));
  expect_message(weft_hal_check_arguments(hal, index, NULL, 0, &check),
                 "buffer_view.rank: 0 arguments given, it takes 1");
  weft_vm_module_release(hal);
}

static void bad_calls(void** state) {
  fixture_t* f = (fixture_t*)*state;
  weft_hal_tensor_check_t check;
  vm_test_expect_error(weft_hal_check_arguments(NULL, 0, NULL, 0, &check),
                       WEFT_STATUS_INVALID_ARGUMENT, "module is NULL");
  vm_test_expect_error(weft_hal_check_arguments(f->module, 0, NULL, 0, NULL),
                       WEFT_STATUS_INVALID_ARGUMENT, "out_check is NULL");
  vm_test_expect_error(
      weft_hal_check_arguments(f->module, kForward, NULL, 4, &check),
      WEFT_STATUS_INVALID_ARGUMENT, "args is NULL");
  vm_test_expect_error(weft_hal_check_arguments(f->module, 3, NULL, 0, &check),
                       WEFT_STATUS_INVALID_ARGUMENT,
                       "function 3 is past module 't''s 3 functions");
  assert_null(check.module);
  vm_test_expect_error(weft_hal_check_results(NULL, NULL, 0),
                       WEFT_STATUS_INVALID_ARGUMENT, "check is NULL");
  vm_test_expect_error(weft_hal_check_results(&check, NULL, 0),
                       WEFT_STATUS_INVALID_ARGUMENT,
                       "was not started by weft_hal_check_arguments");
}

// The VM's element type names are the hal module's.
static void element_type_names_match(void** state) {
  for (int i = 0; i < WEFT_HAL_ELEMENT_TYPE_COUNT_; ++i) {
    assert_string_equal(
        weft_vm_element_type_name((weft_vm_element_type_t)i),
        weft_hal_element_type_name((weft_hal_element_type_t)i));
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(matching_values_bind_symbols),
      cmocka_unit_test(element_type_mismatch),
      cmocka_unit_test(rank_mismatch),
      cmocka_unit_test(symbol_mismatch),
      cmocka_unit_test(transposed),
      cmocka_unit_test(not_a_buffer_view),
      cmocka_unit_test(counts),
      cmocka_unit_test(result_mismatch),
      cmocka_unit_test(dynamic_rank0_and_repeated_symbols),
      cmocka_unit_test(undeclared_functions),
      cmocka_unit_test(bad_calls),
      cmocka_unit_test(element_type_names_match),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
