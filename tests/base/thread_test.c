// Tests for threads: names, affinity, ids, CPU counts.

#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/thread.h"

typedef struct probe_t {
  char name[32];
  uint64_t id;
  int cpu;
  int ran;
} probe_t;

static int probe_thread_main(void* user_data) {
  probe_t* probe = (probe_t*)user_data;
  pthread_getname_np(pthread_self(), probe->name, sizeof(probe->name));
  probe->id = weft_thread_current_id();
  probe->cpu = sched_getcpu();
  probe->ran = 1;
  return 0;
}

static void test_name_and_id(void** state) {
  (void)state;
  probe_t probe = {0};
  weft_thread_params_t params = {.name = "weft-worker-with-a-long-name",
                                 .cpu = -1};
  weft_thread_t* thread = NULL;
  assert_null(weft_thread_create(probe_thread_main, &probe, &params,
                                 weft_allocator_system(), &thread));
  weft_thread_join(thread);
  assert_int_equal(probe.ran, 1);
  // Truncated to the 15 characters Linux allows.
  assert_string_equal(probe.name, "weft-worker-wit");
  assert_true(probe.id != 0);
  assert_true(probe.id != weft_thread_current_id());
  weft_thread_join(NULL);
}

static void test_no_params(void** state) {
  (void)state;
  probe_t probe = {0};
  weft_thread_t* thread = NULL;
  assert_null(weft_thread_create(probe_thread_main, &probe, NULL,
                                 weft_allocator_system(), &thread));
  weft_thread_join(thread);
  assert_int_equal(probe.ran, 1);
}

static void test_affinity(void** state) {
  (void)state;
  cpu_set_t set;
  CPU_ZERO(&set);
  assert_int_equal(sched_getaffinity(0, sizeof(set), &set), 0);
  int last_cpu = -1;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) last_cpu = cpu;
  }
  assert_true(last_cpu >= 0);
  probe_t probe = {0};
  weft_thread_params_t params = {.name = "pinned", .cpu = last_cpu};
  weft_thread_t* thread = NULL;
  assert_null(weft_thread_create(probe_thread_main, &probe, &params,
                                 weft_allocator_system(), &thread));
  weft_thread_join(thread);
  assert_int_equal(probe.cpu, last_cpu);
}

static void test_bad_affinity_fails(void** state) {
  (void)state;
  probe_t probe = {0};
  // No machine this test runs on has a million CPUs.
  weft_thread_params_t params = {.name = "nowhere", .cpu = 1 << 20};
  weft_thread_t* thread = (weft_thread_t*)1;
  weft_status_t status = weft_thread_create(
      probe_thread_main, &probe, &params, weft_allocator_system(), &thread);
  assert_false(weft_status_is_ok(status));
  assert_null(thread);
  assert_non_null(strstr(weft_status_message(status), "nowhere"));
  weft_status_free(status);
  assert_int_equal(probe.ran, 0);
}

static void test_allocation_failure(void** state) {
  (void)state;
  weft_failing_allocator_t storage;
  weft_allocator_t allocator = weft_failing_allocator_initialize(
      weft_allocator_system(), 0, &storage);
  probe_t probe = {0};
  weft_thread_t* thread = NULL;
  weft_status_t status =
      weft_thread_create(probe_thread_main, &probe, NULL, allocator, &thread);
  assert_true(weft_status_is(status, WEFT_STATUS_RESOURCE_EXHAUSTED));
  weft_status_free(status);
  assert_null(thread);
  assert_int_equal(probe.ran, 0);
}

static void test_cpu_count(void** state) {
  (void)state;
  cpu_set_t set;
  CPU_ZERO(&set);
  assert_int_equal(sched_getaffinity(0, sizeof(set), &set), 0);
  assert_int_equal(weft_thread_available_cpu_count(), CPU_COUNT(&set));
  weft_thread_yield();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_name_and_id),
      cmocka_unit_test(test_no_params),
      cmocka_unit_test(test_affinity),
      cmocka_unit_test(test_bad_affinity_fails),
      cmocka_unit_test(test_allocation_failure),
      cmocka_unit_test(test_cpu_count),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
