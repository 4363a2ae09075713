// weft VM: synchronous invocations (see weft/vm/invocation.h).
#include "weft/vm/invocation.h"

#include <string.h>

#include "base/arguments.h"
#include "vm/context_impl.h"
#include "vm/interpreter.h"

// Instructions per interpreter run between checks (the synchronous path
// has nothing else to do, so this only bounds how long one run lasts).
#define WEFT_VM_SYNC_BUDGET (1u << 20)

// Blocks on |stack|'s wait frame (the run state was WAITING) and stores
// the result in |stack->wait_result|, emptying the frame: OK, the bare
// DEADLINE_EXCEEDED code, or the first failure.
static void weft_vm_wait_in_place(weft_vm_stack_t* stack) {
  weft_vm_wait_frame_t* wait = &stack->wait;
  weft_timeout_t timeout = {WEFT_TIMEOUT_ABSOLUTE, wait->deadline};
  weft_status_t status =
      weft_semaphore_list_wait(wait->mode, weft_vm_wait_frame_list(wait),
                               timeout);
  if (weft_status_is(status, WEFT_STATUS_DEADLINE_EXCEEDED) &&
      weft_time_now() >= wait->deadline) {
    // The deadline is the program's to handle: a bare code, no message.
    weft_status_free(status);
    status = weft_status_from_code(WEFT_STATUS_DEADLINE_EXCEEDED);
  }
  weft_status_free(stack->wait_result);
  stack->wait_result = status;
  weft_vm_wait_frame_clear(wait);
}

weft_status_t weft_vm_invoke_sync(weft_vm_context_t* context,
                                  const char* qualified_name,
                                  const weft_vm_value_t* args,
                                  uint32_t arg_count, weft_vm_value_t* results,
                                  uint32_t result_count, uint32_t max_depth,
                                  weft_allocator_t allocator) {
  if (results && result_count) {
    memset(results, 0, result_count * sizeof(*results));
  }
  // |args| and |results| only matter when there are some.
  weft_status_t status = weft_arguments_require(
      __func__, "context,qualified_name,args,results",
      (const void* const[]){context, qualified_name,
                            arg_count ? (const void*)args : &arg_count,
                            result_count ? (const void*)results : &arg_count},
      4);
  const weft_vm_instance_t* instance = NULL;
  uint32_t function_index = 0;
  if (weft_status_is_ok(status)) {
    status = weft_vm_context_resolve(context, qualified_name, &instance,
                                     &function_index);
  }
  weft_vm_stack_t stack;
  weft_vm_stack_initialize(allocator, max_depth, &stack);
  if (weft_status_is_ok(status)) {
    status = weft_vm_interpreter_begin(&stack, instance, NULL, function_index,
                                       args, arg_count);
  }
  weft_vm_run_state_t state = WEFT_VM_RUN_YIELDED;
  while (weft_status_is_ok(status) && state != WEFT_VM_RUN_DONE) {
    status = weft_vm_interpreter_run(&stack, WEFT_VM_SYNC_BUDGET, results,
                                     result_count, &state);
    if (weft_status_is_ok(status) && state == WEFT_VM_RUN_WAITING) {
      weft_vm_wait_in_place(&stack);
    }
  }
  weft_vm_stack_deinitialize(&stack);
  return status;
}
