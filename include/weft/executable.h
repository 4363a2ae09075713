// weft: executables, loaded CPU kernel libraries.
//
// NULL: pointer arguments are required unless the function's comment says
// "|x| may be NULL" (see "NULL arguments" in weft/status.h).
#ifndef WEFT_EXECUTABLE_H_
#define WEFT_EXECUTABLE_H_

#include "weft/allocator.h"
#include "weft/kernel_abi.h"
#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_executable_t weft_executable_t;

// Creates an executable from a statically linked library's query function.
// INVALID_ARGUMENT if the query returns NULL or the table is malformed
// (no kernels, a kernel without a function or name, a zero workgroup size).
weft_status_t weft_executable_create_static(
    weft_kernel_library_query_fn_t query, weft_allocator_t allocator,
    weft_executable_t** out_executable);

// Loads a kernel library from a shared object at |path| with dlopen and
// looks up WEFT_KERNEL_LIBRARY_QUERY_SYMBOL. NOT_FOUND with the loader's
// message when the file or symbol is missing.
weft_status_t weft_executable_load(const char* path,
                                   weft_allocator_t allocator,
                                   weft_executable_t** out_executable);

void weft_executable_retain(weft_executable_t* executable);
void weft_executable_release(weft_executable_t* executable);

// The library's name.
const char* weft_executable_name(const weft_executable_t* executable);
uint32_t weft_executable_kernel_count(const weft_executable_t* executable);
// The definition of kernel |ordinal| or NULL if out of range.
const weft_kernel_def_t* weft_executable_kernel(
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
