// Shared by the hal module's tests: a module and context per device
// string, values for arguments and calls through weft_vm_invoke_sync
// (status assertions are the VM tests' vm_test_expect_ok and
// vm_test_expect_error, vm_test_modules.h).
#ifndef WEFT_TESTS_MODULES_HAL_MODULE_TEST_UTIL_H_
#define WEFT_TESTS_MODULES_HAL_MODULE_TEST_UTIL_H_

#include <stdint.h>

#include "vm_test_modules.h"
#include "weft/vm/context.h"
#include "weft/vm/hal.h"
#include "weft/vm/list.h"

// The devices every case runs on.
#define HAL_TEST_DEVICE_COUNT 2
extern const char* const kHalTestDevices[HAL_TEST_DEVICE_COUNT];

// The name hal.executable.static knows the CTS test kernels by.
#define HAL_TEST_LIBRARY "cts_test_kernels"

typedef struct hal_test_t {
  const char* device_string;
  weft_vm_module_t* module;
  weft_vm_context_t* context;
  // From hal.device.default (a reference of the test's).
  weft_device_t* device;
} hal_test_t;

// A module whose default device opens |device_string|, with the test
// kernels registered, and a context of it.
void hal_test_setup(const char* device_string, hal_test_t* out_test);
void hal_test_teardown(hal_test_t* test);

// Runs |body| once per device in kHalTestDevices.
void hal_test_for_each_device(void (*body)(hal_test_t* test));

// Argument values. HAL objects are borrowed (the call retains them).
weft_vm_value_t hal_test_ref(void* hal_object);
weft_vm_value_t hal_test_null(void);
weft_vm_value_t hal_test_i32(int32_t value);
weft_vm_value_t hal_test_i64(int64_t value);
weft_vm_value_t hal_test_view(weft_hal_buffer_view_t* view);
weft_vm_value_t hal_test_list(weft_vm_list_t* list);
weft_vm_value_t hal_test_bytes(weft_vm_bytes_t* bytes);

// A bytes object holding |text| (without its NUL); release with
// hal_test_release_bytes.
weft_vm_bytes_t* hal_test_make_bytes(const char* text);
void hal_test_release_bytes(weft_vm_bytes_t* bytes);
// A list of |count| |values| (refs retained); release with
// hal_test_release_list.
weft_vm_list_t* hal_test_make_list(const weft_vm_value_t* values,
                                   uint32_t count);
void hal_test_release_list(weft_vm_list_t* list);

// Calls "hal.<function>" with |args|, results in |results| (refs owned by
// the caller).
weft_status_t hal_test_call(hal_test_t* test, const char* function,
                            const weft_vm_value_t* args, uint32_t arg_count,
                            weft_vm_value_t* results, uint32_t result_count);
// As hal_test_call, expecting OK; returns result 0 (a ref's object is the
// caller's reference).
weft_vm_value_t hal_test_call_ok(hal_test_t* test, const char* function,
                                 const weft_vm_value_t* args,
                                 uint32_t arg_count);

// The argument array and its count, for hal_test_call*.
#define HAL_ARGS(...)                 \
  (const weft_vm_value_t[]){__VA_ARGS__}, \
      (uint32_t)(sizeof((const weft_vm_value_t[]){__VA_ARGS__}) / \
                 sizeof(weft_vm_value_t))

// hal.fence.create on the test's device (the caller's reference).
weft_fence_t* hal_test_new_fence(hal_test_t* test);
// hal.fence.await(|fence|, |timeout_ns|), expecting OK; returns the code.
int32_t hal_test_await(hal_test_t* test, weft_fence_t* fence,
                       int64_t timeout_ns);
// hal.buffer.allocate(|length|) (the caller's reference).
weft_buffer_t* hal_test_allocate(hal_test_t* test, int64_t length);

#endif  // WEFT_TESTS_MODULES_HAL_MODULE_TEST_UTIL_H_
