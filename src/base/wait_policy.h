// weft: the one wait policy: spin for a time budget, then block on a futex.
//
// Spinning is skipped when the process is oversubscribed (more runnable
// threads than CPUs), where it only steals time from the thread it waits for.
#ifndef WEFT_BASE_WAIT_POLICY_H_
#define WEFT_BASE_WAIT_POLICY_H_

#include <stdbool.h>
#include <stdint.h>

#include "weft/time.h"

typedef struct weft_wait_policy_t {
  // Time to spin before blocking, in nanoseconds (0 = block at once).
  weft_duration_t spin_ns;
} weft_wait_policy_t;

// The default policy for this process: a short spin budget when there is
// more than one CPU available, none otherwise. Overridable with the
// environment variable WEFT_SPIN_US (microseconds, 0 to 10000000). Reads the
// environment and the affinity mask on every call: call it when creating an
// object and store the result, not per wait.
weft_wait_policy_t weft_wait_policy_default(void);

#endif  // WEFT_BASE_WAIT_POLICY_H_
