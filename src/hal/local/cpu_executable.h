// weft: executables of CPU kernel libraries (weft/kernel_abi.h).
//
// What the CPU drivers' devices make from WEFT_EXECUTABLE_FORMAT_CPU_STATIC
// (a query function linked into the program) and
// WEFT_EXECUTABLE_FORMAT_CPU_SHARED_OBJECT (a shared object opened with
// dlopen and kept open until the executable is destroyed, so the table and
// every kernel function stay valid while anything holds a reference). The
// kernel table lives in the library; the executable keeps the kernels'
// device-neutral signatures beside it.
#ifndef WEFT_HAL_LOCAL_CPU_EXECUTABLE_H_
#define WEFT_HAL_LOCAL_CPU_EXECUTABLE_H_

#include "weft/executable.h"

// Makes an executable in the host domain from |source|, allocated from
// |allocator|. INVALID_ARGUMENT when the query returns no table or the
// table is malformed (no kernels, a kernel without a function or name, a
// zero workgroup size, a name used twice); NOT_FOUND with the loader's
// message when a shared object or its query symbol is missing;
// INVALID_ARGUMENT naming the format when it is not a CPU format.
weft_status_t weft_cpu_executable_create(weft_allocator_t allocator,
                                         const char* device_id,
                                         weft_executable_source_t source,
                                         weft_executable_t** out_executable);

// The CPU definition of kernel |ordinal| of |executable|, or NULL when it
// is out of range or |executable| is not a CPU kernel library.
const weft_kernel_def_t* weft_cpu_executable_kernel(
    const weft_executable_t* executable, uint32_t ordinal);

#endif  // WEFT_HAL_LOCAL_CPU_EXECUTABLE_H_
