// weft: the block ISA, the compiled form of a command buffer on local-task.
//
// A recording is a chain of fixed-size blocks. Each block holds commands
// packed from its start, growing forward, and fixups packed from its end,
// growing backward; the builder starts a new block (and ends the old one
// with a BRANCH to it) when the next command and its fixups would not fit
// between the two. The last block ends with RETURN.
//
//   +--------------+---------+---------+-- ... --+-----------+---------+
//   | weft_block_t | command | command |  free   | fixup k-1 | fixup 0 |
//   +--------------+---------+---------+-- ... --+-----------+---------+
//
// Commands: DISPATCH, FILL, COPY, UPDATE do work; BARRIER ends a region
// (everything before it happens before everything after it); BRANCH
// continues in another block; RETURN ends the recording. Commands inside one
// region may run in any order and concurrently, split into tiles.
//
// Buffer references never appear in commands: a command names fixups by
// their recording-wide index, and each submission resolves every fixup once
// into a host pointer and a length (its pointer table). A dispatch's
// bindings are consecutive fixups, so the pointer table's slice starting at
// |first_fixup| is the kernel's binding_ptrs array as is. Fixup kinds:
//   DIRECT    a buffer mapped while recording; the pointer is in the fixup.
//   INDIRECT  binding-table slot |index| at |offset|, |length| (may be
//             WEFT_WHOLE_BUFFER: to the end of the slot's range).
//   LATE      a buffer known while recording but without memory yet (a
//             transient buffer): late buffer |index| of the recording,
//             mapped when a submission starts.
//
// Everything in a recording is immutable once built; all per-submission
// state lives in the processor's context (block_processor.h), so one
// recording runs concurrently with itself. Every command and fixup is
// aligned to WEFT_BLOCK_ALIGNMENT; command sizes are multiples of it.
#ifndef WEFT_DRIVERS_LOCAL_TASK_BLOCK_ISA_H_
#define WEFT_DRIVERS_LOCAL_TASK_BLOCK_ISA_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/allocator.h"
#include "weft/buffer.h"
#include "weft/executable.h"
#include "weft/kernel_abi.h"

#define WEFT_BLOCK_ALIGNMENT 8u

typedef enum weft_block_opcode_e {
  // Zeroed memory is not a valid command.
  WEFT_BLOCK_OP_INVALID = 0,
  WEFT_BLOCK_OP_DISPATCH = 1,
  WEFT_BLOCK_OP_FILL = 2,
  WEFT_BLOCK_OP_COPY = 3,
  WEFT_BLOCK_OP_UPDATE = 4,
  WEFT_BLOCK_OP_BARRIER = 5,
  WEFT_BLOCK_OP_BRANCH = 6,
  WEFT_BLOCK_OP_RETURN = 7,
} weft_block_opcode_t;

// The first 8 bytes of every command.
typedef struct weft_block_cmd_header_t {
  uint8_t opcode;  // weft_block_opcode_t
  uint8_t reserved0;
  uint16_t reserved1;
  // Bytes of the whole command, header included; a multiple of
  // WEFT_BLOCK_ALIGNMENT. The next command starts this far on.
  uint32_t size;
} weft_block_cmd_header_t;

// Runs |kernel| over every workgroup of |workgroup_count|.
typedef struct weft_block_cmd_dispatch_t {
  weft_block_cmd_header_t header;
  weft_kernel_fn_t fn;
  // For messages (name) and local memory; owned by |executable|, which the
  // recording retains.
  const weft_kernel_def_t* kernel;
  const weft_executable_t* executable;
  uint32_t workgroup_count[3];
  uint32_t workgroup_size[3];
  // Workgroups per tile; 0 lets each submission choose from its worker
  // count (block_processor.h).
  uint32_t tile_size;
  uint32_t local_memory_size;
  uint32_t constant_count;
  uint32_t binding_count;
  // Binding i is fixup |first_fixup| + i.
  uint32_t first_fixup;
  // The command-buffer command it was compiled from, for messages (0 in a
  // one-dispatch recording).
  uint32_t command_index;
  // workgroup_count[0] * [1] * [2].
  uint64_t workgroup_total;
  // |constant_count| words follow, padded to WEFT_BLOCK_ALIGNMENT.
  uint32_t constants[];
} weft_block_cmd_dispatch_t;

// Fills the whole range of fixup |target_fixup| with a 1, 2 or 4 byte
// pattern (the range's length is a multiple of the pattern length).
typedef struct weft_block_cmd_fill_t {
  weft_block_cmd_header_t header;
  uint32_t target_fixup;
  uint32_t pattern;  // the pattern bytes in the low bytes, as memcpy'd
  uint32_t pattern_length;
  uint32_t reserved;
} weft_block_cmd_fill_t;

// Copies fixup |source_fixup|'s range to |target_fixup|'s (same length,
// checked when a submission resolves them).
typedef struct weft_block_cmd_copy_t {
  weft_block_cmd_header_t header;
  uint32_t source_fixup;
  uint32_t target_fixup;
} weft_block_cmd_copy_t;

// Writes |length| inline bytes at |target_offset| within fixup
// |target_fixup|'s range. A large update is split into several commands
// sharing one fixup, each with its piece of the data.
typedef struct weft_block_cmd_update_t {
  weft_block_cmd_header_t header;
  uint32_t target_fixup;
  uint32_t length;
  uint64_t target_offset;
  // |length| bytes follow, padded to WEFT_BLOCK_ALIGNMENT.
  uint8_t data[];
} weft_block_cmd_update_t;

// Continues with the first command of |target|.
typedef struct weft_block_cmd_branch_t {
  weft_block_cmd_header_t header;
  const struct weft_block_t* target;
} weft_block_cmd_branch_t;

// BARRIER and RETURN are a bare header.

typedef enum weft_block_fixup_kind_e {
  WEFT_BLOCK_FIXUP_DIRECT = 1,
  WEFT_BLOCK_FIXUP_INDIRECT = 2,
  WEFT_BLOCK_FIXUP_LATE = 3,
} weft_block_fixup_kind_t;

typedef struct weft_block_fixup_t {
  uint8_t kind;  // weft_block_fixup_kind_t
  uint8_t reserved[3];
  // INDIRECT: the binding-table slot. LATE: the late buffer's index in the
  // recording. DIRECT: unused.
  uint32_t index;
  // DIRECT: the resolved host pointer (NULL when |length| is 0).
  uint8_t* host_ptr;
  // INDIRECT: bytes into the slot's bound range. LATE: bytes into the
  // buffer. DIRECT: unused.
  uint64_t offset;
  // Bytes; WEFT_WHOLE_BUFFER only for INDIRECT.
  uint64_t length;
} weft_block_fixup_t;

_Static_assert(sizeof(weft_block_fixup_t) == 32, "fixups are 32 bytes");

// The header at the start of each block.
typedef struct weft_block_t {
  struct weft_block_t* next;  // the next block in recording order
  // Bytes of the block, header included (a multiple of WEFT_BLOCK_ALIGNMENT).
  uint32_t capacity;
  // Bytes of commands after the header.
  uint32_t command_bytes;
  uint32_t fixup_count;
  // Recording-wide index of this block's fixup 0.
  uint32_t first_fixup;
} weft_block_t;

_Static_assert(sizeof(weft_block_t) % WEFT_BLOCK_ALIGNMENT == 0,
               "commands start aligned");

// A run of commands between barriers: commands
// [first_command, first_command + command_count) of the command index.
typedef struct weft_block_region_t {
  uint32_t first_command;
  uint32_t command_count;
} weft_block_region_t;

// A compiled recording. Immutable after the builder returns it.
typedef struct weft_block_recording_t {
  weft_allocator_t allocator;
  // True when built into caller storage (nothing of it is freed).
  bool in_place;
  weft_block_t* first_block;
  uint32_t block_count;
  uint32_t fixup_count;
  // Work commands (DISPATCH, FILL, COPY, UPDATE) in recording order; the
  // pointers point into the blocks.
  uint32_t command_count;
  const weft_block_cmd_header_t** commands;
  // Regions with at least one command, in order.
  uint32_t region_count;
  weft_block_region_t* regions;
  // Binding-table slots the INDIRECT fixups use: |used_slots| lists them in
  // first-use order; |slot_to_used|[slot] is the slot's position in that
  // list (UINT32_MAX when unused) for slots below |slot_limit|.
  uint32_t used_slot_count;
  uint32_t* used_slots;
  // The command-buffer command that uses each of |used_slots| first, and
  // each of |late_buffers| (parallel arrays; NULL in one-dispatch
  // recordings), so a mapping failure names a command.
  uint32_t* used_slot_first_commands;
  uint32_t* late_buffer_first_commands;
  uint32_t slot_limit;
  uint32_t* slot_to_used;
  // LATE fixups' buffers (retained, each listed once).
  uint32_t late_buffer_count;
  weft_buffer_t** late_buffers;
  // Mappings made while recording for DIRECT fixups (each buffer once).
  uint32_t direct_mapping_count;
  weft_buffer_mapping_t* direct_mappings;
  // Executables the dispatches use (retained).
  uint32_t executable_count;
  weft_executable_t** executables;
  // The largest local_memory_size of any dispatched kernel.
  uint32_t max_local_memory_size;
  // Bytes per tile of FILL and COPY.
  uint32_t transfer_tile_bytes;
} weft_block_recording_t;

static inline const weft_block_cmd_header_t* weft_block_first_command(
    const weft_block_t* block) {
  return (const weft_block_cmd_header_t*)((const uint8_t*)block +
                                          sizeof(weft_block_t));
}

static inline const weft_block_cmd_header_t* weft_block_next_command(
    const weft_block_cmd_header_t* command) {
  return (const weft_block_cmd_header_t*)((const uint8_t*)command +
                                          command->size);
}

// Fixup |i| of |block| (0 is the last one in memory, nearest the end).
static inline const weft_block_fixup_t* weft_block_fixup(
    const weft_block_t* block, uint32_t i) {
  return (const weft_block_fixup_t*)((const uint8_t*)block + block->capacity) -
         (i + 1);
}

static inline uint32_t weft_block_align(uint32_t value) {
  return (value + WEFT_BLOCK_ALIGNMENT - 1) & ~(WEFT_BLOCK_ALIGNMENT - 1);
}

#endif  // WEFT_DRIVERS_LOCAL_TASK_BLOCK_ISA_H_
