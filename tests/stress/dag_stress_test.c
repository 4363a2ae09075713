// Stress: thousands of queue operations in a random DAG.
//
// A seeded generator builds a DAG of operations over several queues. Every
// op signals its own semaphore (to 1, 2 or 3) and waits on 0-3 earlier ops'
// semaphores (at a value up to what they signal) and/or on root semaphores
// that the host moves forward step by step while the ops are submitted. One
// root is failed by the host instead. Some ops fail on purpose: a host call
// returning an error, or a dispatch of the "fail" kernel.
//
// The host computes what must happen: an op fails when any op or root it
// waits on failed (with one of those failures' original messages), or when
// it fails on purpose (with its own); otherwise it is reached and has
// written its word of a shared buffer (fills, updates and host calls write a
// constant; copies, dispatches and command buffer executions transform the
// word of an op they wait on). Ops are submitted in a random order (most of
// them before what they wait on exists), from one thread or two.
//
// Every signal is waited on with one global deadline; on a time-out the test
// prints the device's pending operations and fails. The seed is printed; a
// run repeats exactly with the same seed (and --ops).
//
// Options (arguments or environment):
//   --ops N      / WEFT_STRESS_OPS         ops per case (default 3000)
//   --seed S     / WEFT_STRESS_SEED        seed (default: time based)
//   --deadline S / WEFT_STRESS_DEADLINE_S  global deadline in seconds (120)
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/atomics.h"
#include "base/thread.h"
#include "cts.h"
#include "weft/diagnostics.h"

#define MS (1000ll * 1000ll)

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

typedef struct dag_options_t {
  uint32_t op_count;
  uint64_t seed;
  int64_t deadline_seconds;
} dag_options_t;

// Set once by main before any case runs.
static dag_options_t g_options = {3000, 0, 120};

//===----------------------------------------------------------------------===//
// The DAG
//===----------------------------------------------------------------------===//

typedef enum dag_kind_e {
  DAG_BARRIER = 0,
  DAG_FILL,
  DAG_UPDATE,
  DAG_COPY,
  DAG_DISPATCH,
  DAG_EXECUTE,
  DAG_HOST_CALL,
  DAG_NON_BLOCKING_CALL,
  DAG_FAIL_CALL,
  DAG_FAIL_DISPATCH,
  DAG_KIND_COUNT,
} dag_kind_t;

static const char* const kDagKindNames[DAG_KIND_COUNT] = {
    "barrier",
    "fill",
    "update",
    "copy",
    "dispatch",
    "execute",
    "host_call",
    "non_blocking_host_call",
    "failing host_call",
    "failing dispatch",
};

enum {
  kMaxWaits = 4,
  // Root semaphores: kRegularRoots moved forward by the host, then one the
  // host fails.
  kRegularRoots = 4,
  kRootCount = kRegularRoots + 1,
  kDoomedRoot = kRegularRoots,
  kRootTop = 8,  // the value every regular root ends at
  // Ops wait on ops at most this far back.
  kWindow = 256,
  // Queues ops are spread over (wrapped at the device's queue count).
  kQueueSpread = 7,
};

// Failure roots: index 0 is the doomed root semaphore, 1.. the ops that
// fail on purpose.
typedef struct dag_failure_root_t {
  uint32_t op;  // UINT32_MAX for the doomed root
  weft_status_code_t code;
  char message[512];
} dag_failure_root_t;

typedef struct dag_op_t {
  dag_kind_t kind;
  // Queue index, or UINT32_MAX for WEFT_QUEUE_AFFINITY_ANY.
  uint32_t queue;
  uint32_t wait_count;
  // Index into dag_t::semaphores (roots first, then one per op).
  uint32_t wait_semaphores[kMaxWaits];
  uint64_t wait_values[kMaxWaits];
  uint64_t signal_value;
  // The op whose word this op reads, or op_count (a word that stays zero).
  uint32_t source;
  // For ops failing on purpose: their failure root index.
  uint32_t failure_root;
  // What must happen.
  bool expect_failed;
  uint32_t expected_word;
} dag_op_t;

// A host step: move regular root |root| to |value|, or fail the doomed
// root (|root| == kDoomedRoot).
typedef struct dag_step_t {
  uint32_t root;
  uint64_t value;
} dag_step_t;

typedef struct dag_t {
  weft_cts_t* cts;
  weft_device_t* device;  // the case's device (borrowed)
  uint32_t queue_count;
  uint64_t seed;
  uint32_t op_count;
  uint32_t fail_per_mille;
  dag_op_t* ops;
  // Ops in submission order.
  uint32_t* order;
  dag_step_t* steps;
  uint32_t step_count;
  // kRootCount roots, then one semaphore per op.
  weft_semaphore_t** semaphores;
  dag_failure_root_t* failure_roots;
  uint32_t failure_root_count;
  // Per op: a bit set of the failure roots its failure may carry.
  uint64_t* possible;
  uint32_t possible_words;
  // One word per op plus a zero word.
  weft_buffer_t* words;
  // Reusable recording: word(slot 1) = word(slot 0) + 3.
  weft_command_buffer_t* add_three;
  uint32_t scale_offset_ordinal;
  uint32_t fail_ordinal;
  // Counts non-blocking host calls that ran; each signals the count it
  // made to |calls_ran| (they may finish after their own signal, so the
  // host waits on it before it frees the DAG).
  weft_atomic_int32_t non_blocking_calls;
  weft_semaphore_t* calls_ran;
  // Submissions done (read by the stepping thread in the two-thread mode).
  weft_atomic_int32_t submitted;
} dag_t;

typedef struct dag_rng_t {
  uint64_t state;
} dag_rng_t;

// splitmix64.
static uint64_t dag_rng_next(dag_rng_t* rng) {
  uint64_t z = (rng->state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static uint32_t dag_rng_below(dag_rng_t* rng, uint32_t bound) {
  return (uint32_t)(dag_rng_next(rng) % bound);
}

static float bits_to_f32(uint32_t bits) {
  float value;
  memcpy(&value, &bits, sizeof(value));
  return value;
}

static uint64_t* dag_possible(dag_t* dag, uint32_t op) {
  return &dag->possible[(size_t)op * dag->possible_words];
}

// Picks the kind of op |i|: failing with |fail_per_mille|, else weighted.
static dag_kind_t dag_pick_kind(dag_t* dag, dag_rng_t* rng) {
  if (dag_rng_below(rng, 1000) < dag->fail_per_mille) {
    return dag_rng_below(rng, 2) ? DAG_FAIL_CALL : DAG_FAIL_DISPATCH;
  }
  static const uint32_t kWeights[DAG_FAIL_CALL] = {12, 18, 12, 18,
                                                   14, 10, 10, 6};
  uint32_t total = 0;
  for (int k = 0; k < DAG_FAIL_CALL; ++k) total += kWeights[k];
  uint32_t pick = dag_rng_below(rng, total);
  dag_kind_t kind = DAG_BARRIER;
  while (pick >= kWeights[kind]) pick -= kWeights[kind++];
  return kind;
}

// Adds a wait on semaphore |semaphore| at |value| unless already present.
static void dag_add_wait(dag_op_t* op, uint32_t semaphore, uint64_t value) {
  for (uint32_t w = 0; w < op->wait_count; ++w) {
    if (op->wait_semaphores[w] == semaphore) return;
  }
  op->wait_semaphores[op->wait_count] = semaphore;
  op->wait_values[op->wait_count] = value;
  ++op->wait_count;
}

// Generates the ops, their expected outcomes, the submission order and the
// host steps from |dag->seed|.
static void dag_generate(dag_t* dag) {
  dag_rng_t rng = {dag->seed};
  uint32_t n = dag->op_count;
  dag->ops = calloc(n, sizeof(*dag->ops));
  dag->order = calloc(n, sizeof(*dag->order));
  dag->failure_roots = calloc(n + 1, sizeof(*dag->failure_roots));
  assert_non_null(dag->ops);
  assert_non_null(dag->order);
  assert_non_null(dag->failure_roots);
  dag->failure_roots[0].op = UINT32_MAX;
  dag->failure_roots[0].code = WEFT_STATUS_CANCELLED;
  snprintf(dag->failure_roots[0].message, sizeof(dag->failure_roots[0].message),
           "stress: root semaphore %u failed by the host", kDoomedRoot);
  dag->failure_root_count = 1;
  for (uint32_t i = 0; i < n; ++i) {
    dag_op_t* op = &dag->ops[i];
    op->kind = dag_pick_kind(dag, &rng);
    op->queue = dag_rng_below(&rng, 8) == 0 ? UINT32_MAX
                                            : dag_rng_below(&rng, kQueueSpread);
    op->signal_value = 1 + dag_rng_below(&rng, 3);
    op->source = n;
    op->failure_root = UINT32_MAX;
    // 0-3 earlier ops (25/35/25/15 %), within the window.
    uint32_t roll = dag_rng_below(&rng, 100);
    uint32_t dependencies = roll < 25 ? 0 : roll < 60 ? 1 : roll < 85 ? 2 : 3;
    if (i == 0) dependencies = 0;
    for (uint32_t d = 0; d < dependencies; ++d) {
      uint32_t span = i < kWindow ? i : kWindow;
      uint32_t j = i - 1 - dag_rng_below(&rng, span);
      uint64_t value =
          1 + dag_rng_below(&rng, (uint32_t)dag->ops[j].signal_value);
      uint32_t before = op->wait_count;
      dag_add_wait(op, kRootCount + j, value);
      if (op->wait_count > before && dag_rng_below(&rng, 2) == 0)
        op->source = j;
      if (op->source == n && op->wait_count > before) op->source = j;
    }
    // A root wait: always for ops with no op to wait on (three times in
    // four), sometimes besides.
    bool root_wait = dependencies == 0 ? dag_rng_below(&rng, 4) != 0
                                       : dag_rng_below(&rng, 10) == 0;
    if (root_wait) {
      uint32_t root = dag_rng_below(&rng, 60) == 0
                          ? kDoomedRoot
                          : dag_rng_below(&rng, kRegularRoots);
      dag_add_wait(op, root, 1 + dag_rng_below(&rng, kRootTop));
    }
    if (op->kind == DAG_FAIL_CALL || op->kind == DAG_FAIL_DISPATCH) {
      dag_failure_root_t* failure =
          &dag->failure_roots[dag->failure_root_count];
      op->failure_root = dag->failure_root_count++;
      failure->op = i;
      failure->code = op->kind == DAG_FAIL_CALL ? WEFT_STATUS_ABORTED
                                                : WEFT_STATUS_INTERNAL;
      // A dispatch's message is read back from its semaphore later.
      snprintf(failure->message, sizeof(failure->message),
               "stress op %u failed on purpose", i);
    }
  }
  // Expected outcomes, in index order (every wait is on an earlier op).
  dag->possible_words = (dag->failure_root_count + 63) / 64;
  dag->possible = calloc((size_t)n * dag->possible_words, sizeof(uint64_t));
  assert_non_null(dag->possible);
  for (uint32_t i = 0; i < n; ++i) {
    dag_op_t* op = &dag->ops[i];
    uint64_t* possible = dag_possible(dag, i);
    for (uint32_t w = 0; w < op->wait_count; ++w) {
      uint32_t semaphore = op->wait_semaphores[w];
      if (semaphore == kDoomedRoot) {
        op->expect_failed = true;
        possible[0] |= 1;
      } else if (semaphore >= kRootCount &&
                 dag->ops[semaphore - kRootCount].expect_failed) {
        op->expect_failed = true;
        const uint64_t* from = dag_possible(dag, semaphore - kRootCount);
        for (uint32_t k = 0; k < dag->possible_words; ++k) {
          possible[k] |= from[k];
        }
      }
    }
    if (!op->expect_failed && op->failure_root != UINT32_MAX) {
      op->expect_failed = true;
      possible[op->failure_root / 64] |= 1ull << (op->failure_root % 64);
    }
    if (op->expect_failed) continue;
    float source =
        op->source < n ? bits_to_f32(dag->ops[op->source].expected_word) : 0.0f;
    switch (op->kind) {
      case DAG_FILL:
        op->expected_word = weft_cts_f32_bits((float)i + 1.0f);
        break;
      case DAG_UPDATE:
        op->expected_word = weft_cts_f32_bits((float)i + 3.0f);
        break;
      case DAG_COPY:
        op->expected_word = weft_cts_f32_bits(source);
        break;
      case DAG_DISPATCH:
        op->expected_word = weft_cts_f32_bits(source * 1.0f + 1.0f);
        break;
      case DAG_EXECUTE:
        op->expected_word = weft_cts_f32_bits(source * 1.0f + 3.0f);
        break;
      case DAG_HOST_CALL:
        op->expected_word = weft_cts_f32_bits((float)i + 7.0f);
        break;
      default:
        op->expected_word = 0;  // writes nothing
        break;
    }
  }
  // A random submission order.
  for (uint32_t i = 0; i < n; ++i) dag->order[i] = i;
  for (uint32_t i = n; i > 1; --i) {
    uint32_t j = dag_rng_below(&rng, i);
    uint32_t t = dag->order[i - 1];
    dag->order[i - 1] = dag->order[j];
    dag->order[j] = t;
  }
  // Host steps: each regular root climbs to kRootTop by 1 or 2, the roots
  // interleaved at random; the doomed root fails somewhere among them.
  dag->steps = calloc(kRegularRoots * kRootTop + 1, sizeof(*dag->steps));
  assert_non_null(dag->steps);
  uint64_t at[kRegularRoots] = {0};
  uint32_t remaining = kRegularRoots;
  uint32_t doom_at = dag_rng_below(&rng, kRegularRoots * 3);
  while (remaining > 0) {
    if (dag->step_count == doom_at) {
      dag->steps[dag->step_count++] = (dag_step_t){kDoomedRoot, 0};
    }
    uint32_t root = dag_rng_below(&rng, kRegularRoots);
    if (at[root] == kRootTop) continue;
    at[root] += 1 + (dag_rng_below(&rng, 4) == 0);
    if (at[root] > kRootTop) at[root] = kRootTop;
    if (at[root] == kRootTop) --remaining;
    dag->steps[dag->step_count++] = (dag_step_t){root, at[root]};
  }
  if (doom_at >= dag->step_count) {
    dag->steps[dag->step_count++] = (dag_step_t){kDoomedRoot, 0};
  }
}

//===----------------------------------------------------------------------===//
// Submission
//===----------------------------------------------------------------------===//

// The queue function of every host-call op; args[0] is the op index.
static weft_status_t dag_host_call(void* user_data, const uint64_t args[4],
                                   const weft_host_call_context_t* context) {
  dag_t* dag = (dag_t*)user_data;
  uint32_t i = (uint32_t)args[0];
  weft_status_t status = WEFT_OK;
  switch (dag->ops[i].kind) {
    case DAG_HOST_CALL: {
      uint32_t word = weft_cts_f32_bits((float)i + 7.0f);
      status = weft_buffer_map_write(dag->words, (weft_device_size_t)i * 4,
                                     &word, 4);
      break;
    }
    case DAG_NON_BLOCKING_CALL: {
      weft_semaphore_t* ran = dag->calls_ran;
      weft_semaphore_retain(ran);
      // Acq_rel: each call's reads of the DAG happen before the count that
      // the last call signals, after which the host frees the DAG.
      int32_t count = weft_atomic_fetch_add(&dag->non_blocking_calls, 1,
                                            memory_order_acq_rel) +
                      1;
      // Calls may signal out of order: one finding |ran| past its count
      // already is harmless (the last count still gets there).
      weft_status_ignore(weft_semaphore_signal(ran, (uint64_t)count));
      weft_semaphore_release(ran);
      break;
    }
    default:
      status = WEFT_STATUS(ABORTED, "stress op %u failed on purpose", i);
      break;
  }
  return status;
}

static weft_buffer_ref_t dag_word(dag_t* dag, uint32_t index) {
  return weft_make_buffer_ref(dag->words, (weft_device_size_t)index * 4, 4);
}

// Submits op |i|. Thread-safe: reads the generated DAG only.
static weft_status_t dag_submit(dag_t* dag, uint32_t i) {
  const dag_op_t* op = &dag->ops[i];
  weft_semaphore_t* waits[kMaxWaits];
  for (uint32_t w = 0; w < op->wait_count; ++w) {
    waits[w] = dag->semaphores[op->wait_semaphores[w]];
  }
  weft_semaphore_list_t wait_list = {op->wait_count, waits, op->wait_values};
  weft_semaphore_list_t signal_list = {1, &dag->semaphores[kRootCount + i],
                                       &op->signal_value};
  weft_queue_affinity_t affinity = op->queue == UINT32_MAX
                                       ? WEFT_QUEUE_AFFINITY_ANY
                                       : (weft_queue_affinity_t)1
                                             << (op->queue % dag->queue_count);
  weft_device_t* device = dag->device;
  const uint32_t one[3] = {1, 1, 1};
  uint64_t args[4] = {i, 0, 0, 0};
  weft_status_t status = WEFT_OK;
  switch (op->kind) {
    case DAG_BARRIER:
      status =
          weft_device_queue_barrier(device, affinity, wait_list, signal_list);
      break;
    case DAG_FILL: {
      uint32_t word = weft_cts_f32_bits((float)i + 1.0f);
      status = weft_device_queue_fill(device, affinity, wait_list, signal_list,
                                      dag->words, (weft_device_size_t)i * 4, 4,
                                      &word, 4);
      break;
    }
    case DAG_UPDATE: {
      uint32_t word = weft_cts_f32_bits((float)i + 3.0f);
      status = weft_device_queue_update(device, affinity, wait_list,
                                        signal_list, &word, dag->words,
                                        (weft_device_size_t)i * 4, 4);
      break;
    }
    case DAG_COPY:
      status =
          weft_device_queue_copy(device, affinity, wait_list, signal_list,
                                 dag->words, (weft_device_size_t)op->source * 4,
                                 dag->words, (weft_device_size_t)i * 4, 4);
      break;
    case DAG_DISPATCH: {
      uint32_t constants[3] = {weft_cts_f32_bits(1.0f), weft_cts_f32_bits(1.0f),
                               1};
      weft_buffer_ref_t bindings[2] = {dag_word(dag, op->source),
                                       dag_word(dag, i)};
      status = weft_device_queue_dispatch(
          device, affinity, wait_list, signal_list, dag->cts->kernels,
          dag->scale_offset_ordinal, one, 3, constants, 2, bindings);
      break;
    }
    case DAG_EXECUTE: {
      weft_buffer_binding_t entries[2] = {
          {dag->words, (weft_device_size_t)op->source * 4, 4},
          {dag->words, (weft_device_size_t)i * 4, 4}};
      weft_binding_table_t table = {2, entries};
      status = weft_device_queue_execute(device, affinity, wait_list,
                                         signal_list, dag->add_three, table);
      break;
    }
    case DAG_HOST_CALL:
    case DAG_FAIL_CALL:
      status = weft_device_queue_host_call(device, affinity, wait_list,
                                           signal_list, dag_host_call, dag,
                                           args, WEFT_HOST_CALL_FLAG_NONE);
      break;
    case DAG_NON_BLOCKING_CALL:
      status = weft_device_queue_host_call(
          device, affinity, wait_list, signal_list, dag_host_call, dag, args,
          WEFT_HOST_CALL_FLAG_NON_BLOCKING);
      break;
    case DAG_FAIL_DISPATCH: {
      // Workgroup (i % 64) of (i % 64) + 1 fails.
      uint32_t workgroups[3] = {1 + i % 64, 1, 1};
      uint32_t constants[1] = {i % 64};
      status = weft_device_queue_dispatch(
          device, affinity, wait_list, signal_list, dag->cts->kernels,
          dag->fail_ordinal, workgroups, 1, constants, 0, NULL);
      break;
    }
    default:
      status = WEFT_STATUS(INTERNAL, "stress: op %u has no kind", i);
      break;
  }
  if (!weft_status_is_ok(status)) {
    status = weft_status_annotate(status, "submitting stress op %u (%s)", i,
                                  kDagKindNames[op->kind]);
  }
  return status;
}

// Runs host step |s|.
static void dag_step(dag_t* dag, uint32_t s) {
  // The graph is acyclic (every wait is on an earlier op or a root): the
  // cycle search must find nothing in whatever is pending right now.
  assert_int_equal(weft_diagnostics_find_cycles(stderr), 0);
  const dag_step_t* step = &dag->steps[s];
  weft_semaphore_t* root = dag->semaphores[step->root];
  if (step->root == kDoomedRoot) {
    weft_semaphore_fail(
        root, WEFT_STATUS(CANCELLED, "%s", dag->failure_roots[0].message));
  } else {
    WEFT_ASSERT_OK(weft_semaphore_signal(root, step->value));
  }
}

typedef struct dag_submitter_t {
  dag_t* dag;
  uint32_t first;
  uint32_t stride;
  weft_status_t status;
  weft_thread_t* thread;
} dag_submitter_t;

// Submits ops order[first], order[first + stride], ...
static int dag_submitter_main(void* user_data) {
  dag_submitter_t* submitter = (dag_submitter_t*)user_data;
  dag_t* dag = submitter->dag;
  weft_status_t status = WEFT_OK;
  for (uint32_t p = submitter->first;
       weft_status_is_ok(status) && p < dag->op_count; p += submitter->stride) {
    status = dag_submit(dag, dag->order[p]);
    weft_atomic_fetch_add(&dag->submitted, 1, memory_order_relaxed);
  }
  if (!weft_status_is_ok(status)) {
    // Let the stepping thread finish instead of waiting for the rest.
    weft_atomic_fetch_add(&dag->submitted, (int32_t)dag->op_count,
                          memory_order_relaxed);
  }
  submitter->status = status;
  return 0;
}

// Submits every op from this thread, with the host steps spread evenly
// between the submissions.
static void dag_submit_all_here(dag_t* dag) {
  uint32_t next_step = 0;
  for (uint32_t p = 0; p < dag->op_count; ++p) {
    WEFT_ASSERT_OK(dag_submit(dag, dag->order[p]));
    while (next_step < dag->step_count &&
           (uint64_t)next_step * dag->op_count <
               (uint64_t)(p + 1) * dag->step_count) {
      dag_step(dag, next_step++);
    }
  }
  while (next_step < dag->step_count) dag_step(dag, next_step++);
}

// Submits from |count| threads while this thread runs the host steps as
// the submissions progress.
static void dag_submit_from_threads(dag_t* dag, uint32_t count) {
  dag_submitter_t submitters[2];
  assert_true(count <= 2);
  for (uint32_t t = 0; t < count; ++t) {
    submitters[t] = (dag_submitter_t){dag, t, count, WEFT_OK, NULL};
    weft_thread_params_t params = {.name = "stress-submit", .cpu = -1};
    WEFT_ASSERT_OK(weft_thread_create(dag_submitter_main, &submitters[t],
                                      &params, weft_allocator_system(),
                                      &submitters[t].thread));
  }
  for (uint32_t s = 0; s < dag->step_count; ++s) {
    uint64_t due = (uint64_t)s * dag->op_count / dag->step_count;
    while ((uint64_t)weft_atomic_load(&dag->submitted, memory_order_relaxed) <
           due) {
      weft_thread_yield();
    }
    dag_step(dag, s);
  }
  for (uint32_t t = 0; t < count; ++t) {
    weft_thread_join(submitters[t].thread);
    WEFT_ASSERT_OK(submitters[t].status);
  }
}

//===----------------------------------------------------------------------===//
// Checking
//===----------------------------------------------------------------------===//

// Prints op |i| and what it waits on.
static void dag_describe(dag_t* dag, uint32_t i, FILE* stream) {
  const dag_op_t* op = &dag->ops[i];
  fprintf(stream, "  op %u (%s, queue %d, signals %" PRIu64 ", %s) waits:", i,
          kDagKindNames[op->kind],
          op->queue == UINT32_MAX ? -1 : (int)op->queue, op->signal_value,
          op->expect_failed ? "expected to fail" : "expected to succeed");
  for (uint32_t w = 0; w < op->wait_count; ++w) {
    uint32_t semaphore = op->wait_semaphores[w];
    if (semaphore < kRootCount) {
      fprintf(stream, " root %u@%" PRIu64, semaphore, op->wait_values[w]);
    } else {
      fprintf(stream, " op %u@%" PRIu64, semaphore - kRootCount,
              op->wait_values[w]);
    }
  }
  fprintf(stream, "\n");
}

// True when |status| matches one of the failure roots op |i| may carry.
static bool dag_failure_matches(dag_t* dag, uint32_t i, weft_status_t status) {
  const uint64_t* possible = dag_possible(dag, i);
  for (uint32_t r = 0; r < dag->failure_root_count; ++r) {
    if (!(possible[r / 64] & (1ull << (r % 64)))) continue;
    const dag_failure_root_t* root = &dag->failure_roots[r];
    if (weft_status_code(status) == root->code &&
        strcmp(weft_status_message(status), root->message) == 0) {
      return true;
    }
  }
  return false;
}

// Waits for every op, then checks each outcome and word. Returns the
// number of mismatches (each printed).
static uint32_t dag_check(dag_t* dag) {
  uint32_t n = dag->op_count;
  weft_status_t* results = calloc(n, sizeof(*results));
  assert_non_null(results);
  weft_time_t deadline =
      weft_time_now() + g_options.deadline_seconds * 1000 * MS;
  uint32_t hung = n;
  for (uint32_t i = 0; i < n && hung == n; ++i) {
    results[i] = weft_semaphore_wait(dag->semaphores[kRootCount + i],
                                     dag->ops[i].signal_value,
                                     weft_timeout_deadline(deadline));
    if (weft_status_is(results[i], WEFT_STATUS_DEADLINE_EXCEEDED)) hung = i;
  }
  uint32_t mismatches = 0;
  if (hung < n) {
    fprintf(stderr,
            "stress: seed %" PRIu64 ": op %u did not complete within %" PRId64
            " s\n",
            dag->seed, hung, g_options.deadline_seconds);
    dag_describe(dag, hung, stderr);
    weft_device_dump_pending(dag->device, stderr);
    ++mismatches;
    // Unblock everything still parked so the device can be released.
    for (uint32_t s = 0; s < kRootCount + n; ++s) {
      weft_semaphore_fail(dag->semaphores[s],
                          WEFT_STATUS(CANCELLED, "stress: giving up"));
    }
    for (uint32_t i = hung; i < n; ++i) {
      weft_status_free(results[i]);
      results[i] = weft_semaphore_wait(dag->semaphores[kRootCount + i],
                                       dag->ops[i].signal_value,
                                       weft_timeout_relative(10000 * MS));
    }
  }
  // The dispatch failure roots' messages come from their own signals.
  for (uint32_t r = 1; r < dag->failure_root_count && hung == n; ++r) {
    dag_failure_root_t* root = &dag->failure_roots[r];
    const dag_op_t* op = &dag->ops[root->op];
    if (op->kind != DAG_FAIL_DISPATCH || !op->expect_failed) continue;
    if (weft_status_code(results[root->op]) == WEFT_STATUS_INTERNAL &&
        strstr(weft_status_message(results[root->op]), "kernel 'fail'")) {
      snprintf(root->message, sizeof(root->message), "%s",
               weft_status_message(results[root->op]));
    }
  }
  uint32_t* words = calloc(n + 1, sizeof(*words));
  assert_non_null(words);
  weft_cts_read_buffer(dag->cts, dag->words, 0, words,
                       (weft_device_size_t)(n + 1) * 4);
  for (uint32_t i = 0; i < n && hung == n; ++i) {
    const dag_op_t* op = &dag->ops[i];
    weft_status_t status = results[i];
    bool ok;
    if (op->expect_failed) {
      ok = !weft_status_is_ok(status) && dag_failure_matches(dag, i, status);
    } else {
      ok = weft_status_is_ok(status);
    }
    uint32_t expected_word = op->expect_failed ? 0 : op->expected_word;
    bool word_ok = words[i] == expected_word;
    if ((!ok || !word_ok) && ++mismatches <= 10) {
      char text[1024];
      weft_status_format(status, text, sizeof(text));
      fprintf(stderr,
              "stress: seed %" PRIu64
              ": op %u: got %s, word 0x%08x "
              "(expected 0x%08x)\n",
              dag->seed, i, weft_status_is_ok(status) ? "OK" : text, words[i],
              expected_word);
      dag_describe(dag, i, stderr);
    }
  }
  if (words[n] != 0) {
    fprintf(stderr, "stress: the zero word was written: 0x%08x\n", words[n]);
    ++mismatches;
  }
  for (uint32_t i = 0; i < n; ++i) weft_status_free(results[i]);
  free(results);
  free(words);
  return mismatches;
}

//===----------------------------------------------------------------------===//
// Cases
//===----------------------------------------------------------------------===//

// Creates the semaphores, buffer and recording of a generated DAG.
static void dag_create_resources(dag_t* dag) {
  uint32_t count = kRootCount + dag->op_count;
  dag->semaphores = calloc(count, sizeof(*dag->semaphores));
  assert_non_null(dag->semaphores);
  for (uint32_t s = 0; s < count; ++s) {
    WEFT_ASSERT_OK(
        weft_device_create_semaphore(dag->device, 0, &dag->semaphores[s]));
    char name[32];
    if (s < kRootCount) {
      snprintf(name, sizeof(name), "root %u", s);
    } else {
      snprintf(name, sizeof(name), "op %u", s - kRootCount);
    }
    weft_semaphore_set_name(dag->semaphores[s], name);
  }
  dag->calls_ran = weft_cts_create_semaphore(dag->cts, 0);
  weft_buffer_params_t params = {0};
  weft_device_size_t length = (weft_device_size_t)(dag->op_count + 1) * 4;
  WEFT_ASSERT_OK(
      weft_device_allocate_buffer(dag->device, params, length, &dag->words));
  weft_cts_fill_buffer(dag->cts, dag->words, 0, length, &(uint32_t){0}, 4);
  WEFT_ASSERT_OK(weft_executable_lookup_kernel(
      dag->cts->kernels, "scale_offset", &dag->scale_offset_ordinal));
  WEFT_ASSERT_OK(weft_executable_lookup_kernel(dag->cts->kernels, "fail",
                                               &dag->fail_ordinal));
  WEFT_ASSERT_OK(weft_command_buffer_create(
      dag->device, WEFT_COMMAND_BUFFER_MODE_REUSABLE, WEFT_COMMAND_CATEGORY_ANY,
      2, &dag->add_three));
  WEFT_ASSERT_OK(weft_command_buffer_begin(dag->add_three));
  uint32_t constants[3] = {weft_cts_f32_bits(1.0f), weft_cts_f32_bits(3.0f), 1};
  weft_buffer_ref_t bindings[2] = {weft_make_indirect_buffer_ref(0, 0, 4),
                                   weft_make_indirect_buffer_ref(1, 0, 4)};
  const uint32_t one[3] = {1, 1, 1};
  WEFT_ASSERT_OK(weft_command_buffer_dispatch(dag->add_three, dag->cts->kernels,
                                              dag->scale_offset_ordinal, one, 3,
                                              constants, 2, bindings));
  WEFT_ASSERT_OK(weft_command_buffer_end(dag->add_three));
}

static void dag_destroy(dag_t* dag) {
  for (uint32_t s = 0; dag->semaphores && s < kRootCount + dag->op_count; ++s) {
    weft_semaphore_release(dag->semaphores[s]);
  }
  weft_semaphore_release(dag->calls_ran);
  weft_command_buffer_release(dag->add_three);
  weft_buffer_release(dag->words);
  free(dag->semaphores);
  free(dag->ops);
  free(dag->order);
  free(dag->steps);
  free(dag->failure_roots);
  free(dag->possible);
}

// Builds, submits and checks one DAG of |op_count| ops.
static void dag_run(weft_cts_t* cts, uint32_t op_count, uint32_t fail_per_mille,
                    uint32_t submitters, uint64_t seed_salt) {
  dag_t dag;
  memset(&dag, 0, sizeof(dag));
  dag.cts = cts;
  dag.seed = g_options.seed + seed_salt;
  dag.op_count = op_count < 1 ? 1 : op_count;
  dag.fail_per_mille = fail_per_mille;
  dag.queue_count = weft_cts_ensure_queues(cts);
  dag.device = cts->device;
  dag_generate(&dag);
  dag_create_resources(&dag);
  weft_time_t start = weft_time_now();
  if (submitters == 1) {
    dag_submit_all_here(&dag);
  } else {
    dag_submit_from_threads(&dag, submitters);
  }
  uint32_t mismatches = dag_check(&dag);
  // Non-blocking host calls may still be running after their signals.
  int32_t expected_calls = 0;
  for (uint32_t i = 0; i < dag.op_count; ++i) {
    expected_calls +=
        dag.ops[i].kind == DAG_NON_BLOCKING_CALL && !dag.ops[i].expect_failed;
  }
  if (mismatches == 0 && expected_calls > 0) {
    // A time-out shows as a wrong count below.
    weft_status_ignore(weft_semaphore_wait(dag.calls_ran,
                                           (uint64_t)expected_calls,
                                           weft_timeout_relative(10000 * MS)));
  }
  int32_t calls =
      weft_atomic_load(&dag.non_blocking_calls, memory_order_acquire);
  uint32_t failed = 0;
  for (uint32_t i = 0; i < dag.op_count; ++i)
    failed += dag.ops[i].expect_failed;
  print_message(
      "stress: seed %" PRIu64
      ", %u ops on %u queue%s from %u thread%s: %u "
      "reached, %u failed (%u failure roots), %.1f ms\n",
      dag.seed, dag.op_count, dag.queue_count, dag.queue_count == 1 ? "" : "s",
      submitters, submitters == 1 ? "" : "s", dag.op_count - failed, failed,
      dag.failure_root_count, (double)(weft_time_now() - start) / 1e6);
  dag_destroy(&dag);
  if (mismatches) {
    fail_msg("seed %" PRIu64 ": %u ops ended wrong (rerun with --seed %" PRIu64
             " --ops %u)",
             dag.seed, mismatches, g_options.seed, g_options.op_count);
  }
  if (calls != expected_calls) {
    fail_msg("seed %" PRIu64 ": %d non-blocking host calls ran, expected %d",
             dag.seed, calls, expected_calls);
  }
}

static void dag_one_submitter(void** state) {
  dag_run(*state, g_options.op_count, 10, 1, 0);
}

static void dag_two_submitters(void** state) {
  dag_run(*state, g_options.op_count, 10, 2, 1);
}

static void dag_many_failures(void** state) {
  dag_run(*state, g_options.op_count / 3, 80, 2, 2);
}

// Reads an unsigned option from "--name VALUE" or the environment.
static uint64_t dag_option(int argc, char** argv, const char* flag,
                           const char* env, uint64_t fallback) {
  const char* text = getenv(env);
  for (int i = 1; i + 1 < argc; ++i) {
    if (strcmp(argv[i], flag) == 0) text = argv[i + 1];
  }
  return text && text[0] ? strtoull(text, NULL, 0) : fallback;
}

int main(int argc, char** argv) {
  g_options.op_count =
      (uint32_t)dag_option(argc, argv, "--ops", "WEFT_STRESS_OPS", 3000);
  g_options.seed = dag_option(argc, argv, "--seed", "WEFT_STRESS_SEED",
                              (uint64_t)weft_time_now());
  g_options.deadline_seconds = (int64_t)dag_option(
      argc, argv, "--deadline", "WEFT_STRESS_DEADLINE_S", 120);
  print_message("stress: seed %" PRIu64 " (--seed %" PRIu64 " --ops %u)\n",
                g_options.seed, g_options.seed, g_options.op_count);
  const struct CMUnitTest tests[] = {
      WEFT_CTS_CASE(dag_one_submitter),
      WEFT_CTS_CASE(dag_two_submitters),
      WEFT_CTS_CASE(dag_many_failures),
  };
  return weft_cts_run("dag", tests, WEFT_CTS_COUNT(tests), argc, argv);
}
