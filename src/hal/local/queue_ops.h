// weft: the work of a queue operation on the host CPU, for the CPU drivers.
//
// local-sync runs ops inline on the thread that makes them ready and
// local-task on a queue's control process (its dispatches, command buffers
// and asynchronous file transfers take their own paths); the work is the
// same, so it is written once here.
#ifndef WEFT_HAL_LOCAL_QUEUE_OPS_H_
#define WEFT_HAL_LOCAL_QUEUE_OPS_H_

#include <stdbool.h>

#include "hal/queue_op.h"

// Does the work of |op|, whose waits are all reached, on the calling
// thread: transfers through host mappings, a dispatch's workgroups one
// after another, a command buffer replayed inline, a host call. Sets
// |*out_ended| when the op's signals were already handled (a host call
// that is NON_BLOCKING or DEFERRED). Errors are returned as the lower
// layer reported them (the caller annotates them with the op).
weft_status_t weft_local_queue_op_do(const weft_queue_op_t* op,
                                     bool* out_ended);

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

#endif  // WEFT_HAL_LOCAL_QUEUE_OPS_H_
