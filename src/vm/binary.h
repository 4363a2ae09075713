// weft VM: the binary module format (.wvmb): writer and loader.
//
// Little-endian and versioned: a 24-byte header (magic "WEFTVM\0\1",
// version, file size, section count), a table of sections (id, offset,
// size, count) and the sections: module, strings, signatures, signature
// types, imports, functions, code, operands, constants, rodata segments,
// rodata bytes, lines, and the optional declarations (declared functions,
// values, dimensions, symbols), absent from a module without any.
// docs/VM.md ("Binary format") has every field. The
// loader parses no text: it checks every count, offset and string against
// the bytes it was given before it reads them, then builds the module with
// the bytecode builder and validates it (weft_vm_bytecode_validate).
#ifndef WEFT_VM_BINARY_H_
#define WEFT_VM_BINARY_H_

#include <stddef.h>
#include <stdint.h>

#include "vm/bytecode.h"
#include "weft/allocator.h"
#include "weft/status.h"

// The format's magic bytes and the version this code writes and reads.
#define WEFT_VM_BINARY_MAGIC "WEFTVM\0\1"
#define WEFT_VM_BINARY_MAGIC_SIZE 8
#define WEFT_VM_BINARY_VERSION 1u

// Writes |bytecode| (validated first; INVALID_ARGUMENT when it is not
// valid) into one allocation from |allocator|: *|out_data| (free it with
// weft_allocator_free) of *|out_length| bytes. The same module always gives
// the same bytes. RESOURCE_EXHAUSTED when the file would pass 4 GiB or
// memory runs out. On failure *|out_data| is NULL and *|out_length| 0.
// Thread-safe: no state outside the call.
weft_status_t weft_vm_binary_write(const weft_vm_bytecode_t* bytecode,
                                   weft_allocator_t allocator,
                                   uint8_t** out_data, size_t* out_length);

// Loads a module from |length| bytes at |data| (|data| may be NULL when
// |length| is 0) into one allocation from |allocator| (free it with
// weft_vm_bytecode_free). Any malformed input, truncated or corrupted
// anywhere, fails with INVALID_ARGUMENT naming the field and its byte
// offset ("binary module: functions[2].signature at offset 212: signature
// 9 is past the 3 signatures"); no byte outside [data, data + length) is
// read. The module is validated before it is returned. On failure
// *|out_bytecode| is NULL. Thread-safe: no state outside the call.
weft_status_t weft_vm_binary_load(const uint8_t* data, size_t length,
                                  weft_allocator_t allocator,
                                  weft_vm_bytecode_t** out_bytecode);

#endif  // WEFT_VM_BINARY_H_
