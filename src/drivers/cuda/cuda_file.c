// weft cuda driver: file reads and writes through pinned staging pieces.
//
// A ready READ or WRITE goes to the device's transfer thread (in the order
// it became ready) instead of the stream. A READ moves the file in pieces:
// the thread reads a piece from the file into a pinned staging piece and
// queues its copy to the device on the dispatch stream, then reads the
// next piece into the next staging piece while the GPU copies, reusing a
// piece once its last copy's event fired; after the last copy the op's
// event is recorded and it goes to the completion thread like any issued
// op (so later ops of the device wait for it in-stream). A WRITE queues
// copies of up to every staging piece ahead, and writes each piece to the
// file as its copy lands, then goes to the completion thread the same
// way (its signals must not overtake those of the ops whose values it
// waited for in-stream, which that thread signals in order). The disk and
// the copy engine so work at the same time, and weft_parameter_stream_load
// fills GPU buffers as fast as the disk allows.
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "drivers/cuda/cuda_buffer.h"
#include "drivers/cuda/cuda_op.h"
#include "hal/queue_completion.h"
#include "hal/queue_trace.h"
#include "hal/semaphore_impl.h"
#include "weft/file.h"

void weft_cuda_device_enqueue_transfer(weft_cuda_device_t* device,
                                       weft_cuda_op_t* op) {
  weft_cuda_fifo_push(&device->transfers, op);
  pthread_cond_signal(&device->transfer_wake);
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
  } else if (staging) {
    symbols->cuMemFreeHost(staging);
  }
  return status;
}

void weft_cuda_device_free_staging(weft_cuda_device_t* device) {
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

// Waits until staging piece |piece| is free (its last copy landed).
static weft_status_t weft_cuda_staging_wait(weft_cuda_device_t* device,
                                            uint32_t piece) {
  weft_cuda_event_t* event = device->staging_events[piece];
  if (!event) return WEFT_OK;
  device->staging_events[piece] = NULL;
  weft_status_t status = WEFT_CUDA_CALL(device->symbols,
                                        cuEventSynchronize(event->handle));
  weft_cuda_event_release(event);
  return status;
}

// Queues a copy of |length| bytes from |source| to |target| on the
// dispatch stream and records the event of staging piece |piece| after it.
static weft_status_t weft_cuda_staging_copy(weft_cuda_device_t* device,
                                            uint32_t piece, CUdeviceptr target,
                                            CUdeviceptr source,
                                            uint64_t length) {
  const weft_cuda_symbols_t* symbols = device->symbols;
  weft_status_t status = WEFT_CUDA_CALL(
      symbols, cuMemcpyAsync(target, source, (size_t)length,
                             device->dispatch_stream));
  weft_cuda_event_t* event = NULL;
  if (weft_status_is_ok(status)) {
    status = weft_cuda_event_pool_acquire(device->event_pool, /*timed=*/false,
                                          &event);
  }
  if (weft_status_is_ok(status)) {
    status = WEFT_CUDA_CALL(
        symbols, cuEventRecord(event->handle, device->dispatch_stream));
    event->stream = device->dispatch_stream;
  }
  if (weft_status_is_ok(status)) {
    device->staging_events[piece] = event;
  } else {
    weft_cuda_event_release(event);
  }
  return status;
}

// File -> device memory, piece by piece; the copies are queued, not done.
static weft_status_t weft_cuda_transfer_read(weft_cuda_device_t* device,
                                             const weft_queue_op_t* op) {
  CUdeviceptr target = 0;
  weft_status_t status = weft_cuda_buffer_device_pointer(
      op->file.buffer, op->file.buffer_offset, &target);
  const uint64_t piece_size = device->staging_piece_size;
  uint32_t piece = 0;
  for (uint64_t done = 0; weft_status_is_ok(status) && done < op->file.length;
       piece = (piece + 1) % device->staging_piece_count) {
    const uint64_t length = op->file.length - done < piece_size
                                ? op->file.length - done
                                : piece_size;
    status = weft_cuda_staging_wait(device, piece);
    uint8_t* staging = device->staging + piece * piece_size;
    if (weft_status_is_ok(status)) {
      status = weft_file_read(op->file.file, op->file.file_offset + done,
                              staging, length);
    }
    if (weft_status_is_ok(status)) {
      status = weft_cuda_staging_copy(device, piece, target + done,
                                      device->staging_device +
                                          piece * piece_size,
                                      length);
    }
    done += length;
  }
  return status;
}

// Device memory -> file: copies queued up to every piece ahead, each piece
// written to the file once its copy landed.
static weft_status_t weft_cuda_transfer_write(weft_cuda_device_t* device,
                                              const weft_queue_op_t* op) {
  CUdeviceptr source = 0;
  weft_status_t status = weft_cuda_buffer_device_pointer(
      op->file.buffer, op->file.buffer_offset, &source);
  const uint64_t piece_size = device->staging_piece_size;
  const uint32_t count = device->staging_piece_count;
  const uint64_t pieces = (op->file.length + piece_size - 1) / piece_size;
  uint64_t queued = 0;
  for (uint64_t written = 0; weft_status_is_ok(status) && written < pieces;
       ++written) {
    while (weft_status_is_ok(status) && queued < pieces &&
           queued - written < count) {
      const uint32_t piece = (uint32_t)(queued % count);
      const uint64_t offset = queued * piece_size;
      const uint64_t length = op->file.length - offset < piece_size
                                  ? op->file.length - offset
                                  : piece_size;
      status = weft_cuda_staging_wait(device, piece);
      if (weft_status_is_ok(status)) {
        status = weft_cuda_staging_copy(
            device, piece, device->staging_device + piece * piece_size,
            source + offset, length);
      }
      ++queued;
    }
    const uint32_t piece = (uint32_t)(written % count);
    const uint64_t offset = written * piece_size;
    const uint64_t length = op->file.length - offset < piece_size
                                ? op->file.length - offset
                                : piece_size;
    if (weft_status_is_ok(status)) status = weft_cuda_staging_wait(device, piece);
    if (weft_status_is_ok(status)) {
      status = weft_file_write(op->file.file, op->file.file_offset + offset,
                               device->staging + piece * piece_size, length);
    }
  }
  return status;
}

int weft_cuda_transfer_main(void* user_data) {
  weft_cuda_device_t* device = (weft_cuda_device_t*)user_data;
  const bool pushed = weft_status_is_ok(weft_cuda_device_push_context(device));
  pthread_mutex_lock(&device->mutex);
  for (;;) {
    while (!device->transfers.head && !device->transfers_closing) {
      pthread_cond_wait(&device->transfer_wake, &device->mutex);
    }
    weft_cuda_op_t* op = device->transfers.head;
    if (!op) break;  // shutting down with nothing left
    weft_cuda_fifo_unlink(&device->transfers, NULL, op);
    pthread_mutex_unlock(&device->mutex);
    const bool is_read = op->base->kind == WEFT_QUEUE_OP_READ;
    weft_queue_trace_begin(op->trace_id, weft_queue_op_kind_name(op->base->kind));
    weft_status_t status =
        pushed ? weft_cuda_staging_ensure(device)
               : WEFT_STATUS(INTERNAL, "the transfer thread has no context");
    if (weft_status_is_ok(status)) {
      status = is_read ? weft_cuda_transfer_read(device, op->base)
                       : weft_cuda_transfer_write(device, op->base);
    }
    weft_queue_trace_end(op->trace_id);
    // Its event after the last copy (a WRITE's pieces are all in the file
    // by now); the completion thread ends it like any issued op. Never
    // signalled from here: the ops whose values it waited for in-stream
    // are signalled by the completion thread, in issue order, and a
    // signal must not overtake theirs.
    pthread_mutex_lock(&device->mutex);
    weft_cuda_op_finish_issue(device, op, status);
    if (device->advance_head) {
      pthread_mutex_unlock(&device->mutex);
      weft_cuda_device_announce_issued(device);
      pthread_mutex_lock(&device->mutex);
    }
  }
  pthread_mutex_unlock(&device->mutex);
  if (pushed) weft_cuda_device_pop_context(device);
  return 0;
}
