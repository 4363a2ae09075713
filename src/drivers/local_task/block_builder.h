// weft: compiling recorded commands into the block ISA (block_isa.h).
//
// The generic recording (hal/command_buffer_impl.h) is compiled once, when
// the command buffer ends, into an immutable weft_block_recording_t:
// commands packed into blocks, fixups for every buffer reference, a command
// index and a region table. Everything grows through the allocator; nothing
// is bounded by a fixed-size array. Blocks split automatically: a command
// that does not fit ends the block with a BRANCH to a new one; an update
// larger than what is left is cut into pieces; a single command larger than
// a block gets a block of its own size.
//
// Buffer references become fixups: a direct reference to a buffer with
// memory is mapped now (DIRECT); a direct reference to a transient buffer,
// or to any buffer that cannot be mapped yet, is resolved when a submission
// starts (LATE); a binding-table slot is resolved per submission
// (INDIRECT). The recording retains every buffer and executable it uses, so
// it does not depend on the command buffer's lifetime.
#ifndef WEFT_DRIVERS_LOCAL_TASK_BLOCK_BUILDER_H_
#define WEFT_DRIVERS_LOCAL_TASK_BLOCK_BUILDER_H_

#include <stddef.h>
#include <stdint.h>

#include "drivers/local_task/block_isa.h"
#include "hal/command_buffer_impl.h"
#include "weft/allocator.h"
#include "weft/device.h"
#include "weft/status.h"

// Bytes per block unless the options say otherwise.
#define WEFT_BLOCK_DEFAULT_BLOCK_SIZE 8192u
// The smallest block size the options accept.
#define WEFT_BLOCK_MIN_BLOCK_SIZE 256u
// The largest block size the options accept.
#define WEFT_BLOCK_MAX_BLOCK_SIZE (1u << 24)
// Bytes per FILL/COPY tile unless the options say otherwise.
#define WEFT_BLOCK_DEFAULT_TRANSFER_TILE_BYTES (64u * 1024u)

typedef struct weft_block_builder_options_t {
  // Bytes per block, header included: 0 for WEFT_BLOCK_DEFAULT_BLOCK_SIZE,
  // else a multiple of WEFT_BLOCK_ALIGNMENT within [MIN, MAX].
  uint32_t block_size;
  // Workgroups per dispatch tile: 0 lets each submission choose from its
  // worker count.
  uint32_t dispatch_tile_size;
  // Bytes per FILL/COPY tile: 0 for WEFT_BLOCK_DEFAULT_TRANSFER_TILE_BYTES,
  // else a non-zero multiple of WEFT_BLOCK_ALIGNMENT.
  uint32_t transfer_tile_bytes;
} weft_block_builder_options_t;

// Compiles |command_count| recorded |commands| (as returned by
// weft_command_buffer_commands; borrowed) into a new recording allocated
// from |allocator|. |options| may be NULL for the defaults. |what| prefixes
// messages ("command_buffer_end").
//
// Errors: INVALID_ARGUMENT for bad options or a command that does not
// match its kernel or has an invalid fill pattern; OUT_OF_RANGE for a
// direct range past its buffer; RESOURCE_EXHAUSTED when an allocation
// fails. A failed build frees everything it made and releases everything it
// retained. Thread-safe (builds share nothing).
weft_status_t weft_block_recording_build(
    const weft_command_t* commands, uint32_t command_count,
    const weft_block_builder_options_t* options, weft_allocator_t allocator,
    const char* what, weft_block_recording_t** out_recording);

// Frees a recording made by weft_block_recording_build: ends its mappings,
// releases its buffers and executables, frees its memory. No submission may
// still be using it. NULL is a no-op.
void weft_block_recording_free(weft_block_recording_t* recording);

// Bytes of caller storage weft_block_recording_initialize_dispatch needs for
// a dispatch with |constant_count| constants and |binding_count| bindings.
size_t weft_block_recording_dispatch_storage_size(uint32_t constant_count,
                                                  uint32_t binding_count);

// Builds a one-dispatch recording into caller storage (|storage_size|
// bytes, any alignment; e.g. arena memory), allocating nothing: the queue's
// dispatch path. The arguments must already have passed
// weft_dispatch_validate; |bindings| are direct references (length may be
// WEFT_WHOLE_BUFFER). Every binding becomes a LATE fixup, mapped when a
// submission starts, so transient buffers work. The recording retains the
// executable and the buffers; end it with
// weft_block_recording_deinitialize. RESOURCE_EXHAUSTED when the storage
// is too small, OUT_OF_RANGE when a binding's range does not fit its
// buffer, INVALID_ARGUMENT when a binding has no buffer.
weft_status_t weft_block_recording_initialize_dispatch(
    weft_executable_t* executable, uint32_t kernel_ordinal,
    const uint32_t workgroup_count[3], uint32_t constant_count,
    const uint32_t* constants, uint32_t binding_count,
    const weft_buffer_ref_t* bindings, uint32_t dispatch_tile_size,
    void* storage, size_t storage_size, weft_block_recording_t** out_recording);

// Releases what weft_block_recording_initialize_dispatch retained. The
// storage is the caller's again afterwards. NULL is a no-op.
void weft_block_recording_deinitialize(weft_block_recording_t* recording);

// The device hook for the command buffer's end (device_impl.h
// command_buffer_finalize): compiles |command_buffer|'s commands with the
// default options and attaches the recording to the command buffer as its
// driver data (freed with the command buffer).
weft_status_t weft_block_command_buffer_finalize(
    weft_device_t* device, weft_command_buffer_t* command_buffer);

// The recording weft_block_command_buffer_finalize attached to
// |command_buffer|, or NULL if it has none (not ended, or recorded for a
// device whose finalize hook is not weft_block_command_buffer_finalize).
const weft_block_recording_t* weft_block_command_buffer_recording(
    const weft_command_buffer_t* command_buffer);

#endif  // WEFT_DRIVERS_LOCAL_TASK_BLOCK_BUILDER_H_
