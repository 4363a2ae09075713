// weft: the queue-op scheduler (see queue_scheduler.h).
#include "hal/queue_scheduler.h"

#include <string.h>

#include "base/wait_policy.h"
#include "hal/queue_completion.h"
#include "hal/queue_trace.h"
#include "hal/resource.h"

// Bytes of a record's block after the record itself: enough for the wait
// sets and lists of up to three waits and signals, or a driver's small
// state, without spilling.
#define WEFT_QUEUE_SCHEDULER_INLINE_STORAGE 512
// Bytes per spill block: a dispatch's processor context, a command
// buffer's for a few dozen commands. Larger spills are allocated alone.
#define WEFT_QUEUE_SCHEDULER_SPILL_BLOCK_SIZE 4096

static size_t weft_align16(size_t value) { return (value + 15) & ~(size_t)15; }

// The record's size, rounded: a block is [driver bytes | record | inline
// storage].
#define WEFT_QUEUE_SCHEDULER_HEADER_SIZE \
  ((sizeof(weft_scheduled_op_t) + 15) & ~(size_t)15)

//===----------------------------------------------------------------------===//
// Lifetime
//===----------------------------------------------------------------------===//

void weft_queue_scheduler_initialize(weft_allocator_t allocator,
                                     size_t driver_size,
                                     weft_queue_scheduler_ready_fn_t ready_fn,
                                     void* user_data,
                                     weft_queue_scheduler_t* out_scheduler) {
  memset(out_scheduler, 0, sizeof(*out_scheduler));
  out_scheduler->ready_fn = ready_fn;
  out_scheduler->ready_user_data = user_data;
  out_scheduler->driver_size = weft_align16(driver_size);
  weft_block_pool_initialize(WEFT_QUEUE_SCHEDULER_HEADER_SIZE +
                                 out_scheduler->driver_size +
                                 WEFT_QUEUE_SCHEDULER_INLINE_STORAGE,
                             allocator, &out_scheduler->block_pool);
  weft_block_pool_initialize(WEFT_QUEUE_SCHEDULER_SPILL_BLOCK_SIZE, allocator,
                             &out_scheduler->spill_pool);
  weft_slim_mutex_initialize(&out_scheduler->cache_mutex);
  weft_slim_mutex_initialize(&out_scheduler->park_mutex);
  weft_mpsc_list_initialize(&out_scheduler->recycled);
  atomic_init(&out_scheduler->shutting_down, 0u);
  atomic_init(&out_scheduler->taken_count, 0);
  atomic_init(&out_scheduler->retired_count, 0);
  weft_notification_initialize(&out_scheduler->idle_notification);
}

void weft_queue_scheduler_deinitialize(weft_queue_scheduler_t* scheduler) {
  weft_scheduled_op_t* op =
      weft_atomic_load(&scheduler->all_head, memory_order_acquire);
  weft_atomic_store(&scheduler->all_head, NULL, memory_order_relaxed);
  while (op) {
    weft_scheduled_op_t* next = op->all_next;
    weft_arena_deinitialize(&op->arena);
    weft_block_pool_release(&scheduler->block_pool, op->block);
    op = next;
  }
  scheduler->cache = NULL;
  weft_notification_deinitialize(&scheduler->idle_notification);
  weft_slim_mutex_deinitialize(&scheduler->cache_mutex);
  weft_slim_mutex_deinitialize(&scheduler->park_mutex);
  weft_block_pool_deinitialize(&scheduler->block_pool);
  weft_block_pool_deinitialize(&scheduler->spill_pool);
}

//===----------------------------------------------------------------------===//
// Records
//===----------------------------------------------------------------------===//

weft_status_t weft_queue_scheduler_acquire_empty(
    weft_queue_scheduler_t* scheduler, weft_scheduled_op_t** out_op) {
  weft_status_t status = WEFT_OK;
  weft_slim_mutex_lock(&scheduler->cache_mutex);
  weft_mpsc_entry_t* entry = scheduler->cache;
  // Only the holder of |cache_mutex| pops |recycled|: one consumer. A load
  // first: an empty list is not worth an exchange on a line retirers write.
  if (!entry && !weft_mpsc_list_is_empty(&scheduler->recycled)) {
    entry = weft_mpsc_list_pop_all(&scheduler->recycled);
  }
  if (entry) scheduler->cache = entry->next;
  weft_slim_mutex_unlock(&scheduler->cache_mutex);

  weft_scheduled_op_t* op = NULL;
  weft_arena_block_t* block = NULL;
  if (entry) {
    op = weft_container_of(entry, weft_scheduled_op_t, entry);
  } else {
    status = weft_block_pool_acquire(&scheduler->block_pool, &block);
    if (weft_status_is_ok(status)) {
      uint8_t* data = (uint8_t*)weft_arena_block_data(block);
      op = (weft_scheduled_op_t*)(data + scheduler->driver_size);
      memset(op, 0, sizeof(*op));
      op->block = block;
      op->scheduler = scheduler;
      weft_arena_initialize(&scheduler->spill_pool, &op->arena);
      atomic_init(&op->park_state, WEFT_SCHEDULED_OP_IDLE);
      // Release: a walker that loads the new head sees the record whole.
      weft_slim_mutex_lock(&scheduler->cache_mutex);
      op->all_next =
          weft_atomic_load(&scheduler->all_head, memory_order_relaxed);
      weft_atomic_store(&scheduler->all_head, op, memory_order_release);
      weft_slim_mutex_unlock(&scheduler->cache_mutex);
    } else {
      status = weft_status_annotate(status, "allocating an operation record");
    }
  }
  if (op) {
    // Everything up to the scheduler's own fields (which stay).
    const size_t reset_size = offsetof(weft_scheduled_op_t, scheduler);
    memset(op, 0, reset_size);
    op->inline_used = 0;
    op->wait_set = NULL;
    op->tracked_prev = op->tracked_next = op->swept_next = NULL;
    op->driver = (uint8_t*)op - scheduler->driver_size;
    memset(op->driver, 0, scheduler->driver_size);
    // Relaxed: no op is taken once shutdown started, so shutdown reads a
    // settled count.
    weft_atomic_fetch_add(&scheduler->taken_count, 1, memory_order_relaxed);
  }
  *out_op = op;
  return status;
}

// Pushes |op| on the recycled list and counts it retired.
static void weft_queue_scheduler_recycle(weft_scheduled_op_t* op) {
  weft_queue_scheduler_t* scheduler = op->scheduler;
  weft_arena_reset(&op->arena);
  weft_mpsc_list_push(&scheduler->recycled, &op->entry);
  // Seq_cst: the shutdown handshake (the retirer's increment then its load
  // of shutting_down, against the sweep's store then its loads of the
  // counts).
  weft_atomic_fetch_add(&scheduler->retired_count, 1, memory_order_seq_cst);
  if (weft_queue_scheduler_is_shutting_down(scheduler)) {
    weft_notification_notify(&scheduler->idle_notification, INT32_MAX);
  }
}

void weft_queue_scheduler_discard(weft_scheduled_op_t* op) {
  if (op) weft_queue_scheduler_recycle(op);
}

weft_status_t weft_scheduled_op_allocate(weft_scheduled_op_t* op,
                                         size_t byte_length, void** out_ptr) {
  const size_t aligned_length = weft_align16(byte_length);
  if (byte_length == 0) {
    *out_ptr = NULL;
    return WEFT_OK;
  }
  if (aligned_length >= byte_length &&
      aligned_length <= WEFT_QUEUE_SCHEDULER_INLINE_STORAGE - op->inline_used) {
    uint8_t* ptr =
        (uint8_t*)op + WEFT_QUEUE_SCHEDULER_HEADER_SIZE + op->inline_used;
    op->inline_used += aligned_length;
    memset(ptr, 0, byte_length);
    *out_ptr = ptr;
    return WEFT_OK;
  }
  return weft_arena_allocate(&op->arena, byte_length, out_ptr);
}

weft_status_t weft_scheduled_op_capture(weft_scheduled_op_t* op,
                                        const weft_queue_op_t* source,
                                        weft_queue_op_capture_flags_t flags,
                                        bool park) {
  size_t capture_size = 0;
  weft_status_t status = weft_queue_op_capture_size(source, flags,
                                                    &capture_size);
  const size_t wait_set_size =
      park ? weft_wait_set_storage_size(source->wait_list.count) : 0;
  uint8_t* storage = NULL;
  if (weft_status_is_ok(status) &&
      weft_align16(capture_size) > SIZE_MAX - wait_set_size) {
    status = WEFT_STATUS(RESOURCE_EXHAUSTED,
                         "the operation's record needs more than SIZE_MAX "
                         "bytes");
  }
  if (weft_status_is_ok(status)) {
    status = weft_scheduled_op_allocate(
        op, weft_align16(capture_size) + wait_set_size, (void**)&storage);
  }
  if (weft_status_is_ok(status)) {
    // |storage| is NULL only when there is nothing to copy.
    weft_queue_op_capture(source, flags, storage, &op->base);
    op->wait_set =
        park ? (weft_wait_set_t*)(storage + weft_align16(capture_size))
             : NULL;
  } else {
    // Nothing was retained.
    op->base.kind = source->kind;
    status = weft_status_annotate(status, "while queueing %s",
                                  weft_queue_op_kind_name(source->kind));
  }
  return status;
}

weft_status_t weft_queue_scheduler_acquire(weft_queue_scheduler_t* scheduler,
                                           const weft_queue_op_t* source,
                                           weft_queue_op_capture_flags_t flags,
                                           bool park,
                                           weft_scheduled_op_t** out_op) {
  weft_scheduled_op_t* op = NULL;
  weft_status_t status = weft_queue_scheduler_acquire_empty(scheduler, &op);
  if (weft_status_is_ok(status)) {
    status = weft_scheduled_op_capture(op, source, flags, park);
    if (!weft_status_is_ok(status)) {
      weft_queue_scheduler_discard(op);
      op = NULL;
    }
  }
  *out_op = op;
  return status;
}

void weft_queue_scheduler_retire(weft_scheduled_op_t* op) {
  if (weft_atomic_load(&op->park_state, memory_order_relaxed) !=
      WEFT_SCHEDULED_OP_IDLE) {
    // A walker that saw it parked reads its capture under the park mutex:
    // it leaves the state under the mutex, before the capture is released.
    // Only retirers of parked ops take it here; submitters never do.
    weft_queue_scheduler_t* scheduler = op->scheduler;
    weft_slim_mutex_lock(&scheduler->park_mutex);
    weft_atomic_store(&op->park_state, WEFT_SCHEDULED_OP_IDLE,
                      memory_order_relaxed);
    weft_slim_mutex_unlock(&scheduler->park_mutex);
  }
  weft_status_free(op->wait_status);
  op->wait_status = WEFT_OK;
  weft_queue_op_release(&op->base);
  weft_queue_scheduler_recycle(op);
}

//===----------------------------------------------------------------------===//
// Parking
//===----------------------------------------------------------------------===//

// The scheduler whose release sweep this thread is running: a callback it
// causes (inside a cancel, under the park mutex) queues the op for the
// sweep instead of handing it on there.
static _Thread_local weft_queue_scheduler_t* weft_queue_scheduler_sweeping;
static _Thread_local weft_scheduled_op_t* weft_queue_scheduler_swept_head;

// The wait set's ready function.
static void weft_queue_scheduler_op_ready(void* user_data,
                                          weft_status_t status) {
  weft_scheduled_op_t* op = (weft_scheduled_op_t*)user_data;
  weft_queue_scheduler_t* scheduler = op->scheduler;
  op->wait_status = status;
  // Walkers skip it from now on; it stays out of IDLE until its retire
  // (which synchronises with them through the park mutex).
  weft_atomic_store(&op->park_state, WEFT_SCHEDULED_OP_READIED,
                    memory_order_relaxed);
  if (weft_queue_scheduler_sweeping == scheduler) {
    // The sweep's own cancel, on this thread under the park mutex: the
    // sweep hands it on once it lets go. Its CANCELLED names the op.
    op->swept = true;
    op->swept_next = weft_queue_scheduler_swept_head;
    weft_queue_scheduler_swept_head = op;
    return;
  }
  // The op is live until the driver retires it, which keeps a device's
  // idle wait from passing: nothing here touches the scheduler after the
  // op is handed on.
  weft_queue_scheduler_ready_fn_t ready_fn = scheduler->ready_fn;
  void* ready_user_data = scheduler->ready_user_data;
  ready_fn(ready_user_data, op);
}

void weft_queue_scheduler_park(weft_scheduled_op_t* op,
                               uint64_t native_waits) {
  op->submit_time = weft_time_now();
  // Release: a walker that sees PARKED (under the park mutex) reads the
  // capture written before it.
  weft_atomic_store(&op->park_state, WEFT_SCHEDULED_OP_PARKED,
                    memory_order_release);
  // From here on |op| belongs to the wait set: it may already have gone to
  // the ready function (and retired) when this returns.
  weft_wait_set_start_issued(op->wait_set, WEFT_WAIT_MODE_ALL,
                             op->base.wait_list, native_waits,
                             WEFT_TIME_INFINITE_FUTURE,
                             weft_queue_scheduler_op_ready, op);
}

//===----------------------------------------------------------------------===//
// Release and idle
//===----------------------------------------------------------------------===//

bool weft_queue_scheduler_is_shutting_down(weft_queue_scheduler_t* scheduler) {
  return weft_atomic_load(&scheduler->shutting_down, memory_order_seq_cst) !=
         0;
}

void weft_queue_scheduler_cancel_parked(weft_queue_scheduler_t* scheduler) {
  weft_atomic_store(&scheduler->shutting_down, 1u, memory_order_seq_cst);
  weft_queue_scheduler_t* previous_sweeping = weft_queue_scheduler_sweeping;
  weft_scheduled_op_t* previous_swept = weft_queue_scheduler_swept_head;
  weft_queue_scheduler_sweeping = scheduler;
  weft_queue_scheduler_swept_head = NULL;
  // No op is taken any more (the device's last reference is gone), so the
  // walk sees every record; none retires while the mutex is held if it
  // is parked, so its wait set stays valid through the cancel.
  weft_slim_mutex_lock(&scheduler->park_mutex);
  for (weft_scheduled_op_t* op =
           weft_atomic_load(&scheduler->all_head, memory_order_acquire);
       op; op = op->all_next) {
    if (weft_atomic_load(&op->park_state, memory_order_acquire) !=
        WEFT_SCHEDULED_OP_PARKED) {
      continue;
    }
    // Finishes the set here (its callback queues the op on this thread)
    // unless a wait is resolving it right now on another thread, which
    // then hands the op on itself.
    weft_wait_set_cancel(op->wait_set,
                         weft_queue_op_cancelled(&op->base,
                                                 /*while_waiting=*/true));
  }
  weft_scheduled_op_t* swept = weft_queue_scheduler_swept_head;
  weft_slim_mutex_unlock(&scheduler->park_mutex);
  weft_queue_scheduler_sweeping = previous_sweeping;
  weft_queue_scheduler_swept_head = previous_swept;
  // Oldest first would be nicer to read but any order is correct (the
  // failure order holds whatever the order of the failures).
  while (swept) {
    weft_scheduled_op_t* next = swept->swept_next;
    scheduler->ready_fn(scheduler->ready_user_data, swept);
    swept = next;
  }
}

bool weft_queue_scheduler_is_idle(weft_queue_scheduler_t* scheduler) {
  // Retired before taken: a count read later can only be larger, so a
  // retirement racing with these loads reads as "not idle", never the
  // reverse.
  const uint64_t retired =
      weft_atomic_load(&scheduler->retired_count, memory_order_seq_cst);
  const uint64_t taken =
      weft_atomic_load(&scheduler->taken_count, memory_order_seq_cst);
  return taken == retired;
}

int64_t weft_queue_scheduler_live_count(weft_queue_scheduler_t* scheduler) {
  const uint64_t retired =
      weft_atomic_load(&scheduler->retired_count, memory_order_relaxed);
  const uint64_t taken =
      weft_atomic_load(&scheduler->taken_count, memory_order_relaxed);
  return (int64_t)(taken - retired);
}

void weft_queue_scheduler_wait_idle(weft_queue_scheduler_t* scheduler) {
  const weft_wait_policy_t policy = weft_wait_policy_default();
  for (;;) {
    if (weft_queue_scheduler_is_idle(scheduler)) break;
    weft_wait_token_t token =
        weft_notification_prepare_wait(&scheduler->idle_notification);
    if (weft_queue_scheduler_is_idle(scheduler)) {
      weft_notification_cancel_wait(&scheduler->idle_notification);
      break;
    }
    weft_notification_commit_wait(&scheduler->idle_notification, token,
                                  policy, WEFT_TIME_INFINITE_FUTURE);
  }
}

void weft_queue_scheduler_track(weft_scheduled_op_t* op, const char* state,
                                weft_scheduled_op_describe_fn_t describe) {
  weft_queue_scheduler_t* scheduler = op->scheduler;
  op->submit_time = weft_time_now();
  weft_slim_mutex_lock(&scheduler->park_mutex);
  op->tracked_state = state;
  op->tracked_describe = describe;
  op->tracked_next = NULL;
  op->tracked_prev = scheduler->tracked_tail;
  if (scheduler->tracked_tail) {
    scheduler->tracked_tail->tracked_next = op;
  } else {
    scheduler->tracked_head = op;
  }
  scheduler->tracked_tail = op;
  weft_slim_mutex_unlock(&scheduler->park_mutex);
}

void weft_queue_scheduler_untrack(weft_scheduled_op_t* op) {
  weft_queue_scheduler_t* scheduler = op->scheduler;
  weft_slim_mutex_lock(&scheduler->park_mutex);
  if (op->tracked_prev) {
    op->tracked_prev->tracked_next = op->tracked_next;
  } else {
    scheduler->tracked_head = op->tracked_next;
  }
  if (op->tracked_next) {
    op->tracked_next->tracked_prev = op->tracked_prev;
  } else {
    scheduler->tracked_tail = op->tracked_prev;
  }
  op->tracked_prev = op->tracked_next = NULL;
  weft_slim_mutex_unlock(&scheduler->park_mutex);
}

uint64_t weft_queue_scheduler_for_each_pending(
    weft_queue_scheduler_t* scheduler, weft_pending_op_visit_fn_t visit,
    void* user_data) {
  // Lock order: the park mutex, then each semaphore's (the visitor names
  // them).
  uint64_t count = 0;
  weft_slim_mutex_lock(&scheduler->park_mutex);
  for (weft_scheduled_op_t* op =
           weft_atomic_load(&scheduler->all_head, memory_order_acquire);
       op; op = op->all_next) {
    if (weft_atomic_load(&op->park_state, memory_order_acquire) !=
        WEFT_SCHEDULED_OP_PARKED) {
      continue;
    }
    const weft_pending_op_t pending =
        weft_pending_op_for(&op->base, "waiting", op->submit_time);
    visit(user_data, &pending);
    ++count;
  }
  for (weft_scheduled_op_t* op = scheduler->tracked_head; op;
       op = op->tracked_next) {
    weft_pending_op_t pending =
        weft_pending_op_for(&op->base, op->tracked_state, op->submit_time);
    char detail[160];
    if (op->tracked_describe) {
      op->tracked_describe(op, detail, sizeof(detail));
      pending.detail = detail;
    }
    pending.wait_list = weft_semaphore_list_empty();
    visit(user_data, &pending);
    ++count;
  }
  weft_slim_mutex_unlock(&scheduler->park_mutex);
  return count;
}

weft_status_t weft_scheduled_op_not_run(weft_scheduled_op_t* op) {
  weft_status_t wait_status = op->wait_status;
  op->wait_status = WEFT_OK;
  return weft_queue_op_not_run(&op->base, wait_status, op->swept);
}

void weft_scheduled_op_end_not_run(weft_scheduled_op_t* op) {
  weft_queue_trace_signal(op->trace_id, false);
  weft_queue_op_signal_or_fail(&op->base, weft_scheduled_op_not_run(op));
}

void weft_scheduled_op_run_outermost(weft_scheduled_op_trampoline_t* trampoline,
                                     weft_scheduled_op_t* op,
                                     void (*run)(weft_scheduled_op_t* op)) {
  op->deferred_run = run;
  op->entry.next = NULL;
  if (trampoline->tail) {
    trampoline->tail->entry.next = &op->entry;
  } else {
    trampoline->head = op;
  }
  trampoline->tail = op;
  // A call further up this stack reaches |op| in its loop.
  if (trampoline->running) return;
  trampoline->running = true;
  while (trampoline->head) {
    weft_scheduled_op_t* next = trampoline->head;
    trampoline->head =
        next->entry.next
            ? weft_container_of(next->entry.next, weft_scheduled_op_t, entry)
            : NULL;
    if (!trampoline->head) trampoline->tail = NULL;
    next->entry.next = NULL;
    next->deferred_run(next);
  }
  trampoline->running = false;
}
