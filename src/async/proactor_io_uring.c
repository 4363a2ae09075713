// weft: the proactor's io_uring backend (see proactor.h).
//
// One ring and one thread that owns it: only that thread prepares SQEs and
// reaps CQEs, so the ring needs no lock. Submitters on any thread push ops
// on a lock-free MPSC list and wake the thread through an eventfd on which
// the ring always has a read outstanding (re-armed after each completion).
//
// Wake protocol (|wake_pending|): a submitter pushes its op, then exchanges
// the flag to 1 and writes the eventfd only if it was 0. The thread sets
// the flag to 1 when it comes back from waiting (so submits made while it
// is awake, callbacks included, cost no syscall) and exchanges it to 0
// right before it takes the list. A submitter that saw 1 therefore pushed
// before the thread's next clear, and the clear's acquire makes that push
// visible to the pop that follows it.
//
// The thread keeps at most |queue_depth| transfers in the kernel; the rest
// wait in FIFO order. Each transfer moves at most max_transfer bytes per
// SQE and is resubmitted after partial results, -EINTR and -EAGAIN. An fd
// the ring cannot take (-EOPNOTSUPP, or -EINVAL from a file type without
// async support) is finished synchronously with pread/pwrite on the thread,
// so a real EINVAL still surfaces with pread's message.
#include "async/proactor_impl.h"

#if defined(WEFT_HAVE_LIBURING)

#include <errno.h>
#include <liburing.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "base/os_error.h"
#include "base/thread.h"

// Transfers at least this long are marked IOSQE_ASYNC (see prepare).
#define WEFT_PROACTOR_IO_URING_ASYNC_BYTES (256u * 1024u)

typedef struct weft_proactor_io_uring_t {
  weft_proactor_t base;  // must be first
  struct io_uring ring;
  int wake_fd;
  uint32_t queue_depth;
  weft_thread_t* thread;

  // ---- shared with submitters ----
  uint8_t padding0[64];
  weft_mpsc_list_t incoming;
  // 1 while a wake is pending or the thread is awake (see the file comment).
  weft_atomic_uint32_t wake_pending;
  // Set once by destroy; the thread exits when nothing is left.
  weft_atomic_uint32_t stopping;
  uint8_t padding1[64];

  // ---- the ring thread's own ----
  // Target of the outstanding eventfd read.
  uint64_t wake_value;
  // The eventfd read is prepared or in the kernel.
  bool wake_armed;
  // Ops taken from |incoming| and not yet in the kernel, oldest first.
  weft_proactor_op_t* waiting_head;
  weft_proactor_op_t* waiting_tail;
  // Ops with an SQE prepared or in the kernel.
  uint32_t in_kernel;
} weft_proactor_io_uring_t;

// Returns a free SQE, flushing the submission queue when it is full.
static struct io_uring_sqe* weft_proactor_io_uring_get_sqe(
    weft_proactor_io_uring_t* proactor) {
  struct io_uring_sqe* sqe = io_uring_get_sqe(&proactor->ring);
  while (!sqe) {
    // The completion queue holds twice the ring's entries and at most
    // queue_depth + 1 requests are outstanding, so submit can only fail
    // transiently (-EAGAIN under memory pressure, -EINTR): retry.
    if (io_uring_submit(&proactor->ring) < 0) weft_thread_yield();
    sqe = io_uring_get_sqe(&proactor->ring);
  }
  return sqe;
}

static void weft_proactor_io_uring_arm_wake(
    weft_proactor_io_uring_t* proactor) {
  struct io_uring_sqe* sqe = weft_proactor_io_uring_get_sqe(proactor);
  io_uring_prep_read(sqe, proactor->wake_fd, &proactor->wake_value,
                     sizeof(proactor->wake_value), 0);
  io_uring_sqe_set_data(sqe, &proactor->wake_value);
  proactor->wake_armed = true;
}

// Prepares the next chunk of |op| (from op->done) as one SQE.
static void weft_proactor_io_uring_prepare(weft_proactor_io_uring_t* proactor,
                                           weft_proactor_op_t* op) {
  struct io_uring_sqe* sqe = weft_proactor_io_uring_get_sqe(proactor);
  unsigned chunk = (unsigned)weft_proactor__next_chunk(&proactor->base, op);
  uint8_t* bytes = (uint8_t*)op->buffer + op->done;
  uint64_t position = op->offset + op->done;
  if (op->type == WEFT_PROACTOR_OP_WRITE) {
    io_uring_prep_write(sqe, op->fd, bytes, chunk, position);
  } else {
    io_uring_prep_read(sqe, op->fd, bytes, chunk, position);
  }
  if (chunk >= WEFT_PROACTOR_IO_URING_ASYNC_BYTES) {
    // Large transfers go to the kernel's io-wq workers at once instead of
    // being tried inline in io_uring_enter: a read of cached pages would
    // otherwise be copied on this one thread, one transfer after another,
    // while the workers copy several on every CPU.
    io_uring_sqe_set_flags(sqe, IOSQE_ASYNC);
  }
  io_uring_sqe_set_data(sqe, op);
}

// Moves every submitted op onto the waiting FIFO.
static void weft_proactor_io_uring_take_incoming(
    weft_proactor_io_uring_t* proactor) {
  // Acquire: a submitter that found the flag set pushed before this clear;
  // its release exchange makes that push visible to the pop below.
  weft_atomic_exchange(&proactor->wake_pending, 0, memory_order_acquire);
  weft_mpsc_entry_t* entry = weft_mpsc_list_pop_all(&proactor->incoming);
  while (entry) {
    weft_proactor_op_t* op =
        weft_container_of(entry, weft_proactor_op_t, entry);
    entry = entry->next;
    op->next = NULL;
    if (proactor->waiting_tail) {
      proactor->waiting_tail->next = op;
    } else {
      proactor->waiting_head = op;
    }
    proactor->waiting_tail = op;
  }
}

// Puts waiting ops into the kernel while fewer than queue_depth are there.
// Ops that need no I/O (empty, or invalid) complete here.
static void weft_proactor_io_uring_start_waiting(
    weft_proactor_io_uring_t* proactor) {
  while (proactor->waiting_head &&
         proactor->in_kernel < proactor->queue_depth) {
    weft_proactor_op_t* op = proactor->waiting_head;
    proactor->waiting_head = op->next;
    if (!proactor->waiting_head) proactor->waiting_tail = NULL;
    op->next = NULL;
    weft_status_t status = weft_proactor__check_op(op);
    if (!weft_status_is_ok(status) || op->length == 0) {
      weft_proactor__complete(&proactor->base, op, status);
    } else {
      weft_proactor_io_uring_prepare(proactor, op);
      ++proactor->in_kernel;
    }
  }
}

// Handles the CQE of one chunk of |op|: resubmits the rest, or completes.
static void weft_proactor_io_uring_handle(weft_proactor_io_uring_t* proactor,
                                          weft_proactor_op_t* op,
                                          int32_t result) {
  weft_status_t status = WEFT_OK;
  bool finished = true;
  if (result == -EOPNOTSUPP || result == -EINVAL) {
    // The ring cannot take this fd (or this file type has no async path):
    // finish with pread/pwrite, which also reports a genuine EINVAL.
    status = weft_proactor__transfer_sync(&proactor->base, op);
  } else {
    finished = weft_proactor__account(op, result, &status);
  }
  if (finished) {
    --proactor->in_kernel;
    weft_proactor__complete(&proactor->base, op, status);
  } else {
    weft_proactor_io_uring_prepare(proactor, op);
  }
}

// Handles every CQE that is ready. The eventfd read is re-armed unless
// |exiting|.
static void weft_proactor_io_uring_reap(weft_proactor_io_uring_t* proactor,
                                        bool exiting) {
  struct io_uring_cqe* cqe = NULL;
  while (io_uring_peek_cqe(&proactor->ring, &cqe) == 0 && cqe) {
    void* data = io_uring_cqe_get_data(cqe);
    int32_t result = cqe->res;
    io_uring_cqe_seen(&proactor->ring, cqe);
    if (data == &proactor->wake_value) {
      proactor->wake_armed = false;
      if (!exiting) weft_proactor_io_uring_arm_wake(proactor);
    } else {
      weft_proactor_io_uring_handle(proactor, (weft_proactor_op_t*)data,
                                    result);
    }
  }
}

// Submits what is prepared and blocks until at least one CQE is ready.
static void weft_proactor_io_uring_submit_and_wait(
    weft_proactor_io_uring_t* proactor) {
  int result = io_uring_submit_and_wait(&proactor->ring, 1);
  // -EINTR: a signal; -EAGAIN/-EBUSY: transient. The loop comes back here.
  if (result < 0 && result != -EINTR) weft_thread_yield();
}

static int weft_proactor_io_uring_main(void* user_data) {
  weft_proactor_io_uring_t* proactor = (weft_proactor_io_uring_t*)user_data;
  weft_proactor_io_uring_arm_wake(proactor);
  bool running = true;
  while (running) {
    weft_proactor_io_uring_take_incoming(proactor);
    weft_proactor_io_uring_start_waiting(proactor);
    // Acquire: pairs with destroy's release store (it also travels through
    // the wake flag, but a spurious loop may see the stop first).
    bool stopping =
        weft_atomic_load(&proactor->stopping, memory_order_acquire) != 0;
    if (stopping && proactor->in_kernel == 0 && !proactor->waiting_head &&
        weft_mpsc_list_is_empty(&proactor->incoming)) {
      running = false;
    } else {
      weft_proactor_io_uring_submit_and_wait(proactor);
      // Awake: submits from here to the next take need no eventfd write.
      weft_atomic_exchange(&proactor->wake_pending, 1, memory_order_relaxed);
      weft_proactor_io_uring_reap(proactor, /*exiting=*/false);
    }
  }
  // The eventfd read must leave the kernel before the ring and its target
  // go away: complete it with a write of our own.
  if (proactor->wake_armed) {
    uint64_t one = 1;
    while (write(proactor->wake_fd, &one, sizeof(one)) < 0 && errno == EINTR) {
    }
  }
  while (proactor->wake_armed) {
    weft_proactor_io_uring_submit_and_wait(proactor);
    weft_proactor_io_uring_reap(proactor, /*exiting=*/true);
  }
  return 0;
}

// Makes the ring thread take the incoming list (see the file comment).
static void weft_proactor_io_uring_wake(weft_proactor_io_uring_t* proactor) {
  // Release: the thread's clearing exchange acquires this, so it sees the
  // push (or the stop flag) made before it.
  if (weft_atomic_exchange(&proactor->wake_pending, 1, memory_order_release) ==
      0) {
    uint64_t one = 1;
    while (write(proactor->wake_fd, &one, sizeof(one)) < 0 && errno == EINTR) {
    }
  }
}

static void weft_proactor_io_uring_submit(weft_proactor_t* base_proactor,
                                          weft_proactor_op_t* op) {
  weft_proactor_io_uring_t* proactor = (weft_proactor_io_uring_t*)base_proactor;
  weft_mpsc_list_push(&proactor->incoming, &op->entry);
  weft_proactor_io_uring_wake(proactor);
}

// Counts rings whose last user has finished, bumped (release) before each
// ring is unmapped and read (acquire) after each new ring is mapped.
// liburing maps and unmaps rings with raw system calls that ThreadSanitizer
// does not see, so a new ring can reuse an old one's addresses with nothing
// TSan knows of ordering the old ring thread's accesses (its device may
// have been shut down on a detached thread) before the new ring's. This
// pair is that order, and it is the real one: the old ring's thread was
// joined before the bump. Process-wide because address reuse is.
static weft_atomic_uint64_t weft_proactor_io_uring_retired_rings = 0;

static void weft_proactor_io_uring_free(weft_proactor_io_uring_t* proactor,
                                        bool ring_initialized) {
  if (ring_initialized) {
    // Release: see weft_proactor_io_uring_retired_rings.
    weft_atomic_fetch_add(&weft_proactor_io_uring_retired_rings, 1,
                          memory_order_release);
    io_uring_queue_exit(&proactor->ring);
  }
  if (proactor->wake_fd >= 0) close(proactor->wake_fd);
  weft_allocator_free(proactor->base.allocator, proactor);
}

static void weft_proactor_io_uring_destroy(weft_proactor_t* base_proactor) {
  weft_proactor_io_uring_t* proactor = (weft_proactor_io_uring_t*)base_proactor;
  // Release: the thread's acquire load (or its flag clear) sees the stop
  // after everything submitted before it.
  weft_atomic_store(&proactor->stopping, 1, memory_order_release);
  weft_proactor_io_uring_wake(proactor);
  weft_thread_join(proactor->thread);
  weft_proactor_io_uring_free(proactor, /*ring_initialized=*/true);
}

static const weft_proactor_vtable_t kWeftProactorIoUringVtable = {
    .destroy = weft_proactor_io_uring_destroy,
    .submit = weft_proactor_io_uring_submit,
};

weft_status_t weft_proactor__io_uring_create(
    const weft_proactor_options_t* options, const char* reason,
    weft_allocator_t allocator, weft_proactor_t** out_proactor) {
  weft_proactor_io_uring_t* proactor = NULL;
  bool ring_initialized = false;
  weft_status_t status =
      weft_allocator_malloc(allocator, sizeof(*proactor), (void**)&proactor);
  if (weft_status_is_ok(status)) {
    proactor->base.allocator = allocator;
    proactor->queue_depth = options->queue_depth;
    weft_mpsc_list_initialize(&proactor->incoming);
    atomic_init(&proactor->wake_pending, 0);
    atomic_init(&proactor->stopping, 0);
    proactor->wake_fd = eventfd(0, EFD_CLOEXEC);
    if (proactor->wake_fd < 0) {
      int error = errno;
      char reason_buffer[128];
      status = weft_status_make_(
          __FILE__, __LINE__, weft_status_code_from_errno(error),
          "proactor_create: eventfd failed: %s",
          strerror_r(error, reason_buffer, sizeof(reason_buffer)));
    }
  }
  if (weft_status_is_ok(status)) {
    int result = io_uring_queue_init(options->queue_depth, &proactor->ring, 0);
    if (result < 0) {
      char reason_buffer[128];
      // The message is the reason alone (proactor_impl.h).
      status = WEFT_STATUS(
          UNAVAILABLE, "io_uring_queue_init failed: %s",
          strerror_r(-result, reason_buffer, sizeof(reason_buffer)));
    } else {
      ring_initialized = true;
      // Acquire: see weft_proactor_io_uring_retired_rings.
      (void)weft_atomic_load(&weft_proactor_io_uring_retired_rings,
                             memory_order_acquire);
      weft_proactor__initialize(
          &kWeftProactorIoUringVtable, WEFT_PROACTOR_BACKEND_IO_URING, options,
          allocator, &proactor->base,
          "io_uring: ring of %u entries, queue "
          "depth %u%s",
          proactor->ring.sq.ring_entries, options->queue_depth, reason);
    }
  }
  if (weft_status_is_ok(status)) {
    weft_thread_params_t params = {
        .name = options->thread_name ? options->thread_name : "weft-io",
        .cpu = -1,
    };
    status = weft_thread_create(weft_proactor_io_uring_main, proactor, &params,
                                allocator, &proactor->thread);
    if (!weft_status_is_ok(status)) {
      status = weft_status_annotate(status, "starting the io_uring thread");
    }
  }
  if (weft_status_is_ok(status)) {
    *out_proactor = &proactor->base;
  } else if (proactor) {
    weft_proactor_io_uring_free(proactor, ring_initialized);
  }
  return status;
}

#else  // !WEFT_HAVE_LIBURING

weft_status_t weft_proactor__io_uring_create(
    const weft_proactor_options_t* options, const char* reason,
    weft_allocator_t allocator, weft_proactor_t** out_proactor) {
  (void)options;
  (void)reason;
  (void)allocator;
  *out_proactor = NULL;
  // The message is the reason alone (proactor_impl.h).
  return WEFT_STATUS(UNAVAILABLE,
                     "weft was built without liburing (install liburing-dev)");
}

#endif  // WEFT_HAVE_LIBURING
