// weft VM: the disassembler (module -> .wvm text).
//
// The text follows docs/VM.md ("Text format") and re-assembles
// (weft_vm_assemble) to an equivalent module; for a module in the layout
// the assembler produces (functions' code back to back in order, operand
// lists in instruction order, constants pooled in first-use order, named
// rodata segments first and each fail message its own segment after them)
// the re-assembled module is identical, table for table.
#ifndef WEFT_VM_DISASSEMBLER_H_
#define WEFT_VM_DISASSEMBLER_H_

#include <stddef.h>

#include "vm/bytecode.h"
#include "weft/allocator.h"
#include "weft/status.h"

// Writes |bytecode| as text into one NUL-terminated allocation from
// |allocator| (*|out_text|, free it with weft_allocator_free) of
// *|out_length| bytes before the NUL. The module is validated first
// (weft_vm_bytecode_validate), so a malformed one is refused with that
// status instead of being read out of bounds. Branch targets are labelled
// L<index> (the function-relative instruction index); rodata segments keep
// their names, unnamed ones that are not an inline fail message are named
// rodata<index> (with '_' appended until unique). On failure *|out_text| is
// NULL and *|out_length| 0. Thread-safe: no state outside the call.
weft_status_t weft_vm_disassemble(const weft_vm_bytecode_t* bytecode,
                                  weft_allocator_t allocator, char** out_text,
                                  size_t* out_length);

#endif  // WEFT_VM_DISASSEMBLER_H_
