// weft: hang reports, wait-for cycles and the watchdog.
//
// A program that waits forever gives no clue about what is waiting on what.
// These turn a hang into a report:
//   - weft_device_dump_pending (device.h) and weft_diagnostics_dump list
//     every operation not yet retired: its type, queue, state, how long ago
//     it was submitted, each wait (semaphore by debug name, value wanted,
//     value now) and what it will signal;
//   - a wait not yet reached that no pending operation of any live device
//     signals to its value or past is marked: that is the usual cause of a
//     hang. "nothing pending signals 'loaded': only the host can" (a
//     weft_semaphore_signal, or a host call that returned DEFERRED and
//     holds its signals); "... 'loaded' past 3: ..." when pending
//     operations signal it, but not far enough. A driver may count some
//     pending operations without listing them (local-task: the ready and
//     running ones), and any of those might be the signaller, so then the
//     mark only says what the report shows: "no listed operation signals
//     'loaded' (2 ready or running operations not listed)". An operation
//     signalling what it waits for itself does not count ("nothing else
//     pending", "no other listed operation"). Waits another pending
//     operation could satisfy are not marked, even when that one is stuck
//     too: follow the chain to the marked wait at its root;
//   - a wait-for cycle among pending operations (each waits on a semaphore
//     that only another operation of the cycle would signal) is found and
//     named; nothing inside weft can break it;
//   - the watchdog: a host wait (semaphore, list or fence) that runs longer
//     than the watchdog's limit prints the report to stderr, and with the
//     FAIL action returns DEADLINE_EXCEEDED instead of waiting on.
//
// Environment (read when the first device is created):
//   WEFT_WATCHDOG_MS=N         arm the watchdog with an N ms limit
//   WEFT_WATCHDOG_ACTION=fail  fail the overrunning wait (default: report
//                              and keep waiting)
//
// NULL: pointer arguments are required unless the function's comment says
// "|x| may be NULL" (see "NULL arguments" in weft/status.h).
#ifndef WEFT_DIAGNOSTICS_H_
#define WEFT_DIAGNOSTICS_H_

#include <stdint.h>
#include <stdio.h>

#include "weft/time.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum weft_watchdog_action_e {
  // Print the report and keep waiting.
  WEFT_WATCHDOG_ACTION_REPORT = 0,
  // Print the report and return DEADLINE_EXCEEDED from the wait.
  WEFT_WATCHDOG_ACTION_FAIL = 1,
} weft_watchdog_action_t;

// Arms the process-wide watchdog for host waits: a wait still blocked after
// |limit_ns| triggers |action|. 0 disarms it. Waits already blocked keep the
// setting they started with.
void weft_watchdog_set(weft_duration_t limit_ns, weft_watchdog_action_t action);

// The current limit (0 when disarmed).
weft_duration_t weft_watchdog_limit(void);

// Writes every live device's pending operations (marking waits nothing
// pending signals, as above), then the wait-for cycles among them, to
// |stream| (nothing when |stream| is NULL).
void weft_diagnostics_dump(FILE* stream);

// Looks for wait-for cycles among the pending operations of every live
// device; writes each one found to |stream| and returns how many there
// are. |stream| may be NULL (count only).
uint32_t weft_diagnostics_find_cycles(FILE* stream);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_DIAGNOSTICS_H_
