// weft's CUDA test double: the host implementations of the kernels it can
// run. A TEST DOUBLE, never shipped or installed (see cuda_double.h).
//
// The CTS's CUDA kernels (tests/cts/cuda/cts_kernels.cu), line for line:
// each function below is its kernel's body with the loop over the block's
// threads made explicit. They follow the parameter convention of
// include/weft/executable.h: binding pointers, binding lengths (uint64),
// constants (uint32), then a uint32_t* status of four words where the
// first failing block stores its CPU return value, then its block index.
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_double_impl.h"

// weft_fail of cts_kernels.cu: the first report wins.
static void weft_cuda_double_report(const weft_cuda_double_block_t* block,
                                    uint32_t* status, uint32_t code) {
  uint32_t expected = 0;
  if (__atomic_compare_exchange_n(status, &expected, code, false,
                                  __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    status[1] = block->block_idx.x;
    status[2] = block->block_idx.y;
    status[3] = block->block_idx.z;
  }
}

static void* weft_cuda_double_param_pointer(void* const* params, int index) {
  void* value;
  memcpy(&value, params[index], sizeof(value));
  return value;
}

static uint64_t weft_cuda_double_param_u64(void* const* params, int index) {
  uint64_t value;
  memcpy(&value, params[index], sizeof(value));
  return value;
}

static uint32_t weft_cuda_double_param_u32(void* const* params, int index) {
  uint32_t value;
  memcpy(&value, params[index], sizeof(value));
  return value;
}

static float weft_cuda_double_bits_to_f32(uint32_t bits) {
  float value;
  memcpy(&value, &bits, sizeof(value));
  return value;
}

// The block's threads along x (the CTS kernels are one-dimensional).
static uint32_t weft_cuda_double_threads_x(
    const weft_cuda_double_block_t* block) {
  return block->block_dim.x;
}

// "pp88444p": in, out, in_length, out_length, scale (f32 bits), offset
// (f32 bits), count, status. out[i] = in[i] * scale + offset for i < count,
// one element per thread; status 2 when a binding is too small for count.
static void weft_cuda_double_scale_offset(const weft_cuda_double_block_t* block,
                                          void* const* params) {
  const float* in = (const float*)weft_cuda_double_param_pointer(params, 0);
  float* out = (float*)weft_cuda_double_param_pointer(params, 1);
  uint64_t in_length = weft_cuda_double_param_u64(params, 2);
  uint64_t out_length = weft_cuda_double_param_u64(params, 3);
  float scale =
      weft_cuda_double_bits_to_f32(weft_cuda_double_param_u32(params, 4));
  float offset =
      weft_cuda_double_bits_to_f32(weft_cuda_double_param_u32(params, 5));
  uint32_t count = weft_cuda_double_param_u32(params, 6);
  uint32_t* status = (uint32_t*)weft_cuda_double_param_pointer(params, 7);
  for (uint32_t t = 0; t < weft_cuda_double_threads_x(block); ++t) {
    if ((uint64_t)count * sizeof(float) > in_length ||
        (uint64_t)count * sizeof(float) > out_length) {
      weft_cuda_double_report(block, status, 2);
      continue;
    }
    uint32_t i = block->block_idx.x * block->block_dim.x + t;
    if (i < count) out[i] = in[i] * scale + offset;
  }
}

// "p844p": data, length, first, count, status. data[i] = abs(data[i]) for
// i in [first, first + count), one element per thread; status 2 when the
// binding is too small.
static void weft_cuda_double_abs_range(const weft_cuda_double_block_t* block,
                                       void* const* params) {
  int32_t* data = (int32_t*)weft_cuda_double_param_pointer(params, 0);
  uint64_t length = weft_cuda_double_param_u64(params, 1);
  uint32_t first = weft_cuda_double_param_u32(params, 2);
  uint32_t count = weft_cuda_double_param_u32(params, 3);
  uint32_t* status = (uint32_t*)weft_cuda_double_param_pointer(params, 4);
  uint32_t end = first + count;  // wraps as the CPU kernel's does
  for (uint32_t t = 0; t < weft_cuda_double_threads_x(block); ++t) {
    if ((uint64_t)end * sizeof(int32_t) > length) {
      weft_cuda_double_report(block, status, 2);
      continue;
    }
    uint32_t i = first + block->block_idx.x * block->block_dim.x + t;
    if (i < end) {
      // abs without C's overflow: INT32_MIN stays INT32_MIN, as on a GPU.
      int32_t value = data[i];
      data[i] = value < 0 ? (int32_t)(0u - (uint32_t)value) : value;
    }
  }
}

// "p8p": out, length, status. Block (x, y, z) writes (x, y, z, flat) at
// its flat index; status 2 when the binding is too small.
static void weft_cuda_double_write_ids(const weft_cuda_double_block_t* block,
                                       void* const* params) {
  uint32_t* out = (uint32_t*)weft_cuda_double_param_pointer(params, 0);
  uint64_t length = weft_cuda_double_param_u64(params, 1);
  uint32_t* status = (uint32_t*)weft_cuda_double_param_pointer(params, 2);
  const weft_cuda_double_dim3_t* id = &block->block_idx;
  const weft_cuda_double_dim3_t* n = &block->grid_dim;
  uint32_t flat = (id->z * n->y + id->y) * n->x + id->x;
  for (uint32_t t = 0; t < weft_cuda_double_threads_x(block); ++t) {
    if ((uint64_t)(flat + 1) * 4 * sizeof(uint32_t) > length) {
      weft_cuda_double_report(block, status, 2);
      continue;
    }
    out[flat * 4 + 0] = id->x;
    out[flat * 4 + 1] = id->y;
    out[flat * 4 + 2] = id->z;
    out[flat * 4 + 3] = flat;
  }
}

// "4p": fail_x, status. Block x == fail_x stores 1.
static void weft_cuda_double_fail(const weft_cuda_double_block_t* block,
                                  void* const* params) {
  uint32_t fail_x = weft_cuda_double_param_u32(params, 0);
  uint32_t* status = (uint32_t*)weft_cuda_double_param_pointer(params, 1);
  if (block->block_idx.x == fail_x) weft_cuda_double_report(block, status, 1);
}

static const weft_cuda_double_kernel_t weft_cuda_double_kernels[] = {
    {"scale_offset", "pp88444p", weft_cuda_double_scale_offset, NULL},
    {"abs_range", "p844p", weft_cuda_double_abs_range, NULL},
    {"write_ids", "p8p", weft_cuda_double_write_ids, NULL},
    {"fail", "4p", weft_cuda_double_fail, NULL},
};

// CPU twins (weft_cuda_double_register_twins): each allocated on its own
// and never freed, since functions of loaded modules point at them.
static pthread_mutex_t weft_cuda_double_twins_mutex = PTHREAD_MUTEX_INITIALIZER;
static weft_cuda_double_kernel_t** weft_cuda_double_twins;
static size_t weft_cuda_double_twin_count;
static size_t weft_cuda_double_twin_capacity;

static const weft_cuda_double_kernel_t* weft_cuda_double_find_builtin(
    const char* name) {
  size_t count =
      sizeof(weft_cuda_double_kernels) / sizeof(weft_cuda_double_kernels[0]);
  for (size_t i = 0; i < count; ++i) {
    if (strcmp(weft_cuda_double_kernels[i].name, name) == 0) {
      return &weft_cuda_double_kernels[i];
    }
  }
  return NULL;
}

// Called with the twins' mutex held.
static const weft_cuda_double_kernel_t* weft_cuda_double_find_twin_locked(
    const char* name) {
  for (size_t i = 0; i < weft_cuda_double_twin_count; ++i) {
    if (strcmp(weft_cuda_double_twins[i]->name, name) == 0) {
      return weft_cuda_double_twins[i];
    }
  }
  return NULL;
}

// WEFT_CUDA_DOUBLE_TWINS (cuda_double.h): each "path:symbol" of the list
// dlopened and its query's library registered as twins. A library that
// cannot be loaded or gives no table aborts the process: a broken test.
static void weft_cuda_double_register_env_twins(void) {
  const char* value = getenv("WEFT_CUDA_DOUBLE_TWINS");
  if (!value || !value[0]) return;
  char* list = strdup(value);
  if (!list) abort();
  char* saved = NULL;
  for (char* entry = strtok_r(list, ";", &saved); entry;
       entry = strtok_r(NULL, ";", &saved)) {
    char* colon = strrchr(entry, ':');
    if (!colon || colon == entry || !colon[1]) {
      fprintf(stderr,
              "weft CUDA test double: WEFT_CUDA_DOUBLE_TWINS entry \"%s\" "
              "is not PATH:SYMBOL\n",
              entry);
      abort();
    }
    *colon = '\0';
    const char* symbol = colon + 1;
    // Never closed: the twins point into the library.
    void* library = dlopen(entry, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      fprintf(stderr, "weft CUDA test double: WEFT_CUDA_DOUBLE_TWINS: %s\n",
              dlerror());
      abort();
    }
    weft_kernel_library_query_fn_t query =
        (weft_kernel_library_query_fn_t)dlsym(library, symbol);
    const weft_kernel_library_t* table =
        query ? query(WEFT_KERNEL_ABI_VERSION) : NULL;
    if (!table) {
      fprintf(stderr,
              "weft CUDA test double: WEFT_CUDA_DOUBLE_TWINS: %s in %s %s\n",
              symbol, entry,
              query ? "gives no library for WEFT_KERNEL_ABI_VERSION"
                    : "is not exported");
      abort();
    }
    weft_cuda_double_register_twins(table);
  }
  free(list);
}

static pthread_once_t weft_cuda_double_env_twins_once = PTHREAD_ONCE_INIT;

const weft_cuda_double_kernel_t* weft_cuda_double__find_kernel(
    const char* name) {
  pthread_once(&weft_cuda_double_env_twins_once,
               weft_cuda_double_register_env_twins);
  const weft_cuda_double_kernel_t* kernel = weft_cuda_double_find_builtin(name);
  if (kernel) return kernel;
  pthread_mutex_lock(&weft_cuda_double_twins_mutex);
  kernel = weft_cuda_double_find_twin_locked(name);
  pthread_mutex_unlock(&weft_cuda_double_twins_mutex);
  return kernel;
}

// A twin of |def|: its signature from the binding and constant counts.
static weft_cuda_double_kernel_t* weft_cuda_double_twin_create(
    const weft_kernel_def_t* def) {
  const size_t params = 2 * (size_t)def->binding_count + def->constant_count + 1;
  if (params > WEFT_CUDA_DOUBLE_MAX_PARAMS) {
    fprintf(stderr,
            "weft CUDA test double: twin %s takes %zu parameters (at most "
            "%d)\n",
            def->name, params, WEFT_CUDA_DOUBLE_MAX_PARAMS);
    abort();
  }
  weft_cuda_double_kernel_t* twin =
      (weft_cuda_double_kernel_t*)calloc(1, sizeof(*twin) + params + 1);
  if (!twin) abort();
  char* signature = (char*)(twin + 1);
  size_t at = 0;
  for (uint32_t i = 0; i < def->binding_count; ++i) signature[at++] = 'p';
  for (uint32_t i = 0; i < def->binding_count; ++i) signature[at++] = '8';
  for (uint32_t i = 0; i < def->constant_count; ++i) signature[at++] = '4';
  signature[at++] = 'p';
  signature[at] = '\0';
  twin->name = def->name;
  twin->signature = signature;
  twin->twin = def;
  return twin;
}

WEFT_CUDA_DOUBLE_EXPORT void weft_cuda_double_register_twins(
    const weft_kernel_library_t* library) {
  pthread_mutex_lock(&weft_cuda_double_twins_mutex);
  for (uint32_t i = 0; i < library->kernel_count; ++i) {
    const weft_kernel_def_t* def = &library->kernels[i];
    if (weft_cuda_double_find_builtin(def->name) ||
        weft_cuda_double_find_twin_locked(def->name)) {
      continue;
    }
    if (weft_cuda_double_twin_count == weft_cuda_double_twin_capacity) {
      size_t capacity =
          weft_cuda_double_twin_capacity ? 2 * weft_cuda_double_twin_capacity
                                         : 16;
      weft_cuda_double_kernel_t** grown = (weft_cuda_double_kernel_t**)realloc(
          weft_cuda_double_twins, capacity * sizeof(*grown));
      if (!grown) abort();
      weft_cuda_double_twins = grown;
      weft_cuda_double_twin_capacity = capacity;
    }
    weft_cuda_double_twins[weft_cuda_double_twin_count++] =
        weft_cuda_double_twin_create(def);
  }
  pthread_mutex_unlock(&weft_cuda_double_twins_mutex);
}

void weft_cuda_double__twin_run(const weft_cuda_double_kernel_t* kernel,
                                const weft_cuda_double_block_t* block,
                                const uint64_t* params) {
  const weft_kernel_def_t* def = kernel->twin;
  const uint32_t bindings = def->binding_count;
  void* pointers[WEFT_CUDA_DOUBLE_MAX_PARAMS];
  size_t lengths[WEFT_CUDA_DOUBLE_MAX_PARAMS];
  uint32_t constants[WEFT_CUDA_DOUBLE_MAX_PARAMS];
  for (uint32_t i = 0; i < bindings; ++i) {
    pointers[i] = (void*)(uintptr_t)params[i];
    lengths[i] = (size_t)params[bindings + i];
  }
  for (uint32_t i = 0; i < def->constant_count; ++i) {
    constants[i] = (uint32_t)params[2 * bindings + i];
  }
  uint32_t* status =
      (uint32_t*)(uintptr_t)params[2 * bindings + def->constant_count];
  const weft_dispatch_state_t dispatch = {
      .workgroup_count = {block->grid_dim.x, block->grid_dim.y,
                          block->grid_dim.z},
      .workgroup_size = {def->workgroup_size[0], def->workgroup_size[1],
                         def->workgroup_size[2]},
      .constant_count = def->constant_count,
      .constants = constants,
      .binding_count = bindings,
      .binding_ptrs = pointers,
      .binding_lengths = lengths,
  };
  const weft_workgroup_state_t workgroup = {
      .workgroup_id = {block->block_idx.x, block->block_idx.y,
                       block->block_idx.z},
      .processor_id = 0,
      .local_memory = block->shared_memory,
      .local_memory_size = block->shared_memory_size,
  };
  const int result = def->fn(&dispatch, &workgroup);
  if (result != 0) {
    weft_cuda_double_report(block, status, (uint32_t)result);
  }
}
