// weft benchmarks: registers every benchmark in table order before Google
// Benchmark's main runs (the default benchmark_main provides main, so
// --benchmark_filter, --benchmark_format=json and the rest all work).
#include "bench_util.h"

namespace weft_bench {
namespace {

int RegisterAll() {
  RegisterQueueBenchmarks();
  RegisterDispatchBenchmarks();
  RegisterMatmulBenchmarks();
  RegisterFileBenchmarks();
  RegisterTraceBenchmarks();
  RegisterVmBenchmarks();
#if defined(WEFT_BENCH_HAVE_DECODE)
  RegisterDecodeBenchmarks();
#endif
#if defined(WEFT_BENCH_HAVE_CUDA)
  RegisterCudaBenchmarks();
#endif
#if defined(WEFT_BENCH_HAVE_VULKAN)
  RegisterVulkanBenchmarks();
#endif
#if defined(WEFT_BENCH_HAVE_CUDA) || defined(WEFT_BENCH_HAVE_VULKAN)
  RegisterSemaphoreEdgeBenchmarks();
#endif
  return 0;
}

const int kRegistered = RegisterAll();

}  // namespace
}  // namespace weft_bench
