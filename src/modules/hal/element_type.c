// weft hal module: element types (see weft/vm/hal.h).
#include "weft/vm/hal.h"

#include <assert.h>

#include "weft/vm/tensor_type.h"

// The VM core declares tensor types without knowing the hal module
// (weft/vm/tensor_type.h); its element type numbers and rank limit are
// this module's, so a declaration and a buffer view compare directly.
static_assert(WEFT_VM_ELEMENT_TYPE_NONE == (int)WEFT_HAL_ELEMENT_TYPE_NONE &&
                  WEFT_VM_ELEMENT_TYPE_F16 == (int)WEFT_HAL_ELEMENT_TYPE_F16 &&
                  WEFT_VM_ELEMENT_TYPE_F32 == (int)WEFT_HAL_ELEMENT_TYPE_F32 &&
                  WEFT_VM_ELEMENT_TYPE_F64 == (int)WEFT_HAL_ELEMENT_TYPE_F64 &&
                  WEFT_VM_ELEMENT_TYPE_I8 == (int)WEFT_HAL_ELEMENT_TYPE_I8 &&
                  WEFT_VM_ELEMENT_TYPE_I16 == (int)WEFT_HAL_ELEMENT_TYPE_I16 &&
                  WEFT_VM_ELEMENT_TYPE_I32 == (int)WEFT_HAL_ELEMENT_TYPE_I32 &&
                  WEFT_VM_ELEMENT_TYPE_I64 == (int)WEFT_HAL_ELEMENT_TYPE_I64 &&
                  WEFT_VM_ELEMENT_TYPE_U8 == (int)WEFT_HAL_ELEMENT_TYPE_U8 &&
                  WEFT_VM_ELEMENT_TYPE_U16 == (int)WEFT_HAL_ELEMENT_TYPE_U16 &&
                  WEFT_VM_ELEMENT_TYPE_U32 == (int)WEFT_HAL_ELEMENT_TYPE_U32 &&
                  WEFT_VM_ELEMENT_TYPE_U64 == (int)WEFT_HAL_ELEMENT_TYPE_U64 &&
                  WEFT_VM_ELEMENT_TYPE_COUNT_ ==
                      (int)WEFT_HAL_ELEMENT_TYPE_COUNT_,
              "weft_vm_element_type_t and weft_hal_element_type_t differ");
static_assert(WEFT_VM_TENSOR_MAX_RANK == WEFT_HAL_BUFFER_VIEW_MAX_RANK,
              "a declared rank and a buffer view's rank have one limit");

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
