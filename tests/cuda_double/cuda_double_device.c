// weft's CUDA test double: errors, initialisation, devices, contexts and
// the test controls. A TEST DOUBLE, never shipped or installed (see
// cuda_double.h and cuda_double_impl.h).
//
// The double is a process-wide driver, as libcuda is: its state is one
// static, guarded by one mutex.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_double_impl.h"

#define WEFT_CUDA_DOUBLE_DEVICE_NAME "weft CUDA test double (CPU)"
#define WEFT_CUDA_DOUBLE_DEFAULT_MEMORY ((size_t)1 << 30)
#define WEFT_CUDA_DOUBLE_DRIVER_VERSION 13000
#define WEFT_CUDA_DOUBLE_MAX_ARMED_FAILURES 64
// Entry points weft_cuda_double_call_count tells apart (the API has fewer).
#define WEFT_CUDA_DOUBLE_MAX_COUNTED_ENTRY_POINTS 128
// Tasks a stream holds not yet completed before an enqueue blocks: about
// what a GPU's command queue holds behind an unmet wait.
#define WEFT_CUDA_DOUBLE_DEFAULT_QUEUE_DEPTH 1024
// The context stack each thread may push: deeper is a runaway push loop.
#define WEFT_CUDA_DOUBLE_CONTEXT_STACK_DEPTH 64

typedef struct weft_cuda_double_armed_failure_t {
  // The name as given to weft_cuda_double_fail_next (copied).
  char entry_point[64];
  CUresult result;
} weft_cuda_double_armed_failure_t;

static struct {
  pthread_mutex_t mutex;
  bool initialized;
  int device_count;
  size_t device_memory;
  uint64_t latency_us;
  // Knobs: the environment sets them at the first cuInit, the controls at
  // any time.
  uint32_t queue_depth;
  bool stream_mem_ops;
  struct CUctx_st contexts[WEFT_CUDA_DOUBLE_MAX_DEVICES];
  // In the order armed; the first match fires.
  weft_cuda_double_armed_failure_t
      failures[WEFT_CUDA_DOUBLE_MAX_ARMED_FAILURES];
  uint32_t failure_count;
  uint64_t launch_count;
  // Calls per entry point (weft_cuda_double_call_count), by API name.
  struct {
    const char* name;
    uint64_t count;
  } calls[WEFT_CUDA_DOUBLE_MAX_COUNTED_ENTRY_POINTS];
  uint32_t call_entry_count;
} weft_cuda_double_state = {
    .mutex = PTHREAD_MUTEX_INITIALIZER,
    .queue_depth = WEFT_CUDA_DOUBLE_DEFAULT_QUEUE_DEPTH,
    .stream_mem_ops = true,
};

// Counts a call of |name|. Called with the state's mutex held.
static void weft_cuda_double_count_call_locked(const char* name) {
  uint32_t i = 0;
  while (i < weft_cuda_double_state.call_entry_count &&
         strcmp(weft_cuda_double_state.calls[i].name, name) != 0) {
    ++i;
  }
  if (i == weft_cuda_double_state.call_entry_count) {
    if (i == WEFT_CUDA_DOUBLE_MAX_COUNTED_ENTRY_POINTS) return;
    weft_cuda_double_state.calls[i].name = name;  // a string literal
    ++weft_cuda_double_state.call_entry_count;
  }
  ++weft_cuda_double_state.calls[i].count;
}

// This thread's context stack (cuCtxPushCurrent/cuCtxPopCurrent).
static _Thread_local struct {
  CUcontext contexts[WEFT_CUDA_DOUBLE_CONTEXT_STACK_DEPTH];
  uint32_t depth;
} weft_cuda_double_context_stack;

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

// Takes the first armed failure for |name| or |symbol|; CUDA_SUCCESS if
// none. Called with the state's mutex held.
static CUresult weft_cuda_double_take_failure_locked(const char* name,
                                                     const char* symbol) {
  for (uint32_t i = 0; i < weft_cuda_double_state.failure_count; ++i) {
    const weft_cuda_double_armed_failure_t* failure =
        &weft_cuda_double_state.failures[i];
    if (strcmp(failure->entry_point, name) != 0 &&
        strcmp(failure->entry_point, symbol) != 0) {
      continue;
    }
    CUresult result = failure->result;
    memmove(&weft_cuda_double_state.failures[i],
            &weft_cuda_double_state.failures[i + 1],
            (weft_cuda_double_state.failure_count - i - 1) *
                sizeof(weft_cuda_double_state.failures[0]));
    --weft_cuda_double_state.failure_count;
    return result;
  }
  return CUDA_SUCCESS;
}

CUresult weft_cuda_double__enter(const char* name, const char* symbol,
                                 CUcontext* out_context) {
  pthread_mutex_lock(&weft_cuda_double_state.mutex);
  weft_cuda_double_count_call_locked(name);
  CUresult result = weft_cuda_double_take_failure_locked(name, symbol);
  if (result == CUDA_SUCCESS && !weft_cuda_double_state.initialized) {
    result = CUDA_ERROR_NOT_INITIALIZED;
  }
  if (result == CUDA_SUCCESS && out_context) {
    uint32_t depth = weft_cuda_double_context_stack.depth;
    CUcontext context =
        depth ? weft_cuda_double_context_stack.contexts[depth - 1] : NULL;
    if (!context) {
      result = CUDA_ERROR_INVALID_CONTEXT;
    } else if (context->retain_count == 0) {
      result = CUDA_ERROR_CONTEXT_IS_DESTROYED;
    } else {
      *out_context = context;
    }
  }
  pthread_mutex_unlock(&weft_cuda_double_state.mutex);
  return result;
}

CUresult weft_cuda_double__check_device(CUdevice device) {
  pthread_mutex_lock(&weft_cuda_double_state.mutex);
  bool valid = device >= 0 && device < weft_cuda_double_state.device_count;
  pthread_mutex_unlock(&weft_cuda_double_state.mutex);
  return valid ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

size_t weft_cuda_double__device_memory(void) {
  pthread_mutex_lock(&weft_cuda_double_state.mutex);
  size_t memory = weft_cuda_double_state.device_memory;
  pthread_mutex_unlock(&weft_cuda_double_state.mutex);
  return memory;
}

uint64_t weft_cuda_double__latency_us(void) {
  pthread_mutex_lock(&weft_cuda_double_state.mutex);
  uint64_t latency_us = weft_cuda_double_state.latency_us;
  pthread_mutex_unlock(&weft_cuda_double_state.mutex);
  return latency_us;
}

uint32_t weft_cuda_double__queue_depth(void) {
  pthread_mutex_lock(&weft_cuda_double_state.mutex);
  uint32_t depth = weft_cuda_double_state.queue_depth;
  pthread_mutex_unlock(&weft_cuda_double_state.mutex);
  return depth;
}

bool weft_cuda_double__stream_mem_ops_supported(void) {
  pthread_mutex_lock(&weft_cuda_double_state.mutex);
  bool supported = weft_cuda_double_state.stream_mem_ops;
  pthread_mutex_unlock(&weft_cuda_double_state.mutex);
  return supported;
}

void weft_cuda_double__count_launches(uint64_t count) {
  pthread_mutex_lock(&weft_cuda_double_state.mutex);
  weft_cuda_double_state.launch_count += count;
  pthread_mutex_unlock(&weft_cuda_double_state.mutex);
}

uint64_t weft_cuda_double__now_ns(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
}

//===----------------------------------------------------------------------===//
// Controls
//===----------------------------------------------------------------------===//

WEFT_CUDA_DOUBLE_EXPORT void weft_cuda_double_fail_next(const char* entry_point,
                                                        CUresult result) {
  pthread_mutex_lock(&weft_cuda_double_state.mutex);
  uint32_t index = weft_cuda_double_state.failure_count;
  if (index == WEFT_CUDA_DOUBLE_MAX_ARMED_FAILURES ||
      strlen(entry_point) >=
          sizeof(weft_cuda_double_state.failures[0].entry_point)) {
    // A broken test, not a condition to report through the API.
    fprintf(stderr,
            "weft_cuda_double_fail_next(%s): more than %d armed failures or "
            "a name too long\n",
            entry_point, WEFT_CUDA_DOUBLE_MAX_ARMED_FAILURES);
    abort();
  }
  weft_cuda_double_armed_failure_t* failure =
      &weft_cuda_double_state.failures[index];
  strcpy(failure->entry_point, entry_point);
  failure->result = result;
  weft_cuda_double_state.failure_count = index + 1;
  pthread_mutex_unlock(&weft_cuda_double_state.mutex);
}

WEFT_CUDA_DOUBLE_EXPORT void weft_cuda_double_set_queue_depth(uint32_t depth) {
  pthread_mutex_lock(&weft_cuda_double_state.mutex);
  weft_cuda_double_state.queue_depth = depth;
  pthread_mutex_unlock(&weft_cuda_double_state.mutex);
}

WEFT_CUDA_DOUBLE_EXPORT void weft_cuda_double_set_stream_mem_ops(
    bool supported) {
  pthread_mutex_lock(&weft_cuda_double_state.mutex);
  weft_cuda_double_state.stream_mem_ops = supported;
  pthread_mutex_unlock(&weft_cuda_double_state.mutex);
}

WEFT_CUDA_DOUBLE_EXPORT uint64_t
weft_cuda_double_call_count(const char* entry_point) {
  uint64_t count = 0;
  pthread_mutex_lock(&weft_cuda_double_state.mutex);
  for (uint32_t i = 0; i < weft_cuda_double_state.call_entry_count; ++i) {
    if (strcmp(weft_cuda_double_state.calls[i].name, entry_point) == 0) {
      count = weft_cuda_double_state.calls[i].count;
    }
  }
  pthread_mutex_unlock(&weft_cuda_double_state.mutex);
  return count;
}

WEFT_CUDA_DOUBLE_EXPORT uint64_t weft_cuda_double_launch_count(void) {
  pthread_mutex_lock(&weft_cuda_double_state.mutex);
  uint64_t count = weft_cuda_double_state.launch_count;
  pthread_mutex_unlock(&weft_cuda_double_state.mutex);
  return count;
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

typedef struct weft_cuda_double_error_t {
  CUresult result;
  const char* name;
  const char* string;
} weft_cuda_double_error_t;

// Everything the double returns, and the errors a test is likely to inject
// with weft_cuda_double_fail_next; the strings are the real driver's.
static const weft_cuda_double_error_t weft_cuda_double_errors[] = {
#define WEFT_CUDA_DOUBLE_ERROR(result, string) \
  { result, #result, string }
    WEFT_CUDA_DOUBLE_ERROR(CUDA_SUCCESS, "no error"),
    WEFT_CUDA_DOUBLE_ERROR(CUDA_ERROR_INVALID_VALUE, "invalid argument"),
    WEFT_CUDA_DOUBLE_ERROR(CUDA_ERROR_OUT_OF_MEMORY, "out of memory"),
    WEFT_CUDA_DOUBLE_ERROR(CUDA_ERROR_NOT_INITIALIZED, "initialization error"),
    WEFT_CUDA_DOUBLE_ERROR(CUDA_ERROR_DEINITIALIZED, "driver shutting down"),
    WEFT_CUDA_DOUBLE_ERROR(CUDA_ERROR_NO_DEVICE,
                           "no CUDA-capable device is detected"),
    WEFT_CUDA_DOUBLE_ERROR(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal"),
    WEFT_CUDA_DOUBLE_ERROR(CUDA_ERROR_INVALID_IMAGE,
                           "device kernel image is invalid"),
    WEFT_CUDA_DOUBLE_ERROR(CUDA_ERROR_INVALID_CONTEXT,
                           "invalid device context"),
    WEFT_CUDA_DOUBLE_ERROR(CUDA_ERROR_CONTEXT_IS_DESTROYED,
                           "context is destroyed"),
    WEFT_CUDA_DOUBLE_ERROR(CUDA_ERROR_NO_BINARY_FOR_GPU,
                           "no kernel image is available for execution on "
                           "the device"),
    WEFT_CUDA_DOUBLE_ERROR(CUDA_ERROR_INVALID_PTX,
                           "a PTX JIT compilation failed"),
    WEFT_CUDA_DOUBLE_ERROR(CUDA_ERROR_INVALID_HANDLE,
                           "invalid resource handle"),
    WEFT_CUDA_DOUBLE_ERROR(CUDA_ERROR_NOT_FOUND, "named symbol not found"),
    WEFT_CUDA_DOUBLE_ERROR(CUDA_ERROR_NOT_READY, "device not ready"),
    WEFT_CUDA_DOUBLE_ERROR(CUDA_ERROR_ILLEGAL_ADDRESS,
                           "an illegal memory access was encountered"),
    WEFT_CUDA_DOUBLE_ERROR(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
                           "too many resources requested for launch"),
    WEFT_CUDA_DOUBLE_ERROR(CUDA_ERROR_LAUNCH_TIMEOUT,
                           "the launch timed out and was terminated"),
    WEFT_CUDA_DOUBLE_ERROR(CUDA_ERROR_LAUNCH_FAILED,
                           "unspecified launch failure"),
    WEFT_CUDA_DOUBLE_ERROR(CUDA_ERROR_ILLEGAL_STATE,
                           "the operation cannot be performed in the present "
                           "state"),
    WEFT_CUDA_DOUBLE_ERROR(CUDA_ERROR_NOT_SUPPORTED, "operation not supported"),
    WEFT_CUDA_DOUBLE_ERROR(CUDA_ERROR_OPERATING_SYSTEM,
                           "OS call failed or operation not supported on this "
                           "OS"),
    WEFT_CUDA_DOUBLE_ERROR(CUDA_ERROR_ECC_UNCORRECTABLE,
                           "uncorrectable ECC error encountered"),
    WEFT_CUDA_DOUBLE_ERROR(CUDA_ERROR_UNKNOWN, "unknown error"),
#undef WEFT_CUDA_DOUBLE_ERROR
};

static const weft_cuda_double_error_t* weft_cuda_double_find_error(
    CUresult result) {
  size_t count =
      sizeof(weft_cuda_double_errors) / sizeof(weft_cuda_double_errors[0]);
  for (size_t i = 0; i < count; ++i) {
    if (weft_cuda_double_errors[i].result == result) {
      return &weft_cuda_double_errors[i];
    }
  }
  return NULL;
}

// Neither needs cuInit, as in the real driver; an error the table lacks is
// CUDA_ERROR_INVALID_VALUE with *pStr NULL, as the real driver does.
WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuGetErrorName(CUresult error,
                                                        const char** pStr) {
  if (!pStr) return CUDA_ERROR_INVALID_VALUE;
  const weft_cuda_double_error_t* entry = weft_cuda_double_find_error(error);
  *pStr = entry ? entry->name : NULL;
  return entry ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuGetErrorString(CUresult error,
                                                          const char** pStr) {
  if (!pStr) return CUDA_ERROR_INVALID_VALUE;
  const weft_cuda_double_error_t* entry = weft_cuda_double_find_error(error);
  *pStr = entry ? entry->string : NULL;
  return entry ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

//===----------------------------------------------------------------------===//
// Initialisation
//===----------------------------------------------------------------------===//

// Parses environment variable |name| as an unsigned decimal into *|value|
// (left alone when unset); false when it is set but not a number in
// [0, |max|].
static bool weft_cuda_double_read_env(const char* name, uint64_t max,
                                      uint64_t* value) {
  const char* text = getenv(name);
  if (!text) return true;
  char* end = NULL;
  errno = 0;
  unsigned long long parsed = strtoull(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || text[0] == '-' ||
      parsed > max) {
    fprintf(stderr,
            "weft CUDA test double: %s=\"%s\" is not a number in "
            "[0, %llu]\n",
            name, text, (unsigned long long)max);
    return false;
  }
  *value = parsed;
  return true;
}

// The environment is read by the first cuInit that succeeds; after that
// cuInit only says so. Before it, every other call but cuDriverGetVersion
// and the error names gives CUDA_ERROR_NOT_INITIALIZED.
WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuInit(unsigned int Flags) {
  pthread_mutex_lock(&weft_cuda_double_state.mutex);
  CUresult result = weft_cuda_double_take_failure_locked("cuInit", "cuInit");
  if (result == CUDA_SUCCESS && Flags != 0) result = CUDA_ERROR_INVALID_VALUE;
  if (result == CUDA_SUCCESS && !weft_cuda_double_state.initialized) {
    uint64_t devices = 1;
    uint64_t memory = WEFT_CUDA_DOUBLE_DEFAULT_MEMORY;
    uint64_t latency_us = 0;
    uint64_t queue_depth = weft_cuda_double_state.queue_depth;
    uint64_t stream_mem_ops = weft_cuda_double_state.stream_mem_ops;
    if (!weft_cuda_double_read_env("WEFT_CUDA_DOUBLE_DEVICES",
                                   WEFT_CUDA_DOUBLE_MAX_DEVICES, &devices) ||
        !weft_cuda_double_read_env("WEFT_CUDA_DOUBLE_MEMORY", SIZE_MAX / 2,
                                   &memory) ||
        !weft_cuda_double_read_env("WEFT_CUDA_DOUBLE_LATENCY_US", 10000000,
                                   &latency_us) ||
        !weft_cuda_double_read_env("WEFT_CUDA_DOUBLE_QUEUE_DEPTH", UINT32_MAX,
                                   &queue_depth) ||
        !weft_cuda_double_read_env("WEFT_CUDA_DOUBLE_STREAM_MEM_OPS", 1,
                                   &stream_mem_ops)) {
      result = CUDA_ERROR_INVALID_VALUE;
    } else if (devices == 0) {
      result = CUDA_ERROR_NO_DEVICE;
    } else {
      weft_cuda_double_state.device_count = (int)devices;
      weft_cuda_double_state.device_memory = (size_t)memory;
      weft_cuda_double_state.latency_us = latency_us;
      weft_cuda_double_state.queue_depth = (uint32_t)queue_depth;
      weft_cuda_double_state.stream_mem_ops = stream_mem_ops != 0;
      for (int i = 0; i < (int)devices; ++i) {
        weft_cuda_double_state.contexts[i].magic =
            WEFT_CUDA_DOUBLE_MAGIC_CONTEXT;
        weft_cuda_double_state.contexts[i].device = i;
        weft_cuda_double_state.contexts[i].retain_count = 0;
      }
      weft_cuda_double_state.initialized = true;
    }
  }
  pthread_mutex_unlock(&weft_cuda_double_state.mutex);
  return result;
}

WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI
cuDriverGetVersion(int* driverVersion) {
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuDriverGetVersion, NULL);
  // Like the real driver, this one works before cuInit.
  if (result == CUDA_ERROR_NOT_INITIALIZED) result = CUDA_SUCCESS;
  if (result == CUDA_SUCCESS && !driverVersion) {
    result = CUDA_ERROR_INVALID_VALUE;
  }
  if (result == CUDA_SUCCESS) *driverVersion = WEFT_CUDA_DOUBLE_DRIVER_VERSION;
  return result;
}

//===----------------------------------------------------------------------===//
// Devices
//===----------------------------------------------------------------------===//

WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuDeviceGetCount(int* count) {
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuDeviceGetCount, NULL);
  if (result == CUDA_SUCCESS && !count) result = CUDA_ERROR_INVALID_VALUE;
  if (result == CUDA_SUCCESS) {
    pthread_mutex_lock(&weft_cuda_double_state.mutex);
    *count = weft_cuda_double_state.device_count;
    pthread_mutex_unlock(&weft_cuda_double_state.mutex);
  }
  return result;
}

WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuDeviceGet(CUdevice* device,
                                                     int ordinal) {
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuDeviceGet, NULL);
  if (result == CUDA_SUCCESS && !device) result = CUDA_ERROR_INVALID_VALUE;
  if (result == CUDA_SUCCESS) result = weft_cuda_double__check_device(ordinal);
  if (result == CUDA_SUCCESS) *device = ordinal;
  return result;
}

WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuDeviceGetName(char* name, int len,
                                                         CUdevice dev) {
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuDeviceGetName, NULL);
  if (result == CUDA_SUCCESS && (!name || len <= 0)) {
    result = CUDA_ERROR_INVALID_VALUE;
  }
  if (result == CUDA_SUCCESS) result = weft_cuda_double__check_device(dev);
  if (result == CUDA_SUCCESS) {
    // Truncated to |len| with the terminator, as the real driver does.
    snprintf(name, (size_t)len, "%s", WEFT_CUDA_DOUBLE_DEVICE_NAME);
  }
  return result;
}

WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuDeviceTotalMem(size_t* bytes,
                                                          CUdevice dev) {
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuDeviceTotalMem, NULL);
  if (result == CUDA_SUCCESS && !bytes) result = CUDA_ERROR_INVALID_VALUE;
  if (result == CUDA_SUCCESS) result = weft_cuda_double__check_device(dev);
  if (result == CUDA_SUCCESS) *bytes = weft_cuda_double__device_memory();
  return result;
}

// The attributes the double has: an sm_90-like device, scaled down where
// a count means CPU work.
static bool weft_cuda_double_attribute(CUdevice_attribute attribute,
                                       int* out_value) {
  switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
      *out_value = 9;
      return true;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
      *out_value = 0;
      return true;
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY:
      *out_value = 1;
      return true;
    // 1 unless a test turned them off (weft_cuda_double_set_stream_mem_ops).
    case CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS:
    case CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR:
      *out_value = weft_cuda_double__stream_mem_ops_supported() ? 1 : 0;
      return true;
    // CU_STREAM_WAIT_VALUE_FLUSH is refused: there are no remote writes.
    case CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES:
      *out_value = 0;
      return true;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
      *out_value = 1024;
      return true;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
      *out_value = 64;
      return true;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
      *out_value = 2147483647;
      return true;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
      *out_value = 65535;
      return true;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
      *out_value = 8;
      return true;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
      *out_value = 32;
      return true;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
      *out_value = 48 * 1024;
      return true;
    // What cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES) may raise a
    // kernel's limit to (sm_90's 227 KiB).
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
      *out_value = 227 * 1024;
      return true;
    default:
      return false;
  }
}

WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI
cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice dev) {
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuDeviceGetAttribute, NULL);
  if (result == CUDA_SUCCESS && !pi) result = CUDA_ERROR_INVALID_VALUE;
  if (result == CUDA_SUCCESS) result = weft_cuda_double__check_device(dev);
  if (result == CUDA_SUCCESS && !weft_cuda_double_attribute(attrib, pi)) {
    result = CUDA_ERROR_INVALID_VALUE;
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Contexts
//===----------------------------------------------------------------------===//

WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI
cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) {
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuDevicePrimaryCtxRetain, NULL);
  if (result == CUDA_SUCCESS && !pctx) result = CUDA_ERROR_INVALID_VALUE;
  if (result == CUDA_SUCCESS) result = weft_cuda_double__check_device(dev);
  if (result == CUDA_SUCCESS) {
    pthread_mutex_lock(&weft_cuda_double_state.mutex);
    CUcontext context = &weft_cuda_double_state.contexts[dev];
    ++context->retain_count;
    *pctx = context;
    pthread_mutex_unlock(&weft_cuda_double_state.mutex);
  }
  return result;
}

// Releasing the last retain does not free what the context holds, as the
// real driver would: what is left stays counted by
// weft_cuda_double_live_allocations, so a test sees the leak, and the
// context can no longer be current.
WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI
cuDevicePrimaryCtxRelease(CUdevice dev) {
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuDevicePrimaryCtxRelease, NULL);
  if (result == CUDA_SUCCESS) result = weft_cuda_double__check_device(dev);
  if (result == CUDA_SUCCESS) {
    pthread_mutex_lock(&weft_cuda_double_state.mutex);
    CUcontext context = &weft_cuda_double_state.contexts[dev];
    if (context->retain_count == 0) {
      result = CUDA_ERROR_INVALID_CONTEXT;
    } else {
      --context->retain_count;
    }
    pthread_mutex_unlock(&weft_cuda_double_state.mutex);
  }
  return result;
}

WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx) {
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuCtxPushCurrent, NULL);
  if (result == CUDA_SUCCESS) {
    pthread_mutex_lock(&weft_cuda_double_state.mutex);
    bool known = false;
    for (int i = 0; i < weft_cuda_double_state.device_count; ++i) {
      if (ctx == &weft_cuda_double_state.contexts[i]) known = true;
    }
    if (!known || ctx->retain_count == 0) result = CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_unlock(&weft_cuda_double_state.mutex);
  }
  if (result == CUDA_SUCCESS && weft_cuda_double_context_stack.depth ==
                                    WEFT_CUDA_DOUBLE_CONTEXT_STACK_DEPTH) {
    result = CUDA_ERROR_OUT_OF_MEMORY;
  }
  if (result == CUDA_SUCCESS) {
    weft_cuda_double_context_stack
        .contexts[weft_cuda_double_context_stack.depth++] = ctx;
  }
  return result;
}

WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuCtxPopCurrent(CUcontext* pctx) {
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuCtxPopCurrent, NULL);
  if (result == CUDA_SUCCESS && weft_cuda_double_context_stack.depth == 0) {
    result = CUDA_ERROR_INVALID_CONTEXT;
  }
  if (result == CUDA_SUCCESS) {
    CUcontext context = weft_cuda_double_context_stack
                            .contexts[--weft_cuda_double_context_stack.depth];
    if (pctx) *pctx = context;
  }
  return result;
}
