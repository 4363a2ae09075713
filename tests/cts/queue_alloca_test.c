// CTS: transient buffers from queue_alloca, released by queue_dealloca.
//
// The handle exists as soon as queue_alloca returns; its memory only
// between the alloca and the dealloca running. Use after dealloca: the
// handle stays valid and its range is known, so an operation touching it is
// accepted (OK) and fails its signal semaphores with FAILED_PRECONDITION
// when it runs, whether or not the dealloca has already run at submit. The
// same holds for use before the alloca ran. (Whether memory is present is a
// property of the moment the operation runs, not of the moment it is
// submitted.) Command buffers and pipelines over several queues: see the
// transient suite.
#include "cts.h"

#define ANY WEFT_QUEUE_AFFINITY_ANY

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
  weft_cts_queue_fill_u32(cts, weft_cts_list1(&s, &v[0]),
                          weft_cts_list1(&s, &v[1]), buffer, 0, 256,
                          0x600DF00Du);
  WEFT_ASSERT_OK(weft_cts_wait(s, 2));
  weft_cts_assert_words(cts, buffer, 0, 64, 0x600DF00Du);
  WEFT_ASSERT_OK(weft_device_queue_dealloca(cts->device, ANY,
                                            weft_cts_list1(&s, &v[1]),
                                            weft_cts_list1(&s, &v[2]), buffer));
  WEFT_ASSERT_OK(weft_cts_wait(s, 3));
  // Using it after the dealloca is FAILED_PRECONDITION.
  weft_cts_assert_no_memory(cts, buffer, "after its dealloca ran");
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
  weft_cts_assert_no_memory(cts, buffer, "before its alloca ran");
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  WEFT_ASSERT_OK(weft_cts_wait(ready, 1));
  uint32_t word = 0;
  weft_cts_read_buffer(cts, buffer, 0, &word, 4);
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
    weft_cts_queue_fill_u32(cts, weft_cts_list1(&s, &v[1]),
                            weft_cts_list1(&s, &v[2]), buffer, 0, 64,
                            0x1000u + round);
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
  weft_cts_queue_fill_u32(cts, weft_cts_list1(&s, &two),
                          weft_cts_list1(&signal, &one), buffer, 0, 64, 5);
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

int main(int argc, char** argv) {
  const struct CMUnitTest tests[] = {
      WEFT_CTS_CASE(alloca_use_dealloca),
      WEFT_CTS_CASE(alloca_parked_commits_when_run),
      WEFT_CTS_CASE(alloca_dealloca_cycles),
      WEFT_CTS_CASE(use_after_dealloca_fails_signals),
  };
  return weft_cts_run("queue_alloca", tests, WEFT_CTS_COUNT(tests), argc, argv);
}
