// CTS: fences (sets of (semaphore, value) deduplicated by semaphore).
#include <string.h>

#include "base/thread.h"
#include "cts.h"

#define MS (1000ll * 1000ll)

static weft_fence_t* create_fence(weft_cts_t* cts) {
  weft_fence_t* fence = NULL;
  WEFT_ASSERT_OK(weft_fence_create(0, cts->allocator, &fence));
  return fence;
}

// Returns the value the fence holds for |semaphore| (asserting it is there).
static uint64_t fence_value_of(weft_fence_t* fence,
                               weft_semaphore_t* semaphore) {
  weft_semaphore_list_t list = weft_fence_as_list(fence);
  for (uint32_t i = 0; i < list.count; ++i) {
    if (list.semaphores[i] == semaphore) return list.values[i];
  }
  fail_msg("semaphore %p is not in the fence", (void*)semaphore);
  return 0;
}

static void empty_fence_query_and_wait(void** state) {
  weft_cts_t* cts = *state;
  weft_fence_t* fence = create_fence(cts);
  assert_int_equal(weft_fence_count(fence), 0);
  WEFT_ASSERT_OK(weft_fence_query(fence));
  WEFT_ASSERT_OK(weft_fence_wait(fence, weft_timeout_immediate()));
  WEFT_ASSERT_OK(weft_fence_signal(fence));
  weft_semaphore_list_t list = weft_fence_as_list(fence);
  assert_int_equal(list.count, 0);
  weft_fence_release(fence);
}

static void null_fence_is_reached(void** state) {
  assert_int_equal(weft_fence_count(NULL), 0);
  WEFT_ASSERT_OK(weft_fence_query(NULL));
  WEFT_ASSERT_OK(weft_fence_wait(NULL, weft_timeout_immediate()));
  WEFT_ASSERT_OK(weft_fence_wait(NULL, weft_timeout_infinite()));
  assert_int_equal(weft_fence_as_list(NULL).count, 0);
  // Release/retain of NULL are no-ops.
  weft_fence_retain(NULL);
  weft_fence_release(NULL);
}

static void insert_dedupes_keeping_max(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  weft_fence_t* fence = create_fence(cts);
  WEFT_ASSERT_OK(weft_fence_insert(fence, semaphore, 5));
  WEFT_ASSERT_OK(weft_fence_insert(fence, semaphore, 3));
  assert_int_equal(weft_fence_count(fence), 1);
  assert_int_equal(fence_value_of(fence, semaphore), 5);
  WEFT_ASSERT_OK(weft_fence_insert(fence, semaphore, 9));
  assert_int_equal(weft_fence_count(fence), 1);
  assert_int_equal(fence_value_of(fence, semaphore), 9);
  weft_fence_release(fence);
  weft_semaphore_release(semaphore);
}

static void insert_several(void** state) {
  weft_cts_t* cts = *state;
  enum { kCount = 11 };  // past any small initial capacity
  weft_semaphore_t* semaphores[kCount];
  weft_fence_t* fence = create_fence(cts);
  for (int i = 0; i < kCount; ++i) {
    semaphores[i] = weft_cts_create_semaphore(cts, 0);
    WEFT_ASSERT_OK(weft_fence_insert(fence, semaphores[i], (uint64_t)i + 1));
  }
  assert_int_equal(weft_fence_count(fence), kCount);
  for (int i = 0; i < kCount; ++i) {
    assert_int_equal(fence_value_of(fence, semaphores[i]), (uint64_t)i + 1);
  }
  // The fence holds its own references.
  for (int i = 0; i < kCount; ++i) weft_semaphore_release(semaphores[i]);
  WEFT_ASSERT_OK(weft_fence_signal(fence));
  WEFT_ASSERT_OK(weft_fence_query(fence));
  weft_fence_release(fence);
}

static void create_at_holds_one_entry(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  weft_fence_t* fence = NULL;
  WEFT_ASSERT_OK(weft_fence_create_at(semaphore, 4, cts->allocator, &fence));
  assert_int_equal(weft_fence_count(fence), 1);
  assert_int_equal(fence_value_of(fence, semaphore), 4);
  weft_fence_release(fence);
  weft_semaphore_release(semaphore);
}

static void create_from_list_keeps_max_per_semaphore(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* a = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* b = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* semaphores[3] = {a, b, a};
  uint64_t values[3] = {7, 2, 3};
  weft_semaphore_list_t list = {3, semaphores, values};
  weft_fence_t* fence = NULL;
  WEFT_ASSERT_OK(weft_fence_create_from_list(list, cts->allocator, &fence));
  assert_int_equal(weft_fence_count(fence), 2);
  assert_int_equal(fence_value_of(fence, a), 7);
  assert_int_equal(fence_value_of(fence, b), 2);
  // The fence holds its own references.
  weft_semaphore_release(a);
  weft_semaphore_release(b);
  WEFT_ASSERT_OK(weft_fence_signal(fence));
  WEFT_ASSERT_OK(weft_fence_query(fence));
  weft_fence_release(fence);
  // An empty list makes an empty fence.
  WEFT_ASSERT_OK(weft_fence_create_from_list(weft_semaphore_list_empty(),
                                             cts->allocator, &fence));
  assert_int_equal(weft_fence_count(fence), 0);
  weft_fence_release(fence);
}

static void extend_merges_entries(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* a = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* b = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* c = weft_cts_create_semaphore(cts, 0);
  weft_fence_t* fence = create_fence(cts);
  weft_fence_t* other = create_fence(cts);
  WEFT_ASSERT_OK(weft_fence_insert(fence, a, 1));
  WEFT_ASSERT_OK(weft_fence_insert(fence, b, 8));
  WEFT_ASSERT_OK(weft_fence_insert(other, b, 2));
  WEFT_ASSERT_OK(weft_fence_insert(other, c, 3));
  WEFT_ASSERT_OK(weft_fence_insert(other, a, 6));
  WEFT_ASSERT_OK(weft_fence_extend(fence, other));
  WEFT_ASSERT_OK(weft_fence_extend(fence, NULL));
  assert_int_equal(weft_fence_count(fence), 3);
  assert_int_equal(fence_value_of(fence, a), 6);
  assert_int_equal(fence_value_of(fence, b), 8);
  assert_int_equal(fence_value_of(fence, c), 3);
  assert_int_equal(weft_fence_count(other), 3);  // untouched
  assert_int_equal(fence_value_of(other, b), 2);
  weft_fence_release(other);
  weft_fence_release(fence);
  weft_semaphore_release(a);
  weft_semaphore_release(b);
  weft_semaphore_release(c);
}

static void join_dedupes(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* a = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* b = weft_cts_create_semaphore(cts, 0);
  weft_fence_t* fences[4] = {create_fence(cts), NULL, create_fence(cts),
                             create_fence(cts)};
  WEFT_ASSERT_OK(weft_fence_insert(fences[0], a, 3));
  WEFT_ASSERT_OK(weft_fence_insert(fences[2], a, 7));
  WEFT_ASSERT_OK(weft_fence_insert(fences[2], b, 1));
  WEFT_ASSERT_OK(weft_fence_insert(fences[3], b, 4));
  weft_fence_t* joined = NULL;
  WEFT_ASSERT_OK(weft_fence_join(4, fences, cts->allocator, &joined));
  assert_non_null(joined);
  assert_int_equal(weft_fence_count(joined), 2);
  assert_int_equal(fence_value_of(joined, a), 7);
  assert_int_equal(fence_value_of(joined, b), 4);
  for (int i = 0; i < 4; ++i) weft_fence_release(fences[i]);
  // The join holds its own references.
  weft_semaphore_release(a);
  weft_semaphore_release(b);
  weft_cts_assert_status_contains(weft_fence_query(joined),
                                  WEFT_STATUS_DEFERRED, NULL);
  WEFT_ASSERT_OK(weft_fence_signal(joined));
  WEFT_ASSERT_OK(weft_fence_query(joined));
  weft_fence_release(joined);
}

static void join_of_empties_is_null(void** state) {
  weft_cts_t* cts = *state;
  weft_fence_t* fences[3] = {create_fence(cts), NULL, create_fence(cts)};
  weft_fence_t* joined = (weft_fence_t*)(uintptr_t)1;
  WEFT_ASSERT_OK(weft_fence_join(3, fences, cts->allocator, &joined));
  assert_null(joined);
  WEFT_ASSERT_OK(weft_fence_join(0, NULL, cts->allocator, &joined));
  assert_null(joined);
  weft_fence_release(fences[0]);
  weft_fence_release(fences[2]);
}

static void query_deferred_then_ok_after_signal(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* a = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* b = weft_cts_create_semaphore(cts, 5);
  weft_fence_t* fence = create_fence(cts);
  WEFT_ASSERT_OK(weft_fence_insert(fence, a, 2));
  WEFT_ASSERT_OK(weft_fence_insert(fence, b, 5));  // already reached
  WEFT_ASSERT_STATUS(DEFERRED, weft_fence_query(fence));
  WEFT_ASSERT_OK(weft_semaphore_signal(a, 1));
  WEFT_ASSERT_STATUS(DEFERRED, weft_fence_query(fence));
  WEFT_ASSERT_OK(weft_semaphore_signal(a, 2));
  WEFT_ASSERT_OK(weft_fence_query(fence));
  WEFT_ASSERT_OK(weft_fence_wait(fence, weft_timeout_immediate()));
  weft_fence_release(fence);
  weft_semaphore_release(a);
  weft_semaphore_release(b);
}

static void signal_then_query_ok(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* a = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* b = weft_cts_create_semaphore(cts, 0);
  weft_fence_t* fence = create_fence(cts);
  WEFT_ASSERT_OK(weft_fence_insert(fence, a, 3));
  WEFT_ASSERT_OK(weft_fence_insert(fence, b, 1));
  WEFT_ASSERT_OK(weft_fence_signal(fence));
  WEFT_ASSERT_OK(weft_fence_query(fence));
  uint64_t value = 0;
  WEFT_ASSERT_OK(weft_semaphore_query(a, &value));
  assert_int_equal(value, 3);
  WEFT_ASSERT_OK(weft_semaphore_query(b, &value));
  assert_int_equal(value, 1);
  weft_fence_release(fence);
  weft_semaphore_release(a);
  weft_semaphore_release(b);
}

static void wait_times_out(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* a = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_set_name(a, "fence-entry");
  weft_fence_t* fence = create_fence(cts);
  WEFT_ASSERT_OK(weft_fence_insert(fence, a, 1));
  weft_time_t start = weft_time_now();
  weft_cts_assert_status_contains(
      weft_fence_wait(fence, weft_timeout_relative(15 * MS)),
      WEFT_STATUS_DEADLINE_EXCEEDED, "'fence-entry'");
  assert_true(weft_time_now() - start >= 15 * MS);
  WEFT_ASSERT_STATUS(DEADLINE_EXCEEDED,
                     weft_fence_wait(fence, weft_timeout_immediate()));
  weft_fence_release(fence);
  weft_semaphore_release(a);
}

typedef struct fence_signaller_t {
  weft_fence_t* fence;
  weft_status_t status;
} fence_signaller_t;

static int fence_signaller_main(void* user_data) {
  fence_signaller_t* signaller = (fence_signaller_t*)user_data;
  weft_sleep_until(weft_time_now() + 10 * MS);
  signaller->status = weft_fence_signal(signaller->fence);
  return 0;
}

static void wait_satisfied_by_other_thread(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* a = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* b = weft_cts_create_semaphore(cts, 0);
  weft_fence_t* fence = create_fence(cts);
  WEFT_ASSERT_OK(weft_fence_insert(fence, a, 1));
  WEFT_ASSERT_OK(weft_fence_insert(fence, b, 2));
  fence_signaller_t signaller = {fence, WEFT_OK};
  weft_thread_t* thread = NULL;
  WEFT_ASSERT_OK(weft_thread_create(fence_signaller_main, &signaller, NULL,
                                    weft_allocator_system(), &thread));
  WEFT_ASSERT_OK(weft_fence_wait(fence, weft_timeout_infinite()));
  weft_thread_join(thread);
  WEFT_ASSERT_OK(signaller.status);
  weft_fence_release(fence);
  weft_semaphore_release(a);
  weft_semaphore_release(b);
}

static void fail_reaches_query_and_wait(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* a = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* b = weft_cts_create_semaphore(cts, 0);
  weft_fence_t* fence = create_fence(cts);
  WEFT_ASSERT_OK(weft_fence_insert(fence, a, 1));
  WEFT_ASSERT_OK(weft_fence_insert(fence, b, 1));
  weft_fence_fail(fence,
                  WEFT_STATUS(PERMISSION_DENIED, "buffer is not host-visible"));
  weft_cts_assert_status_contains(weft_fence_query(fence),
                                  WEFT_STATUS_PERMISSION_DENIED,
                                  "buffer is not host-visible");
  weft_cts_assert_status_contains(
      weft_fence_wait(fence, weft_timeout_infinite()),
      WEFT_STATUS_PERMISSION_DENIED, "buffer is not host-visible");
  // Each semaphore got the failure.
  uint64_t value = 0;
  weft_cts_assert_status_contains(weft_semaphore_query(b, &value),
                                  WEFT_STATUS_PERMISSION_DENIED,
                                  "buffer is not host-visible");
  weft_cts_assert_status_contains(weft_fence_signal(fence),
                                  WEFT_STATUS_PERMISSION_DENIED, NULL);
  weft_fence_release(fence);
  weft_semaphore_release(a);
  weft_semaphore_release(b);
}

static void one_failed_entry_fails_the_fence(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* a = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* b = weft_cts_create_semaphore(cts, 0);
  weft_fence_t* fence = create_fence(cts);
  WEFT_ASSERT_OK(weft_fence_insert(fence, a, 1));
  WEFT_ASSERT_OK(weft_fence_insert(fence, b, 1));
  weft_semaphore_fail(b, WEFT_STATUS(ABORTED, "upstream op failed"));
  weft_cts_assert_status_contains(weft_fence_query(fence), WEFT_STATUS_ABORTED,
                                  "upstream op failed");
  // Entry |a| is never signalled: the wait still ends with the failure.
  weft_cts_assert_status_contains(
      weft_fence_wait(fence, weft_timeout_infinite()), WEFT_STATUS_ABORTED,
      "upstream op failed");
  weft_fence_release(fence);
  weft_semaphore_release(a);
  weft_semaphore_release(b);
}

static void as_list_matches_entries(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* semaphores[3] = {weft_cts_create_semaphore(cts, 0),
                                     weft_cts_create_semaphore(cts, 0),
                                     weft_cts_create_semaphore(cts, 0)};
  const uint64_t values[3] = {10, 20, 30};
  weft_fence_t* fence = create_fence(cts);
  for (int i = 0; i < 3; ++i) {
    WEFT_ASSERT_OK(weft_fence_insert(fence, semaphores[i], values[i]));
  }
  WEFT_ASSERT_OK(weft_fence_insert(fence, semaphores[1], 15));  // lower: kept
  weft_semaphore_list_t list = weft_fence_as_list(fence);
  assert_int_equal(list.count, 3);
  for (uint32_t i = 0; i < list.count; ++i) {
    // Insertion order is kept.
    assert_ptr_equal(list.semaphores[i], semaphores[i]);
    assert_int_equal(list.values[i], values[i]);
  }
  // The list works with the semaphore list API.
  assert_false(weft_semaphore_list_is_reached(list));
  WEFT_ASSERT_OK(weft_semaphore_list_signal(list));
  assert_true(weft_semaphore_list_is_reached(list));
  weft_fence_release(fence);
  for (int i = 0; i < 3; ++i) weft_semaphore_release(semaphores[i]);
}

static void retain_release(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  weft_fence_t* fence = NULL;
  WEFT_ASSERT_OK(weft_fence_create_at(semaphore, 1, cts->allocator, &fence));
  weft_semaphore_release(semaphore);
  weft_fence_retain(fence);
  weft_fence_release(fence);
  // Still alive and usable after the extra reference is dropped.
  WEFT_ASSERT_OK(weft_fence_signal(fence));
  WEFT_ASSERT_OK(weft_fence_query(fence));
  weft_fence_release(fence);
}

int main(int argc, char** argv) {
  const struct CMUnitTest tests[] = {
      WEFT_CTS_CASE(empty_fence_query_and_wait),
      WEFT_CTS_CASE(null_fence_is_reached),
      WEFT_CTS_CASE(insert_dedupes_keeping_max),
      WEFT_CTS_CASE(insert_several),
      WEFT_CTS_CASE(create_at_holds_one_entry),
      WEFT_CTS_CASE(create_from_list_keeps_max_per_semaphore),
      WEFT_CTS_CASE(extend_merges_entries),
      WEFT_CTS_CASE(join_dedupes),
      WEFT_CTS_CASE(join_of_empties_is_null),
      WEFT_CTS_CASE(query_deferred_then_ok_after_signal),
      WEFT_CTS_CASE(signal_then_query_ok),
      WEFT_CTS_CASE(wait_times_out),
      WEFT_CTS_CASE(wait_satisfied_by_other_thread),
      WEFT_CTS_CASE(fail_reaches_query_and_wait),
      WEFT_CTS_CASE(one_failed_entry_fails_the_fence),
      WEFT_CTS_CASE(as_list_matches_entries),
      WEFT_CTS_CASE(retain_release),
  };
  return weft_cts_run("fence", tests, WEFT_CTS_COUNT(tests), argc, argv);
}
