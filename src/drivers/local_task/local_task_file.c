// weft: local-task file reads and writes through the device's proactor.
//
// The control process maps the op's buffer range, fills a proactor op in
// the op record and submits it; it then moves on to its next op. The
// proactor calls back on one of its own threads once every byte moved (or
// the transfer failed): the completion ends the mapping, notes how far a
// write extended the file, and signals or fails the op's semaphores before
// releasing it. Shutdown does not cancel a transfer in flight: it
// completes normally and the device waits for it (local_task_device.c).
#include <inttypes.h>
#include <string.h>

#include "drivers/local_task/local_task_device.h"
#include "drivers/local_task/local_task_op.h"
#include "hal/buffer_impl.h"
#include "hal/file_impl.h"

// What a READ or WRITE keeps in its record while on the proactor.
struct weft_local_task_file_transfer_t {
  weft_proactor_op_t proactor_op;
  // The buffer range the transfer reads or writes (retains the buffer).
  weft_buffer_mapping_t mapping;
  weft_local_task_op_t* op;
  // The file as messages name it ('path' or fd N), for the proactor.
  char name[];
};

bool weft_local_task_file_is_async(const weft_local_task_op_t* op) {
  weft_file_t* file = weft_local_task_op_base(op)->file.file;
  return op->queue->device->proactor != NULL && weft_local_task_op_base(op)->file.length != 0 &&
         weft_file_memory(file) == NULL && !weft_file_is_stream(file);
}

// Ends |op|'s transfer with |status| (consumed): the error annotated with
// the op's name, the signals published or failed, the record released.
static void weft_local_task_file_end(weft_local_task_op_t* op,
                                     weft_status_t status) {
  status = weft_local_task_annotate_error(op, status);
  weft_local_task_op_finish(op, status);
  weft_local_task_op_release(op);
}

// The proactor's callback, on one of its threads.
static void weft_local_task_file_complete(weft_proactor_op_t* proactor_op,
                                          weft_status_t status) {
  weft_local_task_file_transfer_t* transfer =
      (weft_local_task_file_transfer_t*)proactor_op->user_data;
  weft_local_task_op_t* op = transfer->op;
  weft_local_task_device_t* device = op->queue->device;
  // Signalling may drop the device's last reference (a waiter's
  // continuation on this thread): shut down on a thread of its own then,
  // since destroy joins this one (see local_task_device.h).
  weft_local_task_drain_mark_t previous = weft_local_task_device_enter_drain(
      device, WEFT_LOCAL_TASK_NO_DRAINER);
  bool is_read = weft_local_task_op_base(op)->kind == WEFT_QUEUE_OP_READ;
  if (weft_status_is_ok(status) && is_read) {
    // The bytes the kernel wrote become visible to the device (a no-op on
    // coherent memory, which is all a CPU device has today).
    status =
        weft_buffer_mapping_flush(&transfer->mapping, 0, WEFT_WHOLE_BUFFER);
  }
  weft_buffer_unmap_range(&transfer->mapping);
  if (weft_status_is_ok(status) && !is_read) {
    weft_file_note_written(weft_local_task_op_base(op)->file.file,
                           weft_local_task_op_base(op)->file.file_offset + weft_local_task_op_base(op)->file.length);
  }
  // Out of the registry before it can be recycled.
  weft_queue_scheduler_untrack(weft_local_task_op_record(op));
  weft_local_task_file_end(op, status);
  weft_local_task_device_exit_drain(previous);
}

void weft_local_task_file_start(weft_local_task_op_t* op) {
  weft_local_task_device_t* device = op->queue->device;
  weft_file_t* file = weft_local_task_op_base(op)->file.file;
  bool is_read = weft_local_task_op_base(op)->kind == WEFT_QUEUE_OP_READ;
  const char* op_name = weft_queue_op_kind_name(weft_local_task_op_base(op)->kind);
  // The display name is the name, quoted when it is a path.
  size_t name_capacity = strlen(weft_file_name(file)) + 3;
  weft_local_task_file_transfer_t* transfer = NULL;
  weft_status_t status = weft_local_task_op_allocate(
      op, sizeof(*transfer) + name_capacity, (void**)&transfer);
  if (weft_status_is_ok(status)) {
    transfer->op = op;
    weft_file_display_name(file, transfer->name, name_capacity);
    // A read writes the buffer and a write reads it.
    status = weft_buffer_map_range_unchecked(
        weft_local_task_op_base(op)->file.buffer,
        is_read ? WEFT_MEMORY_ACCESS_WRITE : WEFT_MEMORY_ACCESS_READ,
        weft_local_task_op_base(op)->file.buffer_offset, weft_local_task_op_base(op)->file.length, op_name,
        &transfer->mapping);
  }
  if (weft_status_is_ok(status) && !is_read) {
    // What the device wrote becomes visible to the kernel's copy.
    status = weft_buffer_mapping_invalidate(&transfer->mapping, 0,
                                            WEFT_WHOLE_BUFFER);
    if (!weft_status_is_ok(status)) weft_buffer_unmap_range(&transfer->mapping);
  }
  if (weft_status_is_ok(status)) {
    weft_proactor_op_t* proactor_op = &transfer->proactor_op;
    proactor_op->type =
        is_read ? WEFT_PROACTOR_OP_READ : WEFT_PROACTOR_OP_WRITE;
    proactor_op->fd = weft_file_fd(file);
    proactor_op->offset = weft_local_task_op_base(op)->file.file_offset;
    proactor_op->buffer = transfer->mapping.contents;
    proactor_op->length = weft_local_task_op_base(op)->file.length;
    proactor_op->name = transfer->name;
    proactor_op->callback = weft_local_task_file_complete;
    proactor_op->user_data = transfer;
    op->file_transfer = transfer;
    // In dump_pending while the proactor has it.
    weft_queue_scheduler_track(weft_local_task_op_record(op), "in file I/O",
                               weft_local_task_file_describe);
    // From here on the op belongs to the completion: it may already have
    // been released when this returns.
    weft_proactor_submit(device->proactor, proactor_op);
  } else {
    weft_local_task_file_end(op, status);
  }
}

void weft_local_task_file_describe(const weft_scheduled_op_t* record,
                                   char* buffer, size_t capacity) {
  const weft_local_task_op_t* op = (const weft_local_task_op_t*)record->driver;
  const weft_proactor_op_t* proactor_op = &op->file_transfer->proactor_op;
  bool is_read = weft_local_task_op_base(op)->kind == WEFT_QUEUE_OP_READ;
  snprintf(buffer, capacity, "%" PRIu64 " bytes %s %s at offset %" PRIu64,
           proactor_op->length, is_read ? "of" : "to",
           op->file_transfer->name, proactor_op->offset);
}
