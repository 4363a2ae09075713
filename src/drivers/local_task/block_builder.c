// weft: compiling recorded commands into blocks (see block_builder.h).
#include "drivers/local_task/block_builder.h"

#include <stdio.h>
#include <string.h>

#include "hal/buffer_impl.h"
#include "hal/device_impl.h"
#include "hal/executable_impl.h"
#include "hal/local/cpu_executable.h"
#include "hal/local/transient_buffer.h"

// Bytes kept free after the commands of every block for the BRANCH or
// RETURN that ends it.
#define WEFT_BLOCK_TERMINATOR_RESERVE \
  ((uint32_t)sizeof(weft_block_cmd_branch_t))
// The smallest update piece worth starting in what is left of a block.
#define WEFT_BLOCK_MIN_UPDATE_PIECE 64u
// How many of the most recent entries the builder searches for a buffer or
// executable it already holds before adding another entry.
#define WEFT_BLOCK_DEDUPE_WINDOW 16u
// Fixup indices and command counts stay below this so that sums of them
// never overflow 32 bits.
#define WEFT_BLOCK_MAX_COUNT (UINT32_MAX / 2u)

// Compile-time state; the recording under construction holds the results.
typedef struct weft_block_builder_t {
  weft_allocator_t allocator;
  const char* what;
  uint32_t block_size;
  uint32_t dispatch_tile_size;
  weft_block_recording_t* recording;
  // The block commands are appended to (the last one).
  weft_block_t* current;
  // The first command of the region still open.
  uint32_t open_region_first;
  // Capacities of the recording's growable arrays.
  uint32_t command_capacity;
  uint32_t region_capacity;
  uint32_t used_slot_capacity;
  uint32_t slot_to_used_capacity;
  uint32_t late_buffer_capacity;
  uint32_t direct_mapping_capacity;
  uint32_t executable_capacity;
  uint32_t used_slot_first_capacity;
  uint32_t late_buffer_first_capacity;
  // The command-buffer command being compiled (for messages at run time).
  uint32_t command_index;
} weft_block_builder_t;

// --- Freeing

// Releases everything a recording holds references to and, unless it lives
// in caller storage, its memory.
static void weft_block_recording_release_all(
    weft_block_recording_t* recording) {
  for (uint32_t i = 0; i < recording->direct_mapping_count; ++i) {
    weft_buffer_unmap_range(&recording->direct_mappings[i]);
  }
  for (uint32_t i = 0; i < recording->late_buffer_count; ++i) {
    weft_buffer_release(recording->late_buffers[i]);
  }
  for (uint32_t i = 0; i < recording->executable_count; ++i) {
    weft_executable_release(recording->executables[i]);
  }
  if (!recording->in_place) {
    weft_allocator_t allocator = recording->allocator;
    weft_block_t* block = recording->first_block;
    while (block) {
      weft_block_t* next = block->next;
      weft_allocator_free(allocator, block);
      block = next;
    }
    weft_allocator_free(allocator, recording->direct_mappings);
    weft_allocator_free(allocator, recording->late_buffers);
    weft_allocator_free(allocator, recording->executables);
    weft_allocator_free(allocator, recording->used_slots);
    weft_allocator_free(allocator, recording->used_slot_first_commands);
    weft_allocator_free(allocator, recording->late_buffer_first_commands);
    weft_allocator_free(allocator, recording->slot_to_used);
    weft_allocator_free(allocator, recording->regions);
    weft_allocator_free(allocator, (void*)recording->commands);
    weft_allocator_free(allocator, recording);
  }
}

void weft_block_recording_free(weft_block_recording_t* recording) {
  if (recording && !recording->in_place) {
    weft_block_recording_release_all(recording);
  }
}

void weft_block_recording_deinitialize(weft_block_recording_t* recording) {
  if (recording && recording->in_place) {
    weft_block_recording_release_all(recording);
  }
}

// --- Growable arrays

// Makes room for |needed| elements of |element_size| bytes in |*array|
// (capacity |*capacity|), at least doubling.
static weft_status_t weft_block_builder_grow(weft_allocator_t allocator,
                                             void** array, uint32_t* capacity,
                                             uint32_t needed,
                                             size_t element_size) {
  weft_status_t status = WEFT_OK;
  if (needed > *capacity) {
    uint32_t new_capacity = *capacity < 8 ? 8 : *capacity;
    while (new_capacity < needed) {
      new_capacity = new_capacity > UINT32_MAX / 2 ? needed : new_capacity * 2;
    }
    void* grown = *array;
    status = weft_allocator_realloc(
        allocator, (size_t)new_capacity * element_size, &grown);
    if (weft_status_is_ok(status)) {
      *array = grown;
      *capacity = new_capacity;
    }
  }
  return status;
}

// --- Blocks

// Bytes still free for commands and fixups in |block|, keeping the
// terminator's reserve.
static uint32_t weft_block_free_bytes(const weft_block_t* block) {
  uint32_t used = (uint32_t)sizeof(weft_block_t) + block->command_bytes +
                  block->fixup_count * (uint32_t)sizeof(weft_block_fixup_t) +
                  WEFT_BLOCK_TERMINATOR_RESERVE;
  return block->capacity - used;
}

// Writable fixup for recording-wide index |fixup_index| of |block|.
static weft_block_fixup_t* weft_block_fixup_mutable(weft_block_t* block,
                                                    uint32_t fixup_index) {
  return (weft_block_fixup_t*)((uint8_t*)block + block->capacity) -
         (fixup_index - block->first_fixup + 1);
}

// Appends a new block with room for at least |min_payload| bytes of
// commands and fixups; the current block (if any) branches to it.
static weft_status_t weft_block_builder_append_block(
    weft_block_builder_t* builder, size_t min_payload) {
  weft_status_t status = WEFT_OK;
  size_t overhead = sizeof(weft_block_t) + WEFT_BLOCK_TERMINATOR_RESERVE;
  size_t capacity = builder->block_size;
  if (min_payload > UINT32_MAX - overhead - WEFT_BLOCK_ALIGNMENT) {
    status = WEFT_STATUS(RESOURCE_EXHAUSTED,
                         "%s: a command needing %zu bytes does not fit in a "
                         "block",
                         builder->what, min_payload);
  } else if (min_payload + overhead > capacity) {
    capacity = weft_block_align((uint32_t)(min_payload + overhead));
  }
  weft_block_t* block = NULL;
  if (weft_status_is_ok(status)) {
    status =
        weft_allocator_malloc(builder->allocator, capacity, (void**)&block);
  }
  if (weft_status_is_ok(status)) {
    block->next = NULL;
    block->capacity = (uint32_t)capacity;
    block->command_bytes = 0;
    block->fixup_count = 0;
    block->first_fixup = builder->recording->fixup_count;
    weft_block_t* previous = builder->current;
    if (previous) {
      // The reserve guarantees the branch fits.
      weft_block_cmd_branch_t* branch =
          (weft_block_cmd_branch_t*)((uint8_t*)previous + sizeof(weft_block_t) +
                                     previous->command_bytes);
      memset(branch, 0, sizeof(*branch));
      branch->header.opcode = WEFT_BLOCK_OP_BRANCH;
      branch->header.size = (uint32_t)sizeof(*branch);
      branch->target = block;
      previous->command_bytes += (uint32_t)sizeof(*branch);
      previous->next = block;
    } else {
      builder->recording->first_block = block;
    }
    builder->current = block;
    ++builder->recording->block_count;
  }
  return status;
}

// Reserves |command_bytes| (aligned) for a command and |fixup_count|
// consecutive fixups in the current block, starting a new block when they
// do not fit. The command memory is zeroed.
static weft_status_t weft_block_builder_reserve(weft_block_builder_t* builder,
                                                size_t command_bytes,
                                                uint32_t fixup_count,
                                                void** out_command,
                                                uint32_t* out_first_fixup) {
  weft_status_t status = WEFT_OK;
  weft_block_recording_t* recording = builder->recording;
  if (fixup_count > WEFT_BLOCK_MAX_COUNT - recording->fixup_count) {
    status = WEFT_STATUS(RESOURCE_EXHAUSTED,
                         "%s: more than %u buffer references in one "
                         "recording",
                         builder->what, WEFT_BLOCK_MAX_COUNT);
  }
  size_t payload =
      command_bytes + (size_t)fixup_count * sizeof(weft_block_fixup_t);
  if (weft_status_is_ok(status) &&
      weft_block_free_bytes(builder->current) < payload) {
    status = weft_block_builder_append_block(builder, payload);
  }
  if (weft_status_is_ok(status)) {
    weft_block_t* block = builder->current;
    uint8_t* command =
        (uint8_t*)block + sizeof(weft_block_t) + block->command_bytes;
    memset(command, 0, command_bytes);
    block->command_bytes += (uint32_t)command_bytes;
    block->fixup_count += fixup_count;
    *out_command = command;
    *out_first_fixup = recording->fixup_count;
    recording->fixup_count += fixup_count;
  }
  return status;
}

// Adds a work command to the command index.
static weft_status_t weft_block_builder_index_command(
    weft_block_builder_t* builder, const weft_block_cmd_header_t* command) {
  weft_block_recording_t* recording = builder->recording;
  weft_status_t status = WEFT_OK;
  if (recording->command_count >= WEFT_BLOCK_MAX_COUNT) {
    status = WEFT_STATUS(RESOURCE_EXHAUSTED,
                         "%s: more than %u commands in one recording",
                         builder->what, WEFT_BLOCK_MAX_COUNT);
  }
  if (weft_status_is_ok(status)) {
    status = weft_block_builder_grow(
        builder->allocator, (void**)&recording->commands,
        &builder->command_capacity, recording->command_count + 1,
        sizeof(*recording->commands));
  }
  if (weft_status_is_ok(status)) {
    recording->commands[recording->command_count++] = command;
  }
  return status;
}

// Closes the open region if it has commands.
static weft_status_t weft_block_builder_close_region(
    weft_block_builder_t* builder, bool* out_closed) {
  weft_block_recording_t* recording = builder->recording;
  *out_closed = false;
  weft_status_t status = WEFT_OK;
  if (recording->command_count > builder->open_region_first) {
    status = weft_block_builder_grow(
        builder->allocator, (void**)&recording->regions,
        &builder->region_capacity, recording->region_count + 1,
        sizeof(*recording->regions));
    if (weft_status_is_ok(status)) {
      weft_block_region_t* region =
          &recording->regions[recording->region_count++];
      region->first_command = builder->open_region_first;
      region->command_count =
          recording->command_count - builder->open_region_first;
      builder->open_region_first = recording->command_count;
      *out_closed = true;
    }
  }
  return status;
}

// Writes a bare command (BARRIER or RETURN) into the current block without
// the free-space check: the terminator reserve covers RETURN, and BARRIER
// goes through the reserve path (see the caller).
static void weft_block_builder_write_terminator(weft_block_builder_t* builder,
                                                weft_block_opcode_t opcode) {
  weft_block_t* block = builder->current;
  weft_block_cmd_header_t* header =
      (weft_block_cmd_header_t*)((uint8_t*)block + sizeof(weft_block_t) +
                                 block->command_bytes);
  memset(header, 0, sizeof(*header));
  header->opcode = (uint8_t)opcode;
  header->size = (uint32_t)sizeof(*header);
  block->command_bytes += (uint32_t)sizeof(*header);
}

// --- Fixups

// Records that an INDIRECT fixup uses binding-table |slot|.
static weft_status_t weft_block_builder_note_slot(weft_block_builder_t* builder,
                                                  uint32_t slot) {
  weft_block_recording_t* recording = builder->recording;
  weft_status_t status = WEFT_OK;
  if (slot >= WEFT_BLOCK_MAX_COUNT) {
    status = WEFT_STATUS(OUT_OF_RANGE, "%s: binding table slot %u is too large",
                         builder->what, slot);
  }
  if (weft_status_is_ok(status) && slot >= recording->slot_limit) {
    uint32_t old_capacity = builder->slot_to_used_capacity;
    status = weft_block_builder_grow(builder->allocator,
                                     (void**)&recording->slot_to_used,
                                     &builder->slot_to_used_capacity, slot + 1,
                                     sizeof(*recording->slot_to_used));
    if (weft_status_is_ok(status)) {
      for (uint32_t i = old_capacity; i < builder->slot_to_used_capacity; ++i) {
        recording->slot_to_used[i] = UINT32_MAX;
      }
      recording->slot_limit = slot + 1;
    }
  }
  if (weft_status_is_ok(status) &&
      recording->slot_to_used[slot] == UINT32_MAX) {
    status = weft_block_builder_grow(
        builder->allocator, (void**)&recording->used_slots,
        &builder->used_slot_capacity, recording->used_slot_count + 1,
        sizeof(*recording->used_slots));
    if (weft_status_is_ok(status)) {
      status = weft_block_builder_grow(
          builder->allocator, (void**)&recording->used_slot_first_commands,
          &builder->used_slot_first_capacity, recording->used_slot_count + 1,
          sizeof(*recording->used_slot_first_commands));
    }
    if (weft_status_is_ok(status)) {
      recording->slot_to_used[slot] = recording->used_slot_count;
      recording->used_slot_first_commands[recording->used_slot_count] =
          builder->command_index;
      recording->used_slots[recording->used_slot_count++] = slot;
    }
  }
  return status;
}

// Searches the last WEFT_BLOCK_DEDUPE_WINDOW of |count| pointers in |items|
// for |item|; returns its index or UINT32_MAX.
static uint32_t weft_block_find_recent(const void* const* items, uint32_t count,
                                       const void* item) {
  uint32_t window =
      count < WEFT_BLOCK_DEDUPE_WINDOW ? count : WEFT_BLOCK_DEDUPE_WINDOW;
  uint32_t found = UINT32_MAX;
  for (uint32_t i = count; found == UINT32_MAX && i > count - window; --i) {
    if (items[i - 1] == item) found = i - 1;
  }
  return found;
}

// Returns the index of |buffer| in the recording's late buffers, adding
// (and retaining) it when not among the most recent ones.
static weft_status_t weft_block_builder_late_buffer(
    weft_block_builder_t* builder, weft_buffer_t* buffer, uint32_t* out_index) {
  weft_block_recording_t* recording = builder->recording;
  uint32_t count = recording->late_buffer_count;
  *out_index = weft_block_find_recent(
      (const void* const*)recording->late_buffers, count, buffer);
  weft_status_t status = WEFT_OK;
  if (*out_index == UINT32_MAX) {
    status = weft_block_builder_grow(builder->allocator,
                                     (void**)&recording->late_buffers,
                                     &builder->late_buffer_capacity, count + 1,
                                     sizeof(*recording->late_buffers));
  }
  if (weft_status_is_ok(status) && *out_index == UINT32_MAX) {
    status = weft_block_builder_grow(
        builder->allocator, (void**)&recording->late_buffer_first_commands,
        &builder->late_buffer_first_capacity, count + 1,
        sizeof(*recording->late_buffer_first_commands));
    if (weft_status_is_ok(status)) {
      recording->late_buffer_first_commands[count] = builder->command_index;
    }
  }
  if (weft_status_is_ok(status) && *out_index == UINT32_MAX) {
    weft_buffer_retain(buffer);
    recording->late_buffers[count] = buffer;
    recording->late_buffer_count = count + 1;
    *out_index = count;
  }
  return status;
}

// The access a mapping for commands asks for: what the buffer allows of
// read and write (mapping for the queue layer checks no permissions).
static weft_memory_access_t weft_block_mapping_access(
    const weft_buffer_t* buffer) {
  weft_memory_access_t access =
      weft_buffer_allowed_access(buffer) &
      (WEFT_MEMORY_ACCESS_READ | WEFT_MEMORY_ACCESS_WRITE);
  return access ? access : WEFT_MEMORY_ACCESS_READ;
}

// Finds or makes a whole-buffer mapping of |buffer| for DIRECT fixups.
// |*out_mapping| stays NULL (with an OK status) when the buffer cannot be
// mapped now.
static weft_status_t weft_block_builder_direct_mapping(
    weft_block_builder_t* builder, weft_buffer_t* buffer,
    const weft_buffer_mapping_t** out_mapping) {
  weft_block_recording_t* recording = builder->recording;
  *out_mapping = NULL;
  uint32_t count = recording->direct_mapping_count;
  uint32_t window =
      count < WEFT_BLOCK_DEDUPE_WINDOW ? count : WEFT_BLOCK_DEDUPE_WINDOW;
  for (uint32_t i = count; !*out_mapping && i > count - window; --i) {
    if (recording->direct_mappings[i - 1].buffer == buffer) {
      *out_mapping = &recording->direct_mappings[i - 1];
    }
  }
  weft_status_t status = WEFT_OK;
  if (!*out_mapping) {
    status = weft_block_builder_grow(
        builder->allocator, (void**)&recording->direct_mappings,
        &builder->direct_mapping_capacity, count + 1,
        sizeof(*recording->direct_mappings));
  }
  if (weft_status_is_ok(status) && !*out_mapping) {
    weft_buffer_mapping_t* mapping = &recording->direct_mappings[count];
    weft_status_t map_status = weft_buffer_map_range_unchecked(
        buffer, weft_block_mapping_access(buffer), 0, WEFT_WHOLE_BUFFER,
        builder->what, mapping);
    if (weft_status_is_ok(map_status)) {
      recording->direct_mapping_count = count + 1;
      *out_mapping = mapping;
    } else {
      // No memory yet: the caller makes the reference LATE instead.
      weft_status_ignore(map_status);
    }
  }
  return status;
}

// Turns |ref| into the fixup at |fixup|. Messages name the reference as
// "the |role|" ("the target") or, for a dispatch binding (|binding| !=
// UINT32_MAX), "binding |binding|".
static weft_status_t weft_block_builder_make_fixup(
    weft_block_builder_t* builder, weft_buffer_ref_t ref, const char* role,
    uint32_t binding, weft_block_fixup_t* fixup) {
  memset(fixup, 0, sizeof(*fixup));
  weft_status_t status = WEFT_OK;
  weft_device_size_t length = ref.length;
  if (ref.buffer) {
    status = weft_buffer_calculate_range(ref.buffer, ref.offset, ref.length,
                                         builder->what, &length);
    if (!weft_status_is_ok(status) && binding == UINT32_MAX) {
      status = weft_status_annotate(status, "for the %s", role);
    } else if (!weft_status_is_ok(status)) {
      status = weft_status_annotate(status, "for binding %u", binding);
    }
  }
  const weft_buffer_mapping_t* mapping = NULL;
  if (weft_status_is_ok(status) && ref.buffer &&
      !weft_buffer_is_transient(ref.buffer)) {
    status = weft_block_builder_direct_mapping(builder, ref.buffer, &mapping);
  }
  if (!weft_status_is_ok(status)) {
    // Nothing more to do.
  } else if (!ref.buffer) {
    fixup->kind = WEFT_BLOCK_FIXUP_INDIRECT;
    fixup->index = ref.slot;
    fixup->offset = ref.offset;
    fixup->length = ref.length;
    status = weft_block_builder_note_slot(builder, ref.slot);
  } else if (mapping) {
    fixup->kind = WEFT_BLOCK_FIXUP_DIRECT;
    fixup->host_ptr = length ? mapping->contents + ref.offset : NULL;
    fixup->length = length;
  } else {
    fixup->kind = WEFT_BLOCK_FIXUP_LATE;
    fixup->offset = ref.offset;
    fixup->length = length;
    status = weft_block_builder_late_buffer(builder, ref.buffer, &fixup->index);
  }
  return status;
}

// --- Commands

static weft_status_t weft_block_builder_retain_executable(
    weft_block_builder_t* builder, weft_executable_t* executable) {
  weft_block_recording_t* recording = builder->recording;
  uint32_t count = recording->executable_count;
  bool known =
      weft_block_find_recent((const void* const*)recording->executables, count,
                             executable) != UINT32_MAX;
  weft_status_t status = WEFT_OK;
  if (!known) {
    status = weft_block_builder_grow(builder->allocator,
                                     (void**)&recording->executables,
                                     &builder->executable_capacity, count + 1,
                                     sizeof(*recording->executables));
  }
  if (weft_status_is_ok(status) && !known) {
    weft_executable_retain(executable);
    recording->executables[count] = executable;
    recording->executable_count = count + 1;
  }
  return status;
}

// Bytes of a dispatch command with |constant_count| constants.
static size_t weft_block_dispatch_command_size(uint32_t constant_count) {
  size_t bytes = sizeof(weft_block_cmd_dispatch_t) +
                 (size_t)constant_count * sizeof(uint32_t);
  return (bytes + WEFT_BLOCK_ALIGNMENT - 1) &
         ~(size_t)(WEFT_BLOCK_ALIGNMENT - 1);
}

// Fills in a dispatch command (memory zeroed, size set by the caller's
// reservation) for a validated kernel.
static void weft_block_encode_dispatch(
    const weft_executable_t* executable, const weft_kernel_def_t* kernel,
    const uint32_t workgroup_count[3], uint64_t workgroup_total,
    uint32_t tile_size, uint32_t constant_count, const uint32_t* constants,
    uint32_t binding_count, uint32_t first_fixup, uint32_t command_index,
    weft_block_cmd_dispatch_t* command) {
  command->header.opcode = WEFT_BLOCK_OP_DISPATCH;
  command->command_index = command_index;
  command->header.size =
      (uint32_t)weft_block_dispatch_command_size(constant_count);
  command->fn = kernel->fn;
  command->kernel = kernel;
  command->executable = executable;
  memcpy(command->workgroup_count, workgroup_count,
         sizeof(command->workgroup_count));
  memcpy(command->workgroup_size, kernel->workgroup_size,
         sizeof(command->workgroup_size));
  command->tile_size = tile_size;
  command->local_memory_size = kernel->local_memory_size;
  command->constant_count = constant_count;
  command->binding_count = binding_count;
  command->first_fixup = first_fixup;
  command->workgroup_total = workgroup_total;
  if (constant_count > 0) {
    memcpy(command->constants, constants, constant_count * sizeof(uint32_t));
  }
}

// Multiplies the workgroup counts; INVALID_ARGUMENT when they overflow.
static weft_status_t weft_block_workgroup_total(
    const uint32_t workgroup_count[3], const char* what, uint64_t* out_total) {
  uint64_t total = 0;
  weft_status_t status = WEFT_OK;
  if (__builtin_mul_overflow((uint64_t)workgroup_count[0],
                             (uint64_t)workgroup_count[1], &total) ||
      __builtin_mul_overflow(total, (uint64_t)workgroup_count[2], &total)) {
    status = WEFT_STATUS(
        INVALID_ARGUMENT, "%s: %u x %u x %u workgroups overflow 64 bits", what,
        workgroup_count[0], workgroup_count[1], workgroup_count[2]);
  }
  *out_total = total;
  return status;
}

// Emits a validated dispatch of |workgroup_total| (> 0) workgroups.
static weft_status_t weft_block_builder_emit_dispatch(
    weft_block_builder_t* builder, const weft_command_dispatch_t* dispatch,
    uint64_t workgroup_total) {
  const weft_kernel_def_t* kernel = weft_cpu_executable_kernel(
      dispatch->executable, dispatch->kernel_ordinal);
  weft_block_cmd_dispatch_t* command = NULL;
  uint32_t first_fixup = 0;
  weft_status_t status = weft_block_builder_reserve(
      builder, weft_block_dispatch_command_size(dispatch->constant_count),
      dispatch->binding_count, (void**)&command, &first_fixup);
  if (weft_status_is_ok(status)) {
    weft_block_encode_dispatch(
        dispatch->executable, kernel, dispatch->workgroup_count,
        workgroup_total, builder->dispatch_tile_size, dispatch->constant_count,
        dispatch->constants, dispatch->binding_count, first_fixup,
        builder->command_index, command);
  }
  weft_block_t* block = builder->current;
  for (uint32_t i = 0; weft_status_is_ok(status) && i < dispatch->binding_count;
       ++i) {
    status = weft_block_builder_make_fixup(
        builder, dispatch->bindings[i], "binding", i,
        weft_block_fixup_mutable(block, first_fixup + i));
  }
  if (weft_status_is_ok(status)) {
    status =
        weft_block_builder_retain_executable(builder, dispatch->executable);
  }
  if (weft_status_is_ok(status)) {
    status = weft_block_builder_index_command(builder, &command->header);
  }
  if (weft_status_is_ok(status) &&
      kernel->local_memory_size > builder->recording->max_local_memory_size) {
    builder->recording->max_local_memory_size = kernel->local_memory_size;
  }
  return status;
}

static weft_status_t weft_block_builder_dispatch(
    weft_block_builder_t* builder, const weft_command_dispatch_t* dispatch) {
  weft_status_t status = weft_dispatch_validate(
      dispatch->executable, dispatch->kernel_ordinal, dispatch->workgroup_count,
      dispatch->constant_count, dispatch->binding_count, builder->what);
  uint64_t workgroup_total = 0;
  if (weft_status_is_ok(status)) {
    status = weft_block_workgroup_total(dispatch->workgroup_count,
                                        builder->what, &workgroup_total);
  }
  // An empty dispatch does nothing and maps nothing: nothing to emit.
  if (weft_status_is_ok(status) && workgroup_total > 0) {
    status =
        weft_block_builder_emit_dispatch(builder, dispatch, workgroup_total);
  }
  return status;
}

static weft_status_t weft_block_builder_fill(weft_block_builder_t* builder,
                                             const weft_command_fill_t* fill) {
  weft_status_t status = WEFT_OK;
  if (fill->pattern_length != 1 && fill->pattern_length != 2 &&
      fill->pattern_length != 4) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "%s: fill pattern length %u is not 1, 2 or 4",
                         builder->what, fill->pattern_length);
  }
  weft_block_cmd_fill_t* command = NULL;
  uint32_t first_fixup = 0;
  if (weft_status_is_ok(status)) {
    status = weft_block_builder_reserve(builder, sizeof(*command), 1,
                                        (void**)&command, &first_fixup);
  }
  if (weft_status_is_ok(status)) {
    command->header.opcode = WEFT_BLOCK_OP_FILL;
    command->header.size = (uint32_t)sizeof(*command);
    command->target_fixup = first_fixup;
    command->pattern = fill->pattern;
    command->pattern_length = fill->pattern_length;
    status = weft_block_builder_make_fixup(
        builder, fill->target, "target", UINT32_MAX,
        weft_block_fixup_mutable(builder->current, first_fixup));
  }
  if (weft_status_is_ok(status)) {
    status = weft_block_builder_index_command(builder, &command->header);
  }
  return status;
}

static weft_status_t weft_block_builder_copy(weft_block_builder_t* builder,
                                             const weft_command_copy_t* copy) {
  weft_block_cmd_copy_t* command = NULL;
  uint32_t first_fixup = 0;
  weft_status_t status = weft_block_builder_reserve(
      builder, sizeof(*command), 2, (void**)&command, &first_fixup);
  if (weft_status_is_ok(status)) {
    command->header.opcode = WEFT_BLOCK_OP_COPY;
    command->header.size = (uint32_t)sizeof(*command);
    command->source_fixup = first_fixup;
    command->target_fixup = first_fixup + 1;
    status = weft_block_builder_make_fixup(
        builder, copy->source, "source", UINT32_MAX,
        weft_block_fixup_mutable(builder->current, first_fixup));
  }
  if (weft_status_is_ok(status)) {
    status = weft_block_builder_make_fixup(
        builder, copy->target, "target", UINT32_MAX,
        weft_block_fixup_mutable(builder->current, first_fixup + 1));
  }
  if (weft_status_is_ok(status)) {
    status = weft_block_builder_index_command(builder, &command->header);
  }
  return status;
}

// Emits an update as one or more pieces sharing one fixup: each piece takes
// what is left of the current block (when that is worth it) or a new one.
static weft_status_t weft_block_builder_update(
    weft_block_builder_t* builder, const weft_command_update_t* update) {
  weft_device_size_t length = update->target.length;
  weft_status_t status = WEFT_OK;
  uint32_t fixup_index = 0;
  weft_block_t* fixup_block = NULL;
  uint64_t offset = 0;
  const uint32_t header_bytes = (uint32_t)sizeof(weft_block_cmd_update_t);
  // An empty update emits nothing (and maps nothing).
  while (weft_status_is_ok(status) && offset < length) {
    uint32_t fixups = fixup_block ? 0u : 1u;
    uint32_t overhead =
        header_bytes + fixups * (uint32_t)sizeof(weft_block_fixup_t);
    uint64_t remaining = length - offset;
    uint32_t worth = remaining < WEFT_BLOCK_MIN_UPDATE_PIECE
                         ? (uint32_t)remaining
                         : WEFT_BLOCK_MIN_UPDATE_PIECE;
    uint32_t free_bytes = weft_block_free_bytes(builder->current);
    if (free_bytes < overhead + weft_block_align(worth)) {
      status = weft_block_builder_append_block(builder, overhead + worth);
      free_bytes = weft_block_free_bytes(builder->current);
    }
    weft_block_cmd_update_t* command = NULL;
    uint32_t first_fixup = 0;
    uint64_t piece = 0;
    if (weft_status_is_ok(status)) {
      uint64_t room =
          (free_bytes - overhead) & ~(uint64_t)(WEFT_BLOCK_ALIGNMENT - 1);
      piece = remaining < room ? remaining : room;
      status = weft_block_builder_reserve(
          builder, weft_block_align(header_bytes + (uint32_t)piece), fixups,
          (void**)&command, &first_fixup);
    }
    if (weft_status_is_ok(status) && !fixup_block) {
      fixup_block = builder->current;
      fixup_index = first_fixup;
      status = weft_block_builder_make_fixup(
          builder, update->target, "target", UINT32_MAX,
          weft_block_fixup_mutable(fixup_block, fixup_index));
    }
    if (weft_status_is_ok(status)) {
      command->header.opcode = WEFT_BLOCK_OP_UPDATE;
      command->header.size = weft_block_align(header_bytes + (uint32_t)piece);
      command->target_fixup = fixup_index;
      command->length = (uint32_t)piece;
      command->target_offset = offset;
      memcpy(command->data, update->source + offset, (size_t)piece);
      offset += piece;
      status = weft_block_builder_index_command(builder, &command->header);
    }
  }
  return status;
}

static weft_status_t weft_block_builder_barrier(weft_block_builder_t* builder) {
  bool closed = false;
  weft_status_t status = weft_block_builder_close_region(builder, &closed);
  if (weft_status_is_ok(status) && closed) {
    void* command = NULL;
    uint32_t first_fixup = 0;
    status = weft_block_builder_reserve(
        builder, sizeof(weft_block_cmd_header_t), 0, &command, &first_fixup);
    if (weft_status_is_ok(status)) {
      weft_block_cmd_header_t* header = (weft_block_cmd_header_t*)command;
      header->opcode = WEFT_BLOCK_OP_BARRIER;
      header->size = (uint32_t)sizeof(*header);
    }
  }
  return status;
}

// --- Building

static weft_status_t weft_block_builder_check_options(
    const weft_block_builder_options_t* options, const char* what) {
  weft_status_t status = WEFT_OK;
  if (options->block_size != 0 &&
      (options->block_size < WEFT_BLOCK_MIN_BLOCK_SIZE ||
       options->block_size > WEFT_BLOCK_MAX_BLOCK_SIZE ||
       options->block_size % WEFT_BLOCK_ALIGNMENT != 0)) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "%s: block size %u is not a multiple of %u in [%u, "
                         "%u]",
                         what, options->block_size, WEFT_BLOCK_ALIGNMENT,
                         WEFT_BLOCK_MIN_BLOCK_SIZE, WEFT_BLOCK_MAX_BLOCK_SIZE);
  } else if (options->transfer_tile_bytes % WEFT_BLOCK_ALIGNMENT != 0) {
    status =
        WEFT_STATUS(INVALID_ARGUMENT,
                    "%s: transfer tile of %u bytes is not a multiple of "
                    "%u",
                    what, options->transfer_tile_bytes, WEFT_BLOCK_ALIGNMENT);
  }
  return status;
}

static weft_status_t weft_block_builder_append(weft_block_builder_t* builder,
                                               const weft_command_t* command) {
  weft_status_t status = WEFT_OK;
  switch (command->type) {
    case WEFT_COMMAND_TYPE_BARRIER:
      status = weft_block_builder_barrier(builder);
      break;
    case WEFT_COMMAND_TYPE_FILL:
      status = weft_block_builder_fill(builder, &command->fill);
      break;
    case WEFT_COMMAND_TYPE_UPDATE:
      status = weft_block_builder_update(builder, &command->update);
      break;
    case WEFT_COMMAND_TYPE_COPY:
      status = weft_block_builder_copy(builder, &command->copy);
      break;
    case WEFT_COMMAND_TYPE_DISPATCH:
      status = weft_block_builder_dispatch(builder, &command->dispatch);
      break;
    default:
      status = WEFT_STATUS(INVALID_ARGUMENT, "%s: unknown command type %d",
                           builder->what, (int)command->type);
      break;
  }
  return status;
}

weft_status_t weft_block_recording_build(
    const weft_command_t* commands, uint32_t command_count,
    const weft_block_builder_options_t* options, weft_allocator_t allocator,
    const char* what, weft_block_recording_t** out_recording) {
  *out_recording = NULL;
  weft_block_builder_options_t defaults;
  memset(&defaults, 0, sizeof(defaults));
  if (!options) options = &defaults;
  weft_status_t status = weft_block_builder_check_options(options, what);
  weft_block_builder_t builder;
  memset(&builder, 0, sizeof(builder));
  builder.allocator = allocator;
  builder.what = what;
  builder.block_size =
      options->block_size ? options->block_size : WEFT_BLOCK_DEFAULT_BLOCK_SIZE;
  builder.dispatch_tile_size = options->dispatch_tile_size;
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc(allocator, sizeof(*builder.recording),
                                   (void**)&builder.recording);
  }
  if (weft_status_is_ok(status)) {
    builder.recording->allocator = allocator;
    builder.recording->transfer_tile_bytes =
        options->transfer_tile_bytes ? options->transfer_tile_bytes
                                     : WEFT_BLOCK_DEFAULT_TRANSFER_TILE_BYTES;
    status = weft_block_builder_append_block(&builder, 0);
  }
  for (uint32_t i = 0; weft_status_is_ok(status) && i < command_count; ++i) {
    builder.command_index = i;
    status = weft_block_builder_append(&builder, &commands[i]);
    if (!weft_status_is_ok(status)) {
      char description[96];
      status =
          weft_status_annotate(status, "while compiling command %u (%s)", i,
                               weft_command_describe(&commands[i], description,
                                                     sizeof(description)));
    }
  }
  bool closed = false;
  if (weft_status_is_ok(status)) {
    status = weft_block_builder_close_region(&builder, &closed);
  }
  if (weft_status_is_ok(status)) {
    weft_block_builder_write_terminator(&builder, WEFT_BLOCK_OP_RETURN);
    *out_recording = builder.recording;
  } else if (builder.recording) {
    weft_block_recording_free(builder.recording);
  }
  return status;
}

// --- One-dispatch recordings in caller storage

// The pieces of a one-dispatch recording, in storage order.
typedef struct weft_block_dispatch_layout_t {
  size_t recording;
  size_t commands;
  size_t regions;
  size_t late_buffers;
  size_t executables;
  size_t block;
  size_t block_capacity;
  size_t total;
} weft_block_dispatch_layout_t;

static size_t weft_block_align_size(size_t value) {
  return (value + WEFT_BLOCK_ALIGNMENT - 1) &
         ~(size_t)(WEFT_BLOCK_ALIGNMENT - 1);
}

static weft_block_dispatch_layout_t weft_block_dispatch_layout(
    uint32_t constant_count, uint32_t binding_count) {
  weft_block_dispatch_layout_t layout;
  size_t offset = 0;
  layout.recording = offset;
  offset += weft_block_align_size(sizeof(weft_block_recording_t));
  layout.commands = offset;
  offset += weft_block_align_size(sizeof(const weft_block_cmd_header_t*));
  layout.regions = offset;
  offset += weft_block_align_size(sizeof(weft_block_region_t));
  layout.late_buffers = offset;
  offset +=
      weft_block_align_size((size_t)binding_count * sizeof(weft_buffer_t*));
  layout.executables = offset;
  offset += weft_block_align_size(sizeof(weft_executable_t*));
  layout.block = offset;
  layout.block_capacity = sizeof(weft_block_t) +
                          weft_block_dispatch_command_size(constant_count) +
                          sizeof(weft_block_cmd_header_t) +
                          (size_t)binding_count * sizeof(weft_block_fixup_t);
  offset += layout.block_capacity;
  // Slack to align the caller's storage.
  layout.total = offset + WEFT_BLOCK_ALIGNMENT - 1;
  return layout;
}

size_t weft_block_recording_dispatch_storage_size(uint32_t constant_count,
                                                  uint32_t binding_count) {
  return weft_block_dispatch_layout(constant_count, binding_count).total;
}

// Lays out a validated one-dispatch recording in |storage| (see
// weft_block_recording_initialize_dispatch) and retains what it uses.
static void weft_block_recording_write_dispatch(
    weft_executable_t* executable, uint32_t kernel_ordinal,
    const uint32_t workgroup_count[3], uint64_t workgroup_total,
    uint32_t constant_count, const uint32_t* constants, uint32_t binding_count,
    const weft_buffer_ref_t* bindings, uint32_t dispatch_tile_size,
    void* storage, const weft_block_dispatch_layout_t* layout_ptr,
    weft_block_recording_t** out_recording) {
  const char* what = "queue_dispatch";
  weft_block_dispatch_layout_t layout = *layout_ptr;
  uint8_t* base = (uint8_t*)(((uintptr_t)storage + WEFT_BLOCK_ALIGNMENT - 1) &
                             ~(uintptr_t)(WEFT_BLOCK_ALIGNMENT - 1));
  memset(base, 0, layout.total - (WEFT_BLOCK_ALIGNMENT - 1));
  weft_block_recording_t* recording =
      (weft_block_recording_t*)(base + layout.recording);
  recording->allocator = weft_allocator_system();
  recording->in_place = true;
  recording->transfer_tile_bytes = WEFT_BLOCK_DEFAULT_TRANSFER_TILE_BYTES;
  weft_block_t* block = (weft_block_t*)(base + layout.block);
  block->capacity = (uint32_t)layout.block_capacity;
  recording->first_block = block;
  recording->block_count = 1;
  if (workgroup_total > 0) {
    const weft_kernel_def_t* kernel =
        weft_cpu_executable_kernel(executable, kernel_ordinal);
    weft_block_cmd_dispatch_t* command =
        (weft_block_cmd_dispatch_t*)weft_block_first_command(block);
    weft_block_encode_dispatch(executable, kernel, workgroup_count,
                               workgroup_total, dispatch_tile_size,
                               constant_count, constants, binding_count, 0,
                               /*command_index=*/0, command);
    block->command_bytes = command->header.size;
    block->fixup_count = binding_count;
    weft_buffer_t** late_buffers =
        (weft_buffer_t**)(base + layout.late_buffers);
    for (uint32_t i = 0; i < binding_count; ++i) {
      weft_block_fixup_t* fixup = weft_block_fixup_mutable(block, i);
      fixup->kind = WEFT_BLOCK_FIXUP_LATE;
      fixup->index = i;
      fixup->offset = bindings[i].offset;
      // Checked by the caller: cannot fail here.
      weft_status_ignore(weft_buffer_calculate_range(
          bindings[i].buffer, bindings[i].offset, bindings[i].length, what,
          &fixup->length));
      late_buffers[i] = bindings[i].buffer;
      weft_buffer_retain(bindings[i].buffer);
    }
    weft_executable_t** executables =
        (weft_executable_t**)(base + layout.executables);
    executables[0] = executable;
    weft_executable_retain(executable);
    const weft_block_cmd_header_t** commands =
        (const weft_block_cmd_header_t**)(base + layout.commands);
    commands[0] = &command->header;
    weft_block_region_t* regions =
        (weft_block_region_t*)(base + layout.regions);
    regions[0].first_command = 0;
    regions[0].command_count = 1;
    recording->fixup_count = binding_count;
    recording->command_count = 1;
    recording->commands = commands;
    recording->region_count = 1;
    recording->regions = regions;
    recording->late_buffer_count = binding_count;
    recording->late_buffers = late_buffers;
    recording->executable_count = 1;
    recording->executables = executables;
    recording->max_local_memory_size = kernel->local_memory_size;
  }
  weft_block_cmd_header_t* terminator =
      (weft_block_cmd_header_t*)((uint8_t*)block + sizeof(weft_block_t) +
                                 block->command_bytes);
  terminator->opcode = WEFT_BLOCK_OP_RETURN;
  terminator->size = (uint32_t)sizeof(*terminator);
  block->command_bytes += terminator->size;
  *out_recording = recording;
}

weft_status_t weft_block_recording_initialize_dispatch(
    weft_executable_t* executable, uint32_t kernel_ordinal,
    const uint32_t workgroup_count[3], uint32_t constant_count,
    const uint32_t* constants, uint32_t binding_count,
    const weft_buffer_ref_t* bindings, uint32_t dispatch_tile_size,
    void* storage, size_t storage_size,
    weft_block_recording_t** out_recording) {
  const char* what = "queue_dispatch";
  *out_recording = NULL;
  weft_block_dispatch_layout_t layout =
      weft_block_dispatch_layout(constant_count, binding_count);
  weft_status_t status = WEFT_OK;
  if (!storage || storage_size < layout.total) {
    status = WEFT_STATUS(RESOURCE_EXHAUSTED,
                         "%s: %zu bytes of recording storage given, %zu "
                         "needed",
                         what, storage ? storage_size : 0, layout.total);
  }
  uint64_t workgroup_total = 0;
  if (weft_status_is_ok(status)) {
    status = weft_dispatch_validate(executable, kernel_ordinal, workgroup_count,
                                    constant_count, binding_count, what);
  }
  if (weft_status_is_ok(status)) {
    status =
        weft_block_workgroup_total(workgroup_count, what, &workgroup_total);
  }
  // Resolve every binding's length first: nothing is retained on failure.
  for (uint32_t i = 0;
       weft_status_is_ok(status) && workgroup_total > 0 && i < binding_count;
       ++i) {
    if (!bindings[i].buffer) {
      status = WEFT_STATUS(INVALID_ARGUMENT, "%s: binding %u has no buffer",
                           what, i);
    } else {
      weft_device_size_t length = 0;
      status = weft_status_annotate(
          weft_buffer_calculate_range(bindings[i].buffer, bindings[i].offset,
                                      bindings[i].length, what, &length),
          "for binding %u", i);
    }
  }
  if (weft_status_is_ok(status)) {
    weft_block_recording_write_dispatch(
        executable, kernel_ordinal, workgroup_count, workgroup_total,
        constant_count, constants, binding_count, bindings, dispatch_tile_size,
        storage, &layout, out_recording);
  }
  return status;
}

// --- Command buffers

static void weft_block_recording_free_data(void* data) {
  weft_block_recording_free((weft_block_recording_t*)data);
}

weft_status_t weft_block_command_buffer_finalize(
    weft_device_t* device, weft_command_buffer_t* command_buffer) {
  uint32_t command_count = 0;
  const weft_command_t* commands =
      weft_command_buffer_commands(command_buffer, &command_count);
  weft_block_recording_t* recording = NULL;
  weft_status_t status = weft_block_recording_build(
      commands, command_count, NULL, device->host_allocator,
      "command_buffer_end", &recording);
  if (weft_status_is_ok(status)) {
    weft_command_buffer_set_driver_data(command_buffer, recording,
                                        weft_block_recording_free_data);
  }
  return status;
}

const weft_block_recording_t* weft_block_command_buffer_recording(
    const weft_command_buffer_t* command_buffer) {
  // Only command buffers finalized by this hook carry a recording.
  return (const weft_block_recording_t*)weft_command_buffer_driver_data(
      command_buffer, weft_block_recording_free_data);
}
