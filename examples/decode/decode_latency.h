// weft decode example: the summary of per-token latencies weft-decode
// prints.
#ifndef WEFT_EXAMPLES_DECODE_DECODE_LATENCY_H_
#define WEFT_EXAMPLES_DECODE_DECODE_LATENCY_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Milliseconds, every field.
typedef struct decode_latency_t {
  uint32_t count;
  double min;
  double mean;
  double p50;
  double p99;
  double max;
} decode_latency_t;

// Summarises the |count| durations in |durations_ns| (nanoseconds, in any
// order; sorted in place). Percentiles are nearest-rank over every sample:
// pN is the smallest duration with at least N% of the samples at or below
// it, so p50 of 10 samples is the 5th smallest and p99 of fewer than 100 is
// the largest. No samples give all zeros.
void decode_latency_summarize(int64_t* durations_ns, uint32_t count,
                              decode_latency_t* out_latency);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_EXAMPLES_DECODE_DECODE_LATENCY_H_
