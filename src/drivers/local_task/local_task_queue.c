// weft: local-task queues: submit, park, the control process, shutdown and
// dump_pending (see local_task_queue.h).
#include "drivers/local_task/local_task_queue.h"

#include <inttypes.h>
#include <string.h>

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
  if (!weft_status_is_ok(status) && op->base.kind == WEFT_QUEUE_OP_EXECUTE &&
      op->base.execute.command_buffer &&
      op->compute.failed_command != UINT32_MAX) {
    // Which command, in the words of every driver (command_buffer_impl.h).
    status = weft_command_buffer_annotate_command(
        op->base.execute.command_buffer, op->compute.failed_command, status);
  }
  return weft_queue_op_annotate_error(&op->base, status);
}

void weft_local_task_op_finish(weft_local_task_op_t* op, weft_status_t status) {
  if (op->base.kind == WEFT_QUEUE_OP_EXECUTE) {
    // A command buffer holds its device, and the host may release both as
    // soon as it sees the signal: drop it first, so that the device's last
    // reference is not left to a worker (see local_task_device.h).
    weft_block_processor_context_deinitialize(op->compute.context);
    op->compute.context = NULL;
    op->compute.recording = NULL;
    weft_command_buffer_release(op->base.execute.command_buffer);
    op->base.execute.command_buffer = NULL;
  }
  weft_queue_trace_signal(op->trace_id, weft_status_is_ok(status));
  weft_queue_op_signal_or_fail(&op->base, status);
}

void weft_local_task_op_release(weft_local_task_op_t* op) {
  weft_local_task_device_t* device = op->queue->device;
  weft_local_task_op_retire(&device->op_pool, op);
  if (weft_local_task_device_is_shutting_down(device)) {
    weft_local_task_device_notify_idle(device);
  }
}

weft_status_t weft_local_task_op_not_run(weft_local_task_op_t* op) {
  weft_status_t status = op->wait_status;
  op->wait_status = WEFT_OK;
  return weft_queue_op_not_run(&op->base, status, op->cancelled);
}

// Runs one ready op on the control process (on worker |worker_index|):
// inline for everything but dispatches and command buffers, which go
// through the compute path.
static void weft_local_task_run(weft_local_task_queue_t* queue,
                                weft_local_task_op_t* op,
                                uint32_t worker_index) {
  bool ended = false;
  weft_status_t status = WEFT_OK;
  // Read before the op may retire below.
  const uint64_t trace_id = op->trace_id;
  if (trace_id) {
    // Guarded here: the name lookup is a call, not worth making per op
    // when tracing is off.
    weft_queue_trace_begin(trace_id, weft_queue_op_kind_name(op->base.kind));
  }
  if (!weft_status_is_ok(op->wait_status) || op->cancelled ||
      weft_local_task_device_is_shutting_down(queue->device)) {
    status = weft_local_task_op_not_run(op);
  } else if (op->base.kind == WEFT_QUEUE_OP_DISPATCH ||
             op->base.kind == WEFT_QUEUE_OP_EXECUTE) {
    // Finishes and releases the op itself (now or on the compute process).
    weft_local_task_compute_start(queue, op, worker_index);
    op = NULL;
  } else if ((op->base.kind == WEFT_QUEUE_OP_READ ||
              op->base.kind == WEFT_QUEUE_OP_WRITE) &&
             weft_local_task_file_is_async(op)) {
    // Finishes and releases the op itself (on the proactor's completion).
    weft_local_task_file_start(op);
    op = NULL;
  } else {
    status = weft_local_task_annotate_error(
        op, weft_local_queue_op_do(&op->base, &ended));
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

// Clears the parked mark of every op of the chain starting at |op| that
// has one (one lock for the whole batch; none when nothing was parked).
static void weft_local_task_unpark(weft_local_task_queue_t* queue,
                                   weft_local_task_op_t* op) {
  weft_slim_mutex_t* park_mutex = &queue->device->op_pool.park_mutex;
  bool locked = false;
  for (; op;
       op = op->entry.next
                ? weft_container_of(op->entry.next, weft_local_task_op_t, entry)
                : NULL) {
    // Relaxed: the op came through the ready list (acquire), after park.
    if (weft_atomic_load(&op->park_state, memory_order_relaxed) == 0) {
      continue;
    }
    if (!locked) {
      weft_slim_mutex_lock(park_mutex);
      locked = true;
    }
    // Relaxed: readers hold |park_mutex|.
    weft_atomic_store(&op->park_state, 0, memory_order_relaxed);
  }
  if (locked) weft_slim_mutex_unlock(park_mutex);
}

// Moves everything on the ready list to the end of the run list.
static void weft_local_task_take_ready(weft_local_task_queue_t* queue) {
  // A load first: an empty list is not worth an exchange on a line that
  // submitters write.
  weft_mpsc_entry_t* chain = weft_mpsc_list_is_empty(&queue->ready)
                                 ? NULL
                                 : weft_mpsc_list_pop_all(&queue->ready);
  if (chain) {
    weft_local_task_op_t* first =
        weft_container_of(chain, weft_local_task_op_t, entry);
    weft_local_task_unpark(queue, first);
    weft_mpsc_entry_t* last = chain;
    while (last->next) last = last->next;
    if (queue->run_tail) {
      queue->run_tail->entry.next = chain;
    } else {
      queue->run_head = first;
    }
    queue->run_tail = weft_container_of(last, weft_local_task_op_t, entry);
  }
}

static weft_process_drain_result_t weft_local_task_control_drain(
    weft_process_t* process, uint32_t worker_index) {
  weft_local_task_queue_t* queue = (weft_local_task_queue_t*)process->user_data;
  weft_local_task_device_t* previous =
      weft_local_task_device_swap_draining(queue->device);
  weft_process_drain_result_t result = WEFT_PROCESS_DRAIN_NO_WORK;
  for (int i = 0; i < WEFT_LOCAL_TASK_CONTROL_BATCH; ++i) {
    // Ops an op just made ready (a chain on this queue) run in this same
    // drain, without a round trip through the executor.
    if (!queue->run_head) weft_local_task_take_ready(queue);
    if (!queue->run_head) break;
    weft_local_task_op_t* op = queue->run_head;
    weft_mpsc_entry_t* next = op->entry.next;
    queue->run_head =
        next ? weft_container_of(next, weft_local_task_op_t, entry) : NULL;
    if (!queue->run_head) queue->run_tail = NULL;
    weft_local_task_run(queue, op, worker_index);
    result = WEFT_PROCESS_DRAIN_DID_WORK;
  }
  weft_duration_t linger_ns = queue->device->control_linger_ns;
  if (result == WEFT_PROCESS_DRAIN_DID_WORK) {
    if (linger_ns > 0) queue->last_work_time = weft_time_now();
  } else if (weft_process_is_cancelled(process)) {
    // Stopped at shutdown, after every op retired.
    result = WEFT_PROCESS_DRAIN_COMPLETED;
  } else if (linger_ns > 0 &&
             weft_time_now() - queue->last_work_time < linger_ns) {
    // Linger: stay scheduled a little (the executor drains us again, after
    // anything else waiting), so an op pushed now is seen without a wake.
    weft_cpu_relax();
    result = WEFT_PROCESS_DRAIN_DID_WORK;
  }
  weft_local_task_device_swap_draining(previous);
  return result;
}

// Pushes a ready op and wakes the control process.
static void weft_local_task_push_ready(weft_local_task_queue_t* queue,
                                       weft_local_task_op_t* op) {
  weft_mpsc_list_push(&queue->ready, &op->entry);
  weft_process_wake(&queue->control);
}

//===----------------------------------------------------------------------===//
// Parking
//===----------------------------------------------------------------------===//

// The wait set's ready function: the op's waits are all reached (or one
// failed, or shutdown cancelled them). Runs on the thread that did that.
static void weft_local_task_op_ready(void* user_data, weft_status_t status) {
  weft_local_task_op_t* op = (weft_local_task_op_t*)user_data;
  weft_local_task_queue_t* queue = op->queue;
  weft_local_task_device_t* device = queue->device;
  op->wait_status = status;
  weft_queue_trace_ready(op->trace_id);
  // Counted across every touch of the device below: once pushed, the op may
  // run and retire at once, and a device shutting down then waits for this
  // count to drop before it frees what this call still touches. The
  // decrement is the last access. Relaxed increment: the op is still live
  // here, which keeps shutdown waiting until the op retires.
  weft_atomic_fetch_add(&device->op_pool.readying_count, 1,
                        memory_order_relaxed);
  weft_local_task_push_ready(queue, op);
  if (weft_local_task_device_is_shutting_down(device)) {
    weft_local_task_device_notify_idle(device);
  }
  // Seq_cst: pairs with destroy's load in weft_local_task_device_wait_idle.
  weft_atomic_fetch_sub(&device->op_pool.readying_count, 1,
                        memory_order_seq_cst);
}

// Marks |op| parked and starts its wait set. From the call on the op
// belongs to the wait set: it may already have run (and been recycled) when
// this returns.
static void weft_local_task_park(weft_local_task_op_t* op) {
  // Only parked ops show in dump_pending: the clock is read for them only.
  op->submit_time = weft_time_now();
  // Release: dump_pending and the sweep (acquire) see the fields filled.
  weft_atomic_store(&op->park_state, WEFT_LOCAL_TASK_OP_PARKED,
                    memory_order_release);
  weft_wait_set_start(op->wait_set, WEFT_WAIT_MODE_ALL, op->base.wait_list,
                      WEFT_TIME_INFINITE_FUTURE, weft_local_task_op_ready, op);
}

// Calls |fn(op, user_data)| for every op of |queue| whose park_state is
// |state| (parked, or in file I/O), holding the pool's park mutex (so none
// of them can move on meanwhile) and its cache mutex (the record list).
static void weft_local_task_for_each_marked(
    weft_local_task_queue_t* queue, uint32_t state,
    void (*fn)(weft_local_task_op_t* op, void* user_data), void* user_data) {
  weft_local_task_op_pool_t* pool = &queue->device->op_pool;
  weft_slim_mutex_lock(&pool->park_mutex);
  weft_slim_mutex_lock(&pool->cache_mutex);
  for (weft_local_task_op_t* op = pool->all_head; op; op = op->all_next) {
    // Acquire: pairs with park's (and the file start's) release.
    if (weft_atomic_load(&op->park_state, memory_order_acquire) == state &&
        op->queue == queue) {
      fn(op, user_data);
    }
  }
  weft_slim_mutex_unlock(&pool->cache_mutex);
  weft_slim_mutex_unlock(&pool->park_mutex);
}

// Cancels the waits of a parked |op| at shutdown (park mutex held, so its
// record stays put). When that finishes its wait set, the op becomes ready
// with CANCELLED naming it (or with a wait's failure that came first) and
// fails its signals when the control process reaches it.
static void weft_local_task_cancel_waits(weft_local_task_op_t* op,
                                         void* user_data) {
  (void)user_data;
  op->cancelled = true;
  weft_wait_set_cancel(op->wait_set,
                       weft_queue_op_cancelled(&op->base,
                                               /*while_waiting=*/true));
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
  weft_local_task_for_each_marked(queue, WEFT_LOCAL_TASK_OP_PARKED,
                                  weft_local_task_cancel_waits, NULL);
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
  weft_status_t status = weft_local_task_op_acquire(&device->op_pool, &op);
  if (weft_status_is_ok(status)) {
    op->queue = queue;
    status = weft_local_task_op_capture(op, source, /*park=*/!ready);
  }
  if (!weft_status_is_ok(status)) {
    weft_local_task_op_discard(&device->op_pool, op);
  } else if (ready) {
    op->trace_id = weft_queue_trace_submit();
    weft_queue_trace_ready(op->trace_id);
    weft_local_task_push_ready(queue, op);
  } else {
    op->trace_id = weft_queue_trace_submit();
    weft_local_task_park(op);
  }
  return status;
}

//===----------------------------------------------------------------------===//
// Diagnostics
//===----------------------------------------------------------------------===//

typedef struct weft_local_task_describe_state_t {
  weft_pending_op_visit_fn_t visit;
  void* user_data;
  uint64_t count;
} weft_local_task_describe_state_t;

// Describes a parked op or one in file I/O (pool's park mutex held, so it
// stays put).
static void weft_local_task_describe_op(weft_local_task_op_t* op,
                                        void* user_data) {
  weft_local_task_describe_state_t* state =
      (weft_local_task_describe_state_t*)user_data;
  bool in_file_io = weft_atomic_load(&op->park_state, memory_order_relaxed) ==
                    WEFT_LOCAL_TASK_OP_IN_FILE_IO;
  char detail[160];
  if (in_file_io) weft_local_task_file_describe(op, detail, sizeof(detail));
  weft_pending_op_t pending = weft_pending_op_for(
      &op->base, in_file_io ? "in file I/O" : "waiting", op->submit_time);
  if (in_file_io) {
    pending.detail = detail;
    // No waits left (it kept none, or they are all reached).
    pending.wait_list = weft_semaphore_list_empty();
  }
  state->visit(state->user_data, &pending);
  ++state->count;
}

uint64_t weft_local_task_queue_for_each_pending(
    weft_local_task_queue_t* queue, weft_pending_op_visit_fn_t visit,
    void* user_data) {
  // Lock order: the park and cache mutexes, then each semaphore's (the
  // visitor queries them); no path takes them the other way round
  // (timepoints fire outside semaphore locks and never take these).
  weft_local_task_describe_state_t state = {visit, user_data, 0};
  weft_local_task_for_each_marked(queue, WEFT_LOCAL_TASK_OP_PARKED,
                                  weft_local_task_describe_op, &state);
  weft_local_task_for_each_marked(queue, WEFT_LOCAL_TASK_OP_IN_FILE_IO,
                                  weft_local_task_describe_op, &state);
  return state.count;
}
