// Tests for block pools and arenas.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/arena.h"
#include "base/thread.h"

#define BLOCK_SIZE 1024

static void test_many_allocations(void** state) {
  (void)state;
  weft_block_pool_t pool;
  weft_block_pool_initialize(BLOCK_SIZE, weft_allocator_system(), &pool);
  weft_arena_t arena;
  weft_arena_initialize(&pool, &arena);
  unsigned char* ptrs[1000];
  for (size_t i = 0; i < 1000; ++i) {
    size_t length = 1 + (i * 7) % 200;
    assert_null(weft_arena_allocate(&arena, length, (void**)&ptrs[i]));
    assert_non_null(ptrs[i]);
    assert_int_equal((uintptr_t)ptrs[i] % 16, 0);
    for (size_t j = 0; j < length; ++j) assert_int_equal(ptrs[i][j], 0);
    memset(ptrs[i], (int)(i & 0xFF), length);
  }
  // Nothing overlapped: each allocation still holds its own pattern.
  for (size_t i = 0; i < 1000; ++i) {
    size_t length = 1 + (i * 7) % 200;
    for (size_t j = 0; j < length; ++j) {
      assert_int_equal(ptrs[i][j], (unsigned char)(i & 0xFF));
    }
  }
  void* none = (void*)1;
  assert_null(weft_arena_allocate(&arena, 0, &none));
  assert_null(none);
  weft_arena_deinitialize(&arena);
  weft_block_pool_deinitialize(&pool);
}

static size_t count_free_blocks(weft_block_pool_t* pool) {
  // The free list is private; count by acquiring and releasing.
  size_t count = 0;
  weft_arena_block_t* taken[64];
  weft_failing_allocator_t storage;
  weft_allocator_t saved = pool->allocator;
  // Any allocation here would mean the free list ran dry.
  pool->allocator =
      weft_failing_allocator_initialize(weft_allocator_system(), 0, &storage);
  while (count < 64) {
    weft_status_t status = weft_block_pool_acquire(pool, &taken[count]);
    if (!weft_status_is_ok(status)) {
      weft_status_free(status);
      break;
    }
    ++count;
  }
  for (size_t i = 0; i < count; ++i) weft_block_pool_release(pool, taken[i]);
  pool->allocator = saved;
  return count;
}

static void test_reset_reuses_blocks(void** state) {
  (void)state;
  weft_failing_allocator_t storage;
  weft_allocator_t allocator = weft_failing_allocator_initialize(
      weft_allocator_system(), -1, &storage);
  weft_block_pool_t pool;
  weft_block_pool_initialize(BLOCK_SIZE, allocator, &pool);
  weft_arena_t arena;
  weft_arena_initialize(&pool, &arena);
  for (int i = 0; i < 10; ++i) {
    void* ptr = NULL;
    assert_null(weft_arena_allocate(&arena, BLOCK_SIZE / 2, &ptr));
    memset(ptr, 0xAB, BLOCK_SIZE / 2);
  }
  // Two half-block allocations share each block.
  int64_t allocations = storage.request_count;
  assert_int_equal(allocations, 5);
  weft_arena_reset(&arena);
  assert_int_equal(count_free_blocks(&pool), 5);
  // Reuse: the same work again allocates nothing new, and memory is zeroed.
  for (int i = 0; i < 10; ++i) {
    unsigned char* ptr = NULL;
    assert_null(weft_arena_allocate(&arena, BLOCK_SIZE / 2, (void**)&ptr));
    for (size_t j = 0; j < BLOCK_SIZE / 2; ++j) assert_int_equal(ptr[j], 0);
  }
  assert_int_equal(storage.request_count, allocations);
  weft_arena_deinitialize(&arena);
  weft_block_pool_deinitialize(&pool);
}

static void test_large_allocations(void** state) {
  (void)state;
  weft_failing_allocator_t storage;
  weft_allocator_t allocator = weft_failing_allocator_initialize(
      weft_allocator_system(), -1, &storage);
  weft_block_pool_t pool;
  weft_block_pool_initialize(BLOCK_SIZE, allocator, &pool);
  weft_arena_t arena;
  weft_arena_initialize(&pool, &arena);
  unsigned char* small = NULL;
  assert_null(weft_arena_allocate(&arena, 32, (void**)&small));
  unsigned char* large = NULL;
  assert_null(weft_arena_allocate(&arena, BLOCK_SIZE * 10, (void**)&large));
  assert_int_equal((uintptr_t)large % 16, 0);
  for (size_t j = 0; j < BLOCK_SIZE * 10; ++j) assert_int_equal(large[j], 0);
  memset(large, 1, BLOCK_SIZE * 10);
  // A request of exactly the block size still fits a pool block.
  void* exact = NULL;
  assert_null(weft_arena_allocate(&arena, BLOCK_SIZE, &exact));
  assert_int_equal(storage.request_count, 3);
  weft_arena_reset(&arena);
  // Large blocks went back to the allocator; pool blocks to the pool.
  assert_int_equal(count_free_blocks(&pool), 2);
  // Absurd sizes fail cleanly.
  void* huge = (void*)1;
  weft_status_t status = weft_arena_allocate(&arena, SIZE_MAX - 8, &huge);
  assert_true(weft_status_is(status, WEFT_STATUS_RESOURCE_EXHAUSTED));
  assert_null(huge);
  weft_status_free(status);
  weft_arena_deinitialize(&arena);
  weft_block_pool_deinitialize(&pool);
}

static void test_allocation_failure(void** state) {
  (void)state;
  for (int64_t fail_at = 0; fail_at < 4; ++fail_at) {
    weft_failing_allocator_t storage;
    weft_allocator_t allocator = weft_failing_allocator_initialize(
        weft_allocator_system(), fail_at, &storage);
    weft_block_pool_t pool;
    weft_block_pool_initialize(BLOCK_SIZE, allocator, &pool);
    weft_arena_t arena;
    weft_arena_initialize(&pool, &arena);
    int64_t successes = 0;
    weft_status_t status = WEFT_OK;
    for (int i = 0; i < 8 && weft_status_is_ok(status); ++i) {
      void* ptr = NULL;
      // Alternate pool blocks and oversized allocations.
      size_t length = (i & 1) ? BLOCK_SIZE * 2 : BLOCK_SIZE;
      status = weft_arena_allocate(&arena, length, &ptr);
      if (weft_status_is_ok(status)) {
        assert_non_null(ptr);
        ++successes;
      } else {
        assert_null(ptr);
      }
    }
    assert_int_equal(successes, fail_at);
    assert_true(weft_status_is(status, WEFT_STATUS_RESOURCE_EXHAUSTED));
    char buffer[512];
    weft_status_format(status, buffer, sizeof(buffer));
    assert_non_null(strstr(buffer, "injected allocation failure"));
    assert_non_null(strstr(buffer, "arena_allocate"));
    weft_status_free(status);
    // Everything allocated before the failure is returned without leaks.
    weft_arena_deinitialize(&arena);
    weft_block_pool_deinitialize(&pool);
  }
}

typedef struct pool_worker_t {
  weft_block_pool_t* pool;
  int failures;
} pool_worker_t;

static int pool_worker_main(void* user_data) {
  pool_worker_t* worker = (pool_worker_t*)user_data;
  weft_arena_t arena;
  weft_arena_initialize(worker->pool, &arena);
  for (int round = 0; round < 200; ++round) {
    for (int i = 0; i < 20; ++i) {
      void* ptr = NULL;
      weft_status_t status = weft_arena_allocate(&arena, 300, &ptr);
      if (weft_status_is_ok(status)) {
        memset(ptr, round & 0xFF, 300);
      } else {
        ++worker->failures;
        weft_status_free(status);
      }
    }
    weft_arena_reset(&arena);
  }
  weft_arena_deinitialize(&arena);
  return 0;
}

static void test_shared_pool_threads(void** state) {
  (void)state;
  weft_block_pool_t pool;
  weft_block_pool_initialize(BLOCK_SIZE, weft_allocator_system(), &pool);
  pool_worker_t workers[4];
  weft_thread_t* threads[4];
  for (int i = 0; i < 4; ++i) {
    workers[i].pool = &pool;
    workers[i].failures = 0;
    weft_thread_params_t params = {.name = "arena", .cpu = -1};
    assert_null(weft_thread_create(pool_worker_main, &workers[i], &params,
                                   weft_allocator_system(), &threads[i]));
  }
  for (int i = 0; i < 4; ++i) {
    weft_thread_join(threads[i]);
    assert_int_equal(workers[i].failures, 0);
  }
  weft_block_pool_deinitialize(&pool);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_many_allocations),
      cmocka_unit_test(test_reset_reuses_blocks),
      cmocka_unit_test(test_large_allocations),
      cmocka_unit_test(test_allocation_failure),
      cmocka_unit_test(test_shared_pool_threads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
