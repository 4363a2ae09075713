// weft: timeline semaphores and timepoints.
//
// State: the payload and a "failed" flag are atomics so queries and the
// predicate checks of host waits never take the lock; both are only written
// under |mutex|, which also guards the timepoint list and the debug name. The
// failure status is written once, before |failed| is published, and never
// changes afterwards, so readers that saw |failed| may clone it without the
// lock.
//
// Timepoints are kept in two doubly linked lists sorted by value (ties in
// registration order): plain ones, and issued ones (which also fire when a
// native waiter may go, weft_semaphore_advance_issued). A signal detaches
// the reached prefix of both under the lock and fires them outside; an
// advance of the issued value detaches a prefix of the second; a failure
// detaches everything. A timepoint is "registered"
// exactly while its |semaphore| field points at the semaphore, and that field
// is only written under the lock, which is how cancel tells a registered
// timepoint from one that fired or is firing.
#include <stdalign.h>
#include "weft/semaphore.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/arguments.h"
#include "base/atomics.h"
#include "base/mutex.h"
#include "base/notification.h"
#include "base/thread.h"
#include "base/trace.h"
#include "base/wait_assist.h"
#include "base/wait_policy.h"
#include "hal/diagnostics.h"
#include "hal/resource.h"
#include "hal/semaphore_impl.h"
#include "hal/wait_set.h"

// List waits up to this many entries keep their timepoints on the stack.
#define WEFT_SEMAPHORE_LIST_WAIT_INLINE_COUNT 8

static void weft_semaphore_destroy(weft_semaphore_t* semaphore);

// Orders every failure of the process (failure_sequence).
static weft_atomic_uint64_t weft_semaphore_failure_counter;

// The host timeline semaphore's own vtable: its payload is the base's
// value, so every payload entry is NULL (semaphore_impl.h).
static const weft_semaphore_vtable_t kWeftHostSemaphoreVtable = {
    .destroy = weft_semaphore_destroy,
};

_Static_assert(offsetof(weft_semaphore_t, resource) == 0,
               "weft_semaphore_t must start with its weft_resource_t");
// Every call reads the vtable; retain and release write the resource's
// reference count (semaphore_impl.h): keep them on different lines.
_Static_assert(offsetof(weft_semaphore_t, vtable) / 64 !=
                   offsetof(weft_semaphore_t, resource.ref_count) / 64,
               "the semaphore's vtable copy must not share the reference "
               "count's cache line");

//===----------------------------------------------------------------------===//
// Lifetime and names
//===----------------------------------------------------------------------===//

void weft_semaphore_initialize(const weft_semaphore_vtable_t* vtable,
                               weft_allocator_t allocator,
                               uint64_t initial_value,
                               weft_semaphore_t* out_semaphore) {
  weft_resource_initialize(WEFT_RESOURCE_TYPE_SEMAPHORE, vtable,
                           &out_semaphore->resource);
  out_semaphore->vtable = vtable;
  out_semaphore->allocator = allocator;
  weft_slim_mutex_initialize(&out_semaphore->mutex);
  atomic_init(&out_semaphore->current_value, initial_value);
  atomic_init(&out_semaphore->failed, 0u);
  out_semaphore->failure_status = WEFT_OK;
  for (int list = 0; list < 2; ++list) {
    out_semaphore->timepoint_head[list] = NULL;
    out_semaphore->timepoint_tail[list] = NULL;
  }
  out_semaphore->issued_value = initial_value;
  weft_notification_initialize(&out_semaphore->notification);
  out_semaphore->wait_policy = weft_wait_policy_default();
  out_semaphore->name_inline[0] = '\0';
  out_semaphore->name = out_semaphore->name_inline;
}

weft_status_t weft_semaphore_create(weft_allocator_t allocator,
                                    uint64_t initial_value,
                                    weft_semaphore_t** out_semaphore) {
  weft_semaphore_t* semaphore = NULL;
  weft_status_t status = weft_arguments_require(
      __func__, "out_semaphore", (const void* const[]){out_semaphore}, 1);
  if (weft_status_is_ok(status)) {
    *out_semaphore = NULL;
    status = weft_allocator_malloc_aligned(allocator, sizeof(*semaphore),
                                           alignof(weft_semaphore_t),
                                           (void**)&semaphore);
  }
  if (weft_status_is_ok(status)) {
    weft_semaphore_initialize(&kWeftHostSemaphoreVtable, allocator,
                              initial_value, semaphore);
    *out_semaphore = semaphore;
  }
  return status;
}

static void weft_semaphore_free_name(weft_semaphore_t* semaphore) {
  if (semaphore->name != semaphore->name_inline) {
    weft_allocator_free(semaphore->allocator, semaphore->name);
  }
  semaphore->name = semaphore->name_inline;
  semaphore->name_inline[0] = '\0';
}

void weft_semaphore_deinitialize(weft_semaphore_t* semaphore) {
  // The last reference is gone, so no other thread can touch the semaphore:
  // no lock is needed. Timepoints still registered fire with CANCELLED.
  for (int list = 0; list < 2; ++list) {
    weft_timepoint_t* timepoint = semaphore->timepoint_head[list];
    semaphore->timepoint_head[list] = NULL;
    semaphore->timepoint_tail[list] = NULL;
    while (timepoint) {
      weft_timepoint_t* next = timepoint->next;
      uint64_t value = timepoint->value;
      timepoint->semaphore = NULL;
      timepoint->next = NULL;
      timepoint->prev = NULL;
      timepoint->fn(
          timepoint->user_data, timepoint,
          WEFT_STATUS(CANCELLED,
                      "semaphore '%s' was destroyed before it reached "
                      "%" PRIu64 " (a timepoint was still registered)",
                      semaphore->name, value));
      timepoint = next;
    }
  }
  weft_status_free(semaphore->failure_status);
  weft_notification_deinitialize(&semaphore->notification);
  weft_slim_mutex_deinitialize(&semaphore->mutex);
  weft_semaphore_free_name(semaphore);
}

static void weft_semaphore_destroy(weft_semaphore_t* semaphore) {
  weft_semaphore_deinitialize(semaphore);
  weft_allocator_free_aligned(semaphore->allocator, semaphore);
}

void weft_semaphore_retain(weft_semaphore_t* semaphore) {
  weft_resource_retain(semaphore);
}

void weft_semaphore_release(weft_semaphore_t* semaphore) {
  weft_resource_release(semaphore);
}

void weft_semaphore_set_name(weft_semaphore_t* semaphore, const char* name) {
  if (!semaphore) return;
  size_t length = name ? strlen(name) : 0;
  char* storage = semaphore->name_inline;
  char* allocation = NULL;
  if (length + 1 > sizeof(semaphore->name_inline)) {
    weft_status_t status =
        weft_allocator_malloc(semaphore->allocator, length + 1,
                              (void**)&allocation);
    if (weft_status_is_ok(status)) {
      storage = allocation;
    } else {
      // A debug name is not worth failing for: keep a truncated one.
      weft_status_ignore(status);
      length = sizeof(semaphore->name_inline) - 1;
    }
  }
  weft_slim_mutex_lock(&semaphore->mutex);
  weft_semaphore_free_name(semaphore);
  if (length) memcpy(storage, name, length);
  storage[length] = '\0';
  semaphore->name = storage;
  weft_slim_mutex_unlock(&semaphore->mutex);
}

const char* weft_semaphore_name(const weft_semaphore_t* semaphore) {
  return semaphore ? semaphore->name : "";
}

// Copies "'name'" (or the address when unnamed) into |buffer| for messages.
// Must be called with |semaphore->mutex| held.
static void weft_semaphore_format_label_locked(weft_semaphore_t* semaphore,
                                               char* buffer,
                                               size_t capacity) {
  if (semaphore->name[0]) {
    snprintf(buffer, capacity, "'%s'", semaphore->name);
  } else {
    snprintf(buffer, capacity, "%p", (void*)semaphore);
  }
}

void weft_semaphore_label(weft_semaphore_t* semaphore, char* buffer,
                          size_t capacity) {
  weft_slim_mutex_lock(&semaphore->mutex);
  weft_semaphore_format_label_locked(semaphore, buffer, capacity);
  weft_slim_mutex_unlock(&semaphore->mutex);
}

//===----------------------------------------------------------------------===//
// Lock-free state reads
//===----------------------------------------------------------------------===//

static inline uint64_t weft_semaphore_load_value(weft_semaphore_t* semaphore) {
  // Acquire: pairs with the signaller's release so whatever was written
  // before the signal is visible to whoever observes the value.
  return weft_atomic_load(&semaphore->current_value, memory_order_acquire);
}

static inline bool weft_semaphore_has_failed(weft_semaphore_t* semaphore) {
  // Acquire: pairs with the release in fail so |failure_status| is visible.
  return weft_atomic_load(&semaphore->failed, memory_order_acquire) != 0;
}

void weft_semaphore_snapshot(weft_semaphore_t* semaphore, char* label,
                             size_t label_capacity, uint64_t* out_value,
                             bool* out_failed) {
  weft_slim_mutex_lock(&semaphore->mutex);
  weft_semaphore_format_label_locked(semaphore, label, label_capacity);
  weft_slim_mutex_unlock(&semaphore->mutex);
  *out_failed = weft_semaphore_has_failed(semaphore);
  *out_value = weft_semaphore_load_value(semaphore);
}

// Returns a clone of the failure annotated with what was being waited for.
// Only valid once weft_semaphore_has_failed returned true.
static weft_status_t weft_semaphore_wait_failure(weft_semaphore_t* semaphore,
                                                 uint64_t value) {
  char label[WEFT_SEMAPHORE_LABEL_CAPACITY];
  weft_semaphore_label(semaphore, label, sizeof(label));
  return weft_status_annotate(weft_status_clone(semaphore->failure_status),
                              "while waiting for semaphore %s to reach "
                              "%" PRIu64,
                              label, value);
}

//===----------------------------------------------------------------------===//
// Query, signal, fail
//===----------------------------------------------------------------------===//

weft_status_t weft_semaphore_query(weft_semaphore_t* semaphore,
                                   uint64_t* out_value) {
  if (out_value) *out_value = 0;
  weft_status_t status =
      weft_arguments_require(__func__, "semaphore,out_value",
                             (const void* const[]){semaphore, out_value}, 2);
  if (weft_status_is_ok(status)) {
    const weft_semaphore_vtable_t* vtable = weft_semaphore_vtable(semaphore);
    *out_value = vtable->query ? vtable->query(semaphore)
                               : weft_semaphore_load_value(semaphore);
    if (weft_semaphore_has_failed(semaphore)) {
      status = weft_status_clone(semaphore->failure_status);
    }
  }
  return status;
}

// When the work behind this thread's signals ended, where its driver
// knows (weft_semaphore_set_signal_time); 0 otherwise.
static _Thread_local weft_time_t weft_semaphore_signal_time;

void weft_semaphore_set_signal_time(weft_time_t time) {
  weft_semaphore_signal_time = time;
}

// Fires a detached chain of timepoints (linked through |next|) with OK.
static void weft_semaphore_fire_reached(weft_timepoint_t* timepoint) {
  const weft_time_t reached_at = weft_semaphore_signal_time;
  while (timepoint) {
    // The callback may free or reuse the timepoint: read |next| first.
    weft_timepoint_t* next = timepoint->next;
    timepoint->next = NULL;
    timepoint->reached_at = reached_at;
    timepoint->fn(timepoint->user_data, timepoint, WEFT_OK);
    timepoint = next;
  }
}

// Detaches the prefix of list |list| at or below |value| and returns it
// (linked through |next|), each marked firing. Called with the lock held.
static weft_timepoint_t* weft_semaphore_detach_prefix_locked(
    weft_semaphore_t* semaphore, int list, uint64_t value) {
  weft_timepoint_t* timepoint = semaphore->timepoint_head[list];
  weft_timepoint_t* last_reached = NULL;
  while (timepoint && timepoint->value <= value) {
    timepoint->semaphore = NULL;  // now firing: cancel returns false
    last_reached = timepoint;
    timepoint = timepoint->next;
  }
  if (!last_reached) return NULL;
  weft_timepoint_t* reached = semaphore->timepoint_head[list];
  last_reached->next = NULL;
  semaphore->timepoint_head[list] = timepoint;
  if (timepoint) {
    timepoint->prev = NULL;
  } else {
    semaphore->timepoint_tail[list] = NULL;
  }
  return reached;
}

void weft_semaphore_advance_issued(weft_semaphore_t* semaphore,
                                   uint64_t value) {
  weft_timepoint_t* issued = NULL;
  weft_slim_mutex_lock(&semaphore->mutex);
  if (value > semaphore->issued_value &&
      !weft_atomic_load(&semaphore->failed, memory_order_relaxed)) {
    semaphore->issued_value = value;
    issued = weft_semaphore_detach_prefix_locked(semaphore, 1, value);
  }
  weft_slim_mutex_unlock(&semaphore->mutex);
  weft_semaphore_fire_reached(issued);
}

// Detaches the timepoints a move to |value| reaches, plain ones first, as
// one chain (lock held). Out of line: most signals reach none.
static weft_timepoint_t* weft_semaphore_detach_reached_locked(
    weft_semaphore_t* semaphore, uint64_t value) {
  weft_timepoint_t* reached =
      semaphore->timepoint_head[0]
          ? weft_semaphore_detach_prefix_locked(semaphore, 0, value)
          : NULL;
  weft_timepoint_t* issued =
      semaphore->timepoint_head[1]
          ? weft_semaphore_detach_prefix_locked(semaphore, 1, value)
          : NULL;
  if (issued) {
    // One chain: the issued ones after the plain ones.
    weft_timepoint_t* last = reached;
    while (last && last->next) last = last->next;
    if (last) {
      last->next = issued;
    } else {
      reached = issued;
    }
  }
  return reached;
}

// Moves the value to |value| (ahead of it; lock held) and detaches the
// timepoints that reaches, returned as one chain for
// weft_semaphore_fire_moved.
static inline weft_timepoint_t* weft_semaphore_advance_locked(
    weft_semaphore_t* semaphore, uint64_t value) {
  // Release: publishes everything the signaller wrote before the signal to
  // lock-free readers of the value (queries and host waits).
  weft_atomic_store(&semaphore->current_value, value, memory_order_release);
  if (semaphore->issued_value < value) semaphore->issued_value = value;
  if (!semaphore->timepoint_head[0] && !semaphore->timepoint_head[1]) {
    return NULL;
  }
  return weft_semaphore_detach_reached_locked(semaphore, value);
}

// Tells everyone about a move to |value|: the trace, host waiters, and the
// timepoints it reached (outside the lock).
static void weft_semaphore_fire_moved(weft_semaphore_t* semaphore,
                                      uint64_t value,
                                      weft_timepoint_t* reached) {
  WEFT_TRACE_INSTANT(WEFT_TRACE_CATEGORY_SEMAPHORE, "semaphore signal",
                     (uint64_t)(uintptr_t)semaphore, value);
  weft_notification_notify(&semaphore->notification, INT32_MAX);
  weft_semaphore_fire_reached(reached);
}

void weft_semaphore_publish_value(weft_semaphore_t* semaphore,
                                  uint64_t value) {
  weft_timepoint_t* reached = NULL;
  bool moved = false;
  weft_slim_mutex_lock(&semaphore->mutex);
  if (!weft_atomic_load(&semaphore->failed, memory_order_relaxed) &&
      value > weft_atomic_load(&semaphore->current_value,
                               memory_order_relaxed)) {
    reached = weft_semaphore_advance_locked(semaphore, value);
    moved = true;
  }
  weft_slim_mutex_unlock(&semaphore->mutex);
  if (moved) weft_semaphore_fire_moved(semaphore, value, reached);
}

// The error of a signal the base refuses (the semaphore failed, or |value|
// is not ahead of it). Out of line: the error path. Called with the lock
// held.
static weft_status_t weft_semaphore_signal_refused_locked(
    weft_semaphore_t* semaphore, uint64_t value, uint64_t current_value) {
  char label[WEFT_SEMAPHORE_LABEL_CAPACITY];
  weft_semaphore_format_label_locked(semaphore, label, sizeof(label));
  if (weft_atomic_load(&semaphore->failed, memory_order_relaxed)) {
    return weft_status_annotate(
        weft_status_clone(semaphore->failure_status),
        "while signalling semaphore %s to %" PRIu64 " (it has failed)", label,
        value);
  }
  return WEFT_STATUS(INVALID_ARGUMENT,
                     "semaphore %s: signal to %" PRIu64
                     " but already at %" PRIu64,
                     label, value, current_value);
}

weft_status_t weft_semaphore_signal_unchecked(
    weft_semaphore_t* semaphore, uint64_t value) {
  const weft_semaphore_vtable_t* vtable = weft_semaphore_vtable(semaphore);
  weft_status_t status = WEFT_OK;
  weft_timepoint_t* reached = NULL;
  weft_slim_mutex_lock(&semaphore->mutex);
  const uint64_t current_value =
      weft_atomic_load(&semaphore->current_value, memory_order_relaxed);
  if (weft_atomic_load(&semaphore->failed, memory_order_relaxed) ||
      value <= current_value) {
    status =
        weft_semaphore_signal_refused_locked(semaphore, value, current_value);
  } else if (!vtable->signal) {
    reached = weft_semaphore_advance_locked(semaphore, value);
  }
  weft_slim_mutex_unlock(&semaphore->mutex);
  if (!weft_status_is_ok(status)) return status;
  if (vtable->signal) {
    // The payload moves, then publishes to the base.
    return vtable->signal(semaphore, value);
  }
  weft_semaphore_fire_moved(semaphore, value, reached);
  return WEFT_OK;
}

weft_status_t weft_semaphore_signal(weft_semaphore_t* semaphore,
                                    uint64_t value) {
  weft_status_t status = weft_arguments_require(
      __func__, "semaphore", (const void* const[]){semaphore}, 1);
  if (weft_status_is_ok(status)) {
    status = weft_semaphore_signal_unchecked(semaphore, value);
  }
  return status;
}

void weft_semaphore_fail(weft_semaphore_t* semaphore, weft_status_t status) {
  if (!semaphore) {
    // Nothing to fail; the status is consumed all the same.
    weft_status_free(status);
    return;
  }
  if (weft_status_is_ok(status)) {
    // Failing with OK is a caller bug; record it as one rather than ignoring.
    status = WEFT_STATUS(INTERNAL, "weft_semaphore_fail called with OK");
  }
  weft_timepoint_t* pending = NULL;
  bool first_failure = false;
  weft_slim_mutex_lock(&semaphore->mutex);
  if (!weft_atomic_load(&semaphore->failed, memory_order_relaxed)) {
    WEFT_TRACE_INSTANT(WEFT_TRACE_CATEGORY_SEMAPHORE, "semaphore fail",
                       (uint64_t)(uintptr_t)semaphore,
                       (uint64_t)weft_status_code(status));
    first_failure = true;
    semaphore->failure_status = status;
    semaphore->failure_sequence = weft_atomic_fetch_add(
        &weft_semaphore_failure_counter, 1, memory_order_relaxed);
    // Release: |failure_status| must be visible to whoever sees the flag.
    weft_atomic_store(&semaphore->failed, 1u, memory_order_release);
    pending = weft_semaphore_detach_prefix_locked(semaphore, 0, UINT64_MAX);
    weft_timepoint_t* issued =
        weft_semaphore_detach_prefix_locked(semaphore, 1, UINT64_MAX);
    if (issued) {
      weft_timepoint_t* last = pending;
      while (last && last->next) last = last->next;
      if (last) {
        last->next = issued;
      } else {
        pending = issued;
      }
    }
  }
  weft_slim_mutex_unlock(&semaphore->mutex);
  if (first_failure) {
    weft_notification_notify(&semaphore->notification, INT32_MAX);
    while (pending) {
      weft_timepoint_t* next = pending->next;
      pending->next = NULL;
      pending->prev = NULL;
      pending->fn(pending->user_data, pending,
                  weft_status_clone(semaphore->failure_status));
      pending = next;
    }
    // Then whatever waits on the payload where the host cannot reach it.
    const weft_semaphore_vtable_t* vtable = weft_semaphore_vtable(semaphore);
    if (vtable->fail) vtable->fail(semaphore);
  } else {
    // The first failure wins; this one is dropped.
    weft_status_free(status);
  }
}

//===----------------------------------------------------------------------===//
// Timepoints
//===----------------------------------------------------------------------===//

// Inserts |timepoint| keeping the list sorted by value. Searching from the
// tail makes the common case (increasing values) O(1).
static void weft_semaphore_insert_timepoint_locked(
    weft_semaphore_t* semaphore, weft_timepoint_t* timepoint) {
  const uint32_t list = timepoint->list;
  weft_timepoint_t* after = semaphore->timepoint_tail[list];
  while (after && after->value > timepoint->value) after = after->prev;
  timepoint->prev = after;
  timepoint->next = after ? after->next : semaphore->timepoint_head[list];
  if (timepoint->next) {
    timepoint->next->prev = timepoint;
  } else {
    semaphore->timepoint_tail[list] = timepoint;
  }
  if (after) {
    after->next = timepoint;
  } else {
    semaphore->timepoint_head[list] = timepoint;
  }
}

static void weft_semaphore_register_timepoint_in(weft_semaphore_t* semaphore,
                                                 uint64_t value,
                                                 uint32_t list,
                                                 weft_timepoint_t* timepoint);

void weft_semaphore_register_timepoint(weft_semaphore_t* semaphore,
                                       uint64_t value,
                                       weft_timepoint_t* timepoint) {
  weft_semaphore_register_timepoint_in(semaphore, value, 0, timepoint);
}

void weft_semaphore_register_issued_timepoint(weft_semaphore_t* semaphore,
                                              uint64_t value,
                                              weft_timepoint_t* timepoint) {
  weft_semaphore_register_timepoint_in(semaphore, value, 1, timepoint);
}

static void weft_semaphore_register_timepoint_in(weft_semaphore_t* semaphore,
                                                 uint64_t value,
                                                 uint32_t list,
                                                 weft_timepoint_t* timepoint) {
  if (!timepoint || !timepoint->fn) return;
  if (!semaphore) {
    // The callback still fires exactly once, with the caller's mistake.
    timepoint->semaphore = NULL;
    timepoint->value = value;
    timepoint->next = NULL;
    timepoint->prev = NULL;
    timepoint->fn(timepoint->user_data, timepoint,
                  weft_arguments_null_error(__func__, "semaphore", 0));
    return;
  }
  weft_status_t fire_status = WEFT_OK;
  bool fire_now = false;
  timepoint->value = value;
  timepoint->next = NULL;
  timepoint->prev = NULL;
  timepoint->list = list;
  timepoint->reached_at = 0;  // reached before: when is not known
  weft_slim_mutex_lock(&semaphore->mutex);
  if (weft_atomic_load(&semaphore->failed, memory_order_relaxed)) {
    fire_now = true;
    fire_status = weft_status_clone(semaphore->failure_status);
    timepoint->semaphore = NULL;
  } else if (weft_atomic_load(&semaphore->current_value,
                              memory_order_relaxed) >= value ||
             (list == 1 && semaphore->issued_value >= value)) {
    fire_now = true;
    timepoint->semaphore = NULL;
  } else {
    timepoint->semaphore = semaphore;
    weft_semaphore_insert_timepoint_locked(semaphore, timepoint);
  }
  weft_slim_mutex_unlock(&semaphore->mutex);
  if (fire_now) timepoint->fn(timepoint->user_data, timepoint, fire_status);
}

bool weft_semaphore_cancel_timepoint(weft_semaphore_t* semaphore,
                                     weft_timepoint_t* timepoint) {
  if (!semaphore || !timepoint) return false;
  bool removed = false;
  weft_slim_mutex_lock(&semaphore->mutex);
  if (timepoint->semaphore == semaphore) {
    const uint32_t list = timepoint->list;
    if (timepoint->prev) {
      timepoint->prev->next = timepoint->next;
    } else {
      semaphore->timepoint_head[list] = timepoint->next;
    }
    if (timepoint->next) {
      timepoint->next->prev = timepoint->prev;
    } else {
      semaphore->timepoint_tail[list] = timepoint->prev;
    }
    timepoint->semaphore = NULL;
    timepoint->next = NULL;
    timepoint->prev = NULL;
    removed = true;
  }
  weft_slim_mutex_unlock(&semaphore->mutex);
  return removed;
}

//===----------------------------------------------------------------------===//
// Host waits
//===----------------------------------------------------------------------===//

// A blocking wait on several semaphores: a wait set (wait_set.h) whose ready
// function wakes the waiting thread. Lives on the waiting thread's stack.
typedef struct weft_list_waiter_t {
  weft_notification_t notification;
  // The set's result; written by the ready function before |ready|.
  weft_status_t result;
  // 1 once |result| is written (the waiter may stop sleeping).
  weft_atomic_uint32_t ready;
  // 1 once the ready function is done touching the waiter (the waiter may
  // return and its stack go away).
  weft_atomic_uint32_t released;
} weft_list_waiter_t;

static void weft_list_waiter_ready(void* user_data, weft_status_t status) {
  weft_list_waiter_t* waiter = (weft_list_waiter_t*)user_data;
  waiter->result = status;
  // Release: publishes |result| to the waiter's acquire load.
  weft_atomic_store(&waiter->ready, 1u, memory_order_release);
  weft_notification_notify(&waiter->notification, INT32_MAX);
  // Release: the last touch of the waiter.
  weft_atomic_store(&waiter->released, 1u, memory_order_release);
}

static bool weft_list_waiter_is_ready(weft_list_waiter_t* waiter) {
  // Acquire: pairs with the ready function's release.
  return weft_atomic_load(&waiter->ready, memory_order_acquire) != 0;
}

static uint32_t weft_semaphore_list_earliest_failure_where(
    weft_semaphore_list_t list, bool masked, uint64_t mask) {
  uint32_t earliest = UINT32_MAX;
  uint64_t earliest_sequence = UINT64_MAX;
  for (uint32_t i = 0; i < list.count; ++i) {
    if (masked && (i >= 64 || !(mask & (1ull << i)))) continue;
    weft_semaphore_t* semaphore = list.semaphores[i];
    // Acquire (has_failed): |failure_sequence| is written before the flag.
    if (weft_semaphore_has_failed(semaphore) &&
        semaphore->failure_sequence < earliest_sequence) {
      earliest = i;
      earliest_sequence = semaphore->failure_sequence;
    }
  }
  return earliest;
}

uint32_t weft_semaphore_list_earliest_failure(weft_semaphore_list_t list) {
  return weft_semaphore_list_earliest_failure_where(list, false, 0);
}

uint32_t weft_semaphore_list_earliest_failure_masked(weft_semaphore_list_t list,
                                                     uint64_t mask) {
  return weft_semaphore_list_earliest_failure_where(list, true, mask);
}

// Checks every entry without blocking. Sets *out_done and returns the
// result when the wait can be answered now (the earliest failure wins;
// otherwise all or any reached per |mode|).
static weft_status_t weft_semaphore_list_poll(weft_wait_mode_t mode,
                                              weft_semaphore_list_t list,
                                              bool* out_done) {
  uint32_t reached_count = 0;
  weft_status_t status = WEFT_OK;
  const uint32_t failed_index = weft_semaphore_list_earliest_failure(list);
  const bool failed = failed_index != UINT32_MAX;
  if (failed) {
    status = weft_semaphore_wait_failure(list.semaphores[failed_index],
                                         list.values[failed_index]);
  }
  for (uint32_t i = 0; i < list.count && !failed; ++i) {
    if (weft_semaphore_load_value(list.semaphores[i]) >= list.values[i]) {
      ++reached_count;
    }
  }
  *out_done = failed || (mode == WEFT_WAIT_MODE_ANY ? reached_count > 0
                                                    : reached_count ==
                                                          list.count);
  return status;
}

static weft_status_t weft_semaphore_list_timed_out(weft_wait_mode_t mode,
                                                   weft_semaphore_list_t list) {
  // Name the first entry still short of its value.
  uint32_t index = 0;
  uint64_t current_value = 0;
  for (uint32_t i = 0; i < list.count; ++i) {
    current_value = weft_semaphore_load_value(list.semaphores[i]);
    if (current_value < list.values[i]) {
      index = i;
      break;
    }
  }
  char label[WEFT_SEMAPHORE_LABEL_CAPACITY];
  weft_semaphore_label(list.semaphores[index], label, sizeof(label));
  if (list.count == 1) {
    return WEFT_STATUS(DEADLINE_EXCEEDED,
                       "semaphore %s: wait for %" PRIu64 " timed out at %" PRIu64,
                       label, list.values[0], current_value);
  }
  return WEFT_STATUS(DEADLINE_EXCEEDED,
                     "semaphore list wait (%s of %" PRIu32
                     ") timed out: semaphore %s is at %" PRIu64
                     ", waiting for %" PRIu64,
                     mode == WEFT_WAIT_MODE_ANY ? "ANY" : "ALL", list.count,
                     label, current_value, list.values[index]);
}

// Starts a wait set over |list| in |set_storage| and sleeps on the waiter's
// notification until the set finishes or |deadline| passes (then it is
// cancelled with the bare DEADLINE_EXCEEDED code, and the message is made
// here, for the caller).
static weft_status_t weft_semaphore_list_wait_slow(weft_wait_mode_t mode,
                                                   weft_semaphore_list_t list,
                                                   weft_time_t deadline,
                                                   bool spin,
                                                   weft_wait_set_t* set) {
  weft_list_waiter_t waiter;
  weft_notification_initialize(&waiter.notification);
  waiter.result = WEFT_OK;
  atomic_init(&waiter.ready, 0u);
  atomic_init(&waiter.released, 0u);
  weft_wait_set_start(set, mode, list, deadline, weft_list_waiter_ready,
                      &waiter);
  // Every semaphore of a process has the same policy: take the first's.
  weft_wait_policy_t policy = list.semaphores[0]->wait_policy;
  if (!spin) policy.spin_ns = 0;
  while (!weft_list_waiter_is_ready(&waiter)) {
    weft_wait_token_t token =
        weft_notification_prepare_wait(&waiter.notification);
    if (weft_list_waiter_is_ready(&waiter)) {
      weft_notification_cancel_wait(&waiter.notification);
      break;
    }
    if (!weft_notification_commit_wait(&waiter.notification, token, policy,
                                       deadline)) {
      // Timed out: finishes the set now (with its own result if it got
      // there first).
      weft_wait_set_check_deadline(set, weft_time_now());
      break;
    }
  }
  // Acquire: pairs with the ready function's last store. The window is a
  // ready function's last few instructions (one notify), so yield.
  while (weft_atomic_load(&waiter.released, memory_order_acquire) == 0) {
    weft_thread_yield();
  }
  weft_status_t status = waiter.result;
  if (status == weft_status_from_code(WEFT_STATUS_DEADLINE_EXCEEDED)) {
    status = weft_semaphore_list_timed_out(mode, list);
  }
  weft_notification_deinitialize(&waiter.notification);
  return status;
}

// While assistants are registered (src/base/wait_assist.h), a spinning host
// wait looks for work to run at least this often.
#define WEFT_SEMAPHORE_ASSIST_POLL_NS 1000

static weft_time_t weft_deadline_min(weft_time_t a, weft_time_t b) {
  return a < b ? a : b;
}

// Spins until |semaphore| reaches |value| or fails, or |until| passes;
// yields every 16 spins as the notification's spin does (a spinner must
// not keep a thread with work off its CPU).
static void weft_semaphore_spin_slice(weft_semaphore_t* semaphore,
                                      uint64_t value, weft_time_t until) {
  // New work for assisting hosts ends the slice too (wait_assist.h).
  const uint32_t generation = weft_wait_assist_generation();
  for (uint32_t i = 1; !weft_semaphore_has_failed(semaphore) &&
                       weft_semaphore_load_value(semaphore) < value &&
                       weft_wait_assist_generation() == generation;
       ++i) {
    weft_cpu_relax();
    if ((i & 15) == 0) {
      if (weft_time_now() >= until) break;
      weft_thread_yield();
    }
  }
}

// A single-semaphore host wait until |deadline|, without the watchdog.
// Spins on the semaphore's shared notification, which every signal bumps,
// then sleeps on a waiter of its own that a timepoint at |value| wakes: a
// thread waiting for the end of a long chain is not woken (a futex wake for
// the signaller, a context switch for it) by every step of the chain.
static weft_status_t weft_semaphore_wait_until(weft_semaphore_t* semaphore,
                                               uint64_t value,
                                               weft_time_t deadline) {
  const weft_wait_policy_t policy = semaphore->wait_policy;
  weft_time_t spin_end = WEFT_TIME_INFINITE_PAST;
  if (policy.spin_ns > 0 && deadline != WEFT_TIME_INFINITE_PAST) {
    spin_end = weft_time_now() + policy.spin_ns;
    if (spin_end > deadline) spin_end = deadline;
  }
  // A poll (deadline in the past) runs nothing.
  const bool may_assist = deadline != WEFT_TIME_INFINITE_PAST;
  // While assisting, this thread holds a CPU that executors count against
  // theirs (weft_wait_assist_begin_wait).
  bool counted = false;
  for (;;) {
    if (weft_semaphore_has_failed(semaphore)) {
      if (counted) weft_wait_assist_end_wait();
      return weft_semaphore_wait_failure(semaphore, value);
    }
    if (weft_semaphore_load_value(semaphore) >= value) {
      if (counted) weft_wait_assist_end_wait();
      return WEFT_OK;
    }
    // Work a CPU device wants a thread for is better than spinning beside
    // it or sleeping; having run some, or while the device is busy (the
    // next region may want this thread), the spin budget restarts.
    const bool assisting = may_assist && weft_wait_assist_available();
    if (assisting && !counted) {
      weft_wait_assist_begin_wait();
      counted = true;
    }
    weft_wait_assist_result_t assisted =
        assisting ? weft_wait_assist_run() : WEFT_WAIT_ASSIST_IDLE;
    if (assisted != WEFT_WAIT_ASSIST_IDLE) {
      weft_time_t now = weft_time_now();
      if (now >= deadline) break;
      if (policy.spin_ns > 0) {
        spin_end = weft_deadline_min(now + policy.spin_ns, deadline);
      }
      if (assisted == WEFT_WAIT_ASSIST_RAN) continue;
    }
    if (spin_end == WEFT_TIME_INFINITE_PAST) break;
    weft_time_t now = weft_time_now();
    if (now >= spin_end) break;
    if (assisting) {
      // Spinning with assistants about: watch the value for a slice, then
      // look for work again (no notification wait: a slice that ends in a
      // futex call costs a syscall here and a wake for the signaller).
      weft_semaphore_spin_slice(
          semaphore, value,
          weft_deadline_min(now + WEFT_SEMAPHORE_ASSIST_POLL_NS, spin_end));
      continue;
    }
    weft_wait_token_t token =
        weft_notification_prepare_wait(&semaphore->notification);
    if (weft_semaphore_has_failed(semaphore) ||
        weft_semaphore_load_value(semaphore) >= value) {
      weft_notification_cancel_wait(&semaphore->notification);
      continue;  // the loop head returns the result
    }
    // Spins (up to the policy's budget, bounded by |spin_end|); a sleep it
    // falls into ends at |spin_end|.
    weft_notification_commit_wait(&semaphore->notification, token, policy,
                                  spin_end);
  }
  if (counted) weft_wait_assist_end_wait();
  if (deadline == WEFT_TIME_INFINITE_PAST || weft_time_now() >= deadline) {
    char label[WEFT_SEMAPHORE_LABEL_CAPACITY];
    weft_semaphore_label(semaphore, label, sizeof(label));
    return WEFT_STATUS(DEADLINE_EXCEEDED,
                       "semaphore %s: wait for %" PRIu64 " timed out at %" PRIu64,
                       label, value, weft_semaphore_load_value(semaphore));
  }
  weft_semaphore_t* semaphores[1] = {semaphore};
  uint64_t values[1] = {value};
  const weft_semaphore_list_t list = {1, semaphores, values};
  union {
    weft_wait_set_t set;
    uint8_t bytes[sizeof(weft_wait_set_t) + sizeof(weft_wait_set_entry_t)];
  } storage;
  return weft_semaphore_list_wait_slow(WEFT_WAIT_MODE_ALL, list, deadline,
                                       /*spin=*/false, &storage.set);
}

// A list wait's assisting phase, the single wait's loop for a list: runs a
// CPU device's work, or watches the list in slices while the device is
// busy or the spin budget (the first semaphore's policy) lasts, until the
// list is done or |deadline| passed; then the wait set takes over.
static weft_status_t weft_semaphore_list_assist(weft_wait_mode_t mode,
                                                weft_semaphore_list_t list,
                                                weft_time_t deadline,
                                                bool* out_done) {
  const weft_duration_t spin_ns = list.semaphores[0]->wait_policy.spin_ns;
  weft_time_t spin_end = weft_deadline_min(weft_time_now() + spin_ns, deadline);
  weft_status_t status = WEFT_OK;
  weft_wait_assist_begin_wait();
  for (;;) {
    weft_wait_assist_result_t assisted = weft_wait_assist_run();
    status = weft_semaphore_list_poll(mode, list, out_done);
    if (*out_done) break;
    weft_time_t now = weft_time_now();
    if (now >= deadline) break;
    if (assisted != WEFT_WAIT_ASSIST_IDLE) {
      spin_end = weft_deadline_min(now + spin_ns, deadline);
      if (assisted == WEFT_WAIT_ASSIST_RAN) continue;
    }
    if (now >= spin_end) break;
    // Watch the first entry short of its value for a slice, then poll the
    // whole list and look for work again.
    for (uint32_t i = 0; i < list.count; ++i) {
      if (weft_semaphore_load_value(list.semaphores[i]) < list.values[i]) {
        weft_semaphore_spin_slice(
            list.semaphores[i], list.values[i],
            weft_deadline_min(now + WEFT_SEMAPHORE_ASSIST_POLL_NS, spin_end));
        break;
      }
    }
  }
  weft_wait_assist_end_wait();
  return status;
}

// A list host wait until |deadline|, without the watchdog.
static weft_status_t weft_semaphore_list_wait_until(weft_wait_mode_t mode,
                                                    weft_semaphore_list_t list,
                                                    weft_time_t deadline) {
  weft_status_t status = WEFT_OK;
  if (list.count == 1) {
    status = weft_semaphore_wait_until(list.semaphores[0], list.values[0],
                                       deadline);
  } else if (list.count > 1) {
    bool done = false;
    status = weft_semaphore_list_poll(mode, list, &done);
    if (!done && deadline != WEFT_TIME_INFINITE_PAST &&
        weft_wait_assist_available()) {
      status = weft_semaphore_list_assist(mode, list, deadline, &done);
    }
    if (!done) {
      if (deadline == WEFT_TIME_INFINITE_PAST ||
          weft_time_now() >= deadline) {
        status = weft_semaphore_list_timed_out(mode, list);
      } else if (list.count <= WEFT_SEMAPHORE_LIST_WAIT_INLINE_COUNT) {
        union {
          weft_wait_set_t set;
          uint8_t bytes[sizeof(weft_wait_set_t) +
                        WEFT_SEMAPHORE_LIST_WAIT_INLINE_COUNT *
                            sizeof(weft_wait_set_entry_t)];
        } storage;
        status = weft_semaphore_list_wait_slow(mode, list, deadline,
                                               /*spin=*/true, &storage.set);
      } else {
        weft_allocator_t allocator = list.semaphores[0]->allocator;
        weft_wait_set_t* set = NULL;
        status = weft_allocator_malloc(
            allocator, weft_wait_set_storage_size(list.count), (void**)&set);
        if (weft_status_is_ok(status)) {
          status = weft_semaphore_list_wait_slow(mode, list, deadline,
                                                 /*spin=*/true, set);
          weft_allocator_free(allocator, set);
        }
      }
    }
  }
  return status;
}

//===----------------------------------------------------------------------===//
// The watchdog (diagnostics.h)
//===----------------------------------------------------------------------===//

// Describes what a list wait waits for, for the watchdog's report.
static void weft_semaphore_list_describe(weft_wait_mode_t mode,
                                         weft_semaphore_list_t list,
                                         char* buffer, size_t capacity) {
  size_t used = 0;
  if (list.count > 1) {
    used = (size_t)snprintf(buffer, capacity, "%s of",
                            mode == WEFT_WAIT_MODE_ALL ? "all" : "any");
  }
  for (uint32_t i = 0; i < list.count && used < capacity; ++i) {
    char label[WEFT_SEMAPHORE_LABEL_CAPACITY];
    weft_semaphore_label(list.semaphores[i], label, sizeof(label));
    used += (size_t)snprintf(buffer + used, capacity - used,
                             "%s%ssemaphore %s to reach %" PRIu64,
                             i ? "," : "", list.count > 1 ? " " : "", label,
                             list.values[i]);
  }
}

// Runs a host wait for |list| until |deadline| under the watchdog: when the
// watchdog is armed and the wait is still blocked after its limit, prints
// the report, then fails with DEADLINE_EXCEEDED (FAIL) or waits on.
static weft_status_t weft_semaphore_list_wait_watched(
    weft_wait_mode_t mode, weft_semaphore_list_t list, weft_time_t deadline) {
  weft_watchdog_action_t action = WEFT_WATCHDOG_ACTION_REPORT;
  const weft_duration_t limit = weft_watchdog_current(&action);
  if (limit <= 0 || deadline == WEFT_TIME_INFINITE_PAST || list.count == 0) {
    return weft_semaphore_list_wait_until(mode, list, deadline);
  }
  const weft_time_t start = weft_time_now();
  const weft_time_t watch_deadline = start + limit;
  if (deadline <= watch_deadline) {
    return weft_semaphore_list_wait_until(mode, list, deadline);
  }
  weft_status_t status =
      weft_semaphore_list_wait_until(mode, list, watch_deadline);
  if (weft_status_code(status) == WEFT_STATUS_DEADLINE_EXCEEDED) {
    weft_status_free(status);
    char what[512];
    weft_semaphore_list_describe(mode, list, what, sizeof(what));
    weft_watchdog_report(what, weft_time_now() - start);
    if (action == WEFT_WATCHDOG_ACTION_FAIL) {
      status = WEFT_STATUS(DEADLINE_EXCEEDED,
                           "watchdog: a host wait for %s was still blocked "
                           "after %.0f ms (the pending operations were "
                           "printed to stderr)",
                           what, (double)limit / 1e6);
    } else {
      status = weft_semaphore_list_wait_until(mode, list, deadline);
    }
  }
  return status;
}

weft_status_t weft_semaphore_wait(weft_semaphore_t* semaphore, uint64_t value,
                                  weft_timeout_t timeout) {
  weft_semaphore_list_t list = {1, &semaphore, &value};
  weft_status_t status = weft_arguments_require(
      __func__, "semaphore", (const void* const[]){semaphore}, 1);
  if (weft_status_is_ok(status) && !weft_semaphore_has_failed(semaphore) &&
      weft_semaphore_load_value(semaphore) >= value) {
    // Already reached: no deadline to compute (a clock read costs as much
    // as the rest of a host round trip on an inline driver).
    return WEFT_OK;
  }
  if (weft_status_is_ok(status)) {
    status = weft_semaphore_list_wait_watched(
        WEFT_WAIT_MODE_ALL, list, weft_timeout_as_deadline(timeout));
  }
  return status;
}

weft_status_t weft_semaphore_list_wait(weft_wait_mode_t mode,
                                       weft_semaphore_list_t list,
                                       weft_timeout_t timeout) {
  weft_status_t status = weft_semaphore_list_check(__func__, "list", list);
  if (weft_status_is_ok(status)) {
    status = weft_semaphore_list_wait_watched(
        mode, list, weft_timeout_as_deadline(timeout));
  }
  return status;
}

//===----------------------------------------------------------------------===//
// Lists
//===----------------------------------------------------------------------===//

weft_status_t weft_semaphore_list_error(const char* function, const char* name,
                                        weft_semaphore_list_t list) {
  weft_status_t status = WEFT_OK;
  if (list.count > 0 && (!list.semaphores || !list.values)) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "%s: %s has %" PRIu32 " entr%s but %s.%s is NULL",
                         function, name, list.count,
                         list.count == 1 ? "y" : "ies", name,
                         list.semaphores ? "values" : "semaphores");
  }
  for (uint32_t i = 0; weft_status_is_ok(status) && i < list.count; ++i) {
    if (!list.semaphores[i]) {
      status = WEFT_STATUS(INVALID_ARGUMENT,
                           "%s: %s.semaphores[%" PRIu32 "] is NULL", function,
                           name, i);
    }
  }
  return status;
}

weft_status_t weft_semaphore_list_signal(weft_semaphore_list_t list) {
  weft_status_t status = weft_semaphore_list_check(__func__, "list", list);
  for (uint32_t i = 0; i < list.count && weft_status_is_ok(status); ++i) {
    status = weft_semaphore_signal_unchecked(list.semaphores[i],
                                             list.values[i]);
  }
  return status;
}

void weft_semaphore_list_fail(weft_semaphore_list_t list,
                              weft_status_t status) {
  weft_status_t list_status = weft_semaphore_list_check(__func__, "list", list);
  if (!weft_status_is_ok(list_status)) {
    // A malformed list fails nothing; both statuses are consumed.
    weft_status_free(list_status);
    weft_status_free(status);
    return;
  }
  for (uint32_t i = 0; i < list.count; ++i) {
    // The last one takes |status| itself rather than a clone.
    weft_semaphore_fail(list.semaphores[i], i + 1 == list.count
                                                ? status
                                                : weft_status_clone(status));
  }
  if (list.count == 0) weft_status_free(status);
}

bool weft_semaphore_list_is_reached(weft_semaphore_list_t list) {
  bool reached = list.count == 0 || (list.semaphores && list.values);
  for (uint32_t i = 0; i < list.count && reached; ++i) {
    weft_semaphore_t* semaphore = list.semaphores[i];
    reached = semaphore && !weft_semaphore_has_failed(semaphore) &&
              weft_semaphore_load_value(semaphore) >= list.values[i];
  }
  return reached;
}
