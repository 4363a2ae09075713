// weft: transient buffers for queue-ordered allocation (alloca/dealloca).
//
// weft_device_queue_alloca returns a buffer handle at once; its memory is
// committed when the alloca operation runs and decommitted when the
// matching dealloca runs. The lifecycle is one way:
//
//   RESERVED --commit--> COMMITTED --decommit--> DECOMMITTED
//
// Mapping outside COMMITTED fails with FAILED_PRECONDITION:
//   "transient buffer (4096 bytes) used before its alloca ran"
//   "transient buffer (4096 bytes) used after its dealloca ran"
//
// Threading: commit and decommit are called by whichever thread runs the
// queue operation; map may run on any other thread ordered after the commit
// by a semaphore (the state is published with release/acquire atomics, so
// that ordering is also visible to TSan). Mapping concurrently with
// decommit is a use-after-free in the program, as with any buffer.
#ifndef WEFT_HAL_LOCAL_TRANSIENT_BUFFER_H_
#define WEFT_HAL_LOCAL_TRANSIENT_BUFFER_H_

#include <stdbool.h>

#include "weft/buffer.h"

// Creates a transient buffer of |byte_length| bytes with no memory yet.
// The object is allocated from |allocator|, as is the memory at commit.
weft_status_t weft_transient_buffer_create(weft_allocator_t allocator,
                                           weft_buffer_params_t params,
                                           weft_device_size_t byte_length,
                                           weft_buffer_t** out_buffer);

// Allocates the memory (64-byte aligned, zeroed). RESOURCE_EXHAUSTED when
// the allocator fails (the buffer stays RESERVED and commit may be
// retried); FAILED_PRECONDITION when already committed or decommitted.
// |buffer| must be a root transient buffer (not a subspan of one).
weft_status_t weft_transient_buffer_commit(weft_buffer_t* buffer);

// Frees the memory. FAILED_PRECONDITION unless committed; the message says
// whether the alloca has not run yet or the dealloca already ran.
weft_status_t weft_transient_buffer_decommit(weft_buffer_t* buffer);

// True when |buffer| (or the buffer it is a subspan of) is transient.
bool weft_buffer_is_transient(const weft_buffer_t* buffer);

// True when |buffer| (or its allocated buffer) is transient and committed.
bool weft_transient_buffer_is_committed(const weft_buffer_t* buffer);

#endif  // WEFT_HAL_LOCAL_TRANSIENT_BUFFER_H_
