// weft: what a buffer implementation provides, and the queue layer's
// mapping entry points.
//
// Every buffer embeds weft_buffer_t at offset 0. A root buffer (heap,
// transient, a driver's device memory) owns its memory and is its own
// |allocated_buffer|; a subspan retains its root and only records a window
// [byte_offset, byte_offset + byte_length) of it. Mapping always goes to
// the root's vtable with offsets relative to the root's memory, so a buffer
// implementation never sees subspans.
#ifndef WEFT_HAL_BUFFER_IMPL_H_
#define WEFT_HAL_BUFFER_IMPL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hal/domain.h"
#include "hal/resource.h"
#include "weft/buffer.h"

typedef struct weft_buffer_vtable_t {
  // Must be first (see resource.h). Frees the buffer and its memory.
  void (*destroy)(weft_buffer_t* buffer);
  // Returns a host pointer to [offset, offset + length) of the root
  // |buffer|'s memory. Ranges, permissions and modes were validated by the
  // caller; the implementation only says whether memory is there
  // (FAILED_PRECONDITION for a transient buffer without memory).
  weft_status_t (*map_range)(weft_buffer_t* buffer, weft_mapping_mode_t mode,
                             weft_memory_access_t access,
                             weft_device_size_t offset,
                             weft_device_size_t length, void** out_host_ptr);
  // Ends a mapping returned by map_range (same offset and length).
  void (*unmap_range)(weft_buffer_t* buffer, weft_device_size_t offset,
                      weft_device_size_t length, void* host_ptr);
  // Makes host writes to [offset, offset + length) visible to the device.
  weft_status_t (*flush_range)(weft_buffer_t* buffer,
                               weft_device_size_t offset,
                               weft_device_size_t length);
  // Makes device writes to [offset, offset + length) visible to the host.
  weft_status_t (*invalidate_range)(weft_buffer_t* buffer,
                                    weft_device_size_t offset,
                                    weft_device_size_t length);
} weft_buffer_vtable_t;

typedef enum weft_buffer_placement_flag_bits_e {
  WEFT_BUFFER_PLACEMENT_NONE = 0,
  // The host can map the memory (host memory, or device memory mapped
  // into the host's address space).
  WEFT_BUFFER_PLACEMENT_HOST_VISIBLE = 1u << 0,
  // Returned by weft_device_queue_alloca: its memory exists between the
  // alloca and the dealloca ops.
  WEFT_BUFFER_PLACEMENT_QUEUE_ORDERED = 1u << 1,
} weft_buffer_placement_flag_bits_t;
typedef uint32_t weft_buffer_placement_flags_t;

// Where a root buffer's memory lives (hal/domain.h); subspans share their
// root's.
typedef struct weft_buffer_placement_t {
  weft_domain_t domain;
  weft_buffer_placement_flags_t flags;
} weft_buffer_placement_t;

struct weft_buffer_t {
  weft_resource_t resource;  // vtable: weft_buffer_vtable_t
  // The allocator this object (not necessarily its memory) was allocated
  // with; the destroy function frees with it.
  weft_allocator_t allocator;
  // The root buffer owning the memory: this buffer itself for roots, a
  // retained reference for subspans.
  weft_buffer_t* allocated_buffer;
  // Offset of this buffer's first byte within |allocated_buffer|'s memory.
  weft_device_size_t byte_offset;
  weft_device_size_t byte_length;
  weft_memory_type_t memory_type;
  weft_memory_access_t allowed_access;
  weft_buffer_usage_t allowed_usage;
  weft_buffer_placement_t placement;
};

_Static_assert(offsetof(weft_buffer_t, resource) == 0,
               "weft_buffer_t must start with its resource");

// Initialises the common fields of a root buffer of |byte_length| bytes
// placed at |placement|. |params| is canonicalised here. The buffer starts
// with one reference and is its own allocated buffer.
void weft_buffer_initialize(const weft_buffer_vtable_t* vtable,
                            weft_allocator_t allocator,
                            weft_buffer_params_t params,
                            weft_buffer_placement_t placement,
                            weft_device_size_t byte_length,
                            weft_buffer_t* out_buffer);

// Where |buffer|'s memory lives (its root's placement).
static inline weft_buffer_placement_t weft_buffer_placement(
    const weft_buffer_t* buffer) {
  return buffer->allocated_buffer->placement;
}

// True when a device in |domain| reaches |buffer|'s memory: memory of that
// domain, or host-visible memory for a device in the host domain.
static inline bool weft_buffer_is_reachable(const weft_buffer_t* buffer,
                                            weft_domain_t domain) {
  const weft_buffer_placement_t placement = weft_buffer_placement(buffer);
  return placement.domain == domain ||
         (domain == WEFT_DOMAIN_HOST &&
          (placement.flags & WEFT_BUFFER_PLACEMENT_HOST_VISIBLE));
}

// True when |buffer| is a root buffer returned by weft_device_queue_alloca
// (not a subspan of one): what weft_device_queue_dealloca takes.
static inline bool weft_buffer_is_queue_ordered_root(
    const weft_buffer_t* buffer) {
  return buffer->allocated_buffer == buffer &&
         (buffer->placement.flags & WEFT_BUFFER_PLACEMENT_QUEUE_ORDERED);
}

static inline const weft_buffer_vtable_t* weft_buffer_vtable(
    const weft_buffer_t* buffer) {
  return (const weft_buffer_vtable_t*)buffer->resource.vtable;
}

// Maps [offset, offset + length) of |buffer| (offset relative to |buffer|;
// length may be WEFT_WHOLE_BUFFER) for a driver that reaches the memory
// whatever the buffer's mapping usage or memory type (a CPU driver's
// device-local memory is host memory): checks only the range (OUT_OF_RANGE)
// and that memory is present (a transient buffer before alloca or after
// dealloca: FAILED_PRECONDITION). |what| names the caller in messages. The
// mapping retains the buffer; end it with weft_buffer_unmap_range.
weft_status_t weft_buffer_map_range_unchecked(weft_buffer_t* buffer,
                                              weft_memory_access_t access,
                                              weft_device_size_t offset,
                                              weft_device_size_t length,
                                              const char* what,
                                              weft_buffer_mapping_t* out_mapping);

// Host copies for a driver that reaches the memory whatever the buffer's
// mapping usage or memory type, like weft_buffer_map_range_unchecked: the
// unchecked forms of weft_buffer_map_read, _write, _fill and _copy. They
// check the range (OUT_OF_RANGE), the fill pattern and its alignment, copy
// overlap (INVALID_ARGUMENT) and that memory is present
// (FAILED_PRECONDITION); |what| names the caller in messages ("queue_fill").
// Zero length is a no-op. The CPU drivers' queue transfers and inline
// command buffers call them (hal/local/queue_ops.c).
weft_status_t weft_buffer_map_read_unchecked(weft_buffer_t* source,
                                             weft_device_size_t offset,
                                             void* target,
                                             weft_device_size_t length,
                                             const char* what);
weft_status_t weft_buffer_map_write_unchecked(weft_buffer_t* target,
                                              weft_device_size_t offset,
                                              const void* source,
                                              weft_device_size_t length,
                                              const char* what);
weft_status_t weft_buffer_map_fill_unchecked(weft_buffer_t* target,
                                             weft_device_size_t offset,
                                             weft_device_size_t length,
                                             const void* pattern,
                                             uint32_t pattern_length,
                                             const char* what);
weft_status_t weft_buffer_map_copy_unchecked(weft_buffer_t* source,
                                             weft_device_size_t source_offset,
                                             weft_buffer_t* target,
                                             weft_device_size_t target_offset,
                                             weft_device_size_t length,
                                             const char* what);

// Maps a validated, resolved range of |buffer| through its allocated
// buffer. Takes no reference.
static inline weft_status_t weft_buffer_map_resolved(weft_buffer_t* buffer,
                                              weft_mapping_mode_t mode,
                                              weft_memory_access_t access,
                                              weft_device_size_t offset,
                                              weft_device_size_t length,
                                              uint8_t** out_host_ptr) {
  weft_buffer_t* allocated = buffer->allocated_buffer;
  void* host_ptr = NULL;
  weft_status_t status = weft_buffer_vtable(allocated)->map_range(
      allocated, mode, access, buffer->byte_offset + offset, length,
      &host_ptr);
  *out_host_ptr = (uint8_t*)host_ptr;
  return status;
}

static inline void weft_buffer_unmap_resolved(weft_buffer_t* buffer,
                                       weft_device_size_t offset,
                                       weft_device_size_t length,
                                       uint8_t* host_ptr) {
  weft_buffer_t* allocated = buffer->allocated_buffer;
  weft_buffer_vtable(allocated)->unmap_range(
      allocated, buffer->byte_offset + offset, length, host_ptr);
}

#endif  // WEFT_HAL_BUFFER_IMPL_H_
