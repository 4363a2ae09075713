// weft VM: calling a function of a context on the calling thread.
//
// An invocation is one call with its own stack. weft_vm_invoke_sync runs
// it to the end on the calling thread, blocking in place whenever a native
// call waits; the loop (weft/vm/loop.h) runs many on one thread instead.
//
// NULL: pointer arguments are required unless the function's comment says
// "|x| may be NULL" (see "NULL arguments" in weft/status.h).
#ifndef WEFT_VM_INVOCATION_H_
#define WEFT_VM_INVOCATION_H_

#include <stdint.h>

#include "weft/allocator.h"
#include "weft/status.h"
#include "weft/vm/context.h"
#include "weft/vm/value.h"

#ifdef __cplusplus
extern "C" {
#endif

// Calls |qualified_name| ("module.function") of |context| with |arg_count|
// |args| (borrowed; checked against the signature: count, types, ref type
// names and non-null refs; a bytecode function must be marked export) and
// runs it to the
// end, blocking the calling thread on every wait. Its results go to the
// |result_count| |results|, each set to i32 0 first (results past
// |result_count| are dropped; slots past the function's stay i32 0); on
// success the refs there are the caller's (weft_vm_value_release). A wait's
// deadline passing is handed to the waiting native function as a value
// (the bare DEADLINE_EXCEEDED code); any other failure ends the invocation
// with its original message annotated with the VM stack ("at m.f
// (m.wvm:12)"). |max_depth| bounds the frames (0: the default, 1024); the
// stack and what native calls allocate come from |allocator|. |args| may be
// NULL when |arg_count| is 0; |results| may be NULL when |result_count| is
// 0.
weft_status_t weft_vm_invoke_sync(weft_vm_context_t* context,
                                  const char* qualified_name,
                                  const weft_vm_value_t* args,
                                  uint32_t arg_count, weft_vm_value_t* results,
                                  uint32_t result_count, uint32_t max_depth,
                                  weft_allocator_t allocator);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_VM_INVOCATION_H_
