// Tests for the process life cycle: suspend/resume, completion exactly once,
// release after the last drainer, first failure wins, dependents,
// cancellation and wake.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

// cmocka needs the headers above first.
#include <cmocka.h>

#include "task_test_util.h"

static int setup_executor(void** state) {
  weft_executor_t* executor = test_executor_create(4, 0, 0);
  *state = executor;
  return executor ? 0 : -1;
}

static int teardown_executor(void** state) {
  weft_executor_release((weft_executor_t*)*state);
  return 0;
}

// A process runs only when its suspend count reaches 0.
static void test_resume_schedules_at_zero(void** state) {
  weft_executor_t* executor = (weft_executor_t*)*state;
  test_process_t test;
  test_process_initialize(executor, 1, 1, &test);
  weft_process_suspend(&test.process);
  weft_process_suspend(&test.process);
  weft_process_resume(&test.process);
  weft_process_resume(&test.process);
  // Had a resume scheduled it, a worker would be busy with it until it
  // drained it: once every worker is idle, no drain can still come.
  assert_true(test_wait_all_idle(executor, TEST_TIMEOUT_NS));
  assert_int_equal(weft_atomic_load(&test.drain_calls, memory_order_acquire),
                   0);
  assert_false(weft_process_is_completed(&test.process));
  weft_process_resume(&test.process);
  assert_true(test_wait_at_least(&test.releases, 1, TEST_TIMEOUT_NS));
  assert_int_equal(weft_atomic_load(&test.completions, memory_order_acquire),
                   1);
  assert_int_equal(weft_atomic_load(&test.status_code, memory_order_relaxed),
                   WEFT_STATUS_OK);
  assert_int_equal(weft_atomic_load(&test.drain_calls, memory_order_relaxed),
                   1);
  assert_true(weft_process_is_completed(&test.process));
}

// A budget-1 process drained many times runs on one worker at a time.
static void test_budget_one_is_exclusive(void** state) {
  weft_executor_t* executor = (weft_executor_t*)*state;
  test_process_t test;
  test_process_initialize(executor, 1, 2000, &test);
  weft_process_resume(&test.process);
  assert_true(test_wait_at_least(&test.releases, 1, TEST_TIMEOUT_NS));
  assert_int_equal(weft_atomic_load(&test.max_inside, memory_order_relaxed), 1);
  assert_int_equal(weft_atomic_load(&test.drain_calls, memory_order_relaxed),
                   2000);
  assert_int_equal(weft_atomic_load(&test.completions, memory_order_relaxed),
                   1);
}

// Every drainer of a budget-N process says COMPLETED at once: completion
// still runs exactly once and release only after the last one left.
static void test_completion_once_under_concurrent_drains(void** state) {
  weft_executor_t* executor = (weft_executor_t*)*state;
  for (int round = 0; round < 200; ++round) {
    test_process_t test;
    // Every drain from the 4th on reports COMPLETED; drains overlap.
    test_process_initialize(executor, 4, 4, &test);
    test.drain_ns = 20 * 1000;
    weft_process_resume(&test.process);
    assert_true(test_wait_at_least(&test.releases, 1, TEST_TIMEOUT_NS));
    assert_int_equal(weft_atomic_load(&test.completions, memory_order_relaxed),
                     1);
    assert_int_equal(weft_atomic_load(&test.late_drains, memory_order_relaxed),
                     0);
    assert_int_equal(weft_atomic_load(&test.released_before_completion,
                                      memory_order_relaxed),
                     0);
    assert_true(weft_atomic_load(&test.max_inside, memory_order_relaxed) <= 4);
    // Nothing may touch the process after release: once every worker is
    // idle (none still inside a drain), the counters did not move.
    int32_t calls = weft_atomic_load(&test.drain_calls, memory_order_relaxed);
    if (round % 50 == 0) {
      assert_true(test_wait_all_idle(executor, TEST_TIMEOUT_NS));
      assert_int_equal(
          weft_atomic_load(&test.drain_calls, memory_order_relaxed), calls);
    }
  }
}

typedef struct failing_process_t {
  test_process_t test;
  weft_atomic_int32_t reports;
  weft_atomic_int32_t first_reported;
} failing_process_t;

static weft_process_drain_result_t failing_drain(weft_process_t* process,
                                                 uint32_t worker_index) {
  failing_process_t* failing = (failing_process_t*)process->user_data;
  int32_t n = weft_atomic_fetch_add(&failing->reports, 1, memory_order_relaxed);
  if (n == 0) {
    weft_process_report_failure(
        process,
        WEFT_STATUS(DATA_LOSS, "first failure (worker %u)", worker_index));
    // Release: drainers that see the flag report after us.
    weft_atomic_store(&failing->first_reported, 1, memory_order_release);
  } else {
    // The others report only once the first is in (so which one is first is
    // known); they race among themselves.
    while (!weft_atomic_load(&failing->first_reported, memory_order_acquire)) {
      weft_cpu_relax();
    }
    if (n < 64) {
      weft_process_report_failure(process,
                                  WEFT_STATUS(ABORTED, "later failure %d", n));
      weft_process_report_failure(process, WEFT_OK);
    }
  }
  return n >= 64 ? WEFT_PROCESS_DRAIN_COMPLETED : WEFT_PROCESS_DRAIN_DID_WORK;
}

// The first failure reported is the one completion gets; the others are
// freed (ASan checks nothing leaks).
static void test_first_error_wins(void** state) {
  weft_executor_t* executor = (weft_executor_t*)*state;
  failing_process_t failing;
  memset(&failing, 0, sizeof(failing));
  test_process_initialize(executor, 4, 0, &failing.test);
  failing.test.process.drain = failing_drain;
  failing.test.process.user_data = &failing;
  weft_process_resume(&failing.test.process);
  assert_true(test_wait_at_least(&failing.test.releases, 1, TEST_TIMEOUT_NS));
  assert_int_equal(
      weft_atomic_load(&failing.test.status_code, memory_order_relaxed),
      WEFT_STATUS_DATA_LOSS);
  assert_int_equal(
      weft_atomic_load(&failing.test.completions, memory_order_relaxed), 1);
}

// A failure reported after completion (from a late drainer) is freed at
// release, and a failure beats cancellation.
static void test_failure_beats_cancel(void** state) {
  weft_executor_t* executor = (weft_executor_t*)*state;
  test_process_t test;
  test_process_initialize(executor, 1, 1, &test);
  weft_process_report_failure(&test.process,
                              WEFT_STATUS(INTERNAL, "failed before running"));
  weft_process_cancel(&test.process);
  assert_int_equal(weft_atomic_load(&test.releases, memory_order_acquire), 1);
  assert_int_equal(weft_atomic_load(&test.status_code, memory_order_relaxed),
                   WEFT_STATUS_INTERNAL);
  assert_int_equal(weft_atomic_load(&test.drain_calls, memory_order_relaxed),
                   0);
}

// Completion resumes dependents; a dependent with two prerequisites runs
// after both.
static void test_dependents_resumed(void** state) {
  weft_executor_t* executor = (weft_executor_t*)*state;
  for (int round = 0; round < 100; ++round) {
    test_process_t a, b, c;
    test_process_initialize(executor, 1, 3, &a);
    test_process_initialize(executor, 4, 5, &b);
    test_process_initialize(executor, 2, 1, &c);
    weft_process_t* a_dependents[2] = {&b.process, &c.process};
    weft_process_t* b_dependents[1] = {&c.process};
    weft_process_set_dependents(&a.process, a_dependents, 2);
    weft_process_set_dependents(&b.process, b_dependents, 1);
    // Drop b's and c's own initial suspensions; they still wait on a (and c
    // on b).
    weft_process_resume(&b.process);
    weft_process_resume(&c.process);
    assert_false(weft_process_is_completed(&b.process));
    weft_process_resume(&a.process);
    assert_true(test_wait_at_least(&c.releases, 1, TEST_TIMEOUT_NS));
    assert_true(test_wait_at_least(&b.releases, 1, TEST_TIMEOUT_NS));
    assert_true(test_wait_at_least(&a.releases, 1, TEST_TIMEOUT_NS));
    assert_int_equal(weft_atomic_load(&a.completions, memory_order_relaxed), 1);
    assert_int_equal(weft_atomic_load(&b.completions, memory_order_relaxed), 1);
    assert_int_equal(weft_atomic_load(&c.completions, memory_order_relaxed), 1);
    assert_true(weft_atomic_load(&b.drain_calls, memory_order_relaxed) >= 5);
  }
}

// Cancelling a suspended process completes it at once with CANCELLED and
// resumes its dependents; a later resume does nothing.
static void test_cancel_suspended(void** state) {
  weft_executor_t* executor = (weft_executor_t*)*state;
  test_process_t a, b;
  test_process_initialize(executor, 1, 1, &a);
  test_process_initialize(executor, 1, 1, &b);
  weft_process_t* dependents[1] = {&b.process};
  weft_process_set_dependents(&a.process, dependents, 1);
  weft_process_resume(&b.process);
  weft_process_cancel(&a.process);
  assert_true(weft_process_is_cancelled(&a.process));
  assert_int_equal(weft_atomic_load(&a.completions, memory_order_acquire), 1);
  assert_int_equal(weft_atomic_load(&a.releases, memory_order_acquire), 1);
  assert_int_equal(weft_atomic_load(&a.status_code, memory_order_relaxed),
                   WEFT_STATUS_CANCELLED);
  weft_process_resume(&a.process);
  assert_true(test_wait_at_least(&b.releases, 1, TEST_TIMEOUT_NS));
  assert_int_equal(weft_atomic_load(&b.status_code, memory_order_relaxed),
                   WEFT_STATUS_OK);
  assert_true(test_wait_all_idle(executor, TEST_TIMEOUT_NS));
  assert_int_equal(weft_atomic_load(&a.drain_calls, memory_order_relaxed), 0);
  assert_int_equal(weft_atomic_load(&a.completions, memory_order_relaxed), 1);
}

// A persistent process: drains a counter of pending items, NO_WORK when
// there is none, COMPLETED once cancelled.
typedef struct persistent_process_t {
  test_process_t test;
  weft_atomic_int32_t pending;
  weft_atomic_int32_t observed;
} persistent_process_t;

static weft_process_drain_result_t persistent_drain(weft_process_t* process,
                                                    uint32_t worker_index) {
  (void)worker_index;
  persistent_process_t* p = (persistent_process_t*)process->user_data;
  weft_atomic_fetch_add(&p->test.drain_calls, 1, memory_order_relaxed);
  if (weft_process_is_cancelled(process)) return WEFT_PROCESS_DRAIN_COMPLETED;
  // Acquire: pairs with the producer's release of the item.
  int32_t taken = weft_atomic_exchange(&p->pending, 0, memory_order_acquire);
  if (taken == 0) return WEFT_PROCESS_DRAIN_NO_WORK;
  // Release: the producer waiting on |observed| sees our drain finished.
  weft_atomic_fetch_add(&p->observed, taken, memory_order_release);
  return WEFT_PROCESS_DRAIN_DID_WORK;
}

static void persistent_initialize(weft_executor_t* executor, uint32_t budget,
                                  persistent_process_t* out_p) {
  memset(out_p, 0, sizeof(*out_p));
  test_process_initialize(executor, budget, 0, &out_p->test);
  out_p->test.process.drain = persistent_drain;
  out_p->test.process.user_data = out_p;
}

// Cancelling an idle persistent process wakes it; its drain completes it
// with CANCELLED.
static void test_cancel_idle_persistent(void** state) {
  weft_executor_t* executor = (weft_executor_t*)*state;
  for (uint32_t budget = 1; budget <= 4; budget += 3) {
    persistent_process_t p;
    persistent_initialize(executor, budget, &p);
    // Relaxed test bookkeeping: the completion and release counters live in
    // p.test.
    weft_process_resume(&p.test.process);
    assert_true(test_wait_at_least(&p.test.drain_calls, 1, TEST_TIMEOUT_NS));
    weft_atomic_fetch_add(&p.pending, 1, memory_order_release);
    weft_process_wake(&p.test.process);
    assert_true(test_wait_at_least(&p.observed, 1, TEST_TIMEOUT_NS));
    weft_process_cancel(&p.test.process);
    assert_true(test_wait_at_least(&p.test.releases, 1, TEST_TIMEOUT_NS));
    assert_int_equal(
        weft_atomic_load(&p.test.status_code, memory_order_relaxed),
        WEFT_STATUS_CANCELLED);
    assert_int_equal(
        weft_atomic_load(&p.test.completions, memory_order_relaxed), 1);
  }
}

// desired workers is clamped to [1, budget].
static void test_desired_workers_clamped(void** state) {
  weft_executor_t* executor = (weft_executor_t*)*state;
  weft_process_t process;
  weft_process_initialize(executor, persistent_drain, 6, NULL, &process);
  assert_int_equal(weft_process_desired_workers(&process), 6);
  weft_process_set_desired_workers(&process, 0);
  assert_int_equal(weft_process_desired_workers(&process), 1);
  weft_process_set_desired_workers(&process, 100);
  assert_int_equal(weft_process_desired_workers(&process), 6);
  weft_process_set_desired_workers(&process, 3);
  assert_int_equal(weft_process_desired_workers(&process), 3);
  weft_process_t zero;
  weft_process_initialize(executor, persistent_drain, 0, NULL, &zero);
  assert_int_equal(zero.worker_budget, 1);
}

// Processes are never scheduled while suspended, even when woken.
static void test_wake_while_suspended(void** state) {
  weft_executor_t* executor = (weft_executor_t*)*state;
  persistent_process_t p;
  persistent_initialize(executor, 1, &p);
  weft_atomic_fetch_add(&p.pending, 1, memory_order_release);
  weft_process_wake(&p.test.process);
  assert_true(test_wait_all_idle(executor, TEST_TIMEOUT_NS));
  assert_int_equal(weft_atomic_load(&p.test.drain_calls, memory_order_relaxed),
                   0);
  weft_process_resume(&p.test.process);
  assert_true(test_wait_at_least(&p.observed, 1, TEST_TIMEOUT_NS));
  weft_process_cancel(&p.test.process);
  assert_true(test_wait_at_least(&p.test.releases, 1, TEST_TIMEOUT_NS));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_resume_schedules_at_zero),
      cmocka_unit_test(test_budget_one_is_exclusive),
      cmocka_unit_test(test_completion_once_under_concurrent_drains),
      cmocka_unit_test(test_first_error_wins),
      cmocka_unit_test(test_failure_beats_cancel),
      cmocka_unit_test(test_dependents_resumed),
      cmocka_unit_test(test_cancel_suspended),
      cmocka_unit_test(test_cancel_idle_persistent),
      cmocka_unit_test(test_desired_workers_clamped),
      cmocka_unit_test(test_wake_while_suspended),
  };
  return cmocka_run_group_tests(tests, setup_executor, teardown_executor);
}
