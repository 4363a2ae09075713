// weft decode example: latency summaries (see decode_latency.h).
#include "decode_latency.h"

#include <stdlib.h>
#include <string.h>

static int compare_i64(const void* a, const void* b) {
  const int64_t x = *(const int64_t*)a;
  const int64_t y = *(const int64_t*)b;
  return (x > y) - (x < y);
}

// The nearest-rank |percent|th of |count| sorted samples: the sample of
// rank ceil(percent / 100 * count), counted from 1 (integers, so p99 of
// 100 samples is exactly the 99th).
static int64_t nearest_rank(const int64_t* sorted, uint32_t count,
                            uint32_t percent) {
  uint64_t rank = ((uint64_t)percent * count + 99) / 100;
  if (rank < 1) rank = 1;
  return sorted[rank - 1];
}

void decode_latency_summarize(int64_t* durations_ns, uint32_t count,
                              decode_latency_t* out_latency) {
  memset(out_latency, 0, sizeof(*out_latency));
  out_latency->count = count;
  if (count == 0) return;
  qsort(durations_ns, count, sizeof(durations_ns[0]), compare_i64);
  // Exact below 2^53 ns (104 days), and rounding is monotonic, so the mean
  // cannot leave [min, max].
  double sum = 0.0;
  for (uint32_t i = 0; i < count; ++i) sum += (double)durations_ns[i];
  const double ms = 1e-6;
  out_latency->min = (double)durations_ns[0] * ms;
  out_latency->max = (double)durations_ns[count - 1] * ms;
  out_latency->mean = sum / count * ms;
  out_latency->p50 = (double)nearest_rank(durations_ns, count, 50) * ms;
  out_latency->p99 = (double)nearest_rank(durations_ns, count, 99) * ms;
}
