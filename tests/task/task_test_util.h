// Helpers shared by the scheduler tests: a counting test process and
// bounded waits.
#ifndef WEFT_TESTS_TASK_TASK_TEST_UTIL_H_
#define WEFT_TESTS_TASK_TASK_TEST_UTIL_H_

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/atomics.h"
#include "base/thread.h"
#include "task/executor.h"
#include "task/process.h"
#include "weft/time.h"

#define TEST_MS (1000ll * 1000ll)
// Generous: sanitizer builds on a loaded 2-CPU machine.
#define TEST_TIMEOUT_NS (60000ll * TEST_MS)

// Polls |counter| until it reaches at least |value| or the deadline passes.
static inline bool test_wait_at_least(weft_atomic_int32_t* counter,
                                      int32_t value, weft_duration_t timeout) {
  weft_time_t deadline = weft_time_now() + timeout;
  for (uint32_t i = 0;; ++i) {
    // Acquire: the writer published what the test then checks.
    if (weft_atomic_load(counter, memory_order_acquire) >= value) return true;
    if (weft_time_now() > deadline) return false;
    if (i < 64) {
      weft_cpu_relax();
    } else if (i < 1024) {
      weft_thread_yield();
    } else {
      weft_sleep_until(weft_time_now() + 50 * 1000);
    }
  }
}

// Polls until every worker of |executor| is idle; false on time-out.
static inline bool test_wait_all_idle(weft_executor_t* executor,
                                      weft_duration_t timeout) {
  weft_time_t deadline = weft_time_now() + timeout;
  uint32_t count = weft_executor_worker_count(executor);
  while (weft_executor_idle_worker_count(executor) != count) {
    if (weft_time_now() > deadline) return false;
    weft_thread_yield();
  }
  return true;
}

// A process that records what happened to it.
typedef struct test_process_t {
  weft_process_t process;
  // Drains before it reports COMPLETED (counted over all workers).
  int32_t complete_after;
  // Nanoseconds each drain busy-waits (lets several workers overlap).
  weft_duration_t drain_ns;
  weft_atomic_int32_t drain_calls;
  weft_atomic_int32_t inside;
  weft_atomic_int32_t max_inside;
  weft_atomic_int32_t completions;
  weft_atomic_int32_t releases;
  // Drains that started after release (must stay 0).
  weft_atomic_int32_t late_drains;
  // Workers seen inside drain (bit per worker index < 64).
  weft_atomic_uint64_t worker_mask;
  // Code of the status completion got.
  weft_atomic_int32_t status_code;
  // Set when completion ran: was the release already done? (must be 0)
  weft_atomic_int32_t released_before_completion;
} test_process_t;

static inline weft_process_drain_result_t test_process_drain(
    weft_process_t* process, uint32_t worker_index) {
  test_process_t* test = (test_process_t*)process->user_data;
  if (weft_atomic_load(&test->releases, memory_order_acquire) != 0) {
    weft_atomic_fetch_add(&test->late_drains, 1, memory_order_relaxed);
  }
  int32_t inside =
      weft_atomic_fetch_add(&test->inside, 1, memory_order_relaxed) + 1;
  int32_t max = weft_atomic_load(&test->max_inside, memory_order_relaxed);
  while (inside > max && !weft_atomic_compare_exchange_weak(
                             &test->max_inside, &max, inside,
                             memory_order_relaxed, memory_order_relaxed)) {
  }
  if (worker_index < 64) {
    weft_atomic_fetch_or(&test->worker_mask, 1ull << worker_index,
                         memory_order_relaxed);
  }
  if (test->drain_ns > 0) {
    weft_time_t until = weft_time_now() + test->drain_ns;
    while (weft_time_now() < until) weft_cpu_relax();
  }
  int32_t calls =
      weft_atomic_fetch_add(&test->drain_calls, 1, memory_order_relaxed) + 1;
  weft_atomic_fetch_sub(&test->inside, 1, memory_order_relaxed);
  return calls >= test->complete_after || weft_process_is_cancelled(process)
             ? WEFT_PROCESS_DRAIN_COMPLETED
             : WEFT_PROCESS_DRAIN_DID_WORK;
}

static inline void test_process_completion(weft_process_t* process,
                                           weft_status_t status) {
  test_process_t* test = (test_process_t*)process->user_data;
  if (weft_atomic_load(&test->releases, memory_order_relaxed) != 0) {
    weft_atomic_store(&test->released_before_completion, 1,
                      memory_order_relaxed);
  }
  weft_atomic_store(&test->status_code, (int32_t)weft_status_code(status),
                    memory_order_relaxed);
  weft_status_free(status);
  // Release: the test thread that sees the count sees the status.
  weft_atomic_fetch_add(&test->completions, 1, memory_order_release);
}

static inline void test_process_release(weft_process_t* process) {
  test_process_t* test = (test_process_t*)process->user_data;
  // No worker may be inside drain any more.
  if (weft_atomic_load(&test->inside, memory_order_relaxed) != 0) {
    weft_atomic_fetch_add(&test->late_drains, 1, memory_order_relaxed);
  }
  // Release: the test thread that sees it may free the process.
  weft_atomic_fetch_add(&test->releases, 1, memory_order_release);
}

static inline void test_process_initialize(weft_executor_t* executor,
                                           uint32_t worker_budget,
                                           int32_t complete_after,
                                           test_process_t* out_test) {
  memset(out_test, 0, sizeof(*out_test));
  weft_process_initialize(executor, test_process_drain, worker_budget, out_test,
                          &out_test->process);
  out_test->process.completion = test_process_completion;
  out_test->process.release = test_process_release;
  out_test->complete_after = complete_after;
}

static inline weft_executor_t* test_executor_create(uint32_t worker_count,
                                                    weft_duration_t spin_ns,
                                                    uint32_t slot_count) {
  weft_executor_options_t options;
  weft_executor_options_initialize(&options);
  options.worker_count = worker_count;
  options.spin_ns = spin_ns;
  options.compute_slot_count = slot_count;
  weft_executor_t* executor = NULL;
  weft_status_t status =
      weft_executor_create(&options, weft_allocator_system(), &executor);
  if (!weft_status_is_ok(status)) {
    weft_status_fprint(stderr, status);
    weft_status_free(status);
  }
  return executor;
}

#endif  // WEFT_TESTS_TASK_TASK_TEST_UTIL_H_
