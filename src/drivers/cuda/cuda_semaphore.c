// weft cuda driver: event-backed semaphores (see cuda_semaphore.h).
#include <stdalign.h>
#include "drivers/cuda/cuda_semaphore.h"

#include <string.h>

static void weft_cuda_semaphore_destroy(weft_semaphore_t* base);
static void weft_cuda_semaphore_fail(weft_semaphore_t* base);
static bool weft_cuda_semaphore_is_native(const weft_semaphore_t* base,
                                          weft_domain_t domain);

// The payload is the base's host value plus the device timepoints: query,
// signal and host waits are the base's; a failure drops the events (no
// later op may wait on them in-stream: it sees the failure instead).
static const weft_semaphore_vtable_t kWeftCudaSemaphoreVtable = {
    .destroy = weft_cuda_semaphore_destroy,
    .fail = weft_cuda_semaphore_fail,
    .is_native = weft_cuda_semaphore_is_native,
};

weft_status_t weft_cuda_semaphore_create(weft_domain_t domain,
                                         uint64_t initial_value,
                                         weft_allocator_t allocator,
                                         weft_semaphore_t** out_semaphore) {
  *out_semaphore = NULL;
  weft_cuda_semaphore_t* semaphore = NULL;
  weft_status_t status = weft_allocator_malloc_aligned(
      allocator, sizeof(*semaphore), alignof(weft_cuda_semaphore_t),
      (void**)&semaphore);
  if (weft_status_is_ok(status)) {
    weft_semaphore_initialize(&kWeftCudaSemaphoreVtable, allocator,
                              initial_value, &semaphore->base);
    semaphore->domain = domain;
    weft_slim_mutex_initialize(&semaphore->timepoint_mutex);
    semaphore->timepoints = NULL;
    semaphore->timepoint_first = 0;
    semaphore->timepoint_count = 0;
    semaphore->timepoint_capacity = 0;
    *out_semaphore = &semaphore->base;
  }
  return status;
}

static void weft_cuda_semaphore_destroy(weft_semaphore_t* base) {
  weft_cuda_semaphore_t* semaphore = (weft_cuda_semaphore_t*)base;
  for (uint32_t i = 0; i < semaphore->timepoint_count; ++i) {
    weft_cuda_event_release(
        semaphore->timepoints[semaphore->timepoint_first + i].event);
  }
  weft_allocator_free(base->allocator, semaphore->timepoints);
  weft_slim_mutex_deinitialize(&semaphore->timepoint_mutex);
  weft_semaphore_deinitialize(base);
  weft_allocator_free_aligned(base->allocator, semaphore);
}

static void weft_cuda_semaphore_fail(weft_semaphore_t* base) {
  weft_cuda_semaphore_t* semaphore = (weft_cuda_semaphore_t*)base;
  weft_slim_mutex_lock(&semaphore->timepoint_mutex);
  weft_cuda_device_timepoint_t* timepoints = semaphore->timepoints;
  const uint32_t first = semaphore->timepoint_first;
  const uint32_t count = semaphore->timepoint_count;
  semaphore->timepoints = NULL;
  semaphore->timepoint_first = 0;
  semaphore->timepoint_count = 0;
  semaphore->timepoint_capacity = 0;
  weft_slim_mutex_unlock(&semaphore->timepoint_mutex);
  for (uint32_t i = 0; i < count; ++i) {
    weft_cuda_event_release(timepoints[first + i].event);
  }
  weft_allocator_free(base->allocator, timepoints);
}

static bool weft_cuda_semaphore_is_native(const weft_semaphore_t* base,
                                          weft_domain_t domain) {
  return ((const weft_cuda_semaphore_t*)base)->domain == domain;
}

weft_cuda_semaphore_t* weft_cuda_semaphore_cast(weft_semaphore_t* semaphore,
                                                weft_domain_t domain) {
  if (weft_semaphore_vtable(semaphore) != &kWeftCudaSemaphoreVtable) {
    return NULL;
  }
  return weft_semaphore_is_native(semaphore, domain)
             ? (weft_cuda_semaphore_t*)semaphore
             : NULL;
}

// The index (from |timepoint_first|) of the first live timepoint whose
// value is at least |value|, or |timepoint_count|. Called with the mutex
// held.
static uint32_t weft_cuda_semaphore_lower_bound(
    const weft_cuda_semaphore_t* semaphore, uint64_t value) {
  const weft_cuda_device_timepoint_t* live =
      semaphore->timepoints + semaphore->timepoint_first;
  uint32_t low = 0;
  uint32_t high = semaphore->timepoint_count;
  while (low < high) {
    const uint32_t middle = low + (high - low) / 2;
    if (live[middle].value < value) {
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  return low;
}

// Makes room for one more live timepoint: compacts the array when its
// front is mostly passed ones, otherwise grows it. Called with the mutex
// held.
static weft_status_t weft_cuda_semaphore_reserve(
    weft_cuda_semaphore_t* semaphore) {
  const uint32_t end = semaphore->timepoint_first + semaphore->timepoint_count;
  if (end < semaphore->timepoint_capacity) return WEFT_OK;
  if (semaphore->timepoint_first >= semaphore->timepoint_capacity / 2 &&
      semaphore->timepoint_first > 0) {
    memmove(semaphore->timepoints,
            semaphore->timepoints + semaphore->timepoint_first,
            semaphore->timepoint_count * sizeof(*semaphore->timepoints));
    semaphore->timepoint_first = 0;
    return WEFT_OK;
  }
  uint32_t capacity =
      semaphore->timepoint_capacity ? semaphore->timepoint_capacity * 2 : 8;
  weft_cuda_device_timepoint_t* timepoints = semaphore->timepoints;
  weft_status_t status =
      weft_allocator_realloc(semaphore->base.allocator,
                             capacity * sizeof(*timepoints),
                             (void**)&timepoints);
  if (weft_status_is_ok(status)) {
    semaphore->timepoints = timepoints;
    semaphore->timepoint_capacity = capacity;
  }
  return status;
}

weft_status_t weft_cuda_semaphore_add_device_timepoint(
    weft_cuda_semaphore_t* semaphore, uint64_t value,
    weft_cuda_event_t* event) {
  uint64_t current = 0;
  if (weft_semaphore_peek(&semaphore->base, &current)) {
    return WEFT_OK;  // failed: waiters see the failure, not an event
  }
  if (value <= current) return WEFT_OK;  // the host value already answers
  weft_slim_mutex_lock(&semaphore->timepoint_mutex);
  // Drop (a bounded number of) the timepoints the host value has passed:
  // their events are released outside the lock.
  weft_cuda_event_t* dropped[8];
  uint32_t passed = weft_cuda_semaphore_lower_bound(semaphore, current + 1);
  if (passed > 8) passed = 8;
  for (uint32_t i = 0; i < passed; ++i) {
    dropped[i] = semaphore->timepoints[semaphore->timepoint_first + i].event;
  }
  semaphore->timepoint_first += passed;
  semaphore->timepoint_count -= passed;
  if (semaphore->timepoint_count == 0) semaphore->timepoint_first = 0;
  weft_status_t status = weft_cuda_semaphore_reserve(semaphore);
  if (weft_status_is_ok(status)) {
    // Ops are usually issued in value order: then this appends.
    weft_cuda_device_timepoint_t* live =
        semaphore->timepoints + semaphore->timepoint_first;
    uint32_t at = semaphore->timepoint_count;
    if (at > 0 && live[at - 1].value > value) {
      at = weft_cuda_semaphore_lower_bound(semaphore, value);
    }
    memmove(live + at + 1, live + at,
            (semaphore->timepoint_count - at) * sizeof(*live));
    weft_cuda_event_retain(event);
    live[at].value = value;
    live[at].event = event;
    ++semaphore->timepoint_count;
  }
  weft_slim_mutex_unlock(&semaphore->timepoint_mutex);
  for (uint32_t i = 0; i < passed; ++i) weft_cuda_event_release(dropped[i]);
  return status;
}

weft_cuda_event_t* weft_cuda_semaphore_find_device_timepoint(
    weft_cuda_semaphore_t* semaphore, uint64_t value) {
  weft_cuda_event_t* found = NULL;
  weft_slim_mutex_lock(&semaphore->timepoint_mutex);
  const uint32_t at = weft_cuda_semaphore_lower_bound(semaphore, value);
  if (at < semaphore->timepoint_count) {
    found = semaphore->timepoints[semaphore->timepoint_first + at].event;
    weft_cuda_event_retain(found);
  }
  weft_slim_mutex_unlock(&semaphore->timepoint_mutex);
  return found;
}
