// The decode example's checkpoint formats (examples/decode): llama2.c and
// GGUF v3 written by decode_checkpoint_write and read back by
// decode_layout_read, and the half-float conversions.
//  - round trips: the tiny and 15M shapes, shared and separate classifier,
//    llama2.c f32 and GGUF f32 and f16: the config, every tensor's dtype and
//    alignment, and weights sampled at the recorded offsets equal to
//    decode_random_weight (rounded through f16 for F16 files);
//  - GGUF files a small writer here builds with what ours never writes:
//    integer keys of other types, optional keys left out, unknown keys of
//    every type (string arrays, nested arrays), tensors the decoder does not
//    use, an alignment of 64;
//  - bad files, each a status code and a message naming the file and the
//    tensor or key: truncation (both formats, in a tensor, in the header, in
//    the padding before the data), a wrong version, another architecture,
//    quantized tensors, a missing tensor or key, a wrong shape, mixed or F16
//    norm dtypes, misaligned offsets, absurd counts, lengths and sizes
//    (named with their value and the file's size, also in files of full
//    length), a zero llama2.c header field and files of neither format
//    (named by their first bytes), short files; 400 files with
//    random bytes of the header changed read without a crash;
//  - f16: every half that is not NaN survives f16 -> f32 -> f16, and
//    hand-picked floats round to nearest even.
// setjmp.h, stdarg.h and stddef.h must come before cmocka.h.
// clang-format off
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
// clang-format on

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decode_checkpoint.h"
#include "decode_quant.h"
#include "decode_model.h"

#define SEED 11u

// The directory every test writes into (mkdtemp in setup, emptied and
// removed in teardown).
static char g_dir[64];

static void temp_path(const char* name, char* out, size_t capacity) {
  snprintf(out, capacity, "%s/%s", g_dir, name);
}

static void assert_ok(weft_status_t status) {
  if (!weft_status_is_ok(status)) {
    char text[1024];
    weft_status_format(status, text, sizeof(text));
    weft_status_free(status);
    fail_msg("%s", text);
  }
}

// Asserts |status| has |code| and its message names |path| and every one of
// the NULL-terminated |needles|; frees it.
static void assert_error(weft_status_t status, weft_status_code_t code,
                         const char* path, ...) {
  char text[1024] = "OK";
  weft_status_format(status, text, sizeof(text));
  const weft_status_code_t got = weft_status_code(status);
  weft_status_free(status);
  if (got != code) {
    fail_msg("expected %s, got: %s", weft_status_code_string(code), text);
  }
  if (path && !strstr(text, path)) {
    fail_msg("the message does not name '%s': %s", path, text);
  }
  va_list args;
  va_start(args, path);
  for (const char* needle = va_arg(args, const char*); needle;
       needle = va_arg(args, const char*)) {
    if (!strstr(text, needle)) {
      va_end(args);
      fail_msg("the message does not contain '%s': %s", needle, text);
    }
  }
  va_end(args);
}

// Reads the layout of |path| and asserts the error; names as assert_error.
#define assert_read_error(path, code, ...)                                   \
  do {                                                                       \
    decode_layout_t layout_;                                                 \
    assert_error(decode_layout_read((path), &layout_), WEFT_STATUS_##code,   \
                 (path), __VA_ARGS__, (const char*)NULL);                    \
  } while (0)

//===----------------------------------------------------------------------===//
// Files as bytes
//===----------------------------------------------------------------------===//

static uint8_t* file_load(const char* path, size_t* out_size) {
  FILE* file = fopen(path, "rb");
  assert_non_null(file);
  assert_int_equal(fseeko(file, 0, SEEK_END), 0);
  const size_t size = (size_t)ftello(file);
  assert_int_equal(fseeko(file, 0, SEEK_SET), 0);
  uint8_t* data = malloc(size ? size : 1);
  assert_non_null(data);
  assert_int_equal(fread(data, 1, size, file), size);
  fclose(file);
  *out_size = size;
  return data;
}

static void file_store(const char* path, const void* data, size_t size) {
  FILE* file = fopen(path, "wb");
  assert_non_null(file);
  assert_int_equal(fwrite(data, 1, size, file), size);
  assert_int_equal(fclose(file), 0);
}

// The offset of the first |needle| in |data|; fails when there is none.
static size_t find_bytes(const uint8_t* data, size_t size,
                         const char* needle) {
  const size_t length = strlen(needle);
  for (size_t i = 0; i + length <= size; ++i) {
    if (memcmp(data + i, needle, length) == 0) return i;
  }
  fail_msg("'%s' is not in the file", needle);
  return 0;
}

// The offset just past the name of GGUF tensor info |name| (its n_dims).
static size_t find_tensor_info(const uint8_t* data, size_t size,
                               const char* name) {
  // The u64 length before the name makes the match exact.
  char needle[80];
  const uint64_t length = strlen(name);
  memcpy(needle, &length, 8);
  memcpy(needle + 8, name, length);
  for (size_t i = 0; i + 8 + length <= size; ++i) {
    if (memcmp(data + i, needle, 8 + length) == 0) return i + 8 + length;
  }
  fail_msg("no tensor info '%s'", name);
  return 0;
}

static void put_u32_at(uint8_t* data, size_t offset, uint32_t value) {
  memcpy(data + offset, &value, 4);
}
static void put_u64_at(uint8_t* data, size_t offset, uint64_t value) {
  memcpy(data + offset, &value, 8);
}

//===----------------------------------------------------------------------===//
// Round trips
//===----------------------------------------------------------------------===//

static bool is_norm(decode_tensor_t tensor) {
  return tensor == DECODE_TENSOR_ATTN_NORM ||
         tensor == DECODE_TENSOR_FFN_NORM ||
         tensor == DECODE_TENSOR_FINAL_NORM;
}

// The weight stored at element |index| of a tensor at |offset|, as f32.
static float stored_weight(FILE* file, uint64_t offset, decode_dtype_t dtype,
                           uint64_t index) {
  const uint32_t size = decode_dtype_size(dtype);
  assert_int_equal(fseeko(file, (off_t)(offset + index * size), SEEK_SET), 0);
  if (dtype == DECODE_DTYPE_F16) {
    uint16_t half = 0;
    assert_int_equal(fread(&half, 2, 1, file), 1);
    return decode_f16_to_f32(half);
  }
  float value = 0;
  assert_int_equal(fread(&value, 4, 1, file), 1);
  return value;
}

// Checks a layout read back against |config| and the generator: the
// shape, every tensor's presence, dtype and (GGUF) alignment, and a few
// weights of the first and last layer of every kind.
static void check_layout(const char* path, const decode_layout_t* layout,
                         const decode_config_t* config,
                         decode_format_t format, decode_dtype_t dtype) {
  const decode_config_t* got = &layout->config;
  assert_int_equal(got->dim, config->dim);
  assert_int_equal(got->hidden_dim, config->hidden_dim);
  assert_int_equal(got->n_layers, config->n_layers);
  assert_int_equal(got->n_heads, config->n_heads);
  assert_int_equal(got->n_kv_heads, config->n_kv_heads);
  assert_int_equal(got->vocab_size, config->vocab_size);
  assert_int_equal(got->seq_len, config->seq_len);
  assert_true(got->rope_theta == config->rope_theta);
  assert_true(got->norm_eps == config->norm_eps);
  assert_int_equal(got->shared_classifier, config->shared_classifier);
  assert_string_equal(layout->format,
                      format == DECODE_FORMAT_GGUF ? "gguf" : "llama2.c");
  struct stat info;
  assert_int_equal(stat(path, &info), 0);
  assert_int_equal(layout->file_size, (uint64_t)info.st_size);

  FILE* file = fopen(path, "rb");
  assert_non_null(file);
  for (int t = 0; t < DECODE_TENSOR_COUNT; ++t) {
    const decode_tensor_t tensor = (decode_tensor_t)t;
    const decode_tensor_location_t* location = &layout->tensors[t];
    if (tensor == DECODE_TENSOR_CLASSIFIER && config->shared_classifier) {
      assert_false(location->present);
      continue;
    }
    assert_true(location->present);
    const decode_dtype_t expected_dtype =
        is_norm(tensor) ? DECODE_DTYPE_F32 : dtype;
    assert_int_equal(location->dtypes[0], expected_dtype);
    const uint64_t elements = decode_tensor_elements(config, tensor);
    const uint32_t layers =
        decode_tensor_is_per_layer(tensor) ? config->n_layers : 1;
    for (uint32_t layer = 0; layer < layers; ++layer) {
      const uint64_t offset = location->offsets[layer];
      assert_true(offset + elements * decode_dtype_size(expected_dtype) <=
                  layout->file_size);
      if (format == DECODE_FORMAT_GGUF) assert_int_equal(offset % 32, 0);
      if (layer != 0 && layer != layers - 1) continue;
      // The ends, a row boundary and a point inside (row-major order).
      const uint64_t indices[] = {0, 1, config->dim - 1, config->dim,
                                  elements / 2 + 3, elements - 1};
      for (size_t i = 0; i < sizeof(indices) / sizeof(indices[0]); ++i) {
        if (indices[i] >= elements) continue;  // a norm has one row
        float expected =
            decode_random_weight(SEED, tensor, layer, indices[i]);
        if (expected_dtype == DECODE_DTYPE_F16) {
          expected = decode_f16_to_f32(decode_f32_to_f16(expected));
        }
        const float value =
            stored_weight(file, offset, expected_dtype, indices[i]);
        if (value != expected) {
          fclose(file);
          fail_msg("%s layer %u element %llu: %g, expected %g",
                   decode_tensor_name(tensor), layer,
                   (unsigned long long)indices[i], (double)value,
                   (double)expected);
        }
      }
    }
  }
  fclose(file);
}

static void round_trip(const char* shape, decode_format_t format,
                       decode_dtype_t dtype, bool shared) {
  decode_config_t config;
  assert_true(decode_shape_lookup(shape, &config));
  config.shared_classifier = shared;
  char path[128];
  temp_path(format == DECODE_FORMAT_GGUF ? "model.gguf" : "model.bin", path,
            sizeof(path));
  assert_ok(decode_checkpoint_write(path, format, &config, dtype, SEED));
  decode_layout_t layout;
  assert_ok(decode_layout_read(path, &layout));
  check_layout(path, &layout, &config, format, dtype);
  unlink(path);
}

static void tiny_llama2c(void** state) {
  (void)state;
  round_trip("tiny", DECODE_FORMAT_LLAMA2C, DECODE_DTYPE_F32, true);
  round_trip("tiny", DECODE_FORMAT_LLAMA2C, DECODE_DTYPE_F32, false);
}

static void tiny_gguf(void** state) {
  (void)state;
  round_trip("tiny", DECODE_FORMAT_GGUF, DECODE_DTYPE_F32, true);
  round_trip("tiny", DECODE_FORMAT_GGUF, DECODE_DTYPE_F32, false);
  round_trip("tiny", DECODE_FORMAT_GGUF, DECODE_DTYPE_F16, true);
  round_trip("tiny", DECODE_FORMAT_GGUF, DECODE_DTYPE_F16, false);
}

static void shape_15m(void** state) {
  (void)state;
  round_trip("15M", DECODE_FORMAT_LLAMA2C, DECODE_DTYPE_F32, true);
  round_trip("15M", DECODE_FORMAT_GGUF, DECODE_DTYPE_F32, false);
  round_trip("15M", DECODE_FORMAT_GGUF, DECODE_DTYPE_F16, true);
}

// A quantized GGUF of |config| (|dtype| mixed by |mix|): every tensor of
// the type decode_checkpoint_tensor_dtype gives, aligned, within the
// file, and the first and last row of each layer's matrix the generator's
// weights quantized, byte for byte; the types described as
// |expected_dtypes| (decode_layout_describe_dtypes).
static void quantized_round_trip(const decode_config_t* config,
                                 decode_dtype_t dtype, decode_mix_t mix,
                                 const char* expected_dtypes) {
  char path[128];
  temp_path("quantized.gguf", path, sizeof(path));
  assert_ok(decode_checkpoint_write_mix(path, config, dtype, mix, SEED));
  decode_layout_t layout;
  assert_ok(decode_layout_read(path, &layout));
  char described[64];
  decode_layout_describe_dtypes(&layout, described, sizeof(described));
  assert_string_equal(described, expected_dtypes);
  FILE* file = fopen(path, "rb");
  assert_non_null(file);
  const uint32_t widest =
      config->hidden_dim > config->dim ? config->hidden_dim : config->dim;
  float* values = malloc(widest * sizeof(float));
  uint8_t* expected = malloc(widest * sizeof(float));
  uint8_t* stored = malloc(widest * sizeof(float));
  assert_true(values && expected && stored);
  for (int t = 0; t < DECODE_TENSOR_COUNT; ++t) {
    const decode_tensor_t tensor = (decode_tensor_t)t;
    if (!layout.tensors[t].present) continue;
    const uint32_t cols =
        tensor == DECODE_TENSOR_W2 ? config->hidden_dim : config->dim;
    const uint64_t rows = decode_tensor_elements(config, tensor) / cols;
    const uint32_t layers =
        decode_tensor_is_per_layer(tensor) ? config->n_layers : 1;
    for (uint32_t l = 0; l < layers; ++l) {
      const decode_dtype_t type =
          decode_checkpoint_tensor_dtype(config, dtype, mix, tensor, l);
      assert_int_equal(layout.tensors[t].dtypes[l], type);
      const uint64_t offset = layout.tensors[t].offsets[l];
      const uint64_t row_bytes = decode_dtype_bytes(type, cols);
      assert_int_equal(offset % 32, 0);
      assert_true(offset + rows * row_bytes <= layout.file_size);
      const uint64_t check[2] = {0, rows - 1};
      for (int i = 0; i < 2; ++i) {
        for (uint32_t c = 0; c < cols; ++c) {
          values[c] = decode_random_weight(SEED, tensor, l,
                                           check[i] * cols + c);
        }
        decode_quant_quantize(type, values, cols, expected);
        assert_int_equal(
            fseeko(file, (off_t)(offset + check[i] * row_bytes), SEEK_SET), 0);
        assert_int_equal(fread(stored, 1, row_bytes, file), row_bytes);
        if (memcmp(stored, expected, row_bytes) != 0) {
          fail_msg("%s layer %u row %llu (%s) differs from the generator's",
                   decode_tensor_name(tensor), l,
                   (unsigned long long)check[i], decode_dtype_name(type));
        }
      }
    }
  }
  free(values);
  free(expected);
  free(stored);
  fclose(file);
  unlink(path);
}

static void quantized_gguf(void** state) {
  (void)state;
  decode_config_t config;
  assert_true(decode_shape_lookup("15M", &config));
  quantized_round_trip(&config, DECODE_DTYPE_Q8_0, DECODE_MIX_UNIFORM, "q8_0");
  quantized_round_trip(&config, DECODE_DTYPE_Q4_0, DECODE_MIX_UNIFORM, "q4_0");
  quantized_round_trip(&config, DECODE_DTYPE_Q4_K, DECODE_MIX_UNIFORM,
                       "q4_0, q4_k");
  quantized_round_trip(&config, DECODE_DTYPE_Q4_K, DECODE_MIX_Q4_K_M,
                       "q8_0, q4_0, q4_k, q6_k");
  // The types llama.cpp's K mixes fall back to: Q4_1, Q5_0 and Q5_1, and
  // Q5_K (Q5_1 where 288-wide rows are not whole K blocks), and Q5_K_M
  // (Q5_K, Q6_K, falling back to Q5_1 and Q8_0).
  quantized_round_trip(&config, DECODE_DTYPE_Q4_1, DECODE_MIX_UNIFORM, "q4_1");
  quantized_round_trip(&config, DECODE_DTYPE_Q5_0, DECODE_MIX_UNIFORM, "q5_0");
  quantized_round_trip(&config, DECODE_DTYPE_Q5_1, DECODE_MIX_UNIFORM, "q5_1");
  quantized_round_trip(&config, DECODE_DTYPE_Q5_K, DECODE_MIX_UNIFORM,
                       "q5_1, q5_k");
  quantized_round_trip(&config, DECODE_DTYPE_Q5_K, DECODE_MIX_Q5_K_M,
                       "q8_0, q5_1, q5_k, q6_k");
  for (uint32_t l = 0; l < 6; ++l) {
    assert_int_equal(decode_checkpoint_tensor_dtype(&config, DECODE_DTYPE_Q5_K,
                                                    DECODE_MIX_Q5_K_M,
                                                    DECODE_TENSOR_W2, l),
                     l == 2 || l == 5 ? DECODE_DTYPE_Q6_K : DECODE_DTYPE_Q5_K);
    assert_int_equal(decode_checkpoint_tensor_dtype(&config, DECODE_DTYPE_Q5_K,
                                                    DECODE_MIX_Q5_K_M,
                                                    DECODE_TENSOR_WQ, l),
                     DECODE_DTYPE_Q5_1);
  }
  // 15M's Q4_K_M: Q4_K where rows are whole K blocks (ffn_down's 768),
  // the 288-wide rest falls back to Q4_0, and Q6_K to Q8_0; ffn_down of
  // layers 2 and 5 Q6_K (llama.cpp's choice of 6 layers).
  const decode_dtype_t expected[6] = {
      DECODE_DTYPE_Q4_K, DECODE_DTYPE_Q4_K, DECODE_DTYPE_Q6_K,
      DECODE_DTYPE_Q4_K, DECODE_DTYPE_Q4_K, DECODE_DTYPE_Q6_K};
  for (uint32_t l = 0; l < 6; ++l) {
    assert_int_equal(decode_checkpoint_tensor_dtype(&config, DECODE_DTYPE_Q4_K,
                                                    DECODE_MIX_Q4_K_M,
                                                    DECODE_TENSOR_W2, l),
                     expected[l]);
    assert_int_equal(decode_checkpoint_tensor_dtype(&config, DECODE_DTYPE_Q4_K,
                                                    DECODE_MIX_Q4_K_M,
                                                    DECODE_TENSOR_WQ, l),
                     DECODE_DTYPE_Q4_0);
  }
  assert_int_equal(decode_checkpoint_tensor_dtype(
                       &config, DECODE_DTYPE_Q4_K, DECODE_MIX_Q4_K_M,
                       DECODE_TENSOR_TOKEN_EMBEDDING, 0),
                   DECODE_DTYPE_Q8_0);
  // A width of whole K blocks and 8 layers: Q6_K for the shared
  // embedding and for attn_v and ffn_down of layers 0, 3, 6 and 7, the
  // rest Q4_K; an unshared classifier Q6_K and its embedding Q4_K.
  const decode_config_t wide = {256, 512, 8, 4, 2, 512, 64,
                                10000.0f, 1e-5f, true};
  quantized_round_trip(&wide, DECODE_DTYPE_Q4_K, DECODE_MIX_Q4_K_M,
                       "q6_k, q4_k");
  quantized_round_trip(&wide, DECODE_DTYPE_Q5_K, DECODE_MIX_Q5_K_M,
                       "q6_k, q5_k");
  for (uint32_t l = 0; l < 8; ++l) {
    const bool more = l == 0 || l == 3 || l == 6 || l == 7;
    const decode_tensor_t kinds[] = {DECODE_TENSOR_WV, DECODE_TENSOR_W2,
                                     DECODE_TENSOR_WQ, DECODE_TENSOR_W1};
    for (int k = 0; k < 4; ++k) {
      assert_int_equal(
          decode_checkpoint_tensor_dtype(&wide, DECODE_DTYPE_Q4_K,
                                         DECODE_MIX_Q4_K_M, kinds[k], l),
          more && k < 2 ? DECODE_DTYPE_Q6_K : DECODE_DTYPE_Q4_K);
    }
  }
  assert_int_equal(decode_checkpoint_tensor_dtype(
                       &wide, DECODE_DTYPE_Q4_K, DECODE_MIX_Q4_K_M,
                       DECODE_TENSOR_TOKEN_EMBEDDING, 0),
                   DECODE_DTYPE_Q6_K);
  decode_config_t unshared = wide;
  unshared.shared_classifier = false;
  quantized_round_trip(&unshared, DECODE_DTYPE_Q4_K, DECODE_MIX_Q4_K_M,
                       "q4_k, q6_k");
  assert_int_equal(decode_checkpoint_tensor_dtype(
                       &unshared, DECODE_DTYPE_Q4_K, DECODE_MIX_Q4_K_M,
                       DECODE_TENSOR_TOKEN_EMBEDDING, 0),
                   DECODE_DTYPE_Q4_K);
  assert_int_equal(decode_checkpoint_tensor_dtype(
                       &unshared, DECODE_DTYPE_Q4_K, DECODE_MIX_Q4_K_M,
                       DECODE_TENSOR_CLASSIFIER, 0),
                   DECODE_DTYPE_Q6_K);
}

static void llama2c_f16_refused(void** state) {
  (void)state;
  decode_config_t config;
  assert_true(decode_shape_lookup("tiny", &config));
  char path[128];
  temp_path("f16.bin", path, sizeof(path));
  assert_error(decode_checkpoint_write(path, DECODE_FORMAT_LLAMA2C, &config,
                                       DECODE_DTYPE_F16, SEED),
               WEFT_STATUS_INVALID_ARGUMENT, path, "f32", (const char*)NULL);
  assert_int_equal(access(path, F_OK), -1);
}

//===----------------------------------------------------------------------===//
// Bad files from ours: truncated and patched
//===----------------------------------------------------------------------===//

// Writes the tiny shape to |name| in the temp dir; its path into |path|.
static void write_tiny(const char* name, decode_format_t format,
                       decode_dtype_t dtype, bool shared, char* path,
                       size_t capacity, decode_layout_t* out_layout) {
  decode_config_t config;
  assert_true(decode_shape_lookup("tiny", &config));
  config.shared_classifier = shared;
  temp_path(name, path, capacity);
  assert_ok(decode_checkpoint_write(path, format, &config, dtype, SEED));
  assert_ok(decode_layout_read(path, out_layout));
}

static void truncated_llama2c(void** state) {
  (void)state;
  char path[128];
  decode_layout_t layout;
  write_tiny("cut.bin", DECODE_FORMAT_LLAMA2C, DECODE_DTYPE_F32, true, path,
             sizeof(path), &layout);
  // In the middle of the second layer's wq.
  assert_int_equal(
      truncate(path, (off_t)layout.tensors[DECODE_TENSOR_WQ].offsets[1] + 100),
      0);
  assert_read_error(path, OUT_OF_RANGE, "truncated", "'wq'");
  // The separate classifier, after the rotary tables.
  write_tiny("cut.bin", DECODE_FORMAT_LLAMA2C, DECODE_DTYPE_F32, false, path,
             sizeof(path), &layout);
  assert_int_equal(truncate(path, (off_t)layout.file_size - 4), 0);
  assert_read_error(path, OUT_OF_RANGE, "truncated", "'classifier'");
  // A shared classifier: cut in the rotary tables that end the file.
  write_tiny("cut.bin", DECODE_FORMAT_LLAMA2C, DECODE_DTYPE_F32, true, path,
             sizeof(path), &layout);
  assert_int_equal(truncate(path, (off_t)layout.file_size - 4), 0);
  assert_read_error(path, OUT_OF_RANGE, "truncated", "rotary tables");
  unlink(path);
}

static void truncated_gguf(void** state) {
  (void)state;
  char path[128];
  decode_layout_t layout;
  write_tiny("cut.gguf", DECODE_FORMAT_GGUF, DECODE_DTYPE_F16, false, path,
             sizeof(path), &layout);
  const uint64_t data_start =
      layout.tensors[DECODE_TENSOR_TOKEN_EMBEDDING].offsets[0];
  // In the middle of blk.1.attn_k.weight.
  assert_int_equal(
      truncate(path, (off_t)layout.tensors[DECODE_TENSOR_WK].offsets[1] + 10),
      0);
  assert_read_error(path, OUT_OF_RANGE, "truncated", "'blk.1.attn_k.weight'",
                    "ends at byte");
  // The last byte of output.weight missing.
  write_tiny("cut.gguf", DECODE_FORMAT_GGUF, DECODE_DTYPE_F16, false, path,
             sizeof(path), &layout);
  assert_int_equal(truncate(path, (off_t)layout.file_size - 1), 0);
  assert_read_error(path, OUT_OF_RANGE, "truncated", "'output.weight'");
  // Just before the data section: in the padding after the tensor infos
  // (or in the last info), where the bounds once wrapped.
  assert_int_equal(truncate(path, (off_t)data_start - 1), 0);
  assert_read_error(path, OUT_OF_RANGE, "truncated");
  // In the metadata and in the header.
  assert_int_equal(truncate(path, 100), 0);
  assert_read_error(path, OUT_OF_RANGE, "truncated", "byte");
  assert_int_equal(truncate(path, 10), 0);
  assert_read_error(path, OUT_OF_RANGE, "truncated", "the tensor count");
  unlink(path);
}

// Loads the tiny GGUF at |path| for patching.
static uint8_t* tiny_gguf_bytes(char* path, size_t capacity, size_t* size) {
  decode_layout_t layout;
  write_tiny("patched.gguf", DECODE_FORMAT_GGUF, DECODE_DTYPE_F32, false, path,
             capacity, &layout);
  return file_load(path, size);
}

// A file of full length whose tensor or metadata count is corrupt: the
// count is named, with its value and the file's size (once reported as
// truncation).
static void gguf_corrupt_counts(void** state) {
  (void)state;
  char path[128];
  size_t size = 0;
  uint8_t* data = tiny_gguf_bytes(path, sizeof(path), &size);
  char file_size[64];
  snprintf(file_size, sizeof(file_size), "of the %zu-byte file", size);
  put_u64_at(data, 8, 1ull << 40);
  file_store(path, data, size);
  assert_read_error(path, OUT_OF_RANGE,
                    "the tensor count at byte 8 is 1099511627776, "
                    "implausible",
                    file_size, "a corrupt count");
  free(data);
  data = tiny_gguf_bytes(path, sizeof(path), &size);
  put_u64_at(data, 16, 0x7FFFFFFFFFFFull);
  file_store(path, data, size);
  assert_read_error(path, OUT_OF_RANGE,
                    "the metadata count at byte 16 is 140737488355327, "
                    "implausible",
                    file_size, "a corrupt count");
  free(data);
  unlink(path);
}

static void gguf_wrong_version(void** state) {
  (void)state;
  char path[128];
  size_t size = 0;
  uint8_t* data = tiny_gguf_bytes(path, sizeof(path), &size);
  put_u32_at(data, 4, 2);
  file_store(path, data, size);
  assert_read_error(path, INVALID_ARGUMENT, "version 2");
  free(data);
  unlink(path);
}

static void gguf_not_llama(void** state) {
  (void)state;
  char path[128];
  size_t size = 0;
  uint8_t* data = tiny_gguf_bytes(path, sizeof(path), &size);
  // The value right after the key "general.architecture".
  size_t at = find_bytes(data, size, "general.architecture");
  at = find_bytes(data + at, size - at, "llama") + at;
  memcpy(data + at, "mamba", 5);
  file_store(path, data, size);
  assert_read_error(path, INVALID_ARGUMENT, "general.architecture", "'mamba'");
  free(data);
  unlink(path);
}

static void gguf_unsupported_type(void** state) {
  (void)state;
  char path[128];
  size_t size = 0;
  uint8_t* data = tiny_gguf_bytes(path, sizeof(path), &size);
  const size_t info = find_tensor_info(data, size, "blk.1.attn_q.weight");
  const size_t type_at = info + 4 + 2 * 8;
  put_u32_at(data, type_at, 9);
  file_store(path, data, size);
  assert_read_error(path, INVALID_ARGUMENT, "'blk.1.attn_q.weight'",
                    "type 9 (Q8_1)",
                    "F32 and F16, and Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, "
                    "Q5_K and Q6_K");
  put_u32_at(data, type_at, 10);
  file_store(path, data, size);
  assert_read_error(path, INVALID_ARGUMENT, "'blk.1.attn_q.weight'",
                    "type 10 (Q2_K)");
  put_u32_at(data, type_at, 1000);
  file_store(path, data, size);
  assert_read_error(path, INVALID_ARGUMENT, "'blk.1.attn_q.weight'",
                    "type 1000");
  // The decoder's own interleaved forms (decode_quant_x8.h) are never a
  // file's.
  const uint32_t forms[] = {DECODE_DTYPE_Q4_0_X8, DECODE_DTYPE_Q8_0_X8,
                            DECODE_DTYPE_Q4_K_X8, DECODE_DTYPE_Q6_K_X8};
  for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); ++i) {
    char expected[32];
    snprintf(expected, sizeof(expected), "type %u", forms[i]);
    put_u32_at(data, type_at, forms[i]);
    file_store(path, data, size);
    assert_read_error(path, INVALID_ARGUMENT, "'blk.1.attn_q.weight'",
                      expected);
  }
  free(data);
  unlink(path);
}

static void gguf_missing_tensor(void** state) {
  (void)state;
  char path[128];
  size_t size = 0;
  uint8_t* data = tiny_gguf_bytes(path, sizeof(path), &size);
  // Renamed to a name the decoder ignores.
  const size_t info = find_tensor_info(data, size, "blk.1.ffn_up.weight");
  memcpy(data + info - strlen("weight"), "weighx", 6);
  file_store(path, data, size);
  assert_read_error(path, NOT_FOUND, "'blk.1.ffn_up.weight'");
  free(data);

  // The embedding, which gives the vocabulary.
  data = tiny_gguf_bytes(path, sizeof(path), &size);
  const size_t embedding = find_tensor_info(data, size, "token_embd.weight");
  memcpy(data + embedding - strlen("weight"), "weighx", 6);
  file_store(path, data, size);
  assert_read_error(path, NOT_FOUND, "'token_embd.weight'");
  free(data);
  unlink(path);
}

static void gguf_missing_key(void** state) {
  (void)state;
  char path[128];
  size_t size = 0;
  uint8_t* data = tiny_gguf_bytes(path, sizeof(path), &size);
  const size_t at = find_bytes(data, size, "llama.block_count");
  data[at + strlen("llama.block_c")] = 'O';
  file_store(path, data, size);
  assert_read_error(path, INVALID_ARGUMENT, "'llama.block_count'");
  free(data);
  unlink(path);
}

static void gguf_shape_mismatch(void** state) {
  (void)state;
  char path[128];
  size_t size = 0;
  uint8_t* data = tiny_gguf_bytes(path, sizeof(path), &size);
  // ne1 (kv_dim, 32 in the tiny shape) of blk.0.attn_k.weight.
  const size_t info = find_tensor_info(data, size, "blk.0.attn_k.weight");
  put_u64_at(data, info + 4 + 8, 48);
  file_store(path, data, size);
  assert_read_error(path, INVALID_ARGUMENT, "'blk.0.attn_k.weight'",
                    "shape [64, 48], expected [64, 32]");
  free(data);

  // A 1-D matrix and a 2-D norm that is not [dim, 1].
  data = tiny_gguf_bytes(path, sizeof(path), &size);
  const size_t norm = find_tensor_info(data, size, "blk.1.ffn_norm.weight");
  put_u64_at(data, norm + 4, 32);
  file_store(path, data, size);
  assert_read_error(path, INVALID_ARGUMENT, "'blk.1.ffn_norm.weight'",
                    "shape [32], expected [64]");
  free(data);

  // A vocabulary over 32 bits.
  data = tiny_gguf_bytes(path, sizeof(path), &size);
  const size_t embedding = find_tensor_info(data, size, "token_embd.weight");
  put_u64_at(data, embedding + 4 + 8, 1ull << 40);
  file_store(path, data, size);
  assert_read_error(path, INVALID_ARGUMENT, "'token_embd.weight'");
  free(data);

  // llama.vocab_size disagreeing with the embedding.
  data = tiny_gguf_bytes(path, sizeof(path), &size);
  const size_t vocab = find_bytes(data, size, "llama.vocab_size");
  put_u32_at(data, vocab + strlen("llama.vocab_size") + 4, 513);
  file_store(path, data, size);
  assert_read_error(path, INVALID_ARGUMENT, "llama.vocab_size 513",
                    "'token_embd.weight'");
  free(data);
  unlink(path);
}

static void llama2c_bad_header(void** state) {
  (void)state;
  char path[128];
  temp_path("header.bin", path, sizeof(path));
  for (int field = 0; field < 7; ++field) {
    int32_t header[7] = {64, 160, 2, 4, 2, 512, 64};
    header[field] = 0;
    file_store(path, header, sizeof(header));
    static const char* const kNames[7] = {"dim",        "hidden_dim",
                                          "n_layers",   "n_heads",
                                          "n_kv_heads", "vocab_size",
                                          "seq_len"};
    char needle[64];
    snprintf(needle, sizeof(needle), "field %d, %s, is 0", field,
             kNames[field]);
    assert_read_error(path, INVALID_ARGUMENT, "neither GGUF nor a llama2.c",
                      needle);
  }
  // Not a checkpoint at all (an ELF header): the first bytes, in hex and
  // as text, and what each format expects.
  const uint8_t elf[32] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0};
  file_store(path, elf, sizeof(elf));
  assert_read_error(path, INVALID_ARGUMENT,
                    "starts with 7f 45 4c 46 02 01 01 00 (\".ELF....\")",
                    "not the GGUF magic \"GGUF\"",
                    "seven positive int32 sizes", "field 2, n_layers, is 0");
  // A header that decode_config_validate refuses: 3 heads of 64.
  int32_t odd[7] = {64, 160, 2, 3, 3, 512, 64};
  file_store(path, odd, sizeof(odd));
  assert_read_error(path, INVALID_ARGUMENT, "n_heads 3");
  // A valid header with no tensors after it.
  int32_t header[7] = {64, 160, 2, 4, 2, 512, 64};
  file_store(path, header, sizeof(header));
  assert_read_error(path, OUT_OF_RANGE, "truncated", "'token_embedding'");
  unlink(path);
}

static void garbage_files(void** state) {
  (void)state;
  char path[128];
  temp_path("garbage", path, sizeof(path));
  file_store(path, "", 0);
  assert_read_error(path, INVALID_ARGUMENT, "is empty");
  file_store(path, "hello", 5);
  assert_read_error(path, INVALID_ARGUMENT, "68 65 6c 6c 6f (\"hello\")",
                    "5 bytes are fewer than the 28 of a llama2.c header");
  uint8_t bytes[256 + 64 * 61];
  memset(bytes, 0xFF, sizeof(bytes));
  file_store(path, bytes, sizeof(bytes));
  assert_read_error(path, INVALID_ARGUMENT,
                    "ff ff ff ff ff ff ff ff (\"........\")",
                    "field 0, dim, is -1");
  // "GGUF" and too little after it.
  file_store(path, "GGUF", 4);
  assert_read_error(path, OUT_OF_RANGE, "the version");
  file_store(path, "GGUF\x03\x00", 6);
  assert_read_error(path, OUT_OF_RANGE, "the version");
  // "GGUF" and noise: must fail cleanly whatever the bytes say.
  uint64_t x = 0x243F6A8885A308D3ull;
  for (int round = 0; round < 64; ++round) {
    for (size_t i = 0; i < sizeof(bytes); ++i) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      bytes[i] = (uint8_t)(x >> 56);
    }
    memcpy(bytes, "GGUF\x03\x00\x00\x00", 8);
    // Small counts some rounds, so the metadata parser gets to run.
    if (round % 2) put_u64_at(bytes, 8, (uint64_t)(round % 5));
    if (round % 4 == 1) put_u64_at(bytes, 16, 3);
    file_store(path, bytes, (size_t)(256 + round * 61));
    decode_layout_t layout;
    weft_status_t status = decode_layout_read(path, &layout);
    assert_false(weft_status_is_ok(status));
    weft_status_free(status);
  }
  unlink(path);
  // No file at all.
  assert_read_error(path, NOT_FOUND, "cannot open");
}

// A valid file with a few bytes of its header, metadata or tensor infos
// changed, many times: each read fails cleanly or gives tensors that lie
// within the file (the sanitizer builds check the rest).
static void gguf_mutations(void** state) {
  (void)state;
  char path[128];
  decode_layout_t layout;
  write_tiny("mutated.gguf", DECODE_FORMAT_GGUF, DECODE_DTYPE_F16, false,
             path, sizeof(path), &layout);
  const size_t header_size =
      (size_t)layout.tensors[DECODE_TENSOR_TOKEN_EMBEDDING].offsets[0];
  size_t size = 0;
  uint8_t* original = file_load(path, &size);
  uint8_t* data = malloc(size);
  assert_non_null(data);
  uint64_t x = 0x9E3779B97F4A7C15ull;
  int failures = 0;
  for (int round = 0; round < 400; ++round) {
    memcpy(data, original, size);
    const int changes = 1 + round % 4;
    for (int c = 0; c < changes; ++c) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      const size_t at = 8 + (size_t)(x >> 33) % (header_size - 8);
      // Small values, large ones and single bits.
      const uint8_t kinds[] = {0x00, 0xFF, 0x80, (uint8_t)(x >> 13),
                               (uint8_t)(data[at] ^ (1u << ((x >> 7) & 7)))};
      data[at] = kinds[(x >> 20) % sizeof(kinds)];
    }
    file_store(path, data, size);
    weft_status_t status = decode_layout_read(path, &layout);
    if (!weft_status_is_ok(status)) {
      ++failures;
      weft_status_free(status);
      continue;
    }
    for (int t = 0; t < DECODE_TENSOR_COUNT; ++t) {
      if (!layout.tensors[t].present) continue;
      const uint64_t elements =
          decode_tensor_elements(&layout.config, (decode_tensor_t)t);
      const uint32_t layers = decode_tensor_is_per_layer((decode_tensor_t)t)
                                  ? layout.config.n_layers
                                  : 1;
      for (uint32_t l = 0; l < layers; ++l) {
        const uint64_t bytes =
            decode_dtype_bytes(layout.tensors[t].dtypes[l], elements);
        assert_true(layout.tensors[t].offsets[l] <= size &&
                    bytes <= size - layout.tensors[t].offsets[l]);
      }
    }
  }
  // Most changes break something; some (names of unknown keys, padding,
  // a tokenizer string) do not.
  assert_true(failures > 100);
  free(data);
  free(original);
  unlink(path);
}

//===----------------------------------------------------------------------===//
// A GGUF writer of the test's own
//===----------------------------------------------------------------------===//

enum {
  T_UINT8 = 0,
  T_INT8 = 1,
  T_UINT16 = 2,
  T_INT16 = 3,
  T_UINT32 = 4,
  T_INT32 = 5,
  T_FLOAT32 = 6,
  T_BOOL = 7,
  T_STRING = 8,
  T_ARRAY = 9,
  T_UINT64 = 10,
  T_INT64 = 11,
  T_FLOAT64 = 12,
};
// GGML tensor types.
enum { GGML_F32 = 0, GGML_F16 = 1 };

typedef struct bytes_t {
  uint8_t* data;
  size_t size;
  size_t capacity;
} bytes_t;

static void put(bytes_t* b, const void* data, size_t length) {
  if (b->size + length > b->capacity) {
    b->capacity = (b->size + length) * 2;
    b->data = realloc(b->data, b->capacity);
    assert_non_null(b->data);
  }
  if (length) memcpy(b->data + b->size, data, length);
  b->size += length;
}
static void put_u8(bytes_t* b, uint8_t v) { put(b, &v, 1); }
static void put_u16(bytes_t* b, uint16_t v) { put(b, &v, 2); }
static void put_u32(bytes_t* b, uint32_t v) { put(b, &v, 4); }
static void put_u64(bytes_t* b, uint64_t v) { put(b, &v, 8); }
static void put_str(bytes_t* b, const char* s) {
  put_u64(b, strlen(s));
  put(b, s, strlen(s));
}
static void put_key(bytes_t* b, const char* key, uint32_t type) {
  put_str(b, key);
  put_u32(b, type);
}
// An integer value of |type| (the low bytes of |value|).
static void put_int(bytes_t* b, uint32_t type, int64_t value) {
  switch (type) {
    case T_UINT8:
    case T_INT8:
      put_u8(b, (uint8_t)value);
      break;
    case T_UINT16:
    case T_INT16:
      put_u16(b, (uint16_t)value);
      break;
    case T_UINT32:
    case T_INT32:
      put_u32(b, (uint32_t)value);
      break;
    default:
      put_u64(b, (uint64_t)value);
      break;
  }
}

typedef struct test_tensor_t {
  char name[64];
  uint32_t n_dims;
  uint64_t dims[4];
  uint32_t type;
  bool fixed_offset;  // |offset| as set, else placed after the previous one
  uint64_t offset;
  // The generator's values for (kind, layer) when |kind| is a decoder
  // tensor; zeros otherwise.
  int kind;
  uint32_t layer;
} test_tensor_t;

typedef struct test_gguf_t {
  decode_config_t config;
  uint32_t version;
  uint32_t alignment;     // general.alignment when non-zero (else 32)
  uint32_t int_type;      // of the llama.* integer keys
  bool kv_heads_key;      // llama.attention.head_count_kv
  bool float_keys;        // llama.rope.freq_base and the epsilon
  bool vocab_key;         // llama.vocab_size
  bool junk;              // unknown keys of every type first
  const char* skip_key;   // a key left out
  const char* bad_key;    // a key written as -4 (INT32)
  uint64_t tensor_count;  // written in the header when non-zero
  size_t trailing;        // zero bytes after the data
  test_tensor_t tensors[40];
  uint32_t count;
} test_gguf_t;

static void add_tensor(test_gguf_t* g, int kind, uint32_t layer) {
  static const char* const kBlock[DECODE_TENSOR_COUNT] = {
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
  assert_true(g->count < sizeof(g->tensors) / sizeof(g->tensors[0]));
  test_tensor_t* t = &g->tensors[g->count++];
  memset(t, 0, sizeof(*t));
  t->kind = kind;
  t->layer = layer;
  const decode_config_t* c = &g->config;
  const uint64_t kv_dim = decode_kv_dim(c);
  uint64_t ne1 = 1;
  switch (kind) {
    case DECODE_TENSOR_TOKEN_EMBEDDING:
      snprintf(t->name, sizeof(t->name), "token_embd.weight");
      ne1 = c->vocab_size;
      break;
    case DECODE_TENSOR_FINAL_NORM:
      snprintf(t->name, sizeof(t->name), "output_norm.weight");
      break;
    case DECODE_TENSOR_CLASSIFIER:
      snprintf(t->name, sizeof(t->name), "output.weight");
      ne1 = c->vocab_size;
      break;
    default:
      snprintf(t->name, sizeof(t->name), "blk.%u.%s.weight", layer,
               kBlock[kind]);
      ne1 = kind == DECODE_TENSOR_WK || kind == DECODE_TENSOR_WV ? kv_dim
            : kind == DECODE_TENSOR_W1 || kind == DECODE_TENSOR_W3
                ? c->hidden_dim
            : is_norm((decode_tensor_t)kind) ? 1
                                             : c->dim;
      break;
  }
  t->dims[0] = kind == DECODE_TENSOR_W2 ? c->hidden_dim : c->dim;
  t->dims[1] = ne1;
  t->n_dims = is_norm((decode_tensor_t)kind) ? 1 : 2;
  t->type = GGML_F32;
}

// A valid tiny-shaped file of F32 tensors; the tests then change it.
static void test_gguf_init(test_gguf_t* g, const decode_config_t* config) {
  memset(g, 0, sizeof(*g));
  g->config = *config;
  g->version = 3;
  g->int_type = T_UINT32;
  g->kv_heads_key = g->float_keys = g->vocab_key = true;
  add_tensor(g, DECODE_TENSOR_TOKEN_EMBEDDING, 0);
  for (uint32_t l = 0; l < config->n_layers; ++l) {
    for (int k = DECODE_TENSOR_ATTN_NORM; k <= DECODE_TENSOR_W3; ++k) {
      add_tensor(g, k, l);
    }
  }
  add_tensor(g, DECODE_TENSOR_FINAL_NORM, 0);
  if (!config->shared_classifier) add_tensor(g, DECODE_TENSOR_CLASSIFIER, 0);
}

static test_tensor_t* test_gguf_tensor(test_gguf_t* g, const char* name) {
  for (uint32_t i = 0; i < g->count; ++i) {
    if (strcmp(g->tensors[i].name, name) == 0) return &g->tensors[i];
  }
  fail_msg("no tensor '%s'", name);
  return NULL;
}

static void put_junk(bytes_t* b, uint32_t* count) {
  // A vocabulary, its scores and token types.
  put_key(b, "tokenizer.ggml.tokens", T_ARRAY);
  put_u32(b, T_STRING);
  put_u64(b, 4);
  put_str(b, "<unk>");
  put_str(b, "");
  put_str(b, "llama.block_count");  // a value, not a key
  put_str(b, "\xe2\x96\x81the");
  put_key(b, "tokenizer.ggml.scores", T_ARRAY);
  put_u32(b, T_FLOAT32);
  put_u64(b, 3);
  for (int i = 0; i < 3; ++i) put_u32(b, 0x3F800000u);
  put_key(b, "tokenizer.ggml.token_type", T_ARRAY);
  put_u32(b, T_INT32);
  put_u64(b, 2);
  put_u32(b, 1);
  put_u32(b, 2);
  // Arrays of arrays: of strings and of u8.
  put_key(b, "test.nested", T_ARRAY);
  put_u32(b, T_ARRAY);
  put_u64(b, 2);
  put_u32(b, T_STRING);
  put_u64(b, 2);
  put_str(b, "a");
  put_str(b, "bc");
  put_u32(b, T_UINT8);
  put_u64(b, 3);
  put_u8(b, 1);
  put_u8(b, 2);
  put_u8(b, 3);
  put_key(b, "test.empty", T_ARRAY);
  put_u32(b, T_INT64);
  put_u64(b, 0);
  // A scalar of every other type.
  put_key(b, "general.name", T_STRING);
  put_str(b, "a test model");
  put_key(b, "test.u8", T_UINT8);
  put_u8(b, 7);
  put_key(b, "test.i8", T_INT8);
  put_u8(b, 0x80);
  put_key(b, "test.u16", T_UINT16);
  put_u16(b, 7);
  put_key(b, "test.i16", T_INT16);
  put_u16(b, 0x8000);
  put_key(b, "test.bool", T_BOOL);
  put_u8(b, 1);
  put_key(b, "test.f64", T_FLOAT64);
  put_u64(b, 0x400921FB54442D18ull);
  put_key(b, "test.i64", T_INT64);
  put_u64(b, (uint64_t)-5);
  put_key(b, "llama.rope.dimension_count", T_UINT32);  // unused by weft
  put_u32(b, 16);
  *count += 14;
}

static void put_int_key(bytes_t* b, const test_gguf_t* g, const char* key,
                        uint64_t value, uint32_t* count) {
  if (g->skip_key && strcmp(key, g->skip_key) == 0) return;
  if (g->bad_key && strcmp(key, g->bad_key) == 0) {
    put_key(b, key, T_INT32);
    put_int(b, T_INT32, -4);
  } else {
    put_key(b, key, g->int_type);
    put_int(b, g->int_type, (int64_t)value);
  }
  ++*count;
}

static uint64_t test_tensor_bytes(const test_tensor_t* t) {
  uint64_t elements = 1;
  for (uint32_t d = 0; d < t->n_dims && d < 4; ++d) {
    // Absurd shapes get no data (the reader must refuse them first).
    if (t->dims[d] > (1u << 24) || elements * t->dims[d] > (1u << 24)) {
      return 0;
    }
    elements *= t->dims[d];
  }
  return elements * (t->type == GGML_F16 ? 2 : 4);
}

static void test_gguf_write(test_gguf_t* g, const char* path) {
  const decode_config_t* c = &g->config;
  const uint64_t alignment = g->alignment ? g->alignment : 32;
  bytes_t kv = {0};
  uint32_t kv_count = 0;
  if (g->junk) put_junk(&kv, &kv_count);
  if (!g->skip_key || strcmp(g->skip_key, "general.architecture") != 0) {
    put_key(&kv, "general.architecture", T_STRING);
    put_str(&kv, "llama");
    ++kv_count;
  }
  if (g->alignment) {
    put_key(&kv, "general.alignment", T_UINT32);
    put_u32(&kv, g->alignment);
    ++kv_count;
  }
  put_int_key(&kv, g, "llama.embedding_length", c->dim, &kv_count);
  put_int_key(&kv, g, "llama.feed_forward_length", c->hidden_dim, &kv_count);
  put_int_key(&kv, g, "llama.block_count", c->n_layers, &kv_count);
  put_int_key(&kv, g, "llama.attention.head_count", c->n_heads, &kv_count);
  if (g->kv_heads_key) {
    put_int_key(&kv, g, "llama.attention.head_count_kv", c->n_kv_heads,
                &kv_count);
  }
  put_int_key(&kv, g, "llama.context_length", c->seq_len, &kv_count);
  if (g->vocab_key) {
    put_int_key(&kv, g, "llama.vocab_size", c->vocab_size, &kv_count);
  }
  if (g->float_keys) {
    put_key(&kv, "llama.rope.freq_base", T_FLOAT32);
    put(&kv, &c->rope_theta, 4);
    put_key(&kv, "llama.attention.layer_norm_rms_epsilon", T_FLOAT32);
    put(&kv, &c->norm_eps, 4);
    kv_count += 2;
  }

  bytes_t b = {0};
  put(&b, "GGUF", 4);
  put_u32(&b, g->version);
  put_u64(&b, g->tensor_count ? g->tensor_count : g->count);
  put_u64(&b, kv_count);
  put(&b, kv.data, kv.size);
  free(kv.data);
  uint64_t next = 0;
  for (uint32_t i = 0; i < g->count; ++i) {
    test_tensor_t* t = &g->tensors[i];
    if (!t->fixed_offset) {
      t->offset = next;
      next += (test_tensor_bytes(t) + alignment - 1) / alignment * alignment;
    }
    put_str(&b, t->name);
    put_u32(&b, t->n_dims);
    // Past 4 dimensions (a bad file), the rest are 1.
    for (uint32_t d = 0; d < t->n_dims; ++d) {
      put_u64(&b, d < 4 ? t->dims[d] : 1);
    }
    put_u32(&b, t->type);
    put_u64(&b, t->offset);
  }
  while (b.size % alignment) put_u8(&b, 0);
  const size_t data_start = b.size;
  for (uint32_t i = 0; i < g->count; ++i) {
    const test_tensor_t* t = &g->tensors[i];
    if (t->fixed_offset) continue;
    while (b.size < data_start + t->offset) put_u8(&b, 0);
    const uint64_t elements =
        test_tensor_bytes(t) / (t->type == GGML_F16 ? 2u : 4u);
    for (uint64_t e = 0; e < elements; ++e) {
      const float w =
          t->kind >= 0
              ? decode_random_weight(SEED, (decode_tensor_t)t->kind, t->layer,
                                     e)
              : 0.0f;
      if (t->type == GGML_F16) {
        put_u16(&b, decode_f32_to_f16(w));
      } else {
        put(&b, &w, 4);
      }
    }
  }
  while (b.size % alignment) put_u8(&b, 0);
  for (size_t i = 0; i < g->trailing; ++i) put_u8(&b, 0);
  file_store(path, b.data, b.size);
  free(b.data);
}

// The tiny shape with n_kv_heads == n_heads when |gqa| is false.
static decode_config_t tiny_config(bool gqa, bool shared) {
  decode_config_t config;
  assert_true(decode_shape_lookup("tiny", &config));
  if (!gqa) config.n_kv_heads = config.n_heads;
  config.shared_classifier = shared;
  return config;
}

static void gguf_variants(void** state) {
  (void)state;
  char path[128];
  temp_path("variant.gguf", path, sizeof(path));
  test_gguf_t g;
  decode_layout_t layout;

  // Unknown keys of every type, u64 integers, an alignment of 64, custom
  // rotary base and epsilon, a tensor the decoder does not use.
  decode_config_t config = tiny_config(true, false);
  config.rope_theta = 500000.0f;
  config.norm_eps = 1e-6f;
  test_gguf_init(&g, &config);
  g.junk = true;
  g.alignment = 64;
  g.int_type = T_UINT64;
  add_tensor(&g, DECODE_TENSOR_FINAL_NORM, 0);
  snprintf(g.tensors[g.count - 1].name, sizeof(g.tensors[0].name),
           "rope_freqs.weight");
  g.tensors[g.count - 1].kind = -1;
  test_gguf_write(&g, path);
  assert_ok(decode_layout_read(path, &layout));
  check_layout(path, &layout, &config, DECODE_FORMAT_GGUF, DECODE_DTYPE_F32);
  for (int t = 0; t < DECODE_TENSOR_COUNT; ++t) {
    assert_int_equal(layout.tensors[t].offsets[0] % 64, 0);
  }

  // i32 integers; no head_count_kv (= head_count), no rotary base or
  // epsilon (10000, 1e-5), no vocab_size; blocks in reverse order.
  config = tiny_config(false, true);
  test_gguf_init(&g, &config);
  g.int_type = T_INT32;
  g.kv_heads_key = g.float_keys = g.vocab_key = false;
  for (uint32_t i = 1, j = g.count - 2; i < j; ++i, --j) {
    const test_tensor_t swap = g.tensors[i];
    g.tensors[i] = g.tensors[j];
    g.tensors[j] = swap;
  }
  test_gguf_write(&g, path);
  assert_ok(decode_layout_read(path, &layout));
  check_layout(path, &layout, &config, DECODE_FORMAT_GGUF, DECODE_DTYPE_F32);

  // u16 integers, F16 matrices, norms stored as [dim, 1, 1] and the
  // embedding as [dim, vocab, 1].
  config = tiny_config(true, true);
  test_gguf_init(&g, &config);
  g.int_type = T_UINT16;
  for (uint32_t i = 0; i < g.count; ++i) {
    test_tensor_t* t = &g.tensors[i];
    if (is_norm((decode_tensor_t)t->kind)) {
      t->n_dims = 3;
      t->dims[1] = t->dims[2] = 1;
      t->type = GGML_F32;
    } else {
      if (t->kind == DECODE_TENSOR_TOKEN_EMBEDDING) {
        t->n_dims = 3;
        t->dims[2] = 1;
      }
      t->type = GGML_F16;
    }
  }
  test_gguf_write(&g, path);
  assert_ok(decode_layout_read(path, &layout));
  check_layout(path, &layout, &config, DECODE_FORMAT_GGUF, DECODE_DTYPE_F16);
  unlink(path);
}

static void gguf_bad_metadata(void** state) {
  (void)state;
  char path[128];
  temp_path("metadata.gguf", path, sizeof(path));
  const decode_config_t config = tiny_config(true, true);
  test_gguf_t g;

  static const char* const kRequired[] = {
      "llama.embedding_length", "llama.feed_forward_length",
      "llama.block_count", "llama.attention.head_count",
      "llama.context_length"};
  for (size_t i = 0; i < sizeof(kRequired) / sizeof(kRequired[0]); ++i) {
    test_gguf_init(&g, &config);
    g.skip_key = kRequired[i];
    test_gguf_write(&g, path);
    assert_read_error(path, INVALID_ARGUMENT, kRequired[i]);
  }
  test_gguf_init(&g, &config);
  g.skip_key = "general.architecture";
  test_gguf_write(&g, path);
  assert_read_error(path, INVALID_ARGUMENT, "general.architecture",
                    "(missing)");

  // A negative integer.
  test_gguf_init(&g, &config);
  g.bad_key = "llama.attention.head_count";
  test_gguf_write(&g, path);
  assert_read_error(path, INVALID_ARGUMENT, "'llama.attention.head_count'");
  // A width over 32 bits.
  test_gguf_init(&g, &config);
  g.int_type = T_UINT64;
  g.config.seq_len = 0;  // becomes 2^32 below
  test_gguf_write(&g, path);
  {
    size_t size = 0;
    uint8_t* data = file_load(path, &size);
    const size_t at = find_bytes(data, size, "llama.context_length");
    put_u64_at(data, at + strlen("llama.context_length") + 4, 1ull << 32);
    file_store(path, data, size);
    free(data);
  }
  assert_read_error(path, INVALID_ARGUMENT, "'llama.context_length'");
  // A config decode_config_validate refuses (3 heads of 64).
  test_gguf_init(&g, &config);
  g.config.n_heads = g.config.n_kv_heads = 3;
  test_gguf_write(&g, path);
  assert_read_error(path, INVALID_ARGUMENT, "n_heads 3");
  // A version 2 file, with everything else right.
  test_gguf_init(&g, &config);
  g.version = 2;
  test_gguf_write(&g, path);
  assert_read_error(path, INVALID_ARGUMENT, "GGUF version 2");

  // An alignment that is not a power of two.
  test_gguf_init(&g, &config);
  g.alignment = 48;
  test_gguf_write(&g, path);
  assert_read_error(path, INVALID_ARGUMENT, "'general.alignment'");

  // Hand-made metadata: a key, an array and a string longer than the file,
  // an array of an unknown type, arrays nested too deep, an unknown value
  // type, a huge key count.
  bytes_t b = {0};
  put(&b, "GGUF", 4);
  put_u32(&b, 3);
  put_u64(&b, 0);
  put_u64(&b, 1);
  const size_t after_counts = b.size;
  put_u64(&b, ~0ull - 7);
  put(&b, "key and more", 12);
  file_store(path, b.data, b.size);
  assert_read_error(path, OUT_OF_RANGE,
                    "the length of a metadata key at byte 24 is "
                    "18446744073709551608, implausible",
                    "12 bytes left of the 44-byte file");

  b.size = after_counts;
  put_key(&b, "tokenizer.ggml.tokens", T_ARRAY);
  put_u32(&b, T_STRING);
  put_u64(&b, 1ull << 60);
  put_str(&b, "a");
  file_store(path, b.data, b.size);
  assert_read_error(path, OUT_OF_RANGE,
                    "the element count of 'tokenizer.ggml.tokens' at byte",
                    "is 1152921504606846976, implausible");

  b.size = after_counts;
  put_key(&b, "tokenizer.ggml.scores", T_ARRAY);
  put_u32(&b, T_FLOAT32);
  put_u64(&b, 1ull << 62);  // * 4 wraps to 0
  file_store(path, b.data, b.size);
  assert_read_error(path, OUT_OF_RANGE,
                    "the element count of 'tokenizer.ggml.scores' at byte",
                    "is 4611686018427387904, implausible");

  b.size = after_counts;
  put_key(&b, "general.name", T_STRING);
  put_u64(&b, 1000);
  put(&b, "short", 5);
  file_store(path, b.data, b.size);
  assert_read_error(path, OUT_OF_RANGE,
                    "the length of the value of 'general.name'", "is 1000",
                    "truncated file");

  b.size = after_counts;
  put_key(&b, "test.weird", T_ARRAY);
  put_u32(&b, 13);
  put_u64(&b, 1);
  put_u64(&b, 0);
  file_store(path, b.data, b.size);
  assert_read_error(path, INVALID_ARGUMENT, "'test.weird'");

  b.size = after_counts;
  put_key(&b, "test.deep", T_ARRAY);
  for (int depth = 0; depth < 8; ++depth) {
    put_u32(&b, T_ARRAY);
    put_u64(&b, 1);
  }
  put_u32(&b, T_UINT8);
  put_u64(&b, 0);
  file_store(path, b.data, b.size);
  assert_read_error(path, INVALID_ARGUMENT, "'test.deep'");

  b.size = after_counts;
  put_key(&b, "test.unknown", 99);
  put_u64(&b, 0);
  file_store(path, b.data, b.size);
  assert_read_error(path, INVALID_ARGUMENT, "'test.unknown'", "type 99");

  b.size = 0;
  put(&b, "GGUF", 4);
  put_u32(&b, 3);
  put_u64(&b, 0);
  put_u64(&b, ~0ull);
  for (int i = 0; i < 64; ++i) put_u8(&b, 0);
  file_store(path, b.data, b.size);
  assert_read_error(path, OUT_OF_RANGE,
                    "the metadata count at byte 16 is 18446744073709551615");
  free(b.data);

  // A rotary base that is negative and one beyond float.
  test_gguf_init(&g, &config);
  g.config.rope_theta = -1.0f;
  test_gguf_write(&g, path);
  assert_read_error(path, INVALID_ARGUMENT, "'llama.rope.freq_base'");
  test_gguf_init(&g, &config);
  g.config.norm_eps = NAN;
  test_gguf_write(&g, path);
  assert_read_error(path, INVALID_ARGUMENT,
                    "'llama.attention.layer_norm_rms_epsilon'");
  unlink(path);
}

static void gguf_bad_tensors(void** state) {
  (void)state;
  char path[128];
  temp_path("tensors.gguf", path, sizeof(path));
  const decode_config_t config = tiny_config(true, false);
  test_gguf_t g;

  // A tensor twice (the second in place of blk.1's).
  test_gguf_init(&g, &config);
  snprintf(test_gguf_tensor(&g, "blk.1.attn_v.weight")->name,
           sizeof(g.tensors[0].name), "blk.0.attn_v.weight");
  test_gguf_write(&g, path);
  assert_read_error(path, INVALID_ARGUMENT, "'blk.0.attn_v.weight'",
                    "appears twice");
  // A block past llama.block_count.
  test_gguf_init(&g, &config);
  add_tensor(&g, DECODE_TENSOR_WQ, 7);
  test_gguf_write(&g, path);
  assert_read_error(path, INVALID_ARGUMENT, "'blk.7.attn_q.weight'",
                    "block_count is 2");
  // One matrix F16 among F32 ones: taken, as quantized files mix types.
  test_gguf_init(&g, &config);
  test_gguf_tensor(&g, "blk.1.attn_v.weight")->type = GGML_F16;
  test_gguf_write(&g, path);
  decode_layout_t mixed;
  assert_ok(decode_layout_read(path, &mixed));
  assert_int_equal(mixed.tensors[DECODE_TENSOR_WV].dtypes[0],
                   DECODE_DTYPE_F32);
  assert_int_equal(mixed.tensors[DECODE_TENSOR_WV].dtypes[1],
                   DECODE_DTYPE_F16);
  // A Q4_K matrix whose rows (the tiny width of 64) are not whole blocks.
  test_gguf_init(&g, &config);
  test_gguf_tensor(&g, "blk.1.attn_q.weight")->type = 12;
  test_gguf_write(&g, path);
  assert_read_error(path, INVALID_ARGUMENT, "'blk.1.attn_q.weight'", "Q4_K",
                    "blocks are 256 elements, but its rows are 64");
  // An F16 norm.
  test_gguf_init(&g, &config);
  test_gguf_tensor(&g, "output_norm.weight")->type = GGML_F16;
  test_gguf_write(&g, path);
  assert_read_error(path, INVALID_ARGUMENT, "'output_norm.weight'",
                    "must be F32");
  // A misaligned offset.
  test_gguf_init(&g, &config);
  test_gguf_write(&g, path);
  test_tensor_t* wo = test_gguf_tensor(&g, "blk.0.attn_output.weight");
  wo->fixed_offset = true;
  wo->offset += 4;
  test_gguf_write(&g, path);
  assert_read_error(path, INVALID_ARGUMENT, "'blk.0.attn_output.weight'",
                    "alignment 32");
  // An offset far past the file (and one that would wrap when added).
  wo->offset = 1ull << 40;
  test_gguf_write(&g, path);
  assert_read_error(path, OUT_OF_RANGE, "'blk.0.attn_output.weight'");
  wo->offset = ~0ull - 31;
  test_gguf_write(&g, path);
  assert_read_error(path, OUT_OF_RANGE, "'blk.0.attn_output.weight'");
  // Five dimensions, and none.
  test_gguf_init(&g, &config);
  test_tensor_t* w1 = test_gguf_tensor(&g, "blk.0.ffn_gate.weight");
  w1->n_dims = 5;
  test_gguf_write(&g, path);
  assert_read_error(path, INVALID_ARGUMENT, "'blk.0.ffn_gate.weight'",
                    "5 dimensions");
  w1->n_dims = 0;
  test_gguf_write(&g, path);
  assert_read_error(path, INVALID_ARGUMENT, "'blk.0.ffn_gate.weight'",
                    "0 dimensions");
  // Extra dimensions that are not 1.
  test_gguf_init(&g, &config);
  w1 = test_gguf_tensor(&g, "blk.0.ffn_gate.weight");
  w1->n_dims = 3;
  w1->dims[2] = 2;
  test_gguf_write(&g, path);
  assert_read_error(path, INVALID_ARGUMENT, "'blk.0.ffn_gate.weight'",
                    "shape [64, 160, 2], expected [64, 160]");
  // An embedding [dim, vocab, 2].
  test_gguf_init(&g, &config);
  test_tensor_t* embedding = test_gguf_tensor(&g, "token_embd.weight");
  embedding->n_dims = 3;
  embedding->dims[2] = 2;
  test_gguf_write(&g, path);
  assert_read_error(path, INVALID_ARGUMENT, "'token_embd.weight'",
                    "shape [64, 512, 2], expected [64, 512]");
  // No tensors at all (a vocabulary file): said so, whether the file
  // pads to a data section (alignment 32) or ends with its metadata
  // (alignment 1, as llama.cpp's vocabulary files end unpadded).
  for (uint32_t alignment = 1; alignment <= 32; alignment += 31) {
    test_gguf_init(&g, &config);
    g.count = 0;
    g.alignment = alignment;
    test_gguf_write(&g, path);
    assert_read_error(path, INVALID_ARGUMENT, "has no tensors",
                      "metadata only");
  }
  // A tensor count beyond the file, and one beyond any model.
  test_gguf_init(&g, &config);
  g.tensor_count = 1ull << 40;
  test_gguf_write(&g, path);
  assert_read_error(path, OUT_OF_RANGE, "tensor infos");
  g.tensor_count = 100000;
  g.trailing = 100000 * 24;
  test_gguf_write(&g, path);
  assert_read_error(path, INVALID_ARGUMENT, "100000 tensors");
  // A tensor name longer than the file.
  test_gguf_init(&g, &config);
  test_gguf_write(&g, path);
  {
    size_t size = 0;
    uint8_t* data = file_load(path, &size);
    const size_t info = find_tensor_info(data, size, "blk.1.ffn_down.weight");
    put_u64_at(data, info - strlen("blk.1.ffn_down.weight") - 8, ~0ull);
    file_store(path, data, size);
    free(data);
  }
  assert_read_error(path, OUT_OF_RANGE, "the length of a tensor name",
                    "is 18446744073709551615, implausible");

  // A 2^31-wide model whose ffn_gate, 2^62 elements, is 0 bytes in u64
  // arithmetic: it must still be refused, by name.
  decode_config_t wide = tiny_config(true, true);
  wide.dim = wide.hidden_dim = 1u << 31;
  wide.n_heads = wide.n_kv_heads = 1;
  test_gguf_init(&g, &wide);
  test_tensor_t* gate = test_gguf_tensor(&g, "blk.0.ffn_gate.weight");
  const test_tensor_t first = *gate;
  *gate = g.tensors[0];
  g.tensors[0] = first;
  g.tensors[0].fixed_offset = true;
  g.tensors[0].offset = 0;
  test_gguf_write(&g, path);
  assert_read_error(path, OUT_OF_RANGE, "'blk.0.ffn_gate.weight'",
                    "ends at byte");
  unlink(path);
}

//===----------------------------------------------------------------------===//
// Half floats
//===----------------------------------------------------------------------===//

static void f16_round_trip_every_half(void** state) {
  (void)state;
  for (uint32_t h = 0; h < 65536; ++h) {
    const bool is_nan = (h & 0x7C00u) == 0x7C00u && (h & 0x3FFu) != 0;
    const float value = decode_f16_to_f32((uint16_t)h);
    if (is_nan) {
      assert_true(isnan(value));
      const uint16_t back = decode_f32_to_f16(value);
      assert_true((back & 0x7C00u) == 0x7C00u && (back & 0x3FFu) != 0);
      continue;
    }
    const uint16_t back = decode_f32_to_f16(value);
    if (back != h) {
      fail_msg("half 0x%04x -> %a -> 0x%04x", h, (double)value, back);
    }
  }
  // A few values to the bit.
  assert_true(decode_f16_to_f32(0x3C00) == 1.0f);
  assert_true(decode_f16_to_f32(0xC000) == -2.0f);
  assert_true(decode_f16_to_f32(0x7BFF) == 65504.0f);
  assert_true(decode_f16_to_f32(0x0001) == ldexpf(1.0f, -24));
  assert_true(decode_f16_to_f32(0x03FF) == ldexpf(1023.0f, -24));
  assert_true(decode_f16_to_f32(0x0400) == ldexpf(1.0f, -14));
  assert_true(isinf(decode_f16_to_f32(0x7C00)));
  assert_true(signbit(decode_f16_to_f32(0x8000)));
}

static void f16_rounds_to_nearest_even(void** state) {
  (void)state;
  const struct {
    float value;
    uint16_t half;
  } kCases[] = {
      {1.0f, 0x3C00},
      {-2.0f, 0xC000},
      {0.0f, 0x0000},
      {-0.0f, 0x8000},
      // Halfway between 1 and its successor: to the even 1.
      {1.0f + 0x1p-11f, 0x3C00},
      // Just above halfway: up.
      {1.0f + 0x1p-11f + 0x1p-20f, 0x3C01},
      // Halfway between 0x3C01 and 0x3C02: to the even 0x3C02.
      {1.0f + 3 * 0x1p-11f, 0x3C02},
      // Just below halfway: down.
      {1.0f + 3 * 0x1p-11f - 0x1p-20f, 0x3C01},
      {65504.0f, 0x7BFF},
      {65519.0f, 0x7BFF},
      // Halfway to 65536 rounds to even, which overflows to infinity.
      {65520.0f, 0x7C00},
      {1e10f, 0x7C00},
      {-1e10f, 0xFC00},
      {INFINITY, 0x7C00},
      {-INFINITY, 0xFC00},
      // Subnormals: 2^-24 is the smallest; 2^-25 is halfway to 0 (even).
      {0x1p-24f, 0x0001},
      {0x1p-25f, 0x0000},
      {0x1p-25f + 0x1p-40f, 0x0001},
      {-0x1p-25f, 0x8000},
      {3 * 0x1p-25f, 0x0002},  // 1.5 x 2^-24: to the even 2
      {5 * 0x1p-25f, 0x0002},  // 2.5 x 2^-24: to the even 2
      {1e-8f, 0x0000},
      {0x1p-30f, 0x0000},
      // The largest subnormal plus half a step: to the even 0x0400.
      {0x1p-14f - 0x1p-25f, 0x0400},
      {0x1p-14f - 3 * 0x1p-25f, 0x03FE},
      {0.1f, 0x2E66},
      {-0.1f, 0xAE66},
      {0x1.554p-2f, 0x3555},
  };
  for (size_t i = 0; i < sizeof(kCases) / sizeof(kCases[0]); ++i) {
    const uint16_t got = decode_f32_to_f16(kCases[i].value);
    if (got != kCases[i].half) {
      fail_msg("%a -> 0x%04x, expected 0x%04x", (double)kCases[i].value, got,
               kCases[i].half);
    }
  }
  const uint16_t nan_half = decode_f32_to_f16(NAN);
  assert_true((nan_half & 0x7C00u) == 0x7C00u && (nan_half & 0x3FFu) != 0);
}

//===----------------------------------------------------------------------===//

static int setup(void** state) {
  (void)state;
  snprintf(g_dir, sizeof(g_dir), "/tmp/weft-decode-format-XXXXXX");
  return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void** state) {
  (void)state;
  DIR* dir = opendir(g_dir);
  if (dir) {
    for (struct dirent* entry; (entry = readdir(dir));) {
      if (entry->d_name[0] == '.') continue;
      char path[512];
      snprintf(path, sizeof(path), "%s/%s", g_dir, entry->d_name);
      unlink(path);
    }
    closedir(dir);
  }
  return rmdir(g_dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(f16_round_trip_every_half),
      cmocka_unit_test(f16_rounds_to_nearest_even),
      cmocka_unit_test(tiny_llama2c),
      cmocka_unit_test(tiny_gguf),
      cmocka_unit_test(shape_15m),
      cmocka_unit_test(quantized_gguf),
      cmocka_unit_test(llama2c_f16_refused),
      cmocka_unit_test(truncated_llama2c),
      cmocka_unit_test(truncated_gguf),
      cmocka_unit_test(gguf_wrong_version),
      cmocka_unit_test(gguf_corrupt_counts),
      cmocka_unit_test(gguf_not_llama),
      cmocka_unit_test(gguf_unsupported_type),
      cmocka_unit_test(gguf_missing_tensor),
      cmocka_unit_test(gguf_missing_key),
      cmocka_unit_test(gguf_shape_mismatch),
      cmocka_unit_test(llama2c_bad_header),
      cmocka_unit_test(garbage_files),
      cmocka_unit_test(gguf_mutations),
      cmocka_unit_test(gguf_variants),
      cmocka_unit_test(gguf_bad_metadata),
      cmocka_unit_test(gguf_bad_tensors),
  };
  return cmocka_run_group_tests_name("decode.format", tests, setup, teardown);
}
