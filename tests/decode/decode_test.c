// The decoder (examples/decode) against a plain single-threaded reference
// written here: straightforward loops over weights computed straight from
// the generator's formula (decode_random_weight), so the file formats, the
// loading, the binding tables and the kernels are all checked at once.
//  - llama2.c f32 and GGUF f32 checkpoints of one seed: logits within 1e-4
//    of the reference (relative to the largest logit) at every step;
//  - GGUF f16: within 1e-2 (the reference rounds the weights to half too);
//  - GGUF q8_0, q4_0, q4_k and q4_k_m (on 15M the last mixes all four
//    block types: Q4_0 and Q8_0 where a width of 288 is not whole K
//    blocks), and q4_k_m on a 256-wide shape (K blocks only); q4_1, q5_0
//    and q5_k_m the same way (15M's mixes Q8_0, Q5_1, Q5_K and Q6_K): a
//    mirror of the decoder (the same blocks dequantized, each product's
//    input quantized by the library's decode_quant_activations and
//    decoded here, sums in double), following the decoder's tokens:
//    logits within QUANT_TOLERANCE (float sums only; one or two roundings
//    the decoder took the other way are found and taken so), each token the
//    mirror's argmax, identical on the 15M shape; and within
//    F32_INPUT_TOLERANCE of the same with f32 inputs (what quantizing the
//    inputs costs);
//  - on local-sync and on local-task with 1 and 2 workers, the greedy
//    tokens identical to the reference's (f32, f16);
//  - both formats of one seed give the same logits;
//  - a bad prompt and a session run past its context are clean errors;
//  - the CUDA kernel table (decode_cuda.h) is the CPU table's names,
//    counts and local memory, or where nvcc did not build the kernels,
//    a session's CUDA source is UNAVAILABLE saying so.
// With --cuda-double (decode.cuda-double; WEFT_CUDA_DRIVER_LIBRARY the
// CUDA test double, whose CPU twins of the kernels this process
// registers): the f32 and f16 cases on the cuda device, every kernel
// launched through the cuda driver from the session's CUDA module (the
// double checks each PTX entry's parameters against the CPU kernel's
// bindings and constants), all steps queued at once, a quantized model
// refused naming a tensor and its type, sampling refused. With --cuda
// (decode.cuda) the same on a GPU, the CUDA kernels themselves (exit 77,
// skipped, where no cuda device can be made).
// Steps: 32 on the 15M shape; 4 under a sanitizer.
// setjmp.h, stdarg.h and stddef.h must come before cmocka.h.
// clang-format off
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
// clang-format on

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decode.h"
#include "decode_checkpoint.h"
#include "decode_cuda.h"
#include "decode_quant.h"
#include "decode_quant_dot.h"
#include "decode_test_util.h"
#include "weft/weft.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define STEPS 4u
#else
#define STEPS 32u
#endif
#define SEED 7u

static void assert_ok(weft_status_t status) {
  if (!weft_status_is_ok(status)) {
    char text[1024];
    weft_status_format(status, text, sizeof(text));
    weft_status_free(status);
    fail_msg("%s", text);
  }
}

//===----------------------------------------------------------------------===//
// The reference
//===----------------------------------------------------------------------===//

// One rounding of a quantized input: element |index| of input |input|
// of a forward pass (reference_forward numbers them: 4 a layer, then the
// classifier's) in format |format|, or where |scale|, the f16 rounding of
// block |index|'s Q8_0 scale; |margin| how far the value lies from the
// boundary between the two nearest results, relative to the value the
// boundary depends on (the block's largest magnitude: the relative change
// of input that would round it the other way).
typedef struct rounding_t {
  uint32_t input;
  uint32_t index;
  uint32_t format;
  bool scale;
  double margin;
} rounding_t;
#define INPUTS (4 * DECODE_MAX_LAYERS + 1)
#define ROUNDINGS 512u
// The closest roundings whose pairs a step no single one matches tries.
#define PAIR_CANDIDATES 48u

typedef struct reference_t {
  decode_config_t c;
  bool half;  // weights rounded to f16 (norms stay f32)
  // Weights quantized as the generator's file of these holds them, then
  // dequantized (dtype f32: not quantized).
  decode_dtype_t dtype;
  decode_mix_t mix;
  float* tensors[DECODE_TENSOR_COUNT];
  // Two caches: [1] for a forward pass whose quantized products quantize
  // their input as the decoder does, [0] for one that keeps it f32.
  float* k_cache[2];
  float* v_cache[2];
  // The roundings of quantized inputs nearest a boundary in the last
  // forward pass that quantized them (closest first), and one to take
  // the other way in the next (reference_activations).
  uint8_t noted[INPUTS];  // the formats each input's roundings are noted in
  uint32_t rounding_count;
  rounding_t roundings[ROUNDINGS];
  uint32_t flip_count;
  rounding_t flips[2];
} reference_t;

// The format of the input of a product with |dtype| weights, as GGML's
// reference pairs them (its vec_dot_type): Q8_0 blocks for the types of
// 32-element blocks, Q8_K for the K types; none (f32) for F32 and F16. A
// new block type is one more case here (decode_quant_dequantize decodes
// its weights).
typedef enum activation_format_e {
  ACTIVATION_F32 = 0,
  ACTIVATION_Q8_0 = 1,
  ACTIVATION_Q8_K = 2,
} activation_format_t;

static activation_format_t activation_format(decode_dtype_t dtype) {
  switch (dtype) {
    case DECODE_DTYPE_F32:
    case DECODE_DTYPE_F16:
    case DECODE_DTYPE_F32_X16:  // a CPU device's F32 and F16, loaded
    case DECODE_DTYPE_F16_X16:
      return ACTIVATION_F32;
    case DECODE_DTYPE_Q8_0:
    case DECODE_DTYPE_Q4_0:
    case DECODE_DTYPE_Q4_0_X8:  // a CPU device's Q4_0 and Q8_0, loaded
    case DECODE_DTYPE_Q8_0_X8:
    case DECODE_DTYPE_Q4_1:
    case DECODE_DTYPE_Q5_0:
    case DECODE_DTYPE_Q5_1:
      return ACTIVATION_Q8_0;
    case DECODE_DTYPE_Q4_K:
    case DECODE_DTYPE_Q4_K_X8:
    case DECODE_DTYPE_Q5_K:
    case DECODE_DTYPE_Q6_K:
    case DECODE_DTYPE_Q6_K_X8:
      return ACTIVATION_Q8_K;
  }
  fail_msg("the reference has no activation format for %s",
           decode_dtype_name(dtype));
  return ACTIVATION_F32;
}

// Keeps |rounding| among |r|'s ROUNDINGS nearest a boundary.
static void note_rounding(reference_t* r, rounding_t rounding) {
  uint32_t i = r->rounding_count;
  if (i == ROUNDINGS) {
    if (r->roundings[ROUNDINGS - 1].margin <= rounding.margin) return;
    --i;  // the farthest makes room
  } else {
    ++r->rounding_count;
  }
  for (; i > 0 && r->roundings[i - 1].margin > rounding.margin; --i) {
    r->roundings[i] = r->roundings[i - 1];
  }
  r->roundings[i] = rounding;
}

static bool is_flip(const reference_t* r, rounding_t rounding) {
  for (uint32_t i = 0; i < r->flip_count; ++i) {
    const rounding_t* f = &r->flips[i];
    if (f->input == rounding.input && f->format == rounding.format &&
        f->index == rounding.index && f->scale == rounding.scale) {
      return true;
    }
  }
  return false;
}

// The |n| inputs |x| of a product with |dtype| weights quantized by the
// library's decode_quant_activations (the decoder's own), then decoded
// here from the layout decode_quant.h documents into |out| (exact in
// double: an int8 times a scale). The format must be the one
// activation_format names: the blocks are read as that. Notes the
// roundings nearest a boundary (each element's q = round(x / d), and a
// Q8_0 block's scale d rounded to f16), and takes |r|->flip the other
// way. |input| numbers |x| in the forward pass: the decoder quantizes an
// input once for all the products that take it in one format, so a
// rounding taken the other way is taken so for all of them.
static void reference_activations(reference_t* r, uint32_t input,
                                  decode_dtype_t dtype, const float* x,
                                  uint32_t n, double* out) {
  const activation_format_t format = activation_format(dtype);
  if (format == ACTIVATION_F32) {
    for (uint32_t i = 0; i < n; ++i) out[i] = x[i];
    return;
  }
  assert_true(input < INPUTS);
  const bool note = !(r->noted[input] & (1u << format));
  r->noted[input] |= (uint8_t)(1u << format);
  assert_int_equal(format == ACTIVATION_Q8_K, decode_quant_uses_q8_k(dtype));
  const uint32_t block =
      format == ACTIVATION_Q8_K ? DECODE_QK_K : DECODE_QK8_0;
  assert_int_equal(n % block, 0);
  const size_t bytes = format == ACTIVATION_Q8_K
                           ? n / DECODE_QK_K * sizeof(decode_block_q8_k_t)
                           : n / DECODE_QK8_0 * sizeof(decode_block_q8_0_t);
  void* blocks = malloc(bytes);
  assert_non_null(blocks);
  decode_quant_activations(dtype, x, n, blocks);
  for (uint32_t b = 0; b < n / block; ++b) {
    const float* v = x + (size_t)b * block;
    double* o = out + (size_t)b * block;
    int8_t* qs;
    double d;
    if (format == ACTIVATION_Q8_0) {
      decode_block_q8_0_t* q = (decode_block_q8_0_t*)blocks + b;
      qs = q->qs;
      d = decode_f16_to_f32(q->d);
    } else {
      decode_block_q8_k_t* q = (decode_block_q8_k_t*)blocks + b;
      for (uint32_t j = 0; j < DECODE_QK_K / 16; ++j) {
        int sum = 0;
        for (uint32_t i = 16 * j; i < 16 * j + 16; ++i) sum += q->qs[i];
        assert_int_equal(q->bsums[j], sum);
      }
      qs = q->qs;
      d = q->d;
    }
    // Where each rounding fell, as the documented quantization computes
    // it (d = max |x| / 127, q = round(x / d)).
    float amax = 0.0f;
    for (uint32_t i = 0; i < block; ++i) amax = fmaxf(amax, fabsf(v[i]));
    if (amax > 0.0f) {
      const float d32 = amax / 127.0f;
      const float id = 1.0f / d32;
      for (uint32_t i = 0; i < block; ++i) {
        const float t = v[i] * id;
        const double margin = fabs(t - floor(t) - 0.5) / fabs(t);
        const rounding_t rounding = {input, b * block + i, format, false,
                                     margin};
        if (note) note_rounding(r, rounding);
        if (is_flip(r, rounding)) {
          qs[i] = (int8_t)(t > qs[i] ? qs[i] + 1 : qs[i] - 1);
        }
      }
      if (format == ACTIVATION_Q8_0) {
        // d's f16 neighbour on the other side of d32.
        const uint16_t h = decode_f32_to_f16(d32);
        const float rounded = decode_f16_to_f32(h);
        if (rounded != d32) {
          const uint16_t other = (uint16_t)(d32 > rounded ? h + 1 : h - 1);
          const float mid = (rounded + decode_f16_to_f32(other)) / 2.0f;
          const rounding_t rounding = {input, b, format, true,
                                       fabs((double)d32 - mid) / d32};
          if (note) note_rounding(r, rounding);
          if (is_flip(r, rounding)) d = decode_f16_to_f32(other);
        }
      }
    }
    for (uint32_t i = 0; i < block; ++i) o[i] = d * qs[i];
  }
  free(blocks);
}

static float weight(const reference_t* r, decode_tensor_t tensor,
                    uint32_t layer, uint64_t index) {
  float w = decode_random_weight(SEED, tensor, layer, index);
  const bool is_norm = tensor == DECODE_TENSOR_ATTN_NORM ||
                       tensor == DECODE_TENSOR_FFN_NORM ||
                       tensor == DECODE_TENSOR_FINAL_NORM;
  return r->half && !is_norm ? decode_f16_to_f32(decode_f32_to_f16(w)) : w;
}

// Rounds each row of |layer|'s |tensor| (|n| weights at |values|) through
// the type the generator stores it in.
static void reference_quantize(const reference_t* r, decode_tensor_t tensor,
                               uint32_t layer, float* values, uint64_t n) {
  const decode_dtype_t type =
      decode_checkpoint_tensor_dtype(&r->c, r->dtype, r->mix, tensor, layer);
  if (type == DECODE_DTYPE_F32) return;
  const uint32_t cols =
      tensor == DECODE_TENSOR_W2 ? r->c.hidden_dim : r->c.dim;
  uint8_t* blocks = malloc(decode_dtype_bytes(type, cols));
  assert_non_null(blocks);
  for (uint64_t row = 0; row < n / cols; ++row) {
    decode_quant_quantize(type, values + row * cols, cols, blocks);
    decode_quant_dequantize(type, blocks, cols, values + row * cols);
  }
  free(blocks);
}

static void reference_init(reference_t* r, const decode_config_t* c,
                           bool half, decode_dtype_t dtype,
                           decode_mix_t mix) {
  memset(r, 0, sizeof(*r));
  r->c = *c;
  r->half = half;
  r->dtype = dtype;
  r->mix = mix;
  for (int t = 0; t < DECODE_TENSOR_COUNT; ++t) {
    const decode_tensor_t tensor = (decode_tensor_t)t;
    if (tensor == DECODE_TENSOR_CLASSIFIER && c->shared_classifier) continue;
    const uint32_t layers =
        decode_tensor_is_per_layer(tensor) ? c->n_layers : 1;
    const uint64_t n = decode_tensor_elements(c, tensor);
    r->tensors[t] = malloc(layers * n * sizeof(float));
    assert_non_null(r->tensors[t]);
    for (uint32_t l = 0; l < layers; ++l) {
      for (uint64_t i = 0; i < n; ++i) {
        r->tensors[t][l * n + i] = weight(r, tensor, l, i);
      }
      reference_quantize(r, tensor, l, r->tensors[t] + l * n, n);
    }
  }
  const size_t cache = (size_t)c->n_layers * c->seq_len * decode_kv_dim(c);
  for (int i = 0; i < 2; ++i) {
    r->k_cache[i] = calloc(cache, sizeof(float));
    r->v_cache[i] = calloc(cache, sizeof(float));
    assert_non_null(r->k_cache[i]);
    assert_non_null(r->v_cache[i]);
  }
}

static void reference_free(reference_t* r) {
  for (int t = 0; t < DECODE_TENSOR_COUNT; ++t) free(r->tensors[t]);
  for (int i = 0; i < 2; ++i) {
    free(r->k_cache[i]);
    free(r->v_cache[i]);
  }
}

// out[rows] = W x, W [rows][cols] the |layer| of |tensor| (the
// classifier: the embedding where it is shared), summed in double. With
// |quantize_activations|, a product whose weights are blocks takes |x| as
// the decoder does: quantized in the format the type pairs with, once for
// the product (reference_activations).
static void matmul(reference_t* r, bool quantize_activations,
                   uint32_t input, decode_tensor_t tensor, uint32_t layer,
                   float* out, const float* x, uint32_t rows,
                   uint32_t cols) {
  const decode_tensor_t stored =
      tensor == DECODE_TENSOR_CLASSIFIER && r->c.shared_classifier
          ? DECODE_TENSOR_TOKEN_EMBEDDING
          : tensor;
  const float* w = r->tensors[stored] + (size_t)layer * rows * cols;
  const decode_dtype_t dtype =
      quantize_activations ? decode_checkpoint_tensor_dtype(
                                 &r->c, r->dtype, r->mix, stored, layer)
                           : DECODE_DTYPE_F32;
  double* in = malloc(cols * sizeof(double));
  assert_non_null(in);
  reference_activations(r, input, dtype, x, cols, in);
  for (uint32_t i = 0; i < rows; ++i) {
    double sum = 0.0;
    for (uint32_t j = 0; j < cols; ++j) {
      sum += (double)w[(size_t)i * cols + j] * in[j];
    }
    out[i] = (float)sum;
  }
  free(in);
}

static void rmsnorm(float* out, const float* x, const float* w, uint32_t n,
                    float eps) {
  float ss = 0.0f;
  for (uint32_t i = 0; i < n; ++i) ss += x[i] * x[i];
  ss = 1.0f / sqrtf(ss / n + eps);
  for (uint32_t i = 0; i < n; ++i) out[i] = w[i] * (ss * x[i]);
}

// One token at |pos|: the logits into |logits|. With
// |quantize_activations|, the products of quantized matrices quantize
// their input as the decoder does (matmul); each setting has its own
// cache.
static void reference_forward(reference_t* r, bool quantize_activations,
                              uint32_t token, uint32_t pos, float* logits) {
  const bool qa = quantize_activations;
  if (qa) {
    memset(r->noted, 0, sizeof(r->noted));
    r->rounding_count = 0;
  }
  float* const k_cache = r->k_cache[qa ? 1 : 0];
  float* const v_cache = r->v_cache[qa ? 1 : 0];
  const decode_config_t* c = &r->c;
  const uint32_t dim = c->dim, hidden = c->hidden_dim;
  const uint32_t hs = decode_head_size(c), kv_dim = decode_kv_dim(c);
  const uint32_t kv_mul = c->n_heads / c->n_kv_heads;
  float* x = calloc(dim, sizeof(float));
  float* xb = calloc(dim, sizeof(float));
  float* xb2 = calloc(dim, sizeof(float));
  float* q = calloc(dim, sizeof(float));
  float* hb = calloc(hidden, sizeof(float));
  float* hb2 = calloc(hidden, sizeof(float));
  float* att = calloc(c->seq_len, sizeof(float));
  memcpy(x, r->tensors[DECODE_TENSOR_TOKEN_EMBEDDING] + (size_t)token * dim,
         dim * sizeof(float));
  for (uint32_t l = 0; l < c->n_layers; ++l) {
    rmsnorm(xb, x, r->tensors[DECODE_TENSOR_ATTN_NORM] + (size_t)l * dim, dim,
            c->norm_eps);
    const size_t cache_layer = (size_t)l * c->seq_len * kv_dim;
    float* k = k_cache + cache_layer + (size_t)pos * kv_dim;
    float* v = v_cache + cache_layer + (size_t)pos * kv_dim;
    matmul(r, qa, 4 * l, DECODE_TENSOR_WQ, l, q, xb, dim, dim);
    matmul(r, qa, 4 * l, DECODE_TENSOR_WK, l, k, xb, kv_dim, dim);
    matmul(r, qa, 4 * l, DECODE_TENSOR_WV, l, v, xb, kv_dim, dim);
    for (uint32_t i = 0; i < dim; i += 2) {
      const uint32_t head_dim = i % hs;
      const double freq = pow(c->rope_theta, -(double)head_dim / hs);
      const float fcr = (float)cos(pos * freq);
      const float fci = (float)sin(pos * freq);
      for (int which = 0; which < (i < kv_dim ? 2 : 1); ++which) {
        float* vec = which == 0 ? q : k;
        const float v0 = vec[i], v1 = vec[i + 1];
        vec[i] = v0 * fcr - v1 * fci;
        vec[i + 1] = v0 * fci + v1 * fcr;
      }
    }
    for (uint32_t h = 0; h < c->n_heads; ++h) {
      const float* qh = q + h * hs;
      for (uint32_t t = 0; t <= pos; ++t) {
        const float* kt = k_cache + cache_layer + (size_t)t * kv_dim +
                          (h / kv_mul) * hs;
        float score = 0.0f;
        for (uint32_t i = 0; i < hs; ++i) score += qh[i] * kt[i];
        att[t] = score / sqrtf((float)hs);
      }
      float max = att[0];
      for (uint32_t t = 1; t <= pos; ++t) max = att[t] > max ? att[t] : max;
      float sum = 0.0f;
      for (uint32_t t = 0; t <= pos; ++t) {
        att[t] = expf(att[t] - max);
        sum += att[t];
      }
      float* out = xb + h * hs;
      memset(out, 0, hs * sizeof(float));
      for (uint32_t t = 0; t <= pos; ++t) {
        const float* vt = v_cache + cache_layer + (size_t)t * kv_dim +
                          (h / kv_mul) * hs;
        for (uint32_t i = 0; i < hs; ++i) out[i] += att[t] / sum * vt[i];
      }
    }
    matmul(r, qa, 4 * l + 1, DECODE_TENSOR_WO, l, xb2, xb, dim, dim);
    for (uint32_t i = 0; i < dim; ++i) x[i] += xb2[i];
    rmsnorm(xb, x, r->tensors[DECODE_TENSOR_FFN_NORM] + (size_t)l * dim, dim,
            c->norm_eps);
    matmul(r, qa, 4 * l + 2, DECODE_TENSOR_W1, l, hb, xb, hidden, dim);
    matmul(r, qa, 4 * l + 2, DECODE_TENSOR_W3, l, hb2, xb, hidden, dim);
    for (uint32_t i = 0; i < hidden; ++i) {
      hb[i] = hb[i] * (1.0f / (1.0f + expf(-hb[i]))) * hb2[i];
    }
    matmul(r, qa, 4 * l + 3, DECODE_TENSOR_W2, l, xb, hb, dim, hidden);
    for (uint32_t i = 0; i < dim; ++i) x[i] += xb[i];
  }
  rmsnorm(x, x, r->tensors[DECODE_TENSOR_FINAL_NORM], dim, c->norm_eps);
  matmul(r, qa, 4 * c->n_layers, DECODE_TENSOR_CLASSIFIER, 0, logits, x,
         c->vocab_size, dim);
  free(x), free(xb), free(xb2), free(q), free(hb), free(hb2), free(att);
}

static uint32_t argmax(const float* v, uint32_t n) {
  uint32_t best = 0;
  for (uint32_t i = 1; i < n; ++i) best = v[i] > v[best] ? i : best;
  return best;
}

//===----------------------------------------------------------------------===//
// Checkpoints, written once
//===----------------------------------------------------------------------===//

static char g_dir[] = "/tmp/weft-decode-test-XXXXXX";
static char g_llama2c[256];
static char g_gguf_f32[256];
static char g_gguf_f16[256];
static decode_config_t g_config;
// The reference's logits for every step ([STEPS][vocab]) and its tokens.
static float* g_logits_f32;
static float* g_logits_f16;
static uint32_t g_tokens_f32[STEPS + 1];
static uint32_t g_tokens_f16[STEPS + 1];
static const uint32_t kPrompt[] = {1, 450, 4996};
#define PROMPT_LENGTH 3u

// The quantized files, each against a reference over the same blocks
// dequantized.
typedef struct quant_case_t {
  const char* name;
  decode_dtype_t dtype;
  decode_mix_t mix;
  bool wide;  // the 256-wide shape below, not 15M
  char path[256];
  decode_config_t config;
} quant_case_t;
static quant_case_t g_quant[] = {
    {.name = "q8_0", .dtype = DECODE_DTYPE_Q8_0, .mix = DECODE_MIX_UNIFORM},
    {.name = "q4_0", .dtype = DECODE_DTYPE_Q4_0, .mix = DECODE_MIX_UNIFORM},
    {.name = "q4_k", .dtype = DECODE_DTYPE_Q4_K, .mix = DECODE_MIX_UNIFORM},
    {.name = "q4_k_m", .dtype = DECODE_DTYPE_Q4_K, .mix = DECODE_MIX_Q4_K_M},
    {.name = "q4_k_m_wide", .dtype = DECODE_DTYPE_Q4_K,
     .mix = DECODE_MIX_Q4_K_M, .wide = true},
    // The types llama.cpp's K mixes fall back to: Q4_1 and Q5_0 alone,
    // Q5_K_M on 15M (Q5_K for ffn_down, Q5_1 and Q8_0 elsewhere, Q6_K)
    // and on the wide shape (Q5_K and Q6_K only).
    {.name = "q4_1", .dtype = DECODE_DTYPE_Q4_1, .mix = DECODE_MIX_UNIFORM},
    {.name = "q5_0", .dtype = DECODE_DTYPE_Q5_0, .mix = DECODE_MIX_UNIFORM},
    {.name = "q5_k_m", .dtype = DECODE_DTYPE_Q5_K, .mix = DECODE_MIX_Q5_K_M},
    {.name = "q5_k_m_wide", .dtype = DECODE_DTYPE_Q5_K,
     .mix = DECODE_MIX_Q5_K_M, .wide = true},
};
// Rows of whole 256-element blocks, so Q4_K_M is Q4_K and Q6_K only:
// every kernel's K path (qkv, ffn, matvec_add, an unshared Q6_K
// classifier, the Q4_K embedding's rows), which on 15M only ffn_down
// takes; a vocabulary above the prompt's ids.
static const decode_config_t kWide = {256,  512,      4,     4,   2, 8192,
                                      64, 10000.0f, 1e-5f, false};
#define QUANT_CASES (sizeof(g_quant) / sizeof(g_quant[0]))

// The logits' tolerance on a quantized model against the mirror,
// relative to the largest logit. The mirror holds the very weights the
// file does and quantizes every product's input with the decoder's own
// function, so the two differ by float sums (the decoder's float dot
// products, 16 partial sums or SIMD lanes, against the mirror's double
// ones; the RMSNorm, softmax and rotation in another order): each sum
// a few ulp of its terms, some 1e-7 of a logit after 6 layers. Measured
// over 32 steps, every file and device, SIMD and portable dot products:
// at most 1.9e-7 (15M) and 3.6e-7 (the wide shape) of the largest. But
// a quantized input a few ulp from a rounding boundary (q = round(x /
// d) at k + 1/2, or a Q8_0 scale d halfway between two halves) rounds
// one way in the decoder and the other in the mirror, and one input one
// step off moves every later input by more than those ulp: a few more
// roundings go the other way, and the logits differ by what quantizing
// the inputs costs (1-5%, below). That happens at some 1 step in 15
// here. So where a step is not within the tolerance, mirror_step takes
// each of the ROUNDINGS roundings nearest a boundary the other way in
// turn and keeps the one that is (its cache rows too, so the steps
// after it are in step again); every such step here was matched by one.
// Where none matches (the wide shape's step 16 with the SIMD products:
// two roundings, or one in an earlier step whose own logits hid it), the
// mirror is held to F32_INPUT_TOLERANCE from there on, its tokens to a
// near tie within that; on the 15M shape that fails the test. 1e-5 is
// 30 times the worst float difference measured and far below the
// smallest effect of a rounding taken the other way seen here (3e-3).
//
// F32_INPUT_TOLERANCE, against a reference with f32 inputs: each block of
// 32 (Q8_0) or 256 (Q8_K) inputs of a product is rounded to 8 bits of
// its largest magnitude amax, an error uniform within amax / 254, of
// standard deviation amax / 440. Over a product of n inputs that is |w|
// sqrt(n) amax / 440 against a result of about |w| sqrt(n) rms(x): off
// by amax / rms(x) / 440 of its size, 0.6% for blocks of roughly normal
// inputs (amax ~ 2.5 rms) and 1-3% for SwiGLU's heavy-tailed output in
// blocks of 256 (amax ~ 5-12 rms), independently from product to
// product. The residual stream collects 4 such products a layer over 6
// layers, and the classifier adds its own: some 3-5% of a typical logit,
// and the largest of 32000 random logits is about 4 typical ones, so ~1%
// of it, with the worst of 32000 errors 3-4 times that. Measured: a
// worst of 4.9%; 8% leaves room for other seeds and summation orders,
// and is far below what a wrong block layout does (every logit off by
// its own size).
//
// MAX_TIES: steps of a run whose mirror's two largest logits are within
// QUANT_TOLERANCE (where either token is allowed). A random model's gap
// between its first and second of 32000 logits is some 4% of the largest,
// so 1e-5 of it comes about once in several thousand steps; none here.
#define QUANT_TOLERANCE 1e-5f
#define F32_INPUT_TOLERANCE 8e-2f
#define MAX_TIES 0u

static void run_reference(bool half, float* logits, uint32_t* tokens) {
  reference_t r;
  reference_init(&r, &g_config, half, DECODE_DTYPE_F32, DECODE_MIX_UNIFORM);
  memcpy(tokens, kPrompt, sizeof(kPrompt));
  for (uint32_t p = 0; p < STEPS; ++p) {
    float* out = logits + (size_t)p * g_config.vocab_size;
    reference_forward(&r, false, tokens[p], p, out);
    if (p + 1 >= PROMPT_LENGTH) tokens[p + 1] = argmax(out, g_config.vocab_size);
  }
  reference_free(&r);
}

static int setup(void** state) {
  (void)state;
  if (!mkdtemp(g_dir)) return -1;
  snprintf(g_llama2c, sizeof(g_llama2c), "%s/model.bin", g_dir);
  snprintf(g_gguf_f32, sizeof(g_gguf_f32), "%s/model_f32.gguf", g_dir);
  snprintf(g_gguf_f16, sizeof(g_gguf_f16), "%s/model_f16.gguf", g_dir);
  if (!decode_shape_lookup("15M", &g_config)) return -1;
  const struct {
    const char* path;
    decode_format_t format;
    decode_dtype_t dtype;
  } files[] = {{g_llama2c, DECODE_FORMAT_LLAMA2C, DECODE_DTYPE_F32},
               {g_gguf_f32, DECODE_FORMAT_GGUF, DECODE_DTYPE_F32},
               {g_gguf_f16, DECODE_FORMAT_GGUF, DECODE_DTYPE_F16}};
  for (size_t i = 0; i < 3; ++i) {
    if (decode_test_setup_status(decode_checkpoint_write(
            files[i].path, files[i].format, &g_config, files[i].dtype,
            SEED)) != 0) {
      return -1;
    }
  }
  g_logits_f32 = malloc((size_t)STEPS * g_config.vocab_size * sizeof(float));
  g_logits_f16 = malloc((size_t)STEPS * g_config.vocab_size * sizeof(float));
  if (!g_logits_f32 || !g_logits_f16) return -1;
  run_reference(false, g_logits_f32, g_tokens_f32);
  run_reference(true, g_logits_f16, g_tokens_f16);
  for (size_t i = 0; i < QUANT_CASES; ++i) {
    quant_case_t* q = &g_quant[i];
    snprintf(q->path, sizeof(q->path), "%s/model_%s.gguf", g_dir, q->name);
    q->config = q->wide ? kWide : g_config;
    if (decode_test_setup_status(decode_checkpoint_write_mix(
            q->path, &q->config, q->dtype, q->mix, SEED)) != 0) {
      return -1;
    }
  }
  return 0;
}

static int teardown(void** state) {
  (void)state;
  unlink(g_llama2c);
  unlink(g_gguf_f32);
  unlink(g_gguf_f16);
  free(g_logits_f32);
  free(g_logits_f16);
  for (size_t i = 0; i < QUANT_CASES; ++i) {
    unlink(g_quant[i].path);
  }
  rmdir(g_dir);
  return 0;
}

//===----------------------------------------------------------------------===//
// Cases
//===----------------------------------------------------------------------===//

// The largest magnitude of |vocab| logits: what the tolerances are
// relative to.
static float logit_scale(const float* logits, uint32_t vocab) {
  float scale = 0.0f;
  for (uint32_t i = 0; i < vocab; ++i) scale = fmaxf(scale, fabsf(logits[i]));
  return fmaxf(scale, 1e-30f);
}

// Fails unless |logits| are within |tolerance| of the largest of
// |expected| (step |p| of |path| on |device_string|); returns the
// largest error relative to that.
static float compare_logits(const char* path, const char* device_string,
                            uint32_t p, const float* logits,
                            const float* expected, uint32_t vocab,
                            float tolerance) {
  const float scale = logit_scale(expected, vocab);
  float error = 0.0f;
  uint32_t worst = 0;
  for (uint32_t i = 0; i < vocab; ++i) {
    const float e = fabsf(logits[i] - expected[i]);
    if (e > error) error = e, worst = i;
  }
  if (getenv("DECODE_TEST_MEASURE")) {
    printf("MEASURE %s %s step %u: %g\n", path, device_string, p,
           (double)(error / scale));
  }
  if (error > tolerance * scale) {
    fail_msg("%s on %s, step %u: logit %u is %g, expected %g (error %g > "
             "%g x %g)",
             path, device_string, p, worst, (double)logits[worst],
             (double)expected[worst], (double)error, (double)tolerance,
             (double)scale);
  }
  return error / scale;
}

// Decodes |path| on |device_string| one step at a time (so every step's
// logits can be read) and compares with the reference.
static void decode_and_compare(const char* device_string, const char* path,
                               const float* expected_logits,
                               const uint32_t* expected_tokens,
                               float tolerance) {
  weft_allocator_t allocator = weft_allocator_system();
  weft_device_t* device = NULL;
  assert_ok(weft_device_create(device_string, allocator, &device));
  decode_model_t* model = NULL;
  assert_ok(decode_model_load(device, path, NULL, allocator, &model));
  decode_session_t* session = NULL;
  assert_ok(decode_session_create(model, allocator, &session));
  assert_ok(decode_session_start(session, kPrompt, PROMPT_LENGTH));
  const uint32_t vocab = g_config.vocab_size;
  float* logits = malloc(vocab * sizeof(float));
  assert_non_null(logits);
  for (uint32_t p = 0; p < STEPS; ++p) {
    assert_ok(decode_session_enqueue(session, 1));
    assert_ok(decode_session_wait(session, p, weft_timeout_infinite()));
    assert_ok(decode_session_read_logits(session, logits));
    compare_logits(path, device_string, p, logits,
                   expected_logits + (size_t)p * vocab, vocab, tolerance);
  }
  uint32_t tokens[STEPS + 1];
  assert_ok(decode_session_read_tokens(session, 0, STEPS + 1, tokens));
  for (uint32_t i = 0; i <= STEPS; ++i) {
    if (tokens[i] != expected_tokens[i]) {
      fail_msg("%s on %s: token %u is %u, the reference's %u", path,
               device_string, i, tokens[i], expected_tokens[i]);
    }
  }
  free(logits);
  decode_session_release(session);
  decode_model_release(model);
  weft_device_release(device);
}

static const char* const kDevices[] = {"local-sync", "local-task?workers=1",
                                       "local-task?workers=2"};

static void llama2c_f32_matches_reference(void** state) {
  (void)state;
  for (size_t d = 0; d < 3; ++d) {
    decode_and_compare(kDevices[d], g_llama2c, g_logits_f32, g_tokens_f32,
                       1e-4f);
  }
}

static void gguf_f32_matches_reference(void** state) {
  (void)state;
  for (size_t d = 0; d < 3; ++d) {
    decode_and_compare(kDevices[d], g_gguf_f32, g_logits_f32, g_tokens_f32,
                       1e-4f);
  }
}

static void gguf_f16_matches_reference(void** state) {
  (void)state;
  for (size_t d = 0; d < 3; ++d) {
    decode_and_compare(kDevices[d], g_gguf_f16, g_logits_f16, g_tokens_f16,
                       1e-2f);
  }
}

// The largest difference of |logits| from |expected|, relative to the
// largest of |expected|.
static float relative_error(const float* logits, const float* expected,
                            uint32_t vocab) {
  float error = 0.0f;
  for (uint32_t i = 0; i < vocab; ++i) {
    error = fmaxf(error, fabsf(logits[i] - expected[i]));
  }
  return error / logit_scale(expected, vocab);
}

typedef enum mirror_e {
  MIRROR_MATCHED = 0,    // as computed
  MIRROR_FLIPPED = 1,    // with one or two roundings the other way
  MIRROR_UNMATCHED = 2,  // neither
} mirror_t;

// Step |p| of |r| with inputs quantized as the decoder does, on |token|,
// into |out|, matched to the decoder's |logits|: as computed where that
// is within QUANT_TOLERANCE of them, else, where one of the roundings
// nearest a boundary taken the other way is, with the first (closest)
// such, else with the first pair of the closest (the step's cache rows
// then hold that). The decoder's inputs
// differ from the reference's in their last bits, so a value that close
// to a boundary may have been rounded the other way there, and one
// rounding apart is an error of the activations' quantization, not of
// float sums (see QUANT_TOLERANCE).
static mirror_t mirror_step(reference_t* r, uint32_t token, uint32_t p,
                            const float* logits, bool search, float* out) {
  const uint32_t vocab = r->c.vocab_size;
  reference_forward(r, true, token, p, out);
  if (relative_error(logits, out, vocab) <= QUANT_TOLERANCE || !search) {
    return MIRROR_MATCHED;
  }
  rounding_t roundings[ROUNDINGS];
  const uint32_t count = r->rounding_count;
  memcpy(roundings, r->roundings, sizeof(roundings));
  float* flipped = malloc(vocab * sizeof(float));
  assert_non_null(flipped);
  mirror_t result = MIRROR_UNMATCHED;
  // One rounding the other way, closest first.
  for (uint32_t k = 0; k < count && result == MIRROR_UNMATCHED; ++k) {
    r->flips[0] = roundings[k];
    r->flip_count = 1;
    reference_forward(r, true, token, p, flipped);
    r->flip_count = 0;
    if (relative_error(logits, flipped, vocab) <= QUANT_TOLERANCE) {
      printf("step %u: matched with %s %u of input %u (%.3g from the "
             "boundary) rounded the other way\n",
             p, roundings[k].scale ? "the Q8_0 scale of block" : "element",
             roundings[k].index, roundings[k].input, roundings[k].margin);
      memcpy(out, flipped, vocab * sizeof(float));
      result = MIRROR_FLIPPED;
    }
  }
  // Two the other way, among the closest PAIR_CANDIDATES: sums in another
  // order move more than one input's last bit now and then (two roundings
  // apart is still the activations' quantization, not the sums' error).
  const uint32_t pair_count = count < PAIR_CANDIDATES ? count : PAIR_CANDIDATES;
  for (uint32_t a = 0; a < pair_count && result == MIRROR_UNMATCHED; ++a) {
    for (uint32_t b = a + 1; b < pair_count && result == MIRROR_UNMATCHED;
         ++b) {
      r->flips[0] = roundings[a];
      r->flips[1] = roundings[b];
      r->flip_count = 2;
      reference_forward(r, true, token, p, flipped);
      r->flip_count = 0;
      if (relative_error(logits, flipped, vocab) <= QUANT_TOLERANCE) {
        printf("step %u: matched with two roundings the other way: input "
               "%u index %u (%.3g from the boundary) and input %u index %u "
               "(%.3g)\n",
               p, roundings[a].input, roundings[a].index, roundings[a].margin,
               roundings[b].input, roundings[b].index, roundings[b].margin);
        memcpy(out, flipped, vocab * sizeof(float));
        result = MIRROR_FLIPPED;
      }
    }
  }
  // None matched: the cache rows of the step as computed.
  if (result == MIRROR_UNMATCHED) reference_forward(r, true, token, p, out);
  free(flipped);
  return result;
}

// The references' logits for one quantized file, following the tokens a
// decoder chose: step p fed |tokens|[p] after the steps before it, for
// the first |steps| steps. A device that chose the same tokens reuses
// them (the references are deterministic); from its first other token on
// they are computed again (the caches' earlier rows are that same prefix).
typedef struct followed_t {
  reference_t r;
  uint32_t vocab;
  uint32_t steps;
  uint32_t tokens[STEPS];
  mirror_t flipped[STEPS];
  float* quantized;  // [STEPS][vocab], inputs quantized as the decoder does
  float* f32;        // [STEPS][vocab], inputs f32
} followed_t;

// What one device's run of a quantized file measured.
typedef struct follow_result_t {
  float worst;      // the largest logit error against the mirror
  float worst_f32;  // the same against the f32-input reference
  uint32_t ties;    // steps whose reference top two are within tolerance
  uint32_t other;   // of those, steps where the decoder took the other
  uint32_t flips;      // steps matched with one or two roundings flipped
  uint32_t unmatched;  // steps no such rounding matched (0 or 1)
  uint32_t diverged;   // steps from that one on
} follow_result_t;

// Decodes the quantized file of |q| on |device_string| step by step, each
// step followed by the references on the decoder's own tokens (so a token
// chosen otherwise at a tie does not make every later step
// incomparable): logits within QUANT_TOLERANCE of the reference that
// quantizes inputs as the decoder does and within F32_INPUT_TOLERANCE of
// the one that does not, and the decoder's token the former's argmax,
// or, where its two largest logits are closer than QUANT_TOLERANCE, a
// logit within that of the largest.
static follow_result_t decode_and_follow(const char* device_string,
                                         const quant_case_t* q,
                                         followed_t* f) {
  weft_allocator_t allocator = weft_allocator_system();
  weft_device_t* device = NULL;
  assert_ok(weft_device_create(device_string, allocator, &device));
  decode_model_t* model = NULL;
  assert_ok(decode_model_load(device, q->path, NULL, allocator, &model));
  decode_session_t* session = NULL;
  assert_ok(decode_session_create(model, allocator, &session));
  assert_ok(decode_session_start(session, kPrompt, PROMPT_LENGTH));
  const uint32_t vocab = f->vocab;
  float* logits = malloc(vocab * sizeof(float));
  assert_non_null(logits);
  uint32_t tokens[STEPS + 1];
  follow_result_t result = {0.0f, 0.0f, 0, 0, 0, 0, 0};
  bool diverged = false;
  for (uint32_t p = 0; p < STEPS; ++p) {
    assert_ok(decode_session_enqueue(session, 1));
    assert_ok(decode_session_wait(session, p, weft_timeout_infinite()));
    assert_ok(decode_session_read_logits(session, logits));
    assert_ok(decode_session_read_tokens(session, 0, p + 2, tokens));
    float* expected = f->quantized + (size_t)p * vocab;
    float* expected_f32 = f->f32 + (size_t)p * vocab;
    if (p >= f->steps || f->tokens[p] != tokens[p] ||
        (!diverged &&
         relative_error(logits, expected, vocab) > QUANT_TOLERANCE)) {
      f->tokens[p] = tokens[p];
      f->flipped[p] =
          mirror_step(&f->r, tokens[p], p, logits, !diverged, expected);
      reference_forward(&f->r, false, tokens[p], p, expected_f32);
      f->steps = p + 1;
    }
    if (!diverged && f->flipped[p] == MIRROR_FLIPPED) ++result.flips;
    if (!diverged && f->flipped[p] == MIRROR_UNMATCHED) {
      printf("%s on %s: step %u matched by no rounding or two: from here "
             "on the mirror is held to F32_INPUT_TOLERANCE\n",
             q->name, device_string, p);
      ++result.unmatched;
      diverged = true;
    }
    const float tolerance = diverged ? F32_INPUT_TOLERANCE : QUANT_TOLERANCE;
    if (diverged) ++result.diverged;
    const float error = compare_logits(q->path, device_string, p, logits,
                                       expected, vocab, tolerance);
    if (!diverged) result.worst = fmaxf(result.worst, error);
    result.worst_f32 = fmaxf(
        result.worst_f32,
        compare_logits(q->path, device_string, p, logits, expected_f32,
                       vocab, F32_INPUT_TOLERANCE));
    if (p + 1 < PROMPT_LENGTH) continue;
    const uint32_t best = argmax(expected, vocab);
    uint32_t second = best == 0 ? 1 : 0;
    for (uint32_t i = 0; i < vocab; ++i) {
      if (i != best && expected[i] > expected[second]) second = i;
    }
    const float margin = tolerance * logit_scale(expected, vocab);
    const bool tie = expected[best] - expected[second] <= margin;
    const uint32_t token = tokens[p + 1];
    if (tie && !diverged) ++result.ties;
    if (tie) {
      printf("%s on %s: token %u a tie: %u (%.9g) and %u (%.9g), the "
             "decoder's %u\n",
             q->name, device_string, p + 1, best, (double)expected[best],
             second, (double)expected[second], token);
    }
    if (token == best) continue;
    if (!tie || expected[best] - expected[token] > margin) {
      fail_msg("%s on %s: token %u is %u (reference logit %.9g), the "
               "reference's %u (%.9g)",
               q->path, device_string, p + 1, token, (double)expected[token],
               best, (double)expected[best]);
    }
    ++result.other;
  }
  printf("%s on %s: tokens", q->name, device_string);
  for (uint32_t i = 0; i <= STEPS; ++i) printf(" %u", tokens[i]);
  printf("\n");
  free(logits);
  decode_session_release(session);
  decode_model_release(model);
  weft_device_release(device);
  return result;
}

// A quantized file (the case in |state|) on every device.
static void gguf_quantized_matches_reference(void** state) {
  const quant_case_t* q = (const quant_case_t*)*state;
  followed_t f;
  memset(&f, 0, sizeof(f));
  reference_init(&f.r, &q->config, false, q->dtype, q->mix);
  f.vocab = q->config.vocab_size;
  f.quantized = malloc((size_t)STEPS * f.vocab * sizeof(float));
  f.f32 = malloc((size_t)STEPS * f.vocab * sizeof(float));
  assert_true(f.quantized && f.f32);
  for (size_t d = 0; d < 3; ++d) {
    const follow_result_t result = decode_and_follow(kDevices[d], q, &f);
    printf("%s on %s: logits within %.3g of the largest (the mirror, "
           "in step), %.3g (f32 inputs); %u steps matched with one "
           "rounding the other way, %u with none (then %u steps held to "
           "F32_INPUT_TOLERANCE); %u of %u tokens a tie, %u not the "
           "mirror's argmax\n",
           q->name, kDevices[d], (double)result.worst,
           (double)result.worst_f32, result.flips, result.unmatched,
           result.diverged, result.ties, STEPS + 1 - PROMPT_LENGTH,
           result.other);
    if (result.ties > MAX_TIES) {
      fail_msg("%s on %s: %u ties of the mirror's top two (at most %u)",
               q->name, kDevices[d], result.ties, MAX_TIES);
    }
    // The 15M shape's tokens are the mirror's at every step.
    if (!q->wide && result.unmatched != 0) {
      fail_msg("%s on %s: the mirror lost step with the decoder", q->name,
               kDevices[d]);
    }
  }
  free(f.quantized);
  free(f.f32);
  reference_free(&f.r);
}

// All steps queued at once (the runner's way): the same tokens.
static void queued_at_once_same_tokens(void** state) {
  (void)state;
  weft_allocator_t allocator = weft_allocator_system();
  weft_device_t* device = NULL;
  assert_ok(weft_device_create("local-task?workers=2", allocator, &device));
  decode_model_t* model = NULL;
  assert_ok(decode_model_load(device, g_llama2c, NULL, allocator, &model));
  decode_session_t* session = NULL;
  assert_ok(decode_session_create(model, allocator, &session));
  for (int round = 0; round < 2; ++round) {
    assert_ok(decode_session_start(session, kPrompt, PROMPT_LENGTH));
    assert_ok(decode_session_enqueue(session, STEPS));
    assert_ok(decode_session_wait(session, STEPS - 1, weft_timeout_infinite()));
    uint32_t tokens[STEPS + 1];
    assert_ok(decode_session_read_tokens(session, 0, STEPS + 1, tokens));
    assert_memory_equal(tokens, g_tokens_f32, sizeof(tokens));
  }
  decode_session_release(session);
  decode_model_release(model);
  weft_device_release(device);
}

static void bad_prompt_and_context(void** state) {
  (void)state;
  weft_allocator_t allocator = weft_allocator_system();
  weft_device_t* device = NULL;
  assert_ok(weft_device_create("local-sync", allocator, &device));
  decode_model_t* model = NULL;
  assert_ok(decode_model_load(device, g_llama2c, NULL, allocator, &model));
  decode_session_t* session = NULL;
  assert_ok(decode_session_create(model, allocator, &session));
  const uint32_t bad[] = {1, 32000};
  weft_status_t status = decode_session_start(session, bad, 2);
  assert_int_equal(weft_status_code(status), WEFT_STATUS_INVALID_ARGUMENT);
  weft_status_free(status);
  status = decode_session_enqueue(session, 1);
  assert_int_equal(weft_status_code(status), WEFT_STATUS_FAILED_PRECONDITION);
  weft_status_free(status);
  assert_ok(decode_session_start(session, kPrompt, PROMPT_LENGTH));
  status = decode_session_enqueue(session, g_config.seq_len + 1);
  assert_int_equal(weft_status_code(status), WEFT_STATUS_OUT_OF_RANGE);
  weft_status_free(status);
  decode_session_release(session);
  decode_model_release(model);
  weft_device_release(device);
}

// The CUDA executable's kernel table: the CPU table's names, binding and
// constant counts and local memory in the same order, blocks of whole
// warps within CUDA's 1024 threads; where nvcc built no kernels, the
// source is UNAVAILABLE saying so.
static void cuda_kernel_table(void** state) {
  (void)state;
  weft_kernel_def_t kernels[DECODE_KERNEL_COUNT];
  weft_executable_source_t source;
  weft_status_t status = decode_cuda_executable_source(kernels, &source);
  if (!decode_cuda_kernels_available()) {
    assert_int_equal(weft_status_code(status), WEFT_STATUS_UNAVAILABLE);
    char text[512];
    weft_status_format(status, text, sizeof(text));
    weft_status_free(status);
    assert_non_null(strstr(text, "no CUDA kernels in this build"));
    return;
  }
  assert_ok(status);
  assert_int_equal(source.format, WEFT_EXECUTABLE_FORMAT_CUDA_PTX);
  assert_non_null(source.data);
  assert_non_null(strstr((const char*)source.data, ".entry gemm("));
  assert_int_equal(source.kernel_count, DECODE_KERNEL_COUNT);
  assert_ptr_equal(source.kernels, kernels);
  const weft_kernel_library_t* cpu = decode_kernels_library();
  assert_int_equal(cpu->kernel_count, DECODE_KERNEL_COUNT);
  for (uint32_t i = 0; i < DECODE_KERNEL_COUNT; ++i) {
    const weft_kernel_def_t* a = &cpu->kernels[i];
    const weft_kernel_def_t* b = &kernels[i];
    assert_string_equal(a->name, b->name);
    assert_int_equal(a->binding_count, b->binding_count);
    assert_int_equal(a->constant_count, b->constant_count);
    assert_int_equal(a->local_memory_size, b->local_memory_size);
    assert_null(b->fn);
    assert_true(b->workgroup_size[0] % 32 == 0);
    assert_true(b->workgroup_size[0] <= 1024);
    assert_int_equal(b->workgroup_size[1], 1);
    assert_int_equal(b->workgroup_size[2], 1);
    // Every entry of the table is an entry of the PTX.
    char entry[64];
    snprintf(entry, sizeof(entry), ".entry %s(", b->name);
    assert_non_null(strstr((const char*)source.data, entry));
  }
}

static void missing_model_is_not_found(void** state) {
  (void)state;
  weft_device_t* device = NULL;
  assert_ok(weft_device_create("local-sync", weft_allocator_system(), &device));
  decode_model_t* model = NULL;
  weft_status_t status = decode_model_load(
      device, "/nonexistent/model.bin", NULL, weft_allocator_system(), &model);
  assert_int_equal(weft_status_code(status), WEFT_STATUS_NOT_FOUND);
  char text[512];
  weft_status_format(status, text, sizeof(text));
  assert_non_null(strstr(text, "/nonexistent/model.bin"));
  weft_status_free(status);
  assert_null(model);
  weft_device_release(device);
}

//===----------------------------------------------------------------------===//
// On the CUDA test double (--cuda-double)
//===----------------------------------------------------------------------===//

#define CUDA_DEVICE "cuda"

// The double's launch counter (weft_cuda_double_launch_count); NULL on a
// GPU (--cuda).
static uint64_t (*g_cuda_launch_count)(void);

// dlopens the double the driver will load (WEFT_CUDA_DRIVER_LIBRARY: the
// same library, so one registry) and registers the decode's CPU kernels
// as the twins of the PTX entries of their names.
static int cuda_double_setup(void** state) {
  const char* path = getenv("WEFT_CUDA_DRIVER_LIBRARY");
  if (!path || !path[0]) {
    fprintf(stderr, "--cuda-double: WEFT_CUDA_DRIVER_LIBRARY is not set\n");
    return -1;
  }
  // Never closed: the twins live as long as the process.
  void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    fprintf(stderr, "--cuda-double: dlopen(%s): %s\n", path, dlerror());
    return -1;
  }
  void (*register_twins)(const weft_kernel_library_t*) =
      (void (*)(const weft_kernel_library_t*))dlsym(
          library, "weft_cuda_double_register_twins");
  g_cuda_launch_count =
      (uint64_t(*)(void))dlsym(library, "weft_cuda_double_launch_count");
  if (!register_twins || !g_cuda_launch_count) {
    fprintf(stderr, "--cuda-double: %s is not the CUDA test double\n", path);
    return -1;
  }
  register_twins(decode_kernels_library());
  return setup(state);
}

static void cuda_f32_matches_reference(void** state) {
  (void)state;
  const uint64_t launches = g_cuda_launch_count ? g_cuda_launch_count() : 0;
  decode_and_compare(CUDA_DEVICE, g_llama2c, g_logits_f32, g_tokens_f32,
                     1e-4f);
  decode_and_compare(CUDA_DEVICE, g_gguf_f32, g_logits_f32, g_tokens_f32,
                     1e-4f);
  // On the double: the steps ran as kernels launched through the cuda
  // driver (graphs' kernel nodes count too).
  if (g_cuda_launch_count) assert_true(g_cuda_launch_count() > launches);
}

static void cuda_f16_matches_reference(void** state) {
  (void)state;
  decode_and_compare(CUDA_DEVICE, g_gguf_f16, g_logits_f16, g_tokens_f16,
                     1e-2f);
}

// All steps queued at once: the prompt's first two positions as one batch
// (GEMM tiles of two positions), then the steps, each waiting on the one
// before on the device.
static void cuda_queued_at_once_same_tokens(void** state) {
  (void)state;
  weft_allocator_t allocator = weft_allocator_system();
  weft_device_t* device = NULL;
  assert_ok(weft_device_create(CUDA_DEVICE, allocator, &device));
  decode_model_t* model = NULL;
  assert_ok(decode_model_load(device, g_gguf_f16, NULL, allocator, &model));
  decode_session_t* session = NULL;
  assert_ok(decode_session_create(model, allocator, &session));
  assert_ok(decode_session_start(session, kPrompt, PROMPT_LENGTH));
  assert_ok(decode_session_enqueue(session, STEPS));
  assert_ok(decode_session_wait(session, STEPS - 1, weft_timeout_infinite()));
  uint32_t tokens[STEPS + 1];
  assert_ok(decode_session_read_tokens(session, 0, STEPS + 1, tokens));
  assert_memory_equal(tokens, g_tokens_f16, sizeof(tokens));
  decode_session_release(session);
  decode_model_release(model);
  weft_device_release(device);
}

// Fails unless |status| has |code| and its text holds each of |parts|
// (NULL-terminated).
static void expect_status(weft_status_t status, weft_status_code_t code,
                          const char* const* parts) {
  char text[1024];
  weft_status_format(status, text, sizeof(text));
  const weft_status_code_t actual = weft_status_code(status);
  weft_status_free(status);
  if (actual != code) {
    fail_msg("expected code %d: %s", (int)code, text);
  }
  for (const char* const* part = parts; *part; ++part) {
    if (!strstr(text, *part)) fail_msg("'%s' lacks '%s'", text, *part);
  }
}

// A quantized model (q8_0: every matrix Q8_0) on cuda: refused at load,
// naming the first tensor and its type; f32 and f16 only.
static void cuda_quantized_is_refused(void** state) {
  (void)state;
  weft_allocator_t allocator = weft_allocator_system();
  weft_device_t* device = NULL;
  assert_ok(weft_device_create(CUDA_DEVICE, allocator, &device));
  decode_model_t* model = NULL;
  weft_status_t status =
      decode_model_load(device, g_quant[0].path, NULL, allocator, &model);
  const char* const parts[] = {"decode on cuda: tensor token_embedding is q8_0",
                               "f32 and f16 weights only", g_quant[0].path,
                               NULL};
  expect_status(status, WEFT_STATUS_UNIMPLEMENTED, parts);
  assert_null(model);
  weft_device_release(device);
}

// SAMPLE has no CUDA kernel: a temperature above 0 is refused on cuda,
// and greedy decoding goes on.
static void cuda_sampling_is_refused(void** state) {
  (void)state;
  weft_allocator_t allocator = weft_allocator_system();
  weft_device_t* device = NULL;
  assert_ok(weft_device_create(CUDA_DEVICE, allocator, &device));
  decode_model_t* model = NULL;
  assert_ok(decode_model_load(device, g_gguf_f32, NULL, allocator, &model));
  decode_session_t* session = NULL;
  assert_ok(decode_session_create(model, allocator, &session));
  const decode_sampling_t sampling = {.temperature = 0.8f,
                                      .top_k = 40,
                                      .top_p = 0.95f,
                                      .seed = 1};
  const char* const parts[] = {"temperature 0.8 on a cuda device", NULL};
  expect_status(decode_session_set_sampling(session, &sampling),
                WEFT_STATUS_UNIMPLEMENTED, parts);
  assert_ok(decode_session_start(session, kPrompt, PROMPT_LENGTH));
  assert_ok(decode_session_enqueue(session, 4));
  assert_ok(decode_session_wait(session, 3, weft_timeout_infinite()));
  uint32_t tokens[5];
  assert_ok(decode_session_read_tokens(session, 0, 5, tokens));
  assert_memory_equal(tokens, g_tokens_f32, sizeof(tokens));
  decode_session_release(session);
  decode_model_release(model);
  weft_device_release(device);
}

// Where no cuda device can be made (--cuda): 77, the test skipped.
static int cuda_main(bool on_double) {
  if (!on_double) {
    weft_device_t* device = NULL;
    weft_status_t status =
        weft_device_create(CUDA_DEVICE, weft_allocator_system(), &device);
    if (!weft_status_is_ok(status)) {
      char text[512];
      weft_status_format(status, text, sizeof(text));
      weft_status_free(status);
      printf("skipped: no cuda device (%s)\n", text);
      return 77;
    }
    weft_device_release(device);
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cuda_f32_matches_reference),
      cmocka_unit_test(cuda_f16_matches_reference),
      cmocka_unit_test(cuda_queued_at_once_same_tokens),
      cmocka_unit_test(cuda_quantized_is_refused),
      cmocka_unit_test(cuda_sampling_is_refused),
  };
  return on_double ? cmocka_run_group_tests_name("decode.cuda-double", tests,
                                                cuda_double_setup, teardown)
                   : cmocka_run_group_tests_name("decode.cuda", tests, setup,
                                                 teardown);
}

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "--cuda-double") == 0) {
    return cuda_main(true);
  }
  if (argc == 2 && strcmp(argv[1], "--cuda") == 0) return cuda_main(false);
  if (argc != 1) {
    fprintf(stderr, "usage: %s [--cuda-double | --cuda]\n", argv[0]);
    return 2;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(llama2c_f32_matches_reference),
      cmocka_unit_test(gguf_f32_matches_reference),
      cmocka_unit_test(gguf_f16_matches_reference),
      cmocka_unit_test_prestate(gguf_quantized_matches_reference,
                                &g_quant[0]),
      cmocka_unit_test_prestate(gguf_quantized_matches_reference,
                                &g_quant[1]),
      cmocka_unit_test_prestate(gguf_quantized_matches_reference,
                                &g_quant[2]),
      cmocka_unit_test_prestate(gguf_quantized_matches_reference,
                                &g_quant[3]),
      cmocka_unit_test_prestate(gguf_quantized_matches_reference,
                                &g_quant[4]),
      cmocka_unit_test_prestate(gguf_quantized_matches_reference,
                                &g_quant[5]),
      cmocka_unit_test_prestate(gguf_quantized_matches_reference,
                                &g_quant[6]),
      cmocka_unit_test_prestate(gguf_quantized_matches_reference,
                                &g_quant[7]),
      cmocka_unit_test_prestate(gguf_quantized_matches_reference,
                                &g_quant[8]),
      cmocka_unit_test(queued_at_once_same_tokens),
      cmocka_unit_test(bad_prompt_and_context),
      cmocka_unit_test(missing_model_is_not_found),
      cmocka_unit_test(cuda_kernel_table),
  };
  return cmocka_run_group_tests_name("decode", tests, setup, teardown);
}
