// weft hal module: hal.fence.* (docs/VM.md, "The hal module").
#include <inttypes.h>

#include "modules/hal/arguments.h"
#include "modules/hal/await.h"
#include "modules/hal/module_impl.h"
#include "weft/fence.h"

// A new semaphore of |device| at 0, named |name| when not NULL, and the
// fence at 1, ready to be a signal fence.
static weft_status_t weft_hal_fence_create_on(weft_vm_native_call_t* call,
                                              const char* name) {
  weft_semaphore_t* semaphore = NULL;
  weft_fence_t* fence = NULL;
  weft_status_t status = weft_device_create_semaphore(
      (weft_device_t*)call->args[0].ref.object, 0, &semaphore);
  if (weft_status_is_ok(status)) {
    if (name) weft_semaphore_set_name(semaphore, name);
    status = weft_fence_create_at(semaphore, 1, weft_hal_state(call)->allocator,
                                  &fence);
  }
  weft_semaphore_release(semaphore);
  weft_hal_set_result(call, 0, fence);
  return status;
}

// fence.create(device) -> (fence)
static weft_status_t weft_hal_fence_create(weft_vm_native_call_t* call) {
  return weft_hal_fence_create_on(call, NULL);
}

// fence.create_named(device, name) -> (fence): its semaphore named, so
// failure chains and dumps say "semaphore 'layer1'", not an address.
static weft_status_t weft_hal_fence_create_named(
    weft_vm_native_call_t* call) {
  static const char kFunction[] = "hal.fence.create_named";
  weft_hal_string_t name;
  weft_status_t status = weft_hal_arg_string(kFunction, "name",
                                             call->args[1].ref,
                                             call->allocator, &name);
  if (weft_status_is_ok(status)) {
    status = weft_hal_fence_create_on(call, name.text);
  } else {
    weft_hal_set_result(call, 0, NULL);
  }
  weft_hal_string_deinitialize(&name);
  return status;
}

// fence.at(semaphore, value) -> (fence)
static weft_status_t weft_hal_fence_at(weft_vm_native_call_t* call) {
  static const char kFunction[] = "hal.fence.at";
  uint64_t value = 0;
  weft_fence_t* fence = NULL;
  weft_status_t status =
      weft_hal_arg_size(kFunction, "value", call->args[1].i64, &value);
  if (weft_status_is_ok(status)) {
    status = weft_fence_create_at((weft_semaphore_t*)call->args[0].ref.object,
                                  value, weft_hal_state(call)->allocator,
                                  &fence);
  }
  weft_hal_set_result(call, 0, fence);
  return status;
}

// fence.join(a?, b?) -> (fence?): null when both are null or empty.
static weft_status_t weft_hal_fence_join(weft_vm_native_call_t* call) {
  weft_fence_t* fences[2] = {(weft_fence_t*)call->args[0].ref.object,
                             (weft_fence_t*)call->args[1].ref.object};
  weft_fence_t* fence = NULL;
  weft_status_t status =
      weft_fence_join(2, fences, weft_hal_state(call)->allocator, &fence);
  weft_hal_set_result(call, 0, fence);
  return status;
}

// fence.signal(fence) -> ()
static weft_status_t weft_hal_fence_signal(weft_vm_native_call_t* call) {
  return weft_fence_signal((weft_fence_t*)call->args[0].ref.object);
}

// fence.fail(fence, code) -> ()
static weft_status_t weft_hal_fence_fail(weft_vm_native_call_t* call) {
  static const char kFunction[] = "hal.fence.fail";
  const int32_t code = call->args[1].i32;
  weft_status_t status = weft_hal_arg_failure_code(kFunction, code);
  if (weft_status_is_ok(status)) {
    weft_fence_fail((weft_fence_t*)call->args[0].ref.object,
                    weft_hal_program_failure(kFunction, code));
  }
  return status;
}

// fence.query(fence?) -> (code): 0 reached, DEFERRED not yet, or the code
// of the first failure.
static weft_status_t weft_hal_fence_query(weft_vm_native_call_t* call) {
  weft_status_t status =
      weft_fence_query((weft_fence_t*)call->args[0].ref.object);
  call->results[0].i32 = (int32_t)weft_status_code(status);
  weft_status_free(status);
  return WEFT_OK;
}

// fence.await(fence?, timeout_ns) -> (code)
static weft_status_t weft_hal_fence_await(weft_vm_native_call_t* call) {
  if (call->pc == WEFT_HAL_AWAIT_RESUME_PC) {
    return weft_hal_await_resume(call, 0);
  }
  weft_hal_await_begin(call, call->args[1].i64);
  weft_status_t status =
      weft_hal_await_add(call, weft_hal_arg_fence_list(call->args[0].ref));
  return weft_hal_await_yield(call, status, 0);
}

// fence.await_list(fences, timeout_ns) -> (code): every fence of the list
// (null elements are reached fences).
static weft_status_t weft_hal_fence_await_list(weft_vm_native_call_t* call) {
  static const char kFunction[] = "hal.fence.await_list";
  if (call->pc == WEFT_HAL_AWAIT_RESUME_PC) {
    return weft_hal_await_resume(call, 0);
  }
  const weft_vm_list_t* list = (const weft_vm_list_t*)call->args[0].ref.object;
  weft_hal_await_begin(call, call->args[1].i64);
  weft_status_t status = WEFT_OK;
  for (uint32_t i = 0; weft_status_is_ok(status) && i < list->size; ++i) {
    const weft_vm_value_t* value = &list->values[i];
    if (value->type != WEFT_VM_TYPE_REF ||
        (value->ref.object && value->ref.type != &kWeftHalFenceType)) {
      char what[96];
      weft_hal_describe_value(value, what, sizeof(what));
      status = weft_hal_argument_error(
          kFunction, "fences", "element %" PRIu32 " is %s, not a hal.fence",
          i, what);
    } else {
      status = weft_hal_await_add(call, weft_hal_arg_fence_list(value->ref));
    }
  }
  return weft_hal_await_yield(call, status, 0);
}

static const weft_vm_native_function_t kFunctions[] = {
    {"fence.create", "(r<hal.device>) -> (r<hal.fence>)",
     weft_hal_fence_create},
    {"fence.create_named", "(r<hal.device>, r<bytes>) -> (r<hal.fence>)",
     weft_hal_fence_create_named},
    {"fence.at", "(r<hal.semaphore>, i64) -> (r<hal.fence>)",
     weft_hal_fence_at},
    {"fence.join", "(r<hal.fence>?, r<hal.fence>?) -> (r<hal.fence>?)",
     weft_hal_fence_join},
    {"fence.signal", "(r<hal.fence>) -> ()", weft_hal_fence_signal},
    {"fence.fail", "(r<hal.fence>, i32) -> ()", weft_hal_fence_fail},
    {"fence.query", "(r<hal.fence>?) -> (i32)", weft_hal_fence_query},
    {"fence.await", "(r<hal.fence>?, i64) -> (i32)", weft_hal_fence_await},
    {"fence.await_list", "(r<list>, i64) -> (i32)", weft_hal_fence_await_list},
};

const weft_hal_function_table_t kWeftHalFenceFunctions = {
    sizeof(kFunctions) / sizeof(kFunctions[0]), kFunctions};
