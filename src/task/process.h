// weft: the process, the one unit of work of the task scheduler.
//
// A process is drained by workers: the executor calls its drain function
// over and over (from up to |worker_budget| workers at once) until a drain
// reports it completed. Drain does bounded work and returns; it never blocks.
//
// Lifecycle:
//   weft_process_initialize (suspended once: not runnable)
//   -> weft_process_resume takes the suspend count to 0: that call schedules
//      it on its executor (budget 1: the immediate list; budget > 1: a
//      compute slot, or the overflow list while every slot is taken)
//   -> drained by workers; each drain returns
//        DID_WORK   call me again (stay scheduled),
//        NO_WORK    nothing to do until weft_process_wake (the process goes
//                   idle; a wake racing with this return is never lost: it
//                   leads to another drain),
//        COMPLETED  finished (the first drain to say so completes it)
//   -> completion: |completion| runs exactly once, with the first failure
//      reported (or CANCELLED when cancelled without a failure, or OK), on
//      the thread that completed it; then every dependent is resumed.
//      With budget > 1 other workers may still be inside drain here.
//   -> release: |release| runs exactly once, after completion, when no worker
//      can still be inside drain; what drainers touch may be freed there
//      (two-phase completion). The process memory itself may be freed or
//      reused from |release| on.
//
// Threading: resume, wake, report_failure, cancel and set_desired_workers
// may be called from any thread (workers included, from inside drain).
// initialize, set_dependents and suspend must happen before the process can
// run (before the resume that schedules it).
#ifndef WEFT_TASK_PROCESS_H_
#define WEFT_TASK_PROCESS_H_

#include <stdbool.h>
#include <stdint.h>

#include "base/atomics.h"
#include "base/mpsc_list.h"
#include "weft/status.h"

typedef struct weft_executor_t weft_executor_t;
typedef struct weft_process_t weft_process_t;

typedef enum weft_process_drain_result_e {
  // Made progress (or work is in flight on other workers); drain again.
  WEFT_PROCESS_DRAIN_DID_WORK = 0,
  // Nothing to do for any worker right now; the process sleeps until woken
  // with weft_process_wake. With budget > 1, return this only when no worker
  // can find work either (a recording still being finished by others is
  // DID_WORK).
  WEFT_PROCESS_DRAIN_NO_WORK = 1,
  // Finished: complete the process (once) and stop draining. With budget
  // > 1, workers that entered before the completion may still call drain
  // (concurrently with completion or just after it); such a drain must be
  // harmless (e.g. return COMPLETED again). Nothing calls drain after
  // release.
  WEFT_PROCESS_DRAIN_COMPLETED = 2,
} weft_process_drain_result_t;

// Does a bounded amount of work on |worker_index|'s behalf (0 <= index <
// weft_executor_worker_count; stable for the worker's life, so it can index
// per-worker state and weft_executor_worker_local_memory). May be called
// concurrently from up to the process's desired worker count.
typedef weft_process_drain_result_t (*weft_process_drain_fn_t)(
    weft_process_t* process, uint32_t worker_index);

// Runs once when the process completes; |status| (owned by the callee) is
// the first failure reported, CANCELLED when cancelled without a failure,
// or OK. Runs before dependents are resumed: it may report failures on
// them.
typedef void (*weft_process_completion_fn_t)(weft_process_t* process,
                                             weft_status_t status);

// Runs once, after completion, when no worker can still be inside drain.
typedef void (*weft_process_release_fn_t)(weft_process_t* process);

// Phases of weft_process_t::state (low 3 bits); see process.c.
typedef enum weft_process_phase_e {
  WEFT_PROCESS_PHASE_SUSPENDED = 0,  // suspend count > 0
  WEFT_PROCESS_PHASE_IDLE = 1,       // returned NO_WORK; waits for a wake
  WEFT_PROCESS_PHASE_SCHEDULED = 2,  // in a list or a compute slot
  WEFT_PROCESS_PHASE_DRAINING = 3,   // budget 1: a worker is inside drain
  WEFT_PROCESS_PHASE_RETIRING = 4,   // budget > 1: slot closed, drainers
                                     // leaving (then IDLE or SCHEDULED)
  WEFT_PROCESS_PHASE_COMPLETED = 5,  // terminal
} weft_process_phase_t;
#define WEFT_PROCESS_PHASE_MASK 0x7u
// Set in weft_process_t::state by a wake that found the process scheduled
// or being drained: the next NO_WORK transition drains again instead.
#define WEFT_PROCESS_STATE_WAKE_PENDING 0x8u

// Embedded in the caller's own struct (recover it with weft_container_of or
// |user_data|). Fields above the line are the caller's to set after
// weft_process_initialize and before the process can run; the rest belong
// to the scheduler.
struct weft_process_t {
  weft_process_drain_fn_t drain;
  weft_process_completion_fn_t completion;  // may be NULL
  weft_process_release_fn_t release;        // may be NULL
  void* user_data;
  // Upper bound on workers inside drain at once: 1 runs on the immediate
  // list (one worker at a time), > 1 occupies a compute slot.
  uint32_t worker_budget;
  // ---- owned by the scheduler (process.c, executor.c) ----
  weft_executor_t* executor;
  // Workers wanted now, 1..worker_budget (weft_process_set_desired_workers).
  weft_atomic_uint32_t desired_workers;
  weft_atomic_int32_t suspend_count;
  // weft_process_phase_t | WEFT_PROCESS_STATE_WAKE_PENDING.
  weft_atomic_uint32_t state;
  weft_atomic_uint32_t cancelled;
  // First failure reported (owned), NULL while none.
  _Atomic(weft_status_t) failure;
  // Link in the executor's immediate or overflow list.
  weft_mpsc_entry_t list_entry;
  // Resumed on completion (set_dependents); the array is the caller's.
  weft_process_t* const* dependents;
  uint32_t dependent_count;
};

// Initialises |out_process| suspended once (suspend count 1), to run on
// |executor| with |drain| and at most |worker_budget| workers at once (0 is
// taken as 1). desired workers starts at |worker_budget|. The caller sets
// completion/release afterwards if it wants them.
void weft_process_initialize(weft_executor_t* executor,
                             weft_process_drain_fn_t drain,
                             uint32_t worker_budget, void* user_data,
                             weft_process_t* out_process);

// Makes |process|'s completion resume each of |dependents| (an array the
// caller keeps alive until then) and suspends each dependent once for it.
// Call before |process| can complete; replaces an earlier set.
void weft_process_set_dependents(weft_process_t* process,
                                 weft_process_t* const* dependents,
                                 uint32_t dependent_count);

// Adds one suspension. Only valid while the process is still suspended.
void weft_process_suspend(weft_process_t* process);

// Drops one suspension; the call that reaches 0 schedules the process on its
// executor. Resuming a process cancelled while suspended does nothing.
void weft_process_resume(weft_process_t* process);

// Tells a process that returned NO_WORK that work arrived: schedules it
// again if it is idle, else makes its next NO_WORK drain once more. Safe
// from any thread; one RMW when it is already scheduled or being drained.
// Publish the work before calling (the call orders it: acq_rel).
void weft_process_wake(weft_process_t* process);

// weft_process_wake for a caller that would rather drain the process itself
// (budget 1 only): when the wake finds it idle, the caller takes it instead
// of scheduling it, and gets true; the process is then DRAINING, drained
// by the caller alone (with any drainer index it holds) until
// weft_process_end_claim. False: the wake was delivered as by
// weft_process_wake (the process was scheduled or being drained already).
bool weft_process_wake_claimed(weft_process_t* process);

// Ends a claim taken by weft_process_wake_claimed: the process goes idle
// when |more| is false and no wake arrived during the claim, and is
// scheduled otherwise (a worker drains the rest).
void weft_process_end_claim(weft_process_t* process, bool more);

// Records |status| (consumed) as the process's failure if it is the first;
// later ones (and OK) are freed. Any thread.
void weft_process_report_failure(weft_process_t* process, weft_status_t status);

// Asks the process to stop. A suspended process completes at once on this
// thread (completion with CANCELLED, dependents resumed, release). Otherwise
// the process is woken; its drain sees weft_process_is_cancelled, fails
// what it holds and returns COMPLETED promptly.
void weft_process_cancel(weft_process_t* process);

// True once weft_process_cancel was called.
bool weft_process_is_cancelled(const weft_process_t* process);

// True once the process completed (its completion has started).
bool weft_process_is_completed(const weft_process_t* process);

// Sets how many workers the process wants inside drain now, clamped to
// [1, worker_budget] (an adaptive budget: e.g. the tiles of the current
// region). Raising it while the process is scheduled wakes that many more
// workers; lowering it stops new workers from entering (those inside finish
// their drain). Any thread, typically from inside drain.
void weft_process_set_desired_workers(weft_process_t* process,
                                      uint32_t worker_count);

// Returns the current desired worker count (relaxed; a hint).
uint32_t weft_process_desired_workers(const weft_process_t* process);

// ---- internal to src/task (executor.c) ----

// Completes |process| for whoever moved its phase to COMPLETED: runs the
// completion callback with its status, then resumes its dependents.
void weft_task__process_complete(weft_process_t* process);

// Releases |process| once no worker can be inside drain: frees a failure
// reported after completion and runs the release callback.
void weft_task__process_release(weft_process_t* process);

#endif  // WEFT_TASK_PROCESS_H_
