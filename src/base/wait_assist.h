// weft: work a waiting application thread runs instead of spinning.
//
// A thread that waits for a semaphore a CPU device will signal would spin
// or sleep beside the workers doing that work: one thread more than the
// CPUs, and on a machine whose every CPU runs a worker the preempted one
// holds up everything. Executors register an assistant here; a host wait
// calls weft_wait_assist_run between its checks, which drains work of a
// registered executor on the waiting thread (bounded, so the wait sees its
// own signal soon after it lands), and keeps spinning rather than sleeping
// while that executor is busy, so it is there for the next region.
//
// Threads that weft starts (workers, completion and I/O threads) never
// assist: their own work must not wait behind someone else's.
//
// Threading: everything is safe from any thread. An assistant is called
// with no lock held; unregister returns only once no thread is inside it.
#ifndef WEFT_BASE_WAIT_ASSIST_H_
#define WEFT_BASE_WAIT_ASSIST_H_

#include <stdbool.h>
#include <stdint.h>

#include "weft/status.h"

// What an assistant found.
typedef enum weft_wait_assist_result_e {
  // Nothing running: the waiter may go to sleep.
  WEFT_WAIT_ASSIST_IDLE = 0,
  // Work is running that wants no more threads now (a region with fewer
  // tiles than drainers, say) but may soon: keep spinning, look again.
  WEFT_WAIT_ASSIST_BUSY = 1,
  // Ran some work on the calling thread.
  WEFT_WAIT_ASSIST_RAN = 2,
} weft_wait_assist_result_t;

// Runs some of the registrant's work on the calling thread, if it wants a
// thread now (the caller re-checks what it waits for after each call).
typedef weft_wait_assist_result_t (*weft_wait_assist_fn_t)(void* user_data);

// Assistants registered at once, process-wide.
#define WEFT_WAIT_ASSIST_CAPACITY 32u

// Registers |fn| with |user_data|; |out_id| identifies it for unregister.
// RESOURCE_EXHAUSTED when WEFT_WAIT_ASSIST_CAPACITY are registered (the
// caller then runs without assistance).
weft_status_t weft_wait_assist_register(weft_wait_assist_fn_t fn,
                                        void* user_data, uint32_t* out_id);

// Called on a thread leaving an assisting wait (weft_wait_assist_end_wait),
// after it stopped counting: work it left undone must find another thread.
typedef void (*weft_wait_assist_leave_fn_t)(void* user_data);

// Sets |id|'s leave hook (NULL: none). Call right after register.
void weft_wait_assist_set_leave(uint32_t id, weft_wait_assist_leave_fn_t leave);

// Unregisters |id|; returns once no thread runs its function.
void weft_wait_assist_unregister(uint32_t id);

// True when the calling thread may assist and some assistant is
// registered: a relaxed load and a thread-local read.
bool weft_wait_assist_available(void);

// Calls registered assistants (not from a weft thread, not nested inside
// one) until one runs work: RAN then, else BUSY when one was busy, else
// IDLE.
weft_wait_assist_result_t weft_wait_assist_run(void);

// Brackets a host wait that assists (spins and runs work between its
// checks): such a thread holds a CPU, and executors count the threads
// inside a bracket against their CPUs when they decide how many workers to
// wake (src/task/executor.c). Balanced, not nested. end_wait calls every
// registered leave hook.
void weft_wait_assist_begin_wait(void);
void weft_wait_assist_end_wait(void);

// A count that moves whenever some executor has new work a waiting host
// could run (a compute slot opened or wants more drainers). A spinning host
// wait watches it beside its own value, so it looks for work at once
// rather than at the end of its slice. announce: one relaxed RMW.
uint32_t weft_wait_assist_generation(void);
void weft_wait_assist_announce(void);

// True when a thread began an assisting wait on CPU |cpu| and is still in
// it (relaxed; a hint: the thread may have moved since). An idle worker
// pinned there steps aside for it (src/task/executor.c).
bool weft_wait_assist_host_on_cpu(uint32_t cpu);

// Threads inside a begin/end bracket now, process-wide (relaxed; a hint).
uint32_t weft_wait_assist_waiting_count(void);
// The same with a seq_cst load (the waker's half of the pair with
// end_wait, after its own seq_cst fence).
uint32_t weft_wait_assist_waiting_count_seq_cst(void);

// Marks the calling thread as one of weft's own: it never assists. Called
// by weft_thread_create's start routine.
void weft_wait_assist_exclude_thread(void);

#endif  // WEFT_BASE_WAIT_ASSIST_H_
