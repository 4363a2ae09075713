// weft: channel ops, from submit to their end (see channel_impl.h).
//
// Each op is one host call on its device's queue, so it waits, runs and
// fails exactly like every other queue op. The call (once its waits are
// reached) maps the data and hands the op to the backend, then returns
// DEFERRED: the op's signals now belong to its fence, which
// weft_channel_op_end signals or fails when the transfer ends. The call
// asks to be told if it will never run (a failed wait, a released device),
// which is where an op that never started is freed.
//
// Memory that is not host-visible goes through a host-visible staging
// buffer: a queue_copy in before the call (for what is sent) and one out
// after it (for what is received), ordered by a semaphore of the op's own.
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "channel/channel_impl.h"
#include "channel/element.h"
#include "hal/queue_validation.h"

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

const char* weft_channel_op_kind_name(weft_channel_op_kind_t kind) {
  static const char* const kNames[WEFT_CHANNEL_OP_KIND_COUNT] = {
      [WEFT_CHANNEL_OP_SEND] = "channel_send",
      [WEFT_CHANNEL_OP_RECV] = "channel_recv",
      [WEFT_CHANNEL_OP_ALLREDUCE] = "channel_allreduce",
      [WEFT_CHANNEL_OP_ALLGATHER] = "channel_allgather",
      [WEFT_CHANNEL_OP_REDUCE_SCATTER] = "channel_reduce_scatter",
      [WEFT_CHANNEL_OP_BROADCAST] = "channel_broadcast",
      [WEFT_CHANNEL_OP_ALLTOALL] = "channel_alltoall",
      [WEFT_CHANNEL_OP_BARRIER] = "channel_barrier",
  };
  return (unsigned)kind < WEFT_CHANNEL_OP_KIND_COUNT ? kNames[kind]
                                                     : "channel_unknown";
}

bool weft_channel_op_kind_is_collective(weft_channel_op_kind_t kind) {
  return kind != WEFT_CHANNEL_OP_SEND && kind != WEFT_CHANNEL_OP_RECV;
}

void weft_channel_op_label(const weft_channel_op_t* op, char* buffer,
                           size_t capacity) {
  // "channel_allreduce" without its "channel_" prefix.
  const char* name = weft_channel_op_kind_name(op->kind) + 8;
  const weft_channel_t* channel = op->channel;
  int length = 0;
  if (op->kind == WEFT_CHANNEL_OP_SEND || op->kind == WEFT_CHANNEL_OP_RECV) {
    length = snprintf(buffer, capacity,
                      "%s %s rank %d (tag %d) on channel '%s' (rank %d of %d)",
                      name, op->kind == WEFT_CHANNEL_OP_SEND ? "to" : "from",
                      op->peer, op->tag, channel->name, channel->rank,
                      channel->size);
  } else if (op->kind == WEFT_CHANNEL_OP_BROADCAST) {
    length = snprintf(buffer, capacity,
                      "%s from root %d on channel '%s' (rank %d of %d)", name,
                      op->peer, channel->name, channel->rank, channel->size);
  } else {
    length = snprintf(buffer, capacity, "%s on channel '%s' (rank %d of %d)",
                      name, channel->name, channel->rank, channel->size);
  }
  (void)length;
}

// What |op| moves, for reports: "channel 'world' (rank 0 of 2): 4096 bytes
// of f32, sum, with every rank, in flight for 1.250 s".
static void weft_channel_op_describe(const weft_channel_op_t* op, char* buffer,
                                     size_t capacity) {
  char with[64];
  switch (op->kind) {
    case WEFT_CHANNEL_OP_SEND:
    case WEFT_CHANNEL_OP_RECV:
      snprintf(with, sizeof(with), "with rank %d, tag %d", op->peer, op->tag);
      break;
    case WEFT_CHANNEL_OP_BROADCAST:
      snprintf(with, sizeof(with), "from root %d", op->peer);
      break;
    default:
      snprintf(with, sizeof(with), "with every rank");
      break;
  }
  char what[96] = "";
  if (op->kind == WEFT_CHANNEL_OP_ALLREDUCE ||
      op->kind == WEFT_CHANNEL_OP_REDUCE_SCATTER) {
    snprintf(what, sizeof(what), " of %s, %s",
             weft_element_type_name(op->user_element_type),
             weft_reduction_name(op->reduction));
  }
  const uint64_t bytes =
      op->source_length > op->target_length ? op->source_length
                                            : op->target_length;
  const weft_channel_t* channel = op->channel;
  snprintf(buffer, capacity,
           "channel '%s' (rank %d of %d): %" PRIu64
           " bytes%s, %s, in flight for %.3f s",
           channel->name, channel->rank, channel->size, bytes, what, with,
           (double)(weft_time_now() - op->start_time) / 1e9);
}

weft_status_t weft_channel_recv_status(const weft_channel_op_t* op,
                                       uint64_t received) {
  if (received == op->recv_bytes) return WEFT_OK;
  char label[256];
  weft_channel_op_label(op, label, sizeof(label));
  if (received == 0) {
    return WEFT_STATUS(ABORTED,
                       "%s: rank %d sent nothing: its send failed before it "
                       "started (see that rank's error), or it sent an empty "
                       "range",
                       label, op->peer);
  }
  return WEFT_STATUS(OUT_OF_RANGE,
                     "%s: received %" PRIu64 " bytes, but the target has %"
                     PRIu64 " (a recv takes exactly its range)",
                     label, received, op->recv_bytes);
}

//===----------------------------------------------------------------------===//
// The channel
//===----------------------------------------------------------------------===//

// Lists the in-flight ops of |device| for hang reports.
static void weft_channel_for_each_pending(void* user_data,
                                          weft_device_t* device,
                                          weft_pending_op_visit_fn_t visit,
                                          void* visit_user_data) {
  weft_channel_t* channel = (weft_channel_t*)user_data;
  weft_slim_mutex_lock(&channel->mutex);
  for (weft_channel_op_t* op = channel->in_flight; op; op = op->next) {
    if (op->device != device) continue;
    char detail[320];
    weft_channel_op_describe(op, detail, sizeof(detail));
    weft_semaphore_list_t signals = weft_fence_as_list(op->fence);
    weft_pending_op_t pending = {
        .type_name = weft_channel_op_kind_name(op->kind),
        .queue_index = 0,
        .state = "in flight on a channel",
        .detail = detail,
        .submit_time = op->submit_time,
        .wait_list = weft_semaphore_list_empty(),
        .signal_list = signals,
    };
    visit(visit_user_data, &pending);
  }
  weft_slim_mutex_unlock(&channel->mutex);
}

// The last release: the ops still submitted end on their own (or are
// cancelled with their device), so wait for them, then let the backend go.
static void weft_channel_destroy(weft_channel_t* channel) {
  weft_slim_mutex_lock(&channel->mutex);
  while (channel->outstanding) {
    weft_condition_wait(&channel->idle, &channel->mutex,
                        WEFT_TIME_INFINITE_FUTURE);
  }
  weft_slim_mutex_unlock(&channel->mutex);
  channel->vtable->destroy(channel);
}

static const struct {
  void (*destroy)(weft_channel_t* channel);
} kWeftChannelResourceVtable = {weft_channel_destroy};

weft_status_t weft_channel_initialize(const weft_channel_backend_vtable_t* vtable,
                                      const char* name, int32_t rank,
                                      int32_t size, int32_t tag_limit,
                                      weft_channel_flags_t flags,
                                      weft_allocator_t allocator,
                                      weft_channel_t* channel) {
  memset(channel, 0, sizeof(*channel));
  const size_t name_length = strlen(name);
  weft_status_t status = weft_allocator_malloc(allocator, name_length + 1,
                                               (void**)&channel->name);
  if (!weft_status_is_ok(status)) return status;
  memcpy(channel->name, name, name_length + 1);
  weft_resource_initialize(WEFT_RESOURCE_TYPE_CHANNEL,
                           &kWeftChannelResourceVtable, &channel->resource);
  channel->vtable = vtable;
  channel->allocator = allocator;
  channel->rank = rank;
  channel->size = size;
  channel->tag_limit = tag_limit;
  channel->flags = flags;
  weft_slim_mutex_initialize(&channel->mutex);
  weft_condition_initialize(&channel->idle);
  channel->diagnostics.for_each_pending = weft_channel_for_each_pending;
  channel->diagnostics.user_data = channel;
  weft_diagnostics_register_source(&channel->diagnostics);
  return WEFT_OK;
}

void weft_channel_deinitialize(weft_channel_t* channel) {
  weft_diagnostics_unregister_source(&channel->diagnostics);
  for (uint32_t i = 0; i < channel->trace_lane_count; ++i) {
    weft_trace_track_release(channel->trace_lanes[i]);
  }
  weft_condition_deinitialize(&channel->idle);
  weft_slim_mutex_deinitialize(&channel->mutex);
  weft_allocator_free(channel->allocator, channel->name);
  channel->name = NULL;
}

void weft_channel_retain(weft_channel_t* channel) {
  weft_resource_retain(channel);
}

void weft_channel_release(weft_channel_t* channel) {
  weft_resource_release(channel);
}

int32_t weft_channel_rank(const weft_channel_t* channel) {
  return channel ? channel->rank : -1;
}

int32_t weft_channel_size(const weft_channel_t* channel) {
  return channel ? channel->size : 0;
}

const char* weft_channel_name(const weft_channel_t* channel) {
  return channel ? channel->name : "";
}

int32_t weft_channel_tag_limit(const weft_channel_t* channel) {
  return channel ? channel->tag_limit : 0;
}

weft_status_t weft_channel_split(weft_channel_t* channel, int32_t color,
                                 int32_t key, weft_channel_t** out_channel) {
  if (!out_channel) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "weft_channel_split: out_channel is NULL");
  }
  *out_channel = NULL;
  if (!channel) {
    return WEFT_STATUS(INVALID_ARGUMENT, "weft_channel_split: channel is NULL");
  }
  return channel->vtable->split(channel, color, key, out_channel);
}

//===----------------------------------------------------------------------===//
// Ending an op
//===----------------------------------------------------------------------===//

// Lets go of everything |op| holds and frees it.
static void weft_channel_op_free(weft_channel_op_t* op) {
  weft_buffer_unmap_range(&op->source_mapping);
  weft_buffer_unmap_range(&op->target_mapping);
  weft_buffer_release(op->source);
  weft_buffer_release(op->target);
  weft_fence_release(op->fence);
  weft_channel_t* channel = op->channel;
  weft_allocator_free(channel->allocator, op->converted);
  weft_device_release(op->device);
  weft_allocator_free(channel->allocator, op);
  // Last: once the count reaches 0 the channel may go. Broadcast under the
  // mutex: the last release cannot return from its wait (and free the
  // channel) before this thread lets go of it.
  weft_slim_mutex_lock(&channel->mutex);
  if (--channel->outstanding == 0) weft_condition_broadcast(&channel->idle);
  weft_slim_mutex_unlock(&channel->mutex);
}

// The lane |op| (ending now) is shown on: the first whose last op ended
// before |op| started, else a new one, else the one free soonest. Called
// under channel->mutex.
static weft_trace_track_t* weft_channel_trace_lane(weft_channel_t* channel,
                                                   const weft_channel_op_t* op) {
  uint32_t lane = 0;
  while (lane < channel->trace_lane_count &&
         channel->trace_lane_end[lane] > op->start_time) {
    ++lane;
  }
  if (lane == channel->trace_lane_count) {
    if (lane < WEFT_CHANNEL_TRACE_LANES) {
      char name[96];
      snprintf(name, sizeof(name), lane ? "channel '%s' rank %d (%u)"
                                        : "channel '%s' rank %d",
               channel->name, channel->rank, lane + 1);
      channel->trace_lanes[lane] = weft_trace_track_create(name);
      ++channel->trace_lane_count;
    } else {
      lane = 0;
      for (uint32_t i = 1; i < WEFT_CHANNEL_TRACE_LANES; ++i) {
        if (channel->trace_lane_end[i] < channel->trace_lane_end[lane]) {
          lane = i;
        }
      }
    }
  }
  channel->trace_lane_end[lane] = weft_time_now();
  return channel->trace_lanes[lane];
}

void weft_channel_op_end(weft_channel_op_t* op, weft_status_t status) {
  weft_channel_t* channel = op->channel;
  if (op->poisoned) {
    // Its signals were failed by the queue; the transfer only kept the
    // ranks in step.
    weft_status_ignore(status);
    weft_channel_op_free(op);
    return;
  }
  if (weft_status_is_ok(status) &&
      weft_element_type_is_half(op->user_element_type) && op->target_length) {
    weft_element_f32_to_half(op->user_element_type, (const float*)op->recv_data,
                             op->in_place ? op->source_mapping.contents
                                          : op->target_mapping.contents,
                             op->target_length / 2);
  }
  if (op->listed) {
    weft_slim_mutex_lock(&channel->mutex);
    if (op->trace_id && weft_trace_is_enabled()) {
      const weft_time_t end_time = weft_time_now();
      weft_trace_track_t* lane = weft_channel_trace_lane(channel, op);
      const bool has_peer = op->kind == WEFT_CHANNEL_OP_SEND ||
                            op->kind == WEFT_CHANNEL_OP_RECV ||
                            op->kind == WEFT_CHANNEL_OP_BROADCAST;
      weft_trace_track_transfer_(
          lane, WEFT_TRACE_CATEGORY_CHANNEL,
          weft_channel_op_kind_name(op->kind), op->trace_id, op->start_time,
          end_time - op->start_time,
          op->source_length > op->target_length ? op->source_length
                                                : op->target_length,
          has_peer ? op->peer : -1);
    }
    if (op->prev) {
      op->prev->next = op->next;
    } else {
      channel->in_flight = op->next;
    }
    if (op->next) op->next->prev = op->prev;
    weft_slim_mutex_unlock(&channel->mutex);
    op->listed = false;
  }
  // Unmapped before the signals: what waits on them may reuse the memory.
  weft_buffer_unmap_range(&op->source_mapping);
  weft_buffer_unmap_range(&op->target_mapping);
  if (weft_status_is_ok(status)) {
    weft_status_t signal_status = weft_fence_signal(op->fence);
    if (!weft_status_is_ok(signal_status)) {
      weft_fence_fail(op->fence, signal_status);
    }
  } else {
    weft_fence_fail(op->fence, status);
  }
  weft_channel_op_free(op);
}

//===----------------------------------------------------------------------===//
// The host call: waits reached, start the transfer
//===----------------------------------------------------------------------===//

// Maps the op's data and makes the f32 copies of half types.
static weft_status_t weft_channel_op_prepare(weft_channel_op_t* op) {
  weft_status_t status = WEFT_OK;
  if (op->source && op->source_length) {
    status = weft_buffer_map_range(op->source, WEFT_MAPPING_MODE_SCOPED,
                                   op->in_place ? WEFT_MEMORY_ACCESS_ALL
                                                : WEFT_MEMORY_ACCESS_READ,
                                   op->source_offset, op->source_length,
                                   &op->source_mapping);
  }
  if (weft_status_is_ok(status) && op->target && op->target_length &&
      !op->in_place) {
    status = weft_buffer_map_range(op->target, WEFT_MAPPING_MODE_SCOPED,
                                   WEFT_MEMORY_ACCESS_WRITE, op->target_offset,
                                   op->target_length, &op->target_mapping);
  }
  if (!weft_status_is_ok(status)) return status;
  uint8_t* source = op->source_mapping.contents;
  uint8_t* target = op->in_place ? source : op->target_mapping.contents;
  if (weft_element_type_is_half(op->user_element_type)) {
    // f32 copies: the source's, then (unless in place) the target's.
    const uint64_t source_count = op->source_length / 2;
    const uint64_t target_count = op->in_place ? 0 : op->target_length / 2;
    status = weft_allocator_malloc_array(
        op->channel->allocator, source_count + target_count, sizeof(float),
        &op->converted);
    if (!weft_status_is_ok(status)) return status;
    float* converted = (float*)op->converted;
    weft_element_half_to_f32(op->user_element_type, source, converted,
                             source_count);
    op->send_data = converted;
    op->recv_data = op->in_place ? converted : converted + source_count;
    op->send_bytes = source_count * 4;
    op->recv_bytes = (op->in_place ? source_count : target_count) * 4;
    op->widened = true;
  } else {
    op->send_data = source;
    op->recv_data = target;
  }
  return WEFT_OK;
}

// Turns |op| into one that only keeps the ranks in step (channel_impl.h):
// zeroed scratch in place of its data, nothing to send.
static weft_status_t weft_channel_op_poison(weft_channel_op_t* op) {
  op->poisoned = true;
  if (op->kind == WEFT_CHANNEL_OP_SEND) {
    op->send_bytes = 0;
    return WEFT_OK;
  }
  // What a failed prepare left behind goes first.
  weft_buffer_unmap_range(&op->source_mapping);
  weft_buffer_unmap_range(&op->target_mapping);
  weft_allocator_free(op->channel->allocator, op->converted);
  op->converted = NULL;
  // Half data travels as f32: twice its bytes (unless prepare widened
  // the counts already).
  const uint64_t widen =
      weft_element_type_is_half(op->user_element_type) && !op->widened ? 2 : 1;
  op->widened = true;
  const uint64_t send =
      op->kind == WEFT_CHANNEL_OP_RECV ? 0 : op->send_bytes * widen;
  const uint64_t recv = op->recv_bytes * widen;
  op->send_bytes = send;
  op->recv_bytes = recv;
  if (send + recv == 0) return WEFT_OK;
  weft_status_t status = weft_allocator_malloc(op->channel->allocator,
                                               send + recv, &op->converted);
  if (!weft_status_is_ok(status)) return status;
  memset(op->converted, 0, send + recv);
  op->send_data = op->converted;
  op->recv_data = op->in_place ? op->converted : (uint8_t*)op->converted + send;
  return WEFT_OK;
}

// For an op that failed before it started: it still takes part where
// another rank (or a send's recv) would wait for it, else it is freed.
static void weft_channel_op_take_part_or_free(weft_channel_op_t* op) {
  const bool alone = op->channel->size == 1 &&
                     weft_channel_op_kind_is_collective(op->kind);
  weft_status_t status = alone ? WEFT_OK : weft_channel_op_poison(op);
  if (alone || !weft_status_is_ok(status)) {
    // Out of memory for its scratch: the others are left waiting for it
    // (their reports show the op in flight).
    weft_status_free(status);
    weft_channel_op_free(op);
  } else {
    op->channel->vtable->start(op->channel, op);
  }
}

static weft_status_t weft_channel_op_host_call(
    void* user_data, const uint64_t args[4],
    const weft_host_call_context_t* context) {
  (void)args;
  weft_channel_op_t* op = (weft_channel_op_t*)user_data;
  if (!weft_status_is_ok(context->not_run_status)) {
    // Never started: the queue fails the signals.
    weft_channel_op_take_part_or_free(op);
    return WEFT_OK;
  }
  weft_status_t status = weft_channel_op_prepare(op);
  if (weft_status_is_ok(status)) {
    status = weft_fence_create_from_list(context->signal_list,
                                         op->channel->allocator, &op->fence);
  }
  if (!weft_status_is_ok(status)) {
    // The queue fails the signals with this; the op still takes part, as
    // one that never started does.
    char label[256];
    weft_channel_op_label(op, label, sizeof(label));
    status = weft_status_annotate(status, "in %s", label);
    weft_channel_op_take_part_or_free(op);
    return status;
  }
  weft_channel_t* channel = op->channel;
  op->start_time = weft_time_now();
  if (weft_trace_is_enabled()) op->trace_id = weft_trace_next_id();
  weft_slim_mutex_lock(&channel->mutex);
  op->prev = NULL;
  op->next = channel->in_flight;
  if (channel->in_flight) channel->in_flight->prev = op;
  channel->in_flight = op;
  op->listed = true;
  weft_slim_mutex_unlock(&channel->mutex);
  channel->vtable->start(channel, op);
  return WEFT_STATUS(DEFERRED, "a channel transfer in flight");
}

//===----------------------------------------------------------------------===//
// Submission
//===----------------------------------------------------------------------===//

// What a submit names about its data.
typedef struct weft_channel_op_args_t {
  weft_channel_op_kind_t kind;
  const weft_buffer_ref_t* source;  // NULL: none
  const weft_buffer_ref_t* target;  // NULL: none (broadcast: |source| only)
  weft_element_type_t element_type;
  weft_reduction_t reduction;
  int32_t peer;
  int32_t tag;
} weft_channel_op_args_t;

// Resolves |ref| to (buffer, offset, length); |role| names it.
static weft_status_t weft_channel_resolve_ref(const char* function,
                                              const char* role,
                                              const weft_buffer_ref_t* ref,
                                              uint64_t* out_offset,
                                              uint64_t* out_length) {
  if (!ref->buffer) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "%s: %s is an indirect reference (slot %u) or "
                       "NULL; channel ops take buffers directly",
                       function, role, ref->slot);
  }
  weft_device_size_t length = 0;
  weft_status_t status = weft_buffer_calculate_range(ref->buffer, ref->offset,
                                                     ref->length, role, &length);
  if (!weft_status_is_ok(status)) {
    return weft_status_annotate(status, "in %s", function);
  }
  *out_offset = ref->offset;
  *out_length = length;
  return WEFT_OK;
}

// The checks every rank can make alone (channel.h's contract).
static weft_status_t weft_channel_check_args(weft_channel_t* channel,
                                             const char* function,
                                             const weft_channel_op_args_t* args,
                                             uint64_t source_length,
                                             uint64_t target_length) {
  const int32_t size = channel->size;
  const weft_channel_op_kind_t kind = args->kind;
  const bool reduces = kind == WEFT_CHANNEL_OP_ALLREDUCE ||
                       kind == WEFT_CHANNEL_OP_REDUCE_SCATTER;
  if ((kind == WEFT_CHANNEL_OP_SEND || kind == WEFT_CHANNEL_OP_RECV ||
       kind == WEFT_CHANNEL_OP_BROADCAST) &&
      (args->peer < 0 || args->peer >= size)) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "%s: %s %d is not a rank of channel '%s' (ranks "
                       "0 to %d)",
                       function,
                       kind == WEFT_CHANNEL_OP_BROADCAST ? "root" : "peer",
                       args->peer, channel->name, size - 1);
  }
  if ((kind == WEFT_CHANNEL_OP_SEND || kind == WEFT_CHANNEL_OP_RECV) &&
      (args->tag < 0 || args->tag > channel->tag_limit)) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "%s: tag %d is outside [0, %d], the tags channel "
                       "'%s' takes",
                       function, args->tag, channel->tag_limit, channel->name);
  }
  uint32_t element_size = 1;
  if (reduces) {
    element_size = weft_element_type_size(args->element_type);
    if (element_size == 0) {
      return WEFT_STATUS(INVALID_ARGUMENT,
                         "%s: unknown element type %d", function,
                         (int)args->element_type);
    }
    if ((unsigned)args->reduction >= WEFT_REDUCTION_COUNT) {
      return WEFT_STATUS(INVALID_ARGUMENT, "%s: unknown reduction %d",
                         function, (int)args->reduction);
    }
    if (source_length % element_size || target_length % element_size) {
      return WEFT_STATUS(INVALID_ARGUMENT,
                         "%s: the source (%" PRIu64
                         " bytes) and target (%" PRIu64
                         " bytes) must be whole %s elements (%u bytes)",
                         function, source_length, target_length,
                         weft_element_type_name(args->element_type),
                         element_size);
    }
  }
  // Each op's shape rule: the target's length given the source's.
  uint64_t expected = target_length;
  const char* rule = NULL;
  switch (kind) {
    case WEFT_CHANNEL_OP_ALLREDUCE:
      expected = source_length;
      rule = "the source's length";
      break;
    case WEFT_CHANNEL_OP_ALLGATHER:
      expected = source_length * (uint64_t)size;
      rule = "size x the source's length";
      break;
    case WEFT_CHANNEL_OP_REDUCE_SCATTER:
      if (source_length % (uint64_t)size) {
        return WEFT_STATUS(INVALID_ARGUMENT,
                           "%s: the source's %" PRIu64
                           " bytes do not split into %d equal blocks",
                           function, source_length, size);
      }
      expected = source_length / (uint64_t)size;
      rule = "the source's length / size";
      break;
    case WEFT_CHANNEL_OP_ALLTOALL:
      if (source_length % (uint64_t)size) {
        return WEFT_STATUS(INVALID_ARGUMENT,
                           "%s: the source's %" PRIu64
                           " bytes do not split into %d equal blocks",
                           function, source_length, size);
      }
      expected = source_length;
      rule = "the source's length";
      break;
    default:
      break;
  }
  if (rule && expected != target_length) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "%s: the target has %" PRIu64
                       " bytes but must have %s (%" PRIu64 " bytes)",
                       function, target_length, rule, expected);
  }
  // MPI counts are ints: elements for reductions (half types travel as as
  // many f32 elements), bytes for everything else.
  const uint64_t longest =
      source_length > target_length ? source_length : target_length;
  const uint64_t unit = reduces ? element_size : 1;
  if (longest / unit > (uint64_t)INT_MAX) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "%s: %" PRIu64
                       " bytes is more elements than an MPI count (int) "
                       "holds",
                       function, longest);
  }
  return WEFT_OK;
}

// A host-visible, mappable stand-in for |length| bytes of a buffer the
// host cannot map.
static bool weft_channel_needs_staging(weft_buffer_t* buffer) {
  return !(weft_buffer_memory_type(buffer) & WEFT_MEMORY_TYPE_HOST_VISIBLE) ||
         !(weft_buffer_allowed_usage(buffer) &
           WEFT_BUFFER_USAGE_MAPPING_SCOPED);
}

static weft_status_t weft_channel_submit(
    weft_channel_t* channel, weft_device_t* device,
    weft_queue_affinity_t affinity, weft_semaphore_list_t wait_list,
    weft_semaphore_list_t signal_list, const weft_channel_op_args_t* args) {
  // The public function, for messages (a table: no formatting per submit).
  static const char* const kFunctions[WEFT_CHANNEL_OP_KIND_COUNT] = {
      [WEFT_CHANNEL_OP_SEND] = "weft_channel_queue_send",
      [WEFT_CHANNEL_OP_RECV] = "weft_channel_queue_recv",
      [WEFT_CHANNEL_OP_ALLREDUCE] = "weft_channel_queue_allreduce",
      [WEFT_CHANNEL_OP_ALLGATHER] = "weft_channel_queue_allgather",
      [WEFT_CHANNEL_OP_REDUCE_SCATTER] = "weft_channel_queue_reduce_scatter",
      [WEFT_CHANNEL_OP_BROADCAST] = "weft_channel_queue_broadcast",
      [WEFT_CHANNEL_OP_ALLTOALL] = "weft_channel_queue_alltoall",
      [WEFT_CHANNEL_OP_BARRIER] = "weft_channel_queue_barrier",
  };
  const char* function = kFunctions[args->kind];
  if (!channel) {
    return WEFT_STATUS(INVALID_ARGUMENT, "%s: channel is NULL", function);
  }
  weft_status_t status = weft_queue_validate_common(function, device, affinity,
                                                    wait_list, signal_list);
  if (!weft_status_is_ok(status)) return status;
  uint64_t source_offset = 0, source_length = 0;
  uint64_t target_offset = 0, target_length = 0;
  if (args->source) {
    status = weft_channel_resolve_ref(
        function, args->target ? "source" : "buffer", args->source,
        &source_offset, &source_length);
  }
  if (weft_status_is_ok(status) && args->target) {
    status = weft_channel_resolve_ref(function, "target", args->target,
                                      &target_offset, &target_length);
  }
  bool in_place = false;
  if (weft_status_is_ok(status) && args->source && args->target &&
      args->source->buffer == args->target->buffer) {
    // The same range is in place; any other overlap is an error.
    in_place = source_offset == target_offset && source_length == target_length;
    if (!in_place && source_offset < target_offset + target_length &&
        target_offset < source_offset + source_length) {
      status = WEFT_STATUS(INVALID_ARGUMENT,
                           "%s: the source [%" PRIu64 ", +%" PRIu64
                           ") and target [%" PRIu64 ", +%" PRIu64
                           ") overlap without being one range",
                           function, source_offset, source_length,
                           target_offset, target_length);
    }
    if (in_place && args->kind != WEFT_CHANNEL_OP_ALLREDUCE) {
      status = WEFT_STATUS(INVALID_ARGUMENT,
                           "%s: only allreduce works in place", function);
    }
  }
  if (weft_status_is_ok(status)) {
    status = weft_channel_check_args(channel, function, args, source_length,
                                     target_length);
  }
  if (!weft_status_is_ok(status)) return status;

  weft_channel_op_t* op = NULL;
  status = weft_allocator_malloc(channel->allocator, sizeof(*op), (void**)&op);
  if (!weft_status_is_ok(status)) return status;
  memset(op, 0, sizeof(*op));
  op->kind = args->kind;
  op->user_element_type = args->element_type;
  op->element_type = weft_element_type_is_half(args->element_type)
                         ? WEFT_ELEMENT_TYPE_F32
                         : args->element_type;
  op->reduction = args->reduction;
  op->peer = args->peer;
  op->tag = args->tag;
  // Broadcast maps its one buffer once, as an in-place op does.
  op->in_place = in_place || args->kind == WEFT_CHANNEL_OP_BROADCAST;
  op->source_length = source_length;
  op->target_length = in_place ? source_length : target_length;
  op->send_bytes = source_length;
  op->recv_bytes = op->target_length;
  if (args->kind == WEFT_CHANNEL_OP_RECV) op->recv_bytes = target_length;
  if (args->kind == WEFT_CHANNEL_OP_BROADCAST) {
    // One buffer, sent by the root and received by the others.
    op->recv_bytes = source_length;
  }
  op->submit_time = weft_time_now();

  // Staging: the op's own semaphore orders the copies around the call.
  weft_semaphore_t* staged_in = NULL;
  weft_semaphore_t* staged_out = NULL;
  const bool stage_source =
      args->source && source_length && weft_channel_needs_staging(args->source->buffer);
  const bool stage_target =
      !in_place && args->target && target_length &&
      weft_channel_needs_staging(args->target->buffer);
  // In place (allreduce) and broadcast receive into their one buffer: when
  // that is staged, the copy out is from the source's staging buffer.
  const bool one_buffer = in_place || args->kind == WEFT_CHANNEL_OP_BROADCAST;
  const bool stage_back = stage_target || (one_buffer && stage_source);
  const weft_buffer_params_t staging_params = {0};
  if (stage_source) {
    status = weft_device_allocate_buffer(device, staging_params, source_length,
                                         &op->source);
    if (weft_status_is_ok(status)) {
      status = weft_semaphore_create(channel->allocator, 0, &staged_in);
    }
  } else if (args->source) {
    op->source = args->source->buffer;
    weft_buffer_retain(op->source);
    op->source_offset = source_offset;
  }
  if (weft_status_is_ok(status) && stage_target) {
    status = weft_device_allocate_buffer(device, staging_params, target_length,
                                         &op->target);
  } else if (weft_status_is_ok(status) && args->target && !in_place) {
    op->target = args->target->buffer;
    weft_buffer_retain(op->target);
    op->target_offset = target_offset;
  }
  if (weft_status_is_ok(status) && stage_back) {
    status = weft_semaphore_create(channel->allocator, 0, &staged_out);
  }
  if (!weft_status_is_ok(status)) {
    weft_buffer_release(op->source);
    weft_buffer_release(op->target);
    weft_allocator_free(channel->allocator, op);
    weft_semaphore_release(staged_in);
    weft_semaphore_release(staged_out);
    return status;
  }
  op->channel = channel;
  op->device = device;
  weft_device_retain(device);
  weft_slim_mutex_lock(&channel->mutex);
  ++channel->outstanding;
  if (weft_channel_op_kind_is_collective(args->kind)) {
    op->sequence = channel->next_sequence++;
  }
  weft_slim_mutex_unlock(&channel->mutex);

  uint64_t one = 1;
  weft_semaphore_list_t call_waits = wait_list;
  if (stage_source) {
    status = weft_device_queue_copy(device, affinity, wait_list,
                                    (weft_semaphore_list_t){1, &staged_in, &one},
                                    args->source->buffer, source_offset,
                                    op->source, 0, source_length);
    call_waits = (weft_semaphore_list_t){1, &staged_in, &one};
  }
  // Held for the copy out: the op may have ended by then.
  weft_buffer_t* staging_back = NULL;
  if (staged_out) {
    staging_back = stage_target ? op->target : op->source;
    weft_buffer_retain(staging_back);
  }
  weft_semaphore_list_t call_signals = signal_list;
  if (staged_out) call_signals = (weft_semaphore_list_t){1, &staged_out, &one};
  if (weft_status_is_ok(status)) {
    status = weft_device_queue_host_call(
        device, affinity, call_waits, call_signals, weft_channel_op_host_call,
        op, NULL, WEFT_HOST_CALL_FLAG_TOLD_IF_NOT_RUN);
    if (!weft_status_is_ok(status)) weft_channel_op_free(op);
  } else {
    weft_channel_op_free(op);
  }
  if (weft_status_is_ok(status) && staged_out) {
    // The received data back where the caller asked for it.
    status = weft_device_queue_copy(
        device, affinity, (weft_semaphore_list_t){1, &staged_out, &one},
        signal_list, staging_back, 0,
        stage_target ? args->target->buffer : args->source->buffer,
        stage_target ? target_offset : source_offset,
        stage_target ? target_length : source_length);
  }
  weft_buffer_release(staging_back);
  weft_semaphore_release(staged_in);
  weft_semaphore_release(staged_out);
  return status;
}

weft_status_t weft_channel_queue_send(
    weft_channel_t* channel, weft_device_t* device,
    weft_queue_affinity_t affinity, weft_semaphore_list_t wait_list,
    weft_semaphore_list_t signal_list, weft_buffer_ref_t source, int32_t peer,
    int32_t tag) {
  const weft_channel_op_args_t args = {.kind = WEFT_CHANNEL_OP_SEND,
                                       .source = &source,
                                       .peer = peer,
                                       .tag = tag};
  return weft_channel_submit(channel, device, affinity, wait_list, signal_list,
                             &args);
}

weft_status_t weft_channel_queue_recv(
    weft_channel_t* channel, weft_device_t* device,
    weft_queue_affinity_t affinity, weft_semaphore_list_t wait_list,
    weft_semaphore_list_t signal_list, weft_buffer_ref_t target, int32_t peer,
    int32_t tag) {
  const weft_channel_op_args_t args = {.kind = WEFT_CHANNEL_OP_RECV,
                                       .target = &target,
                                       .peer = peer,
                                       .tag = tag};
  return weft_channel_submit(channel, device, affinity, wait_list, signal_list,
                             &args);
}

weft_status_t weft_channel_queue_allreduce(
    weft_channel_t* channel, weft_device_t* device,
    weft_queue_affinity_t affinity, weft_semaphore_list_t wait_list,
    weft_semaphore_list_t signal_list, weft_buffer_ref_t source,
    weft_buffer_ref_t target, weft_element_type_t element_type,
    weft_reduction_t reduction) {
  const weft_channel_op_args_t args = {.kind = WEFT_CHANNEL_OP_ALLREDUCE,
                                       .source = &source,
                                       .target = &target,
                                       .element_type = element_type,
                                       .reduction = reduction,
                                       .peer = -1};
  return weft_channel_submit(channel, device, affinity, wait_list, signal_list,
                             &args);
}

weft_status_t weft_channel_queue_allgather(
    weft_channel_t* channel, weft_device_t* device,
    weft_queue_affinity_t affinity, weft_semaphore_list_t wait_list,
    weft_semaphore_list_t signal_list, weft_buffer_ref_t source,
    weft_buffer_ref_t target) {
  const weft_channel_op_args_t args = {.kind = WEFT_CHANNEL_OP_ALLGATHER,
                                       .source = &source,
                                       .target = &target,
                                       .peer = -1};
  return weft_channel_submit(channel, device, affinity, wait_list, signal_list,
                             &args);
}

weft_status_t weft_channel_queue_reduce_scatter(
    weft_channel_t* channel, weft_device_t* device,
    weft_queue_affinity_t affinity, weft_semaphore_list_t wait_list,
    weft_semaphore_list_t signal_list, weft_buffer_ref_t source,
    weft_buffer_ref_t target, weft_element_type_t element_type,
    weft_reduction_t reduction) {
  const weft_channel_op_args_t args = {.kind = WEFT_CHANNEL_OP_REDUCE_SCATTER,
                                       .source = &source,
                                       .target = &target,
                                       .element_type = element_type,
                                       .reduction = reduction,
                                       .peer = -1};
  return weft_channel_submit(channel, device, affinity, wait_list, signal_list,
                             &args);
}

weft_status_t weft_channel_queue_broadcast(
    weft_channel_t* channel, weft_device_t* device,
    weft_queue_affinity_t affinity, weft_semaphore_list_t wait_list,
    weft_semaphore_list_t signal_list, weft_buffer_ref_t buffer,
    int32_t root) {
  // One buffer: the root sends it, the others receive into it; mapped
  // once, read and written.
  const weft_channel_op_args_t args = {.kind = WEFT_CHANNEL_OP_BROADCAST,
                                       .source = &buffer,
                                       .peer = root};
  return weft_channel_submit(channel, device, affinity, wait_list, signal_list,
                             &args);
}

weft_status_t weft_channel_queue_alltoall(
    weft_channel_t* channel, weft_device_t* device,
    weft_queue_affinity_t affinity, weft_semaphore_list_t wait_list,
    weft_semaphore_list_t signal_list, weft_buffer_ref_t source,
    weft_buffer_ref_t target) {
  const weft_channel_op_args_t args = {.kind = WEFT_CHANNEL_OP_ALLTOALL,
                                       .source = &source,
                                       .target = &target,
                                       .peer = -1};
  return weft_channel_submit(channel, device, affinity, wait_list, signal_list,
                             &args);
}

weft_status_t weft_channel_queue_barrier(weft_channel_t* channel,
                                         weft_device_t* device,
                                         weft_queue_affinity_t affinity,
                                         weft_semaphore_list_t wait_list,
                                         weft_semaphore_list_t signal_list) {
  const weft_channel_op_args_t args = {.kind = WEFT_CHANNEL_OP_BARRIER,
                                       .peer = -1};
  return weft_channel_submit(channel, device, affinity, wait_list, signal_list,
                             &args);
}
