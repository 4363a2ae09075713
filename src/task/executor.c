// weft: the executor (see src/task/executor.h).
//
// Immediate list (budget-1 processes): producers push with one CAS on a
// Treiber stack (weft_mpsc_list_t); a consumer takes the whole stack into a
// private FIFO chain and pops from that. Consumers are serialised by a
// try-flag that nobody waits on: a worker that finds it taken moves on (the
// holder pops one process and lets go within a few instructions, and the
// idle re-check below sees the list non-empty, so nothing is stranded).
//
// Compute slots (budget > 1 processes): each slot has one 32-bit word,
//   bits 0..23  workers inside (entered and not yet left),
//   bits 24..31 slot state: EMPTY, RESERVED (being filled), OPEN (workers
//               may enter), CLOSED (no new entries; drainers leaving),
//               FINALIZING (the last one out is freeing it).
// A worker enters with fetch_add(1) and stays only if the state it read was
// OPEN and fewer than the process's desired workers were inside; the
// process pointer is stable while it is counted. Closing keeps the count;
// the decrement that leaves CLOSED|0 elects one finalizer by CAS, which
// releases the process (completed) or makes it IDLE / places it again
// (retired after NO_WORK), then frees the slot and promotes a process from
// the overflow list. Because every counter lives in executor memory, a
// worker that read a stale slot never touches freed process memory.
//
// Sleep/wake (Dekker): the worker sets its idle bit with a seq_cst RMW,
// then re-checks for work with seq_cst loads; a scheduler publishes its work
// (RMW) and issues a seq_cst fence before loading the idle mask. In the
// single total order one of them sees the other. The worker prepares its
// notification wait before setting its bit, so a notify between the re-check
// and the wait is not lost.

#include "task/executor.h"

#include <sched.h>

#include <stdio.h>
#include <string.h>

#include "base/notification.h"
#include "base/sched_counters.h"
#include "base/thread.h"
#include "base/trace.h"
#include "base/wait_assist.h"
#include "base/wait_policy.h"
#include "task/affinity_set.h"

#define WEFT_EXECUTOR_CACHE_LINE 64

// Slot word layout.
#define WEFT_SLOT_COUNT_MASK 0x00FFFFFFu
#define WEFT_SLOT_STATE_SHIFT 24
#define WEFT_SLOT_EMPTY 0u
#define WEFT_SLOT_RESERVED 1u
#define WEFT_SLOT_OPEN 2u
#define WEFT_SLOT_CLOSED 3u
#define WEFT_SLOT_FINALIZING 4u
#define WEFT_SLOT_STATE(word) ((word) >> WEFT_SLOT_STATE_SHIFT)
#define WEFT_SLOT_COUNT(word) ((word)&WEFT_SLOT_COUNT_MASK)
#define WEFT_SLOT_WORD(state, count) \
  (((uint32_t)(state) << WEFT_SLOT_STATE_SHIFT) | (uint32_t)(count))

// Drains of one budget-1 process in a row when nothing else waits on the
// immediate list (saves the push/pop round trip; bounded for fairness).
#define WEFT_EXECUTOR_IMMEDIATE_REDRAIN_LIMIT 8
// Drains of a compute process in a row before the worker leaves its slot
// and looks at the immediate list (so budget-1 processes are not starved).
#define WEFT_EXECUTOR_SLOT_SESSION_DRAINS 16
// Workers each woken worker wakes in turn while the desired-wake count is
// positive (a fan-out tree rather than a chain; see
// weft_executor_relay_wake for the depth bound).
#define WEFT_EXECUTOR_RELAY_FANOUT 2
// CPUs of a worker's pinning that the executor tracks (a physical core's).
#define WEFT_EXECUTOR_HOME_CPUS 4

// A list any thread pushes to and one consumer at a time (try-flag) pops.
typedef struct weft_executor_list_t {
  weft_mpsc_list_t shared;
  char pad0[WEFT_EXECUTOR_CACHE_LINE - sizeof(weft_mpsc_list_t)];
  // 1 while a consumer holds the list.
  weft_atomic_uint32_t consumer_busy;
  // Entries already taken from |shared|, oldest first. Written under
  // |consumer_busy|; read racily by the idle re-check.
  _Atomic(weft_mpsc_entry_t*) private_head;
  char pad1[WEFT_EXECUTOR_CACHE_LINE - sizeof(weft_atomic_uint32_t) -
            sizeof(weft_mpsc_entry_t*)];
} weft_executor_list_t;

typedef struct weft_executor_slot_t {
  weft_atomic_uint32_t word;
  // Desired workers of the process, refreshed by entering workers: lets the
  // idle re-check tell a full slot from one that wants help without
  // touching the process.
  weft_atomic_uint32_t limit;
  // Written while RESERVED, read by counted workers and the finalizer.
  weft_process_t* process;
  char pad[WEFT_EXECUTOR_CACHE_LINE - 2 * sizeof(weft_atomic_uint32_t) -
           sizeof(weft_process_t*)];
} weft_executor_slot_t;

typedef struct weft_executor_worker_t {
  weft_executor_t* executor;
  weft_thread_t* thread;
  uint32_t index;
  char pad0[WEFT_EXECUTOR_CACHE_LINE];
  // Written by wakers.
  weft_notification_t notification;
  // The wake's depth, written before its notify: 1 for a wake by the thread
  // that placed the work, a relaying worker's own depth + 1 for a relayed
  // one (weft_executor_relay_wake).
  weft_atomic_uint32_t wake_depth;
  // The CPUs the worker is pinned to, when it is pinned to at most
  // WEFT_EXECUTOR_HOME_CPUS (home_cpu_count 0: anywhere). A host in an
  // assisting wait on one of them takes this worker's place.
  uint32_t home_cpu_count;
  uint32_t home_cpus[WEFT_EXECUTOR_HOME_CPUS];
  char pad1[WEFT_EXECUTOR_CACHE_LINE];
} weft_executor_worker_t;

struct weft_executor_t {
  weft_ref_count_t ref_count;
  weft_allocator_t allocator;
  uint32_t worker_count;
  // Drainer indices worker_count..worker_count+guest_count-1 belong to
  // waiting threads that assist (weft_executor_assist).
  uint32_t guest_count;
  // The registration with src/base/wait_assist.h; UINT32_MAX when none.
  // Atomic: set after the workers start, read by them (relaxed: a hint for
  // their spin and wake choices; the table's own state publishes the rest).
  weft_atomic_uint32_t assist_id;
  uint32_t slot_count;
  uint32_t idle_word_count;
  // CPUs this process may use: compute wakes keep the awake workers and
  // the threads in an assisting host wait within them.
  uint32_t cpu_count;
  weft_wait_policy_t wait_policy;
  size_t local_memory_size;
  size_t local_memory_stride;
  char* local_memory;  // 64-byte aligned, inside |local_memory_block|
  void* local_memory_block;
  weft_executor_worker_t* workers;
  weft_executor_slot_t* slots;
  // Idle workers that may spin at once (the CPUs left beside the thread
  // that gives them work); 0 = never spin.
  uint32_t max_spinners;
  // Bit i set: worker i is idle (about to wait, spinning or blocked).
  // Clearing a set bit claims the worker for a wake.
  weft_atomic_uint64_t* idle_mask;
  // Bit i set: idle worker i is spinning (wakes prefer it: no syscall on
  // either side). A hint; |idle_mask| decides.
  weft_atomic_uint64_t* spinning_mask;
  char pad0[WEFT_EXECUTOR_CACHE_LINE];
  weft_atomic_uint32_t spinner_count;
  char pad2[WEFT_EXECUTOR_CACHE_LINE];
  // Wakes wanted beyond the one a scheduler made itself (relayed).
  weft_atomic_int32_t desired_wake;
  // ceil(log2(worker_count)), at least 1: the deepest a wake may be, counted
  // from the thread that placed the work (weft_executor_relay_wake).
  uint32_t wake_depth_bound;
  weft_atomic_uint32_t shutting_down;
  char pad1[WEFT_EXECUTOR_CACHE_LINE];
  weft_executor_list_t immediate;
  weft_executor_list_t overflow;
  // Bit g set: guest index worker_count + g is taken by an assisting thread.
  weft_atomic_uint64_t guest_mask;
  // Hosts between weft_executor_host_drain_begin and _end: each takes a CPU
  // for the compute wakes' cap, as a thread in an assisting wait does
  // (counted only with guests).
  weft_atomic_uint32_t host_drains;
  char pad3[WEFT_EXECUTOR_CACHE_LINE - sizeof(weft_atomic_uint64_t) -
            sizeof(weft_atomic_uint32_t)];
  // The worker whose CPU a host in an assisting wait (or draining work it
  // submitted) takes, when every CPU has a worker and there are guests:
  // while such a host is there the standby drains no compute, does not
  // spin and is woken last, so the host and the other workers drain one
  // thread per CPU (weft_executor_standby_steps_aside).
  // UINT32_MAX: none.
  uint32_t standby_index;
};

// True when this executor's assistant is registered (its guests drain).
static bool weft_executor_has_assistant(const weft_executor_t* executor) {
  return weft_atomic_load((weft_atomic_uint32_t*)&executor->assist_id,
                          memory_order_relaxed) != UINT32_MAX;
}

// True when a host takes a CPU from this executor's workers now: one in an
// assisting wait, or one draining work it submitted. Relaxed: a hint (see
// weft_executor_standby_steps_aside for why a stale answer is safe).
static bool weft_executor_hosts_present(const weft_executor_t* executor) {
  return weft_wait_assist_waiting_count() != 0 ||
         weft_atomic_load((weft_atomic_uint32_t*)&executor->host_drains,
                          memory_order_relaxed) != 0;
}

// True when |worker| is the standby and a host is there to take its place.
// The standby then drains no compute slot, does not spin, and is woken only
// when no other worker is idle. It still takes processes off the immediate
// list (and re-checks that list before it sleeps): a host drains only
// compute, so a control process or host call must find a worker even while
// the others are busy or blocked. Compute it leaves is safe from lost
// wakes: the host drains it, and the host's leave hook
// (weft_executor_assist_leave) wakes workers for what compute slots still
// want once no host is counted.
static bool weft_executor_standby_steps_aside(
    const weft_executor_t* executor, const weft_executor_worker_t* worker) {
  return worker->index == executor->standby_index &&
         weft_executor_hosts_present(executor);
}

// True when a thread in an assisting host wait sits on |worker|'s CPUs: the
// worker steps aside (neither spins nor is woken first) so that the host
// and the workers on the other CPUs drain, one thread per CPU. Without
// this, the host shares the CPU of the pinned worker doing the work while
// the other CPU's worker sleeps (the kernel does not move a thread that
// keeps running), and starves until that worker yields.
static bool weft_executor_worker_yields_to_host(
    const weft_executor_worker_t* worker) {
  // With a standby, it alone steps aside (whichever CPU the host is on).
  if (worker->executor->standby_index != UINT32_MAX) return false;
  for (uint32_t i = 0; i < worker->home_cpu_count; ++i) {
    if (weft_wait_assist_host_on_cpu(worker->home_cpus[i])) return true;
  }
  return false;
}

//===----------------------------------------------------------------------===//
// Lists
//===----------------------------------------------------------------------===//

static void weft_executor_list_initialize(weft_executor_list_t* list) {
  weft_mpsc_list_initialize(&list->shared);
  atomic_init(&list->consumer_busy, 0);
  atomic_init(&list->private_head, NULL);
}

// Racy emptiness test (seq_cst: part of the idle re-check's Dekker pair).
static bool weft_executor_list_is_empty(weft_executor_list_t* list) {
  return weft_atomic_load(&list->shared.head, memory_order_seq_cst) == NULL &&
         weft_atomic_load(&list->private_head, memory_order_seq_cst) == NULL;
}

static void weft_executor_list_push(weft_executor_list_t* list,
                                    weft_process_t* process) {
  WEFT_SCHED_COUNT(RMW_LIST);
  weft_mpsc_list_push(&list->shared, &process->list_entry);
}

// Tries to become the list's consumer. Acquire: sees what the previous
// consumer wrote to |private_head|.
static bool weft_executor_list_try_acquire(weft_executor_list_t* list) {
  if (weft_atomic_load(&list->consumer_busy, memory_order_relaxed)) {
    return false;
  }
  WEFT_SCHED_COUNT(RMW_LIST);
  return weft_atomic_exchange(&list->consumer_busy, 1, memory_order_acquire) ==
         0;
}

// seq_cst: a release for the next consumer, and ordered before the holder's
// re-check of the work it gave up on (see promote_overflow).
static void weft_executor_list_release(weft_executor_list_t* list) {
  weft_atomic_store(&list->consumer_busy, 0, memory_order_seq_cst);
}

// Pops the oldest entry; the caller holds the consumer flag.
static weft_process_t* weft_executor_list_pop_locked(
    weft_executor_list_t* list) {
  weft_mpsc_entry_t* entry =
      weft_atomic_load(&list->private_head, memory_order_relaxed);
  if (!entry) {
    WEFT_SCHED_COUNT(RMW_LIST);
    entry = weft_mpsc_list_pop_all(&list->shared);
  }
  if (!entry) return NULL;
  weft_atomic_store(&list->private_head, entry->next, memory_order_relaxed);
  entry->next = NULL;
  return weft_container_of(entry, weft_process_t, list_entry);
}

// Puts |process| back as the oldest entry; the caller holds the flag.
static void weft_executor_list_unpop_locked(weft_executor_list_t* list,
                                            weft_process_t* process) {
  process->list_entry.next =
      weft_atomic_load(&list->private_head, memory_order_relaxed);
  weft_atomic_store(&list->private_head, &process->list_entry,
                    memory_order_relaxed);
}

// Pops the oldest entry, or NULL when the list is empty or another consumer
// holds it. |out_more| says whether entries remain.
static weft_process_t* weft_executor_list_try_pop(weft_executor_list_t* list,
                                                  bool* out_more) {
  *out_more = false;
  if (weft_atomic_load(&list->shared.head, memory_order_relaxed) == NULL &&
      weft_atomic_load(&list->private_head, memory_order_relaxed) == NULL) {
    return NULL;
  }
  if (!weft_executor_list_try_acquire(list)) return NULL;
  weft_process_t* process = weft_executor_list_pop_locked(list);
  *out_more =
      weft_atomic_load(&list->private_head, memory_order_relaxed) != NULL ||
      weft_atomic_load(&list->shared.head, memory_order_relaxed) != NULL;
  weft_executor_list_release(list);
  return process;
}

//===----------------------------------------------------------------------===//
// Waking workers
//===----------------------------------------------------------------------===//

// Tries to claim one worker of |candidates| (bits of idle word |w|) and
// notifies it, a wake at |depth|. Returns true when it woke one.
static bool weft_executor_claim_one(weft_executor_t* executor, uint32_t w,
                                    uint64_t candidates, uint32_t depth) {
  while (candidates) {
    uint64_t bit = candidates & (~candidates + 1);
    // Relaxed: the claim only decides who notifies; the notification orders
    // the wake itself.
    WEFT_SCHED_COUNT(RMW_EXECUTOR);
    uint64_t previous = weft_atomic_fetch_and(&executor->idle_mask[w], ~bit,
                                              memory_order_relaxed);
    if (previous & bit) {
      uint32_t index = w * 64 + (uint32_t)__builtin_ctzll(bit);
      weft_executor_worker_t* worker = &executor->workers[index];
      WEFT_SCHED_COUNT(WAKE);
      // Relaxed: the notify's epoch bump (seq_cst) publishes it.
      weft_atomic_store(&worker->wake_depth, depth, memory_order_relaxed);
      weft_notification_notify(&worker->notification, 1);
      return true;
    }
    candidates &= previous & ~bit;
  }
  return false;
}

// The workers among |candidates| (bits of idle word |w|) that step aside for
// an assisting host on their CPU; 0 at once when no host assists.
static uint64_t weft_executor_yielding_workers(weft_executor_t* executor,
                                               uint32_t w,
                                               uint64_t candidates) {
  if (!weft_executor_has_assistant(executor) ||
      weft_wait_assist_waiting_count() == 0) {
    return 0;
  }
  uint64_t yielding = 0;
  for (uint64_t rest = candidates; rest; rest &= rest - 1) {
    uint32_t bit = (uint32_t)__builtin_ctzll(rest);
    if (weft_executor_worker_yields_to_host(&executor->workers[w * 64 + bit])) {
      yielding |= 1ull << bit;
    }
  }
  return yielding;
}

// Claims one of |idle| (bits of idle word |w|) and notifies it, a wake at
// |depth|: a spinning one first (no syscall on either side), those on an
// assisting host's CPU after the others; then sleepers.
static bool weft_executor_wake_one_of(weft_executor_t* executor, uint32_t w,
                                      uint64_t idle, uint32_t depth) {
  if (!idle) return false;
  uint64_t spinning =
      weft_atomic_load(&executor->spinning_mask[w], memory_order_relaxed);
  uint64_t yielding = weft_executor_yielding_workers(executor, w, idle);
  if (yielding &&
      weft_executor_claim_one(executor, w, idle & spinning & ~yielding,
                              depth)) {
    return true;
  }
  if (weft_executor_claim_one(executor, w, idle & spinning, depth)) {
    return true;
  }
  return weft_executor_claim_one(executor, w, idle, depth);
}

// Claims one idle worker, a spinning one first, and notifies it, a wake at
// |depth|. Returns false when none is idle. The caller has issued the
// seq_cst fence.
static bool weft_executor_wake_one(weft_executor_t* executor, uint32_t depth) {
  for (uint32_t w = 0; w < executor->idle_word_count; ++w) {
    // seq_cst: the load half of the scheduler's side of the Dekker pair.
    uint64_t idle =
        weft_atomic_load(&executor->idle_mask[w], memory_order_seq_cst);
    if (!idle) continue;
    // The standby stepping aside is the last choice, after the others in
    // their usual order (its word is the last one holding workers, so the
    // earlier words were tried first).
    uint64_t standby = 0;
    if (executor->standby_index / 64 == w &&
        weft_executor_hosts_present(executor)) {
      standby = idle & (1ull << (executor->standby_index % 64));
      idle &= ~standby;
    }
    if (weft_executor_wake_one_of(executor, w, idle, depth) ||
        (standby && weft_executor_claim_one(executor, w, standby, depth))) {
      return true;
    }
  }
  return false;
}

// CPUs taken by awake workers and by threads in an assisting host wait,
// or 0 when no such host waits (or this executor has no guests: its hosts
// are not counted). |hosts| is the host count read by the caller.
static uint32_t weft_executor_cpus_taken(weft_executor_t* executor,
                                         uint32_t hosts) {
  if (hosts == 0 || executor->guest_count == 0) return 0;
  uint32_t awake =
      executor->worker_count - weft_executor_idle_worker_count(executor);
  return awake + hosts;
}

// Compute wakes wanted |count| (the caller issued the seq_cst fence): fewer
// when the CPUs are taken by awake workers and threads in an assisting host
// wait. Those hosts drain the compute slots themselves, and a host leaving
// its wait wakes workers for what is left (weft_executor_assist_leave), so
// a capped wake strands nothing; more runnable drainers than CPUs would
// leave one preempted with a tile, holding up its region for a time slice.
static uint32_t weft_executor_drainer_wake_budget(weft_executor_t* executor,
                                                  uint32_t count) {
  // seq_cst: the pair with weft_wait_assist_end_wait (see there). A host
  // draining a process it claimed counts too (relaxed: it is this thread,
  // placing the work, or a hint).
  uint32_t taken = weft_executor_cpus_taken(
      executor,
      weft_wait_assist_waiting_count_seq_cst() +
          weft_atomic_load(&executor->host_drains, memory_order_relaxed));
  if (taken == 0) return count;
  uint32_t budget =
      executor->cpu_count > taken ? executor->cpu_count - taken : 0;
  return count < budget ? count : budget;
}

// Whether idle (or lingering, |awake|) |worker| may spin beside
// |other_spinners|: not when the awake workers and assisting hosts already
// take the CPUs (a spinner then only delays them, and the assisting host
// drains what it waits for), nor, for the last free CPU, when it is where
// an assisting host sits (measured on 2 CPUs: spinning there anyway,
// yielding at every turn or for a few microseconds first, made
// SmallDispatchChain 1.5-2x slower).
static bool weft_executor_may_spin(weft_executor_t* executor,
                                   const weft_executor_worker_t* worker,
                                   uint32_t other_spinners, bool awake) {
  if (weft_executor_standby_steps_aside(executor, worker)) return false;
  uint32_t taken = weft_executor_cpus_taken(
      executor, weft_wait_assist_waiting_count());
  if (taken == 0) return true;
  // An awake caller (a lingering drain) is in |taken| itself.
  if (awake) --taken;
  if (taken + other_spinners >= executor->cpu_count) return false;
  // The last free CPU: not when it is the assisting host's own.
  return taken + other_spinners + 1 < executor->cpu_count ||
         !weft_executor_worker_yields_to_host(worker);
}

// Wakes up to WEFT_EXECUTOR_RELAY_FANOUT of |count| workers here and leaves
// the rest to relays (the root of the fan-out tree, so |count| wakes take
// about log2(count) hand-offs). The caller issued the seq_cst fence.
static void weft_executor_wake_fanned(weft_executor_t* executor,
                                      uint32_t count) {
  if (count > executor->worker_count) count = executor->worker_count;
  uint32_t woken = 0;
  while (woken < count && woken < WEFT_EXECUTOR_RELAY_FANOUT) {
    // Depth 1: the chain is counted from the thread that placed the work.
    if (!weft_executor_wake_one(executor, 1)) return;
    ++woken;
  }
  if (count > woken) {
    // Relaxed: a hint for relaying workers; the work itself is published.
    WEFT_SCHED_COUNT(RMW_RELAY);
    weft_atomic_fetch_add(&executor->desired_wake, (int32_t)(count - woken),
                          memory_order_relaxed);
  }
}

void weft_executor_wake_drainers(weft_executor_t* executor, uint32_t count) {
  if (count == 0) return;
  // A host spinning in an assisting wait comes to look at once.
  if (weft_wait_assist_waiting_count() != 0 &&
      weft_executor_has_assistant(executor)) {
    weft_wait_assist_announce();
  }
  // seq_cst fence: as in wake_workers; also before the hosts' count.
  weft_atomic_thread_fence(memory_order_seq_cst);
  weft_executor_wake_fanned(
      executor, weft_executor_drainer_wake_budget(executor, count));
}

void weft_executor_wake_workers(weft_executor_t* executor, uint32_t count) {
  if (count == 0) return;
  // seq_cst fence: orders the caller's publication of work before the
  // idle-mask loads (StoreLoad; the scheduler's half of the Dekker pair).
  weft_atomic_thread_fence(memory_order_seq_cst);
  weft_executor_wake_fanned(executor, count);
}

// A woken (or busy) worker passes wakes on while some are wanted: up to
// WEFT_EXECUTOR_RELAY_FANOUT, so the wakes of one placement form a tree.
// The count is shared, so the tree's shape is the order the woken run in
// (on oversubscribed CPUs one branch may take most of it); the depth is
// bounded all the same: a worker one short of wake_depth_bound wakes all
// that are still wanted, and one at the bound wakes none before it starts
// work (its wakes would pass the bound; once it works, its depth is 0).
// So a placement onto N sleeping workers reaches the last of them within
// ceil(log2 N) hand-offs (asserted on counts: local_task.counts). |depth|
// is the relaying worker's: its wake's, or 0 once it has worked since.
static void weft_executor_relay_wake(weft_executor_t* executor,
                                     uint32_t depth) {
  if (depth >= executor->wake_depth_bound) return;
  const uint32_t fanout = depth + 1 >= executor->wake_depth_bound
                              ? UINT32_MAX
                              : WEFT_EXECUTOR_RELAY_FANOUT;
  int32_t desired =
      weft_atomic_load(&executor->desired_wake, memory_order_relaxed);
  uint32_t woken = 0;
  while (woken < fanout && desired > 0) {
    // Relaxed: a counter of hints (see wake_workers). A lost race reloads
    // |desired| and tries again: only a wake uses up the fan-out.
    WEFT_SCHED_COUNT(RMW_RELAY);
    if (!weft_atomic_compare_exchange_weak(&executor->desired_wake, &desired,
                                           desired - 1, memory_order_relaxed,
                                           memory_order_relaxed)) {
      continue;
    }
    weft_atomic_thread_fence(memory_order_seq_cst);
    if (!weft_executor_wake_one(executor, depth + 1)) {
      // Nobody left to wake: the rest of the count is stale.
      weft_atomic_store(&executor->desired_wake, 0, memory_order_relaxed);
      break;
    }
    WEFT_SCHED_COUNT(WAKE_RELAYED);
    ++woken;
    desired = desired - 1;
  }
}

//===----------------------------------------------------------------------===//
// Compute slots
//===----------------------------------------------------------------------===//

static void weft_executor_promote_overflow(weft_executor_t* executor);

// Tries to put |process| into a free slot; wakes its desired workers.
static bool weft_executor_try_place(weft_executor_t* executor,
                                    weft_process_t* process) {
  for (uint32_t i = 0; i < executor->slot_count; ++i) {
    weft_executor_slot_t* slot = &executor->slots[i];
    uint32_t expected = WEFT_SLOT_WORD(WEFT_SLOT_EMPTY, 0);
    if (weft_atomic_load(&slot->word, memory_order_relaxed) != expected) {
      continue;
    }
    WEFT_SCHED_COUNT(RMW_SLOT);
    // Acquire: the previous finalizer's writes to the slot are done.
    if (!weft_atomic_compare_exchange_strong(
            &slot->word, &expected, WEFT_SLOT_WORD(WEFT_SLOT_RESERVED, 0),
            memory_order_acquire, memory_order_relaxed)) {
      continue;
    }
    uint32_t desired = weft_process_desired_workers(process);
    slot->process = process;
    weft_atomic_store(&slot->limit, desired, memory_order_relaxed);
    // seq_cst: release publishes |process| to workers that enter (acquire);
    // seq_cst also orders it before wake_workers' idle-mask load.
    WEFT_SCHED_COUNT(RMW_SLOT);
    weft_atomic_fetch_add(&slot->word,
                          (uint32_t)(WEFT_SLOT_OPEN - WEFT_SLOT_RESERVED)
                              << WEFT_SLOT_STATE_SHIFT,
                          memory_order_seq_cst);
    weft_executor_wake_drainers(executor, desired);
    return true;
  }
  return false;
}

static void weft_executor_place(weft_executor_t* executor,
                                weft_process_t* process) {
  if (weft_executor_try_place(executor, process)) return;
  weft_executor_list_push(&executor->overflow, process);
  // A slot may have freed since we looked: its finalizer may have missed
  // our push (it checks the overflow list after freeing; we check the slots
  // after pushing).
  weft_executor_promote_overflow(executor);
}

// True when some slot is EMPTY|0 (seq_cst: the promoter's re-check).
static bool weft_executor_has_free_slot(weft_executor_t* executor) {
  for (uint32_t i = 0; i < executor->slot_count; ++i) {
    if (weft_atomic_load(&executor->slots[i].word, memory_order_seq_cst) ==
        WEFT_SLOT_WORD(WEFT_SLOT_EMPTY, 0)) {
      return true;
    }
  }
  return false;
}

// Moves overflow processes into free slots until one of them runs out.
static void weft_executor_promote_overflow(weft_executor_t* executor) {
  weft_executor_list_t* overflow = &executor->overflow;
  // seq_cst fence: our slot free / overflow push comes before these loads.
  weft_atomic_thread_fence(memory_order_seq_cst);
  while (!weft_executor_list_is_empty(overflow) &&
         weft_executor_list_try_acquire(overflow)) {
    weft_process_t* process = NULL;
    while ((process = weft_executor_list_pop_locked(overflow)) != NULL) {
      if (!weft_executor_try_place(executor, process)) {
        weft_executor_list_unpop_locked(overflow, process);
        break;
      }
    }
    weft_executor_list_release(overflow);
    // A slot freed (or a process pushed) while we held the flag: its owner
    // saw the flag taken and left the promotion to us.
    weft_atomic_thread_fence(memory_order_seq_cst);
    if (!weft_executor_has_free_slot(executor)) break;
  }
}

// Closes |slot| to new workers (idempotent). The caller is counted in it.
static void weft_executor_slot_close(weft_executor_slot_t* slot) {
  uint32_t word = weft_atomic_load(&slot->word, memory_order_relaxed);
  while (WEFT_SLOT_STATE(word) == WEFT_SLOT_OPEN) {
    // Relaxed: the count (which orders the finalizer) is untouched.
    WEFT_SCHED_COUNT(RMW_SLOT);
    if (weft_atomic_compare_exchange_weak(
            &slot->word, &word,
            WEFT_SLOT_WORD(WEFT_SLOT_CLOSED, WEFT_SLOT_COUNT(word)),
            memory_order_relaxed, memory_order_relaxed)) {
      break;
    }
  }
}

// Runs once per slot occupancy, after its last drainer left.
static void weft_executor_slot_finalize(weft_executor_t* executor,
                                        weft_executor_slot_t* slot) {
  weft_process_t* process = slot->process;
  slot->process = NULL;
  bool release = false;
  bool place_again = false;
  uint32_t state = weft_atomic_load(&process->state, memory_order_acquire);
  for (;;) {
    uint32_t phase = state & WEFT_PROCESS_PHASE_MASK;
    if (phase == WEFT_PROCESS_PHASE_COMPLETED) {
      release = true;
      break;
    }
    // RETIRING: idle unless a wake came in while the drainers left.
    uint32_t next = (state & WEFT_PROCESS_STATE_WAKE_PENDING)
                        ? WEFT_PROCESS_PHASE_SCHEDULED
                        : WEFT_PROCESS_PHASE_IDLE;
    // acq_rel: acquires the wakers' publications, and releases everything
    // the drainers did to the next scheduler (IDLE) or drainer (SCHEDULED).
    WEFT_SCHED_COUNT(RMW_PROCESS);
    if (weft_atomic_compare_exchange_weak(&process->state, &state, next,
                                          memory_order_acq_rel,
                                          memory_order_acquire)) {
      place_again = next == WEFT_PROCESS_PHASE_SCHEDULED;
      break;
    }
  }
  // seq_cst: frees the slot for placers (release) and precedes the
  // overflow check in promote_overflow (Dekker with pushers).
  WEFT_SCHED_COUNT(RMW_SLOT);
  weft_atomic_fetch_add(&slot->word,
                        (uint32_t)(WEFT_SLOT_EMPTY - WEFT_SLOT_FINALIZING)
                            << WEFT_SLOT_STATE_SHIFT,
                        memory_order_seq_cst);
  if (release) weft_task__process_release(process);
  if (place_again) weft_executor_place(executor, process);
  weft_executor_promote_overflow(executor);
}

// Drops the caller's count in |slot|; finalizes when it was the last one
// out of a closed slot, promotes when it emptied a free one.
static void weft_executor_slot_leave(weft_executor_t* executor,
                                     weft_executor_slot_t* slot) {
  // acq_rel: release hands our drain's writes to the finalizer; acquire in
  // case we are it.
  WEFT_SCHED_COUNT(RMW_SLOT);
  uint32_t word =
      weft_atomic_fetch_sub(&slot->word, 1, memory_order_acq_rel) - 1;
  if (word == WEFT_SLOT_WORD(WEFT_SLOT_CLOSED, 0)) {
    // Acquire: see every drainer's writes (their decrements are in the
    // release sequence we read).
    WEFT_SCHED_COUNT(RMW_SLOT);
    if (weft_atomic_compare_exchange_strong(
            &slot->word, &word, WEFT_SLOT_WORD(WEFT_SLOT_FINALIZING, 0),
            memory_order_acquire, memory_order_relaxed)) {
      weft_executor_slot_finalize(executor, slot);
    }
  } else if (word == WEFT_SLOT_WORD(WEFT_SLOT_EMPTY, 0)) {
    // We were a stale visitor of a free slot: a placer may have skipped it.
    weft_executor_promote_overflow(executor);
  }
}

// Handles a slot drainer's NO_WORK: retires the process unless a wake is
// pending. Returns true when the caller must drain again: it cleared a
// wake, so it (still counted in the slot) must be the one to see the work
// the waker published; another drainer may retire the process meanwhile.
static bool weft_executor_slot_no_work(weft_executor_slot_t* slot,
                                       weft_process_t* process) {
  uint32_t state = weft_atomic_load(&process->state, memory_order_relaxed);
  while ((state & WEFT_PROCESS_PHASE_MASK) == WEFT_PROCESS_PHASE_SCHEDULED) {
    bool wake = (state & WEFT_PROCESS_STATE_WAKE_PENDING) != 0;
    uint32_t next =
        wake ? WEFT_PROCESS_PHASE_SCHEDULED : WEFT_PROCESS_PHASE_RETIRING;
    // acq_rel: the Dekker pair with weft_process_wake (see process.c); the
    // acquire makes the waker's work visible to the drain that follows.
    WEFT_SCHED_COUNT(RMW_PROCESS);
    if (weft_atomic_compare_exchange_weak(&process->state, &state, next,
                                          memory_order_acq_rel,
                                          memory_order_relaxed)) {
      if (!wake) weft_executor_slot_close(slot);
      return wake;
    }
  }
  return false;
}

// Handles a slot drainer's COMPLETED: the first one completes the process.
static void weft_executor_slot_completed(weft_executor_slot_t* slot,
                                         weft_process_t* process) {
  uint32_t state = weft_atomic_load(&process->state, memory_order_relaxed);
  while ((state & WEFT_PROCESS_PHASE_MASK) != WEFT_PROCESS_PHASE_COMPLETED) {
    // acq_rel: exactly one drainer wins; it sees the others' writes that
    // were published through the state.
    WEFT_SCHED_COUNT(RMW_PROCESS);
    if (weft_atomic_compare_exchange_weak(
            &process->state, &state, WEFT_PROCESS_PHASE_COMPLETED,
            memory_order_acq_rel, memory_order_relaxed)) {
      weft_executor_slot_close(slot);
      weft_task__process_complete(process);
      break;
    }
  }
}

// Drains |process| while this worker is counted in |slot|: up to
// WEFT_EXECUTOR_SLOT_SESSION_DRAINS drains in a row while they return
// DID_WORK, the slot stays open and the desired count still includes us
// (staying costs one relaxed load per drain instead of two contended RMWs).
static void weft_executor_slot_session(weft_executor_slot_t* slot,
                                       weft_process_t* process,
                                       uint32_t worker_index) {
  for (uint32_t drains = 1;; ++drains) {
    weft_process_drain_result_t result =
        weft_process_is_completed(process)
            ? WEFT_PROCESS_DRAIN_NO_WORK
            : process->drain(process, worker_index);
    WEFT_SCHED_COUNT(DRAIN);
    if (result == WEFT_PROCESS_DRAIN_COMPLETED) {
      weft_executor_slot_completed(slot, process);
      return;
    } else if (result == WEFT_PROCESS_DRAIN_NO_WORK) {
      if (!weft_executor_slot_no_work(slot, process)) return;
      continue;  // cleared a wake: drain again (see slot_no_work)
    }
    // DID_WORK.
    uint32_t state = weft_atomic_load(&process->state, memory_order_relaxed);
    if ((state & WEFT_PROCESS_PHASE_MASK) == WEFT_PROCESS_PHASE_RETIRING) {
      // Work found after another drainer retired the process: make the
      // finalizer place it again instead of idling it.
      weft_process_wake(process);
      return;
    }
    if (drains >= WEFT_EXECUTOR_SLOT_SESSION_DRAINS) return;
    uint32_t word = weft_atomic_load(&slot->word, memory_order_relaxed);
    if (WEFT_SLOT_STATE(word) != WEFT_SLOT_OPEN ||
        WEFT_SLOT_COUNT(word) > weft_process_desired_workers(process)) {
      return;
    }
  }
}

// One pass over the compute slots from this worker's start; drains the
// first slot that wants a worker. Returns true when it drained.
static bool weft_executor_drain_slots(weft_executor_t* executor,
                                      weft_executor_worker_t* worker) {
  uint32_t count = executor->slot_count;
  for (uint32_t n = 0; n < count; ++n) {
    weft_executor_slot_t* slot = &executor->slots[(worker->index + n) % count];
    // Not |limit|: it may be stale after set_desired_workers raised the
    // budget and woke us; entering reads the real value and refreshes it.
    uint32_t word = weft_atomic_load(&slot->word, memory_order_relaxed);
    if (WEFT_SLOT_STATE(word) != WEFT_SLOT_OPEN) continue;
    // Acquire: pairs with the placer's OPEN (the process pointer).
    WEFT_SCHED_COUNT(RMW_SLOT);
    word = weft_atomic_fetch_add(&slot->word, 1, memory_order_acquire);
    if (WEFT_SLOT_STATE(word) != WEFT_SLOT_OPEN) {
      weft_executor_slot_leave(executor, slot);
      continue;
    }
    weft_process_t* process = slot->process;
    uint32_t desired = weft_process_desired_workers(process);
    if (weft_atomic_load(&slot->limit, memory_order_relaxed) != desired) {
      weft_atomic_store(&slot->limit, desired, memory_order_relaxed);
    }
    if (WEFT_SLOT_COUNT(word) >= desired) {
      weft_executor_slot_leave(executor, slot);
      continue;
    }
    // One zone per stay on a process (its drains in a row), not per drain:
    // workers poll a process many times per dispatch.
    WEFT_TRACE_BEGIN(WEFT_TRACE_CATEGORY_TASK, "process");
    weft_executor_slot_session(slot, process, worker->index);
    WEFT_TRACE_END();
    weft_executor_slot_leave(executor, slot);
    return true;
  }
  return false;
}

//===----------------------------------------------------------------------===//
// Immediate processes
//===----------------------------------------------------------------------===//

static weft_wait_assist_result_t weft_executor_slots_state(
    weft_executor_t* executor);

// Drains a budget-1 process popped from the immediate list.
static void weft_executor_drain_immediate(weft_executor_t* executor,
                                          weft_executor_worker_t* worker,
                                          weft_process_t* process) {
  // Acquire: sees the setup and every waker's publication released through
  // the state (clears a wake bit set while it was queued).
  WEFT_SCHED_COUNT(RMW_PROCESS);
  weft_atomic_exchange(&process->state, WEFT_PROCESS_PHASE_DRAINING,
                       memory_order_acquire);
  for (int round = 0;; ++round) {
    WEFT_TRACE_BEGIN(WEFT_TRACE_CATEGORY_TASK, "drain");
    weft_process_drain_result_t result = process->drain(process, worker->index);
    WEFT_TRACE_END();
    if (result == WEFT_PROCESS_DRAIN_DID_WORK) {
      // Again at once, unless other work waits: a budget-1 process on the
      // list, or a compute slot wanting a drainer (the control process
      // that just handed a dispatch to the compute process would otherwise
      // linger in front of it).
      if (round + 1 < WEFT_EXECUTOR_IMMEDIATE_REDRAIN_LIMIT &&
          weft_mpsc_list_is_empty(&executor->immediate.shared) &&
          weft_atomic_load(&executor->immediate.private_head,
                           memory_order_relaxed) == NULL &&
          weft_executor_slots_state(executor) != WEFT_WAIT_ASSIST_RAN) {
        continue;
      }
      // Release: the next drainer (acquire) sees this drain's writes.
      WEFT_SCHED_COUNT(RMW_PROCESS);
      weft_atomic_exchange(&process->state, WEFT_PROCESS_PHASE_SCHEDULED,
                           memory_order_release);
      weft_executor_list_push(&executor->immediate, process);
      break;
    } else if (result == WEFT_PROCESS_DRAIN_NO_WORK) {
      uint32_t expected = WEFT_PROCESS_PHASE_DRAINING;
      // acq_rel: the Dekker pair with weft_process_wake (see process.c).
      WEFT_SCHED_COUNT(RMW_PROCESS);
      if (weft_atomic_compare_exchange_strong(
              &process->state, &expected, WEFT_PROCESS_PHASE_IDLE,
              memory_order_acq_rel, memory_order_acquire)) {
        break;
      }
      // A wake arrived: clear it and drain again.
      WEFT_SCHED_COUNT(RMW_PROCESS);
      weft_atomic_exchange(&process->state, WEFT_PROCESS_PHASE_DRAINING,
                           memory_order_acquire);
    } else {
      // Acq_rel: completion sees everything published to the process.
      WEFT_SCHED_COUNT(RMW_PROCESS);
      weft_atomic_exchange(&process->state, WEFT_PROCESS_PHASE_COMPLETED,
                           memory_order_acq_rel);
      weft_task__process_complete(process);
      weft_task__process_release(process);
      break;
    }
  }
}

//===----------------------------------------------------------------------===//
// Workers
//===----------------------------------------------------------------------===//

// One round of work; returns true when something was drained.
static bool weft_executor_pump(weft_executor_t* executor,
                               weft_executor_worker_t* worker, bool slots) {
  bool drained = slots && weft_executor_drain_slots(executor, worker);
  bool more = false;
  weft_process_t* process =
      weft_executor_list_try_pop(&executor->immediate, &more);
  if (process) {
    // Others may take the rest while we drain this one.
    if (more) weft_executor_wake_workers(executor, 1);
    weft_executor_drain_immediate(executor, worker, process);
    drained = true;
  }
  return drained;
}

// The idle re-check: seq_cst loads after the idle bit's seq_cst RMW. The
// compute slots only when |slots|.
static bool weft_executor_has_work(weft_executor_t* executor, bool slots) {
  if (!weft_executor_list_is_empty(&executor->immediate)) return true;
  if (!slots) return false;
  for (uint32_t i = 0; i < executor->slot_count; ++i) {
    weft_executor_slot_t* slot = &executor->slots[i];
    uint32_t word = weft_atomic_load(&slot->word, memory_order_seq_cst);
    if (WEFT_SLOT_STATE(word) == WEFT_SLOT_OPEN &&
        WEFT_SLOT_COUNT(word) <
            weft_atomic_load(&slot->limit, memory_order_relaxed)) {
      return true;
    }
  }
  return false;
}

static bool weft_executor_is_shutting_down(weft_executor_t* executor) {
  // Acquire: pairs with release's store (nothing else is published by it,
  // but the exit path then reads executor state set before).
  return weft_atomic_load(&executor->shutting_down, memory_order_acquire) != 0;
}

// Whether a compute slot wants another drainer (RAN standing for "yes"), or
// is open but full (BUSY), or none is open (IDLE). Relaxed: a hint;
// entering the slot decides.
static weft_wait_assist_result_t weft_executor_slots_state(
    weft_executor_t* executor) {
  weft_wait_assist_result_t result = WEFT_WAIT_ASSIST_IDLE;
  for (uint32_t i = 0; i < executor->slot_count; ++i) {
    weft_executor_slot_t* slot = &executor->slots[i];
    uint32_t word = weft_atomic_load(&slot->word, memory_order_relaxed);
    if (WEFT_SLOT_STATE(word) != WEFT_SLOT_OPEN) continue;
    if (WEFT_SLOT_COUNT(word) <
        weft_atomic_load(&slot->limit, memory_order_relaxed)) {
      return WEFT_WAIT_ASSIST_RAN;
    }
    result = WEFT_WAIT_ASSIST_BUSY;
  }
  return result;
}

// The wait assistant (src/base/wait_assist.h): a waiting thread takes a free
// guest index and makes one pass over the compute slots as that drainer.
// Only compute slots: a budget-1 process may be a long host call or file
// operation, which would hold the waiter far past its own signal.
static weft_wait_assist_result_t weft_executor_assist(void* user_data) {
  weft_executor_t* executor = (weft_executor_t*)user_data;
  // A full slot is entered too: its limit is refreshed only by entering,
  // so after a region that wanted one drainer it reads "full" while the
  // next region wants more (entering reads the process's desired count).
  if (weft_executor_slots_state(executor) == WEFT_WAIT_ASSIST_IDLE) {
    // No compute now, but a worker that is awake may be about to start
    // some (the control process issuing the next command buffer): stay.
    return weft_executor_idle_worker_count(executor) < executor->worker_count
               ? WEFT_WAIT_ASSIST_BUSY
               : WEFT_WAIT_ASSIST_IDLE;
  }
  // Awake workers on every CPU already: a guest would be one drainer too
  // many (one preempted holding a tile stalls its region for a time
  // slice; measured: the decode 2x slower with workers=2&assist=1 on 2
  // CPUs). Wait as a plain waiter does: spin out the budget, then sleep.
  if (executor->worker_count - weft_executor_idle_worker_count(executor) >=
      executor->cpu_count) {
    return WEFT_WAIT_ASSIST_IDLE;
  }
  uint64_t taken = weft_atomic_load(&executor->guest_mask, memory_order_relaxed);
  uint64_t all = executor->guest_count == 64
                     ? ~0ull
                     : ((1ull << executor->guest_count) - 1);
  uint64_t bit = 0;
  do {
    uint64_t free_bits = ~taken & all;
    if (!free_bits) return WEFT_WAIT_ASSIST_BUSY;
    bit = free_bits & (~free_bits + 1);
    // Acquire: the previous guest's drain on this index is done (its
    // worker-local memory is ours now).
    WEFT_SCHED_COUNT(RMW_EXECUTOR);
  } while (!weft_atomic_compare_exchange_weak(&executor->guest_mask, &taken,
                                              taken | bit, memory_order_acquire,
                                              memory_order_relaxed));
  uint32_t index = executor->worker_count + (uint32_t)__builtin_ctzll(bit);
  bool drained = weft_executor_drain_slots(executor, &executor->workers[index]);
  // Release: pairs with the next taker's acquire.
  WEFT_SCHED_COUNT(RMW_EXECUTOR);
  weft_atomic_fetch_and(&executor->guest_mask, ~bit, memory_order_release);
  return drained ? WEFT_WAIT_ASSIST_RAN : WEFT_WAIT_ASSIST_BUSY;
}

void weft_executor_host_drain_begin(weft_executor_t* executor) {
  if (executor->guest_count == 0) return;
  // Relaxed: read by this thread's own placements (program order) and as a
  // hint by others.
  weft_atomic_fetch_add(&executor->host_drains, 1, memory_order_relaxed);
}

void weft_executor_host_drain_end(weft_executor_t* executor) {
  if (executor->guest_count == 0) return;
  weft_atomic_fetch_sub(&executor->host_drains, 1, memory_order_relaxed);
}

// A host left its assisting wait (src/base/wait_assist.h): wakes workers
// for what compute slots still want, which wakes capped by that host's CPU
// may have left to it.
static void weft_executor_assist_leave(void* user_data) {
  weft_executor_t* executor = (weft_executor_t*)user_data;
  uint32_t wanted = 0;
  for (uint32_t i = 0; i < executor->slot_count; ++i) {
    weft_executor_slot_t* slot = &executor->slots[i];
    // seq_cst: the pair with a placer's slot open and hosts count read.
    uint32_t word = weft_atomic_load(&slot->word, memory_order_seq_cst);
    if (WEFT_SLOT_STATE(word) != WEFT_SLOT_OPEN) continue;
    // Counted in (as a drainer entering, without draining) so the process
    // stays in the slot while its desired count is read: its drain lowers
    // that count when its work ends (local-task: at a dispatch's signal),
    // and the slot's cached limit may still be the last region's. A host
    // that saw its work done then wakes nobody while a drainer is still
    // inside (measured: a futex wake per DispatchTiles in 10 at
    // workers=2&assist=1, the woken worker a third thread on 2 CPUs).
    // Acquire: pairs with the placer's OPEN (the process pointer).
    WEFT_SCHED_COUNT(RMW_SLOT);
    word = weft_atomic_fetch_add(&slot->word, 1, memory_order_acquire);
    if (WEFT_SLOT_STATE(word) == WEFT_SLOT_OPEN) {
      uint32_t desired = weft_process_desired_workers(slot->process);
      if (WEFT_SLOT_COUNT(word) < desired) {
        wanted += desired - WEFT_SLOT_COUNT(word);
      }
    }
    weft_executor_slot_leave(executor, slot);
  }
  if (wanted > 0) weft_executor_wake_drainers(executor, wanted);
}

// Spins until this worker is claimed (its idle bit cleared by a waker) or
// the spin budget runs out, when a spinner place is free. Returns true when
// claimed.
static bool weft_executor_worker_spin(weft_executor_t* executor,
                                      weft_executor_worker_t* worker,
                                      weft_atomic_uint64_t* idle_word,
                                      uint64_t idle_bit) {
  if (executor->max_spinners == 0) return false;
  uint32_t spinners =
      weft_atomic_load(&executor->spinner_count, memory_order_relaxed);
  do {
    if (spinners >= executor->max_spinners ||
        !weft_executor_may_spin(executor, worker, spinners, false)) {
      return false;
    }
    // Relaxed: a counter that only bounds how many spin.
    WEFT_SCHED_COUNT(RMW_EXECUTOR);
  } while (!weft_atomic_compare_exchange_weak(
      &executor->spinner_count, &spinners, spinners + 1, memory_order_relaxed,
      memory_order_relaxed));
  weft_atomic_uint64_t* spinning_word =
      &executor->spinning_mask[worker->index / 64];
  // Relaxed: a hint for wakers (see spinning_mask).
  WEFT_SCHED_COUNT(RMW_EXECUTOR);
  weft_atomic_fetch_or(spinning_word, idle_bit, memory_order_relaxed);
  bool claimed = false;
  weft_time_t deadline = weft_time_now() + executor->wait_policy.spin_ns;
  for (uint32_t i = 1;; ++i) {
    // Relaxed: the claim is followed by a notify; commit/cancel of the
    // prepared wait does the acquiring.
    if ((weft_atomic_load(idle_word, memory_order_relaxed) & idle_bit) == 0) {
      claimed = true;
      break;
    }
    weft_cpu_relax();
    // Reading the clock costs ~20ns; check it every 32 spins, and yield
    // then (a spinner must not keep a thread with work off the CPU).
    if ((i & 31) == 0) {
      WEFT_SCHED_COUNT(CLOCK_READ);
      if (weft_time_now() >= deadline) break;
      // A host in an assisting wait took the CPUs, or this worker's CPU:
      // it takes this worker's place.
      if (!weft_executor_may_spin(
              executor, worker,
              weft_atomic_load(&executor->spinner_count,
                               memory_order_relaxed) -
                  1,
              false)) {
        break;
      }
      WEFT_SCHED_COUNT(YIELD);
      sched_yield();
    }
  }
  WEFT_SCHED_COUNT(RMW_EXECUTOR);
  weft_atomic_fetch_and(spinning_word, ~idle_bit, memory_order_relaxed);
  WEFT_SCHED_COUNT(RMW_EXECUTOR);
  weft_atomic_fetch_sub(&executor->spinner_count, 1, memory_order_relaxed);
  return claimed;
}

static int weft_executor_worker_main(void* user_data) {
  weft_executor_worker_t* worker = (weft_executor_worker_t*)user_data;
  weft_executor_t* executor = worker->executor;
  weft_atomic_uint64_t* idle_word = &executor->idle_mask[worker->index / 64];
  uint64_t idle_bit = 1ull << (worker->index % 64);
  bool woken = false;
  while (!weft_executor_is_shutting_down(executor)) {
    // The standby with a host in its place drains no compute.
    const bool aside = weft_executor_standby_steps_aside(executor, worker);
    if (weft_executor_pump(executor, worker, !aside)) {
      // Depth 0: having worked, this worker relays as a chain's root.
      weft_executor_relay_wake(executor, 0);
      woken = false;
      continue;
    }
    if (woken && !aside) {
      // Woken and found nothing: the wakes still wanted are stale (the
      // work went to those already awake). Left standing they would wake
      // workers for nothing, each a chain link and a futex call.
      weft_atomic_store(&executor->desired_wake, 0, memory_order_relaxed);
    }
    weft_wait_token_t token =
        weft_notification_prepare_wait(&worker->notification);
    // seq_cst: the worker's half of the Dekker pair (announce idle, then
    // re-check for work).
    WEFT_SCHED_COUNT(IDLE);
    WEFT_SCHED_COUNT(RMW_EXECUTOR);
    weft_atomic_fetch_or(idle_word, idle_bit, memory_order_seq_cst);
    bool claimed = false;
    woken = true;
    if (weft_executor_has_work(executor, !aside) ||
        weft_executor_is_shutting_down(executor)) {
      woken = false;
      weft_notification_cancel_wait(&worker->notification);
      // The re-check saw work this worker's pump could not take (a list
      // held by another consumer, a slot full by its desired count). With
      // more workers than CPUs the holder may be preempted: yield rather
      // than loop at once (measured: bursts of 1,000 idle announcements,
      // 2,000 idle-mask RMWs, per dispatch at 16-32 workers on 2 CPUs).
      if (weft_executor_is_oversubscribed(executor)) {
        WEFT_SCHED_COUNT(YIELD);
        sched_yield();
      }
    } else if (!aside && weft_executor_worker_spin(executor, worker,
                                                   idle_word, idle_bit)) {
      // A waker cleared our bit (and notified: the epoch bump is dropped
      // with the prepared wait).
      claimed = true;
      // The claim's notify follows it at once; its epoch bump publishes
      // the waker's depth (the relay below reads it).
      for (uint32_t i = 1;
           !weft_notification_was_notified(&worker->notification, token);
           ++i) {
        weft_cpu_relax();
        // The waker may be preempted between its claim and its notify.
        if ((i & 63) == 0) {
          WEFT_SCHED_COUNT(YIELD);
          sched_yield();
        }
      }
      weft_notification_cancel_wait(&worker->notification);
    } else {
      // No spin here: the spin (bounded by max_spinners) happened above.
      weft_wait_policy_t block = {0};
      WEFT_TRACE_BEGIN(WEFT_TRACE_CATEGORY_TASK, "sleep");
      weft_notification_commit_wait(&worker->notification, token, block,
                                    WEFT_TIME_INFINITE_FUTURE);
      WEFT_TRACE_END();
      WEFT_TRACE_INSTANT(WEFT_TRACE_CATEGORY_TASK, "wake", 0, worker->index);
    }
    // Relaxed: only wakers read the bit, and they handle a stale one. (A
    // notify may come from an older claim, so after a wait the bit may
    // still be set.)
    if (!claimed) {
      WEFT_SCHED_COUNT(RMW_EXECUTOR);
      weft_atomic_fetch_and(idle_word, ~idle_bit, memory_order_relaxed);
    }
    // Relaxed: published by the notify (see the spin above). A worker that
    // saw work at its re-check (woken false) was not woken. After a
    // spurious wake the depth is an older wake's: still within the bound.
    uint32_t depth =
        woken ? weft_atomic_load(&worker->wake_depth, memory_order_relaxed)
              : 0;
    if (woken && weft_sched_counters_enabled()) {
      weft_sched_counters__note_wake_depth(depth);
    }
    weft_executor_relay_wake(executor, depth);
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// Scheduling
//===----------------------------------------------------------------------===//

void weft_executor_schedule(weft_executor_t* executor,
                            weft_process_t* process) {
  if (process->worker_budget <= 1) {
    weft_executor_list_push(&executor->immediate, process);
    weft_executor_wake_workers(executor, 1);
  } else {
    weft_executor_place(executor, process);
  }
}

//===----------------------------------------------------------------------===//
// Lifetime
//===----------------------------------------------------------------------===//

void weft_executor_options_initialize(weft_executor_options_t* out_options) {
  memset(out_options, 0, sizeof(*out_options));
  out_options->spin_ns = WEFT_EXECUTOR_SPIN_DEFAULT;
}

// Completes |process| (taken off a list or slot at shutdown) with
// CANCELLED, or its failure, and releases it on this thread.
static void weft_executor_cancel_scheduled(weft_process_t* process) {
  // Release: as in weft_process_cancel.
  weft_atomic_store(&process->cancelled, 1, memory_order_release);
  // acq_rel: see everything published to the process before completing.
  uint32_t previous = weft_atomic_exchange(
      &process->state, WEFT_PROCESS_PHASE_COMPLETED, memory_order_acq_rel);
  if ((previous & WEFT_PROCESS_PHASE_MASK) != WEFT_PROCESS_PHASE_COMPLETED) {
    weft_task__process_complete(process);
  }
  weft_task__process_release(process);
}

// After every worker is joined: cancels whatever is still scheduled,
// including dependents those cancellations schedule.
static void weft_executor_sweep(weft_executor_t* executor) {
  bool progress = true;
  while (progress) {
    progress = false;
    for (uint32_t i = 0; i < executor->slot_count; ++i) {
      weft_executor_slot_t* slot = &executor->slots[i];
      uint32_t word = weft_atomic_load(&slot->word, memory_order_acquire);
      if (WEFT_SLOT_STATE(word) != WEFT_SLOT_OPEN) continue;
      weft_process_t* process = slot->process;
      slot->process = NULL;
      weft_atomic_store(&slot->word, WEFT_SLOT_WORD(WEFT_SLOT_EMPTY, 0),
                        memory_order_release);
      weft_executor_cancel_scheduled(process);
      progress = true;
    }
    weft_executor_list_t* lists[2] = {&executor->immediate,
                                      &executor->overflow};
    for (int l = 0; l < 2; ++l) {
      bool more = false;
      weft_process_t* process = NULL;
      while ((process = weft_executor_list_try_pop(lists[l], &more)) != NULL) {
        weft_executor_cancel_scheduled(process);
        progress = true;
      }
    }
  }
}

static void weft_executor_stop_workers(weft_executor_t* executor,
                                       uint32_t started_count) {
  // seq_cst: workers that re-check before sleeping see it (Dekker with
  // their idle bit), and notify's fence orders it before their wake.
  weft_atomic_store(&executor->shutting_down, 1, memory_order_seq_cst);
  // Claim every idle worker, so spinners stop at once too.
  for (uint32_t w = 0; executor->idle_mask && w < executor->idle_word_count;
       ++w) {
    weft_atomic_store(&executor->idle_mask[w], 0, memory_order_relaxed);
  }
  for (uint32_t i = 0; i < started_count; ++i) {
    weft_notification_notify(&executor->workers[i].notification, INT32_MAX);
  }
  for (uint32_t i = 0; i < started_count; ++i) {
    weft_thread_join(executor->workers[i].thread);
    executor->workers[i].thread = NULL;
  }
}

static void weft_executor_free(weft_executor_t* executor) {
  weft_allocator_t allocator = executor->allocator;
  if (executor->workers) {
    for (uint32_t i = 0; i < weft_executor_drainer_count(executor); ++i) {
      weft_notification_deinitialize(&executor->workers[i].notification);
    }
  }
  weft_allocator_free(allocator, executor->workers);
  weft_allocator_free(allocator, executor->slots);
  weft_allocator_free(allocator, executor->idle_mask);
  weft_allocator_free(allocator, executor->spinning_mask);
  weft_allocator_free(allocator, executor->local_memory_block);
  weft_allocator_free(allocator, executor);
}

// Resolves the options into |executor|'s fields.
static void weft_executor_apply_options(const weft_executor_options_t* options,
                                        weft_executor_t* executor) {
  uint32_t cpu_count = weft_thread_available_cpu_count();
  if (cpu_count == 0) cpu_count = 1;
  executor->cpu_count = cpu_count;
  executor->worker_count =
      options->worker_count ? options->worker_count : cpu_count;
  executor->guest_count = options->guest_count;
  // A host that assists takes a worker's CPU, not one more: the last
  // worker stands by for it when the workers fill the CPUs.
  executor->standby_index =
      executor->guest_count > 0 && executor->worker_count >= 2 &&
              executor->worker_count >= cpu_count
          ? executor->worker_count - 1
          : UINT32_MAX;
  atomic_init(&executor->assist_id, UINT32_MAX);
  executor->slot_count = options->compute_slot_count
                             ? options->compute_slot_count
                             : WEFT_EXECUTOR_DEFAULT_COMPUTE_SLOT_COUNT;
  executor->idle_word_count = (executor->worker_count + 63) / 64;
  if (options->spin_ns == WEFT_EXECUTOR_SPIN_DEFAULT) {
    executor->wait_policy = weft_wait_policy_default();
  } else {
    executor->wait_policy.spin_ns = options->spin_ns < 0 ? 0 : options->spin_ns;
  }
  // Oversubscribed: a spinning worker only steals time from the thread that
  // would give it work.
  if (executor->worker_count > cpu_count) executor->wait_policy.spin_ns = 0;
  // ceil(log2(workers)), at least 1: a binary tree of wakes reaches every
  // worker within it (weft_executor_relay_wake).
  executor->wake_depth_bound = 1;
  while (executor->wake_depth_bound < 31 &&
         (1u << executor->wake_depth_bound) < executor->worker_count) {
    ++executor->wake_depth_bound;
  }
  // Spinners leave one CPU to the thread that gives them work.
  executor->max_spinners = executor->wait_policy.spin_ns > 0
                               ? (cpu_count > 1 ? cpu_count - 1 : 1)
                               : 0;
  executor->local_memory_size = options->worker_local_memory_size;
  executor->local_memory_stride =
      (options->worker_local_memory_size + WEFT_EXECUTOR_CACHE_LINE - 1) &
      ~(size_t)(WEFT_EXECUTOR_CACHE_LINE - 1);
}

static weft_status_t weft_executor_allocate_storage(weft_executor_t* executor) {
  weft_allocator_t allocator = executor->allocator;
  const uint32_t drainer_count = weft_executor_drainer_count(executor);
  weft_status_t status = weft_allocator_malloc_array(
      allocator, drainer_count, sizeof(weft_executor_worker_t),
      (void**)&executor->workers);
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc_array(allocator, executor->slot_count,
                                         sizeof(weft_executor_slot_t),
                                         (void**)&executor->slots);
  }
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc(
        allocator, executor->idle_word_count * sizeof(weft_atomic_uint64_t),
        (void**)&executor->idle_mask);
  }
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc(
        allocator, executor->idle_word_count * sizeof(weft_atomic_uint64_t),
        (void**)&executor->spinning_mask);
  }
  size_t local_bytes = 0;
  if (weft_status_is_ok(status) && executor->local_memory_stride > 0) {
    if (executor->local_memory_stride < executor->local_memory_size ||
        __builtin_mul_overflow((size_t)drainer_count,
                               executor->local_memory_stride, &local_bytes) ||
        __builtin_add_overflow(local_bytes, (size_t)WEFT_EXECUTOR_CACHE_LINE,
                               &local_bytes)) {
      status = WEFT_STATUS(INVALID_ARGUMENT,
                           "executor_create: worker_local_memory_size %zu "
                           "times %u drainers overflows",
                           executor->local_memory_size, drainer_count);
    }
  }
  if (weft_status_is_ok(status) && executor->local_memory_stride > 0) {
    status = weft_allocator_malloc(allocator, local_bytes,
                                   &executor->local_memory_block);
    if (weft_status_is_ok(status)) {
      uintptr_t base = (uintptr_t)executor->local_memory_block;
      base = (base + WEFT_EXECUTOR_CACHE_LINE - 1) &
             ~(uintptr_t)(WEFT_EXECUTOR_CACHE_LINE - 1);
      executor->local_memory = (char*)base;
    }
  }
  if (!weft_status_is_ok(status)) {
    status = weft_status_annotate(
        status, "executor_create: storage for %u workers and %u slots",
        executor->worker_count, executor->slot_count);
  }
  return status;
}

// Fills the affinity of worker |index| into |params| (none when no set
// was given or the set is empty).
static void weft_executor_worker_affinity(
    const weft_executor_options_t* options, uint32_t index,
    weft_thread_params_t* params) {
  params->cpu = -1;
  params->affinity_words = NULL;
  params->affinity_word_count = 0;
  if (!options->worker_affinities) return;
  const weft_affinity_set_t* set = &options->worker_affinities[index];
  if (weft_affinity_set_is_empty(set)) return;
  params->affinity_words = set->words;
  params->affinity_word_count = set->word_count;
}

weft_status_t weft_executor_create(const weft_executor_options_t* options,
                                   weft_allocator_t allocator,
                                   weft_executor_t** out_executor) {
  *out_executor = NULL;
  weft_executor_options_t default_options;
  if (!options) {
    weft_executor_options_initialize(&default_options);
    options = &default_options;
  }
  weft_executor_t* executor = NULL;
  weft_status_t status = WEFT_OK;
  if (options->worker_count > WEFT_SLOT_COUNT_MASK - 64) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "executor_create: worker_count %u is over the limit "
                         "of %u",
                         options->worker_count, WEFT_SLOT_COUNT_MASK - 64);
  } else if (options->guest_count > 64) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "executor_create: guest_count %u is over the limit "
                         "of 64",
                         options->guest_count);
  }
  if (weft_status_is_ok(status)) {
    status =
        weft_allocator_malloc(allocator, sizeof(*executor), (void**)&executor);
  }
  uint32_t started = 0;
  if (weft_status_is_ok(status)) {
    weft_ref_count_init(&executor->ref_count);
    executor->allocator = allocator;
    weft_executor_apply_options(options, executor);
    atomic_init(&executor->desired_wake, 0);
    atomic_init(&executor->host_drains, 0);
    atomic_init(&executor->shutting_down, 0);
    atomic_init(&executor->spinner_count, 0);
    atomic_init(&executor->guest_mask, 0);
    weft_executor_list_initialize(&executor->immediate);
    weft_executor_list_initialize(&executor->overflow);
    status = weft_executor_allocate_storage(executor);
  }
  if (weft_status_is_ok(status)) {
    for (uint32_t i = 0; i < executor->slot_count; ++i) {
      atomic_init(&executor->slots[i].word, WEFT_SLOT_WORD(WEFT_SLOT_EMPTY, 0));
      atomic_init(&executor->slots[i].limit, 0);
      executor->slots[i].process = NULL;
    }
    for (uint32_t i = 0; i < executor->idle_word_count; ++i) {
      atomic_init(&executor->idle_mask[i], 0);
      atomic_init(&executor->spinning_mask[i], 0);
    }
    for (uint32_t i = 0; i < weft_executor_drainer_count(executor); ++i) {
      weft_executor_worker_t* worker = &executor->workers[i];
      worker->executor = executor;
      worker->thread = NULL;
      worker->index = i;
      weft_notification_initialize(&worker->notification);
      atomic_init(&worker->wake_depth, 0);
      worker->home_cpu_count = 0;
      const weft_affinity_set_t* home =
          options->worker_affinities && i < executor->worker_count
              ? &options->worker_affinities[i]
              : NULL;
      if (home && !weft_affinity_set_is_empty(home) &&
          weft_affinity_set_count(home) <= WEFT_EXECUTOR_HOME_CPUS) {
        for (uint32_t cpu = weft_affinity_set_first(home);
             worker->home_cpu_count < WEFT_EXECUTOR_HOME_CPUS &&
             cpu != WEFT_AFFINITY_SET_NONE;
             cpu = weft_affinity_set_next(home, cpu)) {
          worker->home_cpus[worker->home_cpu_count++] = cpu;
        }
      }
    }
  }
  for (uint32_t i = 0; weft_status_is_ok(status) && i < executor->worker_count;
       ++i) {
    char name[32];
    snprintf(name, sizeof(name), "weft-worker-%u", i);
    weft_thread_params_t params = {.name = name};
    weft_executor_worker_affinity(options, i, &params);
    status =
        weft_thread_create(weft_executor_worker_main, &executor->workers[i],
                           &params, allocator, &executor->workers[i].thread);
    if (weft_status_is_ok(status)) {
      ++started;
    } else {
      status = weft_status_annotate(status,
                                    "executor_create: starting worker %u of %u",
                                    i, executor->worker_count);
    }
  }
  if (weft_status_is_ok(status) && executor->guest_count > 0) {
    // With every place taken (32 executors assisting) this one runs
    // without guests: a waiter then sleeps instead, as before.
    uint32_t id = UINT32_MAX;
    weft_status_t assist =
        weft_wait_assist_register(weft_executor_assist, executor, &id);
    if (weft_status_is_ok(assist)) {
      weft_wait_assist_set_leave(id, weft_executor_assist_leave);
    } else {
      id = UINT32_MAX;
    }
    weft_status_ignore(assist);
    weft_atomic_store(&executor->assist_id, id, memory_order_relaxed);
  }
  if (weft_status_is_ok(status)) {
    *out_executor = executor;
  } else if (executor) {
    weft_executor_stop_workers(executor, started);
    weft_executor_free(executor);
  }
  return status;
}

void weft_executor_retain(weft_executor_t* executor) {
  if (executor) weft_ref_count_inc(&executor->ref_count);
}

void weft_executor_release(weft_executor_t* executor) {
  if (!executor || !weft_ref_count_dec(&executor->ref_count)) return;
  // No guest is inside a drain past this point.
  uint32_t assist_id =
      weft_atomic_load(&executor->assist_id, memory_order_relaxed);
  if (assist_id != UINT32_MAX) {
    weft_wait_assist_unregister(assist_id);
  }
  weft_executor_stop_workers(executor, executor->worker_count);
  weft_executor_sweep(executor);
  weft_executor_free(executor);
}

uint32_t weft_executor_worker_count(const weft_executor_t* executor) {
  return executor->worker_count;
}

uint32_t weft_executor_drainer_count(const weft_executor_t* executor) {
  return executor->worker_count + executor->guest_count;
}

uint32_t weft_executor_drainer_seat(const weft_executor_t* executor,
                                    uint32_t drainer_index) {
  if (drainer_index < executor->worker_count ||
      executor->standby_index == UINT32_MAX) {
    return drainer_index;
  }
  uint32_t guest = drainer_index - executor->worker_count;
  return guest == 0 ? executor->standby_index : drainer_index - 1;
}

void* weft_executor_worker_local_memory(weft_executor_t* executor,
                                        uint32_t worker_index,
                                        size_t* out_size) {
  if (out_size) *out_size = executor->local_memory_size;
  if (!executor->local_memory ||
      worker_index >= weft_executor_drainer_count(executor)) {
    return NULL;
  }
  return executor->local_memory +
         (size_t)worker_index * executor->local_memory_stride;
}

weft_duration_t weft_executor_spin_ns(const weft_executor_t* executor) {
  return executor->wait_policy.spin_ns;
}

bool weft_executor_is_oversubscribed(const weft_executor_t* executor) {
  return executor->worker_count > executor->cpu_count;
}

bool weft_executor_may_spin_now(weft_executor_t* executor,
                                uint32_t worker_index) {
  if (worker_index >= executor->worker_count) return true;
  return weft_executor_may_spin(
      executor, &executor->workers[worker_index],
      weft_atomic_load(&executor->spinner_count, memory_order_relaxed), true);
}

uint32_t weft_executor_idle_worker_count(const weft_executor_t* executor) {
  uint32_t count = 0;
  for (uint32_t w = 0; w < executor->idle_word_count; ++w) {
    count += (uint32_t)__builtin_popcountll(
        weft_atomic_load(&executor->idle_mask[w], memory_order_relaxed));
  }
  return count;
}
