// Tests for src/hal/resource.h: every HAL object says what type it is, so a
// generic reference can be checked before it is cast.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
// clang-format off
#include <cmocka.h>
// clang-format on

#include <string.h>

#include "hal/resource.h"
#include "weft/weft.h"

#include "hal_test_util.h"

static int noop_kernel(const weft_dispatch_state_t* dispatch,
                       const weft_workgroup_state_t* workgroup) {
  return 0;
}

static const weft_kernel_def_t kKernels[] = {
    {"noop", noop_kernel, 0, 0, {1, 1, 1}, 0},
};
static const weft_kernel_library_t kLibrary = {WEFT_KERNEL_ABI_VERSION,
                                               "resource_test", 1, kKernels};
static const weft_kernel_library_t* query(uint32_t abi_version) {
  return abi_version == WEFT_KERNEL_ABI_VERSION ? &kLibrary : NULL;
}

// Checks |object| is |type| and no other type.
static void check_type(const void* object, weft_resource_type_t type,
                       const char* name) {
  assert_int_equal(weft_resource_type(object), type);
  assert_string_equal(weft_resource_type_name(type), name);
  for (int other = WEFT_RESOURCE_TYPE_NONE + 1;
       other < WEFT_RESOURCE_TYPE_COUNT_; ++other) {
    assert_int_equal(weft_resource_is(object, (weft_resource_type_t)other),
                     other == (int)type);
  }
}

static void every_object_has_its_type(void** state) {
  weft_allocator_t allocator = weft_allocator_system();
  weft_device_t* device = NULL;
  ASSERT_OK(weft_device_create("local-sync", allocator, &device));
  check_type(device, WEFT_RESOURCE_TYPE_DEVICE, "device");

  weft_buffer_t* buffer = NULL;
  ASSERT_OK(weft_device_allocate_buffer(device, (weft_buffer_params_t){0}, 64,
                                        &buffer));
  check_type(buffer, WEFT_RESOURCE_TYPE_BUFFER, "buffer");
  weft_buffer_t* subspan = NULL;
  ASSERT_OK(weft_buffer_subspan(buffer, 16, 16, allocator, &subspan));
  check_type(subspan, WEFT_RESOURCE_TYPE_BUFFER, "buffer");

  weft_semaphore_t* semaphore = NULL;
  ASSERT_OK(weft_device_create_semaphore(device, 0, &semaphore));
  check_type(semaphore, WEFT_RESOURCE_TYPE_SEMAPHORE, "semaphore");

  weft_fence_t* fence = NULL;
  ASSERT_OK(weft_fence_create_at(semaphore, 1, allocator, &fence));
  check_type(fence, WEFT_RESOURCE_TYPE_FENCE, "fence");

  weft_executable_t* executable = NULL;
  ASSERT_OK(weft_device_create_executable(
      device, weft_executable_source_cpu_static(query), &executable));
  check_type(executable, WEFT_RESOURCE_TYPE_EXECUTABLE, "executable");

  weft_command_buffer_t* command_buffer = NULL;
  ASSERT_OK(weft_command_buffer_create(
      device, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, WEFT_COMMAND_CATEGORY_ANY, 0,
      &command_buffer));
  check_type(command_buffer, WEFT_RESOURCE_TYPE_COMMAND_BUFFER,
             "command buffer");

  static uint8_t bytes[16];
  weft_file_t* file = NULL;
  ASSERT_OK(weft_file_wrap_memory(WEFT_FILE_ACCESS_READ, bytes, sizeof(bytes),
                                  NULL, NULL, allocator, &file));
  check_type(file, WEFT_RESOURCE_TYPE_FILE, "file");

  weft_channel_t* channel = NULL;
  ASSERT_OK(weft_channel_create_self(allocator, &channel));
  check_type(channel, WEFT_RESOURCE_TYPE_CHANNEL, "channel");

  // NULL and out-of-range types are "none".
  assert_int_equal(weft_resource_type(NULL), WEFT_RESOURCE_TYPE_NONE);
  assert_false(weft_resource_is(NULL, WEFT_RESOURCE_TYPE_BUFFER));
  assert_string_equal(weft_resource_type_name(WEFT_RESOURCE_TYPE_COUNT_),
                      "none");

  weft_file_release(file);
  weft_channel_release(channel);
  weft_command_buffer_release(command_buffer);
  weft_executable_release(executable);
  weft_fence_release(fence);
  weft_semaphore_release(semaphore);
  weft_buffer_release(subspan);
  weft_buffer_release(buffer);
  weft_device_release(device);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_object_has_its_type),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
