// weft: the life of a queue-ordered buffer's memory, for every driver.
//
// A buffer from weft_device_queue_alloca exists at once; its memory only
// between the ALLOCA op and the DEALLOCA op. Every driver's transient
// buffer keeps the same four states and says the same words when one is
// used out of them:
//   RESERVED -> COMMITTING -> COMMITTED -> DECOMMITTED
// COMMITTED is published with release after the memory is in place, so a
// reader that acquires it sees the memory; a failed commit goes back to
// RESERVED (it may be retried).
#ifndef WEFT_HAL_QUEUE_ORDERED_STATE_H_
#define WEFT_HAL_QUEUE_ORDERED_STATE_H_

#include <stdbool.h>

#include "base/atomics.h"
#include "weft/buffer.h"
#include "weft/status.h"

typedef struct weft_queue_ordered_state_t {
  weft_atomic_uint32_t value;
} weft_queue_ordered_state_t;

// RESERVED: the alloca has not run.
void weft_queue_ordered_state_initialize(weft_queue_ordered_state_t* state);

// True when the memory is there (acquire: the caller may use it).
bool weft_queue_ordered_state_is_committed(
    const weft_queue_ordered_state_t* state);

// OK when the memory is there; otherwise FAILED_PRECONDITION saying
// "transient buffer (N bytes) used before its alloca ran" (or "after its
// dealloca ran"), N being |byte_length|.
weft_status_t weft_queue_ordered_state_check(
    const weft_queue_ordered_state_t* state, weft_device_size_t byte_length);

// Claims the commit (RESERVED -> COMMITTING), so a second, misused commit
// cannot race it: FAILED_PRECONDITION "... is already committed" (or
// "decommitted") when it is not RESERVED.
weft_status_t weft_queue_ordered_state_begin_commit(
    weft_queue_ordered_state_t* state, weft_device_size_t byte_length);

// Ends a claimed commit: COMMITTED (release) when |committed|, back to
// RESERVED otherwise.
void weft_queue_ordered_state_end_commit(weft_queue_ordered_state_t* state,
                                         bool committed);

// Claims the decommit (COMMITTED -> DECOMMITTED, acquire: the caller then
// frees what commit published); the error of weft_queue_ordered_state_check
// otherwise. The caller frees the memory after an OK.
weft_status_t weft_queue_ordered_state_decommit(
    weft_queue_ordered_state_t* state, weft_device_size_t byte_length);

#endif  // WEFT_HAL_QUEUE_ORDERED_STATE_H_
