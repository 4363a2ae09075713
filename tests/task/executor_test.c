// Tests for the executor: compute slots and overflow, the immediate list,
// sleep/wake stress, wake racing NO_WORK, shutdown, worker-local memory.

#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

// cmocka needs the headers above first.
#include <cmocka.h>

#include "base/wait_assist.h"
#include "task/affinity_set.h"
#include "task_test_util.h"

// Whether this is a sanitizer build (fewer rounds there).
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define TEST_SCALE 2
#else
#define TEST_SCALE 1
#endif

// A budget-N process with a long drain is entered by every worker.
static void test_budget_n_drained_by_all_workers(void** state) {
  (void)state;
  const uint32_t worker_count = 4;
  weft_executor_t* executor = test_executor_create(worker_count, 0, 0);
  assert_non_null(executor);
  test_process_t test;
  test_process_initialize(executor, worker_count, 1 << 30, &test);
  test.drain_ns = 100 * 1000;
  weft_process_resume(&test.process);
  weft_time_t deadline = weft_time_now() + TEST_TIMEOUT_NS;
  while (weft_atomic_load(&test.worker_mask, memory_order_relaxed) !=
             (1ull << worker_count) - 1 &&
         weft_time_now() < deadline) {
    weft_sleep_until(weft_time_now() + TEST_MS);
  }
  assert_int_equal(weft_atomic_load(&test.worker_mask, memory_order_relaxed),
                   (1ull << worker_count) - 1);
  weft_process_cancel(&test.process);
  assert_true(test_wait_at_least(&test.releases, 1, TEST_TIMEOUT_NS));
  assert_int_equal(weft_atomic_load(&test.completions, memory_order_relaxed),
                   1);
  assert_int_equal(weft_atomic_load(&test.status_code, memory_order_relaxed),
                   WEFT_STATUS_CANCELLED);
  assert_int_equal(weft_atomic_load(&test.late_drains, memory_order_relaxed),
                   0);
  assert_true(weft_atomic_load(&test.max_inside, memory_order_relaxed) <=
              (int32_t)worker_count);
  weft_executor_release(executor);
}

// The desired worker count caps how many workers are inside at once.
static void test_desired_workers_caps_drainers(void** state) {
  (void)state;
  weft_executor_t* executor = test_executor_create(4, 0, 0);
  assert_non_null(executor);
  test_process_t test;
  test_process_initialize(executor, 4, 400 / TEST_SCALE, &test);
  test.drain_ns = 50 * 1000;
  weft_process_set_desired_workers(&test.process, 2);
  weft_process_resume(&test.process);
  assert_true(test_wait_at_least(&test.releases, 1, TEST_TIMEOUT_NS));
  assert_true(weft_atomic_load(&test.max_inside, memory_order_relaxed) <= 2);
  weft_executor_release(executor);
}

// A drain that raises its desired worker count (a region with more tiles)
// gets more workers; before that, only one is inside.
typedef struct adaptive_process_t {
  test_process_t test;
  weft_atomic_int32_t max_inside_before;
  weft_atomic_int32_t raised;
} adaptive_process_t;

static weft_process_drain_result_t adaptive_drain(weft_process_t* process,
                                                  uint32_t worker_index) {
  adaptive_process_t* p = (adaptive_process_t*)process->user_data;
  int32_t inside =
      weft_atomic_fetch_add(&p->test.inside, 1, memory_order_relaxed) + 1;
  if (!weft_atomic_load(&p->raised, memory_order_relaxed) && inside > 1) {
    weft_atomic_store(&p->max_inside_before, inside, memory_order_relaxed);
  }
  weft_atomic_fetch_or(&p->test.worker_mask, 1ull << worker_index,
                       memory_order_relaxed);
  weft_time_t until = weft_time_now() + 20 * 1000;
  while (weft_time_now() < until) weft_cpu_relax();
  int32_t calls =
      weft_atomic_fetch_add(&p->test.drain_calls, 1, memory_order_relaxed) + 1;
  weft_atomic_fetch_sub(&p->test.inside, 1, memory_order_relaxed);
  if (calls == 50) {
    weft_atomic_store(&p->raised, 1, memory_order_relaxed);
    weft_process_set_desired_workers(process, 4);
  }
  uint64_t mask = weft_atomic_load(&p->test.worker_mask, memory_order_relaxed);
  bool all = __builtin_popcountll(mask) == 4;
  return (all && calls > 50) || weft_process_is_cancelled(process)
             ? WEFT_PROCESS_DRAIN_COMPLETED
             : WEFT_PROCESS_DRAIN_DID_WORK;
}

static void test_raising_desired_workers_wakes_more(void** state) {
  (void)state;
  weft_executor_t* executor = test_executor_create(4, 0, 0);
  assert_non_null(executor);
  for (int round = 0; round < 10; ++round) {
    adaptive_process_t p;
    memset(&p, 0, sizeof(p));
    test_process_initialize(executor, 4, 0, &p.test);
    p.test.process.drain = adaptive_drain;
    p.test.process.user_data = &p;
    weft_process_set_desired_workers(&p.test.process, 1);
    weft_process_resume(&p.test.process);
    // Every worker joins once the count is raised.
    assert_true(test_wait_at_least(&p.test.releases, 1, TEST_TIMEOUT_NS));
    assert_int_equal(
        weft_atomic_load(&p.max_inside_before, memory_order_relaxed), 0);
    assert_int_equal(
        weft_atomic_load(&p.test.worker_mask, memory_order_relaxed), 0xF);
  }
  weft_executor_release(executor);
}

// Thousands of budget-1 processes, scheduled from several threads.
typedef struct scheduler_thread_t {
  test_process_t* processes;
  int count;
} scheduler_thread_t;

static int scheduler_thread_main(void* user_data) {
  scheduler_thread_t* thread = (scheduler_thread_t*)user_data;
  for (int i = 0; i < thread->count; ++i) {
    weft_process_resume(&thread->processes[i].process);
  }
  return 0;
}

static void test_many_immediate_processes(void** state) {
  (void)state;
  weft_executor_t* executor =
      test_executor_create(3, WEFT_EXECUTOR_SPIN_DEFAULT, 0);
  assert_non_null(executor);
  enum { kThreads = 4 };
  const int per_thread = 2500 / TEST_SCALE;
  const int count = kThreads * per_thread;
  test_process_t* processes =
      (test_process_t*)calloc((size_t)count, sizeof(*processes));
  assert_non_null(processes);
  for (int i = 0; i < count; ++i) {
    test_process_initialize(executor, 1, 1 + i % 5, &processes[i]);
  }
  scheduler_thread_t threads[kThreads];
  weft_thread_t* handles[kThreads];
  for (int t = 0; t < kThreads; ++t) {
    threads[t].processes = &processes[t * per_thread];
    threads[t].count = per_thread;
    weft_thread_params_t params = {.name = "scheduler", .cpu = -1};
    weft_status_t status =
        weft_thread_create(scheduler_thread_main, &threads[t], &params,
                           weft_allocator_system(), &handles[t]);
    assert_true(weft_status_is_ok(status));
  }
  for (int t = 0; t < kThreads; ++t) weft_thread_join(handles[t]);
  for (int i = 0; i < count; ++i) {
    assert_true(test_wait_at_least(&processes[i].releases, 1, TEST_TIMEOUT_NS));
    assert_int_equal(
        weft_atomic_load(&processes[i].completions, memory_order_relaxed), 1);
    assert_int_equal(
        weft_atomic_load(&processes[i].drain_calls, memory_order_relaxed),
        1 + i % 5);
    assert_int_equal(
        weft_atomic_load(&processes[i].max_inside, memory_order_relaxed), 1);
  }
  weft_executor_release(executor);
  free(processes);
}

// More budget-N processes than compute slots: the overflow list holds the
// rest and every one completes.
static void test_more_compute_processes_than_slots(void** state) {
  (void)state;
  weft_executor_t* executor = test_executor_create(4, 0, 2);
  assert_non_null(executor);
  const int count = 200 / TEST_SCALE;
  test_process_t* processes =
      (test_process_t*)calloc((size_t)count, sizeof(*processes));
  assert_non_null(processes);
  for (int i = 0; i < count; ++i) {
    test_process_initialize(executor, 2 + i % 3, 4 + i % 7, &processes[i]);
  }
  for (int i = 0; i < count; ++i) weft_process_resume(&processes[i].process);
  for (int i = 0; i < count; ++i) {
    assert_true(test_wait_at_least(&processes[i].releases, 1, TEST_TIMEOUT_NS));
    assert_int_equal(
        weft_atomic_load(&processes[i].completions, memory_order_relaxed), 1);
    assert_int_equal(
        weft_atomic_load(&processes[i].late_drains, memory_order_relaxed), 0);
    assert_true(weft_atomic_load(&processes[i].max_inside,
                                 memory_order_relaxed) <= 2 + i % 3);
  }
  weft_executor_release(executor);
  free(processes);
}

// Schedule with every worker asleep, thousands of times: each schedule must
// wake a worker (no lost wake-up), within a bounded time.
static void run_sleep_wake_cycles(uint32_t worker_count, uint32_t budget,
                                  int cycles) {
  weft_executor_t* executor = test_executor_create(worker_count, 0, 0);
  assert_non_null(executor);
  weft_time_t start = weft_time_now();
  for (int i = 0; i < cycles; ++i) {
    assert_true(test_wait_all_idle(executor, TEST_TIMEOUT_NS));
    test_process_t test;
    test_process_initialize(executor, budget, (int32_t)budget, &test);
    weft_process_resume(&test.process);
    if (!test_wait_at_least(&test.releases, 1, TEST_TIMEOUT_NS)) {
      fail_msg(
          "cycle %d: a process scheduled with all %u workers asleep "
          "never ran",
          i, worker_count);
    }
  }
  weft_duration_t elapsed = weft_time_now() - start;
  print_message("%d sleep/wake cycles (%u workers, budget %u): %.1f us each\n",
                cycles, worker_count, budget,
                (double)elapsed / cycles / 1000.0);
  weft_executor_release(executor);
}

static void test_sleep_wake_stress_immediate(void** state) {
  (void)state;
  run_sleep_wake_cycles(1, 1, 3000 / TEST_SCALE);
  run_sleep_wake_cycles(4, 1, 3000 / TEST_SCALE);
}

static void test_sleep_wake_stress_compute(void** state) {
  (void)state;
  run_sleep_wake_cycles(4, 4, 2000 / TEST_SCALE);
}

// A persistent process fed from another thread: every wake is observed, in
// strict ping-pong (the process goes idle between wakes) and in bursts.
typedef struct persistent_process_t {
  test_process_t test;
  weft_atomic_int32_t pending;
  weft_atomic_int32_t observed;
} persistent_process_t;

static weft_process_drain_result_t persistent_drain(weft_process_t* process,
                                                    uint32_t worker_index) {
  (void)worker_index;
  persistent_process_t* p = (persistent_process_t*)process->user_data;
  if (weft_process_is_cancelled(process)) return WEFT_PROCESS_DRAIN_COMPLETED;
  // Acquire: pairs with the producer's release of the item.
  int32_t taken = weft_atomic_exchange(&p->pending, 0, memory_order_acquire);
  if (taken == 0) {
    // Widens the window between finding nothing and saying so, with
    // several drainers inside (budget > 1): a wake lands in it, one drainer
    // clears it while another retires the process.
    if (p->test.drain_ns > 0) {
      weft_time_t until = weft_time_now() + p->test.drain_ns;
      while (weft_time_now() < until) weft_cpu_relax();
    }
    return WEFT_PROCESS_DRAIN_NO_WORK;
  }
  // Release: the producer waiting on |observed| sees our drain finished.
  weft_atomic_fetch_add(&p->observed, taken, memory_order_release);
  return WEFT_PROCESS_DRAIN_DID_WORK;
}

// The wake races below do |wakes| round trips, each a scheduling decision:
// on an idle machine a fraction of a microsecond, at load 8 on 2 CPUs up to
// a millisecond. Past this long a run stops at the next round trip (never
// before kMinWakes), so its length is bounded under load; what is checked
// is still that every wake made was observed.
#define TEST_WAKE_RACE_BUDGET_NS (10000ll * TEST_MS)
enum { kMinWakes = 2000 };

static void run_wake_races_no_work(uint32_t worker_count, uint32_t budget,
                                   int wakes, weft_duration_t spin_ns,
                                   weft_duration_t drain_ns) {
  weft_executor_t* executor = test_executor_create(worker_count, spin_ns, 0);
  assert_non_null(executor);
  persistent_process_t p;
  memset(&p, 0, sizeof(p));
  test_process_initialize(executor, budget, 0, &p.test);
  p.test.process.drain = persistent_drain;
  p.test.process.user_data = &p;
  p.test.drain_ns = drain_ns;
  weft_process_resume(&p.test.process);
  weft_time_t start = weft_time_now();
  const weft_time_t stop = start + TEST_WAKE_RACE_BUDGET_NS;
  for (int i = 1; i <= wakes; ++i) {
    // Release: publishes the item before the wake.
    weft_atomic_fetch_add(&p.pending, 1, memory_order_release);
    weft_process_wake(&p.test.process);
    // Every other wake waits for the drain, so the process is idle (or
    // going idle) when the next one comes: the race under test.
    if ((i & 1) == 0 || i == wakes) {
      if (!test_wait_at_least(&p.observed, i, TEST_TIMEOUT_NS)) {
        fail_msg("wake %d of %d was lost (observed %d)", i, wakes,
                 weft_atomic_load(&p.observed, memory_order_relaxed));
      }
      if (i >= kMinWakes && i < wakes && weft_time_now() > stop) {
        print_message("stopping after %d of %d wakes: the machine is slow\n", i,
                      wakes);
        wakes = i;
      }
    }
  }
  weft_duration_t elapsed = weft_time_now() - start;
  print_message(
      "%d wakes (%u workers, budget %u, spin %lld ns, drain %lld "
      "ns): %.2f us each\n",
      wakes, worker_count, budget, (long long)spin_ns, (long long)drain_ns,
      (double)elapsed / wakes / 1000.0);
  assert_int_equal(weft_atomic_load(&p.observed, memory_order_acquire), wakes);
  weft_process_cancel(&p.test.process);
  assert_true(test_wait_at_least(&p.test.releases, 1, TEST_TIMEOUT_NS));
  assert_int_equal(weft_atomic_load(&p.test.completions, memory_order_relaxed),
                   1);
  weft_executor_release(executor);
}

static void test_wake_races_no_work_immediate(void** state) {
  (void)state;
  run_wake_races_no_work(2, 1, 100000 / TEST_SCALE, 0, 0);
  run_wake_races_no_work(1, 1, 100000 / TEST_SCALE, 50 * 1000, 0);
  run_wake_races_no_work(2, 1, 100000 / TEST_SCALE, 50 * 1000, 0);
}

static void test_wake_races_no_work_compute(void** state) {
  (void)state;
  run_wake_races_no_work(3, 3, 50000 / TEST_SCALE, 0, 0);
  run_wake_races_no_work(2, 2, 50000 / TEST_SCALE, 50 * 1000, 0);
  // Drainers overlap: one clears a wake while another retires.
  run_wake_races_no_work(3, 3, 20000 / TEST_SCALE, 0, 2 * 1000);
  run_wake_races_no_work(4, 4, 20000 / TEST_SCALE, 20 * 1000, 1000);
}

// A drain that never finishes on its own (DID_WORK until cancelled) keeps
// the only worker busy while more processes queue up behind it.
static weft_process_drain_result_t busy_drain(weft_process_t* process,
                                              uint32_t worker_index) {
  (void)worker_index;
  test_process_t* test = (test_process_t*)process->user_data;
  weft_atomic_fetch_add(&test->drain_calls, 1, memory_order_release);
  return WEFT_PROCESS_DRAIN_DID_WORK;
}

// Releasing the executor with processes still scheduled completes each one
// with CANCELLED (and their dependents), releases it, and joins every
// worker with none left inside a drain.
static void test_shutdown_with_pending_processes(void** state) {
  (void)state;
  weft_executor_t* executor = test_executor_create(1, 0, 1);
  assert_non_null(executor);
  test_process_t busy_immediate, busy_compute;
  test_process_initialize(executor, 1, 0, &busy_immediate);
  busy_immediate.process.drain = busy_drain;
  test_process_initialize(executor, 2, 0, &busy_compute);
  busy_compute.process.drain = busy_drain;
  weft_process_resume(&busy_compute.process);
  weft_process_resume(&busy_immediate.process);
  assert_true(
      test_wait_at_least(&busy_compute.drain_calls, 1, TEST_TIMEOUT_NS));
  enum { kPending = 64 };
  test_process_t pending[kPending];
  test_process_t dependent;
  test_process_initialize(executor, 1, 1, &dependent);
  weft_process_t* dependents[1] = {&dependent.process};
  for (int i = 0; i < kPending; ++i) {
    // Half budget-1 (immediate list), half budget-3 (overflow: the only
    // slot is taken by busy_compute).
    test_process_initialize(executor, i % 2 ? 3 : 1, 1 << 30, &pending[i]);
    pending[i].process.drain = busy_drain;
  }
  weft_process_set_dependents(&pending[0].process, dependents, 1);
  weft_process_resume(&dependent.process);
  for (int i = 0; i < kPending; ++i) weft_process_resume(&pending[i].process);
  weft_executor_release(executor);
  // Everything completed exactly once and was released on this thread.
  test_process_t* all[kPending + 3];
  for (int i = 0; i < kPending; ++i) all[i] = &pending[i];
  all[kPending] = &busy_immediate;
  all[kPending + 1] = &busy_compute;
  all[kPending + 2] = &dependent;
  for (int i = 0; i < kPending + 3; ++i) {
    assert_int_equal(
        weft_atomic_load(&all[i]->completions, memory_order_acquire), 1);
    assert_int_equal(weft_atomic_load(&all[i]->releases, memory_order_acquire),
                     1);
    assert_int_equal(
        weft_atomic_load(&all[i]->status_code, memory_order_relaxed),
        WEFT_STATUS_CANCELLED);
  }
}

// An executor with nothing scheduled starts and stops at once, many times.
static void test_create_release_cycles(void** state) {
  (void)state;
  for (int i = 0; i < 50 / TEST_SCALE; ++i) {
    weft_executor_t* executor =
        test_executor_create(1 + i % 4, WEFT_EXECUTOR_SPIN_DEFAULT, 0);
    assert_non_null(executor);
    weft_executor_retain(executor);
    weft_executor_release(executor);
    weft_executor_release(executor);
  }
  weft_executor_release(NULL);
}

// Each worker has its own aligned scratch memory, zeroed, and drains see
// their own.
typedef struct local_memory_process_t {
  test_process_t test;
  weft_executor_t* executor;
  weft_atomic_int32_t mismatches;
} local_memory_process_t;

static weft_process_drain_result_t local_memory_drain(weft_process_t* process,
                                                      uint32_t worker_index) {
  local_memory_process_t* p = (local_memory_process_t*)process->user_data;
  size_t size = 0;
  uint32_t* memory = (uint32_t*)weft_executor_worker_local_memory(
      p->executor, worker_index, &size);
  // Only this worker touches its memory: write, then read back after the
  // others had a chance to scribble on theirs.
  for (size_t i = 0; i < size / sizeof(uint32_t); ++i) {
    memory[i] = worker_index + 1;
  }
  weft_time_t until = weft_time_now() + 20 * 1000;
  while (weft_time_now() < until) weft_cpu_relax();
  for (size_t i = 0; i < size / sizeof(uint32_t); ++i) {
    if (memory[i] != worker_index + 1) {
      weft_atomic_fetch_add(&p->mismatches, 1, memory_order_relaxed);
    }
  }
  int32_t calls =
      weft_atomic_fetch_add(&p->test.drain_calls, 1, memory_order_relaxed);
  return calls >= 200 ? WEFT_PROCESS_DRAIN_COMPLETED
                      : WEFT_PROCESS_DRAIN_DID_WORK;
}

static void test_worker_local_memory(void** state) {
  (void)state;
  weft_executor_options_t options;
  weft_executor_options_initialize(&options);
  options.worker_count = 4;
  options.spin_ns = 0;
  options.worker_local_memory_size = 1000;
  weft_executor_t* executor = NULL;
  weft_status_t status =
      weft_executor_create(&options, weft_allocator_system(), &executor);
  assert_true(weft_status_is_ok(status));
  assert_int_equal(weft_executor_worker_count(executor), 4);
  char* previous = NULL;
  for (uint32_t i = 0; i < 4; ++i) {
    size_t size = 0;
    char* memory = (char*)weft_executor_worker_local_memory(executor, i, &size);
    assert_non_null(memory);
    assert_int_equal(size, 1000);
    assert_int_equal((uintptr_t)memory % 64, 0);
    for (size_t b = 0; b < size; ++b) assert_int_equal(memory[b], 0);
    if (previous) assert_true(memory >= previous + 1000);
    previous = memory;
  }
  assert_null(weft_executor_worker_local_memory(executor, 4, NULL));
  local_memory_process_t p;
  memset(&p, 0, sizeof(p));
  test_process_initialize(executor, 4, 0, &p.test);
  p.test.process.drain = local_memory_drain;
  p.test.process.user_data = &p;
  p.executor = executor;
  weft_process_resume(&p.test.process);
  assert_true(test_wait_at_least(&p.test.releases, 1, TEST_TIMEOUT_NS));
  assert_int_equal(weft_atomic_load(&p.mismatches, memory_order_relaxed), 0);
  weft_executor_release(executor);

  // No local memory asked for: NULL and size 0.
  weft_executor_t* plain = test_executor_create(1, 0, 0);
  assert_non_null(plain);
  size_t size = 1;
  assert_null(weft_executor_worker_local_memory(plain, 0, &size));
  assert_int_equal(size, 0);
  weft_executor_release(plain);
}

// More workers than CPUs: no spinning, whatever the options say.
static void test_oversubscribed_does_not_spin(void** state) {
  (void)state;
  uint32_t cpus = weft_thread_available_cpu_count();
  weft_executor_t* executor = test_executor_create(cpus + 1, 1000 * 1000, 0);
  assert_non_null(executor);
  assert_int_equal(weft_executor_spin_ns(executor), 0);
  weft_executor_release(executor);
  executor = test_executor_create(1, 1000 * 1000, 0);
  assert_non_null(executor);
  assert_int_equal(weft_executor_spin_ns(executor), 1000 * 1000);
  weft_executor_release(executor);
}

// Invalid options fail with a message, and allocation failures leave
// nothing behind.
static void test_create_failures(void** state) {
  (void)state;
  weft_executor_options_t options;
  weft_executor_options_initialize(&options);
  options.worker_count = 1u << 30;
  weft_executor_t* executor = (weft_executor_t*)1;
  weft_status_t status =
      weft_executor_create(&options, weft_allocator_system(), &executor);
  assert_int_equal(weft_status_consume_code(status),
                   WEFT_STATUS_INVALID_ARGUMENT);
  assert_null(executor);
  options.worker_count = 2;
  options.worker_local_memory_size = 64;
  for (int fail_at = 0; fail_at < 16; ++fail_at) {
    weft_failing_allocator_t failing;
    weft_allocator_t allocator = weft_failing_allocator_initialize(
        weft_allocator_system(), fail_at, &failing);
    status = weft_executor_create(&options, allocator, &executor);
    if (weft_status_is_ok(status)) {
      weft_executor_release(executor);
      break;
    }
    assert_int_equal(weft_status_consume_code(status),
                     WEFT_STATUS_RESOURCE_EXHAUSTED);
  }
}

// Workers pinned through affinity sets run on those CPUs; an empty set
// leaves a worker unpinned; a CPU the process may not use fails creation.
typedef struct cpu_process_t {
  test_process_t test;
  weft_atomic_int32_t wrong_cpu;
  int32_t pinned_cpu;
} cpu_process_t;

static weft_process_drain_result_t cpu_drain(weft_process_t* process,
                                             uint32_t worker_index) {
  cpu_process_t* p = (cpu_process_t*)process->user_data;
  // Worker 0 has an empty set (unpinned); the others are pinned.
  if (worker_index != 0 && sched_getcpu() != p->pinned_cpu) {
    weft_atomic_fetch_add(&p->wrong_cpu, 1, memory_order_relaxed);
  }
  return test_process_drain(process, worker_index);
}

static void test_worker_affinity(void** state) {
  (void)state;
  int cpu = sched_getcpu();
  assert_true(cpu >= 0);
  enum { kWorkers = 3 };
  weft_affinity_set_t sets[kWorkers];
  for (int i = 0; i < kWorkers; ++i) {
    weft_affinity_set_initialize(weft_allocator_system(), &sets[i]);
    if (i > 0) {
      assert_true(weft_status_is_ok(weft_affinity_set_set(&sets[i], cpu)));
    }
  }
  weft_executor_options_t options;
  weft_executor_options_initialize(&options);
  options.worker_count = kWorkers;
  options.spin_ns = 0;
  options.worker_affinities = sets;
  weft_executor_t* executor = NULL;
  assert_true(weft_status_is_ok(
      weft_executor_create(&options, weft_allocator_system(), &executor)));
  cpu_process_t p;
  memset(&p, 0, sizeof(p));
  test_process_initialize(executor, kWorkers, 300, &p.test);
  p.test.process.drain = cpu_drain;
  p.test.process.user_data = &p;
  p.test.drain_ns = 10 * 1000;
  p.pinned_cpu = cpu;
  weft_process_resume(&p.test.process);
  assert_true(test_wait_at_least(&p.test.releases, 1, TEST_TIMEOUT_NS));
  assert_int_equal(weft_atomic_load(&p.wrong_cpu, memory_order_relaxed), 0);
  weft_executor_release(executor);

  // A CPU that does not exist: creation fails and leaves nothing running.
  assert_true(weft_status_is_ok(weft_affinity_set_set(&sets[2], 4000000 - 1)));
  weft_affinity_set_clear(&sets[2], (uint32_t)cpu);
  executor = (weft_executor_t*)1;
  weft_status_t status =
      weft_executor_create(&options, weft_allocator_system(), &executor);
  assert_int_equal(weft_status_consume_code(status),
                   WEFT_STATUS_INVALID_ARGUMENT);
  assert_null(executor);
  for (int i = 0; i < kWorkers; ++i) weft_affinity_set_deinitialize(&sets[i]);
}

// A waiting application thread drains a compute slot as a guest: it gets
// the drainer index after the workers', its local memory, and leaves the
// wait-assist table when the executor is released.
static void test_guest_drains_compute_slot(void** state) {
  (void)state;
  weft_executor_options_t options;
  weft_executor_options_initialize(&options);
  options.worker_count = 1;
  options.guest_count = 1;
  options.worker_local_memory_size = 64;
  weft_executor_t* executor = NULL;
  assert_true(weft_status_is_ok(
      weft_executor_create(&options, weft_allocator_system(), &executor)));
  assert_int_equal(weft_executor_drainer_count(executor), 2);
  assert_non_null(weft_executor_worker_local_memory(executor, 1, NULL));
  assert_null(weft_executor_worker_local_memory(executor, 2, NULL));
  assert_true(weft_wait_assist_available());
  test_process_t test;
  test_process_initialize(executor, 2, 1 << 30, &test);
  test.drain_ns = 20 * 1000;
  // Nothing scheduled and every worker idle: IDLE.
  assert_true(test_wait_all_idle(executor, TEST_TIMEOUT_NS));
  assert_int_equal(weft_wait_assist_run(), WEFT_WAIT_ASSIST_IDLE);
  weft_process_resume(&test.process);
  weft_time_t deadline = weft_time_now() + TEST_TIMEOUT_NS;
  while (!(weft_atomic_load(&test.worker_mask, memory_order_relaxed) & 2) &&
         weft_time_now() < deadline) {
    weft_wait_assist_run();
  }
  assert_true(weft_atomic_load(&test.worker_mask, memory_order_relaxed) & 2);
  weft_process_cancel(&test.process);
  assert_true(test_wait_at_least(&test.releases, 1, TEST_TIMEOUT_NS));
  assert_true(weft_atomic_load(&test.max_inside, memory_order_relaxed) <= 2);
  assert_int_equal(weft_atomic_load(&test.late_drains, memory_order_relaxed),
                   0);
  weft_executor_release(executor);
  assert_false(weft_wait_assist_available());
  // Without guests nothing registers.
  executor = test_executor_create(1, 0, 0);
  assert_non_null(executor);
  assert_int_equal(weft_executor_drainer_count(executor), 1);
  assert_false(weft_wait_assist_available());
  weft_executor_release(executor);
}

// A drain that stays inside until the test lets it go: the slot it is in
// is open and full (the only worker, one drainer desired) for as long as
// the test looks, however the threads are scheduled.
typedef struct held_process_t {
  test_process_t test;
  weft_atomic_int32_t let_go;
} held_process_t;

static weft_process_drain_result_t held_drain(weft_process_t* process,
                                              uint32_t worker_index) {
  held_process_t* p = (held_process_t*)process->user_data;
  weft_atomic_fetch_or(&p->test.worker_mask, 1ull << worker_index,
                       memory_order_relaxed);
  // Release: the test that sees |inside| sees the mask.
  weft_atomic_fetch_add(&p->test.inside, 1, memory_order_release);
  // Bounded, so a case that fails before letting go still ends.
  weft_time_t deadline = weft_time_now() + TEST_TIMEOUT_NS;
  while (!weft_atomic_load(&p->let_go, memory_order_acquire) &&
         weft_time_now() < deadline) {
    weft_thread_yield();
  }
  weft_atomic_fetch_sub(&p->test.inside, 1, memory_order_relaxed);
  return weft_process_is_cancelled(process) ? WEFT_PROCESS_DRAIN_COMPLETED
                                            : WEFT_PROCESS_DRAIN_DID_WORK;
}

// A slot that is open but full (a worker inside, one drainer desired)
// makes the assistant answer BUSY: the waiter keeps spinning for the next
// region instead of sleeping.
static void test_guest_sees_full_slot_busy(void** state) {
  (void)state;
  weft_executor_options_t options;
  weft_executor_options_initialize(&options);
  options.worker_count = 1;
  options.guest_count = 1;
  weft_executor_t* executor = NULL;
  assert_true(weft_status_is_ok(
      weft_executor_create(&options, weft_allocator_system(), &executor)));
  held_process_t p;
  memset(&p, 0, sizeof(p));
  test_process_initialize(executor, 2, 0, &p.test);
  p.test.process.drain = held_drain;
  p.test.process.user_data = &p;
  weft_process_set_desired_workers(&p.test.process, 1);
  weft_process_resume(&p.test.process);
  // The worker is inside and stays there until let go.
  assert_true(test_wait_at_least(&p.test.inside, 1, TEST_TIMEOUT_NS));
  assert_int_equal(weft_wait_assist_run(), WEFT_WAIT_ASSIST_BUSY);
  assert_int_equal(weft_atomic_load(&p.test.worker_mask, memory_order_relaxed),
                   1);
  weft_process_cancel(&p.test.process);
  // Release: the drain that sees it sees the cancel.
  weft_atomic_store(&p.let_go, 1, memory_order_release);
  assert_true(test_wait_at_least(&p.test.releases, 1, TEST_TIMEOUT_NS));
  weft_executor_release(executor);
}

// Workers on every CPU and a guest (the local-task device's default): the
// last worker is the standby, whose CPU a host in an assisting wait takes.
// Returns NULL (the case skips) where that layout cannot be had.
static weft_executor_t* standby_executor_create(uint32_t* out_workers) {
  uint32_t cpus = weft_thread_available_cpu_count();
  // worker_mask holds 64 workers.
  if (cpus < 2 || cpus > 64) return NULL;
  weft_executor_options_t options;
  weft_executor_options_initialize(&options);
  options.worker_count = cpus;
  options.guest_count = 1;
  weft_executor_t* executor = NULL;
  weft_status_t status =
      weft_executor_create(&options, weft_allocator_system(), &executor);
  if (!weft_status_is_ok(status)) {
    weft_status_ignore(status);
    return NULL;
  }
  *out_workers = cpus;
  return executor;
}

// Seats: each worker its own; with a standby the first guest takes the
// standby's (the host runs in its place) and a second guest the next after
// the workers'; without one every guest keeps its index.
static void test_drainer_seats(void** state) {
  (void)state;
  uint32_t cpus = weft_thread_available_cpu_count();
  weft_executor_options_t options;
  weft_executor_options_initialize(&options);
  options.worker_count = cpus < 2 ? 2 : cpus;  // workers on every CPU
  options.guest_count = 2;
  weft_executor_t* executor = NULL;
  assert_true(weft_status_is_ok(
      weft_executor_create(&options, weft_allocator_system(), &executor)));
  const uint32_t workers = options.worker_count;
  for (uint32_t i = 0; i < workers; ++i) {
    assert_int_equal(weft_executor_drainer_seat(executor, i), i);
  }
  assert_int_equal(weft_executor_drainer_seat(executor, workers), workers - 1);
  assert_int_equal(weft_executor_drainer_seat(executor, workers + 1), workers);
  weft_executor_release(executor);
  // One worker: no standby (a host assists beside it).
  options.worker_count = 1;
  assert_true(weft_status_is_ok(
      weft_executor_create(&options, weft_allocator_system(), &executor)));
  for (uint32_t i = 0; i < 3; ++i) {
    assert_int_equal(weft_executor_drainer_seat(executor, i), i);
  }
  weft_executor_release(executor);
}

// While a host is in an assisting wait the standby drains no compute:
// that CPU is the host's, and a third drainer on it would be preempted
// holding a tile. The host here never drains, so the other workers do all
// of it; the standby's bit in the mask must stay clear however the
// threads run.
static void test_standby_leaves_compute_to_the_host(void** state) {
  (void)state;
  uint32_t workers = 0;
  weft_executor_t* executor = standby_executor_create(&workers);
  if (!executor) skip();
  weft_wait_assist_begin_wait();
  assert_true(test_wait_all_idle(executor, TEST_TIMEOUT_NS));
  test_process_t test;
  test_process_initialize(executor, workers + 1, 400 / TEST_SCALE, &test);
  test.drain_ns = 10 * 1000;
  weft_process_resume(&test.process);
  assert_true(test_wait_at_least(&test.releases, 1, TEST_TIMEOUT_NS));
  weft_wait_assist_end_wait();
  uint64_t mask = weft_atomic_load(&test.worker_mask, memory_order_relaxed);
  assert_int_equal(mask & (1ull << (workers - 1)), 0);
  assert_true(mask != 0);
  assert_int_equal(weft_atomic_load(&test.completions, memory_order_relaxed),
                   1);
  weft_executor_release(executor);
}

// A budget-1 process that holds its worker until |go| is set (a host call
// waiting on another queue's op, say).
typedef struct blocking_process_t {
  test_process_t test;
  weft_atomic_int32_t* go;
} blocking_process_t;

static weft_process_drain_result_t blocking_drain(weft_process_t* process,
                                                  uint32_t worker_index) {
  blocking_process_t* p = (blocking_process_t*)process->user_data;
  weft_atomic_fetch_or(&p->test.worker_mask, 1ull << worker_index,
                       memory_order_relaxed);
  weft_atomic_fetch_add(&p->test.inside, 1, memory_order_release);
  // Bounded, so a case that fails still ends.
  weft_time_t deadline = weft_time_now() + TEST_TIMEOUT_NS;
  while (!weft_atomic_load(p->go, memory_order_acquire)) {
    if (weft_time_now() >= deadline) {
      // Counted as a late drain: the test fails on it.
      weft_atomic_fetch_add(&p->test.late_drains, 1, memory_order_relaxed);
      break;
    }
    weft_thread_yield();
  }
  weft_atomic_fetch_sub(&p->test.inside, 1, memory_order_relaxed);
  return WEFT_PROCESS_DRAIN_COMPLETED;
}

static weft_process_drain_result_t go_drain(weft_process_t* process,
                                            uint32_t worker_index) {
  blocking_process_t* p = (blocking_process_t*)process->user_data;
  weft_atomic_fetch_or(&p->test.worker_mask, 1ull << worker_index,
                       memory_order_relaxed);
  weft_atomic_store(p->go, 1, memory_order_release);
  return WEFT_PROCESS_DRAIN_COMPLETED;
}

// While a host waits, the standby still runs what the immediate list holds
// when every other worker is busy: a host drains only compute, so without
// it a worker blocked on another process (here: every other worker, each
// waiting for the last process) would wait forever.
static void test_standby_runs_immediate_work_others_block_on(void** state) {
  (void)state;
  uint32_t workers = 0;
  weft_executor_t* executor = standby_executor_create(&workers);
  if (!executor) skip();
  weft_atomic_int32_t go;
  atomic_init(&go, 0);
  weft_wait_assist_begin_wait();
  assert_true(test_wait_all_idle(executor, TEST_TIMEOUT_NS));
  const uint32_t blocked = workers - 1;
  blocking_process_t* processes =
      (blocking_process_t*)calloc(workers, sizeof(*processes));
  assert_non_null(processes);
  for (uint32_t i = 0; i < workers; ++i) {
    test_process_initialize(executor, 1, 1, &processes[i].test);
    processes[i].test.process.drain =
        i < blocked ? blocking_drain : go_drain;
    processes[i].test.process.user_data = &processes[i];
    processes[i].go = &go;
  }
  // Every worker but the standby held (or, where the standby took one of
  // them, one other worker left free: the case then passes through it).
  for (uint32_t i = 0; i < blocked; ++i) {
    weft_process_resume(&processes[i].test.process);
  }
  for (uint32_t i = 0; i < blocked; ++i) {
    assert_true(
        test_wait_at_least(&processes[i].test.inside, 1, TEST_TIMEOUT_NS));
  }
  weft_process_resume(&processes[blocked].test.process);
  assert_true(test_wait_at_least(&processes[blocked].test.releases, 1,
                                 TEST_TIMEOUT_NS));
  for (uint32_t i = 0; i < blocked; ++i) {
    assert_true(
        test_wait_at_least(&processes[i].test.releases, 1, TEST_TIMEOUT_NS));
  }
  weft_wait_assist_end_wait();
  assert_int_equal(weft_atomic_load(&go, memory_order_relaxed), 1);
  // No held worker gave up waiting: the last process ran while they held.
  for (uint32_t i = 0; i < blocked; ++i) {
    assert_int_equal(
        weft_atomic_load(&processes[i].test.late_drains, memory_order_relaxed),
        0);
  }
  weft_executor_release(executor);
  free(processes);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_budget_n_drained_by_all_workers),
      cmocka_unit_test(test_desired_workers_caps_drainers),
      cmocka_unit_test(test_raising_desired_workers_wakes_more),
      cmocka_unit_test(test_many_immediate_processes),
      cmocka_unit_test(test_more_compute_processes_than_slots),
      cmocka_unit_test(test_sleep_wake_stress_immediate),
      cmocka_unit_test(test_sleep_wake_stress_compute),
      cmocka_unit_test(test_wake_races_no_work_immediate),
      cmocka_unit_test(test_wake_races_no_work_compute),
      cmocka_unit_test(test_shutdown_with_pending_processes),
      cmocka_unit_test(test_create_release_cycles),
      cmocka_unit_test(test_worker_local_memory),
      cmocka_unit_test(test_oversubscribed_does_not_spin),
      cmocka_unit_test(test_create_failures),
      cmocka_unit_test(test_worker_affinity),
      cmocka_unit_test(test_guest_drains_compute_slot),
      cmocka_unit_test(test_guest_sees_full_slot_busy),
      cmocka_unit_test(test_drainer_seats),
      cmocka_unit_test(test_standby_leaves_compute_to_the_host),
      cmocka_unit_test(test_standby_runs_immediate_work_others_block_on),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
