// weft VM: loading bytecode modules from bytes or files (see
// weft/vm/module.h). Binary modules start with WEFT_VM_BINARY_MAGIC;
// anything else is read as text.
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/arguments.h"
#include "base/os_error.h"
#include "vm/assembler.h"
#include "vm/binary.h"
#include "vm/module_impl.h"

weft_status_t weft_vm_module_load_bytes(const char* name, const void* data,
                                        size_t length,
                                        weft_allocator_t allocator,
                                        weft_vm_module_t** out_module) {
  if (out_module) *out_module = NULL;
  weft_vm_bytecode_t* bytecode = NULL;
  // |data| only matters when there is something to read.
  weft_status_t status = weft_arguments_require(
      __func__, "name,data,out_module",
      (const void* const[]){name, length ? data : &length, out_module}, 3);
  const bool binary =
      weft_status_is_ok(status) && length >= WEFT_VM_BINARY_MAGIC_SIZE &&
      memcmp(data, WEFT_VM_BINARY_MAGIC, WEFT_VM_BINARY_MAGIC_SIZE) == 0;
  if (binary) {
    status = weft_vm_binary_load(data, length, allocator, &bytecode);
    if (!weft_status_is_ok(status)) {
      status = weft_status_annotate(status, "while loading '%s'", name);
    }
  } else if (weft_status_is_ok(status)) {
    status = weft_vm_assemble(name, length ? (const char*)data : "", length,
                              allocator, &bytecode);
  }
  if (weft_status_is_ok(status)) {
    status = weft_vm_module_create_bytecode(allocator, bytecode, out_module);
  }
  return status;
}

// Reads all of |file| (|path| for messages) into |*out_data| (from
// |allocator|; the caller frees it) and its length into |*out_length|.
static weft_status_t weft_vm_module_read_file(FILE* file, const char* path,
                                              weft_allocator_t allocator,
                                              uint8_t** out_data,
                                              size_t* out_length) {
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
  *out_data = data;
  *out_length = length;
  return status;
}

weft_status_t weft_vm_module_load_file(const char* path,
                                       weft_allocator_t allocator,
                                       weft_vm_module_t** out_module) {
  if (out_module) *out_module = NULL;
  weft_status_t status = weft_arguments_require(
      __func__, "path,out_module", (const void* const[]){path, out_module}, 2);
  FILE* file = NULL;
  if (weft_status_is_ok(status)) {
    file = fopen(path, "rb");
    if (!file) {
      const int error = errno;
      status = weft_status_make_(__FILE__, __LINE__,
                                 weft_status_code_from_errno(error),
                                 "cannot open the module '%s': %s", path,
                                 strerror(error));
    }
  }
  uint8_t* data = NULL;
  size_t length = 0;
  if (weft_status_is_ok(status)) {
    status = weft_vm_module_read_file(file, path, allocator, &data, &length);
  }
  if (file) fclose(file);
  if (weft_status_is_ok(status)) {
    status = weft_vm_module_load_bytes(path, data, length, allocator,
                                       out_module);
  }
  weft_allocator_free(allocator, data);
  return status;
}
