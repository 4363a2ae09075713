// weft: monotonic time, timeouts and deadlines (see include/weft/time.h).

#include "weft/time.h"

#include <errno.h>
#include <time.h>

weft_time_t weft_time_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (weft_time_t)ts.tv_sec * 1000000000ll + (weft_time_t)ts.tv_nsec;
}

weft_time_t weft_timeout_as_deadline(weft_timeout_t timeout) {
  weft_time_t deadline = timeout.nanos;
  if (timeout.type == WEFT_TIMEOUT_RELATIVE) {
    if (timeout.nanos <= 0) {
      deadline = WEFT_TIME_INFINITE_PAST;
    } else if (timeout.nanos == WEFT_DURATION_INFINITE) {
      deadline = WEFT_TIME_INFINITE_FUTURE;
    } else if (__builtin_add_overflow(weft_time_now(), timeout.nanos,
                                      &deadline)) {
      deadline = WEFT_TIME_INFINITE_FUTURE;
    }
  }
  return deadline;
}

weft_duration_t weft_deadline_remaining(weft_time_t deadline_ns) {
  weft_duration_t remaining = 0;
  if (deadline_ns == WEFT_TIME_INFINITE_FUTURE) {
    remaining = WEFT_DURATION_INFINITE;
  } else if (deadline_ns != WEFT_TIME_INFINITE_PAST) {
    weft_time_t now = weft_time_now();
    remaining = deadline_ns > now ? deadline_ns - now : 0;
  }
  return remaining;
}

void weft_sleep_until(weft_time_t deadline_ns) {
  // The infinite future is slept in one-hour steps (never returns).
  int result = 0;
  do {
    weft_time_t target = deadline_ns;
    if (deadline_ns == WEFT_TIME_INFINITE_FUTURE) {
      target = weft_time_now() + 3600ll * 1000000000ll;
    }
    if (target <= 0) break;
    struct timespec ts = {
        .tv_sec = (time_t)(target / 1000000000ll),
        .tv_nsec = (long)(target % 1000000000ll),
    };
    result = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
  } while (result == EINTR || deadline_ns == WEFT_TIME_INFINITE_FUTURE);
}
