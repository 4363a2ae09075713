// weft: naming one queue operation in messages (see queue_describe.h).
#include "hal/queue_describe.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "hal/semaphore_impl.h"

// Entries of each list named before "and N more".
#define WEFT_QUEUE_DESCRIBE_MAX_ENTRIES 4

// Appends printf-style text at |*inout_used|, never past |capacity|.
static void weft_queue_describe_append(char* buffer, size_t capacity,
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
static void weft_queue_describe_list(weft_semaphore_list_t list,
                                     const char* relation, char* buffer,
                                     size_t capacity, size_t* inout_used) {
  for (uint32_t i = 0; i < list.count; ++i) {
    if (i == WEFT_QUEUE_DESCRIBE_MAX_ENTRIES) {
      weft_queue_describe_append(buffer, capacity, inout_used,
                                 " and %" PRIu32 " more", list.count - i);
      break;
    }
    char label[WEFT_SEMAPHORE_LABEL_CAPACITY];
    weft_semaphore_label(list.semaphores[i], label, sizeof(label));
    weft_queue_describe_append(buffer, capacity, inout_used,
                               "%s%s %s %" PRIu64, i ? " and " : "", label,
                               relation, list.values[i]);
  }
}

void weft_queue_op_label(const weft_queue_op_identity_t* op, char* buffer,
                         size_t capacity) {
  const weft_semaphore_list_t wait_list = op->wait_list;
  const weft_semaphore_list_t signal_list = op->signal_list;
  size_t used = 0;
  if (capacity == 0) return;
  buffer[0] = '\0';
  weft_queue_describe_append(buffer, capacity, &used, "%s", op->op_name);
  if (wait_list.count || signal_list.count) {
    weft_queue_describe_append(buffer, capacity, &used, " (");
    if (wait_list.count) {
      weft_queue_describe_append(buffer, capacity, &used, "waiting for ");
      weft_queue_describe_list(wait_list, ">=", buffer, capacity, &used);
    }
    if (signal_list.count) {
      weft_queue_describe_append(buffer, capacity, &used, "%ssignalling ",
                                 wait_list.count ? ", " : "");
      weft_queue_describe_list(signal_list, "=", buffer, capacity, &used);
    }
    weft_queue_describe_append(buffer, capacity, &used, ")");
  }
  weft_queue_describe_append(buffer, capacity, &used,
                             " on queue %" PRIu32 " of device '%s'",
                             op->queue_index, weft_device_id(op->device));
  if (used + 1 >= capacity && capacity > 4) {
    // Cut short: say so.
    snprintf(buffer + capacity - 4, 4, "...");
  }
}
