// weft decode example: writing checkpoints of random weights, so nothing
// needs a download.
//
// Every weight is a pure function of (seed, tensor, layer, index), so the
// two formats written from one seed hold the same values (F16 files hold
// them rounded to half precision) whatever order they are written in.
#ifndef WEFT_EXAMPLES_DECODE_DECODE_CHECKPOINT_H_
#define WEFT_EXAMPLES_DECODE_DECODE_CHECKPOINT_H_

#include <stdint.h>
#include <stdio.h>

#include "decode_model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum decode_format_e {
  DECODE_FORMAT_LLAMA2C = 0,  // f32 only
  DECODE_FORMAT_GGUF = 1,     // F32, F16 or quantized matrices; norms F32
} decode_format_t;

// How a GGUF checkpoint's matrices take their types.
typedef enum decode_mix_e {
  // Every matrix the one type asked for.
  DECODE_MIX_UNIFORM = 0,
  // llama.cpp's Q4_K_M: Q4_K, but Q6_K for the classifier (the embedding
  // where it is shared) and for attn_v and ffn_down of the layers
  // llama.cpp gives more bits (the first and last eighth, and every third
  // between: layers 2 and 5 of 6).
  DECODE_MIX_Q4_K_M = 1,
  // llama.cpp's Q5_K_M: the same with Q5_K in place of Q4_K.
  DECODE_MIX_Q5_K_M = 2,
} decode_mix_t;

// The type the generator stores (|tensor|, |layer|) in, for a file of
// |dtype| matrices mixed by |mix|. Norms are F32. A matrix whose rows are
// not whole blocks of its type takes the type llama.cpp falls back to,
// or the nearest this decoder has: Q4_K falls back to Q4_0, Q5_K to Q5_1
// (llama.cpp's choice), Q6_K to Q8_0 (the 15M shape's width of 288 is not
// a multiple of 256), and a type of 32-element blocks to F16.
decode_dtype_t decode_checkpoint_tensor_dtype(const decode_config_t* config,
                                              decode_dtype_t dtype,
                                              decode_mix_t mix,
                                              decode_tensor_t tensor,
                                              uint32_t layer);

// The named shapes: "15M" (dim 288, hidden 768, 6 layers, 6 heads, vocab
// 32000, context 256), "110M" (768, 2048, 12, 12, 32000, 1024), "1.1B"
// (2048, 5632, 22, 32 heads, 4 kv heads, 32000, 2048), and "tiny" (64,
// 160, 2 layers, 4 heads, 2 kv heads, vocab 512, context 64) for tests.
// False for an unknown name.
bool decode_shape_lookup(const char* name, decode_config_t* out_config);

// The weight the generator writes at element |index| of |layer|'s |tensor|
// (layer 0 for the kinds that are not per layer): matrices and the
// embedding uniform in [-0.1, 0.1), norm weights in [0.9, 1.1).
float decode_random_weight(uint64_t seed, decode_tensor_t tensor,
                           uint32_t layer, uint64_t index);

// Writes a checkpoint of |config| in |format| with |dtype| matrices to
// |path|. llama2.c checkpoints are f32 only (INVALID_ARGUMENT otherwise);
// GGUF takes f32, f16, q8_0, q4_0, q4_1, q5_0, q5_1, q4_k and q5_k
// (quantized from the same weights: decode_quant_quantize).
weft_status_t decode_checkpoint_write(const char* path, decode_format_t format,
                                      const decode_config_t* config,
                                      decode_dtype_t dtype, uint64_t seed);
// The same for a GGUF file whose matrices |mix| types (DECODE_MIX_Q4_K_M
// with |dtype| q4_k, DECODE_MIX_Q5_K_M with q5_k).
weft_status_t decode_checkpoint_write_mix(const char* path,
                                          const decode_config_t* config,
                                          decode_dtype_t dtype,
                                          decode_mix_t mix, uint64_t seed);

// The two writers (decode_llama2c.c, decode_gguf.c) into an open |file|;
// |path| names it in errors.
weft_status_t decode_llama2c_write(FILE* file, const char* path,
                                   const decode_config_t* config,
                                   uint64_t seed);
weft_status_t decode_gguf_write(FILE* file, const char* path,
                                const decode_config_t* config,
                                decode_dtype_t dtype, decode_mix_t mix,
                                uint64_t seed);

// IEEE half <-> float, round to nearest even (what an F16 file stores).
uint16_t decode_f32_to_f16(float value);
float decode_f16_to_f32(uint16_t value);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_EXAMPLES_DECODE_DECODE_CHECKPOINT_H_
