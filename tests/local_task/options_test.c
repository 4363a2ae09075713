// Tests for the local-task driver's scheduler options
// (src/drivers/local_task/local_task_options.h): a device string's workers=,
// cpus=, nodes= and spin_us= read into the topology's options, and the
// errors that name the option and its value.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
// clang-format off
#include <cmocka.h>
// clang-format on

#include "drivers/local_task/local_task_options.h"

static void assert_ok(weft_status_t status) {
  if (!weft_status_is_ok(status)) {
    weft_status_fprint(stderr, status);
    fail_msg("expected OK");
  }
}

static void test_device_options(void** state) {
  (void)state;
  weft_device_options_t device_options;
  assert_ok(weft_device_options_parse(
      "local-task?workers=4&cpus=0-3,8&nodes=current&spin_us=50",
      &device_options));
  weft_topology_options_t options;
  weft_topology_options_initialize(&options);
  uint32_t spin_us = 20;
  assert_ok(weft_local_task_parse_topology_options(&device_options, &options,
                                                   &spin_us));
  assert_int_equal(options.worker_count, 4);
  assert_string_equal(options.cpus, "0-3,8");
  assert_int_equal(options.nodes, WEFT_TOPOLOGY_NODES_CURRENT);
  assert_int_equal(spin_us, 50);

  // Absent options leave the outputs alone; other keys are ignored.
  assert_ok(weft_device_options_parse("local-task?nodes=all&queues=2",
                                      &device_options));
  assert_ok(weft_local_task_parse_topology_options(&device_options, &options,
                                                   &spin_us));
  assert_int_equal(options.worker_count, 4);
  assert_int_equal(options.nodes, WEFT_TOPOLOGY_NODES_ALL);
  assert_int_equal(spin_us, 50);
  assert_ok(weft_device_options_parse("local-task?workers=0&spin_us=0",
                                      &device_options));
  assert_ok(weft_local_task_parse_topology_options(&device_options, &options,
                                                   &spin_us));
  assert_int_equal(options.worker_count, 0);
  assert_int_equal(spin_us, 0);
}

static void test_device_option_errors(void** state) {
  (void)state;
  static const struct {
    const char* device_string;
    const char* needle;
  } kCases[] = {
      {"local-task?workers=abc", "option 'workers=abc'"},
      {"local-task?workers=-1", "option 'workers=-1'"},
      {"local-task?workers=", "option 'workers' is empty"},
      {"local-task?workers=65537",
       "option 'workers=65537' is more than the limit of 65536"},
      {"local-task?workers=99999999999", "option 'workers=99999999999'"},
      {"local-task?spin_us=fast", "option 'spin_us=fast'"},
      {"local-task?spin_us=10000001",
       "option 'spin_us=10000001' is more than the limit"},
      {"local-task?cpus=0-3x", "in option 'cpus=0-3x'"},
      {"local-task?cpus=0-3x", "position 3"},
      {"local-task?cpus=5-1", "range 5-1"},
      {"local-task?cpus=", "option 'cpus=' names no CPU"},
      {"local-task?nodes=some",
       "option 'nodes=some' is not 'current' or 'all'"},
      {"local-task?nodes=", "option 'nodes=' is not"},
  };
  for (size_t i = 0; i < sizeof(kCases) / sizeof(kCases[0]); ++i) {
    weft_device_options_t device_options;
    assert_ok(
        weft_device_options_parse(kCases[i].device_string, &device_options));
    weft_topology_options_t options;
    weft_topology_options_initialize(&options);
    options.worker_count = 3;
    uint32_t spin_us = 7;
    weft_status_t status = weft_local_task_parse_topology_options(
        &device_options, &options, &spin_us);
    char formatted[512];
    weft_status_format(status, formatted, sizeof(formatted));
    if (weft_status_code(status) != WEFT_STATUS_INVALID_ARGUMENT ||
        !strstr(formatted, kCases[i].needle)) {
      fail_msg("%s: got '%s', expected '%s'", kCases[i].device_string,
               formatted, kCases[i].needle);
    }
    weft_status_free(status);
    // Outputs unchanged.
    assert_int_equal(options.worker_count, 3);
    assert_null(options.cpus);
    assert_int_equal(spin_us, 7);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_device_options),
      cmocka_unit_test(test_device_option_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
