// weft decode example: GGUF v3 checkpoints of llama architecture.
//
// Little-endian: "GGUF", version 3, the tensor and metadata counts (u64),
// the metadata (key string, u32 type, value), the tensor infos (name,
// dimension count, dimensions with the fastest first, GGML type, offset
// into the data section), then the data section at the next multiple of
// general.alignment (32 by default). A string is a u64 length and bytes.
// Matrices are [ne0 = inputs][ne1 = outputs]: row-major [outputs][inputs],
// the layout llama2.c uses too. Matrices are F32, F16 or one of the block
// types Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K and Q6_K (decode_quant.h),
// mixed as quantized files mix them; norms are F32.
//
// Every count, length and offset is checked against the file before it is
// used, so a malformed file is an error, never a crash or a huge
// allocation.
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "decode_checkpoint.h"
#include "decode_gguf.h"
#include "decode_model.h"
#include "decode_quant.h"
#include "decode_tokenizer.h"

enum {
  GGUF_TYPE_UINT8 = 0,
  GGUF_TYPE_INT8 = 1,
  GGUF_TYPE_UINT16 = 2,
  GGUF_TYPE_INT16 = 3,
  GGUF_TYPE_UINT32 = 4,
  GGUF_TYPE_INT32 = 5,
  GGUF_TYPE_FLOAT32 = 6,
  GGUF_TYPE_BOOL = 7,
  GGUF_TYPE_STRING = 8,
  GGUF_TYPE_ARRAY = 9,
  GGUF_TYPE_UINT64 = 10,
  GGUF_TYPE_INT64 = 11,
  GGUF_TYPE_FLOAT64 = 12,
  GGUF_TYPE_COUNT,
};

#define GGUF_MAX_KEY 256
#define GGUF_MAX_DIMS 4
#define GGUF_DEFAULT_ALIGNMENT 32
// Far above any llama checkpoint (the 1.1B shape has 201 tensors), low
// enough that a corrupt count cannot make the infos a huge allocation.
#define GGUF_MAX_TENSORS 65536

// Names of GGML tensor types, for the message about an unsupported one.
static const char* gguf_ggml_type_name(uint32_t type) {
  static const char* const kNames[] = {
      "F32",     "F16",    "Q4_0",    "Q4_1",   "Q4_2",   "Q4_3",
      "Q5_0",    "Q5_1",   "Q8_0",    "Q8_1",   "Q2_K",   "Q3_K",
      "Q4_K",    "Q5_K",   "Q6_K",    "Q8_K",   "IQ2_XXS", "IQ2_XS",
      "IQ3_XXS", "IQ1_S",  "IQ4_NL",  "IQ3_S",  "IQ2_S",  "IQ4_XS",
      "I8",      "I16",    "I32",     "I64",    "F64",    "IQ1_M",
      "BF16",
  };
  if (type < sizeof(kNames) / sizeof(kNames[0])) return kNames[type];
  return "an unknown type";
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

typedef struct gguf_reader_t {
  FILE* file;
  const char* path;
  uint64_t size;
  uint64_t offset;  // of the next byte read
  weft_status_t status;
} gguf_reader_t;

// Reads |length| bytes; on a short file records OUT_OF_RANGE naming |what|.
static bool gguf_read(gguf_reader_t* reader, void* out, uint64_t length,
                      const char* what) {
  if (!weft_status_is_ok(reader->status)) return false;
  if (length > reader->size - reader->offset ||
      fread(out, 1, (size_t)length, reader->file) != length) {
    reader->status = WEFT_STATUS(OUT_OF_RANGE,
                                 "'%s' (gguf) is truncated: %s at byte %" PRIu64
                                 " runs past the end of the %" PRIu64
                                 "-byte file",
                                 reader->path, what, reader->offset,
                                 reader->size);
    return false;
  }
  reader->offset += length;
  return true;
}

static bool gguf_skip(gguf_reader_t* reader, uint64_t length,
                      const char* what) {
  if (!weft_status_is_ok(reader->status)) return false;
  if (length > reader->size - reader->offset ||
      fseeko(reader->file, (off_t)(reader->offset + length), SEEK_SET) != 0) {
    reader->status = WEFT_STATUS(OUT_OF_RANGE,
                                 "'%s' (gguf) is truncated: %s at byte %" PRIu64
                                 " runs past the end of the %" PRIu64
                                 "-byte file",
                                 reader->path, what, reader->offset,
                                 reader->size);
    return false;
  }
  reader->offset += length;
  return true;
}

// Checks |count| (the u64 at byte |at|) against the bytes left: |count|
// items of at least |item_size| bytes each must fit. One that cannot is
// refused naming it, its value and the file's size: in a file of full
// length the count is corrupt, and where the file was cut short it is
// still the first thing that does not fit, so the message says both.
static bool gguf_count_fits(gguf_reader_t* reader, uint64_t count,
                            uint64_t item_size, uint64_t at, const char* what,
                            const char* items) {
  if (!weft_status_is_ok(reader->status)) return false;
  const uint64_t left = reader->size - reader->offset;
  if (count <= left / item_size) return true;
  char need[96];
  if (item_size == 1) {
    snprintf(need, sizeof(need), "that many %s", items);
  } else {
    snprintf(need, sizeof(need), "that many %s of at least %" PRIu64 " bytes",
             items, item_size);
  }
  reader->status = WEFT_STATUS(
      OUT_OF_RANGE,
      "'%s' (gguf): %s at byte %" PRIu64 " is %" PRIu64
      ", implausible: %s do not fit the %" PRIu64 " bytes left of the %" PRIu64
      "-byte file (a corrupt count, or a truncated file)",
      reader->path, what, at, count, need, left, reader->size);
  return false;
}

static bool gguf_u32(gguf_reader_t* reader, uint32_t* out, const char* what) {
  return gguf_read(reader, out, 4, what);
}
static bool gguf_u64(gguf_reader_t* reader, uint64_t* out, const char* what) {
  return gguf_read(reader, out, 8, what);
}

// A string into |out| (at most |capacity| - 1 bytes kept, NUL-terminated;
// longer strings are read and cut).
static bool gguf_string(gguf_reader_t* reader, char* out, size_t capacity,
                        const char* what) {
  uint64_t length = 0;
  if (!gguf_u64(reader, &length, what)) return false;
  char length_of[GGUF_MAX_KEY + 64];
  snprintf(length_of, sizeof(length_of), "the length of %s", what);
  if (!gguf_count_fits(reader, length, 1, reader->offset - 8, length_of,
                       "bytes")) {
    return false;
  }
  const uint64_t kept = length < capacity - 1 ? length : capacity - 1;
  if (!gguf_read(reader, out, kept, what)) return false;
  out[kept] = '\0';
  return gguf_skip(reader, length - kept, what);
}

static uint64_t gguf_scalar_size(uint32_t type) {
  switch (type) {
    case GGUF_TYPE_UINT8:
    case GGUF_TYPE_INT8:
    case GGUF_TYPE_BOOL:
      return 1;
    case GGUF_TYPE_UINT16:
    case GGUF_TYPE_INT16:
      return 2;
    case GGUF_TYPE_UINT32:
    case GGUF_TYPE_INT32:
    case GGUF_TYPE_FLOAT32:
      return 4;
    case GGUF_TYPE_UINT64:
    case GGUF_TYPE_INT64:
    case GGUF_TYPE_FLOAT64:
      return 8;
    default:
      return 0;
  }
}

// A metadata value: integers and floats read into |out_*| (for the keys
// the decoder uses), strings into |text|, arrays skipped (tokenizer
// vocabularies: strings, element by element). |depth| bounds nested arrays.
typedef struct gguf_value_t {
  uint32_t type;
  bool is_integer;
  bool is_negative;
  uint64_t integer;
  double real;
  char text[64];
} gguf_value_t;

static bool gguf_value(gguf_reader_t* reader, uint32_t type, const char* key,
                       int depth, gguf_value_t* out) {
  memset(out, 0, sizeof(*out));
  out->type = type;
  char what[GGUF_MAX_KEY + 32];
  snprintf(what, sizeof(what), "the value of '%s'", key);
  if (type == GGUF_TYPE_STRING) {
    return gguf_string(reader, out->text, sizeof(out->text), what);
  }
  if (type == GGUF_TYPE_ARRAY) {
    uint32_t element_type = 0;
    uint64_t count = 0;
    if (!gguf_u32(reader, &element_type, what) ||
        !gguf_u64(reader, &count, what)) {
      return false;
    }
    if (element_type >= GGUF_TYPE_COUNT || depth > 2) {
      reader->status = WEFT_STATUS(
          INVALID_ARGUMENT, "'%s' (gguf): key '%s' is an array of type %u",
          reader->path, key, element_type);
      return false;
    }
    // Strings and arrays take at least 8 bytes each (their length or
    // count), so the count is bounded by the file, then read one by one.
    const uint64_t element_size = gguf_scalar_size(element_type);
    char count_of[GGUF_MAX_KEY + 32];
    snprintf(count_of, sizeof(count_of), "the element count of '%s'", key);
    if (!gguf_count_fits(reader, count, element_size ? element_size : 8,
                         reader->offset - 8, count_of, "elements")) {
      return false;
    }
    if (element_size) return gguf_skip(reader, count * element_size, what);
    for (uint64_t i = 0; i < count; ++i) {
      gguf_value_t element;
      if (!gguf_value(reader, element_type, key, depth + 1, &element)) {
        return false;
      }
    }
    return true;
  }
  const uint64_t size = gguf_scalar_size(type);
  if (size == 0) {
    reader->status = WEFT_STATUS(INVALID_ARGUMENT,
                                 "'%s' (gguf): key '%s' has unknown type %u",
                                 reader->path, key, type);
    return false;
  }
  uint8_t bytes[8] = {0};
  if (!gguf_read(reader, bytes, size, what)) return false;
  if (type == GGUF_TYPE_FLOAT32) {
    float v;
    memcpy(&v, bytes, 4);
    out->real = v;
  } else if (type == GGUF_TYPE_FLOAT64) {
    memcpy(&out->real, bytes, 8);
  } else {
    // An integer of |size| bytes (little-endian, as the whole file is read),
    // sign-extended for the signed types.
    uint64_t raw = 0;
    memcpy(&raw, bytes, size);
    const bool is_signed = type == GGUF_TYPE_INT8 || type == GGUF_TYPE_INT16 ||
                           type == GGUF_TYPE_INT32 || type == GGUF_TYPE_INT64;
    const unsigned bits = (unsigned)size * 8;
    if (is_signed && bits < 64 && ((raw >> (bits - 1)) & 1)) {
      raw |= ~0ull << bits;
    }
    out->integer = raw;
    out->is_negative = is_signed && (int64_t)raw < 0;
    out->is_integer = true;
  }
  return true;
}

// The metadata the decoder reads.
typedef struct gguf_metadata_t {
  char architecture[64];
  uint64_t alignment;
  // Found flags and values of the llama.* integer keys.
  bool has[7];
  uint32_t values[7];
  bool has_rope_base;
  double rope_base;
  bool has_epsilon;
  double epsilon;
} gguf_metadata_t;

enum {
  GGUF_KEY_DIM = 0,
  GGUF_KEY_HIDDEN,
  GGUF_KEY_LAYERS,
  GGUF_KEY_HEADS,
  GGUF_KEY_KV_HEADS,
  GGUF_KEY_CONTEXT,
  GGUF_KEY_VOCAB,
};
static const char* const kGgufIntegerKeys[7] = {
    "llama.embedding_length",        "llama.feed_forward_length",
    "llama.block_count",             "llama.attention.head_count",
    "llama.attention.head_count_kv", "llama.context_length",
    "llama.vocab_size",
};

static bool gguf_read_metadata(gguf_reader_t* reader, uint64_t count,
                               gguf_metadata_t* out) {
  memset(out, 0, sizeof(*out));
  out->alignment = GGUF_DEFAULT_ALIGNMENT;
  for (uint64_t i = 0; i < count; ++i) {
    char key[GGUF_MAX_KEY];
    uint32_t type = 0;
    gguf_value_t value;
    if (!gguf_string(reader, key, sizeof(key), "a metadata key") ||
        !gguf_u32(reader, &type, "a metadata type") ||
        !gguf_value(reader, type, key, 0, &value)) {
      return false;
    }
    bool bad_integer = false;
    bool is_rope = false;
    if (strcmp(key, "general.architecture") == 0 &&
        type == GGUF_TYPE_STRING) {
      snprintf(out->architecture, sizeof(out->architecture), "%s",
               value.text);
    } else if (strcmp(key, "general.alignment") == 0) {
      bad_integer = !value.is_integer || value.is_negative ||
                    value.integer == 0 || value.integer > 65536 ||
                    (value.integer & (value.integer - 1)) != 0;
      out->alignment = value.integer;
    } else if ((is_rope = strcmp(key, "llama.rope.freq_base") == 0) ||
               strcmp(key, "llama.attention.layer_norm_rms_epsilon") == 0) {
      const double real =
          !value.is_integer   ? value.real
          : value.is_negative ? (double)(int64_t)value.integer
                              : (double)value.integer;
      // Checked here: a double beyond float's range does not convert.
      if (!(real > 0.0) || !(real <= FLT_MAX)) {
        reader->status = WEFT_STATUS(
            INVALID_ARGUMENT,
            "'%s' (gguf): key '%s' must be a positive number (got %g)",
            reader->path, key, real);
        return false;
      }
      if (is_rope) {
        out->has_rope_base = true;
        out->rope_base = real;
      } else {
        out->has_epsilon = true;
        out->epsilon = real;
      }
    } else {
      for (int k = 0; k < 7; ++k) {
        if (strcmp(key, kGgufIntegerKeys[k]) == 0) {
          bad_integer = !value.is_integer || value.is_negative ||
                        value.integer > UINT32_MAX;
          out->has[k] = true;
          out->values[k] = (uint32_t)value.integer;
        }
      }
    }
    if (bad_integer) {
      reader->status = WEFT_STATUS(
          INVALID_ARGUMENT,
          "'%s' (gguf): key '%s' must be a positive integer that fits 32 "
          "bits%s",
          reader->path, key,
          strcmp(key, "general.alignment") == 0 ? " and a power of two" : "");
      return false;
    }
  }
  return true;
}

// The GGUF name of (|tensor|, |layer|).
static void gguf_tensor_name(decode_tensor_t tensor, uint32_t layer,
                             char* out, size_t capacity) {
  static const char* const kBlockNames[DECODE_TENSOR_COUNT] = {
      [DECODE_TENSOR_ATTN_NORM] = "attn_norm",
      [DECODE_TENSOR_WQ] = "attn_q",
      [DECODE_TENSOR_WK] = "attn_k",
      [DECODE_TENSOR_WV] = "attn_v",
      [DECODE_TENSOR_WO] = "attn_output",
      [DECODE_TENSOR_FFN_NORM] = "ffn_norm",
      [DECODE_TENSOR_W1] = "ffn_gate",
      [DECODE_TENSOR_W2] = "ffn_down",
      [DECODE_TENSOR_W3] = "ffn_up",
  };
  switch (tensor) {
    case DECODE_TENSOR_TOKEN_EMBEDDING:
      snprintf(out, capacity, "token_embd.weight");
      break;
    case DECODE_TENSOR_FINAL_NORM:
      snprintf(out, capacity, "output_norm.weight");
      break;
    case DECODE_TENSOR_CLASSIFIER:
      snprintf(out, capacity, "output.weight");
      break;
    default:
      snprintf(out, capacity, "blk.%u.%s.weight", layer, kBlockNames[tensor]);
      break;
  }
}

// Finds (tensor, layer) for a GGUF tensor name; false for names the
// decoder does not use (they are ignored).
static bool gguf_tensor_lookup(const char* name, const decode_config_t* config,
                               decode_tensor_t* out_tensor,
                               uint32_t* out_layer) {
  char expected[96];
  for (int t = 0; t < DECODE_TENSOR_COUNT; ++t) {
    const decode_tensor_t tensor = (decode_tensor_t)t;
    if (!decode_tensor_is_per_layer(tensor)) {
      gguf_tensor_name(tensor, 0, expected, sizeof(expected));
      if (strcmp(name, expected) == 0) {
        *out_tensor = tensor;
        *out_layer = 0;
        return true;
      }
      continue;
    }
    unsigned layer = 0;
    int consumed = 0;
    if (sscanf(name, "blk.%u.%n", &layer, &consumed) == 1 && consumed > 0 &&
        layer < config->n_layers) {
      gguf_tensor_name(tensor, layer, expected, sizeof(expected));
      if (strcmp(name, expected) == 0) {
        *out_tensor = tensor;
        *out_layer = layer;
        return true;
      }
    }
  }
  return false;
}

// The expected [ne0, ne1] of |tensor| (ne1 = 1 for vectors).
static void gguf_expected_shape(const decode_config_t* config,
                                decode_tensor_t tensor, uint64_t shape[2]) {
  const uint64_t dim = config->dim;
  switch (tensor) {
    case DECODE_TENSOR_TOKEN_EMBEDDING:
    case DECODE_TENSOR_CLASSIFIER:
      shape[0] = dim, shape[1] = config->vocab_size;
      break;
    case DECODE_TENSOR_ATTN_NORM:
    case DECODE_TENSOR_FFN_NORM:
    case DECODE_TENSOR_FINAL_NORM:
      shape[0] = dim, shape[1] = 1;
      break;
    case DECODE_TENSOR_WQ:
    case DECODE_TENSOR_WO:
      shape[0] = dim, shape[1] = dim;
      break;
    case DECODE_TENSOR_WK:
    case DECODE_TENSOR_WV:
      shape[0] = dim, shape[1] = decode_kv_dim(config);
      break;
    case DECODE_TENSOR_W1:
    case DECODE_TENSOR_W3:
      shape[0] = dim, shape[1] = config->hidden_dim;
      break;
    case DECODE_TENSOR_W2:
      shape[0] = config->hidden_dim, shape[1] = dim;
      break;
    default:
      shape[0] = shape[1] = 0;
      break;
  }
}

static bool gguf_tensor_is_norm(decode_tensor_t tensor) {
  return tensor == DECODE_TENSOR_ATTN_NORM ||
         tensor == DECODE_TENSOR_FFN_NORM ||
         tensor == DECODE_TENSOR_FINAL_NORM;
}

// "[ne0, ne1, ...]" of the first |n_dims| of |dims|.
static void gguf_format_shape(const uint64_t* dims, uint32_t n_dims,
                              char* out, size_t capacity) {
  size_t used = (size_t)snprintf(out, capacity, "[");
  for (uint32_t d = 0; d < n_dims && used < capacity; ++d) {
    used += (size_t)snprintf(out + used, capacity - used, "%s%" PRIu64,
                             d ? ", " : "", dims[d]);
  }
  if (used < capacity) snprintf(out + used, capacity - used, "]");
}

// One tensor info as read.
typedef struct gguf_tensor_info_t {
  char name[96];
  uint32_t n_dims;
  uint64_t dims[GGUF_MAX_DIMS];
  uint32_t type;
  uint64_t offset;
} gguf_tensor_info_t;

// The header: magic, version 3, the tensor and metadata counts (the
// latter checked against the file). False with |reader|'s status set.
static bool gguf_read_header(gguf_reader_t* reader, uint64_t* tensor_count,
                             uint64_t* metadata_count) {
  char magic[4];
  uint32_t version = 0;
  gguf_read(reader, magic, 4, "the magic");
  if (weft_status_is_ok(reader->status) && memcmp(magic, "GGUF", 4) != 0) {
    reader->status = WEFT_STATUS(
        INVALID_ARGUMENT, "'%s' does not start with \"GGUF\"", reader->path);
  }
  gguf_u32(reader, &version, "the version");
  if (weft_status_is_ok(reader->status) && version != 3) {
    reader->status = WEFT_STATUS(
        INVALID_ARGUMENT, "'%s' is GGUF version %u; weft reads version 3",
        reader->path, version);
  }
  gguf_u64(reader, tensor_count, "the tensor count");
  gguf_u64(reader, metadata_count, "the metadata count");
  // An entry is at least a key's length, a type and a one-byte value.
  return gguf_count_fits(reader, *metadata_count, 8 + 4 + 1,
                         reader->offset - 8, "the metadata count", "entries");
}

weft_status_t decode_gguf_read(FILE* file, const char* path,
                               uint64_t file_size,
                               decode_layout_t* out_layout) {
  memset(out_layout, 0, sizeof(*out_layout));
  snprintf(out_layout->format, sizeof(out_layout->format), "gguf");
  gguf_reader_t reader = {file, path, file_size, 0, WEFT_OK};
  uint64_t tensor_count = 0;
  uint64_t metadata_count = 0;
  gguf_metadata_t metadata;
  if (gguf_read_header(&reader, &tensor_count, &metadata_count)) {
    gguf_read_metadata(&reader, metadata_count, &metadata);
  }
  if (!weft_status_is_ok(reader.status)) return reader.status;
  if (strcmp(metadata.architecture, "llama") != 0) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "'%s' (gguf): general.architecture is '%s'; the "
                       "decoder takes 'llama'",
                       path,
                       metadata.architecture[0] ? metadata.architecture
                                                : "(missing)");
  }
  const int required[] = {GGUF_KEY_DIM, GGUF_KEY_HIDDEN, GGUF_KEY_LAYERS,
                          GGUF_KEY_HEADS, GGUF_KEY_CONTEXT};
  for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); ++i) {
    if (!metadata.has[required[i]]) {
      return WEFT_STATUS(INVALID_ARGUMENT, "'%s' (gguf): no key '%s'", path,
                         kGgufIntegerKeys[required[i]]);
    }
  }
  decode_config_t* config = &out_layout->config;
  config->dim = metadata.values[GGUF_KEY_DIM];
  config->hidden_dim = metadata.values[GGUF_KEY_HIDDEN];
  config->n_layers = metadata.values[GGUF_KEY_LAYERS];
  config->n_heads = metadata.values[GGUF_KEY_HEADS];
  config->n_kv_heads = metadata.has[GGUF_KEY_KV_HEADS]
                           ? metadata.values[GGUF_KEY_KV_HEADS]
                           : config->n_heads;
  config->seq_len = metadata.values[GGUF_KEY_CONTEXT];
  config->rope_theta =
      metadata.has_rope_base ? (float)metadata.rope_base : 10000.0f;
  config->norm_eps = metadata.has_epsilon ? (float)metadata.epsilon : 1e-5f;
  // The vocabulary comes from the embedding's shape (checked against
  // llama.vocab_size when that is there); validated once it is known.
  config->vocab_size = 1;
  weft_status_t status = decode_config_validate(config, path);
  if (!weft_status_is_ok(status)) return status;

  // Tensor infos: each takes at least 24 bytes, which bounds the count.
  if (!gguf_count_fits(&reader, tensor_count, 24, 8, "the tensor count",
                       "tensor infos")) {
    return reader.status;
  }
  if (tensor_count > GGUF_MAX_TENSORS) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "'%s' (gguf): %" PRIu64 " tensors (at most %d)", path,
                       tensor_count, GGUF_MAX_TENSORS);
  }
  gguf_tensor_info_t* infos = NULL;
  if (tensor_count > 0) {
    infos = (gguf_tensor_info_t*)calloc((size_t)tensor_count, sizeof(*infos));
    if (!infos) {
      return WEFT_STATUS(RESOURCE_EXHAUSTED,
                         "'%s' (gguf): %" PRIu64 " tensor infos", path,
                         tensor_count);
    }
  }
  for (uint64_t i = 0; weft_status_is_ok(reader.status) && i < tensor_count;
       ++i) {
    gguf_tensor_info_t* info = &infos[i];
    gguf_string(&reader, info->name, sizeof(info->name), "a tensor name");
    gguf_u32(&reader, &info->n_dims, "a tensor's dimension count");
    if (weft_status_is_ok(reader.status) &&
        (info->n_dims == 0 || info->n_dims > GGUF_MAX_DIMS)) {
      reader.status = WEFT_STATUS(INVALID_ARGUMENT,
                                  "'%s' (gguf): tensor '%s' has %u dimensions",
                                  path, info->name, info->n_dims);
    }
    for (uint32_t d = 0; weft_status_is_ok(reader.status) && d < info->n_dims;
         ++d) {
      gguf_u64(&reader, &info->dims[d], "a tensor's dimensions");
    }
    gguf_u32(&reader, &info->type, "a tensor's type");
    gguf_u64(&reader, &info->offset, "a tensor's offset");
  }
  const uint64_t alignment = metadata.alignment;
  const uint64_t data_start =
      (reader.offset + alignment - 1) / alignment * alignment;
  status = reader.status;

  // A file of metadata alone (llama.cpp's ggml-vocab-*.gguf carry only a
  // tokenizer, and end without the padding of a data section).
  if (weft_status_is_ok(status) && tensor_count == 0) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "'%s' (gguf) has no tensors: it carries metadata "
                         "only (a vocabulary file, say), no weights to "
                         "decode with",
                         path);
  }
  // The data section lies within the file (a cut in the padding after the
  // infos would otherwise make the bounds below wrap).
  if (weft_status_is_ok(status) && data_start > file_size) {
    status = WEFT_STATUS(OUT_OF_RANGE,
                         "'%s' (gguf) is truncated: the data section starts "
                         "at byte %" PRIu64 " of a %" PRIu64 "-byte file",
                         path, data_start, file_size);
  }

  // The embedding's shape gives the vocabulary.
  bool has_embedding = false;
  for (uint64_t i = 0; weft_status_is_ok(status) && i < tensor_count; ++i) {
    if (strcmp(infos[i].name, "token_embd.weight") == 0) {
      has_embedding = true;
      // Trailing dimensions of 1 are checked with the shape below.
      if (infos[i].n_dims < 2 || infos[i].dims[1] == 0 ||
          infos[i].dims[1] > UINT32_MAX) {
        status = WEFT_STATUS(INVALID_ARGUMENT,
                             "'%s' (gguf): tensor 'token_embd.weight' is not "
                             "a [dim, vocab] matrix",
                             path);
      } else {
        config->vocab_size = (uint32_t)infos[i].dims[1];
      }
    }
  }
  if (weft_status_is_ok(status) && !has_embedding) {
    status = WEFT_STATUS(NOT_FOUND,
                         "'%s' (gguf): no tensor 'token_embd.weight'", path);
  }
  if (weft_status_is_ok(status) && metadata.has[GGUF_KEY_VOCAB] &&
      metadata.values[GGUF_KEY_VOCAB] != config->vocab_size) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "'%s' (gguf): llama.vocab_size %u but tensor "
                         "'token_embd.weight' has %u rows",
                         path, metadata.values[GGUF_KEY_VOCAB],
                         config->vocab_size);
  }

  // Place every tensor the decoder uses.
  bool seen[DECODE_TENSOR_COUNT][DECODE_MAX_LAYERS];
  memset(seen, 0, sizeof(seen));
  for (uint64_t i = 0; weft_status_is_ok(status) && i < tensor_count; ++i) {
    const gguf_tensor_info_t* info = &infos[i];
    decode_tensor_t tensor;
    uint32_t layer = 0;
    if (!gguf_tensor_lookup(info->name, config, &tensor, &layer)) {
      // A block past llama.block_count is a file that disagrees with
      // itself, not a tensor the decoder may ignore.
      unsigned block = 0;
      if (sscanf(info->name, "blk.%u.", &block) == 1 &&
          block >= config->n_layers) {
        status = WEFT_STATUS(INVALID_ARGUMENT,
                             "'%s' (gguf): tensor '%s' is in block %u, but "
                             "llama.block_count is %u",
                             path, info->name, block, config->n_layers);
      }
      continue;
    }
    if (seen[tensor][layer]) {
      status = WEFT_STATUS(INVALID_ARGUMENT,
                           "'%s' (gguf): tensor '%s' appears twice", path,
                           info->name);
      break;
    }
    if (!decode_dtype_is_supported(info->type)) {
      status = WEFT_STATUS(INVALID_ARGUMENT,
                           "'%s' (gguf): tensor '%s' has type %u (%s); the "
                           "decoder takes F32 and F16, and Q8_0, Q4_0, Q4_1, "
                           "Q5_0, Q5_1, Q4_K, Q5_K and Q6_K",
                           path, info->name, info->type,
                           gguf_ggml_type_name(info->type));
      break;
    }
    const decode_dtype_t dtype = (decode_dtype_t)info->type;
    uint64_t expected[2];
    gguf_expected_shape(config, tensor, expected);
    const uint64_t got1 = info->n_dims > 1 ? info->dims[1] : 1;
    bool extra = false;
    for (uint32_t d = 2; d < info->n_dims; ++d) extra |= info->dims[d] != 1;
    if (info->dims[0] != expected[0] || got1 != expected[1] || extra) {
      char got_text[128];
      char expected_text[64];
      gguf_format_shape(info->dims, info->n_dims, got_text, sizeof(got_text));
      gguf_format_shape(expected, gguf_tensor_is_norm(tensor) ? 1 : 2,
                        expected_text, sizeof(expected_text));
      status = WEFT_STATUS(INVALID_ARGUMENT,
                           "'%s' (gguf): tensor '%s' has shape %s, expected %s",
                           path, info->name, got_text, expected_text);
      break;
    }
    // Matrices of any type the decoder takes, mixed as quantized files
    // mix them; a block type's rows must be whole blocks.
    if (gguf_tensor_is_norm(tensor) && dtype != DECODE_DTYPE_F32) {
      status = WEFT_STATUS(INVALID_ARGUMENT,
                           "'%s' (gguf): tensor '%s' is %s; norm weights "
                           "must be F32",
                           path, info->name, gguf_ggml_type_name(dtype));
      break;
    }
    if (info->dims[0] % decode_dtype_block_elements(dtype) != 0) {
      status = WEFT_STATUS(INVALID_ARGUMENT,
                           "'%s' (gguf): tensor '%s' is %s, whose blocks are "
                           "%u elements, but its rows are %" PRIu64,
                           path, info->name, gguf_ggml_type_name(dtype),
                           decode_dtype_block_elements(dtype), info->dims[0]);
      break;
    }
    if (info->offset % alignment != 0) {
      status = WEFT_STATUS(INVALID_ARGUMENT,
                           "'%s' (gguf): tensor '%s' is at data offset %" PRIu64
                           ", not a multiple of the alignment %" PRIu64,
                           path, info->name, info->offset, alignment);
      break;
    }
    // In that order, so no sum or product can wrap: the shape alone may be
    // 2^64 elements.
    const uint64_t blocks = decode_tensor_elements(config, tensor) /
                            decode_dtype_block_elements(dtype);
    const uint32_t block_bytes = decode_dtype_block_bytes(dtype);
    const uint64_t room = file_size - data_start;
    if (info->offset > room ||
        blocks > (room - info->offset) / block_bytes) {
      const long double end = (long double)data_start +
                              (long double)info->offset +
                              (long double)blocks * block_bytes;
      status = WEFT_STATUS(OUT_OF_RANGE,
                           "'%s' (gguf) is truncated: tensor '%s' ends at "
                           "byte %.0Lf of a %" PRIu64 "-byte file",
                           path, info->name, end, file_size);
      break;
    }
    decode_tensor_location_t* location = &out_layout->tensors[tensor];
    location->present = true;
    location->dtypes[layer] = dtype;
    location->offsets[layer] = data_start + info->offset;
    seen[tensor][layer] = true;
  }
  free(infos);
  // Every tensor there, but the classifier (absent: shared).
  config->shared_classifier = !seen[DECODE_TENSOR_CLASSIFIER][0];
  for (int t = 0; weft_status_is_ok(status) && t < DECODE_TENSOR_COUNT; ++t) {
    const decode_tensor_t tensor = (decode_tensor_t)t;
    if (tensor == DECODE_TENSOR_CLASSIFIER) continue;
    const uint32_t layers =
        decode_tensor_is_per_layer(tensor) ? config->n_layers : 1;
    for (uint32_t l = 0; l < layers; ++l) {
      if (!seen[t][l]) {
        char name[96];
        gguf_tensor_name(tensor, l, name, sizeof(name));
        status = WEFT_STATUS(NOT_FOUND, "'%s' (gguf): no tensor '%s'", path,
                             name);
        break;
      }
    }
  }
  if (weft_status_is_ok(status)) status = decode_config_validate(config, path);
  return status;
}

//===----------------------------------------------------------------------===//
// Any metadata value, whole (decode_gguf.h)
//===----------------------------------------------------------------------===//

void decode_gguf_value_deinitialize(decode_gguf_value_t* value) {
  free(value->numbers);
  free(value->text);
  free(value->offsets);
  memset(value, 0, sizeof(*value));
}

// Element |i|'s |size| bytes at |bytes| as a double.
static double gguf_number(uint32_t type, const uint8_t* bytes) {
  uint64_t raw = 0;
  memcpy(&raw, bytes, gguf_scalar_size(type));
  switch (type) {
    case GGUF_TYPE_INT8:
      return (int8_t)raw;
    case GGUF_TYPE_INT16:
      return (int16_t)raw;
    case GGUF_TYPE_INT32:
      return (int32_t)raw;
    case GGUF_TYPE_INT64:
      return (double)(int64_t)raw;
    case GGUF_TYPE_FLOAT32: {
      float v;
      memcpy(&v, bytes, 4);
      return v;
    }
    case GGUF_TYPE_FLOAT64: {
      double v;
      memcpy(&v, bytes, 8);
      return v;
    }
    default:
      return (double)raw;
  }
}

// Reads |count| elements of |element_type| for |key| into |out| (the
// count already checked against the file).
static bool gguf_capture(gguf_reader_t* reader, const char* key,
                         uint32_t element_type, uint64_t count,
                         decode_gguf_value_t* out) {
  char what[GGUF_MAX_KEY + 32];
  snprintf(what, sizeof(what), "the value of '%s'", key);
  out->element_type = element_type;
  out->count = count;
  if (element_type != GGUF_TYPE_STRING) {
    const uint64_t size = gguf_scalar_size(element_type);
    uint8_t* bytes = (uint8_t*)malloc(count * size + 1);
    out->numbers = (double*)malloc((count + 1) * sizeof(double));
    bool ok = bytes && out->numbers;
    if (!ok) {
      reader->status = WEFT_STATUS(RESOURCE_EXHAUSTED, "'%s' (gguf): '%s'",
                                   reader->path, key);
    }
    ok = ok && gguf_read(reader, bytes, count * size, what);
    for (uint64_t i = 0; ok && i < count; ++i) {
      out->numbers[i] = gguf_number(element_type, bytes + i * size);
    }
    free(bytes);
    return ok;
  }
  // Strings: the lengths are read first into |offsets|, bounded by what
  // is left of the file, then the bytes into one block.
  out->offsets = (uint64_t*)malloc((count + 1) * sizeof(uint64_t));
  if (!out->offsets) {
    reader->status = WEFT_STATUS(RESOURCE_EXHAUSTED, "'%s' (gguf): '%s'",
                                 reader->path, key);
    return false;
  }
  const uint64_t start = reader->offset;
  uint64_t total = 0;
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t length = 0;
    if (!gguf_u64(reader, &length, what) ||
        !gguf_count_fits(reader, length, 1, reader->offset - 8, what,
                         "bytes") ||
        !gguf_skip(reader, length, what)) {
      return false;
    }
    out->offsets[i] = total;
    total += length + 1;
  }
  out->offsets[count] = total;
  out->text = (char*)malloc(total + 1);
  if (!out->text) {
    reader->status = WEFT_STATUS(RESOURCE_EXHAUSTED, "'%s' (gguf): '%s'",
                                 reader->path, key);
    return false;
  }
  if (fseeko(reader->file, (off_t)start, SEEK_SET) != 0) {
    reader->status = WEFT_STATUS(UNAVAILABLE, "'%s': seeking back: %s",
                                 reader->path, strerror(errno));
    return false;
  }
  reader->offset = start;
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t length = out->offsets[i + 1] - out->offsets[i] - 1;
    uint64_t stored = 0;
    if (!gguf_u64(reader, &stored, what) ||
        !gguf_read(reader, out->text + out->offsets[i], length, what)) {
      return false;
    }
    out->text[out->offsets[i] + length] = '\0';
  }
  return true;
}

weft_status_t decode_gguf_read_values_from(FILE* file, const char* path,
                                           uint64_t file_size,
                                           uint32_t key_count,
                                           const char* const* keys,
                                           decode_gguf_value_t* out_values) {
  memset(out_values, 0, key_count * sizeof(*out_values));
  gguf_reader_t reader = {file, path, file_size, 0, WEFT_OK};
  if (fseeko(file, 0, SEEK_SET) != 0) {
    return WEFT_STATUS(UNAVAILABLE, "'%s': seeking to its start: %s", path,
                       strerror(errno));
  }
  uint64_t tensor_count = 0;
  uint64_t metadata_count = 0;
  gguf_read_header(&reader, &tensor_count, &metadata_count);
  for (uint64_t i = 0; weft_status_is_ok(reader.status) && i < metadata_count;
       ++i) {
    char key[GGUF_MAX_KEY];
    uint32_t type = 0;
    if (!gguf_string(&reader, key, sizeof(key), "a metadata key") ||
        !gguf_u32(&reader, &type, "a metadata type")) {
      break;
    }
    uint32_t k = 0;
    while (k < key_count && strcmp(key, keys[k]) != 0) ++k;
    if (k == key_count || out_values[k].found) {
      // Not asked for (or a repeat: the first one stands).
      gguf_value_t skipped;
      gguf_value(&reader, type, key, 0, &skipped);
      continue;
    }
    decode_gguf_value_t* out = &out_values[k];
    out->found = true;
    out->type = type;
    uint32_t element_type = type;
    uint64_t count = 1;
    if (type == GGUF_TYPE_ARRAY) {
      char what[GGUF_MAX_KEY + 32];
      snprintf(what, sizeof(what), "the element count of '%s'", key);
      if (!gguf_u32(&reader, &element_type, what) ||
          !gguf_u64(&reader, &count, what)) {
        break;
      }
      const uint64_t size = gguf_scalar_size(element_type);
      if (element_type != GGUF_TYPE_STRING && size == 0) {
        reader.status = WEFT_STATUS(
            INVALID_ARGUMENT,
            "'%s' (gguf): key '%s' is an array of type %u (arrays of "
            "numbers or strings are read)",
            path, key, element_type);
        break;
      }
      gguf_count_fits(&reader, count, size ? size : 8, reader.offset - 8,
                      what, "elements");
    } else if (type != GGUF_TYPE_STRING && gguf_scalar_size(type) == 0) {
      reader.status = WEFT_STATUS(INVALID_ARGUMENT,
                                  "'%s' (gguf): key '%s' has unknown type %u",
                                  path, key, type);
    }
    if (weft_status_is_ok(reader.status)) {
      gguf_capture(&reader, key, element_type, count, out);
    }
  }
  return reader.status;
}

weft_status_t decode_gguf_read_values(const char* path, uint32_t key_count,
                                      const char* const* keys,
                                      decode_gguf_value_t* out_values) {
  memset(out_values, 0, key_count * sizeof(*out_values));
  FILE* file = fopen(path, "rb");
  if (!file) {
    return WEFT_STATUS(NOT_FOUND, "cannot open '%s': %s", path,
                       strerror(errno));
  }
  weft_status_t status = WEFT_OK;
  struct stat info;
  if (fstat(fileno(file), &info) != 0) {
    status = WEFT_STATUS(UNAVAILABLE, "'%s': fstat: %s", path,
                         strerror(errno));
  } else {
    status = decode_gguf_read_values_from(file, path, (uint64_t)info.st_size,
                                          key_count, keys, out_values);
  }
  fclose(file);
  return status;
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

typedef struct gguf_writer_t {
  FILE* file;
  bool ok;
  uint64_t offset;
} gguf_writer_t;

static void gguf_put(gguf_writer_t* writer, const void* data, size_t length) {
  if (writer->ok) writer->ok = fwrite(data, 1, length, writer->file) == length;
  writer->offset += length;
}
static void gguf_put_u32(gguf_writer_t* writer, uint32_t value) {
  gguf_put(writer, &value, 4);
}
static void gguf_put_u64(gguf_writer_t* writer, uint64_t value) {
  gguf_put(writer, &value, 8);
}
static void gguf_put_string(gguf_writer_t* writer, const char* text) {
  gguf_put_u64(writer, strlen(text));
  gguf_put(writer, text, strlen(text));
}
static void gguf_put_key_u32(gguf_writer_t* writer, const char* key,
                             uint32_t value) {
  gguf_put_string(writer, key);
  gguf_put_u32(writer, GGUF_TYPE_UINT32);
  gguf_put_u32(writer, value);
}
static void gguf_put_key_f32(gguf_writer_t* writer, const char* key,
                             float value) {
  gguf_put_string(writer, key);
  gguf_put_u32(writer, GGUF_TYPE_FLOAT32);
  gguf_put(writer, &value, 4);
}

// A vocabulary's keys (decode_tokenizer.h): how many gguf_put_vocab
// writes, then the writing.
static uint64_t gguf_vocab_entries(const decode_vocab_t* vocab) {
  return 3 + (vocab->scores != NULL) + (vocab->types != NULL) +
         (vocab->merge_count > 0) + (vocab->bos >= 0) + (vocab->eos >= 0) +
         (vocab->unknown >= 0) + vocab->no_space_prefix;
}

static void gguf_put_array_header(gguf_writer_t* writer, const char* key,
                                  uint32_t element_type, uint64_t count) {
  gguf_put_string(writer, key);
  gguf_put_u32(writer, GGUF_TYPE_ARRAY);
  gguf_put_u32(writer, element_type);
  gguf_put_u64(writer, count);
}

static void gguf_put_vocab(gguf_writer_t* writer, const decode_vocab_t* vocab) {
  gguf_put_string(writer, "tokenizer.ggml.model");
  gguf_put_u32(writer, GGUF_TYPE_STRING);
  gguf_put_string(writer,
                  vocab->kind == DECODE_TOKENIZER_BPE ? "gpt2" : "llama");
  gguf_put_array_header(writer, "tokenizer.ggml.tokens", GGUF_TYPE_STRING,
                        vocab->count);
  for (uint32_t i = 0; i < vocab->count; ++i) {
    gguf_put_string(writer, vocab->tokens[i]);
  }
  if (vocab->scores) {
    gguf_put_array_header(writer, "tokenizer.ggml.scores", GGUF_TYPE_FLOAT32,
                          vocab->count);
    gguf_put(writer, vocab->scores, vocab->count * sizeof(float));
  }
  if (vocab->types) {
    gguf_put_array_header(writer, "tokenizer.ggml.token_type",
                          GGUF_TYPE_INT32, vocab->count);
    gguf_put(writer, vocab->types, vocab->count * sizeof(int32_t));
  }
  if (vocab->merge_count > 0) {
    gguf_put_array_header(writer, "tokenizer.ggml.merges", GGUF_TYPE_STRING,
                          vocab->merge_count);
    for (uint32_t i = 0; i < vocab->merge_count; ++i) {
      gguf_put_string(writer, vocab->merges[i]);
    }
  }
  const char* const kIdKeys[3] = {"tokenizer.ggml.bos_token_id",
                                  "tokenizer.ggml.eos_token_id",
                                  "tokenizer.ggml.unknown_token_id"};
  const int64_t ids[3] = {vocab->bos, vocab->eos, vocab->unknown};
  for (int i = 0; i < 3; ++i) {
    if (ids[i] >= 0) gguf_put_key_u32(writer, kIdKeys[i], (uint32_t)ids[i]);
  }
  gguf_put_string(writer, "tokenizer.ggml.add_bos_token");
  gguf_put_u32(writer, GGUF_TYPE_BOOL);
  const uint8_t add_bos = vocab->add_bos;
  gguf_put(writer, &add_bos, 1);
  if (vocab->no_space_prefix) {
    gguf_put_string(writer, "tokenizer.ggml.add_space_prefix");
    gguf_put_u32(writer, GGUF_TYPE_BOOL);
    const uint8_t no = 0;
    gguf_put(writer, &no, 1);
  }
}

weft_status_t decode_gguf_write_vocab(const char* path,
                                      const decode_vocab_t* vocab) {
  FILE* file = fopen(path, "wb");
  if (!file) {
    return WEFT_STATUS(UNAVAILABLE, "cannot create '%s': %s", path,
                       strerror(errno));
  }
  gguf_writer_t writer = {file, true, 0};
  gguf_put(&writer, "GGUF", 4);
  gguf_put_u32(&writer, 3);
  gguf_put_u64(&writer, 0);
  gguf_put_u64(&writer, gguf_vocab_entries(vocab));
  gguf_put_vocab(&writer, vocab);
  const bool ok = fclose(file) == 0 && writer.ok;
  return ok ? WEFT_OK
            : WEFT_STATUS(UNAVAILABLE, "writing '%s' failed: %s", path,
                          strerror(errno));
}

// The tensors in file order: (kind, layer) pairs.
static uint32_t gguf_write_order(const decode_config_t* config,
                                 decode_tensor_t* tensors, uint32_t* layers) {
  uint32_t count = 0;
  tensors[count] = DECODE_TENSOR_TOKEN_EMBEDDING, layers[count++] = 0;
  for (uint32_t l = 0; l < config->n_layers; ++l) {
    const decode_tensor_t block[] = {
        DECODE_TENSOR_ATTN_NORM, DECODE_TENSOR_WQ, DECODE_TENSOR_WK,
        DECODE_TENSOR_WV,        DECODE_TENSOR_WO, DECODE_TENSOR_FFN_NORM,
        DECODE_TENSOR_W1,        DECODE_TENSOR_W2, DECODE_TENSOR_W3};
    for (size_t i = 0; i < sizeof(block) / sizeof(block[0]); ++i) {
      tensors[count] = block[i], layers[count++] = l;
    }
  }
  tensors[count] = DECODE_TENSOR_FINAL_NORM, layers[count++] = 0;
  if (!config->shared_classifier) {
    tensors[count] = DECODE_TENSOR_CLASSIFIER, layers[count++] = 0;
  }
  return count;
}

weft_status_t decode_gguf_write(FILE* file, const char* path,
                                const decode_config_t* config,
                                decode_dtype_t dtype, decode_mix_t mix,
                                uint64_t seed) {
  // Bounds n_layers (the list below) and makes the shapes meaningful.
  weft_status_t status = decode_config_validate(config, path);
  if (weft_status_is_ok(status) &&
      (!decode_dtype_is_supported(dtype) || dtype == DECODE_DTYPE_Q6_K ||
       (mix == DECODE_MIX_Q4_K_M && dtype != DECODE_DTYPE_Q4_K) ||
       (mix == DECODE_MIX_Q5_K_M && dtype != DECODE_DTYPE_Q5_K))) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "%s: dtype %d is not one of f32, f16, q8_0, q4_0, "
                         "q4_1, q5_0, q5_1, q4_k and q5_k (q4_k alone for "
                         "the q4_k_m mix, q5_k for q5_k_m)",
                         path, (int)dtype);
  }
  if (!weft_status_is_ok(status)) return status;
  const uint32_t most = 2 + 9 * config->n_layers + 1;
  decode_tensor_t* tensors = (decode_tensor_t*)calloc(most, sizeof(*tensors));
  uint32_t* layers = (uint32_t*)calloc(most, sizeof(*layers));
  // One row at a time: its weights, then as stored.
  const uint32_t widest =
      config->hidden_dim > config->dim ? config->hidden_dim : config->dim;
  float* values = (float*)malloc(widest * sizeof(float));
  uint8_t* row = (uint8_t*)malloc(widest * sizeof(float));
  if (!tensors || !layers || !values || !row) {
    free(tensors);
    free(layers);
    free(values);
    free(row);
    return WEFT_STATUS(RESOURCE_EXHAUSTED, "%s: the tensor list", path);
  }
  const uint32_t count = gguf_write_order(config, tensors, layers);
  // A vocabulary of the model's size where one fits (the tokenizer's keys).
  decode_vocab_t vocab;
  memset(&vocab, 0, sizeof(vocab));
  if (config->vocab_size >= DECODE_VOCAB_SYNTHETIC_MIN) {
    status = decode_vocab_synthetic(config->vocab_size, &vocab);
  }
  if (!weft_status_is_ok(status)) {
    free(tensors);
    free(layers);
    free(values);
    free(row);
    return status;
  }
  gguf_writer_t writer = {file, true, 0};
  gguf_put(&writer, "GGUF", 4);
  gguf_put_u32(&writer, 3);
  gguf_put_u64(&writer, count);
  // The metadata keys below.
  gguf_put_u64(&writer, 11 + (vocab.count ? gguf_vocab_entries(&vocab) : 0));
  gguf_put_string(&writer, "general.architecture");
  gguf_put_u32(&writer, GGUF_TYPE_STRING);
  gguf_put_string(&writer, "llama");
  gguf_put_key_u32(&writer, "general.alignment", GGUF_DEFAULT_ALIGNMENT);
  gguf_put_key_u32(&writer, "llama.context_length", config->seq_len);
  gguf_put_key_u32(&writer, "llama.embedding_length", config->dim);
  gguf_put_key_u32(&writer, "llama.block_count", config->n_layers);
  gguf_put_key_u32(&writer, "llama.feed_forward_length", config->hidden_dim);
  gguf_put_key_u32(&writer, "llama.attention.head_count", config->n_heads);
  gguf_put_key_u32(&writer, "llama.attention.head_count_kv",
                   config->n_kv_heads);
  gguf_put_key_f32(&writer, "llama.rope.freq_base", config->rope_theta);
  gguf_put_key_f32(&writer, "llama.attention.layer_norm_rms_epsilon",
                   config->norm_eps);
  gguf_put_key_u32(&writer, "llama.vocab_size", config->vocab_size);
  if (vocab.count) gguf_put_vocab(&writer, &vocab);
  decode_vocab_deinitialize(&vocab);
  // Tensor infos, with offsets in the data section (each aligned).
  uint64_t data_offset = 0;
  for (uint32_t i = 0; i < count; ++i) {
    char name[96];
    gguf_tensor_name(tensors[i], layers[i], name, sizeof(name));
    uint64_t shape[2];
    gguf_expected_shape(config, tensors[i], shape);
    const bool is_norm = gguf_tensor_is_norm(tensors[i]);
    const decode_dtype_t type = decode_checkpoint_tensor_dtype(
        config, dtype, mix, tensors[i], layers[i]);
    gguf_put_string(&writer, name);
    // Matrices stay 2-D even with one row (a vocabulary of 1).
    gguf_put_u32(&writer, is_norm ? 1 : 2);
    gguf_put_u64(&writer, shape[0]);
    if (!is_norm) gguf_put_u64(&writer, shape[1]);
    gguf_put_u32(&writer, type);
    gguf_put_u64(&writer, data_offset);
    const uint64_t bytes =
        decode_dtype_bytes(type, decode_tensor_elements(config, tensors[i]));
    data_offset += (bytes + GGUF_DEFAULT_ALIGNMENT - 1) /
                   GGUF_DEFAULT_ALIGNMENT * GGUF_DEFAULT_ALIGNMENT;
  }
  static const uint8_t kZeros[GGUF_DEFAULT_ALIGNMENT] = {0};
  gguf_put(&writer, kZeros,
           (size_t)((GGUF_DEFAULT_ALIGNMENT -
                     writer.offset % GGUF_DEFAULT_ALIGNMENT) %
                    GGUF_DEFAULT_ALIGNMENT));
  // The data, row by row (a row is whole blocks).
  for (uint32_t i = 0; writer.ok && i < count; ++i) {
    const decode_tensor_t tensor = tensors[i];
    const decode_dtype_t type = decode_checkpoint_tensor_dtype(
        config, dtype, mix, tensor, layers[i]);
    uint64_t shape[2];
    gguf_expected_shape(config, tensor, shape);
    const uint32_t cols = (uint32_t)shape[0];
    for (uint64_t r = 0; writer.ok && r < shape[1]; ++r) {
      for (uint32_t c = 0; c < cols; ++c) {
        values[c] = decode_random_weight(seed, tensor, layers[i], r * cols + c);
      }
      decode_quant_quantize(type, values, cols, row);
      gguf_put(&writer, row, (size_t)decode_dtype_bytes(type, cols));
    }
    gguf_put(&writer, kZeros,
             (size_t)((GGUF_DEFAULT_ALIGNMENT -
                       writer.offset % GGUF_DEFAULT_ALIGNMENT) %
                      GGUF_DEFAULT_ALIGNMENT));
  }
  free(tensors);
  free(layers);
  free(values);
  free(row);
  return writer.ok ? WEFT_OK
                   : WEFT_STATUS(UNAVAILABLE, "writing '%s' failed: %s", path,
                                 strerror(errno));
}
