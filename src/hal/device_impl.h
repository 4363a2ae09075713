// weft: what a driver implements to be a device.
//
// The public queue functions (device.c) validate everything that needs no
// waiting (queue_validation.h) and only then hand the driver one descriptor
// (queue_op.h), so drivers see well-formed requests through one entry.
// Drivers embed weft_device_t at offset 0.
#ifndef WEFT_HAL_DEVICE_IMPL_H_
#define WEFT_HAL_DEVICE_IMPL_H_

#include <stdbool.h>
#include <stddef.h>

#include "hal/diagnostics.h"
#include "hal/domain.h"
#include "hal/queue_op.h"
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

  // Makes an executable from |source|; a format the device does not take
  // is INVALID_ARGUMENT naming the device and the format.
  weft_status_t (*create_executable)(weft_device_t* device,
                                     weft_executable_source_t source,
                                     weft_executable_t** out_executable);
  // Optional: makes a semaphore the driver recognises as its own (one that
  // embeds weft_semaphore_t, semaphore_impl.h) to give it a native path.
  // NULL: the host timeline semaphore, which every device works with.
  weft_status_t (*create_semaphore)(weft_device_t* device,
                                    uint64_t initial_value,
                                    weft_semaphore_t** out_semaphore);
  // Creates the buffer handle weft_device_queue_alloca returns: no memory
  // until the op's ALLOCA runs, none after its DEALLOCA.
  weft_status_t (*create_transient_buffer)(weft_device_t* device,
                                           weft_buffer_params_t params,
                                           weft_device_size_t byte_length,
                                           weft_buffer_t** out_buffer);
  // Every queue operation, validated (queue_validation.h) and described
  // (queue_op.h). |op| and everything it points to are borrowed for the
  // call: a driver that keeps the op captures it. On failure nothing was
  // queued and the signals are untouched; once OK is returned the op's
  // outcome goes through its signals only.
  weft_status_t (*queue_submit)(weft_device_t* device,
                                const weft_queue_op_t* op);

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
  // Where its memory lives and its code runs (hal/domain.h).
  weft_domain_t domain;
  // The process-wide list of live devices hang reports walk
  // (diagnostics.c; guarded by its mutex).
  weft_device_t* diagnostics_prev;
  weft_device_t* diagnostics_next;
  bool diagnostics_registered;
};

// One property a device answers through weft_device_query_i64.
typedef struct weft_device_property_t {
  const char* key;
  int64_t value;
} weft_device_property_t;

// What a driver's query_i64 does with its table: the value of |key| among
// |properties| (|count| of them), or NOT_FOUND naming the device, the key
// and every key of the table, in the table's order.
weft_status_t weft_device_query_property(
    const weft_device_t* device, const char* key,
    const weft_device_property_t* properties, size_t count,
    int64_t* out_value);

// Initialises the base fields; copies |id|.
weft_status_t weft_device_initialize(const weft_device_vtable_t* vtable,
                                     const char* id, const char* driver_name,
                                     weft_domain_t domain,
                                     weft_allocator_t host_allocator,
                                     weft_device_t* out_device);
// Frees what weft_device_initialize allocated.
void weft_device_deinitialize(weft_device_t* device);

// Defines |cast_fn|, turning a weft_device_t* into the driver's device
// |type|, whose first member must be its weft_device_t named |base|.
#define WEFT_DEVICE_DEFINE_CAST(type, cast_fn)              \
  _Static_assert(offsetof(type, base) == 0,                 \
                 #type " must start with its base device"); \
  static inline type* cast_fn(weft_device_t* device) { return (type*)device; }

static inline const weft_device_vtable_t* weft_device_vtable(
    const weft_device_t* device) {
  return (const weft_device_vtable_t*)device->resource.vtable;
}

#endif  // WEFT_HAL_DEVICE_IMPL_H_
