// weft decode example: quantized dot products (see decode_quant_dot.h).
//
// The AVX2 versions multiply bytes with _mm256_maddubs_epi16 (unsigned by
// signed, pairs summed into int16), which is why a signed weight is made
// unsigned first (its absolute value, the activation given its sign) and
// why Q4_K's and Q6_K's unsigned codes go in as they are, their offsets
// (the min, the 32) applied afterwards through the activations' block
// sums. No pair can saturate: |q| <= 128 against activations within
// +-127 gives at most 2 * 128 * 127 < 32768. The AVX-512 versions do the
// same on twice the width, two blocks (or two sub-blocks) at a time.
#include "decode_quant_dot.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "decode_checkpoint.h"
#include "decode_quant_x8.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define DECODE_QUANT_X86 1
#include <immintrin.h>
#endif

//===----------------------------------------------------------------------===//
// Portable
//===----------------------------------------------------------------------===//

static float decode_dot_q8_0_portable(const void* weights,
                                      const void* activations, uint32_t n) {
  const decode_block_q8_0_t* w = weights;
  const decode_block_q8_0_t* a = activations;
  float sum = 0.0f;
  for (uint32_t b = 0; b < n / DECODE_QK8_0; ++b) {
    int32_t s = 0;
    for (uint32_t i = 0; i < DECODE_QK8_0; ++i) s += w[b].qs[i] * a[b].qs[i];
    sum += decode_f16_to_f32(w[b].d) * decode_f16_to_f32(a[b].d) * (float)s;
  }
  return sum;
}

static float decode_dot_q4_0_portable(const void* weights,
                                      const void* activations, uint32_t n) {
  const decode_block_q4_0_t* w = weights;
  const decode_block_q8_0_t* a = activations;
  float sum = 0.0f;
  for (uint32_t b = 0; b < n / DECODE_QK8_0; ++b) {
    int32_t s = 0;
    for (uint32_t i = 0; i < DECODE_QK8_0 / 2; ++i) {
      s += ((w[b].qs[i] & 15) - 8) * a[b].qs[i] +
           ((w[b].qs[i] >> 4) - 8) * a[b].qs[i + 16];
    }
    sum += decode_f16_to_f32(w[b].d) * decode_f16_to_f32(a[b].d) * (float)s;
  }
  return sum;
}

// The code of element |i| of a Q5_0 or Q5_1 block (decode_quant.h).
static inline int32_t decode_q5_code_portable(const uint8_t* qs,
                                              const uint8_t* qh, uint32_t i) {
  const int32_t low = i < 16 ? (qs[i] & 15) : (qs[i - 16] >> 4);
  return low | (((qh[i / 8] >> (i % 8)) & 1) << 4);
}

// Q4_1 and Q5_1 against Q8_0 (decode_quant_dot.h): per block the codes'
// products and the activation's sum of codes, for d_w d_a sum(q a) +
// m d_a sum(a).
static float decode_dot_q4_1_portable(const void* weights,
                                      const void* activations, uint32_t n) {
  const decode_block_q4_1_t* w = weights;
  const decode_block_q8_0_t* a = activations;
  float sum = 0.0f;
  for (uint32_t b = 0; b < n / DECODE_QK8_0; ++b) {
    int32_t s = 0, sum_a = 0;
    for (uint32_t i = 0; i < DECODE_QK8_0 / 2; ++i) {
      s += (w[b].qs[i] & 15) * a[b].qs[i] + (w[b].qs[i] >> 4) * a[b].qs[i + 16];
      sum_a += a[b].qs[i] + a[b].qs[i + 16];
    }
    const float da = decode_f16_to_f32(a[b].d);
    sum += decode_f16_to_f32(w[b].d) * da * (float)s +
           decode_f16_to_f32(w[b].m) * da * (float)sum_a;
  }
  return sum;
}

static float decode_dot_q5_0_portable(const void* weights,
                                      const void* activations, uint32_t n) {
  const decode_block_q5_0_t* w = weights;
  const decode_block_q8_0_t* a = activations;
  float sum = 0.0f;
  for (uint32_t b = 0; b < n / DECODE_QK8_0; ++b) {
    int32_t s = 0;
    for (uint32_t i = 0; i < DECODE_QK8_0; ++i) {
      s += (decode_q5_code_portable(w[b].qs, w[b].qh, i) - 16) * a[b].qs[i];
    }
    sum += decode_f16_to_f32(w[b].d) * decode_f16_to_f32(a[b].d) * (float)s;
  }
  return sum;
}

static float decode_dot_q5_1_portable(const void* weights,
                                      const void* activations, uint32_t n) {
  const decode_block_q5_1_t* w = weights;
  const decode_block_q8_0_t* a = activations;
  float sum = 0.0f;
  for (uint32_t b = 0; b < n / DECODE_QK8_0; ++b) {
    int32_t s = 0, sum_a = 0;
    for (uint32_t i = 0; i < DECODE_QK8_0; ++i) {
      s += decode_q5_code_portable(w[b].qs, w[b].qh, i) * a[b].qs[i];
      sum_a += a[b].qs[i];
    }
    const float da = decode_f16_to_f32(a[b].d);
    sum += decode_f16_to_f32(w[b].d) * da * (float)s +
           decode_f16_to_f32(w[b].m) * da * (float)sum_a;
  }
  return sum;
}

static inline float decode_dot_k_portable(const void* weights,
                                          const void* activations, uint32_t n,
                                          bool five) {
  const decode_block_q8_k_t* a = activations;
  float sum = 0.0f;
  for (uint32_t b = 0; b < n / DECODE_QK_K; ++b) {
    const decode_k_block_t w = decode_k_block(weights, b, five);
    int32_t sumi = 0, summ = 0;
    for (uint32_t j = 0; j < 8; ++j) {
      uint8_t sc, m;
      decode_q4_k_scale_min(w.scales, j, &sc, &m);
      // Sub-block j: nibbles (low for even j, high for odd) of qs[32 (j/2)..].
      const uint8_t* q = w.qs + 32 * (j / 2);
      const int8_t* y = a[b].qs + 32 * j;
      const unsigned shift = (j & 1) * 4;
      int32_t s = 0;
      for (uint32_t l = 0; l < 32; ++l) {
        int32_t code = (q[l] >> shift) & 15;
        if (five) code |= ((w.qh[l] >> j) & 1) << 4;
        s += code * y[l];
      }
      sumi += sc * s;
      summ += m * (a[b].bsums[2 * j] + a[b].bsums[2 * j + 1]);
    }
    sum += a[b].d * (decode_f16_to_f32(w.d) * (float)sumi -
                     decode_f16_to_f32(w.dmin) * (float)summ);
  }
  return sum;
}

static float decode_dot_q4_k_portable(const void* weights,
                                      const void* activations, uint32_t n) {
  return decode_dot_k_portable(weights, activations, n, false);
}

static float decode_dot_q5_k_portable(const void* weights,
                                      const void* activations, uint32_t n) {
  return decode_dot_k_portable(weights, activations, n, true);
}

static float decode_dot_q6_k_portable(const void* weights,
                                      const void* activations, uint32_t n) {
  const decode_block_q6_k_t* w = weights;
  const decode_block_q8_k_t* a = activations;
  float sum = 0.0f;
  for (uint32_t b = 0; b < n / DECODE_QK_K; ++b) {
    // The 6-bit codes, then per sub-block of 16 (code - 32) x activation.
    int32_t products[DECODE_QK_K];
    for (uint32_t h = 0; h < 2; ++h) {
      const uint8_t* ql = w[b].ql + 64 * h;
      const uint8_t* qh = w[b].qh + 32 * h;
      const int8_t* y = a[b].qs + 128 * h;
      int32_t* p = products + 128 * h;
      for (uint32_t l = 0; l < 32; ++l) {
        p[l] = ((ql[l] & 15) | ((qh[l] & 3) << 4)) * y[l];
        p[l + 32] = ((ql[l + 32] & 15) | (((qh[l] >> 2) & 3) << 4)) * y[l + 32];
        p[l + 64] = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) * y[l + 64];
        p[l + 96] = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) * y[l + 96];
      }
    }
    int32_t sumi = 0;
    for (uint32_t j = 0; j < 16; ++j) {
      int32_t s = -32 * a[b].bsums[j];
      for (uint32_t l = 0; l < 16; ++l) s += products[16 * j + l];
      sumi += w[b].scales[j] * s;
    }
    sum += a[b].d * decode_f16_to_f32(w[b].d) * (float)sumi;
  }
  return sum;
}

#if defined(DECODE_QUANT_X86)

//===----------------------------------------------------------------------===//
// AVX2
//===----------------------------------------------------------------------===//

#define DECODE_AVX2 __attribute__((target("avx2,fma,f16c")))
#define DECODE_AVX512 __attribute__((target("avx512f,avx512bw,avx2,fma,f16c")))

DECODE_AVX2 static inline float decode_quant_hsum(__m256 v) {
  __m128 sum =
      _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  sum = _mm_hadd_ps(sum, sum);
  sum = _mm_hadd_ps(sum, sum);
  return _mm_cvtss_f32(sum);
}

DECODE_AVX2 static inline int32_t decode_quant_hsum_i32(__m256i v) {
  __m128i sum =
      _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  sum = _mm_hadd_epi32(sum, sum);
  sum = _mm_hadd_epi32(sum, sum);
  return _mm_cvtsi128_si32(sum);
}

// Signed bytes |x| . |y| in groups of four: 8 int32.
DECODE_AVX2 static inline __m256i decode_mul_sum_i8(__m256i x, __m256i y) {
  const __m256i products =
      _mm256_maddubs_epi16(_mm256_sign_epi8(x, x), _mm256_sign_epi8(y, x));
  return _mm256_madd_epi16(products, _mm256_set1_epi16(1));
}

// The 32-element block types as the SIMD versions read them: an f16 d
// first in each; Q8_0, Q4_0 and Q5_0 with signed codes (x = d q), Q4_1
// and Q5_1 with unsigned codes and an f16 m after d (x = d q + m).
typedef enum decode_block32_e {
  DECODE_BLOCK32_Q8_0,  // d, qs[32] (int8)
  DECODE_BLOCK32_Q4_0,  // d, qs[16] (nibbles, q - 8)
  DECODE_BLOCK32_Q5_0,  // d, qh[4], qs[16] (q - 16)
  DECODE_BLOCK32_Q4_1,  // d, m, qs[16]
  DECODE_BLOCK32_Q5_1,  // d, m, qh[4], qs[16]
} decode_block32_t;

static inline uint32_t decode_block32_size(decode_block32_t kind) {
  switch (kind) {
    case DECODE_BLOCK32_Q8_0:
      return sizeof(decode_block_q8_0_t);
    case DECODE_BLOCK32_Q4_0:
      return sizeof(decode_block_q4_0_t);
    case DECODE_BLOCK32_Q5_0:
      return sizeof(decode_block_q5_0_t);
    case DECODE_BLOCK32_Q4_1:
      return sizeof(decode_block_q4_1_t);
    case DECODE_BLOCK32_Q5_1:
      return sizeof(decode_block_q5_1_t);
  }
  return 0;
}

// True for the kinds with a min (x = d q + m).
static inline bool decode_block32_has_min(decode_block32_t kind) {
  return kind == DECODE_BLOCK32_Q4_1 || kind == DECODE_BLOCK32_Q5_1;
}

// 16 bytes of nibbles as 32 unsigned bytes in element order (low nibbles
// first, then the high ones).
DECODE_AVX2 static inline __m256i decode_nibbles32(const uint8_t* qs) {
  const __m128i raw = _mm_loadu_si128((const __m128i*)qs);
  const __m128i low_mask = _mm_set1_epi8(15);
  return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(raw, 4), low_mask),
                          _mm_and_si128(raw, low_mask));
}

// The 32 bits at |qh| (little-endian) as 32 bytes: 16 where element i's
// bit i is set, else 0. Byte i takes byte i / 8 of the bits, then tests
// bit i % 8 of it.
DECODE_AVX2 static inline __m256i decode_q5_high_bits(const uint8_t* qh) {
  uint32_t bits;
  memcpy(&bits, qh, sizeof(bits));
  const __m256i spread = _mm256_shuffle_epi8(
      _mm256_set1_epi32((int)bits),
      _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2,
                       2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
  const __m256i bit = _mm256_set1_epi64x((long long)0x8040201008040201ull);
  return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit),
                          _mm256_set1_epi8(16));
}

// A Q4_0 block's 32 codes as signed bytes (q - 8), in element order.
DECODE_AVX2 static inline __m256i decode_q4_0_bytes(const uint8_t* qs) {
  return _mm256_sub_epi8(decode_nibbles32(qs), _mm256_set1_epi8(8));
}

// A block's 32 codes in element order: signed bytes (Q8_0, Q4_0 less 8,
// Q5_0 less 16) or unsigned 0..31 (Q4_1, Q5_1).
DECODE_AVX2 static inline __m256i decode_block32_codes(const uint8_t* block,
                                                       decode_block32_t kind) {
  switch (kind) {
    case DECODE_BLOCK32_Q8_0:
      return _mm256_loadu_si256((const __m256i*)(block + 2));
    case DECODE_BLOCK32_Q4_0:
      return decode_q4_0_bytes(block + 2);
    case DECODE_BLOCK32_Q5_0:
      return _mm256_sub_epi8(_mm256_or_si256(decode_nibbles32(block + 6),
                                             decode_q5_high_bits(block + 2)),
                             _mm256_set1_epi8(16));
    case DECODE_BLOCK32_Q4_1:
      return decode_nibbles32(block + 4);
    case DECODE_BLOCK32_Q5_1:
      return _mm256_or_si256(decode_nibbles32(block + 8),
                             decode_q5_high_bits(block + 4));
  }
  return _mm256_setzero_si256();
}

DECODE_AVX2 static inline float decode_block32_scale(const uint8_t* block) {
  uint16_t d;
  memcpy(&d, block, sizeof(d));
  return _cvtsh_ss(d);
}

// Q4_1's and Q5_1's m (0 for the others).
DECODE_AVX2 static inline float decode_block32_min(const uint8_t* block,
                                                   decode_block32_t kind) {
  if (!decode_block32_has_min(kind)) return 0.0f;
  uint16_t m;
  memcpy(&m, block + 2, sizeof(m));
  return _cvtsh_ss(m);
}

// The sums of each four of the signed bytes |y|: 8 int32.
DECODE_AVX2 static inline __m256i decode_sum_i8(__m256i y) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(1), y),
                           _mm256_set1_epi16(1));
}

// |acc| plus one block's |codes| (scaled by |dw|, with the min |m| where
// |kind| has one) . |a|. Signed codes go through decode_mul_sum_i8;
// unsigned ones (at most 31, so 2 x 31 x 127 fits int16) straight into
// maddubs, then m d_a times the activation's sum of codes.
DECODE_AVX2 static inline __m256 decode_block32_fmadd_codes(
    __m256i codes, float dw, float m, decode_block32_t kind,
    const decode_block_q8_0_t* a, __m256 acc) {
  const __m256i y = _mm256_loadu_si256((const __m256i*)a->qs);
  if (!decode_block32_has_min(kind)) {
    const __m256i p = decode_mul_sum_i8(codes, y);
    const float d = dw * _cvtsh_ss(a->d);
    return _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(p), acc);
  }
  const __m256i p =
      _mm256_madd_epi16(_mm256_maddubs_epi16(codes, y), _mm256_set1_epi16(1));
  const float da = _cvtsh_ss(a->d);
  acc = _mm256_fmadd_ps(_mm256_set1_ps(dw * da), _mm256_cvtepi32_ps(p), acc);
  return _mm256_fmadd_ps(_mm256_set1_ps(m * da),
                         _mm256_cvtepi32_ps(decode_sum_i8(y)), acc);
}

// |acc| plus |block| . |a| (one block of 32).
DECODE_AVX2 static inline __m256 decode_block32_fmadd(
    const uint8_t* block, decode_block32_t kind, const decode_block_q8_0_t* a,
    __m256 acc) {
  return decode_block32_fmadd_codes(
      decode_block32_codes(block, kind), decode_block32_scale(block),
      decode_block32_min(block, kind), kind, a, acc);
}

// Two accumulators, so one block's multiply-add need not wait for the
// one before (the chain of adds otherwise bounds a block to its latency).
DECODE_AVX2 static inline float decode_dot_block32_avx2(
    const uint8_t* w, decode_block32_t kind, const decode_block_q8_0_t* a,
    uint32_t blocks) {
  const uint32_t size = decode_block32_size(kind);
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  uint32_t b = 0;
  for (; b + 2 <= blocks; b += 2) {
    acc0 = decode_block32_fmadd(w + (size_t)b * size, kind, &a[b], acc0);
    acc1 =
        decode_block32_fmadd(w + (size_t)(b + 1) * size, kind, &a[b + 1], acc1);
  }
  if (b < blocks) {
    acc0 = decode_block32_fmadd(w + (size_t)b * size, kind, &a[b], acc0);
  }
  return decode_quant_hsum(_mm256_add_ps(acc0, acc1));
}

// decode_dot_block32_avx2 for four columns |a|[c]: each block decoded once,
// each column's sums in the one-column order, so bit for bit its results.
DECODE_AVX2 static inline void decode_dot4_block32_avx2(
    const uint8_t* w, decode_block32_t kind,
    const decode_block_q8_0_t* const* a, uint32_t blocks, float* out) {
  const uint32_t size = decode_block32_size(kind);
  __m256 acc0[4], acc1[4];
  for (int c = 0; c < 4; ++c) acc0[c] = acc1[c] = _mm256_setzero_ps();
  uint32_t b = 0;
  for (; b + 2 <= blocks; b += 2) {
    const uint8_t* block0 = w + (size_t)b * size;
    const uint8_t* block1 = block0 + size;
    const __m256i codes0 = decode_block32_codes(block0, kind);
    const __m256i codes1 = decode_block32_codes(block1, kind);
    const float d0 = decode_block32_scale(block0);
    const float d1 = decode_block32_scale(block1);
    const float m0 = decode_block32_min(block0, kind);
    const float m1 = decode_block32_min(block1, kind);
    for (int c = 0; c < 4; ++c) {
      acc0[c] =
          decode_block32_fmadd_codes(codes0, d0, m0, kind, &a[c][b], acc0[c]);
      acc1[c] = decode_block32_fmadd_codes(codes1, d1, m1, kind, &a[c][b + 1],
                                           acc1[c]);
    }
  }
  if (b < blocks) {
    const uint8_t* block0 = w + (size_t)b * size;
    const __m256i codes0 = decode_block32_codes(block0, kind);
    const float d0 = decode_block32_scale(block0);
    const float m0 = decode_block32_min(block0, kind);
    for (int c = 0; c < 4; ++c) {
      acc0[c] =
          decode_block32_fmadd_codes(codes0, d0, m0, kind, &a[c][b], acc0[c]);
    }
  }
  for (int c = 0; c < 4; ++c) {
    out[c] = decode_quant_hsum(_mm256_add_ps(acc0[c], acc1[c]));
  }
}

// The one- and four-column products of each 32-element type.
#define DECODE_BLOCK32_AVX2(type, kind)                                      \
  DECODE_AVX2 static float decode_dot_##type##_avx2(                         \
      const void* weights, const void* activations, uint32_t n) {            \
    return decode_dot_block32_avx2(weights, kind, activations,               \
                                   n / DECODE_QK8_0);                        \
  }                                                                          \
  DECODE_AVX2 static void decode_dot4_##type##_avx2(                         \
      const void* weights, const void* const* activations, uint32_t n,       \
      float* out) {                                                          \
    decode_dot4_block32_avx2(weights, kind,                                  \
                             (const decode_block_q8_0_t* const*)activations, \
                             n / DECODE_QK8_0, out);                         \
  }
DECODE_BLOCK32_AVX2(q8_0, DECODE_BLOCK32_Q8_0)
DECODE_BLOCK32_AVX2(q4_0, DECODE_BLOCK32_Q4_0)
DECODE_BLOCK32_AVX2(q5_0, DECODE_BLOCK32_Q5_0)
DECODE_BLOCK32_AVX2(q4_1, DECODE_BLOCK32_Q4_1)
DECODE_BLOCK32_AVX2(q5_1, DECODE_BLOCK32_Q5_1)
#undef DECODE_BLOCK32_AVX2

// Q4_K's eight scales and eight mins, four bytes at a time (the layout of
// decode_quant.h: bytes 0-3 hold scales 0-3 and the top bits of scales
// 4-7, bytes 4-7 the mins 0-3 and the top bits of mins 4-7, bytes 8-11 the
// low nibbles of scales 4-7 and, above them, of mins 4-7).
static inline void decode_q4_k_unpack(const uint8_t packed[12],
                                      uint8_t out_scales[8],
                                      uint8_t out_mins[8]) {
  uint32_t a, b, c;
  memcpy(&a, packed, 4);
  memcpy(&b, packed + 4, 4);
  memcpy(&c, packed + 8, 4);
  const uint32_t low6 = 0x3F3F3F3Fu, low4 = 0x0F0F0F0Fu, low2 = 0x03030303u;
  const uint32_t scales[2] = {a & low6, (c & low4) | ((a >> 6) & low2) << 4};
  const uint32_t mins[2] = {b & low6, ((c >> 4) & low4) | ((b >> 6) & low2)
                                                              << 4};
  memcpy(out_scales, scales, 8);
  memcpy(out_mins, mins, 8);
}

// The mins' term of a Q4_K block: per sub-block j, m_j times the sum of
// its activations' codes (two of Q8_K's sums of 16), in 4 int32.
DECODE_AVX2 static inline __m128i decode_q4_k_mins(
    const uint8_t mins[8], const decode_block_q8_k_t* a) {
  const __m128i sums =
      _mm_hadd_epi16(_mm_loadu_si128((const __m128i*)a->bsums),
                     _mm_loadu_si128((const __m128i*)(a->bsums + 8)));
  return _mm_madd_epi16(
      sums, _mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i*)mins)));
}

// Q6_K's offset: per sub-block of 16, 32 x its scale x the sum of its
// activations' codes, in 8 int32 (subtracted from the codes' products).
DECODE_AVX2 static inline __m256i decode_q6_k_bias(
    const decode_block_q6_k_t* w, const decode_block_q8_k_t* a) {
  const __m256i scales =
      _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i*)w->scales));
  const __m256i sums = _mm256_loadu_si256((const __m256i*)a->bsums);
  return _mm256_slli_epi32(_mm256_madd_epi16(sums, scales), 5);
}

// A Q4_K or Q5_K block's scales (|packed|) into |scales|, and |acc_mins|
// plus its mins' term times a's d and the block's |dmin|.
DECODE_AVX2 static inline __m128 decode_k_begin(const uint8_t packed[12],
                                                uint16_t dmin,
                                                const decode_block_q8_k_t* a,
                                                uint8_t scales[8],
                                                __m128 acc_mins) {
  uint8_t mins[8];
  decode_q4_k_unpack(packed, scales, mins);
  return _mm_fmadd_ps(_mm_set1_ps(a->d * _cvtsh_ss(dmin)),
                      _mm_cvtepi32_ps(decode_q4_k_mins(mins, a)), acc_mins);
}

DECODE_AVX2 static inline float decode_quant_hsum128(__m128 v) {
  v = _mm_hadd_ps(v, v);
  v = _mm_hadd_ps(v, v);
  return _mm_cvtss_f32(v);
}

// Q5_K's codes of sub-blocks 2c (|out_low|) and 2c + 1 (|out_high|) for
// the chunk c whose nibbles are |q|: their fifth bits are bits 0 and 1 of
// each byte of |*qh_bits| (the block's qh shifted right 2c places, moved
// on by 2 here for the next chunk). The 16-bit shifts carry bits across
// bytes only into bits above the two read.
DECODE_AVX2 static inline void decode_q5_k_codes(__m256i q, __m256i* qh_bits,
                                                 __m256i* out_low,
                                                 __m256i* out_high) {
  const __m256i low_mask = _mm256_set1_epi8(15);
  const __m256i sixteen = _mm256_set1_epi8(16);
  *out_low = _mm256_or_si256(
      _mm256_and_si256(q, low_mask),
      _mm256_and_si256(_mm256_slli_epi16(*qh_bits, 4), sixteen));
  *out_high = _mm256_or_si256(
      _mm256_and_si256(_mm256_srli_epi16(q, 4), low_mask),
      _mm256_and_si256(_mm256_slli_epi16(*qh_bits, 3), sixteen));
  *qh_bits = _mm256_srli_epi16(*qh_bits, 2);
}

// The codes of sub-blocks 2c (|out_low|) and 2c + 1 (|out_high|) of a
// Q4_K (|five| false: the chunk's nibbles) or Q5_K block's chunk c whose
// nibbles are |q| (decode_q5_k_codes).
DECODE_AVX2 static inline void decode_k_codes(__m256i q, bool five,
                                              __m256i* qh_bits,
                                              __m256i* out_low,
                                              __m256i* out_high) {
  if (five) {
    decode_q5_k_codes(q, qh_bits, out_low, out_high);
    return;
  }
  const __m256i low_mask = _mm256_set1_epi8(15);
  *out_low = _mm256_and_si256(q, low_mask);
  *out_high = _mm256_and_si256(_mm256_srli_epi16(q, 4), low_mask);
}

// Q4_K's and Q5_K's product (decode_k_block_t): codes of at most 31 (Q5_K),
// so 2 x 31 x 127 still fits maddubs' int16.
DECODE_AVX2 static inline float decode_dot_k_avx2(const void* weights,
                                                  const void* activations,
                                                  uint32_t n, bool five) {
  const decode_block_q8_k_t* a = activations;
  __m256 acc = _mm256_setzero_ps();
  __m128 acc_mins = _mm_setzero_ps();
  for (uint32_t b = 0; b < n / DECODE_QK_K; ++b) {
    const decode_k_block_t w = decode_k_block(weights, b, five);
    uint8_t scales[8];
    acc_mins = decode_k_begin(w.scales, w.dmin, &a[b], scales, acc_mins);
    __m256i qh_bits =
        five ? _mm256_loadu_si256((const __m256i*)w.qh) : _mm256_setzero_si256();
    __m256i sumi = _mm256_setzero_si256();
    for (uint32_t c = 0; c < 4; ++c) {
      __m256i low, high;
      decode_k_codes(_mm256_loadu_si256((const __m256i*)(w.qs + 32 * c)), five,
                     &qh_bits, &low, &high);
      const __m256i p_low = _mm256_maddubs_epi16(
          low, _mm256_loadu_si256((const __m256i*)(a[b].qs + 64 * c)));
      const __m256i p_high = _mm256_maddubs_epi16(
          high, _mm256_loadu_si256((const __m256i*)(a[b].qs + 64 * c + 32)));
      sumi = _mm256_add_epi32(
          sumi, _mm256_madd_epi16(p_low, _mm256_set1_epi16(scales[2 * c])));
      sumi = _mm256_add_epi32(
          sumi,
          _mm256_madd_epi16(p_high, _mm256_set1_epi16(scales[2 * c + 1])));
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(a[b].d * _cvtsh_ss(w.d)),
                          _mm256_cvtepi32_ps(sumi), acc);
  }
  return decode_quant_hsum(acc) - decode_quant_hsum128(acc_mins);
}

DECODE_AVX2 static float decode_dot_q4_k_avx2(const void* weights,
                                              const void* activations,
                                              uint32_t n) {
  return decode_dot_k_avx2(weights, activations, n, false);
}

DECODE_AVX2 static float decode_dot_q5_k_avx2(const void* weights,
                                              const void* activations,
                                              uint32_t n) {
  return decode_dot_k_avx2(weights, activations, n, true);
}
// decode_dot_q4_k_avx2 for four columns |activations|[c]: each block's
// scales, mins and nibbles unpacked once, each column's sums in the
// one-column order, so bit for bit its results.
DECODE_AVX2 static void decode_dot4_q4_k_avx2(const void* weights,
                                              const void* const* activations,
                                              uint32_t n, float* out) {
  const decode_block_q4_k_t* w = weights;
  const decode_block_q8_k_t* const* a =
      (const decode_block_q8_k_t* const*)activations;
  const __m256i low_mask = _mm256_set1_epi8(15);
  __m256 acc[4];
  __m128 acc_mins[4];
  for (int k = 0; k < 4; ++k) {
    acc[k] = _mm256_setzero_ps();
    acc_mins[k] = _mm_setzero_ps();
  }
  for (uint32_t b = 0; b < n / DECODE_QK_K; ++b) {
    uint8_t scales[8], mins[8];
    decode_q4_k_unpack(w[b].scales, scales, mins);
    const float dmin = _cvtsh_ss(w[b].dmin);
    __m256i sumi[4];
    for (int k = 0; k < 4; ++k) {
      acc_mins[k] = _mm_fmadd_ps(
          _mm_set1_ps(a[k][b].d * dmin),
          _mm_cvtepi32_ps(decode_q4_k_mins(mins, &a[k][b])), acc_mins[k]);
      sumi[k] = _mm256_setzero_si256();
    }
    for (uint32_t c = 0; c < 4; ++c) {
      const __m256i q = _mm256_loadu_si256((const __m256i*)(w[b].qs + 32 * c));
      const __m256i low = _mm256_and_si256(q, low_mask);
      const __m256i high = _mm256_and_si256(_mm256_srli_epi16(q, 4), low_mask);
      const __m256i scale_low = _mm256_set1_epi16(scales[2 * c]);
      const __m256i scale_high = _mm256_set1_epi16(scales[2 * c + 1]);
      for (int k = 0; k < 4; ++k) {
        const __m256i p_low = _mm256_maddubs_epi16(
            low, _mm256_loadu_si256((const __m256i*)(a[k][b].qs + 64 * c)));
        const __m256i p_high = _mm256_maddubs_epi16(
            high,
            _mm256_loadu_si256((const __m256i*)(a[k][b].qs + 64 * c + 32)));
        sumi[k] = _mm256_add_epi32(sumi[k],
                                   _mm256_madd_epi16(p_low, scale_low));
        sumi[k] = _mm256_add_epi32(sumi[k],
                                   _mm256_madd_epi16(p_high, scale_high));
      }
    }
    const float d = _cvtsh_ss(w[b].d);
    for (int k = 0; k < 4; ++k) {
      acc[k] = _mm256_fmadd_ps(_mm256_set1_ps(a[k][b].d * d),
                               _mm256_cvtepi32_ps(sumi[k]), acc[k]);
    }
  }
  for (int k = 0; k < 4; ++k) {
    out[k] = decode_quant_hsum(acc[k]) - decode_quant_hsum128(acc_mins[k]);
  }
}

// The four 32-code runs of half a Q6_K block (elements 0-31, 32-63, 64-95
// and 96-127 of the half) as unsigned bytes 0..63.
DECODE_AVX2 static inline void decode_q6_k_codes(const uint8_t* ql,
                                                 const uint8_t* qh,
                                                 __m256i out[4]) {
  const __m256i low_mask = _mm256_set1_epi8(15);
  const __m256i two_bits = _mm256_set1_epi8(3);
  const __m256i a = _mm256_loadu_si256((const __m256i*)ql);
  const __m256i b = _mm256_loadu_si256((const __m256i*)(ql + 32));
  const __m256i h = _mm256_loadu_si256((const __m256i*)qh);
  const __m256i nibbles[4] = {
      _mm256_and_si256(a, low_mask), _mm256_and_si256(b, low_mask),
      _mm256_and_si256(_mm256_srli_epi16(a, 4), low_mask),
      _mm256_and_si256(_mm256_srli_epi16(b, 4), low_mask)};
  const __m256i highs[4] = {
      _mm256_and_si256(h, two_bits),
      _mm256_and_si256(_mm256_srli_epi16(h, 2), two_bits),
      _mm256_and_si256(_mm256_srli_epi16(h, 4), two_bits),
      _mm256_and_si256(_mm256_srli_epi16(h, 6), two_bits)};
  for (int k = 0; k < 4; ++k) {
    out[k] = _mm256_or_si256(nibbles[k], _mm256_slli_epi16(highs[k], 4));
  }
}

DECODE_AVX2 static float decode_dot_q6_k_avx2(const void* weights,
                                              const void* activations,
                                              uint32_t n) {
  const decode_block_q6_k_t* w = weights;
  const decode_block_q8_k_t* a = activations;
  __m256 acc = _mm256_setzero_ps();
  for (uint32_t b = 0; b < n / DECODE_QK_K; ++b) {
    __m256i sumi = _mm256_sub_epi32(_mm256_setzero_si256(),
                                    decode_q6_k_bias(&w[b], &a[b]));
    for (uint32_t h = 0; h < 2; ++h) {
      __m256i codes[4];
      decode_q6_k_codes(w[b].ql + 64 * h, w[b].qh + 32 * h, codes);
      const int8_t* scales = w[b].scales + 8 * h;
      for (uint32_t k = 0; k < 4; ++k) {
        const __m256i p = _mm256_maddubs_epi16(
            codes[k],
            _mm256_loadu_si256((const __m256i*)(a[b].qs + 128 * h + 32 * k)));
        const __m256i s = _mm256_set_m128i(_mm_set1_epi16(scales[2 * k + 1]),
                                           _mm_set1_epi16(scales[2 * k]));
        sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(p, s));
      }
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(a[b].d * _cvtsh_ss(w[b].d)),
                          _mm256_cvtepi32_ps(sumi), acc);
  }
  return decode_quant_hsum(acc);
}

// decode_dot_q6_k_avx2 for four columns |activations|[c]: each half
// block's codes assembled once, each column's sums in the one-column
// order (its bias, then halves 0 and 1, sub-blocks 0 to 3), so bit for
// bit its results.
DECODE_AVX2 static void decode_dot4_q6_k_avx2(const void* weights,
                                              const void* const* activations,
                                              uint32_t n, float* out) {
  const decode_block_q6_k_t* w = weights;
  const decode_block_q8_k_t* const* a =
      (const decode_block_q8_k_t* const*)activations;
  __m256 acc[4];
  for (int c = 0; c < 4; ++c) acc[c] = _mm256_setzero_ps();
  for (uint32_t b = 0; b < n / DECODE_QK_K; ++b) {
    __m256i sumi[4];
    for (int c = 0; c < 4; ++c) {
      sumi[c] = _mm256_sub_epi32(_mm256_setzero_si256(),
                                 decode_q6_k_bias(&w[b], &a[c][b]));
    }
    for (uint32_t h = 0; h < 2; ++h) {
      __m256i codes[4];
      decode_q6_k_codes(w[b].ql + 64 * h, w[b].qh + 32 * h, codes);
      const int8_t* scales = w[b].scales + 8 * h;
      for (uint32_t k = 0; k < 4; ++k) {
        const __m256i s = _mm256_set_m128i(_mm_set1_epi16(scales[2 * k + 1]),
                                           _mm_set1_epi16(scales[2 * k]));
        for (int c = 0; c < 4; ++c) {
          const __m256i p = _mm256_maddubs_epi16(
              codes[k], _mm256_loadu_si256((const __m256i*)(a[c][b].qs +
                                                            128 * h + 32 * k)));
          sumi[c] = _mm256_add_epi32(sumi[c], _mm256_madd_epi16(p, s));
        }
      }
    }
    const float d = _cvtsh_ss(w[b].d);
    for (int c = 0; c < 4; ++c) {
      acc[c] = _mm256_fmadd_ps(_mm256_set1_ps(a[c][b].d * d),
                               _mm256_cvtepi32_ps(sumi[c]), acc[c]);
    }
  }
  for (int c = 0; c < 4; ++c) out[c] = decode_quant_hsum(acc[c]);
}

// The activations (decode_quant.h's formats), to the bit what the
// portable versions give: the same largest magnitude, the same d and
// 1 / d, and the same products rounded to nearest even (the conversion's
// rounding, as lrintf's).
DECODE_AVX2 static inline float decode_amax_avx2(const float* x, uint32_t n) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 m = _mm256_setzero_ps();
  for (uint32_t i = 0; i < n; i += 8) {
    m = _mm256_max_ps(m, _mm256_andnot_ps(sign, _mm256_loadu_ps(x + i)));
  }
  __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
  h = _mm_max_ps(h, _mm_movehl_ps(h, h));
  h = _mm_max_ss(h, _mm_movehdup_ps(h));
  return _mm_cvtss_f32(h);
}

// 32 floats at |x| times |id|, rounded, as 32 int8 at |out|; with |sums|,
// the sums of each 16 of them too.
DECODE_AVX2 static inline void decode_round32_avx2(const float* x, float id,
                                                   int8_t* out, int16_t* sums) {
  const __m256 scale = _mm256_set1_ps(id);
  __m256i v[4];
  for (int k = 0; k < 4; ++k) {
    v[k] = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 8 * k), scale));
  }
  if (sums) {
    sums[0] = (int16_t)decode_quant_hsum_i32(_mm256_add_epi32(v[0], v[1]));
    sums[1] = (int16_t)decode_quant_hsum_i32(_mm256_add_epi32(v[2], v[3]));
  }
  // Packing works within 128-bit lanes: the dwords come out as elements
  // 0-3, 8-11, 16-19, 24-27, 4-7, 12-15, 20-23, 28-31.
  const __m256i packed = _mm256_packs_epi16(_mm256_packs_epi32(v[0], v[1]),
                                            _mm256_packs_epi32(v[2], v[3]));
  _mm256_storeu_si256((__m256i*)out,
                      _mm256_permutevar8x32_epi32(
                          packed, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
}

DECODE_AVX2 static void decode_activations_q8_0_avx2(const float* x, uint32_t n,
                                                     void* out) {
  decode_block_q8_0_t* blocks = out;
  for (uint32_t b = 0; b < n / DECODE_QK8_0; ++b) {
    const float* v = x + b * DECODE_QK8_0;
    const float d = decode_amax_avx2(v, DECODE_QK8_0) / 127.0f;
    blocks[b].d = decode_f32_to_f16(d);
    decode_round32_avx2(v, d != 0.0f ? 1.0f / d : 0.0f, blocks[b].qs, NULL);
  }
}

DECODE_AVX2 static void decode_activations_q8_k_avx2(const float* x, uint32_t n,
                                                     void* out) {
  decode_block_q8_k_t* blocks = out;
  for (uint32_t b = 0; b < n / DECODE_QK_K; ++b) {
    const float* v = x + b * DECODE_QK_K;
    blocks[b].d = decode_amax_avx2(v, DECODE_QK_K) / 127.0f;
    const float id = blocks[b].d != 0.0f ? 1.0f / blocks[b].d : 0.0f;
    for (uint32_t k = 0; k < DECODE_QK_K / 32; ++k) {
      decode_round32_avx2(v + 32 * k, id, blocks[b].qs + 32 * k,
                          blocks[b].bsums + 2 * k);
    }
  }
}

//===----------------------------------------------------------------------===//
// AVX-512
//===----------------------------------------------------------------------===//

// Signed bytes |x| . |y| in groups of four: 16 int32.
DECODE_AVX512 static inline __m512i decode_mul_sum_i8_512(__m512i x,
                                                          __m512i y) {
  const __mmask64 negative = _mm512_movepi8_mask(x);
  const __m512i signed_y =
      _mm512_mask_sub_epi8(y, negative, _mm512_setzero_si512(), y);
  return _mm512_madd_epi16(_mm512_maddubs_epi16(_mm512_abs_epi8(x), signed_y),
                           _mm512_set1_epi16(1));
}

DECODE_AVX512 static inline __m512i decode_join256(__m256i low, __m256i high) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(low), high, 1);
}

// Two blocks' scales, each over its half of 16 int32 lanes.
DECODE_AVX512 static inline __m512 decode_two_scales(float first,
                                                     float second) {
  return _mm512_mask_blend_ps(0xFF00, _mm512_set1_ps(first),
                              _mm512_set1_ps(second));
}

// |acc| plus two blocks of 32 (|first| and the one after it) dotted with
// theirs: decode_block32_fmadd_codes on twice the width.
DECODE_AVX512 static inline __m512 decode_block32_pair_fmadd(
    const uint8_t* first, decode_block32_t kind, const decode_block_q8_0_t* a,
    __m512 acc) {
  const uint8_t* second = first + decode_block32_size(kind);
  const __m512i x = decode_join256(decode_block32_codes(first, kind),
                                   decode_block32_codes(second, kind));
  const __m512i y = decode_join256(_mm256_loadu_si256((const __m256i*)a[0].qs),
                                   _mm256_loadu_si256((const __m256i*)a[1].qs));
  const float da0 = _cvtsh_ss(a[0].d), da1 = _cvtsh_ss(a[1].d);
  const __m512 d = decode_two_scales(decode_block32_scale(first) * da0,
                                     decode_block32_scale(second) * da1);
  if (!decode_block32_has_min(kind)) {
    return _mm512_fmadd_ps(d, _mm512_cvtepi32_ps(decode_mul_sum_i8_512(x, y)),
                           acc);
  }
  const __m512i ones = _mm512_set1_epi16(1);
  const __m512i p = _mm512_madd_epi16(_mm512_maddubs_epi16(x, y), ones);
  const __m512i sum_a =
      _mm512_madd_epi16(_mm512_maddubs_epi16(_mm512_set1_epi8(1), y), ones);
  const __m512 m = decode_two_scales(decode_block32_min(first, kind) * da0,
                                     decode_block32_min(second, kind) * da1);
  acc = _mm512_fmadd_ps(d, _mm512_cvtepi32_ps(p), acc);
  return _mm512_fmadd_ps(m, _mm512_cvtepi32_ps(sum_a), acc);
}

// The 32-element types (decode_dot_block32_avx2) two blocks at a time, two
// accumulators.
DECODE_AVX512 static inline float decode_dot_block32_avx512(
    const uint8_t* w, decode_block32_t kind, const decode_block_q8_0_t* a,
    uint32_t blocks) {
  const uint32_t size = decode_block32_size(kind);
  __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
  uint32_t b = 0;
  for (; b + 4 <= blocks; b += 4) {
    acc0 = decode_block32_pair_fmadd(w + (size_t)b * size, kind, &a[b], acc0);
    acc1 = decode_block32_pair_fmadd(w + (size_t)(b + 2) * size, kind,
                                     &a[b + 2], acc1);
  }
  if (b + 2 <= blocks) {
    acc0 = decode_block32_pair_fmadd(w + (size_t)b * size, kind, &a[b], acc0);
    b += 2;
  }
  float sum = _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
  if (b < blocks) {
    sum += decode_dot_block32_avx2(w + (size_t)b * size, kind, a + b, 1);
  }
  return sum;
}

#define DECODE_BLOCK32_AVX512(type, kind)                         \
  DECODE_AVX512 static float decode_dot_##type##_avx512(          \
      const void* weights, const void* activations, uint32_t n) { \
    return decode_dot_block32_avx512(weights, kind, activations,  \
                                     n / DECODE_QK8_0);           \
  }
DECODE_BLOCK32_AVX512(q8_0, DECODE_BLOCK32_Q8_0)
DECODE_BLOCK32_AVX512(q4_0, DECODE_BLOCK32_Q4_0)
DECODE_BLOCK32_AVX512(q5_0, DECODE_BLOCK32_Q5_0)
DECODE_BLOCK32_AVX512(q4_1, DECODE_BLOCK32_Q4_1)
DECODE_BLOCK32_AVX512(q5_1, DECODE_BLOCK32_Q5_1)
#undef DECODE_BLOCK32_AVX512

// decode_dot_k_avx2 with a chunk's two sub-blocks in one register.
DECODE_AVX512 static inline float decode_dot_k_avx512(const void* weights,
                                                      const void* activations,
                                                      uint32_t n, bool five) {
  const decode_block_q8_k_t* a = activations;
  __m512 acc = _mm512_setzero_ps();
  __m128 acc_mins = _mm_setzero_ps();
  for (uint32_t b = 0; b < n / DECODE_QK_K; ++b) {
    const decode_k_block_t w = decode_k_block(weights, b, five);
    uint8_t scales[8];
    acc_mins = decode_k_begin(w.scales, w.dmin, &a[b], scales, acc_mins);
    __m256i qh_bits =
        five ? _mm256_loadu_si256((const __m256i*)w.qh) : _mm256_setzero_si256();
    __m512i sumi = _mm512_setzero_si512();
    for (uint32_t c = 0; c < 4; ++c) {
      // Sub-blocks 2c and 2c + 1, 64 elements.
      __m256i low, high;
      decode_k_codes(_mm256_loadu_si256((const __m256i*)(w.qs + 32 * c)), five,
                     &qh_bits, &low, &high);
      const __m512i p = _mm512_maddubs_epi16(
          decode_join256(low, high),
          _mm512_loadu_si512((const void*)(a[b].qs + 64 * c)));
      const __m512i s =
          _mm512_mask_blend_epi16(0xFFFF0000u, _mm512_set1_epi16(scales[2 * c]),
                                  _mm512_set1_epi16(scales[2 * c + 1]));
      sumi = _mm512_add_epi32(sumi, _mm512_madd_epi16(p, s));
    }
    acc = _mm512_fmadd_ps(_mm512_set1_ps(a[b].d * _cvtsh_ss(w.d)),
                          _mm512_cvtepi32_ps(sumi), acc);
  }
  return _mm512_reduce_add_ps(acc) - decode_quant_hsum128(acc_mins);
}

DECODE_AVX512 static float decode_dot_q4_k_avx512(const void* weights,
                                                  const void* activations,
                                                  uint32_t n) {
  return decode_dot_k_avx512(weights, activations, n, false);
}

DECODE_AVX512 static float decode_dot_q5_k_avx512(const void* weights,
                                                  const void* activations,
                                                  uint32_t n) {
  return decode_dot_k_avx512(weights, activations, n, true);
}

// For each 64 elements of a Q6_K half (two runs of 32: 32 int16 lanes
// after maddubs, 8 lanes per sub-block of 16), the lane's sub-block.
static const uint16_t kQ6kScaleIndex[4][32] = {
    {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
     2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3},
    {4, 4, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5,
     6, 6, 6, 6, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7},
    {8,  8,  8,  8,  8,  8,  8,  8,  9,  9,  9,  9,  9,  9,  9,  9,
     10, 10, 10, 10, 10, 10, 10, 10, 11, 11, 11, 11, 11, 11, 11, 11},
    {12, 12, 12, 12, 12, 12, 12, 12, 13, 13, 13, 13, 13, 13, 13, 13,
     14, 14, 14, 14, 14, 14, 14, 14, 15, 15, 15, 15, 15, 15, 15, 15},
};

DECODE_AVX512 static float decode_dot_q6_k_avx512(const void* weights,
                                                  const void* activations,
                                                  uint32_t n) {
  const decode_block_q6_k_t* w = weights;
  const decode_block_q8_k_t* a = activations;
  __m512 acc = _mm512_setzero_ps();
  for (uint32_t b = 0; b < n / DECODE_QK_K; ++b) {
    // The 16 scales as int16 in lanes 0..15.
    const __m512i scales16 = _mm512_inserti64x4(
        _mm512_setzero_si512(),
        _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i*)w[b].scales)), 0);
    __m512i sumi =
        _mm512_inserti64x4(_mm512_setzero_si512(),
                           _mm256_sub_epi32(_mm256_setzero_si256(),
                                            decode_q6_k_bias(&w[b], &a[b])),
                           0);
    for (uint32_t h = 0; h < 2; ++h) {
      __m256i codes[4];
      decode_q6_k_codes(w[b].ql + 64 * h, w[b].qh + 32 * h, codes);
      for (uint32_t k = 0; k < 2; ++k) {
        const __m512i p = _mm512_maddubs_epi16(
            decode_join256(codes[2 * k], codes[2 * k + 1]),
            _mm512_loadu_si512((const void*)(a[b].qs + 128 * h + 64 * k)));
        const __m512i s = _mm512_permutexvar_epi16(
            _mm512_loadu_si512((const void*)kQ6kScaleIndex[2 * h + k]),
            scales16);
        sumi = _mm512_add_epi32(sumi, _mm512_madd_epi16(p, s));
      }
    }
    acc = _mm512_fmadd_ps(_mm512_set1_ps(a[b].d * _cvtsh_ss(w[b].d)),
                          _mm512_cvtepi32_ps(sumi), acc);
  }
  return _mm512_reduce_add_ps(acc);
}

#endif  // DECODE_QUANT_X86

//===----------------------------------------------------------------------===//
// Selection
//===----------------------------------------------------------------------===//

// Index of a block type in the tables below (-1: not one).
enum { DECODE_QUANT_TYPES = 8 };
static int decode_quant_index(decode_dtype_t dtype) {
  switch (dtype) {
    case DECODE_DTYPE_Q8_0:
      return 0;
    case DECODE_DTYPE_Q4_0:
      return 1;
    case DECODE_DTYPE_Q4_K:
      return 2;
    case DECODE_DTYPE_Q6_K:
      return 3;
    case DECODE_DTYPE_Q4_1:
      return 4;
    case DECODE_DTYPE_Q5_0:
      return 5;
    case DECODE_DTYPE_Q5_1:
      return 6;
    case DECODE_DTYPE_Q5_K:
      return 7;
    default:
      return -1;
  }
}

static const decode_quant_dot_fn_t
    kDots[DECODE_SIMD_COUNT][DECODE_QUANT_TYPES] = {
        {decode_dot_q8_0_portable, decode_dot_q4_0_portable,
         decode_dot_q4_k_portable, decode_dot_q6_k_portable,
         decode_dot_q4_1_portable, decode_dot_q5_0_portable,
         decode_dot_q5_1_portable, decode_dot_q5_k_portable},
#if defined(DECODE_QUANT_X86)
        {decode_dot_q8_0_avx2, decode_dot_q4_0_avx2, decode_dot_q4_k_avx2,
         decode_dot_q6_k_avx2, decode_dot_q4_1_avx2, decode_dot_q5_0_avx2,
         decode_dot_q5_1_avx2, decode_dot_q5_k_avx2},
        {decode_dot_q8_0_avx512, decode_dot_q4_0_avx512, decode_dot_q4_k_avx512,
         decode_dot_q6_k_avx512, decode_dot_q4_1_avx512, decode_dot_q5_0_avx512,
         decode_dot_q5_1_avx512, decode_dot_q5_k_avx512},
#endif
};

// The selected versions (decode_quant_dot_select).
static decode_quant_dot_fn_t decode_quant_dots[DECODE_QUANT_TYPES] = {
    decode_dot_q8_0_portable, decode_dot_q4_0_portable,
    decode_dot_q4_k_portable, decode_dot_q6_k_portable,
    decode_dot_q4_1_portable, decode_dot_q5_0_portable,
    decode_dot_q5_1_portable, decode_dot_q5_k_portable};

// Four-column forms of the AVX2 versions (NULL: none; a batch's Q5_K rows
// go through the one-column product, and so do Q6_K's on an AVX-512 CPU,
// which runs Q6_K's AVX-512 one-column product).
static const decode_quant_dot4_fn_t kDots4Avx2[DECODE_QUANT_TYPES] = {
#if defined(DECODE_QUANT_X86)
    decode_dot4_q8_0_avx2, decode_dot4_q4_0_avx2, decode_dot4_q4_k_avx2,
    decode_dot4_q6_k_avx2,
    decode_dot4_q4_1_avx2, decode_dot4_q5_0_avx2, decode_dot4_q5_1_avx2, NULL,
#else
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
#endif
};
// Those of the selected versions.
static decode_quant_dot4_fn_t decode_quant_dot4s[DECODE_QUANT_TYPES];

static void decode_activations_q8_0_portable(const float* x, uint32_t n,
                                             void* out) {
  decode_quant_activations_q8_0(x, n, out);
}
static void decode_activations_q8_k_portable(const float* x, uint32_t n,
                                             void* out) {
  decode_quant_activations_q8_k(x, n, out);
}

// [simd][0: Q8_0, 1: Q8_K]; AVX-512 CPUs run the AVX2 ones.
static const decode_quant_activations_fn_t kActivations[DECODE_SIMD_COUNT][2] =
    {
        {decode_activations_q8_0_portable, decode_activations_q8_k_portable},
#if defined(DECODE_QUANT_X86)
        {decode_activations_q8_0_avx2, decode_activations_q8_k_avx2},
        {decode_activations_q8_0_avx2, decode_activations_q8_k_avx2},
#endif
};

static decode_quant_activations_fn_t decode_quant_activation_fns[2] = {
    decode_activations_q8_0_portable, decode_activations_q8_k_portable};

decode_quant_activations_fn_t decode_quant_activations_function(
    bool q8_k, decode_simd_t simd) {
  if ((unsigned)simd >= DECODE_SIMD_COUNT) return NULL;
  return kActivations[simd][q8_k ? 1 : 0];
}

void decode_quant_activations(decode_dtype_t dtype, const float* x, uint32_t n,
                              void* out_blocks) {
  decode_quant_activation_fns[decode_quant_uses_q8_k(dtype) ? 1 : 0](
      x, n, out_blocks);
}

decode_simd_t decode_simd_best(void) {
#if defined(DECODE_QUANT_X86)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")) {
    return DECODE_SIMD_AVX512;
  }
  // F16C has no __builtin_cpu_supports name; every AVX2 CPU has it.
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    return DECODE_SIMD_AVX2;
  }
#endif
  return DECODE_SIMD_PORTABLE;
}

decode_quant_dot_fn_t decode_quant_dot_function(decode_dtype_t dtype,
                                                decode_simd_t simd) {
  const int index = decode_quant_index(dtype);
  if (index < 0 || (unsigned)simd >= DECODE_SIMD_COUNT) return NULL;
  return kDots[simd][index];
}

// Whether the AVX-512 version beats the AVX2 one. Measured on this
// project's Xeon (AVX-512 BW and VNNI; rows of 768 elements in cache, ns
// per row, AVX2 against AVX-512): Q8_0 29 / 36, Q4_0 41 / 48, Q4_K 24 /
// 28, Q6_K 36 / 30; the 32-element blocks and Q4_K's gain nothing from
// the wider registers that the joins and blends do not take back, so an
// AVX-512 CPU runs their AVX2 versions. Q4_1, Q5_0, Q5_1 and Q5_K were
// not measured: they follow Q4_0 and Q4_K, whose forms they share.
static const bool kAvx512Faster[DECODE_QUANT_TYPES] = {
    false, false, false, true, false, false, false, false};

void decode_quant_dot_select(decode_simd_t simd) {
  if ((unsigned)simd >= DECODE_SIMD_COUNT) return;
  for (int i = 0; i < DECODE_QUANT_TYPES; ++i) {
    const decode_simd_t chosen = simd == DECODE_SIMD_AVX512 && !kAvx512Faster[i]
                                     ? DECODE_SIMD_AVX2
                                     : simd;
    if (kDots[chosen][i]) decode_quant_dots[i] = kDots[chosen][i];
    decode_quant_dot4s[i] = chosen == DECODE_SIMD_AVX2 ? kDots4Avx2[i] : NULL;
  }
  decode_x8_select(simd);
  for (int i = 0; i < 2; ++i) {
    if (kActivations[simd][i]) {
      decode_quant_activation_fns[i] = kActivations[simd][i];
    }
  }
}

float decode_quant_dot(decode_dtype_t dtype, const void* weights,
                       const void* activations, uint32_t n) {
  return decode_quant_dots[decode_quant_index(dtype)](weights, activations, n);
}

decode_quant_dot4_fn_t decode_quant_dot4(decode_dtype_t dtype) {
  const int index = decode_quant_index(dtype);
  return index < 0 ? NULL : decode_quant_dot4s[index];
}
