// weft VM: the rules and the text of declarations (docs/VM.md,
// "Declarations"), shared by the assembler, the disassembler, the
// validator and the binary loader so they cannot drift apart.
//
// A declaration line's content after its keyword is
//   NAME [ ":" TYPE ]      TYPE = ELEMENT | DIM { "x" DIM } " " ELEMENT
// with DIM a decimal size, '?' or a symbol ([A-Z][A-Z0-9_]*) and ELEMENT
// one of f16 f32 f64 i8 i16 i32 i64 u8 u16 u32 u64.
#ifndef WEFT_VM_DECL_TEXT_H_
#define WEFT_VM_DECL_TEXT_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vm/bytecode.h"

// True when |length| bytes of |name| form a symbol name: an upper-case
// letter, then upper-case letters, digits and '_' (a lower-case 'x'
// separates dimensions, so symbols have no lower-case letters at all).
bool weft_vm_symbol_name_is_valid(const char* name, size_t length);

// Looks up the element type named by |length| bytes of |text| ("f32").
// Returns false when it names none ("none" included).
bool weft_vm_element_type_parse(const char* text, size_t length,
                                uint8_t* out_type);

// True when a value of signature type |type|, with ref type name
// |ref_name| (|ref_name_length| bytes; 0 for a plain "r" and scalars), may
// carry a tensor type: r<hal.buffer_view> and r.
bool weft_vm_decl_allows_tensor(uint8_t type, const char* ref_name,
                                size_t ref_name_length);

// Writes the tensor type of |decl| as the text format does ("KxN f32",
// "?x3 i8", "f32" for rank 0; "" without one), naming symbol dimensions
// from |symbols| (|symbol_count| entries; an index past them is written
// "?"). Returns the length it needs (excluding the NUL); writes at most
// |capacity| bytes, NUL-terminated when |capacity| > 0.
size_t weft_vm_decl_type_text(const weft_vm_decl_t* decl,
                              const char* const* symbols,
                              uint32_t symbol_count, char* buffer,
                              size_t capacity);

// A declaration as read from a line; offsets are into the line.
typedef struct weft_vm_parsed_decl_t {
  size_t name_offset;
  size_t name_length;
  // The ':' before the tensor type, or SIZE_MAX when there is none.
  size_t colon_offset;
  uint8_t element_type;  // WEFT_VM_ELEMENT_TYPE_NONE without a type
  uint8_t rank;
  struct {
    uint32_t kind;  // weft_vm_dim_kind_t
    int64_t size;   // STATIC
    size_t offset;  // where the dimension is written
    size_t length;  // SYMBOL: the name is line[offset, offset + length)
  } dims[WEFT_VM_TENSOR_MAX_RANK];
} weft_vm_parsed_decl_t;

// A syntax error: at |offset| of the line, |expected| was expected; what
// was found there is |found_length| bytes from |offset| when not 0 (one
// dimension of "KxN"), else for the caller to describe.
typedef struct weft_vm_decl_syntax_error_t {
  size_t offset;
  size_t found_length;
  char expected[192];
} weft_vm_decl_syntax_error_t;

// Parses "NAME [: TYPE]" from |line|[|position|, |length|) up to the end of
// the line or a ';' comment (spaces and tabs separate tokens). Returns
// true with |*out| filled, or false with |*out_error| saying where and
// what was expected.
bool weft_vm_decl_parse(const char* line, size_t length, size_t position,
                        weft_vm_parsed_decl_t* out,
                        weft_vm_decl_syntax_error_t* out_error);

#endif  // WEFT_VM_DECL_TEXT_H_
