// weft VM: modules and wait frames, their layout (private to weft).
//
// The public API is weft/vm/module.h. Here: what a module holds, bytecode
// modules made from a weft_vm_bytecode_t, function signatures as the
// interpreter reads them, and the wait frame the interpreter, the loop and
// the hal module read directly.
#ifndef WEFT_VM_MODULE_IMPL_H_
#define WEFT_VM_MODULE_IMPL_H_

#include <stdbool.h>
#include <stdint.h>

#include "base/atomics.h"
#include "vm/bytecode.h"
#include "vm/signature.h"
#include "weft/allocator.h"
#include "weft/semaphore.h"
#include "weft/status.h"
#include "weft/time.h"
#include "weft/vm/module.h"
#include "weft/vm/value.h"

typedef enum weft_vm_module_kind_e {
  WEFT_VM_MODULE_BYTECODE = 0,
  WEFT_VM_MODULE_NATIVE = 1,
} weft_vm_module_kind_t;

// What a ref value of a bytecode function's signature must be: of the ref
// type |name| (|name_length| bytes; 0: any type), and non-null unless
// |nullable|.
typedef struct weft_vm_ref_check_t {
  const char* name;
  uint16_t name_length;
  uint8_t nullable;
} weft_vm_ref_check_t;

// Per bytecode function: where its values' checks start in the module's
// |ref_checks| (arguments then results, one per value, scalars included so
// value i is entry |first| + i), and whether any argument or result has
// something to check (a named type or no '?').
typedef struct weft_vm_function_checks_t {
  uint32_t first;
  uint8_t check_args;
  uint8_t check_results;
} weft_vm_function_checks_t;

struct weft_vm_module_t {
  weft_ref_count_t ref_count;
  weft_allocator_t allocator;
  weft_vm_module_kind_t kind;
  const char* name;
  // BYTECODE: owned, validated.
  weft_vm_bytecode_t* bytecode;
  // NATIVE: the definition (borrowed; static in practice) and each
  // function's signature, parsed (ref type names and nullability, checked
  // on every call) and as types (one allocation, owned).
  const weft_vm_native_module_def_t* native;
  weft_vm_signature_t* native_signatures;
  weft_vm_parsed_signature_t* native_parsed;
  // BYTECODE: the ref checks of its functions' signatures, what a call from
  // the host checks the arguments against and `ret` the results (one
  // allocation: the function entries, then the checks, then the canonical
  // texts their names point into; owned). NULL when no function has one.
  weft_vm_function_checks_t* function_checks;
  const weft_vm_ref_check_t* ref_checks;
};

// OK when function |index| of |module| may be called from outside it: any
// function of a native module, an `export`ed one of a bytecode module.
// NOT_FOUND naming the module's exported functions otherwise.
weft_status_t weft_vm_module_check_exported(const weft_vm_module_t* module,
                                            uint32_t index);

// Checks |values| (|count| of them, the arguments or the results of
// function |index| of a bytecode |module|) against the function's
// signature: each ref of the declared type and non-null unless the
// signature allows it. |what| is "argument" or "result". INVALID_ARGUMENT
// naming the module, function, position and both types.
weft_status_t weft_vm_module_check_refs(const weft_vm_module_t* module,
                                        uint32_t index, bool results,
                                        const weft_vm_value_t* values,
                                        uint32_t count);

// Takes |bytecode| (one allocation from |allocator|, see bytecode.h) after
// validating it; on failure frees it. One reference.
weft_status_t weft_vm_module_create_bytecode(weft_allocator_t allocator,
                                             weft_vm_bytecode_t* bytecode,
                                             weft_vm_module_t** out_module);

// The signature of function |index| (< the function count).
weft_vm_signature_t weft_vm_module_function_signature(
    const weft_vm_module_t* module, uint32_t index);

//===----------------------------------------------------------------------===//
// Wait frames
//===----------------------------------------------------------------------===//

// Sources a wait frame holds without allocating (a suspended invocation
// should stay small: most waits are on one fence of one or two semaphores).
#define WEFT_VM_WAIT_INLINE_SOURCES 4

struct weft_vm_wait_frame_t {
  weft_wait_mode_t mode;
  weft_time_t deadline;
  uint32_t count;
  uint32_t capacity;
  // The inline arrays below, or an allocation from the call's allocator.
  weft_semaphore_t** semaphores;  // retained
  uint64_t* values;
  weft_semaphore_t* inline_semaphores[WEFT_VM_WAIT_INLINE_SOURCES];
  uint64_t inline_values[WEFT_VM_WAIT_INLINE_SOURCES];
  weft_allocator_t allocator;
};

// Releases the frame's semaphores, frees what it allocated and empties it.
void weft_vm_wait_frame_clear(weft_vm_wait_frame_t* wait);

// The frame's sources as a list (valid until it changes).
static inline weft_semaphore_list_t weft_vm_wait_frame_list(
    const weft_vm_wait_frame_t* wait) {
  weft_semaphore_list_t list = {wait->count, wait->semaphores, wait->values};
  return list;
}

#endif  // WEFT_VM_MODULE_IMPL_H_
