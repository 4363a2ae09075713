// weft VM: loading modules from bytes or files (see module_file.h).
#include "vm/module_file.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/os_error.h"
#include "vm/assembler.h"
#include "vm/binary.h"

weft_status_t weft_vm_module_load_bytes(const char* name, const uint8_t* data,
                                        size_t length,
                                        weft_allocator_t allocator,
                                        weft_vm_module_t** out_module) {
  *out_module = NULL;
  weft_vm_bytecode_t* bytecode = NULL;
  weft_status_t status = WEFT_OK;
  if (length >= WEFT_VM_BINARY_MAGIC_SIZE &&
      memcmp(data, WEFT_VM_BINARY_MAGIC, WEFT_VM_BINARY_MAGIC_SIZE) == 0) {
    status = weft_vm_binary_load(data, length, allocator, &bytecode);
    if (!weft_status_is_ok(status)) {
      status = weft_status_annotate(status, "while loading '%s'", name);
    }
  } else {
    status = weft_vm_assemble(name, (const char*)data, length, allocator,
                              &bytecode);
  }
  if (weft_status_is_ok(status)) {
    status = weft_vm_module_create_bytecode(allocator, bytecode, out_module);
  }
  return status;
}

weft_status_t weft_vm_module_load_file(const char* path,
                                       weft_allocator_t allocator,
                                       weft_vm_module_t** out_module) {
  *out_module = NULL;
  FILE* file = fopen(path, "rb");
  if (!file) {
    const int error = errno;
    return weft_status_make_(__FILE__, __LINE__,
                             weft_status_code_from_errno(error),
                             "cannot open the module '%s': %s", path,
                             strerror(error));
  }
  weft_status_t status = WEFT_OK;
  uint8_t* data = NULL;
  size_t length = 0;
  size_t capacity = 0;
  for (;;) {
    if (length == capacity) {
      const size_t new_capacity = capacity ? capacity * 2 : 65536;
      status = weft_allocator_realloc(allocator, new_capacity, (void**)&data);
      if (!weft_status_is_ok(status)) break;
      capacity = new_capacity;
    }
    const size_t got = fread(data + length, 1, capacity - length, file);
    length += got;
    if (got == 0) {
      if (ferror(file)) {
        status = WEFT_STATUS(DATA_LOSS, "reading the module '%s' failed",
                             path);
      }
      break;
    }
  }
  fclose(file);
  if (weft_status_is_ok(status)) {
    status = weft_vm_module_load_bytes(path, data, length, allocator,
                                       out_module);
  }
  weft_allocator_free(allocator, data);
  return status;
}
