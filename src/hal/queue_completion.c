// weft: how a queue operation ends (see queue_completion.h).
#include "hal/queue_completion.h"

#include <inttypes.h>
#include <string.h>

#include "base/trace.h"
#include "hal/device_impl.h"
#include "hal/semaphore_impl.h"

// Fails |semaphore| because |op| could not signal it to |value|: it had
// already passed it (unless it failed meanwhile: then its failure stays).
static void weft_queue_op_fail_passed_signal(const weft_queue_op_t* op,
                                             weft_semaphore_t* semaphore,
                                             uint64_t value) {
  uint64_t current_value = 0;
  if (!weft_semaphore_peek(semaphore, &current_value)) {
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
}

//===----------------------------------------------------------------------===//
// Failures that wait for their turn (the failure order of weft/semaphore.h)
//===----------------------------------------------------------------------===//

// A failure an op that will not run owes a semaphore it also waits on:
// published once that wait is reached. Owned by its timepoint, not by the
// op or its device (either may be gone by then): it frees itself when the
// timepoint fires, whichever way.
typedef struct weft_deferred_failure_t {
  weft_timepoint_t timepoint;
  weft_allocator_t allocator;
  weft_semaphore_t* semaphore;  // not retained: valid while registered
  weft_status_t status;         // owned
} weft_deferred_failure_t;

static void weft_deferred_failure_fired(void* user_data,
                                        weft_timepoint_t* timepoint,
                                        weft_status_t status) {
  (void)timepoint;
  weft_deferred_failure_t* deferred = (weft_deferred_failure_t*)user_data;
  if (weft_status_is_ok(status)) {
    // Reached: fired inside a signal of |semaphore|, whose caller holds a
    // reference. Now the failure may travel on.
    weft_semaphore_fail(deferred->semaphore, deferred->status);
  } else {
    // The semaphore failed upstream first (that failure stands) or was
    // destroyed (nobody is left to tell).
    weft_status_free(deferred->status);
    weft_status_free(status);
  }
  weft_allocator_free(deferred->allocator, deferred);
}

// The highest value |op| waits for on |semaphore| (0 when it does not wait
// on it).
static uint64_t weft_queue_op_own_wait(const weft_queue_op_t* op,
                                       const weft_semaphore_t* semaphore) {
  uint64_t value = 0;
  const weft_semaphore_list_t waits = op->wait_list;
  for (uint32_t i = 0; i < waits.count; ++i) {
    if (waits.semaphores[i] == semaphore && waits.values[i] > value) {
      value = waits.values[i];
    }
  }
  return value;
}

// Fails |semaphore| with |status| (consumed) for |op|, which will not run:
// at once, unless |op| also waits on |semaphore| for a value it has not
// reached; then once it does (the ops upstream on that timeline still
// run and signal it).
static void weft_queue_op_fail_in_order(const weft_queue_op_t* op,
                                        weft_semaphore_t* semaphore,
                                        weft_status_t status) {
  const uint64_t own_wait = weft_queue_op_own_wait(op, semaphore);
  uint64_t current_value = 0;
  const bool failed = weft_semaphore_peek(semaphore, &current_value);
  if (own_wait == 0 || failed || current_value >= own_wait) {
    weft_semaphore_fail(semaphore, status);
    return;
  }
  weft_allocator_t allocator = op->device->host_allocator;
  weft_deferred_failure_t* deferred = NULL;
  weft_status_t allocate_status = weft_allocator_malloc(
      allocator, sizeof(*deferred), (void**)&deferred);
  if (!weft_status_is_ok(allocate_status)) {
    // Out of memory: failing early beats never failing.
    weft_status_free(allocate_status);
    weft_semaphore_fail(semaphore, status);
    return;
  }
  memset(deferred, 0, sizeof(*deferred));
  deferred->timepoint.fn = weft_deferred_failure_fired;
  deferred->timepoint.user_data = deferred;
  deferred->allocator = allocator;
  deferred->semaphore = semaphore;
  deferred->status = status;
  // May fire at once (reached or failed meanwhile).
  weft_semaphore_register_timepoint(semaphore, own_wait, &deferred->timepoint);
}

void weft_queue_op_signal_or_fail(const weft_queue_op_t* op,
                                  weft_status_t status) {
  weft_queue_op_signal_or_fail_published(op, status, 0);
}

void weft_queue_op_signal_or_fail_published(const weft_queue_op_t* op,
                                            weft_status_t status,
                                            uint64_t published) {
  const weft_semaphore_list_t signal_list = op->signal_list;
  if (weft_status_is_ok(status)) {
    for (uint32_t i = 0; i < signal_list.count; ++i) {
      if (published && i < 64 && (published & (1ull << i))) {
        weft_semaphore_publish_value(signal_list.semaphores[i],
                                     signal_list.values[i]);
        continue;
      }
      // A signal fails only when the semaphore failed (the failure stays)
      // or passed the value; the others are signalled regardless, so
      // nothing waits forever.
      weft_status_t signal_status = weft_semaphore_signal_unchecked(
          signal_list.semaphores[i], signal_list.values[i]);
      if (!weft_status_is_ok(signal_status)) {
        weft_status_free(signal_status);
        weft_queue_op_fail_passed_signal(op, signal_list.semaphores[i],
                                         signal_list.values[i]);
      }
    }
  } else {
    for (uint32_t i = 0; i < signal_list.count; ++i) {
      // The last one takes |status| itself rather than a clone.
      weft_queue_op_fail_in_order(op, signal_list.semaphores[i],
                                  i + 1 == signal_list.count
                                      ? status
                                      : weft_status_clone(status));
    }
    if (signal_list.count == 0) weft_status_free(status);
  }
}

weft_status_t weft_queue_op_annotate_failure(const weft_queue_op_t* op,
                                             weft_status_t status) {
  const char* op_name = weft_queue_op_kind_name(op->kind);
  const bool names_op =
      op->kind == WEFT_QUEUE_OP_HOST_CALL ||
      strncmp(weft_status_message(status), op_name, strlen(op_name)) == 0;
  char op_label[WEFT_QUEUE_OP_LABEL_CAPACITY];
  weft_queue_op_label(op, op_label, sizeof(op_label));
  return weft_status_annotate(status, "%s %s",
                              names_op ? "in" : "while running", op_label);
}

weft_status_t weft_queue_op_cancelled(const weft_queue_op_t* op,
                                      bool while_waiting) {
  char op_label[WEFT_QUEUE_OP_LABEL_CAPACITY];
  weft_queue_op_label(op, op_label, sizeof(op_label));
  return WEFT_STATUS(CANCELLED, "%s was cancelled: the device was released %s",
                     op_label,
                     while_waiting ? "while it waited" : "before it ran");
}

weft_status_t weft_queue_op_not_run_status(const weft_queue_op_t* op,
                                           weft_status_t wait_status,
                                           bool swept) {
  weft_status_t status = wait_status;
  if (swept && weft_status_is(status, WEFT_STATUS_CANCELLED)) {
    // The sweep's own message names the op already.
  } else if (!weft_status_is_ok(status)) {
    // "...; so queue_fill (...) on queue 0 of device 'X' did not run".
    char op_label[WEFT_QUEUE_OP_LABEL_CAPACITY];
    weft_queue_op_label(op, op_label, sizeof(op_label));
    status = weft_status_annotate(status, "so %s did not run", op_label);
  } else {
    status = weft_queue_op_cancelled(op, /*while_waiting=*/false);
  }
  return status;
}

weft_status_t weft_queue_op_not_run(const weft_queue_op_t* op,
                                    weft_status_t wait_status, bool swept) {
  weft_status_t status = weft_queue_op_not_run_status(op, wait_status, swept);
  if (op->kind == WEFT_QUEUE_OP_HOST_CALL &&
      (op->host_call.flags & WEFT_HOST_CALL_FLAG_TOLD_IF_NOT_RUN)) {
    const weft_host_call_context_t context = {
        .device = op->device,
        .affinity = op->affinity,
        .signal_list = op->signal_list,
        .not_run_status = status,
    };
    weft_status_ignore(
        op->host_call.fn(op->host_call.user_data, op->host_call.args, &context));
  }
  return status;
}

weft_status_t weft_queue_op_run_host_call(const weft_queue_op_t* op,
                                          bool* out_ended) {
  const weft_host_call_context_t context = {
      .device = op->device,
      .affinity = op->affinity,
      .signal_list = op->signal_list,
  };
  weft_status_t status = WEFT_OK;
  if (op->host_call.flags & WEFT_HOST_CALL_FLAG_NON_BLOCKING) {
    // Signal first; the call's result (DEFERRED too) is dropped.
    weft_queue_op_signal_or_fail(op, WEFT_OK);
    *out_ended = true;
    WEFT_TRACE_BEGIN(WEFT_TRACE_CATEGORY_HOST, "host call");
    weft_status_ignore(op->host_call.fn(op->host_call.user_data,
                                        op->host_call.args, &context));
    WEFT_TRACE_END();
  } else {
    WEFT_TRACE_BEGIN(WEFT_TRACE_CATEGORY_HOST, "host call");
    status =
        op->host_call.fn(op->host_call.user_data, op->host_call.args, &context);
    WEFT_TRACE_END();
    if (weft_status_is(status, WEFT_STATUS_DEFERRED)) {
      // The call made its own fence of the signals and ends it later.
      weft_status_ignore(status);
      status = WEFT_OK;
      *out_ended = true;
    }
  }
  return status;
}
