// weft: the life of a queue-ordered buffer's memory (see
// queue_ordered_state.h).
#include "hal/queue_ordered_state.h"

#include <inttypes.h>

enum {
  WEFT_QUEUE_ORDERED_RESERVED = 0,
  // A commit is allocating (still "before its alloca ran" to readers).
  WEFT_QUEUE_ORDERED_COMMITTING = 1,
  WEFT_QUEUE_ORDERED_COMMITTED = 2,
  // The dealloca ran; the memory is gone for good.
  WEFT_QUEUE_ORDERED_DECOMMITTED = 3,
};

void weft_queue_ordered_state_initialize(weft_queue_ordered_state_t* state) {
  atomic_init(&state->value, WEFT_QUEUE_ORDERED_RESERVED);
}

static uint32_t weft_queue_ordered_state_load(
    const weft_queue_ordered_state_t* state) {
  // Acquire: pairs with end_commit's release, so the memory is visible.
  return weft_atomic_load(&((weft_queue_ordered_state_t*)state)->value,
                          memory_order_acquire);
}

bool weft_queue_ordered_state_is_committed(
    const weft_queue_ordered_state_t* state) {
  return weft_queue_ordered_state_load(state) == WEFT_QUEUE_ORDERED_COMMITTED;
}

// Why a buffer in |value| has no memory.
static weft_status_t weft_queue_ordered_state_missing(
    uint32_t value, weft_device_size_t byte_length) {
  return WEFT_STATUS(FAILED_PRECONDITION,
                     "transient buffer (%" PRIu64 " bytes) used %s",
                     byte_length,
                     value == WEFT_QUEUE_ORDERED_DECOMMITTED
                         ? "after its dealloca ran"
                         : "before its alloca ran");
}

weft_status_t weft_queue_ordered_state_check(
    const weft_queue_ordered_state_t* state, weft_device_size_t byte_length) {
  const uint32_t value = weft_queue_ordered_state_load(state);
  return value == WEFT_QUEUE_ORDERED_COMMITTED
             ? WEFT_OK
             : weft_queue_ordered_state_missing(value, byte_length);
}

weft_status_t weft_queue_ordered_state_begin_commit(
    weft_queue_ordered_state_t* state, weft_device_size_t byte_length) {
  // Relaxed: nothing is published by RESERVED or COMMITTING.
  uint32_t expected = WEFT_QUEUE_ORDERED_RESERVED;
  if (weft_atomic_compare_exchange_strong(
          &state->value, &expected, WEFT_QUEUE_ORDERED_COMMITTING,
          memory_order_relaxed, memory_order_relaxed)) {
    return WEFT_OK;
  }
  return WEFT_STATUS(FAILED_PRECONDITION,
                     "transient buffer (%" PRIu64 " bytes) is already %s",
                     byte_length,
                     expected == WEFT_QUEUE_ORDERED_DECOMMITTED
                         ? "decommitted"
                         : "committed");
}

void weft_queue_ordered_state_end_commit(weft_queue_ordered_state_t* state,
                                         bool committed) {
  // Release: publishes the memory to threads that acquire the state; back
  // to RESERVED publishes nothing.
  weft_atomic_store(
      &state->value,
      committed ? WEFT_QUEUE_ORDERED_COMMITTED : WEFT_QUEUE_ORDERED_RESERVED,
      committed ? memory_order_release : memory_order_relaxed);
}

weft_status_t weft_queue_ordered_state_decommit(
    weft_queue_ordered_state_t* state, weft_device_size_t byte_length) {
  uint32_t expected = WEFT_QUEUE_ORDERED_COMMITTED;
  // Acquire: the caller frees what commit published.
  if (weft_atomic_compare_exchange_strong(
          &state->value, &expected, WEFT_QUEUE_ORDERED_DECOMMITTED,
          memory_order_acquire, memory_order_relaxed)) {
    return WEFT_OK;
  }
  return weft_queue_ordered_state_missing(expected, byte_length);
}
