// weft hal module: the module's definition and per-context state (see
// weft/vm/hal.h).
#include <string.h>

#include "base/arguments.h"
#include "modules/hal/module_impl.h"

// Every group's functions, joined in this order into the definition.
static const weft_hal_function_table_t* const kWeftHalFunctionTables[] = {
    &kWeftHalDeviceFunctions,     &kWeftHalSemaphoreFunctions,
    &kWeftHalFenceFunctions,      &kWeftHalBufferFunctions,
    &kWeftHalQueueFunctions,      &kWeftHalExecutableFunctions,
    &kWeftHalCommandBufferFunctions, &kWeftHalFileFunctions,
};
#define WEFT_HAL_FUNCTION_TABLE_COUNT \
  (sizeof(kWeftHalFunctionTables) / sizeof(kWeftHalFunctionTables[0]))

static weft_status_t weft_hal_module_create_state(void* user_data,
                                                  weft_allocator_t allocator,
                                                  void** out_state) {
  *out_state = NULL;
  const weft_hal_module_config_t* config =
      (const weft_hal_module_config_t*)user_data;
  weft_hal_module_state_t* state = NULL;
  weft_status_t status =
      weft_allocator_malloc(allocator, sizeof(*state), (void**)&state);
  if (weft_status_is_ok(status)) {
    state->allocator = allocator;
    state->config = config;
    state->device = config->device;
    if (state->device) weft_device_retain(state->device);
    *out_state = state;
  }
  return status;
}

static void weft_hal_module_destroy_state(void* user_data, void* state) {
  weft_hal_module_state_t* hal_state = (weft_hal_module_state_t*)state;
  if (!hal_state) return;
  if (hal_state->device) weft_device_release(hal_state->device);
  weft_allocator_free(hal_state->allocator, hal_state);
}

static void weft_hal_module_destroy_config(void* user_data) {
  weft_hal_module_config_t* config = (weft_hal_module_config_t*)user_data;
  if (config->device) weft_device_release(config->device);
  weft_allocator_free(config->allocator, config);
}

// Checks |options| (NULL is valid) and measures what the config copies:
// the bytes of the library names (NULs included).
static weft_status_t weft_hal_module_check_options(
    const weft_hal_module_options_t* options, size_t* out_name_bytes) {
  *out_name_bytes = 0;
  if (!options) return WEFT_OK;
  if (options->device && options->device_string) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "weft_hal_module_create: options give both a device "
                       "and a device string ('%s'); give one",
                       options->device_string);
  }
  if (options->static_library_count && !options->static_libraries) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "weft_hal_module_create: options name %u static "
                       "libraries but static_libraries is NULL",
                       options->static_library_count);
  }
  for (uint32_t i = 0; i < options->static_library_count; ++i) {
    const weft_hal_static_library_t* library = &options->static_libraries[i];
    if (!library->name || !library->name[0] || !library->query) {
      return WEFT_STATUS(INVALID_ARGUMENT,
                         "weft_hal_module_create: static library %u has no "
                         "name or no query function",
                         i);
    }
    for (uint32_t j = 0; j < i; ++j) {
      if (strcmp(options->static_libraries[j].name, library->name) == 0) {
        return WEFT_STATUS(INVALID_ARGUMENT,
                           "weft_hal_module_create: static libraries %u and "
                           "%u are both named '%s'",
                           j, i, library->name);
      }
    }
    *out_name_bytes += strlen(library->name) + 1;
  }
  return WEFT_OK;
}

// Makes the config: the definition, the joined functions and a copy of the
// libraries, in one allocation.
static weft_status_t weft_hal_module_make_config(
    const weft_hal_module_options_t* options, size_t name_bytes,
    weft_allocator_t allocator, weft_hal_module_config_t** out_config) {
  *out_config = NULL;
  uint32_t function_count = 0;
  for (size_t i = 0; i < WEFT_HAL_FUNCTION_TABLE_COUNT; ++i) {
    function_count += kWeftHalFunctionTables[i]->count;
  }
  const uint32_t library_count = options ? options->static_library_count : 0;
  const size_t size = sizeof(weft_hal_module_config_t) +
                      function_count * sizeof(weft_vm_native_function_t) +
                      library_count * sizeof(weft_hal_static_library_t) +
                      name_bytes;
  weft_hal_module_config_t* config = NULL;
  weft_status_t status =
      weft_allocator_malloc(allocator, size, (void**)&config);
  if (!weft_status_is_ok(status)) return status;
  memset(config, 0, sizeof(*config));
  config->allocator = allocator;
  config->functions = (weft_vm_native_function_t*)(config + 1);
  config->libraries =
      (weft_hal_static_library_t*)(config->functions + function_count);
  char* names = (char*)(config->libraries + library_count);
  uint32_t next = 0;
  for (size_t i = 0; i < WEFT_HAL_FUNCTION_TABLE_COUNT; ++i) {
    const weft_hal_function_table_t* table = kWeftHalFunctionTables[i];
    memcpy(config->functions + next, table->functions,
           table->count * sizeof(*table->functions));
    next += table->count;
  }
  config->library_count = library_count;
  for (uint32_t i = 0; i < library_count; ++i) {
    const size_t length = strlen(options->static_libraries[i].name) + 1;
    memcpy(names, options->static_libraries[i].name, length);
    config->libraries[i].name = names;
    config->libraries[i].query = options->static_libraries[i].query;
    names += length;
  }
  config->def = (weft_vm_native_module_def_t){
      .name = "hal",
      .function_count = function_count,
      .functions = config->functions,
      .create_state = weft_hal_module_create_state,
      .destroy_state = weft_hal_module_destroy_state,
      .user_data = config,
      .destroy = weft_hal_module_destroy_config,
  };
  *out_config = config;
  return WEFT_OK;
}

weft_status_t weft_hal_module_create(const weft_hal_module_options_t* options,
                                     weft_allocator_t allocator,
                                     weft_vm_module_t** out_module) {
  if (out_module) *out_module = NULL;
  size_t name_bytes = 0;
  weft_hal_module_config_t* config = NULL;
  weft_status_t status = weft_arguments_require(
      __func__, "out_module", (const void* const[]){out_module}, 1);
  if (weft_status_is_ok(status)) {
    status = weft_hal_module_check_options(options, &name_bytes);
  }
  if (weft_status_is_ok(status)) {
    status = weft_hal_module_make_config(options, name_bytes, allocator,
                                         &config);
  }
  if (weft_status_is_ok(status) && options && options->device) {
    weft_device_retain(options->device);
    config->device = options->device;
  } else if (weft_status_is_ok(status) && options &&
             options->device_string) {
    status = weft_device_create(options->device_string, allocator,
                                &config->device);
    status = weft_status_annotate(
        status, "weft_hal_module_create: opening the default device '%s'",
        options->device_string);
  }
  if (weft_status_is_ok(status)) {
    // From here the module owns the config (its destroy hook frees it).
    status = weft_vm_module_create_native(allocator, &config->def, out_module);
    if (!weft_status_is_ok(status)) weft_hal_module_destroy_config(config);
  } else if (config) {
    weft_hal_module_destroy_config(config);
  }
  return status;
}
