// weft: local-sync queue operations (see local_sync_device.h).
//
// Every operation goes through weft_local_sync_submit with its arguments in
// a weft_local_sync_op_args_t:
//  - waits all reached (or one failed) at submit: run now, on this thread;
//  - otherwise park it: copy the lists and arguments into an op record,
//    retain what they name and start a wait set; the wait set's ready
//    function queues the op on the thread-local ready queue of the thread
//    that reached the last wait, which runs it (or is already running ops
//    and will reach it in its loop).
// Running an op is weft_local_sync_op_run: begin (a failed wait becomes the
// error), do the work, end (signal everything, or fail everything).
#include <inttypes.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "drivers/local_sync/local_sync_device.h"
#include "hal/buffer_impl.h"
#include "hal/local/inline_command_buffer.h"
#include "hal/local/inline_dispatch.h"
#include "hal/local/queue_ops.h"
#include "hal/queue_trace.h"
#include "hal/semaphore_impl.h"
#include "hal/local/transient_buffer.h"
#include "hal/wait_set.h"

//===----------------------------------------------------------------------===//
// Operation arguments
//===----------------------------------------------------------------------===//

typedef enum weft_local_sync_op_type_e {
  WEFT_LOCAL_SYNC_OP_ALLOCA = 0,
  WEFT_LOCAL_SYNC_OP_DEALLOCA,
  WEFT_LOCAL_SYNC_OP_FILL,
  WEFT_LOCAL_SYNC_OP_UPDATE,
  WEFT_LOCAL_SYNC_OP_COPY,
  WEFT_LOCAL_SYNC_OP_READ,
  WEFT_LOCAL_SYNC_OP_WRITE,
  WEFT_LOCAL_SYNC_OP_DISPATCH,
  WEFT_LOCAL_SYNC_OP_EXECUTE,
  WEFT_LOCAL_SYNC_OP_BARRIER,
  WEFT_LOCAL_SYNC_OP_HOST_CALL,
  WEFT_LOCAL_SYNC_OP_TYPE_COUNT_,
} weft_local_sync_op_type_t;

static const char* const kWeftLocalSyncOpNames[] = {
    "queue_alloca",  "queue_dealloca", "queue_fill",      "queue_update",
    "queue_copy",    "queue_read",     "queue_write",     "queue_dispatch",
    "queue_execute", "queue_barrier",  "queue_host_call",
};
_Static_assert(sizeof(kWeftLocalSyncOpNames) /
                       sizeof(kWeftLocalSyncOpNames[0]) ==
                   WEFT_LOCAL_SYNC_OP_TYPE_COUNT_,
               "one name per op type");

// What one operation needs to run. Pointers are borrowed from the caller
// while the op runs inside its submit call; a parked op holds copies of the
// arrays and bytes (in its record) and references to every object.
typedef struct weft_local_sync_op_args_t {
  weft_local_sync_op_type_t type;
  weft_queue_affinity_t affinity;
  union {
    // ALLOCA and DEALLOCA: the transient buffer.
    struct {
      weft_buffer_t* buffer;
    } transient;
    struct {
      weft_buffer_t* target;
      weft_device_size_t offset;
      weft_device_size_t length;
      uint32_t pattern;
      uint32_t pattern_length;
    } fill;
    struct {
      const void* source;
      weft_buffer_t* target;
      weft_device_size_t offset;
      weft_device_size_t length;
    } update;
    struct {
      weft_buffer_t* source;
      weft_device_size_t source_offset;
      weft_buffer_t* target;
      weft_device_size_t target_offset;
      weft_device_size_t length;
    } copy;
    // READ (file -> buffer) and WRITE (buffer -> file).
    struct {
      weft_file_t* file;
      uint64_t file_offset;
      weft_buffer_t* buffer;
      weft_device_size_t buffer_offset;
      weft_device_size_t length;
    } file;
    struct {
      weft_executable_t* executable;
      uint32_t kernel_ordinal;
      uint32_t workgroup_count[3];
      uint32_t constant_count;
      const uint32_t* constants;
      uint32_t binding_count;
      // Resolved ranges (lengths never WEFT_WHOLE_BUFFER).
      const weft_buffer_binding_t* bindings;
    } dispatch;
    struct {
      weft_command_buffer_t* command_buffer;
      weft_binding_table_t binding_table;
    } execute;
    struct {
      weft_host_call_fn_t fn;
      void* user_data;
      uint64_t args[4];
      weft_host_call_flags_t flags;
    } host_call;
  };
} weft_local_sync_op_args_t;

// Bytes a parked op must copy for |args| beyond the record itself.
static weft_status_t weft_local_sync_op_args_extra_size(
    const weft_local_sync_op_args_t* args, size_t* out_size) {
  weft_status_t status = WEFT_OK;
  *out_size = 0;
  switch (args->type) {
    case WEFT_LOCAL_SYNC_OP_UPDATE:
      if (args->update.length > SIZE_MAX / 2) {
        status = WEFT_STATUS(RESOURCE_EXHAUSTED,
                             "queue_update: %" PRIu64
                             " bytes of host data cannot be copied",
                             (uint64_t)args->update.length);
      } else {
        *out_size = (size_t)args->update.length;
      }
      break;
    case WEFT_LOCAL_SYNC_OP_DISPATCH:
      *out_size = args->dispatch.constant_count * sizeof(uint32_t) +
                  args->dispatch.binding_count * sizeof(weft_buffer_binding_t);
      break;
    case WEFT_LOCAL_SYNC_OP_EXECUTE:
      *out_size =
          args->execute.binding_table.count * sizeof(weft_buffer_binding_t);
      break;
    default:
      break;
  }
  return status;
}

// Copies the arrays and bytes |args| borrows into |storage| (of
// weft_local_sync_op_args_extra_size bytes, 16-byte aligned) and points
// |args| at the copies.
static void weft_local_sync_op_args_copy_extra(weft_local_sync_op_args_t* args,
                                               uint8_t* storage) {
  switch (args->type) {
    case WEFT_LOCAL_SYNC_OP_UPDATE:
      if (args->update.length) {
        memcpy(storage, args->update.source, (size_t)args->update.length);
      }
      args->update.source = storage;
      break;
    case WEFT_LOCAL_SYNC_OP_DISPATCH: {
      // Bindings first (8-byte aligned), constants after.
      size_t bindings_size =
          args->dispatch.binding_count * sizeof(weft_buffer_binding_t);
      if (bindings_size) {
        memcpy(storage, args->dispatch.bindings, bindings_size);
      }
      args->dispatch.bindings = (const weft_buffer_binding_t*)storage;
      uint32_t* constants = (uint32_t*)(storage + bindings_size);
      if (args->dispatch.constant_count) {
        memcpy(constants, args->dispatch.constants,
               args->dispatch.constant_count * sizeof(uint32_t));
      }
      args->dispatch.constants = constants;
      break;
    }
    case WEFT_LOCAL_SYNC_OP_EXECUTE: {
      size_t size =
          args->execute.binding_table.count * sizeof(weft_buffer_binding_t);
      if (size) memcpy(storage, args->execute.binding_table.bindings, size);
      args->execute.binding_table.bindings =
          (const weft_buffer_binding_t*)storage;
      break;
    }
    default:
      break;
  }
}

// Retains (|retain| true) or releases every object |args| names.
static void weft_local_sync_op_args_reference(
    const weft_local_sync_op_args_t* args, bool retain) {
  void* objects[3] = {NULL, NULL, NULL};
  switch (args->type) {
    case WEFT_LOCAL_SYNC_OP_ALLOCA:
    case WEFT_LOCAL_SYNC_OP_DEALLOCA:
      objects[0] = args->transient.buffer;
      break;
    case WEFT_LOCAL_SYNC_OP_FILL:
      objects[0] = args->fill.target;
      break;
    case WEFT_LOCAL_SYNC_OP_UPDATE:
      objects[0] = args->update.target;
      break;
    case WEFT_LOCAL_SYNC_OP_COPY:
      objects[0] = args->copy.source;
      objects[1] = args->copy.target;
      break;
    case WEFT_LOCAL_SYNC_OP_READ:
    case WEFT_LOCAL_SYNC_OP_WRITE:
      objects[0] = args->file.file;
      objects[1] = args->file.buffer;
      break;
    case WEFT_LOCAL_SYNC_OP_DISPATCH:
      objects[0] = args->dispatch.executable;
      for (uint32_t i = 0; i < args->dispatch.binding_count; ++i) {
        if (retain) {
          weft_resource_retain(args->dispatch.bindings[i].buffer);
        } else {
          weft_resource_release(args->dispatch.bindings[i].buffer);
        }
      }
      break;
    case WEFT_LOCAL_SYNC_OP_EXECUTE:
      objects[0] = args->execute.command_buffer;
      for (uint32_t i = 0; i < args->execute.binding_table.count; ++i) {
        if (retain) {
          weft_resource_retain(args->execute.binding_table.bindings[i].buffer);
        } else {
          weft_resource_release(args->execute.binding_table.bindings[i].buffer);
        }
      }
      break;
    default:
      break;
  }
  // Every HAL object starts with a weft_resource_t (NULL is a no-op).
  for (size_t i = 0; i < sizeof(objects) / sizeof(objects[0]); ++i) {
    if (retain) {
      weft_resource_retain(objects[i]);
    } else {
      weft_resource_release(objects[i]);
    }
  }
}

//===----------------------------------------------------------------------===//
// Doing the work
//===----------------------------------------------------------------------===//

// Does the work of an op whose waits are all reached.
static weft_status_t weft_local_sync_do(weft_local_sync_device_t* device,
                                        const weft_local_sync_op_args_t* args,
                                        const weft_queue_op_identity_t* op,
                                        bool* out_ended) {
  weft_status_t status = WEFT_OK;
  switch (args->type) {
    case WEFT_LOCAL_SYNC_OP_ALLOCA:
      status = weft_transient_buffer_commit(args->transient.buffer);
      break;
    case WEFT_LOCAL_SYNC_OP_DEALLOCA:
      status = weft_transient_buffer_decommit(args->transient.buffer);
      break;
    case WEFT_LOCAL_SYNC_OP_FILL:
      status = weft_buffer_transfer_fill(
          args->fill.target, args->fill.offset, args->fill.length,
          &args->fill.pattern, args->fill.pattern_length, "queue_fill");
      break;
    case WEFT_LOCAL_SYNC_OP_UPDATE:
      status = weft_buffer_transfer_write(
          args->update.target, args->update.offset, args->update.source,
          args->update.length, "queue_update");
      break;
    case WEFT_LOCAL_SYNC_OP_COPY:
      status = weft_buffer_transfer_copy(
          args->copy.source, args->copy.source_offset, args->copy.target,
          args->copy.target_offset, args->copy.length, "queue_copy");
      break;
    case WEFT_LOCAL_SYNC_OP_READ:
      status = weft_local_queue_read(
          args->file.file, args->file.file_offset, args->file.buffer,
          args->file.buffer_offset, args->file.length);
      break;
    case WEFT_LOCAL_SYNC_OP_WRITE:
      status = weft_local_queue_write(
          args->file.buffer, args->file.buffer_offset, args->file.file,
          args->file.file_offset, args->file.length);
      break;
    case WEFT_LOCAL_SYNC_OP_DISPATCH:
      status = weft_inline_dispatch(
          args->dispatch.executable, args->dispatch.kernel_ordinal,
          args->dispatch.workgroup_count, args->dispatch.constant_count,
          args->dispatch.constants, args->dispatch.binding_count,
          args->dispatch.bindings, device->base.host_allocator);
      break;
    case WEFT_LOCAL_SYNC_OP_EXECUTE:
      status = weft_command_buffer_replay_inline(args->execute.command_buffer,
                                                 args->execute.binding_table,
                                                 device->base.host_allocator);
      break;
    case WEFT_LOCAL_SYNC_OP_BARRIER:
      break;
    case WEFT_LOCAL_SYNC_OP_HOST_CALL:
      status = weft_local_queue_host_call(
          &device->base, args->affinity, args->host_call.fn,
          args->host_call.user_data, args->host_call.args,
          args->host_call.flags, op, out_ended);
      break;
    default:
      status = WEFT_STATUS(INTERNAL, "local-sync: unknown op type %d",
                           (int)args->type);
      break;
  }
  return status;
}

// The one begin/do/end path of every op. |wait_status| (consumed) is OK
// when every wait was reached, or the failure of a wait: then nothing runs
// and the signals fail with it. With |shutting_down| (a parked op of a
// released device) nothing runs either (weft_local_queue_not_run_status).
static void weft_local_sync_op_run(weft_local_sync_device_t* device,
                                   const weft_local_sync_op_args_t* args,
                                   weft_semaphore_list_t wait_list,
                                   weft_semaphore_list_t signal_list,
                                   weft_status_t wait_status,
                                   bool shutting_down, bool swept,
                                   uint64_t trace_id) {
  // Begin.
  weft_status_t status = wait_status;
  bool ended = false;
  const weft_queue_op_identity_t identity = {
      .op_name = kWeftLocalSyncOpNames[args->type],
      .device = &device->base,
      .queue_index = 0,
      .wait_list = wait_list,
      .signal_list = signal_list,
  };
  weft_queue_trace_begin(trace_id, identity.op_name);
  if (shutting_down || !weft_status_is_ok(status)) {
    status = weft_local_queue_not_run_status(&identity, status, swept);
  } else {
    status = weft_local_queue_annotate_error(
        &identity, args->type == WEFT_LOCAL_SYNC_OP_HOST_CALL,
        weft_local_sync_do(device, args, &identity, &ended));
  }
  // End.
  weft_queue_trace_signal(trace_id, weft_status_is_ok(status));
  if (ended) {
    weft_status_ignore(status);
  } else {
    weft_local_queue_signal_or_fail(&identity, status);
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
  // Copies of the lists (arrays in this record; semaphores retained).
  weft_semaphore_list_t wait_list;
  weft_semaphore_list_t signal_list;
  weft_local_sync_op_args_t args;  // objects retained, arrays copied
  weft_wait_set_t* wait_set;       // in this record
  // Set by the release sweep (under the pending mutex) when it cancelled
  // the op's waits.
  bool cancelled;
};

// Which op |op| is, for messages (hal/queue_describe.h).
static weft_queue_op_identity_t weft_local_sync_op_identity(
    const weft_local_sync_op_t* op) {
  weft_queue_op_identity_t identity = {
      .op_name = kWeftLocalSyncOpNames[op->args.type],
      .device = &op->device->base,
      .queue_index = 0,
      .wait_list = op->wait_list,
      .signal_list = op->signal_list,
  };
  return identity;
}

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
  weft_local_sync_op_run(device, &op->args, op->wait_list, op->signal_list,
                         op->wait_status,
                         weft_local_sync_device_is_shutting_down(device),
                         op->cancelled, op->trace_id);

  weft_local_sync_op_args_reference(&op->args, /*retain=*/false);
  for (uint32_t i = 0; i < op->wait_list.count; ++i) {
    weft_semaphore_release(op->wait_list.semaphores[i]);
  }
  for (uint32_t i = 0; i < op->signal_list.count; ++i) {
    weft_semaphore_release(op->signal_list.semaphores[i]);
  }
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
    const weft_queue_op_identity_t identity = weft_local_sync_op_identity(op);
    op->cancelled = true;
    weft_wait_set_cancel(op->wait_set,
                         weft_local_queue_cancelled(&identity,
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

// Allocates a parked op record for |args| and fills it: copies of the lists
// and of the arguments' arrays and bytes, references on every semaphore and
// object and on the device. On failure nothing is retained.
static weft_status_t weft_local_sync_op_allocate(
    weft_local_sync_device_t* device, const weft_local_sync_op_args_t* args,
    weft_semaphore_list_t wait_list, weft_semaphore_list_t signal_list,
    weft_local_sync_op_t** out_op) {
  size_t extra_size = 0;
  weft_status_t status = weft_local_sync_op_args_extra_size(args, &extra_size);
  // Layout: record | wait values, signal values | wait semaphores, signal
  // semaphores | wait set | extra. Counts are uint32, so only the extra
  // bytes can overflow.
  uint32_t entry_count = wait_list.count + signal_list.count;
  size_t record_size = weft_local_sync_align16(sizeof(weft_local_sync_op_t));
  size_t values_size =
      weft_local_sync_align16((size_t)entry_count * sizeof(uint64_t));
  size_t semaphores_size =
      weft_local_sync_align16((size_t)entry_count * sizeof(weft_semaphore_t*));
  size_t wait_set_size =
      weft_local_sync_align16(weft_wait_set_storage_size(wait_list.count));
  size_t fixed_size =
      record_size + values_size + semaphores_size + wait_set_size;
  if (weft_status_is_ok(status) && extra_size > SIZE_MAX - fixed_size) {
    status = WEFT_STATUS(RESOURCE_EXHAUSTED,
                         "%s: the parked operation needs more than SIZE_MAX "
                         "bytes",
                         kWeftLocalSyncOpNames[args->type]);
  }
  uint8_t* storage = NULL;
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc_uninitialized(
        device->base.host_allocator, fixed_size + extra_size, (void**)&storage);
  }
  if (weft_status_is_ok(status)) {
    weft_local_sync_op_t* op = (weft_local_sync_op_t*)storage;
    memset(op, 0, sizeof(*op));
    uint64_t* values = (uint64_t*)(storage + record_size);
    weft_semaphore_t** semaphores =
        (weft_semaphore_t**)(storage + record_size + values_size);
    op->wait_set = (weft_wait_set_t*)(storage + record_size + values_size +
                                      semaphores_size);
    op->wait_list.count = wait_list.count;
    op->wait_list.semaphores = semaphores;
    op->wait_list.values = values;
    op->signal_list.count = signal_list.count;
    op->signal_list.semaphores = semaphores + wait_list.count;
    op->signal_list.values = values + wait_list.count;
    for (uint32_t i = 0; i < entry_count; ++i) {
      bool is_wait = i < wait_list.count;
      uint32_t j = is_wait ? i : i - wait_list.count;
      semaphores[i] =
          is_wait ? wait_list.semaphores[j] : signal_list.semaphores[j];
      values[i] = is_wait ? wait_list.values[j] : signal_list.values[j];
      weft_semaphore_retain(semaphores[i]);
    }
    op->args = *args;
    weft_local_sync_op_args_copy_extra(&op->args, storage + fixed_size);
    weft_local_sync_op_args_reference(&op->args, /*retain=*/true);
    weft_local_sync_device_hold(device);
    op->device = device;
    op->park_time = weft_time_now();
    *out_op = op;
  }
  return weft_status_annotate(status, "while parking %s",
                              kWeftLocalSyncOpNames[args->type]);
}

// Parks an op whose waits are not yet reached. On failure nothing was
// retained or started and the signals are untouched.
static weft_status_t weft_local_sync_park(weft_local_sync_device_t* device,
                                          const weft_local_sync_op_args_t* args,
                                          weft_semaphore_list_t wait_list,
                                          weft_semaphore_list_t signal_list,
                                          uint64_t trace_id) {
  weft_local_sync_op_t* op = NULL;
  weft_status_t status =
      weft_local_sync_op_allocate(device, args, wait_list, signal_list, &op);
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
    weft_wait_set_start(op->wait_set, op->wait_list, weft_local_sync_op_ready,
                        op);
  }
  return status;
}

// Checks the waits at submit: sets |*out_ready| when every one is reached,
// and returns the (annotated) failure of a failed one, which makes the op
// run now and fail.
static weft_status_t weft_local_sync_check_waits(
    weft_semaphore_list_t wait_list, bool* out_ready) {
  weft_status_t status = WEFT_OK;
  bool ready = true;
  for (uint32_t i = 0; weft_status_is_ok(status) && i < wait_list.count; ++i) {
    uint64_t value = 0;
    status = weft_semaphore_query(wait_list.semaphores[i], &value);
    if (!weft_status_is_ok(status)) {
      char label[WEFT_SEMAPHORE_LABEL_CAPACITY];
      weft_semaphore_label(wait_list.semaphores[i], label, sizeof(label));
      status = weft_status_annotate(
          status, "while waiting for semaphore %s to reach %" PRIu64, label,
          wait_list.values[i]);
    } else if (value < wait_list.values[i]) {
      ready = false;
    }
  }
  *out_ready = ready;
  return status;
}

// Runs |args| now if its waits allow, otherwise parks it.
static weft_status_t weft_local_sync_submit(
    weft_device_t* base_device, const weft_local_sync_op_args_t* args,
    weft_semaphore_list_t wait_list, weft_semaphore_list_t signal_list) {
  weft_local_sync_device_t* device = weft_local_sync_device_cast(base_device);
  bool ready = false;
  weft_status_t wait_status = weft_local_sync_check_waits(wait_list, &ready);
  weft_status_t status = WEFT_OK;
  const uint64_t trace_id = weft_queue_trace_submit();
  if (ready || !weft_status_is_ok(wait_status)) {
    weft_queue_trace_ready(trace_id);
    // A host call may drop the caller's last device reference; the device
    // must outlive the op all the same.
    const bool hold = args->type == WEFT_LOCAL_SYNC_OP_HOST_CALL;
    if (hold) weft_local_sync_device_hold(device);
    weft_local_sync_op_run(device, args, wait_list, signal_list, wait_status,
                           /*shutting_down=*/false, /*swept=*/false,
                           trace_id);
    if (hold) weft_local_sync_device_unhold(device);
  } else {
    status =
        weft_local_sync_park(device, args, wait_list, signal_list, trace_id);
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
    weft_pending_op_t pending = {
        .type_name = kWeftLocalSyncOpNames[op->args.type],
        .queue_index = 0,
        .state = "waiting",
        .detail = NULL,
        .submit_time = op->park_time,
        .wait_list = op->wait_list,
        .signal_list = op->signal_list,
    };
    visit(user_data, &pending);
  }
  weft_slim_mutex_unlock(&device->pending_mutex);
  return 0;
}

//===----------------------------------------------------------------------===//
// Queue operations
//===----------------------------------------------------------------------===//

weft_status_t weft_local_sync_device_queue_alloca(
    weft_device_t* device, weft_queue_affinity_t affinity,
    weft_semaphore_list_t wait_list, weft_semaphore_list_t signal_list,
    weft_buffer_params_t params, weft_device_size_t byte_length,
    weft_buffer_t** out_buffer) {
  weft_buffer_t* buffer = NULL;
  weft_status_t status = weft_transient_buffer_create(
      device->host_allocator, params, byte_length, &buffer);
  if (weft_status_is_ok(status)) {
    weft_local_sync_op_args_t args = {
        .type = WEFT_LOCAL_SYNC_OP_ALLOCA,
        .affinity = affinity,
        .transient = {.buffer = buffer},
    };
    status = weft_local_sync_submit(device, &args, wait_list, signal_list);
  }
  if (weft_status_is_ok(status)) {
    *out_buffer = buffer;
  } else {
    weft_buffer_release(buffer);
  }
  return status;
}

weft_status_t weft_local_sync_device_queue_dealloca(
    weft_device_t* device, weft_queue_affinity_t affinity,
    weft_semaphore_list_t wait_list, weft_semaphore_list_t signal_list,
    weft_buffer_t* buffer) {
  weft_status_t status = WEFT_OK;
  if (!weft_buffer_is_transient(buffer) ||
      weft_buffer_allocated_buffer(buffer) != buffer) {
    status = WEFT_STATUS(
        INVALID_ARGUMENT,
        "queue_dealloca: the buffer (%" PRIu64
        " bytes) was not returned by queue_alloca%s",
        (uint64_t)weft_buffer_byte_length(buffer),
        weft_buffer_is_transient(buffer) ? " (it is a subspan of one)" : "");
  }
  if (weft_status_is_ok(status)) {
    weft_local_sync_op_args_t args = {
        .type = WEFT_LOCAL_SYNC_OP_DEALLOCA,
        .affinity = affinity,
        .transient = {.buffer = buffer},
    };
    status = weft_local_sync_submit(device, &args, wait_list, signal_list);
  }
  return status;
}

weft_status_t weft_local_sync_device_queue_fill(
    weft_device_t* device, weft_queue_affinity_t affinity,
    weft_semaphore_list_t wait_list, weft_semaphore_list_t signal_list,
    weft_buffer_t* target, weft_device_size_t offset, weft_device_size_t length,
    uint32_t pattern, uint32_t pattern_length) {
  weft_local_sync_op_args_t args = {
      .type = WEFT_LOCAL_SYNC_OP_FILL,
      .affinity = affinity,
      .fill = {.target = target,
               .offset = offset,
               .length = length,
               .pattern = pattern,
               .pattern_length = pattern_length},
  };
  return weft_local_sync_submit(device, &args, wait_list, signal_list);
}

weft_status_t weft_local_sync_device_queue_update(
    weft_device_t* device, weft_queue_affinity_t affinity,
    weft_semaphore_list_t wait_list, weft_semaphore_list_t signal_list,
    const void* source, weft_buffer_t* target, weft_device_size_t offset,
    weft_device_size_t length) {
  weft_local_sync_op_args_t args = {
      .type = WEFT_LOCAL_SYNC_OP_UPDATE,
      .affinity = affinity,
      .update = {.source = source,
                 .target = target,
                 .offset = offset,
                 .length = length},
  };
  return weft_local_sync_submit(device, &args, wait_list, signal_list);
}

weft_status_t weft_local_sync_device_queue_copy(
    weft_device_t* device, weft_queue_affinity_t affinity,
    weft_semaphore_list_t wait_list, weft_semaphore_list_t signal_list,
    weft_buffer_t* source, weft_device_size_t source_offset,
    weft_buffer_t* target, weft_device_size_t target_offset,
    weft_device_size_t length) {
  weft_local_sync_op_args_t args = {
      .type = WEFT_LOCAL_SYNC_OP_COPY,
      .affinity = affinity,
      .copy = {.source = source,
               .source_offset = source_offset,
               .target = target,
               .target_offset = target_offset,
               .length = length},
  };
  return weft_local_sync_submit(device, &args, wait_list, signal_list);
}

weft_status_t weft_local_sync_device_queue_read(
    weft_device_t* device, weft_queue_affinity_t affinity,
    weft_semaphore_list_t wait_list, weft_semaphore_list_t signal_list,
    weft_file_t* file, uint64_t file_offset, weft_buffer_t* target,
    weft_device_size_t target_offset, weft_device_size_t length) {
  weft_local_sync_op_args_t args = {
      .type = WEFT_LOCAL_SYNC_OP_READ,
      .affinity = affinity,
      .file = {.file = file,
               .file_offset = file_offset,
               .buffer = target,
               .buffer_offset = target_offset,
               .length = length},
  };
  return weft_local_sync_submit(device, &args, wait_list, signal_list);
}

weft_status_t weft_local_sync_device_queue_write(
    weft_device_t* device, weft_queue_affinity_t affinity,
    weft_semaphore_list_t wait_list, weft_semaphore_list_t signal_list,
    weft_buffer_t* source, weft_device_size_t source_offset, weft_file_t* file,
    uint64_t file_offset, weft_device_size_t length) {
  weft_local_sync_op_args_t args = {
      .type = WEFT_LOCAL_SYNC_OP_WRITE,
      .affinity = affinity,
      .file = {.file = file,
               .file_offset = file_offset,
               .buffer = source,
               .buffer_offset = source_offset,
               .length = length},
  };
  return weft_local_sync_submit(device, &args, wait_list, signal_list);
}

// Bindings resolved on the stack up to this count, from the allocator above.
#define WEFT_LOCAL_SYNC_INLINE_BINDING_COUNT 16

weft_status_t weft_local_sync_device_queue_dispatch(
    weft_device_t* device, weft_queue_affinity_t affinity,
    weft_semaphore_list_t wait_list, weft_semaphore_list_t signal_list,
    weft_executable_t* executable, uint32_t kernel_ordinal,
    const uint32_t workgroup_count[3], uint32_t constant_count,
    const uint32_t* constants, uint32_t binding_count,
    const weft_buffer_ref_t* bindings) {
  weft_buffer_binding_t inline_bindings[WEFT_LOCAL_SYNC_INLINE_BINDING_COUNT];
  weft_buffer_binding_t* resolved = inline_bindings;
  weft_status_t status = WEFT_OK;
  if (binding_count > WEFT_LOCAL_SYNC_INLINE_BINDING_COUNT) {
    status = weft_allocator_malloc_array(device->host_allocator, binding_count,
                                         sizeof(*resolved), (void**)&resolved);
  }
  // Validated already: only WEFT_WHOLE_BUFFER lengths need resolving.
  for (uint32_t i = 0; weft_status_is_ok(status) && i < binding_count; ++i) {
    resolved[i].buffer = bindings[i].buffer;
    resolved[i].offset = bindings[i].offset;
    status = weft_buffer_calculate_range(bindings[i].buffer, bindings[i].offset,
                                         bindings[i].length, "queue_dispatch",
                                         &resolved[i].length);
  }
  if (weft_status_is_ok(status)) {
    weft_local_sync_op_args_t args = {
        .type = WEFT_LOCAL_SYNC_OP_DISPATCH,
        .affinity = affinity,
        .dispatch = {.executable = executable,
                     .kernel_ordinal = kernel_ordinal,
                     .workgroup_count = {workgroup_count[0], workgroup_count[1],
                                         workgroup_count[2]},
                     .constant_count = constant_count,
                     .constants = constants,
                     .binding_count = binding_count,
                     .bindings = resolved},
    };
    status = weft_local_sync_submit(device, &args, wait_list, signal_list);
  }
  if (resolved != inline_bindings) {
    weft_allocator_free(device->host_allocator, resolved);
  }
  return status;
}

weft_status_t weft_local_sync_device_queue_execute(
    weft_device_t* device, weft_queue_affinity_t affinity,
    weft_semaphore_list_t wait_list, weft_semaphore_list_t signal_list,
    weft_command_buffer_t* command_buffer, weft_binding_table_t binding_table) {
  weft_local_sync_op_args_t args = {
      .type = WEFT_LOCAL_SYNC_OP_EXECUTE,
      .affinity = affinity,
      .execute = {.command_buffer = command_buffer,
                  .binding_table = binding_table},
  };
  return weft_local_sync_submit(device, &args, wait_list, signal_list);
}

weft_status_t weft_local_sync_device_queue_barrier(
    weft_device_t* device, weft_queue_affinity_t affinity,
    weft_semaphore_list_t wait_list, weft_semaphore_list_t signal_list) {
  weft_local_sync_op_args_t args = {
      .type = WEFT_LOCAL_SYNC_OP_BARRIER,
      .affinity = affinity,
  };
  return weft_local_sync_submit(device, &args, wait_list, signal_list);
}

weft_status_t weft_local_sync_device_queue_host_call(
    weft_device_t* device, weft_queue_affinity_t affinity,
    weft_semaphore_list_t wait_list, weft_semaphore_list_t signal_list,
    weft_host_call_fn_t fn, void* user_data, const uint64_t args_in[4],
    weft_host_call_flags_t flags) {
  weft_local_sync_op_args_t args = {
      .type = WEFT_LOCAL_SYNC_OP_HOST_CALL,
      .affinity = affinity,
      .host_call = {.fn = fn,
                    .user_data = user_data,
                    .args = {args_in[0], args_in[1], args_in[2], args_in[3]},
                    .flags = flags},
  };
  return weft_local_sync_submit(device, &args, wait_list, signal_list);
}
