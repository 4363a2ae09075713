// weft benchmarks: trace zones in a loop, to price one zone while tracing is
// off (the cost every instrumented site pays in a normal run).
#ifndef WEFT_BENCH_TRACE_ZONES_H_
#define WEFT_BENCH_TRACE_ZONES_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Runs |count| zones (a begin and an end each, as the runtime's sites do)
// and returns a value that depends on the loop, so it is not removed.
uint64_t weft_bench_trace_zones(uint64_t count);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_BENCH_TRACE_ZONES_H_
