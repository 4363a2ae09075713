// weft: the proactor's common part: options, backend names and choice, and
// the split-and-resume bookkeeping both backends share (see proactor.h).
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "async/proactor_impl.h"
#include "base/os_error.h"
#include "base/trace.h"

// --- Names and options -------------------------------------------------------

static const char* const kWeftProactorBackendNames[] = {
    [WEFT_PROACTOR_BACKEND_AUTO] = "auto",
    [WEFT_PROACTOR_BACKEND_IO_URING] = "io_uring",
    [WEFT_PROACTOR_BACKEND_THREADS] = "threads",
};
#define WEFT_PROACTOR_BACKEND_COUNT \
  (sizeof(kWeftProactorBackendNames) / sizeof(kWeftProactorBackendNames[0]))

const char* weft_proactor_backend_name(weft_proactor_backend_t backend) {
  const char* name = "unknown";
  if ((uint32_t)backend < WEFT_PROACTOR_BACKEND_COUNT) {
    name = kWeftProactorBackendNames[backend];
  }
  return name;
}

weft_status_t weft_proactor_backend_parse(
    const char* name, weft_proactor_backend_t* out_backend) {
  weft_status_t status = WEFT_OK;
  uint32_t found = WEFT_PROACTOR_BACKEND_COUNT;
  for (uint32_t i = 0; name && i < WEFT_PROACTOR_BACKEND_COUNT; ++i) {
    if (strcmp(name, kWeftProactorBackendNames[i]) == 0) found = i;
  }
  if (found == WEFT_PROACTOR_BACKEND_COUNT) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "proactor backend '%s' is unknown (known: auto, "
                         "io_uring, threads)",
                         name ? name : "(null)");
  } else {
    *out_backend = (weft_proactor_backend_t)found;
  }
  return status;
}

bool weft_proactor_io_uring_built(void) {
#if defined(WEFT_HAVE_LIBURING)
  return true;
#else
  return false;
#endif
}

void weft_proactor_options_initialize(weft_proactor_options_t* out_options) {
  memset(out_options, 0, sizeof(*out_options));
  out_options->backend = WEFT_PROACTOR_BACKEND_AUTO;
  out_options->queue_depth = WEFT_PROACTOR_DEFAULT_QUEUE_DEPTH;
  out_options->thread_count = WEFT_PROACTOR_DEFAULT_THREAD_COUNT;
  out_options->max_transfer = WEFT_PROACTOR_DEFAULT_MAX_TRANSFER;
  out_options->thread_name = "weft-io";
}

static weft_status_t weft_proactor_options_validate(
    const weft_proactor_options_t* options) {
  weft_status_t status = WEFT_OK;
  if ((uint32_t)options->backend >= WEFT_PROACTOR_BACKEND_COUNT) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "proactor_create: backend %d is unknown (known: "
                         "auto, io_uring, threads)",
                         (int)options->backend);
  } else if (options->queue_depth == 0 ||
             options->queue_depth > WEFT_PROACTOR_MAX_QUEUE_DEPTH) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "proactor_create: queue_depth %u is outside [1, %u]",
                         options->queue_depth, WEFT_PROACTOR_MAX_QUEUE_DEPTH);
  } else if (options->thread_count == 0 ||
             options->thread_count > WEFT_PROACTOR_MAX_THREAD_COUNT) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "proactor_create: thread_count %u is outside [1, %u]",
                         options->thread_count, WEFT_PROACTOR_MAX_THREAD_COUNT);
  } else if (options->max_transfer == 0 ||
             options->max_transfer > WEFT_PROACTOR_OS_MAX_TRANSFER) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "proactor_create: max_transfer %" PRIu64
                         " is outside [1, %" PRIu64
                         "] (the OS's per-call "
                         "limit)",
                         options->max_transfer, WEFT_PROACTOR_OS_MAX_TRANSFER);
  }
  return status;
}

// --- Creation and the public entry points ------------------------------------

void weft_proactor__initialize(const weft_proactor_vtable_t* vtable,
                               weft_proactor_backend_t backend,
                               const weft_proactor_options_t* options,
                               weft_allocator_t allocator,
                               weft_proactor_t* proactor,
                               const char* explanation, ...) {
  proactor->vtable = vtable;
  proactor->allocator = allocator;
  proactor->backend = backend;
  proactor->max_transfer = options->max_transfer;
  atomic_init(&proactor->submitted_count, 0);
  atomic_init(&proactor->completed_count, 0);
  va_list args;
  va_start(args, explanation);
  vsnprintf(proactor->explanation, sizeof(proactor->explanation), explanation,
            args);
  va_end(args);
}

// AUTO: the ring when it can be set up, the thread pool (told why) otherwise.
static weft_status_t weft_proactor_create_auto(
    const weft_proactor_options_t* options, weft_allocator_t allocator,
    weft_proactor_t** out_proactor) {
  weft_status_t status = WEFT_OK;
  if (weft_proactor_io_uring_built()) {
    status = weft_proactor__io_uring_create(
        options, " (auto: liburing is built in and the kernel granted a ring)",
        allocator, out_proactor);
    if (weft_status_is(status, WEFT_STATUS_UNAVAILABLE)) {
      // The message is the reason alone; keep it for the explanation.
      char reason[WEFT_PROACTOR_EXPLANATION_CAPACITY];
      snprintf(reason, sizeof(reason), "%s", weft_status_message(status));
      weft_status_free(status);
      status = weft_proactor__threads_create(options, reason, allocator,
                                             out_proactor);
    }
  } else {
    status = weft_proactor__threads_create(options, "built without liburing",
                                           allocator, out_proactor);
  }
  return status;
}

weft_status_t weft_proactor_create(const weft_proactor_options_t* options,
                                   weft_allocator_t allocator,
                                   weft_proactor_t** out_proactor) {
  *out_proactor = NULL;
  weft_proactor_options_t defaults;
  if (!options) {
    weft_proactor_options_initialize(&defaults);
    options = &defaults;
  }
  weft_status_t status = weft_proactor_options_validate(options);
  if (weft_status_is_ok(status)) {
    switch (options->backend) {
      case WEFT_PROACTOR_BACKEND_IO_URING:
        status = weft_proactor__io_uring_create(
            options, " (forced by the options)", allocator, out_proactor);
        if (weft_status_is(status, WEFT_STATUS_UNAVAILABLE)) {
          weft_status_t reason = status;
          status = WEFT_STATUS(UNAVAILABLE,
                               "proactor_create: the io_uring backend is "
                               "unavailable: %s",
                               weft_status_message(reason));
          weft_status_free(reason);
        }
        break;
      case WEFT_PROACTOR_BACKEND_THREADS:
        status = weft_proactor__threads_create(options, "forced by the options",
                                               allocator, out_proactor);
        break;
      default:
        status = weft_proactor_create_auto(options, allocator, out_proactor);
        break;
    }
  }
  return status;
}

void weft_proactor_destroy(weft_proactor_t* proactor) {
  if (proactor) proactor->vtable->destroy(proactor);
}

void weft_proactor_submit(weft_proactor_t* proactor, weft_proactor_op_t* op) {
  op->done = 0;
  op->next = NULL;
  op->entry.next = NULL;
  weft_atomic_fetch_add(&proactor->submitted_count, 1, memory_order_relaxed);
  WEFT_TRACE_INSTANT(WEFT_TRACE_CATEGORY_FILE,
                     op->type == WEFT_PROACTOR_OP_READ ? "read submitted"
                                                       : "write submitted",
                     0, op->length);
  proactor->vtable->submit(proactor, op);
}

weft_proactor_backend_t weft_proactor_backend(const weft_proactor_t* proactor) {
  return proactor->backend;
}

const char* weft_proactor_explanation(const weft_proactor_t* proactor) {
  return proactor->explanation;
}

uint64_t weft_proactor_pending_count(weft_proactor_t* proactor) {
  // Acquire: each completion counted here happened after its op's
  // submission was counted, so the submitted load below sees at least as
  // many and the difference cannot wrap.
  uint64_t completed =
      weft_atomic_load(&proactor->completed_count, memory_order_acquire);
  uint64_t submitted =
      weft_atomic_load(&proactor->submitted_count, memory_order_relaxed);
  return submitted - completed;
}

void weft_proactor__complete(weft_proactor_t* proactor, weft_proactor_op_t* op,
                             weft_status_t status) {
  // The completion (value: the bytes moved) around the callback, which
  // signals the op on this thread.
  WEFT_TRACE_BEGIN_VALUE(WEFT_TRACE_CATEGORY_FILE,
                         op->type == WEFT_PROACTOR_OP_READ ? "read completed"
                                                           : "write completed",
                         0, op->done);
  op->callback(op, status);
  WEFT_TRACE_END();
  // Release: pairs with pending_count's acquire (see there).
  weft_atomic_fetch_add(&proactor->completed_count, 1, memory_order_release);
}

// --- Transfers ---------------------------------------------------------------

// "'w.bin'" as the caller named it, or "fd 7".
static const char* weft_proactor_op_name(const weft_proactor_op_t* op,
                                         char* buffer, size_t capacity) {
  const char* name = op->name;
  if (!name) {
    snprintf(buffer, capacity, "fd %d", op->fd);
    name = buffer;
  }
  return name;
}

weft_status_t weft_proactor__check_op(const weft_proactor_op_t* op) {
  weft_status_t status = WEFT_OK;
  const char* kind = op->type == WEFT_PROACTOR_OP_WRITE ? "write" : "read";
  char name_buffer[32];
  if (op->type != WEFT_PROACTOR_OP_READ && op->type != WEFT_PROACTOR_OP_WRITE) {
    status =
        WEFT_STATUS(INVALID_ARGUMENT,
                    "proactor op on %s: type %d is neither read nor write",
                    weft_proactor_op_name(op, name_buffer, sizeof(name_buffer)),
                    (int)op->type);
  } else if (op->offset > (uint64_t)INT64_MAX ||
             op->length > (uint64_t)INT64_MAX - op->offset) {
    status = WEFT_STATUS(
        INVALID_ARGUMENT,
        "%s of %s: %" PRIu64 " bytes at offset %" PRIu64
        " end past the largest file offset (2^63 - 1)",
        kind, weft_proactor_op_name(op, name_buffer, sizeof(name_buffer)),
        op->length, op->offset);
  } else if (op->length != 0 && !op->buffer) {
    status = WEFT_STATUS(
        INVALID_ARGUMENT, "%s of %s: %" PRIu64 " bytes but the buffer is NULL",
        kind, weft_proactor_op_name(op, name_buffer, sizeof(name_buffer)),
        op->length);
  }
  return status;
}

// "pread of NAME at offset X: reason" with the errno's code.
static weft_status_t weft_proactor_errno_status(const weft_proactor_op_t* op,
                                                int error) {
  char name_buffer[32];
  char reason_buffer[128];
  // GNU strerror_r (we build with _GNU_SOURCE): returns the message.
  const char* reason = strerror_r(error, reason_buffer, sizeof(reason_buffer));
  return weft_status_make_(
      __FILE__, __LINE__, weft_status_code_from_errno(error),
      "%s of %s at offset %" PRIu64 ": %s",
      op->type == WEFT_PROACTOR_OP_WRITE ? "pwrite" : "pread",
      weft_proactor_op_name(op, name_buffer, sizeof(name_buffer)),
      op->offset + op->done, reason);
}

bool weft_proactor__account(weft_proactor_op_t* op, int64_t result,
                            weft_status_t* out_status) {
  bool finished = false;
  bool is_write = op->type == WEFT_PROACTOR_OP_WRITE;
  *out_status = WEFT_OK;
  if (result > 0) {
    op->done += (uint64_t)result;
    finished = op->done >= op->length;
  } else if (result == -EINTR || result == -EAGAIN) {
    // Nothing moved: issue the same range again.
  } else if (result < 0) {
    *out_status = weft_proactor_errno_status(op, (int)-result);
    finished = true;
  } else {
    // A zero-byte result before the end: the file is shorter than the read
    // (or the device full for a write), so no retry can make progress.
    char name_buffer[32];
    *out_status = weft_status_make_(
        __FILE__, __LINE__,
        is_write ? WEFT_STATUS_RESOURCE_EXHAUSTED : WEFT_STATUS_OUT_OF_RANGE,
        "short %s at byte %" PRIu64 " of %s (%s [%" PRIu64 ", %" PRIu64 "))",
        is_write ? "write" : "read", op->offset + op->done,
        weft_proactor_op_name(op, name_buffer, sizeof(name_buffer)),
        is_write ? "writing" : "reading", op->offset, op->offset + op->length);
    finished = true;
  }
  return finished;
}

weft_status_t weft_proactor__transfer_sync(const weft_proactor_t* proactor,
                                           weft_proactor_op_t* op) {
  weft_status_t status = WEFT_OK;
  bool finished = op->done >= op->length;
  while (!finished) {
    size_t chunk = weft_proactor__next_chunk(proactor, op);
    uint8_t* bytes = (uint8_t*)op->buffer + op->done;
    off_t position = (off_t)(op->offset + op->done);
    ssize_t moved = op->type == WEFT_PROACTOR_OP_WRITE
                        ? pwrite(op->fd, bytes, chunk, position)
                        : pread(op->fd, bytes, chunk, position);
    int error = moved < 0 ? errno : 0;
    if (error == EAGAIN) {
      // A blocking call that says "again" would say it forever: an error.
      status = weft_proactor_errno_status(op, error);
      finished = true;
    } else {
      int64_t result = moved >= 0 ? (int64_t)moved : -(int64_t)error;
      finished = weft_proactor__account(op, result, &status);
    }
  }
  return status;
}
