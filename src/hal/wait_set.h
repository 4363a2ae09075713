// weft: wait sets, parking an operation until a whole wait list is reached.
//
// Drivers use a wait set to run something (an operation, a resubmission)
// once every (semaphore, value) of a wait list is reached, without a thread
// blocking: one timepoint per entry counts down a shared atomic, and whoever
// takes it to zero calls the ready function.
//
//   void* storage = <weft_wait_set_storage_size(list.count) bytes>;
//   weft_wait_set_start((weft_wait_set_t*)storage, list, ready_fn, op);
//   ...
//   static void ready_fn(void* op, weft_status_t status) {
//     // status: OK or the first wait failure; owned here. |storage| may be
//     // freed here: nothing touches it after this call.
//   }
//
// On the first failure the remaining timepoints are cancelled and the ready
// function gets that failure (annotated with the semaphore and value) as
// soon as every timepoint has fired or been cancelled, so an operation whose
// other waits are never signalled still completes.
#ifndef WEFT_HAL_WAIT_SET_H_
#define WEFT_HAL_WAIT_SET_H_

#include <stddef.h>
#include <stdint.h>

#include "base/atomics.h"
#include "weft/semaphore.h"

// Called exactly once per start. |status| is owned by the callee: OK, or the
// first wait failure annotated "while waiting for semaphore ... to reach N".
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
  // Entries not yet fired or cancelled, plus one held by start itself until
  // every entry is registered.
  weft_atomic_uint32_t pending_count;
  // The first entry that fired with a failure.
  _Atomic(weft_wait_set_entry_t*) failed_entry;
  // Why the set was cancelled (weft_wait_set_cancel); taken by whoever
  // finishes the set.
  _Atomic(weft_status_t) cancel_reason;
  uint32_t count;
  weft_wait_set_entry_t entries[];
};

// Returns the bytes needed for a set waiting on |wait_count| entries. The
// storage must be aligned like weft_wait_set_t (8 bytes suffice).
size_t weft_wait_set_storage_size(uint32_t wait_count);

// Starts waiting on every entry of |waits| and calls |fn(user_data, status)|
// exactly once: synchronously inside this call when every entry is already
// reached (or one has failed), otherwise from whichever thread reaches the
// last entry or fails one. |set| points at weft_wait_set_storage_size(count)
// bytes owned by the caller, which must stay valid until |fn| is called (and
// may be freed inside |fn|). The semaphores in |waits| must stay alive until
// then too (the caller retains them); the |waits| arrays themselves are only
// read during this call.
void weft_wait_set_start(weft_wait_set_t* set, weft_semaphore_list_t waits,
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

#endif  // WEFT_HAL_WAIT_SET_H_
