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
//   SemaphoreEdge/<edge>/vulkan  semaphore_edge_bench.cc's rows
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
}

}  // namespace weft_bench
