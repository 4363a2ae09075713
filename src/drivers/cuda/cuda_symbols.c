// weft cuda driver: loading the driver library (see cuda_symbols.h).
#include "drivers/cuda/cuda_symbols.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

// Turns a macro-expanded entry point into the symbol name dlsym needs.
#define WEFT_CUDA_STRINGIFY_(x) #x
#define WEFT_CUDA_STRINGIFY(x) WEFT_CUDA_STRINGIFY_(x)

// Loaded once per process: the library stays mapped until exit (unloading
// a driver library under live contexts is never safe).
static pthread_once_t weft_cuda_symbols_once = PTHREAD_ONCE_INIT;
static weft_cuda_symbols_t weft_cuda_symbols;
// Why loading failed (immutable after the once; cloned for each caller).
static weft_status_t weft_cuda_symbols_status;

static weft_status_t weft_cuda_symbols_load(weft_cuda_symbols_t* symbols) {
  const char* override = getenv(WEFT_CUDA_DRIVER_LIBRARY_ENV);
  const char* path = override && override[0] ? override : "libcuda.so.1";
  symbols->library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!symbols->library) {
    const char* error = dlerror();
    return WEFT_STATUS(UNAVAILABLE,
                       "the CUDA driver library '%s' could not be loaded "
                       "(%s)%s",
                       path, error ? error : "unknown error",
                       override ? "" : ": is the NVIDIA driver installed?");
  }
  weft_status_t status = WEFT_OK;
#define WEFT_CUDA_SYMBOL_RESOLVE(name)                                     \
  if (weft_status_is_ok(status)) {                                         \
    *(void**)&symbols->name =                                              \
        dlsym(symbols->library, WEFT_CUDA_STRINGIFY(name));                \
    if (!symbols->name) {                                                  \
      status = WEFT_STATUS(UNAVAILABLE,                                    \
                           "the CUDA driver library '%s' has no entry "    \
                           "point '%s' (a driver older than CUDA 12?)",    \
                           path, WEFT_CUDA_STRINGIFY(name));               \
    }                                                                      \
  }
  WEFT_CUDA_SYMBOLS(WEFT_CUDA_SYMBOL_RESOLVE)
#undef WEFT_CUDA_SYMBOL_RESOLVE
  if (weft_status_is_ok(status)) {
    CUresult result = symbols->cuInit(0);
    if (result != CUDA_SUCCESS) {
      status = weft_cuda_result_to_status_slow(symbols, result, "cuInit(0)");
      if (weft_status_code(status) != WEFT_STATUS_UNAVAILABLE) {
        // Whatever stops cuInit, there is no usable GPU here.
        weft_status_t unavailable = WEFT_STATUS(
            UNAVAILABLE, "no usable CUDA device: %s",
            weft_status_message(status));
        weft_status_free(status);
        status = unavailable;
      }
    }
  }
  return status;
}

static void weft_cuda_symbols_load_once(void) {
  weft_cuda_symbols_status = weft_cuda_symbols_load(&weft_cuda_symbols);
}

weft_status_t weft_cuda_symbols_get(const weft_cuda_symbols_t** out_symbols) {
  *out_symbols = NULL;
  pthread_once(&weft_cuda_symbols_once, weft_cuda_symbols_load_once);
  if (!weft_status_is_ok(weft_cuda_symbols_status)) {
    return weft_status_clone(weft_cuda_symbols_status);
  }
  *out_symbols = &weft_cuda_symbols;
  return WEFT_OK;
}

// The weft code for a CUDA error (see cuda_symbols.h).
static weft_status_code_t weft_cuda_result_code(CUresult result) {
  switch (result) {
    case CUDA_ERROR_OUT_OF_MEMORY:
      return WEFT_STATUS_RESOURCE_EXHAUSTED;
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_DEINITIALIZED:
    case CUDA_ERROR_STUB_LIBRARY:
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    case CUDA_ERROR_DEVICE_UNAVAILABLE:
    case CUDA_ERROR_OPERATING_SYSTEM:
      return WEFT_STATUS_UNAVAILABLE;
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_INVALID_HANDLE:
    case CUDA_ERROR_INVALID_DEVICE:
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
      return WEFT_STATUS_INVALID_ARGUMENT;
    case CUDA_ERROR_NOT_FOUND:
      return WEFT_STATUS_NOT_FOUND;
    case CUDA_ERROR_NOT_SUPPORTED:
      return WEFT_STATUS_UNIMPLEMENTED;
    case CUDA_ERROR_NOT_READY:
      return WEFT_STATUS_DEFERRED;
    default:
      return WEFT_STATUS_INTERNAL;
  }
}

weft_status_t weft_cuda_result_to_status_slow(
    const weft_cuda_symbols_t* symbols, CUresult result, const char* call) {
  const char* name = NULL;
  const char* text = NULL;
  // Both may fail for a code the driver does not know.
  if (symbols && symbols->cuGetErrorName) {
    symbols->cuGetErrorName(result, &name);
  }
  if (symbols && symbols->cuGetErrorString) {
    symbols->cuGetErrorString(result, &text);
  }
  weft_status_code_t code = weft_cuda_result_code(result);
  if (name) {
    return weft_status_make_(__FILE__, __LINE__, code, "%s failed: %s (%s)",
                             call, name, text ? text : "no description");
  }
  return weft_status_make_(__FILE__, __LINE__, code,
                           "%s failed: CUDA error %d", call, (int)result);
}
