// WEFT_WATCHDOG_MS / WEFT_WATCHDOG_ACTION arm the watchdog without code
// (ctest sets them for this binary): the first device creation reads them,
// and a stuck host wait then fails with DEADLINE_EXCEEDED.
// clang-format off
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include <stdio.h>
#include <string.h>

#include "weft/diagnostics.h"
#include "weft/weft.h"

static void environment_arms_the_watchdog(void** state) {
  (void)state;
  assert_int_equal(weft_watchdog_limit(), 0);
  weft_device_t* device = NULL;
  weft_status_t status =
      weft_device_create("local-sync", weft_allocator_system(), &device);
  assert_true(weft_status_is_ok(status));
  assert_int_equal(weft_watchdog_limit(), 40 * 1000000ll);

  weft_semaphore_t* stuck = NULL;
  assert_true(weft_status_is_ok(
      weft_semaphore_create(weft_allocator_system(), 0, &stuck)));
  weft_semaphore_set_name(stuck, "stuck");
  weft_fence_t* fence = NULL;
  assert_true(weft_status_is_ok(
      weft_fence_create_at(stuck, 3, weft_allocator_system(), &fence)));
  status = weft_fence_wait(fence, weft_timeout_infinite());
  assert_int_equal(weft_status_code(status), WEFT_STATUS_DEADLINE_EXCEEDED);
  assert_non_null(strstr(weft_status_message(status),
                         "watchdog: a host wait for semaphore 'stuck' to "
                         "reach 3"));
  weft_status_free(status);
  weft_fence_release(fence);
  weft_semaphore_release(stuck);
  weft_device_release(device);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(environment_arms_the_watchdog),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
