// CTS: queue operations (alloca, dealloca, fill, update, copy, read, write,
// execute, barrier, host_call) and their ordering by semaphores only.
//
// Contract exercised here: nothing starts before its waits are reached;
// signals are published after the work; any failure (of the work or of a
// wait) fails every signal semaphore with the original message; validation
// that needs no waiting fails synchronously and leaves signals untouched.
//
// Use after dealloca: the buffer handle stays valid and its range is known,
// so an operation touching it is accepted (OK) and fails its signal
// semaphores with FAILED_PRECONDITION when it runs, whether or not the
// dealloca has already run at submit. The same holds for use before the
// alloca ran. (Whether memory is present is a property of the moment the
// operation runs, not of the moment it is submitted.)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/atomics.h"
#include "base/thread.h"
#include "cts.h"

#define MS (1000ll * 1000ll)
#define ANY WEFT_QUEUE_AFFINITY_ANY

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static void fill_u32(weft_cts_t* cts, weft_semaphore_list_t waits,
                     weft_semaphore_list_t signals, weft_buffer_t* buffer,
                     weft_device_size_t offset, weft_device_size_t length,
                     uint32_t pattern) {
  WEFT_ASSERT_OK(weft_device_queue_fill(cts->device, ANY, waits, signals,
                                        buffer, offset, length, &pattern, 4));
}

// A thread that sleeps |delay_ns| then signals or fails |semaphore|.
typedef struct signaller_t {
  weft_semaphore_t* semaphore;
  uint64_t value;
  weft_status_t failure;  // fail with this instead of signalling when set
  weft_duration_t delay_ns;
  weft_thread_t* thread;
} signaller_t;

static int signaller_main(void* user_data) {
  signaller_t* signaller = (signaller_t*)user_data;
  if (signaller->delay_ns) {
    weft_sleep_until(weft_time_now() + signaller->delay_ns);
  }
  if (signaller->failure) {
    weft_semaphore_fail(signaller->semaphore, signaller->failure);
  } else {
    weft_status_ignore(
        weft_semaphore_signal(signaller->semaphore, signaller->value));
  }
  return 0;
}

static void signaller_start(signaller_t* signaller) {
  weft_thread_params_t params = {.name = "cts-signaller", .cpu = -1};
  WEFT_ASSERT_OK(weft_thread_create(signaller_main, signaller, &params,
                                    weft_allocator_system(),
                                    &signaller->thread));
}

//===----------------------------------------------------------------------===//
// Each op alone
//===----------------------------------------------------------------------===//

static void fill_whole_buffer(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 1024);
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1;
  fill_u32(cts, weft_semaphore_list_empty(), weft_cts_list1(&semaphore, &one),
           buffer, 0, WEFT_WHOLE_BUFFER, 0xDEADBEEFu);
  WEFT_ASSERT_OK(weft_cts_wait(semaphore, 1));
  weft_cts_assert_words(cts, buffer, 0, 256, 0xDEADBEEFu);
  weft_semaphore_release(semaphore);
  weft_buffer_release(buffer);
}

static void fill_patterns_and_offsets(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 64);
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  uint64_t values[3] = {1, 2, 3};
  uint8_t p1 = 0x11;
  uint16_t p2 = 0x2233;
  uint32_t p4 = 0x44556677u;
  WEFT_ASSERT_OK(weft_device_queue_fill(
      cts->device, ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&semaphore, &values[0]), buffer, 1, 7, &p1, 1));
  WEFT_ASSERT_OK(weft_device_queue_fill(
      cts->device, ANY, weft_cts_list1(&semaphore, &values[0]),
      weft_cts_list1(&semaphore, &values[1]), buffer, 8, 8, &p2, 2));
  WEFT_ASSERT_OK(weft_device_queue_fill(
      cts->device, ANY, weft_cts_list1(&semaphore, &values[1]),
      weft_cts_list1(&semaphore, &values[2]), buffer, 16, 16, &p4, 4));
  WEFT_ASSERT_OK(weft_cts_wait(semaphore, 3));
  uint8_t bytes[64];
  weft_cts_read_buffer(buffer, 0, bytes, sizeof(bytes));
  assert_int_equal(bytes[0], 0);
  for (int i = 1; i < 8; ++i) assert_int_equal(bytes[i], 0x11);
  for (int i = 8; i < 16; i += 2) {
    uint16_t v;
    memcpy(&v, &bytes[i], 2);
    assert_int_equal(v, 0x2233);
  }
  for (int i = 16; i < 32; i += 4) {
    uint32_t v;
    memcpy(&v, &bytes[i], 4);
    assert_int_equal(v, 0x44556677u);
  }
  for (int i = 32; i < 64; ++i) assert_int_equal(bytes[i], 0);
  weft_semaphore_release(semaphore);
  weft_buffer_release(buffer);
}

static void zero_length_ops_signal(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* a = weft_cts_allocate_buffer(cts, 16);
  weft_buffer_t* b = weft_cts_allocate_buffer(cts, 16);
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  uint64_t values[3] = {1, 2, 3};
  uint32_t pattern = 7;
  WEFT_ASSERT_OK(weft_device_queue_fill(
      cts->device, ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&semaphore, &values[0]), a, 4, 0, &pattern, 4));
  WEFT_ASSERT_OK(weft_device_queue_update(
      cts->device, ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&semaphore, &values[1]), NULL, a, 0, 0));
  WEFT_ASSERT_OK(weft_device_queue_copy(
      cts->device, ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&semaphore, &values[2]), a, 0, b, 0, 0));
  WEFT_ASSERT_OK(weft_cts_wait(semaphore, 3));
  weft_cts_assert_words(cts, a, 0, 4, 0);
  weft_semaphore_release(semaphore);
  weft_buffer_release(a);
  weft_buffer_release(b);
}

static void update_basic(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 32);
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1;
  const char data[] = "hello, weft queue";
  WEFT_ASSERT_OK(weft_device_queue_update(
      cts->device, ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&semaphore, &one), data, buffer, 4, sizeof(data)));
  WEFT_ASSERT_OK(weft_cts_wait(semaphore, 1));
  char out[sizeof(data)];
  weft_cts_read_buffer(buffer, 4, out, sizeof(out));
  assert_memory_equal(out, data, sizeof(data));
  weft_semaphore_release(semaphore);
  weft_buffer_release(buffer);
}

static void update_copies_source_at_call(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 64);
  weft_semaphore_t* gate = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* done = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1;
  uint8_t* source = malloc(64);
  memset(source, 0xAB, 64);
  WEFT_ASSERT_OK(weft_device_queue_update(
      cts->device, ANY, weft_cts_list1(&gate, &one),
      weft_cts_list1(&done, &one), source, buffer, 0, 64));
  // Mutate and free the source before the update may run.
  memset(source, 0x00, 64);
  free(source);
  assert_int_equal(weft_cts_query_value(done), 0);
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  WEFT_ASSERT_OK(weft_cts_wait(done, 1));
  weft_cts_assert_words(cts, buffer, 0, 16, 0xABABABABu);
  weft_semaphore_release(gate);
  weft_semaphore_release(done);
  weft_buffer_release(buffer);
}

static void copy_basic(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* source = weft_cts_allocate_buffer(cts, 128);
  weft_buffer_t* target = weft_cts_allocate_buffer(cts, 128);
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  uint64_t values[2] = {1, 2};
  fill_u32(cts, weft_semaphore_list_empty(),
           weft_cts_list1(&semaphore, &values[0]), source, 0, 128, 0x01020304u);
  WEFT_ASSERT_OK(weft_device_queue_copy(
      cts->device, ANY, weft_cts_list1(&semaphore, &values[0]),
      weft_cts_list1(&semaphore, &values[1]), source, 32, target, 64, 32));
  WEFT_ASSERT_OK(weft_cts_wait(semaphore, 2));
  weft_cts_assert_words(cts, target, 0, 16, 0);
  weft_cts_assert_words(cts, target, 64, 8, 0x01020304u);
  weft_cts_assert_words(cts, target, 96, 8, 0);
  weft_semaphore_release(semaphore);
  weft_buffer_release(source);
  weft_buffer_release(target);
}

static void copy_within_one_allocation(void** state) {
  // Disjoint ranges of the same buffer are fine.
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 64);
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  uint64_t values[2] = {1, 2};
  fill_u32(cts, weft_semaphore_list_empty(),
           weft_cts_list1(&semaphore, &values[0]), buffer, 0, 32, 0x5A5A5A5Au);
  WEFT_ASSERT_OK(weft_device_queue_copy(
      cts->device, ANY, weft_cts_list1(&semaphore, &values[0]),
      weft_cts_list1(&semaphore, &values[1]), buffer, 0, buffer, 32, 32));
  WEFT_ASSERT_OK(weft_cts_wait(semaphore, 2));
  weft_cts_assert_words(cts, buffer, 0, 16, 0x5A5A5A5Au);
  weft_semaphore_release(semaphore);
  weft_buffer_release(buffer);
}

static void barrier_signals(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1;
  WEFT_ASSERT_OK(weft_device_queue_barrier(cts->device, ANY,
                                           weft_semaphore_list_empty(),
                                           weft_cts_list1(&semaphore, &one)));
  WEFT_ASSERT_OK(weft_cts_wait(semaphore, 1));
  // A barrier with no lists at all is accepted and does nothing visible.
  WEFT_ASSERT_OK(weft_device_queue_barrier(cts->device, ANY,
                                           weft_semaphore_list_empty(),
                                           weft_semaphore_list_empty()));
  weft_semaphore_release(semaphore);
}

static void barrier_joins_and_orders(void** state) {
  // Two fills into halves, a barrier waiting on both, a copy after it.
  weft_cts_t* cts = *state;
  weft_buffer_t* source = weft_cts_allocate_buffer(cts, 64);
  weft_buffer_t* target = weft_cts_allocate_buffer(cts, 64);
  weft_semaphore_t* a = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* b = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* joined = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* gate = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1, two = 2;
  // Copy first (parks on the barrier), then the barrier, then the fills.
  WEFT_ASSERT_OK(weft_device_queue_copy(
      cts->device, ANY, weft_cts_list1(&joined, &one),
      weft_cts_list1(&joined, &two), source, 0, target, 0, 64));
  weft_semaphore_t* both[2] = {a, b};
  uint64_t both_values[2] = {1, 1};
  WEFT_ASSERT_OK(weft_device_queue_barrier(cts->device, ANY,
                                           weft_cts_list(2, both, both_values),
                                           weft_cts_list1(&joined, &one)));
  fill_u32(cts, weft_cts_list1(&gate, &one), weft_cts_list1(&a, &one), source,
           0, 32, 0xAAAAAAAAu);
  fill_u32(cts, weft_cts_list1(&gate, &one), weft_cts_list1(&b, &one), source,
           32, 32, 0xBBBBBBBBu);
  assert_int_equal(weft_cts_query_value(joined), 0);
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  WEFT_ASSERT_OK(weft_cts_wait(joined, 2));
  weft_cts_assert_words(cts, target, 0, 8, 0xAAAAAAAAu);
  weft_cts_assert_words(cts, target, 32, 8, 0xBBBBBBBBu);
  weft_semaphore_release(a);
  weft_semaphore_release(b);
  weft_semaphore_release(joined);
  weft_semaphore_release(gate);
  weft_buffer_release(source);
  weft_buffer_release(target);
}

//===----------------------------------------------------------------------===//
// Ordering by semaphores
//===----------------------------------------------------------------------===//

static void chain_fill_copy_fill_reverse_submission(void** state) {
  // fill(A) -> copy(A->B) -> fill(A tail), ordered only by one semaphore,
  // submitted last-first so every op waits before its signal exists.
  weft_cts_t* cts = *state;
  weft_buffer_t* a = weft_cts_allocate_buffer(cts, 64);
  weft_buffer_t* b = weft_cts_allocate_buffer(cts, 64);
  weft_semaphore_t* s = weft_cts_create_semaphore(cts, 0);
  uint64_t v[4] = {1, 2, 3, 4};
  fill_u32(cts, weft_cts_list1(&s, &v[2]), weft_cts_list1(&s, &v[3]), a, 32, 32,
           0x33333333u);
  WEFT_ASSERT_OK(
      weft_device_queue_copy(cts->device, ANY, weft_cts_list1(&s, &v[1]),
                             weft_cts_list1(&s, &v[2]), a, 0, b, 0, 64));
  fill_u32(cts, weft_cts_list1(&s, &v[0]), weft_cts_list1(&s, &v[1]), a, 0, 64,
           0x11111111u);
  assert_int_equal(weft_cts_query_value(s), 0);
  WEFT_ASSERT_OK(weft_semaphore_signal(s, 1));
  WEFT_ASSERT_OK(weft_cts_wait(s, 4));
  weft_cts_assert_words(cts, b, 0, 16,
                        0x11111111u);  // copied before the second fill
  weft_cts_assert_words(cts, a, 0, 8, 0x11111111u);
  weft_cts_assert_words(cts, a, 32, 8, 0x33333333u);
  weft_semaphore_release(s);
  weft_buffer_release(a);
  weft_buffer_release(b);
}

static void wait_before_signal_host(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 16);
  weft_semaphore_t* wait = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* signal = weft_cts_create_semaphore(cts, 0);
  uint64_t five = 5, one = 1;
  fill_u32(cts, weft_cts_list1(&wait, &five), weft_cts_list1(&signal, &one),
           buffer, 0, 16, 0xCAFEF00Du);
  // Not yet: the wait is at 0, then 4.
  assert_int_equal(weft_cts_query_value(signal), 0);
  weft_cts_assert_words(cts, buffer, 0, 4, 0);
  WEFT_ASSERT_OK(weft_semaphore_signal(wait, 4));
  assert_int_equal(weft_cts_query_value(signal), 0);
  // Past the value counts as reached.
  WEFT_ASSERT_OK(weft_semaphore_signal(wait, 9));
  WEFT_ASSERT_OK(weft_cts_wait(signal, 1));
  weft_cts_assert_words(cts, buffer, 0, 4, 0xCAFEF00Du);
  weft_semaphore_release(wait);
  weft_semaphore_release(signal);
  weft_buffer_release(buffer);
}

static void wait_before_signal_other_thread(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 16);
  weft_semaphore_t* wait = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* signal = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1;
  fill_u32(cts, weft_cts_list1(&wait, &one), weft_cts_list1(&signal, &one),
           buffer, 0, 16, 0x77777777u);
  signaller_t signaller = {wait, 1, WEFT_OK, 5 * MS, NULL};
  signaller_start(&signaller);
  WEFT_ASSERT_OK(weft_cts_wait(signal, 1));
  weft_thread_join(signaller.thread);
  weft_cts_assert_words(cts, buffer, 0, 4, 0x77777777u);
  weft_semaphore_release(wait);
  weft_semaphore_release(signal);
  weft_buffer_release(buffer);
}

static void multiple_waits_all_required(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* s[3] = {weft_cts_create_semaphore(cts, 0),
                            weft_cts_create_semaphore(cts, 0),
                            weft_cts_create_semaphore(cts, 10)};
  weft_semaphore_t* done = weft_cts_create_semaphore(cts, 0);
  uint64_t wanted[3] = {1, 2, 10};  // the third is already reached
  uint64_t one = 1;
  WEFT_ASSERT_OK(weft_device_queue_barrier(cts->device, ANY,
                                           weft_cts_list(3, s, wanted),
                                           weft_cts_list1(&done, &one)));
  WEFT_ASSERT_OK(weft_semaphore_signal(s[1], 2));
  assert_int_equal(weft_cts_query_value(done), 0);
  WEFT_ASSERT_OK(weft_semaphore_signal(s[0], 1));
  WEFT_ASSERT_OK(weft_cts_wait(done, 1));
  for (int i = 0; i < 3; ++i) weft_semaphore_release(s[i]);
  weft_semaphore_release(done);
}

static void signal_list_several_semaphores(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* s[3] = {weft_cts_create_semaphore(cts, 0),
                            weft_cts_create_semaphore(cts, 5),
                            weft_cts_create_semaphore(cts, 0)};
  weft_semaphore_t* gate = weft_cts_create_semaphore(cts, 0);
  uint64_t values[3] = {1, 6, 100};
  uint64_t one = 1;
  WEFT_ASSERT_OK(weft_device_queue_barrier(cts->device, ANY,
                                           weft_cts_list1(&gate, &one),
                                           weft_cts_list(3, s, values)));
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  for (int i = 0; i < 3; ++i) {
    WEFT_ASSERT_OK(weft_cts_wait(s[i], values[i]));
    assert_int_equal(weft_cts_query_value(s[i]), values[i]);
  }
  for (int i = 0; i < 3; ++i) weft_semaphore_release(s[i]);
  weft_semaphore_release(gate);
}

static void rapid_submissions_chained(void** state) {
  // 200 updates each appending a word, chained by one semaphore.
  weft_cts_t* cts = *state;
  enum { kCount = 200 };
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, kCount * 4);
  weft_semaphore_t* s = weft_cts_create_semaphore(cts, 0);
  static uint64_t values[kCount + 1];
  for (uint32_t i = 0; i <= kCount; ++i) values[i] = i;
  for (uint32_t i = 0; i < kCount; ++i) {
    uint32_t word = i * 3 + 1;
    WEFT_ASSERT_OK(weft_device_queue_update(
        cts->device, ANY, weft_cts_list1(&s, &values[i]),
        weft_cts_list1(&s, &values[i + 1]), &word, buffer, i * 4, 4));
  }
  WEFT_ASSERT_OK(weft_cts_wait(s, kCount));
  uint32_t words[kCount];
  weft_cts_read_buffer(buffer, 0, words, sizeof(words));
  for (uint32_t i = 0; i < kCount; ++i) assert_int_equal(words[i], i * 3 + 1);
  weft_semaphore_release(s);
  weft_buffer_release(buffer);
}

static void long_parked_chain_released_by_one_signal(void** state) {
  // 100,000 barriers: op i waits (s, i) and signals (s, i + 1). All park;
  // one host signal releases the whole chain, which must not grow the stack
  // of the thread that runs it (local-sync runs it on the signalling one).
  weft_cts_t* cts = *state;
  enum { kCount = 100000 };
  weft_semaphore_t* s = weft_cts_create_semaphore(cts, 0);
  uint64_t* values = malloc((kCount + 2) * sizeof(uint64_t));
  for (uint64_t i = 0; i < kCount + 2; ++i) values[i] = i;
  for (uint32_t i = 1; i <= kCount; ++i) {
    WEFT_ASSERT_OK(weft_device_queue_barrier(
        cts->device, ANY, weft_cts_list1(&s, &values[i]),
        weft_cts_list1(&s, &values[i + 1])));
  }
  assert_int_equal(weft_cts_query_value(s), 0);
  WEFT_ASSERT_OK(weft_semaphore_signal(s, 1));
  WEFT_ASSERT_OK(weft_semaphore_wait(s, kCount + 1,
                                     weft_timeout_relative(120ll * 1000 * MS)));
  assert_int_equal(weft_cts_query_value(s), kCount + 1);
  free(values);
  weft_semaphore_release(s);
}

typedef struct submitter_t {
  weft_cts_t* cts;
  weft_semaphore_t* start;  // shared: every chain waits on it
  weft_semaphore_t* timeline;
  weft_buffer_t* buffer;
  uint32_t index;
  weft_thread_t* thread;
  weft_status_t status;
} submitter_t;

enum { kSubmitterOps = 100 };

// Submits a chain of updates on its own timeline, each writing its step.
static int submitter_main(void* user_data) {
  submitter_t* submitter = (submitter_t*)user_data;
  static const uint64_t kOne = 1;
  uint64_t values[kSubmitterOps + 1];
  for (uint32_t i = 0; i <= kSubmitterOps; ++i) values[i] = i;
  weft_status_t status = WEFT_OK;
  for (uint32_t i = 0; weft_status_is_ok(status) && i < kSubmitterOps; ++i) {
    weft_semaphore_list_t waits =
        i == 0 ? weft_cts_list1(&submitter->start, &kOne)
               : weft_cts_list1(&submitter->timeline, &values[i]);
    uint32_t word = submitter->index * 1000 + i;
    status = weft_device_queue_update(
        submitter->cts->device, ANY, waits,
        weft_cts_list1(&submitter->timeline, &values[i + 1]), &word,
        submitter->buffer, (submitter->index * kSubmitterOps + i) * 4, 4);
  }
  submitter->status = status;
  return 0;
}

static void concurrent_submitters(void** state) {
  // Four threads submit chains at once while the host releases them.
  weft_cts_t* cts = *state;
  enum { kThreads = 4 };
  weft_buffer_t* buffer =
      weft_cts_allocate_buffer(cts, kThreads * kSubmitterOps * 4);
  weft_semaphore_t* start = weft_cts_create_semaphore(cts, 0);
  submitter_t submitters[kThreads];
  for (uint32_t t = 0; t < kThreads; ++t) {
    submitters[t] = (submitter_t){
        cts,  start,  weft_cts_create_semaphore(cts, 0), buffer, t,
        NULL, WEFT_OK};
    weft_thread_params_t params = {.name = "cts-submitter", .cpu = -1};
    WEFT_ASSERT_OK(weft_thread_create(submitter_main, &submitters[t], &params,
                                      weft_allocator_system(),
                                      &submitters[t].thread));
  }
  // Released while the threads may still be submitting: some ops run
  // inline in their submit call, others on whichever thread signals.
  WEFT_ASSERT_OK(weft_semaphore_signal(start, 1));
  for (uint32_t t = 0; t < kThreads; ++t) {
    weft_thread_join(submitters[t].thread);
    WEFT_ASSERT_OK(submitters[t].status);
  }
  for (uint32_t t = 0; t < kThreads; ++t) {
    WEFT_ASSERT_OK(weft_cts_wait(submitters[t].timeline, kSubmitterOps));
  }
  uint32_t* words = malloc(kThreads * kSubmitterOps * 4);
  weft_cts_read_buffer(buffer, 0, words, kThreads * kSubmitterOps * 4);
  for (uint32_t t = 0; t < kThreads; ++t) {
    for (uint32_t i = 0; i < kSubmitterOps; ++i) {
      assert_int_equal(words[t * kSubmitterOps + i], t * 1000 + i);
    }
    weft_semaphore_release(submitters[t].timeline);
  }
  free(words);
  weft_semaphore_release(start);
  weft_buffer_release(buffer);
}

//===----------------------------------------------------------------------===//
// Failure propagation
//===----------------------------------------------------------------------===//

static void failed_wait_fails_signals_with_message(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 16);
  weft_semaphore_t* wait = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* other = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* signal[2] = {weft_cts_create_semaphore(cts, 0),
                                 weft_cts_create_semaphore(cts, 0)};
  weft_semaphore_t* waits[2] = {wait, other};
  uint64_t wait_values[2] = {1, 1};
  uint64_t signal_values[2] = {1, 1};
  fill_u32(cts, weft_cts_list(2, waits, wait_values),
           weft_cts_list(2, signal, signal_values), buffer, 0, 16, 0xFFFFFFFFu);
  // One wait fails; the other is never signalled: the op still completes.
  weft_semaphore_fail(wait, WEFT_STATUS(DATA_LOSS, "upstream lost tile 7"));
  for (int i = 0; i < 2; ++i) {
    weft_cts_assert_status_message(weft_cts_wait(signal[i], 1),
                                   WEFT_STATUS_DATA_LOSS,
                                   "upstream lost tile 7");
  }
  weft_cts_assert_words(cts, buffer, 0, 4, 0);  // the fill never ran
  weft_semaphore_release(wait);
  weft_semaphore_release(other);
  for (int i = 0; i < 2; ++i) weft_semaphore_release(signal[i]);
  weft_buffer_release(buffer);
}

static void wait_on_already_failed_semaphore(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 16);
  weft_semaphore_t* wait = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* signal = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_fail(wait, WEFT_STATUS(ABORTED, "producer gave up"));
  uint64_t one = 1;
  // Accepted (the failure is not a validation error) and fails its signals.
  fill_u32(cts, weft_cts_list1(&wait, &one), weft_cts_list1(&signal, &one),
           buffer, 0, 16, 0x12345678u);
  weft_cts_assert_status_message(weft_cts_wait(signal, 1), WEFT_STATUS_ABORTED,
                                 "producer gave up");
  weft_cts_assert_words(cts, buffer, 0, 4, 0);
  weft_semaphore_release(wait);
  weft_semaphore_release(signal);
  weft_buffer_release(buffer);
}

static void failure_propagates_down_a_chain(void** state) {
  // An op that fails (use after dealloca) fails its signal; the next op,
  // waiting on it, fails its own signal with the same original message.
  weft_cts_t* cts = *state;
  weft_semaphore_t* s1 = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* s2 = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* gate = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1, two = 2;
  weft_buffer_t* transient = NULL;
  weft_buffer_params_t params = {0};
  WEFT_ASSERT_OK(weft_device_queue_alloca(
      cts->device, ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&gate, &one), params, 64, &transient));
  WEFT_ASSERT_OK(
      weft_device_queue_dealloca(cts->device, ANY, weft_cts_list1(&gate, &one),
                                 weft_cts_list1(&gate, &two), transient));
  WEFT_ASSERT_OK(weft_device_queue_barrier(
      cts->device, ANY, weft_cts_list1(&s1, &one), weft_cts_list1(&s2, &one)));
  fill_u32(cts, weft_cts_list1(&gate, &two), weft_cts_list1(&s1, &one),
           transient, 0, 64, 1);
  weft_status_t first = weft_cts_wait(s1, 1);
  weft_status_t second = weft_cts_wait(s2, 1);
  assert_int_equal(weft_status_code(first), WEFT_STATUS_FAILED_PRECONDITION);
  assert_int_equal(weft_status_code(second), WEFT_STATUS_FAILED_PRECONDITION);
  assert_string_equal(weft_status_message(first), weft_status_message(second));
  weft_status_free(first);
  weft_status_free(second);
  weft_buffer_release(transient);
  weft_semaphore_release(s1);
  weft_semaphore_release(s2);
  weft_semaphore_release(gate);
}

//===----------------------------------------------------------------------===//
// Synchronous validation
//===----------------------------------------------------------------------===//

// Checks that |signal| (a fresh semaphore at 0) was left untouched.
static void assert_untouched(weft_semaphore_t* signal) {
  assert_int_equal(weft_cts_query_value(signal), 0);
}

static void validation_fill_out_of_range(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 128);
  weft_semaphore_t* signal = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1;
  uint32_t pattern = 1;
  weft_cts_assert_status_contains(
      weft_device_queue_fill(cts->device, ANY, weft_semaphore_list_empty(),
                             weft_cts_list1(&signal, &one), buffer, 256, 256,
                             &pattern, 4),
      WEFT_STATUS_OUT_OF_RANGE, "queue_fill");
  weft_cts_assert_status_contains(
      weft_device_queue_fill(cts->device, ANY, weft_semaphore_list_empty(),
                             weft_cts_list1(&signal, &one), buffer, 64, 128,
                             &pattern, 4),
      WEFT_STATUS_OUT_OF_RANGE, "128 bytes");
  assert_untouched(signal);
  weft_semaphore_release(signal);
  weft_buffer_release(buffer);
}

static void validation_fill_bad_pattern(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 128);
  weft_semaphore_t* signal = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1;
  uint32_t pattern = 1;
  weft_cts_assert_status_contains(
      weft_device_queue_fill(cts->device, ANY, weft_semaphore_list_empty(),
                             weft_cts_list1(&signal, &one), buffer, 0, 12,
                             &pattern, 3),
      WEFT_STATUS_INVALID_ARGUMENT, "queue_fill");
  // Misaligned offset and length for a 4-byte pattern.
  WEFT_ASSERT_STATUS(
      INVALID_ARGUMENT,
      weft_device_queue_fill(cts->device, ANY, weft_semaphore_list_empty(),
                             weft_cts_list1(&signal, &one), buffer, 2, 8,
                             &pattern, 4));
  WEFT_ASSERT_STATUS(
      INVALID_ARGUMENT,
      weft_device_queue_fill(cts->device, ANY, weft_semaphore_list_empty(),
                             weft_cts_list1(&signal, &one), buffer, 0, 6,
                             &pattern, 4));
  WEFT_ASSERT_STATUS(INVALID_ARGUMENT,
                     weft_device_queue_fill(
                         cts->device, ANY, weft_semaphore_list_empty(),
                         weft_cts_list1(&signal, &one), buffer, 0, 8, NULL, 4));
  assert_untouched(signal);
  weft_semaphore_release(signal);
  weft_buffer_release(buffer);
}

static void validation_missing_usage(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* source_only = weft_cts_allocate_buffer_with_params(
      cts,
      (weft_buffer_params_t){.usage = WEFT_BUFFER_USAGE_TRANSFER_SOURCE |
                                      WEFT_BUFFER_USAGE_MAPPING_SCOPED},
      64);
  weft_buffer_t* other = weft_cts_allocate_buffer(cts, 64);
  weft_semaphore_t* signal = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1;
  uint32_t pattern = 9;
  weft_cts_assert_status_contains(
      weft_device_queue_fill(cts->device, ANY, weft_semaphore_list_empty(),
                             weft_cts_list1(&signal, &one), source_only, 0, 64,
                             &pattern, 4),
      WEFT_STATUS_PERMISSION_DENIED, "TRANSFER_TARGET");
  weft_cts_assert_status_contains(
      weft_device_queue_update(cts->device, ANY, weft_semaphore_list_empty(),
                               weft_cts_list1(&signal, &one), &pattern,
                               source_only, 0, 4),
      WEFT_STATUS_PERMISSION_DENIED, "queue_update");
  weft_cts_assert_status_contains(
      weft_device_queue_copy(cts->device, ANY, weft_semaphore_list_empty(),
                             weft_cts_list1(&signal, &one), other, 0,
                             source_only, 0, 64),
      WEFT_STATUS_PERMISSION_DENIED, "queue_copy");
  // The permitted direction works.
  WEFT_ASSERT_OK(weft_device_queue_copy(
      cts->device, ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&signal, &one), source_only, 0, other, 0, 64));
  WEFT_ASSERT_OK(weft_cts_wait(signal, 1));
  weft_semaphore_release(signal);
  weft_buffer_release(source_only);
  weft_buffer_release(other);
}

static void validation_copy_overlap_and_range(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 64);
  weft_buffer_t* small = weft_cts_allocate_buffer(cts, 16);
  weft_semaphore_t* signal = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1;
  weft_cts_assert_status_contains(
      weft_device_queue_copy(cts->device, ANY, weft_semaphore_list_empty(),
                             weft_cts_list1(&signal, &one), buffer, 0, buffer,
                             16, 32),
      WEFT_STATUS_INVALID_ARGUMENT, "queue_copy");
  // A whole-buffer source length that does not fit the target.
  WEFT_ASSERT_STATUS(
      OUT_OF_RANGE,
      weft_device_queue_copy(cts->device, ANY, weft_semaphore_list_empty(),
                             weft_cts_list1(&signal, &one), buffer, 0, small, 0,
                             WEFT_WHOLE_BUFFER));
  assert_untouched(signal);
  weft_semaphore_release(signal);
  weft_buffer_release(buffer);
  weft_buffer_release(small);
}

static void validation_lists_affinity_and_args(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* signal = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1;
  weft_semaphore_t* null_semaphore = NULL;
  weft_cts_assert_status_contains(
      weft_device_queue_barrier(cts->device, ANY,
                                weft_cts_list1(&null_semaphore, &one),
                                weft_cts_list1(&signal, &one)),
      WEFT_STATUS_INVALID_ARGUMENT,
      "queue_barrier: wait_list.semaphores[0] is NULL");
  weft_semaphore_t* signals[2] = {signal, NULL};
  uint64_t values[2] = {1, 1};
  weft_cts_assert_status_contains(
      weft_device_queue_barrier(cts->device, ANY, weft_semaphore_list_empty(),
                                weft_cts_list(2, signals, values)),
      WEFT_STATUS_INVALID_ARGUMENT, "signal_list.semaphores[1] is NULL");
  weft_cts_assert_status_contains(
      weft_device_queue_barrier(cts->device, ANY, weft_semaphore_list_empty(),
                                weft_cts_list(1, NULL, values)),
      WEFT_STATUS_INVALID_ARGUMENT, "NULL");
  weft_cts_assert_status_contains(
      weft_device_queue_barrier(cts->device, 0, weft_semaphore_list_empty(),
                                weft_cts_list1(&signal, &one)),
      WEFT_STATUS_INVALID_ARGUMENT, "affinity");
  weft_buffer_t* buffer = NULL;
  WEFT_ASSERT_STATUS(
      INVALID_ARGUMENT,
      weft_device_queue_alloca(cts->device, ANY, weft_semaphore_list_empty(),
                               weft_cts_list1(&signal, &one),
                               (weft_buffer_params_t){0}, 0, &buffer));
  assert_null(buffer);
  WEFT_ASSERT_STATUS(
      INVALID_ARGUMENT,
      weft_device_queue_dealloca(cts->device, ANY, weft_semaphore_list_empty(),
                                 weft_cts_list1(&signal, &one), NULL));
  if (strcmp(weft_device_driver_name(cts->device), "local-sync") == 0) {
    // local-sync only deallocas buffers its own alloca returned.
    weft_buffer_t* heap = weft_cts_allocate_buffer(cts, 16);
    weft_cts_assert_status_contains(
        weft_device_queue_dealloca(cts->device, ANY,
                                   weft_semaphore_list_empty(),
                                   weft_cts_list1(&signal, &one), heap),
        WEFT_STATUS_INVALID_ARGUMENT, "not returned by queue_alloca");
    weft_buffer_release(heap);
  }
  assert_untouched(signal);
  weft_semaphore_release(signal);
}

static weft_status_t noop_host_call(void* user_data, const uint64_t args[4],
                                    const weft_host_call_context_t* context) {
  return WEFT_OK;
}

static void validation_host_call(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* signal = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1;
  weft_cts_assert_status_contains(
      weft_device_queue_host_call(cts->device, ANY, weft_semaphore_list_empty(),
                                  weft_cts_list1(&signal, &one), NULL, NULL,
                                  NULL, 0),
      WEFT_STATUS_INVALID_ARGUMENT, "queue_host_call");
  weft_cts_assert_status_contains(
      weft_device_queue_host_call(cts->device, ANY, weft_semaphore_list_empty(),
                                  weft_cts_list1(&signal, &one), noop_host_call,
                                  NULL, NULL, 0x80),
      WEFT_STATUS_INVALID_ARGUMENT, "flags");
  assert_untouched(signal);
  weft_semaphore_release(signal);
}

//===----------------------------------------------------------------------===//
// Host calls
//===----------------------------------------------------------------------===//

typedef struct host_call_probe_t {
  weft_semaphore_t* signal;
  uint64_t signal_value;
  // What the call saw; published by |call_count| (the call may run on a
  // queue thread).
  weft_atomic_int32_t call_count;
  uint64_t seen_value;
  uint64_t args[4];
  uint32_t fence_count;
  weft_device_t* device;
  // DEFERRED mode: the thread that signals the fence later.
  weft_fence_t* fence;
  weft_thread_t* thread;
  weft_atomic_int32_t release_thread;
  weft_status_t result;  // returned by the call (ownership passes)
} host_call_probe_t;

static weft_status_t probe_host_call(void* user_data, const uint64_t args[4],
                                     const weft_host_call_context_t* context) {
  host_call_probe_t* probe = (host_call_probe_t*)user_data;
  probe->seen_value = weft_cts_query_value(probe->signal);
  memcpy(probe->args, args, sizeof(probe->args));
  probe->fence_count = weft_fence_count(context->signal_fence);
  probe->device = context->device;
  weft_status_t result = probe->result;
  probe->result = WEFT_OK;
  // Release: publishes what the call saw to the test body.
  weft_atomic_fetch_add(&probe->call_count, 1, memory_order_release);
  return result;
}

// Returns the number of calls seen so far (acquiring what they recorded).
static int32_t call_count(host_call_probe_t* probe) {
  // Acquire: pairs with the release in the call.
  return weft_atomic_load(&probe->call_count, memory_order_acquire);
}

// Polls (up to 10 s) until the probe saw one call.
static bool wait_for_call(host_call_probe_t* probe) {
  weft_time_t deadline = weft_time_now() + 10000 * MS;
  while (call_count(probe) == 0 && weft_time_now() < deadline) {
    weft_sleep_until(weft_time_now() + MS / 10);
  }
  return call_count(probe) == 1;
}

static void host_call_blocking_signals_after(void** state) {
  weft_cts_t* cts = *state;
  host_call_probe_t probe = {0};
  probe.signal = weft_cts_create_semaphore(cts, 0);
  probe.signal_value = 1;
  weft_semaphore_t* gate = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1;
  const uint64_t args[4] = {10, 20, 30, 40};
  WEFT_ASSERT_OK(weft_device_queue_host_call(
      cts->device, ANY, weft_cts_list1(&gate, &one),
      weft_cts_list1(&probe.signal, &probe.signal_value), probe_host_call,
      &probe, args, WEFT_HOST_CALL_FLAG_NONE));
  assert_int_equal(call_count(&probe), 0);  // waits first
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  WEFT_ASSERT_OK(weft_cts_wait(probe.signal, 1));
  assert_int_equal(call_count(&probe), 1);
  assert_int_equal(probe.seen_value, 0);  // not yet signalled in the call
  assert_memory_equal(probe.args, args, sizeof(args));
  assert_int_equal(probe.fence_count, 1);
  assert_ptr_equal(probe.device, cts->device);
  weft_semaphore_release(probe.signal);
  weft_semaphore_release(gate);
}

static void host_call_non_blocking_signals_before(void** state) {
  weft_cts_t* cts = *state;
  host_call_probe_t probe = {0};
  probe.signal = weft_cts_create_semaphore(cts, 0);
  probe.signal_value = 1;
  // The call's error is dropped in this mode.
  probe.result = WEFT_STATUS(INTERNAL, "ignored");
  uint64_t one = 1;
  WEFT_ASSERT_OK(weft_device_queue_host_call(
      cts->device, ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&probe.signal, &one), probe_host_call, &probe, NULL,
      WEFT_HOST_CALL_FLAG_NON_BLOCKING));
  WEFT_ASSERT_OK(weft_cts_wait(probe.signal, 1));
  // On a threaded driver the call may still be running after the signal.
  assert_true(wait_for_call(&probe));
  assert_int_equal(probe.seen_value, 1);  // signalled before the call ran
  for (int i = 0; i < 4; ++i) assert_int_equal(probe.args[i], 0);  // NULL
  weft_semaphore_release(probe.signal);
}

static int deferred_signaller_main(void* user_data) {
  host_call_probe_t* probe = (host_call_probe_t*)user_data;
  // Acquire: pairs with the release store of the test body.
  while (!weft_atomic_load(&probe->release_thread, memory_order_acquire)) {
    weft_thread_yield();
  }
  weft_status_ignore(weft_fence_signal(probe->fence));
  weft_fence_release(probe->fence);
  return 0;
}

static weft_status_t deferred_host_call(
    void* user_data, const uint64_t args[4],
    const weft_host_call_context_t* context) {
  host_call_probe_t* probe = (host_call_probe_t*)user_data;
  weft_fence_retain(context->signal_fence);
  probe->fence = context->signal_fence;
  weft_thread_params_t params = {.name = "cts-deferred", .cpu = -1};
  weft_status_t status =
      weft_thread_create(deferred_signaller_main, probe, &params,
                         weft_allocator_system(), &probe->thread);
  if (!weft_status_is_ok(status)) {
    weft_fence_release(probe->fence);
    return status;
  }
  // Release: publishes |thread| to the test body.
  weft_atomic_fetch_add(&probe->call_count, 1, memory_order_release);
  return weft_status_from_code(WEFT_STATUS_DEFERRED);
}

static void host_call_deferred_signals_later(void** state) {
  weft_cts_t* cts = *state;
  host_call_probe_t probe = {0};
  probe.signal = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* second = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* signals[2] = {probe.signal, second};
  uint64_t values[2] = {3, 4};
  WEFT_ASSERT_OK(weft_device_queue_host_call(
      cts->device, ANY, weft_semaphore_list_empty(),
      weft_cts_list(2, signals, values), deferred_host_call, &probe, NULL,
      WEFT_HOST_CALL_FLAG_NONE));
  // Wait for the call to have happened, then check nothing was signalled.
  assert_true(wait_for_call(&probe));
  assert_non_null(probe.thread);
  WEFT_ASSERT_STATUS(
      DEADLINE_EXCEEDED,
      weft_semaphore_wait(probe.signal, 3, weft_timeout_relative(5 * MS)));
  assert_int_equal(weft_cts_query_value(second), 0);
  // Release: the thread signals the fence.
  weft_atomic_store(&probe.release_thread, 1, memory_order_release);
  WEFT_ASSERT_OK(weft_cts_wait(probe.signal, 3));
  WEFT_ASSERT_OK(weft_cts_wait(second, 4));
  weft_thread_join(probe.thread);
  assert_int_equal(call_count(&probe), 1);
  weft_semaphore_release(probe.signal);
  weft_semaphore_release(second);
}

static void host_call_error_fails_signals(void** state) {
  weft_cts_t* cts = *state;
  host_call_probe_t probe = {0};
  probe.signal = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* second = weft_cts_create_semaphore(cts, 0);
  probe.result = WEFT_STATUS(UNAVAILABLE, "the sensor is unplugged");
  weft_semaphore_t* signals[2] = {probe.signal, second};
  uint64_t values[2] = {1, 1};
  WEFT_ASSERT_OK(weft_device_queue_host_call(
      cts->device, ANY, weft_semaphore_list_empty(),
      weft_cts_list(2, signals, values), probe_host_call, &probe, NULL,
      WEFT_HOST_CALL_FLAG_NONE));
  weft_cts_assert_status_message(weft_cts_wait(probe.signal, 1),
                                 WEFT_STATUS_UNAVAILABLE,
                                 "the sensor is unplugged");
  weft_cts_assert_status_message(weft_cts_wait(second, 1),
                                 WEFT_STATUS_UNAVAILABLE,
                                 "the sensor is unplugged");
  weft_semaphore_release(probe.signal);
  weft_semaphore_release(second);
}

static void host_call_not_run_after_failed_wait(void** state) {
  weft_cts_t* cts = *state;
  host_call_probe_t probe = {0};
  probe.signal = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* gate = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1;
  WEFT_ASSERT_OK(weft_device_queue_host_call(
      cts->device, ANY, weft_cts_list1(&gate, &one),
      weft_cts_list1(&probe.signal, &one), probe_host_call, &probe, NULL,
      WEFT_HOST_CALL_FLAG_NON_BLOCKING));
  weft_semaphore_fail(gate, WEFT_STATUS(CANCELLED, "job cancelled"));
  weft_cts_assert_status_message(weft_cts_wait(probe.signal, 1),
                                 WEFT_STATUS_CANCELLED, "job cancelled");
  assert_int_equal(call_count(&probe), 0);
  weft_semaphore_release(probe.signal);
  weft_semaphore_release(gate);
}

//===----------------------------------------------------------------------===//
// alloca / dealloca
//===----------------------------------------------------------------------===//

static void alloca_use_dealloca(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* s = weft_cts_create_semaphore(cts, 0);
  uint64_t v[4] = {1, 2, 3, 4};
  weft_buffer_t* buffer = NULL;
  weft_buffer_params_t params = {0};
  WEFT_ASSERT_OK(weft_device_queue_alloca(
      cts->device, ANY, weft_semaphore_list_empty(), weft_cts_list1(&s, &v[0]),
      params, 256, &buffer));
  assert_non_null(buffer);
  assert_int_equal(weft_buffer_byte_length(buffer), 256);
  fill_u32(cts, weft_cts_list1(&s, &v[0]), weft_cts_list1(&s, &v[1]), buffer, 0,
           256, 0x600DF00Du);
  WEFT_ASSERT_OK(weft_cts_wait(s, 2));
  weft_cts_assert_words(cts, buffer, 0, 64, 0x600DF00Du);
  WEFT_ASSERT_OK(weft_device_queue_dealloca(cts->device, ANY,
                                            weft_cts_list1(&s, &v[1]),
                                            weft_cts_list1(&s, &v[2]), buffer));
  WEFT_ASSERT_OK(weft_cts_wait(s, 3));
  // Mapping after dealloca is FAILED_PRECONDITION.
  uint32_t word = 0;
  WEFT_ASSERT_STATUS(FAILED_PRECONDITION,
                     weft_buffer_map_read(buffer, 0, &word, 4));
  weft_buffer_release(buffer);
  weft_semaphore_release(s);
}

static void alloca_parked_commits_when_run(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* gate = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* ready = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1, two = 2;
  weft_buffer_t* buffer = NULL;
  weft_buffer_params_t params = {0};
  WEFT_ASSERT_OK(weft_device_queue_alloca(
      cts->device, ANY, weft_cts_list1(&gate, &one),
      weft_cts_list1(&ready, &one), params, 64, &buffer));
  // The handle exists at once, without memory.
  assert_non_null(buffer);
  uint32_t word = 0;
  weft_cts_assert_status_contains(weft_buffer_map_read(buffer, 0, &word, 4),
                                  WEFT_STATUS_FAILED_PRECONDITION, "before");
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  WEFT_ASSERT_OK(weft_cts_wait(ready, 1));
  WEFT_ASSERT_OK(weft_buffer_map_read(buffer, 0, &word, 4));
  WEFT_ASSERT_OK(
      weft_device_queue_dealloca(cts->device, ANY, weft_cts_list1(&ready, &one),
                                 weft_cts_list1(&ready, &two), buffer));
  WEFT_ASSERT_OK(weft_cts_wait(ready, 2));
  weft_buffer_release(buffer);
  weft_semaphore_release(gate);
  weft_semaphore_release(ready);
}

static void alloca_dealloca_cycles(void** state) {
  // Ten rounds of alloca -> fill -> copy out -> dealloca on one timeline.
  weft_cts_t* cts = *state;
  weft_semaphore_t* s = weft_cts_create_semaphore(cts, 0);
  weft_buffer_t* out = weft_cts_allocate_buffer(cts, 10 * 64);
  static uint64_t values[41];
  for (int i = 0; i < 41; ++i) values[i] = (uint64_t)i;
  weft_buffer_params_t params = {0};
  for (uint32_t round = 0; round < 10; ++round) {
    uint64_t* v = &values[round * 4];
    weft_buffer_t* buffer = NULL;
    WEFT_ASSERT_OK(weft_device_queue_alloca(
        cts->device, ANY, weft_cts_list1(&s, &v[0]), weft_cts_list1(&s, &v[1]),
        params, 64, &buffer));
    fill_u32(cts, weft_cts_list1(&s, &v[1]), weft_cts_list1(&s, &v[2]), buffer,
             0, 64, 0x1000u + round);
    WEFT_ASSERT_OK(weft_device_queue_copy(
        cts->device, ANY, weft_cts_list1(&s, &v[2]), weft_cts_list1(&s, &v[3]),
        buffer, 0, out, round * 64, 64));
    WEFT_ASSERT_OK(
        weft_device_queue_dealloca(cts->device, ANY, weft_cts_list1(&s, &v[3]),
                                   weft_cts_list1(&s, &v[4]), buffer));
    weft_buffer_release(buffer);  // the queue keeps what it still needs
  }
  WEFT_ASSERT_OK(weft_cts_wait(s, 40));
  for (uint32_t round = 0; round < 10; ++round) {
    weft_cts_assert_words(cts, out, round * 64, 16, 0x1000u + round);
  }
  weft_buffer_release(out);
  weft_semaphore_release(s);
}

// An op's failure carries where it happened (which op instance: its waits
// and signals, its queue and device) and every op downstream adds its own
// link, after the original message.
static void errors_name_op_queue_and_device(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* s = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* filled = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* after = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_set_name(s, "memory");
  weft_semaphore_set_name(filled, "filled");
  weft_semaphore_set_name(after, "after");
  uint64_t one = 1, two = 2;
  weft_buffer_t* buffer = NULL;
  weft_buffer_params_t params = {0};
  WEFT_ASSERT_OK(
      weft_device_queue_alloca(cts->device, ANY, weft_semaphore_list_empty(),
                               weft_cts_list1(&s, &one), params, 64, &buffer));
  WEFT_ASSERT_OK(weft_device_queue_dealloca(cts->device, ANY,
                                            weft_cts_list1(&s, &one),
                                            weft_cts_list1(&s, &two), buffer));
  // The fill meets a decommitted buffer; the barrier waits on the fill.
  fill_u32(cts, weft_cts_list1(&s, &two), weft_cts_list1(&filled, &one), buffer,
           0, 64, 5);
  WEFT_ASSERT_OK(weft_device_queue_barrier(cts->device, ANY,
                                           weft_cts_list1(&filled, &one),
                                           weft_cts_list1(&after, &one)));
  char expected_fill[512];
  snprintf(expected_fill, sizeof(expected_fill),
           "while running queue_fill (waiting for 'memory' >= 2, signalling "
           "'filled' = 1) on queue 0 of device '%s'",
           cts->device_string);
  char expected_barrier[512];
  snprintf(expected_barrier, sizeof(expected_barrier),
           "so queue_barrier (waiting for 'filled' >= 1, signalling 'after' "
           "= 1) on queue 0 of device '%s' did not run",
           cts->device_string);
  char text[4096];
  weft_status_t status = weft_cts_wait(after, 1);
  weft_status_format(status, text, sizeof(text));
  assert_int_equal(weft_status_code(status), WEFT_STATUS_FAILED_PRECONDITION);
  weft_status_free(status);
  // Original message first, then the fill's link, then the barrier's.
  const char* original = strstr(text, "dealloca");
  const char* fill_link = strstr(text, expected_fill);
  const char* barrier_link = strstr(text, expected_barrier);
  if (!original || !fill_link || !barrier_link || original > fill_link ||
      fill_link > barrier_link) {
    fail_msg("expected '%s' then '%s' in: %s", expected_fill, expected_barrier,
             text);
  }
  weft_buffer_release(buffer);
  weft_semaphore_release(s);
  weft_semaphore_release(filled);
  weft_semaphore_release(after);
}

static void use_after_dealloca_fails_signals(void** state) {
  // Accepted, then fails its signals with FAILED_PRECONDITION (see the
  // comment at the top of this file).
  weft_cts_t* cts = *state;
  weft_semaphore_t* s = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* signal = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1, two = 2;
  weft_buffer_t* buffer = NULL;
  weft_buffer_params_t params = {0};
  WEFT_ASSERT_OK(
      weft_device_queue_alloca(cts->device, ANY, weft_semaphore_list_empty(),
                               weft_cts_list1(&s, &one), params, 64, &buffer));
  WEFT_ASSERT_OK(weft_device_queue_dealloca(cts->device, ANY,
                                            weft_cts_list1(&s, &one),
                                            weft_cts_list1(&s, &two), buffer));
  WEFT_ASSERT_OK(weft_cts_wait(s, 2));
  fill_u32(cts, weft_cts_list1(&s, &two), weft_cts_list1(&signal, &one), buffer,
           0, 64, 5);
  weft_cts_assert_status_contains(weft_cts_wait(signal, 1),
                                  WEFT_STATUS_FAILED_PRECONDITION, "dealloca");
  // A second dealloca fails its signals the same way.
  weft_semaphore_t* signal2 = weft_cts_create_semaphore(cts, 0);
  WEFT_ASSERT_OK(
      weft_device_queue_dealloca(cts->device, ANY, weft_semaphore_list_empty(),
                                 weft_cts_list1(&signal2, &one), buffer));
  WEFT_ASSERT_STATUS(FAILED_PRECONDITION, weft_cts_wait(signal2, 1));
  weft_buffer_release(buffer);
  weft_semaphore_release(s);
  weft_semaphore_release(signal);
  weft_semaphore_release(signal2);
}

//===----------------------------------------------------------------------===//
// Files and command buffers through the queue
//===----------------------------------------------------------------------===//

static void read_write_memory_file(void** state) {
  weft_cts_t* cts = *state;
  uint8_t memory[128];
  for (int i = 0; i < 128; ++i) memory[i] = (uint8_t)i;
  weft_file_t* file = NULL;
  WEFT_ASSERT_OK(weft_file_wrap_memory(
      WEFT_FILE_ACCESS_READ | WEFT_FILE_ACCESS_WRITE, memory, sizeof(memory),
      NULL, NULL, cts->allocator, &file));
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 64);
  weft_semaphore_t* s = weft_cts_create_semaphore(cts, 0);
  uint64_t v[3] = {1, 2, 3};
  WEFT_ASSERT_OK(weft_device_queue_read(
      cts->device, ANY, weft_semaphore_list_empty(), weft_cts_list1(&s, &v[0]),
      file, 32, buffer, 0, 64));
  fill_u32(cts, weft_cts_list1(&s, &v[0]), weft_cts_list1(&s, &v[1]), buffer, 0,
           4, 0xEEEEEEEEu);
  WEFT_ASSERT_OK(weft_device_queue_write(
      cts->device, ANY, weft_cts_list1(&s, &v[1]), weft_cts_list1(&s, &v[2]),
      buffer, 0, file, 0, 8));
  WEFT_ASSERT_OK(weft_cts_wait(s, 3));
  for (int i = 0; i < 4; ++i) assert_int_equal(memory[i], 0xEE);
  for (int i = 4; i < 8; ++i) assert_int_equal(memory[i], 32 + i);
  // Reading past the end of the file is a synchronous OUT_OF_RANGE.
  weft_semaphore_t* untouched = weft_cts_create_semaphore(cts, 0);
  WEFT_ASSERT_STATUS(
      OUT_OF_RANGE,
      weft_device_queue_read(cts->device, ANY, weft_semaphore_list_empty(),
                             weft_cts_list1(&untouched, &v[0]), file, 100,
                             buffer, 0, 64));
  assert_untouched(untouched);
  weft_semaphore_release(untouched);
  weft_semaphore_release(s);
  weft_buffer_release(buffer);
  weft_file_release(file);
}

static void read_write_fd_file(void** state) {
  weft_cts_t* cts = *state;
  char path[] = "/tmp/weft_cts_queue_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  uint8_t data[256];
  for (int i = 0; i < 256; ++i) data[i] = (uint8_t)(255 - i);
  assert_int_equal(write(fd, data, sizeof(data)), (ssize_t)sizeof(data));
  weft_file_t* file = NULL;
  WEFT_ASSERT_OK(
      weft_file_from_fd(fd, WEFT_FILE_ACCESS_READ | WEFT_FILE_ACCESS_WRITE,
                        cts->allocator, &file));
  close(fd);
  unlink(path);
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 128);
  weft_semaphore_t* s = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* gate = weft_cts_create_semaphore(cts, 0);
  uint64_t v[3] = {1, 2, 3};
  // Parked read, then a write back to a later offset, then a read of that.
  WEFT_ASSERT_OK(weft_device_queue_read(
      cts->device, ANY, weft_cts_list1(&gate, &v[0]), weft_cts_list1(&s, &v[0]),
      file, 0, buffer, 0, 128));
  WEFT_ASSERT_OK(weft_device_queue_write(
      cts->device, ANY, weft_cts_list1(&s, &v[0]), weft_cts_list1(&s, &v[1]),
      buffer, 0, file, 128, 64));
  WEFT_ASSERT_OK(weft_device_queue_read(
      cts->device, ANY, weft_cts_list1(&s, &v[1]), weft_cts_list1(&s, &v[2]),
      file, 128, buffer, 64, 64));
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  WEFT_ASSERT_OK(weft_cts_wait(s, 3));
  uint8_t out[128];
  weft_cts_read_buffer(buffer, 0, out, sizeof(out));
  assert_memory_equal(out, data, 64);
  assert_memory_equal(out + 64, data, 64);
  weft_semaphore_release(s);
  weft_semaphore_release(gate);
  weft_buffer_release(buffer);
  weft_file_release(file);
}

static void execute_command_buffer_with_binding_table(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* a = weft_cts_allocate_buffer(cts, 64);
  weft_buffer_t* b = weft_cts_allocate_buffer(cts, 64);
  weft_command_buffer_t* command_buffer = NULL;
  WEFT_ASSERT_OK(weft_command_buffer_create(
      cts->device, WEFT_COMMAND_BUFFER_MODE_REUSABLE, WEFT_COMMAND_CATEGORY_ANY,
      2, &command_buffer));
  WEFT_ASSERT_OK(weft_command_buffer_begin(command_buffer));
  uint32_t pattern = 0x0F0F0F0Fu;
  WEFT_ASSERT_OK(weft_command_buffer_fill(
      command_buffer, weft_make_indirect_buffer_ref(0, 0, 64), &pattern, 4));
  WEFT_ASSERT_OK(weft_command_buffer_barrier(command_buffer));
  WEFT_ASSERT_OK(weft_command_buffer_copy(
      command_buffer, weft_make_indirect_buffer_ref(0, 0, 32),
      weft_make_indirect_buffer_ref(1, 32, 32)));
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));

  weft_semaphore_t* s = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* gate = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1;
  weft_buffer_binding_t bindings[2] = {{a, 0, 64}, {b, 0, 64}};
  weft_binding_table_t table = {2, bindings};
  WEFT_ASSERT_OK(weft_device_queue_execute(
      cts->device, ANY, weft_cts_list1(&gate, &one), weft_cts_list1(&s, &one),
      command_buffer, table));
  // The table was borrowed for the call only.
  memset(bindings, 0, sizeof(bindings));
  weft_command_buffer_release(command_buffer);
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  WEFT_ASSERT_OK(weft_cts_wait(s, 1));
  weft_cts_assert_words(cts, a, 0, 16, 0x0F0F0F0Fu);
  weft_cts_assert_words(cts, b, 0, 8, 0);
  weft_cts_assert_words(cts, b, 32, 8, 0x0F0F0F0Fu);
  // A missing table entry is a synchronous error.
  WEFT_ASSERT_OK(weft_command_buffer_create(
      cts->device, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, WEFT_COMMAND_CATEGORY_ANY,
      1, &command_buffer));
  WEFT_ASSERT_OK(weft_command_buffer_begin(command_buffer));
  WEFT_ASSERT_OK(weft_command_buffer_fill(
      command_buffer, weft_make_indirect_buffer_ref(0, 0, 64), &pattern, 4));
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  weft_binding_table_t empty_table = {0, NULL};
  weft_semaphore_t* untouched = weft_cts_create_semaphore(cts, 0);
  WEFT_ASSERT_STATUS(
      OUT_OF_RANGE,
      weft_device_queue_execute(cts->device, ANY, weft_semaphore_list_empty(),
                                weft_cts_list1(&untouched, &one),
                                command_buffer, empty_table));
  assert_untouched(untouched);
  weft_command_buffer_release(command_buffer);
  weft_semaphore_release(untouched);
  weft_semaphore_release(s);
  weft_semaphore_release(gate);
  weft_buffer_release(a);
  weft_buffer_release(b);
}

static void parked_op_keeps_resources_alive(void** state) {
  // Release every handle right after submit; the parked op holds them.
  weft_cts_t* cts = *state;
  weft_buffer_t* source = weft_cts_allocate_buffer(cts, 64);
  weft_buffer_t* target = weft_cts_allocate_buffer(cts, 64);
  weft_semaphore_t* gate = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* done = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1;
  WEFT_ASSERT_OK(weft_device_queue_copy(
      cts->device, ANY, weft_cts_list1(&gate, &one),
      weft_cts_list1(&done, &one), source, 0, target, 0, 64));
  weft_buffer_retain(target);  // kept to check the result
  weft_buffer_release(source);
  weft_buffer_release(target);
  weft_semaphore_retain(done);
  weft_semaphore_release(done);
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  WEFT_ASSERT_OK(weft_cts_wait(done, 1));
  weft_cts_assert_words(cts, target, 0, 16, 0);
  weft_buffer_release(target);
  weft_semaphore_release(gate);
  weft_semaphore_release(done);
}

//===----------------------------------------------------------------------===//
// Allocation failures
//===----------------------------------------------------------------------===//

// Fails |semaphore| (if created) so that anything parked on it completes.
static void fail_and_release(weft_semaphore_t* semaphore) {
  if (!semaphore) return;
  weft_semaphore_fail(semaphore, WEFT_STATUS(CANCELLED, "test cleanup"));
  weft_semaphore_release(semaphore);
}

// True for the outcomes an injected allocation failure may cause.
static bool is_injected_outcome(weft_status_t status) {
  weft_status_code_t code = weft_status_code(status);
  return code == WEFT_STATUS_OK || code == WEFT_STATUS_RESOURCE_EXHAUSTED ||
         code == WEFT_STATUS_CANCELLED;
}

// Runs a small mixed pipeline on a device whose allocator fails allocation
// |fail_at| and every later one. Every submission either fails synchronously
// or completes (signalling or failing its semaphores); nothing may hang or
// leak. Returns the number of allocations failed on purpose.
static int64_t run_pipeline_failing_at(const char* device_string,
                                       int64_t fail_at) {
  weft_failing_allocator_t storage;
  weft_allocator_t allocator = weft_failing_allocator_initialize(
      weft_allocator_system(), fail_at, &storage);
  weft_device_t* device = NULL;
  weft_semaphore_t* gate = NULL;
  weft_semaphore_t* s = NULL;
  weft_semaphore_t* t = NULL;
  weft_buffer_t* buffer = NULL;
  weft_buffer_t* transient = NULL;
  weft_status_t status = weft_device_create(device_string, allocator, &device);
  if (weft_status_is_ok(status)) {
    status = weft_device_create_semaphore(device, 0, &gate);
  }
  if (weft_status_is_ok(status)) {
    status = weft_device_create_semaphore(device, 0, &s);
  }
  if (weft_status_is_ok(status)) {
    status = weft_device_create_semaphore(device, 0, &t);
  }
  if (weft_status_is_ok(status)) {
    status = weft_device_allocate_buffer(device, (weft_buffer_params_t){0}, 64,
                                         &buffer);
  }
  uint64_t v[4] = {0, 1, 2, 3};
  uint8_t bytes[64];
  memset(bytes, 0x3C, sizeof(bytes));
  if (weft_status_is_ok(status)) {
    status = weft_device_queue_update(device, ANY, weft_cts_list1(&gate, &v[1]),
                                      weft_cts_list1(&s, &v[1]), bytes, buffer,
                                      0, 64);
  }
  host_call_probe_t probe = {0};
  probe.signal = s;
  if (weft_status_is_ok(status)) {
    status = weft_device_queue_host_call(
        device, ANY, weft_cts_list1(&s, &v[1]), weft_cts_list1(&s, &v[2]),
        probe_host_call, &probe, NULL, WEFT_HOST_CALL_FLAG_NONE);
  }
  if (weft_status_is_ok(status)) {
    status = weft_device_queue_alloca(
        device, ANY, weft_semaphore_list_empty(), weft_cts_list1(&t, &v[1]),
        (weft_buffer_params_t){0}, 64, &transient);
  }
  if (weft_status_is_ok(status)) {
    status = weft_device_queue_dealloca(device, ANY, weft_cts_list1(&t, &v[1]),
                                        weft_cts_list1(&t, &v[2]), transient);
  }
  if (weft_status_is_ok(status)) {
    uint32_t pattern = 0x01010101u;
    status = weft_device_queue_fill(device, ANY, weft_cts_list1(&s, &v[2]),
                                    weft_cts_list1(&s, &v[3]), buffer, 0, 32,
                                    &pattern, 4);
  }
  if (weft_status_is_ok(status)) {
    status = weft_semaphore_signal(gate, 1);
  }
  if (weft_status_is_ok(status)) {
    weft_status_t waited = weft_cts_wait(s, 3);
    if (!is_injected_outcome(waited)) {
      weft_status_fprint(stderr, waited);
      fail_msg("fail_at %lld: unexpected pipeline outcome", (long long)fail_at);
    }
    weft_status_free(waited);
    weft_status_t waited_t = weft_cts_wait(t, 2);
    assert_true(is_injected_outcome(waited_t));
    weft_status_free(waited_t);
  }
  // Only allocation failures may have stopped the pipeline.
  if (!is_injected_outcome(status)) {
    weft_status_fprint(stderr, status);
    fail_msg("fail_at %lld: unexpected submission error", (long long)fail_at);
  }
  weft_status_free(status);
  fail_and_release(gate);
  fail_and_release(s);
  fail_and_release(t);
  weft_buffer_release(transient);
  weft_buffer_release(buffer);
  weft_device_release(device);
  // The failing allocator counts with __atomic builtins on plain fields.
  return __atomic_load_n(&storage.failure_count, __ATOMIC_RELAXED);
}

static void allocation_failures_never_hang_or_leak(void** state) {
  weft_cts_t* cts = *state;
  int64_t fail_at = 0;
  while (fail_at < 1000 &&
         run_pipeline_failing_at(cts->device_string, fail_at) > 0) {
    ++fail_at;
  }
  assert_true(fail_at >= 10);  // the pipeline makes at least 10 allocations
  assert_true(fail_at < 1000);
}

int main(int argc, char** argv) {
  const struct CMUnitTest tests[] = {
      WEFT_CTS_CASE(fill_whole_buffer),
      WEFT_CTS_CASE(fill_patterns_and_offsets),
      WEFT_CTS_CASE(zero_length_ops_signal),
      WEFT_CTS_CASE(update_basic),
      WEFT_CTS_CASE(update_copies_source_at_call),
      WEFT_CTS_CASE(copy_basic),
      WEFT_CTS_CASE(copy_within_one_allocation),
      WEFT_CTS_CASE(barrier_signals),
      WEFT_CTS_CASE(barrier_joins_and_orders),
      WEFT_CTS_CASE(chain_fill_copy_fill_reverse_submission),
      WEFT_CTS_CASE(wait_before_signal_host),
      WEFT_CTS_CASE(wait_before_signal_other_thread),
      WEFT_CTS_CASE(multiple_waits_all_required),
      WEFT_CTS_CASE(signal_list_several_semaphores),
      WEFT_CTS_CASE(rapid_submissions_chained),
      WEFT_CTS_CASE(long_parked_chain_released_by_one_signal),
      WEFT_CTS_CASE(concurrent_submitters),
      WEFT_CTS_CASE(failed_wait_fails_signals_with_message),
      WEFT_CTS_CASE(wait_on_already_failed_semaphore),
      WEFT_CTS_CASE(failure_propagates_down_a_chain),
      WEFT_CTS_CASE(validation_fill_out_of_range),
      WEFT_CTS_CASE(validation_fill_bad_pattern),
      WEFT_CTS_CASE(validation_missing_usage),
      WEFT_CTS_CASE(validation_copy_overlap_and_range),
      WEFT_CTS_CASE(validation_lists_affinity_and_args),
      WEFT_CTS_CASE(validation_host_call),
      WEFT_CTS_CASE(host_call_blocking_signals_after),
      WEFT_CTS_CASE(host_call_non_blocking_signals_before),
      WEFT_CTS_CASE(host_call_deferred_signals_later),
      WEFT_CTS_CASE(host_call_error_fails_signals),
      WEFT_CTS_CASE(host_call_not_run_after_failed_wait),
      WEFT_CTS_CASE(alloca_use_dealloca),
      WEFT_CTS_CASE(alloca_parked_commits_when_run),
      WEFT_CTS_CASE(alloca_dealloca_cycles),
      WEFT_CTS_CASE(use_after_dealloca_fails_signals),
      WEFT_CTS_CASE(errors_name_op_queue_and_device),
      WEFT_CTS_CASE(read_write_memory_file),
      WEFT_CTS_CASE(read_write_fd_file),
      WEFT_CTS_CASE(execute_command_buffer_with_binding_table),
      WEFT_CTS_CASE(parked_op_keeps_resources_alive),
      WEFT_CTS_CASE(allocation_failures_never_hang_or_leak),
  };
  return weft_cts_run("queue", tests, WEFT_CTS_COUNT(tests), argc, argv);
}
