// weft cuda driver: executables (see cuda_executable.h).
#include "drivers/cuda/cuda_executable.h"

#include <stdio.h>
#include <string.h>

typedef struct weft_cuda_executable_t {
  weft_executable_t base;
  weft_cuda_event_pool_t* pool;  // retained: the context and the symbols
  CUmodule module;
  // One allocation after the struct: the infos, the kernels, then the
  // library name and the kernel names.
  weft_kernel_info_t* infos;
  weft_cuda_kernel_t* kernels;
} weft_cuda_executable_t;

static void weft_cuda_executable_destroy(weft_executable_t* base);

static const weft_executable_vtable_t kWeftCudaExecutableVtable = {
    .destroy = weft_cuda_executable_destroy,
};

static weft_status_t weft_cuda_executable_check_source(
    const weft_executable_source_t* source, const char* name) {
  if (!source->data || source->data_size == 0) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "cuda executable '%s': the %s source has no data",
                       name, weft_executable_format_name(source->format));
  }
  weft_status_t status =
      weft_executable_check_kernel_table(source, "cuda", name);
  if (!weft_status_is_ok(status)) return status;
  for (uint32_t i = 0; i < source->kernel_count; ++i) {
    const weft_kernel_def_t* def = &source->kernels[i];
    if (!def->workgroup_size[0] || !def->workgroup_size[1] ||
        !def->workgroup_size[2]) {
      return WEFT_STATUS(INVALID_ARGUMENT,
                         "cuda executable '%s': kernel '%s' has block size "
                         "%ux%ux%u (every dimension must be at least 1)",
                         name, def->name, def->workgroup_size[0],
                         def->workgroup_size[1], def->workgroup_size[2]);
    }
  }
  return WEFT_OK;
}

weft_status_t weft_cuda_executable_create(weft_cuda_event_pool_t* pool,
                                          weft_domain_t domain,
                                          weft_executable_source_t source,
                                          weft_allocator_t allocator,
                                          weft_executable_t** out_executable) {
  *out_executable = NULL;
  const char* name = source.name && source.name[0] ? source.name : "cuda";
  weft_status_t status = weft_cuda_executable_check_source(&source, name);
  // PTX must be NUL-terminated for the driver: copy it when it is not.
  const bool copy_ptx =
      source.format == WEFT_EXECUTABLE_FORMAT_CUDA_PTX &&
      source.data_size > 0 &&
      ((const char*)source.data)[source.data_size - 1] != '\0';
  const size_t strings_size =
      weft_executable_kernel_table_strings_size(&source, name);
  const size_t infos_size = source.kernel_count * sizeof(weft_kernel_info_t);
  const size_t kernels_size = source.kernel_count * sizeof(weft_cuda_kernel_t);
  const size_t ptx_size = copy_ptx ? source.data_size + 1 : 0;
  weft_cuda_executable_t* executable = NULL;
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc(
        allocator,
        sizeof(*executable) + infos_size + kernels_size + strings_size +
            ptx_size,
        (void**)&executable);
  }
  if (!weft_status_is_ok(status)) return status;
  uint8_t* cursor = (uint8_t*)(executable + 1);
  executable->infos = (weft_kernel_info_t*)cursor;
  cursor += infos_size;
  executable->kernels = (weft_cuda_kernel_t*)cursor;
  cursor += kernels_size;
  const char* library_name = weft_executable_copy_kernel_table(
      &source, name, (char*)cursor, executable->infos);
  const void* image = source.data;
  if (copy_ptx) {
    char* ptx = (char*)cursor + strings_size;
    memcpy(ptx, source.data, source.data_size);
    ptx[source.data_size] = '\0';
    image = ptx;
  }
  const weft_cuda_symbols_t* symbols = pool->symbols;
  executable->pool = pool;
  executable->module = NULL;
  char call[160];
  snprintf(call, sizeof(call), "cuModuleLoadData('%s', %zu bytes of %s)",
           library_name, source.data_size,
           weft_executable_format_name(source.format));
  status = weft_cuda_result_to_status(
      symbols, symbols->cuModuleLoadData(&executable->module, image), call);
  for (uint32_t i = 0; weft_status_is_ok(status) && i < source.kernel_count;
       ++i) {
    const weft_kernel_def_t* def = &source.kernels[i];
    const char* kernel_name = executable->infos[i].name;
    weft_cuda_kernel_t* kernel = &executable->kernels[i];
    memcpy(kernel->block_size, def->workgroup_size,
           sizeof(kernel->block_size));
    kernel->shared_memory_size = def->local_memory_size;
    kernel->binding_count = def->binding_count;
    kernel->constant_count = def->constant_count;
    snprintf(call, sizeof(call), "cuModuleGetFunction('%s' in '%s')",
             kernel_name, library_name);
    status = weft_cuda_result_to_status(
        symbols,
        symbols->cuModuleGetFunction(&kernel->function, executable->module,
                                     kernel_name),
        call);
    if (weft_status_is_ok(status) && kernel->shared_memory_size > 48 * 1024) {
      // Past the default limit a kernel must opt in to more.
      status = WEFT_CUDA_CALL(
          symbols,
          cuFuncSetAttribute(kernel->function,
                             CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                             (int)kernel->shared_memory_size));
    }
  }
  if (weft_status_is_ok(status)) {
    weft_executable_initialize(&kWeftCudaExecutableVtable, allocator, domain,
                               source.format, library_name,
                               source.kernel_count, executable->infos,
                               &executable->base);
    weft_atomic_fetch_add(&pool->ref_count, 1u, memory_order_relaxed);
    *out_executable = &executable->base;
  } else {
    if (executable->module) symbols->cuModuleUnload(executable->module);
    weft_allocator_free(allocator, executable);
  }
  return status;
}

static void weft_cuda_executable_destroy(weft_executable_t* base) {
  weft_cuda_executable_t* executable = (weft_cuda_executable_t*)base;
  weft_cuda_event_pool_t* pool = executable->pool;
  const weft_cuda_symbols_t* symbols = pool->symbols;
  if (symbols->cuCtxPushCurrent(pool->context) == CUDA_SUCCESS) {
    symbols->cuModuleUnload(executable->module);
    CUcontext popped = NULL;
    symbols->cuCtxPopCurrent(&popped);
  }
  weft_allocator_free(base->allocator, executable);
  weft_cuda_event_pool_release(pool);
}

const weft_cuda_kernel_t* weft_cuda_executable_kernel(
    const weft_executable_t* executable, uint32_t ordinal) {
  if (weft_executable_vtable(executable) != &kWeftCudaExecutableVtable) {
    return NULL;
  }
  return &((const weft_cuda_executable_t*)executable)->kernels[ordinal];
}
