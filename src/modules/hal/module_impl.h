// weft hal module: what its files share (private to src/modules/hal).
//
// The module's definition lives in a config made at creation (the
// definition's user_data), the per-context state in a state made when a
// context links it. Each group of functions (device, semaphore, fence,
// buffer, queue, executable, command buffer, file) is one file exporting
// a table; module.c joins the tables into the definition.
#ifndef WEFT_MODULES_HAL_MODULE_IMPL_H_
#define WEFT_MODULES_HAL_MODULE_IMPL_H_

#include <stdint.h>

#include "modules/hal/ref_types.h"
#include "vm/module_impl.h"
#include "weft/vm/hal.h"

// The definition's user_data: one allocation holding the definition, the
// joined function table and the copied static libraries with their names.
typedef struct weft_hal_module_config_t {
  weft_vm_native_module_def_t def;
  weft_allocator_t allocator;
  weft_device_t* device;  // retained, or NULL
  uint32_t library_count;
  weft_hal_static_library_t* libraries;
  weft_vm_native_function_t* functions;
} weft_hal_module_config_t;

// One context's state.
typedef struct weft_hal_module_state_t {
  // The context's allocator: what objects the module creates live in.
  weft_allocator_t allocator;
  const weft_hal_module_config_t* config;  // the module outlives the state
  weft_device_t* device;                   // retained, or NULL
} weft_hal_module_state_t;

// A group's functions.
typedef struct weft_hal_function_table_t {
  uint32_t count;
  const weft_vm_native_function_t* functions;
} weft_hal_function_table_t;

extern const weft_hal_function_table_t kWeftHalDeviceFunctions;
extern const weft_hal_function_table_t kWeftHalSemaphoreFunctions;
extern const weft_hal_function_table_t kWeftHalFenceFunctions;
extern const weft_hal_function_table_t kWeftHalBufferFunctions;
extern const weft_hal_function_table_t kWeftHalQueueFunctions;
extern const weft_hal_function_table_t kWeftHalExecutableFunctions;
extern const weft_hal_function_table_t kWeftHalCommandBufferFunctions;
extern const weft_hal_function_table_t kWeftHalFileFunctions;

// The state of |call|'s context.
static inline weft_hal_module_state_t* weft_hal_state(
    const weft_vm_native_call_t* call) {
  return (weft_hal_module_state_t*)call->module_state;
}

// Stores |object| (a HAL object whose reference the call hands over) as
// result |index|, typed by its resource type; NULL stores the null ref.
static inline void weft_hal_set_result(weft_vm_native_call_t* call,
                                       uint32_t index, void* object) {
  call->results[index].ref.object = object;
  call->results[index].ref.type =
      object ? weft_hal_ref_type(weft_resource_type(object)) : NULL;
}

// Checks |value| against |type| (static and dynamic dimensions; no
// symbols) as weft_hal_check_arguments checks a declared value, with
// |what| naming it in the message ("hal.buffer_view.assert: 'w1' must be
// 8x16 f32, got 16x8 f32 (transposed?)").
weft_status_t weft_hal_check_view(const char* what,
                                  const weft_vm_tensor_type_t* type,
                                  const weft_vm_value_t* value);

#endif  // WEFT_MODULES_HAL_MODULE_IMPL_H_
