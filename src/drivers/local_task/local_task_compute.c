// weft: the local-task compute process: dispatches and command buffers on
// every worker (see weft_local_task_compute_t in local_task_queue.h).
//
// The control process prepares each DISPATCH/EXECUTE op (the recording and
// a processor context in the op's record) and either runs it on the spot,
// when a single worker is all it could use, or pushes it on |incoming| and
// wakes this process. Workers drain the current item's context; the one
// whose drain sees it complete first (CLOSED) takes the processor's result
// and publishes a dispatch's signals at once, and the last one to leave
// (RELEASING) frees the op and installs the next item, so a dispatch is
// signalled as soon as its work is done and nothing is freed under a worker
// still inside the processor. A command buffer execution publishes its
// signals at the release instead, after dropping the command buffer (see
// weft_local_task_op_finish).
#include <string.h>

#include "base/sched_counters.h"
#include "base/thread.h"
#include "drivers/local_task/local_task_device.h"
#include "drivers/local_task/local_task_op.h"
#include "hal/local/inline_command_buffer.h"
#include "task/executor.h"

// |state| bits (see local_task_queue.h).
#define WEFT_LOCAL_TASK_COMPUTE_COUNT_MASK 0xFFFFFFFFull
#define WEFT_LOCAL_TASK_COMPUTE_CLOSED (1ull << 32)
#define WEFT_LOCAL_TASK_COMPUTE_RELEASING (1ull << 33)

static weft_local_task_queue_t* weft_local_task_compute_queue(
    weft_local_task_compute_t* compute) {
  return weft_container_of(compute, weft_local_task_queue_t, compute);
}

// Worker |worker_index|'s kernel scratch for |op|: the worker's own memory,
// or the op's per-worker slice when the worker's is too small.
static void* weft_local_task_compute_scratch(weft_executor_t* executor,
                                             weft_local_task_op_t* op,
                                             uint32_t worker_index,
                                             size_t* out_size) {
  void* scratch = NULL;
  if (op->compute.scratch) {
    scratch = op->compute.scratch + worker_index * op->compute.scratch_size;
    *out_size = op->compute.scratch_size;
  } else {
    scratch =
        weft_executor_worker_local_memory(executor, worker_index, out_size);
  }
  return scratch;
}

// Finishes |op| with |status| (consumed) and retires it. No worker may be
// inside its context any more.
static void weft_local_task_compute_finish_and_release(weft_local_task_op_t* op,
                                                       weft_status_t status) {
  weft_local_task_op_finish(op, weft_local_task_annotate_error(op, status));
  weft_local_task_op_release(op);
}

// The processor's region callback: the next region wants this many workers.
static void weft_local_task_compute_region_ready(void* user_data,
                                                 uint32_t desired_workers) {
  weft_local_task_compute_t* compute = (weft_local_task_compute_t*)user_data;
  weft_process_set_desired_workers(&compute->process, desired_workers);
}

//===----------------------------------------------------------------------===//
// The lane: enter, leave, release and install
//===----------------------------------------------------------------------===//

// What a drainer found when it came to the lane.
typedef enum weft_local_task_lane_entry_e {
  // Counted in: the current item is open.
  WEFT_LOCAL_TASK_LANE_ENTERED = 0,
  // The lane is closed while others leave it or one installs the next
  // item: not counted, nothing to do here now.
  WEFT_LOCAL_TASK_LANE_BUSY,
  // The lane was closed and empty: this drainer owns it (RELEASING) and
  // installs the next item.
  WEFT_LOCAL_TASK_LANE_OWNER,
} weft_local_task_lane_entry_t;

// Comes to the lane. A closed lane is never counted into: drainers that
// kept entering and leaving it would keep its count from reaching zero
// (with more drainers than CPUs, one preempted inside holds it up), and
// the item is released only when it does.
// |out_state| is the word an ENTERED drainer's increment read (it may show
// the lane closed since: the drainer then only leaves).
static weft_local_task_lane_entry_t weft_local_task_compute_enter(
    weft_local_task_compute_t* compute, uint64_t* out_state) {
  const uint64_t flags =
      WEFT_LOCAL_TASK_COMPUTE_CLOSED | WEFT_LOCAL_TASK_COMPUTE_RELEASING;
  uint64_t state = weft_atomic_load(&compute->state, memory_order_relaxed);
  while (state & flags) {
    if ((state & WEFT_LOCAL_TASK_COMPUTE_RELEASING) ||
        (state & WEFT_LOCAL_TASK_COMPUTE_COUNT_MASK) != 0) {
      return WEFT_LOCAL_TASK_LANE_BUSY;
    }
    // Closed and empty. Acquire: sees what the previous owner wrote.
    WEFT_SCHED_COUNT(RMW_LANE);
    if (weft_atomic_compare_exchange_weak(
            &compute->state, &state, state | WEFT_LOCAL_TASK_COMPUTE_RELEASING,
            memory_order_acquire, memory_order_relaxed)) {
      return WEFT_LOCAL_TASK_LANE_OWNER;
    }
  }
  // Acquire: an entry with the flags clear sees the installed item.
  WEFT_SCHED_COUNT(RMW_LANE);
  *out_state = weft_atomic_fetch_add(&compute->state, 1, memory_order_acquire);
  return WEFT_LOCAL_TASK_LANE_ENTERED;
}

// Leaves the lane. Returns true when this worker took the count to zero on
// a CLOSED lane and now owns it (RELEASING).
static bool weft_local_task_compute_leave(weft_local_task_compute_t* compute) {
  uint64_t state = weft_atomic_load(&compute->state, memory_order_relaxed);
  for (;;) {
    bool claim = (state & WEFT_LOCAL_TASK_COMPUTE_COUNT_MASK) == 1 &&
                 (state & WEFT_LOCAL_TASK_COMPUTE_CLOSED) &&
                 !(state & WEFT_LOCAL_TASK_COMPUTE_RELEASING);
    uint64_t desired =
        claim ? (state - 1) | WEFT_LOCAL_TASK_COMPUTE_RELEASING : state - 1;
    // Acq_rel: releases this worker's use of the item to the owner that
    // frees it, and acquires every other leaver's when claiming.
    WEFT_SCHED_COUNT(RMW_LANE);
    if (weft_atomic_compare_exchange_weak(&compute->state, &state, desired,
                                          memory_order_acq_rel,
                                          memory_order_relaxed)) {
      return claim;
    }
  }
}

// Takes the next queued item, refilling the queue from |incoming|. Owner
// only.
static weft_local_task_op_t* weft_local_task_compute_pop(
    weft_local_task_compute_t* compute) {
  if (!compute->queued_head) {
    weft_mpsc_entry_t* chain = weft_mpsc_list_pop_all(&compute->incoming);
    if (chain) {
      compute->queued_head = weft_local_task_op_from_entry(chain);
      weft_mpsc_entry_t* last = chain;
      while (last->next) last = last->next;
      compute->queued_tail = weft_local_task_op_from_entry(last);
    }
  }
  weft_local_task_op_t* op = compute->queued_head;
  if (op) {
    compute->queued_head =
        weft_local_task_op_from_entry(weft_local_task_op_record(op)->entry.next);
    if (!compute->queued_head) compute->queued_tail = NULL;
  }
  return op;
}

// As the lane's owner, drainer |worker_index|: frees the completed item and
// installs the next one, cancelling queued items that have not started when
// the device is shutting down. Returns what the drain reports.
static weft_process_drain_result_t weft_local_task_compute_release_and_install(
    weft_local_task_compute_t* compute, uint32_t worker_index) {
  weft_local_task_device_t* device =
      weft_local_task_compute_queue(compute)->device;
  weft_local_task_op_t* op =
      weft_atomic_load(&compute->current, memory_order_relaxed);
  if (op) {
    weft_atomic_store(&compute->current, NULL, memory_order_relaxed);
    if (weft_local_task_op_base(op)->kind == WEFT_QUEUE_OP_EXECUTE) {
      // Deferred to here, where no worker is inside (see
      // weft_local_task_op_finish).
      weft_status_t status = op->compute.status;
      op->compute.status = WEFT_OK;
      weft_local_task_op_finish(op, weft_local_task_annotate_error(op, status));
    }
    weft_local_task_op_release(op);
  }
  weft_local_task_op_t* next = NULL;
  while ((next = weft_local_task_compute_pop(compute)) != NULL &&
         // Seq_cst: the shutdown handshake (see weft_local_task_op_retire).
         weft_atomic_load(&device->shutting_down, memory_order_seq_cst)) {
    weft_local_task_compute_finish_and_release(
        next, weft_scheduled_op_not_run(weft_local_task_op_record(next)));
  }
  weft_process_drain_result_t result = WEFT_PROCESS_DRAIN_DID_WORK;
  if (next) {
    weft_atomic_store(&compute->current, next, memory_order_relaxed);
    // Read while the item is surely alive: once the lane is open others
    // may run it to the end and release it.
    const uint32_t desired =
        weft_block_processor_desired_workers(next->compute.context);
    const bool count_host =
        next->compute.host_issued && worker_index < device->worker_count;
    // Release: publishes |current| (and the item) to workers entering with
    // the flags clear. The lane opens before the raise below wakes anyone:
    // a woken worker that preempted this one between the two would find
    // the lane still releasing and poll it for the rest of a time slice
    // (thousands of drains per dispatch with 4 workers on 2 busy CPUs, in
    // local_task.counts).
    weft_atomic_fetch_and(
        &compute->state,
        ~(WEFT_LOCAL_TASK_COMPUTE_CLOSED | WEFT_LOCAL_TASK_COMPUTE_RELEASING),
        memory_order_release);
    // A worker installing what a host issued counts that host, which is on
    // its way to wait for it (a host installing it is counted already).
    // Without this, on 2 CPUs with a standby, every DispatchTiles whose
    // issue found the lane still releasing woke the standby (a futex wake
    // and a third runnable thread), and the awake standby kept the other
    // worker from spinning, so the next dispatch woke it with a futex too.
    // (Until the raise the slot wants the one drainer it has, this one; a
    // guest that ran the item to its end meanwhile would leave a stale
    // count here, which the next item's install replaces.)
    if (count_host) weft_executor_host_drain_begin(device->executor);
    weft_process_set_desired_workers(&compute->process, desired);
    if (count_host) weft_executor_host_drain_end(device->executor);
  } else {
    // Empty: CLOSED stays set. Seq_cst: orders the clear before the look at
    // |incoming| below (a push after it wakes the process, which is still
    // being drained here, so the drain is repeated).
    weft_atomic_fetch_and(&compute->state, ~WEFT_LOCAL_TASK_COMPUTE_RELEASING,
                          memory_order_seq_cst);
    if (weft_mpsc_list_is_empty(&compute->incoming)) {
      result = weft_process_is_cancelled(&compute->process)
                   ? WEFT_PROCESS_DRAIN_COMPLETED
                   : WEFT_PROCESS_DRAIN_NO_WORK;
    }
  }
  return result;
}

static weft_process_drain_result_t weft_local_task_compute_drain(
    weft_process_t* process, uint32_t worker_index) {
  weft_local_task_compute_t* compute =
      (weft_local_task_compute_t*)process->user_data;
  weft_local_task_drain_mark_t previous = weft_local_task_device_enter_drain(
      weft_local_task_compute_queue(compute)->device, worker_index);
  weft_process_drain_result_t result = WEFT_PROCESS_DRAIN_DID_WORK;
  // Whether this drain ran or finished anything (not only polled).
  bool ran_tiles = false;
  uint64_t state = 0;
  weft_local_task_lane_entry_t entry =
      weft_local_task_compute_enter(compute, &state);
  if (entry == WEFT_LOCAL_TASK_LANE_OWNER) {
    result = weft_local_task_compute_release_and_install(compute, worker_index);
  } else if (entry == WEFT_LOCAL_TASK_LANE_ENTERED &&
             !(state & (WEFT_LOCAL_TASK_COMPUTE_CLOSED |
                        WEFT_LOCAL_TASK_COMPUTE_RELEASING))) {
    weft_local_task_op_t* op =
        weft_atomic_load(&compute->current, memory_order_relaxed);
    weft_local_task_device_t* device =
        weft_local_task_compute_queue(compute)->device;
    size_t scratch_size = 0;
    void* scratch = weft_local_task_compute_scratch(
        device->executor, op, worker_index, &scratch_size);
    weft_block_drain_result_t drained = weft_block_processor_drain(
        op->compute.context, worker_index, scratch, scratch_size);
    ran_tiles = drained != WEFT_BLOCK_DRAIN_NO_WORK;
    bool first_to_close = false;
    if (drained == WEFT_BLOCK_DRAIN_COMPLETED) {
      // The item's work is done: one drainer is all the lane wants until
      // the next is installed (a host whose wait the signal below ends then
      // wakes nobody for it, weft_executor_assist_leave). Lowered before
      // the lane closes, so a drainer that finds it closed already finds
      // the slot wanting no more drainers and leaves instead of polling.
      weft_process_set_desired_workers(&compute->process, 1);
      // Acq_rel: the first to close publishes the signals; the processor's
      // completion was acquired by its drain.
      WEFT_SCHED_COUNT(RMW_LANE);
      first_to_close =
          !(weft_atomic_fetch_or(&compute->state,
                                 WEFT_LOCAL_TASK_COMPUTE_CLOSED,
                                 memory_order_acq_rel) &
            WEFT_LOCAL_TASK_COMPUTE_CLOSED);
    }
    if (first_to_close) {
      // Still inside: the context stays alive while its result is taken.
      weft_status_t status =
          weft_block_processor_consume_status(op->compute.context);
      if (weft_local_task_op_base(op)->kind == WEFT_QUEUE_OP_EXECUTE) {
        // Published by the lane's owner once every worker left: finishing
        // an execution ends its context and drops its command buffer.
        op->compute.status = status;
      } else {
        // Two-phase: signal now, free when the last worker leaves.
        weft_local_task_op_finish(op,
                                  weft_local_task_annotate_error(op, status));
      }
    }
  }
  if (entry == WEFT_LOCAL_TASK_LANE_ENTERED &&
      weft_local_task_compute_leave(compute)) {
    result = weft_local_task_compute_release_and_install(compute, worker_index);
  } else if (entry != WEFT_LOCAL_TASK_LANE_OWNER && !ran_tiles &&
             weft_executor_is_oversubscribed(
                 weft_local_task_compute_queue(compute)->device->executor)) {
    // Nothing to claim while others hold tiles (or the lane is changing
    // hands). With more workers than CPUs the holder may be preempted:
    // polling again at once only keeps it off its CPU.
    WEFT_SCHED_COUNT(YIELD);
    weft_thread_yield();
  }
  weft_local_task_device_exit_drain(previous);
  return result;
}

//===----------------------------------------------------------------------===//
// Starting items (on the control process)
//===----------------------------------------------------------------------===//

// Prepares |op|'s context: finds the recording, gives it scratch when the
// workers' own is too small, and initializes the processor context in the
// op's record. Sets |*out_replayed| when the command buffer has no
// recording (recorded for another device) and was replayed inline instead.
static weft_status_t weft_local_task_compute_prepare(
    weft_local_task_queue_t* queue, weft_local_task_op_t* op,
    bool* out_replayed) {
  weft_local_task_device_t* device = queue->device;
  const char* what = weft_queue_op_kind_name(weft_local_task_op_base(op)->kind);
  weft_status_t status = WEFT_OK;
  if (weft_local_task_op_base(op)->kind == WEFT_QUEUE_OP_EXECUTE) {
    op->compute.recording =
        weft_block_command_buffer_recording(weft_local_task_op_base(op)->execute.command_buffer);
    if (!op->compute.recording) {
      *out_replayed = true;
      status = weft_command_buffer_replay_inline(
          weft_local_task_op_base(op)->execute.command_buffer, weft_local_task_op_base(op)->execute.binding_table,
          device->base.host_allocator);
    }
  }
  const weft_block_recording_t* recording = op->compute.recording;
  // Every drainer's scratch has the same size (worker 0's is asked: a
  // submitting host issuing the op has no drainer index).
  size_t worker_scratch_size = 0;
  weft_executor_worker_local_memory(device->executor, 0, &worker_scratch_size);
  if (recording && recording->max_local_memory_size > worker_scratch_size) {
    size_t size = ((size_t)recording->max_local_memory_size + 63) & ~(size_t)63;
    void* scratch = NULL;
    status =
        weft_local_task_op_allocate(op, size * device->drainer_count, &scratch);
    op->compute.scratch = (uint8_t*)scratch;
    op->compute.scratch_size = size;
  }
  void* storage = NULL;
  size_t storage_size =
      recording ? weft_block_processor_context_storage_size(recording) : 0;
  if (weft_status_is_ok(status) && recording) {
    status = weft_local_task_op_allocate(op, storage_size, &storage);
  }
  if (weft_status_is_ok(status) && recording) {
    weft_block_processor_params_t params;
    memset(&params, 0, sizeof(params));
    params.worker_count = device->drainer_count;
    params.layout_worker_count = device->layout_drainer_count;
    params.seats = device->drainer_seats;
    params.what = what;
    op->compute.failed_command = UINT32_MAX;
    params.failed_command = &op->compute.failed_command;
    params.region_ready = weft_local_task_compute_region_ready;
    params.region_ready_user_data = &queue->compute;
    weft_binding_table_t binding_table = {0, NULL};
    if (weft_local_task_op_base(op)->kind == WEFT_QUEUE_OP_EXECUTE) {
      binding_table = weft_local_task_op_base(op)->execute.binding_table;
    }
    status = weft_block_processor_context_initialize(
        recording, binding_table, &params, storage, storage_size,
        &op->compute.context);
  }
  return status;
}

void weft_local_task_compute_start(weft_local_task_queue_t* queue,
                                   weft_local_task_op_t* op,
                                   uint32_t worker_index, bool may_run_here) {
  weft_local_task_device_t* device = queue->device;
  bool replayed = false;
  weft_status_t status =
      weft_local_task_compute_prepare(queue, op, &replayed);
  weft_block_processor_context_t* context = op->compute.context;
  if (!weft_status_is_ok(status) || replayed) {
    weft_local_task_compute_finish_and_release(op, status);
  } else if (may_run_here &&
             (device->drainer_count == 1 ||
              (op->compute.recording->region_count <= 1 &&
               weft_block_processor_desired_workers(context) <= 1))) {
    // One worker is all it could use: run it here, without the hop to the
    // compute process (the processor takes its one-worker path). Not where
    // the control step runs outside the control process (a submitting
    // host, or a drain that made the op ready): a submit stays
    // asynchronous, a drain is not held up, and the compute process takes
    // it.
    size_t scratch_size = 0;
    void* scratch = weft_local_task_compute_scratch(
        device->executor, op, worker_index, &scratch_size);
    while (weft_block_processor_drain(context, worker_index, scratch,
                                      scratch_size) !=
           WEFT_BLOCK_DRAIN_COMPLETED) {
    }
    weft_local_task_compute_finish_and_release(
        op, weft_block_processor_consume_status(context));
  } else {
    weft_mpsc_list_push(&queue->compute.incoming, &weft_local_task_op_record(op)->entry);
    weft_process_wake(&queue->compute.process);
  }
}

//===----------------------------------------------------------------------===//
// Lifecycle
//===----------------------------------------------------------------------===//

void weft_local_task_compute_initialize(weft_local_task_queue_t* queue) {
  weft_local_task_compute_t* compute = &queue->compute;
  weft_mpsc_list_initialize(&compute->incoming);
  // Empty lane: CLOSED with no item.
  atomic_init(&compute->state, WEFT_LOCAL_TASK_COMPUTE_CLOSED);
  atomic_init(&compute->current, NULL);
  compute->queued_head = NULL;
  compute->queued_tail = NULL;
  weft_process_initialize(
      queue->device->executor, weft_local_task_compute_drain,
      queue->device->drainer_count, compute, &compute->process);
  // Scheduled now; its first drain finds nothing and it goes idle.
  weft_process_resume(&compute->process);
}

void weft_local_task_compute_cancel(weft_local_task_queue_t* queue) {
  // The running item finishes (device.h: ops already running finish);
  // queued items fail with CANCELLED as the lane's owner reaches them
  // (weft_local_task_compute_release_and_install). The wake makes sure
  // someone does.
  weft_process_wake(&queue->compute.process);
}

void weft_local_task_compute_stop(weft_local_task_queue_t* queue) {
  weft_process_cancel(&queue->compute.process);
}
