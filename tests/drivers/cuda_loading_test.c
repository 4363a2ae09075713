// The cuda driver where it cannot run: creating a device without a driver
// library (or with one that cannot be loaded) is UNAVAILABLE naming the
// library and the loader's reason, and bad device strings are refused
// before anything is loaded. Each case runs in a child process: the driver
// library is loaded once per process.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
// clang-format off
#include <cmocka.h>
// clang-format on

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "weft/weft.h"

// Creates |device_string| and returns 0 when it fails with |code| and a
// message containing |needle|; prints what it got otherwise.
static int expect_create_failure(const char* device_string,
                                 weft_status_code_t code, const char* needle) {
  weft_device_t* device = NULL;
  weft_status_t status =
      weft_device_create(device_string, weft_allocator_system(), &device);
  const size_t length = weft_status_format(status, NULL, 0);
  char* text = malloc(length + 1);
  weft_status_format(status, text, length + 1);
  int result = weft_status_code(status) == code && strstr(text, needle) &&
                       device == NULL
                   ? 0
                   : 1;
  if (result) {
    fprintf(stderr, "'%s': expected %s containing \"%s\", got \"%s\"\n",
            device_string, weft_status_code_string(code), needle, text);
  }
  free(text);
  weft_status_free(status);
  weft_device_release(device);
  return result;
}

// Runs |fn| in a child with WEFT_CUDA_DRIVER_LIBRARY set to |library|
// (unset when NULL) and asserts it exited 0.
static void run_in_child(const char* library, int (*fn)(void)) {
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    if (library) {
      setenv("WEFT_CUDA_DRIVER_LIBRARY", library, 1);
    } else {
      unsetenv("WEFT_CUDA_DRIVER_LIBRARY");
    }
    _exit(fn());
  }
  int wstatus = 0;
  assert_int_equal(waitpid(pid, &wstatus, 0), pid);
  assert_true(WIFEXITED(wstatus));
  assert_int_equal(WEXITSTATUS(wstatus), 0);
}

static int missing_library_child(void) {
  return expect_create_failure("cuda", WEFT_STATUS_UNAVAILABLE,
                               "the CUDA driver library "
                               "'/nonexistent/libcuda.so.1' could not be "
                               "loaded");
}

static void missing_library_is_unavailable(void** state) {
  run_in_child("/nonexistent/libcuda.so.1", missing_library_child);
}

static int not_a_driver_child(void) {
  // A library without the entry points: libm has none of them.
  return expect_create_failure("cuda?device=0", WEFT_STATUS_UNAVAILABLE,
                               "has no entry point 'cuGetErrorName'");
}

static void library_without_entry_points_is_unavailable(void** state) {
  run_in_child("libm.so.6", not_a_driver_child);
}

static int bad_options_child(void) {
  int failures = 0;
  failures += expect_create_failure("cuda?completion=sometimes",
                                    WEFT_STATUS_INVALID_ARGUMENT,
                                    "option 'completion' must be 'blocking' "
                                    "or 'polling' (got 'sometimes'); in "
                                    "device string 'cuda?completion="
                                    "sometimes'");
  failures += expect_create_failure("cuda?device=x",
                                    WEFT_STATUS_INVALID_ARGUMENT, "device");
  failures += expect_create_failure("cuda://gpu0",
                                    WEFT_STATUS_INVALID_ARGUMENT,
                                    "takes no path");
  failures += expect_create_failure("cuda?status_slots=1",
                                    WEFT_STATUS_INVALID_ARGUMENT,
                                    "status_slots must be at least 2");
  failures += expect_create_failure("cuda?streams=2",
                                    WEFT_STATUS_INVALID_ARGUMENT,
                                    "does not accept option 'streams'");
  return failures;
}

// Option errors come before the library is touched.
static void bad_device_strings_are_refused(void** state) {
  run_in_child("/nonexistent/libcuda.so.1", bad_options_child);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(missing_library_is_unavailable),
      cmocka_unit_test(library_without_entry_points_is_unavailable),
      cmocka_unit_test(bad_device_strings_are_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
