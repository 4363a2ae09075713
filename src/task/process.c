// weft: the process (see src/task/process.h).
//
// State machine (weft_process_t::state: phase | WAKE_PENDING):
//
//   SUSPENDED --resume to 0--> SCHEDULED --worker pops (budget 1)--> DRAINING
//   DRAINING --DID_WORK--> SCHEDULED (pushed back on the immediate list)
//   DRAINING --NO_WORK, no wake pending--> IDLE
//   DRAINING|WAKE --NO_WORK--> DRAINING (wake bit cleared, drain again)
//   SCHEDULED --NO_WORK from a slot drainer (budget > 1)--> RETIRING
//   SCHEDULED|WAKE --NO_WORK from a slot drainer--> SCHEDULED (drain again)
//   RETIRING --last drainer leaves the slot--> IDLE, or SCHEDULED when a
//              wake arrived meanwhile (placed in a slot again)
//   IDLE --wake--> SCHEDULED (the waker that set the wake bit on IDLE
//                  schedules it; later wakers see the bit and stop)
//   any non-terminal --COMPLETED drain / cancel of SUSPENDED / shutdown-->
//              COMPLETED (exactly one CAS wins; its thread runs completion)
//
// Lost wake-ups: a drain that found nothing and a waker that published work
// both make an RMW on |state| (the worker's CAS out of DRAINING/SCHEDULED,
// the waker's fetch_or of WAKE_PENDING). They are ordered in |state|'s
// modification order: if the waker's comes first the worker's CAS fails and
// it drains again (having acquired the waker's publication); if the worker's
// comes first the waker sees IDLE and schedules the process itself.

#include "task/process.h"

#include "base/sched_counters.h"
#include "task/executor.h"

void weft_process_initialize(weft_executor_t* executor,
                             weft_process_drain_fn_t drain,
                             uint32_t worker_budget, void* user_data,
                             weft_process_t* out_process) {
  if (worker_budget == 0) worker_budget = 1;
  out_process->drain = drain;
  out_process->completion = NULL;
  out_process->release = NULL;
  out_process->user_data = user_data;
  out_process->worker_budget = worker_budget;
  out_process->executor = executor;
  atomic_init(&out_process->desired_workers, worker_budget);
  atomic_init(&out_process->suspend_count, 1);
  atomic_init(&out_process->state, WEFT_PROCESS_PHASE_SUSPENDED);
  atomic_init(&out_process->cancelled, 0);
  atomic_init(&out_process->failure, NULL);
  out_process->list_entry.next = NULL;
  out_process->dependents = NULL;
  out_process->dependent_count = 0;
}

void weft_process_set_dependents(weft_process_t* process,
                                 weft_process_t* const* dependents,
                                 uint32_t dependent_count) {
  process->dependents = dependents;
  process->dependent_count = dependent_count;
  for (uint32_t i = 0; i < dependent_count; ++i) {
    weft_process_suspend(dependents[i]);
  }
}

void weft_process_suspend(weft_process_t* process) {
  weft_atomic_fetch_add(&process->suspend_count, 1, memory_order_relaxed);
}

void weft_process_resume(weft_process_t* process) {
  // acq_rel: whoever reaches 0 must see every write made by the threads
  // that resumed before it (each resume publishes what it prepared).
  WEFT_SCHED_COUNT(RMW_PROCESS);
  int32_t previous =
      weft_atomic_fetch_sub(&process->suspend_count, 1, memory_order_acq_rel);
  if (previous != 1) return;
  uint32_t state = weft_atomic_load(&process->state, memory_order_relaxed);
  bool schedule = false;
  while ((state & WEFT_PROCESS_PHASE_MASK) == WEFT_PROCESS_PHASE_SUSPENDED) {
    // acq_rel: continues the release sequence of early wakers' fetch_or and
    // publishes the process's setup to the worker that acquires SCHEDULED.
    WEFT_SCHED_COUNT(RMW_PROCESS);
    if (weft_atomic_compare_exchange_weak(
            &process->state, &state, WEFT_PROCESS_PHASE_SCHEDULED,
            memory_order_acq_rel, memory_order_relaxed)) {
      schedule = true;
      break;
    }
  }
  // Not SUSPENDED any more: cancelled while suspended (COMPLETED).
  if (schedule) weft_executor_schedule(process->executor, process);
}

void weft_process_wake(weft_process_t* process) {
  // acq_rel: release publishes the caller's new work to the drain that
  // follows (see the file comment); acquire orders our reading of the phase.
  WEFT_SCHED_COUNT(RMW_PROCESS);
  uint32_t previous = weft_atomic_fetch_or(
      &process->state, WEFT_PROCESS_STATE_WAKE_PENDING, memory_order_acq_rel);
  if ((previous & WEFT_PROCESS_PHASE_MASK) == WEFT_PROCESS_PHASE_IDLE &&
      (previous & WEFT_PROCESS_STATE_WAKE_PENDING) == 0) {
    // We set the bit on IDLE: we own the transition to SCHEDULED (nobody
    // else moves a process out of IDLE|WAKE). acq_rel: an RMW keeps other
    // wakers' release sequences intact for the worker that acquires this.
    WEFT_SCHED_COUNT(RMW_PROCESS);
    weft_atomic_exchange(&process->state, WEFT_PROCESS_PHASE_SCHEDULED,
                         memory_order_acq_rel);
    weft_executor_schedule(process->executor, process);
  }
}

bool weft_process_wake_claimed(weft_process_t* process) {
  // As weft_process_wake.
  WEFT_SCHED_COUNT(RMW_PROCESS);
  uint32_t previous = weft_atomic_fetch_or(
      &process->state, WEFT_PROCESS_STATE_WAKE_PENDING, memory_order_acq_rel);
  if ((previous & WEFT_PROCESS_PHASE_MASK) != WEFT_PROCESS_PHASE_IDLE ||
      (previous & WEFT_PROCESS_STATE_WAKE_PENDING) != 0) {
    return false;
  }
  // We own the move out of IDLE|WAKE, as a scheduling waker does; to
  // DRAINING instead (clearing the wake: this drain sees the work). acq_rel:
  // sees what earlier wakers published, as the worker's exchange does.
  WEFT_SCHED_COUNT(RMW_PROCESS);
  weft_atomic_exchange(&process->state, WEFT_PROCESS_PHASE_DRAINING,
                       memory_order_acq_rel);
  return true;
}

void weft_process_end_claim(weft_process_t* process, bool more) {
  if (!more) {
    uint32_t expected = WEFT_PROCESS_PHASE_DRAINING;
    // acq_rel: the Dekker pair with weft_process_wake, as a drain returning
    // NO_WORK (executor.c).
    WEFT_SCHED_COUNT(RMW_PROCESS);
    if (weft_atomic_compare_exchange_strong(
            &process->state, &expected, WEFT_PROCESS_PHASE_IDLE,
            memory_order_acq_rel, memory_order_acquire)) {
      return;
    }
  }
  // More to do, or a wake arrived (DRAINING|WAKE): a worker takes it.
  // Release: the worker's drain (acquire) sees this one's writes.
  WEFT_SCHED_COUNT(RMW_PROCESS);
  weft_atomic_exchange(&process->state, WEFT_PROCESS_PHASE_SCHEDULED,
                       memory_order_acq_rel);
  weft_executor_schedule(process->executor, process);
}

void weft_process_report_failure(weft_process_t* process,
                                 weft_status_t status) {
  if (weft_status_is_ok(status)) return;
  weft_status_t expected = NULL;
  // acq_rel on success: the completer that takes the status (acquire) sees
  // the record's contents. Relaxed on failure: we only free ours.
  if (!weft_atomic_compare_exchange_strong(&process->failure, &expected, status,
                                           memory_order_acq_rel,
                                           memory_order_relaxed)) {
    weft_status_free(status);
  }
}

void weft_process_cancel(weft_process_t* process) {
  // Release: a drain that sees the flag (acquire) sees what the canceller
  // wrote before cancelling.
  weft_atomic_store(&process->cancelled, 1, memory_order_release);
  uint32_t state = weft_atomic_load(&process->state, memory_order_acquire);
  bool complete_here = false;
  while ((state & WEFT_PROCESS_PHASE_MASK) == WEFT_PROCESS_PHASE_SUSPENDED) {
    // acq_rel: wins the one transition to COMPLETED against a resume.
    if (weft_atomic_compare_exchange_weak(
            &process->state, &state, WEFT_PROCESS_PHASE_COMPLETED,
            memory_order_acq_rel, memory_order_acquire)) {
      complete_here = true;
      break;
    }
  }
  if (complete_here) {
    weft_task__process_complete(process);
    weft_task__process_release(process);
  } else {
    weft_process_wake(process);
  }
}

bool weft_process_is_cancelled(const weft_process_t* process) {
  // Acquire: pairs with the canceller's release.
  return weft_atomic_load((weft_atomic_uint32_t*)&process->cancelled,
                          memory_order_acquire) != 0;
}

bool weft_process_is_completed(const weft_process_t* process) {
  // Acquire: a caller that sees COMPLETED sees what led to it.
  uint32_t state = weft_atomic_load((weft_atomic_uint32_t*)&process->state,
                                    memory_order_acquire);
  return (state & WEFT_PROCESS_PHASE_MASK) == WEFT_PROCESS_PHASE_COMPLETED;
}

void weft_process_set_desired_workers(weft_process_t* process,
                                      uint32_t worker_count) {
  if (worker_count < 1) worker_count = 1;
  if (worker_count > process->worker_budget) {
    worker_count = process->worker_budget;
  }
  // Relaxed: a hint. Written only when it changes (the line is shared by
  // every drainer of the process).
  uint32_t previous =
      weft_atomic_load(&process->desired_workers, memory_order_relaxed);
  if (previous == worker_count) return;
  WEFT_SCHED_COUNT(RMW_PROCESS);
  previous = weft_atomic_exchange(&process->desired_workers, worker_count,
                                  memory_order_relaxed);
  if (worker_count <= previous) return;
  uint32_t state = weft_atomic_load(&process->state, memory_order_relaxed);
  if ((state & WEFT_PROCESS_PHASE_MASK) == WEFT_PROCESS_PHASE_SCHEDULED) {
    weft_executor_wake_drainers(process->executor, worker_count - previous);
  }
}

uint32_t weft_process_desired_workers(const weft_process_t* process) {
  return weft_atomic_load((weft_atomic_uint32_t*)&process->desired_workers,
                          memory_order_relaxed);
}

void weft_task__process_complete(weft_process_t* process) {
  // Acquire: pairs with the reporter's release so the record is complete.
  weft_status_t status =
      weft_atomic_exchange(&process->failure, NULL, memory_order_acquire);
  if (weft_status_is_ok(status) && weft_process_is_cancelled(process)) {
    status = WEFT_STATUS(CANCELLED, "process cancelled before it completed");
  }
  if (process->completion) {
    process->completion(process, status);
  } else {
    weft_status_free(status);
  }
  weft_process_t* const* dependents = process->dependents;
  uint32_t dependent_count = process->dependent_count;
  for (uint32_t i = 0; i < dependent_count; ++i) {
    weft_process_resume(dependents[i]);
  }
}

void weft_task__process_release(weft_process_t* process) {
  // A failure reported after completion took the status: ours to free.
  // Acquire: pairs with the reporter's release.
  weft_status_free(
      weft_atomic_exchange(&process->failure, NULL, memory_order_acquire));
  if (process->release) process->release(process);
}
