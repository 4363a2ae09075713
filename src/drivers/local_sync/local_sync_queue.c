// weft: local-sync queue operations (see local_sync_device.h).
//
// Every operation comes through weft_local_sync_device_queue_submit as a
// descriptor (hal/queue_op.h):
//  - waits all reached (or one failed) at submit: run now, on this thread;
//  - otherwise park it: copy the lists and arguments into an op record,
//    retain what they name (weft_queue_op_capture) and start a wait set; the
//    wait set's ready function queues the op on the thread-local ready queue of
//    the thread that reached the last wait, which runs it (or is already
//    running ops and will reach it in its loop).
// Running an op is weft_local_sync_op_run: begin (a failed wait becomes the
// error), do the work, end (signal everything, or fail everything).
#include <inttypes.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "drivers/local_sync/local_sync_device.h"
#include "hal/local/queue_ops.h"
#include "hal/queue_completion.h"
#include "hal/queue_trace.h"
#include "hal/semaphore_impl.h"
#include "hal/wait_set.h"

//===----------------------------------------------------------------------===//
// Running an op
//===----------------------------------------------------------------------===//

// The one begin/do/end path of every op. |wait_status| (consumed) is OK
// when every wait was reached, or the failure of a wait: then nothing runs
// and the signals fail with it. With |shutting_down| (a parked op of a
// released device) nothing runs either (weft_queue_op_not_run).
static void weft_local_sync_op_run(const weft_queue_op_t* op,
                                   weft_status_t wait_status,
                                   bool shutting_down, bool swept,
                                   uint64_t trace_id) {
  // Begin.
  weft_status_t status = wait_status;
  bool ended = false;
  weft_queue_trace_begin(trace_id, weft_queue_op_kind_name(op->kind));
  if (shutting_down || !weft_status_is_ok(status)) {
    status = weft_queue_op_not_run(op, status, swept);
  } else {
    status =
        weft_queue_op_annotate_error(op, weft_local_queue_op_do(op, &ended));
  }
  // End.
  weft_queue_trace_signal(trace_id, weft_status_is_ok(status));
  if (ended) {
    weft_status_ignore(status);
  } else {
    weft_queue_op_signal_or_fail(op, status);
  }
  weft_queue_trace_end(trace_id);
}

//===----------------------------------------------------------------------===//
// Parked ops and the thread-local ready queue
//===----------------------------------------------------------------------===//

struct weft_local_sync_op_t {
  // Links in the device's pending list (guarded by its pending_mutex).
  weft_local_sync_op_t* pending_prev;
  weft_local_sync_op_t* pending_next;
  // Link in the ready queue of the thread that runs the op.
  weft_local_sync_op_t* ready_next;
  weft_local_sync_device_t* device;  // held (weft_local_sync_device_hold)
  weft_time_t park_time;
  // The op's trace id (hal/queue_trace.h); 0 when not traced.
  uint64_t trace_id;
  // The wait set's result, set by the ready function (owned).
  weft_status_t wait_status;
  weft_queue_op_t base;       // captured: copies in this record, retained
  weft_wait_set_t* wait_set;  // in this record
  // Set by the release sweep (under the pending mutex) when it cancelled
  // the op's waits.
  bool cancelled;
};

// Ops made ready on this thread and not yet run. Thread-local so that the
// op a signal releases runs on the signalling thread from the loop in
// weft_local_sync_op_ready, never by recursion (see local_sync_device.h).
typedef struct weft_local_sync_ready_queue_t {
  weft_local_sync_op_t* head;
  weft_local_sync_op_t* tail;
  bool draining;
} weft_local_sync_ready_queue_t;

static _Thread_local weft_local_sync_ready_queue_t weft_local_sync_ready_queue;

static void weft_local_sync_op_run_parked(weft_local_sync_op_t* op);

// Runs the ops of |queue| (this thread's) until it is empty.
static void weft_local_sync_ready_queue_drain(
    weft_local_sync_ready_queue_t* queue) {
  queue->draining = true;
  while (queue->head) {
    weft_local_sync_op_t* next = queue->head;
    queue->head = next->ready_next;
    if (!queue->head) queue->tail = NULL;
    weft_local_sync_op_run_parked(next);
  }
  queue->draining = false;
}

// Runs a parked op whose wait set finished and frees it.
static void weft_local_sync_op_run_parked(weft_local_sync_op_t* op) {
  weft_local_sync_device_t* device = op->device;
  weft_slim_mutex_lock(&device->pending_mutex);
  if (op->pending_prev) {
    op->pending_prev->pending_next = op->pending_next;
  } else {
    device->pending_head = op->pending_next;
  }
  if (op->pending_next) {
    op->pending_next->pending_prev = op->pending_prev;
  } else {
    device->pending_tail = op->pending_prev;
  }
  --device->pending_count;
  weft_slim_mutex_unlock(&device->pending_mutex);

  // Released while it waited (or with its waits just reached but not yet
  // run): it fails with CANCELLED instead of running, as on every driver.
  weft_local_sync_op_run(&op->base, op->wait_status,
                         weft_local_sync_device_is_shutting_down(device),
                         op->cancelled, op->trace_id);

  weft_queue_op_release(&op->base);
  weft_allocator_free(device->base.host_allocator, op);
  // Last: this may free the device.
  weft_local_sync_device_unhold(device);
}

// The wait set's ready function: queues |user_data| (an op) on this thread
// and, unless this thread is already running ready ops further up its
// stack, runs the queue until it is empty.
static void weft_local_sync_op_ready(void* user_data, weft_status_t status) {
  weft_local_sync_op_t* op = (weft_local_sync_op_t*)user_data;
  op->wait_status = status;
  weft_queue_trace_ready(op->trace_id);
  op->ready_next = NULL;
  weft_local_sync_ready_queue_t* queue = &weft_local_sync_ready_queue;
  if (queue->tail) {
    queue->tail->ready_next = op;
  } else {
    queue->head = op;
  }
  queue->tail = op;
  // A thread already draining (further up this stack) reaches |op| in its
  // loop; otherwise this call becomes the drainer.
  if (!queue->draining) weft_local_sync_ready_queue_drain(queue);
}

void weft_local_sync_device_cancel_pending(weft_local_sync_device_t* device) {
  // Ops the sweep makes ready queue up here and run after the pending
  // mutex is let go (running one takes it).
  weft_local_sync_ready_queue_t* queue = &weft_local_sync_ready_queue;
  const bool was_draining = queue->draining;
  queue->draining = true;
  weft_slim_mutex_lock(&device->pending_mutex);
  for (weft_local_sync_op_t* op = device->pending_head; op;
       op = op->pending_next) {
    op->cancelled = true;
    weft_wait_set_cancel(op->wait_set,
                         weft_queue_op_cancelled(&op->base,
                                                 /*while_waiting=*/true));
  }
  weft_slim_mutex_unlock(&device->pending_mutex);
  queue->draining = was_draining;
  // A thread already draining further up its stack runs them in its loop.
  if (!was_draining) weft_local_sync_ready_queue_drain(queue);
}

// Rounds |value| up to a multiple of 16.
static size_t weft_local_sync_align16(size_t value) {
  return (value + 15) & ~(size_t)15;
}

// Allocates a parked op record for |source| and fills it: a capture of the
// op (copies of its lists, arrays and bytes; references on every semaphore
// and object) and a hold on the device. On failure nothing is retained.
static weft_status_t weft_local_sync_op_allocate(
    weft_local_sync_device_t* device, const weft_queue_op_t* source,
    weft_local_sync_op_t** out_op) {
  size_t capture_size = 0;
  weft_status_t status = weft_queue_op_capture_size(
      source, WEFT_QUEUE_OP_CAPTURE_ALL, &capture_size);
  // Layout: record | wait set | capture. Counts are uint32, so only the
  // capture (an update's bytes) can overflow.
  size_t record_size = weft_local_sync_align16(sizeof(weft_local_sync_op_t));
  size_t wait_set_size = weft_local_sync_align16(
      weft_wait_set_storage_size(source->wait_list.count));
  size_t fixed_size = record_size + wait_set_size;
  if (weft_status_is_ok(status) && capture_size > SIZE_MAX - fixed_size) {
    status = WEFT_STATUS(RESOURCE_EXHAUSTED,
                         "%s: the parked operation needs more than SIZE_MAX "
                         "bytes",
                         weft_queue_op_kind_name(source->kind));
  }
  uint8_t* storage = NULL;
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc_uninitialized(device->base.host_allocator,
                                                 fixed_size + capture_size,
                                                 (void**)&storage);
  }
  if (weft_status_is_ok(status)) {
    weft_local_sync_op_t* op = (weft_local_sync_op_t*)storage;
    memset(op, 0, sizeof(*op));
    op->wait_set = (weft_wait_set_t*)(storage + record_size);
    weft_queue_op_capture(source, WEFT_QUEUE_OP_CAPTURE_ALL,
                          storage + fixed_size, &op->base);
    weft_local_sync_device_hold(device);
    op->device = device;
    op->park_time = weft_time_now();
    *out_op = op;
  }
  return weft_status_annotate(status, "while parking %s",
                              weft_queue_op_kind_name(source->kind));
}

// Parks an op whose waits are not yet reached. On failure nothing was
// retained or started and the signals are untouched.
static weft_status_t weft_local_sync_park(weft_local_sync_device_t* device,
                                          const weft_queue_op_t* source,
                                          uint64_t trace_id) {
  weft_local_sync_op_t* op = NULL;
  weft_status_t status = weft_local_sync_op_allocate(device, source, &op);
  if (weft_status_is_ok(status)) {
    op->trace_id = trace_id;
    weft_slim_mutex_lock(&device->pending_mutex);
    op->pending_prev = device->pending_tail;
    if (device->pending_tail) {
      device->pending_tail->pending_next = op;
    } else {
      device->pending_head = op;
    }
    device->pending_tail = op;
    ++device->pending_count;
    weft_slim_mutex_unlock(&device->pending_mutex);
    // From here on |op| belongs to the wait set: it may already have run
    // (and been freed) when this returns.
    weft_wait_set_start(op->wait_set, WEFT_WAIT_MODE_ALL, op->base.wait_list,
                        WEFT_TIME_INFINITE_FUTURE, weft_local_sync_op_ready,
                        op);
  }
  return status;
}

// Checks the waits at submit: sets |*out_ready| when every one is reached,
// and returns the (annotated) failure of the wait that failed first, which
// makes the op run now and fail.
static weft_status_t weft_local_sync_check_waits(
    weft_semaphore_list_t wait_list, bool* out_ready) {
  const uint32_t failed = weft_semaphore_list_earliest_failure(wait_list);
  if (failed != UINT32_MAX) {
    *out_ready = true;
    uint64_t value = 0;
    char label[WEFT_SEMAPHORE_LABEL_CAPACITY];
    weft_semaphore_label(wait_list.semaphores[failed], label, sizeof(label));
    return weft_status_annotate(
        weft_semaphore_query(wait_list.semaphores[failed], &value),
        "while waiting for semaphore %s to reach %" PRIu64, label,
        wait_list.values[failed]);
  }
  *out_ready = weft_semaphore_list_is_reached(wait_list);
  return WEFT_OK;
}

// Runs |op| now if its waits allow, otherwise parks it.
weft_status_t weft_local_sync_device_queue_submit(weft_device_t* base_device,
                                                  const weft_queue_op_t* op) {
  weft_local_sync_device_t* device = weft_local_sync_device_cast(base_device);
  bool ready = false;
  weft_status_t wait_status =
      weft_local_sync_check_waits(op->wait_list, &ready);
  weft_status_t status = WEFT_OK;
  const uint64_t trace_id = weft_queue_trace_submit();
  if (ready || !weft_status_is_ok(wait_status)) {
    weft_queue_trace_ready(trace_id);
    // A host call may drop the caller's last device reference; the device
    // must outlive the op all the same.
    const bool hold = op->kind == WEFT_QUEUE_OP_HOST_CALL;
    if (hold) weft_local_sync_device_hold(device);
    weft_local_sync_op_run(op, wait_status, /*shutting_down=*/false,
                           /*swept=*/false, trace_id);
    if (hold) weft_local_sync_device_unhold(device);
  } else {
    status = weft_local_sync_park(device, op, trace_id);
  }
  return status;
}

//===----------------------------------------------------------------------===//
// Diagnostics
//===----------------------------------------------------------------------===//

uint64_t weft_local_sync_device_for_each_pending(
    weft_device_t* base_device, weft_pending_op_visit_fn_t visit,
    void* user_data) {
  weft_local_sync_device_t* device = weft_local_sync_device_cast(base_device);
  // Lock order: the pending mutex, then each semaphore's (the visitor
  // queries them); no path takes them the other way round (timepoints fire
  // outside semaphore locks).
  weft_slim_mutex_lock(&device->pending_mutex);
  for (weft_local_sync_op_t* op = device->pending_head; op;
       op = op->pending_next) {
    const weft_pending_op_t pending =
        weft_pending_op_for(&op->base, "waiting", op->park_time);
    visit(user_data, &pending);
  }
  weft_slim_mutex_unlock(&device->pending_mutex);
  return 0;
}
