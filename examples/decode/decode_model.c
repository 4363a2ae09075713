// weft decode example: model shapes and tensor kinds (see decode_model.h).
#include "decode_model.h"

#include "decode_quant.h"

#include <errno.h>
#include <string.h>

const char* decode_dtype_name(decode_dtype_t dtype) {
  switch (dtype) {
    case DECODE_DTYPE_F32:
      return "f32";
    case DECODE_DTYPE_F16:
      return "f16";
    case DECODE_DTYPE_Q4_0:
      return "q4_0";
    case DECODE_DTYPE_Q4_1:
      return "q4_1";
    case DECODE_DTYPE_Q5_0:
      return "q5_0";
    case DECODE_DTYPE_Q5_1:
      return "q5_1";
    case DECODE_DTYPE_Q8_0:
      return "q8_0";
    case DECODE_DTYPE_Q4_K:
      return "q4_k";
    case DECODE_DTYPE_Q5_K:
      return "q5_k";
    case DECODE_DTYPE_Q6_K:
      return "q6_k";
    case DECODE_DTYPE_Q4_0_X8:
      return "q4_0_x8";
    case DECODE_DTYPE_Q8_0_X8:
      return "q8_0_x8";
    case DECODE_DTYPE_Q4_K_X8:
      return "q4_k_x8";
    case DECODE_DTYPE_Q6_K_X8:
      return "q6_k_x8";
    case DECODE_DTYPE_F32_X16:
      return "f32_x16";
    case DECODE_DTYPE_F16_X16:
      return "f16_x16";
  }
  return "?";
}

uint32_t decode_dtype_block_elements(uint32_t dtype) {
  switch (dtype) {
    case DECODE_DTYPE_F32:
    case DECODE_DTYPE_F16:
    case DECODE_DTYPE_F32_X16:
    case DECODE_DTYPE_F16_X16:
      return 1;
    case DECODE_DTYPE_Q4_0:
    case DECODE_DTYPE_Q4_0_X8:
    case DECODE_DTYPE_Q4_1:
    case DECODE_DTYPE_Q5_0:
    case DECODE_DTYPE_Q5_1:
    case DECODE_DTYPE_Q8_0:
    case DECODE_DTYPE_Q8_0_X8:
      return DECODE_QK8_0;
    case DECODE_DTYPE_Q4_K:
    case DECODE_DTYPE_Q4_K_X8:
    case DECODE_DTYPE_Q5_K:
    case DECODE_DTYPE_Q6_K:
    case DECODE_DTYPE_Q6_K_X8:
      return DECODE_QK_K;
    default:
      return 0;
  }
}

uint32_t decode_dtype_block_bytes(uint32_t dtype) {
  switch (dtype) {
    case DECODE_DTYPE_F32:
    case DECODE_DTYPE_F32_X16:
      return 4;
    case DECODE_DTYPE_F16:
    case DECODE_DTYPE_F16_X16:
      return 2;
    case DECODE_DTYPE_Q4_0:
    case DECODE_DTYPE_Q4_0_X8:
      return sizeof(decode_block_q4_0_t);
    case DECODE_DTYPE_Q4_1:
      return sizeof(decode_block_q4_1_t);
    case DECODE_DTYPE_Q5_0:
      return sizeof(decode_block_q5_0_t);
    case DECODE_DTYPE_Q5_1:
      return sizeof(decode_block_q5_1_t);
    case DECODE_DTYPE_Q8_0:
    case DECODE_DTYPE_Q8_0_X8:
      return sizeof(decode_block_q8_0_t);
    case DECODE_DTYPE_Q4_K:
    case DECODE_DTYPE_Q4_K_X8:
      return sizeof(decode_block_q4_k_t);
    case DECODE_DTYPE_Q5_K:
      return sizeof(decode_block_q5_k_t);
    case DECODE_DTYPE_Q6_K:
    case DECODE_DTYPE_Q6_K_X8:
      return sizeof(decode_block_q6_k_t);
    default:
      return 0;
  }
}

static const char* const kTensorNames[DECODE_TENSOR_COUNT] = {
    "token_embedding", "attn_norm", "wq",         "wk",
    "wv",              "wo",        "ffn_norm",   "w1",
    "w2",              "w3",        "final_norm", "classifier",
};

const char* decode_tensor_name(decode_tensor_t tensor) {
  return (unsigned)tensor < DECODE_TENSOR_COUNT ? kTensorNames[tensor] : "?";
}

bool decode_tensor_is_per_layer(decode_tensor_t tensor) {
  return tensor >= DECODE_TENSOR_ATTN_NORM && tensor <= DECODE_TENSOR_W3;
}

uint64_t decode_tensor_elements(const decode_config_t* config,
                                decode_tensor_t tensor) {
  const uint64_t dim = config->dim;
  const uint64_t kv_dim = decode_kv_dim(config);
  const uint64_t hidden = config->hidden_dim;
  switch (tensor) {
    case DECODE_TENSOR_TOKEN_EMBEDDING:
    case DECODE_TENSOR_CLASSIFIER:
      return (uint64_t)config->vocab_size * dim;
    case DECODE_TENSOR_ATTN_NORM:
    case DECODE_TENSOR_FFN_NORM:
    case DECODE_TENSOR_FINAL_NORM:
      return dim;
    case DECODE_TENSOR_WQ:
    case DECODE_TENSOR_WO:
      return dim * dim;
    case DECODE_TENSOR_WK:
    case DECODE_TENSOR_WV:
      return kv_dim * dim;
    case DECODE_TENSOR_W1:
    case DECODE_TENSOR_W2:
    case DECODE_TENSOR_W3:
      return hidden * dim;
    default:
      return 0;
  }
}

weft_status_t decode_config_validate(const decode_config_t* config,
                                     const char* source) {
  const struct {
    const char* name;
    uint32_t value;
  } sizes[] = {
      {"dim", config->dim},           {"hidden_dim", config->hidden_dim},
      {"n_layers", config->n_layers}, {"n_heads", config->n_heads},
      {"n_kv_heads", config->n_kv_heads},
      {"vocab_size", config->vocab_size},
      {"seq_len", config->seq_len},
  };
  for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i) {
    if (sizes[i].value == 0) {
      return WEFT_STATUS(INVALID_ARGUMENT, "%s: %s is 0", source,
                         sizes[i].name);
    }
  }
  if (config->n_layers > DECODE_MAX_LAYERS) {
    return WEFT_STATUS(INVALID_ARGUMENT, "%s: %u layers (at most %u)", source,
                       config->n_layers, DECODE_MAX_LAYERS);
  }
  if (config->dim % config->n_heads != 0 ||
      decode_head_size(config) % 2 != 0) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "%s: dim %u is not an even head size times n_heads %u",
                       source, config->dim, config->n_heads);
  }
  if (config->n_kv_heads > config->n_heads ||
      config->n_heads % config->n_kv_heads != 0) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "%s: n_kv_heads %u does not divide n_heads %u", source,
                       config->n_kv_heads, config->n_heads);
  }
  if (config->dim % DECODE_ROWS_PER_WORKGROUP != 0 ||
      decode_kv_dim(config) % DECODE_ROWS_PER_WORKGROUP != 0 ||
      config->hidden_dim % DECODE_ROWS_PER_WORKGROUP != 0) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "%s: dim %u, kv_dim %u and hidden_dim %u must be "
                       "multiples of %u",
                       source, config->dim, decode_kv_dim(config),
                       config->hidden_dim, DECODE_ROWS_PER_WORKGROUP);
  }
  if (!(config->norm_eps > 0.0f) || !(config->rope_theta > 0.0f)) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "%s: norm epsilon %g and rope base %g must be positive",
                       source, (double)config->norm_eps,
                       (double)config->rope_theta);
  }
  return WEFT_OK;
}

void decode_layout_describe_dtypes(const decode_layout_t* layout, char* out,
                                   size_t capacity) {
  bool seen[256] = {false};
  size_t used = 0;
  if (capacity > 0) out[0] = '\0';
  for (int t = 0; t < DECODE_TENSOR_COUNT; ++t) {
    const decode_tensor_t tensor = (decode_tensor_t)t;
    if (!layout->tensors[t].present || tensor == DECODE_TENSOR_ATTN_NORM ||
        tensor == DECODE_TENSOR_FFN_NORM || tensor == DECODE_TENSOR_FINAL_NORM) {
      continue;
    }
    const uint32_t layers =
        decode_tensor_is_per_layer(tensor) ? layout->config.n_layers : 1;
    for (uint32_t l = 0; l < layers; ++l) {
      // A loaded model's interleaved forms as the file's types.
      const decode_dtype_t dtype =
          decode_dtype_stored(layout->tensors[t].dtypes[l]);
      if (seen[dtype & 0xFF]) continue;
      seen[dtype & 0xFF] = true;
      if (used < capacity) {
        used += (size_t)snprintf(out + used, capacity - used, "%s%s",
                                 used ? ", " : "", decode_dtype_name(dtype));
      }
    }
  }
}

weft_status_t decode_layout_read(const char* path,
                                 decode_layout_t* out_layout) {
  memset(out_layout, 0, sizeof(*out_layout));
  FILE* file = fopen(path, "rb");
  if (!file) {
    int error = errno;
    return weft_status_make_(
        __FILE__, __LINE__,
        error == ENOENT ? WEFT_STATUS_NOT_FOUND : WEFT_STATUS_UNAVAILABLE,
        "cannot open model '%s': %s", path, strerror(error));
  }
  weft_status_t status = WEFT_OK;
  uint64_t file_size = 0;
  off_t end = -1;
  if (fseeko(file, 0, SEEK_END) != 0 || (end = ftello(file)) < 0 ||
      fseeko(file, 0, SEEK_SET) != 0) {
    status = WEFT_STATUS(UNAVAILABLE, "cannot seek in model '%s': %s", path,
                         strerror(errno));
  } else {
    file_size = (uint64_t)end;
  }
  char magic[4] = {0};
  if (weft_status_is_ok(status)) {
    size_t got = fread(magic, 1, sizeof(magic), file);
    fseeko(file, 0, SEEK_SET);
    if (got == sizeof(magic) && memcmp(magic, "GGUF", 4) == 0) {
      status = decode_gguf_read(file, path, file_size, out_layout);
    } else {
      status = decode_llama2c_read(file, path, file_size, out_layout);
    }
  }
  fclose(file);
  if (weft_status_is_ok(status)) {
    out_layout->file_size = file_size;
    status = decode_config_validate(&out_layout->config, path);
  }
  return status;
}
