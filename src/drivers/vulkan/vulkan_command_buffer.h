// weft vulkan driver: reusable command buffers recorded once into a
// secondary Vulkan command buffer.
//
// At end() a reusable command buffer recorded for a vulkan device gets a
// recording (its driver data) when it can be recorded once: every
// reference direct (no binding table to resolve per execute), no
// queue-ordered buffer (its VkBuffer lives only between ALLOCA and
// DEALLOCA), and no command that needs staging (an unaligned fill, an
// update that is unaligned or over 64 KiB). The first execute records the
// secondary command buffer, with its dispatches reporting into the
// recording's own status slots; every execute then runs it from the op's
// command buffer (vkCmdExecuteCommands). The status slots are one set, so
// one execute at a time holds the recording (claimed at issue, given back
// at completion); another execute of it meanwhile, and every execute of a
// command buffer without a recording, records the commands into the op's
// own command buffer as before.
#ifndef WEFT_DRIVERS_VULKAN_VULKAN_COMMAND_BUFFER_H_
#define WEFT_DRIVERS_VULKAN_VULKAN_COMMAND_BUFFER_H_

#include <stdbool.h>

#include "base/atomics.h"
#include "drivers/vulkan/vulkan_context.h"
#include "hal/domain.h"
#include "hal/device_impl.h"
#include "weft/command_buffer.h"

typedef struct weft_vulkan_recording_t {
  weft_vulkan_context_t* context;  // retained
  weft_domain_t domain;
  weft_allocator_t allocator;
  // The recording's own pool: the command buffer may outlive the device.
  VkCommandPool pool;
  VkCommandBuffer secondary;  // recorded at the first execute
  bool recorded;
  // Recording failed once: every execute records into its op instead.
  bool broken;
  // One slot per dispatch (at least one), |status_stride| bytes apart.
  uint32_t status_slot_count;
  VkDeviceSize status_stride;
  VkBuffer status_buffer;
  VkDeviceMemory status_memory;
  uint8_t* status_mapping;
  // 1 while an execute holds it.
  weft_atomic_uint32_t claimed;
} weft_vulkan_recording_t;

// The device's command_buffer_finalize hook: attaches a recording to a
// reusable |command_buffer| that can be recorded once; nothing otherwise.
weft_status_t weft_vulkan_command_buffer_finalize(
    weft_device_t* device, weft_command_buffer_t* command_buffer);

// Claims |command_buffer|'s recording for one execute on a device of
// |domain|; NULL when it has none for that domain, it is broken, or
// another execute holds it.
weft_vulkan_recording_t* weft_vulkan_recording_claim(
    const weft_command_buffer_t* command_buffer, weft_domain_t domain);

// Gives back a claim (the execute completed, or never reached the GPU).
void weft_vulkan_recording_release(weft_vulkan_recording_t* recording);

#endif  // WEFT_DRIVERS_VULKAN_VULKAN_COMMAND_BUFFER_H_
