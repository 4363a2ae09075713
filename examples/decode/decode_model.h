// weft decode example: a llama-architecture model's shape and where its
// tensors are in a checkpoint file.
//
// Two formats describe the same model: llama2.c's checkpoint (a header of
// seven int32, then every tensor in f32, layer-major per kind) and GGUF v3
// (metadata keys, then named tensors in F32 or F16). Each reader fills a
// decode_layout_t: the shape, and for every tensor kind and layer the byte
// offset of that tensor in the file and its element type. The decoder then
// loads every tensor into device buffers with one parameter stream; it
// never parses a file itself.
//
// Matrices are stored row-major as [rows = outputs][cols = inputs] in both
// formats (GGUF lists them as ne0 = inputs, ne1 = outputs): W x computes
// out[r] = sum_c W[r][c] x[c].
#ifndef WEFT_EXAMPLES_DECODE_DECODE_MODEL_H_
#define WEFT_EXAMPLES_DECODE_DECODE_MODEL_H_

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

// Element types of stored tensors, in GGML's numbering: F32 and F16, and
// the block types (decode_quant.h): a row of a block type is a whole
// number of blocks, each a few scales and |block elements| packed values.
typedef enum decode_dtype_e {
  DECODE_DTYPE_F32 = 0,
  DECODE_DTYPE_F16 = 1,
  DECODE_DTYPE_Q4_0 = 2,
  DECODE_DTYPE_Q4_1 = 3,
  DECODE_DTYPE_Q5_0 = 6,
  DECODE_DTYPE_Q5_1 = 7,
  DECODE_DTYPE_Q8_0 = 8,
  DECODE_DTYPE_Q4_K = 12,
  DECODE_DTYPE_Q5_K = 13,
  DECODE_DTYPE_Q6_K = 14,
  // Not GGML types and never in a file: Q4_0, Q8_0, Q4_K and Q6_K rows
  // interleaved by eight (decode_quant_x8.h), the form a CPU device's
  // matrices of those types take once loaded (decode_model_load). Their
  // rows are the stored type's size.
  DECODE_DTYPE_Q4_0_X8 = 0x82,
  DECODE_DTYPE_Q8_0_X8 = 0x88,
  DECODE_DTYPE_Q4_K_X8 = 0x8C,
  DECODE_DTYPE_Q6_K_X8 = 0x8E,
  // F32 and F16 rows interleaved by sixteen (decode_float_x16.h), the form
  // a CPU device's float matrices take.
  DECODE_DTYPE_F32_X16 = 0x90,
  DECODE_DTYPE_F16_X16 = 0x91,
} decode_dtype_t;

// Bytes per element of F32 and F16 (0 for the block types: see
// decode_dtype_bytes).
static inline uint32_t decode_dtype_size(decode_dtype_t dtype) {
  return dtype == DECODE_DTYPE_F16   ? 2u
         : dtype == DECODE_DTYPE_F32 ? 4u
                                     : 0u;
}
// Elements per block (1 for F32 and F16) and bytes per block of |dtype|;
// both 0 for a GGML type the decoder does not take.
uint32_t decode_dtype_block_elements(uint32_t dtype);
uint32_t decode_dtype_block_bytes(uint32_t dtype);
// The type a checkpoint stores |dtype| as: the interleaved forms' own
// (Q4_0, Q8_0, Q4_K, Q6_K, F32, F16), any other itself.
static inline decode_dtype_t decode_dtype_stored(uint32_t dtype) {
  switch (dtype) {
    case DECODE_DTYPE_Q4_0_X8:
      return DECODE_DTYPE_Q4_0;
    case DECODE_DTYPE_Q8_0_X8:
      return DECODE_DTYPE_Q8_0;
    case DECODE_DTYPE_Q4_K_X8:
      return DECODE_DTYPE_Q4_K;
    case DECODE_DTYPE_Q6_K_X8:
      return DECODE_DTYPE_Q6_K;
    case DECODE_DTYPE_F32_X16:
      return DECODE_DTYPE_F32;
    case DECODE_DTYPE_F16_X16:
      return DECODE_DTYPE_F16;
    default:
      return (decode_dtype_t)dtype;
  }
}
// A type a checkpoint may store (the interleaved forms are not).
static inline bool decode_dtype_is_supported(uint32_t dtype) {
  return decode_dtype_stored(dtype) == (decode_dtype_t)dtype &&
         decode_dtype_block_elements(dtype) != 0;
}
static inline bool decode_dtype_is_quantized(uint32_t dtype) {
  return decode_dtype_block_elements(dtype) > 1;
}
// Bytes of |elements| elements of |dtype| (a multiple of its block).
static inline uint64_t decode_dtype_bytes(decode_dtype_t dtype,
                                          uint64_t elements) {
  const uint32_t block = decode_dtype_block_elements(dtype);
  return block ? elements / block * decode_dtype_block_bytes(dtype) : 0;
}
// "f32", "f16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q4_k", "q5_k",
// "q6_k", "q4_0_x8", "q8_0_x8", "q4_k_x8", "q6_k_x8", "f32_x16",
// "f16_x16" ("?" for others).
const char* decode_dtype_name(decode_dtype_t dtype);

typedef struct decode_config_t {
  uint32_t dim;         // model width
  uint32_t hidden_dim;  // feed-forward width
  uint32_t n_layers;
  uint32_t n_heads;     // query heads
  uint32_t n_kv_heads;  // key/value heads (grouped-query attention)
  uint32_t vocab_size;
  uint32_t seq_len;     // the longest context
  float rope_theta;     // rotary base (10000 in llama2.c)
  float norm_eps;       // RMSNorm epsilon (1e-5 in llama2.c)
  // The classifier is the token embedding (no separate output matrix).
  bool shared_classifier;
} decode_config_t;

static inline uint32_t decode_head_size(const decode_config_t* config) {
  return config->dim / config->n_heads;
}
static inline uint32_t decode_kv_dim(const decode_config_t* config) {
  return decode_head_size(config) * config->n_kv_heads;
}

// Checks what the decoder relies on (non-zero sizes, heads dividing the
// width, an even head size, kv heads dividing heads, widths multiples of
// DECODE_ROWS_PER_WORKGROUP); INVALID_ARGUMENT naming |source| and the
// field otherwise.
weft_status_t decode_config_validate(const decode_config_t* config,
                                     const char* source);

// The tensor kinds, each one buffer on the device (per-layer kinds hold
// every layer, layer-major).
typedef enum decode_tensor_e {
  DECODE_TENSOR_TOKEN_EMBEDDING = 0,  // [vocab][dim]
  DECODE_TENSOR_ATTN_NORM,            // [layers][dim], f32
  DECODE_TENSOR_WQ,                   // [layers][dim][dim]
  DECODE_TENSOR_WK,                   // [layers][kv_dim][dim]
  DECODE_TENSOR_WV,                   // [layers][kv_dim][dim]
  DECODE_TENSOR_WO,                   // [layers][dim][dim]
  DECODE_TENSOR_FFN_NORM,             // [layers][dim], f32
  DECODE_TENSOR_W1,                   // [layers][hidden][dim] (gate)
  DECODE_TENSOR_W2,                   // [layers][dim][hidden] (down)
  DECODE_TENSOR_W3,                   // [layers][hidden][dim] (up)
  DECODE_TENSOR_FINAL_NORM,           // [dim], f32
  DECODE_TENSOR_CLASSIFIER,           // [vocab][dim] (absent when shared)
  DECODE_TENSOR_COUNT,
} decode_tensor_t;

// The name of |tensor| in messages ("wq", "token_embedding", ...).
const char* decode_tensor_name(decode_tensor_t tensor);
// True for the kinds with one tensor per layer.
bool decode_tensor_is_per_layer(decode_tensor_t tensor);
// Elements of one layer's tensor (of the whole tensor for the others).
uint64_t decode_tensor_elements(const decode_config_t* config,
                                decode_tensor_t tensor);

// At most this many layers (the 1.1B shape has 22).
#define DECODE_MAX_LAYERS 128

typedef struct decode_tensor_location_t {
  bool present;
  // The type of each layer's tensor (index 0 only for the kinds that are
  // not per layer): a quantized file mixes them (Q4_K_M: Q6_K for some
  // layers' attn_v and ffn_down).
  decode_dtype_t dtypes[DECODE_MAX_LAYERS];
  // Byte offset in the file of each layer's tensor (index 0 only for the
  // kinds that are not per layer).
  uint64_t offsets[DECODE_MAX_LAYERS];
} decode_tensor_location_t;

typedef struct decode_layout_t {
  decode_config_t config;
  decode_tensor_location_t tensors[DECODE_TENSOR_COUNT];
  uint64_t file_size;
  char format[16];  // "llama2.c" or "gguf"
} decode_layout_t;

// The types of |layout|'s matrices as stored (a loaded model's interleaved
// forms named by their file's type), each once in the order of first use
// ("q4_k, q6_k"), into |out| (NUL-terminated, cut to |capacity|).
void decode_layout_describe_dtypes(const decode_layout_t* layout, char* out,
                                   size_t capacity);

// Reads the layout of the checkpoint at |path|, choosing the format from
// its first bytes ("GGUF": GGUF v3; anything else: llama2.c). Every tensor
// must lie within the file, have its shape and a supported type: a
// truncated file, a wrong magic or version, an unsupported type, a missing
// tensor or a shape mismatch is an error naming the file and the tensor.
weft_status_t decode_layout_read(const char* path, decode_layout_t* out_layout);

// The two readers (decode_llama2c.c, decode_gguf.c), over an open |file| of
// |file_size| bytes.
weft_status_t decode_llama2c_read(FILE* file, const char* path,
                                  uint64_t file_size,
                                  decode_layout_t* out_layout);
weft_status_t decode_gguf_read(FILE* file, const char* path,
                               uint64_t file_size, decode_layout_t* out_layout);

// Rows of a matrix one workgroup computes: widths must be multiples of it,
// and it is even so a rotary pair never straddles two workgroups.
#define DECODE_ROWS_PER_WORKGROUP 16u

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_EXAMPLES_DECODE_DECODE_MODEL_H_
