// weft vulkan driver: recording a dispatch into a Vulkan command buffer,
// for a DISPATCH op and for the dispatches of a command buffer alike.
//
// A dispatch binds the kernel's pipeline, pushes its descriptors (each
// binding's storage buffer from an offset the device's alignment allows,
// then the status slot) and its push constants (binding offsets within
// the bound ranges, binding lengths, constants), then dispatches; see
// WEFT_EXECUTABLE_FORMAT_SPIRV in weft/executable.h.
#ifndef WEFT_DRIVERS_VULKAN_VULKAN_DISPATCH_H_
#define WEFT_DRIVERS_VULKAN_VULKAN_DISPATCH_H_

#include "drivers/vulkan/vulkan_context.h"
#include "weft/buffer.h"
#include "weft/executable.h"

// Where a dispatch's kernel reports failure: a slot of a host-visible
// buffer.
typedef struct weft_vulkan_status_slot_t {
  VkBuffer buffer;
  VkDeviceSize offset;
} weft_vulkan_status_slot_t;

// Records a dispatch of kernel |ordinal| of |executable| (a vulkan
// executable, validated by the HAL) over |workgroup_count| workgroups with
// |constants| and |bindings| (resolved: no WEFT_WHOLE_BUFFER) into
// |command_buffer|. Nothing is recorded for a zero workgroup count; a
// grid past the device's maxComputeWorkGroupCount runs in pieces.
// INVALID_ARGUMENT for a binding at an offset that is not a multiple of 4
// or longer than a storage buffer range may be; what
// weft_vulkan_buffer_resolve says of a binding whose memory is not there.
// Nothing is recorded on failure.
weft_status_t weft_vulkan_record_dispatch(
    weft_vulkan_context_t* context, VkCommandBuffer command_buffer,
    const weft_executable_t* executable, uint32_t ordinal,
    const uint32_t workgroup_count[3], const uint32_t* constants,
    uint32_t binding_count, const weft_buffer_binding_t* bindings,
    weft_vulkan_status_slot_t status_slot);

#endif  // WEFT_DRIVERS_VULKAN_VULKAN_DISPATCH_H_
