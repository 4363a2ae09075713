// weft: thin futex wrappers (Linux). Other platforms would get a file of
// their own (futex_<platform>.c).
#ifndef WEFT_BASE_FUTEX_H_
#define WEFT_BASE_FUTEX_H_

#include <stdbool.h>
#include <stdint.h>

#include "base/atomics.h"
#include "weft/time.h"

// Blocks while *address == expected, until woken or |deadline_ns| passes.
// Returns false on time-out; true otherwise (including spurious wakes).
bool weft_futex_wait(weft_atomic_uint32_t* address, uint32_t expected,
                     weft_time_t deadline_ns);

// Wakes up to |count| waiters blocked on |address| (INT32_MAX for all).
void weft_futex_wake(weft_atomic_uint32_t* address, int32_t count);

#endif  // WEFT_BASE_FUTEX_H_
