// weft VM: building a module in one allocation.
//
// The assembler and the binary loader both add a module's parts to a
// builder (growable arrays, strings by offset) and then call
// weft_vm_bytecode_builder_finish, which checks the names (identifiers as
// the text format writes them, no duplicates), packs everything into one
// allocation beginning with the weft_vm_bytecode_t (bytecode.h) and runs
// weft_vm_bytecode_validate on it. The arrays are public so the assembler
// can patch branch targets and call operands once names resolve.
// Single-threaded.
#ifndef WEFT_VM_BYTECODE_BUILDER_H_
#define WEFT_VM_BYTECODE_BUILDER_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vm/bytecode.h"
#include "vm/signature.h"
#include "weft/allocator.h"
#include "weft/status.h"

// A string offset that means "no string".
#define WEFT_VM_BUILDER_NO_STRING UINT32_MAX

// A signature: |types| is an offset into the builder's type bytes, |text|
// a string offset or WEFT_VM_BUILDER_NO_STRING when the types say it all.
typedef struct weft_vm_builder_signature_t {
  uint32_t types;
  uint16_t arg_count;
  uint16_t ret_count;
  uint32_t text;
} weft_vm_builder_signature_t;

// Which of a function's values are declared
// (weft_vm_builder_function_t.declared).
enum weft_vm_builder_declared_bits_e {
  WEFT_VM_BUILDER_DECLARED_ARGS = 1u << 0,
  WEFT_VM_BUILDER_DECLARED_RESULTS = 1u << 1,
};

typedef struct weft_vm_builder_function_t {
  uint32_t name;  // string offset
  weft_vm_builder_signature_t signature;
  weft_vm_function_flags_t flags;
  uint16_t scalar_count;
  uint16_t ref_count;
  uint32_t code_offset;
  uint32_t code_count;
  // Declarations (0: none): with DECLARED_ARGS the arguments' are
  // decls[decl_first, + arg_count), then with DECLARED_RESULTS the
  // results'; the function's symbols are symbols[symbol_first, +
  // symbol_count).
  uint32_t declared;
  uint32_t decl_first;
  uint32_t symbol_first;
  uint32_t symbol_count;
} weft_vm_builder_function_t;

// One declared value: a name and a tensor type of |rank| dimensions
// dims[dim_first, + rank) (element_type NONE: none).
typedef struct weft_vm_builder_decl_t {
  uint32_t name;  // string offset
  uint8_t element_type;
  uint8_t rank;
  uint32_t dim_first;
} weft_vm_builder_decl_t;

typedef struct weft_vm_builder_import_t {
  uint32_t module_name;    // string offset
  uint32_t function_name;  // string offset
  weft_vm_builder_signature_t signature;
} weft_vm_builder_import_t;

typedef struct weft_vm_builder_rodata_t {
  uint32_t offset;  // into rodata_bytes
  uint32_t length;
  uint32_t name;  // string offset or WEFT_VM_BUILDER_NO_STRING (anonymous)
} weft_vm_builder_rodata_t;

typedef struct weft_vm_bytecode_builder_t {
  weft_allocator_t allocator;
  uint32_t name;         // string offset or WEFT_VM_BUILDER_NO_STRING
  uint32_t source_name;  // string offset or WEFT_VM_BUILDER_NO_STRING
  // When false, finish leaves the module's |lines| NULL.
  bool has_lines;

  // NUL-terminated strings back to back, addressed by offset.
  char* strings;
  uint32_t string_size, string_capacity;
  // Signature types (weft_vm_value_type_t each).
  uint8_t* types;
  uint32_t type_count, type_capacity;
  weft_vm_builder_function_t* functions;
  uint32_t function_count, function_capacity;
  weft_vm_builder_import_t* imports;
  uint32_t import_count, import_capacity;
  // code[i]'s source line is lines[i].
  weft_vm_instruction_t* code;
  uint32_t* lines;
  uint32_t code_count, code_capacity;
  uint16_t* operands;
  uint32_t operand_count, operand_capacity;
  uint64_t* constants;
  uint32_t constant_count, constant_capacity;
  // Open-addressed constant indices + 1 (0: empty) for interning.
  uint32_t* constant_slots;
  uint32_t constant_slot_capacity;
  weft_vm_builder_rodata_t* rodata;
  uint32_t rodata_count, rodata_capacity;
  uint8_t* rodata_bytes;
  uint32_t rodata_byte_count, rodata_byte_capacity;
  // Declarations: values, their dimensions and the functions' symbols
  // (string offsets).
  weft_vm_builder_decl_t* decls;
  uint32_t decl_count, decl_capacity;
  weft_vm_decl_dim_t* dims;
  uint32_t dim_count, dim_capacity;
  uint32_t* symbols;
  uint32_t symbol_count, symbol_capacity;
} weft_vm_bytecode_builder_t;

// Makes room in a growable array for |add| more entries of |element_size|
// bytes after its |count|: reallocates *|data| from |allocator| when
// *|capacity| (in entries) is too small, at least doubling it. Arrays hold
// at most UINT32_MAX - 1 entries: RESOURCE_EXHAUSTED naming |what| past
// that, or when memory runs out (*|data| and *|capacity| then unchanged).
weft_status_t weft_vm_array_reserve(weft_allocator_t allocator, void** data,
                                    uint32_t* capacity, uint32_t count,
                                    uint64_t add, size_t element_size,
                                    const char* what);

// Initializes an empty builder allocating from |allocator|.
void weft_vm_bytecode_builder_initialize(
    weft_allocator_t allocator, weft_vm_bytecode_builder_t* out_builder);

// Frees everything the builder holds (not a module it finished).
void weft_vm_bytecode_builder_deinitialize(weft_vm_bytecode_builder_t* builder);

// Copies |length| bytes of |text| (NUL added) into the string table and sets
// |*out_string| to its offset. |text| may be NULL when |length| is 0.
// RESOURCE_EXHAUSTED past 4 GiB of strings or when memory runs out.
weft_status_t weft_vm_bytecode_builder_add_string(
    weft_vm_bytecode_builder_t* builder, const char* text, size_t length,
    uint32_t* out_string);

// Adds |parsed|'s types and, unless its text is what the types alone say
// (weft_vm_parsed_signature_is_plain), its canonical text.
weft_status_t weft_vm_bytecode_builder_add_signature(
    weft_vm_bytecode_builder_t* builder,
    const weft_vm_parsed_signature_t* parsed,
    weft_vm_builder_signature_t* out_signature);

// Appends |function| and sets |*out_index| (may be NULL) to its index.
weft_status_t weft_vm_bytecode_builder_add_function(
    weft_vm_bytecode_builder_t* builder,
    const weft_vm_builder_function_t* function, uint32_t* out_index);

// Appends |import_entry| and sets |*out_index| (may be NULL).
weft_status_t weft_vm_bytecode_builder_add_import(
    weft_vm_bytecode_builder_t* builder,
    const weft_vm_builder_import_t* import_entry, uint32_t* out_index);

// Appends one instruction from source line |line| (0: none).
weft_status_t weft_vm_bytecode_builder_add_instruction(
    weft_vm_bytecode_builder_t* builder, weft_vm_instruction_t instruction,
    uint32_t line);

// Appends |count| operand-list entries and sets |*out_first| to the index
// of the first. |operands| may be NULL when |count| is 0.
weft_status_t weft_vm_bytecode_builder_add_operands(
    weft_vm_bytecode_builder_t* builder, const uint16_t* operands,
    uint32_t count, uint32_t* out_first);

// Appends |value| to the constant pool (duplicates kept) and sets
// |*out_index|.
weft_status_t weft_vm_bytecode_builder_add_constant(
    weft_vm_bytecode_builder_t* builder, uint64_t value, uint32_t* out_index);

// As add_constant, but returns the index of an equal constant already in
// the pool instead of adding another.
weft_status_t weft_vm_bytecode_builder_intern_constant(
    weft_vm_bytecode_builder_t* builder, uint64_t value, uint32_t* out_index);

// Appends a rodata segment holding a copy of |length| |bytes| (may be NULL
// when |length| is 0), named by string offset |name| (or
// WEFT_VM_BUILDER_NO_STRING), and sets |*out_index|.
weft_status_t weft_vm_bytecode_builder_add_rodata(
    weft_vm_bytecode_builder_t* builder, const uint8_t* bytes, size_t length,
    uint32_t name, uint32_t* out_index);

// Appends a segment over rodata_bytes[offset, offset + length) that the
// caller filled with add_rodata_bytes (the binary loader keeps the file's
// layout, shared bytes included). Range-checked by finish.
weft_status_t weft_vm_bytecode_builder_add_rodata_range(
    weft_vm_bytecode_builder_t* builder, uint32_t offset, uint32_t length,
    uint32_t name, uint32_t* out_index);

// Appends |length| raw bytes to rodata_bytes without a segment.
weft_status_t weft_vm_bytecode_builder_add_rodata_bytes(
    weft_vm_bytecode_builder_t* builder, const uint8_t* bytes, size_t length);

// Appends a declared value and sets |*out_index| (may be NULL).
weft_status_t weft_vm_bytecode_builder_add_decl(
    weft_vm_bytecode_builder_t* builder, const weft_vm_builder_decl_t* decl,
    uint32_t* out_index);

// Appends a declared dimension.
weft_status_t weft_vm_bytecode_builder_add_dim(
    weft_vm_bytecode_builder_t* builder, weft_vm_decl_dim_t dim);

// Appends a symbol named by string offset |name| and sets |*out_index|
// (may be NULL).
weft_status_t weft_vm_bytecode_builder_add_symbol(
    weft_vm_bytecode_builder_t* builder, uint32_t name, uint32_t* out_index);

// True when |length| bytes of |name| form an identifier as the text format
// writes names: [A-Za-z_][A-Za-z0-9_.]*; with |allow_dots| false, no '.'.
bool weft_vm_name_is_identifier(const char* name, size_t length,
                                bool allow_dots);

// Checks the names (a module name; identifiers; no two functions, imports
// or rodata segments with the same name) and that declarations' ranges
// are inside their tables, packs the module into one
// allocation from the builder's allocator and validates it
// (weft_vm_bytecode_validate). On success |*out_bytecode| is the module
// (free it with weft_vm_bytecode_free); on failure it is NULL and the
// status says what is wrong. The builder is left as it was either way.
weft_status_t weft_vm_bytecode_builder_finish(
    const weft_vm_bytecode_builder_t* builder,
    weft_vm_bytecode_t** out_bytecode);

#endif  // WEFT_VM_BYTECODE_BUILDER_H_
