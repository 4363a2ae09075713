// weft's CUDA test double: modules, functions and kernel launches. A TEST
// DOUBLE, never shipped or installed (see cuda_double.h).
//
// A module is PTX text, scanned for its .entry names and parameter sizes;
// nothing is compiled. An entry the double implements must take the
// parameter sizes of its host function's signature.
// A function is an entry that also has a host implementation in the
// double (cuda_double_kernels.c). Fatbins and cubins have no code the
// double could run: CUDA_ERROR_NO_BINARY_FOR_GPU, as a GPU of another
// architecture says.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_double_impl.h"

// The dynamic shared memory a function may use unless raised
// (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES), and how far it may be
// raised (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN).
#define WEFT_CUDA_DOUBLE_DEFAULT_DYNAMIC_SHARED (48 * 1024)
#define WEFT_CUDA_DOUBLE_MAX_DYNAMIC_SHARED (227 * 1024)

// An .entry of a module's PTX.
typedef struct weft_cuda_double_entry_t {
  char* name;
  // One character per .param: '8' for 64 bits, '4' for 32, '?' otherwise.
  char* param_sizes;
} weft_cuda_double_entry_t;

struct CUfunc_st {
  uint32_t magic;
  CUmodule module;
  const weft_cuda_double_kernel_t* kernel;
  // Guarded by the module's mutex.
  int max_dynamic_shared_size;
  struct CUfunc_st* next;
};

struct CUmod_st {
  uint32_t magic;
  CUcontext context;
  pthread_mutex_t mutex;
  // The PTX's .entry functions.
  weft_cuda_double_entry_t* entries;
  size_t entry_count;
  // Made by the first cuModuleGetFunction of each name; guarded by mutex.
  struct CUfunc_st* functions;
};

typedef struct weft_cuda_double_launch_task_t {
  weft_cuda_double_task_t base;
  weft_cuda_double_launch_t launch;
} weft_cuda_double_launch_task_t;

//===----------------------------------------------------------------------===//
// PTX
//===----------------------------------------------------------------------===//

// Whether the bytes at |image| start with |magic| (|size| bytes), reading
// no further than the first mismatch: a short PTX string ends in a NUL,
// which no magic byte is.
static bool weft_cuda_double_has_magic(const void* image,
                                       const unsigned char* magic,
                                       size_t size) {
  const unsigned char* bytes = (const unsigned char*)image;
  for (size_t i = 0; i < size; ++i) {
    if (bytes[i] != magic[i]) return false;
  }
  return true;
}

static bool weft_cuda_double_is_identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '$';
}

static bool weft_cuda_double_is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void weft_cuda_double_free_entries(weft_cuda_double_entry_t* entries,
                                          size_t count) {
  for (size_t i = 0; i < count; ++i) {
    free(entries[i].name);
    free(entries[i].param_sizes);
  }
  free(entries);
}

// Reads the parameter list after an entry's '(' at |p| into |sizes| (at
// least WEFT_CUDA_DOUBLE_MAX_PARAMS + 2 bytes, NUL-terminated): '8' for a
// 64-bit .param, '4' for a 32-bit one, '?' for any other (an aligned byte
// array, say).
static void weft_cuda_double_scan_params(const char* p, char* sizes) {
  size_t count = 0;
  while (*p && *p != ')') {
    if (strncmp(p, ".param", 6) != 0 || !weft_cuda_double_is_space(p[6])) {
      ++p;
      continue;
    }
    p += 6;
    while (weft_cuda_double_is_space(*p)) ++p;
    const char* type = p;
    while (*p == '.' || weft_cuda_double_is_identifier_char(*p)) ++p;
    size_t length = (size_t)(p - type);
    char size = '?';
    if (length == 4 && type[0] == '.' && strchr("usbf", type[1])) {
      if (strncmp(type + 2, "64", 2) == 0) size = '8';
      if (strncmp(type + 2, "32", 2) == 0) size = '4';
    }
    // One past the most a signature has: a mismatch all the same.
    if (count <= WEFT_CUDA_DOUBLE_MAX_PARAMS) sizes[count++] = size;
  }
  sizes[count] = '\0';
}

// Collects the `.entry NAME(` (".visible .entry" too) outside comments,
// with their parameter sizes. INVALID_IMAGE when the text is not PTX (no
// .version or .target directive).
static CUresult weft_cuda_double_scan_ptx(
    const char* text, weft_cuda_double_entry_t** out_entries,
    size_t* out_count) {
  if (!strstr(text, ".version") || !strstr(text, ".target")) {
    return CUDA_ERROR_INVALID_IMAGE;
  }
  weft_cuda_double_entry_t* entries = NULL;
  size_t count = 0;
  CUresult result = CUDA_SUCCESS;
  const char* p = text;
  while (*p && result == CUDA_SUCCESS) {
    if (p[0] == '/' && p[1] == '/') {
      while (*p && *p != '\n') ++p;
      continue;
    }
    if (p[0] == '/' && p[1] == '*') {
      const char* end = strstr(p + 2, "*/");
      p = end ? end + 2 : p + strlen(p);
      continue;
    }
    bool token_start = p == text || weft_cuda_double_is_space(p[-1]);
    if (!token_start || strncmp(p, ".entry", 6) != 0 ||
        !weft_cuda_double_is_space(p[6])) {
      ++p;
      continue;
    }
    p += 6;
    while (weft_cuda_double_is_space(*p)) ++p;
    const char* name = p;
    while (weft_cuda_double_is_identifier_char(*p)) ++p;
    size_t length = (size_t)(p - name);
    while (weft_cuda_double_is_space(*p)) ++p;
    if (length == 0 || *p != '(') continue;
    char sizes[WEFT_CUDA_DOUBLE_MAX_PARAMS + 2];
    weft_cuda_double_scan_params(p + 1, sizes);
    weft_cuda_double_entry_t* grown = (weft_cuda_double_entry_t*)realloc(
        entries, (count + 1) * sizeof(*entries));
    if (!grown) {
      result = CUDA_ERROR_OUT_OF_MEMORY;
      break;
    }
    entries = grown;
    entries[count].name = strndup(name, length);
    entries[count].param_sizes = strdup(sizes);
    ++count;
    if (!entries[count - 1].name || !entries[count - 1].param_sizes) {
      result = CUDA_ERROR_OUT_OF_MEMORY;
    }
  }
  if (result == CUDA_SUCCESS) {
    *out_entries = entries;
    *out_count = count;
  } else {
    weft_cuda_double_free_entries(entries, count);
  }
  return result;
}

// INVALID_PTX when an entry the double has a host implementation of takes
// parameters of other sizes than the implementation's signature: the .cu
// and the host function disagree, and a launch would pass garbage.
static CUresult weft_cuda_double_check_signatures(
    const weft_cuda_double_entry_t* entries, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    const weft_cuda_double_kernel_t* kernel =
        weft_cuda_double__find_kernel(entries[i].name);
    if (!kernel) continue;
    char expected[WEFT_CUDA_DOUBLE_MAX_PARAMS + 1];
    size_t length = strlen(kernel->signature);
    for (size_t j = 0; j < length && j < WEFT_CUDA_DOUBLE_MAX_PARAMS; ++j) {
      expected[j] = kernel->signature[j] == '4' ? '4' : '8';
    }
    expected[length < WEFT_CUDA_DOUBLE_MAX_PARAMS
                 ? length
                 : WEFT_CUDA_DOUBLE_MAX_PARAMS] = '\0';
    if (strcmp(expected, entries[i].param_sizes) != 0) {
      fprintf(stderr,
              "weft CUDA test double: PTX entry %s takes parameters of "
              "sizes \"%s\"; its host implementation's signature \"%s\" "
              "means \"%s\"\n",
              entries[i].name, entries[i].param_sizes, kernel->signature,
              expected);
      return CUDA_ERROR_INVALID_PTX;
    }
  }
  return CUDA_SUCCESS;
}

//===----------------------------------------------------------------------===//
// Modules and functions
//===----------------------------------------------------------------------===//

static bool weft_cuda_double_module_is_valid(CUmodule module) {
  return module && module->magic == WEFT_CUDA_DOUBLE_MAGIC_MODULE;
}

static bool weft_cuda_double_function_is_valid(CUfunction function) {
  return function && function->magic == WEFT_CUDA_DOUBLE_MAGIC_FUNCTION;
}

WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuModuleLoadData(CUmodule* module,
                                                          const void* image) {
  // A fatbin's magic is 0xBA55ED50 as a little-endian uint32; a cubin is
  // an ELF file.
  static const unsigned char kFatbinMagic[4] = {0x50, 0xED, 0x55, 0xBA};
  static const unsigned char kElfMagic[4] = {0x7F, 'E', 'L', 'F'};
  CUcontext context = NULL;
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuModuleLoadData, &context);
  if (result == CUDA_SUCCESS && (!module || !image)) {
    result = CUDA_ERROR_INVALID_VALUE;
  }
  if (result == CUDA_SUCCESS &&
      (weft_cuda_double_has_magic(image, kFatbinMagic, sizeof(kFatbinMagic)) ||
       weft_cuda_double_has_magic(image, kElfMagic, sizeof(kElfMagic)))) {
    result = CUDA_ERROR_NO_BINARY_FOR_GPU;
  }
  weft_cuda_double_entry_t* entries = NULL;
  size_t entry_count = 0;
  if (result == CUDA_SUCCESS) {
    result =
        weft_cuda_double_scan_ptx((const char*)image, &entries, &entry_count);
  }
  CUmodule loaded = NULL;
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double_check_signatures(entries, entry_count);
    if (result == CUDA_SUCCESS) {
      loaded = (CUmodule)calloc(1, sizeof(*loaded));
      if (!loaded) result = CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (result != CUDA_SUCCESS) {
      weft_cuda_double_free_entries(entries, entry_count);
    }
  }
  if (result == CUDA_SUCCESS) {
    loaded->magic = WEFT_CUDA_DOUBLE_MAGIC_MODULE;
    loaded->context = context;
    pthread_mutex_init(&loaded->mutex, NULL);
    loaded->entries = entries;
    loaded->entry_count = entry_count;
    *module = loaded;
  }
  return result;
}

// Launches already queued keep running: they hold the host function, not
// the module.
WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuModuleUnload(CUmodule hmod) {
  CUcontext context = NULL;
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuModuleUnload, &context);
  if (result == CUDA_SUCCESS && !weft_cuda_double_module_is_valid(hmod)) {
    result = CUDA_ERROR_INVALID_VALUE;
  }
  if (result == CUDA_SUCCESS) {
    hmod->magic = 0;
    struct CUfunc_st* function = hmod->functions;
    while (function) {
      struct CUfunc_st* next = function->next;
      function->magic = 0;
      free(function);
      function = next;
    }
    weft_cuda_double_free_entries(hmod->entries, hmod->entry_count);
    pthread_mutex_destroy(&hmod->mutex);
    free(hmod);
  }
  return result;
}

// NOT_FOUND unless |name| is an .entry of the module and the double has a
// host implementation of it. The same name gives the same handle.
WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuModuleGetFunction(CUfunction* hfunc,
                                                             CUmodule hmod,
                                                             const char* name) {
  CUcontext context = NULL;
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuModuleGetFunction, &context);
  if (result == CUDA_SUCCESS && (!hfunc || !name)) {
    result = CUDA_ERROR_INVALID_VALUE;
  }
  if (result == CUDA_SUCCESS && !weft_cuda_double_module_is_valid(hmod)) {
    result = CUDA_ERROR_INVALID_HANDLE;
  }
  if (result != CUDA_SUCCESS) return result;

  pthread_mutex_lock(&hmod->mutex);
  struct CUfunc_st* function = hmod->functions;
  while (function && strcmp(function->kernel->name, name) != 0) {
    function = function->next;
  }
  if (!function) {
    bool is_entry = false;
    for (size_t i = 0; i < hmod->entry_count; ++i) {
      if (strcmp(hmod->entries[i].name, name) == 0) is_entry = true;
    }
    const weft_cuda_double_kernel_t* kernel =
        is_entry ? weft_cuda_double__find_kernel(name) : NULL;
    if (!kernel) {
      result = CUDA_ERROR_NOT_FOUND;
    } else {
      function = (struct CUfunc_st*)calloc(1, sizeof(*function));
      if (!function) result = CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (result == CUDA_SUCCESS) {
      function->magic = WEFT_CUDA_DOUBLE_MAGIC_FUNCTION;
      function->module = hmod;
      function->kernel = kernel;
      function->max_dynamic_shared_size =
          WEFT_CUDA_DOUBLE_DEFAULT_DYNAMIC_SHARED;
      function->next = hmod->functions;
      hmod->functions = function;
    }
  }
  pthread_mutex_unlock(&hmod->mutex);
  if (result == CUDA_SUCCESS) *hfunc = function;
  return result;
}

// Only CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, up to the opt-in
// limit.
WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI
cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value) {
  CUcontext context = NULL;
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuFuncSetAttribute, &context);
  if (result == CUDA_SUCCESS && !weft_cuda_double_function_is_valid(hfunc)) {
    result = CUDA_ERROR_INVALID_HANDLE;
  }
  if (result == CUDA_SUCCESS &&
      (attrib != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES || value < 0 ||
       value > WEFT_CUDA_DOUBLE_MAX_DYNAMIC_SHARED)) {
    result = CUDA_ERROR_INVALID_VALUE;
  }
  if (result == CUDA_SUCCESS) {
    pthread_mutex_lock(&hfunc->module->mutex);
    hfunc->max_dynamic_shared_size = value;
    pthread_mutex_unlock(&hfunc->module->mutex);
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Launches
//===----------------------------------------------------------------------===//

// The bytes parameter kind |kind| of a signature takes; 0 for an unknown
// kind (a broken registry entry).
static size_t weft_cuda_double_param_size(char kind) {
  switch (kind) {
    case 'p':
      return sizeof(void*);
    case '8':
      return sizeof(uint64_t);
    case '4':
      return sizeof(uint32_t);
    default:
      return 0;
  }
}

CUresult weft_cuda_double__launch_capture(
    CUcontext context, CUfunction function, unsigned int grid_x,
    unsigned int grid_y, unsigned int grid_z, unsigned int block_x,
    unsigned int block_y, unsigned int block_z, unsigned int shared_memory_size,
    void** kernel_params, void** extra, weft_cuda_double_launch_t* out_launch) {
  if (!weft_cuda_double_function_is_valid(function)) {
    return CUDA_ERROR_INVALID_HANDLE;
  }
  if (function->module->context != context) return CUDA_ERROR_INVALID_CONTEXT;
  // Zero-sized or oversized shapes, as the real driver checks them.
  uint64_t threads = (uint64_t)block_x * block_y * block_z;
  if (grid_x == 0 || grid_y == 0 || grid_z == 0 || threads == 0 ||
      threads > 1024 || block_x > 1024 || block_y > 1024 || block_z > 64 ||
      grid_x > 2147483647u || grid_y > 65535 || grid_z > 65535) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  pthread_mutex_lock(&function->module->mutex);
  int max_shared = function->max_dynamic_shared_size;
  pthread_mutex_unlock(&function->module->mutex);
  if (shared_memory_size > (unsigned int)max_shared) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  // Parameters come through kernelParams only; an |extra| that is more
  // than its terminator is a way of passing them the double lacks.
  if (extra && extra[0] != CU_LAUNCH_PARAM_END) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  const char* signature = function->kernel->signature;
  size_t param_count = strlen(signature);
  if (param_count > WEFT_CUDA_DOUBLE_MAX_PARAMS ||
      (param_count && !kernel_params)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  memset(out_launch, 0, sizeof(*out_launch));
  for (size_t i = 0; i < param_count; ++i) {
    size_t size = weft_cuda_double_param_size(signature[i]);
    if (size == 0 || !kernel_params[i]) return CUDA_ERROR_INVALID_VALUE;
    // The value now: the caller may reuse its storage after the call.
    memcpy(&out_launch->params[i], kernel_params[i], size);
  }
  out_launch->kernel = function->kernel;
  out_launch->grid_dim = (weft_cuda_double_dim3_t){grid_x, grid_y, grid_z};
  out_launch->block_dim = (weft_cuda_double_dim3_t){block_x, block_y, block_z};
  out_launch->shared_memory_size = shared_memory_size;
  out_launch->param_count = (uint32_t)param_count;
  return CUDA_SUCCESS;
}

// Blocks run one after another, x fastest; each gets its own zeroed
// shared memory and its own copy of the parameters.
void weft_cuda_double__launch_run(const weft_cuda_double_launch_t* launch) {
  void* shared_memory = NULL;
  if (launch->shared_memory_size) {
    shared_memory = malloc(launch->shared_memory_size);
    if (!shared_memory) {
      // A host out of memory mid-run: nothing a stream task can report.
      fprintf(stderr,
              "weft CUDA test double: %s: no host memory for %u "
              "bytes of shared memory\n",
              launch->kernel->name, launch->shared_memory_size);
      abort();
    }
  }
  uint64_t params[WEFT_CUDA_DOUBLE_MAX_PARAMS];
  void* param_pointers[WEFT_CUDA_DOUBLE_MAX_PARAMS];
  for (uint32_t i = 0; i < launch->param_count; ++i) {
    param_pointers[i] = &params[i];
  }
  weft_cuda_double_block_t block = {
      .grid_dim = launch->grid_dim,
      .block_dim = launch->block_dim,
      .shared_memory = shared_memory,
      .shared_memory_size = launch->shared_memory_size,
  };
  for (uint32_t z = 0; z < launch->grid_dim.z; ++z) {
    for (uint32_t y = 0; y < launch->grid_dim.y; ++y) {
      for (uint32_t x = 0; x < launch->grid_dim.x; ++x) {
        block.block_idx = (weft_cuda_double_dim3_t){x, y, z};
        if (shared_memory) memset(shared_memory, 0, launch->shared_memory_size);
        memcpy(params, launch->params, launch->param_count * sizeof(params[0]));
        if (launch->kernel->twin) {
          weft_cuda_double__twin_run(launch->kernel, &block, params);
        } else {
          launch->kernel->fn(&block, param_pointers);
        }
      }
    }
  }
  free(shared_memory);
}

static void weft_cuda_double_launch_task_run(weft_cuda_double_task_t* base) {
  weft_cuda_double_launch_task_t* task = (weft_cuda_double_launch_task_t*)base;
  weft_cuda_double__launch_run(&task->launch);
}

WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuLaunchKernel(
    CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
    unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
    unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
    void** kernelParams, void** extra) {
  CUcontext context = NULL;
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuLaunchKernel, &context);
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double__check_stream(hStream, context);
  }
  weft_cuda_double_launch_task_t* task = NULL;
  if (result == CUDA_SUCCESS) {
    task = (weft_cuda_double_launch_task_t*)weft_cuda_double__task_allocate(
        sizeof(*task), weft_cuda_double_launch_task_run);
    if (!task) result = CUDA_ERROR_OUT_OF_MEMORY;
  }
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double__launch_capture(
        context, f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY,
        blockDimZ, sharedMemBytes, kernelParams, extra, &task->launch);
  }
  if (result == CUDA_SUCCESS) {
    weft_cuda_double__stream_enqueue(hStream, &task->base);
    weft_cuda_double__count_launches(1);
  } else {
    free(task);
  }
  return result;
}
