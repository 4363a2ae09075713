// weft: the local-task queue.
//
// An operation's path:
//   submit (any thread): take an op record from the device's pool (no
//     allocation once warm), copy the arguments, retain what they name;
//     - every wait already reached: push the op on the queue's ready list
//       and wake the control process (no wait set, no lock);
//     - otherwise park it: mark the record parked (for dump_pending and
//       shutdown, which walk the device's records) and start a wait set on
//       its wait list; the last wait reached (or the first failed) pushes it
//       on the ready list and wakes the control process, on whichever
//       thread did that.
//   control process (budget 1, one worker at a time): pops ready ops in
//     FIFO order and runs each: transfers, alloca/dealloca, barriers and
//     host calls inline; dispatches and command buffers go to the compute
//     process; reads and writes of fd files go to the device's proactor
//     (local_task_file.c; inline when the device has none or the file is a
//     stream; memory files are copies, inline). An op run inline signals
//     (or fails) its semaphores and retires at once; a file transfer does
//     so on the proactor's thread when it completes.
//   compute process (budget N): drains the queued dispatches and command
//     buffers cooperatively on every worker. Completion is two-phase: the
//     worker that finishes an item signals its semaphores at once; the item
//     and its op are freed by the last worker to leave it.
//
// Failures: a failed wait fails the op's signals with the wait's failure
// (the original message, annotated); a failed op fails its signals with its
// error. Shutdown (the device's last release) cancels parked and ready ops
// with CANCELLED naming the op; file transfers already on the proactor
// complete normally.
//
// Threading: submissions, signals and dump_pending may come from any thread
// at any time before the device's last release.
#ifndef WEFT_DRIVERS_LOCAL_TASK_LOCAL_TASK_QUEUE_H_
#define WEFT_DRIVERS_LOCAL_TASK_LOCAL_TASK_QUEUE_H_

#include <stdalign.h>
#include <stdio.h>

#include "base/arena.h"
#include "base/atomics.h"
#include "base/mpsc_list.h"
#include "base/mutex.h"
#include "hal/diagnostics.h"
#include "hal/queue_op.h"
#include "task/process.h"
#include "weft/device.h"

typedef struct weft_local_task_device_t weft_local_task_device_t;
typedef struct weft_local_task_op_t weft_local_task_op_t;

//===----------------------------------------------------------------------===//
// Op records
//===----------------------------------------------------------------------===//

// The op records of a device. Each record is one block of |block_pool|;
// storage that does not fit (a long update, a dispatch's recording, a
// command buffer's processor context) spills into an arena over the larger
// blocks of |spill_pool|. Records are recycled, never freed, until the
// device is destroyed: retiring pushes one on |recycled| (lock-free, any
// thread); submitters take records from |cache| under |cache_mutex|,
// refilling it from |recycled| with one exchange.
typedef struct weft_local_task_op_pool_t {
  weft_block_pool_t block_pool;
  weft_block_pool_t spill_pool;
  // Every record ever made, for dump_pending, the shutdown sweep and
  // destroy (guarded by |cache_mutex|).
  weft_local_task_op_t* all_head;
  weft_slim_mutex_t cache_mutex;
  weft_mpsc_entry_t* cache;  // guarded by |cache_mutex|
  // Orders clearing a record's park_state (control processes, once per
  // batch) against dump_pending and the shutdown sweep reading parked ops.
  // Parking itself takes no lock. Lock order: park_mutex, cache_mutex, a
  // semaphore's.
  weft_slim_mutex_t park_mutex;
  alignas(64) weft_mpsc_list_t recycled;
  // Ops live = taken - retired. Submitters count |taken_count| and
  // retirers |retired_count|, each on a line of its own, so neither side
  // pulls the other's line on the hot path; only shutdown and dump_pending
  // read both.
  alignas(64) weft_atomic_uint64_t taken_count;
  alignas(64) weft_atomic_uint64_t retired_count;
  // Wait-set ready callbacks between their push and their last touch of the
  // device (they still touch it after the op may have retired): destroy
  // waits for this to drop to 0 before it frees anything.
  alignas(64) weft_atomic_uint32_t readying_count;
} weft_local_task_op_pool_t;

void weft_local_task_op_pool_initialize(weft_allocator_t allocator,
                                        weft_local_task_op_pool_t* out_pool);
// Frees every record. Every op must have retired.
void weft_local_task_op_pool_deinitialize(weft_local_task_op_pool_t* pool);

// Ops taken and not yet retired (a snapshot; exact once nothing is
// submitted any more).
int64_t weft_local_task_op_pool_live_count(weft_local_task_op_pool_t* pool);

// True when no op is live. Seq_cst loads: the shutdown handshake (see
// weft_local_task_op_retire).
bool weft_local_task_op_pool_is_idle(weft_local_task_op_pool_t* pool);

// True while a ready callback is between its count and its last touch of
// the device.
bool weft_local_task_op_pool_is_readying(weft_local_task_op_pool_t* pool);

//===----------------------------------------------------------------------===//
// Queues
//===----------------------------------------------------------------------===//

// The compute process of a queue (local_task_compute.c): runs the queue's
// dispatches and command buffers, one at a time in FIFO order, each on as
// many workers as its current region can keep busy.
//
// |state| counts the workers inside the current item (low 32 bits) and
// carries two flags:
//   CLOSED     the current item completed (its signals are published) or
//              there is none; workers entering leave at once.
//   RELEASING  one worker owns the lane: it frees the completed item and
//              installs the next one (it took the count to zero with CLOSED
//              set, so nobody can still be inside the old item).
// A worker reads |current| only after entering with neither flag set, and
// the item is freed only by the RELEASING owner, so an item is never freed
// under a worker (two-phase completion: signal at completion, free when the
// last worker left).
typedef struct weft_local_task_compute_t {
  weft_process_t process;
  // Items pushed by the control process, not yet taken by a releaser.
  alignas(64) weft_mpsc_list_t incoming;
  alignas(64) weft_atomic_uint64_t state;
  _Atomic(weft_local_task_op_t*) current;
  // Taken from |incoming| and not yet installed; owned by the RELEASING
  // worker.
  weft_local_task_op_t* queued_head;
  weft_local_task_op_t* queued_tail;
} weft_local_task_compute_t;

typedef struct weft_local_task_queue_t {
  weft_local_task_device_t* device;  // owns the queue
  uint32_t index;

  weft_local_task_compute_t compute;

  // Pushed by whoever makes an op ready; popped by the control process.
  alignas(64) weft_mpsc_list_t ready;

  // Owned by the control drain (one worker at a time).
  alignas(64) weft_process_t control;
  // Popped from |ready| and not yet run, oldest first.
  weft_local_task_op_t* run_head;
  weft_local_task_op_t* run_tail;
  // When the last drain that ran an op ended (see control_linger_ns).
  weft_time_t last_work_time;
} weft_local_task_queue_t;

// Initialises |out_queue| (storage owned by the device) and starts its
// processes on the device's executor.
weft_status_t weft_local_task_queue_initialize(
    weft_local_task_device_t* device, uint32_t index,
    weft_local_task_queue_t* out_queue);

// First step of shutdown (device->shutting_down already set): cancels every
// parked op's waits so that it becomes ready with CANCELLED, wakes the
// control process, which fails every ready op with CANCELLED, and aborts
// the dispatch or command buffer the compute process is running.
void weft_local_task_queue_cancel_pending(weft_local_task_queue_t* queue);

// Last step of shutdown, once every op retired: cancels the queue's
// processes (the executor's release completes and releases them).
void weft_local_task_queue_stop(weft_local_task_queue_t* queue);

// Frees what the queue holds. The executor must be gone.
void weft_local_task_queue_deinitialize(weft_local_task_queue_t* queue);

// Describes the queue's parked ops and those in file I/O (the ones whose
// records stay put while looked at) to |visit|; returns how many.
uint64_t weft_local_task_queue_for_each_pending(
    weft_local_task_queue_t* queue, weft_pending_op_visit_fn_t visit,
    void* user_data);

// Queues an op (the device's queue_submit; validated by device.c) on the
// queue its affinity selects: ready at once when every wait is reached,
// parked otherwise. On failure nothing was queued and the signals are
// untouched.
weft_status_t weft_local_task_device_queue_submit(weft_device_t* device,
                                                  const weft_queue_op_t* op);

#endif  // WEFT_DRIVERS_LOCAL_TASK_LOCAL_TASK_QUEUE_H_
