// weft VM: the disassembler (see disassembler.h). Driven by the opcode
// table and the operand syntax of each shape (text_syntax.h), like the
// assembler.
#include "vm/disassembler.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "vm/bytecode_builder.h"
#include "vm/decl_text.h"
#include "vm/name_table.h"
#include "vm/signature_text.h"
#include "vm/text_syntax.h"

// Growable output text; the first failure sticks.
typedef struct weft_vm_text_t {
  weft_allocator_t allocator;
  char* data;
  uint32_t length;
  uint32_t capacity;
  weft_status_t status;
} weft_vm_text_t;

static void weft_vm_text_append(weft_vm_text_t* text, const char* bytes,
                                size_t length) {
  if (!weft_status_is_ok(text->status)) return;
  text->status = weft_vm_array_reserve(text->allocator, (void**)&text->data,
                                       &text->capacity, text->length,
                                       (uint64_t)length + 1, 1, "text bytes");
  if (!weft_status_is_ok(text->status)) return;
  memcpy(text->data + text->length, bytes, length);
  text->length += (uint32_t)length;
  text->data[text->length] = '\0';
}

static void weft_vm_text_printf(weft_vm_text_t* text, const char* format, ...)
    __attribute__((format(printf, 2, 3)));

static void weft_vm_text_printf(weft_vm_text_t* text, const char* format, ...) {
  char buffer[256];
  va_list args;
  va_start(args, format);
  const int length = vsnprintf(buffer, sizeof(buffer), format, args);
  va_end(args);
  if (length < 0 || (size_t)length >= sizeof(buffer)) {
    if (weft_status_is_ok(text->status)) {
      text->status = WEFT_STATUS(INTERNAL,
                                 "disassembler: a piece of text "
                                 "longer than 255 bytes");
    }
    return;
  }
  weft_vm_text_append(text, buffer, (size_t)length);
}

static void weft_vm_text_puts(weft_vm_text_t* text, const char* string) {
  weft_vm_text_append(text, string, strlen(string));
}

// A string literal of |length| |bytes|.
static void weft_vm_text_string(weft_vm_text_t* text, const uint8_t* bytes,
                                uint32_t length) {
  weft_vm_text_puts(text, "\"");
  for (uint32_t i = 0; i < length; ++i) {
    char escaped[8];
    const size_t escaped_length = weft_vm_text_escape_byte(bytes[i], escaped);
    weft_vm_text_append(text, escaped, escaped_length);
  }
  weft_vm_text_puts(text, "\"");
}

static void weft_vm_text_signature(weft_vm_text_t* text,
                                   weft_vm_signature_t signature) {
  char buffer[1100];
  const size_t length =
      weft_vm_signature_canonical_text(signature, buffer, sizeof(buffer));
  if (length >= sizeof(buffer)) {
    weft_vm_text_append(text, signature.text, length);
  } else {
    weft_vm_text_append(text, buffer, length);
  }
}

typedef struct weft_vm_disassembler_t {
  const weft_vm_bytecode_t* bytecode;
  weft_vm_text_t text;
  // Segments [inline_first, rodata_count) are fail messages written inline.
  uint32_t inline_first;
  // The name of each segment below inline_first.
  const char** segment_names;
  char* generated_names;  // storage for the names made up here
  // Per instruction of the function being written (function-relative):
  // true when one of its branches targets it. code_count entries.
  bool* is_target;
} weft_vm_disassembler_t;

// Finds the fail messages that can be written inline and re-assemble to
// the same segments: a suffix of unnamed segments, each used once, by a
// fail, in the order the code uses them.
static weft_status_t weft_vm_disassembler_plan_rodata(
    weft_vm_disassembler_t* disassembler, weft_allocator_t allocator) {
  const weft_vm_bytecode_t* bytecode = disassembler->bytecode;
  const uint32_t count = bytecode->rodata_count;
  uint32_t* uses = NULL;        // per segment: how many instructions use it
  uint32_t* fail_order = NULL;  // per segment: order among fails, +1
  weft_status_t status = weft_allocator_malloc_array(
      allocator, count ? count : 1, sizeof(uint32_t), (void**)&uses);
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc_array(allocator, count ? count : 1,
                                         sizeof(uint32_t), (void**)&fail_order);
  }
  uint32_t fails = 0;
  for (uint32_t f = 0;
       weft_status_is_ok(status) && f < bytecode->function_count; ++f) {
    const weft_vm_function_t* function = &bytecode->functions[f];
    for (uint32_t i = 0; i < function->code_count; ++i) {
      const weft_vm_instruction_t* instruction =
          &bytecode->code[function->code_offset + i];
      const weft_vm_shape_t shape = kWeftVmOpcodes[instruction->op].shape;
      if (shape == WEFT_VM_SHAPE_R_D || shape == WEFT_VM_SHAPE_FAIL) {
        ++uses[instruction->imm];
        if (shape == WEFT_VM_SHAPE_FAIL) fail_order[instruction->imm] = ++fails;
      }
    }
  }
  uint32_t first = count;
  while (weft_status_is_ok(status) && first > 0) {
    const uint32_t candidate = first - 1;
    const bool is_named =
        bytecode->rodata_names && bytecode->rodata_names[candidate];
    if (is_named || uses[candidate] != 1 || fail_order[candidate] == 0 ||
        (first < count && fail_order[candidate] >= fail_order[first])) {
      break;
    }
    first = candidate;
  }
  disassembler->inline_first = first;
  weft_allocator_free(allocator, uses);
  weft_allocator_free(allocator, fail_order);

  // Names for the declared segments: the module's, or made up.
  if (weft_status_is_ok(status) && first) {
    status = weft_allocator_malloc_array(allocator, first, sizeof(const char*),
                                         (void**)&disassembler->segment_names);
  }
  enum { kNameCapacity = 48 };
  if (weft_status_is_ok(status) && first) {
    status =
        weft_allocator_malloc_array(allocator, first, kNameCapacity,
                                    (void**)&disassembler->generated_names);
  }
  weft_vm_name_table_t taken;
  weft_vm_name_table_initialize(allocator, &taken);
  for (uint32_t i = 0;
       weft_status_is_ok(status) && bytecode->rodata_names && i < count; ++i) {
    const char* name = bytecode->rodata_names[i];
    bool inserted = false;
    if (name) {
      status = weft_vm_name_table_insert(&taken, name, strlen(name), i,
                                         &inserted, NULL);
    }
  }
  for (uint32_t i = 0; weft_status_is_ok(status) && i < first; ++i) {
    const char* name =
        bytecode->rodata_names ? bytecode->rodata_names[i] : NULL;
    if (!name) {
      char* made = disassembler->generated_names + (size_t)i * kNameCapacity;
      int length = snprintf(made, kNameCapacity, "rodata%" PRIu32, i);
      bool inserted = false;
      while (weft_status_is_ok(status)) {
        status = weft_vm_name_table_insert(&taken, made, (size_t)length, i,
                                           &inserted, NULL);
        if (inserted || length + 1 >= kNameCapacity) break;
        made[length++] = '_';
        made[length] = '\0';
      }
      name = made;
    }
    if (weft_status_is_ok(status)) disassembler->segment_names[i] = name;
  }
  weft_vm_name_table_deinitialize(&taken);
  return status;
}

// Writes register |index| of the file |is_ref| says.
static void weft_vm_disassemble_register(weft_vm_text_t* text, bool is_ref,
                                         uint32_t index) {
  weft_vm_text_printf(text, "%c%" PRIu32, is_ref ? 'r' : 's', index);
}

// "(s0, r1)": |count| operands from |first|, files per |types|.
static void weft_vm_disassemble_list(weft_vm_disassembler_t* disassembler,
                                     uint32_t first, uint32_t count,
                                     const uint8_t* types) {
  weft_vm_text_t* text = &disassembler->text;
  weft_vm_text_puts(text, "(");
  for (uint32_t i = 0; i < count; ++i) {
    if (i) weft_vm_text_puts(text, ", ");
    weft_vm_disassemble_register(text, types[i] == WEFT_VM_TYPE_REF,
                                 disassembler->bytecode->operands[first + i]);
  }
  weft_vm_text_puts(text, ")");
}

// "(args) -> (results)" of a call with |signature| at operands[first].
static void weft_vm_disassemble_call_lists(weft_vm_disassembler_t* disassembler,
                                           uint32_t first,
                                           weft_vm_signature_t signature) {
  weft_vm_disassemble_list(disassembler, first, signature.arg_count,
                           signature.types);
  weft_vm_text_puts(&disassembler->text, " -> ");
  weft_vm_disassemble_list(disassembler, first + signature.arg_count,
                           signature.ret_count,
                           signature.types + signature.arg_count);
}

// Writes the rodata segment |index| as a string literal when its bytes are
// mostly text (or |allow_hex| is false), else as hex "..".
static void weft_vm_disassemble_segment_bytes(
    weft_vm_disassembler_t* disassembler, uint32_t index, bool allow_hex) {
  const weft_vm_bytecode_t* bytecode = disassembler->bytecode;
  const weft_vm_rodata_t segment = bytecode->rodata[index];
  const uint8_t* bytes =
      segment.length ? bytecode->rodata_bytes + segment.offset : NULL;
  // Text, with escapes, unless more than a quarter of the bytes are not.
  uint32_t binary = 0;
  for (uint32_t i = 0; i < segment.length; ++i) {
    binary += !((bytes[i] >= 0x20 && bytes[i] < 0x7f) || bytes[i] == '\n' ||
                bytes[i] == '\t' || bytes[i] == '\r');
  }
  weft_vm_text_t* text = &disassembler->text;
  if ((uint64_t)binary * 4 <= segment.length || !allow_hex) {
    weft_vm_text_string(text, bytes, segment.length);
    return;
  }
  weft_vm_text_puts(text, "hex \"");
  for (uint32_t i = 0; i < segment.length; ++i) {
    weft_vm_text_printf(text, i ? " %02x" : "%02x", bytes[i]);
  }
  weft_vm_text_puts(text, "\"");
}

// One instruction's operands, as its shape's syntax says.
static void weft_vm_disassemble_operands(
    weft_vm_disassembler_t* disassembler, const weft_vm_function_t* function,
    const weft_vm_instruction_t* instruction) {
  const weft_vm_bytecode_t* bytecode = disassembler->bytecode;
  const weft_vm_opcode_info_t* info = &kWeftVmOpcodes[instruction->op];
  const char* syntax = weft_vm_shape_syntax(info->shape);
  weft_vm_text_t* text = &disassembler->text;
  const uint32_t fields[3] = {instruction->a, instruction->b, instruction->c};
  uint32_t field = 0;
  uint32_t list = 0;
  const bool is_float = weft_vm_opcode_immediate_is_float(info);
  for (size_t i = 0; syntax[i]; ++i) {
    weft_vm_text_puts(text, i ? ", " : " ");
    char number[48];
    switch (syntax[i]) {
      case 's':
      case 'r':
        weft_vm_disassemble_register(text, syntax[i] == 'r', fields[field++]);
        break;
      case 'S':
        weft_vm_disassemble_register(
            text, false, bytecode->operands[instruction->imm + list++]);
        break;
      case 'i':
        if (is_float) {
          weft_vm_text_format_float(instruction->imm, 32, number,
                                    sizeof(number));
          weft_vm_text_puts(text, number);
        } else {
          weft_vm_text_printf(text, "%" PRId32, (int32_t)instruction->imm);
        }
        break;
      case 'k': {
        const uint64_t value = bytecode->constants[instruction->imm];
        if (is_float) {
          weft_vm_text_format_float(value, 64, number, sizeof(number));
          weft_vm_text_puts(text, number);
        } else {
          weft_vm_text_printf(text, "%" PRId64, (int64_t)value);
        }
        break;
      }
      case 'd':
        weft_vm_text_puts(text, disassembler->segment_names[instruction->imm]);
        break;
      case 'j': weft_vm_text_printf(text, "L%" PRIu32, instruction->imm); break;
      case 'c': {
        const weft_vm_function_t* callee = &bytecode->functions[instruction->a];
        weft_vm_text_puts(text, "@");
        weft_vm_text_puts(text, callee->name);
        weft_vm_disassemble_call_lists(disassembler, instruction->imm,
                                       callee->signature);
        break;
      }
      case 'm': {
        const weft_vm_import_t* callee = &bytecode->imports[instruction->a];
        weft_vm_text_puts(text, callee->module_name);
        weft_vm_text_puts(text, ".");
        weft_vm_text_puts(text, callee->function_name);
        weft_vm_disassemble_call_lists(disassembler, instruction->imm,
                                       callee->signature);
        break;
      }
      case 't':
        weft_vm_disassemble_list(
            disassembler, instruction->imm, function->signature.ret_count,
            function->signature.types + function->signature.arg_count);
        break;
      case 'e':
        weft_vm_text_puts(
            text, weft_status_code_string((weft_status_code_t)fields[field++]));
        break;
      case 'M':
        if (instruction->imm >= disassembler->inline_first) {
          weft_vm_disassemble_segment_bytes(disassembler, instruction->imm,
                                            /*allow_hex=*/false);
        } else {
          weft_vm_text_puts(text,
                            disassembler->segment_names[instruction->imm]);
        }
        break;
      default: break;
    }
  }
}

// Appends |decl|'s tensor type ("KxN f32"), however long its symbols.
static void weft_vm_text_decl_type(weft_vm_text_t* text,
                                   const weft_vm_function_decls_t* decls,
                                   const weft_vm_decl_t* decl) {
  char inline_buffer[256];
  const size_t length = weft_vm_decl_type_text(
      decl, decls->symbols, decls->symbol_count, inline_buffer,
      sizeof(inline_buffer));
  if (length < sizeof(inline_buffer)) {
    weft_vm_text_append(text, inline_buffer, length);
    return;
  }
  char* buffer = NULL;
  if (weft_status_is_ok(text->status)) {
    text->status =
        weft_allocator_malloc(text->allocator, length + 1, (void**)&buffer);
  }
  if (!buffer) return;
  weft_vm_decl_type_text(decl, decls->symbols, decls->symbol_count, buffer,
                         length + 1);
  weft_vm_text_append(text, buffer, length);
  weft_allocator_free(text->allocator, buffer);
}

// "  arg NAME[: TYPE]" lines for |count| |values| (|keyword| arg or
// result).
static void weft_vm_disassemble_decls(weft_vm_text_t* text,
                                      const weft_vm_function_decls_t* decls,
                                      const weft_vm_decl_t* values,
                                      uint32_t count, const char* keyword) {
  for (uint32_t i = 0; values && i < count; ++i) {
    weft_vm_text_puts(text, "  ");
    weft_vm_text_puts(text, keyword);
    weft_vm_text_puts(text, " ");
    weft_vm_text_puts(text, values[i].name);
    if (values[i].element_type != WEFT_VM_ELEMENT_TYPE_NONE) {
      weft_vm_text_puts(text, ": ");
      weft_vm_text_decl_type(text, decls, &values[i]);
    }
    weft_vm_text_puts(text, "\n");
  }
}

static void weft_vm_disassemble_function(weft_vm_disassembler_t* disassembler,
                                         uint32_t index) {
  const weft_vm_function_t* function =
      &disassembler->bytecode->functions[index];
  weft_vm_text_t* text = &disassembler->text;
  weft_vm_text_puts(text, "\nfunc @");
  weft_vm_text_puts(text, function->name);
  weft_vm_text_puts(text, " ");
  weft_vm_text_signature(text, function->signature);
  weft_vm_text_puts(text, (function->flags & WEFT_VM_FUNCTION_FLAG_EXPORT)
                              ? " export\n"
                              : "\n");
  const weft_vm_function_decls_t* decls =
      weft_vm_bytecode_function_decls(disassembler->bytecode, index);
  if (decls) {
    weft_vm_disassemble_decls(text, decls, decls->args,
                              function->signature.arg_count, "arg");
    weft_vm_disassemble_decls(text, decls, decls->results,
                              function->signature.ret_count, "result");
  }
  const weft_vm_instruction_t* code =
      disassembler->bytecode->code + function->code_offset;
  // Branch targets of this function only: functions' code may overlap.
  memset(disassembler->is_target, 0,
         function->code_count * sizeof(*disassembler->is_target));
  for (uint32_t i = 0; i < function->code_count; ++i) {
    const weft_vm_shape_t shape = kWeftVmOpcodes[code[i].op].shape;
    if (shape == WEFT_VM_SHAPE_J || shape == WEFT_VM_SHAPE_S_J) {
      disassembler->is_target[code[i].imm] = true;
    }
  }
  for (uint32_t i = 0; i < function->code_count; ++i) {
    if (disassembler->is_target[i]) {
      weft_vm_text_printf(text, "L%" PRIu32 ":\n", i);
    }
    weft_vm_text_printf(text, "  %s", kWeftVmOpcodes[code[i].op].name);
    weft_vm_disassemble_operands(disassembler, function, &code[i]);
    weft_vm_text_puts(text, "\n");
  }
  weft_vm_text_puts(text, "end\n");
}

// Writes the module: its name, imports, declared rodata and functions.
static void weft_vm_disassemble_module(weft_vm_disassembler_t* disassembler) {
  const weft_vm_bytecode_t* bytecode = disassembler->bytecode;
  weft_vm_text_t* text = &disassembler->text;
  weft_vm_text_puts(text, "module ");
  weft_vm_text_puts(text, bytecode->name ? bytecode->name : "");
  weft_vm_text_puts(text, "\n");
  if (bytecode->import_count) weft_vm_text_puts(text, "\n");
  for (uint32_t i = 0; i < bytecode->import_count; ++i) {
    const weft_vm_import_t* import_entry = &bytecode->imports[i];
    weft_vm_text_puts(text, "import ");
    weft_vm_text_puts(text, import_entry->module_name);
    weft_vm_text_puts(text, ".");
    weft_vm_text_puts(text, import_entry->function_name);
    weft_vm_text_puts(text, " ");
    weft_vm_text_signature(text, import_entry->signature);
    weft_vm_text_puts(text, "\n");
  }
  if (disassembler->inline_first) weft_vm_text_puts(text, "\n");
  for (uint32_t i = 0; i < disassembler->inline_first; ++i) {
    weft_vm_text_puts(text, "rodata ");
    weft_vm_text_puts(text, disassembler->segment_names[i]);
    weft_vm_text_puts(text, " ");
    weft_vm_disassemble_segment_bytes(disassembler, i, /*allow_hex=*/true);
    weft_vm_text_puts(text, "\n");
  }
  for (uint32_t f = 0; f < bytecode->function_count; ++f) {
    weft_vm_disassemble_function(disassembler, f);
  }
}

weft_status_t weft_vm_disassemble(const weft_vm_bytecode_t* bytecode,
                                  weft_allocator_t allocator, char** out_text,
                                  size_t* out_length) {
  if (!out_text || !out_length) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "weft_vm_disassemble: out_text or out_length is NULL");
  }
  *out_text = NULL;
  *out_length = 0;
  if (!bytecode) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "weft_vm_disassemble: bytecode is NULL");
  }
  weft_status_t status = weft_vm_bytecode_validate(bytecode);
  if (!weft_status_is_ok(status)) return status;
  weft_vm_disassembler_t disassembler = {
      .bytecode = bytecode,
      .text = {.allocator = allocator},
  };
  status = weft_allocator_malloc_array(
      allocator, bytecode->code_count ? bytecode->code_count : 1, sizeof(bool),
      (void**)&disassembler.is_target);
  if (weft_status_is_ok(status)) {
    status = weft_vm_disassembler_plan_rodata(&disassembler, allocator);
  }
  weft_vm_text_t* text = &disassembler.text;
  text->status = status;
  if (weft_status_is_ok(status)) weft_vm_disassemble_module(&disassembler);
  status = text->status;
  weft_allocator_free(allocator, disassembler.is_target);
  weft_allocator_free(allocator, (void*)disassembler.segment_names);
  weft_allocator_free(allocator, disassembler.generated_names);
  if (weft_status_is_ok(status)) {
    *out_text = text->data;
    *out_length = text->length;
  } else {
    weft_allocator_free(allocator, text->data);
  }
  return status;
}
