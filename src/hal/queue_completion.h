// weft: how a queue operation ends, the same on every driver.
//
// An op that ran ends by signalling its signal list or failing it with its
// error (annotated with the op instance); an op that never ran (a wait
// failed, or its device was released) fails with a status naming why. Host
// calls run here too: what they do depends on no device.
#ifndef WEFT_HAL_QUEUE_COMPLETION_H_
#define WEFT_HAL_QUEUE_COMPLETION_H_

#include <stdbool.h>

#include "hal/queue_op.h"

// Ends |op|: signals every entry of its signal list when |status| is OK,
// otherwise fails them all with |status| (consumed) in the failure order of
// weft/semaphore.h: a semaphore the op also waits on fails only once that
// wait is reached (or fails by itself), the others at once. A signal the
// semaphore
// has already passed (another op or the host moved it past the value since
// submit) fails that semaphore with INVALID_ARGUMENT naming the op, the
// semaphore and both values, so its waiters learn of it; one that already
// failed keeps its failure.
void weft_queue_op_signal_or_fail(const weft_queue_op_t* op,
                                  weft_status_t status);

// weft_queue_op_signal_or_fail for a device whose work already moved some
// signals' payloads itself (a GPU signalling a timeline semaphore it owns):
// bit i of |published| (i < 64) says signal i's payload is there, so on
// success its value is published to the base
// (weft_semaphore_publish_value) rather than signalled again. On failure
// every signal fails as signal_or_fail says.
void weft_queue_op_signal_or_fail_published(const weft_queue_op_t* op,
                                            weft_status_t status,
                                            uint64_t published);

// Annotates |status| (consumed, returned), an error of |op|'s work, with
// where it happened: "while running queue_fill (waiting for 'a' >= 1,
// signalling 'b' = 2) on queue 0 of device 'local-task'", or "in ..." when
// the message already starts with the op's name or is a host call's own
// words (kept first, as they are). Errors of lower layers (a transient
// buffer used after dealloca, a file's short read) then say which op,
// queue and device met them.
weft_status_t weft_queue_op_annotate_failure(const weft_queue_op_t* op,
                                             weft_status_t status);
// Inline: OK, the common case, costs no call.
static inline weft_status_t weft_queue_op_annotate_error(
    const weft_queue_op_t* op, weft_status_t status) {
  return weft_status_is_ok(status) ? status
                                   : weft_queue_op_annotate_failure(op, status);
}

// The CANCELLED status of an op that never ran because its device was
// released: "queue_fill (...) on queue 0 of device 'X' was cancelled: the
// device was released while it waited" (|while_waiting|) or "... before it
// ran".
weft_status_t weft_queue_op_cancelled(const weft_queue_op_t* op,
                                      bool while_waiting);

// What an op that will not run (its device is being released, or a wait
// failed) fails its signals with, from its wait result |wait_status|
// (consumed): the release sweep's own CANCELLED when |swept| (it names the
// op already), a wait's failure annotated "so ... did not run", or, when
// its waits were reached but it had not started, CANCELLED "... before it
// ran".
weft_status_t weft_queue_op_not_run_status(const weft_queue_op_t* op,
                                           weft_status_t wait_status,
                                           bool swept);

// Ends an op that will not run: returns what its signals fail with
// (weft_queue_op_not_run_status) after telling a host call that asked
// (WEFT_HOST_CALL_FLAG_TOLD_IF_NOT_RUN). Call once per op, from the path
// that decided it will not run.
weft_status_t weft_queue_op_not_run(const weft_queue_op_t* op,
                                    weft_status_t wait_status, bool swept);

// Runs the host call |op| (kind HOST_CALL) whose waits are reached, on the
// calling thread. Sets |*out_ended| when the signals were already
// published (NON_BLOCKING) or taken over by the call (DEFERRED); otherwise
// the caller ends the op with the result. Allocates nothing.
weft_status_t weft_queue_op_run_host_call(const weft_queue_op_t* op,
                                          bool* out_ended);

#endif  // WEFT_HAL_QUEUE_COMPLETION_H_
