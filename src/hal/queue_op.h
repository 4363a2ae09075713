// weft: one queue operation, as every driver receives it.
//
// The public weft_device_queue_* functions validate their arguments
// (queue_validation.h), describe the operation in a weft_queue_op_t and hand
// it to the driver's one submit entry (device_impl.h). The descriptor's
// pointers are borrowed from the caller for the duration of that call; a
// driver that keeps the op past it (because its waits are not reached, or
// because it runs elsewhere) captures it: weft_queue_op_capture copies the
// lists, arrays and bytes into storage the driver provides and retains
// every semaphore and object, and weft_queue_op_release lets them go once.
// Drivers add only what really differs: where the record lives, how ops
// wait and where they run.
#ifndef WEFT_HAL_QUEUE_OP_H_
#define WEFT_HAL_QUEUE_OP_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/device.h"

typedef enum weft_queue_op_kind_e {
  WEFT_QUEUE_OP_ALLOCA = 0,
  WEFT_QUEUE_OP_DEALLOCA,
  WEFT_QUEUE_OP_FILL,
  WEFT_QUEUE_OP_UPDATE,
  WEFT_QUEUE_OP_COPY,
  WEFT_QUEUE_OP_READ,
  WEFT_QUEUE_OP_WRITE,
  WEFT_QUEUE_OP_DISPATCH,
  WEFT_QUEUE_OP_EXECUTE,
  WEFT_QUEUE_OP_BARRIER,
  WEFT_QUEUE_OP_HOST_CALL,
  WEFT_QUEUE_OP_KIND_COUNT_,
} weft_queue_op_kind_t;

// Indexed by kind (queue_op.c).
extern const char* const kWeftQueueOpKindNames[];

// "queue_fill" and so on ("queue_unknown" out of range). Inline: every op
// names itself for its trace zone.
static inline const char* weft_queue_op_kind_name(weft_queue_op_kind_t kind) {
  return (unsigned)kind < WEFT_QUEUE_OP_KIND_COUNT_
             ? kWeftQueueOpKindNames[kind]
             : "queue_unknown";
}

typedef struct weft_queue_op_t {
  weft_queue_op_kind_t kind;
  // The queue the driver runs it on (0 until the driver picks one); named
  // in messages.
  uint32_t queue_index;
  // The device it was submitted to (not retained: ops do not hold their
  // device, see weft_device_release).
  weft_device_t* device;
  weft_queue_affinity_t affinity;
  weft_semaphore_list_t wait_list;
  weft_semaphore_list_t signal_list;
  // Captured ops only: bit i set when wait entry i (< 64) is not retained
  // because the signal list names the same semaphore and holds it (a chain
  // waits on and signals one semaphore).
  uint64_t unretained_waits;
  union {
    // ALLOCA and DEALLOCA: the buffer from the device's
    // create_transient_buffer.
    struct {
      weft_buffer_t* buffer;
    } transient;
    struct {
      weft_buffer_t* target;
      weft_device_size_t offset;
      weft_device_size_t length;
      // 1, 2 or 4 pattern bytes in the low bytes (as memcpy'd).
      uint32_t pattern;
      uint32_t pattern_length;
    } fill;
    struct {
      const void* source;
      weft_buffer_t* target;
      weft_device_size_t offset;
      weft_device_size_t length;
    } update;
    struct {
      weft_buffer_t* source;
      weft_device_size_t source_offset;
      weft_buffer_t* target;
      weft_device_size_t target_offset;
      weft_device_size_t length;
    } copy;
    // READ (file -> buffer) and WRITE (buffer -> file).
    struct {
      weft_file_t* file;
      uint64_t file_offset;
      weft_buffer_t* buffer;
      weft_device_size_t buffer_offset;
      weft_device_size_t length;
    } file;
    struct {
      weft_executable_t* executable;
      uint32_t kernel_ordinal;
      uint32_t workgroup_count[3];
      uint32_t constant_count;
      const uint32_t* constants;
      uint32_t binding_count;
      // As the caller gave them (validated; a length may be
      // WEFT_WHOLE_BUFFER).
      const weft_buffer_ref_t* bindings;
    } dispatch;
    struct {
      weft_command_buffer_t* command_buffer;
      weft_binding_table_t binding_table;
    } execute;
    struct {
      weft_host_call_fn_t fn;
      void* user_data;
      uint64_t args[4];
      weft_host_call_flags_t flags;
    } host_call;
  };
} weft_queue_op_t;

typedef enum weft_queue_op_capture_flag_bits_e {
  WEFT_QUEUE_OP_CAPTURE_ALL = 0,
  // Only the lists: the arguments are cleared (the kind stays). For a
  // driver that already turned them into its own form (a compiled
  // dispatch that holds its own references).
  WEFT_QUEUE_OP_CAPTURE_LISTS_ONLY = 1u << 0,
} weft_queue_op_capture_flag_bits_t;
typedef uint32_t weft_queue_op_capture_flags_t;

// The bytes of storage weft_queue_op_capture needs for |op|: its lists and
// the arrays and bytes its arguments borrow. RESOURCE_EXHAUSTED when they
// do not fit in a size_t (a huge update).
weft_status_t weft_queue_op_capture_size(const weft_queue_op_t* op,
                                         weft_queue_op_capture_flags_t flags,
                                         size_t* out_size);

// Copies |op| into |out_op| with its lists, arrays and bytes in |storage|
// (weft_queue_op_capture_size bytes, 16-byte aligned), and retains every
// semaphore and object it names. Cannot fail.
void weft_queue_op_capture(const weft_queue_op_t* op,
                           weft_queue_op_capture_flags_t flags, void* storage,
                           weft_queue_op_t* out_op);

// Releases what weft_queue_op_capture retained and clears the references
// (the storage is the caller's). An object the driver dropped early (set to
// NULL) is skipped.
void weft_queue_op_release(weft_queue_op_t* op);

// Room for an op's label; longer ones are cut short with "...".
#define WEFT_QUEUE_OP_LABEL_CAPACITY 384

// Names the op instance, not just its kind, so a user running the same
// command buffer in a loop knows which run failed: writes "queue_execute
// (waiting for 'iter' >= 50, signalling 'iter' = 51) on queue 0 of device
// 'local-task'" into |buffer| (always NUL-terminated). The parenthesis is
// left out when both lists are empty; at most four entries of each list
// are named ("and 3 more"). Allocates nothing.
void weft_queue_op_label(const weft_queue_op_t* op, char* buffer,
                         size_t capacity);

#endif  // WEFT_HAL_QUEUE_OP_H_
