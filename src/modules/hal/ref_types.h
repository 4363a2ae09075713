// weft hal module: ref types of HAL objects by resource type (private).
//
// Every HAL object starts with a weft_resource_t (hal/resource.h) whose
// type id says what it is; each id has one ref type (weft/vm/hal.h
// declares them), named as signatures write it ("hal.buffer" for
// r<hal.buffer>), retained and released through the type's public
// functions (weft_device_release, not the bare resource count: a device
// does more when its last reference goes). Buffer views have one more.
#ifndef WEFT_MODULES_HAL_REF_TYPES_H_
#define WEFT_MODULES_HAL_REF_TYPES_H_

#include "hal/resource.h"
#include "weft/vm/hal.h"
#include "weft/vm/value.h"

// The ref type of HAL objects of resource type |type|, NULL for NONE and
// out-of-range ids.
const weft_vm_ref_type_t* weft_hal_ref_type(weft_resource_type_t type);

#endif  // WEFT_MODULES_HAL_REF_TYPES_H_
