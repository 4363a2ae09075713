// weft: the proactor, asynchronous reads and writes of file descriptors.
//
// A caller fills a weft_proactor_op_t (storage it owns), submits it from any
// thread and gets exactly one completion callback, on one of the proactor's
// own threads, once the whole transfer is done or failed. Submitting never
// blocks on I/O and never fails: every error arrives through the callback.
//
// Transfers of any length are split below the OS's per-call limit
// (|max_transfer|) and resubmitted after partial results until complete. A
// zero-byte read before the end is OUT_OF_RANGE ("short read at byte N of
// NAME"); OS errors are translated by weft_status_code_from_errno with the
// call, the op's |name| and the offset in the message.
//
// Backends, chosen at creation:
//   IO_URING  one ring (liburing) and one thread that submits and reaps it.
//             At most |queue_depth| transfers are in the kernel at once; the
//             rest wait in FIFO order on the thread. An fd the ring cannot
//             take (EOPNOTSUPP, EINVAL from a file type without async
//             support) is transferred synchronously by the same thread.
//   THREADS   a pool of |thread_count| threads running pread/pwrite loops.
//   AUTO      IO_URING when liburing was built in and the kernel lets us set
//             up a ring (containers often refuse: ENOSYS, EPERM), THREADS
//             otherwise. weft_proactor_explanation says which and why.
// Forcing IO_URING where it is unavailable fails creation with UNAVAILABLE
// and the reason.
//
// Lifetime: weft_proactor_destroy waits for every submitted op to complete
// (callbacks run) and joins the threads. It must not be called from a
// completion callback, and nothing may be submitted once it started.
#ifndef WEFT_ASYNC_PROACTOR_H_
#define WEFT_ASYNC_PROACTOR_H_

#include <stdbool.h>
#include <stdint.h>

#include "base/mpsc_list.h"
#include "weft/allocator.h"
#include "weft/status.h"

typedef struct weft_proactor_t weft_proactor_t;

typedef enum weft_proactor_backend_e {
  WEFT_PROACTOR_BACKEND_AUTO = 0,
  WEFT_PROACTOR_BACKEND_IO_URING,
  WEFT_PROACTOR_BACKEND_THREADS,
} weft_proactor_backend_t;

// "auto", "io_uring", "threads".
const char* weft_proactor_backend_name(weft_proactor_backend_t backend);

// Parses a backend name (as above); INVALID_ARGUMENT listing the names.
weft_status_t weft_proactor_backend_parse(const char* name,
                                          weft_proactor_backend_t* out_backend);

// True when this build has the io_uring backend (liburing was found).
bool weft_proactor_io_uring_built(void);

typedef struct weft_proactor_options_t {
  weft_proactor_backend_t backend;
  // IO_URING: ring size, the most transfers in the kernel at once.
  uint32_t queue_depth;
  // THREADS: pool size.
  uint32_t thread_count;
  // The most bytes one read/write call moves (below Linux's 0x7ffff000).
  // Lowered by tests to exercise the split-and-resume path.
  uint64_t max_transfer;
  // Name prefix of the proactor's threads ("weft-io").
  const char* thread_name;
} weft_proactor_options_t;

#define WEFT_PROACTOR_DEFAULT_QUEUE_DEPTH 128u
#define WEFT_PROACTOR_DEFAULT_THREAD_COUNT 4u
#define WEFT_PROACTOR_DEFAULT_MAX_TRANSFER ((uint64_t)1 << 30)

// Sets the defaults above with backend AUTO.
void weft_proactor_options_initialize(weft_proactor_options_t* out_options);

typedef enum weft_proactor_op_type_e {
  WEFT_PROACTOR_OP_READ = 0,  // fd -> memory
  WEFT_PROACTOR_OP_WRITE,     // memory -> fd
} weft_proactor_op_type_t;

typedef struct weft_proactor_op_t weft_proactor_op_t;

// Runs once per submitted op on a proactor thread. |status| (owned by the
// callee) is OK when all |op->length| bytes moved. The op's storage may be
// reused or freed from the callback on.
typedef void (*weft_proactor_callback_t)(weft_proactor_op_t* op,
                                         weft_status_t status);

struct weft_proactor_op_t {
  // ---- set by the caller before submit ----
  weft_proactor_op_type_t type;
  int fd;
  uint64_t offset;  // file offset
  void* buffer;     // |length| bytes of host memory
  uint64_t length;
  // For messages: "'weights.bin'" or "fd 7" (borrowed until the callback).
  const char* name;
  weft_proactor_callback_t callback;
  void* user_data;

  // ---- owned by the proactor while submitted ----
  weft_mpsc_entry_t entry;
  weft_proactor_op_t* next;
  uint64_t done;  // bytes moved so far
};

// Creates a proactor (see the backends above).
weft_status_t weft_proactor_create(const weft_proactor_options_t* options,
                                   weft_allocator_t allocator,
                                   weft_proactor_t** out_proactor);

// Waits for every submitted op to complete, then frees the proactor.
void weft_proactor_destroy(weft_proactor_t* proactor);

// Starts |op| (see the fields above). Any thread; never blocks on I/O.
void weft_proactor_submit(weft_proactor_t* proactor, weft_proactor_op_t* op);

// The backend in use (never AUTO).
weft_proactor_backend_t weft_proactor_backend(const weft_proactor_t* proactor);

// One line saying which backend is in use and why ("io_uring: ring of 128
// entries, queue depth 128", "threads (4): io_uring_queue_init failed:
// Operation not permitted", "threads (4): built without liburing"). Lives as
// long as the proactor.
const char* weft_proactor_explanation(const weft_proactor_t* proactor);

// Ops submitted and not yet completed (a snapshot).
uint64_t weft_proactor_pending_count(weft_proactor_t* proactor);

#endif  // WEFT_ASYNC_PROACTOR_H_
