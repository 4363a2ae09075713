// weft: queue-operation descriptors (see queue_op.h).
#include "hal/queue_op.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "hal/resource.h"
#include "hal/semaphore_impl.h"

const char* const kWeftQueueOpKindNames[] = {
    "queue_alloca",  "queue_dealloca", "queue_fill",      "queue_update",
    "queue_copy",    "queue_read",     "queue_write",     "queue_dispatch",
    "queue_execute", "queue_barrier",  "queue_host_call",
};
_Static_assert(sizeof(kWeftQueueOpKindNames) /
                       sizeof(kWeftQueueOpKindNames[0]) ==
                   WEFT_QUEUE_OP_KIND_COUNT_,
               "one name per op kind");


//===----------------------------------------------------------------------===//
// Capture
//===----------------------------------------------------------------------===//

// Rounds |value| up to a multiple of 16.
static size_t weft_queue_op_align16(size_t value) {
  return (value + 15) & ~(size_t)15;
}

// The bytes the arguments of |op| borrow (beyond the lists), unaligned
// pieces each rounded up to 16. Counts are uint32: only an update's length
// can overflow, and the caller checks it first.
static size_t weft_queue_op_argument_bytes(const weft_queue_op_t* op) {
  size_t size = 0;
  switch (op->kind) {
    case WEFT_QUEUE_OP_UPDATE:
      size = weft_queue_op_align16((size_t)op->update.length);
      break;
    case WEFT_QUEUE_OP_DISPATCH:
      size = weft_queue_op_align16((size_t)op->dispatch.binding_count *
                                   sizeof(weft_buffer_ref_t)) +
             weft_queue_op_align16((size_t)op->dispatch.constant_count *
                                   sizeof(uint32_t));
      break;
    case WEFT_QUEUE_OP_EXECUTE:
      size = weft_queue_op_align16((size_t)op->execute.binding_table.count *
                                   sizeof(weft_buffer_binding_t));
      break;
    default:
      break;
  }
  return size;
}

// The bytes of the copied lists: values, then semaphores.
static size_t weft_queue_op_list_bytes(const weft_queue_op_t* op) {
  size_t entry_count = (size_t)op->wait_list.count + op->signal_list.count;
  return weft_queue_op_align16(entry_count * sizeof(uint64_t)) +
         weft_queue_op_align16(entry_count * sizeof(weft_semaphore_t*));
}

weft_status_t weft_queue_op_capture_size(const weft_queue_op_t* op,
                                         weft_queue_op_capture_flags_t flags,
                                         size_t* out_size) {
  weft_status_t status = WEFT_OK;
  *out_size = weft_queue_op_list_bytes(op);
  if (flags & WEFT_QUEUE_OP_CAPTURE_LISTS_ONLY) {
    // Nothing more.
  } else if (op->kind == WEFT_QUEUE_OP_UPDATE &&
             op->update.length > SIZE_MAX / 2) {
    status = WEFT_STATUS(RESOURCE_EXHAUSTED,
                         "queue_update: %" PRIu64
                         " bytes of host data cannot be copied",
                         (uint64_t)op->update.length);
  } else {
    *out_size += weft_queue_op_argument_bytes(op);
  }
  return status;
}

// Calls weft_resource_retain (|retain|) or _release on every object the
// arguments of |op| name (NULL entries are skipped).
static void weft_queue_op_reference_arguments(const weft_queue_op_t* op,
                                              bool retain) {
  void* objects[3] = {NULL, NULL, NULL};
  switch (op->kind) {
    case WEFT_QUEUE_OP_ALLOCA:
    case WEFT_QUEUE_OP_DEALLOCA:
      objects[0] = op->transient.buffer;
      break;
    case WEFT_QUEUE_OP_FILL:
      objects[0] = op->fill.target;
      break;
    case WEFT_QUEUE_OP_UPDATE:
      objects[0] = op->update.target;
      break;
    case WEFT_QUEUE_OP_COPY:
      objects[0] = op->copy.source;
      objects[1] = op->copy.target;
      break;
    case WEFT_QUEUE_OP_READ:
    case WEFT_QUEUE_OP_WRITE:
      objects[0] = op->file.file;
      objects[1] = op->file.buffer;
      break;
    case WEFT_QUEUE_OP_DISPATCH:
      objects[0] = op->dispatch.executable;
      for (uint32_t i = 0; i < op->dispatch.binding_count; ++i) {
        if (retain) {
          weft_resource_retain(op->dispatch.bindings[i].buffer);
        } else {
          weft_resource_release(op->dispatch.bindings[i].buffer);
        }
      }
      break;
    case WEFT_QUEUE_OP_EXECUTE:
      objects[0] = op->execute.command_buffer;
      for (uint32_t i = 0; i < op->execute.binding_table.count; ++i) {
        if (retain) {
          weft_resource_retain(op->execute.binding_table.bindings[i].buffer);
        } else {
          weft_resource_release(op->execute.binding_table.bindings[i].buffer);
        }
      }
      break;
    default:
      break;
  }
  // Every HAL object starts with a weft_resource_t (NULL is a no-op).
  for (size_t i = 0; i < sizeof(objects) / sizeof(objects[0]); ++i) {
    if (retain) {
      weft_resource_retain(objects[i]);
    } else {
      weft_resource_release(objects[i]);
    }
  }
}

// Copies |size| bytes of |source| to |*inout_storage| (when non-empty),
// advances it by |size| rounded up to 16 and returns the copy.
// Empty: NULL (the storage may be NULL when nothing needs copying).
static void* weft_queue_op_copy_bytes(const void* source, size_t size,
                                      uint8_t** inout_storage) {
  uint8_t* copy = NULL;
  if (size) {
    copy = *inout_storage;
    memcpy(copy, source, size);
    *inout_storage = copy + weft_queue_op_align16(size);
  }
  return copy;
}

// Points the arrays and bytes |op|'s arguments borrow at copies in
// |storage|.
static void weft_queue_op_copy_arguments(weft_queue_op_t* op,
                                         uint8_t* storage) {
  switch (op->kind) {
    case WEFT_QUEUE_OP_UPDATE:
      op->update.source = weft_queue_op_copy_bytes(
          op->update.source, (size_t)op->update.length, &storage);
      break;
    case WEFT_QUEUE_OP_DISPATCH:
      op->dispatch.bindings = weft_queue_op_copy_bytes(
          op->dispatch.bindings,
          (size_t)op->dispatch.binding_count * sizeof(weft_buffer_ref_t),
          &storage);
      op->dispatch.constants = weft_queue_op_copy_bytes(
          op->dispatch.constants,
          (size_t)op->dispatch.constant_count * sizeof(uint32_t), &storage);
      break;
    case WEFT_QUEUE_OP_EXECUTE:
      op->execute.binding_table.bindings =
          weft_queue_op_copy_bytes(op->execute.binding_table.bindings,
                                   (size_t)op->execute.binding_table.count *
                                       sizeof(weft_buffer_binding_t),
                                   &storage);
      break;
    default:
      break;
  }
}

// True when |list| names |semaphore|.
static bool weft_queue_op_list_contains(weft_semaphore_list_t list,
                                        const weft_semaphore_t* semaphore) {
  bool found = false;
  for (uint32_t i = 0; !found && i < list.count; ++i) {
    found = list.semaphores[i] == semaphore;
  }
  return found;
}

void weft_queue_op_capture(const weft_queue_op_t* op,
                           weft_queue_op_capture_flags_t flags, void* storage,
                           weft_queue_op_t* out_op) {
  *out_op = *op;
  const uint32_t wait_count = op->wait_list.count;
  const uint32_t entry_count = wait_count + op->signal_list.count;
  // Layout: values | semaphores | argument copies. |storage| is NULL when
  // the capture size was 0.
  uint8_t* bytes = (uint8_t*)storage;
  uint64_t* values = NULL;
  weft_semaphore_t** semaphores = NULL;
  if (entry_count) {
    values = (uint64_t*)bytes;
    semaphores =
        (weft_semaphore_t**)(bytes + weft_queue_op_align16((size_t)entry_count *
                                                           sizeof(uint64_t)));
    bytes += weft_queue_op_list_bytes(op);
  }
  out_op->unretained_waits = 0;
  out_op->wait_list.semaphores = semaphores;
  out_op->wait_list.values = values;
  out_op->signal_list.semaphores = semaphores ? semaphores + wait_count : NULL;
  out_op->signal_list.values = values ? values + wait_count : NULL;
  for (uint32_t i = 0; i < entry_count; ++i) {
    const bool is_wait = i < wait_count;
    const weft_semaphore_list_t list =
        is_wait ? op->wait_list : op->signal_list;
    const uint32_t j = is_wait ? i : i - wait_count;
    semaphores[i] = list.semaphores[j];
    values[i] = list.values[j];
    if (is_wait && i < 64 &&
        weft_queue_op_list_contains(op->signal_list, semaphores[i])) {
      // The signal entry's reference lives as long as this one would.
      out_op->unretained_waits |= 1ull << i;
    } else {
      weft_semaphore_retain(semaphores[i]);
    }
  }
  if (flags & WEFT_QUEUE_OP_CAPTURE_LISTS_ONLY) {
    const weft_queue_op_kind_t kind = out_op->kind;
    memset(&out_op->fill, 0, sizeof(*out_op) - offsetof(weft_queue_op_t, fill));
    out_op->kind = kind;
  } else {
    weft_queue_op_copy_arguments(out_op, bytes);
    weft_queue_op_reference_arguments(out_op, /*retain=*/true);
  }
}

void weft_queue_op_release(weft_queue_op_t* op) {
  weft_queue_op_reference_arguments(op, /*retain=*/false);
  // The wait and signal arrays are one block (see capture).
  const uint32_t entry_count = op->wait_list.count + op->signal_list.count;
  for (uint32_t i = 0; i < entry_count; ++i) {
    if (i >= 64 || !(op->unretained_waits & (1ull << i))) {
      weft_semaphore_release(op->wait_list.semaphores[i]);
    }
  }
  op->wait_list.count = 0;
  op->signal_list.count = 0;
  const weft_queue_op_kind_t kind = op->kind;
  memset(&op->fill, 0, sizeof(*op) - offsetof(weft_queue_op_t, fill));
  op->kind = kind;
}

//===----------------------------------------------------------------------===//
// Labels
//===----------------------------------------------------------------------===//

// Entries of each list named before "and N more".
#define WEFT_QUEUE_OP_LABEL_MAX_ENTRIES 4

// Appends printf-style text at |*inout_used|, never past |capacity|.
static void weft_queue_op_label_append(char* buffer, size_t capacity,
                                       size_t* inout_used, const char* format,
                                       ...) {
  size_t used = *inout_used;
  if (used + 1 < capacity) {
    va_list args;
    va_start(args, format);
    int written = vsnprintf(buffer + used, capacity - used, format, args);
    va_end(args);
    if (written > 0) used += (size_t)written;
    *inout_used = used < capacity ? used : capacity - 1;
  }
}

// Appends "'a' >= 1 and 'b' >= 2" (|relation| ">=" or "=").
static void weft_queue_op_label_list(weft_semaphore_list_t list,
                                     const char* relation, char* buffer,
                                     size_t capacity, size_t* inout_used) {
  for (uint32_t i = 0; i < list.count; ++i) {
    if (i == WEFT_QUEUE_OP_LABEL_MAX_ENTRIES) {
      weft_queue_op_label_append(buffer, capacity, inout_used,
                                 " and %" PRIu32 " more", list.count - i);
      break;
    }
    char label[WEFT_SEMAPHORE_LABEL_CAPACITY];
    weft_semaphore_label(list.semaphores[i], label, sizeof(label));
    weft_queue_op_label_append(buffer, capacity, inout_used, "%s%s %s %" PRIu64,
                               i ? " and " : "", label, relation,
                               list.values[i]);
  }
}

void weft_queue_op_label(const weft_queue_op_t* op, char* buffer,
                         size_t capacity) {
  const weft_semaphore_list_t wait_list = op->wait_list;
  const weft_semaphore_list_t signal_list = op->signal_list;
  size_t used = 0;
  if (capacity == 0) return;
  buffer[0] = '\0';
  weft_queue_op_label_append(buffer, capacity, &used, "%s",
                             weft_queue_op_kind_name(op->kind));
  if (wait_list.count || signal_list.count) {
    weft_queue_op_label_append(buffer, capacity, &used, " (");
    if (wait_list.count) {
      weft_queue_op_label_append(buffer, capacity, &used, "waiting for ");
      weft_queue_op_label_list(wait_list, ">=", buffer, capacity, &used);
    }
    if (signal_list.count) {
      weft_queue_op_label_append(buffer, capacity, &used, "%ssignalling ",
                                 wait_list.count ? ", " : "");
      weft_queue_op_label_list(signal_list, "=", buffer, capacity, &used);
    }
    weft_queue_op_label_append(buffer, capacity, &used, ")");
  }
  weft_queue_op_label_append(buffer, capacity, &used,
                             " on queue %" PRIu32 " of device '%s'",
                             op->queue_index, weft_device_id(op->device));
  if (used + 1 >= capacity && capacity > 4) {
    // Cut short: say so.
    snprintf(buffer + capacity - 4, 4, "...");
  }
}
