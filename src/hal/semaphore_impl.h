// weft: semaphore helpers private to the HAL and its drivers.
#ifndef WEFT_HAL_SEMAPHORE_IMPL_H_
#define WEFT_HAL_SEMAPHORE_IMPL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/semaphore.h"

// Room for a semaphore's label in messages; longer names are truncated.
#define WEFT_SEMAPHORE_LABEL_CAPACITY 96

// Writes how messages name |semaphore| into |buffer|: "'name'", or its
// address when it has no name.
void weft_semaphore_label(weft_semaphore_t* semaphore, char* buffer,
                          size_t capacity);

// Reads the current value into |out_value| and returns whether the
// semaphore has failed: what a submit-time check needs, without a status.
bool weft_semaphore_peek(weft_semaphore_t* semaphore, uint64_t* out_value);

// The INVALID_ARGUMENT of a list weft_semaphore_list_check rejects. Out of
// line: the error path.
weft_status_t weft_semaphore_list_error(const char* function, const char* name,
                                        weft_semaphore_list_t list);

// OK when |list| is usable: a non-zero count needs both arrays and a
// semaphore in every entry. Otherwise INVALID_ARGUMENT naming |function|
// and the list as |name| ("wait_list"), e.g. "weft_device_queue_fill:
// wait_list has 2 entries but wait_list.values is NULL". Inline: every
// queue operation checks two lists.
static inline weft_status_t weft_semaphore_list_check(
    const char* function, const char* name, weft_semaphore_list_t list) {
  bool usable = list.count == 0 || (list.semaphores && list.values);
  for (uint32_t i = 0; usable && i < list.count; ++i) {
    usable = list.semaphores[i] != NULL;
  }
  return usable ? WEFT_OK : weft_semaphore_list_error(function, name, list);
}

#endif  // WEFT_HAL_SEMAPHORE_IMPL_H_
