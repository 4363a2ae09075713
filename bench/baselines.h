// weft benchmarks: the thread pools weft is compared with.
//
// Each baseline runs a Launch (bench_util.h) as one parallel loop over its
// workgroups, calling the same kernel function weft calls. OpenMP and
// pthreadpool are compiled in only when CMake found them
// (WEFT_BENCH_HAVE_OPENMP, WEFT_BENCH_HAVE_PTHREADPOOL); the serial
// baseline always is.
#ifndef WEFT_BENCH_BASELINES_H_
#define WEFT_BENCH_BASELINES_H_

#include <benchmark/benchmark.h>

#include <cstddef>
#include <string>
#include <vector>

#include "bench_util.h"

namespace weft_bench {

enum class Baseline {
  // The calling thread alone, in workgroup order.
  kSerial,
  // `#pragma omp parallel for` with the default (static) schedule.
  kOpenMP,
  // `#pragma omp parallel for schedule(dynamic)`.
  kOpenMPDynamic,
  // pthreadpool_parallelize_1d on a pool of one thread per CPU.
  kPthreadpool,
};

// The name used in benchmark names: "serial", "OpenMP", "OpenMP-dynamic",
// "pthreadpool".
const char* BaselineName(Baseline baseline);

// The parallel baselines compiled into this binary, in table order.
std::vector<Baseline> ParallelBaselines();

// The threads of one baseline for one benchmark run.
class Pool {
 public:
  Pool() = default;
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;
  ~Pool();

  // Starts the baseline's threads (pthreadpool) or warms them up (OpenMP).
  // Skips |state| and returns false if that fails.
  bool Open(benchmark::State& state, Baseline baseline);

  // The number of threads a parallel loop runs on.
  int threads() const { return threads_; }

  // Runs workgroups [0, |count|) of |launch|; returns when all finished.
  void Run(Launch* launch, size_t count);

 private:
  Baseline baseline_ = Baseline::kSerial;
  int threads_ = 1;
  // A pthreadpool_t when the baseline is kPthreadpool.
  void* pthreadpool_ = nullptr;
};

}  // namespace weft_bench

#endif  // WEFT_BENCH_BASELINES_H_
