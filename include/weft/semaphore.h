// weft: timeline semaphores and timepoints.
//
// A semaphore's payload is a uint64 that only moves forward. It can instead
// be failed, once: the first failure is sticky and every query, signal and
// wait after it returns a clone of that original status (annotated with the
// semaphore and the value waited for).
//
// Failure order: a failure travels only down a timeline, never up it. A
// queue operation that will not run (a wait failed, its device was
// released, its work failed) publishes its failure on each semaphore it
// signals no earlier than it would have published its success there: a
// semaphore it also waits on fails only once that wait is reached (or the
// semaphore fails by itself), the others at once. So on a chain where op i
// waits (step >= i - 1) and signals (step = i), an op k whose other wait
// fails lets ops 1..k-1 run; step reaches k - 1, then fails with the
// original message, and ops k+1.. do not run. When an op waits on several
// failed semaphores, the failure that happened first is the one it
// reports, whatever the order of its wait list.
//
// Semaphores work across devices: any device's queue may wait on or signal
// any semaphore, and the host may signal and wait on all of them. Drivers
// build their waiting on timepoints (see below).
//
// All functions are thread-safe.
//
// NULL: pointer arguments are required unless the function's comment says
// "|x| may be NULL" (see "NULL arguments" in weft/status.h).
#ifndef WEFT_SEMAPHORE_H_
#define WEFT_SEMAPHORE_H_

#include <stdbool.h>
#include <stdint.h>

#include "weft/allocator.h"
#include "weft/status.h"
#include "weft/time.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_semaphore_t weft_semaphore_t;

// Creates a host timeline semaphore starting at |initial_value|.
// Devices create theirs with weft_device_create_semaphore.
weft_status_t weft_semaphore_create(weft_allocator_t allocator,
                                    uint64_t initial_value,
                                    weft_semaphore_t** out_semaphore);

void weft_semaphore_retain(weft_semaphore_t* semaphore);
void weft_semaphore_release(weft_semaphore_t* semaphore);

// Attaches a debug name used in messages and reports (copied). |name| may
// be NULL (no name).
void weft_semaphore_set_name(weft_semaphore_t* semaphore, const char* name);
// Returns the debug name ("" when none). Valid until the next set_name.
const char* weft_semaphore_name(const weft_semaphore_t* semaphore);

// Stores the current value in |out_value|. If the semaphore has failed,
// returns a clone of the failure (and the last value reached).
weft_status_t weft_semaphore_query(weft_semaphore_t* semaphore,
                                   uint64_t* out_value);

// Advances the payload to |value| and fires the timepoints it reaches.
// INVALID_ARGUMENT ("already at N") if |value| <= the current value; a clone
// of the failure if the semaphore has failed. Either way nothing changes.
weft_status_t weft_semaphore_signal(weft_semaphore_t* semaphore,
                                    uint64_t value);

// Fails the semaphore with |status| (consumed). The first failure wins; a
// later one is freed. Every pending timepoint fires with a clone.
void weft_semaphore_fail(weft_semaphore_t* semaphore, weft_status_t status);

// Blocks until the payload reaches |value| (OK), the semaphore fails (clone
// of the original status), or the timeout passes (DEADLINE_EXCEEDED).
weft_status_t weft_semaphore_wait(weft_semaphore_t* semaphore, uint64_t value,
                                  weft_timeout_t timeout);

// A borrowed list of (semaphore, value) pairs.
typedef struct weft_semaphore_list_t {
  uint32_t count;
  weft_semaphore_t** semaphores;
  const uint64_t* values;
} weft_semaphore_list_t;

static inline weft_semaphore_list_t weft_semaphore_list_empty(void) {
  weft_semaphore_list_t list = {0, NULL, NULL};
  return list;
}

typedef enum weft_wait_mode_e {
  // Wait until every (semaphore, value) is reached.
  WEFT_WAIT_MODE_ALL = 0,
  // Wait until any one (semaphore, value) is reached.
  WEFT_WAIT_MODE_ANY = 1,
} weft_wait_mode_t;

// Waits on a list. An empty list succeeds at once. A failure of any listed
// semaphore is returned in both modes. DEADLINE_EXCEEDED on time-out.
weft_status_t weft_semaphore_list_wait(weft_wait_mode_t mode,
                                       weft_semaphore_list_t list,
                                       weft_timeout_t timeout);

// Signals every (semaphore, value) in |list|; returns the first error.
weft_status_t weft_semaphore_list_signal(weft_semaphore_list_t list);

// Fails every semaphore in |list| with a clone of |status| (consumed).
void weft_semaphore_list_fail(weft_semaphore_list_t list,
                              weft_status_t status);

// True when every pair in |list| is already reached (failed counts as not).
bool weft_semaphore_list_is_reached(weft_semaphore_list_t list);

// --- Timepoints ------------------------------------------------------------
//
// A timepoint is caller-owned storage registered on a semaphore at a value.
// Its callback fires exactly once: with OK when the value is reached, with a
// clone of the failure (owned by the callback) when the semaphore fails, or
// with CANCELLED if the semaphore is destroyed first. It fires outside the
// semaphore's lock and may fire synchronously inside the register call when
// the value is already reached. Callbacks must not block.

typedef struct weft_timepoint_t weft_timepoint_t;

// |status| is owned by the callback.
typedef void (*weft_timepoint_fn_t)(void* user_data,
                                    weft_timepoint_t* timepoint,
                                    weft_status_t status);

struct weft_timepoint_t {
  // Set by the caller before registering.
  weft_timepoint_fn_t fn;
  void* user_data;
  // Set before |fn| fires with OK: when the work that reached the value
  // ended, on weft_time_now's clock, where the signaller knows it better
  // than the callback's own clock could (a GPU driver, from its device's
  // clock: its completion thread may see several ops done at once); 0
  // where it does not (a host signal, a device that signals as its work
  // ends), and then now is that time.
  weft_time_t reached_at;
  // Owned by the semaphore while registered.
  weft_semaphore_t* semaphore;
  uint64_t value;
  weft_timepoint_t* next;
  weft_timepoint_t* prev;
  // Which of the semaphore's lists holds it (internal).
  uint32_t list;
};

// Registers |timepoint| (fn and user_data set) to fire when |semaphore|
// reaches |value|.
void weft_semaphore_register_timepoint(weft_semaphore_t* semaphore,
                                       uint64_t value,
                                       weft_timepoint_t* timepoint);

// Removes |timepoint| if it has not fired. Returns true when removed (the
// callback will never run); false when it already fired or is firing.
bool weft_semaphore_cancel_timepoint(weft_semaphore_t* semaphore,
                                     weft_timepoint_t* timepoint);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_SEMAPHORE_H_
