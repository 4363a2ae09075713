// weft decode example: SentencePiece-style and GPT-2 BPE tokenizers from
// a GGUF's tokenizer.ggml.* keys (decode_tokenizer.h).
//
// Both encoders are one merge loop over a list of symbols (byte ranges of
// one string): find the adjacent pair that ranks best, merge it, repeat.
// "llama" ranks a pair by the score of the piece it makes (a pair that
// makes none does not merge), "gpt2" by the rank of the merge "left
// right". The pairs wait in a binary heap (best, then leftmost, first);
// a merge queues the two pairs it makes, and a pair a merge has changed
// is dropped when it comes up: n log n in the symbols of one text (llama)
// or one word (gpt2).
#include "decode_tokenizer.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "decode_gguf.h"

//===----------------------------------------------------------------------===//
// Strings: a block of NUL-terminated strings and a hash index over them
//===----------------------------------------------------------------------===//

typedef struct decode_strings_t {
  uint32_t count;
  char* text;
  uint64_t* offsets;  // count + 1
  uint32_t* slots;    // index + 1 of the string in each slot, 0: empty
  uint64_t mask;      // slots - 1 (a power of two, at least 2 x count)
} decode_strings_t;

static uint64_t decode_hash(const char* key, size_t length) {
  uint64_t hash = 0xcbf29ce484222325ull;  // FNV-1a
  for (size_t i = 0; i < length; ++i) {
    hash = (hash ^ (uint8_t)key[i]) * 0x100000001b3ull;
  }
  return hash;
}

static size_t strings_length(const decode_strings_t* strings, uint32_t i) {
  return (size_t)(strings->offsets[i + 1] - strings->offsets[i] - 1);
}
static const char* strings_at(const decode_strings_t* strings, uint32_t i) {
  return strings->text + strings->offsets[i];
}

// The index of |key| (|length| bytes), or -1.
static int64_t strings_find(const decode_strings_t* strings, const char* key,
                            size_t length) {
  if (!strings->slots) return -1;
  for (uint64_t slot = decode_hash(key, length) & strings->mask;;
       slot = (slot + 1) & strings->mask) {
    const uint32_t entry = strings->slots[slot];
    if (entry == 0) return -1;
    if (strings_length(strings, entry - 1) == length &&
        memcmp(strings_at(strings, entry - 1), key, length) == 0) {
      return entry - 1;
    }
  }
}

static void strings_deinitialize(decode_strings_t* strings) {
  free(strings->text);
  free(strings->offsets);
  free(strings->slots);
  memset(strings, 0, sizeof(*strings));
}

// Copies |count| |items| and indexes them (a repeated string: the first
// stands).
static bool strings_initialize(decode_strings_t* strings, uint32_t count,
                               char* const* items) {
  memset(strings, 0, sizeof(*strings));
  strings->count = count;
  uint64_t total = 0;
  for (uint32_t i = 0; i < count; ++i) total += strlen(items[i]) + 1;
  uint64_t slots = 2;
  while (slots < 2ull * count) slots *= 2;
  strings->text = (char*)malloc(total + 1);
  strings->offsets = (uint64_t*)malloc((count + 1ull) * sizeof(uint64_t));
  strings->slots = (uint32_t*)calloc(slots, sizeof(uint32_t));
  if (!strings->text || !strings->offsets || !strings->slots) {
    strings_deinitialize(strings);
    return false;
  }
  strings->mask = slots - 1;
  uint64_t at = 0;
  for (uint32_t i = 0; i < count; ++i) {
    const size_t length = strlen(items[i]);
    strings->offsets[i] = at;
    memcpy(strings->text + at, items[i], length + 1);
    at += length + 1;
  }
  strings->offsets[count] = at;
  for (uint32_t i = 0; i < count; ++i) {
    const size_t length = strings_length(strings, i);
    const char* key = strings_at(strings, i);
    uint64_t slot = decode_hash(key, length) & strings->mask;
    while (strings->slots[slot] != 0 &&
           !(strings_length(strings, strings->slots[slot] - 1) == length &&
             memcmp(strings_at(strings, strings->slots[slot] - 1), key,
                    length) == 0)) {
      slot = (slot + 1) & strings->mask;
    }
    if (strings->slots[slot] == 0) strings->slots[slot] = i + 1;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// UTF-8 and GPT-2's bytes as characters
//===----------------------------------------------------------------------===//

// The bytes of the UTF-8 character starting at |text| (|left| bytes
// there): 1 for ASCII and for any byte that does not start a whole
// well-formed character (it then stands alone).
static size_t utf8_char_length(const uint8_t* text, size_t left) {
  const uint8_t lead = text[0];
  size_t length = lead < 0x80             ? 1
                  : (lead & 0xE0) == 0xC0 ? 2
                  : (lead & 0xF0) == 0xE0 ? 3
                  : (lead & 0xF8) == 0xF0 ? 4
                                          : 1;
  if (length > left) return 1;
  for (size_t i = 1; i < length; ++i) {
    if ((text[i] & 0xC0) != 0x80) return 1;
  }
  return length;
}

static size_t utf8_encode(uint32_t code_point, char* out) {
  if (code_point < 0x80) {
    out[0] = (char)code_point;
    return 1;
  }
  if (code_point < 0x800) {
    out[0] = (char)(0xC0 | (code_point >> 6));
    out[1] = (char)(0x80 | (code_point & 0x3F));
    return 2;
  }
  out[0] = (char)(0xE0 | (code_point >> 12));
  out[1] = (char)(0x80 | ((code_point >> 6) & 0x3F));
  out[2] = (char)(0x80 | (code_point & 0x3F));
  return 3;
}

// GPT-2's table: the printable bytes ('!'..'~', 0xA1..0xAC, 0xAE..0xFF)
// stand for themselves; the others, in order, for U+0100 onwards (the
// space, 0x20, is U+0120 'Ġ'). |out_bytes| is the inverse over code
// points below GPT2_CHARS (-1: none).
#define GPT2_CHARS 0x144
static void gpt2_tables(uint16_t out_chars[256],
                        int16_t out_bytes[GPT2_CHARS]) {
  uint32_t next = 256;
  for (int c = 0; c < GPT2_CHARS; ++c) out_bytes[c] = -1;
  for (uint32_t b = 0; b < 256; ++b) {
    const bool printable =
        (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
    out_chars[b] = (uint16_t)(printable ? b : next++);
    out_bytes[out_chars[b]] = (int16_t)b;
  }
}

size_t decode_gpt2_byte_text(uint8_t byte, char out[3]) {
  uint16_t chars[256];
  int16_t bytes[GPT2_CHARS];
  gpt2_tables(chars, bytes);
  const size_t length = utf8_encode(chars[byte], out);
  out[length] = '\0';
  return length;
}

static uint32_t utf8_decode(const uint8_t* text, size_t length) {
  switch (length) {
    case 2:
      return ((text[0] & 0x1Fu) << 6) | (text[1] & 0x3Fu);
    case 3:
      return ((text[0] & 0x0Fu) << 12) | ((text[1] & 0x3Fu) << 6) |
             (text[2] & 0x3Fu);
    case 4:
      return ((text[0] & 0x07u) << 18) | ((text[1] & 0x3Fu) << 12) |
             ((text[2] & 0x3Fu) << 6) | (text[3] & 0x3Fu);
    default:
      return text[0];
  }
}

//===----------------------------------------------------------------------===//
// The tokenizer
//===----------------------------------------------------------------------===//

#define SPM_SPACE "\xE2\x96\x81"     // U+2581, SentencePiece's space
#define UNKNOWN_TEXT "\xE2\x81\x87"  // U+2047 '⁇', an unknown token's text

struct decode_tokenizer_t {
  decode_tokenizer_kind_t kind;
  decode_strings_t tokens;
  float* scores;
  uint8_t* types;
  decode_strings_t merges;  // gpt2: "left right" at its rank
  int64_t byte_ids[256];    // the token of each byte, -1: none
  int64_t bos;
  int64_t eos;
  int64_t unknown;
  bool add_bos;
  bool space_prefix;          // llama: "▁" in front of the text
  decode_pretokenizer_t pre;  // gpt2: how words are split
  size_t max_token_bytes;
  uint16_t gpt2_chars[256];
  int16_t gpt2_bytes[GPT2_CHARS];
};

void decode_tokenizer_free(decode_tokenizer_t* tokenizer) {
  if (!tokenizer) return;
  strings_deinitialize(&tokenizer->tokens);
  strings_deinitialize(&tokenizer->merges);
  free(tokenizer->scores);
  free(tokenizer->types);
  free(tokenizer);
}

// "<0xNN>" -> NN; -1 for anything else.
static int spm_byte_token(const char* text) {
  if (strlen(text) != 6 || strncmp(text, "<0x", 3) != 0 || text[5] != '>') {
    return -1;
  }
  int value = 0;
  for (int i = 3; i < 5; ++i) {
    const char c = text[i];
    const int digit = c >= '0' && c <= '9'   ? c - '0'
                      : c >= 'A' && c <= 'F' ? c - 'A' + 10
                      : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                             : -1;
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

// Checks |vocab|'s merges and indexes them (gpt2).
static weft_status_t bpe_index_merges(decode_tokenizer_t* tokenizer,
                                      const decode_vocab_t* vocab,
                                      const char* source) {
  for (uint32_t i = 0; i < vocab->merge_count; ++i) {
    const char* merge = vocab->merges[i];
    const char* space = merge && merge[0] ? strchr(merge + 1, ' ') : NULL;
    const char* right = space ? space + 1 : NULL;
    const size_t left_length = space ? (size_t)(space - merge) : 0;
    const size_t right_length = right ? strlen(right) : 0;
    bool ok = space && right_length > 0 &&
              strings_find(&tokenizer->tokens, merge, left_length) >= 0 &&
              strings_find(&tokenizer->tokens, right, right_length) >= 0;
    if (ok) {
      char* joined = (char*)malloc(left_length + right_length + 1);
      if (!joined) {
        return WEFT_STATUS(RESOURCE_EXHAUSTED, "%s: merge %u", source, i);
      }
      memcpy(joined, merge, left_length);
      memcpy(joined + left_length, right, right_length);
      ok = strings_find(&tokenizer->tokens, joined,
                        left_length + right_length) >= 0;
      free(joined);
    }
    if (!ok) {
      return WEFT_STATUS(INVALID_ARGUMENT,
                         "%s: tokenizer.ggml.merges[%u] is '%s': a merge is "
                         "two tokens with a space between that make a token",
                         source, i, merge ? merge : "(null)");
    }
  }
  if (!strings_initialize(&tokenizer->merges, vocab->merge_count,
                          vocab->merges)) {
    return WEFT_STATUS(RESOURCE_EXHAUSTED, "%s: %u merges", source,
                       vocab->merge_count);
  }
  return WEFT_OK;
}

// Each byte's token: "<0xNN>" (llama), the byte's GPT-2 character (gpt2).
static weft_status_t decode_index_bytes(decode_tokenizer_t* tokenizer,
                                        const char* source) {
  for (int b = 0; b < 256; ++b) tokenizer->byte_ids[b] = -1;
  if (tokenizer->kind == DECODE_TOKENIZER_BPE) {
    for (int b = 0; b < 256; ++b) {
      char text[4];
      const size_t length = utf8_encode(tokenizer->gpt2_chars[b], text);
      tokenizer->byte_ids[b] = strings_find(&tokenizer->tokens, text, length);
    }
    return WEFT_OK;
  }
  for (uint32_t i = 0; i < tokenizer->tokens.count; ++i) {
    const int byte = spm_byte_token(strings_at(&tokenizer->tokens, i));
    if (tokenizer->types[i] == DECODE_TOKEN_BYTE && byte < 0) {
      return WEFT_STATUS(INVALID_ARGUMENT,
                         "%s: tokenizer.ggml.tokens[%u] is '%s', of type byte "
                         "but not of the form <0xNN>",
                         source, i, strings_at(&tokenizer->tokens, i));
    }
    if (byte >= 0 && tokenizer->types[i] == DECODE_TOKEN_BYTE &&
        tokenizer->byte_ids[byte] < 0) {
      tokenizer->byte_ids[byte] = i;
    }
  }
  return WEFT_OK;
}

weft_status_t decode_tokenizer_create(const decode_vocab_t* vocab,
                                      const char* source,
                                      decode_tokenizer_t** out_tokenizer) {
  *out_tokenizer = NULL;
  if (vocab->count == 0 || !vocab->tokens) {
    return WEFT_STATUS(INVALID_ARGUMENT, "%s: tokenizer.ggml.tokens is empty",
                       source);
  }
  if (vocab->kind == DECODE_TOKENIZER_BPE &&
      vocab->pre != DECODE_PRETOKENIZER_GPT2 &&
      vocab->pre != DECODE_PRETOKENIZER_LLAMA3) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "%s: tokenizer.ggml.pre is pre-tokenizer %d (0: gpt2, "
                       "1: llama3)",
                       source, (int)vocab->pre);
  }
  for (uint32_t i = 0; i < vocab->count; ++i) {
    if (!vocab->tokens[i]) {
      return WEFT_STATUS(INVALID_ARGUMENT,
                         "%s: tokenizer.ggml.tokens[%u] is missing", source, i);
    }
    const int32_t type = vocab->types ? vocab->types[i] : DECODE_TOKEN_NORMAL;
    if (type < DECODE_TOKEN_NORMAL || type > DECODE_TOKEN_BYTE) {
      return WEFT_STATUS(INVALID_ARGUMENT,
                         "%s: tokenizer.ggml.token_type[%u] is %d (1 to 6)",
                         source, i, (int)type);
    }
  }
  const char* const kIdKeys[3] = {"tokenizer.ggml.bos_token_id",
                                  "tokenizer.ggml.eos_token_id",
                                  "tokenizer.ggml.unknown_token_id"};
  const int64_t ids[3] = {vocab->bos, vocab->eos, vocab->unknown};
  for (int k = 0; k < 3; ++k) {
    if (ids[k] >= (int64_t)vocab->count) {
      return WEFT_STATUS(INVALID_ARGUMENT,
                         "%s: %s is %" PRId64
                         ", outside the vocabulary of %u tokens",
                         source, kIdKeys[k], ids[k], vocab->count);
    }
  }
  decode_tokenizer_t* tokenizer =
      (decode_tokenizer_t*)calloc(1, sizeof(*tokenizer));
  if (!tokenizer) return WEFT_STATUS(RESOURCE_EXHAUSTED, "%s", source);
  tokenizer->kind = vocab->kind;
  tokenizer->bos = vocab->bos;
  tokenizer->eos = vocab->eos;
  tokenizer->unknown = vocab->unknown;
  tokenizer->add_bos = vocab->add_bos;
  tokenizer->space_prefix = !vocab->no_space_prefix;
  // (SentencePiece has no words: it keeps GPT2, which it never reads.)
  tokenizer->pre = vocab->kind == DECODE_TOKENIZER_BPE
                       ? vocab->pre
                       : DECODE_PRETOKENIZER_GPT2;
  gpt2_tables(tokenizer->gpt2_chars, tokenizer->gpt2_bytes);
  tokenizer->scores = (float*)calloc(vocab->count, sizeof(float));
  tokenizer->types = (uint8_t*)malloc(vocab->count);
  weft_status_t status = WEFT_OK;
  if (!tokenizer->scores || !tokenizer->types ||
      !strings_initialize(&tokenizer->tokens, vocab->count, vocab->tokens)) {
    status =
        WEFT_STATUS(RESOURCE_EXHAUSTED, "%s: %u tokens", source, vocab->count);
  }
  for (uint32_t i = 0; weft_status_is_ok(status) && i < vocab->count; ++i) {
    if (vocab->scores) tokenizer->scores[i] = vocab->scores[i];
    tokenizer->types[i] =
        (uint8_t)(vocab->types ? vocab->types[i] : DECODE_TOKEN_NORMAL);
    const size_t length = strings_length(&tokenizer->tokens, i);
    if (length > tokenizer->max_token_bytes) {
      tokenizer->max_token_bytes = length;
    }
  }
  // A token's text (or the unknown token's three bytes) decodes to at
  // most three bytes a byte (U+FFFD for each stray one), after U+FFFD or
  // a character's start for the bytes held back before it.
  if (tokenizer->max_token_bytes < 3) tokenizer->max_token_bytes = 3;
  tokenizer->max_token_bytes = 3 * tokenizer->max_token_bytes + 8;
  if (weft_status_is_ok(status) && vocab->kind == DECODE_TOKENIZER_BPE) {
    status = bpe_index_merges(tokenizer, vocab, source);
  }
  if (weft_status_is_ok(status)) status = decode_index_bytes(tokenizer, source);
  if (!weft_status_is_ok(status)) {
    decode_tokenizer_free(tokenizer);
    return status;
  }
  *out_tokenizer = tokenizer;
  return WEFT_OK;
}

uint32_t decode_tokenizer_count(const decode_tokenizer_t* tokenizer) {
  return tokenizer->tokens.count;
}
decode_tokenizer_kind_t decode_tokenizer_kind(
    const decode_tokenizer_t* tokenizer) {
  return tokenizer->kind;
}
decode_pretokenizer_t decode_tokenizer_pretokenizer(
    const decode_tokenizer_t* tokenizer) {
  return tokenizer->pre;
}
int64_t decode_tokenizer_bos(const decode_tokenizer_t* tokenizer) {
  return tokenizer->bos;
}
int64_t decode_tokenizer_eos(const decode_tokenizer_t* tokenizer) {
  return tokenizer->eos;
}
bool decode_tokenizer_adds_bos(const decode_tokenizer_t* tokenizer) {
  return tokenizer->add_bos;
}
const char* decode_tokenizer_token(const decode_tokenizer_t* tokenizer,
                                   uint32_t id) {
  return id < tokenizer->tokens.count ? strings_at(&tokenizer->tokens, id)
                                      : NULL;
}
size_t decode_tokenizer_max_token_bytes(const decode_tokenizer_t* tokenizer) {
  return tokenizer->max_token_bytes;
}

//===----------------------------------------------------------------------===//
// Encoding
//===----------------------------------------------------------------------===//

// A symbol: bytes [start, start + length) of the text being merged, in a
// list (prev, next: indices, -1 at the ends; a symbol merged into the one
// before it has length 0).
typedef struct decode_symbol_t {
  uint32_t start;
  uint32_t length;
  int32_t prev;
  int32_t next;
} decode_symbol_t;

// A pair that merges: symbols |left| and its next, of |length| bytes
// together when it was ranked (higher |rank| first, then the leftmost).
typedef struct decode_pair_t {
  double rank;
  uint32_t start;
  uint32_t length;
  int32_t left;
  int32_t right;
} decode_pair_t;

typedef struct decode_merger_t {
  const decode_tokenizer_t* tokenizer;
  const char* text;
  decode_symbol_t* symbols;
  char* scratch;        // "left right" for gpt2's merge lookups
  decode_pair_t* heap;  // the pairs that merge, best first (a binary heap)
  size_t heap_count;
} decode_merger_t;

static bool pair_before(const decode_pair_t* a, const decode_pair_t* b) {
  return a->rank > b->rank || (a->rank == b->rank && a->start < b->start);
}

static void heap_push(decode_merger_t* merger, decode_pair_t pair) {
  decode_pair_t* heap = merger->heap;
  size_t i = merger->heap_count++;
  while (i > 0 && pair_before(&pair, &heap[(i - 1) / 2])) {
    heap[i] = heap[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  heap[i] = pair;
}

static decode_pair_t heap_pop(decode_merger_t* merger) {
  decode_pair_t* heap = merger->heap;
  const decode_pair_t top = heap[0];
  const decode_pair_t last = heap[--merger->heap_count];
  size_t i = 0;
  for (;;) {
    size_t child = 2 * i + 1;
    if (child >= merger->heap_count) break;
    if (child + 1 < merger->heap_count &&
        pair_before(&heap[child + 1], &heap[child])) {
      ++child;
    }
    if (!pair_before(&heap[child], &last)) break;
    heap[i] = heap[child];
    i = child;
  }
  if (merger->heap_count > 0) heap[i] = last;
  return top;
}

// Ranks the pair that starts at symbol |i| (with its next) and queues it
// if it merges.
static void merger_rank(decode_merger_t* merger, int32_t i) {
  const decode_symbol_t* left = &merger->symbols[i];
  if (left->next < 0) return;
  const decode_symbol_t* right = &merger->symbols[left->next];
  const decode_tokenizer_t* tokenizer = merger->tokenizer;
  const uint32_t length = left->length + right->length;
  double rank = 0.0;
  if (tokenizer->kind == DECODE_TOKENIZER_SPM) {
    const int64_t id =
        strings_find(&tokenizer->tokens, merger->text + left->start, length);
    if (id < 0 || (tokenizer->types[id] != DECODE_TOKEN_NORMAL &&
                   tokenizer->types[id] != DECODE_TOKEN_USER_DEFINED)) {
      return;
    }
    rank = tokenizer->scores[id];
  } else {
    char* key = merger->scratch;
    memcpy(key, merger->text + left->start, left->length);
    key[left->length] = ' ';
    memcpy(key + left->length + 1, merger->text + right->start, right->length);
    const int64_t index = strings_find(&tokenizer->merges, key, length + 1);
    if (index < 0) return;
    rank = -(double)index;
  }
  heap_push(merger, (decode_pair_t){rank, left->start, length, i, left->next});
}

// Merges the symbols [first, first + count) (a list in order) until no
// pair ranks. A merge keeps the left symbol, so |first| stays the first.
// A queued pair whose symbols have changed since (one merged away, or
// with a neighbour: the length differs) is dropped when it comes up; the
// pairs its merge makes are queued then.
static void merger_run(decode_merger_t* merger, int32_t first, int32_t count) {
  decode_symbol_t* symbols = merger->symbols;
  merger->heap_count = 0;
  for (int32_t i = first; i < first + count; ++i) merger_rank(merger, i);
  while (merger->heap_count > 0) {
    const decode_pair_t pair = heap_pop(merger);
    decode_symbol_t* left = &symbols[pair.left];
    decode_symbol_t* right = &symbols[pair.right];
    if (left->length == 0 || right->length == 0 || left->next != pair.right ||
        left->length + right->length != pair.length) {
      continue;
    }
    left->length += right->length;
    left->next = right->next;
    if (right->next >= 0) symbols[right->next].prev = pair.left;
    right->length = 0;
    if (left->prev >= 0) merger_rank(merger, left->prev);
    merger_rank(merger, pair.left);
  }
}

typedef struct decode_id_writer_t {
  uint32_t* ids;
  size_t capacity;
  size_t count;
  bool overflow;
} decode_id_writer_t;

static void id_put(decode_id_writer_t* writer, uint32_t id) {
  if (writer->count < writer->capacity) {
    writer->ids[writer->count] = id;
  } else {
    writer->overflow = true;
  }
  ++writer->count;
}

// Emits the ids of the merged symbols from |first|: each symbol's token,
// or (one that is no token) its bytes' tokens, or the unknown token.
// False when a symbol has neither (|*out_byte| the first byte short).
static bool merger_emit(decode_merger_t* merger, int32_t first,
                        const uint8_t* raw, decode_id_writer_t* writer,
                        int* out_byte) {
  const decode_tokenizer_t* tokenizer = merger->tokenizer;
  for (int32_t i = first; i >= 0; i = merger->symbols[i].next) {
    const decode_symbol_t* symbol = &merger->symbols[i];
    const int64_t id = strings_find(
        &tokenizer->tokens, merger->text + symbol->start, symbol->length);
    // (gpt2's merged symbols are tokens by the merges' check, whatever
    // their type; each of its other symbols is one byte, |raw| below.)
    const bool usable =
        id >= 0 && (tokenizer->kind == DECODE_TOKENIZER_BPE ||
                    tokenizer->types[id] == DECODE_TOKEN_NORMAL ||
                    tokenizer->types[id] == DECODE_TOKEN_USER_DEFINED);
    if (usable) {
      id_put(writer, (uint32_t)id);
      continue;
    }
    // The symbol's bytes: as written for llama; for gpt2 the original
    // byte each character stands for (|raw|, one per symbol there).
    const uint8_t* bytes =
        raw ? raw + i : (const uint8_t*)merger->text + symbol->start;
    const uint32_t byte_count = raw ? 1 : symbol->length;
    bool all_bytes = true;
    for (uint32_t b = 0; b < byte_count; ++b) {
      all_bytes &= tokenizer->byte_ids[bytes[b]] >= 0;
    }
    if (all_bytes) {
      for (uint32_t b = 0; b < byte_count; ++b) {
        id_put(writer, (uint32_t)tokenizer->byte_ids[bytes[b]]);
      }
    } else if (tokenizer->unknown >= 0) {
      id_put(writer, (uint32_t)tokenizer->unknown);
    } else {
      *out_byte = bytes[0];
      return false;
    }
  }
  return true;
}

size_t decode_tokenizer_max_ids(size_t length) { return 3 * (length + 1) + 1; }

// llama: "▁" in front and for every space, split into characters, merged.
static bool spm_encode(decode_merger_t* merger, const char* text, size_t length,
                       char* normal, decode_id_writer_t* writer,
                       int* out_byte) {
  size_t n = 0;
  if (length > 0 && merger->tokenizer->space_prefix) {
    memcpy(normal, SPM_SPACE, 3);
    n = 3;
  }
  for (size_t i = 0; i < length; ++i) {
    if (text[i] == ' ') {
      memcpy(normal + n, SPM_SPACE, 3);
      n += 3;
    } else {
      normal[n++] = text[i];
    }
  }
  if (n == 0) return true;
  merger->text = normal;
  int32_t count = 0;
  for (size_t at = 0; at < n;) {
    const size_t char_length =
        utf8_char_length((const uint8_t*)normal + at, n - at);
    merger->symbols[count] = (decode_symbol_t){
        (uint32_t)at, (uint32_t)char_length, count - 1, count + 1};
    ++count;
    at += char_length;
  }
  merger->symbols[count - 1].next = -1;
  merger_run(merger, 0, count);
  return merger_emit(merger, 0, NULL, writer, out_byte);
}

typedef enum gpt2_class_e {
  GPT2_LETTER,  // \p{L}
  GPT2_NUMBER,  // \p{N}
  GPT2_SPACE,   // \s
  GPT2_OTHER,   // the rest
} gpt2_class_t;

// The class of a code point for GPT-2's and Llama 3's patterns, from its
// Unicode general category as utf8proc has it (its tables are the Unicode
// Character Database's, kept up by the library's maintainers; Debian's
// 2.8 is Unicode 15.0):
//  - \p{L}: the letters, Lu, Ll, Lt, Lm and Lo;
//  - \p{N}: the numbers, Nd, Nl and No (any script's digits, Ⅻ, ², ½);
//  - \s: Unicode's White_Space property (\s in Rust's regex crate,
//    which runs the pattern in tiktoken, Meta's reference tokenizer's
//    engine), which is exactly the separators Zs, Zl and Zp and the
//    controls U+0009..U+000D and U+0085 (PropList.txt);
//  - anything else is other: marks (Mn, Mc, Me: a virama, a nukta, a
//    vowel sign, U+FE0F's emoji presentation), punctuation, symbols
//    (emoji among them), the other controls, format characters (U+200B,
//    the joiner U+200D, U+FEFF), private use and unassigned code points
//    (utf8proc's Cn, as for any value past U+10FFFF).
static gpt2_class_t gpt2_code_point_class(uint32_t c) {
  switch (utf8proc_category((utf8proc_int32_t)c)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
      return GPT2_LETTER;
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
      return GPT2_NUMBER;
    case UTF8PROC_CATEGORY_ZS:
    case UTF8PROC_CATEGORY_ZL:
    case UTF8PROC_CATEGORY_ZP:
      return GPT2_SPACE;
    case UTF8PROC_CATEGORY_CC:
      return (c >= '\t' && c <= '\r') || c == 0x85 ? GPT2_SPACE : GPT2_OTHER;
    default:
      return GPT2_OTHER;
  }
}

// The class of the character at |text| (|left| bytes there) and, in
// |out_length|, its bytes (a byte that starts no whole character is one,
// a letter).
static gpt2_class_t gpt2_class(const uint8_t* text, size_t left,
                               size_t* out_length) {
  *out_length = utf8_char_length(text, left);
  if (*out_length == 1 && text[0] >= 0x80) return GPT2_LETTER;
  return gpt2_code_point_class(utf8_decode(text, *out_length));
}

// The length of the word at |text| (|left| bytes): GPT-2's pattern
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|
//   \s+(?!\S)|\s+
static size_t gpt2_word(const uint8_t* text, size_t left) {
  static const char* const kContractions[] = {"'s", "'t",  "'re", "'ve",
                                              "'m", "'ll", "'d"};
  for (size_t i = 0; i < 7; ++i) {
    const size_t length = strlen(kContractions[i]);
    if (length <= left && memcmp(text, kContractions[i], length) == 0) {
      return length;
    }
  }
  size_t length = 0;
  size_t lead = 0;
  gpt2_class_t kind = gpt2_class(text, left, &length);
  if (text[0] == ' ' && left > 1) {
    size_t next_length = 0;
    const gpt2_class_t next = gpt2_class(text + 1, left - 1, &next_length);
    if (next != GPT2_SPACE) {
      lead = 1;
      kind = next;
      length = next_length;
    }
  }
  size_t end = lead + length;
  if (kind != GPT2_SPACE) {
    while (end < left && gpt2_class(text + end, left - end, &length) == kind) {
      end += length;
    }
    return end;
  }
  // Spaces: all of them at the end of the text; before anything else, all
  // but the last, which goes with the word after (when there are two).
  size_t last = 0;  // where the last space character starts
  while (end < left &&
         gpt2_class(text + end, left - end, &length) == GPT2_SPACE) {
    last = end;
    end += length;
  }
  return end < left && last > 0 ? last : end;
}

static bool is_line_break(uint8_t byte) { return byte == '\r' || byte == '\n'; }

// The length of the word at |text| (|left| bytes, at least 1): Llama 3's
// pattern, its alternatives tried in order (the first that matches wins,
// as long as it can):
//   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//    ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
// with \s, \p{L} and \p{N} as gpt2_code_point_class has them (and a
// byte that starts no whole UTF-8 character a letter, as with GPT-2's).
// "(?i:" is Unicode's simple case folding, as Rust's regex crate (and
// so tiktoken) has it: 'S and 'LL are contractions, and so is "'ſ"
// (U+017F LATIN SMALL LETTER LONG S folds to s; no other character
// folds to any of s, t, r, e, v, m, l, d). llama.cpp (which lowers the
// case, leaving ſ as it is) and the JavaScript port llama3-tokenizer-js
// (ASCII's case) take it for no contraction.
static size_t llama3_word(const uint8_t* text, size_t left) {
  if (text[0] == '\'' && left >= 2) {
    // (x | 0x20) is the lower case of an ASCII letter, and no other byte
    // becomes one of these letters.
    const int a = text[1] | 0x20;
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
    const int b = left >= 3 ? text[2] | 0x20 : 0;
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') ||
        (a == 'l' && b == 'l')) {
      return 3;
    }
    if (left >= 3 && text[1] == 0xC5 && text[2] == 0xBF) return 3;  // 'ſ
  }
  size_t length = 0;
  const gpt2_class_t kind = gpt2_class(text, left, &length);
  // [^\r\n\p{L}\p{N}]?\p{L}+: letters, after one character that is no
  // line break, letter or number (a space, a tab, a symbol) if there is.
  size_t end = 0;
  if (kind == GPT2_LETTER) {
    end = length;
  } else if (kind != GPT2_NUMBER && !is_line_break(text[0]) && length < left) {
    size_t next_length = 0;
    if (gpt2_class(text + length, left - length, &next_length) == GPT2_LETTER) {
      end = length + next_length;
    }
  }
  if (end > 0) {
    while (end < left &&
           gpt2_class(text + end, left - end, &length) == GPT2_LETTER) {
      end += length;
    }
    return end;
  }
  // \p{N}{1,3}
  if (kind == GPT2_NUMBER) {
    end = length;
    for (int n = 1; n < 3 && end < left &&
                    gpt2_class(text + end, left - end, &length) == GPT2_NUMBER;
         ++n) {
      end += length;
    }
    return end;
  }
  // " ?[^\s\p{L}\p{N}]+[\r\n]*": symbols (after one space, U+0020 only)
  // and the line breaks after them.
  size_t start = 0;
  gpt2_class_t first = kind;
  if (text[0] == ' ' && left > 1) {
    first = gpt2_class(text + 1, left - 1, &length);
    start = 1;
  }
  if (first == GPT2_OTHER) {
    end = start;
    while (end < left &&
           gpt2_class(text + end, left - end, &length) == GPT2_OTHER) {
      end += length;
    }
    while (end < left && is_line_break(text[end])) ++end;
    return end;
  }
  // Whitespace (|kind| is GPT2_SPACE: the rest have returned). Up to the
  // last line break in the run (\s*[\r\n]+); else all of it at the end
  // of the text, before anything else all but its last character, which
  // starts the next word (\s+(?!\S)), or the one character (\s+).
  size_t line_end = 0;  // after the run's last line break
  size_t last = 0;      // where its last character starts
  while (end < left &&
         gpt2_class(text + end, left - end, &length) == GPT2_SPACE) {
    if (is_line_break(text[end])) line_end = end + 1;
    last = end;
    end += length;
  }
  if (line_end > 0) return line_end;
  return end < left && last > 0 ? last : end;
}

size_t decode_pretokenizer_word(decode_pretokenizer_t pre, const char* text,
                                size_t length) {
  if (length == 0) return 0;
  const uint8_t* bytes = (const uint8_t*)text;
  return pre == DECODE_PRETOKENIZER_LLAMA3 ? llama3_word(bytes, length)
                                           : gpt2_word(bytes, length);
}

// gpt2: word by word, each word's bytes as GPT-2's characters, merged.
static bool bpe_encode(decode_merger_t* merger, const char* text, size_t length,
                       char* mapped, decode_id_writer_t* writer,
                       int* out_byte) {
  const uint8_t* bytes = (const uint8_t*)text;
  for (size_t at = 0; at < length;) {
    const size_t word = merger->tokenizer->pre == DECODE_PRETOKENIZER_LLAMA3
                            ? llama3_word(bytes + at, length - at)
                            : gpt2_word(bytes + at, length - at);
    size_t n = 0;
    for (size_t i = 0; i < word; ++i) {
      const size_t char_length =
          utf8_encode(merger->tokenizer->gpt2_chars[bytes[at + i]], mapped + n);
      merger->symbols[i] = (decode_symbol_t){(uint32_t)n, (uint32_t)char_length,
                                             (int32_t)i - 1, (int32_t)i + 1};
      n += char_length;
    }
    // Llama 3's ignore_merges: a word that is a token is that token,
    // whether or not the merges would make it.
    const int64_t whole =
        merger->tokenizer->pre == DECODE_PRETOKENIZER_LLAMA3
            ? strings_find(&merger->tokenizer->tokens, mapped, n)
            : -1;
    if (whole >= 0) {
      id_put(writer, (uint32_t)whole);
      at += word;
      continue;
    }
    merger->symbols[word - 1].next = -1;
    merger->text = mapped;
    merger_run(merger, 0, (int32_t)word);
    if (!merger_emit(merger, 0, bytes + at, writer, out_byte)) return false;
    at += word;
  }
  return true;
}

weft_status_t decode_tokenizer_encode(const decode_tokenizer_t* tokenizer,
                                      const char* text, size_t length,
                                      bool add_bos, uint32_t* out_ids,
                                      size_t capacity, size_t* out_count) {
  *out_count = 0;
  if (length > (size_t)INT32_MAX / 4) {
    return WEFT_STATUS(OUT_OF_RANGE, "a text of %zu bytes to encode", length);
  }
  decode_id_writer_t writer = {out_ids, capacity, 0, false};
  if (add_bos && tokenizer->bos >= 0) id_put(&writer, (uint32_t)tokenizer->bos);
  // The text made over (at most three bytes for one), its symbols (at
  // most one a byte, and the space in front), the key of a merge, and the
  // queued pairs (one per symbol at first, two more per merge).
  const size_t most = 3 * length + 3;
  decode_merger_t merger = {tokenizer, NULL, NULL, NULL, NULL, 0};
  char* work = (char*)malloc(most + 1);
  merger.symbols =
      (decode_symbol_t*)malloc((length + 1) * sizeof(decode_symbol_t));
  merger.scratch = (char*)malloc(most + 2);
  merger.heap =
      (decode_pair_t*)malloc(3 * (length + 1) * sizeof(decode_pair_t));
  weft_status_t status = WEFT_OK;
  if (!work || !merger.symbols || !merger.scratch || !merger.heap) {
    status = WEFT_STATUS(RESOURCE_EXHAUSTED, "encoding %zu bytes", length);
  }
  int byte = 0;
  bool ok = true;
  if (weft_status_is_ok(status)) {
    ok = tokenizer->kind == DECODE_TOKENIZER_SPM
             ? spm_encode(&merger, text, length, work, &writer, &byte)
             : bpe_encode(&merger, text, length, work, &writer, &byte);
  }
  free(work);
  free(merger.symbols);
  free(merger.scratch);
  free(merger.heap);
  if (weft_status_is_ok(status) && !ok) {
    status = WEFT_STATUS(NOT_FOUND,
                         "byte 0x%02X has no token, and the vocabulary no "
                         "unknown token",
                         byte);
  }
  if (weft_status_is_ok(status) && writer.overflow) {
    status = WEFT_STATUS(OUT_OF_RANGE,
                         "the text is %zu tokens; room was left for %zu",
                         writer.count, capacity);
  }
  if (weft_status_is_ok(status)) *out_count = writer.count;
  return status;
}

//===----------------------------------------------------------------------===//
// Decoding
//===----------------------------------------------------------------------===//

void decode_text_stream_initialize(decode_text_stream_t* stream,
                                   uint32_t flags) {
  memset(stream, 0, sizeof(*stream));
  stream->flags = flags;
  stream->at_start = (flags & DECODE_TEXT_AT_START) != 0;
}

// U+FFFD REPLACEMENT CHARACTER: what a DECODE_TEXT_VALID_UTF8 stream
// writes for bytes that are no whole UTF-8 character.
#define REPLACEMENT "\xEF\xBF\xBD"

// The bytes a character led by |lead| takes (0: |lead| leads none: a
// continuation byte, an overlong C0 or C1, or past U+10FFFF).
static uint32_t utf8_lead_length(uint8_t lead) {
  return lead < 0x80 ? 1 : lead < 0xC2 ? 0 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3
                                                        : lead < 0xF5 ? 4
                                                                      : 0;
}

// Whether |byte| may follow the |length| bytes of |pending| (a lead and
// the continuations after it): Unicode's table of well-formed sequences,
// which narrows the second byte after E0, ED, F0 and F4 (no overlong
// forms, no surrogates, nothing past U+10FFFF).
static bool utf8_continues(const uint8_t* pending, uint32_t length,
                           uint8_t byte) {
  uint8_t low = 0x80, high = 0xBF;
  if (length == 1) {
    switch (pending[0]) {
      case 0xE0: low = 0xA0; break;
      case 0xED: high = 0x9F; break;
      case 0xF0: low = 0x90; break;
      case 0xF4: high = 0x8F; break;
      default: break;
    }
  }
  return byte >= low && byte <= high;
}

// Writes the |length| bytes at |bytes|, which are no well-formed
// character: as they are, or with DECODE_TEXT_VALID_UTF8 as one U+FFFD.
static size_t stream_reject(const decode_text_stream_t* stream,
                            const uint8_t* bytes, size_t length, char* out) {
  if (!(stream->flags & DECODE_TEXT_VALID_UTF8)) {
    memcpy(out, bytes, length);
    return length;
  }
  memcpy(out, REPLACEMENT, 3);
  return 3;
}

// Adds |byte| to the stream and writes what it completes: a whole
// character with the bytes held before it; held bytes it cuts short
// (then it starts afresh), and a byte that can start no character, go
// through stream_reject. Writes at most 6 bytes.
static size_t stream_put(decode_text_stream_t* stream, uint8_t byte,
                         char* out) {
  size_t written = 0;
  if (stream->pending_length > 0) {
    if (utf8_continues(stream->pending, stream->pending_length, byte)) {
      stream->pending[stream->pending_length++] = byte;
      const uint32_t need = utf8_lead_length(stream->pending[0]);
      if (stream->pending_length < need) return 0;
      memcpy(out, stream->pending, need);
      stream->pending_length = 0;
      return need;
    }
    written = stream_reject(stream, stream->pending, stream->pending_length,
                            out);
    stream->pending_length = 0;
  }
  const uint32_t need = utf8_lead_length(byte);
  if (need == 1) {
    out[written++] = (char)byte;
  } else if (need == 0) {
    written += stream_reject(stream, &byte, 1, out + written);
  } else {
    stream->pending[stream->pending_length++] = byte;
  }
  return written;
}

size_t decode_text_stream_next(const decode_tokenizer_t* tokenizer,
                               decode_text_stream_t* stream, uint32_t id,
                               char* out) {
  if (id >= tokenizer->tokens.count) return 0;
  const uint8_t type = tokenizer->types[id];
  if (type == DECODE_TOKEN_CONTROL || type == DECODE_TOKEN_UNUSED) return 0;
  const char* text = strings_at(&tokenizer->tokens, id);
  size_t length = strings_length(&tokenizer->tokens, id);
  if (type == DECODE_TOKEN_UNKNOWN) {
    text = UNKNOWN_TEXT;
    length = 3;
  }
  const int byte =
      tokenizer->kind == DECODE_TOKENIZER_SPM && type == DECODE_TOKEN_BYTE
          ? spm_byte_token(text)
          : -1;
  size_t written = 0;
  if (byte >= 0) {
    written = stream_put(stream, (uint8_t)byte, out);
    stream->at_start = false;
    return written;
  }
  const uint8_t* bytes = (const uint8_t*)text;
  for (size_t at = 0; at < length;) {
    const size_t char_length = utf8_char_length(bytes + at, length - at);
    if (tokenizer->kind == DECODE_TOKENIZER_SPM) {
      if (char_length == 3 && memcmp(bytes + at, SPM_SPACE, 3) == 0) {
        if (!stream->at_start || !tokenizer->space_prefix) {
          written += stream_put(stream, ' ', out + written);
        }
      } else {
        for (size_t i = 0; i < char_length; ++i) {
          written += stream_put(stream, bytes[at + i], out + written);
        }
      }
    } else {
      // A character of GPT-2's table is its byte; anything else (an
      // added token's own text, a stray byte) goes out as written.
      const uint32_t code_point = char_length == 1 && bytes[at] >= 0x80
                                      ? GPT2_CHARS
                                      : utf8_decode(bytes + at, char_length);
      const int original =
          code_point < GPT2_CHARS ? tokenizer->gpt2_bytes[code_point] : -1;
      if (original >= 0) {
        written += stream_put(stream, (uint8_t)original, out + written);
      } else {
        for (size_t i = 0; i < char_length; ++i) {
          written += stream_put(stream, bytes[at + i], out + written);
        }
      }
    }
    stream->at_start = false;
    at += char_length;
  }
  return written;
}

size_t decode_text_stream_flush(decode_text_stream_t* stream, char* out) {
  if (stream->pending_length == 0) return 0;
  const size_t written =
      stream_reject(stream, stream->pending, stream->pending_length, out);
  stream->pending_length = 0;
  return written;
}

//===----------------------------------------------------------------------===//
// From a GGUF file
//===----------------------------------------------------------------------===//

enum {
  KEY_MODEL = 0,
  KEY_TOKENS,
  KEY_SCORES,
  KEY_TYPES,
  KEY_MERGES,
  KEY_BOS,
  KEY_EOS,
  KEY_UNKNOWN,
  KEY_ADD_BOS,
  KEY_ADD_SPACE_PREFIX,
  KEY_PRE,
  KEY_COUNT,
};
static const char* const kTokenizerKeys[KEY_COUNT] = {
    "tokenizer.ggml.model",         "tokenizer.ggml.tokens",
    "tokenizer.ggml.scores",        "tokenizer.ggml.token_type",
    "tokenizer.ggml.merges",        "tokenizer.ggml.bos_token_id",
    "tokenizer.ggml.eos_token_id",  "tokenizer.ggml.unknown_token_id",
    "tokenizer.ggml.add_bos_token", "tokenizer.ggml.add_space_prefix",
    "tokenizer.ggml.pre",
};

// A value of |values|[key] that is an array of |count| strings (|count|
// 0: any), each free of NULs, into |out| (pointers into the value).
static weft_status_t gguf_strings(const decode_gguf_value_t* value,
                                  const char* path, const char* key,
                                  uint64_t count, char*** out,
                                  uint32_t* out_count) {
  if (value->type != DECODE_GGUF_ARRAY ||
      value->element_type != DECODE_GGUF_STRING) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "'%s' (gguf): %s is not an array of strings", path, key);
  }
  if (value->count > UINT32_MAX || (count && value->count != count)) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "'%s' (gguf): %s has %" PRIu64
                       " elements; tokenizer.ggml.tokens has %" PRIu64,
                       path, key, value->count, count);
  }
  *out = (char**)malloc((value->count + 1) * sizeof(char*));
  if (!*out) return WEFT_STATUS(RESOURCE_EXHAUSTED, "'%s': %s", path, key);
  for (uint64_t i = 0; i < value->count; ++i) {
    (*out)[i] = value->text + value->offsets[i];
    if (strlen((*out)[i]) + 1 != value->offsets[i + 1] - value->offsets[i]) {
      return WEFT_STATUS(INVALID_ARGUMENT,
                         "'%s' (gguf): %s[%" PRIu64 "] holds a NUL byte", path,
                         key, i);
    }
  }
  *out_count = (uint32_t)value->count;
  return WEFT_OK;
}

// A value that is an array of |count| numbers (|integers|: each a whole
// number that fits int32) or a single integer (|count| 0) into |out|.
static weft_status_t gguf_numbers(const decode_gguf_value_t* value,
                                  const char* path, const char* key,
                                  uint64_t count, bool integers,
                                  double* out_single, float* out_floats,
                                  int32_t* out_ints) {
  const bool is_array = value->type == DECODE_GGUF_ARRAY;
  if (!value->numbers || is_array != (count > 0) ||
      (count > 0 && value->count != count)) {
    return WEFT_STATUS(
        INVALID_ARGUMENT, "'%s' (gguf): %s must be %s%" PRIu64 "%s", path, key,
        count ? "an array of " : "a number", count ? count : (uint64_t)0,
        count ? " numbers (one per token)" : "");
  }
  for (uint64_t i = 0; i < value->count; ++i) {
    const double v = value->numbers[i];
    if (integers &&
        !(v == (double)(int64_t)v && v >= INT32_MIN && v <= INT32_MAX)) {
      return WEFT_STATUS(INVALID_ARGUMENT,
                         "'%s' (gguf): %s[%" PRIu64 "] is %g, not an integer",
                         path, key, i, v);
    }
    if (out_floats) out_floats[i] = (float)v;
    if (out_ints) out_ints[i] = (int32_t)v;
  }
  if (out_single) *out_single = value->numbers[0];
  return WEFT_OK;
}

weft_status_t decode_tokenizer_load_from(FILE* file, const char* path,
                                         uint64_t file_size,
                                         decode_tokenizer_t** out_tokenizer) {
  *out_tokenizer = NULL;
  decode_gguf_value_t values[KEY_COUNT];
  weft_status_t status = decode_gguf_read_values_from(
      file, path, file_size, KEY_COUNT, kTokenizerKeys, values);
  decode_vocab_t vocab;
  memset(&vocab, 0, sizeof(vocab));
  vocab.bos = vocab.eos = vocab.unknown = -1;
  const decode_gguf_value_t* model = &values[KEY_MODEL];
  if (weft_status_is_ok(status) && !model->found) {
    status = WEFT_STATUS(NOT_FOUND,
                         "'%s' (gguf) has no tokenizer (no key "
                         "tokenizer.ggml.model)",
                         path);
  }
  if (weft_status_is_ok(status)) {
    const bool is_string = model->type == DECODE_GGUF_STRING;
    const char* name = is_string ? model->text : "";
    if (is_string && strcmp(name, "llama") == 0) {
      vocab.kind = DECODE_TOKENIZER_SPM;
    } else if (is_string && strcmp(name, "gpt2") == 0) {
      vocab.kind = DECODE_TOKENIZER_BPE;
    } else {
      status = WEFT_STATUS(INVALID_ARGUMENT,
                           "'%s' (gguf): tokenizer.ggml.model is '%s'; weft "
                           "reads 'llama' (SentencePiece) and 'gpt2' (BPE)",
                           path, is_string ? name : "(not a string)");
    }
  }
  // The word pattern (gpt2 alone splits words): the names llama.cpp
  // gives GPT-2's and Llama 3's.
  const decode_gguf_value_t* pre = &values[KEY_PRE];
  if (weft_status_is_ok(status) && vocab.kind == DECODE_TOKENIZER_BPE &&
      pre->found) {
    // (A name holding a NUL is no name: its text stops short of it.)
    const bool is_string =
        pre->type == DECODE_GGUF_STRING &&
        strlen(pre->text) + 1 == pre->offsets[1] - pre->offsets[0];
    const char* name = is_string ? pre->text : "";
    if (is_string &&
        (strcmp(name, "default") == 0 || strcmp(name, "gpt2") == 0)) {
      vocab.pre = DECODE_PRETOKENIZER_GPT2;
    } else if (is_string &&
               (strcmp(name, "llama-bpe") == 0 || strcmp(name, "llama3") == 0 ||
                strcmp(name, "llama-v3") == 0)) {
      vocab.pre = DECODE_PRETOKENIZER_LLAMA3;
    } else {
      status = WEFT_STATUS(
          INVALID_ARGUMENT,
          "'%s' (gguf): tokenizer.ggml.pre is '%s'; weft knows 'default' "
          "and 'gpt2' (GPT-2's word pattern, as with no key) and "
          "'llama-bpe', 'llama3' and 'llama-v3' (Llama 3's)",
          path, pre->type == DECODE_GGUF_STRING ? pre->text : "(not a string)");
    }
  }
  for (int k = KEY_TOKENS; weft_status_is_ok(status) && k <= KEY_MERGES; ++k) {
    const bool required =
        k == KEY_TOKENS ||
        (k == KEY_MERGES && vocab.kind == DECODE_TOKENIZER_BPE);
    if (required && !values[k].found) {
      status = WEFT_STATUS(INVALID_ARGUMENT, "'%s' (gguf): no key %s", path,
                           kTokenizerKeys[k]);
    }
  }
  if (weft_status_is_ok(status)) {
    status = gguf_strings(&values[KEY_TOKENS], path, kTokenizerKeys[KEY_TOKENS],
                          0, &vocab.tokens, &vocab.count);
  }
  if (weft_status_is_ok(status) && values[KEY_SCORES].found) {
    vocab.scores = (float*)malloc((vocab.count + 1) * sizeof(float));
    status = vocab.scores
                 ? gguf_numbers(&values[KEY_SCORES], path,
                                kTokenizerKeys[KEY_SCORES], vocab.count, false,
                                NULL, vocab.scores, NULL)
                 : WEFT_STATUS(RESOURCE_EXHAUSTED, "'%s': scores", path);
  }
  if (weft_status_is_ok(status) && values[KEY_TYPES].found) {
    vocab.types = (int32_t*)malloc((vocab.count + 1) * sizeof(int32_t));
    status = vocab.types ? gguf_numbers(&values[KEY_TYPES], path,
                                        kTokenizerKeys[KEY_TYPES], vocab.count,
                                        true, NULL, NULL, vocab.types)
                         : WEFT_STATUS(RESOURCE_EXHAUSTED, "'%s': types", path);
  }
  if (weft_status_is_ok(status) && values[KEY_MERGES].found &&
      vocab.kind == DECODE_TOKENIZER_BPE) {
    status = gguf_strings(&values[KEY_MERGES], path, kTokenizerKeys[KEY_MERGES],
                          0, &vocab.merges, &vocab.merge_count);
  }
  int64_t* const ids[3] = {&vocab.bos, &vocab.eos, &vocab.unknown};
  for (int k = KEY_BOS; weft_status_is_ok(status) && k <= KEY_UNKNOWN; ++k) {
    if (!values[k].found) continue;
    double id = 0;
    status = gguf_numbers(&values[k], path, kTokenizerKeys[k], 0, true, &id,
                          NULL, NULL);
    if (weft_status_is_ok(status) && id < 0) {
      status = WEFT_STATUS(INVALID_ARGUMENT, "'%s' (gguf): %s is %g", path,
                           kTokenizerKeys[k], id);
    }
    *ids[k - KEY_BOS] = (int64_t)id;
  }
  // BOS unless the file says otherwise: SentencePiece's, and Llama 3's
  // (llama.cpp's default for that pattern).
  vocab.add_bos = vocab.kind == DECODE_TOKENIZER_SPM ||
                  vocab.pre == DECODE_PRETOKENIZER_LLAMA3;
  if (weft_status_is_ok(status) && values[KEY_ADD_BOS].found) {
    double add = 0;
    status =
        gguf_numbers(&values[KEY_ADD_BOS], path, kTokenizerKeys[KEY_ADD_BOS], 0,
                     false, &add, NULL, NULL);
    vocab.add_bos = add != 0;
  }
  if (weft_status_is_ok(status) && values[KEY_ADD_SPACE_PREFIX].found) {
    double add = 0;
    status = gguf_numbers(&values[KEY_ADD_SPACE_PREFIX], path,
                          kTokenizerKeys[KEY_ADD_SPACE_PREFIX], 0, false, &add,
                          NULL, NULL);
    vocab.no_space_prefix = add == 0;
  }
  if (weft_status_is_ok(status)) {
    char source[512];
    snprintf(source, sizeof(source), "'%s' (gguf)", path);
    status = decode_tokenizer_create(&vocab, source, out_tokenizer);
  }
  // The strings point into |values|: only the arrays are the vocab's.
  free(vocab.tokens);
  free(vocab.merges);
  free(vocab.scores);
  free(vocab.types);
  for (int k = 0; k < KEY_COUNT; ++k) {
    decode_gguf_value_deinitialize(&values[k]);
  }
  return status;
}

weft_status_t decode_tokenizer_load(const char* path,
                                    decode_tokenizer_t** out_tokenizer) {
  *out_tokenizer = NULL;
  FILE* file = fopen(path, "rb");
  if (!file) {
    return WEFT_STATUS(NOT_FOUND, "cannot open '%s'", path);
  }
  weft_status_t status = WEFT_OK;
  if (fseeko(file, 0, SEEK_END) != 0) {
    status = WEFT_STATUS(UNAVAILABLE, "'%s': cannot seek", path);
  } else {
    status = decode_tokenizer_load_from(file, path, (uint64_t)ftello(file),
                                        out_tokenizer);
  }
  fclose(file);
  return status;
}

//===----------------------------------------------------------------------===//
// The synthetic vocabulary
//===----------------------------------------------------------------------===//

// Words of children's stories, whose "▁"-prefixed prefixes come first.
static const char* const kSyntheticWords[] = {
    "Once",  "upon", "a",    "time",   "there", "was",  "little", "girl",
    "named", "Lily", "She",  "loved",  "to",    "play", "in",     "the",
    "park",  "with", "her",  "friend", "Tom",   "One",  "day",    "they",
    "saw",   "big",  "red",  "ball",   "and",   "went", "home",   "happy",
    "The",   "end",  "He",   "said",   "you",   "is",   "it",     "of",
    "on",    "for",  "that", "at",     "his",   "had",  "were",   "be",
    "not",   "but",  "we",   "so",     "very",  "good", "cat",    "dog",
    "tree",  "sun",  "can",  "like",   "what",  "do",   "all",    "when",
    "up",    "out",  "go",   "see",    "look",  "run",  "fun",    "mom",
};

typedef struct synthetic_t {
  decode_vocab_t* vocab;
  uint32_t target;
  uint64_t mask;
  char** set;  // open addressing over the pieces added
  bool failed;
} synthetic_t;

// Adds piece |text| (scored below every one before) unless it is there.
static void synthetic_add(synthetic_t* synthetic, const char* text,
                          int32_t type) {
  decode_vocab_t* vocab = synthetic->vocab;
  if (synthetic->failed || vocab->count == synthetic->target) return;
  const size_t length = strlen(text);
  uint64_t slot = decode_hash(text, length) & synthetic->mask;
  while (synthetic->set[slot]) {
    if (strcmp(synthetic->set[slot], text) == 0) return;
    slot = (slot + 1) & synthetic->mask;
  }
  char* copy = (char*)malloc(length + 1);
  if (!copy) {
    synthetic->failed = true;
    return;
  }
  memcpy(copy, text, length + 1);
  synthetic->set[slot] = copy;
  const uint32_t id = vocab->count++;
  vocab->tokens[id] = copy;
  vocab->types[id] = type;
  vocab->scores[id] = type == DECODE_TOKEN_NORMAL ? -(float)(id + 1) : 0.0f;
}

weft_status_t decode_vocab_synthetic(uint32_t vocab_size,
                                     decode_vocab_t* out_vocab) {
  memset(out_vocab, 0, sizeof(*out_vocab));
  if (vocab_size < DECODE_VOCAB_SYNTHETIC_MIN) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "a synthetic vocabulary of %u tokens (at least %u)",
                       vocab_size, DECODE_VOCAB_SYNTHETIC_MIN);
  }
  decode_vocab_t* vocab = out_vocab;
  vocab->kind = DECODE_TOKENIZER_SPM;
  vocab->bos = 1;
  vocab->eos = 2;
  vocab->unknown = 0;
  vocab->add_bos = true;
  uint64_t slots = 2;
  while (slots < 2ull * vocab_size) slots *= 2;
  synthetic_t synthetic = {vocab, vocab_size, slots - 1, NULL, false};
  vocab->tokens = (char**)calloc(vocab_size, sizeof(char*));
  vocab->scores = (float*)calloc(vocab_size, sizeof(float));
  vocab->types = (int32_t*)calloc(vocab_size, sizeof(int32_t));
  synthetic.set = (char**)calloc(slots, sizeof(char*));
  if (!vocab->tokens || !vocab->scores || !vocab->types || !synthetic.set) {
    synthetic.failed = true;
  }
  synthetic_add(&synthetic, "<unk>", DECODE_TOKEN_UNKNOWN);
  synthetic_add(&synthetic, "<s>", DECODE_TOKEN_CONTROL);
  synthetic_add(&synthetic, "</s>", DECODE_TOKEN_CONTROL);
  char piece[32];
  for (int b = 0; b < 256; ++b) {
    snprintf(piece, sizeof(piece), "<0x%02X>", b);
    synthetic_add(&synthetic, piece, DECODE_TOKEN_BYTE);
  }
  synthetic_add(&synthetic, SPM_SPACE, DECODE_TOKEN_NORMAL);
  for (int c = 0x21; c < 0x7F; ++c) {
    piece[0] = (char)c, piece[1] = '\0';
    synthetic_add(&synthetic, piece, DECODE_TOKEN_NORMAL);
  }
  const size_t word_count =
      sizeof(kSyntheticWords) / sizeof(kSyntheticWords[0]);
  for (size_t w = 0; w < word_count; ++w) {
    const size_t length = strlen(kSyntheticWords[w]);
    for (size_t k = 1; k <= length; ++k) {
      snprintf(piece, sizeof(piece), SPM_SPACE "%.*s", (int)k,
               kSyntheticWords[w]);
      synthetic_add(&synthetic, piece, DECODE_TOKEN_NORMAL);
    }
  }
  // Then letters after a space, letter pairs, pairs after a space,
  // triples, triples after a space: far more than 32000.
  for (int pass = 0; pass < 5; ++pass) {
    const int letters = pass == 0 ? 1 : pass <= 2 ? 2 : 3;
    const bool spaced = pass == 0 || pass == 2 || pass == 4;
    const int total = letters == 1 ? 52 : letters == 2 ? 26 * 26 : 26 * 26 * 26;
    for (int n = 0; n < total; ++n) {
      size_t at = 0;
      if (spaced) at += (size_t)snprintf(piece, sizeof(piece), SPM_SPACE);
      if (letters == 1) {
        piece[at++] = (char)(n < 26 ? 'a' + n : 'A' + n - 26);
      } else {
        for (int l = letters - 1, rest = n; l >= 0; --l, rest /= 26) {
          piece[at + (size_t)l] = (char)('a' + rest % 26);
        }
        at += (size_t)letters;
      }
      piece[at] = '\0';
      synthetic_add(&synthetic, piece, DECODE_TOKEN_NORMAL);
    }
  }
  for (uint32_t n = 0; vocab->count < vocab_size && !synthetic.failed; ++n) {
    snprintf(piece, sizeof(piece), "<unused_%u>", n);
    synthetic_add(&synthetic, piece, DECODE_TOKEN_UNUSED);
  }
  free(synthetic.set);
  if (synthetic.failed) {
    decode_vocab_deinitialize(vocab);
    return WEFT_STATUS(RESOURCE_EXHAUSTED, "a synthetic vocabulary of %u",
                       vocab_size);
  }
  return WEFT_OK;
}

void decode_vocab_deinitialize(decode_vocab_t* vocab) {
  for (uint32_t i = 0; vocab->tokens && i < vocab->count; ++i) {
    free(vocab->tokens[i]);
  }
  for (uint32_t i = 0; vocab->merges && i < vocab->merge_count; ++i) {
    free(vocab->merges[i]);
  }
  free(vocab->tokens);
  free(vocab->merges);
  free(vocab->scores);
  free(vocab->types);
  memset(vocab, 0, sizeof(*vocab));
}
