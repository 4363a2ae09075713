// weft vulkan driver: instance and device (see vulkan_context.h).
#include "drivers/vulkan/vulkan_context.h"

#include <ctype.h>
#include <pthread.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define WEFT_VULKAN_VALIDATION_LAYER "VK_LAYER_KHRONOS_validation"

// One instance per process for each validation setting, made at first use
// and kept until exit, like the loader itself: an instance is heavy, every
// device of the process can share it, and the loader unloads the drivers
// when the last instance goes, which would strand what a driver keeps for
// the process (Mesa's software device keeps some: sanitizers then see it
// as lost).
typedef struct weft_vulkan_shared_instance_t {
  VkInstance instance;
  VkDebugUtilsMessengerEXT messenger;
  weft_vulkan_symbols_t symbols;  // the instance-level entry points
  weft_atomic_uint32_t message_count;
} weft_vulkan_shared_instance_t;

static pthread_mutex_t weft_vulkan_instance_mutex = PTHREAD_MUTEX_INITIALIZER;
static weft_vulkan_shared_instance_t weft_vulkan_instances[2];

static VKAPI_ATTR VkBool32 VKAPI_CALL weft_vulkan_debug_callback(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity,
    VkDebugUtilsMessageTypeFlagsEXT types,
    const VkDebugUtilsMessengerCallbackDataEXT* data, void* user_data) {
  (void)types;
  weft_vulkan_shared_instance_t* shared =
      (weft_vulkan_shared_instance_t*)user_data;
  weft_atomic_fetch_add(&shared->message_count, 1u, memory_order_relaxed);
  fprintf(stderr, "weft vulkan validation %s: %s\n",
          (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT)
              ? "error"
              : "warning",
          data && data->pMessage ? data->pMessage : "(no message)");
  const char* fatal = getenv(WEFT_VULKAN_VALIDATION_FATAL_ENV);
  if (fatal && strcmp(fatal, "1") == 0) {
    fprintf(stderr, "weft vulkan: %s=1: aborting at the first validation "
                    "message\n",
            WEFT_VULKAN_VALIDATION_FATAL_ENV);
    fflush(stderr);
    abort();
  }
  return VK_FALSE;
}

static bool weft_vulkan_name_contains(const char* name, const char* part) {
  const size_t length = strlen(part);
  for (const char* at = name; *at; ++at) {
    size_t i = 0;
    while (i < length && at[i] &&
           tolower((unsigned char)at[i]) == tolower((unsigned char)part[i])) {
      ++i;
    }
    if (i == length) return true;
  }
  return length == 0;
}

static weft_status_t weft_vulkan_shared_instance_create(
    const weft_vulkan_loader_t* loader, bool validation,
    weft_vulkan_shared_instance_t* shared) {
  weft_status_t status = WEFT_OK;
  if (validation) {
    uint32_t count = 0;
    status = WEFT_VK_CALL(loader,
                          vkEnumerateInstanceLayerProperties(&count, NULL));
    VkLayerProperties layers[64];
    if (count > 64) count = 64;
    if (weft_status_is_ok(status)) {
      VkResult result = loader->vkEnumerateInstanceLayerProperties(&count,
                                                                   layers);
      if (result != VK_INCOMPLETE) {
        status = weft_vulkan_result_to_status(
            result, "vkEnumerateInstanceLayerProperties");
      }
    }
    bool found = false;
    for (uint32_t i = 0; weft_status_is_ok(status) && i < count; ++i) {
      found |= strcmp(layers[i].layerName, WEFT_VULKAN_VALIDATION_LAYER) == 0;
    }
    if (weft_status_is_ok(status) && !found) {
      status = WEFT_STATUS(UNAVAILABLE,
                           "validation was asked for but the layer %s is not "
                           "installed (Debian: vulkan-validationlayers)",
                           WEFT_VULKAN_VALIDATION_LAYER);
    }
  }
  if (!weft_status_is_ok(status)) return status;
  const uint32_t api_version = loader->api_version >= VK_API_VERSION_1_3
                                   ? VK_API_VERSION_1_3
                                   : VK_API_VERSION_1_2;
  const VkApplicationInfo application = {
      .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
      .pApplicationName = "weft",
      .pEngineName = "weft",
      .apiVersion = api_version,
  };
  const char* layers[] = {WEFT_VULKAN_VALIDATION_LAYER};
  const char* extensions[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
  const VkInstanceCreateInfo create_info = {
      .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
      .pApplicationInfo = &application,
      .enabledLayerCount = validation ? 1u : 0u,
      .ppEnabledLayerNames = layers,
      .enabledExtensionCount = validation ? 1u : 0u,
      .ppEnabledExtensionNames = extensions,
  };
  status = WEFT_VK_CALL(loader, vkCreateInstance(&create_info, NULL,
                                                 &shared->instance));
  if (weft_status_is_ok(status)) {
    status = weft_vulkan_symbols_load_instance(loader, shared->instance,
                                               &shared->symbols);
  }
  if (weft_status_is_ok(status) && validation &&
      shared->symbols.vkCreateDebugUtilsMessengerEXT) {
    const VkDebugUtilsMessengerCreateInfoEXT messenger_info = {
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
        .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                           VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
        .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT,
        .pfnUserCallback = weft_vulkan_debug_callback,
        .pUserData = shared,
    };
    status = WEFT_VK_CALL(
        &shared->symbols,
        vkCreateDebugUtilsMessengerEXT(shared->instance, &messenger_info,
                                       NULL, &shared->messenger));
  }
  if (!weft_status_is_ok(status) && shared->instance) {
    shared->symbols.vkDestroyInstance(shared->instance, NULL);
    shared->instance = VK_NULL_HANDLE;
  }
  return status;
}

// The process's instance for |context->validation|, made at first use.
static weft_status_t weft_vulkan_context_create_instance(
    weft_vulkan_context_t* context) {
  weft_vulkan_shared_instance_t* shared =
      &weft_vulkan_instances[context->validation ? 1 : 0];
  weft_status_t status = WEFT_OK;
  pthread_mutex_lock(&weft_vulkan_instance_mutex);
  if (!shared->instance) {
    status = weft_vulkan_shared_instance_create(context->loader,
                                                context->validation, shared);
  }
  if (weft_status_is_ok(status)) {
    context->instance = shared->instance;
    context->vk = shared->symbols;
    context->validation_message_count = &shared->message_count;
  }
  pthread_mutex_unlock(&weft_vulkan_instance_mutex);
  return status;
}

// Picks the physical device and reads what weft needs of it.
static weft_status_t weft_vulkan_context_pick_device(
    weft_vulkan_context_t* context,
    const weft_vulkan_context_options_t* options) {
  weft_vulkan_symbols_t* vk = &context->vk;
  uint32_t count = 0;
  weft_status_t status = WEFT_VK_CALL(
      vk, vkEnumeratePhysicalDevices(context->instance, &count, NULL));
  VkPhysicalDevice devices[32];
  if (count > 32) count = 32;
  if (weft_status_is_ok(status) && count > 0) {
    VkResult result =
        vk->vkEnumeratePhysicalDevices(context->instance, &count, devices);
    if (result != VK_INCOMPLETE) {
      status = weft_vulkan_result_to_status(result,
                                            "vkEnumeratePhysicalDevices");
    }
  }
  if (!weft_status_is_ok(status)) return status;
  if (count == 0) {
    return WEFT_STATUS(UNAVAILABLE,
                       "the Vulkan loader found no physical device (no "
                       "Vulkan driver installed? Mesa's software device is "
                       "Debian's mesa-vulkan-drivers)");
  }
  uint32_t index = UINT32_MAX;
  if (options->device_name) {
    for (uint32_t i = 0; i < count && index == UINT32_MAX; ++i) {
      VkPhysicalDeviceProperties properties;
      vk->vkGetPhysicalDeviceProperties(devices[i], &properties);
      if (weft_vulkan_name_contains(properties.deviceName,
                                    options->device_name)) {
        index = i;
      }
    }
    if (index == UINT32_MAX) {
      return WEFT_STATUS(NOT_FOUND,
                         "no Vulkan physical device's name contains '%s' "
                         "(this machine has %u)",
                         options->device_name, count);
    }
  } else if (options->device_index >= count) {
    return WEFT_STATUS(NOT_FOUND,
                       "there is no Vulkan physical device %u (this machine "
                       "has %u)",
                       options->device_index, count);
  } else {
    index = options->device_index;
  }
  context->physical_device = devices[index];
  context->physical_device_index = index;

  VkPhysicalDeviceSubgroupProperties subgroup = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES,
  };
  VkPhysicalDeviceTimelineSemaphoreProperties timeline = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_PROPERTIES,
      .pNext = &subgroup,
  };
  VkPhysicalDeviceProperties2 properties2 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
      .pNext = &timeline,
  };
  vk->vkGetPhysicalDeviceProperties2(context->physical_device, &properties2);
  context->properties = properties2.properties;
  context->max_timeline_difference =
      timeline.maxTimelineSemaphoreValueDifference;
  // A smaller limit for tests: Mesa's and NVIDIA's devices allow any step,
  // and some drivers only 2^31 - 1.
  const char* difference = getenv(WEFT_VULKAN_MAX_TIMELINE_DIFFERENCE_ENV);
  if (difference && difference[0]) {
    char* end = NULL;
    const unsigned long long limit = strtoull(difference, &end, 10);
    if (*end == '\0' && limit > 0 && limit < context->max_timeline_difference) {
      context->max_timeline_difference = limit;
    }
  }
  context->subgroup_size = subgroup.subgroupSize;
  const char* name = context->properties.deviceName;
  if (context->properties.apiVersion < VK_API_VERSION_1_2) {
    return WEFT_STATUS(UNAVAILABLE,
                       "Vulkan device '%s' supports Vulkan %u.%u; weft needs "
                       "1.2 (timeline semaphores)",
                       name, VK_API_VERSION_MAJOR(context->properties.apiVersion),
                       VK_API_VERSION_MINOR(context->properties.apiVersion));
  }
  VkPhysicalDeviceTimelineSemaphoreFeatures timeline_features = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES,
  };
  VkPhysicalDeviceFeatures2 features2 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
      .pNext = &timeline_features,
  };
  vk->vkGetPhysicalDeviceFeatures2(context->physical_device, &features2);
  if (!timeline_features.timelineSemaphore) {
    return WEFT_STATUS(UNAVAILABLE,
                       "Vulkan device '%s' has no timelineSemaphore feature",
                       name);
  }

  uint32_t family_count = 0;
  vk->vkGetPhysicalDeviceQueueFamilyProperties(context->physical_device,
                                               &family_count, NULL);
  if (family_count > 16) family_count = 16;
  vk->vkGetPhysicalDeviceQueueFamilyProperties(
      context->physical_device, &family_count, context->queue_families);
  context->queue_family_count = family_count;
  context->queue_family_index = UINT32_MAX;
  for (uint32_t i = 0; i < family_count; ++i) {
    if ((context->queue_families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) &&
        context->queue_family_index == UINT32_MAX) {
      context->queue_family_index = i;
    }
  }
  if (context->queue_family_index == UINT32_MAX) {
    return WEFT_STATUS(UNAVAILABLE,
                       "Vulkan device '%s' has no queue family with compute",
                       name);
  }

  vk->vkGetPhysicalDeviceMemoryProperties(context->physical_device,
                                          &context->memory_properties);
  context->device_local_type = UINT32_MAX;
  context->host_visible_type = UINT32_MAX;
  const VkMemoryPropertyFlags host_flags =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
      VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  for (uint32_t i = 0; i < context->memory_properties.memoryTypeCount; ++i) {
    const VkMemoryPropertyFlags flags =
        context->memory_properties.memoryTypes[i].propertyFlags;
    if (context->device_local_type == UINT32_MAX &&
        (flags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)) {
      context->device_local_type = i;
    }
    if (context->host_visible_type == UINT32_MAX &&
        (flags & host_flags) == host_flags) {
      context->host_visible_type = i;
    }
  }
  if (context->host_visible_type == UINT32_MAX) {
    return WEFT_STATUS(UNAVAILABLE,
                       "Vulkan device '%s' has no host-visible coherent "
                       "memory type",
                       name);
  }
  if (context->device_local_type == UINT32_MAX) {
    context->device_local_type = context->host_visible_type;
  }
  return WEFT_OK;
}

static weft_status_t weft_vulkan_context_create_device(
    weft_vulkan_context_t* context) {
  const float priorities[16] = {1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f,
                                 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f,
                                 1.0f, 1.0f, 1.0f, 1.0f};
  const VkDeviceQueueCreateInfo queue_info = {
      .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
      .queueFamilyIndex = context->queue_family_index,
      .queueCount = context->queue_count,
      .pQueuePriorities = priorities,
  };
  VkPhysicalDeviceTimelineSemaphoreFeatures timeline_features = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES,
      .timelineSemaphore = VK_TRUE,
  };
  // VK_KHR_push_descriptor when the device has it: a dispatch's buffers
  // are pushed into its command buffer, no descriptor pool to manage.
  // Without it the device runs everything but dispatches.
  const char* extensions[1];
  uint32_t extension_count = 0;
  VkExtensionProperties available[256];
  uint32_t available_count = 256;
  const VkResult result = context->vk.vkEnumerateDeviceExtensionProperties(
      context->physical_device, NULL, &available_count, available);
  if (result == VK_SUCCESS || result == VK_INCOMPLETE) {
    for (uint32_t i = 0; i < available_count; ++i) {
      if (strcmp(available[i].extensionName,
                 VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME) == 0) {
        extensions[extension_count++] = VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME;
        context->has_push_descriptor = true;
      }
    }
  }
  if (context->has_push_descriptor) {
    VkPhysicalDevicePushDescriptorPropertiesKHR push = {
        .sType =
            VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PUSH_DESCRIPTOR_PROPERTIES_KHR,
    };
    VkPhysicalDeviceProperties2 properties2 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
        .pNext = &push,
    };
    context->vk.vkGetPhysicalDeviceProperties2(context->physical_device,
                                               &properties2);
    context->max_push_descriptors = push.maxPushDescriptors;
  }
  const VkDeviceCreateInfo create_info = {
      .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
      .pNext = &timeline_features,
      .queueCreateInfoCount = 1,
      .pQueueCreateInfos = &queue_info,
      .enabledExtensionCount = extension_count,
      .ppEnabledExtensionNames = extensions,
  };
  weft_status_t status = WEFT_VK_CALL(
      &context->vk, vkCreateDevice(context->physical_device, &create_info,
                                   NULL, &context->device));
  if (weft_status_is_ok(status)) {
    status = weft_vulkan_symbols_load_device(context->device, &context->vk);
  }
  return status;
}

static void weft_vulkan_context_destroy(weft_vulkan_context_t* context) {
  weft_vulkan_symbols_t* vk = &context->vk;
  // The instance is the process's (weft_vulkan_instances).
  if (context->device) vk->vkDestroyDevice(context->device, NULL);
  weft_allocator_free(context->allocator, context);
}

weft_status_t weft_vulkan_context_create(
    const weft_vulkan_context_options_t* options, weft_allocator_t allocator,
    weft_vulkan_context_t** out_context) {
  *out_context = NULL;
  const weft_vulkan_loader_t* loader = NULL;
  weft_status_t status = weft_vulkan_loader_get(&loader);
  weft_vulkan_context_t* context = NULL;
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc(allocator, sizeof(*context),
                                   (void**)&context);
  }
  if (!weft_status_is_ok(status)) return status;
  weft_ref_count_init(&context->ref_count);
  context->allocator = allocator;
  context->loader = loader;
  context->validation = options->validation;
  status = weft_vulkan_context_create_instance(context);
  if (weft_status_is_ok(status)) {
    status = weft_vulkan_context_pick_device(context, options);
  }
  if (weft_status_is_ok(status)) {
    // As many Vulkan queues as asked for and the family has (at most 16).
    uint32_t queue_count =
        context->queue_families[context->queue_family_index].queueCount;
    if (queue_count > options->queue_count) queue_count = options->queue_count;
    if (queue_count > 16) queue_count = 16;
    context->queue_count = queue_count ? queue_count : 1;
    status = weft_vulkan_context_create_device(context);
  }
  if (!weft_status_is_ok(status)) {
    weft_vulkan_context_destroy(context);
    return status;
  }
  *out_context = context;
  return WEFT_OK;
}

void weft_vulkan_context_retain(weft_vulkan_context_t* context) {
  weft_ref_count_inc(&context->ref_count);
}

void weft_vulkan_context_release(weft_vulkan_context_t* context) {
  if (context && weft_ref_count_dec(&context->ref_count)) {
    weft_vulkan_context_destroy(context);
  }
}

void weft_vulkan_context_describe(const weft_vulkan_context_t* context,
                                  FILE* stream) {
  const VkPhysicalDeviceProperties* properties = &context->properties;
  const uint32_t loader_version = context->loader->api_version;
  fprintf(stream, "  physical device %u: %s (Vulkan %u.%u.%u, driver %#x)\n",
          context->physical_device_index, properties->deviceName,
          VK_API_VERSION_MAJOR(properties->apiVersion),
          VK_API_VERSION_MINOR(properties->apiVersion),
          VK_API_VERSION_PATCH(properties->apiVersion),
          properties->driverVersion);
  fprintf(stream, "  loader: Vulkan %u.%u.%u; validation %s\n",
          VK_API_VERSION_MAJOR(loader_version),
          VK_API_VERSION_MINOR(loader_version),
          VK_API_VERSION_PATCH(loader_version),
          context->validation ? "on" : "off");
  fprintf(stream,
          "  maxTimelineSemaphoreValueDifference %" PRIu64
          ", subgroup size %u, maxComputeWorkGroupSize %ux%ux%u, "
          "maxPushConstantsSize %u\n",
          context->max_timeline_difference, context->subgroup_size,
          properties->limits.maxComputeWorkGroupSize[0],
          properties->limits.maxComputeWorkGroupSize[1],
          properties->limits.maxComputeWorkGroupSize[2],
          properties->limits.maxPushConstantsSize);
  for (uint32_t i = 0; i < context->queue_family_count; ++i) {
    const VkQueueFlags flags = context->queue_families[i].queueFlags;
    fprintf(stream, "  queue family %u: %u queue%s,%s%s%s%s\n", i,
            context->queue_families[i].queueCount,
            context->queue_families[i].queueCount == 1 ? "" : "s",
            (flags & VK_QUEUE_GRAPHICS_BIT) ? " graphics" : "",
            (flags & VK_QUEUE_COMPUTE_BIT) ? " compute" : "",
            (flags & VK_QUEUE_TRANSFER_BIT) ? " transfer" : "",
            i == context->queue_family_index ? " (weft's)" : "");
  }
  const VkPhysicalDeviceMemoryProperties* memory = &context->memory_properties;
  for (uint32_t i = 0; i < memory->memoryTypeCount; ++i) {
    const VkMemoryPropertyFlags flags = memory->memoryTypes[i].propertyFlags;
    const uint32_t heap = memory->memoryTypes[i].heapIndex;
    fprintf(stream, "  memory type %u: heap %u (%" PRIu64 " MiB)%s%s%s%s%s\n",
            i, heap, (uint64_t)(memory->memoryHeaps[heap].size >> 20),
            (flags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) ? " device-local"
                                                          : "",
            (flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) ? " host-visible"
                                                          : "",
            (flags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) ? " coherent" : "",
            (flags & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) ? " cached" : "",
            i == context->device_local_type    ? " (weft's device buffers)"
            : i == context->host_visible_type ? " (weft's mapped buffers)"
                                              : "");
  }
}

weft_status_t weft_vulkan_context_allocate_buffer(
    weft_vulkan_context_t* context, VkDeviceSize size, uint32_t type_index,
    VkBuffer* out_buffer, VkDeviceMemory* out_memory) {
  *out_buffer = VK_NULL_HANDLE;
  *out_memory = VK_NULL_HANDLE;
  weft_vulkan_symbols_t* vk = &context->vk;
  // Whole 4-byte words, so that vkCmdFillBuffer(VK_WHOLE_SIZE) reaches
  // every byte (it rounds down), and so does zeroing a new buffer.
  const VkBufferCreateInfo buffer_info = {
      .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
      .size = (size + 3) & ~(VkDeviceSize)3,
      .usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
               VK_BUFFER_USAGE_TRANSFER_DST_BIT |
               VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
      .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
  };
  VkBuffer buffer = VK_NULL_HANDLE;
  weft_status_t status = WEFT_VK_CALL(
      vk, vkCreateBuffer(context->device, &buffer_info, NULL, &buffer));
  if (!weft_status_is_ok(status)) return status;
  VkMemoryRequirements requirements;
  vk->vkGetBufferMemoryRequirements(context->device, buffer, &requirements);
  // The preferred type when the buffer takes it; otherwise the first
  // allowed type with the same property flags.
  uint32_t chosen = UINT32_MAX;
  const VkMemoryPropertyFlags wanted =
      context->memory_properties.memoryTypes[type_index].propertyFlags;
  if (requirements.memoryTypeBits & (1u << type_index)) {
    chosen = type_index;
  }
  for (uint32_t i = 0;
       chosen == UINT32_MAX && i < context->memory_properties.memoryTypeCount;
       ++i) {
    if ((requirements.memoryTypeBits & (1u << i)) &&
        (context->memory_properties.memoryTypes[i].propertyFlags & wanted) ==
            wanted) {
      chosen = i;
    }
  }
  if (chosen == UINT32_MAX) {
    status = WEFT_STATUS(UNAVAILABLE,
                         "no memory type of '%s' with flags %#x takes a "
                         "storage buffer",
                         context->properties.deviceName, (unsigned)wanted);
  }
  VkDeviceMemory memory = VK_NULL_HANDLE;
  if (weft_status_is_ok(status)) {
    const VkMemoryAllocateInfo allocate_info = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
        .allocationSize = requirements.size,
        .memoryTypeIndex = chosen,
    };
    status = WEFT_VK_CALL(vk, vkAllocateMemory(context->device, &allocate_info,
                                               NULL, &memory));
    if (!weft_status_is_ok(status)) {
      status = weft_status_annotate(status, "allocating %" PRIu64 " bytes",
                                    (uint64_t)requirements.size);
    }
  }
  if (weft_status_is_ok(status)) {
    status = WEFT_VK_CALL(vk,
                          vkBindBufferMemory(context->device, buffer, memory, 0));
  }
  if (!weft_status_is_ok(status)) {
    if (memory) vk->vkFreeMemory(context->device, memory, NULL);
    vk->vkDestroyBuffer(context->device, buffer, NULL);
    return status;
  }
  *out_buffer = buffer;
  *out_memory = memory;
  return WEFT_OK;
}

weft_status_t weft_vulkan_context_create_timeline(
    weft_vulkan_context_t* context, uint64_t initial_value,
    VkSemaphore* out_timeline) {
  const VkSemaphoreTypeCreateInfo type_info = {
      .sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
      .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE,
      .initialValue = initial_value,
  };
  const VkSemaphoreCreateInfo create_info = {
      .sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO,
      .pNext = &type_info,
  };
  return WEFT_VK_CALL(&context->vk, vkCreateSemaphore(context->device,
                                                      &create_info, NULL,
                                                      out_timeline));
}

weft_status_t weft_vulkan_context_submit_signal(weft_vulkan_context_t* context,
                                                VkQueue queue,
                                                VkCommandBuffer command_buffer,
                                                VkSemaphore timeline,
                                                uint64_t value) {
  const VkTimelineSemaphoreSubmitInfo timeline_info = {
      .sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
      .signalSemaphoreValueCount = 1,
      .pSignalSemaphoreValues = &value,
  };
  const VkSubmitInfo submit_info = {
      .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
      .pNext = &timeline_info,
      .commandBufferCount = 1,
      .pCommandBuffers = &command_buffer,
      .signalSemaphoreCount = 1,
      .pSignalSemaphores = &timeline,
  };
  return WEFT_VK_CALL(&context->vk,
                      vkQueueSubmit(queue, 1, &submit_info, VK_NULL_HANDLE));
}

weft_status_t weft_vulkan_context_wait_timeline(weft_vulkan_context_t* context,
                                                VkSemaphore timeline,
                                                uint64_t value) {
  const VkSemaphoreWaitInfo wait_info = {
      .sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
      .semaphoreCount = 1,
      .pSemaphores = &timeline,
      .pValues = &value,
  };
  return WEFT_VK_CALL(&context->vk, vkWaitSemaphores(context->device,
                                                     &wait_info, UINT64_MAX));
}
