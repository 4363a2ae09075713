// weft VM: running a function of a context.
//
// An invocation is a call of one function with its own stack. Run
// synchronously it blocks in place on every wait frame (ALL or ANY, until
// the frame's deadline) and returns the results; the loop (loop.h, not
// built yet) runs many on one thread instead.
#ifndef WEFT_VM_INVOCATION_H_
#define WEFT_VM_INVOCATION_H_

#include <stdint.h>

#include "vm/context.h"
#include "vm/interpreter.h"

// Calls |qualified_name| ("module.function") of |context| with |args| and
// waits for it, blocking the calling thread on every wait: results in
// |results| (|result_count| of them; refs owned by the caller). A wait's
// deadline passing is handed to the waiting native function as the bare
// DEADLINE_EXCEEDED code (for the program to see as a value); any other
// failure ends the invocation with its original message annotated with
// the VM stack. |max_depth| 0 takes the default.
weft_status_t weft_vm_invoke_sync(weft_vm_context_t* context,
                                  const char* qualified_name,
                                  const weft_vm_value_t* args,
                                  uint32_t arg_count, weft_vm_value_t* results,
                                  uint32_t result_count, uint32_t max_depth,
                                  weft_allocator_t allocator);

// Blocks on |stack|'s wait frame (the run state was WAITING) and stores
// the result in |stack->wait_result|, emptying the frame: OK, the bare
// DEADLINE_EXCEEDED code, or the first failure.
void weft_vm_wait_in_place(weft_vm_stack_t* stack);

#endif  // WEFT_VM_INVOCATION_H_
