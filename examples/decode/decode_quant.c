// weft decode example: GGML's quantized blocks (see decode_quant.h).
#include "decode_quant.h"

#include <math.h>
#include <string.h>

#include "decode_checkpoint.h"

_Static_assert(sizeof(decode_block_q8_0_t) == 34, "Q8_0 blocks are 34 bytes");
_Static_assert(sizeof(decode_block_q4_0_t) == 18, "Q4_0 blocks are 18 bytes");
_Static_assert(sizeof(decode_block_q4_1_t) == 20, "Q4_1 blocks are 20 bytes");
_Static_assert(sizeof(decode_block_q5_0_t) == 22, "Q5_0 blocks are 22 bytes");
_Static_assert(sizeof(decode_block_q5_1_t) == 24, "Q5_1 blocks are 24 bytes");
_Static_assert(sizeof(decode_block_q4_k_t) == 144, "Q4_K blocks are 144 bytes");
_Static_assert(sizeof(decode_block_q5_k_t) == 176, "Q5_K blocks are 176 bytes");
_Static_assert(sizeof(decode_block_q6_k_t) == 210, "Q6_K blocks are 210 bytes");
_Static_assert(sizeof(decode_block_q8_k_t) == 292, "Q8_K blocks are 292 bytes");

static inline int decode_round_clamp(float value, int low, int high) {
  const int q = (int)lrintf(value);
  return q < low ? low : q > high ? high : q;
}

// The element of largest magnitude of |x| (its sign kept) and that
// magnitude.
static float decode_signed_max(const float* x, uint32_t n, float* out_amax) {
  float max = 0.0f, amax = 0.0f;
  for (uint32_t i = 0; i < n; ++i) {
    if (fabsf(x[i]) > amax) amax = fabsf(x[i]), max = x[i];
  }
  *out_amax = amax;
  return max;
}

//===----------------------------------------------------------------------===//
// Dequantization
//===----------------------------------------------------------------------===//

static void decode_dequantize_q8_0(const decode_block_q8_0_t* blocks,
                                   uint32_t n, float* out) {
  for (uint32_t b = 0; b < n / DECODE_QK8_0; ++b) {
    const float d = decode_f16_to_f32(blocks[b].d);
    for (uint32_t i = 0; i < DECODE_QK8_0; ++i) {
      out[b * DECODE_QK8_0 + i] = d * (float)blocks[b].qs[i];
    }
  }
}

static void decode_dequantize_q4_0(const decode_block_q4_0_t* blocks,
                                   uint32_t n, float* out) {
  for (uint32_t b = 0; b < n / DECODE_QK8_0; ++b) {
    const float d = decode_f16_to_f32(blocks[b].d);
    float* y = out + b * DECODE_QK8_0;
    for (uint32_t i = 0; i < DECODE_QK8_0 / 2; ++i) {
      y[i] = d * (float)((blocks[b].qs[i] & 15) - 8);
      y[i + 16] = d * (float)((blocks[b].qs[i] >> 4) - 8);
    }
  }
}

// The code (0..31) of element |i| (0..31) of a Q5_0 or Q5_1 block: the
// nibble of |qs| with bit i of the little-endian |qh| above it.
static inline int decode_q5_code(const uint8_t* qs, const uint8_t* qh,
                                 uint32_t i) {
  const int low = i < 16 ? (qs[i] & 15) : (qs[i - 16] >> 4);
  return low | (((qh[i / 8] >> (i % 8)) & 1) << 4);
}

static void decode_dequantize_q4_1(const decode_block_q4_1_t* blocks,
                                   uint32_t n, float* out) {
  for (uint32_t b = 0; b < n / DECODE_QK8_0; ++b) {
    const float d = decode_f16_to_f32(blocks[b].d);
    const float m = decode_f16_to_f32(blocks[b].m);
    float* y = out + b * DECODE_QK8_0;
    for (uint32_t i = 0; i < DECODE_QK8_0 / 2; ++i) {
      y[i] = d * (float)(blocks[b].qs[i] & 15) + m;
      y[i + 16] = d * (float)(blocks[b].qs[i] >> 4) + m;
    }
  }
}

static void decode_dequantize_q5_0(const decode_block_q5_0_t* blocks,
                                   uint32_t n, float* out) {
  for (uint32_t b = 0; b < n / DECODE_QK8_0; ++b) {
    const float d = decode_f16_to_f32(blocks[b].d);
    for (uint32_t i = 0; i < DECODE_QK8_0; ++i) {
      out[b * DECODE_QK8_0 + i] =
          d * (float)(decode_q5_code(blocks[b].qs, blocks[b].qh, i) - 16);
    }
  }
}

static void decode_dequantize_q5_1(const decode_block_q5_1_t* blocks,
                                   uint32_t n, float* out) {
  for (uint32_t b = 0; b < n / DECODE_QK8_0; ++b) {
    const float d = decode_f16_to_f32(blocks[b].d);
    const float m = decode_f16_to_f32(blocks[b].m);
    for (uint32_t i = 0; i < DECODE_QK8_0; ++i) {
      out[b * DECODE_QK8_0 + i] =
          d * (float)decode_q5_code(blocks[b].qs, blocks[b].qh, i) + m;
    }
  }
}

// Q4_K (|five| false) or Q5_K: d sc code - dmin m per sub-block.
static void decode_dequantize_k(const void* blocks, uint32_t n, bool five,
                                float* out) {
  for (uint32_t b = 0; b < n / DECODE_QK_K; ++b) {
    const decode_k_block_t block = decode_k_block(blocks, b, five);
    const float d = decode_f16_to_f32(block.d);
    const float dmin = decode_f16_to_f32(block.dmin);
    float* y = out + b * DECODE_QK_K;
    for (uint32_t c = 0; c < 4; ++c) {
      uint8_t sc0, m0, sc1, m1;
      decode_q4_k_scale_min(block.scales, 2 * c, &sc0, &m0);
      decode_q4_k_scale_min(block.scales, 2 * c + 1, &sc1, &m1);
      const uint8_t* q = block.qs + 32 * c;
      for (uint32_t l = 0; l < 32; ++l) {
        int code0 = q[l] & 15, code1 = q[l] >> 4;
        if (five) {
          code0 |= ((block.qh[l] >> (2 * c)) & 1) << 4;
          code1 |= ((block.qh[l] >> (2 * c + 1)) & 1) << 4;
        }
        y[64 * c + l] = d * sc0 * (float)code0 - dmin * m0;
        y[64 * c + 32 + l] = d * sc1 * (float)code1 - dmin * m1;
      }
    }
  }
}

// The 6-bit value of element |e| (0..255) of a Q6_K block.
static inline int decode_q6_k_value(const decode_block_q6_k_t* block,
                                    uint32_t e) {
  const uint32_t h = e / 128, l = e % 32, part = (e % 128) / 32;
  const uint8_t ql = block->ql[64 * h + l + (part & 1) * 32];
  const uint8_t low = part < 2 ? (ql & 15) : (ql >> 4);
  const uint8_t high = (block->qh[32 * h + l] >> (2 * part)) & 3;
  return (int)(low | (high << 4));
}

static void decode_dequantize_q6_k(const decode_block_q6_k_t* blocks,
                                   uint32_t n, float* out) {
  for (uint32_t b = 0; b < n / DECODE_QK_K; ++b) {
    const decode_block_q6_k_t* block = &blocks[b];
    const float d = decode_f16_to_f32(block->d);
    for (uint32_t e = 0; e < DECODE_QK_K; ++e) {
      out[b * DECODE_QK_K + e] =
          d * block->scales[e / 16] * (float)(decode_q6_k_value(block, e) - 32);
    }
  }
}

void decode_quant_dequantize(decode_dtype_t dtype, const void* row, uint32_t n,
                             float* out) {
  switch (dtype) {
    case DECODE_DTYPE_F32:
      memcpy(out, row, n * sizeof(float));
      break;
    case DECODE_DTYPE_F16:
      for (uint32_t i = 0; i < n; ++i) {
        out[i] = decode_f16_to_f32(((const uint16_t*)row)[i]);
      }
      break;
    case DECODE_DTYPE_Q8_0:
      decode_dequantize_q8_0(row, n, out);
      break;
    case DECODE_DTYPE_Q4_0:
      decode_dequantize_q4_0(row, n, out);
      break;
    case DECODE_DTYPE_Q4_1:
      decode_dequantize_q4_1(row, n, out);
      break;
    case DECODE_DTYPE_Q5_0:
      decode_dequantize_q5_0(row, n, out);
      break;
    case DECODE_DTYPE_Q5_1:
      decode_dequantize_q5_1(row, n, out);
      break;
    case DECODE_DTYPE_Q4_K:
      decode_dequantize_k(row, n, false, out);
      break;
    case DECODE_DTYPE_Q5_K:
      decode_dequantize_k(row, n, true, out);
      break;
    case DECODE_DTYPE_Q6_K:
      decode_dequantize_q6_k(row, n, out);
      break;
    case DECODE_DTYPE_Q4_0_X8:
    case DECODE_DTYPE_Q8_0_X8:
    case DECODE_DTYPE_Q4_K_X8:
    case DECODE_DTYPE_Q6_K_X8:
      // Not a row's form but eight rows' (decode_quant_x8.h): the callers
      // read it through decode_x8_unpack.
      break;
    case DECODE_DTYPE_F32_X16:
    case DECODE_DTYPE_F16_X16:
      // Sixteen rows' (decode_float_x16.h): decode_x16_unpack.
      break;
  }
}

//===----------------------------------------------------------------------===//
// Quantization of weights
//===----------------------------------------------------------------------===//

static void decode_quantize_q8_0(const float* x, uint32_t n,
                                 decode_block_q8_0_t* blocks) {
  // The same as the activations' Q8_0.
  decode_quant_activations_q8_0(x, n, blocks);
}

static void decode_quantize_q4_0(const float* x, uint32_t n,
                                 decode_block_q4_0_t* blocks) {
  for (uint32_t b = 0; b < n / DECODE_QK8_0; ++b) {
    const float* v = x + b * DECODE_QK8_0;
    float amax;
    const float max = decode_signed_max(v, DECODE_QK8_0, &amax);
    // The largest magnitude maps to q = 0 (-8), the full range of 4 bits.
    const float d = max / -8.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    blocks[b].d = decode_f32_to_f16(d);
    for (uint32_t i = 0; i < DECODE_QK8_0 / 2; ++i) {
      const int q0 = decode_round_clamp(v[i] * id + 8.0f, 0, 15);
      const int q1 = decode_round_clamp(v[i + 16] * id + 8.0f, 0, 15);
      blocks[b].qs[i] = (uint8_t)(q0 | (q1 << 4));
    }
  }
}

// Q4_1 (|levels| 15) and Q5_1 (31) alike: m the block's lowest value, d
// its range over |levels|, into |out_d| and |out_m|, and each element's
// code (0..|levels|, the nearest the rounded d and m allow) into |q|.
static void decode_quantize_offset32(const float* v, int levels,
                                     uint16_t* out_d, uint16_t* out_m,
                                     uint8_t q[DECODE_QK8_0]) {
  float low = v[0], high = v[0];
  for (uint32_t i = 1; i < DECODE_QK8_0; ++i) {
    low = fminf(low, v[i]);
    high = fmaxf(high, v[i]);
  }
  *out_d = decode_f32_to_f16((high - low) / (float)levels);
  *out_m = decode_f32_to_f16(low);
  const float d = decode_f16_to_f32(*out_d);
  const float m = decode_f16_to_f32(*out_m);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  for (uint32_t i = 0; i < DECODE_QK8_0; ++i) {
    q[i] = (uint8_t)decode_round_clamp((v[i] - m) * id, 0, levels);
  }
}

// 32 codes of 5 bits as Q5_0's and Q5_1's |qs| and |qh|.
static void decode_pack_q5(const uint8_t q[DECODE_QK8_0], uint8_t qs[16],
                           uint8_t qh[4]) {
  memset(qh, 0, 4);
  for (uint32_t i = 0; i < DECODE_QK8_0 / 2; ++i) {
    qs[i] = (uint8_t)((q[i] & 15) | ((q[i + 16] & 15) << 4));
  }
  for (uint32_t i = 0; i < DECODE_QK8_0; ++i) {
    qh[i / 8] |= (uint8_t)(((q[i] >> 4) & 1) << (i % 8));
  }
}

static void decode_quantize_q4_1(const float* x, uint32_t n,
                                 decode_block_q4_1_t* blocks) {
  for (uint32_t b = 0; b < n / DECODE_QK8_0; ++b) {
    uint8_t q[DECODE_QK8_0];
    decode_quantize_offset32(x + b * DECODE_QK8_0, 15, &blocks[b].d,
                             &blocks[b].m, q);
    for (uint32_t i = 0; i < DECODE_QK8_0 / 2; ++i) {
      blocks[b].qs[i] = (uint8_t)(q[i] | (q[i + 16] << 4));
    }
  }
}

static void decode_quantize_q5_0(const float* x, uint32_t n,
                                 decode_block_q5_0_t* blocks) {
  for (uint32_t b = 0; b < n / DECODE_QK8_0; ++b) {
    const float* v = x + b * DECODE_QK8_0;
    float amax;
    const float max = decode_signed_max(v, DECODE_QK8_0, &amax);
    // As Q4_0: the largest magnitude maps to q = 0 (-16).
    const float d = max / -16.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    blocks[b].d = decode_f32_to_f16(d);
    uint8_t q[DECODE_QK8_0];
    for (uint32_t i = 0; i < DECODE_QK8_0; ++i) {
      q[i] = (uint8_t)decode_round_clamp(v[i] * id + 16.0f, 0, 31);
    }
    decode_pack_q5(q, blocks[b].qs, blocks[b].qh);
  }
}

static void decode_quantize_q5_1(const float* x, uint32_t n,
                                 decode_block_q5_1_t* blocks) {
  for (uint32_t b = 0; b < n / DECODE_QK8_0; ++b) {
    uint8_t q[DECODE_QK8_0];
    decode_quantize_offset32(x + b * DECODE_QK8_0, 31, &blocks[b].d,
                             &blocks[b].m, q);
    decode_pack_q5(q, blocks[b].qs, blocks[b].qh);
  }
}

// Q4_K (|levels| 15) and Q5_K (31) alike: per sub-block x = scale * q -
// min over [min(0, lowest), highest], the scales and mins 6 bits of the
// super-block's d and dmin (into |out_d|, |out_dmin| and the packed
// |out_scales|), each element's code (0..|levels|) into |q|.
static void decode_quantize_k_sub_blocks(const float* v, int levels,
                                         uint16_t* out_d, uint16_t* out_dmin,
                                         uint8_t out_scales[12],
                                         uint8_t q[DECODE_QK_K]) {
  memset(out_scales, 0, 12);
  float scales[8], mins[8], max_scale = 0.0f, max_min = 0.0f;
  for (uint32_t j = 0; j < 8; ++j) {
    float low = 0.0f, high = v[32 * j];
    for (uint32_t l = 0; l < 32; ++l) {
      low = fminf(low, v[32 * j + l]);
      high = fmaxf(high, v[32 * j + l]);
    }
    scales[j] = (high - low) / (float)levels;
    mins[j] = -low;
    max_scale = fmaxf(max_scale, scales[j]);
    max_min = fmaxf(max_min, mins[j]);
  }
  *out_d = decode_f32_to_f16(max_scale / 63.0f);
  *out_dmin = decode_f32_to_f16(max_min / 63.0f);
  const float d = decode_f16_to_f32(*out_d);
  const float dmin = decode_f16_to_f32(*out_dmin);
  for (uint32_t j = 0; j < 8; ++j) {
    const int sc = d > 0.0f ? decode_round_clamp(scales[j] / d, 0, 63) : 0;
    const int m = dmin > 0.0f ? decode_round_clamp(mins[j] / dmin, 0, 63) : 0;
    if (j < 4) {
      out_scales[j] = (uint8_t)sc;
      out_scales[j + 4] = (uint8_t)m;
    } else {
      out_scales[j + 4] = (uint8_t)((sc & 15) | ((m & 15) << 4));
      out_scales[j - 4] |= (uint8_t)((sc >> 4) << 6);
      out_scales[j] |= (uint8_t)((m >> 4) << 6);
    }
    const float step = d * (float)sc;
    const float offset = dmin * (float)m;
    for (uint32_t l = 0; l < 32; ++l) {
      q[32 * j + l] = step > 0.0f
                          ? (uint8_t)decode_round_clamp(
                                (v[32 * j + l] + offset) / step, 0, levels)
                          : 0;
    }
  }
}

static void decode_quantize_q4_k(const float* x, uint32_t n,
                                 decode_block_q4_k_t* blocks) {
  for (uint32_t b = 0; b < n / DECODE_QK_K; ++b) {
    decode_block_q4_k_t* block = &blocks[b];
    uint8_t q[DECODE_QK_K];
    decode_quantize_k_sub_blocks(x + b * DECODE_QK_K, 15, &block->d,
                                 &block->dmin, block->scales, q);
    for (uint32_t c = 0; c < 4; ++c) {
      for (uint32_t l = 0; l < 32; ++l) {
        block->qs[32 * c + l] =
            (uint8_t)(q[64 * c + l] | (q[64 * c + 32 + l] << 4));
      }
    }
  }
}

static void decode_quantize_q5_k(const float* x, uint32_t n,
                                 decode_block_q5_k_t* blocks) {
  for (uint32_t b = 0; b < n / DECODE_QK_K; ++b) {
    decode_block_q5_k_t* block = &blocks[b];
    uint8_t q[DECODE_QK_K];
    decode_quantize_k_sub_blocks(x + b * DECODE_QK_K, 31, &block->d,
                                 &block->dmin, block->scales, q);
    memset(block->qh, 0, sizeof(block->qh));
    for (uint32_t c = 0; c < 4; ++c) {
      for (uint32_t l = 0; l < 32; ++l) {
        const uint8_t q0 = q[64 * c + l], q1 = q[64 * c + 32 + l];
        block->qs[32 * c + l] = (uint8_t)((q0 & 15) | ((q1 & 15) << 4));
        block->qh[l] |=
            (uint8_t)(((q0 >> 4) << (2 * c)) | ((q1 >> 4) << (2 * c + 1)));
      }
    }
  }
}

static void decode_quantize_q6_k(const float* x, uint32_t n,
                                 decode_block_q6_k_t* blocks) {
  for (uint32_t b = 0; b < n / DECODE_QK_K; ++b) {
    const float* v = x + b * DECODE_QK_K;
    decode_block_q6_k_t* block = &blocks[b];
    memset(block, 0, sizeof(*block));
    // Per sub-block of 16 a scale mapping its largest magnitude to -32.
    float scales[16], max_scale = 0.0f;
    for (uint32_t j = 0; j < 16; ++j) {
      float amax;
      scales[j] = decode_signed_max(v + 16 * j, 16, &amax) / -32.0f;
      max_scale = fmaxf(max_scale, fabsf(scales[j]));
    }
    block->d = decode_f32_to_f16(max_scale / 127.0f);
    const float d = decode_f16_to_f32(block->d);
    for (uint32_t j = 0; j < 16; ++j) {
      block->scales[j] =
          (int8_t)(d > 0.0f ? decode_round_clamp(scales[j] / d, -127, 127) : 0);
    }
    for (uint32_t e = 0; e < DECODE_QK_K; ++e) {
      const float step = d * (float)block->scales[e / 16];
      const int q =
          step != 0.0f ? decode_round_clamp(v[e] / step, -32, 31) + 32 : 32;
      const uint32_t h = e / 128, l = e % 32, part = (e % 128) / 32;
      uint8_t* ql = &block->ql[64 * h + l + (part & 1) * 32];
      *ql |= (uint8_t)(part < 2 ? (q & 15) : (q & 15) << 4);
      block->qh[32 * h + l] |= (uint8_t)((q >> 4) << (2 * part));
    }
  }
}

void decode_quant_quantize(decode_dtype_t dtype, const float* x, uint32_t n,
                           void* out_row) {
  switch (dtype) {
    case DECODE_DTYPE_F32:
      memcpy(out_row, x, n * sizeof(float));
      break;
    case DECODE_DTYPE_F16:
      for (uint32_t i = 0; i < n; ++i) {
        ((uint16_t*)out_row)[i] = decode_f32_to_f16(x[i]);
      }
      break;
    case DECODE_DTYPE_Q8_0:
      decode_quantize_q8_0(x, n, out_row);
      break;
    case DECODE_DTYPE_Q4_0:
      decode_quantize_q4_0(x, n, out_row);
      break;
    case DECODE_DTYPE_Q4_1:
      decode_quantize_q4_1(x, n, out_row);
      break;
    case DECODE_DTYPE_Q5_0:
      decode_quantize_q5_0(x, n, out_row);
      break;
    case DECODE_DTYPE_Q5_1:
      decode_quantize_q5_1(x, n, out_row);
      break;
    case DECODE_DTYPE_Q4_K:
      decode_quantize_q4_k(x, n, out_row);
      break;
    case DECODE_DTYPE_Q5_K:
      decode_quantize_q5_k(x, n, out_row);
      break;
    case DECODE_DTYPE_Q6_K:
      decode_quantize_q6_k(x, n, out_row);
      break;
    case DECODE_DTYPE_Q4_0_X8:
    case DECODE_DTYPE_Q8_0_X8:
    case DECODE_DTYPE_Q4_K_X8:
    case DECODE_DTYPE_Q6_K_X8:
      // Not a row's form but eight rows' (decode_quant_x8.h): written by
      // decode_x8_pack from plain rows.
      break;
    case DECODE_DTYPE_F32_X16:
    case DECODE_DTYPE_F16_X16:
      // Sixteen rows' (decode_float_x16.h): decode_x16_pack.
      break;
  }
}

//===----------------------------------------------------------------------===//
// Activations
//===----------------------------------------------------------------------===//

void decode_quant_activations_q8_0(const float* x, uint32_t n,
                                   decode_block_q8_0_t* out_blocks) {
  for (uint32_t b = 0; b < n / DECODE_QK8_0; ++b) {
    const float* v = x + b * DECODE_QK8_0;
    float amax = 0.0f;
    for (uint32_t i = 0; i < DECODE_QK8_0; ++i) amax = fmaxf(amax, fabsf(v[i]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    out_blocks[b].d = decode_f32_to_f16(d);
    for (uint32_t i = 0; i < DECODE_QK8_0; ++i) {
      out_blocks[b].qs[i] = (int8_t)decode_round_clamp(v[i] * id, -127, 127);
    }
  }
}

void decode_quant_activations_q8_k(const float* x, uint32_t n,
                                   decode_block_q8_k_t* out_blocks) {
  for (uint32_t b = 0; b < n / DECODE_QK_K; ++b) {
    const float* v = x + b * DECODE_QK_K;
    decode_block_q8_k_t* block = &out_blocks[b];
    float amax = 0.0f;
    for (uint32_t i = 0; i < DECODE_QK_K; ++i) amax = fmaxf(amax, fabsf(v[i]));
    block->d = amax / 127.0f;
    const float id = block->d != 0.0f ? 1.0f / block->d : 0.0f;
    for (uint32_t j = 0; j < DECODE_QK_K / 16; ++j) {
      int sum = 0;
      for (uint32_t i = 16 * j; i < 16 * j + 16; ++i) {
        block->qs[i] = (int8_t)decode_round_clamp(v[i] * id, -127, 127);
        sum += block->qs[i];
      }
      block->bsums[j] = (int16_t)sum;
    }
  }
}
