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

#include <stddef.h>
#include <string.h>

#include "decode_checkpoint.h"

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

static float decode_dot_q4_k_portable(const void* weights,
                                      const void* activations, uint32_t n) {
  const decode_block_q4_k_t* w = weights;
  const decode_block_q8_k_t* a = activations;
  float sum = 0.0f;
  for (uint32_t b = 0; b < n / DECODE_QK_K; ++b) {
    int32_t sumi = 0, summ = 0;
    for (uint32_t j = 0; j < 8; ++j) {
      uint8_t sc, m;
      decode_q4_k_scale_min(w[b].scales, j, &sc, &m);
      // Sub-block j: nibbles (low for even j, high for odd) of qs[32 (j/2)..].
      const uint8_t* q = w[b].qs + 32 * (j / 2);
      const int8_t* y = a[b].qs + 32 * j;
      const unsigned shift = (j & 1) * 4;
      int32_t s = 0;
      for (uint32_t l = 0; l < 32; ++l) s += ((q[l] >> shift) & 15) * y[l];
      sumi += sc * s;
      summ += m * (a[b].bsums[2 * j] + a[b].bsums[2 * j + 1]);
    }
    sum += a[b].d * (decode_f16_to_f32(w[b].d) * (float)sumi -
                     decode_f16_to_f32(w[b].dmin) * (float)summ);
  }
  return sum;
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

// A Q4_0 block's 32 codes as signed bytes (q - 8), in element order.
DECODE_AVX2 static inline __m256i decode_q4_0_bytes(const uint8_t* qs) {
  const __m128i raw = _mm_loadu_si128((const __m128i*)qs);
  const __m128i low_mask = _mm_set1_epi8(15);
  const __m256i codes =
      _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(raw, 4), low_mask),
                       _mm_and_si128(raw, low_mask));
  return _mm256_sub_epi8(codes, _mm256_set1_epi8(8));
}

// Q8_0 and Q4_0 blocks alike: an f16 scale, then the codes (|q4|: 16
// bytes of nibbles, else 32 signed bytes), |size| bytes in all.
DECODE_AVX2 static inline __m256i decode_block32_codes(const uint8_t* block,
                                                       bool q4) {
  return q4 ? decode_q4_0_bytes(block + 2)
            : _mm256_loadu_si256((const __m256i*)(block + 2));
}

DECODE_AVX2 static inline float decode_block32_scale(const uint8_t* block) {
  uint16_t d;
  memcpy(&d, block, sizeof(d));
  return _cvtsh_ss(d);
}

DECODE_AVX2 static inline float decode_dot_block32_avx2(
    const uint8_t* w, uint32_t size, bool q4, const decode_block_q8_0_t* a,
    uint32_t blocks) {
  __m256 acc = _mm256_setzero_ps();
  for (uint32_t b = 0; b < blocks; ++b) {
    const uint8_t* block = w + (size_t)b * size;
    const __m256i p =
        decode_mul_sum_i8(decode_block32_codes(block, q4),
                          _mm256_loadu_si256((const __m256i*)a[b].qs));
    const float d = decode_block32_scale(block) * _cvtsh_ss(a[b].d);
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(p), acc);
  }
  return decode_quant_hsum(acc);
}

DECODE_AVX2 static float decode_dot_q8_0_avx2(const void* weights,
                                              const void* activations,
                                              uint32_t n) {
  return decode_dot_block32_avx2(weights, sizeof(decode_block_q8_0_t), false,
                                 activations, n / DECODE_QK8_0);
}

DECODE_AVX2 static float decode_dot_q4_0_avx2(const void* weights,
                                              const void* activations,
                                              uint32_t n) {
  return decode_dot_block32_avx2(weights, sizeof(decode_block_q4_0_t), true,
                                 activations, n / DECODE_QK8_0);
}

// Q4_K's sub-block scales and the mins' term (sum of m x the activations'
// sums of the sub-block) of one super-block.
static inline int32_t decode_q4_k_scales(const decode_block_q4_k_t* w,
                                         const decode_block_q8_k_t* a,
                                         uint8_t scales[8]) {
  int32_t summ = 0;
  for (uint32_t j = 0; j < 8; ++j) {
    uint8_t m;
    decode_q4_k_scale_min(w->scales, j, &scales[j], &m);
    summ += m * (a->bsums[2 * j] + a->bsums[2 * j + 1]);
  }
  return summ;
}

// Q6_K's bias term: 32 x the sum over sub-blocks of scale x activation sum.
static inline int32_t decode_q6_k_bias(const decode_block_q6_k_t* w,
                                       const decode_block_q8_k_t* a) {
  int32_t bias = 0;
  for (uint32_t j = 0; j < 16; ++j) bias += w->scales[j] * a->bsums[j];
  return 32 * bias;
}

DECODE_AVX2 static float decode_dot_q4_k_avx2(const void* weights,
                                              const void* activations,
                                              uint32_t n) {
  const decode_block_q4_k_t* w = weights;
  const decode_block_q8_k_t* a = activations;
  const __m256i low_mask = _mm256_set1_epi8(15);
  float sum = 0.0f;
  for (uint32_t b = 0; b < n / DECODE_QK_K; ++b) {
    uint8_t scales[8];
    const int32_t summ = decode_q4_k_scales(&w[b], &a[b], scales);
    __m256i sumi = _mm256_setzero_si256();
    for (uint32_t c = 0; c < 4; ++c) {
      const __m256i q = _mm256_loadu_si256((const __m256i*)(w[b].qs + 32 * c));
      const __m256i low = _mm256_and_si256(q, low_mask);
      const __m256i high = _mm256_and_si256(_mm256_srli_epi16(q, 4), low_mask);
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
    sum += a[b].d * (_cvtsh_ss(w[b].d) * (float)decode_quant_hsum_i32(sumi) -
                     _cvtsh_ss(w[b].dmin) * (float)summ);
  }
  return sum;
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
  float sum = 0.0f;
  for (uint32_t b = 0; b < n / DECODE_QK_K; ++b) {
    __m256i sumi = _mm256_setzero_si256();
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
    const int32_t total =
        decode_quant_hsum_i32(sumi) - decode_q6_k_bias(&w[b], &a[b]);
    sum += a[b].d * _cvtsh_ss(w[b].d) * (float)total;
  }
  return sum;
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

// Q8_0 and Q4_0 (decode_dot_block32_avx2) two blocks at a time.
DECODE_AVX512 static inline float decode_dot_block32_avx512(
    const uint8_t* w, uint32_t size, bool q4, const decode_block_q8_0_t* a,
    uint32_t blocks) {
  __m512 acc = _mm512_setzero_ps();
  uint32_t b = 0;
  for (; b + 2 <= blocks; b += 2) {
    const uint8_t* first = w + (size_t)b * size;
    const __m512i x = decode_join256(decode_block32_codes(first, q4),
                                     decode_block32_codes(first + size, q4));
    const __m512i y =
        decode_join256(_mm256_loadu_si256((const __m256i*)a[b].qs),
                       _mm256_loadu_si256((const __m256i*)a[b + 1].qs));
    const __m512 d = decode_two_scales(
        decode_block32_scale(first) * _cvtsh_ss(a[b].d),
        decode_block32_scale(first + size) * _cvtsh_ss(a[b + 1].d));
    acc = _mm512_fmadd_ps(d, _mm512_cvtepi32_ps(decode_mul_sum_i8_512(x, y)),
                          acc);
  }
  float sum = _mm512_reduce_add_ps(acc);
  if (b < blocks) {
    sum += decode_dot_block32_avx2(w + (size_t)b * size, size, q4, a + b, 1);
  }
  return sum;
}

DECODE_AVX512 static float decode_dot_q8_0_avx512(const void* weights,
                                                  const void* activations,
                                                  uint32_t n) {
  return decode_dot_block32_avx512(weights, sizeof(decode_block_q8_0_t), false,
                                   activations, n / DECODE_QK8_0);
}

DECODE_AVX512 static float decode_dot_q4_0_avx512(const void* weights,
                                                  const void* activations,
                                                  uint32_t n) {
  return decode_dot_block32_avx512(weights, sizeof(decode_block_q4_0_t), true,
                                   activations, n / DECODE_QK8_0);
}

DECODE_AVX512 static float decode_dot_q4_k_avx512(const void* weights,
                                                  const void* activations,
                                                  uint32_t n) {
  const decode_block_q4_k_t* w = weights;
  const decode_block_q8_k_t* a = activations;
  const __m256i low_mask = _mm256_set1_epi8(15);
  float sum = 0.0f;
  for (uint32_t b = 0; b < n / DECODE_QK_K; ++b) {
    uint8_t scales[8];
    const int32_t summ = decode_q4_k_scales(&w[b], &a[b], scales);
    __m512i sumi = _mm512_setzero_si512();
    for (uint32_t c = 0; c < 4; ++c) {
      // Sub-blocks 2c (low nibbles) and 2c + 1 (high), 64 elements.
      const __m256i q = _mm256_loadu_si256((const __m256i*)(w[b].qs + 32 * c));
      const __m512i codes =
          decode_join256(_mm256_and_si256(q, low_mask),
                         _mm256_and_si256(_mm256_srli_epi16(q, 4), low_mask));
      const __m512i p = _mm512_maddubs_epi16(
          codes, _mm512_loadu_si512((const void*)(a[b].qs + 64 * c)));
      const __m512i s =
          _mm512_mask_blend_epi16(0xFFFF0000u, _mm512_set1_epi16(scales[2 * c]),
                                  _mm512_set1_epi16(scales[2 * c + 1]));
      sumi = _mm512_add_epi32(sumi, _mm512_madd_epi16(p, s));
    }
    sum += a[b].d * (_cvtsh_ss(w[b].d) * (float)_mm512_reduce_add_epi32(sumi) -
                     _cvtsh_ss(w[b].dmin) * (float)summ);
  }
  return sum;
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
  float sum = 0.0f;
  for (uint32_t b = 0; b < n / DECODE_QK_K; ++b) {
    // The 16 scales as int16 in lanes 0..15.
    const __m512i scales16 = _mm512_inserti64x4(
        _mm512_setzero_si512(),
        _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i*)w[b].scales)), 0);
    __m512i sumi = _mm512_setzero_si512();
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
    const int32_t total =
        _mm512_reduce_add_epi32(sumi) - decode_q6_k_bias(&w[b], &a[b]);
    sum += a[b].d * _cvtsh_ss(w[b].d) * (float)total;
  }
  return sum;
}

#endif  // DECODE_QUANT_X86

//===----------------------------------------------------------------------===//
// Selection
//===----------------------------------------------------------------------===//

// Index of a block type in the tables below (-1: not one).
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
    default:
      return -1;
  }
}

static const decode_quant_dot_fn_t kDots[DECODE_SIMD_COUNT][4] = {
    {decode_dot_q8_0_portable, decode_dot_q4_0_portable,
     decode_dot_q4_k_portable, decode_dot_q6_k_portable},
#if defined(DECODE_QUANT_X86)
    {decode_dot_q8_0_avx2, decode_dot_q4_0_avx2, decode_dot_q4_k_avx2,
     decode_dot_q6_k_avx2},
    {decode_dot_q8_0_avx512, decode_dot_q4_0_avx512, decode_dot_q4_k_avx512,
     decode_dot_q6_k_avx512},
#endif
};

// The selected versions (decode_quant_dot_select).
static decode_quant_dot_fn_t decode_quant_dots[4] = {
    decode_dot_q8_0_portable, decode_dot_q4_0_portable,
    decode_dot_q4_k_portable, decode_dot_q6_k_portable};

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

void decode_quant_dot_select(decode_simd_t simd) {
  for (int i = 0; i < 4; ++i) {
    if ((unsigned)simd < DECODE_SIMD_COUNT && kDots[simd][i]) {
      decode_quant_dots[i] = kDots[simd][i];
    }
  }
}

float decode_quant_dot(decode_dtype_t dtype, const void* weights,
                       const void* activations, uint32_t n) {
  return decode_quant_dots[decode_quant_index(dtype)](weights, activations, n);
}
