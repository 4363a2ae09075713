// weft: the local-task queue.
//
// An operation's path:
//   submit (any thread): take an op record from the device's queue
//     scheduler (hal/queue_scheduler.h; no allocation once warm), copy the
//     arguments, retain what they name;
//     - every wait already reached: push the op on the queue's ready list
//       and wake the control process (no wait set, no lock);
//     - otherwise park it on the scheduler (its parked list is what
//       dump_pending and shutdown see); the last wait reached (or the first
//       failed) hands it back, and the ready function pushes it on the
//       ready list and wakes the control process, on whichever thread did
//       that.
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
#include "hal/queue_scheduler.h"
#include "task/process.h"
#include "weft/device.h"

typedef struct weft_local_task_device_t weft_local_task_device_t;
typedef struct weft_local_task_op_t weft_local_task_op_t;

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
  // Drains that lingered (a yield every 64 of them). Owned by the control
  // drain.
  uint32_t linger_polls;
} weft_local_task_queue_t;

// Initialises |out_queue| (storage owned by the device) and starts its
// processes on the device's executor.
weft_status_t weft_local_task_queue_initialize(
    weft_local_task_device_t* device, uint32_t index,
    weft_local_task_queue_t* out_queue);

// First step of shutdown (device->shutting_down already set, parked ops
// already cancelled by the scheduler's sweep): wakes the control process,
// which fails every ready op with CANCELLED, and aborts the dispatch or
// command buffer the compute process is running.
void weft_local_task_queue_cancel_pending(weft_local_task_queue_t* queue);

// Last step of shutdown, once every op retired: cancels the queue's
// processes (the executor's release completes and releases them).
void weft_local_task_queue_stop(weft_local_task_queue_t* queue);

// Frees what the queue holds. The executor must be gone.
void weft_local_task_queue_deinitialize(weft_local_task_queue_t* queue);

// Initialises the device's scheduler with the queues' ready function.
void weft_local_task_device_initialize_scheduler(
    weft_local_task_device_t* device, weft_allocator_t allocator);

// Queues an op (the device's queue_submit; validated by device.c) on the
// queue its affinity selects: ready at once when every wait is reached,
// parked otherwise. On failure nothing was queued and the signals are
// untouched.
weft_status_t weft_local_task_device_queue_submit(weft_device_t* device,
                                                  const weft_queue_op_t* op);

#endif  // WEFT_DRIVERS_LOCAL_TASK_LOCAL_TASK_QUEUE_H_
