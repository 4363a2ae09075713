// Tests for the slim futex mutex.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "base/mutex.h"
#include "base/thread.h"

#define THREAD_COUNT 8
#define INCREMENTS_PER_THREAD 20000

typedef struct counter_t {
  weft_slim_mutex_t mutex;
  // Plain (non-atomic) on purpose: the mutex is what protects it, and TSan
  // checks that it does.
  int64_t value;
} counter_t;

static void test_try_lock(void** state) {
  (void)state;
  weft_slim_mutex_t mutex;
  weft_slim_mutex_initialize(&mutex);
  assert_true(weft_slim_mutex_try_lock(&mutex));
  assert_false(weft_slim_mutex_try_lock(&mutex));
  weft_slim_mutex_unlock(&mutex);
  weft_slim_mutex_lock(&mutex);
  assert_false(weft_slim_mutex_try_lock(&mutex));
  weft_slim_mutex_unlock(&mutex);
  weft_slim_mutex_deinitialize(&mutex);

  weft_slim_mutex_t static_mutex = WEFT_SLIM_MUTEX_INITIALIZER;
  assert_true(weft_slim_mutex_try_lock(&static_mutex));
  weft_slim_mutex_unlock(&static_mutex);
}

static int increment_thread_main(void* user_data) {
  counter_t* counter = (counter_t*)user_data;
  for (int i = 0; i < INCREMENTS_PER_THREAD; ++i) {
    if ((i & 7) == 0 && weft_slim_mutex_try_lock(&counter->mutex)) {
      ++counter->value;
      weft_slim_mutex_unlock(&counter->mutex);
      continue;
    }
    weft_slim_mutex_lock(&counter->mutex);
    ++counter->value;
    // Hold the lock a little now and then so others sleep in the kernel.
    if ((i & 1023) == 0) weft_thread_yield();
    weft_slim_mutex_unlock(&counter->mutex);
  }
  return 0;
}

static void test_threads_increment(void** state) {
  (void)state;
  counter_t counter;
  weft_slim_mutex_initialize(&counter.mutex);
  counter.value = 0;
  weft_thread_t* threads[THREAD_COUNT];
  for (int i = 0; i < THREAD_COUNT; ++i) {
    weft_thread_params_t params = {.name = "mutex-test", .cpu = -1};
    assert_null(weft_thread_create(increment_thread_main, &counter, &params,
                                   weft_allocator_system(), &threads[i]));
  }
  for (int i = 0; i < THREAD_COUNT; ++i) weft_thread_join(threads[i]);
  assert_int_equal(counter.value,
                   (int64_t)THREAD_COUNT * INCREMENTS_PER_THREAD);
  weft_slim_mutex_deinitialize(&counter.mutex);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_try_lock),
      cmocka_unit_test(test_threads_increment),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
