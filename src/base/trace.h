// weft: tracing, always compiled in and off by default.
//
// Turned on by WEFT_TRACE=path.json in the environment (read once, at the
// first weft_trace_initialize_from_environment call: device creation makes
// it) or by weft_trace_start; written as Chrome trace event JSON, which
// Perfetto (ui.perfetto.dev) and chrome://tracing open, when tracing stops,
// on weft_trace_flush, and at process exit.
//
// Cost when off: every macro below is one relaxed load and a not-taken
// branch. When on, each thread appends to a buffer of its own (no lock on
// the hot path; a lock only when a thread records its first event, and when
// a buffer chunk fills); timestamps come from weft_time_now (one monotonic
// clock for every thread).
//
// Events:
//   zones     WEFT_TRACE_BEGIN(name) ... WEFT_TRACE_END(): nested, balanced
//             per thread ("ph":"B"/"E"). A zone may carry an id
//             (WEFT_TRACE_BEGIN_ID) and a value (_VALUE) shown as args.
//   instants  WEFT_TRACE_INSTANT(name, value): a point with a value
//             ("ph":"i"), e.g. a semaphore reaching 5.
//   flows     WEFT_TRACE_FLOW(name, id, phase): links zones on different
//             threads that belong to one queue op ("ph":"s"/"t"/"f", bound
//             to the enclosing zone). Ids come from weft_trace_next_id.
//   threads   weft_trace_set_thread_name names the calling thread's track.
//   tracks    weft_trace_track_create: a lane that is not a thread, whose
//             zones ("ph":"X") have explicit start times and durations
//             (a GPU's work, from its events).
//
// Queue ops follow one protocol, so weft-trace can rebuild each op's phases
// (category "queue", every event carrying the op's id from
// weft_trace_next_id):
//   instant "submit"   the submit call accepted the op   + flow START
//   instant "ready"    its last wait was reached          + flow STEP
//   zone "queue_fill"  (the op's name) its work, on the thread doing it
//                      (for a dispatch: the region zones nest in it on
//                      every worker; for async file I/O: the issue)
//   instant "signal"   its signals published (value 1) or failed (0)
//                                                         + flow END
//   "X" zone (the op's name) on a device track: its time on the device
//                      (a GPU's, measured by events), where the driver can
//                      tell it
//   "X" zone (category "channel", the op's name) on the channel's track
//                      ("channel 'world' rank 0"): a channel op from its
//                      start (waits reached, data mapped) to its end, with
//                      args "bytes" and "peer" (the peer or root; none for
//                      collectives)
// Phases: wait = ready - submit, queue = zone begin - ready, execute = the
// zone's length (to "signal" for async work), signal = signal - zone end.
//
// Names and categories must be string literals (or otherwise live until the
// trace is written): events store the pointer.
//
// This is the one piece of process-wide mutable state in weft: a trace is
// of the whole process, as the environment variable that starts it is.
#ifndef WEFT_BASE_TRACE_H_
#define WEFT_BASE_TRACE_H_

#include <stdbool.h>
#include <stdint.h>

#include "base/atomics.h"
#include "weft/status.h"
#include "weft/time.h"
#include "weft/trace.h"

// Event categories (Chrome's "cat"), so a viewer can filter.
#define WEFT_TRACE_CATEGORY_QUEUE "queue"    // queue ops and their phases
#define WEFT_TRACE_CATEGORY_TASK "task"      // processes, drains, workers
#define WEFT_TRACE_CATEGORY_BLOCK "block"    // block regions and tiles
#define WEFT_TRACE_CATEGORY_FILE "file"      // file I/O
#define WEFT_TRACE_CATEGORY_SEMAPHORE "semaphore"
#define WEFT_TRACE_CATEGORY_HOST "host"      // host calls, host waits
#define WEFT_TRACE_CATEGORY_CHANNEL "channel"  // channel transfers

typedef enum weft_trace_flow_phase_e {
  WEFT_TRACE_FLOW_START = 0,  // "s": the op's first zone (submit)
  WEFT_TRACE_FLOW_STEP,       // "t": a middle phase
  WEFT_TRACE_FLOW_END,        // "f": the op's last zone (signal/retire)
} weft_trace_flow_phase_t;

// Non-zero while tracing is on. Read with a relaxed load by every macro.
extern weft_atomic_uint32_t weft_trace_enabled_flag;

static inline bool weft_trace_is_enabled(void) {
  return weft_atomic_load(&weft_trace_enabled_flag, memory_order_relaxed) !=
         0;
}

// Starts tracing when WEFT_TRACE names a file and tracing is off; the first
// call only (later calls return OK at once). Failures are printed to stderr
// once and tracing stays off: a bad trace path must not stop the program.
void weft_trace_initialize_from_environment(void);

// A process-unique non-zero id for flows and op ids.
uint64_t weft_trace_next_id(void);

// Names the calling thread's track ("weft-worker-0"). Cheap; may be called
// before tracing starts (the name is kept per thread).
void weft_trace_set_thread_name(const char* name);

// A track: a lane of its own in the trace, for events recorded on behalf of
// something that is not a thread (a GPU stream's work, timed by its events)
// with explicit times. One thread at a time records to a track, and its
// events must not go back in time. Made when needed (NULL when memory runs
// out: its events are lost); released by its owner, and freed once the
// trace that saw it has been written.
typedef struct weft_trace_thread_t weft_trace_track_t;
weft_trace_track_t* weft_trace_track_create(const char* name);
void weft_trace_track_release(weft_trace_track_t* track);  // NULL: no-op

// Records a zone of |duration_ns| from |start_ns| (weft_time_now's clock)
// on |track| ("ph":"X"; |id| in its args). Call only when enabled.
void weft_trace_track_complete_(weft_trace_track_t* track,
                                const char* category, const char* name,
                                uint64_t id, weft_time_t start_ns,
                                weft_duration_t duration_ns);

// As weft_trace_track_complete_, for a transfer: the zone's args also
// carry "bytes" and, when |peer| >= 0, "peer" (a channel op).
void weft_trace_track_transfer_(weft_trace_track_t* track,
                                const char* category, const char* name,
                                uint64_t id, weft_time_t start_ns,
                                weft_duration_t duration_ns, uint64_t bytes,
                                int32_t peer);

// The recording functions behind the macros (call only when enabled).
void weft_trace_begin_(const char* category, const char* name, uint64_t id,
                       uint64_t value, bool has_value);
void weft_trace_end_(void);
void weft_trace_instant_(const char* category, const char* name,
                         uint64_t id, uint64_t value);
void weft_trace_flow_(const char* category, const char* name, uint64_t id,
                      weft_trace_flow_phase_t phase);

#if defined(WEFT_TRACE_COMPILED_OUT)
// The zones compiled out entirely (cmake -DWEFT_TRACE_ZONES=OFF): the
// baseline the cost of tracing-when-off is measured against.
#define WEFT_TRACE_BEGIN(category, name) ((void)0)
#define WEFT_TRACE_BEGIN_ID(category, name, id) ((void)(id))
#define WEFT_TRACE_BEGIN_VALUE(category, name, id, value) \
  ((void)(id), (void)(value))
#define WEFT_TRACE_END() ((void)0)
#define WEFT_TRACE_INSTANT(category, name, id, value) \
  ((void)(id), (void)(value))
#define WEFT_TRACE_FLOW(category, name, id, phase) ((void)(id))
#else
#define WEFT_TRACE_BEGIN(category, name)                          \
  do {                                                            \
    if (weft_trace_is_enabled()) {                                \
      weft_trace_begin_((category), (name), 0, 0, /*value=*/false); \
    }                                                             \
  } while (0)
#define WEFT_TRACE_BEGIN_ID(category, name, id)                    \
  do {                                                             \
    if (weft_trace_is_enabled()) {                                 \
      weft_trace_begin_((category), (name), (id), 0, /*value=*/false); \
    }                                                              \
  } while (0)
#define WEFT_TRACE_BEGIN_VALUE(category, name, id, value)              \
  do {                                                                 \
    if (weft_trace_is_enabled()) {                                     \
      weft_trace_begin_((category), (name), (id), (value), /*value=*/true); \
    }                                                                  \
  } while (0)
#define WEFT_TRACE_END()                          \
  do {                                            \
    if (weft_trace_is_enabled()) weft_trace_end_(); \
  } while (0)
#define WEFT_TRACE_INSTANT(category, name, id, value)              \
  do {                                                             \
    if (weft_trace_is_enabled()) {                                 \
      weft_trace_instant_((category), (name), (id), (value));      \
    }                                                              \
  } while (0)
#define WEFT_TRACE_FLOW(category, name, id, phase)                 \
  do {                                                             \
    if (weft_trace_is_enabled()) {                                 \
      weft_trace_flow_((category), (name), (id), (phase));         \
    }                                                              \
  } while (0)
#endif  // WEFT_TRACE_COMPILED_OUT

#endif  // WEFT_BASE_TRACE_H_
