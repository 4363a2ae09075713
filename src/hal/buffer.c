// weft: buffers, subspans, mappings, host copies and the checks shared
// with the queues.
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/arguments.h"
#include "hal/buffer_impl.h"
#include "hal/buffer_validation.h"

// --- Parameters and formatting ---------------------------------------------

weft_buffer_params_t weft_buffer_params_canonicalize(
    weft_buffer_params_t params) {
  if (params.type == WEFT_MEMORY_TYPE_NONE) {
    params.type = WEFT_MEMORY_TYPE_DEVICE_LOCAL |
                  WEFT_MEMORY_TYPE_HOST_VISIBLE |
                  WEFT_MEMORY_TYPE_HOST_COHERENT;
  }
  if (params.access == WEFT_MEMORY_ACCESS_NONE) {
    params.access = WEFT_MEMORY_ACCESS_ALL;
  }
  if (params.usage == WEFT_BUFFER_USAGE_NONE) {
    params.usage = WEFT_BUFFER_USAGE_DEFAULT;
  }
  return params;
}

typedef struct weft_bit_name_t {
  uint32_t bit;
  const char* name;
} weft_bit_name_t;

static const weft_bit_name_t kWeftMemoryAccessNames[] = {
    {WEFT_MEMORY_ACCESS_READ, "READ"},
    {WEFT_MEMORY_ACCESS_WRITE, "WRITE"},
    {WEFT_MEMORY_ACCESS_DISCARD, "DISCARD"},
};
static const weft_bit_name_t kWeftBufferUsageNames[] = {
    {WEFT_BUFFER_USAGE_TRANSFER_SOURCE, "TRANSFER_SOURCE"},
    {WEFT_BUFFER_USAGE_TRANSFER_TARGET, "TRANSFER_TARGET"},
    {WEFT_BUFFER_USAGE_DISPATCH_STORAGE, "DISPATCH_STORAGE"},
    {WEFT_BUFFER_USAGE_MAPPING_SCOPED, "MAPPING_SCOPED"},
    {WEFT_BUFFER_USAGE_MAPPING_PERSISTENT, "MAPPING_PERSISTENT"},
};
static const weft_bit_name_t kWeftMemoryTypeNames[] = {
    {WEFT_MEMORY_TYPE_DEVICE_LOCAL, "DEVICE_LOCAL"},
    {WEFT_MEMORY_TYPE_HOST_VISIBLE, "HOST_VISIBLE"},
    {WEFT_MEMORY_TYPE_HOST_COHERENT, "HOST_COHERENT"},
    {WEFT_MEMORY_TYPE_HOST_CACHED, "HOST_CACHED"},
};

// Appends |text| at |*inout_used| without overflowing |capacity|.
static void weft_bits_append(char* buffer, size_t capacity,
                             size_t* inout_used, const char* text) {
  if (*inout_used >= capacity) return;
  int written = snprintf(buffer + *inout_used, capacity - *inout_used, "%s%s",
                         *inout_used ? "|" : "", text);
  if (written > 0) *inout_used += (size_t)written;
}

static const char* weft_bits_format(uint32_t value,
                                    const weft_bit_name_t* names,
                                    size_t name_count, char* buffer,
                                    size_t capacity) {
  if (capacity == 0) return "";
  buffer[0] = 0;
  size_t used = 0;
  if (value == 0) weft_bits_append(buffer, capacity, &used, "NONE");
  for (size_t i = 0; i < name_count; ++i) {
    if (value & names[i].bit) {
      weft_bits_append(buffer, capacity, &used, names[i].name);
      value &= ~names[i].bit;
    }
  }
  if (value != 0) {
    char unknown[16];
    snprintf(unknown, sizeof(unknown), "0x%" PRIx32, value);
    weft_bits_append(buffer, capacity, &used, unknown);
  }
  return buffer;
}

const char* weft_memory_access_format(weft_memory_access_t access,
                                      char* buffer, size_t capacity) {
  return weft_bits_format(
      access, kWeftMemoryAccessNames,
      sizeof(kWeftMemoryAccessNames) / sizeof(kWeftMemoryAccessNames[0]),
      buffer, capacity);
}

const char* weft_buffer_usage_format(weft_buffer_usage_t usage, char* buffer,
                                     size_t capacity) {
  return weft_bits_format(
      usage, kWeftBufferUsageNames,
      sizeof(kWeftBufferUsageNames) / sizeof(kWeftBufferUsageNames[0]),
      buffer, capacity);
}

const char* weft_memory_type_format(weft_memory_type_t type, char* buffer,
                                    size_t capacity) {
  return weft_bits_format(
      type, kWeftMemoryTypeNames,
      sizeof(kWeftMemoryTypeNames) / sizeof(kWeftMemoryTypeNames[0]), buffer,
      capacity);
}

// --- Validation -------------------------------------------------------------

// Resolves (offset, length) within |total| bytes of |noun| ("the buffer",
// "the mapping").
static weft_status_t weft_range_resolve(weft_device_size_t total,
                                        weft_device_size_t offset,
                                        weft_device_size_t length,
                                        const char* what, const char* noun,
                                        weft_device_size_t* out_length) {
  weft_status_t status = WEFT_OK;
  weft_device_size_t resolved = 0;
  if (length == WEFT_WHOLE_BUFFER) {
    if (offset > total) {
      status = WEFT_STATUS(OUT_OF_RANGE,
                           "%s: offset %" PRIu64
                           " is past the end of %s (%" PRIu64 " bytes)",
                           what, offset, noun, total);
    } else {
      resolved = total - offset;
    }
  } else if (length > UINT64_MAX - offset) {
    status = WEFT_STATUS(OUT_OF_RANGE,
                         "%s: range of %" PRIu64 " bytes at offset %" PRIu64
                         " overflows (%s is %" PRIu64 " bytes)",
                         what, length, offset, noun, total);
  } else if (offset > total || length > total - offset) {
    status = WEFT_STATUS(OUT_OF_RANGE,
                         "%s: range [%" PRIu64 ", %" PRIu64
                         ") is past the end of %s (%" PRIu64 " bytes)",
                         what, offset, offset + length, noun, total);
  } else {
    resolved = length;
  }
  if (out_length) *out_length = resolved;
  return status;
}

weft_status_t weft_buffer_validate_range(const weft_buffer_t* buffer,
                                         weft_device_size_t offset,
                                         weft_device_size_t length,
                                         const char* what,
                                         weft_device_size_t* out_length) {
  return weft_range_resolve(buffer->byte_length, offset, length, what,
                            "the buffer", out_length);
}

weft_status_t weft_buffer_calculate_range(const weft_buffer_t* buffer,
                                          weft_device_size_t offset,
                                          weft_device_size_t length,
                                          const char* what,
                                          weft_device_size_t* out_length) {
  if (out_length) *out_length = 0;
  weft_status_t status =
      weft_arguments_require(__func__, "buffer,out_length",
                             (const void* const[]){buffer, out_length}, 2);
  if (weft_status_is_ok(status)) {
    status = weft_buffer_validate_range(buffer, offset, length,
                                        what ? what : __func__, out_length);
  }
  return status;
}

weft_status_t weft_buffer_validate_usage(const weft_buffer_t* buffer,
                                         weft_buffer_usage_t required_usage,
                                         const char* what) {
  weft_buffer_usage_t missing = required_usage & ~buffer->allowed_usage;
  if (missing == 0) return WEFT_OK;
  char allowed_text[WEFT_BUFFER_BITS_FORMAT_CAPACITY];
  char missing_text[WEFT_BUFFER_BITS_FORMAT_CAPACITY];
  return WEFT_STATUS(
      PERMISSION_DENIED, "%s: buffer allows usage %s but %s is required", what,
      weft_buffer_usage_format(buffer->allowed_usage, allowed_text,
                               sizeof(allowed_text)),
      weft_buffer_usage_format(missing, missing_text, sizeof(missing_text)));
}

weft_status_t weft_buffer_validate_reach(const weft_buffer_t* buffer,
                                         weft_domain_t domain,
                                         const char* device_id,
                                         const char* what) {
  if (weft_buffer_is_reachable(buffer, domain)) return WEFT_OK;
  const weft_buffer_placement_t placement = weft_buffer_placement(buffer);
  const bool host_visible =
      (placement.flags & WEFT_BUFFER_PLACEMENT_HOST_VISIBLE) != 0;
  return WEFT_STATUS(
      INVALID_ARGUMENT,
      "%s: the buffer (%" PRIu64
      " bytes) lives in the memory of domain %" PRIu64
      " (%s), which device '%s' (domain %" PRIu64 ") cannot reach",
      what, (uint64_t)buffer->byte_length, (uint64_t)placement.domain,
      host_visible ? "host-visible" : "not host-visible", device_id,
      (uint64_t)domain);
}

weft_status_t weft_buffer_validate_access(const weft_buffer_t* buffer,
                                          weft_memory_access_t access,
                                          const char* what) {
  if (access == WEFT_MEMORY_ACCESS_NONE) {
    return WEFT_STATUS(INVALID_ARGUMENT, "%s: no memory access requested",
                       what);
  }
  weft_memory_access_t missing = access & ~buffer->allowed_access;
  if (missing == 0) return WEFT_OK;
  char allowed_text[WEFT_BUFFER_BITS_FORMAT_CAPACITY];
  char missing_text[WEFT_BUFFER_BITS_FORMAT_CAPACITY];
  return WEFT_STATUS(
      PERMISSION_DENIED, "%s: buffer allows %s but %s was requested", what,
      weft_memory_access_format(buffer->allowed_access, allowed_text,
                                sizeof(allowed_text)),
      weft_memory_access_format(missing, missing_text, sizeof(missing_text)));
}

weft_status_t weft_buffer_validate_memory_type(const weft_buffer_t* buffer,
                                               weft_memory_type_t required_type,
                                               const char* what) {
  weft_memory_type_t missing = required_type & ~buffer->memory_type;
  if (missing == 0) return WEFT_OK;
  char type_text[WEFT_BUFFER_BITS_FORMAT_CAPACITY];
  char missing_text[WEFT_BUFFER_BITS_FORMAT_CAPACITY];
  return WEFT_STATUS(
      PERMISSION_DENIED, "%s: buffer has memory type %s but %s is required",
      what,
      weft_memory_type_format(buffer->memory_type, type_text,
                              sizeof(type_text)),
      weft_memory_type_format(missing, missing_text, sizeof(missing_text)));
}

weft_status_t weft_buffer_validate_fill_pattern(weft_device_size_t offset,
                                                weft_device_size_t length,
                                                uint32_t pattern_length,
                                                const char* what) {
  weft_status_t status = WEFT_OK;
  if (pattern_length != 1 && pattern_length != 2 && pattern_length != 4) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "%s: pattern length %" PRIu32
                         " is not 1, 2 or 4 bytes",
                         what, pattern_length);
  } else if (offset % pattern_length != 0) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "%s: offset %" PRIu64
                         " is not a multiple of the pattern length (%" PRIu32
                         " bytes)",
                         what, offset, pattern_length);
  } else if (length % pattern_length != 0) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "%s: length %" PRIu64
                         " is not a multiple of the pattern length (%" PRIu32
                         " bytes)",
                         what, length, pattern_length);
  }
  return status;
}

weft_status_t weft_buffer_validate_copy_overlap(
    const weft_buffer_t* source, weft_device_size_t source_offset,
    const weft_buffer_t* target, weft_device_size_t target_offset,
    weft_device_size_t length, const char* what) {
  if (length == 0 || source->allocated_buffer != target->allocated_buffer) {
    return WEFT_OK;
  }
  // Both ranges were validated against their buffers, which lie within the
  // allocation, so these sums cannot overflow.
  weft_device_size_t source_start = source->byte_offset + source_offset;
  weft_device_size_t target_start = target->byte_offset + target_offset;
  if (source_start >= target_start + length ||
      target_start >= source_start + length) {
    return WEFT_OK;
  }
  return WEFT_STATUS(INVALID_ARGUMENT,
                     "%s: source range [%" PRIu64 ", %" PRIu64
                     ") and target range [%" PRIu64 ", %" PRIu64
                     ") overlap in the same allocation (at [%" PRIu64
                     ", %" PRIu64 ") and [%" PRIu64 ", %" PRIu64 "))",
                     what, source_offset, source_offset + length,
                     target_offset, target_offset + length, source_start,
                     source_start + length, target_start,
                     target_start + length);
}

weft_status_t weft_buffer_validate_mapping(const weft_buffer_t* buffer,
                                                  weft_mapping_mode_t mode,
                                                  weft_memory_access_t access,
                                                  const char* what) {
  weft_buffer_usage_t required_usage = 0;
  switch (mode) {
    case WEFT_MAPPING_MODE_SCOPED:
      required_usage = WEFT_BUFFER_USAGE_MAPPING_SCOPED;
      break;
    case WEFT_MAPPING_MODE_PERSISTENT:
      required_usage = WEFT_BUFFER_USAGE_MAPPING_PERSISTENT;
      break;
    default:
      return WEFT_STATUS(INVALID_ARGUMENT, "%s: unknown mapping mode %d",
                         what, (int)mode);
  }
  weft_status_t status = weft_buffer_validate_memory_type(
      buffer, WEFT_MEMORY_TYPE_HOST_VISIBLE, what);
  if (weft_status_is_ok(status)) {
    status = weft_buffer_validate_usage(buffer, required_usage, what);
  }
  if (weft_status_is_ok(status)) {
    status = weft_buffer_validate_access(buffer, access, what);
  }
  return status;
}

// --- Root buffers and subspans ---------------------------------------------

void weft_buffer_initialize(const weft_buffer_vtable_t* vtable,
                            weft_allocator_t allocator,
                            weft_buffer_params_t params,
                            weft_buffer_placement_t placement,
                            weft_device_size_t byte_length,
                            weft_buffer_t* out_buffer) {
  params = weft_buffer_params_canonicalize(params);
  out_buffer->placement = placement;
  weft_resource_initialize(WEFT_RESOURCE_TYPE_BUFFER, vtable,
                           &out_buffer->resource);
  out_buffer->allocator = allocator;
  out_buffer->allocated_buffer = out_buffer;
  out_buffer->byte_offset = 0;
  out_buffer->byte_length = byte_length;
  out_buffer->memory_type = params.type;
  out_buffer->allowed_access = params.access;
  out_buffer->allowed_usage = params.usage;
}

void weft_buffer_retain(weft_buffer_t* buffer) {
  weft_resource_retain(buffer);
}

void weft_buffer_release(weft_buffer_t* buffer) {
  weft_resource_release(buffer);
}

weft_device_size_t weft_buffer_byte_length(const weft_buffer_t* buffer) {
  return buffer ? buffer->byte_length : 0;
}

weft_device_size_t weft_buffer_byte_offset(const weft_buffer_t* buffer) {
  return buffer ? buffer->byte_offset : 0;
}

weft_memory_type_t weft_buffer_memory_type(const weft_buffer_t* buffer) {
  return buffer ? buffer->memory_type : 0;
}

weft_memory_access_t weft_buffer_allowed_access(const weft_buffer_t* buffer) {
  return buffer ? buffer->allowed_access : 0;
}

weft_buffer_usage_t weft_buffer_allowed_usage(const weft_buffer_t* buffer) {
  return buffer ? buffer->allowed_usage : 0;
}

weft_buffer_t* weft_buffer_allocated_buffer(weft_buffer_t* buffer) {
  return buffer ? buffer->allocated_buffer : NULL;
}

// Subspans forward everything to their allocated buffer; the public entry
// points already go there directly, so these run only if a caller reaches
// a subspan's vtable by hand.
static void weft_subspan_buffer_destroy(weft_buffer_t* buffer) {
  weft_buffer_t* allocated = buffer->allocated_buffer;
  weft_allocator_free(buffer->allocator, buffer);
  weft_buffer_release(allocated);
}

static weft_status_t weft_subspan_buffer_map_range(
    weft_buffer_t* buffer, weft_mapping_mode_t mode,
    weft_memory_access_t access, weft_device_size_t offset,
    weft_device_size_t length, void** out_host_ptr) {
  weft_buffer_t* allocated = buffer->allocated_buffer;
  return weft_buffer_vtable(allocated)->map_range(allocated, mode, access,
                                                  offset, length, out_host_ptr);
}

static void weft_subspan_buffer_unmap_range(weft_buffer_t* buffer,
                                            weft_device_size_t offset,
                                            weft_device_size_t length,
                                            void* host_ptr) {
  weft_buffer_t* allocated = buffer->allocated_buffer;
  weft_buffer_vtable(allocated)->unmap_range(allocated, offset, length,
                                             host_ptr);
}

static weft_status_t weft_subspan_buffer_flush_range(
    weft_buffer_t* buffer, weft_device_size_t offset,
    weft_device_size_t length) {
  weft_buffer_t* allocated = buffer->allocated_buffer;
  return weft_buffer_vtable(allocated)->flush_range(allocated, offset, length);
}

static weft_status_t weft_subspan_buffer_invalidate_range(
    weft_buffer_t* buffer, weft_device_size_t offset,
    weft_device_size_t length) {
  weft_buffer_t* allocated = buffer->allocated_buffer;
  return weft_buffer_vtable(allocated)->invalidate_range(allocated, offset,
                                                         length);
}

static const weft_buffer_vtable_t kWeftSubspanBufferVtable = {
    .destroy = weft_subspan_buffer_destroy,
    .map_range = weft_subspan_buffer_map_range,
    .unmap_range = weft_subspan_buffer_unmap_range,
    .flush_range = weft_subspan_buffer_flush_range,
    .invalidate_range = weft_subspan_buffer_invalidate_range,
};

weft_status_t weft_buffer_subspan(weft_buffer_t* buffer,
                                  weft_device_size_t offset,
                                  weft_device_size_t length,
                                  weft_allocator_t allocator,
                                  weft_buffer_t** out_buffer) {
  if (out_buffer) *out_buffer = NULL;
  weft_device_size_t resolved = 0;
  weft_status_t status =
      weft_arguments_require(__func__, "buffer,out_buffer",
                             (const void* const[]){buffer, out_buffer}, 2);
  if (weft_status_is_ok(status)) {
    status = weft_buffer_validate_range(buffer, offset, length,
                                        "buffer_subspan", &resolved);
  }
  // A view of the whole buffer is the buffer itself.
  bool whole = weft_status_is_ok(status) && offset == 0 &&
               resolved == buffer->byte_length;
  if (whole) {
    weft_buffer_retain(buffer);
    *out_buffer = buffer;
  }
  weft_buffer_t* subspan = NULL;
  if (weft_status_is_ok(status) && !whole) {
    status =
        weft_allocator_malloc(allocator, sizeof(*subspan), (void**)&subspan);
  }
  if (weft_status_is_ok(status) && !whole) {
    weft_resource_initialize(WEFT_RESOURCE_TYPE_BUFFER,
                             &kWeftSubspanBufferVtable, &subspan->resource);
    subspan->allocator = allocator;
    subspan->allocated_buffer = buffer->allocated_buffer;
    weft_buffer_retain(subspan->allocated_buffer);
    subspan->byte_offset = buffer->byte_offset + offset;
    subspan->byte_length = resolved;
    subspan->memory_type = buffer->memory_type;
    subspan->allowed_access = buffer->allowed_access;
    subspan->allowed_usage = buffer->allowed_usage;
    *out_buffer = subspan;
  }
  return status;
}

// --- Mapping ----------------------------------------------------------------

// Validates |buffer| for a host mapping of (offset, length) in |mode| with
// |access| (the mapping permissions only when |check_permissions|) and
// resolves the length into |out_length|. Shared by the map entry points and
// the host copies below.
static weft_status_t weft_buffer_prepare_host_range(
    weft_buffer_t* buffer, weft_mapping_mode_t mode,
    weft_memory_access_t access, weft_device_size_t offset,
    weft_device_size_t length, bool check_permissions, const char* what,
    weft_device_size_t* out_length) {
  *out_length = 0;
  weft_status_t status = WEFT_OK;
  if (!buffer) {
    status = WEFT_STATUS(INVALID_ARGUMENT, "%s: buffer is NULL", what);
  } else if (check_permissions) {
    status = weft_buffer_validate_mapping(buffer, mode, access, what);
  }
  if (weft_status_is_ok(status)) {
    status =
        weft_buffer_validate_range(buffer, offset, length, what, out_length);
  }
  if (weft_status_is_ok(status) && *out_length > SIZE_MAX) {
    status = WEFT_STATUS(OUT_OF_RANGE,
                         "%s: %" PRIu64 " bytes cannot be mapped on this host",
                         what, *out_length);
  }
  return status;
}

// Shared by the checked and unchecked map entry points.
static weft_status_t weft_buffer_map_range_impl(
    weft_buffer_t* buffer, weft_mapping_mode_t mode,
    weft_memory_access_t access, weft_device_size_t offset,
    weft_device_size_t length, bool check_permissions, const char* what,
    weft_buffer_mapping_t* out_mapping) {
  memset(out_mapping, 0, sizeof(*out_mapping));
  weft_device_size_t resolved = 0;
  weft_status_t status = weft_buffer_prepare_host_range(
      buffer, mode, access, offset, length, check_permissions, what,
      &resolved);
  uint8_t* contents = NULL;
  if (weft_status_is_ok(status)) {
    status = weft_buffer_map_resolved(buffer, mode, access, offset, resolved,
                                      &contents);
  }
  if (weft_status_is_ok(status)) {
    weft_buffer_retain(buffer);
    out_mapping->buffer = buffer;
    out_mapping->access = access;
    out_mapping->byte_offset = offset;
    out_mapping->byte_length = resolved;
    out_mapping->contents = contents;
  }
  return status;
}

weft_status_t weft_buffer_map_range(weft_buffer_t* buffer,
                                    weft_mapping_mode_t mode,
                                    weft_memory_access_t access,
                                    weft_device_size_t offset,
                                    weft_device_size_t length,
                                    weft_buffer_mapping_t* out_mapping) {
  weft_status_t status = weft_arguments_require(
      __func__, "buffer,out_mapping",
      (const void* const[]){buffer, out_mapping}, 2);
  if (weft_status_is_ok(status)) {
    status = weft_buffer_map_range_impl(buffer, mode, access, offset, length,
                                        /*check_permissions=*/true,
                                        "buffer_map_range", out_mapping);
  } else if (out_mapping) {
    memset(out_mapping, 0, sizeof(*out_mapping));
  }
  return status;
}

weft_status_t weft_buffer_map_range_unchecked(
    weft_buffer_t* buffer, weft_memory_access_t access,
    weft_device_size_t offset, weft_device_size_t length, const char* what,
    weft_buffer_mapping_t* out_mapping) {
  return weft_buffer_map_range_impl(buffer, WEFT_MAPPING_MODE_SCOPED, access,
                                    offset, length,
                                    /*check_permissions=*/false, what,
                                    out_mapping);
}

void weft_buffer_unmap_range(weft_buffer_mapping_t* mapping) {
  if (!mapping || !mapping->buffer) return;
  weft_buffer_t* buffer = mapping->buffer;
  weft_buffer_unmap_resolved(buffer, mapping->byte_offset,
                             mapping->byte_length, mapping->contents);
  memset(mapping, 0, sizeof(*mapping));
  weft_buffer_release(buffer);
}

typedef weft_status_t (*weft_buffer_sync_fn_t)(weft_buffer_t* buffer,
                                               weft_device_size_t offset,
                                               weft_device_size_t length);

// Flush and invalidate: resolve the range within the mapping, then call the
// allocated buffer unless its memory is coherent or the range is empty.
static weft_status_t weft_buffer_mapping_sync(weft_buffer_mapping_t* mapping,
                                              weft_device_size_t offset,
                                              weft_device_size_t length,
                                              bool flush, const char* what) {
  if (!mapping || !mapping->buffer) {
    return WEFT_STATUS(FAILED_PRECONDITION, "%s: the mapping is not mapped",
                       what);
  }
  weft_device_size_t resolved = 0;
  weft_status_t status = weft_range_resolve(
      mapping->byte_length, offset, length, what, "the mapping", &resolved);
  weft_buffer_t* buffer = mapping->buffer;
  if (weft_status_is_ok(status) && resolved != 0 &&
      !(buffer->memory_type & WEFT_MEMORY_TYPE_HOST_COHERENT)) {
    weft_buffer_t* allocated = buffer->allocated_buffer;
    const weft_buffer_vtable_t* vtable = weft_buffer_vtable(allocated);
    weft_buffer_sync_fn_t fn =
        flush ? vtable->flush_range : vtable->invalidate_range;
    status = fn(allocated,
                buffer->byte_offset + mapping->byte_offset + offset, resolved);
  }
  return status;
}

weft_status_t weft_buffer_mapping_flush(weft_buffer_mapping_t* mapping,
                                        weft_device_size_t offset,
                                        weft_device_size_t length) {
  weft_status_t status = weft_arguments_require(
      __func__, "mapping", (const void* const[]){mapping}, 1);
  if (weft_status_is_ok(status)) {
    status = weft_buffer_mapping_sync(mapping, offset, length, /*flush=*/true,
                                      "buffer_mapping_flush");
  }
  return status;
}

weft_status_t weft_buffer_mapping_invalidate(weft_buffer_mapping_t* mapping,
                                             weft_device_size_t offset,
                                             weft_device_size_t length) {
  weft_status_t status = weft_arguments_require(
      __func__, "mapping", (const void* const[]){mapping}, 1);
  if (weft_status_is_ok(status)) {
    status = weft_buffer_mapping_sync(mapping, offset, length,
                                      /*flush=*/false,
                                      "buffer_mapping_invalidate");
  }
  return status;
}

// --- Host copies ------------------------------------------------------------

// Copies through a scoped host mapping. Each has a checked form (the public
// weft_buffer_map_* helpers: host-visible memory, scoped mapping usage,
// access) and an unchecked one for the CPU drivers' queue transfers
// (buffer_impl.h), which check queue usage themselves. Both check ranges.

static weft_status_t weft_buffer_read_impl(weft_buffer_t* source,
                                           weft_device_size_t offset,
                                           void* target,
                                           weft_device_size_t length,
                                           bool check_permissions,
                                           const char* what) {
  weft_device_size_t resolved = 0;
  weft_status_t status = weft_buffer_prepare_host_range(
      source, WEFT_MAPPING_MODE_SCOPED, WEFT_MEMORY_ACCESS_READ, offset, length,
      check_permissions, what, &resolved);
  if (weft_status_is_ok(status) && resolved != 0 && !target) {
    status = WEFT_STATUS(INVALID_ARGUMENT, "%s: host target is NULL", what);
  }
  if (weft_status_is_ok(status) && resolved != 0) {
    uint8_t* contents = NULL;
    status = weft_buffer_map_resolved(source, WEFT_MAPPING_MODE_SCOPED,
                                      WEFT_MEMORY_ACCESS_READ, offset,
                                      resolved, &contents);
    if (weft_status_is_ok(status)) {
      memcpy(target, contents, (size_t)resolved);
      weft_buffer_unmap_resolved(source, offset, resolved, contents);
    }
  }
  return status;
}

static weft_status_t weft_buffer_write_impl(weft_buffer_t* target,
                                            weft_device_size_t offset,
                                            const void* source,
                                            weft_device_size_t length,
                                            bool check_permissions,
                                            const char* what) {
  weft_device_size_t resolved = 0;
  weft_status_t status = weft_buffer_prepare_host_range(
      target, WEFT_MAPPING_MODE_SCOPED, WEFT_MEMORY_ACCESS_WRITE, offset,
      length, check_permissions, what, &resolved);
  if (weft_status_is_ok(status) && resolved != 0 && !source) {
    status = WEFT_STATUS(INVALID_ARGUMENT, "%s: host source is NULL", what);
  }
  if (weft_status_is_ok(status) && resolved != 0) {
    uint8_t* contents = NULL;
    status = weft_buffer_map_resolved(target, WEFT_MAPPING_MODE_SCOPED,
                                      WEFT_MEMORY_ACCESS_WRITE, offset,
                                      resolved, &contents);
    if (weft_status_is_ok(status)) {
      memcpy(contents, source, (size_t)resolved);
      weft_buffer_unmap_resolved(target, offset, resolved, contents);
    }
  }
  return status;
}

// Fills |length| bytes (a multiple of |pattern_length|) at |target|.
static void weft_fill_memory(uint8_t* target, size_t length,
                             const void* pattern, uint32_t pattern_length) {
  if (pattern_length == 1) {
    memset(target, *(const uint8_t*)pattern, length);
    return;
  }
  // Replicate the pattern to 8 bytes; |target| starts at a pattern boundary
  // and |length| is a multiple of the pattern, so 8-byte stores keep phase.
  uint8_t wide[8];
  for (size_t i = 0; i < sizeof(wide); i += pattern_length) {
    memcpy(wide + i, pattern, pattern_length);
  }
  bool uniform = true;
  for (size_t i = 1; i < pattern_length; ++i) {
    uniform = uniform && wide[i] == wide[0];
  }
  if (uniform) {
    memset(target, wide[0], length);
    return;
  }
  size_t i = 0;
  for (; i + sizeof(wide) <= length; i += sizeof(wide)) {
    memcpy(target + i, wide, sizeof(wide));
  }
  if (i < length) memcpy(target + i, wide, length - i);
}

static weft_status_t weft_buffer_fill_impl(weft_buffer_t* target,
                                           weft_device_size_t offset,
                                           weft_device_size_t length,
                                           const void* pattern,
                                           uint32_t pattern_length,
                                           bool check_permissions,
                                           const char* what) {
  weft_device_size_t resolved = 0;
  weft_status_t status = weft_buffer_prepare_host_range(
      target, WEFT_MAPPING_MODE_SCOPED, WEFT_MEMORY_ACCESS_WRITE, offset,
      length, check_permissions, what, &resolved);
  if (weft_status_is_ok(status)) {
    status = weft_buffer_validate_fill_pattern(offset, resolved,
                                               pattern_length, what);
  }
  if (weft_status_is_ok(status) && resolved != 0 && !pattern) {
    status = WEFT_STATUS(INVALID_ARGUMENT, "%s: pattern is NULL", what);
  }
  if (weft_status_is_ok(status) && resolved != 0) {
    uint8_t* contents = NULL;
    status = weft_buffer_map_resolved(target, WEFT_MAPPING_MODE_SCOPED,
                                      WEFT_MEMORY_ACCESS_WRITE, offset,
                                      resolved, &contents);
    if (weft_status_is_ok(status)) {
      weft_fill_memory(contents, (size_t)resolved, pattern, pattern_length);
      weft_buffer_unmap_resolved(target, offset, resolved, contents);
    }
  }
  return status;
}

static weft_status_t weft_buffer_copy_impl(weft_buffer_t* source,
                                           weft_device_size_t source_offset,
                                           weft_buffer_t* target,
                                           weft_device_size_t target_offset,
                                           weft_device_size_t length,
                                           bool check_permissions,
                                           const char* what) {
  weft_device_size_t source_length = 0;
  weft_device_size_t target_length = 0;
  weft_status_t status = weft_buffer_prepare_host_range(
      source, WEFT_MAPPING_MODE_SCOPED, WEFT_MEMORY_ACCESS_READ, source_offset,
      length, check_permissions, what, &source_length);
  if (weft_status_is_ok(status)) {
    status = weft_buffer_prepare_host_range(
        target, WEFT_MAPPING_MODE_SCOPED, WEFT_MEMORY_ACCESS_WRITE,
        target_offset, source_length, check_permissions, what,
        &target_length);
  }
  if (weft_status_is_ok(status)) {
    status = weft_buffer_validate_copy_overlap(
        source, source_offset, target, target_offset, target_length, what);
  }
  if (weft_status_is_ok(status) && target_length != 0) {
    uint8_t* source_contents = NULL;
    uint8_t* target_contents = NULL;
    status = weft_buffer_map_resolved(source, WEFT_MAPPING_MODE_SCOPED,
                                      WEFT_MEMORY_ACCESS_READ, source_offset,
                                      target_length, &source_contents);
    if (weft_status_is_ok(status)) {
      status = weft_buffer_map_resolved(target, WEFT_MAPPING_MODE_SCOPED,
                                        WEFT_MEMORY_ACCESS_WRITE,
                                        target_offset, target_length,
                                        &target_contents);
      if (weft_status_is_ok(status)) {
        memcpy(target_contents, source_contents, (size_t)target_length);
        weft_buffer_unmap_resolved(target, target_offset, target_length,
                                   target_contents);
      }
      weft_buffer_unmap_resolved(source, source_offset, target_length,
                                 source_contents);
    }
  }
  return status;
}

weft_status_t weft_buffer_map_read(weft_buffer_t* buffer,
                                   weft_device_size_t offset, void* target,
                                   weft_device_size_t length) {
  weft_status_t status =
      weft_arguments_require(__func__, "buffer,target",
                             (const void* const[]){buffer, target}, 2);
  if (weft_status_is_ok(status)) {
    status = weft_buffer_read_impl(buffer, offset, target, length,
                                   /*check_permissions=*/true,
                                   "buffer_map_read");
  }
  return status;
}

weft_status_t weft_buffer_map_write(weft_buffer_t* buffer,
                                    weft_device_size_t offset,
                                    const void* source,
                                    weft_device_size_t length) {
  weft_status_t status =
      weft_arguments_require(__func__, "buffer,source",
                             (const void* const[]){buffer, source}, 2);
  if (weft_status_is_ok(status)) {
    status = weft_buffer_write_impl(buffer, offset, source, length,
                                    /*check_permissions=*/true,
                                    "buffer_map_write");
  }
  return status;
}

weft_status_t weft_buffer_map_fill(weft_buffer_t* buffer,
                                   weft_device_size_t offset,
                                   weft_device_size_t length,
                                   const void* pattern,
                                   uint32_t pattern_length) {
  weft_status_t status =
      weft_arguments_require(__func__, "buffer,pattern",
                             (const void* const[]){buffer, pattern}, 2);
  if (weft_status_is_ok(status)) {
    status = weft_buffer_fill_impl(buffer, offset, length, pattern,
                                   pattern_length, /*check_permissions=*/true,
                                   "buffer_map_fill");
  }
  return status;
}

weft_status_t weft_buffer_map_copy(weft_buffer_t* source,
                                   weft_device_size_t source_offset,
                                   weft_buffer_t* target,
                                   weft_device_size_t target_offset,
                                   weft_device_size_t length) {
  weft_status_t status =
      weft_arguments_require(__func__, "source,target",
                             (const void* const[]){source, target}, 2);
  if (weft_status_is_ok(status)) {
    status = weft_buffer_copy_impl(source, source_offset, target,
                                   target_offset, length,
                                   /*check_permissions=*/true,
                                   "buffer_map_copy");
  }
  return status;
}

weft_status_t weft_buffer_map_read_unchecked(weft_buffer_t* source,
                                             weft_device_size_t offset,
                                             void* target,
                                             weft_device_size_t length,
                                             const char* what) {
  return weft_buffer_read_impl(source, offset, target, length,
                               /*check_permissions=*/false, what);
}

weft_status_t weft_buffer_map_write_unchecked(weft_buffer_t* target,
                                              weft_device_size_t offset,
                                              const void* source,
                                              weft_device_size_t length,
                                              const char* what) {
  return weft_buffer_write_impl(target, offset, source, length,
                                /*check_permissions=*/false, what);
}

weft_status_t weft_buffer_map_fill_unchecked(weft_buffer_t* target,
                                             weft_device_size_t offset,
                                             weft_device_size_t length,
                                             const void* pattern,
                                             uint32_t pattern_length,
                                             const char* what) {
  return weft_buffer_fill_impl(target, offset, length, pattern,
                               pattern_length, /*check_permissions=*/false,
                               what);
}

weft_status_t weft_buffer_map_copy_unchecked(weft_buffer_t* source,
                                             weft_device_size_t source_offset,
                                             weft_buffer_t* target,
                                             weft_device_size_t target_offset,
                                             weft_device_size_t length,
                                             const char* what) {
  return weft_buffer_copy_impl(source, source_offset, target, target_offset,
                               length, /*check_permissions=*/false, what);
}
