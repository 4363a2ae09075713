// weft benchmarks: the baselines (see baselines.h).
#include "baselines.h"

#if defined(WEFT_BENCH_HAVE_OPENMP)
#include <omp.h>
#endif
#if defined(WEFT_BENCH_HAVE_PTHREADPOOL)
#include <pthreadpool.h>
#endif

namespace weft_bench {
namespace {

#if defined(WEFT_BENCH_HAVE_PTHREADPOOL)
void PthreadpoolTask(void* context, size_t index) {
  RunWorkgroup(static_cast<Launch*>(context), index, 0);
}
#endif

#if defined(WEFT_BENCH_HAVE_OPENMP)
void RunOpenMP(Launch* launch, size_t count) {
  const long n = static_cast<long>(count);
#pragma omp parallel for
  for (long i = 0; i < n; ++i) {
    RunWorkgroup(launch, static_cast<size_t>(i),
                 static_cast<uint32_t>(omp_get_thread_num()));
  }
}

void RunOpenMPDynamic(Launch* launch, size_t count) {
  const long n = static_cast<long>(count);
#pragma omp parallel for schedule(dynamic)
  for (long i = 0; i < n; ++i) {
    RunWorkgroup(launch, static_cast<size_t>(i),
                 static_cast<uint32_t>(omp_get_thread_num()));
  }
}
#endif

}  // namespace

const char* BaselineName(Baseline baseline) {
  switch (baseline) {
    case Baseline::kSerial:
      return "serial";
    case Baseline::kOpenMP:
      return "OpenMP";
    case Baseline::kOpenMPDynamic:
      return "OpenMP-dynamic";
    case Baseline::kPthreadpool:
      return "pthreadpool";
  }
  return "unknown";
}

std::vector<Baseline> ParallelBaselines() {
  std::vector<Baseline> baselines;
#if defined(WEFT_BENCH_HAVE_OPENMP)
  baselines.push_back(Baseline::kOpenMP);
#endif
#if defined(WEFT_BENCH_HAVE_PTHREADPOOL)
  baselines.push_back(Baseline::kPthreadpool);
#endif
  return baselines;
}

Pool::~Pool() {
#if defined(WEFT_BENCH_HAVE_PTHREADPOOL)
  if (pthreadpool_) {
    pthreadpool_destroy(static_cast<pthreadpool_t>(pthreadpool_));
  }
#endif
}

bool Pool::Open(benchmark::State& state, Baseline baseline) {
  baseline_ = baseline;
  switch (baseline) {
    case Baseline::kSerial:
      threads_ = 1;
      return true;
    case Baseline::kOpenMP:
    case Baseline::kOpenMPDynamic:
#if defined(WEFT_BENCH_HAVE_OPENMP)
      if (BenchThreads() > 0) omp_set_num_threads(BenchThreads());
      threads_ = omp_get_max_threads();
      return true;
#else
      break;
#endif
    case Baseline::kPthreadpool:
#if defined(WEFT_BENCH_HAVE_PTHREADPOOL)
      // 0: one thread per CPU (the caller counts as one of them).
      pthreadpool_ = pthreadpool_create(static_cast<size_t>(BenchThreads()));
      if (!pthreadpool_) {
        state.SkipWithError("pthreadpool_create failed");
        return false;
      }
      threads_ = static_cast<int>(pthreadpool_get_threads_count(
          static_cast<pthreadpool_t>(pthreadpool_)));
      return true;
#else
      break;
#endif
  }
  std::string message =
      std::string(BaselineName(baseline)) + " was not found at configure time";
  state.SkipWithError(message.c_str());
  return false;
}

void Pool::Run(Launch* launch, size_t count) {
  switch (baseline_) {
    case Baseline::kSerial:
      for (size_t i = 0; i < count; ++i) RunWorkgroup(launch, i, 0);
      break;
    case Baseline::kOpenMP:
#if defined(WEFT_BENCH_HAVE_OPENMP)
      RunOpenMP(launch, count);
#endif
      break;
    case Baseline::kOpenMPDynamic:
#if defined(WEFT_BENCH_HAVE_OPENMP)
      RunOpenMPDynamic(launch, count);
#endif
      break;
    case Baseline::kPthreadpool:
#if defined(WEFT_BENCH_HAVE_PTHREADPOOL)
      pthreadpool_parallelize_1d(static_cast<pthreadpool_t>(pthreadpool_),
                                 PthreadpoolTask, launch, count, 0);
#endif
      break;
  }
}

}  // namespace weft_bench
