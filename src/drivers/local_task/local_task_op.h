// weft: local-task operation records (internal to the driver).
//
// A queue op's record comes from the device's queue scheduler
// (hal/queue_scheduler.h): the op captured (copies of its lists, arrays and
// bytes; every semaphore and object retained), its parking and the
// registry are the scheduler's; this is the driver's part of the record:
// the queue it runs on and what the compute path and file transfers add.
// Records are recycled whole, so the submit path allocates nothing once
// warm.
#ifndef WEFT_DRIVERS_LOCAL_TASK_LOCAL_TASK_OP_H_
#define WEFT_DRIVERS_LOCAL_TASK_LOCAL_TASK_OP_H_

#include <stdbool.h>
#include <stdint.h>

#include "base/mpsc_list.h"
#include "drivers/local_task/block_builder.h"
#include "drivers/local_task/block_processor.h"
#include "drivers/local_task/local_task_queue.h"
#include "hal/queue_op.h"
#include "hal/queue_scheduler.h"
#include "weft/device.h"

typedef struct weft_local_task_file_transfer_t weft_local_task_file_transfer_t;

struct weft_local_task_op_t {
  weft_local_task_queue_t* queue;
  // READ and WRITE on the proactor: the transfer (in the record), or NULL.
  weft_local_task_file_transfer_t* file_transfer;

  // DISPATCH and EXECUTE: the recording and this submission's context.
  struct {
    // The one-dispatch recording in this record (DISPATCH), or NULL.
    weft_block_recording_t* dispatch_recording;
    // What runs: |dispatch_recording| or the command buffer's recording.
    const weft_block_recording_t* recording;
    weft_block_processor_context_t* context;
    // Per-worker kernel scratch when the workers' own is too small for the
    // recording (|scratch_size| bytes per worker, in the record), or NULL.
    uint8_t* scratch;
    size_t scratch_size;
    // EXECUTE on the compute process: the processor's result, taken by the
    // worker that saw it complete and published by the one that frees it.
    weft_status_t status;
    // EXECUTE: the command buffer's command behind a failure (UINT32_MAX:
    // none), written by the processor (block_processor.h).
    uint32_t failed_command;
    // Issued by a host outside this device's drains (weft_local_task_issue),
    // which most likely waits for it next, assisting: when a worker installs
    // it later (the lane was busy at the issue), the wakes for its tiles
    // count that host as taking a CPU, as the wakes at its issue did.
    bool host_issued;
  } compute;
};

// The driver bytes of a record: this struct, rounded to 16.
#define WEFT_LOCAL_TASK_OP_SIZE \
  ((sizeof(weft_local_task_op_t) + 15) & ~(size_t)15)

// The scheduler's record holding |op| (right after it: no load, so the
// thread running an op does not chase a pointer before it can fetch the
// op's lines). Its |entry| links the op in the queue's ready list or the
// compute list.
static inline weft_scheduled_op_t* weft_local_task_op_record(
    const weft_local_task_op_t* op) {
  return weft_scheduled_op_from_driver((void*)op, WEFT_LOCAL_TASK_OP_SIZE);
}

// The op captured in |op|'s record.
static inline weft_queue_op_t* weft_local_task_op_base(
    const weft_local_task_op_t* op) {
  return &weft_local_task_op_record(op)->base;
}

// The op whose record's |entry| is |entry|.
static inline weft_local_task_op_t* weft_local_task_op_from_entry(
    weft_mpsc_entry_t* entry) {
  return entry ? (weft_local_task_op_t*)((uint8_t*)weft_container_of(
                                             entry, weft_scheduled_op_t,
                                             entry) -
                                         WEFT_LOCAL_TASK_OP_SIZE)
               : NULL;
}

// Takes a record for |queue| from the device's scheduler (allocating only
// when none is cached) and captures |source| (borrowed pointers) into it
// (the waits are kept even when reached, as errors name them), compiling a
// DISPATCH into its one-dispatch recording and making room for a wait set
// when the op will |park|. On failure nothing is retained or taken.
weft_status_t weft_local_task_op_acquire(weft_local_task_queue_t* queue,
                                         const weft_queue_op_t* source,
                                         bool park,
                                         weft_local_task_op_t** out_op);

// Returns |byte_length| bytes (16-byte aligned, zeroed) of |op|'s storage.
// Freed when it retires.
static inline weft_status_t weft_local_task_op_allocate(
    weft_local_task_op_t* op, size_t byte_length, void** out_ptr) {
  return weft_scheduled_op_allocate(weft_local_task_op_record(op), byte_length,
                                    out_ptr);
}

// Releases what the compute path and the capture hold and recycles the
// record. |op| must not be touched afterwards.
void weft_local_task_op_retire(weft_local_task_op_t* op);

//===----------------------------------------------------------------------===//
// Between the queue and its compute process (driver-internal)
//===----------------------------------------------------------------------===//

// Signals |op|'s semaphores when |status| (consumed) is OK, otherwise fails
// them with it (local_task_queue.c). An EXECUTE first ends its processor
// context and drops its command buffer (which holds the device: the host
// may release both once it sees the signal, and the device's last
// reference must not be left to a worker), so no worker may still be inside
// its context; a DISPATCH may finish while workers are (two-phase).
void weft_local_task_op_finish(weft_local_task_op_t* op, weft_status_t status);

// Annotates an error (|status|, consumed and returned) of |op|'s work with
// the op, its queue and its device (weft_queue_op_annotate_error), and
// for a command buffer with the command that failed.
weft_status_t weft_local_task_annotate_error(weft_local_task_op_t* op,
                                             weft_status_t status);

// Retires |op| and wakes a shutting-down device when it was the last op
// (local_task_queue.c). |op| must not be touched afterwards.
void weft_local_task_op_release(weft_local_task_op_t* op);

// True when the READ or WRITE |op| goes through the device's proactor
// (local_task_file.c): an fd file that is not a stream, a device with a
// proactor, and bytes to move. Other transfers run synchronously on the
// control process.
bool weft_local_task_file_is_async(const weft_local_task_op_t* op);

// Starts the READ or WRITE |op| (weft_local_task_file_is_async) on the
// control process: maps the buffer range and submits the transfer to the
// proactor. The completion (on a proactor thread) unmaps, signals or fails
// the op and releases it; a failure to start does so at once. Every outcome
// ends in finish + release.
void weft_local_task_file_start(weft_local_task_op_t* op);

// Describes an op in file I/O (tracked by the scheduler, whose lock keeps
// it put) into |buffer|: what it transfers and where.
void weft_local_task_file_describe(const weft_scheduled_op_t* record,
                                   char* buffer, size_t capacity);

// Initialises |queue|'s compute process and schedules it
// (local_task_compute.c).
void weft_local_task_compute_initialize(weft_local_task_queue_t* queue);

// Starts a DISPATCH or EXECUTE |op| for the control step (running on
// drainer |worker_index|): prepares its context, then runs it right there
// when only one worker could work on it and |may_run_here| (the control
// process itself), or hands it to the compute process. Every outcome ends
// in finish + release.
void weft_local_task_compute_start(weft_local_task_queue_t* queue,
                                   weft_local_task_op_t* op,
                                   uint32_t worker_index, bool may_run_here);

// Shutdown, first step: the compute process's running item finishes;
// queued items fail with CANCELLED as they come up.
void weft_local_task_compute_cancel(weft_local_task_queue_t* queue);

// Cancels the compute process (shutdown, once every op retired).
void weft_local_task_compute_stop(weft_local_task_queue_t* queue);

#endif  // WEFT_DRIVERS_LOCAL_TASK_LOCAL_TASK_OP_H_
