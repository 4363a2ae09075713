// weft benchmarks: one dependency edge between two ops, on each GPU
// driver weft has, and the same edge met on the host.
//
// SemaphoreEdge/<edge>/<driver>: an op A signals a semaphore, an op B
// waits on it and signals another the host waits for; one iteration is A
// and B submitted and B seen done. A and B are 64-byte fills.
//   gpu-gpu            A and B on the device, B waiting on A's semaphore
//   gpu-gpu-host       the same on the driver's variant that holds B on
//                      the host until A's completion is seen (vulkan's
//                      "gpu_waits=off"; not registered where there is none)
//   gpu-gpu-two-queues A on queue 0, B on queue 1 of the driver's
//                      two-queue variant ("queues=2")
//   host-gpu           B waits on the device's semaphore the host signals
//   host-gpu-hostsem   B waits on a host semaphore instead
//   gpu-local-task     B is a local-task barrier waiting on A's semaphore
// Drivers: "vulkan" (on a machine without a GPU, Mesa's software device),
// "cuda" (semaphores backed by events) and "cuda-memory" (by memory words
// the GPU waits on and writes), on a GPU's libcuda or the CPU test double
// that WEFT_CUDA_DRIVER_LIBRARY names (then the figures compare host-side
// mechanisms, never GPU speed). A driver without a device skips each row
// saying why.
#include <string>

#include "bench_util.h"

namespace weft_bench {
namespace {

constexpr size_t kFillBytes = 64;

enum class Edge {
  kGpuGpu,
  kGpuGpuHost,
  kGpuGpuTwoQueues,
  kHostGpu,
  kHostGpuHostSemaphore,
  kGpuLocalTask,
};

// The device strings of one driver's variants (NULL: it has none).
struct EdgeDriver {
  const char* name;
  const char* device;
  const char* host_waits;  // B held on the host until A is seen done
  const char* two_queues;  // a device with queues 0 and 1
};

const char* DeviceFor(const EdgeDriver& driver, Edge edge) {
  if (edge == Edge::kGpuGpuHost) return driver.host_waits;
  if (edge == Edge::kGpuGpuTwoQueues) return driver.two_queues;
  return driver.device;
}

void SemaphoreEdge(benchmark::State& state, Edge edge,
                   const EdgeDriver* driver) {
  Session session;
  if (!session.Open(state, DeviceFor(*driver, edge), /*with_kernels=*/false)) {
    return;
  }
  const weft_queue_affinity_t queue_b =
      edge == Edge::kGpuGpuTwoQueues ? 2 : WEFT_QUEUE_AFFINITY_ANY;
  weft_buffer_t* buffer = session.AllocateBuffer(state, 2 * kFillBytes, 0);
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
  const bool gpu_a = edge == Edge::kGpuGpu || edge == Edge::kGpuGpuHost ||
                     edge == Edge::kGpuGpuTwoQueues ||
                     edge == Edge::kGpuLocalTask;
  const uint32_t pattern = 0x5A5A5A5Au;
  for (auto _ : state) {
    if (!ok) break;
    uint64_t value = ++session.value;
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
    ok = ok && Ok(state,
                  weft_semaphore_wait(done, value,
                                      weft_timeout_relative(kWaitTimeoutNs)),
                  "semaphore_wait");
  }
  weft_semaphore_release(done);
  weft_semaphore_release(host);
  weft_device_release(cpu);
}

// The drivers built in, in registration order.
const EdgeDriver kEdgeDrivers[] = {
#if defined(WEFT_BENCH_HAVE_VULKAN)
    {"vulkan", "vulkan", "vulkan?gpu_waits=off", "vulkan?queues=2"},
#endif
#if defined(WEFT_BENCH_HAVE_CUDA)
    {"cuda", "cuda?semaphores=events", nullptr,
     "cuda?semaphores=events&queues=2"},
    {"cuda-memory", "cuda?semaphores=memory", nullptr,
     "cuda?semaphores=memory&queues=2"},
#endif
};

}  // namespace

void RegisterSemaphoreEdgeBenchmarks() {
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
  for (const EdgeDriver& driver : kEdgeDrivers) {
    for (const auto& row : edges) {
      if (!DeviceFor(driver, row.edge)) continue;
      benchmark::RegisterBenchmark(
          (std::string(row.name) + "/" + driver.name).c_str(), SemaphoreEdge,
          row.edge, &driver)
          ->UseRealTime()
          ->Unit(benchmark::kMicrosecond);
    }
  }
}

}  // namespace weft_bench
