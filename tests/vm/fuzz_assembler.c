// libFuzzer target for the assembler (src/vm/assembler.c): any bytes
// either assemble into a module that validates, or fail with
// INVALID_ARGUMENT "fuzz.wvm:LINE:COLUMN: ...". An assembled module must
// then disassemble, re-assemble to the identical module, and survive the
// binary writer and loader unchanged. Any broken promise aborts.
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
  weft_status_t status =
      weft_vm_assemble("fuzz.wvm", (const char*)data, size, allocator, &module);
  if (!weft_status_is_ok(status)) {
    if (!weft_status_is(status, WEFT_STATUS_INVALID_ARGUMENT) ||
        strncmp(weft_status_message(status), "fuzz.wvm:", 9) != 0 || module) {
      fprintf(stderr, "a refused source gave: %s\n",
              weft_status_message(status));
      abort();
    }
    weft_status_free(status);
    return 0;
  }
  char* text = NULL;
  size_t text_length = 0;
  weft_vm_fuzz_check(
      weft_vm_disassemble(module, allocator, &text, &text_length),
      "disassembling an assembled module");
  weft_vm_bytecode_t* again = NULL;
  status = weft_vm_assemble("again.wvm", text, text_length, allocator, &again);
  if (!weft_status_is_ok(status)) {
    fprintf(stderr, "the disassembly does not assemble:\n%s\n", text);
  }
  weft_vm_fuzz_check(status, "re-assembling");
  weft_vm_fuzz_check_equal(module, again, false, "re-assembled module");

  uint8_t* binary = NULL;
  size_t binary_length = 0;
  weft_vm_fuzz_check(
      weft_vm_binary_write(module, allocator, &binary, &binary_length),
      "writing");
  weft_vm_bytecode_t* loaded = NULL;
  weft_vm_fuzz_check(
      weft_vm_binary_load(binary, binary_length, allocator, &loaded),
      "loading what was written");
  weft_vm_fuzz_check_equal(module, loaded, true, "loaded module");

  weft_vm_bytecode_free(allocator, loaded);
  weft_allocator_free(allocator, binary);
  weft_vm_bytecode_free(allocator, again);
  weft_allocator_free(allocator, text);
  weft_vm_bytecode_free(allocator, module);
  return 0;
}
