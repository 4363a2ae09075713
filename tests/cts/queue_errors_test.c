// CTS: how queue operations report errors.
//
// Validation that needs no waiting (ranges, patterns, usages, lists,
// affinity, arguments) fails synchronously naming the op and leaves the
// signal semaphores untouched. A failure found while an op runs carries
// where it happened (the op instance: its waits and signals, its queue and
// device), and every op downstream adds its own link after the original
// message. An allocation failing anywhere in a pipeline fails a submit or
// the signals, and never hangs or leaks.
#include <stdio.h>
#include <string.h>

#include "cts.h"

#define ANY WEFT_QUEUE_AFFINITY_ANY

//===----------------------------------------------------------------------===//
// Synchronous validation
//===----------------------------------------------------------------------===//

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
  assert_int_equal(weft_cts_query_value(signal), 0);  // untouched
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
  assert_int_equal(weft_cts_query_value(signal), 0);  // untouched
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
  assert_int_equal(weft_cts_query_value(signal), 0);  // untouched
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
  // Only buffers queue_alloca returned are deallocated, on every driver.
  weft_buffer_t* heap = weft_cts_allocate_buffer(cts, 16);
  weft_cts_assert_status_contains(
      weft_device_queue_dealloca(cts->device, ANY, weft_semaphore_list_empty(),
                                 weft_cts_list1(&signal, &one), heap),
      WEFT_STATUS_INVALID_ARGUMENT, "not returned by queue_alloca");
  weft_buffer_release(heap);
  assert_int_equal(weft_cts_query_value(signal), 0);  // untouched
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
  assert_int_equal(weft_cts_query_value(signal), 0);  // untouched
  weft_semaphore_release(signal);
}

//===----------------------------------------------------------------------===//
// Errors found while running
//===----------------------------------------------------------------------===//

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
  weft_cts_queue_fill_u32(cts, weft_cts_list1(&s, &two),
                          weft_cts_list1(&filled, &one), buffer, 0, 64, 5);
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
  if (weft_status_is_ok(status)) {
    status = weft_device_queue_host_call(
        device, ANY, weft_cts_list1(&s, &v[1]), weft_cts_list1(&s, &v[2]),
        noop_host_call, NULL, NULL, WEFT_HOST_CALL_FLAG_NONE);
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
      WEFT_CTS_CASE(validation_fill_out_of_range),
      WEFT_CTS_CASE(validation_fill_bad_pattern),
      WEFT_CTS_CASE(validation_missing_usage),
      WEFT_CTS_CASE(validation_copy_overlap_and_range),
      WEFT_CTS_CASE(validation_lists_affinity_and_args),
      WEFT_CTS_CASE(validation_host_call),
      WEFT_CTS_CASE(errors_name_op_queue_and_device),
      WEFT_CTS_CASE(allocation_failures_never_hang_or_leak),
  };
  return weft_cts_run("queue_errors", tests, WEFT_CTS_COUNT(tests), argc, argv);
}
