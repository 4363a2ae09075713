// libFuzzer target for the decode example's tokenizers' encoders
// (examples/decode/decode_tokenizer.h): any bytes are text to encode with
// the synthetic SentencePiece vocabulary of 512 tokens (weft-decode-gen's)
// and with a small GPT-2 BPE vocabulary of the 256 byte characters and a
// few merges, its words split by GPT-2's pattern and by Llama 3's
// (tokenizer.ggml.pre "llama-bpe"). All have a token for every byte, so
// every text encodes, every id is in the vocabulary, and decoding the ids
// token by token gives the text back byte for byte (but SentencePiece's
// own space, U+2581, which comes back a space); and each pattern splits
// the text into words of at least one byte that add up to it. Any broken
// promise aborts.
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode_tokenizer.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

static void fuzz_check(weft_status_t status, const char* what) {
  if (weft_status_is_ok(status)) return;
  fprintf(stderr, "%s: %s\n", what, weft_status_message(status));
  abort();
}

static decode_tokenizer_t* fuzz_bpe(decode_pretokenizer_t pre) {
  static const char* const kMerges[] = {
      "h e", "\xC4\xA0 t", "\xC4\xA0t he", "l l", "e ll", "o n", "\xC4\xA0 a"};
  static const char* const kMerged[] = {"he",  "\xC4\xA0t", "\xC4\xA0the", "ll",
                                        "ell", "on",        "\xC4\xA0\x61"};
  enum { kMergeCount = sizeof(kMerges) / sizeof(kMerges[0]) };
  char texts[256][4];
  char* tokens[256 + kMergeCount];
  for (int b = 0; b < 256; ++b) {
    decode_gpt2_byte_text((uint8_t)b, texts[b]);
    tokens[b] = texts[b];
  }
  for (int i = 0; i < kMergeCount; ++i) tokens[256 + i] = (char*)kMerged[i];
  decode_vocab_t vocab;
  memset(&vocab, 0, sizeof(vocab));
  vocab.kind = DECODE_TOKENIZER_BPE;
  vocab.count = 256 + kMergeCount;
  vocab.tokens = tokens;
  vocab.merge_count = kMergeCount;
  vocab.merges = (char**)kMerges;
  vocab.bos = vocab.eos = vocab.unknown = -1;
  vocab.pre = pre;
  decode_tokenizer_t* tokenizer = NULL;
  fuzz_check(decode_tokenizer_create(&vocab, "fuzz bpe", &tokenizer),
             "the BPE vocabulary");
  return tokenizer;
}

static decode_tokenizer_t* fuzz_spm(void) {
  decode_vocab_t vocab;
  fuzz_check(decode_vocab_synthetic(512, &vocab), "the synthetic vocabulary");
  decode_tokenizer_t* tokenizer = NULL;
  fuzz_check(decode_tokenizer_create(&vocab, "fuzz spm", &tokenizer),
             "the SentencePiece vocabulary");
  decode_vocab_deinitialize(&vocab);
  return tokenizer;
}

static void fuzz_round_trip(const decode_tokenizer_t* tokenizer,
                            const uint8_t* data, size_t size) {
  // What should come back: for SentencePiece, its "▁" as a space.
  uint8_t* expected = (uint8_t*)malloc(size + 1);
  if (!expected) abort();
  size_t expected_size = 0;
  const bool spm = decode_tokenizer_kind(tokenizer) == DECODE_TOKENIZER_SPM;
  for (size_t i = 0; i < size; ++i) {
    if (spm && i + 2 < size && memcmp(data + i, "\xE2\x96\x81", 3) == 0) {
      expected[expected_size++] = ' ';
      i += 2;
    } else {
      expected[expected_size++] = data[i];
    }
  }
  const size_t capacity = decode_tokenizer_max_ids(size);
  uint32_t* ids = (uint32_t*)malloc(capacity * sizeof(uint32_t));
  char* back = (char*)malloc(size + 8);
  char* piece = (char*)malloc(decode_tokenizer_max_token_bytes(tokenizer));
  if (!ids || !back || !piece) abort();
  size_t count = 0;
  fuzz_check(decode_tokenizer_encode(tokenizer, (const char*)data, size, true,
                                     ids, capacity, &count),
             "encode");
  decode_text_stream_t stream;
  decode_text_stream_initialize(&stream, DECODE_TEXT_AT_START);
  size_t length = 0;
  for (size_t i = 0; i < count; ++i) {
    if (ids[i] >= decode_tokenizer_count(tokenizer)) abort();
    const size_t n = decode_text_stream_next(tokenizer, &stream, ids[i], piece);
    if (length + n > size) {
      fprintf(stderr, "decoded more bytes than were encoded\n");
      abort();
    }
    memcpy(back + length, piece, n);
    length += n;
  }
  length += decode_text_stream_flush(&stream, back + length);
  if (length != expected_size || memcmp(back, expected, length) != 0) {
    fprintf(stderr, "the text did not come back (%zu bytes of %zu)\n", length,
            expected_size);
    abort();
  }
  free(expected);
  free(ids);
  free(back);
  free(piece);
}

// |pre|'s words of the text: each of 1 byte or more, all of it in all.
static void fuzz_words(decode_pretokenizer_t pre, const uint8_t* data,
                       size_t size) {
  for (size_t at = 0; at < size;) {
    const size_t word =
        decode_pretokenizer_word(pre, (const char*)data + at, size - at);
    if (word == 0 || word > size - at) {
      fprintf(stderr, "pre %d: a word of %zu bytes with %zu left\n", (int)pre,
              word, size - at);
      abort();
    }
    at += word;
  }
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static decode_tokenizer_t* spm = NULL;
  static decode_tokenizer_t* bpe = NULL;
  static decode_tokenizer_t* llama3 = NULL;
  if (!spm) spm = fuzz_spm();
  if (!bpe) bpe = fuzz_bpe(DECODE_PRETOKENIZER_GPT2);
  if (!llama3) llama3 = fuzz_bpe(DECODE_PRETOKENIZER_LLAMA3);
  fuzz_words(DECODE_PRETOKENIZER_GPT2, data, size);
  fuzz_words(DECODE_PRETOKENIZER_LLAMA3, data, size);
  fuzz_round_trip(spm, data, size);
  fuzz_round_trip(bpe, data, size);
  fuzz_round_trip(llama3, data, size);
  return 0;
}
