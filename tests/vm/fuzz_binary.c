// libFuzzer target for the binary loader (src/vm/binary.c): any bytes
// either load a module that validates, or fail with INVALID_ARGUMENT; no
// byte past the input is read (AddressSanitizer). A loaded module must
// write and load back unchanged, and its disassembly must assemble to a
// module whose disassembly is the same text. Any broken promise aborts.
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "vm/assembler.h"
#include "vm/binary.h"
#include "vm/disassembler.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  weft_allocator_t allocator = weft_allocator_system();
  weft_vm_bytecode_t* module = NULL;
  weft_status_t status = weft_vm_binary_load(data, size, allocator, &module);
  if (!weft_status_is_ok(status)) {
    if (!weft_status_is(status, WEFT_STATUS_INVALID_ARGUMENT) || module) {
      fprintf(stderr, "refused bytes gave: %s\n", weft_status_message(status));
      abort();
    }
    weft_status_free(status);
    return 0;
  }
  weft_vm_fuzz_check(weft_vm_bytecode_validate(module),
                     "a loaded module validates");

  uint8_t* binary = NULL;
  size_t binary_length = 0;
  weft_vm_fuzz_check(
      weft_vm_binary_write(module, allocator, &binary, &binary_length),
      "writing a loaded module");
  weft_vm_bytecode_t* reloaded = NULL;
  weft_vm_fuzz_check(
      weft_vm_binary_load(binary, binary_length, allocator, &reloaded),
      "loading what was written");
  weft_vm_fuzz_check_equal(module, reloaded, true,
                           "write + load changed the module");

  char* text = NULL;
  size_t text_length = 0;
  weft_vm_fuzz_check(
      weft_vm_disassemble(module, allocator, &text, &text_length),
      "disassembling a loaded module");
  weft_vm_bytecode_t* assembled = NULL;
  status =
      weft_vm_assemble("fuzz.wvm", text, text_length, allocator, &assembled);
  if (!weft_status_is_ok(status)) {
    fprintf(stderr, "the disassembly does not assemble:\n%s\n", text);
  }
  weft_vm_fuzz_check(status, "assembling the disassembly");
  char* again = NULL;
  size_t again_length = 0;
  weft_vm_fuzz_check(
      weft_vm_disassemble(assembled, allocator, &again, &again_length),
      "disassembling the re-assembled module");
  if (again_length != text_length || memcmp(again, text, text_length) != 0) {
    fprintf(stderr, "disassembly is not a fixed point:\n%s\n---\n%s\n", text,
            again);
    abort();
  }

  weft_allocator_free(allocator, again);
  weft_vm_bytecode_free(allocator, assembled);
  weft_allocator_free(allocator, text);
  weft_vm_bytecode_free(allocator, reloaded);
  weft_allocator_free(allocator, binary);
  weft_vm_bytecode_free(allocator, module);
  return 0;
}
