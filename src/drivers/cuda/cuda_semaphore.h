// weft cuda driver: a cuda device's semaphores, in one of two forms.
//
// Both are the host timeline semaphore (every wait, failure and timepoint
// rule of semaphore_impl.h; every other device works with them) plus what
// lets a later op of the same device wait for a value on the GPU instead
// of through the host, once the op that signals it is issued:
//  - event-backed ("semaphores=events"): when an op that signals
//    (semaphore, v) is issued, the event recorded after its work is kept
//    here bound to v (a device timepoint); a waiter for u <= v is issued
//    behind that event (in-stream order, cuStreamWaitEvent across
//    streams). Device timepoints the host value passed are dropped;
//  - memory-word ("semaphores=memory", cuda_word_pool.h): the payload is a
//    64-bit word of pinned, device-mapped memory. An issued op writes its
//    value there on the GPU after its work (cuStreamWriteValue64), a waiter
//    waits on the GPU (cuStreamWaitValue64, >=), and the host signals by
//    storing into the word. A failure stores WEFT_CUDA_WORD_FAILURE_VALUE,
//    which releases every GPU waiter.
// In both forms a GPU wait is only ever issued for a value whose signal is
// already issued on the device: a stream blocked on a value only the host
// or an op not yet issued would move could hold up unrelated work queued
// behind it on that stream (and deadlock if that work is what leads to the
// signal). The device's completion thread is the listener: it sees each
// op's event, reads what the GPU reported, and publishes the value to the
// base (host waits, timepoints, other devices), or the failure.
#ifndef WEFT_DRIVERS_CUDA_CUDA_SEMAPHORE_H_
#define WEFT_DRIVERS_CUDA_CUDA_SEMAPHORE_H_

#include <stdbool.h>

#include "drivers/cuda/cuda_event_pool.h"
#include "drivers/cuda/cuda_word_pool.h"
#include "hal/domain.h"
#include "hal/semaphore_impl.h"

typedef struct weft_cuda_device_timepoint_t {
  uint64_t value;
  weft_cuda_event_t* event;  // retained
} weft_cuda_device_timepoint_t;

// What a memory word holds once its semaphore failed: at or above every
// value a GPU waits for. Stream waits compare cyclically (the difference
// as a signed 64-bit number), so values stay below 2^63: a wait for a
// value at or above this one is met on the host, and a signal at or above
// it stores this one.
#define WEFT_CUDA_WORD_FAILURE_VALUE ((uint64_t)INT64_MAX)

// What a word holds for |value|: the value itself, or the failure value for
// those at or above it.
static inline uint64_t weft_cuda_word_value(uint64_t value) {
  return value < WEFT_CUDA_WORD_FAILURE_VALUE ? value
                                              : WEFT_CUDA_WORD_FAILURE_VALUE;
}

// One wait of an op that its stream can do itself.
typedef struct weft_cuda_stream_wait_t {
  // Event-backed: the event of the op that signals the value (retained).
  // NULL for a memory word.
  weft_cuda_event_t* event;
  CUdeviceptr word;  // memory word: wait until it is >= |value|
  uint64_t value;
} weft_cuda_stream_wait_t;

typedef struct weft_cuda_semaphore_t {
  weft_semaphore_t base;
  // The domain of the device that made it: only its ops use the events
  // and wait on the word.
  weft_domain_t domain;
  // Memory-word semaphores: the payload (NULL when event-backed).
  weft_cuda_word_t* word;
  // Guards the device timepoints and the issued fields below.
  weft_slim_mutex_t timepoint_mutex;
  // Memory-word semaphores: the highest value an issued op of the device
  // will write, and the stream that op went to (a waiter on that stream is
  // already behind it).
  uint64_t issued_value;
  CUstream issued_stream;
  // Sorted by value, ascending: the live ones are
  // [timepoint_first, timepoint_first + timepoint_count). Passed ones are
  // dropped from the front by moving |timepoint_first| (a chain issued far
  // ahead of the GPU keeps one per op in flight: no memmove per drop, and
  // lookups are binary searches).
  weft_cuda_device_timepoint_t* timepoints;
  uint32_t timepoint_first;
  uint32_t timepoint_count;
  uint32_t timepoint_capacity;
} weft_cuda_semaphore_t;

// Creates a semaphore of a cuda device in |domain| at |initial_value|:
// memory-word when |word_pool| is given (a word is taken from it),
// event-backed otherwise.
weft_status_t weft_cuda_semaphore_create(weft_domain_t domain,
                                         weft_cuda_word_pool_t* word_pool,
                                         uint64_t initial_value,
                                         weft_allocator_t allocator,
                                         weft_semaphore_t** out_semaphore);

// The cuda semaphore of |domain| that |semaphore| is, or NULL (a host
// semaphore, or one of another device).
weft_cuda_semaphore_t* weft_cuda_semaphore_cast(weft_semaphore_t* semaphore,
                                                weft_domain_t domain);

// Records that the op that signals |value| was issued to |stream| with
// |event| recorded after its work (and, for a memory word, its write of
// |value| before the event): later waiters may wait for it on the GPU.
weft_status_t weft_cuda_semaphore_note_issued(weft_cuda_semaphore_t* semaphore,
                                              uint64_t value, CUstream stream,
                                              weft_cuda_event_t* event);

// How an op to be issued on |stream| can wait for |value| (not reached on
// the host) on the GPU: true with |out_wait| filled (an event retained, or
// the word), or with |out_wait->event| NULL and |out_wait->word| 0 when
// |stream| is already behind the signal; false when no issued op signals
// it (the op waits for the host value instead).
bool weft_cuda_semaphore_find_stream_wait(weft_cuda_semaphore_t* semaphore,
                                          uint64_t value, CUstream stream,
                                          weft_cuda_stream_wait_t* out_wait);

// A memory-word semaphore that failed gets its failure value stored again:
// called when an op that wrote the word on the GPU completed, since that
// write may have landed after the failure was stored.
void weft_cuda_semaphore_restore_failure(weft_cuda_semaphore_t* semaphore);

#endif  // WEFT_DRIVERS_CUDA_CUDA_SEMAPHORE_H_
