// weft: the work of a queue operation on the host CPU (see queue_ops.h).
#include "hal/local/queue_ops.h"

#include <inttypes.h>
#include <string.h>

#include "hal/buffer_impl.h"
#include "hal/device_impl.h"
#include "hal/local/inline_command_buffer.h"
#include "hal/local/inline_dispatch.h"
#include "hal/local/transient_buffer.h"
#include "hal/queue_completion.h"

weft_status_t weft_local_queue_read(weft_file_t* file, uint64_t file_offset,
                                    weft_buffer_t* buffer,
                                    weft_device_size_t buffer_offset,
                                    weft_device_size_t length) {
  weft_status_t status = WEFT_OK;
  uint8_t* memory = (uint8_t*)weft_file_memory(file);
  if (length == 0) {
    // Nothing to move.
  } else if (memory) {
    status = weft_buffer_map_write_unchecked(
        buffer, buffer_offset, memory + file_offset, length, "queue_read");
  } else {
    weft_buffer_mapping_t mapping;
    memset(&mapping, 0, sizeof(mapping));
    status = weft_buffer_map_range_unchecked(buffer, WEFT_MEMORY_ACCESS_WRITE,
                                             buffer_offset, length,
                                             "queue_read", &mapping);
    if (weft_status_is_ok(status)) {
      status = weft_file_read(file, file_offset, mapping.contents, length);
      weft_buffer_unmap_range(&mapping);
    }
  }
  return status;
}

weft_status_t weft_local_queue_write(weft_buffer_t* buffer,
                                     weft_device_size_t buffer_offset,
                                     weft_file_t* file, uint64_t file_offset,
                                     weft_device_size_t length) {
  weft_status_t status = WEFT_OK;
  uint8_t* memory = (uint8_t*)weft_file_memory(file);
  if (length == 0) {
    // Nothing to move.
  } else if (memory) {
    status = weft_buffer_map_read_unchecked(
        buffer, buffer_offset, memory + file_offset, length, "queue_write");
  } else {
    weft_buffer_mapping_t mapping;
    memset(&mapping, 0, sizeof(mapping));
    status = weft_buffer_map_range_unchecked(buffer, WEFT_MEMORY_ACCESS_READ,
                                             buffer_offset, length,
                                             "queue_write", &mapping);
    if (weft_status_is_ok(status)) {
      status = weft_file_write(file, file_offset, mapping.contents, length);
      weft_buffer_unmap_range(&mapping);
    }
  }
  return status;
}

// Bindings resolved on the stack up to this count, from the device's
// allocator above.
#define WEFT_LOCAL_QUEUE_INLINE_BINDING_COUNT 16

// Runs a dispatch's workgroups on this thread, its bindings' lengths
// resolved first (the descriptor keeps WEFT_WHOLE_BUFFER as given).
static weft_status_t weft_local_queue_dispatch(const weft_queue_op_t* op) {
  weft_allocator_t allocator = op->device->host_allocator;
  const uint32_t binding_count = op->dispatch.binding_count;
  weft_buffer_binding_t inline_bindings[WEFT_LOCAL_QUEUE_INLINE_BINDING_COUNT];
  weft_buffer_binding_t* bindings = inline_bindings;
  weft_status_t status = WEFT_OK;
  if (binding_count > WEFT_LOCAL_QUEUE_INLINE_BINDING_COUNT) {
    status = weft_allocator_malloc_array(allocator, binding_count,
                                         sizeof(*bindings), (void**)&bindings);
  }
  for (uint32_t i = 0; weft_status_is_ok(status) && i < binding_count; ++i) {
    const weft_buffer_ref_t* ref = &op->dispatch.bindings[i];
    bindings[i].buffer = ref->buffer;
    bindings[i].offset = ref->offset;
    status = weft_buffer_calculate_range(ref->buffer, ref->offset, ref->length,
                                         "queue_dispatch", &bindings[i].length);
  }
  if (weft_status_is_ok(status)) {
    status = weft_inline_dispatch(
        op->dispatch.executable, op->dispatch.kernel_ordinal,
        op->dispatch.workgroup_count, op->dispatch.constant_count,
        op->dispatch.constants, binding_count, bindings, allocator);
  }
  if (bindings != inline_bindings) weft_allocator_free(allocator, bindings);
  return status;
}

weft_status_t weft_local_queue_op_do(const weft_queue_op_t* op,
                                     bool* out_ended) {
  weft_status_t status = WEFT_OK;
  switch (op->kind) {
    case WEFT_QUEUE_OP_ALLOCA:
      status = weft_transient_buffer_commit(op->transient.buffer);
      break;
    case WEFT_QUEUE_OP_DEALLOCA:
      status = weft_transient_buffer_decommit(op->transient.buffer);
      break;
    case WEFT_QUEUE_OP_FILL:
      status = weft_buffer_map_fill_unchecked(
          op->fill.target, op->fill.offset, op->fill.length, &op->fill.pattern,
          op->fill.pattern_length, "queue_fill");
      break;
    case WEFT_QUEUE_OP_UPDATE:
      status = weft_buffer_map_write_unchecked(
          op->update.target, op->update.offset, op->update.source,
          op->update.length, "queue_update");
      break;
    case WEFT_QUEUE_OP_COPY:
      status = weft_buffer_map_copy_unchecked(
          op->copy.source, op->copy.source_offset, op->copy.target,
          op->copy.target_offset, op->copy.length, "queue_copy");
      break;
    case WEFT_QUEUE_OP_READ:
      status = weft_local_queue_read(op->file.file, op->file.file_offset,
                                     op->file.buffer, op->file.buffer_offset,
                                     op->file.length);
      break;
    case WEFT_QUEUE_OP_WRITE:
      status = weft_local_queue_write(op->file.buffer, op->file.buffer_offset,
                                      op->file.file, op->file.file_offset,
                                      op->file.length);
      break;
    case WEFT_QUEUE_OP_DISPATCH:
      status = weft_local_queue_dispatch(op);
      break;
    case WEFT_QUEUE_OP_EXECUTE:
      status = weft_command_buffer_replay_inline(op->execute.command_buffer,
                                                 op->execute.binding_table,
                                                 op->device->host_allocator);
      break;
    case WEFT_QUEUE_OP_BARRIER:
      break;
    case WEFT_QUEUE_OP_HOST_CALL:
      status = weft_queue_op_run_host_call(op, out_ended);
      break;
    default:
      status = WEFT_STATUS(INTERNAL, "unknown queue op kind %d", (int)op->kind);
      break;
  }
  return status;
}
