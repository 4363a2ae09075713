// weft VM: the binary module format (see binary.h and docs/VM.md, "Binary
// format").
#include "vm/binary.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "vm/bytecode_builder.h"
#include "vm/signature.h"
#include "vm/signature_text.h"

#define WEFT_VM_BINARY_HEADER_SIZE 24u
#define WEFT_VM_BINARY_SECTION_ENTRY_SIZE 16u
// A string field that holds no string.
#define WEFT_VM_BINARY_NO_STRING UINT32_MAX

typedef enum weft_vm_binary_section_id_e {
  WEFT_VM_BINARY_SECTION_MODULE = 1,
  WEFT_VM_BINARY_SECTION_STRINGS,
  WEFT_VM_BINARY_SECTION_SIGNATURES,
  WEFT_VM_BINARY_SECTION_TYPES,
  WEFT_VM_BINARY_SECTION_IMPORTS,
  WEFT_VM_BINARY_SECTION_FUNCTIONS,
  WEFT_VM_BINARY_SECTION_CODE,
  WEFT_VM_BINARY_SECTION_OPERANDS,
  WEFT_VM_BINARY_SECTION_CONSTANTS,
  WEFT_VM_BINARY_SECTION_RODATA,
  WEFT_VM_BINARY_SECTION_RODATA_BYTES,
  WEFT_VM_BINARY_SECTION_LINES,
  // Declarations (optional: a module without them has none of these).
  WEFT_VM_BINARY_SECTION_DECLARED_FUNCTIONS,
  WEFT_VM_BINARY_SECTION_DECLARED_VALUES,
  WEFT_VM_BINARY_SECTION_DECLARED_DIMS,
  WEFT_VM_BINARY_SECTION_DECLARED_SYMBOLS,
  WEFT_VM_BINARY_SECTION_COUNT_,
} weft_vm_binary_section_id_t;

// Each section's name (for messages) and entry size in bytes.
static const struct {
  const char* name;
  uint32_t entry_size;
} kWeftVmBinarySections[WEFT_VM_BINARY_SECTION_COUNT_] = {
    [WEFT_VM_BINARY_SECTION_MODULE] = {"module", 8},
    [WEFT_VM_BINARY_SECTION_STRINGS] = {"strings", 1},
    [WEFT_VM_BINARY_SECTION_SIGNATURES] = {"signatures", 12},
    [WEFT_VM_BINARY_SECTION_TYPES] = {"signature_types", 1},
    [WEFT_VM_BINARY_SECTION_IMPORTS] = {"imports", 12},
    [WEFT_VM_BINARY_SECTION_FUNCTIONS] = {"functions", 24},
    [WEFT_VM_BINARY_SECTION_CODE] = {"code", 8},
    [WEFT_VM_BINARY_SECTION_OPERANDS] = {"operands", 2},
    [WEFT_VM_BINARY_SECTION_CONSTANTS] = {"constants", 8},
    [WEFT_VM_BINARY_SECTION_RODATA] = {"rodata", 12},
    [WEFT_VM_BINARY_SECTION_RODATA_BYTES] = {"rodata_bytes", 1},
    [WEFT_VM_BINARY_SECTION_LINES] = {"lines", 4},
    [WEFT_VM_BINARY_SECTION_DECLARED_FUNCTIONS] = {"declared_functions", 12},
    [WEFT_VM_BINARY_SECTION_DECLARED_VALUES] = {"declared_values", 8},
    [WEFT_VM_BINARY_SECTION_DECLARED_DIMS] = {"declared_dims", 12},
    [WEFT_VM_BINARY_SECTION_DECLARED_SYMBOLS] = {"declared_symbols", 4},
};

// Bits of a declared_functions entry's |declared| field.
#define WEFT_VM_BINARY_DECLARED_ARGS 1u
#define WEFT_VM_BINARY_DECLARED_RESULTS 2u

static uint16_t weft_vm_binary_get_u16(const uint8_t* p) {
  return (uint16_t)(p[0] | (uint16_t)p[1] << 8);
}

static uint32_t weft_vm_binary_get_u32(const uint8_t* p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

static uint64_t weft_vm_binary_get_u64(const uint8_t* p) {
  return (uint64_t)weft_vm_binary_get_u32(p) |
         (uint64_t)weft_vm_binary_get_u32(p + 4) << 32;
}

static void weft_vm_binary_put_u16(uint8_t* p, uint16_t value) {
  p[0] = (uint8_t)value;
  p[1] = (uint8_t)(value >> 8);
}

static void weft_vm_binary_put_u32(uint8_t* p, uint32_t value) {
  for (int i = 0; i < 4; ++i) p[i] = (uint8_t)(value >> (8 * i));
}

static void weft_vm_binary_put_u64(uint8_t* p, uint64_t value) {
  for (int i = 0; i < 8; ++i) p[i] = (uint8_t)(value >> (8 * i));
}

//===----------------------------------------------------------------------===//
// Writer
//===----------------------------------------------------------------------===//

// The writer's string table, grown as strings are added.
typedef struct weft_vm_binary_strings_t {
  weft_allocator_t allocator;
  char* data;
  uint32_t size;
  uint32_t capacity;
} weft_vm_binary_strings_t;

// Adds |string| (NULL: none) and sets |*out_offset| to its offset or
// WEFT_VM_BINARY_NO_STRING.
static weft_status_t weft_vm_binary_strings_add(
    weft_vm_binary_strings_t* strings, const char* string,
    uint32_t* out_offset) {
  *out_offset = WEFT_VM_BINARY_NO_STRING;
  if (!string) return WEFT_OK;
  const size_t length = strlen(string);
  weft_status_t status = weft_vm_array_reserve(
      strings->allocator, (void**)&strings->data, &strings->capacity,
      strings->size, (uint64_t)length + 1, 1, "string bytes");
  if (weft_status_is_ok(status)) {
    memcpy(strings->data + strings->size, string, length + 1);
    *out_offset = strings->size;
    strings->size += (uint32_t)length + 1;
  }
  return status;
}

// One section of the file being written.
typedef struct weft_vm_binary_out_section_t {
  uint32_t offset;
  uint32_t count;
} weft_vm_binary_out_section_t;

// Every string the file holds, in a fixed order: module, source, imports'
// names and signature texts, functions' names and texts, rodata names.
typedef struct weft_vm_binary_string_offsets_t {
  uint32_t name, source_name;
  uint32_t* imports;    // 3 per import: module, function, signature text
  uint32_t* functions;  // 2 per function: name, signature text
  uint32_t* rodata;     // 1 per segment
  uint32_t* values;     // 1 per declared value, in the file's order
  uint32_t* symbols;    // 1 per symbol, in the file's order
} weft_vm_binary_string_offsets_t;

// How many entries each declaration section has.
typedef struct weft_vm_binary_decl_counts_t {
  uint64_t functions, values, dims, symbols;
} weft_vm_binary_decl_counts_t;

// How many values |decls| (of a function of |signature|) declares: its
// arguments (when declared), then its results.
static uint32_t weft_vm_binary_declared_value_count(
    const weft_vm_function_decls_t* decls, weft_vm_signature_t signature) {
  return (decls->args ? signature.arg_count : 0u) +
         (decls->results ? signature.ret_count : 0u);
}

// Declared value |index| of |decls| (arguments first).
static const weft_vm_decl_t* weft_vm_binary_declared_value(
    const weft_vm_function_decls_t* decls, weft_vm_signature_t signature,
    uint32_t index) {
  if (decls->args) {
    if (index < signature.arg_count) return &decls->args[index];
    index -= signature.arg_count;
  }
  return &decls->results[index];
}

static weft_vm_binary_decl_counts_t weft_vm_binary_count_decls(
    const weft_vm_bytecode_t* bytecode) {
  weft_vm_binary_decl_counts_t counts = {0, 0, 0, 0};
  for (uint32_t f = 0; f < bytecode->function_count; ++f) {
    const weft_vm_function_decls_t* decls =
        weft_vm_bytecode_function_decls(bytecode, f);
    if (!decls) continue;
    const weft_vm_signature_t signature = bytecode->functions[f].signature;
    ++counts.functions;
    counts.symbols += decls->symbol_count;
    const uint32_t values = weft_vm_binary_declared_value_count(decls, signature);
    counts.values += values;
    for (uint32_t i = 0; i < values; ++i) {
      counts.dims += weft_vm_binary_declared_value(decls, signature, i)->rank;
    }
  }
  return counts;
}

static weft_status_t weft_vm_binary_collect_strings(
    const weft_vm_bytecode_t* bytecode, weft_vm_binary_strings_t* strings,
    weft_vm_binary_string_offsets_t* offsets) {
  weft_allocator_t allocator = strings->allocator;
  weft_status_t status = weft_allocator_malloc_array(
      allocator, (size_t)bytecode->import_count * 3 + 1, sizeof(uint32_t),
      (void**)&offsets->imports);
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc_array(
        allocator, (size_t)bytecode->function_count * 2 + 1, sizeof(uint32_t),
        (void**)&offsets->functions);
  }
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc_array(
        allocator, (size_t)bytecode->rodata_count + 1, sizeof(uint32_t),
        (void**)&offsets->rodata);
  }
  if (weft_status_is_ok(status)) {
    status = weft_vm_binary_strings_add(
        strings, bytecode->name ? bytecode->name : "", &offsets->name);
  }
  if (weft_status_is_ok(status)) {
    status = weft_vm_binary_strings_add(strings, bytecode->source_name,
                                        &offsets->source_name);
  }
  for (uint32_t i = 0; weft_status_is_ok(status) && i < bytecode->import_count;
       ++i) {
    const weft_vm_import_t* entry = &bytecode->imports[i];
    status = weft_vm_binary_strings_add(strings, entry->module_name,
                                        &offsets->imports[3 * i]);
    if (weft_status_is_ok(status)) {
      status = weft_vm_binary_strings_add(strings, entry->function_name,
                                          &offsets->imports[3 * i + 1]);
    }
    if (weft_status_is_ok(status)) {
      status = weft_vm_binary_strings_add(strings, entry->signature.text,
                                          &offsets->imports[3 * i + 2]);
    }
  }
  for (uint32_t i = 0;
       weft_status_is_ok(status) && i < bytecode->function_count; ++i) {
    const weft_vm_function_t* function = &bytecode->functions[i];
    status = weft_vm_binary_strings_add(strings, function->name,
                                        &offsets->functions[2 * i]);
    if (weft_status_is_ok(status)) {
      status = weft_vm_binary_strings_add(strings, function->signature.text,
                                          &offsets->functions[2 * i + 1]);
    }
  }
  for (uint32_t i = 0; weft_status_is_ok(status) && i < bytecode->rodata_count;
       ++i) {
    status = weft_vm_binary_strings_add(
        strings, bytecode->rodata_names ? bytecode->rodata_names[i] : NULL,
        &offsets->rodata[i]);
  }
  // Declarations: each declaring function's symbols, then its values.
  const weft_vm_binary_decl_counts_t counts =
      weft_vm_binary_count_decls(bytecode);
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc_array(allocator, counts.values + 1,
                                         sizeof(uint32_t),
                                         (void**)&offsets->values);
  }
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc_array(allocator, counts.symbols + 1,
                                         sizeof(uint32_t),
                                         (void**)&offsets->symbols);
  }
  uint32_t value_cursor = 0;
  uint32_t symbol_cursor = 0;
  for (uint32_t f = 0;
       weft_status_is_ok(status) && f < bytecode->function_count; ++f) {
    const weft_vm_function_decls_t* decls =
        weft_vm_bytecode_function_decls(bytecode, f);
    if (!decls) continue;
    const weft_vm_signature_t signature = bytecode->functions[f].signature;
    for (uint32_t i = 0;
         weft_status_is_ok(status) && i < decls->symbol_count; ++i) {
      status = weft_vm_binary_strings_add(strings, decls->symbols[i],
                                          &offsets->symbols[symbol_cursor++]);
    }
    const uint32_t values =
        weft_vm_binary_declared_value_count(decls, signature);
    for (uint32_t i = 0; weft_status_is_ok(status) && i < values; ++i) {
      status = weft_vm_binary_strings_add(
          strings, weft_vm_binary_declared_value(decls, signature, i)->name,
          &offsets->values[value_cursor++]);
    }
  }
  return status;
}

// Writes the declaration sections (13 to 16) at |data| as |sections| lay
// them out.
static void weft_vm_binary_put_decls(
    const weft_vm_bytecode_t* bytecode, uint8_t* data,
    const weft_vm_binary_out_section_t* sections,
    const weft_vm_binary_string_offsets_t* offsets) {
  uint8_t* function_entry =
      data + sections[WEFT_VM_BINARY_SECTION_DECLARED_FUNCTIONS].offset;
  uint8_t* value_entry =
      data + sections[WEFT_VM_BINARY_SECTION_DECLARED_VALUES].offset;
  uint8_t* dim_entry =
      data + sections[WEFT_VM_BINARY_SECTION_DECLARED_DIMS].offset;
  uint8_t* symbol_entry =
      data + sections[WEFT_VM_BINARY_SECTION_DECLARED_SYMBOLS].offset;
  uint32_t value_cursor = 0;
  uint32_t symbol_cursor = 0;
  for (uint32_t f = 0; f < bytecode->function_count; ++f) {
    const weft_vm_function_decls_t* decls =
        weft_vm_bytecode_function_decls(bytecode, f);
    if (!decls) continue;
    const weft_vm_signature_t signature = bytecode->functions[f].signature;
    weft_vm_binary_put_u32(function_entry, f);
    weft_vm_binary_put_u32(
        function_entry + 4,
        (decls->args ? WEFT_VM_BINARY_DECLARED_ARGS : 0u) |
            (decls->results ? WEFT_VM_BINARY_DECLARED_RESULTS : 0u));
    weft_vm_binary_put_u32(function_entry + 8, decls->symbol_count);
    function_entry += 12;
    for (uint32_t i = 0; i < decls->symbol_count; ++i) {
      weft_vm_binary_put_u32(symbol_entry, offsets->symbols[symbol_cursor++]);
      symbol_entry += 4;
    }
    const uint32_t values =
        weft_vm_binary_declared_value_count(decls, signature);
    for (uint32_t i = 0; i < values; ++i) {
      const weft_vm_decl_t* decl =
          weft_vm_binary_declared_value(decls, signature, i);
      weft_vm_binary_put_u32(value_entry, offsets->values[value_cursor++]);
      value_entry[4] = decl->element_type;
      value_entry[5] = decl->rank;
      weft_vm_binary_put_u16(value_entry + 6, 0);
      value_entry += 8;
      for (uint32_t d = 0; d < decl->rank; ++d) {
        const weft_vm_decl_dim_t* dim = &decl->dims[d];
        weft_vm_binary_put_u32(dim_entry, dim->kind);
        weft_vm_binary_put_u64(dim_entry + 4,
                               dim->kind == WEFT_VM_DIM_SYMBOL
                                   ? dim->symbol
                                   : (uint64_t)dim->size);
        dim_entry += 12;
      }
    }
  }
}

// Writes one signature entry and its types; |*type_cursor| counts types.
static void weft_vm_binary_put_signature(uint8_t* entry, uint8_t* types,
                                         uint32_t* type_cursor,
                                         weft_vm_signature_t signature,
                                         uint32_t text) {
  const uint32_t count = (uint32_t)signature.arg_count + signature.ret_count;
  weft_vm_binary_put_u32(entry, *type_cursor);
  weft_vm_binary_put_u16(entry + 4, signature.arg_count);
  weft_vm_binary_put_u16(entry + 6, signature.ret_count);
  weft_vm_binary_put_u32(entry + 8, text);
  if (count) memcpy(types + *type_cursor, signature.types, count);
  *type_cursor += count;
}

weft_status_t weft_vm_binary_write(const weft_vm_bytecode_t* bytecode,
                                   weft_allocator_t allocator,
                                   uint8_t** out_data, size_t* out_length) {
  if (!out_data || !out_length) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "weft_vm_binary_write: out_data or out_length is NULL");
  }
  *out_data = NULL;
  *out_length = 0;
  if (!bytecode) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "weft_vm_binary_write: bytecode is NULL");
  }
  weft_status_t status = weft_vm_bytecode_validate(bytecode);
  if (!weft_status_is_ok(status)) return status;

  weft_vm_binary_strings_t strings = {.allocator = allocator};
  weft_vm_binary_string_offsets_t offsets = {0};
  status = weft_vm_binary_collect_strings(bytecode, &strings, &offsets);

  // Counts per section; the file lays out the non-empty ones in id order.
  uint64_t type_count = 0;
  for (uint32_t i = 0; i < bytecode->import_count; ++i) {
    type_count += (uint64_t)bytecode->imports[i].signature.arg_count +
                  bytecode->imports[i].signature.ret_count;
  }
  for (uint32_t i = 0; i < bytecode->function_count; ++i) {
    type_count += (uint64_t)bytecode->functions[i].signature.arg_count +
                  bytecode->functions[i].signature.ret_count;
  }
  const weft_vm_binary_decl_counts_t decl_counts =
      weft_vm_binary_count_decls(bytecode);
  uint64_t counts[WEFT_VM_BINARY_SECTION_COUNT_] = {
      [WEFT_VM_BINARY_SECTION_MODULE] = 1,
      [WEFT_VM_BINARY_SECTION_STRINGS] = strings.size,
      [WEFT_VM_BINARY_SECTION_SIGNATURES] =
          (uint64_t)bytecode->import_count + bytecode->function_count,
      [WEFT_VM_BINARY_SECTION_TYPES] = type_count,
      [WEFT_VM_BINARY_SECTION_IMPORTS] = bytecode->import_count,
      [WEFT_VM_BINARY_SECTION_FUNCTIONS] = bytecode->function_count,
      [WEFT_VM_BINARY_SECTION_CODE] = bytecode->code_count,
      [WEFT_VM_BINARY_SECTION_OPERANDS] = bytecode->operand_count,
      [WEFT_VM_BINARY_SECTION_CONSTANTS] = bytecode->constant_count,
      [WEFT_VM_BINARY_SECTION_RODATA] = bytecode->rodata_count,
      [WEFT_VM_BINARY_SECTION_RODATA_BYTES] = bytecode->rodata_byte_count,
      [WEFT_VM_BINARY_SECTION_LINES] =
          bytecode->lines ? bytecode->code_count : 0,
      [WEFT_VM_BINARY_SECTION_DECLARED_FUNCTIONS] = decl_counts.functions,
      [WEFT_VM_BINARY_SECTION_DECLARED_VALUES] = decl_counts.values,
      [WEFT_VM_BINARY_SECTION_DECLARED_DIMS] = decl_counts.dims,
      [WEFT_VM_BINARY_SECTION_DECLARED_SYMBOLS] = decl_counts.symbols,
  };
  uint32_t section_count = 0;
  for (uint32_t id = 1; id < WEFT_VM_BINARY_SECTION_COUNT_; ++id) {
    section_count += counts[id] != 0;
  }
  weft_vm_binary_out_section_t sections[WEFT_VM_BINARY_SECTION_COUNT_] = {0};
  uint64_t end = WEFT_VM_BINARY_HEADER_SIZE +
                 (uint64_t)section_count * WEFT_VM_BINARY_SECTION_ENTRY_SIZE;
  for (uint32_t id = 1; id < WEFT_VM_BINARY_SECTION_COUNT_; ++id) {
    if (!counts[id]) continue;
    end = (end + 7) & ~(uint64_t)7;  // sections start 8-aligned
    sections[id].offset = (uint32_t)end;
    sections[id].count = (uint32_t)counts[id];
    end += counts[id] * kWeftVmBinarySections[id].entry_size;
    if (end > UINT32_MAX) break;
  }
  if (weft_status_is_ok(status) && end > UINT32_MAX) {
    status = WEFT_STATUS(RESOURCE_EXHAUSTED,
                         "weft_vm_binary_write: module '%s' needs more than "
                         "4 GiB",
                         bytecode->name ? bytecode->name : "?");
  }
  uint8_t* data = NULL;
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc(allocator, (size_t)end, (void**)&data);
  }
  if (weft_status_is_ok(status)) {
    memcpy(data, WEFT_VM_BINARY_MAGIC, WEFT_VM_BINARY_MAGIC_SIZE);
    weft_vm_binary_put_u32(data + 8, WEFT_VM_BINARY_VERSION);
    weft_vm_binary_put_u32(data + 12, (uint32_t)end);
    weft_vm_binary_put_u32(data + 16, section_count);
    uint8_t* table = data + WEFT_VM_BINARY_HEADER_SIZE;
    for (uint32_t id = 1; id < WEFT_VM_BINARY_SECTION_COUNT_; ++id) {
      if (!counts[id]) continue;
      weft_vm_binary_put_u32(table, id);
      weft_vm_binary_put_u32(table + 4, sections[id].offset);
      weft_vm_binary_put_u32(
          table + 8, sections[id].count * kWeftVmBinarySections[id].entry_size);
      weft_vm_binary_put_u32(table + 12, sections[id].count);
      table += WEFT_VM_BINARY_SECTION_ENTRY_SIZE;
    }
#define WEFT_VM_BINARY_AT(id) \
  (data + sections[WEFT_VM_BINARY_SECTION_##id].offset)
    weft_vm_binary_put_u32(WEFT_VM_BINARY_AT(MODULE), offsets.name);
    weft_vm_binary_put_u32(WEFT_VM_BINARY_AT(MODULE) + 4, offsets.source_name);
    memcpy(WEFT_VM_BINARY_AT(STRINGS), strings.data, strings.size);
    uint32_t type_cursor = 0;
    for (uint32_t i = 0; i < bytecode->import_count; ++i) {
      uint8_t* entry = WEFT_VM_BINARY_AT(IMPORTS) + 12 * (size_t)i;
      weft_vm_binary_put_u32(entry, offsets.imports[3 * i]);
      weft_vm_binary_put_u32(entry + 4, offsets.imports[3 * i + 1]);
      weft_vm_binary_put_u32(entry + 8, i);
      weft_vm_binary_put_signature(
          WEFT_VM_BINARY_AT(SIGNATURES) + 12 * (size_t)i,
          WEFT_VM_BINARY_AT(TYPES), &type_cursor,
          bytecode->imports[i].signature, offsets.imports[3 * i + 2]);
    }
    for (uint32_t i = 0; i < bytecode->function_count; ++i) {
      const weft_vm_function_t* function = &bytecode->functions[i];
      const uint32_t signature = bytecode->import_count + i;
      uint8_t* entry = WEFT_VM_BINARY_AT(FUNCTIONS) + 24 * (size_t)i;
      weft_vm_binary_put_u32(entry, offsets.functions[2 * i]);
      weft_vm_binary_put_u32(entry + 4, signature);
      weft_vm_binary_put_u32(entry + 8, function->flags);
      weft_vm_binary_put_u16(entry + 12, function->scalar_count);
      weft_vm_binary_put_u16(entry + 14, function->ref_count);
      weft_vm_binary_put_u32(entry + 16, function->code_offset);
      weft_vm_binary_put_u32(entry + 20, function->code_count);
      weft_vm_binary_put_signature(
          WEFT_VM_BINARY_AT(SIGNATURES) + 12 * (size_t)signature,
          WEFT_VM_BINARY_AT(TYPES), &type_cursor, function->signature,
          offsets.functions[2 * i + 1]);
    }
    for (uint32_t i = 0; i < bytecode->code_count; ++i) {
      const weft_vm_instruction_t* instruction = &bytecode->code[i];
      uint8_t* entry = WEFT_VM_BINARY_AT(CODE) + 8 * (size_t)i;
      entry[0] = instruction->op;
      entry[1] = instruction->reserved;
      weft_vm_binary_put_u16(entry + 2, instruction->a);
      weft_vm_binary_put_u32(entry + 4, instruction->imm);
      if (bytecode->lines) {
        weft_vm_binary_put_u32(WEFT_VM_BINARY_AT(LINES) + 4 * (size_t)i,
                               bytecode->lines[i]);
      }
    }
    for (uint32_t i = 0; i < bytecode->operand_count; ++i) {
      weft_vm_binary_put_u16(WEFT_VM_BINARY_AT(OPERANDS) + 2 * (size_t)i,
                             bytecode->operands[i]);
    }
    for (uint32_t i = 0; i < bytecode->constant_count; ++i) {
      weft_vm_binary_put_u64(WEFT_VM_BINARY_AT(CONSTANTS) + 8 * (size_t)i,
                             bytecode->constants[i]);
    }
    for (uint32_t i = 0; i < bytecode->rodata_count; ++i) {
      uint8_t* entry = WEFT_VM_BINARY_AT(RODATA) + 12 * (size_t)i;
      weft_vm_binary_put_u32(entry, bytecode->rodata[i].offset);
      weft_vm_binary_put_u32(entry + 4, bytecode->rodata[i].length);
      weft_vm_binary_put_u32(entry + 8, offsets.rodata[i]);
    }
    if (bytecode->rodata_byte_count) {
      memcpy(WEFT_VM_BINARY_AT(RODATA_BYTES), bytecode->rodata_bytes,
             bytecode->rodata_byte_count);
    }
#undef WEFT_VM_BINARY_AT
    weft_vm_binary_put_decls(bytecode, data, sections, &offsets);
    *out_data = data;
    *out_length = (size_t)end;
  }
  weft_allocator_free(allocator, strings.data);
  weft_allocator_free(allocator, offsets.imports);
  weft_allocator_free(allocator, offsets.functions);
  weft_allocator_free(allocator, offsets.rodata);
  weft_allocator_free(allocator, offsets.values);
  weft_allocator_free(allocator, offsets.symbols);
  return status;
}

//===----------------------------------------------------------------------===//
// Loader
//===----------------------------------------------------------------------===//

typedef struct weft_vm_binary_section_t {
  bool present;
  uint32_t offset;
  uint32_t size;
  uint32_t count;
} weft_vm_binary_section_t;

typedef struct weft_vm_binary_loader_t {
  const uint8_t* data;
  size_t length;
  weft_vm_binary_section_t sections[WEFT_VM_BINARY_SECTION_COUNT_];
  weft_vm_bytecode_builder_t builder;
  weft_vm_builder_signature_t* signatures;  // one per signature entry
} weft_vm_binary_loader_t;

// INVALID_ARGUMENT "binary module: FIELD at offset N: PROBLEM".
static weft_status_t weft_vm_binary_invalid(const char* field, size_t offset,
                                            const char* format, ...)
    __attribute__((format(printf, 3, 4)));

static weft_status_t weft_vm_binary_invalid(const char* field, size_t offset,
                                            const char* format, ...) {
  char problem[384];
  va_list args;
  va_start(args, format);
  vsnprintf(problem, sizeof(problem), format, args);
  va_end(args);
  return WEFT_STATUS(INVALID_ARGUMENT, "binary module: %s at offset %zu: %s",
                     field, offset, problem);
}

// The byte offset of entry |index|'s field at |field_offset| in section |id|.
static size_t weft_vm_binary_entry_offset(const weft_vm_binary_loader_t* loader,
                                          uint32_t id, uint32_t index,
                                          uint32_t field_offset) {
  return (size_t)loader->sections[id].offset +
         (size_t)index * kWeftVmBinarySections[id].entry_size + field_offset;
}

// Pointer to entry |index| of section |id| (range-checked at the table).
static const uint8_t* weft_vm_binary_entry(
    const weft_vm_binary_loader_t* loader, uint32_t id, uint32_t index) {
  return loader->data + weft_vm_binary_entry_offset(loader, id, index, 0);
}

// Entry |index| of a section: its bytes, its offset in the file and its
// name for messages ("functions[2]").
typedef struct weft_vm_binary_entry_t {
  const uint8_t* bytes;
  size_t at;
  char field[48];
} weft_vm_binary_entry_t;

static void weft_vm_binary_entry_at(const weft_vm_binary_loader_t* loader,
                                    uint32_t id, uint32_t index,
                                    weft_vm_binary_entry_t* out_entry) {
  out_entry->bytes = weft_vm_binary_entry(loader, id, index);
  out_entry->at = weft_vm_binary_entry_offset(loader, id, index, 0);
  snprintf(out_entry->field, sizeof(out_entry->field), "%s[%" PRIu32 "]",
           kWeftVmBinarySections[id].name, index);
}

// Reads the header and the section table.
static weft_status_t weft_vm_binary_read_header(
    weft_vm_binary_loader_t* loader) {
  const uint8_t* data = loader->data;
  if (loader->length < WEFT_VM_BINARY_HEADER_SIZE) {
    return weft_vm_binary_invalid(
        "header", 0, "the file is %zu bytes, shorter than the %u-byte header",
        loader->length, WEFT_VM_BINARY_HEADER_SIZE);
  }
  if (memcmp(data, WEFT_VM_BINARY_MAGIC, WEFT_VM_BINARY_MAGIC_SIZE) != 0) {
    return weft_vm_binary_invalid(
        "header.magic", 0, "not \"WEFTVM\\0\\1\" (not a weft VM module)");
  }
  const uint32_t version = weft_vm_binary_get_u32(data + 8);
  if (version != WEFT_VM_BINARY_VERSION) {
    return weft_vm_binary_invalid("header.version", 8,
                                  "version %" PRIu32 ", this loader reads %u",
                                  version, WEFT_VM_BINARY_VERSION);
  }
  const uint32_t file_size = weft_vm_binary_get_u32(data + 12);
  if (file_size != loader->length) {
    return weft_vm_binary_invalid(
        "header.file_size", 12,
        "says %" PRIu32 " bytes but %zu were given (truncated or padded)",
        file_size, loader->length);
  }
  const uint32_t section_count = weft_vm_binary_get_u32(data + 16);
  if (section_count > WEFT_VM_BINARY_SECTION_COUNT_ - 1) {
    return weft_vm_binary_invalid(
        "header.section_count", 16, "%" PRIu32 " sections, at most %u exist",
        section_count, WEFT_VM_BINARY_SECTION_COUNT_ - 1);
  }
  if (weft_vm_binary_get_u32(data + 20) != 0) {
    return weft_vm_binary_invalid("header.reserved", 20, "is not 0");
  }
  const uint64_t table_end =
      WEFT_VM_BINARY_HEADER_SIZE +
      (uint64_t)section_count * WEFT_VM_BINARY_SECTION_ENTRY_SIZE;
  if (table_end > loader->length) {
    return weft_vm_binary_invalid("header.section_count", 16,
                                  "the table of %" PRIu32
                                  " sections ends at %" PRIu64
                                  ", past the file's %zu bytes",
                                  section_count, table_end, loader->length);
  }
  for (uint32_t i = 0; i < section_count; ++i) {
    const size_t at = WEFT_VM_BINARY_HEADER_SIZE +
                      (size_t)i * WEFT_VM_BINARY_SECTION_ENTRY_SIZE;
    const uint32_t id = weft_vm_binary_get_u32(data + at);
    const uint32_t offset = weft_vm_binary_get_u32(data + at + 4);
    const uint32_t size = weft_vm_binary_get_u32(data + at + 8);
    const uint32_t count = weft_vm_binary_get_u32(data + at + 12);
    char field[64];
    snprintf(field, sizeof(field), "sections[%" PRIu32 "]", i);
    if (id == 0 || id >= WEFT_VM_BINARY_SECTION_COUNT_) {
      return weft_vm_binary_invalid(
          field, at, "section id %" PRIu32 " is unknown (1 to %u)", id,
          WEFT_VM_BINARY_SECTION_COUNT_ - 1);
    }
    const char* name = kWeftVmBinarySections[id].name;
    if (loader->sections[id].present) {
      return weft_vm_binary_invalid(field, at, "a second %s section", name);
    }
    const uint64_t expected_size =
        (uint64_t)count * kWeftVmBinarySections[id].entry_size;
    if (size != expected_size) {
      return weft_vm_binary_invalid(
          field, at + 8,
          "%s section of %" PRIu32 " entries of %" PRIu32
          " bytes has size %" PRIu32 ", not %" PRIu64,
          name, count, kWeftVmBinarySections[id].entry_size, size,
          expected_size);
    }
    if (offset < table_end || (uint64_t)offset + size > loader->length) {
      return weft_vm_binary_invalid(
          field, at + 4,
          "%s section [%" PRIu32 ", %" PRIu64
          ") is not between the section table's end (%" PRIu64
          ") and the file's end (%zu)",
          name, offset, (uint64_t)offset + size, table_end, loader->length);
    }
    loader->sections[id] =
        (weft_vm_binary_section_t){true, offset, size, count};
  }
  if (!loader->sections[WEFT_VM_BINARY_SECTION_MODULE].present ||
      loader->sections[WEFT_VM_BINARY_SECTION_MODULE].count != 1) {
    return weft_vm_binary_invalid("sections", WEFT_VM_BINARY_HEADER_SIZE,
                                  "no module section with one entry");
  }
  return WEFT_OK;
}

// Checks string |offset| (read from |field| at |at|): inside the strings
// section and NUL-terminated there. |optional|: WEFT_VM_BINARY_NO_STRING is
// allowed (sets *out_string NULL).
static weft_status_t weft_vm_binary_string(
    const weft_vm_binary_loader_t* loader, const char* field, size_t at,
    uint32_t offset, bool optional, const char** out_string,
    size_t* out_length) {
  *out_string = NULL;
  *out_length = 0;
  if (optional && offset == WEFT_VM_BINARY_NO_STRING) return WEFT_OK;
  const weft_vm_binary_section_t* strings =
      &loader->sections[WEFT_VM_BINARY_SECTION_STRINGS];
  if (offset >= strings->size) {
    return weft_vm_binary_invalid(field, at,
                                  "string %" PRIu32 " is past the %" PRIu32
                                  "-byte string table",
                                  offset, strings->size);
  }
  const char* start = (const char*)loader->data + strings->offset + offset;
  const char* nul = memchr(start, '\0', strings->size - offset);
  if (!nul) {
    return weft_vm_binary_invalid(field, at,
                                  "string %" PRIu32
                                  " runs off the end of the string table (no "
                                  "NUL)",
                                  offset);
  }
  *out_string = start;
  *out_length = (size_t)(nul - start);
  return WEFT_OK;
}

// Reads a string field into the builder's strings (*|out_string|).
static weft_status_t weft_vm_binary_copy_string(weft_vm_binary_loader_t* loader,
                                                const char* field, size_t at,
                                                uint32_t offset, bool optional,
                                                uint32_t* out_string) {
  const char* string = NULL;
  size_t length = 0;
  *out_string = WEFT_VM_BUILDER_NO_STRING;
  weft_status_t status = weft_vm_binary_string(loader, field, at, offset,
                                               optional, &string, &length);
  if (weft_status_is_ok(status) && string) {
    status = weft_vm_bytecode_builder_add_string(&loader->builder, string,
                                                 length, out_string);
  }
  return status;
}

// Reads signature entry |index|: its types and, when present, canonical
// text that must agree with them.
static weft_status_t weft_vm_binary_read_signature(
    weft_vm_binary_loader_t* loader, uint32_t index,
    weft_vm_parsed_signature_t* parsed) {
  weft_vm_binary_entry_t located;
  weft_vm_binary_entry_at(loader, WEFT_VM_BINARY_SECTION_SIGNATURES, index,
                          &located);
  const uint8_t* entry = located.bytes;
  const char* field = located.field;
  const size_t at = located.at;
  const uint32_t first = weft_vm_binary_get_u32(entry);
  const uint16_t arg_count = weft_vm_binary_get_u16(entry + 4);
  const uint16_t ret_count = weft_vm_binary_get_u16(entry + 6);
  const uint32_t text_offset = weft_vm_binary_get_u32(entry + 8);
  if (arg_count > WEFT_VM_SIGNATURE_MAX_VALUES ||
      ret_count > WEFT_VM_SIGNATURE_MAX_VALUES) {
    return weft_vm_binary_invalid(field, at + 4,
                                  "%u arguments and %u results; at most %d "
                                  "each",
                                  arg_count, ret_count,
                                  WEFT_VM_SIGNATURE_MAX_VALUES);
  }
  const uint32_t count = (uint32_t)arg_count + ret_count;
  const weft_vm_binary_section_t* types =
      &loader->sections[WEFT_VM_BINARY_SECTION_TYPES];
  if ((uint64_t)first + count > types->count) {
    return weft_vm_binary_invalid(field, at,
                                  "types [%" PRIu32 ", %" PRIu64
                                  ") are past the %" PRIu32 " signature types",
                                  first, (uint64_t)first + count, types->count);
  }
  const uint8_t* type_bytes = loader->data + types->offset + first;
  for (uint32_t i = 0; i < count; ++i) {
    if (type_bytes[i] >= WEFT_VM_TYPE_COUNT_) {
      return weft_vm_binary_invalid("signature_types",
                                    (size_t)types->offset + first + i,
                                    "type %u is unknown (0 to %d)",
                                    type_bytes[i], WEFT_VM_TYPE_COUNT_ - 1);
    }
  }
  const char* text = NULL;
  size_t text_length = 0;
  weft_status_t status = weft_vm_binary_string(
      loader, field, at + 8, text_offset, true, &text, &text_length);
  if (!weft_status_is_ok(status)) return status;
  if (!text) {
    // The types say it all: every ref "r?".
    memset(parsed, 0, sizeof(*parsed));
    parsed->arg_count = arg_count;
    parsed->ret_count = ret_count;
    memcpy(parsed->types, type_bytes, count);
    weft_vm_signature_types_text(arg_count, ret_count, type_bytes,
                                 parsed->canonical, sizeof(parsed->canonical));
    return WEFT_OK;
  }
  status = weft_vm_signature_parse(text, text_length, parsed);
  if (!weft_status_is_ok(status)) {
    weft_status_t invalid = weft_vm_binary_invalid(field, at + 8, "%s",
                                                   weft_status_message(status));
    weft_status_free(status);
    return invalid;
  }
  if (strlen(parsed->canonical) != text_length ||
      memcmp(parsed->canonical, text, text_length) != 0) {
    return weft_vm_binary_invalid(
        field, at + 8, "text '%.*s' is not canonical ('%s')",
        (int)(text_length > 200 ? 200 : text_length), text, parsed->canonical);
  }
  if (parsed->arg_count != arg_count || parsed->ret_count != ret_count ||
      memcmp(parsed->types, type_bytes, count) != 0) {
    return weft_vm_binary_invalid(field, at, "types do not match its text '%s'",
                                  parsed->canonical);
  }
  return WEFT_OK;
}

// Looks up signature |index| read from |field| at |at|.
static weft_status_t weft_vm_binary_signature_ref(
    const weft_vm_binary_loader_t* loader, const char* field, size_t at,
    uint32_t index, weft_vm_builder_signature_t* out_signature) {
  const uint32_t count =
      loader->sections[WEFT_VM_BINARY_SECTION_SIGNATURES].count;
  if (index >= count) {
    return weft_vm_binary_invalid(
        field, at, "signature %" PRIu32 " is past the %" PRIu32 " signatures",
        index, count);
  }
  *out_signature = loader->signatures[index];
  return WEFT_OK;
}

// Reads the string field at |field_offset| of |entry| into the builder.
static weft_status_t weft_vm_binary_entry_string(
    weft_vm_binary_loader_t* loader, const weft_vm_binary_entry_t* entry,
    uint32_t field_offset, bool optional, uint32_t* out_string) {
  return weft_vm_binary_copy_string(
      loader, entry->field, entry->at + field_offset,
      weft_vm_binary_get_u32(entry->bytes + field_offset), optional,
      out_string);
}

// Reads the signature index at |field_offset| of |entry|.
static weft_status_t weft_vm_binary_entry_signature(
    const weft_vm_binary_loader_t* loader, const weft_vm_binary_entry_t* entry,
    uint32_t field_offset, weft_vm_builder_signature_t* out_signature) {
  return weft_vm_binary_signature_ref(
      loader, entry->field, entry->at + field_offset,
      weft_vm_binary_get_u32(entry->bytes + field_offset), out_signature);
}

static weft_status_t weft_vm_binary_read_module(
    weft_vm_binary_loader_t* loader) {
  const uint32_t id = WEFT_VM_BINARY_SECTION_MODULE;
  const uint8_t* entry = weft_vm_binary_entry(loader, id, 0);
  const size_t at = weft_vm_binary_entry_offset(loader, id, 0, 0);
  weft_status_t status = weft_vm_binary_copy_string(
      loader, "module.name", at, weft_vm_binary_get_u32(entry), false,
      &loader->builder.name);
  if (weft_status_is_ok(status)) {
    status = weft_vm_binary_copy_string(loader, "module.source_name", at + 4,
                                        weft_vm_binary_get_u32(entry + 4), true,
                                        &loader->builder.source_name);
  }
  return status;
}

static weft_status_t weft_vm_binary_read_signatures(
    weft_vm_binary_loader_t* loader, weft_allocator_t allocator) {
  const uint32_t count =
      loader->sections[WEFT_VM_BINARY_SECTION_SIGNATURES].count;
  weft_vm_parsed_signature_t* parsed = NULL;
  weft_status_t status = weft_allocator_malloc_array(
      allocator, count ? count : 1, sizeof(*loader->signatures),
      (void**)&loader->signatures);
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc(allocator, sizeof(*parsed), (void**)&parsed);
  }
  for (uint32_t i = 0; weft_status_is_ok(status) && i < count; ++i) {
    status = weft_vm_binary_read_signature(loader, i, parsed);
    if (weft_status_is_ok(status)) {
      status = weft_vm_bytecode_builder_add_signature(&loader->builder, parsed,
                                                      &loader->signatures[i]);
    }
  }
  weft_allocator_free(allocator, parsed);
  return status;
}

static weft_status_t weft_vm_binary_read_imports(
    weft_vm_binary_loader_t* loader) {
  const uint32_t id = WEFT_VM_BINARY_SECTION_IMPORTS;
  weft_status_t status = WEFT_OK;
  for (uint32_t i = 0;
       weft_status_is_ok(status) && i < loader->sections[id].count; ++i) {
    weft_vm_binary_entry_t entry;
    weft_vm_binary_entry_at(loader, id, i, &entry);
    weft_vm_builder_import_t import_entry;
    status = weft_vm_binary_entry_string(loader, &entry, 0, false,
                                         &import_entry.module_name);
    if (weft_status_is_ok(status)) {
      status = weft_vm_binary_entry_string(loader, &entry, 4, false,
                                           &import_entry.function_name);
    }
    if (weft_status_is_ok(status)) {
      status = weft_vm_binary_entry_signature(loader, &entry, 8,
                                              &import_entry.signature);
    }
    if (weft_status_is_ok(status)) {
      status = weft_vm_bytecode_builder_add_import(&loader->builder,
                                                   &import_entry, NULL);
    }
  }
  return status;
}

static weft_status_t weft_vm_binary_read_functions(
    weft_vm_binary_loader_t* loader) {
  const uint32_t id = WEFT_VM_BINARY_SECTION_FUNCTIONS;
  weft_status_t status = WEFT_OK;
  for (uint32_t i = 0;
       weft_status_is_ok(status) && i < loader->sections[id].count; ++i) {
    weft_vm_binary_entry_t entry;
    weft_vm_binary_entry_at(loader, id, i, &entry);
    weft_vm_builder_function_t function = {
        .flags = weft_vm_binary_get_u32(entry.bytes + 8),
        .scalar_count = weft_vm_binary_get_u16(entry.bytes + 12),
        .ref_count = weft_vm_binary_get_u16(entry.bytes + 14),
        .code_offset = weft_vm_binary_get_u32(entry.bytes + 16),
        .code_count = weft_vm_binary_get_u32(entry.bytes + 20),
    };
    status = weft_vm_binary_entry_string(loader, &entry, 0, false,
                                         &function.name);
    if (weft_status_is_ok(status)) {
      status = weft_vm_binary_entry_signature(loader, &entry, 4,
                                              &function.signature);
    }
    if (weft_status_is_ok(status) &&
        (function.flags & ~(uint32_t)WEFT_VM_FUNCTION_FLAG_EXPORT)) {
      status = weft_vm_binary_invalid(entry.field, entry.at + 8,
                                      "flags 0x%" PRIx32 " has unknown bits",
                                      function.flags);
    }
    if (weft_status_is_ok(status)) {
      status = weft_vm_bytecode_builder_add_function(&loader->builder,
                                                     &function, NULL);
    }
  }
  return status;
}

// Code (with lines), operands, constants, rodata.
static weft_status_t weft_vm_binary_read_tables(
    weft_vm_binary_loader_t* loader) {
  weft_vm_bytecode_builder_t* builder = &loader->builder;
  const weft_vm_binary_section_t* code =
      &loader->sections[WEFT_VM_BINARY_SECTION_CODE];
  const weft_vm_binary_section_t* lines =
      &loader->sections[WEFT_VM_BINARY_SECTION_LINES];
  weft_status_t status = WEFT_OK;
  if (lines->present && lines->count != code->count) {
    status =
        weft_vm_binary_invalid("sections.lines", lines->offset,
                               "%" PRIu32 " lines for %" PRIu32 " instructions",
                               lines->count, code->count);
  }
  builder->has_lines = lines->present;
  for (uint32_t i = 0; weft_status_is_ok(status) && i < code->count; ++i) {
    const uint8_t* entry = loader->data + code->offset + 8 * (size_t)i;
    weft_vm_instruction_t instruction = {
        .op = entry[0],
        .reserved = entry[1],
        .a = weft_vm_binary_get_u16(entry + 2),
    };
    instruction.imm = weft_vm_binary_get_u32(entry + 4);
    const uint32_t line =
        lines->present ? weft_vm_binary_get_u32(loader->data + lines->offset +
                                                4 * (size_t)i)
                       : 0;
    status =
        weft_vm_bytecode_builder_add_instruction(builder, instruction, line);
  }
  const weft_vm_binary_section_t* operands =
      &loader->sections[WEFT_VM_BINARY_SECTION_OPERANDS];
  for (uint32_t i = 0; weft_status_is_ok(status) && i < operands->count; ++i) {
    const uint16_t operand =
        weft_vm_binary_get_u16(loader->data + operands->offset + 2 * (size_t)i);
    uint32_t first = 0;
    status =
        weft_vm_bytecode_builder_add_operands(builder, &operand, 1, &first);
  }
  const weft_vm_binary_section_t* constants =
      &loader->sections[WEFT_VM_BINARY_SECTION_CONSTANTS];
  for (uint32_t i = 0; weft_status_is_ok(status) && i < constants->count; ++i) {
    uint32_t index = 0;
    status = weft_vm_bytecode_builder_add_constant(
        builder,
        weft_vm_binary_get_u64(loader->data + constants->offset +
                               8 * (size_t)i),
        &index);
  }
  const weft_vm_binary_section_t* bytes =
      &loader->sections[WEFT_VM_BINARY_SECTION_RODATA_BYTES];
  if (weft_status_is_ok(status) && bytes->count) {
    status = weft_vm_bytecode_builder_add_rodata_bytes(
        builder, loader->data + bytes->offset, bytes->count);
  }
  const uint32_t id = WEFT_VM_BINARY_SECTION_RODATA;
  for (uint32_t i = 0;
       weft_status_is_ok(status) && i < loader->sections[id].count; ++i) {
    weft_vm_binary_entry_t entry;
    weft_vm_binary_entry_at(loader, id, i, &entry);
    const uint32_t offset = weft_vm_binary_get_u32(entry.bytes);
    const uint32_t length = weft_vm_binary_get_u32(entry.bytes + 4);
    if ((uint64_t)offset + length > bytes->count) {
      status = weft_vm_binary_invalid(entry.field, entry.at,
                                      "bytes [%" PRIu32 ", %" PRIu64
                                      ") are past the %" PRIu32 " rodata bytes",
                                      offset, (uint64_t)offset + length,
                                      bytes->count);
      break;
    }
    uint32_t name = WEFT_VM_BUILDER_NO_STRING;
    status = weft_vm_binary_entry_string(loader, &entry, 8, true, &name);
    if (weft_status_is_ok(status)) {
      status = weft_vm_bytecode_builder_add_rodata_range(builder, offset,
                                                         length, name, NULL);
    }
  }
  return status;
}

// Reads the declaration sections into the builder's functions (read
// first): per declared_functions entry, in increasing function order, its
// symbols, its values (arguments, then results) and their dimensions, each
// section read in order to its end.
static weft_status_t weft_vm_binary_read_decls(
    weft_vm_binary_loader_t* loader) {
  weft_vm_bytecode_builder_t* builder = &loader->builder;
  const weft_vm_binary_section_t* values =
      &loader->sections[WEFT_VM_BINARY_SECTION_DECLARED_VALUES];
  const weft_vm_binary_section_t* dims =
      &loader->sections[WEFT_VM_BINARY_SECTION_DECLARED_DIMS];
  const weft_vm_binary_section_t* symbols =
      &loader->sections[WEFT_VM_BINARY_SECTION_DECLARED_SYMBOLS];
  const uint32_t id = WEFT_VM_BINARY_SECTION_DECLARED_FUNCTIONS;
  uint32_t value_cursor = 0;
  uint32_t dim_cursor = 0;
  uint32_t symbol_cursor = 0;
  uint64_t next_function = 0;  // functions come in increasing order
  weft_status_t status = WEFT_OK;
  for (uint32_t i = 0;
       weft_status_is_ok(status) && i < loader->sections[id].count; ++i) {
    weft_vm_binary_entry_t entry;
    weft_vm_binary_entry_at(loader, id, i, &entry);
    const uint32_t index = weft_vm_binary_get_u32(entry.bytes);
    const uint32_t declared = weft_vm_binary_get_u32(entry.bytes + 4);
    const uint32_t symbol_count = weft_vm_binary_get_u32(entry.bytes + 8);
    if (index < next_function || index >= builder->function_count) {
      return weft_vm_binary_invalid(
          entry.field, entry.at,
          "function %" PRIu32 " is not in [%" PRIu64 ", %" PRIu32
          ") (declared functions come in increasing order)",
          index, next_function, builder->function_count);
    }
    next_function = (uint64_t)index + 1;
    if (declared == 0 || (declared & ~(WEFT_VM_BINARY_DECLARED_ARGS |
                                       WEFT_VM_BINARY_DECLARED_RESULTS))) {
      return weft_vm_binary_invalid(entry.field, entry.at + 4,
                                    "declared 0x%" PRIx32
                                    " is not 1 (arguments), 2 (results) or 3",
                                    declared);
    }
    if (symbol_count > WEFT_VM_TENSOR_MAX_SYMBOLS ||
        (uint64_t)symbol_cursor + symbol_count > symbols->count) {
      return weft_vm_binary_invalid(
          entry.field, entry.at + 8,
          "%" PRIu32 " symbols (at most %d) from %" PRIu32
          " are past the %" PRIu32 " declared symbols",
          symbol_count, WEFT_VM_TENSOR_MAX_SYMBOLS, symbol_cursor,
          symbols->count);
    }
    weft_vm_builder_function_t* function = &builder->functions[index];
    function->declared = declared;
    function->decl_first = builder->decl_count;
    function->symbol_first = builder->symbol_count;
    function->symbol_count = symbol_count;
    for (uint32_t s = 0; weft_status_is_ok(status) && s < symbol_count; ++s) {
      weft_vm_binary_entry_t symbol;
      weft_vm_binary_entry_at(loader, WEFT_VM_BINARY_SECTION_DECLARED_SYMBOLS,
                              symbol_cursor++, &symbol);
      uint32_t name = 0;
      status = weft_vm_binary_entry_string(loader, &symbol, 0, false, &name);
      if (weft_status_is_ok(status)) {
        status = weft_vm_bytecode_builder_add_symbol(builder, name, NULL);
      }
    }
    const uint32_t value_count =
        ((declared & WEFT_VM_BINARY_DECLARED_ARGS)
             ? function->signature.arg_count
             : 0u) +
        ((declared & WEFT_VM_BINARY_DECLARED_RESULTS)
             ? function->signature.ret_count
             : 0u);
    if (weft_status_is_ok(status) &&
        (uint64_t)value_cursor + value_count > values->count) {
      return weft_vm_binary_invalid(
          entry.field, entry.at,
          "its %" PRIu32 " values from %" PRIu32 " are past the %" PRIu32
          " declared values",
          value_count, value_cursor, values->count);
    }
    for (uint32_t v = 0; weft_status_is_ok(status) && v < value_count; ++v) {
      weft_vm_binary_entry_t value;
      weft_vm_binary_entry_at(loader, WEFT_VM_BINARY_SECTION_DECLARED_VALUES,
                              value_cursor++, &value);
      weft_vm_builder_decl_t decl = {
          .element_type = value.bytes[4],
          .rank = value.bytes[5],
          .dim_first = builder->dim_count,
      };
      status = weft_vm_binary_entry_string(loader, &value, 0, false, &decl.name);
      if (weft_status_is_ok(status) &&
          (decl.element_type >= WEFT_VM_ELEMENT_TYPE_COUNT_ ||
           decl.rank > WEFT_VM_TENSOR_MAX_RANK ||
           weft_vm_binary_get_u16(value.bytes + 6) != 0)) {
        return weft_vm_binary_invalid(
            value.field, value.at + 4,
            "element type %u, rank %u, reserved %u: element types are 0 to "
            "%d, ranks at most %d, reserved 0",
            decl.element_type, decl.rank,
            weft_vm_binary_get_u16(value.bytes + 6),
            WEFT_VM_ELEMENT_TYPE_COUNT_ - 1, WEFT_VM_TENSOR_MAX_RANK);
      }
      if (weft_status_is_ok(status) &&
          (uint64_t)dim_cursor + decl.rank > dims->count) {
        return weft_vm_binary_invalid(
            value.field, value.at + 5,
            "%u dimensions from %" PRIu32 " are past the %" PRIu32
            " declared dimensions",
            decl.rank, dim_cursor, dims->count);
      }
      for (uint32_t d = 0; weft_status_is_ok(status) && d < decl.rank; ++d) {
        weft_vm_binary_entry_t dim_entry;
        weft_vm_binary_entry_at(loader, WEFT_VM_BINARY_SECTION_DECLARED_DIMS,
                                dim_cursor++, &dim_entry);
        const uint32_t kind = weft_vm_binary_get_u32(dim_entry.bytes);
        const uint64_t number = weft_vm_binary_get_u64(dim_entry.bytes + 4);
        const bool ok =
            (kind == WEFT_VM_DIM_STATIC && number <= (uint64_t)INT64_MAX) ||
            (kind == WEFT_VM_DIM_DYNAMIC && number == 0) ||
            (kind == WEFT_VM_DIM_SYMBOL && number < symbol_count);
        if (!ok) {
          return weft_vm_binary_invalid(
              dim_entry.field, dim_entry.at,
              "kind %" PRIu32 " with value %" PRIu64
              " is not a size (0, at most 2^63-1), dynamic (1, 0) or a "
              "symbol of the function's %" PRIu32 " (2, index)",
              kind, number, symbol_count);
        }
        weft_vm_decl_dim_t dim = {.kind = kind};
        if (kind == WEFT_VM_DIM_STATIC) dim.size = (int64_t)number;
        if (kind == WEFT_VM_DIM_SYMBOL) dim.symbol = (uint32_t)number;
        status = weft_vm_bytecode_builder_add_dim(builder, dim);
      }
      if (weft_status_is_ok(status)) {
        status = weft_vm_bytecode_builder_add_decl(builder, &decl, NULL);
      }
    }
  }
  const struct {
    const char* name;
    uint32_t read;
    uint32_t count;
  } kLeft[] = {{"declared_values", value_cursor, values->count},
               {"declared_dims", dim_cursor, dims->count},
               {"declared_symbols", symbol_cursor, symbols->count}};
  for (size_t i = 0; weft_status_is_ok(status) && i < 3; ++i) {
    if (kLeft[i].read != kLeft[i].count) {
      status = weft_vm_binary_invalid(
          "sections", WEFT_VM_BINARY_HEADER_SIZE,
          "%s has %" PRIu32 " entries, the declared functions use %" PRIu32,
          kLeft[i].name, kLeft[i].count, kLeft[i].read);
    }
  }
  return status;
}

weft_status_t weft_vm_binary_load(const uint8_t* data, size_t length,
                                  weft_allocator_t allocator,
                                  weft_vm_bytecode_t** out_bytecode) {
  if (!out_bytecode) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "weft_vm_binary_load: out_bytecode is NULL");
  }
  *out_bytecode = NULL;
  if (!data && length) {
    return WEFT_STATUS(INVALID_ARGUMENT, "weft_vm_binary_load: data is NULL");
  }
  weft_vm_binary_loader_t* loader = NULL;
  weft_status_t status =
      weft_allocator_malloc(allocator, sizeof(*loader), (void**)&loader);
  if (!weft_status_is_ok(status)) return status;
  loader->data = data;
  loader->length = length;
  weft_vm_bytecode_builder_initialize(allocator, &loader->builder);
  status = weft_vm_binary_read_header(loader);
  if (weft_status_is_ok(status)) status = weft_vm_binary_read_module(loader);
  if (weft_status_is_ok(status)) {
    status = weft_vm_binary_read_signatures(loader, allocator);
  }
  if (weft_status_is_ok(status)) status = weft_vm_binary_read_imports(loader);
  if (weft_status_is_ok(status)) status = weft_vm_binary_read_functions(loader);
  if (weft_status_is_ok(status)) status = weft_vm_binary_read_decls(loader);
  if (weft_status_is_ok(status)) status = weft_vm_binary_read_tables(loader);
  if (weft_status_is_ok(status)) {
    status = weft_vm_bytecode_builder_finish(&loader->builder, out_bytecode);
    if (!weft_status_is_ok(status)) {
      status = weft_status_annotate(status, "while loading a binary module");
    }
  }
  weft_vm_bytecode_builder_deinitialize(&loader->builder);
  weft_allocator_free(allocator, loader->signatures);
  weft_allocator_free(allocator, loader);
  return status;
}
