// weft: what a channel backend implements (see include/weft/channel.h).
//
// channel.c owns everything backend-neutral: argument checks, staging
// through host-visible buffers, the host call that maps the buffers once
// the waits are reached and hands the op to the backend, f16/bf16
// conversion around reductions, hang reports and tracing, and ending an op
// (weft_channel_op_end). A backend (mpi/mpi_channel.c; NCCL would be
// another) only starts each op's transfer and reports its end.
#ifndef WEFT_CHANNEL_CHANNEL_IMPL_H_
#define WEFT_CHANNEL_CHANNEL_IMPL_H_

#include <stdbool.h>
#include <stdint.h>

#include "base/atomics.h"
#include "base/condition.h"
#include "base/mutex.h"
#include "base/trace.h"
#include "hal/diagnostics.h"
#include "hal/resource.h"
#include "weft/channel.h"
#include "weft/fence.h"

typedef enum weft_channel_op_kind_e {
  WEFT_CHANNEL_OP_SEND = 0,
  WEFT_CHANNEL_OP_RECV,
  WEFT_CHANNEL_OP_ALLREDUCE,
  WEFT_CHANNEL_OP_ALLGATHER,
  WEFT_CHANNEL_OP_REDUCE_SCATTER,
  WEFT_CHANNEL_OP_BROADCAST,
  WEFT_CHANNEL_OP_ALLTOALL,
  WEFT_CHANNEL_OP_BARRIER,
  WEFT_CHANNEL_OP_KIND_COUNT,
} weft_channel_op_kind_t;

// "channel_send", ...
const char* weft_channel_op_kind_name(weft_channel_op_kind_t kind);
// Every kind but send and recv.
bool weft_channel_op_kind_is_collective(weft_channel_op_kind_t kind);

typedef struct weft_channel_t weft_channel_t;

// Trace lanes a channel makes at most (ops in flight at once, as shown).
#define WEFT_CHANNEL_TRACE_LANES 16

// One op, from submit to its end. The backend reads the fields marked
// "set" and owns |backend| while the op is in its hands.
typedef struct weft_channel_op_t {
  // Counted in channel->outstanding until the op is freed.
  weft_channel_t* channel;
  weft_channel_op_kind_t kind;
  weft_device_t* device;    // retained
  // Collectives: their place in the channel's submission order (the
  // backend starts them in this order).
  uint64_t sequence;
  // Set: host pointers of the data the backend transfers, valid from
  // start to end. For f16/bf16 reductions these are f32 copies.
  const void* send_data;
  void* recv_data;
  // Set: the element type the backend reduces (f16/bf16 arrive as f32),
  // the reduction, and counts: send_bytes / recv_bytes of the data above,
  // and elements of one rank's block for reductions.
  weft_element_type_t element_type;
  weft_reduction_t reduction;
  uint64_t send_bytes;
  uint64_t recv_bytes;
  // Set: the peer (send/recv), the root (broadcast), or -1; the tag.
  int32_t peer;
  int32_t tag;
  // Set: true when send_data and recv_data are one range (in place).
  bool in_place;
  // Set: the op never started here (a wait failed, or its device went),
  // and the queue failed its signals; it still takes part so no other rank
  // waits forever for it: a send sends nothing, a recv receives into
  // scratch, a collective tells the others in its size agreement (or,
  // without one, contributes zeros). It ends with no signals to publish.
  bool poisoned;

  // --- channel.c's own.
  weft_element_type_t user_element_type;
  // send_bytes and recv_bytes count f32 copies of half data already.
  bool widened;
  weft_buffer_t* source;  // retained; the staging buffer when staged
  uint64_t source_offset;
  uint64_t source_length;
  weft_buffer_t* target;  // retained; the staging buffer when staged
  uint64_t target_offset;
  uint64_t target_length;
  weft_buffer_mapping_t source_mapping;
  weft_buffer_mapping_t target_mapping;
  void* converted;  // f32 copies of f16/bf16 data (one allocation)
  weft_fence_t* fence;  // the signals, taken over by the host call
  weft_time_t submit_time;
  weft_time_t start_time;
  uint64_t trace_id;
  // In the channel's in-flight list (for reports), guarded by its lock.
  struct weft_channel_op_t* prev;
  struct weft_channel_op_t* next;
  bool listed;

  // --- The backend's.
  void* backend;
} weft_channel_op_t;

typedef struct weft_channel_backend_vtable_t {
  // Frees the channel; every op has ended. Called on the thread of the
  // last weft_channel_release.
  void (*destroy)(weft_channel_t* channel);
  // Splits as weft_channel_split says.
  weft_status_t (*split)(weft_channel_t* channel, int32_t color, int32_t key,
                         weft_channel_t** out_channel);
  // Takes an op whose waits are reached and whose data is mapped, and ends
  // it later (on any thread) with weft_channel_op_end.
  void (*start)(weft_channel_t* channel, weft_channel_op_t* op);
} weft_channel_backend_vtable_t;

struct weft_channel_t {
  // Ref-counted like every HAL object (type CHANNEL); its last release
  // waits for the outstanding ops, then runs the backend's destroy.
  weft_resource_t resource;
  const weft_channel_backend_vtable_t* vtable;
  weft_allocator_t allocator;
  char* name;
  int32_t rank;
  int32_t size;
  int32_t tag_limit;
  weft_channel_flags_t flags;
  // Guards the sequence counter, the in-flight list and |outstanding|.
  weft_slim_mutex_t mutex;
  uint64_t next_sequence;
  weft_channel_op_t* in_flight;
  // Ops submitted and not yet freed; the last release waits on |idle| for
  // it to reach 0 (an op touches the channel until it is freed).
  uint64_t outstanding;
  weft_condition_t idle;
  // Lists the in-flight ops under their devices in hang reports.
  weft_diagnostics_source_t diagnostics;
  // The channel's lanes in a trace, written under |mutex| (ops end on any
  // thread, one at a time here). An op goes on the first lane whose last
  // op ended before it started, so a lane's zones never overlap nor go
  // back in time; made as needed, up to WEFT_CHANNEL_TRACE_LANES.
  weft_trace_track_t* trace_lanes[WEFT_CHANNEL_TRACE_LANES];
  weft_time_t trace_lane_end[WEFT_CHANNEL_TRACE_LANES];
  uint32_t trace_lane_count;
};

// Initialises the neutral part (copies |name|); the backend fills in the
// rest. Registers the channel's ops for hang reports.
weft_status_t weft_channel_initialize(const weft_channel_backend_vtable_t* vtable,
                                      const char* name, int32_t rank,
                                      int32_t size, int32_t tag_limit,
                                      weft_channel_flags_t flags,
                                      weft_allocator_t allocator,
                                      weft_channel_t* channel);
// Undoes weft_channel_initialize (the backend's destroy calls it last
// but one, before freeing the memory).
void weft_channel_deinitialize(weft_channel_t* channel);

// Ends |op| with |status| (consumed): copies converted results back,
// unmaps, signals or fails its signals, and frees it. Any thread.
void weft_channel_op_end(weft_channel_op_t* op, weft_status_t status);

// How a recv that got |received| bytes ends: OK when that is its range,
// else ABORTED when nothing came (the sender's op failed before it
// started) or OUT_OF_RANGE naming both sizes. Every backend's recv ends
// through it.
weft_status_t weft_channel_recv_status(const weft_channel_op_t* op,
                                       uint64_t received);

// "allreduce on channel 'world' (rank 0 of 2)": the prefix of the op's
// error messages.
void weft_channel_op_label(const weft_channel_op_t* op, char* buffer,
                           size_t capacity);

#endif  // WEFT_CHANNEL_CHANNEL_IMPL_H_
