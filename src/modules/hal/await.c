// weft hal module: awaits (see await.h).
#include "modules/hal/await.h"

#include "weft/time.h"

void weft_hal_await_begin(weft_vm_native_call_t* call, int64_t timeout_ns) {
  weft_time_t deadline = WEFT_TIME_INFINITE_FUTURE;
  if (timeout_ns >= 0) {
    const weft_time_t now = weft_time_now();
    // Saturates: a timeout past the end of time is no deadline.
    deadline = timeout_ns > WEFT_TIME_INFINITE_FUTURE - now
                   ? WEFT_TIME_INFINITE_FUTURE
                   : now + timeout_ns;
  }
  weft_vm_wait_frame_begin(call, WEFT_WAIT_MODE_ALL, deadline);
}

weft_status_t weft_hal_await_add(weft_vm_native_call_t* call,
                                 weft_semaphore_list_t list) {
  weft_status_t status = WEFT_OK;
  for (uint32_t i = 0; weft_status_is_ok(status) && i < list.count; ++i) {
    uint64_t current = 0;
    status = weft_semaphore_query(list.semaphores[i], &current);
    if (weft_status_is_ok(status) && current < list.values[i]) {
      status = weft_vm_wait_frame_add(call, list.semaphores[i],
                                      list.values[i]);
    }
  }
  return status;
}

weft_status_t weft_hal_await_yield(weft_vm_native_call_t* call,
                                   weft_status_t status,
                                   uint32_t result_index) {
  if (!weft_status_is_ok(status)) {
    weft_vm_wait_frame_clear(call->wait);
    return status;
  }
  if (call->wait->count == 0) {
    call->results[result_index].i32 = 0;
    return WEFT_OK;
  }
  call->pc = WEFT_HAL_AWAIT_RESUME_PC;
  return weft_status_from_code(WEFT_STATUS_DEFERRED);
}

weft_status_t weft_hal_await_resume(weft_vm_native_call_t* call,
                                    uint32_t result_index) {
  weft_status_t result = call->wait_result;
  call->wait_result = WEFT_OK;
  // Only the bare code is the deadline passing; a semaphore failed with
  // DEADLINE_EXCEEDED (a message of its own) is a failure like any other.
  if (result == weft_status_from_code(WEFT_STATUS_DEADLINE_EXCEEDED)) {
    call->results[result_index].i32 = WEFT_STATUS_DEADLINE_EXCEEDED;
    return WEFT_OK;
  }
  if (weft_status_is_ok(result)) call->results[result_index].i32 = 0;
  return result;
}
