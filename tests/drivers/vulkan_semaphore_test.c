// vulkan semaphores on a device that allows a timeline to move at most
// 1000 at once (WEFT_VULKAN_MAX_TIMELINE_DIFFERENCE=1000, set by the test's
// environment: Mesa's and NVIDIA's devices allow any step, some drivers
// only 2^31 - 1). A host signal or an op's signal further ahead is refused
// with INVALID_ARGUMENT naming the limit, never handed to Vulkan (which
// forbids it); a failure still reaches what waits. Runs on the CTS's
// device (--driver "vulkan?validation=on"; skipped without one).
// setjmp.h, stdarg.h and stddef.h must come before cmocka.h.
// clang-format off
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
// clang-format on

#include "cts.h"
#include "weft/weft.h"

#define ANY WEFT_QUEUE_AFFINITY_ANY

static void the_limit_is_the_devices(void** state) {
  weft_cts_t* cts = *state;
  int64_t limit = 0;
  WEFT_ASSERT_OK(weft_device_query_i64(
      cts->device, "vulkan.max_timeline_difference", &limit));
  assert_int_equal(limit, 1000);
}

static void host_signals_within_the_limit(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  WEFT_ASSERT_OK(weft_semaphore_signal(semaphore, 1000));
  weft_cts_assert_status_contains(weft_semaphore_signal(semaphore, 2001),
                                  WEFT_STATUS_INVALID_ARGUMENT,
                                  "maxTimelineSemaphoreValueDifference (1000)");
  // Refused, not applied: the value is where it was, and a signal within
  // the limit still works.
  uint64_t value = 0;
  WEFT_ASSERT_OK(weft_semaphore_query(semaphore, &value));
  assert_int_equal(value, 1000);
  WEFT_ASSERT_OK(weft_semaphore_signal(semaphore, 2000));
  weft_semaphore_release(semaphore);
}

static void op_signal_past_the_limit_fails_the_op(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 5);
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 16);
  const uint32_t pattern = 9;
  const uint64_t far = 5 + 1001;
  WEFT_ASSERT_OK(weft_device_queue_fill(cts->device, ANY,
                                        weft_semaphore_list_empty(),
                                        weft_cts_list1(&semaphore, &far),
                                        buffer, 0, 16, &pattern, 4));
  weft_cts_assert_status_contains_both(
      weft_cts_wait(semaphore, far), WEFT_STATUS_INVALID_ARGUMENT,
      "1001 above its value 5", "queue_fill");
  weft_buffer_release(buffer);
  weft_semaphore_release(semaphore);
}

static void failure_with_a_small_step(void** state) {
  // A signal is pending on the GPU (behind a host gate) and an op waits
  // for a value nothing signals; the host fails the semaphore: once the
  // pending signal has run, the failure value (at most 1000 above it) is
  // written, and the waiting op fails with the semaphore's status.
  weft_cts_t* cts = *state;
  weft_semaphore_t* gate = NULL;
  WEFT_ASSERT_OK(weft_semaphore_create(cts->allocator, 0, &gate));
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* after = weft_cts_create_semaphore(cts, 0);
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 16);
  const uint32_t pattern = 3;
  const uint64_t one = 1;
  const uint64_t two = 2;
  // Signals |semaphore| = 1 on the GPU once the host opens the gate.
  WEFT_ASSERT_OK(weft_device_queue_fill(cts->device, ANY,
                                        weft_cts_list1(&gate, &one),
                                        weft_cts_list1(&semaphore, &one),
                                        buffer, 0, 16, &pattern, 4));
  // Waits for |semaphore| = 2, which nothing signals.
  WEFT_ASSERT_OK(weft_device_queue_fill(cts->device, ANY,
                                        weft_cts_list1(&semaphore, &two),
                                        weft_cts_list1(&after, &one), buffer,
                                        0, 16, &pattern, 4));
  weft_semaphore_fail(semaphore,
                      WEFT_STATUS(ABORTED, "the producer gave up"));
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  weft_cts_assert_status_contains(weft_cts_wait(after, 1),
                                  WEFT_STATUS_ABORTED, "the producer gave up");
  weft_buffer_release(buffer);
  weft_semaphore_release(after);
  weft_semaphore_release(semaphore);
  weft_semaphore_release(gate);
}

int main(int argc, char** argv) {
  const struct CMUnitTest tests[] = {
      WEFT_CTS_CASE(the_limit_is_the_devices),
      WEFT_CTS_CASE(host_signals_within_the_limit),
      WEFT_CTS_CASE(op_signal_past_the_limit_fails_the_op),
      WEFT_CTS_CASE(failure_with_a_small_step),
  };
  return weft_cts_run("vulkan_semaphore", tests,
                      sizeof(tests) / sizeof(tests[0]), argc, argv);
}
