// weft vulkan driver: timeline semaphores (see vulkan_semaphore.h).
#include "drivers/vulkan/vulkan_semaphore.h"

#include <inttypes.h>
#include <stdalign.h>
#include <string.h>

static void weft_vulkan_semaphore_destroy(weft_semaphore_t* base);
static uint64_t weft_vulkan_semaphore_query(weft_semaphore_t* base);
static weft_status_t weft_vulkan_semaphore_signal(weft_semaphore_t* base,
                                                  uint64_t value);
static void weft_vulkan_semaphore_fail(weft_semaphore_t* base);
static bool weft_vulkan_semaphore_is_native(const weft_semaphore_t* base,
                                            weft_domain_t domain);

static const weft_semaphore_vtable_t kWeftVulkanSemaphoreVtable = {
    .destroy = weft_vulkan_semaphore_destroy,
    .query = weft_vulkan_semaphore_query,
    .signal = weft_vulkan_semaphore_signal,
    .fail = weft_vulkan_semaphore_fail,
    .is_native = weft_vulkan_semaphore_is_native,
};

weft_status_t weft_vulkan_semaphore_create(weft_vulkan_context_t* context,
                                           weft_domain_t domain,
                                           uint64_t initial_value,
                                           weft_allocator_t allocator,
                                           weft_semaphore_t** out_semaphore) {
  *out_semaphore = NULL;
  VkSemaphore timeline = VK_NULL_HANDLE;
  weft_status_t status =
      weft_vulkan_context_create_timeline(context, initial_value, &timeline);
  weft_vulkan_semaphore_t* semaphore = NULL;
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc_aligned(
        allocator, sizeof(*semaphore), alignof(weft_vulkan_semaphore_t),
        (void**)&semaphore);
    if (!weft_status_is_ok(status)) {
      context->vk.vkDestroySemaphore(context->device, timeline, NULL);
    }
  }
  if (!weft_status_is_ok(status)) return status;
  weft_semaphore_initialize(&kWeftVulkanSemaphoreVtable, allocator,
                            initial_value, &semaphore->base);
  weft_vulkan_context_retain(context);
  semaphore->context = context;
  semaphore->domain = domain;
  semaphore->timeline = timeline;
  weft_slim_mutex_initialize(&semaphore->payload_mutex);
  semaphore->pending_signals = 0;
  semaphore->signalled_value = initial_value;
  semaphore->failure_written = false;
  *out_semaphore = &semaphore->base;
  return WEFT_OK;
}

static void weft_vulkan_semaphore_destroy(weft_semaphore_t* base) {
  weft_vulkan_semaphore_t* semaphore = (weft_vulkan_semaphore_t*)base;
  weft_vulkan_context_t* context = semaphore->context;
  context->vk.vkDestroySemaphore(context->device, semaphore->timeline, NULL);
  weft_slim_mutex_deinitialize(&semaphore->payload_mutex);
  weft_semaphore_deinitialize(base);
  weft_allocator_free_aligned(base->allocator, semaphore);
  weft_vulkan_context_release(context);
}

weft_vulkan_semaphore_t* weft_vulkan_semaphore_cast(
    weft_semaphore_t* semaphore, weft_domain_t domain) {
  if (weft_semaphore_vtable(semaphore) != &kWeftVulkanSemaphoreVtable) {
    return NULL;
  }
  return weft_semaphore_is_native(semaphore, domain)
             ? (weft_vulkan_semaphore_t*)semaphore
             : NULL;
}

static bool weft_vulkan_semaphore_is_native(const weft_semaphore_t* base,
                                            weft_domain_t domain) {
  return ((const weft_vulkan_semaphore_t*)base)->domain == domain;
}

static uint64_t weft_vulkan_semaphore_query(weft_semaphore_t* base) {
  weft_vulkan_semaphore_t* semaphore = (weft_vulkan_semaphore_t*)base;
  weft_vulkan_context_t* context = semaphore->context;
  uint64_t value = 0;
  if (context->vk.vkGetSemaphoreCounterValue(
          context->device, semaphore->timeline, &value) == VK_SUCCESS) {
    // Quietly nothing once failed (the failure value is not a value).
    weft_semaphore_publish_value(base, value);
  }
  uint64_t current = 0;
  weft_semaphore_peek(base, &current);
  return current;
}

// INVALID_ARGUMENT when a signal to |value| is further above |current|
// than the device allows a timeline to move at once.
static weft_status_t weft_vulkan_semaphore_check_difference(
    weft_vulkan_semaphore_t* semaphore, uint64_t current,
    uint64_t value) {
  const uint64_t limit = semaphore->context->max_timeline_difference;
  if (value <= current || value - current <= limit) return WEFT_OK;
  char label[WEFT_SEMAPHORE_LABEL_CAPACITY];
  weft_semaphore_label(&semaphore->base, label, sizeof(label));
  return WEFT_STATUS(INVALID_ARGUMENT,
                     "signal of vulkan semaphore %s to %" PRIu64
                     ": %" PRIu64 " above its value %" PRIu64
                     ", more than the device's "
                     "maxTimelineSemaphoreValueDifference (%" PRIu64 ")",
                     label, value, value - current, current, limit);
}

static weft_status_t weft_vulkan_semaphore_signal(weft_semaphore_t* base,
                                                  uint64_t value) {
  weft_vulkan_semaphore_t* semaphore = (weft_vulkan_semaphore_t*)base;
  weft_vulkan_context_t* context = semaphore->context;
  weft_status_t status = WEFT_OK;
  weft_slim_mutex_lock(&semaphore->payload_mutex);
  uint64_t current = 0;
  weft_semaphore_peek(base, &current);
  if (semaphore->failure_written) {
    // Failed meanwhile: the base reports it to the caller's next look.
  } else if (!weft_status_is_ok(
                 status = weft_vulkan_semaphore_check_difference(
                     semaphore, current, value))) {
    // Too far ahead for the device.
  } else if (value <= semaphore->signalled_value) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "vulkan semaphore: host signal to %" PRIu64
                         " but it is already signalled to %" PRIu64
                         " (by the host or by an op submitted to the GPU)",
                         value, semaphore->signalled_value);
  } else {
    const VkSemaphoreSignalInfo signal_info = {
        .sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO,
        .semaphore = semaphore->timeline,
        .value = value,
    };
    status = WEFT_VK_CALL(&context->vk,
                          vkSignalSemaphore(context->device, &signal_info));
    if (weft_status_is_ok(status)) semaphore->signalled_value = value;
  }
  weft_slim_mutex_unlock(&semaphore->payload_mutex);
  if (weft_status_is_ok(status)) weft_semaphore_publish_value(base, value);
  return status;
}

// Moves the payload to the failure value. Called with the payload mutex
// held, once no GPU signal is pending.
static void weft_vulkan_semaphore_write_failure_locked(
    weft_vulkan_semaphore_t* semaphore) {
  weft_vulkan_context_t* context = semaphore->context;
  uint64_t current = 0;
  if (context->vk.vkGetSemaphoreCounterValue(
          context->device, semaphore->timeline, &current) != VK_SUCCESS) {
    return;  // a lost device: nothing waits on it any more
  }
  uint64_t step = context->max_timeline_difference;
  if (step > UINT64_MAX - current) step = UINT64_MAX - current;
  semaphore->failure_written = true;
  if (step == 0) return;
  const VkSemaphoreSignalInfo signal_info = {
      .sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO,
      .semaphore = semaphore->timeline,
      .value = current + step,
  };
  weft_status_ignore(WEFT_VK_CALL(
      &context->vk, vkSignalSemaphore(context->device, &signal_info)));
}

static void weft_vulkan_semaphore_fail(weft_semaphore_t* base) {
  weft_vulkan_semaphore_t* semaphore = (weft_vulkan_semaphore_t*)base;
  weft_slim_mutex_lock(&semaphore->payload_mutex);
  if (!semaphore->failure_written && semaphore->pending_signals == 0) {
    weft_vulkan_semaphore_write_failure_locked(semaphore);
  }
  weft_slim_mutex_unlock(&semaphore->payload_mutex);
}

weft_status_t weft_vulkan_semaphore_begin_signal(
    weft_vulkan_semaphore_t* semaphore, uint64_t value, bool* out_counted) {
  *out_counted = false;
  uint64_t current = 0;
  weft_slim_mutex_lock(&semaphore->payload_mutex);
  // The base's flag is set before its fail hook takes this mutex: a
  // failure either shows here or finds this signal pending.
  const bool failed = weft_semaphore_peek(&semaphore->base, &current) ||
                      semaphore->failure_written;
  const bool native =
      !failed && value > current && value > semaphore->signalled_value;
  // The base's value is at or below the payload's, so the difference
  // checked is at least the real one.
  weft_status_t status =
      native ? weft_vulkan_semaphore_check_difference(semaphore, current, value)
             : WEFT_OK;
  if (native && weft_status_is_ok(status)) {
    ++semaphore->pending_signals;
    semaphore->signalled_value = value;
    *out_counted = true;
  }
  weft_slim_mutex_unlock(&semaphore->payload_mutex);
  return status;
}

void weft_vulkan_semaphore_end_signal(weft_vulkan_semaphore_t* semaphore) {
  uint64_t current = 0;
  weft_slim_mutex_lock(&semaphore->payload_mutex);
  --semaphore->pending_signals;
  if (semaphore->pending_signals == 0 && !semaphore->failure_written &&
      weft_semaphore_peek(&semaphore->base, &current)) {
    weft_vulkan_semaphore_write_failure_locked(semaphore);
  }
  weft_slim_mutex_unlock(&semaphore->payload_mutex);
}
