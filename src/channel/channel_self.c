// weft: a channel of one process (weft_channel_create_self).
//
// Rank 0 of 1: every collective is a copy of its one contribution (or
// nothing), ended as soon as it starts; a send waits for the recv of its
// tag and the other way round, matched in the order they started, as MPI
// matches messages from one peer.
#include <string.h>

#include "channel/channel_impl.h"

typedef struct weft_self_channel_t {
  weft_channel_t base;
  // Sends and recvs that started without a partner, oldest first
  // (linked through op->backend), guarded by base.mutex.
  weft_channel_op_t* sends;
  weft_channel_op_t* recvs;
} weft_self_channel_t;

static void weft_self_channel_destroy(weft_channel_t* channel) {
  // Every op holds the channel: none is waiting for a partner now.
  weft_allocator_t allocator = channel->allocator;
  weft_channel_deinitialize(channel);
  weft_allocator_free(allocator, channel);
}

static weft_status_t weft_self_channel_split(weft_channel_t* channel,
                                             int32_t color, int32_t key,
                                             weft_channel_t** out_channel) {
  (void)key;
  if (color < 0) return WEFT_OK;
  return weft_channel_create_self(channel->allocator, out_channel);
}

// Removes and returns the oldest op of |*list| with |tag|, or NULL.
static weft_channel_op_t* weft_self_take(weft_channel_op_t** list,
                                         int32_t tag) {
  for (; *list; list = (weft_channel_op_t**)&(*list)->backend) {
    weft_channel_op_t* op = *list;
    if (op->tag == tag) {
      *list = (weft_channel_op_t*)op->backend;
      op->backend = NULL;
      return op;
    }
  }
  return NULL;
}

static void weft_self_append(weft_channel_op_t** list, weft_channel_op_t* op) {
  while (*list) list = (weft_channel_op_t**)&(*list)->backend;
  op->backend = NULL;
  *list = op;
}

// Delivers |send| into |recv| and ends both.
static void weft_self_deliver(weft_channel_op_t* send, weft_channel_op_t* recv) {
  // A send that never started (poisoned) sends nothing.
  const uint64_t sent = send->poisoned ? 0 : send->send_bytes;
  weft_status_t status = weft_channel_recv_status(recv, sent);
  if (weft_status_is_ok(status) && sent) {
    memcpy(recv->recv_data, send->send_data, sent);
  }
  weft_channel_op_end(send, WEFT_OK);
  weft_channel_op_end(recv, status);
}

static void weft_self_channel_start(weft_channel_t* channel,
                                    weft_channel_op_t* op) {
  weft_self_channel_t* self = (weft_self_channel_t*)channel;
  switch (op->kind) {
    case WEFT_CHANNEL_OP_SEND:
    case WEFT_CHANNEL_OP_RECV: {
      const bool sending = op->kind == WEFT_CHANNEL_OP_SEND;
      weft_slim_mutex_lock(&channel->mutex);
      weft_channel_op_t* partner =
          weft_self_take(sending ? &self->recvs : &self->sends, op->tag);
      if (!partner) weft_self_append(sending ? &self->sends : &self->recvs, op);
      weft_slim_mutex_unlock(&channel->mutex);
      if (partner) {
        weft_self_deliver(sending ? op : partner, sending ? partner : op);
      }
      return;
    }
    case WEFT_CHANNEL_OP_ALLREDUCE:
    case WEFT_CHANNEL_OP_ALLGATHER:
    case WEFT_CHANNEL_OP_REDUCE_SCATTER:
    case WEFT_CHANNEL_OP_ALLTOALL:
      // One rank: the result is its own contribution.
      if (!op->in_place && op->recv_bytes) {
        memcpy(op->recv_data, op->send_data, op->recv_bytes);
      }
      break;
    case WEFT_CHANNEL_OP_BROADCAST:
    case WEFT_CHANNEL_OP_BARRIER:
    default:
      break;
  }
  weft_channel_op_end(op, WEFT_OK);
}

static const weft_channel_backend_vtable_t weft_self_channel_vtable = {
    .destroy = weft_self_channel_destroy,
    .split = weft_self_channel_split,
    .start = weft_self_channel_start,
};

weft_status_t weft_channel_create_self(weft_allocator_t allocator,
                                       weft_channel_t** out_channel) {
  if (!out_channel) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "weft_channel_create_self: out_channel is NULL");
  }
  *out_channel = NULL;
  if (!allocator.ctl) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "weft_channel_create_self: allocator is {NULL, NULL}");
  }
  weft_self_channel_t* self = NULL;
  weft_status_t status =
      weft_allocator_malloc(allocator, sizeof(*self), (void**)&self);
  if (!weft_status_is_ok(status)) return status;
  memset(self, 0, sizeof(*self));
  status = weft_channel_initialize(&weft_self_channel_vtable, "self", 0, 1,
                                   INT32_MAX, WEFT_CHANNEL_FLAGS_DEFAULT,
                                   allocator, &self->base);
  if (!weft_status_is_ok(status)) {
    weft_allocator_free(allocator, self);
    return status;
  }
  *out_channel = &self->base;
  return WEFT_OK;
}
