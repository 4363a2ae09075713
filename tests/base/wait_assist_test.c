// Tests for the wait assistants (src/base/wait_assist.h): run calls them,
// weft's own threads and nested calls never do, the table's capacity, and
// unregister waiting for a thread inside.

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "base/atomics.h"
#include "base/thread.h"
#include "base/wait_assist.h"
#include "weft/time.h"

#define MS (1000ll * 1000ll)

typedef struct counter_t {
  weft_atomic_int32_t calls;
  // When set, the call runs weft_wait_assist_run again (must not nest).
  bool nest;
  weft_atomic_int32_t nested_ran;
} counter_t;

static weft_wait_assist_result_t count_call(void* user_data) {
  counter_t* counter = (counter_t*)user_data;
  weft_atomic_fetch_add(&counter->calls, 1, memory_order_relaxed);
  if (counter->nest && weft_wait_assist_run() != WEFT_WAIT_ASSIST_IDLE) {
    weft_atomic_fetch_add(&counter->nested_ran, 1, memory_order_relaxed);
  }
  return WEFT_WAIT_ASSIST_RAN;
}

static void run_calls_registered(void** state) {
  (void)state;
  assert_false(weft_wait_assist_available());
  assert_int_equal(weft_wait_assist_run(), WEFT_WAIT_ASSIST_IDLE);
  counter_t counter = {0};
  counter.nest = true;
  uint32_t id = 0;
  assert_true(weft_status_is_ok(
      weft_wait_assist_register(count_call, &counter, &id)));
  assert_true(weft_wait_assist_available());
  assert_int_equal(weft_wait_assist_run(), WEFT_WAIT_ASSIST_RAN);
  assert_int_equal(weft_atomic_load(&counter.calls, memory_order_relaxed), 1);
  assert_int_equal(
      weft_atomic_load(&counter.nested_ran, memory_order_relaxed), 0);
  weft_wait_assist_unregister(id);
  assert_false(weft_wait_assist_available());
  assert_int_equal(weft_wait_assist_run(), WEFT_WAIT_ASSIST_IDLE);
  assert_int_equal(weft_atomic_load(&counter.calls, memory_order_relaxed), 1);
}

typedef struct weft_thread_probe_t {
  bool available;
  weft_wait_assist_result_t ran;
} weft_thread_probe_t;

static int probe_main(void* user_data) {
  weft_thread_probe_t* probe = (weft_thread_probe_t*)user_data;
  probe->available = weft_wait_assist_available();
  probe->ran = weft_wait_assist_run();
  return 0;
}

static void weft_threads_never_assist(void** state) {
  (void)state;
  counter_t counter = {0};
  uint32_t id = 0;
  assert_true(weft_status_is_ok(
      weft_wait_assist_register(count_call, &counter, &id)));
  weft_thread_probe_t probe = {true, WEFT_WAIT_ASSIST_RAN};
  weft_thread_t* thread = NULL;
  weft_thread_params_t params = {.name = "probe"};
  assert_true(weft_status_is_ok(weft_thread_create(
      probe_main, &probe, &params, weft_allocator_system(), &thread)));
  weft_thread_join(thread);
  assert_false(probe.available);
  assert_int_equal(probe.ran, WEFT_WAIT_ASSIST_IDLE);
  assert_int_equal(weft_atomic_load(&counter.calls, memory_order_relaxed), 0);
  weft_wait_assist_unregister(id);
}

static weft_wait_assist_result_t never(void* user_data) {
  (void)user_data;
  return WEFT_WAIT_ASSIST_IDLE;
}

static weft_wait_assist_result_t busy(void* user_data) {
  (void)user_data;
  return WEFT_WAIT_ASSIST_BUSY;
}

static void capacity_is_reported(void** state) {
  (void)state;
  uint32_t ids[WEFT_WAIT_ASSIST_CAPACITY];
  for (uint32_t i = 0; i < WEFT_WAIT_ASSIST_CAPACITY; ++i) {
    assert_true(
        weft_status_is_ok(weft_wait_assist_register(never, NULL, &ids[i])));
  }
  uint32_t extra = 0;
  weft_status_t status = weft_wait_assist_register(never, NULL, &extra);
  assert_int_equal(weft_status_code(status), WEFT_STATUS_RESOURCE_EXHAUSTED);
  weft_status_free(status);
  // Nobody has work: run says so after asking every one.
  assert_int_equal(weft_wait_assist_run(), WEFT_WAIT_ASSIST_IDLE);
  // One busy among the idle: BUSY.
  weft_wait_assist_unregister(ids[WEFT_WAIT_ASSIST_CAPACITY / 2]);
  assert_true(weft_status_is_ok(weft_wait_assist_register(
      busy, NULL, &ids[WEFT_WAIT_ASSIST_CAPACITY / 2])));
  assert_int_equal(weft_wait_assist_run(), WEFT_WAIT_ASSIST_BUSY);
  for (uint32_t i = 0; i < WEFT_WAIT_ASSIST_CAPACITY; ++i) {
    weft_wait_assist_unregister(ids[i]);
  }
  assert_false(weft_wait_assist_available());
}

// An assistant that holds the caller until told to return.
typedef struct blocker_t {
  weft_atomic_int32_t inside;
  weft_atomic_int32_t proceed;
  weft_atomic_int32_t unregistered;
  uint32_t id;
} blocker_t;

static weft_wait_assist_result_t block_call(void* user_data) {
  blocker_t* blocker = (blocker_t*)user_data;
  weft_atomic_store(&blocker->inside, 1, memory_order_release);
  while (!weft_atomic_load(&blocker->proceed, memory_order_acquire)) {
    weft_thread_yield();
  }
  return WEFT_WAIT_ASSIST_RAN;
}

// Application threads (plain pthreads: weft's threads never assist).
static void* runner_main(void* user_data) {
  (void)user_data;
  weft_wait_assist_run();
  return NULL;
}

static void* unregister_main(void* user_data) {
  blocker_t* blocker = (blocker_t*)user_data;
  weft_wait_assist_unregister(blocker->id);
  weft_atomic_store(&blocker->unregistered, 1, memory_order_release);
  return NULL;
}

static void unregister_waits_for_callers(void** state) {
  (void)state;
  blocker_t blocker = {0};
  assert_true(weft_status_is_ok(
      weft_wait_assist_register(block_call, &blocker, &blocker.id)));
  pthread_t runner;
  assert_int_equal(pthread_create(&runner, NULL, runner_main, NULL), 0);
  while (!weft_atomic_load(&blocker.inside, memory_order_acquire)) {
    weft_thread_yield();
  }
  pthread_t unregisterer;
  assert_int_equal(
      pthread_create(&unregisterer, NULL, unregister_main, &blocker), 0);
  // However long this lasts, unregister must not return while the runner
  // is inside.
  weft_sleep_until(weft_time_now() + 20 * MS);
  assert_int_equal(
      weft_atomic_load(&blocker.unregistered, memory_order_acquire), 0);
  weft_atomic_store(&blocker.proceed, 1, memory_order_release);
  pthread_join(runner, NULL);
  pthread_join(unregisterer, NULL);
  assert_int_equal(
      weft_atomic_load(&blocker.unregistered, memory_order_acquire), 1);
  assert_false(weft_wait_assist_available());
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(run_calls_registered),
      cmocka_unit_test(weft_threads_never_assist),
      cmocka_unit_test(capacity_is_reported),
      cmocka_unit_test(unregister_waits_for_callers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
