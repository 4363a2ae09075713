// weft: allocators (see include/weft/allocator.h).

#include "weft/allocator.h"

#include <inttypes.h>
#include <stdlib.h>

#include "base/arguments.h"

//===----------------------------------------------------------------------===//
// System allocator
//===----------------------------------------------------------------------===//

static weft_status_t weft_allocator_system_ctl(void* self,
                                               weft_allocator_command_t command,
                                               size_t byte_length,
                                               void** inout_ptr) {
  weft_status_t status = WEFT_OK;
  void* result = NULL;
  switch (command) {
    case WEFT_ALLOCATOR_COMMAND_CALLOC:
      result = calloc(1, byte_length);
      break;
    case WEFT_ALLOCATOR_COMMAND_MALLOC:
      result = malloc(byte_length);
      break;
    case WEFT_ALLOCATOR_COMMAND_REALLOC:
      result = realloc(*inout_ptr, byte_length);
      break;
    case WEFT_ALLOCATOR_COMMAND_FREE:
      free(*inout_ptr);
      break;
    default:
      status = WEFT_STATUS(INVALID_ARGUMENT,
                           "system allocator: unknown command %d", (int)command);
      break;
  }
  if (command == WEFT_ALLOCATOR_COMMAND_FREE) {
    *inout_ptr = NULL;
  } else if (result) {
    *inout_ptr = result;
  } else if (weft_status_is_ok(status)) {
    status = WEFT_STATUS(RESOURCE_EXHAUSTED,
                         "system allocator: out of memory allocating %zu bytes",
                         byte_length);
  }
  return status;
}

weft_allocator_t weft_allocator_system(void) {
  weft_allocator_t allocator = {NULL, weft_allocator_system_ctl};
  return allocator;
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

// INVALID_ARGUMENT for an allocator without a ctl function (a zeroed
// weft_allocator_t, or what weft_failing_allocator_initialize returns for
// NULL storage): every object would otherwise crash on its first
// allocation.
static weft_status_t weft_allocator_check(const char* function,
                                          weft_allocator_t allocator) {
  return allocator.ctl ? WEFT_OK
                       : WEFT_STATUS(INVALID_ARGUMENT,
                                     "%s: allocator.ctl is NULL (a zeroed "
                                     "allocator; use weft_allocator_system())",
                                     function);
}

static weft_status_t weft_allocator_allocate(const char* function,
                                             weft_allocator_t allocator,
                                             weft_allocator_command_t command,
                                             size_t byte_length,
                                             void** out_ptr) {
  weft_status_t status = weft_arguments_require(
      function, "out_ptr", (const void* const[]){out_ptr}, 1);
  if (weft_status_is_ok(status)) status = weft_allocator_check(function, allocator);
  void* ptr = NULL;
  if (weft_status_is_ok(status) && byte_length > 0) {
    status = allocator.ctl(allocator.self, command, byte_length, &ptr);
  }
  if (out_ptr) *out_ptr = weft_status_is_ok(status) ? ptr : NULL;
  return status;
}

weft_status_t weft_allocator_malloc(weft_allocator_t allocator,
                                    size_t byte_length, void** out_ptr) {
  return weft_allocator_allocate(__func__, allocator,
                                 WEFT_ALLOCATOR_COMMAND_CALLOC, byte_length,
                                 out_ptr);
}

weft_status_t weft_allocator_malloc_uninitialized(weft_allocator_t allocator,
                                                  size_t byte_length,
                                                  void** out_ptr) {
  return weft_allocator_allocate(__func__, allocator,
                                 WEFT_ALLOCATOR_COMMAND_MALLOC, byte_length,
                                 out_ptr);
}

weft_status_t weft_allocator_realloc(weft_allocator_t allocator,
                                     size_t byte_length, void** inout_ptr) {
  weft_status_t status = weft_arguments_require(
      __func__, "inout_ptr", (const void* const[]){inout_ptr}, 1);
  if (weft_status_is_ok(status)) {
    status = weft_allocator_check(__func__, allocator);
  }
  if (!weft_status_is_ok(status)) {
    // Nothing to resize.
  } else if (byte_length == 0) {
    // Shrinking to nothing frees: realloc(p, 0) is implementation-defined.
    weft_allocator_free(allocator, *inout_ptr);
    *inout_ptr = NULL;
  } else {
    void* ptr = *inout_ptr;
    status = allocator.ctl(allocator.self, WEFT_ALLOCATOR_COMMAND_REALLOC,
                           byte_length, &ptr);
    if (weft_status_is_ok(status)) *inout_ptr = ptr;
  }
  return status;
}

weft_status_t weft_allocator_malloc_array(weft_allocator_t allocator,
                                          size_t count, size_t element_size,
                                          void** out_ptr) {
  weft_status_t status = WEFT_OK;
  size_t byte_length = 0;
  if (__builtin_mul_overflow(count, element_size, &byte_length)) {
    if (out_ptr) *out_ptr = NULL;
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "%s: %zu elements of %zu bytes overflow size_t",
                         __func__, count, element_size);
  } else {
    status = weft_allocator_allocate(__func__, allocator,
                                     WEFT_ALLOCATOR_COMMAND_CALLOC,
                                     byte_length, out_ptr);
  }
  return status;
}

void weft_allocator_free(weft_allocator_t allocator, void* ptr) {
  if (ptr && allocator.ctl) {
    weft_status_ignore(
        allocator.ctl(allocator.self, WEFT_ALLOCATOR_COMMAND_FREE, 0, &ptr));
  }
}

weft_status_t weft_allocator_malloc_aligned(weft_allocator_t allocator,
                                            size_t byte_length,
                                            size_t alignment, void** out_ptr) {
  weft_status_t status = weft_arguments_require(
      __func__, "out_ptr", (const void* const[]){out_ptr}, 1);
  if (!weft_status_is_ok(status)) return status;
  *out_ptr = NULL;
  if (alignment == 0 || (alignment & (alignment - 1)) != 0 ||
      alignment > 4096) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "%s: alignment %zu is not a power of two up to 4096",
                       __func__, alignment);
  }
  if (byte_length == 0) return WEFT_OK;
  // Room to move up to the boundary, and for the allocation's own address
  // in the word before the aligned one (what free_aligned hands back).
  size_t total = 0;
  if (__builtin_add_overflow(byte_length, alignment + sizeof(void*),
                             &total)) {
    return WEFT_STATUS(RESOURCE_EXHAUSTED,
                       "%s: %zu bytes aligned to %zu overflow size_t",
                       __func__, byte_length, alignment);
  }
  void* base = NULL;
  status = weft_allocator_allocate(__func__, allocator,
                                   WEFT_ALLOCATOR_COMMAND_CALLOC, total,
                                   &base);
  if (weft_status_is_ok(status)) {
    uintptr_t aligned = ((uintptr_t)base + sizeof(void*) + alignment - 1) &
                        ~(uintptr_t)(alignment - 1);
    ((void**)aligned)[-1] = base;
    *out_ptr = (void*)aligned;
  }
  return status;
}

void weft_allocator_free_aligned(weft_allocator_t allocator, void* ptr) {
  if (ptr) weft_allocator_free(allocator, ((void**)ptr)[-1]);
}

//===----------------------------------------------------------------------===//
// Failing allocator
//===----------------------------------------------------------------------===//

// The counters are plain int64_t in the public struct (C++ callers include
// it), so they are updated with the compiler's __atomic builtins.
static weft_status_t weft_failing_allocator_ctl(
    void* self, weft_allocator_command_t command, size_t byte_length,
    void** inout_ptr) {
  weft_failing_allocator_t* storage = (weft_failing_allocator_t*)self;
  weft_status_t status = WEFT_OK;
  if (command != WEFT_ALLOCATOR_COMMAND_FREE) {
    // Relaxed: the counter only numbers requests; it orders no other memory.
    int64_t index =
        __atomic_fetch_add(&storage->request_count, 1, __ATOMIC_RELAXED);
    if (storage->fail_at >= 0 && index >= storage->fail_at) {
      // Relaxed: a statistic read after the threads are joined.
      __atomic_fetch_add(&storage->failure_count, 1, __ATOMIC_RELAXED);
      status = WEFT_STATUS(RESOURCE_EXHAUSTED,
                           "injected allocation failure #%" PRId64
                           " (%zu bytes)",
                           index, byte_length);
    }
  }
  if (weft_status_is_ok(status)) {
    status = storage->base.ctl(storage->base.self, command, byte_length,
                               inout_ptr);
  }
  return status;
}

weft_allocator_t weft_failing_allocator_initialize(
    weft_allocator_t base, int64_t fail_at, weft_failing_allocator_t* storage) {
  // Without storage: a zeroed allocator, which every allocation refuses.
  weft_allocator_t allocator = {NULL, NULL};
  if (storage) {
    storage->base = base;
    storage->fail_at = fail_at;
    storage->request_count = 0;
    storage->failure_count = 0;
    allocator.self = storage;
    allocator.ctl = weft_failing_allocator_ctl;
  }
  return allocator;
}
