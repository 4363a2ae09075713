// weft cuda driver: the record of one queue op, shared by the queue
// (cuda_queue.c) and the file transfers (cuda_file.c).
#ifndef WEFT_DRIVERS_CUDA_CUDA_OP_H_
#define WEFT_DRIVERS_CUDA_CUDA_OP_H_

#include <stdbool.h>

#include "base/atomics.h"
#include "drivers/cuda/cuda_device.h"
#include "hal/queue_op.h"
#include "hal/queue_scheduler.h"

// The driver's part of a queue op record (hal/queue_scheduler.h): the
// scheduler owns the record, the captured op, its parking and its
// registry; this is what issue and completion add.
// It sits right before its record (weft_scheduled_op_from_driver), so
// each finds the other by arithmetic.
struct weft_cuda_op_t {
  // Link in the device's ready, issued or transfer FIFO (guarded by its
  // mutex).
  weft_cuda_op_t* next;
  // Link in the device's list of issued ops whose signals are still to be
  // announced to their semaphores (weft_semaphore_advance_issued).
  weft_cuda_op_t* advance_next;
  weft_cuda_device_t* device;
  // The queue (stream and completion thread) it runs on, from its affinity.
  weft_cuda_queue_t* queue;
  // The op's own path (issue -> completion, or the failure that ends it)
  // and, while it waits to be announced, the announcement. The last to let
  // go retires the record.
  weft_atomic_uint32_t ref_count;
  // Issued ops: the event recorded after the work, the status word its
  // dispatches write, the waits met in-stream (|device_waits|: a failed
  // one upstream fails this op at completion) and an error met while
  // issuing (failing the op once the stream reaches it).
  weft_cuda_event_t* event;
  // Its status slots in the device's ring (dispatches: 1; executes: one
  // per dispatch of the command buffer; 0 for other ops).
  uint32_t status_slot;
  uint32_t status_slot_count;
  // The stream operations its issue queued (counted against its queue's
  // WEFT_CUDA_MAX_STREAM_ENTRIES until it completes).
  uint32_t stream_entries;
  // The waits its issue left to the stream (hal/gpu/op_result.h).
  uint64_t device_waits;
  weft_status_t issue_status;
  // The epoch its events' times are measured from (cuda_device.h; every
  // issued op where one could be had), and for traced ops the timed event
  // before the work; both retained.
  weft_cuda_event_t* trace_start;
  weft_cuda_event_t* trace_epoch;
  weft_time_t trace_epoch_ns;
  weft_time_t trace_issue_ns;  // when it was issued (its start recorded)
};

// The driver bytes each record carries: a weft_cuda_op_t, rounded to 16.
#define WEFT_CUDA_OP_SIZE ((sizeof(weft_cuda_op_t) + 15) & ~(size_t)15)

// The scheduler's record holding |op|, and the captured op in it (the
// record is the scheduler's to change, whatever the caller may do to |op|).
static inline weft_scheduled_op_t* weft_cuda_op_record(
    const weft_cuda_op_t* op) {
  return weft_scheduled_op_from_driver((weft_cuda_op_t*)op, WEFT_CUDA_OP_SIZE);
}
static inline weft_queue_op_t* weft_cuda_op_base(const weft_cuda_op_t* op) {
  return &weft_cuda_op_record(op)->base;
}

// Drops a reference; the last retires the record.
void weft_cuda_op_release(weft_cuda_op_t* op);

// Ends the issue of |op| whose work is on the dispatch stream (|status|,
// consumed, is what queuing it met): records its event, binds its
// signals' device timepoints and hands it to the completion thread.
// Called with the device mutex held and the context current.
void weft_cuda_op_finish_issue(weft_cuda_device_t* device, weft_cuda_op_t* op,
                               weft_status_t status);

static inline void weft_cuda_fifo_push(weft_cuda_op_fifo_t* fifo, weft_cuda_op_t* op) {
  op->next = NULL;
  if (fifo->tail) {
    fifo->tail->next = op;
  } else {
    fifo->head = op;
  }
  fifo->tail = op;
  ++fifo->count;
}

// Unlinks |op| whose predecessor is |previous| (NULL for the head).
static inline void weft_cuda_fifo_unlink(weft_cuda_op_fifo_t* fifo,
                                  weft_cuda_op_t* previous,
                                  weft_cuda_op_t* op) {
  if (previous) {
    previous->next = op->next;
  } else {
    fifo->head = op->next;
  }
  if (fifo->tail == op) fifo->tail = previous;
  op->next = NULL;
  --fifo->count;
}

#endif  // WEFT_DRIVERS_CUDA_CUDA_OP_H_
