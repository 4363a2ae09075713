// weft: the timeline semaphore's insides, for the HAL and its drivers.
//
// A semaphore is a shared base and a payload.
//
// The base (semaphore.c) is the same for every semaphore: the value as the
// host knows it (strictly monotonic), the sticky first failure with its
// message, timepoints (what every device and the VM's loop wait through),
// the notification host waiters sleep on, and the debug name.
//
// The payload is where the value really lives, and the vtable says what it
// does: query it, signal it from the host, tell it of a failure, and
// whether a device can wait on it and signal it natively. Host waits are
// always the base's (its value, notification and timepoints), which the
// payload reaches by publishing what moved. The host timeline semaphore's
// payload is the base's own value (every payload entry NULL). A driver
// makes its own semaphores from its device's create_semaphore by embedding
// weft_semaphore_t at offset 0 with a vtable of its own: the cuda driver's
// event-backed semaphores keep the events of issued signals beside the
// base value; a Vulkan timeline semaphore or the 64-bit word cuda's
// memory mode has the GPU write is the value itself.
//
// Who moves the base's value when the payload lives on a device: whoever
// observes the device, calling weft_semaphore_publish_value: the driver's
// completion thread (cuda events) or a listener that waits on the device's
// payloads and publishes what moved; |query| also refreshes it when asked.
// Every timepoint, host wait and other device then sees the move through
// the base, exactly as for a host semaphore.
//
// How a failure reaches a payload the host does not own: the base records
// the first failure (its status, sticky) and fires every timepoint, then
// calls the payload's |fail|, which releases whatever waits on the device
// (writes a failure value past any wait, or drops the events it keeps).
// Device work that waited natively learns of the failure from the base
// when its op completes (weft_queue_op_signal_or_fail keeps the failure
// order of weft/semaphore.h).
#ifndef WEFT_HAL_SEMAPHORE_IMPL_H_
#define WEFT_HAL_SEMAPHORE_IMPL_H_

#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/atomics.h"
#include "base/mutex.h"
#include "base/notification.h"
#include "base/wait_policy.h"
#include "hal/domain.h"
#include "hal/resource.h"
#include "weft/semaphore.h"

// Names up to this length (including the NUL) live inside the semaphore.
#define WEFT_SEMAPHORE_INLINE_NAME_CAPACITY 32

typedef struct weft_semaphore_vtable_t {
  // Must be first (see resource.h).
  void (*destroy)(weft_semaphore_t* semaphore);
  // The payload's value, published to the base first when the payload
  // moved without the base knowing. NULL: the base's value is the payload.
  uint64_t (*query)(weft_semaphore_t* semaphore);
  // Moves the payload to |value| from the host, then publishes it
  // (weft_semaphore_publish_value). Called after the base checked that the
  // semaphore has not failed and |value| is ahead. NULL: the base's value
  // is the payload (publish only).
  weft_status_t (*signal)(weft_semaphore_t* semaphore, uint64_t value);
  // The semaphore just failed (the base holds the status and has fired its
  // timepoints): releases what waits on the payload where the host cannot
  // reach it. NULL: nothing waits anywhere but on the base.
  void (*fail)(weft_semaphore_t* semaphore);
  // True when a device of |domain| waits on and signals this payload
  // natively (its queue then counts a wait as met once the signalling op
  // is issued, weft_semaphore_advance_issued). NULL: no device does.
  bool (*is_native)(const weft_semaphore_t* semaphore, weft_domain_t domain);
} weft_semaphore_vtable_t;

// Fields are grouped by who writes them, each group on cache lines of its
// own (the semaphore is allocated 64-byte aligned), so that a host waiting
// on a value and the worker signalling it pass as few lines back and forth
// as the handoff needs: the worker's lock and timepoint scan do not pull a
// line the waiter reads, and the waiter's spin does not pull the lock's.
struct weft_semaphore_t {
  // Written by retain/release (submitters and retirers); the vtable is
  // read by every call.
  weft_resource_t resource;

  // Read-mostly: set at create, at the first failure and by set_name.
  // |vtable| is the resource's, copied here: every call reads it, and the
  // resource's line is written by each retain and release (a VM await
  // retains what it waits on), so a signaller reading it there took that
  // line from the waiter on every signal.
  alignas(64) const weft_semaphore_vtable_t* vtable;
  weft_allocator_t allocator;
  // The first failure; immutable once |failed| is 1.
  weft_status_t failure_status;
  // When it failed, in the order of every failure of the process (set with
  // |failure_status|): among several failed waits, the earliest is the one
  // reported, whatever the order of the list.
  uint64_t failure_sequence;
  // How host waits spin before sleeping; read once at create because the
  // default policy costs a getenv and a sched_getaffinity call.
  weft_wait_policy_t wait_policy;
  // Points at |name_inline| or at an allocation; guarded by |mutex|.
  char* name;

  // The signaller's lock, the value and the notification waiters read, on
  // one line: a signal takes the line once and a spinning waiter reads it
  // once.
  alignas(64) weft_slim_mutex_t mutex;
  // 1 once |failure_status| is set; written under |mutex|.
  weft_atomic_uint32_t failed;
  // The payload (for the host semaphore; a mirror of it otherwise); written
  // under |mutex|, read without it.
  weft_atomic_uint64_t current_value;
  // Host waiters sleep here; notified on every signal and on failure.
  weft_notification_t notification;
  // The highest value an op already issued to the device that owns the
  // payload will signal (weft_semaphore_advance_issued); guarded by |mutex|.
  uint64_t issued_value;
  // Registered timepoints sorted by value (ties in registration order),
  // guarded by |mutex|: [0] fire when the value is reached, [1] (issued
  // timepoints) also when |issued_value| reaches theirs.
  weft_timepoint_t* timepoint_head[2];
  weft_timepoint_t* timepoint_tail[2];

  char name_inline[WEFT_SEMAPHORE_INLINE_NAME_CAPACITY];
};

// Initialises the host timeline semaphore embedded at offset 0 of a
// driver's semaphore, with the driver's |vtable| (whose destroy calls
// weft_semaphore_deinitialize and frees the whole). One reference.
void weft_semaphore_initialize(const weft_semaphore_vtable_t* vtable,
                               weft_allocator_t allocator,
                               uint64_t initial_value,
                               weft_semaphore_t* out_semaphore);

// Tears down what weft_semaphore_initialize set up: timepoints still
// registered fire with CANCELLED; the memory is the caller's.
void weft_semaphore_deinitialize(weft_semaphore_t* semaphore);

static inline const weft_semaphore_vtable_t* weft_semaphore_vtable(
    const weft_semaphore_t* semaphore) {
  return semaphore->vtable;
}

// Registers |timepoint| like weft_semaphore_register_timepoint, to fire
// with OK when |semaphore| reaches |value| or, sooner, when
// weft_semaphore_advance_issued says an op that will signal it to |value|
// or beyond was issued to the device that owns the payload: a device that
// waits natively on that payload may then issue its waiter behind it
// instead of waiting for the host to see the value. A failure fires it as
// usual. Only a device that can wait on the payload natively registers
// these; a failure upstream of a native wait reaches the waiter through
// that device (the op checks its waits when it completes).
void weft_semaphore_register_issued_timepoint(weft_semaphore_t* semaphore,
                                              uint64_t value,
                                              weft_timepoint_t* timepoint);

// Records that ops signalling |semaphore| up to |value| are issued to the
// device that owns its payload, in that device's order, and fires the issued
// timepoints at or below |value| (outside the lock, on this thread). Values
// at or below the current issued value change nothing.
void weft_semaphore_advance_issued(weft_semaphore_t* semaphore,
                                   uint64_t value);

// True when a device of |domain| waits on and signals |semaphore|'s payload
// natively (the vtable's is_native).
static inline bool weft_semaphore_is_native(const weft_semaphore_t* semaphore,
                                            weft_domain_t domain) {
  const weft_semaphore_vtable_t* vtable = semaphore->vtable;
  return vtable->is_native && vtable->is_native(semaphore, domain);
}

// Signals a semaphore known to be non-NULL (weft_semaphore_signal without
// the argument check, for the HAL's own callers): the base checks (not
// failed, ahead of the value), then the payload moves (the host payload:
// the base value itself, in the same critical section).
weft_status_t weft_semaphore_signal_unchecked(weft_semaphore_t* semaphore,
                                              uint64_t value);

// Publishes |value| observed on the payload to the base: moves the base's
// value there and fires the timepoints it reaches, like a signal, but
// quietly does nothing when the base is already there or past it or the
// semaphore failed (an observer may see a value twice). For payload
// implementations (a signal, a listener, a completion thread).
void weft_semaphore_publish_value(weft_semaphore_t* semaphore, uint64_t value);

// Room for a semaphore's label in messages; longer names are truncated.
#define WEFT_SEMAPHORE_LABEL_CAPACITY 96

// Writes how messages name |semaphore| into |buffer|: "'name'", or its
// address when it has no name.
void weft_semaphore_label(weft_semaphore_t* semaphore, char* buffer,
                          size_t capacity);

// Reads the current value into |out_value| and returns whether the
// semaphore has failed: what a submit-time check needs, without a status.
// Inline: every queue op peeks at its waits.
static inline bool weft_semaphore_peek(weft_semaphore_t* semaphore,
                                       uint64_t* out_value) {
  // Acquire: pairs with the signaller's release, so whatever was written
  // before the signal is visible; and with fail's, so |failure_status| is.
  *out_value =
      weft_atomic_load(&semaphore->current_value, memory_order_acquire);
  return weft_atomic_load(&semaphore->failed, memory_order_acquire) != 0;
}

// The index of the entry of |list| whose semaphore failed first (the
// earliest failure_sequence), or UINT32_MAX when none has failed.
uint32_t weft_semaphore_list_earliest_failure(weft_semaphore_list_t list);

// The same among the entries whose bit is set in |mask| (bit i for entry
// i < 64; entries past 63 are never counted).
uint32_t weft_semaphore_list_earliest_failure_masked(weft_semaphore_list_t list,
                                                     uint64_t mask);

// The INVALID_ARGUMENT of a list weft_semaphore_list_check rejects. Out of
// line: the error path.
weft_status_t weft_semaphore_list_error(const char* function, const char* name,
                                        weft_semaphore_list_t list);

// OK when |list| is usable: a non-zero count needs both arrays and a
// semaphore in every entry. Otherwise INVALID_ARGUMENT naming |function|
// and the list as |name| ("wait_list"), e.g. "weft_device_queue_fill:
// wait_list has 2 entries but wait_list.values is NULL". Inline: every
// queue operation checks two lists.
static inline weft_status_t weft_semaphore_list_check(
    const char* function, const char* name, weft_semaphore_list_t list) {
  bool usable = list.count == 0 || (list.semaphores && list.values);
  for (uint32_t i = 0; usable && i < list.count; ++i) {
    usable = list.semaphores[i] != NULL;
  }
  return usable ? WEFT_OK : weft_semaphore_list_error(function, name, list);
}

// Sets when the work behind the signals this thread makes next ended
// (weft_timepoint_t's |reached_at| for the timepoints they fire), for a
// driver that knows it from its device (0: unknown, the default). Per
// thread; the caller sets it around its signals and clears it after.
void weft_semaphore_set_signal_time(weft_time_t time);

#endif  // WEFT_HAL_SEMAPHORE_IMPL_H_
