// weft-info: lists the drivers weft was built with and, for each, the
// properties of its default device.
//
//   weft-info                  every driver and its default device
//   weft-info local-sync       only that device (any device string works,
//                              e.g. "local-task?workers=4")
//   weft-info --help
//
// Without DEVICE, a driver whose default device cannot be created here (no
// GPU, say) is reported as unavailable with the reason, and the exit code is
// 0. With DEVICE, only its driver's entry and the device are printed;
// failing to create it prints the error (which lists the known drivers) on
// stderr and exits 2 when the string is at fault (an unknown driver, an
// option refused: INVALID_ARGUMENT or NOT_FOUND), else 1.
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "drivers/local_task/local_task_driver.h"
#include "hal/device_impl.h"
#include "weft/weft.h"

#ifndef WEFT_VERSION_STRING
#define WEFT_VERSION_STRING "unknown"
#endif

// The integer properties every device answers (weft_device_query_i64).
static const char* const kDeviceProperties[] = {
    "queue.count",
    "worker.count",
    "dispatch.concurrent",
    "semaphore.host_wait",
};

static void print_usage(FILE* stream) {
  fprintf(stream,
          "Usage: weft-info [--help] [DEVICE]\n"
          "\n"
          "Lists the registered drivers and, for each, creates its default\n"
          "device and prints its properties. With DEVICE (a device string\n"
          "such as \"local-sync\" or \"local-task?workers=4\"), prints only\n"
          "that device and its driver. Exit codes: 0 done, 1 an error, 2 bad\n"
          "usage (a device string no driver takes among them).\n");
}

// Prints |driver|'s entry of the driver table: name, description and
// accepted options.
static void print_driver(const weft_driver_t* driver) {
  printf("  %-12s %s\n", driver->name,
         driver->description ? driver->description : "");
  printf("  %-12s options:", "");
  const char* const* option = driver->option_names;
  if (!option || !*option) printf(" (none)");
  for (; option && *option; ++option) printf(" %s", *option);
  printf("\n");
}

// Prints the driver table, or with |only| (a driver's name) its entry.
static void print_drivers(const weft_driver_registry_t* registry,
                          const char* only) {
  uint32_t count = weft_driver_registry_count(registry);
  if (!only) printf("drivers (%u):\n", count);
  for (uint32_t i = 0; i < count; ++i) {
    const weft_driver_t* driver = weft_driver_registry_get(registry, i);
    if (!only) {
      print_driver(driver);
    } else if (strcmp(driver->name, only) == 0) {
      printf("driver:\n");
      print_driver(driver);
    }
  }
}

// Creates the device named by |device_string| and prints its properties,
// after its driver's entry of the table when |with_driver|. Returns the
// creation status (OK when the device was printed).
static weft_status_t print_device(weft_driver_registry_t* registry,
                                  const char* device_string,
                                  bool with_driver) {
  weft_device_t* device = NULL;
  weft_status_t status = weft_driver_registry_create_device(
      registry, device_string, weft_allocator_system(), &device);
  if (weft_status_is_ok(status)) {
    if (with_driver) {
      print_drivers(registry, weft_device_driver_name(device));
    }
    printf("device \"%s\":\n", device_string);
    printf("  %-20s %s\n", "driver", weft_device_driver_name(device));
    printf("  %-20s %s\n", "id", weft_device_id(device));
    for (size_t i = 0;
         i < sizeof(kDeviceProperties) / sizeof(kDeviceProperties[0]); ++i) {
      int64_t value = 0;
      weft_status_t query_status =
          weft_device_query_i64(device, kDeviceProperties[i], &value);
      if (weft_status_is_ok(query_status)) {
        printf("  %-20s %lld\n", kDeviceProperties[i], (long long)value);
      } else {
        printf("  %-20s (%s)\n", kDeviceProperties[i],
               weft_status_code_string(weft_status_code(query_status)));
        weft_status_ignore(query_status);
      }
    }
    // local-task: how fd files are read and written, and why.
    const char* file_io = weft_local_task_device_file_io_explanation(device);
    if (file_io) printf("  %-20s %s\n", "file I/O", file_io);
    const char* topology =
        weft_local_task_device_topology_explanation(device);
    if (topology) {
      printf("  topology:\n");
      // Indent each line of the account under the heading.
      for (const char* line = topology; *line;) {
        const char* end = strchr(line, '\n');
        int length = end ? (int)(end - line) : (int)strlen(line);
        printf("    %.*s\n", length, line);
        line += length + (end ? 1 : 0);
      }
    }
    // What the driver says of the device's state (as hang reports show
    // it): the GPU for cuda (name, memory, compute capability, driver).
    const weft_device_vtable_t* vtable = weft_device_vtable(device);
    if (vtable->describe) {
      printf("  state:\n");
      vtable->describe(device, stdout);
    }
    weft_device_release(device);
  }
  return status;
}

int main(int argc, char** argv) {
  const char* device_string = NULL;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      print_usage(stdout);
      return 0;
    } else if (argv[i][0] == '-' || device_string) {
      fprintf(stderr, "weft-info: unexpected argument '%s'\n\n", argv[i]);
      print_usage(stderr);
      return 2;
    }
    device_string = argv[i];
  }

  weft_driver_registry_t* registry = NULL;
  weft_status_t status =
      weft_driver_registry_create_default(weft_allocator_system(), &registry);
  int exit_code = 0;
  if (weft_status_is_ok(status)) {
    printf("weft %s\n", WEFT_VERSION_STRING);
    if (device_string) {
      status = print_device(registry, device_string, /*with_driver=*/true);
      // A device string no driver takes (an unknown driver, an option it
      // refuses) is bad usage, as a bad argument is.
      if (weft_status_is(status, WEFT_STATUS_INVALID_ARGUMENT) ||
          weft_status_is(status, WEFT_STATUS_NOT_FOUND)) {
        exit_code = 2;
      }
    } else {
      print_drivers(registry, NULL);
      // The default device of each driver is the one named by the driver.
      uint32_t count = weft_driver_registry_count(registry);
      for (uint32_t i = 0; i < count; ++i) {
        const weft_driver_t* driver = weft_driver_registry_get(registry, i);
        weft_status_t device_status =
            print_device(registry, driver->name, /*with_driver=*/false);
        if (!weft_status_is_ok(device_status)) {
          printf("device \"%s\": unavailable: ", driver->name);
          weft_status_fprint(stdout, device_status);
          weft_status_free(device_status);
        }
      }
    }
    weft_driver_registry_release(registry);
  }
  if (!weft_status_is_ok(status)) {
    fprintf(stderr, "weft-info: ");
    weft_status_fprint(stderr, status);
    weft_status_free(status);
    if (exit_code == 0) exit_code = 1;
  }
  return exit_code;
}
