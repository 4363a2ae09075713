// weft VM: an invocation's stack of frames and its register files.
//
// Frames, scalar registers and ref registers live in three arrays that grow
// (by doubling) as calls go deeper, so a suspended invocation holds only
// what its frames use. Frames address their registers by offset, never by
// pointer, so growth never invalidates them; the interpreter re-reads its
// register pointers after every call. Depth is bounded: a call past
// |max_depth| is RESOURCE_EXHAUSTED naming the function and the depth.
#ifndef WEFT_VM_STACK_H_
#define WEFT_VM_STACK_H_

#include <stdint.h>

#include "vm/bytecode.h"
#include "vm/context_impl.h"
#include "weft/allocator.h"
#include "weft/status.h"
#include "weft/vm/value.h"

// Where a frame's results go when it returns: UINT32_MAX for the
// invocation itself (the first frame).
#define WEFT_VM_FRAME_RESULTS_TO_INVOCATION UINT32_MAX

typedef struct weft_vm_frame_t {
  // The module instance the function belongs to (its imports); NULL for
  // bytecode run without a context (then imports are not linked).
  const weft_vm_instance_t* instance;
  // Bytecode frames: the module and function. Native frames: |bytecode|
  // and |function| are NULL and |native| is set.
  const weft_vm_bytecode_t* bytecode;
  const weft_vm_function_t* function;
  const weft_vm_native_function_t* native;
  const weft_vm_parsed_signature_t* native_signature;
  // Native frames: arguments then results in the stack's value array.
  uint32_t values_base;
  // The next instruction, relative to the function's first.
  uint32_t pc;
  uint32_t scalar_base;
  uint32_t ref_base;
  // The caller's operand list entry of the first result register (the call
  // instruction's list, after its arguments).
  uint32_t result_operands;
} weft_vm_frame_t;

// The default bound on frames.
#define WEFT_VM_STACK_DEFAULT_MAX_DEPTH 1024

typedef struct weft_vm_stack_t {
  weft_allocator_t allocator;
  uint32_t max_depth;
  weft_vm_frame_t* frames;
  uint32_t depth;
  uint32_t frame_capacity;
  uint64_t* scalars;
  uint32_t scalar_top;
  uint32_t scalar_capacity;
  weft_vm_ref_t* refs;
  uint32_t ref_top;
  uint32_t ref_capacity;
  // Native frames' arguments and results.
  weft_vm_value_t* values;
  uint32_t value_top;
  uint32_t value_capacity;
  // The wait the top (native) frame entered before it returned DEFERRED,
  // and the result handed to it when it is resumed.
  weft_vm_wait_frame_t wait;
  weft_status_t wait_result;
  // Where set, a native call made without a frame that returns DEFERRED
  // is offered to |wait_spin| before a frame is pushed for it: true when
  // the wait was met in place (the call is then resumed at once with OK,
  // as if the wait had parked and been handed back). Its owner's choice
  // (the loop's spin budget, and only while nothing else could run).
  bool (*wait_spin)(void* user_data, const weft_vm_wait_frame_t* wait);
  void* wait_spin_user_data;
} weft_vm_stack_t;

void weft_vm_stack_initialize(weft_allocator_t allocator, uint32_t max_depth,
                              weft_vm_stack_t* out_stack);

// Releases every ref still held and frees the arrays.
void weft_vm_stack_deinitialize(weft_vm_stack_t* stack);

// Pushes a frame for |function| of |bytecode| with zeroed scalar and null
// ref registers. RESOURCE_EXHAUSTED past the depth bound (naming the
// function and the depth) or when the allocator refuses.
weft_status_t weft_vm_stack_push(weft_vm_stack_t* stack,
                                 const weft_vm_instance_t* instance,
                                 const weft_vm_bytecode_t* bytecode,
                                 const weft_vm_function_t* function,
                                 uint32_t result_operands,
                                 weft_vm_frame_t** out_frame);

// Pushes a frame for native function |function_index| of |instance| with
// room for its arguments and results (zeroed: i32 0 and null refs).
weft_status_t weft_vm_stack_push_native(weft_vm_stack_t* stack,
                                        const weft_vm_instance_t* instance,
                                        uint32_t function_index,
                                        uint32_t result_operands,
                                        weft_vm_frame_t** out_frame);

// Pops the top frame, releasing its refs.
void weft_vm_stack_pop(weft_vm_stack_t* stack);

static inline weft_vm_frame_t* weft_vm_stack_top(weft_vm_stack_t* stack) {
  return stack->depth ? &stack->frames[stack->depth - 1] : NULL;
}

// Annotates |status| (consumed, returned) with the VM call stack, innermost
// first: "at MODULE.FUNCTION (FILE:LINE)" per frame.
weft_status_t weft_vm_stack_annotate(const weft_vm_stack_t* stack,
                                     weft_status_t status);

#endif  // WEFT_VM_STACK_H_
