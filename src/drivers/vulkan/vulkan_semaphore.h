// weft vulkan driver: semaphores whose payload is a Vulkan timeline
// semaphore (seed 001's GPU-visible shared event, on Vulkan).
//
// A semaphore created by a vulkan device is a timeline VkSemaphore: that
// device's queue ops wait on it and signal it inside their submissions
// (the GPU moves it), the host signals it with vkSignalSemaphore and reads
// it with vkGetSemaphoreCounterValue. The base (semaphore_impl.h) mirrors
// the value for everything else: every move is published to it, by the
// host signal itself or by the device's completion thread when the op
// that signalled it completes, so timepoints, CPU devices and VM awaits
// see a Vulkan semaphore exactly as a host one.
//
// Failure: the base keeps the status; the payload is moved to a failure
// value that releases every wait on the VkSemaphore: the current value
// plus the largest step the device allows (maxTimelineSemaphoreValueDifference,
// 2^31 - 1 on some drivers), so that value is always a legal signal and at
// or above every legal wait. A Vulkan signal must be above the current
// value when it executes, so the failure value is written only once no
// signal of the device's ops is pending on the GPU; ops submitted after the
// failure leave the semaphore out of their GPU signals.
#ifndef WEFT_DRIVERS_VULKAN_VULKAN_SEMAPHORE_H_
#define WEFT_DRIVERS_VULKAN_VULKAN_SEMAPHORE_H_

#include <stdbool.h>

#include "base/mutex.h"
#include "drivers/vulkan/vulkan_context.h"
#include "hal/domain.h"
#include "hal/semaphore_impl.h"

typedef struct weft_vulkan_semaphore_t {
  weft_semaphore_t base;
  weft_vulkan_context_t* context;  // retained
  weft_domain_t domain;
  VkSemaphore timeline;
  // Guards the payload's bookkeeping below and orders host signals.
  weft_slim_mutex_t payload_mutex;
  // GPU signals submitted and not yet completed.
  uint32_t pending_signals;
  // The highest value the host signalled or a GPU signal was submitted
  // with: a new signal must be above it (Vulkan signals must exceed the
  // value when they execute).
  uint64_t signalled_value;
  bool failure_written;
} weft_vulkan_semaphore_t;

weft_status_t weft_vulkan_semaphore_create(weft_vulkan_context_t* context,
                                           weft_domain_t domain,
                                           uint64_t initial_value,
                                           weft_allocator_t allocator,
                                           weft_semaphore_t** out_semaphore);

// |semaphore| as a vulkan semaphore of a device in |domain|, or NULL.
weft_vulkan_semaphore_t* weft_vulkan_semaphore_cast(
    weft_semaphore_t* semaphore, weft_domain_t domain);

// Counts a GPU signal to |value| about to be submitted (*out_counted).
// Not counted when the semaphore has failed or is already at or past
// |value| (leave it out of the submission: the op signals it from the host
// when it completes, which fails it as a passed signal).
// INVALID_ARGUMENT, naming the semaphore and the limit, when |value| is
// further above the semaphore's value than the device's
// maxTimelineSemaphoreValueDifference (Vulkan forbids that signal; the op
// must not be submitted). Host signals are checked the same way.
weft_status_t weft_vulkan_semaphore_begin_signal(
    weft_vulkan_semaphore_t* semaphore, uint64_t value, bool* out_counted);
// The GPU signal counted by begin_signal completed (or was never
// submitted): writes the failure value if the semaphore failed meanwhile
// and this was the last.
void weft_vulkan_semaphore_end_signal(weft_vulkan_semaphore_t* semaphore);

#endif  // WEFT_DRIVERS_VULKAN_VULKAN_SEMAPHORE_H_
