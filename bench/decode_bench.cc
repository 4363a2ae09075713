// weft benchmarks: the decode example (examples/decode) as a workload.
//
//   Decode/<shape>-<dtype>/<impl>  greedy decoding of a random-weight
//       checkpoint of the shape (15M, 110M, 1.1B; "tiny" for the smoke
//       test), f32 (llama2.c file), or f16, q8_0, q4_0 or q4_k (GGUF; the
//       quantized types' fallbacks where rows are not whole blocks, as
//       weft-decode-gen writes them): one iteration decodes
//       kTokens tokens from position 0. weft queues the tokens' executes
//       at once on local-task, and for f32 and f16 on cuda too (the
//       decode's CUDA kernels, registered where nvcc built them; the row
//       skips where no cuda device can be made, before any checkpoint is
//       written; compare weight_GBps with the GPU's memory bandwidth;
//       bench.smoke runs the tiny rows on the CUDA test double, the CPU
//       kernels as their twins);
//       the baselines run the same kernels over the
//       same buffers, one parallel loop per kernel (OpenMP's static
//       schedule, pthreadpool), as simple CPU decoders do. Counters:
//       tokens_per_second, ms_per_token, and weight_GBps (the weight bytes
//       a token reads, per second: compare with MemoryBandwidth).
//   Prefill/<shape>-<dtype>/<impl>/<prompt>  a prompt of 128 or 512 tokens
//       (at most the shape's context) from position 0: the positions
//       before the last as batches of matrix-matrix products (decode.h),
//       then the last position's step, whose logits choose the first new
//       token. weft queues the batches' and the step's executes at once;
//       the baselines run the same kernels (GEMM tiles, batch attention)
//       one parallel loop per kernel. Counters: tokens_per_second, and
//       gemm_GFLOPs (2 x the layers' matrix elements x the batched
//       positions, per second; attention left out: compare with
//       FmaPeak).
//   FmaPeak/local-task  vector FMAs from registers only (AVX-512 or AVX2,
//       twelve independent accumulators) on every worker: the f32 peak
//       (GFLOPs).
//   Int8DotPeak/<avx2|avx512|vnni256|vnni512>/local-task  the same for
//       8-bit multiply-adds in the sequence a block type's inner loop
//       uses (maddubs, madd by ones and add on 256 or 512 bits, or VNNI's
//       dpbusd on 256 (the interleaved products') or 512; skipped where
//       the CPU lacks it): the block types' peak (GOPs, 2 a multiply-add,
//       as gemm_GFLOPs counts them).
//   MemoryBandwidth/local-task  a read-only streaming sum over 512 MiB on
//       every worker: the limit of a bandwidth-bound decode (GBps).
//   QuantDot/<dtype>  one thread's dot products of 64 rows of 2048
//       elements of a block type with a quantized input, all in cache
//       (the selected version): the most weight bytes a core's products
//       get through (weight_GBps); twice that under MemoryBandwidth means
//       a 2-core decode of the type is compute-bound.
//   QuantDot/<q8_0|q4_0|q4_k|q6_k>_x8/<1|4|8>  the same rows interleaved
//       by eight (decode_quant_x8.h), with 1, 4 or 8 columns (bytes
//       counted once per column).
//
// Checkpoints are written once into $WEFT_BENCH_DECODE_DIR (default
// /tmp/weft_bench_decode) and reused; the 1.1B f32 one is 4.4 GB.
#include <sys/stat.h>

#include <map>
#include <string>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "baselines.h"
#include "bench_util.h"

extern "C" {
#include "decode.h"
#include "decode_checkpoint.h"
#include "decode_cuda.h"
#include "decode_kernels.h"
#include "decode_quant_x8.h"
#include "decode_quant.h"
#include "decode_quant_dot.h"
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
    return OpenDevice(state, device_string) && OpenModel(state, path);
  }

  // The device alone (before a checkpoint is written for it, so a row
  // whose device is missing skips at once).
  // A device that cannot be made skips the row as "<device> unavailable:
  // ..." (what bench.smoke lets pass: a driver not built in, no GPU).
  bool OpenDevice(benchmark::State& state, const char* device_string) {
    const std::string full_string = DeviceStringWithThreads(device_string);
    weft_status_t status = weft_device_create(
        full_string.c_str(), weft_allocator_system(), &device);
    if (weft_status_is_ok(status)) return true;
    const std::string message =
        full_string + " unavailable: " + ConsumeStatus(status);
    state.SkipWithError(message.c_str());
    return false;
  }

  bool OpenModel(benchmark::State& state, const std::string& path) {
    weft_allocator_t allocator = weft_allocator_system();
    return Ok(state,
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

// One iteration on weft: starts |decoder|'s session on the |prompt_length|
// ids at |prompt|, enqueues |positions| positions and waits for the last;
// false (the row skipped) where a call fails.
bool RunWeftSession(benchmark::State& state, const Decoder& decoder,
                    const uint32_t* prompt, uint32_t prompt_length,
                    uint32_t positions) {
  return Ok(state,
            decode_session_start(decoder.session, prompt, prompt_length),
            "decode_session_start") &&
         Ok(state, decode_session_enqueue(decoder.session, positions),
            "decode_session_enqueue") &&
         Ok(state,
            decode_session_wait(decoder.session, positions - 1,
                                weft_timeout_relative(kWaitTimeoutNs)),
            "decode_session_wait");
}

// Decode/<shape>-<dtype>/<device>: weft on |device_string| (local-task,
// or cuda: skipped where no cuda device can be made or nvcc built no
// kernels).
void DecodeWeft(benchmark::State& state, const char* device_string,
                const char* shape, decode_dtype_t dtype) {
  Decoder decoder;
  if (!decoder.OpenDevice(state, device_string)) return;
  std::string path = ModelPath(state, shape, dtype);
  if (path.empty() || !decoder.OpenModel(state, path)) return;
  const uint32_t tokens = decoder.Tokens();
  LoopTimer timer;
  timer.Start();
  for (auto _ : state) {
    if (!RunWeftSession(state, decoder, kPrompt, 1, tokens)) break;
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

// A list of steps as launches over host pointers, resolved per run
// through a binding table.
class HostSteps {
 public:
  bool Build(benchmark::State& state, HostPlan* plan,
             const decode_step_t* steps, uint32_t count,
             const std::vector<weft_buffer_binding_t>& table) {
    plan_ = plan;
    steps_ = steps;
    count_ = count;
    for (uint32_t i = 0; i < count; ++i) {
      for (uint32_t b = 0; b < steps[i].binding_count; ++b) {
        if (!plan->Map(state, steps[i].bindings[b].buffer)) return false;
      }
    }
    for (const weft_buffer_binding_t& binding : table) {
      if (!plan->Map(state, binding.buffer)) return false;
    }
    const weft_kernel_library_t* library = decode_kernels_library();
    launches_ = std::vector<Launch>(count);
    pointers_.assign(count, {});
    lengths_.assign(count, {});
    for (uint32_t i = 0; i < count; ++i) {
      const decode_step_t& step = steps[i];
      const weft_kernel_def_t& def = library->kernels[step.kernel];
      pointers_[i].resize(step.binding_count);
      lengths_[i].resize(step.binding_count);
      Launch& launch = launches_[i];
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
      launch.dispatch.binding_ptrs = pointers_[i].data();
      launch.dispatch.binding_lengths = lengths_[i].data();
    }
    return true;
  }

  // Runs every step, a parallel loop each; false if a kernel failed.
  bool Run(Pool* pool, const std::vector<weft_buffer_binding_t>& table) {
    for (uint32_t i = 0; i < count_; ++i) {
      for (uint32_t b = 0; b < steps_[i].binding_count; ++b) {
        plan_->Resolve(steps_[i].bindings[b], table, &pointers_[i][b],
                       &lengths_[i][b]);
      }
      pool->Run(&launches_[i], steps_[i].workgroups);
      if (launches_[i].failure.load(std::memory_order_relaxed) != 0) {
        return false;
      }
    }
    return true;
  }

 private:
  HostPlan* plan_ = nullptr;
  const decode_step_t* steps_ = nullptr;
  uint32_t count_ = 0;
  std::vector<Launch> launches_;
  std::vector<std::vector<void*>> pointers_;
  std::vector<std::vector<size_t>> lengths_;
};

// Opens |decoder| on |shape| and |dtype| and |pool| for |baseline|; false
// (the row skipped) where either fails.
bool OpenBaseline(benchmark::State& state, const char* shape,
                  decode_dtype_t dtype, Baseline baseline, Decoder* decoder,
                  Pool* pool) {
  std::string path = ModelPath(state, shape, dtype);
  if (path.empty()) return false;
  // local-sync only loads: the baseline's threads run every kernel.
  return decoder->Open(state, "local-sync", path) &&
         pool->Open(state, baseline);
}

// Builds |token| over the session's per-position steps with position 0's
// bindings in |table|: every buffer of every position's table is one of
// position 0's.
bool BuildTokenSteps(benchmark::State& state, const Decoder& decoder,
                     HostPlan* plan, std::vector<weft_buffer_binding_t>* table,
                     HostSteps* token) {
  uint32_t step_count = 0;
  const decode_step_t* steps =
      decode_session_steps(decoder.session, &step_count);
  table->assign(decode_session_slot_count(decoder.session), {});
  decode_session_bindings(decoder.session, 0, table->data());
  return token->Build(state, plan, steps, step_count, *table);
}

void DecodeBaseline(benchmark::State& state, const char* shape,
                    decode_dtype_t dtype, Baseline baseline) {
  Decoder decoder;
  Pool pool;
  if (!OpenBaseline(state, shape, dtype, baseline, &decoder, &pool)) return;
  const uint32_t tokens = decoder.Tokens();
  std::vector<weft_buffer_binding_t> table;
  HostPlan plan;
  HostSteps token;
  if (!Ok(state, decode_session_start(decoder.session, kPrompt, 1),
          "decode_session_start") ||
      !BuildTokenSteps(state, decoder, &plan, &table, &token)) {
    return;
  }
  LoopTimer timer;
  timer.Start();
  for (auto _ : state) {
    bool ok = true;
    for (uint32_t p = 0; ok && p < tokens; ++p) {
      decode_session_bindings(decoder.session, p, table.data());
      ok = token.Run(&pool, table);
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
// Prefill
//===----------------------------------------------------------------------===//

// A prompt of |length| ids below |vocab|.
std::vector<uint32_t> MakePrompt(uint32_t length, uint32_t vocab) {
  std::vector<uint32_t> prompt(length);
  for (uint32_t i = 0; i < length; ++i) {
    prompt[i] = static_cast<uint32_t>((i * 7919ull + 1) % vocab);
  }
  return prompt;
}

// The prompt a row asks for (state.range(0) ids), cut to the context.
std::vector<uint32_t> RowPrompt(const benchmark::State& state,
                                const Decoder& decoder) {
  const decode_config_t& config = decode_model_layout(decoder.model)->config;
  const uint32_t asked = static_cast<uint32_t>(state.range(0));
  return MakePrompt(asked < config.seq_len ? asked : config.seq_len,
                    config.vocab_size);
}

// The prompt lengths of |shape|'s rows: 128 and 512, each cut to the
// context (tiny: 64 only).
void (*PrefillArgs(const char* shape))(benchmark::internal::Benchmark*) {
  decode_config_t config;
  const uint32_t context =
      decode_shape_lookup(shape, &config) ? config.seq_len : 128;
  if (context < 128) {
    return [](benchmark::internal::Benchmark* b) { b->Arg(64); };
  }
  if (context == 128) {
    return [](benchmark::internal::Benchmark* b) { b->Arg(128); };
  }
  if (context < 512) {
    return [](benchmark::internal::Benchmark* b) { b->Arg(128)->Arg(256); };
  }
  return [](benchmark::internal::Benchmark* b) { b->Arg(128)->Arg(512); };
}

void ReportPrefill(benchmark::State& state, const Decoder& decoder,
                   const LoopTimer& timer, uint32_t prompt_length) {
  const double seconds = timer.Nanoseconds() / 1e9;
  const double iterations = static_cast<double>(state.iterations());
  if (seconds <= 0.0 || iterations <= 0.0) return;
  const decode_config_t& c = decode_model_layout(decoder.model)->config;
  const double kv_dim =
      static_cast<double>(c.dim) / c.n_heads * c.n_kv_heads;
  const double layer_elements =
      static_cast<double>(c.dim) * (2.0 * c.dim + 2.0 * kv_dim) +
      3.0 * c.dim * c.hidden_dim;
  state.counters["tokens_per_second"] = iterations * prompt_length / seconds;
  state.counters["gemm_GFLOPs"] = 2.0 * layer_elements * c.n_layers *
                                  (prompt_length - 1.0) * iterations /
                                  seconds / 1e9;
}

void PrefillWeft(benchmark::State& state, const char* shape,
                 decode_dtype_t dtype) {
  std::string path = ModelPath(state, shape, dtype);
  if (path.empty()) return;
  Decoder decoder;
  if (!decoder.Open(state, "local-task", path)) return;
  const std::vector<uint32_t> prompt = RowPrompt(state, decoder);
  const uint32_t length = static_cast<uint32_t>(prompt.size());
  LoopTimer timer;
  timer.Start();
  for (auto _ : state) {
    if (!RunWeftSession(state, decoder, prompt.data(), length, length)) break;
  }
  timer.Stop();
  ReportPrefill(state, decoder, timer, length);
}

void PrefillBaseline(benchmark::State& state, const char* shape,
                     decode_dtype_t dtype, Baseline baseline) {
  Decoder decoder;
  Pool pool;
  if (!OpenBaseline(state, shape, dtype, baseline, &decoder, &pool)) return;
  const std::vector<uint32_t> prompt = RowPrompt(state, decoder);
  const uint32_t length = static_cast<uint32_t>(prompt.size());
  if (!Ok(state, decode_session_start(decoder.session, prompt.data(), length),
          "decode_session_start")) {
    return;
  }
  HostPlan plan;
  uint32_t batch_count = 0;
  const decode_step_t* batch_steps =
      decode_session_batch_steps(decoder.session, &batch_count);
  std::vector<weft_buffer_binding_t> batch_table(
      decode_session_batch_slot_count(decoder.session));
  decode_session_batch_bindings(decoder.session, 0, 1, batch_table.data());
  std::vector<weft_buffer_binding_t> table;
  HostSteps batch;
  HostSteps token;
  if (!batch.Build(state, &plan, batch_steps, batch_count, batch_table) ||
      !BuildTokenSteps(state, decoder, &plan, &table, &token)) {
    return;
  }
  const uint32_t capacity = decode_session_batch_capacity(decoder.session);
  LoopTimer timer;
  timer.Start();
  for (auto _ : state) {
    bool ok = true;
    // The positions before the last in batches, as decode_session_enqueue
    // cuts them; then the last position's step.
    for (uint32_t first = 0; ok && first + 1 < length;) {
      uint32_t count = length - 1 - first;
      if (count > capacity) count = capacity;
      if (count > 1) {
        decode_session_batch_bindings(decoder.session, first, count,
                                      batch_table.data());
        ok = batch.Run(&pool, batch_table);
      } else {
        decode_session_bindings(decoder.session, first, table.data());
        ok = token.Run(&pool, table);
      }
      first += count;
    }
    if (ok) {
      decode_session_bindings(decoder.session, length - 1, table.data());
      ok = token.Run(&pool, table);
    }
    if (!ok) {
      state.SkipWithError("a prefill kernel failed");
      break;
    }
  }
  timer.Stop();
  ReportPrefill(state, decoder, timer, length);
}

//===----------------------------------------------------------------------===//
// The machine's peak: FMAs in registers
//===----------------------------------------------------------------------===//

constexpr uint32_t kFmaIterations = 1u << 20;
constexpr uint32_t kFmaAccumulators = 12;  // enough to hide FMA latency
constexpr uint32_t kRegisterWorkgroups = 64;

#if defined(__x86_64__) && defined(__GNUC__)
// The sum of the |count| floats at |lanes|, first to last.
float SumLanes(const float* lanes, uint32_t count) {
  float total = 0.0f;
  for (uint32_t i = 0; i < count; ++i) total += lanes[i];
  return total;
}

__attribute__((target("avx512f"))) float FmaLoopAvx512(float seed) {
  __m512 acc[kFmaAccumulators];
  for (uint32_t a = 0; a < kFmaAccumulators; ++a) {
    acc[a] = _mm512_set1_ps(seed + static_cast<float>(a));
  }
  const __m512 scale = _mm512_set1_ps(0.999999f);
  const __m512 add = _mm512_set1_ps(1e-7f);
  for (uint32_t i = 0; i < kFmaIterations; ++i) {
    for (uint32_t a = 0; a < kFmaAccumulators; ++a) {
      acc[a] = _mm512_fmadd_ps(acc[a], scale, add);
    }
  }
  __m512 sum = acc[0];
  for (uint32_t a = 1; a < kFmaAccumulators; ++a) {
    sum = _mm512_add_ps(sum, acc[a]);
  }
  // Stored and summed here: GCC 12's _mm512_reduce_add_ps trips its own
  // -Wuninitialized in C++.
  float lanes[16];
  _mm512_storeu_ps(lanes, sum);
  return SumLanes(lanes, 16);
}

__attribute__((target("avx2,fma"))) float FmaLoopAvx2(float seed) {
  __m256 acc[kFmaAccumulators];
  for (uint32_t a = 0; a < kFmaAccumulators; ++a) {
    acc[a] = _mm256_set1_ps(seed + static_cast<float>(a));
  }
  const __m256 scale = _mm256_set1_ps(0.999999f);
  const __m256 add = _mm256_set1_ps(1e-7f);
  for (uint32_t i = 0; i < kFmaIterations; ++i) {
    for (uint32_t a = 0; a < kFmaAccumulators; ++a) {
      acc[a] = _mm256_fmadd_ps(acc[a], scale, add);
    }
  }
  __m256 sum = acc[0];
  for (uint32_t a = 1; a < kFmaAccumulators; ++a) {
    sum = _mm256_add_ps(sum, acc[a]);
  }
  float lanes[8];
  _mm256_storeu_ps(lanes, sum);
  return SumLanes(lanes, 8);
}
#endif

//===----------------------------------------------------------------------===//
// The machine's integer peak: 8-bit multiply-adds in registers
//===----------------------------------------------------------------------===//

// The instruction sequences a block type's inner loop can be written in:
// maddubs (u8 x s8 -> pairs of int16), madd by ones (-> int32), add, on
// 256 or 512 bits; or one AVX-512 VNNI dpbusd (u8 x s8 summed into int32)
// on 256 or 512.
enum Int8Dot : uint32_t {
  kInt8Avx2 = 0,
  kInt8Avx512,
  kInt8Vnni256,  // the interleaved products' (decode_quant_x8.h)
  kInt8Vnni512,
};

// 8-bit multiply-adds one instruction sequence of |kind| makes (0: not on
// this CPU).
uint32_t Int8DotMacs(uint32_t kind) {
#if defined(__x86_64__) && defined(__GNUC__)
  switch (kind) {
    case kInt8Avx2:
      return __builtin_cpu_supports("avx2") ? 32 : 0;
    case kInt8Avx512:
      return __builtin_cpu_supports("avx512bw") ? 64 : 0;
    case kInt8Vnni256:
      return __builtin_cpu_supports("avx512vnni") &&
                     __builtin_cpu_supports("avx512vl")
                 ? 32
                 : 0;
    case kInt8Vnni512:
      return __builtin_cpu_supports("avx512vnni") ? 64 : 0;
  }
#endif
  (void)kind;
  return 0;
}

#if defined(__x86_64__) && defined(__GNUC__)
// Each accumulator's bytes are the unsigned operand of its own next
// product, so no product can be hoisted out of the loop; the sums wrap.
__attribute__((target("avx2"))) uint32_t Int8LoopAvx2(uint32_t seed) {
  __m256i acc[kFmaAccumulators];
  for (uint32_t a = 0; a < kFmaAccumulators; ++a) {
    acc[a] = _mm256_set1_epi32(static_cast<int>(seed + a));
  }
  const __m256i w = _mm256_set1_epi8(3);
  const __m256i ones = _mm256_set1_epi16(1);
  for (uint32_t i = 0; i < kFmaIterations; ++i) {
    for (uint32_t a = 0; a < kFmaAccumulators; ++a) {
      acc[a] = _mm256_add_epi32(
          acc[a], _mm256_madd_epi16(_mm256_maddubs_epi16(acc[a], w), ones));
    }
  }
  __m256i sum = acc[0];
  for (uint32_t a = 1; a < kFmaAccumulators; ++a) {
    sum = _mm256_add_epi32(sum, acc[a]);
  }
  return static_cast<uint32_t>(_mm256_extract_epi32(sum, 0));
}

__attribute__((target("avx512bw"))) uint32_t Int8LoopAvx512(uint32_t seed) {
  __m512i acc[kFmaAccumulators];
  for (uint32_t a = 0; a < kFmaAccumulators; ++a) {
    acc[a] = _mm512_set1_epi32(static_cast<int>(seed + a));
  }
  const __m512i w = _mm512_set1_epi8(3);
  const __m512i ones = _mm512_set1_epi16(1);
  for (uint32_t i = 0; i < kFmaIterations; ++i) {
    for (uint32_t a = 0; a < kFmaAccumulators; ++a) {
      acc[a] = _mm512_add_epi32(
          acc[a], _mm512_madd_epi16(_mm512_maddubs_epi16(acc[a], w), ones));
    }
  }
  __m512i sum = acc[0];
  for (uint32_t a = 1; a < kFmaAccumulators; ++a) {
    sum = _mm512_add_epi32(sum, acc[a]);
  }
  // Stored and read here: GCC 12's cast to 128 bits trips its own
  // -Wuninitialized in C++.
  uint32_t lanes[16];
  _mm512_storeu_si512(lanes, sum);
  return lanes[0];
}

__attribute__((target("avx512f,avx512vl,avx512vnni"))) uint32_t
Int8LoopVnni256(uint32_t seed) {
  __m256i acc[kFmaAccumulators];
  for (uint32_t a = 0; a < kFmaAccumulators; ++a) {
    acc[a] = _mm256_set1_epi32(static_cast<int>(seed + a));
  }
  const __m256i w = _mm256_set1_epi8(3);
  for (uint32_t i = 0; i < kFmaIterations; ++i) {
    for (uint32_t a = 0; a < kFmaAccumulators; ++a) {
      acc[a] = _mm256_dpbusd_epi32(acc[a], acc[a], w);
    }
  }
  __m256i sum = acc[0];
  for (uint32_t a = 1; a < kFmaAccumulators; ++a) {
    sum = _mm256_add_epi32(sum, acc[a]);
  }
  return static_cast<uint32_t>(_mm256_extract_epi32(sum, 0));
}

__attribute__((target("avx512f,avx512vnni"))) uint32_t Int8LoopVnni512(
    uint32_t seed) {
  __m512i acc[kFmaAccumulators];
  for (uint32_t a = 0; a < kFmaAccumulators; ++a) {
    acc[a] = _mm512_set1_epi32(static_cast<int>(seed + a));
  }
  const __m512i w = _mm512_set1_epi8(3);
  for (uint32_t i = 0; i < kFmaIterations; ++i) {
    for (uint32_t a = 0; a < kFmaAccumulators; ++a) {
      acc[a] = _mm512_dpbusd_epi32(acc[a], acc[a], w);
    }
  }
  __m512i sum = acc[0];
  for (uint32_t a = 1; a < kFmaAccumulators; ++a) {
    sum = _mm512_add_epi32(sum, acc[a]);
  }
  // Stored and read here: GCC 12's cast to 128 bits trips its own
  // -Wuninitialized in C++.
  uint32_t lanes[16];
  _mm512_storeu_si512(lanes, sum);
  return lanes[0];
}
#endif

// One workgroup: kFmaIterations x kFmaAccumulators sequences of the kind
// in constant 0, its result stored so the loop stays.
int Int8Loop(const weft_dispatch_state_t* dispatch,
             const weft_workgroup_state_t* workgroup) {
  const uint32_t id = workgroup->workgroup_id[0];
  uint32_t* out = static_cast<uint32_t*>(dispatch->binding_ptrs[0]);
  uint32_t result = 0;
#if defined(__x86_64__) && defined(__GNUC__)
  switch (dispatch->constants[0]) {
    case kInt8Avx2:
      result = Int8LoopAvx2(id);
      break;
    case kInt8Avx512:
      result = Int8LoopAvx512(id);
      break;
    case kInt8Vnni256:
      result = Int8LoopVnni256(id);
      break;
    case kInt8Vnni512:
      result = Int8LoopVnni512(id);
      break;
  }
#endif
  out[id] = result;
  return 0;
}

// Floats one FMA instruction works on (0: no vector FMA here).
uint32_t FmaLanes() {
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx512f")) return 16;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    return 8;
  }
#endif
  return 0;
}

// One workgroup: kFmaIterations x kFmaAccumulators vector FMAs, its
// result stored so the loop stays.
int FmaLoop(const weft_dispatch_state_t* dispatch,
            const weft_workgroup_state_t* workgroup) {
  const uint32_t id = workgroup->workgroup_id[0];
  float* out = static_cast<float*>(dispatch->binding_ptrs[0]);
  float result = 0.0f;
#if defined(__x86_64__) && defined(__GNUC__)
  const uint32_t lanes = dispatch->constants[0];
  result = lanes == 16 ? FmaLoopAvx512(static_cast<float>(id))
                       : FmaLoopAvx2(static_cast<float>(id));
#endif
  out[id] = result;
  return 0;
}

const weft_kernel_def_t kFmaKernels[] = {
    {"fma_loop", FmaLoop, 1, 1, {1, 1, 1}, 0},
    {"int8_loop", Int8Loop, 1, 1, {1, 1, 1}, 0},
};
const weft_kernel_library_t kFmaLibrary = {WEFT_KERNEL_ABI_VERSION,
                                           "bench_fma", 2, kFmaKernels};
const weft_kernel_library_t* FmaQuery(uint32_t version) {
  return version == WEFT_KERNEL_ABI_VERSION ? &kFmaLibrary : nullptr;
}

// One dispatch of |executable|'s kernel 0 per iteration, each waited for;
// returns the seconds they took (the loop stops at a failure, the row
// skipped).
double TimeDispatches(benchmark::State& state, Session* session,
                      weft_executable_t* executable, uint32_t ordinal,
                      const uint32_t workgroups[3], uint32_t constant_count,
                      const uint32_t* constants, uint32_t binding_count,
                      const weft_buffer_ref_t* bindings) {
  LoopTimer timer;
  timer.Start();
  for (auto _ : state) {
    uint64_t value = ++session->value;
    if (!Ok(state,
            weft_device_queue_dispatch(
                session->device, WEFT_QUEUE_AFFINITY_ANY,
                weft_semaphore_list_empty(),
                List1(&session->semaphore, &value), executable, ordinal,
                workgroups,
                constant_count, constants, binding_count, bindings),
            "queue_dispatch") ||
        !session->Wait(state, value)) {
      break;
    }
  }
  timer.Stop();
  return timer.Nanoseconds() / 1e9;
}

// Seconds of |ordinal|'s register loop (kFmaLibrary, one constant) on 64
// workgroups a dispatch, each dispatch waited for; 0 where it failed.
double TimeRegisterLoop(benchmark::State& state, uint32_t ordinal,
                        uint32_t constant) {
  Session session;
  if (!session.Open(state, "local-task")) return 0.0;
  weft_executable_t* executable = nullptr;
  if (!Ok(state,
          weft_device_create_executable(
              session.device, weft_executable_source_cpu_static(FmaQuery),
              &executable),
          "create_executable")) {
    return 0.0;
  }
  weft_buffer_t* out = session.AllocateBuffer(state, kRegisterWorkgroups * 4,
                                              0);
  if (!out) {
    weft_executable_release(executable);
    return 0.0;
  }
  const weft_buffer_ref_t bindings[1] = {
      weft_make_buffer_ref(out, 0, WEFT_WHOLE_BUFFER)};
  const uint32_t workgroups[3] = {kRegisterWorkgroups, 1, 1};
  const double seconds =
      TimeDispatches(state, &session, executable, ordinal, workgroups, 1,
                     &constant, 1, bindings);
  weft_executable_release(executable);
  return seconds;
}

// Register-loop sequences per second, |per_sequence| operations each, in
// billions (GFLOPs, GOPs).
double RegisterRate(benchmark::State& state, double seconds,
                    double per_sequence) {
  return per_sequence * kFmaAccumulators *
         static_cast<double>(kFmaIterations) * kRegisterWorkgroups *
         static_cast<double>(state.iterations()) / seconds / 1e9;
}

// FmaPeak/local-task: vector FMAs from registers only on every worker,
// 2 FLOPs a lane: the machine's f32 peak, beside Prefill's gemm_GFLOPs.
void FmaPeak(benchmark::State& state) {
  const uint32_t lanes = FmaLanes();
  if (lanes == 0) {
    state.SkipWithError("FmaPeak: no AVX2/FMA or AVX-512 on this CPU");
    return;
  }
  const double seconds = TimeRegisterLoop(state, 0, lanes);
  if (seconds > 0.0) {
    state.counters["GFLOPs"] = RegisterRate(state, seconds, 2.0 * lanes);
  }
}

// Int8DotPeak/<kind>/local-task: 8-bit multiply-adds from registers only
// on every worker, in one of the sequences a block type's inner loop can
// use (Int8Dot), 2 operations a multiply-add: the peak of the block types'
// products, beside Prefill's gemm_GFLOPs (the same count of operations,
// on integers there).
void Int8DotPeak(benchmark::State& state, uint32_t kind) {
  const uint32_t macs = Int8DotMacs(kind);
  if (macs == 0) {
    state.SkipWithError("Int8DotPeak: this CPU lacks the instructions");
    return;
  }
  const double seconds = TimeRegisterLoop(state, 1, kind);
  if (seconds > 0.0) {
    state.counters["GOPs"] = RegisterRate(state, seconds, 2.0 * macs);
  }
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
  const double seconds =
      TimeDispatches(state, &session, executable, 0, workgroups, 0, nullptr, 2,
                     bindings);
  if (seconds > 0.0) {
    state.counters["GBps"] = static_cast<double>(kStreamBytes) *
                             static_cast<double>(state.iterations()) /
                             seconds / 1e9;
  }
  weft_executable_release(executable);
}

// QuantDot/<dtype>: decode_quant_dot over kDotRows rows in cache.
constexpr uint32_t kDotElements = 2048;
constexpr uint32_t kDotRows = 64;

void QuantDot(benchmark::State& state, decode_dtype_t dtype) {
  const size_t row_bytes = decode_dtype_bytes(dtype, kDotElements);
  std::vector<uint8_t> weights(row_bytes * kDotRows);
  std::vector<float> x(kDotElements);
  std::vector<uint8_t> activations(kDotElements * 2);
  uint32_t seed = 1;
  for (float& value : x) {
    seed = seed * 1664525u + 1013904223u;
    value = static_cast<float>(seed >> 8) / 16777216.0f - 0.5f;
  }
  for (uint32_t r = 0; r < kDotRows; ++r) {
    decode_quant_quantize(dtype, x.data(), kDotElements,
                          weights.data() + r * row_bytes);
  }
  // The kernels' library selects the SIMD versions on first use.
  decode_kernels_library();
  decode_quant_activations(dtype, x.data(), kDotElements, activations.data());
  float sum = 0.0f;
  for (auto _ : state) {
    for (uint32_t r = 0; r < kDotRows; ++r) {
      sum += decode_quant_dot(dtype, weights.data() + r * row_bytes,
                              activations.data(), kDotElements);
    }
    benchmark::DoNotOptimize(sum);
  }
  state.counters["weight_GBps"] = benchmark::Counter(
      static_cast<double>(row_bytes) * kDotRows *
          static_cast<double>(state.iterations()) / 1e9,
      benchmark::Counter::kIsRate);
}

// QuantDot/<q8_0|q4_0|q4_k|q6_k>_x8/<columns>: the same rows interleaved by
// eight (decode_quant_x8.h), the product taking 1 column (the token's) or
// 4 or 8 (a batch's); weight_GBps counts each row's bytes once per column.
void QuantDotX8(benchmark::State& state, decode_dtype_t dtype) {
  const uint32_t columns = static_cast<uint32_t>(state.range(0));
  const uint32_t x8 = decode_x8_form(dtype);
  const size_t row_bytes = decode_dtype_bytes(dtype, kDotElements);
  std::vector<uint8_t> weights(row_bytes * kDotRows);
  std::vector<uint8_t> scratch(row_bytes * DECODE_X8_ROWS);
  std::vector<float> x(kDotElements);
  std::vector<uint8_t> activations(kDotElements * 2);
  uint32_t seed = 1;
  for (float& value : x) {
    seed = seed * 1664525u + 1013904223u;
    value = static_cast<float>(seed >> 8) / 16777216.0f - 0.5f;
  }
  for (uint32_t r = 0; r < kDotRows; ++r) {
    decode_quant_quantize(dtype, x.data(), kDotElements,
                          weights.data() + r * row_bytes);
  }
  decode_x8_pack(x8, weights.data(), kDotRows, kDotElements, scratch.data());
  decode_kernels_library();
  decode_quant_activations(dtype, x.data(), kDotElements, activations.data());
  const void* columns_of[DECODE_X8_COLUMNS];
  for (auto& column : columns_of) column = activations.data();
  std::vector<float> out(DECODE_X8_COLUMNS * kDotRows);
  for (auto _ : state) {
    decode_x8_dot(x8, weights.data(), kDotElements, 0, kDotRows, columns_of,
                  columns, out.data(), kDotRows);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.counters["weight_GBps"] = benchmark::Counter(
      static_cast<double>(row_bytes) * kDotRows * columns *
          static_cast<double>(state.iterations()) / 1e9,
      benchmark::Counter::kIsRate);
}

}  // namespace

void RegisterDecodeBenchmarks() {
  for (decode_dtype_t dtype :
       {DECODE_DTYPE_Q8_0, DECODE_DTYPE_Q4_0, DECODE_DTYPE_Q4_K,
        DECODE_DTYPE_Q6_K}) {
    benchmark::RegisterBenchmark(
        (std::string("QuantDot/") + decode_dtype_name(dtype) + "_x8").c_str(),
        QuantDotX8, dtype)
        ->Arg(1)
        ->Arg(8)
        ->Arg(4);
  }
  for (decode_dtype_t dtype :
       {DECODE_DTYPE_Q8_0, DECODE_DTYPE_Q4_0, DECODE_DTYPE_Q4_K,
        DECODE_DTYPE_Q6_K, DECODE_DTYPE_Q5_K}) {
    benchmark::RegisterBenchmark(
        (std::string("QuantDot/") + decode_dtype_name(dtype)).c_str(),
        QuantDot, dtype);
  }
  benchmark::RegisterBenchmark("MemoryBandwidth/local-task", MemoryBandwidth)
      ->UseRealTime();
  const char* const shapes[] = {"tiny", "15M", "110M", "1.1B"};
  // Prefill: f32, f16 and the block types on each shape, prompts of 128
  // and 512 (the context where it is shorter: tiny's 64, 15M's 256).
  benchmark::RegisterBenchmark("FmaPeak/local-task", FmaPeak)->UseRealTime();
  benchmark::RegisterBenchmark("Int8DotPeak/avx2/local-task", Int8DotPeak,
                               kInt8Avx2)
      ->UseRealTime();
  benchmark::RegisterBenchmark("Int8DotPeak/avx512/local-task", Int8DotPeak,
                               kInt8Avx512)
      ->UseRealTime();
  benchmark::RegisterBenchmark("Int8DotPeak/vnni256/local-task", Int8DotPeak,
                               kInt8Vnni256)
      ->UseRealTime();
  benchmark::RegisterBenchmark("Int8DotPeak/vnni512/local-task", Int8DotPeak,
                               kInt8Vnni512)
      ->UseRealTime();
  for (const char* shape : shapes) {
    for (decode_dtype_t dtype :
         {DECODE_DTYPE_F32, DECODE_DTYPE_F16, DECODE_DTYPE_Q8_0,
          DECODE_DTYPE_Q4_0, DECODE_DTYPE_Q4_K}) {
      const std::string prefix = std::string("Prefill/") + shape + "-" +
                                 decode_dtype_name(dtype) + "/";
      benchmark::RegisterBenchmark((prefix + "local-task").c_str(),
                                   PrefillWeft, shape, dtype)
          ->Apply(PrefillArgs(shape))
          ->UseRealTime();
      for (Baseline baseline : ParallelBaselines()) {
        benchmark::RegisterBenchmark(
            (prefix + BaselineName(baseline)).c_str(), PrefillBaseline, shape,
            dtype, baseline)
            ->Apply(PrefillArgs(shape))
            ->UseRealTime();
      }
    }
  }
  const decode_dtype_t dtypes[] = {DECODE_DTYPE_F32, DECODE_DTYPE_F16,
                                   DECODE_DTYPE_Q8_0, DECODE_DTYPE_Q4_0,
                                   DECODE_DTYPE_Q4_K};
  for (const char* shape : shapes) {
    for (decode_dtype_t dtype : dtypes) {
      const std::string prefix = std::string("Decode/") + shape + "-" +
                                 decode_dtype_name(dtype) + "/";
      benchmark::RegisterBenchmark((prefix + "local-task").c_str(), DecodeWeft,
                                   "local-task", shape, dtype)
          ->UseRealTime();
      // The decode's CUDA kernels take f32 and f16 weights (decode_cuda.h);
      // no row where nvcc built none.
      if (decode_cuda_kernels_available() &&
          (dtype == DECODE_DTYPE_F32 || dtype == DECODE_DTYPE_F16)) {
        benchmark::RegisterBenchmark((prefix + "cuda").c_str(), DecodeWeft,
                                     "cuda", shape, dtype)
            ->UseRealTime();
      }
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
