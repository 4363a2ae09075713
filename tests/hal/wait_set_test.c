// Tests for src/hal/wait_set: the asynchronous wait on a list (ALL or ANY,
// deadline, cancel).
// cmocka needs these first.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
// clang-format off
#include <cmocka.h>
// clang-format on

#include <stdlib.h>
#include <string.h>

#include "base/atomics.h"
#include "base/thread.h"
#include "hal/semaphore_impl.h"
#include "hal/wait_set.h"
#include "weft/semaphore.h"

#include "hal_test_util.h"

// What a ready callback saw.
typedef struct ready_record_t {
  weft_atomic_uint32_t call_count;
  weft_status_code_t code;
  char message[512];
  // The status was a bare code (no heap record: nothing was allocated).
  bool bare_code;
  // Freed by the callback when set (to prove nothing touches it after).
  void* storage_to_free;
} ready_record_t;

static void record_ready(void* user_data, weft_status_t status) {
  ready_record_t* record = (ready_record_t*)user_data;
  record->code = weft_status_code(status);
  record->bare_code = !weft_status_is_ok(status) &&
                      status == weft_status_from_code(record->code);
  weft_status_format(status, record->message, sizeof(record->message));
  weft_status_free(status);
  if (record->storage_to_free) {
    free(record->storage_to_free);
    record->storage_to_free = NULL;
  }
  // Release: the test thread acquires the count, then reads the record.
  weft_atomic_fetch_add(&record->call_count, 1u, memory_order_release);
}

static uint32_t ready_calls(ready_record_t* record) {
  // Acquire: pairs with record_ready's release.
  return weft_atomic_load(&record->call_count, memory_order_acquire);
}

static void init_record(ready_record_t* record) {
  memset(record, 0, sizeof(*record));
  atomic_init(&record->call_count, 0u);
}

static weft_semaphore_t* make_semaphore(uint64_t initial_value,
                                        const char* name) {
  weft_semaphore_t* semaphore = NULL;
  ASSERT_OK(weft_semaphore_create(weft_allocator_system(), initial_value,
                                  &semaphore));
  weft_semaphore_set_name(semaphore, name);
  return semaphore;
}

static weft_wait_set_t* allocate_set(uint32_t count) {
  weft_wait_set_t* set = calloc(1, weft_wait_set_storage_size(count));
  assert_non_null(set);
  return set;
}

static void empty_list_is_ready_at_once(void** state) {
  ready_record_t record;
  init_record(&record);
  weft_wait_set_t* set = allocate_set(0);
  record.storage_to_free = set;
  weft_wait_set_start(set, WEFT_WAIT_MODE_ALL, weft_semaphore_list_empty(),
                      WEFT_TIME_INFINITE_FUTURE, record_ready, &record);
  assert_int_equal(ready_calls(&record), 1);
  assert_int_equal(record.code, WEFT_STATUS_OK);
}

static void storage_size_grows_with_count(void** state) {
  assert_true(weft_wait_set_storage_size(0) >= sizeof(weft_wait_set_t));
  assert_int_equal(weft_wait_set_storage_size(3) -
                       weft_wait_set_storage_size(2),
                   sizeof(weft_wait_set_entry_t));
}

static void all_reached_before_start(void** state) {
  weft_semaphore_t* semaphores[3] = {make_semaphore(5, "a"),
                                     make_semaphore(2, "b"),
                                     make_semaphore(9, "c")};
  uint64_t values[3] = {5, 1, 3};
  weft_semaphore_list_t list = {3, semaphores, values};
  ready_record_t record;
  init_record(&record);
  weft_wait_set_t* set = allocate_set(3);
  record.storage_to_free = set;
  weft_wait_set_start(set, WEFT_WAIT_MODE_ALL, list, WEFT_TIME_INFINITE_FUTURE,
                      record_ready, &record);
  assert_int_equal(ready_calls(&record), 1);
  assert_int_equal(record.code, WEFT_STATUS_OK);
  for (int i = 0; i < 3; ++i) weft_semaphore_release(semaphores[i]);
}

static void reached_later_in_any_order(void** state) {
  weft_semaphore_t* semaphores[3] = {make_semaphore(0, "a"),
                                     make_semaphore(0, "b"),
                                     make_semaphore(0, "c")};
  uint64_t values[3] = {1, 2, 3};
  weft_semaphore_list_t list = {3, semaphores, values};
  ready_record_t record;
  init_record(&record);
  weft_wait_set_t* set = allocate_set(3);
  record.storage_to_free = set;
  weft_wait_set_start(set, WEFT_WAIT_MODE_ALL, list, WEFT_TIME_INFINITE_FUTURE,
                      record_ready, &record);
  assert_int_equal(ready_calls(&record), 0);
  ASSERT_OK(weft_semaphore_signal(semaphores[2], 3));
  ASSERT_OK(weft_semaphore_signal(semaphores[0], 1));
  assert_int_equal(ready_calls(&record), 0);
  ASSERT_OK(weft_semaphore_signal(semaphores[1], 1));  // not yet 2
  assert_int_equal(ready_calls(&record), 0);
  ASSERT_OK(weft_semaphore_signal(semaphores[1], 7));
  assert_int_equal(ready_calls(&record), 1);
  assert_int_equal(record.code, WEFT_STATUS_OK);
  for (int i = 0; i < 3; ++i) weft_semaphore_release(semaphores[i]);
}

static void same_semaphore_twice(void** state) {
  weft_semaphore_t* semaphore = make_semaphore(0, "dup");
  weft_semaphore_t* semaphores[2] = {semaphore, semaphore};
  uint64_t values[2] = {4, 2};
  weft_semaphore_list_t list = {2, semaphores, values};
  ready_record_t record;
  init_record(&record);
  weft_wait_set_t* set = allocate_set(2);
  record.storage_to_free = set;
  weft_wait_set_start(set, WEFT_WAIT_MODE_ALL, list, WEFT_TIME_INFINITE_FUTURE,
                      record_ready, &record);
  ASSERT_OK(weft_semaphore_signal(semaphore, 2));
  assert_int_equal(ready_calls(&record), 0);
  ASSERT_OK(weft_semaphore_signal(semaphore, 4));
  assert_int_equal(ready_calls(&record), 1);
  assert_int_equal(record.code, WEFT_STATUS_OK);
  weft_semaphore_release(semaphore);
}

static void failed_before_start(void** state) {
  weft_semaphore_t* semaphores[3] = {make_semaphore(0, "a"),
                                     make_semaphore(0, "broken"),
                                     make_semaphore(0, "c")};
  weft_semaphore_fail(semaphores[1],
                      WEFT_STATUS(DATA_LOSS, "disk ate the bytes"));
  uint64_t values[3] = {1, 1, 1};
  weft_semaphore_list_t list = {3, semaphores, values};
  ready_record_t record;
  init_record(&record);
  weft_wait_set_t* set = allocate_set(3);
  record.storage_to_free = set;
  weft_wait_set_start(set, WEFT_WAIT_MODE_ALL, list, WEFT_TIME_INFINITE_FUTURE,
                      record_ready, &record);
  assert_int_equal(ready_calls(&record), 1);
  assert_int_equal(record.code, WEFT_STATUS_DATA_LOSS);
  assert_non_null(strstr(record.message, "disk ate the bytes"));
  assert_non_null(strstr(record.message, "broken"));
  // Nothing is left registered: signalling the others fires nothing more.
  ASSERT_OK(weft_semaphore_signal(semaphores[0], 1));
  ASSERT_OK(weft_semaphore_signal(semaphores[2], 1));
  assert_int_equal(ready_calls(&record), 1);
  for (int i = 0; i < 3; ++i) weft_semaphore_release(semaphores[i]);
}

static void one_fails_others_never_signal(void** state) {
  weft_semaphore_t* semaphores[3] = {make_semaphore(0, "never1"),
                                     make_semaphore(0, "fails"),
                                     make_semaphore(0, "never2")};
  uint64_t values[3] = {1, 1, 1};
  weft_semaphore_list_t list = {3, semaphores, values};
  ready_record_t record;
  init_record(&record);
  weft_wait_set_t* set = allocate_set(3);
  record.storage_to_free = set;
  weft_wait_set_start(set, WEFT_WAIT_MODE_ALL, list, WEFT_TIME_INFINITE_FUTURE,
                      record_ready, &record);
  assert_int_equal(ready_calls(&record), 0);
  weft_semaphore_fail(semaphores[1],
                      WEFT_STATUS(ABORTED, "kernel 'k' workgroup 3 failed"));
  assert_int_equal(ready_calls(&record), 1);
  assert_int_equal(record.code, WEFT_STATUS_ABORTED);
  assert_non_null(strstr(record.message, "kernel 'k' workgroup 3 failed"));
  assert_non_null(strstr(record.message, "fails"));
  // The other timepoints were cancelled: destroying their semaphores must not
  // call into the freed set (ASan would catch it).
  for (int i = 0; i < 3; ++i) weft_semaphore_release(semaphores[i]);
  assert_int_equal(ready_calls(&record), 1);
}

static void second_failure_is_dropped(void** state) {
  weft_semaphore_t* semaphores[2] = {make_semaphore(0, "x"),
                                     make_semaphore(0, "y")};
  uint64_t values[2] = {1, 1};
  weft_semaphore_list_t list = {2, semaphores, values};
  ready_record_t record;
  init_record(&record);
  weft_wait_set_t* set = allocate_set(2);
  record.storage_to_free = set;
  weft_wait_set_start(set, WEFT_WAIT_MODE_ALL, list, WEFT_TIME_INFINITE_FUTURE,
                      record_ready, &record);
  weft_semaphore_fail(semaphores[0], WEFT_STATUS(INTERNAL, "first"));
  weft_semaphore_fail(semaphores[1], WEFT_STATUS(UNKNOWN, "second"));
  assert_int_equal(ready_calls(&record), 1);
  assert_int_equal(record.code, WEFT_STATUS_INTERNAL);
  assert_non_null(strstr(record.message, "first"));
  for (int i = 0; i < 2; ++i) weft_semaphore_release(semaphores[i]);
}

static void destroyed_semaphore_reports_cancelled(void** state) {
  weft_semaphore_t* semaphore = make_semaphore(0, "doomed");
  weft_semaphore_t* semaphores[1] = {semaphore};
  uint64_t values[1] = {1};
  weft_semaphore_list_t list = {1, semaphores, values};
  ready_record_t record;
  init_record(&record);
  weft_wait_set_t* set = allocate_set(1);
  record.storage_to_free = set;
  weft_wait_set_start(set, WEFT_WAIT_MODE_ALL, list, WEFT_TIME_INFINITE_FUTURE,
                      record_ready, &record);
  weft_semaphore_release(semaphore);
  assert_int_equal(ready_calls(&record), 1);
  assert_int_equal(record.code, WEFT_STATUS_CANCELLED);
}

//===----------------------------------------------------------------------===//
// Threaded
//===----------------------------------------------------------------------===//

typedef struct signal_thread_args_t {
  weft_semaphore_t* semaphore;
  uint64_t value;
  // When set, fail instead of signalling.
  bool fail;
} signal_thread_args_t;

static int signal_thread_main(void* user_data) {
  signal_thread_args_t* args = (signal_thread_args_t*)user_data;
  if (args->fail) {
    weft_semaphore_fail(args->semaphore,
                        WEFT_STATUS(UNAVAILABLE, "thread failed it"));
  } else {
    weft_status_t status = weft_semaphore_signal(args->semaphore, args->value);
    weft_status_free(status);
  }
  return 0;
}

static void wait_for_ready(ready_record_t* record) {
  for (int i = 0; i < 10 * 1000 * 100 && ready_calls(record) == 0; ++i) {
    weft_thread_yield();
  }
}

static void reached_from_other_threads(void** state) {
  enum { kCount = 6 };
  weft_semaphore_t* semaphores[kCount];
  uint64_t values[kCount];
  signal_thread_args_t args[kCount];
  for (int i = 0; i < kCount; ++i) {
    semaphores[i] = make_semaphore(0, "t");
    values[i] = (uint64_t)i + 1;
    args[i] = (signal_thread_args_t){semaphores[i], values[i], false};
  }
  weft_semaphore_list_t list = {kCount, semaphores, values};
  ready_record_t record;
  init_record(&record);
  weft_wait_set_t* set = allocate_set(kCount);
  record.storage_to_free = set;
  weft_wait_set_start(set, WEFT_WAIT_MODE_ALL, list, WEFT_TIME_INFINITE_FUTURE,
                      record_ready, &record);
  weft_thread_t* threads[kCount];
  // Start in reverse order so completion order varies.
  for (int i = kCount - 1; i >= 0; --i) {
    ASSERT_OK(weft_thread_create(signal_thread_main, &args[i], NULL,
                                 weft_allocator_system(), &threads[i]));
  }
  for (int i = 0; i < kCount; ++i) weft_thread_join(threads[i]);
  assert_int_equal(ready_calls(&record), 1);
  assert_int_equal(record.code, WEFT_STATUS_OK);
  for (int i = 0; i < kCount; ++i) weft_semaphore_release(semaphores[i]);
}

static void fail_from_other_thread(void** state) {
  weft_semaphore_t* semaphores[3] = {make_semaphore(0, "a"),
                                     make_semaphore(0, "b"),
                                     make_semaphore(0, "c")};
  uint64_t values[3] = {1, 1, 1};
  weft_semaphore_list_t list = {3, semaphores, values};
  ready_record_t record;
  init_record(&record);
  weft_wait_set_t* set = allocate_set(3);
  record.storage_to_free = set;
  weft_wait_set_start(set, WEFT_WAIT_MODE_ALL, list, WEFT_TIME_INFINITE_FUTURE,
                      record_ready, &record);
  signal_thread_args_t args = {semaphores[2], 1, true};
  weft_thread_t* thread = NULL;
  ASSERT_OK(weft_thread_create(signal_thread_main, &args, NULL,
                               weft_allocator_system(), &thread));
  wait_for_ready(&record);
  weft_thread_join(thread);
  assert_int_equal(ready_calls(&record), 1);
  assert_int_equal(record.code, WEFT_STATUS_UNAVAILABLE);
  assert_non_null(strstr(record.message, "thread failed it"));
  for (int i = 0; i < 3; ++i) weft_semaphore_release(semaphores[i]);
}

// Stress: many sets over a few shared semaphores, signalled (and in some
// rounds failed) by several threads while sets are still being started.
enum {
  kStressSemaphores = 4,
  kStressSets = 64,
  kStressSteps = 64,
  kStressRounds = 40,
};

typedef struct stress_signaller_t {
  weft_semaphore_t* semaphore;
  // When nonzero, fail at this step instead of signalling it.
  uint64_t fail_at;
} stress_signaller_t;

static int stress_signaller_main(void* user_data) {
  stress_signaller_t* signaller = (stress_signaller_t*)user_data;
  for (uint64_t step = 1; step <= kStressSteps; ++step) {
    if (step == signaller->fail_at) {
      weft_semaphore_fail(signaller->semaphore,
                          WEFT_STATUS(INTERNAL, "stress failure at %u",
                                      (unsigned)step));
      break;
    }
    weft_status_t status = weft_semaphore_signal(signaller->semaphore, step);
    assert_true(weft_status_is_ok(status));
    if ((step & 7) == 0) weft_thread_yield();
  }
  return 0;
}

static void concurrent_signal_stress(void** state) {
  for (int round = 0; round < kStressRounds; ++round) {
    weft_semaphore_t* semaphores[kStressSemaphores];
    stress_signaller_t signallers[kStressSemaphores];
    const bool failing_round = (round % 4) == 3;
    for (int i = 0; i < kStressSemaphores; ++i) {
      semaphores[i] = make_semaphore(0, "stress");
      signallers[i].semaphore = semaphores[i];
      signallers[i].fail_at =
          failing_round && i == 1 ? (uint64_t)(round % kStressSteps) + 1 : 0;
    }
    ready_record_t records[kStressSets];
    weft_wait_set_t* sets[kStressSets];
    weft_semaphore_t* list_semaphores[kStressSets][kStressSemaphores];
    uint64_t list_values[kStressSets][kStressSemaphores];
    for (int s = 0; s < kStressSets; ++s) {
      init_record(&records[s]);
      sets[s] = allocate_set(kStressSemaphores);
      records[s].storage_to_free = sets[s];
      for (int i = 0; i < kStressSemaphores; ++i) {
        list_semaphores[s][i] = semaphores[(s + i) % kStressSemaphores];
        list_values[s][i] = (uint64_t)((s * 7 + i * 13) % kStressSteps) + 1;
      }
    }
    weft_thread_t* threads[kStressSemaphores];
    // Start half the sets before the signallers and half while they run.
    for (int s = 0; s < kStressSets / 2; ++s) {
      weft_semaphore_list_t list = {kStressSemaphores, list_semaphores[s],
                                    list_values[s]};
      weft_wait_set_start(sets[s], WEFT_WAIT_MODE_ALL, list,
                          WEFT_TIME_INFINITE_FUTURE, record_ready, &records[s]);
    }
    for (int i = 0; i < kStressSemaphores; ++i) {
      ASSERT_OK(weft_thread_create(stress_signaller_main, &signallers[i],
                                   NULL, weft_allocator_system(),
                                   &threads[i]));
    }
    for (int s = kStressSets / 2; s < kStressSets; ++s) {
      weft_semaphore_list_t list = {kStressSemaphores, list_semaphores[s],
                                    list_values[s]};
      weft_wait_set_start(sets[s], WEFT_WAIT_MODE_ALL, list,
                          WEFT_TIME_INFINITE_FUTURE, record_ready, &records[s]);
    }
    for (int i = 0; i < kStressSemaphores; ++i) weft_thread_join(threads[i]);
    for (int s = 0; s < kStressSets; ++s) {
      // Every set completes exactly once, with OK or the stress failure.
      assert_int_equal(ready_calls(&records[s]), 1);
      if (failing_round) {
        assert_true(records[s].code == WEFT_STATUS_OK ||
                    records[s].code == WEFT_STATUS_INTERNAL);
      } else {
        assert_int_equal(records[s].code, WEFT_STATUS_OK);
      }
    }
    for (int i = 0; i < kStressSemaphores; ++i) {
      weft_semaphore_release(semaphores[i]);
    }
  }
}

// weft_wait_set_cancel: unreached entries are taken off their semaphores
// and the ready function gets the reason, once.
static void cancel_delivers_reason(void** state) {
  weft_semaphore_t* a = make_semaphore(1, "a");
  weft_semaphore_t* b = make_semaphore(0, "b");
  weft_semaphore_t* semaphores[2] = {a, b};
  uint64_t values[2] = {1, 5};
  ready_record_t record;
  init_record(&record);
  weft_wait_set_t* set = allocate_set(2);
  record.storage_to_free = set;
  weft_wait_set_start(set, WEFT_WAIT_MODE_ALL,
                      (weft_semaphore_list_t){2, semaphores, values},
                      WEFT_TIME_INFINITE_FUTURE, record_ready, &record);
  assert_int_equal(ready_calls(&record), 0);
  assert_int_equal(weft_wait_set_cancel(set, WEFT_STATUS(CANCELLED, "stop")),
                   1);
  assert_int_equal(ready_calls(&record), 1);
  assert_int_equal(record.code, WEFT_STATUS_CANCELLED);
  assert_non_null(strstr(record.message, "stop"));
  // Nothing is left on |b|: signalling it calls nothing.
  ASSERT_OK(weft_semaphore_signal(b, 5));
  assert_int_equal(ready_calls(&record), 1);
  weft_semaphore_release(a);
  weft_semaphore_release(b);
}

// A failure that came before the cancel stays the result; the reason is
// dropped (freed: the leak checker sees it otherwise).
static void cancel_after_failure_keeps_failure(void** state) {
  weft_semaphore_t* a = make_semaphore(0, "a");
  weft_semaphore_t* b = make_semaphore(0, "b");
  weft_semaphore_t* semaphores[2] = {a, b};
  uint64_t values[2] = {1, 1};
  ready_record_t record;
  init_record(&record);
  weft_wait_set_t* set = allocate_set(2);
  weft_wait_set_start(set, WEFT_WAIT_MODE_ALL,
                      (weft_semaphore_list_t){2, semaphores, values},
                      WEFT_TIME_INFINITE_FUTURE, record_ready, &record);
  weft_semaphore_fail(a, WEFT_STATUS(DATA_LOSS, "disk gone"));
  assert_int_equal(ready_calls(&record), 1);
  // Every entry already fired or was swept: nothing to take off.
  assert_int_equal(weft_wait_set_cancel(set, WEFT_STATUS(CANCELLED, "stop")),
                   0);
  assert_int_equal(ready_calls(&record), 1);
  assert_int_equal(record.code, WEFT_STATUS_DATA_LOSS);
  assert_non_null(strstr(record.message, "disk gone"));
  free(set);
  weft_semaphore_release(a);
  weft_semaphore_release(b);
}

// Cancelling a set that finished as usual changes nothing.
static void cancel_after_reached_is_noop(void** state) {
  weft_semaphore_t* a = make_semaphore(0, "a");
  weft_semaphore_t* semaphores[1] = {a};
  uint64_t values[1] = {1};
  ready_record_t record;
  init_record(&record);
  weft_wait_set_t* set = allocate_set(1);
  weft_wait_set_start(set, WEFT_WAIT_MODE_ALL,
                      (weft_semaphore_list_t){1, semaphores, values},
                      WEFT_TIME_INFINITE_FUTURE, record_ready, &record);
  ASSERT_OK(weft_semaphore_signal(a, 1));
  assert_int_equal(ready_calls(&record), 1);
  assert_int_equal(weft_wait_set_cancel(set, WEFT_STATUS(CANCELLED, "stop")),
                   0);
  assert_int_equal(ready_calls(&record), 1);
  assert_int_equal(record.code, WEFT_STATUS_OK);
  free(set);
  weft_semaphore_release(a);
}

// Cancels racing signals from another thread: the ready function runs
// exactly once, with OK or the reason, and nothing leaks.
static void cancel_races_signal(void** state) {
  for (int round = 0; round < 500; ++round) {
    weft_semaphore_t* a = make_semaphore(0, "a");
    weft_semaphore_t* semaphores[1] = {a};
    uint64_t values[1] = {1};
    ready_record_t record;
    init_record(&record);
    weft_wait_set_t* set = allocate_set(1);
    weft_wait_set_start(set, WEFT_WAIT_MODE_ALL,
                        (weft_semaphore_list_t){1, semaphores, values},
                        WEFT_TIME_INFINITE_FUTURE, record_ready, &record);
    signal_thread_args_t args = {a, 1, false};
    weft_thread_t* thread = NULL;
    ASSERT_OK(weft_thread_create(signal_thread_main, &args, NULL,
                                 weft_allocator_system(), &thread));
    weft_wait_set_cancel(set, WEFT_STATUS(CANCELLED, "stop"));
    weft_thread_join(thread);
    assert_int_equal(ready_calls(&record), 1);
    assert_true(record.code == WEFT_STATUS_OK ||
                record.code == WEFT_STATUS_CANCELLED);
    free(set);
    weft_semaphore_release(a);
  }
}

// ANY: the first entry reached finishes the set; the others are taken off
// their semaphores (signalling them later calls nothing).
static void any_fires_on_first_reached(void** state) {
  weft_semaphore_t* semaphores[3] = {
      make_semaphore(0, "a"), make_semaphore(0, "b"), make_semaphore(0, "c")};
  uint64_t values[3] = {1, 1, 1};
  ready_record_t record;
  init_record(&record);
  weft_wait_set_t* set = allocate_set(3);
  record.storage_to_free = set;
  weft_wait_set_start(set, WEFT_WAIT_MODE_ANY,
                      (weft_semaphore_list_t){3, semaphores, values},
                      WEFT_TIME_INFINITE_FUTURE, record_ready, &record);
  assert_int_equal(ready_calls(&record), 0);
  ASSERT_OK(weft_semaphore_signal(semaphores[1], 1));
  assert_int_equal(ready_calls(&record), 1);
  assert_int_equal(record.code, WEFT_STATUS_OK);
  ASSERT_OK(weft_semaphore_signal(semaphores[0], 1));
  ASSERT_OK(weft_semaphore_signal(semaphores[2], 1));
  assert_int_equal(ready_calls(&record), 1);
  for (int i = 0; i < 3; ++i) weft_semaphore_release(semaphores[i]);
}

// ANY with one entry already reached finishes inside start, registering
// nothing it does not need; a failure decides ANY too.
static void any_reached_or_failed_at_start(void** state) {
  weft_semaphore_t* a = make_semaphore(0, "a");
  weft_semaphore_t* b = make_semaphore(4, "b");
  weft_semaphore_t* semaphores[2] = {a, b};
  uint64_t values[2] = {1, 4};
  ready_record_t record;
  init_record(&record);
  weft_wait_set_t* set = allocate_set(2);
  weft_wait_set_start(set, WEFT_WAIT_MODE_ANY,
                      (weft_semaphore_list_t){2, semaphores, values},
                      WEFT_TIME_INFINITE_FUTURE, record_ready, &record);
  assert_int_equal(ready_calls(&record), 1);
  assert_int_equal(record.code, WEFT_STATUS_OK);
  // A later signal of |a| finds nothing registered.
  ASSERT_OK(weft_semaphore_signal(a, 1));
  assert_int_equal(ready_calls(&record), 1);
  // ANY over a failed semaphore: its failure, annotated.
  weft_semaphore_fail(a, WEFT_STATUS(DATA_LOSS, "gone"));
  values[0] = 2;
  values[1] = 9;
  init_record(&record);
  weft_wait_set_start(set, WEFT_WAIT_MODE_ANY,
                      (weft_semaphore_list_t){2, semaphores, values},
                      WEFT_TIME_INFINITE_FUTURE, record_ready, &record);
  assert_int_equal(ready_calls(&record), 1);
  assert_int_equal(record.code, WEFT_STATUS_DATA_LOSS);
  assert_non_null(strstr(record.message, "'a' to reach 2"));
  free(set);
  weft_semaphore_release(a);
  weft_semaphore_release(b);
}

// A deadline is checked by the owner: before it nothing happens; at it the
// set finishes with the bare DEADLINE_EXCEEDED code (no status record is
// allocated for an expiry) and its entries are off their semaphores.
static void deadline_expires_with_bare_code(void** state) {
  weft_semaphore_t* a = make_semaphore(0, "a");
  weft_semaphore_t* semaphores[1] = {a};
  uint64_t values[1] = {1};
  ready_record_t record;
  init_record(&record);
  weft_wait_set_t* set = allocate_set(1);
  record.storage_to_free = set;
  const weft_time_t deadline = 1000;
  weft_wait_set_start(set, WEFT_WAIT_MODE_ALL,
                      (weft_semaphore_list_t){1, semaphores, values}, deadline,
                      record_ready, &record);
  assert_false(weft_wait_set_check_deadline(set, deadline - 1));
  assert_int_equal(ready_calls(&record), 0);
  assert_true(weft_wait_set_check_deadline(set, deadline));
  assert_int_equal(ready_calls(&record), 1);
  assert_int_equal(record.code, WEFT_STATUS_DEADLINE_EXCEEDED);
  assert_true(record.bare_code);
  ASSERT_OK(weft_semaphore_signal(a, 1));
  assert_int_equal(ready_calls(&record), 1);
  weft_semaphore_release(a);
}

// A set that finished before its deadline keeps its own result when the
// owner checks the deadline late.
static void deadline_after_finish_keeps_result(void** state) {
  weft_semaphore_t* a = make_semaphore(0, "a");
  weft_semaphore_t* semaphores[1] = {a};
  uint64_t values[1] = {1};
  ready_record_t record;
  init_record(&record);
  weft_wait_set_t* set = allocate_set(1);
  weft_wait_set_start(set, WEFT_WAIT_MODE_ALL,
                      (weft_semaphore_list_t){1, semaphores, values}, 10,
                      record_ready, &record);
  ASSERT_OK(weft_semaphore_signal(a, 1));
  assert_true(weft_wait_set_check_deadline(set, 20));
  assert_int_equal(ready_calls(&record), 1);
  assert_int_equal(record.code, WEFT_STATUS_OK);
  free(set);
  weft_semaphore_release(a);
}

//===----------------------------------------------------------------------===//
// Issued entries (weft_wait_set_start_issued): met when the value is issued
// to the device that owns the payload, or reached, or failed.
//===----------------------------------------------------------------------===//

static void issued_entry_fires_on_advance_not_plain_one(void** state) {
  (void)state;
  weft_semaphore_t* a = make_semaphore(0, "a");
  weft_semaphore_t* b = make_semaphore(0, "b");
  weft_semaphore_t* semaphores[2] = {a, b};
  uint64_t values[2] = {5, 5};
  weft_semaphore_list_t list = {2, semaphores, values};
  ready_record_t record;
  init_record(&record);
  weft_wait_set_t* set = allocate_set(2);
  // Entry 0 (a) counts once issued; entry 1 (b) only once reached.
  weft_wait_set_start_issued(set, WEFT_WAIT_MODE_ALL, list, /*entries=*/1u,
                             WEFT_TIME_INFINITE_FUTURE, record_ready, &record);
  weft_semaphore_advance_issued(a, 4);  // short of 5
  weft_semaphore_advance_issued(b, 9);  // b's entry is a plain one
  assert_int_equal(ready_calls(&record), 0);
  weft_semaphore_advance_issued(a, 5);
  assert_int_equal(ready_calls(&record), 0);
  ASSERT_OK(weft_semaphore_signal(b, 5));
  assert_int_equal(ready_calls(&record), 1);
  assert_int_equal(record.code, WEFT_STATUS_OK);
  // Issuing moves no value: a is still at 0 for everyone else.
  uint64_t value = 99;
  ASSERT_OK(weft_semaphore_query(a, &value));
  assert_int_equal(value, 0);
  free(set);
  weft_semaphore_release(a);
  weft_semaphore_release(b);
}

static void issued_entry_already_issued_or_reached_at_start(void** state) {
  (void)state;
  weft_semaphore_t* a = make_semaphore(0, "a");
  weft_semaphore_t* b = make_semaphore(0, "b");
  weft_semaphore_advance_issued(a, 3);
  ASSERT_OK(weft_semaphore_signal(b, 3));
  weft_semaphore_t* semaphores[2] = {a, b};
  uint64_t values[2] = {3, 2};
  weft_semaphore_list_t list = {2, semaphores, values};
  ready_record_t record;
  init_record(&record);
  weft_wait_set_t* set = allocate_set(2);
  weft_wait_set_start_issued(set, WEFT_WAIT_MODE_ALL, list, /*entries=*/3u,
                             WEFT_TIME_INFINITE_FUTURE, record_ready, &record);
  assert_int_equal(ready_calls(&record), 1);
  assert_int_equal(record.code, WEFT_STATUS_OK);
  free(set);
  weft_semaphore_release(a);
  weft_semaphore_release(b);
}

static void issued_entry_fails_and_cancels(void** state) {
  (void)state;
  weft_semaphore_t* a = make_semaphore(0, "a");
  weft_semaphore_t* semaphores[1] = {a};
  uint64_t values[1] = {7};
  weft_semaphore_list_t list = {1, semaphores, values};
  // A failure fires an issued entry with the original message.
  ready_record_t failed;
  init_record(&failed);
  weft_wait_set_t* set = allocate_set(1);
  weft_wait_set_start_issued(set, WEFT_WAIT_MODE_ALL, list, 1u,
                             WEFT_TIME_INFINITE_FUTURE, record_ready, &failed);
  // A second set on the same value, cancelled: it is taken off the issued
  // list (a later advance must not touch it).
  ready_record_t cancelled;
  init_record(&cancelled);
  weft_wait_set_t* other = allocate_set(1);
  weft_wait_set_start_issued(other, WEFT_WAIT_MODE_ALL, list, 1u,
                             WEFT_TIME_INFINITE_FUTURE, record_ready,
                             &cancelled);
  assert_int_equal(weft_wait_set_cancel(
                       other, weft_status_from_code(WEFT_STATUS_CANCELLED)),
                   1);
  assert_int_equal(ready_calls(&cancelled), 1);
  assert_int_equal(cancelled.code, WEFT_STATUS_CANCELLED);
  free(other);
  weft_semaphore_fail(a, WEFT_STATUS(DATA_LOSS, "the upstream op broke"));
  assert_int_equal(ready_calls(&failed), 1);
  assert_int_equal(failed.code, WEFT_STATUS_DATA_LOSS);
  assert_non_null(strstr(failed.message, "the upstream op broke"));
  // Issuing a failed semaphore fires nothing and changes nothing.
  weft_semaphore_advance_issued(a, 100);
  assert_int_equal(ready_calls(&failed), 1);
  free(set);
  weft_semaphore_release(a);
}

static void issued_entry_cancelled_when_semaphore_destroyed(void** state) {
  (void)state;
  weft_semaphore_t* a = make_semaphore(0, "a");
  weft_semaphore_t* semaphores[1] = {a};
  uint64_t values[1] = {1};
  weft_semaphore_list_t list = {1, semaphores, values};
  ready_record_t record;
  init_record(&record);
  weft_wait_set_t* set = allocate_set(1);
  weft_wait_set_start_issued(set, WEFT_WAIT_MODE_ALL, list, 1u,
                             WEFT_TIME_INFINITE_FUTURE, record_ready, &record);
  weft_semaphore_release(a);
  assert_int_equal(ready_calls(&record), 1);
  assert_int_equal(record.code, WEFT_STATUS_CANCELLED);
  free(set);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(empty_list_is_ready_at_once),
      cmocka_unit_test(storage_size_grows_with_count),
      cmocka_unit_test(all_reached_before_start),
      cmocka_unit_test(reached_later_in_any_order),
      cmocka_unit_test(same_semaphore_twice),
      cmocka_unit_test(failed_before_start),
      cmocka_unit_test(one_fails_others_never_signal),
      cmocka_unit_test(second_failure_is_dropped),
      cmocka_unit_test(destroyed_semaphore_reports_cancelled),
      cmocka_unit_test(reached_from_other_threads),
      cmocka_unit_test(fail_from_other_thread),
      cmocka_unit_test(concurrent_signal_stress),
      cmocka_unit_test(cancel_delivers_reason),
      cmocka_unit_test(cancel_after_failure_keeps_failure),
      cmocka_unit_test(cancel_after_reached_is_noop),
      cmocka_unit_test(cancel_races_signal),
      cmocka_unit_test(any_fires_on_first_reached),
      cmocka_unit_test(any_reached_or_failed_at_start),
      cmocka_unit_test(deadline_expires_with_bare_code),
      cmocka_unit_test(deadline_after_finish_keeps_result),
      cmocka_unit_test(issued_entry_fires_on_advance_not_plain_one),
      cmocka_unit_test(issued_entry_already_issued_or_reached_at_start),
      cmocka_unit_test(issued_entry_fails_and_cancels),
      cmocka_unit_test(issued_entry_cancelled_when_semaphore_destroyed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
