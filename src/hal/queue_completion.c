// weft: how a queue operation ends (see queue_completion.h).
#include "hal/queue_completion.h"

#include <inttypes.h>
#include <string.h>

#include "base/trace.h"
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

void weft_queue_op_signal_or_fail(const weft_queue_op_t* op,
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
        weft_queue_op_fail_passed_signal(op, signal_list.semaphores[i],
                                         signal_list.values[i]);
      }
    }
  } else {
    weft_semaphore_list_fail(signal_list, status);
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
