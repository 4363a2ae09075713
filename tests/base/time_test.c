// Tests for monotonic time, timeouts and deadlines.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "weft/time.h"

#define MS (1000ll * 1000ll)

static void test_now_is_monotonic(void** state) {
  (void)state;
  weft_time_t previous = weft_time_now();
  assert_true(previous > 0);
  for (int i = 0; i < 1000; ++i) {
    weft_time_t now = weft_time_now();
    assert_true(now >= previous);
    previous = now;
  }
}

static void test_immediate_and_infinite(void** state) {
  (void)state;
  weft_timeout_t immediate = weft_timeout_immediate();
  assert_true(weft_timeout_is_immediate(immediate));
  assert_int_equal(weft_timeout_as_deadline(immediate),
                   WEFT_TIME_INFINITE_PAST);
  assert_int_equal(weft_deadline_remaining(WEFT_TIME_INFINITE_PAST), 0);

  weft_timeout_t infinite = weft_timeout_infinite();
  assert_false(weft_timeout_is_immediate(infinite));
  assert_int_equal(weft_timeout_as_deadline(infinite),
                   WEFT_TIME_INFINITE_FUTURE);
  assert_int_equal(weft_deadline_remaining(WEFT_TIME_INFINITE_FUTURE),
                   WEFT_DURATION_INFINITE);

  // Relative zero and negative durations are polls too.
  assert_true(weft_timeout_is_immediate(weft_timeout_relative(0)));
  assert_true(weft_timeout_is_immediate(weft_timeout_relative(-5)));
  assert_int_equal(weft_timeout_as_deadline(weft_timeout_relative(0)),
                   WEFT_TIME_INFINITE_PAST);
  assert_int_equal(
      weft_timeout_as_deadline(weft_timeout_relative(WEFT_DURATION_INFINITE)),
      WEFT_TIME_INFINITE_FUTURE);
}

static void test_relative_to_deadline(void** state) {
  (void)state;
  weft_time_t before = weft_time_now();
  weft_time_t deadline =
      weft_timeout_as_deadline(weft_timeout_relative(100 * MS));
  weft_time_t after = weft_time_now();
  assert_true(deadline >= before + 100 * MS);
  assert_true(deadline <= after + 100 * MS);
  weft_duration_t remaining = weft_deadline_remaining(deadline);
  assert_true(remaining > 0);
  assert_true(remaining <= 100 * MS);
}

static void test_absolute_passes_through(void** state) {
  (void)state;
  assert_int_equal(weft_timeout_as_deadline(weft_timeout_deadline(12345)),
                   12345);
  assert_false(weft_timeout_is_immediate(weft_timeout_deadline(12345)));
  // A deadline in the past has nothing remaining.
  assert_int_equal(weft_deadline_remaining(1), 0);
  assert_int_equal(weft_deadline_remaining(weft_time_now() - MS), 0);
}

static void test_saturation(void** state) {
  (void)state;
  // now + (INT64_MAX - 1) overflows and saturates to the infinite future.
  assert_int_equal(
      weft_timeout_as_deadline(weft_timeout_relative(INT64_MAX - 1)),
      WEFT_TIME_INFINITE_FUTURE);
  weft_time_t far = weft_timeout_as_deadline(
      weft_timeout_relative(INT64_MAX - weft_time_now() - 1000 * MS));
  assert_true(far > 0);
}

static void test_sleep_until(void** state) {
  (void)state;
  weft_time_t start = weft_time_now();
  weft_sleep_until(start + 5 * MS);
  assert_true(weft_time_now() >= start + 5 * MS);
  // Past deadlines return at once.
  weft_sleep_until(WEFT_TIME_INFINITE_PAST);
  weft_sleep_until(start);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_now_is_monotonic),
      cmocka_unit_test(test_immediate_and_infinite),
      cmocka_unit_test(test_relative_to_deadline),
      cmocka_unit_test(test_absolute_passes_through),
      cmocka_unit_test(test_saturation),
      cmocka_unit_test(test_sleep_until),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
