// weft VM: the interpreter.
//
// Runs bytecode frames on a stack (stack.h) until the outermost frame
// returns, an instruction fails, or an instruction budget runs out (so a
// loop can turn to another invocation). Modules must have passed
// weft_vm_bytecode_validate: the interpreter trusts every index in them.
#ifndef WEFT_VM_INTERPRETER_H_
#define WEFT_VM_INTERPRETER_H_

#include <stdbool.h>
#include <stdint.h>

#include "vm/stack.h"
#include "weft/vm/value.h"

// Starts a call of function |function_index| of |instance|'s module (or of
// |bytecode| alone when |instance| is NULL: its imports are then not
// linked) on an empty |stack| with |arg_count| |args|, checked against its
// signature (count, type, and for a native function null and ref type
// names; a ref argument is retained). INVALID_ARGUMENT naming the function
// and the argument on a mismatch.
weft_status_t weft_vm_interpreter_begin(weft_vm_stack_t* stack,
                                        const weft_vm_instance_t* instance,
                                        const weft_vm_bytecode_t* bytecode,
                                        uint32_t function_index,
                                        const weft_vm_value_t* args,
                                        uint32_t arg_count);

typedef enum weft_vm_run_state_e {
  // The outermost frame returned: the stack is empty.
  WEFT_VM_RUN_DONE = 0,
  // The budget ran out: run again.
  WEFT_VM_RUN_YIELDED,
  // A native call entered the stack's wait frame: wait (ALL or ANY, until
  // its deadline), store the result in |stack->wait_result| and run again.
  WEFT_VM_RUN_WAITING,
} weft_vm_run_state_t;

// Runs the stack's top frame for up to |budget| instructions (counted at
// branches and calls, so a straight run may go a little past it). When the
// outermost frame returns its results are in |results| (|result_count| of
// them, as its signature says; refs owned by the caller). An error is the
// failing instruction's (or native call's), annotated with the VM stack;
// the stack is left as it was for the caller to unwind.
weft_status_t weft_vm_interpreter_run(weft_vm_stack_t* stack, uint64_t budget,
                                      weft_vm_value_t* results,
                                      uint32_t result_count,
                                      weft_vm_run_state_t* out_state);

#endif  // WEFT_VM_INTERPRETER_H_
