// weft: the queue-op trace protocol (src/base/trace.h) as one set of calls
// every driver makes at the same points of an op's life:
//
//   id = weft_queue_trace_submit()       the submit call accepted it
//   weft_queue_trace_ready(id)           its last wait was reached
//   weft_queue_trace_begin(id, name)     its work starts on this thread
//   weft_queue_trace_end(id)             ... and ends
//   weft_queue_trace_signal(id, ok)      its signals are published/failed
//   weft_queue_trace_device_time(...)    its time on the device (GPUs)
//
// An op submitted while tracing was off has id 0 and records nothing later,
// so its events are all or none. Cost when off: one relaxed load at submit,
// a compare of the id elsewhere.
#ifndef WEFT_HAL_QUEUE_TRACE_H_
#define WEFT_HAL_QUEUE_TRACE_H_

#include <stdbool.h>
#include <stdint.h>

#include "base/trace.h"

// Flows link an op's events across threads under one name.
#define WEFT_QUEUE_TRACE_FLOW_NAME "op"

static inline uint64_t weft_queue_trace_submit(void) {
  uint64_t id = 0;
#if !defined(WEFT_TRACE_COMPILED_OUT)
  if (weft_trace_is_enabled()) {
    id = weft_trace_next_id();
    // A zone of its own, so the flow's start binds to a slice; named
    // "submit" so that weft-trace does not take it for the op's work.
    weft_trace_begin_(WEFT_TRACE_CATEGORY_QUEUE, "submit", id, 0, false);
    weft_trace_instant_(WEFT_TRACE_CATEGORY_QUEUE, "submit", id, 0);
    weft_trace_flow_(WEFT_TRACE_CATEGORY_QUEUE, WEFT_QUEUE_TRACE_FLOW_NAME,
                     id, WEFT_TRACE_FLOW_START);
    weft_trace_end_();
  }
#endif
  return id;
}

static inline void weft_queue_trace_ready(uint64_t id) {
  if (id) {
    WEFT_TRACE_INSTANT(WEFT_TRACE_CATEGORY_QUEUE, "ready", id, 0);
  }
}

static inline void weft_queue_trace_begin(uint64_t id, const char* op_name) {
  if (id) {
    WEFT_TRACE_BEGIN_ID(WEFT_TRACE_CATEGORY_QUEUE, op_name, id);
    WEFT_TRACE_FLOW(WEFT_TRACE_CATEGORY_QUEUE, WEFT_QUEUE_TRACE_FLOW_NAME, id,
                    WEFT_TRACE_FLOW_STEP);
  }
#if defined(WEFT_TRACE_COMPILED_OUT)
  (void)op_name;
#endif
}

static inline void weft_queue_trace_end(uint64_t id) {
  if (id) WEFT_TRACE_END();
}

static inline void weft_queue_trace_signal(uint64_t id, bool ok) {
  if (id) {
    WEFT_TRACE_INSTANT(WEFT_TRACE_CATEGORY_QUEUE, "signal", id, ok ? 1 : 0);
    WEFT_TRACE_FLOW(WEFT_TRACE_CATEGORY_QUEUE, WEFT_QUEUE_TRACE_FLOW_NAME, id,
                    WEFT_TRACE_FLOW_END);
  }
}

// The op's time on a device (from the device's own clock, mapped onto
// weft_time_now's) as a zone on the device's |track|.
static inline void weft_queue_trace_device_time(weft_trace_track_t* track,
                                                uint64_t id,
                                                const char* op_name,
                                                weft_time_t start_ns,
                                                weft_duration_t duration_ns) {
#if !defined(WEFT_TRACE_COMPILED_OUT)
  if (id && track && weft_trace_is_enabled()) {
    weft_trace_track_complete_(track, WEFT_TRACE_CATEGORY_QUEUE, op_name, id,
                               start_ns, duration_ns);
  }
#else
  (void)track, (void)id, (void)op_name, (void)start_ns, (void)duration_ns;
#endif
}

#endif  // WEFT_HAL_QUEUE_TRACE_H_
