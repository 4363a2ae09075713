// The decode's CUDA kernels (examples/decode/cuda/decode_kernels.cu)
// compiled as host C++ under decode_cuda_emulation.h (a host thread per
// CUDA thread, barriers for __syncthreads and the warps' shuffles) and run
// against the CPU kernels of the same names over the same bindings: the
// same status codes, and outputs within float rounding of the CPU's (the
// CUDA kernels sum per lane then across the warp, in another order).
// Every kernel, f32 and f16 weights, the products' 16-byte and scalar
// paths (a binding 4 or 2 bytes off alignment), tails of rows and tiles,
// grouped-query heads, ties in argmax, blocks past a batch, and the
// failures each kernel reports (short bindings, a token out of the
// vocabulary, a context past the shared memory). It needs no GPU and no
// nvcc, so it runs in every build; what only a GPU can tell (its memory
// model, its expf) waits for one.
#include "decode_cuda_emulation.h"
// The kernels, in this translation unit.
#include "cuda/decode_kernels.cu"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <memory>
#include <string>
#include <vector>

extern "C" {
#include "decode_checkpoint.h"
}

//===----------------------------------------------------------------------===//
// The emulation
//===----------------------------------------------------------------------===//

thread_local decode_cuda_emulation_thread_t decode_cuda_emulation_self;

// decode_kernels.cu's dynamic shared memory.
float decode_scores[DECODE_MAX_CONTEXT];

namespace {

struct BlockState {
  pthread_barrier_t barrier;
  pthread_barrier_t warps[32];
  uint32_t slots[32][32];
  unsigned shared_size;
  unsigned grid;
  unsigned block;
  unsigned index;
  const std::function<void()>* kernel;
};
BlockState g_block;

void* RunThread(void* argument) {
  const unsigned t = (unsigned)(uintptr_t)argument;
  decode_cuda_emulation_self.thread_idx = dim3{t, 0, 0};
  decode_cuda_emulation_self.block_idx = dim3{g_block.index, 0, 0};
  decode_cuda_emulation_self.block_dim = dim3{g_block.block, 1, 1};
  decode_cuda_emulation_self.grid_dim = dim3{g_block.grid, 1, 1};
  (*g_block.kernel)();
  return nullptr;
}

}  // namespace

unsigned decode_cuda_emulation_dynamic_shared_size() {
  return g_block.shared_size;
}

void __syncthreads() { pthread_barrier_wait(&g_block.barrier); }

uint32_t decode_cuda_emulation_shuffle(uint32_t value, int offset) {
  const unsigned warp = threadIdx.x / 32;
  const unsigned lane = threadIdx.x % 32;
  g_block.slots[warp][lane] = value;
  pthread_barrier_wait(&g_block.warps[warp]);
  const uint32_t result = g_block.slots[warp][lane ^ (unsigned)offset];
  pthread_barrier_wait(&g_block.warps[warp]);
  return result;
}

void decode_cuda_emulation_launch(unsigned grid, unsigned block,
                                  unsigned shared,
                                  const std::function<void()>& kernel) {
  if (block == 0 || block % 32 != 0 || block > 1024 ||
      shared > sizeof(decode_scores)) {
    fprintf(stderr, "bad launch: %u threads, %u bytes shared\n", block,
            shared);
    abort();
  }
  g_block.shared_size = shared;
  g_block.grid = grid;
  g_block.block = block;
  g_block.kernel = &kernel;
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setstacksize(&attributes, 256 * 1024);
  std::vector<pthread_t> threads(block);
  for (unsigned b = 0; b < grid; ++b) {
    g_block.index = b;
    // Scores a block did not write read as garbage, not as zeros.
    memset(decode_scores, 0x7F, sizeof(decode_scores));
    pthread_barrier_init(&g_block.barrier, nullptr, block);
    for (unsigned w = 0; w < block / 32; ++w) {
      pthread_barrier_init(&g_block.warps[w], nullptr, 32);
    }
    for (unsigned t = 0; t < block; ++t) {
      if (pthread_create(&threads[t], &attributes, RunThread,
                         (void*)(uintptr_t)t) != 0) {
        fprintf(stderr, "pthread_create failed\n");
        abort();
      }
    }
    for (unsigned t = 0; t < block; ++t) pthread_join(threads[t], nullptr);
    pthread_barrier_destroy(&g_block.barrier);
    for (unsigned w = 0; w < block / 32; ++w) {
      pthread_barrier_destroy(&g_block.warps[w]);
    }
  }
  pthread_attr_destroy(&attributes);
}

//===----------------------------------------------------------------------===//
// Cases
//===----------------------------------------------------------------------===//

namespace {

int g_failures = 0;

#define CHECK(condition, ...)                                    \
  do {                                                           \
    if (!(condition)) {                                          \
      fprintf(stderr, "FAILED %s:%d: ", __FILE__, __LINE__);     \
      fprintf(stderr, __VA_ARGS__);                              \
      fprintf(stderr, "\n");                                     \
      ++g_failures;                                              \
    }                                                            \
  } while (0)

uint64_t g_random = 0x9E3779B97F4A7C15ull;
uint32_t Random() {
  g_random = g_random * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(g_random >> 33);
}
// Uniform in [-1, 1).
float RandomFloat() { return (float)Random() / 1073741824.0f - 1.0f; }

// A binding: bytes |offset| into 64-byte aligned memory (|offset| moves it
// off alignment), |length| bytes long; |kind| how to compare it.
enum Kind { kInput, kFloats, kWords };
struct Binding {
  std::shared_ptr<uint8_t> memory;
  size_t offset = 0;
  size_t length = 0;
  Kind kind = kInput;
  uint8_t* data() const { return memory.get() + offset; }
  float* floats() const { return (float*)data(); }
  uint32_t* words() const { return (uint32_t*)data(); }
  uint16_t* halves() const { return (uint16_t*)data(); }
};

Binding Make(size_t length, Kind kind = kInput, size_t offset = 0) {
  Binding binding;
  void* memory = nullptr;
  if (posix_memalign(&memory, 64, length + offset + 64) != 0) abort();
  memset(memory, 0, length + offset + 64);
  binding.memory.reset((uint8_t*)memory, free);
  binding.offset = offset;
  binding.length = length;
  binding.kind = kind;
  return binding;
}

Binding Copy(const Binding& from) {
  Binding to = Make(from.length, from.kind, from.offset);
  memcpy(to.memory.get(), from.memory.get(), from.length + from.offset + 64);
  return to;
}

Binding RandomFloats(size_t count, Kind kind = kInput, size_t offset = 0) {
  Binding binding = Make(count * 4, kind, offset);
  for (size_t i = 0; i < count; ++i) binding.floats()[i] = RandomFloat();
  return binding;
}

// |count| weights of |dtype| (f32 or f16), some zero and subnormal.
Binding RandomWeights(uint32_t dtype, size_t count, size_t offset = 0) {
  const size_t size = dtype == DECODE_DTYPE_F16 ? 2 : 4;
  Binding binding = Make(count * size, kInput, offset);
  for (size_t i = 0; i < count; ++i) {
    float value = RandomFloat();
    if (i % 97 == 5) value = 0.0f;
    if (i % 89 == 7) value = 3e-6f;  // a half subnormal
    if (dtype == DECODE_DTYPE_F16) {
      binding.halves()[i] = decode_f32_to_f16(value);
    } else {
      binding.floats()[i] = value;
    }
  }
  return binding;
}

Binding Words(std::vector<uint32_t> words) {
  Binding binding = Make(words.size() * 4, kInput);
  memcpy(binding.data(), words.data(), words.size() * 4);
  return binding;
}

uint32_t Bits(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof(bits));
  return bits;
}

// The threads of each kernel's block (decode_cuda.c's table).
unsigned BlockSize(uint32_t ordinal) {
  switch (ordinal) {
    case DECODE_KERNEL_QKV:
    case DECODE_KERNEL_MATVEC_ADD:
    case DECODE_KERNEL_FFN:
    case DECODE_KERNEL_CLASSIFIER:
      return DECODE_CUDA_ROW_THREADS;
    case DECODE_KERNEL_GEMM:
      return DECODE_CUDA_GEMM_THREADS;
    case DECODE_KERNEL_ATTENTION:
    case DECODE_KERNEL_BATCH_ATTENTION:
      return DECODE_CUDA_ATTENTION_THREADS;
    case DECODE_KERNEL_ARGMAX:
      return DECODE_CUDA_ARGMAX_THREADS;
    case DECODE_KERNEL_BATCH_QUANTIZE:
      return DECODE_CUDA_QUANTIZE_THREADS;
    default:
      return DECODE_CUDA_ROW_WISE_THREADS;
  }
}

// Runs the CPU kernel |ordinal| over |grid| workgroups; the first failing
// workgroup's code, or 0.
int RunCpu(uint32_t ordinal, uint32_t grid, std::vector<Binding>& bindings,
           const std::vector<uint32_t>& constants, size_t local_size) {
  const weft_kernel_def_t* def = &decode_kernels_library()->kernels[ordinal];
  if (def->binding_count != bindings.size() ||
      def->constant_count != constants.size()) {
    fprintf(stderr, "%s: wrong counts in the test\n", def->name);
    abort();
  }
  std::vector<void*> pointers;
  std::vector<size_t> lengths;
  for (Binding& binding : bindings) {
    pointers.push_back(binding.data());
    lengths.push_back(binding.length);
  }
  std::vector<uint8_t> local(local_size + 1);
  weft_dispatch_state_t dispatch = {};
  dispatch.workgroup_count[0] = grid;
  dispatch.workgroup_count[1] = dispatch.workgroup_count[2] = 1;
  memcpy(dispatch.workgroup_size, def->workgroup_size,
         sizeof(dispatch.workgroup_size));
  dispatch.constant_count = (uint32_t)constants.size();
  dispatch.constants = constants.data();
  dispatch.binding_count = (uint32_t)bindings.size();
  dispatch.binding_ptrs = pointers.data();
  dispatch.binding_lengths = lengths.data();
  int first = 0;
  for (uint32_t w = 0; w < grid; ++w) {
    weft_workgroup_state_t workgroup = {};
    workgroup.workgroup_id[0] = w;
    workgroup.local_memory = local.data();
    workgroup.local_memory_size = local_size;
    const int result = def->fn(&dispatch, &workgroup);
    if (result != 0 && first == 0) first = result;
  }
  return first;
}

// Threads of the emulated blocks: the kernel table's (kReal), or fewer.
// The kernels divide their work by blockDim, so 64 threads (2 warps)
// take the loops the real blocks take once several times (a warp's rows
// of a product, the GEMM's passes over a tile, attention's groups), and
// emulate fast: host threads a block, barriers for every shuffle. Each
// kernel runs some cases with the real blocks too.
constexpr unsigned kReal = 0;
constexpr unsigned kSmall = 64;

// Runs the emulated CUDA kernel |ordinal| over |grid| blocks of |threads|
// (kReal: BlockSize) with |shared| bytes of dynamic shared memory; the
// status words' code.
uint32_t RunCuda(uint32_t ordinal, uint32_t grid, std::vector<Binding>& b,
                 const std::vector<uint32_t>& c, unsigned shared,
                 unsigned threads) {
  unsigned status[4] = {0, 0, 0, 0};
  std::vector<void*> p;
  std::vector<u64> l;
  for (Binding& binding : b) {
    p.push_back(binding.data());
    l.push_back(binding.length);
  }
  typedef const unsigned char* bytes;
  std::function<void()> call;
  switch (ordinal) {
    case DECODE_KERNEL_EMBED:
      call = [&] {
        embed((bytes)p[0], (const u32*)p[1], (float*)p[2], l[0], l[1], l[2],
              c[0], c[1], c[2], status);
      };
      break;
    case DECODE_KERNEL_QKV:
      call = [&] {
        qkv((const float*)p[0], (bytes)p[1], (bytes)p[2], (bytes)p[3],
            (bytes)p[4], (float*)p[5], (float*)p[6], (float*)p[7],
            (const float*)p[8], l[0], l[1], l[2], l[3], l[4], l[5], l[6], l[7],
            l[8], c[0], c[1], c[2], c[3], status);
      };
      break;
    case DECODE_KERNEL_ATTENTION:
      call = [&] {
        attention((const float*)p[0], (const float*)p[1], (const float*)p[2],
                  (float*)p[3], l[0], l[1], l[2], l[3], c[0], c[1], c[2],
                  status);
      };
      break;
    case DECODE_KERNEL_MATVEC_ADD:
      call = [&] {
        matvec_add((const float*)p[0], (bytes)p[1], (bytes)p[2], (float*)p[3],
                   l[0], l[1], l[2], l[3], c[0], c[1], c[2], status);
      };
      break;
    case DECODE_KERNEL_FFN:
      call = [&] {
        ffn((const float*)p[0], (bytes)p[1], (bytes)p[2], (bytes)p[3],
            (float*)p[4], l[0], l[1], l[2], l[3], l[4], c[0], c[1], c[2],
            status);
      };
      break;
    case DECODE_KERNEL_CLASSIFIER:
      call = [&] {
        classifier((const float*)p[0], (bytes)p[1], (bytes)p[2], (float*)p[3],
                   l[0], l[1], l[2], l[3], c[0], c[1], c[2], status);
      };
      break;
    case DECODE_KERNEL_ARGMAX:
      call = [&] {
        argmax((const float*)p[0], (u32*)p[1], l[0], l[1], c[0], status);
      };
      break;
    case DECODE_KERNEL_BATCH_EMBED:
      call = [&] {
        batch_embed((const u32*)p[0], (bytes)p[1], (float*)p[2], l[0], l[1],
                    l[2], c[0], c[1], c[2], status);
      };
      break;
    case DECODE_KERNEL_BATCH_RMSNORM:
      call = [&] {
        batch_rmsnorm((const u32*)p[0], (const float*)p[1], (const float*)p[2],
                      (float*)p[3], (unsigned char*)p[4], l[0], l[1], l[2],
                      l[3], l[4], c[0], c[1], c[2], status);
      };
      break;
    case DECODE_KERNEL_BATCH_QUANTIZE:
      call = [&] {
        batch_quantize((const u32*)p[0], (const float*)p[1],
                       (unsigned char*)p[2], l[0], l[1], l[2], c[0], c[1],
                       status);
      };
      break;
    case DECODE_KERNEL_GEMM:
      call = [&] {
        gemm((const u32*)p[0], (const float*)p[1], (bytes)p[2], (bytes)p[3],
             (bytes)p[4], (float*)p[5], l[0], l[1], l[2], l[3], l[4], l[5],
             c[0], c[1], c[2], c[3], status);
      };
      break;
    case DECODE_KERNEL_BATCH_ROPE:
      call = [&] {
        batch_rope((const u32*)p[0], (float*)p[1], (float*)p[2],
                   (const float*)p[3], l[0], l[1], l[2], l[3], c[0], c[1],
                   c[2], status);
      };
      break;
    case DECODE_KERNEL_BATCH_ATTENTION:
      call = [&] {
        batch_attention((const u32*)p[0], (const float*)p[1],
                        (const float*)p[2], (const float*)p[3], (float*)p[4],
                        l[0], l[1], l[2], l[3], l[4], c[0], c[1], c[2],
                        status);
      };
      break;
    default:
      abort();
  }
  decode_cuda_emulation_launch(
      grid, threads == kReal ? BlockSize(ordinal) : threads, shared, call);
  return status[0];
}

// Runs |ordinal| both ways over copies of |bindings| and checks the codes
// are |expected| and every output binding agrees: words exactly, floats
// within |tolerance| of the largest magnitude of the CPU's.
void Compare(const char* name, uint32_t ordinal, uint32_t grid,
             const std::vector<Binding>& bindings,
             const std::vector<uint32_t>& constants, int expected,
             unsigned threads = kSmall, size_t local = DECODE_MAX_CONTEXT * 4,
             float tolerance = 2e-5f) {
  std::vector<Binding> cpu, gpu;
  for (const Binding& binding : bindings) {
    cpu.push_back(Copy(binding));
    gpu.push_back(Copy(binding));
  }
  const int cpu_code = RunCpu(ordinal, grid, cpu, constants, local);
  const uint32_t gpu_code =
      RunCuda(ordinal, grid, gpu, constants, (unsigned)local, threads);
  CHECK(cpu_code == expected, "%s: the CPU kernel's code %d, expected %d",
        name, cpu_code, expected);
  CHECK((int)gpu_code == expected, "%s: the CUDA kernel's code %u, expected %d",
        name, gpu_code, expected);
  if (expected != 0) return;
  for (size_t i = 0; i < bindings.size(); ++i) {
    if (bindings[i].kind == kWords) {
      for (size_t j = 0; j < bindings[i].length / 4; ++j) {
        CHECK(cpu[i].words()[j] == gpu[i].words()[j],
              "%s: binding %zu word %zu: CUDA %u, CPU %u", name, i, j,
              gpu[i].words()[j], cpu[i].words()[j]);
      }
    } else if (bindings[i].kind == kFloats) {
      const size_t count = bindings[i].length / 4;
      float scale = 1e-30f;
      for (size_t j = 0; j < count; ++j) {
        scale = fmaxf(scale, fabsf(cpu[i].floats()[j]));
      }
      size_t worst = 0;
      float error = 0.0f;
      for (size_t j = 0; j < count; ++j) {
        const float e = fabsf(cpu[i].floats()[j] - gpu[i].floats()[j]);
        if (!(e <= error)) error = e, worst = j;
      }
      CHECK(error <= tolerance * scale,
            "%s: binding %zu element %zu: CUDA %g, CPU %g (scale %g)", name, i,
            worst, (double)gpu[i].floats()[worst],
            (double)cpu[i].floats()[worst], (double)scale);
    }
  }
}

std::string Name(const char* kernel, uint32_t dtype, const char* what = "") {
  return std::string(kernel) + (dtype == DECODE_DTYPE_F16 ? " f16" : " f32") +
         what;
}

void TestEmbed() {
  const uint32_t dim = 72, vocab = 50;
  for (uint32_t dtype : {DECODE_DTYPE_F32, DECODE_DTYPE_F16}) {
    Binding table = RandomWeights(dtype, (size_t)vocab * dim);
    const std::vector<uint32_t> constants = {dim, vocab, dtype};
    Compare(Name("embed", dtype).c_str(), DECODE_KERNEL_EMBED, 1,
            {table, Words({7}), Make(dim * 4, kFloats)}, constants, 0, kReal);
    Compare(Name("embed", dtype, " last token").c_str(), DECODE_KERNEL_EMBED,
            1, {table, Words({vocab - 1}), Make(dim * 4, kFloats)}, constants,
            0);
    Compare(Name("embed", dtype, " token past the vocabulary").c_str(),
            DECODE_KERNEL_EMBED, 1,
            {table, Words({vocab}), Make(dim * 4, kFloats)}, constants, 2);
    Compare(Name("embed", dtype, " short x").c_str(), DECODE_KERNEL_EMBED, 1,
            {table, Words({7}), Make(dim * 4 - 4, kFloats)}, constants, 1);
  }
}

void TestQkv() {
  struct Shape {
    uint32_t dim, kv_dim, head_size;
  };
  for (Shape s : {Shape{64, 32, 16}, Shape{96, 96, 48}, Shape{128, 32, 32}}) {
    for (uint32_t dtypes :
         {0x000000u, 0x010101u, 0x000100u, 0x010001u}) {  // q, k, v bytes
      for (size_t misalign : {(size_t)0, (size_t)4}) {
        const uint32_t dq = dtypes & 0xFF, dk = (dtypes >> 8) & 0xFF,
                       dv = dtypes >> 16;
        std::vector<Binding> b = {
            RandomFloats(s.dim, kInput, misalign),
            Make(DECODE_BATCH_QUANT_STRIDE(s.dim)),
            RandomWeights(dq, (size_t)s.dim * s.dim, misalign),
            RandomWeights(dk, (size_t)s.kv_dim * s.dim),
            RandomWeights(dv, (size_t)s.kv_dim * s.dim),
            Make(s.dim * 4, kFloats),
            Make(s.kv_dim * 4, kFloats),
            Make(s.kv_dim * 4, kFloats),
            RandomFloats(s.head_size)};
        char name[96];
        snprintf(name, sizeof(name), "qkv %u/%u/%u dtypes %06x misaligned %zu",
                 s.dim, s.kv_dim, s.head_size, dtypes, misalign);
        Compare(name, DECODE_KERNEL_QKV, (s.dim + 2 * s.kv_dim) / 16, b,
                {s.dim, s.kv_dim, s.head_size, dtypes}, 0,
                s.head_size == 16 && misalign == 0 ? kReal : kSmall);
      }
    }
  }
  // A short rope binding, and a grid past the rows.
  const uint32_t dim = 64, kv_dim = 32, head_size = 16;
  std::vector<Binding> b = {RandomFloats(dim),
                            Make(DECODE_BATCH_QUANT_STRIDE(dim)),
                            RandomWeights(0, dim * dim),
                            RandomWeights(0, kv_dim * dim),
                            RandomWeights(0, kv_dim * dim),
                            Make(dim * 4, kFloats),
                            Make(kv_dim * 4, kFloats),
                            Make(kv_dim * 4, kFloats),
                            RandomFloats(head_size / 2)};
  Compare("qkv short rope", DECODE_KERNEL_QKV, 8, b,
          {dim, kv_dim, head_size, 0}, 1);
  b[8] = RandomFloats(head_size);
  Compare("qkv past the rows", DECODE_KERNEL_QKV, 9, b,
          {dim, kv_dim, head_size, 0}, 1);
}

void TestAttention() {
  struct Shape {
    uint32_t n_heads, n_kv_heads, head_size, length;
  };
  // Head sizes of whole float4s (the 16-byte key loads) and not (6).
  for (Shape s : {Shape{4, 2, 16, 37}, Shape{2, 1, 48, 5}, Shape{4, 4, 8, 1},
                  Shape{1, 1, 300, 3}, Shape{6, 2, 64, 300},
                  Shape{4, 2, 6, 7}}) {
    const uint32_t dim = s.n_heads * s.head_size;
    const uint32_t kv_dim = s.n_kv_heads * s.head_size;
    std::vector<Binding> b = {RandomFloats(dim),
                              RandomFloats((size_t)s.length * kv_dim),
                              RandomFloats((size_t)s.length * kv_dim),
                              Make(dim * 4, kFloats)};
    // Sharper scores than uniform inputs give.
    for (size_t i = 0; i < dim; ++i) b[0].floats()[i] *= 4.0f;
    char name[96];
    snprintf(name, sizeof(name), "attention %u/%u heads of %u over %u",
             s.n_heads, s.n_kv_heads, s.head_size, s.length);
    Compare(name, DECODE_KERNEL_ATTENTION, s.n_heads, b,
            {s.n_heads, s.n_kv_heads, s.head_size}, 0, kReal);
    Compare(name, DECODE_KERNEL_ATTENTION, s.n_heads, b,
            {s.n_heads, s.n_kv_heads, s.head_size}, 0, kSmall);
    if (s.length > 2) {
      snprintf(name, sizeof(name), "attention over %u, scores for 2",
               s.length);
      Compare(name, DECODE_KERNEL_ATTENTION, s.n_heads, b,
              {s.n_heads, s.n_kv_heads, s.head_size}, 3, kSmall, 8);
    }
  }
  std::vector<Binding> b = {RandomFloats(64), RandomFloats(0),
                            RandomFloats(0), Make(64 * 4, kFloats)};
  Compare("attention over nothing", DECODE_KERNEL_ATTENTION, 4, b,
          {4, 2, 16}, 1);
}

void TestMatvecAdd() {
  for (uint32_t dtype : {DECODE_DTYPE_F32, DECODE_DTYPE_F16}) {
    for (uint32_t cols : {64u, 1056u, 4096u}) {
      for (size_t misalign : {(size_t)0, (size_t)(dtype ? 2 : 4)}) {
        const uint32_t rows = 32;
        std::vector<Binding> b = {
            RandomFloats(cols), Make(DECODE_BATCH_QUANT_STRIDE(cols)),
            RandomWeights(dtype, (size_t)rows * cols, misalign),
            RandomFloats(rows, kFloats)};
        char name[96];
        snprintf(name, sizeof(name), "matvec_add %ux%u misaligned %zu", rows,
                 cols, misalign);
        Compare(Name(name, dtype).c_str(), DECODE_KERNEL_MATVEC_ADD, rows / 16,
                b, {rows, cols, dtype}, 0, misalign == 0 ? kReal : kSmall);
      }
    }
  }
  std::vector<Binding> b = {RandomFloats(64),
                            Make(DECODE_BATCH_QUANT_STRIDE(64)),
                            RandomWeights(0, 30 * 64), RandomFloats(30, kFloats)};
  Compare("matvec_add 30 rows", DECODE_KERNEL_MATVEC_ADD, 2, b, {30, 64, 0}, 1);
  b[1] = Make(8);
  Compare("matvec_add short xq", DECODE_KERNEL_MATVEC_ADD, 1, b, {16, 64, 0},
          1);
}

void TestFfn() {
  const uint32_t dim = 64, hidden = 48;
  for (uint32_t dtypes : {0x0000u, 0x0101u, 0x0100u, 0x0001u}) {
    std::vector<Binding> b = {RandomFloats(dim),
                              Make(DECODE_BATCH_QUANT_STRIDE(dim)),
                              RandomWeights(dtypes & 0xFF, hidden * dim),
                              RandomWeights(dtypes >> 8, hidden * dim),
                              Make(hidden * 4, kFloats)};
    for (size_t i = 0; i < dim; ++i) b[0].floats()[i] *= 3.0f;
    char name[64];
    snprintf(name, sizeof(name), "ffn dtypes %04x", dtypes);
    Compare(name, DECODE_KERNEL_FFN, hidden / 16, b, {dim, hidden, dtypes}, 0,
            dtypes == 0x0100u ? kReal : kSmall);
  }
}

void TestClassifier() {
  const uint32_t dim = 64;
  for (uint32_t dtype : {DECODE_DTYPE_F32, DECODE_DTYPE_F16}) {
    for (uint32_t vocab : {150u, 64u, 5u}) {
      std::vector<Binding> b = {RandomFloats(dim),
                                Make(DECODE_BATCH_QUANT_STRIDE(dim)),
                                RandomWeights(dtype, (size_t)vocab * dim),
                                Make(vocab * 4, kFloats)};
      char name[64];
      snprintf(name, sizeof(name), "classifier vocab %u", vocab);
      Compare(Name(name, dtype).c_str(), DECODE_KERNEL_CLASSIFIER,
              (vocab + 63) / 64, b, {dim, vocab, dtype}, 0,
              vocab == 150 ? kReal : kSmall);
    }
  }
}

void TestArgmax() {
  const uint32_t vocab = 9000;  // 8 loads a thread of 1024, then a tail
  struct Tie {
    uint32_t first, second;
  };
  for (Tie tie : {Tie{1234, 2500}, Tie{0, 8999}, Tie{8999, 8999},
                  Tie{31, 1055}, Tie{1024, 1025}, Tie{8500, 8600},
                  Tie{2048, 7000}}) {
    Binding logits = RandomFloats(vocab);
    logits.floats()[tie.first] = 5.0f;
    logits.floats()[tie.second] = 5.0f;
    char name[64];
    snprintf(name, sizeof(name), "argmax max at %u and %u", tie.first,
             tie.second);
    Compare(name, DECODE_KERNEL_ARGMAX, 1, {logits, Make(4, kWords)}, {vocab},
            0, kReal);
    Compare(name, DECODE_KERNEL_ARGMAX, 1, {logits, Make(4, kWords)}, {vocab},
            0, kSmall);
  }
  Binding flat = Make(7 * 4);  // all zero: the first
  Compare("argmax all equal", DECODE_KERNEL_ARGMAX, 1, {flat, Make(4, kWords)},
          {7}, 0);
  Compare("argmax vocabulary 0", DECODE_KERNEL_ARGMAX, 1,
          {flat, Make(4, kWords)}, {0}, 1);
  Compare("argmax short logits", DECODE_KERNEL_ARGMAX, 1,
          {flat, Make(4, kWords)}, {8}, 1);
}

void TestBatchEmbed() {
  const uint32_t dim = 72, vocab = 50;
  for (uint32_t dtype : {DECODE_DTYPE_F32, DECODE_DTYPE_F16}) {
    Binding table = RandomWeights(dtype, (size_t)vocab * dim);
    Compare(Name("batch_embed", dtype).c_str(), DECODE_KERNEL_BATCH_EMBED, 8,
            {Words({3, 49, 0, 7, 7}), table, Make(5 * dim * 4, kFloats)},
            {dim, vocab, dtype}, 0, kReal);
    Compare(Name("batch_embed", dtype, " token past").c_str(),
            DECODE_KERNEL_BATCH_EMBED, 8,
            {Words({3, 49, 0, 50, 7}), table, Make(5 * dim * 4, kFloats)},
            {dim, vocab, dtype}, 2);
    Compare(Name("batch_embed", dtype, " short x").c_str(),
            DECODE_KERNEL_BATCH_EMBED, 8,
            {Words({3, 49, 0, 5, 7}), table, Make(4 * dim * 4, kFloats)},
            {dim, vocab, dtype}, 1);
  }
}

void TestBatchRmsnorm() {
  for (uint32_t dim : {72u, 2048u}) {
    const uint32_t batch = 3;
    std::vector<Binding> b = {Words({1, 2, 3}), RandomFloats(batch * dim),
                              RandomFloats(dim),
                              Make(batch * dim * 4, kFloats),
                              Make(batch * DECODE_BATCH_QUANT_STRIDE(dim))};
    char name[64];
    snprintf(name, sizeof(name), "batch_rmsnorm %u", dim);
    Compare(name, DECODE_KERNEL_BATCH_RMSNORM, 4, b, {dim, Bits(1e-5f), 0}, 0,
            kReal);
  }
  std::vector<Binding> b = {Words({1}), RandomFloats(72), RandomFloats(71),
                            Make(72 * 4, kFloats),
                            Make(DECODE_BATCH_QUANT_STRIDE(72))};
  Compare("batch_rmsnorm short norm", DECODE_KERNEL_BATCH_RMSNORM, 1, b,
          {72, Bits(1e-5f), 0}, 1);
}

void TestBatchQuantize() {
  // f32 and f16 read no quantized form: nothing to do, nothing failing.
  std::vector<Binding> b = {Words({1, 2}), RandomFloats(2 * 64),
                            Make(2 * DECODE_BATCH_QUANT_STRIDE(64), kWords)};
  Compare("batch_quantize", DECODE_KERNEL_BATCH_QUANTIZE, 4, b, {64, 0}, 0,
          kReal);
  b[1] = RandomFloats(64);
  Compare("batch_quantize short x", DECODE_KERNEL_BATCH_QUANTIZE, 4, b,
          {64, 0}, 1);
}

void TestGemm() {
  struct Shape {
    uint32_t rows, cols, batch, capacity;
  };
  for (Shape s : {Shape{48, 64, 37, 40}, Shape{40, 300, 5, 8},
                  Shape{16, 1024, 32, 32}, Shape{32, 20, 70, 70}}) {
    const uint32_t column_tiles = (s.capacity + 31) / 32;
    const uint32_t grid = (s.rows + 15) / 16 * column_tiles;
    // Each mode with each of f32, f16 and mixed rows, aligned or not.
    struct Variant {
      uint32_t mode, dtypes;
      size_t misalign;
    };
    for (Variant v : {Variant{0, 0x0000, 0}, Variant{1, 0x0101, 0},
                      Variant{2, 0x0100, 0}, Variant{2, 0x0001, 4},
                      Variant{0, 0x0101, 4}, Variant{1, 0x0000, 4}}) {
      {
        {
          const uint32_t mode = v.mode, dtypes = v.dtypes;
          const size_t misalign = v.misalign;
          std::vector<uint32_t> tokens(s.batch, 1);
          const uint32_t d = dtypes & 0xFF, d3 = dtypes >> 8;
          std::vector<Binding> b = {
              Words(tokens), RandomFloats((size_t)s.batch * s.cols),
              Make(s.batch * DECODE_BATCH_QUANT_STRIDE(s.cols)),
              RandomWeights(d, (size_t)s.rows * s.cols, misalign),
              RandomWeights(d3, (size_t)s.rows * s.cols),
              RandomFloats((size_t)s.batch * s.rows, kFloats)};
          char name[128];
          snprintf(name, sizeof(name),
                   "gemm %ux%u by %u (capacity %u) mode %u dtypes %04x "
                   "misaligned %zu",
                   s.rows, s.cols, s.batch, s.capacity, mode, dtypes,
                   misalign);
          Compare(name, DECODE_KERNEL_GEMM, grid, b,
                  {s.rows, s.cols, dtypes, mode}, 0,
                  s.rows == 48 && mode == 2 && misalign == 0
                      ? kReal
                      : kSmall);
        }
      }
    }
  }
  std::vector<Binding> b = {Words({1, 1}), RandomFloats(2 * 64),
                            Make(2 * DECODE_BATCH_QUANT_STRIDE(64)),
                            RandomWeights(0, 16 * 64), RandomWeights(0, 8),
                            RandomFloats(2 * 16, kFloats)};
  Compare("gemm swiglu short w3", DECODE_KERNEL_GEMM, 1, b, {16, 64, 0, 2}, 1);
  Compare("gemm mode 3", DECODE_KERNEL_GEMM, 1, b, {16, 64, 0, 3}, 1);
  Compare("gemm no rows", DECODE_KERNEL_GEMM, 1, b, {0, 64, 0, 0}, 1);
}

void TestBatchRope() {
  struct Shape {
    uint32_t dim, kv_dim, head_size;
  };
  for (Shape s : {Shape{64, 32, 16}, Shape{96, 96, 48}}) {
    const uint32_t batch = 3;
    std::vector<Binding> b = {Words({1, 2, 3}),
                              RandomFloats(batch * s.dim, kFloats),
                              RandomFloats(batch * s.kv_dim, kFloats),
                              RandomFloats(batch * s.head_size)};
    char name[64];
    snprintf(name, sizeof(name), "batch_rope %u/%u/%u", s.dim, s.kv_dim,
             s.head_size);
    Compare(name, DECODE_KERNEL_BATCH_ROPE, 4, b,
            {s.dim, s.kv_dim, s.head_size}, 0, kReal, 0, 0.0f);
  }
  std::vector<Binding> b = {Words({1}), RandomFloats(64, kFloats),
                            RandomFloats(32, kFloats), RandomFloats(16)};
  Compare("batch_rope odd head", DECODE_KERNEL_BATCH_ROPE, 1, b, {64, 32, 15},
          1);
}

void TestBatchAttention() {
  struct Shape {
    uint32_t n_heads, n_kv_heads, head_size, batch, capacity, end;
  };
  for (Shape s : {Shape{4, 2, 16, 5, 6, 9}, Shape{2, 1, 48, 3, 3, 3},
                  Shape{4, 4, 8, 1, 4, 20}}) {
    const uint32_t dim = s.n_heads * s.head_size;
    const uint32_t kv_dim = s.n_kv_heads * s.head_size;
    std::vector<uint32_t> tokens(s.batch, 1);
    std::vector<Binding> b = {Words(tokens), RandomFloats(s.batch * dim),
                              RandomFloats((size_t)s.end * kv_dim),
                              RandomFloats((size_t)s.end * kv_dim),
                              Make(s.batch * dim * 4, kFloats)};
    char name[96];
    snprintf(name, sizeof(name), "batch_attention %u/%u heads of %u, %u to %u",
             s.n_heads, s.n_kv_heads, s.head_size, s.batch, s.end);
    Compare(name, DECODE_KERNEL_BATCH_ATTENTION, s.n_heads * s.capacity, b,
            {s.n_heads, s.n_kv_heads, s.head_size}, 0,
            s.head_size == 16 ? kReal : kSmall);
  }
  std::vector<Binding> b = {Words({1, 1, 1}), RandomFloats(3 * 64),
                            RandomFloats(2 * 32), RandomFloats(2 * 32),
                            Make(3 * 64 * 4, kFloats)};
  Compare("batch_attention cache shorter than the batch",
          DECODE_KERNEL_BATCH_ATTENTION, 12, b, {4, 2, 16}, 1);
  Compare("batch_attention heads not a multiple",
          DECODE_KERNEL_BATCH_ATTENTION, 12, b, {4, 3, 16}, 1);
}

}  // namespace

int main() {
  const struct {
    const char* name;
    void (*run)();
  } kTests[] = {
      {"embed", TestEmbed},
      {"qkv", TestQkv},
      {"attention", TestAttention},
      {"matvec_add", TestMatvecAdd},
      {"ffn", TestFfn},
      {"classifier", TestClassifier},
      {"argmax", TestArgmax},
      {"batch_embed", TestBatchEmbed},
      {"batch_rmsnorm", TestBatchRmsnorm},
      {"batch_quantize", TestBatchQuantize},
      {"gemm", TestGemm},
      {"batch_rope", TestBatchRope},
      {"batch_attention", TestBatchAttention},
  };
  for (const auto& test : kTests) {
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    const int failures = g_failures;
    test.run();
    clock_gettime(CLOCK_MONOTONIC, &end);
    printf("%-16s %s (%.1f s)\n", test.name,
           g_failures == failures ? "ok" : "FAILED",
           (double)(end.tv_sec - start.tv_sec) +
               (double)(end.tv_nsec - start.tv_nsec) * 1e-9);
  }
  if (g_failures != 0) {
    fprintf(stderr, "%d checks failed\n", g_failures);
    return 1;
  }
  printf("every CUDA kernel agrees with its CPU twin\n");
  return 0;
}
