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
  // CUDA PTX text in |data| (|data_size| bytes; NUL-terminated or not),
  // JIT-compiled by the driver when loaded. Kernels as described below.
  WEFT_EXECUTABLE_FORMAT_CUDA_PTX = 3,
  // A CUDA cubin or fatbin image in |data|, for the device's architecture.
  WEFT_EXECUTABLE_FORMAT_CUDA_IMAGE = 4,
  // A SPIR-V module in |data| (the vulkan driver), one GLCompute entry
  // point per kernel, as described below.
  WEFT_EXECUTABLE_FORMAT_SPIRV = 5,
} weft_executable_format_t;

// CUDA executables (the cuda driver's formats). A GPU module does not say
// what weft needs to know of its kernels, so the source carries a kernel
// table (|kernels|, |kernel_count|; |fn| unused): each entry names an
// `extern "C" __global__` function of the module and gives its binding and
// constant counts, its block size (workgroup_size) and its dynamic shared
// memory (local_memory_size). A dispatch launches a grid of
// workgroup_count blocks of that size, with these parameters in order:
//   - for each binding, its device address (a pointer);
//   - for each binding, its length in bytes (uint64_t);
//   - each constant (uint32_t);
//   - a uint32_t* status of four words: a block that fails stores its code
//     (non-zero) in word 0 with a compare-and-swap from 0 and, if it was
//     first, its block index in words 1-3; the dispatch then fails with
//     INTERNAL naming the kernel, the block and the code, as a CPU kernel
//     returning non-zero does.
// The same table can describe a CPU library's kernels and a GPU module's,
// so one kernel set runs on every driver under the same names.
//
// SPIR-V executables (the vulkan driver's format) carry a kernel table
// too: each entry names a GLCompute entry point of the module, whose
// LocalSize must equal the entry's workgroup_size (local_memory_size must
// be 0: shared memory is declared in the shader). A dispatch runs
// workgroup_count workgroups with this interface:
//   - descriptor set 0, binding i (i < binding_count): a storage buffer
//     holding binding i. The range bound starts at or before the binding's
//     first byte (storage buffer offsets have a device alignment), so:
//   - push constants (from offset 0, 4 bytes each): the dispatch's
//     workgroup count (x, y, z: use these, not gl_NumWorkGroups, which
//     counts only the piece of the grid running when the driver splits one
//     larger than the device's maxComputeWorkGroupCount; gl_WorkGroupID is
//     the workgroup's index in the whole grid); for each binding, the byte
//     offset of its first byte from the start of the bound range (a
//     multiple of 4: a binding's offset must be); for each binding, its
//     length in bytes; then each constant;
//   - descriptor set 0, binding binding_count: the status, a storage
//     buffer of four uint words used as the CUDA kernels' status is (a
//     workgroup that fails stores its code with atomicCompSwap from 0 and,
//     if it was first, its workgroup index in words 1-3).

// What to make an executable from: a format and the data it reads.
typedef struct weft_executable_source_t {
  weft_executable_format_t format;
  // WEFT_EXECUTABLE_FORMAT_CPU_STATIC.
  weft_kernel_library_query_fn_t query;
  // Formats read from a file (WEFT_EXECUTABLE_FORMAT_CPU_SHARED_OBJECT).
  const char* path;
  // Formats given as bytes (WEFT_EXECUTABLE_FORMAT_CUDA_*, _SPIRV).
  const void* data;
  size_t data_size;
  // Formats whose code does not describe its kernels (CUDA_*, SPIRV): the
  // kernel table, read while the executable is made (copied).
  uint32_t kernel_count;
  const weft_kernel_def_t* kernels;
  // A name for the library in messages (CUDA_*, SPIRV; may be NULL).
  const char* name;
} weft_executable_source_t;

static inline weft_executable_source_t weft_executable_source_cpu_static(
    weft_kernel_library_query_fn_t query) {
  weft_executable_source_t source = {WEFT_EXECUTABLE_FORMAT_CPU_STATIC,
                                     query, NULL, NULL, 0, 0, NULL, NULL};
  return source;
}

static inline weft_executable_source_t weft_executable_source_cpu_shared_object(
    const char* path) {
  weft_executable_source_t source = {WEFT_EXECUTABLE_FORMAT_CPU_SHARED_OBJECT,
                                     NULL, path, NULL, 0, 0, NULL, NULL};
  return source;
}

// A CUDA module (|format| CUDA_PTX or CUDA_IMAGE) of |data_size| bytes at
// |data| whose kernels |kernels| describes (see above), named |name|.
static inline weft_executable_source_t weft_executable_source_cuda(
    weft_executable_format_t format, const char* name, const void* data,
    size_t data_size, uint32_t kernel_count, const weft_kernel_def_t* kernels) {
  weft_executable_source_t source = {format, NULL,         NULL,    data,
                                     data_size, kernel_count, kernels, name};
  return source;
}

// A SPIR-V module of |data_size| bytes at |data| (4-byte words) whose
// kernels |kernels| describes (see above), named |name|.
static inline weft_executable_source_t weft_executable_source_spirv(
    const char* name, const void* data, size_t data_size,
    uint32_t kernel_count, const weft_kernel_def_t* kernels) {
  weft_executable_source_t source = {WEFT_EXECUTABLE_FORMAT_SPIRV,
                                     NULL,
                                     NULL,
                                     data,
                                     data_size,
                                     kernel_count,
                                     kernels,
                                     name};
  return source;
}

// "cpu-static", "cpu-shared-object", "cuda-ptx", "cuda-image", "spirv"
// ("unknown" for other values).
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
