// weft: notification, an event count over a futex (see
// src/base/notification.h).
//
// Two Dekker-style handshakes make this lossless:
//  1. waiter: waiters++, fence, token = epoch, check predicate
//     notifier: set predicate, fence, read waiters, epoch++
//     Either the notifier sees the waiter (and bumps the epoch past the
//     token), or the waiter's predicate check sees the notifier's write.
//  2. waiter: sleepers++, futex_wait(epoch == token)
//     notifier: epoch++, read sleepers, futex_wake
//     Either the notifier sees the sleeper and wakes it, or the kernel's
//     comparison sees the new epoch and the wait returns at once.

#include "base/notification.h"

#include <sched.h>

#include "base/futex.h"
#include "base/sched_counters.h"

void weft_notification_initialize(weft_notification_t* notification) {
  atomic_init(&notification->epoch, 0);
  atomic_init(&notification->waiters, 0);
  atomic_init(&notification->sleepers, 0);
}

void weft_notification_deinitialize(weft_notification_t* notification) {
  (void)notification;
}

void weft_notification_notify(weft_notification_t* notification,
                              int32_t count) {
  // seq_cst fence: orders the caller's predicate store before the waiters
  // load (handshake 1; a store-load order only a full fence gives).
  weft_atomic_thread_fence(memory_order_seq_cst);
  if (weft_atomic_load(&notification->waiters, memory_order_relaxed) > 0) {
    // seq_cst: release publishes the predicate to waiters that acquire the
    // new epoch; the total order pairs with the sleepers increment
    // (handshake 2).
    weft_atomic_fetch_add(&notification->epoch, 1, memory_order_seq_cst);
    // seq_cst: second half of handshake 2 (store epoch, then load sleepers).
    if (weft_atomic_load(&notification->sleepers, memory_order_seq_cst) > 0) {
      weft_futex_wake(&notification->epoch, count);
    }
  }
}

weft_wait_token_t weft_notification_prepare_wait(
    weft_notification_t* notification) {
  // Relaxed increment followed by a seq_cst fence: the fence orders the
  // increment before the caller's predicate re-check (handshake 1).
  weft_atomic_fetch_add(&notification->waiters, 1, memory_order_relaxed);
  weft_atomic_thread_fence(memory_order_seq_cst);
  // Acquire: if this reads a notifier's epoch bump, the caller's predicate
  // check must see what that notifier published.
  return weft_atomic_load(&notification->epoch, memory_order_acquire);
}

void weft_notification_cancel_wait(weft_notification_t* notification) {
  weft_atomic_fetch_sub(&notification->waiters, 1, memory_order_relaxed);
}

bool weft_notification_was_notified(weft_notification_t* notification,
                                    weft_wait_token_t token) {
  // Acquire: pairs with the notifier's epoch bump.
  return weft_atomic_load(&notification->epoch, memory_order_acquire) != token;
}

// Spins until the epoch moves past |token| or the spin budget or the
// deadline runs out. Returns true when notified.
static bool weft_notification_spin(weft_notification_t* notification,
                                   weft_wait_token_t token,
                                   weft_duration_t spin_ns,
                                   weft_time_t deadline_ns) {
  bool notified = false;
  weft_time_t spin_deadline = weft_time_now() + spin_ns;
  if (spin_deadline > deadline_ns) spin_deadline = deadline_ns;
  for (uint32_t i = 1; !notified; ++i) {
    // Acquire: pairs with the notifier's epoch bump (see above).
    notified =
        weft_atomic_load(&notification->epoch, memory_order_acquire) != token;
    if (!notified) {
      weft_cpu_relax();
      // Reading the clock costs ~20ns; check it every 16 spins. Yield
      // then too: where the threads being waited for outnumber the free
      // CPUs, a spinner that never yields runs in their place.
      if ((i & 15) == 0) {
        WEFT_SCHED_COUNT(CLOCK_READ);
        if (weft_time_now() >= spin_deadline) break;
        WEFT_SCHED_COUNT(YIELD);
        sched_yield();
      }
    }
  }
  return notified;
}

bool weft_notification_commit_wait(weft_notification_t* notification,
                                   weft_wait_token_t token,
                                   weft_wait_policy_t policy,
                                   weft_time_t deadline_ns) {
  // Acquire: pairs with the notifier's epoch bump.
  bool notified =
      weft_atomic_load(&notification->epoch, memory_order_acquire) != token;
  if (!notified && policy.spin_ns > 0 &&
      deadline_ns != WEFT_TIME_INFINITE_PAST) {
    notified = weft_notification_spin(notification, token, policy.spin_ns,
                                      deadline_ns);
  }
  bool timed_out = deadline_ns == WEFT_TIME_INFINITE_PAST;
  while (!notified && !timed_out) {
    // seq_cst: first half of handshake 2 (store sleepers, then the kernel
    // loads the epoch).
    weft_atomic_fetch_add(&notification->sleepers, 1, memory_order_seq_cst);
    timed_out = !weft_futex_wait(&notification->epoch, token, deadline_ns);
    weft_atomic_fetch_sub(&notification->sleepers, 1, memory_order_relaxed);
    // Acquire: pairs with the notifier's epoch bump.
    notified =
        weft_atomic_load(&notification->epoch, memory_order_acquire) != token;
  }
  weft_atomic_fetch_sub(&notification->waiters, 1, memory_order_relaxed);
  return notified;
}
