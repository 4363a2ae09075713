// weft cuda driver: the pending queue, issue, and the completion thread
// (see cuda_device.h).
#include <inttypes.h>
#include <stdalign.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "drivers/cuda/cuda_buffer.h"
#include "drivers/cuda/cuda_device.h"
#include "drivers/cuda/cuda_executable.h"
#include "drivers/cuda/cuda_graph.h"
#include "drivers/cuda/cuda_op.h"
#include "drivers/cuda/cuda_semaphore.h"
#include "hal/command_buffer_impl.h"
#include "hal/gpu/op_result.h"
#include "hal/queue_completion.h"
#include "hal/queue_trace.h"
#include "hal/semaphore_impl.h"

//===----------------------------------------------------------------------===//
// Records
//===----------------------------------------------------------------------===//

// Takes a record from the device's scheduler for |source| (captured, with
// room for a wait set) and sets up its driver part.
static weft_status_t weft_cuda_op_allocate(weft_cuda_device_t* device,
                                           const weft_queue_op_t* source,
                                           weft_cuda_op_t** out_op) {
  *out_op = NULL;
  weft_scheduled_op_t* record = NULL;
  weft_status_t status = weft_queue_scheduler_acquire(
      &device->scheduler, source, WEFT_QUEUE_OP_CAPTURE_ALL, /*park=*/true,
      &record);
  if (weft_status_is_ok(status)) {
    weft_cuda_op_t* op = (weft_cuda_op_t*)record->driver;
    op->device = device;
    op->queue = weft_cuda_device_select_queue(device, source->affinity);
    record->submit_time = weft_time_now();
    atomic_init(&op->ref_count, 1u);
    *out_op = op;
  }
  return status;
}

void weft_cuda_op_release(weft_cuda_op_t* op) {
  if (weft_atomic_fetch_sub(&op->ref_count, 1u, memory_order_acq_rel) != 1u) {
    return;
  }
  weft_cuda_event_release(op->event);
  weft_cuda_event_release(op->trace_start);
  weft_cuda_event_release(op->trace_epoch);
  weft_status_free(op->issue_status);
  weft_queue_scheduler_retire(weft_cuda_op_record(op));
}

//===----------------------------------------------------------------------===//
// Readiness
//===----------------------------------------------------------------------===//

// In-stream waits gathered for one issue; more than this many waits met on
// the GPU in one op's wait list are met by holding the op instead.
#define WEFT_CUDA_MAX_STREAM_WAITS 16

typedef struct weft_cuda_stream_waits_t {
  // Waits met on the GPU (some need nothing: the stream is already behind
  // their signal), and those the stream must be told of.
  uint32_t met_on_gpu;
  // Bit i: entry i of the wait list is met on the GPU (hal/gpu/op_result.h).
  uint64_t device_waits;
  uint32_t count;
  weft_cuda_stream_wait_t waits[WEFT_CUDA_MAX_STREAM_WAITS];
} weft_cuda_stream_waits_t;

static void weft_cuda_stream_waits_release(weft_cuda_stream_waits_t* waits) {
  for (uint32_t i = 0; i < waits->count; ++i) {
    weft_cuda_event_release(waits->waits[i].event);
  }
  waits->count = 0;
}

// True when every wait of |op| is reached on the host or (unless it is a
// host call, which runs on the host) signalled by an op issued on this
// device; what the stream must wait for goes to |waits| (released by the
// caller). Called with the device mutex held.
static bool weft_cuda_op_is_ready(weft_cuda_device_t* device,
                                  const weft_cuda_op_t* op,
                                  weft_cuda_stream_waits_t* waits) {
  waits->count = 0;
  waits->met_on_gpu = 0;
  waits->device_waits = 0;
  const weft_semaphore_list_t list = weft_cuda_op_base(op)->wait_list;
  const bool host_only = weft_cuda_op_base(op)->kind == WEFT_QUEUE_OP_HOST_CALL;
  for (uint32_t i = 0; i < list.count; ++i) {
    uint64_t value = 0;
    if (weft_semaphore_peek(list.semaphores[i], &value)) {
      // Failed: the wait set reports it with the original message.
      weft_cuda_stream_waits_release(waits);
      return false;
    }
    if (value >= list.values[i]) continue;
    weft_cuda_semaphore_t* semaphore =
        host_only ? NULL
                  : weft_cuda_semaphore_cast(list.semaphores[i],
                                             device->base.domain);
    weft_cuda_stream_wait_t wait;
    // An entry past the mask's bits is met on the host (the park's mask,
    // weft_cuda_op_issued_entries, leaves it out too).
    if (!semaphore || waits->met_on_gpu == WEFT_CUDA_MAX_STREAM_WAITS ||
        i >= WEFT_GPU_MAX_DEVICE_WAITS ||
        !weft_cuda_semaphore_find_stream_wait(semaphore, list.values[i],
                                              op->queue->stream, &wait)) {
      weft_cuda_stream_waits_release(waits);
      return false;
    }
    ++waits->met_on_gpu;
    waits->device_waits |= (uint64_t)1 << i;
    if (wait.event || wait.word) waits->waits[waits->count++] = wait;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Issue
//===----------------------------------------------------------------------===//

// Takes |count| consecutive status slots, zeroed, from the device's ring
// into |*out_first|; false when the ring has no room. Called with the
// device mutex held.
static bool weft_cuda_status_acquire(weft_cuda_device_t* device,
                                     uint32_t count, uint32_t* out_first) {
  if (!weft_gpu_status_ring_acquire(&device->status_ring, count, out_first)) {
    return false;
  }
  memset(&device->status_slots[*out_first], 0,
         count * sizeof(weft_cuda_status_t));
  return true;
}

// Gives back |op|'s slots (ops complete in the order they took them).
// Called with the device mutex held.
static void weft_cuda_status_release(weft_cuda_device_t* device,
                                     weft_cuda_op_t* op) {
  if (!op->status_slot_count) return;
  weft_gpu_status_ring_release(&device->status_ring, op->status_slot,
                               op->status_slot_count);
  op->status_slot_count = 0;
}

// Kernel parameters of one launch: values and the pointers to them.
#define WEFT_CUDA_MAX_KERNEL_PARAMS 256

static weft_status_t weft_cuda_launch(weft_cuda_device_t* device,
                                      CUstream stream,
                                      weft_executable_t* executable,
                                      uint32_t ordinal,
                                      const uint32_t workgroup_count[3],
                                      uint32_t constant_count,
                                      const uint32_t* constants,
                                      uint32_t binding_count,
                                      const weft_buffer_binding_t* bindings,
                                      CUdeviceptr status_word) {
  const weft_cuda_kernel_t* kernel =
      weft_cuda_executable_kernel(executable, ordinal);
  if (!kernel) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "executable '%s' is not a cuda executable",
                       weft_executable_name(executable));
  }
  if (!workgroup_count[0] || !workgroup_count[1] || !workgroup_count[2]) {
    return WEFT_OK;  // nothing to run
  }
  const uint32_t param_count = binding_count * 2 + constant_count + 1;
  if (param_count > WEFT_CUDA_MAX_KERNEL_PARAMS) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "kernel '%s' takes %u parameters (at most %u)",
                       weft_executable_kernel_info(executable, ordinal)->name,
                       param_count, WEFT_CUDA_MAX_KERNEL_PARAMS);
  }
  uint64_t values[WEFT_CUDA_MAX_KERNEL_PARAMS];
  void* params[WEFT_CUDA_MAX_KERNEL_PARAMS];
  uint32_t next = 0;
  weft_status_t status = WEFT_OK;
  for (uint32_t i = 0; weft_status_is_ok(status) && i < binding_count; ++i) {
    CUdeviceptr pointer = 0;
    status = weft_cuda_buffer_device_pointer(bindings[i].buffer,
                                             bindings[i].offset, &pointer);
    values[next] = pointer;
    params[next] = &values[next];
    ++next;
  }
  for (uint32_t i = 0; weft_status_is_ok(status) && i < binding_count; ++i) {
    values[next] = bindings[i].length;
    params[next] = &values[next];
    ++next;
  }
  // Constants are 4-byte parameters: each points at its own 4 bytes.
  uint32_t constant_values[WEFT_CUDA_MAX_KERNEL_PARAMS];
  for (uint32_t i = 0; weft_status_is_ok(status) && i < constant_count; ++i) {
    constant_values[i] = constants[i];
    params[next++] = &constant_values[i];
  }
  values[next] = status_word;
  params[next] = &values[next];
  if (weft_status_is_ok(status)) {
    char call[160];
    snprintf(call, sizeof(call),
             "cuLaunchKernel('%s', grid %ux%ux%u, block %ux%ux%u)",
             weft_executable_kernel_info(executable, ordinal)->name,
             workgroup_count[0], workgroup_count[1], workgroup_count[2],
             kernel->block_size[0], kernel->block_size[1],
             kernel->block_size[2]);
    const weft_cuda_symbols_t* symbols = device->symbols;
    status = weft_cuda_result_to_status(
        symbols,
        symbols->cuLaunchKernel(
            kernel->function, workgroup_count[0], workgroup_count[1],
            workgroup_count[2], kernel->block_size[0], kernel->block_size[1],
            kernel->block_size[2], kernel->shared_memory_size,
            stream, params, NULL),
        call);
  }
  return status;
}

// Queues a fill of |length| bytes at |target| + |offset| on the stream.
static weft_status_t weft_cuda_fill(weft_cuda_device_t* device,
                                    CUstream stream,
                                    weft_buffer_t* target,
                                    weft_device_size_t offset,
                                    weft_device_size_t length,
                                    uint32_t pattern,
                                    uint32_t pattern_length) {
  CUdeviceptr pointer = 0;
  weft_status_t status =
      weft_cuda_buffer_device_pointer(target, offset, &pointer);
  if (!weft_status_is_ok(status) || length == 0) return status;
  const weft_cuda_symbols_t* symbols = device->symbols;
  switch (pattern_length) {
    case 1:
      return WEFT_CUDA_CALL(
          symbols, cuMemsetD8Async(pointer, (unsigned char)pattern,
                                   (size_t)length, stream));
    case 2:
      return WEFT_CUDA_CALL(
          symbols, cuMemsetD16Async(pointer, (unsigned short)pattern,
                                    (size_t)length / 2, stream));
    default:
      return WEFT_CUDA_CALL(
          symbols, cuMemsetD32Async(pointer, pattern, (size_t)length / 4,
                                    stream));
  }
}

static weft_status_t weft_cuda_copy(weft_cuda_device_t* device,
                                    CUstream stream,
                                    weft_buffer_t* source,
                                    weft_device_size_t source_offset,
                                    weft_buffer_t* target,
                                    weft_device_size_t target_offset,
                                    weft_device_size_t length) {
  CUdeviceptr from = 0;
  CUdeviceptr to = 0;
  weft_status_t status =
      weft_cuda_buffer_device_pointer(source, source_offset, &from);
  if (weft_status_is_ok(status)) {
    status = weft_cuda_buffer_device_pointer(target, target_offset, &to);
  }
  if (weft_status_is_ok(status) && length > 0) {
    status = WEFT_CUDA_CALL(
        device->symbols,
        cuMemcpyAsync(to, from, (size_t)length, stream));
  }
  return status;
}

// Launches a reusable command buffer's graph (cuda_graph.h), or replays a
// one-shot one onto the stream command by command; |out_entries| gets the
// stream operations that takes (one launch, or one per command).
static weft_status_t weft_cuda_execute(weft_cuda_device_t* device,
                                       CUstream stream,
                                       const weft_queue_op_t* op,
                                       CUdeviceptr status_word,
                                       uint32_t* out_entries) {
  const weft_binding_table_t table = op->execute.binding_table;
  weft_cuda_graph_t* graph =
      weft_cuda_graph_lookup(device, op->execute.command_buffer);
  *out_entries = 1;
  if (graph) {
    return weft_cuda_graph_launch(device, stream, graph,
                                  op->execute.command_buffer, table,
                                  status_word);
  }
  uint32_t count = 0;
  const weft_command_t* commands =
      weft_command_buffer_commands(op->execute.command_buffer, &count);
  *out_entries = count;
  weft_status_t status = WEFT_OK;
  uint32_t dispatch_index = 0;
  for (uint32_t i = 0; weft_status_is_ok(status) && i < count; ++i) {
    const weft_command_t* command = &commands[i];
    switch (command->type) {
      case WEFT_COMMAND_TYPE_BARRIER:
        break;  // one stream: everything is already in order
      case WEFT_COMMAND_TYPE_FILL: {
        weft_buffer_binding_t target;
        status = weft_command_buffer_resolve_fill(&command->fill, table,
                                                  "queue_execute", &target);
        if (weft_status_is_ok(status)) {
          status = weft_cuda_fill(device, stream, target.buffer,
                                  target.offset, target.length,
                                  command->fill.pattern,
                                  command->fill.pattern_length);
        }
        break;
      }
      case WEFT_COMMAND_TYPE_UPDATE: {
        weft_buffer_binding_t target;
        status = weft_command_buffer_resolve_ref(command->update.target, table,
                                                 "queue_execute", &target);
        CUdeviceptr pointer = 0;
        if (weft_status_is_ok(status)) {
          status = weft_cuda_buffer_device_pointer(target.buffer,
                                                   target.offset, &pointer);
        }
        if (weft_status_is_ok(status) && target.length > 0) {
          // The bytes live in the command buffer, which the op retains
          // until it completes.
          status = WEFT_CUDA_CALL(
              device->symbols,
              cuMemcpyHtoDAsync(pointer, command->update.source,
                                (size_t)target.length, stream));
        }
        break;
      }
      case WEFT_COMMAND_TYPE_COPY: {
        weft_buffer_binding_t source;
        weft_buffer_binding_t target;
        status = weft_command_buffer_resolve_copy(
            &command->copy, table, "queue_execute", &source, &target);
        if (weft_status_is_ok(status)) {
          status = weft_cuda_copy(device, stream, source.buffer,
                                  source.offset, target.buffer, target.offset,
                                  source.length);
        }
        break;
      }
      case WEFT_COMMAND_TYPE_DISPATCH: {
        const weft_command_dispatch_t* dispatch = &command->dispatch;
        weft_buffer_binding_t bindings[WEFT_CUDA_MAX_KERNEL_PARAMS / 2];
        if (dispatch->binding_count > WEFT_CUDA_MAX_KERNEL_PARAMS / 2) {
          status = WEFT_STATUS(INVALID_ARGUMENT, "too many bindings (%u)",
                               dispatch->binding_count);
        }
        for (uint32_t b = 0;
             weft_status_is_ok(status) && b < dispatch->binding_count; ++b) {
          status = weft_command_buffer_resolve_ref(
              dispatch->bindings[b], table, "queue_execute", &bindings[b]);
        }
        if (weft_status_is_ok(status)) {
          // Each dispatch reports into a slot of its own.
          status = weft_cuda_launch(
              device, stream, dispatch->executable, dispatch->kernel_ordinal,
              dispatch->workgroup_count, dispatch->constant_count,
              dispatch->constants, dispatch->binding_count, bindings,
              status_word + dispatch_index * sizeof(weft_cuda_status_t));
        }
        ++dispatch_index;
        break;
      }
    }
    if (!weft_status_is_ok(status)) {
      status = weft_command_buffer_annotate_command(
          op->execute.command_buffer, i, status);
    }
  }
  return status;
}

// Queues |op|'s work on its queue's stream.
static weft_status_t weft_cuda_op_enqueue_work(weft_cuda_device_t* device,
                                               weft_cuda_op_t* record) {
  const weft_queue_op_t* op = weft_cuda_op_base(record);
  const weft_cuda_symbols_t* symbols = device->symbols;
  CUstream stream = record->queue->stream;
  CUdeviceptr status_word = 0;
  uint32_t entries = 1;  // most kinds are one stream operation
  if (op->kind == WEFT_QUEUE_OP_DISPATCH ||
      op->kind == WEFT_QUEUE_OP_EXECUTE) {
    const uint32_t count = weft_gpu_kernel_status_slot_count(op);
    if (!weft_cuda_status_acquire(device, count, &record->status_slot)) {
      return WEFT_STATUS(RESOURCE_EXHAUSTED,
                         "more than %u dispatches in flight on device '%s' "
                         "(raise status_slots)",
                         device->status_slot_count, device->base.id);
    }
    record->status_slot_count = count;
    status_word = device->status_slots_device +
                  record->status_slot * sizeof(weft_cuda_status_t);
  }
  weft_status_t status = WEFT_OK;
  switch (op->kind) {
    case WEFT_QUEUE_OP_ALLOCA:
      status = weft_cuda_buffer_commit(op->transient.buffer,
                                       device->memory_pool, stream);
      break;
    case WEFT_QUEUE_OP_DEALLOCA:
      status = weft_cuda_buffer_decommit(op->transient.buffer, stream);
      break;
    case WEFT_QUEUE_OP_FILL: {
      weft_device_size_t length = 0;
      status = weft_buffer_calculate_range(op->fill.target, op->fill.offset,
                                           op->fill.length, "queue_fill",
                                           &length);
      if (weft_status_is_ok(status)) {
        status = weft_cuda_fill(device, stream, op->fill.target,
                                op->fill.offset, length, op->fill.pattern,
                                op->fill.pattern_length);
      }
      break;
    }
    case WEFT_QUEUE_OP_UPDATE: {
      CUdeviceptr pointer = 0;
      status = weft_cuda_buffer_device_pointer(op->update.target,
                                               op->update.offset, &pointer);
      if (weft_status_is_ok(status) && op->update.length > 0) {
        // The bytes were captured into the op record, which lives until
        // the op completes.
        status = WEFT_CUDA_CALL(
            symbols, cuMemcpyHtoDAsync(pointer, op->update.source,
                                       (size_t)op->update.length, stream));
      }
      break;
    }
    case WEFT_QUEUE_OP_COPY:
      status = weft_cuda_copy(device, stream, op->copy.source,
                              op->copy.source_offset, op->copy.target,
                              op->copy.target_offset, op->copy.length);
      break;
    case WEFT_QUEUE_OP_DISPATCH: {
      weft_buffer_binding_t bindings[WEFT_CUDA_MAX_KERNEL_PARAMS / 2];
      const uint32_t count = op->dispatch.binding_count;
      if (count > WEFT_CUDA_MAX_KERNEL_PARAMS / 2) {
        status = WEFT_STATUS(INVALID_ARGUMENT, "too many bindings (%u)",
                             count);
      }
      for (uint32_t i = 0; weft_status_is_ok(status) && i < count; ++i) {
        const weft_buffer_ref_t* ref = &op->dispatch.bindings[i];
        bindings[i].buffer = ref->buffer;
        bindings[i].offset = ref->offset;
        status = weft_buffer_calculate_range(ref->buffer, ref->offset,
                                             ref->length, "queue_dispatch",
                                             &bindings[i].length);
      }
      if (weft_status_is_ok(status)) {
        status = weft_cuda_launch(
            device, stream, op->dispatch.executable,
            op->dispatch.kernel_ordinal, op->dispatch.workgroup_count,
            op->dispatch.constant_count, op->dispatch.constants, count,
            bindings, status_word);
      }
      break;
    }
    case WEFT_QUEUE_OP_EXECUTE:
      status = weft_cuda_execute(device, stream, op, status_word, &entries);
      break;
    case WEFT_QUEUE_OP_BARRIER:
      entries = 0;
      break;
    default:
      status = WEFT_STATUS(INTERNAL, "op kind %d reached the stream",
                           (int)op->kind);
      break;
  }
  record->stream_entries += entries;
  return status;
}

// Queues the GPU writes of |op|'s signals of this device's memory-word
// semaphores, after its work.
static weft_status_t weft_cuda_op_write_words(weft_cuda_device_t* device,
                                              weft_cuda_op_t* op,
                                              CUstream stream) {
  const weft_semaphore_list_t signals = weft_cuda_op_base(op)->signal_list;
  weft_status_t status = WEFT_OK;
  for (uint32_t i = 0; weft_status_is_ok(status) && i < signals.count; ++i) {
    weft_cuda_semaphore_t* semaphore =
        weft_cuda_semaphore_cast(signals.semaphores[i], device->base.domain);
    if (semaphore && semaphore->word) {
      // The default flags order the write after the work before it.
      status = WEFT_CUDA_CALL(
          device->symbols,
          cuStreamWriteValue64(stream, semaphore->word->device,
                               weft_cuda_word_value(signals.values[i]), 0));
      ++op->stream_entries;
    }
  }
  return status;
}

void weft_cuda_op_finish_issue(weft_cuda_device_t* device, weft_cuda_op_t* op,
                               weft_status_t status) {
  const weft_cuda_symbols_t* symbols = device->symbols;
  CUstream stream = op->queue->stream;
  if (weft_status_is_ok(status) &&
      device->semaphore_mode == WEFT_CUDA_SEMAPHORES_MEMORY) {
    status = weft_cuda_op_write_words(device, op, stream);
  }
  op->issue_status =
      weft_queue_op_annotate_error(weft_cuda_op_base(op), status);
  weft_status_t record = weft_cuda_event_pool_acquire(
      device->event_pool, /*timed=*/op->trace_epoch != NULL, &op->event);
  if (weft_status_is_ok(record)) {
    record = WEFT_CUDA_CALL(symbols, cuEventRecord(op->event->handle, stream));
    op->event->stream = stream;
  }
  // The event record (and a traced op's start event), and for a file op
  // the staging copies its pieces may still have queued.
  const bool file_op = weft_cuda_op_base(op)->kind == WEFT_QUEUE_OP_READ ||
                       weft_cuda_op_base(op)->kind == WEFT_QUEUE_OP_WRITE;
  op->stream_entries += 1 + (op->trace_start ? 1 : 0) +
                        (file_op ? device->staging_piece_count : 0);
  op->queue->entries_in_flight += op->stream_entries;
  if (!weft_status_is_ok(record)) {
    // Nothing to wait for: the completion thread fails it at its turn.
    weft_cuda_event_release(op->event);
    op->event = NULL;
    op->issue_status = weft_status_join(
        op->issue_status,
        weft_queue_op_annotate_error(weft_cuda_op_base(op), record));
  } else if (weft_status_is_ok(op->issue_status)) {
    // Later ops of this device may now wait for these values on the GPU.
    const weft_semaphore_list_t signals = weft_cuda_op_base(op)->signal_list;
    bool announce = false;
    for (uint32_t i = 0; i < signals.count; ++i) {
      weft_cuda_semaphore_t* semaphore =
          weft_cuda_semaphore_cast(signals.semaphores[i], device->base.domain);
      if (semaphore) {
        // Without it, waiters fall back to the host value.
        weft_status_ignore(weft_cuda_semaphore_note_issued(
            semaphore, signals.values[i], stream, op->event));
        announce = true;
      }
    }
    if (announce) {
      // Held ops waiting for these values learn of it once the mutex is
      // let go (weft_cuda_device_announce_issued).
      weft_atomic_fetch_add(&op->ref_count, 1u, memory_order_relaxed);
      op->advance_next = device->advance_head;
      device->advance_head = op;
    }
  }
  weft_cuda_fifo_push(&device->issued, op);
  weft_condition_signal(&device->completion_wake);
}

void weft_cuda_device_announce_issued(weft_cuda_device_t* device) {
  weft_slim_mutex_lock(&device->mutex);
  weft_cuda_op_t* op = device->advance_head;
  device->advance_head = NULL;
  weft_slim_mutex_unlock(&device->mutex);
  while (op) {
    weft_cuda_op_t* next = op->advance_next;
    const weft_semaphore_list_t signals = weft_cuda_op_base(op)->signal_list;
    for (uint32_t i = 0; i < signals.count; ++i) {
      if (weft_semaphore_is_native(signals.semaphores[i],
                                   device->base.domain)) {
        weft_semaphore_advance_issued(signals.semaphores[i],
                                      signals.values[i]);
      }
    }
    weft_cuda_op_release(op);
    op = next;
  }
}

//===----------------------------------------------------------------------===//
// GPU time in the trace
//===----------------------------------------------------------------------===//

// Renews the device's clock epoch when it has none or it is older than a
// second (cuda_device.h); false when it cannot. Called with the device
// mutex held and the context current.
static bool weft_cuda_trace_calibrate(weft_cuda_device_t* device) {
  const weft_time_t now = weft_time_now();
  if (device->trace_epoch && now - device->trace_epoch_ns < 1000000000) {
    return true;
  }
  const weft_cuda_symbols_t* symbols = device->symbols;
  if (!device->clock_stream &&
      symbols->cuStreamCreate(&device->clock_stream,
                              CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) {
    device->clock_stream = NULL;
    return false;
  }
  weft_cuda_event_t* epoch = NULL;
  weft_status_t status =
      weft_cuda_event_pool_acquire(device->event_pool, /*timed=*/true, &epoch);
  if (!weft_status_is_ok(status)) {
    weft_status_free(status);
    return false;
  }
  // Polled rather than synchronised: a blocking-sync event would add the
  // driver's wake-up to the uncertainty. The event's host time lies within
  // the window around the poll; a stream thread late to run widens it, so
  // a wide window is tried again (the event keeps the last try's time).
  weft_time_t epoch_ns = 0;
  bool recorded = false;
  for (int attempt = 0; attempt < 4; ++attempt) {
    const weft_time_t before = weft_time_now();
    CUresult result =
        symbols->cuEventRecord(epoch->handle, device->clock_stream);
    while (result == CUDA_SUCCESS) {
      result = symbols->cuEventQuery(epoch->handle);
      if (result != CUDA_ERROR_NOT_READY) break;
      result = CUDA_SUCCESS;
    }
    const weft_time_t after = weft_time_now();
    recorded = result == CUDA_SUCCESS;
    if (!recorded) break;
    epoch_ns = before + (after - before) / 2;
    if (after - before <= 20000) break;
  }
  if (!recorded) {
    weft_cuda_event_release(epoch);
    return false;
  }
  weft_cuda_event_release(device->trace_epoch);
  device->trace_epoch = epoch;
  device->trace_epoch_ns = epoch_ns;
  return true;
}

// Ties |op| to the device's clock epoch (renewed as needed), so that its
// end event is timed and the completion thread can tell when its work
// ended on the GPU (weft_cuda_op_end_time) and, traced, where its zone
// lies. Best effort: without an epoch the op's signals carry no end time.
// Called with the device mutex held and the context current.
static void weft_cuda_op_attach_epoch(weft_cuda_device_t* device,
                                      weft_cuda_op_t* op) {
  if (!weft_cuda_trace_calibrate(device)) return;
  weft_cuda_event_retain(device->trace_epoch);
  op->trace_epoch = device->trace_epoch;
  op->trace_epoch_ns = device->trace_epoch_ns;
  op->trace_issue_ns = weft_time_now();
}

// Records |op|'s timed start event on the dispatch stream (after its
// in-stream waits, before its work). Tracing is best effort: without an
// epoch or an event the op is traced without its GPU time. Called with the
// device mutex held and the context current.
static void weft_cuda_trace_mark_start(weft_cuda_device_t* device,
                                       weft_cuda_op_t* op) {
  if (!op->trace_epoch) return;
  weft_cuda_event_t* start = NULL;
  weft_status_t status =
      weft_cuda_event_pool_acquire(device->event_pool, /*timed=*/true, &start);
  if (weft_status_is_ok(status) &&
      device->symbols->cuEventRecord(start->handle, op->queue->stream) !=
          CUDA_SUCCESS) {
    status = weft_status_from_code(WEFT_STATUS_INTERNAL);
  }
  if (!weft_status_is_ok(status)) {
    weft_status_free(status);
    weft_cuda_event_release(start);
    return;
  }
  start->stream = op->queue->stream;
  op->trace_start = start;
  op->trace_issue_ns = weft_time_now();
}

// Puts |op|'s GPU time (its start event to its end event, both fired) on
// its queue's track. On the queue's completion thread, context current.
static void weft_cuda_trace_device_time(weft_cuda_device_t* device,
                                        weft_cuda_op_t* op) {
  if (!op->trace_start || !op->event || !op->event->timed ||
      !weft_trace_is_enabled()) {
    return;
  }
  const weft_cuda_symbols_t* symbols = device->symbols;
  float since_epoch_ms = 0.0f;
  float duration_ms = 0.0f;
  if (symbols->cuEventElapsedTime(&since_epoch_ms, op->trace_epoch->handle,
                                  op->trace_start->handle) != CUDA_SUCCESS ||
      symbols->cuEventElapsedTime(&duration_ms, op->trace_start->handle,
                                  op->event->handle) != CUDA_SUCCESS) {
    return;
  }
  weft_cuda_queue_t* queue = op->queue;
  if (!queue->trace_track) {
    char name[64];
    if (queue->index == 0) {
      snprintf(name, sizeof(name), "%s: GPU %d stream", device->base.id,
               device->ordinal);
    } else {
      snprintf(name, sizeof(name), "%s: GPU %d stream %u", device->base.id,
               device->ordinal, queue->index);
    }
    queue->trace_track = weft_trace_track_create(name);
  }
  // The epoch's error is at most half its window; what the host saw bounds
  // it better: the work started after the issue and after the zone before
  // it (one stream runs one op at a time), and ended before the completion
  // thread saw its event fire (now).
  const weft_time_t observed_ns = weft_time_now();
  weft_time_t start_ns =
      op->trace_epoch_ns + (weft_time_t)((double)since_epoch_ms * 1e6);
  if (start_ns < op->trace_issue_ns) start_ns = op->trace_issue_ns;
  if (start_ns < queue->trace_last_end_ns) start_ns = queue->trace_last_end_ns;
  if (start_ns > observed_ns) start_ns = observed_ns;
  weft_duration_t duration_ns =
      duration_ms > 0.0f ? (weft_duration_t)((double)duration_ms * 1e6) : 0;
  if (duration_ns > observed_ns - start_ns) duration_ns = observed_ns - start_ns;
  queue->trace_last_end_ns = start_ns + duration_ns;
  weft_queue_trace_device_time(
      queue->trace_track, weft_cuda_op_record(op)->trace_id,
      weft_queue_op_kind_name(weft_cuda_op_base(op)->kind), start_ns,
      duration_ns);
}

// When |op|'s work ended on the GPU, on the host clock: its end event's
// time from the epoch, kept within what the host saw (after its issue and
// the end of the op before it on its stream, before now, when the
// completion thread sees its event fired). 0 when it has no timed event.
// On the completion thread, context current, after the event fired.
static weft_time_t weft_cuda_op_end_time(weft_cuda_device_t* device,
                                         weft_cuda_op_t* op) {
  float since_epoch_ms = 0.0f;
  if (!op->trace_epoch || !op->event || !op->event->timed ||
      device->symbols->cuEventElapsedTime(&since_epoch_ms,
                                          op->trace_epoch->handle,
                                          op->event->handle) != CUDA_SUCCESS) {
    return 0;
  }
  weft_cuda_queue_t* queue = op->queue;
  const weft_time_t observed_ns = weft_time_now();
  weft_time_t end_ns =
      op->trace_epoch_ns + (weft_time_t)((double)since_epoch_ms * 1e6);
  if (end_ns < op->trace_issue_ns) end_ns = op->trace_issue_ns;
  if (end_ns < queue->last_end_ns) end_ns = queue->last_end_ns;
  if (end_ns > observed_ns) end_ns = observed_ns;
  queue->last_end_ns = end_ns;
  return end_ns;
}

// Issues |op| (ready: |waits| are its in-stream waits, consumed): its work
// behind the waits, then its event (weft_cuda_op_finish_issue). File ops go
// to the transfer thread instead, behind the same waits. Called with the
// device mutex held and the context current. An error here fails the op
// (after the stream reaches it, if its event could be recorded).
static void weft_cuda_op_issue(weft_cuda_device_t* device,
                               weft_cuda_op_t* op,
                               weft_cuda_stream_waits_t* waits) {
  const weft_cuda_symbols_t* symbols = device->symbols;
  CUstream stream = op->queue->stream;
  op->device_waits = waits->device_waits;
  op->stream_entries = waits->count;
  weft_queue_trace_ready(weft_cuda_op_record(op)->trace_id);
  weft_status_t status = WEFT_OK;
  for (uint32_t i = 0; weft_status_is_ok(status) && i < waits->count; ++i) {
    const weft_cuda_stream_wait_t* wait = &waits->waits[i];
    if (wait->event) {
      status = WEFT_CUDA_CALL(
          symbols, cuStreamWaitEvent(stream, wait->event->handle, 0));
    } else {
      // Cyclic >=: the word holds values below 2^63 (cuda_semaphore.h).
      status = WEFT_CUDA_CALL(
          symbols, cuStreamWaitValue64(stream, wait->word, wait->value,
                                       CU_STREAM_WAIT_VALUE_GEQ));
    }
  }
  weft_cuda_stream_waits_release(waits);
  if (weft_status_is_ok(status) &&
      (weft_cuda_op_base(op)->kind == WEFT_QUEUE_OP_READ ||
       weft_cuda_op_base(op)->kind == WEFT_QUEUE_OP_WRITE)) {
    weft_cuda_device_enqueue_transfer(device, op);
    return;
  }
  if (weft_status_is_ok(status)) weft_cuda_op_attach_epoch(device, op);
  if (weft_status_is_ok(status) && weft_cuda_op_record(op)->trace_id) {
    weft_cuda_trace_mark_start(device, op);
  }
  if (weft_status_is_ok(status)) {
    status = weft_cuda_op_enqueue_work(device, op);
  }
  weft_cuda_op_finish_issue(device, op, status);
}

//===----------------------------------------------------------------------===//
// Ending ops that do not go through the stream
//===----------------------------------------------------------------------===//

// Runs a host call whose waits are reached, on this thread.
static void weft_cuda_op_run_host_call(weft_cuda_op_t* op) {
  weft_queue_trace_ready(weft_cuda_op_record(op)->trace_id);
  weft_queue_trace_begin(weft_cuda_op_record(op)->trace_id, "queue_host_call");
  bool ended = false;
  weft_status_t status = weft_queue_op_annotate_error(
      weft_cuda_op_base(op),
      weft_queue_op_run_host_call(weft_cuda_op_base(op), &ended));
  weft_queue_trace_signal(weft_cuda_op_record(op)->trace_id,
                          weft_status_is_ok(status));
  if (ended) {
    weft_status_ignore(status);
  } else {
    weft_queue_op_signal_or_fail(weft_cuda_op_base(op), status);
  }
  weft_queue_trace_end(weft_cuda_op_record(op)->trace_id);
}

//===----------------------------------------------------------------------===//
// Submit and the submission thread
//===----------------------------------------------------------------------===//

// The scheduler's ready function (any thread, never with the device mutex
// held): hands the op to the submission thread, which decides.
static void weft_cuda_op_wait_ready(void* user_data,
                                    weft_scheduled_op_t* record) {
  weft_cuda_device_t* device = (weft_cuda_device_t*)user_data;
  weft_cuda_op_t* op = (weft_cuda_op_t*)record->driver;
  weft_slim_mutex_lock(&device->mutex);
  weft_cuda_fifo_push(&device->ready, op);
  device->submission_requested = true;
  weft_condition_signal(&device->submission_wake);
  // Last: the teardown goes on once every held op is in the ready FIFO.
  if (--device->held_count == 0) weft_condition_broadcast(&device->idle);
  weft_slim_mutex_unlock(&device->mutex);
}

void weft_cuda_device_initialize_scheduler(weft_cuda_device_t* device) {
  weft_queue_scheduler_initialize(device->base.host_allocator,
                                  WEFT_CUDA_OP_SIZE, weft_cuda_op_wait_ready,
                                  device, &device->scheduler);
}

// Which waits of |op| the scheduler may count as met once they are issued
// on this device (bit i: wait i): those on this device's semaphores, up to
// the in-stream waits one issue takes. None for a host call (it runs on
// the host) or when |host_only|.
static uint64_t weft_cuda_op_issued_entries(weft_cuda_device_t* device,
                                            const weft_cuda_op_t* op,
                                            bool host_only) {
  uint64_t entries = 0;
  if (host_only || weft_cuda_op_base(op)->kind == WEFT_QUEUE_OP_HOST_CALL)
    return 0;
  const weft_semaphore_list_t list = weft_cuda_op_base(op)->wait_list;
  uint32_t count = 0;
  for (uint32_t i = 0;
       i < list.count && i < 64 && count < WEFT_CUDA_MAX_STREAM_WAITS; ++i) {
    if (weft_semaphore_is_native(list.semaphores[i], device->base.domain)) {
      entries |= (uint64_t)1 << i;
      ++count;
    }
  }
  return entries;
}

// Counts an op held: the caller parks it (weft_cuda_op_start_wait) once
// the mutex is let go. Called with the mutex held.
static void weft_cuda_op_hold(weft_cuda_device_t* device) {
  ++device->held_count;
}

// Parks an op weft_cuda_op_hold counted on the scheduler. It may come back
// at once (a wait reached or failed meanwhile).
static void weft_cuda_op_start_wait(weft_cuda_device_t* device,
                                    weft_cuda_op_t* op, bool host_only) {
  weft_queue_scheduler_park(weft_cuda_op_record(op),
                            weft_cuda_op_issued_entries(device, op, host_only));
}

// Ops the submission thread takes from the ready FIFO in one round and
// ends after letting go of the mutex.
typedef struct weft_cuda_round_t {
  weft_cuda_op_fifo_t host_calls;  // reached: run them
  weft_cuda_op_fifo_t failed;      // a wait failed: fail them
  // Ready by their sets but not issuable (a device timepoint could not be
  // kept): held again, waiting on the host values only.
  weft_cuda_op_fifo_t rewait;
} weft_cuda_round_t;

// Issues (or sorts into |round|) every op the scheduler handed back.
// Called with the mutex held and the context current.
static void weft_cuda_queue_take_ready(weft_cuda_device_t* device,
                                       weft_cuda_round_t* round) {
  while (device->ready.head &&
         !weft_cuda_device_is_full(device, device->ready.head->queue)) {
    weft_cuda_op_t* op = device->ready.head;
    weft_cuda_fifo_unlink(&device->ready, NULL, op);
    weft_cuda_stream_waits_t waits;
    if (!weft_status_is_ok(weft_cuda_op_record(op)->wait_status)) {
      weft_cuda_fifo_push(&round->failed, op);
    } else if (!weft_cuda_op_is_ready(device, op, &waits)) {
      weft_cuda_op_hold(device);
      weft_cuda_fifo_push(&round->rewait, op);
    } else if (weft_cuda_op_base(op)->kind == WEFT_QUEUE_OP_HOST_CALL) {
      weft_cuda_fifo_push(&round->host_calls, op);
    } else {
      weft_cuda_op_issue(device, op, &waits);
    }
  }
}

static int weft_cuda_submission_main(void* user_data) {
  weft_cuda_device_t* device = (weft_cuda_device_t*)user_data;
  weft_slim_mutex_lock(&device->mutex);
  while (!device->shutting_down) {
    while (!device->submission_requested && !device->shutting_down) {
      weft_condition_wait(&device->submission_wake, &device->mutex,
                          WEFT_TIME_INFINITE_FUTURE);
    }
    if (device->shutting_down) break;
    device->submission_requested = false;
    weft_cuda_round_t round;
    memset(&round, 0, sizeof(round));
    const bool pushed =
        weft_status_is_ok(weft_cuda_device_push_context(device));
    if (pushed) {
      weft_cuda_queue_take_ready(device, &round);
      weft_cuda_device_pop_context(device);
    }
    weft_slim_mutex_unlock(&device->mutex);
    weft_cuda_device_announce_issued(device);
    for (weft_cuda_op_t* op = round.rewait.head; op;) {
      weft_cuda_op_t* next = op->next;
      weft_cuda_op_start_wait(device, op, /*host_only=*/true);
      op = next;
    }
    for (weft_cuda_op_t* op = round.host_calls.head; op;) {
      weft_cuda_op_t* next = op->next;
      weft_cuda_op_run_host_call(op);
      weft_cuda_op_release(op);
      op = next;
    }
    for (weft_cuda_op_t* op = round.failed.head; op;) {
      weft_cuda_op_t* next = op->next;
      weft_scheduled_op_end_not_run(weft_cuda_op_record(op));
      weft_cuda_op_release(op);
      op = next;
    }
    weft_slim_mutex_lock(&device->mutex);
  }
  weft_slim_mutex_unlock(&device->mutex);
  return 0;
}

weft_status_t weft_cuda_device_queue_submit(weft_device_t* base_device,
                                            const weft_queue_op_t* source) {
  weft_cuda_device_t* device = weft_cuda_device_cast(base_device);
  weft_cuda_op_t* op = NULL;
  weft_status_t status = weft_cuda_op_allocate(device, source, &op);
  if (!weft_status_is_ok(status)) return status;
  weft_cuda_op_record(op)->trace_id = weft_queue_trace_submit();
  status = weft_cuda_device_push_context(device);
  if (!weft_status_is_ok(status)) {
    weft_queue_scheduler_retire(weft_cuda_op_record(op));
    return status;
  }
  weft_slim_mutex_lock(&device->mutex);
  weft_cuda_stream_waits_t waits;
  bool run_host_call = false;
  bool hold = false;
  bool issued = false;
  if (device->ready.head || weft_cuda_device_is_full(device, op->queue)) {
    // Behind the ops already waiting for room on the GPU: the submission
    // thread takes it in turn (its waits are checked then).
    weft_cuda_fifo_push(&device->ready, op);
    device->submission_requested = true;
    weft_condition_signal(&device->submission_wake);
  } else if (weft_cuda_op_is_ready(device, op, &waits)) {
    if (weft_cuda_op_base(op)->kind == WEFT_QUEUE_OP_HOST_CALL) {
      run_host_call = true;
    } else {
      weft_cuda_op_issue(device, op, &waits);
      issued = true;
    }
  } else {
    hold = true;
    weft_cuda_op_hold(device);
  }
  weft_slim_mutex_unlock(&device->mutex);
  weft_cuda_device_pop_context(device);
  if (issued) {
    weft_cuda_device_announce_issued(device);
  } else if (run_host_call) {
    weft_cuda_op_run_host_call(op);
    weft_cuda_op_release(op);
  } else if (hold) {
    // From here on the op is the scheduler's until it comes back ready.
    weft_cuda_op_start_wait(device, op, /*host_only=*/false);
  }
  return WEFT_OK;
}

//===----------------------------------------------------------------------===//
// Completion
//===----------------------------------------------------------------------===//

// Waits until |event| fired: in the driver (blocking-sync events) or by
// polling with backoff.
static weft_status_t weft_cuda_wait_event(weft_cuda_device_t* device,
                                          weft_cuda_event_t* event) {
  const weft_cuda_symbols_t* symbols = device->symbols;
  if (device->completion_mode == WEFT_CUDA_COMPLETION_BLOCKING) {
    return WEFT_CUDA_CALL(symbols, cuEventSynchronize(event->handle));
  }
  weft_duration_t backoff_ns = 1000;
  for (;;) {
    CUresult result = symbols->cuEventQuery(event->handle);
    if (result != CUDA_ERROR_NOT_READY) {
      return weft_cuda_result_to_status(symbols, result,
                                        "cuEventQuery(op event)");
    }
    struct timespec delay = {0, (long)backoff_ns};
    nanosleep(&delay, NULL);
    if (backoff_ns < 1000000) backoff_ns *= 2;
  }
}

// What |op| ended with once its event fired (hal/gpu/op_result.h): a wait
// met in-stream whose semaphore failed upstream, else what issue met or
// the event's own error, else a kernel's status word.
static weft_status_t weft_cuda_op_result(weft_cuda_device_t* device,
                                         weft_cuda_op_t* op,
                                         weft_status_t event_status) {
  weft_status_t status = op->issue_status;
  op->issue_status = WEFT_OK;
  if (weft_status_is_ok(status) && !weft_status_is_ok(event_status)) {
    status = weft_queue_op_annotate_error(weft_cuda_op_base(op), event_status);
    event_status = WEFT_OK;
  }
  weft_status_free(event_status);
  return weft_gpu_op_result(
      weft_cuda_op_base(op), op->device_waits, status,
      op->status_slot_count ? &device->status_slots[op->status_slot] : NULL,
      sizeof(weft_cuda_status_t), op->status_slot_count);
}

// Stores the failure value again into the memory words |op| wrote on the
// GPU whose semaphores have failed: the write may have landed after the
// failure was stored (cuda_semaphore.h).
static void weft_cuda_op_restore_failed_words(weft_cuda_device_t* device,
                                              weft_cuda_op_t* op) {
  const weft_semaphore_list_t signals = weft_cuda_op_base(op)->signal_list;
  for (uint32_t i = 0; i < signals.count; ++i) {
    weft_cuda_semaphore_t* semaphore =
        weft_cuda_semaphore_cast(signals.semaphores[i], device->base.domain);
    if (semaphore) weft_cuda_semaphore_restore_failure(semaphore);
  }
}

static int weft_cuda_completion_main(void* user_data) {
  weft_cuda_device_t* device = (weft_cuda_device_t*)user_data;
  // The device's own thread: its context stays current.
  const bool pushed = weft_status_is_ok(weft_cuda_device_push_context(device));
  weft_slim_mutex_lock(&device->mutex);
  for (;;) {
    while (!device->issued.head && !device->completions_closing) {
      weft_condition_wait(&device->completion_wake, &device->mutex,
                          WEFT_TIME_INFINITE_FUTURE);
    }
    weft_cuda_op_t* op = device->issued.head;
    if (!op) break;  // shutting down with nothing in flight
    weft_slim_mutex_unlock(&device->mutex);
    // Without its event (recording failed) the op's work may still be
    // queued: wait for the whole stream rather than free what it uses.
    weft_status_t event_status =
        !pushed ? WEFT_OK
        : op->event
            ? weft_cuda_wait_event(device, op->event)
            : WEFT_CUDA_CALL(device->symbols,
                             cuStreamSynchronize(op->queue->stream));
    weft_slim_mutex_lock(&device->mutex);
    weft_cuda_fifo_unlink(&device->issued, NULL, op);
    op->queue->entries_in_flight -= op->stream_entries;
    if (!device->issued.head) weft_condition_broadcast(&device->idle);
    if (device->ready.head) {
      // Room on the GPU for ops held back (weft_cuda_device_is_full).
      device->submission_requested = true;
      weft_condition_signal(&device->submission_wake);
    }
    weft_slim_mutex_unlock(&device->mutex);
    if (weft_status_is_ok(event_status)) weft_cuda_trace_device_time(device, op);
    // The GPU's end time for the timepoints the signals fire: this thread
    // may see several ops done at once, long after the first ended.
    const weft_time_t ended_ns =
        weft_status_is_ok(event_status) ? weft_cuda_op_end_time(device, op)
                                        : 0;
    weft_status_t status = weft_cuda_op_result(device, op, event_status);
    weft_slim_mutex_lock(&device->mutex);
    weft_cuda_status_release(device, op);
    weft_slim_mutex_unlock(&device->mutex);
    weft_queue_trace_signal(weft_cuda_op_record(op)->trace_id,
                            weft_status_is_ok(status));
    weft_semaphore_set_signal_time(ended_ns);
    weft_queue_op_signal_or_fail(weft_cuda_op_base(op), status);
    weft_semaphore_set_signal_time(0);
    if (device->semaphore_mode == WEFT_CUDA_SEMAPHORES_MEMORY) {
      weft_cuda_op_restore_failed_words(device, op);
    }
    weft_cuda_op_release(op);
    weft_slim_mutex_lock(&device->mutex);
  }
  weft_slim_mutex_unlock(&device->mutex);
  if (pushed) weft_cuda_device_pop_context(device);
  return 0;
}

//===----------------------------------------------------------------------===//
// Start, stop, and the pending report
//===----------------------------------------------------------------------===//

weft_status_t weft_cuda_device_start_queue(weft_cuda_device_t* device) {
  weft_thread_params_t params = {.name = "weft-cuda-submit", .cpu = -1};
  weft_status_t status =
      weft_thread_create(weft_cuda_submission_main, device, &params,
                         device->base.host_allocator,
                         &device->submission_thread);
  if (weft_status_is_ok(status)) {
    params.name = "weft-cuda-complete";
    status = weft_thread_create(weft_cuda_completion_main, device, &params,
                                device->base.host_allocator,
                                &device->completion_thread);
  }
  if (weft_status_is_ok(status)) {
    params.name = "weft-cuda-files";
    status = weft_thread_create(weft_cuda_transfer_main, device, &params,
                                device->base.host_allocator,
                                &device->transfer_thread);
  }
  return status;
}

void weft_cuda_device_stop_queue(weft_cuda_device_t* device) {
  // The submission thread finishes its round and leaves.
  weft_slim_mutex_lock(&device->mutex);
  device->shutting_down = true;
  weft_condition_broadcast(&device->submission_wake);
  weft_slim_mutex_unlock(&device->mutex);
  weft_thread_join(device->submission_thread);
  device->submission_thread = NULL;

  // Held ops fail with CANCELLED naming them: the scheduler's sweep sends
  // each to the ready FIFO (which nobody takes any more); once every held
  // op is there, end them.
  weft_queue_scheduler_cancel_parked(&device->scheduler);
  weft_slim_mutex_lock(&device->mutex);
  while (device->held_count > 0) {
    weft_condition_wait(&device->idle, &device->mutex,
                        WEFT_TIME_INFINITE_FUTURE);
  }
  weft_cuda_op_fifo_t ready = device->ready;
  device->ready = (weft_cuda_op_fifo_t){0};
  weft_slim_mutex_unlock(&device->mutex);
  for (weft_cuda_op_t* op = ready.head; op;) {
    weft_cuda_op_t* next = op->next;
    // Its wait's failure, the sweep's CANCELLED, or (its waits were
    // reached but it was not issued) CANCELLED "before it ran".
    weft_scheduled_op_end_not_run(weft_cuda_op_record(op));
    weft_cuda_op_release(op);  // the op's own
    op = next;
  }

  // File transfers handed over finish (a READ's last step is an issue),
  // then issued ops: the completion thread drains them and leaves.
  weft_slim_mutex_lock(&device->mutex);
  device->transfers_closing = true;
  weft_condition_broadcast(&device->transfer_wake);
  weft_slim_mutex_unlock(&device->mutex);
  weft_thread_join(device->transfer_thread);
  device->transfer_thread = NULL;
  weft_slim_mutex_lock(&device->mutex);
  device->completions_closing = true;
  weft_condition_broadcast(&device->completion_wake);
  weft_slim_mutex_unlock(&device->mutex);
  weft_thread_join(device->completion_thread);
  device->completion_thread = NULL;
  // Every issuer announced what it issued; this only drops what a path
  // cut short by the shutdown may have left.
  weft_cuda_device_announce_issued(device);
}

uint64_t weft_cuda_device_for_each_pending(weft_device_t* base_device,
                                           weft_pending_op_visit_fn_t visit,
                                           void* user_data) {
  weft_cuda_device_t* device = weft_cuda_device_cast(base_device);
  weft_slim_mutex_lock(&device->mutex);
  weft_queue_scheduler_for_each_pending(&device->scheduler, visit, user_data);
  const weft_cuda_op_fifo_t* fifos[3] = {&device->ready, &device->transfers,
                                         &device->issued};
  const char* states[3] = {"ready, for the submission thread",
                           "ready, for the file transfer thread",
                           "running on the GPU"};
  for (int f = 0; f < 3; ++f) {
    for (const weft_cuda_op_t* op = fifos[f]->head; op; op = op->next) {
      const weft_pending_op_t pending =
          weft_pending_op_for(weft_cuda_op_base(op), states[f],
                              weft_cuda_op_record(op)->submit_time);
      visit(user_data, &pending);
    }
  }
  weft_slim_mutex_unlock(&device->mutex);
  return 0;
}
