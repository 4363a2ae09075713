// weft VM: names to indices (see name_table.h).
#include "vm/name_table.h"

#include <string.h>

static uint64_t weft_vm_name_hash(const char* name, size_t length) {
  uint64_t hash = 14695981039346656037ull;
  for (size_t i = 0; i < length; ++i) {
    hash ^= (uint8_t)name[i];
    hash *= 1099511628211ull;
  }
  return hash;
}

void weft_vm_name_table_initialize(weft_allocator_t allocator,
                                   weft_vm_name_table_t* out_table) {
  memset(out_table, 0, sizeof(*out_table));
  out_table->allocator = allocator;
}

void weft_vm_name_table_deinitialize(weft_vm_name_table_t* table) {
  weft_allocator_free(table->allocator, table->entries);
  memset(table, 0, sizeof(*table));
}

// The slot holding |name|, or the empty slot where it would go.
static weft_vm_name_table_entry_t* weft_vm_name_table_slot(
    const weft_vm_name_table_entry_t* entries, size_t capacity,
    const char* name, size_t length) {
  size_t index = (size_t)weft_vm_name_hash(name, length) & (capacity - 1);
  for (;;) {
    const weft_vm_name_table_entry_t* entry = &entries[index];
    if (!entry->name ||
        (entry->length == length && memcmp(entry->name, name, length) == 0)) {
      return (weft_vm_name_table_entry_t*)entry;
    }
    index = (index + 1) & (capacity - 1);
  }
}

bool weft_vm_name_table_find(const weft_vm_name_table_t* table,
                             const char* name, size_t length,
                             uint32_t* out_value) {
  if (table->capacity == 0) return false;
  const weft_vm_name_table_entry_t* entry =
      weft_vm_name_table_slot(table->entries, table->capacity, name, length);
  if (!entry->name) return false;
  if (out_value) *out_value = entry->value;
  return true;
}

// Doubles the slots (or makes the first 16) and rehashes.
static weft_status_t weft_vm_name_table_grow(weft_vm_name_table_t* table) {
  const size_t capacity = table->capacity ? table->capacity * 2 : 16;
  weft_vm_name_table_entry_t* entries = NULL;
  weft_status_t status = weft_allocator_malloc_array(
      table->allocator, capacity, sizeof(*entries), (void**)&entries);
  if (!weft_status_is_ok(status)) return status;
  for (size_t i = 0; i < table->capacity; ++i) {
    const weft_vm_name_table_entry_t* old = &table->entries[i];
    if (old->name) {
      *weft_vm_name_table_slot(entries, capacity, old->name, old->length) =
          *old;
    }
  }
  weft_allocator_free(table->allocator, table->entries);
  table->entries = entries;
  table->capacity = capacity;
  return WEFT_OK;
}

weft_status_t weft_vm_name_table_insert(weft_vm_name_table_t* table,
                                        const char* name, size_t length,
                                        uint32_t value, bool* out_inserted,
                                        uint32_t* out_existing) {
  *out_inserted = false;
  // Keep at most half the slots full so probes stay short.
  if ((table->count + 1) * 2 > table->capacity) {
    weft_status_t status = weft_vm_name_table_grow(table);
    if (!weft_status_is_ok(status)) return status;
  }
  weft_vm_name_table_entry_t* entry =
      weft_vm_name_table_slot(table->entries, table->capacity, name, length);
  if (entry->name) {
    if (out_existing) *out_existing = entry->value;
    return WEFT_OK;
  }
  // An empty name still needs a non-NULL key pointer.
  entry->name = name ? name : "";
  entry->length = length;
  entry->value = value;
  ++table->count;
  *out_inserted = true;
  return WEFT_OK;
}
