// weft: what drivers report about pending operations, and the hooks the
// HAL calls for the watchdog (see include/weft/diagnostics.h).
//
// A driver describes each operation not yet retired as a weft_pending_op_t
// through its vtable's for_each_pending; everything else (the printed
// report, cycle detection, the watchdog) is written once, in diagnostics.c.
#ifndef WEFT_HAL_DIAGNOSTICS_H_
#define WEFT_HAL_DIAGNOSTICS_H_

#include <stdbool.h>
#include <stdint.h>

#include "hal/queue_op.h"
#include "weft/device.h"
#include "weft/diagnostics.h"

// One pending operation as a driver sees it. The lists and |detail| are
// borrowed for the visit only; |type_name| and |state| must be static
// strings (reports keep the pointers).
typedef struct weft_pending_op_t {
  // "queue_fill" and so on.
  const char* type_name;
  uint32_t queue_index;
  // "waiting" (parked on its waits), "ready", "running", "in file I/O".
  const char* state;
  // More about what it is doing ("1048576 bytes of 'w.bin' at offset 0"),
  // or NULL.
  const char* detail;
  // When it was submitted (0 when unknown).
  weft_time_t submit_time;
  // Its waits (reached ones included; the report says which are not) and
  // its signals.
  weft_semaphore_list_t wait_list;
  weft_semaphore_list_t signal_list;
} weft_pending_op_t;

// The report of queue op |op| in |state|, submitted at |submit_time|, with
// no detail: what every driver fills in before adding its own.
static inline weft_pending_op_t weft_pending_op_for(const weft_queue_op_t* op,
                                                    const char* state,
                                                    weft_time_t submit_time) {
  weft_pending_op_t pending = {
      .type_name = weft_queue_op_kind_name(op->kind),
      .queue_index = op->queue_index,
      .state = state,
      .detail = NULL,
      .submit_time = submit_time,
      .wait_list = op->wait_list,
      .signal_list = op->signal_list,
  };
  return pending;
}

// Called once per pending op. Runs under the driver's locks: it may query
// semaphores (lock order: driver, then semaphore) but must not call into
// the device.
typedef void (*weft_pending_op_visit_fn_t)(void* user_data,
                                           const weft_pending_op_t* op);

// Adds a created device to the list the process-wide report walks, and
// removes it (from weft_device_release, before the driver's destroy, so a
// report never walks a device being torn down).
void weft_diagnostics_register_device(weft_device_t* device);
void weft_diagnostics_unregister_device(weft_device_t* device);

// Work that holds a device's signals outside its driver (a channel's
// transfers in flight: their host call returned DEFERRED), listed under
// that device in reports like the driver's own pending ops. The owner
// keeps the struct alive between register and unregister.
typedef struct weft_diagnostics_source_t {
  // Visits what the source holds for |device|, under the source's own
  // lock (lock order: the device list, the source, then a semaphore).
  void (*for_each_pending)(void* user_data, weft_device_t* device,
                           weft_pending_op_visit_fn_t visit,
                           void* visit_user_data);
  void* user_data;
  // Guarded by the diagnostics lock.
  struct weft_diagnostics_source_t* prev;
  struct weft_diagnostics_source_t* next;
} weft_diagnostics_source_t;

void weft_diagnostics_register_source(weft_diagnostics_source_t* source);
// After it returns no report is visiting |source|.
void weft_diagnostics_unregister_source(weft_diagnostics_source_t* source);

// Reads WEFT_WATCHDOG_MS / WEFT_WATCHDOG_ACTION once (first device create).
void weft_diagnostics_initialize_from_environment(void);

// The watchdog limit a host wait starts with (0: none) and its action.
weft_duration_t weft_watchdog_current(weft_watchdog_action_t* out_action);

// Called by a host wait whose watchdog limit passed: prints the report
// (the wait's own description |waiting_on|, every device's pending ops and
// any cycle) to stderr.
void weft_watchdog_report(const char* waiting_on, weft_duration_t waited_ns);

// A consistent snapshot of a semaphore for reports: its label ("'name'" or
// its address), value and whether it failed.
void weft_semaphore_snapshot(weft_semaphore_t* semaphore, char* label,
                             size_t label_capacity, uint64_t* out_value,
                             bool* out_failed);

#endif  // WEFT_HAL_DIAGNOSTICS_H_
