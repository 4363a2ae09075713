// The decode example's tokenizers (examples/decode/decode_tokenizer.h),
// each loaded from a GGUF file written here:
//  - the synthetic SentencePiece vocabulary weft-decode-gen writes (in a
//    tiny model's file too): text through encode and decode comes back
//    byte for byte (ASCII, accents, CJK, emoji, leading and repeated
//    spaces, invalid UTF-8), with and without BOS, and decoded a token at
//    a time no character is cut (the bytes held until it is whole);
//  - small vocabularies built here, whose encodings are worked out by
//    hand from the algorithms below, for "llama" (score-ranked merges,
//    byte fallback, the unknown token, no space in front) and "gpt2"
//    (ranked merges, words by Unicode class, GPT-2's byte characters,
//    unknown bytes), and random texts of theirs merged the plain way
//    (every pair rescanned each round) against the tokenizer's heap;
//  - the words "gpt2" splits text into by tokenizer.ggml.pre: GPT-2's
//    pattern (no key, "gpt2", "default") and Llama 3's ("llama-bpe",
//    "llama3", "llama-v3"), worked out by hand from the regular
//    expressions and, for Llama 3's, against the expression stated
//    plainly on random texts; the key's effect on encoding, any bytes
//    through a llama-bpe tokenizer and back, and an unknown value refused;
//  - bad metadata, each an error naming the key.
#include "decode_tokenizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decode_checkpoint.h"
#include "decode_gguf.h"
#include "decode_test_util.h"

#define SPACE "\xE2\x96\x81"  // "▁"
#define G "\xC4\xA0"          // "Ġ", GPT-2's space

static char g_dir[64];

static void temp_path(const char* name, char* out, size_t capacity) {
  snprintf(out, capacity, "%s/%s", g_dir, name);
}

static int setup(void** state) {
  (void)state;
  snprintf(g_dir, sizeof(g_dir), "/tmp/weft_tokenizer_XXXXXX");
  return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void** state) {
  (void)state;
  char command[128];
  snprintf(command, sizeof(command), "rm -rf '%s'", g_dir);
  return system(command) == 0 ? 0 : -1;
}

// Asserts |status| is |code| with |needle| in its message.
static void assert_error(weft_status_t status, weft_status_code_t code,
                         const char* needle) {
  char text[1024];
  weft_status_format(status, text, sizeof(text));
  const weft_status_code_t got = weft_status_code(status);
  weft_status_free(status);
  if (got != code || !strstr(text, needle)) {
    fail_msg("expected code %d with '%s', got: %s", (int)code, needle, text);
  }
}

// Writes |vocab| as a GGUF of its own and loads it back.
static decode_tokenizer_t* load_vocab(const decode_vocab_t* vocab,
                                      const char* name) {
  char path[128];
  temp_path(name, path, sizeof(path));
  decode_test_assert_ok(decode_gguf_write_vocab(path, vocab));
  decode_tokenizer_t* tokenizer = NULL;
  decode_test_assert_ok(decode_tokenizer_load(path, &tokenizer));
  return tokenizer;
}

// Loading the vocabulary's file fails with |code| naming |needle|.
static void expect_load_error(const decode_vocab_t* vocab,
                              weft_status_code_t code, const char* needle) {
  char path[128];
  temp_path("bad.gguf", path, sizeof(path));
  decode_test_assert_ok(decode_gguf_write_vocab(path, vocab));
  decode_tokenizer_t* tokenizer = NULL;
  assert_error(decode_tokenizer_load(path, &tokenizer), code, needle);
  assert_null(tokenizer);
}

static size_t encode(const decode_tokenizer_t* tokenizer, const char* text,
                     bool add_bos, uint32_t* ids, size_t capacity) {
  size_t count = 0;
  decode_test_assert_ok(decode_tokenizer_encode(
      tokenizer, text, strlen(text), add_bos, ids, capacity, &count));
  return count;
}

// Decodes |count| ids a token at a time into |out| with a stream of
// |flags|, checking (with |whole|: a text with no continuation byte that
// follows no lead) that what comes out at each step is whole UTF-8
// characters while the text is.
static size_t decode_ids_with(const decode_tokenizer_t* tokenizer,
                              const uint32_t* ids, size_t count, bool whole,
                              uint32_t flags, char* out) {
  decode_text_stream_t stream;
  decode_text_stream_initialize(&stream, flags);
  char* piece = (char*)malloc(decode_tokenizer_max_token_bytes(tokenizer));
  assert_non_null(piece);
  size_t length = 0;
  for (size_t i = 0; i < count; ++i) {
    const size_t n = decode_text_stream_next(tokenizer, &stream, ids[i], piece);
    // Never a continuation byte first: a character is never cut.
    if (n > 0 && whole) assert_true(((uint8_t)piece[0] & 0xC0) != 0x80);
    memcpy(out + length, piece, n);
    length += n;
  }
  length += decode_text_stream_flush(&stream, out + length);
  out[length] = '\0';
  free(piece);
  return length;
}

// |length| bytes of |text| (any, NULs too) through encode and decode come
// back unchanged, with and without BOS (|whole|: as decode_ids).
static void expect_round_trip_bytes(const decode_tokenizer_t* tokenizer,
                                    const char* text, size_t length,
                                    bool whole) {
  for (int bos = 0; bos < 2; ++bos) {
    const size_t capacity = decode_tokenizer_max_ids(length);
    uint32_t* ids = (uint32_t*)malloc(capacity * sizeof(uint32_t));
    char* back = (char*)malloc(length * 4 + 64);
    assert_non_null(ids);
    assert_non_null(back);
    size_t count = 0;
    decode_test_assert_ok(decode_tokenizer_encode(tokenizer, text, length, bos,
                                                  ids, capacity, &count));
    const size_t back_length = decode_ids_with(
        tokenizer, ids, count, whole, DECODE_TEXT_AT_START, back);
    if (back_length != length || memcmp(back, text, length) != 0) {
      char hex[256];
      size_t used = 0;
      for (size_t i = 0; i < length && used + 4 < sizeof(hex); ++i) {
        used += (size_t)snprintf(hex + used, sizeof(hex) - used, " %02X",
                                 (uint8_t)text[i]);
      }
      hex[used] = '\0';
      fail_msg("[%s ] (%zu bytes) came back as %zu bytes '%s'", hex, length,
               back_length, back);
    }
    free(ids);
    free(back);
  }
}

static void expect_round_trip(const decode_tokenizer_t* tokenizer,
                              const char* text) {
  expect_round_trip_bytes(tokenizer, text, strlen(text), true);
}

static const char* const kTexts[] = {
    "Once upon a time there was a little girl named Lily.",
    "She said: \"Hello, world!\" 42 times; the end?",
    "caf\xC3\xA9 na\xC3\xAFve \xC3\xBC\xC3\xB1\xC3\xAE\xC3\xA7\xC3\xB8"
    "d\xC3\xA9",
    "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E \xED\x95\x9C\xEA\xB5\xAD\xEC\x96\xB4",
    "I \xE2\x9D\xA4 \xF0\x9F\xA6\x80 and \xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD!",
    "  two leading spaces,   three inside, one after ",
    "tabs\tand\nnewlines\r\n",
    "bad \xFF\xFE utf-8 \xC3 cut \xE2\x82",
    "x",
    "",
};

//===----------------------------------------------------------------------===//
// The synthetic vocabulary (weft-decode-gen's)
//===----------------------------------------------------------------------===//

static void test_synthetic_round_trips(void** state) {
  (void)state;
  const uint32_t sizes[] = {DECODE_VOCAB_SYNTHETIC_MIN, 512, 32000};
  for (size_t s = 0; s < 3; ++s) {
    decode_vocab_t vocab;
    decode_test_assert_ok(decode_vocab_synthetic(sizes[s], &vocab));
    assert_int_equal(vocab.count, sizes[s]);
    decode_tokenizer_t* tokenizer = load_vocab(&vocab, "synthetic.gguf");
    decode_vocab_deinitialize(&vocab);
    assert_int_equal(decode_tokenizer_count(tokenizer), sizes[s]);
    for (size_t t = 0; t < sizeof(kTexts) / sizeof(kTexts[0]); ++t) {
      expect_round_trip(tokenizer, kTexts[t]);
    }
    // BOS first when asked.
    uint32_t ids[64];
    const size_t without = encode(tokenizer, "a", false, ids, 64);
    assert_int_equal(encode(tokenizer, "a", true, ids, 64), without + 1);
    assert_int_equal(ids[0], 1);
    decode_tokenizer_free(tokenizer);
  }
}

// In the 512-token vocabulary the story's words are whole pieces: "▁Once"
// is reached by merging "▁O" + "n", "▁On" + "c", "▁Onc" + "e" (each the
// best-scoring pair there is, prefixes coming first); an emoji, no piece,
// is its four byte tokens (ids 3 + byte).
static void test_synthetic_pieces(void** state) {
  (void)state;
  decode_vocab_t vocab;
  decode_test_assert_ok(decode_vocab_synthetic(512, &vocab));
  decode_tokenizer_t* tokenizer = load_vocab(&vocab, "synthetic512.gguf");
  decode_vocab_deinitialize(&vocab);
  uint32_t ids[64];
  const size_t count = encode(tokenizer, "Once upon a time", false, ids, 64);
  assert_int_equal(count, 4);
  assert_string_equal(decode_tokenizer_token(tokenizer, ids[0]), SPACE "Once");
  assert_string_equal(decode_tokenizer_token(tokenizer, ids[1]), SPACE "upon");
  assert_string_equal(decode_tokenizer_token(tokenizer, ids[2]), SPACE "a");
  assert_string_equal(decode_tokenizer_token(tokenizer, ids[3]), SPACE "time");
  const uint32_t crab[] = {3 + 0xF0, 3 + 0x9F, 3 + 0xA6, 3 + 0x80};
  assert_int_equal(encode(tokenizer, "\xF0\x9F\xA6\x80", false, ids, 64), 5);
  assert_string_equal(decode_tokenizer_token(tokenizer, ids[0]), SPACE);
  assert_memory_equal(ids + 1, crab, sizeof(crab));
  // Decoded a token at a time, the crab comes out whole with its last
  // byte, and an unfinished one at the flush.
  decode_text_stream_t stream;
  decode_text_stream_initialize(&stream, 0);
  char out[64];
  for (int i = 0; i < 3; ++i) {
    assert_int_equal(decode_text_stream_next(tokenizer, &stream, crab[i], out),
                     0);
  }
  assert_int_equal(decode_text_stream_next(tokenizer, &stream, crab[3], out),
                   4);
  assert_memory_equal(out, "\xF0\x9F\xA6\x80", 4);
  assert_int_equal(decode_text_stream_next(tokenizer, &stream, crab[0], out),
                   0);
  assert_int_equal(decode_text_stream_flush(&stream, out), 1);
  assert_int_equal((uint8_t)out[0], 0xF0);
  // The ids past the vocabulary decode to nothing; BOS and EOS too.
  assert_int_equal(decode_text_stream_next(tokenizer, &stream, 512, out), 0);
  assert_int_equal(decode_text_stream_next(tokenizer, &stream, 1, out), 0);
  assert_int_equal(decode_text_stream_next(tokenizer, &stream, 2, out), 0);
  decode_tokenizer_free(tokenizer);
}

// Decodes |length| bytes given as byte tokens (ids 3 + byte in the
// synthetic vocabulary) a token at a time with DECODE_TEXT_VALID_UTF8,
// then flushes; the text into |out|, its length returned.
static size_t decode_bytes_valid(const decode_tokenizer_t* tokenizer,
                                 const uint8_t* bytes, size_t length,
                                 char* out) {
  uint32_t ids[16];
  assert_true(length <= sizeof(ids) / sizeof(ids[0]));
  for (size_t i = 0; i < length; ++i) ids[i] = 3u + bytes[i];
  return decode_ids_with(tokenizer, ids, length, /*whole=*/false,
                         DECODE_TEXT_VALID_UTF8, out);
}

// True when [text, text + length) is well-formed UTF-8, checked by code
// point (not by the stream's byte table): each sequence decodes to a
// scalar value in its shortest form.
static bool is_valid_utf8(const uint8_t* text, size_t length) {
  for (size_t at = 0; at < length;) {
    const uint8_t lead = text[at];
    const size_t n = lead < 0x80 ? 1 : (lead >> 5) == 6 ? 2
                                     : (lead >> 4) == 14 ? 3
                                     : (lead >> 3) == 30 ? 4
                                                         : 0;
    if (n == 0 || at + n > length) return false;
    uint32_t code_point = n == 1 ? lead : lead & (0x7Fu >> n);
    for (size_t i = 1; i < n; ++i) {
      if ((text[at + i] & 0xC0) != 0x80) return false;
      code_point = code_point << 6 | (text[at + i] & 0x3Fu);
    }
    const uint32_t shortest = n == 1 ? 0 : n == 2 ? 0x80 : n == 3 ? 0x800
                                                                  : 0x10000;
    if (code_point < shortest || code_point > 0x10FFFF ||
        (code_point >= 0xD800 && code_point <= 0xDFFF)) {
      return false;
    }
    at += n;
  }
  return true;
}

// For a terminal, bytes that are no character come out as U+FFFD (one per
// stray byte, one per start cut short, Unicode's "maximal subpart"
// practice), and whole characters as they are, however the tokens cut
// them; any byte sequence then comes out as valid UTF-8.
#define R "\xEF\xBF\xBD"  // U+FFFD
static void test_text_stream_valid_utf8(void** state) {
  (void)state;
  decode_vocab_t vocab;
  decode_test_assert_ok(decode_vocab_synthetic(512, &vocab));
  decode_tokenizer_t* tokenizer = load_vocab(&vocab, "synthetic512.gguf");
  decode_vocab_deinitialize(&vocab);
  static const struct {
    const char* bytes;
    const char* expected;
  } kCases[] = {
      {"\xC3\xA9", "\xC3\xA9"},                   // é whole
      {"\xF0\x9F\xA6\x80", "\xF0\x9F\xA6\x80"},   // the crab whole
      {"\xF0\x41", R "A"},                        // a start cut by 'A'
      {"\xFF", R},                                // never a lead
      {"\x80", R},                                // a stray continuation
      {"\xC0\xAF", R R},                          // overlong '/': C0 leads none
      {"\xE0\x80\x80", R R R},                    // overlong: E0 needs A0-BF
      {"\xED\xA0\x80", R R R},                    // a surrogate: ED needs 80-9F
      {"\xF4\x90\x80\x80", R R R R},              // past U+10FFFF
      {"\xE2\x82", R},                            // the text ends inside €
      {"\xE2\x82\xAC\xE2", "\xE2\x82\xAC" R},     // € then a start at the end
      {"\xC3\xC3\xA9", R "\xC3\xA9"},             // a start cut by a start
  };
  char out[64];
  for (size_t i = 0; i < sizeof(kCases) / sizeof(kCases[0]); ++i) {
    const size_t n = decode_bytes_valid(
        tokenizer, (const uint8_t*)kCases[i].bytes, strlen(kCases[i].bytes),
        out);
    if (n != strlen(kCases[i].expected) ||
        memcmp(out, kCases[i].expected, n) != 0) {
      fail_msg("case %zu decoded to %zu bytes, not the %zu expected", i, n,
               strlen(kCases[i].expected));
    }
  }
  // Any bytes: valid UTF-8 out, and where they were valid, the same bytes.
  uint64_t random = 0x9E3779B97F4A7C15ull;
  uint8_t bytes[16];
  char text[16 * 3 + 8];
  for (int round = 0; round < 20000; ++round) {
    const size_t length = (size_t)(round % 16) + 1;
    for (size_t i = 0; i < length; ++i) {
      random = random * 6364136223846793005ull + 1442695040888963407ull;
      // Mostly bytes at or above 0x80, where the cases are.
      bytes[i] = (uint8_t)((random >> 56) | (round & 1 ? 0x80 : 0));
    }
    const size_t n = decode_bytes_valid(tokenizer, bytes, length, text);
    assert_true(is_valid_utf8((const uint8_t*)text, n));
    if (is_valid_utf8(bytes, length)) {
      assert_int_equal(n, length);
      assert_memory_equal(text, bytes, length);
    }
  }
  decode_tokenizer_free(tokenizer);
}
#undef R

// A generated model carries the vocabulary of its size.
static void test_generated_model(void** state) {
  (void)state;
  char path[128];
  temp_path("tiny.gguf", path, sizeof(path));
  decode_config_t config;
  assert_true(decode_shape_lookup("tiny", &config));
  decode_test_assert_ok(decode_checkpoint_write(path, DECODE_FORMAT_GGUF,
                                                &config, DECODE_DTYPE_F32, 1));
  decode_tokenizer_t* tokenizer = NULL;
  decode_test_assert_ok(decode_tokenizer_load(path, &tokenizer));
  assert_int_equal(decode_tokenizer_count(tokenizer), config.vocab_size);
  assert_int_equal(decode_tokenizer_kind(tokenizer), DECODE_TOKENIZER_SPM);
  assert_int_equal(decode_tokenizer_bos(tokenizer), 1);
  assert_int_equal(decode_tokenizer_eos(tokenizer), 2);
  assert_true(decode_tokenizer_adds_bos(tokenizer));
  expect_round_trip(tokenizer, kTexts[4]);
  decode_tokenizer_free(tokenizer);
}

//===----------------------------------------------------------------------===//
// "llama", by hand
//===----------------------------------------------------------------------===//

// <unk> <s> </s>, the byte tokens (|bytes|: ids 3..258), then pieces.
typedef struct piece_t {
  const char* text;
  float score;
} piece_t;

static const piece_t kSpmPieces[] = {
    {SPACE, -10}, {"a", -10}, {"b", -10}, {"c", -10},      {"x", -10},
    {"y", -10},   {"ab", -3}, {"bc", -1}, {SPACE "a", -2}, {SPACE "ab", -4},
    {"abc", -5},  {"xy", -7}, {"yx", -7}, {"aa", -6},
};
#define SPM_PIECES (sizeof(kSpmPieces) / sizeof(kSpmPieces[0]))

static void spm_vocab(bool bytes, decode_vocab_t* vocab) {
  memset(vocab, 0, sizeof(*vocab));
  const uint32_t count = 3 + (bytes ? 256 : 0) + SPM_PIECES;
  vocab->kind = DECODE_TOKENIZER_SPM;
  vocab->count = count;
  vocab->tokens = (char**)calloc(count, sizeof(char*));
  vocab->scores = (float*)calloc(count, sizeof(float));
  vocab->types = (int32_t*)calloc(count, sizeof(int32_t));
  vocab->unknown = 0;
  vocab->bos = 1;
  vocab->eos = 2;
  vocab->add_bos = true;
  uint32_t n = 0;
  const char* const specials[3] = {"<unk>", "<s>", "</s>"};
  const int32_t special_types[3] = {DECODE_TOKEN_UNKNOWN, DECODE_TOKEN_CONTROL,
                                    DECODE_TOKEN_CONTROL};
  for (int i = 0; i < 3; ++i, ++n) {
    vocab->tokens[n] = strdup(specials[i]);
    vocab->types[n] = special_types[i];
  }
  for (int b = 0; bytes && b < 256; ++b, ++n) {
    char text[8];
    snprintf(text, sizeof(text), "<0x%02X>", b);
    vocab->tokens[n] = strdup(text);
    vocab->types[n] = DECODE_TOKEN_BYTE;
  }
  for (size_t i = 0; i < SPM_PIECES; ++i, ++n) {
    vocab->tokens[n] = strdup(kSpmPieces[i].text);
    vocab->scores[n] = kSpmPieces[i].score;
    vocab->types[n] = DECODE_TOKEN_NORMAL;
  }
}

// The id of piece |text| in a vocabulary with (|bytes|) the byte tokens.
static uint32_t spm_id(bool bytes, const char* text) {
  for (size_t i = 0; i < SPM_PIECES; ++i) {
    if (strcmp(kSpmPieces[i].text, text) == 0) {
      return (uint32_t)(3 + (bytes ? 256 : 0) + i);
    }
  }
  fail_msg("no piece '%s'", text);
  return 0;
}

// Worked out from the algorithm: "▁" in front, characters as symbols,
// then the pair whose concatenation is the best-scoring piece merges
// (the leftmost of equal scores) until no pair is a piece.
//  "abc"  -> ▁ a b c: pairs ▁a (-2), ab (-3), bc (-1): bc wins
//         -> ▁ a bc: ▁a (-2), abc (-5): ▁a wins -> ▁a bc: "▁abc" is no
//            piece -> [▁a, bc] (a longest-match tokenizer would say
//            [▁ab, c]).
//  "ab"   -> ▁ a b: ▁a (-2) beats ab (-3) -> ▁a b -> ▁ab (-4) -> [▁ab].
//  "a b"  -> ▁ a ▁ b: only ▁a is a piece -> ▁a ▁ b: "▁a▁" and "▁b" are
//            none -> [▁a, ▁, b].
//  "aa"   -> ▁ a a: ▁a (-2) beats aa (-6) -> ▁a a: "▁aa" is none
//            -> [▁a, a].
//  "xyx"  -> ▁ x y x: xy (-7) and yx (-7) tie: the leftmost, xy
//         -> ▁ xy x: "▁xy" and "xyx" are none -> [▁, xy, x].
//  "é"    -> ▁ é: "▁é" is no piece, and é is none: its bytes C3 A9 as
//            byte tokens 3 + 0xC3, 3 + 0xA9 -> [▁, <0xC3>, <0xA9>]; with
//            no byte tokens, the unknown token for the character
//            -> [▁, <unk>].
static void test_spm_by_hand(void** state) {
  (void)state;
  decode_vocab_t vocab;
  spm_vocab(true, &vocab);
  decode_tokenizer_t* tokenizer = load_vocab(&vocab, "spm.gguf");
  decode_vocab_deinitialize(&vocab);
  const bool b = true;
  {
    const uint32_t expected[] = {spm_id(b, SPACE "a"), spm_id(b, "bc")};
    decode_test_expect_ids(tokenizer, "abc", expected, 2);
  }
  {
    const uint32_t expected[] = {spm_id(b, SPACE "ab")};
    decode_test_expect_ids(tokenizer, "ab", expected, 1);
  }
  {
    const uint32_t expected[] = {spm_id(b, SPACE "a"), spm_id(b, SPACE),
                                 spm_id(b, "b")};
    decode_test_expect_ids(tokenizer, "a b", expected, 3);
  }
  {
    const uint32_t expected[] = {spm_id(b, SPACE "a"), spm_id(b, "a")};
    decode_test_expect_ids(tokenizer, "aa", expected, 2);
  }
  {
    const uint32_t expected[] = {spm_id(b, SPACE), spm_id(b, "xy"),
                                 spm_id(b, "x")};
    decode_test_expect_ids(tokenizer, "xyx", expected, 3);
  }
  {
    const uint32_t expected[] = {spm_id(b, SPACE), 3 + 0xC3, 3 + 0xA9};
    decode_test_expect_ids(tokenizer, "\xC3\xA9", expected, 3);
  }
  expect_round_trip(tokenizer, "abc a b \xC3\xA9 xyx");
  decode_tokenizer_free(tokenizer);

  // Without the space in front (tokenizer.ggml.add_space_prefix false):
  //  "abc" -> a b c: ab (-3), bc (-1): bc wins -> a bc: "abc" (-5)
  //        -> [abc];
  //  " ab" -> ▁ a b: ▁a (-2) -> ▁a b -> ▁ab (-4) -> [▁ab], which decodes
  //           with its space kept: " ab".
  spm_vocab(true, &vocab);
  vocab.no_space_prefix = true;
  tokenizer = load_vocab(&vocab, "spm_noprefix.gguf");
  decode_vocab_deinitialize(&vocab);
  {
    const uint32_t expected[] = {spm_id(b, "abc")};
    decode_test_expect_ids(tokenizer, "abc", expected, 1);
  }
  {
    const uint32_t expected[] = {spm_id(b, SPACE "ab")};
    decode_test_expect_ids(tokenizer, " ab", expected, 1);
  }
  expect_round_trip(tokenizer, " ab abc  \xC3\xA9 ");
  decode_tokenizer_free(tokenizer);

  spm_vocab(false, &vocab);
  tokenizer = load_vocab(&vocab, "spm_nobytes.gguf");
  decode_vocab_deinitialize(&vocab);
  {
    const uint32_t expected[] = {spm_id(false, SPACE), 0};
    decode_test_expect_ids(tokenizer, "\xC3\xA9", expected, 2);
  }
  decode_tokenizer_free(tokenizer);
}

//===----------------------------------------------------------------------===//
// "gpt2", by hand
//===----------------------------------------------------------------------===//

// GPT-2's characters for the bytes: a few worked out from its rule (the
// printable bytes '!'..'~', 0xA1..0xAC, 0xAE..0xFF are themselves, the
// others U+0100 onwards in order: 0x00 is U+0100, the space, 0x20, the
// 33rd of them, U+0120 "Ġ", 0x7F U+0121, 0xAD U+0143).
static void test_gpt2_bytes(void** state) {
  (void)state;
  const struct {
    uint8_t byte;
    const char* text;
  } kCases[] = {{'a', "a"},         {'!', "!"},         {0x00, "\xC4\x80"},
                {0x20, G},          {0x7F, "\xC4\xA1"}, {0xA1, "\xC2\xA1"},
                {0xAD, "\xC5\x83"}, {0xFF, "\xC3\xBF"}};
  for (size_t i = 0; i < sizeof(kCases) / sizeof(kCases[0]); ++i) {
    char text[3];
    decode_gpt2_byte_text(kCases[i].byte, text);
    assert_string_equal(text, kCases[i].text);
  }
}

// Tokens 0..255: the bytes' characters, in byte order (|only_ascii|:
// just the printable ASCII ones, then <unk>); then the merged tokens.
// ("\xC3\xB0" is 'ð', byte 0xF0's character; "\xC3\x83" 'Ã', 0xC3's.)
#define BPE_MERGES 8
static const char* const kBpeMerges[BPE_MERGES] = {
    "h e",  G " t",  G "t he",     "l l",
    "e ll", "h ell", "a \xC3\xB0", "a \xC3\x83"};
static const char* const kBpeMerged[BPE_MERGES] = {
    "he", G "t", G "the", "ll", "ell", "hell", "a\xC3\xB0", "a\xC3\x83"};

static void bpe_vocab(bool only_ascii, decode_vocab_t* vocab) {
  memset(vocab, 0, sizeof(*vocab));
  vocab->kind = DECODE_TOKENIZER_BPE;
  vocab->tokens = (char**)calloc(256 + 1 + BPE_MERGES, sizeof(char*));
  vocab->bos = vocab->eos = vocab->unknown = -1;
  uint32_t n = 0;
  for (int b = 0; b < 256; ++b) {
    if (only_ascii && !(b >= 0x21 && b <= 0x7E) && b != 0x20) continue;
    char text[4];
    decode_gpt2_byte_text((uint8_t)b, text);
    vocab->tokens[n++] = strdup(text);
  }
  if (only_ascii) {
    vocab->unknown = n;
    vocab->tokens[n++] = strdup("<unk>");
  }
  for (int i = 0; i < BPE_MERGES; ++i) {
    vocab->tokens[n++] = strdup(kBpeMerged[i]);
  }
  vocab->count = n;
  // The last two merges' halves are not ASCII.
  vocab->merge_count = only_ascii ? BPE_MERGES - 2 : BPE_MERGES;
  vocab->merges = (char**)calloc(BPE_MERGES, sizeof(char*));
  for (uint32_t i = 0; i < vocab->merge_count; ++i) {
    vocab->merges[i] = strdup(kBpeMerges[i]);
  }
}

// Worked out from the algorithm: words first (GPT-2's pattern), each
// word's bytes as GPT-2's characters, then the pair with the lowest merge
// rank merges until none has one. Ids: a byte's character is the byte;
// the merged tokens 256 (he), 257 (Ġt), 258 (Ġthe), 259 (ll), 260 (ell),
// 261 (hell), 262 (að), 263 (aÃ).
//  "the"     -> t h e: "h e" (rank 0) -> t he: "t he" is no merge
//               -> [t, he] = [116, 256].
//  " the"    -> one word, Ġ t h e: "h e" (0) beats "Ġ t" (1) -> Ġ t he
//            -> "Ġ t" (1) -> Ġt he -> "Ġt he" (2) -> [Ġthe] = [258].
//  "hello"   -> h e l l o: "h e" (0) -> he l l o: "l l" (3) -> he ll o:
//               "he ll" is no merge, so "hell" (via "h ell", rank 5) is
//               never made -> [he, ll, o] = [256, 259, 111].
//  "don't"   -> words "don" and "'t": no merges -> [100, 111, 110, 39,
//               116].
//  "a  b"    -> words "a", " " (the run of spaces but its last), " b"
//               -> [97, 32, 32, 98].
//  "é"       -> bytes C3 A9, characters U+00C3 and U+00A9 (printable:
//               themselves) -> [0xC3, 0xA9]; in the ASCII vocabulary
//               neither byte has a token: [<unk>, <unk>].
//  "aé"      -> one word (é is a letter): a Ã © -> "a Ã" (7) -> [aÃ, ©]
//               = [263, 0xA9].
//  "a🦀"     -> two words (an emoji is a symbol, not a letter): "a" and
//               the crab, F0 9F A6 80 as ð Ł ¦ Ģ: "a ð" (6) never meets
//               -> [97, 0xF0, 0x9F, 0xA6, 0x80].
static void test_bpe_by_hand(void** state) {
  (void)state;
  decode_vocab_t vocab;
  bpe_vocab(false, &vocab);
  decode_tokenizer_t* tokenizer = load_vocab(&vocab, "bpe.gguf");
  decode_vocab_deinitialize(&vocab);
  assert_int_equal(decode_tokenizer_kind(tokenizer), DECODE_TOKENIZER_BPE);
  {
    const uint32_t expected[] = {116, 256};
    decode_test_expect_ids(tokenizer, "the", expected, 2);
  }
  {
    const uint32_t expected[] = {258};
    decode_test_expect_ids(tokenizer, " the", expected, 1);
  }
  {
    const uint32_t expected[] = {256, 259, 111};
    decode_test_expect_ids(tokenizer, "hello", expected, 3);
  }
  {
    const uint32_t expected[] = {100, 111, 110, 39, 116};
    decode_test_expect_ids(tokenizer, "don't", expected, 5);
  }
  {
    const uint32_t expected[] = {97, 32, 32, 98};
    decode_test_expect_ids(tokenizer, "a  b", expected, 4);
  }
  {
    const uint32_t expected[] = {0xC3, 0xA9};
    decode_test_expect_ids(tokenizer, "\xC3\xA9", expected, 2);
  }
  {
    const uint32_t expected[] = {263, 0xA9};
    decode_test_expect_ids(tokenizer, "a\xC3\xA9", expected, 2);
  }
  {
    const uint32_t expected[] = {97, 0xF0, 0x9F, 0xA6, 0x80};
    decode_test_expect_ids(tokenizer, "a\xF0\x9F\xA6\x80", expected, 5);
  }
  for (size_t t = 0; t < sizeof(kTexts) / sizeof(kTexts[0]); ++t) {
    expect_round_trip(tokenizer, kTexts[t]);
  }
  decode_tokenizer_free(tokenizer);

  bpe_vocab(true, &vocab);
  const uint32_t unknown = (uint32_t)vocab.unknown;
  tokenizer = load_vocab(&vocab, "bpe_ascii.gguf");
  decode_vocab_deinitialize(&vocab);
  {
    const uint32_t expected[] = {unknown, unknown};
    decode_test_expect_ids(tokenizer, "\xC3\xA9", expected, 2);
  }
  decode_tokenizer_free(tokenizer);
}

//===----------------------------------------------------------------------===//
// Against the plain algorithm
//===----------------------------------------------------------------------===//

// The merge loop as the algorithms state it, over strings: rescan every
// adjacent pair, merge the best (|rank_of| highest, the leftmost of
// equals), until none ranks. The tokenizer keeps its pairs in a heap
// instead; on any text the two must agree.
typedef bool (*rank_fn_t)(const char* left, const char* right,
                          double* out_rank);

static size_t plain_merge(char symbols[][64], size_t count, rank_fn_t rank_of) {
  for (;;) {
    size_t best = count;
    double best_rank = 0.0;
    for (size_t i = 0; i + 1 < count; ++i) {
      double rank = 0.0;
      if (rank_of(symbols[i], symbols[i + 1], &rank) &&
          (best == count || rank > best_rank)) {
        best = i;
        best_rank = rank;
      }
    }
    if (best == count) return count;
    const size_t left = strlen(symbols[best]);
    memcpy(symbols[best] + left, symbols[best + 1],
           strlen(symbols[best + 1]) + 1);
    memmove(symbols[best + 1], symbols[best + 2],
            (count - best - 2) * sizeof(symbols[0]));
    --count;
  }
}

static bool spm_rank(const char* left, const char* right, double* out_rank) {
  char joined[128];
  snprintf(joined, sizeof(joined), "%s%s", left, right);
  for (size_t i = 0; i < SPM_PIECES; ++i) {
    if (strcmp(kSpmPieces[i].text, joined) == 0) {
      *out_rank = kSpmPieces[i].score;
      return true;
    }
  }
  return false;
}

static bool bpe_rank(const char* left, const char* right, double* out_rank) {
  char merge[128];
  snprintf(merge, sizeof(merge), "%s %s", left, right);
  for (int i = 0; i < BPE_MERGES; ++i) {
    if (strcmp(kBpeMerges[i], merge) == 0) {
      *out_rank = -i;
      return true;
    }
  }
  return false;
}

// 2000 random texts of the small vocabularies' letters (and, for llama,
// spaces), encoded by the tokenizer and merged plainly: the same tokens.
static void test_against_plain_merging(void** state) {
  (void)state;
  decode_vocab_t vocab;
  spm_vocab(true, &vocab);
  decode_tokenizer_t* spm = load_vocab(&vocab, "spm_plain.gguf");
  decode_vocab_deinitialize(&vocab);
  bpe_vocab(false, &vocab);
  decode_tokenizer_t* bpe = load_vocab(&vocab, "bpe_plain.gguf");
  decode_vocab_deinitialize(&vocab);
  uint64_t state_bits = 12345;
  static char symbols[64][64];
  for (int round = 0; round < 2000; ++round) {
    const bool is_spm = round % 2 == 0;
    const char* alphabet = is_spm ? "abcxy " : "helota";
    char text[32];
    state_bits = state_bits * 6364136223846793005ull + 1442695040888963407ull;
    const size_t length = 1 + (size_t)(state_bits >> 60);  // 1 to 16
    for (size_t i = 0; i < length; ++i) {
      state_bits = state_bits * 6364136223846793005ull + 1442695040888963407ull;
      text[i] = alphabet[(state_bits >> 33) % strlen(alphabet)];
    }
    text[length] = '\0';
    // The plain way: "▁" in front and for spaces (llama); one word of
    // letters, one symbol a letter (gpt2).
    size_t count = 0;
    if (is_spm) snprintf(symbols[count++], 64, SPACE);
    for (size_t i = 0; i < length; ++i, ++count) {
      if (text[i] == ' ') {
        snprintf(symbols[count], 64, SPACE);
      } else {
        symbols[count][0] = text[i];
        symbols[count][1] = '\0';
      }
    }
    count = plain_merge(symbols, count, is_spm ? spm_rank : bpe_rank);
    uint32_t ids[64];
    const size_t got = encode(is_spm ? spm : bpe, text, false, ids, 64);
    assert_int_equal(got, count);
    for (size_t i = 0; i < count; ++i) {
      const char* token = decode_tokenizer_token(is_spm ? spm : bpe, ids[i]);
      if (strcmp(token, symbols[i]) != 0) {
        fail_msg("'%s': token %zu is '%s', merged plainly '%s'", text, i, token,
                 symbols[i]);
      }
    }
  }
  decode_tokenizer_free(spm);
  decode_tokenizer_free(bpe);
}

//===----------------------------------------------------------------------===//
// Bad metadata
//===----------------------------------------------------------------------===//

static void test_bad_metadata(void** state) {
  (void)state;
  decode_vocab_t vocab;
  // A special id past the vocabulary, an unknown type, a byte token
  // that names no byte.
  spm_vocab(true, &vocab);
  char path[128];
  vocab.bos = vocab.count;
  expect_load_error(&vocab, WEFT_STATUS_INVALID_ARGUMENT,
                    "tokenizer.ggml.bos_token_id");
  vocab.bos = 1;
  vocab.types[5] = 9;
  expect_load_error(&vocab, WEFT_STATUS_INVALID_ARGUMENT,
                    "tokenizer.ggml.token_type[5]");
  vocab.types[5] = DECODE_TOKEN_BYTE;
  free(vocab.tokens[5]);
  vocab.tokens[5] = strdup("<0xZZ>");
  expect_load_error(&vocab, WEFT_STATUS_INVALID_ARGUMENT,
                    "tokenizer.ggml.tokens[5]");
  decode_vocab_deinitialize(&vocab);

  bpe_vocab(false, &vocab);
  free(vocab.merges[3]);
  vocab.merges[3] = strdup("l q");  // "lq" is no token
  expect_load_error(&vocab, WEFT_STATUS_INVALID_ARGUMENT,
                    "tokenizer.ggml.merges[3]");
  free(vocab.merges[3]);
  vocab.merges[3] = strdup("ll");  // no space
  expect_load_error(&vocab, WEFT_STATUS_INVALID_ARGUMENT,
                    "tokenizer.ggml.merges[3]");
  // A gpt2 vocabulary without merges.
  for (uint32_t i = 0; i < vocab.merge_count; ++i) free(vocab.merges[i]);
  vocab.merge_count = 0;
  expect_load_error(&vocab, WEFT_STATUS_INVALID_ARGUMENT,
                    "no key tokenizer.ggml.merges");
  decode_vocab_deinitialize(&vocab);

  // No tokens at all; no tokenizer at all.
  memset(&vocab, 0, sizeof(vocab));
  vocab.bos = vocab.eos = vocab.unknown = -1;
  expect_load_error(&vocab, WEFT_STATUS_INVALID_ARGUMENT,
                    "tokenizer.ggml.tokens is empty");
  decode_config_t config;
  assert_true(decode_shape_lookup("tiny", &config));
  config.vocab_size = 16;  // too small for a vocabulary: none written
  temp_path("no_tokenizer.gguf", path, sizeof(path));
  decode_test_assert_ok(decode_checkpoint_write(path, DECODE_FORMAT_GGUF,
                                                &config, DECODE_DTYPE_F32, 1));
  decode_tokenizer_t* tokenizer = NULL;
  assert_error(decode_tokenizer_load(path, &tokenizer), WEFT_STATUS_NOT_FOUND,
               "no key tokenizer.ggml.model");
}

// Values of the wrong shape, in files written byte by byte: scores one
// short of the tokens, tokens that are not strings, an unknown model.
static void raw_u32(FILE* file, uint32_t value) { fwrite(&value, 4, 1, file); }
static void raw_u64(FILE* file, uint64_t value) { fwrite(&value, 8, 1, file); }
static void raw_string(FILE* file, const char* text) {
  raw_u64(file, strlen(text));
  fwrite(text, 1, strlen(text), file);
}

// A file of: model |model|, |token_count| tokens "t0".. (as u32s when
// |tokens_as_numbers|), |score_count| scores.
static void write_raw(const char* path, const char* model, uint32_t token_count,
                      bool tokens_as_numbers, uint32_t score_count) {
  FILE* file = fopen(path, "wb");
  assert_non_null(file);
  fwrite("GGUF", 1, 4, file);
  raw_u32(file, 3);
  raw_u64(file, 0);
  raw_u64(file, 3);
  raw_string(file, "tokenizer.ggml.model");
  raw_u32(file, DECODE_GGUF_STRING);
  raw_string(file, model);
  raw_string(file, "tokenizer.ggml.tokens");
  raw_u32(file, DECODE_GGUF_ARRAY);
  raw_u32(file, tokens_as_numbers ? DECODE_GGUF_UINT32 : DECODE_GGUF_STRING);
  raw_u64(file, token_count);
  for (uint32_t i = 0; i < token_count; ++i) {
    char text[16];
    snprintf(text, sizeof(text), "t%u", i);
    if (tokens_as_numbers) {
      raw_u32(file, i);
    } else {
      raw_string(file, text);
    }
  }
  raw_string(file, "tokenizer.ggml.scores");
  raw_u32(file, DECODE_GGUF_ARRAY);
  raw_u32(file, DECODE_GGUF_FLOAT32);
  raw_u64(file, score_count);
  for (uint32_t i = 0; i < score_count; ++i) {
    const float score = -(float)i;
    fwrite(&score, 4, 1, file);
  }
  assert_int_equal(fclose(file), 0);
}

static void test_bad_values(void** state) {
  (void)state;
  char path[128];
  temp_path("raw.gguf", path, sizeof(path));
  decode_tokenizer_t* tokenizer = NULL;
  write_raw(path, "llama", 8, false, 8);
  decode_test_assert_ok(decode_tokenizer_load(path, &tokenizer));
  decode_tokenizer_free(tokenizer);
  write_raw(path, "llama", 8, false, 7);
  assert_error(decode_tokenizer_load(path, &tokenizer),
               WEFT_STATUS_INVALID_ARGUMENT, "tokenizer.ggml.scores");
  write_raw(path, "llama", 8, true, 8);
  assert_error(decode_tokenizer_load(path, &tokenizer),
               WEFT_STATUS_INVALID_ARGUMENT,
               "tokenizer.ggml.tokens is not an array of strings");
  write_raw(path, "bert", 8, false, 8);
  assert_error(decode_tokenizer_load(path, &tokenizer),
               WEFT_STATUS_INVALID_ARGUMENT, "tokenizer.ggml.model is 'bert'");
  // Cut inside the tokens: named as truncated.
  write_raw(path, "llama", 8, false, 8);
  assert_int_equal(truncate(path, 130), 0);
  assert_error(decode_tokenizer_load(path, &tokenizer),
               WEFT_STATUS_OUT_OF_RANGE, "tokenizer.ggml.tokens");
  assert_null(tokenizer);
  // The model's key alone: the tokens are missing.
  FILE* file = fopen(path, "wb");
  assert_non_null(file);
  fwrite("GGUF", 1, 4, file);
  raw_u32(file, 3);
  raw_u64(file, 0);
  raw_u64(file, 1);
  raw_string(file, "tokenizer.ggml.model");
  raw_u32(file, DECODE_GGUF_STRING);
  raw_string(file, "llama");
  assert_int_equal(fclose(file), 0);
  assert_error(decode_tokenizer_load(path, &tokenizer),
               WEFT_STATUS_INVALID_ARGUMENT, "no key tokenizer.ggml.tokens");
}

//===----------------------------------------------------------------------===//
// Words: tokenizer.ggml.pre
//===----------------------------------------------------------------------===//

// Llama 3's pattern, its alternatives in order (the first that matches
// at a place wins, as long as it can):
//   A (?i:'s|'t|'re|'ve|'m|'ll|'d)   B [^\r\n\p{L}\p{N}]?\p{L}+
//   C \p{N}{1,3}                     D  ?[^\s\p{L}\p{N}]+[\r\n]*
//   E \s*[\r\n]+                     F \s+(?!\S)       G \s+
//  "Hello world"   B "Hello"; at " world" B takes the space (no line
//                  break, letter or number) and the letters.
//  "I'M here"      B "I"; A "'M" (any case); B " here".
//  "don't"         B "don"; A "'t".
//  "12345 apples"  C "123", C "45" (three at most); B " apples".
//  "a,b"           B "a"; at ",b" B takes the comma before the letter.
//  "x!!\n\ny"      B "x"; at "!!": B fails (no letter after the first
//                  "!"), C fails, D "!!" and the line breaks after.
//  "  two  spaces" at the first space B fails (a space follows), D and E
//                  fail (no symbol, no line break), F "  " backs off to
//                  " " (the next is a space, not \S); B " two"; the same
//                  again: " ", " spaces".
//  "tab\tthen"     B "tab"; B "\tthen" (a tab is neither line break,
//                  letter nor number).
//  "end  "         B "end"; F "  " (nothing after it).
//  "über 3.14"     B "über" (ü a letter); at " 3" B, C, D (a digit is
//                  no symbol), E fail, F fails (one space, then \S), G
//                  " "; C "3"; D "."; C "14".
//  "\n\nhi"        E "\n\n" (\s* backs off until [\r\n]+ can end it); B
//                  "hi".
//  "a  \n b"       B "a"; E "  \n" (up to the run's last line break); B
//                  " b".
//  "(x) 'Ll's"     B "(x"; D ")"; at " 'Ll": D " '" (a space, a symbol;
//                  the "'" is not first, so not A); B "Ll"; A "'s".
//  " 7"            B, C, D, E, F fail at the space: G " "; C "7".
static void test_llama3_words(void** state) {
  (void)state;
  const decode_pretokenizer_t p = DECODE_PRETOKENIZER_LLAMA3;
  decode_test_expect_words(p, "Hello world",
                           DECODE_TEST_WORDS("Hello", " world"));
  decode_test_expect_words(p, "I'M here",
                           DECODE_TEST_WORDS("I", "'M", " here"));
  decode_test_expect_words(p, "don't", DECODE_TEST_WORDS("don", "'t"));
  decode_test_expect_words(p, "12345 apples",
                           DECODE_TEST_WORDS("123", "45", " apples"));
  decode_test_expect_words(p, "a,b", DECODE_TEST_WORDS("a", ",b"));
  decode_test_expect_words(p, "x!!\n\ny",
                           DECODE_TEST_WORDS("x", "!!\n\n", "y"));
  decode_test_expect_words(p, "  two  spaces",
                           DECODE_TEST_WORDS(" ", " two", " ", " spaces"));
  decode_test_expect_words(p, "tab\tthen", DECODE_TEST_WORDS("tab", "\tthen"));
  decode_test_expect_words(p, "end  ", DECODE_TEST_WORDS("end", "  "));
  decode_test_expect_words(p,
                           "\xC3\xBC"
                           "ber 3.14",
                           DECODE_TEST_WORDS("\xC3\xBC"
                                             "ber",
                                             " ", "3", ".", "14"));
  decode_test_expect_words(p, "\n\nhi", DECODE_TEST_WORDS("\n\n", "hi"));
  decode_test_expect_words(p, "a  \n b", DECODE_TEST_WORDS("a", "  \n", " b"));
  decode_test_expect_words(p, "(x) 'Ll's",
                           DECODE_TEST_WORDS("(x", ")", " '", "Ll", "'s"));
  decode_test_expect_words(p, " 7", DECODE_TEST_WORDS(" ", "7"));
}

// GPT-2's pattern (unchanged), on the same texts where it differs:
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|
//   \s+(?!\S)|\s+
//  contractions in lower case only ("'" then "M"), numbers of any length
//  with a space before, a symbol never with letters, line breaks apart
//  from symbols, a tab never with letters.
static void test_gpt2_words(void** state) {
  (void)state;
  const decode_pretokenizer_t p = DECODE_PRETOKENIZER_GPT2;
  decode_test_expect_words(p, "Hello world",
                           DECODE_TEST_WORDS("Hello", " world"));
  decode_test_expect_words(p, "I'M here",
                           DECODE_TEST_WORDS("I", "'", "M", " here"));
  decode_test_expect_words(p, "don't", DECODE_TEST_WORDS("don", "'t"));
  decode_test_expect_words(p, "12345 apples",
                           DECODE_TEST_WORDS("12345", " apples"));
  decode_test_expect_words(p, "a,b", DECODE_TEST_WORDS("a", ",", "b"));
  decode_test_expect_words(p, "x!!\n\ny",
                           DECODE_TEST_WORDS("x", "!!", "\n", "\n", "y"));
  decode_test_expect_words(p, "  two  spaces",
                           DECODE_TEST_WORDS(" ", " two", " ", " spaces"));
  decode_test_expect_words(p, "tab\tthen",
                           DECODE_TEST_WORDS("tab", "\t", "then"));
  decode_test_expect_words(p, "end  ", DECODE_TEST_WORDS("end", "  "));
  decode_test_expect_words(p,
                           "\xC3\xBC"
                           "ber 3.14",
                           DECODE_TEST_WORDS("\xC3\xBC"
                                             "ber",
                                             " 3", ".", "14"));
  decode_test_expect_words(p, " 7", DECODE_TEST_WORDS(" 7"));
}

// Llama 3's pattern stated plainly: at each place, the first alternative
// that matches some of the text there, taking the longest text it
// matches whole (for these alternatives what the regular expression's
// greedy, backtracking match takes), over code points of a small
// alphabet whose classes (general categories) are written here.
enum { PL_LETTER, PL_NUMBER, PL_SPACE, PL_OTHER };
static const struct {
  uint32_t code_point;
  int class_;
} kPlainAlphabet[] = {
    {'a', PL_LETTER},    {'Z', PL_LETTER},  {0xFC, PL_LETTER},  // ü
    {'s', PL_LETTER},    {'L', PL_LETTER},  {'e', PL_LETTER},
    {0x17F, PL_LETTER},                      // ſ (Ll), which (?i: folds to s
    {0x30FC, PL_LETTER},                     // ー (Lm)
    {'3', PL_NUMBER},    {0xB2, PL_NUMBER},  // ² (No)
    {0xE51, PL_NUMBER},                      // ๑ (Nd, Thai)
    {' ', PL_SPACE},     {'\t', PL_SPACE},  {'\n', PL_SPACE},
    {'\r', PL_SPACE},    {0xA0, PL_SPACE},  // no-break (Zs)
    {0x2028, PL_SPACE},  // line separator (Zl): \s, not [\r\n]
    {'\'', PL_OTHER},    {'.', PL_OTHER},   {'!', PL_OTHER},
    {0x2014, PL_OTHER},   // — (Pd)
    {0x1F600, PL_OTHER},  // 😀 (So)
    {0x93C, PL_OTHER},    // Devanagari nukta (Mn)
    {0x200B, PL_OTHER},   // zero width space (Cf)
};
#define PLAIN_ALPHABET (sizeof(kPlainAlphabet) / sizeof(kPlainAlphabet[0]))

// Whether code points [i, j) of |text| (alphabet indices, |n| of them)
// are one whole match of alternative |alt| (0..6, A..G above).
static bool plain_full_match(const int* text, size_t n, int alt, size_t i,
                             size_t j) {
#define CP(k) kPlainAlphabet[text[k]].code_point
#define CLASS(k) kPlainAlphabet[text[k]].class_
#define BREAK(k) (CP(k) == '\r' || CP(k) == '\n')
  const size_t length = j - i;
  size_t k = i;
  switch (alt) {
    case 0: {  // (?i:'s|'t|'re|'ve|'m|'ll|'d)
      if (CP(i) != '\'' || length < 2 || length > 3) return false;
      char lower[3] = {0, 0, 0};
      for (size_t m = 1; m < length; ++m) {
        const uint32_t c = CP(i + m);
        // Unicode's simple case folding of these letters: ASCII's, and
        // ſ to s.
        lower[m - 1] = (char)(c >= 'A' && c <= 'Z' ? c + 32
                              : c == 0x17F         ? 's'
                              : c < 128            ? c
                                                   : '#');
      }
      static const char* const kSuffixes[] = {"s", "t",  "re", "ve",
                                              "m", "ll", "d"};
      for (int s = 0; s < 7; ++s) {
        if (strcmp(lower, kSuffixes[s]) == 0) return true;
      }
      return false;
    }
    case 1:  // [^\r\n\p{L}\p{N}]?\p{L}+
      if (CLASS(k) != PL_LETTER && CLASS(k) != PL_NUMBER && !BREAK(k)) ++k;
      if (k == j) return false;
      for (; k < j; ++k) {
        if (CLASS(k) != PL_LETTER) return false;
      }
      return true;
    case 2:  // \p{N}{1,3}
      if (length > 3) return false;
      for (; k < j; ++k) {
        if (CLASS(k) != PL_NUMBER) return false;
      }
      return true;
    case 3: {  //  ?[^\s\p{L}\p{N}]+[\r\n]*
      if (CP(k) == ' ') ++k;
      const size_t symbols = k;
      while (k < j && CLASS(k) == PL_OTHER) ++k;
      if (k == symbols) return false;
      for (; k < j; ++k) {
        if (!BREAK(k)) return false;
      }
      return true;
    }
    default:  // \s*[\r\n]+, \s+(?!\S), \s+
      for (; k < j; ++k) {
        if (CLASS(k) != PL_SPACE) return false;
      }
      if (alt == 4) return BREAK(j - 1);
      if (alt == 5) return j == n || CLASS(j) == PL_SPACE;
      return true;
  }
#undef CP
#undef CLASS
#undef BREAK
}

static size_t plain_utf8(uint32_t c, char* out) {
  if (c < 0x80) {
    out[0] = (char)c;
    return 1;
  }
  if (c < 0x800) {
    out[0] = (char)(0xC0 | (c >> 6));
    out[1] = (char)(0x80 | (c & 0x3F));
    return 2;
  }
  if (c < 0x10000) {
    out[0] = (char)(0xE0 | (c >> 12));
    out[1] = (char)(0x80 | ((c >> 6) & 0x3F));
    out[2] = (char)(0x80 | (c & 0x3F));
    return 3;
  }
  out[0] = (char)(0xF0 | (c >> 18));
  out[1] = (char)(0x80 | ((c >> 12) & 0x3F));
  out[2] = (char)(0x80 | ((c >> 6) & 0x3F));
  out[3] = (char)(0x80 | (c & 0x3F));
  return 4;
}

// 5000 random texts of the alphabet (up to 20 code points): the
// tokenizer's words are the plain statement's, word for word.
static void test_llama3_against_plain_pattern(void** state) {
  (void)state;
  uint64_t bits = 2024;
  for (int round = 0; round < 5000; ++round) {
    int text[20];
    bits = bits * 6364136223846793005ull + 1442695040888963407ull;
    const size_t n = 1 + (size_t)((bits >> 33) % 20);
    // Utf-8 and where each code point starts (starts[n]: the end).
    char utf8[20 * 4 + 1];
    size_t starts[21];
    size_t bytes = 0;
    for (size_t i = 0; i < n; ++i) {
      bits = bits * 6364136223846793005ull + 1442695040888963407ull;
      text[i] = (int)((bits >> 33) % PLAIN_ALPHABET);
      starts[i] = bytes;
      bytes += plain_utf8(kPlainAlphabet[text[i]].code_point, utf8 + bytes);
    }
    starts[n] = bytes;
    utf8[bytes] = '\0';
    size_t i = 0;
    while (i < n) {
      size_t end = 0;
      for (int alt = 0; alt < 7 && end == 0; ++alt) {
        for (size_t j = n; j > i && end == 0; --j) {
          if (plain_full_match(text, n, alt, i, j)) end = j;
        }
      }
      assert_true(end > i);  // every character matches one alternative
      const size_t word = decode_pretokenizer_word(
          DECODE_PRETOKENIZER_LLAMA3, utf8 + starts[i], bytes - starts[i]);
      if (word != starts[end] - starts[i]) {
        fail_msg("'%s' at byte %zu: a word of %zu bytes, plainly %zu", utf8,
                 starts[i], word, starts[end] - starts[i]);
      }
      i = end;
    }
  }
}

// A gpt2 tokenizer file, written byte by byte (decode_gguf_write_vocab
// writes no tokenizer.ggml.pre): the 256 byte characters (id = byte),
// then 12 (256), 123 (257), 1234 (258) and Ġ1 (259) with their merges
// in that order, and xyz (260), which no merge makes; |pre| the key's
// string, none when NULL, the number 3 when |pre_as_number|.
static void write_pre_vocab(const char* path, const char* model,
                            const char* pre, bool pre_as_number) {
  static const char* const kMerges[] = {"1 2", "12 3", "123 4", G " 1"};
  static const char* const kMerged[] = {"12", "123", "1234", G "1", "xyz"};
  FILE* file = fopen(path, "wb");
  assert_non_null(file);
  fwrite("GGUF", 1, 4, file);
  raw_u32(file, 3);
  raw_u64(file, 0);
  raw_u64(file, pre || pre_as_number ? 4 : 3);
  raw_string(file, "tokenizer.ggml.model");
  raw_u32(file, DECODE_GGUF_STRING);
  raw_string(file, model);
  raw_string(file, "tokenizer.ggml.tokens");
  raw_u32(file, DECODE_GGUF_ARRAY);
  raw_u32(file, DECODE_GGUF_STRING);
  raw_u64(file, 256 + 5);
  for (int b = 0; b < 256; ++b) {
    char text[4];
    decode_gpt2_byte_text((uint8_t)b, text);
    raw_string(file, text);
  }
  for (int i = 0; i < 5; ++i) raw_string(file, kMerged[i]);
  raw_string(file, "tokenizer.ggml.merges");
  raw_u32(file, DECODE_GGUF_ARRAY);
  raw_u32(file, DECODE_GGUF_STRING);
  raw_u64(file, 4);
  for (int i = 0; i < 4; ++i) raw_string(file, kMerges[i]);
  if (pre_as_number) {
    raw_string(file, "tokenizer.ggml.pre");
    raw_u32(file, DECODE_GGUF_UINT32);
    raw_u32(file, 3);
  } else if (pre) {
    raw_string(file, "tokenizer.ggml.pre");
    raw_u32(file, DECODE_GGUF_STRING);
    raw_string(file, pre);
  }
  assert_int_equal(fclose(file), 0);
}

// The key picks the words, and so the merges that can happen:
//  GPT-2's: "1234" is one word, 1 2 3 4 -> "1 2" (rank 0) -> "12 3" (1)
//    -> "123 4" (2) -> [1234] = [258]; " 1" is one word, Ġ 1 -> [Ġ1] =
//    [259]; "12345" one word -> 1234 5 -> [258, '5'].
//  Llama 3's: "1234" is "123" "4" -> [257, '4']; " 1" is " " "1" (a
//    number takes no space) -> [' ', '1']; "12345" -> "123" "45" -> [257,
//    '4', '5'].
//  "xyz": GPT-2's merges nothing -> ['x', 'y', 'z']; Llama 3's takes a
//  word that is a token whole (ignore_merges) -> [260]; " xyz" (Ġxyz no
//  token) -> [' ', 'x', 'y', 'z'] under either.
//  BOS: added by default under Llama 3's pattern alone (no
//  add_bos_token in these files).
static void test_pre_key(void** state) {
  (void)state;
  char path[128];
  temp_path("pre.gguf", path, sizeof(path));
  const char* const kGpt2[] = {NULL, "gpt2", "default"};
  for (int i = 0; i < 3; ++i) {
    write_pre_vocab(path, "gpt2", kGpt2[i], false);
    decode_tokenizer_t* tokenizer = NULL;
    decode_test_assert_ok(decode_tokenizer_load(path, &tokenizer));
    assert_int_equal(decode_tokenizer_pretokenizer(tokenizer),
                     DECODE_PRETOKENIZER_GPT2);
    {
      const uint32_t expected[] = {258};
      decode_test_expect_ids(tokenizer, "1234", expected, 1);
    }
    {
      const uint32_t expected[] = {259};
      decode_test_expect_ids(tokenizer, " 1", expected, 1);
    }
    {
      const uint32_t expected[] = {258, '5'};
      decode_test_expect_ids(tokenizer, "12345", expected, 2);
    }
    {
      const uint32_t expected[] = {'x', 'y', 'z'};
      decode_test_expect_ids(tokenizer, "xyz", expected, 3);
    }
    {
      const uint32_t expected[] = {' ', 'x', 'y', 'z'};
      decode_test_expect_ids(tokenizer, " xyz", expected, 4);
    }
    assert_false(decode_tokenizer_adds_bos(tokenizer));
    decode_tokenizer_free(tokenizer);
  }
  const char* const kLlama3[] = {"llama-bpe", "llama3", "llama-v3"};
  for (int i = 0; i < 3; ++i) {
    write_pre_vocab(path, "gpt2", kLlama3[i], false);
    decode_tokenizer_t* tokenizer = NULL;
    decode_test_assert_ok(decode_tokenizer_load(path, &tokenizer));
    assert_int_equal(decode_tokenizer_pretokenizer(tokenizer),
                     DECODE_PRETOKENIZER_LLAMA3);
    {
      const uint32_t expected[] = {257, '4'};
      decode_test_expect_ids(tokenizer, "1234", expected, 2);
    }
    {
      const uint32_t expected[] = {' ', '1'};
      decode_test_expect_ids(tokenizer, " 1", expected, 2);
    }
    {
      const uint32_t expected[] = {257, '4', '5'};
      decode_test_expect_ids(tokenizer, "12345", expected, 3);
    }
    {
      const uint32_t expected[] = {260};
      decode_test_expect_ids(tokenizer, "xyz", expected, 1);
    }
    {
      const uint32_t expected[] = {' ', 'x', 'y', 'z'};
      decode_test_expect_ids(tokenizer, " xyz", expected, 4);
    }
    assert_true(decode_tokenizer_adds_bos(tokenizer));
    decode_tokenizer_free(tokenizer);
  }
  // Any other value is refused, naming the file, the key, the value and
  // the names known; so is a value that is no string.
  decode_tokenizer_t* tokenizer = NULL;
  write_pre_vocab(path, "gpt2", "qwen2", false);
  char needle[512];
  snprintf(needle, sizeof(needle),
           "'%s' (gguf): tokenizer.ggml.pre is 'qwen2'; weft knows 'default' "
           "and 'gpt2' (GPT-2's word pattern, as with no key) and "
           "'llama-bpe', 'llama3' and 'llama-v3' (Llama 3's)",
           path);
  assert_error(decode_tokenizer_load(path, &tokenizer),
               WEFT_STATUS_INVALID_ARGUMENT, needle);
  assert_null(tokenizer);
  write_pre_vocab(path, "gpt2", "", false);
  assert_error(decode_tokenizer_load(path, &tokenizer),
               WEFT_STATUS_INVALID_ARGUMENT, "tokenizer.ggml.pre is ''");
  write_pre_vocab(path, "gpt2", NULL, true);
  assert_error(decode_tokenizer_load(path, &tokenizer),
               WEFT_STATUS_INVALID_ARGUMENT,
               "tokenizer.ggml.pre is '(not a string)'");
  // SentencePiece splits no words: it reads no pre, known or not.
  write_pre_vocab(path, "llama", "qwen2", false);
  decode_test_assert_ok(decode_tokenizer_load(path, &tokenizer));
  assert_int_equal(decode_tokenizer_kind(tokenizer), DECODE_TOKENIZER_SPM);
  assert_int_equal(decode_tokenizer_pretokenizer(tokenizer),
                   DECODE_PRETOKENIZER_GPT2);
  decode_tokenizer_free(tokenizer);
  // A vocabulary built by hand names a pattern there is.
  decode_vocab_t vocab;
  bpe_vocab(false, &vocab);
  vocab.pre = (decode_pretokenizer_t)7;
  assert_error(decode_tokenizer_create(&vocab, "by hand", &tokenizer),
               WEFT_STATUS_INVALID_ARGUMENT,
               "by hand: tokenizer.ggml.pre is pre-tokenizer 7");
  assert_null(tokenizer);
  decode_vocab_deinitialize(&vocab);
}

// Whether no continuation byte of |text| comes while decode_text_stream_t
// holds no character to complete (one that does decodes first in its
// piece, as decode_ids would not have it).
static bool no_stray(const char* text, size_t length) {
  uint32_t have = 0;
  uint32_t need = 0;
  uint8_t lead = 0;
  for (size_t i = 0; i < length; ++i) {
    const uint8_t b = (uint8_t)text[i];
    // What may follow: 80-BF, but A0-BF after E0, 80-9F after ED, 90-BF
    // after F0 and 80-8F after F4 (Unicode's well-formed sequences).
    const uint8_t low = have == 1 && lead == 0xE0   ? 0xA0
                        : have == 1 && lead == 0xF0 ? 0x90
                                                    : 0x80;
    const uint8_t high = have == 1 && lead == 0xED   ? 0x9F
                         : have == 1 && lead == 0xF4 ? 0x8F
                                                     : 0xBF;
    if (have > 0 && b >= low && b <= high) {
      if (++have == need) have = 0;
      continue;
    }
    have = 0;
    need = b >= 0xC2 && b <= 0xDF   ? 2
           : b >= 0xE0 && b <= 0xEF ? 3
           : b >= 0xF0 && b <= 0xF4 ? 4
                                    : 0;
    lead = b;
    if (need > 0) have = 1;
    if (need == 0 && b >= 0x80 && b <= 0xBF) return false;
  }
  return true;
}

// Any bytes through a llama-bpe tokenizer (GPT-2's byte characters, the
// merges above and the by-hand vocabulary's) come back unchanged: the
// texts above, every byte alone, and 3000 random texts of random bytes
// (half of them drawn from digits, spaces, line breaks, apostrophes and
// letters, where the words are busiest).
static void test_llama3_round_trips(void** state) {
  (void)state;
  char path[128];
  temp_path("pre_rt.gguf", path, sizeof(path));
  write_pre_vocab(path, "gpt2", "llama-bpe", false);
  decode_tokenizer_t* tokenizer = NULL;
  decode_test_assert_ok(decode_tokenizer_load(path, &tokenizer));
  decode_vocab_t vocab;
  bpe_vocab(false, &vocab);
  vocab.pre = DECODE_PRETOKENIZER_LLAMA3;
  decode_tokenizer_t* by_hand = NULL;
  decode_test_assert_ok(
      decode_tokenizer_create(&vocab, "by hand, llama3", &by_hand));
  decode_vocab_deinitialize(&vocab);
  assert_int_equal(decode_tokenizer_pretokenizer(by_hand),
                   DECODE_PRETOKENIZER_LLAMA3);
  const decode_tokenizer_t* const both[2] = {tokenizer, by_hand};
  for (int t = 0; t < 2; ++t) {
    for (size_t i = 0; i < sizeof(kTexts) / sizeof(kTexts[0]); ++i) {
      expect_round_trip(both[t], kTexts[i]);
    }
    for (int b = 0; b < 256; ++b) {
      const char byte = (char)b;
      expect_round_trip_bytes(both[t], &byte, 1, no_stray(&byte, 1));
    }
  }
  static const char kBusy[] = "0123 \t\r\n'sSlLdtTmMrevV.!\xC3\xA9\xE2\x80\x94";
  uint64_t bits = 99;
  for (int round = 0; round < 3000; ++round) {
    char text[48];
    bits = bits * 6364136223846793005ull + 1442695040888963407ull;
    const size_t length = (size_t)((bits >> 33) % sizeof(text));
    for (size_t i = 0; i < length; ++i) {
      bits = bits * 6364136223846793005ull + 1442695040888963407ull;
      text[i] = round % 2 ? (char)(bits >> 56)
                          : kBusy[(bits >> 33) % (sizeof(kBusy) - 1)];
    }
    expect_round_trip_bytes(both[round % 4 < 2 ? 0 : 1], text, length,
                            no_stray(text, length));
  }
  decode_tokenizer_free(tokenizer);
  decode_tokenizer_free(by_hand);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_synthetic_round_trips),
      cmocka_unit_test(test_synthetic_pieces),
      cmocka_unit_test(test_text_stream_valid_utf8),
      cmocka_unit_test(test_generated_model),
      cmocka_unit_test(test_spm_by_hand),
      cmocka_unit_test(test_gpt2_bytes),
      cmocka_unit_test(test_bpe_by_hand),
      cmocka_unit_test(test_llama3_words),
      cmocka_unit_test(test_gpt2_words),
      cmocka_unit_test(test_llama3_against_plain_pattern),
      cmocka_unit_test(test_pre_key),
      cmocka_unit_test(test_llama3_round_trips),
      cmocka_unit_test(test_against_plain_merging),
      cmocka_unit_test(test_bad_metadata),
      cmocka_unit_test(test_bad_values),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
