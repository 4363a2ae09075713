// Stress test for the scheduler: a random DAG of processes with mixed
// budgets, resumed from several threads, some failing, some cancelled while
// they run; every process completes exactly once, after its prerequisites,
// and is released once with no worker inside drain.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

// cmocka needs the headers above first.
#include <cmocka.h>

#include "task_test_util.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define STRESS_PROCESS_COUNT 1500
#else
#define STRESS_PROCESS_COUNT 4000
#endif
#define STRESS_MAX_PREREQUISITES 3

typedef struct dag_node_t {
  test_process_t test;
  int index;
  bool fails;
  int prerequisite_count;
  int prerequisites[STRESS_MAX_PREREQUISITES];
  // Processes this one resumes (set_dependents storage).
  weft_process_t** dependents;
  int dependent_count;
  struct dag_t* dag;
  weft_atomic_int32_t order_violations;
} dag_node_t;

typedef struct dag_t {
  dag_node_t* nodes;
  int count;
  // Set once every helper thread exists, so that they run together.
  weft_atomic_int32_t start;
} dag_t;

static void dag_wait_start(dag_t* dag) {
  // Acquire: nothing to see but the flag; keeps the helpers in step.
  while (!weft_atomic_load(&dag->start, memory_order_acquire)) {
    weft_thread_yield();
  }
}

static uint64_t stress_random(uint64_t* state) {
  *state ^= *state << 13;
  *state ^= *state >> 7;
  *state ^= *state << 17;
  return *state;
}

static weft_process_drain_result_t dag_drain(weft_process_t* process,
                                             uint32_t worker_index) {
  dag_node_t* node = (dag_node_t*)process->user_data;
  // First drain: every prerequisite completed already.
  if (weft_atomic_load(&node->test.drain_calls, memory_order_relaxed) == 0) {
    for (int i = 0; i < node->prerequisite_count; ++i) {
      dag_node_t* before = &node->dag->nodes[node->prerequisites[i]];
      // Acquire: pairs with the completion's release (through the resume).
      if (weft_atomic_load(&before->test.completions, memory_order_acquire) !=
          1) {
        weft_atomic_fetch_add(&node->order_violations, 1, memory_order_relaxed);
      }
    }
    if (node->fails) {
      weft_process_report_failure(
          process,
          WEFT_STATUS(DATA_LOSS, "node %d fails on purpose", node->index));
    }
  }
  return test_process_drain(process, worker_index);
}

typedef struct resume_thread_t {
  dag_t* dag;
  int first;
  int step;
} resume_thread_t;

static int resume_thread_main(void* user_data) {
  resume_thread_t* thread = (resume_thread_t*)user_data;
  dag_wait_start(thread->dag);
  for (int i = thread->first; i < thread->dag->count; i += thread->step) {
    weft_process_resume(&thread->dag->nodes[i].test.process);
    // Gives the canceller a chance to meet suspended processes.
    if (i % 64 == 0) weft_thread_yield();
  }
  return 0;
}

typedef struct cancel_thread_t {
  dag_t* dag;
  uint64_t seed;
} cancel_thread_t;

static int cancel_thread_main(void* user_data) {
  cancel_thread_t* thread = (cancel_thread_t*)user_data;
  uint64_t random = thread->seed;
  dag_wait_start(thread->dag);
  for (int n = 0; n < thread->dag->count / 20; ++n) {
    if (n % 8 == 0) weft_thread_yield();
    dag_node_t* node =
        &thread->dag
             ->nodes[stress_random(&random) % (uint64_t)thread->dag->count];
    // Nodes outlive the executor here, so cancelling a completed one is
    // safe (and changes nothing); skip most of those.
    if (weft_atomic_load(&node->test.completions, memory_order_acquire) == 0) {
      weft_process_cancel(&node->test.process);
    }
  }
  return 0;
}

static void run_dag(uint32_t worker_count, uint32_t slot_count,
                    weft_duration_t spin_ns, uint64_t seed) {
  weft_executor_t* executor =
      test_executor_create(worker_count, spin_ns, slot_count);
  assert_non_null(executor);
  dag_t dag = {.count = STRESS_PROCESS_COUNT};
  atomic_init(&dag.start, 0);
  dag.nodes = (dag_node_t*)calloc((size_t)dag.count, sizeof(dag_node_t));
  assert_non_null(dag.nodes);
  uint64_t random = seed;
  for (int i = 0; i < dag.count; ++i) {
    dag_node_t* node = &dag.nodes[i];
    uint32_t budget = stress_random(&random) % 3 == 0
                          ? 2 + (uint32_t)(stress_random(&random) % 4)
                          : 1;
    test_process_initialize(executor, budget,
                            1 + (int32_t)(stress_random(&random) % 6),
                            &node->test);
    node->test.process.drain = dag_drain;
    node->test.process.user_data = node;
    node->index = i;
    node->dag = &dag;
    node->fails = stress_random(&random) % 17 == 0;
    node->prerequisite_count =
        i == 0 ? 0
               : (int)(stress_random(&random) % (STRESS_MAX_PREREQUISITES + 1));
    for (int p = 0; p < node->prerequisite_count; ++p) {
      // Mostly recent nodes, so chains stay deep.
      int back = 1 + (int)(stress_random(&random) % (i < 32 ? i : 32));
      node->prerequisites[p] = i - back;
      dag.nodes[i - back].dependent_count++;
    }
  }
  for (int i = 0; i < dag.count; ++i) {
    dag_node_t* node = &dag.nodes[i];
    node->dependents = (weft_process_t**)calloc(
        (size_t)node->dependent_count + 1, sizeof(weft_process_t*));
    assert_non_null(node->dependents);
    node->dependent_count = 0;
  }
  for (int i = 0; i < dag.count; ++i) {
    dag_node_t* node = &dag.nodes[i];
    for (int p = 0; p < node->prerequisite_count; ++p) {
      dag_node_t* before = &dag.nodes[node->prerequisites[p]];
      before->dependents[before->dependent_count++] = &node->test.process;
    }
  }
  for (int i = 0; i < dag.count; ++i) {
    weft_process_set_dependents(&dag.nodes[i].test.process,
                                dag.nodes[i].dependents,
                                (uint32_t)dag.nodes[i].dependent_count);
  }
  enum { kResumers = 2 };
  resume_thread_t resumers[kResumers];
  weft_thread_t* threads[kResumers + 1];
  weft_thread_params_t params = {.name = "stress", .cpu = -1};
  // The canceller starts first so that it meets processes in every phase.
  cancel_thread_t canceller = {.dag = &dag, .seed = seed * 31 + 7};
  assert_true(weft_status_is_ok(
      weft_thread_create(cancel_thread_main, &canceller, &params,
                         weft_allocator_system(), &threads[kResumers])));
  for (int t = 0; t < kResumers; ++t) {
    resumers[t] = (resume_thread_t){.dag = &dag, .first = t, .step = kResumers};
    assert_true(weft_status_is_ok(
        weft_thread_create(resume_thread_main, &resumers[t], &params,
                           weft_allocator_system(), &threads[t])));
  }
  // Release: nothing but the flag (see dag_wait_start).
  weft_atomic_store(&dag.start, 1, memory_order_release);
  for (int t = 0; t < kResumers + 1; ++t) weft_thread_join(threads[t]);
  for (int i = 0; i < dag.count; ++i) {
    dag_node_t* node = &dag.nodes[i];
    if (!test_wait_at_least(&node->test.releases, 1, TEST_TIMEOUT_NS)) {
      fail_msg(
          "node %d (budget %u) never released (completions %d, drains "
          "%d)",
          i, node->test.process.worker_budget,
          weft_atomic_load(&node->test.completions, memory_order_relaxed),
          weft_atomic_load(&node->test.drain_calls, memory_order_relaxed));
    }
  }
  int failed = 0, cancelled = 0;
  for (int i = 0; i < dag.count; ++i) {
    dag_node_t* node = &dag.nodes[i];
    assert_int_equal(
        weft_atomic_load(&node->test.completions, memory_order_relaxed), 1);
    assert_int_equal(
        weft_atomic_load(&node->test.releases, memory_order_relaxed), 1);
    assert_int_equal(
        weft_atomic_load(&node->test.late_drains, memory_order_relaxed), 0);
    assert_int_equal(
        weft_atomic_load(&node->order_violations, memory_order_relaxed), 0);
    assert_true(
        weft_atomic_load(&node->test.max_inside, memory_order_relaxed) <=
        (int32_t)node->test.process.worker_budget);
    int32_t code =
        weft_atomic_load(&node->test.status_code, memory_order_relaxed);
    bool drained =
        weft_atomic_load(&node->test.drain_calls, memory_order_relaxed) > 0;
    if (node->fails && drained) {
      assert_int_equal(code, WEFT_STATUS_DATA_LOSS);
    } else if (code != WEFT_STATUS_OK) {
      // Cancelled before it completed (a cancel after completion leaves
      // OK).
      assert_int_equal(code, WEFT_STATUS_CANCELLED);
      assert_true(weft_process_is_cancelled(&node->test.process));
    }
    failed += code == WEFT_STATUS_DATA_LOSS;
    cancelled += code == WEFT_STATUS_CANCELLED;
  }
  print_message("dag of %d (%u workers, %u slots): %d failed, %d cancelled\n",
                dag.count, worker_count, slot_count, failed, cancelled);
  weft_executor_release(executor);
  for (int i = 0; i < dag.count; ++i) free(dag.nodes[i].dependents);
  free(dag.nodes);
}

static void test_random_dag(void** state) {
  (void)state;
  run_dag(4, 2, 0, 0x9E3779B97F4A7C15ull);
  run_dag(3, 8, WEFT_EXECUTOR_SPIN_DEFAULT, 0xD1B54A32D192ED03ull);
  run_dag(2, 1, 20 * 1000, 0x2545F4914F6CDD1Dull);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random_dag),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
