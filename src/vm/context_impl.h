// weft VM: contexts, their layout (private to weft).
//
// The public API is weft/vm/context.h. Here: the instances a context
// links (a module with its native state or its resolved imports), which
// the interpreter follows on every call.
#ifndef WEFT_VM_CONTEXT_IMPL_H_
#define WEFT_VM_CONTEXT_IMPL_H_

#include <stdint.h>

#include "base/atomics.h"
#include "vm/module_impl.h"
#include "weft/vm/context.h"

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

struct weft_vm_context_t {
  weft_ref_count_t ref_count;
  weft_allocator_t allocator;
  uint32_t instance_count;
  weft_vm_instance_t* instances;
};

// Finds "module.function" (the module name is everything before the first
// '.'): its instance and the function's index. INVALID_ARGUMENT without a
// '.', NOT_FOUND naming what is missing; *out_instance is NULL and
// *out_function_index 0 on failure.
weft_status_t weft_vm_context_resolve(const weft_vm_context_t* context,
                                      const char* qualified_name,
                                      const weft_vm_instance_t** out_instance,
                                      uint32_t* out_function_index);

#endif  // WEFT_VM_CONTEXT_IMPL_H_
