// weft vulkan driver: buffers (see vulkan_buffer.h).
#include "drivers/vulkan/vulkan_buffer.h"

#include <inttypes.h>
#include <string.h>

#include "hal/queue_ordered_state.h"

typedef struct weft_vulkan_buffer_t {
  weft_buffer_t base;
  weft_vulkan_context_t* context;  // retained
  bool queue_ordered;
  VkBuffer buffer;
  VkDeviceMemory memory;
  void* host_pointer;  // mapped memory, or NULL
  // Queue-ordered only; COMMITTED is published after the memory, so an op
  // ordered after the ALLOCA by a semaphore sees it.
  weft_queue_ordered_state_t state;
} weft_vulkan_buffer_t;

static void weft_vulkan_buffer_destroy(weft_buffer_t* base);
static weft_status_t weft_vulkan_buffer_map_range(
    weft_buffer_t* base, weft_mapping_mode_t mode, weft_memory_access_t access,
    weft_device_size_t offset, weft_device_size_t length,
    void** out_host_ptr);
static void weft_vulkan_buffer_unmap_range(weft_buffer_t* base,
                                           weft_device_size_t offset,
                                           weft_device_size_t length,
                                           void* host_ptr) {}
// Mapped memory is coherent: the host sees the device's writes once it
// sees the op's signal (each op's last command makes its writes available
// to the host), and the device sees the host's writes made before the
// submit that uses them.
static weft_status_t weft_vulkan_buffer_sync_range(
    weft_buffer_t* base, weft_device_size_t offset,
    weft_device_size_t length) {
  return WEFT_OK;
}

static const weft_buffer_vtable_t kWeftVulkanBufferVtable = {
    .destroy = weft_vulkan_buffer_destroy,
    .map_range = weft_vulkan_buffer_map_range,
    .unmap_range = weft_vulkan_buffer_unmap_range,
    .flush_range = weft_vulkan_buffer_sync_range,
    .invalidate_range = weft_vulkan_buffer_sync_range,
};

// Takes memory of |type_index| for |buffer| (its length), maps it when the
// type is host-visible, and zeroes it.
static weft_status_t weft_vulkan_buffer_take_memory(
    weft_vulkan_buffer_t* buffer, uint32_t type_index,
    weft_vulkan_zero_fn_t zero_fn, void* zero_user_data) {
  weft_vulkan_context_t* context = buffer->context;
  // Vulkan has no empty buffers: a zero-length one owns no memory.
  const VkDeviceSize size = buffer->base.byte_length;
  if (size == 0) return WEFT_OK;
  weft_status_t status = weft_vulkan_context_allocate_buffer(
      context, size, type_index, &buffer->buffer, &buffer->memory);
  const bool mappable =
      (context->memory_properties.memoryTypes[type_index].propertyFlags &
       VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) != 0;
  if (weft_status_is_ok(status) && mappable) {
    status = WEFT_VK_CALL(&context->vk,
                          vkMapMemory(context->device, buffer->memory, 0,
                                      VK_WHOLE_SIZE, 0, &buffer->host_pointer));
    if (weft_status_is_ok(status)) memset(buffer->host_pointer, 0, size);
  } else if (weft_status_is_ok(status)) {
    status = zero_fn(zero_user_data, buffer->buffer);
  }
  if (!weft_status_is_ok(status)) {
    status = weft_status_annotate(
        status, "allocating a %" PRIu64 "-byte buffer on '%s'",
        (uint64_t)size, context->properties.deviceName);
  }
  return status;
}

static void weft_vulkan_buffer_free_memory(weft_vulkan_buffer_t* buffer) {
  weft_vulkan_context_t* context = buffer->context;
  if (buffer->host_pointer) {
    context->vk.vkUnmapMemory(context->device, buffer->memory);
    buffer->host_pointer = NULL;
  }
  if (buffer->buffer) {
    context->vk.vkDestroyBuffer(context->device, buffer->buffer, NULL);
    buffer->buffer = VK_NULL_HANDLE;
  }
  if (buffer->memory) {
    context->vk.vkFreeMemory(context->device, buffer->memory, NULL);
    buffer->memory = VK_NULL_HANDLE;
  }
}

static weft_status_t weft_vulkan_buffer_new(weft_vulkan_context_t* context,
                                            weft_domain_t domain,
                                            bool host_visible,
                                            bool queue_ordered,
                                            weft_buffer_params_t params,
                                            weft_device_size_t byte_length,
                                            weft_allocator_t allocator,
                                            weft_vulkan_buffer_t** out_buffer) {
  *out_buffer = NULL;
  weft_vulkan_buffer_t* buffer = NULL;
  weft_status_t status =
      weft_allocator_malloc(allocator, sizeof(*buffer), (void**)&buffer);
  if (!weft_status_is_ok(status)) return status;
  weft_buffer_placement_t placement = {.domain = domain, .flags = 0};
  if (host_visible) {
    placement.flags |= WEFT_BUFFER_PLACEMENT_HOST_VISIBLE;
    params.type = WEFT_MEMORY_TYPE_HOST_VISIBLE | WEFT_MEMORY_TYPE_HOST_COHERENT;
  } else {
    params.type = WEFT_MEMORY_TYPE_DEVICE_LOCAL;
  }
  if (queue_ordered) placement.flags |= WEFT_BUFFER_PLACEMENT_QUEUE_ORDERED;
  weft_buffer_initialize(&kWeftVulkanBufferVtable, allocator, params,
                         placement, byte_length, &buffer->base);
  weft_vulkan_context_retain(context);
  buffer->context = context;
  buffer->queue_ordered = queue_ordered;
  weft_queue_ordered_state_initialize(&buffer->state);
  *out_buffer = buffer;
  return WEFT_OK;
}

weft_status_t weft_vulkan_buffer_allocate(weft_vulkan_context_t* context,
                                          weft_domain_t domain,
                                          weft_buffer_params_t params,
                                          weft_device_size_t byte_length,
                                          weft_vulkan_zero_fn_t zero_fn,
                                          void* zero_user_data,
                                          weft_allocator_t allocator,
                                          weft_buffer_t** out_buffer) {
  *out_buffer = NULL;
  const bool host_visible = (params.type & WEFT_MEMORY_TYPE_HOST_VISIBLE) != 0;
  weft_vulkan_buffer_t* buffer = NULL;
  weft_status_t status =
      weft_vulkan_buffer_new(context, domain, host_visible,
                             /*queue_ordered=*/false, params, byte_length,
                             allocator, &buffer);
  if (weft_status_is_ok(status)) {
    status = weft_vulkan_buffer_take_memory(
        buffer,
        host_visible ? context->host_visible_type : context->device_local_type,
        zero_fn, zero_user_data);
    if (!weft_status_is_ok(status)) {
      weft_vulkan_buffer_destroy(&buffer->base);
      buffer = NULL;
    }
  }
  if (buffer) *out_buffer = &buffer->base;
  return status;
}

weft_status_t weft_vulkan_buffer_create_queue_ordered(
    weft_vulkan_context_t* context, weft_domain_t domain,
    weft_buffer_params_t params, weft_device_size_t byte_length,
    weft_allocator_t allocator, weft_buffer_t** out_buffer) {
  *out_buffer = NULL;
  weft_vulkan_buffer_t* buffer = NULL;
  weft_status_t status = weft_vulkan_buffer_new(
      context, domain, /*host_visible=*/false, /*queue_ordered=*/true, params,
      byte_length, allocator, &buffer);
  if (weft_status_is_ok(status)) *out_buffer = &buffer->base;
  return status;
}

static void weft_vulkan_buffer_destroy(weft_buffer_t* base) {
  weft_vulkan_buffer_t* buffer = (weft_vulkan_buffer_t*)base;
  weft_vulkan_context_t* context = buffer->context;
  weft_vulkan_buffer_free_memory(buffer);
  weft_allocator_free(base->allocator, buffer);
  weft_vulkan_context_release(context);
}

static weft_status_t weft_vulkan_buffer_map_range(
    weft_buffer_t* base, weft_mapping_mode_t mode, weft_memory_access_t access,
    weft_device_size_t offset, weft_device_size_t length,
    void** out_host_ptr) {
  weft_vulkan_buffer_t* buffer = (weft_vulkan_buffer_t*)base;
  *out_host_ptr = NULL;
  if (!(base->placement.flags & WEFT_BUFFER_PLACEMENT_HOST_VISIBLE)) {
    return WEFT_STATUS(FAILED_PRECONDITION,
                       "a vulkan device's device-local buffer (%" PRIu64
                       " bytes) cannot be mapped by the host: allocate it "
                       "HOST_VISIBLE, or copy it into one through the queue",
                       base->byte_length);
  }
  *out_host_ptr =
      buffer->host_pointer ? (uint8_t*)buffer->host_pointer + offset : NULL;
  return WEFT_OK;
}

weft_status_t weft_vulkan_buffer_resolve(const weft_buffer_t* buffer,
                                         weft_device_size_t offset,
                                         VkBuffer* out_buffer,
                                         VkDeviceSize* out_offset) {
  *out_buffer = VK_NULL_HANDLE;
  *out_offset = 0;
  const weft_buffer_t* root_base = buffer->allocated_buffer;
  if (weft_buffer_vtable(root_base) != &kWeftVulkanBufferVtable) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "a buffer of another device (%" PRIu64
                       " bytes) reached a vulkan op",
                       buffer->byte_length);
  }
  weft_vulkan_buffer_t* root = (weft_vulkan_buffer_t*)root_base;
  if (root->queue_ordered) {
    weft_status_t status =
        weft_queue_ordered_state_check(&root->state, root->base.byte_length);
    if (!weft_status_is_ok(status)) return status;
  }
  *out_buffer = root->buffer;
  *out_offset = buffer->byte_offset + offset;
  return WEFT_OK;
}

bool weft_vulkan_buffer_is_queue_ordered(const weft_buffer_t* buffer) {
  const weft_buffer_t* root = buffer->allocated_buffer;
  return weft_buffer_vtable(root) == &kWeftVulkanBufferVtable &&
         ((const weft_vulkan_buffer_t*)root)->queue_ordered;
}

weft_status_t weft_vulkan_buffer_commit(weft_buffer_t* base,
                                        weft_vulkan_zero_fn_t zero_fn,
                                        void* zero_user_data) {
  weft_vulkan_buffer_t* buffer = (weft_vulkan_buffer_t*)base;
  weft_status_t status =
      weft_queue_ordered_state_begin_commit(&buffer->state, base->byte_length);
  if (!weft_status_is_ok(status)) return status;
  status = weft_vulkan_buffer_take_memory(
      buffer, buffer->context->device_local_type, zero_fn, zero_user_data);
  weft_queue_ordered_state_end_commit(&buffer->state,
                                      weft_status_is_ok(status));
  return status;
}

weft_status_t weft_vulkan_buffer_decommit(weft_buffer_t* base) {
  weft_vulkan_buffer_t* buffer = (weft_vulkan_buffer_t*)base;
  weft_status_t status =
      weft_queue_ordered_state_decommit(&buffer->state, base->byte_length);
  if (weft_status_is_ok(status)) weft_vulkan_buffer_free_memory(buffer);
  return status;
}
