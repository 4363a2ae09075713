// weft: the executor, the workers that drain processes.
//
// N worker threads (named weft-worker-<i>, pinned when affinities are
// given) drain scheduled processes (src/task/process.h). Budget-1 processes
// go on the immediate list (FIFO, any thread may push); budget > 1 processes
// occupy one of a few compute slots, or wait in an overflow list while every
// slot is taken (never dropped). Workers scan the compute slots first, then
// the immediate list.
//
// Sleep/wake: a worker with nothing to do announces itself idle (seq_cst),
// re-checks for work (seq_cst) and only then waits on its own notification
// (spinning for the wait policy's budget first); a scheduler publishes work,
// then reads the idle mask and wakes one idle worker, recording how many
// more it wants in a desired-wake count that each woken worker relays to
// the next. Either side sees the other, so no wake-up is lost.
//
// The scheduling path (schedule, wake, drain loop) allocates nothing and
// takes no lock.
//
// Threading: every function is safe from any thread, workers included,
// except create and release (release must not run on a worker).
#ifndef WEFT_TASK_EXECUTOR_H_
#define WEFT_TASK_EXECUTOR_H_

#include <stddef.h>
#include <stdint.h>

#include "task/process.h"
#include "weft/allocator.h"
#include "weft/status.h"
#include "weft/time.h"

typedef struct weft_affinity_set_t weft_affinity_set_t;

// Spin budget value meaning "use the default wait policy"
// (weft_wait_policy_default; no spin when oversubscribed).
#define WEFT_EXECUTOR_SPIN_DEFAULT ((weft_duration_t)-1)

// Compute slots when options ask for 0.
#define WEFT_EXECUTOR_DEFAULT_COMPUTE_SLOT_COUNT 8u

typedef struct weft_executor_options_t {
  // Worker threads; 0 = the number of CPUs this process may use.
  uint32_t worker_count;
  // Nanoseconds an idle worker spins before blocking on its futex;
  // WEFT_EXECUTOR_SPIN_DEFAULT for the default policy. Forced to 0 when
  // worker_count exceeds the CPUs available (oversubscribed).
  weft_duration_t spin_ns;
  // Compute slots (budget > 1 processes drained at once); 0 = default.
  uint32_t compute_slot_count;
  // Bytes of scratch memory per worker (64-byte aligned, zeroed at create);
  // 0 = none.
  size_t worker_local_memory_size;
  // Threads besides the workers that may drain compute slots while they
  // wait (an application thread in a host wait: src/base/wait_assist.h),
  // each with a drainer index after the workers' (0 = none; at most 64).
  uint32_t guest_count;
  // NULL, or |worker_count| sets: worker i is pinned to the CPUs of
  // worker_affinities[i] (an empty set leaves that worker unpinned). Read
  // during create only.
  const weft_affinity_set_t* worker_affinities;
} weft_executor_options_t;

// Fills |out_options| with defaults (all CPUs, default spin, default slots,
// no guests, no local memory, no pinning).
void weft_executor_options_initialize(weft_executor_options_t* out_options);

// Creates an executor and starts its workers. RESOURCE_EXHAUSTED when
// memory or a thread cannot be had (nothing is left running then).
weft_status_t weft_executor_create(const weft_executor_options_t* options,
                                   weft_allocator_t allocator,
                                   weft_executor_t** out_executor);

void weft_executor_retain(weft_executor_t* executor);

// Drops a reference; the last one shuts the executor down: workers stop
// (none is left inside a drain), every thread is joined, and each process
// still scheduled completes with CANCELLED (or its failure) and is released
// on this thread, dependents included. Processes idle after NO_WORK are not
// known to the executor: their owners must cancel them first. Must not be
// called from a worker. NULL is a no-op.
void weft_executor_release(weft_executor_t* executor);

// Returns the number of workers (worker indices are 0..count-1).
uint32_t weft_executor_worker_count(const weft_executor_t* executor);

// Returns the number of drainer indices: the workers' (0..count-1), then
// the guests' (see weft_executor_options_t.guest_count). What a drain sizes
// per drainer (scratch, claim state) needs this many.
uint32_t weft_executor_drainer_count(const weft_executor_t* executor);

// Returns the seat drainer |drainer_index| takes in a layout of work split
// among drainers (a dispatch's claim lanes): a worker's is its index; the
// first guest's is the standby's when there is one (that guest runs in the
// standby's place, and the standby drains no compute meanwhile), each
// other guest's the next after the workers'. Drainers that run at once
// thus hold distinct seats, so each starts on work of its own and keeps
// it from one dispatch to the next (the data stays in its cache).
uint32_t weft_executor_drainer_seat(const weft_executor_t* executor,
                                    uint32_t drainer_index);

// Returns drainer |worker_index|'s scratch memory (64-byte aligned) and its
// size in |out_size| (may be NULL); NULL when none was asked for. Only that
// worker (or a drain running on it) should touch it.
void* weft_executor_worker_local_memory(weft_executor_t* executor,
                                        uint32_t worker_index,
                                        size_t* out_size);

// Returns the spin budget the workers use (after the oversubscription rule).
weft_duration_t weft_executor_spin_ns(const weft_executor_t* executor);

// Whether worker |worker_index| may spin now (a process lingering for work
// is spinning too): false when a host in an assisting wait sits on its CPU
// or the awake workers and such hosts take every CPU, where its spin would
// only keep them off theirs. Guests' indices: true.
bool weft_executor_may_spin_now(weft_executor_t* executor,
                                uint32_t worker_index);

// True when there are more workers than CPUs this process may use: a
// worker may then be preempted holding work others wait for, and a drain
// that only polls should yield to it.
bool weft_executor_is_oversubscribed(const weft_executor_t* executor);

// Returns how many workers are idle (announced, waiting or about to);
// a racy snapshot for tests and diagnostics.
uint32_t weft_executor_idle_worker_count(const weft_executor_t* executor);

// A thread that is not a worker (a host submitting work) runs scheduling
// work on its own thread (a process it claimed, weft_process_wake_claimed):
// while it does, it counts as taking a CPU, as a thread in an assisting
// wait does, so the compute wakes it causes keep within the CPUs (when the
// executor has guests; without them hosts are never counted).
void weft_executor_host_drain_begin(weft_executor_t* executor);
void weft_executor_host_drain_end(weft_executor_t* executor);

// Schedules |process| (its phase already moved to SCHEDULED by process.c):
// pushes it on the immediate list or into a compute slot and wakes workers.
// Internal to src/task; use weft_process_resume / weft_process_wake.
void weft_executor_schedule(weft_executor_t* executor, weft_process_t* process);

// Asks for |count| more workers to wake (one now, the rest relayed).
// Cheap when none is idle.
void weft_executor_wake_workers(weft_executor_t* executor, uint32_t count);

// The same for drainers of compute slots: capped so the awake workers and
// the threads in an assisting host wait (src/base/wait_assist.h) stay
// within the CPUs, when this executor has guests; those hosts drain the
// slots, and one leaving its wait wakes workers for what is left.
void weft_executor_wake_drainers(weft_executor_t* executor, uint32_t count);

#endif  // WEFT_TASK_EXECUTOR_H_
