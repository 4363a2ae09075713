// weft: how a GPU kernel reports failure (see kernel_status.h).
#include "hal/gpu/kernel_status.h"

#include "hal/command_buffer_impl.h"
#include "hal/executable_impl.h"
#include "hal/queue_completion.h"

bool weft_gpu_status_ring_acquire(weft_gpu_status_ring_t* ring, uint32_t count,
                                  uint32_t* out_first) {
  if (ring->ops == 0) ring->head = ring->tail = 0;
  const uint32_t capacity = ring->capacity;
  const uint32_t head = ring->head;
  const uint32_t tail = ring->tail;
  uint32_t first = 0;
  if (ring->ops == 0 || tail > head) {
    // In use: [head, tail). Room at the end, or from the start up to one
    // before |head| (a full ring must never look empty).
    if (capacity - tail >= count) {
      first = tail;
    } else if (head > count) {
      first = 0;  // wrap: the slots past |tail| stay unused this round
    } else {
      return false;
    }
  } else if (head - tail > count) {
    // Wrapped: in use [head, capacity) and [0, tail).
    first = tail;
  } else {
    return false;
  }
  ring->tail = first + count;
  ++ring->ops;
  *out_first = first;
  return true;
}

void weft_gpu_status_ring_release(weft_gpu_status_ring_t* ring, uint32_t first,
                                  uint32_t count) {
  ring->head = first + count;
  if (--ring->ops == 0) ring->head = ring->tail = 0;
}

void weft_gpu_status_ring_unacquire(weft_gpu_status_ring_t* ring,
                                    uint32_t first) {
  ring->tail = first;
  if (--ring->ops == 0) ring->head = ring->tail = 0;
}

uint32_t weft_gpu_kernel_status_slot_count(const weft_queue_op_t* op) {
  if (op->kind == WEFT_QUEUE_OP_DISPATCH) return 1;
  if (op->kind != WEFT_QUEUE_OP_EXECUTE) return 0;
  uint32_t count = 0;
  const weft_command_t* commands =
      weft_command_buffer_commands(op->execute.command_buffer, &count);
  uint32_t dispatches = 0;
  for (uint32_t i = 0; i < count; ++i) {
    dispatches += commands[i].type == WEFT_COMMAND_TYPE_DISPATCH;
  }
  return dispatches ? dispatches : 1;
}

weft_status_t weft_gpu_kernel_failure(const weft_queue_op_t* op,
                                      const volatile void* slots,
                                      size_t stride, uint32_t count) {
  // Volatile: the GPU wrote them behind the compiler's back.
  const volatile uint8_t* bytes = (const volatile uint8_t*)slots;
  const volatile weft_gpu_kernel_status_t* failed = NULL;
  uint32_t failed_index = 0;
  for (uint32_t i = 0; i < count && !failed; ++i) {
    const volatile weft_gpu_kernel_status_t* slot =
        (const volatile weft_gpu_kernel_status_t*)(bytes + i * stride);
    if (slot->code != 0) {
      failed = slot;
      failed_index = i;
    }
  }
  if (!failed) return WEFT_OK;
  const weft_executable_t* executable = NULL;
  uint32_t ordinal = 0;
  uint32_t command_index = UINT32_MAX;
  if (op->kind == WEFT_QUEUE_OP_DISPATCH) {
    executable = op->dispatch.executable;
    ordinal = op->dispatch.kernel_ordinal;
  } else if (op->kind == WEFT_QUEUE_OP_EXECUTE) {
    uint32_t command_count = 0;
    const weft_command_t* commands = weft_command_buffer_commands(
        op->execute.command_buffer, &command_count);
    uint32_t dispatch_index = 0;
    for (uint32_t i = 0; i < command_count && command_index == UINT32_MAX;
         ++i) {
      if (commands[i].type != WEFT_COMMAND_TYPE_DISPATCH) continue;
      if (dispatch_index++ == failed_index) {
        command_index = i;
        executable = commands[i].dispatch.executable;
        ordinal = commands[i].dispatch.kernel_ordinal;
      }
    }
  }
  const weft_kernel_info_t* info =
      executable ? weft_executable_kernel_info(executable, ordinal) : NULL;
  weft_status_t status = WEFT_STATUS(
      INTERNAL,
      "kernel '%s' (library '%s') failed in workgroup (%u, %u, %u) with "
      "code %d",
      info ? info->name : "?",
      executable ? weft_executable_name(executable) : "?", failed->block[0],
      failed->block[1], failed->block[2], (int)failed->code);
  if (command_index != UINT32_MAX) {
    status = weft_command_buffer_annotate_command(op->execute.command_buffer,
                                                  command_index, status);
  }
  return weft_queue_op_annotate_error(op, status);
}
