// F32 and F16 rows interleaved by sixteen (examples/decode/decode_float_x16.h):
//  - the repack undone gives the rows back, for widths with and without a
//    multiple of 16 elements;
//  - the product of every version this CPU has (portable, AVX2, AVX-512),
//    for 1 to 8 columns and any run of whole groups, is bit for bit the
//    portable one's with 8 columns over all the rows (so a batch's tile
//    gives each column the token's one-column result);
//  - the portable product is each row's sum in order of fused
//    multiply-adds (fmaf), and within a sequential sum's error bound of
//    the plain rows' dot product in double; weights and columns include
//    zeros, negative values, f16's largest (65504) and a subnormal.
// setjmp.h, stdarg.h and stddef.h must come before cmocka.h.
// clang-format off
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
// clang-format on

#include "decode_float_x16.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode_checkpoint.h"
#include "decode_test_util.h"

// The test's random numbers (decode_test_util.h).
static uint64_t g_state = 0x2545F4914F6CDD1Dull;
static uint64_t next_random(void) { return decode_test_random(&g_state); }
static float uniform(float low, float high) {
  return decode_test_uniform(&g_state, low, high);
}

enum { kMaxRows = 80, kMaxCols = 803, kColumns = DECODE_X16_COLUMNS };

// A weight: mostly uniform, sometimes an edge value.
static float random_weight(bool half) {
  switch (next_random() % 16) {
    case 0:
      return 0.0f;
    case 1:
      return half ? 65504.0f : -1e-3f;  // f16's largest
    case 2:
      return half ? decode_f16_to_f32(0x0001) : 1e-38f;  // a subnormal
    default:
      return uniform(-1.0f, 1.0f);
  }
}

static void repack_and_products_match(void** state) {
  (void)state;
  static uint8_t plain[kMaxRows * kMaxCols * 4];
  static uint8_t packed[kMaxRows * kMaxCols * 4];
  static uint8_t scratch[16 * kMaxCols * 4];
  static uint8_t back[16 * kMaxCols * 4];
  static float x[kColumns][kMaxCols];
  static float want[kColumns * kMaxRows];
  static float got[kColumns * kMaxRows];
  const uint32_t widths[] = {1, 7, 16, 33, 64, 768, 803};
  const uint32_t row_counts[] = {16, 32, 48, 80};
  int compared = 0;
  int versions = 0;
  for (int simd = 0; simd < DECODE_SIMD_COUNT; ++simd) {
    versions += decode_x16_dot_function(DECODE_DTYPE_F32_X16,
                                        (decode_simd_t)simd) != NULL;
  }
  assert_true(versions >= 1);  // the portable one, on every CPU
  for (uint32_t form = 0; form < 2; ++form) {
    const bool half = form == 1;
    const uint32_t x16 = half ? DECODE_DTYPE_F16_X16 : DECODE_DTYPE_F32_X16;
    assert_int_equal(decode_x16_form(half ? DECODE_DTYPE_F16 : DECODE_DTYPE_F32),
                     x16);
    assert_true(decode_dtype_is_x16(x16));
    const uint32_t size = half ? 2u : 4u;
    for (size_t w = 0; w < sizeof(widths) / sizeof(widths[0]); ++w) {
      const uint32_t cols = widths[w];
      const uint32_t rows = row_counts[w % 4];
      for (uint32_t i = 0; i < rows * cols; ++i) {
        const float v = random_weight(half);
        if (half) {
          ((uint16_t*)plain)[i] = decode_f32_to_f16(v);
        } else {
          ((float*)plain)[i] = v;
        }
      }
      for (uint32_t c = 0; c < kColumns; ++c) {
        for (uint32_t k = 0; k < cols; ++k) {
          x[c][k] = next_random() % 11 == 0 ? 0.0f : uniform(-4.0f, 4.0f);
        }
      }
      memcpy(packed, plain, (size_t)rows * cols * size);
      decode_x16_pack(x16, packed, rows, cols, scratch);
      for (uint32_t g = 0; g < rows / 16; ++g) {
        decode_x16_unpack(x16, packed + (size_t)g * 16 * cols * size, cols,
                          back);
        assert_memory_equal(back, plain + (size_t)g * 16 * cols * size,
                            (size_t)16 * cols * size);
      }
      const float* xs[kColumns];
      for (uint32_t c = 0; c < kColumns; ++c) xs[c] = x[c];
      decode_x16_dot_function(x16, DECODE_SIMD_PORTABLE)(
          packed, cols, 0, rows, xs, kColumns, want, kMaxRows);
      for (uint32_t r = 0; r < rows; ++r) {
        for (uint32_t c = 0; c < kColumns; ++c) {
          float chain = 0.0f;
          double sum = 0.0, magnitude = 0.0;
          for (uint32_t k = 0; k < cols; ++k) {
            const uint64_t i = (uint64_t)r * cols + k;
            const float wk = half ? decode_f16_to_f32(((uint16_t*)plain)[i])
                                  : ((float*)plain)[i];
            chain = fmaf(wk, x[c][k], chain);
            sum += (double)wk * x[c][k];
            magnitude += fabs((double)wk * x[c][k]);
          }
          const float value = want[c * kMaxRows + r];
          if (memcmp(&value, &chain, sizeof(float)) != 0) {
            fail_msg("%s, %u elements, row %u, column %u: %.9g, the fmaf "
                     "chain %.9g", decode_dtype_name(x16), cols, r, c,
                     (double)value, (double)chain);
          }
          // A sum of n terms in order errs by at most about n u of the
          // terms' magnitude (u = 2^-24).
          const double bound = 1.01 * cols * ldexp(1.0, -24) * magnitude;
          if (!(fabs((double)value - sum) <= bound + 1e-30)) {
            fail_msg("%s, %u elements, row %u, column %u: %.9g, the plain "
                     "dot %.9g (bound %.3g)", decode_dtype_name(x16), cols, r,
                     c, (double)value, sum, bound);
          }
        }
      }
      for (int simd = 0; simd < DECODE_SIMD_COUNT; ++simd) {
        const decode_x16_dot_fn_t dot =
            decode_x16_dot_function(x16, (decode_simd_t)simd);
        if (!dot) continue;
        for (uint32_t columns = 1; columns <= kColumns; ++columns) {
          // Every group run: all rows, then from the second group on.
          for (uint32_t first = 0; first < rows && first <= 16; first += 16) {
            memset(got, 0, sizeof(got));
            dot(packed, cols, first, rows - first, xs, columns, got, kMaxRows);
            for (uint32_t c = 0; c < columns; ++c) {
              for (uint32_t r = first; r < rows; ++r) {
                const float a = got[c * kMaxRows + (r - first)];
                const float b = want[c * kMaxRows + r];
                if (memcmp(&a, &b, sizeof(float)) != 0) {
                  fail_msg("%s version %d, %u elements, %u columns from row "
                           "%u: row %u column %u %.9g, portable %.9g",
                           decode_dtype_name(x16), simd, cols, columns, first,
                           r, c, (double)a, (double)b);
                }
              }
            }
            ++compared;
          }
        }
      }
    }
  }
  printf("x16: %d products compared (%d versions)\n", compared, versions);
  // Every version, both forms, 8 column counts and 12 (width, first row)
  // runs: the 7 widths' row counts 16, 32, 48, 80, 16, 32, 48 give 1 or 2.
  assert_int_equal(compared, versions * 2 * 8 * 12);
}

// The forms are not the stored types: a checkpoint keeps F32 and F16.
static void forms_store_as_their_types(void** state) {
  (void)state;
  assert_int_equal(decode_dtype_stored(DECODE_DTYPE_F32_X16), DECODE_DTYPE_F32);
  assert_int_equal(decode_dtype_stored(DECODE_DTYPE_F16_X16), DECODE_DTYPE_F16);
  assert_false(decode_dtype_is_supported(DECODE_DTYPE_F32_X16));
  assert_true(decode_dtype_is_supported(DECODE_DTYPE_F32));
  assert_int_equal(decode_dtype_bytes(DECODE_DTYPE_F16_X16, 768), 1536);
  assert_int_equal(decode_x16_form(DECODE_DTYPE_Q4_0), 0);
  assert_string_equal(decode_dtype_name(DECODE_DTYPE_F16_X16), "f16_x16");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(repack_and_products_match),
      cmocka_unit_test(forms_store_as_their_types),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
