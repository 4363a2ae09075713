// weft decode example: GGML's quantized block formats.
//
// A quantized row is a whole number of blocks laid end to end, exactly as
// a GGUF file stores them (little-endian, f16 scales as IEEE half bits):
//
//   Q8_0  32 elements, 34 bytes: d (f16), qs[32] (int8);
//         x[i] = d * qs[i].
//   Q4_0  32 elements, 18 bytes: d (f16), qs[16]: element i (< 16) in the
//         low nibble of qs[i], element i + 16 in its high nibble;
//         x = d * (q - 8).
//   Q4_1  32 elements, 20 bytes: d, m (f16), qs[16] (nibbles as Q4_0's);
//         x = d * q + m.
//   Q5_0  32 elements, 22 bytes: d (f16), qh[4], qs[16]: the low four
//         bits of each code as Q4_0's nibbles, the fifth bit of element i
//         bit i of qh read as a little-endian uint32; x = d * (q - 16).
//   Q5_1  32 elements, 24 bytes: d, m (f16), qh[4], qs[16] (the codes as
//         Q5_0's); x = d * q + m.
//   Q4_K  256 elements, 144 bytes: d, dmin (f16), scales[12], qs[128].
//         Eight sub-blocks of 32, each with a 6-bit scale sc and a 6-bit
//         min m packed in scales[] (sub-block j < 4: sc = scales[j] & 63,
//         m = scales[j + 4] & 63; j >= 4: sc = (scales[j + 4] & 15) |
//         (scales[j - 4] >> 6) << 4, m = (scales[j + 4] >> 4) |
//         (scales[j] >> 6) << 4); x = d * sc * q - dmin * m. Elements
//         64c .. 64c + 31 (sub-block 2c) are the low nibbles of qs[32c ..
//         32c + 31], elements 64c + 32 .. 64c + 63 (sub-block 2c + 1)
//         their high nibbles.
//   Q5_K  256 elements, 176 bytes: d, dmin (f16), scales[12] (Q4_K's
//         packing), qh[32], qs[128]: Q4_K's nibbles with a fifth bit above
//         each, for element 64c + l (l < 32: sub-block 2c) bit 2c of
//         qh[l], for element 64c + 32 + l (sub-block 2c + 1) bit 2c + 1;
//         x = d * sc * q - dmin * m.
//   Q6_K  256 elements, 210 bytes: ql[128], qh[64], scales[16] (int8),
//         d (f16). Sixteen sub-blocks of 16 with scale scales[i / 16];
//         x = d * scales[i / 16] * (q - 32), q 6 bits: in each half h of
//         128 elements (ql + 64h, qh + 32h), for l < 32, element l is the
//         low nibble of ql[l] with bits 0-1 of qh[l] above it, element
//         l + 32 the low nibble of ql[l + 32] with bits 2-3, element
//         l + 64 the high nibble of ql[l] with bits 4-5, element l + 96
//         the high nibble of ql[l + 32] with bits 6-7.
//
// Activations are quantized too, the way GGML's reference does, so a dot
// product is integer multiply-adds per block and one float scale per
// block (decode_quant_dot.h): Q8_0 activations for Q8_0, Q4_0, Q4_1, Q5_0
// and Q5_1 weights, Q8_K activations for Q4_K, Q5_K and Q6_K weights
// (GGML pairs Q4_1 and Q5_1 with Q8_1, Q8_0 with the block's d * sum of
// its codes beside it; here the product sums the Q8_0 codes itself, so
// one activation form serves every 32-element type: decode_quant_dot.h):
//
//   Q8_K  256 elements, 292 bytes: d (f32), qs[256] (int8), bsums[16]
//         (int16, the sum of each 16 qs); x[i] = d * qs[i].
//
// Both activation formats take d = max |x| / 127 and q = round(x / d).
// The block types' dtype numbers and sizes are decode_model.h's
// decode_dtype_*.
#ifndef WEFT_EXAMPLES_DECODE_DECODE_QUANT_H_
#define WEFT_EXAMPLES_DECODE_DECODE_QUANT_H_

#include <stdbool.h>
#include <stdint.h>

#include "decode_model.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DECODE_QK8_0 32u  // elements of a Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 block
#define DECODE_QK_K 256u  // elements of a K super-block

typedef struct decode_block_q8_0_t {
  uint16_t d;
  int8_t qs[DECODE_QK8_0];
} decode_block_q8_0_t;

typedef struct decode_block_q4_0_t {
  uint16_t d;
  uint8_t qs[DECODE_QK8_0 / 2];
} decode_block_q4_0_t;

typedef struct decode_block_q4_1_t {
  uint16_t d;
  uint16_t m;
  uint8_t qs[DECODE_QK8_0 / 2];
} decode_block_q4_1_t;

typedef struct decode_block_q5_0_t {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[DECODE_QK8_0 / 2];
} decode_block_q5_0_t;

typedef struct decode_block_q5_1_t {
  uint16_t d;
  uint16_t m;
  uint8_t qh[4];
  uint8_t qs[DECODE_QK8_0 / 2];
} decode_block_q5_1_t;

typedef struct decode_block_q4_k_t {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qs[DECODE_QK_K / 2];
} decode_block_q4_k_t;

typedef struct decode_block_q5_k_t {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qh[DECODE_QK_K / 8];
  uint8_t qs[DECODE_QK_K / 2];
} decode_block_q5_k_t;

typedef struct decode_block_q6_k_t {
  uint8_t ql[DECODE_QK_K / 2];
  uint8_t qh[DECODE_QK_K / 4];
  int8_t scales[DECODE_QK_K / 16];
  uint16_t d;
} decode_block_q6_k_t;

typedef struct decode_block_q8_k_t {
  float d;
  int8_t qs[DECODE_QK_K];
  int16_t bsums[DECODE_QK_K / 16];
} decode_block_q8_k_t;

// The scale and min of Q4_K (and Q5_K) sub-block |j| (0..7) from
// |scales|.
static inline void decode_q4_k_scale_min(const uint8_t* scales, uint32_t j,
                                         uint8_t* out_scale, uint8_t* out_min) {
  if (j < 4) {
    *out_scale = scales[j] & 63;
    *out_min = scales[j + 4] & 63;
  } else {
    *out_scale = (uint8_t)((scales[j + 4] & 15) | ((scales[j - 4] >> 6) << 4));
    *out_min = (uint8_t)((scales[j + 4] >> 4) | ((scales[j] >> 6) << 4));
  }
}

// Block |b| of a Q4_K (|five| false) or Q5_K row at |weights|, for the
// code that serves both: the same scales, mins and nibbles, Q5_K adding
// each code's fifth bit (bit j of qh[l] for sub-block j); |qh| is NULL
// for Q4_K.
typedef struct decode_k_block_t {
  uint16_t d;
  uint16_t dmin;
  const uint8_t* scales;
  const uint8_t* qh;
  const uint8_t* qs;
} decode_k_block_t;

static inline decode_k_block_t decode_k_block(const void* weights, uint32_t b,
                                              bool five) {
  if (five) {
    const decode_block_q5_k_t* w = (const decode_block_q5_k_t*)weights + b;
    return (decode_k_block_t){w->d, w->dmin, w->scales, w->qh, w->qs};
  }
  const decode_block_q4_k_t* w = (const decode_block_q4_k_t*)weights + b;
  return (decode_k_block_t){w->d, w->dmin, w->scales, NULL, w->qs};
}

// Dequantizes |n| elements (a multiple of the block) of |dtype| at |row|
// into |out|. F32 and F16 are copied and converted; the block types are
// decoded as above. The interleaved forms (decode_quant_x8.h,
// decode_float_x16.h) are not a row's: |out| is left as it is
// (decode_x8_unpack and decode_x16_unpack give the rows back).
void decode_quant_dequantize(decode_dtype_t dtype, const void* row, uint32_t n,
                             float* out);

// Quantizes |n| weights (a multiple of the block) to |dtype| blocks at
// |out_row| (decode_dtype_bytes(dtype, n) bytes), as a GGUF writer does:
// Q8_0 d = max |x| / 127; Q4_0 d = the value of largest magnitude / -8,
// Q5_0 the same / -16; Q4_1 and Q5_1 m = the lowest value, d = the range
// / 15 (/ 31); Q4_K and Q5_K per sub-block a scale and a min over its
// range, both rounded to 6 bits of the super-block's d and dmin; Q6_K
// per sub-block a scale of max |x| / 32 rounded to int8 of the
// super-block's d. Every q is the nearest the scales allow. F32 and F16
// are stored as such; the interleaved forms write nothing
// (decode_x8_pack and decode_x16_pack make them from plain rows).
void decode_quant_quantize(decode_dtype_t dtype, const float* x, uint32_t n,
                           void* out_row);

// The activations' formats: Q8_0 blocks (|n| a multiple of 32) and Q8_K
// blocks (a multiple of 256) of |x| into |out_blocks|.
void decode_quant_activations_q8_0(const float* x, uint32_t n,
                                   decode_block_q8_0_t* out_blocks);
void decode_quant_activations_q8_k(const float* x, uint32_t n,
                                   decode_block_q8_k_t* out_blocks);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_EXAMPLES_DECODE_DECODE_QUANT_H_
