// weft: the queue-operation bodies both CPU drivers share.
//
// local-sync runs them inline on the thread that makes an op ready and
// local-task on a queue's control process; the work is the same, so it is
// written once here.
#ifndef WEFT_HAL_LOCAL_QUEUE_OPS_H_
#define WEFT_HAL_LOCAL_QUEUE_OPS_H_

#include <stdbool.h>

#include "hal/queue_describe.h"
#include "weft/device.h"

// Reads |length| bytes of |file| at |file_offset| into |buffer| at
// |buffer_offset|: a copy for memory files, a mapped pread loop otherwise.
// The ranges were validated at submit.
weft_status_t weft_local_queue_read(weft_file_t* file, uint64_t file_offset,
                                    weft_buffer_t* buffer,
                                    weft_device_size_t buffer_offset,
                                    weft_device_size_t length);

// Writes |length| bytes of |buffer| at |buffer_offset| into |file| at
// |file_offset|.
weft_status_t weft_local_queue_write(weft_buffer_t* buffer,
                                     weft_device_size_t buffer_offset,
                                     weft_file_t* file, uint64_t file_offset,
                                     weft_device_size_t length);

// Ends |op|: signals every entry of its signal list when |status| is OK,
// otherwise fails them all with |status| (consumed). A signal the semaphore
// has already passed (another op or the host moved it past the value since
// submit) fails that semaphore with INVALID_ARGUMENT naming the op, the
// semaphore and both values, so its waiters learn of it; one that already
// failed keeps its failure.
void weft_local_queue_signal_or_fail(const weft_queue_op_identity_t* op,
                                     weft_status_t status);

// Annotates |status| (consumed, returned), an error of |op|'s work, with
// where it happened: "while running queue_fill (waiting for 'a' >= 1,
// signalling 'b' = 2) on queue 0 of device 'local-task'", or "in ..." when
// the message already starts with the op's name or is a host call's own
// words (kept first, as they are). Errors of lower layers (a transient
// buffer used after dealloca, a file's short read) then say which op,
// queue and device met them.
weft_status_t weft_local_queue_annotate_error(const weft_queue_op_identity_t* op,
                                              bool is_host_call,
                                              weft_status_t status);

// The CANCELLED status of an op that never ran because its device was
// released: "queue_fill (...) on queue 0 of device 'X' was cancelled: the
// device was released while it waited" (|while_waiting|) or "... before it
// ran".
weft_status_t weft_local_queue_cancelled(const weft_queue_op_identity_t* op,
                                         bool while_waiting);

// What an op that will not run (its device is being released, or a wait
// failed) fails its signals with, from its wait result |wait_status|
// (consumed): the release sweep's own CANCELLED when |swept| (it names the
// op already), a wait's failure annotated "so ... did not run", or, when
// its waits were reached but it had not started, CANCELLED "... before it
// ran". The same on every CPU driver.
weft_status_t weft_local_queue_not_run_status(
    const weft_queue_op_identity_t* op, weft_status_t wait_status, bool swept);

// Runs a host call for an op whose waits are reached. Sets |*out_ended|
// when the signals were already published (NON_BLOCKING) or handed to the
// callback (DEFERRED); otherwise the caller ends the op with the result.
weft_status_t weft_local_queue_host_call(
    weft_device_t* device, weft_queue_affinity_t affinity,
    weft_host_call_fn_t fn, void* user_data, const uint64_t args[4],
    weft_host_call_flags_t flags, const weft_queue_op_identity_t* op,
    bool* out_ended);

#endif  // WEFT_HAL_LOCAL_QUEUE_OPS_H_
