// weft vulkan driver: the queue (see vulkan_device.h).
#include <inttypes.h>
#include <string.h>

#include "drivers/vulkan/vulkan_buffer.h"
#include "drivers/vulkan/vulkan_command_buffer.h"
#include "drivers/vulkan/vulkan_device.h"
#include "drivers/vulkan/vulkan_dispatch.h"
#include "drivers/vulkan/vulkan_semaphore.h"
#include "hal/command_buffer_impl.h"
#include "hal/gpu/op_result.h"
#include "hal/queue_completion.h"
#include "hal/queue_trace.h"

// A host-visible buffer an op copies from, mapped for its life, in an
// op's list or a free list of the device's.
struct weft_vulkan_staging_t {
  weft_vulkan_staging_t* next;
  VkBuffer buffer;
  VkDeviceMemory memory;
  void* mapping;
  VkDeviceSize size;
  // Its size class, or -1 for one larger than every class.
  int size_class;
};

// An op's driver bytes in its scheduler record.

struct weft_vulkan_op_t {
  weft_vulkan_device_t* device;
  weft_vulkan_op_t* next;  // in a FIFO
  VkCommandBuffer command_buffer;
  // The |completion| value its submission signals.
  uint64_t sequence;
  // Bit i: signal i (< 64) was submitted to the GPU, which moves it.
  uint64_t published;
  // Bit i: wait i (< 64) went to the GPU unreached: the op ran behind it,
  // and learns at completion whether it failed upstream.
  uint64_t gpu_waits;
  // Some wait was on a semaphore the GPU cannot wait on (met on the host):
  // the op's commands start behind a full memory barrier, as nothing in
  // the submission orders them after that producer's writes.
  bool host_waits;
  // Host-visible buffers unaligned fills and large or unaligned updates
  // copy from, freed when it retires.
  weft_vulkan_staging_t* staging;
  // The status slots its dispatches report in (the device's ring).
  uint32_t status_slot;
  uint32_t status_slot_count;
  // Where the commands being recorded report: the buffer and the offset
  // of their first slot (the device's ring, or a recording's own).
  VkBuffer status_buffer;
  VkDeviceSize status_offset;
  // An EXECUTE that runs its command buffer's recording (claimed; its
  // dispatches report in the recording's slots), or NULL.
  weft_vulkan_recording_t* recording;
};

#define WEFT_VULKAN_OP_SIZE ((sizeof(weft_vulkan_op_t) + 15) & ~(size_t)15)

static weft_scheduled_op_t* weft_vulkan_op_record(weft_vulkan_op_t* op) {
  return weft_scheduled_op_from_driver(op, WEFT_VULKAN_OP_SIZE);
}

static weft_queue_op_t* weft_vulkan_op_base(weft_vulkan_op_t* op) {
  return &weft_vulkan_op_record(op)->base;
}

// The queue |op| runs on (chosen at issue).
static weft_vulkan_queue_t* weft_vulkan_op_queue(weft_vulkan_op_t* op) {
  return &op->device->queues[weft_vulkan_op_base(op)->queue_index];
}

static void weft_vulkan_fifo_push(weft_vulkan_op_fifo_t* fifo,
                                  weft_vulkan_op_t* op) {
  op->next = NULL;
  if (fifo->tail) {
    fifo->tail->next = op;
  } else {
    fifo->head = op;
  }
  fifo->tail = op;
}

// True for the file transfers (run on the transfer thread).
static bool weft_vulkan_op_is_transfer(weft_queue_op_kind_t kind) {
  return kind == WEFT_QUEUE_OP_READ || kind == WEFT_QUEUE_OP_WRITE;
}

// True for the ops the host runs once their waits are reached on the host:
// host calls, alloca and dealloca (on the completion thread) and file
// transfers (on the transfer thread).
static bool weft_vulkan_op_is_host(weft_queue_op_kind_t kind) {
  return kind == WEFT_QUEUE_OP_HOST_CALL || kind == WEFT_QUEUE_OP_ALLOCA ||
         kind == WEFT_QUEUE_OP_DEALLOCA || weft_vulkan_op_is_transfer(kind);
}

//===----------------------------------------------------------------------===//
// Waking the completion thread
//===----------------------------------------------------------------------===//

// Moves |wake| if the completion thread is waiting. Called with the mutex
// held.
static void weft_vulkan_device_wake_locked(weft_vulkan_device_t* device) {
  if (!device->completion_waiting) return;
  device->completion_waiting = false;
  weft_vulkan_context_t* context = device->context;
  const VkSemaphoreSignalInfo signal_info = {
      .sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO,
      .semaphore = device->wake,
      .value = ++device->wake_value,
  };
  weft_status_ignore(WEFT_VK_CALL(
      &context->vk, vkSignalSemaphore(context->device, &signal_info)));
}

//===----------------------------------------------------------------------===//
// Retiring
//===----------------------------------------------------------------------===//

// Gives |op|'s command buffer back to the device's free list. Kept for
// the next op: the pool stays at its high-water mark, and a burst's worth
// of command buffers is recorded again, not remade. Called with the mutex
// held.
static void weft_vulkan_op_return_command_buffer_locked(weft_vulkan_op_t* op) {
  if (!op->command_buffer) return;
  weft_vulkan_device_t* device = op->device;
  weft_vulkan_context_t* context = device->context;
  context->vk.vkResetCommandBuffer(op->command_buffer, 0);
  if (device->free_command_buffer_count ==
      device->free_command_buffer_capacity) {
    const uint32_t capacity = device->free_command_buffer_capacity * 2;
    VkCommandBuffer* grown = device->free_command_buffers;
    if (weft_status_is_ok(weft_allocator_realloc(
            device->base.host_allocator, capacity * sizeof(*grown),
            (void**)&grown))) {
      device->free_command_buffers = grown;
      device->free_command_buffer_capacity = capacity;
    }
  }
  if (device->free_command_buffer_count <
      device->free_command_buffer_capacity) {
    device->free_command_buffers[device->free_command_buffer_count++] =
        op->command_buffer;
  } else {
    context->vk.vkFreeCommandBuffers(context->device, device->command_pool, 1,
                                     &op->command_buffer);
  }
  op->command_buffer = VK_NULL_HANDLE;
}

// Frees a staging buffer (its memory unmaps with it).
static void weft_vulkan_staging_destroy(weft_vulkan_device_t* device,
                                        weft_vulkan_staging_t* staging) {
  weft_vulkan_context_t* context = device->context;
  if (staging->buffer) {
    context->vk.vkDestroyBuffer(context->device, staging->buffer, NULL);
  }
  if (staging->memory) {
    context->vk.vkFreeMemory(context->device, staging->memory, NULL);
  }
  weft_allocator_free(device->base.host_allocator, staging);
}

// Keeps |list|'s staging buffers for later ops while the idle ones stay
// within the limit; returns those that do not fit, for the caller to
// destroy outside the lock.
static weft_vulkan_staging_t* weft_vulkan_staging_keep_locked(
    weft_vulkan_device_t* device, weft_vulkan_staging_t* list) {
  weft_vulkan_staging_t* excess = NULL;
  while (list) {
    weft_vulkan_staging_t* staging = list;
    list = staging->next;
    if (staging->size_class >= 0 &&
        device->staging_idle_bytes + staging->size <=
            WEFT_VULKAN_STAGING_IDLE_LIMIT) {
      staging->next = device->staging_free[staging->size_class];
      device->staging_free[staging->size_class] = staging;
      device->staging_idle_bytes += staging->size;
    } else {
      staging->next = excess;
      excess = staging;
    }
  }
  return excess;
}

// Frees what the op holds of the device and retires its record.
static void weft_vulkan_op_retire(weft_vulkan_op_t* op) {
  weft_vulkan_device_t* device = op->device;
  weft_vulkan_staging_t* excess = NULL;
  if (op->command_buffer || op->staging) {
    weft_slim_mutex_lock(&device->mutex);
    excess = weft_vulkan_staging_keep_locked(device, op->staging);
    op->staging = NULL;
    if (op->command_buffer) weft_vulkan_op_return_command_buffer_locked(op);
    weft_slim_mutex_unlock(&device->mutex);
  }
  while (excess) {
    weft_vulkan_staging_t* staging = excess;
    excess = staging->next;
    weft_vulkan_staging_destroy(device, staging);
  }
  weft_queue_scheduler_retire(weft_vulkan_op_record(op));
}

//===----------------------------------------------------------------------===//
// Recording and submitting
//===----------------------------------------------------------------------===//

// Host-visible staging of at least |length| bytes for |op| (given back
// when it retires), from the device's free list of its size class or new;
// returns the buffer and its mapping. Called while recording, with the
// device mutex held.
static weft_status_t weft_vulkan_op_make_staging_locked(weft_vulkan_op_t* op,
                                                        VkDeviceSize length,
                                                        VkBuffer* out_buffer,
                                                        void** out_mapping) {
  weft_vulkan_device_t* device = op->device;
  weft_vulkan_context_t* context = device->context;
  int size_class = 0;
  VkDeviceSize size = (VkDeviceSize)1 << WEFT_VULKAN_STAGING_MIN_SHIFT;
  while (size < length && size_class < WEFT_VULKAN_STAGING_CLASSES) {
    size <<= 1;
    ++size_class;
  }
  if (size_class == WEFT_VULKAN_STAGING_CLASSES) {
    size_class = -1;
    size = length;
  }
  weft_vulkan_staging_t* staging =
      size_class >= 0 ? device->staging_free[size_class] : NULL;
  weft_status_t status = WEFT_OK;
  if (staging) {
    device->staging_free[size_class] = staging->next;
    device->staging_idle_bytes -= staging->size;
  } else {
    status = weft_allocator_malloc(device->base.host_allocator,
                                   sizeof(*staging), (void**)&staging);
    if (!weft_status_is_ok(status)) return status;
    memset(staging, 0, sizeof(*staging));
    staging->size = size;
    staging->size_class = size_class;
    status = weft_vulkan_context_allocate_buffer(
        context, size, context->host_visible_type, &staging->buffer,
        &staging->memory);
    if (weft_status_is_ok(status)) {
      status = WEFT_VK_CALL(&context->vk,
                            vkMapMemory(context->device, staging->memory, 0,
                                        VK_WHOLE_SIZE, 0, &staging->mapping));
    }
    if (!weft_status_is_ok(status)) {
      weft_vulkan_staging_destroy(device, staging);
      return status;
    }
    ++device->staging_made;
  }
  staging->next = op->staging;
  op->staging = staging;
  *out_buffer = staging->buffer;
  *out_mapping = staging->mapping;
  return WEFT_OK;
}

// Records a fill of |target| (resolved) with a 1, 2 or 4-byte |pattern|.
static weft_status_t weft_vulkan_op_record_fill(weft_vulkan_op_t* op,
                                                weft_buffer_binding_t target,
                                                uint32_t pattern,
                                                uint32_t pattern_length) {
  if (target.length == 0) return WEFT_OK;
  weft_vulkan_symbols_t* vk = &op->device->context->vk;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
  weft_status_t status = weft_vulkan_buffer_resolve(
      target.buffer, target.offset, &buffer, &offset);
  if (!weft_status_is_ok(status)) return status;
  // The pattern repeated to four bytes (what vkCmdFillBuffer takes).
  uint8_t bytes[4];
  for (uint32_t i = 0; i < 4; ++i) {
    bytes[i] = ((const uint8_t*)&pattern)[i % pattern_length];
  }
  if (offset % 4 == 0 && target.length % 4 == 0) {
    uint32_t word = 0;
    memcpy(&word, bytes, 4);
    vk->vkCmdFillBuffer(op->command_buffer, buffer, offset, target.length,
                        word);
    return WEFT_OK;
  }
  // vkCmdFillBuffer needs 4-byte offsets and sizes: copy the pattern from
  // staging instead (copies take any alignment).
  VkBuffer staging = VK_NULL_HANDLE;
  uint8_t* mapping = NULL;
  status = weft_vulkan_op_make_staging_locked(op, target.length, &staging,
                                       (void**)&mapping);
  if (!weft_status_is_ok(status)) return status;
  for (weft_device_size_t i = 0; i < target.length; ++i) {
    mapping[i] = bytes[i % pattern_length];
  }
  const VkBufferCopy region = {0, offset, target.length};
  vk->vkCmdCopyBuffer(op->command_buffer, staging, buffer, 1, &region);
  return WEFT_OK;
}

// Records a write of |target.length| bytes from |source| into |target|.
static weft_status_t weft_vulkan_op_record_update(
    weft_vulkan_op_t* op, const void* source, weft_buffer_binding_t target) {
  if (target.length == 0) return WEFT_OK;
  weft_vulkan_symbols_t* vk = &op->device->context->vk;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
  weft_status_t status = weft_vulkan_buffer_resolve(
      target.buffer, target.offset, &buffer, &offset);
  if (!weft_status_is_ok(status)) return status;
  if (offset % 4 == 0 && target.length % 4 == 0 && target.length <= 65536) {
    // Small and aligned: the bytes travel in the command buffer, no
    // staging buffer to make and free.
    vk->vkCmdUpdateBuffer(op->command_buffer, buffer, offset, target.length,
                          source);
    return WEFT_OK;
  }
  VkBuffer staging = VK_NULL_HANDLE;
  void* mapping = NULL;
  status = weft_vulkan_op_make_staging_locked(op, target.length, &staging,
                                              &mapping);
  if (!weft_status_is_ok(status)) return status;
  memcpy(mapping, source, (size_t)target.length);
  const VkBufferCopy region = {0, offset, target.length};
  vk->vkCmdCopyBuffer(op->command_buffer, staging, buffer, 1, &region);
  return WEFT_OK;
}

// Records a copy between two resolved ranges of the same length.
static weft_status_t weft_vulkan_op_record_copy(weft_vulkan_op_t* op,
                                                weft_buffer_binding_t source,
                                                weft_buffer_binding_t target) {
  if (target.length == 0) return WEFT_OK;
  VkBuffer source_buffer = VK_NULL_HANDLE;
  VkBuffer target_buffer = VK_NULL_HANDLE;
  VkDeviceSize source_offset = 0;
  VkDeviceSize target_offset = 0;
  weft_status_t status = weft_vulkan_buffer_resolve(
      source.buffer, source.offset, &source_buffer, &source_offset);
  if (weft_status_is_ok(status)) {
    status = weft_vulkan_buffer_resolve(target.buffer, target.offset,
                                        &target_buffer, &target_offset);
  }
  if (!weft_status_is_ok(status)) return status;
  const VkBufferCopy region = {source_offset, target_offset, target.length};
  op->device->context->vk.vkCmdCopyBuffer(op->command_buffer, source_buffer,
                                          target_buffer, 1, &region);
  return WEFT_OK;
}

// Records a dispatch reporting in status slot |slot_index| of |op|'s.
static weft_status_t weft_vulkan_op_record_dispatch(
    weft_vulkan_op_t* op, uint32_t slot_index,
    const weft_executable_t* executable, uint32_t ordinal,
    const uint32_t workgroup_count[3], const uint32_t* constants,
    uint32_t binding_count,
    const weft_buffer_binding_t* bindings) {
  weft_vulkan_device_t* device = op->device;
  const weft_vulkan_status_slot_t slot = {
      .buffer = op->status_buffer,
      .offset = op->status_offset + slot_index * device->status_stride,
  };
  return weft_vulkan_record_dispatch(device->context, op->command_buffer,
                                     executable, ordinal, workgroup_count,
                                     constants, binding_count, bindings, slot);
}

// Every earlier command's writes reach every later command (a command
// buffer's barrier command).
static void weft_vulkan_op_record_barrier(weft_vulkan_op_t* op) {
  const VkMemoryBarrier barrier = {
      .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
      .srcAccessMask =
          VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT,
      .dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT |
                       VK_ACCESS_TRANSFER_WRITE_BIT |
                       VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT,
  };
  const VkPipelineStageFlags stages =
      VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
  op->device->context->vk.vkCmdPipelineBarrier(
      op->command_buffer, stages, stages, 0, 1, &barrier, 0, NULL, 0, NULL);
}

// Resolves a dispatch's bindings (direct or through |table|) into
// |out_bindings| (room for 64).
static weft_status_t weft_vulkan_resolve_bindings(
    uint32_t count, const weft_buffer_ref_t* refs, weft_binding_table_t table,
    const char* what, weft_buffer_binding_t* out_bindings) {
  if (count > 63) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "%s: %u bindings; weft binds at most 63", what, count);
  }
  for (uint32_t i = 0; i < count; ++i) {
    weft_status_t status =
        weft_command_buffer_resolve_ref(refs[i], table, what, &out_bindings[i]);
    if (!weft_status_is_ok(status)) return status;
  }
  return WEFT_OK;
}

// Records the commands of an EXECUTE's command buffer, its indirect
// references resolved against the op's binding table. A failure is
// annotated with the command it happened in.
static weft_status_t weft_vulkan_op_record_execute(weft_vulkan_op_t* op) {
  const weft_queue_op_t* base = weft_vulkan_op_base(op);
  const weft_command_buffer_t* command_buffer = base->execute.command_buffer;
  const weft_binding_table_t table = base->execute.binding_table;
  uint32_t count = 0;
  const weft_command_t* commands =
      weft_command_buffer_commands(command_buffer, &count);
  uint32_t dispatch_index = 0;
  static const char kWhat[] = "queue_execute";
  for (uint32_t i = 0; i < count; ++i) {
    const weft_command_t* command = &commands[i];
    weft_status_t status = WEFT_OK;
    weft_buffer_binding_t target = {0};
    switch (command->type) {
      case WEFT_COMMAND_TYPE_BARRIER:
        weft_vulkan_op_record_barrier(op);
        break;
      case WEFT_COMMAND_TYPE_FILL:
        status =
            weft_command_buffer_resolve_fill(&command->fill, table, kWhat,
                                             &target);
        if (weft_status_is_ok(status)) {
          status = weft_vulkan_op_record_fill(op, target,
                                              command->fill.pattern,
                                              command->fill.pattern_length);
        }
        break;
      case WEFT_COMMAND_TYPE_UPDATE:
        status = weft_command_buffer_resolve_ref(command->update.target, table,
                                                 kWhat, &target);
        if (weft_status_is_ok(status)) {
          status =
              weft_vulkan_op_record_update(op, command->update.source, target);
        }
        break;
      case WEFT_COMMAND_TYPE_COPY: {
        weft_buffer_binding_t source = {0};
        status = weft_command_buffer_resolve_copy(&command->copy, table, kWhat,
                                                  &source, &target);
        if (weft_status_is_ok(status)) {
          status = weft_vulkan_op_record_copy(op, source, target);
        }
        break;
      }
      case WEFT_COMMAND_TYPE_DISPATCH: {
        const weft_command_dispatch_t* dispatch = &command->dispatch;
        weft_buffer_binding_t bindings[64];
        status = weft_vulkan_resolve_bindings(dispatch->binding_count,
                                              dispatch->bindings, table, kWhat,
                                              bindings);
        if (weft_status_is_ok(status)) {
          status = weft_vulkan_op_record_dispatch(
              op, dispatch_index, dispatch->executable,
              dispatch->kernel_ordinal, dispatch->workgroup_count,
              dispatch->constants, dispatch->binding_count, bindings);
        }
        ++dispatch_index;
        break;
      }
    }
    if (!weft_status_is_ok(status)) {
      return weft_command_buffer_annotate_command(command_buffer, i, status);
    }
  }
  return WEFT_OK;
}

// Records |op|'s commands into its command buffer (begun), then the
// barrier that makes their writes visible to the host (mapped buffers and
// status slots) before its signal; later GPU ops see them through the
// semaphores.
static weft_status_t weft_vulkan_op_record_commands(weft_vulkan_op_t* op) {
  const weft_queue_op_t* base = weft_vulkan_op_base(op);
  weft_status_t status = WEFT_OK;
  if (op->host_waits) {
    const VkMemoryBarrier barrier = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
        .srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT,
        .dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT,
    };
    op->device->context->vk.vkCmdPipelineBarrier(
        op->command_buffer, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
        VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &barrier, 0, NULL, 0, NULL);
  }
  switch (base->kind) {
    case WEFT_QUEUE_OP_FILL:
      status = weft_vulkan_op_record_fill(
          op,
          (weft_buffer_binding_t){base->fill.target, base->fill.offset,
                                  base->fill.length},
          base->fill.pattern, base->fill.pattern_length);
      break;
    case WEFT_QUEUE_OP_UPDATE:
      status = weft_vulkan_op_record_update(
          op, base->update.source,
          (weft_buffer_binding_t){base->update.target, base->update.offset,
                                  base->update.length});
      break;
    case WEFT_QUEUE_OP_COPY:
      status = weft_vulkan_op_record_copy(
          op,
          (weft_buffer_binding_t){base->copy.source, base->copy.source_offset,
                                  base->copy.length},
          (weft_buffer_binding_t){base->copy.target, base->copy.target_offset,
                                  base->copy.length});
      break;
    case WEFT_QUEUE_OP_DISPATCH: {
      weft_buffer_binding_t bindings[64];
      status = weft_vulkan_resolve_bindings(
          base->dispatch.binding_count, base->dispatch.bindings,
          weft_binding_table_empty(), "queue_dispatch", bindings);
      if (weft_status_is_ok(status)) {
        status = weft_vulkan_op_record_dispatch(
            op, 0, base->dispatch.executable, base->dispatch.kernel_ordinal,
            base->dispatch.workgroup_count, base->dispatch.constants,
            base->dispatch.binding_count, bindings);
      }
      break;
    }
    case WEFT_QUEUE_OP_EXECUTE:
      if (op->recording) {
        op->device->context->vk.vkCmdExecuteCommands(
            op->command_buffer, 1, &op->recording->secondary);
      } else {
        status = weft_vulkan_op_record_execute(op);
      }
      break;
    default:
      return WEFT_OK;
  }
  if (weft_status_is_ok(status)) {
    const VkMemoryBarrier barrier = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
        .srcAccessMask =
            VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT,
        .dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_HOST_WRITE_BIT,
    };
    op->device->context->vk.vkCmdPipelineBarrier(
        op->command_buffer,
        VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
        VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &barrier, 0, NULL, 0, NULL);
  }
  return status;
}

// Takes |count| zeroed status slots for |op|'s dispatches. Called with the
// mutex held.
static weft_status_t weft_vulkan_op_acquire_status_locked(weft_vulkan_op_t* op,
                                                          uint32_t count) {
  weft_vulkan_device_t* device = op->device;
  weft_vulkan_queue_t* queue = weft_vulkan_op_queue(op);
  uint32_t first = 0;
  if (!weft_gpu_status_ring_acquire(&queue->status_ring, count, &first)) {
    return WEFT_STATUS(RESOURCE_EXHAUSTED,
                       "%u dispatches do not fit in the %u status slots of "
                       "queue %u of device '%s' beside those in flight",
                       count, queue->status_ring.capacity,
                       weft_vulkan_op_base(op)->queue_index, device->base.id);
  }
  op->status_slot = queue->status_first + first;
  op->status_slot_count = count;
  memset(device->status_mapping + op->status_slot * device->status_stride, 0,
         count * device->status_stride);
  return WEFT_OK;
}

// Claims the recording of |op|'s command buffer, recording it at the first
// execute (with |op| as the recorder: its command buffer and status
// target swapped for the recording's), and zeroes its status slots; NULL
// when the command buffer has none to use now (the commands are then
// recorded into the op's own command buffer). Called with the mutex held.
static weft_vulkan_recording_t* weft_vulkan_op_claim_recording_locked(
    weft_vulkan_op_t* op) {
  weft_vulkan_device_t* device = op->device;
  weft_vulkan_recording_t* recording = weft_vulkan_recording_claim(
      weft_vulkan_op_base(op)->execute.command_buffer, device->base.domain);
  if (!recording) return NULL;
  if (!recording->recorded) {
    weft_vulkan_symbols_t* vk = &device->context->vk;
    const VkCommandBufferAllocateInfo allocate_info = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = recording->pool,
        .level = VK_COMMAND_BUFFER_LEVEL_SECONDARY,
        .commandBufferCount = 1,
    };
    weft_status_t status = WEFT_VK_CALL(
        vk, vkAllocateCommandBuffers(device->context->device, &allocate_info,
                                     &recording->secondary));
    const VkCommandBufferInheritanceInfo inheritance = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO,
    };
    const VkCommandBufferBeginInfo begin_info = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT,
        .pInheritanceInfo = &inheritance,
    };
    if (weft_status_is_ok(status)) {
      status = WEFT_VK_CALL(
          vk, vkBeginCommandBuffer(recording->secondary, &begin_info));
    }
    if (weft_status_is_ok(status)) {
      const VkCommandBuffer own = op->command_buffer;
      op->command_buffer = recording->secondary;
      op->status_buffer = recording->status_buffer;
      op->status_offset = 0;
      status = weft_vulkan_op_record_execute(op);
      op->command_buffer = own;
      weft_status_t ended =
          WEFT_VK_CALL(vk, vkEndCommandBuffer(recording->secondary));
      if (weft_status_is_ok(status)) {
        status = ended;
      } else {
        weft_status_free(ended);
      }
    }
    if (!weft_status_is_ok(status)) {
      // Recorded into the op instead, where the failure is reported.
      weft_status_free(status);
      recording->broken = true;
      weft_vulkan_recording_release(recording);
      return NULL;
    }
    recording->recorded = true;
  }
  memset(recording->status_mapping, 0,
         recording->status_slot_count * recording->status_stride);
  ++device->recorded_executes;
  return recording;
}

// Takes a command buffer and begins it. Called with the mutex held.
static weft_status_t weft_vulkan_op_begin_locked(weft_vulkan_op_t* op) {
  weft_vulkan_device_t* device = op->device;
  weft_vulkan_context_t* context = device->context;
  weft_status_t status = WEFT_OK;
  if (device->free_command_buffer_count > 0) {
    op->command_buffer =
        device->free_command_buffers[--device->free_command_buffer_count];
  } else {
    const VkCommandBufferAllocateInfo allocate_info = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = device->command_pool,
        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
        .commandBufferCount = 1,
    };
    status = WEFT_VK_CALL(&context->vk,
                          vkAllocateCommandBuffers(context->device,
                                                   &allocate_info,
                                                   &op->command_buffer));
  }
  if (weft_status_is_ok(status)) {
    const VkCommandBufferBeginInfo begin_info = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
    };
    status = WEFT_VK_CALL(&context->vk,
                          vkBeginCommandBuffer(op->command_buffer,
                                               &begin_info));
  }
  return status;
}

// Gives back |count| places in flight and takes the waiting ops that now
// fit (their places counted), oldest first, as a list the caller issues.
// Called with the mutex held.
static weft_vulkan_op_t* weft_vulkan_device_release_room_locked(
    weft_vulkan_device_t* device, uint32_t count) {
  device->in_flight_count -= count;
  weft_vulkan_op_t* taken = NULL;
  weft_vulkan_op_t** taken_tail = &taken;
  while (device->waiting_room.head &&
         device->in_flight_count < WEFT_VULKAN_MAX_IN_FLIGHT) {
    weft_vulkan_op_t* op = device->waiting_room.head;
    device->waiting_room.head = op->next;
    if (!device->waiting_room.head) device->waiting_room.tail = NULL;
    op->next = NULL;
    *taken_tail = op;
    taken_tail = &op->next;
    ++device->in_flight_count;
  }
  return taken;
}

// Records and submits |op|, whose waits are reached on the host or are on
// this device's semaphores with their signals submitted. On failure the
// op is ended with it.
static void weft_vulkan_op_issue(weft_vulkan_op_t* op) {
  weft_vulkan_device_t* device = op->device;
  weft_vulkan_context_t* context = device->context;
  weft_queue_op_t* base = weft_vulkan_op_base(op);
  const weft_domain_t domain = device->base.domain;
  const weft_semaphore_list_t waits = base->wait_list;
  const weft_semaphore_list_t signals = base->signal_list;

  // Submission arrays, in the op's own storage.
  VkSemaphore* semaphores = NULL;
  uint64_t* values = NULL;
  VkPipelineStageFlags* stages = NULL;
  const uint32_t capacity = waits.count + signals.count + 1;
  weft_scheduled_op_t* record = weft_vulkan_op_record(op);
  weft_status_t status = weft_scheduled_op_allocate(
      record, capacity * sizeof(*semaphores), (void**)&semaphores);
  if (weft_status_is_ok(status)) {
    status = weft_scheduled_op_allocate(record, capacity * sizeof(*values),
                                        (void**)&values);
  }
  if (weft_status_is_ok(status)) {
    status = weft_scheduled_op_allocate(record, waits.count * sizeof(*stages),
                                        (void**)&stages);
  }
  // Native waits go into the submission: one the host has not seen
  // reached makes the GPU wait; one already reached costs nothing and
  // still carries the memory dependency on its producer's writes. Waits
  // on other semaphores were met on the host (|host_waits|).
  uint32_t wait_count = 0;
  op->gpu_waits = 0;
  op->host_waits = false;
  for (uint32_t i = 0; weft_status_is_ok(status) && i < waits.count; ++i) {
    weft_vulkan_semaphore_t* semaphore =
        weft_vulkan_semaphore_cast(waits.semaphores[i], domain);
    uint64_t current = 0;
    const bool failed = weft_semaphore_peek(waits.semaphores[i], &current);
    if (!semaphore) {
      op->host_waits = true;
    } else if (!failed) {
      semaphores[wait_count] = semaphore->timeline;
      values[wait_count] = waits.values[i];
      stages[wait_count] = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
      ++wait_count;
      if (current < waits.values[i] && i < WEFT_GPU_MAX_DEVICE_WAITS) {
        op->gpu_waits |= 1ull << i;
      }
    }
  }

  // The signals submitted to the GPU, advanced once the mutex is let go.
  weft_semaphore_t* advanced[64];
  uint64_t advanced_values[64];
  uint32_t advanced_count = 0;
  // A barrier is only its waits and signals: no command buffer.
  const bool has_commands = base->kind != WEFT_QUEUE_OP_BARRIER;
  // Validation rejected affinity 0, so there is a lowest set bit.
  base->queue_index =
      (uint32_t)__builtin_ctzll(base->affinity) % device->queue_count;
  weft_vulkan_queue_t* queue = weft_vulkan_op_queue(op);
  weft_slim_mutex_lock(&device->mutex);
  op->status_slot_count = 0;
  op->recording = NULL;
  if (weft_status_is_ok(status) && base->kind == WEFT_QUEUE_OP_EXECUTE) {
    op->recording = weft_vulkan_op_claim_recording_locked(op);
  }
  const uint32_t slot_count =
      op->recording ? 0 : weft_gpu_kernel_status_slot_count(base);
  if (weft_status_is_ok(status) && slot_count) {
    status = weft_vulkan_op_acquire_status_locked(op, slot_count);
  }
  op->status_buffer = device->status_buffer;
  op->status_offset = (VkDeviceSize)op->status_slot * device->status_stride;
  if (weft_status_is_ok(status) && has_commands) {
    status = weft_vulkan_op_begin_locked(op);
    if (weft_status_is_ok(status)) status = weft_vulkan_op_record_commands(op);
    if (weft_status_is_ok(status)) {
      status =
          WEFT_VK_CALL(&context->vk, vkEndCommandBuffer(op->command_buffer));
    }
  }
  // Native signals (unless failed already), then the completion value.
  uint32_t signal_count = 0;
  VkSemaphore* signal_semaphores = semaphores ? semaphores + wait_count : NULL;
  uint64_t* signal_values = values ? values + wait_count : NULL;
  op->published = 0;
  for (uint32_t i = 0; weft_status_is_ok(status) && i < signals.count && i < 64;
       ++i) {
    weft_vulkan_semaphore_t* semaphore =
        weft_vulkan_semaphore_cast(signals.semaphores[i], domain);
    bool counted = false;
    if (semaphore) {
      status = weft_vulkan_semaphore_begin_signal(semaphore, signals.values[i],
                                                  &counted);
    }
    if (counted) {
      signal_semaphores[signal_count] = semaphore->timeline;
      signal_values[signal_count] = signals.values[i];
      ++signal_count;
      op->published |= 1ull << i;
    }
  }
  if (weft_status_is_ok(status)) {
    op->sequence = queue->submitted_sequence + 1;
    signal_semaphores[signal_count] = queue->completion;
    signal_values[signal_count] = op->sequence;
    const VkTimelineSemaphoreSubmitInfo timeline_info = {
        .sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
        .waitSemaphoreValueCount = wait_count,
        .pWaitSemaphoreValues = values,
        .signalSemaphoreValueCount = signal_count + 1,
        .pSignalSemaphoreValues = signal_values,
    };
    const VkSubmitInfo submit_info = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
        .pNext = &timeline_info,
        .waitSemaphoreCount = wait_count,
        .pWaitSemaphores = semaphores,
        .pWaitDstStageMask = stages,
        .commandBufferCount = has_commands ? 1u : 0u,
        .pCommandBuffers = &op->command_buffer,
        .signalSemaphoreCount = signal_count + 1,
        .pSignalSemaphores = signal_semaphores,
    };
    status = WEFT_VK_CALL(&context->vk,
                          vkQueueSubmit(queue->queue, 1, &submit_info,
                                        VK_NULL_HANDLE));
  }
  if (weft_status_is_ok(status)) {
    // The completion thread waits only on queues with ops in flight: the
    // first op of an idle queue wakes it. (Waiting on every queue for its
    // next sequence instead, a value not yet submitted, saves that wake;
    // on an H100 it measured slower, see src/drivers/vulkan/README.md.)
    const bool was_idle = queue->in_flight.head == NULL;
    queue->submitted_sequence = op->sequence;
    weft_vulkan_fifo_push(&queue->in_flight, op);
    if (was_idle) weft_vulkan_device_wake_locked(device);
    // What the loop below advances, taken now: once the mutex is let go
    // the op may complete and retire (its lists go back to the pool)
    // before this thread gets there. Each semaphore retained for it.
    for (uint32_t i = 0; i < signals.count && i < 64; ++i) {
      if (op->published & (1ull << i)) {
        weft_semaphore_retain(signals.semaphores[i]);
        advanced[advanced_count] = signals.semaphores[i];
        advanced_values[advanced_count] = signals.values[i];
        ++advanced_count;
      }
    }
  } else {
    if (op->status_slot_count) {
      // Nothing reached the GPU: its slots are the ring's newest.
      weft_gpu_status_ring_unacquire(&queue->status_ring,
                                     op->status_slot - queue->status_first);
      op->status_slot_count = 0;
    }
    if (op->recording) {
      weft_vulkan_recording_release(op->recording);
      op->recording = NULL;
    }
  }
  weft_slim_mutex_unlock(&device->mutex);

  if (!weft_status_is_ok(status)) {
    // Nothing reached the GPU: the counted signals are not pending.
    for (uint32_t i = 0; i < signals.count && i < 64; ++i) {
      if (op->published & (1ull << i)) {
        weft_vulkan_semaphore_end_signal(
            weft_vulkan_semaphore_cast(signals.semaphores[i], domain));
      }
    }
    op->published = 0;
    weft_queue_trace_signal(record->trace_id, false);
    weft_queue_op_signal_or_fail(base,
                                 weft_queue_op_annotate_error(base, status));
    weft_vulkan_op_retire(op);
    // Its place in flight goes to the next waiting op, which the
    // completion thread issues (not this call: a run of failures would
    // recurse).
    weft_slim_mutex_lock(&device->mutex);
    --device->in_flight_count;
    if (device->waiting_room.head) weft_vulkan_device_wake_locked(device);
    weft_slim_mutex_unlock(&device->mutex);
    return;
  }
  // Ops waiting natively on these values may be submitted behind it now
  // (outside the mutex: that submits them on this thread). |op| is not
  // touched again: it may have completed already.
  for (uint32_t i = 0; i < advanced_count; ++i) {
    weft_semaphore_advance_issued(advanced[i], advanced_values[i]);
    weft_semaphore_release(advanced[i]);
  }
}

// Issues each op of a list weft_vulkan_device_release_room_locked took.
static void weft_vulkan_op_issue_list(weft_vulkan_op_t* list) {
  while (list) {
    weft_vulkan_op_t* next = list->next;
    list->next = NULL;
    weft_vulkan_op_issue(list);
    list = next;
  }
}

// Sends a ready op on: host ops to the completion thread, the others to
// the GPU, or to the waiting room while the GPU has its fill.
static void weft_vulkan_op_dispatch_one(weft_vulkan_op_t* op) {
  weft_scheduled_op_t* record = weft_vulkan_op_record(op);
  weft_vulkan_device_t* device = op->device;
  if (!weft_status_is_ok(record->wait_status) || record->swept) {
    weft_scheduled_op_end_not_run(record);
    weft_vulkan_op_retire(op);
    return;
  }
  weft_queue_trace_ready(record->trace_id);
  if (weft_vulkan_op_is_transfer(record->base.kind)) {
    weft_slim_mutex_lock(&device->mutex);
    weft_vulkan_fifo_push(&device->transfers, op);
    weft_condition_signal(&device->transfer_wake);
    weft_slim_mutex_unlock(&device->mutex);
  } else if (weft_vulkan_op_is_host(record->base.kind)) {
    weft_slim_mutex_lock(&device->mutex);
    weft_vulkan_fifo_push(&device->host_ready, op);
    weft_vulkan_device_wake_locked(device);
    weft_slim_mutex_unlock(&device->mutex);
  } else {
    weft_slim_mutex_lock(&device->mutex);
    const bool room = device->in_flight_count < WEFT_VULKAN_MAX_IN_FLIGHT;
    if (room) {
      ++device->in_flight_count;
    } else {
      weft_vulkan_fifo_push(&device->waiting_room, op);
    }
    weft_slim_mutex_unlock(&device->mutex);
    if (room) weft_vulkan_op_issue(op);
  }
}

// Dispatches |record|'s op (weft_scheduled_op_run_outermost's run).
static void weft_vulkan_op_dispatch_record(weft_scheduled_op_t* record) {
  weft_vulkan_op_dispatch_one((weft_vulkan_op_t*)record->driver);
}

// vulkan's ops readied on this thread while it dispatches another.
static _Thread_local weft_scheduled_op_trampoline_t weft_vulkan_trampoline;

// Dispatches |op| and whatever it readies on this thread (submitting one
// op readies those waiting natively on it, inside the submit): those run
// from the outermost call's loop, so a chain of any length takes a loop,
// not a recursion as deep as the chain. Any thread.
static void weft_vulkan_op_dispatch(weft_vulkan_op_t* op) {
  weft_scheduled_op_run_outermost(&weft_vulkan_trampoline,
                                  weft_vulkan_op_record(op),
                                  weft_vulkan_op_dispatch_record);
}

// The scheduler's ready function.
static void weft_vulkan_op_ready(void* user_data, weft_scheduled_op_t* record) {
  (void)user_data;
  weft_vulkan_op_dispatch((weft_vulkan_op_t*)record->driver);
}

void weft_vulkan_device_initialize_scheduler(weft_vulkan_device_t* device) {
  weft_queue_scheduler_initialize(device->base.host_allocator,
                                  WEFT_VULKAN_OP_SIZE, weft_vulkan_op_ready,
                                  device, &device->scheduler);
}

weft_status_t weft_vulkan_device_queue_submit(weft_device_t* base_device,
                                              const weft_queue_op_t* source) {
  weft_vulkan_device_t* device = weft_vulkan_device_cast(base_device);
  const bool ready = weft_semaphore_list_is_reached(source->wait_list);
  weft_scheduled_op_t* record = NULL;
  weft_status_t status = weft_queue_scheduler_acquire(
      &device->scheduler, source, WEFT_QUEUE_OP_CAPTURE_ALL, /*park=*/!ready,
      &record);
  if (!weft_status_is_ok(status)) return status;
  weft_vulkan_op_t* op = (weft_vulkan_op_t*)record->driver;
  op->device = device;
  record->trace_id = weft_queue_trace_submit();
  if (ready) {
    weft_vulkan_op_dispatch(op);
    return WEFT_OK;
  }
  // Waits on this device's semaphores are met once their signal is
  // submitted (the GPU then waits itself); host ops wait on the host, and
  // every op does with "gpu_waits=off" (the host round trip, for
  // comparison).
  uint64_t native_waits = 0;
  if (!weft_vulkan_op_is_host(source->kind) && device->gpu_waits) {
    for (uint32_t i = 0; i < source->wait_list.count && i < 64; ++i) {
      if (weft_vulkan_semaphore_cast(source->wait_list.semaphores[i],
                                     base_device->domain)) {
        native_waits |= 1ull << i;
      }
    }
  }
  weft_queue_scheduler_park(record, native_waits);
  return WEFT_OK;
}

//===----------------------------------------------------------------------===//
// Completion
//===----------------------------------------------------------------------===//

// What a GPU op ended with (hal/gpu/op_result.h): a wait it left to the
// GPU whose semaphore failed, else a kernel's status slot.
static weft_status_t weft_vulkan_op_result(weft_vulkan_op_t* op) {
  const weft_queue_op_t* base = weft_vulkan_op_base(op);
  if (op->recording) {
    return weft_gpu_op_result(
        base, op->gpu_waits, WEFT_OK, op->recording->status_mapping,
        op->recording->status_stride, op->recording->status_slot_count);
  }
  weft_vulkan_device_t* device = op->device;
  return weft_gpu_op_result(
      base, op->gpu_waits, WEFT_OK,
      op->status_slot_count
          ? device->status_mapping + op->status_slot * device->status_stride
          : NULL,
      device->status_stride, op->status_slot_count);
}

//===----------------------------------------------------------------------===//
// Held waits
//===----------------------------------------------------------------------===//
// A Vulkan implementation may still touch a semaphore a submission waited
// on after that submission's signals are visible. Mesa's emulated
// timelines (lavapipe's) do: the queue's submit thread runs the
// submission, installs its signals, and only then releases its wait
// points, which lie in the waited semaphores' memory. A semaphore that
// its last owner let go as soon as the op was seen done was then used
// after it was freed on that thread (a SEGV in Mesa's thread, about one
// ASan run of `bench.smoke` in 17, after SemaphoreEdge/gpu-gpu). That
// thread handles a queue's submissions one after another, so once a
// later submission of the same queue is seen complete, the earlier one's
// clean-up is over: each queue holds a reference to what its last
// completed op waited on until its next op completes, and its stop waits
// for the Vulkan queue to go idle before it lets them go.

static void weft_vulkan_queue_release_held(weft_vulkan_device_t* device,
                                           weft_vulkan_queue_t* queue) {
  if (!queue->held_count) return;
  for (uint32_t i = 0; i < queue->held_count; ++i) {
    weft_semaphore_release(queue->held[i]);
  }
  weft_atomic_fetch_sub(&device->held_waits, (int64_t)queue->held_count,
                        memory_order_relaxed);
  queue->held_count = 0;
}

// Lets go of what |queue| held for its earlier ops and holds the native
// waits of |op|, which completed (on the completion thread, before |op|
// retires). Without room to hold them (a failed allocation), waits for the
// Vulkan queue to go idle instead: every wait of a submitted op has its
// signal submitted, so that ends without this thread.
static void weft_vulkan_queue_hold_waits(weft_vulkan_op_t* op) {
  weft_vulkan_device_t* device = op->device;
  weft_vulkan_queue_t* queue = weft_vulkan_op_queue(op);
  weft_vulkan_queue_release_held(device, queue);
  const weft_semaphore_list_t waits = weft_vulkan_op_base(op)->wait_list;
  const weft_domain_t domain = device->base.domain;
  if (waits.count > queue->held_capacity) {
    weft_semaphore_t** held = queue->held;
    weft_status_t status =
        weft_allocator_realloc(device->base.host_allocator,
                               waits.count * sizeof(*held), (void**)&held);
    if (!weft_status_is_ok(status)) {
      weft_status_free(status);
      weft_slim_mutex_lock(&device->mutex);
      device->context->vk.vkQueueWaitIdle(queue->queue);
      weft_slim_mutex_unlock(&device->mutex);
      return;
    }
    queue->held = held;
    queue->held_capacity = waits.count;
  }
  for (uint32_t i = 0; i < waits.count; ++i) {
    if (weft_vulkan_semaphore_cast(waits.semaphores[i], domain)) {
      weft_semaphore_retain(waits.semaphores[i]);
      queue->held[queue->held_count++] = waits.semaphores[i];
    }
  }
  if (queue->held_count) {
    weft_atomic_fetch_add(&device->held_waits, (int64_t)queue->held_count,
                          memory_order_relaxed);
  }
}

// At the stop, once the completion thread is joined: the Vulkan queues go
// idle, then what they held goes.
static void weft_vulkan_device_release_held(weft_vulkan_device_t* device) {
  for (uint32_t i = 0; i < device->queue_count; ++i) {
    weft_vulkan_queue_t* queue = &device->queues[i];
    if (queue->held_count) {
      weft_slim_mutex_lock(&device->mutex);
      device->context->vk.vkQueueWaitIdle(queue->queue);
      weft_slim_mutex_unlock(&device->mutex);
      weft_vulkan_queue_release_held(device, queue);
    }
    weft_allocator_free(device->base.host_allocator, queue->held);
    queue->held = NULL;
    queue->held_capacity = 0;
  }
}

static void weft_vulkan_op_complete(weft_vulkan_op_t* op) {
  weft_queue_op_t* base = weft_vulkan_op_base(op);
  const weft_domain_t domain = op->device->base.domain;
  weft_status_t status = weft_vulkan_op_result(op);
  if (op->recording) {
    // Read: another execute may take it.
    weft_vulkan_recording_release(op->recording);
    op->recording = NULL;
  }
  if (op->status_slot_count) {
    // Read: the slots go back, oldest first (ops complete in the order
    // they took them).
    weft_vulkan_device_t* device = op->device;
    weft_slim_mutex_lock(&device->mutex);
    weft_vulkan_queue_t* queue = weft_vulkan_op_queue(op);
    weft_gpu_status_ring_release(&queue->status_ring,
                                 op->status_slot - queue->status_first,
                                 op->status_slot_count);
    weft_slim_mutex_unlock(&device->mutex);
    op->status_slot_count = 0;
  }
  weft_queue_trace_signal(weft_vulkan_op_record(op)->trace_id,
                          weft_status_is_ok(status));
  weft_queue_op_signal_or_fail_published(base, status, op->published);
  for (uint32_t i = 0; i < base->signal_list.count && i < 64; ++i) {
    if (op->published & (1ull << i)) {
      weft_vulkan_semaphore_end_signal(
          weft_vulkan_semaphore_cast(base->signal_list.semaphores[i], domain));
    }
  }
  weft_vulkan_queue_hold_waits(op);
  weft_vulkan_op_retire(op);
}

// Runs a host op whose waits are reached (on the completion thread).
static void weft_vulkan_op_run_host(weft_vulkan_op_t* op, bool cancelled) {
  weft_vulkan_device_t* device = op->device;
  weft_queue_op_t* base = weft_vulkan_op_base(op);
  if (cancelled) {
    weft_scheduled_op_end_not_run(weft_vulkan_op_record(op));
    weft_vulkan_op_retire(op);
    return;
  }
  weft_status_t status = WEFT_OK;
  bool ended = false;
  switch (base->kind) {
    case WEFT_QUEUE_OP_HOST_CALL:
      status = weft_queue_op_run_host_call(base, &ended);
      break;
    case WEFT_QUEUE_OP_ALLOCA:
      status = weft_vulkan_buffer_commit(base->transient.buffer,
                                         weft_vulkan_device_zero_buffer,
                                         device);
      break;
    case WEFT_QUEUE_OP_DEALLOCA:
      status = weft_vulkan_buffer_decommit(base->transient.buffer);
      break;
    default:
      break;
  }
  const uint64_t trace_id = weft_vulkan_op_record(op)->trace_id;
  if (ended) {
    // The host call published (or took over) the signals itself.
    weft_queue_trace_signal(trace_id, weft_status_is_ok(status));
    weft_status_ignore(status);
  } else {
    weft_queue_trace_signal(trace_id, weft_status_is_ok(status));
    weft_queue_op_signal_or_fail(base,
                                 weft_queue_op_annotate_error(base, status));
  }
  weft_vulkan_op_retire(op);
}

// The transfer thread: runs ready file transfers in the order they became
// ready, until the device stops and none is left.
static int weft_vulkan_transfer_main(void* user_data) {
  weft_vulkan_device_t* device = (weft_vulkan_device_t*)user_data;
  weft_slim_mutex_lock(&device->mutex);
  for (;;) {
    while (!device->transfers.head && !device->transfers_closing) {
      weft_condition_wait(&device->transfer_wake, &device->mutex,
                          WEFT_TIME_INFINITE_FUTURE);
    }
    weft_vulkan_op_t* op = device->transfers.head;
    if (!op) break;
    device->transfers.head = op->next;
    if (!device->transfers.head) device->transfers.tail = NULL;
    op->next = NULL;
    weft_slim_mutex_unlock(&device->mutex);
    weft_queue_op_t* base = weft_vulkan_op_base(op);
    const uint64_t trace_id = weft_vulkan_op_record(op)->trace_id;
    weft_queue_trace_begin(trace_id, weft_queue_op_kind_name(base->kind));
    weft_status_t status = weft_vulkan_file_transfer(device, base);
    weft_queue_trace_end(trace_id);
    weft_queue_trace_signal(trace_id, weft_status_is_ok(status));
    weft_queue_op_signal_or_fail(base,
                                 weft_queue_op_annotate_error(base, status));
    weft_vulkan_op_retire(op);
    weft_slim_mutex_lock(&device->mutex);
  }
  weft_slim_mutex_unlock(&device->mutex);
  return 0;
}

static int weft_vulkan_completion_main(void* user_data) {
  weft_vulkan_device_t* device = (weft_vulkan_device_t*)user_data;
  weft_vulkan_context_t* context = device->context;
  for (;;) {
    weft_slim_mutex_lock(&device->mutex);
    weft_vulkan_op_t* host = device->host_ready.head;
    device->host_ready.head = device->host_ready.tail = NULL;
    // Waiting ops that fit now (a failed submit gave back its place).
    weft_vulkan_op_t* taken = weft_vulkan_device_release_room_locked(device, 0);
    const bool stopping = device->stopping;
    // The oldest op in flight of each queue that has one (a submission to
    // an idle queue wakes this thread).
    VkSemaphore semaphores[WEFT_VULKAN_MAX_QUEUES + 1];
    uint64_t values[WEFT_VULKAN_MAX_QUEUES + 1];
    uint32_t waited_queues[WEFT_VULKAN_MAX_QUEUES];
    uint32_t count = 0;
    for (uint32_t i = 0; i < device->queue_count; ++i) {
      const weft_vulkan_op_t* oldest = device->queues[i].in_flight.head;
      if (!oldest) continue;
      waited_queues[count] = i;
      semaphores[count] = device->queues[i].completion;
      values[count] = oldest->sequence;
      ++count;
    }
    if (!host && !taken && count == 0 && !device->waiting_room.head &&
        stopping) {
      weft_slim_mutex_unlock(&device->mutex);
      break;
    }
    // From here a submitter that adds work moves |wake| past this target,
    // so the wait below cannot miss it.
    const uint64_t wake_target = device->wake_value + 1;
    if (!host && !taken) device->completion_waiting = true;
    weft_slim_mutex_unlock(&device->mutex);

    if (host || taken) {
      // Host ops whose waits are reached (at shutdown, cancelled), then
      // waiting GPU ops that fit.
      while (host) {
        weft_vulkan_op_t* next = host->next;
        weft_vulkan_op_run_host(host, stopping);
        host = next;
      }
      weft_vulkan_op_issue_list(taken);
      continue;
    }

    const uint32_t queue_count = count;
    semaphores[count] = device->wake;
    values[count] = wake_target;
    ++count;
    const VkSemaphoreWaitInfo wait_info = {
        .sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
        .flags = VK_SEMAPHORE_WAIT_ANY_BIT,
        .semaphoreCount = count,
        .pSemaphores = semaphores,
        .pValues = values,
    };
    weft_status_t status = WEFT_VK_CALL(
        &context->vk,
        vkWaitSemaphores(context->device, &wait_info, UINT64_MAX));
    // What each waited queue completed (the others had nothing in
    // flight when this thread looked: their new ops are seen next round).
    uint64_t completed[WEFT_VULKAN_MAX_QUEUES] = {0};
    for (uint32_t i = 0; i < queue_count; ++i) {
      if (weft_status_is_ok(status)) {
        status = WEFT_VK_CALL(&context->vk,
                              vkGetSemaphoreCounterValue(
                                  context->device, semaphores[i],
                                  &completed[waited_queues[i]]));
      }
    }
    if (!weft_status_is_ok(status)) {
      // A lost device: nothing will complete any more. Report it and end
      // every op in flight as if it had (their results are lost).
      weft_status_fprint(stderr, status);
      weft_status_free(status);
      for (uint32_t i = 0; i < device->queue_count; ++i) {
        completed[i] = UINT64_MAX;
      }
    }
    weft_slim_mutex_lock(&device->mutex);
    device->completion_waiting = false;
    weft_vulkan_op_t* done = NULL;
    weft_vulkan_op_t** done_tail = &done;
    uint32_t done_count = 0;
    for (uint32_t i = 0; i < device->queue_count; ++i) {
      weft_vulkan_op_fifo_t* fifo = &device->queues[i].in_flight;
      while (fifo->head && fifo->head->sequence <= completed[i]) {
        weft_vulkan_op_t* op = fifo->head;
        fifo->head = op->next;
        if (!fifo->head) fifo->tail = NULL;
        op->next = NULL;
        *done_tail = op;
        done_tail = &op->next;
        ++done_count;
        // Its command buffer goes back before its place in flight does,
        // so an op that takes the place finds it (otherwise every
        // submitter racing this thread makes a new one and the pool
        // outgrows the in-flight bound: the queue_memory CTS saw 1,600
        // for 1,024).
        weft_vulkan_op_return_command_buffer_locked(op);
      }
    }
    weft_vulkan_op_t* freed_room =
        weft_vulkan_device_release_room_locked(device, done_count);
    weft_slim_mutex_unlock(&device->mutex);
    while (done) {
      weft_vulkan_op_t* next = done->next;
      weft_vulkan_op_complete(done);
      done = next;
    }
    weft_vulkan_op_issue_list(freed_room);
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// Start, stop, and the pending report
//===----------------------------------------------------------------------===//

weft_status_t weft_vulkan_device_start_queue(weft_vulkan_device_t* device) {
  weft_vulkan_context_t* context = device->context;
  const VkCommandPoolCreateInfo pool_info = {
      .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
      .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
      .queueFamilyIndex = context->queue_family_index,
  };
  weft_status_t status = WEFT_VK_CALL(
      &context->vk, vkCreateCommandPool(context->device, &pool_info, NULL,
                                        &device->command_pool));
  if (weft_status_is_ok(status)) {
    device->free_command_buffer_capacity = 256;
    status = weft_allocator_malloc_array(
        device->base.host_allocator, device->free_command_buffer_capacity,
        sizeof(VkCommandBuffer), (void**)&device->free_command_buffers);
  }
  for (uint32_t i = 0; weft_status_is_ok(status) && i < device->queue_count;
       ++i) {
    status = weft_vulkan_context_create_timeline(
        context, 0, &device->queues[i].completion);
  }
  if (weft_status_is_ok(status)) {
    status = weft_vulkan_context_create_timeline(context, 0, &device->wake);
  }
  if (weft_status_is_ok(status)) {
    status =
        weft_vulkan_context_create_timeline(context, 0, &device->immediate);
  }
  if (weft_status_is_ok(status)) {
    const VkDeviceSize alignment =
        context->properties.limits.minStorageBufferOffsetAlignment;
    device->status_stride = alignment > sizeof(weft_gpu_kernel_status_t)
                                ? alignment
                                : sizeof(weft_gpu_kernel_status_t);
    // An equal share of the slots for each queue.
    const uint32_t share = WEFT_VULKAN_STATUS_SLOTS / device->queue_count;
    for (uint32_t i = 0; i < device->queue_count; ++i) {
      device->queues[i].status_first = i * share;
      weft_gpu_status_ring_initialize(share, &device->queues[i].status_ring);
    }
    status = weft_vulkan_context_allocate_buffer(
        context, WEFT_VULKAN_STATUS_SLOTS * device->status_stride,
        context->host_visible_type, &device->status_buffer,
        &device->status_memory);
  }
  if (weft_status_is_ok(status)) {
    status = WEFT_VK_CALL(
        &context->vk,
        vkMapMemory(context->device, device->status_memory, 0, VK_WHOLE_SIZE,
                    0, (void**)&device->status_mapping));
  }
  if (weft_status_is_ok(status)) {
    const weft_thread_params_t params = {.name = "weft-vulkan-completion",
                                         .cpu = -1};
    status = weft_thread_create(weft_vulkan_completion_main, device, &params,
                                device->base.host_allocator,
                                &device->completion_thread);
  }
  if (weft_status_is_ok(status)) {
    const weft_thread_params_t params = {.name = "weft-vulkan-files",
                                         .cpu = -1};
    status = weft_thread_create(weft_vulkan_transfer_main, device, &params,
                                device->base.host_allocator,
                                &device->transfer_thread);
  }
  return status;
}

void weft_vulkan_device_stop_queue(weft_vulkan_device_t* device) {
  // Held ops fail with CANCELLED naming them (on this thread).
  weft_queue_scheduler_cancel_parked(&device->scheduler);
  // Transfers already ready run to their end first: their signals may
  // ready GPU ops, which the completion thread then still sees through.
  if (device->transfer_thread) {
    weft_slim_mutex_lock(&device->mutex);
    device->transfers_closing = true;
    weft_condition_signal(&device->transfer_wake);
    weft_slim_mutex_unlock(&device->mutex);
    weft_thread_join(device->transfer_thread);
    device->transfer_thread = NULL;
  }
  if (device->completion_thread) {
    weft_slim_mutex_lock(&device->mutex);
    device->stopping = true;
    weft_vulkan_device_wake_locked(device);
    weft_slim_mutex_unlock(&device->mutex);
    weft_thread_join(device->completion_thread);
    device->completion_thread = NULL;
  }
  weft_vulkan_device_release_held(device);
  weft_queue_scheduler_wait_idle(&device->scheduler);
}

void weft_vulkan_device_free_queue(weft_vulkan_device_t* device) {
  weft_vulkan_context_t* context = device->context;
  weft_vulkan_symbols_t* vk = &context->vk;
  if (context->device) vk->vkDeviceWaitIdle(context->device);
  weft_vulkan_staging_ring_free(device);
  for (int i = 0; i < WEFT_VULKAN_STAGING_CLASSES; ++i) {
    while (device->staging_free[i]) {
      weft_vulkan_staging_t* staging = device->staging_free[i];
      device->staging_free[i] = staging->next;
      weft_vulkan_staging_destroy(device, staging);
    }
  }
  device->staging_idle_bytes = 0;
  weft_condition_deinitialize(&device->transfer_wake);
  if (device->command_pool) {
    vk->vkDestroyCommandPool(context->device, device->command_pool, NULL);
  }
  weft_allocator_free(device->base.host_allocator,
                      device->free_command_buffers);
  for (uint32_t i = 0; i < device->queue_count; ++i) {
    if (device->queues[i].completion) {
      vk->vkDestroySemaphore(context->device, device->queues[i].completion,
                             NULL);
    }
  }
  if (device->wake) vk->vkDestroySemaphore(context->device, device->wake, NULL);
  if (device->immediate) {
    vk->vkDestroySemaphore(context->device, device->immediate, NULL);
  }
  if (device->status_buffer) {
    vk->vkDestroyBuffer(context->device, device->status_buffer, NULL);
  }
  if (device->status_memory) {
    vk->vkFreeMemory(context->device, device->status_memory, NULL);
  }
}

uint64_t weft_vulkan_device_for_each_pending(weft_device_t* base_device,
                                             weft_pending_op_visit_fn_t visit,
                                             void* user_data) {
  weft_vulkan_device_t* device = weft_vulkan_device_cast(base_device);
  const uint64_t described = weft_queue_scheduler_for_each_pending(
      &device->scheduler, visit, user_data);
  const int64_t live = weft_queue_scheduler_live_count(&device->scheduler);
  return live > (int64_t)described ? (uint64_t)live - described : 0;
}

weft_status_t weft_vulkan_device_zero_buffer(void* user_data,
                                             VkBuffer buffer) {
  weft_vulkan_device_t* device = (weft_vulkan_device_t*)user_data;
  weft_vulkan_context_t* context = device->context;
  weft_vulkan_symbols_t* vk = &context->vk;
  VkCommandBuffer command_buffer = VK_NULL_HANDLE;
  weft_slim_mutex_lock(&device->mutex);
  const VkCommandBufferAllocateInfo allocate_info = {
      .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
      .commandPool = device->command_pool,
      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
      .commandBufferCount = 1,
  };
  weft_status_t status = WEFT_VK_CALL(
      vk, vkAllocateCommandBuffers(context->device, &allocate_info,
                                   &command_buffer));
  const VkCommandBufferBeginInfo begin_info = {
      .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
      .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
  };
  if (weft_status_is_ok(status)) {
    status = WEFT_VK_CALL(vk, vkBeginCommandBuffer(command_buffer,
                                                   &begin_info));
  }
  const uint64_t value = device->immediate_value + 1;
  if (weft_status_is_ok(status)) {
    // The whole buffer (VK_WHOLE_SIZE rounds down to 4-byte words; buffers
    // are made a multiple of them, weft_vulkan_context_allocate_buffer).
    vk->vkCmdFillBuffer(command_buffer, buffer, 0, VK_WHOLE_SIZE, 0);
    status = WEFT_VK_CALL(vk, vkEndCommandBuffer(command_buffer));
  }
  if (weft_status_is_ok(status)) {
    status = weft_vulkan_context_submit_signal(
        context, device->queues[0].queue, command_buffer, device->immediate,
        value);
    if (weft_status_is_ok(status)) device->immediate_value = value;
  }
  weft_slim_mutex_unlock(&device->mutex);
  if (weft_status_is_ok(status)) {
    status = weft_vulkan_context_wait_timeline(context, device->immediate,
                                               value);
  }
  if (command_buffer) {
    weft_slim_mutex_lock(&device->mutex);
    vk->vkFreeCommandBuffers(context->device, device->command_pool, 1,
                             &command_buffer);
    weft_slim_mutex_unlock(&device->mutex);
  }
  return status;
}
