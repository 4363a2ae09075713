// The decode kernels' SIMD helpers (AVX-512 and AVX2, each where the CPU
// has it) against their scalar forms, bit for bit: ATTENTION's scores (sixteen keys reduced together), its softmax
// (numerators and their sum) and weighted sum, and SwiGLU's exp. Every
// path through the decoder (a token's step, a batch's tile of any shape)
// may take either form for the same element, so they must agree exactly;
// and the polynomial exp must stay within a few ulp of e^x.
//
// White-box: the helpers are static in decode_kernels.c, included here.
// setjmp.h, stdarg.h and stddef.h must come before cmocka.h.
// clang-format off
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
// clang-format on

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "decode_kernels.c"

static uint32_t seed = 1;

static float uniform(float low, float high) {
  seed = seed * 1664525u + 1013904223u;
  return low + (high - low) * (float)(seed >> 8) / 16777216.0f;
}

static bool has_avx512(void) {
#if defined(DECODE_X86)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f");
#else
  return false;
#endif
}

static bool has_avx2(void) {
#if defined(DECODE_X86)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

static void assert_same_bits(float got, float want, const char* what,
                             uint64_t index) {
  if (memcmp(&got, &want, sizeof(float)) != 0) {
    fail_msg("%s[%llu]: %.9g, scalar %.9g", what, (unsigned long long)index,
             (double)got, (double)want);
  }
}

#if defined(DECODE_X86)
// decode_exp16_avx512 over |n| (a multiple of 16) floats.
__attribute__((target("avx512f"))) static void exp16_array(const float* x,
                                                           float* out, int n) {
  for (int i = 0; i < n; i += 16) {
    _mm512_storeu_ps(out + i, decode_exp16_avx512(_mm512_loadu_ps(x + i)));
  }
}

// decode_exp8_avx2 over |n| (a multiple of 8) floats.
__attribute__((target("avx2,fma"))) static void exp8_array(const float* x,
                                                          float* out, int n) {
  for (int i = 0; i < n; i += 8) {
    _mm256_storeu_ps(out + i, decode_exp8_avx2(_mm256_loadu_ps(x + i)));
  }
}
#endif

static void exp_is_close_and_vector_matches(void** state) {
  (void)state;
  int compared = 0;
  float x[512], vector[512];
  for (int i = 0; i < 512; ++i) x[i] = -110.0f + 200.0f * (float)i / 511.0f;
  x[0] = -0.0f;
  x[1] = 0.0f;
  x[2] = -INFINITY;
  x[3] = 1e-30f;
  for (int i = 0; i < 512; ++i) {
    const float e = decode_exp_poly(x[i]);
    if (x[i] > -87.0f && x[i] < 88.0f) {
      const double want = exp((double)x[i]);
      if (!(fabs((double)e - want) <= 4e-7 * want)) {
        fail_msg("exp(%.9g) = %.9g, e^x %.9g", (double)x[i], (double)e, want);
      }
    }
    assert_true(e >= 0.0f && !isnan(e));
  }
#if defined(DECODE_X86)
  if (has_avx512()) {
    exp16_array(x, vector, 512);
    for (int i = 0; i < 512; ++i) {
      assert_same_bits(vector[i], decode_exp_poly(x[i]), "exp", i);
      ++compared;
    }
  }
  if (has_avx2()) {
    exp8_array(x, vector, 512);
    for (int i = 0; i < 512; ++i) {
      assert_same_bits(vector[i], decode_exp_poly(x[i]), "exp8", i);
      ++compared;
    }
  }
#endif
  (void)vector;
  printf("exp: %d vector lanes compared\n", compared);
}

// The softmax's numerators and their sum, every length from 1 to 100.
static void softmax_versions_match(void** state) {
  (void)state;
  float scores[100], portable[100], vector[100];
  for (int i = 0; i < 100; ++i) scores[i] = uniform(-30.0f, 30.0f);
  int compared = 0;
  for (uint64_t length = 1; length <= 100; ++length) {
    memcpy(portable, scores, sizeof(scores));
    const float want = decode_softmax_portable(portable, length);
    // The sum is of numerators at most 1, the largest exactly 1.
    assert_true(want >= 1.0f && want <= (float)length);
#if defined(DECODE_X86)
    if (has_avx512()) {
      memcpy(vector, scores, sizeof(scores));
      assert_same_bits(decode_softmax_avx512(vector, length), want, "sum",
                       length);
      for (uint64_t t = 0; t < length; ++t) {
        assert_same_bits(vector[t], portable[t], "numerator", t);
        ++compared;
      }
    }
    if (has_avx2()) {
      memcpy(vector, scores, sizeof(scores));
      assert_same_bits(decode_softmax_avx2(vector, length), want, "sum8",
                       length);
      for (uint64_t t = 0; t < length; ++t) {
        assert_same_bits(vector[t], portable[t], "numerator8", t);
        ++compared;
      }
    }
#endif
  }
  (void)vector;
  printf("softmax: %d numerators compared\n", compared);
}

static void swiglu_versions_match(void** state) {
  (void)state;
  float gate[40], up[40], got[40];
  for (int i = 0; i < 40; ++i) {
    gate[i] = uniform(-20.0f, 20.0f);
    up[i] = uniform(-3.0f, 3.0f);
  }
  gate[0] = -150.0f;  // e^150: past the clamp
  gate[1] = 150.0f;
  int compared = 0;
  for (uint32_t n = 1; n <= 40 && has_avx512(); ++n) {
    memset(got, 0, sizeof(got));
    decode_swiglu_avx512(gate, up, n, got);
    for (uint32_t i = 0; i < n; ++i) {
      assert_same_bits(got[i], decode_swiglu(gate[i], up[i]), "swiglu", i);
      ++compared;
    }
    for (uint32_t i = n; i < 40; ++i) assert_true(got[i] == 0.0f);
  }
#if defined(DECODE_X86)
  for (uint32_t n = 1; n <= 40 && has_avx2(); ++n) {
    memset(got, 0, sizeof(got));
    decode_swiglu_avx2(gate, up, n, got);
    for (uint32_t i = 0; i < n; ++i) {
      assert_same_bits(got[i], decode_swiglu(gate[i], up[i]), "swiglu8", i);
      ++compared;
    }
    for (uint32_t i = n; i < 40; ++i) assert_true(got[i] == 0.0f);
  }
#endif
  // silu itself: g sigmoid(g) against the double formula.
  for (int i = 0; i < 40; ++i) {
    const double g = gate[i];
    const double want = g / (1.0 + exp(-g)) * up[i];
    const float s = decode_swiglu(gate[i], up[i]);
    assert_true(fabs((double)s - want) <= 1e-6 * fabs(want) + 1e-30);
  }
  printf("swiglu: %d vector lanes compared\n", compared);
}

static void scores_match_one_key_dots(void** state) {
  (void)state;
  decode_dot_select();
  enum { kKeys = 100, kStride = 80 };
  static float keys[kKeys * kStride + 16];
  float q[kStride], got[kKeys];
  for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); ++i) {
    keys[i] = uniform(-1.0f, 1.0f);
  }
  for (int i = 0; i < kStride; ++i) q[i] = uniform(-1.0f, 1.0f);
  int compared = 0;
  const uint32_t head_sizes[] = {16, 48, 64, 72, 80};
  for (size_t h = 0; h < sizeof(head_sizes) / sizeof(head_sizes[0]); ++h) {
    for (uint64_t length = 1; length <= kKeys; ++length) {
      decode_scores(q, keys + 3, kStride, head_sizes[h], length, 0.125f, got);
      for (uint64_t t = 0; t < length; ++t) {
        const float want =
            decode_dot_fns[0](keys + 3 + t * kStride, q, head_sizes[h]) *
            0.125f;
        assert_same_bits(got[t], want, "score", t);
        ++compared;
      }
#if defined(DECODE_X86)
      // AVX2's four keys at a time against its one-key dot, whichever
      // version the CPU chose.
      if (has_avx2()) {
        decode_scores_avx2(q, keys + 3, kStride, head_sizes[h], length,
                           0.125f, got);
        for (uint64_t t = 0; t < length; ++t) {
          const float want =
              decode_dot_f32_avx2(keys + 3 + t * kStride, q, head_sizes[h]) *
              0.125f;
          assert_same_bits(got[t], want, "score8", t);
          ++compared;
        }
      }
#endif
    }
  }
  printf("scores: %d compared (%s)\n", compared,
         decode_scores == decode_scores_portable ? "portable" : "SIMD");
}

static void weighted_sums_match(void** state) {
  (void)state;
  enum { kLength = 37, kStride = 200 };
  static float values[kLength * kStride];
  float scores[kLength], want[kStride], got[kStride];
  for (int i = 0; i < kLength * kStride; ++i) values[i] = uniform(-2.0f, 2.0f);
  for (int t = 0; t < kLength; ++t) scores[t] = uniform(0.0f, 1.0f);
  const decode_weighted_sum_fn_t versions[] = {
#if defined(DECODE_X86)
      has_avx512() ? decode_weighted_sum_avx512 : decode_weighted_sum_portable,
      has_avx2() ? decode_weighted_sum_avx2 : decode_weighted_sum_portable,
#endif
      decode_weighted_sum_portable};
  int compared = 0;
  const uint32_t widths[] = {1, 8, 16, 40, 64, 72, 128, 144, 200};
  for (size_t v = 0; v < sizeof(versions) / sizeof(versions[0]); ++v) {
    for (size_t w = 0; w < sizeof(widths) / sizeof(widths[0]); ++w) {
      decode_weighted_sum_portable(scores, 0.3f, values, kStride, kLength,
                                   widths[w], want);
      // The four partial sums against the plain sum in double.
      for (uint32_t i = 0; i < widths[w]; ++i) {
        double sum = 0.0, magnitude = 0.0;
        for (int t = 0; t < kLength; ++t) {
          const double term =
              (double)(scores[t] * 0.3f) * values[t * kStride + i];
          sum += term;
          magnitude += fabs(term);
        }
        assert_true(fabs((double)want[i] - sum) <= 1e-6 * magnitude);
      }
      versions[v](scores, 0.3f, values, kStride, kLength, widths[w], got);
      for (uint32_t i = 0; i < widths[w]; ++i) {
        assert_same_bits(got[i], want[i], "weighted sum", i);
        ++compared;
      }
    }
  }
  printf("weighted sums: %d compared\n", compared);
}

// The GEMM tiles' rows-by-four-columns products (up to four rows on
// AVX-512, two on AVX2) and the four-column one against the token's
// dot of each row and column, f32 and f16, for widths with and without a
// tail.
static void tile_products_match_the_token_dot(void** state) {
  (void)state;
  DECODE_DOT_INITIALIZE();
  enum { kMaxN = 803 };
  static float x[4][kMaxN];
  static float wf[4][kMaxN];
  static uint16_t wh[4][kMaxN];
  const uint32_t widths[] = {16, 32, 48, 768, 803, 7};
  int compared = 0;
  for (size_t k = 0; k < sizeof(widths) / sizeof(widths[0]); ++k) {
    const uint32_t n = widths[k];
    for (int r = 0; r < 4; ++r) {
      for (uint32_t i = 0; i < n; ++i) {
        x[r][i] = uniform(-2.0f, 2.0f);
        wh[r][i] = decode_f32_to_f16(uniform(-1.0f, 1.0f));
        wf[r][i] = uniform(-1.0f, 1.0f);
      }
    }
    const float* xs[4] = {x[0], x[1], x[2], x[3]};
    for (uint32_t dtype = 0; dtype < 2; ++dtype) {
      const void* rows[4];
      for (int r = 0; r < 4; ++r) {
        rows[r] = dtype == DECODE_DTYPE_F16 ? (const void*)wh[r]
                                            : (const void*)wf[r];
      }
      float want[16];
      for (int r = 0; r < 4; ++r) {
        for (int c = 0; c < 4; ++c) {
          want[4 * r + c] = decode_dot_fns[dtype](rows[r], xs[c], n);
        }
      }
#if defined(DECODE_X86)
      float got[16];
      if (decode_dot4_fns[dtype]) {
        decode_dot4_fns[dtype](rows[1], xs, n, got);
        for (int c = 0; c < 4; ++c) {
          assert_same_bits(got[c], want[4 + c], "dot4", (uint64_t)c);
        }
        ++compared;
      }
      if (decode_dotrx4_fns[dtype]) {
        assert_true(decode_dotrx4_rows >= 2 && decode_dotrx4_rows <= 4);
        for (uint32_t count = 1; count <= decode_dotrx4_rows; ++count) {
          decode_dotrx4_fns[dtype](rows, count, xs, n, got);
          for (uint32_t i = 0; i < 4 * count; ++i) {
            assert_same_bits(got[i], want[i], "rows x 4", i);
          }
        }
        ++compared;
      }
#endif
    }
  }
#if defined(DECODE_X86)
  // Every x86 CPU the build runs on has AVX2 at least (else the products
  // are portable and this compares nothing).
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
      !getenv("WEFT_DECODE_PORTABLE")) {
    assert_true(compared >= 4 * 6);
  }
#endif
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(exp_is_close_and_vector_matches),
      cmocka_unit_test(swiglu_versions_match),
      cmocka_unit_test(softmax_versions_match),
      cmocka_unit_test(scores_match_one_key_dots),
      cmocka_unit_test(weighted_sums_match),
      cmocka_unit_test(tile_products_match_the_token_dot),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
