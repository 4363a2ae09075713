// weft vulkan driver: loading the loader (see vulkan_symbols.h).
#include "drivers/vulkan/vulkan_symbols.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

// Loaded once per process: the loader stays mapped until exit (unloading
// it under live instances is never safe).
static pthread_once_t weft_vulkan_loader_once = PTHREAD_ONCE_INIT;
static weft_vulkan_loader_t weft_vulkan_loader;
// Why loading failed (immutable after the once; cloned for each caller).
static weft_status_t weft_vulkan_loader_status;

static weft_status_t weft_vulkan_loader_load(weft_vulkan_loader_t* loader) {
  const char* override = getenv(WEFT_VULKAN_LOADER_LIBRARY_ENV);
  const char* path = override && override[0] ? override : "libvulkan.so.1";
  loader->library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!loader->library) {
    const char* error = dlerror();
    return WEFT_STATUS(UNAVAILABLE,
                       "the Vulkan loader '%s' could not be loaded (%s)%s",
                       path, error ? error : "unknown error",
                       override ? "" : ": install libvulkan1 and a Vulkan "
                                       "driver (Mesa's software device: "
                                       "mesa-vulkan-drivers)");
  }
  *(void**)&loader->vkGetInstanceProcAddr =
      dlsym(loader->library, "vkGetInstanceProcAddr");
  if (!loader->vkGetInstanceProcAddr) {
    return WEFT_STATUS(UNAVAILABLE,
                       "the Vulkan loader '%s' has no vkGetInstanceProcAddr",
                       path);
  }
  weft_status_t status = WEFT_OK;
#define WEFT_VULKAN_GLOBAL_RESOLVE(name)                                   \
  if (weft_status_is_ok(status)) {                                         \
    loader->name = (PFN_##name)loader->vkGetInstanceProcAddr(NULL, #name); \
    if (!loader->name) {                                                   \
      status = WEFT_STATUS(UNAVAILABLE,                                    \
                           "the Vulkan loader '%s' has no '%s' (a loader " \
                           "older than Vulkan 1.1?)",                      \
                           path, #name);                                   \
    }                                                                      \
  }
  WEFT_VULKAN_GLOBAL_SYMBOLS(WEFT_VULKAN_GLOBAL_RESOLVE)
#undef WEFT_VULKAN_GLOBAL_RESOLVE
  if (weft_status_is_ok(status)) {
    status = weft_vulkan_result_to_status(
        loader->vkEnumerateInstanceVersion(&loader->api_version),
        "vkEnumerateInstanceVersion");
  }
  if (weft_status_is_ok(status) &&
      loader->api_version < VK_API_VERSION_1_2) {
    status = WEFT_STATUS(UNAVAILABLE,
                         "the Vulkan loader '%s' offers Vulkan %u.%u; weft "
                         "needs 1.2 (timeline semaphores)",
                         path, VK_API_VERSION_MAJOR(loader->api_version),
                         VK_API_VERSION_MINOR(loader->api_version));
  }
  return status;
}

static void weft_vulkan_loader_load_once(void) {
  weft_vulkan_loader_status = weft_vulkan_loader_load(&weft_vulkan_loader);
}

weft_status_t weft_vulkan_loader_get(const weft_vulkan_loader_t** out_loader) {
  *out_loader = NULL;
  pthread_once(&weft_vulkan_loader_once, weft_vulkan_loader_load_once);
  if (!weft_status_is_ok(weft_vulkan_loader_status)) {
    return weft_status_clone(weft_vulkan_loader_status);
  }
  *out_loader = &weft_vulkan_loader;
  return WEFT_OK;
}

weft_status_t weft_vulkan_symbols_load_instance(
    const weft_vulkan_loader_t* loader, VkInstance instance,
    weft_vulkan_symbols_t* symbols) {
  weft_status_t status = WEFT_OK;
#define WEFT_VULKAN_INSTANCE_RESOLVE(name)                                  \
  if (weft_status_is_ok(status)) {                                          \
    symbols->name =                                                         \
        (PFN_##name)loader->vkGetInstanceProcAddr(instance, #name);         \
    if (!symbols->name) {                                                   \
      status = WEFT_STATUS(UNAVAILABLE,                                     \
                           "the Vulkan instance has no '%s'", #name);       \
    }                                                                       \
  }
  WEFT_VULKAN_INSTANCE_SYMBOLS(WEFT_VULKAN_INSTANCE_RESOLVE)
#undef WEFT_VULKAN_INSTANCE_RESOLVE
#define WEFT_VULKAN_OPTIONAL_RESOLVE(name) \
  symbols->name = (PFN_##name)loader->vkGetInstanceProcAddr(instance, #name);
  WEFT_VULKAN_OPTIONAL_INSTANCE_SYMBOLS(WEFT_VULKAN_OPTIONAL_RESOLVE)
#undef WEFT_VULKAN_OPTIONAL_RESOLVE
  return status;
}

weft_status_t weft_vulkan_symbols_load_device(VkDevice device,
                                              weft_vulkan_symbols_t* symbols) {
  weft_status_t status = WEFT_OK;
#define WEFT_VULKAN_DEVICE_RESOLVE(name)                                    \
  if (weft_status_is_ok(status)) {                                          \
    symbols->name = (PFN_##name)symbols->vkGetDeviceProcAddr(device, #name); \
    if (!symbols->name) {                                                   \
      status = WEFT_STATUS(UNAVAILABLE, "the Vulkan device has no '%s'",    \
                           #name);                                          \
    }                                                                       \
  }
  WEFT_VULKAN_DEVICE_SYMBOLS(WEFT_VULKAN_DEVICE_RESOLVE)
#undef WEFT_VULKAN_DEVICE_RESOLVE
#define WEFT_VULKAN_OPTIONAL_DEVICE_RESOLVE(name) \
  symbols->name = (PFN_##name)symbols->vkGetDeviceProcAddr(device, #name);
  WEFT_VULKAN_OPTIONAL_DEVICE_SYMBOLS(WEFT_VULKAN_OPTIONAL_DEVICE_RESOLVE)
#undef WEFT_VULKAN_OPTIONAL_DEVICE_RESOLVE
  return status;
}

const char* weft_vulkan_result_name(VkResult result) {
  switch (result) {
#define WEFT_VULKAN_RESULT_CASE(name) \
  case name:                          \
    return #name;
    WEFT_VULKAN_RESULT_CASE(VK_SUCCESS)
    WEFT_VULKAN_RESULT_CASE(VK_NOT_READY)
    WEFT_VULKAN_RESULT_CASE(VK_TIMEOUT)
    WEFT_VULKAN_RESULT_CASE(VK_EVENT_SET)
    WEFT_VULKAN_RESULT_CASE(VK_EVENT_RESET)
    WEFT_VULKAN_RESULT_CASE(VK_INCOMPLETE)
    WEFT_VULKAN_RESULT_CASE(VK_ERROR_OUT_OF_HOST_MEMORY)
    WEFT_VULKAN_RESULT_CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    WEFT_VULKAN_RESULT_CASE(VK_ERROR_INITIALIZATION_FAILED)
    WEFT_VULKAN_RESULT_CASE(VK_ERROR_DEVICE_LOST)
    WEFT_VULKAN_RESULT_CASE(VK_ERROR_MEMORY_MAP_FAILED)
    WEFT_VULKAN_RESULT_CASE(VK_ERROR_LAYER_NOT_PRESENT)
    WEFT_VULKAN_RESULT_CASE(VK_ERROR_EXTENSION_NOT_PRESENT)
    WEFT_VULKAN_RESULT_CASE(VK_ERROR_FEATURE_NOT_PRESENT)
    WEFT_VULKAN_RESULT_CASE(VK_ERROR_INCOMPATIBLE_DRIVER)
    WEFT_VULKAN_RESULT_CASE(VK_ERROR_TOO_MANY_OBJECTS)
    WEFT_VULKAN_RESULT_CASE(VK_ERROR_FORMAT_NOT_SUPPORTED)
    WEFT_VULKAN_RESULT_CASE(VK_ERROR_FRAGMENTED_POOL)
    WEFT_VULKAN_RESULT_CASE(VK_ERROR_UNKNOWN)
    WEFT_VULKAN_RESULT_CASE(VK_ERROR_OUT_OF_POOL_MEMORY)
    WEFT_VULKAN_RESULT_CASE(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    WEFT_VULKAN_RESULT_CASE(VK_ERROR_FRAGMENTATION)
    WEFT_VULKAN_RESULT_CASE(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
#undef WEFT_VULKAN_RESULT_CASE
    default:
      break;
  }
  // Unknown codes: a per-thread buffer keeps the name valid for the
  // message it goes into.
  static _Thread_local char unknown[32];
  snprintf(unknown, sizeof(unknown), "VkResult %d", (int)result);
  return unknown;
}

static weft_status_code_t weft_vulkan_result_code(VkResult result) {
  switch (result) {
    case VK_ERROR_OUT_OF_HOST_MEMORY:
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
    case VK_ERROR_OUT_OF_POOL_MEMORY:
    case VK_ERROR_FRAGMENTED_POOL:
    case VK_ERROR_FRAGMENTATION:
    case VK_ERROR_TOO_MANY_OBJECTS:
      return WEFT_STATUS_RESOURCE_EXHAUSTED;
    case VK_ERROR_INITIALIZATION_FAILED:
    case VK_ERROR_DEVICE_LOST:
    case VK_ERROR_INCOMPATIBLE_DRIVER:
    case VK_ERROR_LAYER_NOT_PRESENT:
    case VK_ERROR_EXTENSION_NOT_PRESENT:
    case VK_ERROR_FEATURE_NOT_PRESENT:
      return WEFT_STATUS_UNAVAILABLE;
    case VK_TIMEOUT:
    case VK_NOT_READY:
      return WEFT_STATUS_DEADLINE_EXCEEDED;
    case VK_ERROR_FORMAT_NOT_SUPPORTED:
      return WEFT_STATUS_UNIMPLEMENTED;
    default:
      return WEFT_STATUS_INTERNAL;
  }
}

weft_status_t weft_vulkan_result_to_status(VkResult result, const char* call) {
  if (result == VK_SUCCESS) return WEFT_OK;
  return weft_status_make_(__FILE__, __LINE__, weft_vulkan_result_code(result),
                           "%s failed: %s", call,
                           weft_vulkan_result_name(result));
}
