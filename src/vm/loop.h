// weft VM: the loop, many invocations on one thread.
//
// Submitted invocations run in turns of a bounded number of instructions,
// so a busy one cannot starve a ready one. An invocation whose native call
// entered a wait frame leaves the run queue: a wait set (hal/wait_set.h:
// ALL or ANY, deadline, cancel) over its sources hands it back, from
// whichever thread reached the sources, through a lock-free list, and the
// loop runs it again at the native call's resume PC. With nothing to run
// the loop sleeps until a push or the nearest deadline of a waiting
// invocation (which it then expires: the program sees the bare
// DEADLINE_EXCEEDED code).
//
// Threading: every function here but the wait sets' callbacks runs on the
// loop's thread (the one calling weft_vm_loop_run); semaphores may be
// signalled from any thread while it runs.
#ifndef WEFT_VM_LOOP_H_
#define WEFT_VM_LOOP_H_

#include <stdint.h>

#include "vm/context.h"
#include "vm/value.h"
#include "weft/time.h"

typedef struct weft_vm_loop_t weft_vm_loop_t;
typedef struct weft_vm_loop_invocation_t weft_vm_loop_invocation_t;

// Called on the loop's thread when an invocation ends: |status| (owned by
// the callee) is OK with |results| (|result_count| of them, refs owned by
// the callee) or the failure. The invocation is freed after the call.
typedef void (*weft_vm_loop_done_fn_t)(void* user_data,
                                       weft_vm_loop_invocation_t* invocation,
                                       weft_status_t status,
                                       weft_vm_value_t* results,
                                       uint32_t result_count);

typedef struct weft_vm_loop_options_t {
  // Instructions per turn (0: 4096).
  uint64_t turn_budget;
  // Frames per invocation stack (0: the default).
  uint32_t max_depth;
} weft_vm_loop_options_t;

weft_status_t weft_vm_loop_create(weft_vm_loop_options_t options,
                                  weft_allocator_t allocator,
                                  weft_vm_loop_t** out_loop);

// Frees the loop. Invocations still live are cancelled and their done
// functions called first; a wait set's callback still inside its hand-back
// (on another thread) is waited for.
void weft_vm_loop_destroy(weft_vm_loop_t* loop);

// Queues a call of |qualified_name| of |context| with |args| (retained);
// |done| runs when it ends. |out_invocation| may be NULL (the handle for
// cancel, valid until |done| returns).
weft_status_t weft_vm_loop_submit(weft_vm_loop_t* loop,
                                  weft_vm_context_t* context,
                                  const char* qualified_name,
                                  const weft_vm_value_t* args,
                                  uint32_t arg_count, uint32_t result_count,
                                  weft_vm_loop_done_fn_t done, void* user_data,
                                  weft_vm_loop_invocation_t** out_invocation);

// Cancels |invocation|: a waiting one has its wait taken off the
// semaphores; it ends with CANCELLED (through its done function, from the
// loop) the next time the loop reaches it.
void weft_vm_loop_cancel(weft_vm_loop_t* loop,
                         weft_vm_loop_invocation_t* invocation);

// Runs until every invocation ended or |deadline| passed (then
// DEADLINE_EXCEEDED; the invocations stay for the next run).
weft_status_t weft_vm_loop_run(weft_vm_loop_t* loop, weft_time_t deadline);

// Invocations submitted and not yet ended.
uint32_t weft_vm_loop_live_count(const weft_vm_loop_t* loop);

#endif  // WEFT_VM_LOOP_H_
