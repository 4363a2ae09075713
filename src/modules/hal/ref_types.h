// weft hal module: the ref types of HAL objects and buffer views.
//
// Every HAL object starts with a weft_resource_t (hal/resource.h) whose
// type id says what it is; each id has one ref type here, named as
// signatures write it ("hal.buffer" for r<hal.buffer>), retained and
// released through the type's public functions (weft_device_release, not
// the bare resource count: a device does more when its last reference
// goes). Buffer views (buffer_view.h) have
// one more. C code hands HAL objects to the VM with weft_hal_module_wrap.
#ifndef WEFT_MODULES_HAL_REF_TYPES_H_
#define WEFT_MODULES_HAL_REF_TYPES_H_

#include "hal/resource.h"
#include "modules/hal/buffer_view.h"
#include "vm/value.h"
#include "weft/status.h"

extern const weft_vm_ref_type_t kWeftHalDeviceType;         // hal.device
extern const weft_vm_ref_type_t kWeftHalBufferType;         // hal.buffer
extern const weft_vm_ref_type_t kWeftHalBufferViewType;     // hal.buffer_view
extern const weft_vm_ref_type_t kWeftHalSemaphoreType;      // hal.semaphore
extern const weft_vm_ref_type_t kWeftHalFenceType;          // hal.fence
extern const weft_vm_ref_type_t kWeftHalExecutableType;     // hal.executable
extern const weft_vm_ref_type_t kWeftHalCommandBufferType;  // hal.command_buffer
extern const weft_vm_ref_type_t kWeftHalFileType;           // hal.file

// The ref type of HAL objects of resource type |type|, NULL for NONE and
// out-of-range ids.
const weft_vm_ref_type_t* weft_hal_ref_type(weft_resource_type_t type);

// A ref to HAL object |object| (anything starting with a weft_resource_t),
// typed by its resource type id. Borrowed: no reference is taken, so the
// ref is valid while the caller holds |object| (weft_vm_ref_retain keeps
// it). A NULL |object| gives the null ref; an object of no known type is
// INVALID_ARGUMENT naming its type id (and *out_ref is null).
weft_status_t weft_hal_module_wrap(void* object, weft_vm_ref_t* out_ref);

// A ref to buffer view |view| (borrowed, as above; NULL gives null).
weft_vm_ref_t weft_hal_module_wrap_buffer_view(weft_hal_buffer_view_t* view);

// The object of |ref| when it is a ref of |type|, NULL otherwise (a null
// ref or another type). Borrowed.
void* weft_hal_module_unwrap(weft_vm_ref_t ref, const weft_vm_ref_type_t* type);

#endif  // WEFT_MODULES_HAL_REF_TYPES_H_
