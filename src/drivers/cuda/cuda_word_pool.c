// weft cuda driver: the memory-word pool (see cuda_word_pool.h).
#include "drivers/cuda/cuda_word_pool.h"

#define WEFT_CUDA_WORD_PAGE_SIZE 4096u
#define WEFT_CUDA_WORD_STRIDE 64u
#define WEFT_CUDA_WORDS_PER_PAGE \
  (WEFT_CUDA_WORD_PAGE_SIZE / WEFT_CUDA_WORD_STRIDE)

// One pinned page and the descriptors of its words.
typedef struct weft_cuda_word_page_t {
  struct weft_cuda_word_page_t* next;
  void* host;  // cuMemHostAlloc
  weft_cuda_word_t words[WEFT_CUDA_WORDS_PER_PAGE];
} weft_cuda_word_page_t;

struct weft_cuda_word_pool_t {
  weft_cuda_event_pool_t* event_pool;  // retained: symbols and context
  weft_allocator_t allocator;
  weft_slim_mutex_t mutex;
  weft_cuda_word_page_t* pages;  // guarded by |mutex|
  weft_cuda_word_t* free_head;   // guarded by |mutex|
  // One for the device plus one per word out of the pool.
  weft_atomic_uint32_t ref_count;
};

weft_status_t weft_cuda_word_pool_create(weft_cuda_event_pool_t* event_pool,
                                         weft_allocator_t allocator,
                                         weft_cuda_word_pool_t** out_pool) {
  *out_pool = NULL;
  weft_cuda_word_pool_t* pool = NULL;
  weft_status_t status =
      weft_allocator_malloc(allocator, sizeof(*pool), (void**)&pool);
  if (weft_status_is_ok(status)) {
    weft_cuda_event_pool_retain(event_pool);
    pool->event_pool = event_pool;
    pool->allocator = allocator;
    weft_slim_mutex_initialize(&pool->mutex);
    pool->pages = NULL;
    pool->free_head = NULL;
    atomic_init(&pool->ref_count, 1u);
    *out_pool = pool;
  }
  return status;
}

void weft_cuda_word_pool_release(weft_cuda_word_pool_t* pool) {
  if (!pool) return;
  // Acq_rel: every word's return happens before the teardown.
  if (weft_atomic_fetch_sub(&pool->ref_count, 1u, memory_order_acq_rel) !=
      1u) {
    return;
  }
  const weft_cuda_symbols_t* symbols = pool->event_pool->symbols;
  const bool pushed =
      symbols->cuCtxPushCurrent(pool->event_pool->context) == CUDA_SUCCESS;
  weft_cuda_word_page_t* page = pool->pages;
  while (page) {
    weft_cuda_word_page_t* next = page->next;
    if (pushed) symbols->cuMemFreeHost(page->host);
    weft_allocator_free(pool->allocator, page);
    page = next;
  }
  if (pushed) {
    CUcontext popped = NULL;
    symbols->cuCtxPopCurrent(&popped);
  }
  weft_cuda_event_pool_release(pool->event_pool);
  weft_slim_mutex_deinitialize(&pool->mutex);
  weft_allocator_free(pool->allocator, pool);
}

// Makes a page and puts its words on the free list. Called with the mutex
// held.
static weft_status_t weft_cuda_word_pool_grow(weft_cuda_word_pool_t* pool) {
  const weft_cuda_symbols_t* symbols = pool->event_pool->symbols;
  weft_cuda_word_page_t* page = NULL;
  weft_status_t status =
      weft_allocator_malloc(pool->allocator, sizeof(*page), (void**)&page);
  if (!weft_status_is_ok(status)) return status;
  page->host = NULL;
  status = WEFT_CUDA_CALL(symbols,
                          cuCtxPushCurrent(pool->event_pool->context));
  if (weft_status_is_ok(status)) {
    status = WEFT_CUDA_CALL(
        symbols, cuMemHostAlloc(&page->host, WEFT_CUDA_WORD_PAGE_SIZE,
                                CU_MEMHOSTALLOC_PORTABLE |
                                    CU_MEMHOSTALLOC_DEVICEMAP));
    CUdeviceptr device = 0;
    if (weft_status_is_ok(status)) {
      status = WEFT_CUDA_CALL(
          symbols, cuMemHostGetDevicePointer(&device, page->host, 0));
      if (!weft_status_is_ok(status)) {
        symbols->cuMemFreeHost(page->host);
        page->host = NULL;
      }
    }
    CUcontext popped = NULL;
    symbols->cuCtxPopCurrent(&popped);
    for (uint32_t i = 0; weft_status_is_ok(status) &&
                         i < WEFT_CUDA_WORDS_PER_PAGE; ++i) {
      weft_cuda_word_t* word = &page->words[i];
      word->pool = pool;
      word->host = (weft_atomic_uint64_t*)((uint8_t*)page->host +
                                           i * WEFT_CUDA_WORD_STRIDE);
      word->device = device + i * WEFT_CUDA_WORD_STRIDE;
      word->next_free = pool->free_head;
      pool->free_head = word;
    }
  }
  if (!weft_status_is_ok(status)) {
    weft_allocator_free(pool->allocator, page);
    return status;
  }
  page->next = pool->pages;
  pool->pages = page;
  return WEFT_OK;
}

weft_status_t weft_cuda_word_acquire(weft_cuda_word_pool_t* pool,
                                     uint64_t value,
                                     weft_cuda_word_t** out_word) {
  *out_word = NULL;
  weft_status_t status = WEFT_OK;
  weft_slim_mutex_lock(&pool->mutex);
  if (!pool->free_head) status = weft_cuda_word_pool_grow(pool);
  weft_cuda_word_t* word = NULL;
  if (weft_status_is_ok(status)) {
    word = pool->free_head;
    pool->free_head = word->next_free;
    word->next_free = NULL;
  }
  weft_slim_mutex_unlock(&pool->mutex);
  if (!word) return status;
  weft_atomic_fetch_add(&pool->ref_count, 1u, memory_order_relaxed);
  weft_atomic_store(word->host, value, memory_order_release);
  *out_word = word;
  return WEFT_OK;
}

void weft_cuda_word_release(weft_cuda_word_t* word) {
  if (!word) return;
  weft_cuda_word_pool_t* pool = word->pool;
  weft_slim_mutex_lock(&pool->mutex);
  word->next_free = pool->free_head;
  pool->free_head = word;
  weft_slim_mutex_unlock(&pool->mutex);
  weft_cuda_word_pool_release(pool);
}
