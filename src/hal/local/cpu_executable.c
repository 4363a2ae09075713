// weft: executables of CPU kernel libraries (see cpu_executable.h).
#include "hal/local/cpu_executable.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "hal/executable_impl.h"

typedef struct weft_cpu_executable_t {
  weft_executable_t base;
  const weft_kernel_library_t* library;
  // dlopen handle for shared objects (NULL for static libraries).
  void* library_handle;
  weft_kernel_info_t kernels[];  // one per library kernel
} weft_cpu_executable_t;

static void weft_cpu_executable_destroy(weft_executable_t* base);

static const weft_executable_vtable_t kWeftCpuExecutableVtable = {
    .destroy = weft_cpu_executable_destroy,
};

// Checks one kernel definition; |ordinal| and the library name and |origin|
// are for the message.
static weft_status_t weft_cpu_executable_validate_kernel(
    const weft_kernel_library_t* library, uint32_t ordinal,
    const char* origin) {
  const weft_kernel_def_t* kernel = &library->kernels[ordinal];
  weft_status_t status = WEFT_OK;
  if (!kernel->name || !kernel->name[0]) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "kernel %u of library '%s' (%s) has no name", ordinal,
                         library->name, origin);
  } else if (!kernel->fn) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "kernel '%s' (ordinal %u) of library '%s' (%s) has "
                         "no function",
                         kernel->name, ordinal, library->name, origin);
  } else if (kernel->workgroup_size[0] == 0 || kernel->workgroup_size[1] == 0 ||
             kernel->workgroup_size[2] == 0) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "kernel '%s' (ordinal %u) of library '%s' (%s) has "
                         "workgroup size (%u, %u, %u); every dimension must "
                         "be at least 1",
                         kernel->name, ordinal, library->name, origin,
                         kernel->workgroup_size[0], kernel->workgroup_size[1],
                         kernel->workgroup_size[2]);
  }
  for (uint32_t j = 0; weft_status_is_ok(status) && j < ordinal; ++j) {
    if (strcmp(library->kernels[j].name, kernel->name) == 0) {
      status = WEFT_STATUS(INVALID_ARGUMENT,
                           "kernel library '%s' (%s) defines kernel '%s' "
                           "twice (ordinals %u and %u)",
                           library->name, origin, kernel->name, j, ordinal);
    }
  }
  return status;
}

// Checks the table a query function returned. |origin| names where it came
// from for the messages ("a static library" or a shared object's path).
static weft_status_t weft_cpu_executable_validate_library(
    const weft_kernel_library_t* library, const char* origin) {
  weft_status_t status = WEFT_OK;
  if (!library) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "kernel library query of %s returned no table for "
                         "ABI version %u",
                         origin, WEFT_KERNEL_ABI_VERSION);
  } else if (library->abi_version != WEFT_KERNEL_ABI_VERSION) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "kernel library of %s has ABI version %u; weft "
                         "supports version %u",
                         origin, library->abi_version, WEFT_KERNEL_ABI_VERSION);
  } else if (!library->name || !library->name[0]) {
    status = WEFT_STATUS(INVALID_ARGUMENT, "kernel library of %s has no name",
                         origin);
  } else if (library->kernel_count == 0 || !library->kernels) {
    status =
        WEFT_STATUS(INVALID_ARGUMENT, "kernel library '%s' (%s) has no kernels",
                    library->name, origin);
  }
  for (uint32_t i = 0; weft_status_is_ok(status) && i < library->kernel_count;
       ++i) {
    status = weft_cpu_executable_validate_kernel(library, i, origin);
  }
  return status;
}

// Opens the shared object at |path| and finds its query function; on
// success the caller owns |*out_handle|.
static weft_status_t weft_cpu_executable_open(
    const char* path, void** out_handle,
    weft_kernel_library_query_fn_t* out_query) {
  weft_status_t status = WEFT_OK;
  void* handle = NULL;
  if (!path || !path[0]) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "executable_load: path is %s (no shared object "
                         "given)",
                         path ? "empty" : "NULL");
  } else {
    handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  }
  if (weft_status_is_ok(status) && !handle) {
    const char* error = dlerror();
    status = WEFT_STATUS(NOT_FOUND,
                         "executable_load: cannot load kernel library '%s': "
                         "%s",
                         path, error ? error : "unknown loader error");
  }
  weft_kernel_library_query_fn_t query = NULL;
  if (weft_status_is_ok(status)) {
    dlerror();  // clears any stale error before dlsym
    void* symbol = dlsym(handle, WEFT_KERNEL_LIBRARY_QUERY_SYMBOL);
    if (!symbol) {
      const char* error = dlerror();
      status = WEFT_STATUS(NOT_FOUND,
                           "executable_load: kernel library '%s' does not "
                           "export '%s': %s",
                           path, WEFT_KERNEL_LIBRARY_QUERY_SYMBOL,
                           error ? error : "symbol is NULL");
    } else {
      // dlsym returns an object pointer; POSIX guarantees the conversion.
      memcpy(&query, &symbol, sizeof(query));
    }
  }
  if (weft_status_is_ok(status)) {
    *out_handle = handle;
    *out_query = query;
  } else if (handle) {
    dlclose(handle);
  }
  return status;
}

// Allocates the executable around a validated |library|; takes ownership of
// |library_handle| only on success.
static weft_status_t weft_cpu_executable_allocate(
    weft_allocator_t allocator, weft_executable_format_t format,
    const weft_kernel_library_t* library, void* library_handle,
    weft_executable_t** out_executable) {
  weft_cpu_executable_t* executable = NULL;
  weft_status_t status = weft_allocator_malloc(
      allocator,
      sizeof(*executable) +
          (size_t)library->kernel_count * sizeof(weft_kernel_info_t),
      (void**)&executable);
  if (weft_status_is_ok(status)) {
    for (uint32_t i = 0; i < library->kernel_count; ++i) {
      executable->kernels[i].name = library->kernels[i].name;
      executable->kernels[i].binding_count = library->kernels[i].binding_count;
      executable->kernels[i].constant_count =
          library->kernels[i].constant_count;
    }
    executable->library = library;
    executable->library_handle = library_handle;
    weft_executable_initialize(&kWeftCpuExecutableVtable, allocator,
                               WEFT_DOMAIN_HOST, format, library->name,
                               library->kernel_count, executable->kernels,
                               &executable->base);
    *out_executable = &executable->base;
  }
  return status;
}

weft_status_t weft_cpu_executable_create(weft_allocator_t allocator,
                                         const char* device_id,
                                         weft_executable_source_t source,
                                         weft_executable_t** out_executable) {
  weft_status_t status = WEFT_OK;
  weft_kernel_library_query_fn_t query = NULL;
  void* handle = NULL;
  char origin[512];
  if (source.format == WEFT_EXECUTABLE_FORMAT_CPU_STATIC) {
    query = source.query;
    snprintf(origin, sizeof(origin), "a static library");
    if (!query) {
      status = WEFT_STATUS(INVALID_ARGUMENT,
                           "weft_device_create_executable: source.query is "
                           "NULL (a cpu-static source needs the library's "
                           "query function)");
    }
  } else if (source.format == WEFT_EXECUTABLE_FORMAT_CPU_SHARED_OBJECT) {
    snprintf(origin, sizeof(origin), "shared object '%s'",
             source.path ? source.path : "");
    status = weft_cpu_executable_open(source.path, &handle, &query);
  } else {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "weft_device_create_executable: device '%s' does "
                         "not accept executables of format %s (%d); it takes "
                         "cpu-static and cpu-shared-object",
                         device_id, weft_executable_format_name(source.format),
                         (int)source.format);
  }
  const weft_kernel_library_t* library = NULL;
  if (weft_status_is_ok(status)) {
    library = query(WEFT_KERNEL_ABI_VERSION);
    status = weft_cpu_executable_validate_library(library, origin);
  }
  if (weft_status_is_ok(status)) {
    status = weft_cpu_executable_allocate(allocator, source.format, library,
                                          handle, out_executable);
  }
  if (!weft_status_is_ok(status) && handle) dlclose(handle);
  return status;
}

static void weft_cpu_executable_destroy(weft_executable_t* base) {
  weft_cpu_executable_t* executable = (weft_cpu_executable_t*)base;
  void* handle = executable->library_handle;
  weft_allocator_free(base->allocator, executable);
  if (handle) dlclose(handle);
}

const weft_kernel_def_t* weft_cpu_executable_kernel(
    const weft_executable_t* executable, uint32_t ordinal) {
  const weft_kernel_def_t* kernel = NULL;
  if (executable &&
      weft_executable_vtable(executable) == &kWeftCpuExecutableVtable) {
    const weft_cpu_executable_t* cpu_executable =
        (const weft_cpu_executable_t*)executable;
    if (ordinal < cpu_executable->library->kernel_count) {
      kernel = &cpu_executable->library->kernels[ordinal];
    }
  }
  return kernel;
}
