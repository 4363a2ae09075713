// weft benchmarks: the VM. VmLoop runs the same integer loop
// (s = s + i * 3) and float loop (x = x * 0.999 + 1.5) in the weft VM, in
// Lua 5.4 through its C API (when liblua5.4-dev is installed) and in plain
// C: ns per loop iteration. VmCall is an internal call of a two-argument
// function and a call into a native (C) function: ns per call. VmAwait is
// a round trip with a partner thread over two semaphores, the VM side an
// invocation on a loop that yields on every await, against the host
// blocking on the same wait. VmPipelines keeps 1,000 pipelines of three
// dependent queue operations in flight from one thread through the loop,
// against 1,000 host threads each blocking on its own; VmMlp is the MLP
// example's forward pass through the VM against the same dispatches from C
// (vm_hal_programs.h).
#include <malloc.h>

#include <cstring>
#include <string>

#include "bench_util.h"
#include "vm_hal_programs.h"
#include "vm_programs.h"

#if defined(WEFT_BENCH_HAVE_LUA)
extern "C" {
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
}
#endif

namespace weft_bench {
namespace {

// Loop iterations per benchmark iteration.
constexpr int64_t kIterations = 1 << 20;

void SetNsPerIteration(benchmark::State& state, int64_t per_run) {
  state.counters["ns_per_iteration"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * static_cast<double>(per_run),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void VmProgram(benchmark::State& state, weft_bench_vm_program_t program,
               uint64_t expected_bits_for_check) {
  weft_bench_vm_t* vm = nullptr;
  if (!Ok(state, weft_bench_vm_create(&vm), "weft_bench_vm_create")) return;
  uint64_t bits = 0;
  for (auto _ : state) {
    if (!Ok(state, weft_bench_vm_run(vm, program, kIterations, &bits),
            "weft_bench_vm_run")) {
      break;
    }
    benchmark::DoNotOptimize(bits);
  }
  if (expected_bits_for_check && bits != expected_bits_for_check) {
    std::string message = "the VM computed " + std::to_string(bits) +
                          ", C " + std::to_string(expected_bits_for_check);
    state.SkipWithError(message.c_str());
  }
  SetNsPerIteration(state, kIterations);
  weft_bench_vm_destroy(vm);
}

// The C versions.
uint64_t IntLoopC(int64_t n) {
  int64_t s = 0;
  for (int64_t i = 0; i < n; ++i) {
    s = s + i * 3;
    benchmark::DoNotOptimize(s);
  }
  return static_cast<uint64_t>(s);
}

uint64_t FloatLoopC(int64_t n) {
  double x = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    x = x * 0.999 + 1.5;
    benchmark::DoNotOptimize(x);
  }
  uint64_t bits;
  std::memcpy(&bits, &x, sizeof(bits));
  return bits;
}

void CLoop(benchmark::State& state, uint64_t (*loop)(int64_t)) {
  uint64_t bits = 0;
  for (auto _ : state) {
    bits = loop(kIterations);
    benchmark::DoNotOptimize(bits);
  }
  SetNsPerIteration(state, kIterations);
}

#if defined(WEFT_BENCH_HAVE_LUA)
const char* const kLuaIntLoop =
    "return function(n) local s = 0 for i = 0, n - 1 do s = s + i * 3 end "
    "return s end";
const char* const kLuaFloatLoop =
    "return function(n) local x = 0.0 for i = 1, n do x = x * 0.999 + 1.5 "
    "end return x end";

void LuaLoop(benchmark::State& state, const char* source, bool is_float,
             uint64_t expected_bits) {
  lua_State* lua = luaL_newstate();
  luaL_openlibs(lua);
  if (luaL_dostring(lua, source) != LUA_OK) {
    state.SkipWithError(lua_tostring(lua, -1));
    lua_close(lua);
    return;
  }
  uint64_t bits = 0;
  for (auto _ : state) {
    lua_pushvalue(lua, -1);
    lua_pushinteger(lua, kIterations);
    lua_call(lua, 1, 1);
    if (is_float) {
      double x = lua_tonumber(lua, -1);
      std::memcpy(&bits, &x, sizeof(bits));
    } else {
      bits = static_cast<uint64_t>(lua_tointeger(lua, -1));
    }
    lua_pop(lua, 1);
  }
  if (bits != expected_bits) {
    state.SkipWithError("Lua computed a different result than C");
  }
  SetNsPerIteration(state, kIterations);
  lua_close(lua);
}
#endif

// Round trips per VmAwait iteration.
constexpr int64_t kRoundTrips = 2000;

void VmAwait(benchmark::State& state, int through_loop) {
  weft_bench_vm_t* vm = nullptr;
  if (!Ok(state, weft_bench_vm_create(&vm), "weft_bench_vm_create")) return;
  weft_bench_await_partner_t* partner = nullptr;
  if (!Ok(state, weft_bench_await_partner_create(kRoundTrips, &partner),
          "weft_bench_await_partner_create")) {
    weft_bench_vm_destroy(vm);
    return;
  }
  for (auto _ : state) {
    if (!Ok(state, weft_bench_vm_await(vm, partner, through_loop),
            "weft_bench_vm_await")) {
      break;
    }
  }
  weft_bench_await_partner_destroy(partner);
  state.counters["ns_per_round_trip"] = benchmark::Counter(
      static_cast<double>(state.iterations()) *
          static_cast<double>(kRoundTrips),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  weft_bench_vm_destroy(vm);
}

// The heap in use, as glibc counts it.
int64_t HeapBytes() {
  struct mallinfo2 info = mallinfo2();
  return static_cast<int64_t>(info.uordblks + info.hblkhd);
}

// Bytes each suspended invocation holds (the loop, its stack, its wait).
void VmSuspended(benchmark::State& state) {
  constexpr int64_t kCount = 10000;
  weft_bench_vm_t* vm = nullptr;
  if (!Ok(state, weft_bench_vm_create(&vm), "weft_bench_vm_create")) return;
  int64_t bytes = 0;
  for (auto _ : state) {
    if (!Ok(state, weft_bench_vm_suspend(vm, kCount, HeapBytes, &bytes),
            "weft_bench_vm_suspend")) {
      break;
    }
  }
  state.counters["bytes_per_suspended_invocation"] =
      static_cast<double>(bytes);
  weft_bench_vm_destroy(vm);
}

// VmPipelines: pipelines per iteration.
constexpr uint32_t kPipelines = 1000;

// |kPipelines| pipelines (fill -> copy -> fill on 256-byte buffers) on
// local-task, through the loop on one thread or from one host thread each;
// ns per pipeline. The loop row also reports the heap each pipeline holds
// while parked, through the VM and from C.
void VmPipelines(benchmark::State& state, bool through_loop) {
  weft_bench_pipelines_t* pipelines = nullptr;
  if (Ok(state,
         weft_bench_pipelines_create("local-task", kPipelines, !through_loop,
                                     &pipelines),
         "weft_bench_pipelines_create")) {
    for (auto _ : state) {
      if (!Ok(state,
              through_loop ? weft_bench_pipelines_run_loop(pipelines)
                           : weft_bench_pipelines_run_threads(pipelines),
              through_loop ? "weft_bench_pipelines_run_loop"
                           : "weft_bench_pipelines_run_threads")) {
        break;
      }
    }
    state.counters["ns_per_pipeline"] = benchmark::Counter(
        static_cast<double>(state.iterations()) * kPipelines,
        benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    Ok(state, weft_bench_pipelines_verify(pipelines, through_loop ? 1 : 0),
       "weft_bench_pipelines_verify");
    int64_t invocation_bytes = 0;
    int64_t c_bytes = 0;
    // Under a sanitizer glibc's counts stay 0 (its allocator is replaced):
    // no counters then.
    if (through_loop &&
        Ok(state,
           weft_bench_pipelines_measure_parked(pipelines, HeapBytes,
                                               &invocation_bytes, &c_bytes),
           "weft_bench_pipelines_measure_parked") &&
        invocation_bytes > 0) {
      state.counters["bytes_per_suspended_invocation"] =
          static_cast<double>(invocation_bytes);
      state.counters["bytes_per_c_pipeline"] = static_cast<double>(c_bytes);
    }
  }
  weft_bench_pipelines_destroy(pipelines);
}

// The MLP example's forward pass with |k1| inputs, |n1| hidden units and
// |n2| outputs on local-task: through the VM as weft-run runs it, or the
// same two dispatches from C. Both check their output afterwards.
void VmMlp(benchmark::State& state, bool through_vm, uint32_t k1, uint32_t n1,
           uint32_t n2) {
  weft_bench_mlp_t* mlp = nullptr;
  if (Ok(state,
         weft_bench_mlp_create("local-task", WEFT_BENCH_MLP_PROGRAM, k1, n1,
                               n2, &mlp),
         "weft_bench_mlp_create")) {
    for (auto _ : state) {
      if (!Ok(state,
              through_vm ? weft_bench_mlp_forward_vm(mlp)
                         : weft_bench_mlp_forward_c(mlp),
              through_vm ? "weft_bench_mlp_forward_vm"
                         : "weft_bench_mlp_forward_c")) {
        break;
      }
    }
    Ok(state, weft_bench_mlp_check(mlp), "weft_bench_mlp_check");
  }
  weft_bench_mlp_destroy(mlp);
}

}  // namespace

// The results the loops must give, computed plainly (not through
// DoNotOptimize, which gcc's sanitizer builds miscompile in IntLoopC).
static uint64_t IntLoopExpected() {
  const uint64_t n = static_cast<uint64_t>(kIterations);
  return 3 * (n * (n - 1) / 2);
}

static uint64_t FloatLoopExpected() {
  volatile double x = 0.0;
  for (int64_t i = 0; i < kIterations; ++i) x = x * 0.999 + 1.5;
  const double value = x;
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

void RegisterVmBenchmarks() {
  const uint64_t int_expected = IntLoopExpected();
  const uint64_t float_expected = FloatLoopExpected();
  benchmark::RegisterBenchmark("VmLoop/int/weft", VmProgram,
                               WEFT_BENCH_VM_INT_LOOP, int_expected)
      ->Unit(benchmark::kMillisecond);
#if defined(WEFT_BENCH_HAVE_LUA)
  benchmark::RegisterBenchmark("VmLoop/int/lua5.4", LuaLoop, kLuaIntLoop,
                               false, int_expected)
      ->Unit(benchmark::kMillisecond);
#endif
  benchmark::RegisterBenchmark("VmLoop/int/C", CLoop, IntLoopC)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("VmLoop/float/weft", VmProgram,
                               WEFT_BENCH_VM_FLOAT_LOOP, float_expected)
      ->Unit(benchmark::kMillisecond);
#if defined(WEFT_BENCH_HAVE_LUA)
  benchmark::RegisterBenchmark("VmLoop/float/lua5.4", LuaLoop, kLuaFloatLoop,
                               true, float_expected)
      ->Unit(benchmark::kMillisecond);
#endif
  benchmark::RegisterBenchmark("VmLoop/float/C", CLoop, FloatLoopC)
      ->Unit(benchmark::kMillisecond);
  // add2 from 0 by 1, kIterations times: the sum is kIterations.
  benchmark::RegisterBenchmark("VmCall/internal", VmProgram,
                               WEFT_BENCH_VM_CALL_LOOP,
                               static_cast<uint64_t>(kIterations))
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("VmCall/native", VmProgram,
                               WEFT_BENCH_VM_NATIVE_LOOP,
                               static_cast<uint64_t>(kIterations))
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("VmAwait/loop", VmAwait, 1)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("VmAwait/host_wait", VmAwait, 0)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("VmSuspended", VmSuspended)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("VmPipelines/loop", VmPipelines, true)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("VmPipelines/threads", VmPipelines, false)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  // 1024x1024 then 1024x256 weights (about 2 ms of work on two cores),
  // and a small network whose work is a few microseconds, where the VM's
  // cost per pass shows.
  const uint32_t mlp_sizes[2][3] = {{1024, 1024, 256}, {64, 64, 16}};
  for (const auto& size : mlp_sizes) {
    const std::string suffix = "/" + std::to_string(size[0]) + "x" +
                               std::to_string(size[1]) + "x" +
                               std::to_string(size[2]);
    benchmark::RegisterBenchmark(("VmMlp/vm" + suffix).c_str(), VmMlp, true,
                                 size[0], size[1], size[2])
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("VmMlp/C" + suffix).c_str(), VmMlp, false,
                                 size[0], size[1], size[2])
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  }
}

}  // namespace weft_bench
