// weft: monotonic time, timeouts and deadlines.
//
// Every API that can wait takes a weft_timeout_t and converts it to an
// absolute deadline on entry, so retries never extend a wait.
#ifndef WEFT_TIME_H_
#define WEFT_TIME_H_

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Nanoseconds on the monotonic clock.
typedef int64_t weft_time_t;
// A span of nanoseconds.
typedef int64_t weft_duration_t;

#define WEFT_TIME_INFINITE_PAST INT64_MIN
#define WEFT_TIME_INFINITE_FUTURE INT64_MAX
#define WEFT_DURATION_ZERO 0
#define WEFT_DURATION_INFINITE INT64_MAX

// Returns the current monotonic time in nanoseconds.
weft_time_t weft_time_now(void);

typedef enum weft_timeout_type_e {
  // |nanos| is an absolute weft_time_t deadline.
  WEFT_TIMEOUT_ABSOLUTE = 0,
  // |nanos| is a weft_duration_t from the moment of the call.
  WEFT_TIMEOUT_RELATIVE = 1,
} weft_timeout_type_t;

typedef struct weft_timeout_t {
  weft_timeout_type_t type;
  int64_t nanos;
} weft_timeout_t;

// Poll: check once and never block.
static inline weft_timeout_t weft_timeout_immediate(void) {
  weft_timeout_t t = {WEFT_TIMEOUT_ABSOLUTE, WEFT_TIME_INFINITE_PAST};
  return t;
}

// Wait forever.
static inline weft_timeout_t weft_timeout_infinite(void) {
  weft_timeout_t t = {WEFT_TIMEOUT_ABSOLUTE, WEFT_TIME_INFINITE_FUTURE};
  return t;
}

// Wait until the absolute monotonic |deadline_ns|.
static inline weft_timeout_t weft_timeout_deadline(weft_time_t deadline_ns) {
  weft_timeout_t t = {WEFT_TIMEOUT_ABSOLUTE, deadline_ns};
  return t;
}

// Wait at most |duration_ns| from now.
static inline weft_timeout_t weft_timeout_relative(
    weft_duration_t duration_ns) {
  weft_timeout_t t = {WEFT_TIMEOUT_RELATIVE, duration_ns};
  return t;
}

// Converts |timeout| to an absolute deadline (saturating on overflow).
weft_time_t weft_timeout_as_deadline(weft_timeout_t timeout);

// Converts an absolute deadline to a relative duration from now (0 if past,
// WEFT_DURATION_INFINITE for the infinite future).
weft_duration_t weft_deadline_remaining(weft_time_t deadline_ns);

// True when |timeout| means "poll once".
static inline bool weft_timeout_is_immediate(weft_timeout_t timeout) {
  return timeout.type == WEFT_TIMEOUT_ABSOLUTE
             ? timeout.nanos == WEFT_TIME_INFINITE_PAST
             : timeout.nanos <= 0;
}

// Sleeps the calling thread until |deadline_ns|.
void weft_sleep_until(weft_time_t deadline_ns);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_TIME_H_
