// weft: turning tracing on and off from a program.
//
// Tracing records what the runtime does (queue ops and their phases,
// workers, dispatch regions, file I/O, semaphore signals) as Chrome trace
// event JSON, which Perfetto (ui.perfetto.dev) and chrome://tracing open and
// `weft-trace` summarises. Setting WEFT_TRACE=path.json in the environment
// does the same without code: tracing starts when the first device is
// created and the file is written at exit.
//
// NULL: pointer arguments are required unless the function's comment says
// "|x| may be NULL" (see "NULL arguments" in weft/status.h).
#ifndef WEFT_TRACE_H_
#define WEFT_TRACE_H_

#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

// Starts tracing into |path| (written when tracing stops, on flush and at
// exit). FAILED_PRECONDITION when already tracing; the file is created (and
// its errors reported) here.
weft_status_t weft_trace_start(const char* path);

// Writes every event recorded so far to the file (rewriting it whole: the
// file is always complete, valid JSON). Tracing goes on. FAILED_PRECONDITION
// when tracing is off.
weft_status_t weft_trace_flush(void);

// Flushes and stops tracing. OK when tracing was off.
weft_status_t weft_trace_stop(void);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_TRACE_H_
