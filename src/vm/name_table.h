// weft VM: a table from names to indices, for the assembler's labels,
// functions, imports and rodata segments and for the module builder's
// duplicate checks.
//
// Open addressing over FNV-1a hashes; lookups and inserts are O(1) on
// average, so no input, however large, makes name resolution quadratic.
// The table does not copy names: each key must outlive the table.
// Single-threaded.
#ifndef WEFT_VM_NAME_TABLE_H_
#define WEFT_VM_NAME_TABLE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/allocator.h"
#include "weft/status.h"

typedef struct weft_vm_name_table_entry_t {
  const char* name;  // NULL: empty slot
  size_t length;
  uint32_t value;
} weft_vm_name_table_entry_t;

typedef struct weft_vm_name_table_t {
  weft_allocator_t allocator;
  weft_vm_name_table_entry_t* entries;
  size_t capacity;  // a power of two, or 0
  size_t count;
} weft_vm_name_table_t;

// Initializes an empty table allocating from |allocator|. Allocates nothing
// until the first insert.
void weft_vm_name_table_initialize(weft_allocator_t allocator,
                                   weft_vm_name_table_t* out_table);

// Frees the table's slots (not the names).
void weft_vm_name_table_deinitialize(weft_vm_name_table_t* table);

// Looks up |name| (|length| bytes). Returns true and sets |*out_value| when
// present; |out_value| may be NULL.
bool weft_vm_name_table_find(const weft_vm_name_table_t* table,
                             const char* name, size_t length,
                             uint32_t* out_value);

// Inserts |name| -> |value|. When |name| is already present, nothing
// changes, |*out_inserted| is false and |*out_existing| (may be NULL) is its
// value. RESOURCE_EXHAUSTED when the table cannot grow.
weft_status_t weft_vm_name_table_insert(weft_vm_name_table_t* table,
                                        const char* name, size_t length,
                                        uint32_t value, bool* out_inserted,
                                        uint32_t* out_existing);

#endif  // WEFT_VM_NAME_TABLE_H_
