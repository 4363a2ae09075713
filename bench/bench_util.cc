// weft benchmarks: shared helpers (see bench_util.h).
#include "bench_util.h"

#include <cstdlib>
#include <cstring>
#include <string>

namespace weft_bench {

std::string ConsumeStatus(weft_status_t status) {
  char buffer[1024];
  weft_status_format(status, buffer, sizeof(buffer));
  weft_status_free(status);
  return std::string(buffer);
}

bool Ok(benchmark::State& state, weft_status_t status, const char* what) {
  if (weft_status_is_ok(status)) return true;
  std::string message = std::string(what) + ": " + ConsumeStatus(status);
  state.SkipWithError(message.c_str());
  return false;
}

int BenchThreads() {
  const char* text = getenv("WEFT_BENCH_THREADS");
  if (!text || !text[0]) return 0;
  const long threads = strtol(text, nullptr, 10);
  return threads > 0 && threads <= 4096 ? static_cast<int>(threads) : 0;
}

std::string DeviceStringWithThreads(const char* device_string) {
  const bool local_task =
      strncmp(device_string, "local-task", 10) == 0 &&
      (device_string[10] == '\0' || device_string[10] == '?');
  if (!local_task) return device_string;
  std::string options;
  const char* given = getenv("WEFT_BENCH_LOCAL_TASK");
  if (given && given[0]) {
    options = given;
  } else if (BenchThreads() > 0) {
    options = "workers=" + std::to_string(BenchThreads());
  }
  if (options.empty()) return device_string;
  return std::string(device_string) + (device_string[10] == '?' ? "&" : "?") +
         options;
}

Session::~Session() {
  for (int i = 0; i < buffer_count_; ++i) weft_buffer_release(buffers_[i]);
  weft_semaphore_release(semaphore);
  weft_executable_release(kernels);
  weft_device_release(device);
}

bool Session::Open(benchmark::State& state, const char* device_string,
                   bool with_kernels) {
  weft_allocator_t allocator = weft_allocator_system();
  const std::string full_string = DeviceStringWithThreads(device_string);
  weft_status_t status =
      weft_device_create(full_string.c_str(), allocator, &device);
  if (!weft_status_is_ok(status)) {
    std::string message =
        full_string + " unavailable: " + ConsumeStatus(status);
    state.SkipWithError(message.c_str());
    return false;
  }
  return (!with_kernels ||
          Ok(state,
             weft_device_create_executable(
                 device,
                 weft_executable_source_cpu_static(weft_bench_kernels_query),
                 &kernels),
             "weft_device_create_executable")) &&
         Ok(state, weft_device_create_semaphore(device, 0, &semaphore),
            "create_semaphore");
}

weft_buffer_t* Session::AllocateBuffer(benchmark::State& state, size_t length,
                                       uint32_t fill_pattern) {
  if (buffer_count_ == kMaxBuffers) {
    state.SkipWithError("Session::AllocateBuffer: more than 4 buffers");
    return nullptr;
  }
  weft_buffer_params_t params = {};
  weft_buffer_t* buffer = nullptr;
  if (!Ok(state, weft_device_allocate_buffer(device, params, length, &buffer),
          "allocate_buffer")) {
    return nullptr;
  }
  buffers_[buffer_count_++] = buffer;
  if (!Ok(state, weft_buffer_map_fill(buffer, 0, length, &fill_pattern, 4),
          "map_fill")) {
    return nullptr;
  }
  return buffer;
}

bool Session::Wait(benchmark::State& state, uint64_t wait_value) {
  return Ok(state,
            weft_semaphore_wait(semaphore, wait_value,
                                weft_timeout_relative(kWaitTimeoutNs)),
            "semaphore_wait");
}

int64_t Session::WorkerCount() {
  int64_t count = 1;
  weft_status_ignore(weft_device_query_i64(device, "worker.count", &count));
  return count;
}

void SetNsPerItem(benchmark::State& state, const LoopTimer& timer,
                  const char* name, double items_per_iteration) {
  double items = static_cast<double>(state.iterations()) * items_per_iteration;
  if (items <= 0) return;
  state.counters[name] = timer.Nanoseconds() / items;
  state.SetItemsProcessed(static_cast<int64_t>(items));
}

void RunWorkgroup(Launch* launch, size_t flat_index, uint32_t processor_id) {
  // Per-thread scratch, like the per-worker scratch weft hands kernels.
  alignas(64) static thread_local unsigned char
      scratch[WEFT_BENCH_MATMUL_SCRATCH_BYTES];
  const uint32_t* count = launch->dispatch.workgroup_count;
  weft_workgroup_state_t workgroup;
  if (count[1] == 1 && count[2] == 1) {
    // One-dimensional grids (most rows) need no division per workgroup.
    workgroup.workgroup_id[0] = static_cast<uint32_t>(flat_index);
    workgroup.workgroup_id[1] = 0;
    workgroup.workgroup_id[2] = 0;
  } else {
    workgroup.workgroup_id[0] = static_cast<uint32_t>(flat_index % count[0]);
    workgroup.workgroup_id[1] =
        static_cast<uint32_t>(flat_index / count[0] % count[1]);
    workgroup.workgroup_id[2] =
        static_cast<uint32_t>(flat_index / count[0] / count[1]);
  }
  workgroup.processor_id = processor_id;
  workgroup.local_memory = scratch;
  workgroup.local_memory_size = sizeof(scratch);
  int result = launch->fn(&launch->dispatch, &workgroup);
  if (result != 0) {
    int expected = 0;
    launch->failure.compare_exchange_strong(expected, result,
                                            std::memory_order_relaxed);
  }
}

void RunGpuSmallDispatchChain(benchmark::State& state, weft_device_t* device,
                              weft_executable_t* kernels, uint32_t ordinal,
                              weft_buffer_t* a, weft_buffer_t* b,
                              weft_semaphore_t* semaphore, uint64_t* value) {
  const size_t bytes = kGpuSmallElements * sizeof(float);
  weft_command_buffer_t* command_buffer = nullptr;
  if (!Ok(state,
          weft_command_buffer_create(device, WEFT_COMMAND_BUFFER_MODE_REUSABLE,
                                     WEFT_COMMAND_CATEGORY_ANY, 0,
                                     &command_buffer),
          "command_buffer_create")) {
    return;
  }
  bool ok = Ok(state, weft_command_buffer_begin(command_buffer), "begin");
  const uint32_t constants[3] = {0x3f800000u, 0x3f800000u, kGpuSmallElements};
  const uint32_t workgroups[3] = {kGpuSmallElements / 64, 1, 1};
  for (int i = 0; ok && i < kGpuSmallChain; ++i) {
    weft_buffer_t* from = i % 2 ? b : a;
    weft_buffer_t* to = i % 2 ? a : b;
    const weft_buffer_ref_t bindings[2] = {
        weft_make_buffer_ref(from, 0, bytes),
        weft_make_buffer_ref(to, 0, bytes)};
    ok = Ok(state,
            weft_command_buffer_dispatch(command_buffer, kernels, ordinal,
                                         workgroups, 3, constants, 2,
                                         bindings),
            "dispatch") &&
         Ok(state, weft_command_buffer_barrier(command_buffer), "barrier");
  }
  ok = ok && Ok(state, weft_command_buffer_end(command_buffer), "end");
  for (auto _ : state) {
    if (!ok) break;
    uint64_t target = ++*value;
    ok = Ok(state,
            weft_device_queue_execute(device, WEFT_QUEUE_AFFINITY_ANY,
                                      weft_semaphore_list_empty(),
                                      List1(&semaphore, &target),
                                      command_buffer,
                                      weft_binding_table_empty()),
            "queue_execute") &&
         Ok(state,
            weft_semaphore_wait(semaphore, target,
                                weft_timeout_relative(kWaitTimeoutNs)),
            "semaphore_wait");
  }
  weft_command_buffer_release(command_buffer);
}

}  // namespace weft_bench
