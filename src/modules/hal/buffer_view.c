// weft hal module: buffer views (see weft/vm/hal.h and buffer_view.h).
#include "modules/hal/buffer_view.h"

#include <inttypes.h>
#include <stdio.h>

#include "base/arguments.h"
#include "base/atomics.h"

struct weft_hal_buffer_view_t {
  weft_ref_count_t ref_count;
  weft_allocator_t allocator;
  weft_buffer_t* buffer;  // retained
  uint64_t byte_offset;
  uint64_t byte_length;
  weft_hal_element_type_t element_type;
  uint32_t rank;
  int64_t shape[WEFT_HAL_BUFFER_VIEW_MAX_RANK];
};

// Writes "[2, 3]" (the first |rank| of |shape|) into |text|.
static void weft_hal_format_shape(uint32_t rank, const int64_t* shape,
                                  char* text, size_t capacity) {
  size_t used = (size_t)snprintf(text, capacity, "[");
  for (uint32_t i = 0; i < rank && used < capacity; ++i) {
    used += (size_t)snprintf(text + used, capacity - used, "%s%" PRId64,
                             i ? ", " : "", shape[i]);
  }
  if (used < capacity) snprintf(text + used, capacity - used, "]");
}

// Checks the arguments and computes the byte length into |*out_length|.
static weft_status_t weft_hal_buffer_view_check(
    const char* caller, weft_buffer_t* buffer, int64_t byte_offset,
    int32_t element_type, uint32_t rank, const int64_t* shape,
    uint64_t* out_length) {
  *out_length = 0;
  if (byte_offset < 0) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "%s: argument 'byte_offset' is %" PRId64
                       "; must be >= 0",
                       caller, byte_offset);
  }
  if (!weft_hal_element_type_is_valid(element_type)) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "%s: argument 'element_type' is %" PRId32
                       ", not an element type (1 f16, 2 f32, 3 f64, 4 i8, 5 "
                       "i16, 6 i32, 7 i64, 8 u8, 9 u16, 10 u32, 11 u64)",
                       caller, element_type);
  }
  if (rank > WEFT_HAL_BUFFER_VIEW_MAX_RANK) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "%s: argument 'shape' has rank %" PRIu32
                       ", past the limit of %d",
                       caller, rank, WEFT_HAL_BUFFER_VIEW_MAX_RANK);
  }
  char text[8 * 24 + 4];
  weft_hal_format_shape(rank, shape, text, sizeof(text));
  const weft_hal_element_type_t type = (weft_hal_element_type_t)element_type;
  uint64_t length = weft_hal_element_type_size(type);
  for (uint32_t i = 0; i < rank; ++i) {
    if (shape[i] < 0) {
      return WEFT_STATUS(INVALID_ARGUMENT,
                         "%s: argument 'shape' %s has dimension %" PRIu32
                         " below 0",
                         caller, text, i);
    }
    if (shape[i] && length > UINT64_MAX / (uint64_t)shape[i]) {
      return WEFT_STATUS(INVALID_ARGUMENT,
                         "%s: argument 'shape' %s of %s overflows 64 bits of "
                         "bytes",
                         caller, text, weft_hal_element_type_name(type));
    }
    length *= (uint64_t)shape[i];
  }
  const uint64_t buffer_length = weft_buffer_byte_length(buffer);
  if ((uint64_t)byte_offset > buffer_length ||
      length > buffer_length - (uint64_t)byte_offset) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "%s: argument 'shape' %s of %s (%" PRIu64
                       " bytes) at byte offset %" PRId64
                       " does not fit the buffer of %" PRIu64 " bytes",
                       caller, text, weft_hal_element_type_name(type), length,
                       byte_offset, buffer_length);
  }
  *out_length = length;
  return WEFT_OK;
}

weft_status_t weft_hal_buffer_view_create_as(
    const char* caller, weft_buffer_t* buffer, int64_t byte_offset,
    int32_t element_type, uint32_t rank, const int64_t* shape,
    weft_allocator_t allocator, weft_hal_buffer_view_t** out_view) {
  *out_view = NULL;
  uint64_t byte_length = 0;
  weft_hal_buffer_view_t* view = NULL;
  weft_status_t status =
      weft_hal_buffer_view_check(caller, buffer, byte_offset, element_type,
                                 rank, shape, &byte_length);
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc(allocator, sizeof(*view), (void**)&view);
  }
  if (weft_status_is_ok(status)) {
    weft_ref_count_init(&view->ref_count);
    view->allocator = allocator;
    weft_buffer_retain(buffer);
    view->buffer = buffer;
    view->byte_offset = (uint64_t)byte_offset;
    view->byte_length = byte_length;
    view->element_type = (weft_hal_element_type_t)element_type;
    view->rank = rank;
    for (uint32_t i = 0; i < WEFT_HAL_BUFFER_VIEW_MAX_RANK; ++i) {
      view->shape[i] = i < rank ? shape[i] : 0;
    }
    *out_view = view;
  }
  return status;
}

weft_status_t weft_hal_buffer_view_create(
    weft_buffer_t* buffer, int64_t byte_offset,
    weft_hal_element_type_t element_type, uint32_t rank, const int64_t* shape,
    weft_allocator_t allocator, weft_hal_buffer_view_t** out_view) {
  if (out_view) *out_view = NULL;
  // |shape| only matters when it has dimensions.
  weft_status_t status = weft_arguments_require(
      __func__, "buffer,shape,out_view",
      (const void* const[]){buffer, rank ? (const void*)shape : &rank,
                            out_view},
      3);
  if (weft_status_is_ok(status)) {
    status = weft_hal_buffer_view_create_as(__func__, buffer, byte_offset,
                                            (int32_t)element_type, rank,
                                            shape, allocator, out_view);
  }
  return status;
}

void weft_hal_buffer_view_retain(weft_hal_buffer_view_t* view) {
  if (view) weft_ref_count_inc(&view->ref_count);
}

void weft_hal_buffer_view_release(weft_hal_buffer_view_t* view) {
  if (view && weft_ref_count_dec(&view->ref_count)) {
    weft_buffer_release(view->buffer);
    weft_allocator_free(view->allocator, view);
  }
}

weft_buffer_t* weft_hal_buffer_view_buffer(const weft_hal_buffer_view_t* view) {
  return view ? view->buffer : NULL;
}

uint64_t weft_hal_buffer_view_byte_offset(const weft_hal_buffer_view_t* view) {
  return view ? view->byte_offset : 0;
}

uint64_t weft_hal_buffer_view_byte_length(const weft_hal_buffer_view_t* view) {
  return view ? view->byte_length : 0;
}

weft_hal_element_type_t weft_hal_buffer_view_element_type(
    const weft_hal_buffer_view_t* view) {
  return view ? view->element_type : WEFT_HAL_ELEMENT_TYPE_NONE;
}

uint32_t weft_hal_buffer_view_rank(const weft_hal_buffer_view_t* view) {
  return view ? view->rank : 0;
}

int64_t weft_hal_buffer_view_dim(const weft_hal_buffer_view_t* view,
                                 uint32_t index) {
  return view && index < view->rank ? view->shape[index] : -1;
}
