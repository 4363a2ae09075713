// weft: scheduler counters (see src/base/sched_counters.h).
//
// Each counting thread owns a block on a list; only the owner stores to its
// block (relaxed loads and stores: no RMW), readers sum with relaxed loads.
// A thread's exit folds its block into |retired| and frees it. The list
// lock is a pthread mutex, not weft's futex mutex, so registering never
// counts (and never recurses into registering).
#include "base/sched_counters.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct weft_sched_block_t {
  weft_atomic_uint64_t values[WEFT_SCHED_COUNTER_COUNT];
  weft_atomic_uint32_t max_wake_depth;
  struct weft_sched_block_t* next;
} weft_sched_block_t;

weft_atomic_uint32_t weft_sched_counters_enabled_flag;

static pthread_mutex_t weft_sched_list_mutex = PTHREAD_MUTEX_INITIALIZER;
static weft_sched_block_t* weft_sched_blocks;  // under the mutex
static weft_sched_counts_t weft_sched_retired;  // under the mutex
static pthread_once_t weft_sched_key_once = PTHREAD_ONCE_INIT;
static pthread_key_t weft_sched_key;
static bool weft_sched_key_valid;

static _Thread_local weft_sched_block_t* weft_sched_block;

static const char* const weft_sched_names[WEFT_SCHED_COUNTER_COUNT] = {
    [WEFT_SCHED_FUTEX_WAIT] = "futex_wait",
    [WEFT_SCHED_FUTEX_WAKE] = "futex_wake",
    [WEFT_SCHED_MUTEX_WAIT] = "mutex_wait",
    [WEFT_SCHED_MUTEX_WAKE] = "mutex_wake",
    [WEFT_SCHED_YIELD] = "yield",
    [WEFT_SCHED_CLOCK_READ] = "clock_read",
    [WEFT_SCHED_WAKE] = "wake",
    [WEFT_SCHED_WAKE_RELAYED] = "wake_relayed",
    [WEFT_SCHED_IDLE] = "idle",
    [WEFT_SCHED_RMW_EXECUTOR] = "rmw_executor",
    [WEFT_SCHED_RMW_RELAY] = "rmw_relay",
    [WEFT_SCHED_RMW_LIST] = "rmw_list",
    [WEFT_SCHED_RMW_SLOT] = "rmw_slot",
    [WEFT_SCHED_RMW_PROCESS] = "rmw_process",
    [WEFT_SCHED_RMW_LANE] = "rmw_lane",
    [WEFT_SCHED_RMW_CLAIM] = "rmw_claim",
    [WEFT_SCHED_RMW_CLAIM_LOST] = "rmw_claim_lost",
    [WEFT_SCHED_RMW_RETIRE] = "rmw_retire",
    [WEFT_SCHED_RMW_REGION] = "rmw_region",
    [WEFT_SCHED_DRAIN] = "drain",
    [WEFT_SCHED_ASSIST_POLL] = "assist_poll",
    [WEFT_SCHED_ASSIST_RAN] = "assist_ran",
};

const char* weft_sched_counter_name(weft_sched_counter_t counter) {
  return (unsigned)counter < WEFT_SCHED_COUNTER_COUNT
             ? weft_sched_names[counter]
             : "unknown";
}

void weft_sched_counters_enable(bool enabled) {
  weft_atomic_store(&weft_sched_counters_enabled_flag, enabled ? 1u : 0u,
                    memory_order_relaxed);
}

// Adds |block| into |counts| (relaxed loads: the owner may still count).
static void weft_sched_block_accumulate(weft_sched_block_t* block,
                                        weft_sched_counts_t* counts) {
  for (int i = 0; i < WEFT_SCHED_COUNTER_COUNT; ++i) {
    counts->values[i] +=
        weft_atomic_load(&block->values[i], memory_order_relaxed);
  }
  uint32_t depth =
      weft_atomic_load(&block->max_wake_depth, memory_order_relaxed);
  if (depth > counts->max_wake_depth) counts->max_wake_depth = depth;
}

static void weft_sched_unlink_locked(weft_sched_block_t* block) {
  for (weft_sched_block_t** link = &weft_sched_blocks; *link;
       link = &(*link)->next) {
    if (*link == block) {
      *link = block->next;
      return;
    }
  }
}

// Thread exit: the block's counts join the retired total.
static void weft_sched_thread_exited(void* value) {
  weft_sched_block_t* block = (weft_sched_block_t*)value;
  pthread_mutex_lock(&weft_sched_list_mutex);
  weft_sched_block_accumulate(block, &weft_sched_retired);
  weft_sched_unlink_locked(block);
  pthread_mutex_unlock(&weft_sched_list_mutex);
  if (weft_sched_block == block) weft_sched_block = NULL;
  free(block);
}

static void weft_sched_create_key(void) {
  weft_sched_key_valid =
      pthread_key_create(&weft_sched_key, weft_sched_thread_exited) == 0;
}

// The calling thread's block, made on first use; NULL when it cannot be
// (the count is then lost, as a trace event would be).
static weft_sched_block_t* weft_sched_thread_block(void) {
  if (weft_sched_block) return weft_sched_block;
  pthread_once(&weft_sched_key_once, weft_sched_create_key);
  if (!weft_sched_key_valid) return NULL;
  weft_sched_block_t* block = (weft_sched_block_t*)calloc(1, sizeof(*block));
  if (!block) return NULL;
  pthread_mutex_lock(&weft_sched_list_mutex);
  block->next = weft_sched_blocks;
  weft_sched_blocks = block;
  pthread_mutex_unlock(&weft_sched_list_mutex);
  pthread_setspecific(weft_sched_key, block);
  weft_sched_block = block;
  return block;
}

void weft_sched_counters__add(weft_sched_counter_t counter, uint64_t amount) {
  weft_sched_block_t* block = weft_sched_thread_block();
  if (!block) return;
  // Only this thread stores to its block: a load and a store, no RMW.
  weft_atomic_store(
      &block->values[counter],
      weft_atomic_load(&block->values[counter], memory_order_relaxed) + amount,
      memory_order_relaxed);
}

void weft_sched_counters__note_wake_depth(uint32_t depth) {
  weft_sched_block_t* block = weft_sched_thread_block();
  if (block && depth > weft_atomic_load(&block->max_wake_depth,
                                        memory_order_relaxed)) {
    weft_atomic_store(&block->max_wake_depth, depth, memory_order_relaxed);
  }
}

void weft_sched_counters_reset(void) {
  pthread_mutex_lock(&weft_sched_list_mutex);
  memset(&weft_sched_retired, 0, sizeof(weft_sched_retired));
  for (weft_sched_block_t* block = weft_sched_blocks; block;
       block = block->next) {
    // Relaxed: the owners are quiet (see the header); a count racing with
    // the reset lands on either side of it.
    for (int i = 0; i < WEFT_SCHED_COUNTER_COUNT; ++i) {
      weft_atomic_store(&block->values[i], 0, memory_order_relaxed);
    }
    weft_atomic_store(&block->max_wake_depth, 0, memory_order_relaxed);
  }
  pthread_mutex_unlock(&weft_sched_list_mutex);
}

void weft_sched_counters_snapshot(weft_sched_counts_t* out_counts) {
  pthread_mutex_lock(&weft_sched_list_mutex);
  *out_counts = weft_sched_retired;
  for (weft_sched_block_t* block = weft_sched_blocks; block;
       block = block->next) {
    weft_sched_block_accumulate(block, out_counts);
  }
  pthread_mutex_unlock(&weft_sched_list_mutex);
}

void weft_sched_counts_subtract(const weft_sched_counts_t* after,
                                const weft_sched_counts_t* before,
                                weft_sched_counts_t* out_delta) {
  for (int i = 0; i < WEFT_SCHED_COUNTER_COUNT; ++i) {
    out_delta->values[i] = after->values[i] - before->values[i];
  }
  out_delta->max_wake_depth = after->max_wake_depth;
}
