// weft hal module: the await protocol shared by semaphore.await,
// fence.await and fence.await_list.
//
// At entry (pc 0) an await drops the sources already reached; with none
// left it returns 0 at once; a failed source fails the call with its
// original status (the VM adds its stack). Otherwise it enters a wait
// frame, ALL over the remaining (semaphore, value) sources (deduplicated,
// the larger value kept) until now + timeout (a negative timeout never
// ends), sets pc 1 and returns DEFERRED. Resumed at pc 1 it returns 0 when
// the wait was reached, the DEADLINE_EXCEEDED code as its i32 result when
// the deadline passed (the bare code the VM hands over, not a failure),
// and fails with any other result (a semaphore's failure, as it was).
// The same protocol serves weft_vm_invoke_sync (blocking in place) and
// the loop.
#ifndef WEFT_MODULES_HAL_AWAIT_H_
#define WEFT_MODULES_HAL_AWAIT_H_

#include <stdint.h>

#include "vm/module_impl.h"
#include "weft/semaphore.h"

// The pc an await resumes at.
#define WEFT_HAL_AWAIT_RESUME_PC 1u

// Starts an await in |call|'s wait frame, until now + |timeout_ns|
// (negative: no deadline).
void weft_hal_await_begin(weft_vm_native_call_t* call, int64_t timeout_ns);

// Adds the sources of |list| not yet reached to the frame. Returns the
// failure (a clone of the original) of a failed semaphore, or
// RESOURCE_EXHAUSTED past the frame's limit.
weft_status_t weft_hal_await_add(weft_vm_native_call_t* call,
                                 weft_semaphore_list_t list);

// Ends the entry of an await after the adds (|status| is theirs,
// consumed): a failure is returned (the frame emptied); an empty frame
// stores 0 in i32 result |result_index| and returns OK; otherwise sets pc
// to WEFT_HAL_AWAIT_RESUME_PC and returns DEFERRED.
weft_status_t weft_hal_await_yield(weft_vm_native_call_t* call,
                                   weft_status_t status, uint32_t result_index);

// The resume of an await: consumes |call->wait_result| and stores the i32
// result in |result_index| (0, or the DEADLINE_EXCEEDED code), or returns
// the failure.
weft_status_t weft_hal_await_resume(weft_vm_native_call_t* call,
                                    uint32_t result_index);

#endif  // WEFT_MODULES_HAL_AWAIT_H_
