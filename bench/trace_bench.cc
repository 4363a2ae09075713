// weft benchmarks: the price of a trace zone while tracing is off.
//
// TraceZoneOff runs zones (begin + end, the pair every instrumented site
// has) with tracing off: each is a relaxed load and a branch not taken.
// Multiplied by the zones a SmallDispatchChain iteration passes (count them
// in a trace of it), it bounds what the instrumentation costs that
// benchmark; scripts/trace-overhead.sh measures the same thing end to end
// against a build with the zones compiled out.
#include <benchmark/benchmark.h>

#include "bench_util.h"
#include "trace_zones.h"

namespace weft_bench {
namespace {

constexpr uint64_t kZonesPerIteration = 1000;

void TraceZoneOff(benchmark::State& state) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(weft_bench_trace_zones(kZonesPerIteration));
  }
  // The time per iteration in microseconds is the time per zone in
  // nanoseconds (1000 zones an iteration).
  state.counters["zones"] = benchmark::Counter(
      static_cast<double>(kZonesPerIteration),
      benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

void RegisterTraceBenchmarks() {
  benchmark::RegisterBenchmark("TraceZoneOff", TraceZoneOff)
      ->Unit(benchmark::kMicrosecond);
}

}  // namespace weft_bench
