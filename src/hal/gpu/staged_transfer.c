// weft: staged file transfers for GPU drivers (see staged_transfer.h).
//
// Pieces are numbered in file order (0 .. pieces-1); piece i uses staging
// slot i % piece_count. The file side of a piece is one transfer: a
// proactor op whose completion sets |done| and notifies the running thread,
// or, synchronously, a weft_file_read/write done at "submit".
#include "hal/gpu/staged_transfer.h"

#include <string.h>

#include "base/atomics.h"
#include "base/notification.h"
#include "base/thread.h"
#include "base/wait_policy.h"
#include "hal/file_impl.h"
#include "weft/file.h"

// A slot's |done|: pending, done, then settled.
enum {
  WEFT_STAGED_PENDING = 0,
  WEFT_STAGED_DONE = 1,
  WEFT_STAGED_SETTLED = 2,
};

// The file side of one slot.
typedef struct weft_staged_slot_t {
  weft_proactor_op_t proactor_op;
  struct weft_staged_run_t* run;
  // WEFT_STAGED_DONE once the transfer completed (|status| is then its
  // result, owned), WEFT_STAGED_SETTLED once its completion stopped
  // touching the run (weft_staged_file_done).
  weft_atomic_uint32_t done;
  weft_status_t status;
} weft_staged_slot_t;

typedef struct weft_staged_run_t {
  const weft_staging_ring_t* ring;
  const weft_staged_transfer_device_t* device;
  weft_proactor_t* proactor;  // NULL: synchronous file side
  const weft_queue_op_t* op;
  bool is_read;
  uint64_t pieces;
  // Transfers submitted and not yet waited for (only while asynchronous).
  uint32_t in_flight;
  weft_notification_t notification;
  char name[WEFT_FILE_DISPLAY_NAME_CAPACITY];
  weft_staged_slot_t* slots;  // |ring->piece_count|
} weft_staged_run_t;

static uint64_t weft_staged_piece_length(const weft_staged_run_t* run,
                                         uint64_t piece) {
  const uint64_t offset = piece * run->ring->piece_size;
  const uint64_t left = run->op->file.length - offset;
  return left < run->ring->piece_size ? left : run->ring->piece_size;
}

static uint8_t* weft_staged_piece_host(const weft_staged_run_t* run,
                                       uint64_t piece) {
  return run->ring->host +
         (piece % run->ring->piece_count) * run->ring->piece_size;
}

static void weft_staged_file_done(weft_proactor_op_t* proactor_op,
                                  weft_status_t status) {
  weft_staged_slot_t* slot = (weft_staged_slot_t*)proactor_op->user_data;
  weft_staged_run_t* run = slot->run;
  slot->status = status;
  // Release: |status| is visible to the thread that sees |done|.
  weft_atomic_store(&slot->done, WEFT_STAGED_DONE, memory_order_release);
  weft_notification_notify(&run->notification, INT32_MAX);
  // The last touch of the run, which lives on the waiting thread's stack:
  // that thread may return, or reuse the slot, only once it sees this
  // (weft_staged_file_wait). Without it, a waiter that saw DONE without
  // sleeping could leave while this thread was still inside notify.
  weft_atomic_store(&slot->done, WEFT_STAGED_SETTLED, memory_order_release);
}

// Starts the file side of |piece| (a read into its slot, or a write from
// it).
static void weft_staged_file_start(weft_staged_run_t* run, uint64_t piece) {
  weft_staged_slot_t* slot = &run->slots[piece % run->ring->piece_count];
  const weft_queue_op_t* op = run->op;
  const uint64_t file_offset =
      op->file.file_offset + piece * run->ring->piece_size;
  const uint64_t length = weft_staged_piece_length(run, piece);
  uint8_t* host = weft_staged_piece_host(run, piece);
  atomic_init(&slot->done, WEFT_STAGED_PENDING);
  slot->status = WEFT_OK;
  if (!run->proactor) {
    slot->status = run->is_read
                       ? weft_file_read(op->file.file, file_offset, host,
                                        length)
                       : weft_file_write(op->file.file, file_offset, host,
                                         length);
    atomic_init(&slot->done, WEFT_STAGED_SETTLED);
    return;
  }
  weft_proactor_op_t* proactor_op = &slot->proactor_op;
  memset(proactor_op, 0, sizeof(*proactor_op));
  proactor_op->type =
      run->is_read ? WEFT_PROACTOR_OP_READ : WEFT_PROACTOR_OP_WRITE;
  proactor_op->fd = weft_file_fd(op->file.file);
  proactor_op->offset = file_offset;
  proactor_op->buffer = host;
  proactor_op->length = length;
  proactor_op->name = run->name;
  proactor_op->callback = weft_staged_file_done;
  proactor_op->user_data = slot;
  ++run->in_flight;
  weft_proactor_submit(run->proactor, proactor_op);
}

// Waits for the file side of |piece| and returns its result.
static weft_status_t weft_staged_file_wait(weft_staged_run_t* run,
                                           uint64_t piece) {
  weft_staged_slot_t* slot = &run->slots[piece % run->ring->piece_count];
  if (run->proactor) {
    const weft_wait_policy_t policy = weft_wait_policy_default();
    // Acquire: pairs with the completion's release of |status|.
    while (!weft_atomic_load(&slot->done, memory_order_acquire)) {
      weft_wait_token_t token =
          weft_notification_prepare_wait(&run->notification);
      if (weft_atomic_load(&slot->done, memory_order_acquire)) {
        weft_notification_cancel_wait(&run->notification);
        break;
      }
      weft_notification_commit_wait(&run->notification, token, policy,
                                    WEFT_TIME_INFINITE_FUTURE);
    }
    // The completion is at most a notify away from letting go of the run.
    while (weft_atomic_load(&slot->done, memory_order_acquire) !=
           WEFT_STAGED_SETTLED) {
      weft_thread_yield();
    }
    --run->in_flight;
  }
  weft_status_t status = slot->status;
  slot->status = WEFT_OK;
  return status;
}

// READ: file -> staging (several in flight) -> buffer, in piece order.
static weft_status_t weft_staged_read(weft_staged_run_t* run,
                                      uint64_t* out_submitted,
                                      uint64_t* out_waited) {
  const uint32_t count = run->ring->piece_count;
  weft_status_t status = WEFT_OK;
  uint64_t submitted = 0;
  uint64_t copied = 0;
  while (weft_status_is_ok(status) && copied < run->pieces) {
    // Read ahead into every slot whose last copy to the device finished.
    while (weft_status_is_ok(status) && submitted < run->pieces &&
           submitted - copied < count) {
      status = run->device->wait_piece(run->device->self,
                                       (uint32_t)(submitted % count));
      if (weft_status_is_ok(status)) weft_staged_file_start(run, submitted++);
    }
    if (!weft_status_is_ok(status)) break;
    status = weft_staged_file_wait(run, copied);
    if (weft_status_is_ok(status)) {
      status = run->device->copy(run->device->self,
                                 (uint32_t)(copied % count),
                                 /*to_buffer=*/true,
                                 copied * run->ring->piece_size,
                                 weft_staged_piece_length(run, copied));
    }
    ++copied;
  }
  *out_submitted = submitted;
  *out_waited = copied;
  return status;
}

// WRITE: buffer -> staging (copies queued ahead) -> file (several in
// flight), in piece order.
static weft_status_t weft_staged_write(weft_staged_run_t* run,
                                       uint64_t* out_submitted,
                                       uint64_t* out_waited) {
  const uint32_t count = run->ring->piece_count;
  weft_status_t status = WEFT_OK;
  uint64_t copied = 0;
  uint64_t submitted = 0;
  uint64_t written = 0;
  while (weft_status_is_ok(status) && written < run->pieces) {
    // Queue copies into every slot whose write completed (and whose last
    // copy, maybe an earlier transfer's, finished).
    while (weft_status_is_ok(status) && copied < run->pieces &&
           copied - written < count) {
      const uint32_t slot = (uint32_t)(copied % count);
      status = run->device->wait_piece(run->device->self, slot);
      if (weft_status_is_ok(status)) {
        status = run->device->copy(run->device->self, slot,
                                   /*to_buffer=*/false,
                                   copied * run->ring->piece_size,
                                   weft_staged_piece_length(run, copied));
      }
      ++copied;
    }
    // Hand every landed piece to the file, in order.
    while (weft_status_is_ok(status) && submitted < copied) {
      status = run->device->wait_piece(run->device->self,
                                       (uint32_t)(submitted % count));
      if (weft_status_is_ok(status)) weft_staged_file_start(run, submitted++);
    }
    if (!weft_status_is_ok(status)) break;
    status = weft_staged_file_wait(run, written++);
  }
  if (weft_status_is_ok(status) && run->proactor) {
    // Written behind weft_file_write's back: a length the file keeps grows.
    weft_file_note_written(run->op->file.file,
                           run->op->file.file_offset + run->op->file.length);
  }
  *out_submitted = submitted;
  *out_waited = written;
  return status;
}

weft_status_t weft_staged_transfer_run(
    const weft_staging_ring_t* ring,
    const weft_staged_transfer_device_t* device, weft_proactor_t* proactor,
    const weft_queue_op_t* op) {
  if (op->file.length == 0) return WEFT_OK;
  weft_file_t* file = op->file.file;
  // The ring as this run uses it (fewer pieces when bookkeeping for all
  // could not be allocated).
  weft_staging_ring_t used_ring = *ring;
  if (weft_file_is_stream(file)) {
    // A stream moves in order, one transfer at a time.
    proactor = NULL;
  }
  if (weft_file_memory(file) || weft_file_fd(file) < 0) proactor = NULL;
  weft_staged_slot_t inline_slots[8];
  weft_staged_slot_t* slots = inline_slots;
  weft_allocator_t allocator = weft_allocator_system();
  if (used_ring.piece_count > 8) {
    weft_status_t status = weft_allocator_malloc_array(
        allocator, used_ring.piece_count, sizeof(*slots), (void**)&slots);
    if (!weft_status_is_ok(status)) {
      // Out of memory for the bookkeeping: use 8 of the pieces.
      weft_status_free(status);
      slots = inline_slots;
      used_ring.piece_count = 8;
    }
  }
  weft_staged_run_t run;
  memset(&run, 0, sizeof(run));
  run.ring = &used_ring;
  run.device = device;
  run.proactor = proactor;
  run.op = op;
  run.is_read = op->kind == WEFT_QUEUE_OP_READ;
  run.pieces = (op->file.length + ring->piece_size - 1) / ring->piece_size;
  run.slots = slots;
  for (uint32_t i = 0; i < used_ring.piece_count; ++i) {
    slots[i].run = &run;
    slots[i].status = WEFT_OK;
    atomic_init(&slots[i].done, WEFT_STAGED_PENDING);
  }
  weft_notification_initialize(&run.notification);
  weft_file_display_name(file, run.name, sizeof(run.name));
  uint64_t submitted = 0;
  uint64_t waited = 0;
  weft_status_t status = run.is_read
                             ? weft_staged_read(&run, &submitted, &waited)
                             : weft_staged_write(&run, &submitted, &waited);
  // After an error, let every transfer still in flight land (they use the
  // staging) and drop their results.
  for (; waited < submitted; ++waited) {
    weft_status_ignore(weft_staged_file_wait(&run, waited));
  }
  weft_notification_deinitialize(&run.notification);
  if (slots != inline_slots) weft_allocator_free(allocator, slots);
  return status;
}

weft_status_t weft_staging_options_parse(const char* device_string,
                                         const weft_device_options_t* options,
                                         uint32_t* piece_size,
                                         uint32_t* pieces) {
  weft_status_t status =
      weft_device_options_get_u32(options, "staging_piece", piece_size);
  if (weft_status_is_ok(status)) {
    status = weft_device_options_get_u32(options, "staging_pieces", pieces);
  }
  if (weft_status_is_ok(status) && (*piece_size < 4096 || *pieces == 0)) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "device string '%s': staging_piece must be at least "
                         "4096 bytes and staging_pieces at least 1 (got %u "
                         "and %u)",
                         device_string, *piece_size, *pieces);
  }
  return status;
}
