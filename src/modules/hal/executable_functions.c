// weft hal module: hal.executable.* (docs/VM.md, "The hal module").
#include <stdio.h>
#include <string.h>

#include "modules/hal/arguments.h"
#include "modules/hal/module_impl.h"

// executable.load(device, path) -> (executable): a CPU kernel library in
// a shared object.
static weft_status_t weft_hal_executable_load(weft_vm_native_call_t* call) {
  static const char kFunction[] = "hal.executable.load";
  weft_hal_string_t path;
  weft_executable_t* executable = NULL;
  weft_status_t status = weft_hal_arg_string(kFunction, "path",
                                             call->args[1].ref,
                                             call->allocator, &path);
  if (weft_status_is_ok(status)) {
    status = weft_device_create_executable(
        (weft_device_t*)call->args[0].ref.object,
        weft_executable_source_cpu_shared_object(path.text), &executable);
  }
  weft_hal_string_deinitialize(&path);
  weft_hal_set_result(call, 0, executable);
  return status;
}

// Finds static library |name| among the module's; NOT_FOUND listing them.
static weft_status_t weft_hal_find_static_library(
    const weft_hal_module_config_t* config, const char* name,
    weft_kernel_library_query_fn_t* out_query) {
  *out_query = NULL;
  char names[512] = "";
  size_t used = 0;
  for (uint32_t i = 0; i < config->library_count; ++i) {
    if (strcmp(config->libraries[i].name, name) == 0) {
      *out_query = config->libraries[i].query;
      return WEFT_OK;
    }
    if (used < sizeof(names)) {
      used += (size_t)snprintf(names + used, sizeof(names) - used, "%s'%s'",
                               i ? ", " : "", config->libraries[i].name);
    }
  }
  return WEFT_STATUS(NOT_FOUND,
                     "hal.executable.static: argument 'name': the hal module "
                     "has no static library '%s' (it has %u: %s)",
                     name, config->library_count,
                     config->library_count ? names : "none");
}

// executable.static(device, name) -> (executable): a library registered
// in the module's options.
static weft_status_t weft_hal_executable_static(weft_vm_native_call_t* call) {
  static const char kFunction[] = "hal.executable.static";
  weft_hal_string_t name;
  weft_kernel_library_query_fn_t query = NULL;
  weft_executable_t* executable = NULL;
  weft_status_t status = weft_hal_arg_string(kFunction, "name",
                                             call->args[1].ref,
                                             call->allocator, &name);
  if (weft_status_is_ok(status)) {
    status = weft_hal_find_static_library(weft_hal_state(call)->config,
                                          name.text, &query);
  }
  if (weft_status_is_ok(status)) {
    status = weft_device_create_executable(
        (weft_device_t*)call->args[0].ref.object,
        weft_executable_source_cpu_static(query), &executable);
  }
  weft_hal_string_deinitialize(&name);
  weft_hal_set_result(call, 0, executable);
  return status;
}

// executable.lookup(executable, kernel_name) -> (ordinal)
static weft_status_t weft_hal_executable_lookup(weft_vm_native_call_t* call) {
  static const char kFunction[] = "hal.executable.lookup";
  weft_hal_string_t name;
  uint32_t ordinal = UINT32_MAX;
  weft_status_t status = weft_hal_arg_string(kFunction, "kernel_name",
                                             call->args[1].ref,
                                             call->allocator, &name);
  if (weft_status_is_ok(status)) {
    status = weft_executable_lookup_kernel(
        (const weft_executable_t*)call->args[0].ref.object, name.text,
        &ordinal);
  }
  weft_hal_string_deinitialize(&name);
  call->results[0].i32 = weft_status_is_ok(status) ? (int32_t)ordinal : -1;
  return status;
}

static const weft_vm_native_function_t kFunctions[] = {
    {"executable.load", "(r<hal.device>, r<bytes>) -> (r<hal.executable>)",
     weft_hal_executable_load},
    {"executable.static", "(r<hal.device>, r<bytes>) -> (r<hal.executable>)",
     weft_hal_executable_static},
    {"executable.lookup", "(r<hal.executable>, r<bytes>) -> (i32)",
     weft_hal_executable_lookup},
};

const weft_hal_function_table_t kWeftHalExecutableFunctions = {
    sizeof(kFunctions) / sizeof(kFunctions[0]), kFunctions};
