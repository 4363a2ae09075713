// weft: the public device functions.
//
// Each queue function validates everything that needs no waiting
// (queue_validation.h) and only then calls the driver, so a request the
// driver sees is well formed and a validation failure leaves the signal
// semaphores untouched.
#include <stdio.h>
#include <string.h>

#include "base/arguments.h"
#include "hal/device_impl.h"
#include "hal/queue_validation.h"

_Static_assert(offsetof(weft_device_t, resource) == 0,
               "weft_device_t must start with its resource");

weft_status_t weft_device_initialize(const weft_device_vtable_t* vtable,
                                     const char* id, const char* driver_name,
                                     weft_domain_t domain,
                                     weft_allocator_t host_allocator,
                                     weft_device_t* out_device) {
  memset(out_device, 0, sizeof(*out_device));
  weft_resource_initialize(WEFT_RESOURCE_TYPE_DEVICE, vtable,
                           &out_device->resource);
  out_device->domain = domain;
  out_device->host_allocator = host_allocator;
  out_device->driver_name = driver_name;
  size_t id_length = strlen(id);
  weft_status_t status = weft_allocator_malloc(host_allocator, id_length + 1,
                                               (void**)&out_device->id);
  if (weft_status_is_ok(status)) memcpy(out_device->id, id, id_length + 1);
  return status;
}

void weft_device_deinitialize(weft_device_t* device) {
  weft_allocator_free(device->host_allocator, device->id);
  device->id = NULL;
}

void weft_device_retain(weft_device_t* device) { weft_resource_retain(device); }

void weft_device_release(weft_device_t* device) {
  if (device && weft_ref_count_dec(&device->resource.ref_count)) {
    // Off the live list before the driver tears anything down, so a hang
    // report running now never walks a device being destroyed.
    weft_diagnostics_unregister_device(device);
    weft_device_vtable(device)->destroy(device);
  }
}

const char* weft_device_id(const weft_device_t* device) {
  return device && device->id ? device->id : "";
}

const char* weft_device_driver_name(const weft_device_t* device) {
  return device && device->driver_name ? device->driver_name : "";
}

weft_allocator_t weft_device_host_allocator(const weft_device_t* device) {
  weft_allocator_t none = {NULL, NULL};
  return device ? device->host_allocator : none;
}

weft_status_t weft_device_query_i64(weft_device_t* device, const char* key,
                                    int64_t* out_value) {
  if (out_value) *out_value = 0;
  weft_status_t status =
      weft_arguments_require(__func__, "device,key,out_value",
                             (const void* const[]){device, key, out_value}, 3);
  if (weft_status_is_ok(status)) {
    status = weft_device_vtable(device)->query_i64(device, key, out_value);
  }
  return status;
}

weft_status_t weft_device_create_semaphore(weft_device_t* device,
                                           uint64_t initial_value,
                                           weft_semaphore_t** out_semaphore) {
  if (out_semaphore) *out_semaphore = NULL;
  weft_status_t status =
      weft_arguments_require(__func__, "device,out_semaphore",
                             (const void* const[]){device, out_semaphore}, 2);
  if (weft_status_is_ok(status)) {
    weft_device_vtable_t const* vtable = weft_device_vtable(device);
    status =
        vtable->create_semaphore
            ? vtable->create_semaphore(device, initial_value, out_semaphore)
            : weft_semaphore_create(device->host_allocator, initial_value,
                                    out_semaphore);
  }
  return status;
}

weft_status_t weft_device_create_executable(
    weft_device_t* device, weft_executable_source_t source,
    weft_executable_t** out_executable) {
  if (out_executable) *out_executable = NULL;
  weft_status_t status =
      weft_arguments_require(__func__, "device,out_executable",
                             (const void* const[]){device, out_executable}, 2);
  if (weft_status_is_ok(status)) {
    status = weft_device_vtable(device)->create_executable(device, source,
                                                           out_executable);
  }
  return status;
}

weft_status_t weft_device_allocate_buffer(weft_device_t* device,
                                          weft_buffer_params_t params,
                                          weft_device_size_t byte_length,
                                          weft_buffer_t** out_buffer) {
  if (out_buffer) *out_buffer = NULL;
  weft_status_t status =
      weft_arguments_require(__func__, "device,out_buffer",
                             (const void* const[]){device, out_buffer}, 2);
  if (weft_status_is_ok(status)) {
    status = weft_device_vtable(device)->allocate_buffer(
        device, weft_buffer_params_canonicalize(params), byte_length,
        out_buffer);
  }
  return status;
}

//===----------------------------------------------------------------------===//
// Queue operations
//===----------------------------------------------------------------------===//

// Checks that the device reaches |op|'s buffers, then hands it (validated)
// to the driver.
static inline weft_status_t weft_device_submit(const weft_queue_op_t* op) {
  weft_status_t status = weft_queue_validate_reach(op);
  if (weft_status_is_ok(status)) {
    status = weft_device_vtable(op->device)->queue_submit(op->device, op);
  }
  return status;
}

// Sets the descriptor fields every op shares. The caller sets its kind's
// arguments; the rest of the union is left as is (zeroing the whole
// descriptor cost a fill about 5% of its round trip on local-sync).
static inline void weft_queue_op_begin(weft_queue_op_kind_t kind,
                                       weft_device_t* device,
                                       weft_queue_affinity_t affinity,
                                       weft_semaphore_list_t wait_list,
                                       weft_semaphore_list_t signal_list,
                                       weft_queue_op_t* out_op) {
  out_op->kind = kind;
  out_op->queue_index = 0;
  out_op->device = device;
  out_op->affinity = affinity;
  out_op->wait_list = wait_list;
  out_op->signal_list = signal_list;
  out_op->unretained_waits = 0;
}

weft_status_t weft_device_queue_alloca(weft_device_t* device,
                                       weft_queue_affinity_t affinity,
                                       weft_semaphore_list_t wait_list,
                                       weft_semaphore_list_t signal_list,
                                       weft_buffer_params_t params,
                                       weft_device_size_t byte_length,
                                       weft_buffer_t** out_buffer) {
  if (out_buffer) *out_buffer = NULL;
  weft_buffer_t* buffer = NULL;
  weft_status_t status = weft_queue_validate_common(__func__, device, affinity,
                                                    wait_list, signal_list);
  if (weft_status_is_ok(status)) {
    status = weft_queue_validate_alloca(params, byte_length, out_buffer);
  }
  if (weft_status_is_ok(status)) {
    status = weft_device_vtable(device)->create_transient_buffer(
        device, weft_buffer_params_canonicalize(params), byte_length, &buffer);
  }
  if (weft_status_is_ok(status)) {
    weft_queue_op_t op;
    weft_queue_op_begin(WEFT_QUEUE_OP_ALLOCA, device, affinity, wait_list,
                        signal_list, &op);
    op.transient.buffer = buffer;
    status = weft_device_submit(&op);
  }
  if (weft_status_is_ok(status)) {
    *out_buffer = buffer;
  } else {
    weft_buffer_release(buffer);
  }
  return status;
}

weft_status_t weft_device_queue_dealloca(weft_device_t* device,
                                         weft_queue_affinity_t affinity,
                                         weft_semaphore_list_t wait_list,
                                         weft_semaphore_list_t signal_list,
                                         weft_buffer_t* buffer) {
  weft_status_t status = weft_queue_validate_common(__func__, device, affinity,
                                                    wait_list, signal_list);
  if (weft_status_is_ok(status)) {
    status = weft_queue_validate_dealloca(buffer);
  }
  if (weft_status_is_ok(status)) {
    weft_queue_op_t op;
    weft_queue_op_begin(WEFT_QUEUE_OP_DEALLOCA, device, affinity, wait_list,
                        signal_list, &op);
    op.transient.buffer = buffer;
    status = weft_device_submit(&op);
  }
  return status;
}

weft_status_t weft_device_queue_fill(
    weft_device_t* device, weft_queue_affinity_t affinity,
    weft_semaphore_list_t wait_list, weft_semaphore_list_t signal_list,
    weft_buffer_t* target, weft_device_size_t offset, weft_device_size_t length,
    const void* pattern, uint32_t pattern_length) {
  uint32_t packed_pattern = 0;
  weft_device_size_t resolved_length = 0;
  weft_status_t status = weft_queue_validate_common(__func__, device, affinity,
                                                    wait_list, signal_list);
  if (weft_status_is_ok(status)) {
    status = weft_queue_validate_fill(target, offset, length, pattern,
                                      pattern_length, &packed_pattern,
                                      &resolved_length);
  }
  if (weft_status_is_ok(status)) {
    weft_queue_op_t op;
    weft_queue_op_begin(WEFT_QUEUE_OP_FILL, device, affinity, wait_list,
                        signal_list, &op);
    op.fill.target = target;
    op.fill.offset = offset;
    op.fill.length = resolved_length;
    op.fill.pattern = packed_pattern;
    op.fill.pattern_length = pattern_length;
    status = weft_device_submit(&op);
  }
  return status;
}

weft_status_t weft_device_queue_update(
    weft_device_t* device, weft_queue_affinity_t affinity,
    weft_semaphore_list_t wait_list, weft_semaphore_list_t signal_list,
    const void* source, weft_buffer_t* target, weft_device_size_t offset,
    weft_device_size_t length) {
  weft_device_size_t resolved_length = 0;
  weft_status_t status = weft_queue_validate_common(__func__, device, affinity,
                                                    wait_list, signal_list);
  if (weft_status_is_ok(status)) {
    status = weft_queue_validate_update(source, target, offset, length,
                                        &resolved_length);
  }
  if (weft_status_is_ok(status)) {
    weft_queue_op_t op;
    weft_queue_op_begin(WEFT_QUEUE_OP_UPDATE, device, affinity, wait_list,
                        signal_list, &op);
    op.update.source = source;
    op.update.target = target;
    op.update.offset = offset;
    op.update.length = resolved_length;
    status = weft_device_submit(&op);
  }
  return status;
}

weft_status_t weft_device_queue_copy(
    weft_device_t* device, weft_queue_affinity_t affinity,
    weft_semaphore_list_t wait_list, weft_semaphore_list_t signal_list,
    weft_buffer_t* source, weft_device_size_t source_offset,
    weft_buffer_t* target, weft_device_size_t target_offset,
    weft_device_size_t length) {
  weft_device_size_t resolved_length = 0;
  weft_status_t status = weft_queue_validate_common(__func__, device, affinity,
                                                    wait_list, signal_list);
  if (weft_status_is_ok(status)) {
    status = weft_queue_validate_copy(source, source_offset, target,
                                      target_offset, length, &resolved_length);
  }
  if (weft_status_is_ok(status)) {
    weft_queue_op_t op;
    weft_queue_op_begin(WEFT_QUEUE_OP_COPY, device, affinity, wait_list,
                        signal_list, &op);
    op.copy.source = source;
    op.copy.source_offset = source_offset;
    op.copy.target = target;
    op.copy.target_offset = target_offset;
    op.copy.length = resolved_length;
    status = weft_device_submit(&op);
  }
  return status;
}

weft_status_t weft_device_queue_read(
    weft_device_t* device, weft_queue_affinity_t affinity,
    weft_semaphore_list_t wait_list, weft_semaphore_list_t signal_list,
    weft_file_t* file, uint64_t file_offset, weft_buffer_t* target,
    weft_device_size_t target_offset, weft_device_size_t length) {
  weft_device_size_t resolved_length = 0;
  weft_status_t status = weft_queue_validate_common(__func__, device, affinity,
                                                    wait_list, signal_list);
  if (weft_status_is_ok(status)) {
    status = weft_queue_validate_read(file, file_offset, target, target_offset,
                                      length, &resolved_length);
  }
  if (weft_status_is_ok(status)) {
    weft_queue_op_t op;
    weft_queue_op_begin(WEFT_QUEUE_OP_READ, device, affinity, wait_list,
                        signal_list, &op);
    op.file.file = file;
    op.file.file_offset = file_offset;
    op.file.buffer = target;
    op.file.buffer_offset = target_offset;
    op.file.length = resolved_length;
    status = weft_device_submit(&op);
  }
  return status;
}

weft_status_t weft_device_queue_write(
    weft_device_t* device, weft_queue_affinity_t affinity,
    weft_semaphore_list_t wait_list, weft_semaphore_list_t signal_list,
    weft_buffer_t* source, weft_device_size_t source_offset, weft_file_t* file,
    uint64_t file_offset, weft_device_size_t length) {
  weft_device_size_t resolved_length = 0;
  weft_status_t status = weft_queue_validate_common(__func__, device, affinity,
                                                    wait_list, signal_list);
  if (weft_status_is_ok(status)) {
    status = weft_queue_validate_write(source, source_offset, file, file_offset,
                                       length, &resolved_length);
  }
  if (weft_status_is_ok(status)) {
    weft_queue_op_t op;
    weft_queue_op_begin(WEFT_QUEUE_OP_WRITE, device, affinity, wait_list,
                        signal_list, &op);
    op.file.file = file;
    op.file.file_offset = file_offset;
    op.file.buffer = source;
    op.file.buffer_offset = source_offset;
    op.file.length = resolved_length;
    status = weft_device_submit(&op);
  }
  return status;
}

weft_status_t weft_device_queue_dispatch(
    weft_device_t* device, weft_queue_affinity_t affinity,
    weft_semaphore_list_t wait_list, weft_semaphore_list_t signal_list,
    weft_executable_t* executable, uint32_t kernel_ordinal,
    const uint32_t workgroup_count[3], uint32_t constant_count,
    const uint32_t* constants, uint32_t binding_count,
    const weft_buffer_ref_t* bindings) {
  weft_status_t status = weft_queue_validate_common(__func__, device, affinity,
                                                    wait_list, signal_list);
  if (weft_status_is_ok(status)) {
    status = weft_queue_validate_dispatch(device, executable, kernel_ordinal,
                                          workgroup_count, constant_count,
                                          constants, binding_count, bindings);
  }
  if (weft_status_is_ok(status)) {
    weft_queue_op_t op;
    weft_queue_op_begin(WEFT_QUEUE_OP_DISPATCH, device, affinity, wait_list,
                        signal_list, &op);
    op.dispatch.executable = executable;
    op.dispatch.kernel_ordinal = kernel_ordinal;
    op.dispatch.workgroup_count[0] = workgroup_count[0];
    op.dispatch.workgroup_count[1] = workgroup_count[1];
    op.dispatch.workgroup_count[2] = workgroup_count[2];
    op.dispatch.constant_count = constant_count;
    op.dispatch.constants = constants;
    op.dispatch.binding_count = binding_count;
    op.dispatch.bindings = bindings;
    status = weft_device_submit(&op);
  }
  return status;
}

weft_status_t weft_device_queue_execute(weft_device_t* device,
                                        weft_queue_affinity_t affinity,
                                        weft_semaphore_list_t wait_list,
                                        weft_semaphore_list_t signal_list,
                                        weft_command_buffer_t* command_buffer,
                                        weft_binding_table_t binding_table) {
  weft_status_t status = weft_queue_validate_common(__func__, device, affinity,
                                                    wait_list, signal_list);
  if (weft_status_is_ok(status)) {
    status = weft_queue_validate_execute(command_buffer, binding_table);
  }
  if (weft_status_is_ok(status)) {
    weft_queue_op_t op;
    weft_queue_op_begin(WEFT_QUEUE_OP_EXECUTE, device, affinity, wait_list,
                        signal_list, &op);
    op.execute.command_buffer = command_buffer;
    op.execute.binding_table = binding_table;
    status = weft_device_submit(&op);
  }
  return status;
}

weft_status_t weft_device_queue_barrier(weft_device_t* device,
                                        weft_queue_affinity_t affinity,
                                        weft_semaphore_list_t wait_list,
                                        weft_semaphore_list_t signal_list) {
  weft_status_t status = weft_queue_validate_common(__func__, device, affinity,
                                                    wait_list, signal_list);
  if (weft_status_is_ok(status)) {
    weft_queue_op_t op;
    weft_queue_op_begin(WEFT_QUEUE_OP_BARRIER, device, affinity, wait_list,
                        signal_list, &op);
    status = weft_device_submit(&op);
  }
  return status;
}

weft_status_t weft_device_queue_host_call(
    weft_device_t* device, weft_queue_affinity_t affinity,
    weft_semaphore_list_t wait_list, weft_semaphore_list_t signal_list,
    weft_host_call_fn_t fn, void* user_data, const uint64_t args[4],
    weft_host_call_flags_t flags) {
  weft_status_t status = weft_queue_validate_common(__func__, device, affinity,
                                                    wait_list, signal_list);
  if (weft_status_is_ok(status)) {
    status = weft_queue_validate_host_call(fn, flags);
  }
  if (weft_status_is_ok(status)) {
    weft_queue_op_t op;
    weft_queue_op_begin(WEFT_QUEUE_OP_HOST_CALL, device, affinity, wait_list,
                        signal_list, &op);
    op.host_call.fn = fn;
    op.host_call.user_data = user_data;
    op.host_call.flags = flags;
    if (args) {
      memcpy(op.host_call.args, args, sizeof(op.host_call.args));
    } else {
      memset(op.host_call.args, 0, sizeof(op.host_call.args));
    }
    status = weft_device_submit(&op);
  }
  return status;
}

weft_status_t weft_device_query_property(
    const weft_device_t* device, const char* key,
    const weft_device_property_t* properties, size_t count,
    int64_t* out_value) {
  for (size_t i = 0; i < count; ++i) {
    if (strcmp(properties[i].key, key) == 0) {
      *out_value = properties[i].value;
      return WEFT_OK;
    }
  }
  // The error path: the known keys, joined.
  char known[512];
  size_t length = 0;
  known[0] = '\0';
  for (size_t i = 0; i < count && length < sizeof(known); ++i) {
    int written = snprintf(known + length, sizeof(known) - length, "%s%s",
                           i ? ", " : "", properties[i].key);
    if (written < 0) break;
    length += (size_t)written;
  }
  return WEFT_STATUS(NOT_FOUND, "device '%s' has no property '%s'; known: %s",
                     weft_device_id((weft_device_t*)device), key, known);
}
