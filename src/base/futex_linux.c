// weft: futex wrappers for Linux (see src/base/futex.h).

#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/futex.h"
#include "base/sched_counters.h"

bool weft_futex_wait(weft_atomic_uint32_t* address, uint32_t expected,
                     weft_time_t deadline_ns) {
  bool woken = true;
  if (deadline_ns == WEFT_TIME_INFINITE_PAST) {
    // A poll never blocks; the value may already differ, which a caller
    // re-checks anyway.
    woken = weft_atomic_load(address, memory_order_relaxed) != expected;
  } else {
    struct timespec ts;
    struct timespec* timeout = NULL;
    if (deadline_ns != WEFT_TIME_INFINITE_FUTURE) {
      weft_time_t target = deadline_ns > 0 ? deadline_ns : 0;
      ts.tv_sec = (time_t)(target / 1000000000ll);
      ts.tv_nsec = (long)(target % 1000000000ll);
      timeout = &ts;
    }
    // FUTEX_WAIT_BITSET takes an absolute timeout on CLOCK_MONOTONIC (no
    // FUTEX_CLOCK_REALTIME), so a retried wait never extends the deadline.
    WEFT_SCHED_COUNT(FUTEX_WAIT);
    long result = syscall(SYS_futex, (uint32_t*)address,
                          FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, expected,
                          timeout, NULL, FUTEX_BITSET_MATCH_ANY);
    if (result == -1 && errno == ETIMEDOUT) woken = false;
  }
  return woken;
}

void weft_futex_wake(weft_atomic_uint32_t* address, int32_t count) {
  WEFT_SCHED_COUNT(FUTEX_WAKE);
  syscall(SYS_futex, (uint32_t*)address, FUTEX_WAKE | FUTEX_PRIVATE_FLAG,
          count, NULL, NULL, 0);
}
