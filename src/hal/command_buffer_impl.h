// weft: command buffer internals shared with the queue layer and drivers.
//
// Recording is generic (command_buffer.c): every device records into the
// same list of commands, validated at record time as far as the buffers are
// known. A driver executes the list its own way: local-sync replays it inline
// (local/inline_command_buffer.h); other drivers may compile it to their own
// form. After end() the list is immutable, so any number of threads may read
// it at once (a reusable command buffer executing concurrently with itself).
//
// Buffer references in the list are either direct (|buffer| set, retained by
// the command buffer, the length already resolved unless noted) or indirect
// (|buffer| NULL, |slot| indexes the binding table given at execute, the
// length may still be WEFT_WHOLE_BUFFER). weft_command_buffer_resolve_ref
// turns either into a concrete buffer range.
//
// Copy lengths: when exactly one side of a copy has a WEFT_WHOLE_BUFFER
// length it takes the other side's length; when both do, each resolves to
// the end of its buffer and the two must be equal.
#ifndef WEFT_HAL_COMMAND_BUFFER_IMPL_H_
#define WEFT_HAL_COMMAND_BUFFER_IMPL_H_

#include <stddef.h>
#include <stdint.h>

#include "weft/buffer.h"
#include "weft/command_buffer.h"
#include "weft/executable.h"
#include "weft/status.h"

typedef enum weft_command_type_e {
  WEFT_COMMAND_TYPE_BARRIER = 0,
  WEFT_COMMAND_TYPE_FILL = 1,
  WEFT_COMMAND_TYPE_UPDATE = 2,
  WEFT_COMMAND_TYPE_COPY = 3,
  WEFT_COMMAND_TYPE_DISPATCH = 4,
} weft_command_type_t;

typedef struct weft_command_fill_t {
  weft_buffer_ref_t target;
  // The pattern bytes in the low bytes (host byte order, as memcpy'd).
  uint32_t pattern;
  uint32_t pattern_length;  // 1, 2 or 4
} weft_command_fill_t;

typedef struct weft_command_update_t {
  // Never WEFT_WHOLE_BUFFER: the length is the size of |source|.
  weft_buffer_ref_t target;
  // Copy of the host bytes, owned by the command buffer (NULL if empty).
  const uint8_t* source;
} weft_command_update_t;

typedef struct weft_command_copy_t {
  weft_buffer_ref_t source;
  weft_buffer_ref_t target;
} weft_command_copy_t;

typedef struct weft_command_dispatch_t {
  weft_executable_t* executable;  // retained by the command buffer
  uint32_t kernel_ordinal;
  uint32_t workgroup_count[3];
  uint32_t constant_count;
  const uint32_t* constants;  // owned by the command buffer
  uint32_t binding_count;
  const weft_buffer_ref_t* bindings;  // owned by the command buffer
} weft_command_dispatch_t;

// One recorded command: a tagged union.
typedef struct weft_command_t {
  weft_command_type_t type;
  union {
    weft_command_fill_t fill;
    weft_command_update_t update;
    weft_command_copy_t copy;
    weft_command_dispatch_t dispatch;
  };
} weft_command_t;

// Returns the recorded commands and their count in |out_count|. The array is
// owned by the command buffer and immutable once end() succeeded; it must
// not be used after the command buffer is released. Thread-safe after end().
const weft_command_t* weft_command_buffer_commands(
    const weft_command_buffer_t* command_buffer, uint32_t* out_count);

// The device the command buffer was created for (borrowed), until end():
// a recorded command buffer holds no device (NULL afterwards).
weft_device_t* weft_command_buffer_device(
    const weft_command_buffer_t* command_buffer);

// The number of binding-table entries a submission must provide: one past
// the highest slot any command uses (0 for direct references only).
uint32_t weft_command_buffer_required_binding_count(
    const weft_command_buffer_t* command_buffer);

// Checks that |command_buffer| may be submitted now with |binding_table|:
//  - it has been ended without a recording error (FAILED_PRECONDITION,
//    carrying the recording error's message, otherwise);
//  - a one-shot command buffer is submitted at most once: the first call
//    that gets this far marks it submitted and later ones fail with
//    FAILED_PRECONDITION;
//  - the table has an entry for every slot used (OUT_OF_RANGE), each used
//    entry has a buffer (INVALID_ARGUMENT) with a range that fits
//    (OUT_OF_RANGE) and the usage its commands need (PERMISSION_DENIED),
//    and every indirect reference fits in its entry's range (OUT_OF_RANGE);
//    fills and copies through the table are checked in full (pattern
//    alignment, copy lengths and overlap: INVALID_ARGUMENT).
// Messages start with "queue_execute:" and name the slot and command.
// Thread-safe: reusable command buffers may be validated concurrently.
weft_status_t weft_command_buffer_validate_submit(
    weft_command_buffer_t* command_buffer, weft_binding_table_t binding_table);

// Resolves |ref| into a concrete buffer range: a direct reference against
// its buffer, an indirect one against entry |ref.slot| of |binding_table|
// (the entry's buffer, at the entry's offset plus the reference's offset).
// |out_binding->length| is never WEFT_WHOLE_BUFFER. OUT_OF_RANGE when the
// slot is past the table or a range does not fit; INVALID_ARGUMENT when the
// entry has no buffer. |what| prefixes messages. Borrows everything.
weft_status_t weft_command_buffer_resolve_ref(
    weft_buffer_ref_t ref, weft_binding_table_t binding_table, const char* what,
    weft_buffer_binding_t* out_binding);

// Resolves a fill command's target and checks its pattern alignment.
weft_status_t weft_command_buffer_resolve_fill(
    const weft_command_fill_t* fill, weft_binding_table_t binding_table,
    const char* what, weft_buffer_binding_t* out_target);

// Resolves both sides of a copy command to the same length (see the copy
// length rule above) and checks that they do not overlap.
weft_status_t weft_command_buffer_resolve_copy(
    const weft_command_copy_t* copy, weft_binding_table_t binding_table,
    const char* what, weft_buffer_binding_t* out_source,
    weft_buffer_binding_t* out_target);

// Attaches |data| to |command_buffer| for its driver (the compiled form of
// the recording); |destroy| (may be NULL) frees it when the command buffer
// is destroyed, before the commands release what they retained. Called at
// most once, from the device's command_buffer_finalize hook during end();
// read-only afterwards, so any thread may read it after end().
void weft_command_buffer_set_driver_data(weft_command_buffer_t* command_buffer,
                                         void* data,
                                         void (*destroy)(void* data));

// The data attached with weft_command_buffer_set_driver_data when it was
// attached with |destroy| (which identifies the driver that made it),
// otherwise NULL: a command buffer recorded for another driver's device
// carries none of this driver's data.
void* weft_command_buffer_driver_data(
    const weft_command_buffer_t* command_buffer,
    void (*destroy)(void* data));

// Annotates |status| (consumed, returned), a failure of command
// |command_index| of |command_buffer| during an execution, the same way on
// every driver: "while executing command 3 (dispatch 'fail')".
weft_status_t weft_command_buffer_annotate_command(
    const weft_command_buffer_t* command_buffer, uint32_t command_index,
    weft_status_t status);

// Writes a short description of |command| for messages into |buffer|, e.g.
// "dispatch 'scale_offset'" or "fill", and returns |buffer|.
const char* weft_command_describe(const weft_command_t* command, char* buffer,
                                  size_t capacity);

#endif  // WEFT_HAL_COMMAND_BUFFER_IMPL_H_
