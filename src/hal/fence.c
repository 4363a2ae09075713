// weft: fences, sets of (semaphore, value) deduplicated by semaphore.
//
// Entries live in two parallel arrays carved from one allocation so that
// weft_fence_as_list is a view with no copying. Lookups are linear: fences
// hold a handful of semaphores.
#include "weft/fence.h"

#include <string.h>

#include "base/arguments.h"
#include "hal/resource.h"
#include "hal/semaphore_impl.h"

typedef struct weft_fence_vtable_t {
  // Must be first (see resource.h).
  void (*destroy)(weft_fence_t* fence);
} weft_fence_vtable_t;

struct weft_fence_t {
  weft_resource_t resource;
  weft_allocator_t allocator;
  uint32_t count;
  uint32_t capacity;
  // |capacity| retained semaphores and their values: the inline entry
  // below while |capacity| is 1 (most fences name one timepoint, and a VM
  // program parked on thousands of them pays for one allocation each), then
  // one heap allocation holding the values followed by the pointers.
  weft_semaphore_t** semaphores;
  uint64_t* values;
  weft_semaphore_t* inline_semaphore;
  uint64_t inline_value;
};

_Static_assert(offsetof(weft_fence_t, resource) == 0,
               "weft_fence_t must start with its weft_resource_t");

static void weft_fence_destroy(weft_fence_t* fence);

static const weft_fence_vtable_t weft_fence_vtable = {
    .destroy = weft_fence_destroy,
};

// Grows the entry storage to hold at least |capacity| entries. On failure
// the fence is unchanged.
static weft_status_t weft_fence_reserve(weft_fence_t* fence,
                                        uint32_t capacity) {
  weft_status_t status = WEFT_OK;
  if (capacity > fence->capacity) {
    uint32_t new_capacity = fence->capacity < 4 ? 4 : fence->capacity;
    while (new_capacity < capacity) {
      new_capacity = new_capacity > UINT32_MAX / 2 ? capacity
                                                    : new_capacity * 2;
    }
    void* storage = NULL;
    status = weft_allocator_malloc_array(
        fence->allocator, new_capacity,
        sizeof(weft_semaphore_t*) + sizeof(uint64_t), &storage);
    if (weft_status_is_ok(status)) {
      // Values first in memory (8-byte aligned), then the pointers.
      uint64_t* values = (uint64_t*)storage;
      weft_semaphore_t** semaphores =
          (weft_semaphore_t**)(values + new_capacity);
      if (fence->count) {
        memcpy(values, fence->values, fence->count * sizeof(*values));
        memcpy(semaphores, fence->semaphores,
               fence->count * sizeof(*semaphores));
      }
      if (fence->values != &fence->inline_value) {
        weft_allocator_free(fence->allocator, fence->values);
      }
      fence->values = values;
      fence->semaphores = semaphores;
      fence->capacity = new_capacity;
    }
  }
  return status;
}

weft_status_t weft_fence_create(uint32_t capacity, weft_allocator_t allocator,
                                weft_fence_t** out_fence) {
  if (out_fence) *out_fence = NULL;
  weft_fence_t* fence = NULL;
  weft_status_t status = weft_arguments_require(
      __func__, "out_fence", (const void* const[]){out_fence}, 1);
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc(allocator, sizeof(*fence), (void**)&fence);
  }
  if (weft_status_is_ok(status)) {
    weft_resource_initialize(WEFT_RESOURCE_TYPE_FENCE, &weft_fence_vtable,
                             &fence->resource);
    fence->allocator = allocator;
    fence->count = 0;
    fence->capacity = 1;
    fence->semaphores = &fence->inline_semaphore;
    fence->values = &fence->inline_value;
    if (capacity > 1) status = weft_fence_reserve(fence, capacity);
    if (weft_status_is_ok(status)) {
      *out_fence = fence;
    } else {
      weft_fence_release(fence);
    }
  }
  return status;
}

weft_status_t weft_fence_create_at(weft_semaphore_t* semaphore, uint64_t value,
                                   weft_allocator_t allocator,
                                   weft_fence_t** out_fence) {
  if (out_fence) *out_fence = NULL;
  weft_fence_t* fence = NULL;
  weft_status_t status =
      weft_arguments_require(__func__, "semaphore,out_fence",
                             (const void* const[]){semaphore, out_fence}, 2);
  if (weft_status_is_ok(status)) {
    status = weft_fence_create(1, allocator, &fence);
  }
  if (weft_status_is_ok(status)) {
    status = weft_fence_insert(fence, semaphore, value);
  }
  if (weft_status_is_ok(status)) {
    *out_fence = fence;
  } else {
    weft_fence_release(fence);
  }
  return status;
}

weft_status_t weft_fence_create_from_list(weft_semaphore_list_t list,
                                          weft_allocator_t allocator,
                                          weft_fence_t** out_fence) {
  if (out_fence) *out_fence = NULL;
  weft_fence_t* fence = NULL;
  weft_status_t status = weft_arguments_require(
      __func__, "out_fence", (const void* const[]){out_fence}, 1);
  if (weft_status_is_ok(status)) {
    status = weft_semaphore_list_check(__func__, "list", list);
  }
  if (weft_status_is_ok(status)) {
    status = weft_fence_create(list.count, allocator, &fence);
  }
  for (uint32_t i = 0; weft_status_is_ok(status) && i < list.count; ++i) {
    status = weft_fence_insert(fence, list.semaphores[i], list.values[i]);
  }
  if (weft_status_is_ok(status)) {
    *out_fence = fence;
  } else {
    weft_fence_release(fence);
  }
  return status;
}

static void weft_fence_destroy(weft_fence_t* fence) {
  for (uint32_t i = 0; i < fence->count; ++i) {
    weft_semaphore_release(fence->semaphores[i]);
  }
  if (fence->values != &fence->inline_value) {
    weft_allocator_free(fence->allocator, fence->values);
  }
  weft_allocator_free(fence->allocator, fence);
}

void weft_fence_retain(weft_fence_t* fence) { weft_resource_retain(fence); }

void weft_fence_release(weft_fence_t* fence) { weft_resource_release(fence); }

weft_status_t weft_fence_insert(weft_fence_t* fence,
                                weft_semaphore_t* semaphore, uint64_t value) {
  weft_status_t status =
      weft_arguments_require(__func__, "fence,semaphore",
                             (const void* const[]){fence, semaphore}, 2);
  // A failed check counts as found: nothing is added.
  bool found = !weft_status_is_ok(status);
  for (uint32_t i = 0; !found && i < fence->count; ++i) {
    if (fence->semaphores[i] == semaphore) {
      if (value > fence->values[i]) fence->values[i] = value;
      found = true;
    }
  }
  if (!found) {
    if (fence->count == UINT32_MAX) {
      status = WEFT_STATUS(RESOURCE_EXHAUSTED,
                           "fence_insert: fence already holds %u semaphores",
                           (unsigned)fence->count);
    } else {
      status = weft_fence_reserve(fence, fence->count + 1);
    }
    if (weft_status_is_ok(status)) {
      weft_semaphore_retain(semaphore);
      fence->semaphores[fence->count] = semaphore;
      fence->values[fence->count] = value;
      ++fence->count;
    }
  }
  return status;
}

weft_status_t weft_fence_extend(weft_fence_t* fence, weft_fence_t* other) {
  weft_status_t status = weft_arguments_require(
      __func__, "fence", (const void* const[]){fence}, 1);
  if (weft_status_is_ok(status) && other && other != fence) {
    for (uint32_t i = 0; i < other->count && weft_status_is_ok(status); ++i) {
      status = weft_fence_insert(fence, other->semaphores[i], other->values[i]);
    }
  }
  return status;
}

weft_status_t weft_fence_join(uint32_t count, weft_fence_t* const* fences,
                              weft_allocator_t allocator,
                              weft_fence_t** out_fence) {
  if (out_fence) *out_fence = NULL;
  weft_status_t status = weft_arguments_require(
      __func__, "fences,out_fence",
      (const void* const[]){count ? (const void*)fences : "", out_fence}, 2);
  uint32_t total = 0;
  for (uint32_t i = 0; weft_status_is_ok(status) && i < count; ++i) {
    uint32_t n = fences[i] ? fences[i]->count : 0;
    total = n > UINT32_MAX - total ? UINT32_MAX : total + n;
  }
  if (weft_status_is_ok(status) && total) {
    weft_fence_t* fence = NULL;
    status = weft_fence_create(total, allocator, &fence);
    for (uint32_t i = 0; i < count && weft_status_is_ok(status); ++i) {
      status = weft_fence_extend(fence, fences[i]);
    }
    if (weft_status_is_ok(status)) {
      *out_fence = fence;
    } else {
      weft_fence_release(fence);
    }
  }
  return status;
}

uint32_t weft_fence_count(const weft_fence_t* fence) {
  return fence ? fence->count : 0;
}

weft_semaphore_list_t weft_fence_as_list(weft_fence_t* fence) {
  weft_semaphore_list_t list = weft_semaphore_list_empty();
  if (fence) {
    list.count = fence->count;
    list.semaphores = fence->semaphores;
    list.values = fence->values;
  }
  return list;
}

weft_status_t weft_fence_signal(weft_fence_t* fence) {
  weft_status_t status = weft_arguments_require(
      __func__, "fence", (const void* const[]){fence}, 1);
  if (weft_status_is_ok(status)) {
    status = weft_semaphore_list_signal(weft_fence_as_list(fence));
  }
  return status;
}

void weft_fence_fail(weft_fence_t* fence, weft_status_t status) {
  weft_semaphore_list_fail(weft_fence_as_list(fence), status);
}

weft_status_t weft_fence_query(weft_fence_t* fence) {
  weft_status_t status = WEFT_OK;
  bool deferred = false;
  for (uint32_t i = 0; fence && i < fence->count && weft_status_is_ok(status);
       ++i) {
    uint64_t value = 0;
    status = weft_semaphore_query(fence->semaphores[i], &value);
    if (weft_status_is_ok(status) && value < fence->values[i]) {
      deferred = true;
    }
  }
  if (weft_status_is_ok(status) && deferred) {
    status = weft_status_from_code(WEFT_STATUS_DEFERRED);
  }
  return status;
}

weft_status_t weft_fence_wait(weft_fence_t* fence, weft_timeout_t timeout) {
  return weft_semaphore_list_wait(WEFT_WAIT_MODE_ALL,
                                  weft_fence_as_list(fence), timeout);
}
