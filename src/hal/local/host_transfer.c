// weft: copies through host mappings (see host_transfer.h).
//
// Each transfer has a checked form (the public weft_buffer_map_* helpers:
// host-visible memory, scoped mapping usage, access) and an unchecked form
// for the CPU drivers' queue layer, which checks queue usage itself. Both
// check ranges.
#include "hal/local/host_transfer.h"

#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "base/arguments.h"
#include "hal/buffer_impl.h"
#include "hal/buffer_validation.h"

// Validates |buffer| for a transfer of (offset, length) with |access| and
// resolves the length.
static weft_status_t weft_buffer_transfer_prepare(
    weft_buffer_t* buffer, weft_memory_access_t access,
    weft_device_size_t offset, weft_device_size_t length,
    bool check_permissions, const char* what,
    weft_device_size_t* out_length) {
  *out_length = 0;
  weft_status_t status = WEFT_OK;
  if (!buffer) {
    status = WEFT_STATUS(INVALID_ARGUMENT, "%s: buffer is NULL", what);
  } else if (check_permissions) {
    status = weft_buffer_validate_mapping(buffer, WEFT_MAPPING_MODE_SCOPED,
                                          access, what);
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

static weft_status_t weft_buffer_read_impl(weft_buffer_t* source,
                                           weft_device_size_t offset,
                                           void* target,
                                           weft_device_size_t length,
                                           bool check_permissions,
                                           const char* what) {
  weft_device_size_t resolved = 0;
  weft_status_t status = weft_buffer_transfer_prepare(
      source, WEFT_MEMORY_ACCESS_READ, offset, length, check_permissions, what,
      &resolved);
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
  weft_status_t status = weft_buffer_transfer_prepare(
      target, WEFT_MEMORY_ACCESS_WRITE, offset, length, check_permissions,
      what, &resolved);
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
  weft_status_t status = weft_buffer_transfer_prepare(
      target, WEFT_MEMORY_ACCESS_WRITE, offset, length, check_permissions,
      what, &resolved);
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
  weft_status_t status = weft_buffer_transfer_prepare(
      source, WEFT_MEMORY_ACCESS_READ, source_offset, length,
      check_permissions, what, &source_length);
  if (weft_status_is_ok(status)) {
    status = weft_buffer_transfer_prepare(
        target, WEFT_MEMORY_ACCESS_WRITE, target_offset, source_length,
        check_permissions, what, &target_length);
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

weft_status_t weft_buffer_transfer_fill(weft_buffer_t* target,
                                        weft_device_size_t offset,
                                        weft_device_size_t length,
                                        const void* pattern,
                                        uint32_t pattern_length,
                                        const char* what) {
  return weft_buffer_fill_impl(target, offset, length, pattern,
                               pattern_length, /*check_permissions=*/false,
                               what);
}

weft_status_t weft_buffer_transfer_write(weft_buffer_t* target,
                                         weft_device_size_t offset,
                                         const void* source,
                                         weft_device_size_t length,
                                         const char* what) {
  return weft_buffer_write_impl(target, offset, source, length,
                                /*check_permissions=*/false, what);
}

weft_status_t weft_buffer_transfer_read(weft_buffer_t* source,
                                        weft_device_size_t offset,
                                        void* target,
                                        weft_device_size_t length,
                                        const char* what) {
  return weft_buffer_read_impl(source, offset, target, length,
                               /*check_permissions=*/false, what);
}

weft_status_t weft_buffer_transfer_copy(weft_buffer_t* source,
                                        weft_device_size_t source_offset,
                                        weft_buffer_t* target,
                                        weft_device_size_t target_offset,
                                        weft_device_size_t length,
                                        const char* what) {
  return weft_buffer_copy_impl(source, source_offset, target, target_offset,
                               length, /*check_permissions=*/false, what);
}
