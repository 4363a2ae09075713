// weft hal module: element types (see weft/vm/hal.h).
#include "weft/vm/hal.h"

typedef struct weft_hal_element_type_info_t {
  const char* name;
  uint32_t size;
} weft_hal_element_type_info_t;

// Indexed by weft_hal_element_type_t.
static const weft_hal_element_type_info_t
    kWeftHalElementTypes[WEFT_HAL_ELEMENT_TYPE_COUNT_] = {
        [WEFT_HAL_ELEMENT_TYPE_NONE] = {"none", 0},
        [WEFT_HAL_ELEMENT_TYPE_F16] = {"f16", 2},
        [WEFT_HAL_ELEMENT_TYPE_F32] = {"f32", 4},
        [WEFT_HAL_ELEMENT_TYPE_F64] = {"f64", 8},
        [WEFT_HAL_ELEMENT_TYPE_I8] = {"i8", 1},
        [WEFT_HAL_ELEMENT_TYPE_I16] = {"i16", 2},
        [WEFT_HAL_ELEMENT_TYPE_I32] = {"i32", 4},
        [WEFT_HAL_ELEMENT_TYPE_I64] = {"i64", 8},
        [WEFT_HAL_ELEMENT_TYPE_U8] = {"u8", 1},
        [WEFT_HAL_ELEMENT_TYPE_U16] = {"u16", 2},
        [WEFT_HAL_ELEMENT_TYPE_U32] = {"u32", 4},
        [WEFT_HAL_ELEMENT_TYPE_U64] = {"u64", 8},
};

bool weft_hal_element_type_is_valid(int32_t type) {
  return type > WEFT_HAL_ELEMENT_TYPE_NONE &&
         type < WEFT_HAL_ELEMENT_TYPE_COUNT_;
}

uint32_t weft_hal_element_type_size(weft_hal_element_type_t type) {
  return weft_hal_element_type_is_valid((int32_t)type)
             ? kWeftHalElementTypes[type].size
             : 0;
}

const char* weft_hal_element_type_name(weft_hal_element_type_t type) {
  return weft_hal_element_type_is_valid((int32_t)type)
             ? kWeftHalElementTypes[type].name
             : "none";
}
