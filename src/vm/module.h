// weft VM: modules, bytecode or native.
//
// A module is a named set of functions: a bytecode module (from the
// assembler or the binary loader) or a native module written in C, whose
// functions declare signature strings (signature.h). Both are ref-counted
// and immutable; a context (context.h) links them and keeps per-context
// state for native modules.
//
// A native function is called with its arguments checked against its
// signature (types, and non-null where the signature says so) and fills
// its results. It may wait: it enters a wait frame (ALL or ANY over
// (semaphore, value) sources, an absolute deadline), sets its own PC to
// where it resumes and returns DEFERRED; once the wait is over it is
// called again with that PC and the wait's result, its arguments and the
// results it wrote so far kept in its frame.
#ifndef WEFT_VM_MODULE_H_
#define WEFT_VM_MODULE_H_

#include <stdint.h>

#include "base/atomics.h"
#include "vm/bytecode.h"
#include "vm/signature.h"
#include "vm/value.h"
#include "weft/allocator.h"
#include "weft/semaphore.h"
#include "weft/status.h"
#include "weft/time.h"

typedef struct weft_vm_native_call_t weft_vm_native_call_t;

typedef weft_status_t (*weft_vm_native_fn_t)(weft_vm_native_call_t* call);

typedef struct weft_vm_native_function_t {
  const char* name;       // "fence.await"
  const char* signature;  // "(r<hal.fence>, i64) -> (i32)"
  weft_vm_native_fn_t fn;
} weft_vm_native_function_t;

typedef struct weft_vm_native_module_def_t {
  const char* name;  // "hal"
  uint32_t function_count;
  const weft_vm_native_function_t* functions;
  // Optional: per-context state, made when a context links the module and
  // freed with the context.
  weft_status_t (*create_state)(void* user_data, weft_allocator_t allocator,
                                void** out_state);
  void (*destroy_state)(void* user_data, void* state);
  void* user_data;
  // Optional: called once when the module is freed (its last reference
  // released), after which the module reads nothing of the definition. A
  // definition made at run time (the hal module's, with its options)
  // frees itself and its user_data here; a static one leaves it NULL.
  void (*destroy)(void* user_data);
} weft_vm_native_module_def_t;

typedef enum weft_vm_module_kind_e {
  WEFT_VM_MODULE_BYTECODE = 0,
  WEFT_VM_MODULE_NATIVE = 1,
} weft_vm_module_kind_t;

typedef struct weft_vm_module_t {
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
} weft_vm_module_t;

// Takes |bytecode| (one allocation from |allocator|, see bytecode.h) after
// validating it; on failure frees it. One reference.
weft_status_t weft_vm_module_create_bytecode(weft_allocator_t allocator,
                                             weft_vm_bytecode_t* bytecode,
                                             weft_vm_module_t** out_module);

// Wraps a native module definition, parsing every signature (a bad one is
// INVALID_ARGUMENT naming the module and the function). One reference.
weft_status_t weft_vm_module_create_native(
    weft_allocator_t allocator, const weft_vm_native_module_def_t* def,
    weft_vm_module_t** out_module);

void weft_vm_module_retain(weft_vm_module_t* module);
void weft_vm_module_release(weft_vm_module_t* module);

// The number of functions and the name and signature of function |index|.
uint32_t weft_vm_module_function_count(const weft_vm_module_t* module);
const char* weft_vm_module_function_name(const weft_vm_module_t* module,
                                         uint32_t index);
weft_vm_signature_t weft_vm_module_function_signature(
    const weft_vm_module_t* module, uint32_t index);

// Finds function |name|; NOT_FOUND naming the module and listing its
// functions. *out_index is UINT32_MAX on failure.
weft_status_t weft_vm_module_lookup(const weft_vm_module_t* module,
                                    const char* name, uint32_t* out_index);

//===----------------------------------------------------------------------===//
// Native calls and wait frames
//===----------------------------------------------------------------------===//

// The most sources one wait frame may hold.
#define WEFT_VM_WAIT_MAX_SOURCES 4096
// Sources a wait frame holds without allocating (a suspended invocation
// should stay small: most waits are on one fence of one or two semaphores).
#define WEFT_VM_WAIT_INLINE_SOURCES 4

typedef struct weft_vm_wait_frame_t {
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
} weft_vm_wait_frame_t;

struct weft_vm_native_call_t {
  // The module's per-context state (NULL when it has none).
  void* module_state;
  const weft_vm_value_t* args;
  // The results, kept across a yield.
  weft_vm_value_t* results;
  // 0 at entry; what the function set before it returned DEFERRED when it
  // is resumed.
  uint32_t pc;
  // On resume: the wait's result (owned by the function: consume it). OK
  // when the sources were reached; the bare DEADLINE_EXCEEDED code when the
  // deadline passed first; the first failure (the semaphore's original
  // message) otherwise.
  weft_status_t wait_result;
  // Where the function describes its wait before returning DEFERRED
  // (weft_vm_wait_frame_add).
  weft_vm_wait_frame_t* wait;
  weft_allocator_t allocator;
};

// Starts describing a wait in |call|'s wait frame: |mode| over sources
// added next, until |deadline|.
void weft_vm_wait_frame_begin(weft_vm_native_call_t* call,
                              weft_wait_mode_t mode, weft_time_t deadline);

// Adds (|semaphore|, |value|) (retained), keeping the larger value for a
// semaphore already present. RESOURCE_EXHAUSTED past
// WEFT_VM_WAIT_MAX_SOURCES distinct semaphores.
weft_status_t weft_vm_wait_frame_add(weft_vm_native_call_t* call,
                                     weft_semaphore_t* semaphore,
                                     uint64_t value);

// Releases the frame's semaphores, frees what it allocated and empties it.
void weft_vm_wait_frame_clear(weft_vm_wait_frame_t* wait);

// The frame's sources as a list (valid until it changes).
static inline weft_semaphore_list_t weft_vm_wait_frame_list(
    const weft_vm_wait_frame_t* wait) {
  weft_semaphore_list_t list = {wait->count, wait->semaphores, wait->values};
  return list;
}

#endif  // WEFT_VM_MODULE_H_
