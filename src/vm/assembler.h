// weft VM: the text assembler (.wvm text -> module).
//
// The text format is specified in docs/VM.md ("Text format"); operand
// syntax per opcode shape is in vm/text_syntax.h. The assembler is driven
// by the opcode table (isa.h): it has no per-opcode code.
#ifndef WEFT_VM_ASSEMBLER_H_
#define WEFT_VM_ASSEMBLER_H_

#include <stddef.h>

#include "vm/bytecode.h"
#include "weft/allocator.h"
#include "weft/status.h"

// Assembles |length| bytes of |text| (no NUL needed; any bytes accepted)
// named |source_name| in messages and in the module's |source_name| (may be
// NULL: "<text>"). On success |*out_bytecode| is one allocation from
// |allocator| (free it with weft_vm_bytecode_free) holding the module with
// a source line per instruction, already validated
// (weft_vm_bytecode_validate). On failure |*out_bytecode| is NULL and the
// status is INVALID_ARGUMENT "SOURCE:LINE:COLUMN: expected X, found Y" for
// the first mistake, or RESOURCE_EXHAUSTED when memory runs out.
// Thread-safe: no state outside the call.
weft_status_t weft_vm_assemble(const char* source_name, const char* text,
                               size_t length, weft_allocator_t allocator,
                               weft_vm_bytecode_t** out_bytecode);

#endif  // WEFT_VM_ASSEMBLER_H_
