// api_null table: channel.h (channels and their queue operations), on the
// one-process channel every build has.
#include <stdio.h>
#include <string.h>

#include "api_table.h"
#include "cts.h"

#define BUFFER_LENGTH 256

static weft_channel_t* make_channel(api_call_t* call) {
  weft_channel_t* channel = NULL;
  api_setup(call, weft_channel_create_self(call->allocator, &channel),
            "weft_channel_create_self");
  return channel;
}

static void channel_create_self(api_call_t* call) {
  weft_channel_t* channel = NULL;
  api_status(call, weft_channel_create_self(
                       api_allocator(call, 0, "allocator"),
                       api_out(call, 1, "out_channel", &channel,
                               sizeof(channel))));
  api_check_out(call, 1, &channel, sizeof(channel));
  if (api_ok(call)) weft_channel_release(channel);
}

static void channel_retain(api_call_t* call) {
  weft_channel_t* channel = make_channel(call);
  if (!channel) return;
  weft_channel_retain(api_ptr(call, 0, "channel", channel));
  if (!api_is_broken(call, 0)) weft_channel_release(channel);
  weft_channel_release(channel);
}

static void channel_release(api_call_t* call) {
  weft_channel_t* channel = make_channel(call);
  if (!channel) return;
  weft_channel_release(api_ptr(call, 0, "channel", channel));
  if (api_is_broken(call, 0)) weft_channel_release(channel);
}

// rank, size and tag_limit: -1, 0 and 0 for NULL.
static void channel_int_query(api_call_t* call, int which) {
  weft_channel_t* channel = make_channel(call);
  if (!channel) return;
  const weft_channel_t* arg = api_ptr(call, 0, "channel", channel);
  int32_t value = which == 0   ? weft_channel_rank(arg)
                  : which == 1 ? weft_channel_size(arg)
                               : weft_channel_tag_limit(arg);
  const int32_t expected = which == 0 ? 0 : which == 1 ? 1 : INT32_MAX;
  const int32_t neutral = which == 0 ? -1 : 0;
  if (call->broken_index < 0 && value != expected) {
    api_problem(call, "returned %d, expected %d", value, expected);
  }
  api_expect_neutral(call, value == neutral, "%d, expected %d", value,
                     neutral);
  weft_channel_release(channel);
}

static void channel_rank(api_call_t* call) { channel_int_query(call, 0); }
static void channel_size(api_call_t* call) { channel_int_query(call, 1); }
static void channel_tag_limit(api_call_t* call) { channel_int_query(call, 2); }

static void channel_name(api_call_t* call) {
  weft_channel_t* channel = make_channel(call);
  if (!channel) return;
  const char* name = weft_channel_name(api_ptr(call, 0, "channel", channel));
  if (call->broken_index < 0 && (!name || strcmp(name, "self") != 0)) {
    api_problem(call, "returned '%s', expected 'self'", name ? name : "(null)");
  }
  api_expect_neutral(call, name && !name[0], "'%s', expected \"\"",
                     name ? name : "(null)");
  weft_channel_release(channel);
}

static void channel_split(api_call_t* call) {
  weft_channel_t* channel = make_channel(call);
  if (!channel) return;
  api_value(call, 1, "color");
  api_value(call, 2, "key");
  weft_channel_t* sub = NULL;
  api_status(call, weft_channel_split(
                       api_ptr(call, 0, "channel", channel), 0, 0,
                       api_out(call, 3, "out_channel", &sub, sizeof(sub))));
  api_check_out(call, 3, &sub, sizeof(sub));
  if (api_ok(call)) weft_channel_release(sub);
  weft_channel_release(channel);
}

static void element_type_size(api_call_t* call) {
  api_value(call, 0, "type");
  if (weft_element_type_size(WEFT_ELEMENT_TYPE_F16) != 2) {
    api_problem(call, "f16 is not 2 bytes");
  }
}

static void element_type_name(api_call_t* call) {
  api_value(call, 0, "type");
  if (strcmp(weft_element_type_name(WEFT_ELEMENT_TYPE_BF16), "bf16") != 0) {
    api_problem(call, "BF16's name is not 'bf16'");
  }
}

static void reduction_name(api_call_t* call) {
  api_value(call, 0, "reduction");
  if (strcmp(weft_reduction_name(WEFT_REDUCTION_MAX), "max") != 0) {
    api_problem(call, "MAX's name is not 'max'");
  }
}

//===----------------------------------------------------------------------===//
// Queue operations: (channel, device, affinity, wait_list, signal_list, ...)
//===----------------------------------------------------------------------===//

typedef struct channel_op_t {
  weft_channel_t* channel;
  weft_buffer_t* source;
  weft_buffer_t* target;
  api_queue_t queue;
  bool ready;
} channel_op_t;

static bool channel_op_begin(api_call_t* call, channel_op_t* op) {
  memset(op, 0, sizeof(*op));
  api_value(call, 2, "affinity");
  op->channel = make_channel(call);
  op->source = op->channel ? api_make_buffer(call, BUFFER_LENGTH) : NULL;
  op->target = op->source ? api_make_buffer(call, BUFFER_LENGTH) : NULL;
  op->ready = op->target && api_queue_initialize(call, &op->queue);
  return op->ready;
}

static void channel_op_end(api_call_t* call, channel_op_t* op) {
  if (op->ready) api_queue_finish(call, &op->queue);
  weft_buffer_release(op->source);
  weft_buffer_release(op->target);
  weft_channel_release(op->channel);
}

#define CHANNEL_OP_ARGS(call, op)                             \
  api_ptr(call, 0, "channel", (op)->channel),                 \
      api_ptr(call, 1, "device", (call)->device),             \
      WEFT_QUEUE_AFFINITY_ANY,                                \
      api_queue_wait_list(call, &(op)->queue, 3),             \
      api_queue_signal_list(call, &(op)->queue, 4)

static weft_buffer_ref_t whole(weft_buffer_t* buffer) {
  return weft_make_buffer_ref(buffer, 0, BUFFER_LENGTH);
}

// Send and recv: the partner is submitted only when the call under test
// was accepted, so nothing is left waiting for a partner.
static void channel_queue_send_recv(api_call_t* call, bool send) {
  channel_op_t op;
  if (channel_op_begin(call, &op)) {
    api_value(call, 5, send ? "source" : "target");
    api_value(call, 6, "peer");
    api_value(call, 7, "tag");
    weft_buffer_ref_t ref = whole(send ? op.source : op.target);
    weft_status_t status =
        send ? weft_channel_queue_send(CHANNEL_OP_ARGS(call, &op), ref, 0, 5)
             : weft_channel_queue_recv(CHANNEL_OP_ARGS(call, &op), ref, 0, 5);
    if (api_status(call, status)) {
      weft_buffer_ref_t other = whole(send ? op.target : op.source);
      api_setup(call,
                send ? weft_channel_queue_recv(
                           op.channel, call->device, WEFT_QUEUE_AFFINITY_ANY,
                           weft_semaphore_list_empty(),
                           weft_semaphore_list_empty(), other, 0, 5)
                     : weft_channel_queue_send(
                           op.channel, call->device, WEFT_QUEUE_AFFINITY_ANY,
                           weft_semaphore_list_empty(),
                           weft_semaphore_list_empty(), other, 0, 5),
                "the partner");
    }
  }
  channel_op_end(call, &op);
}

static void channel_queue_send(api_call_t* call) {
  channel_queue_send_recv(call, true);
}
static void channel_queue_recv(api_call_t* call) {
  channel_queue_send_recv(call, false);
}

static void channel_queue_allreduce(api_call_t* call) {
  channel_op_t op;
  if (channel_op_begin(call, &op)) {
    api_value(call, 5, "source");
    api_value(call, 6, "target");
    api_value(call, 7, "element_type");
    api_value(call, 8, "reduction");
    api_status(call, weft_channel_queue_allreduce(
                         CHANNEL_OP_ARGS(call, &op), whole(op.source),
                         whole(op.target), WEFT_ELEMENT_TYPE_F32,
                         WEFT_REDUCTION_SUM));
  }
  channel_op_end(call, &op);
}

static void channel_queue_reduce_scatter(api_call_t* call) {
  channel_op_t op;
  if (channel_op_begin(call, &op)) {
    api_value(call, 5, "source");
    api_value(call, 6, "target");
    api_value(call, 7, "element_type");
    api_value(call, 8, "reduction");
    api_status(call, weft_channel_queue_reduce_scatter(
                         CHANNEL_OP_ARGS(call, &op), whole(op.source),
                         whole(op.target), WEFT_ELEMENT_TYPE_I32,
                         WEFT_REDUCTION_MAX));
  }
  channel_op_end(call, &op);
}

static void channel_queue_allgather(api_call_t* call) {
  channel_op_t op;
  if (channel_op_begin(call, &op)) {
    api_value(call, 5, "source");
    api_value(call, 6, "target");
    api_status(call, weft_channel_queue_allgather(CHANNEL_OP_ARGS(call, &op),
                                                  whole(op.source),
                                                  whole(op.target)));
  }
  channel_op_end(call, &op);
}

static void channel_queue_alltoall(api_call_t* call) {
  channel_op_t op;
  if (channel_op_begin(call, &op)) {
    api_value(call, 5, "source");
    api_value(call, 6, "target");
    api_status(call, weft_channel_queue_alltoall(CHANNEL_OP_ARGS(call, &op),
                                                 whole(op.source),
                                                 whole(op.target)));
  }
  channel_op_end(call, &op);
}

static void channel_queue_broadcast(api_call_t* call) {
  channel_op_t op;
  if (channel_op_begin(call, &op)) {
    api_value(call, 5, "buffer");
    api_value(call, 6, "root");
    api_status(call, weft_channel_queue_broadcast(CHANNEL_OP_ARGS(call, &op),
                                                  whole(op.source), 0));
  }
  channel_op_end(call, &op);
}

static void channel_queue_barrier(api_call_t* call) {
  channel_op_t op;
  if (channel_op_begin(call, &op)) {
    api_status(call, weft_channel_queue_barrier(CHANNEL_OP_ARGS(call, &op)));
  }
  channel_op_end(call, &op);
}

const api_entry_t api_table_channel[] = {
    {"weft_element_type_size", element_type_size, WEFT_STATUS_OK},
    {"weft_element_type_name", element_type_name, WEFT_STATUS_OK},
    {"weft_reduction_name", reduction_name, WEFT_STATUS_OK},
    {"weft_channel_create_self", channel_create_self, WEFT_STATUS_OK},
    {"weft_channel_retain", channel_retain, WEFT_STATUS_OK},
    {"weft_channel_release", channel_release, WEFT_STATUS_OK},
    {"weft_channel_rank", channel_rank, WEFT_STATUS_OK},
    {"weft_channel_size", channel_size, WEFT_STATUS_OK},
    {"weft_channel_name", channel_name, WEFT_STATUS_OK},
    {"weft_channel_tag_limit", channel_tag_limit, WEFT_STATUS_OK},
    {"weft_channel_split", channel_split, WEFT_STATUS_OK},
    {"weft_channel_queue_send", channel_queue_send, WEFT_STATUS_OK},
    {"weft_channel_queue_recv", channel_queue_recv, WEFT_STATUS_OK},
    {"weft_channel_queue_allreduce", channel_queue_allreduce, WEFT_STATUS_OK},
    {"weft_channel_queue_allgather", channel_queue_allgather, WEFT_STATUS_OK},
    {"weft_channel_queue_reduce_scatter", channel_queue_reduce_scatter,
     WEFT_STATUS_OK},
    {"weft_channel_queue_broadcast", channel_queue_broadcast, WEFT_STATUS_OK},
    {"weft_channel_queue_alltoall", channel_queue_alltoall, WEFT_STATUS_OK},
    {"weft_channel_queue_barrier", channel_queue_barrier, WEFT_STATUS_OK},
};
const size_t api_table_channel_count =
    sizeof(api_table_channel) / sizeof(api_table_channel[0]);
