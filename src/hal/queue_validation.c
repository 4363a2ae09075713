// weft: validation of queue operations shared by every driver.
#include "hal/queue_validation.h"

#include <string.h>

#include "hal/buffer_validation.h"
#include "hal/command_buffer_impl.h"
#include "hal/local/inline_dispatch.h"

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

// Checks one wait or signal list (|which| is "wait" or "signal").
static weft_status_t weft_queue_validate_semaphore_list(
    const char* op_name, const char* which, weft_semaphore_list_t list) {
  weft_status_t status = WEFT_OK;
  if (list.count > 0 && (!list.semaphores || !list.values)) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "%s: %s list has %u entries but its %s array is "
                         "NULL",
                         op_name, which, list.count,
                         list.semaphores ? "values" : "semaphores");
  }
  for (uint32_t i = 0; weft_status_is_ok(status) && i < list.count; ++i) {
    if (!list.semaphores[i]) {
      status = WEFT_STATUS(INVALID_ARGUMENT, "%s: %s list entry %u is NULL",
                           op_name, which, i);
    }
  }
  return status;
}

weft_status_t weft_queue_validate_common(const char* op_name,
                                         weft_queue_affinity_t affinity,
                                         weft_semaphore_list_t wait_list,
                                         weft_semaphore_list_t signal_list) {
  weft_status_t status = WEFT_OK;
  if (affinity == 0) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "%s: queue affinity is 0 (no queue may run it; use "
                         "WEFT_QUEUE_AFFINITY_ANY)",
                         op_name);
  }
  if (weft_status_is_ok(status)) {
    status = weft_queue_validate_semaphore_list(op_name, "wait", wait_list);
  }
  if (weft_status_is_ok(status)) {
    status = weft_queue_validate_semaphore_list(op_name, "signal", signal_list);
  }
  return status;
}

weft_status_t weft_queue_validate_alloca(weft_buffer_params_t params,
                                         weft_device_size_t byte_length,
                                         weft_buffer_t** out_buffer) {
  weft_status_t status = WEFT_OK;
  if (!out_buffer) {
    status = WEFT_STATUS(INVALID_ARGUMENT, "queue_alloca: out_buffer is NULL");
  } else if (byte_length == 0 || byte_length == WEFT_WHOLE_BUFFER) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "queue_alloca: byte length %llu is not a size "
                         "(must be > 0)",
                         (unsigned long long)byte_length);
  }
  (void)params;
  return status;
}

weft_status_t weft_queue_validate_dealloca(weft_buffer_t* buffer) {
  weft_status_t status = WEFT_OK;
  if (!buffer) {
    status = WEFT_STATUS(INVALID_ARGUMENT, "queue_dealloca: buffer is NULL");
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
      "queue_fill", "target", target, WEFT_BUFFER_USAGE_TRANSFER_TARGET, offset,
      length, out_length);
  if (weft_status_is_ok(status)) {
    status = weft_buffer_validate_fill_pattern(offset, *out_length,
                                               pattern_length, "queue_fill");
  }
  if (weft_status_is_ok(status) && !pattern) {
    status = WEFT_STATUS(INVALID_ARGUMENT, "queue_fill: pattern is NULL");
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
                         "queue_update: length must be the size of the host "
                         "data, not WEFT_WHOLE_BUFFER");
  }
  if (weft_status_is_ok(status)) {
    status = weft_queue_validate_buffer("queue_update", "target", target,
                                        WEFT_BUFFER_USAGE_TRANSFER_TARGET,
                                        offset, length, out_length);
  }
  if (weft_status_is_ok(status) && !source && *out_length > 0) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "queue_update: source is NULL for %llu bytes",
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
      "queue_copy", "source", source, WEFT_BUFFER_USAGE_TRANSFER_SOURCE,
      source_offset, length, &source_length);
  if (weft_status_is_ok(status)) {
    // A whole-buffer length resolves against the source; the target must
    // then hold that many bytes.
    status = weft_queue_validate_buffer(
        "queue_copy", "target", target, WEFT_BUFFER_USAGE_TRANSFER_TARGET,
        target_offset, source_length, out_length);
  }
  if (weft_status_is_ok(status)) {
    status = weft_buffer_validate_copy_overlap(source, source_offset, target,
                                               target_offset, *out_length,
                                               "queue_copy");
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
    status = WEFT_STATUS(INVALID_ARGUMENT, "queue_read: file is NULL");
  }
  if (weft_status_is_ok(status)) {
    status = weft_queue_validate_buffer("queue_read", "target", target,
                                        WEFT_BUFFER_USAGE_TRANSFER_TARGET,
                                        target_offset, length, out_length);
  }
  if (weft_status_is_ok(status)) {
    status = weft_queue_prefix_status(
        "queue_read", weft_file_validate_read(file, file_offset, *out_length));
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
    status = WEFT_STATUS(INVALID_ARGUMENT, "queue_write: file is NULL");
  }
  if (weft_status_is_ok(status)) {
    status = weft_queue_validate_buffer("queue_write", "source", source,
                                        WEFT_BUFFER_USAGE_TRANSFER_SOURCE,
                                        source_offset, length, out_length);
  }
  if (weft_status_is_ok(status)) {
    status = weft_queue_prefix_status(
        "queue_write",
        weft_file_validate_write(file, file_offset, *out_length));
  }
  return status;
}

weft_status_t weft_queue_validate_dispatch(weft_executable_t* executable,
                                           uint32_t kernel_ordinal,
                                           const uint32_t workgroup_count[3],
                                           uint32_t constant_count,
                                           const uint32_t* constants,
                                           uint32_t binding_count,
                                           const weft_buffer_ref_t* bindings) {
  weft_status_t status = WEFT_OK;
  if (!executable || !workgroup_count) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "queue_dispatch: executable and workgroup_count are "
                         "required");
  } else if ((constant_count > 0 && !constants) ||
             (binding_count > 0 && !bindings)) {
    status = WEFT_STATUS(
        INVALID_ARGUMENT,
        "queue_dispatch: %u constants and %u bindings given "
        "but the %s array is NULL",
        constant_count, binding_count,
        (constant_count > 0 && !constants) ? "constants" : "bindings");
  }
  if (weft_status_is_ok(status)) {
    status =
        weft_dispatch_validate(executable, kernel_ordinal, workgroup_count,
                               constant_count, binding_count, "queue_dispatch");
  }
  for (uint32_t i = 0; weft_status_is_ok(status) && i < binding_count; ++i) {
    if (!bindings[i].buffer) {
      status = WEFT_STATUS(INVALID_ARGUMENT,
                           "queue_dispatch: binding %u has no buffer (queue "
                           "dispatches take direct bindings only; slot %u "
                           "needs a command buffer)",
                           i, bindings[i].slot);
    } else {
      status = weft_status_annotate(
          weft_queue_validate_buffer(
              "queue_dispatch", "binding", bindings[i].buffer,
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
        WEFT_STATUS(INVALID_ARGUMENT, "queue_execute: command buffer is NULL");
  } else if (binding_table.count > 0 && !binding_table.bindings) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "queue_execute: binding table has %u entries but "
                         "its bindings array is NULL",
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
    status = WEFT_STATUS(INVALID_ARGUMENT, "queue_host_call: fn is NULL");
  } else if (flags &
             ~(weft_host_call_flags_t)WEFT_HOST_CALL_FLAG_NON_BLOCKING) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "queue_host_call: unknown flags 0x%x (known: "
                         "NON_BLOCKING 0x%x)",
                         (unsigned)flags,
                         (unsigned)WEFT_HOST_CALL_FLAG_NON_BLOCKING);
  }
  return status;
}
