// weft cuda driver: file reads and writes through pinned staging pieces.
//
// A ready READ or WRITE goes to the device's transfer thread (in the order
// it became ready) instead of the stream, which runs it through the HAL's
// staged transfer (hal/gpu/staged_transfer.h: the pipeline and the file
// side, several pieces in flight on a proactor); this file supplies the
// device side: pinned, device-mapped staging pieces, copies on the
// dispatch stream and an event per piece. After a READ's last copy, or a
// WRITE's last piece written, the op's event is recorded and it goes to
// the completion thread like any issued op (so later ops of the device wait
// for it in-stream, and its signals never overtake those of the ops whose
// values it waited for in-stream, which that thread signals in order). The
// disk and the copy engine so work at the same time, and
// weft_parameter_stream_load fills GPU buffers as fast as the disk allows.
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "drivers/cuda/cuda_buffer.h"
#include "drivers/cuda/cuda_op.h"
#include "hal/gpu/staged_transfer.h"
#include "hal/queue_completion.h"
#include "hal/queue_trace.h"
#include "hal/semaphore_impl.h"
#include "weft/file.h"

void weft_cuda_device_enqueue_transfer(weft_cuda_device_t* device,
                                       weft_cuda_op_t* op) {
  weft_cuda_fifo_push(&device->transfers, op);
  weft_condition_signal(&device->transfer_wake);
}

// Allocates the staging pieces at the first transfer (context current).
static weft_status_t weft_cuda_staging_ensure(weft_cuda_device_t* device) {
  if (device->staging) return WEFT_OK;
  const weft_cuda_symbols_t* symbols = device->symbols;
  const uint64_t total =
      device->staging_piece_size * device->staging_piece_count;
  char call[128];
  snprintf(call, sizeof(call),
           "cuMemHostAlloc(%u staging pieces of %" PRIu64 " bytes)",
           device->staging_piece_count, device->staging_piece_size);
  void* staging = NULL;
  weft_status_t status = weft_cuda_result_to_status(
      symbols,
      symbols->cuMemHostAlloc(&staging, (size_t)total,
                              CU_MEMHOSTALLOC_DEVICEMAP |
                                  CU_MEMHOSTALLOC_PORTABLE),
      call);
  CUdeviceptr staging_device = 0;
  if (weft_status_is_ok(status)) {
    status = WEFT_CUDA_CALL(
        symbols, cuMemHostGetDevicePointer(&staging_device, staging, 0));
  }
  weft_cuda_event_t** events = NULL;
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc_array(
        device->base.host_allocator, device->staging_piece_count,
        sizeof(*events), (void**)&events);
  }
  if (weft_status_is_ok(status)) {
    memset(events, 0, device->staging_piece_count * sizeof(*events));
    device->staging = (uint8_t*)staging;
    device->staging_device = staging_device;
    device->staging_events = events;
    // The file side: a proactor with a transfer per piece in flight. Without
    // one (the kernel refused a ring and threads failed too) transfers are
    // synchronous on this thread, still overlapping the copies.
    weft_proactor_options_t options;
    weft_proactor_options_initialize(&options);
    options.queue_depth = device->staging_piece_count;
    options.thread_count = device->staging_piece_count < 4
                               ? device->staging_piece_count
                               : 4;
    options.thread_name = "weft-cuda-io";
    weft_status_ignore(weft_proactor_create(
        &options, device->base.host_allocator, &device->proactor));
  } else if (staging) {
    symbols->cuMemFreeHost(staging);
  }
  return status;
}

void weft_cuda_device_free_staging(weft_cuda_device_t* device) {
  if (device->proactor) weft_proactor_destroy(device->proactor);
  device->proactor = NULL;
  if (!device->staging) return;
  for (uint32_t i = 0; i < device->staging_piece_count; ++i) {
    if (device->staging_events[i]) {
      device->symbols->cuEventSynchronize(device->staging_events[i]->handle);
      weft_cuda_event_release(device->staging_events[i]);
    }
  }
  weft_allocator_free(device->base.host_allocator, device->staging_events);
  device->symbols->cuMemFreeHost(device->staging);
  device->staging = NULL;
  device->staging_events = NULL;
}

// The device side of one staged transfer (hal/gpu/staged_transfer.h).
typedef struct weft_cuda_transfer_t {
  weft_cuda_device_t* device;
  CUstream stream;     // the op's queue's
  CUdeviceptr buffer;  // the op's buffer at its offset
} weft_cuda_transfer_t;

// Waits until staging piece |piece| is free (its last copy landed).
static weft_status_t weft_cuda_staging_wait(void* self, uint32_t piece) {
  weft_cuda_device_t* device = ((weft_cuda_transfer_t*)self)->device;
  weft_cuda_event_t* event = device->staging_events[piece];
  if (!event) return WEFT_OK;
  device->staging_events[piece] = NULL;
  weft_status_t status = WEFT_CUDA_CALL(device->symbols,
                                        cuEventSynchronize(event->handle));
  weft_cuda_event_release(event);
  return status;
}

// Queues a copy between staging piece |piece| and the buffer on the op's
// stream and records the piece's event after it.
static weft_status_t weft_cuda_staging_copy(void* self, uint32_t piece,
                                            bool to_buffer,
                                            uint64_t buffer_offset,
                                            uint64_t length) {
  weft_cuda_transfer_t* transfer = (weft_cuda_transfer_t*)self;
  weft_cuda_device_t* device = transfer->device;
  const weft_cuda_symbols_t* symbols = device->symbols;
  const CUdeviceptr staging =
      device->staging_device + piece * device->staging_piece_size;
  const CUdeviceptr buffer = transfer->buffer + buffer_offset;
  weft_status_t status = WEFT_CUDA_CALL(
      symbols, cuMemcpyAsync(to_buffer ? buffer : staging,
                             to_buffer ? staging : buffer, (size_t)length,
                             transfer->stream));
  weft_cuda_event_t* event = NULL;
  if (weft_status_is_ok(status)) {
    status = weft_cuda_event_pool_acquire(device->event_pool, /*timed=*/false,
                                          &event);
  }
  if (weft_status_is_ok(status)) {
    status = WEFT_CUDA_CALL(
        symbols, cuEventRecord(event->handle, transfer->stream));
    event->stream = transfer->stream;
  }
  if (weft_status_is_ok(status)) {
    device->staging_events[piece] = event;
  } else {
    weft_cuda_event_release(event);
  }
  return status;
}

// Moves |op|'s bytes between its file and its buffer through the staging
// ring; a READ's last copies are queued, not done.
static weft_status_t weft_cuda_transfer(weft_cuda_device_t* device,
                                        CUstream stream,
                                        const weft_queue_op_t* op) {
  weft_cuda_transfer_t transfer = {device, stream, 0};
  weft_status_t status = weft_cuda_buffer_device_pointer(
      op->file.buffer, op->file.buffer_offset, &transfer.buffer);
  if (!weft_status_is_ok(status)) return status;
  const weft_staging_ring_t ring = {device->staging,
                                    device->staging_piece_size,
                                    device->staging_piece_count};
  const weft_staged_transfer_device_t hooks = {
      &transfer, weft_cuda_staging_copy, weft_cuda_staging_wait};
  return weft_staged_transfer_run(&ring, &hooks, device->proactor, op);
}

int weft_cuda_transfer_main(void* user_data) {
  weft_cuda_device_t* device = (weft_cuda_device_t*)user_data;
  const bool pushed = weft_status_is_ok(weft_cuda_device_push_context(device));
  weft_slim_mutex_lock(&device->mutex);
  for (;;) {
    while (!device->transfers.head && !device->transfers_closing) {
      weft_condition_wait(&device->transfer_wake, &device->mutex,
                          WEFT_TIME_INFINITE_FUTURE);
    }
    weft_cuda_op_t* op = device->transfers.head;
    if (!op) break;  // shutting down with nothing left
    weft_cuda_fifo_unlink(&device->transfers, NULL, op);
    weft_slim_mutex_unlock(&device->mutex);
    weft_queue_trace_begin(
        weft_cuda_op_record(op)->trace_id,
        weft_queue_op_kind_name(weft_cuda_op_base(op)->kind));
    weft_status_t status =
        pushed ? weft_cuda_staging_ensure(device)
               : WEFT_STATUS(INTERNAL, "the transfer thread has no context");
    if (weft_status_is_ok(status)) {
      status =
          weft_cuda_transfer(device, op->queue->stream, weft_cuda_op_base(op));
    }
    weft_queue_trace_end(weft_cuda_op_record(op)->trace_id);
    // Its event after the last copy (a WRITE's pieces are all in the file
    // by now); the completion thread ends it like any issued op. Never
    // signalled from here: the ops whose values it waited for in-stream
    // are signalled by the completion thread, in issue order, and a
    // signal must not overtake theirs.
    weft_slim_mutex_lock(&device->mutex);
    weft_cuda_op_finish_issue(device, op, status);
    if (device->advance_head) {
      weft_slim_mutex_unlock(&device->mutex);
      weft_cuda_device_announce_issued(device);
      weft_slim_mutex_lock(&device->mutex);
    }
  }
  weft_slim_mutex_unlock(&device->mutex);
  if (pushed) weft_cuda_device_pop_context(device);
  return 0;
}
