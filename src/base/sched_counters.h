// weft: scheduler counters, exact counts of what a dispatch costs.
//
// Counts the events the task scheduler's cost model is written in
// (src/task/README.md): read-modify-writes on shared lines, grouped by the
// line they hit; wakes and how deep the chain of wakes ran; the syscalls of
// waiting (futex waits and wakes, sched_yield) and clock reads; the polls a
// waiting host makes of the wait-assist table. Counts, not clocks, so what
// a test asserts on them holds on any machine.
//
// Off by default: every count site is then one relaxed load and a not-taken
// branch. weft_sched_counters_enable(true) turns them on. Each thread then
// adds to a block of its own (plain stores to a line nobody else writes;
// the block is made at the thread's first count and folded into a shared
// total when the thread exits), so counting adds no shared-line traffic to
// what it counts. Snapshots sum every block: exact once the threads being
// counted are quiet (a test's dispatch has completed and no spinner is
// counting its spins).
//
// This is process-wide state, as tracing is: one set of counts for every
// executor in the process.
#ifndef WEFT_BASE_SCHED_COUNTERS_H_
#define WEFT_BASE_SCHED_COUNTERS_H_

#include <stdbool.h>
#include <stdint.h>

#include "base/atomics.h"

typedef enum weft_sched_counter_e {
  // Syscalls and clock reads.
  WEFT_SCHED_FUTEX_WAIT = 0,  // futex waits issued (a thread blocks)
  WEFT_SCHED_FUTEX_WAKE,      // futex wakes issued (a blocked thread woken)
  WEFT_SCHED_MUTEX_WAIT,      // of the futex waits, a contended slim mutex's
  WEFT_SCHED_MUTEX_WAKE,      // of the futex wakes, a contended slim mutex's
  WEFT_SCHED_YIELD,           // sched_yield calls (spin loops)
  WEFT_SCHED_CLOCK_READ,      // clock reads in spin loops (vDSO on Linux)
  // Wakes.
  WEFT_SCHED_WAKE,          // idle workers claimed and notified
  WEFT_SCHED_WAKE_RELAYED,  // of those, claimed by a worker relaying wakes
  WEFT_SCHED_IDLE,          // a worker announced itself idle
  // Read-modify-writes on shared lines, by the line.
  WEFT_SCHED_RMW_EXECUTOR,   // idle, spinning and guest masks, spinners
  WEFT_SCHED_RMW_RELAY,      // the desired-wake count
  WEFT_SCHED_RMW_LIST,       // immediate/overflow list pushes, pops, flags
  WEFT_SCHED_RMW_SLOT,       // compute slot words: place, enter, leave
  WEFT_SCHED_RMW_PROCESS,    // a process's state word
  WEFT_SCHED_RMW_LANE,       // local-task's compute lane word
  WEFT_SCHED_RMW_CLAIM,      // tile claims tried (block processor)
  WEFT_SCHED_RMW_CLAIM_LOST, // of those, lost to another drainer
  WEFT_SCHED_RMW_RETIRE,     // tiles retired (block processor)
  WEFT_SCHED_RMW_REGION,     // region advances (block processor)
  // Drains and assists.
  WEFT_SCHED_DRAIN,        // drain calls on a compute process
  WEFT_SCHED_ASSIST_POLL,  // a waiting host looked for work to run
  WEFT_SCHED_ASSIST_RAN,   // ... and ran some
  WEFT_SCHED_COUNTER_COUNT,
} weft_sched_counter_t;

// A snapshot: every counter summed over the threads, and the deepest wake
// chain seen (hand-offs from a thread that was not woken to the woken one:
// a host's submit waking worker A is depth 1, A waking B depth 2; a
// worker's depth is spent when it starts work after the wake, so what it
// wakes or places from then on begins a chain of its own; the executor
// keeps the depth, src/task/executor.c).
typedef struct weft_sched_counts_t {
  uint64_t values[WEFT_SCHED_COUNTER_COUNT];
  uint32_t max_wake_depth;
} weft_sched_counts_t;

// Turns counting on or off (process-wide). Turning it on does not reset.
void weft_sched_counters_enable(bool enabled);

// Zeroes every thread's counts (and the deepest wake chain). Call while the
// counted threads are quiet.
void weft_sched_counters_reset(void);

// Sums every thread's counts into |out_counts|.
void weft_sched_counters_snapshot(weft_sched_counts_t* out_counts);

// |after| minus |before|, counter by counter (the depth is |after|'s).
void weft_sched_counts_subtract(const weft_sched_counts_t* after,
                                const weft_sched_counts_t* before,
                                weft_sched_counts_t* out_delta);

// "futex_wait", "rmw_claim", ...: a stable name for tables and messages.
const char* weft_sched_counter_name(weft_sched_counter_t counter);

// ---- counting (internal to weft) ----

extern weft_atomic_uint32_t weft_sched_counters_enabled_flag;

static inline bool weft_sched_counters_enabled(void) {
  return weft_atomic_load(&weft_sched_counters_enabled_flag,
                          memory_order_relaxed) != 0;
}

void weft_sched_counters__add(weft_sched_counter_t counter, uint64_t amount);

// Records that a worker was woken at wake depth |depth| (for the deepest
// chain of the snapshot). Call only when counting.
void weft_sched_counters__note_wake_depth(uint32_t depth);

#define WEFT_SCHED_COUNT(counter)                                  \
  do {                                                             \
    if (weft_sched_counters_enabled()) {                           \
      weft_sched_counters__add(WEFT_SCHED_##counter, 1);           \
    }                                                              \
  } while (0)

#endif  // WEFT_BASE_SCHED_COUNTERS_H_
