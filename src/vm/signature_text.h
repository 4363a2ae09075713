// weft VM: the canonical text of a module's signatures.
//
// A weft_vm_signature_t carries its canonical text (signature.h) only when
// the types alone do not say it all; these helpers give the text in every
// case and turn a parsed signature back into that compact form.
#ifndef WEFT_VM_SIGNATURE_TEXT_H_
#define WEFT_VM_SIGNATURE_TEXT_H_

#include <stddef.h>
#include <stdint.h>

#include "vm/bytecode.h"
#include "vm/signature.h"

// Writes the canonical text of |arg_count| + |ret_count| |types| as if every
// ref were "r?" (any type, nullable): "(i32,r?)->(f64)". Returns the length
// it needs (excluding the NUL); writes at most |capacity| bytes, always
// NUL-terminated when |capacity| > 0. |buffer| may be NULL when |capacity|
// is 0.
size_t weft_vm_signature_types_text(uint32_t arg_count, uint32_t ret_count,
                                    const uint8_t* types, char* buffer,
                                    size_t capacity);

// Writes |signature|'s canonical text: its |text| when set, else the text of
// its types (weft_vm_signature_types_text). Same return and buffer rules.
size_t weft_vm_signature_canonical_text(weft_vm_signature_t signature,
                                        char* buffer, size_t capacity);

// True when |parsed|'s canonical text is what its types alone give, so a
// module may keep its signature without text.
int weft_vm_parsed_signature_is_plain(const weft_vm_parsed_signature_t* parsed);

#endif  // WEFT_VM_SIGNATURE_TEXT_H_
