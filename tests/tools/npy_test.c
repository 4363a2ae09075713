// Tests for weft_npy (tools/npy): round trips of every dtype through files
// and memory, hand-built images of every header version, every truncated
// prefix of valid files, random byte flips in headers, each documented
// error (its code, and a message naming the file and the field), the
// allocation failure paths, and the OS errors. Files go to a temporary
// directory made at the start and removed at the end; nothing is checked in.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>
// clang-format off
#include <cmocka.h>
// clang-format on

#include "npy/npy.h"

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static char temp_dir[512];

static int make_temp_dir(void** state) {
  (void)state;
  const char* base = getenv("TMPDIR");
  snprintf(temp_dir, sizeof(temp_dir), "%s/weft_npy_test.XXXXXX",
           base && base[0] ? base : "/tmp");
  return mkdtemp(temp_dir) ? 0 : -1;
}

static int remove_temp_dir(void** state) {
  (void)state;
  DIR* dir = opendir(temp_dir);
  if (!dir) return -1;
  struct dirent* entry;
  while ((entry = readdir(dir)) != NULL) {
    if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) {
      continue;
    }
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", temp_dir, entry->d_name);
    unlink(path);
  }
  closedir(dir);
  return rmdir(temp_dir);
}

static const char* temp_path(const char* name, char* buffer, size_t capacity) {
  snprintf(buffer, capacity, "%s/%s", temp_dir, name);
  return buffer;
}

static void write_bytes(const char* path, const void* bytes, size_t length) {
  FILE* file = fopen(path, "wb");
  assert_non_null(file);
  if (length) assert_int_equal(fwrite(bytes, 1, length, file), length);
  assert_int_equal(fclose(file), 0);
}

// Checks that |status| has |code| and that its message contains every one of
// the NULL-terminated fragments; consumes it.
static void expect_error(weft_status_t status, weft_status_code_t code, ...) {
  const char* message = weft_status_message(status);
  if (!weft_status_is(status, code)) {
    fprintf(stderr, "expected %s, got: ", weft_status_code_string(code));
    weft_status_fprint(stderr, status);
  }
  assert_int_equal(weft_status_code(status), code);
  va_list fragments;
  va_start(fragments, code);
  const char* fragment;
  while ((fragment = va_arg(fragments, const char*)) != NULL) {
    if (!strstr(message, fragment)) {
      fprintf(stderr, "message \"%s\" lacks \"%s\"\n", message, fragment);
      fail();
    }
  }
  va_end(fragments);
  weft_status_free(status);
}

static void expect_ok(weft_status_t status) {
  if (!weft_status_is_ok(status)) weft_status_fprint(stderr, status);
  assert_true(weft_status_is_ok(status));
}

static bool is_zeroed(const weft_npy_array_t* array) {
  static const weft_npy_array_t kZero;
  return memcmp(array, &kZero, sizeof(kZero)) == 0;
}

// A .npy image: magic, |major|.|minor|, the header length field (2 bytes for
// 1.x, else 4), |dict| unpadded and |data_length| bytes of |data|. Free it
// with free().
static uint8_t* build_image(uint8_t major, uint8_t minor, const char* dict,
                            const void* data, size_t data_length,
                            size_t* out_length) {
  size_t dict_length = strlen(dict);
  size_t length_size = major == 1 ? 2 : 4;
  size_t length = 8 + length_size + dict_length + data_length;
  uint8_t* image = malloc(length);
  assert_non_null(image);
  memcpy(image, "\x93NUMPY", 6);
  image[6] = major;
  image[7] = minor;
  for (size_t i = 0; i < length_size; ++i) {
    image[8 + i] = (uint8_t)(dict_length >> (8 * i));
  }
  memcpy(image + 8 + length_size, dict, dict_length);
  if (data_length) memcpy(image + 8 + length_size + dict_length, data,
                          data_length);
  *out_length = length;
  return image;
}

// Reads |length| bytes of |bytes| from a heap copy of exactly that size (so
// that ASan sees any read past it).
static weft_status_t read_exact_copy(const uint8_t* bytes, size_t length,
                                     const char* name,
                                     weft_npy_array_t* out_array) {
  uint8_t* copy = length ? malloc(length) : NULL;
  if (length) {
    assert_non_null(copy);
    memcpy(copy, bytes, length);
  }
  weft_status_t status = weft_npy_read_memory(
      copy, length, name, weft_allocator_system(), out_array);
  free(copy);
  return status;
}

// Parses a hand-built image of |dict| and |data_length| zero bytes and
// returns the status, the array deinitialized.
static weft_status_t parse_dict(const char* dict, size_t data_length,
                                const char* name) {
  uint8_t* data = calloc(1, data_length ? data_length : 1);
  size_t length = 0;
  uint8_t* image = build_image(1, 0, dict, data, data_length, &length);
  weft_npy_array_t array;
  weft_status_t status = read_exact_copy(image, length, name, &array);
  if (!weft_status_is_ok(status)) assert_true(is_zeroed(&array));
  weft_npy_array_deinitialize(&array);
  free(image);
  free(data);
  return status;
}

// Fills |array|'s data with a pattern that depends on |seed|.
static void fill_pattern(weft_npy_array_t* array, uint32_t seed) {
  uint8_t* bytes = array->data;
  for (size_t i = 0; i < array->byte_length; ++i) {
    bytes[i] = array->dtype == WEFT_NPY_DTYPE_BOOL
                   ? (uint8_t)((i + seed) % 3 == 0)
                   : (uint8_t)(i * 131u + seed * 7u + 1u);
  }
}

static void expect_same_array(const weft_npy_array_t* actual,
                              const weft_npy_array_t* expected) {
  assert_int_equal(actual->dtype, expected->dtype);
  assert_int_equal(actual->rank, expected->rank);
  for (uint32_t i = 0; i < WEFT_NPY_MAX_RANK; ++i) {
    assert_int_equal(actual->shape[i], expected->shape[i]);
  }
  assert_int_equal(actual->element_count, expected->element_count);
  assert_int_equal(actual->byte_length, expected->byte_length);
  if (expected->byte_length) {
    assert_non_null(actual->data);
    assert_memory_equal(actual->data, expected->data, expected->byte_length);
  } else {
    assert_null(actual->data);
  }
}

// An array of |dtype| and |shape| (the system allocator's) holding the
// pattern of |seed|.
static weft_npy_array_t make_array(weft_npy_dtype_t dtype, uint32_t rank,
                                   const uint64_t* shape, uint32_t seed) {
  weft_npy_array_t array;
  expect_ok(weft_npy_array_initialize(dtype, rank, shape,
                                      weft_allocator_system(), &array));
  fill_pattern(&array, seed);
  return array;
}

// |array| as a .npy image; free it with free() (the system allocator).
static uint8_t* write_image(const weft_npy_array_t* array,
                            size_t* out_length) {
  void* image = NULL;
  expect_ok(weft_npy_write_memory(array, weft_allocator_system(), &image,
                                  out_length));
  return image;
}

// Reads |image| back and checks that it holds |expected|.
static void expect_image_holds(const uint8_t* image, size_t length,
                               const weft_npy_array_t* expected) {
  weft_npy_array_t read;
  expect_ok(read_exact_copy(image, length, "image", &read));
  expect_same_array(&read, expected);
  weft_npy_array_deinitialize(&read);
}

// The shapes the round trips use.
typedef struct test_shape_t {
  uint32_t rank;
  uint64_t shape[3];
  uint64_t element_count;
} test_shape_t;

static const test_shape_t kShapes[] = {
    {0, {0}, 1},
    {1, {5}, 5},
    {3, {2, 3, 4}, 24},
    {3, {3, 0, 2}, 0},
};

//===----------------------------------------------------------------------===//
// dtypes and arrays
//===----------------------------------------------------------------------===//

static void test_dtype_helpers(void** state) {
  (void)state;
  static const struct {
    weft_npy_dtype_t dtype;
    const char* name;
    size_t size;
    const char* descr;
  } kExpected[] = {
      {WEFT_NPY_DTYPE_F16, "f16", 2, "<f2"},
      {WEFT_NPY_DTYPE_F32, "f32", 4, "<f4"},
      {WEFT_NPY_DTYPE_F64, "f64", 8, "<f8"},
      {WEFT_NPY_DTYPE_I8, "i8", 1, "|i1"},
      {WEFT_NPY_DTYPE_I16, "i16", 2, "<i2"},
      {WEFT_NPY_DTYPE_I32, "i32", 4, "<i4"},
      {WEFT_NPY_DTYPE_I64, "i64", 8, "<i8"},
      {WEFT_NPY_DTYPE_U8, "u8", 1, "|u1"},
      {WEFT_NPY_DTYPE_U16, "u16", 2, "<u2"},
      {WEFT_NPY_DTYPE_U32, "u32", 4, "<u4"},
      {WEFT_NPY_DTYPE_U64, "u64", 8, "<u8"},
      {WEFT_NPY_DTYPE_BOOL, "bool", 1, "|b1"},
  };
  assert_int_equal(sizeof(kExpected) / sizeof(kExpected[0]),
                   WEFT_NPY_DTYPE_COUNT_);
  for (size_t i = 0; i < WEFT_NPY_DTYPE_COUNT_; ++i) {
    assert_string_equal(weft_npy_dtype_name(kExpected[i].dtype),
                        kExpected[i].name);
    assert_int_equal(weft_npy_dtype_size(kExpected[i].dtype),
                     kExpected[i].size);
    assert_string_equal(weft_npy_dtype_descr(kExpected[i].dtype),
                        kExpected[i].descr);
    weft_npy_dtype_t dtype;
    expect_ok(weft_npy_dtype_from_name(kExpected[i].name, &dtype));
    assert_int_equal(dtype, kExpected[i].dtype);
  }
  assert_string_equal(weft_npy_dtype_name(WEFT_NPY_DTYPE_COUNT_), "");
  assert_int_equal(weft_npy_dtype_size((weft_npy_dtype_t)-1), 0);
  assert_string_equal(weft_npy_dtype_descr(WEFT_NPY_DTYPE_COUNT_), "");
  weft_npy_dtype_t dtype = WEFT_NPY_DTYPE_F32;
  expect_error(weft_npy_dtype_from_name("float32", &dtype),
               WEFT_STATUS_INVALID_ARGUMENT, "unknown dtype 'float32'",
               "f16 (<f2), f32 (<f4)", "bool (|b1)", NULL);
  assert_int_equal(dtype, WEFT_NPY_DTYPE_COUNT_);
  expect_error(weft_npy_dtype_from_name(NULL, &dtype),
               WEFT_STATUS_INVALID_ARGUMENT,
               "weft_npy_dtype_from_name: name is NULL", NULL);
}

static void test_array_initialize(void** state) {
  (void)state;
  weft_allocator_t allocator = weft_allocator_system();
  weft_npy_array_t array;
  uint64_t shape[2] = {3, 4};
  expect_ok(weft_npy_array_initialize(WEFT_NPY_DTYPE_I16, 2, shape, allocator,
                                      &array));
  assert_int_equal(array.rank, 2);
  assert_int_equal(array.shape[0], 3);
  assert_int_equal(array.shape[1], 4);
  assert_int_equal(array.shape[2], 0);
  assert_int_equal(array.element_count, 12);
  assert_int_equal(array.byte_length, 24);
  for (size_t i = 0; i < array.byte_length; ++i) {
    assert_int_equal(((uint8_t*)array.data)[i], 0);
  }
  char text[WEFT_NPY_SHAPE_STRING_CAPACITY];
  assert_string_equal(weft_npy_array_format_shape(&array, text, sizeof(text)),
                      "(3, 4)");
  weft_npy_array_deinitialize(&array);
  assert_true(is_zeroed(&array));
  weft_npy_array_deinitialize(&array);  // twice: a no-op
  weft_npy_array_deinitialize(NULL);

  // Rank 0: one element, |shape| may be NULL.
  expect_ok(weft_npy_array_initialize(WEFT_NPY_DTYPE_F64, 0, NULL, allocator,
                                      &array));
  assert_int_equal(array.element_count, 1);
  assert_int_equal(array.byte_length, 8);
  assert_string_equal(weft_npy_array_format_shape(&array, text, sizeof(text)),
                      "()");
  weft_npy_array_deinitialize(&array);

  // A zero dimension: no bytes, no data.
  uint64_t empty[3] = {3, 0, (uint64_t)INT64_MAX};
  expect_ok(weft_npy_array_initialize(WEFT_NPY_DTYPE_U64, 3, empty, allocator,
                                      &array));
  assert_int_equal(array.element_count, 0);
  assert_int_equal(array.byte_length, 0);
  assert_null(array.data);
  weft_npy_array_deinitialize(&array);

  // The widest shape string fits the documented capacity.
  uint64_t widest[WEFT_NPY_MAX_RANK];
  for (int i = 0; i < WEFT_NPY_MAX_RANK; ++i) widest[i] = (uint64_t)INT64_MAX;
  weft_npy_array_t described = {.rank = WEFT_NPY_MAX_RANK};
  memcpy(described.shape, widest, sizeof(widest));
  weft_npy_array_format_shape(&described, text, sizeof(text));
  assert_int_equal(strlen(text), WEFT_NPY_MAX_RANK * 19 +
                                     (WEFT_NPY_MAX_RANK - 1) * 2 + 2);
  described.rank = 1;
  assert_string_equal(weft_npy_array_format_shape(&described, text, 8),
                      "(922337");
  described.rank = WEFT_NPY_MAX_RANK + 1;  // not an array: no shape
  assert_string_equal(weft_npy_array_format_shape(&described, text, 8), "");
  assert_string_equal(weft_npy_array_format_shape(NULL, text, 8), "");

  // The errors.
  memset(&array, 0xab, sizeof(array));
  expect_error(weft_npy_array_initialize(WEFT_NPY_DTYPE_COUNT_, 0, NULL,
                                         allocator, &array),
               WEFT_STATUS_INVALID_ARGUMENT, "weft_npy_array_initialize: ",
               "dtype 12 is not a weft_npy_dtype_t", NULL);
  assert_true(is_zeroed(&array));
  expect_error(weft_npy_array_initialize(WEFT_NPY_DTYPE_F32, 9, widest,
                                         allocator, &array),
               WEFT_STATUS_OUT_OF_RANGE,
               "weft_npy_array_initialize: shape has 9 dimensions; weft "
               "supports at most 8",
               NULL);
  uint64_t too_large[1] = {(uint64_t)INT64_MAX + 1};
  expect_error(weft_npy_array_initialize(WEFT_NPY_DTYPE_F32, 1, too_large,
                                         allocator, &array),
               WEFT_STATUS_OUT_OF_RANGE,
               "shape dimension 0 is 9223372036854775808, more than INT64_MAX",
               NULL);
  uint64_t overflow[3] = {1ull << 32, 1ull << 32, 2};
  expect_error(weft_npy_array_initialize(WEFT_NPY_DTYPE_U8, 3, overflow,
                                         allocator, &array),
               WEFT_STATUS_OUT_OF_RANGE,
               "shape (4294967296, 4294967296, 2) has more than 2^64 elements",
               NULL);
  uint64_t too_many_bytes[1] = {1ull << 62};
  expect_error(weft_npy_array_initialize(WEFT_NPY_DTYPE_F64, 1, too_many_bytes,
                                         allocator, &array),
               WEFT_STATUS_OUT_OF_RANGE,
               "shape (4611686018427387904,) of f64 needs more than", NULL);
  expect_error(weft_npy_array_initialize(WEFT_NPY_DTYPE_F32, 1, NULL,
                                         allocator, &array),
               WEFT_STATUS_INVALID_ARGUMENT,
               "weft_npy_array_initialize: shape is NULL", NULL);
  expect_error(weft_npy_array_initialize(WEFT_NPY_DTYPE_F32, 0, NULL,
                                         allocator, NULL),
               WEFT_STATUS_INVALID_ARGUMENT,
               "weft_npy_array_initialize: out_array is NULL", NULL);
  weft_allocator_t zeroed = {0};
  expect_error(weft_npy_array_initialize(WEFT_NPY_DTYPE_F32, 0, NULL, zeroed,
                                         &array),
               WEFT_STATUS_INVALID_ARGUMENT, "allocator.ctl is NULL", NULL);
  assert_true(is_zeroed(&array));
}

//===----------------------------------------------------------------------===//
// Round trips
//===----------------------------------------------------------------------===//

// Checks the layout of a written image: version 1.0, the dict NumPy would
// write, padding to a '\n' ending at a multiple of 64, then the data.
static void expect_written_layout(const uint8_t* image, size_t length,
                                  const weft_npy_array_t* array) {
  assert_true(length >= 64);
  assert_memory_equal(image, "\x93NUMPY\x01\x00", 8);
  size_t data_offset = 10 + (size_t)(image[8] | image[9] << 8);
  assert_int_equal(data_offset % 64, 0);
  assert_int_equal(data_offset + array->byte_length, length);
  assert_int_equal(image[data_offset - 1], '\n');
  char shape[WEFT_NPY_SHAPE_STRING_CAPACITY];
  char dict[256];
  int dict_length = snprintf(
      dict, sizeof(dict), "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
      weft_npy_dtype_descr(array->dtype),
      weft_npy_array_format_shape(array, shape, sizeof(shape)));
  assert_memory_equal(image + 10, dict, (size_t)dict_length);
  for (size_t i = 10 + (size_t)dict_length; i < data_offset - 1; ++i) {
    assert_int_equal(image[i], ' ');
  }
}

static void test_round_trip_memory(void** state) {
  (void)state;
  for (int dtype = 0; dtype < WEFT_NPY_DTYPE_COUNT_; ++dtype) {
    for (size_t s = 0; s < sizeof(kShapes) / sizeof(kShapes[0]); ++s) {
      weft_npy_array_t array =
          make_array((weft_npy_dtype_t)dtype, kShapes[s].rank,
                     kShapes[s].shape, (uint32_t)(dtype * 10 + s));
      assert_int_equal(array.element_count, kShapes[s].element_count);
      size_t length = 0;
      uint8_t* image = write_image(&array, &length);
      expect_written_layout(image, length, &array);
      expect_image_holds(image, length, &array);
      free(image);
      weft_npy_array_deinitialize(&array);
    }
  }
}

static void test_round_trip_file(void** state) {
  (void)state;
  weft_allocator_t allocator = weft_allocator_system();
  char path[1024];
  temp_path("round_trip.npy", path, sizeof(path));
  for (int dtype = 0; dtype < WEFT_NPY_DTYPE_COUNT_; ++dtype) {
    for (size_t s = 0; s < sizeof(kShapes) / sizeof(kShapes[0]); ++s) {
      weft_npy_array_t array =
          make_array((weft_npy_dtype_t)dtype, kShapes[s].rank,
                     kShapes[s].shape, (uint32_t)(dtype * 10 + s + 1));
      expect_ok(weft_npy_write_file(path, &array));
      weft_npy_array_t read;
      expect_ok(weft_npy_read_file(path, allocator, &read));
      expect_same_array(&read, &array);
      weft_npy_array_deinitialize(&read);

      // The file holds the same bytes as the memory image.
      size_t length = 0;
      uint8_t* image = write_image(&array, &length);
      FILE* file = fopen(path, "rb");
      assert_non_null(file);
      uint8_t* contents = malloc(length + 1);
      assert_int_equal(fread(contents, 1, length + 1, file), length);
      fclose(file);
      assert_memory_equal(contents, image, length);
      free(contents);
      free(image);
      weft_npy_array_deinitialize(&array);
    }
  }
}

// The writer reads only the description and the data: a caller's own bytes
// in a stack array write as well as an owned array.
static void test_write_borrowed_data(void** state) {
  (void)state;
  float values[6] = {1.0f, -2.5f, 3.25f, 0.0f, -0.0f, 1e30f};
  weft_npy_array_t array = {
      .dtype = WEFT_NPY_DTYPE_F32,
      .rank = 2,
      .shape = {2, 3},
      .element_count = 6,
      .byte_length = sizeof(values),
      .data = values,
  };
  size_t length = 0;
  uint8_t* image = write_image(&array, &length);
  assert_int_equal(length, 128 + sizeof(values));
  expect_image_holds(image, length, &array);
  free(image);
}

//===----------------------------------------------------------------------===//
// Hand-built images
//===----------------------------------------------------------------------===//

static void expect_parses(uint8_t major, const char* dict,
                          weft_npy_dtype_t dtype, uint32_t rank,
                          const uint64_t* shape) {
  uint64_t count = 1;
  for (uint32_t i = 0; i < rank; ++i) count *= shape[i];
  size_t data_length = (size_t)count * weft_npy_dtype_size(dtype);
  uint8_t* data = malloc(data_length + 1);
  for (size_t i = 0; i < data_length; ++i) data[i] = (uint8_t)(i * 7 + 3);
  size_t length = 0;
  uint8_t* image = build_image(major, 0, dict, data, data_length, &length);
  weft_npy_array_t array;
  weft_status_t status = read_exact_copy(image, length, "hand-built", &array);
  if (!weft_status_is_ok(status)) fprintf(stderr, "dict: %s\n", dict);
  expect_ok(status);
  assert_int_equal(array.dtype, dtype);
  assert_int_equal(array.rank, rank);
  for (uint32_t i = 0; i < WEFT_NPY_MAX_RANK; ++i) {
    assert_int_equal(array.shape[i], i < rank ? shape[i] : 0);
  }
  assert_int_equal(array.element_count, count);
  assert_int_equal(array.byte_length, data_length);
  if (data_length) assert_memory_equal(array.data, data, data_length);
  weft_npy_array_deinitialize(&array);
  free(image);
  free(data);
}

static void test_header_versions(void** state) {
  (void)state;
  static const uint64_t k34[] = {3, 4};
  static const uint64_t k5[] = {5};
  static const uint64_t k2x1x3[] = {2, 1, 3};
  // Version 1.0 as NumPy writes it (padding included).
  expect_parses(1,
                "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }"
                "                                                          \n",
                WEFT_NPY_DTYPE_F32, 2, k34);
  // 2.0 and 3.0: a 4-byte header length, the same dict.
  expect_parses(2, "{'descr': '<i8', 'fortran_order': False, 'shape': (5,), }\n",
                WEFT_NPY_DTYPE_I64, 1, k5);
  expect_parses(3, "{'descr': '|b1', 'fortran_order': False, 'shape': (), }\n",
                WEFT_NPY_DTYPE_BOOL, 0, NULL);
  // Keys in any order, double quotes, odd spacing, no trailing comma,
  // newlines and tabs inside, a trailing comma in the tuple.
  expect_parses(1,
                "{ \"shape\" :( 2 ,1,\t3 , ) ,'fortran_order':False,\n"
                "  'descr':\"<u2\"}",
                WEFT_NPY_DTYPE_U16, 3, k2x1x3);
  expect_parses(3, "{'fortran_order': False, 'shape': (5,), 'descr': '<f2',}",
                WEFT_NPY_DTYPE_F16, 1, k5);
  // The byte orders: '=' (native), '|' and none mean little-endian here;
  // '>' is harmless on one-byte types.
  expect_parses(1, "{'descr': '=f8', 'fortran_order': False, 'shape': (5,)}",
                WEFT_NPY_DTYPE_F64, 1, k5);
  expect_parses(1, "{'descr': '|i4', 'fortran_order': False, 'shape': (5,)}",
                WEFT_NPY_DTYPE_I32, 1, k5);
  expect_parses(1, "{'descr': 'u4', 'fortran_order': False, 'shape': (5,)}",
                WEFT_NPY_DTYPE_U32, 1, k5);
  expect_parses(1, "{'descr': '>u1', 'fortran_order': False, 'shape': (5,)}",
                WEFT_NPY_DTYPE_U8, 1, k5);
  expect_parses(1, "{'descr': '<i1', 'fortran_order': False, 'shape': (5,)}",
                WEFT_NPY_DTYPE_I8, 1, k5);
  expect_parses(1, "{'descr': '<i2', 'fortran_order': False, 'shape': (5,)}",
                WEFT_NPY_DTYPE_I16, 1, k5);
  expect_parses(1, "{'descr': '<u8', 'fortran_order': False, 'shape': (5,)}",
                WEFT_NPY_DTYPE_U64, 1, k5);
  // Fortran order lays out the same bytes when one dimension at most is
  // larger than 1.
  expect_parses(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (5,)}",
                WEFT_NPY_DTYPE_F32, 1, k5);
  expect_parses(1, "{'descr': '<f4', 'fortran_order': True, 'shape': ()}",
                WEFT_NPY_DTYPE_F32, 0, NULL);
  static const uint64_t k1x5x1[] = {1, 5, 1};
  expect_parses(1,
                "{'descr': '<f4', 'fortran_order': True, 'shape': (1, 5, 1)}",
                WEFT_NPY_DTYPE_F32, 3, k1x5x1);
  // Eight dimensions, the most.
  static const uint64_t k8[] = {1, 2, 1, 2, 1, 2, 1, 2};
  expect_parses(
      1,
      "{'descr': '<i4', 'fortran_order': False, 'shape': (1,2,1,2,1,2,1,2)}",
      WEFT_NPY_DTYPE_I32, 8, k8);
  // A header of NumPy 1.x with 16-byte alignment and no growth padding.
  expect_parses(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (5,), }  \n",
                WEFT_NPY_DTYPE_F64, 1, k5);
}

//===----------------------------------------------------------------------===//
// Truncation and corruption
//===----------------------------------------------------------------------===//

// A few valid images: the writer's (every version-1.0 shape), and hand-built
// 2.0 and 3.0 ones.
typedef struct test_image_t {
  uint8_t* bytes;
  size_t length;
} test_image_t;

#define TEST_IMAGE_COUNT 4

static void make_test_images(test_image_t images[TEST_IMAGE_COUNT]) {
  uint64_t shape[3] = {2, 3, 2};
  weft_npy_array_t array = make_array(WEFT_NPY_DTYPE_F32, 3, shape, 5);
  images[0].bytes = write_image(&array, &images[0].length);
  weft_npy_array_deinitialize(&array);
  array = make_array(WEFT_NPY_DTYPE_U8, 0, NULL, 0);
  images[1].bytes = write_image(&array, &images[1].length);
  weft_npy_array_deinitialize(&array);
  uint8_t data[24] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
                      13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24};
  images[2].bytes = build_image(
      2, 0, "{'descr': '<i2', 'fortran_order': False, 'shape': (3, 4), }\n",
      data, 24, &images[2].length);
  images[3].bytes = build_image(
      3, 0, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }\n",
      data, 3, &images[3].length);
}

static void free_test_images(test_image_t images[TEST_IMAGE_COUNT]) {
  for (int i = 0; i < TEST_IMAGE_COUNT; ++i) free(images[i].bytes);
}

static void test_every_truncated_prefix(void** state) {
  (void)state;
  test_image_t images[TEST_IMAGE_COUNT];
  make_test_images(images);
  for (int i = 0; i < TEST_IMAGE_COUNT; ++i) {
    weft_npy_array_t array;
    expect_ok(read_exact_copy(images[i].bytes, images[i].length, "whole",
                              &array));
    weft_npy_array_deinitialize(&array);
    for (size_t length = 0; length < images[i].length; ++length) {
      memset(&array, 0xab, sizeof(array));
      weft_status_t status =
          read_exact_copy(images[i].bytes, length, "prefix.npy", &array);
      assert_true(is_zeroed(&array));
      expect_error(status, WEFT_STATUS_DATA_LOSS, "'prefix.npy': ", NULL);
    }
  }
  // The same through a file, for the first image, naming the path.
  char path[1024];
  temp_path("prefix.npy", path, sizeof(path));
  for (size_t length = 0; length < images[0].length; ++length) {
    write_bytes(path, images[0].bytes, length);
    weft_npy_array_t array;
    memset(&array, 0xab, sizeof(array));
    weft_status_t status =
        weft_npy_read_file(path, weft_allocator_system(), &array);
    assert_true(is_zeroed(&array));
    expect_error(status, WEFT_STATUS_DATA_LOSS, path, NULL);
  }
  free_test_images(images);
}

// Each stage names what was cut short.
static void test_truncation_messages(void** state) {
  (void)state;
  test_image_t images[TEST_IMAGE_COUNT];
  make_test_images(images);
  weft_npy_array_t array;
  const uint8_t* image = images[0].bytes;
  expect_error(read_exact_copy(image, 0, "t.npy", &array),
               WEFT_STATUS_DATA_LOSS, "'t.npy': the file is empty", NULL);
  expect_error(read_exact_copy(image, 3, "t.npy", &array),
               WEFT_STATUS_DATA_LOSS,
               "'t.npy': the file is truncated: it ends after 3 bytes, inside "
               "the magic string",
               NULL);
  expect_error(read_exact_copy(image, 7, "t.npy", &array),
               WEFT_STATUS_DATA_LOSS, "ends after 7 bytes, inside the version",
               NULL);
  expect_error(read_exact_copy(image, 9, "t.npy", &array),
               WEFT_STATUS_DATA_LOSS,
               "ends after 9 bytes, inside the header length (bytes 8-9)",
               NULL);
  expect_error(read_exact_copy(images[2].bytes, 11, "t.npy", &array),
               WEFT_STATUS_DATA_LOSS,
               "inside the header length (bytes 8-11)", NULL);
  expect_error(read_exact_copy(image, 40, "t.npy", &array),
               WEFT_STATUS_DATA_LOSS,
               "'t.npy': the header is truncated: its length field says 118 "
               "bytes but the file ends 30 bytes into it (at byte 40)",
               NULL);
  expect_error(read_exact_copy(image, 128 + 40, "t.npy", &array),
               WEFT_STATUS_DATA_LOSS,
               "'t.npy': data is 40 bytes but shape (2, 3, 2) of f32 needs 48",
               NULL);
  free_test_images(images);
}

// xorshift64*: deterministic, so a failure reproduces.
static uint64_t next_random(uint64_t* state) {
  uint64_t x = *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return x * 0x2545F4914F6CDD1Dull;
}

static void test_random_header_flips(void** state) {
  (void)state;
  // Bytes that mean something to the parser, and a few that mean nothing.
  static const char kInteresting[] =
      "{}()[],:'\" \n\t\\-0123456789TrueFalse<>|=fiubcLdescrshape\x00\x80\xff\x93";
  test_image_t images[TEST_IMAGE_COUNT];
  make_test_images(images);
  uint64_t random = 0x5eed5eed12345678ull;
  int accepted = 0;
  for (int iteration = 0; iteration < 40000; ++iteration) {
    const test_image_t* source = &images[iteration % TEST_IMAGE_COUNT];
    size_t header_end = source->bytes[6] == 1
                            ? 10 + (size_t)(source->bytes[8] |
                                            source->bytes[9] << 8)
                            : 12 + (size_t)(source->bytes[8] |
                                            source->bytes[9] << 8);
    uint8_t* image = malloc(source->length);
    memcpy(image, source->bytes, source->length);
    int flips = 1 + (int)(next_random(&random) % 3);
    for (int f = 0; f < flips; ++f) {
      uint64_t r = next_random(&random);
      // Mostly the dict; sometimes the preamble.
      size_t at = (r & 7) == 0 ? (size_t)(r >> 8) % 12
                               : 10 + (size_t)(r >> 8) % (header_end - 10);
      image[at] = (r >> 4) & 1 ? (uint8_t)(r >> 40)
                               : (uint8_t)kInteresting[(r >> 40) %
                                                      (sizeof(kInteresting) - 1)];
    }
    weft_npy_array_t array;
    weft_status_t status =
        read_exact_copy(image, source->length, "flipped.npy", &array);
    if (weft_status_is_ok(status)) {
      ++accepted;
      assert_true(array.rank <= WEFT_NPY_MAX_RANK);
      assert_int_equal(array.byte_length,
                       array.element_count * weft_npy_dtype_size(array.dtype));
      assert_true(array.byte_length < source->length);
      if (array.byte_length) assert_non_null(array.data);
      weft_npy_array_deinitialize(&array);
    } else {
      assert_true(is_zeroed(&array));
      weft_status_code_t code = weft_status_code(status);
      assert_true(code == WEFT_STATUS_INVALID_ARGUMENT ||
                  code == WEFT_STATUS_DATA_LOSS ||
                  code == WEFT_STATUS_OUT_OF_RANGE);
      assert_true(strncmp(weft_status_message(status), "'flipped.npy': ",
                          15) == 0);
      weft_status_free(status);
    }
    free(image);
  }
  // Flips in padding, quotes swapped for quotes, and the like: some images
  // stay valid.
  assert_true(accepted > 0);
  free_test_images(images);
}

//===----------------------------------------------------------------------===//
// The errors
//===----------------------------------------------------------------------===//

static void test_preamble_errors(void** state) {
  (void)state;
  weft_npy_array_t array;
  expect_error(read_exact_copy((const uint8_t*)"PK\x03\x04 not npy", 12,
                               "model.npz", &array),
               WEFT_STATUS_INVALID_ARGUMENT,
               "'model.npz': not a .npy file: it starts with 'PK\\x03\\x04 "
               "n', not the magic string '\\x93NUMPY'",
               NULL);
  expect_error(read_exact_copy((const uint8_t*)"\x93NUMPX", 6, "x.npy", &array),
               WEFT_STATUS_INVALID_ARGUMENT, "'x.npy': not a .npy file", NULL);
  // A short file that does not start like the magic is not a .npy file.
  expect_error(read_exact_copy((const uint8_t*)"ab", 2, "x.npy", &array),
               WEFT_STATUS_INVALID_ARGUMENT, "'x.npy': not a .npy file", NULL);
  const char* dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (), }";
  size_t length = 0;
  uint8_t* image = build_image(4, 0, dict, "\0\0\0\0", 4, &length);
  expect_error(read_exact_copy(image, length, "v4.npy", &array),
               WEFT_STATUS_INVALID_ARGUMENT,
               "'v4.npy': unsupported .npy version 4.0; weft reads 1.0, 2.0 "
               "and 3.0",
               NULL);
  free(image);
  image = build_image(1, 1, dict, "\0\0\0\0", 4, &length);
  expect_error(read_exact_copy(image, length, "v11.npy", &array),
               WEFT_STATUS_INVALID_ARGUMENT, "'v11.npy': unsupported .npy "
               "version 1.1", NULL);
  free(image);
  image = build_image(0, 0, dict, "\0\0\0\0", 4, &length);
  expect_error(read_exact_copy(image, length, "v0.npy", &array),
               WEFT_STATUS_INVALID_ARGUMENT, "version 0.0", NULL);
  free(image);
}

static void test_data_length_errors(void** state) {
  (void)state;
  const char* dict =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }";
  expect_error(parse_dict(dict, 40, "x.npy"), WEFT_STATUS_DATA_LOSS,
               "'x.npy': data is 40 bytes but shape (3, 4) of f32 needs 48",
               NULL);
  expect_error(parse_dict(dict, 52, "x.npy"), WEFT_STATUS_INVALID_ARGUMENT,
               "'x.npy': data is 52 bytes but shape (3, 4) of f32 needs 48 (4 "
               "bytes too many; weft reads one array per file)",
               NULL);
  expect_ok(parse_dict(dict, 48, "x.npy"));
  expect_error(parse_dict("{'descr': '<f2', 'fortran_order': False, "
                          "'shape': (), }",
                          0, "scalar.npy"),
               WEFT_STATUS_DATA_LOSS,
               "'scalar.npy': data is 0 bytes but shape () of f16 needs 2",
               NULL);
  expect_error(parse_dict("{'descr': '|b1', 'fortran_order': False, "
                          "'shape': (0, 9), }",
                          1, "empty.npy"),
               WEFT_STATUS_INVALID_ARGUMENT,
               "'empty.npy': data is 1 bytes but shape (0, 9) of bool needs 0",
               NULL);
}

static void test_dtype_errors(void** state) {
  (void)state;
  const char* supported =
      "supported: f16 (<f2), f32 (<f4), f64 (<f8), i8 (|i1), i16 (<i2), i32 "
      "(<i4), i64 (<i8), u8 (|u1), u16 (<u2), u32 (<u4), u64 (<u8), bool "
      "(|b1)";
  static const struct {
    const char* descr;
    const char* expected;
  } kCases[] = {
      {"<c8", "dtype '<c8' (complex) is not supported; "},
      {"<c16", "dtype '<c16' (complex) is not supported"},
      {"<M8[ns]", "dtype '<M8[ns]' (datetime) is not supported"},
      {"<m8[s]", "dtype '<m8[s]' (timedelta) is not supported"},
      {"|O", "dtype '|O' (Python objects) is not supported"},
      {"|S5", "dtype '|S5' (byte strings) is not supported"},
      {"<U10", "dtype '<U10' (unicode strings) is not supported"},
      {"|V8", "dtype '|V8' (raw bytes or records) is not supported"},
      {"<f16", "dtype '<f16' is not supported"},
      {"<i3", "dtype '<i3' is not supported"},
      {"<b2", "dtype '<b2' is not supported"},
      {"<x4", "dtype '<x4' is not supported"},
      {"", "dtype '' is not supported"},
      {"<", "dtype '<' is not supported"},
      {"<f", "dtype '<f' is not supported"},
      {"<f4 ", "dtype '<f4 ' is not supported"},
      {"<f00004", "dtype '<f00004' is not supported"},
      {"float32", "dtype 'float32' is not supported"},
  };
  for (size_t i = 0; i < sizeof(kCases) / sizeof(kCases[0]); ++i) {
    char dict[256];
    snprintf(dict, sizeof(dict),
             "{'descr': '%s', 'fortran_order': False, 'shape': (1,), }",
             kCases[i].descr);
    expect_error(parse_dict(dict, 8, "d.npy"), WEFT_STATUS_INVALID_ARGUMENT,
                 "'d.npy': header: ", kCases[i].expected, supported, NULL);
  }
  expect_error(parse_dict("{'descr': '>f4', 'fortran_order': False, "
                          "'shape': (2,), }",
                          8, "big.npy"),
               WEFT_STATUS_INVALID_ARGUMENT,
               "'big.npy': header: dtype '>f4' is big-endian, which is not "
               "supported",
               NULL);
  expect_error(parse_dict("{'descr': '>i8', 'fortran_order': False, "
                          "'shape': (), }",
                          8, "big.npy"),
               WEFT_STATUS_INVALID_ARGUMENT, "dtype '>i8' is big-endian",
               NULL);
  expect_error(parse_dict("{'descr': [('a', '<f4'), ('b', '<i4')], "
                          "'fortran_order': False, 'shape': (2,), }",
                          16, "rec.npy"),
               WEFT_STATUS_INVALID_ARGUMENT,
               "'rec.npy': header: 'descr' is a list: structured dtypes are "
               "not supported",
               NULL);
  // Unprintable bytes are shown escaped.
  expect_error(parse_dict("{'descr': '<\x01\xff', 'fortran_order': False, "
                          "'shape': (2,), }",
                          8, "odd.npy"),
               WEFT_STATUS_INVALID_ARGUMENT, "dtype '<\\x01\\xff'", NULL);
}

static void test_order_and_shape_errors(void** state) {
  (void)state;
  expect_error(parse_dict("{'descr': '<f4', 'fortran_order': True, "
                          "'shape': (3, 4), }",
                          48, "f.npy"),
               WEFT_STATUS_INVALID_ARGUMENT,
               "'f.npy': header: 'fortran_order' is True (shape (3, 4)): "
               "Fortran order is not supported",
               NULL);
  expect_error(parse_dict("{'descr': '<f4', 'fortran_order': 0, "
                          "'shape': (3, 4), }",
                          48, "f.npy"),
               WEFT_STATUS_INVALID_ARGUMENT,
               "'f.npy': header: expected True or False for 'fortran_order' "
               "at byte 34 of the header dict, found '0, 'shape': ...'",
               NULL);
  expect_error(parse_dict("{'descr': '<f4', 'fortran_order': Falsehood, "
                          "'shape': (3, 4), }",
                          48, "f.npy"),
               WEFT_STATUS_INVALID_ARGUMENT,
               "expected True or False for 'fortran_order'", NULL);
  expect_error(parse_dict("{'descr': '<f4', 'fortran_order': False, "
                          "'shape': (99999999999999999999,), }",
                          48, "s.npy"),
               WEFT_STATUS_OUT_OF_RANGE,
               "'s.npy': header: shape dimension 0 is 99999999999999999999, "
               "more than INT64_MAX",
               NULL);
  expect_error(parse_dict("{'descr': '<f4', 'fortran_order': False, "
                          "'shape': (2, 9223372036854775808), }",
                          48, "s.npy"),
               WEFT_STATUS_OUT_OF_RANGE,
               "'s.npy': header: shape dimension 1 is 9223372036854775808",
               NULL);
  // INT64_MAX itself is a valid dimension, but not with a second one.
  expect_error(parse_dict("{'descr': '|u1', 'fortran_order': False, "
                          "'shape': (9223372036854775807, 3), }",
                          48, "s.npy"),
               WEFT_STATUS_OUT_OF_RANGE,
               "'s.npy': shape (9223372036854775807, 3) has more than 2^64 "
               "elements",
               NULL);
  expect_error(parse_dict("{'descr': '<f8', 'fortran_order': False, "
                          "'shape': (4611686018427387904,), }",
                          48, "s.npy"),
               WEFT_STATUS_OUT_OF_RANGE,
               "'s.npy': shape (4611686018427387904,) of f64 needs more than",
               NULL);
  // Huge dimensions with a zero are zero elements.
  expect_ok(parse_dict("{'descr': '<f8', 'fortran_order': False, "
                       "'shape': (9223372036854775807, 0, 9223372036854775807), }",
                       0, "s.npy"));
  expect_error(parse_dict("{'descr': '<f4', 'fortran_order': False, "
                          "'shape': (1, 1, 1, 1, 1, 1, 1, 1, 1), }",
                          4, "r.npy"),
               WEFT_STATUS_OUT_OF_RANGE,
               "'r.npy': shape has 9 dimensions; weft supports at most 8",
               NULL);
  expect_error(parse_dict("{'descr': '<f4', 'fortran_order': False, "
                          "'shape': (3), }",
                          12, "t.npy"),
               WEFT_STATUS_INVALID_ARGUMENT,
               "'t.npy': header: 'shape' is (3), a number and not a tuple",
               NULL);
  expect_error(parse_dict("{'descr': '<f4', 'fortran_order': False, "
                          "'shape': (3, -4), }",
                          12, "n.npy"),
               WEFT_STATUS_INVALID_ARGUMENT,
               "'n.npy': header: expected a dimension (a shape has no "
               "negative ones) at byte",
               NULL);
  expect_error(parse_dict("{'descr': '<f4', 'fortran_order': False, "
                          "'shape': [3, 4], }",
                          48, "l.npy"),
               WEFT_STATUS_INVALID_ARGUMENT,
               "expected '(' starting the tuple of 'shape'", NULL);
  expect_error(parse_dict("{'descr': '<f4', 'fortran_order': False, "
                          "'shape': (3 4), }",
                          48, "l.npy"),
               WEFT_STATUS_INVALID_ARGUMENT, "expected ',' or ')' in 'shape'",
               NULL);
  expect_error(parse_dict("{'descr': '<f4', 'fortran_order': False, "
                          "'shape': (3,,), }",
                          12, "l.npy"),
               WEFT_STATUS_INVALID_ARGUMENT,
               "expected a dimension (a non-negative integer) in 'shape'",
               NULL);
  expect_error(parse_dict("{'descr': '<f4', 'fortran_order': False, "
                          "'shape': (3L,), }",
                          12, "l.npy"),
               WEFT_STATUS_INVALID_ARGUMENT, "expected ',' or ')' in 'shape'",
               NULL);
}

static void test_dict_errors(void** state) {
  (void)state;
  static const struct {
    const char* dict;
    const char* expected;
  } kCases[] = {
      {"{'descr': '<f4', 'fortran_order': False, }",
       "'k.npy': header: the key 'shape' is missing"},
      {"{'descr': '<f4', 'shape': (), }",
       "'k.npy': header: the key 'fortran_order' is missing"},
      {"{'fortran_order': False, 'shape': (), }",
       "'k.npy': header: the key 'descr' is missing"},
      {"{}", "'k.npy': header: the key 'descr' is missing"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (), 'shape': (), }",
       "'k.npy': header: key 'shape' appears twice"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (), 'extra': 1}",
       "'k.npy': header: unknown key 'extra'; a .npy header has 'descr', "
       "'fortran_order' and 'shape'"},
      {"", "'k.npy': header: expected '{' starting the dict at byte 0 of the "
           "header dict, found the end of the header"},
      {"   \n", "expected '{' starting the dict at byte 4"},
      {"garbage", "expected '{' starting the dict at byte 0 of the header "
                  "dict, found 'garbage'"},
      {"{'descr' '<f4'}", "expected ':' after the key at byte 9"},
      {"{descr: '<f4'}", "expected a key ('descr', 'fortran_order' or "
                         "'shape') or '}' at byte 1"},
      {"{'descr': '<f4' 'shape': ()}",
       "expected ',' or '}' after a value at byte 16"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': ()",
       "expected ',' or '}' after a value at byte 52 of the header dict, "
       "found the end of the header"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': ()}x",
       "expected only spaces and '\\n' after the dict at byte 53"},
      {"{'descr': '<f4, 'fortran_order': False, 'shape': ()}",
       "dtype '<f4, ' is not supported"},
      {"{'descr': '<f4", "the string at byte 10 of the header dict does not end"},
      {"{'descr': '<f\\x34'}", "has an escape sequence (not supported)"},
      {"{'descr': '<f4\n'}", "the string at byte 10 of the header dict does "
                             "not end"},
      {"{'descr': 4}", "expected a string for 'descr' at byte 10"},
      {"{'sh\\ape': ()}", "has an escape sequence"},
      {"{\"descr': '<f4'}",
       "the string at byte 1 of the header dict does not end"},
  };
  for (size_t i = 0; i < sizeof(kCases) / sizeof(kCases[0]); ++i) {
    expect_error(parse_dict(kCases[i].dict, 4, "k.npy"),
                 WEFT_STATUS_INVALID_ARGUMENT, "'k.npy': ", kCases[i].expected,
                 NULL);
  }
  // A NUL inside the dict (strlen would stop at it: build the bytes).
  static const char kWithNul[] =
      "{'descr': '<f4', 'fortran_order': False,\0'shape': (), }";
  size_t length = 0;
  uint8_t* image = build_image(1, 0, "", NULL, 0, &length);
  uint8_t* full = malloc(length + sizeof(kWithNul) - 1 + 4);
  memcpy(full, image, length);
  memcpy(full + length, kWithNul, sizeof(kWithNul) - 1);
  memset(full + length + sizeof(kWithNul) - 1, 0, 4);
  full[8] = (uint8_t)(sizeof(kWithNul) - 1);
  weft_npy_array_t array;
  expect_error(read_exact_copy(full, length + sizeof(kWithNul) - 1 + 4,
                               "nul.npy", &array),
               WEFT_STATUS_INVALID_ARGUMENT,
               "'nul.npy': header: expected a key ('descr', 'fortran_order' "
               "or 'shape') or '}' at byte 40 of the header dict, found "
               "'\\x00'shape': ()...'",
               NULL);
  free(full);
  free(image);
}

//===----------------------------------------------------------------------===//
// Arguments, files and allocation
//===----------------------------------------------------------------------===//

static void test_argument_errors(void** state) {
  (void)state;
  weft_allocator_t allocator = weft_allocator_system();
  weft_npy_array_t array;
  expect_error(weft_npy_read_memory("x", 1, NULL, allocator, &array),
               WEFT_STATUS_INVALID_ARGUMENT,
               "weft_npy_read_memory: name is NULL", NULL);
  expect_error(weft_npy_read_memory(NULL, 1, "x", allocator, &array),
               WEFT_STATUS_INVALID_ARGUMENT,
               "weft_npy_read_memory: bytes is NULL", NULL);
  expect_error(weft_npy_read_memory(NULL, 0, "none", allocator, &array),
               WEFT_STATUS_DATA_LOSS, "'none': the file is empty", NULL);
  expect_error(weft_npy_read_memory("x", 1, "x", allocator, NULL),
               WEFT_STATUS_INVALID_ARGUMENT,
               "weft_npy_read_memory: out_array is NULL", NULL);
  expect_error(weft_npy_read_file(NULL, allocator, &array),
               WEFT_STATUS_INVALID_ARGUMENT, "weft_npy_read_file: path is NULL",
               NULL);

  // The writer checks that the array's fields agree.
  uint8_t data[12] = {0};
  weft_npy_array_t bad = {.dtype = WEFT_NPY_DTYPE_F32,
                          .rank = 2,
                          .shape = {1, 3},
                          .element_count = 4,
                          .byte_length = 12,
                          .data = data};
  void* bytes = (void*)1;
  size_t length = 1;
  expect_error(weft_npy_write_memory(&bad, allocator, &bytes, &length),
               WEFT_STATUS_INVALID_ARGUMENT,
               "weft_npy_write_memory: array.element_count is 4 but shape "
               "(1, 3) has 3 elements",
               NULL);
  assert_null(bytes);
  assert_int_equal(length, 0);
  bad.element_count = 3;
  bad.byte_length = 16;
  char path[1024];
  temp_path("bad.npy", path, sizeof(path));
  expect_error(weft_npy_write_file(path, &bad), WEFT_STATUS_INVALID_ARGUMENT,
               "weft_npy_write_file: array.byte_length is 16 but shape (1, 3) "
               "of f32 needs 12",
               NULL);
  assert_int_equal(access(path, F_OK), -1);  // nothing was created
  bad.byte_length = 12;
  bad.data = NULL;
  expect_error(weft_npy_write_file(path, &bad), WEFT_STATUS_INVALID_ARGUMENT,
               "weft_npy_write_file: array.data is NULL but shape (1, 3) of "
               "f32 is 12 bytes",
               NULL);
  bad.data = data;
  bad.rank = 9;
  expect_error(weft_npy_write_file(path, &bad), WEFT_STATUS_OUT_OF_RANGE,
               "weft_npy_write_file: shape has 9 dimensions", NULL);
  bad.rank = 2;
  bad.dtype = (weft_npy_dtype_t)99;
  expect_error(weft_npy_write_file(path, &bad), WEFT_STATUS_INVALID_ARGUMENT,
               "weft_npy_write_file: dtype 99 is not a weft_npy_dtype_t", NULL);
  expect_error(weft_npy_write_file(NULL, &bad), WEFT_STATUS_INVALID_ARGUMENT,
               "weft_npy_write_file: path is NULL", NULL);
  expect_error(weft_npy_write_file(path, NULL), WEFT_STATUS_INVALID_ARGUMENT,
               "weft_npy_write_file: array is NULL", NULL);
  expect_error(weft_npy_write_memory(&bad, allocator, NULL, &length),
               WEFT_STATUS_INVALID_ARGUMENT,
               "weft_npy_write_memory: out_bytes is NULL", NULL);
}

static void test_file_errors(void** state) {
  (void)state;
  weft_allocator_t allocator = weft_allocator_system();
  weft_npy_array_t array;
  char path[1024];
  temp_path("no_such_file.npy", path, sizeof(path));
  memset(&array, 0xab, sizeof(array));
  expect_error(weft_npy_read_file(path, allocator, &array),
               WEFT_STATUS_NOT_FOUND, path,
               "cannot open: No such file or directory", NULL);
  assert_true(is_zeroed(&array));
  expect_error(weft_npy_read_file(temp_dir, allocator, &array),
               WEFT_STATUS_INVALID_ARGUMENT, temp_dir,
               "is a directory, not a .npy file", NULL);
  weft_npy_array_t scalar;
  expect_ok(weft_npy_array_initialize(WEFT_NPY_DTYPE_I32, 0, NULL, allocator,
                                      &scalar));
  temp_path("no_such_dir/out.npy", path, sizeof(path));
  expect_error(weft_npy_write_file(path, &scalar), WEFT_STATUS_NOT_FOUND,
               path, "cannot create: No such file or directory", NULL);
  expect_error(weft_npy_write_file(temp_dir, &scalar),
               WEFT_STATUS_INVALID_ARGUMENT, temp_dir, "cannot create: Is a "
               "directory", NULL);
  // A full device: the error comes at the write or at the close.
  if (access("/dev/full", W_OK) == 0) {
    expect_error(weft_npy_write_file("/dev/full", &scalar),
                 WEFT_STATUS_RESOURCE_EXHAUSTED,
                 "'/dev/full': write: No space left on device", NULL);
  }
  weft_npy_array_deinitialize(&scalar);
  // A bad file's error names it.
  temp_path("garbage.npy", path, sizeof(path));
  write_bytes(path, "this is not a .npy file", 23);
  expect_error(weft_npy_read_file(path, allocator, &array),
               WEFT_STATUS_INVALID_ARGUMENT, "'", path,
               "': not a .npy file: it starts with 'this i'", NULL);
}

// A file that is not regular (a pipe) is read whole, then parsed.
static void test_read_pipe(void** state) {
  (void)state;
  weft_allocator_t allocator = weft_allocator_system();
  uint64_t shape[2] = {4, 5};
  weft_npy_array_t array = make_array(WEFT_NPY_DTYPE_I16, 2, shape, 3);
  size_t length = 0;
  uint8_t* image = write_image(&array, &length);
  for (int truncate = 0; truncate < 2; ++truncate) {
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    size_t written = truncate ? length - 1 : length;
    // Smaller than a pipe's buffer: the write does not block.
    assert_int_equal(write(fds[1], image, written), (ssize_t)written);
    close(fds[1]);
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fds[0]);
    weft_npy_array_t read;
    weft_status_t status = weft_npy_read_file(path, allocator, &read);
    close(fds[0]);
    if (truncate) {
      expect_error(status, WEFT_STATUS_DATA_LOSS, path,
                   "data is 39 bytes but shape (4, 5) of i16 needs 40", NULL);
    } else {
      expect_ok(status);
      expect_same_array(&read, &array);
      weft_npy_array_deinitialize(&read);
    }
  }
  free(image);
  weft_npy_array_deinitialize(&array);
}

// Every allocation of every call fails in turn: each run fails cleanly
// (RESOURCE_EXHAUSTED, outputs zeroed, nothing leaked) or succeeds.
static void test_allocation_failures(void** state) {
  (void)state;
  weft_allocator_t system = weft_allocator_system();
  uint64_t shape[2] = {3, 7};
  weft_npy_array_t source = make_array(WEFT_NPY_DTYPE_F64, 2, shape, 9);
  char path[1024];
  temp_path("alloc.npy", path, sizeof(path));
  expect_ok(weft_npy_write_file(path, &source));
  size_t image_length = 0;
  uint8_t* image = write_image(&source, &image_length);
  for (int call = 0; call < 4; ++call) {
    bool succeeded = false;
    for (int64_t fail_at = 0; !succeeded; ++fail_at) {
      assert_true(fail_at < 10);
      weft_failing_allocator_t storage;
      weft_allocator_t failing =
          weft_failing_allocator_initialize(system, fail_at, &storage);
      weft_npy_array_t array;
      memset(&array, 0xab, sizeof(array));
      void* bytes = (void*)1;
      size_t length = 1;
      weft_status_t status;
      switch (call) {
        case 0:
          status = weft_npy_read_file(path, failing, &array);
          break;
        case 1:
          status = weft_npy_read_memory(image, image_length, "image", failing,
                                        &array);
          break;
        case 2:
          status = weft_npy_write_memory(&source, failing, &bytes, &length);
          break;
        default:
          status = weft_npy_array_initialize(WEFT_NPY_DTYPE_F64, 2, shape,
                                             failing, &array);
          break;
      }
      succeeded = weft_status_is_ok(status);
      if (succeeded) {
        if (call == 2) {
          assert_int_equal(length, image_length);
          assert_memory_equal(bytes, image, length);
          weft_allocator_free(failing, bytes);
        } else {
          if (call != 3) expect_same_array(&array, &source);
          weft_npy_array_deinitialize(&array);
        }
      } else {
        expect_error(status, WEFT_STATUS_RESOURCE_EXHAUSTED, NULL);
        if (call == 2) {
          assert_null(bytes);
          assert_int_equal(length, 0);
        } else {
          assert_true(is_zeroed(&array));
        }
      }
    }
  }
  free(image);
  weft_npy_array_deinitialize(&source);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dtype_helpers),
      cmocka_unit_test(test_array_initialize),
      cmocka_unit_test(test_round_trip_memory),
      cmocka_unit_test(test_round_trip_file),
      cmocka_unit_test(test_write_borrowed_data),
      cmocka_unit_test(test_header_versions),
      cmocka_unit_test(test_every_truncated_prefix),
      cmocka_unit_test(test_truncation_messages),
      cmocka_unit_test(test_random_header_flips),
      cmocka_unit_test(test_preamble_errors),
      cmocka_unit_test(test_data_length_errors),
      cmocka_unit_test(test_dtype_errors),
      cmocka_unit_test(test_order_and_shape_errors),
      cmocka_unit_test(test_dict_errors),
      cmocka_unit_test(test_argument_errors),
      cmocka_unit_test(test_file_errors),
      cmocka_unit_test(test_read_pipe),
      cmocka_unit_test(test_allocation_failures),
  };
  return cmocka_run_group_tests(tests, make_temp_dir, remove_temp_dir);
}
