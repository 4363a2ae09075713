// weft-decode-gen: writes a llama-architecture checkpoint of random
// weights, so decoding needs no download.
//
//   weft-decode-gen --shape=15M|110M|1.1B|tiny --out=FILE
//                   [--format=llama2c|gguf]
//                   [--dtype=f32|f16|q8_0|q4_0|q4_1|q5_0|q5_1|q4_k|q5_k|
//                            q4_k_m|q5_k_m] [--seed=N]
//
// The same seed gives the same weights in both formats (F16 rounds them,
// the quantized types quantize them). The quantized types are GGUF only;
// q4_k_m mixes Q4_K and Q6_K as llama.cpp's Q4_K_M files do, q5_k_m Q5_K
// and Q6_K as its Q5_K_M files do (decode_checkpoint_tensor_dtype). A GGUF file carries a tokenizer too:
// a synthetic SentencePiece vocabulary of the shape's size with byte
// fallback (decode_vocab_synthetic), so weft-decode --prompt takes text.
// Exit codes: 0 written, 1 an error, 2 bad usage.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_number.h"
#include "decode_checkpoint.h"

static void print_usage(FILE* stream) {
  fprintf(stream,
          "Usage: weft-decode-gen --shape=15M|110M|1.1B|tiny --out=FILE\n"
          "                       [--format=llama2c|gguf] [--seed=N]\n"
          "                       [--dtype=f32|f16|q8_0|q4_0|q4_1|q5_0|\n"
          "                                q5_1|q4_k|q5_k|q4_k_m|q5_k_m]\n"
          "\n"
          "Writes a checkpoint of random weights (default: llama2c, f32,\n"
          "seed 1). llama2.c checkpoints are f32 only; GGUF takes the\n"
          "others (a quantized type implies --format=gguf). q4_k_m mixes\n"
          "Q4_K and Q6_K as llama.cpp's Q4_K_M does, q5_k_m Q5_K and Q6_K\n"
          "as its Q5_K_M does. A GGUF file carries a synthetic\n"
          "SentencePiece vocabulary (byte fallback, common words), so\n"
          "weft-decode --prompt TEXT works with it.\n");
}

int main(int argc, char** argv) {
  const char* shape = NULL;
  const char* out = NULL;
  decode_format_t format = DECODE_FORMAT_LLAMA2C;
  bool format_given = false;
  decode_dtype_t dtype = DECODE_DTYPE_F32;
  decode_mix_t mix = DECODE_MIX_UNIFORM;
  static const struct {
    const char* name;
    decode_dtype_t dtype;
    decode_mix_t mix;
  } kDtypes[] = {
      {"f32", DECODE_DTYPE_F32, DECODE_MIX_UNIFORM},
      {"f16", DECODE_DTYPE_F16, DECODE_MIX_UNIFORM},
      {"q8_0", DECODE_DTYPE_Q8_0, DECODE_MIX_UNIFORM},
      {"q4_0", DECODE_DTYPE_Q4_0, DECODE_MIX_UNIFORM},
      {"q4_1", DECODE_DTYPE_Q4_1, DECODE_MIX_UNIFORM},
      {"q5_0", DECODE_DTYPE_Q5_0, DECODE_MIX_UNIFORM},
      {"q5_1", DECODE_DTYPE_Q5_1, DECODE_MIX_UNIFORM},
      {"q4_k", DECODE_DTYPE_Q4_K, DECODE_MIX_UNIFORM},
      {"q5_k", DECODE_DTYPE_Q5_K, DECODE_MIX_UNIFORM},
      {"q4_k_m", DECODE_DTYPE_Q4_K, DECODE_MIX_Q4_K_M},
      {"q5_k_m", DECODE_DTYPE_Q5_K, DECODE_MIX_Q5_K_M},
  };
  const char* dtype_name = "f32";
  unsigned long long seed = 1;
  for (int i = 1; i < argc; ++i) {
    const char* arg = argv[i];
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      print_usage(stdout);
      return 0;
    } else if (strncmp(arg, "--shape=", 8) == 0) {
      shape = arg + 8;
    } else if (strncmp(arg, "--out=", 6) == 0) {
      out = arg + 6;
    } else if (strcmp(arg, "--format=llama2c") == 0) {
      format = DECODE_FORMAT_LLAMA2C;
      format_given = true;
    } else if (strcmp(arg, "--format=gguf") == 0) {
      format = DECODE_FORMAT_GGUF;
      format_given = true;
    } else if (strncmp(arg, "--dtype=", 8) == 0) {
      size_t d = 0;
      const size_t count = sizeof(kDtypes) / sizeof(kDtypes[0]);
      while (d < count && strcmp(arg + 8, kDtypes[d].name) != 0) ++d;
      if (d == count) {
        fprintf(stderr, "weft-decode-gen: unknown dtype '%s'\n", arg + 8);
        print_usage(stderr);
        return 2;
      }
      dtype = kDtypes[d].dtype;
      mix = kDtypes[d].mix;
      dtype_name = kDtypes[d].name;
    } else if (strncmp(arg, "--seed=", 7) == 0) {
      uint64_t value = 0;
      if (!weft_cli_parse_u64("weft-decode-gen", "--seed", arg + 7, 0,
                              UINT64_MAX, &value)) {
        return 2;
      }
      seed = value;
    } else {
      fprintf(stderr, "weft-decode-gen: unknown argument '%s'\n", arg);
      print_usage(stderr);
      return 2;
    }
  }
  decode_config_t config;
  if (!shape || !out) {
    fprintf(stderr, "weft-decode-gen: --shape and --out are required\n");
    print_usage(stderr);
    return 2;
  }
  if (!decode_shape_lookup(shape, &config)) {
    fprintf(stderr,
            "weft-decode-gen: unknown shape '%s' (15M, 110M, 1.1B, tiny)\n",
            shape);
    return 2;
  }
  if (decode_dtype_is_quantized(dtype)) {
    if (format_given && format != DECODE_FORMAT_GGUF) {
      fprintf(stderr, "weft-decode-gen: --dtype=%s is GGUF only\n",
              dtype_name);
      return 2;
    }
    format = DECODE_FORMAT_GGUF;
  }
  weft_status_t status =
      format == DECODE_FORMAT_GGUF
          ? decode_checkpoint_write_mix(out, &config, dtype, mix, seed)
          : decode_checkpoint_write(out, format, &config, dtype, seed);
  if (!weft_status_is_ok(status)) {
    fprintf(stderr, "weft-decode-gen: ");
    weft_status_fprint(stderr, status);
    weft_status_free(status);
    return 1;
  }
  printf("wrote %s: shape %s, %s, %s weights, seed %llu\n", out, shape,
         format == DECODE_FORMAT_GGUF ? "gguf" : "llama2.c", dtype_name,
         seed);
  return 0;
}
