// weft benchmarks: a 1024x1024x1024 SGEMM in 64x64 output tiles. weft
// dispatches one workgroup per tile; OpenMP and pthreadpool run one
// parallel loop over the same tiles; "serial" runs them on one thread. All
// call the same blocked kernel (bench_kernels.c). Reports GFLOP/s and the
// parallel efficiency: GFLOP/s / (threads x serial GFLOP/s).
#include <string>
#include <vector>

#include "baselines.h"
#include "bench_util.h"

namespace weft_bench {
namespace {

constexpr uint32_t kSize = 1024;  // M = N = K
constexpr uint32_t kTilesPerSide = kSize / WEFT_BENCH_MATMUL_TILE;
constexpr double kFlops = 2.0 * kSize * kSize * kSize;
constexpr size_t kMatrixBytes = static_cast<size_t>(kSize) * kSize * 4;

// Inputs whose products and sums are exact in a float (multiples of 1/64
// below 2^10), so every checked element must match exactly.
float InputA(uint32_t i, uint32_t k) {
  return static_cast<float>(static_cast<int>((i * 7 + k * 3) % 17) - 8) / 8;
}
float InputB(uint32_t k, uint32_t j) {
  return static_cast<float>(static_cast<int>((k * 5 + j * 11) % 13) - 6) / 8;
}

void FillInputs(std::vector<float>* a, std::vector<float>* b) {
  a->resize(static_cast<size_t>(kSize) * kSize);
  b->resize(static_cast<size_t>(kSize) * kSize);
  for (uint32_t r = 0; r < kSize; ++r) {
    for (uint32_t c = 0; c < kSize; ++c) {
      (*a)[static_cast<size_t>(r) * kSize + c] = InputA(r, c);
      (*b)[static_cast<size_t>(r) * kSize + c] = InputB(r, c);
    }
  }
}

// Compares every 4093rd element of |c| and the last one with a
// double-precision reference.
void CheckResult(benchmark::State& state, const float* c) {
  const size_t total = static_cast<size_t>(kSize) * kSize;
  std::vector<size_t> indices;
  for (size_t index = 0; index < total; index += 4093) indices.push_back(index);
  indices.push_back(total - 1);
  for (size_t index : indices) {
    uint32_t i = static_cast<uint32_t>(index / kSize);
    uint32_t j = static_cast<uint32_t>(index % kSize);
    double expected = 0;
    for (uint32_t k = 0; k < kSize; ++k) {
      expected += static_cast<double>(InputA(i, k)) * InputB(k, j);
    }
    if (static_cast<double>(c[index]) != expected) {
      std::string message = "Matmul: C[" + std::to_string(i) + "][" +
                            std::to_string(j) +
                            "] = " + std::to_string(c[index]) + ", expected " +
                            std::to_string(expected);
      state.SkipWithError(message.c_str());
      return;
    }
  }
}

// The fastest serial time per matmul seen in this process (0: none yet).
// Matmul/serial runs first and records it; the parallel rows divide by it.
double g_serial_seconds = 0;

void Launch3(Launch* launch, void* const* ptrs, const size_t* lengths,
             const uint32_t* constants) {
  launch->fn = weft_bench_matmul_tile_kernel;
  launch->dispatch.workgroup_count[0] = kTilesPerSide;
  launch->dispatch.workgroup_count[1] = kTilesPerSide;
  launch->dispatch.workgroup_count[2] = 1;
  launch->dispatch.workgroup_size[0] = WEFT_BENCH_MATMUL_TILE;
  launch->dispatch.workgroup_size[1] = WEFT_BENCH_MATMUL_TILE;
  launch->dispatch.workgroup_size[2] = 1;
  launch->dispatch.constant_count = 3;
  launch->dispatch.constants = constants;
  launch->dispatch.binding_count = 3;
  launch->dispatch.binding_ptrs = ptrs;
  launch->dispatch.binding_lengths = lengths;
}

// Runs the serial matmul a few times if nothing recorded a serial time yet.
void EnsureSerialReference() {
  if (g_serial_seconds > 0) return;
  std::vector<float> a, b;
  FillInputs(&a, &b);
  std::vector<float> c(static_cast<size_t>(kSize) * kSize);
  void* ptrs[3] = {a.data(), b.data(), c.data()};
  const size_t lengths[3] = {kMatrixBytes, kMatrixBytes, kMatrixBytes};
  const uint32_t constants[3] = {kSize, kSize, kSize};
  Launch launch;
  Launch3(&launch, ptrs, lengths, constants);
  for (int run = 0; run < 3; ++run) {
    LoopTimer timer;
    timer.Start();
    for (size_t i = 0; i < kTilesPerSide * kTilesPerSide; ++i) {
      RunWorkgroup(&launch, i, 0);
    }
    timer.Stop();
    double seconds = timer.Nanoseconds() * 1e-9;
    if (g_serial_seconds == 0 || seconds < g_serial_seconds) {
      g_serial_seconds = seconds;
    }
  }
}

void SetMatmulCounters(benchmark::State& state, const LoopTimer& timer,
                       int threads) {
  if (state.iterations() == 0) return;
  double seconds =
      timer.Nanoseconds() * 1e-9 / static_cast<double>(state.iterations());
  state.counters["GFLOPS"] = kFlops / seconds * 1e-9;
  state.counters["workers"] = threads;
  EnsureSerialReference();
  state.counters["efficiency"] =
      g_serial_seconds / (seconds * static_cast<double>(threads));
}

void MatmulWeft(benchmark::State& state, const char* driver) {
  Session session;
  if (!session.Open(state, driver)) return;
  std::vector<float> a_host, b_host;
  FillInputs(&a_host, &b_host);
  weft_buffer_t* a = session.AllocateBuffer(state, kMatrixBytes, 0);
  weft_buffer_t* b =
      a ? session.AllocateBuffer(state, kMatrixBytes, 0) : nullptr;
  weft_buffer_t* c =
      b ? session.AllocateBuffer(state, kMatrixBytes, 0) : nullptr;
  if (!c ||
      !Ok(state, weft_buffer_map_write(a, 0, a_host.data(), kMatrixBytes),
          "map_write") ||
      !Ok(state, weft_buffer_map_write(b, 0, b_host.data(), kMatrixBytes),
          "map_write")) {
    return;
  }
  const uint32_t workgroups[3] = {kTilesPerSide, kTilesPerSide, 1};
  const uint32_t constants[3] = {kSize, kSize, kSize};
  const weft_buffer_ref_t bindings[3] = {
      weft_make_buffer_ref(a, 0, kMatrixBytes),
      weft_make_buffer_ref(b, 0, kMatrixBytes),
      weft_make_buffer_ref(c, 0, kMatrixBytes),
  };
  bool ok = true;
  LoopTimer timer;
  timer.Start();
  for (auto _ : state) {
    uint64_t value = ++session.value;
    ok = Ok(state,
            weft_device_queue_dispatch(
                session.device, WEFT_QUEUE_AFFINITY_ANY,
                weft_semaphore_list_empty(), List1(&session.semaphore, &value),
                session.kernels, WEFT_BENCH_KERNEL_MATMUL_TILE, workgroups, 3,
                constants, 3, bindings),
            "queue_dispatch") &&
         session.Wait(state, value);
    if (!ok) break;
  }
  timer.Stop();
  if (!ok) return;
  SetMatmulCounters(state, timer, static_cast<int>(session.WorkerCount()));
  std::vector<float> result(static_cast<size_t>(kSize) * kSize);
  if (Ok(state, weft_buffer_map_read(c, 0, result.data(), kMatrixBytes),
         "map_read")) {
    CheckResult(state, result.data());
  }
}

void MatmulBaseline(benchmark::State& state, Baseline baseline) {
  Pool pool;
  if (!pool.Open(state, baseline)) return;
  std::vector<float> a, b;
  FillInputs(&a, &b);
  std::vector<float> c(static_cast<size_t>(kSize) * kSize);
  void* ptrs[3] = {a.data(), b.data(), c.data()};
  const size_t lengths[3] = {kMatrixBytes, kMatrixBytes, kMatrixBytes};
  const uint32_t constants[3] = {kSize, kSize, kSize};
  Launch launch;
  Launch3(&launch, ptrs, lengths, constants);
  LoopTimer timer;
  timer.Start();
  for (auto _ : state) pool.Run(&launch, kTilesPerSide * kTilesPerSide);
  timer.Stop();
  if (baseline == Baseline::kSerial && state.iterations() > 0) {
    double seconds =
        timer.Nanoseconds() * 1e-9 / static_cast<double>(state.iterations());
    if (g_serial_seconds == 0 || seconds < g_serial_seconds) {
      g_serial_seconds = seconds;
    }
  }
  SetMatmulCounters(state, timer, pool.threads());
  if (launch.failure.load(std::memory_order_relaxed) != 0) {
    state.SkipWithError("Matmul: the matmul_tile kernel failed");
  } else {
    CheckResult(state, c.data());
  }
}

}  // namespace

void RegisterMatmulBenchmarks() {
  benchmark::RegisterBenchmark("Matmul/serial", MatmulBaseline,
                               Baseline::kSerial)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  for (const char* driver : kDrivers) {
    std::string name = std::string("Matmul/") + driver;
    benchmark::RegisterBenchmark(name.c_str(), MatmulWeft, driver)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  for (Baseline baseline : ParallelBaselines()) {
    std::string name = std::string("Matmul/") + BaselineName(baseline);
    benchmark::RegisterBenchmark(name.c_str(), MatmulBaseline, baseline)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace weft_bench
