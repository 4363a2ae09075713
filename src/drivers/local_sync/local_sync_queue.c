// weft: local-sync queue operations (see local_sync_device.h).
//
// Every operation comes through weft_local_sync_device_queue_submit as a
// descriptor (hal/queue_op.h):
//  - waits all reached (or one failed) at submit: run now, on this thread;
//  - otherwise park it on the device's scheduler (hal/queue_scheduler.h:
//    a pooled record with the op captured, a wait set); its ready function
//    queues the op on the thread-local ready queue of the thread that
//    reached the last wait, which runs it (or is already running ops and
//    will reach it in its loop).
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

// Runs a parked op whose waits resolved and retires it.
static void weft_local_sync_op_run_parked(weft_scheduled_op_t* op) {
  weft_local_sync_device_t* device =
      weft_container_of(op->scheduler, weft_local_sync_device_t, scheduler);
  // Released while it waited (or with its waits just reached but not yet
  // run): it fails with CANCELLED instead of running, as on every driver.
  weft_local_sync_op_run(&op->base, op->wait_status,
                         weft_local_sync_device_is_shutting_down(device),
                         op->swept, op->trace_id);
  op->wait_status = WEFT_OK;  // consumed
  weft_queue_scheduler_retire(op);
  // Last: this may free the device.
  weft_local_sync_device_unhold(device);
}

// local-sync's ops readied on this thread while it runs another.
static _Thread_local weft_scheduled_op_trampoline_t weft_local_sync_trampoline;

// The scheduler's ready function: runs |op| on this thread, after the op
// this thread is running further up its stack, if any
// (weft_scheduled_op_run_outermost: the op a signal releases runs on the
// signalling thread from a loop, never by recursion; local_sync_device.h).
static void weft_local_sync_op_ready(void* user_data, weft_scheduled_op_t* op) {
  (void)user_data;
  weft_queue_trace_ready(op->trace_id);
  weft_scheduled_op_run_outermost(&weft_local_sync_trampoline, op,
                                  weft_local_sync_op_run_parked);
}

void weft_local_sync_scheduler_initialize(weft_allocator_t allocator,
                                          weft_local_sync_device_t* device) {
  weft_queue_scheduler_initialize(allocator,
                                  /*driver_size=*/0, weft_local_sync_op_ready,
                                  device, &device->scheduler);
}

// Parks an op whose waits are not yet reached. On failure nothing was
// retained or started and the signals are untouched.
static weft_status_t weft_local_sync_park(weft_local_sync_device_t* device,
                                          const weft_queue_op_t* source,
                                          uint64_t trace_id) {
  weft_scheduled_op_t* op = NULL;
  weft_status_t status = weft_queue_scheduler_acquire(
      &device->scheduler, source, WEFT_QUEUE_OP_CAPTURE_ALL, /*park=*/true,
      &op);
  if (weft_status_is_ok(status)) {
    op->trace_id = trace_id;
    weft_local_sync_device_hold(device);
    // From here on |op| belongs to the scheduler: it may already have run
    // (and retired) when this returns.
    weft_queue_scheduler_park(op, /*native_waits=*/0);
  }
  return weft_status_annotate(status, "while parking %s",
                              weft_queue_op_kind_name(source->kind));
}

// The annotated failure of the wait of |wait_list| that failed first. Out
// of line: the error path.
static weft_status_t weft_local_sync_wait_failure(
    weft_semaphore_list_t wait_list) {
  const uint32_t failed = weft_semaphore_list_earliest_failure(wait_list);
  uint64_t value = 0;
  char label[WEFT_SEMAPHORE_LABEL_CAPACITY];
  weft_semaphore_label(wait_list.semaphores[failed], label, sizeof(label));
  return weft_status_annotate(
      weft_semaphore_query(wait_list.semaphores[failed], &value),
      "while waiting for semaphore %s to reach %" PRIu64, label,
      wait_list.values[failed]);
}

// Checks the waits at submit: sets |*out_ready| when every one is reached,
// and returns the (annotated) failure of the wait that failed first, which
// makes the op run now and fail. One pass of lock-free peeks; the list is
// read through its fields (a by-value copy of a descriptor just written
// stalls on store forwarding).
static weft_status_t weft_local_sync_check_waits(
    const weft_semaphore_list_t* wait_list, bool* out_ready) {
  bool ready = true;
  bool failed = false;
  const uint32_t count = wait_list->count;
  for (uint32_t i = 0; i < count; ++i) {
    uint64_t value = 0;
    failed |= weft_semaphore_peek(wait_list->semaphores[i], &value);
    ready &= value >= wait_list->values[i];
  }
  *out_ready = ready || failed;
  return failed ? weft_local_sync_wait_failure(*wait_list) : WEFT_OK;
}

// Runs |op| now if its waits allow, otherwise parks it.
weft_status_t weft_local_sync_device_queue_submit(weft_device_t* base_device,
                                                  const weft_queue_op_t* op) {
  weft_local_sync_device_t* device = weft_local_sync_device_cast(base_device);
  bool ready = false;
  weft_status_t wait_status =
      weft_local_sync_check_waits(&op->wait_list, &ready);
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
  weft_queue_scheduler_for_each_pending(&device->scheduler, visit, user_data);
  return 0;
}
