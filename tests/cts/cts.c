// weft CTS support: argument parsing, per-case device, assertions.
#include "cts.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char* g_device_string = "local-sync";

const char* weft_cts_device_string(void) { return g_device_string; }

int weft_cts_setup(void** state) {
  weft_cts_t* cts = calloc(1, sizeof(*cts));
  if (!cts) return -1;
  cts->device_string = g_device_string;
  cts->allocator = weft_allocator_system();
  weft_status_t status =
      weft_device_create(cts->device_string, cts->allocator, &cts->device);
  if (weft_status_is_ok(status)) {
    status = weft_device_create_executable(
        cts->device,
        weft_executable_source_cpu_static(weft_cts_test_kernels_query),
        &cts->kernels);
  }
  if (!weft_status_is_ok(status)) {
    fprintf(stderr, "CTS setup on '%s' failed: ", cts->device_string);
    weft_status_fprint(stderr, status);
    weft_status_free(status);
    weft_executable_release(cts->kernels);
    weft_device_release(cts->device);
    free(cts);
    return -1;
  }
  *state = cts;
  return 0;
}

int weft_cts_teardown(void** state) {
  weft_cts_t* cts = *state;
  if (!cts) return 0;
  weft_executable_release(cts->kernels);
  weft_device_release(cts->device);
  free(cts);
  *state = NULL;
  return 0;
}

int weft_cts_run(const char* suite_name, const struct CMUnitTest* tests,
                 size_t count, int argc, char** argv) {
  const char* env = getenv("WEFT_CTS_DRIVER");
  if (env && env[0]) g_device_string = env;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--driver") == 0 && i + 1 < argc) {
      g_device_string = argv[++i];
    }
  }
  // A device this machine cannot have (a backend the kernel refuses, say)
  // skips the whole suite: exit 77, ctest's SKIP_RETURN_CODE.
  weft_device_t* device = NULL;
  weft_status_t status =
      weft_device_create(g_device_string, weft_allocator_system(), &device);
  weft_device_release(device);
  if (weft_status_is(status, WEFT_STATUS_UNAVAILABLE)) {
    fprintf(stderr, "cts.%s.%s: skipped, the device is unavailable here: ",
            g_device_string, suite_name);
    weft_status_fprint(stderr, status);
    weft_status_free(status);
    return WEFT_CTS_EXIT_SKIP;
  }
  // Any other failure fails each case's setup with the message.
  weft_status_ignore(status);
  char group_name[256];
  snprintf(group_name, sizeof(group_name), "cts.%s.%s", g_device_string,
           suite_name);
  return _cmocka_run_group_tests(group_name, tests, count, NULL, NULL);
}

void weft_cts_assert_ok_(weft_status_t status, const char* expr,
                         const char* file, int line) {
  if (weft_status_is_ok(status)) return;
  char message[1024];
  weft_status_format(status, message, sizeof(message));
  weft_status_free(status);
  print_error("%s:%d: %s failed: %s\n", file, line, expr, message);
  _fail(file, line);
}

void weft_cts_assert_status_(weft_status_code_t code, weft_status_t status,
                             const char* expr, const char* file, int line) {
  weft_status_code_t actual = weft_status_code(status);
  if (actual == code) {
    weft_status_free(status);
    return;
  }
  char message[1024];
  weft_status_format(status, message, sizeof(message));
  weft_status_free(status);
  print_error("%s:%d: %s: expected %s, got %s\n", file, line, expr,
              weft_status_code_string(code), message);
  _fail(file, line);
}

weft_buffer_t* weft_cts_allocate_buffer(weft_cts_t* cts,
                                        weft_device_size_t length) {
  weft_buffer_params_t params = {0};
  weft_buffer_t* buffer = NULL;
  WEFT_ASSERT_OK(
      weft_device_allocate_buffer(cts->device, params, length, &buffer));
  return buffer;
}

weft_semaphore_t* weft_cts_create_semaphore(weft_cts_t* cts,
                                            uint64_t initial_value) {
  weft_semaphore_t* semaphore = NULL;
  WEFT_ASSERT_OK(
      weft_device_create_semaphore(cts->device, initial_value, &semaphore));
  return semaphore;
}

weft_semaphore_list_t weft_cts_list1(weft_semaphore_t** semaphore_storage,
                                     const uint64_t* value_storage) {
  weft_semaphore_list_t list = {1, semaphore_storage, value_storage};
  return list;
}

void weft_cts_read_buffer(weft_buffer_t* buffer, weft_device_size_t offset,
                          void* out, weft_device_size_t length) {
  WEFT_ASSERT_OK(weft_buffer_map_read(buffer, offset, out, length));
}

weft_status_t weft_cts_wait(weft_semaphore_t* semaphore, uint64_t value) {
  return weft_semaphore_wait(semaphore, value,
                             weft_timeout_relative(10ll * 1000 * 1000 * 1000));
}

static weft_status_t weft_cts_counting_ctl(void* self,
                                           weft_allocator_command_t command,
                                           size_t byte_length,
                                           void** inout_ptr) {
  weft_cts_counting_allocator_t* counter =
      (weft_cts_counting_allocator_t*)self;
  void* before = *inout_ptr;
  weft_status_t status =
      counter->base.ctl(counter->base.self, command, byte_length, inout_ptr);
  int64_t delta = 0;
  if (weft_status_is_ok(status)) {
    if (command == WEFT_ALLOCATOR_COMMAND_FREE) {
      delta = before ? -1 : 0;
    } else if (command == WEFT_ALLOCATOR_COMMAND_REALLOC) {
      delta = (before ? -1 : 0) + (*inout_ptr ? 1 : 0);
    } else {
      delta = *inout_ptr ? 1 : 0;
    }
  }
  // Seq_cst (the default): a count read after a device's shutdown thread
  // freed its last block sees that free.
  atomic_fetch_add(&counter->live, delta);
  return status;
}

weft_allocator_t weft_cts_counting_allocator_initialize(
    weft_allocator_t base, weft_cts_counting_allocator_t* counter) {
  counter->base = base;
  atomic_init(&counter->live, 0);
  weft_allocator_t allocator = {counter, weft_cts_counting_ctl};
  return allocator;
}

int64_t weft_cts_counting_allocator_live(
    weft_cts_counting_allocator_t* counter) {
  return atomic_load(&counter->live);
}

int64_t weft_cts_counting_allocator_wait_all_freed(
    weft_cts_counting_allocator_t* counter, weft_duration_t timeout_ns) {
  const weft_time_t deadline = weft_time_now() + timeout_ns;
  while (weft_cts_counting_allocator_live(counter) != 0 &&
         weft_time_now() < deadline) {
    weft_sleep_until(weft_time_now() + 100 * 1000);
  }
  return weft_cts_counting_allocator_live(counter);
}
