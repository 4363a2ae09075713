// weft hal module: element types of buffer views.
//
// The numbers are the VM's: a program passes them as i32 to
// hal.buffer_view.create and reads them back from
// hal.buffer_view.element_type, so they never change once published
// (docs/VM.md, "The hal module", lists them).
#ifndef WEFT_MODULES_HAL_ELEMENT_TYPE_H_
#define WEFT_MODULES_HAL_ELEMENT_TYPE_H_

#include <stdbool.h>
#include <stdint.h>

typedef enum weft_hal_element_type_e {
  WEFT_HAL_ELEMENT_TYPE_NONE = 0,
  WEFT_HAL_ELEMENT_TYPE_F16 = 1,
  WEFT_HAL_ELEMENT_TYPE_F32 = 2,
  WEFT_HAL_ELEMENT_TYPE_F64 = 3,
  WEFT_HAL_ELEMENT_TYPE_I8 = 4,
  WEFT_HAL_ELEMENT_TYPE_I16 = 5,
  WEFT_HAL_ELEMENT_TYPE_I32 = 6,
  WEFT_HAL_ELEMENT_TYPE_I64 = 7,
  WEFT_HAL_ELEMENT_TYPE_U8 = 8,
  WEFT_HAL_ELEMENT_TYPE_U16 = 9,
  WEFT_HAL_ELEMENT_TYPE_U32 = 10,
  WEFT_HAL_ELEMENT_TYPE_U64 = 11,
  WEFT_HAL_ELEMENT_TYPE_COUNT_,
} weft_hal_element_type_t;

// True for every type above but NONE (and nothing out of range).
bool weft_hal_element_type_is_valid(int32_t type);

// The size of one element in bytes (0 for an invalid type).
uint32_t weft_hal_element_type_size(weft_hal_element_type_t type);

// "f32", "i8", ... ("none" for NONE or an invalid type).
const char* weft_hal_element_type_name(weft_hal_element_type_t type);

#endif  // WEFT_MODULES_HAL_ELEMENT_TYPE_H_
