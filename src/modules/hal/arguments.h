// weft hal module: reading the arguments of native calls.
//
// The VM has already checked each argument's type, and each ref's type
// name and nullness, against the function's signature; these helpers
// check what a signature cannot say (sign, range, list elements) and
// convert to what the HAL takes. Every error is INVALID_ARGUMENT (a range
// past the end of a bytes ref: OUT_OF_RANGE) with the message
// "<function>: argument '<name>' ...", |function| being the qualified
// name ("hal.queue.fill") and |argument| the name docs/VM.md gives.
#ifndef WEFT_MODULES_HAL_ARGUMENTS_H_
#define WEFT_MODULES_HAL_ARGUMENTS_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vm/list_impl.h"
#include "weft/buffer.h"
#include "weft/executable.h"
#include "weft/semaphore.h"
#include "weft/status.h"
#include "weft/vm/value.h"

// INVALID_ARGUMENT "<function>: argument '<argument>' <format...>".
weft_status_t weft_hal_argument_error(const char* function,
                                      const char* argument, const char* format,
                                      ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

// What |value| is, for messages: "an i64", "a 'hal.semaphore'", "null".
void weft_hal_describe_value(const weft_vm_value_t* value, char* text,
                             size_t capacity);

// |value| as a size or offset: INVALID_ARGUMENT when below 0.
weft_status_t weft_hal_arg_size(const char* function, const char* argument,
                                int64_t value, uint64_t* out_value);

// One i64 argument read as a size or offset: where it is among the call's
// arguments and its name.
typedef struct weft_hal_size_arg_t {
  uint32_t index;
  const char* name;
} weft_hal_size_arg_t;

// Reads the |count| size arguments |specs| describes from |args| into
// |out_sizes|, in order: INVALID_ARGUMENT naming the first below 0.
weft_status_t weft_hal_arg_sizes(const char* function,
                                 const weft_vm_value_t* args,
                                 const weft_hal_size_arg_t* specs,
                                 uint32_t count, uint64_t* out_sizes);

// An i32 |value| as a count, index or ordinal: INVALID_ARGUMENT when below
// 0.
weft_status_t weft_hal_arg_u32(const char* function, const char* argument,
                               int32_t value, uint32_t* out_value);

// A failure code a program passes (semaphore.fail, fence.fail):
// INVALID_ARGUMENT naming "code" for OK, DEFERRED and unknown codes.
weft_status_t weft_hal_arg_failure_code(const char* function, int32_t code);

// The status a program fails semaphores with: |code| (checked by
// weft_hal_arg_failure_code) and "failed by the program (<function>)".
weft_status_t weft_hal_program_failure(const char* function, int32_t code);

// The (semaphore, value) list of fence ref |fence|; the empty list for the
// null ref. Valid while the fence is held and unchanged.
weft_semaphore_list_t weft_hal_arg_fence_list(weft_vm_ref_t fence);

// A NUL-terminated copy of a bytes ref, inline when short.
typedef struct weft_hal_string_t {
  char* text;
  weft_allocator_t allocator;
  char inline_text[128];
} weft_hal_string_t;

// Copies bytes ref |bytes| into |out_string| (deinitialize it after any
// result). INVALID_ARGUMENT when the bytes hold a NUL.
weft_status_t weft_hal_arg_string(const char* function, const char* argument,
                                  weft_vm_ref_t bytes,
                                  weft_allocator_t allocator,
                                  weft_hal_string_t* out_string);
// Frees what weft_hal_arg_string allocated (safe after any result).
void weft_hal_string_deinitialize(weft_hal_string_t* string);

// [offset, offset + length) of bytes ref |bytes|: INVALID_ARGUMENT for a
// negative offset or length, OUT_OF_RANGE past the end (naming both
// lengths). |*out_data| points into the bytes (valid while they are held).
weft_status_t weft_hal_arg_bytes_range(const char* function,
                                       const char* argument,
                                       weft_vm_ref_t bytes, int64_t offset,
                                       int64_t length,
                                       const uint8_t** out_data);

// A fill pattern: the low |pattern_length| bytes of |pattern| as an
// integer of that width (1, 2 or 4 bytes; anything else is
// INVALID_ARGUMENT naming "pattern_length").
typedef union weft_hal_pattern_t {
  uint8_t u8;
  uint16_t u16;
  uint32_t u32;
} weft_hal_pattern_t;
weft_status_t weft_hal_arg_pattern(const char* function, int32_t pattern,
                                   int32_t pattern_length,
                                   weft_hal_pattern_t* out_pattern);

// Storage for an argument converted to an array: inline when it fits,
// else allocated. Deinitialize after any result.
typedef struct weft_hal_scratch_t {
  void* data;
  weft_allocator_t allocator;
  _Alignas(16) uint8_t inline_data[1024];
} weft_hal_scratch_t;
// Starts |out_scratch| empty, allocating from |allocator| past the inline
// storage.
void weft_hal_scratch_initialize(weft_allocator_t allocator,
                                 weft_hal_scratch_t* out_scratch);
// Frees what the scratch allocated.
void weft_hal_scratch_deinitialize(weft_hal_scratch_t* scratch);

// Dispatch constants from list ref |list| (null: none): i32 elements, or
// f32 elements passed as their bits; any other element is
// INVALID_ARGUMENT naming its index and type. |*out_constants| lives in
// |scratch|.
weft_status_t weft_hal_arg_constants(const char* function, const char* argument,
                                     weft_vm_ref_t list,
                                     weft_hal_scratch_t* scratch,
                                     uint32_t* out_count,
                                     const uint32_t** out_constants);

// Dispatch bindings from list ref |list| (null: none): each element a
// hal.buffer (the whole buffer) or a hal.buffer_view (its range); with
// |allow_slots| (recording a command buffer) an i32 element is a binding
// table slot (the whole slot). Anything else, null included, is
// INVALID_ARGUMENT naming the element. |*out_refs| lives in |scratch|.
weft_status_t weft_hal_arg_buffer_refs(const char* function,
                                       const char* argument, weft_vm_ref_t list,
                                       bool allow_slots,
                                       weft_hal_scratch_t* scratch,
                                       uint32_t* out_count,
                                       const weft_buffer_ref_t** out_refs);

// A binding table from list ref |list| (null: empty): hal.buffer or
// hal.buffer_view elements, bound to slots 0, 1, ... in order.
// |out_table| points into |scratch|.
weft_status_t weft_hal_arg_binding_table(const char* function,
                                         const char* argument,
                                         weft_vm_ref_t list,
                                         weft_hal_scratch_t* scratch,
                                         weft_binding_table_t* out_table);

// The arguments of a dispatch, queued or recorded: (executable, ordinal,
// x, y, z, constants?, bindings?) from |args| on, converted.
typedef struct weft_hal_dispatch_args_t {
  weft_executable_t* executable;
  uint32_t ordinal;
  uint32_t workgroup_count[3];
  uint32_t constant_count;
  const uint32_t* constants;
  uint32_t binding_count;
  const weft_buffer_ref_t* bindings;
  weft_hal_scratch_t constant_scratch;
  weft_hal_scratch_t binding_scratch;
} weft_hal_dispatch_args_t;

// Reads a dispatch's arguments (negative ordinal or workgroup counts,
// and bad list elements, are INVALID_ARGUMENT; |allow_slots| as in
// weft_hal_arg_buffer_refs). Deinitialize |out_dispatch| after any result.
weft_status_t weft_hal_arg_dispatch(const char* function,
                                    const weft_vm_value_t* args,
                                    bool allow_slots,
                                    weft_allocator_t allocator,
                                    weft_hal_dispatch_args_t* out_dispatch);
// Frees what weft_hal_arg_dispatch allocated.
void weft_hal_dispatch_args_deinitialize(weft_hal_dispatch_args_t* dispatch);

// A buffer ref for recording: |buffer| when non-null (|slot| ignored),
// else binding table slot |slot| (>= 0, INVALID_ARGUMENT naming
// |slot_argument| otherwise), over [offset, offset + length).
weft_status_t weft_hal_arg_recorded_buffer(const char* function,
                                           const char* slot_argument,
                                           weft_vm_ref_t buffer, int32_t slot,
                                           uint64_t offset, uint64_t length,
                                           weft_buffer_ref_t* out_ref);

#endif  // WEFT_MODULES_HAL_ARGUMENTS_H_
