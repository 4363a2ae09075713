// weft: channels over MPI (see include/weft/mpi.h).
//
// Three duplicates of the application's communicator, so no two streams
// of collectives can interleave differently on two ranks:
//   data     the transfers, started by the engine in submission order;
//   check    the agreement of WEFT_CHANNEL_FLAG_CHECK_SIZES (one
//            MPI_Iallreduce with MAX per collective of (size, -size, the
//            rank + 1 whose op failed before it started)), also in
//            submission order;
//   control  weft_channel_split, called by the application's thread.
//
// The engine is one thread per channel. Ops arrive from host calls (their
// waits reached, their data mapped) through a locked list; the engine
// starts send and recv at once and collectives strictly in their sequence
// order (a collective whose predecessor has not arrived yet is held), then
// polls every request with MPI_Testsome. While requests are in flight it
// polls without pause for WEFT_MPI_SPIN_NS, then yields the CPU between
// polls. It never sleeps with a transfer in flight: Open MPI moves data
// only inside MPI calls, and a first version that backed off to sleeps
// (10 us doubling to 1 ms) made a 256 KiB allreduce 6x slower than the
// direct call. With nothing in flight it sleeps on its condition
// (base/condition.h) until an op arrives.
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/condition.h"
#include "base/mutex.h"
#include "base/thread.h"
#include "channel/channel_impl.h"
#include "weft/mpi.h"

#define WEFT_MPI_SPIN_NS (50ll * 1000)

typedef enum weft_mpi_phase_e {
  WEFT_MPI_PHASE_HELD = 0,  // waiting for its turn to check its size
  WEFT_MPI_PHASE_CHECKING,  // the size agreement in flight
  WEFT_MPI_PHASE_CHECKED,   // waiting for its turn to transfer
  WEFT_MPI_PHASE_TRANSFER,  // the transfer in flight
} weft_mpi_phase_t;

// The engine's state of one op (op->backend).
typedef struct weft_mpi_op_t {
  weft_channel_op_t* op;
  weft_mpi_phase_t phase;
  // (size, -size, rank + 1 if the op never started here else 0), and
  // their maxima over the ranks; the agreement's own failure, if any.
  int64_t sizes[3];
  int64_t agreed[3];
  int check_error;
  // The MPI call in flight, for messages.
  const char* call;
  // Requests of the transfer still in flight (a large allreduce is several
  // pieces) and the first failure among them.
  uint32_t pending;
  int transfer_error;
  struct weft_mpi_op_t* next;
} weft_mpi_op_t;

typedef struct weft_mpi_channel_t {
  weft_channel_t base;
  MPI_Comm data_comm;
  MPI_Comm check_comm;
  MPI_Comm control_comm;
  bool from_environment;

  weft_thread_t* thread;
  weft_slim_mutex_t mutex;
  // The engine sleeps on it while it has nothing to do; an arriving op and
  // the last release signal it.
  weft_condition_t wake;
  // Guarded by |mutex|.
  weft_mpi_op_t* incoming_head;
  weft_mpi_op_t* incoming_tail;
  bool stopping;

  // The engine thread's own.
  weft_mpi_op_t* held_check;  // sorted by sequence
  weft_mpi_op_t* held_data;   // sorted by sequence
  uint64_t next_check_sequence;
  uint64_t next_data_sequence;
  uint32_t active_count;
  uint32_t active_capacity;
  MPI_Request* requests;
  weft_mpi_op_t** owners;
  int* indices;
  MPI_Status* statuses;
} weft_mpi_channel_t;

static const weft_channel_backend_vtable_t weft_mpi_channel_vtable;

static weft_mpi_channel_t* weft_mpi_channel_cast(weft_channel_t* channel) {
  return (weft_mpi_channel_t*)channel;
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

static weft_status_code_t weft_mpi_error_code(int error) {
  int error_class = MPI_ERR_OTHER;
  MPI_Error_class(error, &error_class);
  switch (error_class) {
    case MPI_ERR_ARG:
    case MPI_ERR_BUFFER:
    case MPI_ERR_COUNT:
    case MPI_ERR_TYPE:
    case MPI_ERR_TAG:
    case MPI_ERR_RANK:
    case MPI_ERR_ROOT:
    case MPI_ERR_OP:
    case MPI_ERR_COMM:
      return WEFT_STATUS_INVALID_ARGUMENT;
    case MPI_ERR_TRUNCATE:
      return WEFT_STATUS_OUT_OF_RANGE;
    case MPI_ERR_NO_MEM:
      return WEFT_STATUS_RESOURCE_EXHAUSTED;
    default:
      return WEFT_STATUS_UNAVAILABLE;
  }
}

// MPI's own text for |error|.
static void weft_mpi_error_string(int error, char* text) {
  int length = 0;
  if (MPI_Error_string(error, text, &length) != MPI_SUCCESS) {
    snprintf(text, MPI_MAX_ERROR_STRING, "MPI error %d", error);
  }
}

// "MPI_Irecv failed in recv from rank 1 (tag 3) on channel 'world' (rank 0
// of 2): MPI_ERR_TRUNCATE: message truncated".
static weft_status_t weft_mpi_op_error(const weft_channel_op_t* op,
                                       const char* call, int error) {
  char message[MPI_MAX_ERROR_STRING];
  weft_mpi_error_string(error, message);
  char label[256];
  weft_channel_op_label(op, label, sizeof(label));
  return weft_status_make_(__FILE__, __LINE__, weft_mpi_error_code(error),
                           "%s failed in %s: %s", call, label, message);
}

static weft_status_t weft_mpi_comm_error(const char* call, const char* name,
                                         int error) {
  char message[MPI_MAX_ERROR_STRING];
  weft_mpi_error_string(error, message);
  return weft_status_make_(__FILE__, __LINE__, weft_mpi_error_code(error),
                           "%s failed for channel '%s': %s", call, name,
                           message);
}

//===----------------------------------------------------------------------===//
// Starting transfers (engine thread)
//===----------------------------------------------------------------------===//

static MPI_Datatype weft_mpi_datatype(weft_element_type_t type) {
  switch (type) {
    case WEFT_ELEMENT_TYPE_F64:
      return MPI_DOUBLE;
    case WEFT_ELEMENT_TYPE_I32:
      return MPI_INT32_T;
    case WEFT_ELEMENT_TYPE_I64:
      return MPI_INT64_T;
    case WEFT_ELEMENT_TYPE_F32:
    default:
      return MPI_FLOAT;
  }
}

static MPI_Op weft_mpi_op(weft_reduction_t reduction) {
  switch (reduction) {
    case WEFT_REDUCTION_PRODUCT:
      return MPI_PROD;
    case WEFT_REDUCTION_MIN:
      return MPI_MIN;
    case WEFT_REDUCTION_MAX:
      return MPI_MAX;
    case WEFT_REDUCTION_SUM:
    default:
      return MPI_SUM;
  }
}

// Adds |request| of |mpi_op| to the polled set.
static bool weft_mpi_track(weft_mpi_channel_t* channel, weft_mpi_op_t* mpi_op,
                           MPI_Request request) {
  if (channel->active_count == channel->active_capacity) {
    const uint32_t capacity =
        channel->active_capacity ? channel->active_capacity * 2 : 16;
    MPI_Request* requests =
        realloc(channel->requests, capacity * sizeof(*requests));
    if (requests) channel->requests = requests;
    weft_mpi_op_t** owners =
        realloc(channel->owners, capacity * sizeof(*owners));
    if (owners) channel->owners = owners;
    int* indices = realloc(channel->indices, capacity * sizeof(*indices));
    if (indices) channel->indices = indices;
    MPI_Status* statuses =
        realloc(channel->statuses, capacity * sizeof(*statuses));
    if (statuses) channel->statuses = statuses;
    if (!requests || !owners || !indices || !statuses) return false;
    channel->active_capacity = capacity;
  }
  channel->requests[channel->active_count] = request;
  channel->owners[channel->active_count] = mpi_op;
  ++channel->active_count;
  return true;
}

// Ends |mpi_op|'s op with |status| and frees the engine's state.
static void weft_mpi_end(weft_mpi_channel_t* channel, weft_mpi_op_t* mpi_op,
                         weft_status_t status) {
  weft_channel_op_t* op = mpi_op->op;
  weft_allocator_free(channel->base.allocator, mpi_op);
  weft_channel_op_end(op, status);
}

// Starts the size agreement (or skips it).
static void weft_mpi_start_check(weft_mpi_channel_t* channel,
                                 weft_mpi_op_t* mpi_op) {
  weft_channel_op_t* op = mpi_op->op;
  if (!(channel->base.flags & WEFT_CHANNEL_FLAG_CHECK_SIZES)) {
    mpi_op->phase = WEFT_MPI_PHASE_CHECKED;
    return;
  }
  // What the ranks agree on: the source's size (every collective's shape
  // rule follows from it).
  mpi_op->sizes[0] = (int64_t)op->source_length;
  mpi_op->sizes[1] = -(int64_t)op->source_length;
  mpi_op->sizes[2] = op->poisoned ? channel->base.rank + 1 : 0;
  MPI_Request request = MPI_REQUEST_NULL;
  mpi_op->call = "MPI_Iallreduce (size check)";
  int error = MPI_Iallreduce(mpi_op->sizes, mpi_op->agreed, 3, MPI_INT64_T,
                             MPI_MAX, channel->check_comm, &request);
  if (error != MPI_SUCCESS) {
    // The op fails at its data turn (which this rank must still take).
    mpi_op->phase = WEFT_MPI_PHASE_CHECKED;
    mpi_op->check_error = error;
    return;
  }
  mpi_op->phase = WEFT_MPI_PHASE_CHECKING;
  if (!weft_mpi_track(channel, mpi_op, request)) {
    // Out of memory for the polled set: wait for it here instead.
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    mpi_op->phase = WEFT_MPI_PHASE_CHECKED;
  }
}

// An allreduce of at least WEFT_MPI_PIECE_THRESHOLD bytes goes as up to
// WEFT_MPI_MAX_PIECES MPI_Iallreduce calls of at least WEFT_MPI_PIECE_BYTES
// in flight at once, so one piece's reduction overlaps the next one's
// transfer. Measured on 2 ranks over shared memory (Open MPI 4.1, median of
// 7): 16 MiB 4.75 -> 4.05 ms in 8 pieces, 64 MiB 21.7 -> 15.7 ms, 256 MiB
// 73 -> 60 ms; at 256 KiB pieces only cost (43 -> 64 us in 8). Every rank
// cuts the same pieces: they depend on the size alone.
#define WEFT_MPI_PIECE_THRESHOLD (4ull << 20)
#define WEFT_MPI_PIECE_BYTES (2ull << 20)
#define WEFT_MPI_MAX_PIECES 8u

static void weft_mpi_start_allreduce_pieces(weft_mpi_channel_t* channel,
                                            weft_mpi_op_t* mpi_op,
                                            uint32_t element_size) {
  weft_channel_op_t* op = mpi_op->op;
  const uint64_t elements = op->recv_bytes / element_size;
  uint64_t pieces = 1;
  if (op->recv_bytes >= WEFT_MPI_PIECE_THRESHOLD) {
    pieces = op->recv_bytes / WEFT_MPI_PIECE_BYTES;
    if (pieces > WEFT_MPI_MAX_PIECES) pieces = WEFT_MPI_MAX_PIECES;
  }
  const uint64_t per_piece = (elements + pieces - 1) / pieces;
  mpi_op->phase = WEFT_MPI_PHASE_TRANSFER;
  mpi_op->pending = 0;
  for (uint64_t first = 0; first < elements || (elements == 0 && first == 0);
       first += per_piece) {
    const uint64_t count =
        elements - first < per_piece ? elements - first : per_piece;
    const uint64_t offset = first * element_size;
    MPI_Request request = MPI_REQUEST_NULL;
    int error = MPI_Iallreduce(
        op->in_place ? MPI_IN_PLACE : (const uint8_t*)op->send_data + offset,
        (uint8_t*)op->recv_data + offset, (int)count,
        weft_mpi_datatype(op->element_type), weft_mpi_op(op->reduction),
        channel->data_comm, &request);
    if (error == MPI_SUCCESS && !weft_mpi_track(channel, mpi_op, request)) {
      error = MPI_Wait(&request, MPI_STATUS_IGNORE);
    } else if (error == MPI_SUCCESS) {
      ++mpi_op->pending;
    }
    if (error != MPI_SUCCESS && mpi_op->transfer_error == MPI_SUCCESS) {
      mpi_op->transfer_error = error;
    }
    if (elements == 0) break;
  }
  if (mpi_op->pending == 0) {
    weft_mpi_end(channel, mpi_op,
                 mpi_op->transfer_error == MPI_SUCCESS
                     ? WEFT_OK
                     : weft_mpi_op_error(op, mpi_op->call,
                                         mpi_op->transfer_error));
  }
}

// Starts the transfer of |mpi_op|, or ends it with the call's failure.
static void weft_mpi_start_transfer(weft_mpi_channel_t* channel,
                                    weft_mpi_op_t* mpi_op) {
  weft_channel_op_t* op = mpi_op->op;
  MPI_Comm comm = channel->data_comm;
  MPI_Request request = MPI_REQUEST_NULL;
  int error = MPI_SUCCESS;
  const uint32_t element_size = weft_element_type_size(op->element_type);
  switch (op->kind) {
    case WEFT_CHANNEL_OP_SEND:
      mpi_op->call = "MPI_Isend";
      error = MPI_Isend(op->send_data, (int)op->send_bytes, MPI_BYTE, op->peer,
                        op->tag, comm, &request);
      break;
    case WEFT_CHANNEL_OP_RECV:
      mpi_op->call = "MPI_Irecv";
      error = MPI_Irecv(op->recv_data, (int)op->recv_bytes, MPI_BYTE, op->peer,
                        op->tag, comm, &request);
      break;
    case WEFT_CHANNEL_OP_ALLREDUCE:
      mpi_op->call = "MPI_Iallreduce";
      weft_mpi_start_allreduce_pieces(channel, mpi_op, element_size);
      return;
    case WEFT_CHANNEL_OP_ALLGATHER:
      mpi_op->call = "MPI_Iallgather";
      error = MPI_Iallgather(op->send_data, (int)op->send_bytes, MPI_BYTE,
                             op->recv_data, (int)op->send_bytes, MPI_BYTE,
                             comm, &request);
      break;
    case WEFT_CHANNEL_OP_REDUCE_SCATTER:
      mpi_op->call = "MPI_Ireduce_scatter_block";
      error = MPI_Ireduce_scatter_block(
          op->send_data, op->recv_data, (int)(op->recv_bytes / element_size),
          weft_mpi_datatype(op->element_type), weft_mpi_op(op->reduction), comm,
          &request);
      break;
    case WEFT_CHANNEL_OP_BROADCAST:
      mpi_op->call = "MPI_Ibcast";
      error = MPI_Ibcast(op->recv_data, (int)op->recv_bytes, MPI_BYTE, op->peer,
                         comm, &request);
      break;
    case WEFT_CHANNEL_OP_ALLTOALL: {
      mpi_op->call = "MPI_Ialltoall";
      const int block = (int)(op->send_bytes / (uint64_t)channel->base.size);
      error = MPI_Ialltoall(op->send_data, block, MPI_BYTE, op->recv_data,
                            block, MPI_BYTE, comm, &request);
      break;
    }
    case WEFT_CHANNEL_OP_BARRIER:
    default:
      mpi_op->call = "MPI_Ibarrier";
      error = MPI_Ibarrier(comm, &request);
      break;
  }
  if (error != MPI_SUCCESS) {
    weft_mpi_end(channel, mpi_op, weft_mpi_op_error(op, mpi_op->call, error));
    return;
  }
  mpi_op->phase = WEFT_MPI_PHASE_TRANSFER;
  mpi_op->pending = 1;
  if (!weft_mpi_track(channel, mpi_op, request)) {
    MPI_Status status;
    error = MPI_Wait(&request, &status);
    weft_mpi_end(channel, mpi_op,
                 error == MPI_SUCCESS
                     ? WEFT_OK
                     : weft_mpi_op_error(op, mpi_op->call, error));
  }
}

// Inserts |mpi_op| into |*list| by sequence.
static void weft_mpi_insert_sorted(weft_mpi_op_t** list, weft_mpi_op_t* mpi_op) {
  while (*list && (*list)->op->sequence < mpi_op->op->sequence) {
    list = &(*list)->next;
  }
  mpi_op->next = *list;
  *list = mpi_op;
}

// Starts every held collective whose turn it is, checks first.
static void weft_mpi_advance_collectives(weft_mpi_channel_t* channel) {
  bool moved = true;
  while (moved) {
    moved = false;
    weft_mpi_op_t* head = channel->held_check;
    if (head && head->op->sequence == channel->next_check_sequence) {
      channel->held_check = head->next;
      head->next = NULL;
      ++channel->next_check_sequence;
      weft_mpi_start_check(channel, head);
      weft_mpi_insert_sorted(&channel->held_data, head);
      moved = true;
    }
    head = channel->held_data;
    if (head && head->phase == WEFT_MPI_PHASE_CHECKED &&
        head->op->sequence == channel->next_data_sequence) {
      channel->held_data = head->next;
      head->next = NULL;
      ++channel->next_data_sequence;
      weft_channel_op_t* op = head->op;
      const bool checked =
          (channel->base.flags & WEFT_CHANNEL_FLAG_CHECK_SIZES) != 0;
      if (checked && head->check_error != MPI_SUCCESS) {
        weft_mpi_end(channel, head,
                     weft_mpi_op_error(op, "MPI_Iallreduce (size check)",
                                       head->check_error));
      } else if (checked && head->agreed[2] != 0) {
        // A rank's op never started: it fails on every rank.
        char label[256];
        weft_channel_op_label(op, label, sizeof(label));
        weft_mpi_end(channel, head,
                     WEFT_STATUS(ABORTED,
                                 "%s did not run: rank %" PRId64
                                 "'s op failed before it started (see that "
                                 "rank's error)",
                                 label, head->agreed[2] - 1));
      } else if (checked &&
                 (head->agreed[0] != (int64_t)op->source_length ||
                  -head->agreed[1] != (int64_t)op->source_length)) {
        // Every rank sees the same extremes, so every rank fails it.
        char label[256];
        weft_channel_op_label(op, label, sizeof(label));
        weft_mpi_end(channel, head,
                     WEFT_STATUS(INVALID_ARGUMENT,
                                 "%s: the ranks disagree on its size: this "
                                 "rank has %" PRIu64
                                 " bytes, the ranks have from %" PRId64
                                 " to %" PRId64 " bytes",
                                 label, op->source_length, -head->agreed[1],
                                 head->agreed[0]));
      } else {
        weft_mpi_start_transfer(channel, head);
      }
      moved = true;
    }
  }
}

// Takes an arrived op: send and recv start now, collectives in turn.
static void weft_mpi_accept(weft_mpi_channel_t* channel, weft_mpi_op_t* mpi_op) {
  if (weft_channel_op_kind_is_collective(mpi_op->op->kind)) {
    weft_mpi_insert_sorted(&channel->held_check, mpi_op);
  } else {
    mpi_op->phase = WEFT_MPI_PHASE_CHECKED;
    weft_mpi_start_transfer(channel, mpi_op);
  }
}

// A request of |mpi_op| completed with |status|.
static void weft_mpi_complete(weft_mpi_channel_t* channel,
                              weft_mpi_op_t* mpi_op, int error,
                              const MPI_Status* status) {
  weft_channel_op_t* op = mpi_op->op;
  if (mpi_op->phase == WEFT_MPI_PHASE_CHECKING) {
    mpi_op->check_error = error;
    mpi_op->phase = WEFT_MPI_PHASE_CHECKED;
    return;
  }
  if (error != MPI_SUCCESS && mpi_op->transfer_error == MPI_SUCCESS) {
    mpi_op->transfer_error = error;
  }
  if (--mpi_op->pending != 0) return;  // more pieces in flight
  error = mpi_op->transfer_error;
  weft_status_t result = WEFT_OK;
  if (error != MPI_SUCCESS) {
    result = weft_mpi_op_error(op, mpi_op->call, error);
  } else if (op->kind == WEFT_CHANNEL_OP_RECV) {
    int count = 0;
    MPI_Get_count(status, MPI_BYTE, &count);
    result = weft_channel_recv_status(op, (uint64_t)count);
  }
  weft_mpi_end(channel, mpi_op, result);
}

// Polls the requests in flight once; true when any completed.
static bool weft_mpi_poll(weft_mpi_channel_t* channel) {
  if (channel->active_count == 0) return false;
  int completed = 0;
  int error = MPI_Testsome((int)channel->active_count, channel->requests,
                           &completed, channel->indices, channel->statuses);
  if (completed == MPI_UNDEFINED || completed <= 0) return false;
  // Collect the owners first: compaction below moves entries.
  for (int i = 0; i < completed; ++i) {
    const int index = channel->indices[i];
    const int request_error =
        error == MPI_ERR_IN_STATUS ? channel->statuses[i].MPI_ERROR
                                   : (error == MPI_SUCCESS ? MPI_SUCCESS : error);
    weft_mpi_op_t* mpi_op = channel->owners[index];
    channel->owners[index] = NULL;
    weft_mpi_complete(channel, mpi_op, request_error, &channel->statuses[i]);
  }
  // Drop the finished entries (their requests are MPI_REQUEST_NULL now).
  uint32_t kept = 0;
  for (uint32_t i = 0; i < channel->active_count; ++i) {
    if (channel->owners[i]) {
      channel->requests[kept] = channel->requests[i];
      channel->owners[kept] = channel->owners[i];
      ++kept;
    }
  }
  channel->active_count = kept;
  return true;
}

static int weft_mpi_engine_main(void* user_data) {
  weft_mpi_channel_t* channel = (weft_mpi_channel_t*)user_data;
  weft_time_t idle_since = weft_time_now();
  for (;;) {
    weft_slim_mutex_lock(&channel->mutex);
    while (!channel->incoming_head && channel->active_count == 0 &&
           !channel->stopping) {
      weft_condition_wait(&channel->wake, &channel->mutex,
                          WEFT_TIME_INFINITE_FUTURE);
      idle_since = weft_time_now();
    }
    weft_mpi_op_t* incoming = channel->incoming_head;
    channel->incoming_head = channel->incoming_tail = NULL;
    // Stopping comes after every op ended (weft_channel_release).
    const bool stop = channel->stopping && !incoming &&
                      channel->active_count == 0;
    weft_slim_mutex_unlock(&channel->mutex);
    if (stop) break;
    bool progressed = incoming != NULL;
    while (incoming) {
      weft_mpi_op_t* next = incoming->next;
      incoming->next = NULL;
      weft_mpi_accept(channel, incoming);
      incoming = next;
    }
    if (weft_mpi_poll(channel)) progressed = true;
    weft_mpi_advance_collectives(channel);
    if (progressed) {
      idle_since = weft_time_now();
    } else if (channel->active_count &&
               weft_time_now() - idle_since > WEFT_MPI_SPIN_NS) {
      // Nothing moved for a while: let other threads run between polls.
      // Not a sleep: MPI moves data only inside MPI calls (Open MPI has no
      // progress thread of its own), so a sleeping engine stalls the
      // transfer on every rank.
      weft_thread_yield();
    }
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// The backend vtable
//===----------------------------------------------------------------------===//

static void weft_mpi_channel_start(weft_channel_t* base_channel,
                                   weft_channel_op_t* op) {
  weft_mpi_channel_t* channel = weft_mpi_channel_cast(base_channel);
  weft_mpi_op_t* mpi_op = NULL;
  weft_status_t status = weft_allocator_malloc(
      base_channel->allocator, sizeof(*mpi_op), (void**)&mpi_op);
  if (!weft_status_is_ok(status)) {
    // This rank cannot take part: its peers see the failure as a hang the
    // reports show; nothing better can be done without memory.
    weft_channel_op_end(op, status);
    return;
  }
  memset(mpi_op, 0, sizeof(*mpi_op));
  mpi_op->op = op;
  op->backend = mpi_op;
  weft_slim_mutex_lock(&channel->mutex);
  if (channel->incoming_tail) {
    channel->incoming_tail->next = mpi_op;
  } else {
    channel->incoming_head = mpi_op;
  }
  channel->incoming_tail = mpi_op;
  weft_condition_signal(&channel->wake);
  weft_slim_mutex_unlock(&channel->mutex);
}

static void weft_mpi_channel_free(weft_mpi_channel_t* channel) {
  MPI_Comm_free(&channel->data_comm);
  MPI_Comm_free(&channel->check_comm);
  MPI_Comm_free(&channel->control_comm);
  free(channel->requests);
  free(channel->owners);
  free(channel->indices);
  free(channel->statuses);
  weft_condition_deinitialize(&channel->wake);
  weft_slim_mutex_deinitialize(&channel->mutex);
  weft_allocator_t allocator = channel->base.allocator;
  weft_channel_deinitialize(&channel->base);
  weft_allocator_free(allocator, channel);
}

static void weft_mpi_channel_destroy(weft_channel_t* base_channel) {
  weft_mpi_channel_t* channel = weft_mpi_channel_cast(base_channel);
  weft_slim_mutex_lock(&channel->mutex);
  channel->stopping = true;
  weft_condition_signal(&channel->wake);
  weft_slim_mutex_unlock(&channel->mutex);
  weft_thread_join(channel->thread);
  weft_mpi_channel_free(channel);
}

// Makes a channel of a communicator the caller has already duplicated
// three times (taking them over).
static weft_status_t weft_mpi_channel_create_from_comms(
    MPI_Comm comms[3], const char* name, weft_channel_flags_t flags,
    weft_allocator_t allocator, weft_channel_t** out_channel);

static weft_status_t weft_mpi_channel_split(weft_channel_t* base_channel,
                                            int32_t color, int32_t key,
                                            weft_channel_t** out_channel) {
  weft_mpi_channel_t* channel = weft_mpi_channel_cast(base_channel);
  MPI_Comm sub = MPI_COMM_NULL;
  int error = MPI_Comm_split(channel->control_comm,
                             color < 0 ? MPI_UNDEFINED : color, key, &sub);
  if (error != MPI_SUCCESS) {
    return weft_mpi_comm_error("MPI_Comm_split", base_channel->name, error);
  }
  if (sub == MPI_COMM_NULL) return WEFT_OK;
  char name[256];
  snprintf(name, sizeof(name), "%s/%d", base_channel->name, color);
  weft_status_t status =
      weft_mpi_channel_create(sub, name, base_channel->flags,
                              base_channel->allocator, out_channel);
  MPI_Comm_free(&sub);
  return status;
}

static const weft_channel_backend_vtable_t weft_mpi_channel_vtable = {
    .destroy = weft_mpi_channel_destroy,
    .split = weft_mpi_channel_split,
    .start = weft_mpi_channel_start,
};

//===----------------------------------------------------------------------===//
// Creation
//===----------------------------------------------------------------------===//

static weft_status_t weft_mpi_check_thread_level(const char* function) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!initialized || finalized) {
    return WEFT_STATUS(FAILED_PRECONDITION,
                       "%s: MPI is %s (call MPI_Init_thread with "
                       "MPI_THREAD_MULTIPLE first, or use "
                       "weft_mpi_channel_create_from_environment)",
                       function, finalized ? "finalized" : "not initialized");
  }
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  if (provided < MPI_THREAD_MULTIPLE) {
    static const char* const kLevels[] = {"MPI_THREAD_SINGLE",
                                          "MPI_THREAD_FUNNELED",
                                          "MPI_THREAD_SERIALIZED"};
    const char* level =
        provided >= 0 && provided < 3 ? kLevels[provided] : "below MULTIPLE";
    return WEFT_STATUS(FAILED_PRECONDITION,
                       "%s: MPI provides %s, but a weft channel's progress "
                       "engine calls MPI beside the application's threads and "
                       "needs MPI_THREAD_MULTIPLE",
                       function, level);
  }
  return WEFT_OK;
}

weft_status_t weft_mpi_channel_create(MPI_Comm comm, const char* name,
                                      weft_channel_flags_t flags,
                                      weft_allocator_t allocator,
                                      weft_channel_t** out_channel) {
  if (!out_channel) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "weft_mpi_channel_create: out_channel is NULL");
  }
  *out_channel = NULL;
  if (flags & ~(weft_channel_flags_t)WEFT_CHANNEL_FLAG_CHECK_SIZES) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "weft_mpi_channel_create: unknown flags 0x%x",
                       (unsigned)flags);
  }
  weft_status_t status = weft_mpi_check_thread_level("weft_mpi_channel_create");
  if (!weft_status_is_ok(status)) return status;
  if (comm == MPI_COMM_NULL) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "weft_mpi_channel_create: comm is MPI_COMM_NULL");
  }
  if (!name) name = "mpi";
  MPI_Comm comms[3] = {MPI_COMM_NULL, MPI_COMM_NULL, MPI_COMM_NULL};
  for (int i = 0; i < 3 && weft_status_is_ok(status); ++i) {
    int error = MPI_Comm_dup(comm, &comms[i]);
    if (error != MPI_SUCCESS) {
      status = weft_mpi_comm_error("MPI_Comm_dup", name, error);
    } else {
      MPI_Comm_set_errhandler(comms[i], MPI_ERRORS_RETURN);
    }
  }
  if (weft_status_is_ok(status)) {
    return weft_mpi_channel_create_from_comms(comms, name, flags, allocator,
                                              out_channel);
  }
  for (int i = 0; i < 3; ++i) {
    if (comms[i] != MPI_COMM_NULL) MPI_Comm_free(&comms[i]);
  }
  return status;
}

static weft_status_t weft_mpi_channel_create_from_comms(
    MPI_Comm comms[3], const char* name, weft_channel_flags_t flags,
    weft_allocator_t allocator, weft_channel_t** out_channel) {
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(comms[0], &rank);
  MPI_Comm_size(comms[0], &size);
  int* tag_ub = NULL;
  int has_tag_ub = 0;
  MPI_Comm_get_attr(comms[0], MPI_TAG_UB, &tag_ub, &has_tag_ub);
  const int32_t tag_limit = has_tag_ub && tag_ub ? *tag_ub : 32767;

  weft_mpi_channel_t* channel = NULL;
  weft_status_t status =
      weft_allocator_malloc(allocator, sizeof(*channel), (void**)&channel);
  if (weft_status_is_ok(status)) {
    memset(channel, 0, sizeof(*channel));
    status = weft_channel_initialize(&weft_mpi_channel_vtable, name, rank, size,
                                     tag_limit, flags, allocator,
                                     &channel->base);
    if (!weft_status_is_ok(status)) {
      weft_allocator_free(allocator, channel);
      channel = NULL;
    }
  }
  if (!weft_status_is_ok(status)) {
    for (int i = 0; i < 3; ++i) MPI_Comm_free(&comms[i]);
    return status;
  }
  channel->data_comm = comms[0];
  channel->check_comm = comms[1];
  channel->control_comm = comms[2];
  weft_slim_mutex_initialize(&channel->mutex);
  weft_condition_initialize(&channel->wake);
  const weft_thread_params_t params = {.name = "weft-mpi", .cpu = -1};
  status = weft_thread_create(weft_mpi_engine_main, channel, &params,
                              allocator, &channel->thread);
  if (!weft_status_is_ok(status)) {
    weft_condition_deinitialize(&channel->wake);
    weft_slim_mutex_deinitialize(&channel->mutex);
    for (int i = 0; i < 3; ++i) MPI_Comm_free(&comms[i]);
    weft_channel_deinitialize(&channel->base);
    weft_allocator_free(allocator, channel);
    return weft_status_annotate(status,
                                "weft_mpi_channel_create: no thread for "
                                "channel '%s''s progress engine",
                                name);
  }
  *out_channel = &channel->base;
  return WEFT_OK;
}

// MPI initialised by weft is finalised at exit.
static weft_slim_mutex_t weft_mpi_environment_mutex =
    WEFT_SLIM_MUTEX_INITIALIZER;

static void weft_mpi_finalize_at_exit(void) {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

weft_status_t weft_mpi_channel_create_from_environment(
    weft_channel_flags_t flags, weft_allocator_t allocator,
    weft_channel_t** out_channel) {
  if (!out_channel) {
    return WEFT_STATUS(
        INVALID_ARGUMENT,
        "weft_mpi_channel_create_from_environment: out_channel is NULL");
  }
  *out_channel = NULL;
  weft_status_t status = WEFT_OK;
  weft_slim_mutex_lock(&weft_mpi_environment_mutex);
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = MPI_THREAD_SINGLE;
    int error = MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided);
    if (error != MPI_SUCCESS) {
      status = weft_mpi_comm_error("MPI_Init_thread", "world", error);
    } else {
      atexit(weft_mpi_finalize_at_exit);
    }
  }
  weft_slim_mutex_unlock(&weft_mpi_environment_mutex);
  if (weft_status_is_ok(status)) {
    status = weft_mpi_channel_create(MPI_COMM_WORLD, "world", flags, allocator,
                                     out_channel);
  }
  return status;
}
