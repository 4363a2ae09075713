// weft: command buffers.
//
// Record fill, update, copy, dispatch and barrier between begin and end,
// then submit with weft_device_queue_execute. One-shot buffers are submitted
// once; reusable ones any number of times, also concurrently with
// themselves. Buffer references are direct or binding-table slots resolved
// at execute. Recording errors are returned by the recording call (and make
// end fail); binding-table errors are returned by execute.
//
// NULL: pointer arguments are required unless the function's comment says
// "|x| may be NULL" (see "NULL arguments" in weft/status.h).
#ifndef WEFT_COMMAND_BUFFER_H_
#define WEFT_COMMAND_BUFFER_H_

#include "weft/buffer.h"
#include "weft/executable.h"
#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_device_t weft_device_t;
typedef struct weft_command_buffer_t weft_command_buffer_t;

typedef enum weft_command_buffer_mode_bits_e {
  // Submitted exactly once.
  WEFT_COMMAND_BUFFER_MODE_ONE_SHOT = 1u << 0,
  // Submitted any number of times, concurrently too.
  WEFT_COMMAND_BUFFER_MODE_REUSABLE = 1u << 1,
} weft_command_buffer_mode_bits_t;
typedef uint32_t weft_command_buffer_mode_t;

typedef enum weft_command_category_bits_e {
  WEFT_COMMAND_CATEGORY_TRANSFER = 1u << 0,
  WEFT_COMMAND_CATEGORY_DISPATCH = 1u << 1,
  WEFT_COMMAND_CATEGORY_ANY =
      WEFT_COMMAND_CATEGORY_TRANSFER | WEFT_COMMAND_CATEGORY_DISPATCH,
} weft_command_category_bits_t;
typedef uint32_t weft_command_category_t;

// Creates a command buffer for |device|. |binding_capacity| is the number of
// binding-table slots indirect references may use (0 for direct only).
weft_status_t weft_command_buffer_create(
    weft_device_t* device, weft_command_buffer_mode_t mode,
    weft_command_category_t categories, uint32_t binding_capacity,
    weft_command_buffer_t** out_command_buffer);

void weft_command_buffer_retain(weft_command_buffer_t* command_buffer);
void weft_command_buffer_release(weft_command_buffer_t* command_buffer);

weft_command_buffer_mode_t weft_command_buffer_mode(
    const weft_command_buffer_t* command_buffer);
uint32_t weft_command_buffer_binding_capacity(
    const weft_command_buffer_t* command_buffer);
// Number of commands recorded so far.
uint32_t weft_command_buffer_command_count(
    const weft_command_buffer_t* command_buffer);

// Starts recording. FAILED_PRECONDITION if already begun or ended.
weft_status_t weft_command_buffer_begin(weft_command_buffer_t* command_buffer);
// Finishes recording. Returns the first recording error, if any.
weft_status_t weft_command_buffer_end(weft_command_buffer_t* command_buffer);

// Orders everything recorded before it before everything after it.
weft_status_t weft_command_buffer_barrier(
    weft_command_buffer_t* command_buffer);

// Fills |target| with a 1, 2 or 4 byte |pattern|.
weft_status_t weft_command_buffer_fill(weft_command_buffer_t* command_buffer,
                                       weft_buffer_ref_t target,
                                       const void* pattern,
                                       uint32_t pattern_length);

// Copies |source| host bytes (copied now) into |target|.
weft_status_t weft_command_buffer_update(weft_command_buffer_t* command_buffer,
                                         const void* source,
                                         weft_buffer_ref_t target);

// Copies |source| into |target| (same length; lengths of WEFT_WHOLE_BUFFER
// resolve at execute).
weft_status_t weft_command_buffer_copy(weft_command_buffer_t* command_buffer,
                                       weft_buffer_ref_t source,
                                       weft_buffer_ref_t target);

// Dispatches kernel |kernel_ordinal| of |executable| over
// |workgroup_count| workgroups with |constants| (copied now) and |bindings|.
// The counts must match the kernel's definition (INVALID_ARGUMENT).
// |constants| may be NULL when |constant_count| is 0, |bindings| may be
// NULL when |binding_count| is 0.
weft_status_t weft_command_buffer_dispatch(
    weft_command_buffer_t* command_buffer, weft_executable_t* executable,
    uint32_t kernel_ordinal, const uint32_t workgroup_count[3],
    uint32_t constant_count, const uint32_t* constants, uint32_t binding_count,
    const weft_buffer_ref_t* bindings);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_COMMAND_BUFFER_H_
