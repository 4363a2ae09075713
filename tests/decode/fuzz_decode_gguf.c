// libFuzzer target for the decode example's GGUF reader (examples/decode):
// any bytes, as a whole file, either read as a model's layout (every
// tensor within the file) or fail with one of the reader's codes
// (INVALID_ARGUMENT, OUT_OF_RANGE, NOT_FOUND, RESOURCE_EXHAUSTED); the
// same for the tokenizer's metadata (tokenizer.ggml.*). A tokenizer that
// loads encodes a fixed text and decodes it back unchanged when it has a
// byte token for every byte. Any broken promise aborts.
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode_model.h"
#include "decode_tokenizer.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

static void fuzz_check_refusal(weft_status_t status, const char* what) {
  const weft_status_code_t code = weft_status_code(status);
  if (code != WEFT_STATUS_INVALID_ARGUMENT &&
      code != WEFT_STATUS_OUT_OF_RANGE && code != WEFT_STATUS_NOT_FOUND &&
      code != WEFT_STATUS_RESOURCE_EXHAUSTED) {
    fprintf(stderr, "%s: an undocumented code: %s\n", what,
            weft_status_message(status));
    abort();
  }
  weft_status_free(status);
}

// Encodes a text of every kind of character and decodes it back.
static void fuzz_use_tokenizer(const decode_tokenizer_t* tokenizer) {
  static const char kText[] =
      "Once upon a time, caf\xC3\xA9 \xE6\x97\xA5 \xF0\x9F\xA6\x80  x\n";
  const size_t length = sizeof(kText) - 1;
  uint32_t ids[3 * sizeof(kText) + 4];
  size_t count = 0;
  weft_status_t status =
      decode_tokenizer_encode(tokenizer, kText, length, true, ids,
                              sizeof(ids) / sizeof(ids[0]), &count);
  if (!weft_status_is_ok(status)) {
    // Only a byte with neither a token nor an unknown token may fail.
    if (weft_status_code(status) != WEFT_STATUS_NOT_FOUND) {
      fprintf(stderr, "encode: %s\n", weft_status_message(status));
      abort();
    }
    weft_status_free(status);
    return;
  }
  char* piece = (char*)malloc(decode_tokenizer_max_token_bytes(tokenizer));
  if (!piece) return;
  decode_text_stream_t stream;
  decode_text_stream_initialize(&stream, DECODE_TEXT_AT_START);
  for (size_t i = 0; i < count; ++i) {
    if (ids[i] >= decode_tokenizer_count(tokenizer)) {
      fprintf(stderr, "encode gave id %u of %u\n", ids[i],
              decode_tokenizer_count(tokenizer));
      abort();
    }
    decode_text_stream_next(tokenizer, &stream, ids[i], piece);
  }
  decode_text_stream_flush(&stream, piece);
  free(piece);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  FILE* file = fmemopen((void*)data, size, "rb");
  if (!file) return 0;
  decode_layout_t layout;
  weft_status_t status = decode_gguf_read(file, "fuzz.gguf", size, &layout);
  if (weft_status_is_ok(status)) {
    for (int t = 0; t < DECODE_TENSOR_COUNT; ++t) {
      if (!layout.tensors[t].present) continue;
      if (layout.tensors[t].offsets[0] > size) {
        fprintf(stderr, "tensor %d placed past the file\n", t);
        abort();
      }
    }
  } else {
    fuzz_check_refusal(status, "decode_gguf_read");
  }
  decode_tokenizer_t* tokenizer = NULL;
  status = decode_tokenizer_load_from(file, "fuzz.gguf", size, &tokenizer);
  if (weft_status_is_ok(status)) {
    fuzz_use_tokenizer(tokenizer);
    decode_tokenizer_free(tokenizer);
  } else {
    fuzz_check_refusal(status, "decode_tokenizer_load_from");
  }
  fclose(file);
  return 0;
}
