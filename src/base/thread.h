// weft: threads with names and affinity.
#ifndef WEFT_BASE_THREAD_H_
#define WEFT_BASE_THREAD_H_

#include <stdint.h>

#include "weft/allocator.h"
#include "weft/status.h"

typedef struct weft_thread_t weft_thread_t;

// Thread entry point; the return value is discarded.
typedef int (*weft_thread_entry_fn_t)(void* user_data);

typedef struct weft_thread_params_t {
  // Thread name (truncated to what the OS allows); may be NULL.
  const char* name;
  // CPU to pin the thread to, or -1 for no affinity. Ignored when
  // |affinity_word_count| is non-zero.
  int32_t cpu;
  // A set of CPUs to pin the thread to, as raw 64-bit words: bit i of the
  // set is bit (i % 64) of affinity_words[i / 64] (the layout of
  // src/task/affinity_set.h, which base does not depend on). Any number of
  // CPUs, past 1024 included. Borrowed for the duration of the create call.
  // |affinity_word_count| 0 means no set (then |cpu| applies); a set with
  // no bit set is INVALID_ARGUMENT.
  const uint64_t* affinity_words;
  uint32_t affinity_word_count;
} weft_thread_params_t;

// Creates and starts a thread running |entry(user_data)|, named and pinned
// as |params| says (NULL: unnamed, no affinity). Pinning to CPUs the process
// may not use is INVALID_ARGUMENT naming them.
weft_status_t weft_thread_create(weft_thread_entry_fn_t entry, void* user_data,
                                 const weft_thread_params_t* params,
                                 weft_allocator_t allocator,
                                 weft_thread_t** out_thread);

// Joins the thread and frees it. NULL is a no-op.
void weft_thread_join(weft_thread_t* thread);

// Returns an id for the calling thread (the kernel tid on Linux).
uint64_t weft_thread_current_id(void);

// Yields the processor to another runnable thread.
void weft_thread_yield(void);

// Returns the number of CPUs this process may run on (affinity mask).
uint32_t weft_thread_available_cpu_count(void);

#endif  // WEFT_BASE_THREAD_H_
