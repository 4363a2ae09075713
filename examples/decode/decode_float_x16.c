// F32 and F16 matrices with rows interleaved by sixteen: the repack and
// the products (decode_float_x16.h). Group g of a matrix is rows 16g ..
// 16g + 15; within it element k of row j is at index 16k + j.
#include "decode_float_x16.h"

#include <math.h>
#include <string.h>

#include "decode_checkpoint.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define DECODE_X16_X86 1
#include <immintrin.h>
#endif

uint32_t decode_x16_form(uint32_t dtype) {
  return dtype == DECODE_DTYPE_F32   ? DECODE_DTYPE_F32_X16
         : dtype == DECODE_DTYPE_F16 ? DECODE_DTYPE_F16_X16
                                     : 0u;
}

static inline uint32_t x16_element_bytes(uint32_t x16) {
  return x16 == DECODE_DTYPE_F16_X16 ? 2u : 4u;
}

void decode_x16_pack(uint32_t x16, void* matrix, uint32_t rows, uint32_t cols,
                     void* scratch) {
  const uint32_t size = x16_element_bytes(x16);
  const uint64_t group_bytes = (uint64_t)DECODE_X16_ROWS * cols * size;
  for (uint32_t g = 0; g < rows / DECODE_X16_ROWS; ++g) {
    uint8_t* group = (uint8_t*)matrix + g * group_bytes;
    memcpy(scratch, group, group_bytes);
    const uint8_t* plain = (const uint8_t*)scratch;
    for (uint32_t j = 0; j < DECODE_X16_ROWS; ++j) {
      for (uint32_t k = 0; k < cols; ++k) {
        memcpy(group + ((uint64_t)k * DECODE_X16_ROWS + j) * size,
               plain + ((uint64_t)j * cols + k) * size, size);
      }
    }
  }
}

void decode_x16_unpack(uint32_t x16, const void* group, uint32_t cols,
                       void* out) {
  const uint32_t size = x16_element_bytes(x16);
  for (uint32_t j = 0; j < DECODE_X16_ROWS; ++j) {
    for (uint32_t k = 0; k < cols; ++k) {
      memcpy((uint8_t*)out + ((uint64_t)j * cols + k) * size,
             (const uint8_t*)group + ((uint64_t)k * DECODE_X16_ROWS + j) * size,
             size);
    }
  }
}

// Bytes of a group of |cols| elements a row, and the group holding row
// |first| (a multiple of 16) of |matrix|.
static inline uint64_t x16_group_bytes(uint32_t cols, bool half) {
  return (uint64_t)DECODE_X16_ROWS * cols * (half ? 2u : 4u);
}
static inline const uint8_t* x16_group(const void* matrix,
                                       uint64_t group_bytes, uint32_t first) {
  return (const uint8_t*)matrix +
         (uint64_t)(first / DECODE_X16_ROWS) * group_bytes;
}

//===----------------------------------------------------------------------===//
// Portable
//===----------------------------------------------------------------------===//

static void x16_dot_portable(const void* matrix, uint32_t cols, uint32_t first,
                             uint32_t count, const float* const* x,
                             uint32_t columns, float* out, uint32_t out_stride,
                             bool half) {
  const uint64_t group_bytes = x16_group_bytes(cols, half);
  const uint8_t* base = x16_group(matrix, group_bytes, first);
  for (uint32_t g = 0; g < count / DECODE_X16_ROWS; ++g) {
    const uint8_t* group = base + (uint64_t)g * group_bytes;
    for (uint32_t c = 0; c < columns; ++c) {
      float sums[DECODE_X16_ROWS] = {0};
      for (uint32_t k = 0; k < cols; ++k) {
        const float xk = x[c][k];
        for (uint32_t j = 0; j < DECODE_X16_ROWS; ++j) {
          const uint64_t i = (uint64_t)k * DECODE_X16_ROWS + j;
          const float w = half ? decode_f16_to_f32(((const uint16_t*)group)[i])
                               : ((const float*)group)[i];
          sums[j] = fmaf(w, xk, sums[j]);
        }
      }
      memcpy(out + (uint64_t)c * out_stride + g * DECODE_X16_ROWS, sums,
             sizeof(sums));
    }
  }
}

static void x16_dot_f32_portable(const void* matrix, uint32_t cols,
                                 uint32_t first, uint32_t count,
                                 const float* const* x, uint32_t columns,
                                 float* out, uint32_t out_stride) {
  x16_dot_portable(matrix, cols, first, count, x, columns, out, out_stride,
                   false);
}

static void x16_dot_f16_portable(const void* matrix, uint32_t cols,
                                 uint32_t first, uint32_t count,
                                 const float* const* x, uint32_t columns,
                                 float* out, uint32_t out_stride) {
  x16_dot_portable(matrix, cols, first, count, x, columns, out, out_stride,
                   true);
}

#if defined(DECODE_X16_X86)

//===----------------------------------------------------------------------===//
// AVX-512: a group's 16 rows a register
//===----------------------------------------------------------------------===//

#define X16_AVX512 __attribute__((target("avx512f,avx2,fma,f16c")))

// Element k of a group's 16 rows.
X16_AVX512 __attribute__((always_inline)) static inline __m512 x16_load16(
    const uint8_t* group, uint32_t k, bool half) {
  return half ? _mm512_cvtph_ps(_mm256_loadu_si256(
                    (const __m256i*)(group + (uint64_t)k * 32u)))
              : _mm512_loadu_ps((const float*)group + (uint64_t)k * 16u);
}

// |G| groups (1, 2 or 4) by |C| columns (1 to 8; at most 4 with 4
// groups): G C sums in registers, each weight load serving C columns and
// each broadcast G groups.
X16_AVX512 __attribute__((always_inline)) static inline void x16_tile_avx512(
    const uint8_t* group, uint64_t group_bytes, uint32_t cols,
    const float* const* x, float* out, uint32_t out_stride, bool half,
    const int G, const int C) {
  __m512 acc[4][8];
  for (int g = 0; g < G; ++g) {
    for (int c = 0; c < C; ++c) acc[g][c] = _mm512_setzero_ps();
  }
  for (uint32_t k = 0; k < cols; ++k) {
    __m512 w[4];
    for (int g = 0; g < G; ++g) {
      w[g] = x16_load16(group + (uint64_t)g * group_bytes, k, half);
    }
    for (int c = 0; c < C; ++c) {
      const __m512 xk = _mm512_set1_ps(x[c][k]);
      for (int g = 0; g < G; ++g) acc[g][c] = _mm512_fmadd_ps(w[g], xk, acc[g][c]);
    }
  }
  for (int g = 0; g < G; ++g) {
    for (int c = 0; c < C; ++c) {
      _mm512_storeu_ps(out + (uint64_t)c * out_stride + 16u * (uint32_t)g,
                       acc[g][c]);
    }
  }
}

// The tile for a run-time |columns|, G groups.
#define X16_TILE_CASES(TILE, G)                                          \
  switch (columns) {                                                     \
    case 1: TILE(G, 1); break;                                           \
    case 2: TILE(G, 2); break;                                           \
    case 3: TILE(G, 3); break;                                           \
    case 4: TILE(G, 4); break;                                           \
    case 5: TILE(G, 5); break;                                           \
    case 6: TILE(G, 6); break;                                           \
    case 7: TILE(G, 7); break;                                           \
    default: TILE(G, 8); break;                                          \
  }

X16_AVX512 __attribute__((always_inline)) static inline void x16_dot_avx512(
    const void* matrix, uint32_t cols, uint32_t first, uint32_t count,
    const float* const* x, uint32_t columns, float* out, uint32_t out_stride,
    bool half) {
  const uint64_t group_bytes = x16_group_bytes(cols, half);
  const uint8_t* base = x16_group(matrix, group_bytes, first);
  const uint32_t groups = count / DECODE_X16_ROWS;
  uint32_t g = 0;
  uint32_t c = 0;
#define X16_TILE(G, C)                                                     \
  x16_tile_avx512(base + (uint64_t)g * group_bytes, group_bytes, cols,     \
                  x + c, out + (uint64_t)c * out_stride + 16u * g,         \
                  out_stride, half, G, C)
  // Four groups by up to four columns a pass where there are four groups
  // (a GEMM tile's 64 rows): 4 weight loads and 4 broadcasts per 16
  // multiply-adds. Measured against two groups by eight on a Zen 5 VM:
  // Prefill/110M-f16/128 1.04x, f32 level; four by six 0.96x on f32.
  for (; g + 4 <= groups; g += 4) {
    for (c = 0; c < columns; c += 4) {
      switch (columns - c) {
        case 1: X16_TILE(4, 1); break;
        case 2: X16_TILE(4, 2); break;
        case 3: X16_TILE(4, 3); break;
        default: X16_TILE(4, 4); break;
      }
    }
  }
  c = 0;
  for (; g + 2 <= groups; g += 2) X16_TILE_CASES(X16_TILE, 2)
  if (g < groups) X16_TILE_CASES(X16_TILE, 1)
#undef X16_TILE
}

X16_AVX512 static void x16_dot_f32_avx512(const void* matrix, uint32_t cols,
                                          uint32_t first, uint32_t count,
                                          const float* const* x,
                                          uint32_t columns, float* out,
                                          uint32_t out_stride) {
  x16_dot_avx512(matrix, cols, first, count, x, columns, out, out_stride,
                 false);
}

X16_AVX512 static void x16_dot_f16_avx512(const void* matrix, uint32_t cols,
                                          uint32_t first, uint32_t count,
                                          const float* const* x,
                                          uint32_t columns, float* out,
                                          uint32_t out_stride) {
  x16_dot_avx512(matrix, cols, first, count, x, columns, out, out_stride,
                 true);
}

//===----------------------------------------------------------------------===//
// AVX2: a group's 16 rows as two registers
//===----------------------------------------------------------------------===//

#define X16_AVX2 __attribute__((target("avx2,fma,f16c")))

// Element k of rows 8h .. 8h + 7 of a group.
X16_AVX2 __attribute__((always_inline)) static inline __m256 x16_load8(
    const uint8_t* group, uint32_t k, int h, bool half) {
  return half ? _mm256_cvtph_ps(_mm_loadu_si128(
                    (const __m128i*)(group + (uint64_t)k * 32u + 16u * h)))
              : _mm256_loadu_ps((const float*)group + (uint64_t)k * 16u + 8u * h);
}

// One group by |C| columns (1 to 6): 2 C sums in registers (16 in all).
X16_AVX2 __attribute__((always_inline)) static inline void x16_tile_avx2(
    const uint8_t* group, uint32_t cols, const float* const* x, float* out,
    uint32_t out_stride, bool half, const int C) {
  __m256 acc[6][2];
  for (int c = 0; c < C; ++c) acc[c][0] = acc[c][1] = _mm256_setzero_ps();
  for (uint32_t k = 0; k < cols; ++k) {
    const __m256 w0 = x16_load8(group, k, 0, half);
    const __m256 w1 = x16_load8(group, k, 1, half);
    for (int c = 0; c < C; ++c) {
      const __m256 xk = _mm256_set1_ps(x[c][k]);
      acc[c][0] = _mm256_fmadd_ps(w0, xk, acc[c][0]);
      acc[c][1] = _mm256_fmadd_ps(w1, xk, acc[c][1]);
    }
  }
  for (int c = 0; c < C; ++c) {
    _mm256_storeu_ps(out + (uint64_t)c * out_stride, acc[c][0]);
    _mm256_storeu_ps(out + (uint64_t)c * out_stride + 8, acc[c][1]);
  }
}

X16_AVX2 __attribute__((always_inline)) static inline void x16_dot_avx2(
    const void* matrix, uint32_t cols, uint32_t first, uint32_t count,
    const float* const* x, uint32_t columns, float* out, uint32_t out_stride,
    bool half) {
  const uint64_t group_bytes = x16_group_bytes(cols, half);
  const uint8_t* base = x16_group(matrix, group_bytes, first);
  for (uint32_t g = 0; g < count / DECODE_X16_ROWS; ++g) {
    const uint8_t* group = base + (uint64_t)g * group_bytes;
    // Columns in runs of up to six (a run of 7 or 8 as 4 and the rest).
    for (uint32_t c = 0; c < columns;) {
      const uint32_t left = columns - c;
      const uint32_t run = left > 6 ? 4 : left;
      const float* const* xs = x + c;
      float* o = out + (uint64_t)c * out_stride + 16u * g;
      switch (run) {
        case 1: x16_tile_avx2(group, cols, xs, o, out_stride, half, 1); break;
        case 2: x16_tile_avx2(group, cols, xs, o, out_stride, half, 2); break;
        case 3: x16_tile_avx2(group, cols, xs, o, out_stride, half, 3); break;
        case 4: x16_tile_avx2(group, cols, xs, o, out_stride, half, 4); break;
        case 5: x16_tile_avx2(group, cols, xs, o, out_stride, half, 5); break;
        default: x16_tile_avx2(group, cols, xs, o, out_stride, half, 6); break;
      }
      c += run;
    }
  }
}

X16_AVX2 static void x16_dot_f32_avx2(const void* matrix, uint32_t cols,
                                      uint32_t first, uint32_t count,
                                      const float* const* x, uint32_t columns,
                                      float* out, uint32_t out_stride) {
  x16_dot_avx2(matrix, cols, first, count, x, columns, out, out_stride, false);
}

X16_AVX2 static void x16_dot_f16_avx2(const void* matrix, uint32_t cols,
                                      uint32_t first, uint32_t count,
                                      const float* const* x, uint32_t columns,
                                      float* out, uint32_t out_stride) {
  x16_dot_avx2(matrix, cols, first, count, x, columns, out, out_stride, true);
}

#endif  // DECODE_X16_X86

//===----------------------------------------------------------------------===//
// Selection
//===----------------------------------------------------------------------===//

decode_x16_dot_fn_t decode_x16_dot_function(uint32_t x16, decode_simd_t simd) {
  if (!decode_dtype_is_x16(x16)) return NULL;
  const bool half = x16 == DECODE_DTYPE_F16_X16;
  switch (simd) {
    case DECODE_SIMD_PORTABLE:
      return half ? x16_dot_f16_portable : x16_dot_f32_portable;
#if defined(DECODE_X16_X86)
    case DECODE_SIMD_AVX2:
      __builtin_cpu_init();
      if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
        return NULL;
      }
      return half ? x16_dot_f16_avx2 : x16_dot_f32_avx2;
    case DECODE_SIMD_AVX512:
      __builtin_cpu_init();
      if (!__builtin_cpu_supports("avx512f")) return NULL;
      return half ? x16_dot_f16_avx512 : x16_dot_f32_avx512;
#endif
    default:
      return NULL;
  }
}

// [0] F32's, [1] F16's.
static decode_x16_dot_fn_t x16_selected[2] = {x16_dot_f32_portable,
                                              x16_dot_f16_portable};

void decode_x16_select(decode_simd_t simd) {
  const uint32_t forms[2] = {DECODE_DTYPE_F32_X16, DECODE_DTYPE_F16_X16};
  for (int i = 0; i < 2; ++i) {
    const decode_x16_dot_fn_t fn = decode_x16_dot_function(forms[i], simd);
    if (fn) x16_selected[i] = fn;
  }
}

void decode_x16_dot(uint32_t x16, const void* matrix, uint32_t cols,
                    uint32_t first, uint32_t count, const float* const* x,
                    uint32_t columns, float* out, uint32_t out_stride) {
  x16_selected[x16 == DECODE_DTYPE_F16_X16](matrix, cols, first, count, x,
                                            columns, out, out_stride);
}
