// weft: local-task operation records (internal to the driver).
//
// An op record holds everything a queue operation needs after its submit
// call returned: the op's descriptor captured (hal/queue_op.h: copies of its
// lists, arrays and bytes; every semaphore and object retained) and the
// wait set that parks it. Records come from the device's
// op pool (local_task_queue.h): one pool block each, with what does not fit
// in the block spilling into an arena over the pool's larger spill blocks;
// retired records are recycled whole, so the submit path allocates nothing
// once warm.
#ifndef WEFT_DRIVERS_LOCAL_TASK_LOCAL_TASK_OP_H_
#define WEFT_DRIVERS_LOCAL_TASK_LOCAL_TASK_OP_H_

#include <stdbool.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/mpsc_list.h"
#include "drivers/local_task/block_builder.h"
#include "drivers/local_task/block_processor.h"
#include "drivers/local_task/local_task_queue.h"
#include "hal/queue_op.h"
#include "hal/wait_set.h"
#include "weft/device.h"

// weft_local_task_op_t::park_state.
#define WEFT_LOCAL_TASK_OP_PARKED 1u
// A READ or WRITE whose transfer is on the device's proactor.
#define WEFT_LOCAL_TASK_OP_IN_FILE_IO 2u

typedef struct weft_local_task_file_transfer_t weft_local_task_file_transfer_t;

struct weft_local_task_op_t {
  // The record itself (kept when the record is reused):
  // WEFT_LOCAL_TASK_OP_PARKED from park until the control process pops the
  // op, WEFT_LOCAL_TASK_OP_IN_FILE_IO while its transfer is on the
  // proactor, else 0. Park (and the file start) store it with release after
  // every field dump_pending and the shutdown sweep read; the control
  // process (the file completion) clears it under the pool's |park_mutex|,
  // and those two read it (acquire) under that mutex, so a marked op's
  // fields stay put while they look.
  weft_atomic_uint32_t park_state;
  // The pool block holding this record, and the next record of the pool.
  weft_arena_block_t* block;
  weft_local_task_op_t* all_next;

  // ---- reset for every op (from here on) ----
  // Link in the queue's ready list, the compute list, or the pool's
  // recycled list / cache (one at a time).
  weft_mpsc_entry_t entry;
  // Storage that did not fit in the block (reset when the op retires).
  weft_arena_t arena;
  // Bytes of the block's inline storage used so far.
  size_t inline_used;

  weft_local_task_queue_t* queue;
  // The op's trace id (hal/queue_trace.h); 0 when not traced.
  uint64_t trace_id;
  // When a parked op was parked (0 for ops ready at submit).
  weft_time_t submit_time;
  // Set by the shutdown sweep when it cancelled the op's waits.
  bool cancelled;
  // The wait set's result (owned): OK or the first wait failure.
  weft_status_t wait_status;

  // The op, captured (its queue_index is this queue's). A DISPATCH keeps
  // only its lists: its arguments live on in |compute.dispatch_recording|.
  weft_queue_op_t base;
  weft_wait_set_t* wait_set;  // parked ops only
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
  } compute;
};

// Takes a record from |pool| (allocating a block only when none is cached)
// and counts it live. The record is zeroed up to its inline storage.
weft_status_t weft_local_task_op_acquire(weft_local_task_op_pool_t* pool,
                                         weft_local_task_op_t** out_op);

// Returns an op that was never captured (a failed submit) to |pool|.
void weft_local_task_op_discard(weft_local_task_op_pool_t* pool,
                                weft_local_task_op_t* op);

// Captures |source| (borrowed pointers) into |op|'s storage
// (weft_queue_op_capture: the waits are kept even when reached, as errors
// name them), compiles a DISPATCH into its one-dispatch recording, and
// makes room for a wait set when the op will |park|. On failure nothing is
// retained and |op| can be discarded.
weft_status_t weft_local_task_op_capture(weft_local_task_op_t* op,
                                         const weft_queue_op_t* source,
                                         bool park);

// Returns |byte_length| bytes (16-byte aligned, zeroed) of |op|'s storage:
// its block's inline bytes first, then its arena. Freed when it retires.
weft_status_t weft_local_task_op_allocate(weft_local_task_op_t* op,
                                          size_t byte_length, void** out_ptr);

// Releases what weft_local_task_op_capture retained, frees the spilled
// storage, returns the record to |pool| and counts it retired. |op| must
// not be touched afterwards.
void weft_local_task_op_retire(weft_local_task_op_pool_t* pool,
                               weft_local_task_op_t* op);

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

// Ends an op that will not run (weft_queue_op_not_run): returns the status
// it fails with (its wait failure, the shutdown sweep's cancellation, or
// CANCELLED because the device is shutting down) after telling a host call
// that asked. Once per op (local_task_queue.c). Consumes |op->wait_status|.
weft_status_t weft_local_task_op_not_run(weft_local_task_op_t* op);

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

// Describes an op marked WEFT_LOCAL_TASK_OP_IN_FILE_IO (pool's park mutex
// held) into |buffer|: what it transfers and where.
void weft_local_task_file_describe(const weft_local_task_op_t* op,
                                   char* buffer, size_t capacity);

// Initialises |queue|'s compute process and schedules it
// (local_task_compute.c).
void weft_local_task_compute_initialize(weft_local_task_queue_t* queue);

// Starts a DISPATCH or EXECUTE |op| on the control process (running on
// worker |worker_index|): prepares its context, then runs it right there
// when only one worker could work on it, or hands it to the compute
// process. Every outcome ends in finish + release.
void weft_local_task_compute_start(weft_local_task_queue_t* queue,
                                   weft_local_task_op_t* op,
                                   uint32_t worker_index);

// Shutdown, first step: the compute process's running item finishes;
// queued items fail with CANCELLED as they come up.
void weft_local_task_compute_cancel(weft_local_task_queue_t* queue);

// Cancels the compute process (shutdown, once every op retired).
void weft_local_task_compute_stop(weft_local_task_queue_t* queue);

#endif  // WEFT_DRIVERS_LOCAL_TASK_LOCAL_TASK_OP_H_
