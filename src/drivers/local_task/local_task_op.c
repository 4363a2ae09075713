// weft: local-task operation records (see local_task_op.h).
#include "drivers/local_task/local_task_op.h"

#include <string.h>

#include "drivers/local_task/local_task_device.h"

weft_status_t weft_local_task_op_acquire(weft_local_task_queue_t* queue,
                                         const weft_queue_op_t* source,
                                         bool park,
                                         weft_local_task_op_t** out_op) {
  *out_op = NULL;
  weft_scheduled_op_t* record = NULL;
  weft_status_t status = weft_queue_scheduler_acquire_empty(
      &queue->device->scheduler, &record);
  if (!weft_status_is_ok(status)) return status;
  weft_local_task_op_t* op = (weft_local_task_op_t*)record->driver;
  op->queue = queue;
  op->compute.host_issued = false;
  // A dispatch is compiled now, on the submitting thread, into a recording
  // that holds its own references; the bindings become late fixups mapped
  // when the op runs (transient buffers work). Only its lists are captured.
  const bool is_dispatch = source->kind == WEFT_QUEUE_OP_DISPATCH;
  if (is_dispatch) {
    size_t size = weft_block_recording_dispatch_storage_size(
        source->dispatch.constant_count, source->dispatch.binding_count);
    void* recording_storage = NULL;
    status = weft_local_task_op_allocate(op, size, &recording_storage);
    if (weft_status_is_ok(status)) {
      status = weft_block_recording_initialize_dispatch(
          source->dispatch.executable, source->dispatch.kernel_ordinal,
          source->dispatch.workgroup_count, source->dispatch.constant_count,
          source->dispatch.constants, source->dispatch.binding_count,
          source->dispatch.bindings, /*dispatch_tile_size=*/0,
          recording_storage, size, &op->compute.dispatch_recording);
    }
    if (weft_status_is_ok(status)) {
      op->compute.recording = op->compute.dispatch_recording;
    } else {
      status = weft_status_annotate(status, "while queueing %s",
                                    weft_queue_op_kind_name(source->kind));
    }
  }
  if (weft_status_is_ok(status)) {
    status = weft_scheduled_op_capture(
        record, source,
        is_dispatch ? WEFT_QUEUE_OP_CAPTURE_LISTS_ONLY
                    : WEFT_QUEUE_OP_CAPTURE_ALL,
        park);
  }
  if (!weft_status_is_ok(status)) {
    weft_block_recording_deinitialize(op->compute.dispatch_recording);
    weft_queue_scheduler_discard(record);
    return status;
  }
  record->base.queue_index = queue->index;
  *out_op = op;
  return WEFT_OK;
}

void weft_local_task_op_retire(weft_local_task_op_t* op) {
  weft_block_processor_context_deinitialize(op->compute.context);
  weft_block_recording_deinitialize(op->compute.dispatch_recording);
  weft_status_free(op->compute.status);
  weft_queue_scheduler_retire(weft_local_task_op_record(op));
}
