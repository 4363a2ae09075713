// weft benchmarks: the vulkan driver, and its semaphores the GPU waits on
// against the same edges met on the host.
//
// Rows run on whatever device the Vulkan loader offers first ("vulkan"):
// on a machine without a GPU that is Mesa's software device (lavapipe),
// whose figures compare mechanisms on the host, never GPU speed. Where
// there is no loader or device each row is skipped saying why.
//
// Rows:
//   QueueRoundTrip/vulkan, QueueChain/vulkan   queue_bench.cc's rows
//   QueueChain/vulkan-host-waits   the chain on "gpu_waits=off": each fill
//                      held until the host sees the one before complete
//   SmallDispatchChain/vulkan      100 dependent elementwise kernels over
//                      256 KiB in a reusable command buffer (as cuda's row)
//   SemaphoreEdge/<edge>  an op A signals a semaphore, an op B waits on
//                      it and signals another the host waits for: one
//                      iteration is A and B submitted and B seen done.
//       gpu-gpu            A and B fills on the device, B waiting on the GPU
//       gpu-gpu-host       the same on "gpu_waits=off" (B held on the host
//                          until A's completion is seen, then submitted)
//       host-gpu           B waits on a Vulkan semaphore the host signals
//       host-gpu-hostsem   B waits on a host semaphore instead
//       gpu-local-task     B is a local-task barrier waiting on A's Vulkan
//                          semaphore
//       gpu-gpu-two-queues A on queue 0, B on queue 1 of "queues=2" (two
//                          Vulkan queues where the family has them; on
//                          Mesa's device both are its one queue)
#include <string>
#include <vector>

#include "bench_util.h"

extern "C" {
#if defined(WEFT_BENCH_HAVE_VULKAN_KERNELS)
#include "vulkan/cts_vulkan_kernels.h"
#endif
}

namespace weft_bench {
namespace {

constexpr size_t kFillBytes = 64;

// A vulkan device, the CTS's SPIR-V kernels (when asked for) and the
// session's semaphore; buffers it allocates are its own.
class VulkanSession {
 public:
  ~VulkanSession() {
    for (weft_buffer_t* buffer : buffers_) weft_buffer_release(buffer);
    weft_semaphore_release(semaphore);
    weft_executable_release(kernels);
    weft_device_release(device);
  }

  bool Open(benchmark::State& state, const char* device_string,
            bool with_kernels) {
    weft_status_t status =
        weft_device_create(device_string, weft_allocator_system(), &device);
    if (!weft_status_is_ok(status)) {
      std::string message =
          std::string(device_string) + " unavailable: " + ConsumeStatus(status);
      state.SkipWithError(message.c_str());
      return false;
    }
    if (with_kernels) {
#if defined(WEFT_BENCH_HAVE_VULKAN_KERNELS)
      if (!Ok(state,
              weft_device_create_executable(
                  device,
                  weft_executable_source_spirv(
                      "cts_test_kernels", weft_cts_vulkan_spirv,
                      weft_cts_vulkan_spirv_size, weft_cts_gpu_kernel_count,
                      weft_cts_gpu_kernel_table),
                  &kernels),
              "create_executable")) {
        return false;
      }
#else
      state.SkipWithError("no SPIR-V kernels (glslang was not found)");
      return false;
#endif
    }
    return Ok(state, weft_device_create_semaphore(device, 0, &semaphore),
              "create_semaphore");
  }

  weft_buffer_t* Allocate(benchmark::State& state, size_t length) {
    weft_buffer_t* buffer = nullptr;
    if (!Ok(state,
            weft_device_allocate_buffer(device, weft_buffer_params_t{}, length,
                                        &buffer),
            "allocate_buffer")) {
      return nullptr;
    }
    buffers_.push_back(buffer);
    return buffer;
  }

  bool Wait(benchmark::State& state, weft_semaphore_t* on, uint64_t target) {
    return Ok(state,
              weft_semaphore_wait(on, target,
                                  weft_timeout_relative(kWaitTimeoutNs)),
              "semaphore_wait");
  }

  weft_device_t* device = nullptr;
  weft_executable_t* kernels = nullptr;
  weft_semaphore_t* semaphore = nullptr;
  uint64_t value = 0;

 private:
  std::vector<weft_buffer_t*> buffers_;
};

void SmallDispatchChainVulkan(benchmark::State& state) {
  VulkanSession session;
  if (!session.Open(state, "vulkan", true)) return;
  const size_t bytes = kGpuSmallElements * sizeof(float);
  weft_buffer_t* a = session.Allocate(state, bytes);
  weft_buffer_t* b = session.Allocate(state, bytes);
  if (!a || !b) return;
  RunGpuSmallDispatchChain(state, session.device, session.kernels, 0, a, b,
                           session.semaphore, &session.value);
}

enum class Edge {
  kGpuGpu,
  kGpuGpuHost,
  kGpuGpuTwoQueues,
  kHostGpu,
  kHostGpuHostSemaphore,
  kGpuLocalTask,
};

void SemaphoreEdge(benchmark::State& state, Edge edge) {
  VulkanSession session;
  const char* device_string =
      edge == Edge::kGpuGpuHost        ? "vulkan?gpu_waits=off"
      : edge == Edge::kGpuGpuTwoQueues ? "vulkan?queues=2"
                                       : "vulkan";
  const weft_queue_affinity_t queue_b =
      edge == Edge::kGpuGpuTwoQueues ? 2 : WEFT_QUEUE_AFFINITY_ANY;
  if (!session.Open(state, device_string, false)) return;
  weft_buffer_t* buffer = session.Allocate(state, 2 * kFillBytes);
  if (!buffer) return;
  // What B waits on: the session's semaphore (A signals it, or the host
  // does), or a host semaphore.
  weft_semaphore_t* upstream = session.semaphore;
  weft_semaphore_t* host = nullptr;
  weft_device_t* cpu = nullptr;
  weft_semaphore_t* done = nullptr;
  bool ok = true;
  if (edge == Edge::kHostGpuHostSemaphore) {
    ok = Ok(state, weft_semaphore_create(weft_allocator_system(), 0, &host),
            "semaphore_create");
    upstream = host;
  }
  if (ok && edge == Edge::kGpuLocalTask) {
    ok = Ok(state,
            weft_device_create("local-task", weft_allocator_system(), &cpu),
            "local-task") &&
         Ok(state, weft_device_create_semaphore(cpu, 0, &done),
            "create_semaphore");
  } else if (ok) {
    ok = Ok(state, weft_device_create_semaphore(session.device, 0, &done),
            "create_semaphore");
  }
  const uint32_t pattern = 0x5A5A5A5Au;
  for (auto _ : state) {
    if (!ok) break;
    uint64_t value = ++session.value;
    const bool gpu_a = edge == Edge::kGpuGpu || edge == Edge::kGpuGpuHost ||
                       edge == Edge::kGpuGpuTwoQueues ||
                       edge == Edge::kGpuLocalTask;
    if (gpu_a) {
      ok = Ok(state,
              weft_device_queue_fill(session.device, WEFT_QUEUE_AFFINITY_ANY,
                                     weft_semaphore_list_empty(),
                                     List1(&upstream, &value), buffer, 0,
                                     kFillBytes, &pattern, sizeof(pattern)),
              "queue_fill A");
    }
    if (ok && edge == Edge::kGpuLocalTask) {
      ok = Ok(state,
              weft_device_queue_barrier(cpu, WEFT_QUEUE_AFFINITY_ANY,
                                        List1(&upstream, &value),
                                        List1(&done, &value)),
              "queue_barrier B");
    } else if (ok) {
      ok = Ok(state,
              weft_device_queue_fill(session.device, queue_b,
                                     List1(&upstream, &value),
                                     List1(&done, &value), buffer, kFillBytes,
                                     kFillBytes, &pattern, sizeof(pattern)),
              "queue_fill B");
    }
    if (ok && !gpu_a) {
      ok = Ok(state, weft_semaphore_signal(upstream, value), "signal");
    }
    ok = ok && session.Wait(state, done, value);
  }
  weft_semaphore_release(done);
  weft_semaphore_release(host);
  weft_device_release(cpu);
}

}  // namespace

void RegisterVulkanBenchmarks() {
  benchmark::RegisterBenchmark("QueueRoundTrip/vulkan", QueueRoundTrip,
                               "vulkan")
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("QueueChain/vulkan", QueueChain, "vulkan")
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("QueueChain/vulkan-host-waits", QueueChain,
                               "vulkan?gpu_waits=off")
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("SmallDispatchChain/vulkan",
                               SmallDispatchChainVulkan)
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
  const struct {
    const char* name;
    Edge edge;
  } edges[] = {
      {"SemaphoreEdge/gpu-gpu", Edge::kGpuGpu},
      {"SemaphoreEdge/gpu-gpu-host", Edge::kGpuGpuHost},
      {"SemaphoreEdge/gpu-gpu-two-queues", Edge::kGpuGpuTwoQueues},
      {"SemaphoreEdge/host-gpu", Edge::kHostGpu},
      {"SemaphoreEdge/host-gpu-hostsem", Edge::kHostGpuHostSemaphore},
      {"SemaphoreEdge/gpu-local-task", Edge::kGpuLocalTask},
  };
  for (const auto& row : edges) {
    benchmark::RegisterBenchmark((std::string(row.name) + "/vulkan").c_str(),
                                 SemaphoreEdge, row.edge)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  }
}

}  // namespace weft_bench
