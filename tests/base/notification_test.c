// Tests for the notification event count.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "base/atomics.h"
#include "base/notification.h"
#include "base/thread.h"

#define MS (1000ll * 1000ll)
#define ROUNDS 5000

// Waits until |*value| == |expected| using the prepare/re-check/commit
// protocol; returns false on time-out.
static bool wait_for_value(weft_notification_t* notification,
                           weft_atomic_int32_t* value, int32_t expected,
                           weft_wait_policy_t policy,
                           weft_time_t deadline_ns) {
  bool reached = false;
  bool timed_out = false;
  while (!reached && !timed_out) {
    weft_wait_token_t token = weft_notification_prepare_wait(notification);
    // Acquire: see what the writer published before storing the value.
    if (weft_atomic_load(value, memory_order_acquire) == expected) {
      weft_notification_cancel_wait(notification);
      reached = true;
    } else {
      timed_out = !weft_notification_commit_wait(notification, token, policy,
                                                 deadline_ns);
    }
  }
  return reached;
}

static void test_timeout(void** state) {
  (void)state;
  weft_notification_t notification;
  weft_notification_initialize(&notification);
  weft_wait_policy_t policies[2] = {{0}, {2 * MS}};
  for (int i = 0; i < 2; ++i) {
    weft_time_t start = weft_time_now();
    weft_wait_token_t token = weft_notification_prepare_wait(&notification);
    assert_false(weft_notification_commit_wait(&notification, token,
                                               policies[i], start + 10 * MS));
    assert_true(weft_time_now() >= start + 10 * MS);
  }
  // A poll returns at once.
  weft_wait_token_t token = weft_notification_prepare_wait(&notification);
  assert_false(weft_notification_commit_wait(
      &notification, token, policies[1], WEFT_TIME_INFINITE_PAST));
  assert_int_equal(weft_atomic_load(&notification.waiters,
                                    memory_order_relaxed),
                   0);
  weft_notification_deinitialize(&notification);
}

static void test_notify_without_waiters(void** state) {
  (void)state;
  weft_notification_t notification;
  weft_notification_initialize(&notification);
  weft_notification_notify(&notification, INT32_MAX);
  // Nobody waited, so the epoch did not move.
  assert_int_equal(weft_atomic_load(&notification.epoch, memory_order_relaxed),
                   0);
  // A notify between prepare and commit is never lost.
  weft_wait_token_t token = weft_notification_prepare_wait(&notification);
  weft_notification_notify(&notification, 1);
  assert_true(weft_notification_commit_wait(&notification, token,
                                            (weft_wait_policy_t){0},
                                            WEFT_TIME_INFINITE_FUTURE));
  weft_notification_deinitialize(&notification);
}

typedef struct ping_pong_t {
  weft_notification_t notification;
  // Whose turn it is: 0 the main thread, 1 the partner.
  weft_atomic_int32_t turn;
  weft_wait_policy_t policy;
  int64_t partner_rounds;
} ping_pong_t;

static int ping_pong_partner_main(void* user_data) {
  ping_pong_t* game = (ping_pong_t*)user_data;
  for (int i = 0; i < ROUNDS; ++i) {
    if (!wait_for_value(&game->notification, &game->turn, 1, game->policy,
                        WEFT_TIME_INFINITE_FUTURE)) {
      break;
    }
    ++game->partner_rounds;
    // Release: hand the turn (and partner_rounds) to the main thread.
    weft_atomic_store(&game->turn, 0, memory_order_release);
    weft_notification_notify(&game->notification, INT32_MAX);
  }
  return 0;
}

static void run_ping_pong(weft_duration_t spin_ns) {
  ping_pong_t game;
  weft_notification_initialize(&game.notification);
  atomic_init(&game.turn, 0);
  game.policy.spin_ns = spin_ns;
  game.partner_rounds = 0;
  weft_thread_t* partner = NULL;
  weft_thread_params_t params = {.name = "ping-pong", .cpu = -1};
  assert_null(weft_thread_create(ping_pong_partner_main, &game, &params,
                                 weft_allocator_system(), &partner));
  int64_t rounds = 0;
  for (int i = 0; i < ROUNDS; ++i) {
    // Release: hand the turn to the partner.
    weft_atomic_store(&game.turn, 1, memory_order_release);
    weft_notification_notify(&game.notification, INT32_MAX);
    weft_time_t deadline = weft_time_now() + 10000 * MS;
    if (!wait_for_value(&game.notification, &game.turn, 0, game.policy,
                        deadline)) {
      break;
    }
    ++rounds;
    assert_int_equal(game.partner_rounds, rounds);
  }
  weft_thread_join(partner);
  assert_int_equal(rounds, ROUNDS);
  assert_int_equal(game.partner_rounds, ROUNDS);
  weft_notification_deinitialize(&game.notification);
}

static void test_ping_pong_blocking(void** state) {
  (void)state;
  run_ping_pong(0);
}

static void test_ping_pong_spinning(void** state) {
  (void)state;
  run_ping_pong(50 * 1000);
}

static void test_ping_pong_default_policy(void** state) {
  (void)state;
  run_ping_pong(weft_wait_policy_default().spin_ns);
}

#define BROADCAST_WAITERS 6

typedef struct broadcast_t {
  weft_notification_t notification;
  weft_atomic_int32_t go;
  weft_atomic_int32_t woken;
} broadcast_t;

static int broadcast_waiter_main(void* user_data) {
  broadcast_t* broadcast = (broadcast_t*)user_data;
  if (wait_for_value(&broadcast->notification, &broadcast->go, 1,
                     (weft_wait_policy_t){0}, WEFT_TIME_INFINITE_FUTURE)) {
    weft_atomic_fetch_add(&broadcast->woken, 1, memory_order_relaxed);
  }
  return 0;
}

static void test_broadcast_wakes_all(void** state) {
  (void)state;
  broadcast_t broadcast;
  weft_notification_initialize(&broadcast.notification);
  atomic_init(&broadcast.go, 0);
  atomic_init(&broadcast.woken, 0);
  weft_thread_t* threads[BROADCAST_WAITERS];
  for (int i = 0; i < BROADCAST_WAITERS; ++i) {
    weft_thread_params_t params = {.name = "waiter", .cpu = -1};
    assert_null(weft_thread_create(broadcast_waiter_main, &broadcast, &params,
                                   weft_allocator_system(), &threads[i]));
  }
  // Give the waiters a moment to block in the kernel.
  weft_sleep_until(weft_time_now() + 20 * MS);
  // Release: publish go to the waiters.
  weft_atomic_store(&broadcast.go, 1, memory_order_release);
  weft_notification_notify(&broadcast.notification, INT32_MAX);
  for (int i = 0; i < BROADCAST_WAITERS; ++i) weft_thread_join(threads[i]);
  assert_int_equal(weft_atomic_load(&broadcast.woken, memory_order_relaxed),
                   BROADCAST_WAITERS);
  weft_notification_deinitialize(&broadcast.notification);
}

static void test_default_policy(void** state) {
  (void)state;
  unsetenv("WEFT_SPIN_US");
  weft_wait_policy_t policy = weft_wait_policy_default();
  if (weft_thread_available_cpu_count() == 1) {
    assert_int_equal(policy.spin_ns, 0);
  } else {
    assert_int_equal(policy.spin_ns, 20 * 1000);
  }
  setenv("WEFT_SPIN_US", "7", 1);
  assert_int_equal(weft_wait_policy_default().spin_ns, 7 * 1000);
  setenv("WEFT_SPIN_US", "0", 1);
  assert_int_equal(weft_wait_policy_default().spin_ns, 0);
  // Garbage falls back to the default.
  setenv("WEFT_SPIN_US", "lots", 1);
  assert_int_equal(weft_wait_policy_default().spin_ns, policy.spin_ns);
  unsetenv("WEFT_SPIN_US");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_timeout),
      cmocka_unit_test(test_notify_without_waiters),
      cmocka_unit_test(test_ping_pong_blocking),
      cmocka_unit_test(test_ping_pong_spinning),
      cmocka_unit_test(test_ping_pong_default_policy),
      cmocka_unit_test(test_broadcast_wakes_all),
      cmocka_unit_test(test_default_policy),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
