// weft's CUDA test double: memory, copies, fills and memory pools. A TEST
// DOUBLE, never shipped or installed (see cuda_double.h).
//
// Device pointers are host addresses. Every live allocation (device, host
// and pool) is in one registry: frees must name one, device ranges that
// work touches must lie inside one (checked when the work is queued, where
// a GPU would fault later), and tests count what is left.
#include <stdlib.h>
#include <string.h>

#include "cuda_double_impl.h"

// cuMemAlloc's alignment on real devices; 4-byte fills rely on it.
#define WEFT_CUDA_DOUBLE_ALLOCATION_ALIGNMENT 256

typedef enum weft_cuda_double_allocation_kind_e {
  WEFT_CUDA_DOUBLE_ALLOCATION_DEVICE,  // cuMemAlloc
  WEFT_CUDA_DOUBLE_ALLOCATION_HOST,    // cuMemHostAlloc
  WEFT_CUDA_DOUBLE_ALLOCATION_POOL,    // cuMemAllocFromPoolAsync
} weft_cuda_double_allocation_kind_t;

typedef struct weft_cuda_double_allocation_t {
  struct weft_cuda_double_allocation_t* next;
  uintptr_t base;
  size_t size;
  weft_cuda_double_allocation_kind_t kind;
  CUdevice device;
  // A pool allocation whose cuMemFreeAsync is queued: no longer usable,
  // still counted until the stream reaches the free.
  bool free_queued;
} weft_cuda_double_allocation_t;

struct CUmemPoolHandle_st {
  uint32_t magic;
  CUdevice device;
  cuuint64_t release_threshold;
};

static struct {
  pthread_mutex_t mutex;
  weft_cuda_double_allocation_t* head;
  size_t live_count;
  // Device and pool bytes per device, against the device's memory.
  size_t device_bytes[WEFT_CUDA_DOUBLE_MAX_DEVICES];
  // Each device's default pool; its magic is set when first handed out.
  struct CUmemPoolHandle_st pools[WEFT_CUDA_DOUBLE_MAX_DEVICES];
} weft_cuda_double_memory = {.mutex = PTHREAD_MUTEX_INITIALIZER};

typedef struct weft_cuda_double_fill_task_t {
  weft_cuda_double_task_t base;
  void* dst;
  uint32_t value;
  uint32_t element_size;
  size_t count;
} weft_cuda_double_fill_task_t;

typedef struct weft_cuda_double_copy_task_t {
  weft_cuda_double_task_t base;
  void* dst;
  const void* src;
  size_t size;
} weft_cuda_double_copy_task_t;

typedef struct weft_cuda_double_free_task_t {
  weft_cuda_double_task_t base;
  CUdeviceptr address;
} weft_cuda_double_free_task_t;

//===----------------------------------------------------------------------===//
// The registry
//===----------------------------------------------------------------------===//

WEFT_CUDA_DOUBLE_EXPORT size_t weft_cuda_double_live_allocations(void) {
  pthread_mutex_lock(&weft_cuda_double_memory.mutex);
  size_t count = weft_cuda_double_memory.live_count;
  pthread_mutex_unlock(&weft_cuda_double_memory.mutex);
  return count;
}

// Allocates |size| bytes of |kind| for |device| and registers them.
// OUT_OF_MEMORY past the device's memory (device and pool kinds) or when
// the host has none.
static CUresult weft_cuda_double_allocate(
    weft_cuda_double_allocation_kind_t kind, CUdevice device, size_t size,
    void** out_pointer) {
  if (size == 0) return CUDA_ERROR_INVALID_VALUE;
  bool counts = kind != WEFT_CUDA_DOUBLE_ALLOCATION_HOST;
  size_t limit = weft_cuda_double__device_memory();
  CUresult result = CUDA_SUCCESS;
  // Reserve the bytes first, so that concurrent allocations cannot both
  // pass the limit.
  pthread_mutex_lock(&weft_cuda_double_memory.mutex);
  if (counts) {
    size_t used = weft_cuda_double_memory.device_bytes[device];
    if (size > limit - used) {
      result = CUDA_ERROR_OUT_OF_MEMORY;
    } else {
      weft_cuda_double_memory.device_bytes[device] = used + size;
    }
  }
  pthread_mutex_unlock(&weft_cuda_double_memory.mutex);
  if (result != CUDA_SUCCESS) return result;

  void* pointer = NULL;
  weft_cuda_double_allocation_t* allocation =
      (weft_cuda_double_allocation_t*)calloc(1, sizeof(*allocation));
  if (!allocation ||
      posix_memalign(&pointer, WEFT_CUDA_DOUBLE_ALLOCATION_ALIGNMENT, size) !=
          0) {
    free(allocation);
    result = CUDA_ERROR_OUT_OF_MEMORY;
  }
  pthread_mutex_lock(&weft_cuda_double_memory.mutex);
  if (result == CUDA_SUCCESS) {
    allocation->base = (uintptr_t)pointer;
    allocation->size = size;
    allocation->kind = kind;
    allocation->device = device;
    allocation->next = weft_cuda_double_memory.head;
    weft_cuda_double_memory.head = allocation;
    ++weft_cuda_double_memory.live_count;
  } else if (counts) {
    weft_cuda_double_memory.device_bytes[device] -= size;
  }
  pthread_mutex_unlock(&weft_cuda_double_memory.mutex);
  if (result == CUDA_SUCCESS) *out_pointer = pointer;
  return result;
}

// The allocation starting exactly at |address| whose kind is in
// |kind_mask| (bits of 1 << kind) and whose free is not queued, or NULL.
// Called with the registry's mutex held.
static weft_cuda_double_allocation_t** weft_cuda_double_find_base_locked(
    uintptr_t address, uint32_t kind_mask) {
  for (weft_cuda_double_allocation_t** link = &weft_cuda_double_memory.head;
       *link; link = &(*link)->next) {
    weft_cuda_double_allocation_t* allocation = *link;
    if (allocation->base == address && !allocation->free_queued &&
        (kind_mask & (1u << allocation->kind))) {
      return link;
    }
  }
  return NULL;
}

// Unlinks the allocation at |link| and frees it. Called with the registry's
// mutex held.
static void weft_cuda_double_release_locked(
    weft_cuda_double_allocation_t** link) {
  weft_cuda_double_allocation_t* allocation = *link;
  *link = allocation->next;
  --weft_cuda_double_memory.live_count;
  if (allocation->kind != WEFT_CUDA_DOUBLE_ALLOCATION_HOST) {
    weft_cuda_double_memory.device_bytes[allocation->device] -=
        allocation->size;
  }
  free((void*)allocation->base);
  free(allocation);
}

// Frees the allocation at |address| of a kind in |kind_mask|;
// INVALID_VALUE when there is none.
static CUresult weft_cuda_double_free(uintptr_t address, uint32_t kind_mask) {
  pthread_mutex_lock(&weft_cuda_double_memory.mutex);
  weft_cuda_double_allocation_t** link =
      weft_cuda_double_find_base_locked(address, kind_mask);
  if (link) weft_cuda_double_release_locked(link);
  pthread_mutex_unlock(&weft_cuda_double_memory.mutex);
  return link ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

// The live allocation containing |address| (free not queued), or NULL.
// Called with the registry's mutex held.
static const weft_cuda_double_allocation_t*
weft_cuda_double_find_containing_locked(uintptr_t address) {
  for (const weft_cuda_double_allocation_t* allocation =
           weft_cuda_double_memory.head;
       allocation; allocation = allocation->next) {
    if (!allocation->free_queued && address >= allocation->base &&
        address - allocation->base < allocation->size) {
      return allocation;
    }
  }
  return NULL;
}

// INVALID_VALUE unless the range is inside a live allocation; a range
// outside every allocation passes when |outside_is_host|.
static CUresult weft_cuda_double_check_range(CUdeviceptr address, size_t size,
                                             bool outside_is_host) {
  if (size == 0) return CUDA_SUCCESS;
  if (address == 0) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&weft_cuda_double_memory.mutex);
  const weft_cuda_double_allocation_t* allocation =
      weft_cuda_double_find_containing_locked((uintptr_t)address);
  bool valid = allocation ? size <= allocation->size -
                                        ((uintptr_t)address - allocation->base)
                          : outside_is_host;
  pthread_mutex_unlock(&weft_cuda_double_memory.mutex);
  return valid ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult weft_cuda_double__check_device_range(CUdeviceptr address,
                                              size_t size) {
  return weft_cuda_double_check_range(address, size, false);
}

CUresult weft_cuda_double__check_unified_range(CUdeviceptr address,
                                               size_t size) {
  return weft_cuda_double_check_range(address, size, true);
}

//===----------------------------------------------------------------------===//
// Device and host memory
//===----------------------------------------------------------------------===//

WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuMemAlloc(CUdeviceptr* dptr,
                                                    size_t bytesize) {
  CUcontext context = NULL;
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuMemAlloc, &context);
  if (result == CUDA_SUCCESS && !dptr) result = CUDA_ERROR_INVALID_VALUE;
  void* pointer = NULL;
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double_allocate(WEFT_CUDA_DOUBLE_ALLOCATION_DEVICE,
                                       context->device, bytesize, &pointer);
  }
  if (result == CUDA_SUCCESS) *dptr = (CUdeviceptr)(uintptr_t)pointer;
  return result;
}

// Also frees pool memory (synchronously), as the real driver does.
WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuMemFree(CUdeviceptr dptr) {
  CUcontext context = NULL;
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuMemFree, &context);
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double_free(
        (uintptr_t)dptr, (1u << WEFT_CUDA_DOUBLE_ALLOCATION_DEVICE) |
                             (1u << WEFT_CUDA_DOUBLE_ALLOCATION_POOL));
  }
  return result;
}

WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuMemHostAlloc(void** pp,
                                                        size_t bytesize,
                                                        unsigned int Flags) {
  CUcontext context = NULL;
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuMemHostAlloc, &context);
  const unsigned int supported = CU_MEMHOSTALLOC_PORTABLE |
                                 CU_MEMHOSTALLOC_DEVICEMAP |
                                 CU_MEMHOSTALLOC_WRITECOMBINED;
  if (result == CUDA_SUCCESS && (!pp || (Flags & ~supported))) {
    result = CUDA_ERROR_INVALID_VALUE;
  }
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double_allocate(WEFT_CUDA_DOUBLE_ALLOCATION_HOST,
                                       context->device, bytesize, pp);
  }
  return result;
}

WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuMemFreeHost(void* p) {
  CUcontext context = NULL;
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuMemFreeHost, &context);
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double_free((uintptr_t)p,
                                   1u << WEFT_CUDA_DOUBLE_ALLOCATION_HOST);
  }
  return result;
}

// Any address inside a cuMemHostAlloc allocation maps to itself.
WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI
cuMemHostGetDevicePointer(CUdeviceptr* pdptr, void* p, unsigned int Flags) {
  CUcontext context = NULL;
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuMemHostGetDevicePointer, &context);
  if (result == CUDA_SUCCESS && (!pdptr || Flags != 0)) {
    result = CUDA_ERROR_INVALID_VALUE;
  }
  if (result == CUDA_SUCCESS) {
    pthread_mutex_lock(&weft_cuda_double_memory.mutex);
    const weft_cuda_double_allocation_t* allocation =
        weft_cuda_double_find_containing_locked((uintptr_t)p);
    if (!allocation || allocation->kind != WEFT_CUDA_DOUBLE_ALLOCATION_HOST) {
      result = CUDA_ERROR_INVALID_VALUE;
    }
    pthread_mutex_unlock(&weft_cuda_double_memory.mutex);
  }
  if (result == CUDA_SUCCESS) *pdptr = (CUdeviceptr)(uintptr_t)p;
  return result;
}

//===----------------------------------------------------------------------===//
// Fills and copies
//===----------------------------------------------------------------------===//

void weft_cuda_double__fill(void* dst, uint32_t value, uint32_t element_size,
                            size_t count) {
  switch (element_size) {
    case 1:
      memset(dst, (int)(value & 0xffu), count);
      break;
    case 2: {
      uint16_t* elements = (uint16_t*)dst;
      for (size_t i = 0; i < count; ++i) elements[i] = (uint16_t)value;
      break;
    }
    default: {
      uint32_t* elements = (uint32_t*)dst;
      for (size_t i = 0; i < count; ++i) elements[i] = value;
      break;
    }
  }
}

static void weft_cuda_double_fill_task_run(weft_cuda_double_task_t* base) {
  weft_cuda_double_fill_task_t* task = (weft_cuda_double_fill_task_t*)base;
  weft_cuda_double__fill(task->dst, task->value, task->element_size,
                         task->count);
}

// Queues a fill of |count| elements of |element_size| bytes at |dst| on
// |stream|, after the checks each cuMemsetD*Async makes.
static CUresult weft_cuda_double_fill_async(CUcontext context, CUdeviceptr dst,
                                            uint32_t value,
                                            uint32_t element_size, size_t count,
                                            CUstream stream) {
  CUresult result = weft_cuda_double__check_stream(stream, context);
  if (result == CUDA_SUCCESS &&
      ((uintptr_t)dst % element_size != 0 || count > SIZE_MAX / element_size)) {
    result = CUDA_ERROR_INVALID_VALUE;
  }
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double__check_device_range(dst, count * element_size);
  }
  weft_cuda_double_fill_task_t* task = NULL;
  if (result == CUDA_SUCCESS) {
    task = (weft_cuda_double_fill_task_t*)weft_cuda_double__task_allocate(
        sizeof(*task), weft_cuda_double_fill_task_run);
    if (!task) result = CUDA_ERROR_OUT_OF_MEMORY;
  }
  if (result == CUDA_SUCCESS) {
    task->dst = (void*)(uintptr_t)dst;
    task->value = value;
    task->element_size = element_size;
    task->count = count;
    weft_cuda_double__stream_enqueue(stream, &task->base);
  }
  return result;
}

WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dstDevice,
                                                         unsigned char uc,
                                                         size_t N,
                                                         CUstream hStream) {
  CUcontext context = NULL;
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuMemsetD8Async, &context);
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double_fill_async(context, dstDevice, uc, 1, N, hStream);
  }
  return result;
}

WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuMemsetD16Async(CUdeviceptr dstDevice,
                                                          unsigned short us,
                                                          size_t N,
                                                          CUstream hStream) {
  CUcontext context = NULL;
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuMemsetD16Async, &context);
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double_fill_async(context, dstDevice, us, 2, N, hStream);
  }
  return result;
}

WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr dstDevice,
                                                          unsigned int ui,
                                                          size_t N,
                                                          CUstream hStream) {
  CUcontext context = NULL;
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuMemsetD32Async, &context);
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double_fill_async(context, dstDevice, ui, 4, N, hStream);
  }
  return result;
}

// memcpy, not memmove: overlapping copies are undefined on a GPU too, and
// ASan reports them.
static void weft_cuda_double_copy_task_run(weft_cuda_double_task_t* base) {
  weft_cuda_double_copy_task_t* task = (weft_cuda_double_copy_task_t*)base;
  if (task->size) memcpy(task->dst, task->src, task->size);
}

static CUresult weft_cuda_double_copy_async(void* dst, const void* src,
                                            size_t size, CUstream stream) {
  weft_cuda_double_copy_task_t* task =
      (weft_cuda_double_copy_task_t*)weft_cuda_double__task_allocate(
          sizeof(*task), weft_cuda_double_copy_task_run);
  if (!task) return CUDA_ERROR_OUT_OF_MEMORY;
  task->dst = dst;
  task->src = src;
  task->size = size;
  weft_cuda_double__stream_enqueue(stream, &task->base);
  return CUDA_SUCCESS;
}

// Unified addressing: either side may be device, pool, mapped host or
// plain host memory.
WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst,
                                                       CUdeviceptr src,
                                                       size_t ByteCount,
                                                       CUstream hStream) {
  CUcontext context = NULL;
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuMemcpyAsync, &context);
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double__check_stream(hStream, context);
  }
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double__check_unified_range(dst, ByteCount);
  }
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double__check_unified_range(src, ByteCount);
  }
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double_copy_async(
        (void*)(uintptr_t)dst, (const void*)(uintptr_t)src, ByteCount, hStream);
  }
  return result;
}

WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI
cuMemcpyHtoDAsync(CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount,
                  CUstream hStream) {
  CUcontext context = NULL;
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuMemcpyHtoDAsync, &context);
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double__check_stream(hStream, context);
  }
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double__check_device_range(dstDevice, ByteCount);
  }
  if (result == CUDA_SUCCESS && ByteCount && !srcHost) {
    result = CUDA_ERROR_INVALID_VALUE;
  }
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double_copy_async((void*)(uintptr_t)dstDevice, srcHost,
                                         ByteCount, hStream);
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Memory pools
//===----------------------------------------------------------------------===//

static bool weft_cuda_double_pool_is_valid(CUmemoryPool pool) {
  return pool && pool->magic == WEFT_CUDA_DOUBLE_MAGIC_POOL;
}

WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI
cuDeviceGetDefaultMemPool(CUmemoryPool* pool_out, CUdevice dev) {
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuDeviceGetDefaultMemPool, NULL);
  if (result == CUDA_SUCCESS && !pool_out) result = CUDA_ERROR_INVALID_VALUE;
  if (result == CUDA_SUCCESS) result = weft_cuda_double__check_device(dev);
  if (result == CUDA_SUCCESS) {
    pthread_mutex_lock(&weft_cuda_double_memory.mutex);
    CUmemoryPool pool = &weft_cuda_double_memory.pools[dev];
    // Written once: later readers of a handed-out pool read it unlocked.
    if (pool->magic != WEFT_CUDA_DOUBLE_MAGIC_POOL) {
      pool->magic = WEFT_CUDA_DOUBLE_MAGIC_POOL;
      pool->device = dev;
    }
    pthread_mutex_unlock(&weft_cuda_double_memory.mutex);
    *pool_out = pool;
  }
  return result;
}

// Only the release threshold: the double keeps no memory back anyway.
WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuMemPoolSetAttribute(
    CUmemoryPool pool, CUmemPool_attribute attr, void* value) {
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuMemPoolSetAttribute, NULL);
  if (result == CUDA_SUCCESS && !weft_cuda_double_pool_is_valid(pool)) {
    result = CUDA_ERROR_INVALID_VALUE;
  }
  if (result == CUDA_SUCCESS &&
      (attr != CU_MEMPOOL_ATTR_RELEASE_THRESHOLD || !value)) {
    result = CUDA_ERROR_INVALID_VALUE;
  }
  if (result == CUDA_SUCCESS) {
    pthread_mutex_lock(&weft_cuda_double_memory.mutex);
    pool->release_threshold = *(const cuuint64_t*)value;
    pthread_mutex_unlock(&weft_cuda_double_memory.mutex);
  }
  return result;
}

// The memory exists at once; the stream's order is the caller's to keep.
WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuMemAllocFromPoolAsync(
    CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream) {
  CUcontext context = NULL;
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuMemAllocFromPoolAsync, &context);
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double__check_stream(hStream, context);
  }
  if (result == CUDA_SUCCESS &&
      (!dptr || !weft_cuda_double_pool_is_valid(pool) ||
       pool->device != context->device)) {
    result = CUDA_ERROR_INVALID_VALUE;
  }
  void* pointer = NULL;
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double_allocate(WEFT_CUDA_DOUBLE_ALLOCATION_POOL,
                                       context->device, bytesize, &pointer);
  }
  if (result == CUDA_SUCCESS) *dptr = (CUdeviceptr)(uintptr_t)pointer;
  return result;
}

static void weft_cuda_double_free_task_run(weft_cuda_double_task_t* base) {
  weft_cuda_double_free_task_t* task = (weft_cuda_double_free_task_t*)base;
  pthread_mutex_lock(&weft_cuda_double_memory.mutex);
  weft_cuda_double_allocation_t** link = &weft_cuda_double_memory.head;
  while ((*link)->base != (uintptr_t)task->address || !(*link)->free_queued) {
    link = &(*link)->next;
  }
  weft_cuda_double_release_locked(link);
  pthread_mutex_unlock(&weft_cuda_double_memory.mutex);
}

// The memory is unusable from this call and freed when the stream reaches
// it.
WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr dptr,
                                                        CUstream hStream) {
  CUcontext context = NULL;
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuMemFreeAsync, &context);
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double__check_stream(hStream, context);
  }
  weft_cuda_double_free_task_t* task = NULL;
  if (result == CUDA_SUCCESS) {
    task = (weft_cuda_double_free_task_t*)weft_cuda_double__task_allocate(
        sizeof(*task), weft_cuda_double_free_task_run);
    if (!task) result = CUDA_ERROR_OUT_OF_MEMORY;
  }
  if (result == CUDA_SUCCESS) {
    pthread_mutex_lock(&weft_cuda_double_memory.mutex);
    weft_cuda_double_allocation_t** link = weft_cuda_double_find_base_locked(
        (uintptr_t)dptr, 1u << WEFT_CUDA_DOUBLE_ALLOCATION_POOL);
    if (link) {
      (*link)->free_queued = true;
    } else {
      result = CUDA_ERROR_INVALID_VALUE;
    }
    pthread_mutex_unlock(&weft_cuda_double_memory.mutex);
  }
  if (result == CUDA_SUCCESS) {
    task->address = dptr;
    weft_cuda_double__stream_enqueue(hStream, &task->base);
  } else {
    free(task);
  }
  return result;
}
