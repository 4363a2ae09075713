// The decode example's sampling (examples/decode/decode_sampling.h):
//  - the SAMPLE kernel called directly over a fixed logit vector of 8
//    entries, once per seed for 40000 seeds: the share of each token
//    matches softmax(logits / T) restricted to the top k, then to the
//    nucleus of top_p, renormalized; tokens outside never come. Each
//    count is binomial: its share has standard deviation
//    sqrt(p (1 - p) / N) <= 0.0025 at N = 40000, and each is allowed 5 of
//    those (a good generator misses that about once in 1.7 million cells;
//    the seeds are fixed, so a pass is a pass every run);
//  - temperature 0 and top_k 1 are argmax exactly (ties: the first);
//  - the decoder on the tiny shape: one seed gives the same tokens twice
//    (and on 1 and 2 workers), temperature 0 and top_k 1 the greedy ones,
//    another seed other tokens.
#include "decode_sampling.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decode.h"
#include "decode_checkpoint.h"
#include "decode_test_util.h"
#include "weft/weft.h"

static uint32_t float_bits(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof(bits));
  return bits;
}

#define VOCAB 8u
#define WIDE 1000u  // a vocabulary past the kernel's first nucleus of 64

// Runs SAMPLE once at |position| and returns the token.
static uint32_t sample(const float* logits, uint32_t vocab,
                       const decode_sampling_t* sampling, uint32_t position) {
  const weft_kernel_def_t* kernel =
      &decode_sampling_library()->kernels[DECODE_SAMPLING_KERNEL_SAMPLE];
  uint32_t history[64] = {0};
  uint32_t token = UINT32_MAX;
  static uint8_t scratch[WIDE * DECODE_SAMPLING_SCRATCH_PER_TOKEN];
  const uint32_t constants[6] = {vocab,
                                 float_bits(sampling->temperature),
                                 sampling->top_k,
                                 float_bits(sampling->top_p),
                                 (uint32_t)sampling->seed,
                                 (uint32_t)(sampling->seed >> 32)};
  void* const pointers[4] = {(void*)logits, history, &token, scratch};
  const size_t lengths[4] = {vocab * 4u, (position + 1u) * 4u, 4,
                             vocab * DECODE_SAMPLING_SCRATCH_PER_TOKEN};
  const weft_dispatch_state_t dispatch = {{1, 1, 1}, {1, 1, 1}, 6, constants, 4,
                                          pointers,  lengths};
  const weft_workgroup_state_t workgroup = {{0, 0, 0}, 0, NULL, 0};
  assert_int_equal(kernel->fn(&dispatch, &workgroup), 0);
  assert_true(token < vocab);
  return token;
}

static const float* g_order_logits;

static int order_compare(const void* a, const void* b) {
  const uint32_t i = *(const uint32_t*)a, j = *(const uint32_t*)b;
  const float x = g_order_logits[i], y = g_order_logits[j];
  if (x != y) return x > y ? -1 : 1;
  return i < j ? -1 : i > j ? 1 : 0;
}

// softmax(logits / T) over the top k (by logit, then index), then the
// nucleus (the fewest, largest first, reaching top_p), renormalized. In
// double from each logit's difference to the largest, as the kernel
// computes them.
static void expected_shares(const float* logits, uint32_t vocab,
                            const decode_sampling_t* s, double* out) {
  uint32_t order[WIDE];
  for (uint32_t i = 0; i < vocab; ++i) order[i] = i;
  g_order_logits = logits;
  qsort(order, vocab, sizeof(order[0]), order_compare);
  uint32_t n = s->top_k > 0 && s->top_k < vocab ? s->top_k : vocab;
  double weights[WIDE];
  double total = 0.0;
  for (uint32_t i = 0; i < n; ++i) {
    weights[i] =
        exp((double)(logits[order[i]] - logits[order[0]]) / s->temperature);
    total += weights[i];
  }
  if (s->top_p < 1.0f) {
    double kept = 0.0;
    uint32_t i = 0;
    while (i < n) {
      kept += weights[i++];
      if (kept >= s->top_p * total) break;
    }
    n = i;
    total = kept;
  }
  for (uint32_t i = 0; i < vocab; ++i) out[i] = 0.0;
  for (uint32_t i = 0; i < n; ++i) out[order[i]] = weights[i] / total;
}

static const float kLogits[VOCAB] = {1.0f, 2.5f, -0.5f, 2.0f,
                                     0.0f, 2.5f, 1.5f,  -3.0f};

// Logits in [-3, 3) from a hash of the index.
static float g_wide[WIDE];

static void check_distribution(const float* logits, uint32_t vocab,
                               float temperature, uint32_t top_k, float top_p) {
  enum { kDraws = 40000 };
  const decode_sampling_t base = {temperature, top_k, top_p, 0};
  static double expected[WIDE];
  static uint32_t counts[WIDE];
  expected_shares(logits, vocab, &base, expected);
  memset(counts, 0, sizeof(counts));
  for (uint32_t seed = 0; seed < kDraws; ++seed) {
    decode_sampling_t s = base;
    s.seed = 0x5EED0000ull + seed * 0x100000001ull;
    ++counts[sample(logits, vocab, &s, 17)];
  }
  for (uint32_t i = 0; i < vocab; ++i) {
    const double share = (double)counts[i] / kDraws;
    const double p = expected[i];
    const double sigma = sqrt(p * (1.0 - p) / kDraws);
    if (p == 0.0 ? counts[i] != 0 : fabs(share - p) > 5.0 * sigma) {
      fail_msg(
          "vocab %u, T %g, top_k %u, top_p %g: token %u drawn %.4f of "
          "the time, expected %.4f (5 sigma: %.4f)",
          vocab, temperature, top_k, top_p, i, share, p, 5.0 * sigma);
    }
  }
}

static void sample_distribution(void** state) {
  (void)state;
  check_distribution(kLogits, VOCAB, 1.0f, 0, 1.0f);
  check_distribution(kLogits, VOCAB, 0.7f, 0, 1.0f);
  check_distribution(kLogits, VOCAB, 2.0f, 0, 1.0f);
  check_distribution(kLogits, VOCAB, 1.0f, 3, 1.0f);  // 1, 5 (tied), 3
  check_distribution(kLogits, VOCAB, 1.0f, 0, 0.5f);  // nucleus: 1 and 5
  check_distribution(kLogits, VOCAB, 1.5f, 5, 0.9f);
  // Past 64 candidates: a nucleus within the kernel's first 64, one that
  // needs its next step (512), one of nearly everything, and a top k.
  for (uint32_t i = 0; i < WIDE; ++i) {
    g_wide[i] = (float)(6.0 * decode_sampling_uniform(99, i) - 3.0);
  }
  check_distribution(g_wide, WIDE, 0.25f, 0, 0.5f);
  check_distribution(g_wide, WIDE, 0.5f, 0, 0.9f);
  check_distribution(g_wide, WIDE, 2.0f, 0, 0.99f);
  check_distribution(g_wide, WIDE, 1.0f, 100, 0.8f);
}

static void sample_greedy_cases(void** state) {
  (void)state;
  // Tokens 1 and 5 tie for the largest: argmax takes the first, 1.
  for (uint64_t seed = 0; seed < 100; ++seed) {
    const decode_sampling_t cold = {0.0f, 0, 1.0f, seed};
    assert_int_equal(sample(kLogits, VOCAB, &cold, (uint32_t)seed), 1);
    const decode_sampling_t one = {1.0f, 1, 1.0f, seed};
    assert_int_equal(sample(kLogits, VOCAB, &one, (uint32_t)seed), 1);
  }
  // The same seed and position: the same draw; the uniform number is in
  // [0, 1) and moves with the position.
  const decode_sampling_t warm = {1.0f, 0, 1.0f, 42};
  assert_int_equal(sample(kLogits, VOCAB, &warm, 5),
                   sample(kLogits, VOCAB, &warm, 5));
  assert_true(decode_sampling_uniform(42, 5) != decode_sampling_uniform(42, 6));
  for (uint32_t p = 0; p < 1000; ++p) {
    const double u = decode_sampling_uniform(p * 7919ull, p);
    assert_true(u >= 0.0 && u < 1.0);
  }
}

//===----------------------------------------------------------------------===//
// In the decoder
//===----------------------------------------------------------------------===//

static char g_dir[] = "/tmp/weft-sampling-test-XXXXXX";
static char g_model[256];

static int setup(void** state) {
  (void)state;
  if (!mkdtemp(g_dir)) return -1;
  snprintf(g_model, sizeof(g_model), "%s/tiny.gguf", g_dir);
  decode_config_t config;
  if (!decode_shape_lookup("tiny", &config)) return -1;
  weft_status_t status = decode_checkpoint_write(g_model, DECODE_FORMAT_GGUF,
                                                 &config, DECODE_DTYPE_F32, 3);
  const bool ok = weft_status_is_ok(status);
  weft_status_free(status);
  return ok ? 0 : -1;
}

static int teardown(void** state) {
  (void)state;
  unlink(g_model);
  return rmdir(g_dir);
}

#define STEPS 24u

// Decodes STEPS tokens after a three-token prompt with |sampling| (NULL:
// the default, greedy) into |out_tokens|.
static void decode_with(const char* device_string,
                        const decode_sampling_t* sampling,
                        uint32_t* out_tokens) {
  decode_test_opened_t opened;
  decode_test_open(device_string, g_model, &opened);
  decode_session_t* session = opened.session;
  if (sampling)
    decode_test_assert_ok(decode_session_set_sampling(session, sampling));
  const uint32_t prompt[] = {1, 300, 301};
  decode_test_assert_ok(decode_session_start(session, prompt, 3));
  decode_test_assert_ok(decode_session_enqueue(session, 2 + STEPS));
  decode_test_assert_ok(
      decode_session_wait(session, 1 + STEPS, weft_timeout_infinite()));
  decode_test_assert_ok(
      decode_session_read_tokens(session, 3, STEPS, out_tokens));
  decode_test_close(&opened);
}

static void decoder_seeds(void** state) {
  (void)state;
  uint32_t greedy[STEPS], a[STEPS], b[STEPS], c[STEPS];
  decode_with("local-sync", NULL, greedy);
  const decode_sampling_t cold = {0.0f, 40, 0.9f, 5};
  decode_with("local-sync", &cold, a);
  assert_memory_equal(a, greedy, sizeof(a));
  const decode_sampling_t one = {0.8f, 1, 1.0f, 5};
  decode_with("local-task?workers=2", &one, a);
  assert_memory_equal(a, greedy, sizeof(a));
  // Hot enough that the random weights' flat logits give other tokens.
  const decode_sampling_t hot = {1.5f, 0, 1.0f, 5};
  decode_with("local-sync", &hot, a);
  decode_with("local-task?workers=2", &hot, b);
  assert_memory_equal(a, b, sizeof(a));
  const decode_sampling_t other = {1.5f, 0, 1.0f, 6};
  decode_with("local-task?workers=1", &other, c);
  assert_memory_not_equal(a, c, sizeof(a));
  assert_memory_not_equal(a, greedy, sizeof(a));
  // top_k and top_p with a seed: still the same twice.
  const decode_sampling_t nucleus = {1.0f, 20, 0.8f, 9};
  decode_with("local-sync", &nucleus, a);
  decode_with("local-task?workers=2", &nucleus, b);
  assert_memory_equal(a, b, sizeof(a));
}

static void decoder_bad_sampling(void** state) {
  (void)state;
  decode_test_opened_t opened;
  decode_test_open("local-sync", g_model, &opened);
  const decode_sampling_t bad[] = {
      {-1.0f, 0, 1.0f, 0}, {1.0f, 0, 0.0f, 0}, {1.0f, 0, 1.5f, 0}};
  for (size_t i = 0; i < 3; ++i) {
    weft_status_t status = decode_session_set_sampling(opened.session, &bad[i]);
    assert_int_equal(weft_status_code(status), WEFT_STATUS_INVALID_ARGUMENT);
    weft_status_free(status);
  }
  decode_test_close(&opened);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(sample_distribution),
      cmocka_unit_test(sample_greedy_cases),
      cmocka_unit_test(decoder_seeds),
      cmocka_unit_test(decoder_bad_sampling),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
