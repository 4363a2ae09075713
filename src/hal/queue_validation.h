// weft: validation of queue operations shared by every driver.
//
// The public weft_device_queue_* functions (device.c) run these checks before
// calling the driver, so a driver only ever sees well-formed requests: every
// buffer range fits (lengths of WEFT_WHOLE_BUFFER already resolved), the
// buffers carry the usage the operation needs, fill patterns are 1, 2 or 4
// bytes and aligned, copies do not overlap, files allow the transfer, and
// semaphore lists have no NULL entries.
//
// Every message starts with the public function's name
// ("weft_device_queue_fill: ...").
// Nothing here waits or touches semaphores: a failure leaves the signal
// semaphores untouched.
#ifndef WEFT_HAL_QUEUE_VALIDATION_H_
#define WEFT_HAL_QUEUE_VALIDATION_H_

#include "hal/buffer_impl.h"
#include "hal/device_impl.h"
#include "hal/queue_op.h"
#include "weft/device.h"

// Checks what every operation shares, naming the public |function| in
// messages: a device, a non-empty |affinity|, wait and signal lists whose
// arrays are present and whose entries are non-NULL, and signal values that
// can still be reached: above each semaphore's current value and above any
// value the op itself waits for on the same semaphore.
weft_status_t weft_queue_validate_common(const char* function,
                                         weft_device_t* device,
                                         weft_queue_affinity_t affinity,
                                         weft_semaphore_list_t wait_list,
                                         weft_semaphore_list_t signal_list);

// Checks an alloca request: |out_buffer| non-NULL and a non-zero length.
weft_status_t weft_queue_validate_alloca(weft_buffer_params_t params,
                                         weft_device_size_t byte_length,
                                         weft_buffer_t** out_buffer);

// Checks a dealloca request: |buffer| non-NULL.
weft_status_t weft_queue_validate_dealloca(weft_buffer_t* buffer);

// Checks a fill of [offset, offset+length) of |target| and packs the
// pattern: |out_length| receives the resolved length and |out_pattern| the
// pattern bytes in the low bytes of a uint32 (host byte order, as memcpy'd).
weft_status_t weft_queue_validate_fill(
    weft_buffer_t* target, weft_device_size_t offset, weft_device_size_t length,
    const void* pattern, uint32_t pattern_length, uint32_t* out_pattern,
    weft_device_size_t* out_length);

// Checks an update of |length| host bytes into |target| at |offset|.
weft_status_t weft_queue_validate_update(const void* source,
                                         weft_buffer_t* target,
                                         weft_device_size_t offset,
                                         weft_device_size_t length,
                                         weft_device_size_t* out_length);

// Checks a copy between two buffers (usage, ranges, overlap).
weft_status_t weft_queue_validate_copy(weft_buffer_t* source,
                                       weft_device_size_t source_offset,
                                       weft_buffer_t* target,
                                       weft_device_size_t target_offset,
                                       weft_device_size_t length,
                                       weft_device_size_t* out_length);

// Checks a file read into |target| (file access and known length, buffer
// usage and range).
weft_status_t weft_queue_validate_read(weft_file_t* file, uint64_t file_offset,
                                       weft_buffer_t* target,
                                       weft_device_size_t target_offset,
                                       weft_device_size_t length,
                                       weft_device_size_t* out_length);

// Checks a file write from |source|.
weft_status_t weft_queue_validate_write(weft_buffer_t* source,
                                        weft_device_size_t source_offset,
                                        weft_file_t* file, uint64_t file_offset,
                                        weft_device_size_t length,
                                        weft_device_size_t* out_length);

// Checks a direct dispatch (kernel, counts, bindings and their usage, and
// that |device| can run the executable).
weft_status_t weft_queue_validate_dispatch(
    weft_device_t* device, weft_executable_t* executable,
    uint32_t kernel_ordinal, const uint32_t workgroup_count[3],
    uint32_t constant_count, const uint32_t* constants, uint32_t binding_count,
    const weft_buffer_ref_t* bindings);

// Checks a command buffer submission with its binding table.
weft_status_t weft_queue_validate_execute(weft_command_buffer_t* command_buffer,
                                          weft_binding_table_t binding_table);

// Checks a host call: |fn| non-NULL and only known flags.
weft_status_t weft_queue_validate_host_call(weft_host_call_fn_t fn,
                                            weft_host_call_flags_t flags);

// True when |op|'s device can reach every buffer it names (its target,
// source, bindings, binding table; weft_buffer_is_reachable). Inline: it
// runs for every op.
static inline bool weft_queue_op_reaches_buffers(const weft_queue_op_t* op) {
  const weft_domain_t domain = op->device->domain;
  bool reachable = true;
  switch (op->kind) {
    case WEFT_QUEUE_OP_ALLOCA:
    case WEFT_QUEUE_OP_DEALLOCA:
      reachable = weft_buffer_is_reachable(op->transient.buffer, domain);
      break;
    case WEFT_QUEUE_OP_FILL:
      reachable = weft_buffer_is_reachable(op->fill.target, domain);
      break;
    case WEFT_QUEUE_OP_UPDATE:
      reachable = weft_buffer_is_reachable(op->update.target, domain);
      break;
    case WEFT_QUEUE_OP_COPY:
      reachable = weft_buffer_is_reachable(op->copy.source, domain) &&
                  weft_buffer_is_reachable(op->copy.target, domain);
      break;
    case WEFT_QUEUE_OP_READ:
    case WEFT_QUEUE_OP_WRITE:
      reachable = weft_buffer_is_reachable(op->file.buffer, domain);
      break;
    case WEFT_QUEUE_OP_DISPATCH:
      for (uint32_t i = 0; reachable && i < op->dispatch.binding_count; ++i) {
        reachable =
            weft_buffer_is_reachable(op->dispatch.bindings[i].buffer, domain);
      }
      break;
    case WEFT_QUEUE_OP_EXECUTE:
      for (uint32_t i = 0; reachable && i < op->execute.binding_table.count;
           ++i) {
        const weft_buffer_t* buffer =
            op->execute.binding_table.bindings[i].buffer;
        reachable = !buffer || weft_buffer_is_reachable(buffer, domain);
      }
      break;
    default:
      break;
  }
  return reachable;
}

// The INVALID_ARGUMENT for an op weft_queue_op_reaches_buffers rejects,
// naming the public function, the buffer's role and both sides. Out of
// line: the error path.
weft_status_t weft_queue_reach_error(const weft_queue_op_t* op);

// OK when |op|'s device reaches every buffer it names.
static inline weft_status_t weft_queue_validate_reach(
    const weft_queue_op_t* op) {
  return weft_queue_op_reaches_buffers(op) ? WEFT_OK
                                           : weft_queue_reach_error(op);
}

#endif  // WEFT_HAL_QUEUE_VALIDATION_H_
