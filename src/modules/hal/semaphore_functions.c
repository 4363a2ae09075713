// weft hal module: hal.semaphore.* (docs/VM.md, "The hal module").
#include "modules/hal/arguments.h"
#include "modules/hal/await.h"
#include "modules/hal/module_impl.h"

// semaphore.create(device, initial_value) -> (semaphore)
static weft_status_t weft_hal_semaphore_create(weft_vm_native_call_t* call) {
  static const char kFunction[] = "hal.semaphore.create";
  uint64_t initial_value = 0;
  weft_semaphore_t* semaphore = NULL;
  weft_status_t status = weft_hal_arg_size(kFunction, "initial_value",
                                           call->args[1].i64, &initial_value);
  if (weft_status_is_ok(status)) {
    status = weft_device_create_semaphore(
        (weft_device_t*)call->args[0].ref.object, initial_value, &semaphore);
  }
  weft_hal_set_result(call, 0, semaphore);
  return status;
}

// semaphore.query(semaphore) -> (status_code, value)
static weft_status_t weft_hal_semaphore_query(weft_vm_native_call_t* call) {
  uint64_t value = 0;
  weft_status_t status = weft_semaphore_query(
      (weft_semaphore_t*)call->args[0].ref.object, &value);
  call->results[0].i32 = (int32_t)weft_status_code(status);
  call->results[1].i64 = (int64_t)value;
  weft_status_free(status);
  return WEFT_OK;
}

// semaphore.signal(semaphore, value) -> ()
static weft_status_t weft_hal_semaphore_signal(weft_vm_native_call_t* call) {
  static const char kFunction[] = "hal.semaphore.signal";
  uint64_t value = 0;
  weft_status_t status =
      weft_hal_arg_size(kFunction, "value", call->args[1].i64, &value);
  if (weft_status_is_ok(status)) {
    status = weft_semaphore_signal((weft_semaphore_t*)call->args[0].ref.object,
                                   value);
  }
  return status;
}

// semaphore.fail(semaphore, code) -> ()
static weft_status_t weft_hal_semaphore_fail(weft_vm_native_call_t* call) {
  static const char kFunction[] = "hal.semaphore.fail";
  const int32_t code = call->args[1].i32;
  weft_status_t status = weft_hal_arg_failure_code(kFunction, code);
  if (weft_status_is_ok(status)) {
    weft_semaphore_fail(
        (weft_semaphore_t*)call->args[0].ref.object,
        weft_hal_program_failure(kFunction, code));
  }
  return status;
}

// semaphore.await(semaphore, value, timeout_ns) -> (code)
static weft_status_t weft_hal_semaphore_await(weft_vm_native_call_t* call) {
  static const char kFunction[] = "hal.semaphore.await";
  if (call->pc == WEFT_HAL_AWAIT_RESUME_PC) {
    return weft_hal_await_resume(call, 0);
  }
  weft_semaphore_t* semaphore = (weft_semaphore_t*)call->args[0].ref.object;
  uint64_t value = 0;
  weft_status_t status =
      weft_hal_arg_size(kFunction, "value", call->args[1].i64, &value);
  if (weft_status_is_ok(status)) {
    weft_hal_await_begin(call, call->args[2].i64);
    weft_semaphore_list_t list = {1, &semaphore, &value};
    status = weft_hal_await_add(call, list);
  }
  return weft_hal_await_yield(call, status, 0);
}

// semaphore.set_name(semaphore, name) -> (): the name messages use for it
// ("semaphore 'step'") instead of its address.
static weft_status_t weft_hal_semaphore_set_name(weft_vm_native_call_t* call) {
  static const char kFunction[] = "hal.semaphore.set_name";
  weft_hal_string_t name;
  weft_status_t status = weft_hal_arg_string(kFunction, "name",
                                             call->args[1].ref,
                                             call->allocator, &name);
  if (weft_status_is_ok(status)) {
    weft_semaphore_set_name((weft_semaphore_t*)call->args[0].ref.object,
                            name.text);
  }
  weft_hal_string_deinitialize(&name);
  return status;
}

static const weft_vm_native_function_t kFunctions[] = {
    {"semaphore.create", "(r<hal.device>, i64) -> (r<hal.semaphore>)",
     weft_hal_semaphore_create},
    {"semaphore.query", "(r<hal.semaphore>) -> (i32, i64)",
     weft_hal_semaphore_query},
    {"semaphore.signal", "(r<hal.semaphore>, i64) -> ()",
     weft_hal_semaphore_signal},
    {"semaphore.fail", "(r<hal.semaphore>, i32) -> ()",
     weft_hal_semaphore_fail},
    {"semaphore.await", "(r<hal.semaphore>, i64, i64) -> (i32)",
     weft_hal_semaphore_await},
    {"semaphore.set_name", "(r<hal.semaphore>, r<bytes>) -> ()",
     weft_hal_semaphore_set_name},
};

const weft_hal_function_table_t kWeftHalSemaphoreFunctions = {
    sizeof(kFunctions) / sizeof(kFunctions[0]), kFunctions};
