// weft VM: lists of values or refs, and read-only byte buffers.
//
// A list holds tagged values (weft_vm_value_t): a get checks the element's
// type, so a program reading an f32 where it stored an i32 fails with a
// message instead of reinterpreting bits. Refs in a list are retained.
#ifndef WEFT_VM_LIST_H_
#define WEFT_VM_LIST_H_

#include <stddef.h>
#include <stdint.h>

#include "base/atomics.h"
#include "vm/value.h"
#include "weft/allocator.h"
#include "weft/status.h"

typedef struct weft_vm_list_t {
  weft_ref_count_t ref_count;
  weft_allocator_t allocator;
  uint32_t size;
  uint32_t capacity;
  weft_vm_value_t* values;
} weft_vm_list_t;

// The "list" ref type.
extern const weft_vm_ref_type_t kWeftVmListType;

// The most elements a list may hold.
#define WEFT_VM_LIST_MAX_SIZE (1u << 28)

// Creates an empty list with room for |capacity| elements (one reference).
weft_status_t weft_vm_list_create(weft_allocator_t allocator,
                                  uint32_t capacity,
                                  weft_vm_list_t** out_list);

// Grows (new elements are i32 0) or shrinks (dropped refs are released)
// the list to |size|. RESOURCE_EXHAUSTED past WEFT_VM_LIST_MAX_SIZE or
// when the allocator refuses.
weft_status_t weft_vm_list_resize(weft_vm_list_t* list, uint32_t size);

// Reads element |index| as |type| into |*out_value| (a ref is retained).
// OUT_OF_RANGE for an index past the size, INVALID_ARGUMENT naming both
// types when the element holds another type.
weft_status_t weft_vm_list_get(const weft_vm_list_t* list, uint32_t index,
                               weft_vm_value_type_t type,
                               weft_vm_value_t* out_value);

// Stores |value| at |index| (a ref is retained, the old element's released).
// OUT_OF_RANGE for an index past the size.
weft_status_t weft_vm_list_set(weft_vm_list_t* list, uint32_t index,
                               const weft_vm_value_t* value);

// A read-only byte buffer ("bytes"): a module's rodata segment as a ref.
typedef struct weft_vm_bytes_t {
  weft_ref_count_t ref_count;
  weft_allocator_t allocator;
  size_t length;
  uint8_t data[];
} weft_vm_bytes_t;

extern const weft_vm_ref_type_t kWeftVmBytesType;

// Copies |length| bytes into a new buffer (one reference).
weft_status_t weft_vm_bytes_create(weft_allocator_t allocator,
                                   const void* data, size_t length,
                                   weft_vm_bytes_t** out_bytes);

#endif  // WEFT_VM_LIST_H_
