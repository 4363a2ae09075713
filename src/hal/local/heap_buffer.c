// weft: buffers backed by host memory.
#include "hal/local/heap_buffer.h"

#include <inttypes.h>
#include <stdint.h>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "hal/buffer_impl.h"

// Host memory: every CPU driver reaches it and the host maps it.
static const weft_buffer_placement_t kWeftHostPlacement = {
    .domain = WEFT_DOMAIN_HOST,
    .flags = WEFT_BUFFER_PLACEMENT_HOST_VISIBLE,
};

typedef struct weft_heap_buffer_t {
  weft_buffer_t base;
  // First byte of the memory (aligned for allocated buffers).
  uint8_t* data;
  // For wrapped memory: called at destroy. NULL for allocated memory, which
  // lives in the same allocation as this struct.
  weft_heap_buffer_release_fn_t release_fn;
  void* release_user_data;
} weft_heap_buffer_t;

static void weft_heap_buffer_destroy(weft_buffer_t* base) {
  weft_heap_buffer_t* buffer = (weft_heap_buffer_t*)base;
  weft_heap_buffer_release_fn_t release_fn = buffer->release_fn;
  void* release_user_data = buffer->release_user_data;
  void* data = buffer->data;
  weft_allocator_free(base->allocator, buffer);
  if (release_fn) release_fn(release_user_data, data);
}

static weft_status_t weft_heap_buffer_map_range(
    weft_buffer_t* base, weft_mapping_mode_t mode, weft_memory_access_t access,
    weft_device_size_t offset, weft_device_size_t length,
    void** out_host_ptr) {
  weft_heap_buffer_t* buffer = (weft_heap_buffer_t*)base;
  // A zero-length buffer may have no memory at all: hand out its (NULL)
  // pointer rather than doing arithmetic on it.
  *out_host_ptr = buffer->data ? buffer->data + offset : NULL;
  return WEFT_OK;
}

static void weft_heap_buffer_unmap_range(weft_buffer_t* base,
                                         weft_device_size_t offset,
                                         weft_device_size_t length,
                                         void* host_ptr) {}

// Host memory is coherent with the CPU that runs every heap buffer's work.
static weft_status_t weft_heap_buffer_sync_range(weft_buffer_t* base,
                                                 weft_device_size_t offset,
                                                 weft_device_size_t length) {
  return WEFT_OK;
}

static const weft_buffer_vtable_t kWeftHeapBufferVtable = {
    .destroy = weft_heap_buffer_destroy,
    .map_range = weft_heap_buffer_map_range,
    .unmap_range = weft_heap_buffer_unmap_range,
    .flush_range = weft_heap_buffer_sync_range,
    .invalidate_range = weft_heap_buffer_sync_range,
};

// Asks the kernel to back the whole 2 MiB pages inside [data, data +
// length) with transparent huge pages, where it does so only when asked
// (Debian's default, "madvise"). A large buffer streamed by a kernel (a
// model's weights, read once per token) then takes a TLB entry per 2 MiB
// instead of per 4 KiB. Advice only: a kernel without it, or one that
// refuses, leaves the small pages, so the result is not checked.
static void weft_heap_buffer_advise_huge_pages(uint8_t* data, size_t length) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  const uintptr_t huge = (uintptr_t)2 << 20;
  const uintptr_t begin = ((uintptr_t)data + huge - 1) & ~(huge - 1);
  const uintptr_t end = ((uintptr_t)data + length) & ~(huge - 1);
  if (end > begin) (void)madvise((void*)begin, end - begin, MADV_HUGEPAGE);
#else
  (void)data;
  (void)length;
#endif
}

weft_status_t weft_heap_buffer_allocate(weft_allocator_t allocator,
                                        weft_buffer_params_t params,
                                        weft_device_size_t byte_length,
                                        weft_buffer_t** out_buffer) {
  *out_buffer = NULL;
  weft_status_t status = WEFT_OK;
  // One allocation: the struct, then up to ALIGNMENT-1 bytes of padding,
  // then the memory.
  const size_t header_size =
      sizeof(weft_heap_buffer_t) + WEFT_HEAP_BUFFER_ALIGNMENT - 1;
  if (byte_length > (weft_device_size_t)(SIZE_MAX - header_size)) {
    status = WEFT_STATUS(RESOURCE_EXHAUSTED,
                         "heap_buffer_allocate: %" PRIu64
                         " bytes cannot be allocated on this host",
                         byte_length);
  }
  weft_heap_buffer_t* buffer = NULL;
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc(allocator,
                                   header_size + (size_t)byte_length,
                                   (void**)&buffer);
  }
  if (weft_status_is_ok(status)) {
    weft_buffer_initialize(&kWeftHeapBufferVtable, allocator, params,
                           kWeftHostPlacement, byte_length, &buffer->base);
    uintptr_t data = (uintptr_t)(buffer + 1);
    data = (data + WEFT_HEAP_BUFFER_ALIGNMENT - 1) &
           ~(uintptr_t)(WEFT_HEAP_BUFFER_ALIGNMENT - 1);
    buffer->data = (uint8_t*)data;
    weft_heap_buffer_advise_huge_pages(buffer->data, (size_t)byte_length);
    buffer->release_fn = NULL;
    buffer->release_user_data = NULL;
    *out_buffer = &buffer->base;
  } else {
    status = weft_status_annotate(
        status, "allocating a heap buffer of %" PRIu64 " bytes", byte_length);
  }
  return status;
}

weft_status_t weft_heap_buffer_wrap(weft_allocator_t allocator,
                                    weft_buffer_params_t params,
                                    void* host_ptr,
                                    weft_device_size_t byte_length,
                                    weft_heap_buffer_release_fn_t release_fn,
                                    void* release_user_data,
                                    weft_buffer_t** out_buffer) {
  *out_buffer = NULL;
  weft_status_t status = WEFT_OK;
  if (!host_ptr && byte_length != 0) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "heap_buffer_wrap: host pointer is NULL for %" PRIu64
                         " bytes",
                         byte_length);
  } else if (host_ptr &&
             byte_length > (weft_device_size_t)(UINTPTR_MAX -
                                                (uintptr_t)host_ptr)) {
    status = WEFT_STATUS(OUT_OF_RANGE,
                         "heap_buffer_wrap: %" PRIu64
                         " bytes at %p wrap around the address space",
                         byte_length, host_ptr);
  }
  weft_heap_buffer_t* buffer = NULL;
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc(allocator, sizeof(*buffer), (void**)&buffer);
  }
  if (weft_status_is_ok(status)) {
    weft_buffer_initialize(&kWeftHeapBufferVtable, allocator, params,
                           kWeftHostPlacement, byte_length, &buffer->base);
    buffer->data = (uint8_t*)host_ptr;
    buffer->release_fn = release_fn;
    buffer->release_user_data = release_user_data;
    *out_buffer = &buffer->base;
  }
  return status;
}

bool weft_buffer_is_heap(const weft_buffer_t* buffer) {
  return buffer &&
         buffer->allocated_buffer->resource.vtable == &kWeftHeapBufferVtable;
}
