// weft: block pools and arenas (see src/base/arena.h).

#include "base/arena.h"

#include <assert.h>
#include <stdint.h>
#include <string.h>

// Every allocation is aligned to this many bytes.
#define WEFT_ARENA_ALIGNMENT 16

// A block header, padded so the data after it keeps WEFT_ARENA_ALIGNMENT
// (the allocator returns max_align_t-aligned memory).
struct weft_arena_block_t {
  weft_arena_block_t* next;
  _Alignas(WEFT_ARENA_ALIGNMENT) unsigned char data[];
};

static_assert(sizeof(weft_arena_block_t) % WEFT_ARENA_ALIGNMENT == 0,
              "arena block header must keep data aligned");

static size_t weft_arena_align(size_t value) {
  return (value + (WEFT_ARENA_ALIGNMENT - 1)) &
         ~(size_t)(WEFT_ARENA_ALIGNMENT - 1);
}

//===----------------------------------------------------------------------===//
// Block pool
//===----------------------------------------------------------------------===//

void weft_block_pool_initialize(size_t block_size, weft_allocator_t allocator,
                                weft_block_pool_t* out_pool) {
  out_pool->allocator = allocator;
  out_pool->block_size =
      weft_arena_align(block_size > 0 ? block_size : WEFT_ARENA_ALIGNMENT);
  weft_slim_mutex_initialize(&out_pool->mutex);
  out_pool->free_blocks = NULL;
}

void weft_block_pool_deinitialize(weft_block_pool_t* pool) {
  weft_arena_block_t* block = pool->free_blocks;
  pool->free_blocks = NULL;
  while (block) {
    weft_arena_block_t* next = block->next;
    weft_allocator_free(pool->allocator, block);
    block = next;
  }
  weft_slim_mutex_deinitialize(&pool->mutex);
}

weft_status_t weft_block_pool_acquire(weft_block_pool_t* pool,
                                      weft_arena_block_t** out_block) {
  weft_status_t status = WEFT_OK;
  weft_slim_mutex_lock(&pool->mutex);
  weft_arena_block_t* block = pool->free_blocks;
  if (block) pool->free_blocks = block->next;
  weft_slim_mutex_unlock(&pool->mutex);
  if (!block) {
    status = weft_allocator_malloc_uninitialized(
        pool->allocator, sizeof(weft_arena_block_t) + pool->block_size,
        (void**)&block);
    if (!weft_status_is_ok(status)) {
      status = weft_status_annotate(
          status, "block_pool_acquire: allocating a block of %zu bytes",
          pool->block_size);
    }
  }
  if (block) {
    assert(((uintptr_t)block->data & (WEFT_ARENA_ALIGNMENT - 1)) == 0);
    block->next = NULL;
  }
  *out_block = block;
  return status;
}

void weft_block_pool_release(weft_block_pool_t* pool,
                             weft_arena_block_t* block) {
  weft_slim_mutex_lock(&pool->mutex);
  block->next = pool->free_blocks;
  pool->free_blocks = block;
  weft_slim_mutex_unlock(&pool->mutex);
}

void* weft_arena_block_data(weft_arena_block_t* block) { return block->data; }

//===----------------------------------------------------------------------===//
// Arena
//===----------------------------------------------------------------------===//

void weft_arena_initialize(weft_block_pool_t* pool, weft_arena_t* out_arena) {
  out_arena->pool = pool;
  out_arena->blocks = NULL;
  out_arena->large_blocks = NULL;
  out_arena->block_offset = 0;
}

void weft_arena_reset(weft_arena_t* arena) {
  weft_arena_block_t* block = arena->blocks;
  while (block) {
    weft_arena_block_t* next = block->next;
    weft_block_pool_release(arena->pool, block);
    block = next;
  }
  block = arena->large_blocks;
  while (block) {
    weft_arena_block_t* next = block->next;
    weft_allocator_free(arena->pool->allocator, block);
    block = next;
  }
  arena->blocks = NULL;
  arena->large_blocks = NULL;
  arena->block_offset = 0;
}

void weft_arena_deinitialize(weft_arena_t* arena) { weft_arena_reset(arena); }

weft_status_t weft_arena_allocate(weft_arena_t* arena, size_t byte_length,
                                  void** out_ptr) {
  weft_status_t status = WEFT_OK;
  void* ptr = NULL;
  size_t block_size = arena->pool->block_size;
  size_t aligned_length = weft_arena_align(byte_length);
  if (byte_length == 0) {
    // Nothing to allocate (as with weft_allocator_malloc).
  } else if (aligned_length < byte_length || aligned_length > block_size) {
    // Oversized (or so large that aligning overflowed): its own allocation.
    weft_arena_block_t* block = NULL;
    size_t total_length = 0;
    if (__builtin_add_overflow(sizeof(weft_arena_block_t), byte_length,
                               &total_length)) {
      status = WEFT_STATUS(RESOURCE_EXHAUSTED,
                           "arena_allocate: %zu bytes is too large",
                           byte_length);
    } else {
      status = weft_allocator_malloc(arena->pool->allocator, total_length,
                                     (void**)&block);
    }
    if (weft_status_is_ok(status)) {
      block->next = arena->large_blocks;
      arena->large_blocks = block;
      ptr = block->data;
    } else {
      status = weft_status_annotate(
          status, "arena_allocate: oversized allocation of %zu bytes",
          byte_length);
    }
  } else {
    if (!arena->blocks || block_size - arena->block_offset < aligned_length) {
      weft_arena_block_t* block = NULL;
      status = weft_block_pool_acquire(arena->pool, &block);
      if (weft_status_is_ok(status)) {
        block->next = arena->blocks;
        arena->blocks = block;
        arena->block_offset = 0;
      } else {
        status = weft_status_annotate(
            status, "arena_allocate: allocation of %zu bytes", byte_length);
      }
    }
    if (weft_status_is_ok(status)) {
      ptr = arena->blocks->data + arena->block_offset;
      arena->block_offset += aligned_length;
      memset(ptr, 0, byte_length);
    }
  }
  *out_ptr = ptr;
  return status;
}
