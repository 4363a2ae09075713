// Test support for the decode example's tests: a status asserted OK (its
// message the failure's), reproducible random numbers, a model opened on
// a device with a session, in one call each way, and a text's words as a
// pre-tokenizer splits them.
#ifndef WEFT_TESTS_DECODE_DECODE_TEST_UTIL_H_
#define WEFT_TESTS_DECODE_DECODE_TEST_UTIL_H_

// setjmp.h, stdarg.h and stddef.h must come before cmocka.h.
// clang-format off
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
// clang-format on

#include <stdint.h>
#include <stdio.h>

#include "weft/status.h"

// xorshift64*: the next of a test's random numbers from |state|
// (nonzero).
static inline uint64_t decode_test_random(uint64_t* state) {
  *state ^= *state >> 12;
  *state ^= *state << 25;
  *state ^= *state >> 27;
  return *state * 0x2545F4914F6CDD1Dull;
}
// A float in [low, high) from |state|'s next number (24 bits of it).
static inline float decode_test_uniform(uint64_t* state, float low,
                                        float high) {
  return low + (high - low) * (float)(decode_test_random(state) >> 40) /
                   16777216.0f;
}

// Fails the test with |status|'s message unless it is OK; consumes it.
static inline void decode_test_assert_ok(weft_status_t status) {
  if (!weft_status_is_ok(status)) {
    char text[1024];
    weft_status_format(status, text, sizeof(text));
    weft_status_free(status);
    fail_msg("%s", text);
  }
}

// For a group setup: 0 where |status| is OK; else prints it to stderr and
// returns -1 (the setup failed). Consumes |status|.
static inline int decode_test_setup_status(weft_status_t status) {
  if (weft_status_is_ok(status)) return 0;
  weft_status_fprint(stderr, status);
  weft_status_free(status);
  return -1;
}

#ifdef WEFT_EXAMPLES_DECODE_DECODE_H_
// A device of |device_string|, the model at |path| loaded on it, and a
// session over it.
typedef struct decode_test_opened_t {
  weft_device_t* device;
  decode_model_t* model;
  decode_session_t* session;
} decode_test_opened_t;

static inline void decode_test_open(const char* device_string, const char* path,
                                    decode_test_opened_t* out) {
  weft_allocator_t allocator = weft_allocator_system();
  decode_test_assert_ok(
      weft_device_create(device_string, allocator, &out->device));
  decode_test_assert_ok(
      decode_model_load(out->device, path, NULL, allocator, &out->model));
  decode_test_assert_ok(
      decode_session_create(out->model, allocator, &out->session));
}

static inline void decode_test_close(decode_test_opened_t* opened) {
  decode_session_release(opened->session);
  decode_model_release(opened->model);
  weft_device_release(opened->device);
}
#endif  // WEFT_EXAMPLES_DECODE_DECODE_H_

#ifdef WEFT_EXAMPLES_DECODE_DECODE_TOKENIZER_H_
#include <string.h>

// |text| splits into the NULL-terminated |expected| words as |pre| does
// (decode_pretokenizer_word, word after word); no text has no word.
static inline void decode_test_expect_words(decode_pretokenizer_t pre,
                                            const char* text,
                                            const char* const* expected) {
  const size_t length = strlen(text);
  size_t at = 0;
  size_t n = 0;
  for (; at < length; ++n) {
    const size_t word = decode_pretokenizer_word(pre, text + at, length - at);
    assert_true(word >= 1 && word <= length - at);
    if (!expected[n] || strlen(expected[n]) != word ||
        memcmp(expected[n], text + at, word) != 0) {
      fail_msg("'%s' (pre %d): word %zu is '%.*s', expected '%s'", text,
               (int)pre, n, (int)word, text + at,
               expected[n] ? expected[n] : "(no more)");
    }
    at += word;
  }
  if (expected[n]) {
    fail_msg("'%s' (pre %d): %zu words, expected word '%s' too", text, (int)pre,
             n, expected[n]);
  }
  assert_int_equal(decode_pretokenizer_word(pre, text, 0), 0);
}

// |text| encodes (no BOS) to the |expected_count| ids |expected|; fails
// listing the ids it got otherwise.
static inline void decode_test_expect_ids(const decode_tokenizer_t* tokenizer,
                                          const char* text,
                                          const uint32_t* expected,
                                          size_t expected_count) {
  uint32_t ids[64];
  size_t count = 0;
  decode_test_assert_ok(decode_tokenizer_encode(tokenizer, text, strlen(text),
                                                false, ids, 64, &count));
  if (count != expected_count ||
      memcmp(ids, expected, count * sizeof(uint32_t)) != 0) {
    char got[1024];
    size_t used = 0;
    for (size_t i = 0; i < count && used < sizeof(got) - 16; ++i) {
      used += (size_t)snprintf(got + used, sizeof(got) - used, " %u", ids[i]);
    }
    got[used] = '\0';
    fail_msg("'%s' encoded as [%s ] (%zu ids, %zu expected)", text, got, count,
             expected_count);
  }
}

// The words for decode_test_expect_words.
#define DECODE_TEST_WORDS(...) ((const char* const[]){__VA_ARGS__, NULL})
#endif  // WEFT_EXAMPLES_DECODE_DECODE_TOKENIZER_H_

#endif  // WEFT_TESTS_DECODE_DECODE_TEST_UTIL_H_
