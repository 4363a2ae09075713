// weft benchmarks: what every benchmark file shares.
//
// Naming: every benchmark is "<Benchmark>/<implementation>", the
// implementation being a weft driver ("local-task", "local-sync") or a
// baseline ("OpenMP", "pthreadpool", "serial"). Per-item costs are custom
// counters computed from the wall time of the timed loop (ns_per_op,
// ns_per_workgroup, ns_per_dispatch), so they read the same in the console
// and in --benchmark_format=json.
#ifndef WEFT_BENCH_BENCH_UTIL_H_
#define WEFT_BENCH_BENCH_UTIL_H_

#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "bench_kernels.h"
#include "weft/weft.h"

namespace weft_bench {

// The weft drivers every weft benchmark runs on, in table order.
inline constexpr const char* kDrivers[] = {"local-task", "local-sync"};

// How long a host wait may take before the run is reported as hung.
inline constexpr int64_t kWaitTimeoutNs = 30ll * 1000 * 1000 * 1000;

// Formats |status| as "CODE: message; annotations [file:line]" and frees it.
std::string ConsumeStatus(weft_status_t status);

// Returns true when |status| is OK. Otherwise skips the run with
// "<what>: <status>", frees the status and returns false.
bool Ok(benchmark::State& state, weft_status_t status, const char* what);

// A one-entry semaphore list over caller-owned storage.
inline weft_semaphore_list_t List1(weft_semaphore_t** semaphore,
                                   const uint64_t* value) {
  weft_semaphore_list_t list = {1, semaphore, value};
  return list;
}

// A weft device with the benchmark kernels and one timeline semaphore.
// Everything it created is released by the destructor.
// WEFT_BENCH_THREADS=N runs every parallel row on N threads: local-task
// with workers=N, OpenMP with N threads, pthreadpool with a pool of N (the
// caller counts as one). Unset or 0: each picks its own default. Scaling
// tables pin the process with taskset beside it.
int BenchThreads();

// For local-task, |device_string| with the options of WEFT_BENCH_LOCAL_TASK
// added ("workers=3&assist=1": how weft spends N threads is a choice a
// scaling table compares), else with "workers=N" when WEFT_BENCH_THREADS is
// set; other device strings unchanged.
std::string DeviceStringWithThreads(const char* device_string);

class Session {
 public:
  Session() = default;
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session();

  // Creates the device from |device_string|, the kernel executable (unless
  // |with_kernels| is false: a device that takes no CPU kernels, e.g. a
  // GPU's, can then run the benchmarks that need none) and the semaphore.
  // On failure skips |state| with "<device> unavailable: <why>" and
  // returns false.
  bool Open(benchmark::State& state, const char* device_string,
            bool with_kernels = true);

  // Allocates a buffer of |length| bytes filled with |fill_pattern| (4
  // bytes). Skips |state| and returns NULL on failure; the session owns it.
  weft_buffer_t* AllocateBuffer(benchmark::State& state, size_t length,
                                uint32_t fill_pattern);

  // Waits until the semaphore reaches |value|; skips |state| on failure.
  bool Wait(benchmark::State& state, uint64_t value);

  // The worker count the device reports ("worker.count").
  int64_t WorkerCount();

  weft_device_t* device = nullptr;
  weft_executable_t* kernels = nullptr;
  weft_semaphore_t* semaphore = nullptr;
  // The last value signalled (or to be signalled) on |semaphore|.
  uint64_t value = 0;

 private:
  static constexpr int kMaxBuffers = 4;
  weft_buffer_t* buffers_[kMaxBuffers] = {};
  int buffer_count_ = 0;
};

// Wall time of the timed loop, for the per-item counters.
class LoopTimer {
 public:
  void Start() { start_ = std::chrono::steady_clock::now(); }
  void Stop() { stop_ = std::chrono::steady_clock::now(); }
  double Nanoseconds() const {
    return std::chrono::duration<double, std::nano>(stop_ - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point stop_;
};

// Sets counter |name| to the nanoseconds per item: the loop's wall time
// divided by iterations x |items_per_iteration|. Also sets items_per_second.
void SetNsPerItem(benchmark::State& state, const LoopTimer& timer,
                  const char* name, double items_per_iteration);

// A dispatch as the baselines run it: the kernel, the state every
// workgroup sees and the workgroup grid.
struct Launch {
  weft_kernel_fn_t fn = nullptr;
  weft_dispatch_state_t dispatch = {};
  // The first non-zero kernel result, 0 while every workgroup succeeded.
  std::atomic<int> failure{0};
};

// Runs workgroup |flat_index| (x fastest) of |launch| with thread-local
// scratch memory, as weft hands it to the kernel.
void RunWorkgroup(Launch* launch, size_t flat_index, uint32_t processor_id);

// SmallDispatchChain on a GPU device (cuda_bench.cc, vulkan_bench.cc):
// kGpuSmallChain dependent scale_offset dispatches (kernel |ordinal| of the
// CTS's GPU kernels, x = x * 1 + 1) over kGpuSmallElements floats,
// ping-ponging between |a| and |b| with a barrier between them, recorded
// once in a reusable command buffer; each iteration executes it and waits
// on |semaphore| for ++*|value|.
inline constexpr int kGpuSmallChain = 100;
inline constexpr uint32_t kGpuSmallElements = 256 * 1024 / sizeof(float);
void RunGpuSmallDispatchChain(benchmark::State& state, weft_device_t* device,
                              weft_executable_t* kernels, uint32_t ordinal,
                              weft_buffer_t* a, weft_buffer_t* b,
                              weft_semaphore_t* semaphore, uint64_t* value);

// Registers every benchmark of a file, in table order (called once from
// bench_registry.cc so the order does not depend on the link order).
// The queue rows any device runs (queue_bench.cc), for other files to
// register on their devices: a 64-byte fill round trip, and 16 fills
// chained by the session's semaphore (ns_per_op).
void QueueRoundTrip(benchmark::State& state, const char* device_string);
void QueueChain(benchmark::State& state, const char* device_string);

void RegisterQueueBenchmarks();
void RegisterDispatchBenchmarks();
void RegisterMatmulBenchmarks();
void RegisterFileBenchmarks();
void RegisterTraceBenchmarks();
void RegisterVmBenchmarks();
// Built with the examples (the decode example's decoder).
void RegisterDecodeBenchmarks();
// Built where the CUDA toolkit's headers are (WEFT_HAVE_CUDA).
void RegisterCudaBenchmarks();
// Built where Vulkan's headers are (WEFT_HAVE_VULKAN).
void RegisterVulkanBenchmarks();
// Built where either GPU driver is (semaphore_edge_bench.cc).
void RegisterSemaphoreEdgeBenchmarks();

}  // namespace weft_bench

#endif  // WEFT_BENCH_BENCH_UTIL_H_
