// weft: slim mutex (futex-based, one word, no allocation).
#ifndef WEFT_BASE_MUTEX_H_
#define WEFT_BASE_MUTEX_H_

#include <stdbool.h>

#include "base/atomics.h"

// States: 0 unlocked, 1 locked, 2 locked with possible waiters.
typedef struct weft_slim_mutex_t {
  weft_atomic_uint32_t state;
} weft_slim_mutex_t;

#define WEFT_SLIM_MUTEX_INITIALIZER {0}

void weft_slim_mutex_initialize(weft_slim_mutex_t* mutex);
void weft_slim_mutex_deinitialize(weft_slim_mutex_t* mutex);
void weft_slim_mutex_lock(weft_slim_mutex_t* mutex);
bool weft_slim_mutex_try_lock(weft_slim_mutex_t* mutex);
void weft_slim_mutex_unlock(weft_slim_mutex_t* mutex);

#endif  // WEFT_BASE_MUTEX_H_
