// The prompt as a batch (decode.h) against the same prompt fed token by
// token (decode_session_set_batch(session, 1)): the logits of the last
// prompt position and the greedy tokens after it, on the tiny and 15M
// shapes, GGUF f32 and q4_k_m (which on these widths mixes Q4_0, Q8_0 and,
// for 15M's ffn_down, Q4_K and Q6_K: both activation forms), f16 on tiny,
// q4_k_m on a 256-wide shape (Q4_K and Q6_K in every matrix), q5_k_m on
// tiny (Q5_1, Q8_0) and on the 256-wide shape (Q5_K, Q6_K), on
// local-sync and local-task with 2 workers; prompts longer than one batch
// (DECODE_BATCH_MAX) on 15M, and batches cut to 16 and 7 positions, so
// batches start after a filled cache.
//
// Tolerance: none. The batch does each position's arithmetic as the
// token's step does it: the same RMSNorm, the same quantization of the
// same normalised floats, each output the same dot product function over
// the same row and the same input (a GEMM tile only orders the
// products differently, never the terms within one), the same rotation,
// and the same attention routine over the same cache rows; the residual
// adds happen in the same order per position. Nothing is summed across
// positions. C11 without GNU extensions keeps GCC from contracting a * b
// + c into fused multiply-adds on its own, so where the kernels are the
// same expressions the results are the same bits, and the test asks for
// that: any difference at all is a batch kernel doing something else.
// setjmp.h, stdarg.h and stddef.h must come before cmocka.h.
// clang-format off
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
// clang-format on

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decode.h"
#include "decode_checkpoint.h"
#include "decode_test_util.h"
#include "weft/weft.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#endif

#define SEED 11u

typedef struct batch_case_t {
  const char* shape;
  decode_dtype_t dtype;
  decode_mix_t mix;
  uint32_t prompt_length;
  uint32_t generated;
  char path[256];
  decode_config_t config;
} batch_case_t;

// Rows of whole 256-element blocks (decode_test.c's kWide), so q4_k_m is
// Q4_K and Q6_K only: the K types' GEMM in every projection.
static const decode_config_t kWide = {256,  512,      4,     4,   2, 8192,
                                      64, 10000.0f, 1e-5f, false};

static char g_dir[] = "/tmp/weft-decode-batch-test-XXXXXX";
static batch_case_t g_cases[] = {
    {.shape = "tiny", .dtype = DECODE_DTYPE_F32, .prompt_length = 40,
     .generated = 16},
    {.shape = "tiny", .dtype = DECODE_DTYPE_Q4_K, .mix = DECODE_MIX_Q4_K_M,
     .prompt_length = 40, .generated = 16},
    {.shape = "tiny", .dtype = DECODE_DTYPE_F16, .prompt_length = 40,
     .generated = 16},
    {.shape = "wide", .dtype = DECODE_DTYPE_Q4_K, .mix = DECODE_MIX_Q4_K_M,
     .prompt_length = 40, .generated = 16},
    // Q5_K_M: on tiny Q5_1 and Q8_0 (four-column products), on the wide
    // shape Q5_K and Q6_K (the one-column product in the GEMM).
    {.shape = "tiny", .dtype = DECODE_DTYPE_Q5_K, .mix = DECODE_MIX_Q5_K_M,
     .prompt_length = 40, .generated = 16},
    {.shape = "wide", .dtype = DECODE_DTYPE_Q5_K, .mix = DECODE_MIX_Q5_K_M,
     .prompt_length = 40, .generated = 16},
#if defined(SANITIZED)
    {.shape = "15M", .dtype = DECODE_DTYPE_F32, .prompt_length = 20,
     .generated = 4},
    {.shape = "15M", .dtype = DECODE_DTYPE_Q4_K, .mix = DECODE_MIX_Q4_K_M,
     .prompt_length = 20, .generated = 4},
#else
    {.shape = "15M", .dtype = DECODE_DTYPE_F32, .prompt_length = 150,
     .generated = 24},
    {.shape = "15M", .dtype = DECODE_DTYPE_Q4_K, .mix = DECODE_MIX_Q4_K_M,
     .prompt_length = 150, .generated = 24},
#endif
};
#define CASES (sizeof(g_cases) / sizeof(g_cases[0]))

static int setup(void** state) {
  (void)state;
  if (!mkdtemp(g_dir)) return -1;
  for (size_t i = 0; i < CASES; ++i) {
    batch_case_t* c = &g_cases[i];
    if (strcmp(c->shape, "wide") == 0) {
      c->config = kWide;
    } else if (!decode_shape_lookup(c->shape, &c->config)) {
      return -1;
    }
    snprintf(c->path, sizeof(c->path), "%s/model_%zu.gguf", g_dir, i);
    if (decode_test_setup_status(decode_checkpoint_write_mix(
            c->path, &c->config, c->dtype, c->mix, SEED)) != 0) {
      return -1;
    }
  }
  return 0;
}

static int teardown(void** state) {
  (void)state;
  for (size_t i = 0; i < CASES; ++i) unlink(g_cases[i].path);
  rmdir(g_dir);
  return 0;
}

// A prompt of |length| ids below |vocab| from a fixed sequence.
static void make_prompt(uint32_t* prompt, uint32_t length, uint32_t vocab) {
  uint64_t state = 0x9E3779B97F4A7C15ull;
  for (uint32_t i = 0; i < length; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    prompt[i] = (uint32_t)(state >> 33) % vocab;
  }
}

// Runs |c|'s prompt with batches of at most |batch| positions, then its
// generated steps: the logits of the last prompt position into
// |out_logits| and every token into |out_tokens|.
static void run(const char* device_string, const batch_case_t* c,
                uint32_t batch, const uint32_t* prompt, float* out_logits,
                uint32_t* out_tokens) {
  decode_test_opened_t opened;
  decode_test_open(device_string, c->path, &opened);
  decode_session_t* session = opened.session;
  decode_test_assert_ok(decode_session_set_batch(session, batch));
  decode_test_assert_ok(
      decode_session_start(session, prompt, c->prompt_length));
  // The prompt, then a wait for its last position's logits.
  decode_test_assert_ok(decode_session_enqueue(session, c->prompt_length));
  decode_test_assert_ok(decode_session_wait(session, c->prompt_length - 1,
                                            weft_timeout_infinite()));
  decode_test_assert_ok(decode_session_read_logits(session, out_logits));
  const uint32_t total = c->prompt_length + c->generated;
  decode_test_assert_ok(decode_session_enqueue(session, c->generated));
  decode_test_assert_ok(
      decode_session_wait(session, total - 1, weft_timeout_infinite()));
  decode_test_assert_ok(
      decode_session_read_tokens(session, 0, total + 1, out_tokens));
  decode_test_close(&opened);
}

static void batch_matches_token_by_token(void** state) {
  const batch_case_t* c = (const batch_case_t*)*state;
  const uint32_t vocab = c->config.vocab_size;
  const uint32_t total = c->prompt_length + c->generated;
  uint32_t* prompt = malloc(c->prompt_length * sizeof(uint32_t));
  float* expected_logits = malloc(vocab * sizeof(float));
  float* logits = malloc(vocab * sizeof(float));
  uint32_t* expected_tokens = malloc((total + 1) * sizeof(uint32_t));
  uint32_t* tokens = malloc((total + 1) * sizeof(uint32_t));
  assert_true(prompt && expected_logits && logits && expected_tokens &&
              tokens);
  make_prompt(prompt, c->prompt_length, vocab);
  run("local-sync", c, 1, prompt, expected_logits, expected_tokens);
  assert_memory_equal(expected_tokens, prompt,
                      c->prompt_length * sizeof(uint32_t));
  const char* const devices[] = {"local-sync", "local-task?workers=2"};
  const uint32_t batches[] = {DECODE_BATCH_MAX, 16, 7};
  for (size_t d = 0; d < 2; ++d) {
    for (size_t b = 0; b < 3; ++b) {
      run(devices[d], c, batches[b], prompt, logits, tokens);
      for (uint32_t i = 0; i < vocab; ++i) {
        if (logits[i] != expected_logits[i]) {
          fail_msg("%s %s on %s, batches of %u: logit %u of the last prompt "
                   "position is %.9g, token by token %.9g",
                   c->shape, decode_dtype_name(c->dtype), devices[d],
                   batches[b], i, (double)logits[i],
                   (double)expected_logits[i]);
        }
      }
      for (uint32_t i = 0; i <= total; ++i) {
        if (tokens[i] != expected_tokens[i]) {
          fail_msg("%s %s on %s, batches of %u: token %u is %u, token by "
                   "token %u",
                   c->shape, decode_dtype_name(c->dtype), devices[d],
                   batches[b], i, tokens[i], expected_tokens[i]);
        }
      }
    }
  }
  free(prompt);
  free(expected_logits);
  free(logits);
  free(expected_tokens);
  free(tokens);
}

// decode_session_set_batch's bounds.
static void batch_limit_bounds(void** state) {
  (void)state;
  decode_test_opened_t opened;
  decode_test_open("local-sync", g_cases[0].path, &opened);
  weft_status_t status = decode_session_set_batch(opened.session, 0);
  assert_int_equal(weft_status_code(status), WEFT_STATUS_INVALID_ARGUMENT);
  weft_status_free(status);
  // Larger than the capacity: cut to it (the tiny shape's context of 64).
  decode_test_assert_ok(decode_session_set_batch(opened.session, 100000));
  assert_int_equal(decode_session_batch_capacity(opened.session),
                   g_cases[0].config.seq_len);
  decode_test_close(&opened);
}

// A context longer than attention's scratch holds: refused by the session,
// naming both lengths.
static void session_refuses_long_context(void** state) {
  (void)state;
  decode_config_t config;
  assert_true(decode_shape_lookup("tiny", &config));
  config.seq_len = DECODE_MAX_CONTEXT + 1;
  char path[128];
  snprintf(path, sizeof(path), "%s/long.gguf", g_dir);
  decode_test_assert_ok(decode_checkpoint_write(path, DECODE_FORMAT_GGUF,
                                                &config, DECODE_DTYPE_F32, 7));
  weft_allocator_t allocator = weft_allocator_system();
  weft_device_t* device = NULL;
  decode_test_assert_ok(weft_device_create("local-sync", allocator, &device));
  decode_model_t* model = NULL;
  decode_test_assert_ok(
      decode_model_load(device, path, NULL, allocator, &model));
  decode_session_t* session = NULL;
  weft_status_t status = decode_session_create(model, allocator, &session);
  char text[512];
  weft_status_format(status, text, sizeof(text));
  assert_int_equal(weft_status_code(status), WEFT_STATUS_INVALID_ARGUMENT);
  weft_status_free(status);
  assert_null(session);
  char expected[64];
  snprintf(expected, sizeof(expected),
           "at most %u positions (the model has %u)", DECODE_MAX_CONTEXT,
           DECODE_MAX_CONTEXT + 1);
  if (!strstr(text, expected)) fail_msg("unexpected message: %s", text);
  decode_model_release(model);
  weft_device_release(device);
  unlink(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_prestate(batch_matches_token_by_token, &g_cases[0]),
      cmocka_unit_test_prestate(batch_matches_token_by_token, &g_cases[1]),
      cmocka_unit_test_prestate(batch_matches_token_by_token, &g_cases[2]),
      cmocka_unit_test_prestate(batch_matches_token_by_token, &g_cases[3]),
      cmocka_unit_test_prestate(batch_matches_token_by_token, &g_cases[4]),
      cmocka_unit_test_prestate(batch_matches_token_by_token, &g_cases[5]),
      cmocka_unit_test_prestate(batch_matches_token_by_token, &g_cases[6]),
      cmocka_unit_test_prestate(batch_matches_token_by_token, &g_cases[7]),
      cmocka_unit_test(batch_limit_bounds),
      cmocka_unit_test(session_refuses_long_context),
  };
  return cmocka_run_group_tests_name("decode.batch", tests, setup, teardown);
}
