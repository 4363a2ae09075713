// weft benchmarks: trace zones in a loop (see trace_zones.h).
#include "trace_zones.h"

#include "base/trace.h"

uint64_t weft_bench_trace_zones(uint64_t count) {
  uint64_t sum = 0;
  for (uint64_t i = 0; i < count; ++i) {
    WEFT_TRACE_BEGIN_ID(WEFT_TRACE_CATEGORY_QUEUE, "bench", i);
    sum += i;
    WEFT_TRACE_END();
  }
  return sum;
}
