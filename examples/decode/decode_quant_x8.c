// weft decode example: Q4_0 and Q8_0 rows interleaved by eight
// (decode_quant_x8.h).
#include "decode_quant_x8.h"

#include <math.h>
#include <string.h>

#include "decode_checkpoint.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define DECODE_X8_X86 1
#include <immintrin.h>
#endif

// Blocks whose activation sums one pass keeps (on the stack).
#define X8_CHUNK 256u

// The bytes of one row's block of |x8|'s stored type, and of its codes.
static inline uint32_t x8_plain_bytes(uint32_t x8) {
  return x8 == DECODE_DTYPE_Q8_0_X8 ? 34u : 18u;
}
static inline uint32_t x8_code_bytes(uint32_t x8) {
  return x8_plain_bytes(x8) - 2u;
}

uint32_t decode_x8_form(uint32_t dtype) {
  return dtype == DECODE_DTYPE_Q4_0   ? DECODE_DTYPE_Q4_0_X8
         : dtype == DECODE_DTYPE_Q8_0 ? DECODE_DTYPE_Q8_0_X8
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

void decode_x8_pack(uint32_t x8, void* matrix, uint32_t rows, uint32_t cols,
                    void* scratch) {
  const uint32_t plain_bytes = x8_plain_bytes(x8);
  const uint32_t code_bytes = x8_code_bytes(x8);
  const uint32_t blocks = cols / DECODE_QK8_0;
  const uint64_t row_bytes = (uint64_t)blocks * plain_bytes;
  const uint64_t group_bytes = row_bytes * DECODE_X8_ROWS;
  for (uint32_t g = 0; g < rows / DECODE_X8_ROWS; ++g) {
    uint8_t* group = (uint8_t*)matrix + g * group_bytes;
    memcpy(scratch, group, group_bytes);
    for (uint32_t j = 0; j < DECODE_X8_ROWS; ++j) {
      const uint8_t* row = (const uint8_t*)scratch + j * row_bytes;
      for (uint32_t b = 0; b < blocks; ++b) {
        const uint8_t* plain = row + b * plain_bytes;
        uint8_t* out = group + (uint64_t)b * DECODE_X8_ROWS * plain_bytes;
        memcpy(out + 2u * j, plain, 2);
        for (uint32_t i = 0; i < code_bytes; i += 4) {
          memcpy(out + x8_code_offset(j, i), plain + 2 + i, 4);
        }
      }
    }
  }
}

void decode_x8_unpack(uint32_t x8, const void* group, uint32_t cols,
                      void* out) {
  const uint32_t plain_bytes = x8_plain_bytes(x8);
  const uint32_t code_bytes = x8_code_bytes(x8);
  const uint32_t blocks = cols / DECODE_QK8_0;
  for (uint32_t j = 0; j < DECODE_X8_ROWS; ++j) {
    uint8_t* row = (uint8_t*)out + j * (uint64_t)blocks * plain_bytes;
    for (uint32_t b = 0; b < blocks; ++b) {
      const uint8_t* in =
          (const uint8_t*)group + (uint64_t)b * DECODE_X8_ROWS * plain_bytes;
      uint8_t* plain = row + b * plain_bytes;
      memcpy(plain, in + 2u * j, 2);
      for (uint32_t i = 0; i < code_bytes; ++i) {
        plain[2 + i] = in[x8_code_offset(j, i)];
      }
    }
  }
}

// The sums of the codes of blocks |first| .. |first| + |count| of each
// column: the 8 in q - 8, applied once per block.
static void x8_activation_sums(const decode_block_q8_0_t* const* activations,
                               uint32_t columns, uint32_t first,
                               uint32_t count, int32_t sums[][X8_CHUNK]) {
  for (uint32_t c = 0; c < columns; ++c) {
    for (uint32_t b = 0; b < count; ++b) {
      int32_t sum = 0;
      for (uint32_t i = 0; i < DECODE_QK8_0; ++i) {
        sum += activations[c][first + b].qs[i];
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

static void decode_q4_0_x8_dot_portable(
    const void* matrix, uint32_t cols, uint32_t first, uint32_t count,
    const decode_block_q8_0_t* const* activations, uint32_t columns,
    float* out, uint32_t out_stride) {
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
          const decode_block_q8_0_t* a = &activations[c][b];
          const float da = decode_f16_to_f32(a->d);
          for (uint32_t j = 0; j < DECODE_X8_ROWS; ++j) {
            int32_t s = -8 * sums[c][b - chunk];
            for (uint32_t i = 0; i < 16; ++i) {
              const uint8_t byte = block[x8_code_offset(j, i)];
              s += (byte & 15) * a->qs[i] + (byte >> 4) * a->qs[i + 16];
            }
            uint16_t dw;
            memcpy(&dw, block + 2u * j, sizeof(dw));
            acc[c][j] =
                fmaf((float)s, decode_f16_to_f32(dw) * da, acc[c][j]);
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

static void decode_q8_0_x8_dot_portable(
    const void* matrix, uint32_t cols, uint32_t first, uint32_t count,
    const decode_block_q8_0_t* const* activations, uint32_t columns,
    float* out, uint32_t out_stride) {
  const uint32_t blocks = cols / DECODE_QK8_0;
  const uint8_t* base =
      (const uint8_t*)matrix + (uint64_t)first * blocks * X8_Q8_0_PLAIN;
  for (uint32_t g = 0; g < count / DECODE_X8_ROWS; ++g) {
    const uint8_t* group = base + (uint64_t)g * blocks * X8_Q8_0_BLOCK;
    float acc[DECODE_X8_COLUMNS][DECODE_X8_ROWS] = {{0}};
    for (uint32_t b = 0; b < blocks; ++b) {
      const uint8_t* block = group + (uint64_t)b * X8_Q8_0_BLOCK;
      for (uint32_t c = 0; c < columns; ++c) {
        const decode_block_q8_0_t* a = &activations[c][b];
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

// x8_activation_sums with AVX2: the same integers.
X8_AVX2 static void x8_activation_sums_avx2(
    const decode_block_q8_0_t* const* activations, uint32_t columns,
    uint32_t first, uint32_t count, int32_t sums[][X8_CHUNK]) {
  const __m256i ones8 = _mm256_set1_epi8(1);
  const __m256i ones16 = _mm256_set1_epi16(1);
  for (uint32_t c = 0; c < columns; ++c) {
    for (uint32_t b = 0; b < count; ++b) {
      const __m256i v =
          _mm256_loadu_si256((const __m256i*)activations[c][first + b].qs);
      const __m256i s =
          _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, v), ones16);
      __m128i h = _mm_add_epi32(_mm256_castsi256_si128(s),
                                _mm256_extracti128_si256(s, 1));
      h = _mm_add_epi32(h, _mm_unpackhi_epi64(h, h));
      h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 1));
      sums[c][b] = _mm_cvtsi128_si32(h);
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
#define X8_DOT_BODY(DOT)                                                      \
  const uint32_t blocks = cols / DECODE_QK8_0;                               \
  const uint8_t* base =                                                      \
      (const uint8_t*)matrix + (uint64_t)first * blocks * X8_Q4_0_PLAIN;     \
  int32_t sums[DECODE_X8_COLUMNS][X8_CHUNK];                                 \
  for (uint32_t g = 0; g < count / DECODE_X8_ROWS; ++g) {                    \
    const uint8_t* group =                                                   \
        base + (uint64_t)g * blocks * X8_Q4_0_BLOCK;                 \
    __m256 acc[DECODE_X8_COLUMNS];                                           \
    for (uint32_t c = 0; c < columns; ++c) acc[c] = _mm256_setzero_ps();     \
    for (uint32_t chunk = 0; chunk < blocks; chunk += X8_CHUNK) {            \
      const uint32_t n =                                                     \
          blocks - chunk < X8_CHUNK ? blocks - chunk : X8_CHUNK;             \
      x8_activation_sums_avx2(activations, columns, chunk, n, sums);        \
      for (uint32_t b = chunk; b < chunk + n; ++b) {                         \
        const uint8_t* block = group + (uint64_t)b * X8_Q4_0_BLOCK;  \
        const x8_codes_t codes = x8_unpack(block);                           \
        const __m256 dw =                                                    \
            _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)block));         \
        for (uint32_t c = 0; c < columns; ++c) {                             \
          const decode_block_q8_0_t* a = &activations[c][b];                 \
          const __m256i s =                                                  \
              _mm256_sub_epi32(DOT(&codes, a->qs),                           \
                               _mm256_set1_epi32(8 * sums[c][b - chunk]));   \
          acc[c] = _mm256_fmadd_ps(                                          \
              _mm256_cvtepi32_ps(s),                                         \
              _mm256_mul_ps(dw, _mm256_set1_ps(_cvtsh_ss(a->d))), acc[c]);   \
        }                                                                    \
      }                                                                      \
    }                                                                        \
    for (uint32_t c = 0; c < columns; ++c) {                                 \
      _mm256_storeu_ps(out + (uint64_t)c * out_stride + g * DECODE_X8_ROWS,  \
                       acc[c]);                                              \
    }                                                                        \
  }

X8_AVX2 static void decode_q4_0_x8_dot_avx2(
    const void* matrix, uint32_t cols, uint32_t first, uint32_t count,
    const decode_block_q8_0_t* const* activations, uint32_t columns,
    float* out, uint32_t out_stride) {
  X8_DOT_BODY(x8_dot_avx2)
}

X8_VNNI static void decode_q4_0_x8_dot_vnni(
    const void* matrix, uint32_t cols, uint32_t first, uint32_t count,
    const decode_block_q8_0_t* const* activations, uint32_t columns,
    float* out, uint32_t out_stride) {
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
    const __m256i w =
        _mm256_loadu_si256((const __m256i*)(block + 16 + 32 * p));
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
        wabs[2 * p + 1],
        _mm256_sign_epi8(x8_broadcast4(qs + 8 * p + 4), w1));
  }
  return _mm256_add_epi32(_mm256_add_epi32(sums[0], sums[1]),
                          _mm256_add_epi32(sums[2], sums[3]));
}

// The Q8_0 product, |DOT| the integer sum: the portable version's
// operations, lane by lane.
#define X8_Q8_BODY(DOT)                                                      \
  const uint32_t blocks = cols / DECODE_QK8_0;                               \
  const uint8_t* base =                                                      \
      (const uint8_t*)matrix + (uint64_t)first * blocks * X8_Q8_0_PLAIN;     \
  for (uint32_t g = 0; g < count / DECODE_X8_ROWS; ++g) {                    \
    const uint8_t* group = base + (uint64_t)g * blocks * X8_Q8_0_BLOCK;      \
    __m256 acc[DECODE_X8_COLUMNS];                                           \
    for (uint32_t c = 0; c < columns; ++c) acc[c] = _mm256_setzero_ps();     \
    for (uint32_t b = 0; b < blocks; ++b) {                                  \
      const uint8_t* block = group + (uint64_t)b * X8_Q8_0_BLOCK;            \
      __m256i wabs[8];                                                       \
      for (int p = 0; p < 8; ++p) {                                          \
        wabs[p] = _mm256_abs_epi8(                                           \
            _mm256_loadu_si256((const __m256i*)(block + 16 + 32 * p)));      \
      }                                                                      \
      const __m256 dw =                                                      \
          _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)block));           \
      for (uint32_t c = 0; c < columns; ++c) {                               \
        const decode_block_q8_0_t* a = &activations[c][b];                   \
        acc[c] = _mm256_fmadd_ps(                                            \
            _mm256_cvtepi32_ps(DOT(block, wabs, a->qs)),                     \
            _mm256_mul_ps(dw, _mm256_set1_ps(_cvtsh_ss(a->d))), acc[c]);     \
      }                                                                      \
    }                                                                        \
    for (uint32_t c = 0; c < columns; ++c) {                                 \
      _mm256_storeu_ps(out + (uint64_t)c * out_stride + g * DECODE_X8_ROWS,  \
                       acc[c]);                                              \
    }                                                                        \
  }

X8_AVX2 static void decode_q8_0_x8_dot_avx2(
    const void* matrix, uint32_t cols, uint32_t first, uint32_t count,
    const decode_block_q8_0_t* const* activations, uint32_t columns,
    float* out, uint32_t out_stride) {
  X8_Q8_BODY(x8_q8_dot_avx2)
}

X8_VNNI static void decode_q8_0_x8_dot_vnni(
    const void* matrix, uint32_t cols, uint32_t first, uint32_t count,
    const decode_block_q8_0_t* const* activations, uint32_t columns,
    float* out, uint32_t out_stride) {
  X8_Q8_BODY(x8_q8_dot_vnni)
}
#undef X8_Q8_BODY

static bool x8_has_vnni(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512vnni") &&
         __builtin_cpu_supports("avx512vl");
}

#endif  // DECODE_X8_X86

//===----------------------------------------------------------------------===//
// Selection
//===----------------------------------------------------------------------===//

decode_x8_dot_fn_t decode_x8_dot_function(uint32_t x8, decode_simd_t simd) {
  const bool q8 = x8 == DECODE_DTYPE_Q8_0_X8;
  if (!decode_dtype_is_x8(x8)) return NULL;
  switch (simd) {
    case DECODE_SIMD_PORTABLE:
      return q8 ? decode_q8_0_x8_dot_portable : decode_q4_0_x8_dot_portable;
#if defined(DECODE_X8_X86)
    case DECODE_SIMD_AVX2:
      return q8 ? decode_q8_0_x8_dot_avx2 : decode_q4_0_x8_dot_avx2;
    case DECODE_SIMD_AVX512:
      if (x8_has_vnni()) {
        return q8 ? decode_q8_0_x8_dot_vnni : decode_q4_0_x8_dot_vnni;
      }
      return q8 ? decode_q8_0_x8_dot_avx2 : decode_q4_0_x8_dot_avx2;
#endif
    default:
      return NULL;
  }
}

// The selected versions: [0] Q4_0's, [1] Q8_0's.
static decode_x8_dot_fn_t x8_selected[2] = {decode_q4_0_x8_dot_portable,
                                            decode_q8_0_x8_dot_portable};

void decode_x8_select(decode_simd_t simd) {
  const uint32_t forms[2] = {DECODE_DTYPE_Q4_0_X8, DECODE_DTYPE_Q8_0_X8};
  for (int i = 0; i < 2; ++i) {
    const decode_x8_dot_fn_t fn = decode_x8_dot_function(forms[i], simd);
    if (fn) x8_selected[i] = fn;
  }
}

void decode_x8_dot(uint32_t x8, const void* matrix, uint32_t cols,
                   uint32_t first, uint32_t count,
                   const decode_block_q8_0_t* const* activations,
                   uint32_t columns, float* out, uint32_t out_stride) {
  x8_selected[x8 == DECODE_DTYPE_Q8_0_X8](matrix, cols, first, count,
                                          activations, columns, out,
                                          out_stride);
}
