// weft: local-task operation records and their pool (see local_task_op.h).
#include "drivers/local_task/local_task_op.h"

#include <inttypes.h>
#include <string.h>

#include "hal/resource.h"

static const char* const kWeftLocalTaskOpNames[] = {
    "queue_alloca",  "queue_dealloca", "queue_fill",      "queue_update",
    "queue_copy",    "queue_read",     "queue_write",     "queue_dispatch",
    "queue_execute", "queue_barrier",  "queue_host_call",
};
_Static_assert(sizeof(kWeftLocalTaskOpNames) /
                       sizeof(kWeftLocalTaskOpNames[0]) ==
                   WEFT_LOCAL_TASK_OP_TYPE_COUNT_,
               "one name per op type");

const char* weft_local_task_op_type_name(weft_local_task_op_type_t type) {
  return (unsigned)type < WEFT_LOCAL_TASK_OP_TYPE_COUNT_
             ? kWeftLocalTaskOpNames[type]
             : "queue_unknown";
}

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

// Retains (|retain| true) or releases every object |args| names.
static void weft_local_task_op_args_reference(
    const weft_local_task_op_args_t* args, bool retain) {
  void* objects[3] = {NULL, NULL, NULL};
  const weft_buffer_binding_t* bindings = NULL;
  uint32_t binding_count = 0;
  switch (args->type) {
    case WEFT_LOCAL_TASK_OP_ALLOCA:
    case WEFT_LOCAL_TASK_OP_DEALLOCA:
      objects[0] = args->transient.buffer;
      break;
    case WEFT_LOCAL_TASK_OP_FILL:
      objects[0] = args->fill.target;
      break;
    case WEFT_LOCAL_TASK_OP_UPDATE:
      objects[0] = args->update.target;
      break;
    case WEFT_LOCAL_TASK_OP_COPY:
      objects[0] = args->copy.source;
      objects[1] = args->copy.target;
      break;
    case WEFT_LOCAL_TASK_OP_READ:
    case WEFT_LOCAL_TASK_OP_WRITE:
      objects[0] = args->file.file;
      objects[1] = args->file.buffer;
      break;
    case WEFT_LOCAL_TASK_OP_DISPATCH:
      // The op's one-dispatch recording holds the references.
      break;
    case WEFT_LOCAL_TASK_OP_EXECUTE:
      objects[0] = args->execute.command_buffer;
      bindings = args->execute.binding_table.bindings;
      binding_count = args->execute.binding_table.count;
      break;
    default:
      break;
  }
  // Every HAL object starts with a weft_resource_t (NULL is a no-op).
  for (uint32_t i = 0; i < binding_count; ++i) {
    if (retain) {
      weft_resource_retain(bindings[i].buffer);
    } else {
      weft_resource_release(bindings[i].buffer);
    }
  }
  for (size_t i = 0; i < sizeof(objects) / sizeof(objects[0]); ++i) {
    if (retain) {
      weft_resource_retain(objects[i]);
    } else {
      weft_resource_release(objects[i]);
    }
  }
}

// Copies the arrays and bytes |op->args| borrows into the record.
static weft_status_t weft_local_task_op_copy_extra(weft_local_task_op_t* op) {
  weft_status_t status = WEFT_OK;
  weft_local_task_op_args_t* args = &op->args;
  void* storage = NULL;
  switch (args->type) {
    case WEFT_LOCAL_TASK_OP_UPDATE:
      if (args->update.length > SIZE_MAX / 2) {
        status = WEFT_STATUS(RESOURCE_EXHAUSTED,
                             "queue_update: %" PRIu64
                             " bytes of host data cannot be copied",
                             (uint64_t)args->update.length);
      } else {
        status = weft_local_task_op_allocate(op, (size_t)args->update.length,
                                             &storage);
      }
      if (weft_status_is_ok(status)) {
        if (args->update.length) {
          memcpy(storage, args->update.source, (size_t)args->update.length);
        }
        args->update.source = storage;
      }
      break;
    case WEFT_LOCAL_TASK_OP_DISPATCH: {
      // Compiled now, on the submitting thread; the bindings become late
      // fixups mapped when the op runs (transient buffers work).
      size_t size = weft_block_recording_dispatch_storage_size(
          args->dispatch.constant_count, args->dispatch.binding_count);
      status = weft_local_task_op_allocate(op, size, &storage);
      if (weft_status_is_ok(status)) {
        status = weft_block_recording_initialize_dispatch(
            args->dispatch.executable, args->dispatch.kernel_ordinal,
            args->dispatch.workgroup_count, args->dispatch.constant_count,
            args->dispatch.constants, args->dispatch.binding_count,
            args->dispatch.bindings, /*dispatch_tile_size=*/0, storage, size,
            &op->compute.dispatch_recording);
      }
      if (weft_status_is_ok(status)) {
        op->compute.recording = op->compute.dispatch_recording;
      }
      // Borrowed from the caller: not kept.
      memset(&args->dispatch, 0, sizeof(args->dispatch));
      break;
    }
    case WEFT_LOCAL_TASK_OP_EXECUTE: {
      size_t size = (size_t)args->execute.binding_table.count *
                    sizeof(weft_buffer_binding_t);
      status = weft_local_task_op_allocate(op, size, &storage);
      if (weft_status_is_ok(status)) {
        if (size) memcpy(storage, args->execute.binding_table.bindings, size);
        args->execute.binding_table.bindings =
            (const weft_buffer_binding_t*)storage;
      }
      break;
    }
    default:
      break;
  }
  return status;
}

// True when |list| names |semaphore|.
static bool weft_local_task_list_contains(weft_semaphore_list_t list,
                                          const weft_semaphore_t* semaphore) {
  bool found = false;
  for (uint32_t i = 0; !found && i < list.count; ++i) {
    found = list.semaphores[i] == semaphore;
  }
  return found;
}

weft_status_t weft_local_task_op_capture(weft_local_task_op_t* op,
                                         const weft_local_task_op_args_t* args,
                                         weft_semaphore_list_t wait_list,
                                         weft_semaphore_list_t signal_list,
                                         bool park) {
  op->args = *args;
  // The waits are kept even when reached: errors name them.
  uint32_t wait_count = wait_list.count;
  uint32_t entry_count = wait_count + signal_list.count;
  // Layout: values | semaphores | wait set. Counts are uint32, so these
  // sizes cannot overflow a size_t.
  size_t values_size =
      weft_local_task_align16((size_t)entry_count * sizeof(uint64_t));
  size_t semaphores_size =
      weft_local_task_align16((size_t)entry_count * sizeof(weft_semaphore_t*));
  size_t wait_set_size = park ? weft_wait_set_storage_size(wait_count) : 0;
  uint8_t* storage = NULL;
  weft_status_t status = weft_local_task_op_allocate(
      op, values_size + semaphores_size + wait_set_size, (void**)&storage);
  if (weft_status_is_ok(status)) {
    status = weft_local_task_op_copy_extra(op);
  }
  if (weft_status_is_ok(status) && storage) {
    uint64_t* values = (uint64_t*)storage;
    weft_semaphore_t** semaphores = (weft_semaphore_t**)(storage + values_size);
    op->wait_set =
        park ? (weft_wait_set_t*)(storage + values_size + semaphores_size)
             : NULL;
    op->wait_list.count = wait_count;
    op->wait_list.semaphores = semaphores;
    op->wait_list.values = values;
    op->signal_list.count = signal_list.count;
    op->signal_list.semaphores = semaphores + wait_count;
    op->signal_list.values = values + wait_count;
    for (uint32_t i = 0; i < entry_count; ++i) {
      bool is_wait = i < wait_count;
      uint32_t j = is_wait ? i : i - wait_count;
      semaphores[i] =
          is_wait ? wait_list.semaphores[j] : signal_list.semaphores[j];
      values[i] = is_wait ? wait_list.values[j] : signal_list.values[j];
      if (is_wait && i < 64 &&
          weft_local_task_list_contains(signal_list, semaphores[i])) {
        // The signal list's reference keeps it alive as long as ours would
        // (a chain waits on and signals one semaphore): one line fewer
        // pulled between the submitter and the worker per op.
        op->shared_waits |= 1ull << i;
      } else {
        weft_semaphore_retain(semaphores[i]);
      }
    }
  }
  if (weft_status_is_ok(status)) {
    weft_local_task_op_args_reference(&op->args, /*retain=*/true);
  } else {
    // Nothing was retained; the arguments are no longer meaningful.
    memset(&op->args, 0, sizeof(op->args));
    op->args.type = args->type;
    status = weft_status_annotate(status, "while queueing %s",
                                  weft_local_task_op_type_name(args->type));
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
  weft_local_task_op_args_reference(&op->args, /*retain=*/false);
  uint32_t entry_count = op->wait_list.count + op->signal_list.count;
  // The wait and signal arrays are one block (see capture).
  for (uint32_t i = 0; i < entry_count; ++i) {
    if (i >= 64 || !(op->shared_waits & (1ull << i))) {
      weft_semaphore_release(op->wait_list.semaphores[i]);
    }
  }
  weft_local_task_op_recycle(pool, op);
}
