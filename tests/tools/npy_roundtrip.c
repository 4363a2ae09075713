// npy_roundtrip: weft_npy driven from the command line, for the NumPy
// interop test (npy_numpy_interop.py).
//
//   npy_roundtrip copy IN OUT
//       reads IN with weft_npy_read_file and writes it to OUT with
//       weft_npy_write_file.
//   npy_roundtrip copy-memory IN OUT
//       the same through weft_npy_read_memory and weft_npy_write_memory.
//   npy_roundtrip generate DTYPE OUT [DIM...]
//       writes the array of DTYPE (weft's name: f32, u8, bool, ...) and
//       shape (DIM...) whose element i (in C order) is, with
//       x = i * 0x9E3779B97F4A7C15 + 0x0123456789ABCDEF (mod 2^64):
//       bool: bit 32 of x; integers: the low bits of x; floats:
//       (((x >> 40) mod 2001) - 1000) / 8, exact in f16, f32 and f64.
//
// Errors go to stderr as the formatted status, and the exit code is 1
// (2 for a usage error).
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npy/npy.h"

// The IEEE half with the value n / 8 for an integer 0 < |n| <= 2047.
static uint16_t half_of_eighths(int64_t n) {
  uint16_t sign = n < 0 ? 0x8000 : 0;
  uint64_t magnitude = (uint64_t)(n < 0 ? -n : n);
  int top = 63 - __builtin_clzll(magnitude);  // value = 1.f * 2^(top - 3)
  uint16_t exponent = (uint16_t)(top - 3 + 15);
  uint16_t fraction = (uint16_t)((magnitude << (10 - top)) & 0x3ff);
  return (uint16_t)(sign | exponent << 10 | fraction);
}

static void generate_element(weft_npy_dtype_t dtype, uint64_t index,
                             uint8_t* out) {
  uint64_t x = index * 0x9E3779B97F4A7C15ull + 0x0123456789ABCDEFull;
  int64_t eighths = (int64_t)((x >> 40) % 2001) - 1000;
  switch (dtype) {
    case WEFT_NPY_DTYPE_BOOL:
      out[0] = (uint8_t)((x >> 32) & 1);
      break;
    case WEFT_NPY_DTYPE_F16: {
      uint16_t bits = eighths ? half_of_eighths(eighths) : 0;
      memcpy(out, &bits, sizeof(bits));
      break;
    }
    case WEFT_NPY_DTYPE_F32: {
      float value = (float)eighths / 8.0f;
      memcpy(out, &value, sizeof(value));
      break;
    }
    case WEFT_NPY_DTYPE_F64: {
      double value = (double)eighths / 8.0;
      memcpy(out, &value, sizeof(value));
      break;
    }
    default:
      // Integers: the low bytes of x (little-endian host).
      memcpy(out, &x, weft_npy_dtype_size(dtype));
      break;
  }
}

static weft_status_t generate(const char* dtype_name, const char* path,
                              int dim_count, char** dims) {
  weft_npy_dtype_t dtype;
  WEFT_RETURN_IF_ERROR(weft_npy_dtype_from_name(dtype_name, &dtype));
  uint64_t shape[WEFT_NPY_MAX_RANK + 1] = {0};
  if (dim_count > WEFT_NPY_MAX_RANK + 1) dim_count = WEFT_NPY_MAX_RANK + 1;
  for (int i = 0; i < dim_count; ++i) {
    char* end = NULL;
    shape[i] = strtoull(dims[i], &end, 10);
    if (!end || *end || end == dims[i]) {
      return WEFT_STATUS(INVALID_ARGUMENT, "dimension '%s' is not a number",
                         dims[i]);
    }
  }
  weft_npy_array_t array;
  WEFT_RETURN_IF_ERROR(weft_npy_array_initialize(
      dtype, (uint32_t)dim_count, shape, weft_allocator_system(), &array));
  size_t size = weft_npy_dtype_size(dtype);
  for (uint64_t i = 0; i < array.element_count; ++i) {
    generate_element(dtype, i, (uint8_t*)array.data + i * size);
  }
  weft_status_t status = weft_npy_write_file(path, &array);
  weft_npy_array_deinitialize(&array);
  return status;
}

static weft_status_t copy_file(const char* in, const char* out) {
  weft_npy_array_t array;
  WEFT_RETURN_IF_ERROR(
      weft_npy_read_file(in, weft_allocator_system(), &array));
  weft_status_t status = weft_npy_write_file(out, &array);
  weft_npy_array_deinitialize(&array);
  return status;
}

// Reads the whole of |path| with stdio (not weft_npy).
static weft_status_t slurp(const char* path, uint8_t** out_bytes,
                           size_t* out_length) {
  *out_bytes = NULL;
  *out_length = 0;
  FILE* file = fopen(path, "rb");
  if (!file) return WEFT_STATUS(NOT_FOUND, "cannot open '%s'", path);
  size_t capacity = 1 << 16;
  uint8_t* bytes = malloc(capacity);
  size_t length = 0;
  size_t got;
  while (bytes && (got = fread(bytes + length, 1, capacity - length, file))) {
    length += got;
    if (length == capacity) {
      capacity *= 2;
      uint8_t* grown = realloc(bytes, capacity);
      if (!grown) free(bytes);
      bytes = grown;
    }
  }
  fclose(file);
  if (!bytes) return WEFT_STATUS(RESOURCE_EXHAUSTED, "reading '%s'", path);
  *out_bytes = bytes;
  *out_length = length;
  return WEFT_OK;
}

static weft_status_t copy_memory(const char* in, const char* out) {
  weft_allocator_t allocator = weft_allocator_system();
  uint8_t* bytes = NULL;
  size_t length = 0;
  WEFT_RETURN_IF_ERROR(slurp(in, &bytes, &length));
  weft_npy_array_t array;
  weft_status_t status =
      weft_npy_read_memory(bytes, length, in, allocator, &array);
  free(bytes);
  void* image = NULL;
  size_t image_length = 0;
  if (weft_status_is_ok(status)) {
    status = weft_npy_write_memory(&array, allocator, &image, &image_length);
  }
  weft_npy_array_deinitialize(&array);
  if (weft_status_is_ok(status)) {
    FILE* file = fopen(out, "wb");
    if (!file ||
        fwrite(image, 1, image_length, file) != image_length ||
        fclose(file) != 0) {
      status = WEFT_STATUS(UNKNOWN, "writing '%s' failed", out);
    }
  }
  weft_allocator_free(allocator, image);
  return status;
}

int main(int argc, char** argv) {
  weft_status_t status;
  if (argc == 4 && strcmp(argv[1], "copy") == 0) {
    status = copy_file(argv[2], argv[3]);
  } else if (argc == 4 && strcmp(argv[1], "copy-memory") == 0) {
    status = copy_memory(argv[2], argv[3]);
  } else if (argc >= 4 && strcmp(argv[1], "generate") == 0) {
    status = generate(argv[2], argv[3], argc - 4, argv + 4);
  } else {
    fprintf(stderr,
            "Usage: npy_roundtrip copy IN OUT\n"
            "       npy_roundtrip copy-memory IN OUT\n"
            "       npy_roundtrip generate DTYPE OUT [DIM...]\n");
    return 2;
  }
  if (!weft_status_is_ok(status)) {
    fputs("npy_roundtrip: ", stderr);
    weft_status_fprint(stderr, status);
    weft_status_free(status);
    return 1;
  }
  return 0;
}
