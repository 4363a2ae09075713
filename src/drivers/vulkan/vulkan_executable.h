// weft vulkan driver: executables, SPIR-V modules with a kernel table
// (weft/executable.h says how the table and a kernel's interface look).
//
// Each kernel is a compute pipeline of the module's entry point of its
// name, with a descriptor set layout for push descriptors (its bindings,
// then the status) and one push-constant range (the workgroup count,
// binding offsets, binding lengths, constants). The executable holds its
// context, so it may outlive the device that made it.
#ifndef WEFT_DRIVERS_VULKAN_VULKAN_EXECUTABLE_H_
#define WEFT_DRIVERS_VULKAN_VULKAN_EXECUTABLE_H_

#include "drivers/vulkan/vulkan_context.h"
#include "hal/executable_impl.h"

// What recording a dispatch of one kernel needs.
typedef struct weft_vulkan_kernel_t {
  VkDescriptorSetLayout set_layout;
  VkPipelineLayout pipeline_layout;
  VkPipeline pipeline;
  uint32_t binding_count;
  uint32_t constant_count;
  // Bytes of push constants: 4 * (3 + 2 * binding_count + constant_count).
  uint32_t push_constant_size;
} weft_vulkan_kernel_t;

// Makes an executable of |source| (format SPIRV) on |context| (retained).
// INVALID_ARGUMENT for a source without data or table, data that is not a
// SPIR-V module, a kernel that is not a GLCompute entry point of it (the
// message lists those it has), whose workgroup size differs from the
// module's, or whose interface needs more push constants or descriptors
// than the device has; UNAVAILABLE on a device without
// VK_KHR_push_descriptor; Vulkan's error naming the call and the kernel
// when a pipeline cannot be made.
weft_status_t weft_vulkan_executable_create(weft_vulkan_context_t* context,
                                            weft_domain_t domain,
                                            weft_executable_source_t source,
                                            weft_allocator_t allocator,
                                            weft_executable_t** out_executable);

// Kernel |ordinal| of a vulkan executable (validated by the HAL), or NULL
// for an executable of another kind.
const weft_vulkan_kernel_t* weft_vulkan_executable_kernel(
    const weft_executable_t* executable, uint32_t ordinal);

#endif  // WEFT_DRIVERS_VULKAN_VULKAN_EXECUTABLE_H_
