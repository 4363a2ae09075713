// Tests for semaphore payloads (src/hal/semaphore_impl.h): a semaphore whose
// value lives elsewhere (here a word a pretend device writes) keeps every
// rule of the base (timepoints, sticky failure, host waits) while its
// vtable does what the payload does.
// cmocka needs these first.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
// clang-format off
#include <cmocka.h>
// clang-format on

#include <stdlib.h>
#include <string.h>

#include "base/atomics.h"
#include "hal/semaphore_impl.h"
#include "hal/wait_set.h"

#include "hal_test_util.h"

// A payload in a word "the device" writes, with counters of what the base
// asked of it.
typedef struct word_semaphore_t {
  weft_semaphore_t base;
  weft_atomic_uint64_t word;  // the payload
  weft_domain_t domain;       // the device that waits on it natively
  int signal_calls;
  int fail_calls;
  // The number of timepoints still registered when |fail| ran (the base
  // fires them first).
  bool base_failed_before_fail;
} word_semaphore_t;

static void word_destroy(weft_semaphore_t* base) {
  weft_semaphore_deinitialize(base);
  free(base);
}

static uint64_t word_query(weft_semaphore_t* base) {
  word_semaphore_t* semaphore = (word_semaphore_t*)base;
  const uint64_t value = weft_atomic_load(&semaphore->word,
                                          memory_order_acquire);
  // The device moved it without the base knowing: refresh the base.
  weft_semaphore_publish_value(base, value);
  return value;
}

static weft_status_t word_signal(weft_semaphore_t* base, uint64_t value) {
  word_semaphore_t* semaphore = (word_semaphore_t*)base;
  ++semaphore->signal_calls;
  weft_atomic_store(&semaphore->word, value, memory_order_release);
  weft_semaphore_publish_value(base, value);
  return WEFT_OK;
}

static void word_fail(weft_semaphore_t* base) {
  word_semaphore_t* semaphore = (word_semaphore_t*)base;
  ++semaphore->fail_calls;
  uint64_t value = 0;
  semaphore->base_failed_before_fail = weft_semaphore_peek(base, &value);
  // The failure value releases every device waiter.
  weft_atomic_store(&semaphore->word, UINT64_MAX, memory_order_release);
}

static bool word_is_native(const weft_semaphore_t* base,
                           weft_domain_t domain) {
  return ((const word_semaphore_t*)base)->domain == domain;
}

static const weft_semaphore_vtable_t kWordVtable = {
    .destroy = word_destroy,
    .query = word_query,
    .signal = word_signal,
    .fail = word_fail,
    .is_native = word_is_native,
};

static word_semaphore_t* word_create(uint64_t initial_value) {
  word_semaphore_t* semaphore = calloc(1, sizeof(*semaphore));
  assert_non_null(semaphore);
  weft_semaphore_initialize(&kWordVtable, weft_allocator_system(),
                            initial_value, &semaphore->base);
  atomic_init(&semaphore->word, initial_value);
  semaphore->domain = 7;
  return semaphore;
}

typedef struct fired_t {
  int count;
  weft_status_code_t code;
} fired_t;

static void record_fired(void* user_data, weft_timepoint_t* timepoint,
                         weft_status_t status) {
  (void)timepoint;
  fired_t* fired = (fired_t*)user_data;
  ++fired->count;
  fired->code = weft_status_code(status);
  weft_status_free(status);
}

static void query_refreshes_the_base_from_the_payload(void** state) {
  (void)state;
  word_semaphore_t* semaphore = word_create(0);
  fired_t fired = {0, WEFT_STATUS_OK};
  weft_timepoint_t timepoint = {.fn = record_fired, .user_data = &fired};
  weft_semaphore_register_timepoint(&semaphore->base, 3, &timepoint);
  // The device writes 5; nobody has told the base yet.
  weft_atomic_store(&semaphore->word, 5, memory_order_release);
  uint64_t peeked = 0;
  weft_semaphore_peek(&semaphore->base, &peeked);
  assert_int_equal(peeked, 0);
  assert_int_equal(fired.count, 0);
  uint64_t value = 0;
  ASSERT_OK(weft_semaphore_query(&semaphore->base, &value));
  assert_int_equal(value, 5);
  // The query published it: the timepoint fired and the base moved.
  assert_int_equal(fired.count, 1);
  assert_int_equal(fired.code, WEFT_STATUS_OK);
  weft_semaphore_peek(&semaphore->base, &peeked);
  assert_int_equal(peeked, 5);
  // A value seen twice (or behind) is published quietly.
  weft_semaphore_publish_value(&semaphore->base, 4);
  weft_semaphore_publish_value(&semaphore->base, 5);
  weft_semaphore_peek(&semaphore->base, &peeked);
  assert_int_equal(peeked, 5);
  weft_semaphore_release(&semaphore->base);
}

static void signal_goes_through_the_payload_after_the_base_checks(
    void** state) {
  (void)state;
  word_semaphore_t* semaphore = word_create(2);
  ASSERT_OK(weft_semaphore_signal(&semaphore->base, 4));
  assert_int_equal(semaphore->signal_calls, 1);
  assert_int_equal(weft_atomic_load(&semaphore->word, memory_order_acquire),
                   4);
  // Behind the value: refused by the base, the payload never asked.
  weft_status_t status = weft_semaphore_signal(&semaphore->base, 3);
  assert_int_equal(weft_status_code(status), WEFT_STATUS_INVALID_ARGUMENT);
  weft_status_free(status);
  assert_int_equal(semaphore->signal_calls, 1);
  weft_semaphore_release(&semaphore->base);
}

static void failure_fires_timepoints_then_reaches_the_payload(void** state) {
  (void)state;
  word_semaphore_t* semaphore = word_create(0);
  fired_t fired = {0, WEFT_STATUS_OK};
  weft_timepoint_t timepoint = {.fn = record_fired, .user_data = &fired};
  weft_semaphore_register_timepoint(&semaphore->base, 1, &timepoint);
  weft_semaphore_fail(&semaphore->base,
                      WEFT_STATUS(ABORTED, "the device lost its context"));
  assert_int_equal(fired.count, 1);
  assert_int_equal(fired.code, WEFT_STATUS_ABORTED);
  assert_int_equal(semaphore->fail_calls, 1);
  assert_true(semaphore->base_failed_before_fail);
  assert_int_equal(weft_atomic_load(&semaphore->word, memory_order_acquire),
                   UINT64_MAX);
  // A second failure is dropped by the base: the payload hears once.
  weft_semaphore_fail(&semaphore->base, WEFT_STATUS(INTERNAL, "later"));
  assert_int_equal(semaphore->fail_calls, 1);
  // The failure value in the payload never reads as a reached value: the
  // base's failure wins.
  uint64_t value = 0;
  weft_status_t status = weft_semaphore_query(&semaphore->base, &value);
  assert_int_equal(weft_status_code(status), WEFT_STATUS_ABORTED);
  weft_status_free(status);
  weft_semaphore_release(&semaphore->base);
}

// A host wait is the base's (its value, notification and timepoints): a
// payload the device moves reaches it once the driver publishes what
// moved, alone, in a list, or mixed with a host semaphore.
static void host_waits_see_published_values(void** state) {
  (void)state;
  word_semaphore_t* a = word_create(0);
  word_semaphore_t* b = word_create(0);
  weft_atomic_store(&a->word, 2, memory_order_release);
  weft_atomic_store(&b->word, 9, memory_order_release);
  weft_semaphore_publish_value(&a->base, 2);
  weft_semaphore_publish_value(&b->base, 9);
  ASSERT_OK(weft_semaphore_wait(&a->base, 2, weft_timeout_relative(0)));
  weft_semaphore_t* semaphores[2] = {&a->base, &b->base};
  uint64_t values[2] = {2, 9};
  weft_semaphore_list_t list = {2, semaphores, values};
  ASSERT_OK(weft_semaphore_list_wait(WEFT_WAIT_MODE_ALL, list,
                                     weft_timeout_relative(0)));
  weft_semaphore_t* host = NULL;
  ASSERT_OK(weft_semaphore_create(weft_allocator_system(), 1, &host));
  semaphores[1] = host;
  values[1] = 1;
  ASSERT_OK(weft_semaphore_list_wait(WEFT_WAIT_MODE_ALL, list,
                                     weft_timeout_relative(0)));
  // A value not yet reached times out, naming it.
  values[0] = 3;
  weft_status_t status = weft_semaphore_list_wait(WEFT_WAIT_MODE_ALL, list,
                                                  weft_timeout_relative(0));
  assert_int_equal(weft_status_code(status), WEFT_STATUS_DEADLINE_EXCEEDED);
  weft_status_free(status);
  weft_semaphore_release(host);
  weft_semaphore_release(&a->base);
  weft_semaphore_release(&b->base);
}

static void native_is_per_domain(void** state) {
  (void)state;
  word_semaphore_t* semaphore = word_create(0);
  assert_true(weft_semaphore_is_native(&semaphore->base, 7));
  assert_false(weft_semaphore_is_native(&semaphore->base, 8));
  weft_semaphore_t* host = NULL;
  ASSERT_OK(weft_semaphore_create(weft_allocator_system(), 0, &host));
  assert_false(weft_semaphore_is_native(host, WEFT_DOMAIN_HOST));
  weft_semaphore_release(host);
  weft_semaphore_release(&semaphore->base);
}

static void earliest_failure_in_failure_order_and_by_mask(void** state) {
  (void)state;
  weft_semaphore_t* semaphores[3] = {NULL, NULL, NULL};
  for (int i = 0; i < 3; ++i) {
    ASSERT_OK(weft_semaphore_create(weft_allocator_system(), 0,
                                    &semaphores[i]));
  }
  uint64_t values[3] = {1, 1, 1};
  const weft_semaphore_list_t list = {3, semaphores, values};
  assert_int_equal(weft_semaphore_list_earliest_failure(list), UINT32_MAX);
  // Entry 2 fails first, then entry 0: the earliest failure, not the
  // first entry, is the one reported.
  weft_semaphore_fail(semaphores[2], WEFT_STATUS(ABORTED, "first"));
  weft_semaphore_fail(semaphores[0], WEFT_STATUS(ABORTED, "second"));
  assert_int_equal(weft_semaphore_list_earliest_failure(list), 2);
  // Among entries 0 and 1 only: entry 0.
  assert_int_equal(weft_semaphore_list_earliest_failure_masked(list, 0x3), 0);
  // Among entry 1 only: none failed.
  assert_int_equal(weft_semaphore_list_earliest_failure_masked(list, 0x2),
                   UINT32_MAX);
  for (int i = 0; i < 3; ++i) weft_semaphore_release(semaphores[i]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(query_refreshes_the_base_from_the_payload),
      cmocka_unit_test(signal_goes_through_the_payload_after_the_base_checks),
      cmocka_unit_test(failure_fires_timepoints_then_reaches_the_payload),
      cmocka_unit_test(host_waits_see_published_values),
      cmocka_unit_test(native_is_per_domain),
      cmocka_unit_test(earliest_failure_in_failure_order_and_by_mask),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
