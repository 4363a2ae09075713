// weft vulkan driver: file reads and writes through host-visible staging.
//
// A READ or WRITE whose waits are reached goes to the device's transfer
// thread (vulkan_queue.c), which runs it here through the HAL's staged
// transfer (hal/gpu/staged_transfer.h: the pipeline and the file side,
// several pieces in flight on a proactor). This file supplies the device
// side: one host-visible buffer of pieces, a command buffer per piece from
// a pool of the transfer thread's own, and a private timeline the copies
// signal, which the thread waits on before it uses a piece again. The
// transfer returns when every copy landed, so the op's signals follow its
// bytes.
#ifndef WEFT_DRIVERS_VULKAN_VULKAN_FILE_H_
#define WEFT_DRIVERS_VULKAN_VULKAN_FILE_H_

#include "async/proactor.h"
#include "drivers/vulkan/vulkan_context.h"
#include "hal/queue_op.h"

typedef struct weft_vulkan_device_t weft_vulkan_device_t;

// What the transfer thread keeps between transfers: made at the first one,
// used by that thread only (the queue itself under the device mutex).
typedef struct weft_vulkan_staging_ring_t {
  uint32_t piece_size;
  uint32_t piece_count;
  VkBuffer buffer;
  VkDeviceMemory memory;
  uint8_t* mapping;
  VkCommandPool pool;
  VkCommandBuffer* commands;  // one per piece
  uint64_t* values;           // |timeline| value of each piece's last copy
  VkSemaphore timeline;
  uint64_t timeline_value;
  // NULL when none could be made: transfers are then synchronous on the
  // transfer thread.
  weft_proactor_t* proactor;
} weft_vulkan_staging_ring_t;

// Moves the bytes of READ or WRITE |op| between its file and its buffer
// and waits for the last copy. The first error (a short read names the
// file and the offset; Vulkan's errors name the call).
weft_status_t weft_vulkan_file_transfer(weft_vulkan_device_t* device,
                                        const weft_queue_op_t* op);

// Frees the ring (waits for its copies first).
void weft_vulkan_staging_ring_free(weft_vulkan_device_t* device);

#endif  // WEFT_DRIVERS_VULKAN_VULKAN_FILE_H_
