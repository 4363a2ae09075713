// weft: running a CPU kernel dispatch inline on the calling thread.
//
// Shared by the CPU drivers: local-sync runs every dispatch through it, and
// the inline command-buffer replayer uses it for recorded dispatches.
// Validation is the HAL's (weft_dispatch_validate in executable_impl.h).
#ifndef WEFT_HAL_LOCAL_INLINE_DISPATCH_H_
#define WEFT_HAL_LOCAL_INLINE_DISPATCH_H_

#include <stdint.h>

#include "weft/allocator.h"
#include "weft/buffer.h"
#include "weft/executable.h"
#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

// Runs kernel |kernel_ordinal| of |executable| over every workgroup of
// |workgroup_count| on the calling thread, in x, then y, then z order, with
// processor id 0. |executable| must be a CPU kernel library
// (cpu_executable.h) and the arguments must already have passed
// weft_dispatch_validate, and |bindings| must be resolved: each names a
// buffer and a range within it that fits (length is never
// WEFT_WHOLE_BUFFER).
//
// Each binding is mapped (with the read/write access the buffer allows,
// whatever its mapping usage: the queue layer checked DISPATCH_STORAGE) for
// the duration of the call and unmapped before returning, also
// on failure. Kernel scratch memory (the kernel's local_memory_size) comes
// from the stack when small and from |allocator| otherwise; up to 16
// bindings need no allocation at all.
//
// Returns INTERNAL "kernel 'name' (library 'lib') failed in workgroup
// (x, y, z) with code N" when a workgroup returns non-zero (no later
// workgroup runs), or the mapping error of a binding. A dispatch with a zero
// workgroup dimension maps nothing and returns OK.
weft_status_t weft_inline_dispatch(
    weft_executable_t* executable, uint32_t kernel_ordinal,
    const uint32_t workgroup_count[3], uint32_t constant_count,
    const uint32_t* constants, uint32_t binding_count,
    const weft_buffer_binding_t* bindings, weft_allocator_t allocator);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_HAL_LOCAL_INLINE_DISPATCH_H_
