// weft: running a block recording (block_isa.h) cooperatively on workers.
//
// Each submission of a recording gets a context: its pointer table (every
// fixup resolved once, at initialize, into a host pointer and a length),
// the tile layout of each region, and the atomics workers claim tiles with.
// The recording itself is never written, so any number of contexts may run
// one recording at once.
//
// Execution goes region by region. A region's work is cut into tiles: a
// dispatch's workgroups in runs of |tile_size| (linear x, then y, then z),
// a fill or copy in runs of the recording's transfer tile bytes, an update
// piece as one tile. Workers call weft_block_processor_drain with their
// worker index; each call claims tiles of the current region and runs them:
//
//   claim words   one per lane (min(workers, 4) lanes, each on its own
//                 cache line): the region's tiles are split into that many
//                 contiguous ranges, and lane l's word is (epoch << 32) |
//                 next tile of range l. A worker claims from lane
//                 worker_index % lanes first, then from the others (so
//                 with every worker present each runs the same slice of
//                 every region, keeping its data in its own cache), tile t
//                 of epoch e with a compare-exchange from (e, t) to
//                 (e, t + 1). The epoch is the region's index, so a worker
//                 that read a word during region e and was delayed cannot
//                 claim anything once region e + 1 has begun: its
//                 compare-exchange fails and it reads the words again.
//                 Lane 0 is also the epoch word: it is opened last.
//   retired word  (epoch << 32) | tiles finished. A worker adds the tiles
//                 it ran when it finds no more to claim (or before it
//                 returns). The worker whose addition finishes the region's
//                 last tile advances: it skips empty regions, resets the
//                 retired word, publishes the next region through the claim
//                 words, and sets the desired worker count. No worker waits
//                 at a barrier. A worker only adds tiles it ran, and a
//                 region cannot end while one of its tiles has not been
//                 added, so additions never land in a later region.
//
// Memory ordering: a tile's writes are released by its retire, acquired by
// the worker that retires the region, and released again with the next
// region's claim words, so every tile of region k + 1 sees every write of
// region k.
//
// Fast paths: a context for one worker runs the whole recording in its
// first drain call, walking the blocks, with no atomic read-modify-writes.
// So does a context whose every region has a single tile (nothing could
// run in parallel): the first worker to arrive takes it with one exchange.
//
// Failure: the first failure (a kernel returning non-zero: INTERNAL
// "kernel 'k' (library 'l') failed in workgroup (x, y, z) with code N", the
// wording of inline dispatch) wins; tiles not yet started are skipped and no
// later region runs. weft_block_processor_consume_status returns it once
// the context completed.
//
// Threading: drain may be called concurrently by any number of threads,
// each with a distinct |worker_index| below the context's worker count.
// desired_workers and is_completed may be read from any thread. The context
// must not be deinitialized while any drain call is still running on it
// (the caller tracks drainers: two-phase completion).
#ifndef WEFT_DRIVERS_LOCAL_TASK_BLOCK_PROCESSOR_H_
#define WEFT_DRIVERS_LOCAL_TASK_BLOCK_PROCESSOR_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drivers/local_task/block_isa.h"
#include "weft/allocator.h"
#include "weft/buffer.h"
#include "weft/status.h"

// Tiles one drain call runs at most before it returns DID_WORK, so a worker
// comes back to its scheduler regularly.
#define WEFT_BLOCK_PROCESSOR_DRAIN_TILE_BUDGET 64u
// When a dispatch leaves its tile size to the submission: tiles per worker
// aimed at (enough to balance uneven workers, few enough to keep claiming
// cheap).
#define WEFT_BLOCK_PROCESSOR_DEFAULT_TILES_PER_WORKER 4u

typedef struct weft_block_processor_context_t weft_block_processor_context_t;

typedef enum weft_block_drain_result_e {
  // Ran at least one tile (or advanced a region): call again soon.
  WEFT_BLOCK_DRAIN_DID_WORK = 0,
  // Nothing to claim right now: every tile of the current region is taken
  // and some are still running. The next region opens when the last one
  // retires; the region_ready callback and desired_workers report it.
  WEFT_BLOCK_DRAIN_NO_WORK = 1,
  // The recording finished (or failed, or never had work). Every later
  // call returns this too.
  WEFT_BLOCK_DRAIN_COMPLETED = 2,
} weft_block_drain_result_t;

typedef enum weft_block_processor_flag_bits_e {
  WEFT_BLOCK_PROCESSOR_FLAG_NONE = 0,
  // Never take the one-worker path for recordings whose regions have one
  // tile each (tests use it to exercise region transitions).
  WEFT_BLOCK_PROCESSOR_FLAG_NO_EXCLUSIVE = 1u << 0,
} weft_block_processor_flag_bits_t;
typedef uint32_t weft_block_processor_flags_t;

// Called by the worker that opened a region other than the first, after
// publishing it, with the region's desired worker count.
typedef void (*weft_block_region_ready_fn_t)(void* user_data,
                                             uint32_t desired_workers);

// Tests only: called by a worker that holds no unretired tiles between
// reading the claim word (|epoch|, |tile|) and trying to claim that tile.
typedef void (*weft_block_claim_hook_fn_t)(void* user_data,
                                           uint32_t worker_index,
                                           uint32_t epoch, uint32_t tile);

typedef struct weft_block_processor_params_t {
  // Workers that may drain the context (>= 1); worker indices are below it.
  uint32_t worker_count;
  // Drainers the tile layout plans for (tiles, lanes, desired workers):
  // those that can run at once, when fewer than |worker_count| (0: all).
  uint32_t layout_worker_count;
  // May be NULL (each worker's seat is its index). Otherwise |worker_count|
  // entries: the seat of each worker index, which picks the claim lane it
  // starts on (seat % lanes). Workers that drain at once should hold
  // distinct seats: each then runs the same tiles from one dispatch to the
  // next instead of taking turns on a shared lane. Read during drains: it
  // must outlive the context.
  const uint32_t* seats;
  // Dispatch tiles per worker when the recording left the tile size open
  // (0: WEFT_BLOCK_PROCESSOR_DEFAULT_TILES_PER_WORKER).
  uint32_t tiles_per_worker;
  weft_block_processor_flags_t flags;
  // Prefixes messages (NULL: "queue_execute").
  const char* what;
  // May be NULL.
  weft_block_region_ready_fn_t region_ready;
  void* region_ready_user_data;
  // May be NULL (always, outside tests).
  weft_block_claim_hook_fn_t claim_hook;
  void* claim_hook_user_data;
  // May be NULL. Where the command-buffer command behind a failure goes:
  // the dispatch whose kernel failed, or the first command using a binding
  // that could not be mapped (written by initialize, or by the drain that
  // records the failure; read once the context completed). Left alone when
  // no failure has a command (a one-dispatch recording's mapping).
  uint32_t* failed_command;
} weft_block_processor_params_t;

// Bytes of storage weft_block_processor_context_initialize needs for
// |recording| (any alignment: the size includes the slack to align).
size_t weft_block_processor_context_storage_size(
    const weft_block_recording_t* recording);

// Starts a submission of |recording| in caller |storage| (|storage_size|
// bytes, e.g. from an arena), allocating nothing: resolves every fixup
// (mapping binding-table entries and late buffers, which retains them until
// deinitialize), computes the tile layout and opens the first region with
// work. |binding_table| is only read during the call.
//
// Errors (nothing stays mapped, |*out_context| is NULL): OUT_OF_RANGE when
// the table lacks a slot the recording uses or a range does not fit its
// entry; INVALID_ARGUMENT when a used entry has no buffer, a whole-buffer
// copy's two sides differ in length, or |params| are invalid;
// FAILED_PRECONDITION from a transient buffer without memory;
// RESOURCE_EXHAUSTED when |storage_size| is too small or a region has more
// than 2^31 tiles. Messages start with |params->what|.
weft_status_t weft_block_processor_context_initialize(
    const weft_block_recording_t* recording, weft_binding_table_t binding_table,
    const weft_block_processor_params_t* params, void* storage,
    size_t storage_size, weft_block_processor_context_t** out_context);

// Ends the mappings made by initialize. No drain call may be running. The
// storage is the caller's again afterwards. NULL is a no-op.
void weft_block_processor_context_deinitialize(
    weft_block_processor_context_t* context);

// Same as initialize with storage taken from |allocator| (kept to free it).
weft_status_t weft_block_processor_context_create(
    const weft_block_recording_t* recording, weft_binding_table_t binding_table,
    const weft_block_processor_params_t* params, weft_allocator_t allocator,
    weft_block_processor_context_t** out_context);

// Deinitializes and frees a context made by create. NULL is a no-op.
void weft_block_processor_context_free(weft_block_processor_context_t* context);

// Runs tiles on behalf of worker |worker_index| (< the worker count; the
// kernels' processor id) with |scratch| as the kernels' local memory
// (|scratch_size| bytes; at least the recording's max_local_memory_size, or
// dispatches needing more fail with RESOURCE_EXHAUSTED). Never blocks:
// returns after at most WEFT_BLOCK_PROCESSOR_DRAIN_TILE_BUDGET tiles, when
// nothing is left to claim, or when the recording completed.
weft_block_drain_result_t weft_block_processor_drain(
    weft_block_processor_context_t* context, uint32_t worker_index,
    void* scratch, size_t scratch_size);

// Workers the current region can keep busy: min(its tiles, worker count);
// 1 on the one-worker paths; 0 once completed. Any thread.
uint32_t weft_block_processor_desired_workers(
    const weft_block_processor_context_t* context);

// True once every region ran (or the recording failed). Any thread; a
// true result acquires every write the recording made.
bool weft_block_processor_is_completed(
    const weft_block_processor_context_t* context);

// Fails the submission with |status| (consumed; OK means a bare CANCELLED)
// unless it already failed:
// tiles not yet started are skipped and no later region opens, so the
// drains still running reach COMPLETED promptly (cancellation, shutdown).
// Workers must keep draining until then. Any thread.
void weft_block_processor_abort(weft_block_processor_context_t* context,
                                weft_status_t status);

// Returns the first failure (owned by the caller) or OK, once; later calls
// return OK. Call after completion.
weft_status_t weft_block_processor_consume_status(
    weft_block_processor_context_t* context);

// Runs |recording| to completion on the calling thread as worker 0 (a
// one-worker context in |storage|, or allocated from |allocator| when
// |storage| is NULL or too small) and returns its status.
weft_status_t weft_block_processor_run(const weft_block_recording_t* recording,
                                       weft_binding_table_t binding_table,
                                       void* scratch, size_t scratch_size,
                                       void* storage, size_t storage_size,
                                       weft_allocator_t allocator);

#endif  // WEFT_DRIVERS_LOCAL_TASK_BLOCK_PROCESSOR_H_
