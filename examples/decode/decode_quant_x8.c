// weft decode example: Q4_0, Q8_0 and Q4_K rows interleaved by eight
// (decode_quant_x8.h).
#include "decode_quant_x8.h"

#include <math.h>
#include <string.h>

#include "decode_checkpoint.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define DECODE_X8_X86 1
#include <immintrin.h>
#endif

// Block |b| of column |c| of Q8_0 |activations|.
#define X8_Q8_0(activations, c, b) \
  (&((const decode_block_q8_0_t*)(activations)[c])[b])
// Block |b| of column |c| of Q8_K |activations|.
#define X8_Q8_K(activations, c, b) \
  (&((const decode_block_q8_k_t*)(activations)[c])[b])
// Blocks whose activation sums (and AVX2's scales) one pass keeps, on
// the stack: 2 KiB each at 8 columns.
#define X8_CHUNK 64u

// The bytes of one row's block of |x8|'s stored type, and of its codes.
static inline uint32_t x8_plain_bytes(uint32_t x8) {
  return x8 == DECODE_DTYPE_Q8_0_X8   ? 34u
         : x8 == DECODE_DTYPE_Q4_K_X8 ? 144u
         : x8 == DECODE_DTYPE_Q6_K_X8 ? 210u
                                      : 18u;
}
// Elements of one row's block.
static inline uint32_t x8_block_elements(uint32_t x8) {
  return x8 == DECODE_DTYPE_Q4_K_X8 || x8 == DECODE_DTYPE_Q6_K_X8
             ? DECODE_QK_K
             : DECODE_QK8_0;
}
static inline uint32_t x8_code_bytes(uint32_t x8) {
  return x8 == DECODE_DTYPE_Q4_K_X8 ? 128u : x8_plain_bytes(x8) - 2u;
}

uint32_t decode_x8_form(uint32_t dtype) {
  return dtype == DECODE_DTYPE_Q4_0   ? DECODE_DTYPE_Q4_0_X8
         : dtype == DECODE_DTYPE_Q8_0 ? DECODE_DTYPE_Q8_0_X8
         : dtype == DECODE_DTYPE_Q4_K ? DECODE_DTYPE_Q4_K_X8
         : dtype == DECODE_DTYPE_Q6_K ? DECODE_DTYPE_Q6_K_X8
                                      : 0u;
}

//===----------------------------------------------------------------------===//
// Layout
//===----------------------------------------------------------------------===//

// Byte i of row j's codes within a block of eight: piece i / 4 (32 bytes
// each, after the 16 bytes of scales), row j's 4 bytes in it.
static inline uint32_t x8_code_offset(uint32_t j, uint32_t i) {
  return 2u * DECODE_X8_ROWS + (i / 4u) * 32u + 4u * j + i % 4u;
}

// Q4_K's block of eight (1152 bytes, 8 x 144): the rows' d (16 bytes),
// dmin (16), their packed scales as three 32-byte vectors of the 4-byte
// words 0, 1 and 2 of each row's 12 (so the unpacking runs for 8 rows at
// once, a row a lane), then the 128 code bytes of each row in pieces.
#define X8_Q4_K_HEADER 128u
#define X8_Q4_K_BLOCK (DECODE_X8_ROWS * 144u)

// Q6_K's block of eight (1680 bytes, 8 x 210): the rows' d (16 bytes),
// their 16 int8 scales in 4 pieces of 32 bytes (piece p: each row's
// scales 4p..4p+3, a row a lane), then each row's 256 6-bit codes (q + 32)
// as Q4_K's nibbles: 32 pieces of low 4 bits (piece 8k + p, byte i of
// row j: element 64k + 4p + i in the low nibble, 64k + 32 + 4p + i in the
// high), and 16 pieces of their top 2 bits (piece 4k + m, byte i of row
// j, bits 2t and 2t + 1: those of code vector v = 4m + t at byte i, where
// vector v < 8 is piece 8k + v's low nibbles, v >= 8 piece 8k + v - 8's
// high). Code vector v of chunk k then meets activation word 16k + v,
// and the four of a 16-element scale group are v = 4q .. 4q + 3.
#define X8_Q6_K_BLOCK (DECODE_X8_ROWS * 210u)
#define X8_Q6_K_SCALES 16u
#define X8_Q6_K_LOW 144u
#define X8_Q6_K_HIGH 1168u

// Element e's 6-bit code in a plain Q6_K block (ql[128], qh[64],
// scales[16], d), and its setter.
static inline uint32_t x8_q6_k_plain_get(const uint8_t* block, uint32_t e) {
  const uint32_t h = e / 128, l = e % 32, part = (e % 128) / 32;
  const uint8_t ql = block[64 * h + l + (part & 1) * 32];
  const uint32_t low = part < 2 ? (ql & 15u) : (ql >> 4);
  const uint32_t high = (block[128 + 32 * h + l] >> (2 * part)) & 3u;
  return low | high << 4;
}
static inline void x8_q6_k_plain_set(uint8_t* block, uint32_t e,
                                     uint32_t code) {
  const uint32_t h = e / 128, l = e % 32, part = (e % 128) / 32;
  uint8_t* ql = &block[64 * h + l + (part & 1) * 32];
  const uint32_t shift = part < 2 ? 0u : 4u;
  *ql = (uint8_t)((*ql & ~(15u << shift)) | (code & 15u) << shift);
  uint8_t* qh = &block[128 + 32 * h + l];
  *qh = (uint8_t)((*qh & ~(3u << (2 * part))) | (code >> 4) << (2 * part));
}

// Where element e of row j lies in a Q6_K block of eight: the byte of its
// low 4 bits and their shift, the byte of its top 2 and theirs.
typedef struct x8_q6_k_place_t {
  uint32_t low, low_shift, high, high_shift;
} x8_q6_k_place_t;
static inline x8_q6_k_place_t x8_q6_k_place(uint32_t j, uint32_t e) {
  const uint32_t k = e / 64, r = e % 64, i = r % 4;
  const uint32_t v = r < 32 ? r / 4 : 8 + (r - 32) / 4;
  x8_q6_k_place_t place;
  place.low = X8_Q6_K_LOW + (8 * k + v % 8) * 32 + 4 * j + i;
  place.low_shift = v < 8 ? 0u : 4u;
  place.high = X8_Q6_K_HIGH + (4 * k + v / 4) * 32 + 4 * j + i;
  place.high_shift = 2 * (v % 4);
  return place;
}
static inline uint32_t x8_q6_k_get(const uint8_t* x8, uint32_t j,
                                   uint32_t e) {
  const x8_q6_k_place_t p = x8_q6_k_place(j, e);
  return ((x8[p.low] >> p.low_shift) & 15u) |
         ((x8[p.high] >> p.high_shift) & 3u) << 4;
}

static void x8_q6_k_convert_block(uint8_t* plain, uint64_t plain_stride,
                                  uint8_t* x8, bool to_x8) {
  if (to_x8) memset(x8, 0, X8_Q6_K_BLOCK);
  for (uint32_t j = 0; j < DECODE_X8_ROWS; ++j) {
    uint8_t* row = plain + j * plain_stride;
    if (to_x8) {
      memcpy(x8 + 2 * j, row + 208, 2);
      for (uint32_t p = 0; p < 4; ++p) {
        memcpy(x8 + X8_Q6_K_SCALES + 32 * p + 4 * j, row + 192 + 4 * p, 4);
      }
      for (uint32_t e = 0; e < DECODE_QK_K; ++e) {
        const uint32_t code = x8_q6_k_plain_get(row, e);
        const x8_q6_k_place_t p = x8_q6_k_place(j, e);
        x8[p.low] |= (uint8_t)((code & 15u) << p.low_shift);
        x8[p.high] |= (uint8_t)((code >> 4) << p.high_shift);
      }
    } else {
      memcpy(row + 208, x8 + 2 * j, 2);
      for (uint32_t p = 0; p < 4; ++p) {
        memcpy(row + 192 + 4 * p, x8 + X8_Q6_K_SCALES + 32 * p + 4 * j, 4);
      }
      for (uint32_t e = 0; e < DECODE_QK_K; ++e) {
        x8_q6_k_plain_set(row, e, x8_q6_k_get(x8, j, e));
      }
    }
  }
}

// Rewrites (|to_x8|) or restores one block index of a group of eight:
// |plain| the 8 rows' blocks |plain_stride| bytes apart, |x8| the block of
// eight.
static void x8_convert_block(uint32_t form, uint8_t* plain,
                             uint64_t plain_stride, uint8_t* x8, bool to_x8) {
  if (form == DECODE_DTYPE_Q6_K_X8) {
    x8_q6_k_convert_block(plain, plain_stride, x8, to_x8);
    return;
  }
  const bool k = form == DECODE_DTYPE_Q4_K_X8;
  const uint32_t code_bytes = x8_code_bytes(form);
  const uint32_t header = k ? X8_Q4_K_HEADER : 2u * DECODE_X8_ROWS;
  const uint32_t plain_codes = k ? 16u : 2u;  // where a row's codes start
  for (uint32_t j = 0; j < DECODE_X8_ROWS; ++j) {
    uint8_t* row = plain + j * plain_stride;
    // (x8 offset, plain offset, bytes) of the row's scales.
    const uint32_t moves[5][3] = {{2u * j, 0, 2},
                                  {16u + 2u * j, 2, 2},
                                  {32u + 4u * j, 4, 4},
                                  {64u + 4u * j, 8, 4},
                                  {96u + 4u * j, 12, 4}};
    for (uint32_t m = 0; m < (k ? 5u : 1u); ++m) {
      if (to_x8) {
        memcpy(x8 + moves[m][0], row + moves[m][1], moves[m][2]);
      } else {
        memcpy(row + moves[m][1], x8 + moves[m][0], moves[m][2]);
      }
    }
    for (uint32_t i = 0; i < code_bytes; i += 4) {
      uint8_t* piece = x8 + header + (i / 4u) * 32u + 4u * j;
      if (to_x8) {
        memcpy(piece, row + plain_codes + i, 4);
      } else {
        memcpy(row + plain_codes + i, piece, 4);
      }
    }
  }
}

void decode_x8_pack(uint32_t x8, void* matrix, uint32_t rows, uint32_t cols,
                    void* scratch) {
  const uint32_t plain_bytes = x8_plain_bytes(x8);
  const uint32_t blocks = cols / x8_block_elements(x8);
  const uint64_t row_bytes = (uint64_t)blocks * plain_bytes;
  const uint64_t group_bytes = row_bytes * DECODE_X8_ROWS;
  for (uint32_t g = 0; g < rows / DECODE_X8_ROWS; ++g) {
    uint8_t* group = (uint8_t*)matrix + g * group_bytes;
    memcpy(scratch, group, group_bytes);
    for (uint32_t b = 0; b < blocks; ++b) {
      x8_convert_block(
          x8, (uint8_t*)scratch + (uint64_t)b * plain_bytes, row_bytes,
          group + (uint64_t)b * DECODE_X8_ROWS * plain_bytes, true);
    }
  }
}

void decode_x8_unpack(uint32_t x8, const void* group, uint32_t cols,
                      void* out) {
  const uint32_t plain_bytes = x8_plain_bytes(x8);
  const uint32_t blocks = cols / x8_block_elements(x8);
  const uint64_t row_bytes = (uint64_t)blocks * plain_bytes;
  for (uint32_t b = 0; b < blocks; ++b) {
    x8_convert_block(
        x8, (uint8_t*)out + (uint64_t)b * plain_bytes, row_bytes,
        (uint8_t*)group + (uint64_t)b * DECODE_X8_ROWS * plain_bytes, false);
  }
}

// The sums of the codes of blocks |first| .. |first| + |count| of each
// column: the 8 in q - 8, applied once per block.
static void x8_activation_sums(const void* const* activations, uint32_t columns,
                               uint32_t first, uint32_t count,
                               int32_t sums[][X8_CHUNK]) {
  for (uint32_t c = 0; c < columns; ++c) {
    for (uint32_t b = 0; b < count; ++b) {
      int32_t sum = 0;
      for (uint32_t i = 0; i < DECODE_QK8_0; ++i) {
        sum += X8_Q8_0(activations, c, first + b)->qs[i];
      }
      sums[c][b] = sum;
    }
  }
}

//===----------------------------------------------------------------------===//
// Portable
//===----------------------------------------------------------------------===//

// Bytes of a block of eight of Q4_0 and of Q8_0.
#define X8_Q4_0_PLAIN 18u
#define X8_Q4_0_BLOCK (DECODE_X8_ROWS * 18u)
#define X8_Q8_0_PLAIN 34u
#define X8_Q8_0_BLOCK (DECODE_X8_ROWS * 34u)

static void decode_q4_0_x8_dot_portable(const void* matrix, uint32_t cols,
                                        uint32_t first, uint32_t count,
                                        const void* const* activations,
                                        uint32_t columns, float* out,
                                        uint32_t out_stride) {
  const uint32_t blocks = cols / DECODE_QK8_0;
  const uint8_t* base =
      (const uint8_t*)matrix + (uint64_t)first * blocks * X8_Q4_0_PLAIN;
  int32_t sums[DECODE_X8_COLUMNS][X8_CHUNK];
  for (uint32_t g = 0; g < count / DECODE_X8_ROWS; ++g) {
    const uint8_t* group = base + (uint64_t)g * blocks * X8_Q4_0_BLOCK;
    float acc[DECODE_X8_COLUMNS][DECODE_X8_ROWS] = {{0}};
    for (uint32_t chunk = 0; chunk < blocks; chunk += X8_CHUNK) {
      const uint32_t n = blocks - chunk < X8_CHUNK ? blocks - chunk : X8_CHUNK;
      x8_activation_sums(activations, columns, chunk, n, sums);
      for (uint32_t b = chunk; b < chunk + n; ++b) {
        const uint8_t* block = group + (uint64_t)b * X8_Q4_0_BLOCK;
        for (uint32_t c = 0; c < columns; ++c) {
          const decode_block_q8_0_t* a = X8_Q8_0(activations, c, b);
          const float da = decode_f16_to_f32(a->d);
          for (uint32_t j = 0; j < DECODE_X8_ROWS; ++j) {
            int32_t s = -8 * sums[c][b - chunk];
            for (uint32_t i = 0; i < 16; ++i) {
              const uint8_t byte = block[x8_code_offset(j, i)];
              s += (byte & 15) * a->qs[i] + (byte >> 4) * a->qs[i + 16];
            }
            uint16_t dw;
            memcpy(&dw, block + 2u * j, sizeof(dw));
            acc[c][j] = fmaf((float)s, decode_f16_to_f32(dw) * da, acc[c][j]);
          }
        }
      }
    }
    for (uint32_t c = 0; c < columns; ++c) {
      memcpy(out + (uint64_t)c * out_stride + g * DECODE_X8_ROWS, acc[c],
             sizeof(acc[c]));
    }
  }
}

static void decode_q8_0_x8_dot_portable(const void* matrix, uint32_t cols,
                                        uint32_t first, uint32_t count,
                                        const void* const* activations,
                                        uint32_t columns, float* out,
                                        uint32_t out_stride) {
  const uint32_t blocks = cols / DECODE_QK8_0;
  const uint8_t* base =
      (const uint8_t*)matrix + (uint64_t)first * blocks * X8_Q8_0_PLAIN;
  for (uint32_t g = 0; g < count / DECODE_X8_ROWS; ++g) {
    const uint8_t* group = base + (uint64_t)g * blocks * X8_Q8_0_BLOCK;
    float acc[DECODE_X8_COLUMNS][DECODE_X8_ROWS] = {{0}};
    for (uint32_t b = 0; b < blocks; ++b) {
      const uint8_t* block = group + (uint64_t)b * X8_Q8_0_BLOCK;
      for (uint32_t c = 0; c < columns; ++c) {
        const decode_block_q8_0_t* a = X8_Q8_0(activations, c, b);
        const float da = decode_f16_to_f32(a->d);
        for (uint32_t j = 0; j < DECODE_X8_ROWS; ++j) {
          int32_t s = 0;
          for (uint32_t i = 0; i < DECODE_QK8_0; ++i) {
            s += (int8_t)block[x8_code_offset(j, i)] * a->qs[i];
          }
          uint16_t dw;
          memcpy(&dw, block + 2u * j, sizeof(dw));
          acc[c][j] = fmaf((float)s, decode_f16_to_f32(dw) * da, acc[c][j]);
        }
      }
    }
    for (uint32_t c = 0; c < columns; ++c) {
      memcpy(out + (uint64_t)c * out_stride + g * DECODE_X8_ROWS, acc[c],
             sizeof(acc[c]));
    }
  }
}

// Row |j|'s Q4_K block header from a block of eight: its 12 packed
// scale bytes.
static void x8_q4_k_scales(const uint8_t* block, uint32_t j,
                           uint8_t scales[12]) {
  memcpy(scales, block + 32u + 4u * j, 4);
  memcpy(scales + 4, block + 64u + 4u * j, 4);
  memcpy(scales + 8, block + 96u + 4u * j, 4);
}

// Per row and super-block: sumi = sum_j sc_j sum(q a) over sub-block j,
// summ = sum_j m_j (the activation's two 16-element sums of sub-block
// j); then acc += sumi (d d_a), acc -= summ (dmin d_a), fused each.
static void decode_q4_k_x8_dot_portable(const void* matrix, uint32_t cols,
                                        uint32_t first, uint32_t count,
                                        const void* const* activations,
                                        uint32_t columns, float* out,
                                        uint32_t out_stride) {
  const uint32_t blocks = cols / DECODE_QK_K;
  const uint8_t* base =
      (const uint8_t*)matrix + (uint64_t)first * blocks * 144u;
  for (uint32_t g = 0; g < count / DECODE_X8_ROWS; ++g) {
    const uint8_t* group = base + (uint64_t)g * blocks * X8_Q4_K_BLOCK;
    float acc[DECODE_X8_COLUMNS][DECODE_X8_ROWS] = {{0}};
    for (uint32_t b = 0; b < blocks; ++b) {
      const uint8_t* block = group + (uint64_t)b * X8_Q4_K_BLOCK;
      for (uint32_t j = 0; j < DECODE_X8_ROWS; ++j) {
        uint8_t packed[12];
        x8_q4_k_scales(block, j, packed);
        uint16_t d, dmin;
        memcpy(&d, block + 2u * j, 2);
        memcpy(&dmin, block + 16u + 2u * j, 2);
        for (uint32_t c = 0; c < columns; ++c) {
          const decode_block_q8_k_t* a = X8_Q8_K(activations, c, b);
          int32_t sumi = 0, summ = 0;
          for (uint32_t sub = 0; sub < 8; ++sub) {
            uint8_t sc, m;
            decode_q4_k_scale_min(packed, sub, &sc, &m);
            int32_t s = 0;
            for (uint32_t l = 0; l < 32; ++l) {
              // Sub-block sub: nibbles (low for even, high for odd) of
              // code bytes 32 (sub / 2) ..
              const uint32_t i = 32u * (sub / 2) + l;
              const uint8_t byte =
                  block[X8_Q4_K_HEADER + (i / 4u) * 32u + 4u * j + i % 4u];
              s += ((byte >> (4 * (sub & 1))) & 15) * a->qs[32 * sub + l];
            }
            sumi += sc * s;
            summ += m * (a->bsums[2 * sub] + a->bsums[2 * sub + 1]);
          }
          acc[c][j] = fmaf((float)sumi, decode_f16_to_f32(d) * a->d, acc[c][j]);
          acc[c][j] =
              fmaf(-(float)summ, decode_f16_to_f32(dmin) * a->d, acc[c][j]);
        }
      }
    }
    for (uint32_t c = 0; c < columns; ++c) {
      memcpy(out + (uint64_t)c * out_stride + g * DECODE_X8_ROWS, acc[c],
             sizeof(acc[c]));
    }
  }
}

// Per row and super-block: the exact integer sum over the 16 scale groups
// of sc_g (sum(u a) - 32 bsum_g), u the 6-bit code (q + 32) and bsum_g
// the activation's group sum; then acc += sum (d d_a), fused.
static void decode_q6_k_x8_dot_portable(const void* matrix, uint32_t cols,
                                        uint32_t first, uint32_t count,
                                        const void* const* activations,
                                        uint32_t columns, float* out,
                                        uint32_t out_stride) {
  const uint32_t blocks = cols / DECODE_QK_K;
  const uint8_t* base =
      (const uint8_t*)matrix + (uint64_t)first * blocks * 210u;
  for (uint32_t g = 0; g < count / DECODE_X8_ROWS; ++g) {
    const uint8_t* group = base + (uint64_t)g * blocks * X8_Q6_K_BLOCK;
    float acc[DECODE_X8_COLUMNS][DECODE_X8_ROWS] = {{0}};
    for (uint32_t b = 0; b < blocks; ++b) {
      const uint8_t* block = group + (uint64_t)b * X8_Q6_K_BLOCK;
      for (uint32_t j = 0; j < DECODE_X8_ROWS; ++j) {
        uint16_t d;
        memcpy(&d, block + 2u * j, 2);
        for (uint32_t c = 0; c < columns; ++c) {
          const decode_block_q8_k_t* a = X8_Q8_K(activations, c, b);
          int32_t total = 0;
          for (uint32_t q = 0; q < DECODE_QK_K / 16; ++q) {
            const int32_t sc =
                (int8_t)block[X8_Q6_K_SCALES + 32u * (q / 4) + 4u * j + q % 4];
            int32_t sum = 0;
            for (uint32_t e = 16 * q; e < 16 * q + 16; ++e) {
              sum += (int32_t)x8_q6_k_get(block, j, e) * a->qs[e];
            }
            total += sc * (sum - 32 * a->bsums[q]);
          }
          acc[c][j] =
              fmaf((float)total, decode_f16_to_f32(d) * a->d, acc[c][j]);
        }
      }
    }
    for (uint32_t c = 0; c < columns; ++c) {
      memcpy(out + (uint64_t)c * out_stride + g * DECODE_X8_ROWS, acc[c],
             sizeof(acc[c]));
    }
  }
}

#if defined(DECODE_X8_X86)

//===----------------------------------------------------------------------===//
// AVX2, and AVX-512 VNNI on 256 bits
//===----------------------------------------------------------------------===//

#define X8_AVX2 __attribute__((target("avx2,fma,f16c")))
#define X8_VNNI \
  __attribute__((target("avx512f,avx512vl,avx512vnni,avx2,fma,f16c")))

// One block of eight (the 16 bytes of scales, then 4 pieces of 32 bytes)
// unpacked: 8 vectors of unsigned codes, piece p's low nibbles in lo[p]
// (elements 4p..4p+3 of each row), its high ones in hi[p] (16 + 4p..).
typedef struct x8_codes_t {
  __m256i lo[4], hi[4];
} x8_codes_t;

X8_AVX2 static inline x8_codes_t x8_unpack(const uint8_t* block) {
  const __m256i mask = _mm256_set1_epi8(15);
  x8_codes_t codes;
  for (int p = 0; p < 4; ++p) {
    const __m256i raw =
        _mm256_loadu_si256((const __m256i*)(block + 16 + 32 * p));
    codes.lo[p] = _mm256_and_si256(raw, mask);
    codes.hi[p] = _mm256_and_si256(_mm256_srli_epi16(raw, 4), mask);
  }
  return codes;
}

// The 4 activation codes from |qs| in every 32-bit lane.
X8_AVX2 static inline __m256i x8_broadcast4(const int8_t* qs) {
  int32_t four;
  memcpy(&four, qs, sizeof(four));
  return _mm256_set1_epi32(four);
}

// x8_activation_sums with AVX2 (the same integers), and each block's
// scale d as a float.
X8_AVX2 static void x8_activation_sums_avx2(const void* const* activations,
                                            uint32_t columns, uint32_t first,
                                            uint32_t count,
                                            int32_t sums[][X8_CHUNK],
                                            float scales[][X8_CHUNK]) {
  const __m256i ones8 = _mm256_set1_epi8(1);
  const __m256i ones16 = _mm256_set1_epi16(1);
  for (uint32_t c = 0; c < columns; ++c) {
    for (uint32_t b = 0; b < count; ++b) {
      const decode_block_q8_0_t* a = X8_Q8_0(activations, c, first + b);
      const __m256i v = _mm256_loadu_si256((const __m256i*)a->qs);
      const __m256i s =
          _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, v), ones16);
      __m128i h = _mm_add_epi32(_mm256_castsi256_si128(s),
                                _mm256_extracti128_si256(s, 1));
      h = _mm_add_epi32(h, _mm_unpackhi_epi64(h, h));
      h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 1));
      sums[c][b] = _mm_cvtsi128_si32(h);
      scales[c][b] = _cvtsh_ss(a->d);
    }
  }
}

// Each row's sum(q a) over the block: 8 int32. maddubs pairs reach at most
// 2 x 15 x 127 = 3810, so the 8 pieces' int16 sums stay within 30480.
X8_AVX2 static inline __m256i x8_dot_avx2(const x8_codes_t* codes,
                                          const int8_t* qs) {
  __m256i sum = _mm256_setzero_si256();
  for (int p = 0; p < 4; ++p) {
    sum = _mm256_add_epi16(
        sum, _mm256_maddubs_epi16(codes->lo[p], x8_broadcast4(qs + 4 * p)));
    sum = _mm256_add_epi16(
        sum,
        _mm256_maddubs_epi16(codes->hi[p], x8_broadcast4(qs + 16 + 4 * p)));
  }
  return _mm256_madd_epi16(sum, _mm256_set1_epi16(1));
}

// Four chains of two, so that the multiply-adds' latency (5 cycles) is
// not paid eight times in a row.
X8_VNNI static inline __m256i x8_dot_vnni(const x8_codes_t* codes,
                                          const int8_t* qs) {
  __m256i sums[4];
  for (int p = 0; p < 4; ++p) {
    sums[p] = _mm256_dpbusd_epi32(
        _mm256_dpbusd_epi32(_mm256_setzero_si256(), codes->lo[p],
                            x8_broadcast4(qs + 4 * p)),
        codes->hi[p], x8_broadcast4(qs + 16 + 4 * p));
  }
  return _mm256_add_epi32(_mm256_add_epi32(sums[0], sums[1]),
                          _mm256_add_epi32(sums[2], sums[3]));
}

// The product over one block of eight for |columns| columns, with
// |DOT| the integer sum: the portable version's operations, lane by lane.
// The activations' code sums and scales are taken once per chunk of
// blocks for every group of eight rows (a group's sums carried across
// chunks through |out|, exactly): a 64-row tile of 8 columns on AVX2,
// 1.19x the prompt's rate against once per group. All eight sums are
// zeroed before the columns' are loaded: setting only |columns| of them
// measured 0.9x in generation (one column) on a Zen 5 VM.
#define X8_DOT_BODY(DOT)                                                      \
  const uint32_t blocks = cols / DECODE_QK8_0;                                \
  const uint8_t* base =                                                       \
      (const uint8_t*)matrix + (uint64_t)first * blocks * X8_Q4_0_PLAIN;      \
  int32_t sums[DECODE_X8_COLUMNS][X8_CHUNK];                                  \
  float scales[DECODE_X8_COLUMNS][X8_CHUNK];                                  \
  for (uint32_t chunk = 0; chunk < blocks; chunk += X8_CHUNK) {               \
    const uint32_t n = blocks - chunk < X8_CHUNK ? blocks - chunk : X8_CHUNK; \
    x8_activation_sums_avx2(activations, columns, chunk, n, sums, scales);    \
    for (uint32_t g = 0; g < count / DECODE_X8_ROWS; ++g) {                   \
      const uint8_t* group = base + (uint64_t)g * blocks * X8_Q4_0_BLOCK;     \
      __m256 acc[DECODE_X8_COLUMNS];                                          \
      for (uint32_t c = 0; c < DECODE_X8_COLUMNS; ++c) {                      \
        acc[c] = _mm256_setzero_ps();                                         \
      }                                                                       \
      for (uint32_t c = 0; chunk > 0 && c < columns; ++c) {                   \
        acc[c] = _mm256_loadu_ps(out + (uint64_t)c * out_stride +             \
                                 g * DECODE_X8_ROWS);                         \
      }                                                                       \
      for (uint32_t b = chunk; b < chunk + n; ++b) {                          \
        const uint8_t* block = group + (uint64_t)b * X8_Q4_0_BLOCK;           \
        const x8_codes_t codes = x8_unpack(block);                            \
        const __m256 dw =                                                     \
            _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)block));          \
        for (uint32_t c = 0; c < columns; ++c) {                              \
          const decode_block_q8_0_t* a = X8_Q8_0(activations, c, b);          \
          const __m256i s =                                                   \
              _mm256_sub_epi32(DOT(&codes, a->qs),                            \
                               _mm256_set1_epi32(8 * sums[c][b - chunk]));    \
          acc[c] = _mm256_fmadd_ps(                                           \
              _mm256_cvtepi32_ps(s),                                          \
              _mm256_mul_ps(dw, _mm256_set1_ps(scales[c][b - chunk])),        \
              acc[c]);                                                        \
        }                                                                     \
      }                                                                       \
      for (uint32_t c = 0; c < columns; ++c) {                                \
        _mm256_storeu_ps(out + (uint64_t)c * out_stride + g * DECODE_X8_ROWS, \
                         acc[c]);                                             \
      }                                                                       \
    }                                                                         \
  }

X8_AVX2 static void decode_q4_0_x8_dot_avx2(
    const void* matrix, uint32_t cols, uint32_t first, uint32_t count,
    const void* const* activations, uint32_t columns, float* out,
    uint32_t out_stride) {
  X8_DOT_BODY(x8_dot_avx2)
}

X8_VNNI static void decode_q4_0_x8_dot_vnni(const void* matrix, uint32_t cols,
                                            uint32_t first, uint32_t count,
                                            const void* const* activations,
                                            uint32_t columns, float* out,
                                            uint32_t out_stride) {
  X8_DOT_BODY(x8_dot_vnni)
}
#undef X8_DOT_BODY

// Each row's sum(w a) over a Q8_0 block of eight: the 8 pieces' signed
// codes |w| (their absolute values |wabs|) against the activation codes
// broadcast, through the sign trick (|w| times a with w's sign; pairs
// within 2 x 128 x 127, no int16 saturation), 8 int32.
X8_AVX2 static inline __m256i x8_q8_dot_avx2(const uint8_t* block,
                                             const __m256i* wabs,
                                             const int8_t* qs) {
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i sum = _mm256_setzero_si256();
  for (int p = 0; p < 8; ++p) {
    const __m256i w = _mm256_loadu_si256((const __m256i*)(block + 16 + 32 * p));
    const __m256i product = _mm256_maddubs_epi16(
        wabs[p], _mm256_sign_epi8(x8_broadcast4(qs + 4 * p), w));
    sum = _mm256_add_epi32(sum, _mm256_madd_epi16(product, ones));
  }
  return sum;
}

X8_VNNI static inline __m256i x8_q8_dot_vnni(const uint8_t* block,
                                             const __m256i* wabs,
                                             const int8_t* qs) {
  __m256i sums[4];
  for (int p = 0; p < 4; ++p) {
    const __m256i w0 =
        _mm256_loadu_si256((const __m256i*)(block + 16 + 64 * p));
    const __m256i w1 =
        _mm256_loadu_si256((const __m256i*)(block + 48 + 64 * p));
    sums[p] = _mm256_dpbusd_epi32(
        _mm256_dpbusd_epi32(_mm256_setzero_si256(), wabs[2 * p],
                            _mm256_sign_epi8(x8_broadcast4(qs + 8 * p), w0)),
        wabs[2 * p + 1], _mm256_sign_epi8(x8_broadcast4(qs + 8 * p + 4), w1));
  }
  return _mm256_add_epi32(_mm256_add_epi32(sums[0], sums[1]),
                          _mm256_add_epi32(sums[2], sums[3]));
}

// The Q8_0 product, |DOT| the integer sum: the portable version's
// operations, lane by lane.
#define X8_Q8_BODY(DOT)                                                     \
  const uint32_t blocks = cols / DECODE_QK8_0;                              \
  const uint8_t* base =                                                     \
      (const uint8_t*)matrix + (uint64_t)first * blocks * X8_Q8_0_PLAIN;    \
  for (uint32_t g = 0; g < count / DECODE_X8_ROWS; ++g) {                   \
    const uint8_t* group = base + (uint64_t)g * blocks * X8_Q8_0_BLOCK;     \
    __m256 acc[DECODE_X8_COLUMNS];                                          \
    for (uint32_t c = 0; c < DECODE_X8_COLUMNS; ++c) {                        \
      acc[c] = _mm256_setzero_ps();                                           \
    }                                                                         \
    for (uint32_t b = 0; b < blocks; ++b) {                                 \
      const uint8_t* block = group + (uint64_t)b * X8_Q8_0_BLOCK;           \
      __m256i wabs[8];                                                      \
      for (int p = 0; p < 8; ++p) {                                         \
        wabs[p] = _mm256_abs_epi8(                                          \
            _mm256_loadu_si256((const __m256i*)(block + 16 + 32 * p)));     \
      }                                                                     \
      const __m256 dw =                                                     \
          _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)block));          \
      for (uint32_t c = 0; c < columns; ++c) {                              \
        const decode_block_q8_0_t* a = X8_Q8_0(activations, c, b);          \
        acc[c] = _mm256_fmadd_ps(                                           \
            _mm256_cvtepi32_ps(DOT(block, wabs, a->qs)),                    \
            _mm256_mul_ps(dw, _mm256_set1_ps(_cvtsh_ss(a->d))), acc[c]);    \
      }                                                                     \
    }                                                                       \
    for (uint32_t c = 0; c < columns; ++c) {                                \
      _mm256_storeu_ps(out + (uint64_t)c * out_stride + g * DECODE_X8_ROWS, \
                       acc[c]);                                             \
    }                                                                       \
  }

X8_AVX2 static void decode_q8_0_x8_dot_avx2(
    const void* matrix, uint32_t cols, uint32_t first, uint32_t count,
    const void* const* activations, uint32_t columns, float* out,
    uint32_t out_stride) {
  X8_Q8_BODY(x8_q8_dot_avx2)
}

X8_VNNI static void decode_q8_0_x8_dot_vnni(const void* matrix, uint32_t cols,
                                            uint32_t first, uint32_t count,
                                            const void* const* activations,
                                            uint32_t columns, float* out,
                                            uint32_t out_stride) {
  X8_Q8_BODY(x8_q8_dot_vnni)
}
#undef X8_Q8_BODY

// Each row's sum(q a) over one Q4_K sub-block: its 8 pieces of unsigned
// codes against the activation codes from |y|, 4 at a time broadcast (the
// pairs within 2 x 15 x 127, 8 of them within int16). 8 int32.
X8_AVX2 static inline __m256i x8_k_dot_avx2(const __m256i* codes,
                                            const int8_t* y) {
  __m256i sum = _mm256_setzero_si256();
  for (int p = 0; p < 8; ++p) {
    sum = _mm256_add_epi16(
        sum, _mm256_maddubs_epi16(codes[p], x8_broadcast4(y + 4 * p)));
  }
  return _mm256_madd_epi16(sum, _mm256_set1_epi16(1));
}

X8_VNNI static inline __m256i x8_k_dot_vnni(const __m256i* codes,
                                            const int8_t* y) {
  __m256i sums[4];
  for (int p = 0; p < 4; ++p) {
    sums[p] = _mm256_dpbusd_epi32(
        _mm256_dpbusd_epi32(_mm256_setzero_si256(), codes[2 * p],
                            x8_broadcast4(y + 8 * p)),
        codes[2 * p + 1], x8_broadcast4(y + 8 * p + 4));
  }
  return _mm256_add_epi32(_mm256_add_epi32(sums[0], sums[1]),
                          _mm256_add_epi32(sums[2], sums[3]));
}

// Byte |i| of each 32-bit lane of |v|, as int32.
#define X8_LANE_BYTE(v, i) \
  _mm256_and_si256(_mm256_srli_epi32((v), 8 * (i)), _mm256_set1_epi32(255))

// The Q4_K product, |DOT| a sub-block's integer sum: the portable
// version's operations, lane by lane. The 8 rows' scales and mins come
// out of the three packed words at once (decode_q4_k_unpack's steps on
// 8 lanes); the mins' term is 4 madds of (m_j, m_j+2) pairs against the
// activation's matching pairs of sub-block sums.
#define X8_Q4_K_BODY(DOT)                                                     \
  const uint32_t blocks = cols / DECODE_QK_K;                                 \
  const uint8_t* base =                                                       \
      (const uint8_t*)matrix + (uint64_t)first * blocks * 144u;               \
  const __m256i low6 = _mm256_set1_epi32(0x3F3F3F3F);                         \
  const __m256i low4 = _mm256_set1_epi32(0x0F0F0F0F);                         \
  const __m256i low2 = _mm256_set1_epi32(0x03030303);                         \
  const __m256i even = _mm256_set1_epi32(0x00FF00FF);                         \
  const __m256i nibble = _mm256_set1_epi8(15);                                \
  for (uint32_t g = 0; g < count / DECODE_X8_ROWS; ++g) {                     \
    const uint8_t* group = base + (uint64_t)g * blocks * X8_Q4_K_BLOCK;       \
    __m256 acc[DECODE_X8_COLUMNS];                                            \
    for (uint32_t c = 0; c < DECODE_X8_COLUMNS; ++c) {                        \
      acc[c] = _mm256_setzero_ps();                                           \
    }                                                                         \
    for (uint32_t b = 0; b < blocks; ++b) {                                   \
      const uint8_t* block = group + (uint64_t)b * X8_Q4_K_BLOCK;             \
      const __m256i wa = _mm256_loadu_si256((const __m256i*)(block + 32));    \
      const __m256i wb = _mm256_loadu_si256((const __m256i*)(block + 64));    \
      const __m256i wc = _mm256_loadu_si256((const __m256i*)(block + 96));    \
      const __m256i sc[2] = {                                                 \
          _mm256_and_si256(wa, low6),                                         \
          _mm256_or_si256(                                                    \
              _mm256_and_si256(wc, low4),                                     \
              _mm256_slli_epi32(                                              \
                  _mm256_and_si256(_mm256_srli_epi32(wa, 6), low2), 4))};     \
      const __m256i mn[2] = {                                                 \
          _mm256_and_si256(wb, low6),                                         \
          _mm256_or_si256(                                                    \
              _mm256_and_si256(_mm256_srli_epi32(wc, 4), low4),               \
              _mm256_slli_epi32(                                              \
                  _mm256_and_si256(_mm256_srli_epi32(wb, 6), low2), 4))};     \
      __m256i scale[8];                                                       \
      for (int j = 0; j < 4; ++j) {                                           \
        scale[j] = X8_LANE_BYTE(sc[0], j);                                    \
        scale[4 + j] = X8_LANE_BYTE(sc[1], j);                                \
      }                                                                       \
      /* (m_j, m_j+2) as int16 pairs: j = 0, 1, 4, 5. */                      \
      const __m256i mins[4] = {                                               \
          _mm256_and_si256(mn[0], even),                                      \
          _mm256_and_si256(_mm256_srli_epi32(mn[0], 8), even),                \
          _mm256_and_si256(mn[1], even),                                      \
          _mm256_and_si256(_mm256_srli_epi32(mn[1], 8), even)};               \
      const __m256 d8 =                                                       \
          _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)block));            \
      const __m256 dmin8 =                                                    \
          _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(block + 16)));     \
      __m256i sumi[DECODE_X8_COLUMNS];                                        \
      for (uint32_t c = 0; c < columns; ++c) {                                \
        sumi[c] = _mm256_setzero_si256();                                     \
      }                                                                       \
      for (int k = 0; k < 4; ++k) {                                           \
        __m256i lo[8], hi[8];                                                 \
        for (int p = 0; p < 8; ++p) {                                         \
          const __m256i raw = _mm256_loadu_si256(                             \
              (const __m256i*)(block + X8_Q4_K_HEADER + (8 * k + p) * 32));   \
          lo[p] = _mm256_and_si256(raw, nibble);                              \
          hi[p] = _mm256_and_si256(_mm256_srli_epi16(raw, 4), nibble);        \
        }                                                                     \
        for (uint32_t c = 0; c < columns; ++c) {                              \
          const int8_t* y = X8_Q8_K(activations, c, b)->qs + 64 * k;          \
          sumi[c] = _mm256_add_epi32(                                         \
              sumi[c],                                                        \
              _mm256_add_epi32(                                               \
                  _mm256_mullo_epi32(DOT(lo, y), scale[2 * k]),               \
                  _mm256_mullo_epi32(DOT(hi, y + 32), scale[2 * k + 1])));    \
        }                                                                     \
      }                                                                       \
      for (uint32_t c = 0; c < columns; ++c) {                                \
        const decode_block_q8_k_t* a = X8_Q8_K(activations, c, b);            \
        int32_t pairs[4];                                                     \
        for (int q = 0; q < 4; ++q) {                                         \
          /* sub-blocks j = (0, 1, 4, 5)[q] and j + 2 */                      \
          const int j = q < 2 ? q : q + 2;                                    \
          const uint16_t s0 =                                                 \
              (uint16_t)(a->bsums[2 * j] + a->bsums[2 * j + 1]);              \
          const uint16_t s2 =                                                 \
              (uint16_t)(a->bsums[2 * j + 4] + a->bsums[2 * j + 5]);          \
          pairs[q] = (int32_t)((uint32_t)s0 | (uint32_t)s2 << 16);            \
        }                                                                     \
        __m256i summ = _mm256_setzero_si256();                                \
        for (int q = 0; q < 4; ++q) {                                         \
          summ = _mm256_add_epi32(                                            \
              summ, _mm256_madd_epi16(mins[q], _mm256_set1_epi32(pairs[q]))); \
        }                                                                     \
        const __m256 ad = _mm256_set1_ps(a->d);                               \
        acc[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sumi[c]),                 \
                                 _mm256_mul_ps(d8, ad), acc[c]);              \
        acc[c] = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(summ),                   \
                                  _mm256_mul_ps(dmin8, ad), acc[c]);          \
      }                                                                       \
    }                                                                         \
    for (uint32_t c = 0; c < columns; ++c) {                                  \
      _mm256_storeu_ps(out + (uint64_t)c * out_stride + g * DECODE_X8_ROWS,   \
                       acc[c]);                                               \
    }                                                                         \
  }

X8_AVX2 static void decode_q4_k_x8_dot_avx2(
    const void* matrix, uint32_t cols, uint32_t first, uint32_t count,
    const void* const* activations, uint32_t columns, float* out,
    uint32_t out_stride) {
  X8_Q4_K_BODY(x8_k_dot_avx2)
}

X8_VNNI static void decode_q4_k_x8_dot_vnni(const void* matrix, uint32_t cols,
                                            uint32_t first, uint32_t count,
                                            const void* const* activations,
                                            uint32_t columns, float* out,
                                            uint32_t out_stride) {
  X8_Q4_K_BODY(x8_k_dot_vnni)
}
#undef X8_Q4_K_BODY
#undef X8_LANE_BYTE

// A Q6_K scale group's sums: its 4 code vectors against the activation
// words at |y| (maddubs pairs within 2 x 63 x 127, two of them within
// int16), 8 int32.
X8_AVX2 static inline __m256i x8_q6_dot_avx2(const __m256i* codes,
                                             const int8_t* y) {
  const __m256i ones = _mm256_set1_epi16(1);
  const __m256i s01 = _mm256_add_epi16(
      _mm256_maddubs_epi16(codes[0], x8_broadcast4(y)),
      _mm256_maddubs_epi16(codes[1], x8_broadcast4(y + 4)));
  const __m256i s23 = _mm256_add_epi16(
      _mm256_maddubs_epi16(codes[2], x8_broadcast4(y + 8)),
      _mm256_maddubs_epi16(codes[3], x8_broadcast4(y + 12)));
  return _mm256_add_epi32(_mm256_madd_epi16(s01, ones),
                          _mm256_madd_epi16(s23, ones));
}

X8_VNNI static inline __m256i x8_q6_dot_vnni(const __m256i* codes,
                                             const int8_t* y) {
  return _mm256_add_epi32(
      _mm256_dpbusd_epi32(
          _mm256_dpbusd_epi32(_mm256_setzero_si256(), codes[0],
                              x8_broadcast4(y)),
          codes[1], x8_broadcast4(y + 4)),
      _mm256_dpbusd_epi32(
          _mm256_dpbusd_epi32(_mm256_setzero_si256(), codes[2],
                              x8_broadcast4(y + 8)),
          codes[3], x8_broadcast4(y + 12)));
}

// Code vector v's top 2 bits at bits 4 and 5 of each byte, from the high
// piece that holds them (bits 2 (v % 4) and up; the 16-bit shifts move
// no neighbour's bits into the mask).
#define X8_Q6_HIGH(raw, t)                                                 \
  ((t) == 3 ? _mm256_and_si256(_mm256_srli_epi16((raw), 2), high_mask)     \
            : _mm256_and_si256(_mm256_slli_epi16((raw), 4 - 2 * (t)),      \
                               high_mask))

// The Q6_K product, |DOT| a scale group's integer sum: the portable
// version's operations, lane by lane. Scales come out of the 4 scale
// pieces as sign-extended bytes (for the groups' products) and as int16
// pairs (g, g + 2) for the bsums' term, 8 madds against the activation's
// matching pairs.
#define X8_Q6_K_BODY(DOT)                                                     \
  const uint32_t blocks = cols / DECODE_QK_K;                                 \
  const uint8_t* base =                                                       \
      (const uint8_t*)matrix + (uint64_t)first * blocks * 210u;               \
  const __m256i nibble = _mm256_set1_epi8(15);                                \
  const __m256i high_mask = _mm256_set1_epi8(0x30);                           \
  for (uint32_t g = 0; g < count / DECODE_X8_ROWS; ++g) {                     \
    const uint8_t* group = base + (uint64_t)g * blocks * X8_Q6_K_BLOCK;       \
    __m256 acc[DECODE_X8_COLUMNS];                                            \
    for (uint32_t c = 0; c < DECODE_X8_COLUMNS; ++c) {                        \
      acc[c] = _mm256_setzero_ps();                                           \
    }                                                                         \
    for (uint32_t b = 0; b < blocks; ++b) {                                   \
      const uint8_t* block = group + (uint64_t)b * X8_Q6_K_BLOCK;             \
      __m256i sp[4];                                                          \
      for (int p = 0; p < 4; ++p) {                                           \
        sp[p] = _mm256_loadu_si256(                                           \
            (const __m256i*)(block + X8_Q6_K_SCALES + 32 * p));               \
      }                                                                       \
      __m256i sumi[DECODE_X8_COLUMNS];                                        \
      for (uint32_t c = 0; c < columns; ++c) {                                \
        sumi[c] = _mm256_setzero_si256();                                     \
      }                                                                       \
      for (int k = 0; k < 4; ++k) {                                           \
        __m256i codes[16];                                                    \
        for (int p = 0; p < 8; ++p) {                                         \
          const __m256i raw = _mm256_loadu_si256(                             \
              (const __m256i*)(block + X8_Q6_K_LOW + (8 * k + p) * 32));      \
          codes[p] = _mm256_and_si256(raw, nibble);                           \
          codes[8 + p] = _mm256_and_si256(_mm256_srli_epi16(raw, 4), nibble); \
        }                                                                     \
        for (int m = 0; m < 4; ++m) {                                         \
          const __m256i raw = _mm256_loadu_si256(                             \
              (const __m256i*)(block + X8_Q6_K_HIGH + (4 * k + m) * 32));     \
          for (int t = 0; t < 4; ++t) {                                       \
            codes[4 * m + t] =                                                \
                _mm256_or_si256(codes[4 * m + t], X8_Q6_HIGH(raw, t));        \
          }                                                                   \
        }                                                                     \
        for (int q = 0; q < 4; ++q) {                                         \
          /* group 4k + q: byte q of scale piece k, sign-extended */          \
          const __m256i sc =                                                  \
              _mm256_srai_epi32(_mm256_slli_epi32(sp[k], 24 - 8 * q), 24);    \
          for (uint32_t c = 0; c < columns; ++c) {                            \
            const int8_t* y =                                                 \
                X8_Q8_K(activations, c, b)->qs + 64 * k + 16 * q;             \
            sumi[c] = _mm256_add_epi32(                                       \
                sumi[c], _mm256_mullo_epi32(DOT(codes + 4 * q, y), sc));      \
          }                                                                   \
        }                                                                     \
      }                                                                       \
      const __m256 dw =                                                       \
          _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)block));            \
      for (uint32_t c = 0; c < columns; ++c) {                                \
        const decode_block_q8_k_t* a = X8_Q8_K(activations, c, b);            \
        __m256i summ = _mm256_setzero_si256();                                \
        for (int p = 0; p < 4; ++p) {                                         \
          /* int16 pairs (4p, 4p + 2) and (4p + 1, 4p + 3) */                 \
          const __m256i even =                                                \
              _mm256_srai_epi16(_mm256_slli_epi16(sp[p], 8), 8);              \
          const __m256i odd = _mm256_srai_epi16(sp[p], 8);                    \
          const uint32_t pe = (uint16_t)a->bsums[4 * p] |                     \
                              (uint32_t)(uint16_t)a->bsums[4 * p + 2] << 16;  \
          const uint32_t po = (uint16_t)a->bsums[4 * p + 1] |                 \
                              (uint32_t)(uint16_t)a->bsums[4 * p + 3] << 16;  \
          summ = _mm256_add_epi32(                                            \
              summ, _mm256_madd_epi16(even, _mm256_set1_epi32((int32_t)pe))); \
          summ = _mm256_add_epi32(                                            \
              summ, _mm256_madd_epi16(odd, _mm256_set1_epi32((int32_t)po)));  \
        }                                                                     \
        const __m256i total =                                                 \
            _mm256_sub_epi32(sumi[c], _mm256_slli_epi32(summ, 5));            \
        acc[c] =                                                              \
            _mm256_fmadd_ps(_mm256_cvtepi32_ps(total),                        \
                            _mm256_mul_ps(dw, _mm256_set1_ps(a->d)), acc[c]); \
      }                                                                       \
    }                                                                         \
    for (uint32_t c = 0; c < columns; ++c) {                                  \
      _mm256_storeu_ps(out + (uint64_t)c * out_stride + g * DECODE_X8_ROWS,   \
                       acc[c]);                                               \
    }                                                                         \
  }

X8_AVX2 static void decode_q6_k_x8_dot_avx2(
    const void* matrix, uint32_t cols, uint32_t first, uint32_t count,
    const void* const* activations, uint32_t columns, float* out,
    uint32_t out_stride) {
  X8_Q6_K_BODY(x8_q6_dot_avx2)
}

X8_VNNI static void decode_q6_k_x8_dot_vnni(const void* matrix, uint32_t cols,
                                            uint32_t first, uint32_t count,
                                            const void* const* activations,
                                            uint32_t columns, float* out,
                                            uint32_t out_stride) {
  X8_Q6_K_BODY(x8_q6_dot_vnni)
}
#undef X8_Q6_K_BODY

//===----------------------------------------------------------------------===//
// AVX-512 VNNI on 512 bits: two columns a register
//===----------------------------------------------------------------------===//
//
// Lane 2j + h holds row j of column h of a pair of columns: each 4-byte
// piece of codes is loaded once and duplicated into both lanes of its
// row (one permute, shared by every pair), and the pair's activation
// words lie side by side (a 64-bit broadcast puts column 0's word in the
// even lanes and column 1's in the odd). One 512-bit multiply-add then
// does the work of two 256-bit ones. Every lane runs the 256-bit
// version's operations on the same integers and floats, so the bits are
// the same; a single column goes to the 256-bit version.

#define X8_VNNI512                                            \
  __attribute__((                                             \
      target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma," \
             "f16c")))
// Blocks whose paired activations one pass keeps (on the stack: 20 KiB of
// Q8_K pairs at 4 pairs).
#define X8_PAIR_CHUNK 8u
// Row groups one pass accumulates before its results are stored.
#define X8_PAIR_GROUPS 8u
#define X8_PAIRS ((DECODE_X8_COLUMNS + 1) / 2)

// A pair's activations for one Q8_0 block: word w of column 0 in the low
// half of words[w], column 1's in the high; their scales; their code sums
// negated (the products start their integer sums from the offset's term).
typedef struct x8_pair_q8_0_t {
  uint64_t words[DECODE_QK8_0 / 4];
  uint64_t d;
  uint64_t negated_sums;
} x8_pair_q8_0_t;

// The same for one Q8_K block: its 64 words, the (m_j, m_j+2) sums of
// the mins' term (x8_q4_k), and the scales.
typedef struct x8_pair_q8_k_t {
  uint64_t words[DECODE_QK_K / 4];
  uint64_t mins[4];
  // Q6_K's: the int16 pairs of group sums (4p, 4p + 2) at 2p and
  // (4p + 1, 4p + 3) at 2p + 1.
  uint64_t groups[8];
  uint64_t d;
} x8_pair_q8_k_t;

static inline uint64_t x8_pair_word(uint32_t low, uint32_t high) {
  return (uint64_t)low | (uint64_t)high << 32;
}
static inline uint64_t x8_pair_float(float low, float high) {
  uint32_t a, b;
  memcpy(&a, &low, 4);
  memcpy(&b, &high, 4);
  return x8_pair_word(a, b);
}

// The 16 words at |a| and |b| interleaved into |out| (16 64-bit words).
X8_VNNI512 static inline void x8_pair_interleave(const int8_t* a,
                                                 const int8_t* b,
                                                 uint64_t* out) {
  const __m512i va = _mm512_loadu_si512((const void*)a);
  const __m512i vb = _mm512_loadu_si512((const void*)b);
  const __m512i low =
      _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  const __m512i high = _mm512_set_epi32(31, 15, 30, 14, 29, 13, 28, 12, 27, 11,
                                        26, 10, 25, 9, 24, 8);
  _mm512_storeu_si512((void*)out, _mm512_permutex2var_epi32(va, low, vb));
  _mm512_storeu_si512((void*)(out + 8),
                      _mm512_permutex2var_epi32(va, high, vb));
}

// Column |c|'s pair partner: the next column, or itself when it is last.
static inline uint32_t x8_partner(uint32_t c, uint32_t columns) {
  return c + 1 < columns ? c + 1 : c;
}

// The 8 dwords at |p| (a piece of 8 rows' codes, or of their scales), each
// in lanes 2j and 2j + 1.
X8_VNNI512 static inline __m512i x8_dup(const uint8_t* p) {
  const __m512i idx =
      _mm512_set_epi32(7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0);
  return _mm512_permutexvar_epi32(
      idx, _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i*)p)));
}
// The 8 f16 scales at |p| as floats, each in lanes 2j and 2j + 1.
X8_VNNI512 static inline __m512 x8_dup_f16(const uint8_t* p) {
  const __m512i idx =
      _mm512_set_epi32(7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0);
  return _mm512_permutexvar_ps(idx, _mm512_castps256_ps512(_mm256_cvtph_ps(
                                        _mm_loadu_si128((const __m128i*)p))));
}
// The pair's 64-bit word in every lane pair.
X8_VNNI512 static inline __m512i x8_pair_bcast(const uint64_t* word) {
  return _mm512_set1_epi64((long long)*word);
}

// Stores a pair's 16 sums: rows 0..7 of column |c| at |out0|, of its
// partner at |out1| (NULL: the pair is column |c| twice).
X8_VNNI512 static inline void x8_pair_store(__m512 acc, float* out0,
                                            float* out1) {
  const __m512i split =
      _mm512_set_epi32(15, 13, 11, 9, 7, 5, 3, 1, 14, 12, 10, 8, 6, 4, 2, 0);
  const __m512 v = _mm512_permutexvar_ps(split, acc);
  _mm256_storeu_ps(out0, _mm512_castps512_ps256(v));
  if (out1) {
    _mm256_storeu_ps(
        out1, _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
  }
}

// Pairs' Q8_0 activations for blocks |first| .. |first| + |count|: the
// words interleaved by one permute, and both columns' code sums from
// them (a dpbusd against ones sums each word; three folds of the lane
// pairs leave column 0's sum in lane 0 and column 1's in lane 1).
X8_VNNI512 static void x8_pair_q8_0(const void* const* activations,
                                    uint32_t columns, uint32_t first,
                                    uint32_t count,
                                    x8_pair_q8_0_t pairs[][X8_PAIR_CHUNK]) {
  const __m512i interleave =
      _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  const __m512i ones = _mm512_set1_epi8(1);
  for (uint32_t c = 0, p = 0; c < columns; c += 2, ++p) {
    const void* two[2] = {activations[c],
                          activations[x8_partner(c, columns)]};
    for (uint32_t b = 0; b < count; ++b) {
      const decode_block_q8_0_t* a0 = X8_Q8_0(two, 0, first + b);
      const decode_block_q8_0_t* a1 = X8_Q8_0(two, 1, first + b);
      x8_pair_q8_0_t* out = &pairs[p][b];
      const __m512i words = _mm512_permutex2var_epi32(
          _mm512_castsi256_si512(
              _mm256_loadu_si256((const __m256i*)a0->qs)),
          interleave,
          _mm512_castsi256_si512(
              _mm256_loadu_si256((const __m256i*)a1->qs)));
      _mm512_storeu_si512((void*)out->words, words);
      __m512i sums =
          _mm512_dpbusd_epi32(_mm512_setzero_si512(), ones, words);
      sums = _mm512_add_epi32(sums, _mm512_shuffle_i64x2(sums, sums, 0x4E));
      sums = _mm512_add_epi32(sums, _mm512_shuffle_i64x2(sums, sums, 0xB1));
      sums = _mm512_add_epi32(sums, _mm512_shuffle_epi32(sums, 0x4E));
      out->negated_sums = (uint64_t)_mm_cvtsi128_si64(
          _mm512_castsi512_si128(_mm512_sub_epi32(_mm512_setzero_si512(), sums)));
      out->d = x8_pair_float(_cvtsh_ss(a0->d), _cvtsh_ss(a1->d));
    }
  }
}

// The Q4_0 and Q8_0 products: |Q8| selects Q8_0's codes (signed: offset
// by 128 into unsigned ones, the 128 sum(a) taken off after) over Q4_0's
// (unsigned nibbles, 8 sum(a) taken off).
#define X8_PAIR_BODY(Q8, PLAIN, BLOCK, PIECES)                                \
  if (columns < 2) {                                                          \
    (Q8 ? decode_q8_0_x8_dot_vnni : decode_q4_0_x8_dot_vnni)(                 \
        matrix, cols, first, count, activations, columns, out, out_stride);   \
    return;                                                                   \
  }                                                                           \
  const uint32_t blocks = cols / DECODE_QK8_0;                                \
  const uint8_t* base =                                                       \
      (const uint8_t*)matrix + (uint64_t)first * blocks * PLAIN;              \
  const uint32_t pair_count = (columns + 1) / 2;                              \
  const __m512i nibble = _mm512_set1_epi8(15);                                \
  const __m512i flip = _mm512_set1_epi8((char)0x80);                          \
  x8_pair_q8_0_t pairs[X8_PAIRS][X8_PAIR_CHUNK];                              \
  __m512 acc[X8_PAIR_GROUPS][X8_PAIRS];                                       \
  for (uint32_t g0 = 0; g0 < count / DECODE_X8_ROWS; g0 += X8_PAIR_GROUPS) {  \
    const uint32_t groups = count / DECODE_X8_ROWS - g0 < X8_PAIR_GROUPS      \
                                ? count / DECODE_X8_ROWS - g0                 \
                                : X8_PAIR_GROUPS;                             \
    for (uint32_t g = 0; g < groups; ++g) {                                   \
      for (uint32_t p = 0; p < pair_count; ++p)                               \
        acc[g][p] = _mm512_setzero_ps();                                      \
    }                                                                         \
    for (uint32_t chunk = 0; chunk < blocks; chunk += X8_PAIR_CHUNK) {        \
      const uint32_t n =                                                      \
          blocks - chunk < X8_PAIR_CHUNK ? blocks - chunk : X8_PAIR_CHUNK;    \
      x8_pair_q8_0(activations, columns, chunk, n, pairs);                    \
      for (uint32_t g = 0; g < groups; ++g) {                                 \
        const uint8_t* group = base + (uint64_t)(g0 + g) * blocks * BLOCK;    \
        for (uint32_t b = 0; b < n; ++b) {                                    \
          const uint8_t* block = group + (uint64_t)(chunk + b) * BLOCK;       \
          __m512i codes[PIECES];                                              \
          for (int q = 0; q < (Q8 ? 8 : 4); ++q) {                            \
            const __m512i raw = x8_dup(block + 16 + 32 * q);                  \
            if (Q8) {                                                         \
              codes[q] = _mm512_xor_si512(raw, flip);                         \
            } else {                                                          \
              codes[q] = _mm512_and_si512(raw, nibble);                       \
              codes[4 + q] =                                                  \
                  _mm512_and_si512(_mm512_srli_epi16(raw, 4), nibble);        \
            }                                                                 \
          }                                                                   \
          const __m512 dw = x8_dup_f16(block);                                \
          for (uint32_t p = 0; p < pair_count; ++p) {                         \
            const x8_pair_q8_0_t* a = &pairs[p][b];                           \
            /* codes[i] against word i (Q4_0's high nibbles are 16.. */       \
            /* of the block, words 4..7), in two chains, the first from */    \
            /* the offset's term -(8 or 128) sum(a): exact integers, so */    \
            /* the order is free. */                                          \
            __m512i s0 = _mm512_slli_epi32(x8_pair_bcast(&a->negated_sums),   \
                                           Q8 ? 7 : 3);                       \
            __m512i s1 = _mm512_setzero_si512();                              \
            for (int q = 0; q < 4; ++q) {                                     \
              s0 = _mm512_dpbusd_epi32(s0, codes[2 * q],                      \
                                       x8_pair_bcast(&a->words[2 * q]));      \
              s1 = _mm512_dpbusd_epi32(s1, codes[2 * q + 1],                  \
                                       x8_pair_bcast(&a->words[2 * q + 1]));  \
            }                                                                 \
            const __m512i sum = _mm512_add_epi32(s0, s1);                     \
            acc[g][p] = _mm512_fmadd_ps(                                      \
                _mm512_cvtepi32_ps(sum),                                      \
                _mm512_mul_ps(dw, _mm512_castsi512_ps(x8_pair_bcast(&a->d))), \
                acc[g][p]);                                                   \
          }                                                                   \
        }                                                                     \
      }                                                                       \
    }                                                                         \
    for (uint32_t g = 0; g < groups; ++g) {                                   \
      for (uint32_t p = 0; p < pair_count; ++p) {                             \
        const uint32_t c = 2 * p;                                             \
        float* row = out + (uint64_t)(g0 + g) * DECODE_X8_ROWS;               \
        x8_pair_store(                                                        \
            acc[g][p], row + (uint64_t)c * out_stride,                        \
            c + 1 < columns ? row + (uint64_t)(c + 1) * out_stride : NULL);   \
      }                                                                       \
    }                                                                         \
  }

X8_VNNI512 static void decode_q4_0_x8_dot_vnni512(
    const void* matrix, uint32_t cols, uint32_t first, uint32_t count,
    const void* const* activations, uint32_t columns, float* out,
    uint32_t out_stride){X8_PAIR_BODY(0, X8_Q4_0_PLAIN, X8_Q4_0_BLOCK, 8)}

X8_VNNI512
    static void decode_q8_0_x8_dot_vnni512(const void* matrix, uint32_t cols,
                                           uint32_t first, uint32_t count,
                                           const void* const* activations,
                                           uint32_t columns, float* out,
                                           uint32_t out_stride) {
  X8_PAIR_BODY(1, X8_Q8_0_PLAIN, X8_Q8_0_BLOCK, 8)
}
#undef X8_PAIR_BODY

// Pairs' Q8_K activations for blocks |first| .. |first| + |count|: the
// words, the scales, and the sums the type's term of activation sums takes
// (|q6|: Q6_K's group pairs, else Q4_K's mins pairs).
X8_VNNI512 static void x8_pair_q8_k(const void* const* activations,
                                    uint32_t columns, uint32_t first,
                                    uint32_t count, bool q6,
                                    x8_pair_q8_k_t pairs[][X8_PAIR_CHUNK]) {
  for (uint32_t c = 0, p = 0; c < columns; c += 2, ++p) {
    const void* two[2] = {activations[c], activations[x8_partner(c, columns)]};
    for (uint32_t b = 0; b < count; ++b) {
      x8_pair_q8_k_t* out = &pairs[p][b];
      const decode_block_q8_k_t* a[2] = {X8_Q8_K(two, 0, first + b),
                                         X8_Q8_K(two, 1, first + b)};
      uint32_t sums[2][8];
      for (uint32_t h = 0; h < 2; ++h) {
        const int16_t* bs = a[h]->bsums;
        for (int q = 0; q < (q6 ? 8 : 4); ++q) {
          uint16_t low, high;
          if (q6) {
            // Groups 4 (q / 2) + (q & 1) and 2 on.
            const int g = 4 * (q / 2) + (q & 1);
            low = (uint16_t)bs[g];
            high = (uint16_t)bs[g + 2];
          } else {
            // Sub-blocks j = (0, 1, 4, 5)[q] and j + 2, as x8_q4_k's body.
            const int j = q < 2 ? q : q + 2;
            low = (uint16_t)(bs[2 * j] + bs[2 * j + 1]);
            high = (uint16_t)(bs[2 * j + 4] + bs[2 * j + 5]);
          }
          sums[h][q] = (uint32_t)low | (uint32_t)high << 16;
        }
      }
      for (uint32_t w = 0; w < DECODE_QK_K / 4; w += 16) {
        x8_pair_interleave(a[0]->qs + 4 * w, a[1]->qs + 4 * w, out->words + w);
      }
      for (int q = 0; q < (q6 ? 8 : 4); ++q) {
        uint64_t* to = q6 ? out->groups : out->mins;
        to[q] = x8_pair_word(sums[0][q], sums[1][q]);
      }
      out->d = x8_pair_float(a[0]->d, a[1]->d);
    }
  }
}

// A sub-block's sums, the 8 pieces |codes| against the pair's |words|:
// two chains of four (exact integers, so the order is free; one add
// where four chains of two took three).
X8_VNNI512 static inline __m512i x8_pair_k_dot(const __m512i* codes,
                                               const uint64_t* words) {
  __m512i s0 = _mm512_setzero_si512(), s1 = _mm512_setzero_si512();
  for (int p = 0; p < 4; ++p) {
    s0 = _mm512_dpbusd_epi32(s0, codes[2 * p], x8_pair_bcast(&words[2 * p]));
    s1 = _mm512_dpbusd_epi32(s1, codes[2 * p + 1],
                             x8_pair_bcast(&words[2 * p + 1]));
  }
  return _mm512_add_epi32(s0, s1);
}

X8_VNNI512 static void decode_q4_k_x8_dot_vnni512(
    const void* matrix, uint32_t cols, uint32_t first, uint32_t count,
    const void* const* activations, uint32_t columns, float* out,
    uint32_t out_stride) {
  if (columns < 2) {
    decode_q4_k_x8_dot_vnni(matrix, cols, first, count, activations, columns,
                            out, out_stride);
    return;
  }
  const uint32_t blocks = cols / DECODE_QK_K;
  const uint8_t* base =
      (const uint8_t*)matrix + (uint64_t)first * blocks * 144u;
  const uint32_t pair_count = (columns + 1) / 2;
  const __m512i low6 = _mm512_set1_epi32(0x3F3F3F3F);
  const __m512i low4 = _mm512_set1_epi32(0x0F0F0F0F);
  const __m512i low2 = _mm512_set1_epi32(0x03030303);
  const __m512i even = _mm512_set1_epi32(0x00FF00FF);
  const __m512i byte = _mm512_set1_epi32(255);
  const __m512i nibble = _mm512_set1_epi8(15);
  x8_pair_q8_k_t pairs[X8_PAIRS][X8_PAIR_CHUNK];
  __m512 acc[X8_PAIR_GROUPS][X8_PAIRS];
  for (uint32_t g0 = 0; g0 < count / DECODE_X8_ROWS; g0 += X8_PAIR_GROUPS) {
    const uint32_t groups = count / DECODE_X8_ROWS - g0 < X8_PAIR_GROUPS
                                ? count / DECODE_X8_ROWS - g0
                                : X8_PAIR_GROUPS;
    for (uint32_t g = 0; g < groups; ++g) {
      for (uint32_t p = 0; p < pair_count; ++p) acc[g][p] = _mm512_setzero_ps();
    }
    for (uint32_t chunk = 0; chunk < blocks; chunk += X8_PAIR_CHUNK) {
      const uint32_t n =
          blocks - chunk < X8_PAIR_CHUNK ? blocks - chunk : X8_PAIR_CHUNK;
      x8_pair_q8_k(activations, columns, chunk, n, false, pairs);
      for (uint32_t g = 0; g < groups; ++g) {
        const uint8_t* group =
            base + (uint64_t)(g0 + g) * blocks * X8_Q4_K_BLOCK;
        for (uint32_t b = 0; b < n; ++b) {
          const uint8_t* block = group + (uint64_t)(chunk + b) * X8_Q4_K_BLOCK;
          // x8_q4_k's unpacking of the scales, on duplicated lanes.
          const __m512i wa = x8_dup(block + 32);
          const __m512i wb = x8_dup(block + 64);
          const __m512i wc = x8_dup(block + 96);
          const __m512i sc[2] = {
              _mm512_and_si512(wa, low6),
              _mm512_or_si512(
                  _mm512_and_si512(wc, low4),
                  _mm512_slli_epi32(
                      _mm512_and_si512(_mm512_srli_epi32(wa, 6), low2), 4))};
          const __m512i mn[2] = {
              _mm512_and_si512(wb, low6),
              _mm512_or_si512(
                  _mm512_and_si512(_mm512_srli_epi32(wc, 4), low4),
                  _mm512_slli_epi32(
                      _mm512_and_si512(_mm512_srli_epi32(wb, 6), low2), 4))};
          __m512i sumi[X8_PAIRS];
          for (uint32_t p = 0; p < pair_count; ++p) {
            sumi[p] = _mm512_setzero_si512();
          }
          for (int k = 0; k < 4; ++k) {
            __m512i lo[8], hi[8];
            for (int q = 0; q < 8; ++q) {
              const __m512i raw =
                  x8_dup(block + X8_Q4_K_HEADER + (8 * k + q) * 32);
              lo[q] = _mm512_and_si512(raw, nibble);
              hi[q] = _mm512_and_si512(_mm512_srli_epi16(raw, 4), nibble);
            }
            // Sub-blocks 2k (scale byte k of sc[0] for k < 4 ...): the
            // 256-bit version's scale[2k] and scale[2k + 1].
            const int j0 = 2 * k, j1 = 2 * k + 1;
            const __m512i s0 = _mm512_and_si512(
                _mm512_srli_epi32(sc[j0 / 4], 8 * (j0 % 4)), byte);
            const __m512i s1 = _mm512_and_si512(
                _mm512_srli_epi32(sc[j1 / 4], 8 * (j1 % 4)), byte);
            for (uint32_t p = 0; p < pair_count; ++p) {
              const uint64_t* y = pairs[p][b].words + 16 * k;
              sumi[p] = _mm512_add_epi32(
                  sumi[p],
                  _mm512_add_epi32(
                      _mm512_mullo_epi32(x8_pair_k_dot(lo, y), s0),
                      _mm512_mullo_epi32(x8_pair_k_dot(hi, y + 8), s1)));
            }
          }
          const __m512i mins[4] = {
              _mm512_and_si512(mn[0], even),
              _mm512_and_si512(_mm512_srli_epi32(mn[0], 8), even),
              _mm512_and_si512(mn[1], even),
              _mm512_and_si512(_mm512_srli_epi32(mn[1], 8), even)};
          const __m512 d8 = x8_dup_f16(block);
          const __m512 dmin8 = x8_dup_f16(block + 16);
          for (uint32_t p = 0; p < pair_count; ++p) {
            const x8_pair_q8_k_t* a = &pairs[p][b];
            __m512i summ = _mm512_setzero_si512();
            for (int q = 0; q < 4; ++q) {
              summ = _mm512_add_epi32(
                  summ, _mm512_madd_epi16(mins[q], x8_pair_bcast(&a->mins[q])));
            }
            const __m512 ad = _mm512_castsi512_ps(x8_pair_bcast(&a->d));
            acc[g][p] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sumi[p]),
                                        _mm512_mul_ps(d8, ad), acc[g][p]);
            acc[g][p] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(summ),
                                         _mm512_mul_ps(dmin8, ad), acc[g][p]);
          }
        }
      }
    }
    for (uint32_t g = 0; g < groups; ++g) {
      for (uint32_t p = 0; p < pair_count; ++p) {
        const uint32_t c = 2 * p;
        float* row = out + (uint64_t)(g0 + g) * DECODE_X8_ROWS;
        x8_pair_store(
            acc[g][p], row + (uint64_t)c * out_stride,
            c + 1 < columns ? row + (uint64_t)(c + 1) * out_stride : NULL);
      }
    }
  }
}

// A Q6_K scale group's sums for a pair: its 4 code vectors against the
// pair's words at |words|.
X8_VNNI512 static inline __m512i x8_pair_q6_dot(const __m512i* codes,
                                                const uint64_t* words) {
  return _mm512_add_epi32(
      _mm512_dpbusd_epi32(
          _mm512_dpbusd_epi32(_mm512_setzero_si512(), codes[0],
                              x8_pair_bcast(&words[0])),
          codes[1], x8_pair_bcast(&words[1])),
      _mm512_dpbusd_epi32(
          _mm512_dpbusd_epi32(_mm512_setzero_si512(), codes[2],
                              x8_pair_bcast(&words[2])),
          codes[3], x8_pair_bcast(&words[3])));
}

X8_VNNI512 static void decode_q6_k_x8_dot_vnni512(
    const void* matrix, uint32_t cols, uint32_t first, uint32_t count,
    const void* const* activations, uint32_t columns, float* out,
    uint32_t out_stride) {
  if (columns < 2) {
    decode_q6_k_x8_dot_vnni(matrix, cols, first, count, activations, columns,
                            out, out_stride);
    return;
  }
  const uint32_t blocks = cols / DECODE_QK_K;
  const uint8_t* base =
      (const uint8_t*)matrix + (uint64_t)first * blocks * 210u;
  const uint32_t pair_count = (columns + 1) / 2;
  const __m512i nibble = _mm512_set1_epi8(15);
  const __m512i high_mask = _mm512_set1_epi8(0x30);
  x8_pair_q8_k_t pairs[X8_PAIRS][X8_PAIR_CHUNK];
  __m512 acc[X8_PAIR_GROUPS][X8_PAIRS];
  for (uint32_t g0 = 0; g0 < count / DECODE_X8_ROWS; g0 += X8_PAIR_GROUPS) {
    const uint32_t groups = count / DECODE_X8_ROWS - g0 < X8_PAIR_GROUPS
                                ? count / DECODE_X8_ROWS - g0
                                : X8_PAIR_GROUPS;
    for (uint32_t g = 0; g < groups; ++g) {
      for (uint32_t p = 0; p < pair_count; ++p) acc[g][p] = _mm512_setzero_ps();
    }
    for (uint32_t chunk = 0; chunk < blocks; chunk += X8_PAIR_CHUNK) {
      const uint32_t n =
          blocks - chunk < X8_PAIR_CHUNK ? blocks - chunk : X8_PAIR_CHUNK;
      x8_pair_q8_k(activations, columns, chunk, n, true, pairs);
      for (uint32_t g = 0; g < groups; ++g) {
        const uint8_t* group =
            base + (uint64_t)(g0 + g) * blocks * X8_Q6_K_BLOCK;
        for (uint32_t b = 0; b < n; ++b) {
          const uint8_t* block = group + (uint64_t)(chunk + b) * X8_Q6_K_BLOCK;
          __m512i sp[4];
          for (int p = 0; p < 4; ++p) {
            sp[p] = x8_dup(block + X8_Q6_K_SCALES + 32 * p);
          }
          __m512i sumi[X8_PAIRS];
          for (uint32_t p = 0; p < pair_count; ++p) {
            sumi[p] = _mm512_setzero_si512();
          }
          for (int k = 0; k < 4; ++k) {
            __m512i codes[16];
            for (int p = 0; p < 8; ++p) {
              const __m512i raw =
                  x8_dup(block + X8_Q6_K_LOW + (8 * k + p) * 32);
              codes[p] = _mm512_and_si512(raw, nibble);
              codes[8 + p] =
                  _mm512_and_si512(_mm512_srli_epi16(raw, 4), nibble);
            }
            for (int m = 0; m < 4; ++m) {
              const __m512i raw =
                  x8_dup(block + X8_Q6_K_HIGH + (4 * k + m) * 32);
              for (int t = 0; t < 4; ++t) {
                const __m512i high =
                    t == 3 ? _mm512_srli_epi16(raw, 2)
                           : _mm512_slli_epi16(raw, (unsigned)(4 - 2 * t));
                codes[4 * m + t] = _mm512_or_si512(
                    codes[4 * m + t], _mm512_and_si512(high, high_mask));
              }
            }
            for (int q = 0; q < 4; ++q) {
              const __m512i sc = _mm512_srai_epi32(
                  _mm512_slli_epi32(sp[k], (unsigned)(24 - 8 * q)), 24);
              for (uint32_t p = 0; p < pair_count; ++p) {
                const uint64_t* y = pairs[p][b].words + 16 * k + 4 * q;
                sumi[p] = _mm512_add_epi32(
                    sumi[p],
                    _mm512_mullo_epi32(x8_pair_q6_dot(codes + 4 * q, y), sc));
              }
            }
          }
          const __m512 dw = x8_dup_f16(block);
          for (uint32_t p = 0; p < pair_count; ++p) {
            const x8_pair_q8_k_t* a = &pairs[p][b];
            __m512i summ = _mm512_setzero_si512();
            for (int q = 0; q < 4; ++q) {
              const __m512i even =
                  _mm512_srai_epi16(_mm512_slli_epi16(sp[q], 8), 8);
              const __m512i odd = _mm512_srai_epi16(sp[q], 8);
              summ = _mm512_add_epi32(
                  summ,
                  _mm512_madd_epi16(even, x8_pair_bcast(&a->groups[2 * q])));
              summ = _mm512_add_epi32(
                  summ,
                  _mm512_madd_epi16(odd, x8_pair_bcast(&a->groups[2 * q + 1])));
            }
            const __m512i total =
                _mm512_sub_epi32(sumi[p], _mm512_slli_epi32(summ, 5));
            const __m512 ad = _mm512_castsi512_ps(x8_pair_bcast(&a->d));
            acc[g][p] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(total),
                                        _mm512_mul_ps(dw, ad), acc[g][p]);
          }
        }
      }
    }
    for (uint32_t g = 0; g < groups; ++g) {
      for (uint32_t p = 0; p < pair_count; ++p) {
        const uint32_t c = 2 * p;
        float* row = out + (uint64_t)(g0 + g) * DECODE_X8_ROWS;
        x8_pair_store(acc[g][p], row + (uint64_t)c * out_stride,
                      c + 1 < columns ? row + (uint64_t)(c + 1) * out_stride
                                      : NULL);
      }
    }
  }
}

static bool x8_has_vnni(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512vnni") &&
         __builtin_cpu_supports("avx512vl");
}

#endif  // DECODE_X8_X86

//===----------------------------------------------------------------------===//
// Selection
//===----------------------------------------------------------------------===//

// [0] Q4_0's, [1] Q8_0's, [2] Q4_K's, [3] Q6_K's.
#define X8_FORMS 4
static int x8_index(uint32_t x8) {
  return x8 == DECODE_DTYPE_Q8_0_X8   ? 1
         : x8 == DECODE_DTYPE_Q4_K_X8 ? 2
         : x8 == DECODE_DTYPE_Q6_K_X8 ? 3
                                      : 0;
}

static const decode_x8_dot_fn_t kX8Portable[X8_FORMS] = {
    decode_q4_0_x8_dot_portable, decode_q8_0_x8_dot_portable,
    decode_q4_k_x8_dot_portable, decode_q6_k_x8_dot_portable};
#if defined(DECODE_X8_X86)
static const decode_x8_dot_fn_t kX8Avx2[X8_FORMS] = {
    decode_q4_0_x8_dot_avx2, decode_q8_0_x8_dot_avx2, decode_q4_k_x8_dot_avx2,
    decode_q6_k_x8_dot_avx2};
static const decode_x8_dot_fn_t kX8Vnni[X8_FORMS] = {
    decode_q4_0_x8_dot_vnni512, decode_q8_0_x8_dot_vnni512,
    decode_q4_k_x8_dot_vnni512, decode_q6_k_x8_dot_vnni512};
#endif

decode_x8_dot_fn_t decode_x8_dot_function(uint32_t x8, decode_simd_t simd) {
  if (!decode_dtype_is_x8(x8)) return NULL;
  const int i = x8_index(x8);
  switch (simd) {
    case DECODE_SIMD_PORTABLE:
      return kX8Portable[i];
#if defined(DECODE_X8_X86)
    case DECODE_SIMD_AVX2:
      return kX8Avx2[i];
    case DECODE_SIMD_AVX512:
      return x8_has_vnni() ? kX8Vnni[i] : kX8Avx2[i];
#endif
    default:
      return NULL;
  }
}

// The selected versions, by x8_index.
static decode_x8_dot_fn_t x8_selected[X8_FORMS] = {
    decode_q4_0_x8_dot_portable, decode_q8_0_x8_dot_portable,
    decode_q4_k_x8_dot_portable, decode_q6_k_x8_dot_portable};

void decode_x8_select(decode_simd_t simd) {
  const uint32_t forms[X8_FORMS] = {DECODE_DTYPE_Q4_0_X8, DECODE_DTYPE_Q8_0_X8,
                                    DECODE_DTYPE_Q4_K_X8, DECODE_DTYPE_Q6_K_X8};
  for (int i = 0; i < X8_FORMS; ++i) {
    const decode_x8_dot_fn_t fn = decode_x8_dot_function(forms[i], simd);
    if (fn) x8_selected[i] = fn;
  }
}

void decode_x8_dot(uint32_t x8, const void* matrix, uint32_t cols,
                   uint32_t first, uint32_t count,
                   const void* const* activations, uint32_t columns, float* out,
                   uint32_t out_stride) {
  x8_selected[x8_index(x8)](matrix, cols, first, count, activations, columns,
                            out, out_stride);
}
