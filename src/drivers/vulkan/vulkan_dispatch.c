// weft vulkan driver: recording a dispatch (see vulkan_dispatch.h).
#include "drivers/vulkan/vulkan_dispatch.h"

#include <inttypes.h>
#include <string.h>

#include "drivers/vulkan/vulkan_buffer.h"
#include "drivers/vulkan/vulkan_executable.h"

static uint32_t weft_vulkan_min_u32(uint32_t a, uint32_t b) {
  return a < b ? a : b;
}

// At most this many bindings (the layout's limit, vulkan_executable.c).
#define WEFT_VULKAN_MAX_BINDINGS 63u

weft_status_t weft_vulkan_record_dispatch(
    weft_vulkan_context_t* context, VkCommandBuffer command_buffer,
    const weft_executable_t* executable, uint32_t ordinal,
    const uint32_t workgroup_count[3], const uint32_t* constants,
    uint32_t binding_count, const weft_buffer_binding_t* bindings,
    weft_vulkan_status_slot_t status_slot) {
  const weft_vulkan_kernel_t* kernel =
      weft_vulkan_executable_kernel(executable, ordinal);
  if (!kernel) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "executable '%s' (format %s) is not a vulkan "
                       "executable",
                       weft_executable_name(executable),
                       weft_executable_format_name(
                           weft_executable_format(executable)));
  }
  const char* kernel_name =
      weft_executable_kernel_info(executable, ordinal)->name;
  if (!workgroup_count[0] || !workgroup_count[1] || !workgroup_count[2]) {
    return WEFT_OK;
  }
  const VkPhysicalDeviceLimits* limits = &context->properties.limits;
  VkDescriptorBufferInfo infos[WEFT_VULKAN_MAX_BINDINGS + 1];
  VkWriteDescriptorSet writes[WEFT_VULKAN_MAX_BINDINGS + 1];
  // The workgroup count, offsets within the bound ranges, lengths, then
  // constants.
  uint32_t push[3 + 2 * WEFT_VULKAN_MAX_BINDINGS + 64];
  if (binding_count > WEFT_VULKAN_MAX_BINDINGS ||
      kernel->push_constant_size > sizeof(push)) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "dispatch of kernel '%s': %u bindings and %u "
                       "constants are more than weft pushes",
                       kernel_name, binding_count, kernel->constant_count);
  }
  const VkDeviceSize alignment = limits->minStorageBufferOffsetAlignment
                                     ? limits->minStorageBufferOffsetAlignment
                                     : 1;
  for (uint32_t i = 0; i < binding_count; ++i) {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceSize offset = 0;
    weft_status_t status = weft_vulkan_buffer_resolve(
        bindings[i].buffer, bindings[i].offset, &buffer, &offset);
    if (!weft_status_is_ok(status)) return status;
    if (offset % 4 != 0) {
      return WEFT_STATUS(INVALID_ARGUMENT,
                         "dispatch of kernel '%s': binding %u starts at byte "
                         "%" PRIu64 " of its memory; a GPU kernel's binding "
                         "must start on a 4-byte boundary",
                         kernel_name, i, (uint64_t)offset);
    }
    const VkDeviceSize bound = offset - offset % alignment;
    const VkDeviceSize range = (offset - bound) + bindings[i].length;
    if (range > limits->maxStorageBufferRange) {
      return WEFT_STATUS(INVALID_ARGUMENT,
                         "dispatch of kernel '%s': binding %u is %" PRIu64
                         " bytes; a storage buffer range on Vulkan device "
                         "'%s' is at most %u",
                         kernel_name, i, (uint64_t)bindings[i].length,
                         context->properties.deviceName,
                         limits->maxStorageBufferRange);
    }
    // An empty binding still needs a valid range: the rest of the buffer
    // (its length, pushed as 0, keeps the kernel out of it).
    infos[i] = (VkDescriptorBufferInfo){
        .buffer = buffer,
        .offset = bound,
        .range = range ? range : VK_WHOLE_SIZE,
    };
    push[3 + i] = (uint32_t)(offset - bound);
    push[3 + binding_count + i] = (uint32_t)bindings[i].length;
  }
  infos[binding_count] = (VkDescriptorBufferInfo){
      .buffer = status_slot.buffer,
      .offset = status_slot.offset,
      .range = 4 * sizeof(uint32_t),
  };
  for (uint32_t i = 0; i <= binding_count; ++i) {
    writes[i] = (VkWriteDescriptorSet){
        .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
        .dstBinding = i,
        .descriptorCount = 1,
        .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
        .pBufferInfo = &infos[i],
    };
  }
  memcpy(push, workgroup_count, 3 * sizeof(uint32_t));
  for (uint32_t i = 0; i < kernel->constant_count; ++i) {
    push[3 + 2 * binding_count + i] = constants[i];
  }
  weft_vulkan_symbols_t* vk = &context->vk;
  vk->vkCmdBindPipeline(command_buffer, VK_PIPELINE_BIND_POINT_COMPUTE,
                        kernel->pipeline);
  vk->vkCmdPushDescriptorSetKHR(command_buffer, VK_PIPELINE_BIND_POINT_COMPUTE,
                                kernel->pipeline_layout, 0, binding_count + 1,
                                writes);
  vk->vkCmdPushConstants(command_buffer, kernel->pipeline_layout,
                         VK_SHADER_STAGE_COMPUTE_BIT, 0,
                         kernel->push_constant_size, push);
  // A grid larger than the device dispatches at once runs in pieces, each
  // with its base workgroup: the kernel sees its index in the whole grid
  // (and the whole count in the push constants).
  const uint32_t* most = limits->maxComputeWorkGroupCount;
  const uint32_t* total = workgroup_count;
  // Pieces stop when what is left fits (no index passes the total, so
  // none wraps).
  for (uint32_t z = 0;; z += most[2]) {
    const uint32_t count_z = weft_vulkan_min_u32(total[2] - z, most[2]);
    for (uint32_t y = 0;; y += most[1]) {
      const uint32_t count_y = weft_vulkan_min_u32(total[1] - y, most[1]);
      for (uint32_t x = 0;; x += most[0]) {
        const uint32_t count_x = weft_vulkan_min_u32(total[0] - x, most[0]);
        if (x == 0 && y == 0 && z == 0) {
          vk->vkCmdDispatch(command_buffer, count_x, count_y, count_z);
        } else {
          vk->vkCmdDispatchBase(command_buffer, x, y, z, count_x, count_y,
                                count_z);
        }
        if (total[0] - x <= most[0]) break;
      }
      if (total[1] - y <= most[1]) break;
    }
    if (total[2] - z <= most[2]) break;
  }
  return WEFT_OK;
}
