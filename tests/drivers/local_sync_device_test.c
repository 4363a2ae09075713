// local-sync device tests: what the CTS cannot say driver-neutrally.
//  - the properties of a driver with one inline queue: one queue, one
//    worker (the thread that makes an op ready), dispatches not concurrent;
//  - it takes no options.
// setjmp.h, stdarg.h and stddef.h must come before cmocka.h.
// clang-format off
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
// clang-format on

#include "cts.h"
#include "weft/weft.h"

static void properties(void** state) {
  weft_device_t* device = NULL;
  WEFT_ASSERT_OK(
      weft_device_create("local-sync", weft_allocator_system(), &device));
  const struct {
    const char* key;
    int64_t value;
  } expected[] = {
      {"queue.count", 1},
      {"worker.count", 1},
      {"dispatch.concurrent", 0},
      {"semaphore.host_wait", 1},
  };
  for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); ++i) {
    int64_t value = -1;
    WEFT_ASSERT_OK(weft_device_query_i64(device, expected[i].key, &value));
    if (value != expected[i].value) {
      fail_msg("%s: %lld, expected %lld", expected[i].key, (long long)value,
               (long long)expected[i].value);
    }
  }
  weft_device_release(device);
}

static void takes_no_options(void** state) {
  weft_device_t* device = NULL;
  weft_cts_assert_status_contains(
      weft_device_create("local-sync?queues=4", weft_allocator_system(),
                         &device),
      WEFT_STATUS_INVALID_ARGUMENT,
      "driver 'local-sync' does not accept option 'queues'; accepted: (none)");
  assert_null(device);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(properties),
      cmocka_unit_test(takes_no_options),
  };
  return cmocka_run_group_tests_name("local_sync.device", tests, NULL, NULL);
}
