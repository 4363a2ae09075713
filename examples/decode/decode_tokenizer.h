// weft decode example: the tokenizer a llama-family GGUF carries.
//
// Two kinds, as tokenizer.ggml.model names them:
//  - "llama": SentencePiece's BPE. Spaces become U+2581 ("▁") and the text
//    gets one in front (unless tokenizer.ggml.add_space_prefix is false);
//    the text is split into UTF-8 characters, then the
//    adjacent pair whose concatenation is the best-scoring piece of the
//    vocabulary is merged (the leftmost of equals) until no pair is a
//    piece. A symbol left that is no piece is spelled with the byte tokens
//    <0xNN> (byte fallback), or is the unknown token where there are none.
//  - "gpt2": byte-level BPE with ranked merges. The text is split into
//    words by the pattern tokenizer.ggml.pre names (decode_pretokenizer_t:
//    GPT-2's or Llama 3's, over Unicode's general categories as utf8proc
//    has them), each word's bytes mapped to characters by GPT-2's
//    byte-to-unicode table, and the adjacent pair of lowest merge rank
//    merged (leftmost first) until no pair has one.
// Decoding undoes either (the "▁" back to spaces, the byte tokens and the
// byte-level characters back to bytes, control tokens to nothing) and
// holds back a character whose bytes are split across tokens until its
// last byte comes (decode_text_stream_t), so text can be printed token by
// token.
#ifndef WEFT_EXAMPLES_DECODE_DECODE_TOKENIZER_H_
#define WEFT_EXAMPLES_DECODE_DECODE_TOKENIZER_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum decode_tokenizer_kind_e {
  DECODE_TOKENIZER_SPM = 0,  // "llama"
  DECODE_TOKENIZER_BPE = 1,  // "gpt2"
} decode_tokenizer_kind_t;

// How "gpt2" splits text into words before merging (tokenizer.ggml.pre;
// "llama" ignores it). The regular expressions scanned by hand, \p{L} the
// letters (general categories L*), \p{N} the numbers (N*), \s Unicode's
// White_Space and everything else, marks included, neither
// (gpt2_code_point_class in decode_tokenizer.c, over utf8proc's
// categories; a byte that starts no whole UTF-8 character is a letter):
//  - GPT2 (no key, "default" or "gpt2"): GPT-2's
//      's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|
//      \s+(?!\S)|\s+
//  - LLAMA3 ("llama-bpe", "llama3", "llama-v3"): Llama 3's
//      (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//       ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//    (letters may follow one character that is no letter, number or line
//    break: a space, a tab, a symbol, a mark; numbers go three at a time
//    and alone; symbols take the line breaks after them; "(?i:" folds
//    case as Unicode does, so "'ſ" is a contraction too). As in llama.cpp
//    and Hugging Face's Llama 3 tokenizer (ignore_merges), a word that is
//    a token whole is that token, merges or not; and the loader adds BOS
//    unless tokenizer.ggml.add_bos_token says otherwise.
typedef enum decode_pretokenizer_e {
  DECODE_PRETOKENIZER_GPT2 = 0,
  DECODE_PRETOKENIZER_LLAMA3 = 1,
} decode_pretokenizer_t;

// tokenizer.ggml.token_type's values (llama.cpp's numbering).
typedef enum decode_token_type_e {
  DECODE_TOKEN_NORMAL = 1,
  DECODE_TOKEN_UNKNOWN = 2,
  DECODE_TOKEN_CONTROL = 3,
  DECODE_TOKEN_USER_DEFINED = 4,
  DECODE_TOKEN_UNUSED = 5,
  DECODE_TOKEN_BYTE = 6,
} decode_token_type_t;

// A vocabulary as a GGUF stores it (the tokenizer.ggml.* keys). Who fills
// one owns its arrays.
typedef struct decode_vocab_t {
  decode_tokenizer_kind_t kind;
  uint32_t count;
  char** tokens;   // |count| NUL-terminated strings
  float* scores;   // |count|, or NULL (all 0)
  int32_t* types;  // |count| decode_token_type_t, or NULL (all normal)
  uint32_t merge_count;
  char** merges;  // "left right", rank = index (gpt2 only)
  int64_t bos;    // -1: none
  int64_t eos;
  int64_t unknown;
  bool add_bos;  // tokenizer.ggml.add_bos_token
  // tokenizer.ggml.add_space_prefix false: "llama" puts no "▁" in front of
  // the text (nor drops a leading space when decoding).
  bool no_space_prefix;
  decode_pretokenizer_t pre;  // tokenizer.ggml.pre (gpt2 only)
} decode_vocab_t;

// The synthetic vocabulary weft-decode-gen writes, of exactly
// |vocab_size| tokens (at least DECODE_VOCAB_SYNTHETIC_MIN): <unk>, <s>,
// </s>, the 256 byte tokens <0x00>..<0xFF>, "▁" and the printable ASCII
// characters, then "▁"-prefixed prefixes of a list of common English
// words, then letter pairs and triples, each scored below the one before
// (scores -1, -2, ...), and <unused_N> pieces if that runs out. Free with
// decode_vocab_deinitialize.
// (The smallest holds the specials, the bytes, "▁" and ASCII: with
// fewer, spaces would be spelled in byte tokens and decode as "▁".)
#define DECODE_VOCAB_SYNTHETIC_MIN 355u
weft_status_t decode_vocab_synthetic(uint32_t vocab_size,
                                     decode_vocab_t* out_vocab);
// Frees the arrays of a vocabulary filled by decode_vocab_synthetic or by
// a caller with malloc (each token and merge, then the arrays).
void decode_vocab_deinitialize(decode_vocab_t* vocab);

// Writes a GGUF v3 file of no tensors whose metadata is |vocab| alone
// (tokenizer.ggml.model, tokens, scores and token_type where there are
// some, merges, the special ids there are, add_bos_token and
// add_space_prefix when false; not tokenizer.ggml.pre), for tests;
// decode_gguf_write puts the same keys (decode_gguf.c).
weft_status_t decode_gguf_write_vocab(const char* path,
                                      const decode_vocab_t* vocab);

typedef struct decode_tokenizer_t decode_tokenizer_t;

// Builds a tokenizer of |vocab| (copied). Checked: at least one token, the
// arrays there and of |count| elements, special ids within the
// vocabulary, types known, and for gpt2 a decode_pretokenizer_t and each
// merge two tokens with one space between whose concatenation is a token;
// INVALID_ARGUMENT naming |source| and the key (tokenizer.ggml.*)
// otherwise.
weft_status_t decode_tokenizer_create(const decode_vocab_t* vocab,
                                      const char* source,
                                      decode_tokenizer_t** out_tokenizer);
// Reads the tokenizer.ggml.* keys of the GGUF file at |path| and builds
// its tokenizer; NOT_FOUND when the file has no tokenizer.ggml.model,
// INVALID_ARGUMENT naming the key for one missing, of the wrong type or
// length, an unknown model, or (gpt2) a tokenizer.ggml.pre other than
// those decode_pretokenizer_t lists.
weft_status_t decode_tokenizer_load(const char* path,
                                    decode_tokenizer_t** out_tokenizer);
// The same over an open |file| of |file_size| bytes (the fuzz target's).
weft_status_t decode_tokenizer_load_from(FILE* file, const char* path,
                                         uint64_t file_size,
                                         decode_tokenizer_t** out_tokenizer);
void decode_tokenizer_free(decode_tokenizer_t* tokenizer);

uint32_t decode_tokenizer_count(const decode_tokenizer_t* tokenizer);
decode_tokenizer_kind_t decode_tokenizer_kind(
    const decode_tokenizer_t* tokenizer);
// How "gpt2" splits words (GPT2 for "llama", which does not).
decode_pretokenizer_t decode_tokenizer_pretokenizer(
    const decode_tokenizer_t* tokenizer);
// The beginning- and end-of-sequence ids (-1: none), and whether the
// vocabulary asks for a BOS before the text.
int64_t decode_tokenizer_bos(const decode_tokenizer_t* tokenizer);
int64_t decode_tokenizer_eos(const decode_tokenizer_t* tokenizer);
bool decode_tokenizer_adds_bos(const decode_tokenizer_t* tokenizer);
// GPT-2's character for |byte| (its byte-to-unicode table: the printable
// bytes are themselves, the others U+0100 onwards in order) as UTF-8 in
// |out|, NUL-terminated; returns its length (1 or 2).
size_t decode_gpt2_byte_text(uint8_t byte, char out[3]);

// For tests: the bytes of the first word of |length| bytes of |text|
// (any bytes; 1 to |length|, 0 only when |length| is 0) as |pre| splits
// it. "gpt2" encodes word after word of these.
size_t decode_pretokenizer_word(decode_pretokenizer_t pre, const char* text,
                                size_t length);

// Token |id|'s text as stored (NULL outside the vocabulary).
const char* decode_tokenizer_token(const decode_tokenizer_t* tokenizer,
                                   uint32_t id);

// The most ids decode_tokenizer_encode can produce from |length| bytes
// (a byte may become up to three byte tokens: the "▁" a space becomes).
size_t decode_tokenizer_max_ids(size_t length);

// Encodes |length| bytes of |text| (any bytes; invalid UTF-8 is spelled
// byte by byte) into |out_ids|, BOS first when |add_bos| and the
// vocabulary has one; |*out_count| ids. OUT_OF_RANGE when |capacity| is
// short of what is needed (decode_tokenizer_max_ids always suffices);
// NOT_FOUND when a byte has neither a token nor an unknown token to
// stand for it.
weft_status_t decode_tokenizer_encode(const decode_tokenizer_t* tokenizer,
                                      const char* text, size_t length,
                                      bool add_bos, uint32_t* out_ids,
                                      size_t capacity, size_t* out_count);

// Decoding token by token. Caller-owned; decode_text_stream_initialize
// before the first token.
enum decode_text_flag_bits_t {
  // The next piece is the first of the text, whose leading space
  // (SentencePiece's "▁" in front) is dropped.
  DECODE_TEXT_AT_START = 1u << 0,
  // Bytes that are no well-formed UTF-8 character (a stray byte, a start
  // cut short by a byte that does not continue it, an overlong form, a
  // surrogate, an end of text inside a character) come out as U+FFFD,
  // one for a start cut short and one for each stray byte, so the text
  // is valid UTF-8 (for a terminal). Without it
  // they come out as they are, and decoding gives back the bytes encoded.
  DECODE_TEXT_VALID_UTF8 = 1u << 1,
};

typedef struct decode_text_stream_t {
  uint8_t pending[4];  // bytes of a character still short of its end
  uint32_t pending_length;
  uint32_t flags;  // decode_text_flag_bits_t
  bool at_start;
} decode_text_stream_t;

void decode_text_stream_initialize(decode_text_stream_t* stream,
                                   uint32_t flags);
// Bytes |out| needs for one decode_text_stream_next.
size_t decode_tokenizer_max_token_bytes(const decode_tokenizer_t* tokenizer);
// Appends token |id|'s text to the stream: writes to |out| (at least
// decode_tokenizer_max_token_bytes) every UTF-8 character it completes
// and every byte that can be no character (DECODE_TEXT_VALID_UTF8 says
// how), and keeps back the start of one not yet complete. Returns the
// bytes written; an id outside the vocabulary writes nothing.
size_t decode_text_stream_next(const decode_tokenizer_t* tokenizer,
                               decode_text_stream_t* stream, uint32_t id,
                               char* out);
// Ends the stream: writes the bytes of a character still incomplete (or
// U+FFFD for them) to |out| (at least 4 bytes); returns how many.
size_t decode_text_stream_flush(decode_text_stream_t* stream, char* out);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_EXAMPLES_DECODE_DECODE_TOKENIZER_H_
