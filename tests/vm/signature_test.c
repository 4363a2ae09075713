// Tests for src/vm/signature: parsing signature strings and their
// canonical form.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
// clang-format off
#include <cmocka.h>
// clang-format on

#include <string.h>

#include "vm/bytecode.h"
#include "vm/signature.h"

static void parse(const char* text, weft_vm_parsed_signature_t* out) {
  weft_status_t status = weft_vm_signature_parse(text, strlen(text), out);
  if (!weft_status_is_ok(status)) {
    char message[512];
    weft_status_format(status, message, sizeof(message));
    weft_status_free(status);
    fail_msg("'%s' did not parse: %s", text, message);
  }
}

static void expect_error(const char* text, const char* needle) {
  weft_vm_parsed_signature_t parsed;
  weft_status_t status = weft_vm_signature_parse(text, strlen(text), &parsed);
  char message[512];
  weft_status_format(status, message, sizeof(message));
  weft_status_code_t code = weft_status_code(status);
  weft_status_free(status);
  if (code != WEFT_STATUS_INVALID_ARGUMENT || !strstr(message, needle)) {
    fail_msg("'%s': expected INVALID_ARGUMENT with '%s', got: %s", text,
             needle, message);
  }
}

static void scalars_and_refs(void** state) {
  weft_vm_parsed_signature_t parsed;
  parse("(i32, r<hal.buffer_view>, f64) -> (r<list>?, i64)", &parsed);
  assert_int_equal(parsed.arg_count, 3);
  assert_int_equal(parsed.ret_count, 2);
  assert_int_equal(parsed.types[0], WEFT_VM_TYPE_I32);
  assert_int_equal(parsed.types[1], WEFT_VM_TYPE_REF);
  assert_int_equal(parsed.types[2], WEFT_VM_TYPE_F64);
  assert_int_equal(parsed.types[3], WEFT_VM_TYPE_REF);
  assert_int_equal(parsed.types[4], WEFT_VM_TYPE_I64);
  assert_int_equal(parsed.nullable[1], 0);
  assert_int_equal(parsed.nullable[3], 1);
  assert_string_equal(parsed.canonical,
                      "(i32,r<hal.buffer_view>,f64)->(r<list>?,i64)");
  assert_memory_equal(parsed.canonical + parsed.ref_name_offset[1],
                      "hal.buffer_view", parsed.ref_name_length[1]);
  assert_int_equal(parsed.ref_name_length[1], strlen("hal.buffer_view"));
  assert_memory_equal(parsed.canonical + parsed.ref_name_offset[3], "list",
                      4);
}

static void empty_lists_and_plain_refs(void** state) {
  weft_vm_parsed_signature_t parsed;
  parse("()->()", &parsed);
  assert_int_equal(parsed.arg_count, 0);
  assert_int_equal(parsed.ret_count, 0);
  assert_string_equal(parsed.canonical, "()->()");
  parse("  ( r ,r? )  ->  ( ) ", &parsed);
  assert_int_equal(parsed.arg_count, 2);
  assert_int_equal(parsed.ref_name_length[0], 0);
  assert_int_equal(parsed.nullable[1], 1);
  assert_string_equal(parsed.canonical, "(r,r?)->()");
}

static void errors_say_where_and_what(void** state) {
  expect_error("", "column 1: expected '('");
  expect_error("(i32", "column 5: expected ',' or ')'");
  expect_error("(i33) -> ()", "expected a type");
  expect_error("(i32) (i64)", "expected '->'");
  expect_error("(r<>) -> ()", "expected a ref type name");
  expect_error("(r<list) -> ()", "expected '>' after the type name");
  expect_error("(i32) -> (i64) x", "expected the end of the signature");
  expect_error("(ref) -> ()", "expected a type");
  // 65 arguments are one too many.
  char text[512] = "(";
  for (int i = 0; i < 65; ++i) strcat(text, i ? ",i32" : "i32");
  strcat(text, ")->()");
  expect_error(text, "at most 64 values");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(scalars_and_refs),
      cmocka_unit_test(empty_lists_and_plain_refs),
      cmocka_unit_test(errors_say_where_and_what),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
