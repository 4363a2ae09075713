// weft vulkan driver: buffers in a Vulkan device's memory.
//
// Three kinds, one vtable:
//  - device memory (the device-local memory type): what a buffer without
//    HOST_VISIBLE gets; the host cannot map it (its contents move through
//    the queue);
//  - host-visible coherent memory, mapped for the buffer's life: what
//    HOST_VISIBLE asks for; the host maps it, and CPU devices reach it;
//  - queue-ordered memory (weft_device_queue_alloca): the handle exists at
//    once, the memory between the ALLOCA and DEALLOCA ops.
// Every buffer is placed in its device's domain and holds a reference on
// the context (buffers may outlive their device). New buffers read as
// zeros, as on every driver.
#ifndef WEFT_DRIVERS_VULKAN_VULKAN_BUFFER_H_
#define WEFT_DRIVERS_VULKAN_VULKAN_BUFFER_H_

#include "drivers/vulkan/vulkan_context.h"
#include "hal/buffer_impl.h"
#include "hal/domain.h"

// Zeroes the whole of |buffer| on the device and waits for it: what a new
// buffer in memory the host cannot map needs (the device's queue).
typedef weft_status_t (*weft_vulkan_zero_fn_t)(void* user_data,
                                               VkBuffer buffer);

// Allocates a buffer of |byte_length| bytes for |params| in |domain|:
// host-visible memory when params.type asks for HOST_VISIBLE, device
// memory otherwise (zeroed through |zero_fn| when the host cannot map it).
weft_status_t weft_vulkan_buffer_allocate(weft_vulkan_context_t* context,
                                          weft_domain_t domain,
                                          weft_buffer_params_t params,
                                          weft_device_size_t byte_length,
                                          weft_vulkan_zero_fn_t zero_fn,
                                          void* zero_user_data,
                                          weft_allocator_t allocator,
                                          weft_buffer_t** out_buffer);

// Creates the handle of a queue-ordered buffer (no memory yet).
weft_status_t weft_vulkan_buffer_create_queue_ordered(
    weft_vulkan_context_t* context, weft_domain_t domain,
    weft_buffer_params_t params, weft_device_size_t byte_length,
    weft_allocator_t allocator, weft_buffer_t** out_buffer);

// The VkBuffer holding byte |offset| of |buffer| (relative to |buffer|, a
// subspan or a root) and that byte's offset in it. FAILED_PRECONDITION for
// a queue-ordered buffer outside its ALLOCA..DEALLOCA; INVALID_ARGUMENT for
// a buffer that is not a vulkan buffer (validation keeps those out).
weft_status_t weft_vulkan_buffer_resolve(const weft_buffer_t* buffer,
                                         weft_device_size_t offset,
                                         VkBuffer* out_buffer,
                                         VkDeviceSize* out_offset);

// True when |buffer| (or the buffer it is a subspan of) is a vulkan
// buffer of queue-ordered memory.
bool weft_vulkan_buffer_is_queue_ordered(const weft_buffer_t* buffer);

// ALLOCA: takes zeroed device memory for the queue-ordered |buffer|.
weft_status_t weft_vulkan_buffer_commit(weft_buffer_t* buffer,
                                        weft_vulkan_zero_fn_t zero_fn,
                                        void* zero_user_data);
// DEALLOCA: gives it back (every op that used it has completed).
weft_status_t weft_vulkan_buffer_decommit(weft_buffer_t* buffer);

#endif  // WEFT_DRIVERS_VULKAN_VULKAN_BUFFER_H_
