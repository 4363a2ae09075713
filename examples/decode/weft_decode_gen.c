// weft-decode-gen: writes a llama-architecture checkpoint of random
// weights, so decoding needs no download.
//
//   weft-decode-gen --shape=15M|110M|1.1B|tiny --out=FILE
//                   [--format=llama2c|gguf] [--dtype=f32|f16] [--seed=N]
//
// The same seed gives the same weights in both formats (F16 rounds them).
// Exit codes: 0 written, 1 an error, 2 bad usage.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode_checkpoint.h"

static void print_usage(FILE* stream) {
  fprintf(stream,
          "Usage: weft-decode-gen --shape=15M|110M|1.1B|tiny --out=FILE\n"
          "                       [--format=llama2c|gguf] [--dtype=f32|f16] "
          "[--seed=N]\n"
          "\n"
          "Writes a checkpoint of random weights (default: llama2c, f32,\n"
          "seed 1). llama2.c checkpoints are f32 only; GGUF takes f16.\n");
}

int main(int argc, char** argv) {
  const char* shape = NULL;
  const char* out = NULL;
  decode_format_t format = DECODE_FORMAT_LLAMA2C;
  decode_dtype_t dtype = DECODE_DTYPE_F32;
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
    } else if (strcmp(arg, "--format=gguf") == 0) {
      format = DECODE_FORMAT_GGUF;
    } else if (strcmp(arg, "--dtype=f32") == 0) {
      dtype = DECODE_DTYPE_F32;
    } else if (strcmp(arg, "--dtype=f16") == 0) {
      dtype = DECODE_DTYPE_F16;
    } else if (strncmp(arg, "--seed=", 7) == 0) {
      char* end = NULL;
      seed = strtoull(arg + 7, &end, 10);
      if (end == arg + 7 || *end) {
        fprintf(stderr, "weft-decode-gen: --seed takes a number, not '%s'\n",
                arg + 7);
        return 2;
      }
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
  weft_status_t status =
      decode_checkpoint_write(out, format, &config, dtype, seed);
  if (!weft_status_is_ok(status)) {
    fprintf(stderr, "weft-decode-gen: ");
    weft_status_fprint(stderr, status);
    weft_status_free(status);
    return 1;
  }
  printf("wrote %s: shape %s, %s, %s weights, seed %llu\n", out, shape,
         format == DECODE_FORMAT_GGUF ? "gguf" : "llama2.c",
         decode_dtype_name(dtype), seed);
  return 0;
}
