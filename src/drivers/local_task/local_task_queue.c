// weft: local-task queues: submit, the control process and shutdown (see
// local_task_queue.h).
#include "drivers/local_task/local_task_queue.h"

#include <inttypes.h>
#include <string.h>

#include "base/thread.h"
#include "drivers/local_task/block_builder.h"
#include "drivers/local_task/local_task_device.h"
#include "drivers/local_task/local_task_op.h"
#include "hal/buffer_impl.h"
#include "hal/command_buffer_impl.h"
#include "hal/local/queue_ops.h"
#include "hal/queue_completion.h"
#include "hal/queue_trace.h"
#include "task/executor.h"

// Ops the control process runs per drain before it lets the worker look at
// other processes (bounded work per drain).
#define WEFT_LOCAL_TASK_CONTROL_BATCH 64
// Fills, updates and copies up to this many bytes are run by a submitting
// host (or a drainer) itself (weft_local_task_op_issues_here): about a
// microsecond of memory traffic, less than handing the op to a worker.
#define WEFT_LOCAL_TASK_HOST_TRANSFER_BYTES (64u * 1024u)

static bool weft_local_task_device_is_shutting_down(
    weft_local_task_device_t* device) {
  // Seq_cst: pairs with destroy's store (see weft_local_task_op_retire).
  return weft_atomic_load(&device->shutting_down, memory_order_seq_cst) != 0;
}

//===----------------------------------------------------------------------===//
// Running an op
//===----------------------------------------------------------------------===//

weft_status_t weft_local_task_annotate_error(weft_local_task_op_t* op,
                                             weft_status_t status) {
  if (!weft_status_is_ok(status) && weft_local_task_op_base(op)->kind == WEFT_QUEUE_OP_EXECUTE &&
      weft_local_task_op_base(op)->execute.command_buffer &&
      op->compute.failed_command != UINT32_MAX) {
    // Which command, in the words of every driver (command_buffer_impl.h).
    status = weft_command_buffer_annotate_command(
        weft_local_task_op_base(op)->execute.command_buffer, op->compute.failed_command, status);
  }
  return weft_queue_op_annotate_error(weft_local_task_op_base(op), status);
}

void weft_local_task_op_finish(weft_local_task_op_t* op, weft_status_t status) {
  if (weft_local_task_op_base(op)->kind == WEFT_QUEUE_OP_EXECUTE) {
    // A command buffer holds its device, and the host may release both as
    // soon as it sees the signal: drop it first, so that the device's last
    // reference is not left to a worker (see local_task_device.h).
    weft_block_processor_context_deinitialize(op->compute.context);
    op->compute.context = NULL;
    op->compute.recording = NULL;
    weft_command_buffer_release(weft_local_task_op_base(op)->execute.command_buffer);
    weft_local_task_op_base(op)->execute.command_buffer = NULL;
  }
  weft_queue_trace_signal(weft_local_task_op_record(op)->trace_id, weft_status_is_ok(status));
  weft_queue_op_signal_or_fail(weft_local_task_op_base(op), status);
}

void weft_local_task_op_release(weft_local_task_op_t* op) {
  // The scheduler notifies a shutting-down device's idle wait.
  weft_local_task_op_retire(op);
}

// Runs one ready op on the control process (on worker |worker_index|):
// inline for everything but dispatches and command buffers, which go
// through the compute path.
static void weft_local_task_run(weft_local_task_queue_t* queue,
                                weft_local_task_op_t* op,
                                uint32_t worker_index, bool on_control) {
  bool ended = false;
  weft_status_t status = WEFT_OK;
  // Read before the op may retire below.
  const uint64_t trace_id = weft_local_task_op_record(op)->trace_id;
  if (trace_id) {
    // Guarded here: the name lookup is a call, not worth making per op
    // when tracing is off.
    weft_queue_trace_begin(trace_id, weft_queue_op_kind_name(weft_local_task_op_base(op)->kind));
  }
  if (!weft_status_is_ok(weft_local_task_op_record(op)->wait_status) || weft_local_task_op_record(op)->swept ||
      weft_local_task_device_is_shutting_down(queue->device)) {
    status = weft_scheduled_op_not_run(weft_local_task_op_record(op));
  } else if (weft_local_task_op_base(op)->kind == WEFT_QUEUE_OP_DISPATCH ||
             weft_local_task_op_base(op)->kind == WEFT_QUEUE_OP_EXECUTE) {
    // Finishes and releases the op itself (now or on the compute process).
    weft_local_task_compute_start(queue, op, worker_index, on_control);
    op = NULL;
  } else if ((weft_local_task_op_base(op)->kind == WEFT_QUEUE_OP_READ ||
              weft_local_task_op_base(op)->kind == WEFT_QUEUE_OP_WRITE) &&
             weft_local_task_file_is_async(op)) {
    // Finishes and releases the op itself (on the proactor's completion).
    weft_local_task_file_start(op);
    op = NULL;
  } else {
    status = weft_local_task_annotate_error(
        op, weft_local_queue_op_do(weft_local_task_op_base(op), &ended));
  }
  if (op && ended) {
    // The host call published (or took over) the signals itself.
    weft_queue_trace_signal(trace_id, weft_status_is_ok(status));
    weft_status_ignore(status);
  } else if (op) {
    weft_local_task_op_finish(op, status);
  }
  if (op) weft_local_task_op_release(op);
  weft_queue_trace_end(trace_id);
}

//===----------------------------------------------------------------------===//
// The control process
//===----------------------------------------------------------------------===//

// Moves everything on the ready list to the end of the run list.
static void weft_local_task_take_ready(weft_local_task_queue_t* queue) {
  // A load first: an empty list is not worth an exchange on a line that
  // submitters write.
  weft_mpsc_entry_t* chain = weft_mpsc_list_is_empty(&queue->ready)
                                 ? NULL
                                 : weft_mpsc_list_pop_all(&queue->ready);
  if (chain) {
    weft_local_task_op_t* first = weft_local_task_op_from_entry(chain);
    weft_mpsc_entry_t* last = chain;
    while (last->next) last = last->next;
    if (queue->run_tail) {
      weft_local_task_op_record(queue->run_tail)->entry.next = chain;
    } else {
      queue->run_head = first;
    }
    queue->run_tail = weft_local_task_op_from_entry(last);
  }
}

static weft_process_drain_result_t weft_local_task_control_drain(
    weft_process_t* process, uint32_t worker_index) {
  weft_local_task_queue_t* queue = (weft_local_task_queue_t*)process->user_data;
  weft_local_task_drain_mark_t previous =
      weft_local_task_device_enter_drain(queue->device, worker_index);
  weft_process_drain_result_t result = WEFT_PROCESS_DRAIN_NO_WORK;
  for (int i = 0; i < WEFT_LOCAL_TASK_CONTROL_BATCH; ++i) {
    // Ops an op just made ready (a chain on this queue) run in this same
    // drain, without a round trip through the executor.
    if (!queue->run_head) weft_local_task_take_ready(queue);
    if (!queue->run_head) break;
    weft_local_task_op_t* op = queue->run_head;
    queue->run_head = weft_local_task_op_from_entry(weft_local_task_op_record(op)->entry.next);
    if (!queue->run_head) queue->run_tail = NULL;
    weft_local_task_run(queue, op, worker_index, /*on_control=*/true);
    result = WEFT_PROCESS_DRAIN_DID_WORK;
  }
  weft_duration_t linger_ns = queue->device->control_linger_ns;
  if (result == WEFT_PROCESS_DRAIN_DID_WORK) {
    if (linger_ns > 0) queue->last_work_time = weft_time_now();
  } else if (weft_process_is_cancelled(process)) {
    // Stopped at shutdown, after every op retired.
    result = WEFT_PROCESS_DRAIN_COMPLETED;
  } else if (linger_ns > 0 &&
             weft_time_now() - queue->last_work_time < linger_ns &&
             weft_executor_may_spin_now(queue->device->executor,
                                        worker_index)) {
    // Linger: stay scheduled a little (the executor drains us again, after
    // anything else waiting), so an op pushed now is seen without a wake.
    // Yield every 64 drains (a few microseconds), as every spinner does:
    // the host that will push that op may be waiting for this very CPU
    // (measured on the 2-vCPU VM: a host sharing the lingering worker's CPU
    // saw its signal only when the linger ended, 14 us late; DispatchTiles
    // 15-23 -> 8-11 us. Every 16 drains cost QueueRoundTrip 0.15 us.)
    weft_cpu_relax();
    if ((++queue->linger_polls & 63) == 0) weft_thread_yield();
    result = WEFT_PROCESS_DRAIN_DID_WORK;
  }
  weft_local_task_device_exit_drain(previous);
  return result;
}

// Whether a thread other than the control process's worker may run |op|'s
// control step itself: a submitting host, or a drainer whose drain made
// the op ready. Only what takes no longer than handing the op to a worker:
// a fill, update or copy of up to WEFT_LOCAL_TASK_HOST_TRANSFER_BYTES (a
// memset or memcpy, done inline); a dispatch or a command buffer with a
// recording (its context made, then handed to the compute process) only
// where the thread goes on to drain it, |drains|: a drainer, or a host
// whose waits assist (the device has guests). A host that only waits is
// better served by the control process's worker, which drains the op at
// once (measured at workers=2 on 2 CPUs: DispatchTiles 9.4 -> 22.7 us when
// the host issued it and woke both workers itself). The rest (host calls,
// files, transient buffers, a command buffer replayed without a recording)
// runs on a worker, so that submit stays asynchronous for them.
static bool weft_local_task_op_issues_here(weft_local_task_op_t* op,
                                           bool drains) {
  const weft_queue_op_t* base = weft_local_task_op_base(op);
  if (!weft_status_is_ok(weft_local_task_op_record(op)->wait_status) ||
      weft_local_task_op_record(op)->swept) {
    return false;
  }
  switch (base->kind) {
    case WEFT_QUEUE_OP_DISPATCH:
      return drains;
    case WEFT_QUEUE_OP_EXECUTE:
      return drains && weft_block_command_buffer_recording(
                           base->execute.command_buffer) != NULL;
    case WEFT_QUEUE_OP_FILL:
      return base->fill.length <= WEFT_LOCAL_TASK_HOST_TRANSFER_BYTES;
    case WEFT_QUEUE_OP_UPDATE:
      return base->update.length <= WEFT_LOCAL_TASK_HOST_TRANSFER_BYTES;
    case WEFT_QUEUE_OP_COPY:
      return base->copy.length <= WEFT_LOCAL_TASK_HOST_TRANSFER_BYTES;
    default:
      return false;
  }
}

// The control process's drain, run by a thread that claimed it
// (weft_process_wake_claimed) as drainer |index| (WEFT_LOCAL_TASK_NO_DRAINER
// for a submitting host, which has none): runs the ready ops in order while
// weft_local_task_op_issues_here allows each (never lingering: the thread
// goes back to its own work). Returns whether ops are left for a worker.
static bool weft_local_task_control_drain_here(weft_local_task_queue_t* queue,
                                               uint32_t index, bool drains) {
  weft_local_task_drain_mark_t previous =
      weft_local_task_device_enter_drain(queue->device, index);
  for (int i = 0; i < WEFT_LOCAL_TASK_CONTROL_BATCH; ++i) {
    if (!queue->run_head) weft_local_task_take_ready(queue);
    weft_local_task_op_t* op = queue->run_head;
    if (!op || !weft_local_task_op_issues_here(op, drains) ||
        weft_local_task_device_is_shutting_down(queue->device)) {
      break;
    }
    queue->run_head = weft_local_task_op_from_entry(
        weft_local_task_op_record(op)->entry.next);
    if (!queue->run_head) queue->run_tail = NULL;
    weft_local_task_run(queue, op, index, /*on_control=*/false);
  }
  weft_local_task_device_exit_drain(previous);
  return queue->run_head != NULL || !weft_mpsc_list_is_empty(&queue->ready);
}

// Pushes |op| (ready: its waits reached) and has its control step run:
// here, when weft_local_task_op_issues_here allows it and the control
// process is idle (no op ahead of it; claimed, so no worker drains it
// meanwhile), else by waking the control process.
static void weft_local_task_push_ready_here(weft_local_task_queue_t* queue,
                                            weft_local_task_op_t* op,
                                            uint32_t index, bool drains) {
  bool here = weft_local_task_op_issues_here(op, drains);
  weft_mpsc_list_push(&queue->ready, &weft_local_task_op_record(op)->entry);
  if (here && weft_process_wake_claimed(&queue->control)) {
    bool more = weft_local_task_control_drain_here(queue, index, drains);
    weft_process_end_claim(&queue->control, more);
  } else if (!here) {
    weft_process_wake(&queue->control);
  }
}

// Pushes a ready op whose waits another op reached. Inside a drain of this
// device (the drainer that finished the op waited for: a worker, or a host
// assisting in its wait) the drainer runs the control step itself: a
// command buffer waiting on the one before it is installed by the thread
// that retired the first, without a hop through the control process and
// its wake (one per decoded token).
static void weft_local_task_push_ready(weft_local_task_queue_t* queue,
                                       weft_local_task_op_t* op) {
  uint32_t index = weft_local_task_device_drainer_index(queue->device);
  if (index == WEFT_LOCAL_TASK_NO_DRAINER) {
    weft_mpsc_list_push(&queue->ready, &weft_local_task_op_record(op)->entry);
    weft_process_wake(&queue->control);
  } else {
    weft_local_task_push_ready_here(queue, op, index, /*drains=*/true);
  }
}

// Pushes an op ready at its submit. A host (not inside one of this
// device's drains) runs its control step itself where
// weft_local_task_op_issues_here allows: saves the hand-off to a worker and
// its wake (QueueRoundTrip 0.41 -> 0.18 us; DispatchTiles with assisting
// waits, issue 33). The compute wakes that follow count the host as taking
// a CPU (weft_executor_host_drain_begin).
static void weft_local_task_issue(weft_local_task_queue_t* queue,
                                  weft_local_task_op_t* op) {
  weft_local_task_device_t* device = queue->device;
  if (weft_local_task_device_is_draining(device)) {
    // Inside a drain of this device (a host call submitting, say).
    weft_local_task_push_ready(queue, op);
    return;
  }
  op->compute.host_issued = true;
  weft_executor_host_drain_begin(device->executor);
  weft_local_task_push_ready_here(
      queue, op, WEFT_LOCAL_TASK_NO_DRAINER,
      /*drains=*/device->drainer_count > device->worker_count);
  weft_executor_host_drain_end(device->executor);
}

//===----------------------------------------------------------------------===//
// Parking
//===----------------------------------------------------------------------===//

// The scheduler's ready function: the op's waits are all reached (or one
// failed, or shutdown cancelled them). Runs on the thread that did that.
static void weft_local_task_op_ready(void* user_data,
                                     weft_scheduled_op_t* record) {
  weft_local_task_device_t* device = (weft_local_task_device_t*)user_data;
  weft_local_task_op_t* op = (weft_local_task_op_t*)record->driver;
  weft_queue_trace_ready(record->trace_id);
  // Counted across every touch of the device below: once pushed, the op may
  // run and retire at once, and a device shutting down then waits for this
  // count to drop before it frees what this call still touches. The
  // decrement is the last access. Relaxed increment: the op is still live
  // here, which keeps shutdown waiting until the op retires.
  weft_atomic_fetch_add(&device->readying_count, 1, memory_order_relaxed);
  weft_local_task_push_ready(op->queue, op);
  // Seq_cst: pairs with destroy's load in weft_local_task_device_wait_idle.
  weft_atomic_fetch_sub(&device->readying_count, 1, memory_order_seq_cst);
}

void weft_local_task_device_initialize_scheduler(
    weft_local_task_device_t* device, weft_allocator_t allocator) {
  weft_queue_scheduler_initialize(allocator, WEFT_LOCAL_TASK_OP_SIZE,
                                  weft_local_task_op_ready, device,
                                  &device->scheduler);
}

//===----------------------------------------------------------------------===//
// Queue lifecycle
//===----------------------------------------------------------------------===//

weft_status_t weft_local_task_queue_initialize(
    weft_local_task_device_t* device, uint32_t index,
    weft_local_task_queue_t* out_queue) {
  memset(out_queue, 0, sizeof(*out_queue));
  out_queue->device = device;
  out_queue->index = index;
  weft_mpsc_list_initialize(&out_queue->ready);
  weft_process_initialize(device->executor, weft_local_task_control_drain,
                          /*worker_budget=*/1, out_queue, &out_queue->control);
  // Scheduled now; its first drain finds nothing and it goes idle.
  weft_process_resume(&out_queue->control);
  weft_local_task_compute_initialize(out_queue);
  return WEFT_OK;
}

void weft_local_task_queue_cancel_pending(weft_local_task_queue_t* queue) {
  // Ready ops not yet run fail with CANCELLED on the next drain.
  weft_process_wake(&queue->control);
  weft_local_task_compute_cancel(queue);
}

void weft_local_task_queue_stop(weft_local_task_queue_t* queue) {
  weft_process_cancel(&queue->control);
  weft_local_task_compute_stop(queue);
}

void weft_local_task_queue_deinitialize(weft_local_task_queue_t* queue) {
  (void)queue;
}

//===----------------------------------------------------------------------===//
// Submit
//===----------------------------------------------------------------------===//

weft_status_t weft_local_task_device_queue_submit(
    weft_device_t* base_device, const weft_queue_op_t* source) {
  weft_local_task_device_t* device = weft_local_task_device_cast(base_device);
  weft_local_task_queue_t* queue =
      weft_local_task_device_select_queue(device, source->affinity);
  // A failed wait parks too: the wait set reports the failure at once.
  bool ready = weft_semaphore_list_is_reached(source->wait_list);
  weft_local_task_op_t* op = NULL;
  weft_status_t status =
      weft_local_task_op_acquire(queue, source, /*park=*/!ready, &op);
  if (!weft_status_is_ok(status)) return status;
  weft_local_task_op_record(op)->trace_id = weft_queue_trace_submit();
  if (ready) {
    weft_queue_trace_ready(weft_local_task_op_record(op)->trace_id);
    weft_local_task_issue(queue, op);
  } else {
    // From here on the op belongs to the scheduler: it may already have
    // run (and retired) when this returns.
    weft_queue_scheduler_park(weft_local_task_op_record(op), /*native_waits=*/0);
  }
  return WEFT_OK;
}

