// CTS: transient buffers (queue_alloca / queue_dealloca) in command buffers
// and queue pipelines spread over several queues.
//
// A transient buffer's handle exists as soon as queue_alloca returns; its
// memory exists only between the alloca and the dealloca running. A command
// buffer may be recorded against it before the alloca ran (the references
// resolve when the recording executes); executing while the memory is absent
// fails the signals with FAILED_PRECONDITION saying the alloca has not run
// (or the dealloca has).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cts.h"

#define MS (1000ll * 1000ll)

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

// Allocates a buffer of |length| bytes filled with the word |pattern|.
static weft_buffer_t* new_buffer(weft_cts_t* cts, weft_device_size_t length,
                                 uint32_t pattern) {
  return weft_cts_allocate_filled_buffer(cts, length, &pattern, 4);
}

enum {
  kTransientBytes = 4096,
  kIdsCount = 64,  // write_ids records at the start of the transient
  kIdsBytes = kIdsCount * 16,
};

// Records into |command_buffer| against |transient| (a direct buffer, or
// slot 0 when NULL) and |output| (direct, or slot 1 when NULL):
// fill the transient with |pattern|; barrier; write_ids over its first
// kIdsCount records; barrier; copy the whole transient to the output.
static void record_transient_work(weft_cts_t* cts,
                                  weft_command_buffer_t* command_buffer,
                                  weft_buffer_t* transient,
                                  weft_buffer_t* output, uint32_t pattern) {
  weft_buffer_ref_t whole =
      transient ? weft_make_buffer_ref(transient, 0, kTransientBytes)
                : weft_make_indirect_buffer_ref(0, 0, kTransientBytes);
  weft_buffer_ref_t ids = transient
                              ? weft_make_buffer_ref(transient, 0, kIdsBytes)
                              : weft_make_indirect_buffer_ref(0, 0, kIdsBytes);
  weft_buffer_ref_t out =
      output ? weft_make_buffer_ref(output, 0, kTransientBytes)
             : weft_make_indirect_buffer_ref(1, 0, kTransientBytes);
  WEFT_ASSERT_OK(weft_command_buffer_fill(command_buffer, whole, &pattern, 4));
  WEFT_ASSERT_OK(weft_command_buffer_barrier(command_buffer));
  const uint32_t n[3] = {kIdsCount, 1, 1};
  WEFT_ASSERT_OK(weft_command_buffer_dispatch(
      command_buffer, cts->kernels,
      weft_cts_kernel_ordinal(cts->kernels, "write_ids"), n, 0, NULL, 1, &ids));
  WEFT_ASSERT_OK(weft_command_buffer_barrier(command_buffer));
  WEFT_ASSERT_OK(weft_command_buffer_copy(command_buffer, whole, out));
}

// Checks what record_transient_work left in |output| at |offset|.
static void assert_transient_work(weft_cts_t* cts, weft_buffer_t* output,
                                  weft_device_size_t offset, uint32_t pattern) {
  weft_cts_assert_ids(cts, output, offset,
                      (const uint32_t[3]){kIdsCount, 1, 1});
  weft_cts_assert_words(cts, output, offset + kIdsBytes,
                        (kTransientBytes - kIdsBytes) / 4, pattern);
}

//===----------------------------------------------------------------------===//
// Cases
//===----------------------------------------------------------------------===//

static void recorded_before_alloca_direct(void** state) {
  // alloca (queue 0, behind a host gate) -> execute of a recording made
  // before the alloca ran (queue 1) -> dealloca (queue 2).
  weft_cts_t* cts = *state;
  weft_cts_ensure_queues(cts);
  weft_semaphore_t* gate = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* allocated = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* executed = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* freed = weft_cts_create_semaphore(cts, 0);
  weft_buffer_t* output = new_buffer(cts, kTransientBytes, 0xEEEEEEEEu);
  uint64_t one = 1;
  weft_buffer_params_t params = {0};
  weft_buffer_t* transient = NULL;
  WEFT_ASSERT_OK(weft_device_queue_alloca(
      cts->device, weft_cts_queue_bit(cts, 0), weft_cts_list1(&gate, &one),
      weft_cts_list1(&allocated, &one), params, kTransientBytes, &transient));
  weft_cts_assert_no_memory(cts, transient, "before its alloca ran");
  weft_command_buffer_t* command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
  record_transient_work(cts, command_buffer, transient, output, 0x5A5A5A5Au);
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  WEFT_ASSERT_OK(weft_device_queue_execute(
      cts->device, weft_cts_queue_bit(cts, 1), weft_cts_list1(&allocated, &one),
      weft_cts_list1(&executed, &one), command_buffer,
      (weft_binding_table_t){0, NULL}));
  WEFT_ASSERT_OK(weft_device_queue_dealloca(
      cts->device, weft_cts_queue_bit(cts, 2), weft_cts_list1(&executed, &one),
      weft_cts_list1(&freed, &one), transient));
  weft_command_buffer_release(command_buffer);
  weft_cts_assert_not_reached(allocated, 1);
  weft_cts_assert_not_reached(executed, 1);
  weft_cts_assert_not_reached(freed, 1);
  weft_cts_assert_no_memory(cts, transient, "before its alloca ran");
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  WEFT_ASSERT_OK(weft_cts_wait(freed, 1));
  assert_int_equal(weft_cts_query_value(executed), 1);
  assert_transient_work(cts, output, 0, 0x5A5A5A5Au);
  weft_cts_assert_no_memory(cts, transient, "after its dealloca ran");
  weft_buffer_release(transient);
  weft_buffer_release(output);
  weft_semaphore_t* all[4] = {gate, allocated, executed, freed};
  for (int i = 0; i < 4; ++i) weft_semaphore_release(all[i]);
}

static void recorded_before_alloca_indirect_stepwise(void** state) {
  // One reusable recording with the transient in slot 0; four transients,
  // the alloca of transient i waiting for gate value i + 1. The host moves
  // the gate one step at a time: exactly one more pipeline completes.
  weft_cts_t* cts = *state;
  enum { kCount = 4 };
  weft_cts_ensure_queues(cts);
  weft_semaphore_t* gate = weft_cts_create_semaphore(cts, 0);
  weft_buffer_t* output =
      new_buffer(cts, kCount * kTransientBytes, 0xEEEEEEEEu);
  weft_command_buffer_t* command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_REUSABLE, 2);
  record_transient_work(cts, command_buffer, NULL, NULL, 0x0C0C0C0Cu);
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  weft_buffer_t* transients[kCount];
  weft_semaphore_t* timelines[kCount];
  uint64_t steps[4] = {1, 2, 3, 4};
  for (uint32_t i = 0; i < kCount; ++i) {
    timelines[i] = weft_cts_create_semaphore(cts, 0);
    weft_buffer_params_t params = {0};
    WEFT_ASSERT_OK(
        weft_device_queue_alloca(cts->device, weft_cts_queue_bit(cts, i),
                                 weft_cts_list1(&gate, &steps[i]),
                                 weft_cts_list1(&timelines[i], &steps[0]),
                                 params, kTransientBytes, &transients[i]));
    weft_buffer_binding_t entries[2] = {
        {transients[i], 0, WEFT_WHOLE_BUFFER},
        {output, (weft_device_size_t)i * kTransientBytes, kTransientBytes}};
    WEFT_ASSERT_OK(weft_device_queue_execute(
        cts->device, weft_cts_queue_bit(cts, i + 1),
        weft_cts_list1(&timelines[i], &steps[0]),
        weft_cts_list1(&timelines[i], &steps[1]), command_buffer,
        (weft_binding_table_t){2, entries}));
    WEFT_ASSERT_OK(weft_device_queue_dealloca(
        cts->device, weft_cts_queue_bit(cts, i + 2),
        weft_cts_list1(&timelines[i], &steps[1]),
        weft_cts_list1(&timelines[i], &steps[2]), transients[i]));
  }
  weft_command_buffer_release(command_buffer);
  for (uint32_t step = 1; step <= kCount; ++step) {
    WEFT_ASSERT_OK(weft_semaphore_signal(gate, step));
    for (uint32_t i = 0; i < kCount; ++i) {
      if (i < step) {
        WEFT_ASSERT_OK(weft_cts_wait(timelines[i], 3));
      } else {
        weft_cts_assert_not_reached(timelines[i], 1);
      }
    }
    for (uint32_t i = 0; i < kCount; ++i) {
      if (i < step) {
        assert_transient_work(cts, output, i * kTransientBytes, 0x0C0C0C0Cu);
      } else {
        weft_cts_assert_words(cts, output, i * kTransientBytes,
                              kTransientBytes / 4, 0xEEEEEEEEu);
      }
    }
  }
  for (uint32_t i = 0; i < kCount; ++i) {
    weft_cts_assert_no_memory(cts, transients[i], "after its dealloca ran");
    weft_buffer_release(transients[i]);
    weft_semaphore_release(timelines[i]);
  }
  weft_buffer_release(output);
  weft_semaphore_release(gate);
}

static void pipeline_rounds_across_queues(void** state) {
  // Eight rounds of alloca (queue r) -> execute (queue r + 1) -> dealloca
  // (queue r + 2) on one timeline, each round with its own transient and a
  // one-shot recording made before anything ran. One host signal releases
  // all 24 ops; a round's alloca may reuse the previous round's memory.
  weft_cts_t* cts = *state;
  enum { kRounds = 8 };
  weft_cts_ensure_queues(cts);
  weft_semaphore_t* timeline = weft_cts_create_semaphore(cts, 0);
  weft_buffer_t* output =
      new_buffer(cts, kRounds * kTransientBytes, 0xEEEEEEEEu);
  uint64_t values[3 * kRounds + 1];
  for (uint32_t i = 0; i <= 3 * kRounds; ++i) values[i] = i;
  weft_buffer_t* transients[kRounds];
  for (uint32_t r = 0; r < kRounds; ++r) {
    uint64_t* v = &values[3 * r];
    weft_buffer_params_t params = {0};
    WEFT_ASSERT_OK(weft_device_queue_alloca(
        cts->device, weft_cts_queue_bit(cts, r),
        weft_cts_list1(&timeline, &v[0]), weft_cts_list1(&timeline, &v[1]),
        params, kTransientBytes, &transients[r]));
    weft_buffer_t* slice = NULL;
    WEFT_ASSERT_OK(
        weft_buffer_subspan(output, (weft_device_size_t)r * kTransientBytes,
                            kTransientBytes, cts->allocator, &slice));
    weft_command_buffer_t* command_buffer = weft_cts_begin_command_buffer(
        cts, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
    record_transient_work(cts, command_buffer, transients[r], slice,
                          0x01010101u * (r + 1));
    WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
    weft_buffer_release(slice);  // the recording holds it
    WEFT_ASSERT_OK(weft_device_queue_execute(
        cts->device, weft_cts_queue_bit(cts, r + 1),
        weft_cts_list1(&timeline, &v[1]), weft_cts_list1(&timeline, &v[2]),
        command_buffer, (weft_binding_table_t){0, NULL}));
    weft_command_buffer_release(command_buffer);
    WEFT_ASSERT_OK(weft_device_queue_dealloca(
        cts->device, weft_cts_queue_bit(cts, r + 2),
        weft_cts_list1(&timeline, &v[2]), weft_cts_list1(&timeline, &v[3]),
        transients[r]));
  }
  // Round 0's alloca waits for value 0 and may have run already.
  WEFT_ASSERT_OK(weft_cts_wait(timeline, 3 * kRounds));
  for (uint32_t r = 0; r < kRounds; ++r) {
    assert_transient_work(cts, output, r * kTransientBytes,
                          0x01010101u * (r + 1));
    weft_cts_assert_no_memory(cts, transients[r], "after its dealloca ran");
    weft_buffer_release(transients[r]);
  }
  weft_buffer_release(output);
  weft_semaphore_release(timeline);
}

static void execute_before_commit_fails(void** state) {
  // An execute that is not ordered after the alloca runs while the memory
  // is absent: FAILED_PRECONDITION saying the alloca has not run. The alloca,
  // released later, still works, and so does a second execute ordered after it.
  weft_cts_t* cts = *state;
  weft_cts_ensure_queues(cts);
  weft_semaphore_t* gate = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* allocated = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* early = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* late = weft_cts_create_semaphore(cts, 0);
  weft_buffer_t* output = new_buffer(cts, kTransientBytes, 0xEEEEEEEEu);
  uint64_t one = 1, two = 2;
  weft_buffer_params_t params = {0};
  weft_buffer_t* transient = NULL;
  WEFT_ASSERT_OK(weft_device_queue_alloca(
      cts->device, weft_cts_queue_bit(cts, 0), weft_cts_list1(&gate, &one),
      weft_cts_list1(&allocated, &one), params, kTransientBytes, &transient));
  weft_command_buffer_t* command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_REUSABLE, 0);
  record_transient_work(cts, command_buffer, transient, output, 0x77777777u);
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  WEFT_ASSERT_OK(weft_device_queue_execute(
      cts->device, weft_cts_queue_bit(cts, 1), weft_semaphore_list_empty(),
      weft_cts_list1(&early, &one), command_buffer,
      (weft_binding_table_t){0, NULL}));
  weft_cts_assert_status_contains(weft_cts_wait(early, 1),
                                  WEFT_STATUS_FAILED_PRECONDITION,
                                  "before its alloca ran");
  weft_cts_assert_words(cts, output, 0, kTransientBytes / 4, 0xEEEEEEEEu);
  WEFT_ASSERT_OK(weft_device_queue_execute(
      cts->device, weft_cts_queue_bit(cts, 1), weft_cts_list1(&allocated, &one),
      weft_cts_list1(&late, &one), command_buffer,
      (weft_binding_table_t){0, NULL}));
  WEFT_ASSERT_OK(weft_device_queue_dealloca(
      cts->device, weft_cts_queue_bit(cts, 2), weft_cts_list1(&late, &one),
      weft_cts_list1(&late, &two), transient));
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  WEFT_ASSERT_OK(weft_cts_wait(late, 2));
  assert_transient_work(cts, output, 0, 0x77777777u);
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(transient);
  weft_buffer_release(output);
  weft_semaphore_t* all[4] = {gate, allocated, early, late};
  for (int i = 0; i < 4; ++i) weft_semaphore_release(all[i]);
}

static void queue_ops_on_transient_across_queues(void** state) {
  // alloca (q0) -> fill (q1) -> update (q2) -> write_ids dispatch (q3) ->
  // copy out (q0) -> dealloca (q1), chained by one timeline. The alloca is
  // submitted first (it returns the handle), the rest last-first; the host
  // starts the chain.
  weft_cts_t* cts = *state;
  weft_cts_ensure_queues(cts);
  weft_semaphore_t* s = weft_cts_create_semaphore(cts, 0);
  weft_buffer_t* output = new_buffer(cts, kTransientBytes, 0xEEEEEEEEu);
  uint64_t v[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  weft_buffer_params_t params = {0};
  weft_buffer_t* transient = NULL;
  WEFT_ASSERT_OK(weft_device_queue_alloca(
      cts->device, weft_cts_queue_bit(cts, 0), weft_cts_list1(&s, &v[1]),
      weft_cts_list1(&s, &v[2]), params, kTransientBytes, &transient));
  WEFT_ASSERT_OK(weft_device_queue_dealloca(
      cts->device, weft_cts_queue_bit(cts, 1), weft_cts_list1(&s, &v[6]),
      weft_cts_list1(&s, &v[7]), transient));
  WEFT_ASSERT_OK(weft_device_queue_copy(
      cts->device, weft_cts_queue_bit(cts, 0), weft_cts_list1(&s, &v[5]),
      weft_cts_list1(&s, &v[6]), transient, 0, output, 0, kTransientBytes));
  const uint32_t n[3] = {kIdsCount, 1, 1};
  weft_buffer_ref_t ids = weft_make_buffer_ref(transient, 0, kIdsBytes);
  WEFT_ASSERT_OK(weft_device_queue_dispatch(
      cts->device, weft_cts_queue_bit(cts, 3), weft_cts_list1(&s, &v[4]),
      weft_cts_list1(&s, &v[5]), cts->kernels,
      weft_cts_kernel_ordinal(cts->kernels, "write_ids"), n, 0, NULL, 1, &ids));
  uint32_t words[16];
  for (int i = 0; i < 16; ++i) words[i] = 0xAB000000u + i;
  WEFT_ASSERT_OK(weft_device_queue_update(
      cts->device, weft_cts_queue_bit(cts, 2), weft_cts_list1(&s, &v[3]),
      weft_cts_list1(&s, &v[4]), words, transient, kTransientBytes - 64, 64));
  uint32_t pattern = 0x99999999u;
  WEFT_ASSERT_OK(weft_device_queue_fill(
      cts->device, weft_cts_queue_bit(cts, 1), weft_cts_list1(&s, &v[2]),
      weft_cts_list1(&s, &v[3]), transient, 0, kTransientBytes, &pattern, 4));
  weft_cts_assert_not_reached(s, 1);
  weft_cts_assert_no_memory(cts, transient, "before its alloca ran");
  WEFT_ASSERT_OK(weft_semaphore_signal(s, 1));
  WEFT_ASSERT_OK(weft_cts_wait(s, 7));
  weft_cts_assert_ids(cts, output, 0, (const uint32_t[3]){kIdsCount, 1, 1});
  weft_cts_assert_words(cts, output, kIdsBytes,
                        (kTransientBytes - kIdsBytes - 64) / 4, 0x99999999u);
  uint32_t tail[16];
  weft_cts_read_buffer(cts, output, kTransientBytes - 64, tail, sizeof(tail));
  for (int i = 0; i < 16; ++i) assert_int_equal(tail[i], 0xAB000000u + i);
  weft_cts_assert_no_memory(cts, transient, "after its dealloca ran");
  weft_buffer_release(transient);
  weft_buffer_release(output);
  weft_semaphore_release(s);
}

static void many_transients_in_flight(void** state) {
  // 32 alloca -> execute -> dealloca pipelines with no gate, on every
  // queue, all sharing one reusable recording with the transient in slot 0.
  weft_cts_t* cts = *state;
  enum { kCount = 32 };
  weft_cts_ensure_queues(cts);
  weft_buffer_t* output =
      new_buffer(cts, kCount * kTransientBytes, 0xEEEEEEEEu);
  weft_command_buffer_t* command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_REUSABLE, 2);
  record_transient_work(cts, command_buffer, NULL, NULL, 0x3C3C3C3Cu);
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  weft_buffer_t* transients[kCount];
  weft_semaphore_t* timelines[kCount];
  uint64_t v[4] = {0, 1, 2, 3};
  for (uint32_t i = 0; i < kCount; ++i) {
    timelines[i] = weft_cts_create_semaphore(cts, 0);
    weft_buffer_params_t params = {0};
    WEFT_ASSERT_OK(weft_device_queue_alloca(
        cts->device, weft_cts_queue_bit(cts, i), weft_semaphore_list_empty(),
        weft_cts_list1(&timelines[i], &v[1]), params, kTransientBytes,
        &transients[i]));
    weft_buffer_binding_t entries[2] = {
        {transients[i], 0, kTransientBytes},
        {output, (weft_device_size_t)i * kTransientBytes, kTransientBytes}};
    WEFT_ASSERT_OK(weft_device_queue_execute(
        cts->device, weft_cts_queue_bit(cts, i + 1),
        weft_cts_list1(&timelines[i], &v[1]),
        weft_cts_list1(&timelines[i], &v[2]), command_buffer,
        (weft_binding_table_t){2, entries}));
    WEFT_ASSERT_OK(weft_device_queue_dealloca(
        cts->device, weft_cts_queue_bit(cts, i),
        weft_cts_list1(&timelines[i], &v[2]),
        weft_cts_list1(&timelines[i], &v[3]), transients[i]));
  }
  weft_command_buffer_release(command_buffer);
  for (uint32_t i = 0; i < kCount; ++i) {
    WEFT_ASSERT_OK(weft_cts_wait(timelines[i], 3));
  }
  for (uint32_t i = 0; i < kCount; ++i) {
    assert_transient_work(cts, output, i * kTransientBytes, 0x3C3C3C3Cu);
    weft_cts_assert_no_memory(cts, transients[i], "after its dealloca ran");
    weft_buffer_release(transients[i]);
    weft_semaphore_release(timelines[i]);
  }
  weft_buffer_release(output);
}

int main(int argc, char** argv) {
  const struct CMUnitTest tests[] = {
      WEFT_CTS_CASE(recorded_before_alloca_direct),
      WEFT_CTS_CASE(recorded_before_alloca_indirect_stepwise),
      WEFT_CTS_CASE(pipeline_rounds_across_queues),
      WEFT_CTS_CASE(execute_before_commit_fails),
      WEFT_CTS_CASE(queue_ops_on_transient_across_queues),
      WEFT_CTS_CASE(many_transients_in_flight),
  };
  return weft_cts_run("transient", tests, WEFT_CTS_COUNT(tests), argc, argv);
}
