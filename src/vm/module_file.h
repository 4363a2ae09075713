// weft VM: loading a bytecode module from bytes or a file.
//
// Binary modules start with WEFT_VM_BINARY_MAGIC; anything else is read as
// text (.wvm). Either way the result is a validated module (module.h).
#ifndef WEFT_VM_MODULE_FILE_H_
#define WEFT_VM_MODULE_FILE_H_

#include <stddef.h>
#include <stdint.h>

#include "vm/module.h"

// Loads |length| bytes named |name| (in messages and, for text, as the
// source name of runtime errors): the binary loader when they start with
// the binary magic, the assembler otherwise. One reference.
weft_status_t weft_vm_module_load_bytes(const char* name, const uint8_t* data,
                                        size_t length,
                                        weft_allocator_t allocator,
                                        weft_vm_module_t** out_module);

// Reads |path| and loads it as above. NOT_FOUND (or the OS's reason)
// naming the path when it cannot be read.
weft_status_t weft_vm_module_load_file(const char* path,
                                       weft_allocator_t allocator,
                                       weft_vm_module_t** out_module);

#endif  // WEFT_VM_MODULE_FILE_H_
