// weft: validation of queue operations shared by every driver.
#include "hal/queue_validation.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/arguments.h"
#include "hal/buffer_impl.h"
#include "hal/buffer_validation.h"
#include "hal/command_buffer_impl.h"
#include "hal/device_impl.h"
#include "hal/executable_impl.h"
#include "hal/semaphore_impl.h"

// Returns |status| (consumed) with its message prefixed "|op_name|: " so
// that errors from the file layer read like every other queue error.
static weft_status_t weft_queue_prefix_status(const char* op_name,
                                              weft_status_t status) {
  weft_status_t prefixed = WEFT_OK;
  if (!weft_status_is_ok(status)) {
    prefixed =
        weft_status_make_(__FILE__, __LINE__, weft_status_code(status),
                          "%s: %s", op_name, weft_status_message(status));
    weft_status_free(status);
  }
  return prefixed;
}

// Checks that no entry of |signal_list| can never be signalled: a value at
// or below the semaphore's current value (the semaphore could only move
// backwards), or at or below a value the same op waits for on the same
// semaphore (the op cannot run before the semaphore passed it). A semaphore
// that has failed is left alone: the op will fail with it.
static weft_status_t weft_queue_validate_signal_values(
    const char* function, weft_semaphore_list_t wait_list,
    weft_semaphore_list_t signal_list) {
  weft_status_t status = WEFT_OK;
  for (uint32_t i = 0; weft_status_is_ok(status) && i < signal_list.count;
       ++i) {
    weft_semaphore_t* semaphore = signal_list.semaphores[i];
    const uint64_t value = signal_list.values[i];
    uint64_t current_value = 0;
    const bool failed = weft_semaphore_peek(semaphore, &current_value);
    char label[WEFT_SEMAPHORE_LABEL_CAPACITY];
    if (!failed && value <= current_value) {
      weft_semaphore_label(semaphore, label, sizeof(label));
      status = WEFT_STATUS(INVALID_ARGUMENT,
                           "%s: signal_list[%" PRIu32 "] signals semaphore %s "
                           "to %" PRIu64 " but it is already at %" PRIu64
                           " (a signal must move a semaphore forward)",
                           function, i, label, value, current_value);
    }
    for (uint32_t j = 0; weft_status_is_ok(status) && j < wait_list.count;
         ++j) {
      if (wait_list.semaphores[j] == semaphore &&
          wait_list.values[j] >= value) {
        weft_semaphore_label(semaphore, label, sizeof(label));
        status = WEFT_STATUS(
            INVALID_ARGUMENT,
            "%s: signal_list[%" PRIu32 "] signals semaphore %s to %" PRIu64
            " but wait_list[%" PRIu32 "] waits for it to reach %" PRIu64
            " first, so the signal could only move it backwards",
            function, i, label, value, j, wait_list.values[j]);
      }
    }
  }
  return status;
}

weft_status_t weft_queue_validate_common(const char* function,
                                         weft_device_t* device,
                                         weft_queue_affinity_t affinity,
                                         weft_semaphore_list_t wait_list,
                                         weft_semaphore_list_t signal_list) {
  weft_status_t status = weft_arguments_require(
      function, "device", (const void* const[]){device}, 1);
  if (weft_status_is_ok(status) && affinity == 0) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "%s: queue affinity is 0 (no queue may run it; use "
                         "WEFT_QUEUE_AFFINITY_ANY)",
                         function);
  }
  if (weft_status_is_ok(status)) {
    status = weft_semaphore_list_check(function, "wait_list", wait_list);
  }
  if (weft_status_is_ok(status)) {
    status = weft_semaphore_list_check(function, "signal_list", signal_list);
  }
  if (weft_status_is_ok(status)) {
    status = weft_queue_validate_signal_values(function, wait_list,
                                               signal_list);
  }
  return status;
}

weft_status_t weft_queue_validate_alloca(weft_buffer_params_t params,
                                         weft_device_size_t byte_length,
                                         weft_buffer_t** out_buffer) {
  weft_status_t status = WEFT_OK;
  if (!out_buffer) {
    status = WEFT_STATUS(INVALID_ARGUMENT, "weft_device_queue_alloca: out_buffer is NULL");
  } else if (byte_length == 0 || byte_length == WEFT_WHOLE_BUFFER) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "weft_device_queue_alloca: byte length %llu is not a size "
                         "(must be > 0)",
                         (unsigned long long)byte_length);
  }
  (void)params;
  return status;
}

weft_status_t weft_queue_validate_dealloca(weft_buffer_t* buffer) {
  weft_status_t status = WEFT_OK;
  if (!buffer) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "weft_device_queue_dealloca: buffer is NULL");
  } else if (!weft_buffer_is_queue_ordered_root(buffer)) {
    const bool subspan = weft_buffer_placement(buffer).flags &
                         WEFT_BUFFER_PLACEMENT_QUEUE_ORDERED;
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "weft_device_queue_dealloca: the buffer (%" PRIu64
                         " bytes) was not returned by queue_alloca%s",
                         (uint64_t)buffer->byte_length,
                         subspan ? " (it is a subspan of one)" : "");
  }
  return status;
}

// Checks |buffer| is non-NULL, has |usage| and that the range fits.
// |role| names the buffer in messages ("target", "source").
static weft_status_t weft_queue_validate_buffer(
    const char* op_name, const char* role, const weft_buffer_t* buffer,
    weft_buffer_usage_t usage, weft_device_size_t offset,
    weft_device_size_t length, weft_device_size_t* out_length) {
  weft_status_t status = WEFT_OK;
  if (!buffer) {
    status =
        WEFT_STATUS(INVALID_ARGUMENT, "%s: %s buffer is NULL", op_name, role);
  }
  if (weft_status_is_ok(status)) {
    status = weft_buffer_validate_usage(buffer, usage, op_name);
  }
  if (weft_status_is_ok(status)) {
    status =
        weft_buffer_validate_range(buffer, offset, length, op_name, out_length);
  }
  return status;
}

weft_status_t weft_queue_validate_fill(
    weft_buffer_t* target, weft_device_size_t offset, weft_device_size_t length,
    const void* pattern, uint32_t pattern_length, uint32_t* out_pattern,
    weft_device_size_t* out_length) {
  weft_status_t status = weft_queue_validate_buffer(
      "weft_device_queue_fill", "target", target, WEFT_BUFFER_USAGE_TRANSFER_TARGET, offset,
      length, out_length);
  if (weft_status_is_ok(status)) {
    status = weft_buffer_validate_fill_pattern(offset, *out_length,
                                               pattern_length, "weft_device_queue_fill");
  }
  if (weft_status_is_ok(status) && !pattern) {
    status = WEFT_STATUS(INVALID_ARGUMENT, "weft_device_queue_fill: pattern is NULL");
  }
  if (weft_status_is_ok(status)) {
    *out_pattern = 0;
    memcpy(out_pattern, pattern, pattern_length);
  }
  return status;
}

weft_status_t weft_queue_validate_update(const void* source,
                                         weft_buffer_t* target,
                                         weft_device_size_t offset,
                                         weft_device_size_t length,
                                         weft_device_size_t* out_length) {
  weft_status_t status = WEFT_OK;
  if (length == WEFT_WHOLE_BUFFER) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "weft_device_queue_update: length must be the size of the host "
                         "data, not WEFT_WHOLE_BUFFER");
  }
  if (weft_status_is_ok(status)) {
    status = weft_queue_validate_buffer("weft_device_queue_update", "target", target,
                                        WEFT_BUFFER_USAGE_TRANSFER_TARGET,
                                        offset, length, out_length);
  }
  if (weft_status_is_ok(status) && !source && *out_length > 0) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "weft_device_queue_update: source is NULL for %llu bytes",
                         (unsigned long long)*out_length);
  }
  return status;
}

weft_status_t weft_queue_validate_copy(weft_buffer_t* source,
                                       weft_device_size_t source_offset,
                                       weft_buffer_t* target,
                                       weft_device_size_t target_offset,
                                       weft_device_size_t length,
                                       weft_device_size_t* out_length) {
  weft_device_size_t source_length = 0;
  weft_status_t status = weft_queue_validate_buffer(
      "weft_device_queue_copy", "source", source, WEFT_BUFFER_USAGE_TRANSFER_SOURCE,
      source_offset, length, &source_length);
  if (weft_status_is_ok(status)) {
    // A whole-buffer length resolves against the source; the target must
    // then hold that many bytes.
    status = weft_queue_validate_buffer(
        "weft_device_queue_copy", "target", target, WEFT_BUFFER_USAGE_TRANSFER_TARGET,
        target_offset, source_length, out_length);
  }
  if (weft_status_is_ok(status)) {
    status = weft_buffer_validate_copy_overlap(source, source_offset, target,
                                               target_offset, *out_length,
                                               "weft_device_queue_copy");
  }
  return status;
}

weft_status_t weft_queue_validate_read(weft_file_t* file, uint64_t file_offset,
                                       weft_buffer_t* target,
                                       weft_device_size_t target_offset,
                                       weft_device_size_t length,
                                       weft_device_size_t* out_length) {
  weft_status_t status = WEFT_OK;
  if (!file) {
    status = WEFT_STATUS(INVALID_ARGUMENT, "weft_device_queue_read: file is NULL");
  }
  if (weft_status_is_ok(status)) {
    status = weft_queue_validate_buffer("weft_device_queue_read", "target", target,
                                        WEFT_BUFFER_USAGE_TRANSFER_TARGET,
                                        target_offset, length, out_length);
  }
  if (weft_status_is_ok(status)) {
    status = weft_queue_prefix_status(
        "weft_device_queue_read", weft_file_validate_read(file, file_offset, *out_length));
  }
  return status;
}

weft_status_t weft_queue_validate_write(weft_buffer_t* source,
                                        weft_device_size_t source_offset,
                                        weft_file_t* file, uint64_t file_offset,
                                        weft_device_size_t length,
                                        weft_device_size_t* out_length) {
  weft_status_t status = WEFT_OK;
  if (!file) {
    status = WEFT_STATUS(INVALID_ARGUMENT, "weft_device_queue_write: file is NULL");
  }
  if (weft_status_is_ok(status)) {
    status = weft_queue_validate_buffer("weft_device_queue_write", "source", source,
                                        WEFT_BUFFER_USAGE_TRANSFER_SOURCE,
                                        source_offset, length, out_length);
  }
  if (weft_status_is_ok(status)) {
    status = weft_queue_prefix_status(
        "weft_device_queue_write",
        weft_file_validate_write(file, file_offset, *out_length));
  }
  return status;
}

weft_status_t weft_queue_validate_dispatch(
    weft_device_t* device, weft_executable_t* executable,
    uint32_t kernel_ordinal, const uint32_t workgroup_count[3],
    uint32_t constant_count, const uint32_t* constants, uint32_t binding_count,
    const weft_buffer_ref_t* bindings) {
  weft_status_t status = WEFT_OK;
  if (!executable || !workgroup_count) {
    status = WEFT_STATUS(INVALID_ARGUMENT, "weft_device_queue_dispatch: %s is NULL",
                         executable ? "workgroup_count" : "executable");
  } else if ((constant_count > 0 && !constants) ||
             (binding_count > 0 && !bindings)) {
    status = WEFT_STATUS(
        INVALID_ARGUMENT,
        "weft_device_queue_dispatch: %u constants and %u bindings given "
        "but the %s array is NULL",
        constant_count, binding_count,
        (constant_count > 0 && !constants) ? "constants" : "bindings");
  }
  if (weft_status_is_ok(status)) {
    status = weft_dispatch_validate(executable, kernel_ordinal, workgroup_count,
                                    constant_count, binding_count,
                                    "weft_device_queue_dispatch");
  }
  if (weft_status_is_ok(status)) {
    status = weft_executable_validate_domain(
        executable, device->domain, device->id, "weft_device_queue_dispatch");
  }
  for (uint32_t i = 0; weft_status_is_ok(status) && i < binding_count; ++i) {
    if (!bindings[i].buffer) {
      status = WEFT_STATUS(INVALID_ARGUMENT,
                           "weft_device_queue_dispatch: binding %u has no buffer (queue "
                           "dispatches take direct bindings only; slot %u "
                           "needs a command buffer)",
                           i, bindings[i].slot);
    } else {
      status = weft_status_annotate(
          weft_queue_validate_buffer(
              "weft_device_queue_dispatch", "binding", bindings[i].buffer,
              WEFT_BUFFER_USAGE_DISPATCH_STORAGE, bindings[i].offset,
              bindings[i].length, NULL),
          "binding %u", i);
    }
  }
  return status;
}

weft_status_t weft_queue_validate_execute(weft_command_buffer_t* command_buffer,
                                          weft_binding_table_t binding_table) {
  weft_status_t status = WEFT_OK;
  if (!command_buffer) {
    status =
        WEFT_STATUS(INVALID_ARGUMENT,
                    "weft_device_queue_execute: command_buffer is NULL");
  } else if (binding_table.count > 0 && !binding_table.bindings) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "weft_device_queue_execute: binding_table has %u "
                         "entries but binding_table.bindings is NULL",
                         binding_table.count);
  }
  if (weft_status_is_ok(status)) {
    status = weft_command_buffer_validate_submit(command_buffer, binding_table);
  }
  return status;
}

weft_status_t weft_queue_validate_host_call(weft_host_call_fn_t fn,
                                            weft_host_call_flags_t flags) {
  weft_status_t status = WEFT_OK;
  if (!fn) {
    status = WEFT_STATUS(INVALID_ARGUMENT, "weft_device_queue_host_call: fn is NULL");
  } else if (flags & ~(weft_host_call_flags_t)(
                          WEFT_HOST_CALL_FLAG_NON_BLOCKING |
                          WEFT_HOST_CALL_FLAG_TOLD_IF_NOT_RUN)) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "weft_device_queue_host_call: unknown flags 0x%x (known: "
                         "NON_BLOCKING 0x%x, TOLD_IF_NOT_RUN 0x%x)",
                         (unsigned)flags,
                         (unsigned)WEFT_HOST_CALL_FLAG_NON_BLOCKING,
                         (unsigned)WEFT_HOST_CALL_FLAG_TOLD_IF_NOT_RUN);
  }
  return status;
}

// Checks one buffer of |op|; |role| and |index| (UINT32_MAX: none) name it.
static weft_status_t weft_queue_validate_reach_one(const weft_queue_op_t* op,
                                                   const weft_buffer_t* buffer,
                                                   const char* role,
                                                   uint32_t index) {
  weft_status_t status = WEFT_OK;
  if (buffer && !weft_buffer_is_reachable(buffer, op->device->domain)) {
    // The error path only: the name is formatted here.
    char what[64];
    snprintf(what, sizeof(what), "weft_device_%s",
             weft_queue_op_kind_name(op->kind));
    status = weft_buffer_validate_reach(buffer, op->device->domain,
                                        op->device->id, what);
    if (!weft_status_is_ok(status) && index != UINT32_MAX) {
      status = weft_status_annotate(status, "for %s %u", role, index);
    } else if (!weft_status_is_ok(status)) {
      status = weft_status_annotate(status, "for the %s", role);
    }
  }
  return status;
}

weft_status_t weft_queue_reach_error(const weft_queue_op_t* op) {
  weft_status_t status = WEFT_OK;
  switch (op->kind) {
    case WEFT_QUEUE_OP_ALLOCA:
    case WEFT_QUEUE_OP_DEALLOCA:
      status = weft_queue_validate_reach_one(op, op->transient.buffer, "buffer",
                                             UINT32_MAX);
      break;
    case WEFT_QUEUE_OP_FILL:
      status = weft_queue_validate_reach_one(op, op->fill.target, "target",
                                             UINT32_MAX);
      break;
    case WEFT_QUEUE_OP_UPDATE:
      status = weft_queue_validate_reach_one(op, op->update.target, "target",
                                             UINT32_MAX);
      break;
    case WEFT_QUEUE_OP_COPY:
      status = weft_queue_validate_reach_one(op, op->copy.source, "source",
                                             UINT32_MAX);
      if (weft_status_is_ok(status)) {
        status = weft_queue_validate_reach_one(op, op->copy.target, "target",
                                               UINT32_MAX);
      }
      break;
    case WEFT_QUEUE_OP_READ:
    case WEFT_QUEUE_OP_WRITE:
      status = weft_queue_validate_reach_one(
          op, op->file.buffer,
          op->kind == WEFT_QUEUE_OP_READ ? "target" : "source", UINT32_MAX);
      break;
    case WEFT_QUEUE_OP_DISPATCH:
      for (uint32_t i = 0;
           weft_status_is_ok(status) && i < op->dispatch.binding_count; ++i) {
        status = weft_queue_validate_reach_one(
            op, op->dispatch.bindings[i].buffer, "binding", i);
      }
      break;
    case WEFT_QUEUE_OP_EXECUTE:
      for (uint32_t i = 0;
           weft_status_is_ok(status) && i < op->execute.binding_table.count;
           ++i) {
        status = weft_queue_validate_reach_one(
            op, op->execute.binding_table.bindings[i].buffer,
            "binding table entry", i);
      }
      break;
    default:
      break;
  }
  return status;
}
