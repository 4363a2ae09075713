// weft decode example: llama2.c's checkpoint format.
//
// A header of seven int32 (dim, hidden_dim, n_layers, n_heads, n_kv_heads,
// vocab_size, seq_len; a negative vocab_size means the classifier is a
// tensor of its own, a positive one that it is the token embedding), then
// f32 tensors in this order, each per-layer kind holding every layer:
// token_embedding, attn_norm, wq, wk, wv, wo, ffn_norm, w1, w2, w3,
// final_norm, the two rotary tables llama2.c once precomputed (seq_len x
// head_size / 2 each, skipped: the decoder computes its own), and the
// classifier when it is not shared. RMSNorm epsilon 1e-5, rotary base
// 10000 (the format has no field for either).
#include <errno.h>
#include <math.h>
#include <string.h>

#include "decode_checkpoint.h"
#include "decode_model.h"

#define LLAMA2C_HEADER_BYTES (7 * sizeof(int32_t))

// The file order of the tensors before the rotary tables.
static const decode_tensor_t kLlama2cOrder[] = {
    DECODE_TENSOR_TOKEN_EMBEDDING, DECODE_TENSOR_ATTN_NORM,
    DECODE_TENSOR_WQ,              DECODE_TENSOR_WK,
    DECODE_TENSOR_WV,              DECODE_TENSOR_WO,
    DECODE_TENSOR_FFN_NORM,        DECODE_TENSOR_W1,
    DECODE_TENSOR_W2,              DECODE_TENSOR_W3,
    DECODE_TENSOR_FINAL_NORM,
};

static const char* const kLlama2cHeaderFields[7] = {
    "dim",        "hidden_dim", "n_layers", "n_heads",
    "n_kv_heads", "vocab_size", "seq_len",
};

// The first bytes of a file (up to 8) for a message, in hex and as text
// with '.' for what does not print: 7f 45 4c 46 02 01 01 00 (".ELF....").
static void describe_start(const uint8_t* bytes, size_t count, char* out,
                           size_t capacity) {
  if (count > 8) count = 8;
  char text[9];
  size_t used = 0;
  for (size_t i = 0; i < count && used < capacity; ++i) {
    used += (size_t)snprintf(out + used, capacity - used, "%s%02x",
                             i ? " " : "", bytes[i]);
    text[i] = bytes[i] >= 0x20 && bytes[i] < 0x7f ? (char)bytes[i] : '.';
  }
  text[count] = '\0';
  if (used < capacity) snprintf(out + used, capacity - used, " (\"%s\")", text);
}

// Called for every file that does not start with "GGUF": a file that is
// not llama2.c either is told by its first bytes and what each format
// expects there.
weft_status_t decode_llama2c_read(FILE* file, const char* path,
                                  uint64_t file_size,
                                  decode_layout_t* out_layout) {
  memset(out_layout, 0, sizeof(*out_layout));
  snprintf(out_layout->format, sizeof(out_layout->format), "llama2.c");
  int32_t header[7];
  const size_t got = fread(header, 1, LLAMA2C_HEADER_BYTES, file);
  char start[64];
  describe_start((const uint8_t*)header, got, start, sizeof(start));
  if (got == 0) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "'%s' is empty: neither GGUF nor a llama2.c checkpoint",
                       path);
  }
  if (got < LLAMA2C_HEADER_BYTES) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "'%s' is neither GGUF nor a llama2.c checkpoint: it "
                       "starts with %s, not the GGUF magic \"GGUF\", and its "
                       "%zu bytes are fewer than the 28 of a llama2.c header",
                       path, start, got);
  }
  for (int i = 0; i < 7; ++i) {
    if (header[i] == 0 || (header[i] < 0 && i != 5)) {
      return WEFT_STATUS(INVALID_ARGUMENT,
                         "'%s' is neither GGUF nor a llama2.c checkpoint: it "
                         "starts with %s, not the GGUF magic \"GGUF\", and "
                         "as a llama2.c header (seven positive int32 sizes; "
                         "vocab_size may be negative) its field %d, %s, is "
                         "%d",
                         path, start, i, kLlama2cHeaderFields[i], header[i]);
    }
  }
  decode_config_t* config = &out_layout->config;
  config->dim = (uint32_t)header[0];
  config->hidden_dim = (uint32_t)header[1];
  config->n_layers = (uint32_t)header[2];
  config->n_heads = (uint32_t)header[3];
  config->n_kv_heads = (uint32_t)header[4];
  config->shared_classifier = header[5] > 0;
  config->vocab_size =
      header[5] > 0 ? (uint32_t)header[5] : (uint32_t)(-(int64_t)header[5]);
  config->seq_len = (uint32_t)header[6];
  config->rope_theta = 10000.0f;
  config->norm_eps = 1e-5f;
  weft_status_t status = decode_config_validate(config, path);
  if (!weft_status_is_ok(status)) return status;

  uint64_t offset = LLAMA2C_HEADER_BYTES;
  for (size_t i = 0; i < sizeof(kLlama2cOrder) / sizeof(kLlama2cOrder[0]);
       ++i) {
    const decode_tensor_t tensor = kLlama2cOrder[i];
    decode_tensor_location_t* location = &out_layout->tensors[tensor];
    location->present = true;  // its dtypes F32 (0): the layout is zeroed
    const uint32_t layers =
        decode_tensor_is_per_layer(tensor) ? config->n_layers : 1;
    const uint64_t bytes = decode_tensor_elements(config, tensor) * 4;
    for (uint32_t layer = 0; layer < layers; ++layer) {
      location->offsets[layer] = offset;
      offset += bytes;
    }
    if (offset > file_size) {
      return WEFT_STATUS(OUT_OF_RANGE,
                         "'%s' (llama2.c) is truncated: tensor '%s' ends at "
                         "byte %llu of a %llu-byte file",
                         path, decode_tensor_name(tensor),
                         (unsigned long long)offset,
                         (unsigned long long)file_size);
    }
  }
  // The rotary tables: unused, but a checkpoint without them is cut short.
  offset += 2ull * config->seq_len * (decode_head_size(config) / 2) * 4;
  if (offset > file_size) {
    return WEFT_STATUS(OUT_OF_RANGE,
                       "'%s' (llama2.c) is truncated: the rotary tables end "
                       "at byte %llu of a %llu-byte file",
                       path, (unsigned long long)offset,
                       (unsigned long long)file_size);
  }
  if (!config->shared_classifier) {
    decode_tensor_location_t* location =
        &out_layout->tensors[DECODE_TENSOR_CLASSIFIER];
    location->present = true;
    location->offsets[0] = offset;
    offset += decode_tensor_elements(config, DECODE_TENSOR_CLASSIFIER) * 4;
    if (offset > file_size) {
      return WEFT_STATUS(OUT_OF_RANGE,
                         "'%s' (llama2.c) is truncated: tensor 'classifier' "
                         "ends at byte %llu of a %llu-byte file",
                         path, (unsigned long long)offset,
                         (unsigned long long)file_size);
    }
  }
  return WEFT_OK;
}

// Writes |count| floats from |values|; false on a short write.
static bool write_floats(FILE* file, const float* values, size_t count) {
  return fwrite(values, sizeof(float), count, file) == count;
}

enum { kLlama2cChunk = 4096 };

// Writes |layer|'s |tensor| of |config| in chunks; false on a short write.
static bool write_tensor(FILE* file, const decode_config_t* config,
                         uint64_t seed, decode_tensor_t tensor,
                         uint32_t layer) {
  float chunk[kLlama2cChunk];
  const uint64_t elements = decode_tensor_elements(config, tensor);
  bool ok = true;
  for (uint64_t first = 0; ok && first < elements; first += kLlama2cChunk) {
    const size_t count = elements - first < kLlama2cChunk
                             ? (size_t)(elements - first)
                             : kLlama2cChunk;
    for (size_t e = 0; e < count; ++e) {
      chunk[e] = decode_random_weight(seed, tensor, layer, first + e);
    }
    ok = write_floats(file, chunk, count);
  }
  return ok;
}

weft_status_t decode_llama2c_write(FILE* file, const char* path,
                                   const decode_config_t* config,
                                   uint64_t seed) {
  int32_t header[7] = {
      (int32_t)config->dim,        (int32_t)config->hidden_dim,
      (int32_t)config->n_layers,   (int32_t)config->n_heads,
      (int32_t)config->n_kv_heads,
      config->shared_classifier ? (int32_t)config->vocab_size
                                : -(int32_t)config->vocab_size,
      (int32_t)config->seq_len,
  };
  bool ok = fwrite(header, sizeof(header), 1, file) == 1;
  for (size_t i = 0;
       ok && i < sizeof(kLlama2cOrder) / sizeof(kLlama2cOrder[0]); ++i) {
    const decode_tensor_t tensor = kLlama2cOrder[i];
    const uint32_t layers =
        decode_tensor_is_per_layer(tensor) ? config->n_layers : 1;
    for (uint32_t layer = 0; ok && layer < layers; ++layer) {
      ok = write_tensor(file, config, seed, tensor, layer);
    }
  }
  // The rotary tables llama2.c's export wrote (cos, then sin), for readers
  // that still use them.
  const uint32_t half = decode_head_size(config) / 2;
  if (half > kLlama2cChunk) {
    return WEFT_STATUS(INVALID_ARGUMENT, "%s: head size %u is over %d", path,
                       2 * half, 2 * kLlama2cChunk);
  }
  float row[kLlama2cChunk];
  for (int table = 0; ok && table < 2; ++table) {
    for (uint32_t pos = 0; ok && pos < config->seq_len; ++pos) {
      for (uint32_t j = 0; j < half; ++j) {
        const double frequency =
            1.0 / pow(config->rope_theta, (2.0 * j) / (2.0 * half));
        const double angle = pos * frequency;
        row[j] = (float)(table == 0 ? cos(angle) : sin(angle));
      }
      ok = write_floats(file, row, half);
    }
  }
  if (ok && !config->shared_classifier) {
    ok = write_tensor(file, config, seed, DECODE_TENSOR_CLASSIFIER, 0);
  }
  return ok ? WEFT_OK
            : WEFT_STATUS(UNAVAILABLE, "writing '%s' failed: %s", path,
                          strerror(errno));
}
