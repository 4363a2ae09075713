// weft: waiting threads that run work (see src/base/wait_assist.h).
//
// A fixed table of entries, each with a state word and a count of threads
// inside its function. Run: count in (seq_cst), then read the state
// (seq_cst); unregister: mark the entry leaving (seq_cst), then wait for the
// count to reach zero (seq_cst loads). In the single total order either
// the runner sees "leaving" and backs out, or unregister sees the runner
// and waits for it: no call starts on an entry being unregistered.

#include "base/wait_assist.h"

#include <sched.h>

#include "base/atomics.h"
#include "base/sched_counters.h"
#include "base/thread.h"

#define WEFT_WAIT_ASSIST_FREE 0u
#define WEFT_WAIT_ASSIST_CLAIMED 1u  // being filled by register
#define WEFT_WAIT_ASSIST_ACTIVE 2u
#define WEFT_WAIT_ASSIST_LEAVING 3u

typedef struct weft_wait_assist_entry_t {
  weft_atomic_uint32_t state;
  weft_atomic_uint32_t inside;
  weft_wait_assist_fn_t fn;
  _Atomic(weft_wait_assist_leave_fn_t) leave;
  void* user_data;
} weft_wait_assist_entry_t;

static weft_wait_assist_entry_t weft_wait_assist_entries
    [WEFT_WAIT_ASSIST_CAPACITY];
// Entries ACTIVE or LEAVING: the fast "nothing to do" test.
static weft_atomic_uint32_t weft_wait_assist_active_count;
// 1 on threads that weft started; >1 while inside an assistant.
static _Thread_local uint32_t weft_wait_assist_thread_depth;

weft_status_t weft_wait_assist_register(weft_wait_assist_fn_t fn,
                                        void* user_data, uint32_t* out_id) {
  for (uint32_t i = 0; i < WEFT_WAIT_ASSIST_CAPACITY; ++i) {
    weft_wait_assist_entry_t* entry = &weft_wait_assist_entries[i];
    uint32_t expected = WEFT_WAIT_ASSIST_FREE;
    // Acquire: the previous unregister's last reads are done.
    if (!weft_atomic_compare_exchange_strong(
            &entry->state, &expected, WEFT_WAIT_ASSIST_CLAIMED,
            memory_order_acquire, memory_order_relaxed)) {
      continue;
    }
    entry->fn = fn;
    weft_atomic_store(&entry->leave, NULL, memory_order_relaxed);
    entry->user_data = user_data;
    weft_atomic_fetch_add(&weft_wait_assist_active_count, 1,
                          memory_order_relaxed);
    // Release: runners that see ACTIVE see fn and user_data.
    weft_atomic_store(&entry->state, WEFT_WAIT_ASSIST_ACTIVE,
                      memory_order_release);
    *out_id = i;
    return WEFT_OK;
  }
  return WEFT_STATUS(RESOURCE_EXHAUSTED,
                     "wait_assist_register: all %u places are taken",
                     WEFT_WAIT_ASSIST_CAPACITY);
}

void weft_wait_assist_unregister(uint32_t id) {
  if (id >= WEFT_WAIT_ASSIST_CAPACITY) return;
  weft_wait_assist_entry_t* entry = &weft_wait_assist_entries[id];
  // seq_cst: unregister's half of the pair with run (see the file comment).
  weft_atomic_store(&entry->state, WEFT_WAIT_ASSIST_LEAVING,
                    memory_order_seq_cst);
  while (weft_atomic_load(&entry->inside, memory_order_seq_cst) != 0) {
    weft_thread_yield();
  }
  weft_atomic_fetch_sub(&weft_wait_assist_active_count, 1,
                        memory_order_relaxed);
  // Release: the next register sees this entry quiet.
  weft_atomic_store(&entry->state, WEFT_WAIT_ASSIST_FREE,
                    memory_order_release);
}

// Counts the caller into |entry| and says whether it may call the entry's
// functions (it is ACTIVE). seq_cst: the caller's half of the pair with
// unregister (see the file comment). Every enter is followed by an exit.
static bool weft_wait_assist_enter(weft_wait_assist_entry_t* entry) {
  weft_atomic_fetch_add(&entry->inside, 1, memory_order_seq_cst);
  return weft_atomic_load(&entry->state, memory_order_seq_cst) ==
         WEFT_WAIT_ASSIST_ACTIVE;
}

static void weft_wait_assist_exit(weft_wait_assist_entry_t* entry) {
  // Release: unregister's wait sees the caller's accesses done.
  weft_atomic_fetch_sub(&entry->inside, 1, memory_order_release);
}

// Threads in an assisting wait (begin_wait/end_wait), on a line of its own:
// two relaxed RMWs per wait.
static _Alignas(64) weft_atomic_uint32_t weft_wait_assist_waiting;

// Moves when an executor has work for a waiting host (own line).
static _Alignas(64) weft_atomic_uint32_t weft_wait_assist_work_generation;

uint32_t weft_wait_assist_generation(void) {
  return weft_atomic_load(&weft_wait_assist_work_generation,
                          memory_order_relaxed);
}

void weft_wait_assist_announce(void) {
  WEFT_SCHED_COUNT(RMW_EXECUTOR);
  weft_atomic_fetch_add(&weft_wait_assist_work_generation, 1,
                        memory_order_relaxed);
}

// Threads in an assisting wait per CPU they began it on (a hint: a thread
// may move), for CPUs below WEFT_WAIT_ASSIST_TRACKED_CPUS.
#define WEFT_WAIT_ASSIST_TRACKED_CPUS 1024
static weft_atomic_uint32_t
    weft_wait_assist_cpu_hosts[WEFT_WAIT_ASSIST_TRACKED_CPUS];
// The CPU the calling thread's assisting wait is counted on, or -1.
static _Thread_local int weft_wait_assist_wait_cpu = -1;

// Moves the calling thread's count from the CPU it is counted on (if any)
// to |cpu| (-1, or one not tracked: none).
static void weft_wait_assist_count_on_cpu(int cpu) {
  if (cpu < 0 || cpu >= WEFT_WAIT_ASSIST_TRACKED_CPUS) cpu = -1;
  if (cpu == weft_wait_assist_wait_cpu) return;
  if (cpu >= 0) {
    WEFT_SCHED_COUNT(RMW_EXECUTOR);
    weft_atomic_fetch_add(&weft_wait_assist_cpu_hosts[cpu], 1,
                          memory_order_relaxed);
  }
  if (weft_wait_assist_wait_cpu >= 0) {
    WEFT_SCHED_COUNT(RMW_EXECUTOR);
    weft_atomic_fetch_sub(
        &weft_wait_assist_cpu_hosts[weft_wait_assist_wait_cpu], 1,
        memory_order_relaxed);
  }
  weft_wait_assist_wait_cpu = cpu;
}

void weft_wait_assist_begin_wait(void) {
  WEFT_SCHED_COUNT(RMW_EXECUTOR);
  weft_atomic_fetch_add(&weft_wait_assist_waiting, 1, memory_order_relaxed);
  weft_wait_assist_count_on_cpu(sched_getcpu());
}

bool weft_wait_assist_host_on_cpu(uint32_t cpu) {
  return cpu < WEFT_WAIT_ASSIST_TRACKED_CPUS &&
         weft_atomic_load(&weft_wait_assist_cpu_hosts[cpu],
                          memory_order_relaxed) != 0;
}

void weft_wait_assist_set_leave(uint32_t id,
                                weft_wait_assist_leave_fn_t leave) {
  if (id >= WEFT_WAIT_ASSIST_CAPACITY) return;
  // Relaxed: read under the entry's inside count (as fn is).
  weft_atomic_store(&weft_wait_assist_entries[id].leave, leave,
                    memory_order_relaxed);
}

void weft_wait_assist_end_wait(void) {
  weft_wait_assist_count_on_cpu(-1);
  WEFT_SCHED_COUNT(RMW_EXECUTOR);
  // seq_cst: executors that read the count after this (to decide their
  // wakes) see us gone, or our leave hooks below see their work.
  weft_atomic_fetch_sub(&weft_wait_assist_waiting, 1, memory_order_seq_cst);
  if (weft_wait_assist_thread_depth != 0 ||
      weft_atomic_load(&weft_wait_assist_active_count, memory_order_relaxed) ==
          0) {
    return;
  }
  weft_wait_assist_thread_depth = 2;
  for (uint32_t i = 0; i < WEFT_WAIT_ASSIST_CAPACITY; ++i) {
    weft_wait_assist_entry_t* entry = &weft_wait_assist_entries[i];
    if (weft_atomic_load(&entry->state, memory_order_relaxed) !=
        WEFT_WAIT_ASSIST_ACTIVE) {
      continue;
    }
    if (weft_wait_assist_enter(entry)) {
      weft_wait_assist_leave_fn_t leave =
          weft_atomic_load(&entry->leave, memory_order_relaxed);
      if (leave) leave(entry->user_data);
    }
    weft_wait_assist_exit(entry);
  }
  weft_wait_assist_thread_depth = 0;
}

uint32_t weft_wait_assist_waiting_count(void) {
  return weft_atomic_load(&weft_wait_assist_waiting, memory_order_relaxed);
}

uint32_t weft_wait_assist_waiting_count_seq_cst(void) {
  return weft_atomic_load(&weft_wait_assist_waiting, memory_order_seq_cst);
}

bool weft_wait_assist_available(void) {
  return weft_wait_assist_thread_depth == 0 &&
         weft_atomic_load(&weft_wait_assist_active_count,
                          memory_order_relaxed) != 0;
}

weft_wait_assist_result_t weft_wait_assist_run(void) {
  if (!weft_wait_assist_available()) return WEFT_WAIT_ASSIST_IDLE;
  // A thread in an assisting wait is counted on the CPU it runs on now:
  // the OS moves a waiting host (a decode's wait lasts the whole sequence),
  // and a stale CPU makes the wrong worker step aside. sched_getcpu reads
  // the kernel's rseq area.
  if (weft_wait_assist_wait_cpu >= 0) {
    weft_wait_assist_count_on_cpu(sched_getcpu());
  }
  weft_wait_assist_result_t result = WEFT_WAIT_ASSIST_IDLE;
  weft_wait_assist_thread_depth = 2;
  for (uint32_t i = 0;
       i < WEFT_WAIT_ASSIST_CAPACITY && result != WEFT_WAIT_ASSIST_RAN; ++i) {
    weft_wait_assist_entry_t* entry = &weft_wait_assist_entries[i];
    if (weft_atomic_load(&entry->state, memory_order_relaxed) !=
        WEFT_WAIT_ASSIST_ACTIVE) {
      continue;
    }
    if (weft_wait_assist_enter(entry)) {
      weft_wait_assist_result_t found = entry->fn(entry->user_data);
      if (found > result) result = found;
    }
    weft_wait_assist_exit(entry);
  }
  weft_wait_assist_thread_depth = 0;
  WEFT_SCHED_COUNT(ASSIST_POLL);
  if (result == WEFT_WAIT_ASSIST_RAN) WEFT_SCHED_COUNT(ASSIST_RAN);
  return result;
}

void weft_wait_assist_exclude_thread(void) {
  weft_wait_assist_thread_depth = 1;
}
