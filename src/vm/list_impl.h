// weft VM: lists and byte buffers, their layout (private to weft).
//
// The public API is weft/vm/list.h; the interpreter and native modules
// read the fields here directly.
#ifndef WEFT_VM_LIST_IMPL_H_
#define WEFT_VM_LIST_IMPL_H_

#include <stddef.h>
#include <stdint.h>

#include "base/atomics.h"
#include "weft/allocator.h"
#include "weft/vm/list.h"

struct weft_vm_list_t {
  weft_ref_count_t ref_count;
  weft_allocator_t allocator;
  uint32_t size;
  uint32_t capacity;
  weft_vm_value_t* values;
};

// A read-only byte buffer ("bytes"): a module's rodata segment as a ref.
struct weft_vm_bytes_t {
  weft_ref_count_t ref_count;
  weft_allocator_t allocator;
  size_t length;
  uint8_t data[];
};

#endif  // WEFT_VM_LIST_IMPL_H_
