// weft benchmarks: the decode example (examples/decode) as a workload.
//
//   Decode/<shape>-<dtype>/<impl>  greedy decoding of a random-weight
//       checkpoint of the shape (15M, 110M, 1.1B; "tiny" for the smoke
//       test), f32 (llama2.c file), or f16, q8_0, q4_0 or q4_k (GGUF; the
//       quantized types' fallbacks where rows are not whole blocks, as
//       weft-decode-gen writes them): one iteration decodes
//       kTokens tokens from position 0. weft queues the tokens' executes
//       at once on local-task; the baselines run the same kernels over the
//       same buffers, one parallel loop per kernel (OpenMP's static
//       schedule, pthreadpool), as simple CPU decoders do. Counters:
//       tokens_per_second, ms_per_token, and weight_GBps (the weight bytes
//       a token reads, per second: compare with MemoryBandwidth).
//   MemoryBandwidth/local-task  a read-only streaming sum over 512 MiB on
//       every worker: the limit of a bandwidth-bound decode (GBps).
//
// Checkpoints are written once into $WEFT_BENCH_DECODE_DIR (default
// /tmp/weft_bench_decode) and reused; the 1.1B f32 one is 4.4 GB.
#include <sys/stat.h>

#include <map>
#include <string>
#include <vector>

#include "baselines.h"
#include "bench_util.h"

extern "C" {
#include "decode.h"
#include "decode_checkpoint.h"
}

namespace weft_bench {
namespace {

// Tokens one iteration decodes (fewer where the context is shorter).
constexpr uint32_t kTokens = 32;

std::string ModelPath(benchmark::State& state, const char* shape,
                      decode_dtype_t dtype) {
  const char* env = getenv("WEFT_BENCH_DECODE_DIR");
  std::string dir = env && env[0] ? env : "/tmp/weft_bench_decode";
  mkdir(dir.c_str(), 0755);
  const bool gguf = dtype != DECODE_DTYPE_F32;
  std::string path = dir + "/" + shape + "-" + decode_dtype_name(dtype) +
                     (gguf ? ".gguf" : ".bin");
  struct stat info;
  if (stat(path.c_str(), &info) == 0) return path;
  decode_config_t config;
  if (!decode_shape_lookup(shape, &config)) {
    state.SkipWithError("unknown decode shape");
    return std::string();
  }
  // Written under a temporary name, so an interrupted run leaves no
  // partial checkpoint behind to be reused.
  std::string temporary = path + ".tmp";
  if (!Ok(state,
          decode_checkpoint_write(
              temporary.c_str(),
              gguf ? DECODE_FORMAT_GGUF : DECODE_FORMAT_LLAMA2C, &config,
              dtype, 1),
          "decode_checkpoint_write") ||
      rename(temporary.c_str(), path.c_str()) != 0) {
    return std::string();
  }
  return path;
}

// A device with a model and a session on it.
struct Decoder {
  weft_device_t* device = nullptr;
  decode_model_t* model = nullptr;
  decode_session_t* session = nullptr;

  ~Decoder() {
    decode_session_release(session);
    decode_model_release(model);
    weft_device_release(device);
  }

  bool Open(benchmark::State& state, const char* device_string,
            const std::string& path) {
    weft_allocator_t allocator = weft_allocator_system();
    const std::string full_string = DeviceStringWithThreads(device_string);
    return Ok(state,
              weft_device_create(full_string.c_str(), allocator, &device),
              full_string.c_str()) &&
           Ok(state,
              decode_model_load(device, path.c_str(), nullptr, allocator,
                                &model),
              "decode_model_load") &&
           Ok(state, decode_session_create(model, allocator, &session),
              "decode_session_create");
  }

  uint32_t Tokens() const {
    const uint32_t context = decode_model_layout(model)->config.seq_len;
    return context < kTokens ? context : kTokens;
  }
};

void ReportDecode(benchmark::State& state, const Decoder& decoder,
                  const LoopTimer& timer, uint32_t tokens) {
  const double seconds = timer.Nanoseconds() / 1e9;
  const double total = static_cast<double>(state.iterations()) * tokens;
  if (seconds <= 0.0 || total <= 0.0) return;
  state.counters["tokens_per_second"] = total / seconds;
  state.counters["ms_per_token"] = seconds * 1e3 / total;
  state.counters["weight_GBps"] =
      static_cast<double>(decode_model_bytes_per_token(decoder.model)) *
      total / seconds / 1e9;
}

const uint32_t kPrompt[] = {1};

void DecodeWeft(benchmark::State& state, const char* shape,
                decode_dtype_t dtype) {
  std::string path = ModelPath(state, shape, dtype);
  if (path.empty()) return;
  Decoder decoder;
  if (!decoder.Open(state, "local-task", path)) return;
  const uint32_t tokens = decoder.Tokens();
  LoopTimer timer;
  timer.Start();
  for (auto _ : state) {
    if (!Ok(state, decode_session_start(decoder.session, kPrompt, 1),
            "decode_session_start") ||
        !Ok(state, decode_session_enqueue(decoder.session, tokens),
            "decode_session_enqueue") ||
        !Ok(state,
            decode_session_wait(decoder.session, tokens - 1,
                                weft_timeout_relative(kWaitTimeoutNs)),
            "decode_session_wait")) {
      break;
    }
  }
  timer.Stop();
  ReportDecode(state, decoder, timer, tokens);
}

// The token's dispatches over host pointers: every buffer a step or a
// binding table names, mapped once.
class HostPlan {
 public:
  ~HostPlan() {
    for (auto& entry : mappings_) weft_buffer_unmap_range(&entry.second);
  }

  bool Map(benchmark::State& state, weft_buffer_t* buffer) {
    if (!buffer || mappings_.count(buffer)) return true;
    weft_buffer_mapping_t mapping;
    if (!Ok(state,
            weft_buffer_map_range(buffer, WEFT_MAPPING_MODE_PERSISTENT,
                                  WEFT_MEMORY_ACCESS_ALL, 0, WEFT_WHOLE_BUFFER,
                                  &mapping),
            "map_range")) {
      return false;
    }
    mappings_[buffer] = mapping;
    return true;
  }

  // Resolves |ref| (through |table| for indirect ones) into a pointer and
  // a length.
  void Resolve(const weft_buffer_ref_t& ref,
               const std::vector<weft_buffer_binding_t>& table,
               void** out_pointer, size_t* out_length) {
    weft_buffer_t* buffer = ref.buffer;
    uint64_t offset = ref.offset;
    uint64_t length = ref.length;
    if (!buffer) {
      const weft_buffer_binding_t& binding = table[ref.slot];
      buffer = binding.buffer;
      offset += binding.offset;
      if (length == WEFT_WHOLE_BUFFER) length = binding.length - ref.offset;
    }
    const weft_buffer_mapping_t& mapping = mappings_[buffer];
    if (length == WEFT_WHOLE_BUFFER) length = mapping.byte_length - offset;
    *out_pointer = mapping.contents + offset;
    *out_length = static_cast<size_t>(length);
  }

 private:
  std::map<weft_buffer_t*, weft_buffer_mapping_t> mappings_;
};

void DecodeBaseline(benchmark::State& state, const char* shape,
                    decode_dtype_t dtype, Baseline baseline) {
  std::string path = ModelPath(state, shape, dtype);
  if (path.empty()) return;
  Decoder decoder;
  // local-sync only loads: the baseline's threads run every kernel.
  if (!decoder.Open(state, "local-sync", path)) return;
  Pool pool;
  if (!pool.Open(state, baseline)) return;
  const uint32_t tokens = decoder.Tokens();
  uint32_t step_count = 0;
  const decode_step_t* steps =
      decode_session_steps(decoder.session, &step_count);
  std::vector<weft_buffer_binding_t> table(
      decode_session_slot_count(decoder.session));
  HostPlan plan;
  // Every buffer of every position's table is one of position 0's.
  decode_session_bindings(decoder.session, 0, table.data());
  if (!Ok(state, decode_session_start(decoder.session, kPrompt, 1),
          "decode_session_start")) {
    return;
  }
  for (uint32_t i = 0; i < step_count; ++i) {
    for (uint32_t b = 0; b < steps[i].binding_count; ++b) {
      if (!plan.Map(state, steps[i].bindings[b].buffer)) return;
    }
  }
  for (const weft_buffer_binding_t& binding : table) {
    if (!plan.Map(state, binding.buffer)) return;
  }
  // Per step: its launch, with pointer and length arrays.
  const weft_kernel_library_t* library = decode_kernels_library();
  std::vector<Launch> launches(step_count);
  std::vector<std::vector<void*>> pointers(step_count);
  std::vector<std::vector<size_t>> lengths(step_count);
  for (uint32_t i = 0; i < step_count; ++i) {
    const decode_step_t& step = steps[i];
    const weft_kernel_def_t& def = library->kernels[step.kernel];
    pointers[i].resize(step.binding_count);
    lengths[i].resize(step.binding_count);
    Launch& launch = launches[i];
    launch.fn = def.fn;
    launch.dispatch.workgroup_count[0] = step.workgroups;
    launch.dispatch.workgroup_count[1] = 1;
    launch.dispatch.workgroup_count[2] = 1;
    for (int d = 0; d < 3; ++d) {
      launch.dispatch.workgroup_size[d] = def.workgroup_size[d];
    }
    launch.dispatch.constant_count = step.constant_count;
    launch.dispatch.constants = step.constants;
    launch.dispatch.binding_count = step.binding_count;
    launch.dispatch.binding_ptrs = pointers[i].data();
    launch.dispatch.binding_lengths = lengths[i].data();
  }
  LoopTimer timer;
  timer.Start();
  for (auto _ : state) {
    bool ok = true;
    for (uint32_t p = 0; ok && p < tokens; ++p) {
      decode_session_bindings(decoder.session, p, table.data());
      for (uint32_t i = 0; ok && i < step_count; ++i) {
        for (uint32_t b = 0; b < steps[i].binding_count; ++b) {
          plan.Resolve(steps[i].bindings[b], table, &pointers[i][b],
                       &lengths[i][b]);
        }
        pool.Run(&launches[i], steps[i].workgroups);
        ok = launches[i].failure.load(std::memory_order_relaxed) == 0;
      }
    }
    if (!ok) {
      state.SkipWithError("a decode kernel failed");
      break;
    }
  }
  timer.Stop();
  ReportDecode(state, decoder, timer, tokens);
}

//===----------------------------------------------------------------------===//
// Memory bandwidth
//===----------------------------------------------------------------------===//

constexpr size_t kStreamBytes = size_t{512} << 20;
constexpr uint32_t kStreamChunk = 1u << 20;  // bytes per workgroup

// Sums its chunk of floats; the sum goes to a per-workgroup slot so the
// reads cannot be dropped.
int StreamSum(const weft_dispatch_state_t* dispatch,
              const weft_workgroup_state_t* workgroup) {
  const uint32_t id = workgroup->workgroup_id[0];
  const float* data = static_cast<const float*>(dispatch->binding_ptrs[0]) +
                      static_cast<size_t>(id) * (kStreamChunk / 4);
  float* sums = static_cast<float*>(dispatch->binding_ptrs[1]);
  float partial[16] = {};
  for (uint32_t i = 0; i < kStreamChunk / 4; i += 16) {
    for (uint32_t j = 0; j < 16; ++j) partial[j] += data[i + j];
  }
  float sum = 0.0f;
  for (float value : partial) sum += value;
  sums[id] = sum;
  return 0;
}

const weft_kernel_def_t kStreamKernels[] = {
    {"stream_sum", StreamSum, 2, 0, {1, 1, 1}, 0},
};
const weft_kernel_library_t kStreamLibrary = {
    WEFT_KERNEL_ABI_VERSION, "bench_stream", 1, kStreamKernels};
const weft_kernel_library_t* StreamQuery(uint32_t version) {
  return version == WEFT_KERNEL_ABI_VERSION ? &kStreamLibrary : nullptr;
}

void MemoryBandwidth(benchmark::State& state) {
  Session session;
  if (!session.Open(state, "local-task")) return;
  weft_executable_t* executable = nullptr;
  if (!Ok(state,
          weft_device_create_executable(
              session.device, weft_executable_source_cpu_static(StreamQuery),
              &executable),
          "create_executable")) {
    return;
  }
  const uint32_t chunks = static_cast<uint32_t>(kStreamBytes / kStreamChunk);
  weft_buffer_t* data = session.AllocateBuffer(state, kStreamBytes, 0x3f800000);
  weft_buffer_t* sums = session.AllocateBuffer(state, chunks * 4, 0);
  if (!data || !sums) {
    weft_executable_release(executable);
    return;
  }
  const weft_buffer_ref_t bindings[2] = {
      weft_make_buffer_ref(data, 0, WEFT_WHOLE_BUFFER),
      weft_make_buffer_ref(sums, 0, WEFT_WHOLE_BUFFER)};
  const uint32_t workgroups[3] = {chunks, 1, 1};
  LoopTimer timer;
  timer.Start();
  for (auto _ : state) {
    uint64_t value = ++session.value;
    if (!Ok(state,
            weft_device_queue_dispatch(
                session.device, WEFT_QUEUE_AFFINITY_ANY,
                weft_semaphore_list_empty(), List1(&session.semaphore, &value),
                executable, 0, workgroups, 0, nullptr, 2, bindings),
            "queue_dispatch") ||
        !session.Wait(state, value)) {
      break;
    }
  }
  timer.Stop();
  const double seconds = timer.Nanoseconds() / 1e9;
  if (seconds > 0.0) {
    state.counters["GBps"] = static_cast<double>(kStreamBytes) *
                             static_cast<double>(state.iterations()) /
                             seconds / 1e9;
  }
  weft_executable_release(executable);
}

}  // namespace

void RegisterDecodeBenchmarks() {
  benchmark::RegisterBenchmark("MemoryBandwidth/local-task", MemoryBandwidth)
      ->UseRealTime();
  const char* const shapes[] = {"tiny", "15M", "110M", "1.1B"};
  const decode_dtype_t dtypes[] = {DECODE_DTYPE_F32, DECODE_DTYPE_F16,
                                   DECODE_DTYPE_Q8_0, DECODE_DTYPE_Q4_0,
                                   DECODE_DTYPE_Q4_K};
  for (const char* shape : shapes) {
    for (decode_dtype_t dtype : dtypes) {
      const std::string prefix = std::string("Decode/") + shape + "-" +
                                 decode_dtype_name(dtype) + "/";
      benchmark::RegisterBenchmark((prefix + "local-task").c_str(), DecodeWeft,
                                   shape, dtype)
          ->UseRealTime();
      for (Baseline baseline : ParallelBaselines()) {
        benchmark::RegisterBenchmark(
            (prefix + BaselineName(baseline)).c_str(), DecodeBaseline, shape,
            dtype, baseline)
            ->UseRealTime();
      }
    }
  }
}

}  // namespace weft_bench
