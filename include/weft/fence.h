// weft: fences, sets of (semaphore, value) deduplicated by semaphore.
//
// Inserting a semaphore already present keeps the larger value. A fence is
// ref-counted; mutating one after handing it to an API is a misuse.
//
// NULL: pointer arguments are required unless the function's comment says
// "|x| may be NULL" (see "NULL arguments" in weft/status.h).
#ifndef WEFT_FENCE_H_
#define WEFT_FENCE_H_

#include "weft/semaphore.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_fence_t weft_fence_t;

// Creates an empty fence that grows as needed (|capacity| is a hint).
weft_status_t weft_fence_create(uint32_t capacity, weft_allocator_t allocator,
                                weft_fence_t** out_fence);

// Creates a fence holding one (|semaphore|, |value|).
weft_status_t weft_fence_create_at(weft_semaphore_t* semaphore, uint64_t value,
                                   weft_allocator_t allocator,
                                   weft_fence_t** out_fence);

// Creates a fence holding every entry of |list| (the larger value where a
// semaphore appears twice), e.g. a host call's signals it takes over.
weft_status_t weft_fence_create_from_list(weft_semaphore_list_t list,
                                          weft_allocator_t allocator,
                                          weft_fence_t** out_fence);

void weft_fence_retain(weft_fence_t* fence);
void weft_fence_release(weft_fence_t* fence);

// Adds (|semaphore|, |value|), retaining the semaphore; keeps the max value
// if the semaphore is already present.
weft_status_t weft_fence_insert(weft_fence_t* fence,
                                weft_semaphore_t* semaphore, uint64_t value);

// Adds every entry of |other|. |other| may be NULL (empty).
weft_status_t weft_fence_extend(weft_fence_t* fence, weft_fence_t* other);

// Joins |count| fences (NULL entries allowed) into a new one. *out_fence is
// NULL when the join is empty. |fences| may be NULL when |count| is 0.
weft_status_t weft_fence_join(uint32_t count, weft_fence_t* const* fences,
                              weft_allocator_t allocator,
                              weft_fence_t** out_fence);

// Number of distinct semaphores.
uint32_t weft_fence_count(const weft_fence_t* fence);

// A list view of the fence, valid until it is next mutated or released.
weft_semaphore_list_t weft_fence_as_list(weft_fence_t* fence);

// Signals every entry.
weft_status_t weft_fence_signal(weft_fence_t* fence);

// Fails every entry with a clone of |status| (consumed).
void weft_fence_fail(weft_fence_t* fence, weft_status_t status);

// OK when every entry is reached, DEFERRED when some are not yet, or the
// first failure (a clone). |fence| may be NULL (reached).
weft_status_t weft_fence_query(weft_fence_t* fence);

// Waits for every entry (ALL). |fence| may be NULL (reached).
weft_status_t weft_fence_wait(weft_fence_t* fence, weft_timeout_t timeout);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_FENCE_H_
