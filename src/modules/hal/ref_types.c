// weft hal module: ref types (see ref_types.h).
#include "modules/hal/ref_types.h"

static void weft_hal_resource_retain(void* object) {
  weft_resource_retain(object);
}

static void weft_hal_resource_release(void* object) {
  weft_resource_release(object);
}

static void weft_hal_view_retain(void* object) {
  weft_hal_buffer_view_retain((weft_hal_buffer_view_t*)object);
}

static void weft_hal_view_release(void* object) {
  weft_hal_buffer_view_release((weft_hal_buffer_view_t*)object);
}

#define WEFT_HAL_RESOURCE_REF_TYPE(name_) \
  {(name_), weft_hal_resource_retain, weft_hal_resource_release}

const weft_vm_ref_type_t kWeftHalDeviceType =
    WEFT_HAL_RESOURCE_REF_TYPE("hal.device");
const weft_vm_ref_type_t kWeftHalBufferType =
    WEFT_HAL_RESOURCE_REF_TYPE("hal.buffer");
const weft_vm_ref_type_t kWeftHalSemaphoreType =
    WEFT_HAL_RESOURCE_REF_TYPE("hal.semaphore");
const weft_vm_ref_type_t kWeftHalFenceType =
    WEFT_HAL_RESOURCE_REF_TYPE("hal.fence");
const weft_vm_ref_type_t kWeftHalExecutableType =
    WEFT_HAL_RESOURCE_REF_TYPE("hal.executable");
const weft_vm_ref_type_t kWeftHalCommandBufferType =
    WEFT_HAL_RESOURCE_REF_TYPE("hal.command_buffer");
const weft_vm_ref_type_t kWeftHalFileType =
    WEFT_HAL_RESOURCE_REF_TYPE("hal.file");
const weft_vm_ref_type_t kWeftHalBufferViewType = {
    "hal.buffer_view", weft_hal_view_retain, weft_hal_view_release};

// Indexed by weft_resource_type_t.
static const weft_vm_ref_type_t* const
    kWeftHalResourceRefTypes[WEFT_RESOURCE_TYPE_COUNT_] = {
        [WEFT_RESOURCE_TYPE_NONE] = NULL,
        [WEFT_RESOURCE_TYPE_DEVICE] = &kWeftHalDeviceType,
        [WEFT_RESOURCE_TYPE_BUFFER] = &kWeftHalBufferType,
        [WEFT_RESOURCE_TYPE_SEMAPHORE] = &kWeftHalSemaphoreType,
        [WEFT_RESOURCE_TYPE_FENCE] = &kWeftHalFenceType,
        [WEFT_RESOURCE_TYPE_EXECUTABLE] = &kWeftHalExecutableType,
        [WEFT_RESOURCE_TYPE_COMMAND_BUFFER] = &kWeftHalCommandBufferType,
        [WEFT_RESOURCE_TYPE_FILE] = &kWeftHalFileType,
};

const weft_vm_ref_type_t* weft_hal_ref_type(weft_resource_type_t type) {
  return (unsigned)type < WEFT_RESOURCE_TYPE_COUNT_
             ? kWeftHalResourceRefTypes[type]
             : NULL;
}

weft_status_t weft_hal_module_wrap(void* object, weft_vm_ref_t* out_ref) {
  *out_ref = weft_vm_ref_null();
  if (!object) return WEFT_OK;
  const weft_resource_type_t type = weft_resource_type(object);
  const weft_vm_ref_type_t* ref_type = weft_hal_ref_type(type);
  if (!ref_type) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "weft_hal_module_wrap: object %p has resource type %d, "
                       "which the hal module has no ref type for",
                       object, (int)type);
  }
  out_ref->object = object;
  out_ref->type = ref_type;
  return WEFT_OK;
}

weft_vm_ref_t weft_hal_module_wrap_buffer_view(weft_hal_buffer_view_t* view) {
  weft_vm_ref_t ref = {view, view ? &kWeftHalBufferViewType : NULL};
  return ref;
}

void* weft_hal_module_unwrap(weft_vm_ref_t ref,
                             const weft_vm_ref_type_t* type) {
  return ref.object && ref.type == type ? ref.object : NULL;
}
