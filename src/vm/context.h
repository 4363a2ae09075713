// weft VM: contexts, modules linked together.
//
// A context holds modules (retained) and resolves every import of every
// bytecode module by name, once, at creation: "module.function" must name
// a function of a module in the context with the same signature. A missing
// module or function is NOT_FOUND and a signature mismatch INVALID_ARGUMENT
// with both signatures in the message. Native modules get their
// per-context state here. Invocations (invocation.h) run functions of a
// context.
#ifndef WEFT_VM_CONTEXT_H_
#define WEFT_VM_CONTEXT_H_

#include <stdint.h>

#include "base/atomics.h"
#include "vm/module.h"

typedef struct weft_vm_instance_t weft_vm_instance_t;

// Where an import goes.
typedef struct weft_vm_import_target_t {
  const weft_vm_instance_t* instance;
  uint32_t function_index;
} weft_vm_import_target_t;

// A module as linked into one context.
struct weft_vm_instance_t {
  weft_vm_module_t* module;  // retained
  // Native modules: the state create_state made (NULL without one).
  void* state;
  // Bytecode modules: one target per import.
  weft_vm_import_target_t* imports;
};

typedef struct weft_vm_context_t {
  weft_ref_count_t ref_count;
  weft_allocator_t allocator;
  uint32_t instance_count;
  weft_vm_instance_t* instances;
} weft_vm_context_t;

// Links |module_count| |modules| (module names must be unique). One
// reference.
weft_status_t weft_vm_context_create(weft_vm_module_t* const* modules,
                                     uint32_t module_count,
                                     weft_allocator_t allocator,
                                     weft_vm_context_t** out_context);

void weft_vm_context_retain(weft_vm_context_t* context);
void weft_vm_context_release(weft_vm_context_t* context);

// Finds "module.function" (the module name is everything before the first
// '.'). NOT_FOUND naming what is missing.
weft_status_t weft_vm_context_resolve(const weft_vm_context_t* context,
                                      const char* qualified_name,
                                      const weft_vm_instance_t** out_instance,
                                      uint32_t* out_function_index);

#endif  // WEFT_VM_CONTEXT_H_
