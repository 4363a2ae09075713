// weft: the default wait policy (see src/base/wait_policy.h).

#include "base/wait_policy.h"

#include <stdlib.h>

#include "base/thread.h"

// Spin budget when more than one CPU is available: long enough to cover a
// futex wake round trip on the other side, short enough to be cheap when
// nothing comes.
#define WEFT_WAIT_POLICY_DEFAULT_SPIN_NS (20ll * 1000ll)

weft_wait_policy_t weft_wait_policy_default(void) {
  weft_wait_policy_t policy = {0};
  const char* spin_us = getenv("WEFT_SPIN_US");
  char* end = NULL;
  long long value = spin_us ? strtoll(spin_us, &end, 10) : -1;
  if (spin_us && end != spin_us && *end == '\0' && value >= 0 &&
      value <= 10ll * 1000 * 1000) {
    policy.spin_ns = (weft_duration_t)value * 1000;
  } else if (weft_thread_available_cpu_count() > 1) {
    policy.spin_ns = WEFT_WAIT_POLICY_DEFAULT_SPIN_NS;
  }
  return policy;
}
