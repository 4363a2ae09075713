// weft vulkan driver: reusable command buffers recorded once (see
// vulkan_command_buffer.h).
#include "drivers/vulkan/vulkan_command_buffer.h"

#include <string.h>

#include "drivers/vulkan/vulkan_buffer.h"
#include "drivers/vulkan/vulkan_device.h"
#include "hal/command_buffer_impl.h"
#include "hal/gpu/kernel_status.h"

static void weft_vulkan_recording_destroy(void* data) {
  weft_vulkan_recording_t* recording = (weft_vulkan_recording_t*)data;
  weft_vulkan_context_t* context = recording->context;
  weft_vulkan_symbols_t* vk = &context->vk;
  // The pool frees its command buffer; no execute holds the recording
  // (an op holds its command buffer until it completes).
  if (recording->pool) {
    vk->vkDestroyCommandPool(context->device, recording->pool, NULL);
  }
  if (recording->status_buffer) {
    vk->vkDestroyBuffer(context->device, recording->status_buffer, NULL);
  }
  if (recording->status_memory) {
    vk->vkFreeMemory(context->device, recording->status_memory, NULL);
  }
  weft_allocator_free(recording->allocator, recording);
  weft_vulkan_context_release(context);
}

// True when |ref| is direct and not queue-ordered memory.
static bool weft_vulkan_ref_is_fixed(weft_buffer_ref_t ref) {
  return ref.buffer && !weft_vulkan_buffer_is_queue_ordered(ref.buffer);
}

// True when every command of |command_buffer| can be recorded once.
static bool weft_vulkan_command_buffer_is_fixed(
    const weft_command_buffer_t* command_buffer, uint32_t* out_dispatches) {
  uint32_t count = 0;
  const weft_command_t* commands =
      weft_command_buffer_commands(command_buffer, &count);
  uint32_t dispatches = 0;
  for (uint32_t i = 0; i < count; ++i) {
    const weft_command_t* command = &commands[i];
    switch (command->type) {
      case WEFT_COMMAND_TYPE_BARRIER:
        break;
      case WEFT_COMMAND_TYPE_FILL: {
        const weft_buffer_ref_t target = command->fill.target;
        if (!weft_vulkan_ref_is_fixed(target)) return false;
        // vkCmdFillBuffer takes 4-byte offsets and sizes (the rest need
        // staging); the offset checked is the root's.
        const weft_device_size_t offset =
            weft_buffer_byte_offset(target.buffer) + target.offset;
        if (offset % 4 || target.length % 4) return false;
        break;
      }
      case WEFT_COMMAND_TYPE_UPDATE: {
        const weft_buffer_ref_t target = command->update.target;
        if (!weft_vulkan_ref_is_fixed(target)) return false;
        const weft_device_size_t offset =
            weft_buffer_byte_offset(target.buffer) + target.offset;
        if (offset % 4 || target.length % 4 || target.length > 65536) {
          return false;
        }
        break;
      }
      case WEFT_COMMAND_TYPE_COPY:
        if (!weft_vulkan_ref_is_fixed(command->copy.source) ||
            !weft_vulkan_ref_is_fixed(command->copy.target)) {
          return false;
        }
        break;
      case WEFT_COMMAND_TYPE_DISPATCH:
        for (uint32_t b = 0; b < command->dispatch.binding_count; ++b) {
          if (!weft_vulkan_ref_is_fixed(command->dispatch.bindings[b])) {
            return false;
          }
        }
        ++dispatches;
        break;
    }
  }
  *out_dispatches = dispatches;
  return true;
}

weft_status_t weft_vulkan_command_buffer_finalize(
    weft_device_t* base_device, weft_command_buffer_t* command_buffer) {
  if (!(weft_command_buffer_mode(command_buffer) &
        WEFT_COMMAND_BUFFER_MODE_REUSABLE)) {
    return WEFT_OK;  // one execute: recording once saves nothing
  }
  uint32_t dispatches = 0;
  if (!weft_vulkan_command_buffer_is_fixed(command_buffer, &dispatches)) {
    return WEFT_OK;
  }
  weft_vulkan_device_t* device = weft_vulkan_device_cast(base_device);
  weft_vulkan_context_t* context = device->context;
  weft_vulkan_recording_t* recording = NULL;
  weft_status_t status = weft_allocator_malloc(
      base_device->host_allocator, sizeof(*recording), (void**)&recording);
  if (!weft_status_is_ok(status)) return status;
  memset(recording, 0, sizeof(*recording));
  weft_vulkan_context_retain(context);
  recording->context = context;
  recording->domain = base_device->domain;
  recording->allocator = base_device->host_allocator;
  recording->status_slot_count = dispatches ? dispatches : 1;
  recording->status_stride = device->status_stride;
  const VkCommandPoolCreateInfo pool_info = {
      .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
      .queueFamilyIndex = context->queue_family_index,
  };
  status = WEFT_VK_CALL(&context->vk,
                        vkCreateCommandPool(context->device, &pool_info, NULL,
                                            &recording->pool));
  if (weft_status_is_ok(status)) {
    status = weft_vulkan_context_allocate_buffer(
        context, recording->status_slot_count * recording->status_stride,
        context->host_visible_type, &recording->status_buffer,
        &recording->status_memory);
  }
  if (weft_status_is_ok(status)) {
    status = WEFT_VK_CALL(&context->vk,
                          vkMapMemory(context->device,
                                      recording->status_memory, 0,
                                      VK_WHOLE_SIZE, 0,
                                      (void**)&recording->status_mapping));
  }
  if (!weft_status_is_ok(status)) {
    weft_vulkan_recording_destroy(recording);
    return status;
  }
  weft_command_buffer_set_driver_data(command_buffer, recording,
                                      weft_vulkan_recording_destroy);
  return WEFT_OK;
}

weft_vulkan_recording_t* weft_vulkan_recording_claim(
    const weft_command_buffer_t* command_buffer, weft_domain_t domain) {
  weft_vulkan_recording_t* recording =
      (weft_vulkan_recording_t*)weft_command_buffer_driver_data(
          command_buffer, weft_vulkan_recording_destroy);
  if (!recording || recording->domain != domain || recording->broken) {
    return NULL;
  }
  uint32_t expected = 0;
  if (!weft_atomic_compare_exchange_strong(&recording->claimed, &expected, 1,
                                           memory_order_acquire,
                                           memory_order_relaxed)) {
    return NULL;
  }
  return recording;
}

void weft_vulkan_recording_release(weft_vulkan_recording_t* recording) {
  weft_atomic_store(&recording->claimed, 0, memory_order_release);
}
