// weft: the vulkan driver, any Vulkan 1.2 device with timeline semaphores
// through the system's loader (libvulkan.so.1, loaded at run time).
//
// Device strings: "vulkan" (physical device 0), "vulkan?device=N",
// "vulkan?name=llvmpipe" (the first whose name contains it), and
// "validation=on|off" (the Khronos validation layer; off by default),
// "queues=N" (1 to 8 weft queues over the Vulkan queues of the family, as
// many as it has; weft queue i on Vulkan queue i % that count),
// "gpu_waits=on|off" (off: every wait is met on the host before its op is
// submitted, the host round trip the GPU's own waits are measured
// against), "staging_piece=BYTES" and "staging_pieces=N" (file transfers).
// Where there is no loader or no suitable device, creating a device is
// UNAVAILABLE with the reason.
#ifndef WEFT_DRIVERS_VULKAN_VULKAN_DRIVER_H_
#define WEFT_DRIVERS_VULKAN_VULKAN_DRIVER_H_

#include "weft/driver.h"

extern const weft_driver_t weft_vulkan_driver;

#endif  // WEFT_DRIVERS_VULKAN_VULKAN_DRIVER_H_
