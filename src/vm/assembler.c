// weft VM: the text assembler (see assembler.h and docs/VM.md, "Text
// format").
//
// One pass over the lines. Names used before they are defined (functions,
// imports, rodata segments, labels) leave a fixup with their location;
// labels resolve at `end`, everything else at the end of the file, each
// with the location of the use in its message. The module itself is put
// together by the bytecode builder (bytecode_builder.h).
#include "vm/assembler.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vm/assembler_decls.h"
#include "vm/bytecode_builder.h"
#include "vm/name_table.h"
#include "vm/signature.h"
#include "vm/signature_text.h"
#include "vm/text_syntax.h"

// The largest register number: register counts are 16-bit.
#define WEFT_VM_ASM_MAX_REGISTER 65534u
// Call and import indices are 16-bit (the instruction's |a|).
#define WEFT_VM_ASM_MAX_CALLEES 65536u

// A name or word in the source and where it starts.
typedef struct weft_vm_asm_span_t {
  const char* text;
  size_t length;
  uint32_t line;
  uint32_t column;
} weft_vm_asm_span_t;

// A branch waiting for its label (resolved at `end`).
typedef struct weft_vm_asm_label_fixup_t {
  uint32_t code_index;  // module-wide
  weft_vm_asm_span_t label;
} weft_vm_asm_label_fixup_t;

// A call waiting for its callee (resolved at the end of the file).
typedef struct weft_vm_asm_call_fixup_t {
  uint32_t code_index;
  bool is_import;
  weft_vm_asm_span_t callee;  // "f" (column of '@') or "module.function"
  uint32_t operand_first;     // arguments then results
  uint32_t arg_count;
  uint32_t ret_count;
  uint32_t args_column;  // the '(' of each list
  uint32_t rets_column;
} weft_vm_asm_call_fixup_t;

// A rodata segment used by name (resolved at the end of the file).
typedef struct weft_vm_asm_rodata_fixup_t {
  uint32_t code_index;
  weft_vm_asm_span_t name;
} weft_vm_asm_rodata_fixup_t;

// A `fail` message string: becomes an anonymous segment after the named
// ones, in the order of the code.
typedef struct weft_vm_asm_message_t {
  uint32_t code_index;
  uint32_t offset;  // into messages
  uint32_t length;
} weft_vm_asm_message_t;

// Where each call operand came from, for call checks (parallel to the
// builder's operands).
typedef struct weft_vm_asm_operand_t {
  uint32_t column;
  uint8_t is_ref;
} weft_vm_asm_operand_t;

// A growable array of |type|.
#define WEFT_VM_ASM_ARRAY(type) \
  struct {                      \
    type* data;                 \
    uint32_t count;             \
    uint32_t capacity;          \
  }

typedef struct weft_vm_assembler_t {
  weft_allocator_t allocator;
  const char* source_name;
  const char* text;
  size_t length;
  size_t next_line;  // offset of the line after the current one

  // The current line (without its newline) and the cursor in it.
  const char* line;
  size_t line_length;
  uint32_t line_number;
  size_t position;

  weft_vm_bytecode_builder_t builder;
  weft_vm_name_table_t opcodes;    // name -> weft_vm_opcode_t
  weft_vm_name_table_t functions;  // name -> function index
  weft_vm_name_table_t imports;    // "module.function" -> import index
  weft_vm_name_table_t rodata;     // name -> segment index
  weft_vm_name_table_t labels;     // current function: name -> index
  uint32_t module_line;            // 0: no `module` line yet

  // The function being assembled (in_function).
  bool in_function;
  weft_vm_asm_span_t function_name;
  weft_vm_parsed_signature_t signature;
  weft_vm_builder_function_t function;
  uint32_t scalar_count;  // registers used so far (parameters included)
  uint32_t ref_count;
  uint32_t last_column;  // of the last instruction's opcode
  weft_vm_asm_span_t last_opcode;
  // Its 'arg' and 'result' lines (assembler_decls.h).
  weft_vm_asm_decls_t decls;

  WEFT_VM_ASM_ARRAY(weft_vm_asm_label_fixup_t) label_fixups;
  WEFT_VM_ASM_ARRAY(weft_vm_asm_call_fixup_t) call_fixups;
  WEFT_VM_ASM_ARRAY(weft_vm_asm_rodata_fixup_t) rodata_fixups;
  WEFT_VM_ASM_ARRAY(weft_vm_asm_message_t) messages;
  WEFT_VM_ASM_ARRAY(weft_vm_asm_operand_t) operand_info;
  WEFT_VM_ASM_ARRAY(uint8_t) message_bytes;
  WEFT_VM_ASM_ARRAY(uint8_t) scratch;  // a string literal's bytes
} weft_vm_assembler_t;

// Appends the lvalue |value| (of the array's element type: the sizes must
// match) to |array|.
#define WEFT_VM_ASM_PUSH(assembler, array, value)                             \
  weft_vm_asm_push(                                                           \
      (assembler), (void**)&(array).data, &(array).count, &(array).capacity,  \
      sizeof(                                                                 \
          char[sizeof(value) == sizeof(*(array).data) ? sizeof(value) : -1]), \
      &(value))

static weft_status_t weft_vm_asm_push(weft_vm_assembler_t* assembler,
                                      void** data, uint32_t* count,
                                      uint32_t* capacity, size_t size,
                                      const void* value) {
  weft_status_t status = weft_vm_array_reserve(
      assembler->allocator, data, capacity, *count, 1, size, "entries");
  if (weft_status_is_ok(status)) {
    memcpy((uint8_t*)*data + (size_t)*count * size, value, size);
    ++*count;
  }
  return status;
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

// INVALID_ARGUMENT "SOURCE:LINE:COLUMN: message".
static weft_status_t weft_vm_asm_error(const weft_vm_assembler_t* assembler,
                                       uint32_t line, uint32_t column,
                                       const char* format, ...)
    __attribute__((format(printf, 4, 5)));

static weft_status_t weft_vm_asm_error(const weft_vm_assembler_t* assembler,
                                       uint32_t line, uint32_t column,
                                       const char* format, ...) {
  char message[768];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  return WEFT_STATUS(INVALID_ARGUMENT, "%s:%" PRIu32 ":%" PRIu32 ": %s",
                     assembler->source_name, line, column, message);
}

// True for the characters of names, opcodes, registers and numbers.
static bool weft_vm_asm_is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '.';
}

// True at the end of the line's content (a comment counts as the end).
static bool weft_vm_asm_at_end(const weft_vm_assembler_t* assembler) {
  return assembler->position >= assembler->line_length ||
         assembler->line[assembler->position] == ';';
}

static void weft_vm_asm_skip_spaces(weft_vm_assembler_t* assembler) {
  while (assembler->position < assembler->line_length &&
         (assembler->line[assembler->position] == ' ' ||
          assembler->line[assembler->position] == '\t')) {
    ++assembler->position;
  }
}

// Describes what is at the cursor for "found ..." (text_syntax.h).
static void weft_vm_asm_describe(const weft_vm_assembler_t* assembler,
                                 char* buffer, size_t capacity) {
  weft_vm_text_describe(assembler->line, assembler->line_length,
                        assembler->position, buffer, capacity);
}

// "expected |expected|, found <what is at the cursor>" at the cursor.
static weft_status_t weft_vm_asm_expected(const weft_vm_assembler_t* assembler,
                                          const char* expected) {
  char found[64];
  weft_vm_asm_describe(assembler, found, sizeof(found));
  return weft_vm_asm_error(assembler, assembler->line_number,
                           (uint32_t)assembler->position + 1,
                           "expected %s, found %s", expected, found);
}

// "expected |expected|, found '<span>'" at |span|.
static weft_status_t weft_vm_asm_expected_span(
    const weft_vm_assembler_t* assembler, const weft_vm_asm_span_t* span,
    const char* expected) {
  return weft_vm_asm_error(
      assembler, span->line, span->column, "expected %s, found '%.*s'",
      expected, (int)(span->length > 64 ? 64 : span->length), span->text);
}

//===----------------------------------------------------------------------===//
// Lexing
//===----------------------------------------------------------------------===//

// Reads a word ([A-Za-z0-9_.]+) at the cursor into |out_span|; false (and
// the cursor unmoved) when there is none.
static bool weft_vm_asm_read_word(weft_vm_assembler_t* assembler,
                                  weft_vm_asm_span_t* out_span) {
  weft_vm_asm_skip_spaces(assembler);
  const size_t start = assembler->position;
  while (assembler->position < assembler->line_length &&
         weft_vm_asm_is_word_char(assembler->line[assembler->position])) {
    ++assembler->position;
  }
  *out_span =
      (weft_vm_asm_span_t){assembler->line + start, assembler->position - start,
                           assembler->line_number, (uint32_t)start + 1};
  return assembler->position > start;
}

// Reads a number-like token (word characters plus '+', '-', ':') for
// immediates such as -5, 0x1f, 1.5e-3, -inf, nan:0x1.
static bool weft_vm_asm_read_number(weft_vm_assembler_t* assembler,
                                    weft_vm_asm_span_t* out_span) {
  weft_vm_asm_skip_spaces(assembler);
  const size_t start = assembler->position;
  while (assembler->position < assembler->line_length) {
    const char c = assembler->line[assembler->position];
    if (!weft_vm_asm_is_word_char(c) && c != '+' && c != '-' && c != ':') {
      break;
    }
    ++assembler->position;
  }
  *out_span =
      (weft_vm_asm_span_t){assembler->line + start, assembler->position - start,
                           assembler->line_number, (uint32_t)start + 1};
  return assembler->position > start;
}

// Reads a word and checks it is an identifier (with or without dots).
static weft_status_t weft_vm_asm_read_name(weft_vm_assembler_t* assembler,
                                           const char* expected,
                                           bool allow_dots,
                                           weft_vm_asm_span_t* out_span) {
  weft_vm_asm_skip_spaces(assembler);
  const size_t start = assembler->position;
  if (!weft_vm_asm_read_word(assembler, out_span) ||
      !weft_vm_name_is_identifier(out_span->text, out_span->length,
                                  allow_dots)) {
    assembler->position = start;
    return weft_vm_asm_expected(assembler, expected);
  }
  return WEFT_OK;
}

// Consumes |c| (after spaces) or fails "expected |expected|".
static weft_status_t weft_vm_asm_expect_char(weft_vm_assembler_t* assembler,
                                             char c, const char* expected) {
  weft_vm_asm_skip_spaces(assembler);
  if (assembler->position < assembler->line_length &&
      assembler->line[assembler->position] == c) {
    ++assembler->position;
    return WEFT_OK;
  }
  return weft_vm_asm_expected(assembler, expected);
}

// Checks nothing but spaces and a comment is left on the line.
static weft_status_t weft_vm_asm_expect_end(weft_vm_assembler_t* assembler,
                                            const char* after) {
  weft_vm_asm_skip_spaces(assembler);
  if (weft_vm_asm_at_end(assembler)) return WEFT_OK;
  char expected[256];
  snprintf(expected, sizeof(expected), "end of line after %s", after);
  return weft_vm_asm_expected(assembler, expected);
}

static bool weft_vm_asm_span_is(const weft_vm_asm_span_t* span,
                                const char* text) {
  return span->length == strlen(text) &&
         memcmp(span->text, text, span->length) == 0;
}

static int weft_vm_asm_hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Reads a string literal at the cursor into assembler->scratch: escapes
// \n \t \r \0 \\ \" \xNN; with |hex|, pairs of hex digits with optional
// spaces between bytes.
static weft_status_t weft_vm_asm_read_string(weft_vm_assembler_t* assembler,
                                             bool hex) {
  assembler->scratch.count = 0;
  weft_status_t status = weft_vm_asm_expect_char(
      assembler, '"',
      hex ? "a hex string (\"00 01 ff\")" : "a string (\"...\")");
  const char* line = assembler->line;
  while (weft_status_is_ok(status)) {
    size_t at = assembler->position;
    if (at >= assembler->line_length) {
      return weft_vm_asm_expected(assembler, "'\"' to close the string");
    }
    char c = line[at];
    if (c == '"') {
      ++assembler->position;
      break;
    }
    uint8_t byte = (uint8_t)c;
    if (hex) {
      if (c == ' ' || c == '\t') {
        ++assembler->position;
        continue;
      }
      const int high = weft_vm_asm_hex_digit(c);
      const int low = at + 1 < assembler->line_length
                          ? weft_vm_asm_hex_digit(line[at + 1])
                          : -1;
      if (high < 0 || low < 0) {
        return weft_vm_asm_expected(assembler,
                                    "two hex digits per byte (\"00 01 ff\")");
      }
      byte = (uint8_t)(high * 16 + low);
      assembler->position += 2;
    } else if (c == '\\') {
      const char escape = at + 1 < assembler->line_length ? line[at + 1] : 0;
      size_t length = 2;
      switch (escape) {
        case 'n': byte = '\n'; break;
        case 't': byte = '\t'; break;
        case 'r': byte = '\r'; break;
        case '0': byte = 0; break;
        case '\\': byte = '\\'; break;
        case '"': byte = '"'; break;
        case 'x': {
          const int high = at + 2 < assembler->line_length
                               ? weft_vm_asm_hex_digit(line[at + 2])
                               : -1;
          const int low = at + 3 < assembler->line_length
                              ? weft_vm_asm_hex_digit(line[at + 3])
                              : -1;
          if (high < 0 || low < 0) {
            return weft_vm_asm_error(
                assembler, assembler->line_number, (uint32_t)at + 1,
                "expected two hex digits after '\\x', found '%.*s'",
                (int)(assembler->line_length - at > 4
                          ? 4
                          : assembler->line_length - at),
                line + at);
          }
          byte = (uint8_t)(high * 16 + low);
          length = 4;
          break;
        }
        default:
          return weft_vm_asm_error(
              assembler, assembler->line_number, (uint32_t)at + 1,
              "expected an escape (\\n \\t \\r \\0 \\\\ \\\" \\xNN), found "
              "'\\%c'",
              escape >= 0x20 && escape < 0x7f ? escape : '?');
      }
      assembler->position += length;
    } else {
      ++assembler->position;
    }
    status = WEFT_VM_ASM_PUSH(assembler, assembler->scratch, byte);
  }
  return status;
}

// Reads a signature at the cursor: "(...) -> (...)", parsed by the
// signature parser, whose message is passed on at the column it names.
static weft_status_t weft_vm_asm_read_signature(
    weft_vm_assembler_t* assembler, weft_vm_parsed_signature_t* out) {
  weft_vm_asm_skip_spaces(assembler);
  const size_t start = assembler->position;
  size_t end = start;
  // The extent: two parenthesized lists around "->" (signatures hold no
  // nested parentheses); else the rest of the line, for the parser to say
  // what is wrong.
  size_t content_end = start;
  while (content_end < assembler->line_length &&
         assembler->line[content_end] != ';') {
    ++content_end;
  }
  for (int list = 0; list < 2 && end < content_end; ++list) {
    while (end < content_end && assembler->line[end] != ')') ++end;
    if (end < content_end) ++end;
  }
  if (end <= start) end = content_end;
  while (end > start && (assembler->line[end - 1] == ' ' ||
                         assembler->line[end - 1] == '\t')) {
    --end;
  }
  const char* text = assembler->line + start;
  const size_t length = end - start;
  weft_status_t status = weft_vm_signature_parse(text, length, out);
  if (weft_status_is_ok(status)) {
    assembler->position = end;
    return WEFT_OK;
  }
  // The parser says "signature '<text>': column N: expected ...".
  const char* message = weft_status_message(status);
  size_t column = 1;
  const char* marker = strstr(message, "': column ");
  const char* expected = marker ? strstr(marker, ": expected ") : NULL;
  if (marker && expected) {
    column = (size_t)strtoul(marker + strlen("': column "), NULL, 10);
    if (column == 0 || column > length + 1) column = 1;
  }
  weft_status_t located = weft_vm_asm_error(
      assembler, assembler->line_number, (uint32_t)(start + column),
      "%s (signature '%.*s')",
      expected ? expected + 2 : "expected a signature (ARGS) -> (RESULTS)",
      (int)(length > 120 ? 120 : length), text);
  weft_status_free(status);
  return located;
}

//===----------------------------------------------------------------------===//
// Operands
//===----------------------------------------------------------------------===//

// Reads a register; |kind| 's' or 'r' demands that file, 0 takes either
// (|*out_is_ref| says which). Tracks the function's register counts.
static weft_status_t weft_vm_asm_read_register(weft_vm_assembler_t* assembler,
                                               char kind, uint16_t* out_index,
                                               bool* out_is_ref,
                                               uint32_t* out_column) {
  const char* expected = kind == 's'   ? "a scalar register (sN)"
                         : kind == 'r' ? "a ref register (rN)"
                                       : "a register (sN or rN)";
  weft_vm_asm_skip_spaces(assembler);
  const size_t start = assembler->position;
  weft_vm_asm_span_t word;
  weft_vm_asm_read_word(assembler, &word);
  *out_column = word.column;
  bool ok = word.length >= 2 && (word.text[0] == 's' || word.text[0] == 'r') &&
            (kind == 0 || word.text[0] == kind);
  // Digits only, no leading zero: one spelling per register.
  for (size_t i = 1; ok && i < word.length; ++i) {
    ok = word.text[i] >= '0' && word.text[i] <= '9';
  }
  ok = ok && !(word.text[1] == '0' && word.length > 2);
  if (!ok) {
    assembler->position = start;
    return weft_vm_asm_expected(assembler, expected);
  }
  uint64_t number = 0;
  for (size_t i = 1; i < word.length && number <= WEFT_VM_ASM_MAX_REGISTER;
       ++i) {
    number = number * 10 + (uint64_t)(word.text[i] - '0');
  }
  if (number > WEFT_VM_ASM_MAX_REGISTER) {
    return weft_vm_asm_expected_span(assembler, &word,
                                     "a register number up to 65534");
  }
  const bool is_ref = word.text[0] == 'r';
  uint32_t* count = is_ref ? &assembler->ref_count : &assembler->scalar_count;
  if (number + 1 > *count) *count = (uint32_t)number + 1;
  *out_index = (uint16_t)number;
  if (out_is_ref) *out_is_ref = is_ref;
  return WEFT_OK;
}

// Appends one operand-list entry (and where it came from).
static weft_status_t weft_vm_asm_add_operand(weft_vm_assembler_t* assembler,
                                             uint16_t index, bool is_ref,
                                             uint32_t column) {
  uint32_t first = 0;
  weft_status_t status = weft_vm_bytecode_builder_add_operands(
      &assembler->builder, &index, 1, &first);
  if (weft_status_is_ok(status)) {
    status = WEFT_VM_ASM_PUSH(assembler, assembler->operand_info,
                              ((weft_vm_asm_operand_t){column, is_ref}));
  }
  return status;
}

// Reads "(reg, reg, ...)" into the operand list; sets the count and the
// column of the '('.
static weft_status_t weft_vm_asm_read_register_list(
    weft_vm_assembler_t* assembler, uint32_t* out_count, uint32_t* out_column) {
  *out_count = 0;
  weft_vm_asm_skip_spaces(assembler);
  *out_column = (uint32_t)assembler->position + 1;
  weft_status_t status =
      weft_vm_asm_expect_char(assembler, '(', "'(' and a list of registers");
  weft_vm_asm_skip_spaces(assembler);
  if (weft_status_is_ok(status) &&
      assembler->position < assembler->line_length &&
      assembler->line[assembler->position] == ')') {
    ++assembler->position;
    return WEFT_OK;
  }
  while (weft_status_is_ok(status)) {
    uint16_t index = 0;
    bool is_ref = false;
    uint32_t column = 0;
    status = weft_vm_asm_read_register(assembler, 0, &index, &is_ref, &column);
    if (weft_status_is_ok(status)) {
      status = weft_vm_asm_add_operand(assembler, index, is_ref, column);
      ++*out_count;
    }
    if (weft_status_is_ok(status)) {
      weft_vm_asm_skip_spaces(assembler);
      if (assembler->position < assembler->line_length &&
          assembler->line[assembler->position] == ')') {
        ++assembler->position;
        break;
      }
      status = weft_vm_asm_expect_char(assembler, ',', "',' or ')'");
    }
  }
  return status;
}

// Checks |count| operands from |first| against |types| (the callee's
// arguments or results): count, then register file of each.
static weft_status_t weft_vm_asm_check_operands(
    const weft_vm_assembler_t* assembler, uint32_t line, uint32_t list_column,
    uint32_t first, uint32_t count, const uint8_t* types, uint32_t type_count,
    const char* what, const char* callee, const char* signature) {
  if (count != type_count) {
    return weft_vm_asm_error(assembler, line, list_column,
                             "expected %" PRIu32
                             " %s for %s %s, found %" PRIu32,
                             type_count, what, callee, signature, count);
  }
  for (uint32_t i = 0; i < count; ++i) {
    const bool want_ref = types[i] == WEFT_VM_TYPE_REF;
    const weft_vm_asm_operand_t* info =
        &assembler->operand_info.data[first + i];
    if (info->is_ref != want_ref) {
      return weft_vm_asm_error(
          assembler, line, info->column,
          "expected a %s register for %s %" PRIu32
          " of %s %s (%s), found "
          "'%c%u'",
          want_ref ? "ref (rN)" : "scalar (sN)", what, i + 1, callee, signature,
          weft_vm_value_type_name(types[i]), info->is_ref ? 'r' : 's',
          assembler->builder.operands[first + i]);
    }
  }
  return WEFT_OK;
}

// Reads "(args) -> (results)" into the operand list for call fixup |fixup|.
static weft_status_t weft_vm_asm_read_call_lists(
    weft_vm_assembler_t* assembler, weft_vm_asm_call_fixup_t* fixup) {
  fixup->operand_first = assembler->builder.operand_count;
  weft_status_t status = weft_vm_asm_read_register_list(
      assembler, &fixup->arg_count, &fixup->args_column);
  if (weft_status_is_ok(status)) {
    weft_vm_asm_skip_spaces(assembler);
    if (assembler->line_length - assembler->position >= 2 &&
        memcmp(assembler->line + assembler->position, "->", 2) == 0) {
      assembler->position += 2;
    } else {
      status = weft_vm_asm_expected(assembler, "'->' and the results");
    }
  }
  if (weft_status_is_ok(status)) {
    status = weft_vm_asm_read_register_list(assembler, &fixup->ret_count,
                                            &fixup->rets_column);
  }
  return status;
}

// The text a usage hint shows for each operand syntax character.
static const char* weft_vm_asm_operand_usage(char kind) {
  switch (kind) {
    case 's':
    case 'S': return "sN";
    case 'r': return "rN";
    case 'i': return "IMM";
    case 'k': return "CONST";
    case 'd': return "RODATA";
    case 'j': return "LABEL";
    case 'c': return "@FUNCTION(ARGS) -> (RESULTS)";
    case 'm': return "MODULE.FUNCTION(ARGS) -> (RESULTS)";
    case 't': return "(VALUES)";
    case 'e': return "CODE";
    case 'M': return "\"MESSAGE\"";
    default: return "?";
  }
}

// "add.i32 sN, sN, sN": how |info|'s operands are written.
static void weft_vm_asm_usage(const weft_vm_opcode_info_t* info, char* buffer,
                              size_t capacity) {
  const char* syntax = weft_vm_shape_syntax(info->shape);
  int used = snprintf(buffer, capacity, "'%s", info->name);
  for (size_t i = 0; syntax[i] && used > 0 && (size_t)used < capacity; ++i) {
    used += snprintf(buffer + used, capacity - (size_t)used, "%s%s",
                     i ? ", " : " ", weft_vm_asm_operand_usage(syntax[i]));
  }
  if (used > 0 && (size_t)used < capacity) {
    snprintf(buffer + used, capacity - (size_t)used, "'");
  }
}

// Reads an immediate ('i': 32 bits into imm; 'k': 64 bits into the
// constant pool, imm its index), an integer or a float as the opcode says.
static weft_status_t weft_vm_asm_read_immediate(
    weft_vm_assembler_t* assembler, const weft_vm_opcode_info_t* info,
    char kind, uint32_t* out_imm) {
  const uint32_t bits = kind == 'i' ? 32 : 64;
  const bool is_float = weft_vm_opcode_immediate_is_float(info);
  weft_vm_asm_span_t word;
  const size_t start = assembler->position;
  weft_vm_asm_read_number(assembler, &word);
  uint64_t value = 0;
  const bool ok =
      is_float
          ? weft_vm_text_parse_float(word.text, word.length, bits, &value)
          : weft_vm_text_parse_integer(word.text, word.length, bits, &value);
  if (!ok) {
    const char* expected =
        is_float ? (bits == 32 ? "a 32-bit float (1.5, -2e3, 0x1p-3, inf, nan)"
                               : "a 64-bit float (1.5, -2e3, 0x1p-3, inf, nan)")
        : bits == 32
            ? "a 32-bit integer (-2147483648 to 4294967295, decimal or 0x hex)"
            : "a 64-bit integer (-2^63 to 2^64-1, decimal or 0x hex)";
    if (word.length == 0) {
      assembler->position = start;
      return weft_vm_asm_expected(assembler, expected);
    }
    return weft_vm_asm_expected_span(assembler, &word, expected);
  }
  if (kind == 'i') {
    *out_imm = (uint32_t)value;
    return WEFT_OK;
  }
  return weft_vm_bytecode_builder_intern_constant(&assembler->builder, value,
                                                  out_imm);
}

// Reads the operands of one instruction as its shape's syntax says and
// appends it.
static weft_status_t weft_vm_asm_instruction(weft_vm_assembler_t* assembler,
                                             const weft_vm_asm_span_t* opcode) {
  uint32_t op = 0;
  if (!weft_vm_name_table_find(&assembler->opcodes, opcode->text,
                               opcode->length, &op)) {
    // A near miss (edit distance at most 2) is named.
    const char* best = NULL;
    size_t best_distance = 3;
    for (uint32_t i = 0; i < WEFT_VM_OP_COUNT_; ++i) {
      const char* name = kWeftVmOpcodes[i].name;
      const size_t name_length = strlen(name);
      if (opcode->length > name_length + 2 ||
          name_length > opcode->length + 2) {
        continue;
      }
      size_t row[32];
      if (name_length >= 32 || opcode->length >= 32) continue;
      for (size_t j = 0; j <= name_length; ++j) row[j] = j;
      for (size_t k = 1; k <= opcode->length; ++k) {
        size_t diagonal = row[0];
        row[0] = k;
        for (size_t j = 1; j <= name_length; ++j) {
          const size_t above = row[j];
          size_t cost = diagonal + (opcode->text[k - 1] != name[j - 1]);
          if (above + 1 < cost) cost = above + 1;
          if (row[j - 1] + 1 < cost) cost = row[j - 1] + 1;
          row[j] = cost;
          diagonal = above;
        }
      }
      if (row[name_length] < best_distance) {
        best_distance = row[name_length];
        best = name;
      }
    }
    char expected[96] = "an instruction, a label or 'end'";
    if (best) {
      snprintf(expected, sizeof(expected), "an opcode (did you mean '%s'?)",
               best);
    }
    return weft_vm_asm_error(
        assembler, opcode->line, opcode->column,
        "expected %s, found unknown opcode '%.*s'", expected,
        (int)(opcode->length > 64 ? 64 : opcode->length), opcode->text);
  }
  const weft_vm_opcode_info_t* info = &kWeftVmOpcodes[op];
  const char* syntax = weft_vm_shape_syntax(info->shape);
  char usage[128];
  weft_vm_asm_usage(info, usage, sizeof(usage));
  weft_vm_instruction_t instruction = {.op = (uint8_t)op};
  uint16_t fields[3] = {0, 0, 0};
  uint32_t field_count = 0;
  uint32_t list_first = UINT32_MAX;  // 'S' operands' first entry
  const uint32_t code_index = assembler->builder.code_count;
  weft_status_t status = WEFT_OK;
  for (size_t i = 0; weft_status_is_ok(status) && syntax[i]; ++i) {
    const char kind = syntax[i];
    if (i > 0) {
      char expected[256];
      snprintf(expected, sizeof(expected), "',' and operand %zu of %s", i + 1,
               usage);
      status = weft_vm_asm_expect_char(assembler, ',', expected);
    }
    if (!weft_status_is_ok(status)) break;
    weft_vm_asm_skip_spaces(assembler);
    if (i == 0 && weft_vm_asm_at_end(assembler)) {
      char expected[256];
      snprintf(expected, sizeof(expected), "the operands of %s", usage);
      status = weft_vm_asm_expected(assembler, expected);
      break;
    }
    switch (kind) {
      case 's':
      case 'r': {
        uint32_t column = 0;
        status = weft_vm_asm_read_register(
            assembler, kind, &fields[field_count++], NULL, &column);
        break;
      }
      case 'S': {
        uint16_t index = 0;
        uint32_t column = 0;
        status =
            weft_vm_asm_read_register(assembler, 's', &index, NULL, &column);
        if (weft_status_is_ok(status)) {
          if (list_first == UINT32_MAX) {
            list_first = assembler->builder.operand_count;
          }
          status = weft_vm_asm_add_operand(assembler, index, false, column);
        }
        instruction.imm = list_first;
        break;
      }
      case 'i':
      case 'k':
        status =
            weft_vm_asm_read_immediate(assembler, info, kind, &instruction.imm);
        break;
      case 'd':
      case 'j':
      case 'M': {
        weft_vm_asm_skip_spaces(assembler);
        if (kind == 'M' && assembler->position < assembler->line_length &&
            assembler->line[assembler->position] == '"') {
          status = weft_vm_asm_read_string(assembler, false);
          const weft_vm_asm_message_t message = {code_index,
                                                 assembler->message_bytes.count,
                                                 assembler->scratch.count};
          if (weft_status_is_ok(status)) {
            status = weft_vm_array_reserve(
                assembler->allocator, (void**)&assembler->message_bytes.data,
                &assembler->message_bytes.capacity,
                assembler->message_bytes.count, assembler->scratch.count, 1,
                "message bytes");
          }
          if (weft_status_is_ok(status)) {
            if (assembler->scratch.count) {
              memcpy(assembler->message_bytes.data +
                         assembler->message_bytes.count,
                     assembler->scratch.data, assembler->scratch.count);
            }
            assembler->message_bytes.count += assembler->scratch.count;
            status = WEFT_VM_ASM_PUSH(assembler, assembler->messages, message);
          }
          break;
        }
        weft_vm_asm_span_t name;
        status = weft_vm_asm_read_name(
            assembler,
            kind == 'j'   ? "a label name"
            : kind == 'd' ? "a rodata segment name"
                          : "a message (\"...\") or a rodata segment name",
            true, &name);
        if (weft_status_is_ok(status) && kind == 'j') {
          status =
              WEFT_VM_ASM_PUSH(assembler, assembler->label_fixups,
                               ((weft_vm_asm_label_fixup_t){code_index, name}));
        } else if (weft_status_is_ok(status)) {
          status = WEFT_VM_ASM_PUSH(
              assembler, assembler->rodata_fixups,
              ((weft_vm_asm_rodata_fixup_t){code_index, name}));
        }
        break;
      }
      case 'c':
      case 'm': {
        weft_vm_asm_call_fixup_t fixup = {.code_index = code_index,
                                          .is_import = kind == 'm'};
        if (kind == 'c') {
          const uint32_t column = (uint32_t)assembler->position + 1;
          status = weft_vm_asm_expect_char(assembler, '@',
                                           "'@' and a function name");
          if (weft_status_is_ok(status)) {
            status = weft_vm_asm_read_name(assembler, "a function name", true,
                                           &fixup.callee);
          }
          fixup.callee.column = column;
        } else {
          status = weft_vm_asm_read_name(
              assembler, "an imported MODULE.FUNCTION", true, &fixup.callee);
        }
        if (weft_status_is_ok(status)) {
          status = weft_vm_asm_read_call_lists(assembler, &fixup);
        }
        if (weft_status_is_ok(status)) {
          instruction.imm = fixup.operand_first;
          status = WEFT_VM_ASM_PUSH(assembler, assembler->call_fixups, fixup);
        }
        break;
      }
      case 't': {
        const uint32_t first = assembler->builder.operand_count;
        uint32_t count = 0;
        uint32_t column = 0;
        status = weft_vm_asm_read_register_list(assembler, &count, &column);
        if (weft_status_is_ok(status)) {
          char callee[96];
          snprintf(callee, sizeof(callee), "'@%.*s'",
                   (int)(assembler->function_name.length > 64
                             ? 64
                             : assembler->function_name.length),
                   assembler->function_name.text);
          const weft_vm_parsed_signature_t* signature = &assembler->signature;
          status = weft_vm_asm_check_operands(
              assembler, assembler->line_number, column, first, count,
              signature->types + signature->arg_count, signature->ret_count,
              "results", callee, signature->canonical);
        }
        instruction.imm = first;
        break;
      }
      case 'e': {
        weft_vm_asm_span_t word;
        const size_t start = assembler->position;
        weft_vm_asm_read_word(assembler, &word);
        uint32_t code = 0;
        if (!weft_vm_text_parse_status_code(word.text, word.length, &code)) {
          assembler->position = start;
          status = weft_vm_asm_expected(
              assembler,
              "a status code (a name such as INVALID_ARGUMENT, or 1 to 17)");
        } else {
          fields[field_count++] = (uint16_t)code;
        }
        break;
      }
      default:
        status = WEFT_STATUS(INTERNAL, "shape %d has operand kind '%c'",
                             (int)info->shape, kind);
        break;
    }
  }
  if (weft_status_is_ok(status)) {
    status = weft_vm_asm_expect_end(assembler, usage);
  }
  if (weft_status_is_ok(status)) {
    instruction.a = fields[0];
    // Shapes with a 32-bit immediate use at most field a; the others b, c.
    if (field_count > 1) {
      instruction.b = fields[1];
      instruction.c = fields[2];
    }
    status = weft_vm_bytecode_builder_add_instruction(
        &assembler->builder, instruction, assembler->line_number);
    assembler->last_column = opcode->column;
    assembler->last_opcode = *opcode;
  }
  return status;
}

//===----------------------------------------------------------------------===//
// Items
//===----------------------------------------------------------------------===//

// Adds |span| -> |value| to |table|; "expected a new ..." when present.
static weft_status_t weft_vm_asm_define(weft_vm_assembler_t* assembler,
                                        weft_vm_name_table_t* table,
                                        const weft_vm_asm_span_t* span,
                                        uint32_t value, const char* what) {
  bool inserted = false;
  weft_status_t status = weft_vm_name_table_insert(
      table, span->text, span->length, value, &inserted, NULL);
  if (weft_status_is_ok(status) && !inserted) {
    char expected[96];
    snprintf(expected, sizeof(expected), "a new %s name (this one is taken)",
             what);
    status = weft_vm_asm_expected_span(assembler, span, expected);
  }
  return status;
}

// Adds a string to the module's table.
static weft_status_t weft_vm_asm_string(weft_vm_assembler_t* assembler,
                                        const char* text, size_t length,
                                        uint32_t* out_string) {
  return weft_vm_bytecode_builder_add_string(&assembler->builder, text, length,
                                             out_string);
}

// module NAME
static weft_status_t weft_vm_asm_module(weft_vm_assembler_t* assembler,
                                        const weft_vm_asm_span_t* keyword) {
  if (assembler->module_line) {
    char expected[96];
    snprintf(expected, sizeof(expected),
             "one 'module' line (the first is line %" PRIu32 ")",
             assembler->module_line);
    return weft_vm_asm_expected_span(assembler, keyword, expected);
  }
  weft_vm_asm_span_t name;
  weft_status_t status = weft_vm_asm_read_name(
      assembler, "a module name ([A-Za-z_][A-Za-z0-9_]*)", false, &name);
  if (weft_status_is_ok(status)) {
    status = weft_vm_asm_expect_end(assembler, "'module NAME'");
  }
  if (weft_status_is_ok(status)) {
    assembler->module_line = assembler->line_number;
    status = weft_vm_asm_string(assembler, name.text, name.length,
                                &assembler->builder.name);
  }
  return status;
}

// import MODULE.FUNCTION SIGNATURE
static weft_status_t weft_vm_asm_import(weft_vm_assembler_t* assembler) {
  weft_vm_asm_span_t name;
  weft_status_t status =
      weft_vm_asm_read_name(assembler, "MODULE.FUNCTION", true, &name);
  const char* dot =
      weft_status_is_ok(status) ? memchr(name.text, '.', name.length) : NULL;
  // The module is the first dotted part; the function, the rest, must be
  // a name of its own.
  if (weft_status_is_ok(status) &&
      (!dot ||
       !weft_vm_name_is_identifier(
           dot + 1, name.length - (size_t)(dot - name.text) - 1, true))) {
    status = weft_vm_asm_expected_span(
        assembler, &name,
        "MODULE.FUNCTION (a module name, '.', a function name)");
  }
  weft_vm_parsed_signature_t signature;
  if (weft_status_is_ok(status)) {
    status = weft_vm_asm_read_signature(assembler, &signature);
  }
  if (weft_status_is_ok(status)) {
    status = weft_vm_asm_expect_end(assembler, "the import's signature");
  }
  if (weft_status_is_ok(status) &&
      assembler->builder.import_count >= WEFT_VM_ASM_MAX_CALLEES) {
    status = weft_vm_asm_expected_span(assembler, &name,
                                       "at most 65536 imports in a module");
  }
  if (weft_status_is_ok(status)) {
    status = weft_vm_asm_define(assembler, &assembler->imports, &name,
                                assembler->builder.import_count, "import");
  }
  weft_vm_builder_import_t import_entry;
  if (weft_status_is_ok(status)) {
    const size_t module_length = (size_t)(dot - name.text);
    status = weft_vm_asm_string(assembler, name.text, module_length,
                                &import_entry.module_name);
    if (weft_status_is_ok(status)) {
      status = weft_vm_asm_string(assembler, dot + 1,
                                  name.length - module_length - 1,
                                  &import_entry.function_name);
    }
  }
  if (weft_status_is_ok(status)) {
    status = weft_vm_bytecode_builder_add_signature(
        &assembler->builder, &signature, &import_entry.signature);
  }
  if (weft_status_is_ok(status)) {
    status = weft_vm_bytecode_builder_add_import(&assembler->builder,
                                                 &import_entry, NULL);
  }
  return status;
}

// rodata NAME "string" | rodata NAME hex "00 01"
static weft_status_t weft_vm_asm_rodata(weft_vm_assembler_t* assembler) {
  weft_vm_asm_span_t name;
  weft_status_t status =
      weft_vm_asm_read_name(assembler, "a rodata segment name", true, &name);
  bool hex = false;
  if (weft_status_is_ok(status)) {
    weft_vm_asm_skip_spaces(assembler);
    const size_t start = assembler->position;
    weft_vm_asm_span_t word;
    if (weft_vm_asm_read_word(assembler, &word)) {
      if (weft_vm_asm_span_is(&word, "hex")) {
        hex = true;
      } else {
        assembler->position = start;
        status = weft_vm_asm_expected(assembler,
                                      "a string (\"...\") or hex \"00 01\"");
      }
    }
  }
  if (weft_status_is_ok(status)) {
    status = weft_vm_asm_read_string(assembler, hex);
  }
  if (weft_status_is_ok(status)) {
    status = weft_vm_asm_expect_end(assembler, "the rodata string");
  }
  if (weft_status_is_ok(status)) {
    status =
        weft_vm_asm_define(assembler, &assembler->rodata, &name,
                           assembler->builder.rodata_count, "rodata segment");
  }
  uint32_t string = 0;
  if (weft_status_is_ok(status)) {
    status = weft_vm_asm_string(assembler, name.text, name.length, &string);
  }
  if (weft_status_is_ok(status)) {
    status = weft_vm_bytecode_builder_add_rodata(
        &assembler->builder, assembler->scratch.data, assembler->scratch.count,
        string, NULL);
  }
  return status;
}

// func @NAME SIGNATURE [export]
static weft_status_t weft_vm_asm_func(weft_vm_assembler_t* assembler) {
  const uint32_t at_column = (uint32_t)assembler->position + 1;
  weft_vm_asm_skip_spaces(assembler);
  weft_status_t status =
      weft_vm_asm_expect_char(assembler, '@', "'@' and a function name");
  weft_vm_asm_span_t name = {0};
  if (weft_status_is_ok(status)) {
    status = weft_vm_asm_read_name(assembler, "a function name", true, &name);
  }
  if (weft_status_is_ok(status)) {
    status = weft_vm_asm_read_signature(assembler, &assembler->signature);
  }
  weft_vm_function_flags_t flags = WEFT_VM_FUNCTION_FLAG_NONE;
  if (weft_status_is_ok(status)) {
    weft_vm_asm_skip_spaces(assembler);
    const size_t start = assembler->position;
    weft_vm_asm_span_t word;
    if (weft_vm_asm_read_word(assembler, &word) &&
        weft_vm_asm_span_is(&word, "export")) {
      flags |= WEFT_VM_FUNCTION_FLAG_EXPORT;
    } else {
      assembler->position = start;
    }
    status = weft_vm_asm_expect_end(assembler, "the signature (or 'export')");
  }
  if (weft_status_is_ok(status) &&
      assembler->builder.function_count >= WEFT_VM_ASM_MAX_CALLEES) {
    status = weft_vm_asm_expected_span(assembler, &name,
                                       "at most 65536 functions in a module");
  }
  if (weft_status_is_ok(status)) {
    status = weft_vm_asm_define(assembler, &assembler->functions, &name,
                                assembler->builder.function_count, "function");
  }
  weft_vm_builder_function_t* function = &assembler->function;
  memset(function, 0, sizeof(*function));
  if (weft_status_is_ok(status)) {
    status =
        weft_vm_asm_string(assembler, name.text, name.length, &function->name);
  }
  if (weft_status_is_ok(status)) {
    status = weft_vm_bytecode_builder_add_signature(
        &assembler->builder, &assembler->signature, &function->signature);
  }
  if (weft_status_is_ok(status)) {
    function->flags = flags;
    function->code_offset = assembler->builder.code_count;
    assembler->in_function = true;
    assembler->function_name = name;
    assembler->function_name.column = at_column;
    assembler->scalar_count = 0;
    assembler->ref_count = 0;
    for (uint32_t i = 0; i < assembler->signature.arg_count; ++i) {
      if (assembler->signature.types[i] == WEFT_VM_TYPE_REF) {
        ++assembler->ref_count;
      } else {
        ++assembler->scalar_count;
      }
    }
    assembler->label_fixups.count = 0;
    weft_vm_name_table_deinitialize(&assembler->labels);
    weft_vm_name_table_initialize(assembler->allocator, &assembler->labels);
    weft_vm_asm_decls_begin(&assembler->decls, &assembler->builder,
                            &assembler->signature, name.text, name.length);
  }
  return status;
}

// True for the instructions after which control never falls through.
static bool weft_vm_asm_is_terminator(uint8_t op) {
  return op == WEFT_VM_OP_BR || op == WEFT_VM_OP_RET || op == WEFT_VM_OP_FAIL;
}

// end: resolves the function's labels and adds it to the module.
static weft_status_t weft_vm_asm_end(weft_vm_assembler_t* assembler,
                                     const weft_vm_asm_span_t* keyword) {
  weft_vm_builder_function_t* function = &assembler->function;
  weft_status_t status = weft_vm_asm_expect_end(assembler, "'end'");
  function->code_count = assembler->builder.code_count - function->code_offset;
  char name[96];
  snprintf(name, sizeof(name), "'@%.*s'",
           (int)(assembler->function_name.length > 64
                     ? 64
                     : assembler->function_name.length),
           assembler->function_name.text);
  if (weft_status_is_ok(status) && function->code_count == 0) {
    char expected[256];
    snprintf(expected, sizeof(expected), "an instruction in function %s", name);
    status = weft_vm_asm_expected_span(assembler, keyword, expected);
  }
  if (weft_status_is_ok(status) &&
      !weft_vm_asm_is_terminator(
          assembler->builder.code[assembler->builder.code_count - 1].op)) {
    char expected[256];
    snprintf(expected, sizeof(expected),
             "br, ret or fail as the last instruction of %s (control would "
             "fall off its end)",
             name);
    status =
        weft_vm_asm_expected_span(assembler, &assembler->last_opcode, expected);
  }
  for (uint32_t i = 0;
       weft_status_is_ok(status) && i < assembler->label_fixups.count; ++i) {
    const weft_vm_asm_label_fixup_t* fixup = &assembler->label_fixups.data[i];
    uint32_t target = 0;
    if (!weft_vm_name_table_find(&assembler->labels, fixup->label.text,
                                 fixup->label.length, &target)) {
      char expected[256];
      snprintf(expected, sizeof(expected), "a label defined in %s", name);
      status = weft_vm_asm_expected_span(assembler, &fixup->label, expected);
    } else if (target >= function->code_count) {
      char expected[256];
      snprintf(expected, sizeof(expected),
               "a label followed by an instruction (this one is at the end "
               "of %s)",
               name);
      status = weft_vm_asm_expected_span(assembler, &fixup->label, expected);
    } else {
      assembler->builder.code[fixup->code_index].imm = target;
    }
  }
  if (weft_status_is_ok(status)) {
    function->scalar_count = (uint16_t)assembler->scalar_count;
    function->ref_count = (uint16_t)assembler->ref_count;
    status = weft_vm_bytecode_builder_add_function(&assembler->builder,
                                                   function, NULL);
    assembler->in_function = false;
  }
  return status;
}

// NAME: inside a function.
static weft_status_t weft_vm_asm_label(weft_vm_assembler_t* assembler,
                                       const weft_vm_asm_span_t* name) {
  if (!weft_vm_name_is_identifier(name->text, name->length, true)) {
    return weft_vm_asm_expected_span(assembler, name, "a label name");
  }
  return weft_vm_asm_define(
      assembler, &assembler->labels, name,
      assembler->builder.code_count - assembler->function.code_offset, "label");
}

// One line of the file.
static weft_status_t weft_vm_asm_line(weft_vm_assembler_t* assembler) {
  weft_vm_asm_skip_spaces(assembler);
  if (weft_vm_asm_at_end(assembler)) return WEFT_OK;
  weft_vm_asm_span_t word;
  if (!weft_vm_asm_read_word(assembler, &word)) {
    return weft_vm_asm_expected(assembler,
                                assembler->in_function
                                    ? "an instruction, a label or 'end'"
                                    : "'module', 'import', 'rodata' or 'func'");
  }
  const bool is_label = assembler->position < assembler->line_length &&
                        assembler->line[assembler->position] == ':';
  if (assembler->in_function) {
    const bool is_decl = !is_label && (weft_vm_asm_span_is(&word, "arg") ||
                                       weft_vm_asm_span_is(&word, "result"));
    const weft_vm_asm_source_line_t line = {
        assembler->line, assembler->line_length, assembler->line_number};
    const size_t word_offset = word.column - 1;
    if (is_decl && assembler->decls.open) {
      return weft_vm_asm_decls_line(&assembler->decls, &assembler->builder,
                                    &line, word_offset, assembler->position,
                                    weft_vm_asm_span_is(&word, "result"));
    }
    if (is_decl) {
      return weft_vm_asm_expected_span(
          assembler, &word,
          "an instruction, a label or 'end' ('arg' and 'result' lines go "
          "before the function's first instruction)");
    }
    weft_status_t ended = weft_vm_asm_decls_end(
        &assembler->decls, &line, word_offset, &assembler->function);
    if (!weft_status_is_ok(ended)) return ended;
    if (is_label) {
      ++assembler->position;
      weft_status_t status = weft_vm_asm_label(assembler, &word);
      if (!weft_status_is_ok(status)) return status;
      // An instruction may follow the label on its line.
      weft_vm_asm_skip_spaces(assembler);
      if (weft_vm_asm_at_end(assembler)) return WEFT_OK;
      if (!weft_vm_asm_read_word(assembler, &word)) {
        return weft_vm_asm_expected(assembler, "an instruction or end of line");
      }
    }
    if (weft_vm_asm_span_is(&word, "end")) {
      return weft_vm_asm_end(assembler, &word);
    }
    return weft_vm_asm_instruction(assembler, &word);
  }
  if (is_label || !(weft_vm_asm_span_is(&word, "module") ||
                    weft_vm_asm_span_is(&word, "import") ||
                    weft_vm_asm_span_is(&word, "rodata") ||
                    weft_vm_asm_span_is(&word, "func"))) {
    return weft_vm_asm_expected_span(
        assembler, &word,
        assembler->module_line
            ? "'import', 'rodata' or 'func' (instructions go inside "
              "func ... end)"
            : "'module NAME' first");
  }
  if (weft_vm_asm_span_is(&word, "module")) {
    return weft_vm_asm_module(assembler, &word);
  }
  if (!assembler->module_line) {
    return weft_vm_asm_expected_span(assembler, &word,
                                     "'module NAME' before any other item");
  }
  if (weft_vm_asm_span_is(&word, "import"))
    return weft_vm_asm_import(assembler);
  if (weft_vm_asm_span_is(&word, "rodata"))
    return weft_vm_asm_rodata(assembler);
  return weft_vm_asm_func(assembler);
}

// Moves to the next line; false at the end of the text.
static bool weft_vm_asm_next_line(weft_vm_assembler_t* assembler) {
  if (assembler->next_line > assembler->length) return false;
  const char* start = assembler->text + assembler->next_line;
  const size_t left = assembler->length - assembler->next_line;
  const char* newline = memchr(start, '\n', left);
  size_t length = newline ? (size_t)(newline - start) : left;
  assembler->next_line += length + 1;
  if (length > 0 && start[length - 1] == '\r') --length;
  assembler->line = start;
  assembler->line_length = length;
  assembler->position = 0;
  if (assembler->line_number < UINT32_MAX) ++assembler->line_number;
  return true;
}

// Resolves calls, rodata names and fail messages once every item is known.
static weft_status_t weft_vm_asm_resolve(weft_vm_assembler_t* assembler) {
  weft_vm_bytecode_builder_t* builder = &assembler->builder;
  weft_status_t status = WEFT_OK;
  for (uint32_t i = 0;
       weft_status_is_ok(status) && i < assembler->call_fixups.count; ++i) {
    const weft_vm_asm_call_fixup_t* fixup = &assembler->call_fixups.data[i];
    uint32_t index = 0;
    const weft_vm_asm_span_t* callee = &fixup->callee;
    char name[96];
    snprintf(name, sizeof(name), "'%s%.*s'", fixup->is_import ? "" : "@",
             (int)(callee->length > 64 ? 64 : callee->length), callee->text);
    if (!weft_vm_name_table_find(
            fixup->is_import ? &assembler->imports : &assembler->functions,
            callee->text, callee->length, &index)) {
      status = weft_vm_asm_error(
          assembler, callee->line, callee->column, "expected %s, found %s",
          fixup->is_import ? "an imported function (import MODULE.FUNCTION "
                             "SIGNATURE)"
                           : "a function defined in this module",
          name);
      break;
    }
    const weft_vm_builder_signature_t signature =
        fixup->is_import ? builder->imports[index].signature
                         : builder->functions[index].signature;
    const uint8_t* types = builder->types + signature.types;
    char text[1024];
    weft_vm_signature_t view = {signature.arg_count, signature.ret_count, types,
                                signature.text == WEFT_VM_BUILDER_NO_STRING
                                    ? NULL
                                    : builder->strings + signature.text};
    weft_vm_signature_canonical_text(view, text, sizeof(text));
    status = weft_vm_asm_check_operands(
        assembler, callee->line, fixup->args_column, fixup->operand_first,
        fixup->arg_count, types, signature.arg_count, "arguments", name, text);
    if (weft_status_is_ok(status)) {
      status = weft_vm_asm_check_operands(
          assembler, callee->line, fixup->rets_column,
          fixup->operand_first + fixup->arg_count, fixup->ret_count,
          types + signature.arg_count, signature.ret_count, "results", name,
          text);
    }
    if (weft_status_is_ok(status)) {
      builder->code[fixup->code_index].a = (uint16_t)index;
    }
  }
  for (uint32_t i = 0;
       weft_status_is_ok(status) && i < assembler->rodata_fixups.count; ++i) {
    const weft_vm_asm_rodata_fixup_t* fixup = &assembler->rodata_fixups.data[i];
    uint32_t index = 0;
    if (!weft_vm_name_table_find(&assembler->rodata, fixup->name.text,
                                 fixup->name.length, &index)) {
      status = weft_vm_asm_expected_span(
          assembler, &fixup->name,
          "a rodata segment name (rodata NAME \"...\")");
    } else {
      builder->code[fixup->code_index].imm = index;
    }
  }
  // Messages become anonymous segments after the named ones.
  for (uint32_t i = 0;
       weft_status_is_ok(status) && i < assembler->messages.count; ++i) {
    const weft_vm_asm_message_t* message = &assembler->messages.data[i];
    uint32_t index = 0;
    status = weft_vm_bytecode_builder_add_rodata(
        builder,
        message->length ? assembler->message_bytes.data + message->offset
                        : NULL,
        message->length, WEFT_VM_BUILDER_NO_STRING, &index);
    if (weft_status_is_ok(status))
      builder->code[message->code_index].imm = index;
  }
  return status;
}

static weft_status_t weft_vm_asm_initialize(weft_vm_assembler_t* assembler) {
  weft_vm_bytecode_builder_initialize(assembler->allocator,
                                      &assembler->builder);
  weft_vm_asm_decls_initialize(assembler->allocator, assembler->source_name,
                               &assembler->decls);
  weft_vm_name_table_t* tables[] = {&assembler->opcodes, &assembler->functions,
                                    &assembler->imports, &assembler->rodata,
                                    &assembler->labels};
  for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); ++i) {
    weft_vm_name_table_initialize(assembler->allocator, tables[i]);
  }
  weft_status_t status = weft_vm_asm_string(assembler, assembler->source_name,
                                            strlen(assembler->source_name),
                                            &assembler->builder.source_name);
  for (uint32_t op = 0; weft_status_is_ok(status) && op < WEFT_VM_OP_COUNT_;
       ++op) {
    bool inserted = false;
    status = weft_vm_name_table_insert(
        &assembler->opcodes, kWeftVmOpcodes[op].name,
        strlen(kWeftVmOpcodes[op].name), op, &inserted, NULL);
  }
  return status;
}

static void weft_vm_asm_deinitialize(weft_vm_assembler_t* assembler) {
  weft_vm_bytecode_builder_deinitialize(&assembler->builder);
  weft_vm_asm_decls_deinitialize(&assembler->decls);
  weft_vm_name_table_t* tables[] = {&assembler->opcodes, &assembler->functions,
                                    &assembler->imports, &assembler->rodata,
                                    &assembler->labels};
  for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); ++i) {
    weft_vm_name_table_deinitialize(tables[i]);
  }
  void* arrays[] = {
      assembler->label_fixups.data,  assembler->call_fixups.data,
      assembler->rodata_fixups.data, assembler->messages.data,
      assembler->operand_info.data,  assembler->message_bytes.data,
      assembler->scratch.data};
  for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); ++i) {
    weft_allocator_free(assembler->allocator, arrays[i]);
  }
}

weft_status_t weft_vm_assemble(const char* source_name, const char* text,
                               size_t length, weft_allocator_t allocator,
                               weft_vm_bytecode_t** out_bytecode) {
  if (!out_bytecode) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "weft_vm_assemble: out_bytecode is NULL");
  }
  *out_bytecode = NULL;
  if (!text && length) {
    return WEFT_STATUS(INVALID_ARGUMENT, "weft_vm_assemble: text is NULL");
  }
  weft_vm_assembler_t* assembler = NULL;
  weft_status_t status =
      weft_allocator_malloc(allocator, sizeof(*assembler), (void**)&assembler);
  if (!weft_status_is_ok(status)) return status;
  assembler->allocator = allocator;
  assembler->source_name = source_name ? source_name : "<text>";
  assembler->text = text ? text : "";
  assembler->length = text ? length : 0;
  status = weft_vm_asm_initialize(assembler);
  while (weft_status_is_ok(status) && weft_vm_asm_next_line(assembler)) {
    status = weft_vm_asm_line(assembler);
  }
  if (weft_status_is_ok(status)) {
    // The end of the file: just after the last line.
    assembler->position = assembler->line_length;
    if (assembler->line_number == 0) assembler->line_number = 1;
    if (assembler->in_function) {
      char expected[256];
      snprintf(expected, sizeof(expected),
               "'end' to close function '@%.*s' (line %" PRIu32 ")",
               (int)(assembler->function_name.length > 64
                         ? 64
                         : assembler->function_name.length),
               assembler->function_name.text, assembler->function_name.line);
      status = weft_vm_asm_error(assembler, assembler->line_number,
                                 (uint32_t)assembler->position + 1,
                                 "expected %s, found end of file", expected);
    } else if (!assembler->module_line) {
      status = weft_vm_asm_error(assembler, assembler->line_number,
                                 (uint32_t)assembler->position + 1,
                                 "expected 'module NAME', found end of file");
    }
  }
  if (weft_status_is_ok(status)) status = weft_vm_asm_resolve(assembler);
  if (weft_status_is_ok(status)) {
    status = weft_vm_bytecode_builder_finish(&assembler->builder, out_bytecode);
  }
  weft_vm_asm_deinitialize(assembler);
  weft_allocator_free(allocator, assembler);
  return status;
}
