// CTS: timeline semaphores (values, failure, host waits, lists, timepoints).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/atomics.h"
#include "base/thread.h"
#include "cts.h"

#define MS (1000ll * 1000ll)

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

// A thread that sleeps |delay_ns| then signals or fails |semaphore|.
typedef enum action_kind_e {
  ACTION_SIGNAL = 0,
  ACTION_FAIL = 1,
} action_kind_t;

typedef struct action_t {
  action_kind_t kind;
  weft_semaphore_t* semaphore;
  uint64_t value;
  weft_duration_t delay_ns;
  weft_thread_t* thread;
} action_t;

static int action_main(void* user_data) {
  action_t* action = (action_t*)user_data;
  if (action->delay_ns) weft_sleep_until(weft_time_now() + action->delay_ns);
  if (action->kind == ACTION_SIGNAL) {
    weft_status_ignore(weft_semaphore_signal(action->semaphore, action->value));
  } else {
    weft_semaphore_fail(
        action->semaphore,
        WEFT_STATUS(DATA_LOSS, "worker lost tile %d", (int)action->value));
  }
  return 0;
}

static void action_start(action_t* action, action_kind_t kind,
                         weft_semaphore_t* semaphore, uint64_t value,
                         weft_duration_t delay_ns) {
  action->kind = kind;
  action->semaphore = semaphore;
  action->value = value;
  action->delay_ns = delay_ns;
  action->thread = NULL;
  WEFT_ASSERT_OK(weft_thread_create(action_main, action, NULL,
                                    weft_allocator_system(), &action->thread));
}

static void action_join(action_t* action) {
  weft_thread_join(action->thread);
  action->thread = NULL;
}

// What a timepoint callback saw.
typedef struct timepoint_record_t {
  weft_timepoint_t timepoint;
  weft_atomic_uint32_t fire_count;
  weft_status_code_t code;
  char text[512];
} timepoint_record_t;

static void timepoint_record_fn(void* user_data, weft_timepoint_t* timepoint,
                                weft_status_t status) {
  timepoint_record_t* record = (timepoint_record_t*)user_data;
  assert_ptr_equal(timepoint, &record->timepoint);
  record->code = weft_status_code(status);
  weft_status_format(status, record->text, sizeof(record->text));
  weft_status_free(status);
  // Release: the test reads |code| and |text| after acquiring the count.
  weft_atomic_fetch_add(&record->fire_count, 1u, memory_order_release);
}

static void timepoint_record_init(timepoint_record_t* record) {
  memset(record, 0, sizeof(*record));
  atomic_init(&record->fire_count, 0u);
  record->timepoint.fn = timepoint_record_fn;
  record->timepoint.user_data = record;
}

static uint32_t timepoint_fire_count(timepoint_record_t* record) {
  // Acquire: pairs with timepoint_record_fn's release.
  return weft_atomic_load(&record->fire_count, memory_order_acquire);
}

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

static void create_and_query_initial_value(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* zero = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* big = weft_cts_create_semaphore(cts, 1ull << 40);
  assert_int_equal(weft_cts_query_value(zero), 0);
  assert_int_equal(weft_cts_query_value(big), 1ull << 40);
  assert_string_equal(weft_semaphore_name(zero), "");
  weft_semaphore_release(zero);
  weft_semaphore_release(big);
}

static void signal_then_query(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  WEFT_ASSERT_OK(weft_semaphore_signal(semaphore, 1));
  assert_int_equal(weft_cts_query_value(semaphore), 1);
  WEFT_ASSERT_OK(weft_semaphore_signal(semaphore, 100));
  assert_int_equal(weft_cts_query_value(semaphore), 100);
  WEFT_ASSERT_OK(weft_semaphore_signal(semaphore, UINT64_MAX));
  assert_int_equal(weft_cts_query_value(semaphore), UINT64_MAX);
  weft_semaphore_release(semaphore);
}

static void signal_equal_value_is_invalid(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 7);
  weft_semaphore_set_name(semaphore, "mono");
  weft_cts_assert_status_contains(weft_semaphore_signal(semaphore, 7),
                                  WEFT_STATUS_INVALID_ARGUMENT, "already at 7");
  assert_int_equal(weft_cts_query_value(semaphore), 7);
  weft_semaphore_release(semaphore);
}

static void signal_lower_value_is_invalid(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 7);
  weft_semaphore_set_name(semaphore, "mono");
  weft_cts_assert_status_contains(
      weft_semaphore_signal(semaphore, 5), WEFT_STATUS_INVALID_ARGUMENT,
      "semaphore 'mono': signal to 5 but already at 7");
  assert_int_equal(weft_cts_query_value(semaphore), 7);
  // Still usable afterwards.
  WEFT_ASSERT_OK(weft_semaphore_signal(semaphore, 8));
  assert_int_equal(weft_cts_query_value(semaphore), 8);
  weft_semaphore_release(semaphore);
}

//===----------------------------------------------------------------------===//
// Failure
//===----------------------------------------------------------------------===//

static void signal_after_fail_returns_failure(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 1);
  weft_semaphore_fail(semaphore,
                      WEFT_STATUS(INTERNAL, "dispatch 'k' exploded"));
  weft_cts_assert_status_contains(weft_semaphore_signal(semaphore, 2),
                                  WEFT_STATUS_INTERNAL,
                                  "dispatch 'k' exploded");
  weft_semaphore_release(semaphore);
}

static void fail_then_wait_keeps_message(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_set_name(semaphore, "frames");
  weft_semaphore_fail(semaphore,
                      WEFT_STATUS(OUT_OF_RANGE, "short read at byte 4096"));
  weft_status_t status = weft_cts_wait(semaphore, 3);
  assert_int_equal(weft_status_code(status), WEFT_STATUS_OUT_OF_RANGE);
  assert_non_null(
      strstr(weft_status_message(status), "short read at byte 4096"));
  weft_cts_assert_status_contains(status, WEFT_STATUS_OUT_OF_RANGE, "'frames'");
  // Every wait, not only the first, sees it.
  weft_cts_assert_status_contains(weft_cts_wait(semaphore, 1),
                                  WEFT_STATUS_OUT_OF_RANGE,
                                  "short read at byte 4096");
  weft_semaphore_release(semaphore);
}

static void wait_then_fail_from_other_thread(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  action_t action;
  action_start(&action, ACTION_FAIL, semaphore, 17, 20 * MS);
  weft_cts_assert_status_contains(
      weft_semaphore_wait(semaphore, 1, weft_timeout_infinite()),
      WEFT_STATUS_DATA_LOSS, "worker lost tile 17");
  action_join(&action);
  weft_semaphore_release(semaphore);
}

static void double_failure_keeps_first(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_fail(semaphore, WEFT_STATUS(ABORTED, "first failure"));
  weft_semaphore_fail(semaphore, WEFT_STATUS(UNKNOWN, "second failure"));
  weft_semaphore_fail(semaphore, weft_status_from_code(WEFT_STATUS_INTERNAL));
  uint64_t value = 0;
  weft_status_t status = weft_semaphore_query(semaphore, &value);
  char text[512];
  weft_status_format(status, text, sizeof(text));
  assert_null(strstr(text, "second failure"));
  weft_cts_assert_status_contains(status, WEFT_STATUS_ABORTED, "first failure");
  weft_cts_assert_status_contains(weft_cts_wait(semaphore, 1),
                                  WEFT_STATUS_ABORTED, "first failure");
  weft_semaphore_release(semaphore);
}

static void query_after_fail_returns_failure(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  WEFT_ASSERT_OK(weft_semaphore_signal(semaphore, 4));
  weft_semaphore_fail(semaphore,
                      WEFT_STATUS(RESOURCE_EXHAUSTED, "pool 'p' is empty"));
  uint64_t value = 0;
  weft_status_t status = weft_semaphore_query(semaphore, &value);
  assert_int_equal(value, 4);  // the last value reached
  assert_string_equal(weft_status_message(status), "pool 'p' is empty");
  weft_cts_assert_status_contains(status, WEFT_STATUS_RESOURCE_EXHAUSTED, NULL);
  // Query again: still failed (the failure is cloned, not handed out).
  weft_cts_assert_status_contains(weft_semaphore_query(semaphore, &value),
                                  WEFT_STATUS_RESOURCE_EXHAUSTED,
                                  "pool 'p' is empty");
  weft_semaphore_release(semaphore);
}

//===----------------------------------------------------------------------===//
// Waits
//===----------------------------------------------------------------------===//

static void wait_on_reached_value(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 5);
  WEFT_ASSERT_OK(weft_semaphore_wait(semaphore, 0, weft_timeout_immediate()));
  WEFT_ASSERT_OK(weft_semaphore_wait(semaphore, 5, weft_timeout_immediate()));
  WEFT_ASSERT_OK(weft_cts_wait(semaphore, 3));
  weft_semaphore_release(semaphore);
}

static void wait_for_future_value_from_thread(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  action_t action;
  action_start(&action, ACTION_SIGNAL, semaphore, 9, 10 * MS);
  WEFT_ASSERT_OK(weft_cts_wait(semaphore, 9));
  assert_true(weft_cts_query_value(semaphore) >= 9);
  action_join(&action);
  weft_semaphore_release(semaphore);
}

static void infinite_wait_satisfied_later(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  action_t action;
  action_start(&action, ACTION_SIGNAL, semaphore, 2, 30 * MS);
  WEFT_ASSERT_OK(weft_semaphore_wait(semaphore, 2, weft_timeout_infinite()));
  action_join(&action);
  weft_semaphore_release(semaphore);
}

static void timeout_absolute(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_set_name(semaphore, "late");
  weft_time_t start = weft_time_now();
  weft_time_t deadline = start + 20 * MS;
  weft_cts_assert_status_contains(
      weft_semaphore_wait(semaphore, 1, weft_timeout_deadline(deadline)),
      WEFT_STATUS_DEADLINE_EXCEEDED, "'late'");
  assert_true(weft_time_now() >= deadline);
  // A deadline already in the past polls.
  weft_cts_assert_status_contains(
      weft_semaphore_wait(semaphore, 1, weft_timeout_deadline(start)),
      WEFT_STATUS_DEADLINE_EXCEEDED, NULL);
  weft_semaphore_release(semaphore);
}

static void timeout_relative(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 3);
  weft_time_t start = weft_time_now();
  weft_status_t status =
      weft_semaphore_wait(semaphore, 4, weft_timeout_relative(20 * MS));
  weft_time_t elapsed = weft_time_now() - start;
  weft_cts_assert_status_contains(status, WEFT_STATUS_DEADLINE_EXCEEDED, "4");
  // Not before the deadline; how long after it depends on when this thread
  // next runs, so that is not checked (a wait that never ended would hang
  // the case until ctest stops it).
  assert_true(elapsed >= 20 * MS);
  weft_semaphore_release(semaphore);
}

static void timeout_immediate_polls(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* semaphores[2] = {weft_cts_create_semaphore(cts, 0),
                                     weft_cts_create_semaphore(cts, 0)};
  uint64_t values[2] = {1, 1};
  weft_semaphore_list_t list = {2, semaphores, values};
  for (int i = 0; i < 100; ++i) {
    weft_cts_assert_status_contains(
        weft_semaphore_wait(semaphores[0], 1, weft_timeout_immediate()),
        WEFT_STATUS_DEADLINE_EXCEEDED, NULL);
    weft_cts_assert_status_contains(
        weft_semaphore_wait(semaphores[0], 1, weft_timeout_relative(0)),
        WEFT_STATUS_DEADLINE_EXCEEDED, NULL);
    weft_cts_assert_status_contains(
        weft_semaphore_list_wait(WEFT_WAIT_MODE_ANY, list,
                                 weft_timeout_immediate()),
        WEFT_STATUS_DEADLINE_EXCEEDED, NULL);
  }
  // Polling changed nothing; once a value is reached a poll sees it.
  assert_int_equal(weft_cts_query_value(semaphores[0]), 0);
  WEFT_ASSERT_OK(weft_semaphore_signal(semaphores[1], 1));
  WEFT_ASSERT_OK(weft_semaphore_list_wait(WEFT_WAIT_MODE_ANY, list,
                                          weft_timeout_immediate()));
  WEFT_ASSERT_OK(
      weft_semaphore_wait(semaphores[1], 1, weft_timeout_relative(0)));
  weft_semaphore_release(semaphores[0]);
  weft_semaphore_release(semaphores[1]);
}

//===----------------------------------------------------------------------===//
// Lists
//===----------------------------------------------------------------------===//

static void wait_all_partially_signalled_times_out(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* semaphores[3] = {weft_cts_create_semaphore(cts, 0),
                                     weft_cts_create_semaphore(cts, 0),
                                     weft_cts_create_semaphore(cts, 0)};
  weft_semaphore_set_name(semaphores[1], "lagging");
  uint64_t values[3] = {1, 2, 3};
  weft_semaphore_list_t list = {3, semaphores, values};
  WEFT_ASSERT_OK(weft_semaphore_signal(semaphores[0], 1));
  WEFT_ASSERT_OK(weft_semaphore_signal(semaphores[2], 3));
  assert_false(weft_semaphore_list_is_reached(list));
  weft_cts_assert_status_contains(
      weft_semaphore_list_wait(WEFT_WAIT_MODE_ALL, list,
                               weft_timeout_relative(10 * MS)),
      WEFT_STATUS_DEADLINE_EXCEEDED, "'lagging'");
  WEFT_ASSERT_OK(weft_semaphore_signal(semaphores[1], 2));
  assert_true(weft_semaphore_list_is_reached(list));
  WEFT_ASSERT_OK(weft_semaphore_list_wait(WEFT_WAIT_MODE_ALL, list,
                                          weft_timeout_immediate()));
  for (int i = 0; i < 3; ++i) weft_semaphore_release(semaphores[i]);
}

static void wait_all_signalled_by_threads(void** state) {
  weft_cts_t* cts = *state;
  enum { kCount = 3 };
  weft_semaphore_t* semaphores[kCount];
  uint64_t values[kCount];
  action_t actions[kCount];
  for (int i = 0; i < kCount; ++i) {
    semaphores[i] = weft_cts_create_semaphore(cts, 0);
    values[i] = (uint64_t)(i + 1);
  }
  weft_semaphore_list_t list = {kCount, semaphores, values};
  for (int i = 0; i < kCount; ++i) {
    action_start(&actions[i], ACTION_SIGNAL, semaphores[i], values[i],
                 (weft_duration_t)(kCount - i) * 5 * MS);
  }
  WEFT_ASSERT_OK(weft_semaphore_list_wait(WEFT_WAIT_MODE_ALL, list,
                                          weft_timeout_relative(10000 * MS)));
  assert_true(weft_semaphore_list_is_reached(list));
  for (int i = 0; i < kCount; ++i) {
    action_join(&actions[i]);
    weft_semaphore_release(semaphores[i]);
  }
}

static void wait_any_one_signalled(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* semaphores[3] = {weft_cts_create_semaphore(cts, 0),
                                     weft_cts_create_semaphore(cts, 0),
                                     weft_cts_create_semaphore(cts, 0)};
  uint64_t values[3] = {1, 1, 1};
  weft_semaphore_list_t list = {3, semaphores, values};
  weft_cts_assert_status_contains(
      weft_semaphore_list_wait(WEFT_WAIT_MODE_ANY, list,
                               weft_timeout_relative(5 * MS)),
      WEFT_STATUS_DEADLINE_EXCEEDED, NULL);
  action_t action;
  action_start(&action, ACTION_SIGNAL, semaphores[1], 1, 10 * MS);
  WEFT_ASSERT_OK(weft_semaphore_list_wait(WEFT_WAIT_MODE_ANY, list,
                                          weft_timeout_infinite()));
  action_join(&action);
  // Already reached: answers at once.
  WEFT_ASSERT_OK(weft_semaphore_list_wait(WEFT_WAIT_MODE_ANY, list,
                                          weft_timeout_immediate()));
  for (int i = 0; i < 3; ++i) weft_semaphore_release(semaphores[i]);
}

static void wait_any_where_one_fails(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* semaphores[3] = {weft_cts_create_semaphore(cts, 0),
                                     weft_cts_create_semaphore(cts, 0),
                                     weft_cts_create_semaphore(cts, 0)};
  weft_semaphore_set_name(semaphores[2], "broken");
  uint64_t values[3] = {1, 1, 1};
  weft_semaphore_list_t list = {3, semaphores, values};
  action_t action;
  action_start(&action, ACTION_FAIL, semaphores[2], 33, 10 * MS);
  weft_cts_assert_status_contains(
      weft_semaphore_list_wait(WEFT_WAIT_MODE_ANY, list,
                               weft_timeout_infinite()),
      WEFT_STATUS_DATA_LOSS, "worker lost tile 33");
  action_join(&action);
  // A failure wins over a reached entry, even in ANY mode.
  WEFT_ASSERT_OK(weft_semaphore_signal(semaphores[0], 1));
  weft_cts_assert_status_contains(
      weft_semaphore_list_wait(WEFT_WAIT_MODE_ANY, list,
                               weft_timeout_immediate()),
      WEFT_STATUS_DATA_LOSS, "'broken'");
  for (int i = 0; i < 3; ++i) weft_semaphore_release(semaphores[i]);
}

static void wait_all_where_one_fails(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* semaphores[3] = {weft_cts_create_semaphore(cts, 0),
                                     weft_cts_create_semaphore(cts, 0),
                                     weft_cts_create_semaphore(cts, 0)};
  uint64_t values[3] = {1, 1, 1};
  weft_semaphore_list_t list = {3, semaphores, values};
  action_t action;
  action_start(&action, ACTION_FAIL, semaphores[1], 44, 10 * MS);
  // The others never signal: the failure must end the wait, not the clock
  // (had the deadline, a minute off, ended it, it would say
  // DEADLINE_EXCEEDED).
  weft_cts_assert_status_contains(
      weft_semaphore_list_wait(WEFT_WAIT_MODE_ALL, list,
                               weft_timeout_relative(60000 * MS)),
      WEFT_STATUS_DATA_LOSS, "worker lost tile 44");
  action_join(&action);
  for (int i = 0; i < 3; ++i) weft_semaphore_release(semaphores[i]);
}

static void wait_on_empty_list(void** state) {
  WEFT_ASSERT_OK(weft_semaphore_list_wait(WEFT_WAIT_MODE_ALL,
                                          weft_semaphore_list_empty(),
                                          weft_timeout_immediate()));
  WEFT_ASSERT_OK(weft_semaphore_list_wait(WEFT_WAIT_MODE_ANY,
                                          weft_semaphore_list_empty(),
                                          weft_timeout_infinite()));
  assert_true(weft_semaphore_list_is_reached(weft_semaphore_list_empty()));
  WEFT_ASSERT_OK(weft_semaphore_list_signal(weft_semaphore_list_empty()));
  weft_semaphore_list_fail(weft_semaphore_list_empty(),
                           WEFT_STATUS(INTERNAL, "nobody hears this"));
}

static void wait_on_long_list(void** state) {
  weft_cts_t* cts = *state;
  // More entries than a list wait keeps inline; same semaphore repeated.
  enum { kCount = 20 };
  weft_semaphore_t* semaphores[kCount];
  uint64_t values[kCount];
  weft_semaphore_t* shared = weft_cts_create_semaphore(cts, 0);
  for (int i = 0; i < kCount; ++i) {
    semaphores[i] = shared;
    values[i] = (uint64_t)(i % 5) + 1;
  }
  weft_semaphore_list_t list = {kCount, semaphores, values};
  action_t action;
  action_start(&action, ACTION_SIGNAL, shared, 5, 10 * MS);
  WEFT_ASSERT_OK(weft_semaphore_list_wait(WEFT_WAIT_MODE_ALL, list,
                                          weft_timeout_infinite()));
  action_join(&action);
  weft_semaphore_release(shared);
}

static void list_signal_and_fail(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* semaphores[3] = {weft_cts_create_semaphore(cts, 0),
                                     weft_cts_create_semaphore(cts, 10),
                                     weft_cts_create_semaphore(cts, 0)};
  uint64_t values[3] = {2, 11, 4};
  weft_semaphore_list_t list = {3, semaphores, values};
  WEFT_ASSERT_OK(weft_semaphore_list_signal(list));
  assert_int_equal(weft_cts_query_value(semaphores[0]), 2);
  assert_int_equal(weft_cts_query_value(semaphores[1]), 11);
  assert_int_equal(weft_cts_query_value(semaphores[2]), 4);
  assert_true(weft_semaphore_list_is_reached(list));
  // Signalling the same values again is INVALID_ARGUMENT (first error).
  weft_cts_assert_status_contains(weft_semaphore_list_signal(list),
                                  WEFT_STATUS_INVALID_ARGUMENT, "already at 2");
  weft_semaphore_list_fail(list, WEFT_STATUS(CANCELLED, "user hit ctrl-c"));
  for (int i = 0; i < 3; ++i) {
    uint64_t value = 0;
    weft_cts_assert_status_contains(weft_semaphore_query(semaphores[i], &value),
                                    WEFT_STATUS_CANCELLED, "user hit ctrl-c");
  }
  assert_false(weft_semaphore_list_is_reached(list));
  for (int i = 0; i < 3; ++i) weft_semaphore_release(semaphores[i]);
}

static void mixed_device_and_host_semaphores(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* host = NULL;
  WEFT_ASSERT_OK(weft_semaphore_create(cts->allocator, 0, &host));
  weft_semaphore_t* semaphores[2] = {weft_cts_create_semaphore(cts, 0), host};
  uint64_t values[2] = {1, 1};
  weft_semaphore_list_t list = {2, semaphores, values};
  action_t actions[2];
  action_start(&actions[0], ACTION_SIGNAL, semaphores[0], 1, 5 * MS);
  action_start(&actions[1], ACTION_SIGNAL, semaphores[1], 1, 10 * MS);
  WEFT_ASSERT_OK(weft_semaphore_list_wait(WEFT_WAIT_MODE_ALL, list,
                                          weft_timeout_infinite()));
  action_join(&actions[0]);
  action_join(&actions[1]);
  weft_semaphore_release(semaphores[0]);
  weft_semaphore_release(host);
}

//===----------------------------------------------------------------------===//
// Threads
//===----------------------------------------------------------------------===//

typedef struct ping_pong_t {
  weft_semaphore_t* ping;
  weft_semaphore_t* pong;
  uint64_t round_trips;
  weft_status_t status;
} ping_pong_t;

static int pong_main(void* user_data) {
  ping_pong_t* game = (ping_pong_t*)user_data;
  weft_status_t status = WEFT_OK;
  for (uint64_t i = 1; i <= game->round_trips && weft_status_is_ok(status);
       ++i) {
    status = weft_cts_wait(game->ping, i);
    if (weft_status_is_ok(status)) {
      status = weft_semaphore_signal(game->pong, i);
    }
  }
  game->status = status;
  return 0;
}

static void ping_pong_between_threads(void** state) {
  weft_cts_t* cts = *state;
  ping_pong_t game = {weft_cts_create_semaphore(cts, 0),
                      weft_cts_create_semaphore(cts, 0), 1000, WEFT_OK};
  weft_thread_t* thread = NULL;
  WEFT_ASSERT_OK(weft_thread_create(pong_main, &game, NULL,
                                    weft_allocator_system(), &thread));
  weft_status_t status = WEFT_OK;
  for (uint64_t i = 1; i <= game.round_trips && weft_status_is_ok(status);
       ++i) {
    status = weft_semaphore_signal(game.ping, i);
    if (weft_status_is_ok(status)) status = weft_cts_wait(game.pong, i);
  }
  if (!weft_status_is_ok(status)) {
    // Unblock the other side before failing the case.
    weft_semaphore_fail(game.ping, weft_status_clone(status));
  }
  weft_thread_join(thread);
  WEFT_ASSERT_OK(status);
  WEFT_ASSERT_OK(game.status);
  assert_int_equal(weft_cts_query_value(game.pong), 1000);
  weft_semaphore_release(game.ping);
  weft_semaphore_release(game.pong);
}

typedef struct waiter_t {
  weft_semaphore_t* semaphore;
  uint64_t value;
  weft_status_t status;
  weft_thread_t* thread;
} waiter_t;

static int waiter_main(void* user_data) {
  waiter_t* waiter = (waiter_t*)user_data;
  waiter->status = weft_semaphore_wait(waiter->semaphore, waiter->value,
                                       weft_timeout_relative(10000 * MS));
  return 0;
}

static void many_waiters_on_one_value(void** state) {
  weft_cts_t* cts = *state;
  enum { kWaiters = 8 };
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  waiter_t waiters[kWaiters];
  for (int i = 0; i < kWaiters; ++i) {
    waiters[i] = (waiter_t){semaphore, 5, WEFT_OK, NULL};
    WEFT_ASSERT_OK(weft_thread_create(waiter_main, &waiters[i], NULL,
                                      weft_allocator_system(),
                                      &waiters[i].thread));
  }
  weft_sleep_until(weft_time_now() + 10 * MS);
  WEFT_ASSERT_OK(weft_semaphore_signal(semaphore, 4));  // not enough yet
  WEFT_ASSERT_OK(weft_semaphore_signal(semaphore, 5));
  for (int i = 0; i < kWaiters; ++i) {
    weft_thread_join(waiters[i].thread);
    WEFT_ASSERT_OK(waiters[i].status);
  }
  weft_semaphore_release(semaphore);
}

//===----------------------------------------------------------------------===//
// Timepoints
//===----------------------------------------------------------------------===//

static void timepoint_fires_synchronously_when_reached(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 3);
  timepoint_record_t record;
  timepoint_record_init(&record);
  weft_semaphore_register_timepoint(semaphore, 2, &record.timepoint);
  assert_int_equal(timepoint_fire_count(&record), 1);
  assert_int_equal(record.code, WEFT_STATUS_OK);
  // Fired timepoints cannot be cancelled.
  assert_false(weft_semaphore_cancel_timepoint(semaphore, &record.timepoint));
  weft_semaphore_release(semaphore);
}

static void timepoint_fires_on_signal(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  timepoint_record_t records[3];
  const uint64_t values[3] = {5, 2, 5};
  for (int i = 0; i < 3; ++i) {
    timepoint_record_init(&records[i]);
    weft_semaphore_register_timepoint(semaphore, values[i],
                                      &records[i].timepoint);
    assert_int_equal(timepoint_fire_count(&records[i]), 0);
  }
  WEFT_ASSERT_OK(weft_semaphore_signal(semaphore, 2));
  assert_int_equal(timepoint_fire_count(&records[1]), 1);
  assert_int_equal(timepoint_fire_count(&records[0]), 0);
  assert_int_equal(timepoint_fire_count(&records[2]), 0);
  WEFT_ASSERT_OK(weft_semaphore_signal(semaphore, 6));
  for (int i = 0; i < 3; ++i) {
    assert_int_equal(timepoint_fire_count(&records[i]), 1);
    assert_int_equal(records[i].code, WEFT_STATUS_OK);
  }
  // Exactly once: later signals and the destroy fire nothing more.
  WEFT_ASSERT_OK(weft_semaphore_signal(semaphore, 7));
  weft_semaphore_release(semaphore);
  for (int i = 0; i < 3; ++i) {
    assert_int_equal(timepoint_fire_count(&records[i]), 1);
  }
}

static void timepoint_fires_on_fail_with_status(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  timepoint_record_t pending;
  timepoint_record_init(&pending);
  weft_semaphore_register_timepoint(semaphore, 1, &pending.timepoint);
  weft_semaphore_fail(semaphore,
                      WEFT_STATUS(UNAVAILABLE, "device 'gpu0' was lost"));
  assert_int_equal(timepoint_fire_count(&pending), 1);
  assert_int_equal(pending.code, WEFT_STATUS_UNAVAILABLE);
  assert_non_null(strstr(pending.text, "device 'gpu0' was lost"));
  // Registering after the failure fires at once with the failure too.
  timepoint_record_t late;
  timepoint_record_init(&late);
  weft_semaphore_register_timepoint(semaphore, 1, &late.timepoint);
  assert_int_equal(timepoint_fire_count(&late), 1);
  assert_int_equal(late.code, WEFT_STATUS_UNAVAILABLE);
  assert_non_null(strstr(late.text, "device 'gpu0' was lost"));
  weft_semaphore_release(semaphore);
  assert_int_equal(timepoint_fire_count(&pending), 1);
}

static void timepoint_cancel_prevents_firing(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  timepoint_record_t records[3];
  for (int i = 0; i < 3; ++i) {
    timepoint_record_init(&records[i]);
    weft_semaphore_register_timepoint(semaphore, (uint64_t)i + 1,
                                      &records[i].timepoint);
  }
  // Cancel the middle one (list surgery both sides), then signal past all.
  assert_true(
      weft_semaphore_cancel_timepoint(semaphore, &records[1].timepoint));
  assert_false(
      weft_semaphore_cancel_timepoint(semaphore, &records[1].timepoint));
  WEFT_ASSERT_OK(weft_semaphore_signal(semaphore, 10));
  assert_int_equal(timepoint_fire_count(&records[0]), 1);
  assert_int_equal(timepoint_fire_count(&records[1]), 0);
  assert_int_equal(timepoint_fire_count(&records[2]), 1);
  // A cancelled timepoint can be registered again.
  weft_semaphore_register_timepoint(semaphore, 11, &records[1].timepoint);
  assert_int_equal(timepoint_fire_count(&records[1]), 0);
  WEFT_ASSERT_OK(weft_semaphore_signal(semaphore, 11));
  assert_int_equal(timepoint_fire_count(&records[1]), 1);
  weft_semaphore_release(semaphore);
}

static void timepoint_cancelled_at_destroy(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  timepoint_record_t record;
  timepoint_record_init(&record);
  weft_semaphore_register_timepoint(semaphore, 100, &record.timepoint);
  weft_semaphore_release(semaphore);
  assert_int_equal(timepoint_fire_count(&record), 1);
  assert_int_equal(record.code, WEFT_STATUS_CANCELLED);
}

// A timepoint whose callback signals another semaphore (chaining).
typedef struct chain_link_t {
  weft_timepoint_t timepoint;
  weft_semaphore_t* next;
  uint64_t value;
  weft_status_t status;
} chain_link_t;

static void chain_link_fn(void* user_data, weft_timepoint_t* timepoint,
                          weft_status_t status) {
  chain_link_t* link = (chain_link_t*)user_data;
  if (weft_status_is_ok(status)) {
    link->status = weft_semaphore_signal(link->next, link->value);
  } else {
    link->status = status;
  }
}

static void timepoint_callback_may_signal(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* first = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* second = weft_cts_create_semaphore(cts, 0);
  chain_link_t link = {
      {.fn = chain_link_fn}, second, 3, WEFT_OK};
  link.timepoint.user_data = &link;
  weft_semaphore_register_timepoint(first, 1, &link.timepoint);
  // The callback runs outside the lock, so it may even touch |first|.
  WEFT_ASSERT_OK(weft_semaphore_signal(first, 1));
  WEFT_ASSERT_OK(link.status);
  assert_int_equal(weft_cts_query_value(second), 3);
  weft_semaphore_release(first);
  weft_semaphore_release(second);
}

typedef struct timepoint_thread_t {
  weft_semaphore_t* semaphore;
  timepoint_record_t* records;
  uint32_t count;
} timepoint_thread_t;

static int timepoint_register_main(void* user_data) {
  timepoint_thread_t* args = (timepoint_thread_t*)user_data;
  for (uint32_t i = 0; i < args->count; ++i) {
    weft_semaphore_register_timepoint(args->semaphore, (uint64_t)i + 1,
                                      &args->records[i].timepoint);
  }
  return 0;
}

static void timepoints_race_with_signals(void** state) {
  weft_cts_t* cts = *state;
  enum { kCount = 500 };
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  timepoint_record_t* records = calloc(kCount, sizeof(*records));
  assert_non_null(records);
  for (uint32_t i = 0; i < kCount; ++i) timepoint_record_init(&records[i]);
  timepoint_thread_t args = {semaphore, records, kCount};
  weft_thread_t* thread = NULL;
  WEFT_ASSERT_OK(weft_thread_create(timepoint_register_main, &args, NULL,
                                    weft_allocator_system(), &thread));
  for (uint64_t value = 1; value <= kCount; ++value) {
    WEFT_ASSERT_OK(weft_semaphore_signal(semaphore, value));
  }
  weft_thread_join(thread);
  for (uint32_t i = 0; i < kCount; ++i) {
    assert_int_equal(timepoint_fire_count(&records[i]), 1);
    assert_int_equal(records[i].code, WEFT_STATUS_OK);
  }
  weft_semaphore_release(semaphore);
  free(records);
}

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

static void debug_name_in_error_messages(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 1);
  weft_semaphore_set_name(semaphore, "decoder.frames");
  assert_string_equal(weft_semaphore_name(semaphore), "decoder.frames");
  weft_cts_assert_status_contains(weft_semaphore_signal(semaphore, 1),
                                  WEFT_STATUS_INVALID_ARGUMENT,
                                  "'decoder.frames'");
  weft_cts_assert_status_contains(
      weft_semaphore_wait(semaphore, 2, weft_timeout_immediate()),
      WEFT_STATUS_DEADLINE_EXCEEDED, "'decoder.frames'");
  // A long name is kept whole.
  const char* long_name =
      "a-very-long-semaphore-name-that-does-not-fit-inline-0123456789";
  weft_semaphore_set_name(semaphore, long_name);
  assert_string_equal(weft_semaphore_name(semaphore), long_name);
  weft_semaphore_fail(semaphore, WEFT_STATUS(INTERNAL, "boom"));
  weft_cts_assert_status_contains(weft_cts_wait(semaphore, 5),
                                  WEFT_STATUS_INTERNAL, long_name);
  weft_semaphore_set_name(semaphore, NULL);
  assert_string_equal(weft_semaphore_name(semaphore), "");
  weft_semaphore_release(semaphore);
}

//===----------------------------------------------------------------------===//
// Queue signals that could only move a semaphore backwards
//===----------------------------------------------------------------------===//

// At submit, a queue op's signal at or below the semaphore's current value
// is INVALID_ARGUMENT naming the semaphore and both values, exactly as a
// host signal is, and nothing is queued or signalled.
static void queue_signal_not_above_current_is_invalid(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 5);
  weft_semaphore_set_name(semaphore, "progress");
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 64);
  uint32_t pattern = 1;
  const uint64_t values[2] = {3, 5};
  for (int i = 0; i < 2; ++i) {
    char expected[160];
    snprintf(expected, sizeof(expected),
             "weft_device_queue_fill: signal_list[0] signals semaphore "
             "'progress' to %llu but it is already at 5",
             (unsigned long long)values[i]);
    weft_cts_assert_status_contains(
        weft_device_queue_fill(
            cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_semaphore_list_empty(),
            weft_cts_list1(&semaphore, &values[i]), buffer, 0, 64, &pattern, 4),
        WEFT_STATUS_INVALID_ARGUMENT, expected);
  }
  // A barrier waiting for the value it signals could never move it forward.
  const uint64_t seven = 7;
  weft_cts_assert_status_contains(
      weft_device_queue_barrier(cts->device, WEFT_QUEUE_AFFINITY_ANY,
                                weft_cts_list1(&semaphore, &seven),
                                weft_cts_list1(&semaphore, &seven)),
      WEFT_STATUS_INVALID_ARGUMENT,
      "signals semaphore 'progress' to 7 but wait_list[0] waits for it to "
      "reach 7 first");
  // Untouched: still 5, not failed; the forward signal still works.
  assert_int_equal(weft_cts_query_value(semaphore), 5);
  const uint64_t six = 6;
  WEFT_ASSERT_OK(weft_device_queue_barrier(cts->device, WEFT_QUEUE_AFFINITY_ANY,
                                           weft_semaphore_list_empty(),
                                           weft_cts_list1(&semaphore, &six)));
  WEFT_ASSERT_OK(weft_cts_wait(semaphore, 6));
  weft_buffer_release(buffer);
  weft_semaphore_release(semaphore);
}

// Accepted at submit, passed by the host before the op signals: the
// semaphore fails with a message naming the op, the semaphore and both
// values, so every waiter (even of a value already reached) learns of it.
static void queue_signal_passed_after_submit_fails_semaphore(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* gate = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_set_name(gate, "gate");
  weft_semaphore_set_name(semaphore, "progress");
  weft_semaphore_t* done = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_set_name(done, "done");
  const uint64_t one = 1;
  weft_semaphore_t* signals[2] = {semaphore, done};
  const uint64_t signal_values[2] = {3, 1};
  WEFT_ASSERT_OK(weft_device_queue_barrier(
      cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_cts_list1(&gate, &one),
      (weft_semaphore_list_t){2, signals, signal_values}));
  WEFT_ASSERT_OK(weft_semaphore_signal(semaphore, 5));
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  // The op's other signal still goes through: nothing else waits forever.
  WEFT_ASSERT_OK(weft_cts_wait(done, 1));
  char expected[256];
  snprintf(expected, sizeof(expected),
           "queue_barrier (waiting for 'gate' >= 1, signalling 'progress' = "
           "3 and 'done' = 1) on queue 0 of device '%s' could not signal "
           "semaphore 'progress' to 3: it was already at 5",
           cts->device_string);
  weft_cts_assert_status_contains(weft_cts_wait(semaphore, 1),
                                  WEFT_STATUS_INVALID_ARGUMENT, expected);
  weft_semaphore_release(gate);
  weft_semaphore_release(semaphore);
  weft_semaphore_release(done);
}

int main(int argc, char** argv) {
  const struct CMUnitTest tests[] = {
      WEFT_CTS_CASE(create_and_query_initial_value),
      WEFT_CTS_CASE(queue_signal_not_above_current_is_invalid),
      WEFT_CTS_CASE(queue_signal_passed_after_submit_fails_semaphore),
      WEFT_CTS_CASE(signal_then_query),
      WEFT_CTS_CASE(signal_equal_value_is_invalid),
      WEFT_CTS_CASE(signal_lower_value_is_invalid),
      WEFT_CTS_CASE(signal_after_fail_returns_failure),
      WEFT_CTS_CASE(fail_then_wait_keeps_message),
      WEFT_CTS_CASE(wait_then_fail_from_other_thread),
      WEFT_CTS_CASE(double_failure_keeps_first),
      WEFT_CTS_CASE(query_after_fail_returns_failure),
      WEFT_CTS_CASE(wait_on_reached_value),
      WEFT_CTS_CASE(wait_for_future_value_from_thread),
      WEFT_CTS_CASE(infinite_wait_satisfied_later),
      WEFT_CTS_CASE(timeout_absolute),
      WEFT_CTS_CASE(timeout_relative),
      WEFT_CTS_CASE(timeout_immediate_polls),
      WEFT_CTS_CASE(wait_all_partially_signalled_times_out),
      WEFT_CTS_CASE(wait_all_signalled_by_threads),
      WEFT_CTS_CASE(wait_any_one_signalled),
      WEFT_CTS_CASE(wait_any_where_one_fails),
      WEFT_CTS_CASE(wait_all_where_one_fails),
      WEFT_CTS_CASE(wait_on_empty_list),
      WEFT_CTS_CASE(wait_on_long_list),
      WEFT_CTS_CASE(list_signal_and_fail),
      WEFT_CTS_CASE(mixed_device_and_host_semaphores),
      WEFT_CTS_CASE(ping_pong_between_threads),
      WEFT_CTS_CASE(many_waiters_on_one_value),
      WEFT_CTS_CASE(timepoint_fires_synchronously_when_reached),
      WEFT_CTS_CASE(timepoint_fires_on_signal),
      WEFT_CTS_CASE(timepoint_fires_on_fail_with_status),
      WEFT_CTS_CASE(timepoint_cancel_prevents_firing),
      WEFT_CTS_CASE(timepoint_cancelled_at_destroy),
      WEFT_CTS_CASE(timepoint_callback_may_signal),
      WEFT_CTS_CASE(timepoints_race_with_signals),
      WEFT_CTS_CASE(debug_name_in_error_messages),
  };
  return weft_cts_run("semaphore", tests, WEFT_CTS_COUNT(tests), argc, argv);
}
