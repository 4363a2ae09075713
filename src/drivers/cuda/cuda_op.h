// weft cuda driver: the record of one queue op, shared by the queue
// (cuda_queue.c) and the file transfers (cuda_file.c).
#ifndef WEFT_DRIVERS_CUDA_CUDA_OP_H_
#define WEFT_DRIVERS_CUDA_CUDA_OP_H_

#include <stdbool.h>

#include "base/atomics.h"
#include "drivers/cuda/cuda_device.h"
#include "hal/queue_op.h"
#include "hal/wait_set.h"

struct weft_cuda_op_t {
  // Link in the device's ready, issued or transfer FIFO (guarded by its
  // mutex).
  weft_cuda_op_t* next;
  // Links in the device's list of held ops (guarded by its mutex).
  weft_cuda_op_t* pending_prev;
  weft_cuda_op_t* pending_next;
  // Link in the device's list of issued ops whose signals are still to be
  // announced to their semaphores (weft_semaphore_advance_issued), and in
  // the release sweep's list.
  weft_cuda_op_t* advance_next;
  weft_cuda_op_t* sweep_next;
  weft_cuda_device_t* device;
  // The device's allocator, kept here: the last reference may be dropped
  // by a wait set's callback after the device is gone.
  weft_allocator_t allocator;
  weft_time_t submit_time;
  uint64_t trace_id;
  // Two owners: the op's own path (issue -> completion, or the failure
  // that ends it) and, while it is held, its wait set until the set calls
  // back. The last to let go frees the record.
  weft_atomic_uint32_t ref_count;
  // The wait set's result (owned), read once the set called back.
  weft_status_t wait_status;
  // Issued ops: the event recorded after the work, the status word its
  // dispatches write, an error met while issuing (failing the op once the
  // stream reaches it), and whether a wait was met in-stream (then a
  // failed wait upstream fails this op at completion).
  weft_cuda_event_t* event;
  // Its status slots in the device's ring (dispatches: 1; executes: one
  // per dispatch of the command buffer; 0 for other ops).
  uint32_t status_slot;
  uint32_t status_slot_count;
  bool waited_in_stream;
  weft_status_t issue_status;
  // Traced ops: the timed event before the work, and the epoch its time is
  // measured from (cuda_device.h), both retained.
  weft_cuda_event_t* trace_start;
  weft_cuda_event_t* trace_epoch;
  weft_time_t trace_epoch_ns;
  weft_time_t trace_issue_ns;  // when the start event was recorded
  weft_wait_set_t* wait_set;  // in this record
  weft_queue_op_t base;       // captured: copies in this record, retained
};

// Drops a reference; the last frees the record (touching no device).
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
