// weft: wait sets, the one asynchronous wait on several semaphores.
//
// A wait set runs something (an operation, a resubmission, a waiting
// thread's wake-up, a coroutine's resumption) once a wait list is reached,
// without a thread blocking: every entry of the list (ALL) or one of them
// (ANY). One timepoint per entry counts down a shared atomic, and whoever
// takes it to zero calls the ready function, exactly once, with the reason:
//
//   void* storage = <weft_wait_set_storage_size(list.count) bytes>;
//   weft_wait_set_start((weft_wait_set_t*)storage, WEFT_WAIT_MODE_ALL, list,
//                       deadline, ready_fn, op);
//   ...
//   static void ready_fn(void* op, weft_status_t status) {
//     // status owned here: OK, the first wait failure, the cancel reason,
//     // or the bare DEADLINE_EXCEEDED code. |storage| may be freed here:
//     // nothing touches it after this call.
//   }
//
// The first decisive entry (a failure, or in ANY mode the first one
// reached) takes the remaining timepoints off their semaphores, so a set
// whose other waits are never signalled still completes. Nothing here
// allocates: a failure is the semaphore's own (annotated), a deadline is
// the bare code, and formatting a message for a user is the caller's job
// (weft_semaphore_list_wait does it when it returns).
//
// The set keeps no clock: its owner checks the deadline
// (weft_wait_set_check_deadline) when it wakes, so a blocking wait does it
// after its sleep times out and a loop once per turn. Drivers and callers
// only start, cancel and check sets; the fields are this file's.
#ifndef WEFT_HAL_WAIT_SET_H_
#define WEFT_HAL_WAIT_SET_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/atomics.h"
#include "weft/semaphore.h"
#include "weft/time.h"

// Called exactly once per start. |status| is owned by the callee: OK, the
// first wait failure annotated "while waiting for semaphore ... to reach N",
// the reason given to weft_wait_set_cancel, or the bare DEADLINE_EXCEEDED
// code after weft_wait_set_check_deadline found the deadline passed.
typedef void (*weft_wait_set_ready_fn_t)(void* user_data,
                                         weft_status_t status);

typedef struct weft_wait_set_t weft_wait_set_t;

// One timepoint of a set.
typedef struct weft_wait_set_entry_t {
  weft_timepoint_t timepoint;
  weft_wait_set_t* set;
  // The semaphore and value waited on (the timepoint's own fields are
  // cleared when it fires).
  weft_semaphore_t* semaphore;
  uint64_t value;
  // The failure this entry fired with, owned by the entry until published
  // through |set->failed_entry|.
  weft_status_t failure;
} weft_wait_set_entry_t;

struct weft_wait_set_t {
  weft_wait_set_ready_fn_t fn;
  void* user_data;
  weft_wait_mode_t mode;
  // Absolute; WEFT_TIME_INFINITE_FUTURE for none.
  weft_time_t deadline;
  // Entries not yet fired or cancelled, plus one held by start itself until
  // every entry is registered.
  weft_atomic_uint32_t pending_count;
  // The entry whose firing decided the set: the first that failed, or in
  // ANY mode the first reached.
  _Atomic(weft_wait_set_entry_t*) decided_entry;
  // Why the set was cancelled (weft_wait_set_cancel); taken by whoever
  // finishes the set.
  _Atomic(weft_status_t) cancel_reason;
  uint32_t count;
  weft_wait_set_entry_t entries[];
};

// Returns the bytes needed for a set waiting on |wait_count| entries. The
// storage must be aligned like weft_wait_set_t (8 bytes suffice).
size_t weft_wait_set_storage_size(uint32_t wait_count);

// Starts waiting on |waits| per |mode| (ALL: every entry, ANY: one) and
// calls |fn(user_data, status)| exactly once: synchronously inside this
// call when the list is already reached (or an entry has failed), otherwise
// from whichever thread reaches it or fails an entry, or cancels the set.
// An empty list is reached in either mode. |deadline| is what
// weft_wait_set_check_deadline compares with (WEFT_TIME_INFINITE_FUTURE:
// none). |set| points at weft_wait_set_storage_size(count)
// bytes owned by the caller, which must stay valid until |fn| is called (and
// may be freed inside |fn|). The semaphores in |waits| must stay alive until
// then too (the caller retains them); the |waits| arrays themselves are only
// read during this call.
void weft_wait_set_start(weft_wait_set_t* set, weft_wait_mode_t mode,
                         weft_semaphore_list_t waits, weft_time_t deadline,
                         weft_wait_set_ready_fn_t fn, void* user_data);

// weft_wait_set_start for a device that waits on some semaphores natively:
// entry i with bit i of |issued_entries| set (i < 64) counts as reached as
// soon as an op that signals its value is issued to the device that owns
// the semaphore's payload (weft_semaphore_register_issued_timepoint). The
// ready function then means "every wait is reached or can be waited on
// natively"; the owner tells which by the values.
void weft_wait_set_start_issued(weft_wait_set_t* set, weft_wait_mode_t mode,
                                weft_semaphore_list_t waits,
                                uint64_t issued_entries, weft_time_t deadline,
                                weft_wait_set_ready_fn_t fn, void* user_data);

// Cancels a started set: every entry still registered is taken off its
// semaphore. When that finishes the set, |fn| runs (inside this call or on
// the thread of an entry firing at the same time) with |reason| (consumed),
// unless an entry failed first: then with that failure and |reason| is
// dropped. Returns how many entries were taken off; 0 means every entry had
// already fired (the set finished or is finishing as usual, with OK or its
// failure) and |reason| was dropped. The caller keeps |set|'s storage valid
// for the duration of the call (its owner frees it only after |fn| ran, so
// holding a lock that owner takes first is enough). Call it at most once
// per start.
uint32_t weft_wait_set_cancel(weft_wait_set_t* set, weft_status_t reason);

// When |now| is at or past the set's deadline, cancels it with the bare
// DEADLINE_EXCEEDED code (allocating nothing) and returns true; otherwise
// does nothing and returns false. The same rules as weft_wait_set_cancel
// (at most once per start, storage valid during the call); a set that
// finished meanwhile finishes with its own result.
bool weft_wait_set_check_deadline(weft_wait_set_t* set, weft_time_t now);

#endif  // WEFT_HAL_WAIT_SET_H_
