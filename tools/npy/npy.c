// weft: reading and writing NumPy .npy files (see npy.h).
//
// Reading goes through three checks, each given only the bytes it may look
// at: the preamble (magic, version, header length: where the data starts),
// the header dict (dtype, order, shape: how many bytes the data is) and the
// data's length. A memory image runs them over its bytes; a regular file
// reads its preamble and header, runs the same checks against the file's
// size, and reads the data straight into the array.
#include "npy.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/arguments.h"
#include "base/os_error.h"

// Elements are read and written as they lie in memory: '<' data is native
// only on a little-endian host.
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "weft_npy stores elements without swapping: little-endian hosts only"
#endif

//===----------------------------------------------------------------------===//
// dtypes
//===----------------------------------------------------------------------===//

typedef struct weft_npy_dtype_info_t {
  const char* name;
  const char* descr;
  char kind;  // NumPy's kind letter: 'f', 'i', 'u' or 'b'
  uint8_t size;
} weft_npy_dtype_info_t;

static const weft_npy_dtype_info_t kWeftNpyDtypes[WEFT_NPY_DTYPE_COUNT_] = {
    [WEFT_NPY_DTYPE_F16] = {"f16", "<f2", 'f', 2},
    [WEFT_NPY_DTYPE_F32] = {"f32", "<f4", 'f', 4},
    [WEFT_NPY_DTYPE_F64] = {"f64", "<f8", 'f', 8},
    [WEFT_NPY_DTYPE_I8] = {"i8", "|i1", 'i', 1},
    [WEFT_NPY_DTYPE_I16] = {"i16", "<i2", 'i', 2},
    [WEFT_NPY_DTYPE_I32] = {"i32", "<i4", 'i', 4},
    [WEFT_NPY_DTYPE_I64] = {"i64", "<i8", 'i', 8},
    [WEFT_NPY_DTYPE_U8] = {"u8", "|u1", 'u', 1},
    [WEFT_NPY_DTYPE_U16] = {"u16", "<u2", 'u', 2},
    [WEFT_NPY_DTYPE_U32] = {"u32", "<u4", 'u', 4},
    [WEFT_NPY_DTYPE_U64] = {"u64", "<u8", 'u', 8},
    [WEFT_NPY_DTYPE_BOOL] = {"bool", "|b1", 'b', 1},
};

static bool weft_npy_dtype_is_valid(weft_npy_dtype_t dtype) {
  return (unsigned)dtype < WEFT_NPY_DTYPE_COUNT_;
}

const char* weft_npy_dtype_name(weft_npy_dtype_t dtype) {
  return weft_npy_dtype_is_valid(dtype) ? kWeftNpyDtypes[dtype].name : "";
}

size_t weft_npy_dtype_size(weft_npy_dtype_t dtype) {
  return weft_npy_dtype_is_valid(dtype) ? kWeftNpyDtypes[dtype].size : 0;
}

const char* weft_npy_dtype_descr(weft_npy_dtype_t dtype) {
  return weft_npy_dtype_is_valid(dtype) ? kWeftNpyDtypes[dtype].descr : "";
}

// "f16 (<f2), f32 (<f4), ..., bool (|b1)": the list error messages give.
static const char* weft_npy_supported_dtypes(char* buffer, size_t capacity) {
  size_t used = 0;
  buffer[0] = '\0';
  for (int i = 0; i < WEFT_NPY_DTYPE_COUNT_ && used < capacity; ++i) {
    int written = snprintf(buffer + used, capacity - used, "%s%s (%s)",
                           i ? ", " : "", kWeftNpyDtypes[i].name,
                           kWeftNpyDtypes[i].descr);
    if (written < 0) break;
    used += (size_t)written;
  }
  return buffer;
}

weft_status_t weft_npy_dtype_from_name(const char* name,
                                       weft_npy_dtype_t* out_dtype) {
  weft_status_t status = weft_arguments_require(
      __func__, "name,out_dtype", (const void* const[]){name, out_dtype}, 2);
  if (!weft_status_is_ok(status)) return status;
  *out_dtype = WEFT_NPY_DTYPE_COUNT_;
  for (int i = 0; i < WEFT_NPY_DTYPE_COUNT_; ++i) {
    if (strcmp(name, kWeftNpyDtypes[i].name) == 0) {
      *out_dtype = (weft_npy_dtype_t)i;
      return WEFT_OK;
    }
  }
  char supported[256];
  return WEFT_STATUS(INVALID_ARGUMENT, "unknown dtype '%s'; the dtypes: %s",
                     name, weft_npy_supported_dtypes(supported,
                                                     sizeof(supported)));
}

//===----------------------------------------------------------------------===//
// Messages
//===----------------------------------------------------------------------===//

// What a message is about: a file or memory image ("'x.npy': ...") or an
// API function ("weft_npy_write_file: ...").
typedef struct weft_npy_subject_t {
  const char* name;
  bool quoted;
} weft_npy_subject_t;

// A status with |code| whose message is the subject, ": " and |format|.
static weft_status_t weft_npy_error_(const char* file, int line,
                                     weft_status_code_t code,
                                     weft_npy_subject_t subject,
                                     const char* format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
static weft_status_t weft_npy_error_(const char* file, int line,
                                     weft_status_code_t code,
                                     weft_npy_subject_t subject,
                                     const char* format, ...) {
  char detail[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(detail, sizeof(detail), format, args);
  va_end(args);
  const char* quote = subject.quoted ? "'" : "";
  return weft_status_make_(file, line, code, "%s%s%s: %s", quote,
                           subject.name, quote, detail);
}
#define WEFT_NPY_ERROR(code, subject, ...) \
  weft_npy_error_(__FILE__, __LINE__, WEFT_STATUS_##code, subject, __VA_ARGS__)

// The OS error |error| met by |call| on |path|: "'x.npy': cannot open: No
// such file or directory".
static weft_status_t weft_npy_errno_error(int error, const char* path,
                                          const char* call) {
  char reason_buffer[256];
  // GNU strerror_r (we build with _GNU_SOURCE): returns the message.
  const char* reason = strerror_r(error, reason_buffer, sizeof(reason_buffer));
  return weft_status_make_(__FILE__, __LINE__,
                           weft_status_code_from_errno(error), "'%s': %s: %s",
                           path, call, reason);
}

// Writes |length| bytes as printable text into |buffer| (other bytes as
// \xNN), at most |limit| of them and "..." when there are more.
static const char* weft_npy_escape(const uint8_t* bytes, size_t length,
                                   size_t limit, char* buffer,
                                   size_t capacity) {
  size_t used = 0;
  buffer[0] = '\0';
  for (size_t i = 0; i < length && used + 8 < capacity; ++i) {
    if (i == limit) {
      memcpy(buffer + used, "...", 4);
      used += 3;
      break;
    }
    uint8_t byte = bytes[i];
    if (byte >= 0x20 && byte < 0x7f && byte != '\\') {
      buffer[used++] = (char)byte;
      buffer[used] = '\0';
    } else {
      used += (size_t)snprintf(buffer + used, capacity - used, "\\x%02x",
                               byte);
    }
  }
  return buffer;
}

static const char* weft_npy_format_dims(uint32_t rank, const uint64_t* shape,
                                        char* buffer, size_t capacity) {
  if (capacity == 0) return buffer;
  size_t used = (size_t)snprintf(buffer, capacity, "(");
  for (uint32_t i = 0; i < rank && used < capacity; ++i) {
    used += (size_t)snprintf(buffer + used, capacity - used, "%s%" PRIu64,
                             i ? ", " : "", shape[i]);
  }
  if (used < capacity) {
    snprintf(buffer + used, capacity - used, "%s)", rank == 1 ? "," : "");
  }
  return buffer;
}

const char* weft_npy_array_format_shape(const weft_npy_array_t* array,
                                        char* buffer, size_t capacity) {
  if (!buffer || capacity == 0) return buffer;
  if (!array || array->rank > WEFT_NPY_MAX_RANK) {
    buffer[0] = '\0';
    return buffer;
  }
  return weft_npy_format_dims(array->rank, array->shape, buffer, capacity);
}

//===----------------------------------------------------------------------===//
// Arrays
//===----------------------------------------------------------------------===//

// Checks |rank| and |shape| and computes the element count and byte length
// of an array of |dtype| (a valid one) with that shape.
static weft_status_t weft_npy_compute_size(weft_npy_subject_t subject,
                                           weft_npy_dtype_t dtype,
                                           uint32_t rank,
                                           const uint64_t* shape,
                                           uint64_t* out_element_count,
                                           size_t* out_byte_length) {
  *out_element_count = 0;
  *out_byte_length = 0;
  if (rank > WEFT_NPY_MAX_RANK) {
    return WEFT_NPY_ERROR(OUT_OF_RANGE, subject,
                          "shape has %" PRIu32
                          " dimensions; weft supports at most %d",
                          rank, WEFT_NPY_MAX_RANK);
  }
  char dims[WEFT_NPY_SHAPE_STRING_CAPACITY];
  uint64_t count = 1;
  bool count_overflows = false;
  for (uint32_t i = 0; i < rank; ++i) {
    if (shape[i] > (uint64_t)INT64_MAX) {
      return WEFT_NPY_ERROR(OUT_OF_RANGE, subject,
                            "shape dimension %" PRIu32 " is %" PRIu64
                            ", more than INT64_MAX",
                            i, shape[i]);
    }
    if (shape[i] != 0 && count > UINT64_MAX / shape[i]) {
      count_overflows = true;
    }
    count *= shape[i];
  }
  for (uint32_t i = 0; i < rank; ++i) {
    if (shape[i] == 0) count_overflows = false;
  }
  if (count_overflows) {
    return WEFT_NPY_ERROR(OUT_OF_RANGE, subject,
                          "shape %s has more than 2^64 elements",
                          weft_npy_format_dims(rank, shape, dims,
                                               sizeof(dims)));
  }
  uint64_t element_size = kWeftNpyDtypes[dtype].size;
  if (count > (uint64_t)SIZE_MAX / element_size) {
    return WEFT_NPY_ERROR(OUT_OF_RANGE, subject,
                          "shape %s of %s needs more than %zu bytes "
                          "(SIZE_MAX)",
                          weft_npy_format_dims(rank, shape, dims,
                                               sizeof(dims)),
                          kWeftNpyDtypes[dtype].name, (size_t)SIZE_MAX);
  }
  *out_element_count = count;
  *out_byte_length = (size_t)(count * element_size);
  return WEFT_OK;
}

// Fills |out_array|'s description (not its data) after checking it.
static weft_status_t weft_npy_describe(weft_npy_subject_t subject,
                                       weft_npy_dtype_t dtype, uint32_t rank,
                                       const uint64_t* shape,
                                       weft_npy_array_t* out_array) {
  memset(out_array, 0, sizeof(*out_array));
  if (!weft_npy_dtype_is_valid(dtype)) {
    return WEFT_NPY_ERROR(INVALID_ARGUMENT, subject,
                          "dtype %d is not a weft_npy_dtype_t", (int)dtype);
  }
  weft_status_t status =
      weft_npy_compute_size(subject, dtype, rank, shape,
                            &out_array->element_count, &out_array->byte_length);
  if (weft_status_is_ok(status)) {
    out_array->dtype = dtype;
    out_array->rank = rank;
    if (rank) memcpy(out_array->shape, shape, rank * sizeof(shape[0]));
  }
  return status;
}

weft_status_t weft_npy_array_initialize(weft_npy_dtype_t dtype, uint32_t rank,
                                        const uint64_t* shape,
                                        weft_allocator_t allocator,
                                        weft_npy_array_t* out_array) {
  weft_status_t status = weft_arguments_require(
      __func__, "out_array", (const void* const[]){out_array}, 1);
  if (!weft_status_is_ok(status)) return status;
  memset(out_array, 0, sizeof(*out_array));
  if (rank > 0) {
    status = weft_arguments_require(__func__, "shape",
                                    (const void* const[]){shape}, 1);
  }
  weft_npy_subject_t subject = {__func__, false};
  if (weft_status_is_ok(status)) {
    status = weft_npy_describe(subject, dtype, rank, shape, out_array);
  }
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc(allocator, out_array->byte_length,
                                   &out_array->data);
  }
  if (weft_status_is_ok(status)) {
    out_array->allocator = allocator;
  } else {
    memset(out_array, 0, sizeof(*out_array));
  }
  return status;
}

void weft_npy_array_deinitialize(weft_npy_array_t* array) {
  if (!array) return;
  if (array->data && array->allocator.ctl) {
    weft_allocator_free(array->allocator, array->data);
  }
  memset(array, 0, sizeof(*array));
}

//===----------------------------------------------------------------------===//
// Reading: the preamble
//===----------------------------------------------------------------------===//

static const uint8_t kWeftNpyMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
#define WEFT_NPY_MAGIC_TEXT "\\x93NUMPY"
// Magic, version and the widest header length field.
#define WEFT_NPY_MAX_PREAMBLE 12
// Where NumPy puts the data: headers are padded to this.
#define WEFT_NPY_DATA_ALIGNMENT 64

// What a file's preamble and header say.
typedef struct weft_npy_header_t {
  uint8_t major_version;
  uint8_t minor_version;
  // Where the dict starts and ends (the data starts there).
  size_t dict_offset;
  size_t data_offset;
  // The array the dict describes (no data).
  weft_npy_array_t array;
} weft_npy_header_t;

// Reads the magic, version and header length from |bytes| (|available| of
// them, at least min(|total|, WEFT_NPY_MAX_PREAMBLE)), the start of an image
// of |total| bytes, and sets the header's offsets.
static weft_status_t weft_npy_parse_preamble(weft_npy_subject_t subject,
                                             const uint8_t* bytes,
                                             size_t available, uint64_t total,
                                             weft_npy_header_t* header) {
  char text[64];
  size_t magic_seen = available < sizeof(kWeftNpyMagic) ? available
                                                        : sizeof(kWeftNpyMagic);
  if (memcmp(bytes, kWeftNpyMagic, magic_seen) != 0) {
    return WEFT_NPY_ERROR(INVALID_ARGUMENT, subject,
                          "not a .npy file: it starts with '%s', not the "
                          "magic string '" WEFT_NPY_MAGIC_TEXT "'",
                          weft_npy_escape(bytes, magic_seen, 6, text,
                                          sizeof(text)));
  }
  if (total == 0) {
    return WEFT_NPY_ERROR(DATA_LOSS, subject,
                          "the file is empty; a .npy file starts with the "
                          "magic string '" WEFT_NPY_MAGIC_TEXT "'");
  }
  if (total < sizeof(kWeftNpyMagic)) {
    return WEFT_NPY_ERROR(DATA_LOSS, subject,
                          "the file is truncated: it ends after %" PRIu64
                          " bytes, inside the magic string",
                          total);
  }
  if (total < 8) {
    return WEFT_NPY_ERROR(DATA_LOSS, subject,
                          "the file is truncated: it ends after %" PRIu64
                          " bytes, inside the version (bytes 6-7)",
                          total);
  }
  header->major_version = bytes[6];
  header->minor_version = bytes[7];
  if (bytes[7] != 0 || bytes[6] < 1 || bytes[6] > 3) {
    return WEFT_NPY_ERROR(INVALID_ARGUMENT, subject,
                          "unsupported .npy version %u.%u; weft reads 1.0, "
                          "2.0 and 3.0",
                          bytes[6], bytes[7]);
  }
  size_t length_size = bytes[6] == 1 ? 2 : 4;
  if (total < 8 + length_size) {
    return WEFT_NPY_ERROR(DATA_LOSS, subject,
                          "the file is truncated: it ends after %" PRIu64
                          " bytes, inside the header length (bytes 8-%zu)",
                          total, 7 + length_size);
  }
  uint64_t dict_length = 0;
  for (size_t i = 0; i < length_size; ++i) {
    dict_length |= (uint64_t)bytes[8 + i] << (8 * i);
  }
  uint64_t dict_offset = 8 + length_size;
  if (dict_length > total - dict_offset) {
    return WEFT_NPY_ERROR(DATA_LOSS, subject,
                          "the header is truncated: its length field says %" PRIu64
                          " bytes but the file ends %" PRIu64
                          " bytes into it (at byte %" PRIu64 ")",
                          dict_length, total - dict_offset, total);
  }
  header->dict_offset = (size_t)dict_offset;
  header->data_offset = (size_t)(dict_offset + dict_length);
  return WEFT_OK;
}

//===----------------------------------------------------------------------===//
// Reading: the header dict
//===----------------------------------------------------------------------===//

// A position in the header dict, the Python literal
// {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }.
typedef struct weft_npy_cursor_t {
  weft_npy_subject_t subject;
  const uint8_t* bytes;
  size_t length;
  size_t position;
} weft_npy_cursor_t;

static bool weft_npy_is_space(uint8_t byte) {
  return byte == ' ' || byte == '\t' || byte == '\n' || byte == '\r' ||
         byte == '\f';
}

static bool weft_npy_is_digit(uint8_t byte) {
  return byte >= '0' && byte <= '9';
}

static bool weft_npy_is_identifier(uint8_t byte) {
  return byte == '_' || weft_npy_is_digit(byte) ||
         (byte >= 'a' && byte <= 'z') || (byte >= 'A' && byte <= 'Z');
}

static void weft_npy_skip_space(weft_npy_cursor_t* cursor) {
  while (cursor->position < cursor->length &&
         weft_npy_is_space(cursor->bytes[cursor->position])) {
    ++cursor->position;
  }
}

// The next byte, or -1 at the end of the dict.
static int weft_npy_peek(const weft_npy_cursor_t* cursor) {
  return cursor->position < cursor->length ? cursor->bytes[cursor->position]
                                           : -1;
}

// INVALID_ARGUMENT: "header: expected |what| at byte N of the header, found
// 'xyz'" (or "found the end of the header").
static weft_status_t weft_npy_syntax_error(const weft_npy_cursor_t* cursor,
                                           const char* what) {
  char found[96] = "the end of the header";
  if (cursor->position < cursor->length) {
    char text[80];
    snprintf(found, sizeof(found), "'%s'",
             weft_npy_escape(cursor->bytes + cursor->position,
                             cursor->length - cursor->position, 12, text,
                             sizeof(text)));
  }
  return WEFT_NPY_ERROR(INVALID_ARGUMENT, cursor->subject,
                        "header: expected %s at byte %zu of the header dict, "
                        "found %s",
                        what, cursor->position, found);
}

static weft_status_t weft_npy_expect(weft_npy_cursor_t* cursor, char byte,
                                     const char* what) {
  weft_npy_skip_space(cursor);
  if (weft_npy_peek(cursor) != (uint8_t)byte) {
    return weft_npy_syntax_error(cursor, what);
  }
  ++cursor->position;
  return WEFT_OK;
}

// A quoted string without escapes: *out_text points into the dict.
static weft_status_t weft_npy_parse_string(weft_npy_cursor_t* cursor,
                                           const char* what,
                                           const uint8_t** out_text,
                                           size_t* out_length) {
  weft_npy_skip_space(cursor);
  int quote = weft_npy_peek(cursor);
  if (quote != '\'' && quote != '"') {
    return weft_npy_syntax_error(cursor, what);
  }
  size_t start = cursor->position + 1;
  size_t end = start;
  while (end < cursor->length && cursor->bytes[end] != quote &&
         cursor->bytes[end] != '\\' && cursor->bytes[end] != '\n') {
    ++end;
  }
  if (end == cursor->length || cursor->bytes[end] != quote) {
    return WEFT_NPY_ERROR(INVALID_ARGUMENT, cursor->subject,
                          "header: the string at byte %zu of the header dict "
                          "%s",
                          cursor->position,
                          end < cursor->length && cursor->bytes[end] == '\\'
                              ? "has an escape sequence (not supported)"
                              : "does not end");
  }
  *out_text = cursor->bytes + start;
  *out_length = end - start;
  cursor->position = end + 1;
  return WEFT_OK;
}

static bool weft_npy_text_equals(const uint8_t* text, size_t length,
                                 const char* literal) {
  return strlen(literal) == length && memcmp(text, literal, length) == 0;
}

// Python's True or False.
static weft_status_t weft_npy_parse_bool(weft_npy_cursor_t* cursor,
                                         const char* key, bool* out_value) {
  weft_npy_skip_space(cursor);
  size_t start = cursor->position;
  size_t end = start;
  while (end < cursor->length && weft_npy_is_identifier(cursor->bytes[end])) {
    ++end;
  }
  const uint8_t* word = cursor->bytes + start;
  if (weft_npy_text_equals(word, end - start, "True") ||
      weft_npy_text_equals(word, end - start, "False")) {
    *out_value = word[0] == 'T';
    cursor->position = end;
    return WEFT_OK;
  }
  char what[64];
  snprintf(what, sizeof(what), "True or False for '%s'", key);
  return weft_npy_syntax_error(cursor, what);
}

// The dtype named by the descr string |text|: "<f4", "|b1", "=i8".
static weft_status_t weft_npy_parse_descr(weft_npy_subject_t subject,
                                          const uint8_t* text, size_t length,
                                          weft_npy_dtype_t* out_dtype) {
  char shown[96];
  weft_npy_escape(text, length, 24, shown, sizeof(shown));
  char supported[256];
  weft_npy_supported_dtypes(supported, sizeof(supported));
  size_t position = 0;
  char order = '=';
  if (length > 0 && memchr("<>|=", text[0], 4)) order = (char)text[position++];
  char kind = position < length ? (char)text[position++] : '\0';
  uint64_t size = 0;
  bool size_is_number = position < length && length - position <= 4;
  for (size_t i = position; i < length && size_is_number; ++i) {
    size_is_number = weft_npy_is_digit(text[i]);
    size = size * 10 + (uint64_t)(text[i] - '0');
  }
  const char* unsupported_kind = NULL;
  switch (kind) {
    case 'c':
      unsupported_kind = "complex";
      break;
    case 'M':
      unsupported_kind = "datetime";
      break;
    case 'm':
      unsupported_kind = "timedelta";
      break;
    case 'O':
      unsupported_kind = "Python objects";
      break;
    case 'S':
    case 'a':
      unsupported_kind = "byte strings";
      break;
    case 'U':
      unsupported_kind = "unicode strings";
      break;
    case 'V':
      unsupported_kind = "raw bytes or records";
      break;
    default:
      break;
  }
  if (unsupported_kind) {
    return WEFT_NPY_ERROR(INVALID_ARGUMENT, subject,
                          "header: dtype '%s' (%s) is not supported; "
                          "supported: %s",
                          shown, unsupported_kind, supported);
  }
  int found = -1;
  for (int i = 0; i < WEFT_NPY_DTYPE_COUNT_ && size_is_number; ++i) {
    if (kWeftNpyDtypes[i].kind == kind && kWeftNpyDtypes[i].size == size) {
      found = i;
    }
  }
  if (found < 0) {
    return WEFT_NPY_ERROR(INVALID_ARGUMENT, subject,
                          "header: dtype '%s' is not supported; supported: "
                          "%s",
                          shown, supported);
  }
  if (order == '>' && size > 1) {
    return WEFT_NPY_ERROR(INVALID_ARGUMENT, subject,
                          "header: dtype '%s' is big-endian, which is not "
                          "supported; weft reads little-endian ('<'), '|' and "
                          "native ('=') data (in NumPy: "
                          "a.astype(a.dtype.newbyteorder('<')))",
                          shown);
  }
  *out_dtype = (weft_npy_dtype_t)found;
  return WEFT_OK;
}

// One dimension of the shape: a decimal integer no larger than INT64_MAX.
static weft_status_t weft_npy_parse_dimension(weft_npy_cursor_t* cursor,
                                              uint32_t index,
                                              uint64_t* out_value) {
  size_t start = cursor->position;
  size_t end = start;
  uint64_t value = 0;
  bool too_large = false;
  while (end < cursor->length && weft_npy_is_digit(cursor->bytes[end])) {
    uint64_t digit = (uint64_t)(cursor->bytes[end] - '0');
    if (value > ((uint64_t)INT64_MAX - digit) / 10) too_large = true;
    value = value * 10 + digit;
    ++end;
  }
  if (end == start) {
    return weft_npy_syntax_error(
        cursor, weft_npy_peek(cursor) == '-'
                    ? "a dimension (a shape has no negative ones)"
                    : "a dimension (a non-negative integer) in 'shape'");
  }
  if (too_large) {
    char text[64];
    return WEFT_NPY_ERROR(OUT_OF_RANGE, cursor->subject,
                          "header: shape dimension %" PRIu32
                          " is %s, more than INT64_MAX",
                          index,
                          weft_npy_escape(cursor->bytes + start, end - start,
                                          40, text, sizeof(text)));
  }
  *out_value = value;
  cursor->position = end;
  return WEFT_OK;
}

// A tuple of dimensions: "()", "(3,)", "(3, 4)", "(3, 4,)". Sets the rank
// to the number found even past WEFT_NPY_MAX_RANK (only the first ones are
// kept) so that the caller can say how many there were.
static weft_status_t weft_npy_parse_shape(weft_npy_cursor_t* cursor,
                                          uint32_t* out_rank,
                                          uint64_t* shape) {
  weft_status_t status =
      weft_npy_expect(cursor, '(', "'(' starting the tuple of 'shape'");
  uint32_t rank = 0;
  bool trailing_comma = false;
  while (weft_status_is_ok(status)) {
    weft_npy_skip_space(cursor);
    if (weft_npy_peek(cursor) == ')') break;
    uint64_t value = 0;
    status = weft_npy_parse_dimension(cursor, rank, &value);
    if (!weft_status_is_ok(status)) break;
    if (rank < WEFT_NPY_MAX_RANK) shape[rank] = value;
    if (rank < UINT32_MAX) ++rank;
    weft_npy_skip_space(cursor);
    trailing_comma = weft_npy_peek(cursor) == ',';
    if (trailing_comma) {
      ++cursor->position;
    } else if (weft_npy_peek(cursor) != ')') {
      status = weft_npy_syntax_error(cursor, "',' or ')' in 'shape'");
    }
  }
  if (weft_status_is_ok(status)) {
    ++cursor->position;  // the ')'
    if (rank == 1 && !trailing_comma) {
      status = WEFT_NPY_ERROR(INVALID_ARGUMENT, cursor->subject,
                              "header: 'shape' is (%" PRIu64
                              "), a number and not a tuple (a 1-dimensional "
                              "shape is written (%" PRIu64 ",))",
                              shape[0], shape[0]);
    }
  }
  *out_rank = rank;
  return status;
}

// What the dict holds so far.
typedef struct weft_npy_dict_t {
  bool has_descr;
  bool has_fortran_order;
  bool has_shape;
  bool fortran_order;
  weft_npy_dtype_t dtype;
  uint32_t rank;
  uint64_t shape[WEFT_NPY_MAX_RANK];
} weft_npy_dict_t;

// One "key: value" entry of the dict.
static weft_status_t weft_npy_parse_entry(weft_npy_cursor_t* cursor,
                                          weft_npy_dict_t* dict) {
  const uint8_t* key = NULL;
  size_t key_length = 0;
  weft_status_t status = weft_npy_parse_string(
      cursor, "a key ('descr', 'fortran_order' or 'shape') or '}'", &key,
      &key_length);
  if (!weft_status_is_ok(status)) return status;
  bool* seen = NULL;
  if (weft_npy_text_equals(key, key_length, "descr")) {
    seen = &dict->has_descr;
  } else if (weft_npy_text_equals(key, key_length, "fortran_order")) {
    seen = &dict->has_fortran_order;
  } else if (weft_npy_text_equals(key, key_length, "shape")) {
    seen = &dict->has_shape;
  } else {
    char text[96];
    return WEFT_NPY_ERROR(INVALID_ARGUMENT, cursor->subject,
                          "header: unknown key '%s'; a .npy header has "
                          "'descr', 'fortran_order' and 'shape'",
                          weft_npy_escape(key, key_length, 40, text,
                                          sizeof(text)));
  }
  if (*seen) {
    return WEFT_NPY_ERROR(INVALID_ARGUMENT, cursor->subject,
                          "header: key '%.*s' appears twice", (int)key_length,
                          (const char*)key);
  }
  *seen = true;
  status = weft_npy_expect(cursor, ':', "':' after the key");
  if (!weft_status_is_ok(status)) return status;
  if (seen == &dict->has_descr) {
    weft_npy_skip_space(cursor);
    if (weft_npy_peek(cursor) == '[') {
      return WEFT_NPY_ERROR(INVALID_ARGUMENT, cursor->subject,
                            "header: 'descr' is a list: structured dtypes are "
                            "not supported");
    }
    const uint8_t* descr = NULL;
    size_t descr_length = 0;
    status = weft_npy_parse_string(cursor, "a string for 'descr'", &descr,
                                   &descr_length);
    if (weft_status_is_ok(status)) {
      status = weft_npy_parse_descr(cursor->subject, descr, descr_length,
                                    &dict->dtype);
    }
  } else if (seen == &dict->has_fortran_order) {
    status = weft_npy_parse_bool(cursor, "fortran_order", &dict->fortran_order);
  } else {
    status = weft_npy_parse_shape(cursor, &dict->rank, dict->shape);
  }
  return status;
}

// Parses the dict (|length| bytes at |bytes|) into |header|'s array.
static weft_status_t weft_npy_parse_dict(weft_npy_subject_t subject,
                                         const uint8_t* bytes, size_t length,
                                         weft_npy_header_t* header) {
  weft_npy_cursor_t cursor = {subject, bytes, length, 0};
  weft_npy_dict_t dict = {0};
  weft_status_t status = weft_npy_expect(&cursor, '{', "'{' starting the dict");
  while (weft_status_is_ok(status)) {
    weft_npy_skip_space(&cursor);
    if (weft_npy_peek(&cursor) == '}') break;
    status = weft_npy_parse_entry(&cursor, &dict);
    if (!weft_status_is_ok(status)) break;
    weft_npy_skip_space(&cursor);
    if (weft_npy_peek(&cursor) == ',') {
      ++cursor.position;
    } else if (weft_npy_peek(&cursor) != '}') {
      status = weft_npy_syntax_error(&cursor, "',' or '}' after a value");
    }
  }
  if (weft_status_is_ok(status)) {
    ++cursor.position;  // the '}'
    weft_npy_skip_space(&cursor);
    if (cursor.position < cursor.length) {
      status = weft_npy_syntax_error(&cursor,
                                     "only spaces and '\\n' after the dict");
    }
  }
  if (weft_status_is_ok(status)) {
    const char* missing = !dict.has_descr           ? "descr"
                          : !dict.has_fortran_order ? "fortran_order"
                          : !dict.has_shape         ? "shape"
                                                    : NULL;
    if (missing) {
      status = WEFT_NPY_ERROR(INVALID_ARGUMENT, subject,
                              "header: the key '%s' is missing", missing);
    }
  }
  if (weft_status_is_ok(status)) {
    status = weft_npy_describe(subject, dict.dtype, dict.rank, dict.shape,
                               &header->array);
  }
  if (weft_status_is_ok(status) && dict.fortran_order) {
    // Fortran and C order lay out the same bytes when at most one dimension
    // is larger than 1.
    uint32_t long_dimensions = 0;
    for (uint32_t i = 0; i < dict.rank; ++i) long_dimensions += dict.shape[i] > 1;
    if (long_dimensions > 1) {
      char dims[WEFT_NPY_SHAPE_STRING_CAPACITY];
      status = WEFT_NPY_ERROR(
          INVALID_ARGUMENT, subject,
          "header: 'fortran_order' is True (shape %s): Fortran order is not "
          "supported (in NumPy: np.save(path, np.ascontiguousarray(a)))",
          weft_npy_array_format_shape(&header->array, dims, sizeof(dims)));
    }
  }
  return status;
}

// Checks that the |data_length| bytes after the header are the data.
static weft_status_t weft_npy_check_data_length(weft_npy_subject_t subject,
                                                const weft_npy_array_t* array,
                                                uint64_t data_length) {
  if (data_length == array->byte_length) return WEFT_OK;
  char dims[WEFT_NPY_SHAPE_STRING_CAPACITY];
  weft_npy_array_format_shape(array, dims, sizeof(dims));
  if (data_length < array->byte_length) {
    return WEFT_NPY_ERROR(DATA_LOSS, subject,
                          "data is %" PRIu64 " bytes but shape %s of %s "
                          "needs %zu (the file is truncated)",
                          data_length, dims, weft_npy_dtype_name(array->dtype),
                          array->byte_length);
  }
  return WEFT_NPY_ERROR(INVALID_ARGUMENT, subject,
                        "data is %" PRIu64 " bytes but shape %s of %s needs "
                        "%zu (%" PRIu64
                        " bytes too many; weft reads one array per file)",
                        data_length, dims, weft_npy_dtype_name(array->dtype),
                        array->byte_length,
                        data_length - array->byte_length);
}

// Parses the preamble and the dict of the image |bytes| (|available| of
// them: all of the header when the preamble is valid) that is |total| bytes
// long, and checks the data's length.
static weft_status_t weft_npy_parse_header(weft_npy_subject_t subject,
                                           const uint8_t* bytes,
                                           size_t available, uint64_t total,
                                           weft_npy_header_t* out_header) {
  memset(out_header, 0, sizeof(*out_header));
  weft_status_t status =
      weft_npy_parse_preamble(subject, bytes, available, total, out_header);
  if (weft_status_is_ok(status) && available < out_header->data_offset) {
    return WEFT_STATUS(INTERNAL, "'%s': %zu header bytes given of %zu",
                       subject.name, available, out_header->data_offset);
  }
  if (weft_status_is_ok(status)) {
    status = weft_npy_parse_dict(
        subject, bytes + out_header->dict_offset,
        out_header->data_offset - out_header->dict_offset, out_header);
  }
  if (weft_status_is_ok(status)) {
    status = weft_npy_check_data_length(subject, &out_header->array,
                                        total - out_header->data_offset);
  }
  return status;
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

weft_status_t weft_npy_read_memory(const void* bytes, size_t byte_length,
                                   const char* name,
                                   weft_allocator_t allocator,
                                   weft_npy_array_t* out_array) {
  weft_status_t status = weft_arguments_require(
      __func__, "name,out_array", (const void* const[]){name, out_array}, 2);
  if (!weft_status_is_ok(status)) return status;
  memset(out_array, 0, sizeof(*out_array));
  if (byte_length > 0) {
    status = weft_arguments_require(__func__, "bytes",
                                    (const void* const[]){bytes}, 1);
  }
  static const uint8_t kNothing[1] = {0};
  const uint8_t* image = byte_length ? (const uint8_t*)bytes : kNothing;
  weft_npy_header_t header = {0};
  if (weft_status_is_ok(status)) {
    weft_npy_subject_t subject = {name, true};
    status = weft_npy_parse_header(subject, image, byte_length, byte_length,
                                   &header);
  }
  if (weft_status_is_ok(status)) {
    *out_array = header.array;
    status = weft_allocator_malloc_uninitialized(
        allocator, out_array->byte_length, &out_array->data);
  }
  if (weft_status_is_ok(status)) {
    if (out_array->byte_length) {
      memcpy(out_array->data, image + header.data_offset,
             out_array->byte_length);
    }
    out_array->allocator = allocator;
  } else {
    memset(out_array, 0, sizeof(*out_array));
  }
  return status;
}

// Reads |length| bytes of |file| into |buffer|: an OS error, or DATA_LOSS
// when the file is shorter than it was (it changed while being read).
static weft_status_t weft_npy_read_bytes(FILE* file, const char* path,
                                         void* buffer, size_t length) {
  size_t got = length ? fread(buffer, 1, length, file) : 0;
  if (got == length) return WEFT_OK;
  if (ferror(file)) return weft_npy_errno_error(errno, path, "read");
  return WEFT_STATUS(DATA_LOSS,
                     "'%s': the file ended after %zu of %zu bytes read: it "
                     "is shorter than when it was opened",
                     path, got, length);
}

// Reads all of a stream that has no size (a pipe) into memory, then parses
// it as an image.
static weft_status_t weft_npy_read_stream(FILE* file, const char* path,
                                          weft_allocator_t allocator,
                                          weft_npy_array_t* out_array) {
  uint8_t* buffer = NULL;
  size_t length = 0;
  size_t capacity = 0;
  weft_status_t status = WEFT_OK;
  while (weft_status_is_ok(status)) {
    if (length == capacity) {
      capacity = capacity ? capacity * 2 : 64 * 1024;
      status = weft_allocator_realloc(allocator, capacity, (void**)&buffer);
      if (!weft_status_is_ok(status)) break;
    }
    size_t got = fread(buffer + length, 1, capacity - length, file);
    length += got;
    if (got == 0) {
      if (ferror(file)) status = weft_npy_errno_error(errno, path, "read");
      break;
    }
  }
  if (weft_status_is_ok(status)) {
    status = weft_npy_read_memory(buffer, length, path, allocator, out_array);
  }
  weft_allocator_free(allocator, buffer);
  return status;
}

// Reads a regular file of |total| bytes: the header, then the data into the
// array.
static weft_status_t weft_npy_read_regular(FILE* file, const char* path,
                                           uint64_t total,
                                           weft_allocator_t allocator,
                                           weft_npy_array_t* out_array) {
  weft_npy_subject_t subject = {path, true};
  uint8_t preamble[WEFT_NPY_MAX_PREAMBLE] = {0};
  size_t preamble_length =
      total < sizeof(preamble) ? (size_t)total : sizeof(preamble);
  weft_status_t status =
      weft_npy_read_bytes(file, path, preamble, preamble_length);
  weft_npy_header_t header = {0};
  if (weft_status_is_ok(status)) {
    status = weft_npy_parse_preamble(subject, preamble, preamble_length, total,
                                     &header);
  }
  // The whole header, preamble included, is at most the file's size.
  uint8_t* header_bytes = NULL;
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc_uninitialized(
        allocator, header.data_offset, (void**)&header_bytes);
  }
  // A version 1.0 header may end inside the 12 bytes read: go back to its
  // end, where the rest of the header (or the data) starts.
  size_t copied = preamble_length < header.data_offset ? preamble_length
                                                       : header.data_offset;
  if (weft_status_is_ok(status) && fseek(file, (long)copied, SEEK_SET) != 0) {
    status = weft_npy_errno_error(errno, path, "seek");
  }
  if (weft_status_is_ok(status)) {
    memcpy(header_bytes, preamble, copied);
    status = weft_npy_read_bytes(file, path, header_bytes + copied,
                                 header.data_offset - copied);
  }
  if (weft_status_is_ok(status)) {
    status = weft_npy_parse_header(subject, header_bytes, header.data_offset,
                                   total, &header);
  }
  weft_allocator_free(allocator, header_bytes);
  if (weft_status_is_ok(status)) {
    *out_array = header.array;
    status = weft_allocator_malloc_uninitialized(
        allocator, out_array->byte_length, &out_array->data);
  }
  if (weft_status_is_ok(status)) {
    out_array->allocator = allocator;
    status = weft_npy_read_bytes(file, path, out_array->data,
                                 out_array->byte_length);
  }
  return status;
}

weft_status_t weft_npy_read_file(const char* path, weft_allocator_t allocator,
                                 weft_npy_array_t* out_array) {
  weft_status_t status = weft_arguments_require(
      __func__, "path,out_array", (const void* const[]){path, out_array}, 2);
  if (!weft_status_is_ok(status)) return status;
  memset(out_array, 0, sizeof(*out_array));
  FILE* file = fopen(path, "rb");
  if (!file) return weft_npy_errno_error(errno, path, "cannot open");
  struct stat info;
  if (fstat(fileno(file), &info) != 0) {
    status = weft_npy_errno_error(errno, path, "cannot stat");
  } else if (S_ISDIR(info.st_mode)) {
    status = WEFT_STATUS(INVALID_ARGUMENT, "'%s': is a directory, not a .npy "
                         "file", path);
  } else if (S_ISREG(info.st_mode)) {
    status = weft_npy_read_regular(file, path, (uint64_t)info.st_size,
                                   allocator, out_array);
  } else {
    status = weft_npy_read_stream(file, path, allocator, out_array);
  }
  fclose(file);
  if (!weft_status_is_ok(status)) weft_npy_array_deinitialize(out_array);
  return status;
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

// Room for the preamble and the dict at WEFT_NPY_MAX_RANK 20-digit
// dimensions, padded.
#define WEFT_NPY_HEADER_CAPACITY 512

// Checks that |array|'s fields agree, for the writer |function|.
static weft_status_t weft_npy_check_array(const char* function,
                                          const weft_npy_array_t* array) {
  weft_npy_subject_t subject = {function, false};
  weft_npy_array_t expected;
  weft_status_t status = weft_npy_describe(subject, array->dtype, array->rank,
                                           array->shape, &expected);
  if (!weft_status_is_ok(status)) return status;
  char dims[WEFT_NPY_SHAPE_STRING_CAPACITY];
  weft_npy_array_format_shape(array, dims, sizeof(dims));
  if (array->element_count != expected.element_count) {
    return WEFT_NPY_ERROR(INVALID_ARGUMENT, subject,
                          "array.element_count is %" PRIu64
                          " but shape %s has %" PRIu64 " elements",
                          array->element_count, dims, expected.element_count);
  }
  if (array->byte_length != expected.byte_length) {
    return WEFT_NPY_ERROR(INVALID_ARGUMENT, subject,
                          "array.byte_length is %zu but shape %s of %s needs "
                          "%zu",
                          array->byte_length, dims,
                          weft_npy_dtype_name(array->dtype),
                          expected.byte_length);
  }
  if (array->byte_length > 0 && !array->data) {
    return WEFT_NPY_ERROR(INVALID_ARGUMENT, subject,
                          "array.data is NULL but shape %s of %s is %zu bytes",
                          dims, weft_npy_dtype_name(array->dtype),
                          array->byte_length);
  }
  return WEFT_OK;
}

// Formats the preamble and header of |array| (checked) into |buffer|:
// version 1.0 when its header length fits in 16 bits, else 2.0, padded with
// spaces and a '\n' so that the data starts at a multiple of 64 bytes.
static size_t weft_npy_format_header(const weft_npy_array_t* array,
                                     uint8_t buffer[WEFT_NPY_HEADER_CAPACITY]) {
  char dims[WEFT_NPY_SHAPE_STRING_CAPACITY];
  char dict[WEFT_NPY_HEADER_CAPACITY];
  int dict_length =
      snprintf(dict, sizeof(dict),
               "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
               weft_npy_dtype_descr(array->dtype),
               weft_npy_array_format_shape(array, dims, sizeof(dims)));
  // Magic, version, length, dict and '\n', padded with spaces.
  size_t unpadded = 10 + (size_t)dict_length + 1;
  uint8_t major_version = 1;
  size_t length_size = 2;
  if ((unpadded + WEFT_NPY_DATA_ALIGNMENT - 1) / WEFT_NPY_DATA_ALIGNMENT *
              WEFT_NPY_DATA_ALIGNMENT - 10 > UINT16_MAX) {
    major_version = 2;
    length_size = 4;
    unpadded += 2;
  }
  size_t total = (unpadded + WEFT_NPY_DATA_ALIGNMENT - 1) /
                 WEFT_NPY_DATA_ALIGNMENT * WEFT_NPY_DATA_ALIGNMENT;
  size_t header_length = total - 8 - length_size;
  memcpy(buffer, kWeftNpyMagic, sizeof(kWeftNpyMagic));
  buffer[6] = major_version;
  buffer[7] = 0;
  for (size_t i = 0; i < length_size; ++i) {
    buffer[8 + i] = (uint8_t)(header_length >> (8 * i));
  }
  size_t dict_offset = 8 + length_size;
  memcpy(buffer + dict_offset, dict, (size_t)dict_length);
  memset(buffer + dict_offset + dict_length, ' ',
         total - 1 - dict_offset - (size_t)dict_length);
  buffer[total - 1] = '\n';
  return total;
}

weft_status_t weft_npy_write_memory(const weft_npy_array_t* array,
                                    weft_allocator_t allocator,
                                    void** out_bytes, size_t* out_byte_length) {
  weft_status_t status = weft_arguments_require(
      __func__, "array,out_bytes,out_byte_length",
      (const void* const[]){array, out_bytes, out_byte_length}, 3);
  if (!weft_status_is_ok(status)) return status;
  *out_bytes = NULL;
  *out_byte_length = 0;
  status = weft_npy_check_array(__func__, array);
  uint8_t header[WEFT_NPY_HEADER_CAPACITY];
  size_t header_length = 0;
  uint8_t* bytes = NULL;
  if (weft_status_is_ok(status)) {
    header_length = weft_npy_format_header(array, header);
    if (array->byte_length > SIZE_MAX - header_length) {
      status = WEFT_STATUS(OUT_OF_RANGE,
                           "%s: a %zu-byte array does not fit in memory with "
                           "its header",
                           __func__, array->byte_length);
    }
  }
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc_uninitialized(
        allocator, header_length + array->byte_length, (void**)&bytes);
  }
  if (weft_status_is_ok(status)) {
    memcpy(bytes, header, header_length);
    if (array->byte_length) {
      memcpy(bytes + header_length, array->data, array->byte_length);
    }
    *out_bytes = bytes;
    *out_byte_length = header_length + array->byte_length;
  }
  return status;
}

weft_status_t weft_npy_write_file(const char* path,
                                  const weft_npy_array_t* array) {
  weft_status_t status = weft_arguments_require(
      __func__, "path,array", (const void* const[]){path, array}, 2);
  if (!weft_status_is_ok(status)) return status;
  status = weft_npy_check_array(__func__, array);
  if (!weft_status_is_ok(status)) return status;
  uint8_t header[WEFT_NPY_HEADER_CAPACITY];
  size_t header_length = weft_npy_format_header(array, header);
  FILE* file = fopen(path, "wb");
  if (!file) return weft_npy_errno_error(errno, path, "cannot create");
  bool failed = fwrite(header, 1, header_length, file) != header_length;
  if (!failed && array->byte_length) {
    failed = fwrite(array->data, 1, array->byte_length, file) !=
             array->byte_length;
  }
  int error = failed ? errno : 0;
  if (fclose(file) != 0 && !failed) {
    failed = true;
    error = errno;
  }
  return failed ? weft_npy_errno_error(error, path, "write") : WEFT_OK;
}
