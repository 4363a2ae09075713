// weft cuda driver: 64-bit memory words that GPU streams wait on and write.
//
// A memory-word semaphore (cuda_semaphore.h, "semaphores=memory") keeps its
// value in one of these words: pinned host memory mapped into the device
// (cuMemHostAlloc with DEVICEMAP and PORTABLE), so a stream waits on it with
// cuStreamWaitValue64 and writes it with cuStreamWriteValue64 while the
// host reads and writes it directly. Pinned memory comes in pages, so words
// are carved from 4 KiB pages, one word per 64-byte line (a host store and
// a GPU write of two semaphores never share a line), and recycled through a
// free list.
//
// Words outlive their device when a semaphore does, so the pool is
// ref-counted like the event pool it keeps alive (which holds the primary
// context): the device holds one reference and every word out of it
// another; the last release frees the pages.
#ifndef WEFT_DRIVERS_CUDA_CUDA_WORD_POOL_H_
#define WEFT_DRIVERS_CUDA_CUDA_WORD_POOL_H_

#include "base/atomics.h"
#include "base/mutex.h"
#include "drivers/cuda/cuda_event_pool.h"

typedef struct weft_cuda_word_pool_t weft_cuda_word_pool_t;

typedef struct weft_cuda_word_t {
  weft_cuda_word_pool_t* pool;
  weft_atomic_uint64_t* host;  // what the host reads and writes
  CUdeviceptr device;          // what a stream waits on and writes
  struct weft_cuda_word_t* next_free;
} weft_cuda_word_t;

// Creates an empty pool over |event_pool|'s context (retained). One
// reference, the device's.
weft_status_t weft_cuda_word_pool_create(weft_cuda_event_pool_t* event_pool,
                                         weft_allocator_t allocator,
                                         weft_cuda_word_pool_t** out_pool);

// Drops a reference; the last frees the pages (pushing the context on this
// thread) and releases the event pool.
void weft_cuda_word_pool_release(weft_cuda_word_pool_t* pool);

// A word set to |value|, holding a reference on the pool. Makes a page when
// none is free (any thread: the context is pushed here).
weft_status_t weft_cuda_word_acquire(weft_cuda_word_pool_t* pool,
                                     uint64_t value,
                                     weft_cuda_word_t** out_word);

// Gives |word| back to its pool (and its reference on the pool). The caller
// makes sure no stream still waits on it or writes it.
void weft_cuda_word_release(weft_cuda_word_t* word);

#endif  // WEFT_DRIVERS_CUDA_CUDA_WORD_POOL_H_
