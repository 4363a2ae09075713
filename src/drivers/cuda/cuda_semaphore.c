// weft cuda driver: event-backed semaphores (see cuda_semaphore.h).
#include "drivers/cuda/cuda_semaphore.h"

#include <string.h>

static void weft_cuda_semaphore_destroy(weft_semaphore_t* base);

static const weft_semaphore_vtable_t kWeftCudaSemaphoreVtable = {
    .destroy = weft_cuda_semaphore_destroy,
};

weft_status_t weft_cuda_semaphore_create(weft_domain_t domain,
                                         uint64_t initial_value,
                                         weft_allocator_t allocator,
                                         weft_semaphore_t** out_semaphore) {
  *out_semaphore = NULL;
  weft_cuda_semaphore_t* semaphore = NULL;
  weft_status_t status =
      weft_allocator_malloc(allocator, sizeof(*semaphore), (void**)&semaphore);
  if (weft_status_is_ok(status)) {
    weft_semaphore_initialize(&kWeftCudaSemaphoreVtable, allocator,
                              initial_value, &semaphore->base);
    semaphore->domain = domain;
    weft_slim_mutex_initialize(&semaphore->timepoint_mutex);
    semaphore->timepoints = NULL;
    semaphore->timepoint_count = 0;
    semaphore->timepoint_capacity = 0;
    *out_semaphore = &semaphore->base;
  }
  return status;
}

static void weft_cuda_semaphore_destroy(weft_semaphore_t* base) {
  weft_cuda_semaphore_t* semaphore = (weft_cuda_semaphore_t*)base;
  for (uint32_t i = 0; i < semaphore->timepoint_count; ++i) {
    weft_cuda_event_release(semaphore->timepoints[i].event);
  }
  weft_allocator_free(base->allocator, semaphore->timepoints);
  weft_slim_mutex_deinitialize(&semaphore->timepoint_mutex);
  weft_semaphore_deinitialize(base);
  weft_allocator_free(base->allocator, semaphore);
}

weft_cuda_semaphore_t* weft_cuda_semaphore_cast(weft_semaphore_t* semaphore,
                                                weft_domain_t domain) {
  if (weft_semaphore_vtable(semaphore) != &kWeftCudaSemaphoreVtable) {
    return NULL;
  }
  weft_cuda_semaphore_t* cuda_semaphore = (weft_cuda_semaphore_t*)semaphore;
  return cuda_semaphore->domain == domain ? cuda_semaphore : NULL;
}

// How many leading timepoints the host value |current| has passed. Called
// with the mutex held.
static uint32_t weft_cuda_semaphore_prune(weft_cuda_semaphore_t* semaphore,
                                          uint64_t current) {
  uint32_t passed = 0;
  while (passed < semaphore->timepoint_count &&
         semaphore->timepoints[passed].value <= current) {
    ++passed;
  }
  return passed;
}

// Removes the first |count| timepoints, releasing their events.
static void weft_cuda_semaphore_drop_front(weft_cuda_semaphore_t* semaphore,
                                           uint32_t count,
                                           weft_cuda_event_t** out_events) {
  for (uint32_t i = 0; i < count; ++i) {
    out_events[i] = semaphore->timepoints[i].event;
  }
  if (count == 0) return;  // |timepoints| may still be NULL
  memmove(semaphore->timepoints, semaphore->timepoints + count,
          (semaphore->timepoint_count - count) *
              sizeof(*semaphore->timepoints));
  semaphore->timepoint_count -= count;
}

weft_status_t weft_cuda_semaphore_add_device_timepoint(
    weft_cuda_semaphore_t* semaphore, uint64_t value,
    weft_cuda_event_t* event) {
  uint64_t current = 0;
  weft_semaphore_peek(&semaphore->base, &current);
  if (value <= current) return WEFT_OK;  // the host value already answers
  weft_status_t status = WEFT_OK;
  weft_slim_mutex_lock(&semaphore->timepoint_mutex);
  // Reuse the slots of passed timepoints before growing.
  weft_cuda_event_t* dropped[8];
  uint32_t passed = weft_cuda_semaphore_prune(semaphore, current);
  if (passed > 8) passed = 8;
  weft_cuda_semaphore_drop_front(semaphore, passed, dropped);
  if (semaphore->timepoint_count == semaphore->timepoint_capacity) {
    uint32_t capacity =
        semaphore->timepoint_capacity ? semaphore->timepoint_capacity * 2 : 4;
    weft_cuda_device_timepoint_t* timepoints = semaphore->timepoints;
    status = weft_allocator_realloc(semaphore->base.allocator,
                                    capacity * sizeof(*timepoints),
                                    (void**)&timepoints);
    if (weft_status_is_ok(status)) {
      semaphore->timepoints = timepoints;
      semaphore->timepoint_capacity = capacity;
    }
  }
  if (weft_status_is_ok(status)) {
    // Ops are usually issued in value order: insert from the back.
    uint32_t at = semaphore->timepoint_count;
    while (at > 0 && semaphore->timepoints[at - 1].value > value) --at;
    memmove(semaphore->timepoints + at + 1, semaphore->timepoints + at,
            (semaphore->timepoint_count - at) * sizeof(*semaphore->timepoints));
    weft_cuda_event_retain(event);
    semaphore->timepoints[at].value = value;
    semaphore->timepoints[at].event = event;
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
  for (uint32_t i = 0; i < semaphore->timepoint_count; ++i) {
    if (semaphore->timepoints[i].value >= value) {
      found = semaphore->timepoints[i].event;
      weft_cuda_event_retain(found);
      break;
    }
  }
  weft_slim_mutex_unlock(&semaphore->timepoint_mutex);
  return found;
}
