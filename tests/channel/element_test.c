// The f16/bf16 <-> f32 conversions that carry half types through channel
// reductions: exact values, rounding to nearest even, subnormals,
// overflow, infinities and NaN.
// clang-format off
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include <math.h>
#include <string.h>

#include "channel/element.h"

static float bits_f32(uint32_t bits) {
  float value;
  memcpy(&value, &bits, 4);
  return value;
}

static uint16_t to_half(weft_element_type_t type, float value) {
  uint16_t half = 0;
  weft_element_f32_to_half(type, &value, &half, 1);
  return half;
}

static float from_half(weft_element_type_t type, uint16_t half) {
  float value = 0;
  weft_element_half_to_f32(type, &half, &value, 1);
  return value;
}

static void f16_exact_and_rounded(void** state) {
  (void)state;
  const weft_element_type_t f16 = WEFT_ELEMENT_TYPE_F16;
  assert_int_equal(to_half(f16, 1.0f), 0x3C00);
  assert_int_equal(to_half(f16, -2.5f), 0xC100);
  assert_int_equal(to_half(f16, 65504.0f), 0x7BFF);
  assert_int_equal(to_half(f16, 0.0f), 0x0000);
  assert_int_equal(to_half(f16, -0.0f), 0x8000);
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1).
  assert_int_equal(to_half(f16, 1.0f + 0x1p-11f), 0x3C00);
  // 1 + 3 * 2^-11 is halfway between odd 0x3C01 and even 0x3C02.
  assert_int_equal(to_half(f16, 1.0f + 3 * 0x1p-11f), 0x3C02);
  assert_int_equal(to_half(f16, 1.0f + 0x1p-11f + 0x1p-20f), 0x3C01);
  // Subnormals: 2^-24 is the smallest, 2^-25 ties to even (0), 3 * 2^-25
  // rounds up to 2 * 2^-24; the largest subnormal rounds into 2^-14.
  assert_int_equal(to_half(f16, 0x1p-24f), 0x0001);
  assert_int_equal(to_half(f16, 0x1p-25f), 0x0000);
  assert_int_equal(to_half(f16, 3 * 0x1p-25f), 0x0002);
  assert_int_equal(to_half(f16, 0x1p-14f - 0x1p-26f), 0x0400);
  // Overflow: 65519 rounds down to 65504, 65520 up to infinity.
  assert_int_equal(to_half(f16, 65519.0f), 0x7BFF);
  assert_int_equal(to_half(f16, 65520.0f), 0x7C00);
  assert_int_equal(to_half(f16, -INFINITY), 0xFC00);
  assert_true((to_half(f16, NAN) & 0x7FFF) > 0x7C00);
  // And back.
  assert_true(from_half(f16, 0x3C00) == 1.0f);
  assert_true(from_half(f16, 0x0001) == 0x1p-24f);
  assert_true(from_half(f16, 0x7BFF) == 65504.0f);
  assert_true(isinf(from_half(f16, 0x7C00)));
  assert_true(isnan(from_half(f16, 0x7E00)));
  // Every f16 survives the round trip (NaNs stay NaN).
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float value = from_half(f16, (uint16_t)h);
    if (isnan(value)) {
      assert_true(isnan(from_half(f16, to_half(f16, value))));
    } else {
      assert_int_equal(to_half(f16, value), h);
    }
  }
}

static void bf16_exact_and_rounded(void** state) {
  (void)state;
  const weft_element_type_t bf16 = WEFT_ELEMENT_TYPE_BF16;
  assert_int_equal(to_half(bf16, 1.0f), 0x3F80);
  assert_int_equal(to_half(bf16, -3.0f), 0xC040);
  // Halfway cases: ties to even.
  assert_int_equal(to_half(bf16, bits_f32(0x3F808000u)), 0x3F80);
  assert_int_equal(to_half(bf16, bits_f32(0x3F818000u)), 0x3F82);
  assert_int_equal(to_half(bf16, bits_f32(0x3F808001u)), 0x3F81);
  assert_int_equal(to_half(bf16, INFINITY), 0x7F80);
  assert_true((to_half(bf16, NAN) & 0x7FFF) > 0x7F80);
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float value = from_half(bf16, (uint16_t)h);
    if (isnan(value)) continue;
    assert_int_equal(to_half(bf16, value), h);
  }
}

static void names_and_sizes(void** state) {
  (void)state;
  assert_int_equal(weft_element_type_size(WEFT_ELEMENT_TYPE_F64), 8);
  assert_int_equal(weft_element_type_size(WEFT_ELEMENT_TYPE_COUNT), 0);
  assert_string_equal(weft_element_type_name(WEFT_ELEMENT_TYPE_I64), "i64");
  assert_string_equal(weft_element_type_name(WEFT_ELEMENT_TYPE_COUNT),
                      "unknown");
  assert_string_equal(weft_reduction_name(WEFT_REDUCTION_PRODUCT), "product");
  assert_true(weft_element_type_is_half(WEFT_ELEMENT_TYPE_BF16));
  assert_false(weft_element_type_is_half(WEFT_ELEMENT_TYPE_F32));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(f16_exact_and_rounded),
      cmocka_unit_test(bf16_exact_and_rounded),
      cmocka_unit_test(names_and_sizes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
