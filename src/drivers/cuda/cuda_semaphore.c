// weft cuda driver: event-backed and memory-word semaphores (see
// cuda_semaphore.h).
#include <stdalign.h>
#include "drivers/cuda/cuda_semaphore.h"

#include <string.h>

static void weft_cuda_semaphore_destroy(weft_semaphore_t* base);
static void weft_cuda_semaphore_fail(weft_semaphore_t* base);
static bool weft_cuda_semaphore_is_native(const weft_semaphore_t* base,
                                          weft_domain_t domain);
static weft_status_t weft_cuda_semaphore_word_signal(weft_semaphore_t* base,
                                                     uint64_t value);

// The payload is the base's host value plus the device timepoints: query,
// signal and host waits are the base's; a failure drops the events (no
// later op may wait on them in-stream: it sees the failure instead).
static const weft_semaphore_vtable_t kWeftCudaSemaphoreVtable = {
    .destroy = weft_cuda_semaphore_destroy,
    .fail = weft_cuda_semaphore_fail,
    .is_native = weft_cuda_semaphore_is_native,
};

// The payload is the word: a host signal stores it (then publishes), a
// failure stores the failure value; query and host waits are the base's,
// which the completion thread moves only once it has read what the GPU
// reported (the word alone would say OK for a kernel that failed).
static const weft_semaphore_vtable_t kWeftCudaWordSemaphoreVtable = {
    .destroy = weft_cuda_semaphore_destroy,
    .signal = weft_cuda_semaphore_word_signal,
    .fail = weft_cuda_semaphore_fail,
    .is_native = weft_cuda_semaphore_is_native,
};

weft_status_t weft_cuda_semaphore_create(weft_domain_t domain,
                                         weft_cuda_word_pool_t* word_pool,
                                         uint64_t initial_value,
                                         weft_allocator_t allocator,
                                         weft_semaphore_t** out_semaphore) {
  *out_semaphore = NULL;
  weft_cuda_word_t* word = NULL;
  weft_status_t status = WEFT_OK;
  if (word_pool) {
    status = weft_cuda_word_acquire(
        word_pool, weft_cuda_word_value(initial_value), &word);
    if (!weft_status_is_ok(status)) return status;
  }
  weft_cuda_semaphore_t* semaphore = NULL;
  status = weft_allocator_malloc_aligned(
      allocator, sizeof(*semaphore), alignof(weft_cuda_semaphore_t),
      (void**)&semaphore);
  if (!weft_status_is_ok(status)) weft_cuda_word_release(word);
  if (weft_status_is_ok(status)) {
    weft_semaphore_initialize(word ? &kWeftCudaWordSemaphoreVtable
                                   : &kWeftCudaSemaphoreVtable,
                              allocator, initial_value, &semaphore->base);
    semaphore->domain = domain;
    semaphore->word = word;
    semaphore->issued_value = initial_value;
    semaphore->issued_stream = NULL;
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
  // No stream still uses the word: an op holds its semaphores until it
  // completes.
  weft_cuda_word_release(semaphore->word);
  weft_slim_mutex_deinitialize(&semaphore->timepoint_mutex);
  weft_semaphore_deinitialize(base);
  weft_allocator_free_aligned(base->allocator, semaphore);
}

static weft_status_t weft_cuda_semaphore_word_signal(weft_semaphore_t* base,
                                                     uint64_t value) {
  weft_cuda_semaphore_t* semaphore = (weft_cuda_semaphore_t*)base;
  // Never moves the word back: the GPU may already have written a later
  // value of an op issued after the one whose completion signals this.
  const uint64_t stored = weft_cuda_word_value(value);
  uint64_t current =
      weft_atomic_load(semaphore->word->host, memory_order_relaxed);
  while (current < stored &&
         !weft_atomic_compare_exchange_weak(semaphore->word->host, &current,
                                            stored, memory_order_release,
                                            memory_order_relaxed)) {
  }
  weft_semaphore_publish_value(base, value);
  return WEFT_OK;
}

void weft_cuda_semaphore_restore_failure(weft_cuda_semaphore_t* semaphore) {
  uint64_t value = 0;
  if (semaphore->word && weft_semaphore_peek(&semaphore->base, &value)) {
    weft_atomic_store(semaphore->word->host, WEFT_CUDA_WORD_FAILURE_VALUE,
                      memory_order_release);
  }
}

static void weft_cuda_semaphore_fail(weft_semaphore_t* base) {
  weft_cuda_semaphore_t* semaphore = (weft_cuda_semaphore_t*)base;
  // Releases every stream waiting on the word (a GPU write still in flight
  // may move it back: weft_cuda_semaphore_restore_failure stores it again
  // when that op completes).
  weft_cuda_semaphore_restore_failure(semaphore);
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
  if (weft_semaphore_vtable(semaphore) != &kWeftCudaSemaphoreVtable &&
      weft_semaphore_vtable(semaphore) != &kWeftCudaWordSemaphoreVtable) {
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

static weft_status_t weft_cuda_semaphore_add_device_timepoint(
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

static weft_cuda_event_t* weft_cuda_semaphore_find_device_timepoint(
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

weft_status_t weft_cuda_semaphore_note_issued(weft_cuda_semaphore_t* semaphore,
                                              uint64_t value, CUstream stream,
                                              weft_cuda_event_t* event) {
  if (!semaphore->word) {
    return weft_cuda_semaphore_add_device_timepoint(semaphore, value, event);
  }
  weft_slim_mutex_lock(&semaphore->timepoint_mutex);
  if (value >= semaphore->issued_value) {
    semaphore->issued_value = value;
    semaphore->issued_stream = stream;
  }
  weft_slim_mutex_unlock(&semaphore->timepoint_mutex);
  return WEFT_OK;
}

bool weft_cuda_semaphore_find_stream_wait(weft_cuda_semaphore_t* semaphore,
                                          uint64_t value, CUstream stream,
                                          weft_cuda_stream_wait_t* out_wait) {
  out_wait->event = NULL;
  out_wait->word = 0;
  out_wait->value = value;
  if (!semaphore->word) {
    weft_cuda_event_t* event =
        weft_cuda_semaphore_find_device_timepoint(semaphore, value);
    if (!event) return false;
    if (event->stream == stream) {
      weft_cuda_event_release(event);  // already behind it in order
    } else {
      out_wait->event = event;
    }
    return true;
  }
  if (value >= WEFT_CUDA_WORD_FAILURE_VALUE) return false;
  weft_slim_mutex_lock(&semaphore->timepoint_mutex);
  const bool issued = semaphore->issued_value >= value;
  const bool behind = issued && semaphore->issued_stream == stream;
  weft_slim_mutex_unlock(&semaphore->timepoint_mutex);
  if (issued && !behind) out_wait->word = semaphore->word->device;
  return issued;
}
