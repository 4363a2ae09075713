// weft vulkan driver: the Vulkan entry points weft uses, resolved at run
// time.
//
// The driver never links the loader: it dlopens libvulkan.so.1 (or the
// library WEFT_VULKAN_LOADER_LIBRARY names) once per process, takes
// vkGetInstanceProcAddr from it, and resolves everything else through the
// loader's own lookups: the instance-level entry points per instance and
// the device-level ones per VkDevice (which skips the loader's dispatch).
// The lists below are the whole of weft's dependence on the Vulkan API.
#ifndef WEFT_DRIVERS_VULKAN_VULKAN_SYMBOLS_H_
#define WEFT_DRIVERS_VULKAN_VULKAN_SYMBOLS_H_

#define VK_NO_PROTOTYPES 1
#include <vulkan/vulkan_core.h>

#include "weft/status.h"

// Names the loader library to dlopen instead of libvulkan.so.1.
#define WEFT_VULKAN_LOADER_LIBRARY_ENV "WEFT_VULKAN_LOADER_LIBRARY"

// X(name): entry points resolved with a NULL instance.
#define WEFT_VULKAN_GLOBAL_SYMBOLS(X)     \
  X(vkCreateInstance)                     \
  X(vkEnumerateInstanceVersion)           \
  X(vkEnumerateInstanceLayerProperties)   \
  X(vkEnumerateInstanceExtensionProperties)

// X(name): entry points resolved per instance.
#define WEFT_VULKAN_INSTANCE_SYMBOLS(X)        \
  X(vkDestroyInstance)                         \
  X(vkEnumeratePhysicalDevices)                \
  X(vkGetPhysicalDeviceProperties)             \
  X(vkGetPhysicalDeviceProperties2)            \
  X(vkGetPhysicalDeviceFeatures2)              \
  X(vkGetPhysicalDeviceQueueFamilyProperties)  \
  X(vkGetPhysicalDeviceMemoryProperties)       \
  X(vkEnumerateDeviceExtensionProperties)      \
  X(vkCreateDevice)                            \
  X(vkGetDeviceProcAddr)

// X(name): instance entry points of extensions, NULL when absent.
#define WEFT_VULKAN_OPTIONAL_INSTANCE_SYMBOLS(X) \
  X(vkCreateDebugUtilsMessengerEXT)              \
  X(vkDestroyDebugUtilsMessengerEXT)

// X(name): entry points resolved per device.
#define WEFT_VULKAN_DEVICE_SYMBOLS(X)     \
  X(vkDestroyDevice)                      \
  X(vkGetDeviceQueue)                     \
  X(vkDeviceWaitIdle)                     \
  X(vkQueueSubmit)                        \
  X(vkQueueWaitIdle)                      \
  X(vkCreateSemaphore)                    \
  X(vkDestroySemaphore)                   \
  X(vkGetSemaphoreCounterValue)           \
  X(vkSignalSemaphore)                    \
  X(vkWaitSemaphores)                     \
  X(vkCreateBuffer)                       \
  X(vkDestroyBuffer)                      \
  X(vkGetBufferMemoryRequirements)        \
  X(vkAllocateMemory)                     \
  X(vkFreeMemory)                         \
  X(vkBindBufferMemory)                   \
  X(vkMapMemory)                          \
  X(vkUnmapMemory)                        \
  X(vkCreateCommandPool)                  \
  X(vkDestroyCommandPool)                 \
  X(vkAllocateCommandBuffers)             \
  X(vkFreeCommandBuffers)                 \
  X(vkResetCommandBuffer)                 \
  X(vkBeginCommandBuffer)                 \
  X(vkEndCommandBuffer)                   \
  X(vkCmdFillBuffer)                      \
  X(vkCmdUpdateBuffer)                    \
  X(vkCmdCopyBuffer)                      \
  X(vkCmdPipelineBarrier)                 \
  X(vkCmdBindPipeline)                    \
  X(vkCmdPushConstants)                   \
  X(vkCmdDispatch)                        \
  X(vkCmdDispatchBase)                    \
  X(vkCmdExecuteCommands)                 \
  X(vkCreateShaderModule)                 \
  X(vkDestroyShaderModule)                \
  X(vkCreateDescriptorSetLayout)          \
  X(vkDestroyDescriptorSetLayout)         \
  X(vkCreatePipelineLayout)               \
  X(vkDestroyPipelineLayout)              \
  X(vkCreateComputePipelines)             \
  X(vkDestroyPipeline)

// X(name): device entry points of extensions, NULL when the extension is
// not enabled (VK_KHR_push_descriptor: dispatches).
#define WEFT_VULKAN_OPTIONAL_DEVICE_SYMBOLS(X) X(vkCmdPushDescriptorSetKHR)

#define WEFT_VULKAN_SYMBOL_MEMBER_(name) PFN_##name name;

// The loader's global entry points (process-wide, loaded once).
typedef struct weft_vulkan_loader_t {
  void* library;
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr;
  WEFT_VULKAN_GLOBAL_SYMBOLS(WEFT_VULKAN_SYMBOL_MEMBER_)
  // The loader's version (vkEnumerateInstanceVersion).
  uint32_t api_version;
} weft_vulkan_loader_t;

// One instance's entry points, and then one device's.
typedef struct weft_vulkan_symbols_t {
  WEFT_VULKAN_INSTANCE_SYMBOLS(WEFT_VULKAN_SYMBOL_MEMBER_)
  WEFT_VULKAN_OPTIONAL_INSTANCE_SYMBOLS(WEFT_VULKAN_SYMBOL_MEMBER_)
  WEFT_VULKAN_DEVICE_SYMBOLS(WEFT_VULKAN_SYMBOL_MEMBER_)
  WEFT_VULKAN_OPTIONAL_DEVICE_SYMBOLS(WEFT_VULKAN_SYMBOL_MEMBER_)
} weft_vulkan_symbols_t;

// Loads the loader once per process: UNAVAILABLE naming the library and
// dlopen's reason when it is missing, or when it offers no Vulkan 1.2.
weft_status_t weft_vulkan_loader_get(const weft_vulkan_loader_t** out_loader);

// Resolves |instance|'s entry points into |symbols| (UNAVAILABLE naming a
// missing one).
weft_status_t weft_vulkan_symbols_load_instance(
    const weft_vulkan_loader_t* loader, VkInstance instance,
    weft_vulkan_symbols_t* symbols);

// Resolves |device|'s entry points into |symbols|.
weft_status_t weft_vulkan_symbols_load_device(VkDevice device,
                                              weft_vulkan_symbols_t* symbols);

// "VK_ERROR_OUT_OF_DEVICE_MEMORY", or "VkResult N" for an unknown code.
const char* weft_vulkan_result_name(VkResult result);

// OK for VK_SUCCESS; otherwise a status whose code follows |result|
// (RESOURCE_EXHAUSTED for out-of-memory, UNAVAILABLE for a lost device or
// a missing driver, ...) and whose message names |call| and the result.
weft_status_t weft_vulkan_result_to_status(VkResult result, const char* call);

// Calls the Vulkan function through |symbols| and translates its result,
// naming the call as written: WEFT_VK_CALL(symbols, vkFoo(device, ...)).
#define WEFT_VK_CALL(symbols, call) \
  weft_vulkan_result_to_status((symbols)->call, #call)

#endif  // WEFT_DRIVERS_VULKAN_VULKAN_SYMBOLS_H_
