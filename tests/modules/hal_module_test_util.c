// Shared hal module test helpers (see hal_module_test_util.h).
#include "hal_module_test_util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
// clang-format off
#include <cmocka.h>
// clang-format on

#include <string.h>

#include "cts.h"
#include "weft/vm/invocation.h"

const char* const kHalTestDevices[HAL_TEST_DEVICE_COUNT] = {"local-sync",
                                                            "local-task"};

void hal_test_setup(const char* device_string, hal_test_t* out_test) {
  memset(out_test, 0, sizeof(*out_test));
  out_test->device_string = device_string;
  const weft_hal_static_library_t libraries[] = {
      {HAL_TEST_LIBRARY, weft_cts_test_kernels_query},
  };
  const weft_hal_module_options_t options = {
      .device_string = device_string,
      .static_library_count = 1,
      .static_libraries = libraries,
  };
  vm_test_expect_ok(weft_hal_module_create(&options, weft_allocator_system(),
                                            &out_test->module));
  vm_test_expect_ok(weft_vm_context_create(&out_test->module, 1,
                                            weft_allocator_system(),
                                            &out_test->context));
  weft_vm_value_t device = hal_test_call_ok(out_test, "device.default", NULL, 0);
  out_test->device = (weft_device_t*)device.ref.object;
  assert_ptr_equal(device.ref.type, &kWeftHalDeviceType);
}

void hal_test_teardown(hal_test_t* test) {
  weft_device_release(test->device);
  weft_vm_context_release(test->context);
  weft_vm_module_release(test->module);
  memset(test, 0, sizeof(*test));
}

void hal_test_for_each_device(void (*body)(hal_test_t* test)) {
  for (int i = 0; i < HAL_TEST_DEVICE_COUNT; ++i) {
    hal_test_t test;
    hal_test_setup(kHalTestDevices[i], &test);
    body(&test);
    hal_test_teardown(&test);
  }
}

weft_vm_value_t hal_test_ref(void* hal_object) {
  weft_vm_value_t value = weft_vm_value_zero(WEFT_VM_TYPE_REF);
  vm_test_expect_ok(weft_hal_module_wrap(hal_object, &value.ref));
  return value;
}

weft_vm_value_t hal_test_null(void) {
  return weft_vm_value_zero(WEFT_VM_TYPE_REF);
}

weft_vm_value_t hal_test_i32(int32_t i32) { return weft_vm_value_i32(i32); }

weft_vm_value_t hal_test_i64(int64_t i64) { return weft_vm_value_i64(i64); }

weft_vm_value_t hal_test_view(weft_hal_buffer_view_t* view) {
  return weft_vm_value_ref(weft_hal_module_wrap_buffer_view(view));
}

weft_vm_value_t hal_test_list(weft_vm_list_t* list) {
  return weft_vm_value_ref(weft_vm_list_as_ref(list));
}

weft_vm_value_t hal_test_bytes(weft_vm_bytes_t* bytes) {
  return weft_vm_value_ref(weft_vm_bytes_as_ref(bytes));
}

weft_vm_bytes_t* hal_test_make_bytes(const char* text) {
  weft_vm_bytes_t* bytes = NULL;
  vm_test_expect_ok(weft_vm_bytes_create(weft_allocator_system(), text,
                                          strlen(text), &bytes));
  return bytes;
}

void hal_test_release_bytes(weft_vm_bytes_t* bytes) {
  weft_vm_bytes_release(bytes);
}

weft_vm_list_t* hal_test_make_list(const weft_vm_value_t* values,
                                   uint32_t count) {
  weft_vm_list_t* list = NULL;
  vm_test_expect_ok(weft_vm_list_create(weft_allocator_system(), count, &list));
  vm_test_expect_ok(weft_vm_list_resize(list, count));
  for (uint32_t i = 0; i < count; ++i) {
    vm_test_expect_ok(weft_vm_list_set(list, i, &values[i]));
  }
  return list;
}

void hal_test_release_list(weft_vm_list_t* list) {
  weft_vm_list_release(list);
}

weft_status_t hal_test_call(hal_test_t* test, const char* function,
                            const weft_vm_value_t* args, uint32_t arg_count,
                            weft_vm_value_t* results, uint32_t result_count) {
  char name[128];
  snprintf(name, sizeof(name), "hal.%s", function);
  return weft_vm_invoke_sync(test->context, name, args, arg_count, results,
                             result_count, 0, weft_allocator_system());
}

weft_vm_value_t hal_test_call_ok(hal_test_t* test, const char* function,
                                 const weft_vm_value_t* args,
                                 uint32_t arg_count) {
  weft_vm_value_t result = {0};
  vm_test_expect_ok(hal_test_call(test, function, args, arg_count, &result, 1));
  return result;
}

weft_fence_t* hal_test_new_fence(hal_test_t* test) {
  weft_vm_value_t fence =
      hal_test_call_ok(test, "fence.create", HAL_ARGS(hal_test_ref(test->device)));
  assert_ptr_equal(fence.ref.type, &kWeftHalFenceType);
  return (weft_fence_t*)fence.ref.object;
}

int32_t hal_test_await(hal_test_t* test, weft_fence_t* fence,
                       int64_t timeout_ns) {
  weft_vm_value_t code = hal_test_call_ok(
      test, "fence.await", HAL_ARGS(hal_test_ref(fence), hal_test_i64(timeout_ns)));
  return code.i32;
}

weft_buffer_t* hal_test_allocate(hal_test_t* test, int64_t length) {
  weft_vm_value_t buffer = hal_test_call_ok(
      test, "buffer.allocate",
      HAL_ARGS(hal_test_ref(test->device), hal_test_i64(length)));
  assert_ptr_equal(buffer.ref.type, &kWeftHalBufferType);
  return (weft_buffer_t*)buffer.ref.object;
}
