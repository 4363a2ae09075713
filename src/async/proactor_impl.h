// weft: what a proactor backend implements, and the transfer bookkeeping the
// backends share (src/async/proactor.c).
//
// Every backend embeds weft_proactor_t at offset 0 and fills it with
// weft_proactor__initialize. The common code counts submissions and
// completions; a backend calls weft_proactor__complete once per op, after it
// last touched the op, and never from inside its own locks.
#ifndef WEFT_ASYNC_PROACTOR_IMPL_H_
#define WEFT_ASYNC_PROACTOR_IMPL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "async/proactor.h"
#include "base/atomics.h"

// The most bytes Linux moves in one read/write call.
#define WEFT_PROACTOR_OS_MAX_TRANSFER ((uint64_t)0x7ffff000)

// Bounds the options are checked against at create.
#define WEFT_PROACTOR_MAX_QUEUE_DEPTH 32768u
#define WEFT_PROACTOR_MAX_THREAD_COUNT 1024u

#define WEFT_PROACTOR_EXPLANATION_CAPACITY 192

typedef struct weft_proactor_vtable_t {
  // Waits for every submitted op to complete, joins the backend's threads
  // and frees the proactor with its allocator.
  void (*destroy)(weft_proactor_t* proactor);
  // Queues |op| (its proactor-owned fields are reset); never blocks on I/O.
  void (*submit)(weft_proactor_t* proactor, weft_proactor_op_t* op);
} weft_proactor_vtable_t;

struct weft_proactor_t {
  const weft_proactor_vtable_t* vtable;
  weft_allocator_t allocator;
  weft_proactor_backend_t backend;
  // Bytes per read/write call (options.max_transfer).
  uint64_t max_transfer;
  char explanation[WEFT_PROACTOR_EXPLANATION_CAPACITY];
  // Ops handed to submit, and ops whose callback returned. The submitting
  // and completing threads each write one, so padding keeps them apart
  // (padding, not _Alignas: the allocator promises only 16-byte alignment).
  uint8_t padding0[64];
  weft_atomic_uint64_t submitted_count;
  uint8_t padding1[64];
  weft_atomic_uint64_t completed_count;
  uint8_t padding2[64];
};

// Fills the common part of a backend's proactor. |explanation| is a printf
// format for weft_proactor_explanation.
void weft_proactor__initialize(const weft_proactor_vtable_t* vtable,
                               weft_proactor_backend_t backend,
                               const weft_proactor_options_t* options,
                               weft_allocator_t allocator,
                               weft_proactor_t* proactor,
                               const char* explanation, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;

// Backend constructors. |options| were validated; |reason| is the text after
// "threads (N): " / "io_uring: ..." saying why this backend was chosen.
//
// The io_uring one returns UNAVAILABLE whose message is the reason alone
// ("io_uring_queue_init failed: Operation not permitted") when the ring
// cannot be set up or liburing was not built in, so AUTO can fall back.
weft_status_t weft_proactor__io_uring_create(
    const weft_proactor_options_t* options, const char* reason,
    weft_allocator_t allocator, weft_proactor_t** out_proactor);
weft_status_t weft_proactor__threads_create(
    const weft_proactor_options_t* options, const char* reason,
    weft_allocator_t allocator, weft_proactor_t** out_proactor);

// The status of an op that cannot be started at all (an offset range the
// OS cannot address), or OK. Backends check it before the first call.
weft_status_t weft_proactor__check_op(const weft_proactor_op_t* op);

// The byte count of the next call for |op|: what is left, capped at
// max_transfer. Never 0 while the op is unfinished.
static inline size_t weft_proactor__next_chunk(const weft_proactor_t* proactor,
                                               const weft_proactor_op_t* op) {
  uint64_t remaining = op->length - op->done;
  return (size_t)(remaining < proactor->max_transfer ? remaining
                                                     : proactor->max_transfer);
}

// Accounts the result of one read/write call of |op| (bytes moved, or a
// negative errno) made at offset + done. Returns false when the rest of the
// op must be issued again (a partial result, -EINTR, -EAGAIN); true when the
// op is finished, with |*out_status| its final status: OK once all bytes
// moved, OUT_OF_RANGE "short read at byte N of NAME (reading [a, b))" for a
// zero-byte read before the end (RESOURCE_EXHAUSTED "short write" for a
// write), or the errno's code with "pread of NAME at offset X: reason".
bool weft_proactor__account(weft_proactor_op_t* op, int64_t result,
                            weft_status_t* out_status);

// Runs the rest of |op| (from op->done) on the calling thread with
// pread/pwrite calls of at most max_transfer bytes and returns its final
// status (as weft_proactor__account describes; EAGAIN is an error here).
weft_status_t weft_proactor__transfer_sync(const weft_proactor_t* proactor,
                                           weft_proactor_op_t* op);

// Calls |op|'s callback with |status| and counts the completion. The caller
// must not touch |op| afterwards.
void weft_proactor__complete(weft_proactor_t* proactor, weft_proactor_op_t* op,
                             weft_status_t status);

#endif  // WEFT_ASYNC_PROACTOR_IMPL_H_
