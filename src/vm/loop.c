// weft VM: the loop (see weft/vm/loop.h).
//
// Each invocation is in one place at a time: the run queue (loop thread
// only), the waiting list (loop thread only) with a wait set started, or in
// flight from a wait set's callback to the loop through |ready| (a
// lock-free MPSC list). The callback writes the wait's result into the
// invocation, pushes it and notifies; it touches nothing of the invocation
// after the push, since the loop may run (and free) it at once.
#include "weft/vm/loop.h"

#include <string.h>

#include "base/arguments.h"
#include "base/mpsc_list.h"
#include "base/thread.h"
#include "base/notification.h"
#include "base/wait_policy.h"
#include "hal/wait_set.h"
#include "vm/interpreter.h"
#include "vm/stack.h"

#define WEFT_VM_LOOP_DEFAULT_TURN_BUDGET 4096

struct weft_vm_loop_invocation_t {
  weft_mpsc_entry_t ready_entry;
  weft_vm_loop_invocation_t* run_next;
  weft_vm_loop_invocation_t* waiting_prev;
  weft_vm_loop_invocation_t* waiting_next;
  weft_vm_loop_t* loop;
  weft_vm_context_t* context;  // retained
  weft_vm_stack_t stack;
  weft_vm_loop_done_fn_t done;
  void* user_data;
  // On the waiting list (a wait set started and not yet handed back).
  bool waiting;
  // Cancel requested; |wait_taken| once the set was cancelled or expired
  // (at most one of the two per start).
  bool cancelled;
  bool wait_taken;
  // The interpreter's in-place spin on the current wait ran out
  // (weft_vm_loop_stack_wait_spin): the loop does not spin on it again.
  bool spun;
  weft_time_t deadline;
  // The wait set's result, written by its callback before the push.
  weft_status_t wait_status;
  weft_wait_set_t* wait_set;
  uint32_t wait_set_capacity;
  uint32_t result_count;
  weft_vm_value_t results[];
};

struct weft_vm_loop_t {
  weft_allocator_t allocator;
  weft_vm_loop_options_t options;
  weft_mpsc_list_t ready;
  weft_notification_t notification;
  weft_wait_policy_t wait_policy;
  weft_vm_loop_invocation_t* run_head;
  weft_vm_loop_invocation_t* run_tail;
  weft_vm_loop_invocation_t* waiting_head;
  uint32_t live_count;
  // Inside weft_vm_loop_run, which blocks for what it waits on anyway: an
  // await may spin before it makes a wait set (weft_vm_loop_spin_wait).
  // Never in weft_vm_loop_run_ready, which must not hold up the host's own
  // event loop.
  bool may_spin;
  // Wait-set callbacks between their first and last touch of the loop (the
  // push, then the notify); destroy waits for none to be left, so a
  // callback never notifies a freed loop.
  weft_atomic_uint32_t callbacks_in_flight;
};

weft_status_t weft_vm_loop_create(weft_vm_loop_options_t options,
                                  weft_allocator_t allocator,
                                  weft_vm_loop_t** out_loop) {
  if (out_loop) *out_loop = NULL;
  weft_vm_loop_t* loop = NULL;
  weft_status_t status = weft_arguments_require(
      __func__, "out_loop", (const void* const[]){out_loop}, 1);
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc(allocator, sizeof(*loop), (void**)&loop);
  }
  if (weft_status_is_ok(status)) {
    loop->allocator = allocator;
    loop->options = options;
    if (!loop->options.turn_budget) {
      loop->options.turn_budget = WEFT_VM_LOOP_DEFAULT_TURN_BUDGET;
    }
    weft_mpsc_list_initialize(&loop->ready);
    atomic_init(&loop->callbacks_in_flight, 0u);
    weft_notification_initialize(&loop->notification);
    loop->wait_policy = weft_wait_policy_default();
    *out_loop = loop;
  }
  return status;
}

static void weft_vm_loop_enqueue(weft_vm_loop_t* loop,
                                 weft_vm_loop_invocation_t* invocation) {
  invocation->run_next = NULL;
  if (loop->run_tail) {
    loop->run_tail->run_next = invocation;
  } else {
    loop->run_head = invocation;
  }
  loop->run_tail = invocation;
}

static void weft_vm_loop_unlink_waiting(weft_vm_loop_t* loop,
                                        weft_vm_loop_invocation_t* invocation) {
  if (invocation->waiting_prev) {
    invocation->waiting_prev->waiting_next = invocation->waiting_next;
  } else {
    loop->waiting_head = invocation->waiting_next;
  }
  if (invocation->waiting_next) {
    invocation->waiting_next->waiting_prev = invocation->waiting_prev;
  }
  invocation->waiting_prev = NULL;
  invocation->waiting_next = NULL;
  invocation->waiting = false;
}

// Ends |invocation| with |status|: calls its done function and frees it.
static void weft_vm_loop_finish(weft_vm_loop_t* loop,
                                weft_vm_loop_invocation_t* invocation,
                                weft_status_t status) {
  --loop->live_count;
  invocation->done(invocation->user_data, invocation, status,
                   weft_status_is_ok(status) ? invocation->results : NULL,
                   weft_status_is_ok(status) ? invocation->result_count : 0);
  weft_vm_stack_deinitialize(&invocation->stack);
  weft_status_free(invocation->wait_status);
  weft_allocator_free(loop->allocator, invocation->wait_set);
  weft_vm_context_release(invocation->context);
  weft_allocator_free(loop->allocator, invocation);
}

static bool weft_vm_loop_stack_wait_spin(void* user_data,
                                         const weft_vm_wait_frame_t* wait);

weft_status_t weft_vm_loop_submit(weft_vm_loop_t* loop,
                                  weft_vm_context_t* context,
                                  const char* qualified_name,
                                  const weft_vm_value_t* args,
                                  uint32_t arg_count, uint32_t result_count,
                                  weft_vm_loop_done_fn_t done, void* user_data,
                                  weft_vm_loop_invocation_t** out_invocation) {
  if (out_invocation) *out_invocation = NULL;
  // |args| only matters when there are some.
  weft_status_t status = weft_arguments_require(
      __func__, "loop,context,qualified_name,args",
      (const void* const[]){loop, context, qualified_name,
                            arg_count ? (const void*)args : &arg_count},
      4);
  if (weft_status_is_ok(status)) {
    status = weft_arguments_require_one(__func__, "done", done != NULL);
  }
  const weft_vm_instance_t* instance = NULL;
  uint32_t function_index = 0;
  if (weft_status_is_ok(status)) {
    status = weft_vm_context_resolve(context, qualified_name, &instance,
                                     &function_index);
  }
  weft_vm_loop_invocation_t* invocation = NULL;
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc(
        loop->allocator,
        sizeof(*invocation) + (size_t)result_count * sizeof(weft_vm_value_t),
        (void**)&invocation);
  }
  if (weft_status_is_ok(status)) {
    invocation->loop = loop;
    invocation->done = done;
    invocation->user_data = user_data;
    invocation->result_count = result_count;
    weft_vm_stack_initialize(loop->allocator, loop->options.max_depth,
                             &invocation->stack);
    invocation->stack.wait_spin = weft_vm_loop_stack_wait_spin;
    invocation->stack.wait_spin_user_data = invocation;
    status = weft_vm_interpreter_begin(&invocation->stack, instance, NULL,
                                       function_index, args, arg_count);
    if (!weft_status_is_ok(status)) {
      weft_vm_stack_deinitialize(&invocation->stack);
      weft_allocator_free(loop->allocator, invocation);
      invocation = NULL;
    }
  }
  if (weft_status_is_ok(status)) {
    weft_vm_context_retain(context);
    invocation->context = context;
    ++loop->live_count;
    weft_vm_loop_enqueue(loop, invocation);
    if (out_invocation) *out_invocation = invocation;
  }
  return status;
}

// The wait set's callback (any thread): hands the invocation back.
static void weft_vm_loop_wait_ready(void* user_data, weft_status_t status) {
  weft_vm_loop_invocation_t* invocation =
      (weft_vm_loop_invocation_t*)user_data;
  weft_vm_loop_t* loop = invocation->loop;
  // Counted before the push: the loop can only see the invocation (and
  // end, and be destroyed) after it, so destroy sees the count.
  weft_atomic_fetch_add(&loop->callbacks_in_flight, 1u, memory_order_relaxed);
  invocation->wait_status = status;
  // Release (inside the push): the loop sees |wait_status|.
  weft_mpsc_list_push(&loop->ready, &invocation->ready_entry);
  weft_notification_notify(&loop->notification, 1);
  if (loop->options.ready_fn) {
    loop->options.ready_fn(loop->options.ready_user_data);
  }
  // Release: the last touch of the loop.
  weft_atomic_fetch_sub(&loop->callbacks_in_flight, 1u, memory_order_release);
}

// With nothing else to run, watches |wait| (|invocation|'s) for the loop's
// spin budget before a wait set is made for it, as a host wait spins on
// the value before it sleeps: a value reached in that time resumes the
// invocation without a timepoint on the semaphore, a callback on the
// signalling thread and a notification of the loop. Only inside
// weft_vm_loop_run (|may_spin|), for all-of waits not cancelled; the spin
// ends early when another invocation is handed back, and at the wait's
// deadline. Returns true when every source was reached.
static bool weft_vm_loop_spin_reached(weft_vm_loop_invocation_t* invocation,
                                      const weft_vm_wait_frame_t* wait) {
  weft_vm_loop_t* loop = invocation->loop;
  if (!loop->may_spin || loop->run_head || loop->wait_policy.spin_ns <= 0 ||
      wait->mode != WEFT_WAIT_MODE_ALL || invocation->cancelled ||
      wait->deadline == WEFT_TIME_INFINITE_PAST) {
    return false;
  }
  const weft_semaphore_list_t list = weft_vm_wait_frame_list(wait);
  weft_time_t end = weft_time_now() + loop->wait_policy.spin_ns;
  if (end > wait->deadline) end = wait->deadline;
  for (uint32_t i = 1;; ++i) {
    if (weft_semaphore_list_is_reached(list)) return true;
    if ((i & 15) == 0) {
      if (!weft_mpsc_list_is_empty(&loop->ready) || weft_time_now() >= end) {
        return false;
      }
      // A spinner must not keep the signaller off a CPU it shares.
      weft_thread_yield();
    }
    weft_cpu_relax();
  }
}

// The stack's wait_spin hook: an await made without a frame (the common
// native call) spins here, inside the interpreter, so a wait met within
// the budget resumes the call in place, without a frame pushed and popped
// or a turn of the loop (VmAwait's ping-pong, 2 vCPUs: see
// docs/PERFORMANCE.md). A spin that ran out is not run again by
// weft_vm_loop_spin_wait for the same wait.
static bool weft_vm_loop_stack_wait_spin(void* user_data,
                                         const weft_vm_wait_frame_t* wait) {
  weft_vm_loop_invocation_t* invocation =
      (weft_vm_loop_invocation_t*)user_data;
  const bool reached = weft_vm_loop_spin_reached(invocation, wait);
  invocation->spun = !reached;
  return reached;
}

// Spins on the invocation's wait (weft_vm_loop_spin_reached) unless the
// interpreter already did; returns true when the invocation was resumed
// (enqueued).
static bool weft_vm_loop_spin_wait(weft_vm_loop_t* loop,
                                   weft_vm_loop_invocation_t* invocation) {
  weft_vm_wait_frame_t* wait = &invocation->stack.wait;
  const bool spun = invocation->spun;
  invocation->spun = false;
  if (spun || !weft_vm_loop_spin_reached(invocation, wait)) return false;
  weft_vm_wait_frame_clear(wait);
  weft_status_free(invocation->stack.wait_result);
  invocation->stack.wait_result = WEFT_OK;
  weft_vm_loop_enqueue(loop, invocation);
  return true;
}

// Starts waiting on the invocation's wait frame.
static weft_status_t weft_vm_loop_start_wait(
    weft_vm_loop_t* loop, weft_vm_loop_invocation_t* invocation) {
  weft_vm_wait_frame_t* wait = &invocation->stack.wait;
  weft_status_t status = WEFT_OK;
  if (weft_vm_loop_spin_wait(loop, invocation)) return WEFT_OK;
  if (wait->count > invocation->wait_set_capacity) {
    weft_wait_set_t* set = invocation->wait_set;
    status = weft_allocator_realloc(loop->allocator,
                                    weft_wait_set_storage_size(wait->count),
                                    (void**)&set);
    if (weft_status_is_ok(status)) {
      invocation->wait_set = set;
      invocation->wait_set_capacity = wait->count;
    }
  }
  if (weft_status_is_ok(status)) {
    invocation->waiting = true;
    invocation->wait_taken = false;
    invocation->deadline = wait->deadline;
    invocation->waiting_prev = NULL;
    invocation->waiting_next = loop->waiting_head;
    if (loop->waiting_head) loop->waiting_head->waiting_prev = invocation;
    loop->waiting_head = invocation;
    // May hand the invocation back inside this call.
    weft_wait_set_start(invocation->wait_set, wait->mode,
                        weft_vm_wait_frame_list(wait), wait->deadline,
                        weft_vm_loop_wait_ready, invocation);
    if (invocation->cancelled && !invocation->wait_taken) {
      invocation->wait_taken = true;
      weft_wait_set_cancel(invocation->wait_set,
                           weft_status_from_code(WEFT_STATUS_CANCELLED));
    }
  }
  return status;
}

// Moves every invocation the wait sets handed back to the run queue.
static void weft_vm_loop_take_ready(weft_vm_loop_t* loop) {
  if (weft_mpsc_list_is_empty(&loop->ready)) return;
  weft_mpsc_entry_t* entry = weft_mpsc_list_pop_all(&loop->ready);
  while (entry) {
    weft_mpsc_entry_t* next = entry->next;
    weft_vm_loop_invocation_t* invocation =
        weft_container_of(entry, weft_vm_loop_invocation_t, ready_entry);
    weft_vm_loop_unlink_waiting(loop, invocation);
    // The sources are released now that the set is done with them.
    weft_vm_wait_frame_clear(&invocation->stack.wait);
    weft_status_free(invocation->stack.wait_result);
    invocation->stack.wait_result = invocation->wait_status;
    invocation->wait_status = WEFT_OK;
    weft_vm_loop_enqueue(loop, invocation);
    entry = next;
  }
}

// Runs one turn of the run queue's first invocation.
static void weft_vm_loop_run_one(weft_vm_loop_t* loop) {
  weft_vm_loop_invocation_t* invocation = loop->run_head;
  loop->run_head = invocation->run_next;
  if (!loop->run_head) loop->run_tail = NULL;
  weft_vm_run_state_t state = WEFT_VM_RUN_YIELDED;
  weft_status_t status = WEFT_OK;
  if (invocation->cancelled && !invocation->wait_taken) {
    // Cancelled while runnable: it ends here.
    status = weft_vm_stack_annotate(
        &invocation->stack,
        WEFT_STATUS(CANCELLED, "the invocation was cancelled"));
  } else {
    status = weft_vm_interpreter_run(&invocation->stack,
                                     loop->options.turn_budget,
                                     invocation->results,
                                     invocation->result_count, &state);
  }
  if (!weft_status_is_ok(status) || state == WEFT_VM_RUN_DONE) {
    weft_vm_loop_finish(loop, invocation, status);
  } else if (state == WEFT_VM_RUN_YIELDED) {
    weft_vm_loop_enqueue(loop, invocation);
  } else {
    status = weft_vm_loop_start_wait(loop, invocation);
    if (!weft_status_is_ok(status)) {
      weft_vm_loop_finish(loop, invocation,
                          weft_vm_stack_annotate(&invocation->stack, status));
    }
  }
}

// Expires the waits whose deadline passed; returns the nearest deadline
// still ahead (WEFT_TIME_INFINITE_FUTURE if none).
static weft_time_t weft_vm_loop_expire(weft_vm_loop_t* loop, weft_time_t now) {
  weft_time_t nearest = WEFT_TIME_INFINITE_FUTURE;
  weft_vm_loop_invocation_t* invocation = loop->waiting_head;
  while (invocation) {
    weft_vm_loop_invocation_t* next = invocation->waiting_next;
    if (!invocation->wait_taken && invocation->deadline <= now) {
      invocation->wait_taken = true;
      // May hand the invocation back inside this call (it stays listed
      // until the loop takes it from |ready|).
      weft_wait_set_check_deadline(invocation->wait_set, now);
    } else if (!invocation->wait_taken && invocation->deadline < nearest) {
      nearest = invocation->deadline;
    }
    invocation = next;
  }
  return nearest;
}

// Runs invocations in turns until none can run now (each has ended or
// waits), expiring the deadlines that passed; returns the nearest deadline
// of a waiting invocation (WEFT_TIME_INFINITE_FUTURE: none).
static weft_time_t weft_vm_loop_run_until_idle(weft_vm_loop_t* loop) {
  for (;;) {
    weft_vm_loop_take_ready(loop);
    if (loop->run_head) {
      weft_vm_loop_run_one(loop);
      continue;
    }
    const weft_time_t wake = weft_vm_loop_expire(loop, weft_time_now());
    if (weft_mpsc_list_is_empty(&loop->ready)) return wake;
  }
}

weft_status_t weft_vm_loop_run(weft_vm_loop_t* loop, weft_time_t deadline) {
  weft_status_t status = weft_arguments_require(
      __func__, "loop", (const void* const[]){loop}, 1);
  if (!weft_status_is_ok(status)) return status;
  loop->may_spin = true;
  while (weft_status_is_ok(status) && loop->live_count > 0) {
    weft_time_t wake = weft_vm_loop_run_until_idle(loop);
    if (loop->live_count == 0) break;
    if (weft_time_now() >= deadline) {
      status = WEFT_STATUS(DEADLINE_EXCEEDED,
                           "the VM loop's deadline passed with %u "
                           "invocations still running",
                           loop->live_count);
      break;
    }
    if (deadline < wake) wake = deadline;
    weft_wait_token_t token =
        weft_notification_prepare_wait(&loop->notification);
    if (!weft_mpsc_list_is_empty(&loop->ready)) {
      weft_notification_cancel_wait(&loop->notification);
      continue;
    }
    weft_notification_commit_wait(&loop->notification, token,
                                  loop->wait_policy, wake);
  }
  loop->may_spin = false;
  return status;
}

weft_status_t weft_vm_loop_run_ready(weft_vm_loop_t* loop,
                                     weft_time_t* out_next_deadline) {
  if (out_next_deadline) *out_next_deadline = WEFT_TIME_INFINITE_FUTURE;
  weft_status_t status = weft_arguments_require(
      __func__, "loop,out_next_deadline",
      (const void* const[]){loop, out_next_deadline}, 2);
  if (weft_status_is_ok(status)) {
    const weft_time_t wake = weft_vm_loop_run_until_idle(loop);
    *out_next_deadline = loop->live_count ? wake : WEFT_TIME_INFINITE_FUTURE;
  }
  return status;
}

void weft_vm_loop_cancel(weft_vm_loop_t* loop,
                         weft_vm_loop_invocation_t* invocation) {
  if (!loop || !invocation) return;
  invocation->cancelled = true;
  if (invocation->waiting && !invocation->wait_taken) {
    invocation->wait_taken = true;
    // The set hands the invocation back with CANCELLED (or with what it
    // finished with first); the native call then fails with it.
    weft_wait_set_cancel(invocation->wait_set,
                         weft_status_from_code(WEFT_STATUS_CANCELLED));
  }
}

uint32_t weft_vm_loop_live_count(const weft_vm_loop_t* loop) {
  return loop ? loop->live_count : 0;
}

void weft_vm_loop_destroy(weft_vm_loop_t* loop) {
  if (!loop) return;
  // Cancel everything and run until every done function was called.
  for (weft_vm_loop_invocation_t* invocation = loop->run_head; invocation;
       invocation = invocation->run_next) {
    invocation->cancelled = true;
  }
  weft_vm_loop_invocation_t* invocation = loop->waiting_head;
  while (invocation) {
    weft_vm_loop_invocation_t* next = invocation->waiting_next;
    weft_vm_loop_cancel(loop, invocation);
    invocation = next;
  }
  weft_status_ignore(weft_vm_loop_run(loop, WEFT_TIME_INFINITE_FUTURE));
  // Acquire: pairs with the callbacks' last decrement. The window is a
  // notify, so yield rather than sleep.
  while (weft_atomic_load(&loop->callbacks_in_flight, memory_order_acquire)) {
    weft_thread_yield();
  }
  weft_notification_deinitialize(&loop->notification);
  weft_allocator_free(loop->allocator, loop);
}
