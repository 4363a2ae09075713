// The decoder (examples/decode) against a plain single-threaded reference
// written here: straightforward loops over weights computed straight from
// the generator's formula (decode_random_weight), so the file formats, the
// loading, the binding tables and the kernels are all checked at once.
//  - llama2.c f32 and GGUF f32 checkpoints of one seed: logits within 1e-4
//    of the reference (relative to the largest logit) at every step;
//  - GGUF f16: within 1e-2 (the reference rounds the weights to half too);
//  - on local-sync and on local-task with 1 and 2 workers, the greedy
//    tokens identical to the reference's;
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

static void reference_init(reference_t* r, const decode_config_t* c,
                           bool half) {
  memset(r, 0, sizeof(*r));
  r->c = *c;
  r->half = half;
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

// out[rows] = W[rows][cols] x
static void matmul(float* out, const float* x, const float* w, uint32_t rows,
                   uint32_t cols) {
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
    matmul(q, xb, r->tensors[DECODE_TENSOR_WQ] + (size_t)l * dim * dim, dim,
           dim);
    matmul(k, xb, r->tensors[DECODE_TENSOR_WK] + (size_t)l * kv_dim * dim,
           kv_dim, dim);
    matmul(v, xb, r->tensors[DECODE_TENSOR_WV] + (size_t)l * kv_dim * dim,
           kv_dim, dim);
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
    matmul(xb2, xb, r->tensors[DECODE_TENSOR_WO] + (size_t)l * dim * dim, dim,
           dim);
    for (uint32_t i = 0; i < dim; ++i) x[i] += xb2[i];
    rmsnorm(xb, x, r->tensors[DECODE_TENSOR_FFN_NORM] + (size_t)l * dim, dim,
            c->norm_eps);
    matmul(hb, xb, r->tensors[DECODE_TENSOR_W1] + (size_t)l * hidden * dim,
           hidden, dim);
    matmul(hb2, xb, r->tensors[DECODE_TENSOR_W3] + (size_t)l * hidden * dim,
           hidden, dim);
    for (uint32_t i = 0; i < hidden; ++i) {
      hb[i] = hb[i] * (1.0f / (1.0f + expf(-hb[i]))) * hb2[i];
    }
    matmul(xb, hb, r->tensors[DECODE_TENSOR_W2] + (size_t)l * dim * hidden,
           dim, hidden);
    for (uint32_t i = 0; i < dim; ++i) x[i] += xb[i];
  }
  rmsnorm(x, x, r->tensors[DECODE_TENSOR_FINAL_NORM], dim, c->norm_eps);
  const float* classifier =
      c->shared_classifier ? r->tensors[DECODE_TENSOR_TOKEN_EMBEDDING]
                           : r->tensors[DECODE_TENSOR_CLASSIFIER];
  matmul(logits, x, classifier, c->vocab_size, dim);
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

static void run_reference(bool half, float* logits, uint32_t* tokens) {
  reference_t r;
  reference_init(&r, &g_config, half);
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
    weft_status_t status = decode_checkpoint_write(
        files[i].path, files[i].format, &g_config, files[i].dtype, SEED);
    if (!weft_status_is_ok(status)) {
      weft_status_fprint(stderr, status);
      weft_status_free(status);
      return -1;
    }
  }
  g_logits_f32 = malloc((size_t)STEPS * g_config.vocab_size * sizeof(float));
  g_logits_f16 = malloc((size_t)STEPS * g_config.vocab_size * sizeof(float));
  if (!g_logits_f32 || !g_logits_f16) return -1;
  run_reference(false, g_logits_f32, g_tokens_f32);
  run_reference(true, g_logits_f16, g_tokens_f16);
  return 0;
}

static int teardown(void** state) {
  (void)state;
  unlink(g_llama2c);
  unlink(g_gguf_f32);
  unlink(g_gguf_f16);
  rmdir(g_dir);
  free(g_logits_f32);
  free(g_logits_f16);
  return 0;
}

//===----------------------------------------------------------------------===//
// Cases
//===----------------------------------------------------------------------===//

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
    const float* expected = expected_logits + (size_t)p * vocab;
    float scale = 0.0f, error = 0.0f;
    uint32_t worst = 0;
    for (uint32_t i = 0; i < vocab; ++i) {
      scale = fmaxf(scale, fabsf(expected[i]));
      const float e = fabsf(logits[i] - expected[i]);
      if (e > error) error = e, worst = i;
    }
    if (error > tolerance * scale) {
      fail_msg("%s on %s, step %u: logit %u is %g, expected %g (error %g > "
               "%g x %g)",
               path, device_string, p, worst, (double)logits[worst],
               (double)expected[worst], (double)error, (double)tolerance,
               (double)scale);
    }
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
      cmocka_unit_test(queued_at_once_same_tokens),
      cmocka_unit_test(bad_prompt_and_context),
      cmocka_unit_test(missing_model_is_not_found),
  };
  return cmocka_run_group_tests_name("decode", tests, setup, teardown);
}
