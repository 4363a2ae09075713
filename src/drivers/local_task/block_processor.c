// weft: the block processor (see block_processor.h).
#include "drivers/local_task/block_processor.h"

#include <assert.h>
#include <stdalign.h>
#include <string.h>

#include "base/atomics.h"
#include "base/sched_counters.h"
#include "base/trace.h"
#include "hal/buffer_impl.h"

#define WEFT_BLOCK_CACHE_LINE 64
// A region has at most this many tiles, so the claim word's tile half
// never overflows into the epoch even with every worker past the end.
#define WEFT_BLOCK_MAX_REGION_TILES (1u << 31)
// A single command has at most this many tiles (tiles grow to fit).
#define WEFT_BLOCK_MAX_COMMAND_TILES (1u << 24)
// Claim lanes: a shared region's tiles are split into this many contiguous
// ranges (at most one per worker), each with its own claim word on its own
// cache line. Worker w claims from lane w % lanes first and then from the
// others, so when every worker keeps up it runs the same slice of every
// dispatch (its data stays in its core's cache from one dispatch to the
// next, as with OpenMP's static schedule) and claims without contention.
#define WEFT_BLOCK_CLAIM_LANES 4u

typedef enum weft_block_processor_mode_e {
  // One worker: the first drain runs everything, no read-modify-writes.
  WEFT_BLOCK_PROCESSOR_MODE_SINGLE = 0,
  // Every region has one tile: the first worker to arrive runs everything.
  WEFT_BLOCK_PROCESSOR_MODE_EXCLUSIVE = 1,
  // Workers claim tiles region by region.
  WEFT_BLOCK_PROCESSOR_MODE_SHARED = 2,
} weft_block_processor_mode_t;

// Per-submission tile layout of one command.
typedef struct weft_block_op_t {
  // Workgroups (DISPATCH) or bytes (FILL, COPY) per tile.
  uint64_t tile_size;
  // One past the command's last tile, counted from its region's start.
  uint32_t tile_end;
  uint32_t reserved;
} weft_block_op_t;

struct weft_block_processor_context_t {
  // --- Set by initialize, read-only afterwards.
  const weft_block_recording_t* recording;
  weft_block_processor_params_t params;
  weft_block_processor_mode_t mode;
  uint32_t region_count;
  // The pointer table: fixup i resolves to [ptrs[i], ptrs[i] + lengths[i]).
  void** ptrs;
  size_t* lengths;
  // Used binding-table slots first, then late buffers.
  weft_buffer_mapping_t* mappings;
  uint32_t mapping_count;
  weft_block_op_t* ops;    // one per command of the recording
  uint32_t* region_tiles;  // one per region
  // min(layout_workers, WEFT_BLOCK_CLAIM_LANES).
  uint32_t lane_count;
  // params.layout_worker_count resolved: what tiles and lanes plan for.
  uint32_t layout_workers;
  // Set by create: the allocation holding the context.
  weft_allocator_t allocator;
  void* allocation;

  // --- Shared between workers, each on its own cache line.
  // Claim lane l of region e: (e << 32) | next tile to claim in the lane's
  // range (see weft_block_processor_lane_range). Lane 0 is also the epoch
  // word: it is opened last, so a worker that read epoch e from it finds
  // every other lane at e or later; epoch == region_count: completed.
  struct {
    alignas(WEFT_BLOCK_CACHE_LINE) weft_atomic_uint64_t claim;
  } lanes[WEFT_BLOCK_CLAIM_LANES];
  // (epoch << 32) | tiles of the epoch's region that finished.
  alignas(WEFT_BLOCK_CACHE_LINE) weft_atomic_uint64_t retired;
  alignas(WEFT_BLOCK_CACHE_LINE) weft_atomic_uint32_t desired_workers;
  // EXCLUSIVE mode: 1 once a worker took the recording.
  weft_atomic_uint32_t exclusive_taken;
  // The first failure (owned), or OK.
  _Atomic(weft_status_t) failure;
};

// --- Layout

typedef struct weft_block_context_layout_t {
  size_t ptrs;
  size_t lengths;
  size_t mappings;
  size_t ops;
  size_t region_tiles;
  size_t end;
  size_t total;  // end plus alignment slack
} weft_block_context_layout_t;

static weft_block_context_layout_t weft_block_context_layout(
    const weft_block_recording_t* recording) {
  weft_block_context_layout_t layout;
  size_t offset = sizeof(weft_block_processor_context_t);
  layout.ptrs = offset;
  offset += (size_t)recording->fixup_count * sizeof(void*);
  layout.lengths = offset;
  offset += (size_t)recording->fixup_count * sizeof(size_t);
  layout.mappings = offset;
  offset +=
      ((size_t)recording->used_slot_count + recording->late_buffer_count) *
      sizeof(weft_buffer_mapping_t);
  layout.ops = offset;
  offset += (size_t)recording->command_count * sizeof(weft_block_op_t);
  layout.region_tiles = offset;
  offset += (size_t)recording->region_count * sizeof(uint32_t);
  layout.end = offset;
  layout.total = offset + WEFT_BLOCK_CACHE_LINE - 1;
  return layout;
}

size_t weft_block_processor_context_storage_size(
    const weft_block_recording_t* recording) {
  return weft_block_context_layout(recording).total;
}

// --- Resolution

static weft_memory_access_t weft_block_processor_access(
    const weft_buffer_t* buffer) {
  weft_memory_access_t access =
      weft_buffer_allowed_access(buffer) &
      (WEFT_MEMORY_ACCESS_READ | WEFT_MEMORY_ACCESS_WRITE);
  return access ? access : WEFT_MEMORY_ACCESS_READ;
}

// Maps every binding-table slot the recording uses and every late buffer.
static weft_status_t weft_block_processor_map(
    weft_block_processor_context_t* context,
    weft_binding_table_t binding_table) {
  const weft_block_recording_t* recording = context->recording;
  const char* what = context->params.what;
  weft_status_t status = WEFT_OK;
  for (uint32_t i = 0;
       weft_status_is_ok(status) && i < recording->used_slot_count; ++i) {
    uint32_t slot = recording->used_slots[i];
    if (slot >= binding_table.count) {
      status = WEFT_STATUS(OUT_OF_RANGE,
                           "%s: binding table slot %u is past the end of the "
                           "table (%u entries)",
                           what, slot, binding_table.count);
    } else if (!binding_table.bindings[slot].buffer) {
      status =
          WEFT_STATUS(INVALID_ARGUMENT,
                      "%s: binding table slot %u has no buffer", what, slot);
    } else {
      const weft_buffer_binding_t* entry = &binding_table.bindings[slot];
      status = weft_status_annotate(
          weft_buffer_map_range_unchecked(
              entry->buffer, weft_block_processor_access(entry->buffer),
              entry->offset, entry->length, what, &context->mappings[i]),
          "binding table slot %u", slot);
    }
    if (!weft_status_is_ok(status) && recording->used_slot_first_commands &&
        context->params.failed_command) {
      *context->params.failed_command = recording->used_slot_first_commands[i];
    }
  }
  for (uint32_t i = 0;
       weft_status_is_ok(status) && i < recording->late_buffer_count; ++i) {
    weft_buffer_t* buffer = recording->late_buffers[i];
    status = weft_status_annotate(
        weft_buffer_map_range_unchecked(
            buffer, weft_block_processor_access(buffer), 0, WEFT_WHOLE_BUFFER,
            what, &context->mappings[recording->used_slot_count + i]),
        "while mapping a buffer the recording uses");
    if (!weft_status_is_ok(status) && recording->late_buffer_first_commands &&
        context->params.failed_command) {
      *context->params.failed_command =
          recording->late_buffer_first_commands[i];
    }
  }
  return status;
}

// Resolves fixup |fixup| into the pointer table entry |index|.
static weft_status_t weft_block_processor_resolve_fixup(
    weft_block_processor_context_t* context, const weft_block_fixup_t* fixup,
    uint32_t index) {
  const weft_block_recording_t* recording = context->recording;
  weft_status_t status = WEFT_OK;
  uint8_t* ptr = NULL;
  uint64_t length = 0;
  if (fixup->kind == WEFT_BLOCK_FIXUP_DIRECT) {
    ptr = fixup->host_ptr;
    length = fixup->length;
  } else {
    const weft_buffer_mapping_t* mapping = NULL;
    if (fixup->kind == WEFT_BLOCK_FIXUP_INDIRECT) {
      mapping = &context->mappings[recording->slot_to_used[fixup->index]];
    } else {
      mapping = &context->mappings[recording->used_slot_count + fixup->index];
    }
    uint64_t available = mapping->byte_length;
    length = fixup->length == WEFT_WHOLE_BUFFER ? available - fixup->offset
                                                : fixup->length;
    if (fixup->offset > available || length > available - fixup->offset) {
      status = WEFT_STATUS(
          OUT_OF_RANGE,
          "%s: a command uses [%llu, %llu) of %s %u, which has %llu bytes",
          context->params.what, (unsigned long long)fixup->offset,
          (unsigned long long)(fixup->offset + length),
          fixup->kind == WEFT_BLOCK_FIXUP_INDIRECT ? "binding table slot"
                                                   : "late-bound buffer",
          fixup->index, (unsigned long long)available);
    } else if (length > 0) {
      ptr = mapping->contents + fixup->offset;
    }
  }
  context->ptrs[index] = length ? ptr : NULL;
  context->lengths[index] = (size_t)length;
  return status;
}

static weft_status_t weft_block_processor_resolve_fixups(
    weft_block_processor_context_t* context) {
  weft_status_t status = WEFT_OK;
  for (const weft_block_t* block = context->recording->first_block;
       weft_status_is_ok(status) && block; block = block->next) {
    for (uint32_t i = 0; weft_status_is_ok(status) && i < block->fixup_count;
         ++i) {
      status = weft_block_processor_resolve_fixup(
          context, weft_block_fixup(block, i), block->first_fixup + i);
    }
  }
  return status;
}

// --- Tile layout

static uint64_t weft_block_ceil_div(uint64_t value, uint64_t divisor) {
  return value / divisor + (value % divisor != 0);
}

// Bytes per tile of a transfer of |length| bytes: the recording's tile
// size, grown (in multiples of the alignment) to keep the tile count
// bounded.
static uint64_t weft_block_transfer_tile_size(
    const weft_block_recording_t* recording, uint64_t length) {
  uint64_t tile = recording->transfer_tile_bytes;
  uint64_t least = weft_block_ceil_div(length, WEFT_BLOCK_MAX_COMMAND_TILES);
  if (least > tile) {
    tile = (least + WEFT_BLOCK_ALIGNMENT - 1) &
           ~(uint64_t)(WEFT_BLOCK_ALIGNMENT - 1);
  }
  return tile;
}

// Computes |op| for command |command| and returns its tile count.
static weft_status_t weft_block_processor_layout_command(
    weft_block_processor_context_t* context,
    const weft_block_cmd_header_t* command, weft_block_op_t* op,
    uint64_t* out_tiles) {
  const weft_block_recording_t* recording = context->recording;
  weft_status_t status = WEFT_OK;
  uint64_t tiles = 0;
  switch (command->opcode) {
    case WEFT_BLOCK_OP_DISPATCH: {
      const weft_block_cmd_dispatch_t* dispatch =
          (const weft_block_cmd_dispatch_t*)command;
      uint64_t total = dispatch->workgroup_total;
      uint64_t tile_size = dispatch->tile_size;
      if (tile_size == 0) {
        uint32_t per_worker =
            context->params.tiles_per_worker
                ? context->params.tiles_per_worker
                : WEFT_BLOCK_PROCESSOR_DEFAULT_TILES_PER_WORKER;
        tile_size = weft_block_ceil_div(
            total, (uint64_t)context->layout_workers * per_worker);
      }
      uint64_t least = weft_block_ceil_div(total, WEFT_BLOCK_MAX_COMMAND_TILES);
      if (tile_size < least) tile_size = least;
      if (tile_size == 0) tile_size = 1;
      op->tile_size = tile_size;
      tiles = weft_block_ceil_div(total, tile_size);
      break;
    }
    case WEFT_BLOCK_OP_FILL: {
      const weft_block_cmd_fill_t* fill = (const weft_block_cmd_fill_t*)command;
      uint64_t length = context->lengths[fill->target_fixup];
      op->tile_size = weft_block_transfer_tile_size(recording, length);
      tiles = weft_block_ceil_div(length, op->tile_size);
      break;
    }
    case WEFT_BLOCK_OP_COPY: {
      const weft_block_cmd_copy_t* copy = (const weft_block_cmd_copy_t*)command;
      uint64_t length = context->lengths[copy->source_fixup];
      if (length != context->lengths[copy->target_fixup]) {
        status = WEFT_STATUS(
            INVALID_ARGUMENT,
            "%s: copy source (%llu bytes) and target (%llu "
            "bytes) differ in length",
            context->params.what, (unsigned long long)length,
            (unsigned long long)context->lengths[copy->target_fixup]);
      }
      op->tile_size = weft_block_transfer_tile_size(recording, length);
      tiles = weft_block_ceil_div(length, op->tile_size);
      break;
    }
    case WEFT_BLOCK_OP_UPDATE: {
      const weft_block_cmd_update_t* update =
          (const weft_block_cmd_update_t*)command;
      uint64_t available = context->lengths[update->target_fixup];
      if (update->target_offset > available ||
          update->length > available - update->target_offset) {
        status = WEFT_STATUS(
            OUT_OF_RANGE,
            "%s: update of [%llu, %llu) is past the end of "
            "its target (%llu bytes)",
            context->params.what, (unsigned long long)update->target_offset,
            (unsigned long long)(update->target_offset + update->length),
            (unsigned long long)available);
      }
      op->tile_size = update->length;
      tiles = 1;
      break;
    }
    default:
      status = WEFT_STATUS(INTERNAL, "%s: opcode %u in the command index",
                           context->params.what, (unsigned)command->opcode);
      break;
  }
  *out_tiles = tiles;
  return status;
}

// Computes every command's tiles and every region's total.
static weft_status_t weft_block_processor_layout_tiles(
    weft_block_processor_context_t* context) {
  const weft_block_recording_t* recording = context->recording;
  weft_status_t status = WEFT_OK;
  for (uint32_t r = 0; weft_status_is_ok(status) && r < recording->region_count;
       ++r) {
    const weft_block_region_t* region = &recording->regions[r];
    uint64_t sum = 0;
    for (uint32_t i = 0; weft_status_is_ok(status) && i < region->command_count;
         ++i) {
      uint32_t c = region->first_command + i;
      uint64_t tiles = 0;
      status = weft_block_processor_layout_command(
          context, recording->commands[c], &context->ops[c], &tiles);
      sum += tiles;
      if (weft_status_is_ok(status) && sum > WEFT_BLOCK_MAX_REGION_TILES) {
        status = WEFT_STATUS(
            RESOURCE_EXHAUSTED, "%s: region %u has more than %u tiles",
            context->params.what, r, WEFT_BLOCK_MAX_REGION_TILES);
      }
      context->ops[c].tile_end = (uint32_t)sum;
    }
    context->region_tiles[r] = (uint32_t)sum;
  }
  return status;
}

// --- Lifetime

// The first region at or after |region| with tiles (region_count if none).
static uint32_t weft_block_processor_next_region(
    const weft_block_processor_context_t* context, uint32_t region) {
  while (region < context->region_count && context->region_tiles[region] == 0) {
    ++region;
  }
  return region;
}

static uint32_t weft_block_processor_desired_for(
    const weft_block_processor_context_t* context, uint32_t region) {
  uint32_t desired = 0;
  if (region >= context->region_count) {
    desired = 0;
  } else if (context->mode != WEFT_BLOCK_PROCESSOR_MODE_SHARED) {
    desired = 1;
  } else {
    uint32_t tiles = context->region_tiles[region];
    desired = tiles < context->layout_workers ? tiles : context->layout_workers;
  }
  return desired;
}

// Tiles [*out_begin, *out_end) of region |region| belong to lane |lane|.
static void weft_block_processor_lane_range(
    const weft_block_processor_context_t* context, uint32_t region,
    uint32_t lane, uint32_t* out_begin, uint32_t* out_end) {
  uint64_t tiles =
      region < context->region_count ? context->region_tiles[region] : 0;
  *out_begin = (uint32_t)(tiles * lane / context->lane_count);
  *out_end = (uint32_t)(tiles * (lane + 1) / context->lane_count);
}

// Lane |lane|'s claim word when region |region| opens.
static uint64_t weft_block_processor_lane_open_word(
    const weft_block_processor_context_t* context, uint32_t region,
    uint32_t lane) {
  uint32_t begin = 0;
  uint32_t end = 0;
  weft_block_processor_lane_range(context, region, lane, &begin, &end);
  return ((uint64_t)region << 32) | begin;
}

static void weft_block_processor_unmap(
    weft_block_processor_context_t* context) {
  for (uint32_t i = 0; i < context->mapping_count; ++i) {
    weft_buffer_unmap_range(&context->mappings[i]);
  }
}

weft_status_t weft_block_processor_context_initialize(
    const weft_block_recording_t* recording, weft_binding_table_t binding_table,
    const weft_block_processor_params_t* params, void* storage,
    size_t storage_size, weft_block_processor_context_t** out_context) {
  *out_context = NULL;
  const char* what = params && params->what ? params->what : "queue_execute";
  weft_block_context_layout_t layout = weft_block_context_layout(recording);
  weft_status_t status = WEFT_OK;
  if (!params || params->worker_count == 0) {
    status =
        WEFT_STATUS(INVALID_ARGUMENT,
                    "%s: a block processor needs at least one worker", what);
  } else if (!storage || storage_size < layout.total) {
    status = WEFT_STATUS(RESOURCE_EXHAUSTED,
                         "%s: %zu bytes of context storage given, %zu needed",
                         what, storage ? storage_size : 0, layout.total);
  } else if (binding_table.count > 0 && !binding_table.bindings) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "%s: binding table has %u entries but its bindings "
                         "array is NULL",
                         what, binding_table.count);
  }
  weft_block_processor_context_t* context = NULL;
  if (weft_status_is_ok(status)) {
    uint8_t* base =
        (uint8_t*)(((uintptr_t)storage + WEFT_BLOCK_CACHE_LINE - 1) &
                   ~(uintptr_t)(WEFT_BLOCK_CACHE_LINE - 1));
    memset(base, 0, layout.end);
    context = (weft_block_processor_context_t*)base;
    context->recording = recording;
    context->params = *params;
    context->params.what = what;
    context->region_count = recording->region_count;
    context->ptrs = (void**)(base + layout.ptrs);
    context->lengths = (size_t*)(base + layout.lengths);
    context->mappings = (weft_buffer_mapping_t*)(base + layout.mappings);
    context->mapping_count =
        recording->used_slot_count + recording->late_buffer_count;
    context->ops = (weft_block_op_t*)(base + layout.ops);
    context->region_tiles = (uint32_t*)(base + layout.region_tiles);
    context->layout_workers = params->layout_worker_count &&
                                      params->layout_worker_count <
                                          params->worker_count
                                  ? params->layout_worker_count
                                  : params->worker_count;
    context->lane_count = context->layout_workers < WEFT_BLOCK_CLAIM_LANES
                              ? context->layout_workers
                              : WEFT_BLOCK_CLAIM_LANES;
    if (context->lane_count == 0) context->lane_count = 1;
    for (uint32_t l = 0; l < WEFT_BLOCK_CLAIM_LANES; ++l) {
      atomic_init(&context->lanes[l].claim, 0);
    }
    atomic_init(&context->retired, 0);
    atomic_init(&context->desired_workers, 0);
    atomic_init(&context->exclusive_taken, 0);
    atomic_init(&context->failure, WEFT_OK);
    status = weft_block_processor_map(context, binding_table);
  }
  if (weft_status_is_ok(status)) {
    status = weft_block_processor_resolve_fixups(context);
  }
  if (weft_status_is_ok(status)) {
    status = weft_block_processor_layout_tiles(context);
  }
  if (weft_status_is_ok(status)) {
    bool one_tile_regions =
        (context->params.flags & WEFT_BLOCK_PROCESSOR_FLAG_NO_EXCLUSIVE) == 0;
    for (uint32_t r = 0; one_tile_regions && r < context->region_count; ++r) {
      one_tile_regions = context->region_tiles[r] <= 1;
    }
    if (context->params.worker_count == 1) {
      context->mode = WEFT_BLOCK_PROCESSOR_MODE_SINGLE;
    } else if (one_tile_regions) {
      context->mode = WEFT_BLOCK_PROCESSOR_MODE_EXCLUSIVE;
    } else {
      context->mode = WEFT_BLOCK_PROCESSOR_MODE_SHARED;
    }
    uint32_t first = weft_block_processor_next_region(context, 0);
    for (uint32_t l = 0; l < context->lane_count; ++l) {
      atomic_init(&context->lanes[l].claim,
                  weft_block_processor_lane_open_word(context, first, l));
    }
    atomic_init(&context->retired, (uint64_t)first << 32);
    atomic_init(&context->desired_workers,
                weft_block_processor_desired_for(context, first));
    *out_context = context;
  } else if (context) {
    weft_block_processor_unmap(context);
  }
  return status;
}

void weft_block_processor_context_deinitialize(
    weft_block_processor_context_t* context) {
  if (!context) return;
  weft_block_processor_unmap(context);
  // Relaxed: no drain call is running, so nothing races the failure.
  weft_status_free(
      weft_atomic_exchange(&context->failure, WEFT_OK, memory_order_relaxed));
}

weft_status_t weft_block_processor_context_create(
    const weft_block_recording_t* recording, weft_binding_table_t binding_table,
    const weft_block_processor_params_t* params, weft_allocator_t allocator,
    weft_block_processor_context_t** out_context) {
  *out_context = NULL;
  size_t size = weft_block_processor_context_storage_size(recording);
  void* allocation = NULL;
  weft_status_t status =
      weft_allocator_malloc_uninitialized(allocator, size, &allocation);
  if (weft_status_is_ok(status)) {
    status = weft_block_processor_context_initialize(
        recording, binding_table, params, allocation, size, out_context);
  }
  if (weft_status_is_ok(status)) {
    (*out_context)->allocator = allocator;
    (*out_context)->allocation = allocation;
  } else {
    weft_allocator_free(allocator, allocation);
  }
  return status;
}

void weft_block_processor_context_free(
    weft_block_processor_context_t* context) {
  if (!context) return;
  weft_allocator_t allocator = context->allocator;
  void* allocation = context->allocation;
  weft_block_processor_context_deinitialize(context);
  weft_allocator_free(allocator, allocation);
}

// --- Execution

// Records |status| as the failure if it is the first. Returns true when it
// was.
static bool weft_block_processor_fail(weft_block_processor_context_t* context,
                                      weft_status_t status) {
  weft_status_t expected = WEFT_OK;
  // Release: publishes the status record to whoever consumes it (acquire).
  bool first = weft_atomic_compare_exchange_strong(
      &context->failure, &expected, status, memory_order_release,
      memory_order_relaxed);
  if (!first) weft_status_free(status);
  return first;
}

static bool weft_block_processor_failed(
    const weft_block_processor_context_t* context) {
  // Relaxed: a hint to skip work; the failure itself is consumed later with
  // acquire.
  return weft_atomic_load(&((weft_block_processor_context_t*)context)->failure,
                          memory_order_relaxed) != WEFT_OK;
}

// Runs linear workgroups [begin, end) of |dispatch| as worker
// |worker_index| with |scratch| (large enough). Returns the failure, if any.
static weft_status_t weft_block_processor_call_kernel(
    const weft_block_processor_context_t* context,
    const weft_block_cmd_dispatch_t* dispatch, uint64_t begin, uint64_t end,
    uint32_t worker_index, void* scratch) {
  weft_dispatch_state_t dispatch_state;
  memcpy(dispatch_state.workgroup_count, dispatch->workgroup_count,
         sizeof(dispatch_state.workgroup_count));
  memcpy(dispatch_state.workgroup_size, dispatch->workgroup_size,
         sizeof(dispatch_state.workgroup_size));
  dispatch_state.constant_count = dispatch->constant_count;
  dispatch_state.constants = dispatch->constants;
  dispatch_state.binding_count = dispatch->binding_count;
  dispatch_state.binding_ptrs = context->ptrs + dispatch->first_fixup;
  dispatch_state.binding_lengths = context->lengths + dispatch->first_fixup;
  weft_workgroup_state_t workgroup_state;
  memset(&workgroup_state, 0, sizeof(workgroup_state));
  workgroup_state.processor_id = worker_index;
  if (dispatch->local_memory_size > 0) {
    workgroup_state.local_memory = scratch;
    workgroup_state.local_memory_size = dispatch->local_memory_size;
  }
  const uint32_t count_x = dispatch->workgroup_count[0];
  const uint32_t count_y = dispatch->workgroup_count[1];
  uint64_t rest = begin / count_x;
  uint32_t x = (uint32_t)(begin % count_x);
  uint32_t y = (uint32_t)(rest % count_y);
  uint32_t z = (uint32_t)(rest / count_y);
  weft_kernel_fn_t fn = dispatch->fn;
  int result = 0;
  for (uint64_t i = begin; i < end; ++i) {
    workgroup_state.workgroup_id[0] = x;
    workgroup_state.workgroup_id[1] = y;
    workgroup_state.workgroup_id[2] = z;
    result = fn(&dispatch_state, &workgroup_state);
    if (result != 0) break;
    if (++x == count_x) {
      x = 0;
      if (++y == count_y) {
        y = 0;
        ++z;
      }
    }
  }
  weft_status_t status = WEFT_OK;
  if (result != 0) {
    status = WEFT_STATUS(INTERNAL,
                         "kernel '%s' (library '%s') failed in workgroup "
                         "(%u, %u, %u) with code %d",
                         dispatch->kernel->name,
                         weft_executable_name(dispatch->executable), x, y, z,
                         result);
  }
  return status;
}

// Runs linear workgroups [begin, end) of |dispatch| as worker
// |worker_index|. Returns the failure, if any.
static weft_status_t weft_block_processor_run_workgroups(
    const weft_block_processor_context_t* context,
    const weft_block_cmd_dispatch_t* dispatch, uint64_t begin, uint64_t end,
    uint32_t worker_index, void* scratch, size_t scratch_size) {
  weft_status_t status = WEFT_OK;
  if (dispatch->local_memory_size > scratch_size) {
    status = WEFT_STATUS(
        RESOURCE_EXHAUSTED,
        "kernel '%s' (library '%s') needs %u bytes of local "
        "memory but worker %u has %zu",
        dispatch->kernel->name, weft_executable_name(dispatch->executable),
        dispatch->local_memory_size, worker_index, scratch_size);
  } else {
    status = weft_block_processor_call_kernel(context, dispatch, begin, end,
                                              worker_index, scratch);
  }
  return status;
}

// Fills |length| bytes at |target| with the pattern, starting in phase.
static void weft_block_fill_bytes(uint8_t* target, size_t length,
                                  uint32_t pattern, uint32_t pattern_length) {
  if (pattern_length == 1) {
    memset(target, (int)(pattern & 0xFFu), length);
  } else {
    // 64 bytes of pattern copied at a time: constant-size copies the
    // compiler turns into wide stores.
    uint8_t chunk[64];
    for (size_t i = 0; i < sizeof(chunk); i += pattern_length) {
      memcpy(chunk + i, &pattern, pattern_length);
    }
    while (length >= sizeof(chunk)) {
      memcpy(target, chunk, sizeof(chunk));
      target += sizeof(chunk);
      length -= sizeof(chunk);
    }
    memcpy(target, chunk, length);
  }
}

// Runs bytes [begin, begin + length) of a fill, copy or update, or
// workgroups [begin, end) of a dispatch. Failures are recorded.
static void weft_block_processor_run_range(
    weft_block_processor_context_t* context,
    const weft_block_cmd_header_t* command, uint64_t begin, uint64_t end,
    uint32_t worker_index, void* scratch, size_t scratch_size) {
  // Empty ranges (a zero-length transfer has NULL pointers) do nothing.
  switch (end > begin ? command->opcode : WEFT_BLOCK_OP_INVALID) {
    case WEFT_BLOCK_OP_DISPATCH: {
      const weft_block_cmd_dispatch_t* dispatch =
          (const weft_block_cmd_dispatch_t*)command;
      weft_status_t status = weft_block_processor_run_workgroups(
          context, dispatch, begin, end, worker_index, scratch, scratch_size);
      // Only the first failure's writer touches |failed_command|; the
      // caller reads it after the completion, which orders it.
      if (!weft_status_is_ok(status) && weft_block_processor_fail(context, status) &&
          context->params.failed_command) {
        *context->params.failed_command = dispatch->command_index;
      }
      break;
    }
    case WEFT_BLOCK_OP_FILL: {
      const weft_block_cmd_fill_t* fill = (const weft_block_cmd_fill_t*)command;
      weft_block_fill_bytes((uint8_t*)context->ptrs[fill->target_fixup] + begin,
                            (size_t)(end - begin), fill->pattern,
                            fill->pattern_length);
      break;
    }
    case WEFT_BLOCK_OP_COPY: {
      const weft_block_cmd_copy_t* copy = (const weft_block_cmd_copy_t*)command;
      memcpy((uint8_t*)context->ptrs[copy->target_fixup] + begin,
             (const uint8_t*)context->ptrs[copy->source_fixup] + begin,
             (size_t)(end - begin));
      break;
    }
    case WEFT_BLOCK_OP_UPDATE: {
      const weft_block_cmd_update_t* update =
          (const weft_block_cmd_update_t*)command;
      memcpy(
          (uint8_t*)context->ptrs[update->target_fixup] + update->target_offset,
          update->data, update->length);
      break;
    }
    default:
      break;
  }
}

// The whole extent of a work command: workgroups or bytes.
static uint64_t weft_block_command_extent(
    const weft_block_processor_context_t* context,
    const weft_block_cmd_header_t* command) {
  uint64_t extent = 0;
  switch (command->opcode) {
    case WEFT_BLOCK_OP_DISPATCH:
      extent = ((const weft_block_cmd_dispatch_t*)command)->workgroup_total;
      break;
    case WEFT_BLOCK_OP_FILL:
      extent =
          context
              ->lengths[((const weft_block_cmd_fill_t*)command)->target_fixup];
      break;
    case WEFT_BLOCK_OP_COPY:
      extent =
          context
              ->lengths[((const weft_block_cmd_copy_t*)command)->source_fixup];
      break;
    case WEFT_BLOCK_OP_UPDATE:
      extent = ((const weft_block_cmd_update_t*)command)->length;
      break;
    default:
      break;
  }
  return extent;
}

// Runs the whole recording on the calling worker by walking its blocks.
static void weft_block_processor_run_sequential(
    weft_block_processor_context_t* context, uint32_t worker_index,
    void* scratch, size_t scratch_size) {
  const weft_block_cmd_header_t* command =
      weft_block_first_command(context->recording->first_block);
  bool done = false;
  while (!done && !weft_block_processor_failed(context)) {
    switch (command->opcode) {
      case WEFT_BLOCK_OP_DISPATCH:
      case WEFT_BLOCK_OP_FILL:
      case WEFT_BLOCK_OP_COPY:
      case WEFT_BLOCK_OP_UPDATE:
        weft_block_processor_run_range(
            context, command, 0, weft_block_command_extent(context, command),
            worker_index, scratch, scratch_size);
        command = weft_block_next_command(command);
        break;
      case WEFT_BLOCK_OP_BARRIER:
        // Everything before it has already run on this thread.
        command = weft_block_next_command(command);
        break;
      case WEFT_BLOCK_OP_BRANCH:
        command = weft_block_first_command(
            ((const weft_block_cmd_branch_t*)command)->target);
        break;
      case WEFT_BLOCK_OP_RETURN:
      default:
        done = true;
        break;
    }
  }
}

// Marks the context completed after a one-worker run.
static void weft_block_processor_finish_sequential(
    weft_block_processor_context_t* context) {
  weft_atomic_store(&context->desired_workers, 0, memory_order_relaxed);
  // Release: publishes every write of the run to is_completed/drain readers.
  weft_atomic_store(&context->lanes[0].claim,
                    (uint64_t)context->region_count << 32,
                    memory_order_release);
}

// Runs tile |tile| of region |region|. |*inout_hint| is the command of the
// worker's previous tile (tiles only grow within a region for one worker).
static void weft_block_processor_run_tile(
    weft_block_processor_context_t* context, uint32_t region, uint32_t tile,
    uint32_t* inout_hint, uint32_t worker_index, void* scratch,
    size_t scratch_size) {
  const weft_block_recording_t* recording = context->recording;
  const weft_block_region_t* info = &recording->regions[region];
  const weft_block_op_t* ops = context->ops;
  uint32_t first = info->first_command;
  uint32_t end = first + info->command_count;
  uint32_t low = first;
  uint32_t hint = *inout_hint;
  if (hint >= first && hint < end &&
      (hint == first || ops[hint - 1].tile_end <= tile)) {
    low = hint;
  }
  // The first command whose tile_end is past |tile|.
  uint32_t high = end - 1;
  while (low < high) {
    uint32_t middle = low + (high - low) / 2;
    if (ops[middle].tile_end > tile) {
      high = middle;
    } else {
      low = middle + 1;
    }
  }
  *inout_hint = low;
  uint32_t tile_begin = low == first ? 0 : ops[low - 1].tile_end;
  const weft_block_cmd_header_t* command = recording->commands[low];
  uint64_t extent = weft_block_command_extent(context, command);
  uint64_t begin = (uint64_t)(tile - tile_begin) * ops[low].tile_size;
  uint64_t last = begin + ops[low].tile_size;
  if (command->opcode == WEFT_BLOCK_OP_UPDATE || last > extent) last = extent;
  weft_block_processor_run_range(context, command, begin, last, worker_index,
                                 scratch, scratch_size);
}

// Adds |count| finished tiles to region |epoch|; true when they were its
// last ones (the caller then advances).
static bool weft_block_processor_retire(weft_block_processor_context_t* context,
                                        uint32_t epoch, uint32_t count) {
  // Acq_rel: the release publishes this worker's tile writes; the acquire
  // lets the worker finishing the region see every other worker's.
  WEFT_SCHED_COUNT(RMW_RETIRE);
  uint64_t previous = weft_atomic_fetch_add(&context->retired, (uint64_t)count,
                                            memory_order_acq_rel);
  assert((uint32_t)(previous >> 32) == epoch &&
         "tiles retire into the region they were claimed in");
  return (uint32_t)previous + count == context->region_tiles[epoch];
}

// Opens the region after |epoch| (or completes the context) once every tile
// of |epoch| retired. Runs on the worker that retired the last tile.
static void weft_block_processor_advance(
    weft_block_processor_context_t* context, uint32_t epoch) {
  uint32_t next = epoch + 1;
  WEFT_SCHED_COUNT(RMW_REGION);
  // Failures of this region's tiles were recorded before those tiles
  // retired, and the retire that ended the region acquired them.
  if (weft_block_processor_failed(context)) next = context->region_count;
  next = weft_block_processor_next_region(context, next);
  uint32_t desired = weft_block_processor_desired_for(context, next);
  weft_atomic_store(&context->desired_workers, desired, memory_order_relaxed);
  // Relaxed: ordered before the claim word's release below; no worker
  // retires into |next| before claiming in it.
  weft_atomic_store(&context->retired, (uint64_t)next << 32,
                    memory_order_relaxed);
  // Lane 0 last (it is the epoch word every drain reads first). Release:
  // publishes every write of the finished region (acquired by the retire)
  // and the reset retired word to the workers claiming in |next|.
  for (uint32_t l = context->lane_count; l-- > 0;) {
    weft_atomic_store(&context->lanes[l].claim,
                      weft_block_processor_lane_open_word(context, next, l),
                      memory_order_release);
  }
  if (next < context->region_count && context->params.region_ready) {
    context->params.region_ready(context->params.region_ready_user_data,
                                 desired);
  }
}

static weft_block_drain_result_t weft_block_processor_drain_shared(
    weft_block_processor_context_t* context, uint32_t worker_index,
    void* scratch, size_t scratch_size) {
  const uint32_t region_count = context->region_count;
  uint32_t budget = WEFT_BLOCK_PROCESSOR_DRAIN_TILE_BUDGET;
  uint32_t held = 0;
  uint32_t held_epoch = 0;
  uint32_t hint = UINT32_MAX;
  bool did_work = false;
  weft_block_drain_result_t result = WEFT_BLOCK_DRAIN_NO_WORK;
  // Lanes are tried from the worker's own (its seat's); |lane_offset| lanes
  // past it were found exhausted in |lane_epoch| (a lane's next tile only
  // grows within an epoch, so they are not read again).
  const uint32_t lane_count = context->lane_count;
  const uint32_t seat = context->params.seats
                            ? context->params.seats[worker_index]
                            : worker_index;
  const uint32_t home = seat % lane_count;
  uint32_t lane_epoch = UINT32_MAX;
  uint32_t lane_offset = 0;
  for (;;) {
    // Acquire: pairs with the release that opened the region (its layout
    // and the previous region's writes); lane 0 is opened last.
    uint64_t epoch_word =
        weft_atomic_load(&context->lanes[0].claim, memory_order_acquire);
    uint32_t epoch = (uint32_t)(epoch_word >> 32);
    if (epoch >= region_count) {
      result = WEFT_BLOCK_DRAIN_COMPLETED;
      break;
    }
    if (epoch != lane_epoch) {
      lane_epoch = epoch;
      lane_offset = 0;
    }
    uint32_t lane = home;
    uint64_t claim = 0;
    bool found = false;
    bool moved = false;
    while (budget != 0 && lane_offset < lane_count) {
      lane = (home + lane_offset) % lane_count;
      // Acquire: as lane 0's load (a later region's opening, if it moved).
      claim = lane == 0 ? epoch_word
                        : weft_atomic_load(&context->lanes[lane].claim,
                                           memory_order_acquire);
      if ((uint32_t)(claim >> 32) != epoch) {
        // The region ended after lane 0 was read: start over.
        moved = true;
        break;
      }
      uint32_t begin = 0;
      uint32_t end = 0;
      weft_block_processor_lane_range(context, epoch, lane, &begin, &end);
      if ((uint32_t)claim < end) {
        found = true;
        break;
      }
      ++lane_offset;
    }
    if (moved) {
      assert(held == 0 && "a region cannot end with tiles held");
      continue;
    }
    uint32_t tile = (uint32_t)claim;
    if (!found) {
      // Nothing left to claim in this region (or the budget ran out).
      if (held == 0) break;
      bool last = weft_block_processor_retire(context, held_epoch, held);
      WEFT_TRACE_END();  // the tile batch
      held = 0;
      did_work = true;
      if (!last) break;
      weft_block_processor_advance(context, held_epoch);
      hint = UINT32_MAX;
      continue;
    }
    if (held == 0 && context->params.claim_hook) {
      context->params.claim_hook(context->params.claim_hook_user_data,
                                 worker_index, epoch, tile);
    }
    // Acquire: the same publication as the loads above, for the value the
    // exchange actually read.
    WEFT_SCHED_COUNT(RMW_CLAIM);
    if (!weft_atomic_compare_exchange_weak(&context->lanes[lane].claim, &claim,
                                           claim + 1, memory_order_acquire,
                                           memory_order_relaxed)) {
      WEFT_SCHED_COUNT(RMW_CLAIM_LOST);
      continue;
    }
    assert(held == 0 || held_epoch == epoch);
    if (held == 0) {
      // One zone per batch of tiles this worker runs in a region (value:
      // the region), closed when it retires them.
      WEFT_TRACE_BEGIN_VALUE(WEFT_TRACE_CATEGORY_BLOCK, "tiles", 0, epoch);
    }
    if (!weft_block_processor_failed(context)) {
      weft_block_processor_run_tile(context, epoch, tile, &hint, worker_index,
                                    scratch, scratch_size);
    }
    held_epoch = epoch;
    ++held;
    --budget;
    did_work = true;
  }
  if (result != WEFT_BLOCK_DRAIN_COMPLETED && did_work) {
    result = WEFT_BLOCK_DRAIN_DID_WORK;
  }
  return result;
}

weft_block_drain_result_t weft_block_processor_drain(
    weft_block_processor_context_t* context, uint32_t worker_index,
    void* scratch, size_t scratch_size) {
  weft_block_drain_result_t result = WEFT_BLOCK_DRAIN_COMPLETED;
  switch (context->mode) {
    case WEFT_BLOCK_PROCESSOR_MODE_SINGLE:
      // Relaxed: only this worker ever writes the claim word in this mode.
      if ((uint32_t)(weft_atomic_load(&context->lanes[0].claim,
                                      memory_order_relaxed) >>
                     32) < context->region_count) {
        WEFT_TRACE_BEGIN(WEFT_TRACE_CATEGORY_BLOCK, "regions (one worker)");
        weft_block_processor_run_sequential(context, worker_index, scratch,
                                            scratch_size);
        weft_block_processor_finish_sequential(context);
        WEFT_TRACE_END();
      }
      break;
    case WEFT_BLOCK_PROCESSOR_MODE_EXCLUSIVE:
      if (weft_block_processor_is_completed(context)) {
        result = WEFT_BLOCK_DRAIN_COMPLETED;
      } else if (weft_atomic_exchange(&context->exclusive_taken, 1u,
                                      memory_order_relaxed) != 0) {
        // Relaxed: the exchange only elects one runner; it publishes
        // nothing (completion is published through the claim word).
        result = WEFT_BLOCK_DRAIN_NO_WORK;
      } else {
        WEFT_TRACE_BEGIN(WEFT_TRACE_CATEGORY_BLOCK, "regions (one worker)");
        weft_block_processor_run_sequential(context, worker_index, scratch,
                                            scratch_size);
        weft_block_processor_finish_sequential(context);
        WEFT_TRACE_END();
      }
      break;
    case WEFT_BLOCK_PROCESSOR_MODE_SHARED:
    default:
      result = weft_block_processor_drain_shared(context, worker_index, scratch,
                                                 scratch_size);
      break;
  }
  return result;
}

uint32_t weft_block_processor_desired_workers(
    const weft_block_processor_context_t* context) {
  return weft_atomic_load(
      &((weft_block_processor_context_t*)context)->desired_workers,
      memory_order_relaxed);
}

bool weft_block_processor_is_completed(
    const weft_block_processor_context_t* context) {
  // Acquire: a true result must see every write the recording made.
  uint64_t claim = weft_atomic_load(
      &((weft_block_processor_context_t*)context)->lanes[0].claim,
      memory_order_acquire);
  return (uint32_t)(claim >> 32) >= context->region_count;
}

void weft_block_processor_abort(weft_block_processor_context_t* context,
                                weft_status_t status) {
  if (weft_status_is_ok(status)) {
    status = weft_status_from_code(WEFT_STATUS_CANCELLED);
  }
  weft_block_processor_fail(context, status);
}

weft_status_t weft_block_processor_consume_status(
    weft_block_processor_context_t* context) {
  // Acquire: pairs with the release that stored the failure (its record).
  return weft_atomic_exchange(&context->failure, WEFT_OK, memory_order_acquire);
}

weft_status_t weft_block_processor_run(const weft_block_recording_t* recording,
                                       weft_binding_table_t binding_table,
                                       void* scratch, size_t scratch_size,
                                       void* storage, size_t storage_size,
                                       weft_allocator_t allocator) {
  weft_block_processor_params_t params;
  memset(&params, 0, sizeof(params));
  params.worker_count = 1;
  weft_block_processor_context_t* context = NULL;
  bool allocated =
      !storage ||
      storage_size < weft_block_processor_context_storage_size(recording);
  weft_status_t status =
      allocated ? weft_block_processor_context_create(
                      recording, binding_table, &params, allocator, &context)
                : weft_block_processor_context_initialize(
                      recording, binding_table, &params, storage, storage_size,
                      &context);
  if (weft_status_is_ok(status)) {
    weft_block_processor_drain(context, 0, scratch, scratch_size);
    status = weft_block_processor_consume_status(context);
    if (allocated) {
      weft_block_processor_context_free(context);
    } else {
      weft_block_processor_context_deinitialize(context);
    }
  }
  return status;
}
