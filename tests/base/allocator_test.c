// Tests for the system and failure-injecting allocators.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/thread.h"
#include "weft/allocator.h"

// Sanitizer runtimes abort on absurd allocation sizes unless told to return
// NULL like the C library does; the out-of-memory test needs the NULL.
const char* __asan_default_options(void);
const char* __asan_default_options(void) {
  return "allocator_may_return_null=1";
}
const char* __tsan_default_options(void);
const char* __tsan_default_options(void) {
  return "allocator_may_return_null=1";
}

static void test_system_malloc_zeroes(void** state) {
  (void)state;
  weft_allocator_t allocator = weft_allocator_system();
  unsigned char* ptr = NULL;
  assert_null(weft_allocator_malloc(allocator, 4096, (void**)&ptr));
  assert_non_null(ptr);
  for (size_t i = 0; i < 4096; ++i) assert_int_equal(ptr[i], 0);
  assert_null(weft_allocator_realloc(allocator, 8192, (void**)&ptr));
  assert_non_null(ptr);
  assert_int_equal(ptr[4095], 0);
  ptr[8191] = 1;
  weft_allocator_free(allocator, ptr);
  weft_allocator_free(allocator, NULL);
}

static void test_zero_length(void** state) {
  (void)state;
  weft_allocator_t allocator = weft_allocator_system();
  void* ptr = (void*)1;
  assert_null(weft_allocator_malloc(allocator, 0, &ptr));
  assert_null(ptr);
  assert_null(weft_allocator_malloc_uninitialized(allocator, 64, &ptr));
  assert_non_null(ptr);
  // Shrinking to zero frees.
  assert_null(weft_allocator_realloc(allocator, 0, &ptr));
  assert_null(ptr);
}

static void test_out_of_memory_names_size(void** state) {
  (void)state;
  weft_allocator_t allocator = weft_allocator_system();
  void* ptr = (void*)1;
  weft_status_t status = weft_allocator_malloc(allocator, SIZE_MAX / 2, &ptr);
  assert_true(weft_status_is(status, WEFT_STATUS_RESOURCE_EXHAUSTED));
  assert_null(ptr);
  char expected[64];
  snprintf(expected, sizeof(expected), "%zu bytes", SIZE_MAX / 2);
  assert_non_null(strstr(weft_status_message(status), expected));
  weft_status_free(status);
}

static void test_malloc_array_overflow(void** state) {
  (void)state;
  weft_allocator_t allocator = weft_allocator_system();
  void* ptr = (void*)1;
  weft_status_t status =
      weft_allocator_malloc_array(allocator, SIZE_MAX / 4, 8, &ptr);
  assert_true(weft_status_is(status, WEFT_STATUS_INVALID_ARGUMENT));
  assert_null(ptr);
  weft_status_free(status);
  uint32_t* values = NULL;
  assert_null(weft_allocator_malloc_array(allocator, 100, sizeof(uint32_t),
                                          (void**)&values));
  assert_non_null(values);
  assert_int_equal(values[99], 0);
  weft_allocator_free(allocator, values);
}

static void test_malloc_aligned(void** state) {
  (void)state;
  weft_allocator_t allocator = weft_allocator_system();
  // Every alignment, several sizes each: the address is a multiple, the
  // bytes are zeroed and all writable (ASan catches an overrun).
  for (size_t alignment = 1; alignment <= 4096; alignment *= 2) {
    for (size_t length = 1; length <= 300; length += 97) {
      unsigned char* ptr = NULL;
      assert_null(weft_allocator_malloc_aligned(allocator, length, alignment,
                                                (void**)&ptr));
      assert_non_null(ptr);
      assert_int_equal((uintptr_t)ptr % alignment, 0);
      for (size_t i = 0; i < length; ++i) assert_int_equal(ptr[i], 0);
      memset(ptr, 0xAB, length);
      weft_allocator_free_aligned(allocator, ptr);
    }
  }
  weft_allocator_free_aligned(allocator, NULL);
  void* ptr = (void*)1;
  assert_null(weft_allocator_malloc_aligned(allocator, 0, 64, &ptr));
  assert_null(ptr);
}

static void test_malloc_aligned_refuses_bad_input(void** state) {
  (void)state;
  weft_allocator_t allocator = weft_allocator_system();
  const size_t bad_alignments[] = {0, 3, 48, 8192};
  for (size_t i = 0; i < 4; ++i) {
    void* ptr = (void*)1;
    weft_status_t status = weft_allocator_malloc_aligned(
        allocator, 64, bad_alignments[i], &ptr);
    assert_true(weft_status_is(status, WEFT_STATUS_INVALID_ARGUMENT));
    assert_non_null(strstr(weft_status_message(status), "power of two"));
    assert_null(ptr);
    weft_status_free(status);
  }
  void* ptr = (void*)1;
  weft_status_t status =
      weft_allocator_malloc_aligned(allocator, SIZE_MAX - 8, 64, &ptr);
  assert_true(weft_status_is(status, WEFT_STATUS_RESOURCE_EXHAUSTED));
  assert_null(ptr);
  weft_status_free(status);
  // A failed allocation comes back as the allocator's own failure.
  weft_failing_allocator_t storage;
  weft_allocator_t failing =
      weft_failing_allocator_initialize(allocator, 0, &storage);
  status = weft_allocator_malloc_aligned(failing, 64, 64, &ptr);
  assert_true(weft_status_is(status, WEFT_STATUS_RESOURCE_EXHAUSTED));
  assert_null(ptr);
  weft_status_free(status);
}

static void test_failing_allocator_fails_at_n(void** state) {
  (void)state;
  for (int64_t fail_at = 0; fail_at < 5; ++fail_at) {
    weft_failing_allocator_t storage;
    weft_allocator_t allocator = weft_failing_allocator_initialize(
        weft_allocator_system(), fail_at, &storage);
    void* ptrs[8] = {0};
    for (int64_t i = 0; i < 8; ++i) {
      weft_status_t status =
          weft_allocator_malloc(allocator, 16 + (size_t)i, &ptrs[i]);
      if (i < fail_at) {
        assert_null(status);
        assert_non_null(ptrs[i]);
      } else {
        assert_true(weft_status_is(status, WEFT_STATUS_RESOURCE_EXHAUSTED));
        assert_null(ptrs[i]);
        char expected[64];
        snprintf(expected, sizeof(expected),
                 "injected allocation failure #%d (%d bytes)", (int)i,
                 (int)(16 + i));
        assert_string_equal(weft_status_message(status), expected);
        weft_status_free(status);
      }
    }
    assert_int_equal(storage.request_count, 8);
    assert_int_equal(storage.failure_count, 8 - fail_at);
    // Frees are not counted and always go through.
    for (int i = 0; i < 8; ++i) weft_allocator_free(allocator, ptrs[i]);
    assert_int_equal(storage.request_count, 8);
  }
}

static void test_failing_allocator_never(void** state) {
  (void)state;
  weft_failing_allocator_t storage;
  weft_allocator_t allocator = weft_failing_allocator_initialize(
      weft_allocator_system(), -1, &storage);
  for (int i = 0; i < 100; ++i) {
    void* ptr = NULL;
    assert_null(weft_allocator_malloc(allocator, 8, &ptr));
    assert_null(weft_allocator_realloc(allocator, 32, &ptr));
    weft_allocator_free(allocator, ptr);
  }
  assert_int_equal(storage.request_count, 200);
  assert_int_equal(storage.failure_count, 0);
}

static void test_failing_realloc_keeps_pointer(void** state) {
  (void)state;
  weft_failing_allocator_t storage;
  weft_allocator_t allocator = weft_failing_allocator_initialize(
      weft_allocator_system(), 1, &storage);
  char* ptr = NULL;
  assert_null(weft_allocator_malloc(allocator, 8, (void**)&ptr));
  char* before = ptr;
  weft_status_t status = weft_allocator_realloc(allocator, 64, (void**)&ptr);
  assert_true(weft_status_is(status, WEFT_STATUS_RESOURCE_EXHAUSTED));
  weft_status_free(status);
  assert_ptr_equal(ptr, before);
  weft_allocator_free(allocator, ptr);
}

typedef struct counting_context_t {
  weft_allocator_t allocator;
  int successes;
} counting_context_t;

static int counting_thread_main(void* user_data) {
  counting_context_t* context = (counting_context_t*)user_data;
  for (int i = 0; i < 1000; ++i) {
    void* ptr = NULL;
    weft_status_t status = weft_allocator_malloc(context->allocator, 8, &ptr);
    if (weft_status_is_ok(status)) {
      ++context->successes;
      weft_allocator_free(context->allocator, ptr);
    } else {
      weft_status_free(status);
    }
  }
  return 0;
}

static void test_failing_allocator_threads(void** state) {
  (void)state;
  weft_failing_allocator_t storage;
  weft_allocator_t allocator = weft_failing_allocator_initialize(
      weft_allocator_system(), 2500, &storage);
  counting_context_t contexts[4];
  weft_thread_t* threads[4];
  for (int i = 0; i < 4; ++i) {
    contexts[i].allocator = allocator;
    contexts[i].successes = 0;
    weft_thread_params_t params = {.name = "alloc", .cpu = -1};
    assert_null(weft_thread_create(counting_thread_main, &contexts[i], &params,
                                   weft_allocator_system(), &threads[i]));
  }
  int successes = 0;
  for (int i = 0; i < 4; ++i) {
    weft_thread_join(threads[i]);
    successes += contexts[i].successes;
  }
  assert_int_equal(storage.request_count, 4000);
  assert_int_equal(storage.failure_count, 1500);
  assert_int_equal(successes, 2500);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_system_malloc_zeroes),
      cmocka_unit_test(test_zero_length),
      cmocka_unit_test(test_out_of_memory_names_size),
      cmocka_unit_test(test_malloc_array_overflow),
      cmocka_unit_test(test_malloc_aligned),
      cmocka_unit_test(test_malloc_aligned_refuses_bad_input),
      cmocka_unit_test(test_failing_allocator_fails_at_n),
      cmocka_unit_test(test_failing_allocator_never),
      cmocka_unit_test(test_failing_realloc_keeps_pointer),
      cmocka_unit_test(test_failing_allocator_threads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
