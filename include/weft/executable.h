// weft: executables, kernel libraries a device made from a format.
//
// A device creates an executable (weft_device_create_executable) from a
// source: a format plus its data. The CPU drivers accept CPU kernel
// libraries (weft/kernel_abi.h), statically linked or in a shared object;
// other drivers add their own formats. Whatever the format, an executable
// describes its kernels the same way (name, binding count, constant count),
// which is what dispatch validation checks.
//
// NULL: pointer arguments are required unless the function's comment says
// "|x| may be NULL" (see "NULL arguments" in weft/status.h).
#ifndef WEFT_EXECUTABLE_H_
#define WEFT_EXECUTABLE_H_

#include <stddef.h>

#include "weft/allocator.h"
#include "weft/kernel_abi.h"
#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_executable_t weft_executable_t;

typedef enum weft_executable_format_e {
  WEFT_EXECUTABLE_FORMAT_NONE = 0,
  // A statically linked CPU kernel library: |query| is its query function.
  WEFT_EXECUTABLE_FORMAT_CPU_STATIC = 1,
  // A CPU kernel library in a shared object at |path|, loaded with dlopen
  // (it exports WEFT_KERNEL_LIBRARY_QUERY_SYMBOL).
  WEFT_EXECUTABLE_FORMAT_CPU_SHARED_OBJECT = 2,
} weft_executable_format_t;

// What to make an executable from: a format and the data it reads.
typedef struct weft_executable_source_t {
  weft_executable_format_t format;
  // WEFT_EXECUTABLE_FORMAT_CPU_STATIC.
  weft_kernel_library_query_fn_t query;
  // Formats read from a file (WEFT_EXECUTABLE_FORMAT_CPU_SHARED_OBJECT).
  const char* path;
  // Formats given as bytes (none of the CPU drivers' formats).
  const void* data;
  size_t data_size;
} weft_executable_source_t;

static inline weft_executable_source_t weft_executable_source_cpu_static(
    weft_kernel_library_query_fn_t query) {
  weft_executable_source_t source = {WEFT_EXECUTABLE_FORMAT_CPU_STATIC, query,
                                     NULL, NULL, 0};
  return source;
}

static inline weft_executable_source_t weft_executable_source_cpu_shared_object(
    const char* path) {
  weft_executable_source_t source = {WEFT_EXECUTABLE_FORMAT_CPU_SHARED_OBJECT,
                                     NULL, path, NULL, 0};
  return source;
}

// "cpu-static", "cpu-shared-object" ("unknown" for other values).
const char* weft_executable_format_name(weft_executable_format_t format);

// What any device's kernel says about itself: what a dispatch must pass.
typedef struct weft_kernel_info_t {
  const char* name;
  uint32_t binding_count;
  uint32_t constant_count;
} weft_kernel_info_t;

void weft_executable_retain(weft_executable_t* executable);
void weft_executable_release(weft_executable_t* executable);

// The library's name.
const char* weft_executable_name(const weft_executable_t* executable);
// The format it was made from.
weft_executable_format_t weft_executable_format(
    const weft_executable_t* executable);
uint32_t weft_executable_kernel_count(const weft_executable_t* executable);
// The signature of kernel |ordinal|, or NULL if out of range.
const weft_kernel_info_t* weft_executable_kernel_info(
    const weft_executable_t* executable, uint32_t ordinal);
// Finds a kernel by name; NOT_FOUND listing the library's kernels.
// *out_ordinal is UINT32_MAX (never a kernel) on any failure.
weft_status_t weft_executable_lookup_kernel(
    const weft_executable_t* executable, const char* name,
    uint32_t* out_ordinal);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_EXECUTABLE_H_
