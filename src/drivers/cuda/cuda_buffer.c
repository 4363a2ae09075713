// weft cuda driver: buffers (see cuda_buffer.h).
#include "drivers/cuda/cuda_buffer.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/atomics.h"
#include "hal/queue_ordered_state.h"

typedef struct weft_cuda_buffer_t {
  weft_buffer_t base;
  weft_cuda_event_pool_t* pool;  // retained: the context and the symbols
  weft_cuda_buffer_kind_t kind;
  CUdeviceptr device_pointer;
  void* host_pointer;  // HOST_PINNED only
  // DEVICE only: recorded after the zeroing memset, waited for before the
  // memory is freed (a buffer released at once must not have the memset
  // land in freed memory).
  weft_cuda_event_t* zeroed;
  // QUEUE_ORDERED only; COMMITTED is published after |device_pointer|, so
  // an op ordered after the ALLOCA by a semaphore sees the pointer.
  weft_queue_ordered_state_t state;
} weft_cuda_buffer_t;

static void weft_cuda_buffer_destroy(weft_buffer_t* base);
static weft_status_t weft_cuda_buffer_map_range(
    weft_buffer_t* base, weft_mapping_mode_t mode, weft_memory_access_t access,
    weft_device_size_t offset, weft_device_size_t length,
    void** out_host_ptr);
static void weft_cuda_buffer_unmap_range(weft_buffer_t* base,
                                         weft_device_size_t offset,
                                         weft_device_size_t length,
                                         void* host_ptr) {}
// Pinned memory is coherent: the completion path orders the host after
// the GPU's writes (the event it waits on), and the stream after the
// host's writes (submit comes after them).
static weft_status_t weft_cuda_buffer_sync_range(weft_buffer_t* base,
                                                 weft_device_size_t offset,
                                                 weft_device_size_t length) {
  return WEFT_OK;
}

static const weft_buffer_vtable_t kWeftCudaBufferVtable = {
    .destroy = weft_cuda_buffer_destroy,
    .map_range = weft_cuda_buffer_map_range,
    .unmap_range = weft_cuda_buffer_unmap_range,
    .flush_range = weft_cuda_buffer_sync_range,
    .invalidate_range = weft_cuda_buffer_sync_range,
};

static weft_status_t weft_cuda_buffer_new(weft_cuda_event_pool_t* pool,
                                          weft_domain_t domain,
                                          weft_cuda_buffer_kind_t kind,
                                          weft_buffer_params_t params,
                                          weft_device_size_t byte_length,
                                          weft_allocator_t allocator,
                                          weft_cuda_buffer_t** out_buffer) {
  *out_buffer = NULL;
  weft_cuda_buffer_t* buffer = NULL;
  weft_status_t status =
      weft_allocator_malloc(allocator, sizeof(*buffer), (void**)&buffer);
  if (weft_status_is_ok(status)) {
    weft_buffer_placement_t placement = {.domain = domain, .flags = 0};
    if (kind == WEFT_CUDA_BUFFER_HOST_PINNED) {
      placement.flags |= WEFT_BUFFER_PLACEMENT_HOST_VISIBLE;
      params.type = WEFT_MEMORY_TYPE_HOST_VISIBLE |
                    WEFT_MEMORY_TYPE_HOST_COHERENT;
    } else {
      params.type = WEFT_MEMORY_TYPE_DEVICE_LOCAL;
    }
    if (kind == WEFT_CUDA_BUFFER_QUEUE_ORDERED) {
      placement.flags |= WEFT_BUFFER_PLACEMENT_QUEUE_ORDERED;
    }
    weft_buffer_initialize(&kWeftCudaBufferVtable, allocator, params,
                           placement, byte_length, &buffer->base);
    buffer->pool = pool;
    buffer->kind = kind;
    buffer->device_pointer = 0;
    buffer->host_pointer = NULL;
    buffer->zeroed = NULL;
    weft_queue_ordered_state_initialize(&buffer->state);
    *out_buffer = buffer;
  }
  return status;
}

weft_status_t weft_cuda_buffer_allocate(weft_cuda_event_pool_t* pool,
                                        const CUstream* streams,
                                        uint32_t stream_count,
                                        weft_domain_t domain,
                                        weft_buffer_params_t params,
                                        weft_device_size_t byte_length,
                                        weft_allocator_t allocator,
                                        weft_buffer_t** out_buffer) {
  *out_buffer = NULL;
  CUstream stream = streams[0];
  const bool pinned = (params.type & WEFT_MEMORY_TYPE_HOST_VISIBLE) != 0;
  weft_cuda_buffer_t* buffer = NULL;
  weft_status_t status = weft_cuda_buffer_new(
      pool, domain,
      pinned ? WEFT_CUDA_BUFFER_HOST_PINNED : WEFT_CUDA_BUFFER_DEVICE, params,
      byte_length, allocator, &buffer);
  const weft_cuda_symbols_t* symbols = pool->symbols;
  // Zero-length buffers own no memory (the driver refuses size 0).
  if (weft_status_is_ok(status) && byte_length > 0) {
    char call[96];
    if (pinned) {
      snprintf(call, sizeof(call),
               "cuMemHostAlloc(%" PRIu64 " bytes, DEVICEMAP | PORTABLE)",
               byte_length);
      status = weft_cuda_result_to_status(
          symbols,
          symbols->cuMemHostAlloc(
              &buffer->host_pointer, (size_t)byte_length,
              CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE),
          call);
      if (weft_status_is_ok(status)) {
        status = WEFT_CUDA_CALL(
            symbols, cuMemHostGetDevicePointer(&buffer->device_pointer,
                                               buffer->host_pointer, 0));
      }
    } else {
      snprintf(call, sizeof(call), "cuMemAlloc(%" PRIu64 " bytes)",
               byte_length);
      status = weft_cuda_result_to_status(
          symbols,
          symbols->cuMemAlloc(&buffer->device_pointer, (size_t)byte_length),
          call);
    }
  }
  // New buffers read as zeros on every driver. Device memory is cleared on
  // the first stream, and every other stream waits for that, so the clear
  // is ahead of any op that can use the buffer, on whichever queue.
  if (weft_status_is_ok(status) && byte_length > 0) {
    if (pinned) {
      memset(buffer->host_pointer, 0, (size_t)byte_length);
    } else {
      status = WEFT_CUDA_CALL(
          symbols, cuMemsetD8Async(buffer->device_pointer, 0,
                                   (size_t)byte_length, stream));
      if (weft_status_is_ok(status)) {
        status = weft_cuda_event_pool_acquire(pool, /*timed=*/false,
                                              &buffer->zeroed);
      }
      if (weft_status_is_ok(status)) {
        status = WEFT_CUDA_CALL(
            symbols, cuEventRecord(buffer->zeroed->handle, stream));
        buffer->zeroed->stream = stream;
      }
      for (uint32_t i = 1; weft_status_is_ok(status) && i < stream_count;
           ++i) {
        status = WEFT_CUDA_CALL(
            symbols, cuStreamWaitEvent(streams[i], buffer->zeroed->handle, 0));
      }
    }
  }
  if (weft_status_is_ok(status)) {
    weft_atomic_fetch_add(&pool->ref_count, 1u, memory_order_relaxed);
    *out_buffer = &buffer->base;
  } else if (buffer) {
    if (buffer->host_pointer) symbols->cuMemFreeHost(buffer->host_pointer);
    if (buffer->device_pointer && !pinned) {
      // A memset queued before the failure must land first.
      symbols->cuStreamSynchronize(stream);
      symbols->cuMemFree(buffer->device_pointer);
    }
    weft_cuda_event_release(buffer->zeroed);
    weft_allocator_free(allocator, buffer);
  }
  return status;
}

weft_status_t weft_cuda_buffer_create_queue_ordered(
    weft_cuda_event_pool_t* pool, weft_domain_t domain,
    weft_buffer_params_t params, weft_device_size_t byte_length,
    weft_allocator_t allocator, weft_buffer_t** out_buffer) {
  *out_buffer = NULL;
  weft_cuda_buffer_t* buffer = NULL;
  weft_status_t status =
      weft_cuda_buffer_new(pool, domain, WEFT_CUDA_BUFFER_QUEUE_ORDERED,
                           params, byte_length, allocator, &buffer);
  if (weft_status_is_ok(status)) {
    weft_atomic_fetch_add(&pool->ref_count, 1u, memory_order_relaxed);
    *out_buffer = &buffer->base;
  }
  return status;
}

static void weft_cuda_buffer_destroy(weft_buffer_t* base) {
  weft_cuda_buffer_t* buffer = (weft_cuda_buffer_t*)base;
  weft_cuda_event_pool_t* pool = buffer->pool;
  const weft_cuda_symbols_t* symbols = pool->symbols;
  const bool owns_memory =
      buffer->kind == WEFT_CUDA_BUFFER_QUEUE_ORDERED
          ? weft_queue_ordered_state_is_committed(&buffer->state)
          : (buffer->device_pointer != 0 || buffer->host_pointer != NULL);
  if (owns_memory &&
      symbols->cuCtxPushCurrent(pool->context) == CUDA_SUCCESS) {
    // A queue-ordered buffer released without its DEALLOCA: cuMemFree
    // takes pool memory too (after the work already queued on it).
    if (buffer->kind == WEFT_CUDA_BUFFER_HOST_PINNED) {
      symbols->cuMemFreeHost(buffer->host_pointer);
    } else {
      // Usually long done: ops using the buffer retained it until theirs.
      if (buffer->zeroed) symbols->cuEventSynchronize(buffer->zeroed->handle);
      symbols->cuMemFree(buffer->device_pointer);
    }
    CUcontext popped = NULL;
    symbols->cuCtxPopCurrent(&popped);
  }
  weft_cuda_event_release(buffer->zeroed);
  weft_allocator_free(base->allocator, buffer);
  weft_cuda_event_pool_release(pool);
}

static weft_status_t weft_cuda_buffer_map_range(
    weft_buffer_t* base, weft_mapping_mode_t mode, weft_memory_access_t access,
    weft_device_size_t offset, weft_device_size_t length,
    void** out_host_ptr) {
  weft_cuda_buffer_t* buffer = (weft_cuda_buffer_t*)base;
  *out_host_ptr = NULL;
  if (buffer->kind != WEFT_CUDA_BUFFER_HOST_PINNED) {
    return WEFT_STATUS(FAILED_PRECONDITION,
                       "a cuda device's device-local buffer (%" PRIu64
                       " bytes) cannot be mapped by the host: allocate it "
                       "HOST_VISIBLE, or copy it into one through the queue",
                       base->byte_length);
  }
  *out_host_ptr =
      buffer->host_pointer ? (uint8_t*)buffer->host_pointer + offset : NULL;
  return WEFT_OK;
}

static const weft_cuda_buffer_t* weft_cuda_buffer_cast(
    const weft_buffer_t* buffer) {
  const weft_buffer_t* root = buffer->allocated_buffer;
  return weft_buffer_vtable(root) == &kWeftCudaBufferVtable
             ? (const weft_cuda_buffer_t*)root
             : NULL;
}

weft_status_t weft_cuda_buffer_device_pointer(const weft_buffer_t* buffer,
                                              weft_device_size_t offset,
                                              CUdeviceptr* out_pointer) {
  *out_pointer = 0;
  const weft_cuda_buffer_t* root = weft_cuda_buffer_cast(buffer);
  if (!root) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "a buffer of another device (%" PRIu64
                       " bytes) reached a cuda op",
                       buffer->byte_length);
  }
  if (root->kind == WEFT_CUDA_BUFFER_QUEUE_ORDERED) {
    weft_status_t status =
        weft_queue_ordered_state_check(&root->state, root->base.byte_length);
    if (!weft_status_is_ok(status)) return status;
  }
  *out_pointer = root->device_pointer + buffer->byte_offset + offset;
  return WEFT_OK;
}

weft_status_t weft_cuda_buffer_commit(weft_buffer_t* base,
                                      CUmemoryPool memory_pool,
                                      CUstream stream) {
  weft_cuda_buffer_t* buffer = (weft_cuda_buffer_t*)base;
  weft_status_t status =
      weft_queue_ordered_state_begin_commit(&buffer->state, base->byte_length);
  if (!weft_status_is_ok(status)) return status;
  if (base->byte_length > 0) {
    char call[96];
    snprintf(call, sizeof(call),
             "cuMemAllocFromPoolAsync(%" PRIu64 " bytes)", base->byte_length);
    const weft_cuda_symbols_t* symbols = buffer->pool->symbols;
    status = weft_cuda_result_to_status(
        symbols,
        symbols->cuMemAllocFromPoolAsync(&buffer->device_pointer,
                                         (size_t)base->byte_length,
                                         memory_pool, stream),
        call);
  }
  if (weft_status_is_ok(status) && base->byte_length > 0) {
    // Zeros, as every driver's alloca gives.
    status = WEFT_CUDA_CALL(
        buffer->pool->symbols,
        cuMemsetD8Async(buffer->device_pointer, 0, (size_t)base->byte_length,
                        stream));
  }
  weft_queue_ordered_state_end_commit(&buffer->state,
                                      weft_status_is_ok(status));
  return status;
}

weft_status_t weft_cuda_buffer_decommit(weft_buffer_t* base,
                                        CUstream stream) {
  weft_cuda_buffer_t* buffer = (weft_cuda_buffer_t*)base;
  weft_status_t status =
      weft_queue_ordered_state_decommit(&buffer->state, base->byte_length);
  if (weft_status_is_ok(status) && buffer->device_pointer) {
    status = WEFT_CUDA_CALL(buffer->pool->symbols,
                            cuMemFreeAsync(buffer->device_pointer, stream));
  }
  return status;
}
