// weft decode example: the decoder's CPU kernels (see decode_kernels.h).
//
// The inner loops are products of rows of weights with activations. Each
// has a portable version and, on x86-64, AVX2 (with FMA and F16C) and
// AVX-512 versions written with intrinsics, all giving the same bits; the
// best the CPU has is chosen once, when the library is first asked for
// (WEFT_DECODE_PORTABLE=1 keeps the portable ones, WEFT_DECODE_SIMD=avx2
// AVX2's). A plain f32 or f16 row is a dot product (16 partial sums); a
// CPU device's matrices are interleaved once loaded (decode_float_x16.h
// for f32 and f16, decode_quant_x8.h for the block types), and their
// products advance 16 or 8 rows a register. Rows of a block type
// (decode_quant.h) are dotted with the activations quantized once per
// input by the kernel that normalises it (BATCH_RMSNORM, or
// BATCH_QUANTIZE), in the formats the types pair with
// (decode_quant_dot.h).
#include "decode_kernels.h"

#include "decode_checkpoint.h"
#include "decode_float_x16.h"
#include "decode_quant_dot.h"
#include "decode_quant_x8.h"

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

// AVX2: two chains (the halves of every 16 elements), so a row is read
// at a core's share of the bandwidth: one chain (a fused multiply-add's
// latency per 8 elements) measured 0.75-0.8x in generation on a Zen 3
// VM, for 1.2x in the prompt's tiles (docs/PERFORMANCE.md, issue 34
// third part). GEMM's tiles keep each sum in this order.
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

// Eight weights from |i| of an f16 (|half|) or f32 row, as floats.
__attribute__((target("avx2,fma,f16c"), always_inline)) static inline __m256
decode_load8(const void* weights, uint32_t i, bool half) {
  return half ? _mm256_cvtph_ps(
                    _mm_loadu_si128((const __m128i*)((const uint16_t*)weights +
                                                     i)))
              : _mm256_loadu_ps((const float*)weights + i);
}

// Weight |i| of a row of f16 (|half|) or f32 |weights|: the products'
// scalar tails (no target of its own, so every ISA's product inlines it).
static inline float decode_weight_at(const void* weights, uint32_t i,
                                     bool half) {
  return half ? decode_f16_to_f32(((const uint16_t*)weights)[i])
              : ((const float*)weights)[i];
}

// Sixteen weights from |i| of an f16 (|half|) or f32 row, as floats.
__attribute__((target("avx512f"), always_inline)) static inline __m512
decode_load16(const void* weights, uint32_t i, bool half) {
  return half ? _mm512_cvtph_ps(_mm256_loadu_si256(
                    (const __m256i*)((const uint16_t*)weights + i)))
              : _mm512_loadu_ps((const float*)weights + i);
}


// AVX-512: one accumulator, 16 elements a step, then the scalar tail.
// One chain (a fused multiply-add's latency per 16 elements, about 4
// floats a cycle) is still above a core's memory bandwidth, and it lets
// GEMM's tiles keep 4 rows by 4 columns of sums in 16 registers, each in
// the same order as here (decode_dot_rx4_avx512).
__attribute__((target("avx512f"), always_inline)) static inline float
decode_dot_avx512(const void* weights, const float* x, uint32_t n,
                  bool half) {
  __m512 acc = _mm512_setzero_ps();
  uint32_t i = 0;
  for (; i + 16 <= n; i += 16) {
    acc = _mm512_fmadd_ps(decode_load16(weights, i, half),
                          _mm512_loadu_ps(x + i), acc);
  }
  float sum = _mm512_reduce_add_ps(acc);
  for (; i < n; ++i) sum += decode_weight_at(weights, i, half) * x[i];
  return sum;
}

__attribute__((target("avx512f"))) static float decode_dot_f32_avx512(
    const void* weights, const float* x, uint32_t n) {
  return decode_dot_avx512(weights, x, n, false);
}

__attribute__((target("avx512f"))) static float decode_dot_f16_avx512(
    const void* weights, const float* x, uint32_t n) {
  return decode_dot_avx512(weights, x, n, true);
}

// Four columns at once: |out|[c] = the row |weights| dotted with
// |x|[c], each bit for bit what the one-column version of the same ISA
// gives (the same partial sums in the same order), while every load and
// conversion of the weights serves four columns. GEMM's f32 and f16
// tiles take them.
typedef void (*decode_dot4_fn_t)(const void* weights, const float* const* x,
                                 uint32_t n, float* out);

// One row by four columns, each sum bit for bit decode_dot_f32_avx2's
// or decode_dot_f16_avx2's.
__attribute__((target("avx2,fma,f16c"), always_inline)) static inline void
decode_dot4_avx2(const void* weights, const float* const* x, uint32_t n,
                 float* out, bool half) {
  __m256 a0[4], a1[4];
  for (int c = 0; c < 4; ++c) a0[c] = a1[c] = _mm256_setzero_ps();
  uint32_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 w0 = decode_load8(weights, i, half);
    const __m256 w1 = decode_load8(weights, i + 8, half);
    for (int c = 0; c < 4; ++c) {
      a0[c] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x[c] + i), a0[c]);
      a1[c] = _mm256_fmadd_ps(w1, _mm256_loadu_ps(x[c] + i + 8), a1[c]);
    }
  }
  for (int c = 0; c < 4; ++c) {
    float sum = decode_hsum256(_mm256_add_ps(a0[c], a1[c]));
    for (uint32_t j = i; j < n; ++j) {
      sum += decode_weight_at(weights, j, half) * x[c][j];
    }
    out[c] = sum;
  }
}

// Two rows by two columns in the same order: eight accumulators, two
// weight and one column register, so a weight load serves two columns and
// a column load two rows (eight loads for eight multiply-adds where the
// four-column product takes ten). Measured in cache on one Zen 3 core,
// 16 rows by 32 columns of width 768: 51 GFLOP/s against 34 for the
// four-column product (FmaPeak about 82 a core).
__attribute__((target("avx2,fma,f16c"), always_inline)) static inline void
decode_dot2x2_avx2(const void* const* rows, const float* x0, const float* x1,
                   uint32_t n, float* out, bool half) {
  __m256 acc[2][2][2];
  for (int r = 0; r < 2; ++r) {
    for (int c = 0; c < 2; ++c) {
      acc[r][c][0] = acc[r][c][1] = _mm256_setzero_ps();
    }
  }
  uint32_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (int h = 0; h < 2; ++h) {
      const uint32_t k = i + 8u * (uint32_t)h;
      const __m256 w0 = decode_load8(rows[0], k, half);
      const __m256 w1 = decode_load8(rows[1], k, half);
      const __m256 xa = _mm256_loadu_ps(x0 + k);
      acc[0][0][h] = _mm256_fmadd_ps(w0, xa, acc[0][0][h]);
      acc[1][0][h] = _mm256_fmadd_ps(w1, xa, acc[1][0][h]);
      const __m256 xb = _mm256_loadu_ps(x1 + k);
      acc[0][1][h] = _mm256_fmadd_ps(w0, xb, acc[0][1][h]);
      acc[1][1][h] = _mm256_fmadd_ps(w1, xb, acc[1][1][h]);
    }
  }
  const float* xs[2] = {x0, x1};
  for (int r = 0; r < 2; ++r) {
    for (int c = 0; c < 2; ++c) {
      float sum = decode_hsum256(_mm256_add_ps(acc[r][c][0], acc[r][c][1]));
      for (uint32_t j = i; j < n; ++j) {
        sum += decode_weight_at(rows[r], j, half) * xs[c][j];
      }
      out[4 * r + c] = sum;
    }
  }
}

__attribute__((target("avx2,fma,f16c"))) static void decode_dot4_f32_avx2(
    const void* weights, const float* const* x, uint32_t n, float* out) {
  decode_dot4_avx2(weights, x, n, out, false);
}

__attribute__((target("avx2,fma,f16c"))) static void decode_dot4_f16_avx2(
    const void* weights, const float* const* x, uint32_t n, float* out) {
  decode_dot4_avx2(weights, x, n, out, true);
}

// One or two rows by four columns (out[4 r + c]); two as two passes of
// two columns over the same rows (in L1 after the first).
__attribute__((target("avx2,fma,f16c"), always_inline)) static inline void
decode_dot_rx4_avx2(const void* const* rows, uint32_t r_count,
                    const float* const* x, uint32_t n, float* out,
                    bool half) {
  if (r_count == 1) {
    decode_dot4_avx2(rows[0], x, n, out, half);
    return;
  }
  decode_dot2x2_avx2(rows, x[0], x[1], n, out, half);
  decode_dot2x2_avx2(rows, x[2], x[3], n, out + 2, half);
}

__attribute__((target("avx2,fma,f16c"))) static void decode_dotrx4_f32_avx2(
    const void* const* rows, uint32_t r_count, const float* const* x,
    uint32_t n, float* out) {
  decode_dot_rx4_avx2(rows, r_count, x, n, out, false);
}

__attribute__((target("avx2,fma,f16c"))) static void decode_dotrx4_f16_avx2(
    const void* const* rows, uint32_t r_count, const float* const* x,
    uint32_t n, float* out) {
  decode_dot_rx4_avx2(rows, r_count, x, n, out, true);
}

// Sixteen sums at once, each in the pairing _mm512_reduce_add_ps takes
// (lanes i and i + 8, then i + 4, i + 2, i + 1): a transposed tree of
// shuffles and adds at about a sixth of sixteen reductions' cost. Lane e
// of the result is the sum of acc[4 (e % 4) + e / 4].
__attribute__((target("avx512f"), always_inline)) static inline __m512
decode_reduce16_avx512(const __m512* acc) {
  // Lanes i and i + 8 of each accumulator: two to a register.
  __m512 h8[8];
  for (int m = 0; m < 8; ++m) {
    const __m512 a = acc[2 * m], b = acc[2 * m + 1];
    h8[m] = _mm512_add_ps(_mm512_shuffle_f32x4(a, b, 0x44),
                          _mm512_shuffle_f32x4(a, b, 0xEE));
  }
  // Then i + 4: 128-bit lane k of h4[n] is accumulator 4n + k's.
  __m512 h4[4];
  for (int n = 0; n < 4; ++n) {
    const __m512 a = h8[2 * n], b = h8[2 * n + 1];
    h4[n] = _mm512_add_ps(_mm512_shuffle_f32x4(a, b, 0x88),
                          _mm512_shuffle_f32x4(a, b, 0xDD));
  }
  // Then i + 2, and i + 1.
  __m512 h2[2];
  for (int n = 0; n < 2; ++n) {
    const __m512 a = h4[2 * n], b = h4[2 * n + 1];
    h2[n] = _mm512_add_ps(_mm512_shuffle_ps(a, b, _MM_SHUFFLE(1, 0, 1, 0)),
                          _mm512_shuffle_ps(a, b, _MM_SHUFFLE(3, 2, 3, 2)));
  }
  const __m512 a = h2[0], b = h2[1];
  return _mm512_add_ps(_mm512_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)),
                       _mm512_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
}

// R rows (1 to 4) by four columns: out[4 * r + c] = rows[r] . x[c],
// each bit for bit decode_dot_avx512's (the same chain of 16-element
// steps, the same reduction and tail); each weight load and conversion
// serves four columns, each column load R rows. GEMM's f32 and f16 tiles
// take 4 rows at a time, SwiGLU's the W1 and W3 rows of two outputs.
__attribute__((target("avx512f"), always_inline)) static inline void
decode_dot_rx4_avx512(const void* const* rows, uint32_t r_count,
                      const float* const* x, uint32_t n, float* out,
                      bool half) {
  __m512 acc[4][4];
  for (uint32_t r = 0; r < 4; ++r) {
    for (int c = 0; c < 4; ++c) acc[r][c] = _mm512_setzero_ps();
  }
  uint32_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 x0 = _mm512_loadu_ps(x[0] + i);
    const __m512 x1 = _mm512_loadu_ps(x[1] + i);
    const __m512 x2 = _mm512_loadu_ps(x[2] + i);
    const __m512 x3 = _mm512_loadu_ps(x[3] + i);
    for (uint32_t r = 0; r < r_count; ++r) {
      // Four rows read side by side: fetch each ahead (measured:
      // Prefill/110M-f32/128 1147 -> 1209 tokens/s).
      _mm_prefetch((const char*)rows[r] + (i + 256u) * (half ? 2u : 4u),
                   _MM_HINT_T0);
      const __m512 w = decode_load16(rows[r], i, half);
      acc[r][0] = _mm512_fmadd_ps(w, x0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(w, x1, acc[r][1]);
      acc[r][2] = _mm512_fmadd_ps(w, x2, acc[r][2]);
      acc[r][3] = _mm512_fmadd_ps(w, x3, acc[r][3]);
    }
  }
  float sums[16];
  if (r_count == 4) {
    // Output 4r + c's sum in accumulator 4c + r (decode_reduce16_avx512).
    __m512 by_lane[16];
    for (int r = 0; r < 4; ++r) {
      for (int c = 0; c < 4; ++c) by_lane[4 * c + r] = acc[r][c];
    }
    _mm512_storeu_ps(sums, decode_reduce16_avx512(by_lane));
  } else {
    for (uint32_t r = 0; r < r_count; ++r) {
      for (int c = 0; c < 4; ++c) {
        sums[4 * r + c] = _mm512_reduce_add_ps(acc[r][c]);
      }
    }
  }
  for (uint32_t r = 0; r < r_count; ++r) {
    for (int c = 0; c < 4; ++c) {
      float sum = sums[4 * r + c];
      for (uint32_t j = i; j < n; ++j) {
        sum += decode_weight_at(rows[r], j, half) * x[c][j];
      }
      out[4 * r + c] = sum;
    }
  }
}

__attribute__((target("avx512f"))) static void decode_dot4_f32_avx512(
    const void* weights, const float* const* x, uint32_t n, float* out) {
  decode_dot_rx4_avx512(&weights, 1, x, n, out, false);
}

__attribute__((target("avx512f"))) static void decode_dot4_f16_avx512(
    const void* weights, const float* const* x, uint32_t n, float* out) {
  decode_dot_rx4_avx512(&weights, 1, x, n, out, true);
}

// GEMM's tiles take four rows (SwiGLU: two outputs' W1 and W3 rows).
__attribute__((target("avx512f"))) static void decode_dotrx4_f32_avx512(
    const void* const* rows, uint32_t r_count, const float* const* x,
    uint32_t n, float* out) {
  decode_dot_rx4_avx512(rows, r_count, x, n, out, false);
}

__attribute__((target("avx512f"))) static void decode_dotrx4_f16_avx512(
    const void* const* rows, uint32_t r_count, const float* const* x,
    uint32_t n, float* out) {
  decode_dot_rx4_avx512(rows, r_count, x, n, out, true);
}
#endif  // DECODE_X86

// e^x for SwiGLU's sigmoid and ATTENTION's softmax: x = n ln 2 + r (ln 2
// in two parts, so n ln 2 is exact), e^r by its Taylor polynomial to r^6
// (within about 2 ulp for |r| <= ln 2 / 2), times 2^n. Separate
// multiplies and adds (C11 does not fuse them), so this scalar form and
// decode_exp16_avx512 give the same bits, and every path through SwiGLU
// or the softmax (the token's, a batch's tile of any shape, 16 lanes or
// one) the same result.
static inline float decode_exp_poly(float x) {
  x = x < -103.0f ? -103.0f : x;
  x = x > 88.5f ? 88.5f : x;
  const float n = rintf(x * 1.44269504f);
  const float r = (x - n * 0.693145752f) - n * 1.42860677e-6f;
  float p = 1.38888889e-3f;
  p = p * r + 8.33333333e-3f;
  p = p * r + 4.16666667e-2f;
  p = p * r + 1.66666667e-1f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  return ldexpf(p, (int)n);
}

// SwiGLU's product of one hidden unit: silu(|gate|) times |up|.
static inline float decode_swiglu(float gate, float up) {
  return gate / (1.0f + decode_exp_poly(-gate)) * up;
}

static void decode_swiglu_portable(const float* gate, const float* up,
                                   uint32_t n, float* out) {
  for (uint32_t i = 0; i < n; ++i) out[i] = decode_swiglu(gate[i], up[i]);
}

#if defined(DECODE_X86)
// decode_exp_poly on 16 lanes: the same operations (scalef is ldexpf's
// exact scaling, max and min pass a NaN through as the scalar compares
// do).
__attribute__((target("avx512f"), always_inline)) static inline __m512
decode_exp16_avx512(__m512 x) {
  x = _mm512_max_ps(_mm512_set1_ps(-103.0f), x);
  x = _mm512_min_ps(_mm512_set1_ps(88.5f), x);
  const __m512 k = _mm512_roundscale_ps(
      _mm512_mul_ps(x, _mm512_set1_ps(1.44269504f)),
      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512 r = _mm512_sub_ps(
      _mm512_sub_ps(x, _mm512_mul_ps(k, _mm512_set1_ps(0.693145752f))),
      _mm512_mul_ps(k, _mm512_set1_ps(1.42860677e-6f)));
  const float c[6] = {8.33333333e-3f, 4.16666667e-2f, 1.66666667e-1f, 0.5f,
                      1.0f, 1.0f};
  __m512 p = _mm512_set1_ps(1.38888889e-3f);
  for (int j = 0; j < 6; ++j) {
    p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(c[j]));
  }
  return _mm512_scalef_ps(p, k);
}

// decode_swiglu on 16 lanes.
__attribute__((target("avx512f"))) static void decode_swiglu_avx512(
    const float* gate, const float* up, uint32_t n, float* out) {
  for (uint32_t i = 0; i < n; i += 16) {
    const __mmask16 m =
        n - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - i)) - 1);
    const __m512 g = _mm512_maskz_loadu_ps(m, gate + i);
    const __m512 u = _mm512_maskz_loadu_ps(m, up + i);
    const __m512 e = decode_exp16_avx512(_mm512_castsi512_ps(_mm512_xor_si512(
        _mm512_castps_si512(g), _mm512_set1_epi32((int)0x80000000u))));
    const __m512 s =
        _mm512_mul_ps(_mm512_div_ps(g, _mm512_add_ps(_mm512_set1_ps(1.0f), e)),
                      u);
    _mm512_mask_storeu_ps(out + i, m, s);
  }
}

// decode_exp_poly on 8 lanes: the same operations, and ldexpf's scaling
// as two multiplies by powers of two (2^(n/2) exactly, then 2^(n - n/2),
// which rounds once where the result is subnormal, as ldexpf does; both
// factors are normal for the clamped n, -149 to 128).
__attribute__((target("avx2,fma"), always_inline)) static inline __m256
decode_exp8_avx2(__m256 x) {
  x = _mm256_max_ps(_mm256_set1_ps(-103.0f), x);
  x = _mm256_min_ps(_mm256_set1_ps(88.5f), x);
  const __m256 k =
      _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504f)),
                      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m256 r = _mm256_sub_ps(
      _mm256_sub_ps(x, _mm256_mul_ps(k, _mm256_set1_ps(0.693145752f))),
      _mm256_mul_ps(k, _mm256_set1_ps(1.42860677e-6f)));
  const float c[6] = {8.33333333e-3f, 4.16666667e-2f, 1.66666667e-1f, 0.5f,
                      1.0f, 1.0f};
  __m256 p = _mm256_set1_ps(1.38888889e-3f);
  for (int j = 0; j < 6; ++j) {
    p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(c[j]));
  }
  const __m256i n = _mm256_cvtps_epi32(k);
  const __m256i n1 = _mm256_srai_epi32(n, 1);
  const __m256i n2 = _mm256_sub_epi32(n, n1);
  const __m256i bias = _mm256_set1_epi32(127);
  const __m256 s1 =
      _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
  const __m256 s2 =
      _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
  return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
}

// decode_swiglu on 8 lanes, the tail one by one.
__attribute__((target("avx2,fma"))) static void decode_swiglu_avx2(
    const float* gate, const float* up, uint32_t n, float* out) {
  uint32_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 g = _mm256_loadu_ps(gate + i);
    const __m256 e =
        decode_exp8_avx2(_mm256_xor_ps(g, _mm256_set1_ps(-0.0f)));
    _mm256_storeu_ps(
        out + i,
        _mm256_mul_ps(_mm256_div_ps(g, _mm256_add_ps(_mm256_set1_ps(1.0f), e)),
                      _mm256_loadu_ps(up + i)));
  }
  for (; i < n; ++i) out[i] = decode_swiglu(gate[i], up[i]);
}
#endif

// out[i] = silu(gate[i]) up[i], i < n: decode_swiglu's bits in every
// version (chosen with the dots).
typedef void (*decode_swiglu_fn_t)(const float* gate, const float* up,
                                   uint32_t n, float* out);
static decode_swiglu_fn_t decode_swiglu_n = decode_swiglu_portable;

// out[i] = sum over t of (scores[t] * inverse) values[t * stride + i],
// for i < n: ATTENTION's weighted sum of the value rows. Row t goes into
// partial sum t % 4 (four chains, so the adds' latency is not paid once
// per row), each in t order, and out[i] = (s0 + s1) + (s2 + s3). Every
// version does each element's multiplies and adds so (no fused
// multiply-add), so all give the same bits.
typedef void (*decode_weighted_sum_fn_t)(const float* scores, float inverse,
                                         const float* values, uint64_t stride,
                                         uint64_t length, uint32_t n,
                                         float* out);

static void decode_weighted_sum_portable(const float* scores, float inverse,
                                         const float* values, uint64_t stride,
                                         uint64_t length, uint32_t n,
                                         float* out) {
  for (uint32_t i = 0; i < n; ++i) {
    float partial[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (uint64_t t = 0; t < length; ++t) {
      partial[t % 4] += (scores[t] * inverse) * values[t * stride + i];
    }
    out[i] = (partial[0] + partial[1]) + (partial[2] + partial[3]);
  }
}

#if defined(DECODE_X86)
// Columns [i, i + 16 * W) (the last 16 masked by |tail|): W vectors of
// four partial sums.
#define DECODE_WEIGHTED_SUM_AVX512(W, tail)                                  \
  do {                                                                       \
    __m512 acc[4][W];                                                        \
    for (int k = 0; k < 4; ++k) {                                            \
      for (int c = 0; c < (W); ++c) acc[k][c] = _mm512_setzero_ps();         \
    }                                                                        \
    /* Rows in fours (the last ones cut short), so that each partial sum */ \
    /* is a register. */                                                     \
    for (uint64_t t = 0; t < length; t += 4) {                               \
      for (int k = 0; k < 4; ++k) {                                          \
        if (t + (uint64_t)k >= length) break;                                \
        const __m512 p = _mm512_set1_ps(scores[t + k] * inverse);            \
        const float* v = values + (t + k) * stride + i;                      \
        for (int c = 0; c < (W); ++c) {                                      \
          const __mmask16 m = c == (W) - 1 ? (tail) : (__mmask16)0xFFFF;     \
          acc[k][c] = _mm512_add_ps(                                         \
              acc[k][c],                                                     \
              _mm512_mul_ps(p, _mm512_maskz_loadu_ps(m, v + 16 * c)));       \
        }                                                                    \
      }                                                                      \
    }                                                                        \
    for (int c = 0; c < (W); ++c) {                                          \
      const __mmask16 m = c == (W) - 1 ? (tail) : (__mmask16)0xFFFF;         \
      _mm512_mask_storeu_ps(                                                 \
          out + i + 16 * c, m,                                               \
          _mm512_add_ps(_mm512_add_ps(acc[0][c], acc[1][c]),                 \
                        _mm512_add_ps(acc[2][c], acc[3][c])));               \
    }                                                                        \
  } while (0)

__attribute__((target("avx512f"))) static void decode_weighted_sum_avx512(
    const float* scores, float inverse, const float* values, uint64_t stride,
    uint64_t length, uint32_t n, float* out) {
  uint32_t i = 0;
  for (; i + 64 <= n; i += 64) DECODE_WEIGHTED_SUM_AVX512(4, (__mmask16)0xFFFF);
  for (; i < n; i += 16) {
    const __mmask16 tail = n - i >= 16 ? (__mmask16)0xFFFF
                                       : (__mmask16)((1u << (n - i)) - 1);
    DECODE_WEIGHTED_SUM_AVX512(1, tail);
  }
}
#undef DECODE_WEIGHTED_SUM_AVX512

// Columns [0, 8 |w|) of |out| (|w| 1 or 2): each column's four partial
// sums in four registers.
__attribute__((target("avx2,fma"), always_inline)) static inline void
decode_weighted_sum8_avx2(const float* scores, float inverse,
                          const float* values, uint64_t stride,
                          uint64_t length, float* out, int w) {
  __m256 acc[4][2];
  for (int k = 0; k < 4; ++k) acc[k][0] = acc[k][1] = _mm256_setzero_ps();
  for (uint64_t t = 0; t < length; t += 4) {
    for (int k = 0; k < 4; ++k) {
      if (t + (uint64_t)k >= length) break;
      const __m256 p = _mm256_set1_ps(scores[t + k] * inverse);
      const float* v = values + (t + k) * stride;
      for (int c = 0; c < w; ++c) {
        acc[k][c] = _mm256_add_ps(acc[k][c],
                                  _mm256_mul_ps(p, _mm256_loadu_ps(v + 8 * c)));
      }
    }
  }
  for (int c = 0; c < w; ++c) {
    _mm256_storeu_ps(out + 8 * c,
                     _mm256_add_ps(_mm256_add_ps(acc[0][c], acc[1][c]),
                                   _mm256_add_ps(acc[2][c], acc[3][c])));
  }
}

__attribute__((target("avx2,fma"))) static void decode_weighted_sum_avx2(
    const float* scores, float inverse, const float* values, uint64_t stride,
    uint64_t length, uint32_t n, float* out) {
  uint32_t i = 0;
  for (; i + 16 <= n; i += 16) {
    decode_weighted_sum8_avx2(scores, inverse, values + i, stride, length,
                              out + i, 2);
  }
  for (; i + 8 <= n; i += 8) {
    decode_weighted_sum8_avx2(scores, inverse, values + i, stride, length,
                              out + i, 1);
  }
  if (i < n) {
    decode_weighted_sum_portable(scores, inverse, values + i, stride, length,
                                 n - i, out + i);
  }
}
#endif  // DECODE_X86

// Chosen with the dots (decode_dot_select).
static decode_weighted_sum_fn_t decode_weighted_sum =
    decode_weighted_sum_portable;

// ATTENTION's scores and softmax over |length| cached positions:
// scores[t] = (keys[t * stride] . q) * scale; then the softmax's
// numerators e^(scores[t] - max) (decode_exp_poly) in place, returning
// their sum: 16 running sums (row t into t % 16), reduced in the pairing
// _mm512_reduce_add_ps takes (i and i + 8, then i + 4, i + 2, i + 1).
// Each score is the f32 dot's (decode_dot_fns[0]) bits, and every
// version gives the same numerators and sum.
typedef void (*decode_scores_fn_t)(const float* q, const float* keys,
                                   uint64_t stride, uint32_t head_size,
                                   uint64_t length, float scale,
                                   float* scores);
typedef float (*decode_softmax_fn_t)(float* scores, uint64_t length);

static float decode_softmax_portable(float* scores, uint64_t length) {
  float max = -INFINITY;
  for (uint64_t t = 0; t < length; ++t) {
    if (scores[t] > max) max = scores[t];
  }
  float lanes[16] = {0};
  for (uint64_t t = 0; t < length; ++t) {
    scores[t] = decode_exp_poly(scores[t] - max);
    lanes[t % 16] += scores[t];
  }
  for (uint32_t half = 8; half > 0; half /= 2) {
    for (uint32_t i = 0; i < half; ++i) lanes[i] = lanes[i] + lanes[i + half];
  }
  return lanes[0];
}

#if defined(DECODE_X86)
__attribute__((target("avx512f"))) static float decode_softmax_avx512(
    float* scores, uint64_t length) {
  __m512 top = _mm512_set1_ps(-INFINITY);
  for (uint64_t t = 0; t < length; t += 16) {
    const __mmask16 m = length - t >= 16
                            ? (__mmask16)0xFFFF
                            : (__mmask16)((1u << (length - t)) - 1);
    top = _mm512_mask_max_ps(top, m, top, _mm512_maskz_loadu_ps(m, scores + t));
  }
  const __m512 max = _mm512_set1_ps(_mm512_reduce_max_ps(top));
  __m512 sum = _mm512_setzero_ps();
  for (uint64_t t = 0; t < length; t += 16) {
    const __mmask16 m = length - t >= 16
                            ? (__mmask16)0xFFFF
                            : (__mmask16)((1u << (length - t)) - 1);
    const __m512 e = decode_exp16_avx512(
        _mm512_sub_ps(_mm512_maskz_loadu_ps(m, scores + t), max));
    _mm512_mask_storeu_ps(scores + t, m, e);
    sum = _mm512_add_ps(sum, _mm512_maskz_mov_ps(m, e));
  }
  return _mm512_reduce_add_ps(sum);
}

// Sixteen keys at a time: a chain of 16-element steps per key, as
// decode_dot_avx512, and the sixteen sums reduced together
// (decode_reduce16_avx512), so each score is the one-key dot's bits.
// head_size a multiple of 16 (else one key at a time).
__attribute__((target("avx512f"))) static void decode_scores_avx512(
    const float* q, const float* keys, uint64_t stride, uint32_t head_size,
    uint64_t length, float scale, float* scores) {
  uint64_t t = 0;
  if (head_size % 16 == 0) {
    for (; t + 16 <= length; t += 16) {
      __m512 acc[16];
      for (int e = 0; e < 16; ++e) acc[e] = _mm512_setzero_ps();
      for (uint32_t i = 0; i < head_size; i += 16) {
        const __m512 qv = _mm512_loadu_ps(q + i);
        for (int e = 0; e < 16; ++e) {
          const int a = 4 * (e % 4) + e / 4;
          acc[a] = _mm512_fmadd_ps(
              _mm512_loadu_ps(keys + (t + (uint64_t)e) * stride + i), qv,
              acc[a]);
        }
      }
      const __m512 sums = decode_reduce16_avx512(acc);
      _mm512_storeu_ps(scores + t, _mm512_mul_ps(sums, _mm512_set1_ps(scale)));
    }
  }
  for (; t < length; ++t) {
    scores[t] = decode_dot_f32_avx512(keys + t * stride, q, head_size) * scale;
  }
}

// The sixteen running sums as two registers (rows t % 16 below 8 and from
// 8); the tail one by one into the same sums.
__attribute__((target("avx2,fma"))) static float decode_softmax_avx2(
    float* scores, uint64_t length) {
  __m256 top = _mm256_set1_ps(-INFINITY);
  uint64_t t = 0;
  for (; t + 8 <= length; t += 8) {
    top = _mm256_max_ps(top, _mm256_loadu_ps(scores + t));
  }
  float lanes[16];
  _mm256_storeu_ps(lanes, top);
  float max = -INFINITY;
  for (int j = 0; j < 8; ++j) max = lanes[j] > max ? lanes[j] : max;
  for (; t < length; ++t) max = scores[t] > max ? scores[t] : max;
  const __m256 m = _mm256_set1_ps(max);
  __m256 low = _mm256_setzero_ps(), high = _mm256_setzero_ps();
  for (t = 0; t + 16 <= length; t += 16) {
    const __m256 e0 =
        decode_exp8_avx2(_mm256_sub_ps(_mm256_loadu_ps(scores + t), m));
    const __m256 e1 =
        decode_exp8_avx2(_mm256_sub_ps(_mm256_loadu_ps(scores + t + 8), m));
    _mm256_storeu_ps(scores + t, e0);
    _mm256_storeu_ps(scores + t + 8, e1);
    low = _mm256_add_ps(low, e0);
    high = _mm256_add_ps(high, e1);
  }
  _mm256_storeu_ps(lanes, low);
  _mm256_storeu_ps(lanes + 8, high);
  for (; t < length; ++t) {
    scores[t] = decode_exp_poly(scores[t] - max);
    lanes[t % 16] += scores[t];
  }
  for (uint32_t half = 8; half > 0; half /= 2) {
    for (uint32_t i = 0; i < half; ++i) lanes[i] = lanes[i] + lanes[i + half];
  }
  return lanes[0];
}

// Four keys at a time, each in decode_dot_f32_avx2's two chains and
// reduction, so each score is the one-key dot's bits; head_size a
// multiple of 16 (else one key at a time).
__attribute__((target("avx2,fma"))) static void decode_scores_avx2(
    const float* q, const float* keys, uint64_t stride, uint32_t head_size,
    uint64_t length, float scale, float* scores) {
  uint64_t t = 0;
  if (head_size % 16 == 0) {
    for (; t + 4 <= length; t += 4) {
      __m256 a0[4], a1[4];
      for (int e = 0; e < 4; ++e) a0[e] = a1[e] = _mm256_setzero_ps();
      for (uint32_t i = 0; i < head_size; i += 16) {
        const __m256 q0 = _mm256_loadu_ps(q + i);
        const __m256 q1 = _mm256_loadu_ps(q + i + 8);
        for (int e = 0; e < 4; ++e) {
          const float* k = keys + (t + (uint64_t)e) * stride + i;
          a0[e] = _mm256_fmadd_ps(_mm256_loadu_ps(k), q0, a0[e]);
          a1[e] = _mm256_fmadd_ps(_mm256_loadu_ps(k + 8), q1, a1[e]);
        }
      }
      for (int e = 0; e < 4; ++e) {
        scores[t + e] = decode_hsum256(_mm256_add_ps(a0[e], a1[e])) * scale;
      }
    }
  }
  for (; t < length; ++t) {
    scores[t] = decode_dot_f32_avx2(keys + t * stride, q, head_size) * scale;
  }
}
#endif  // DECODE_X86

// The chosen versions ([0] f32, [1] f16), set once by decode_dot_select.
static decode_dot_fn_t decode_dot_fns[2] = {decode_dot_f32_portable,
                                            decode_dot_f16_portable};

static void decode_scores_portable(const float* q, const float* keys,
                                   uint64_t stride, uint32_t head_size,
                                   uint64_t length, float scale,
                                   float* scores) {
  for (uint64_t t = 0; t < length; ++t) {
    scores[t] = decode_dot_fns[0](keys + t * stride, q, head_size) * scale;
  }
}
static decode_scores_fn_t decode_scores = decode_scores_portable;
static decode_softmax_fn_t decode_softmax = decode_softmax_portable;
#if defined(DECODE_X86)
// Their four-column forms; NULL (the portable versions): column by column.
static decode_dot4_fn_t decode_dot4_fns[2] = {NULL, NULL};
// Up to |decode_dotrx4_rows| rows by four columns, out[4 r + c]: four
// rows on AVX-512, two on AVX2 (whose 16 registers hold 2 by 2 of its
// two-chain sums).
typedef void (*decode_dotrx4_fn_t)(const void* const* rows, uint32_t r_count,
                                   const float* const* x, uint32_t n,
                                   float* out);
static decode_dotrx4_fn_t decode_dotrx4_fns[2] = {NULL, NULL};
static uint32_t decode_dotrx4_rows = 0;

#endif

static void decode_dot_select(void) {
  // WEFT_DECODE_PORTABLE=1 keeps the portable versions (tests run both);
  // WEFT_DECODE_SIMD=avx2 keeps AVX2 on an AVX-512 CPU, so one machine
  // can check the sums in the order an AVX2-only one takes.
  const char* portable = getenv("WEFT_DECODE_PORTABLE");
  if (portable && portable[0] == '1') return;
  decode_simd_t simd = decode_simd_best();
  const char* cap = getenv("WEFT_DECODE_SIMD");
  if (cap && strcmp(cap, "avx2") == 0 && simd > DECODE_SIMD_AVX2) {
    simd = DECODE_SIMD_AVX2;
  }
  decode_quant_dot_select(simd);
  decode_x16_select(simd);
#if defined(DECODE_X86)
  if (simd == DECODE_SIMD_AVX512 && __builtin_cpu_supports("avx512f")) {
    decode_dot_fns[0] = decode_dot_f32_avx512;
    decode_dot_fns[1] = decode_dot_f16_avx512;
    decode_dot4_fns[0] = decode_dot4_f32_avx512;
    decode_dot4_fns[1] = decode_dot4_f16_avx512;
    decode_dotrx4_fns[0] = decode_dotrx4_f32_avx512;
    decode_dotrx4_fns[1] = decode_dotrx4_f16_avx512;
    decode_dotrx4_rows = 4;
    decode_weighted_sum = decode_weighted_sum_avx512;
    decode_swiglu_n = decode_swiglu_avx512;
    decode_scores = decode_scores_avx512;
    decode_softmax = decode_softmax_avx512;
  } else if (simd >= DECODE_SIMD_AVX2) {
    decode_dot_fns[0] = decode_dot_f32_avx2;
    decode_dot4_fns[0] = decode_dot4_f32_avx2;
    decode_dot4_fns[1] = decode_dot4_f16_avx2;
    decode_dot_fns[1] = decode_dot_f16_avx2;
    decode_dotrx4_fns[0] = decode_dotrx4_f32_avx2;
    decode_dotrx4_fns[1] = decode_dotrx4_f16_avx2;
    decode_dotrx4_rows = 2;
    decode_weighted_sum = decode_weighted_sum_avx2;
    decode_swiglu_n = decode_swiglu_avx2;
    decode_scores = decode_scores_avx2;
    decode_softmax = decode_softmax_avx2;
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

// The input of a matrix-vector product: |n| floats, and the same quantized
// in the forms its matrices read (Q8_K blocks, then Q8_0 blocks, as
// BATCH_RMSNORM and BATCH_QUANTIZE write them).
typedef struct decode_activation_t {
  const float* x;
  uint32_t n;
  const decode_block_q8_k_t* q8_k;
  const decode_block_q8_0_t* q8_0;
} decode_activation_t;

// |x| of |n| elements with its quantized forms at |xq|.
static inline decode_activation_t decode_activation(const float* x, uint32_t n,
                                                    const void* xq) {
  const decode_block_q8_k_t* q8_k = (const decode_block_q8_k_t*)xq;
  return (decode_activation_t){x, n, q8_k,
                               (const decode_block_q8_0_t*)(q8_k +
                                                            n / DECODE_QK_K)};
}

// The form of the activation |dtype|'s rows are dotted with: the floats
// for the interleaved float forms, else the quantized blocks the type
// pairs with.
static inline const void* decode_activation_for(
    const decode_activation_t* activation, uint32_t dtype) {
  if (decode_dtype_is_x16(dtype)) return activation->x;
  return decode_quant_uses_q8_k((decode_dtype_t)dtype)
             ? (const void*)activation->q8_k
             : (const void*)activation->q8_0;
}

// Rows a group of |dtype|'s interleaved form holds (decode_quant_x8.h,
// decode_float_x16.h); 0 for the forms read row by row.
static inline uint32_t decode_group_rows(uint32_t dtype) {
  return decode_dtype_is_x16(dtype)  ? DECODE_X16_ROWS
         : decode_dtype_is_x8(dtype) ? DECODE_X8_ROWS
                                     : 0u;
}

_Static_assert(DECODE_X8_COLUMNS == DECODE_X16_COLUMNS,
               "one column count for every interleaved form's product");

// An interleaved form's product (decode_group_rows(dtype) != 0): rows
// |first| .. |first| + |count| (whole groups) of |w| with |columns|
// activations, each decode_activation_for |dtype|.
static inline void decode_group_dot(uint32_t dtype, const void* w,
                                    uint32_t cols, uint32_t first,
                                    uint32_t count,
                                    const void* const* activations,
                                    uint32_t columns, float* out,
                                    uint32_t out_stride) {
  if (decode_dtype_is_x16(dtype)) {
    const float* x[DECODE_X16_COLUMNS];
    for (uint32_t c = 0; c < columns; ++c) x[c] = (const float*)activations[c];
    decode_x16_dot(dtype, w, cols, first, count, x, columns, out, out_stride);
    return;
  }
  decode_x8_dot(dtype, w, cols, first, count, activations, columns, out,
                out_stride);
}

// True when rows of |cols| elements of |dtype| are whole blocks of a type
// the kernels take.
static inline bool decode_rows_fit(uint32_t dtype, uint32_t cols) {
  const uint32_t block = decode_dtype_block_elements(dtype);
  return block != 0 && cols % block == 0;
}

// Bytes of a [rows][cols] matrix of |dtype| (whose rows fit).
static inline uint64_t decode_matrix_bytes(uint32_t dtype, uint64_t rows,
                                           uint32_t cols) {
  return rows * decode_dtype_bytes((decode_dtype_t)dtype, cols);
}

// Row |row| of the [rows][cols] matrix |w| (of |dtype|) dotted with the
// activation.
static inline float decode_row_dot(const void* w, uint32_t dtype,
                                   uint64_t row, uint32_t cols,
                                   const decode_activation_t* activation) {
  const uint8_t* weights = (const uint8_t*)w + decode_matrix_bytes(dtype, row,
                                                                   cols);
  const uint32_t group_rows = decode_group_rows(dtype);
  if (group_rows) {
    // The row's group, whole (the same bits as in any range).
    const uint64_t group = row / group_rows * group_rows;
    float values[DECODE_X16_ROWS];
    const void* column = decode_activation_for(activation, dtype);
    decode_group_dot(dtype, w, cols, (uint32_t)group, group_rows, &column, 1,
                     values, group_rows);
    return values[row - group];
  }
  if (dtype == DECODE_DTYPE_F32 || dtype == DECODE_DTYPE_F16) {
    return decode_dot_fns[dtype](weights, activation->x, cols);
  }
  return decode_quant_dot((decode_dtype_t)dtype, weights,
                          decode_activation_for(activation, dtype), cols);
}

// Rows |first| .. |first| + |count| of |w| (as decode_row_dot) into
// |out|[0 .. |count|): an interleaved form a run of whole groups of eight
// at a time, the rest (and every other type) row by row.
static inline void decode_rows_dot(const void* w, uint32_t dtype,
                                   uint32_t first, uint32_t count,
                                   uint32_t cols,
                                   const decode_activation_t* activation,
                                   float* out) {
  uint32_t r = first;
  const uint32_t end = first + count;
  const uint32_t group_rows = decode_group_rows(dtype);
  while (r < end) {
    if (group_rows && r % group_rows == 0 && end - r >= group_rows) {
      const uint32_t n = (end - r) / group_rows * group_rows;
      const void* column = decode_activation_for(activation, dtype);
      decode_group_dot(dtype, w, cols, r, n, &column, 1, out + (r - first), n);
      r += n;
      continue;
    }
    out[r - first] = decode_row_dot(w, dtype, r, cols, activation);
    ++r;
  }
}

// The dtype of matrix |i| of a kernel's packed dtype constant (one byte
// each: qkv's wq, wk, wv; ffn's w1, w3).
static inline uint32_t decode_packed_dtype(uint32_t packed, uint32_t i) {
  return (packed >> (8 * i)) & 0xFFu;
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
  // 16 partial sums, as the portable dot products keep, so the compiler
  // vectorises the sum of squares: one running sum is a chain of
  // dependent adds, a microsecond at the 110M width, which every
  // workgroup of qkv, ffn and the classifier pays.
  float sums[16] = {0};
  uint32_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (uint32_t j = 0; j < 16; ++j) sums[j] += x[i + j] * x[i + j];
  }
  float sum = 0.0f;
  for (uint32_t j = 0; j < 16; ++j) sum += sums[j];
  for (; i < n; ++i) sum += x[i] * x[i];
  const float scale = 1.0f / sqrtf(sum / (float)n + eps);
  for (i = 0; i < n; ++i) out[i] = x[i] * scale * weight[i];
}

// One query head |q| attending over the first |length| rows of |keys| and
// |values| ([length][kv_dim], kv head |kv_h|): softmax of q . k_t /
// sqrt(head_size), then |out| = sum p_t v_t. |scores| holds |length|
// floats. The token's and the batch's attention both call it, so a
// position attends the same way in either.
static void decode_attend(const float* q, const float* keys,
                          const float* values, uint32_t kv_dim, uint32_t kv_h,
                          uint32_t head_size, uint64_t length, float* scores,
                          float* out) {
  const float scale = 1.0f / sqrtf((float)head_size);
  decode_scores(q, keys + kv_h * head_size, kv_dim, head_size, length, scale,
                scores);
  const float total = decode_softmax(scores, length);
  const float inverse = 1.0f / total;
  decode_weighted_sum(scores, inverse, values + kv_h * head_size, kv_dim,
                      length, head_size, out);
}

// Rotates the (2i, 2i+1) pairs of |out| in [|begin|, |end|) by the angle of
// pair i of their head: |rope| holds each pair's cosine and sine.
static inline void decode_rope_rotate(float* out, uint32_t begin, uint32_t end,
                                      const float* rope, uint32_t head_size) {
  for (uint32_t r = begin; r + 1 < end; r += 2) {
    const uint32_t pair = (r % head_size) / 2;
    const float c = rope[2 * pair];
    const float s = rope[2 * pair + 1];
    const float v0 = out[r];
    const float v1 = out[r + 1];
    out[r] = v0 * c - v1 * s;
    out[r + 1] = v0 * s + v1 * c;
  }
}

// Dequantizes row |token| of the |vocab| by |dim| embedding table |table| of
// |dtype| into |out|; returns 2 when the token is past the table, else 0.
static int decode_embed_row(const void* table, uint32_t dtype, uint32_t dim,
                            uint32_t vocab, uint32_t token, float* out) {
  // A table is read a row at a time: never interleaved (decode_model_load).
  if (decode_group_rows(dtype)) return 1;
  if (token >= vocab) return 2;
  decode_quant_dequantize(
      (decode_dtype_t)dtype,
      (const uint8_t*)table + decode_matrix_bytes(dtype, token, dim), dim,
      out);
  return 0;
}


// Attention of query head |h| (the head_size floats at |q| + h * head_size)
// over the first |length| cached positions, written at |out| + h * head_size;
// the head reads the cache's kv head that its group of query heads shares.
static inline void decode_attend_head(const float* q, const float* keys,
                                      const float* values, uint32_t n_heads,
                                      uint32_t n_kv_heads, uint32_t head_size,
                                      uint32_t h, uint64_t length,
                                      float* scores, float* out) {
  decode_attend(q + h * head_size, keys, values, n_kv_heads * head_size,
                h / (n_heads / n_kv_heads), head_size, length, scores,
                out + h * head_size);
}

#if defined(DECODE_X86)
// decode_attend4_avx512's weighted sums: for each 16-column slice, each
// of |nq| queries' four partial sums (row t into t % 4) of p[j][t] times
// value row t, as decode_weighted_sum_avx512 keeps them; |p| the
// numerators already times their inverse.
__attribute__((target("avx512f"), always_inline)) static inline void
decode_attend4_sums_avx512(const float* values, uint64_t stride,
                           uint32_t head_size, const uint64_t* length,
                           float* const* p, float* const* out,
                           const uint32_t nq) {
  const uint64_t longest = length[nq - 1];
  const uint64_t whole = length[0] / 4 * 4;
  for (uint32_t i = 0; i < head_size; i += 16) {
    __m512 acc[4][4];
    for (uint32_t j = 0; j < nq; ++j) {
      for (int k = 0; k < 4; ++k) acc[j][k] = _mm512_setzero_ps();
    }
    for (uint64_t r = 0; r < whole; r += 4) {
      for (int k = 0; k < 4; ++k) {
        const __m512 v = _mm512_loadu_ps(values + (r + k) * stride + i);
        for (uint32_t j = 0; j < nq; ++j) {
          acc[j][k] = _mm512_add_ps(
              acc[j][k], _mm512_mul_ps(_mm512_set1_ps(p[j][r + k]), v));
        }
      }
    }
    // The rest (up to 3 + 3 rows): row whole + m into partial m % 4.
    for (int m = 0; m < 7; ++m) {
      const uint64_t r = whole + (uint64_t)m;
      if (r >= longest) break;
      const __m512 v = _mm512_loadu_ps(values + r * stride + i);
      for (uint32_t j = 0; j < nq; ++j) {
        if (r >= length[j]) continue;
        acc[j][m % 4] = _mm512_add_ps(
            acc[j][m % 4], _mm512_mul_ps(_mm512_set1_ps(p[j][r]), v));
      }
    }
    for (uint32_t j = 0; j < nq; ++j) {
      _mm512_storeu_ps(out[j] + i,
                       _mm512_add_ps(_mm512_add_ps(acc[j][0], acc[j][1]),
                                     _mm512_add_ps(acc[j][2], acc[j][3])));
    }
  }
}

// Four queries of one head at once (a batch's consecutive positions,
// |length[q]| = length[0] + q keys each): each key row and value row is
// loaded once for the four, where one query at a time reads the head's
// cache from L2 four times. Every score, numerator, sum and output is
// decode_attend's bits for that query alone: the scores go four keys by
// four queries, sixteen sums reduced together (decode_reduce16_avx512,
// each the one-key dot's); the softmax is decode_softmax per query; the
// weighted sum keeps, per 16-column slice, each query's four partial sums
// (row t into t % 4) as decode_weighted_sum_avx512 does. |scores[q]| has
// room for length[nq - 1] floats. head_size a multiple of 16.
__attribute__((target("avx512f"))) static void decode_attend4_avx512(
    const float* const* q, uint32_t nq, const float* keys,
    const float* values, uint64_t stride, uint32_t head_size,
    const uint64_t* length, float* const* scores, float* const* out) {
  const float scale = 1.0f / sqrtf((float)head_size);
  const uint64_t longest = length[nq - 1];
  // Missing queries repeat the last (their sums are not stored).
  const float* qs[4];
  for (uint32_t i = 0; i < 4; ++i) qs[i] = q[i < nq ? i : nq - 1];
  uint64_t t = 0;
  for (; t + 4 <= longest; t += 4) {
    __m512 acc[16];
    for (int e = 0; e < 16; ++e) acc[e] = _mm512_setzero_ps();
    for (uint32_t i = 0; i < head_size; i += 16) {
      __m512 qv[4];
      for (int j = 0; j < 4; ++j) qv[j] = _mm512_loadu_ps(qs[j] + i);
      for (int k = 0; k < 4; ++k) {
        const __m512 kv =
            _mm512_loadu_ps(keys + (t + (uint64_t)k) * stride + i);
        // Query j, key k: lane 4j + k of the reduction.
        for (int j = 0; j < 4; ++j) {
          acc[4 * k + j] = _mm512_fmadd_ps(kv, qv[j], acc[4 * k + j]);
        }
      }
    }
    float sums[16];
    _mm512_storeu_ps(sums, _mm512_mul_ps(decode_reduce16_avx512(acc),
                                         _mm512_set1_ps(scale)));
    for (uint32_t j = 0; j < nq; ++j) memcpy(scores[j] + t, sums + 4 * j, 16);
  }
  for (; t < longest; ++t) {
    for (uint32_t j = 0; j < nq; ++j) {
      scores[j][t] =
          decode_dot_f32_avx512(keys + t * stride, q[j], head_size) * scale;
    }
  }
  for (uint32_t j = 0; j < nq; ++j) {
    // Each numerator times its query's inverse once: the product
    // decode_weighted_sum takes (the same float), here for every slice.
    const float inverse = 1.0f / decode_softmax_avx512(scores[j], length[j]);
    const __m512 by = _mm512_set1_ps(inverse);
    for (uint64_t e = 0; e < length[j]; e += 16) {
      const __mmask16 m = length[j] - e >= 16
                              ? (__mmask16)0xFFFF
                              : (__mmask16)((1u << (length[j] - e)) - 1);
      _mm512_mask_storeu_ps(
          scores[j] + e, m,
          _mm512_mul_ps(_mm512_maskz_loadu_ps(m, scores[j] + e), by));
    }
  }
  // Four queries (the common case) with the query loops unrolled.
  if (nq == 4) {
    decode_attend4_sums_avx512(values, stride, head_size, length, scores, out,
                               4);
  } else {
    decode_attend4_sums_avx512(values, stride, head_size, length, scores, out,
                               nq);
  }
}
#endif  // DECODE_X86

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

static int decode_embed(const weft_dispatch_state_t* dispatch,
                        const weft_workgroup_state_t* workgroup) {
  (void)workgroup;
  const uint32_t dim = dispatch->constants[0];
  const uint32_t vocab = dispatch->constants[1];
  const uint32_t dtype = dispatch->constants[2];
  if (!decode_rows_fit(dtype, dim) ||
      !decode_has(dispatch, 0, decode_matrix_bytes(dtype, vocab, dim)) ||
      !decode_has(dispatch, 1, 4) || !decode_has(dispatch, 2, dim * 4ull)) {
    return 1;
  }
  return decode_embed_row(dispatch->binding_ptrs[0], dtype, dim, vocab,
                          *(const uint32_t*)dispatch->binding_ptrs[1],
                          (float*)dispatch->binding_ptrs[2]);
}

static int decode_qkv(const weft_dispatch_state_t* dispatch,
                      const weft_workgroup_state_t* workgroup) {
  const uint32_t dim = dispatch->constants[0];
  const uint32_t kv_dim = dispatch->constants[1];
  const uint32_t head_size = dispatch->constants[2];
  const uint32_t dtypes = dispatch->constants[3];
  const uint32_t wq = decode_packed_dtype(dtypes, 0);
  const uint32_t wk = decode_packed_dtype(dtypes, 1);
  const uint32_t wv = decode_packed_dtype(dtypes, 2);
  if (!decode_rows_fit(wq, dim) || !decode_rows_fit(wk, dim) ||
      !decode_rows_fit(wv, dim) || !decode_has(dispatch, 0, dim * 4ull) ||
      !decode_has(dispatch, 1, DECODE_BATCH_QUANT_STRIDE(dim)) ||
      !decode_has(dispatch, 2, decode_matrix_bytes(wq, dim, dim)) ||
      !decode_has(dispatch, 3, decode_matrix_bytes(wk, kv_dim, dim)) ||
      !decode_has(dispatch, 4, decode_matrix_bytes(wv, kv_dim, dim)) ||
      !decode_has(dispatch, 5, dim * 4ull) ||
      !decode_has(dispatch, 6, kv_dim * 4ull) ||
      !decode_has(dispatch, 7, kv_dim * 4ull) ||
      !decode_has(dispatch, 8, head_size * 4ull)) {
    return 1;
  }
  const decode_activation_t activation =
      decode_activation((const float*)dispatch->binding_ptrs[0], dim,
                        dispatch->binding_ptrs[1]);
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
  const uint32_t dtype = decode_packed_dtype(dtypes, section);
  float* out = (float*)dispatch->binding_ptrs[5 + section];
  const uint32_t limit = section == 0 ? dim : kv_dim;
  if (row0 + ROWS > limit) return 1;
  decode_rows_dot(w, dtype, row0, ROWS, dim, &activation, out + row0);
  if (section < 2) {
    decode_rope_rotate(out, row0, row0 + ROWS,
                       (const float*)dispatch->binding_ptrs[8], head_size);
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
  decode_attend_head((const float*)dispatch->binding_ptrs[0],
                     (const float*)dispatch->binding_ptrs[1],
                     (const float*)dispatch->binding_ptrs[2], n_heads,
                     n_kv_heads, head_size, h, length,
                     (float*)workgroup->local_memory,
                     (float*)dispatch->binding_ptrs[3]);
  return 0;
}

static int decode_matvec_add(const weft_dispatch_state_t* dispatch,
                             const weft_workgroup_state_t* workgroup) {
  const uint32_t rows = dispatch->constants[0];
  const uint32_t cols = dispatch->constants[1];
  const uint32_t dtype = dispatch->constants[2];
  if (!decode_rows_fit(dtype, cols) || !decode_has(dispatch, 0, cols * 4ull) ||
      !decode_has(dispatch, 1, DECODE_BATCH_QUANT_STRIDE(cols)) ||
      !decode_has(dispatch, 2, decode_matrix_bytes(dtype, rows, cols)) ||
      !decode_has(dispatch, 3, rows * 4ull)) {
    return 1;
  }
  const decode_activation_t activation =
      decode_activation((const float*)dispatch->binding_ptrs[0], cols,
                        dispatch->binding_ptrs[1]);
  const void* w = dispatch->binding_ptrs[2];
  float* out = (float*)dispatch->binding_ptrs[3];
  const uint32_t first = workgroup->workgroup_id[0] * ROWS;
  if (first + ROWS > rows) return 1;
  float values[ROWS];
  decode_rows_dot(w, dtype, first, ROWS, cols, &activation, values);
  for (uint32_t i = 0; i < ROWS; ++i) out[first + i] += values[i];
  return 0;
}

static int decode_ffn(const weft_dispatch_state_t* dispatch,
                      const weft_workgroup_state_t* workgroup) {
  const uint32_t dim = dispatch->constants[0];
  const uint32_t hidden = dispatch->constants[1];
  const uint32_t dtypes = dispatch->constants[2];
  const uint32_t w1_dtype = decode_packed_dtype(dtypes, 0);
  const uint32_t w3_dtype = decode_packed_dtype(dtypes, 1);
  if (!decode_rows_fit(w1_dtype, dim) || !decode_rows_fit(w3_dtype, dim) ||
      !decode_has(dispatch, 0, dim * 4ull) ||
      !decode_has(dispatch, 1, DECODE_BATCH_QUANT_STRIDE(dim)) ||
      !decode_has(dispatch, 2, decode_matrix_bytes(w1_dtype, hidden, dim)) ||
      !decode_has(dispatch, 3, decode_matrix_bytes(w3_dtype, hidden, dim)) ||
      !decode_has(dispatch, 4, hidden * 4ull)) {
    return 1;
  }
  const decode_activation_t activation =
      decode_activation((const float*)dispatch->binding_ptrs[0], dim,
                        dispatch->binding_ptrs[1]);
  const void* w1 = dispatch->binding_ptrs[2];
  const void* w3 = dispatch->binding_ptrs[3];
  float* h = (float*)dispatch->binding_ptrs[4];
  const uint32_t first = workgroup->workgroup_id[0] * ROWS;
  if (first + ROWS > hidden) return 1;
  float gate[ROWS], up[ROWS];
  decode_rows_dot(w1, w1_dtype, first, ROWS, dim, &activation, gate);
  decode_rows_dot(w3, w3_dtype, first, ROWS, dim, &activation, up);
  decode_swiglu_n(gate, up, ROWS, h + first);
  return 0;
}

static int decode_classifier(const weft_dispatch_state_t* dispatch,
                             const weft_workgroup_state_t* workgroup) {
  const uint32_t dim = dispatch->constants[0];
  const uint32_t vocab = dispatch->constants[1];
  const uint32_t dtype = dispatch->constants[2];
  if (!decode_rows_fit(dtype, dim) || !decode_has(dispatch, 0, dim * 4ull) ||
      !decode_has(dispatch, 1, DECODE_BATCH_QUANT_STRIDE(dim)) ||
      !decode_has(dispatch, 2, decode_matrix_bytes(dtype, vocab, dim)) ||
      !decode_has(dispatch, 3, vocab * 4ull)) {
    return 1;
  }
  const decode_activation_t activation =
      decode_activation((const float*)dispatch->binding_ptrs[0], dim,
                        dispatch->binding_ptrs[1]);
  const void* w = dispatch->binding_ptrs[2];
  float* logits = (float*)dispatch->binding_ptrs[3];
  const uint32_t first = workgroup->workgroup_id[0] * DECODE_CLASSIFIER_ROWS;
  uint32_t last = first + DECODE_CLASSIFIER_ROWS;
  if (last > vocab) last = vocab;
  if (first < last) {
    decode_rows_dot(w, dtype, first, last - first, dim, &activation,
                    logits + first);
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
// Batch kernels: the prompt's positions together
//===----------------------------------------------------------------------===//

// Every batch kernel's binding 0 is the batch's tokens: its length is 4 B
// for B positions; workgroups past the batch return at once, so one
// recording serves any B up to the batch the dispatch was sized for.
static inline uint32_t decode_batch_size(const weft_dispatch_state_t* dispatch) {
  return (uint32_t)(dispatch->binding_lengths[0] / 4);
}

// Quantizes the |n| activations |x| into |out| in the forms |forms| asks
// for (DECODE_BATCH_FORM_*): Q8_K blocks first, then Q8_0, where
// decode_activation expects them.
static void decode_batch_quantize(const float* x, uint32_t n, uint32_t forms,
                                  uint8_t* out) {
  if ((forms & DECODE_BATCH_FORM_Q8_K) && n % DECODE_QK_K == 0) {
    decode_quant_activations(DECODE_DTYPE_Q4_K, x, n, out);
  }
  if ((forms & DECODE_BATCH_FORM_Q8_0) && n % DECODE_QK8_0 == 0) {
    decode_quant_activations(DECODE_DTYPE_Q8_0, x, n,
                             out + n / DECODE_QK_K * sizeof(decode_block_q8_k_t));
  }
}

static int decode_batch_embed(const weft_dispatch_state_t* dispatch,
                              const weft_workgroup_state_t* workgroup) {
  const uint32_t dim = dispatch->constants[0];
  const uint32_t vocab = dispatch->constants[1];
  const uint32_t dtype = dispatch->constants[2];
  const uint32_t batch = decode_batch_size(dispatch);
  const uint32_t b = workgroup->workgroup_id[0];
  if (b >= batch) return 0;
  if (!decode_rows_fit(dtype, dim) ||
      !decode_has(dispatch, 1, decode_matrix_bytes(dtype, vocab, dim)) ||
      !decode_has(dispatch, 2, (uint64_t)batch * dim * 4)) {
    return 1;
  }
  return decode_embed_row(dispatch->binding_ptrs[1], dtype, dim, vocab,
                          ((const uint32_t*)dispatch->binding_ptrs[0])[b],
                          (float*)dispatch->binding_ptrs[2] + (uint64_t)b * dim);
}

static int decode_batch_rmsnorm(const weft_dispatch_state_t* dispatch,
                                const weft_workgroup_state_t* workgroup) {
  const uint32_t dim = dispatch->constants[0];
  const float eps = decode_bits_to_float(dispatch->constants[1]);
  const uint32_t forms = dispatch->constants[2];
  const uint32_t batch = decode_batch_size(dispatch);
  const uint32_t b = workgroup->workgroup_id[0];
  if (b >= batch) return 0;
  const uint64_t stride = DECODE_BATCH_QUANT_STRIDE(dim);
  if (!decode_has(dispatch, 1, (uint64_t)batch * dim * 4) ||
      !decode_has(dispatch, 2, dim * 4ull) ||
      !decode_has(dispatch, 3, (uint64_t)batch * dim * 4) ||
      !decode_has(dispatch, 4, batch * stride)) {
    return 1;
  }
  float* xn = (float*)dispatch->binding_ptrs[3] + (uint64_t)b * dim;
  decode_rmsnorm((const float*)dispatch->binding_ptrs[1] + (uint64_t)b * dim,
                 (const float*)dispatch->binding_ptrs[2], dim, eps, xn);
  decode_batch_quantize(xn, dim, forms,
                        (uint8_t*)dispatch->binding_ptrs[4] + b * stride);
  return 0;
}

static int decode_batch_quantize_kernel(
    const weft_dispatch_state_t* dispatch,
    const weft_workgroup_state_t* workgroup) {
  const uint32_t n = dispatch->constants[0];
  const uint32_t forms = dispatch->constants[1];
  const uint32_t batch = decode_batch_size(dispatch);
  const uint32_t b = workgroup->workgroup_id[0];
  if (b >= batch) return 0;
  const uint64_t stride = DECODE_BATCH_QUANT_STRIDE(n);
  if (!decode_has(dispatch, 1, (uint64_t)batch * n * 4) ||
      !decode_has(dispatch, 2, batch * stride)) {
    return 1;
  }
  decode_batch_quantize((const float*)dispatch->binding_ptrs[1] +
                            (uint64_t)b * n,
                        n, forms,
                        (uint8_t*)dispatch->binding_ptrs[2] + b * stride);
  return 0;
}

// Writes |value| to output row |r| of position |b| as GEMM's STORE or ADD
// mode does.
static inline void decode_gemm_write(float* out, uint32_t rows, uint32_t r,
                                     uint32_t b, uint32_t mode, float value) {
  float* o = out + (uint64_t)b * rows + r;
  if (mode == DECODE_GEMM_STORE) {
    *o = value;
  } else {
    *o += value;
  }
}

// True when rows of |dtype| have a four-column product here.
static bool decode_has_dot4(uint32_t dtype) {
#if defined(DECODE_X86)
  if (dtype == DECODE_DTYPE_F32 || dtype == DECODE_DTYPE_F16) {
    return decode_dot4_fns[dtype] != NULL;
  }
#else
  if (dtype == DECODE_DTYPE_F32 || dtype == DECODE_DTYPE_F16) return false;
#endif
  return decode_quant_dot4((decode_dtype_t)dtype) != NULL;
}

// |row| of |dtype| with the four |columns| (decode_has_dot4(dtype)).
static inline void decode_row_dot4(const void* row, uint32_t dtype,
                                   uint32_t cols,
                                   const decode_activation_t* columns,
                                   float* out) {
#if defined(DECODE_X86)
  if (dtype == DECODE_DTYPE_F32 || dtype == DECODE_DTYPE_F16) {
    const float* xs[4] = {columns[0].x, columns[1].x, columns[2].x,
                          columns[3].x};
    decode_dot4_fns[dtype](row, xs, cols, out);
    return;
  }
#endif
  const bool q8_k = decode_quant_uses_q8_k((decode_dtype_t)dtype);
  const void* activations[4];
  for (int c = 0; c < 4; ++c) {
    activations[c] = q8_k ? (const void*)columns[c].q8_k
                          : (const void*)columns[c].q8_0;
  }
  decode_quant_dot4((decode_dtype_t)dtype)(row, activations, cols, out);
}

// GEMM's tile over its columns in fours through the four-column products
// (float rows in fours through the four-row ones where the CPU has them:
// SwiGLU's W1 and W3 rows of two outputs); returns the first column left
// to the one-column loop (|first_col| where the matrix's type has no
// four-column product here). |columns| are the tile's, from |first_col|,
// already quantized.
static uint32_t decode_gemm_tile4(const void* w, const void* w3,
                                  uint32_t dtype, uint32_t dtype3,
                                  uint32_t mode, uint32_t rows, uint32_t cols,
                                  const decode_activation_t* columns,
                                  uint32_t first_row, uint32_t last_row,
                                  uint32_t first_col, uint32_t last_col,
                                  float* out) {
  if (!decode_has_dot4(dtype) ||
      (mode == DECODE_GEMM_SWIGLU && !decode_has_dot4(dtype3))) {
    return first_col;
  }
  const uint64_t row_bytes = decode_dtype_bytes((decode_dtype_t)dtype, cols);
  const uint64_t row3_bytes =
      decode_dtype_bytes((decode_dtype_t)dtype3, cols);
#if defined(DECODE_X86)
  const decode_dotrx4_fn_t quad =
      dtype == DECODE_DTYPE_F32 || dtype == DECODE_DTYPE_F16
          ? decode_dotrx4_fns[dtype]
          : NULL;
  // The most rows a call of |quad| takes (SwiGLU: half of them W1's, half
  // W3's).
  const uint32_t quad_rows = decode_dotrx4_rows;
#else
  const void* quad = NULL;
#endif
  const bool rows_outer =
      dtype == DECODE_DTYPE_F32 && mode != DECODE_GEMM_SWIGLU;
  uint32_t b = first_col;
  for (; b + 4 <= last_col; b += 4) {
    const decode_activation_t* four = columns + (b - first_col);
    float values[16];
    uint32_t r = first_row;
    if (mode == DECODE_GEMM_SWIGLU) {
#if defined(DECODE_X86)
      const uint32_t outputs = quad_rows / 2;
      for (; quad && dtype3 == dtype && r + outputs <= last_row;
           r += outputs) {
        const uint8_t* row = (const uint8_t*)w + r * row_bytes;
        const uint8_t* row3 = (const uint8_t*)w3 + r * row3_bytes;
        const void* some_rows[4];
        for (uint32_t i = 0; i < outputs; ++i) {
          some_rows[i] = row + i * row_bytes;
          some_rows[outputs + i] = row3 + i * row3_bytes;
        }
        const float* xs[4] = {four[0].x, four[1].x, four[2].x, four[3].x};
        quad(some_rows, 2 * outputs, xs, cols, values);
        float h[8];
        decode_swiglu_n(values, values + 4 * outputs, 4 * outputs, h);
        for (uint32_t i = 0; i < outputs; ++i) {
          for (uint32_t c = 0; c < 4; ++c) {
            out[(uint64_t)(b + c) * rows + r + i] = h[4 * i + c];
          }
        }
      }
#endif
      for (; r < last_row; ++r) {
        decode_row_dot4((const uint8_t*)w + r * row_bytes, dtype, cols, four,
                        values);
        decode_row_dot4((const uint8_t*)w3 + r * row3_bytes, dtype3, cols,
                        four, values + 4);
        for (uint32_t c = 0; c < 4; ++c) {
          out[(uint64_t)(b + c) * rows + r] =
              decode_swiglu(values[c], values[4 + c]);
        }
      }
      continue;
    }
#if defined(DECODE_X86)
    // Rows by four columns: f32's for all the tile's columns below.
    if (quad && rows_outer) {
      r = first_row + (last_row - first_row) / quad_rows * quad_rows;
    }
    for (; quad && !rows_outer && r + quad_rows <= last_row; r += quad_rows) {
      const uint8_t* row = (const uint8_t*)w + r * row_bytes;
      const void* some_rows[4];
      for (uint32_t i = 0; i < quad_rows; ++i) {
        some_rows[i] = row + i * row_bytes;
      }
      const float* xs[4] = {four[0].x, four[1].x, four[2].x, four[3].x};
      quad(some_rows, quad_rows, xs, cols, values);
      for (uint32_t i = 0; i < quad_rows; ++i) {
        for (uint32_t c = 0; c < 4; ++c) {
          decode_gemm_write(out, rows, r + i, b + c, mode, values[4 * i + c]);
        }
      }
    }
#endif
    for (; r < last_row; ++r) {
      decode_row_dot4((const uint8_t*)w + r * row_bytes, dtype, cols, four,
                      values);
      for (uint32_t c = 0; c < 4; ++c) {
        decode_gemm_write(out, rows, r, b + c, mode, values[c]);
      }
    }
  }
#if defined(DECODE_X86)
  // f32: |quad_rows| rows at a time over every column group, so the rows
  // (in L1) serve each group while the columns stream from L2 (measured, one
  // core, a 16 by 32 tile of width 768: 184 GFLOP/s against 163 the other
  // way). A tile's 16 f16 rows and four columns fit L1 together, so f16
  // keeps the column groups outside.
  if (quad && rows_outer) {
    for (uint32_t r = first_row; r + quad_rows <= last_row; r += quad_rows) {
      const uint8_t* row = (const uint8_t*)w + r * row_bytes;
      const void* some_rows[4];
      for (uint32_t i = 0; i < quad_rows; ++i) {
        some_rows[i] = row + i * row_bytes;
      }
      for (uint32_t c0 = first_col; c0 + 4 <= b; c0 += 4) {
        const decode_activation_t* four = columns + (c0 - first_col);
        const float* xs[4] = {four[0].x, four[1].x, four[2].x, four[3].x};
        float values[16];
        quad(some_rows, quad_rows, xs, cols, values);
        for (uint32_t i = 0; i < quad_rows; ++i) {
          for (uint32_t c = 0; c < 4; ++c) {
            decode_gemm_write(out, rows, r + i, c0 + c, mode,
                              values[4 * i + c]);
          }
        }
      }
    }
  }
#endif
  (void)quad;
  (void)rows_outer;
  return b;
}

// GEMM's tile where W is interleaved (block types by eight, f32 and f16
// by sixteen): up to eight columns a call, every column through the same
// product the token's step takes (decode_rows_dot: the same bits for any
// column count). SWIGLU's W3 likewise, or column by column when it is of
// another form. 1 (a binding not as the constants say) where the tile is
// not whole groups.
static int decode_gemm_tile_grouped(const void* w, const void* w3, uint32_t dtype,
                               uint32_t dtype3, uint32_t mode, uint32_t rows,
                               uint32_t cols,
                               const decode_activation_t* columns,
                               uint32_t first_row, uint32_t last_row,
                               uint32_t first_col, uint32_t last_col,
                               float* out) {
  const uint32_t count = last_row - first_row;
  // Interleaved matrices have whole groups of rows (decode_model_load),
  // and tiles start at multiples of DECODE_GEMM_X8_TILE_ROWS: a tile is
  // whole groups.
  const uint32_t group_rows = decode_group_rows(dtype);
  if (first_row % group_rows != 0 || count % group_rows != 0) {
    return 1;
  }
  for (uint32_t b = first_col; b < last_col; b += DECODE_X8_COLUMNS) {
    const decode_activation_t* some = columns + (b - first_col);
    const uint32_t n =
        last_col - b < DECODE_X8_COLUMNS ? last_col - b : DECODE_X8_COLUMNS;
    float values[DECODE_X8_COLUMNS][DECODE_GEMM_X8_TILE_ROWS];
    float up[DECODE_X8_COLUMNS][DECODE_GEMM_X8_TILE_ROWS];
    const void* activations[DECODE_X8_COLUMNS];
    for (uint32_t c = 0; c < n; ++c) {
      activations[c] = decode_activation_for(&some[c], dtype);
    }
    decode_group_dot(dtype, w, cols, first_row, count, activations, n,
                     values[0], DECODE_GEMM_X8_TILE_ROWS);
    const uint32_t group3_rows = decode_group_rows(dtype3);
    if (mode == DECODE_GEMM_SWIGLU && group3_rows != 0 &&
        first_row % group3_rows == 0 && count % group3_rows == 0) {
      const void* activations3[DECODE_X8_COLUMNS];
      for (uint32_t c = 0; c < n; ++c) {
        activations3[c] = decode_activation_for(&some[c], dtype3);
      }
      decode_group_dot(dtype3, w3, cols, first_row, count, activations3, n,
                       up[0], DECODE_GEMM_X8_TILE_ROWS);
    } else if (mode == DECODE_GEMM_SWIGLU) {
      for (uint32_t c = 0; c < n; ++c) {
        decode_rows_dot(w3, dtype3, first_row, count, cols, &some[c], up[c]);
      }
    }
    for (uint32_t c = 0; c < n; ++c) {
      // Column b + c's rows lie together in |out|: whole runs (a plain
      // copy or a vector add; the same floats as one by one).
      float* o = out + (uint64_t)(b + c) * rows + first_row;
      if (mode == DECODE_GEMM_SWIGLU) {
        decode_swiglu_n(values[c], up[c], count, o);
      } else if (mode == DECODE_GEMM_STORE) {
        memcpy(o, values[c], count * sizeof(float));
      } else {
        for (uint32_t i = 0; i < count; ++i) o[i] += values[c][i];
      }
    }
  }
  return 0;
}

uint32_t decode_gemm_tile_rows(uint32_t dtype) {
  return decode_group_rows(dtype) ? DECODE_GEMM_X8_TILE_ROWS : ROWS;
}

static int decode_gemm(const weft_dispatch_state_t* dispatch,
                       const weft_workgroup_state_t* workgroup) {
  const uint32_t rows = dispatch->constants[0];
  const uint32_t cols = dispatch->constants[1];
  const uint32_t dtypes = dispatch->constants[2];
  const uint32_t mode = dispatch->constants[3];
  const uint32_t dtype = decode_packed_dtype(dtypes, 0);
  const uint32_t dtype3 = decode_packed_dtype(dtypes, 1);
  const uint32_t batch = decode_batch_size(dispatch);
  // Workgroup w is row tile w % row_tiles of column tile w / row_tiles.
  const uint32_t tile_rows = decode_gemm_tile_rows(dtype);
  const uint32_t row_tiles = (rows + tile_rows - 1) / tile_rows;
  if (row_tiles == 0) return 1;
  const uint32_t first_row =
      workgroup->workgroup_id[0] % row_tiles * tile_rows;
  const uint32_t first_col =
      workgroup->workgroup_id[0] / row_tiles * DECODE_GEMM_COLUMNS;
  if (first_col >= batch) return 0;
  const uint64_t stride = DECODE_BATCH_QUANT_STRIDE(cols);
  if (mode > DECODE_GEMM_SWIGLU || !decode_rows_fit(dtype, cols) ||
      (mode == DECODE_GEMM_SWIGLU && !decode_rows_fit(dtype3, cols)) ||
      !decode_has(dispatch, 1, (uint64_t)batch * cols * 4) ||
      !decode_has(dispatch, 2, batch * stride) ||
      !decode_has(dispatch, 3, decode_matrix_bytes(dtype, rows, cols)) ||
      (mode == DECODE_GEMM_SWIGLU &&
       !decode_has(dispatch, 4, decode_matrix_bytes(dtype3, rows, cols))) ||
      !decode_has(dispatch, 5, (uint64_t)batch * rows * 4)) {
    return 1;
  }
  const float* x = (const float*)dispatch->binding_ptrs[1];
  const uint8_t* xq = (const uint8_t*)dispatch->binding_ptrs[2];
  const void* w = dispatch->binding_ptrs[3];
  const void* w3 = dispatch->binding_ptrs[4];
  float* out = (float*)dispatch->binding_ptrs[5];
  uint32_t last_row = first_row + tile_rows;
  if (last_row > rows) last_row = rows;
  uint32_t last_col = first_col + DECODE_GEMM_COLUMNS;
  if (last_col > batch) last_col = batch;
  // The tile's columns, already quantized (decode_batch_quantize).
  decode_activation_t columns[DECODE_GEMM_COLUMNS];
  for (uint32_t b = first_col; b < last_col; ++b) {
    columns[b - first_col] =
        decode_activation(x + (uint64_t)b * cols, cols, xq + b * stride);
  }
  if (decode_group_rows(dtype)) {
    return decode_gemm_tile_grouped(w, w3, dtype, dtype3, mode, rows, cols, columns,
                               first_row, last_row, first_col, last_col, out);
  }
  // Each weight row (in cache after the first column) meets every column
  // of the tile: four columns at a time where the type has a four-column
  // product here, the rest one by one.
  const uint32_t tile4_end =
      decode_gemm_tile4(w, w3, dtype, dtype3, mode, rows, cols, columns,
                        first_row, last_row, first_col, last_col, out);
  for (uint32_t r = first_row; r < last_row; ++r) {
    for (uint32_t b = tile4_end; b < last_col; ++b) {
      const decode_activation_t* column = &columns[b - first_col];
      float* o = out + (uint64_t)b * rows + r;
      const float value = decode_row_dot(w, dtype, r, cols, column);
      if (mode == DECODE_GEMM_STORE) {
        *o = value;
      } else if (mode == DECODE_GEMM_ADD) {
        *o += value;
      } else {
        const float up = decode_row_dot(w3, dtype3, r, cols, column);
        *o = decode_swiglu(value, up);
      }
    }
  }
  return 0;
}

static int decode_batch_rope(const weft_dispatch_state_t* dispatch,
                             const weft_workgroup_state_t* workgroup) {
  const uint32_t dim = dispatch->constants[0];
  const uint32_t kv_dim = dispatch->constants[1];
  const uint32_t head_size = dispatch->constants[2];
  const uint32_t batch = decode_batch_size(dispatch);
  const uint32_t b = workgroup->workgroup_id[0];
  if (b >= batch) return 0;
  if (head_size == 0 || head_size % 2 != 0 ||
      !decode_has(dispatch, 1, (uint64_t)batch * dim * 4) ||
      !decode_has(dispatch, 2, (uint64_t)batch * kv_dim * 4) ||
      !decode_has(dispatch, 3, (uint64_t)batch * head_size * 4)) {
    return 1;
  }
  const float* rope = (const float*)dispatch->binding_ptrs[3] +
                      (uint64_t)b * head_size;
  float* rows[2] = {(float*)dispatch->binding_ptrs[1] + (uint64_t)b * dim,
                    (float*)dispatch->binding_ptrs[2] + (uint64_t)b * kv_dim};
  const uint32_t widths[2] = {dim, kv_dim};
  for (int i = 0; i < 2; ++i) {
    decode_rope_rotate(rows[i], 0, widths[i], rope, head_size);
  }
  return 0;
}

static int decode_batch_attention(const weft_dispatch_state_t* dispatch,
                                  const weft_workgroup_state_t* workgroup) {
  const uint32_t n_heads = dispatch->constants[0];
  const uint32_t n_kv_heads = dispatch->constants[1];
  const uint32_t head_size = dispatch->constants[2];
  const uint32_t dim = n_heads * head_size;
  const uint32_t kv_dim = n_kv_heads * head_size;
  const uint32_t batch = decode_batch_size(dispatch);
  if (n_heads == 0 || n_kv_heads == 0 || n_heads % n_kv_heads != 0) return 1;
  // Workgroup w is head w % n_heads of batch position w / n_heads.
  const uint32_t h = workgroup->workgroup_id[0] % n_heads;
  const uint32_t b = workgroup->workgroup_id[0] / n_heads;
  if (b >= batch) return 0;
  const uint64_t row_bytes = kv_dim * 4ull;
  // The cache prefix ends after the batch's last position.
  const uint64_t end = dispatch->binding_lengths[2] / row_bytes;
  if (end < batch || !decode_has(dispatch, 1, (uint64_t)batch * dim * 4) ||
      !decode_has(dispatch, 3, end * row_bytes) ||
      !decode_has(dispatch, 4, (uint64_t)batch * dim * 4)) {
    return 1;
  }
  // Position end - batch + b attends over positions 0 .. itself.
  const uint64_t length = end - batch + b + 1;
#if defined(DECODE_X86)
  // With AVX-512, the workgroup of position 4k runs positions 4k .. 4k + 3
  // of its head together (decode_attend4_avx512: the same bits as one at a
  // time), where their scores fit its local memory; the other three
  // return at once.
  // Every workgroup of the group decides on the first position's figures.
  const uint32_t b0 = b - b % 4;
  const uint32_t nq = batch - b0 < 4 ? batch - b0 : 4;
  const uint64_t length0 = end - batch + b0 + 1;
  if (decode_softmax == decode_softmax_avx512 && head_size % 16 == 0 &&
      workgroup->local_memory_size >= nq * (length0 + 3) * sizeof(float)) {
    if (b != b0) return 0;
    const float* q[4];
    float* scores[4];
    float* out[4];
    uint64_t lengths[4];
    for (uint32_t j = 0; j < nq; ++j) {
      q[j] = (const float*)dispatch->binding_ptrs[1] + (uint64_t)(b + j) * dim +
             h * head_size;
      scores[j] = (float*)workgroup->local_memory + j * (length0 + 3);
      out[j] = (float*)dispatch->binding_ptrs[4] + (uint64_t)(b + j) * dim +
               h * head_size;
      lengths[j] = length0 + j;
    }
    decode_attend4_avx512(
        q, nq,
        (const float*)dispatch->binding_ptrs[2] +
            h / (n_heads / n_kv_heads) * head_size,
        (const float*)dispatch->binding_ptrs[3] +
            h / (n_heads / n_kv_heads) * head_size,
        kv_dim, head_size, lengths, scores, out);
    return 0;
  }
#endif
  if (workgroup->local_memory_size < length * sizeof(float)) return 3;
  decode_attend_head(
      (const float*)dispatch->binding_ptrs[1] + (uint64_t)b * dim,
      (const float*)dispatch->binding_ptrs[2],
      (const float*)dispatch->binding_ptrs[3], n_heads, n_kv_heads, head_size,
      h, length, (float*)workgroup->local_memory,
      (float*)dispatch->binding_ptrs[4] + (uint64_t)b * dim);
  return 0;
}

//===----------------------------------------------------------------------===//
// The library
//===----------------------------------------------------------------------===//

_Static_assert(sizeof(decode_block_q8_k_t) == 292 &&
                   sizeof(decode_block_q8_0_t) == 34,
               "DECODE_BATCH_QUANT_STRIDE's block sizes");
_Static_assert(DECODE_MAX_CONTEXT * 4 <= 65536,
               "local memory within local-task's 64 KiB per worker");

static const weft_kernel_def_t kDecodeKernels[DECODE_KERNEL_COUNT] = {
    {"embed", decode_embed, 3, 3, {1, 1, 1}, 0},
    {"qkv", decode_qkv, 9, 4, {ROWS, 1, 1}, 0},
    {"attention", decode_attention, 4, 3, {1, 1, 1}, DECODE_MAX_CONTEXT * 4},
    {"matvec_add", decode_matvec_add, 4, 3, {ROWS, 1, 1}, 0},
    {"ffn", decode_ffn, 5, 3, {ROWS, 1, 1}, 0},
    {"classifier", decode_classifier, 4, 3, {DECODE_CLASSIFIER_ROWS, 1, 1},
     0},
    {"argmax", decode_argmax, 2, 1, {1, 1, 1}, 0},
    {"batch_embed", decode_batch_embed, 3, 3, {1, 1, 1}, 0},
    {"batch_rmsnorm", decode_batch_rmsnorm, 5, 3, {1, 1, 1}, 0},
    {"batch_quantize", decode_batch_quantize_kernel, 3, 2, {1, 1, 1}, 0},
    {"gemm", decode_gemm, 6, 4, {ROWS, DECODE_GEMM_COLUMNS, 1}, 0},
    {"batch_rope", decode_batch_rope, 4, 3, {1, 1, 1}, 0},
    {"batch_attention", decode_batch_attention, 5, 3, {1, 1, 1},
     DECODE_MAX_CONTEXT * 4},
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
