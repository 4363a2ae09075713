// weft VM: lists of values, and read-only byte buffers.
//
// A list holds tagged values (weft_vm_value_t): a get names the type it
// expects, so reading an f32 where an i32 was stored fails with a message
// instead of reinterpreting bits. Refs in a list are retained by it.
// Programs see lists as r<list> (the `list.*` instructions); C code makes
// them to pass lists of shapes, fences or bindings to hal functions.
//
// Bytes are an immutable byte string, r<bytes>: what a program's rodata
// segments become (device strings, paths, names), and what C code passes
// where a program expects one.
//
// Both are ref-counted. A list is not synchronised: one thread at a time
// may change it. Bytes never change, so any thread may read them.
//
// NULL: pointer arguments are required unless the function's comment says
// "|x| may be NULL" (see "NULL arguments" in weft/status.h).
#ifndef WEFT_VM_LIST_H_
#define WEFT_VM_LIST_H_

#include <stddef.h>
#include <stdint.h>

#include "weft/allocator.h"
#include "weft/status.h"
#include "weft/vm/value.h"

#ifdef __cplusplus
extern "C" {
#endif

//===----------------------------------------------------------------------===//
// Lists
//===----------------------------------------------------------------------===//

typedef struct weft_vm_list_t weft_vm_list_t;

// The "list" ref type (r<list>).
extern const weft_vm_ref_type_t kWeftVmListType;

// The most elements a list may hold.
#define WEFT_VM_LIST_MAX_SIZE (1u << 28)

// Creates an empty list with room for |capacity| elements; the caller owns
// the one reference. RESOURCE_EXHAUSTED past WEFT_VM_LIST_MAX_SIZE.
weft_status_t weft_vm_list_create(weft_allocator_t allocator,
                                  uint32_t capacity,
                                  weft_vm_list_t** out_list);

// Adds a reference.
void weft_vm_list_retain(weft_vm_list_t* list);
// Drops a reference; the last releases the elements' refs and frees it.
void weft_vm_list_release(weft_vm_list_t* list);

// The number of elements.
uint32_t weft_vm_list_size(const weft_vm_list_t* list);

// Grows (new elements are i32 0) or shrinks (dropped refs are released)
// the list to |size|. RESOURCE_EXHAUSTED past WEFT_VM_LIST_MAX_SIZE or
// when the allocator refuses (the list is unchanged).
weft_status_t weft_vm_list_resize(weft_vm_list_t* list, uint32_t size);

// Reads element |index| as |type| into |*out_value| (a ref is retained:
// the caller owns that reference). OUT_OF_RANGE for an index past the
// size, INVALID_ARGUMENT naming both types when the element holds another
// type; *out_value is i32 0 on failure.
weft_status_t weft_vm_list_get(const weft_vm_list_t* list, uint32_t index,
                               weft_vm_value_type_t type,
                               weft_vm_value_t* out_value);

// Stores |*value| at |index| (a ref is retained, the old element's ref
// released). OUT_OF_RANGE for an index past the size, INVALID_ARGUMENT for
// a value of no known type.
weft_status_t weft_vm_list_set(weft_vm_list_t* list, uint32_t index,
                               const weft_vm_value_t* value);

// A ref to |list| (borrowed: no reference is taken); NULL gives the null
// ref.
static inline weft_vm_ref_t weft_vm_list_as_ref(weft_vm_list_t* list) {
  return weft_vm_ref_wrap(list, &kWeftVmListType);
}

// The list |ref| holds (borrowed), or NULL when it holds none.
static inline weft_vm_list_t* weft_vm_list_from_ref(weft_vm_ref_t ref) {
  return (weft_vm_list_t*)weft_vm_ref_unwrap(ref, &kWeftVmListType);
}

//===----------------------------------------------------------------------===//
// Bytes
//===----------------------------------------------------------------------===//

typedef struct weft_vm_bytes_t weft_vm_bytes_t;

// The "bytes" ref type (r<bytes>).
extern const weft_vm_ref_type_t kWeftVmBytesType;

// Copies |length| bytes of |data| into new bytes; the caller owns the one
// reference. |data| may be NULL when |length| is 0.
weft_status_t weft_vm_bytes_create(weft_allocator_t allocator,
                                   const void* data, size_t length,
                                   weft_vm_bytes_t** out_bytes);

// Adds a reference.
void weft_vm_bytes_retain(weft_vm_bytes_t* bytes);
// Drops a reference; the last frees the bytes.
void weft_vm_bytes_release(weft_vm_bytes_t* bytes);

// The bytes (valid while |bytes| is; not NUL-terminated).
const uint8_t* weft_vm_bytes_data(const weft_vm_bytes_t* bytes);
// Their number.
size_t weft_vm_bytes_length(const weft_vm_bytes_t* bytes);

// A ref to |bytes| (borrowed); NULL gives the null ref.
static inline weft_vm_ref_t weft_vm_bytes_as_ref(weft_vm_bytes_t* bytes) {
  return weft_vm_ref_wrap(bytes, &kWeftVmBytesType);
}

// The bytes |ref| holds (borrowed), or NULL when it holds none.
static inline weft_vm_bytes_t* weft_vm_bytes_from_ref(weft_vm_ref_t ref) {
  return (weft_vm_bytes_t*)weft_vm_ref_unwrap(ref, &kWeftVmBytesType);
}

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_VM_LIST_H_
