// weft cuda driver: the event pool (see cuda_event_pool.h).
#include "drivers/cuda/cuda_event_pool.h"

weft_status_t weft_cuda_event_pool_create(const weft_cuda_symbols_t* symbols,
                                          CUdevice cu_device,
                                          unsigned int flags,
                                          weft_allocator_t allocator,
                                          weft_cuda_event_pool_t** out_pool) {
  *out_pool = NULL;
  weft_cuda_event_pool_t* pool = NULL;
  weft_status_t status =
      weft_allocator_malloc(allocator, sizeof(*pool), (void**)&pool);
  if (weft_status_is_ok(status)) {
    pool->symbols = symbols;
    pool->cu_device = cu_device;
    pool->context = NULL;
    pool->allocator = allocator;
    pool->flags = flags & ~(unsigned int)CU_EVENT_DISABLE_TIMING;
    weft_slim_mutex_initialize(&pool->mutex);
    pool->free_heads[0] = pool->free_heads[1] = NULL;
    atomic_init(&pool->ref_count, 1u);
    status = WEFT_CUDA_CALL(
        symbols, cuDevicePrimaryCtxRetain(&pool->context, cu_device));
    if (!weft_status_is_ok(status)) {
      weft_slim_mutex_deinitialize(&pool->mutex);
      weft_allocator_free(allocator, pool);
      pool = NULL;
    }
  }
  *out_pool = pool;
  return status;
}

void weft_cuda_event_pool_release(weft_cuda_event_pool_t* pool) {
  if (!pool) return;
  // Acq_rel: every event's return happens before the teardown.
  if (weft_atomic_fetch_sub(&pool->ref_count, 1u, memory_order_acq_rel) !=
      1u) {
    return;
  }
  const weft_cuda_symbols_t* symbols = pool->symbols;
  const bool pushed = symbols->cuCtxPushCurrent(pool->context) == CUDA_SUCCESS;
  for (int timed = 0; timed < 2; ++timed) {
    weft_cuda_event_t* event = pool->free_heads[timed];
    while (event) {
      weft_cuda_event_t* next = event->next_free;
      if (pushed) symbols->cuEventDestroy(event->handle);
      weft_allocator_free(pool->allocator, event);
      event = next;
    }
  }
  if (pushed) {
    CUcontext popped = NULL;
    symbols->cuCtxPopCurrent(&popped);
  }
  symbols->cuDevicePrimaryCtxRelease(pool->cu_device);
  weft_slim_mutex_deinitialize(&pool->mutex);
  weft_allocator_free(pool->allocator, pool);
}

weft_status_t weft_cuda_event_pool_acquire(weft_cuda_event_pool_t* pool,
                                           bool timed,
                                           weft_cuda_event_t** out_event) {
  *out_event = NULL;
  weft_slim_mutex_lock(&pool->mutex);
  weft_cuda_event_t* event = pool->free_heads[timed];
  if (event) pool->free_heads[timed] = event->next_free;
  weft_slim_mutex_unlock(&pool->mutex);
  weft_status_t status = WEFT_OK;
  if (!event) {
    status = weft_allocator_malloc(pool->allocator, sizeof(*event),
                                   (void**)&event);
    if (weft_status_is_ok(status)) {
      event->pool = pool;
      event->handle = NULL;
      event->timed = timed;
      status = WEFT_CUDA_CALL(
          pool->symbols,
          cuEventCreate(&event->handle,
                        timed ? pool->flags
                              : pool->flags | CU_EVENT_DISABLE_TIMING));
      if (!weft_status_is_ok(status)) {
        weft_allocator_free(pool->allocator, event);
        event = NULL;
      }
    }
  }
  if (event) {
    event->stream = NULL;
    event->next_free = NULL;
    atomic_init(&event->ref_count, 1u);
    // Relaxed: the caller holds the device's reference to the pool.
    weft_atomic_fetch_add(&pool->ref_count, 1u, memory_order_relaxed);
    *out_event = event;
  }
  return status;
}

void weft_cuda_event_release(weft_cuda_event_t* event) {
  if (!event) return;
  if (weft_atomic_fetch_sub(&event->ref_count, 1u, memory_order_acq_rel) !=
      1u) {
    return;
  }
  weft_cuda_event_pool_t* pool = event->pool;
  weft_slim_mutex_lock(&pool->mutex);
  event->next_free = pool->free_heads[event->timed];
  pool->free_heads[event->timed] = event;
  weft_slim_mutex_unlock(&pool->mutex);
  weft_cuda_event_pool_release(pool);
}
