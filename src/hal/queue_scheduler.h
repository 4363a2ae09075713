// weft: the queue-op scheduler, the one home of an op's life on every
// driver.
//
// What every driver's queue does the same way lives here:
//  - op records: pooled (a record is one block of a block pool, with what
//    does not fit spilling into an arena of larger blocks; retired records
//    are recycled whole, so a warm queue allocates nothing, and a burst
//    leaves the pools at their high-water mark, never above it), each
//    holding the op captured (queue_op.h) and the driver's own bytes;
//  - parking: an op whose waits are not met is marked parked (one atomic
//    store: no lock on the submit path) with a wait set over its wait
//    list; when the set resolves (every wait met, one failed, or the
//    release sweep cancelled it) the op goes to the driver's ready
//    function. The registry and the sweep find parked ops by walking every
//    record (the pool's high-water mark); a record leaves the parked state
//    for good only under the park mutex, at retire, so a walker holding it
//    never sees a record's capture released under it;
//  - the registry behind weft_device_dump_pending: the parked ops, and the
//    ones a driver took and tracks (weft_queue_scheduler_track: local-task's
//    file transfers); a driver lists what else it holds itself;
//  - cancellation at device release: the sweep cancels every parked op's
//    waits, so each goes to the ready function with CANCELLED naming it,
//    and the driver ends it as an op that will not run (the failure order
//    of weft/semaphore.h is kept by weft_queue_op_signal_or_fail);
//  - the retire/idle handshake: a device's teardown waits until every op
//    retired and no callback still touches the scheduler.
// A driver supplies what really differs: where a ready op runs (the ready
// function), which waits its device can meet itself (the |native_waits|
// of weft_queue_scheduler_park: a wait on a semaphore whose payload the
// device waits on natively counts as met once the op that signals it is
// issued, weft_semaphore_advance_issued), and when the work is done
// (weft_queue_op_signal_or_fail, then weft_queue_scheduler_retire).
//
// Threads: any thread may acquire, park and retire; the ready function runs
// on whichever thread resolved the op's waits, never with a scheduler lock
// held.
#ifndef WEFT_HAL_QUEUE_SCHEDULER_H_
#define WEFT_HAL_QUEUE_SCHEDULER_H_

#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/atomics.h"
#include "base/mpsc_list.h"
#include "base/mutex.h"
#include "base/notification.h"
#include "hal/diagnostics.h"
#include "hal/queue_op.h"
#include "hal/wait_set.h"

typedef struct weft_queue_scheduler_t weft_queue_scheduler_t;
typedef struct weft_scheduled_op_t weft_scheduled_op_t;

// Writes what a tracked op is doing (weft_queue_scheduler_track) into
// |buffer|, e.g. "4096 bytes of 'data.bin' at offset 0".
typedef void (*weft_scheduled_op_describe_fn_t)(const weft_scheduled_op_t* op,
                                                char* buffer,
                                                size_t capacity);

// A parked op's waits resolved: |op->wait_status| is OK (every wait met, or
// met natively), a wait's failure (the earliest, annotated), or the release
// sweep's CANCELLED (|op->swept|). The driver runs, issues or ends it. Any
// thread, never with a scheduler lock held (the ops the sweep cancels go to
// it on the sweeping thread once the sweep let go of its lock).
typedef void (*weft_queue_scheduler_ready_fn_t)(void* user_data,
                                                weft_scheduled_op_t* op);

// Where a record is in parking (weft_scheduled_op_t.park_state).
enum {
  // Not parked, or retired.
  WEFT_SCHEDULED_OP_IDLE = 0,
  // Waiting on its wait set: the registry reports it, the sweep cancels it.
  WEFT_SCHEDULED_OP_PARKED = 1,
  // Handed to the ready function, not yet retired: walkers skip it, and
  // its retire takes the park mutex once to leave the state.
  WEFT_SCHEDULED_OP_READIED = 2,
};

struct weft_scheduled_op_t {
  // The op, captured: copies in this record, everything retained.
  weft_queue_op_t base;
  // The wait set's result (owned; see the ready function). OK for an op
  // that was never parked.
  weft_status_t wait_status;
  // Cancelled by the release sweep (its CANCELLED names the op already).
  bool swept;
  // The op's trace id (hal/queue_trace.h); 0 when not traced.
  uint64_t trace_id;
  // When it was parked (0 for ops ready at submit).
  weft_time_t submit_time;
  // The driver's bytes: |driver_size| of them (initialize), 16-byte
  // aligned, zeroed at acquire. They sit right before the record, so a
  // driver that knows its size finds one from the other without a load
  // (weft_scheduled_op_from_driver).
  void* driver;
  // The driver's link while the op is live (a ready list, or
  // weft_scheduled_op_run_outermost's queue); the pool's while it is
  // recycled.
  weft_mpsc_entry_t entry;
  // What weft_scheduled_op_run_outermost runs it with while it is queued.
  void (*deferred_run)(weft_scheduled_op_t* op);

  // The scheduler's own.
  weft_queue_scheduler_t* scheduler;
  weft_arena_block_t* block;
  weft_scheduled_op_t* all_next;  // every record of the pool
  weft_arena_t arena;             // what did not fit in the block
  size_t inline_used;             // bytes of the block's storage used
  // WEFT_SCHEDULED_OP_{IDLE,PARKED,READIED}: set by park, by the wait
  // set's callback, and back to IDLE by retire under the park mutex.
  weft_atomic_uint32_t park_state;
  // Links in the tracked list while tracked.
  weft_scheduled_op_t* tracked_prev;
  weft_scheduled_op_t* tracked_next;
  weft_scheduled_op_t* swept_next;
  // While tracked: what dump_pending says it is doing.
  const char* tracked_state;
  weft_scheduled_op_describe_fn_t tracked_describe;
  weft_wait_set_t* wait_set;  // in this record, when parked
};

struct weft_queue_scheduler_t {
  // Read-mostly, on lines no hot path writes: a retirer reads
  // |shutting_down| for every op, so it does not sit beside the
  // submitters' cache mutex.
  weft_queue_scheduler_ready_fn_t ready_fn;
  void* ready_user_data;
  size_t driver_size;
  // Set (seq_cst) when the release sweep starts: no op parks after it.
  weft_atomic_uint32_t shutting_down;
  weft_block_pool_t block_pool;
  weft_block_pool_t spill_pool;
  // The cache submitters take records from; guarded by |cache_mutex|.
  // Written by submitters.
  alignas(64) weft_slim_mutex_t cache_mutex;
  weft_mpsc_entry_t* cache;
  // Every record ever made, newest first: pushed under |cache_mutex|
  // (release), walked without it (records are freed only by deinitialize).
  _Atomic(weft_scheduled_op_t*) all_head;
  // Orders a record's leaving the parked state (retire) against the
  // walkers of parked records (the sweep, dump_pending), and guards the
  // tracked list. Taken by retirers of parked ops and by walkers, never on
  // the submit path. Lock order: park_mutex, then a semaphore's (the sweep
  // cancels timepoints and dump_pending names semaphores under it);
  // nothing takes them the other way round (timepoints fire outside
  // semaphore locks).
  alignas(64) weft_slim_mutex_t park_mutex;
  // Ops the driver took and tracks (weft_queue_scheduler_track).
  weft_scheduled_op_t* tracked_head;
  weft_scheduled_op_t* tracked_tail;
  alignas(64) weft_mpsc_list_t recycled;
  // Ops live = taken - retired, each counted on a line of its own.
  alignas(64) weft_atomic_uint64_t taken_count;
  alignas(64) weft_atomic_uint64_t retired_count;
  // Notified on every retire (and callback end) once shutting down.
  alignas(64) weft_notification_t idle_notification;
};

// The record whose driver bytes, |driver_size| of them (as given to
// initialize, a multiple of 16), are at |driver|.
static inline weft_scheduled_op_t* weft_scheduled_op_from_driver(
    void* driver, size_t driver_size) {
  return (weft_scheduled_op_t*)((uint8_t*)driver + driver_size);
}

// Initialises |out_scheduler|: ready parked ops go to |ready_fn(user_data,
// op)|; each record carries |driver_size| bytes for the driver.
void weft_queue_scheduler_initialize(weft_allocator_t allocator,
                                     size_t driver_size,
                                     weft_queue_scheduler_ready_fn_t ready_fn,
                                     void* user_data,
                                     weft_queue_scheduler_t* out_scheduler);

// Frees every record. Every op must have retired.
void weft_queue_scheduler_deinitialize(weft_queue_scheduler_t* scheduler);

// Takes a record and captures |source| into it (weft_queue_op_capture with
// |flags|), with room for a wait set when |park| may follow. On failure
// nothing is retained, no record is taken, and the status names the op.
weft_status_t weft_queue_scheduler_acquire(weft_queue_scheduler_t* scheduler,
                                           const weft_queue_op_t* source,
                                           weft_queue_op_capture_flags_t flags,
                                           bool park,
                                           weft_scheduled_op_t** out_op);

// Takes an empty record (no capture): for a driver that builds what goes
// in it (a compiled dispatch) before weft_scheduled_op_capture.
weft_status_t weft_queue_scheduler_acquire_empty(
    weft_queue_scheduler_t* scheduler, weft_scheduled_op_t** out_op);

// Captures |source| into |op| (an empty record) as acquire does. On failure
// nothing is retained; the record is still the caller's (discard it).
weft_status_t weft_scheduled_op_capture(weft_scheduled_op_t* op,
                                        const weft_queue_op_t* source,
                                        weft_queue_op_capture_flags_t flags,
                                        bool park);

// Returns a record whose capture failed or never happened to the pool.
void weft_queue_scheduler_discard(weft_scheduled_op_t* op);

// Returns |byte_length| bytes (16-byte aligned, zeroed) of |op|'s storage:
// its block first, then its arena. Freed when it retires.
weft_status_t weft_scheduled_op_allocate(weft_scheduled_op_t* op,
                                         size_t byte_length, void** out_ptr);

// Parks |op| (acquired with |park|) until its waits resolve, then hands it
// to the ready function. Bit i of |native_waits| (i < 64): wait i counts as
// met once an op that signals it is issued to the device owning the
// semaphore's payload. From this call on the op belongs to the scheduler:
// it may have gone to the ready function (and retired) when this returns.
void weft_queue_scheduler_park(weft_scheduled_op_t* op, uint64_t native_waits);

// Releases what the capture retained, frees the spilled storage and
// recycles the record. |op| must not be touched afterwards.
void weft_queue_scheduler_retire(weft_scheduled_op_t* op);

// The one not-run path of every driver. What |op|'s signals fail with when
// the driver will not run it (a wait failed, the sweep cancelled it, or
// its device is being released): weft_queue_op_not_run of its wait result
// (taken from the record, which then holds OK) and |swept|, which also
// tells a host call that asked.
weft_status_t weft_scheduled_op_not_run(weft_scheduled_op_t* op);

// Ends |op| as not run: its trace's signal marked failed and its signals
// failed with weft_scheduled_op_not_run's status. The driver then retires
// it its own way.
void weft_scheduled_op_end_not_run(weft_scheduled_op_t* op);

// The one re-entry trampoline of every driver: a queue of ops readied on
// one thread while it runs another. A driver keeps one per thread
// (_Thread_local, zero-initialised) for its own ops: one driver's ops then
// never wait behind another's on a thread (a host call that signals an op
// of another driver and waits for it keeps working).
typedef struct weft_scheduled_op_trampoline_t {
  weft_scheduled_op_t* head;
  weft_scheduled_op_t* tail;
  bool running;
} weft_scheduled_op_trampoline_t;

// Runs |run|(|op|) on this thread, unless this thread is already inside
// such a call on |trampoline| further up its stack (running one op
// readied another: a signal inside it, a submit that met a native wait).
// Then |op| is queued, through its |entry|, and the outermost call runs it
// once the current one returns, in the order they were readied: a chain of
// any length takes a loop, not a recursion as deep as the chain.
void weft_scheduled_op_run_outermost(weft_scheduled_op_trampoline_t* trampoline,
                                     weft_scheduled_op_t* op,
                                     void (*run)(weft_scheduled_op_t* op));

// The release sweep: marks the scheduler shutting down and cancels the
// waits of every parked op, which goes to the ready function with the
// sweep's CANCELLED (on this thread, or on a thread that was resolving its
// waits at that moment). Ops the driver already took are the driver's to
// end.
void weft_queue_scheduler_cancel_parked(weft_queue_scheduler_t* scheduler);

// True once the release sweep started (seq_cst).
bool weft_queue_scheduler_is_shutting_down(weft_queue_scheduler_t* scheduler);

// True when no op is live.
bool weft_queue_scheduler_is_idle(weft_queue_scheduler_t* scheduler);

// Ops taken and not yet retired (a snapshot).
int64_t weft_queue_scheduler_live_count(weft_queue_scheduler_t* scheduler);

// Blocks until every op retired. A wait-set callback touches the scheduler
// only while its op is live (it hands the op on last), so nothing touches
// it afterwards. Call after weft_queue_scheduler_cancel_parked.
void weft_queue_scheduler_wait_idle(weft_queue_scheduler_t* scheduler);

// Lists |op|, which the driver took (not parked), in the registry as
// |state| ("in file I/O"), with |describe| (may be NULL) for the detail,
// until weft_queue_scheduler_untrack. Its waits are all met by then, so
// reports show none.
void weft_queue_scheduler_track(weft_scheduled_op_t* op, const char* state,
                                weft_scheduled_op_describe_fn_t describe);
void weft_queue_scheduler_untrack(weft_scheduled_op_t* op);

// Describes every parked op ("waiting", newest first) and every tracked one
// through |visit|; returns how many.
uint64_t weft_queue_scheduler_for_each_pending(
    weft_queue_scheduler_t* scheduler, weft_pending_op_visit_fn_t visit,
    void* user_data);

#endif  // WEFT_HAL_QUEUE_SCHEDULER_H_
