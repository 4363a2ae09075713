// weft VM: the loop, many invocations on one thread.
//
// Submitted invocations run in turns of a bounded number of instructions,
// so a busy one cannot starve a ready one. An invocation whose native call
// waits leaves the run queue: the semaphores it waits on hand it back,
// from whichever thread reaches them, and the loop resumes it. With
// nothing to run the loop sleeps until then or until the nearest deadline
// of a waiting invocation (which then sees the deadline as a value). One
// host thread so keeps thousands of invocations in flight.
//
// Threading: every function here runs on the loop's thread, the one
// calling weft_vm_loop_run (the loop itself is not synchronised);
// semaphores may be signalled from any thread while it runs. A loop is
// owned by its creator (no reference counting): weft_vm_loop_destroy ends
// it.
//
// NULL: pointer arguments are required unless the function's comment says
// "|x| may be NULL" (see "NULL arguments" in weft/status.h).
#ifndef WEFT_VM_LOOP_H_
#define WEFT_VM_LOOP_H_

#include <stdint.h>

#include "weft/allocator.h"
#include "weft/status.h"
#include "weft/time.h"
#include "weft/vm/context.h"
#include "weft/vm/value.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_vm_loop_t weft_vm_loop_t;
typedef struct weft_vm_loop_invocation_t weft_vm_loop_invocation_t;

// Called on the loop's thread when |invocation| ends: |status| (owned by
// the callee: free it) is OK with |result_count| |results| (their refs
// owned by the callee) or the failure (CANCELLED for a cancelled one;
// |results| NULL and |result_count| 0). The invocation is freed after the
// call returns.
typedef void (*weft_vm_loop_done_fn_t)(void* user_data,
                                       weft_vm_loop_invocation_t* invocation,
                                       weft_status_t status,
                                       weft_vm_value_t* results,
                                       uint32_t result_count);

// Called from any thread, without blocking and without calling into the
// loop, when an invocation becomes ready to run again (a wait it parked on
// ended): for a host that waits on something other than weft_vm_loop_run
// (an event loop watching a file descriptor) and then calls
// weft_vm_loop_run_ready.
typedef void (*weft_vm_loop_ready_fn_t)(void* user_data);

typedef struct weft_vm_loop_options_t {
  // Instructions per turn (0: 4096).
  uint64_t turn_budget;
  // Frames per invocation stack (0: the default, 1024).
  uint32_t max_depth;
  // Optional (NULL: none), with its |ready_user_data|.
  weft_vm_loop_ready_fn_t ready_fn;
  void* ready_user_data;
} weft_vm_loop_options_t;

// Creates a loop with |options|; invocations' stacks come from
// |allocator| too.
weft_status_t weft_vm_loop_create(weft_vm_loop_options_t options,
                                  weft_allocator_t allocator,
                                  weft_vm_loop_t** out_loop);

// Destroys the loop. Invocations still live are cancelled and their done
// functions called first (on this thread); a semaphore's hand-back still
// running on another thread is waited for.
void weft_vm_loop_destroy(weft_vm_loop_t* loop);

// Queues a call of |qualified_name| ("module.function") of |context|
// (retained until the invocation ends) with |arg_count| |args| (retained,
// checked against the signature as weft_vm_invoke_sync does); |done| gets
// its |result_count| results (extra results are dropped, missing ones
// i32 0) when it ends. Nothing runs before weft_vm_loop_run. A bad name or
// arguments fail here and |done| is never called. |args| may be NULL when
// |arg_count| is 0. |user_data| may be NULL. |out_invocation| may be NULL;
// when given it receives the handle for weft_vm_loop_cancel, valid until
// |done| returns (NULL on failure).
weft_status_t weft_vm_loop_submit(weft_vm_loop_t* loop,
                                  weft_vm_context_t* context,
                                  const char* qualified_name,
                                  const weft_vm_value_t* args,
                                  uint32_t arg_count, uint32_t result_count,
                                  weft_vm_loop_done_fn_t done, void* user_data,
                                  weft_vm_loop_invocation_t** out_invocation);

// Cancels |invocation| (live, of |loop|): a waiting one stops waiting; it
// ends with CANCELLED (through its done function, annotated with its
// stack) the next time the loop runs it.
void weft_vm_loop_cancel(weft_vm_loop_t* loop,
                         weft_vm_loop_invocation_t* invocation);

// Runs until every invocation ended (OK) or |deadline| (absolute,
// weft_time_now's clock) passed: DEADLINE_EXCEEDED, the invocations stay
// for the next run. Done functions run inside this call.
weft_status_t weft_vm_loop_run(weft_vm_loop_t* loop, weft_time_t deadline);

// Runs what can run now without sleeping: invocations in turns until each
// has ended or waits, expiring the deadlines that passed. Sets
// *out_next_deadline to the nearest deadline of a waiting invocation
// (WEFT_TIME_INFINITE_FUTURE when none), when the host should call again
// if nothing became ready before (ready_fn says when something does).
// Done functions run inside this call.
weft_status_t weft_vm_loop_run_ready(weft_vm_loop_t* loop,
                                     weft_time_t* out_next_deadline);

// The number of invocations submitted and not yet ended.
uint32_t weft_vm_loop_live_count(const weft_vm_loop_t* loop);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_VM_LOOP_H_
