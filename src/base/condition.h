// weft: condition variable, a notification paired with a slim mutex.
//
// For a predicate over state that a weft_slim_mutex_t guards (a count of
// ops still out, a list an engine thread drains), where a lock-free
// predicate for weft_notification's prepare/commit protocol would be more
// work than it is worth. The usual shape:
//
//   Waiter:                               Signaller:
//     lock(m)                               lock(m)
//     while (!predicate)                    make predicate true
//       weft_condition_wait(c, m, when)     weft_condition_signal(c)  (or
//     ... use the state ...                   weft_condition_broadcast(c))
//     unlock(m)                             unlock(m)
//
// A wait takes its notification token while it still holds the mutex, so a
// signaller, which changes the predicate under that mutex, always notifies
// after the token was taken: no wake-up is lost. Waits block in the kernel
// at once (no spinning): they are for long, idle waits (an engine with no
// work, the end of a teardown). A hot wait should spin through
// weft_notification directly, with its wait policy.
//
// Threading: any thread may wait, signal or broadcast. A waiter may return
// without a signal meant for it (another thread's signal, a broadcast for
// a different predicate), so it always re-checks its predicate in a loop.
#ifndef WEFT_BASE_CONDITION_H_
#define WEFT_BASE_CONDITION_H_

#include <stdbool.h>

#include "base/mutex.h"
#include "base/notification.h"
#include "weft/time.h"

typedef struct weft_condition_t {
  weft_notification_t notification;
} weft_condition_t;

// Initialises |condition| (caller-owned storage; allocates nothing).
void weft_condition_initialize(weft_condition_t* condition);

// Undoes weft_condition_initialize. No thread may be waiting.
void weft_condition_deinitialize(weft_condition_t* condition);

// Called with |mutex| held: releases it, blocks until |condition| is
// signalled or broadcast, or until |deadline_ns| passes
// (WEFT_TIME_INFINITE_FUTURE: no deadline), and takes |mutex| again before
// it returns, in every case. Returns false when the deadline passed without
// a signal, true otherwise. Either way the caller re-checks its predicate:
// a true return does not say that the predicate holds.
bool weft_condition_wait(weft_condition_t* condition, weft_slim_mutex_t* mutex,
                         weft_time_t deadline_ns);

// Wakes at least one thread waiting on |condition| (all of them may wake).
// Call it with the waiters' mutex held: then no thread that starts waiting
// after the call can take the wake-up from one that was waiting before.
// Does nothing when nobody waits.
void weft_condition_signal(weft_condition_t* condition);

// Wakes every thread waiting on |condition|. May be called with or without
// the mutex held (with it, when a woken waiter may free |condition|: the
// waiter cannot return before the broadcaster lets go of the mutex).
void weft_condition_broadcast(weft_condition_t* condition);

#endif  // WEFT_BASE_CONDITION_H_
