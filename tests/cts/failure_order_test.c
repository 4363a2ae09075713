// CTS: failures travel only down a timeline (weft/semaphore.h, "Failure
// order"). The chain of the rule: 48 fills on one semaphore |step| (fill i
// waits step >= i - 1, writes word i of a buffer and signals step = i);
// fill 1 also waits on |hold| and fill 24 on |gate|. The host fails the gate
// and signals hold: fills 1-23 run, step reaches 23 and then fails with the
// gate's message; fills 24-48 do not run.
#include <stdlib.h>
#include <string.h>

#include "cts.h"

#define ANY WEFT_QUEUE_AFFINITY_ANY

enum { kChainLength = 48, kGatedFill = 24 };

// Where fill |i| goes: |devices[i % device_count]|, on queue |i % queues|
// of it when |alternate_queues|.
typedef struct chain_placement_t {
  weft_device_t* devices[2];
  uint32_t device_count;
  bool alternate_queues;
  // Barriers instead of fills (no buffers: nothing then holds a device).
  bool barriers;
} chain_placement_t;

typedef struct chain_t {
  chain_placement_t placement;
  weft_semaphore_t* step;
  weft_semaphore_t* hold;
  weft_semaphore_t* gate;
  // One per device (a device may not reach another's memory): word i of
  // words[i % device_count] is i once fill i ran, else 0.
  weft_buffer_t* words[2];
  uint64_t values[kChainLength + 1];
} chain_t;

enum { kWordsSize = (kChainLength + 1) * sizeof(uint32_t) };

static void chain_create(weft_cts_t* cts, const chain_placement_t* placement,
                         chain_t* chain) {
  memset(chain, 0, sizeof(*chain));
  chain->placement = *placement;
  chain->step = weft_cts_create_semaphore(cts, 0);
  chain->hold = weft_cts_create_semaphore(cts, 0);
  chain->gate = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_set_name(chain->step, "step");
  weft_semaphore_set_name(chain->hold, "hold");
  weft_semaphore_set_name(chain->gate, "gate");
  static const uint32_t kZero = 0;
  for (uint32_t d = 0; d < placement->device_count && !placement->barriers;
       ++d) {
    weft_buffer_params_t params = {0};
    WEFT_ASSERT_OK(weft_device_allocate_buffer(placement->devices[d], params,
                                               kWordsSize, &chain->words[d]));
    weft_cts_device_fill_buffer(placement->devices[d], chain->words[d], 0,
                                kWordsSize, &kZero, sizeof(kZero));
  }
  for (uint32_t i = 0; i <= kChainLength; ++i) chain->values[i] = i;
}

static void chain_release(chain_t* chain) {
  for (uint32_t d = 0; d < 2; ++d) weft_buffer_release(chain->words[d]);
  weft_semaphore_release(chain->step);
  weft_semaphore_release(chain->hold);
  weft_semaphore_release(chain->gate);
}

static void chain_submit(weft_cts_t* cts, chain_t* chain) {
  const chain_placement_t* placement = &chain->placement;
  static const uint64_t kOne = 1;
  for (uint32_t i = 1; i <= kChainLength; ++i) {
    weft_semaphore_t* waits[2] = {chain->step, NULL};
    uint64_t wait_values[2] = {chain->values[i - 1], kOne};
    uint32_t wait_count = 1;
    if (i == 1) waits[wait_count++] = chain->hold;
    if (i == kGatedFill) waits[wait_count++] = chain->gate;
    const uint32_t d = i % placement->device_count;
    weft_device_t* device = placement->devices[d];
    const weft_queue_affinity_t affinity =
        placement->alternate_queues ? weft_cts_queue_bit(cts, i) : ANY;
    const uint32_t word = i;
    if (placement->barriers) {
      WEFT_ASSERT_OK(weft_device_queue_barrier(
          device, affinity, weft_cts_list(wait_count, waits, wait_values),
          weft_cts_list1(&chain->step, &chain->values[i])));
      continue;
    }
    WEFT_ASSERT_OK(weft_device_queue_fill(
        device, affinity, weft_cts_list(wait_count, waits, wait_values),
        weft_cts_list1(&chain->step, &chain->values[i]), chain->words[d],
        i * sizeof(uint32_t), sizeof(uint32_t), &word, sizeof(word)));
  }
}

// Waits for the chain to end and checks the rule: step failed with the
// gate's message at value kGatedFill - 1; fills 1-23 wrote their words and
// 24-48 did not.
static void chain_check(weft_cts_t* cts, chain_t* chain,
                        const char* gate_message) {
  weft_status_t status = weft_cts_wait(chain->step, kChainLength);
  assert_int_equal(weft_status_code(status), WEFT_STATUS_DATA_LOSS);
  assert_string_equal(weft_status_message(status), gate_message);
  weft_status_free(status);
  uint64_t value = 0;
  status = weft_semaphore_query(chain->step, &value);
  assert_int_equal(weft_status_code(status), WEFT_STATUS_DATA_LOSS);
  weft_status_free(status);
  assert_int_equal(value, kGatedFill - 1);
  const chain_placement_t* placement = &chain->placement;
  for (uint32_t d = 0; d < placement->device_count; ++d) {
    uint32_t words[kChainLength + 1];
    weft_cts_device_read_buffer(placement->devices[d], chain->words[d], 0,
                                words, sizeof(words));
    for (uint32_t i = 1; i <= kChainLength; ++i) {
      if (i % placement->device_count != d) continue;
      assert_int_equal(words[i], i < kGatedFill ? i : 0);
    }
  }
}

static const char kGateMessage[] = "the gated step was cancelled";

// Fails the gate before anything upstream can run (hold is signalled
// after).
static void run_gate_failed_before_upstream(
    weft_cts_t* cts, const chain_placement_t* placement) {
  chain_t chain;
  chain_create(cts, placement, &chain);
  chain_submit(cts, &chain);
  weft_semaphore_fail(chain.gate, WEFT_STATUS(DATA_LOSS, "%s", kGateMessage));
  WEFT_ASSERT_OK(weft_semaphore_signal(chain.hold, 1));
  chain_check(cts, &chain, kGateMessage);
  chain_release(&chain);
}

// Fails the gate once the upstream fills are running (hold signalled and
// the first of them seen done).
static void run_gate_failed_after_upstream(weft_cts_t* cts,
                                           const chain_placement_t* placement) {
  chain_t chain;
  chain_create(cts, placement, &chain);
  chain_submit(cts, &chain);
  WEFT_ASSERT_OK(weft_semaphore_signal(chain.hold, 1));
  WEFT_ASSERT_OK(weft_cts_wait(chain.step, 1));
  weft_semaphore_fail(chain.gate, WEFT_STATUS(DATA_LOSS, "%s", kGateMessage));
  chain_check(cts, &chain, kGateMessage);
  chain_release(&chain);
}

static chain_placement_t one_queue(weft_cts_t* cts) {
  chain_placement_t placement = {{cts->device, NULL}, 1, false, false};
  return placement;
}

static void gate_failed_before_upstream_one_queue(void** state) {
  weft_cts_t* cts = *state;
  chain_placement_t placement = one_queue(cts);
  run_gate_failed_before_upstream(cts, &placement);
}

static void gate_failed_after_upstream_one_queue(void** state) {
  weft_cts_t* cts = *state;
  chain_placement_t placement = one_queue(cts);
  run_gate_failed_after_upstream(cts, &placement);
}

static void gate_failed_before_upstream_two_queues(void** state) {
  weft_cts_t* cts = *state;
  weft_cts_ensure_queues(cts);
  chain_placement_t placement = {{cts->device, NULL}, 1, true, false};
  run_gate_failed_before_upstream(cts, &placement);
}

static void gate_failed_after_upstream_two_queues(void** state) {
  weft_cts_t* cts = *state;
  weft_cts_ensure_queues(cts);
  chain_placement_t placement = {{cts->device, NULL}, 1, true, false};
  run_gate_failed_after_upstream(cts, &placement);
}

static weft_device_t* create_second_device(weft_cts_t* cts) {
  weft_device_t* other = NULL;
  WEFT_ASSERT_OK(
      weft_device_create(cts->device_string, cts->allocator, &other));
  return other;
}

static void gate_failed_before_upstream_two_devices(void** state) {
  weft_cts_t* cts = *state;
  chain_placement_t placement = {{cts->device, create_second_device(cts)},
                                 2, false, false};
  run_gate_failed_before_upstream(cts, &placement);
  weft_device_release(placement.devices[1]);
}

static void gate_failed_after_upstream_two_devices(void** state) {
  weft_cts_t* cts = *state;
  chain_placement_t placement = {{cts->device, create_second_device(cts)},
                                 2, false, false};
  run_gate_failed_after_upstream(cts, &placement);
  weft_device_release(placement.devices[1]);
}

// An op that waits on two failing semaphores fails with the failure that
// came first, whatever the order of its wait list and whether the failures
// came before or after the submit.
static void first_of_two_failures_wins(void** state) {
  weft_cts_t* cts = *state;
  static const uint64_t kOnes[2] = {1, 1};
  static const uint64_t kOne = 1;
  for (int submit_first = 0; submit_first < 2; ++submit_first) {
    for (int b_first = 0; b_first < 2; ++b_first) {
      weft_semaphore_t* a = weft_cts_create_semaphore(cts, 0);
      weft_semaphore_t* b = weft_cts_create_semaphore(cts, 0);
      weft_semaphore_t* done = weft_cts_create_semaphore(cts, 0);
      weft_semaphore_t* waits[2] = {a, b};
      if (submit_first) {
        WEFT_ASSERT_OK(weft_device_queue_barrier(
            cts->device, ANY, weft_cts_list(2, waits, kOnes),
            weft_cts_list1(&done, &kOne)));
      }
      weft_semaphore_t* first = b_first ? b : a;
      weft_semaphore_t* second = b_first ? a : b;
      weft_semaphore_fail(first, WEFT_STATUS(ABORTED, "the first failure"));
      weft_semaphore_fail(second, WEFT_STATUS(UNAVAILABLE, "the second one"));
      if (!submit_first) {
        WEFT_ASSERT_OK(weft_device_queue_barrier(
            cts->device, ANY, weft_cts_list(2, waits, kOnes),
            weft_cts_list1(&done, &kOne)));
      }
      weft_cts_assert_status_message(weft_cts_wait(done, 1),
                                     WEFT_STATUS_ABORTED, "the first failure");
      weft_semaphore_release(a);
      weft_semaphore_release(b);
      weft_semaphore_release(done);
    }
  }
}

// The same rule with the waits' signals submitted: an op waits on two
// semaphores that two ops on the device signal behind a gate the host
// holds; both fail, in a known order, while all three are submitted. The
// op fails with the first failure, and once the gate opens the gated ops
// still run. (Every driver holds the three until the gate opens: none
// issues an op behind a value no submitted op signals. A GPU driver's
// rule for waits it left to the device, the same earliest failure, is
// hal/gpu/op_result.c's, tested on its own in hal.gpu_op_result.)
static void first_of_two_failures_wins_behind_signals(void** state) {
  weft_cts_t* cts = *state;
  static const uint64_t kOnes[2] = {1, 1};
  static const uint64_t kOne = 1;
  for (int b_first = 0; b_first < 2; ++b_first) {
    weft_semaphore_t* gate = weft_cts_create_semaphore(cts, 0);
    weft_semaphore_t* a = weft_cts_create_semaphore(cts, 0);
    weft_semaphore_t* b = weft_cts_create_semaphore(cts, 0);
    weft_semaphore_t* done = weft_cts_create_semaphore(cts, 0);
    weft_semaphore_t* gated_done = weft_cts_create_semaphore(cts, 0);
    static const uint64_t kTwo = 2;
    weft_semaphore_t* signals_a[2] = {a, gated_done};
    weft_semaphore_t* signals_b[2] = {b, gated_done};
    const uint64_t values_a[2] = {1, 1};
    const uint64_t values_b[2] = {1, 2};
    // Each gated op also signals |gated_done| (1, then 2), so the test
    // knows they ran; the second waits for the first's value.
    WEFT_ASSERT_OK(weft_device_queue_barrier(
        cts->device, ANY, weft_cts_list1(&gate, &kOne),
        weft_cts_list(2, signals_a, values_a)));
    weft_semaphore_t* waits_b[2] = {gate, gated_done};
    WEFT_ASSERT_OK(weft_device_queue_barrier(
        cts->device, ANY, weft_cts_list(2, waits_b, kOnes),
        weft_cts_list(2, signals_b, values_b)));
    weft_semaphore_t* waits[2] = {a, b};
    WEFT_ASSERT_OK(weft_device_queue_barrier(cts->device, ANY,
                                             weft_cts_list(2, waits, kOnes),
                                             weft_cts_list1(&done, &kOne)));
    weft_semaphore_t* first = b_first ? b : a;
    weft_semaphore_t* second = b_first ? a : b;
    weft_semaphore_fail(first, WEFT_STATUS(ABORTED, "the first failure"));
    weft_semaphore_fail(second, WEFT_STATUS(UNAVAILABLE, "the second one"));
    WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
    weft_cts_assert_status_message(weft_cts_wait(done, 1), WEFT_STATUS_ABORTED,
                                   "the first failure");
    WEFT_ASSERT_OK(weft_cts_wait(gated_done, kTwo));
    weft_semaphore_release(gate);
    weft_semaphore_release(a);
    weft_semaphore_release(b);
    weft_semaphore_release(done);
    weft_semaphore_release(gated_done);
  }
}

// A device released with the gated chain (of barriers) parked on it: every
// op is cancelled, step fails (with the cancellation of op 1, the only one
// whose own wait on step is reached), the release returns and nothing is
// left waiting.
static void release_with_gated_chain_parked(void** state) {
  weft_cts_t* cts = *state;
  weft_device_t* other = create_second_device(cts);
  chain_t chain;
  chain_placement_t placement = {{other, NULL}, 1, false, true};
  chain_create(cts, &placement, &chain);
  chain_submit(cts, &chain);
  weft_device_release(other);
  weft_status_t status = weft_cts_wait(chain.step, kChainLength);
  weft_cts_assert_status_contains_both(status, WEFT_STATUS_CANCELLED,
                                       "'hold' >= 1", "was cancelled");
  uint64_t value = 0;
  status = weft_semaphore_query(chain.step, &value);
  assert_int_equal(weft_status_code(status), WEFT_STATUS_CANCELLED);
  weft_status_free(status);
  assert_int_equal(value, 0);
  // The host may still use what the chain named.
  weft_semaphore_fail(chain.gate, WEFT_STATUS(DATA_LOSS, "%s", kGateMessage));
  WEFT_ASSERT_OK(weft_semaphore_signal(chain.hold, 1));
  chain_release(&chain);
}

int main(int argc, char** argv) {
  const struct CMUnitTest tests[] = {
      WEFT_CTS_CASE(gate_failed_before_upstream_one_queue),
      WEFT_CTS_CASE(gate_failed_after_upstream_one_queue),
      WEFT_CTS_CASE(gate_failed_before_upstream_two_queues),
      WEFT_CTS_CASE(gate_failed_after_upstream_two_queues),
      WEFT_CTS_CASE(gate_failed_before_upstream_two_devices),
      WEFT_CTS_CASE(gate_failed_after_upstream_two_devices),
      WEFT_CTS_CASE(first_of_two_failures_wins),
      WEFT_CTS_CASE(first_of_two_failures_wins_behind_signals),
      WEFT_CTS_CASE(release_with_gated_chain_parked),
  };
  return weft_cts_run("failure_order", tests,
                      sizeof(tests) / sizeof(tests[0]), argc, argv);
}
