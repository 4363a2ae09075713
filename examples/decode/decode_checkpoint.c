// weft decode example: shapes, random weights and half floats (see
// decode_checkpoint.h).
#include "decode_checkpoint.h"

#include <errno.h>
#include <math.h>
#include <string.h>

bool decode_shape_lookup(const char* name, decode_config_t* out_config) {
  static const struct {
    const char* name;
    decode_config_t config;
  } kShapes[] = {
      {"tiny", {64, 160, 2, 4, 2, 512, 64, 10000.0f, 1e-5f, true}},
      {"15M", {288, 768, 6, 6, 6, 32000, 256, 10000.0f, 1e-5f, true}},
      {"110M", {768, 2048, 12, 12, 12, 32000, 1024, 10000.0f, 1e-5f, true}},
      {"1.1B", {2048, 5632, 22, 32, 4, 32000, 2048, 10000.0f, 1e-5f, false}},
  };
  for (size_t i = 0; i < sizeof(kShapes) / sizeof(kShapes[0]); ++i) {
    if (strcmp(kShapes[i].name, name) == 0) {
      *out_config = kShapes[i].config;
      return true;
    }
  }
  return false;
}

// splitmix64: a well-mixed 64-bit hash of the element's coordinates.
static uint64_t decode_mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

float decode_random_weight(uint64_t seed, decode_tensor_t tensor,
                           uint32_t layer, uint64_t index) {
  uint64_t h = decode_mix(seed ^ decode_mix(((uint64_t)tensor << 56) ^
                                            ((uint64_t)layer << 40) ^ index));
  // 24 random bits -> [0, 1).
  float unit = (float)(h >> 40) * (1.0f / 16777216.0f);
  const bool is_norm = tensor == DECODE_TENSOR_ATTN_NORM ||
                       tensor == DECODE_TENSOR_FFN_NORM ||
                       tensor == DECODE_TENSOR_FINAL_NORM;
  return is_norm ? 0.9f + 0.2f * unit : 0.2f * unit - 0.1f;
}

uint16_t decode_f32_to_f16(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof(bits));
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t exponent = (bits >> 23) & 0xFFu;
  uint32_t mantissa = bits & 0x7FFFFFu;
  if (exponent == 0xFFu) {  // inf or nan
    return (uint16_t)(sign | 0x7C00u | (mantissa ? 0x200u : 0u));
  }
  const int32_t half_exponent = (int32_t)exponent - 127 + 15;
  if (half_exponent >= 31) return (uint16_t)(sign | 0x7C00u);  // overflow
  if (half_exponent <= 0) {
    // Subnormal half (or zero): shift the full mantissa into place.
    if (half_exponent < -10) return (uint16_t)sign;
    mantissa |= 0x800000u;
    const uint32_t shift = (uint32_t)(14 - half_exponent);
    uint32_t half = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1u);
    const uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1u))) ++half;
    return (uint16_t)(sign | half);
  }
  uint32_t half = ((uint32_t)half_exponent << 10) | (mantissa >> 13);
  const uint32_t rest = mantissa & 0x1FFFu;
  // Round to nearest even; a carry into the exponent is still correct.
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
  return (uint16_t)(sign | half);
}

float decode_f16_to_f32(uint16_t value) {
  const uint32_t sign = (uint32_t)(value & 0x8000u) << 16;
  const uint32_t exponent = (value >> 10) & 0x1Fu;
  const uint32_t mantissa = value & 0x3FFu;
  uint32_t bits;
  if (exponent == 0) {
    // Zero or subnormal: mantissa x 2^-24.
    float magnitude = (float)mantissa * (1.0f / 16777216.0f);
    memcpy(&bits, &magnitude, sizeof(bits));
    bits |= sign;
  } else if (exponent == 31) {
    bits = sign | 0x7F800000u | (mantissa << 13);
  } else {
    bits = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  }
  float result;
  memcpy(&result, &bits, sizeof(result));
  return result;
}

// llama.cpp's choice of the layers whose attn_v and ffn_down get more
// bits in its K mixes.
static bool decode_more_bits(uint32_t layer, uint32_t layers) {
  return layer < layers / 8 || layer >= 7 * layers / 8 ||
         (layer >= layers / 8 && (layer - layers / 8) % 3 == 2);
}

decode_dtype_t decode_checkpoint_tensor_dtype(const decode_config_t* config,
                                              decode_dtype_t dtype,
                                              decode_mix_t mix,
                                              decode_tensor_t tensor,
                                              uint32_t layer) {
  if (tensor == DECODE_TENSOR_ATTN_NORM || tensor == DECODE_TENSOR_FFN_NORM ||
      tensor == DECODE_TENSOR_FINAL_NORM) {
    return DECODE_DTYPE_F32;
  }
  decode_dtype_t type = dtype;
  if (mix == DECODE_MIX_Q4_K_M || mix == DECODE_MIX_Q5_K_M) {
    const bool is_classifier =
        tensor == DECODE_TENSOR_CLASSIFIER ||
        (tensor == DECODE_TENSOR_TOKEN_EMBEDDING && config->shared_classifier);
    const bool more_bits =
        (tensor == DECODE_TENSOR_WV || tensor == DECODE_TENSOR_W2) &&
        decode_more_bits(layer, config->n_layers);
    type = is_classifier || more_bits ? DECODE_DTYPE_Q6_K
           : mix == DECODE_MIX_Q4_K_M ? DECODE_DTYPE_Q4_K
                                      : DECODE_DTYPE_Q5_K;
  }
  const uint32_t cols =
      tensor == DECODE_TENSOR_W2 ? config->hidden_dim : config->dim;
  if (cols % decode_dtype_block_elements(type) != 0) {
    type = type == DECODE_DTYPE_Q4_K   ? DECODE_DTYPE_Q4_0
           : type == DECODE_DTYPE_Q5_K ? DECODE_DTYPE_Q5_1
           : type == DECODE_DTYPE_Q6_K ? DECODE_DTYPE_Q8_0
                                       : type;
  }
  if (cols % decode_dtype_block_elements(type) != 0) type = DECODE_DTYPE_F16;
  return type;
}

static weft_status_t decode_checkpoint_write_file(
    const char* path, decode_format_t format, const decode_config_t* config,
    decode_dtype_t dtype, decode_mix_t mix, uint64_t seed) {
  weft_status_t status = decode_config_validate(config, path);
  if (weft_status_is_ok(status) && format == DECODE_FORMAT_LLAMA2C &&
      dtype != DECODE_DTYPE_F32) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "%s: llama2.c checkpoints hold f32 weights only "
                         "(write GGUF for f16)",
                         path);
  }
  if (!weft_status_is_ok(status)) return status;
  FILE* file = fopen(path, "wb");
  if (!file) {
    return WEFT_STATUS(UNAVAILABLE, "cannot create '%s': %s", path,
                       strerror(errno));
  }
  status = format == DECODE_FORMAT_GGUF
               ? decode_gguf_write(file, path, config, dtype, mix, seed)
               : decode_llama2c_write(file, path, config, seed);
  if (fclose(file) != 0 && weft_status_is_ok(status)) {
    status = WEFT_STATUS(UNAVAILABLE, "writing '%s' failed: %s", path,
                         strerror(errno));
  }
  if (!weft_status_is_ok(status)) remove(path);
  return status;
}

weft_status_t decode_checkpoint_write(const char* path, decode_format_t format,
                                      const decode_config_t* config,
                                      decode_dtype_t dtype, uint64_t seed) {
  return decode_checkpoint_write_file(path, format, config, dtype,
                                      DECODE_MIX_UNIFORM, seed);
}

weft_status_t decode_checkpoint_write_mix(const char* path,
                                          const decode_config_t* config,
                                          decode_dtype_t dtype,
                                          decode_mix_t mix, uint64_t seed) {
  return decode_checkpoint_write_file(path, DECODE_FORMAT_GGUF, config, dtype,
                                      mix, seed);
}
