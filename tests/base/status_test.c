// Tests for weft status values.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "weft/status.h"

static void test_ok_is_null(void** state) {
  (void)state;
  assert_null(WEFT_OK);
  assert_true(weft_status_is_ok(WEFT_OK));
  assert_int_equal(weft_status_code(WEFT_OK), WEFT_STATUS_OK);
  assert_string_equal(weft_status_message(WEFT_OK), "");
  weft_status_free(WEFT_OK);
}

static void test_code_strings(void** state) {
  (void)state;
  assert_string_equal(weft_status_code_string(WEFT_STATUS_OK), "OK");
  assert_string_equal(weft_status_code_string(WEFT_STATUS_OUT_OF_RANGE),
                      "OUT_OF_RANGE");
  assert_string_equal(weft_status_code_string(WEFT_STATUS_DEFERRED),
                      "DEFERRED");
  for (int code = 0; code < WEFT_STATUS_CODE_COUNT_; ++code) {
    const char* name = weft_status_code_string((weft_status_code_t)code);
    assert_non_null(name);
    assert_true(strlen(name) > 0);
    assert_string_not_equal(name, "UNRECOGNIZED_CODE");
  }
  assert_string_equal(weft_status_code_string(WEFT_STATUS_CODE_COUNT_),
                      "UNRECOGNIZED_CODE");
}

static void test_bare_codes_allocate_nothing(void** state) {
  (void)state;
  for (int code = 1; code < WEFT_STATUS_CODE_COUNT_; ++code) {
    weft_status_t status = weft_status_from_code((weft_status_code_t)code);
    // The status is the code itself: no record behind it.
    assert_int_equal((uintptr_t)status, (uintptr_t)code);
    assert_false(weft_status_is_ok(status));
    assert_true(weft_status_is(status, (weft_status_code_t)code));
    assert_string_equal(weft_status_message(status), "");
    weft_status_t clone = weft_status_clone(status);
    assert_ptr_equal(clone, status);
    assert_int_equal(weft_status_consume_code(status), code);
  }
}

static void test_message_and_code(void** state) {
  (void)state;
  weft_status_t status =
      WEFT_STATUS(OUT_OF_RANGE, "range [%d, %d) past end (%d bytes)", 256, 512,
                  128);
  assert_true(weft_status_is(status, WEFT_STATUS_OUT_OF_RANGE));
  assert_string_equal(weft_status_message(status),
                      "range [256, 512) past end (128 bytes)");
  assert_int_equal(weft_status_consume_code(status), WEFT_STATUS_OUT_OF_RANGE);
}

static void test_make_ok_is_ok(void** state) {
  (void)state;
  weft_status_t status =
      weft_status_make_(__FILE__, __LINE__, WEFT_STATUS_OK, "nothing");
  assert_null(status);
}

static void test_format(void** state) {
  (void)state;
  int line = __LINE__ + 1;
  weft_status_t status = WEFT_STATUS(OUT_OF_RANGE, "message");
  status = weft_status_annotate(status, "annotation%d", 1);
  status = weft_status_annotate(status, "annotation%d", 2);
  char expected[256];
  snprintf(expected, sizeof(expected),
           "OUT_OF_RANGE: message; annotation1; annotation2 "
           "[status_test.c:%d]",
           line);
  char buffer[256];
  size_t length = weft_status_format(status, buffer, sizeof(buffer));
  assert_string_equal(buffer, expected);
  assert_int_equal(length, strlen(expected));
  // The message alone is untouched by annotations.
  assert_string_equal(weft_status_message(status), "message");

  // Truncation keeps the terminator and reports the full length.
  char small[8];
  assert_int_equal(weft_status_format(status, small, sizeof(small)),
                   strlen(expected));
  assert_string_equal(small, "OUT_OF_");
  assert_int_equal(weft_status_format(status, NULL, 0), strlen(expected));
  weft_status_free(status);

  weft_status_t bare = weft_status_from_code(WEFT_STATUS_CANCELLED);
  assert_int_equal(weft_status_format(bare, buffer, sizeof(buffer)),
                   strlen("CANCELLED"));
  assert_string_equal(buffer, "CANCELLED");
  assert_int_equal(weft_status_format(WEFT_OK, buffer, sizeof(buffer)), 2);
  assert_string_equal(buffer, "OK");
}

static void test_annotate(void** state) {
  (void)state;
  // OK stays OK.
  assert_null(weft_status_annotate(WEFT_OK, "ignored %d", 1));

  // A bare code gains a record with the annotation and keeps its code.
  weft_status_t status = weft_status_annotate(
      weft_status_from_code(WEFT_STATUS_ABORTED), "while %s", "waiting");
  assert_true(weft_status_is(status, WEFT_STATUS_ABORTED));
  char buffer[128];
  weft_status_format(status, buffer, sizeof(buffer));
  assert_string_equal(buffer, "ABORTED; while waiting");
  weft_status_free(status);

  // Long annotations go through the heap path.
  char long_text[1000];
  memset(long_text, 'x', sizeof(long_text) - 1);
  long_text[sizeof(long_text) - 1] = '\0';
  status = WEFT_STATUS(INTERNAL, "m");
  status = weft_status_annotate(status, "%s", long_text);
  size_t length = weft_status_format(status, NULL, 0);
  assert_true(length > sizeof(long_text));
  char* formatted = test_malloc(length + 1);
  weft_status_format(status, formatted, length + 1);
  assert_non_null(strstr(formatted, long_text));
  test_free(formatted);
  weft_status_free(status);
}

static void test_clone_is_independent(void** state) {
  (void)state;
  weft_status_t original = WEFT_STATUS(DATA_LOSS, "lost %d bytes", 7);
  original = weft_status_annotate(original, "first");
  weft_status_t clone = weft_status_clone(original);
  assert_ptr_not_equal(clone, original);
  char a[128], b[128];
  weft_status_format(original, a, sizeof(a));
  weft_status_format(clone, b, sizeof(b));
  assert_string_equal(a, b);
  // Annotating one leaves the other alone; freeing one leaves the other
  // usable.
  clone = weft_status_annotate(clone, "second");
  weft_status_format(original, a, sizeof(a));
  assert_null(strstr(a, "second"));
  weft_status_free(original);
  weft_status_format(clone, b, sizeof(b));
  assert_non_null(strstr(b, "first; second"));
  assert_true(weft_status_is(clone, WEFT_STATUS_DATA_LOSS));
  weft_status_free(clone);
  assert_null(weft_status_clone(WEFT_OK));
}

static void test_join(void** state) {
  (void)state;
  assert_null(weft_status_join(WEFT_OK, WEFT_OK));

  weft_status_t b = WEFT_STATUS(NOT_FOUND, "b");
  weft_status_t joined = weft_status_join(WEFT_OK, b);
  assert_ptr_equal(joined, b);
  weft_status_free(joined);

  weft_status_t a = WEFT_STATUS(UNAVAILABLE, "a");
  joined = weft_status_join(a, WEFT_OK);
  assert_ptr_equal(joined, a);
  weft_status_free(joined);

  a = WEFT_STATUS(UNAVAILABLE, "first failure");
  b = WEFT_STATUS(NOT_FOUND, "second failure");
  joined = weft_status_join(a, b);
  assert_true(weft_status_is(joined, WEFT_STATUS_UNAVAILABLE));
  assert_string_equal(weft_status_message(joined), "first failure");
  char buffer[256];
  weft_status_format(joined, buffer, sizeof(buffer));
  assert_non_null(strstr(buffer, "UNAVAILABLE: first failure; "));
  assert_non_null(strstr(buffer, "NOT_FOUND: second failure"));
  weft_status_free(joined);

  // Bare codes join too.
  joined = weft_status_join(weft_status_from_code(WEFT_STATUS_CANCELLED),
                            weft_status_from_code(WEFT_STATUS_ABORTED));
  weft_status_format(joined, buffer, sizeof(buffer));
  assert_string_equal(buffer, "CANCELLED; ABORTED");
  weft_status_free(joined);
}

static weft_status_t return_if_error_helper(weft_status_t inner,
                                            int* reached_end) {
  WEFT_RETURN_IF_ERROR(inner);
  *reached_end = 1;
  return WEFT_OK;
}

static void test_return_if_error(void** state) {
  (void)state;
  int reached_end = 0;
  assert_null(return_if_error_helper(WEFT_OK, &reached_end));
  assert_int_equal(reached_end, 1);
  reached_end = 0;
  weft_status_t status = return_if_error_helper(
      WEFT_STATUS(INVALID_ARGUMENT, "bad"), &reached_end);
  assert_int_equal(reached_end, 0);
  assert_int_equal(weft_status_consume_code(status),
                   WEFT_STATUS_INVALID_ARGUMENT);
}

static void test_fprint(void** state) {
  (void)state;
  FILE* stream = tmpfile();
  assert_non_null(stream);
  weft_status_t status = WEFT_STATUS(UNIMPLEMENTED, "not %s", "yet");
  weft_status_fprint(stream, status);
  weft_status_free(status);
  rewind(stream);
  char line[256] = {0};
  assert_non_null(fgets(line, sizeof(line), stream));
  assert_non_null(strstr(line, "UNIMPLEMENTED: not yet [status_test.c:"));
  assert_int_equal(line[strlen(line) - 1], '\n');
  fclose(stream);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ok_is_null),
      cmocka_unit_test(test_code_strings),
      cmocka_unit_test(test_bare_codes_allocate_nothing),
      cmocka_unit_test(test_message_and_code),
      cmocka_unit_test(test_make_ok_is_ok),
      cmocka_unit_test(test_format),
      cmocka_unit_test(test_annotate),
      cmocka_unit_test(test_clone_is_independent),
      cmocka_unit_test(test_join),
      cmocka_unit_test(test_return_if_error),
      cmocka_unit_test(test_fprint),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
