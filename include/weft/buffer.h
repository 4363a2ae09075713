// weft: buffers and mappings.
//
// A buffer is a ref-counted range of device memory with a memory type, the
// access it allows and the usages it was allocated for. Subspans share the
// parent's memory. Every range and permission is checked:
//  - offset or end past the length -> OUT_OF_RANGE;
//  - missing access, usage or memory type -> PERMISSION_DENIED naming it.
//
// NULL: pointer arguments are required unless the function's comment says
// "|x| may be NULL" (see "NULL arguments" in weft/status.h).
#ifndef WEFT_BUFFER_H_
#define WEFT_BUFFER_H_

#include <stdbool.h>
#include <stdint.h>

#include "weft/allocator.h"
#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_buffer_t weft_buffer_t;
typedef uint64_t weft_device_size_t;

// Means "to the end of the buffer" wherever a length is taken.
#define WEFT_WHOLE_BUFFER ((weft_device_size_t)UINT64_MAX)

typedef enum weft_memory_type_bits_e {
  WEFT_MEMORY_TYPE_NONE = 0,
  WEFT_MEMORY_TYPE_DEVICE_LOCAL = 1u << 0,
  WEFT_MEMORY_TYPE_HOST_VISIBLE = 1u << 1,
  WEFT_MEMORY_TYPE_HOST_COHERENT = 1u << 2,
  WEFT_MEMORY_TYPE_HOST_CACHED = 1u << 3,
} weft_memory_type_bits_t;
typedef uint32_t weft_memory_type_t;

typedef enum weft_memory_access_bits_e {
  WEFT_MEMORY_ACCESS_NONE = 0,
  WEFT_MEMORY_ACCESS_READ = 1u << 0,
  WEFT_MEMORY_ACCESS_WRITE = 1u << 1,
  // Previous contents may be discarded (implies nothing about reads).
  WEFT_MEMORY_ACCESS_DISCARD = 1u << 2,
  WEFT_MEMORY_ACCESS_ALL = 0x7u,
} weft_memory_access_bits_t;
typedef uint32_t weft_memory_access_t;

typedef enum weft_buffer_usage_bits_e {
  WEFT_BUFFER_USAGE_NONE = 0,
  WEFT_BUFFER_USAGE_TRANSFER_SOURCE = 1u << 0,
  WEFT_BUFFER_USAGE_TRANSFER_TARGET = 1u << 1,
  WEFT_BUFFER_USAGE_TRANSFER =
      WEFT_BUFFER_USAGE_TRANSFER_SOURCE | WEFT_BUFFER_USAGE_TRANSFER_TARGET,
  WEFT_BUFFER_USAGE_DISPATCH_STORAGE = 1u << 2,
  WEFT_BUFFER_USAGE_MAPPING_SCOPED = 1u << 3,
  WEFT_BUFFER_USAGE_MAPPING_PERSISTENT = 1u << 4,
  WEFT_BUFFER_USAGE_MAPPING =
      WEFT_BUFFER_USAGE_MAPPING_SCOPED | WEFT_BUFFER_USAGE_MAPPING_PERSISTENT,
  // What a usage of 0 canonicalises to.
  WEFT_BUFFER_USAGE_DEFAULT = WEFT_BUFFER_USAGE_TRANSFER |
                              WEFT_BUFFER_USAGE_DISPATCH_STORAGE |
                              WEFT_BUFFER_USAGE_MAPPING,
} weft_buffer_usage_bits_t;
typedef uint32_t weft_buffer_usage_t;

// What a buffer is allocated with. Zero fields are canonicalised: type 0 ->
// DEVICE_LOCAL|HOST_VISIBLE|HOST_COHERENT, access 0 -> ALL, usage 0 ->
// DEFAULT.
typedef struct weft_buffer_params_t {
  weft_memory_type_t type;
  weft_memory_access_t access;
  weft_buffer_usage_t usage;
} weft_buffer_params_t;

// Fills in the canonical values of zero fields.
weft_buffer_params_t weft_buffer_params_canonicalize(
    weft_buffer_params_t params);

void weft_buffer_retain(weft_buffer_t* buffer);
void weft_buffer_release(weft_buffer_t* buffer);

weft_device_size_t weft_buffer_byte_length(const weft_buffer_t* buffer);
// Offset of this buffer within its allocation (non-zero for subspans).
weft_device_size_t weft_buffer_byte_offset(const weft_buffer_t* buffer);
weft_memory_type_t weft_buffer_memory_type(const weft_buffer_t* buffer);
weft_memory_access_t weft_buffer_allowed_access(const weft_buffer_t* buffer);
weft_buffer_usage_t weft_buffer_allowed_usage(const weft_buffer_t* buffer);
// The buffer that owns the memory (itself unless a subspan).
weft_buffer_t* weft_buffer_allocated_buffer(weft_buffer_t* buffer);

// Creates a view of [offset, offset+length) of |buffer| sharing its memory
// and permissions. |length| may be WEFT_WHOLE_BUFFER.
weft_status_t weft_buffer_subspan(weft_buffer_t* buffer,
                                  weft_device_size_t offset,
                                  weft_device_size_t length,
                                  weft_allocator_t allocator,
                                  weft_buffer_t** out_buffer);

// Resolves (offset, length) against |buffer|'s length: WEFT_WHOLE_BUFFER
// means "to the end"; OUT_OF_RANGE when the range does not fit. |what|
// names the caller for the message; |what| may be NULL.
weft_status_t weft_buffer_calculate_range(const weft_buffer_t* buffer,
                                          weft_device_size_t offset,
                                          weft_device_size_t length,
                                          const char* what,
                                          weft_device_size_t* out_length);

typedef enum weft_mapping_mode_e {
  // Mapped for a short, bounded scope (requires MAPPING_SCOPED usage).
  WEFT_MAPPING_MODE_SCOPED = 0,
  // Kept mapped indefinitely (requires MAPPING_PERSISTENT usage).
  WEFT_MAPPING_MODE_PERSISTENT = 1,
} weft_mapping_mode_t;

// A host view of a buffer range. Caller-owned storage.
typedef struct weft_buffer_mapping_t {
  weft_buffer_t* buffer;  // retained while mapped
  weft_memory_access_t access;
  weft_device_size_t byte_offset;  // relative to |buffer|
  weft_device_size_t byte_length;
  uint8_t* contents;
} weft_buffer_mapping_t;

// Maps [offset, offset+length) of |buffer| for |access|. Requires the
// HOST_VISIBLE memory type, the mapping usage for |mode| and |access|
// within the buffer's allowed access. Fails if the buffer has no memory
// (a transient buffer before alloca or after dealloca).
weft_status_t weft_buffer_map_range(weft_buffer_t* buffer,
                                    weft_mapping_mode_t mode,
                                    weft_memory_access_t access,
                                    weft_device_size_t offset,
                                    weft_device_size_t length,
                                    weft_buffer_mapping_t* out_mapping);

// Unmaps and releases the buffer reference. Safe on a zeroed mapping.
void weft_buffer_unmap_range(weft_buffer_mapping_t* mapping);

// Makes host writes to a subrange of the mapping visible to the device
// (no-op on coherent memory). Range relative to the mapping.
weft_status_t weft_buffer_mapping_flush(weft_buffer_mapping_t* mapping,
                                        weft_device_size_t offset,
                                        weft_device_size_t length);
// Makes device writes visible to the host (no-op on coherent memory).
weft_status_t weft_buffer_mapping_invalidate(weft_buffer_mapping_t* mapping,
                                             weft_device_size_t offset,
                                             weft_device_size_t length);

// Host helpers: map, copy, unmap.
weft_status_t weft_buffer_map_read(weft_buffer_t* buffer,
                                   weft_device_size_t offset, void* target,
                                   weft_device_size_t length);
weft_status_t weft_buffer_map_write(weft_buffer_t* buffer,
                                    weft_device_size_t offset,
                                    const void* source,
                                    weft_device_size_t length);
// Fills with a 1, 2 or 4 byte |pattern|; offset and length must be
// multiples of the pattern length (INVALID_ARGUMENT otherwise).
weft_status_t weft_buffer_map_fill(weft_buffer_t* buffer,
                                   weft_device_size_t offset,
                                   weft_device_size_t length,
                                   const void* pattern,
                                   uint32_t pattern_length);
// Copies between buffers through host mappings. Overlapping ranges of one
// allocation are INVALID_ARGUMENT.
weft_status_t weft_buffer_map_copy(weft_buffer_t* source,
                                   weft_device_size_t source_offset,
                                   weft_buffer_t* target,
                                   weft_device_size_t target_offset,
                                   weft_device_size_t length);

// --- Buffer references and binding tables ----------------------------------

// A reference to a buffer range used by command buffers: either direct
// (|buffer| set) or indirect (|buffer| NULL, |slot| indexes the binding
// table given at execute). |offset| and |length| are relative to the bound
// buffer (length may be WEFT_WHOLE_BUFFER).
typedef struct weft_buffer_ref_t {
  weft_buffer_t* buffer;
  uint32_t slot;
  weft_device_size_t offset;
  weft_device_size_t length;
} weft_buffer_ref_t;

static inline weft_buffer_ref_t weft_make_buffer_ref(
    weft_buffer_t* buffer, weft_device_size_t offset,
    weft_device_size_t length) {
  weft_buffer_ref_t ref = {buffer, 0, offset, length};
  return ref;
}
static inline weft_buffer_ref_t weft_make_indirect_buffer_ref(
    uint32_t slot, weft_device_size_t offset, weft_device_size_t length) {
  weft_buffer_ref_t ref = {NULL, slot, offset, length};
  return ref;
}

// One binding table entry: a buffer range bound to a slot.
typedef struct weft_buffer_binding_t {
  weft_buffer_t* buffer;
  weft_device_size_t offset;
  weft_device_size_t length;
} weft_buffer_binding_t;

typedef struct weft_binding_table_t {
  uint32_t count;
  const weft_buffer_binding_t* bindings;
} weft_binding_table_t;

// The table with no entries, for command buffers with only direct references.
static inline weft_binding_table_t weft_binding_table_empty(void) {
  weft_binding_table_t table = {0, NULL};
  return table;
}

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_BUFFER_H_
