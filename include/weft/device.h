// weft: devices and their queue operations.
//
// Every queue operation takes a queue affinity, a wait list and a signal
// list. Nothing starts before every wait is reached; signals are published
// only after the work and its memory effects are complete; when the work
// fails (or a wait fails) every signal semaphore fails with the error.
// Whether an operation whose wait failed did its work is not part of the
// contract: CPU drivers skip it, while a GPU driver may already have queued
// it behind the failing work on the GPU (an in-stream wait). Either way its
// signals fail, so nothing that waits on them sees what it wrote.
// Failures travel only down a timeline (weft/semaphore.h, "Failure
// order"): an operation that will not run fails a semaphore it also waits
// on only once that wait is reached, so the operations upstream of it on
// that timeline still run and signal.
// Semaphores are the only ordering: two submissions with no semaphore
// between them may run in any order or concurrently.
//
// Validation that needs no waiting (ranges, types, permissions, a file read
// past its known end) fails synchronously and leaves the signal semaphores
// untouched. Once an operation is accepted (OK returned) its outcome is
// reported only through the signal semaphores. Resources named by an
// operation are retained until it retires. Wait and signal lists are
// borrowed for the duration of the call.
//
// NULL: pointer arguments are required unless the function's comment says
// "|x| may be NULL" (see "NULL arguments" in weft/status.h).
#ifndef WEFT_DEVICE_H_
#define WEFT_DEVICE_H_

#include <stdint.h>
#include <stdio.h>

#include "weft/allocator.h"
#include "weft/buffer.h"
#include "weft/command_buffer.h"
#include "weft/executable.h"
#include "weft/fence.h"
#include "weft/file.h"
#include "weft/semaphore.h"
#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_device_t weft_device_t;

// A bit mask of queues an operation may run on.
typedef uint64_t weft_queue_affinity_t;
#define WEFT_QUEUE_AFFINITY_ANY ((weft_queue_affinity_t)UINT64_MAX)

// Creates a device from a string such as "local-sync" or
// "local-task?workers=4" using the built-in drivers. NOT_FOUND listing the
// known drivers for an unknown name; INVALID_ARGUMENT listing the accepted
// options for an unknown option; both suggest the closest known name for a
// near miss ("did you mean 'local-task'?").
weft_status_t weft_device_create(const char* device_string,
                                 weft_allocator_t allocator,
                                 weft_device_t** out_device);

void weft_device_retain(weft_device_t* device);

// Drops a reference. Queue operations do not hold their device, so the last
// release ends it, the same way on every driver:
//  - operations still waiting (on their waits, or ready but not started)
//    fail their signals with CANCELLED naming the operation and the device:
//    "queue_fill (waiting for 'gate' >= 1, signalling 'filled' = 1) on queue
//    0 of device 'local-task' was cancelled: the device was released while
//    it waited"; operations waiting on those fail in turn (in the failure
//    order of weft/semaphore.h);
//  - operations already running (a kernel, a host call, a file transfer)
//    finish and signal as usual;
//  - once the last of them is done, everything the device allocated is
//    freed. A recorded command buffer holds no device, so a waiting execute
//    does not keep one alive.
// The call returns once the waiting operations were cancelled. On
// local-task it also waits for the running ones and joins the workers
// (handing that to a thread of its own when called on one of its workers);
// on local-sync, whose operations run on the threads that made them ready,
// the last of those frees the device when it ends.
void weft_device_release(weft_device_t* device);

// The device string it was created from, e.g. "local-sync".
const char* weft_device_id(const weft_device_t* device);
// The driver name, e.g. "local-sync".
const char* weft_device_driver_name(const weft_device_t* device);
// The allocator the device allocates host memory with.
weft_allocator_t weft_device_host_allocator(const weft_device_t* device);

// Queries an integer property: "queue.count", "worker.count",
// "dispatch.concurrent" (0/1), "semaphore.host_wait" (0/1).
// NOT_FOUND for an unknown key (*out_value is then 0).
weft_status_t weft_device_query_i64(weft_device_t* device, const char* key,
                                    int64_t* out_value);

// Creates a timeline semaphore usable by this and every other device (a
// driver may make one it waits on natively; any semaphore works with any
// device).
weft_status_t weft_device_create_semaphore(weft_device_t* device,
                                           uint64_t initial_value,
                                           weft_semaphore_t** out_semaphore);

// Makes an executable from |source| (weft/executable.h). The CPU drivers
// take WEFT_EXECUTABLE_FORMAT_CPU_STATIC and _CPU_SHARED_OBJECT; a format
// the device does not take is INVALID_ARGUMENT naming both. An executable
// made by one CPU device runs on every CPU device.
weft_status_t weft_device_create_executable(weft_device_t* device,
                                            weft_executable_source_t source,
                                            weft_executable_t** out_executable);

// Allocates a buffer now (not queue-ordered).
weft_status_t weft_device_allocate_buffer(weft_device_t* device,
                                          weft_buffer_params_t params,
                                          weft_device_size_t byte_length,
                                          weft_buffer_t** out_buffer);

// Writes the device's operations not yet retired to |stream| (nothing when
// either is NULL): each one waiting on its waits (every wait: semaphore
// name, value wanted, value now, and a mark when no pending operation of
// any live device signals it that far: "only the host can") or in file I/O
// (the file range), with its age and what it will signal; ops already
// running are counted. Ends with any wait-for cycle through its operations
// (see weft/diagnostics.h).
void weft_device_dump_pending(weft_device_t* device, FILE* stream);

// --- Queue operations -------------------------------------------------------

// Returns a buffer handle at once; its memory is committed when the
// operation runs. Using it before then is FAILED_PRECONDITION.
weft_status_t weft_device_queue_alloca(
    weft_device_t* device, weft_queue_affinity_t affinity,
    weft_semaphore_list_t wait_list, weft_semaphore_list_t signal_list,
    weft_buffer_params_t params, weft_device_size_t byte_length,
    weft_buffer_t** out_buffer);

// Releases the memory of a buffer from weft_device_queue_alloca when the
// waits are reached. Using it afterwards is FAILED_PRECONDITION.
weft_status_t weft_device_queue_dealloca(weft_device_t* device,
                                         weft_queue_affinity_t affinity,
                                         weft_semaphore_list_t wait_list,
                                         weft_semaphore_list_t signal_list,
                                         weft_buffer_t* buffer);

// Fills [offset, offset+length) with a 1, 2 or 4 byte pattern.
weft_status_t weft_device_queue_fill(
    weft_device_t* device, weft_queue_affinity_t affinity,
    weft_semaphore_list_t wait_list, weft_semaphore_list_t signal_list,
    weft_buffer_t* target, weft_device_size_t offset,
    weft_device_size_t length, const void* pattern, uint32_t pattern_length);

// Copies |length| host bytes from |source| (copied during the call).
// |source| may be NULL when |length| is 0.
weft_status_t weft_device_queue_update(
    weft_device_t* device, weft_queue_affinity_t affinity,
    weft_semaphore_list_t wait_list, weft_semaphore_list_t signal_list,
    const void* source, weft_buffer_t* target, weft_device_size_t offset,
    weft_device_size_t length);

weft_status_t weft_device_queue_copy(
    weft_device_t* device, weft_queue_affinity_t affinity,
    weft_semaphore_list_t wait_list, weft_semaphore_list_t signal_list,
    weft_buffer_t* source, weft_device_size_t source_offset,
    weft_buffer_t* target, weft_device_size_t target_offset,
    weft_device_size_t length);

// Reads |length| bytes of |file| at |file_offset| into |target|.
weft_status_t weft_device_queue_read(
    weft_device_t* device, weft_queue_affinity_t affinity,
    weft_semaphore_list_t wait_list, weft_semaphore_list_t signal_list,
    weft_file_t* file, uint64_t file_offset, weft_buffer_t* target,
    weft_device_size_t target_offset, weft_device_size_t length);

// Writes |length| bytes of |source| into |file| at |file_offset|.
weft_status_t weft_device_queue_write(
    weft_device_t* device, weft_queue_affinity_t affinity,
    weft_semaphore_list_t wait_list, weft_semaphore_list_t signal_list,
    weft_buffer_t* source, weft_device_size_t source_offset, weft_file_t* file,
    uint64_t file_offset, weft_device_size_t length);

// Dispatches one kernel with direct |bindings| and |constants| (copied).
// |constants| may be NULL when |constant_count| is 0, |bindings| may be
// NULL when |binding_count| is 0.
weft_status_t weft_device_queue_dispatch(
    weft_device_t* device, weft_queue_affinity_t affinity,
    weft_semaphore_list_t wait_list, weft_semaphore_list_t signal_list,
    weft_executable_t* executable, uint32_t kernel_ordinal,
    const uint32_t workgroup_count[3], uint32_t constant_count,
    const uint32_t* constants, uint32_t binding_count,
    const weft_buffer_ref_t* bindings);

// Executes a recorded command buffer with |binding_table| resolving its
// indirect references (may be empty when it has none). When a command
// fails, the execute fails with that command's error (naming it) and the
// commands after it may or may not have run: a GPU cannot stop a launched
// graph halfway. What they would have written is undefined, as nothing
// waiting on the execute's signals runs.
weft_status_t weft_device_queue_execute(
    weft_device_t* device, weft_queue_affinity_t affinity,
    weft_semaphore_list_t wait_list, weft_semaphore_list_t signal_list,
    weft_command_buffer_t* command_buffer, weft_binding_table_t binding_table);

// Signals once the waits are reached; orders nothing else.
weft_status_t weft_device_queue_barrier(weft_device_t* device,
                                        weft_queue_affinity_t affinity,
                                        weft_semaphore_list_t wait_list,
                                        weft_semaphore_list_t signal_list);

typedef struct weft_host_call_context_t {
  weft_device_t* device;
  weft_queue_affinity_t affinity;
  // The operation's signals, valid during the call only. A call that will
  // return DEFERRED takes them over: it makes a fence of them first
  // (weft_fence_create_from_list) and later signals or fails that fence.
  weft_semaphore_list_t signal_list;
  // OK when the call runs. Only with WEFT_HOST_CALL_FLAG_TOLD_IF_NOT_RUN:
  // the reason it will not run (a wait failed, or the device was released
  // first), borrowed for the call; the call then only lets go of what it
  // owns, and the queue fails the signals with this status.
  weft_status_t not_run_status;
} weft_host_call_context_t;

// A host function run by a queue. Returns OK (the queue signals), an error
// (the queue fails the signals with it) or DEFERRED (the function took over
// |context->signal_list| and will signal or fail it later).
typedef weft_status_t (*weft_host_call_fn_t)(
    void* user_data, const uint64_t args[4],
    const weft_host_call_context_t* context);

typedef enum weft_host_call_flag_bits_e {
  WEFT_HOST_CALL_FLAG_NONE = 0,
  // The queue signals as soon as the waits are reached, before the call
  // runs; the call's result is then dropped (and must not be DEFERRED).
  WEFT_HOST_CALL_FLAG_NON_BLOCKING = 1u << 0,
  // The function is also called, once, when the op will not run, with
  // context->not_run_status saying why (its result is then ignored): for a
  // call whose |user_data| owns memory or references that would otherwise
  // leak.
  WEFT_HOST_CALL_FLAG_TOLD_IF_NOT_RUN = 1u << 1,
} weft_host_call_flag_bits_t;
typedef uint32_t weft_host_call_flags_t;

// Runs |fn(user_data, args, context)| on a queue thread once the waits are
// reached. |user_data| may be NULL. |args| may be NULL (zeros).
weft_status_t weft_device_queue_host_call(
    weft_device_t* device, weft_queue_affinity_t affinity,
    weft_semaphore_list_t wait_list, weft_semaphore_list_t signal_list,
    weft_host_call_fn_t fn, void* user_data, const uint64_t args[4],
    weft_host_call_flags_t flags);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_DEVICE_H_
