// weft: queue-operation bodies shared by the CPU drivers (see queue_ops.h).
#include "hal/local/queue_ops.h"

#include <inttypes.h>
#include <string.h>

#include "base/trace.h"
#include "hal/buffer_impl.h"
#include "hal/device_impl.h"
#include "hal/semaphore_impl.h"

weft_status_t weft_local_queue_read(weft_file_t* file, uint64_t file_offset,
                                    weft_buffer_t* buffer,
                                    weft_device_size_t buffer_offset,
                                    weft_device_size_t length) {
  weft_status_t status = WEFT_OK;
  uint8_t* memory = (uint8_t*)weft_file_memory(file);
  if (length == 0) {
    // Nothing to move.
  } else if (memory) {
    status = weft_buffer_transfer_write(
        buffer, buffer_offset, memory + file_offset, length, "queue_read");
  } else {
    weft_buffer_mapping_t mapping;
    memset(&mapping, 0, sizeof(mapping));
    status = weft_buffer_map_range_unchecked(buffer, WEFT_MEMORY_ACCESS_WRITE,
                                             buffer_offset, length,
                                             "queue_read", &mapping);
    if (weft_status_is_ok(status)) {
      status = weft_file_read(file, file_offset, mapping.contents, length);
      weft_buffer_unmap_range(&mapping);
    }
  }
  return status;
}

weft_status_t weft_local_queue_write(weft_buffer_t* buffer,
                                     weft_device_size_t buffer_offset,
                                     weft_file_t* file, uint64_t file_offset,
                                     weft_device_size_t length) {
  weft_status_t status = WEFT_OK;
  uint8_t* memory = (uint8_t*)weft_file_memory(file);
  if (length == 0) {
    // Nothing to move.
  } else if (memory) {
    status = weft_buffer_transfer_read(
        buffer, buffer_offset, memory + file_offset, length, "queue_write");
  } else {
    weft_buffer_mapping_t mapping;
    memset(&mapping, 0, sizeof(mapping));
    status = weft_buffer_map_range_unchecked(buffer, WEFT_MEMORY_ACCESS_READ,
                                             buffer_offset, length,
                                             "queue_write", &mapping);
    if (weft_status_is_ok(status)) {
      status = weft_file_write(file, file_offset, mapping.contents, length);
      weft_buffer_unmap_range(&mapping);
    }
  }
  return status;
}

// Fails |semaphore| because |op| could not signal it to |value|: it had
// already passed it (unless it failed meanwhile: then its failure stays).
static void weft_local_queue_fail_passed_signal(
    const weft_queue_op_identity_t* op, weft_semaphore_t* semaphore,
    uint64_t value) {
  uint64_t current_value = 0;
  weft_status_t query_status = weft_semaphore_query(semaphore, &current_value);
  if (weft_status_is_ok(query_status)) {
    char op_label[WEFT_QUEUE_OP_LABEL_CAPACITY];
    weft_queue_op_label(op, op_label, sizeof(op_label));
    char label[WEFT_SEMAPHORE_LABEL_CAPACITY];
    weft_semaphore_label(semaphore, label, sizeof(label));
    weft_semaphore_fail(
        semaphore,
        WEFT_STATUS(INVALID_ARGUMENT,
                    "%s could not signal semaphore %s to %" PRIu64
                    ": it was already at %" PRIu64
                    " (another operation or the host signalled past it after "
                    "the op was submitted)",
                    op_label, label, value, current_value));
  }
  weft_status_free(query_status);
}

void weft_local_queue_signal_or_fail(const weft_queue_op_identity_t* op,
                                     weft_status_t status) {
  const weft_semaphore_list_t signal_list = op->signal_list;
  if (weft_status_is_ok(status)) {
    for (uint32_t i = 0; i < signal_list.count; ++i) {
      // A signal fails only when the semaphore failed (the failure stays)
      // or passed the value; the others are signalled regardless, so
      // nothing waits forever.
      weft_status_t signal_status = weft_semaphore_signal(
          signal_list.semaphores[i], signal_list.values[i]);
      if (!weft_status_is_ok(signal_status)) {
        weft_status_free(signal_status);
        weft_local_queue_fail_passed_signal(op, signal_list.semaphores[i],
                                            signal_list.values[i]);
      }
    }
  } else {
    weft_semaphore_list_fail(signal_list, status);
  }
}

weft_status_t weft_local_queue_annotate_error(const weft_queue_op_identity_t* op,
                                              bool is_host_call,
                                              weft_status_t status) {
  if (!weft_status_is_ok(status)) {
    bool names_op =
        is_host_call || strncmp(weft_status_message(status), op->op_name,
                                strlen(op->op_name)) == 0;
    char op_label[WEFT_QUEUE_OP_LABEL_CAPACITY];
    weft_queue_op_label(op, op_label, sizeof(op_label));
    status = weft_status_annotate(status, "%s %s",
                                  names_op ? "in" : "while running", op_label);
  }
  return status;
}

// Annotates a wait's failure (consumed, returned) that kept |op| from
// running: "...; so queue_fill (...) on queue 0 of device 'X' did not run".
static weft_status_t weft_local_queue_annotate_not_run(
    const weft_queue_op_identity_t* op, weft_status_t status) {
  char op_label[WEFT_QUEUE_OP_LABEL_CAPACITY];
  weft_queue_op_label(op, op_label, sizeof(op_label));
  return weft_status_annotate(status, "so %s did not run", op_label);
}

weft_status_t weft_local_queue_cancelled(const weft_queue_op_identity_t* op,
                                         bool while_waiting) {
  char op_label[WEFT_QUEUE_OP_LABEL_CAPACITY];
  weft_queue_op_label(op, op_label, sizeof(op_label));
  return WEFT_STATUS(CANCELLED,
                     "%s was cancelled: the device was released %s", op_label,
                     while_waiting ? "while it waited" : "before it ran");
}

weft_status_t weft_local_queue_not_run_status(
    const weft_queue_op_identity_t* op, weft_status_t wait_status,
    bool swept) {
  weft_status_t status = wait_status;
  if (swept && weft_status_is(status, WEFT_STATUS_CANCELLED)) {
    // The sweep's own message names the op already.
  } else if (!weft_status_is_ok(status)) {
    status = weft_local_queue_annotate_not_run(op, status);
  } else {
    status = weft_local_queue_cancelled(op, /*while_waiting=*/false);
  }
  return status;
}

weft_status_t weft_local_queue_host_call(
    weft_device_t* device, weft_queue_affinity_t affinity,
    weft_host_call_fn_t fn, void* user_data, const uint64_t args[4],
    weft_host_call_flags_t flags, const weft_queue_op_identity_t* op,
    bool* out_ended) {
  const weft_semaphore_list_t signal_list = op->signal_list;
  weft_fence_t* fence = NULL;
  weft_status_t status =
      weft_fence_create(signal_list.count, device->host_allocator, &fence);
  for (uint32_t i = 0; weft_status_is_ok(status) && i < signal_list.count;
       ++i) {
    status = weft_fence_insert(fence, signal_list.semaphores[i],
                               signal_list.values[i]);
  }
  if (weft_status_is_ok(status)) {
    weft_host_call_context_t context = {
        .device = device,
        .affinity = affinity,
        .signal_fence = fence,
    };
    if (flags & WEFT_HOST_CALL_FLAG_NON_BLOCKING) {
      // Signal first; the call's result (DEFERRED too) is dropped.
      weft_local_queue_signal_or_fail(op, WEFT_OK);
      *out_ended = true;
      WEFT_TRACE_BEGIN(WEFT_TRACE_CATEGORY_HOST, "host call");
      weft_status_ignore(fn(user_data, args, &context));
      WEFT_TRACE_END();
    } else {
      WEFT_TRACE_BEGIN(WEFT_TRACE_CATEGORY_HOST, "host call");
      status = fn(user_data, args, &context);
      WEFT_TRACE_END();
      if (weft_status_is(status, WEFT_STATUS_DEFERRED)) {
        // The callback retained the fence and signals or fails it later.
        weft_status_ignore(status);
        status = WEFT_OK;
        *out_ended = true;
      }
    }
  }
  weft_fence_release(fence);
  return status;
}
