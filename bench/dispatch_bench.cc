// weft benchmarks: dispatch throughput. Many workgroups of an empty kernel
// in one dispatch (the cost per workgroup), and a chain of 100 small
// dependent dispatches recorded once (the shape of an LLM decode step),
// each beside OpenMP and pthreadpool running the same kernel.
#include <cstring>
#include <string>
#include <vector>

#include "baselines.h"
#include "bench_util.h"

namespace weft_bench {
namespace {

// Workgroups of the empty kernel in one DispatchTiles dispatch.
constexpr uint32_t kTileCount = 4096;
// Dependent dispatches in one SmallDispatchChain iteration.
constexpr int kChainDispatches = 100;
// Floats each chain dispatch reads (x) and updates (y): 256 KiB.
constexpr uint32_t kChainElements = 65536;
constexpr uint32_t kChainWorkgroups =
    kChainElements / WEFT_BENCH_AXPY_WORKGROUP_ELEMENTS;
// y starts at 0 and x at 1; a = 1/1024 keeps every y exact in a float while
// fewer than 2^24 dispatches ran, so the result can be checked exactly.
constexpr float kChainA = 1.0f / 1024.0f;
constexpr uint32_t kOneBits = 0x3F800000u;  // 1.0f
constexpr double kExactDispatchLimit = 16777216.0;

uint32_t FloatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

// Checks that every y equals dispatches * a (when that is exact).
void CheckChainResult(benchmark::State& state, const float* y,
                      double dispatches) {
  if (dispatches >= kExactDispatchLimit) return;
  const float expected = static_cast<float>(dispatches * kChainA);
  for (uint32_t i = 0; i < kChainElements; ++i) {
    if (y[i] != expected) {
      std::string message = "SmallDispatchChain: y[" + std::to_string(i) +
                            "] = " + std::to_string(y[i]) + ", expected " +
                            std::to_string(expected);
      state.SkipWithError(message.c_str());
      return;
    }
  }
}

void DispatchTilesWeft(benchmark::State& state, const char* driver) {
  Session session;
  if (!session.Open(state, driver)) return;
  const uint32_t workgroups[3] = {kTileCount, 1, 1};
  LoopTimer timer;
  timer.Start();
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
  timer.Stop();
  SetNsPerItem(state, timer, "ns_per_workgroup", kTileCount);
  state.counters["workers"] = static_cast<double>(session.WorkerCount());
}

void DispatchTilesBaseline(benchmark::State& state, Baseline baseline) {
  Pool pool;
  if (!pool.Open(state, baseline)) return;
  Launch launch;
  launch.fn = weft_bench_empty_kernel;
  launch.dispatch.workgroup_count[0] = kTileCount;
  launch.dispatch.workgroup_count[1] = 1;
  launch.dispatch.workgroup_count[2] = 1;
  launch.dispatch.workgroup_size[0] = 1;
  launch.dispatch.workgroup_size[1] = 1;
  launch.dispatch.workgroup_size[2] = 1;
  LoopTimer timer;
  timer.Start();
  for (auto _ : state) pool.Run(&launch, kTileCount);
  timer.Stop();
  SetNsPerItem(state, timer, "ns_per_workgroup", kTileCount);
  state.counters["workers"] = pool.threads();
}

// One reusable command buffer: 100 axpy dispatches with barriers between.
void SmallDispatchChainWeft(benchmark::State& state, const char* driver) {
  Session session;
  if (!session.Open(state, driver)) return;
  const size_t bytes = kChainElements * sizeof(float);
  weft_buffer_t* x = session.AllocateBuffer(state, bytes, kOneBits);
  weft_buffer_t* y = x ? session.AllocateBuffer(state, bytes, 0) : nullptr;
  if (!y) return;
  weft_command_buffer_t* command_buffer = nullptr;
  const uint32_t workgroups[3] = {kChainWorkgroups, 1, 1};
  const uint32_t constants[2] = {FloatBits(kChainA), kChainElements};
  const weft_buffer_ref_t bindings[2] = {
      weft_make_buffer_ref(x, 0, bytes),
      weft_make_buffer_ref(y, 0, bytes),
  };
  bool ok = Ok(state,
               weft_command_buffer_create(
                   session.device, WEFT_COMMAND_BUFFER_MODE_REUSABLE,
                   WEFT_COMMAND_CATEGORY_DISPATCH, 0, &command_buffer),
               "command_buffer_create") &&
            Ok(state, weft_command_buffer_begin(command_buffer),
               "command_buffer_begin");
  for (int i = 0; ok && i < kChainDispatches; ++i) {
    if (i > 0) {
      ok = Ok(state, weft_command_buffer_barrier(command_buffer),
              "command_buffer_barrier");
    }
    ok = ok && Ok(state,
                  weft_command_buffer_dispatch(
                      command_buffer, session.kernels, WEFT_BENCH_KERNEL_AXPY,
                      workgroups, 2, constants, 2, bindings),
                  "command_buffer_dispatch");
  }
  ok = ok &&
       Ok(state, weft_command_buffer_end(command_buffer), "command_buffer_end");
  const weft_binding_table_t no_bindings = {0, nullptr};
  LoopTimer timer;
  timer.Start();
  for (auto _ : state) {
    if (!ok) break;
    uint64_t value = ++session.value;
    ok = Ok(state,
            weft_device_queue_execute(session.device, WEFT_QUEUE_AFFINITY_ANY,
                                      weft_semaphore_list_empty(),
                                      List1(&session.semaphore, &value),
                                      command_buffer, no_bindings),
            "queue_execute") &&
         session.Wait(state, value);
  }
  timer.Stop();
  if (ok) {
    SetNsPerItem(state, timer, "ns_per_dispatch", kChainDispatches);
    state.counters["workers"] = static_cast<double>(session.WorkerCount());
    std::vector<float> result(kChainElements);
    if (Ok(state, weft_buffer_map_read(y, 0, result.data(), bytes),
           "map_read")) {
      CheckChainResult(
          state, result.data(),
          static_cast<double>(state.iterations()) * kChainDispatches);
    }
  }
  weft_command_buffer_release(command_buffer);
}

// One parallel loop per dispatch, 100 loops in a row.
void SmallDispatchChainBaseline(benchmark::State& state, Baseline baseline) {
  Pool pool;
  if (!pool.Open(state, baseline)) return;
  std::vector<float> x(kChainElements, 1.0f);
  std::vector<float> y(kChainElements, 0.0f);
  void* binding_ptrs[2] = {x.data(), y.data()};
  const size_t binding_lengths[2] = {kChainElements * sizeof(float),
                                     kChainElements * sizeof(float)};
  const uint32_t constants[2] = {FloatBits(kChainA), kChainElements};
  Launch launch;
  launch.fn = weft_bench_axpy_kernel;
  launch.dispatch.workgroup_count[0] = kChainWorkgroups;
  launch.dispatch.workgroup_count[1] = 1;
  launch.dispatch.workgroup_count[2] = 1;
  launch.dispatch.workgroup_size[0] = WEFT_BENCH_AXPY_WORKGROUP_ELEMENTS;
  launch.dispatch.workgroup_size[1] = 1;
  launch.dispatch.workgroup_size[2] = 1;
  launch.dispatch.constant_count = 2;
  launch.dispatch.constants = constants;
  launch.dispatch.binding_count = 2;
  launch.dispatch.binding_ptrs = binding_ptrs;
  launch.dispatch.binding_lengths = binding_lengths;
  LoopTimer timer;
  timer.Start();
  for (auto _ : state) {
    for (int i = 0; i < kChainDispatches; ++i) {
      pool.Run(&launch, kChainWorkgroups);
    }
  }
  timer.Stop();
  SetNsPerItem(state, timer, "ns_per_dispatch", kChainDispatches);
  state.counters["workers"] = pool.threads();
  if (launch.failure.load(std::memory_order_relaxed) != 0) {
    state.SkipWithError("SmallDispatchChain: the axpy kernel failed");
  } else {
    CheckChainResult(
        state, y.data(),
        static_cast<double>(state.iterations()) * kChainDispatches);
  }
}

}  // namespace

void RegisterDispatchBenchmarks() {
  std::vector<Baseline> tile_baselines = ParallelBaselines();
  for (size_t i = 0; i < tile_baselines.size(); ++i) {
    if (tile_baselines[i] == Baseline::kOpenMP) {
      // Also the dynamic schedule, the one a work-claiming pool resembles.
      tile_baselines.insert(tile_baselines.begin() + i + 1,
                            Baseline::kOpenMPDynamic);
      break;
    }
  }
  for (const char* driver : kDrivers) {
    std::string name = std::string("DispatchTiles/") + driver;
    benchmark::RegisterBenchmark(name.c_str(), DispatchTilesWeft, driver)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  }
  for (Baseline baseline : tile_baselines) {
    std::string name = std::string("DispatchTiles/") + BaselineName(baseline);
    benchmark::RegisterBenchmark(name.c_str(), DispatchTilesBaseline, baseline)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  }
  for (const char* driver : kDrivers) {
    std::string name = std::string("SmallDispatchChain/") + driver;
    benchmark::RegisterBenchmark(name.c_str(), SmallDispatchChainWeft, driver)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  }
  for (Baseline baseline : ParallelBaselines()) {
    std::string name =
        std::string("SmallDispatchChain/") + BaselineName(baseline);
    benchmark::RegisterBenchmark(name.c_str(), SmallDispatchChainBaseline,
                                 baseline)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  }
}

}  // namespace weft_bench
