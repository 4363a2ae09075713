// weft: the CPU drivers' queue transfers (see host_transfer.h): the HAL
// core's unchecked host copies (hal/buffer_impl.h) under the names the
// local drivers' queue layer uses.
#include "hal/local/host_transfer.h"

#include "hal/buffer_impl.h"

weft_status_t weft_buffer_transfer_fill(weft_buffer_t* target,
                                        weft_device_size_t offset,
                                        weft_device_size_t length,
                                        const void* pattern,
                                        uint32_t pattern_length,
                                        const char* what) {
  return weft_buffer_map_fill_unchecked(target, offset, length, pattern,
                                        pattern_length, what);
}

weft_status_t weft_buffer_transfer_write(weft_buffer_t* target,
                                         weft_device_size_t offset,
                                         const void* source,
                                         weft_device_size_t length,
                                         const char* what) {
  return weft_buffer_map_write_unchecked(target, offset, source, length, what);
}

weft_status_t weft_buffer_transfer_read(weft_buffer_t* source,
                                        weft_device_size_t offset,
                                        void* target,
                                        weft_device_size_t length,
                                        const char* what) {
  return weft_buffer_map_read_unchecked(source, offset, target, length, what);
}

weft_status_t weft_buffer_transfer_copy(weft_buffer_t* source,
                                        weft_device_size_t source_offset,
                                        weft_buffer_t* target,
                                        weft_device_size_t target_offset,
                                        weft_device_size_t length,
                                        const char* what) {
  return weft_buffer_map_copy_unchecked(source, source_offset, target,
                                        target_offset, length, what);
}
