// weft VM: the assembler's declaration lines (see assembler_decls.h).
#include "vm/assembler_decls.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "vm/decl_text.h"
#include "vm/text_syntax.h"

// Value names map to their position: an argument's index, or a result's
// plus this.
#define WEFT_VM_ASM_DECLS_RESULT 0x10000u

void weft_vm_asm_decls_initialize(weft_allocator_t allocator,
                                  const char* source_name,
                                  weft_vm_asm_decls_t* out_decls) {
  memset(out_decls, 0, sizeof(*out_decls));
  out_decls->allocator = allocator;
  out_decls->source_name = source_name;
  weft_vm_name_table_initialize(allocator, &out_decls->names);
  weft_vm_name_table_initialize(allocator, &out_decls->symbols);
}

void weft_vm_asm_decls_deinitialize(weft_vm_asm_decls_t* decls) {
  weft_vm_name_table_deinitialize(&decls->names);
  weft_vm_name_table_deinitialize(&decls->symbols);
}

void weft_vm_asm_decls_begin(weft_vm_asm_decls_t* decls,
                             const weft_vm_bytecode_builder_t* builder,
                             const weft_vm_parsed_signature_t* signature,
                             const char* name, size_t name_length) {
  weft_vm_asm_decls_deinitialize(decls);
  weft_vm_name_table_initialize(decls->allocator, &decls->names);
  weft_vm_name_table_initialize(decls->allocator, &decls->symbols);
  decls->open = true;
  decls->signature = signature;
  snprintf(decls->function, sizeof(decls->function), "'@%.*s'",
           (int)(name_length > 64 ? 64 : name_length), name);
  decls->arg_count = 0;
  decls->result_count = 0;
  decls->decl_first = builder->decl_count;
  decls->symbol_first = builder->symbol_count;
}

// INVALID_ARGUMENT "SOURCE:LINE:COLUMN: expected <format>, found F" at
// |offset| of |line|: F is |found_length| bytes there in quotes, or (when
// |found_length| is 0) what the assembler says is there.
static weft_status_t weft_vm_asm_decls_expected(
    const weft_vm_asm_decls_t* decls, const weft_vm_asm_source_line_t* line,
    size_t offset, size_t found_length, const char* format, ...)
    __attribute__((format(printf, 5, 6)));

static weft_status_t weft_vm_asm_decls_expected(
    const weft_vm_asm_decls_t* decls, const weft_vm_asm_source_line_t* line,
    size_t offset, size_t found_length, const char* format, ...) {
  char expected[512];
  va_list args;
  va_start(args, format);
  vsnprintf(expected, sizeof(expected), format, args);
  va_end(args);
  char found[72];
  if (found_length) {
    snprintf(found, sizeof(found), "'%.*s'",
             (int)(found_length > 64 ? 64 : found_length), line->text + offset);
  } else {
    weft_vm_text_describe(line->text, line->length, offset, found,
                          sizeof(found));
  }
  return WEFT_STATUS(INVALID_ARGUMENT,
                     "%s:%" PRIu32 ":%zu: expected %s, found %s",
                     decls->source_name, line->number, offset + 1, expected,
                     found);
}

// Writes the signature type of value |position| ("i32", "r<hal.buffer>?").
static void weft_vm_asm_decls_value_type(
    const weft_vm_parsed_signature_t* signature, uint32_t position,
    char* buffer, size_t capacity) {
  const uint8_t type = signature->types[position];
  if (type != WEFT_VM_TYPE_REF) {
    snprintf(buffer, capacity, "%s",
             weft_vm_value_type_name((weft_vm_value_type_t)type));
    return;
  }
  const uint16_t length = signature->ref_name_length[position];
  snprintf(buffer, capacity, "r%s%.*s%s%s", length ? "<" : "", (int)length,
           signature->canonical + signature->ref_name_offset[position],
           length ? ">" : "", signature->nullable[position] ? "?" : "");
}

// "expected 'arg' for argument N of '@f' (...)": the declarations of
// |is_result|'s list stopped after |declared| of its values.
static weft_status_t weft_vm_asm_decls_incomplete(
    const weft_vm_asm_decls_t* decls, const weft_vm_asm_source_line_t* line,
    size_t offset, bool is_result, uint32_t declared) {
  return weft_vm_asm_decls_expected(
      decls, line, offset, 0,
      "'%s' for %s %" PRIu32 " of %s %s (declare every %s or none)",
      is_result ? "result" : "arg", is_result ? "result" : "argument",
      declared + 1, decls->function, decls->signature->canonical,
      is_result ? "result" : "argument");
}

// Interns the symbol dimensions of |parsed| (written on |line|): each new
// name becomes the function's next symbol. Sets each dimension's |size|
// field to its symbol index.
static weft_status_t weft_vm_asm_decls_symbols(
    weft_vm_asm_decls_t* decls, weft_vm_bytecode_builder_t* builder,
    const weft_vm_asm_source_line_t* line, weft_vm_parsed_decl_t* parsed) {
  weft_status_t status = WEFT_OK;
  for (uint32_t i = 0; weft_status_is_ok(status) && i < parsed->rank; ++i) {
    if (parsed->dims[i].kind != WEFT_VM_DIM_SYMBOL) continue;
    const char* name = line->text + parsed->dims[i].offset;
    const size_t length = parsed->dims[i].length;
    uint32_t index = 0;
    if (!weft_vm_name_table_find(&decls->symbols, name, length, &index)) {
      index = (uint32_t)decls->symbols.count;
      uint32_t string = 0;
      if (index == WEFT_VM_TENSOR_MAX_SYMBOLS) {
        return weft_vm_asm_decls_expected(
            decls, line, parsed->dims[i].offset, length,
            "at most %d symbols in %s", WEFT_VM_TENSOR_MAX_SYMBOLS,
            decls->function);
      }
      status =
          weft_vm_bytecode_builder_add_string(builder, name, length, &string);
      if (weft_status_is_ok(status)) {
        status = weft_vm_bytecode_builder_add_symbol(builder, string, NULL);
      }
      bool inserted = false;
      if (weft_status_is_ok(status)) {
        status = weft_vm_name_table_insert(&decls->symbols, name, length,
                                           index, &inserted, NULL);
      }
    }
    parsed->dims[i].size = index;
  }
  return status;
}

weft_status_t weft_vm_asm_decls_line(weft_vm_asm_decls_t* decls,
                                     weft_vm_bytecode_builder_t* builder,
                                     const weft_vm_asm_source_line_t* line,
                                     size_t keyword_offset, size_t position,
                                     bool is_result) {
  const weft_vm_parsed_signature_t* signature = decls->signature;
  const char* keyword = is_result ? "result" : "arg";
  const char* role = is_result ? "result" : "argument";
  if (!is_result && decls->result_count) {
    return weft_vm_asm_decls_expected(
        decls, line, keyword_offset, 0,
        "'result' or an instruction ('arg' lines come before 'result' "
        "lines)");
  }
  if (is_result && decls->arg_count &&
      decls->arg_count < signature->arg_count) {
    return weft_vm_asm_decls_incomplete(decls, line, keyword_offset, false,
                                        decls->arg_count);
  }
  const uint32_t count =
      is_result ? signature->ret_count : signature->arg_count;
  uint32_t* declared = is_result ? &decls->result_count : &decls->arg_count;
  if (*declared == count) {
    return weft_vm_asm_decls_expected(
        decls, line, keyword_offset, 0, "%s (%s has %" PRIu32 " %ss%s)",
        is_result ? "an instruction" : "'result' or an instruction",
        decls->function, count, role, count ? ", each declared" : "");
  }
  weft_vm_parsed_decl_t parsed;
  weft_vm_decl_syntax_error_t error;
  if (!weft_vm_decl_parse(line->text, line->length, position, &parsed,
                          &error)) {
    return weft_vm_asm_decls_expected(decls, line, error.offset,
                                      error.found_length, "%s",
                                      error.expected);
  }
  const uint32_t value = (is_result ? signature->arg_count : 0) + *declared;
  const char* name = line->text + parsed.name_offset;
  if (parsed.colon_offset != SIZE_MAX &&
      !weft_vm_decl_allows_tensor(
          signature->types[value],
          signature->canonical + signature->ref_name_offset[value],
          signature->ref_name_length[value])) {
    char type[96];
    weft_vm_asm_decls_value_type(signature, value, type, sizeof(type));
    return weft_vm_asm_decls_expected(
        decls, line, parsed.colon_offset, 0,
        "end of line after '%s %.*s' (%s %" PRIu32
        " of %s is %s: only r<hal.buffer_view> and r values take a tensor "
        "type)",
        keyword, (int)(parsed.name_length > 64 ? 64 : parsed.name_length),
        name, role, *declared + 1, decls->function, type);
  }
  bool inserted = false;
  uint32_t existing = 0;
  weft_status_t status = weft_vm_name_table_insert(
      &decls->names, name, parsed.name_length,
      is_result ? WEFT_VM_ASM_DECLS_RESULT + *declared : *declared, &inserted,
      &existing);
  if (weft_status_is_ok(status) && !inserted) {
    const bool other_is_result = existing >= WEFT_VM_ASM_DECLS_RESULT;
    return weft_vm_asm_decls_expected(
        decls, line, parsed.name_offset, parsed.name_length,
        "a new value name (%s %" PRIu32 " of %s has this one)",
        other_is_result ? "result" : "argument",
        (other_is_result ? existing - WEFT_VM_ASM_DECLS_RESULT : existing) + 1,
        decls->function);
  }
  if (weft_status_is_ok(status)) {
    status = weft_vm_asm_decls_symbols(decls, builder, line, &parsed);
  }
  weft_vm_builder_decl_t decl = {
      .element_type = parsed.element_type,
      .rank = parsed.rank,
      .dim_first = builder->dim_count,
  };
  for (uint32_t i = 0; weft_status_is_ok(status) && i < parsed.rank; ++i) {
    weft_vm_decl_dim_t dim = {.kind = parsed.dims[i].kind};
    if (dim.kind == WEFT_VM_DIM_STATIC) dim.size = parsed.dims[i].size;
    if (dim.kind == WEFT_VM_DIM_SYMBOL) {
      dim.symbol = (uint32_t)parsed.dims[i].size;
    }
    status = weft_vm_bytecode_builder_add_dim(builder, dim);
  }
  if (weft_status_is_ok(status)) {
    status = weft_vm_bytecode_builder_add_string(builder, name,
                                                 parsed.name_length, &decl.name);
  }
  if (weft_status_is_ok(status)) {
    status = weft_vm_bytecode_builder_add_decl(builder, &decl, NULL);
  }
  if (weft_status_is_ok(status)) ++*declared;
  return status;
}

weft_status_t weft_vm_asm_decls_end(weft_vm_asm_decls_t* decls,
                                    const weft_vm_asm_source_line_t* line,
                                    size_t offset,
                                    weft_vm_builder_function_t* function) {
  if (!decls->open) return WEFT_OK;
  decls->open = false;
  const weft_vm_parsed_signature_t* signature = decls->signature;
  if (decls->arg_count && decls->arg_count < signature->arg_count) {
    return weft_vm_asm_decls_incomplete(decls, line, offset, false,
                                        decls->arg_count);
  }
  if (decls->result_count && decls->result_count < signature->ret_count) {
    return weft_vm_asm_decls_incomplete(decls, line, offset, true,
                                        decls->result_count);
  }
  function->declared =
      (decls->arg_count ? WEFT_VM_BUILDER_DECLARED_ARGS : 0u) |
      (decls->result_count ? WEFT_VM_BUILDER_DECLARED_RESULTS : 0u);
  function->decl_first = function->declared ? decls->decl_first : 0;
  function->symbol_first = function->declared ? decls->symbol_first : 0;
  function->symbol_count = (uint32_t)decls->symbols.count;
  return WEFT_OK;
}
