// Tests for the condition variable (src/base/condition.h): deadlines, the
// mutex held on every return, a signal handed back and forth without a
// lost wake-up, producers and consumers woken one signal at a time, a
// broadcast reaching every waiter, and the teardown shape (a woken waiter
// frees the condition the broadcaster used).

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "base/condition.h"
#include "base/thread.h"

#define MS (1000ll * 1000ll)
#define ROUNDS 5000
#define THREAD_COUNT 4
#define ITEMS_PER_PRODUCER 5000

static weft_thread_t* start_thread(weft_thread_entry_fn_t entry,
                                   void* user_data) {
  weft_thread_t* thread = NULL;
  weft_thread_params_t params = {.name = "condition", .cpu = -1};
  assert_null(weft_thread_create(entry, user_data, &params,
                                 weft_allocator_system(), &thread));
  return thread;
}

static void test_deadline(void** state) {
  (void)state;
  weft_slim_mutex_t mutex;
  weft_slim_mutex_initialize(&mutex);
  weft_condition_t condition;
  weft_condition_initialize(&condition);
  weft_slim_mutex_lock(&mutex);
  const weft_time_t start = weft_time_now();
  assert_false(weft_condition_wait(&condition, &mutex, start + 10 * MS));
  assert_true(weft_time_now() >= start + 10 * MS);
  // The mutex is held again on return.
  assert_false(weft_slim_mutex_try_lock(&mutex));
  // A deadline in the past returns at once, the mutex held.
  assert_false(
      weft_condition_wait(&condition, &mutex, WEFT_TIME_INFINITE_PAST));
  assert_false(weft_slim_mutex_try_lock(&mutex));
  weft_slim_mutex_unlock(&mutex);
  // Signals and broadcasts with nobody waiting do nothing.
  weft_condition_signal(&condition);
  weft_condition_broadcast(&condition);
  weft_condition_deinitialize(&condition);
  weft_slim_mutex_deinitialize(&mutex);
}

// Two threads hand a turn back and forth, each waking the other with one
// signal under the mutex: a lost wake-up hangs the test.
typedef struct ping_pong_t {
  weft_slim_mutex_t mutex;
  weft_condition_t condition;
  // Guarded by |mutex|: whose turn it is (0 the main thread, 1 the
  // partner), and the partner's rounds (plain, so TSan checks the mutex).
  int turn;
  int64_t partner_rounds;
} ping_pong_t;

static int ping_pong_partner_main(void* user_data) {
  ping_pong_t* game = (ping_pong_t*)user_data;
  weft_slim_mutex_lock(&game->mutex);
  for (int i = 0; i < ROUNDS; ++i) {
    while (game->turn != 1) {
      weft_condition_wait(&game->condition, &game->mutex,
                          WEFT_TIME_INFINITE_FUTURE);
    }
    ++game->partner_rounds;
    game->turn = 0;
    weft_condition_signal(&game->condition);
  }
  weft_slim_mutex_unlock(&game->mutex);
  return 0;
}

static void test_ping_pong(void** state) {
  (void)state;
  ping_pong_t game = {.turn = 0, .partner_rounds = 0};
  weft_slim_mutex_initialize(&game.mutex);
  weft_condition_initialize(&game.condition);
  weft_thread_t* partner = start_thread(ping_pong_partner_main, &game);
  weft_slim_mutex_lock(&game.mutex);
  for (int64_t i = 0; i < ROUNDS; ++i) {
    game.turn = 1;
    weft_condition_signal(&game.condition);
    while (game.turn != 0) {
      weft_condition_wait(&game.condition, &game.mutex,
                          WEFT_TIME_INFINITE_FUTURE);
    }
    assert_int_equal(game.partner_rounds, i + 1);
  }
  weft_slim_mutex_unlock(&game.mutex);
  weft_thread_join(partner);
  assert_int_equal(game.partner_rounds, ROUNDS);
  weft_condition_deinitialize(&game.condition);
  weft_slim_mutex_deinitialize(&game.mutex);
}

// Producers add items one at a time and signal once per item; consumers
// take them. Every item is taken, so every signal woke someone who could.
typedef struct bounded_work_t {
  weft_slim_mutex_t mutex;
  weft_condition_t condition;
  // Guarded by |mutex|.
  int64_t items;
  int64_t taken;
  int producers_left;
} bounded_work_t;

static int producer_main(void* user_data) {
  bounded_work_t* work = (bounded_work_t*)user_data;
  for (int i = 0; i < ITEMS_PER_PRODUCER; ++i) {
    weft_slim_mutex_lock(&work->mutex);
    ++work->items;
    weft_condition_signal(&work->condition);
    weft_slim_mutex_unlock(&work->mutex);
    if ((i & 255) == 0) weft_thread_yield();
  }
  weft_slim_mutex_lock(&work->mutex);
  // The last producer wakes every consumer to let them see the end.
  if (--work->producers_left == 0) weft_condition_broadcast(&work->condition);
  weft_slim_mutex_unlock(&work->mutex);
  return 0;
}

static int consumer_main(void* user_data) {
  bounded_work_t* work = (bounded_work_t*)user_data;
  weft_slim_mutex_lock(&work->mutex);
  for (;;) {
    while (work->items == 0 && work->producers_left > 0) {
      weft_condition_wait(&work->condition, &work->mutex,
                          WEFT_TIME_INFINITE_FUTURE);
    }
    if (work->items == 0) break;
    --work->items;
    ++work->taken;
  }
  weft_slim_mutex_unlock(&work->mutex);
  return 0;
}

static void test_producers_consumers(void** state) {
  (void)state;
  bounded_work_t work = {
      .items = 0, .taken = 0, .producers_left = THREAD_COUNT};
  weft_slim_mutex_initialize(&work.mutex);
  weft_condition_initialize(&work.condition);
  weft_thread_t* threads[2 * THREAD_COUNT];
  for (int i = 0; i < THREAD_COUNT; ++i) {
    threads[i] = start_thread(consumer_main, &work);
  }
  for (int i = 0; i < THREAD_COUNT; ++i) {
    threads[THREAD_COUNT + i] = start_thread(producer_main, &work);
  }
  for (int i = 0; i < 2 * THREAD_COUNT; ++i) weft_thread_join(threads[i]);
  assert_int_equal(work.taken, (int64_t)THREAD_COUNT * ITEMS_PER_PRODUCER);
  assert_int_equal(work.items, 0);
  weft_condition_deinitialize(&work.condition);
  weft_slim_mutex_deinitialize(&work.mutex);
}

// Waiters count themselves in, then wait for |open|; one broadcast lets
// them all through.
typedef struct gate_t {
  weft_slim_mutex_t mutex;
  weft_condition_t condition;
  // Guarded by |mutex|.
  int arrived;
  int passed;
  bool open;
} gate_t;

static int gate_waiter_main(void* user_data) {
  gate_t* gate = (gate_t*)user_data;
  weft_slim_mutex_lock(&gate->mutex);
  ++gate->arrived;
  weft_condition_broadcast(&gate->condition);
  while (!gate->open) {
    weft_condition_wait(&gate->condition, &gate->mutex,
                        WEFT_TIME_INFINITE_FUTURE);
  }
  ++gate->passed;
  weft_slim_mutex_unlock(&gate->mutex);
  return 0;
}

static void test_broadcast(void** state) {
  (void)state;
  gate_t gate = {.arrived = 0, .passed = 0, .open = false};
  weft_slim_mutex_initialize(&gate.mutex);
  weft_condition_initialize(&gate.condition);
  weft_thread_t* threads[THREAD_COUNT];
  for (int i = 0; i < THREAD_COUNT; ++i) {
    threads[i] = start_thread(gate_waiter_main, &gate);
  }
  weft_slim_mutex_lock(&gate.mutex);
  while (gate.arrived < THREAD_COUNT) {
    weft_condition_wait(&gate.condition, &gate.mutex,
                        WEFT_TIME_INFINITE_FUTURE);
  }
  // Every waiter is inside its wait loop (or about to be): none has passed.
  assert_int_equal(gate.passed, 0);
  gate.open = true;
  weft_condition_broadcast(&gate.condition);
  weft_slim_mutex_unlock(&gate.mutex);
  for (int i = 0; i < THREAD_COUNT; ++i) weft_thread_join(threads[i]);
  assert_int_equal(gate.passed, THREAD_COUNT);
  weft_condition_deinitialize(&gate.condition);
  weft_slim_mutex_deinitialize(&gate.mutex);
}

// The teardown shape: the owner waits for the last user to leave, then
// frees the storage holding the mutex and the condition while that user
// may still be returning from its broadcast and unlock (ASan and TSan
// check that the user touches nothing after it let go of the mutex).
typedef struct refcounted_t {
  weft_slim_mutex_t mutex;
  weft_condition_t idle;
  int outstanding;  // guarded by |mutex|
} refcounted_t;

static int user_main(void* user_data) {
  refcounted_t* object = (refcounted_t*)user_data;
  weft_slim_mutex_lock(&object->mutex);
  if (--object->outstanding == 0) weft_condition_broadcast(&object->idle);
  weft_slim_mutex_unlock(&object->mutex);
  return 0;
}

static void test_free_after_last_broadcast(void** state) {
  (void)state;
  for (int round = 0; round < 200; ++round) {
    refcounted_t* object = (refcounted_t*)malloc(sizeof(*object));
    assert_non_null(object);
    weft_slim_mutex_initialize(&object->mutex);
    weft_condition_initialize(&object->idle);
    object->outstanding = 2;
    weft_thread_t* users[2] = {start_thread(user_main, object),
                               start_thread(user_main, object)};
    weft_slim_mutex_lock(&object->mutex);
    while (object->outstanding) {
      weft_condition_wait(&object->idle, &object->mutex,
                          WEFT_TIME_INFINITE_FUTURE);
    }
    weft_slim_mutex_unlock(&object->mutex);
    weft_condition_deinitialize(&object->idle);
    weft_slim_mutex_deinitialize(&object->mutex);
    free(object);
    weft_thread_join(users[0]);
    weft_thread_join(users[1]);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_deadline),
      cmocka_unit_test(test_ping_pong),
      cmocka_unit_test(test_producers_consumers),
      cmocka_unit_test(test_broadcast),
      cmocka_unit_test(test_free_after_last_broadcast),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
