// weft cuda driver: the device.
//
// One device is one GPU's primary context with |queue_count| dispatch
// streams (the "queues" option; an op goes to the queue its affinity's
// lowest bit names, modulo the count), a stream-ordered memory pool, a
// submission thread and a completion thread:
//  - ops come through one submit entry (hal/queue_op.h). An op whose waits
//    are all reached on the host, or signalled by an op already issued on
//    this device (cuda_semaphore.h: an event or a memory word to wait for
//    on the GPU), is issued at once on the submitting thread: its work goes
//    on its queue's stream behind those in-stream waits, then (memory-word
//    semaphores) the writes of its signals, then an event from the pool.
//    Otherwise it is parked on the device's queue scheduler
//    (hal/queue_scheduler.h); a wait on a semaphore of this device counts
//    as met as soon as the op that signals it is issued
//    (weft_semaphore_advance_issued). The scheduler hands the op back to
//    the submission thread, which issues ready ops in the order they became
//    ready: no op is looked at before something it waits on moved;
//  - the completion thread takes issued ops in issue order (over every queue),
//    waits for each op's event (blocking-sync event, or polling with
//    backoff: the "completion" option), checks what the GPU reported (a
//    kernel's status word, a failed wait upstream) and signals or fails the
//    op's signals.
// No weft code runs inside a CUDA callback, so nothing ever calls CUDA from
// one (the deadlock the seed's first design met).
//
// Threads other than the device's own push the context around their CUDA
// calls and pop it after, so a caller's current context is left as it was.
#ifndef WEFT_DRIVERS_CUDA_CUDA_DEVICE_H_
#define WEFT_DRIVERS_CUDA_CUDA_DEVICE_H_

#include <stdbool.h>

#include "async/proactor.h"
#include "base/atomics.h"
#include "base/condition.h"
#include "base/mutex.h"
#include "base/thread.h"
#include "base/trace.h"
#include "drivers/cuda/cuda_event_pool.h"
#include "drivers/cuda/cuda_symbols.h"
#include "drivers/cuda/cuda_word_pool.h"
#include "hal/device_impl.h"
#include "hal/gpu/kernel_status.h"
#include "hal/queue_scheduler.h"

typedef struct weft_cuda_op_t weft_cuda_op_t;

// What a kernel reports through its status parameter (weft/executable.h,
// hal/gpu/kernel_status.h).
typedef weft_gpu_kernel_status_t weft_cuda_status_t;

// How the completion thread learns that an op's event fired.
typedef enum weft_cuda_completion_mode_e {
  // cuEventSynchronize on events created with CU_EVENT_BLOCKING_SYNC: the
  // thread sleeps in the driver until the GPU is done.
  WEFT_CUDA_COMPLETION_BLOCKING = 0,
  // cuEventQuery with exponential backoff (1 us to 1 ms): lower latency
  // for short ops at the cost of a thread waking up.
  WEFT_CUDA_COMPLETION_POLLING = 1,
} weft_cuda_completion_mode_t;

// The most ops a device keeps issued and not yet completed (on the stream,
// or with the file transfer thread). More wait in the ready FIFO until
// completions make room: a real stream makes the host thread block once
// about a thousand operations sit behind an unmet wait, and a bound on
// what is in flight also bounds the pools that follow it (events, status
// slots), so a burst of any size leaves them at one high-water mark.
#define WEFT_CUDA_MAX_IN_FLIGHT 1024u

// The most queues (streams) a device has.
#define WEFT_CUDA_MAX_QUEUES 8u

// How a device's semaphores keep their value (cuda_semaphore.h).
typedef enum weft_cuda_semaphore_mode_e {
  WEFT_CUDA_SEMAPHORES_EVENTS = 0,  // host value + events of issued signals
  WEFT_CUDA_SEMAPHORES_MEMORY = 1,  // a 64-bit word streams wait on and write
} weft_cuda_semaphore_mode_t;

// The most stream operations (waits, launches, copies, word writes, event
// records) a device keeps queued on one stream and not yet completed. A
// GPU's stream holds about a thousand behind an unmet wait before the next
// call blocks the host thread (with the device mutex held, when it is the
// issuer); ops past this bound wait in the ready FIFO instead. Half of
// that, so that one op of many (a long one-shot command buffer) still
// fits after it.
#define WEFT_CUDA_MAX_STREAM_ENTRIES 512u

// A FIFO of ops (guarded by the device mutex).
typedef struct weft_cuda_op_fifo_t {
  weft_cuda_op_t* head;
  weft_cuda_op_t* tail;
  uint32_t count;
} weft_cuda_op_fifo_t;

typedef struct weft_cuda_device_t weft_cuda_device_t;

// One weft queue: a stream of the device.
typedef struct weft_cuda_queue_t {
  uint32_t index;
  CUstream stream;
  // Stream operations of issued ops not yet completed (the ops'
  // |stream_entries|); guarded by the device mutex.
  uint32_t entries_in_flight;
  // Tracing (below): this stream's lane, and where its last zone ended;
  // the completion thread's.
  weft_trace_track_t* trace_track;
  weft_time_t trace_last_end_ns;
  // When the last op completed on this stream ended on the GPU
  // (weft_cuda_op_end_time); the completion thread's.
  weft_time_t last_end_ns;
} weft_cuda_queue_t;

struct weft_cuda_device_t {
  weft_device_t base;
  // Op records, parking (waits neither reached nor issued on this device),
  // the parked registry and the release sweep (hal/queue_scheduler.h).
  weft_queue_scheduler_t scheduler;
  const weft_cuda_symbols_t* symbols;
  int ordinal;
  CUdevice cu_device;
  CUcontext context;  // the primary context (retained by |event_pool|)
  weft_cuda_queue_t queues[WEFT_CUDA_MAX_QUEUES];
  uint32_t queue_count;
  // Stream-ordered allocation (alloca); NULL when the GPU has no pools
  // (then alloca takes cuMemAlloc memory at issue).
  CUmemoryPool memory_pool;
  // Events, ref-counted: also the keeper of the context for buffers and
  // executables that outlive the device.
  weft_cuda_event_pool_t* event_pool;
  weft_cuda_completion_mode_t completion_mode;
  weft_cuda_semaphore_mode_t semaphore_mode;
  // The words of memory-word semaphores (NULL in event mode).
  weft_cuda_word_pool_t* word_pool;
  // Pinned, device-mapped status slots (weft_cuda_status_t) where kernels
  // report failure: |status_slot_count| of them, handed out by
  // |status_ring| (hal/gpu/kernel_status.h), guarded by |mutex|.
  weft_cuda_status_t* status_slots;
  CUdeviceptr status_slots_device;
  uint32_t status_slot_count;
  weft_gpu_status_ring_t status_ring;

  // Guards everything below, and the order of issue: the stream's work,
  // the completion FIFO and the device timepoints agree.
  weft_slim_mutex_t mutex;
  // Held ops whose waits resolved, for the submission thread, in the
  // order they became ready.
  weft_cuda_op_fifo_t ready;
  // Issued ops not yet completed, in issue order over every queue: the
  // completion thread signals them in that order, so an op that waited on
  // the GPU for another's signal never signals before it, whichever stream
  // finished first.
  weft_cuda_op_fifo_t issued;
  // Issued ops (each retained) whose signals are still to be announced to
  // their semaphores once the mutex is let go (weft_semaphore_advance_issued
  // may call a wait set back, which takes the mutex).
  weft_cuda_op_t* advance_head;
  // Wakes the submission thread (the scheduler handed a held op back) and
  // the completion thread (an op issued).
  weft_condition_t submission_wake;
  weft_condition_t completion_wake;
  bool submission_requested;
  // Teardown, in stages so no thread leaves while another can still hand
  // it work: the submission thread stops first, then the transfer thread
  // (once nothing can hand it a file op), then the completion thread (once
  // nothing can issue).
  bool shutting_down;
  bool transfers_closing;
  bool completions_closing;
  weft_thread_t* submission_thread;
  weft_thread_t* completion_thread;
  // Held ops the scheduler has not yet handed back (parked, or on their
  // way to the ready FIFO), for the teardown.
  uint32_t held_count;
  weft_condition_t idle;

  // File reads and writes (cuda_file.c): ready READ/WRITE ops wait here
  // for the transfer thread, which moves them through pinned staging
  // pieces (|staging_piece_size| bytes each, |staging_piece_count| of them,
  // allocated at the first transfer).
  weft_cuda_op_fifo_t transfers;
  weft_condition_t transfer_wake;
  weft_thread_t* transfer_thread;
  uint64_t staging_piece_size;
  uint32_t staging_piece_count;
  uint8_t* staging;  // pinned, device-mapped
  CUdeviceptr staging_device;
  weft_cuda_event_t** staging_events;  // the last copy of each piece
  // The file side of transfers (src/async), made with the staging; NULL
  // before the first transfer or when none could be made (synchronous).
  weft_proactor_t* proactor;

  // GPU time: every op's end event is timed, so its signals can say when
  // its work ended (weft_timepoint_t's |reached_at|); an op issued while
  // tracing is on also records a timed event before its work; the completion thread turns the two
  // into a zone on its queue's track (the stream's lane). GPU times map onto the
  // host clock through an epoch: a timed event recorded on |clock_stream|,
  // which nothing else uses, and polled at once; its host time is the
  // middle of that wait; each zone is then kept within what the host saw
  // (after its issue and the zone before it, before its completion was
  // seen). Renewed after a second, so the float milliseconds
  // cuEventElapsedTime returns stay precise. The epoch fields
  // are guarded by |mutex|.
  CUstream clock_stream;
  weft_cuda_event_t* trace_epoch;
  weft_time_t trace_epoch_ns;

  char name[128];
  size_t total_memory;
  int compute_capability[2];
  int driver_version;
  // CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS: the GPU's streams
  // can wait on and write 64-bit memory words (what memory-word semaphores
  // need; not the older CAN_USE_STREAM_MEM_OPS attribute, which some
  // current GPUs that have them report as 0).
  int stream_memory_ops;
};

WEFT_DEVICE_DEFINE_CAST(weft_cuda_device_t, weft_cuda_device_cast)

// True when an op for |queue| must wait for room: the device has
// WEFT_CUDA_MAX_IN_FLIGHT ops issued and not yet completed, or the queue's
// stream WEFT_CUDA_MAX_STREAM_ENTRIES operations. Called with the mutex
// held.
static inline bool weft_cuda_device_is_full(const weft_cuda_device_t* device,
                                            const weft_cuda_queue_t* queue) {
  return device->issued.count + device->transfers.count >=
             WEFT_CUDA_MAX_IN_FLIGHT ||
         queue->entries_in_flight >= WEFT_CUDA_MAX_STREAM_ENTRIES;
}

// Pushes the device's context on this thread (pop with
// weft_cuda_device_pop_context).
weft_status_t weft_cuda_device_push_context(weft_cuda_device_t* device);
void weft_cuda_device_pop_context(weft_cuda_device_t* device);

// The queue (cuda_queue.c).
weft_status_t weft_cuda_device_queue_submit(weft_device_t* device,
                                            const weft_queue_op_t* op);
uint64_t weft_cuda_device_for_each_pending(weft_device_t* device,
                                           weft_pending_op_visit_fn_t visit,
                                           void* user_data);
// The transfer thread's body (cuda_file.c): runs file ops handed to it.
int weft_cuda_transfer_main(void* user_data);
// Hands a ready READ/WRITE op to the transfer thread. Called with the
// device mutex held.
void weft_cuda_device_enqueue_transfer(weft_cuda_device_t* device,
                                       weft_cuda_op_t* op);
// Announces to their semaphores the signals of ops issued since the last
// call (weft_semaphore_advance_issued), so held ops of this device waiting
// for them may go. Called without the mutex, after issuing.
void weft_cuda_device_announce_issued(weft_cuda_device_t* device);
// Frees the staging pieces (context current, no transfer running).
void weft_cuda_device_free_staging(weft_cuda_device_t* device);

// Initialises |device->scheduler| with the queue's ready function
// (cuda_queue.c).
void weft_cuda_device_initialize_scheduler(weft_cuda_device_t* device);

// The queue an op with |affinity| (non-empty) runs on.
static inline weft_cuda_queue_t* weft_cuda_device_select_queue(
    weft_cuda_device_t* device, uint64_t affinity) {
  return &device->queues[(uint32_t)__builtin_ctzll(affinity) %
                         device->queue_count];
}

// Starts the submission and completion threads.
weft_status_t weft_cuda_device_start_queue(weft_cuda_device_t* device);
// At the last release: fails held ops with CANCELLED, lets issued ops
// finish, and joins both threads.
void weft_cuda_device_stop_queue(weft_cuda_device_t* device);

#endif  // WEFT_DRIVERS_CUDA_CUDA_DEVICE_H_
