// weft hal module: buffer views, as the module's functions make them
// (private; weft/vm/hal.h has the public API).
#ifndef WEFT_MODULES_HAL_BUFFER_VIEW_H_
#define WEFT_MODULES_HAL_BUFFER_VIEW_H_

#include <stdint.h>

#include "weft/allocator.h"
#include "weft/buffer.h"
#include "weft/status.h"
#include "weft/vm/hal.h"

// weft_hal_buffer_view_create with |element_type| as the program gave it
// (any i32, checked) and its messages naming |caller|
// ("hal.buffer_view.create: argument 'shape' ..."). |buffer| and
// |out_view| must not be NULL; |shape| only when |rank| is 0.
weft_status_t weft_hal_buffer_view_create_as(
    const char* caller, weft_buffer_t* buffer, int64_t byte_offset,
    int32_t element_type, uint32_t rank, const int64_t* shape,
    weft_allocator_t allocator, weft_hal_buffer_view_t** out_view);

#endif  // WEFT_MODULES_HAL_BUFFER_VIEW_H_
