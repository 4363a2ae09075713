// weft hal module: hal.device.* (docs/VM.md, "The hal module").
#include "modules/hal/arguments.h"
#include "modules/hal/module_impl.h"

// device.default() -> (device)
static weft_status_t weft_hal_device_default(weft_vm_native_call_t* call) {
  weft_device_t* device = weft_hal_state(call)->device;
  if (!device) {
    return WEFT_STATUS(FAILED_PRECONDITION,
                       "hal.device.default: the hal module was created "
                       "without a default device (weft_hal_module_options_t "
                       "device or device_string); use hal.device.open");
  }
  weft_device_retain(device);
  weft_hal_set_result(call, 0, device);
  return WEFT_OK;
}

// device.open(device_string) -> (device)
static weft_status_t weft_hal_device_open(weft_vm_native_call_t* call) {
  static const char kFunction[] = "hal.device.open";
  weft_hal_module_state_t* state = weft_hal_state(call);
  weft_hal_string_t text;
  weft_device_t* device = NULL;
  weft_status_t status = weft_hal_arg_string(
      kFunction, "device_string", call->args[0].ref, call->allocator, &text);
  if (weft_status_is_ok(status)) {
    status = weft_device_create(text.text, state->allocator, &device);
  }
  weft_hal_string_deinitialize(&text);
  weft_hal_set_result(call, 0, device);
  return status;
}

// device.query(device, key) -> (status_code, value): 0 and the value, or
// the NOT_FOUND code and 0 for a key the device does not know.
static weft_status_t weft_hal_device_query(weft_vm_native_call_t* call) {
  static const char kFunction[] = "hal.device.query";
  weft_hal_string_t key;
  int64_t value = 0;
  weft_status_t status = weft_hal_arg_string(kFunction, "key",
                                             call->args[1].ref,
                                             call->allocator, &key);
  if (weft_status_is_ok(status)) {
    status = weft_device_query_i64((weft_device_t*)call->args[0].ref.object,
                                   key.text, &value);
    call->results[0].i32 = (int32_t)weft_status_code(status);
    call->results[1].i64 = value;
    if (weft_status_is(status, WEFT_STATUS_NOT_FOUND)) {
      weft_status_free(status);
      status = WEFT_OK;
    }
  }
  weft_hal_string_deinitialize(&key);
  return status;
}

static const weft_vm_native_function_t kFunctions[] = {
    {"device.default", "() -> (r<hal.device>)", weft_hal_device_default},
    {"device.open", "(r<bytes>) -> (r<hal.device>)", weft_hal_device_open},
    {"device.query", "(r<hal.device>, r<bytes>) -> (i32, i64)",
     weft_hal_device_query},
};

const weft_hal_function_table_t kWeftHalDeviceFunctions = {
    sizeof(kFunctions) / sizeof(kFunctions[0]), kFunctions};
