// weft VM: building a module in one allocation (see bytecode_builder.h).
#include "vm/bytecode_builder.h"

#include <inttypes.h>
#include <string.h>

#include "vm/name_table.h"
#include "vm/signature_text.h"

// The most entries of any one table, so counts and offsets fit a uint32_t
// with WEFT_VM_BUILDER_NO_STRING left over.
#define WEFT_VM_BUILDER_MAX_ENTRIES (UINT32_MAX - 1u)

void weft_vm_bytecode_builder_initialize(
    weft_allocator_t allocator, weft_vm_bytecode_builder_t* out_builder) {
  memset(out_builder, 0, sizeof(*out_builder));
  out_builder->allocator = allocator;
  out_builder->name = WEFT_VM_BUILDER_NO_STRING;
  out_builder->source_name = WEFT_VM_BUILDER_NO_STRING;
  out_builder->has_lines = true;
}

void weft_vm_bytecode_builder_deinitialize(
    weft_vm_bytecode_builder_t* builder) {
  weft_allocator_t allocator = builder->allocator;
  void* arrays[] = {
      builder->strings,  builder->types,       builder->functions,
      builder->imports,  builder->code,        builder->lines,
      builder->operands, builder->constants,   builder->constant_slots,
      builder->rodata,   builder->rodata_bytes, builder->decls,
      builder->dims,     builder->symbols};
  for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); ++i) {
    weft_allocator_free(allocator, arrays[i]);
  }
  memset(builder, 0, sizeof(*builder));
}

weft_status_t weft_vm_array_reserve(weft_allocator_t allocator, void** data,
                                    uint32_t* capacity, uint32_t count,
                                    uint64_t add, size_t element_size,
                                    const char* what) {
  const uint64_t needed = (uint64_t)count + add;
  if (needed > WEFT_VM_BUILDER_MAX_ENTRIES) {
    return WEFT_STATUS(RESOURCE_EXHAUSTED,
                       "a module holds at most %" PRIu32 " %s (%" PRIu64
                       " needed)",
                       WEFT_VM_BUILDER_MAX_ENTRIES, what, needed);
  }
  if (needed <= *capacity) return WEFT_OK;
  uint64_t new_capacity = *capacity ? (uint64_t)*capacity * 2 : 16;
  while (new_capacity < needed) new_capacity *= 2;
  if (new_capacity > WEFT_VM_BUILDER_MAX_ENTRIES) {
    new_capacity = WEFT_VM_BUILDER_MAX_ENTRIES;
  }
  void* grown = *data;
  weft_status_t status = weft_allocator_realloc(
      allocator, (size_t)new_capacity * element_size, &grown);
  if (weft_status_is_ok(status)) {
    *data = grown;
    *capacity = (uint32_t)new_capacity;
  }
  return status;
}

#define WEFT_VM_BUILDER_RESERVE(builder, array, count, capacity, add, what) \
  weft_vm_array_reserve((builder)->allocator, (void**)&(builder)->array,    \
                        &(builder)->capacity, (builder)->count, (add),      \
                        sizeof(*(builder)->array), (what))

weft_status_t weft_vm_bytecode_builder_add_string(
    weft_vm_bytecode_builder_t* builder, const char* text, size_t length,
    uint32_t* out_string) {
  *out_string = WEFT_VM_BUILDER_NO_STRING;
  weft_status_t status =
      WEFT_VM_BUILDER_RESERVE(builder, strings, string_size, string_capacity,
                              (uint64_t)length + 1, "string bytes");
  if (weft_status_is_ok(status)) {
    if (length) memcpy(builder->strings + builder->string_size, text, length);
    builder->strings[builder->string_size + length] = '\0';
    *out_string = builder->string_size;
    builder->string_size += (uint32_t)length + 1;
  }
  return status;
}

weft_status_t weft_vm_bytecode_builder_add_signature(
    weft_vm_bytecode_builder_t* builder,
    const weft_vm_parsed_signature_t* parsed,
    weft_vm_builder_signature_t* out_signature) {
  memset(out_signature, 0, sizeof(*out_signature));
  out_signature->text = WEFT_VM_BUILDER_NO_STRING;
  const uint32_t count = (uint32_t)parsed->arg_count + parsed->ret_count;
  weft_status_t status = WEFT_VM_BUILDER_RESERVE(
      builder, types, type_count, type_capacity, count, "signature types");
  if (weft_status_is_ok(status) && !weft_vm_parsed_signature_is_plain(parsed)) {
    status = weft_vm_bytecode_builder_add_string(builder, parsed->canonical,
                                                 strlen(parsed->canonical),
                                                 &out_signature->text);
  }
  if (weft_status_is_ok(status)) {
    if (count) {
      memcpy(builder->types + builder->type_count, parsed->types, count);
    }
    out_signature->types = builder->type_count;
    out_signature->arg_count = parsed->arg_count;
    out_signature->ret_count = parsed->ret_count;
    builder->type_count += count;
  }
  return status;
}

weft_status_t weft_vm_bytecode_builder_add_function(
    weft_vm_bytecode_builder_t* builder,
    const weft_vm_builder_function_t* function, uint32_t* out_index) {
  weft_status_t status = WEFT_VM_BUILDER_RESERVE(
      builder, functions, function_count, function_capacity, 1, "functions");
  if (weft_status_is_ok(status)) {
    if (out_index) *out_index = builder->function_count;
    builder->functions[builder->function_count++] = *function;
  }
  return status;
}

weft_status_t weft_vm_bytecode_builder_add_import(
    weft_vm_bytecode_builder_t* builder,
    const weft_vm_builder_import_t* import_entry, uint32_t* out_index) {
  weft_status_t status = WEFT_VM_BUILDER_RESERVE(builder, imports, import_count,
                                                 import_capacity, 1, "imports");
  if (weft_status_is_ok(status)) {
    if (out_index) *out_index = builder->import_count;
    builder->imports[builder->import_count++] = *import_entry;
  }
  return status;
}

weft_status_t weft_vm_bytecode_builder_add_instruction(
    weft_vm_bytecode_builder_t* builder, weft_vm_instruction_t instruction,
    uint32_t line) {
  // Code and lines grow together: the capacity moves only when both did.
  uint32_t code_capacity = builder->code_capacity;
  uint32_t line_capacity = builder->code_capacity;
  weft_status_t status = weft_vm_array_reserve(
      builder->allocator, (void**)&builder->code, &code_capacity,
      builder->code_count, 1, sizeof(*builder->code), "instructions");
  if (weft_status_is_ok(status)) {
    status = weft_vm_array_reserve(builder->allocator, (void**)&builder->lines,
                                   &line_capacity, builder->code_count, 1,
                                   sizeof(*builder->lines), "instructions");
  }
  if (weft_status_is_ok(status)) {
    builder->code_capacity = code_capacity;
    builder->code[builder->code_count] = instruction;
    builder->lines[builder->code_count] = line;
    ++builder->code_count;
  }
  return status;
}

weft_status_t weft_vm_bytecode_builder_add_operands(
    weft_vm_bytecode_builder_t* builder, const uint16_t* operands,
    uint32_t count, uint32_t* out_first) {
  *out_first = builder->operand_count;
  weft_status_t status = WEFT_VM_BUILDER_RESERVE(
      builder, operands, operand_count, operand_capacity, count, "operands");
  if (weft_status_is_ok(status) && count) {
    memcpy(builder->operands + builder->operand_count, operands,
           count * sizeof(*operands));
    builder->operand_count += count;
  }
  return status;
}

weft_status_t weft_vm_bytecode_builder_add_constant(
    weft_vm_bytecode_builder_t* builder, uint64_t value, uint32_t* out_index) {
  weft_status_t status = WEFT_VM_BUILDER_RESERVE(
      builder, constants, constant_count, constant_capacity, 1, "constants");
  if (weft_status_is_ok(status)) {
    *out_index = builder->constant_count;
    builder->constants[builder->constant_count++] = value;
  }
  return status;
}

// The slot of |value| in |slots| (|capacity| a power of two), or the empty
// slot where it goes.
static uint32_t* weft_vm_builder_constant_slot(const uint64_t* constants,
                                               uint32_t* slots,
                                               uint32_t capacity,
                                               uint64_t value) {
  uint64_t hash = value * 0x9e3779b97f4a7c15ull;
  uint32_t index = (uint32_t)(hash >> 32) & (capacity - 1);
  while (slots[index] && constants[slots[index] - 1] != value) {
    index = (index + 1) & (capacity - 1);
  }
  return &slots[index];
}

weft_status_t weft_vm_bytecode_builder_intern_constant(
    weft_vm_bytecode_builder_t* builder, uint64_t value, uint32_t* out_index) {
  weft_status_t status = WEFT_OK;
  // At most half the slots used; rebuild from the pool when growing.
  if ((uint64_t)(builder->constant_count + 1) * 2 >
      builder->constant_slot_capacity) {
    const uint64_t capacity = builder->constant_slot_capacity
                                  ? builder->constant_slot_capacity * 2ull
                                  : 64;
    uint32_t* slots = NULL;
    if (capacity > UINT32_MAX) {
      status = WEFT_STATUS(RESOURCE_EXHAUSTED, "too many constants");
    } else {
      status = weft_allocator_malloc_array(builder->allocator, capacity,
                                           sizeof(*slots), (void**)&slots);
    }
    if (weft_status_is_ok(status)) {
      for (uint32_t i = 0; i < builder->constant_count; ++i) {
        *weft_vm_builder_constant_slot(builder->constants, slots,
                                       (uint32_t)capacity,
                                       builder->constants[i]) = i + 1;
      }
      weft_allocator_free(builder->allocator, builder->constant_slots);
      builder->constant_slots = slots;
      builder->constant_slot_capacity = (uint32_t)capacity;
    }
  }
  if (!weft_status_is_ok(status)) return status;
  uint32_t* slot =
      weft_vm_builder_constant_slot(builder->constants, builder->constant_slots,
                                    builder->constant_slot_capacity, value);
  if (*slot) {
    *out_index = *slot - 1;
    return WEFT_OK;
  }
  status = weft_vm_bytecode_builder_add_constant(builder, value, out_index);
  if (weft_status_is_ok(status)) *slot = *out_index + 1;
  return status;
}

weft_status_t weft_vm_bytecode_builder_add_rodata_bytes(
    weft_vm_bytecode_builder_t* builder, const uint8_t* bytes, size_t length) {
  weft_status_t status =
      WEFT_VM_BUILDER_RESERVE(builder, rodata_bytes, rodata_byte_count,
                              rodata_byte_capacity, length, "rodata bytes");
  if (weft_status_is_ok(status) && length) {
    memcpy(builder->rodata_bytes + builder->rodata_byte_count, bytes, length);
    builder->rodata_byte_count += (uint32_t)length;
  }
  return status;
}

weft_status_t weft_vm_bytecode_builder_add_rodata_range(
    weft_vm_bytecode_builder_t* builder, uint32_t offset, uint32_t length,
    uint32_t name, uint32_t* out_index) {
  weft_status_t status = WEFT_VM_BUILDER_RESERVE(
      builder, rodata, rodata_count, rodata_capacity, 1, "rodata segments");
  if (weft_status_is_ok(status)) {
    if (out_index) *out_index = builder->rodata_count;
    builder->rodata[builder->rodata_count++] =
        (weft_vm_builder_rodata_t){offset, length, name};
  }
  return status;
}

weft_status_t weft_vm_bytecode_builder_add_rodata(
    weft_vm_bytecode_builder_t* builder, const uint8_t* bytes, size_t length,
    uint32_t name, uint32_t* out_index) {
  const uint32_t offset = builder->rodata_byte_count;
  weft_status_t status =
      weft_vm_bytecode_builder_add_rodata_bytes(builder, bytes, length);
  if (weft_status_is_ok(status)) {
    status = weft_vm_bytecode_builder_add_rodata_range(
        builder, offset, (uint32_t)length, name, out_index);
  }
  return status;
}

weft_status_t weft_vm_bytecode_builder_add_decl(
    weft_vm_bytecode_builder_t* builder, const weft_vm_builder_decl_t* decl,
    uint32_t* out_index) {
  weft_status_t status = WEFT_VM_BUILDER_RESERVE(
      builder, decls, decl_count, decl_capacity, 1, "declared values");
  if (weft_status_is_ok(status)) {
    if (out_index) *out_index = builder->decl_count;
    builder->decls[builder->decl_count++] = *decl;
  }
  return status;
}

weft_status_t weft_vm_bytecode_builder_add_dim(
    weft_vm_bytecode_builder_t* builder, weft_vm_decl_dim_t dim) {
  weft_status_t status = WEFT_VM_BUILDER_RESERVE(
      builder, dims, dim_count, dim_capacity, 1, "declared dimensions");
  if (weft_status_is_ok(status)) builder->dims[builder->dim_count++] = dim;
  return status;
}

weft_status_t weft_vm_bytecode_builder_add_symbol(
    weft_vm_bytecode_builder_t* builder, uint32_t name, uint32_t* out_index) {
  weft_status_t status = WEFT_VM_BUILDER_RESERVE(
      builder, symbols, symbol_count, symbol_capacity, 1, "symbols");
  if (weft_status_is_ok(status)) {
    if (out_index) *out_index = builder->symbol_count;
    builder->symbols[builder->symbol_count++] = name;
  }
  return status;
}

bool weft_vm_name_is_identifier(const char* name, size_t length,
                                bool allow_dots) {
  if (length == 0) return false;
  for (size_t i = 0; i < length; ++i) {
    const char c = name[i];
    const bool letter =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    const bool digit = c >= '0' && c <= '9';
    if (!(letter || (i > 0 && (digit || (allow_dots && c == '.'))))) {
      return false;
    }
  }
  return true;
}

// Checks that string |offset| names an identifier and, when |names| is
// given, that no other entry has it (|what| and |index| for the message).
static weft_status_t weft_vm_builder_check_name(
    const weft_vm_bytecode_builder_t* builder, weft_vm_name_table_t* names,
    const char* what, uint32_t index, const char* name, bool allow_dots) {
  const size_t length = strlen(name);
  if (!weft_vm_name_is_identifier(name, length, allow_dots)) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "%s %" PRIu32
                       " is named '%.64s', not an identifier "
                       "([A-Za-z_][A-Za-z0-9_%s]*)",
                       what, index, name, allow_dots ? "." : "");
  }
  if (!names) return WEFT_OK;
  bool inserted = false;
  uint32_t existing = 0;
  weft_status_t status = weft_vm_name_table_insert(names, name, length, index,
                                                   &inserted, &existing);
  if (weft_status_is_ok(status) && !inserted) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "%s %" PRIu32 " and %" PRIu32 " are both named '%s'",
                         what, existing, index, name);
  }
  return status;
}

// The checks of weft_vm_bytecode_builder_finish on names.
static weft_status_t weft_vm_builder_check_names(
    const weft_vm_bytecode_builder_t* builder) {
  const char* strings = builder->strings;
  if (builder->name == WEFT_VM_BUILDER_NO_STRING) {
    return WEFT_STATUS(INVALID_ARGUMENT, "the module has no name");
  }
  weft_status_t status = weft_vm_builder_check_name(
      builder, NULL, "module", 0, strings + builder->name, false);
  weft_vm_name_table_t names;
  weft_vm_name_table_initialize(builder->allocator, &names);
  for (uint32_t i = 0; weft_status_is_ok(status) && i < builder->function_count;
       ++i) {
    status =
        weft_vm_builder_check_name(builder, &names, "function", i,
                                   strings + builder->functions[i].name, true);
  }
  weft_vm_name_table_deinitialize(&names);
  weft_vm_name_table_initialize(builder->allocator, &names);
  for (uint32_t i = 0; weft_status_is_ok(status) && i < builder->rodata_count;
       ++i) {
    if (builder->rodata[i].name != WEFT_VM_BUILDER_NO_STRING) {
      status =
          weft_vm_builder_check_name(builder, &names, "rodata segment", i,
                                     strings + builder->rodata[i].name, true);
    }
  }
  weft_vm_name_table_deinitialize(&names);
  // Imports are unique by "module.function"; the keys live in |keys|.
  char* keys = NULL;
  if (weft_status_is_ok(status) && builder->import_count) {
    status = weft_allocator_malloc(builder->allocator, builder->string_size,
                                   (void**)&keys);
  }
  weft_vm_name_table_initialize(builder->allocator, &names);
  size_t key_used = 0;
  for (uint32_t i = 0; weft_status_is_ok(status) && i < builder->import_count;
       ++i) {
    const char* module_name = strings + builder->imports[i].module_name;
    const char* function_name = strings + builder->imports[i].function_name;
    status = weft_vm_builder_check_name(builder, NULL, "import module", i,
                                        module_name, false);
    if (weft_status_is_ok(status)) {
      status = weft_vm_builder_check_name(builder, NULL, "import function", i,
                                          function_name, true);
    }
    if (weft_status_is_ok(status)) {
      // Both names are in the string table, so their sum fits |keys|.
      char* key = keys + key_used;
      const size_t module_length = strlen(module_name);
      const size_t function_length = strlen(function_name);
      memcpy(key, module_name, module_length);
      key[module_length] = '.';
      memcpy(key + module_length + 1, function_name, function_length);
      key[module_length + 1 + function_length] = '\0';
      key_used += module_length + function_length + 2;
      status =
          weft_vm_builder_check_name(builder, &names, "import", i, key, true);
    }
  }
  weft_vm_name_table_deinitialize(&names);
  weft_allocator_free(builder->allocator, keys);
  return status;
}

// Offsets of each array in the one allocation.
typedef struct weft_vm_builder_layout_t {
  size_t functions, imports, code, constants, rodata, lines, rodata_names,
      function_decls, decls, dims, symbols, operands, types, rodata_bytes,
      strings, total;
} weft_vm_builder_layout_t;

// Reserves |count| * |size| bytes at 8-byte alignment; returns the offset.
static size_t weft_vm_builder_layout_add(size_t* total, uint64_t count,
                                         size_t size) {
  const size_t offset = (*total + 7) & ~(size_t)7;
  *total = offset + (size_t)count * size;
  return offset;
}

static weft_vm_builder_layout_t weft_vm_builder_layout(
    const weft_vm_bytecode_builder_t* builder, bool has_names,
    uint32_t declaring_functions) {
  weft_vm_builder_layout_t layout;
  size_t total = sizeof(weft_vm_bytecode_t);
  layout.functions = weft_vm_builder_layout_add(&total, builder->function_count,
                                                sizeof(weft_vm_function_t));
  layout.imports = weft_vm_builder_layout_add(&total, builder->import_count,
                                              sizeof(weft_vm_import_t));
  layout.code = weft_vm_builder_layout_add(&total, builder->code_count,
                                           sizeof(weft_vm_instruction_t));
  layout.constants = weft_vm_builder_layout_add(&total, builder->constant_count,
                                                sizeof(uint64_t));
  layout.rodata = weft_vm_builder_layout_add(&total, builder->rodata_count,
                                             sizeof(weft_vm_rodata_t));
  layout.lines = weft_vm_builder_layout_add(
      &total, builder->has_lines ? builder->code_count : 0, sizeof(uint32_t));
  layout.rodata_names = weft_vm_builder_layout_add(
      &total, has_names ? builder->rodata_count : 0, sizeof(const char*));
  layout.function_decls = weft_vm_builder_layout_add(
      &total, declaring_functions ? builder->function_count : 0,
      sizeof(weft_vm_function_decls_t));
  layout.decls = weft_vm_builder_layout_add(&total, builder->decl_count,
                                            sizeof(weft_vm_decl_t));
  layout.dims = weft_vm_builder_layout_add(&total, builder->dim_count,
                                           sizeof(weft_vm_decl_dim_t));
  layout.symbols = weft_vm_builder_layout_add(&total, builder->symbol_count,
                                              sizeof(const char*));
  layout.operands = weft_vm_builder_layout_add(&total, builder->operand_count,
                                               sizeof(uint16_t));
  layout.types = weft_vm_builder_layout_add(&total, builder->type_count, 1);
  layout.rodata_bytes =
      weft_vm_builder_layout_add(&total, builder->rodata_byte_count, 1);
  layout.strings = weft_vm_builder_layout_add(&total, builder->string_size, 1);
  layout.total = total;
  return layout;
}

// The module's view of a builder signature.
static weft_vm_signature_t weft_vm_builder_signature(
    const uint8_t* types, const char* strings,
    weft_vm_builder_signature_t signature) {
  return (weft_vm_signature_t){
      .arg_count = signature.arg_count,
      .ret_count = signature.ret_count,
      .types = types ? types + signature.types : NULL,
      .text = signature.text == WEFT_VM_BUILDER_NO_STRING
                  ? NULL
                  : strings + signature.text,
  };
}

// Copies |count| * |size| bytes from |source| to |base| + |offset| and
// returns the copy, or NULL when |count| is 0.
static void* weft_vm_builder_place(uint8_t* base, size_t offset,
                                   const void* source, uint64_t count,
                                   size_t size) {
  if (count == 0) return NULL;
  if (source) memcpy(base + offset, source, (size_t)count * size);
  return base + offset;
}

// How many values function |function| declares.
static uint64_t weft_vm_builder_declared_count(
    const weft_vm_builder_function_t* function) {
  uint64_t count = 0;
  if (function->declared & WEFT_VM_BUILDER_DECLARED_ARGS) {
    count += function->signature.arg_count;
  }
  if (function->declared & WEFT_VM_BUILDER_DECLARED_RESULTS) {
    count += function->signature.ret_count;
  }
  return count;
}

// Checks that the declarations' ranges lie inside their tables (what the
// module's pointers are made from; the validator checks the rest) and
// counts the functions that declare something.
static weft_status_t weft_vm_builder_check_decls(
    const weft_vm_bytecode_builder_t* builder,
    uint32_t* out_declaring_functions) {
  *out_declaring_functions = 0;
  for (uint32_t i = 0; i < builder->function_count; ++i) {
    const weft_vm_builder_function_t* function = &builder->functions[i];
    if (function->declared & ~(uint32_t)(WEFT_VM_BUILDER_DECLARED_ARGS |
                                         WEFT_VM_BUILDER_DECLARED_RESULTS)) {
      return WEFT_STATUS(INVALID_ARGUMENT,
                         "function %" PRIu32 " declares unknown values (0x%" PRIx32
                         ")",
                         i, function->declared);
    }
    if (!function->declared) {
      if (function->symbol_count) {
        return WEFT_STATUS(INVALID_ARGUMENT,
                           "function %" PRIu32
                           " has symbols but declares no values",
                           i);
      }
      continue;
    }
    ++*out_declaring_functions;
    const uint64_t decl_end =
        (uint64_t)function->decl_first + weft_vm_builder_declared_count(function);
    const uint64_t symbol_end =
        (uint64_t)function->symbol_first + function->symbol_count;
    if (decl_end > builder->decl_count || symbol_end > builder->symbol_count) {
      return WEFT_STATUS(INVALID_ARGUMENT,
                         "function %" PRIu32 ": declarations [%" PRIu32
                         ", %" PRIu64 ") or symbols [%" PRIu32 ", %" PRIu64
                         ") are past the module's %" PRIu32 " and %" PRIu32,
                         i, function->decl_first, decl_end,
                         function->symbol_first, symbol_end,
                         builder->decl_count, builder->symbol_count);
    }
  }
  for (uint32_t i = 0; i < builder->decl_count; ++i) {
    const weft_vm_builder_decl_t* decl = &builder->decls[i];
    const uint64_t dim_end = (uint64_t)decl->dim_first + decl->rank;
    if (dim_end > builder->dim_count || decl->name >= builder->string_size) {
      return WEFT_STATUS(INVALID_ARGUMENT,
                         "declared value %" PRIu32 ": dimensions [%" PRIu32
                         ", %" PRIu64 ") past the module's %" PRIu32
                         ", or no name",
                         i, decl->dim_first, dim_end, builder->dim_count);
    }
  }
  for (uint32_t i = 0; i < builder->symbol_count; ++i) {
    if (builder->symbols[i] >= builder->string_size) {
      return WEFT_STATUS(INVALID_ARGUMENT, "symbol %" PRIu32 " has no name",
                         i);
    }
  }
  return WEFT_OK;
}

// Makes the module's declarations: |function_decls| (one per function),
// |decls|, |dims| and |symbols| are the allocation's arrays.
static void weft_vm_builder_place_decls(
    const weft_vm_bytecode_builder_t* builder, const char* strings,
    weft_vm_function_decls_t* function_decls, weft_vm_decl_t* decls,
    weft_vm_decl_dim_t* dims, const char** symbols) {
  for (uint32_t i = 0; i < builder->dim_count; ++i) dims[i] = builder->dims[i];
  for (uint32_t i = 0; i < builder->symbol_count; ++i) {
    symbols[i] = strings + builder->symbols[i];
  }
  for (uint32_t i = 0; i < builder->decl_count; ++i) {
    const weft_vm_builder_decl_t* source = &builder->decls[i];
    decls[i] = (weft_vm_decl_t){
        .name = strings + source->name,
        .element_type = source->element_type,
        .rank = source->rank,
        .dims = source->rank ? dims + source->dim_first : NULL,
    };
  }
  for (uint32_t i = 0; i < builder->function_count; ++i) {
    const weft_vm_builder_function_t* source = &builder->functions[i];
    weft_vm_function_decls_t* out = &function_decls[i];
    memset(out, 0, sizeof(*out));
    if (!source->declared) continue;
    uint32_t first = source->decl_first;
    if (source->declared & WEFT_VM_BUILDER_DECLARED_ARGS) {
      out->args = decls + first;
      first += source->signature.arg_count;
    }
    if (source->declared & WEFT_VM_BUILDER_DECLARED_RESULTS) {
      out->results = decls + first;
    }
    out->symbol_count = source->symbol_count;
    out->symbols = source->symbol_count ? symbols + source->symbol_first : NULL;
  }
}

weft_status_t weft_vm_bytecode_builder_finish(
    const weft_vm_bytecode_builder_t* builder,
    weft_vm_bytecode_t** out_bytecode) {
  *out_bytecode = NULL;
  weft_status_t status = weft_vm_builder_check_names(builder);
  uint32_t declaring_functions = 0;
  if (weft_status_is_ok(status)) {
    status = weft_vm_builder_check_decls(builder, &declaring_functions);
  }
  if (!weft_status_is_ok(status)) return status;
  bool has_names = false;
  for (uint32_t i = 0; i < builder->rodata_count; ++i) {
    has_names |= builder->rodata[i].name != WEFT_VM_BUILDER_NO_STRING;
  }
  const weft_vm_builder_layout_t layout =
      weft_vm_builder_layout(builder, has_names, declaring_functions);
  uint8_t* base = NULL;
  status =
      weft_allocator_malloc(builder->allocator, layout.total, (void**)&base);
  if (!weft_status_is_ok(status)) return status;

  weft_vm_bytecode_t* bytecode = (weft_vm_bytecode_t*)base;
  const char* strings = weft_vm_builder_place(
      base, layout.strings, builder->strings, builder->string_size, 1);
  const uint8_t* types = weft_vm_builder_place(
      base, layout.types, builder->types, builder->type_count, 1);
  bytecode->name = strings + builder->name;
  bytecode->source_name = builder->source_name == WEFT_VM_BUILDER_NO_STRING
                              ? NULL
                              : strings + builder->source_name;
  bytecode->code_count = builder->code_count;
  bytecode->code =
      weft_vm_builder_place(base, layout.code, builder->code,
                            builder->code_count, sizeof(weft_vm_instruction_t));
  if (builder->has_lines) {
    bytecode->lines =
        weft_vm_builder_place(base, layout.lines, builder->lines,
                              builder->code_count, sizeof(uint32_t));
  }
  bytecode->operand_count = builder->operand_count;
  bytecode->operands =
      weft_vm_builder_place(base, layout.operands, builder->operands,
                            builder->operand_count, sizeof(uint16_t));
  bytecode->constant_count = builder->constant_count;
  bytecode->constants =
      weft_vm_builder_place(base, layout.constants, builder->constants,
                            builder->constant_count, sizeof(uint64_t));
  bytecode->rodata_byte_count = builder->rodata_byte_count;
  bytecode->rodata_bytes =
      weft_vm_builder_place(base, layout.rodata_bytes, builder->rodata_bytes,
                            builder->rodata_byte_count, 1);

  weft_vm_function_t* functions = weft_vm_builder_place(
      base, layout.functions, NULL, builder->function_count,
      sizeof(weft_vm_function_t));
  for (uint32_t i = 0; i < builder->function_count; ++i) {
    const weft_vm_builder_function_t* source = &builder->functions[i];
    functions[i] = (weft_vm_function_t){
        .name = strings + source->name,
        .signature =
            weft_vm_builder_signature(types, strings, source->signature),
        .scalar_count = source->scalar_count,
        .ref_count = source->ref_count,
        .code_offset = source->code_offset,
        .code_count = source->code_count,
        .flags = source->flags,
    };
  }
  bytecode->function_count = builder->function_count;
  bytecode->functions = functions;
  if (declaring_functions) {
    weft_vm_function_decls_t* function_decls =
        (weft_vm_function_decls_t*)(base + layout.function_decls);
    weft_vm_builder_place_decls(builder, strings, function_decls,
                                (weft_vm_decl_t*)(base + layout.decls),
                                (weft_vm_decl_dim_t*)(base + layout.dims),
                                (const char**)(base + layout.symbols));
    bytecode->function_decls = function_decls;
  }

  weft_vm_import_t* imports =
      weft_vm_builder_place(base, layout.imports, NULL, builder->import_count,
                            sizeof(weft_vm_import_t));
  for (uint32_t i = 0; i < builder->import_count; ++i) {
    const weft_vm_builder_import_t* source = &builder->imports[i];
    imports[i] = (weft_vm_import_t){
        .module_name = strings + source->module_name,
        .function_name = strings + source->function_name,
        .signature =
            weft_vm_builder_signature(types, strings, source->signature),
    };
  }
  bytecode->import_count = builder->import_count;
  bytecode->imports = imports;

  weft_vm_rodata_t* rodata =
      weft_vm_builder_place(base, layout.rodata, NULL, builder->rodata_count,
                            sizeof(weft_vm_rodata_t));
  const char** rodata_names =
      has_names
          ? weft_vm_builder_place(base, layout.rodata_names, NULL,
                                  builder->rodata_count, sizeof(const char*))
          : NULL;
  for (uint32_t i = 0; i < builder->rodata_count; ++i) {
    rodata[i] = (weft_vm_rodata_t){builder->rodata[i].offset,
                                   builder->rodata[i].length};
    if (rodata_names) {
      rodata_names[i] = builder->rodata[i].name == WEFT_VM_BUILDER_NO_STRING
                            ? NULL
                            : strings + builder->rodata[i].name;
    }
  }
  bytecode->rodata_count = builder->rodata_count;
  bytecode->rodata = rodata;
  bytecode->rodata_names = rodata_names;

  status = weft_vm_bytecode_validate(bytecode);
  if (weft_status_is_ok(status)) {
    *out_bytecode = bytecode;
  } else {
    weft_vm_bytecode_free(builder->allocator, bytecode);
  }
  return status;
}
