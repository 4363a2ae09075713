// CTS: queue operations ordered by semaphores only.
//
// Contract exercised here: nothing starts before its waits are reached
// (whether the waits are signalled by the host, another thread or another
// op, before or after the submit); signals are published after the work;
// a failed wait fails every signal semaphore of the op, and of every op
// downstream, with the original message. An op holds what it names until
// it retires.
#include <stdlib.h>
#include <string.h>

#include "base/thread.h"
#include "cts.h"

#define MS (1000ll * 1000ll)
#define ANY WEFT_QUEUE_AFFINITY_ANY

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

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
// Waits and signals
//===----------------------------------------------------------------------===//

static void chain_fill_copy_fill_reverse_submission(void** state) {
  // fill(A) -> copy(A->B) -> fill(A tail), ordered only by one semaphore,
  // submitted last-first so every op waits before its signal exists.
  weft_cts_t* cts = *state;
  weft_buffer_t* a = weft_cts_allocate_buffer(cts, 64);
  weft_buffer_t* b = weft_cts_allocate_buffer(cts, 64);
  weft_semaphore_t* s = weft_cts_create_semaphore(cts, 0);
  uint64_t v[4] = {1, 2, 3, 4};
  weft_cts_queue_fill_u32(cts, weft_cts_list1(&s, &v[2]),
                          weft_cts_list1(&s, &v[3]), a, 32, 32, 0x33333333u);
  WEFT_ASSERT_OK(
      weft_device_queue_copy(cts->device, ANY, weft_cts_list1(&s, &v[1]),
                             weft_cts_list1(&s, &v[2]), a, 0, b, 0, 64));
  weft_cts_queue_fill_u32(cts, weft_cts_list1(&s, &v[0]),
                          weft_cts_list1(&s, &v[1]), a, 0, 64, 0x11111111u);
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
  weft_cts_queue_fill_u32(cts, weft_cts_list1(&wait, &five),
                          weft_cts_list1(&signal, &one), buffer, 0, 16,
                          0xCAFEF00Du);
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
  weft_cts_queue_fill_u32(cts, weft_cts_list1(&wait, &one),
                          weft_cts_list1(&signal, &one), buffer, 0, 16,
                          0x77777777u);
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
  weft_cts_read_buffer(cts, buffer, 0, words, sizeof(words));
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
// Submitting from several threads
//===----------------------------------------------------------------------===//

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
  weft_cts_read_buffer(cts, buffer, 0, words, kThreads * kSubmitterOps * 4);
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
  weft_cts_queue_fill_u32(cts, weft_cts_list(2, waits, wait_values),
                          weft_cts_list(2, signal, signal_values), buffer, 0,
                          16, 0xFFFFFFFFu);
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
  weft_cts_queue_fill_u32(cts, weft_cts_list1(&wait, &one),
                          weft_cts_list1(&signal, &one), buffer, 0, 16,
                          0x12345678u);
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
  weft_cts_queue_fill_u32(cts, weft_cts_list1(&gate, &two),
                          weft_cts_list1(&s1, &one), transient, 0, 64, 1);
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

int main(int argc, char** argv) {
  const struct CMUnitTest tests[] = {
      WEFT_CTS_CASE(chain_fill_copy_fill_reverse_submission),
      WEFT_CTS_CASE(wait_before_signal_host),
      WEFT_CTS_CASE(wait_before_signal_other_thread),
      WEFT_CTS_CASE(multiple_waits_all_required),
      WEFT_CTS_CASE(signal_list_several_semaphores),
      WEFT_CTS_CASE(rapid_submissions_chained),
      WEFT_CTS_CASE(long_parked_chain_released_by_one_signal),
      WEFT_CTS_CASE(parked_op_keeps_resources_alive),
      WEFT_CTS_CASE(concurrent_submitters),
      WEFT_CTS_CASE(failed_wait_fails_signals_with_message),
      WEFT_CTS_CASE(wait_on_already_failed_semaphore),
      WEFT_CTS_CASE(failure_propagates_down_a_chain),
  };
  return weft_cts_run("queue_ordering", tests, WEFT_CTS_COUNT(tests), argc,
                      argv);
}
