// weft hal module: ref types (see ref_types.h).
#include "modules/hal/ref_types.h"

#include "base/arguments.h"
#include "weft/device.h"

// Each type through its own public retain and release, never the bare
// resource count: a device's release does more (it leaves the hang
// reports' live list before it is destroyed).
static void weft_hal_device_ref_retain(void* object) {
  weft_device_retain((weft_device_t*)object);
}

static void weft_hal_device_ref_release(void* object) {
  weft_device_release((weft_device_t*)object);
}

static void weft_hal_buffer_ref_retain(void* object) {
  weft_buffer_retain((weft_buffer_t*)object);
}

static void weft_hal_buffer_ref_release(void* object) {
  weft_buffer_release((weft_buffer_t*)object);
}

static void weft_hal_semaphore_ref_retain(void* object) {
  weft_semaphore_retain((weft_semaphore_t*)object);
}

static void weft_hal_semaphore_ref_release(void* object) {
  weft_semaphore_release((weft_semaphore_t*)object);
}

static void weft_hal_fence_ref_retain(void* object) {
  weft_fence_retain((weft_fence_t*)object);
}

static void weft_hal_fence_ref_release(void* object) {
  weft_fence_release((weft_fence_t*)object);
}

static void weft_hal_executable_ref_retain(void* object) {
  weft_executable_retain((weft_executable_t*)object);
}

static void weft_hal_executable_ref_release(void* object) {
  weft_executable_release((weft_executable_t*)object);
}

static void weft_hal_command_buffer_ref_retain(void* object) {
  weft_command_buffer_retain((weft_command_buffer_t*)object);
}

static void weft_hal_command_buffer_ref_release(void* object) {
  weft_command_buffer_release((weft_command_buffer_t*)object);
}

static void weft_hal_file_ref_retain(void* object) {
  weft_file_retain((weft_file_t*)object);
}

static void weft_hal_file_ref_release(void* object) {
  weft_file_release((weft_file_t*)object);
}

static void weft_hal_buffer_view_ref_retain(void* object) {
  weft_hal_buffer_view_retain((weft_hal_buffer_view_t*)object);
}

static void weft_hal_buffer_view_ref_release(void* object) {
  weft_hal_buffer_view_release((weft_hal_buffer_view_t*)object);
}

const weft_vm_ref_type_t kWeftHalDeviceType = {
    "hal.device", weft_hal_device_ref_retain, weft_hal_device_ref_release};
const weft_vm_ref_type_t kWeftHalBufferType = {
    "hal.buffer", weft_hal_buffer_ref_retain, weft_hal_buffer_ref_release};
const weft_vm_ref_type_t kWeftHalSemaphoreType = {
    "hal.semaphore", weft_hal_semaphore_ref_retain, weft_hal_semaphore_ref_release};
const weft_vm_ref_type_t kWeftHalFenceType = {
    "hal.fence", weft_hal_fence_ref_retain, weft_hal_fence_ref_release};
const weft_vm_ref_type_t kWeftHalExecutableType = {
    "hal.executable", weft_hal_executable_ref_retain, weft_hal_executable_ref_release};
const weft_vm_ref_type_t kWeftHalCommandBufferType = {
    "hal.command_buffer", weft_hal_command_buffer_ref_retain, weft_hal_command_buffer_ref_release};
const weft_vm_ref_type_t kWeftHalFileType = {
    "hal.file", weft_hal_file_ref_retain, weft_hal_file_ref_release};
const weft_vm_ref_type_t kWeftHalBufferViewType = {
    "hal.buffer_view", weft_hal_buffer_view_ref_retain,
    weft_hal_buffer_view_ref_release};

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
        // The hal module has no channel ops: wrapping one is refused.
        [WEFT_RESOURCE_TYPE_CHANNEL] = NULL,
};

const weft_vm_ref_type_t* weft_hal_ref_type(weft_resource_type_t type) {
  return (unsigned)type < WEFT_RESOURCE_TYPE_COUNT_
             ? kWeftHalResourceRefTypes[type]
             : NULL;
}

weft_status_t weft_hal_module_wrap(void* object, weft_vm_ref_t* out_ref) {
  if (out_ref) *out_ref = weft_vm_ref_null();
  weft_status_t status = weft_arguments_require(
      __func__, "out_ref", (const void* const[]){out_ref}, 1);
  if (weft_status_is_ok(status) && object) {
    const weft_resource_type_t type = weft_resource_type(object);
    const weft_vm_ref_type_t* ref_type = weft_hal_ref_type(type);
    if (ref_type) {
      out_ref->object = object;
      out_ref->type = ref_type;
    } else {
      status = WEFT_STATUS(INVALID_ARGUMENT,
                           "weft_hal_module_wrap: object %p has resource type "
                           "%d, which the hal module has no ref type for",
                           object, (int)type);
    }
  }
  return status;
}

weft_vm_ref_t weft_hal_module_wrap_buffer_view(weft_hal_buffer_view_t* view) {
  return weft_vm_ref_wrap(view, &kWeftHalBufferViewType);
}

void* weft_hal_module_unwrap(weft_vm_ref_t ref,
                             const weft_vm_ref_type_t* type) {
  return weft_vm_ref_unwrap(ref, type);
}
