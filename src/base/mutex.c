// weft: slim futex mutex (see src/base/mutex.h).
//
// Drepper's three-state mutex ("Futexes Are Tricky", mutex 2): 0 unlocked,
// 1 locked, 2 locked and maybe contended. Unlock only enters the kernel when
// the state says someone may be sleeping.

#include "base/mutex.h"

#include "base/futex.h"
#include "base/sched_counters.h"

enum {
  WEFT_SLIM_MUTEX_UNLOCKED = 0,
  WEFT_SLIM_MUTEX_LOCKED = 1,
  WEFT_SLIM_MUTEX_CONTENDED = 2,
};

void weft_slim_mutex_initialize(weft_slim_mutex_t* mutex) {
  atomic_init(&mutex->state, WEFT_SLIM_MUTEX_UNLOCKED);
}

void weft_slim_mutex_deinitialize(weft_slim_mutex_t* mutex) {
  (void)mutex;
}

bool weft_slim_mutex_try_lock(weft_slim_mutex_t* mutex) {
  uint32_t expected = WEFT_SLIM_MUTEX_UNLOCKED;
  // Acquire on success: the critical section must see the previous owner's
  // writes. Relaxed on failure: nothing was acquired.
  return weft_atomic_compare_exchange_strong(
      &mutex->state, &expected, WEFT_SLIM_MUTEX_LOCKED, memory_order_acquire,
      memory_order_relaxed);
}

void weft_slim_mutex_lock(weft_slim_mutex_t* mutex) {
  uint32_t state = WEFT_SLIM_MUTEX_UNLOCKED;
  // Acquire on success: see the previous owner's writes.
  if (!weft_atomic_compare_exchange_strong(
          &mutex->state, &state, WEFT_SLIM_MUTEX_LOCKED, memory_order_acquire,
          memory_order_relaxed)) {
    // Back off briefly before sleeping: critical sections under a slim
    // mutex are a few dozen instructions and never block, so a holder is
    // about to leave. This is contention backoff (bounded, ~1-3 us), not a
    // wait for an event; event waits go through the wait policy.
    // A lock freed while we spin is taken as plain LOCKED: marking it
    // contended (as the sleeping path must) would make its unlock enter the
    // kernel to wake nobody, a syscall on every handover between two busy
    // threads (a worker's signal and a host waiter's, say).
    for (int i = 0; i < 64; ++i) {
      if (state == WEFT_SLIM_MUTEX_UNLOCKED &&
          weft_atomic_compare_exchange_weak(
              &mutex->state, &state, WEFT_SLIM_MUTEX_LOCKED,
              memory_order_acquire, memory_order_relaxed)) {
        return;
      }
      weft_cpu_relax();
      state = weft_atomic_load(&mutex->state, memory_order_relaxed);
    }
    // Acquire: whoever leaves this loop owns the lock and must see the
    // previous owner's writes. Marking the state contended makes the eventual
    // unlock wake someone.
    state = weft_atomic_exchange(&mutex->state, WEFT_SLIM_MUTEX_CONTENDED,
                                 memory_order_acquire);
    while (state != WEFT_SLIM_MUTEX_UNLOCKED) {
      WEFT_SCHED_COUNT(MUTEX_WAIT);
      weft_futex_wait(&mutex->state, WEFT_SLIM_MUTEX_CONTENDED,
                      WEFT_TIME_INFINITE_FUTURE);
      // Acquire: as above.
      state = weft_atomic_exchange(&mutex->state, WEFT_SLIM_MUTEX_CONTENDED,
                                   memory_order_acquire);
    }
  }
}

void weft_slim_mutex_unlock(weft_slim_mutex_t* mutex) {
  // Release: publish the critical section's writes to the next owner.
  uint32_t previous = weft_atomic_exchange(
      &mutex->state, WEFT_SLIM_MUTEX_UNLOCKED, memory_order_release);
  if (previous == WEFT_SLIM_MUTEX_CONTENDED) {
    WEFT_SCHED_COUNT(MUTEX_WAKE);
    weft_futex_wake(&mutex->state, 1);
  }
}
