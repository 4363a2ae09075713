// weft VM: bytecode validation (see bytecode.h).
#include "vm/bytecode.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "vm/bytecode_builder.h"
#include "vm/decl_text.h"
#include "vm/signature.h"

const char* weft_vm_value_type_name(weft_vm_value_type_t type) {
  static const char* const kNames[WEFT_VM_TYPE_COUNT_] = {"i32", "i64", "f32",
                                                          "f64", "ref"};
  return (unsigned)type < WEFT_VM_TYPE_COUNT_ ? kNames[type] : "?";
}

// Where an error was found, for its message.
typedef struct weft_vm_validation_t {
  const weft_vm_bytecode_t* bytecode;
  const weft_vm_function_t* function;  // NULL outside functions
  // Instruction index in the function; WEFT_VM_VALIDATION_NO_INSTRUCTION
  // while checking its declarations.
  uint32_t index;
} weft_vm_validation_t;

#define WEFT_VM_VALIDATION_NO_INSTRUCTION UINT32_MAX

// Formats "module 'm': function 'f' instruction 3 (t.wvm:12) (add.i32): "
// into |buffer|.
static void weft_vm_validation_where(const weft_vm_validation_t* at,
                                     char* buffer, size_t capacity) {
  const weft_vm_bytecode_t* bytecode = at->bytecode;
  int used = snprintf(buffer, capacity, "module '%s'",
                      bytecode->name ? bytecode->name : "?");
  if (at->function && at->index == WEFT_VM_VALIDATION_NO_INSTRUCTION &&
      used >= 0 && (size_t)used < capacity) {
    snprintf(buffer + used, capacity - (size_t)used, ": function '%s'",
             at->function->name ? at->function->name : "?");
  } else if (at->function && used >= 0 && (size_t)used < capacity) {
    used += snprintf(buffer + used, capacity - (size_t)used,
                     ": function '%s' instruction %" PRIu32,
                     at->function->name ? at->function->name : "?", at->index);
    const uint64_t code_index =
        (uint64_t)at->function->code_offset + at->index;
    if (bytecode->lines && code_index < bytecode->code_count &&
        bytecode->lines[code_index] && used >= 0 &&
        (size_t)used < capacity) {
      used += snprintf(buffer + used, capacity - (size_t)used, " (%s:%" PRIu32 ")",
                       bytecode->source_name ? bytecode->source_name : "?",
                       bytecode->lines[code_index]);
    }
  }
}

// INVALID_ARGUMENT "WHERE: WHAT".
#define WEFT_VM_INVALID(at, ...)                                        \
  weft_vm_validation_error((at), __VA_ARGS__)

static weft_status_t weft_vm_validation_error(const weft_vm_validation_t* at,
                                              const char* format, ...)
    __attribute__((format(printf, 2, 3)));

static weft_status_t weft_vm_validation_error(const weft_vm_validation_t* at,
                                              const char* format, ...) {
  char where[512];
  weft_vm_validation_where(at, where, sizeof(where));
  char what[512];
  va_list args;
  va_start(args, format);
  vsnprintf(what, sizeof(what), format, args);
  va_end(args);
  return WEFT_STATUS(INVALID_ARGUMENT, "%s: %s", where, what);
}

static weft_status_t weft_vm_validate_signature(const weft_vm_validation_t* at,
                                               const char* what,
                                               weft_vm_signature_t signature) {
  const uint32_t count = (uint32_t)signature.arg_count + signature.ret_count;
  if (count && !signature.types) {
    return WEFT_VM_INVALID(at, "%s has %" PRIu32 " types but no type array",
                           what, count);
  }
  for (uint32_t i = 0; i < count; ++i) {
    if (signature.types[i] >= WEFT_VM_TYPE_COUNT_) {
      return WEFT_VM_INVALID(at, "%s: type %" PRIu32 " is unknown (%u)", what,
                             i, signature.types[i]);
    }
  }
  return WEFT_OK;
}

// Checks a register of |type|'s file against the function's counts.
static weft_status_t weft_vm_validate_register(const weft_vm_validation_t* at,
                                              const char* opcode_name,
                                              bool is_ref, uint32_t index) {
  const uint32_t count =
      is_ref ? at->function->ref_count : at->function->scalar_count;
  if (index >= count) {
    return WEFT_VM_INVALID(at,
                           "%s: register %c%" PRIu32
                           " is past the function's %" PRIu32 " %s registers",
                           opcode_name, is_ref ? 'r' : 's', index, count,
                           is_ref ? "ref" : "scalar");
  }
  return WEFT_OK;
}

// Checks operands[first, first + count) exist.
static weft_status_t weft_vm_validate_operand_range(
    const weft_vm_validation_t* at, const char* opcode_name, uint32_t first,
    uint32_t count) {
  if ((uint64_t)first + count > at->bytecode->operand_count) {
    return WEFT_VM_INVALID(at,
                           "%s: operand list [%" PRIu32 ", %" PRIu64
                           ") is past the module's %" PRIu32 " operands",
                           opcode_name, first, (uint64_t)first + count,
                           at->bytecode->operand_count);
  }
  return WEFT_OK;
}

// Checks a call's operand list (arguments, then results) against
// |signature|: each register in the file its type needs.
static weft_status_t weft_vm_validate_call_operands(
    const weft_vm_validation_t* at, const char* opcode_name, uint32_t first,
    weft_vm_signature_t signature) {
  const uint32_t count = (uint32_t)signature.arg_count + signature.ret_count;
  weft_status_t status =
      weft_vm_validate_operand_range(at, opcode_name, first, count);
  for (uint32_t i = 0; weft_status_is_ok(status) && i < count; ++i) {
    const bool is_ref = signature.types[i] == WEFT_VM_TYPE_REF;
    status = weft_vm_validate_register(at, opcode_name, is_ref,
                                       at->bytecode->operands[first + i]);
  }
  return status;
}

// Checks one instruction of |at->function|.
static weft_status_t weft_vm_validate_instruction(
    const weft_vm_validation_t* at, const weft_vm_instruction_t* instruction) {
  const weft_vm_bytecode_t* bytecode = at->bytecode;
  if (instruction->op >= WEFT_VM_OP_COUNT_) {
    return WEFT_VM_INVALID(at, "opcode %u is unknown", instruction->op);
  }
  const weft_vm_opcode_info_t* info = &kWeftVmOpcodes[instruction->op];
  const char* name = info->name;
  if (instruction->reserved != 0) {
    return WEFT_VM_INVALID(at, "%s: reserved byte is %u, not 0", name,
                           instruction->reserved);
  }
  const uint32_t a = instruction->a;
  const uint32_t b = instruction->b;
  const uint32_t c = instruction->c;
  const uint32_t imm = instruction->imm;
  weft_status_t status = WEFT_OK;
  // Register operands per shape: S = scalar, R = ref; '-' = not a register.
  const char* files = "---";
  switch (info->shape) {
    case WEFT_VM_SHAPE_NONE: files = "---"; break;
    case WEFT_VM_SHAPE_S_S: files = "SS-"; break;
    case WEFT_VM_SHAPE_S_SS: files = "SSS"; break;
    case WEFT_VM_SHAPE_S_SSS: files = "S--"; break;
    case WEFT_VM_SHAPE_S_I32: files = "S--"; break;
    case WEFT_VM_SHAPE_S_K: files = "S--"; break;
    case WEFT_VM_SHAPE_R: files = "R--"; break;
    case WEFT_VM_SHAPE_R_R: files = "RR-"; break;
    case WEFT_VM_SHAPE_R_D: files = "R--"; break;
    case WEFT_VM_SHAPE_S_R: files = "SR-"; break;
    case WEFT_VM_SHAPE_R_S: files = "RS-"; break;
    case WEFT_VM_SHAPE_S_RS: files = "SRS"; break;
    case WEFT_VM_SHAPE_R_SS: files = "RSS"; break;
    case WEFT_VM_SHAPE_R_RS: files = "RRS"; break;
    case WEFT_VM_SHAPE_R_SR: files = "RSR"; break;
    case WEFT_VM_SHAPE_J: files = "---"; break;
    case WEFT_VM_SHAPE_S_J: files = "S--"; break;
    default: files = "---"; break;
  }
  const uint32_t operands[3] = {a, b, c};
  for (int i = 0; weft_status_is_ok(status) && i < 3; ++i) {
    if (files[i] != '-') {
      status = weft_vm_validate_register(at, name, files[i] == 'R',
                                         operands[i]);
    }
  }
  if (!weft_status_is_ok(status)) return status;
  switch (info->shape) {
    case WEFT_VM_SHAPE_S_SSS:
      status = weft_vm_validate_operand_range(at, name, imm, 3);
      for (uint32_t i = 0; weft_status_is_ok(status) && i < 3; ++i) {
        status = weft_vm_validate_register(at, name, /*is_ref=*/false,
                                           bytecode->operands[imm + i]);
      }
      break;
    case WEFT_VM_SHAPE_S_K:
      if (imm >= bytecode->constant_count) {
        status = WEFT_VM_INVALID(at,
                                 "%s: constant %" PRIu32
                                 " is past the module's %" PRIu32 " constants",
                                 name, imm, bytecode->constant_count);
      }
      break;
    case WEFT_VM_SHAPE_R_D:
      if (imm >= bytecode->rodata_count) {
        status = WEFT_VM_INVALID(at,
                                 "%s: rodata segment %" PRIu32
                                 " is past the module's %" PRIu32 " segments",
                                 name, imm, bytecode->rodata_count);
      }
      break;
    case WEFT_VM_SHAPE_J:
    case WEFT_VM_SHAPE_S_J:
      if (imm >= at->function->code_count) {
        status = WEFT_VM_INVALID(at,
                                 "%s: branch target %" PRIu32
                                 " is past the function's %" PRIu32
                                 " instructions",
                                 name, imm, at->function->code_count);
      }
      break;
    case WEFT_VM_SHAPE_CALL:
      if (a >= bytecode->function_count) {
        status = WEFT_VM_INVALID(at,
                                 "%s: function %" PRIu32
                                 " is past the module's %" PRIu32 " functions",
                                 name, a, bytecode->function_count);
      } else {
        status = weft_vm_validate_call_operands(
            at, name, imm, bytecode->functions[a].signature);
      }
      break;
    case WEFT_VM_SHAPE_CALL_IMPORT:
      if (a >= bytecode->import_count) {
        status = WEFT_VM_INVALID(at,
                                 "%s: import %" PRIu32
                                 " is past the module's %" PRIu32 " imports",
                                 name, a, bytecode->import_count);
      } else {
        status = weft_vm_validate_call_operands(
            at, name, imm, bytecode->imports[a].signature);
      }
      break;
    case WEFT_VM_SHAPE_RET: {
      // The results only: a ret is a call's second half.
      weft_vm_signature_t results = at->function->signature;
      results.types += results.arg_count;
      results.arg_count = 0;
      status = weft_vm_validate_call_operands(at, name, imm, results);
      break;
    }
    case WEFT_VM_SHAPE_FAIL:
      if (a == WEFT_STATUS_OK || a >= WEFT_STATUS_CODE_COUNT_) {
        status = WEFT_VM_INVALID(at, "%s: status code %" PRIu32
                                     " is not an error code",
                                 name, a);
      } else if (imm >= bytecode->rodata_count) {
        status = WEFT_VM_INVALID(at,
                                 "%s: message rodata segment %" PRIu32
                                 " is past the module's %" PRIu32 " segments",
                                 name, imm, bytecode->rodata_count);
      }
      break;
    default:
      break;
  }
  return status;
}

// True for the instructions after which control never falls through.
static bool weft_vm_is_terminator(uint8_t op) {
  return op == WEFT_VM_OP_BR || op == WEFT_VM_OP_RET || op == WEFT_VM_OP_FAIL;
}

static weft_status_t weft_vm_validate_function(weft_vm_validation_t* at) {
  const weft_vm_bytecode_t* bytecode = at->bytecode;
  const weft_vm_function_t* function = at->function;
  weft_status_t status = WEFT_OK;
  if (function->code_count == 0 ||
      (uint64_t)function->code_offset + function->code_count >
          bytecode->code_count) {
    return WEFT_VM_INVALID(at,
                           "code [%" PRIu32 ", %" PRIu64
                           ") is empty or past the module's %" PRIu32
                           " instructions",
                           function->code_offset,
                           (uint64_t)function->code_offset + function->code_count,
                           bytecode->code_count);
  }
  uint32_t scalar_params = 0;
  uint32_t ref_params = 0;
  for (uint32_t i = 0; i < function->signature.arg_count; ++i) {
    if (function->signature.types[i] == WEFT_VM_TYPE_REF) {
      ++ref_params;
    } else {
      ++scalar_params;
    }
  }
  if (scalar_params > function->scalar_count ||
      ref_params > function->ref_count) {
    return WEFT_VM_INVALID(at,
                           "%" PRIu32 " scalar and %" PRIu32
                           " ref parameters do not fit its %u scalar and %u "
                           "ref registers",
                           scalar_params, ref_params, function->scalar_count,
                           function->ref_count);
  }
  const weft_vm_instruction_t* code = bytecode->code + function->code_offset;
  for (at->index = 0; weft_status_is_ok(status) && at->index < function->code_count;
       ++at->index) {
    status = weft_vm_validate_instruction(at, &code[at->index]);
  }
  if (weft_status_is_ok(status)) {
    at->index = function->code_count - 1;
    if (!weft_vm_is_terminator(code[at->index].op)) {
      status = WEFT_VM_INVALID(at,
                               "the last instruction (%s) falls through the "
                               "end of the function (end with br, ret or "
                               "fail)",
                               code[at->index].op < WEFT_VM_OP_COUNT_
                                   ? kWeftVmOpcodes[code[at->index].op].name
                                   : "?");
    }
  }
  return status;
}

// Checks the names of |decls|' symbols: present, [A-Z][A-Z0-9_]*, unique,
// at most WEFT_VM_TENSOR_MAX_SYMBOLS.
static weft_status_t weft_vm_validate_symbols(
    const weft_vm_validation_t* at, const weft_vm_function_decls_t* decls) {
  if (decls->symbol_count > WEFT_VM_TENSOR_MAX_SYMBOLS) {
    return WEFT_VM_INVALID(at, "%" PRIu32 " symbols, at most %d",
                           decls->symbol_count, WEFT_VM_TENSOR_MAX_SYMBOLS);
  }
  if (decls->symbol_count && !decls->symbols) {
    return WEFT_VM_INVALID(at, "%" PRIu32 " symbols but no symbol array",
                           decls->symbol_count);
  }
  for (uint32_t i = 0; i < decls->symbol_count; ++i) {
    const char* name = decls->symbols[i];
    if (!name || !weft_vm_symbol_name_is_valid(name, strlen(name))) {
      return WEFT_VM_INVALID(at,
                             "symbol %" PRIu32
                             " is named '%.64s', not [A-Z][A-Z0-9_]*",
                             i, name ? name : "");
    }
    for (uint32_t j = 0; j < i; ++j) {
      if (strcmp(decls->symbols[j], name) == 0) {
        return WEFT_VM_INVALID(at, "symbols %" PRIu32 " and %" PRIu32
                                   " are both named '%s'",
                               j, i, name);
      }
    }
  }
  return WEFT_OK;
}

// What checking a function's declared values carries from one to the
// next.
typedef struct weft_vm_decl_walk_t {
  const weft_vm_function_decls_t* decls;
  // The function's signature, parsed when a value has a tensor type and
  // the signature has text (ref type names).
  bool parsed_ready;
  weft_vm_parsed_signature_t parsed;
  uint32_t next_symbol;  // symbols are numbered in order of first use
} weft_vm_decl_walk_t;

// Checks declared value |index| of the arguments (|is_result| false) or
// results: name, element type, rank, dimensions, and that its signature
// type takes a tensor type.
static weft_status_t weft_vm_validate_decl(const weft_vm_validation_t* at,
                                           weft_vm_decl_walk_t* walk,
                                           bool is_result, uint32_t index) {
  const weft_vm_signature_t signature = at->function->signature;
  const weft_vm_decl_t* values =
      is_result ? walk->decls->results : walk->decls->args;
  const weft_vm_decl_t* decl = &values[index];
  const char* role = is_result ? "result" : "argument";
  if (!decl->name ||
      !weft_vm_name_is_identifier(decl->name, strlen(decl->name), false)) {
    return WEFT_VM_INVALID(at,
                           "%s %" PRIu32
                           " is named '%.64s', not an identifier "
                           "([A-Za-z_][A-Za-z0-9_]*)",
                           role, index + 1, decl->name ? decl->name : "");
  }
  // Unique among the arguments and the results before it.
  for (uint32_t list = 0; list <= (uint32_t)is_result; ++list) {
    const weft_vm_decl_t* others = list ? walk->decls->results : walk->decls->args;
    const uint32_t count =
        list == (uint32_t)is_result ? index : signature.arg_count;
    for (uint32_t i = 0; others && i < count; ++i) {
      if (strcmp(others[i].name, decl->name) == 0) {
        return WEFT_VM_INVALID(at, "%s %" PRIu32 " and %s %" PRIu32
                                   " are both named '%s'",
                               list ? "result" : "argument", i + 1, role,
                               index + 1, decl->name);
      }
    }
  }
  if (decl->element_type >= WEFT_VM_ELEMENT_TYPE_COUNT_ ||
      decl->rank > WEFT_VM_TENSOR_MAX_RANK ||
      (decl->element_type == WEFT_VM_ELEMENT_TYPE_NONE && decl->rank) ||
      (decl->rank && !decl->dims)) {
    return WEFT_VM_INVALID(at,
                           "%s %" PRIu32 " '%s': element type %u and rank %u "
                           "are not a tensor type (element types 1 to %d, "
                           "rank at most %d, 0 without an element type)",
                           role, index + 1, decl->name, decl->element_type,
                           decl->rank, WEFT_VM_ELEMENT_TYPE_COUNT_ - 1,
                           WEFT_VM_TENSOR_MAX_RANK);
  }
  if (decl->element_type == WEFT_VM_ELEMENT_TYPE_NONE) return WEFT_OK;
  const uint32_t position = (is_result ? signature.arg_count : 0) + index;
  const char* ref_name = NULL;
  size_t ref_name_length = 0;
  if (signature.text && signature.types[position] == WEFT_VM_TYPE_REF) {
    if (!walk->parsed_ready) {
      weft_status_t status = weft_vm_signature_parse(
          signature.text, strlen(signature.text), &walk->parsed);
      if (!weft_status_is_ok(status)) {
        weft_status_free(status);
        return WEFT_VM_INVALID(at, "signature '%s' does not parse",
                               signature.text);
      }
      walk->parsed_ready = true;
    }
    ref_name = walk->parsed.canonical + walk->parsed.ref_name_offset[position];
    ref_name_length = walk->parsed.ref_name_length[position];
  }
  if (!weft_vm_decl_allows_tensor(signature.types[position], ref_name,
                                  ref_name_length)) {
    return WEFT_VM_INVALID(at,
                           "%s %" PRIu32 " '%s' is %s%.*s%s: only "
                           "r<hal.buffer_view> and r values take a tensor "
                           "type",
                           role, index + 1, decl->name,
                           weft_vm_value_type_name(
                               (weft_vm_value_type_t)signature.types[position]),
                           (int)ref_name_length, ref_name ? ref_name : "",
                           ref_name_length ? ">" : "");
  }
  for (uint32_t i = 0; i < decl->rank; ++i) {
    const weft_vm_decl_dim_t* dim = &decl->dims[i];
    bool ok = false;
    switch (dim->kind) {
      case WEFT_VM_DIM_STATIC: ok = dim->size >= 0 && dim->symbol == 0; break;
      case WEFT_VM_DIM_DYNAMIC: ok = dim->size == 0 && dim->symbol == 0; break;
      case WEFT_VM_DIM_SYMBOL:
        ok = dim->size == 0 && dim->symbol < walk->decls->symbol_count &&
             dim->symbol <= walk->next_symbol;
        if (ok && dim->symbol == walk->next_symbol) ++walk->next_symbol;
        break;
      default: break;
    }
    if (!ok) {
      return WEFT_VM_INVALID(at,
                             "%s %" PRIu32 " '%s': dimension %" PRIu32
                             " (kind %" PRIu32 ", size %" PRId64
                             ", symbol %" PRIu32
                             ") is not a size >= 0, '?' or a symbol of the "
                             "function numbered in order of first use (next "
                             "new symbol %" PRIu32 " of %" PRIu32 ")",
                             role, index + 1, decl->name, i, dim->kind,
                             dim->size, dim->symbol, walk->next_symbol,
                             walk->decls->symbol_count);
    }
  }
  return WEFT_OK;
}

// Checks |at->function|'s declarations (docs/VM.md, "Declarations").
static weft_status_t weft_vm_validate_decls(const weft_vm_validation_t* at,
                                            uint32_t function) {
  const weft_vm_function_decls_t* decls =
      at->bytecode->function_decls ? &at->bytecode->function_decls[function]
                                   : NULL;
  if (!decls || (!decls->args && !decls->results && !decls->symbol_count)) {
    return WEFT_OK;
  }
  const weft_vm_signature_t signature = at->function->signature;
  if ((!decls->args && !decls->results) ||
      (decls->args && signature.arg_count == 0) ||
      (decls->results && signature.ret_count == 0)) {
    return WEFT_VM_INVALID(at,
                           "declarations for %s%s (%u arguments, %u "
                           "results): each list is declared when it has "
                           "values, and at least one is",
                           decls->args ? "its arguments" : "no arguments",
                           decls->results ? " and its results"
                                          : " and no results",
                           signature.arg_count, signature.ret_count);
  }
  weft_status_t status = weft_vm_validate_symbols(at, decls);
  weft_vm_decl_walk_t walk;
  walk.decls = decls;
  walk.parsed_ready = false;
  walk.next_symbol = 0;
  for (uint32_t i = 0;
       weft_status_is_ok(status) && decls->args && i < signature.arg_count;
       ++i) {
    status = weft_vm_validate_decl(at, &walk, false, i);
  }
  for (uint32_t i = 0;
       weft_status_is_ok(status) && decls->results && i < signature.ret_count;
       ++i) {
    status = weft_vm_validate_decl(at, &walk, true, i);
  }
  if (weft_status_is_ok(status) && walk.next_symbol != decls->symbol_count) {
    status = WEFT_VM_INVALID(at, "symbol %" PRIu32 " '%s' is never used",
                             walk.next_symbol, decls->symbols[walk.next_symbol]);
  }
  return status;
}

weft_status_t weft_vm_bytecode_validate(const weft_vm_bytecode_t* bytecode) {
  weft_vm_validation_t at = {bytecode, NULL, 0};
  weft_status_t status = WEFT_OK;
  if ((bytecode->function_count && !bytecode->functions) ||
      (bytecode->import_count && !bytecode->imports) ||
      (bytecode->code_count && !bytecode->code) ||
      (bytecode->operand_count && !bytecode->operands) ||
      (bytecode->constant_count && !bytecode->constants) ||
      (bytecode->rodata_count && !bytecode->rodata) ||
      (bytecode->rodata_byte_count && !bytecode->rodata_bytes)) {
    status = WEFT_VM_INVALID(&at, "a table has entries but no array");
  }
  for (uint32_t i = 0; weft_status_is_ok(status) && i < bytecode->rodata_count;
       ++i) {
    const weft_vm_rodata_t segment = bytecode->rodata[i];
    if ((uint64_t)segment.offset + segment.length >
        bytecode->rodata_byte_count) {
      status = WEFT_VM_INVALID(&at,
                               "rodata segment %" PRIu32 " [%" PRIu32
                               ", %" PRIu64 ") is past the module's %" PRIu32
                               " rodata bytes",
                               i, segment.offset,
                               (uint64_t)segment.offset + segment.length,
                               bytecode->rodata_byte_count);
    }
  }
  for (uint32_t i = 0; weft_status_is_ok(status) && i < bytecode->import_count;
       ++i) {
    status = weft_vm_validate_signature(&at, "an import's signature",
                                        bytecode->imports[i].signature);
  }
  // Every signature first: calls read their callee's.
  for (uint32_t i = 0;
       weft_status_is_ok(status) && i < bytecode->function_count; ++i) {
    at.function = &bytecode->functions[i];
    at.index = 0;
    status = weft_vm_validate_signature(&at, "signature",
                                        at.function->signature);
    if (weft_status_is_ok(status)) {
      at.index = WEFT_VM_VALIDATION_NO_INSTRUCTION;
      status = weft_vm_validate_decls(&at, i);
    }
  }
  for (uint32_t i = 0;
       weft_status_is_ok(status) && i < bytecode->function_count; ++i) {
    at.function = &bytecode->functions[i];
    at.index = 0;
    status = weft_vm_validate_function(&at);
  }
  return status;
}

void weft_vm_bytecode_free(weft_allocator_t allocator,
                           weft_vm_bytecode_t* bytecode) {
  weft_allocator_free(allocator, bytecode);
}
