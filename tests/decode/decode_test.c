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
//    and q5_k_m the same way (15M's mixes Q8_0, Q5_1, Q5_K and Q6_K): the
//    reference dequantizes the same blocks to f32 and follows the
//    decoder's tokens, so what is left is the activations' quantization
//    (QUANT_TOLERANCE); each token its argmax or a near tie of it;
//  - on local-sync and on local-task with 1 and 2 workers, the greedy
//    tokens identical to the reference's (f32, f16);
//  - both formats of one seed give the same logits;
//  - a bad prompt and a session run past its context are clean errors.
// Steps: 32 on the 15M shape; 4 under a sanitizer.
// setjmp.h, stdarg.h and stddef.h must come before cmocka.h.
// clang-format off
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
// clang-format on

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decode.h"
#include "decode_checkpoint.h"
#include "decode_quant.h"
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

typedef struct reference_t {
  decode_config_t c;
  bool half;  // weights rounded to f16 (norms stay f32)
  // Weights quantized as the generator's file of these holds them, then
  // dequantized (dtype f32: not quantized).
  decode_dtype_t dtype;
  decode_mix_t mix;
  float* tensors[DECODE_TENSOR_COUNT];
  float* k_cache;
  float* v_cache;
} reference_t;

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
  if (!decode_dtype_is_quantized(type)) return;
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
  r->k_cache = calloc(cache, sizeof(float));
  r->v_cache = calloc(cache, sizeof(float));
  assert_non_null(r->k_cache);
  assert_non_null(r->v_cache);
}

static void reference_free(reference_t* r) {
  for (int t = 0; t < DECODE_TENSOR_COUNT; ++t) free(r->tensors[t]);
  free(r->k_cache);
  free(r->v_cache);
}

// out[rows] = W x, W [rows][cols] the |layer| of |tensor| (the
// classifier: the embedding where it is shared).
static void matmul(const reference_t* r, decode_tensor_t tensor,
                   uint32_t layer, float* out, const float* x,
                   uint32_t rows, uint32_t cols) {
  const decode_tensor_t stored =
      tensor == DECODE_TENSOR_CLASSIFIER && r->c.shared_classifier
          ? DECODE_TENSOR_TOKEN_EMBEDDING
          : tensor;
  const float* w = r->tensors[stored] + (size_t)layer * rows * cols;
  for (uint32_t i = 0; i < rows; ++i) {
    float sum = 0.0f;
    for (uint32_t j = 0; j < cols; ++j) sum += w[(size_t)i * cols + j] * x[j];
    out[i] = sum;
  }
}

static void rmsnorm(float* out, const float* x, const float* w, uint32_t n,
                    float eps) {
  float ss = 0.0f;
  for (uint32_t i = 0; i < n; ++i) ss += x[i] * x[i];
  ss = 1.0f / sqrtf(ss / n + eps);
  for (uint32_t i = 0; i < n; ++i) out[i] = w[i] * (ss * x[i]);
}

// One token at |pos|: the logits into |logits|.
static void reference_forward(reference_t* r, uint32_t token, uint32_t pos,
                              float* logits) {
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
    float* k = r->k_cache + cache_layer + (size_t)pos * kv_dim;
    float* v = r->v_cache + cache_layer + (size_t)pos * kv_dim;
    matmul(r, DECODE_TENSOR_WQ, l, q, xb, dim, dim);
    matmul(r, DECODE_TENSOR_WK, l, k, xb, kv_dim, dim);
    matmul(r, DECODE_TENSOR_WV, l, v, xb, kv_dim, dim);
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
        const float* kt = r->k_cache + cache_layer + (size_t)t * kv_dim +
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
        const float* vt = r->v_cache + cache_layer + (size_t)t * kv_dim +
                          (h / kv_mul) * hs;
        for (uint32_t i = 0; i < hs; ++i) out[i] += att[t] / sum * vt[i];
      }
    }
    matmul(r, DECODE_TENSOR_WO, l, xb2, xb, dim, dim);
    for (uint32_t i = 0; i < dim; ++i) x[i] += xb2[i];
    rmsnorm(xb, x, r->tensors[DECODE_TENSOR_FFN_NORM] + (size_t)l * dim, dim,
            c->norm_eps);
    matmul(r, DECODE_TENSOR_W1, l, hb, xb, hidden, dim);
    matmul(r, DECODE_TENSOR_W3, l, hb2, xb, hidden, dim);
    for (uint32_t i = 0; i < hidden; ++i) {
      hb[i] = hb[i] * (1.0f / (1.0f + expf(-hb[i]))) * hb2[i];
    }
    matmul(r, DECODE_TENSOR_W2, l, xb, hb, dim, hidden);
    for (uint32_t i = 0; i < dim; ++i) x[i] += xb[i];
  }
  rmsnorm(x, x, r->tensors[DECODE_TENSOR_FINAL_NORM], dim, c->norm_eps);
  matmul(r, DECODE_TENSOR_CLASSIFIER, 0, logits, x, c->vocab_size, dim);
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

// The logits' tolerance on a quantized model, relative to the largest
// logit. The reference holds the very weights the file does, so what is
// left is the activations: each block of 32 (Q8_0) or 256 (Q8_K) inputs
// of a product is rounded to 8 bits of its largest magnitude amax, an
// error uniform within amax / 254, of standard deviation amax / 440.
// Over a product of n inputs that is |w| sqrt(n) amax / 440 against a
// result of about |w| sqrt(n) rms(x): off by amax / rms(x) / 440 of its
// size, 0.6% for blocks of roughly normal inputs (amax ~ 2.5 rms) and
// 1-3% for SwiGLU's heavy-tailed output in blocks of 256 (amax ~ 5-12
// rms), independently from product to product. The residual stream
// collects 4 such products a layer over 6 layers, and the classifier adds
// its own: some 3-5% of a typical logit, and the largest of 32000 random
// logits is about 4 typical ones, so ~1% of it, with the worst of 32000
// errors 3-4 times that. Measured over 32 steps on every device and file
// here: a median of 2.5-3.4% and a worst of 4.7%; 8% leaves room for
// other seeds and summation orders, and is far below what a wrong block
// layout does (every logit off by its own size). Greedy tokens follow:
// a random model's two largest logits are often closer than this (the
// worst error, 4% of the largest, is about the typical gap between the
// first and second of 32000), so where they are the decoder may pick
// either (decode_and_follow).
#define QUANT_TOLERANCE 8e-2f

static void run_reference(bool half, float* logits, uint32_t* tokens) {
  reference_t r;
  reference_init(&r, &g_config, half, DECODE_DTYPE_F32, DECODE_MIX_UNIFORM);
  memcpy(tokens, kPrompt, sizeof(kPrompt));
  for (uint32_t p = 0; p < STEPS; ++p) {
    float* out = logits + (size_t)p * g_config.vocab_size;
    reference_forward(&r, tokens[p], p, out);
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

// Fails unless |logits| are within |tolerance| of the largest of
// |expected| (step |p| of |path| on |device_string|).
static void compare_logits(const char* path, const char* device_string,
                           uint32_t p, const float* logits,
                           const float* expected, uint32_t vocab,
                           float tolerance) {
  float scale = 0.0f, error = 0.0f;
  uint32_t worst = 0;
  for (uint32_t i = 0; i < vocab; ++i) {
    scale = fmaxf(scale, fabsf(expected[i]));
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

// Decodes the quantized file of |q| on |device_string| step by step, each
// step followed by the reference on the decoder's own tokens (so a token
// chosen otherwise does not make every later step incomparable): logits
// within QUANT_TOLERANCE, and the decoder's token the reference's argmax,
// or where the reference's largest logits are closer than that tolerance,
// one of them (a logit within the tolerance of the largest). Returns the
// steps whose token was such a near tie rather than the argmax.
static uint32_t decode_and_follow(const char* device_string,
                                  const quant_case_t* q, reference_t* r) {
  weft_allocator_t allocator = weft_allocator_system();
  weft_device_t* device = NULL;
  assert_ok(weft_device_create(device_string, allocator, &device));
  decode_model_t* model = NULL;
  assert_ok(decode_model_load(device, q->path, NULL, allocator, &model));
  decode_session_t* session = NULL;
  assert_ok(decode_session_create(model, allocator, &session));
  assert_ok(decode_session_start(session, kPrompt, PROMPT_LENGTH));
  const uint32_t vocab = q->config.vocab_size;
  float* logits = malloc(vocab * sizeof(float));
  float* expected = malloc(vocab * sizeof(float));
  assert_true(logits && expected);
  uint32_t tokens[STEPS + 1];
  uint32_t near_ties = 0;
  for (uint32_t p = 0; p < STEPS; ++p) {
    assert_ok(decode_session_enqueue(session, 1));
    assert_ok(decode_session_wait(session, p, weft_timeout_infinite()));
    assert_ok(decode_session_read_logits(session, logits));
    assert_ok(decode_session_read_tokens(session, 0, p + 2, tokens));
    reference_forward(r, tokens[p], p, expected);
    compare_logits(q->path, device_string, p, logits, expected, vocab,
                   QUANT_TOLERANCE);
    if (p + 1 < PROMPT_LENGTH) continue;
    const uint32_t best = argmax(expected, vocab);
    const float scale = fmaxf(fabsf(expected[best]), 1e-30f);
    if (tokens[p + 1] == best) continue;
    if (expected[best] - expected[tokens[p + 1]] > QUANT_TOLERANCE * scale) {
      fail_msg("%s on %s: token %u is %u (reference logit %g), the "
               "reference's %u (%g)",
               q->path, device_string, p + 1, tokens[p + 1],
               (double)expected[tokens[p + 1]], best, (double)expected[best]);
    }
    ++near_ties;
  }
  free(logits);
  free(expected);
  decode_session_release(session);
  decode_model_release(model);
  weft_device_release(device);
  return near_ties;
}

// A quantized file (the case in |state|) on every device.
static void gguf_quantized_matches_reference(void** state) {
  const quant_case_t* q = (const quant_case_t*)*state;
  reference_t r;
  reference_init(&r, &q->config, false, q->dtype, q->mix);
  for (size_t d = 0; d < 3; ++d) {
    const uint32_t near_ties = decode_and_follow(kDevices[d], q, &r);
    printf("%s on %s: %u of %u tokens a near tie of the reference's\n",
           q->name, kDevices[d], near_ties, STEPS + 1 - PROMPT_LENGTH);
  }
  reference_free(&r);
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

int main(void) {
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
  };
  return cmocka_run_group_tests_name("decode", tests, setup, teardown);
}
