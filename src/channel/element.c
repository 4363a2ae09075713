// weft: element types of channel reductions, and the f16/bf16 <-> f32
// conversions that carry those through MPI (which has no such types).
#include "channel/element.h"

#include <string.h>

static const struct {
  const char* name;
  uint32_t size;
} kElementTypes[WEFT_ELEMENT_TYPE_COUNT] = {
    [WEFT_ELEMENT_TYPE_F32] = {"f32", 4}, [WEFT_ELEMENT_TYPE_F64] = {"f64", 8},
    [WEFT_ELEMENT_TYPE_I32] = {"i32", 4}, [WEFT_ELEMENT_TYPE_I64] = {"i64", 8},
    [WEFT_ELEMENT_TYPE_F16] = {"f16", 2}, [WEFT_ELEMENT_TYPE_BF16] = {"bf16", 2},
};

uint32_t weft_element_type_size(weft_element_type_t type) {
  return (unsigned)type < WEFT_ELEMENT_TYPE_COUNT ? kElementTypes[type].size
                                                  : 0;
}

const char* weft_element_type_name(weft_element_type_t type) {
  return (unsigned)type < WEFT_ELEMENT_TYPE_COUNT ? kElementTypes[type].name
                                                  : "unknown";
}

const char* weft_reduction_name(weft_reduction_t reduction) {
  static const char* const kNames[WEFT_REDUCTION_COUNT] = {
      [WEFT_REDUCTION_SUM] = "sum",
      [WEFT_REDUCTION_PRODUCT] = "product",
      [WEFT_REDUCTION_MIN] = "min",
      [WEFT_REDUCTION_MAX] = "max",
  };
  return (unsigned)reduction < WEFT_REDUCTION_COUNT ? kNames[reduction]
                                                    : "unknown";
}

bool weft_element_type_is_half(weft_element_type_t type) {
  return type == WEFT_ELEMENT_TYPE_F16 || type == WEFT_ELEMENT_TYPE_BF16;
}

static float weft_bits_to_float(uint32_t bits) {
  float value;
  memcpy(&value, &bits, sizeof(value));
  return value;
}

static uint32_t weft_float_to_bits(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof(bits));
  return bits;
}

static float weft_f16_to_f32(uint16_t half) {
  const uint32_t sign = (uint32_t)(half & 0x8000u) << 16;
  const uint32_t exponent = (half >> 10) & 0x1Fu;
  const uint32_t mantissa = half & 0x3FFu;
  if (exponent == 0x1F) {  // inf or nan (the payload kept)
    return weft_bits_to_float(sign | 0x7F800000u | (mantissa << 13));
  }
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24
    const float magnitude = (float)mantissa * (1.0f / 16777216.0f);
    return sign ? -magnitude : magnitude;
  }
  return weft_bits_to_float(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

// Round to nearest, ties to even; overflow to inf, nan stays nan.
static uint16_t weft_f32_to_f16(float value) {
  const uint32_t bits = weft_float_to_bits(value);
  const uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude >= 0x7F800000u) {  // inf or nan
    return sign | (magnitude > 0x7F800000u ? 0x7E00u : 0x7C00u);
  }
  if (magnitude >= 0x477FF000u) return sign | 0x7C00u;  // rounds past 65504
  if (magnitude < 0x38800000u) {  // below 2^-14: subnormal or zero
    // Scaled so the f16 subnormal step (2^-24) is 1, then rounded to even
    // by the FPU's default rounding.
    const float scaled = weft_bits_to_float(magnitude) * 16777216.0f;
    const float rounded = scaled + 8388608.0f - 8388608.0f;
    return sign | (uint16_t)rounded;
  }
  const uint32_t exponent = (magnitude >> 23) - 112;
  const uint32_t mantissa = magnitude & 0x7FFFFFu;
  uint32_t half = (exponent << 10) | (mantissa >> 13);
  const uint32_t rest = mantissa & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
  return sign | (uint16_t)half;
}

static float weft_bf16_to_f32(uint16_t value) {
  return weft_bits_to_float((uint32_t)value << 16);
}

static uint16_t weft_f32_to_bf16(float value) {
  const uint32_t bits = weft_float_to_bits(value);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) {
    return (uint16_t)((bits >> 16) | 0x40u);  // nan stays a (quiet) nan
  }
  const uint32_t rounding = 0x7FFFu + ((bits >> 16) & 1u);
  return (uint16_t)((bits + rounding) >> 16);
}

void weft_element_half_to_f32(weft_element_type_t type, const void* source,
                              float* target, uint64_t count) {
  const uint16_t* halves = (const uint16_t*)source;
  if (type == WEFT_ELEMENT_TYPE_F16) {
    for (uint64_t i = 0; i < count; ++i) target[i] = weft_f16_to_f32(halves[i]);
  } else {
    for (uint64_t i = 0; i < count; ++i) {
      target[i] = weft_bf16_to_f32(halves[i]);
    }
  }
}

void weft_element_f32_to_half(weft_element_type_t type, const float* source,
                              void* target, uint64_t count) {
  uint16_t* halves = (uint16_t*)target;
  if (type == WEFT_ELEMENT_TYPE_F16) {
    for (uint64_t i = 0; i < count; ++i) halves[i] = weft_f32_to_f16(source[i]);
  } else {
    for (uint64_t i = 0; i < count; ++i) {
      halves[i] = weft_f32_to_bf16(source[i]);
    }
  }
}
