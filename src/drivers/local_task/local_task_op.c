// weft: local-task operation records and their pool (see local_task_op.h).
#include "drivers/local_task/local_task_op.h"

#include <inttypes.h>
#include <string.h>

#include "hal/resource.h"

// Rounds |value| up to a multiple of 16.
static size_t weft_local_task_align16(size_t value) {
  return (value + 15) & ~(size_t)15;
}

// Bytes of a record's block after the record itself: enough for the wait
// sets and lists of up to three waits and signals, or for a one-dispatch
// recording of up to three bindings, without spilling.
#define WEFT_LOCAL_TASK_OP_INLINE_STORAGE 512
// Bytes per spill block: a dispatch's processor context, a command buffer's
// for a few dozen commands. Larger spills are allocated on their own.
#define WEFT_LOCAL_TASK_OP_SPILL_BLOCK_SIZE 4096

// Offset of the inline storage within a record's block.
#define WEFT_LOCAL_TASK_OP_HEADER_SIZE \
  ((sizeof(weft_local_task_op_t) + 15) & ~(size_t)15)

//===----------------------------------------------------------------------===//
// Pool
//===----------------------------------------------------------------------===//

void weft_local_task_op_pool_initialize(weft_allocator_t allocator,
                                        weft_local_task_op_pool_t* out_pool) {
  memset(out_pool, 0, sizeof(*out_pool));
  weft_block_pool_initialize(
      WEFT_LOCAL_TASK_OP_HEADER_SIZE + WEFT_LOCAL_TASK_OP_INLINE_STORAGE,
      allocator, &out_pool->block_pool);
  weft_block_pool_initialize(WEFT_LOCAL_TASK_OP_SPILL_BLOCK_SIZE, allocator,
                             &out_pool->spill_pool);
  weft_slim_mutex_initialize(&out_pool->cache_mutex);
  weft_slim_mutex_initialize(&out_pool->park_mutex);
  out_pool->cache = NULL;
  out_pool->all_head = NULL;
  weft_mpsc_list_initialize(&out_pool->recycled);
  atomic_init(&out_pool->taken_count, 0);
  atomic_init(&out_pool->retired_count, 0);
  atomic_init(&out_pool->readying_count, 0);
}

int64_t weft_local_task_op_pool_live_count(weft_local_task_op_pool_t* pool) {
  uint64_t retired =
      weft_atomic_load(&pool->retired_count, memory_order_relaxed);
  uint64_t taken = weft_atomic_load(&pool->taken_count, memory_order_relaxed);
  return (int64_t)(taken - retired);
}

bool weft_local_task_op_pool_is_idle(weft_local_task_op_pool_t* pool) {
  // Retired before taken: a count read later can only be larger, so a
  // retirement racing with these loads reads as "not idle", never the
  // reverse.
  uint64_t retired =
      weft_atomic_load(&pool->retired_count, memory_order_seq_cst);
  uint64_t taken = weft_atomic_load(&pool->taken_count, memory_order_seq_cst);
  return taken == retired;
}

bool weft_local_task_op_pool_is_readying(weft_local_task_op_pool_t* pool) {
  // Seq_cst: pairs with the ready callback's decrement, its last access.
  return weft_atomic_load(&pool->readying_count, memory_order_seq_cst) != 0;
}

void weft_local_task_op_pool_deinitialize(weft_local_task_op_pool_t* pool) {
  weft_local_task_op_t* op = pool->all_head;
  pool->all_head = NULL;
  while (op) {
    weft_local_task_op_t* next = op->all_next;
    weft_block_pool_release(&pool->block_pool, op->block);
    op = next;
  }
  pool->cache = NULL;
  weft_slim_mutex_deinitialize(&pool->cache_mutex);
  weft_slim_mutex_deinitialize(&pool->park_mutex);
  weft_block_pool_deinitialize(&pool->block_pool);
  weft_block_pool_deinitialize(&pool->spill_pool);
}

weft_status_t weft_local_task_op_acquire(weft_local_task_op_pool_t* pool,
                                         weft_local_task_op_t** out_op) {
  weft_status_t status = WEFT_OK;
  weft_slim_mutex_lock(&pool->cache_mutex);
  weft_mpsc_entry_t* entry = pool->cache;
  // Only the holder of |cache_mutex| pops |recycled|: one consumer. A load
  // first: an empty list is not worth an exchange on a line retirers write.
  if (!entry && !weft_mpsc_list_is_empty(&pool->recycled)) {
    entry = weft_mpsc_list_pop_all(&pool->recycled);
  }
  if (entry) pool->cache = entry->next;
  weft_slim_mutex_unlock(&pool->cache_mutex);

  weft_local_task_op_t* op = NULL;
  weft_arena_block_t* block = NULL;
  if (entry) {
    op = weft_container_of(entry, weft_local_task_op_t, entry);
    block = op->block;
  } else {
    status = weft_block_pool_acquire(&pool->block_pool, &block);
    if (weft_status_is_ok(status)) {
      op = (weft_local_task_op_t*)weft_arena_block_data(block);
      memset(op, 0, sizeof(*op));
      atomic_init(&op->park_state, 0);
      op->block = block;
      // Published to dump_pending and the sweep, which walk every record.
      weft_slim_mutex_lock(&pool->cache_mutex);
      op->all_next = pool->all_head;
      pool->all_head = op;
      weft_slim_mutex_unlock(&pool->cache_mutex);
    } else {
      status = weft_status_annotate(status, "allocating an operation record");
    }
  }
  if (op) {
    // Everything but the record's identity (which walkers may read now).
    size_t reset_offset = offsetof(weft_local_task_op_t, entry);
    memset((uint8_t*)op + reset_offset, 0, sizeof(*op) - reset_offset);
    weft_arena_initialize(&pool->spill_pool, &op->arena);
    // Relaxed: no op is taken once shutdown started (the device's last
    // reference is gone), so shutdown reads a settled count.
    weft_atomic_fetch_add(&pool->taken_count, 1, memory_order_relaxed);
  }
  *out_op = op;
  return status;
}

// Pushes |op| on the recycled list and counts it retired.
static void weft_local_task_op_recycle(weft_local_task_op_pool_t* pool,
                                       weft_local_task_op_t* op) {
  weft_arena_reset(&op->arena);
  weft_mpsc_list_push(&pool->recycled, &op->entry);
  // Seq_cst: the shutdown handshake (the retirer's increment then its load
  // of shutting_down, against destroy's store then its loads of the
  // counts).
  weft_atomic_fetch_add(&pool->retired_count, 1, memory_order_seq_cst);
}

void weft_local_task_op_discard(weft_local_task_op_pool_t* pool,
                                weft_local_task_op_t* op) {
  if (op) weft_local_task_op_recycle(pool, op);
}

weft_status_t weft_local_task_op_allocate(weft_local_task_op_t* op,
                                          size_t byte_length, void** out_ptr) {
  weft_status_t status = WEFT_OK;
  size_t aligned_length = weft_local_task_align16(byte_length);
  if (byte_length == 0) {
    *out_ptr = NULL;
  } else if (aligned_length >= byte_length &&
             aligned_length <=
                 WEFT_LOCAL_TASK_OP_INLINE_STORAGE - op->inline_used) {
    uint8_t* ptr =
        (uint8_t*)op + WEFT_LOCAL_TASK_OP_HEADER_SIZE + op->inline_used;
    op->inline_used += aligned_length;
    memset(ptr, 0, byte_length);
    *out_ptr = ptr;
  } else {
    status = weft_arena_allocate(&op->arena, byte_length, out_ptr);
  }
  return status;
}

//===----------------------------------------------------------------------===//
// Capture
//===----------------------------------------------------------------------===//

weft_status_t weft_local_task_op_capture(weft_local_task_op_t* op,
                                         const weft_queue_op_t* source,
                                         bool park) {
  // A dispatch is compiled now, on the submitting thread, into a recording
  // that holds its own references; the bindings become late fixups mapped
  // when the op runs (transient buffers work).
  const bool is_dispatch = source->kind == WEFT_QUEUE_OP_DISPATCH;
  const weft_queue_op_capture_flags_t flags =
      is_dispatch ? WEFT_QUEUE_OP_CAPTURE_LISTS_ONLY
                  : WEFT_QUEUE_OP_CAPTURE_ALL;
  size_t capture_size = 0;
  weft_status_t status =
      weft_queue_op_capture_size(source, flags, &capture_size);
  const size_t wait_set_size =
      park ? weft_wait_set_storage_size(source->wait_list.count) : 0;
  uint8_t* storage = NULL;
  if (weft_status_is_ok(status)) {
    status = weft_local_task_op_allocate(
        op, weft_local_task_align16(capture_size) + wait_set_size,
        (void**)&storage);
  }
  if (weft_status_is_ok(status) && is_dispatch) {
    size_t size = weft_block_recording_dispatch_storage_size(
        source->dispatch.constant_count, source->dispatch.binding_count);
    void* recording_storage = NULL;
    status = weft_local_task_op_allocate(op, size, &recording_storage);
    if (weft_status_is_ok(status)) {
      status = weft_block_recording_initialize_dispatch(
          source->dispatch.executable, source->dispatch.kernel_ordinal,
          source->dispatch.workgroup_count, source->dispatch.constant_count,
          source->dispatch.constants, source->dispatch.binding_count,
          source->dispatch.bindings, /*dispatch_tile_size=*/0,
          recording_storage, size, &op->compute.dispatch_recording);
    }
    if (weft_status_is_ok(status)) {
      op->compute.recording = op->compute.dispatch_recording;
    }
  }
  if (weft_status_is_ok(status)) {
    // |storage| is NULL only when there is nothing to copy.
    weft_queue_op_capture(source, flags, storage, &op->base);
    op->base.queue_index = op->queue->index;
    op->wait_set = park ? (weft_wait_set_t*)(storage + weft_local_task_align16(
                                                           capture_size))
                        : NULL;
  } else {
    // Nothing was retained.
    op->base.kind = source->kind;
    status = weft_status_annotate(status, "while queueing %s",
                                  weft_queue_op_kind_name(source->kind));
  }
  return status;
}

void weft_local_task_op_retire(weft_local_task_op_pool_t* pool,
                               weft_local_task_op_t* op) {
  weft_block_processor_context_deinitialize(op->compute.context);
  weft_block_recording_deinitialize(op->compute.dispatch_recording);
  weft_status_free(op->compute.status);
  weft_status_free(op->wait_status);
  op->wait_status = WEFT_OK;
  weft_queue_op_release(&op->base);
  weft_local_task_op_recycle(pool, op);
}
