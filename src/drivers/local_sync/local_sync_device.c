// weft: the local-sync device object and driver entry.
#include <stdalign.h>
#include "drivers/local_sync/local_sync_device.h"

#include <string.h>

#include "drivers/local_sync/local_sync_driver.h"
#include "hal/local/cpu_device.h"

void weft_local_sync_device_unhold(weft_local_sync_device_t* device) {
  // Acq_rel: every holder's use of the device happens before the free.
  if (weft_atomic_fetch_sub(&device->hold_count, 1u, memory_order_acq_rel) ==
      1u) {
    weft_allocator_t allocator = device->base.host_allocator;
    weft_queue_scheduler_deinitialize(&device->scheduler);
    weft_device_deinitialize(&device->base);
    weft_allocator_free_aligned(allocator, device);
  }
}

// The last public reference is gone: parked ops fail with CANCELLED (ops
// running on other threads finish), and the device's memory goes with the
// last of them.
static void weft_local_sync_device_destroy(weft_device_t* base_device) {
  weft_local_sync_device_t* device = weft_local_sync_device_cast(base_device);
  weft_queue_scheduler_cancel_parked(&device->scheduler);
  weft_local_sync_device_unhold(device);
}

// The properties this device answers, in the order messages list them.
static const weft_device_property_t kWeftLocalSyncProperties[] = {
    {"queue.count", 1},
    {"worker.count", 1},
    {"dispatch.concurrent", 0},
    {"semaphore.host_wait", 1},
};

static weft_status_t weft_local_sync_device_query_i64(weft_device_t* device,
                                                      const char* key,
                                                      int64_t* out_value) {
  return weft_device_query_property(
      device, key, kWeftLocalSyncProperties,
      sizeof(kWeftLocalSyncProperties) / sizeof(kWeftLocalSyncProperties[0]),
      out_value);
}

static const weft_device_vtable_t kWeftLocalSyncDeviceVtable = {
    .destroy = weft_local_sync_device_destroy,
    .query_i64 = weft_local_sync_device_query_i64,
    WEFT_CPU_DEVICE_ENTRIES,
    .for_each_pending = weft_local_sync_device_for_each_pending,
    .queue_submit = weft_local_sync_device_queue_submit,
};

static weft_status_t weft_local_sync_driver_create_device(
    const weft_driver_t* driver, const char* device_string,
    const weft_device_options_t* options, weft_allocator_t allocator,
    weft_device_t** out_device) {
  weft_local_sync_device_t* device = NULL;
  weft_status_t status = weft_allocator_malloc_aligned(
      allocator, sizeof(*device), alignof(weft_local_sync_device_t),
      (void**)&device);
  if (weft_status_is_ok(status)) {
    weft_local_sync_scheduler_initialize(allocator, device);
    atomic_init(&device->hold_count, 1u);
    status = weft_device_initialize(&kWeftLocalSyncDeviceVtable, device_string,
                                    driver->name, WEFT_DOMAIN_HOST, allocator,
                                    &device->base);
    if (!weft_status_is_ok(status)) {
      weft_queue_scheduler_deinitialize(&device->scheduler);
      weft_allocator_free_aligned(allocator, device);
      device = NULL;
    }
  }
  *out_device = device ? &device->base : NULL;
  return status;
}

static const char* const kWeftLocalSyncOptionNames[] = {NULL};

const weft_driver_t weft_local_sync_driver = {
    .name = "local-sync",
    .description =
        "runs every queue operation inline on the submitting or signalling "
        "thread (no worker threads)",
    .option_names = kWeftLocalSyncOptionNames,
    .create_device = weft_local_sync_driver_create_device,
};
