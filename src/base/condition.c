// weft: condition variable over a notification and a slim mutex (see
// src/base/condition.h).
//
// Why no wake-up is lost: the waiter takes its token under the mutex, and a
// signaller changes the predicate under the same mutex before it notifies.
// So the notify happens after the token was taken (the mutex orders them):
// the notifier sees the waiter registered, bumps the epoch past the token,
// and the waiter's commit returns, asleep or not (notification.h's two
// handshakes). A waiter that starts after the predicate changed sees it
// true under the mutex and never waits.
//
// Why signal wants the mutex: a notify for one waiter bumps the epoch (every
// registered waiter sees that) and wakes one sleeper in the kernel. If a new
// waiter could register between the bump and the kernel wake, the kernel
// might wake it instead of an older sleeper, which would sleep on. Under the
// mutex nobody can register in between.

#include "base/condition.h"

#include <stdint.h>

#include "base/wait_policy.h"

void weft_condition_initialize(weft_condition_t* condition) {
  weft_notification_initialize(&condition->notification);
}

void weft_condition_deinitialize(weft_condition_t* condition) {
  weft_notification_deinitialize(&condition->notification);
}

bool weft_condition_wait(weft_condition_t* condition, weft_slim_mutex_t* mutex,
                         weft_time_t deadline_ns) {
  // Taken under |mutex|: see the top of the file.
  const weft_wait_token_t token =
      weft_notification_prepare_wait(&condition->notification);
  weft_slim_mutex_unlock(mutex);
  // No spinning: these waits are long and idle (condition.h).
  const weft_wait_policy_t policy = {.spin_ns = 0};
  const bool notified = weft_notification_commit_wait(
      &condition->notification, token, policy, deadline_ns);
  weft_slim_mutex_lock(mutex);
  return notified;
}

void weft_condition_signal(weft_condition_t* condition) {
  weft_notification_notify(&condition->notification, 1);
}

void weft_condition_broadcast(weft_condition_t* condition) {
  weft_notification_notify(&condition->notification, INT32_MAX);
}
