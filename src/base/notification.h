// weft: notification, an event count over a futex.
//
// Waiter:                               Notifier:
//   token = prepare_wait(n)               make predicate true
//   if (predicate) cancel_wait(n)         notify(n, count)
//   else commit_wait(n, token, ...)
// The waiter re-checks its predicate between prepare and commit, so a notify
// in that window is never lost.
#ifndef WEFT_BASE_NOTIFICATION_H_
#define WEFT_BASE_NOTIFICATION_H_

#include <stdbool.h>
#include <stdint.h>

#include "base/atomics.h"
#include "base/wait_policy.h"
#include "weft/time.h"

typedef struct weft_notification_t {
  // Epoch, bumped by every notify that has waiters.
  weft_atomic_uint32_t epoch;
  // Number of threads between prepare_wait and commit/cancel.
  weft_atomic_uint32_t waiters;
  // Number of those threads blocked (or about to block) in the kernel; a
  // notify only makes the wake syscall when this is non-zero, so waking a
  // spinning waiter costs no syscall.
  weft_atomic_uint32_t sleepers;
} weft_notification_t;

typedef uint32_t weft_wait_token_t;

void weft_notification_initialize(weft_notification_t* notification);
void weft_notification_deinitialize(weft_notification_t* notification);

// Wakes up to |count| waiters (INT32_MAX = all).
void weft_notification_notify(weft_notification_t* notification,
                              int32_t count);

// Begins a wait; the caller must re-check its predicate and then either
// commit or cancel.
weft_wait_token_t weft_notification_prepare_wait(
    weft_notification_t* notification);

// Abandons a prepared wait.
void weft_notification_cancel_wait(weft_notification_t* notification);

// True once a notify came after |token| was taken (acquire: what the
// notifier wrote before notifying is visible). Never blocks.
bool weft_notification_was_notified(weft_notification_t* notification,
                                    weft_wait_token_t token);

// Blocks until notified after |token| was taken or |deadline_ns| passes,
// spinning first per |policy|. Returns false on time-out.
bool weft_notification_commit_wait(weft_notification_t* notification,
                                   weft_wait_token_t token,
                                   weft_wait_policy_t policy,
                                   weft_time_t deadline_ns);

#endif  // WEFT_BASE_NOTIFICATION_H_
