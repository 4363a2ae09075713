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
#include "vm/value.h"

// Starts a call of function |function_index| of |bytecode| on an empty
// |stack| with |arg_count| |args|, checked against its signature (count and
// type of each; a ref argument is retained). INVALID_ARGUMENT naming the
// function and the argument on a mismatch.
weft_status_t weft_vm_interpreter_begin(weft_vm_stack_t* stack,
                                        const weft_vm_bytecode_t* bytecode,
                                        uint32_t function_index,
                                        const weft_vm_value_t* args,
                                        uint32_t arg_count);

// Runs the stack's top frame for up to |budget| instructions (counted at
// branches and calls, so a straight run may go a little past it).
// |*out_done| is set when the outermost frame returned: its results are in
// |results| (|result_count| of them, as its signature says; refs owned by
// the caller) and the stack is empty. Not done and OK: the budget ran out;
// call again. An error is the failing instruction's, annotated with the VM
// stack; the stack is left as it was for the caller to unwind.
weft_status_t weft_vm_interpreter_run(weft_vm_stack_t* stack, uint64_t budget,
                                      weft_vm_value_t* results,
                                      uint32_t result_count, bool* out_done);

#endif  // WEFT_VM_INTERPRETER_H_
