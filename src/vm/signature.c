// weft VM: signature strings (see signature.h).
#include "vm/signature.h"

#include <stdbool.h>
#include <string.h>

#include "vm/bytecode.h"

typedef struct weft_vm_signature_parser_t {
  const char* text;
  size_t length;
  size_t position;
  weft_vm_parsed_signature_t* out;
  size_t canonical_length;
} weft_vm_signature_parser_t;

static void weft_vm_signature_skip_spaces(weft_vm_signature_parser_t* parser) {
  while (parser->position < parser->length &&
         (parser->text[parser->position] == ' ' ||
          parser->text[parser->position] == '\t')) {
    ++parser->position;
  }
}

static bool weft_vm_signature_peek(weft_vm_signature_parser_t* parser,
                                   char c) {
  weft_vm_signature_skip_spaces(parser);
  return parser->position < parser->length &&
         parser->text[parser->position] == c;
}

static weft_status_t weft_vm_signature_error(
    const weft_vm_signature_parser_t* parser, const char* expected) {
  const int shown = parser->length > 200 ? 200 : (int)parser->length;
  return WEFT_STATUS(INVALID_ARGUMENT,
                     "signature '%.*s': column %zu: expected %s", shown,
                     parser->text, parser->position + 1, expected);
}

// Appends |length| bytes to the canonical text.
static weft_status_t weft_vm_signature_emit(weft_vm_signature_parser_t* parser,
                                            const char* bytes, size_t length) {
  if (parser->canonical_length + length >= sizeof(parser->out->canonical)) {
    return weft_vm_signature_error(parser, "a shorter signature");
  }
  memcpy(parser->out->canonical + parser->canonical_length, bytes, length);
  parser->canonical_length += length;
  parser->out->canonical[parser->canonical_length] = '\0';
  return WEFT_OK;
}

static weft_status_t weft_vm_signature_expect(
    weft_vm_signature_parser_t* parser, char c, const char* expected) {
  if (!weft_vm_signature_peek(parser, c)) {
    return weft_vm_signature_error(parser, expected);
  }
  ++parser->position;
  return weft_vm_signature_emit(parser, &c, 1);
}

static bool weft_vm_signature_is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '.';
}

// Parses one type into value |index|.
static weft_status_t weft_vm_signature_parse_type(
    weft_vm_signature_parser_t* parser, uint32_t index) {
  static const struct {
    const char* name;
    weft_vm_value_type_t type;
  } kScalars[] = {{"i32", WEFT_VM_TYPE_I32},
                  {"i64", WEFT_VM_TYPE_I64},
                  {"f32", WEFT_VM_TYPE_F32},
                  {"f64", WEFT_VM_TYPE_F64}};
  weft_vm_signature_skip_spaces(parser);
  const char* at = parser->text + parser->position;
  const size_t left = parser->length - parser->position;
  weft_vm_parsed_signature_t* out = parser->out;
  out->nullable[index] = 0;
  out->ref_name_offset[index] = 0;
  out->ref_name_length[index] = 0;
  for (size_t i = 0; i < sizeof(kScalars) / sizeof(kScalars[0]); ++i) {
    if (left >= 3 && memcmp(at, kScalars[i].name, 3) == 0 &&
        (left == 3 || !weft_vm_signature_is_name_char(at[3]))) {
      out->types[index] = (uint8_t)kScalars[i].type;
      parser->position += 3;
      return weft_vm_signature_emit(parser, kScalars[i].name, 3);
    }
  }
  if (left == 0 || at[0] != 'r' ||
      (left > 1 && weft_vm_signature_is_name_char(at[1]))) {
    return weft_vm_signature_error(
        parser, "a type (i32, i64, f32, f64, r, r<NAME>)");
  }
  out->types[index] = WEFT_VM_TYPE_REF;
  ++parser->position;
  weft_status_t status = weft_vm_signature_emit(parser, "r", 1);
  if (weft_status_is_ok(status) && parser->position < parser->length &&
      parser->text[parser->position] == '<') {
    ++parser->position;
    status = weft_vm_signature_emit(parser, "<", 1);
    const size_t name_start = parser->position;
    while (parser->position < parser->length &&
           weft_vm_signature_is_name_char(parser->text[parser->position])) {
      ++parser->position;
    }
    const size_t name_length = parser->position - name_start;
    if (weft_status_is_ok(status) && name_length == 0) {
      status = weft_vm_signature_error(parser, "a ref type name");
    }
    if (weft_status_is_ok(status)) {
      out->ref_name_offset[index] = (uint16_t)parser->canonical_length;
      out->ref_name_length[index] = (uint16_t)name_length;
      status = weft_vm_signature_emit(parser, parser->text + name_start,
                                      name_length);
    }
    if (weft_status_is_ok(status)) {
      if (parser->position >= parser->length ||
          parser->text[parser->position] != '>') {
        status = weft_vm_signature_error(parser, "'>' after the type name");
      } else {
        ++parser->position;
        status = weft_vm_signature_emit(parser, ">", 1);
      }
    }
  }
  if (weft_status_is_ok(status) && parser->position < parser->length &&
      parser->text[parser->position] == '?') {
    ++parser->position;
    out->nullable[index] = 1;
    status = weft_vm_signature_emit(parser, "?", 1);
  }
  return status;
}

// Parses "(type, type, ...)" into values starting at |first|; sets
// |*out_count|.
static weft_status_t weft_vm_signature_parse_list(
    weft_vm_signature_parser_t* parser, uint32_t first, uint16_t* out_count) {
  uint32_t count = 0;
  weft_status_t status = weft_vm_signature_expect(parser, '(', "'('");
  if (weft_status_is_ok(status) && !weft_vm_signature_peek(parser, ')')) {
    do {
      if (count > 0) {
        ++parser->position;  // the ','
        status = weft_vm_signature_emit(parser, ",", 1);
      }
      if (weft_status_is_ok(status) && count == WEFT_VM_SIGNATURE_MAX_VALUES) {
        status = weft_vm_signature_error(parser, "at most 64 values");
      }
      if (weft_status_is_ok(status)) {
        status = weft_vm_signature_parse_type(parser, first + count);
        ++count;
      }
    } while (weft_status_is_ok(status) && weft_vm_signature_peek(parser, ','));
  }
  if (weft_status_is_ok(status)) {
    status = weft_vm_signature_expect(parser, ')', "',' or ')'");
  }
  *out_count = (uint16_t)count;
  return status;
}

weft_status_t weft_vm_signature_parse(const char* text, size_t length,
                                      weft_vm_parsed_signature_t* out) {
  memset(out, 0, sizeof(*out));
  weft_vm_signature_parser_t parser = {text ? text : "", text ? length : 0, 0,
                                       out, 0};
  uint16_t arg_count = 0;
  uint16_t ret_count = 0;
  weft_status_t status = weft_vm_signature_parse_list(&parser, 0, &arg_count);
  if (weft_status_is_ok(status)) {
    weft_vm_signature_skip_spaces(&parser);
    if (parser.length - parser.position >= 2 &&
        memcmp(parser.text + parser.position, "->", 2) == 0) {
      parser.position += 2;
      status = weft_vm_signature_emit(&parser, "->", 2);
    } else {
      status = weft_vm_signature_error(&parser, "'->'");
    }
  }
  // Results follow the arguments in |types|.
  if (weft_status_is_ok(status)) {
    status = weft_vm_signature_parse_list(&parser, arg_count, &ret_count);
  }
  if (weft_status_is_ok(status)) {
    weft_vm_signature_skip_spaces(&parser);
    if (parser.position != parser.length) {
      status = weft_vm_signature_error(&parser, "the end of the signature");
    }
  }
  out->arg_count = arg_count;
  out->ret_count = ret_count;
  return status;
}
