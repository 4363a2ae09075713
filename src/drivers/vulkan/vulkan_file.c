// weft vulkan driver: file reads and writes (see vulkan_file.h).
#include "drivers/vulkan/vulkan_file.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "drivers/vulkan/vulkan_buffer.h"
#include "drivers/vulkan/vulkan_device.h"
#include "hal/gpu/staged_transfer.h"

// Makes the ring at the first transfer.
static weft_status_t weft_vulkan_staging_ring_ensure(
    weft_vulkan_device_t* device) {
  weft_vulkan_staging_ring_t* ring = &device->staging;
  if (ring->mapping) return WEFT_OK;
  weft_vulkan_context_t* context = device->context;
  weft_vulkan_symbols_t* vk = &context->vk;
  const weft_allocator_t allocator = device->base.host_allocator;
  char call[128];
  snprintf(call, sizeof(call), "%u staging pieces of %u bytes",
           ring->piece_count, ring->piece_size);
  weft_status_t status = weft_vulkan_context_allocate_buffer(
      context, (VkDeviceSize)ring->piece_size * ring->piece_count,
      context->host_visible_type, &ring->buffer, &ring->memory);
  if (!weft_status_is_ok(status)) {
    return weft_status_annotate(status, "%s", call);
  }
  void* mapping = NULL;
  status = WEFT_VK_CALL(vk, vkMapMemory(context->device, ring->memory, 0,
                                        VK_WHOLE_SIZE, 0, &mapping));
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc_array(allocator, ring->piece_count,
                                         sizeof(*ring->commands),
                                         (void**)&ring->commands);
  }
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc_array(allocator, ring->piece_count,
                                         sizeof(*ring->values),
                                         (void**)&ring->values);
  }
  if (weft_status_is_ok(status)) {
    const VkCommandPoolCreateInfo pool_info = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
        .queueFamilyIndex = context->queue_family_index,
    };
    status = WEFT_VK_CALL(vk, vkCreateCommandPool(context->device, &pool_info,
                                                  NULL, &ring->pool));
  }
  if (weft_status_is_ok(status)) {
    const VkCommandBufferAllocateInfo allocate_info = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = ring->pool,
        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
        .commandBufferCount = ring->piece_count,
    };
    status = WEFT_VK_CALL(vk, vkAllocateCommandBuffers(
                                  context->device, &allocate_info,
                                  ring->commands));
  }
  if (weft_status_is_ok(status)) {
    status = weft_vulkan_context_create_timeline(context, 0, &ring->timeline);
  }
  if (weft_status_is_ok(status)) {
    ring->mapping = (uint8_t*)mapping;
    // The file side: a proactor with a transfer per piece in flight.
    // Without one, transfers are synchronous on the transfer thread, still
    // overlapping the copies.
    weft_proactor_options_t options;
    weft_proactor_options_initialize(&options);
    options.queue_depth = ring->piece_count;
    options.thread_count = ring->piece_count < 4 ? ring->piece_count : 4;
    options.thread_name = "weft-vulkan-io";
    weft_status_ignore(
        weft_proactor_create(&options, allocator, &ring->proactor));
  } else {
    weft_vulkan_staging_ring_free(device);
  }
  return status;
}

void weft_vulkan_staging_ring_free(weft_vulkan_device_t* device) {
  weft_vulkan_staging_ring_t* ring = &device->staging;
  weft_vulkan_context_t* context = device->context;
  weft_vulkan_symbols_t* vk = &context->vk;
  if (ring->proactor) weft_proactor_destroy(ring->proactor);
  ring->proactor = NULL;
  if (ring->timeline && ring->timeline_value) {
    weft_status_ignore(weft_vulkan_context_wait_timeline(
        context, ring->timeline, ring->timeline_value));
  }
  if (ring->timeline) {
    vk->vkDestroySemaphore(context->device, ring->timeline, NULL);
  }
  if (ring->pool) vk->vkDestroyCommandPool(context->device, ring->pool, NULL);
  if (ring->buffer) vk->vkDestroyBuffer(context->device, ring->buffer, NULL);
  if (ring->memory) vk->vkFreeMemory(context->device, ring->memory, NULL);
  weft_allocator_free(device->base.host_allocator, ring->commands);
  weft_allocator_free(device->base.host_allocator, ring->values);
  const uint32_t piece_size = ring->piece_size;
  const uint32_t piece_count = ring->piece_count;
  memset(ring, 0, sizeof(*ring));
  ring->piece_size = piece_size;
  ring->piece_count = piece_count;
}

// The device side of one staged transfer (hal/gpu/staged_transfer.h).
typedef struct weft_vulkan_transfer_t {
  weft_vulkan_device_t* device;
  VkBuffer buffer;      // the op's buffer's memory
  VkDeviceSize offset;  // where the op's range starts in it
} weft_vulkan_transfer_t;

// Waits until |value| of the ring's timeline is reached.
static weft_status_t weft_vulkan_staging_wait_value(
    weft_vulkan_device_t* device, uint64_t value) {
  if (value == 0) return WEFT_OK;
  return weft_vulkan_context_wait_timeline(device->context,
                                           device->staging.timeline, value);
}

static weft_status_t weft_vulkan_staging_wait(void* self, uint32_t piece) {
  weft_vulkan_device_t* device = ((weft_vulkan_transfer_t*)self)->device;
  return weft_vulkan_staging_wait_value(device, device->staging.values[piece]);
}

// Records and submits a copy between staging piece |piece| and the buffer;
// its submission moves the ring's timeline.
static weft_status_t weft_vulkan_staging_copy(void* self, uint32_t piece,
                                              bool to_buffer,
                                              uint64_t buffer_offset,
                                              uint64_t length) {
  weft_vulkan_transfer_t* transfer = (weft_vulkan_transfer_t*)self;
  weft_vulkan_device_t* device = transfer->device;
  weft_vulkan_staging_ring_t* ring = &device->staging;
  weft_vulkan_context_t* context = device->context;
  weft_vulkan_symbols_t* vk = &context->vk;
  VkCommandBuffer command_buffer = ring->commands[piece];
  weft_status_t status =
      WEFT_VK_CALL(vk, vkResetCommandBuffer(command_buffer, 0));
  const VkCommandBufferBeginInfo begin_info = {
      .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
      .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
  };
  if (weft_status_is_ok(status)) {
    status = WEFT_VK_CALL(vk, vkBeginCommandBuffer(command_buffer,
                                                   &begin_info));
  }
  if (!weft_status_is_ok(status)) return status;
  const VkDeviceSize staging_offset = (VkDeviceSize)piece * ring->piece_size;
  const VkDeviceSize target_offset = transfer->offset + buffer_offset;
  const VkBufferCopy region = {
      .srcOffset = to_buffer ? staging_offset : target_offset,
      .dstOffset = to_buffer ? target_offset : staging_offset,
      .size = length,
  };
  vk->vkCmdCopyBuffer(command_buffer,
                      to_buffer ? ring->buffer : transfer->buffer,
                      to_buffer ? transfer->buffer : ring->buffer, 1, &region);
  // The bytes reach the host (a WRITE's piece) and every later command on
  // the queue (a READ's buffer; the op then signals from the host).
  const VkMemoryBarrier barrier = {
      .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
      .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
      .dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_MEMORY_READ_BIT |
                       VK_ACCESS_MEMORY_WRITE_BIT,
  };
  vk->vkCmdPipelineBarrier(command_buffer, VK_PIPELINE_STAGE_TRANSFER_BIT,
                           VK_PIPELINE_STAGE_HOST_BIT |
                               VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                           0, 1, &barrier, 0, NULL, 0, NULL);
  status = WEFT_VK_CALL(vk, vkEndCommandBuffer(command_buffer));
  if (!weft_status_is_ok(status)) return status;
  const uint64_t value = ring->timeline_value + 1;
  weft_slim_mutex_lock(&device->mutex);
  status = weft_vulkan_context_submit_signal(
      context, device->queues[0].queue, command_buffer, ring->timeline, value);
  weft_slim_mutex_unlock(&device->mutex);
  if (weft_status_is_ok(status)) {
    ring->timeline_value = value;
    ring->values[piece] = value;
  }
  return status;
}

weft_status_t weft_vulkan_file_transfer(weft_vulkan_device_t* device,
                                        const weft_queue_op_t* op) {
  weft_vulkan_transfer_t transfer = {device, VK_NULL_HANDLE, 0};
  weft_status_t status = weft_vulkan_buffer_resolve(
      op->file.buffer, op->file.buffer_offset, &transfer.buffer,
      &transfer.offset);
  if (weft_status_is_ok(status)) {
    status = weft_vulkan_staging_ring_ensure(device);
  }
  if (!weft_status_is_ok(status)) return status;
  weft_vulkan_staging_ring_t* ring = &device->staging;
  const weft_staging_ring_t pieces = {ring->mapping, ring->piece_size,
                                      ring->piece_count};
  const weft_staged_transfer_device_t hooks = {
      &transfer, weft_vulkan_staging_copy, weft_vulkan_staging_wait};
  status = weft_staged_transfer_run(&pieces, &hooks, ring->proactor, op);
  // A READ's last copies are queued, not done: its signals follow them.
  weft_status_t landed =
      weft_vulkan_staging_wait_value(device, ring->timeline_value);
  if (weft_status_is_ok(status)) return landed;
  weft_status_free(landed);
  return status;
}
