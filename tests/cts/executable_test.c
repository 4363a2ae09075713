// CTS: executables (static and loaded kernel libraries, lookup, malformed
// tables).
#include <stdlib.h>
#include <string.h>

#include "cts.h"

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

// Runs write_ids of |executable| over |count| workgroups through
// queue_dispatch and checks every id.
static void run_write_ids(weft_cts_t* cts, weft_executable_t* executable,
                          uint32_t count) {
  uint32_t ordinal = 0;
  WEFT_ASSERT_OK(
      weft_executable_lookup_kernel(executable, "write_ids", &ordinal));
  weft_device_size_t length = (weft_device_size_t)count * 4 * sizeof(uint32_t);
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, length);
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  uint64_t value = 1;
  weft_buffer_ref_t binding = weft_make_buffer_ref(buffer, 0, length);
  uint32_t workgroups[3] = {count, 1, 1};
  WEFT_ASSERT_OK(weft_device_queue_dispatch(
      cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&semaphore, &value), executable, ordinal, workgroups, 0,
      NULL, 1, &binding));
  WEFT_ASSERT_OK(weft_cts_wait(semaphore, 1));
  weft_cts_assert_ids(cts, buffer, 0, workgroups);
  weft_semaphore_release(semaphore);
  weft_buffer_release(buffer);
}

static int noop_kernel(const weft_dispatch_state_t* dispatch,
                       const weft_workgroup_state_t* workgroup) {
  (void)dispatch;
  (void)workgroup;
  return 0;
}

//===----------------------------------------------------------------------===//
// Malformed libraries
//===----------------------------------------------------------------------===//

static const weft_kernel_def_t kNullFnKernels[] = {
    {"good", noop_kernel, 0, 0, {1, 1, 1}, 0},
    {"no_function", NULL, 0, 0, {1, 1, 1}, 0},
};
static const weft_kernel_library_t kNullFnLibrary = {
    WEFT_KERNEL_ABI_VERSION, "null_fn", 2, kNullFnKernels};
static const weft_kernel_library_t* null_fn_query(uint32_t abi_version) {
  (void)abi_version;
  return &kNullFnLibrary;
}

static const weft_kernel_def_t kZeroSizeKernels[] = {
    {"flat", noop_kernel, 0, 0, {4, 0, 1}, 0},
};
static const weft_kernel_library_t kZeroSizeLibrary = {
    WEFT_KERNEL_ABI_VERSION, "zero_size", 1, kZeroSizeKernels};
static const weft_kernel_library_t* zero_size_query(uint32_t abi_version) {
  (void)abi_version;
  return &kZeroSizeLibrary;
}

static const weft_kernel_def_t kUnnamedKernels[] = {
    {NULL, noop_kernel, 0, 0, {1, 1, 1}, 0},
};
static const weft_kernel_library_t kUnnamedLibrary = {
    WEFT_KERNEL_ABI_VERSION, "unnamed", 1, kUnnamedKernels};
static const weft_kernel_library_t* unnamed_query(uint32_t abi_version) {
  (void)abi_version;
  return &kUnnamedLibrary;
}

static const weft_kernel_def_t kDuplicateKernels[] = {
    {"twice", noop_kernel, 0, 0, {1, 1, 1}, 0},
    {"once", noop_kernel, 0, 0, {1, 1, 1}, 0},
    {"twice", noop_kernel, 0, 0, {1, 1, 1}, 0},
};
static const weft_kernel_library_t kDuplicateLibrary = {
    WEFT_KERNEL_ABI_VERSION, "duplicate", 3, kDuplicateKernels};
static const weft_kernel_library_t* duplicate_query(uint32_t abi_version) {
  (void)abi_version;
  return &kDuplicateLibrary;
}

static const weft_kernel_library_t kEmptyLibrary = {WEFT_KERNEL_ABI_VERSION,
                                                    "empty", 0, NULL};
static const weft_kernel_library_t* empty_query(uint32_t abi_version) {
  (void)abi_version;
  return &kEmptyLibrary;
}

static const weft_kernel_library_t kFutureLibrary = {
    WEFT_KERNEL_ABI_VERSION + 1, "future", 1, kZeroSizeKernels};
static const weft_kernel_library_t* future_query(uint32_t abi_version) {
  (void)abi_version;
  return &kFutureLibrary;
}

static const weft_kernel_library_t* null_query(uint32_t abi_version) {
  (void)abi_version;
  return NULL;
}

//===----------------------------------------------------------------------===//
// Cases
//===----------------------------------------------------------------------===//

// The device's own copy of the test kernels (a CPU library, a CUDA
// module) describes itself the same way.
static void create_static(void** state) {
  weft_cts_t* cts = *state;
  weft_executable_t* executable = NULL;
  const weft_executable_source_t source =
      weft_cts_kernel_source(weft_device_driver_name(cts->device));
  WEFT_ASSERT_OK(
      weft_device_create_executable(cts->device, source, &executable));
  assert_string_equal(weft_executable_name(executable), "cts_test_kernels");
  assert_int_equal(weft_executable_kernel_count(executable), 4);
  assert_int_equal(weft_executable_format(executable), source.format);
  const weft_kernel_info_t* kernel = weft_executable_kernel_info(executable, 0);
  assert_non_null(kernel);
  assert_string_equal(kernel->name, "scale_offset");
  assert_int_equal(kernel->binding_count, 2);
  assert_int_equal(kernel->constant_count, 3);
  assert_null(weft_executable_kernel_info(executable, 4));
  assert_null(weft_executable_kernel_info(executable, UINT32_MAX));
  weft_executable_retain(executable);
  weft_executable_release(executable);
  weft_executable_release(executable);
}

static void create_static_null_query(void** state) {
  weft_cts_t* cts = *state;
  weft_cts_require(cts, WEFT_CTS_FEATURE_CPU_KERNEL_LIBRARIES);
  weft_executable_t* executable = (weft_executable_t*)state;
  weft_cts_assert_status_contains(
      weft_device_create_executable(
          cts->device, weft_executable_source_cpu_static(NULL), &executable),
      WEFT_STATUS_INVALID_ARGUMENT, "NULL");
  assert_null(executable);
  weft_cts_assert_status_contains(
      weft_device_create_executable(
          cts->device, weft_executable_source_cpu_static(null_query),
          &executable),
      WEFT_STATUS_INVALID_ARGUMENT, "no table");
  assert_null(executable);
}

// A format the device does not take is INVALID_ARGUMENT naming both.
static void unknown_format_names_device_and_format(void** state) {
  weft_cts_t* cts = *state;
  weft_executable_t* executable = (weft_executable_t*)state;
  weft_executable_source_t source = {0};
  source.format = (weft_executable_format_t)77;
  weft_cts_assert_status_contains(
      weft_device_create_executable(cts->device, source, &executable),
      WEFT_STATUS_INVALID_ARGUMENT, weft_device_id(cts->device));
  assert_null(executable);
  weft_cts_assert_status_contains(
      weft_device_create_executable(cts->device, source, &executable),
      WEFT_STATUS_INVALID_ARGUMENT, "format unknown (77)");
  assert_null(executable);
}

static void lookup_by_name(void** state) {
  weft_cts_t* cts = *state;
  static const char* const kNames[] = {"scale_offset", "abs_range", "write_ids",
                                       "fail"};
  for (uint32_t i = 0; i < 4; ++i) {
    uint32_t ordinal = UINT32_MAX;
    WEFT_ASSERT_OK(
        weft_executable_lookup_kernel(cts->kernels, kNames[i], &ordinal));
    assert_int_equal(ordinal, i);
    assert_string_equal(
        weft_executable_kernel_info(cts->kernels, ordinal)->name, kNames[i]);
  }
}

static void lookup_missing_lists_names(void** state) {
  weft_cts_t* cts = *state;
  uint32_t ordinal = 0;
  weft_status_t status =
      weft_executable_lookup_kernel(cts->kernels, "scale", &ordinal);
  char text[1024];
  weft_status_format(status, text, sizeof(text));
  assert_int_equal(weft_status_code(status), WEFT_STATUS_NOT_FOUND);
  assert_non_null(strstr(text, "'scale'"));
  assert_non_null(strstr(text, "cts_test_kernels"));
  assert_non_null(strstr(text, "scale_offset"));
  assert_non_null(strstr(text, "abs_range"));
  assert_non_null(strstr(text, "write_ids"));
  assert_non_null(strstr(text, "fail"));
  weft_status_free(status);
  assert_int_equal(ordinal, UINT32_MAX);
}

static void load_shared_object(void** state) {
  weft_cts_t* cts = *state;
  weft_cts_require(cts, WEFT_CTS_FEATURE_CPU_KERNEL_LIBRARIES);
  const char* path = getenv("WEFT_CTS_KERNEL_LIBRARY");
  if (!path || !path[0]) {
    skip();
    return;
  }
  weft_executable_t* executable = NULL;
  WEFT_ASSERT_OK(weft_device_create_executable(
      cts->device, weft_executable_source_cpu_shared_object(path),
      &executable));
  assert_string_equal(weft_executable_name(executable), "cts_test_kernels");
  assert_int_equal(weft_executable_kernel_count(executable), 4);
  run_write_ids(cts, executable, 9);
  weft_executable_release(executable);
}

static void loaded_library_outlives_its_creator(void** state) {
  // A command buffer keeps a loaded library (and its code) alive after the
  // caller releases it.
  weft_cts_t* cts = *state;
  weft_cts_require(cts, WEFT_CTS_FEATURE_CPU_KERNEL_LIBRARIES);
  const char* path = getenv("WEFT_CTS_KERNEL_LIBRARY");
  if (!path || !path[0]) {
    skip();
    return;
  }
  weft_executable_t* executable = NULL;
  WEFT_ASSERT_OK(weft_device_create_executable(
      cts->device, weft_executable_source_cpu_shared_object(path),
      &executable));
  uint32_t ordinal = 0;
  WEFT_ASSERT_OK(
      weft_executable_lookup_kernel(executable, "write_ids", &ordinal));
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 3 * 16);
  weft_command_buffer_t* command_buffer = NULL;
  WEFT_ASSERT_OK(weft_command_buffer_create(
      cts->device, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, WEFT_COMMAND_CATEGORY_ANY,
      0, &command_buffer));
  WEFT_ASSERT_OK(weft_command_buffer_begin(command_buffer));
  uint32_t workgroups[3] = {3, 1, 1};
  weft_buffer_ref_t binding =
      weft_make_buffer_ref(buffer, 0, WEFT_WHOLE_BUFFER);
  WEFT_ASSERT_OK(weft_command_buffer_dispatch(
      command_buffer, executable, ordinal, workgroups, 0, NULL, 1, &binding));
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  weft_executable_release(executable);

  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  uint64_t value = 1;
  weft_binding_table_t table = {0, NULL};
  WEFT_ASSERT_OK(weft_device_queue_execute(
      cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&semaphore, &value), command_buffer, table));
  WEFT_ASSERT_OK(weft_cts_wait(semaphore, 1));
  uint32_t ids[12];
  weft_cts_read_buffer(cts, buffer, 0, ids, sizeof(ids));
  for (uint32_t i = 0; i < 3; ++i) assert_int_equal(ids[i * 4 + 3], i);
  weft_command_buffer_release(command_buffer);
  weft_semaphore_release(semaphore);
  weft_buffer_release(buffer);
}

static void load_missing_path(void** state) {
  weft_cts_t* cts = *state;
  weft_cts_require(cts, WEFT_CTS_FEATURE_CPU_KERNEL_LIBRARIES);
  const char* path = "/nonexistent/weft/libnot_a_kernel_library.so";
  weft_executable_t* executable = (weft_executable_t*)state;
  weft_cts_assert_status_contains(
      weft_device_create_executable(
          cts->device, weft_executable_source_cpu_shared_object(path),
          &executable),
      WEFT_STATUS_NOT_FOUND, path);
  assert_null(executable);
}

static void load_without_query_symbol(void** state) {
  // The C library is a shared object that surely lacks the query symbol.
  weft_cts_t* cts = *state;
  weft_cts_require(cts, WEFT_CTS_FEATURE_CPU_KERNEL_LIBRARIES);
  weft_executable_t* executable = NULL;
  weft_cts_assert_status_contains(
      weft_device_create_executable(
          cts->device, weft_executable_source_cpu_shared_object("libc.so.6"),
          &executable),
      WEFT_STATUS_NOT_FOUND, WEFT_KERNEL_LIBRARY_QUERY_SYMBOL);
  assert_null(executable);
}

static void load_empty_path(void** state) {
  weft_cts_t* cts = *state;
  weft_cts_require(cts, WEFT_CTS_FEATURE_CPU_KERNEL_LIBRARIES);
  weft_executable_t* executable = NULL;
  weft_cts_assert_status_contains(
      weft_device_create_executable(
          cts->device, weft_executable_source_cpu_shared_object(""),
          &executable),
      WEFT_STATUS_INVALID_ARGUMENT, "path");
  weft_cts_assert_status_contains(
      weft_device_create_executable(
          cts->device, weft_executable_source_cpu_shared_object(NULL),
          &executable),
      WEFT_STATUS_INVALID_ARGUMENT, "path");
}

static void malformed_null_function(void** state) {
  weft_cts_t* cts = *state;
  weft_cts_require(cts, WEFT_CTS_FEATURE_CPU_KERNEL_LIBRARIES);
  weft_executable_t* executable = NULL;
  weft_cts_assert_status_contains(
      weft_device_create_executable(
          cts->device, weft_executable_source_cpu_static(null_fn_query),
          &executable),
      WEFT_STATUS_INVALID_ARGUMENT, "'no_function'");
  assert_null(executable);
}

static void malformed_tables(void** state) {
  weft_cts_t* cts = *state;
  weft_cts_require(cts, WEFT_CTS_FEATURE_CPU_KERNEL_LIBRARIES);
  weft_executable_t* executable = NULL;
  weft_cts_assert_status_contains(
      weft_device_create_executable(
          cts->device, weft_executable_source_cpu_static(zero_size_query),
          &executable),
      WEFT_STATUS_INVALID_ARGUMENT, "'flat'");
  weft_cts_assert_status_contains(
      weft_device_create_executable(
          cts->device, weft_executable_source_cpu_static(unnamed_query),
          &executable),
      WEFT_STATUS_INVALID_ARGUMENT, "no name");
  weft_cts_assert_status_contains(
      weft_device_create_executable(
          cts->device, weft_executable_source_cpu_static(duplicate_query),
          &executable),
      WEFT_STATUS_INVALID_ARGUMENT, "'twice' twice");
  weft_cts_assert_status_contains(
      weft_device_create_executable(
          cts->device, weft_executable_source_cpu_static(empty_query),
          &executable),
      WEFT_STATUS_INVALID_ARGUMENT, "no kernels");
  weft_cts_assert_status_contains(
      weft_device_create_executable(
          cts->device, weft_executable_source_cpu_static(future_query),
          &executable),
      WEFT_STATUS_INVALID_ARGUMENT, "ABI version");
  assert_null(executable);
}

int main(int argc, char** argv) {
  const struct CMUnitTest tests[] = {
      WEFT_CTS_CASE(create_static),
      WEFT_CTS_CASE(create_static_null_query),
      WEFT_CTS_CASE(unknown_format_names_device_and_format),
      WEFT_CTS_CASE(lookup_by_name),
      WEFT_CTS_CASE(lookup_missing_lists_names),
      WEFT_CTS_CASE(load_shared_object),
      WEFT_CTS_CASE(loaded_library_outlives_its_creator),
      WEFT_CTS_CASE(load_missing_path),
      WEFT_CTS_CASE(load_without_query_symbol),
      WEFT_CTS_CASE(load_empty_path),
      WEFT_CTS_CASE(malformed_null_function),
      WEFT_CTS_CASE(malformed_tables),
  };
  return weft_cts_run("executable", tests, WEFT_CTS_COUNT(tests), argc, argv);
}
