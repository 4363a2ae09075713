// weft: the CPU drivers' queue transfers, through host mappings.
//
// A CPU driver's device-local memory is host memory, so its queue
// transfers (weft_buffer_transfer_*) reach any of its buffers through a
// host mapping whatever the buffer's mapping usage or memory type: the
// queue layer has checked the transfer usage and the range, so these check
// only the range (OUT_OF_RANGE) and that memory is present (a transient
// buffer before alloca or after dealloca: FAILED_PRECONDITION). |what|
// names the caller in messages ("queue_fill"). One mechanism with the
// public host helpers (weft_buffer_map_read, _write, _fill, _copy), which
// also check that the host may map the buffer: both live in the HAL core
// (src/hal/buffer.c; these are its unchecked forms). A driver with memory
// of its own moves bytes its own way and needs none of this.
#ifndef WEFT_HAL_LOCAL_HOST_TRANSFER_H_
#define WEFT_HAL_LOCAL_HOST_TRANSFER_H_

#include <stdint.h>

#include "weft/buffer.h"

// Fills [offset, offset + length) with a 1, 2 or 4 byte pattern (the
// pattern and its alignment are validated). Zero length is a no-op.
weft_status_t weft_buffer_transfer_fill(weft_buffer_t* target,
                                        weft_device_size_t offset,
                                        weft_device_size_t length,
                                        const void* pattern,
                                        uint32_t pattern_length,
                                        const char* what);
// Copies |length| host bytes from |source| into |target| at |offset|.
weft_status_t weft_buffer_transfer_write(weft_buffer_t* target,
                                         weft_device_size_t offset,
                                         const void* source,
                                         weft_device_size_t length,
                                         const char* what);
// Copies |length| bytes of |source| at |offset| to host memory |target|.
weft_status_t weft_buffer_transfer_read(weft_buffer_t* source,
                                        weft_device_size_t offset,
                                        void* target,
                                        weft_device_size_t length,
                                        const char* what);
// Copies between two buffers; overlapping ranges of one allocation are
// INVALID_ARGUMENT. Zero length is a no-op.
weft_status_t weft_buffer_transfer_copy(weft_buffer_t* source,
                                        weft_device_size_t source_offset,
                                        weft_buffer_t* target,
                                        weft_device_size_t target_offset,
                                        weft_device_size_t length,
                                        const char* what);

#endif  // WEFT_HAL_LOCAL_HOST_TRANSFER_H_
