// weft: channels, groups of processes that exchange buffers on timelines.
//
// A channel is a communicator: |size| processes (ranks), each holding its
// own weft_channel_t. Its transfers are queue operations like any other:
// each waits on a wait list, runs once every wait is reached, and signals
// (or fails) a signal list, so communication is ordered against compute
// by semaphores and the host never blocks on it. A transfer that fails
// fails its signals with a status naming the call, the rank and the peer,
// and everything downstream fails with it.
//
// Backends: MPI (weft/mpi.h makes its channels; libweft_mpi, built where
// an MPI library is installed) and, in every build, a channel of one
// process (weft_channel_create_self). The operations and their contracts
// here are backend-neutral.
//
// Contracts every backend keeps:
//   - buffers are weft buffer ranges on the device whose queue runs the
//     op (direct references only). Host-visible memory is used in place;
//     other memory goes through a host-visible staging copy on the same
//     queue;
//   - collectives on one channel start in the order they were submitted on
//     that rank, so every rank must submit them in the same order (MPI's
//     rule, kept across queues and out-of-order waits). A collective that
//     waits on a later collective of its own channel never starts;
//   - sizes are checked before any transfer: a bad peer or root, a tag
//     outside [0, weft_channel_tag_limit], a range that does not fit the
//     op, or a count over INT_MAX elements is INVALID_ARGUMENT at submit.
//     With WEFT_CHANNEL_FLAG_CHECK_SIZES (the default) collectives also
//     agree on their size across ranks first (one small extra collective):
//     a mismatch fails the op on every rank with INVALID_ARGUMENT naming
//     both sizes instead of corrupting memory or hanging;
//   - an op that fails before it starts on one rank (a failed wait) does
//     not leave the others waiting: with the agreement, the collective
//     fails on every rank (ABORTED, naming the rank); without it, that
//     rank contributes zeros; a send that never started fails its recv;
//   - a recv receives exactly its range: a message of another size fails
//     it;
//   - an op in flight is listed by weft_device_dump_pending under its
//     device, with its channel, peer and age (a rank that never arrives).
//
// NULL: pointer arguments are required unless the function's comment says
// "|x| may be NULL" (see "NULL arguments" in weft/status.h).
#ifndef WEFT_CHANNEL_H_
#define WEFT_CHANNEL_H_

#include <stdint.h>

#include "weft/allocator.h"
#include "weft/buffer.h"
#include "weft/device.h"
#include "weft/semaphore.h"
#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_channel_t weft_channel_t;

// Element types of reductions. F16 and BF16 are reduced in f32 (each
// partial result rounded back), as MPI has no such types.
typedef enum weft_element_type_e {
  WEFT_ELEMENT_TYPE_F32 = 0,
  WEFT_ELEMENT_TYPE_F64,
  WEFT_ELEMENT_TYPE_I32,
  WEFT_ELEMENT_TYPE_I64,
  WEFT_ELEMENT_TYPE_F16,
  WEFT_ELEMENT_TYPE_BF16,
  WEFT_ELEMENT_TYPE_COUNT,
} weft_element_type_t;

// Bytes per element of |type| (0 for an unknown type).
uint32_t weft_element_type_size(weft_element_type_t type);
// "f32", ... ("unknown" for an unknown type).
const char* weft_element_type_name(weft_element_type_t type);

typedef enum weft_reduction_e {
  WEFT_REDUCTION_SUM = 0,
  WEFT_REDUCTION_PRODUCT,
  WEFT_REDUCTION_MIN,
  WEFT_REDUCTION_MAX,
  WEFT_REDUCTION_COUNT,
} weft_reduction_t;

// "sum", ... ("unknown" for an unknown reduction).
const char* weft_reduction_name(weft_reduction_t reduction);

typedef enum weft_channel_flag_bits_e {
  WEFT_CHANNEL_FLAG_NONE = 0,
  // Collectives agree on their size across ranks before they run.
  WEFT_CHANNEL_FLAG_CHECK_SIZES = 1u << 0,
} weft_channel_flag_bits_t;
typedef uint32_t weft_channel_flags_t;
#define WEFT_CHANNEL_FLAGS_DEFAULT WEFT_CHANNEL_FLAG_CHECK_SIZES

// Makes a channel of this process alone (rank 0 of 1, named "self"), in
// every build: collectives copy, a send meets the recv of its tag. Code
// written for N ranks runs on it unchanged.
weft_status_t weft_channel_create_self(weft_allocator_t allocator,
                                       weft_channel_t** out_channel);

void weft_channel_retain(weft_channel_t* channel);
// The last release waits for every op submitted on the channel to end
// (signalled, failed, or cancelled with its device) before the channel
// goes: release a channel once its ops' waits can be reached, or after
// their devices (which cancels the ops still waiting).
void weft_channel_release(weft_channel_t* channel);

// This process's rank in [0, size), and the number of ranks.
int32_t weft_channel_rank(const weft_channel_t* channel);
int32_t weft_channel_size(const weft_channel_t* channel);
// The channel's name in messages and reports ("world", "world/split 1").
const char* weft_channel_name(const weft_channel_t* channel);
// The largest tag send/recv take (at least 32767).
int32_t weft_channel_tag_limit(const weft_channel_t* channel);

// Splits |channel| into sub-channels: ranks giving the same |color| form
// one, ordered by |key| (then by their rank here). Collective over the
// whole channel. A negative |color| takes part without joining any:
// *out_channel is then NULL.
weft_status_t weft_channel_split(weft_channel_t* channel, int32_t color,
                                 int32_t key, weft_channel_t** out_channel);

// Sends |source| to rank |peer| with |tag|.
weft_status_t weft_channel_queue_send(
    weft_channel_t* channel, weft_device_t* device,
    weft_queue_affinity_t affinity, weft_semaphore_list_t wait_list,
    weft_semaphore_list_t signal_list, weft_buffer_ref_t source, int32_t peer,
    int32_t tag);

// Receives exactly |target|'s length from rank |peer| with |tag|.
weft_status_t weft_channel_queue_recv(
    weft_channel_t* channel, weft_device_t* device,
    weft_queue_affinity_t affinity, weft_semaphore_list_t wait_list,
    weft_semaphore_list_t signal_list, weft_buffer_ref_t target, int32_t peer,
    int32_t tag);

// target = source reduced over every rank (elementwise). |source| and
// |target| have one length; they may be the same range (in place).
weft_status_t weft_channel_queue_allreduce(
    weft_channel_t* channel, weft_device_t* device,
    weft_queue_affinity_t affinity, weft_semaphore_list_t wait_list,
    weft_semaphore_list_t signal_list, weft_buffer_ref_t source,
    weft_buffer_ref_t target, weft_element_type_t element_type,
    weft_reduction_t reduction);

// target = every rank's source, in rank order (target is size x source).
weft_status_t weft_channel_queue_allgather(
    weft_channel_t* channel, weft_device_t* device,
    weft_queue_affinity_t affinity, weft_semaphore_list_t wait_list,
    weft_semaphore_list_t signal_list, weft_buffer_ref_t source,
    weft_buffer_ref_t target);

// The reduction of every rank's source (size x target), of which rank r
// keeps block r in target.
weft_status_t weft_channel_queue_reduce_scatter(
    weft_channel_t* channel, weft_device_t* device,
    weft_queue_affinity_t affinity, weft_semaphore_list_t wait_list,
    weft_semaphore_list_t signal_list, weft_buffer_ref_t source,
    weft_buffer_ref_t target, weft_element_type_t element_type,
    weft_reduction_t reduction);

// Every rank's |buffer| becomes rank |root|'s.
weft_status_t weft_channel_queue_broadcast(
    weft_channel_t* channel, weft_device_t* device,
    weft_queue_affinity_t affinity, weft_semaphore_list_t wait_list,
    weft_semaphore_list_t signal_list, weft_buffer_ref_t buffer, int32_t root);

// Block j of |source| goes to rank j, which keeps it as block r (this
// rank) of its |target|; both are size blocks of one length.
weft_status_t weft_channel_queue_alltoall(
    weft_channel_t* channel, weft_device_t* device,
    weft_queue_affinity_t affinity, weft_semaphore_list_t wait_list,
    weft_semaphore_list_t signal_list, weft_buffer_ref_t source,
    weft_buffer_ref_t target);

// Signals once every rank reached its barrier.
weft_status_t weft_channel_queue_barrier(weft_channel_t* channel,
                                         weft_device_t* device,
                                         weft_queue_affinity_t affinity,
                                         weft_semaphore_list_t wait_list,
                                         weft_semaphore_list_t signal_list);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_CHANNEL_H_
