// weft VM: a bytecode module in memory, and its validation.
//
// What the assembler and the binary loader produce and the interpreter
// runs: functions over one code array, the operand lists calls and selects
// point into, 64-bit constants, rodata segments, imports and a line table.
// Every index in it is checked once by weft_vm_bytecode_validate; the
// interpreter then trusts them, so no module, however malformed, can make
// it crash or read out of bounds.
#ifndef WEFT_VM_BYTECODE_H_
#define WEFT_VM_BYTECODE_H_

#include <stddef.h>
#include <stdint.h>

#include "vm/isa.h"
#include "weft/allocator.h"
#include "weft/status.h"
#include "weft/vm/tensor_type.h"
#include "weft/vm/value.h"

// A function type: |arg_count| argument types then |ret_count| result
// types in |types|, and its canonical text (signature.h), which says what
// the types cannot: the type of each ref and whether it may be null.
typedef struct weft_vm_signature_t {
  uint16_t arg_count;
  uint16_t ret_count;
  const uint8_t* types;  // weft_vm_value_type_t each
  // "(i32,r<hal.buffer_view>?)->(i64)"; NULL means the types say it all
  // (every ref "r", nullable).
  const char* text;
} weft_vm_signature_t;

// Function flags (weft_vm_function_t.flags).
enum weft_vm_function_flag_bits_e {
  WEFT_VM_FUNCTION_FLAG_NONE = 0,
  // Callable from outside the module (the text format's `export`).
  WEFT_VM_FUNCTION_FLAG_EXPORT = 1u << 0,
};
typedef uint32_t weft_vm_function_flags_t;

// A declared dimension (weft/vm/tensor_type.h): |kind| a
// weft_vm_dim_kind_t; |size| for STATIC, |symbol| (an index into the
// function's symbols) for SYMBOL, the other field 0.
typedef struct weft_vm_decl_dim_t {
  uint32_t kind;
  uint32_t symbol;
  int64_t size;
} weft_vm_decl_dim_t;

// One argument's or result's declaration: a name and, when |element_type|
// (a weft_vm_element_type_t) is not NONE, a tensor type of |rank| |dims|.
typedef struct weft_vm_decl_t {
  const char* name;
  uint8_t element_type;
  uint8_t rank;
  const weft_vm_decl_dim_t* dims;  // |rank| entries (NULL when 0)
} weft_vm_decl_t;

// A function's declarations (docs/VM.md, "Declarations"); it declares
// nothing when both |args| and |results| are NULL.
typedef struct weft_vm_function_decls_t {
  // signature.arg_count entries, or NULL when the arguments are not
  // declared; |results| likewise with ret_count.
  const weft_vm_decl_t* args;
  const weft_vm_decl_t* results;
  // The symbols' names, in order of first use (arguments, then results).
  uint32_t symbol_count;
  const char* const* symbols;
} weft_vm_function_decls_t;

typedef struct weft_vm_function_t {
  const char* name;
  weft_vm_signature_t signature;
  // Register counts (parameters included: scalar parameters are s0.., ref
  // parameters r0.., in signature order).
  uint16_t scalar_count;
  uint16_t ref_count;
  // The function's instructions: code[code_offset, code_offset + count).
  uint32_t code_offset;
  uint32_t code_count;
  // weft_vm_function_flag_bits_e (added for the assembler: `export`).
  weft_vm_function_flags_t flags;
} weft_vm_function_t;

typedef struct weft_vm_import_t {
  const char* module_name;
  const char* function_name;
  weft_vm_signature_t signature;
} weft_vm_import_t;

typedef struct weft_vm_rodata_t {
  uint32_t offset;  // into rodata_bytes
  uint32_t length;
} weft_vm_rodata_t;

// A module as the assembler and the binary loader make it: the
// weft_vm_bytecode_t first, every array and string after it in the same
// allocation, so weft_vm_bytecode_free frees it all.
typedef struct weft_vm_bytecode_t {
  const char* name;
  // For messages: the source file and, per instruction, its line (0: none).
  const char* source_name;
  const uint32_t* lines;  // code_count entries, or NULL

  uint32_t function_count;
  const weft_vm_function_t* functions;
  uint32_t import_count;
  const weft_vm_import_t* imports;
  uint32_t code_count;
  const weft_vm_instruction_t* code;
  // Register indices of calls' arguments and results, selects' sources.
  uint32_t operand_count;
  const uint16_t* operands;
  uint32_t constant_count;
  const uint64_t* constants;
  uint32_t rodata_count;
  const weft_vm_rodata_t* rodata;
  uint32_t rodata_byte_count;
  const uint8_t* rodata_bytes;
  // rodata_count names (the text format's `rodata NAME`; a NULL entry is an
  // anonymous segment such as a `fail` message), or NULL when none has one.
  // Only the disassembler reads them.
  const char* const* rodata_names;
  // function_count entries, the declared names and tensor types of each
  // function, or NULL when no function declares any. Only the
  // disassembler, the binary writer and the public reading functions
  // (weft/vm/tensor_type.h) read them.
  const weft_vm_function_decls_t* function_decls;
} weft_vm_bytecode_t;

// Function |index|'s declarations, or NULL when it declares nothing.
static inline const weft_vm_function_decls_t* weft_vm_bytecode_function_decls(
    const weft_vm_bytecode_t* bytecode, uint32_t index) {
  const weft_vm_function_decls_t* decls =
      bytecode->function_decls ? &bytecode->function_decls[index] : NULL;
  return decls && (decls->args || decls->results) ? decls : NULL;
}

// Checks everything the interpreter trusts (docs/VM.md, "Validation"):
// opcodes and reserved bytes, register indices against the function's
// counts, branch targets inside the function, function, import, constant,
// rodata and operand-list indices, call operand lists against the callee's
// signature (register class of each argument and result), a last
// instruction that cannot fall through, parameters that fit the register
// counts; and declarations (names that are identifiers, unique in their
// function; tensor types only on r<hal.buffer_view> and r values, with
// known element types, at most WEFT_VM_TENSOR_MAX_RANK dimensions, sizes
// >= 0, symbol names [A-Z][A-Z0-9_]*, unique, in order of first use and
// each used). INVALID_ARGUMENT naming the module, the function, the
// instruction index (and source line when known) or the declared value,
// and what is wrong.
weft_status_t weft_vm_bytecode_validate(const weft_vm_bytecode_t* bytecode);

// Frees a module made by the assembler or the binary loader (one
// allocation from |allocator|). NULL is a no-op.
void weft_vm_bytecode_free(weft_allocator_t allocator,
                           weft_vm_bytecode_t* bytecode);

#endif  // WEFT_VM_BYTECODE_H_
