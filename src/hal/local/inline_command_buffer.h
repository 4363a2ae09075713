// weft: replaying a recorded command buffer inline on the calling thread.
//
// Used by local-sync's queue_execute (and by any CPU driver that runs a
// command buffer without a scheduler). The queue layer has already checked
// the submission with weft_command_buffer_validate_submit.
#ifndef WEFT_HAL_LOCAL_INLINE_COMMAND_BUFFER_H_
#define WEFT_HAL_LOCAL_INLINE_COMMAND_BUFFER_H_

#include "weft/allocator.h"
#include "weft/buffer.h"
#include "weft/command_buffer.h"
#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

// Runs every command of the ended |command_buffer| in order on the calling
// thread: references resolve against |binding_table| (direct ones against
// their buffers), fills, updates and copies go through the host transfer
// paths, dispatches through weft_inline_dispatch (|allocator| is used only
// for dispatches with more than 16 bindings or large kernel scratch), and
// barriers do nothing (everything before them has already completed).
//
// Stops at the first failing command and returns its error annotated with
// the command, e.g. "while executing command 3 (dispatch 'fail')"; commands
// before it have taken effect. Borrows everything; thread-safe for reusable
// command buffers replayed concurrently (they only read the command list).
weft_status_t weft_command_buffer_replay_inline(
    weft_command_buffer_t* command_buffer, weft_binding_table_t binding_table,
    weft_allocator_t allocator);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_HAL_LOCAL_INLINE_COMMAND_BUFFER_H_
