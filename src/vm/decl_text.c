// weft VM: the rules and the text of declarations (see decl_text.h).
#include "vm/decl_text.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "vm/bytecode_builder.h"

bool weft_vm_symbol_name_is_valid(const char* name, size_t length) {
  if (length == 0 || !(name[0] >= 'A' && name[0] <= 'Z')) return false;
  for (size_t i = 1; i < length; ++i) {
    const char c = name[i];
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) {
      return false;
    }
  }
  return true;
}

bool weft_vm_element_type_parse(const char* text, size_t length,
                                uint8_t* out_type) {
  for (uint32_t type = WEFT_VM_ELEMENT_TYPE_NONE + 1;
       type < WEFT_VM_ELEMENT_TYPE_COUNT_; ++type) {
    const char* name = weft_vm_element_type_name((weft_vm_element_type_t)type);
    if (strlen(name) == length && memcmp(name, text, length) == 0) {
      *out_type = (uint8_t)type;
      return true;
    }
  }
  return false;
}

bool weft_vm_decl_allows_tensor(uint8_t type, const char* ref_name,
                                size_t ref_name_length) {
  static const char kBufferView[] = "hal.buffer_view";
  return type == WEFT_VM_TYPE_REF &&
         (ref_name_length == 0 ||
          (ref_name_length == sizeof(kBufferView) - 1 &&
           memcmp(ref_name, kBufferView, ref_name_length) == 0));
}

// Appends |text| at |*used|, truncating at |capacity| - 1; |*used| counts
// it all.
static void weft_vm_decl_append(char* buffer, size_t capacity, size_t* used,
                                const char* text) {
  const size_t length = strlen(text);
  if (*used + 1 < capacity) {
    const size_t room = capacity - 1 - *used;
    memcpy(buffer + *used, text, length < room ? length : room);
  }
  *used += length;
}

size_t weft_vm_decl_type_text(const weft_vm_decl_t* decl,
                              const char* const* symbols,
                              uint32_t symbol_count, char* buffer,
                              size_t capacity) {
  size_t used = 0;
  if (decl->element_type != WEFT_VM_ELEMENT_TYPE_NONE) {
    for (uint32_t i = 0; i < decl->rank; ++i) {
      const weft_vm_decl_dim_t* dim = &decl->dims[i];
      char number[24];
      const char* piece = "?";
      if (dim->kind == WEFT_VM_DIM_STATIC) {
        snprintf(number, sizeof(number), "%" PRId64, dim->size);
        piece = number;
      } else if (dim->kind == WEFT_VM_DIM_SYMBOL &&
                 dim->symbol < symbol_count) {
        piece = symbols[dim->symbol];
      }
      if (i) weft_vm_decl_append(buffer, capacity, &used, "x");
      weft_vm_decl_append(buffer, capacity, &used, piece);
    }
    if (decl->rank) weft_vm_decl_append(buffer, capacity, &used, " ");
    weft_vm_decl_append(
        buffer, capacity, &used,
        weft_vm_element_type_name((weft_vm_element_type_t)decl->element_type));
  }
  if (capacity > 0) buffer[used < capacity ? used : capacity - 1] = '\0';
  return used;
}

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

// The line being parsed and the cursor in it.
typedef struct weft_vm_decl_cursor_t {
  const char* line;
  size_t length;  // up to a ';' comment
  size_t position;
} weft_vm_decl_cursor_t;

static void weft_vm_decl_skip_spaces(weft_vm_decl_cursor_t* cursor) {
  while (cursor->position < cursor->length &&
         (cursor->line[cursor->position] == ' ' ||
          cursor->line[cursor->position] == '\t')) {
    ++cursor->position;
  }
}

// Advances over characters that |accept| and returns how many.
static size_t weft_vm_decl_read(weft_vm_decl_cursor_t* cursor,
                                bool (*accept)(char c)) {
  const size_t start = cursor->position;
  while (cursor->position < cursor->length &&
         accept(cursor->line[cursor->position])) {
    ++cursor->position;
  }
  return cursor->position - start;
}

static bool weft_vm_decl_is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '.';
}

static bool weft_vm_decl_is_type_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '?';
}

// Fails at |offset| expecting |expected|.
static bool weft_vm_decl_fail(weft_vm_decl_syntax_error_t* error, size_t offset,
                              const char* expected) {
  error->offset = offset;
  error->found_length = 0;
  snprintf(error->expected, sizeof(error->expected), "%s", expected);
  return false;
}

// Fails at the dimension |offset|, |length| bytes, expecting |expected|.
static bool weft_vm_decl_fail_piece(weft_vm_decl_syntax_error_t* error,
                                    size_t offset, size_t length,
                                    const char* expected) {
  weft_vm_decl_fail(error, offset, expected);
  error->found_length = length;
  return false;
}

#define WEFT_VM_DECL_DIMENSION \
  "a dimension (a size, '?' or a symbol [A-Z][A-Z0-9_]*)"
#define WEFT_VM_DECL_ELEMENT \
  "an element type (f16 f32 f64 i8 i16 i32 i64 u8 u16 u32 u64)"

// Reads the dimension |text|[0, |length|) at |offset| into dims[rank].
static bool weft_vm_decl_dimension(const char* text, size_t length,
                                   size_t offset, bool is_last,
                                   weft_vm_parsed_decl_t* out,
                                   weft_vm_decl_syntax_error_t* error) {
  if (length == 0) {
    return weft_vm_decl_fail(error, offset,
                             "a dimension (a size, '?' or a symbol "
                             "[A-Z][A-Z0-9_]*) after 'x'");
  }
  uint8_t element = 0;
  if (is_last && weft_vm_element_type_parse(text, length, &element)) {
    return weft_vm_decl_fail_piece(error, offset, length,
                                   "a space between the dimensions and the "
                                   "element type (KxN f32)");
  }
  if (out->rank == WEFT_VM_TENSOR_MAX_RANK) {
    return weft_vm_decl_fail_piece(error, offset, length,
                                   "at most 8 dimensions (a buffer view's "
                                   "rank)");
  }
  const uint32_t index = out->rank;
  out->dims[index].offset = offset;
  out->dims[index].length = length;
  out->dims[index].size = 0;
  if (length == 1 && text[0] == '?') {
    out->dims[index].kind = WEFT_VM_DIM_DYNAMIC;
  } else if (text[0] >= '0' && text[0] <= '9') {
    uint64_t size = 0;
    bool ok = !(text[0] == '0' && length > 1);  // one spelling per size
    for (size_t i = 0; ok && i < length; ++i) {
      ok = text[i] >= '0' && text[i] <= '9' &&
           size <= ((uint64_t)INT64_MAX - (uint64_t)(text[i] - '0')) / 10;
      size = size * 10 + (uint64_t)(text[i] - '0');
    }
    if (!ok) {
      return weft_vm_decl_fail_piece(error, offset, length,
                                     "a size (decimal, no leading zeros, at "
                                     "most 9223372036854775807)");
    }
    out->dims[index].kind = WEFT_VM_DIM_STATIC;
    out->dims[index].size = (int64_t)size;
  } else if (weft_vm_symbol_name_is_valid(text, length)) {
    out->dims[index].kind = WEFT_VM_DIM_SYMBOL;
  } else {
    return weft_vm_decl_fail_piece(error, offset, length,
                                   WEFT_VM_DECL_DIMENSION);
  }
  ++out->rank;
  return true;
}

bool weft_vm_decl_parse(const char* line, size_t length, size_t position,
                        weft_vm_parsed_decl_t* out,
                        weft_vm_decl_syntax_error_t* out_error) {
  memset(out, 0, sizeof(*out));
  out->colon_offset = SIZE_MAX;
  const char* comment = memchr(line, ';', length);
  weft_vm_decl_cursor_t cursor = {
      line, comment ? (size_t)(comment - line) : length, position};
  weft_vm_decl_skip_spaces(&cursor);
  out->name_offset = cursor.position;
  out->name_length = weft_vm_decl_read(&cursor, weft_vm_decl_is_name_char);
  if (!weft_vm_name_is_identifier(line + out->name_offset, out->name_length,
                                  /*allow_dots=*/false)) {
    return weft_vm_decl_fail(out_error, out->name_offset,
                             "a value name ([A-Za-z_][A-Za-z0-9_]*)");
  }
  weft_vm_decl_skip_spaces(&cursor);
  if (cursor.position == cursor.length) return true;
  if (line[cursor.position] != ':') {
    return weft_vm_decl_fail(out_error, cursor.position,
                             "':' and a tensor type, or end of line");
  }
  out->colon_offset = cursor.position++;
  weft_vm_decl_skip_spaces(&cursor);
  const size_t first = cursor.position;
  const size_t first_length =
      weft_vm_decl_read(&cursor, weft_vm_decl_is_type_char);
  if (first_length == 0) {
    return weft_vm_decl_fail(out_error, first,
                             "a tensor type (dimensions and an element type "
                             "such as KxN f32, or an element type alone for "
                             "rank 0)");
  }
  if (!weft_vm_element_type_parse(line + first, first_length,
                                  &out->element_type)) {
    // Dimensions joined by 'x', then the element type.
    size_t start = first;
    for (size_t i = first; i <= first + first_length; ++i) {
      if (i < first + first_length && line[i] != 'x') continue;
      const bool is_last = i == first + first_length;
      if (!weft_vm_decl_dimension(line + start, i - start, start, is_last, out,
                                  out_error)) {
        return false;
      }
      start = i + 1;
    }
    weft_vm_decl_skip_spaces(&cursor);
    const size_t element = cursor.position;
    const size_t element_length =
        weft_vm_decl_read(&cursor, weft_vm_decl_is_type_char);
    if (!weft_vm_element_type_parse(line + element, element_length,
                                    &out->element_type)) {
      return weft_vm_decl_fail(out_error, element,
                               element == first + first_length
                                   ? "a space and an element type after the "
                                     "dimensions (KxN f32)"
                                   : WEFT_VM_DECL_ELEMENT);
    }
  }
  weft_vm_decl_skip_spaces(&cursor);
  if (cursor.position != cursor.length) {
    return weft_vm_decl_fail(out_error, cursor.position,
                             "end of line after the tensor type");
  }
  return true;
}
