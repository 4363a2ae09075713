// weft benchmarks: the cuda driver against the raw CUDA driver API doing the
// same work (issue 13's table), and the completion mechanisms the driver
// chose between.
//
// Every row runs on whatever driver library the cuda driver loads: a GPU's
// libcuda.so.1, or the CPU test double when WEFT_CUDA_DRIVER_LIBRARY names
// it (then the figures measure the double, not a GPU: useful to compare
// mechanisms' host-side costs, never as GPU numbers). Where neither is
// there, each row is skipped with "cuda unavailable: ...".
//
// Rows (weft "/cuda", "/cuda-polling", "/cuda-memory" (memory-word
// semaphores); raw "/raw..."):
//   CudaCompletion/host_func|event_blocking|event_polling  a 64-byte memset,
//       then the host told it finished: by a cuLaunchHostFunc callback, or
//       by a completion thread waiting on the op's event (blocking-sync, or
//       polling with backoff), the design the driver uses
//   QueueRoundTrip     a 64-byte fill, submit to host-observed completion
//   QueueChain         16 fills chained by a semaphore (per op)
//   DispatchRoundTrip  one tiny kernel
//   SmallDispatchChain 100 dependent elementwise kernels over 256 KiB, as a
//                      reusable command buffer (a graph); raw: the 100
//                      launches one by one, and an explicit graph
//   CrossDeviceHandoff a cuda fill whose signal a local-task barrier waits
//                      for, and back (the host waits for the last); with
//                      each semaphore form (cuda, cuda-memory)
//   FileRead           a 64 MiB file into device memory; raw: pread into a
//                      pinned buffer and a copy waited for, piece by piece
#include <fcntl.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.h"

extern "C" {
#include "drivers/cuda/cuda_symbols.h"
#if defined(WEFT_BENCH_HAVE_CUDA_KERNELS)
#include "cuda/cts_cuda_kernels.h"
#endif
}

namespace weft_bench {
namespace {

constexpr int kChain = 16;
constexpr size_t kFillBytes = 64;

// The driver API table, or a skip saying why there is none.
const weft_cuda_symbols_t* Symbols(benchmark::State& state) {
  const weft_cuda_symbols_t* symbols = nullptr;
  weft_status_t status = weft_cuda_symbols_get(&symbols);
  if (!weft_status_is_ok(status)) {
    std::string message = "cuda unavailable: " + ConsumeStatus(status);
    state.SkipWithError(message.c_str());
    return nullptr;
  }
  return symbols;
}

bool CuOk(benchmark::State& state, const weft_cuda_symbols_t* cu,
          CUresult result, const char* what) {
  return Ok(state, weft_cuda_result_to_status(cu, result, what), what);
}

// A raw-API session: device 0's primary context current on this thread, a
// non-blocking stream, and what it allocated.
class Raw {
 public:
  ~Raw() {
    if (!cu) return;
    if (stream) cu->cuStreamSynchronize(stream);
    for (CUdeviceptr pointer : allocations_) cu->cuMemFree(pointer);
    if (module) cu->cuModuleUnload(module);
    if (stream) cu->cuStreamDestroy(stream);
    if (context) {
      CUcontext popped = nullptr;
      cu->cuCtxPopCurrent(&popped);
      cu->cuDevicePrimaryCtxRelease(device);
    }
  }

  bool Open(benchmark::State& state) {
    cu = Symbols(state);
    if (!cu) return false;
    if (!CuOk(state, cu, cu->cuDeviceGet(&device, 0), "cuDeviceGet") ||
        !CuOk(state, cu, cu->cuDevicePrimaryCtxRetain(&context, device),
              "cuDevicePrimaryCtxRetain")) {
      context = nullptr;
      return false;
    }
    return CuOk(state, cu, cu->cuCtxPushCurrent(context), "cuCtxPushCurrent") &&
           CuOk(state, cu, cu->cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING),
                "cuStreamCreate");
  }

  CUdeviceptr Allocate(benchmark::State& state, size_t bytes) {
    CUdeviceptr pointer = 0;
    if (!CuOk(state, cu, cu->cuMemAlloc(&pointer, bytes), "cuMemAlloc")) {
      return 0;
    }
    allocations_.push_back(pointer);
    return pointer;
  }

  // Loads the CTS's PTX and finds scale_offset.
  bool LoadKernel(benchmark::State& state) {
#if defined(WEFT_BENCH_HAVE_CUDA_KERNELS)
    return CuOk(state, cu, cu->cuModuleLoadData(&module, weft_cts_cuda_ptx),
                "cuModuleLoadData") &&
           CuOk(state, cu,
                cu->cuModuleGetFunction(&function, module, "scale_offset"),
                "cuModuleGetFunction");
#else
    state.SkipWithError("no CUDA kernels in this build (nvcc and tests)");
    return false;
#endif
  }

  const weft_cuda_symbols_t* cu = nullptr;
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  CUmodule module = nullptr;
  CUfunction function = nullptr;

 private:
  std::vector<CUdeviceptr> allocations_;
};

// Parameters of one scale_offset launch (in -> out, |count| floats).
struct ScaleOffsetParams {
  CUdeviceptr in, out;
  uint64_t in_length, out_length;
  uint32_t scale_bits, offset_bits, count;
  CUdeviceptr status;
  void* pointers[8];

  ScaleOffsetParams(CUdeviceptr in_, CUdeviceptr out_, uint32_t count_,
                    CUdeviceptr status_)
      : in(in_),
        out(out_),
        in_length(count_ * sizeof(float)),
        out_length(count_ * sizeof(float)),
        scale_bits(0x3f800000u),   // 1.0f
        offset_bits(0x3f800000u),  // 1.0f
        count(count_),
        status(status_),
        pointers{&in,         &out,         &in_length, &out_length,
                 &scale_bits, &offset_bits, &count,     &status} {}
};

CUresult LaunchScaleOffset(Raw& raw, ScaleOffsetParams& params) {
  return raw.cu->cuLaunchKernel(raw.function, params.count / 64, 1, 1, 64, 1,
                                1, 0, raw.stream, params.pointers, nullptr);
}

//===----------------------------------------------------------------------===//
// Completion mechanisms
//===----------------------------------------------------------------------===//

// The host side of "done": what every mechanism ends with, so they differ
// only in how they learn it.
struct Latch {
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;

  void Set() {
    std::lock_guard<std::mutex> lock(mutex);
    done = true;
    cv.notify_one();
  }
  void WaitAndReset() {
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [this] { return done; });
    done = false;
  }
};

enum class Completion { kHostFunc, kEventBlocking, kEventPolling };

void CUDA_CB SetLatch(void* user_data) {
  // Never calls CUDA: only the host side.
  static_cast<Latch*>(user_data)->Set();
}

void CudaCompletion(benchmark::State& state, Completion mode) {
  Raw raw;
  if (!raw.Open(state)) return;
  const weft_cuda_symbols_t* cu = raw.cu;
  CUdeviceptr buffer = raw.Allocate(state, kFillBytes);
  if (!buffer) return;
  CUevent event = nullptr;
  const unsigned int flags =
      CU_EVENT_DISABLE_TIMING |
      (mode == Completion::kEventBlocking ? CU_EVENT_BLOCKING_SYNC : 0);
  if (!CuOk(state, cu, cu->cuEventCreate(&event, flags), "cuEventCreate")) {
    return;
  }
  Latch done;
  // The completion thread, as the driver's: handed each op's event, waits
  // for it, then tells the host.
  std::mutex handoff_mutex;
  std::condition_variable handoff_cv;
  bool handed = false;
  bool stop = false;
  std::thread completion;
  if (mode != Completion::kHostFunc) {
    completion = std::thread([&] {
      cu->cuCtxPushCurrent(raw.context);
      for (;;) {
        {
          std::unique_lock<std::mutex> lock(handoff_mutex);
          handoff_cv.wait(lock, [&] { return handed || stop; });
          if (stop) break;
          handed = false;
        }
        if (mode == Completion::kEventBlocking) {
          cu->cuEventSynchronize(event);
        } else {
          int64_t backoff_ns = 1000;
          while (cu->cuEventQuery(event) == CUDA_ERROR_NOT_READY) {
            std::this_thread::sleep_for(std::chrono::nanoseconds(backoff_ns));
            if (backoff_ns < 1000000) backoff_ns *= 2;
          }
        }
        done.Set();
      }
      CUcontext popped = nullptr;
      cu->cuCtxPopCurrent(&popped);
    });
  }
  for (auto _ : state) {
    if (!CuOk(state, cu, cu->cuMemsetD32Async(buffer, 0x5A5A5A5Au,
                                              kFillBytes / 4, raw.stream),
              "cuMemsetD32Async")) {
      break;
    }
    if (mode == Completion::kHostFunc) {
      if (!CuOk(state, cu, cu->cuLaunchHostFunc(raw.stream, SetLatch, &done),
                "cuLaunchHostFunc")) {
        break;
      }
    } else {
      if (!CuOk(state, cu, cu->cuEventRecord(event, raw.stream),
                "cuEventRecord")) {
        break;
      }
      std::lock_guard<std::mutex> lock(handoff_mutex);
      handed = true;
      handoff_cv.notify_one();
    }
    done.WaitAndReset();
  }
  if (completion.joinable()) {
    {
      std::lock_guard<std::mutex> lock(handoff_mutex);
      stop = true;
      handoff_cv.notify_one();
    }
    completion.join();
  }
  cu->cuEventDestroy(event);
}

//===----------------------------------------------------------------------===//
// weft's rows
//===----------------------------------------------------------------------===//

// A cuda device, its semaphore and buffers; kernels when built with them.
class CudaSession {
 public:
  ~CudaSession() {
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
      std::string message = "cuda unavailable: " + ConsumeStatus(status);
      state.SkipWithError(message.c_str());
      return false;
    }
    if (!Ok(state, weft_device_create_semaphore(device, 0, &semaphore),
            "create_semaphore")) {
      return false;
    }
    if (!with_kernels) return true;
#if defined(WEFT_BENCH_HAVE_CUDA_KERNELS)
    return Ok(state,
              weft_device_create_executable(
                  device,
                  weft_executable_source_cuda(
                      WEFT_EXECUTABLE_FORMAT_CUDA_PTX, "cts", weft_cts_cuda_ptx,
                      weft_cts_cuda_ptx_size, weft_cts_gpu_kernel_count,
                      weft_cts_gpu_kernel_table),
                  &kernels),
              "create_executable");
#else
    state.SkipWithError("no CUDA kernels in this build (nvcc and tests)");
    return false;
#endif
  }

  weft_buffer_t* Allocate(benchmark::State& state, size_t bytes) {
    weft_buffer_params_t params = {};
    params.type = WEFT_MEMORY_TYPE_DEVICE_LOCAL;
    weft_buffer_t* buffer = nullptr;
    if (!Ok(state, weft_device_allocate_buffer(device, params, bytes, &buffer),
            "allocate_buffer")) {
      return nullptr;
    }
    buffers_.push_back(buffer);
    return buffer;
  }

  bool Wait(benchmark::State& state, uint64_t wait_value) {
    return Ok(state,
              weft_semaphore_wait(semaphore, wait_value,
                                  weft_timeout_relative(kWaitTimeoutNs)),
              "semaphore_wait");
  }

  weft_device_t* device = nullptr;
  weft_semaphore_t* semaphore = nullptr;
  weft_executable_t* kernels = nullptr;
  uint64_t value = 0;

 private:
  std::vector<weft_buffer_t*> buffers_;
};

void QueueRoundTripRaw(benchmark::State& state) {
  Raw raw;
  if (!raw.Open(state)) return;
  CUdeviceptr buffer = raw.Allocate(state, kFillBytes);
  if (!buffer) return;
  for (auto _ : state) {
    if (!CuOk(state, raw.cu,
              raw.cu->cuMemsetD32Async(buffer, 0x5A5A5A5Au, kFillBytes / 4,
                                       raw.stream),
              "cuMemsetD32Async") ||
        !CuOk(state, raw.cu, raw.cu->cuStreamSynchronize(raw.stream),
              "cuStreamSynchronize")) {
      break;
    }
  }
}

// 16 memsets on one stream, each after the last, ordered by events as the
// semaphores order weft's (an event recorded after each, waited on before
// the next).
void QueueChainRaw(benchmark::State& state) {
  Raw raw;
  if (!raw.Open(state)) return;
  CUdeviceptr buffer = raw.Allocate(state, kFillBytes);
  if (!buffer) return;
  CUevent events[kChain] = {};
  for (CUevent& event : events) {
    if (!CuOk(state, raw.cu,
              raw.cu->cuEventCreate(&event, CU_EVENT_DISABLE_TIMING),
              "cuEventCreate")) {
      return;
    }
  }
  LoopTimer timer;
  timer.Start();
  for (auto _ : state) {
    bool ok = true;
    for (int i = 0; ok && i < kChain; ++i) {
      if (i > 0) {
        ok = raw.cu->cuStreamWaitEvent(raw.stream, events[i - 1], 0) ==
             CUDA_SUCCESS;
      }
      ok = ok &&
           raw.cu->cuMemsetD32Async(buffer, static_cast<unsigned int>(i),
                                    kFillBytes / 4,
                                    raw.stream) == CUDA_SUCCESS &&
           raw.cu->cuEventRecord(events[i], raw.stream) == CUDA_SUCCESS;
    }
    if (!ok || !CuOk(state, raw.cu, raw.cu->cuEventSynchronize(events[kChain - 1]),
                     "cuEventSynchronize")) {
      state.SkipWithError("the raw chain failed");
      break;
    }
  }
  timer.Stop();
  SetNsPerItem(state, timer, "ns_per_op", kChain);
  for (CUevent event : events) raw.cu->cuEventDestroy(event);
}

void DispatchRoundTripCuda(benchmark::State& state,
                           const char* device_string) {
  CudaSession session;
  if (!session.Open(state, device_string, true)) return;
  weft_buffer_t* in = session.Allocate(state, 64 * sizeof(float));
  weft_buffer_t* out = session.Allocate(state, 64 * sizeof(float));
  if (!in || !out) return;
  const weft_buffer_ref_t bindings[2] = {weft_make_buffer_ref(in, 0, 256),
                                         weft_make_buffer_ref(out, 0, 256)};
  const uint32_t constants[3] = {0x3f800000u, 0x3f800000u, 64};
  const uint32_t workgroups[3] = {1, 1, 1};
  for (auto _ : state) {
    uint64_t value = ++session.value;
    if (!Ok(state,
            weft_device_queue_dispatch(
                session.device, WEFT_QUEUE_AFFINITY_ANY,
                weft_semaphore_list_empty(), List1(&session.semaphore, &value),
                session.kernels, 0, workgroups, 3, constants, 2, bindings),
            "queue_dispatch") ||
        !session.Wait(state, value)) {
      break;
    }
  }
}

void DispatchRoundTripRaw(benchmark::State& state) {
  Raw raw;
  if (!raw.Open(state) || !raw.LoadKernel(state)) return;
  CUdeviceptr in = raw.Allocate(state, 256);
  CUdeviceptr out = raw.Allocate(state, 256);
  CUdeviceptr status = raw.Allocate(state, 16);
  if (!in || !out || !status) return;
  ScaleOffsetParams params(in, out, 64, status);
  for (auto _ : state) {
    if (!CuOk(state, raw.cu, LaunchScaleOffset(raw, params),
              "cuLaunchKernel") ||
        !CuOk(state, raw.cu, raw.cu->cuStreamSynchronize(raw.stream),
              "cuStreamSynchronize")) {
      break;
    }
  }
}

// 100 kernels, each reading what the last wrote (ping-pong between two
// buffers), recorded once into a reusable command buffer.
void SmallDispatchChainCuda(benchmark::State& state,
                            const char* device_string) {
  CudaSession session;
  if (!session.Open(state, device_string, true)) return;
  const size_t bytes = kGpuSmallElements * sizeof(float);
  weft_buffer_t* a = session.Allocate(state, bytes);
  weft_buffer_t* b = session.Allocate(state, bytes);
  if (!a || !b) return;
  RunGpuSmallDispatchChain(state, session.device, session.kernels, 0, a, b,
                           session.semaphore, &session.value);
}

// The same 100 kernels: launched one by one (|as_graph| false), or as an
// explicit graph of kernel nodes instantiated once and replayed.
void SmallDispatchChainRaw(benchmark::State& state, bool as_graph) {
  Raw raw;
  if (!raw.Open(state) || !raw.LoadKernel(state)) return;
  const size_t bytes = kGpuSmallElements * sizeof(float);
  CUdeviceptr a = raw.Allocate(state, bytes);
  CUdeviceptr b = raw.Allocate(state, bytes);
  CUdeviceptr status = raw.Allocate(state, 16);
  if (!a || !b || !status) return;
  std::vector<ScaleOffsetParams> params;
  params.reserve(kGpuSmallChain);
  for (int i = 0; i < kGpuSmallChain; ++i) {
    params.emplace_back(i % 2 ? b : a, i % 2 ? a : b, kGpuSmallElements,
                        status);
  }
  const weft_cuda_symbols_t* cu = raw.cu;
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  if (as_graph) {
    if (!CuOk(state, cu, cu->cuGraphCreate(&graph, 0), "cuGraphCreate")) {
      return;
    }
    CUgraphNode last = nullptr;
    for (int i = 0; i < kGpuSmallChain; ++i) {
      CUDA_KERNEL_NODE_PARAMS node = {};
      node.func = raw.function;
      node.gridDimX = kGpuSmallElements / 64;
      node.gridDimY = node.gridDimZ = 1;
      node.blockDimX = 64;
      node.blockDimY = node.blockDimZ = 1;
      node.kernelParams = params[i].pointers;
      CUgraphNode added = nullptr;
      if (!CuOk(state, cu,
                cu->cuGraphAddKernelNode(&added, graph, last ? &last : nullptr,
                                         last ? 1 : 0, &node),
                "cuGraphAddKernelNode")) {
        cu->cuGraphDestroy(graph);
        return;
      }
      last = added;
    }
    if (!CuOk(state, cu, cu->cuGraphInstantiate(&exec, graph, 0),
              "cuGraphInstantiate")) {
      cu->cuGraphDestroy(graph);
      return;
    }
  }
  for (auto _ : state) {
    bool ok = true;
    if (as_graph) {
      ok = CuOk(state, cu, cu->cuGraphLaunch(exec, raw.stream),
                "cuGraphLaunch");
    } else {
      for (int i = 0; ok && i < kGpuSmallChain; ++i) {
        ok = CuOk(state, cu, LaunchScaleOffset(raw, params[i]),
                  "cuLaunchKernel");
      }
    }
    if (!ok || !CuOk(state, cu, cu->cuStreamSynchronize(raw.stream),
                     "cuStreamSynchronize")) {
      break;
    }
  }
  if (exec) cu->cuGraphExecDestroy(exec);
  if (graph) cu->cuGraphDestroy(graph);
}

// cuda fill -> local-task barrier -> the host: one handoff each way.
void CrossDeviceHandoff(benchmark::State& state, const char* device_string) {
  CudaSession session;
  if (!session.Open(state, device_string, false)) return;
  weft_buffer_t* buffer = session.Allocate(state, kFillBytes);
  if (!buffer) return;
  weft_device_t* cpu = nullptr;
  if (!Ok(state,
          weft_device_create("local-task", weft_allocator_system(), &cpu),
          "local-task")) {
    return;
  }
  weft_semaphore_t* back = nullptr;
  if (!Ok(state, weft_device_create_semaphore(cpu, 0, &back),
          "create_semaphore")) {
    weft_device_release(cpu);
    return;
  }
  const uint32_t pattern = 1;
  for (auto _ : state) {
    uint64_t value = ++session.value;
    if (!Ok(state,
            weft_device_queue_fill(session.device, WEFT_QUEUE_AFFINITY_ANY,
                                   weft_semaphore_list_empty(),
                                   List1(&session.semaphore, &value), buffer, 0,
                                   kFillBytes, &pattern, sizeof(pattern)),
            "queue_fill") ||
        !Ok(state,
            weft_device_queue_barrier(cpu, WEFT_QUEUE_AFFINITY_ANY,
                                      List1(&session.semaphore, &value),
                                      List1(&back, &value)),
            "queue_barrier") ||
        !Ok(state,
            weft_semaphore_wait(back, value,
                                weft_timeout_relative(kWaitTimeoutNs)),
            "semaphore_wait")) {
      break;
    }
  }
  weft_semaphore_release(back);
  weft_device_release(cpu);
}

// The file FileRead reads: 64 MiB (WEFT_BENCH_FILE_MB overrides), made once.
std::string FileReadPath(benchmark::State& state, size_t* out_bytes) {
  size_t megabytes = 64;
  if (const char* env = getenv("WEFT_BENCH_FILE_MB")) {
    megabytes = static_cast<size_t>(strtoull(env, nullptr, 10));
    if (megabytes == 0) megabytes = 1;
  }
  *out_bytes = megabytes << 20;
  std::string path = "/tmp/weft_bench_cuda_read_" +
                     std::to_string(megabytes) + "MiB.bin";
  FILE* probe = fopen(path.c_str(), "rb");
  if (probe) {
    fclose(probe);
    return path;
  }
  FILE* file = fopen(path.c_str(), "wb");
  if (!file) {
    state.SkipWithError("cannot create the FileRead file in /tmp");
    return std::string();
  }
  std::vector<uint8_t> chunk(1 << 20);
  for (size_t i = 0; i < chunk.size(); ++i) chunk[i] = static_cast<uint8_t>(i);
  for (size_t i = 0; i < megabytes; ++i) {
    fwrite(chunk.data(), 1, chunk.size(), file);
  }
  fclose(file);
  return path;
}

void FileReadCuda(benchmark::State& state) {
  size_t bytes = 0;
  std::string path = FileReadPath(state, &bytes);
  if (path.empty()) return;
  CudaSession session;
  if (!session.Open(state, "cuda", false)) return;
  weft_buffer_t* buffer = session.Allocate(state, bytes);
  if (!buffer) return;
  weft_file_t* file = nullptr;
  if (!Ok(state,
          weft_file_open(path.c_str(), WEFT_FILE_ACCESS_READ, 0,
                         weft_allocator_system(), &file),
          "file_open")) {
    return;
  }
  for (auto _ : state) {
    uint64_t value = ++session.value;
    if (!Ok(state,
            weft_device_queue_read(session.device, WEFT_QUEUE_AFFINITY_ANY,
                                   weft_semaphore_list_empty(),
                                   List1(&session.semaphore, &value), file, 0,
                                   buffer, 0, bytes),
            "queue_read") ||
        !session.Wait(state, value)) {
      break;
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  weft_file_release(file);
}

// pread into a pinned 4 MiB buffer, then its copy to the device waited for,
// piece by piece (cudaMemcpy from a pread buffer).
void FileReadRaw(benchmark::State& state) {
  size_t bytes = 0;
  std::string path = FileReadPath(state, &bytes);
  if (path.empty()) return;
  Raw raw;
  if (!raw.Open(state)) return;
  CUdeviceptr target = raw.Allocate(state, bytes);
  if (!target) return;
  constexpr size_t kPiece = 4 << 20;
  void* staging = nullptr;
  if (!CuOk(state, raw.cu, raw.cu->cuMemHostAlloc(&staging, kPiece, 0),
            "cuMemHostAlloc")) {
    return;
  }
  int fd = open(path.c_str(), O_RDONLY);
  for (auto _ : state) {
    bool ok = fd >= 0;
    for (size_t done = 0; ok && done < bytes; done += kPiece) {
      const size_t length = bytes - done < kPiece ? bytes - done : kPiece;
      ok = pread(fd, staging, length, static_cast<off_t>(done)) ==
               static_cast<ssize_t>(length) &&
           raw.cu->cuMemcpyHtoDAsync(target + done, staging, length,
                                     raw.stream) == CUDA_SUCCESS &&
           raw.cu->cuStreamSynchronize(raw.stream) == CUDA_SUCCESS;
    }
    if (!ok) {
      state.SkipWithError("pread or the copy to the device failed");
      break;
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  if (fd >= 0) close(fd);
  raw.cu->cuMemFreeHost(staging);
}

}  // namespace

void RegisterCudaBenchmarks() {
  benchmark::RegisterBenchmark("CudaCompletion/host_func", CudaCompletion,
                               Completion::kHostFunc)
      ->UseRealTime();
  benchmark::RegisterBenchmark("CudaCompletion/event_blocking", CudaCompletion,
                               Completion::kEventBlocking)
      ->UseRealTime();
  benchmark::RegisterBenchmark("CudaCompletion/event_polling", CudaCompletion,
                               Completion::kEventPolling)
      ->UseRealTime();
  struct {
    const char* label;
    const char* device_string;
  } const weft_rows[] = {{"cuda", "cuda"},
                         {"cuda-polling", "cuda?completion=polling"},
                         {"cuda-memory", "cuda?semaphores=memory"}};
  for (const auto& row : weft_rows) {
    std::string suffix = std::string("/") + row.label;
    // The queue rows are queue_bench.cc's, on this device.
    benchmark::RegisterBenchmark(("QueueRoundTrip" + suffix).c_str(),
                                 QueueRoundTrip, row.device_string)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("QueueChain" + suffix).c_str(), QueueChain,
                                 row.device_string)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("DispatchRoundTrip" + suffix).c_str(),
                                 DispatchRoundTripCuda, row.device_string)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("SmallDispatchChain" + suffix).c_str(),
                                 SmallDispatchChainCuda, row.device_string)
        ->UseRealTime();
  }
  benchmark::RegisterBenchmark("QueueRoundTrip/raw", QueueRoundTripRaw)
      ->UseRealTime();
  benchmark::RegisterBenchmark("QueueChain/raw", QueueChainRaw)->UseRealTime();
  benchmark::RegisterBenchmark("DispatchRoundTrip/raw", DispatchRoundTripRaw)
      ->UseRealTime();
  benchmark::RegisterBenchmark("SmallDispatchChain/raw-launches",
                               SmallDispatchChainRaw, false)
      ->UseRealTime();
  benchmark::RegisterBenchmark("SmallDispatchChain/raw-graph",
                               SmallDispatchChainRaw, true)
      ->UseRealTime();
  benchmark::RegisterBenchmark("CrossDeviceHandoff/cuda-local-task",
                               CrossDeviceHandoff, "cuda?semaphores=events")
      ->UseRealTime();
  benchmark::RegisterBenchmark("CrossDeviceHandoff/cuda-memory-local-task",
                               CrossDeviceHandoff, "cuda?semaphores=memory")
      ->UseRealTime();
  benchmark::RegisterBenchmark("FileRead/cuda", FileReadCuda)->UseRealTime();
  benchmark::RegisterBenchmark("FileRead/raw-pread-copy", FileReadRaw)
      ->UseRealTime();
}

}  // namespace weft_bench
