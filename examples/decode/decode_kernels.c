// weft decode example: the decoder's CPU kernels (see decode_kernels.h).
//
// The inner loops are dot products over a row of weights. They keep 16
// partial sums so the compiler can vectorise them without reassociating
// (no -ffast-math), and are built for three targets (AVX-512, AVX2 with
// FMA and F16C, and the baseline) with the best chosen when the program
// loads: f16 weights become f32 with the CPU's own conversion where it has
// one.
#include "decode_kernels.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define ROWS 16u  // DECODE_ROWS_PER_WORKGROUP (decode_model.h)

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define DECODE_TARGETS \
  __attribute__((target_clones("arch=skylake-avx512", "arch=haswell", \
                               "default")))
#else
#define DECODE_TARGETS
#endif

#if defined(__FLT16_MAX__)
typedef _Float16 decode_half_t;
#define DECODE_HALF_TO_FLOAT(h) ((float)(h))
#else
// No _Float16: the bits, converted by hand.
typedef uint16_t decode_half_t;
static float decode_half_bits_to_float(uint16_t value) {
  const uint32_t sign = (uint32_t)(value & 0x8000u) << 16;
  const uint32_t exponent = (value >> 10) & 0x1Fu;
  const uint32_t mantissa = value & 0x3FFu;
  uint32_t bits;
  if (exponent == 0) {
    float magnitude = (float)mantissa * (1.0f / 16777216.0f);
    memcpy(&bits, &magnitude, sizeof(bits));
    bits |= sign;
  } else if (exponent == 31) {
    bits = sign | 0x7F800000u | (mantissa << 13);
  } else {
    bits = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  }
  float result;
  memcpy(&result, &bits, sizeof(result));
  return result;
}
#define DECODE_HALF_TO_FLOAT(h) decode_half_bits_to_float(h)
#endif

//===----------------------------------------------------------------------===//
// Dot products
//===----------------------------------------------------------------------===//

DECODE_TARGETS
static float decode_dot_f32(const float* restrict w, const float* restrict x,
                            uint32_t n) {
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

DECODE_TARGETS
static float decode_dot_f16(const decode_half_t* restrict w,
                            const float* restrict x, uint32_t n) {
  float sums[16] = {0};
  uint32_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (uint32_t j = 0; j < 16; ++j) {
      sums[j] += DECODE_HALF_TO_FLOAT(w[i + j]) * x[i + j];
    }
  }
  float sum = 0.0f;
  for (uint32_t j = 0; j < 16; ++j) sum += sums[j];
  for (; i < n; ++i) sum += DECODE_HALF_TO_FLOAT(w[i]) * x[i];
  return sum;
}

// Row |row| of the [rows][cols] matrix |w| (of |dtype|) dotted with |x|.
static inline float decode_row_dot(const void* w, uint32_t dtype,
                                   uint64_t row, uint32_t cols,
                                   const float* x) {
  return dtype ? decode_dot_f16((const decode_half_t*)w + row * cols, x, cols)
               : decode_dot_f32((const float*)w + row * cols, x, cols);
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
    const decode_half_t* row =
        (const decode_half_t*)dispatch->binding_ptrs[0] + (uint64_t)token * dim;
    for (uint32_t i = 0; i < dim; ++i) x[i] = DECODE_HALF_TO_FLOAT(row[i]);
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
  return abi_version == WEFT_KERNEL_ABI_VERSION ? &kDecodeLibrary : NULL;
}

const weft_kernel_library_t* decode_kernels_library(void) {
  return &kDecodeLibrary;
}
