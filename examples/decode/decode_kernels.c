// weft decode example: the decoder's CPU kernels (see decode_kernels.h).
//
// The inner loops are dot products over a row of weights. Each has a
// portable version (16 partial sums, which the compiler vectorises without
// reassociating) and, on x86-64, AVX2 (with FMA and F16C) and AVX-512
// versions written with intrinsics; the best the CPU has is chosen once,
// when the library is first asked for (WEFT_DECODE_PORTABLE=1 keeps the
// portable ones). f16 weights become f32 with the CPU's own conversion
// where it has one.
#include "decode_kernels.h"

#include "decode_checkpoint.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ROWS 16u  // DECODE_ROWS_PER_WORKGROUP (decode_model.h)

#if defined(__x86_64__) && defined(__GNUC__)
#define DECODE_X86 1
#include <immintrin.h>
#include <pthread.h>
#endif

//===----------------------------------------------------------------------===//
// Dot products
//===----------------------------------------------------------------------===//

typedef float (*decode_dot_fn_t)(const void* w, const float* x, uint32_t n);

static float decode_dot_f32_portable(const void* weights, const float* x,
                                     uint32_t n) {
  const float* w = (const float*)weights;
  float sums[16] = {0};
  uint32_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (uint32_t j = 0; j < 16; ++j) sums[j] += w[i + j] * x[i + j];
  }
  float sum = 0.0f;
  for (uint32_t j = 0; j < 16; ++j) sum += sums[j];
  for (; i < n; ++i) sum += w[i] * x[i];
  return sum;
}

static float decode_dot_f16_portable(const void* weights, const float* x,
                                     uint32_t n) {
  const uint16_t* w = (const uint16_t*)weights;
  float sums[16] = {0};
  uint32_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (uint32_t j = 0; j < 16; ++j) {
      sums[j] += decode_f16_to_f32(w[i + j]) * x[i + j];
    }
  }
  float sum = 0.0f;
  for (uint32_t j = 0; j < 16; ++j) sum += sums[j];
  for (; i < n; ++i) sum += decode_f16_to_f32(w[i]) * x[i];
  return sum;
}

#if defined(DECODE_X86)

__attribute__((target("avx2,fma"))) static float decode_hsum256(__m256 v) {
  __m128 low = _mm256_castps256_ps128(v);
  __m128 high = _mm256_extractf128_ps(v, 1);
  low = _mm_add_ps(low, high);
  low = _mm_add_ps(low, _mm_movehl_ps(low, low));
  low = _mm_add_ss(low, _mm_movehdup_ps(low));
  return _mm_cvtss_f32(low);
}

__attribute__((target("avx2,fma"))) static float decode_dot_f32_avx2(
    const void* weights, const float* x, uint32_t n) {
  const float* w = (const float*)weights;
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
  uint32_t i = 0;
  for (; i + 16 <= n; i += 16) {
    a0 = _mm256_fmadd_ps(_mm256_loadu_ps(w + i), _mm256_loadu_ps(x + i), a0);
    a1 = _mm256_fmadd_ps(_mm256_loadu_ps(w + i + 8), _mm256_loadu_ps(x + i + 8),
                         a1);
  }
  float sum = decode_hsum256(_mm256_add_ps(a0, a1));
  for (; i < n; ++i) sum += w[i] * x[i];
  return sum;
}

__attribute__((target("avx2,fma,f16c"))) static float decode_dot_f16_avx2(
    const void* weights, const float* x, uint32_t n) {
  const uint16_t* w = (const uint16_t*)weights;
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
  uint32_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256 w0 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(w + i)));
    __m256 w1 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(w + i + 8)));
    a0 = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x + i), a0);
    a1 = _mm256_fmadd_ps(w1, _mm256_loadu_ps(x + i + 8), a1);
  }
  float sum = decode_hsum256(_mm256_add_ps(a0, a1));
  for (; i < n; ++i) sum += decode_f16_to_f32(w[i]) * x[i];
  return sum;
}

__attribute__((target("avx512f"))) static float decode_dot_f32_avx512(
    const void* weights, const float* x, uint32_t n) {
  const float* w = (const float*)weights;
  __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
  uint32_t i = 0;
  for (; i + 32 <= n; i += 32) {
    a0 = _mm512_fmadd_ps(_mm512_loadu_ps(w + i), _mm512_loadu_ps(x + i), a0);
    a1 = _mm512_fmadd_ps(_mm512_loadu_ps(w + i + 16),
                         _mm512_loadu_ps(x + i + 16), a1);
  }
  if (i + 16 <= n) {
    a0 = _mm512_fmadd_ps(_mm512_loadu_ps(w + i), _mm512_loadu_ps(x + i), a0);
    i += 16;
  }
  float sum = _mm512_reduce_add_ps(_mm512_add_ps(a0, a1));
  for (; i < n; ++i) sum += w[i] * x[i];
  return sum;
}

__attribute__((target("avx512f"))) static float decode_dot_f16_avx512(
    const void* weights, const float* x, uint32_t n) {
  const uint16_t* w = (const uint16_t*)weights;
  __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
  uint32_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m512 w0 = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)(w + i)));
    __m512 w1 =
        _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)(w + i + 16)));
    a0 = _mm512_fmadd_ps(w0, _mm512_loadu_ps(x + i), a0);
    a1 = _mm512_fmadd_ps(w1, _mm512_loadu_ps(x + i + 16), a1);
  }
  if (i + 16 <= n) {
    __m512 w0 = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)(w + i)));
    a0 = _mm512_fmadd_ps(w0, _mm512_loadu_ps(x + i), a0);
    i += 16;
  }
  float sum = _mm512_reduce_add_ps(_mm512_add_ps(a0, a1));
  for (; i < n; ++i) sum += decode_f16_to_f32(w[i]) * x[i];
  return sum;
}

#endif  // DECODE_X86

// The chosen versions ([0] f32, [1] f16), set once by decode_dot_select.
static decode_dot_fn_t decode_dot_fns[2] = {decode_dot_f32_portable,
                                            decode_dot_f16_portable};

static void decode_dot_select(void) {
  // WEFT_DECODE_PORTABLE=1 keeps the portable versions (tests run both).
  const char* portable = getenv("WEFT_DECODE_PORTABLE");
  if (portable && portable[0] == '1') return;
#if defined(DECODE_X86)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) {
    decode_dot_fns[0] = decode_dot_f32_avx512;
    decode_dot_fns[1] = decode_dot_f16_avx512;
  } else if (__builtin_cpu_supports("avx2") &&
             __builtin_cpu_supports("fma")) {
    decode_dot_fns[0] = decode_dot_f32_avx2;
    // F16C has no __builtin_cpu_supports name; every AVX2 CPU has it.
    decode_dot_fns[1] = decode_dot_f16_avx2;
  }
#endif
}

#if defined(DECODE_X86)
static pthread_once_t decode_dot_once = PTHREAD_ONCE_INIT;
#define DECODE_DOT_INITIALIZE() pthread_once(&decode_dot_once, decode_dot_select)
#else
#define DECODE_DOT_INITIALIZE() decode_dot_select()
#endif

static inline float decode_dot_f32(const float* w, const float* x,
                                   uint32_t n) {
  return decode_dot_fns[0](w, x, n);
}

// Row |row| of the [rows][cols] matrix |w| (of |dtype|) dotted with |x|.
static inline float decode_row_dot(const void* w, uint32_t dtype,
                                   uint64_t row, uint32_t cols,
                                   const float* x) {
  const size_t size = dtype ? 2 : 4;
  return decode_dot_fns[dtype ? 1 : 0]((const uint8_t*)w + row * cols * size,
                                       x, cols);
}

static inline float decode_bits_to_float(uint32_t bits) {
  float value;
  memcpy(&value, &bits, sizeof(value));
  return value;
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

// True when binding |i| holds at least |bytes|.
static inline bool decode_has(const weft_dispatch_state_t* dispatch,
                              uint32_t i, uint64_t bytes) {
  return dispatch->binding_lengths[i] >= bytes;
}

// out = rmsnorm(x) * weight over |n| elements.
static void decode_rmsnorm(const float* x, const float* weight, uint32_t n,
                           float eps, float* out) {
  float sum = 0.0f;
  for (uint32_t i = 0; i < n; ++i) sum += x[i] * x[i];
  const float scale = 1.0f / sqrtf(sum / (float)n + eps);
  for (uint32_t i = 0; i < n; ++i) out[i] = x[i] * scale * weight[i];
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

static int decode_embed(const weft_dispatch_state_t* dispatch,
                        const weft_workgroup_state_t* workgroup) {
  (void)workgroup;
  const uint32_t dim = dispatch->constants[0];
  const uint32_t vocab = dispatch->constants[1];
  const uint32_t dtype = dispatch->constants[2];
  const uint32_t size = dtype ? 2 : 4;
  if (!decode_has(dispatch, 0, (uint64_t)vocab * dim * size) ||
      !decode_has(dispatch, 1, 4) || !decode_has(dispatch, 2, dim * 4ull)) {
    return 1;
  }
  const uint32_t token = *(const uint32_t*)dispatch->binding_ptrs[1];
  if (token >= vocab) return 2;
  float* x = (float*)dispatch->binding_ptrs[2];
  if (dtype) {
    const uint16_t* row =
        (const uint16_t*)dispatch->binding_ptrs[0] + (uint64_t)token * dim;
    for (uint32_t i = 0; i < dim; ++i) x[i] = decode_f16_to_f32(row[i]);
  } else {
    memcpy(x, (const float*)dispatch->binding_ptrs[0] + (uint64_t)token * dim,
           dim * sizeof(float));
  }
  return 0;
}

static int decode_qkv(const weft_dispatch_state_t* dispatch,
                      const weft_workgroup_state_t* workgroup) {
  const uint32_t dim = dispatch->constants[0];
  const uint32_t kv_dim = dispatch->constants[1];
  const uint32_t head_size = dispatch->constants[2];
  const uint32_t dtype = dispatch->constants[3];
  const float eps = decode_bits_to_float(dispatch->constants[4]);
  const uint64_t size = dtype ? 2 : 4;
  if (!decode_has(dispatch, 0, dim * 4ull) ||
      !decode_has(dispatch, 1, dim * 4ull) ||
      !decode_has(dispatch, 2, (uint64_t)dim * dim * size) ||
      !decode_has(dispatch, 3, (uint64_t)kv_dim * dim * size) ||
      !decode_has(dispatch, 4, (uint64_t)kv_dim * dim * size) ||
      !decode_has(dispatch, 5, dim * 4ull) ||
      !decode_has(dispatch, 6, kv_dim * 4ull) ||
      !decode_has(dispatch, 7, kv_dim * 4ull) ||
      !decode_has(dispatch, 8, head_size * 4ull) ||
      workgroup->local_memory_size < dim * sizeof(float)) {
    return 1;
  }
  float* xn = (float*)workgroup->local_memory;
  decode_rmsnorm((const float*)dispatch->binding_ptrs[0],
                 (const float*)dispatch->binding_ptrs[1], dim, eps, xn);
  const uint32_t first = workgroup->workgroup_id[0] * ROWS;
  // The rows of one workgroup lie in one of q, k or v (widths are
  // multiples of ROWS).
  uint32_t section = 0;
  uint32_t row0 = first;
  if (row0 >= dim) {
    row0 -= dim;
    section = 1;
    if (row0 >= kv_dim) {
      row0 -= kv_dim;
      section = 2;
    }
  }
  const void* w = dispatch->binding_ptrs[2 + section];
  float* out = (float*)dispatch->binding_ptrs[5 + section];
  const uint32_t limit = section == 0 ? dim : kv_dim;
  if (row0 + ROWS > limit) return 1;
  for (uint32_t r = row0; r < row0 + ROWS; ++r) {
    out[r] = decode_row_dot(w, dtype, r, dim, xn);
  }
  if (section < 2) {
    // Rotate (2i, 2i+1) pairs by the angle of pair i of their head.
    const float* rope = (const float*)dispatch->binding_ptrs[8];
    for (uint32_t r = row0; r < row0 + ROWS; r += 2) {
      const uint32_t pair = (r % head_size) / 2;
      const float c = rope[2 * pair];
      const float s = rope[2 * pair + 1];
      const float v0 = out[r];
      const float v1 = out[r + 1];
      out[r] = v0 * c - v1 * s;
      out[r + 1] = v0 * s + v1 * c;
    }
  }
  return 0;
}

static int decode_attention(const weft_dispatch_state_t* dispatch,
                            const weft_workgroup_state_t* workgroup) {
  const uint32_t n_heads = dispatch->constants[0];
  const uint32_t n_kv_heads = dispatch->constants[1];
  const uint32_t head_size = dispatch->constants[2];
  const uint32_t dim = n_heads * head_size;
  const uint32_t kv_dim = n_kv_heads * head_size;
  const uint64_t row_bytes = kv_dim * 4ull;
  const uint64_t length = dispatch->binding_lengths[1] / row_bytes;
  if (!decode_has(dispatch, 0, dim * 4ull) || length == 0 ||
      !decode_has(dispatch, 2, length * row_bytes) ||
      !decode_has(dispatch, 3, dim * 4ull)) {
    return 1;
  }
  if (workgroup->local_memory_size < length * sizeof(float)) return 3;
  const uint32_t h = workgroup->workgroup_id[0];
  const uint32_t kv_h = h / (n_heads / n_kv_heads);
  const float* q = (const float*)dispatch->binding_ptrs[0] + h * head_size;
  const float* keys = (const float*)dispatch->binding_ptrs[1];
  const float* values = (const float*)dispatch->binding_ptrs[2];
  float* out = (float*)dispatch->binding_ptrs[3] + h * head_size;
  float* scores = (float*)workgroup->local_memory;
  const float scale = 1.0f / sqrtf((float)head_size);
  float max = -INFINITY;
  for (uint64_t t = 0; t < length; ++t) {
    const float score =
        decode_dot_f32(keys + t * kv_dim + kv_h * head_size, q, head_size) *
        scale;
    scores[t] = score;
    if (score > max) max = score;
  }
  float total = 0.0f;
  for (uint64_t t = 0; t < length; ++t) {
    scores[t] = expf(scores[t] - max);
    total += scores[t];
  }
  const float inverse = 1.0f / total;
  for (uint32_t i = 0; i < head_size; ++i) out[i] = 0.0f;
  for (uint64_t t = 0; t < length; ++t) {
    const float p = scores[t] * inverse;
    const float* v = values + t * kv_dim + kv_h * head_size;
    for (uint32_t i = 0; i < head_size; ++i) out[i] += p * v[i];
  }
  return 0;
}

static int decode_matvec_add(const weft_dispatch_state_t* dispatch,
                             const weft_workgroup_state_t* workgroup) {
  const uint32_t rows = dispatch->constants[0];
  const uint32_t cols = dispatch->constants[1];
  const uint32_t dtype = dispatch->constants[2];
  const uint64_t size = dtype ? 2 : 4;
  if (!decode_has(dispatch, 0, cols * 4ull) ||
      !decode_has(dispatch, 1, (uint64_t)rows * cols * size) ||
      !decode_has(dispatch, 2, rows * 4ull)) {
    return 1;
  }
  const float* x = (const float*)dispatch->binding_ptrs[0];
  const void* w = dispatch->binding_ptrs[1];
  float* out = (float*)dispatch->binding_ptrs[2];
  const uint32_t first = workgroup->workgroup_id[0] * ROWS;
  if (first + ROWS > rows) return 1;
  for (uint32_t r = first; r < first + ROWS; ++r) {
    out[r] += decode_row_dot(w, dtype, r, cols, x);
  }
  return 0;
}

static int decode_ffn(const weft_dispatch_state_t* dispatch,
                      const weft_workgroup_state_t* workgroup) {
  const uint32_t dim = dispatch->constants[0];
  const uint32_t hidden = dispatch->constants[1];
  const uint32_t dtype = dispatch->constants[2];
  const float eps = decode_bits_to_float(dispatch->constants[3]);
  const uint64_t size = dtype ? 2 : 4;
  if (!decode_has(dispatch, 0, dim * 4ull) ||
      !decode_has(dispatch, 1, dim * 4ull) ||
      !decode_has(dispatch, 2, (uint64_t)hidden * dim * size) ||
      !decode_has(dispatch, 3, (uint64_t)hidden * dim * size) ||
      !decode_has(dispatch, 4, hidden * 4ull) ||
      workgroup->local_memory_size < dim * sizeof(float)) {
    return 1;
  }
  float* xn = (float*)workgroup->local_memory;
  decode_rmsnorm((const float*)dispatch->binding_ptrs[0],
                 (const float*)dispatch->binding_ptrs[1], dim, eps, xn);
  const void* w1 = dispatch->binding_ptrs[2];
  const void* w3 = dispatch->binding_ptrs[3];
  float* h = (float*)dispatch->binding_ptrs[4];
  const uint32_t first = workgroup->workgroup_id[0] * ROWS;
  if (first + ROWS > hidden) return 1;
  for (uint32_t r = first; r < first + ROWS; ++r) {
    const float gate = decode_row_dot(w1, dtype, r, dim, xn);
    const float up = decode_row_dot(w3, dtype, r, dim, xn);
    h[r] = gate / (1.0f + expf(-gate)) * up;
  }
  return 0;
}

static int decode_classifier(const weft_dispatch_state_t* dispatch,
                             const weft_workgroup_state_t* workgroup) {
  const uint32_t dim = dispatch->constants[0];
  const uint32_t vocab = dispatch->constants[1];
  const uint32_t dtype = dispatch->constants[2];
  const float eps = decode_bits_to_float(dispatch->constants[3]);
  const uint64_t size = dtype ? 2 : 4;
  if (!decode_has(dispatch, 0, dim * 4ull) ||
      !decode_has(dispatch, 1, dim * 4ull) ||
      !decode_has(dispatch, 2, (uint64_t)vocab * dim * size) ||
      !decode_has(dispatch, 3, vocab * 4ull) ||
      workgroup->local_memory_size < dim * sizeof(float)) {
    return 1;
  }
  float* xn = (float*)workgroup->local_memory;
  decode_rmsnorm((const float*)dispatch->binding_ptrs[0],
                 (const float*)dispatch->binding_ptrs[1], dim, eps, xn);
  const void* w = dispatch->binding_ptrs[2];
  float* logits = (float*)dispatch->binding_ptrs[3];
  const uint32_t first = workgroup->workgroup_id[0] * DECODE_CLASSIFIER_ROWS;
  uint32_t last = first + DECODE_CLASSIFIER_ROWS;
  if (last > vocab) last = vocab;
  for (uint32_t r = first; r < last; ++r) {
    logits[r] = decode_row_dot(w, dtype, r, dim, xn);
  }
  return 0;
}

static int decode_argmax(const weft_dispatch_state_t* dispatch,
                         const weft_workgroup_state_t* workgroup) {
  (void)workgroup;
  const uint32_t vocab = dispatch->constants[0];
  if (vocab == 0 || !decode_has(dispatch, 0, vocab * 4ull) ||
      !decode_has(dispatch, 1, 4)) {
    return 1;
  }
  const float* logits = (const float*)dispatch->binding_ptrs[0];
  uint32_t best = 0;
  for (uint32_t i = 1; i < vocab; ++i) {
    if (logits[i] > logits[best]) best = i;
  }
  *(uint32_t*)dispatch->binding_ptrs[1] = best;
  return 0;
}

//===----------------------------------------------------------------------===//
// The library
//===----------------------------------------------------------------------===//

static const weft_kernel_def_t kDecodeKernels[DECODE_KERNEL_COUNT] = {
    {"embed", decode_embed, 3, 3, {1, 1, 1}, 0},
    {"qkv", decode_qkv, 9, 5, {ROWS, 1, 1}, DECODE_MAX_DIM * 4},
    {"attention", decode_attention, 4, 3, {1, 1, 1}, DECODE_MAX_CONTEXT * 4},
    {"matvec_add", decode_matvec_add, 3, 3, {ROWS, 1, 1}, 0},
    {"ffn", decode_ffn, 5, 4, {ROWS, 1, 1}, DECODE_MAX_DIM * 4},
    {"classifier", decode_classifier, 4, 4, {DECODE_CLASSIFIER_ROWS, 1, 1},
     DECODE_MAX_DIM * 4},
    {"argmax", decode_argmax, 2, 1, {1, 1, 1}, 0},
};

static const weft_kernel_library_t kDecodeLibrary = {
    WEFT_KERNEL_ABI_VERSION, "decode_kernels", DECODE_KERNEL_COUNT,
    kDecodeKernels};

const weft_kernel_library_t* decode_kernels_query(uint32_t abi_version) {
  DECODE_DOT_INITIALIZE();
  return abi_version == WEFT_KERNEL_ABI_VERSION ? &kDecodeLibrary : NULL;
}

const weft_kernel_library_t* decode_kernels_library(void) {
  DECODE_DOT_INITIALIZE();
  return &kDecodeLibrary;
}
