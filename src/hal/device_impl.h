// weft: what a driver implements to be a device.
//
// The public queue functions (device.c) validate everything that needs no
// waiting (queue_validation.h) and only then call the driver, so drivers see
// well-formed requests. Drivers embed weft_device_t at offset 0.
#ifndef WEFT_HAL_DEVICE_IMPL_H_
#define WEFT_HAL_DEVICE_IMPL_H_

#include <stdbool.h>

#include "hal/diagnostics.h"
#include "hal/resource.h"
#include "weft/device.h"

typedef struct weft_device_vtable_t {
  // Must be first (see resource.h).
  void (*destroy)(weft_device_t* device);

  weft_status_t (*query_i64)(weft_device_t* device, const char* key,
                             int64_t* out_value);
  weft_status_t (*allocate_buffer)(weft_device_t* device,
                                   weft_buffer_params_t params,
                                   weft_device_size_t byte_length,
                                   weft_buffer_t** out_buffer);
  // Describes the operations not yet retired (diagnostics.h); the HAL
  // formats weft_device_dump_pending and searches for cycles from it.
  // Returns how many more are pending that it could not describe (ops a
  // driver cannot look at safely while they run).
  uint64_t (*for_each_pending)(weft_device_t* device,
                               weft_pending_op_visit_fn_t visit,
                               void* user_data);
  // Optional: writes lines about the device's state to go under its
  // heading in reports (workers, file I/O backend, transfers in flight).
  void (*describe)(weft_device_t* device, FILE* stream);

  weft_status_t (*queue_alloca)(weft_device_t* device,
                                weft_queue_affinity_t affinity,
                                weft_semaphore_list_t wait_list,
                                weft_semaphore_list_t signal_list,
                                weft_buffer_params_t params,
                                weft_device_size_t byte_length,
                                weft_buffer_t** out_buffer);
  weft_status_t (*queue_dealloca)(weft_device_t* device,
                                  weft_queue_affinity_t affinity,
                                  weft_semaphore_list_t wait_list,
                                  weft_semaphore_list_t signal_list,
                                  weft_buffer_t* buffer);
  weft_status_t (*queue_fill)(weft_device_t* device,
                              weft_queue_affinity_t affinity,
                              weft_semaphore_list_t wait_list,
                              weft_semaphore_list_t signal_list,
                              weft_buffer_t* target, weft_device_size_t offset,
                              weft_device_size_t length, uint32_t pattern,
                              uint32_t pattern_length);
  // |source| is borrowed for the call only: the driver copies it if it defers.
  weft_status_t (*queue_update)(weft_device_t* device,
                                weft_queue_affinity_t affinity,
                                weft_semaphore_list_t wait_list,
                                weft_semaphore_list_t signal_list,
                                const void* source, weft_buffer_t* target,
                                weft_device_size_t offset,
                                weft_device_size_t length);
  weft_status_t (*queue_copy)(weft_device_t* device,
                              weft_queue_affinity_t affinity,
                              weft_semaphore_list_t wait_list,
                              weft_semaphore_list_t signal_list,
                              weft_buffer_t* source,
                              weft_device_size_t source_offset,
                              weft_buffer_t* target,
                              weft_device_size_t target_offset,
                              weft_device_size_t length);
  weft_status_t (*queue_read)(weft_device_t* device,
                              weft_queue_affinity_t affinity,
                              weft_semaphore_list_t wait_list,
                              weft_semaphore_list_t signal_list,
                              weft_file_t* file, uint64_t file_offset,
                              weft_buffer_t* target,
                              weft_device_size_t target_offset,
                              weft_device_size_t length);
  weft_status_t (*queue_write)(weft_device_t* device,
                               weft_queue_affinity_t affinity,
                               weft_semaphore_list_t wait_list,
                               weft_semaphore_list_t signal_list,
                               weft_buffer_t* source,
                               weft_device_size_t source_offset,
                               weft_file_t* file, uint64_t file_offset,
                               weft_device_size_t length);
  weft_status_t (*queue_dispatch)(
      weft_device_t* device, weft_queue_affinity_t affinity,
      weft_semaphore_list_t wait_list, weft_semaphore_list_t signal_list,
      weft_executable_t* executable, uint32_t kernel_ordinal,
      const uint32_t workgroup_count[3], uint32_t constant_count,
      const uint32_t* constants, uint32_t binding_count,
      const weft_buffer_ref_t* bindings);
  weft_status_t (*queue_execute)(weft_device_t* device,
                                 weft_queue_affinity_t affinity,
                                 weft_semaphore_list_t wait_list,
                                 weft_semaphore_list_t signal_list,
                                 weft_command_buffer_t* command_buffer,
                                 weft_binding_table_t binding_table);
  weft_status_t (*queue_barrier)(weft_device_t* device,
                                 weft_queue_affinity_t affinity,
                                 weft_semaphore_list_t wait_list,
                                 weft_semaphore_list_t signal_list);
  weft_status_t (*queue_host_call)(weft_device_t* device,
                                   weft_queue_affinity_t affinity,
                                   weft_semaphore_list_t wait_list,
                                   weft_semaphore_list_t signal_list,
                                   weft_host_call_fn_t fn, void* user_data,
                                   const uint64_t args[4],
                                   weft_host_call_flags_t flags);

  // Optional (NULL: nothing to do). Called by weft_command_buffer_end once
  // recording succeeded, to compile the commands into the driver's own form
  // (kept with weft_command_buffer_set_driver_data). A failure is returned
  // by end and kept as the command buffer's recording error.
  weft_status_t (*command_buffer_finalize)(
      weft_device_t* device, weft_command_buffer_t* command_buffer);
} weft_device_vtable_t;

struct weft_device_t {
  weft_resource_t resource;  // vtable: weft_device_vtable_t
  weft_allocator_t host_allocator;
  // Copies owned by the device (freed by weft_device_deinitialize).
  char* id;
  const char* driver_name;  // static string of the driver
  // The process-wide list of live devices hang reports walk
  // (diagnostics.c; guarded by its mutex).
  weft_device_t* diagnostics_prev;
  weft_device_t* diagnostics_next;
  bool diagnostics_registered;
};

// Initialises the base fields; copies |id|.
weft_status_t weft_device_initialize(const weft_device_vtable_t* vtable,
                                     const char* id, const char* driver_name,
                                     weft_allocator_t host_allocator,
                                     weft_device_t* out_device);
// Frees what weft_device_initialize allocated.
void weft_device_deinitialize(weft_device_t* device);

static inline const weft_device_vtable_t* weft_device_vtable(
    const weft_device_t* device) {
  return (const weft_device_vtable_t*)device->resource.vtable;
}

#endif  // WEFT_HAL_DEVICE_IMPL_H_
