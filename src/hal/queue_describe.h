// weft: naming one queue operation in messages.
//
// An error or a cancellation names the op instance, not just its kind, so a
// user running the same command buffer in a loop knows which run failed:
//   queue_execute (waiting for 'iter' >= 50, signalling 'iter' = 51) on
//   queue 0 of device 'local-task'
// Every driver formats its ops this way (driver-neutral; no allocation).
#ifndef WEFT_HAL_QUEUE_DESCRIBE_H_
#define WEFT_HAL_QUEUE_DESCRIBE_H_

#include <stddef.h>
#include <stdint.h>

#include "weft/device.h"

// Room for an op's label; longer ones are cut short with "...".
#define WEFT_QUEUE_OP_LABEL_CAPACITY 384

// Which op: what a driver knows of any of its ops.
typedef struct weft_queue_op_identity_t {
  const char* op_name;  // "queue_fill"
  const weft_device_t* device;
  uint32_t queue_index;
  weft_semaphore_list_t wait_list;
  weft_semaphore_list_t signal_list;
} weft_queue_op_identity_t;

// Writes "OP (waiting for 'a' >= 1, signalling 'b' = 2) on queue Q of device
// 'ID'" into |buffer| (always NUL-terminated). The parenthesis is left out
// when both lists are empty; at most four entries of each list are named
// ("and 3 more").
void weft_queue_op_label(const weft_queue_op_identity_t* op, char* buffer,
                         size_t capacity);

#endif  // WEFT_HAL_QUEUE_DESCRIBE_H_
