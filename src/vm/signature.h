// weft VM: signature strings.
//
// A signature is written "(i32, r<buffer_view>) -> (r<buffer_view>?)":
// argument types, "->", result types, each list in parentheses. Types are
// i32, i64, f32, f64, r (any ref), r<NAME> (a ref of the registered type
// NAME, which may contain letters, digits, '_' and '.'), and a trailing '?'
// on a ref allows null. Native modules declare their functions this way,
// the text format writes imports this way, and linking compares the
// canonical forms (no spaces: "(i32,r<buffer_view>)->(r<buffer_view>?)").
#ifndef WEFT_VM_SIGNATURE_H_
#define WEFT_VM_SIGNATURE_H_

#include <stddef.h>
#include <stdint.h>

#include "weft/status.h"

// The most arguments, or results, a signature may have.
#define WEFT_VM_SIGNATURE_MAX_VALUES 64

typedef struct weft_vm_parsed_signature_t {
  uint16_t arg_count;
  uint16_t ret_count;
  // Argument types then result types (weft_vm_value_type_t).
  uint8_t types[2 * WEFT_VM_SIGNATURE_MAX_VALUES];
  // Per value: 1 when a ref may be null.
  uint8_t nullable[2 * WEFT_VM_SIGNATURE_MAX_VALUES];
  // Per value: the ref type name as [offset, offset + length) of the
  // canonical text, or length 0 for a plain "r" and for scalars.
  uint16_t ref_name_offset[2 * WEFT_VM_SIGNATURE_MAX_VALUES];
  uint16_t ref_name_length[2 * WEFT_VM_SIGNATURE_MAX_VALUES];
  // Canonical text, NUL-terminated.
  char canonical[1024];
} weft_vm_parsed_signature_t;

// Parses |text| (|length| bytes, NUL not needed). INVALID_ARGUMENT saying
// at which character what was expected ("signature '(i32, q)': column 7:
// expected a type (i32, i64, f32, f64, r, r<NAME>)").
weft_status_t weft_vm_signature_parse(const char* text, size_t length,
                                      weft_vm_parsed_signature_t* out);

#endif  // WEFT_VM_SIGNATURE_H_
