// weft: executables, CPU kernel libraries registered statically or loaded
// from a shared object.
//
// An executable owns nothing of the kernel table: the table lives in the
// library (static storage of the process or of the loaded shared object).
// A loaded library's handle is kept open until the executable is destroyed,
// so the table and every kernel function stay valid while any command buffer
// or queue operation holds a reference.
#include "weft/executable.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "base/arguments.h"
#include "hal/resource.h"

typedef struct weft_executable_vtable_t {
  // Must be first (see resource.h).
  void (*destroy)(weft_executable_t* executable);
} weft_executable_vtable_t;

struct weft_executable_t {
  weft_resource_t resource;
  weft_allocator_t allocator;
  const weft_kernel_library_t* library;
  // dlopen handle for loaded libraries (NULL for static ones).
  void* library_handle;
};

_Static_assert(offsetof(weft_executable_t, resource) == 0,
               "the resource must be at offset 0");

static void weft_executable_destroy(weft_executable_t* executable);

static const weft_executable_vtable_t kExecutableVtable = {
    weft_executable_destroy,
};

// Checks one kernel definition; |ordinal| and the library name and |origin|
// are for the message.
static weft_status_t weft_executable_validate_kernel(
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
static weft_status_t weft_executable_validate_library(
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
    status = weft_executable_validate_kernel(library, i, origin);
  }
  return status;
}

// Allocates the executable around a validated |library|; takes ownership of
// |library_handle| only on success.
static weft_status_t weft_executable_allocate(
    const weft_kernel_library_t* library, void* library_handle,
    weft_allocator_t allocator, weft_executable_t** out_executable) {
  weft_executable_t* executable = NULL;
  weft_status_t status = weft_allocator_malloc(allocator, sizeof(*executable),
                                               (void**)&executable);
  if (weft_status_is_ok(status)) {
    weft_resource_initialize(&kExecutableVtable, &executable->resource);
    executable->allocator = allocator;
    executable->library = library;
    executable->library_handle = library_handle;
    *out_executable = executable;
  }
  return status;
}

weft_status_t weft_executable_create_static(
    weft_kernel_library_query_fn_t query, weft_allocator_t allocator,
    weft_executable_t** out_executable) {
  if (out_executable) *out_executable = NULL;
  weft_status_t status = weft_arguments_require_one(__func__, "query", query);
  if (weft_status_is_ok(status)) {
    status = weft_arguments_require(
        __func__, "out_executable", (const void* const[]){out_executable}, 1);
  }
  const weft_kernel_library_t* library = NULL;
  if (weft_status_is_ok(status)) {
    library = query(WEFT_KERNEL_ABI_VERSION);
    status = weft_executable_validate_library(library, "a static library");
  }
  if (weft_status_is_ok(status)) {
    status = weft_executable_allocate(library, NULL, allocator, out_executable);
  }
  return status;
}

weft_status_t weft_executable_load(const char* path, weft_allocator_t allocator,
                                   weft_executable_t** out_executable) {
  if (out_executable) *out_executable = NULL;
  weft_status_t status =
      weft_arguments_require(__func__, "path,out_executable",
                             (const void* const[]){path, out_executable}, 2);
  void* handle = NULL;
  if (weft_status_is_ok(status) && !path[0]) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "executable_load: path is empty (no shared object "
                         "given)");
  } else if (weft_status_is_ok(status)) {
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
  const weft_kernel_library_t* library = NULL;
  if (weft_status_is_ok(status)) {
    library = query(WEFT_KERNEL_ABI_VERSION);
    char origin[512];
    snprintf(origin, sizeof(origin), "shared object '%s'", path);
    status = weft_executable_validate_library(library, origin);
  }
  if (weft_status_is_ok(status)) {
    status =
        weft_executable_allocate(library, handle, allocator, out_executable);
  }
  if (!weft_status_is_ok(status) && handle) dlclose(handle);
  return status;
}

static void weft_executable_destroy(weft_executable_t* executable) {
  void* handle = executable->library_handle;
  weft_allocator_free(executable->allocator, executable);
  if (handle) dlclose(handle);
}

void weft_executable_retain(weft_executable_t* executable) {
  weft_resource_retain(executable);
}

void weft_executable_release(weft_executable_t* executable) {
  weft_resource_release(executable);
}

const char* weft_executable_name(const weft_executable_t* executable) {
  return executable ? executable->library->name : "";
}

uint32_t weft_executable_kernel_count(const weft_executable_t* executable) {
  return executable ? executable->library->kernel_count : 0;
}

const weft_kernel_def_t* weft_executable_kernel(
    const weft_executable_t* executable, uint32_t ordinal) {
  return executable && ordinal < executable->library->kernel_count
             ? &executable->library->kernels[ordinal]
             : NULL;
}

weft_status_t weft_executable_lookup_kernel(const weft_executable_t* executable,
                                            const char* name,
                                            uint32_t* out_ordinal) {
  if (out_ordinal) *out_ordinal = UINT32_MAX;
  weft_status_t status = weft_arguments_require(
      __func__, "executable,name,out_ordinal",
      (const void* const[]){executable, name, out_ordinal}, 3);
  const weft_kernel_library_t* library =
      weft_status_is_ok(status) ? executable->library : NULL;
  for (uint32_t i = 0; library && i < library->kernel_count; ++i) {
    if (strcmp(library->kernels[i].name, name) == 0) {
      *out_ordinal = i;
      break;
    }
  }
  if (library && *out_ordinal == UINT32_MAX) {
    // Lists the library's kernels, truncated if the list is very long.
    char names[1024];
    size_t used = 0;
    names[0] = 0;
    for (uint32_t i = 0; i < library->kernel_count; ++i) {
      int n = snprintf(names + used, sizeof(names) - used, "%s'%s'",
                       i ? ", " : "", library->kernels[i].name);
      if (n < 0 || (size_t)n >= sizeof(names) - used) {
        snprintf(names + (sizeof(names) - 5), 5, "...");
        break;
      }
      used += (size_t)n;
    }
    status = WEFT_STATUS(NOT_FOUND,
                         "kernel '%s' not found in library '%s'; it has %u "
                         "kernels: %s",
                         name, library->name,
                         library->kernel_count, names);
  }
  return status;
}
