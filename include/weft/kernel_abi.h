// weft: the CPU kernel ABI. Self-contained (no other weft header) so a kernel
// library can be built without linking weft.
//
// A kernel library exports one query function, weft_kernel_library_query,
// returning a table of kernels. A kernel runs once per workgroup.
#ifndef WEFT_KERNEL_ABI_H_
#define WEFT_KERNEL_ABI_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_KERNEL_ABI_VERSION 1u
#define WEFT_KERNEL_LIBRARY_QUERY_SYMBOL "weft_kernel_library_query"

// What every workgroup of one dispatch sees.
typedef struct weft_dispatch_state_t {
  uint32_t workgroup_count[3];
  uint32_t workgroup_size[3];
  uint32_t constant_count;
  const uint32_t* constants;
  uint32_t binding_count;
  // Host pointers to each binding's range, and the range lengths in bytes.
  void* const* binding_ptrs;
  const size_t* binding_lengths;
} weft_dispatch_state_t;

// What one workgroup sees.
typedef struct weft_workgroup_state_t {
  uint32_t workgroup_id[3];
  // Index of the worker running this workgroup (0 on single-threaded
  // drivers); stable for the worker's lifetime.
  uint32_t processor_id;
  // Worker-local scratch memory of at least the kernel's local_memory_size.
  void* local_memory;
  size_t local_memory_size;
} weft_workgroup_state_t;

// Returns 0 on success; any other value fails the dispatch with INTERNAL.
typedef int (*weft_kernel_fn_t)(const weft_dispatch_state_t* dispatch,
                                const weft_workgroup_state_t* workgroup);

typedef struct weft_kernel_def_t {
  const char* name;
  weft_kernel_fn_t fn;
  uint32_t binding_count;
  uint32_t constant_count;
  uint32_t workgroup_size[3];
  // Scratch bytes each workgroup needs (0 for none).
  uint32_t local_memory_size;
} weft_kernel_def_t;

typedef struct weft_kernel_library_t {
  // Must be WEFT_KERNEL_ABI_VERSION.
  uint32_t abi_version;
  const char* name;
  uint32_t kernel_count;
  const weft_kernel_def_t* kernels;
} weft_kernel_library_t;

// Returns the library table for |abi_version| or NULL if unsupported.
typedef const weft_kernel_library_t* (*weft_kernel_library_query_fn_t)(
    uint32_t abi_version);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_KERNEL_ABI_H_
