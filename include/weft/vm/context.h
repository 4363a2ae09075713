// weft VM: contexts, modules linked together.
//
// A context holds modules (retained) and links every import of every
// bytecode module, once, at creation: "module.function" must name a
// function of a module in the same context with the same signature. Native
// modules get their per-context state here. A context is ref-counted and
// immutable once made, so invocations on any thread may share it
// (weft/vm/invocation.h, weft/vm/loop.h); what they may do at once beyond
// that is up to the native modules' functions (the hal module's may run on
// any thread).
//
// NULL: pointer arguments are required unless the function's comment says
// "|x| may be NULL" (see "NULL arguments" in weft/status.h).
#ifndef WEFT_VM_CONTEXT_H_
#define WEFT_VM_CONTEXT_H_

#include <stdint.h>

#include "weft/allocator.h"
#include "weft/status.h"
#include "weft/vm/module.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_vm_context_t weft_vm_context_t;

// Links |module_count| |modules| (each retained; their names must be
// unique). A missing import is NOT_FOUND naming the importer and what is
// missing, a signature mismatch INVALID_ARGUMENT with both signatures, a
// native module's create_state failure is returned as it is. The caller
// owns the one reference. |modules| may be NULL when |module_count| is 0;
// a NULL entry is INVALID_ARGUMENT.
weft_status_t weft_vm_context_create(weft_vm_module_t* const* modules,
                                     uint32_t module_count,
                                     weft_allocator_t allocator,
                                     weft_vm_context_t** out_context);

// Adds a reference.
void weft_vm_context_retain(weft_vm_context_t* context);
// Drops a reference; the last destroys the native modules' states and
// releases the modules.
void weft_vm_context_release(weft_vm_context_t* context);

// Finds |qualified_name| ("module.function": the module name is what comes
// before the first '.') in the context: its module (borrowed: valid while
// the context is) and the function's index in it (for
// weft_vm_module_function_name and weft_vm_module_function_signature_text).
// INVALID_ARGUMENT for a name without a '.', NOT_FOUND naming the missing
// module or function, or a bytecode function not marked `export` (only
// exported functions are called from outside their module: by the host
// and by other modules' imports); *out_module is NULL and
// *out_function_index 0 on failure.
weft_status_t weft_vm_context_lookup(const weft_vm_context_t* context,
                                     const char* qualified_name,
                                     weft_vm_module_t** out_module,
                                     uint32_t* out_function_index);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_VM_CONTEXT_H_
