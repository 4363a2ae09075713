// CTS: concurrency across queues.
//
// What a driver with several queues and worker threads makes possible,
// written so that it also holds on a driver with one inline queue
// (local-sync ignores the affinity and runs an op on whichever thread
// reaches its waits):
//  - an op on one queue waits for a semaphore that an op on another queue
//    signals later (wait-before-signal across queues);
//  - many ops wait on one semaphore at different values and each becomes
//    ready exactly when the host reaches its value;
//  - a reusable command buffer runs concurrently with itself;
//  - host calls on different queues are ordered by semaphores only, and what
//    one writes (plain memory) is visible to the next;
//  - a failure on one queue reaches every dependent op on the other queues
//    with the original message, and leaves every queue usable.
//
// Nothing here assumes that an op ran when its submit call returned: every
// result is read after waiting on the op's signal, and "not yet" is checked
// only for ops whose waits cannot have been reached.
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

// Allocates a host-visible buffer of |length| bytes, all zero.
static weft_buffer_t* new_buffer(weft_cts_t* cts, weft_device_size_t length) {
  return weft_cts_allocate_filled_buffer(cts, length, &(uint8_t){0}, 1);
}

static void release_semaphores(uint32_t count, weft_semaphore_t** semaphores) {
  for (uint32_t i = 0; i < count; ++i) weft_semaphore_release(semaphores[i]);
}

//===----------------------------------------------------------------------===//
// Cross-queue ordering
//===----------------------------------------------------------------------===//

static void cross_queue_wait_before_signal(void** state) {
  // B (queue 1) waits on |produced|, which A (queue 0) signals once the host
  // opens |gate|. B is submitted first, so its wait exists before anything
  // could signal it.
  weft_cts_t* cts = *state;
  weft_cts_ensure_queues(cts);
  weft_buffer_t* source = new_buffer(cts, 256);
  weft_buffer_t* target = new_buffer(cts, 256);
  weft_semaphore_t* gate = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* produced = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* consumed = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1;
  WEFT_ASSERT_OK(weft_device_queue_copy(
      cts->device, weft_cts_queue_bit(cts, 1), weft_cts_list1(&produced, &one),
      weft_cts_list1(&consumed, &one), source, 0, target, 0, 256));
  uint32_t pattern = 0xA5A5F00Du;
  WEFT_ASSERT_OK(weft_device_queue_fill(
      cts->device, weft_cts_queue_bit(cts, 0), weft_cts_list1(&gate, &one),
      weft_cts_list1(&produced, &one), source, 0, 256, &pattern, 4));
  weft_cts_assert_not_reached(produced, 1);
  weft_cts_assert_not_reached(consumed, 1);
  weft_cts_assert_words(cts, target, 0, 1, 0);
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  WEFT_ASSERT_OK(weft_cts_wait(consumed, 1));
  // B ran after A: it copied A's pattern.
  assert_int_equal(weft_cts_query_value(produced), 1);
  weft_cts_assert_words(cts, target, 0, 64, 0xA5A5F00Du);
  weft_semaphore_release(gate);
  weft_semaphore_release(produced);
  weft_semaphore_release(consumed);
  weft_buffer_release(source);
  weft_buffer_release(target);
}

static void cross_queue_chain_alternating(void** state) {
  // 64 copies on one timeline, each on the next queue: copy i moves word
  // i - 1 to word i after waiting for copy i - 1. Submitted last-first; a
  // copy running early would copy a zero and break the chain.
  weft_cts_t* cts = *state;
  enum { kLinks = 64 };
  weft_cts_ensure_queues(cts);
  weft_buffer_t* buffer = new_buffer(cts, (kLinks + 1) * 4);
  weft_semaphore_t* timeline = weft_cts_create_semaphore(cts, 0);
  uint64_t values[kLinks + 2];
  for (uint32_t i = 0; i < kLinks + 2; ++i) values[i] = i;
  for (uint32_t i = kLinks; i >= 1; --i) {
    WEFT_ASSERT_OK(
        weft_device_queue_copy(cts->device, weft_cts_queue_bit(cts, i),
                               weft_cts_list1(&timeline, &values[i]),
                               weft_cts_list1(&timeline, &values[i + 1]),
                               buffer, (i - 1) * 4, buffer, i * 4, 4));
  }
  weft_cts_assert_not_reached(timeline, 1);
  // The head: the host writes word 0 and starts the chain.
  weft_cts_write_buffer(cts, buffer, 0, &(uint32_t){0x600D1DEAu}, 4);
  WEFT_ASSERT_OK(weft_semaphore_signal(timeline, 1));
  WEFT_ASSERT_OK(weft_cts_wait(timeline, kLinks + 1));
  weft_cts_assert_words(cts, buffer, 0, kLinks + 1, 0x600D1DEAu);
  weft_semaphore_release(timeline);
  weft_buffer_release(buffer);
}

static void cross_queue_join_from_every_queue(void** state) {
  // Eight fills on eight queues (wrapping) each write one eighth of a
  // buffer; a barrier on queue 1 joins them; a copy on queue 0 after the
  // barrier moves the whole buffer. Everything waits on one host gate.
  weft_cts_t* cts = *state;
  enum { kParts = 8, kPartBytes = 1024 };
  weft_cts_ensure_queues(cts);
  weft_buffer_t* source = new_buffer(cts, kParts * kPartBytes);
  weft_buffer_t* target = new_buffer(cts, kParts * kPartBytes);
  weft_semaphore_t* gate = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* parts[kParts];
  uint64_t ones[kParts];
  weft_semaphore_t* joined = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1, two = 2;
  // The copy and the barrier first: both wait before anything can signal.
  WEFT_ASSERT_OK(weft_device_queue_copy(cts->device, weft_cts_queue_bit(cts, 0),
                                        weft_cts_list1(&joined, &one),
                                        weft_cts_list1(&joined, &two), source,
                                        0, target, 0, kParts * kPartBytes));
  for (uint32_t i = 0; i < kParts; ++i) {
    parts[i] = weft_cts_create_semaphore(cts, 0);
    ones[i] = 1;
  }
  WEFT_ASSERT_OK(weft_device_queue_barrier(
      cts->device, weft_cts_queue_bit(cts, 1),
      weft_cts_list(kParts, parts, ones), weft_cts_list1(&joined, &one)));
  for (uint32_t i = 0; i < kParts; ++i) {
    uint32_t pattern = 0x11111111u * (i + 1);
    WEFT_ASSERT_OK(weft_device_queue_fill(
        cts->device, weft_cts_queue_bit(cts, i), weft_cts_list1(&gate, &one),
        weft_cts_list1(&parts[i], &one), source, i * kPartBytes, kPartBytes,
        &pattern, 4));
  }
  weft_cts_assert_not_reached(joined, 1);
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  WEFT_ASSERT_OK(weft_cts_wait(joined, 2));
  for (uint32_t i = 0; i < kParts; ++i) {
    assert_int_equal(weft_cts_query_value(parts[i]), 1);
    weft_cts_assert_words(cts, target, i * kPartBytes, kPartBytes / 4,
                          0x11111111u * (i + 1));
  }
  release_semaphores(kParts, parts);
  weft_semaphore_release(joined);
  weft_semaphore_release(gate);
  weft_buffer_release(source);
  weft_buffer_release(target);
}

//===----------------------------------------------------------------------===//
// Fan-out: many ops waiting on one semaphore
//===----------------------------------------------------------------------===//

enum { kFanOps = 64, kFanTop = 16 };

// The value of the shared semaphore fan-out op |i| waits for: 1..16, four
// ops per value, submitted in a scrambled order.
static uint64_t fan_value(uint32_t i) { return 1 + (i * 7) % kFanTop; }

// Submits the 64 fan-out fills: op i waits (shared, fan_value(i)), writes
// word i = i + 1 and signals own[i] to 1, on queue i (wrapping).
static void submit_fan_out(weft_cts_t* cts, weft_semaphore_t* shared,
                           weft_semaphore_t** own, uint64_t* wait_values,
                           weft_buffer_t* buffer) {
  static const uint64_t kOne = 1;
  for (uint32_t n = 0; n < kFanOps; ++n) {
    uint32_t i = (n * 37) % kFanOps;  // scrambled submission order
    own[i] = weft_cts_create_semaphore(cts, 0);
    wait_values[i] = fan_value(i);
    uint32_t word = i + 1;
    WEFT_ASSERT_OK(weft_device_queue_fill(
        cts->device, weft_cts_queue_bit(cts, i),
        weft_cts_list1(&shared, &wait_values[i]),
        weft_cts_list1(&own[i], &kOne), buffer, i * 4, 4, &word, 4));
  }
}

// After the host moved |shared| to |reached|: every op with a value at or
// below it completed (waited on), every other op has not run (polled).
static void check_fan_step(weft_cts_t* cts, weft_semaphore_t** own,
                           weft_buffer_t* buffer, uint64_t reached) {
  for (uint32_t i = 0; i < kFanOps; ++i) {
    if (fan_value(i) <= reached) {
      WEFT_ASSERT_OK(weft_cts_wait(own[i], 1));
    }
  }
  // Every released op is complete now, so the buffer is quiet.
  uint32_t words[kFanOps];
  weft_cts_read_buffer(cts, buffer, 0, words, sizeof(words));
  for (uint32_t i = 0; i < kFanOps; ++i) {
    if (fan_value(i) <= reached) {
      assert_int_equal(words[i], i + 1);
    } else {
      weft_cts_assert_not_reached(own[i], 1);
      if (words[i] != 0) {
        fail_msg("op %u (waiting for %llu) ran with the semaphore at %llu", i,
                 (unsigned long long)fan_value(i), (unsigned long long)reached);
      }
    }
  }
}

static void fan_out_stepwise(void** state) {
  // The host moves the shared semaphore step by step, skipping some values
  // (a value past the one waited for counts as reached).
  weft_cts_t* cts = *state;
  weft_cts_ensure_queues(cts);
  weft_buffer_t* buffer = new_buffer(cts, kFanOps * 4);
  weft_semaphore_t* shared = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* own[kFanOps];
  uint64_t wait_values[kFanOps];
  submit_fan_out(cts, shared, own, wait_values, buffer);
  check_fan_step(cts, own, buffer, 0);
  static const uint64_t kSteps[] = {1, 2, 3, 5, 6, 9, 10, 11, 12, 13, 14, 16};
  for (size_t s = 0; s < sizeof(kSteps) / sizeof(kSteps[0]); ++s) {
    WEFT_ASSERT_OK(weft_semaphore_signal(shared, kSteps[s]));
    check_fan_step(cts, own, buffer, kSteps[s]);
  }
  release_semaphores(kFanOps, own);
  weft_semaphore_release(shared);
  weft_buffer_release(buffer);
}

static void fan_out_failure_midway(void** state) {
  // The shared semaphore reaches 6, then fails: ops waiting for 1..6 have
  // run; every other op fails its signal with the original message and
  // never runs.
  weft_cts_t* cts = *state;
  weft_cts_ensure_queues(cts);
  weft_buffer_t* buffer = new_buffer(cts, kFanOps * 4);
  weft_semaphore_t* shared = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* own[kFanOps];
  uint64_t wait_values[kFanOps];
  submit_fan_out(cts, shared, own, wait_values, buffer);
  WEFT_ASSERT_OK(weft_semaphore_signal(shared, 6));
  check_fan_step(cts, own, buffer, 6);
  weft_semaphore_fail(shared, WEFT_STATUS(ABORTED, "upstream stage 7 died"));
  for (uint32_t i = 0; i < kFanOps; ++i) {
    if (fan_value(i) <= 6) {
      assert_int_equal(weft_cts_query_value(own[i]), 1);
    } else {
      weft_cts_assert_status_message(weft_cts_wait(own[i], 1),
                                     WEFT_STATUS_ABORTED,
                                     "upstream stage 7 died");
    }
  }
  uint32_t words[kFanOps];
  weft_cts_read_buffer(cts, buffer, 0, words, sizeof(words));
  for (uint32_t i = 0; i < kFanOps; ++i) {
    assert_int_equal(words[i], fan_value(i) <= 6 ? i + 1 : 0);
  }
  release_semaphores(kFanOps, own);
  weft_semaphore_release(shared);
  weft_buffer_release(buffer);
}

static void fan_out_one_value_released_at_once(void** state) {
  // 256 barriers on every queue wait for the same value; one host signal
  // releases them all; the host waits for all of them with one list wait.
  weft_cts_t* cts = *state;
  enum { kOps = 256 };
  weft_cts_ensure_queues(cts);
  weft_semaphore_t* shared = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t** own = calloc(kOps, sizeof(*own));
  uint64_t* values = calloc(kOps, sizeof(*values));
  uint64_t one = 1;
  for (uint32_t i = 0; i < kOps; ++i) {
    own[i] = weft_cts_create_semaphore(cts, 0);
    values[i] = 1 + i % 3;  // signal values 1, 2 or 3
    WEFT_ASSERT_OK(weft_device_queue_barrier(
        cts->device, weft_cts_queue_bit(cts, i), weft_cts_list1(&shared, &one),
        weft_cts_list1(&own[i], &values[i])));
  }
  weft_semaphore_list_t all = weft_cts_list(kOps, own, values);
  WEFT_ASSERT_STATUS(DEADLINE_EXCEEDED,
                     weft_semaphore_list_wait(WEFT_WAIT_MODE_ANY, all,
                                              weft_timeout_immediate()));
  WEFT_ASSERT_OK(weft_semaphore_signal(shared, 1));
  WEFT_ASSERT_OK(weft_semaphore_list_wait(WEFT_WAIT_MODE_ALL, all,
                                          weft_timeout_relative(10000 * MS)));
  for (uint32_t i = 0; i < kOps; ++i) {
    assert_int_equal(weft_cts_query_value(own[i]), values[i]);
  }
  release_semaphores(kOps, own);
  free(own);
  free(values);
  weft_semaphore_release(shared);
}

//===----------------------------------------------------------------------===//
// A reusable command buffer running concurrently with itself
//===----------------------------------------------------------------------===//

enum {
  kReuseElements = 256,  // floats per binding (4 workgroups of scale_offset)
  kReuseBytes = kReuseElements * 4,
};

// Records: copy slot 0 (input) -> slot 2 (scratch); barrier; scale_offset
// scratch -> slot 1 (output) with out = in * 2 + 1; barrier; fill scratch
// with 0xFFFFFFFF. Every reference is indirect.
static weft_command_buffer_t* record_reuse(weft_cts_t* cts) {
  weft_command_buffer_t* command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_REUSABLE, 3);
  WEFT_ASSERT_OK(weft_command_buffer_copy(
      command_buffer, weft_make_indirect_buffer_ref(0, 0, kReuseBytes),
      weft_make_indirect_buffer_ref(2, 0, kReuseBytes)));
  WEFT_ASSERT_OK(weft_command_buffer_barrier(command_buffer));
  uint32_t constants[3] = {weft_cts_f32_bits(2.0f), weft_cts_f32_bits(1.0f),
                           kReuseElements};
  weft_buffer_ref_t bindings[2] = {
      weft_make_indirect_buffer_ref(2, 0, kReuseBytes),
      weft_make_indirect_buffer_ref(1, 0, kReuseBytes)};
  uint32_t workgroups[3] = {kReuseElements / 64, 1, 1};
  WEFT_ASSERT_OK(weft_command_buffer_dispatch(
      command_buffer, cts->kernels,
      weft_cts_kernel_ordinal(cts->kernels, "scale_offset"), workgroups, 3,
      constants, 2, bindings));
  WEFT_ASSERT_OK(weft_command_buffer_barrier(command_buffer));
  WEFT_ASSERT_OK(weft_command_buffer_fill(
      command_buffer, weft_make_indirect_buffer_ref(2, 0, kReuseBytes),
      &(uint32_t){0xFFFFFFFFu}, 4));
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  return command_buffer;
}

// Submission |index|'s input value at element |i|.
static float reuse_input(uint32_t index, uint32_t i) {
  return (float)(index * 1000 + i) - 100.0f;
}

// Writes submission |index|'s input into its slice of |inputs|.
static void write_reuse_input(weft_cts_t* cts, weft_buffer_t* inputs,
                              uint32_t index) {
  float values[kReuseElements];
  for (uint32_t i = 0; i < kReuseElements; ++i) {
    values[i] = reuse_input(index, i);
  }
  weft_cts_write_buffer(cts, inputs, (weft_device_size_t)index * kReuseBytes,
                        values, kReuseBytes);
}

// Checks submission |index|'s output and scratch slices.
static void check_reuse_output(weft_cts_t* cts, weft_buffer_t* outputs,
                               weft_buffer_t* scratch, uint32_t index) {
  float values[kReuseElements];
  weft_cts_read_buffer(cts, outputs, (weft_device_size_t)index * kReuseBytes,
                       values, kReuseBytes);
  for (uint32_t i = 0; i < kReuseElements; ++i) {
    float expected = reuse_input(index, i) * 2.0f + 1.0f;
    if (values[i] != expected) {
      fail_msg("submission %u element %u: %f, expected %f", index, i,
               (double)values[i], (double)expected);
    }
  }
  uint32_t words[kReuseElements];
  weft_cts_read_buffer(cts, scratch, (weft_device_size_t)index * kReuseBytes,
                       words, kReuseBytes);
  for (uint32_t i = 0; i < kReuseElements; ++i) {
    assert_int_equal(words[i], 0xFFFFFFFFu);
  }
}

// The binding table of submission |index|: its slices of the three
// buffers. |entries| must hold 3.
static weft_binding_table_t reuse_table(weft_buffer_t* inputs,
                                        weft_buffer_t* outputs,
                                        weft_buffer_t* scratch, uint32_t index,
                                        weft_buffer_binding_t* entries) {
  weft_device_size_t offset = (weft_device_size_t)index * kReuseBytes;
  entries[0] = (weft_buffer_binding_t){inputs, offset, kReuseBytes};
  entries[1] = (weft_buffer_binding_t){outputs, offset, kReuseBytes};
  entries[2] = (weft_buffer_binding_t){scratch, offset, kReuseBytes};
  weft_binding_table_t table = {3, entries};
  return table;
}

static void reusable_command_buffer_concurrent_with_itself(void** state) {
  // Eight submissions of one recording, each with its own binding table and
  // queue, all waiting on one gate: all in flight at once when it opens.
  weft_cts_t* cts = *state;
  enum { kSubmissions = 8 };
  weft_cts_ensure_queues(cts);
  weft_buffer_t* inputs = new_buffer(cts, kSubmissions * kReuseBytes);
  weft_buffer_t* outputs = new_buffer(cts, kSubmissions * kReuseBytes);
  weft_buffer_t* scratch = new_buffer(cts, kSubmissions * kReuseBytes);
  weft_command_buffer_t* command_buffer = record_reuse(cts);
  weft_semaphore_t* gate = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* done[kSubmissions];
  uint64_t one = 1;
  for (uint32_t j = 0; j < kSubmissions; ++j) {
    write_reuse_input(cts, inputs, j);
    done[j] = weft_cts_create_semaphore(cts, 0);
    weft_buffer_binding_t entries[3];
    WEFT_ASSERT_OK(weft_device_queue_execute(
        cts->device, weft_cts_queue_bit(cts, j), weft_cts_list1(&gate, &one),
        weft_cts_list1(&done[j], &one), command_buffer,
        reuse_table(inputs, outputs, scratch, j, entries)));
    memset(entries, 0, sizeof(entries));  // borrowed for the call only
  }
  // The submissions hold the recording.
  weft_command_buffer_release(command_buffer);
  for (uint32_t j = 0; j < kSubmissions; ++j)
    weft_cts_assert_not_reached(done[j], 1);
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  for (uint32_t j = 0; j < kSubmissions; ++j) {
    WEFT_ASSERT_OK(weft_cts_wait(done[j], 1));
  }
  for (uint32_t j = 0; j < kSubmissions; ++j) {
    check_reuse_output(cts, outputs, scratch, j);
  }
  release_semaphores(kSubmissions, done);
  weft_semaphore_release(gate);
  weft_buffer_release(inputs);
  weft_buffer_release(outputs);
  weft_buffer_release(scratch);
}

enum { kReuseThreads = 4, kReusePerThread = 8 };

typedef struct reuse_submitter_t {
  weft_cts_t* cts;
  weft_command_buffer_t* command_buffer;
  weft_buffer_t* inputs;
  weft_buffer_t* outputs;
  weft_buffer_t* scratch;
  weft_semaphore_t* gate;
  weft_semaphore_t* done[kReusePerThread];
  uint32_t thread_index;
  weft_status_t status;
  weft_thread_t* thread;
} reuse_submitter_t;

// Submits this thread's executions, each with its own table and queue.
static int reuse_submitter_main(void* user_data) {
  reuse_submitter_t* submitter = (reuse_submitter_t*)user_data;
  static const uint64_t kOne = 1;
  weft_status_t status = WEFT_OK;
  for (uint32_t k = 0; weft_status_is_ok(status) && k < kReusePerThread; ++k) {
    uint32_t index = submitter->thread_index * kReusePerThread + k;
    weft_buffer_binding_t entries[3];
    // Every other execution waits on the gate; the rest may start at once.
    weft_semaphore_list_t waits = k % 2
                                      ? weft_cts_list1(&submitter->gate, &kOne)
                                      : weft_semaphore_list_empty();
    status = weft_device_queue_execute(
        submitter->cts->device, weft_cts_queue_bit(submitter->cts, index),
        waits, weft_cts_list1(&submitter->done[k], &kOne),
        submitter->command_buffer,
        reuse_table(submitter->inputs, submitter->outputs, submitter->scratch,
                    index, entries));
  }
  submitter->status = status;
  return 0;
}

static void reusable_command_buffer_from_threads(void** state) {
  // Four threads submit the same recording eight times each, at once.
  weft_cts_t* cts = *state;
  enum { kTotal = kReuseThreads * kReusePerThread };
  weft_cts_ensure_queues(cts);
  weft_buffer_t* inputs = new_buffer(cts, kTotal * kReuseBytes);
  weft_buffer_t* outputs = new_buffer(cts, kTotal * kReuseBytes);
  weft_buffer_t* scratch = new_buffer(cts, kTotal * kReuseBytes);
  for (uint32_t j = 0; j < kTotal; ++j) write_reuse_input(cts, inputs, j);
  weft_command_buffer_t* command_buffer = record_reuse(cts);
  weft_semaphore_t* gate = weft_cts_create_semaphore(cts, 0);
  reuse_submitter_t submitters[kReuseThreads];
  for (uint32_t t = 0; t < kReuseThreads; ++t) {
    reuse_submitter_t* submitter = &submitters[t];
    memset(submitter, 0, sizeof(*submitter));
    submitter->cts = cts;
    submitter->command_buffer = command_buffer;
    submitter->inputs = inputs;
    submitter->outputs = outputs;
    submitter->scratch = scratch;
    submitter->gate = gate;
    submitter->thread_index = t;
    for (uint32_t k = 0; k < kReusePerThread; ++k) {
      submitter->done[k] = weft_cts_create_semaphore(cts, 0);
    }
  }
  for (uint32_t t = 0; t < kReuseThreads; ++t) {
    weft_thread_params_t params = {.name = "cts-reuse", .cpu = -1};
    WEFT_ASSERT_OK(weft_thread_create(reuse_submitter_main, &submitters[t],
                                      &params, weft_allocator_system(),
                                      &submitters[t].thread));
  }
  // Opened while the threads may still be submitting.
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  for (uint32_t t = 0; t < kReuseThreads; ++t) {
    weft_thread_join(submitters[t].thread);
    WEFT_ASSERT_OK(submitters[t].status);
  }
  for (uint32_t t = 0; t < kReuseThreads; ++t) {
    for (uint32_t k = 0; k < kReusePerThread; ++k) {
      WEFT_ASSERT_OK(weft_cts_wait(submitters[t].done[k], 1));
    }
  }
  for (uint32_t j = 0; j < kTotal; ++j)
    check_reuse_output(cts, outputs, scratch, j);
  for (uint32_t t = 0; t < kReuseThreads; ++t) {
    release_semaphores(kReusePerThread, submitters[t].done);
  }
  weft_command_buffer_release(command_buffer);
  weft_semaphore_release(gate);
  weft_buffer_release(inputs);
  weft_buffer_release(outputs);
  weft_buffer_release(scratch);
}

//===----------------------------------------------------------------------===//
// Host calls across queues
//===----------------------------------------------------------------------===//

enum { kCallChain = 16 };

// Plain (non-atomic) state the host calls share: semaphores alone order
// them, and ThreadSanitizer checks that they do.
typedef struct call_log_t {
  uint32_t next;
  uint32_t order[kCallChain];
  uint32_t out_of_order;
  uint64_t sums[kCallChain];
  uint64_t total;
} call_log_t;

// Call args[0] records its position in the log.
static weft_status_t log_host_call(void* user_data, const uint64_t args[4],
                                   const weft_host_call_context_t* context) {
  call_log_t* log = (call_log_t*)user_data;
  uint32_t index = (uint32_t)args[0];
  if (log->next != index) ++log->out_of_order;
  log->order[index] = log->next++;
  return WEFT_OK;
}

static void host_call_order_across_queues(void** state) {
  // Sixteen host calls chained by one timeline, alternating queues,
  // submitted last-first: each must see exactly its predecessors.
  weft_cts_t* cts = *state;
  weft_cts_ensure_queues(cts);
  weft_semaphore_t* timeline = weft_cts_create_semaphore(cts, 0);
  uint64_t values[kCallChain + 2];
  for (uint32_t i = 0; i < kCallChain + 2; ++i) values[i] = i;
  call_log_t log;
  memset(&log, 0, sizeof(log));
  for (uint32_t i = kCallChain; i >= 1; --i) {
    const uint64_t args[4] = {i - 1, 0, 0, 0};
    WEFT_ASSERT_OK(weft_device_queue_host_call(
        cts->device, weft_cts_queue_bit(cts, i),
        weft_cts_list1(&timeline, &values[i]),
        weft_cts_list1(&timeline, &values[i + 1]), log_host_call, &log, args,
        WEFT_HOST_CALL_FLAG_NONE));
  }
  weft_cts_assert_not_reached(timeline, 1);
  WEFT_ASSERT_OK(weft_semaphore_signal(timeline, 1));
  WEFT_ASSERT_OK(weft_cts_wait(timeline, kCallChain + 1));
  assert_int_equal(log.next, kCallChain);
  assert_int_equal(log.out_of_order, 0);
  for (uint32_t i = 0; i < kCallChain; ++i) assert_int_equal(log.order[i], i);
  weft_semaphore_release(timeline);
}

// Call args[0] < kCallChain stores its partial sum; args[0] == kCallChain
// adds all the partial sums (the join).
static weft_status_t sum_host_call(void* user_data, const uint64_t args[4],
                                   const weft_host_call_context_t* context) {
  call_log_t* log = (call_log_t*)user_data;
  if (args[0] < kCallChain) {
    log->sums[args[0]] = args[1] * 3 + 1;
  } else {
    for (uint32_t i = 0; i < kCallChain; ++i) log->total += log->sums[i];
  }
  return WEFT_OK;
}

static void host_call_fan_in_across_queues(void** state) {
  // Sixteen host calls on every queue write their own slot; a call on
  // queue 0 waiting for all of them reads every slot.
  weft_cts_t* cts = *state;
  weft_cts_ensure_queues(cts);
  weft_semaphore_t* gate = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* parts[kCallChain];
  uint64_t ones[kCallChain];
  weft_semaphore_t* joined = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1;
  call_log_t log;
  memset(&log, 0, sizeof(log));
  for (uint32_t i = 0; i < kCallChain; ++i) {
    parts[i] = weft_cts_create_semaphore(cts, 0);
    ones[i] = 1;
  }
  const uint64_t join_args[4] = {kCallChain, 0, 0, 0};
  WEFT_ASSERT_OK(weft_device_queue_host_call(
      cts->device, weft_cts_queue_bit(cts, 0),
      weft_cts_list(kCallChain, parts, ones), weft_cts_list1(&joined, &one),
      sum_host_call, &log, join_args, WEFT_HOST_CALL_FLAG_NONE));
  uint64_t expected = 0;
  for (uint32_t i = 0; i < kCallChain; ++i) {
    const uint64_t args[4] = {i, 100 + i, 0, 0};
    expected += (100 + i) * 3 + 1;
    WEFT_ASSERT_OK(weft_device_queue_host_call(
        cts->device, weft_cts_queue_bit(cts, i), weft_cts_list1(&gate, &one),
        weft_cts_list1(&parts[i], &one), sum_host_call, &log, args,
        WEFT_HOST_CALL_FLAG_NONE));
  }
  weft_cts_assert_not_reached(joined, 1);
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  WEFT_ASSERT_OK(weft_cts_wait(joined, 1));
  assert_int_equal(log.total, expected);
  release_semaphores(kCallChain, parts);
  weft_semaphore_release(joined);
  weft_semaphore_release(gate);
}

typedef struct deferred_call_t {
  weft_fence_t* fence;
  weft_thread_t* thread;
  // Written by the thread before it signals; read by the next host call.
  uint32_t payload;
  uint32_t seen_by_next;
  weft_atomic_int32_t called;
} deferred_call_t;

static int deferred_call_thread_main(void* user_data) {
  deferred_call_t* call = (deferred_call_t*)user_data;
  // Signals only after the call published |thread| and |called| (a sleep
  // here once stood for that, and a worker preempted for longer than it,
  // under ASan with a second test beside it, saw the signal go first).
  // Acquire: pairs with the call's release.
  while (weft_atomic_load(&call->called, memory_order_acquire) == 0) {
    weft_thread_yield();
  }
  call->payload = 0xD0D0CAFEu;
  weft_status_ignore(weft_fence_signal(call->fence));
  weft_fence_release(call->fence);
  return 0;
}

// Takes over the signals and signals them later from a new thread.
static weft_status_t deferring_host_call(
    void* user_data, const uint64_t args[4],
    const weft_host_call_context_t* context) {
  deferred_call_t* call = (deferred_call_t*)user_data;
  weft_status_t status = weft_fence_create_from_list(
      context->signal_list, weft_allocator_system(), &call->fence);
  if (!weft_status_is_ok(status)) return status;
  weft_thread_params_t params = {.name = "cts-deferred", .cpu = -1};
  status = weft_thread_create(deferred_call_thread_main, call, &params,
                              weft_allocator_system(), &call->thread);
  if (!weft_status_is_ok(status)) {
    weft_fence_release(call->fence);
    return status;
  }
  // Release: publishes |thread| to the test body.
  weft_atomic_store(&call->called, 1, memory_order_release);
  return weft_status_from_code(WEFT_STATUS_DEFERRED);
}

static weft_status_t read_payload_host_call(
    void* user_data, const uint64_t args[4],
    const weft_host_call_context_t* context) {
  deferred_call_t* call = (deferred_call_t*)user_data;
  call->seen_by_next = call->payload;
  return WEFT_OK;
}

static void host_call_deferred_across_queues(void** state) {
  // A host call on queue 0 defers its signal to a thread; a host call on
  // queue 1 waiting for that signal sees what the thread wrote before it.
  weft_cts_t* cts = *state;
  weft_cts_ensure_queues(cts);
  weft_semaphore_t* deferred = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* next = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1;
  deferred_call_t call;
  memset(&call, 0, sizeof(call));
  WEFT_ASSERT_OK(weft_device_queue_host_call(
      cts->device, weft_cts_queue_bit(cts, 1), weft_cts_list1(&deferred, &one),
      weft_cts_list1(&next, &one), read_payload_host_call, &call, NULL,
      WEFT_HOST_CALL_FLAG_NONE));
  WEFT_ASSERT_OK(weft_device_queue_host_call(
      cts->device, weft_cts_queue_bit(cts, 0), weft_semaphore_list_empty(),
      weft_cts_list1(&deferred, &one), deferring_host_call, &call, NULL,
      WEFT_HOST_CALL_FLAG_NONE));
  WEFT_ASSERT_OK(weft_cts_wait(next, 1));
  // Acquire: pairs with the release in the call (|thread| is set).
  assert_int_equal(weft_atomic_load(&call.called, memory_order_acquire), 1);
  weft_thread_join(call.thread);
  assert_int_equal(call.seen_by_next, 0xD0D0CAFEu);
  weft_semaphore_release(deferred);
  weft_semaphore_release(next);
}

//===----------------------------------------------------------------------===//
// Failure propagation across queues
//===----------------------------------------------------------------------===//

typedef struct failing_call_t {
  const char* message;  // the call fails with ABORTED and this message
  weft_atomic_int32_t calls;
} failing_call_t;

static weft_status_t failing_host_call(
    void* user_data, const uint64_t args[4],
    const weft_host_call_context_t* context) {
  failing_call_t* call = (failing_call_t*)user_data;
  weft_atomic_fetch_add(&call->calls, 1, memory_order_relaxed);
  return call->message ? WEFT_STATUS(ABORTED, "%s", call->message) : WEFT_OK;
}

static void failure_propagates_across_queues(void** state) {
  // A (queue 0) fails; B (queue 1) waits on A, C (queue 2) on B, D (queue
  // 3, a host call) on C: all fail with A's message and none runs. E on
  // queue 1, waiting on the same gate as A, is unaffected.
  weft_cts_t* cts = *state;
  weft_cts_ensure_queues(cts);
  weft_buffer_t* buffer = new_buffer(cts, 64);
  weft_semaphore_t* gate = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* a = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* b = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* c = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* d = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* e = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1;
  failing_call_t fails = {"calibration step 3 failed", 0};
  failing_call_t never = {NULL, 0};
  // Last-first: D, C, B, E, then A.
  WEFT_ASSERT_OK(weft_device_queue_host_call(
      cts->device, weft_cts_queue_bit(cts, 3), weft_cts_list1(&c, &one),
      weft_cts_list1(&d, &one), failing_host_call, &never, NULL,
      WEFT_HOST_CALL_FLAG_NONE));
  WEFT_ASSERT_OK(weft_device_queue_barrier(
      cts->device, weft_cts_queue_bit(cts, 2), weft_cts_list1(&b, &one),
      weft_cts_list1(&c, &one)));
  WEFT_ASSERT_OK(weft_device_queue_fill(
      cts->device, weft_cts_queue_bit(cts, 1), weft_cts_list1(&a, &one),
      weft_cts_list1(&b, &one), buffer, 0, 32, &(uint32_t){0xBADBADu}, 4));
  WEFT_ASSERT_OK(weft_device_queue_fill(
      cts->device, weft_cts_queue_bit(cts, 1), weft_cts_list1(&gate, &one),
      weft_cts_list1(&e, &one), buffer, 32, 32, &(uint32_t){0x0E0E0E0Eu}, 4));
  WEFT_ASSERT_OK(weft_device_queue_host_call(
      cts->device, weft_cts_queue_bit(cts, 0), weft_cts_list1(&gate, &one),
      weft_cts_list1(&a, &one), failing_host_call, &fails, NULL,
      WEFT_HOST_CALL_FLAG_NONE));
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  weft_semaphore_t* failed[4] = {a, b, c, d};
  for (int i = 0; i < 4; ++i) {
    weft_cts_assert_status_message(weft_cts_wait(failed[i], 1),
                                   WEFT_STATUS_ABORTED,
                                   "calibration step 3 failed");
    // Queries report the same failure.
    uint64_t value = 0;
    weft_cts_assert_status_message(weft_semaphore_query(failed[i], &value),
                                   WEFT_STATUS_ABORTED,
                                   "calibration step 3 failed");
  }
  WEFT_ASSERT_OK(weft_cts_wait(e, 1));
  assert_int_equal(weft_atomic_load(&fails.calls, memory_order_relaxed), 1);
  assert_int_equal(weft_atomic_load(&never.calls, memory_order_relaxed), 0);
  weft_cts_assert_words(cts, buffer, 0, 8, 0);
  weft_cts_assert_words(cts, buffer, 32, 8, 0x0E0E0E0Eu);
  weft_semaphore_t* all[6] = {gate, a, b, c, d, e};
  release_semaphores(6, all);
  weft_buffer_release(buffer);
}

static void dispatch_failure_propagates_across_queues(void** state) {
  // The "fail" kernel fails a dispatch on queue 0; a copy on queue 1 and a
  // barrier on queue 2 behind it fail with the dispatch's own message.
  weft_cts_t* cts = *state;
  weft_cts_ensure_queues(cts);
  weft_buffer_t* source = new_buffer(cts, 64);
  weft_buffer_t* target = new_buffer(cts, 64);
  weft_cts_fill_buffer(cts, source, 0, 64, &(uint32_t){0x12345678u}, 4);
  weft_semaphore_t* gate = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* dispatched = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* copied = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* last = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1;
  WEFT_ASSERT_OK(weft_device_queue_barrier(
      cts->device, weft_cts_queue_bit(cts, 2), weft_cts_list1(&copied, &one),
      weft_cts_list1(&last, &one)));
  WEFT_ASSERT_OK(weft_device_queue_copy(cts->device, weft_cts_queue_bit(cts, 1),
                                        weft_cts_list1(&dispatched, &one),
                                        weft_cts_list1(&copied, &one), source,
                                        0, target, 0, 64));
  uint32_t constants[1] = {5};
  uint32_t workgroups[3] = {9, 1, 1};
  WEFT_ASSERT_OK(weft_device_queue_dispatch(
      cts->device, weft_cts_queue_bit(cts, 0), weft_cts_list1(&gate, &one),
      weft_cts_list1(&dispatched, &one), cts->kernels,
      weft_cts_kernel_ordinal(cts->kernels, "fail"), workgroups, 1, constants,
      0, NULL));
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  weft_status_t original = weft_cts_wait(dispatched, 1);
  assert_int_equal(weft_status_code(original), WEFT_STATUS_INTERNAL);
  char message[1024];
  snprintf(message, sizeof(message), "%s", weft_status_message(original));
  weft_status_free(original);
  assert_non_null(strstr(message, "(5, 0, 0)"));
  weft_cts_assert_status_message(weft_cts_wait(copied, 1), WEFT_STATUS_INTERNAL,
                                 message);
  weft_cts_assert_status_message(weft_cts_wait(last, 1), WEFT_STATUS_INTERNAL,
                                 message);
  if (weft_cts_supports(cts, WEFT_CTS_FEATURE_FAILED_WAIT_SKIPS_WORK)) {
    weft_cts_assert_words(cts, target, 0, 16, 0);
  }
  weft_semaphore_t* all[4] = {gate, dispatched, copied, last};
  release_semaphores(4, all);
  weft_buffer_release(source);
  weft_buffer_release(target);
}

static void failed_wait_among_several_queues(void** state) {
  // An op waits on three ops from three queues; the middle one fails. The
  // op fails with that message whether the others finish before or after.
  weft_cts_t* cts = *state;
  weft_cts_ensure_queues(cts);
  weft_semaphore_t* gate = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* inputs[3] = {weft_cts_create_semaphore(cts, 0),
                                 weft_cts_create_semaphore(cts, 0),
                                 weft_cts_create_semaphore(cts, 0)};
  uint64_t ones[3] = {1, 1, 1};
  weft_semaphore_t* joined = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1, two = 2;
  failing_call_t fails = {"sensor 2 unplugged", 0};
  failing_call_t ok = {NULL, 0};
  WEFT_ASSERT_OK(weft_device_queue_barrier(
      cts->device, weft_cts_queue_bit(cts, 3), weft_cts_list(3, inputs, ones),
      weft_cts_list1(&joined, &one)));
  // inputs[0] completes at once; inputs[2] only after the gate moves to 2.
  WEFT_ASSERT_OK(weft_device_queue_host_call(
      cts->device, weft_cts_queue_bit(cts, 0), weft_semaphore_list_empty(),
      weft_cts_list1(&inputs[0], &one), failing_host_call, &ok, NULL,
      WEFT_HOST_CALL_FLAG_NONE));
  WEFT_ASSERT_OK(weft_device_queue_host_call(
      cts->device, weft_cts_queue_bit(cts, 1), weft_cts_list1(&gate, &one),
      weft_cts_list1(&inputs[1], &one), failing_host_call, &fails, NULL,
      WEFT_HOST_CALL_FLAG_NONE));
  WEFT_ASSERT_OK(weft_device_queue_host_call(
      cts->device, weft_cts_queue_bit(cts, 2), weft_cts_list1(&gate, &two),
      weft_cts_list1(&inputs[2], &one), failing_host_call, &ok, NULL,
      WEFT_HOST_CALL_FLAG_NONE));
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  // The join fails without waiting for inputs[2].
  weft_cts_assert_status_message(weft_cts_wait(joined, 1), WEFT_STATUS_ABORTED,
                                 "sensor 2 unplugged");
  weft_cts_assert_not_reached(inputs[2], 1);
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 2));
  WEFT_ASSERT_OK(weft_cts_wait(inputs[2], 1));
  WEFT_ASSERT_OK(weft_cts_wait(inputs[0], 1));
  assert_int_equal(weft_atomic_load(&ok.calls, memory_order_relaxed), 2);
  release_semaphores(3, inputs);
  weft_semaphore_release(joined);
  weft_semaphore_release(gate);
}

static void queues_usable_after_failures(void** state) {
  // Every queue runs a failing host call, then an unrelated fill and a
  // copy that waits on the fill: each queue keeps working.
  weft_cts_t* cts = *state;
  weft_cts_ensure_queues(cts);
  uint32_t count = cts->queue_count < 8 ? 8 : cts->queue_count;
  weft_buffer_t* buffer = new_buffer(cts, count * 8);
  failing_call_t fails = {"this queue op fails", 0};
  uint64_t one = 1, two = 2;
  for (uint32_t q = 0; q < count; ++q) {
    weft_semaphore_t* failed = weft_cts_create_semaphore(cts, 0);
    weft_semaphore_t* after = weft_cts_create_semaphore(cts, 0);
    WEFT_ASSERT_OK(weft_device_queue_host_call(
        cts->device, weft_cts_queue_bit(cts, q), weft_semaphore_list_empty(),
        weft_cts_list1(&failed, &one), failing_host_call, &fails, NULL,
        WEFT_HOST_CALL_FLAG_NONE));
    weft_cts_assert_status_message(weft_cts_wait(failed, 1),
                                   WEFT_STATUS_ABORTED, "this queue op fails");
    uint32_t word = 0xF00 + q;
    WEFT_ASSERT_OK(weft_device_queue_update(
        cts->device, weft_cts_queue_bit(cts, q), weft_semaphore_list_empty(),
        weft_cts_list1(&after, &one), &word, buffer, q * 8, 4));
    WEFT_ASSERT_OK(weft_device_queue_copy(
        cts->device, weft_cts_queue_bit(cts, q), weft_cts_list1(&after, &one),
        weft_cts_list1(&after, &two), buffer, q * 8, buffer, q * 8 + 4, 4));
    WEFT_ASSERT_OK(weft_cts_wait(after, 2));
    weft_cts_assert_words(cts, buffer, q * 8, 2, 0xF00 + q);
    weft_semaphore_release(failed);
    weft_semaphore_release(after);
  }
  assert_int_equal(weft_atomic_load(&fails.calls, memory_order_relaxed), count);
  weft_buffer_release(buffer);
}

static void failure_and_success_signal_lists_on_many_queues(void** state) {
  // One failing op signals eight semaphores; eight ops on eight queues wait
  // on one each; a second, succeeding op signals eight more that eight
  // other ops wait on. Exactly the first eight fail.
  weft_cts_t* cts = *state;
  enum { kWidth = 8 };
  weft_cts_ensure_queues(cts);
  weft_semaphore_t* gate = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* bad[kWidth];
  weft_semaphore_t* good[kWidth];
  weft_semaphore_t* bad_out[kWidth];
  weft_semaphore_t* good_out[kWidth];
  uint64_t values[kWidth];
  uint64_t one = 1;
  for (uint32_t i = 0; i < kWidth; ++i) {
    bad[i] = weft_cts_create_semaphore(cts, 0);
    good[i] = weft_cts_create_semaphore(cts, 0);
    bad_out[i] = weft_cts_create_semaphore(cts, 0);
    good_out[i] = weft_cts_create_semaphore(cts, 0);
    values[i] = 1 + i;
    WEFT_ASSERT_OK(
        weft_device_queue_barrier(cts->device, weft_cts_queue_bit(cts, i),
                                  weft_cts_list1(&bad[i], &values[i]),
                                  weft_cts_list1(&bad_out[i], &one)));
    WEFT_ASSERT_OK(
        weft_device_queue_barrier(cts->device, weft_cts_queue_bit(cts, i + 1),
                                  weft_cts_list1(&good[i], &values[i]),
                                  weft_cts_list1(&good_out[i], &one)));
  }
  failing_call_t fails = {"fan-out source failed", 0};
  failing_call_t ok = {NULL, 0};
  WEFT_ASSERT_OK(weft_device_queue_host_call(
      cts->device, weft_cts_queue_bit(cts, 0), weft_cts_list1(&gate, &one),
      weft_cts_list(kWidth, bad, values), failing_host_call, &fails, NULL,
      WEFT_HOST_CALL_FLAG_NONE));
  WEFT_ASSERT_OK(weft_device_queue_host_call(
      cts->device, weft_cts_queue_bit(cts, 1), weft_cts_list1(&gate, &one),
      weft_cts_list(kWidth, good, values), failing_host_call, &ok, NULL,
      WEFT_HOST_CALL_FLAG_NONE));
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  for (uint32_t i = 0; i < kWidth; ++i) {
    weft_cts_assert_status_message(weft_cts_wait(bad_out[i], 1),
                                   WEFT_STATUS_ABORTED,
                                   "fan-out source failed");
    WEFT_ASSERT_OK(weft_cts_wait(good_out[i], 1));
    assert_int_equal(weft_cts_query_value(good[i]), values[i]);
  }
  release_semaphores(kWidth, bad);
  release_semaphores(kWidth, good);
  release_semaphores(kWidth, bad_out);
  release_semaphores(kWidth, good_out);
  weft_semaphore_release(gate);
}

//===----------------------------------------------------------------------===//
// Dispatches and recordings in flight on every queue
//===----------------------------------------------------------------------===//

static void concurrent_dispatches_across_queues(void** state) {
  // 32 dispatches of 1 to 4,000 workgroups on every queue behind one gate:
  // more dispatches in flight at once than a driver has workers.
  weft_cts_t* cts = *state;
  enum { kDispatches = 32 };
  weft_cts_ensure_queues(cts);
  uint32_t ordinal = weft_cts_kernel_ordinal(cts->kernels, "write_ids");
  weft_semaphore_t* gate = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* done[kDispatches];
  weft_buffer_t* buffers[kDispatches];
  uint32_t sizes[kDispatches];
  uint64_t one = 1;
  for (uint32_t i = 0; i < kDispatches; ++i) {
    sizes[i] = 1 + (i * 997u) % 4000u;
    buffers[i] = new_buffer(cts, (weft_device_size_t)sizes[i] * 16);
    done[i] = weft_cts_create_semaphore(cts, 0);
    const uint32_t n[3] = {sizes[i], 1, 1};
    weft_buffer_ref_t binding =
        weft_make_buffer_ref(buffers[i], 0, WEFT_WHOLE_BUFFER);
    WEFT_ASSERT_OK(weft_device_queue_dispatch(
        cts->device, weft_cts_queue_bit(cts, i), weft_cts_list1(&gate, &one),
        weft_cts_list1(&done[i], &one), cts->kernels, ordinal, n, 0, NULL, 1,
        &binding));
  }
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  for (uint32_t i = 0; i < kDispatches; ++i) {
    WEFT_ASSERT_OK(weft_cts_wait(done[i], 1));
  }
  for (uint32_t i = 0; i < kDispatches; ++i) {
    weft_cts_assert_ids(cts, buffers[i], 0,
                        (const uint32_t[3]){sizes[i], 1, 1});
    weft_buffer_release(buffers[i]);
  }
  release_semaphores(kDispatches, done);
  weft_semaphore_release(gate);
}

static void rapid_resubmission_across_region_sizes(void** state) {
  // One reusable recording of regions of 2048, 1, 777 and 64 workgroups
  // (write_ids into slot 0) and a copy of all of slot 0 into slot 1,
  // executed 25 times back to back on each of four chains (one queue and
  // one binding table per chain): a hundred passes through every region
  // transition, with workers of the previous region still leaving.
  weft_cts_t* cts = *state;
  enum { kChains = 4, kRounds = 25, kRegions = 4 };
  static const uint32_t kSizes[kRegions] = {2048, 1, 777, 64};
  weft_device_size_t offsets[kRegions + 1] = {0};
  for (uint32_t r = 0; r < kRegions; ++r) {
    offsets[r + 1] = offsets[r] + (weft_device_size_t)kSizes[r] * 16;
  }
  weft_device_size_t total = offsets[kRegions];
  weft_cts_ensure_queues(cts);
  weft_command_buffer_t* command_buffer = NULL;
  WEFT_ASSERT_OK(weft_command_buffer_create(
      cts->device, WEFT_COMMAND_BUFFER_MODE_REUSABLE, WEFT_COMMAND_CATEGORY_ANY,
      2, &command_buffer));
  WEFT_ASSERT_OK(weft_command_buffer_begin(command_buffer));
  uint32_t ordinal = weft_cts_kernel_ordinal(cts->kernels, "write_ids");
  for (uint32_t r = 0; r < kRegions; ++r) {
    const uint32_t n[3] = {kSizes[r], 1, 1};
    weft_buffer_ref_t binding = weft_make_indirect_buffer_ref(
        0, offsets[r], offsets[r + 1] - offsets[r]);
    WEFT_ASSERT_OK(weft_command_buffer_dispatch(
        command_buffer, cts->kernels, ordinal, n, 0, NULL, 1, &binding));
    WEFT_ASSERT_OK(weft_command_buffer_barrier(command_buffer));
  }
  WEFT_ASSERT_OK(weft_command_buffer_copy(
      command_buffer, weft_make_indirect_buffer_ref(0, 0, total),
      weft_make_indirect_buffer_ref(1, 0, total)));
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  weft_buffer_t* ids[kChains];
  weft_buffer_t* copies[kChains];
  weft_semaphore_t* timelines[kChains];
  uint64_t values[kRounds + 1];
  for (uint32_t k = 0; k <= kRounds; ++k) values[k] = k;
  for (uint32_t c = 0; c < kChains; ++c) {
    ids[c] = new_buffer(cts, total);
    copies[c] = new_buffer(cts, total);
    timelines[c] = weft_cts_create_semaphore(cts, 0);
  }
  // Round-robin over the chains so all four are in flight together.
  for (uint32_t k = 0; k < kRounds; ++k) {
    for (uint32_t c = 0; c < kChains; ++c) {
      weft_buffer_binding_t entries[2] = {{ids[c], 0, total},
                                          {copies[c], 0, total}};
      WEFT_ASSERT_OK(weft_device_queue_execute(
          cts->device, weft_cts_queue_bit(cts, c),
          weft_cts_list1(&timelines[c], &values[k]),
          weft_cts_list1(&timelines[c], &values[k + 1]), command_buffer,
          (weft_binding_table_t){2, entries}));
    }
  }
  weft_command_buffer_release(command_buffer);
  for (uint32_t c = 0; c < kChains; ++c) {
    WEFT_ASSERT_OK(weft_semaphore_wait(timelines[c], kRounds,
                                       weft_timeout_relative(60000 * MS)));
  }
  for (uint32_t c = 0; c < kChains; ++c) {
    for (uint32_t r = 0; r < kRegions; ++r) {
      weft_cts_assert_ids(cts, ids[c], offsets[r],
                          (const uint32_t[3]){kSizes[r], 1, 1});
      weft_cts_assert_ids(cts, copies[c], offsets[r],
                          (const uint32_t[3]){kSizes[r], 1, 1});
    }
    weft_buffer_release(ids[c]);
    weft_buffer_release(copies[c]);
    weft_semaphore_release(timelines[c]);
  }
}

//===----------------------------------------------------------------------===//
// Semaphores of other devices and of the host
//===----------------------------------------------------------------------===//

// Plain state the cross-device host calls share (ordered by semaphores).
typedef struct relay_log_t {
  uint32_t steps[3];
} relay_log_t;

// Step args[0] stores one more than the step before it.
static weft_status_t relay_host_call(void* user_data, const uint64_t args[4],
                                     const weft_host_call_context_t* context) {
  relay_log_t* log = (relay_log_t*)user_data;
  uint32_t step = (uint32_t)args[0];
  log->steps[step] = step == 0 ? 1 : log->steps[step - 1] + 1;
  return WEFT_OK;
}

static void cross_device_wait_before_signal(void** state) {
  // Two devices of the driver under test and a host semaphore: step 0 on
  // device A waits on the host semaphore; step 1 on device B waits on A's
  // semaphore; step 2 on A waits on B's, and a fill on B waits on A's too.
  // Submitted last-first; each step sees the one before it.
  weft_cts_t* cts = *state;
  weft_device_t* other = NULL;
  WEFT_ASSERT_OK(
      weft_device_create(cts->device_string, cts->allocator, &other));
  weft_semaphore_t* host = NULL;
  WEFT_ASSERT_OK(weft_semaphore_create(cts->allocator, 0, &host));
  weft_semaphore_t* from_a = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* from_b = NULL;
  WEFT_ASSERT_OK(weft_device_create_semaphore(other, 0, &from_b));
  weft_semaphore_t* done = NULL;
  WEFT_ASSERT_OK(weft_semaphore_create(cts->allocator, 0, &done));
  weft_semaphore_t* filled = NULL;
  WEFT_ASSERT_OK(weft_device_create_semaphore(other, 0, &filled));
  weft_buffer_t* buffer = NULL;
  WEFT_ASSERT_OK(weft_device_allocate_buffer(other, (weft_buffer_params_t){0},
                                             64, &buffer));
  weft_cts_device_fill_buffer(other, buffer, 0, 64, &(uint8_t){0}, 1);
  uint64_t one = 1;
  relay_log_t log;
  memset(&log, 0, sizeof(log));
  const uint64_t args[3][4] = {{0}, {1}, {2}};
  WEFT_ASSERT_OK(weft_device_queue_host_call(
      cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_cts_list1(&from_b, &one),
      weft_cts_list1(&done, &one), relay_host_call, &log, args[2],
      WEFT_HOST_CALL_FLAG_NONE));
  WEFT_ASSERT_OK(weft_device_queue_fill(other, WEFT_QUEUE_AFFINITY_ANY,
                                        weft_cts_list1(&from_a, &one),
                                        weft_cts_list1(&filled, &one), buffer,
                                        0, 64, &(uint32_t){0xB0B0B0B0u}, 4));
  WEFT_ASSERT_OK(weft_device_queue_host_call(
      other, WEFT_QUEUE_AFFINITY_ANY, weft_cts_list1(&from_a, &one),
      weft_cts_list1(&from_b, &one), relay_host_call, &log, args[1],
      WEFT_HOST_CALL_FLAG_NONE));
  WEFT_ASSERT_OK(weft_device_queue_host_call(
      cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_cts_list1(&host, &one),
      weft_cts_list1(&from_a, &one), relay_host_call, &log, args[0],
      WEFT_HOST_CALL_FLAG_NONE));
  weft_cts_assert_not_reached(from_a, 1);
  WEFT_ASSERT_OK(weft_semaphore_signal(host, 1));
  WEFT_ASSERT_OK(weft_cts_wait(done, 1));
  WEFT_ASSERT_OK(weft_cts_wait(filled, 1));
  uint32_t words[16];
  weft_cts_device_read_buffer(other, buffer, 0, words, sizeof(words));
  for (uint32_t i = 0; i < 16; ++i) assert_int_equal(words[i], 0xB0B0B0B0u);
  assert_int_equal(log.steps[0], 1);
  assert_int_equal(log.steps[1], 2);
  assert_int_equal(log.steps[2], 3);
  weft_semaphore_release(host);
  weft_semaphore_release(from_a);
  weft_semaphore_release(from_b);
  weft_semaphore_release(done);
  weft_semaphore_release(filled);
  weft_buffer_release(buffer);
  weft_device_release(other);
}

int main(int argc, char** argv) {
  const struct CMUnitTest tests[] = {
      WEFT_CTS_CASE(cross_queue_wait_before_signal),
      WEFT_CTS_CASE(cross_queue_chain_alternating),
      WEFT_CTS_CASE(cross_queue_join_from_every_queue),
      WEFT_CTS_CASE(fan_out_stepwise),
      WEFT_CTS_CASE(fan_out_failure_midway),
      WEFT_CTS_CASE(fan_out_one_value_released_at_once),
      WEFT_CTS_CASE(reusable_command_buffer_concurrent_with_itself),
      WEFT_CTS_CASE(reusable_command_buffer_from_threads),
      WEFT_CTS_CASE(host_call_order_across_queues),
      WEFT_CTS_CASE(host_call_fan_in_across_queues),
      WEFT_CTS_CASE(host_call_deferred_across_queues),
      WEFT_CTS_CASE(failure_propagates_across_queues),
      WEFT_CTS_CASE(dispatch_failure_propagates_across_queues),
      WEFT_CTS_CASE(failed_wait_among_several_queues),
      WEFT_CTS_CASE(queues_usable_after_failures),
      WEFT_CTS_CASE(failure_and_success_signal_lists_on_many_queues),
      WEFT_CTS_CASE(concurrent_dispatches_across_queues),
      WEFT_CTS_CASE(rapid_resubmission_across_region_sizes),
      WEFT_CTS_CASE(cross_device_wait_before_signal),
  };
  return weft_cts_run("concurrency", tests, WEFT_CTS_COUNT(tests), argc, argv);
}
