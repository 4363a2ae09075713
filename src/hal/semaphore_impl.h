// weft: semaphore helpers private to the HAL and its drivers.
#ifndef WEFT_HAL_SEMAPHORE_IMPL_H_
#define WEFT_HAL_SEMAPHORE_IMPL_H_

#include <stddef.h>

#include "weft/semaphore.h"

// Room for a semaphore's label in messages; longer names are truncated.
#define WEFT_SEMAPHORE_LABEL_CAPACITY 96

// Writes how messages name |semaphore| into |buffer|: "'name'", or its
// address when it has no name.
void weft_semaphore_label(weft_semaphore_t* semaphore, char* buffer,
                          size_t capacity);

// OK when |list| is usable: a non-zero count needs both arrays and a
// semaphore in every entry. Otherwise INVALID_ARGUMENT naming |function|
// and the list as |name| ("wait_list"), e.g. "weft_device_queue_fill:
// wait_list has 2 entries but wait_list.values is NULL".
weft_status_t weft_semaphore_list_check(const char* function, const char* name,
                                        weft_semaphore_list_t list);

#endif  // WEFT_HAL_SEMAPHORE_IMPL_H_
