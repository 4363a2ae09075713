// weft vulkan driver: one Vulkan instance and logical device, shared by
// reference.
//
// A weft device, its buffers and its semaphores each hold a reference: a
// buffer or semaphore may outlive the device that made it, and the
// VkDevice goes with the last reference. The VkInstance is the process's
// (one per validation setting, kept until exit, like the loader).
//
// The context picks the physical device (by index or by a piece of its
// name), one queue family with compute (and so transfer) support, the
// memory types weft's buffers use, and turns on the timelineSemaphore
// feature, without which the driver refuses the device (UNAVAILABLE naming
// the reason). With validation on, the Khronos validation layer reports
// through a messenger that counts each warning or error and prints it;
// WEFT_VULKAN_VALIDATION_FATAL=1 makes the first one abort the process (the
// CTS runs so: any validation message fails its test).
#ifndef WEFT_DRIVERS_VULKAN_VULKAN_CONTEXT_H_
#define WEFT_DRIVERS_VULKAN_VULKAN_CONTEXT_H_

#include <stdbool.h>
#include <stdio.h>

#include "base/atomics.h"
#include "drivers/vulkan/vulkan_symbols.h"
#include "weft/allocator.h"

// Aborts at the first validation message when set to 1.
#define WEFT_VULKAN_VALIDATION_FATAL_ENV "WEFT_VULKAN_VALIDATION_FATAL"
// A maxTimelineSemaphoreValueDifference below the device's, for testing
// what weft does on devices that allow less (some guarantee 2^31 - 1).
#define WEFT_VULKAN_MAX_TIMELINE_DIFFERENCE_ENV \
  "WEFT_VULKAN_MAX_TIMELINE_DIFFERENCE"

typedef struct weft_vulkan_context_options_t {
  // Physical device by index (when |device_name| is NULL).
  uint32_t device_index;
  // Physical device whose name contains this (case-insensitive), or NULL.
  const char* device_name;
  // Enables VK_LAYER_KHRONOS_validation (UNAVAILABLE when not installed).
  bool validation;
  // Vulkan queues wanted from the family (as many as it has, at most).
  uint32_t queue_count;
} weft_vulkan_context_options_t;

typedef struct weft_vulkan_context_t {
  weft_ref_count_t ref_count;
  weft_allocator_t allocator;
  const weft_vulkan_loader_t* loader;
  weft_vulkan_symbols_t vk;
  // The process's instance for this validation setting (never destroyed).
  VkInstance instance;
  VkPhysicalDevice physical_device;
  VkDevice device;
  // The physical device's properties and limits that matter to weft.
  VkPhysicalDeviceProperties properties;
  VkPhysicalDeviceMemoryProperties memory_properties;
  uint64_t max_timeline_difference;
  uint32_t subgroup_size;
  uint32_t physical_device_index;
  uint32_t queue_family_index;
  // Vulkan queues made of that family (0 .. queue_count - 1).
  uint32_t queue_count;
  uint32_t queue_family_count;
  VkQueueFamilyProperties queue_families[16];
  // Memory type indices: device-local (for buffers the host does not map)
  // and host-visible coherent (mapped buffers and staging).
  uint32_t device_local_type;
  uint32_t host_visible_type;
  bool validation;
  // VK_KHR_push_descriptor is enabled (dispatches need it), and how many
  // descriptors one push may set (a kernel's bindings and its status).
  bool has_push_descriptor;
  uint32_t max_push_descriptors;
  // Validation messages seen by the instance (warnings and errors).
  weft_atomic_uint32_t* validation_message_count;
} weft_vulkan_context_t;

// Creates the instance and device; UNAVAILABLE (with the reason) when
// there is no loader, no such physical device, or one without timeline
// semaphores or compute.
weft_status_t weft_vulkan_context_create(
    const weft_vulkan_context_options_t* options, weft_allocator_t allocator,
    weft_vulkan_context_t** out_context);

void weft_vulkan_context_retain(weft_vulkan_context_t* context);
void weft_vulkan_context_release(weft_vulkan_context_t* context);

// Writes the device, its limits that matter, its memory types and queue
// families, and the loader's version.
void weft_vulkan_context_describe(const weft_vulkan_context_t* context,
                                  FILE* stream);

// Makes a buffer of |size| bytes rounded up to a multiple of 4, with memory
// of type |type_index| (or one with the same flags the buffer takes) bound
// to it; on failure nothing is left allocated.
weft_status_t weft_vulkan_context_allocate_buffer(
    weft_vulkan_context_t* context, VkDeviceSize size, uint32_t type_index,
    VkBuffer* out_buffer, VkDeviceMemory* out_memory);

// Makes a timeline semaphore at |initial_value|.
weft_status_t weft_vulkan_context_create_timeline(
    weft_vulkan_context_t* context, uint64_t initial_value,
    VkSemaphore* out_timeline);

// Submits |command_buffer| to |queue|, its completion moving |timeline| to
// |value|. The caller holds what guards |queue|.
weft_status_t weft_vulkan_context_submit_signal(weft_vulkan_context_t* context,
                                                VkQueue queue,
                                                VkCommandBuffer command_buffer,
                                                VkSemaphore timeline,
                                                uint64_t value);

// Blocks until |timeline| reaches |value|.
weft_status_t weft_vulkan_context_wait_timeline(weft_vulkan_context_t* context,
                                                VkSemaphore timeline,
                                                uint64_t value);

#endif  // WEFT_DRIVERS_VULKAN_VULKAN_CONTEXT_H_
