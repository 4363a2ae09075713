// weft: block pools and arenas for per-submission memory.
//
// A block pool hands out fixed-size blocks and keeps freed ones for reuse
// (thread-safe). An arena bump-allocates from blocks of a pool (or from the
// allocator for oversized requests) and returns everything at reset/deinit.
// Arenas are single-threaded.
#ifndef WEFT_BASE_ARENA_H_
#define WEFT_BASE_ARENA_H_

#include <stddef.h>

#include "base/mutex.h"
#include "weft/allocator.h"
#include "weft/status.h"

typedef struct weft_arena_block_t weft_arena_block_t;

typedef struct weft_block_pool_t {
  weft_allocator_t allocator;
  // Usable bytes per block.
  size_t block_size;
  weft_slim_mutex_t mutex;
  weft_arena_block_t* free_blocks;
} weft_block_pool_t;

void weft_block_pool_initialize(size_t block_size, weft_allocator_t allocator,
                                weft_block_pool_t* out_pool);
// Frees every cached block. All blocks must have been returned.
void weft_block_pool_deinitialize(weft_block_pool_t* pool);

// Takes a block from the pool's free list, or allocates a new one from the
// pool's allocator (RESOURCE_EXHAUSTED on failure). The block's contents are
// not zeroed. Thread-safe.
weft_status_t weft_block_pool_acquire(weft_block_pool_t* pool,
                                      weft_arena_block_t** out_block);

// Returns |block| (from this pool) to the free list for reuse. Thread-safe.
void weft_block_pool_release(weft_block_pool_t* pool,
                             weft_arena_block_t* block);

// Returns the usable memory of |block|: pool->block_size bytes, 16-aligned.
void* weft_arena_block_data(weft_arena_block_t* block);

typedef struct weft_arena_t {
  weft_block_pool_t* pool;
  weft_arena_block_t* blocks;        // pool blocks in use
  weft_arena_block_t* large_blocks;  // oversized allocations
  size_t block_offset;               // bytes used in the head block
} weft_arena_t;

void weft_arena_initialize(weft_block_pool_t* pool, weft_arena_t* out_arena);
// Returns all memory to the pool / allocator.
void weft_arena_deinitialize(weft_arena_t* arena);
// Same as deinitialize, but the arena stays usable.
void weft_arena_reset(weft_arena_t* arena);

// Allocates |byte_length| bytes aligned to 16, zeroed. Lives until reset.
weft_status_t weft_arena_allocate(weft_arena_t* arena, size_t byte_length,
                                  void** out_ptr);

#endif  // WEFT_BASE_ARENA_H_
