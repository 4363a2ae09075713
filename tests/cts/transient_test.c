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

// Asserts |status| has |code| and its formatted text contains |needle|
// (when not NULL); frees the status.
static void assert_status_contains(weft_status_t status,
                                   weft_status_code_t code,
                                   const char* needle) {
  char text[2048];
  weft_status_format(status, text, sizeof(text));
  weft_status_code_t actual = weft_status_code(status);
  weft_status_free(status);
  if (actual != code) {
    fail_msg("expected %s, got: %s", weft_status_code_string(code), text);
  }
  if (needle && !strstr(text, needle)) {
    fail_msg("expected '%s' in: %s", needle, text);
  }
}

static uint64_t query_value(weft_semaphore_t* semaphore) {
  uint64_t value = 0;
  WEFT_ASSERT_OK(weft_semaphore_query(semaphore, &value));
  return value;
}

// Asserts that (|semaphore|, |value|) is not reached, without blocking.
static void assert_not_reached(weft_semaphore_t* semaphore, uint64_t value) {
  WEFT_ASSERT_STATUS(
      DEADLINE_EXCEEDED,
      weft_semaphore_wait(semaphore, value, weft_timeout_immediate()));
  assert_true(query_value(semaphore) < value);
}

static weft_semaphore_list_t empty_list(void) {
  return weft_semaphore_list_empty();
}

static uint32_t kernel_ordinal(weft_executable_t* executable,
                               const char* name) {
  uint32_t ordinal = 0;
  WEFT_ASSERT_OK(weft_executable_lookup_kernel(executable, name, &ordinal));
  return ordinal;
}

// The device a case runs on and the number of queues its affinity bits
// select.
typedef struct queues_t {
  weft_device_t* device;  // retained
  uint32_t count;
} queues_t;

// Opens the case's device with several queues: the CTS device when it has
// two or more; else the same driver with "queues=4" when it takes that
// option; else the CTS device as it is.
static queues_t open_queues(weft_cts_t* cts) {
  queues_t queues = {cts->device, 1};
  int64_t count = 1;
  WEFT_ASSERT_OK(weft_device_query_i64(cts->device, "queue.count", &count));
  if (count < 2) {
    char device_string[512];
    snprintf(device_string, sizeof(device_string), "%s%squeues=4",
             cts->device_string, strchr(cts->device_string, '?') ? "&" : "?");
    weft_device_t* device = NULL;
    weft_status_t status =
        weft_device_create(device_string, cts->allocator, &device);
    if (weft_status_is_ok(status)) {
      queues.device = device;
      WEFT_ASSERT_OK(weft_device_query_i64(device, "queue.count", &count));
    } else {
      // Only an unknown option may stop us; anything else is a failure.
      WEFT_ASSERT_STATUS(INVALID_ARGUMENT, status);
    }
  }
  if (queues.device == cts->device) weft_device_retain(queues.device);
  assert_true(count >= 1);
  queues.count = count > 64 ? 64 : (uint32_t)count;
  return queues;
}

static void close_queues(queues_t* queues) {
  weft_device_release(queues->device);
  queues->device = NULL;
}

// The affinity of queue |index| (wrapping at the queue count).
static weft_queue_affinity_t queue_bit(const queues_t* queues, uint32_t index) {
  return (weft_queue_affinity_t)1 << (index % queues->count);
}

static weft_semaphore_t* new_semaphore(const queues_t* queues,
                                       uint64_t initial_value) {
  weft_semaphore_t* semaphore = NULL;
  WEFT_ASSERT_OK(
      weft_device_create_semaphore(queues->device, initial_value, &semaphore));
  return semaphore;
}

// Allocates a host-visible buffer of |length| bytes filled with |pattern|.
static weft_buffer_t* new_buffer(const queues_t* queues,
                                 weft_device_size_t length, uint32_t pattern) {
  weft_buffer_params_t params = {0};
  weft_buffer_t* buffer = NULL;
  WEFT_ASSERT_OK(
      weft_device_allocate_buffer(queues->device, params, length, &buffer));
  WEFT_ASSERT_OK(weft_buffer_map_fill(buffer, 0, length, &pattern, 4));
  return buffer;
}

static weft_command_buffer_t* begin_command_buffer(
    const queues_t* queues, weft_command_buffer_mode_t mode,
    uint32_t binding_capacity) {
  weft_command_buffer_t* command_buffer = NULL;
  WEFT_ASSERT_OK(weft_command_buffer_create(queues->device, mode,
                                            WEFT_COMMAND_CATEGORY_ANY,
                                            binding_capacity, &command_buffer));
  WEFT_ASSERT_OK(weft_command_buffer_begin(command_buffer));
  return command_buffer;
}

// Asserts |count| words of |buffer| from byte |offset| equal |expected|.
static void assert_words(weft_buffer_t* buffer, weft_device_size_t offset,
                         uint32_t count, uint32_t expected) {
  uint32_t* words = malloc(count * sizeof(uint32_t));
  assert_non_null(words);
  weft_cts_read_buffer(buffer, offset, words, count * sizeof(uint32_t));
  for (uint32_t i = 0; i < count; ++i) {
    if (words[i] != expected) {
      uint32_t actual = words[i];
      free(words);
      fail_msg("word %u at byte %llu: 0x%08x, expected 0x%08x", i,
               (unsigned long long)offset, actual, expected);
    }
  }
  free(words);
}

// Asserts |count| write_ids records (1D) at byte |offset| of |buffer|.
static void assert_ids(weft_buffer_t* buffer, weft_device_size_t offset,
                       uint32_t count) {
  uint32_t* ids = malloc(count * 16);
  assert_non_null(ids);
  weft_cts_read_buffer(buffer, offset, ids, count * 16);
  for (uint32_t x = 0; x < count; ++x) {
    if (ids[x * 4] != x || ids[x * 4 + 1] != 0 || ids[x * 4 + 2] != 0 ||
        ids[x * 4 + 3] != x) {
      uint32_t seen = ids[x * 4 + 3];
      free(ids);
      fail_msg("workgroup %u at byte %llu: flat index %u", x,
               (unsigned long long)offset, seen);
    }
  }
  free(ids);
}

// Asserts that mapping |transient| fails: it has no memory now.
static void assert_no_memory(weft_buffer_t* transient) {
  uint32_t word = 0;
  WEFT_ASSERT_STATUS(FAILED_PRECONDITION,
                     weft_buffer_map_read(transient, 0, &word, 4));
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
      command_buffer, cts->kernels, kernel_ordinal(cts->kernels, "write_ids"),
      n, 0, NULL, 1, &ids));
  WEFT_ASSERT_OK(weft_command_buffer_barrier(command_buffer));
  WEFT_ASSERT_OK(weft_command_buffer_copy(command_buffer, whole, out));
}

// Checks what record_transient_work left in |output| at |offset|.
static void assert_transient_work(weft_buffer_t* output,
                                  weft_device_size_t offset, uint32_t pattern) {
  assert_ids(output, offset, kIdsCount);
  assert_words(output, offset + kIdsBytes, (kTransientBytes - kIdsBytes) / 4,
               pattern);
}

//===----------------------------------------------------------------------===//
// Cases
//===----------------------------------------------------------------------===//

static void recorded_before_alloca_direct(void** state) {
  // alloca (queue 0, behind a host gate) -> execute of a recording made
  // before the alloca ran (queue 1) -> dealloca (queue 2).
  weft_cts_t* cts = *state;
  queues_t queues = open_queues(cts);
  weft_semaphore_t* gate = new_semaphore(&queues, 0);
  weft_semaphore_t* allocated = new_semaphore(&queues, 0);
  weft_semaphore_t* executed = new_semaphore(&queues, 0);
  weft_semaphore_t* freed = new_semaphore(&queues, 0);
  weft_buffer_t* output = new_buffer(&queues, kTransientBytes, 0xEEEEEEEEu);
  uint64_t one = 1;
  weft_buffer_params_t params = {0};
  weft_buffer_t* transient = NULL;
  WEFT_ASSERT_OK(weft_device_queue_alloca(
      queues.device, queue_bit(&queues, 0), weft_cts_list1(&gate, &one),
      weft_cts_list1(&allocated, &one), params, kTransientBytes, &transient));
  assert_no_memory(transient);
  weft_command_buffer_t* command_buffer =
      begin_command_buffer(&queues, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
  record_transient_work(cts, command_buffer, transient, output, 0x5A5A5A5Au);
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  WEFT_ASSERT_OK(weft_device_queue_execute(
      queues.device, queue_bit(&queues, 1), weft_cts_list1(&allocated, &one),
      weft_cts_list1(&executed, &one), command_buffer,
      (weft_binding_table_t){0, NULL}));
  WEFT_ASSERT_OK(weft_device_queue_dealloca(
      queues.device, queue_bit(&queues, 2), weft_cts_list1(&executed, &one),
      weft_cts_list1(&freed, &one), transient));
  weft_command_buffer_release(command_buffer);
  assert_not_reached(allocated, 1);
  assert_not_reached(executed, 1);
  assert_not_reached(freed, 1);
  assert_no_memory(transient);
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  WEFT_ASSERT_OK(weft_cts_wait(freed, 1));
  assert_int_equal(query_value(executed), 1);
  assert_transient_work(output, 0, 0x5A5A5A5Au);
  assert_no_memory(transient);
  weft_buffer_release(transient);
  weft_buffer_release(output);
  weft_semaphore_t* all[4] = {gate, allocated, executed, freed};
  for (int i = 0; i < 4; ++i) weft_semaphore_release(all[i]);
  close_queues(&queues);
}

static void recorded_before_alloca_indirect_stepwise(void** state) {
  // One reusable recording with the transient in slot 0; four transients,
  // the alloca of transient i waiting for gate value i + 1. The host moves
  // the gate one step at a time: exactly one more pipeline completes.
  weft_cts_t* cts = *state;
  enum { kCount = 4 };
  queues_t queues = open_queues(cts);
  weft_semaphore_t* gate = new_semaphore(&queues, 0);
  weft_buffer_t* output =
      new_buffer(&queues, kCount * kTransientBytes, 0xEEEEEEEEu);
  weft_command_buffer_t* command_buffer =
      begin_command_buffer(&queues, WEFT_COMMAND_BUFFER_MODE_REUSABLE, 2);
  record_transient_work(cts, command_buffer, NULL, NULL, 0x0C0C0C0Cu);
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  weft_buffer_t* transients[kCount];
  weft_semaphore_t* timelines[kCount];
  uint64_t steps[4] = {1, 2, 3, 4};
  for (uint32_t i = 0; i < kCount; ++i) {
    timelines[i] = new_semaphore(&queues, 0);
    weft_buffer_params_t params = {0};
    WEFT_ASSERT_OK(weft_device_queue_alloca(
        queues.device, queue_bit(&queues, i), weft_cts_list1(&gate, &steps[i]),
        weft_cts_list1(&timelines[i], &steps[0]), params, kTransientBytes,
        &transients[i]));
    weft_buffer_binding_t entries[2] = {
        {transients[i], 0, WEFT_WHOLE_BUFFER},
        {output, (weft_device_size_t)i * kTransientBytes, kTransientBytes}};
    WEFT_ASSERT_OK(weft_device_queue_execute(
        queues.device, queue_bit(&queues, i + 1),
        weft_cts_list1(&timelines[i], &steps[0]),
        weft_cts_list1(&timelines[i], &steps[1]), command_buffer,
        (weft_binding_table_t){2, entries}));
    WEFT_ASSERT_OK(weft_device_queue_dealloca(
        queues.device, queue_bit(&queues, i + 2),
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
        assert_not_reached(timelines[i], 1);
      }
    }
    for (uint32_t i = 0; i < kCount; ++i) {
      if (i < step) {
        assert_transient_work(output, i * kTransientBytes, 0x0C0C0C0Cu);
      } else {
        assert_words(output, i * kTransientBytes, kTransientBytes / 4,
                     0xEEEEEEEEu);
      }
    }
  }
  for (uint32_t i = 0; i < kCount; ++i) {
    assert_no_memory(transients[i]);
    weft_buffer_release(transients[i]);
    weft_semaphore_release(timelines[i]);
  }
  weft_buffer_release(output);
  weft_semaphore_release(gate);
  close_queues(&queues);
}

static void pipeline_rounds_across_queues(void** state) {
  // Eight rounds of alloca (queue r) -> execute (queue r + 1) -> dealloca
  // (queue r + 2) on one timeline, each round with its own transient and a
  // one-shot recording made before anything ran. One host signal releases
  // all 24 ops; a round's alloca may reuse the previous round's memory.
  weft_cts_t* cts = *state;
  enum { kRounds = 8 };
  queues_t queues = open_queues(cts);
  weft_semaphore_t* timeline = new_semaphore(&queues, 0);
  weft_buffer_t* output =
      new_buffer(&queues, kRounds * kTransientBytes, 0xEEEEEEEEu);
  uint64_t values[3 * kRounds + 1];
  for (uint32_t i = 0; i <= 3 * kRounds; ++i) values[i] = i;
  weft_buffer_t* transients[kRounds];
  for (uint32_t r = 0; r < kRounds; ++r) {
    uint64_t* v = &values[3 * r];
    weft_buffer_params_t params = {0};
    WEFT_ASSERT_OK(weft_device_queue_alloca(
        queues.device, queue_bit(&queues, r), weft_cts_list1(&timeline, &v[0]),
        weft_cts_list1(&timeline, &v[1]), params, kTransientBytes,
        &transients[r]));
    weft_buffer_t* slice = NULL;
    WEFT_ASSERT_OK(
        weft_buffer_subspan(output, (weft_device_size_t)r * kTransientBytes,
                            kTransientBytes, cts->allocator, &slice));
    weft_command_buffer_t* command_buffer =
        begin_command_buffer(&queues, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
    record_transient_work(cts, command_buffer, transients[r], slice,
                          0x01010101u * (r + 1));
    WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
    weft_buffer_release(slice);  // the recording holds it
    WEFT_ASSERT_OK(weft_device_queue_execute(
        queues.device, queue_bit(&queues, r + 1),
        weft_cts_list1(&timeline, &v[1]), weft_cts_list1(&timeline, &v[2]),
        command_buffer, (weft_binding_table_t){0, NULL}));
    weft_command_buffer_release(command_buffer);
    WEFT_ASSERT_OK(weft_device_queue_dealloca(
        queues.device, queue_bit(&queues, r + 2),
        weft_cts_list1(&timeline, &v[2]), weft_cts_list1(&timeline, &v[3]),
        transients[r]));
  }
  // Round 0's alloca waits for value 0 and may have run already.
  WEFT_ASSERT_OK(weft_cts_wait(timeline, 3 * kRounds));
  for (uint32_t r = 0; r < kRounds; ++r) {
    assert_transient_work(output, r * kTransientBytes, 0x01010101u * (r + 1));
    assert_no_memory(transients[r]);
    weft_buffer_release(transients[r]);
  }
  weft_buffer_release(output);
  weft_semaphore_release(timeline);
  close_queues(&queues);
}

static void execute_before_commit_fails(void** state) {
  // An execute that is not ordered after the alloca runs while the memory
  // is absent: FAILED_PRECONDITION saying the alloca has not run. The alloca,
  // released later, still works, and so does a second execute ordered after it.
  weft_cts_t* cts = *state;
  queues_t queues = open_queues(cts);
  weft_semaphore_t* gate = new_semaphore(&queues, 0);
  weft_semaphore_t* allocated = new_semaphore(&queues, 0);
  weft_semaphore_t* early = new_semaphore(&queues, 0);
  weft_semaphore_t* late = new_semaphore(&queues, 0);
  weft_buffer_t* output = new_buffer(&queues, kTransientBytes, 0xEEEEEEEEu);
  uint64_t one = 1, two = 2;
  weft_buffer_params_t params = {0};
  weft_buffer_t* transient = NULL;
  WEFT_ASSERT_OK(weft_device_queue_alloca(
      queues.device, queue_bit(&queues, 0), weft_cts_list1(&gate, &one),
      weft_cts_list1(&allocated, &one), params, kTransientBytes, &transient));
  weft_command_buffer_t* command_buffer =
      begin_command_buffer(&queues, WEFT_COMMAND_BUFFER_MODE_REUSABLE, 0);
  record_transient_work(cts, command_buffer, transient, output, 0x77777777u);
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  WEFT_ASSERT_OK(weft_device_queue_execute(
      queues.device, queue_bit(&queues, 1), empty_list(),
      weft_cts_list1(&early, &one), command_buffer,
      (weft_binding_table_t){0, NULL}));
  assert_status_contains(weft_cts_wait(early, 1),
                         WEFT_STATUS_FAILED_PRECONDITION,
                         "before its alloca ran");
  assert_words(output, 0, kTransientBytes / 4, 0xEEEEEEEEu);
  WEFT_ASSERT_OK(weft_device_queue_execute(
      queues.device, queue_bit(&queues, 1), weft_cts_list1(&allocated, &one),
      weft_cts_list1(&late, &one), command_buffer,
      (weft_binding_table_t){0, NULL}));
  WEFT_ASSERT_OK(weft_device_queue_dealloca(
      queues.device, queue_bit(&queues, 2), weft_cts_list1(&late, &one),
      weft_cts_list1(&late, &two), transient));
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  WEFT_ASSERT_OK(weft_cts_wait(late, 2));
  assert_transient_work(output, 0, 0x77777777u);
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(transient);
  weft_buffer_release(output);
  weft_semaphore_t* all[4] = {gate, allocated, early, late};
  for (int i = 0; i < 4; ++i) weft_semaphore_release(all[i]);
  close_queues(&queues);
}

static void queue_ops_on_transient_across_queues(void** state) {
  // alloca (q0) -> fill (q1) -> update (q2) -> write_ids dispatch (q3) ->
  // copy out (q0) -> dealloca (q1), chained by one timeline. The alloca is
  // submitted first (it returns the handle), the rest last-first; the host
  // starts the chain.
  weft_cts_t* cts = *state;
  queues_t queues = open_queues(cts);
  weft_semaphore_t* s = new_semaphore(&queues, 0);
  weft_buffer_t* output = new_buffer(&queues, kTransientBytes, 0xEEEEEEEEu);
  uint64_t v[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  weft_buffer_params_t params = {0};
  weft_buffer_t* transient = NULL;
  WEFT_ASSERT_OK(weft_device_queue_alloca(
      queues.device, queue_bit(&queues, 0), weft_cts_list1(&s, &v[1]),
      weft_cts_list1(&s, &v[2]), params, kTransientBytes, &transient));
  WEFT_ASSERT_OK(weft_device_queue_dealloca(
      queues.device, queue_bit(&queues, 1), weft_cts_list1(&s, &v[6]),
      weft_cts_list1(&s, &v[7]), transient));
  WEFT_ASSERT_OK(weft_device_queue_copy(
      queues.device, queue_bit(&queues, 0), weft_cts_list1(&s, &v[5]),
      weft_cts_list1(&s, &v[6]), transient, 0, output, 0, kTransientBytes));
  const uint32_t n[3] = {kIdsCount, 1, 1};
  weft_buffer_ref_t ids = weft_make_buffer_ref(transient, 0, kIdsBytes);
  WEFT_ASSERT_OK(weft_device_queue_dispatch(
      queues.device, queue_bit(&queues, 3), weft_cts_list1(&s, &v[4]),
      weft_cts_list1(&s, &v[5]), cts->kernels,
      kernel_ordinal(cts->kernels, "write_ids"), n, 0, NULL, 1, &ids));
  uint32_t words[16];
  for (int i = 0; i < 16; ++i) words[i] = 0xAB000000u + i;
  WEFT_ASSERT_OK(weft_device_queue_update(
      queues.device, queue_bit(&queues, 2), weft_cts_list1(&s, &v[3]),
      weft_cts_list1(&s, &v[4]), words, transient, kTransientBytes - 64, 64));
  uint32_t pattern = 0x99999999u;
  WEFT_ASSERT_OK(weft_device_queue_fill(
      queues.device, queue_bit(&queues, 1), weft_cts_list1(&s, &v[2]),
      weft_cts_list1(&s, &v[3]), transient, 0, kTransientBytes, &pattern, 4));
  assert_not_reached(s, 1);
  assert_no_memory(transient);
  WEFT_ASSERT_OK(weft_semaphore_signal(s, 1));
  WEFT_ASSERT_OK(weft_cts_wait(s, 7));
  assert_ids(output, 0, kIdsCount);
  assert_words(output, kIdsBytes, (kTransientBytes - kIdsBytes - 64) / 4,
               0x99999999u);
  uint32_t tail[16];
  weft_cts_read_buffer(output, kTransientBytes - 64, tail, sizeof(tail));
  for (int i = 0; i < 16; ++i) assert_int_equal(tail[i], 0xAB000000u + i);
  assert_no_memory(transient);
  weft_buffer_release(transient);
  weft_buffer_release(output);
  weft_semaphore_release(s);
  close_queues(&queues);
}

static void many_transients_in_flight(void** state) {
  // 32 alloca -> execute -> dealloca pipelines with no gate, on every
  // queue, all sharing one reusable recording with the transient in slot 0.
  weft_cts_t* cts = *state;
  enum { kCount = 32 };
  queues_t queues = open_queues(cts);
  weft_buffer_t* output =
      new_buffer(&queues, kCount * kTransientBytes, 0xEEEEEEEEu);
  weft_command_buffer_t* command_buffer =
      begin_command_buffer(&queues, WEFT_COMMAND_BUFFER_MODE_REUSABLE, 2);
  record_transient_work(cts, command_buffer, NULL, NULL, 0x3C3C3C3Cu);
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  weft_buffer_t* transients[kCount];
  weft_semaphore_t* timelines[kCount];
  uint64_t v[4] = {0, 1, 2, 3};
  for (uint32_t i = 0; i < kCount; ++i) {
    timelines[i] = new_semaphore(&queues, 0);
    weft_buffer_params_t params = {0};
    WEFT_ASSERT_OK(weft_device_queue_alloca(
        queues.device, queue_bit(&queues, i), empty_list(),
        weft_cts_list1(&timelines[i], &v[1]), params, kTransientBytes,
        &transients[i]));
    weft_buffer_binding_t entries[2] = {
        {transients[i], 0, kTransientBytes},
        {output, (weft_device_size_t)i * kTransientBytes, kTransientBytes}};
    WEFT_ASSERT_OK(weft_device_queue_execute(
        queues.device, queue_bit(&queues, i + 1),
        weft_cts_list1(&timelines[i], &v[1]),
        weft_cts_list1(&timelines[i], &v[2]), command_buffer,
        (weft_binding_table_t){2, entries}));
    WEFT_ASSERT_OK(weft_device_queue_dealloca(
        queues.device, queue_bit(&queues, i),
        weft_cts_list1(&timelines[i], &v[2]),
        weft_cts_list1(&timelines[i], &v[3]), transients[i]));
  }
  weft_command_buffer_release(command_buffer);
  for (uint32_t i = 0; i < kCount; ++i) {
    WEFT_ASSERT_OK(weft_cts_wait(timelines[i], 3));
  }
  for (uint32_t i = 0; i < kCount; ++i) {
    assert_transient_work(output, i * kTransientBytes, 0x3C3C3C3Cu);
    assert_no_memory(transients[i]);
    weft_buffer_release(transients[i]);
    weft_semaphore_release(timelines[i]);
  }
  weft_buffer_release(output);
  close_queues(&queues);
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
