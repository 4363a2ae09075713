// weft: buffer checks shared by the host mapping helpers and every queue
// operation, so one mechanism decides and words every error.
//
// Each function returns OK or a status whose message starts with |what|
// (the caller's name, e.g. "queue_fill") and names the values involved:
//   "queue_fill: range [256, 512) is past the end of the buffer (128 bytes)"
//   "buffer_map_range: buffer allows READ but WRITE was requested"
// None of them consume or retain the buffers they are given.
#ifndef WEFT_HAL_BUFFER_VALIDATION_H_
#define WEFT_HAL_BUFFER_VALIDATION_H_

#include <stddef.h>

#include "hal/domain.h"
#include "weft/buffer.h"

// Resolves (offset, length) against |buffer|'s length: WEFT_WHOLE_BUFFER
// means "to the end". OUT_OF_RANGE when the offset or the end is past the
// end of the buffer (or the sum overflows). |out_length| (may be NULL)
// receives the resolved length.
weft_status_t weft_buffer_validate_range(const weft_buffer_t* buffer,
                                         weft_device_size_t offset,
                                         weft_device_size_t length,
                                         const char* what,
                                         weft_device_size_t* out_length);

// PERMISSION_DENIED unless |buffer| was allocated with every bit of
// |required_usage|; the message names the missing bits.
weft_status_t weft_buffer_validate_usage(const weft_buffer_t* buffer,
                                         weft_buffer_usage_t required_usage,
                                         const char* what);

// PERMISSION_DENIED unless |buffer| allows every bit of |access|;
// INVALID_ARGUMENT when |access| is empty.
weft_status_t weft_buffer_validate_access(const weft_buffer_t* buffer,
                                          weft_memory_access_t access,
                                          const char* what);

// PERMISSION_DENIED unless |buffer|'s memory type has every bit of
// |required_type|.
weft_status_t weft_buffer_validate_memory_type(const weft_buffer_t* buffer,
                                               weft_memory_type_t required_type,
                                               const char* what);

// INVALID_ARGUMENT unless a device in |domain| (named |device_id|) can
// reach |buffer|'s memory: memory of that domain, or host-visible memory
// for a device in the host domain (hal/domain.h). Names both.
weft_status_t weft_buffer_validate_reach(const weft_buffer_t* buffer,
                                         weft_domain_t domain,
                                         const char* device_id,
                                         const char* what);

// Everything a host mapping of |buffer| in |mode| for |access| needs:
// host-visible memory, the mapping usage for |mode|, and |access|.
weft_status_t weft_buffer_validate_mapping(const weft_buffer_t* buffer,
                                           weft_mapping_mode_t mode,
                                           weft_memory_access_t access,
                                           const char* what);

// INVALID_ARGUMENT unless |pattern_length| is 1, 2 or 4 and |offset| and
// |length| (resolved, not WEFT_WHOLE_BUFFER) are multiples of it.
weft_status_t weft_buffer_validate_fill_pattern(weft_device_size_t offset,
                                                weft_device_size_t length,
                                                uint32_t pattern_length,
                                                const char* what);

// INVALID_ARGUMENT when [source_offset, +length) of |source| and
// [target_offset, +length) of |target| overlap within one allocation.
// Offsets are relative to each buffer; |length| is resolved.
weft_status_t weft_buffer_validate_copy_overlap(
    const weft_buffer_t* source, weft_device_size_t source_offset,
    const weft_buffer_t* target, weft_device_size_t target_offset,
    weft_device_size_t length, const char* what);

// Write "A|B" names of the set bits (or "NONE") into |buffer| for messages.
// Returns |buffer|.
const char* weft_memory_access_format(weft_memory_access_t access,
                                      char* buffer, size_t capacity);
const char* weft_buffer_usage_format(weft_buffer_usage_t usage, char* buffer,
                                     size_t capacity);
const char* weft_memory_type_format(weft_memory_type_t type, char* buffer,
                                    size_t capacity);

// Capacity that always holds a formatted bit set.
#define WEFT_BUFFER_BITS_FORMAT_CAPACITY 128

#endif  // WEFT_HAL_BUFFER_VALIDATION_H_
