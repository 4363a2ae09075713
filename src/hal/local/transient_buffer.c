// weft: transient buffers (memory committed by alloca, freed by dealloca).
#include "hal/local/transient_buffer.h"

#include <inttypes.h>
#include <stdint.h>

#include "base/atomics.h"
#include "hal/buffer_impl.h"
#include "hal/local/heap_buffer.h"
#include "hal/queue_ordered_state.h"

// Host memory: every CPU driver reaches it and the host maps it.
static const weft_buffer_placement_t kWeftHostPlacement = {
    .domain = WEFT_DOMAIN_HOST,
    .flags = WEFT_BUFFER_PLACEMENT_HOST_VISIBLE |
             WEFT_BUFFER_PLACEMENT_QUEUE_ORDERED,
};

typedef struct weft_transient_buffer_t {
  weft_buffer_t base;
  // Published COMMITTED after |allocation| is stored.
  weft_queue_ordered_state_t state;
  // The pointer the allocator returned (0 when none); the memory starts at
  // the next WEFT_HEAP_BUFFER_ALIGNMENT boundary.
  weft_atomic_intptr_t allocation;
} weft_transient_buffer_t;

static uint8_t* weft_transient_buffer_data(intptr_t allocation) {
  uintptr_t data = (uintptr_t)allocation;
  data = (data + WEFT_HEAP_BUFFER_ALIGNMENT - 1) &
         ~(uintptr_t)(WEFT_HEAP_BUFFER_ALIGNMENT - 1);
  return (uint8_t*)data;
}

static void weft_transient_buffer_destroy(weft_buffer_t* base) {
  weft_transient_buffer_t* buffer = (weft_transient_buffer_t*)base;
  // The last reference is gone, so no other thread touches the buffer; the
  // acq_rel release in resource.h ordered their writes before this.
  void* allocation = (void*)weft_atomic_load(&buffer->allocation,
                                             memory_order_relaxed);
  weft_allocator_free(base->allocator, allocation);
  weft_allocator_free(base->allocator, buffer);
}

static weft_status_t weft_transient_buffer_map_range(
    weft_buffer_t* base, weft_mapping_mode_t mode, weft_memory_access_t access,
    weft_device_size_t offset, weft_device_size_t length,
    void** out_host_ptr) {
  weft_transient_buffer_t* buffer = (weft_transient_buffer_t*)base;
  *out_host_ptr = NULL;
  weft_status_t status =
      weft_queue_ordered_state_check(&buffer->state, base->byte_length);
  if (!weft_status_is_ok(status)) return status;
  intptr_t allocation =
      weft_atomic_load(&buffer->allocation, memory_order_relaxed);
  if (allocation != 0) {
    *out_host_ptr = weft_transient_buffer_data(allocation) + offset;
  }
  return WEFT_OK;
}

static void weft_transient_buffer_unmap_range(weft_buffer_t* base,
                                              weft_device_size_t offset,
                                              weft_device_size_t length,
                                              void* host_ptr) {}

// Committed memory is host memory, coherent with the CPU.
static weft_status_t weft_transient_buffer_sync_range(
    weft_buffer_t* base, weft_device_size_t offset,
    weft_device_size_t length) {
  return WEFT_OK;
}

static const weft_buffer_vtable_t kWeftTransientBufferVtable = {
    .destroy = weft_transient_buffer_destroy,
    .map_range = weft_transient_buffer_map_range,
    .unmap_range = weft_transient_buffer_unmap_range,
    .flush_range = weft_transient_buffer_sync_range,
    .invalidate_range = weft_transient_buffer_sync_range,
};

weft_status_t weft_transient_buffer_create(weft_allocator_t allocator,
                                           weft_buffer_params_t params,
                                           weft_device_size_t byte_length,
                                           weft_buffer_t** out_buffer) {
  *out_buffer = NULL;
  weft_status_t status = WEFT_OK;
  if (byte_length >
      (weft_device_size_t)(SIZE_MAX - WEFT_HEAP_BUFFER_ALIGNMENT)) {
    status = WEFT_STATUS(RESOURCE_EXHAUSTED,
                         "transient_buffer_create: %" PRIu64
                         " bytes cannot be allocated on this host",
                         byte_length);
  }
  weft_transient_buffer_t* buffer = NULL;
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc(allocator, sizeof(*buffer), (void**)&buffer);
  }
  if (weft_status_is_ok(status)) {
    weft_buffer_initialize(&kWeftTransientBufferVtable, allocator, params,
                           kWeftHostPlacement, byte_length, &buffer->base);
    weft_queue_ordered_state_initialize(&buffer->state);
    atomic_init(&buffer->allocation, 0);
    *out_buffer = &buffer->base;
  }
  return status;
}

static bool weft_buffer_is_root_transient(const weft_buffer_t* buffer) {
  return buffer && buffer->resource.vtable == &kWeftTransientBufferVtable;
}

bool weft_buffer_is_transient(const weft_buffer_t* buffer) {
  return buffer && weft_buffer_is_root_transient(buffer->allocated_buffer);
}

bool weft_transient_buffer_is_committed(const weft_buffer_t* buffer) {
  if (!weft_buffer_is_transient(buffer)) return false;
  const weft_transient_buffer_t* transient =
      (const weft_transient_buffer_t*)buffer->allocated_buffer;
  return weft_queue_ordered_state_is_committed(&transient->state);
}

weft_status_t weft_transient_buffer_commit(weft_buffer_t* base) {
  weft_status_t status = WEFT_OK;
  weft_transient_buffer_t* buffer = NULL;
  if (!weft_buffer_is_root_transient(base)) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "transient_buffer_commit: not a transient buffer");
  } else {
    buffer = (weft_transient_buffer_t*)base;
  }
  bool claimed = false;
  if (weft_status_is_ok(status)) {
    status = weft_status_annotate(
        weft_queue_ordered_state_begin_commit(&buffer->state,
                                              base->byte_length),
        "in transient_buffer_commit");
    claimed = weft_status_is_ok(status);
  }
  void* allocation = NULL;
  if (claimed && base->byte_length != 0) {
    status = weft_allocator_malloc(
        base->allocator,
        (size_t)base->byte_length + WEFT_HEAP_BUFFER_ALIGNMENT - 1,
        &allocation);
  }
  if (claimed && weft_status_is_ok(status)) {
    weft_atomic_store(&buffer->allocation, (intptr_t)allocation,
                      memory_order_relaxed);
    weft_queue_ordered_state_end_commit(&buffer->state, /*committed=*/true);
  } else if (claimed) {
    weft_queue_ordered_state_end_commit(&buffer->state, /*committed=*/false);
    status = weft_status_annotate(
        status, "committing a transient buffer of %" PRIu64 " bytes",
        base->byte_length);
  }
  return status;
}

weft_status_t weft_transient_buffer_decommit(weft_buffer_t* base) {
  weft_status_t status = WEFT_OK;
  weft_transient_buffer_t* buffer = NULL;
  if (!weft_buffer_is_root_transient(base)) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "transient_buffer_decommit: not a transient buffer");
  } else {
    buffer = (weft_transient_buffer_t*)base;
  }
  if (weft_status_is_ok(status)) {
    status = weft_status_annotate(
        weft_queue_ordered_state_decommit(&buffer->state, base->byte_length),
        "in transient_buffer_decommit");
  }
  if (weft_status_is_ok(status)) {
    void* allocation = (void*)weft_atomic_exchange(&buffer->allocation, 0,
                                                   memory_order_relaxed);
    weft_allocator_free(base->allocator, allocation);
  }
  return status;
}
