// weft benchmarks: queue latency. A fill, a chain of fills and a
// one-workgroup dispatch, each from submit to the host seeing its signal,
// beside the physical limits of a cross-thread round trip (a blocking futex
// ping-pong and a spinning one).
#include <string>

#include "bench_util.h"
#include "pingpong.h"

extern "C" {
#include "base/thread.h"
}

namespace weft_bench {
namespace {

// Operations in one QueueChain iteration.
constexpr int kChainLength = 16;
// Bytes each queue fill writes.
constexpr weft_device_size_t kFillBytes = 64;

void PingPong(benchmark::State& state, weft_bench_pingpong_mode_t mode) {
  if (mode == WEFT_BENCH_PINGPONG_SPIN &&
      weft_thread_available_cpu_count() < 2) {
    state.SkipWithError(
        "SpinPingPong needs 2 CPUs (it would only measure "
        "time slices on 1)");
    return;
  }
  weft_bench_pingpong_t* pingpong = nullptr;
  if (!Ok(state, weft_bench_pingpong_create(mode, &pingpong),
          "pingpong_create")) {
    return;
  }
  for (auto _ : state) weft_bench_pingpong_round_trip(pingpong);
  weft_bench_pingpong_destroy(pingpong);
}

// One workgroup of the empty kernel, submit to host-observed completion.
void DispatchRoundTrip(benchmark::State& state, const char* driver) {
  Session session;
  if (!session.Open(state, driver)) return;
  const uint32_t workgroups[3] = {1, 1, 1};
  for (auto _ : state) {
    uint64_t value = ++session.value;
    if (!Ok(state,
            weft_device_queue_dispatch(session.device, WEFT_QUEUE_AFFINITY_ANY,
                                       weft_semaphore_list_empty(),
                                       List1(&session.semaphore, &value),
                                       session.kernels, WEFT_BENCH_KERNEL_EMPTY,
                                       workgroups, 0, nullptr, 0, nullptr),
            "queue_dispatch") ||
        !session.Wait(state, value)) {
      break;
    }
  }
}

}  // namespace

// A 64-byte fill signalling the semaphore; the host waits for it.
void QueueRoundTrip(benchmark::State& state, const char* driver) {
  Session session;
  if (!session.Open(state, driver, /*with_kernels=*/false)) return;
  weft_buffer_t* buffer = session.AllocateBuffer(state, kFillBytes, 0);
  if (!buffer) return;
  const uint32_t pattern = 0x5A5A5A5Au;
  for (auto _ : state) {
    uint64_t value = ++session.value;
    if (!Ok(state,
            weft_device_queue_fill(session.device, WEFT_QUEUE_AFFINITY_ANY,
                                   weft_semaphore_list_empty(),
                                   List1(&session.semaphore, &value), buffer, 0,
                                   kFillBytes, &pattern, sizeof(pattern)),
            "queue_fill") ||
        !session.Wait(state, value)) {
      break;
    }
  }
}

// 16 fills, each waiting for the previous one's signal; one host wait.
void QueueChain(benchmark::State& state, const char* driver) {
  Session session;
  if (!session.Open(state, driver, /*with_kernels=*/false)) return;
  weft_buffer_t* buffer = session.AllocateBuffer(state, kFillBytes, 0);
  if (!buffer) return;
  LoopTimer timer;
  timer.Start();
  for (auto _ : state) {
    bool ok = true;
    for (int i = 0; ok && i < kChainLength; ++i) {
      uint64_t wait_value = session.value;
      uint64_t signal_value = ++session.value;
      uint32_t pattern = static_cast<uint32_t>(i);
      ok = Ok(state,
              weft_device_queue_fill(session.device, WEFT_QUEUE_AFFINITY_ANY,
                                     List1(&session.semaphore, &wait_value),
                                     List1(&session.semaphore, &signal_value),
                                     buffer, 0, kFillBytes, &pattern,
                                     sizeof(pattern)),
              "queue_fill");
    }
    if (!ok || !session.Wait(state, session.value)) break;
  }
  timer.Stop();
  SetNsPerItem(state, timer, "ns_per_op", kChainLength);
}

void RegisterQueueBenchmarks() {
  benchmark::RegisterBenchmark("FutexPingPong", PingPong,
                               WEFT_BENCH_PINGPONG_FUTEX)
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("SpinPingPong", PingPong,
                               WEFT_BENCH_PINGPONG_SPIN)
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
  for (const char* driver : kDrivers) {
    std::string name = std::string("QueueRoundTrip/") + driver;
    benchmark::RegisterBenchmark(name.c_str(), QueueRoundTrip, driver)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  }
  for (const char* driver : kDrivers) {
    std::string name = std::string("QueueChain/") + driver;
    benchmark::RegisterBenchmark(name.c_str(), QueueChain, driver)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  }
  for (const char* driver : kDrivers) {
    std::string name = std::string("DispatchRoundTrip/") + driver;
    benchmark::RegisterBenchmark(name.c_str(), DispatchRoundTrip, driver)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  }
}

}  // namespace weft_bench
