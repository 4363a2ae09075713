// weft hal module: buffer views, typed shaped windows on a buffer.
//
// A buffer view is a buffer (retained), a byte offset into it, an element
// type (element_type.h) and a shape of up to WEFT_HAL_BUFFER_VIEW_MAX_RANK
// int64 dimensions; its byte length is the product of the dimensions times
// the element size and must fit the buffer from the offset. Views are
// ref-counted and immutable, so any thread may read one; they are the
// module's own objects (not HAL resources) and reach the VM as refs of
// type "hal.buffer_view" (ref_types.h).
#ifndef WEFT_MODULES_HAL_BUFFER_VIEW_H_
#define WEFT_MODULES_HAL_BUFFER_VIEW_H_

#include <stdint.h>

#include "modules/hal/element_type.h"
#include "weft/allocator.h"
#include "weft/buffer.h"
#include "weft/status.h"

#define WEFT_HAL_BUFFER_VIEW_MAX_RANK 8

typedef struct weft_hal_buffer_view_t weft_hal_buffer_view_t;

// Creates a view of |buffer| (retained) at |byte_offset| with |rank|
// dimensions |shape| of |element_type|. |caller| names the function in
// messages ("hal.buffer_view.create"). INVALID_ARGUMENT naming |caller|
// and the argument for: an offset or a dimension below 0, an unknown
// element type, a rank past WEFT_HAL_BUFFER_VIEW_MAX_RANK, a byte length
// that overflows, or a view that does not fit the buffer (both lengths in
// the message). |shape| may be NULL when |rank| is 0 (a scalar: one
// element). One reference.
weft_status_t weft_hal_buffer_view_create(
    const char* caller, weft_buffer_t* buffer, int64_t byte_offset,
    int32_t element_type, uint32_t rank, const int64_t* shape,
    weft_allocator_t allocator, weft_hal_buffer_view_t** out_view);

// Adds a reference (NULL is a no-op); any thread.
void weft_hal_buffer_view_retain(weft_hal_buffer_view_t* view);
// Drops a reference; the last releases the buffer and frees the view
// (NULL is a no-op); any thread.
void weft_hal_buffer_view_release(weft_hal_buffer_view_t* view);

// The accessors below return 0 (NULL, NONE) for a NULL view.
// The viewed buffer (borrowed: valid while the view is).
weft_buffer_t* weft_hal_buffer_view_buffer(const weft_hal_buffer_view_t* view);
// Where the view starts in its buffer, in bytes.
uint64_t weft_hal_buffer_view_byte_offset(const weft_hal_buffer_view_t* view);
// The product of the dimensions times the element size.
uint64_t weft_hal_buffer_view_byte_length(const weft_hal_buffer_view_t* view);
// The element type it was created with.
weft_hal_element_type_t weft_hal_buffer_view_element_type(
    const weft_hal_buffer_view_t* view);
// The number of dimensions (0 for a scalar).
uint32_t weft_hal_buffer_view_rank(const weft_hal_buffer_view_t* view);
// Dimension |index| (< rank; -1 otherwise).
int64_t weft_hal_buffer_view_dim(const weft_hal_buffer_view_t* view,
                                 uint32_t index);

#endif  // WEFT_MODULES_HAL_BUFFER_VIEW_H_
