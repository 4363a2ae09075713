// weft cuda driver: semaphores backed by CUDA events.
//
// A cuda device's semaphore is the host timeline semaphore (every wait,
// failure and timepoint rule of semaphore_impl.h, and every other device
// works with it) plus device timepoints: when an op that signals
// (semaphore, v) is issued to a stream, the event recorded after its work
// is kept here bound to v. A later op of the same domain that waits for
// (semaphore, u <= v) need not wait for the host to see u: it can be
// issued at once behind that event (in-stream ordering, cuStreamWaitEvent
// across streams). Device timepoints at or below the host value are
// dropped as they are passed: the host value then answers.
#ifndef WEFT_DRIVERS_CUDA_CUDA_SEMAPHORE_H_
#define WEFT_DRIVERS_CUDA_CUDA_SEMAPHORE_H_

#include <stdbool.h>

#include "drivers/cuda/cuda_event_pool.h"
#include "hal/domain.h"
#include "hal/semaphore_impl.h"

typedef struct weft_cuda_device_timepoint_t {
  uint64_t value;
  weft_cuda_event_t* event;  // retained
} weft_cuda_device_timepoint_t;

typedef struct weft_cuda_semaphore_t {
  weft_semaphore_t base;
  // The domain of the device that made it: only its ops use the events.
  weft_domain_t domain;
  // Guards the device timepoints.
  weft_slim_mutex_t timepoint_mutex;
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

// Creates a semaphore of a cuda device in |domain| at |initial_value|.
weft_status_t weft_cuda_semaphore_create(weft_domain_t domain,
                                         uint64_t initial_value,
                                         weft_allocator_t allocator,
                                         weft_semaphore_t** out_semaphore);

// The cuda semaphore of |domain| that |semaphore| is, or NULL (a host
// semaphore, or one of another device).
weft_cuda_semaphore_t* weft_cuda_semaphore_cast(weft_semaphore_t* semaphore,
                                                weft_domain_t domain);

// Binds |value| to |event| (retained): the op that will signal it was
// issued with |event| recorded after its work.
weft_status_t weft_cuda_semaphore_add_device_timepoint(
    weft_cuda_semaphore_t* semaphore, uint64_t value,
    weft_cuda_event_t* event);

// The event of the lowest device timepoint at or above |value| (retained,
// the caller releases it), or NULL when none is recorded.
weft_cuda_event_t* weft_cuda_semaphore_find_device_timepoint(
    weft_cuda_semaphore_t* semaphore, uint64_t value);

#endif  // WEFT_DRIVERS_CUDA_CUDA_SEMAPHORE_H_
