// weft vulkan driver: devices (see vulkan_device.h, vulkan_driver.h).
#include "drivers/vulkan/vulkan_device.h"

#include <stdalign.h>
#include <string.h>

#include "drivers/vulkan/vulkan_buffer.h"
#include "drivers/vulkan/vulkan_command_buffer.h"
#include "drivers/vulkan/vulkan_driver.h"
#include "drivers/vulkan/vulkan_executable.h"
#include "drivers/vulkan/vulkan_semaphore.h"
#include "hal/executable_impl.h"
#include "hal/gpu/staged_transfer.h"

static void weft_vulkan_device_free(weft_vulkan_device_t* device) {
  weft_allocator_t allocator = device->base.host_allocator;
  weft_vulkan_device_free_queue(device);
  weft_queue_scheduler_deinitialize(&device->scheduler);
  weft_slim_mutex_deinitialize(&device->mutex);
  weft_vulkan_context_release(device->context);
  weft_device_deinitialize(&device->base);
  weft_allocator_free_aligned(allocator, device);
}

// The last public reference is gone: held ops fail with CANCELLED,
// submitted ones finish, then everything goes.
static void weft_vulkan_device_destroy(weft_device_t* base_device) {
  weft_vulkan_device_t* device = weft_vulkan_device_cast(base_device);
  weft_vulkan_device_stop_queue(device);
  weft_vulkan_device_free(device);
}

static weft_status_t weft_vulkan_device_query_i64(weft_device_t* base_device,
                                                  const char* key,
                                                  int64_t* out_value) {
  weft_vulkan_device_t* device = weft_vulkan_device_cast(base_device);
  const weft_vulkan_context_t* context = device->context;
  const weft_device_property_t properties[] = {
      {"queue.count", device->queue_count},
      {"worker.count", 1},
      {"dispatch.concurrent", 1},
      {"semaphore.host_wait", 1},
      {"vulkan.device", context->physical_device_index},
      {"vulkan.queues", context->queue_count},
      {"vulkan.api_version", context->properties.apiVersion},
      {"vulkan.subgroup_size", context->subgroup_size},
      {"vulkan.max_timeline_difference",
       context->max_timeline_difference > INT64_MAX
           ? INT64_MAX
           : (int64_t)context->max_timeline_difference},
      {"vulkan.validation", context->validation},
      {"vulkan.gpu_waits", device->gpu_waits},
      {"vulkan.recorded_executes", (int64_t)device->recorded_executes},
      {"vulkan.staging_buffers_made", (int64_t)device->staging_made},
      {"vulkan.held_waits",
       weft_atomic_load(&device->held_waits, memory_order_relaxed)},
      {"vulkan.staging_piece", device->staging.piece_size},
      {"vulkan.staging_pieces", device->staging.piece_count},
      {"vulkan.validation_messages",
       weft_atomic_load(device->context->validation_message_count,
                        memory_order_relaxed)},
  };
  return weft_device_query_property(
      base_device, key, properties, sizeof(properties) / sizeof(properties[0]),
      out_value);
}

static void weft_vulkan_device_describe(weft_device_t* base_device,
                                        FILE* stream) {
  weft_vulkan_context_describe(weft_vulkan_device_cast(base_device)->context,
                               stream);
}

static weft_status_t weft_vulkan_device_allocate_buffer(
    weft_device_t* base_device, weft_buffer_params_t params,
    weft_device_size_t byte_length, weft_buffer_t** out_buffer) {
  weft_vulkan_device_t* device = weft_vulkan_device_cast(base_device);
  return weft_vulkan_buffer_allocate(
      device->context, base_device->domain, params, byte_length,
      weft_vulkan_device_zero_buffer, device, base_device->host_allocator,
      out_buffer);
}

static weft_status_t weft_vulkan_device_create_transient_buffer(
    weft_device_t* base_device, weft_buffer_params_t params,
    weft_device_size_t byte_length, weft_buffer_t** out_buffer) {
  weft_vulkan_device_t* device = weft_vulkan_device_cast(base_device);
  return weft_vulkan_buffer_create_queue_ordered(
      device->context, base_device->domain, params, byte_length,
      base_device->host_allocator, out_buffer);
}

static weft_status_t weft_vulkan_device_create_executable(
    weft_device_t* base_device, weft_executable_source_t source,
    weft_executable_t** out_executable) {
  weft_vulkan_device_t* device = weft_vulkan_device_cast(base_device);
  if (source.format != WEFT_EXECUTABLE_FORMAT_SPIRV) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "weft_device_create_executable: device '%s' does not "
                       "accept executables of format %s (%d); the vulkan "
                       "driver takes spirv",
                       weft_device_id(base_device),
                       weft_executable_format_name(source.format),
                       (int)source.format);
  }
  return weft_vulkan_executable_create(device->context, base_device->domain,
                                       source, base_device->host_allocator,
                                       out_executable);
}

static weft_status_t weft_vulkan_device_create_semaphore(
    weft_device_t* base_device, uint64_t initial_value,
    weft_semaphore_t** out_semaphore) {
  weft_vulkan_device_t* device = weft_vulkan_device_cast(base_device);
  return weft_vulkan_semaphore_create(device->context, base_device->domain,
                                      initial_value,
                                      base_device->host_allocator,
                                      out_semaphore);
}

static const weft_device_vtable_t kWeftVulkanDeviceVtable = {
    .destroy = weft_vulkan_device_destroy,
    .query_i64 = weft_vulkan_device_query_i64,
    .allocate_buffer = weft_vulkan_device_allocate_buffer,
    .for_each_pending = weft_vulkan_device_for_each_pending,
    .describe = weft_vulkan_device_describe,
    .create_executable = weft_vulkan_device_create_executable,
    .create_semaphore = weft_vulkan_device_create_semaphore,
    .create_transient_buffer = weft_vulkan_device_create_transient_buffer,
    .queue_submit = weft_vulkan_device_queue_submit,
    .command_buffer_finalize = weft_vulkan_command_buffer_finalize,
};

static weft_status_t weft_vulkan_parse_options(
    const char* device_string, const weft_device_options_t* options,
    weft_vulkan_context_options_t* out) {
  weft_status_t status =
      weft_device_options_get_u32(options, "device", &out->device_index);
  out->device_name = weft_device_options_find(options, "name");
  static const char* const kOnOff[] = {"on", "off"};
  uint32_t validation = out->validation ? 0 : 1;
  if (weft_status_is_ok(status)) {
    status = weft_status_annotate(
        weft_device_options_get_choice(options, "validation", kOnOff, 2,
                                       &validation),
        "in device string '%s'", device_string);
    out->validation = validation == 0;
  }
  if (weft_status_is_ok(status) && out->device_name &&
      weft_device_options_find(options, "device")) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "device string '%s': give 'device' or 'name', not "
                         "both",
                         device_string);
  }
  return status;
}

static weft_status_t weft_vulkan_driver_create_device(
    const weft_driver_t* driver, const char* device_string,
    const weft_device_options_t* options, weft_allocator_t allocator,
    weft_device_t** out_device) {
  *out_device = NULL;
  weft_vulkan_context_options_t parsed = {.device_index = 0,
                                          .device_name = NULL,
                                          .validation = false,
                                          .queue_count = 1};
  bool gpu_waits = true;
  uint32_t piece_size = WEFT_STAGING_DEFAULT_PIECE_SIZE;
  uint32_t pieces = WEFT_STAGING_DEFAULT_PIECES;
  weft_status_t status =
      weft_vulkan_parse_options(device_string, options, &parsed);
  if (weft_status_is_ok(status)) {
    status = weft_staging_options_parse(device_string, options, &piece_size,
                                        &pieces);
  }
  if (weft_status_is_ok(status)) {
    status = weft_device_options_get_u32(options, "queues",
                                         &parsed.queue_count);
  }
  if (weft_status_is_ok(status) &&
      (parsed.queue_count == 0 ||
       parsed.queue_count > WEFT_VULKAN_MAX_QUEUES)) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "device string '%s': queues must be 1 to %u (got "
                         "%u)",
                         device_string, WEFT_VULKAN_MAX_QUEUES,
                         parsed.queue_count);
  }
  static const char* const kOnOff[] = {"on", "off"};
  uint32_t waits = gpu_waits ? 0 : 1;
  if (weft_status_is_ok(status)) {
    status = weft_status_annotate(
        weft_device_options_get_choice(options, "gpu_waits", kOnOff, 2,
                                       &waits),
        "in device string '%s'", device_string);
    gpu_waits = waits == 0;
  }
  weft_vulkan_context_t* context = NULL;
  if (weft_status_is_ok(status)) {
    status = weft_vulkan_context_create(&parsed, allocator, &context);
    if (!weft_status_is_ok(status)) {
      status = weft_status_annotate(status, "device string '%s'",
                                    device_string);
    }
  }
  weft_vulkan_device_t* device = NULL;
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc_aligned(allocator, sizeof(*device),
                                           alignof(weft_vulkan_device_t),
                                           (void**)&device);
  }
  if (!weft_status_is_ok(status)) {
    weft_vulkan_context_release(context);
    return status;
  }
  memset(device, 0, sizeof(*device));
  device->context = context;
  device->gpu_waits = gpu_waits;
  device->staging.piece_size = piece_size;
  device->staging.piece_count = pieces;
  weft_slim_mutex_initialize(&device->mutex);
  weft_condition_initialize(&device->transfer_wake);
  status = weft_device_initialize(&kWeftVulkanDeviceVtable, device_string,
                                  driver->name, weft_domain_next(), allocator,
                                  &device->base);
  if (!weft_status_is_ok(status)) {
    weft_condition_deinitialize(&device->transfer_wake);
    weft_slim_mutex_deinitialize(&device->mutex);
    weft_vulkan_context_release(context);
    weft_allocator_free_aligned(allocator, device);
    return status;
  }
  weft_vulkan_device_initialize_scheduler(device);
  // Weft queue i runs on Vulkan queue i % (the Vulkan queues made).
  device->queue_count = parsed.queue_count;
  for (uint32_t i = 0; i < device->queue_count; ++i) {
    context->vk.vkGetDeviceQueue(context->device, context->queue_family_index,
                                 i % context->queue_count,
                                 &device->queues[i].queue);
  }
  status = weft_vulkan_device_start_queue(device);
  if (!weft_status_is_ok(status)) {
    weft_vulkan_device_stop_queue(device);
    weft_vulkan_device_free(device);
    return status;
  }
  *out_device = &device->base;
  return WEFT_OK;
}

static const char* const kWeftVulkanOptionNames[] = {
    "device",        "name",           "validation", "gpu_waits", "queues",
    "staging_piece", "staging_pieces", NULL};

const weft_driver_t weft_vulkan_driver = {
    .name = "vulkan",
    .description =
        "Vulkan 1.2 devices with timeline semaphores (libvulkan.so.1, loaded "
        "at run time): semaphores the GPU waits on and signals, a "
        "completion thread that publishes them",
    .option_names = kWeftVulkanOptionNames,
    .create_device = weft_vulkan_driver_create_device,
};
