// CTS: host calls run by a queue. A blocking call runs once its waits are
// reached and its result signals (OK) or fails (an error) its semaphores; a
// non-blocking one signals before it runs and its result is dropped; a call
// returning DEFERRED signals later through the fence it took over; a call
// whose wait failed never runs, and one that asked is told why.
#include <stdio.h>
#include <string.h>

#include "base/atomics.h"
#include "base/thread.h"
#include "cts.h"

#define MS (1000ll * 1000ll)
#define ANY WEFT_QUEUE_AFFINITY_ANY

//===----------------------------------------------------------------------===//
// A probe that records what the call saw
//===----------------------------------------------------------------------===//

typedef struct host_call_probe_t {
  // The op's first signal semaphore (the call reads its value).
  weft_semaphore_t* signal;
  uint64_t signal_value;
  // Signalled to 1 by the call once it has recorded what it saw: a wait on
  // it publishes the fields below to the test body (the call may run on a
  // queue thread, and a non-blocking one after its op signalled).
  weft_semaphore_t* called;
  // Counts the calls: more than one is a bug the cases check for.
  weft_atomic_int32_t call_count;
  uint64_t seen_value;
  uint64_t args[4];
  uint32_t fence_count;
  weft_device_t* device;
  // DEFERRED mode: a thread signals |fence| once the test signals
  // |release|.
  weft_fence_t* fence;
  weft_thread_t* thread;
  weft_semaphore_t* release;
  weft_status_t result;  // returned by the call (ownership passes)
} host_call_probe_t;

static void probe_initialize(weft_cts_t* cts, host_call_probe_t* probe) {
  memset(probe, 0, sizeof(*probe));
  probe->signal = weft_cts_create_semaphore(cts, 0);
  probe->signal_value = 1;
  probe->called = weft_cts_create_semaphore(cts, 0);
  probe->release = weft_cts_create_semaphore(cts, 0);
}

static void probe_deinitialize(host_call_probe_t* probe) {
  weft_semaphore_release(probe->signal);
  weft_semaphore_release(probe->called);
  weft_semaphore_release(probe->release);
}

// The last thing a call does with |probe|: count itself and signal
// |called|, after which the test may let go of the probe (the call holds
// its own reference to the semaphore meanwhile).
static void probe_mark_called(host_call_probe_t* probe) {
  weft_semaphore_t* called = probe->called;
  weft_semaphore_retain(called);
  weft_atomic_fetch_add(&probe->call_count, 1, memory_order_relaxed);
  // A second call finds it at 1 already: call_count says so.
  weft_status_ignore(weft_semaphore_signal(called, 1));
  weft_semaphore_release(called);
}

static weft_status_t probe_host_call(void* user_data, const uint64_t args[4],
                                     const weft_host_call_context_t* context) {
  host_call_probe_t* probe = (host_call_probe_t*)user_data;
  probe->seen_value = weft_cts_query_value(probe->signal);
  memcpy(probe->args, args, sizeof(probe->args));
  probe->fence_count = context->signal_list.count;
  probe->device = context->device;
  weft_status_t result = probe->result;
  probe->result = WEFT_OK;
  probe_mark_called(probe);
  return result;
}

// The number of calls seen so far.
static int32_t call_count(host_call_probe_t* probe) {
  return weft_atomic_load(&probe->call_count, memory_order_relaxed);
}

//===----------------------------------------------------------------------===//
// Cases
//===----------------------------------------------------------------------===//

static void host_call_blocking_signals_after(void** state) {
  weft_cts_t* cts = *state;
  host_call_probe_t probe;
  probe_initialize(cts, &probe);
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
  probe_deinitialize(&probe);
  weft_semaphore_release(gate);
}

static void host_call_non_blocking_signals_before(void** state) {
  weft_cts_t* cts = *state;
  host_call_probe_t probe;
  probe_initialize(cts, &probe);
  // The call's error is dropped in this mode.
  probe.result = WEFT_STATUS(INTERNAL, "ignored");
  uint64_t one = 1;
  WEFT_ASSERT_OK(weft_device_queue_host_call(
      cts->device, ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&probe.signal, &one), probe_host_call, &probe, NULL,
      WEFT_HOST_CALL_FLAG_NON_BLOCKING));
  WEFT_ASSERT_OK(weft_cts_wait(probe.signal, 1));
  // On a threaded driver the call may still be running after the signal.
  WEFT_ASSERT_OK(weft_cts_wait(probe.called, 1));
  assert_int_equal(call_count(&probe), 1);
  assert_int_equal(probe.seen_value, 1);  // signalled before the call ran
  for (int i = 0; i < 4; ++i) assert_int_equal(probe.args[i], 0);  // NULL
  probe_deinitialize(&probe);
}

// Signals the fence the deferred call took over once the test says so
// (failing it instead should the test not say so within 10 s).
static int deferred_signaller_main(void* user_data) {
  host_call_probe_t* probe = (host_call_probe_t*)user_data;
  weft_status_t status = weft_cts_wait(probe->release, 1);
  if (weft_status_is_ok(status)) {
    status = weft_fence_signal(probe->fence);
  }
  if (!weft_status_is_ok(status)) weft_fence_fail(probe->fence, status);
  weft_fence_release(probe->fence);
  return 0;
}

static weft_status_t deferred_host_call(
    void* user_data, const uint64_t args[4],
    const weft_host_call_context_t* context) {
  host_call_probe_t* probe = (host_call_probe_t*)user_data;
  weft_status_t status = weft_fence_create_from_list(
      context->signal_list, weft_allocator_system(), &probe->fence);
  if (!weft_status_is_ok(status)) return status;
  weft_thread_params_t params = {.name = "cts-deferred", .cpu = -1};
  status = weft_thread_create(deferred_signaller_main, probe, &params,
                              weft_allocator_system(), &probe->thread);
  if (!weft_status_is_ok(status)) {
    weft_fence_release(probe->fence);
    return status;
  }
  probe_mark_called(probe);
  return weft_status_from_code(WEFT_STATUS_DEFERRED);
}

static void host_call_deferred_signals_later(void** state) {
  weft_cts_t* cts = *state;
  host_call_probe_t probe;
  probe_initialize(cts, &probe);
  weft_semaphore_t* second = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* signals[2] = {probe.signal, second};
  uint64_t values[2] = {3, 4};
  WEFT_ASSERT_OK(weft_device_queue_host_call(
      cts->device, ANY, weft_semaphore_list_empty(),
      weft_cts_list(2, signals, values), deferred_host_call, &probe, NULL,
      WEFT_HOST_CALL_FLAG_NONE));
  // Wait for the call to have happened, then check nothing was signalled.
  WEFT_ASSERT_OK(weft_cts_wait(probe.called, 1));
  assert_non_null(probe.thread);
  WEFT_ASSERT_STATUS(
      DEADLINE_EXCEEDED,
      weft_semaphore_wait(probe.signal, 3, weft_timeout_relative(5 * MS)));
  assert_int_equal(weft_cts_query_value(second), 0);
  // Now the thread signals the fence.
  WEFT_ASSERT_OK(weft_semaphore_signal(probe.release, 1));
  WEFT_ASSERT_OK(weft_cts_wait(probe.signal, 3));
  WEFT_ASSERT_OK(weft_cts_wait(second, 4));
  weft_thread_join(probe.thread);
  assert_int_equal(call_count(&probe), 1);
  probe_deinitialize(&probe);
  weft_semaphore_release(second);
}

static void host_call_error_fails_signals(void** state) {
  weft_cts_t* cts = *state;
  host_call_probe_t probe;
  probe_initialize(cts, &probe);
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
  assert_int_equal(call_count(&probe), 1);
  probe_deinitialize(&probe);
  weft_semaphore_release(second);
}

static void host_call_not_run_after_failed_wait(void** state) {
  weft_cts_t* cts = *state;
  host_call_probe_t probe;
  probe_initialize(cts, &probe);
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
  probe_deinitialize(&probe);
  weft_semaphore_release(gate);
}

// WEFT_HOST_CALL_FLAG_TOLD_IF_NOT_RUN: the call learns why it will not run.
typedef struct told_probe_t {
  weft_atomic_int32_t runs;
  weft_atomic_int32_t tells;
  weft_status_code_t code;
  char message[256];
} told_probe_t;

static weft_status_t told_host_call(void* user_data, const uint64_t args[4],
                                    const weft_host_call_context_t* context) {
  (void)args;
  told_probe_t* probe = (told_probe_t*)user_data;
  if (weft_status_is_ok(context->not_run_status)) {
    weft_atomic_fetch_add(&probe->runs, 1, memory_order_relaxed);
    return WEFT_OK;
  }
  probe->code = weft_status_code(context->not_run_status);
  snprintf(probe->message, sizeof(probe->message), "%s",
           weft_status_message(context->not_run_status));
  weft_atomic_fetch_add(&probe->tells, 1, memory_order_release);
  // Ignored: the queue fails the signals with the not-run status.
  return WEFT_STATUS(INTERNAL, "a told call's result must be ignored");
}

static void host_call_told_when_its_wait_fails(void** state) {
  weft_cts_t* cts = *state;
  told_probe_t probe;
  memset(&probe, 0, sizeof(probe));
  weft_semaphore_t* gate = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* signal = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1;
  WEFT_ASSERT_OK(weft_device_queue_host_call(
      cts->device, ANY, weft_cts_list1(&gate, &one),
      weft_cts_list1(&signal, &one), told_host_call, &probe, NULL,
      WEFT_HOST_CALL_FLAG_TOLD_IF_NOT_RUN));
  weft_semaphore_fail(gate, WEFT_STATUS(ABORTED, "the upload was aborted"));
  // The signal fails with the wait's failure, not the call's result.
  weft_cts_assert_status_message(weft_cts_wait(signal, 1),
                                 WEFT_STATUS_ABORTED, "the upload was aborted");
  assert_int_equal(
      weft_atomic_load(&probe.tells, memory_order_acquire), 1);
  assert_int_equal(weft_atomic_load(&probe.runs, memory_order_relaxed), 0);
  assert_int_equal(probe.code, WEFT_STATUS_ABORTED);
  assert_non_null(strstr(probe.message, "the upload was aborted"));
  weft_semaphore_release(gate);
  weft_semaphore_release(signal);
}

static void host_call_told_when_the_device_goes_first(void** state) {
  weft_cts_t* cts = *state;
  told_probe_t probe;
  memset(&probe, 0, sizeof(probe));
  weft_semaphore_t* gate = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* signal = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1;
  WEFT_ASSERT_OK(weft_device_queue_host_call(
      cts->device, ANY, weft_cts_list1(&gate, &one),
      weft_cts_list1(&signal, &one), told_host_call, &probe, NULL,
      WEFT_HOST_CALL_FLAG_TOLD_IF_NOT_RUN));
  // Releasing the device cancels the waiting op before it returns.
  weft_device_release(cts->device);
  cts->device = NULL;
  assert_int_equal(weft_atomic_load(&probe.tells, memory_order_acquire), 1);
  assert_int_equal(weft_atomic_load(&probe.runs, memory_order_relaxed), 0);
  assert_int_equal(probe.code, WEFT_STATUS_CANCELLED);
  WEFT_ASSERT_STATUS(CANCELLED, weft_cts_wait(signal, 1));
  weft_semaphore_release(gate);
  weft_semaphore_release(signal);
}

static void host_call_told_flag_runs_normally(void** state) {
  weft_cts_t* cts = *state;
  told_probe_t probe;
  memset(&probe, 0, sizeof(probe));
  weft_semaphore_t* signal = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1;
  WEFT_ASSERT_OK(weft_device_queue_host_call(
      cts->device, ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&signal, &one), told_host_call, &probe, NULL,
      WEFT_HOST_CALL_FLAG_TOLD_IF_NOT_RUN));
  WEFT_ASSERT_OK(weft_cts_wait(signal, 1));
  assert_int_equal(weft_atomic_load(&probe.runs, memory_order_relaxed), 1);
  assert_int_equal(weft_atomic_load(&probe.tells, memory_order_acquire), 0);
  weft_semaphore_release(signal);
}

int main(int argc, char** argv) {
  const struct CMUnitTest tests[] = {
      WEFT_CTS_CASE(host_call_blocking_signals_after),
      WEFT_CTS_CASE(host_call_non_blocking_signals_before),
      WEFT_CTS_CASE(host_call_deferred_signals_later),
      WEFT_CTS_CASE(host_call_error_fails_signals),
      WEFT_CTS_CASE(host_call_not_run_after_failed_wait),
      WEFT_CTS_CASE(host_call_told_when_its_wait_fails),
      WEFT_CTS_CASE(host_call_told_when_the_device_goes_first),
      WEFT_CTS_CASE(host_call_told_flag_runs_normally),
  };
  return weft_cts_run("queue_host_call", tests, WEFT_CTS_COUNT(tests), argc,
                      argv);
}
