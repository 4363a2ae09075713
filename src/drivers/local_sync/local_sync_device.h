// weft: the local-sync device.
//
// Every queue operation is "begin, do, end": begin resolves the waits (a
// failed wait becomes the operation's error), do runs the work on the
// calling thread, end signals every signal semaphore or fails them all with
// the error. When the waits are not all reached at submit the operation is
// parked on the device's queue scheduler (hal/queue_scheduler.h: a pooled
// record holds copies of its lists and arguments and retains everything it
// names, and a wait set on its wait list hands it to the thread that
// reaches the last wait). That thread runs
// ready ops from a thread-local trampoline of its own in a loop
// (weft_scheduled_op_run_outermost), so a chain of parked ops released by
// one signal runs in constant stack depth.
//
// Parked ops sit on the scheduler's parked list until they start, for
// weft_device_dump_pending. Every parked op holds the device's memory.
//
// Consequence of the loop: ops released while a thread is already running
// ready ops (for example by a host call that signals a semaphore) run after
// the current op returns, on that thread. A host call must therefore not
// block waiting for work it releases itself; it may return DEFERRED and
// finish from another thread instead.
//
// Threading: any thread may submit, signal or dump at any time. The op
// record is published to the thread that runs it through the semaphore's
// timepoint machinery; the scheduler's parked list is the only shared
// mutable state.
#ifndef WEFT_DRIVERS_LOCAL_SYNC_LOCAL_SYNC_DEVICE_H_
#define WEFT_DRIVERS_LOCAL_SYNC_LOCAL_SYNC_DEVICE_H_

#include <stdio.h>

#include "base/atomics.h"
#include "base/mutex.h"
#include "hal/device_impl.h"
#include "hal/queue_scheduler.h"

typedef struct weft_local_sync_device_t {
  weft_device_t base;
  // Parked ops: records, the parked list, the release sweep.
  weft_queue_scheduler_t scheduler;
  // What keeps the device's memory: one for all the public references
  // (dropped by destroy, at the last release) plus one per parked op.
  weft_atomic_uint32_t hold_count;
} weft_local_sync_device_t;

WEFT_DEVICE_DEFINE_CAST(weft_local_sync_device_t, weft_local_sync_device_cast)

static inline bool weft_local_sync_device_is_shutting_down(
    weft_local_sync_device_t* device) {
  return weft_queue_scheduler_is_shutting_down(&device->scheduler);
}

// Keeps |device|'s memory alive for a parked op.
static inline void weft_local_sync_device_hold(
    weft_local_sync_device_t* device) {
  // Relaxed: taken while another hold exists (the caller's reference).
  weft_atomic_fetch_add(&device->hold_count, 1u, memory_order_relaxed);
}

// Drops a hold; the last one frees the device (local_sync_device.c).
void weft_local_sync_device_unhold(weft_local_sync_device_t* device);

// Initialises |device->scheduler| with the driver's ready function
// (local_sync_queue.c).
void weft_local_sync_scheduler_initialize(weft_allocator_t allocator,
                                          weft_local_sync_device_t* device);

// Describes every parked op (all of local-sync's pending ops are parked:
// the others run inline) for the HAL's reports.
uint64_t weft_local_sync_device_for_each_pending(
    weft_device_t* device, weft_pending_op_visit_fn_t visit, void* user_data);

// Runs or parks a queue operation (local_sync_queue.c); the public
// functions in device.c have validated it.
weft_status_t weft_local_sync_device_queue_submit(weft_device_t* device,
                                                  const weft_queue_op_t* op);

#endif  // WEFT_DRIVERS_LOCAL_SYNC_LOCAL_SYNC_DEVICE_H_
