// weft: executables, the device-neutral half (see executable_impl.h).
#include <stdio.h>
#include <string.h>

#include "base/arguments.h"
#include "hal/executable_impl.h"

_Static_assert(offsetof(weft_executable_t, resource) == 0,
               "weft_executable_t must start with its resource");

const char* weft_executable_format_name(weft_executable_format_t format) {
  switch (format) {
    case WEFT_EXECUTABLE_FORMAT_CPU_STATIC:
      return "cpu-static";
    case WEFT_EXECUTABLE_FORMAT_CPU_SHARED_OBJECT:
      return "cpu-shared-object";
    case WEFT_EXECUTABLE_FORMAT_CUDA_PTX:
      return "cuda-ptx";
    case WEFT_EXECUTABLE_FORMAT_CUDA_IMAGE:
      return "cuda-image";
    case WEFT_EXECUTABLE_FORMAT_SPIRV:
      return "spirv";
    default:
      return "unknown";
  }
}

void weft_executable_initialize(const weft_executable_vtable_t* vtable,
                                weft_allocator_t allocator,
                                weft_domain_t domain,
                                weft_executable_format_t format,
                                const char* name, uint32_t kernel_count,
                                const weft_kernel_info_t* kernels,
                                weft_executable_t* out_executable) {
  weft_resource_initialize(WEFT_RESOURCE_TYPE_EXECUTABLE, vtable,
                           &out_executable->resource);
  out_executable->allocator = allocator;
  out_executable->domain = domain;
  out_executable->format = format;
  out_executable->name = name;
  out_executable->kernel_count = kernel_count;
  out_executable->kernels = kernels;
}

void weft_executable_retain(weft_executable_t* executable) {
  weft_resource_retain(executable);
}

void weft_executable_release(weft_executable_t* executable) {
  weft_resource_release(executable);
}

const char* weft_executable_name(const weft_executable_t* executable) {
  return executable && executable->name ? executable->name : "";
}

weft_executable_format_t weft_executable_format(
    const weft_executable_t* executable) {
  return executable ? executable->format : WEFT_EXECUTABLE_FORMAT_NONE;
}

uint32_t weft_executable_kernel_count(const weft_executable_t* executable) {
  return executable ? executable->kernel_count : 0;
}

const weft_kernel_info_t* weft_executable_kernel_info(
    const weft_executable_t* executable, uint32_t ordinal) {
  return executable && ordinal < executable->kernel_count
             ? &executable->kernels[ordinal]
             : NULL;
}

weft_status_t weft_executable_lookup_kernel(const weft_executable_t* executable,
                                            const char* name,
                                            uint32_t* out_ordinal) {
  if (out_ordinal) *out_ordinal = UINT32_MAX;
  weft_status_t status = weft_arguments_require(
      __func__, "executable,name,out_ordinal",
      (const void* const[]){executable, name, out_ordinal}, 3);
  const uint32_t count =
      weft_status_is_ok(status) ? executable->kernel_count : 0;
  for (uint32_t i = 0; i < count; ++i) {
    if (strcmp(executable->kernels[i].name, name) == 0) {
      *out_ordinal = i;
      break;
    }
  }
  if (weft_status_is_ok(status) && *out_ordinal == UINT32_MAX) {
    // Lists the library's kernels, truncated if the list is very long.
    char names[1024];
    size_t used = 0;
    names[0] = 0;
    for (uint32_t i = 0; i < count; ++i) {
      int n = snprintf(names + used, sizeof(names) - used, "%s'%s'",
                       i ? ", " : "", executable->kernels[i].name);
      if (n < 0 || (size_t)n >= sizeof(names) - used) {
        snprintf(names + (sizeof(names) - 5), 5, "...");
        break;
      }
      used += (size_t)n;
    }
    status = WEFT_STATUS(NOT_FOUND,
                         "kernel '%s' not found in library '%s'; it has %u "
                         "kernels: %s",
                         name, executable->name, count, names);
  }
  return status;
}

weft_status_t weft_executable_check_kernel_table(
    const weft_executable_source_t* source, const char* driver,
    const char* name) {
  if (!source->kernels || source->kernel_count == 0) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "%s executable '%s': the source has no kernel table "
                       "(a GPU module does not say what weft needs of its "
                       "kernels; see weft/executable.h)",
                       driver, name);
  }
  for (uint32_t i = 0; i < source->kernel_count; ++i) {
    if (!source->kernels[i].name || !source->kernels[i].name[0]) {
      return WEFT_STATUS(INVALID_ARGUMENT,
                         "%s executable '%s': kernel %u has no name", driver,
                         name, i);
    }
  }
  return WEFT_OK;
}

size_t weft_executable_kernel_table_strings_size(
    const weft_executable_source_t* source, const char* name) {
  size_t size = strlen(name) + 1;
  for (uint32_t i = 0; source->kernels && i < source->kernel_count; ++i) {
    size += (source->kernels[i].name ? strlen(source->kernels[i].name) : 0) + 1;
  }
  return size;
}

const char* weft_executable_copy_kernel_table(
    const weft_executable_source_t* source, const char* name, char* strings,
    weft_kernel_info_t* infos) {
  const char* library_name = strings;
  const size_t name_size = strlen(name) + 1;
  memcpy(strings, name, name_size);
  strings += name_size;
  for (uint32_t i = 0; i < source->kernel_count; ++i) {
    const weft_kernel_def_t* def = &source->kernels[i];
    const size_t kernel_name_size = strlen(def->name) + 1;
    memcpy(strings, def->name, kernel_name_size);
    infos[i] = (weft_kernel_info_t){
        .name = strings,
        .binding_count = def->binding_count,
        .constant_count = def->constant_count,
    };
    strings += kernel_name_size;
  }
  return library_name;
}

weft_status_t weft_dispatch_validate(const weft_executable_t* executable,
                                     uint32_t kernel_ordinal,
                                     const uint32_t workgroup_count[3],
                                     uint32_t constant_count,
                                     uint32_t binding_count, const char* what) {
  weft_status_t status = WEFT_OK;
  const weft_kernel_info_t* kernel = NULL;
  if (!executable) {
    status = WEFT_STATUS(INVALID_ARGUMENT, "%s: executable is NULL", what);
  } else if (!workgroup_count) {
    status = WEFT_STATUS(INVALID_ARGUMENT, "%s: workgroup_count is NULL", what);
  } else {
    kernel = weft_executable_kernel_info(executable, kernel_ordinal);
    if (!kernel) {
      status = WEFT_STATUS(INVALID_ARGUMENT,
                           "%s: kernel ordinal %u out of range (%u kernels in "
                           "'%s')",
                           what, kernel_ordinal, executable->kernel_count,
                           executable->name);
    }
  }
  if (weft_status_is_ok(status) && constant_count != kernel->constant_count) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "%s: kernel '%s' expects %u constants, got %u "
                         "(library '%s')",
                         what, kernel->name, kernel->constant_count,
                         constant_count, executable->name);
  }
  if (weft_status_is_ok(status) && binding_count != kernel->binding_count) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "%s: kernel '%s' expects %u bindings, got %u "
                         "(library '%s')",
                         what, kernel->name, kernel->binding_count,
                         binding_count, executable->name);
  }
  return status;
}

weft_status_t weft_executable_validate_domain(
    const weft_executable_t* executable, weft_domain_t domain,
    const char* device_id, const char* what) {
  weft_status_t status = WEFT_OK;
  if (executable->domain != domain) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "%s: executable '%s' (%s) was made by a device whose "
                         "code runs elsewhere (domain %llu); device '%s' "
                         "(domain %llu) cannot run it",
                         what, executable->name,
                         weft_executable_format_name(executable->format),
                         (unsigned long long)executable->domain, device_id,
                         (unsigned long long)domain);
  }
  return status;
}
