// weft: the queue-operation bodies both CPU drivers share.
//
// local-sync runs them inline on the thread that makes an op ready and
// local-task on a queue's control process; the work is the same, so it is
// written once here.
#ifndef WEFT_HAL_LOCAL_QUEUE_OPS_H_
#define WEFT_HAL_LOCAL_QUEUE_OPS_H_

#include <stdbool.h>

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

// Ends an op: signals every entry of |signal_list| when |status| is OK,
// otherwise fails them all with |status| (consumed).
void weft_local_queue_signal_or_fail(weft_semaphore_list_t signal_list,
                                     weft_status_t status);

// Annotates |status| (consumed, returned), an error of the work of the op
// named |op_name| ("queue_fill") on queue |queue_index| of |device|, with
// where it happened: "while running queue_fill on queue 0 of device
// 'local-task'", or "in queue_fill on queue 0 of device 'local-task'" when
// the message already starts with the op's name or is a host call's own
// words (kept first, as they are). Errors of lower layers (a transient
// buffer used after dealloca, a file's short read) then say which op,
// queue and device met them.
weft_status_t weft_local_queue_annotate_error(weft_status_t status,
                                              const char* op_name,
                                              bool is_host_call,
                                              weft_device_t* device,
                                              uint32_t queue_index);

// Runs a host call for an op whose waits are reached. Sets |*out_ended|
// when the signals were already published (NON_BLOCKING) or handed to the
// callback (DEFERRED); otherwise the caller ends the op with the result.
weft_status_t weft_local_queue_host_call(
    weft_device_t* device, weft_queue_affinity_t affinity,
    weft_host_call_fn_t fn, void* user_data, const uint64_t args[4],
    weft_host_call_flags_t flags, weft_semaphore_list_t signal_list,
    bool* out_ended);

#endif  // WEFT_HAL_LOCAL_QUEUE_OPS_H_
