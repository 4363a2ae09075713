// weft: inline command buffer replay (see inline_command_buffer.h).
#include "hal/local/inline_command_buffer.h"

#include "hal/buffer_impl.h"
#include "hal/command_buffer_impl.h"
#include "hal/local/inline_dispatch.h"

// Dispatches with up to this many bindings resolve them on the stack.
#define WEFT_INLINE_REPLAY_STACK_BINDINGS 16

static const char kWhat[] = "queue_execute";

static weft_status_t weft_inline_replay_fill(const weft_command_fill_t* fill,
                                             weft_binding_table_t table) {
  weft_buffer_binding_t target;
  weft_status_t status =
      weft_command_buffer_resolve_fill(fill, table, kWhat, &target);
  if (weft_status_is_ok(status)) {
    status = weft_buffer_map_fill_unchecked(target.buffer, target.offset,
                                            target.length, &fill->pattern,
                                            fill->pattern_length, kWhat);
  }
  return status;
}

static weft_status_t weft_inline_replay_update(
    const weft_command_update_t* update, weft_binding_table_t table) {
  weft_buffer_binding_t target;
  weft_status_t status =
      weft_command_buffer_resolve_ref(update->target, table, kWhat, &target);
  if (weft_status_is_ok(status) && target.length > 0) {
    status = weft_buffer_map_write_unchecked(
        target.buffer, target.offset, update->source, target.length, kWhat);
  }
  return status;
}

static weft_status_t weft_inline_replay_copy(const weft_command_copy_t* copy,
                                             weft_binding_table_t table) {
  weft_buffer_binding_t source;
  weft_buffer_binding_t target;
  weft_status_t status =
      weft_command_buffer_resolve_copy(copy, table, kWhat, &source, &target);
  if (weft_status_is_ok(status)) {
    status = weft_buffer_map_copy_unchecked(source.buffer, source.offset,
                                            target.buffer, target.offset,
                                            source.length, kWhat);
  }
  return status;
}

static weft_status_t weft_inline_replay_dispatch(
    const weft_command_dispatch_t* dispatch, weft_binding_table_t table,
    weft_allocator_t allocator) {
  weft_buffer_binding_t stack_bindings[WEFT_INLINE_REPLAY_STACK_BINDINGS];
  weft_buffer_binding_t* bindings = stack_bindings;
  weft_buffer_binding_t* allocated_bindings = NULL;
  weft_status_t status = WEFT_OK;
  if (dispatch->binding_count > WEFT_INLINE_REPLAY_STACK_BINDINGS) {
    status = weft_allocator_malloc_array(allocator, dispatch->binding_count,
                                         sizeof(*allocated_bindings),
                                         (void**)&allocated_bindings);
    bindings = allocated_bindings;
  }
  for (uint32_t i = 0; weft_status_is_ok(status) && i < dispatch->binding_count;
       ++i) {
    status = weft_status_annotate(
        weft_command_buffer_resolve_ref(dispatch->bindings[i], table, kWhat,
                                        &bindings[i]),
        "binding %u", i);
  }
  if (weft_status_is_ok(status)) {
    status = weft_inline_dispatch(
        dispatch->executable, dispatch->kernel_ordinal,
        dispatch->workgroup_count, dispatch->constant_count,
        dispatch->constants, dispatch->binding_count, bindings, allocator);
  }
  weft_allocator_free(allocator, allocated_bindings);
  return status;
}

weft_status_t weft_command_buffer_replay_inline(
    weft_command_buffer_t* command_buffer, weft_binding_table_t binding_table,
    weft_allocator_t allocator) {
  uint32_t command_count = 0;
  const weft_command_t* commands =
      weft_command_buffer_commands(command_buffer, &command_count);
  weft_status_t status = WEFT_OK;
  uint32_t i = 0;
  for (; weft_status_is_ok(status) && i < command_count; ++i) {
    const weft_command_t* command = &commands[i];
    switch (command->type) {
      case WEFT_COMMAND_TYPE_BARRIER:
        // Every earlier command has completed: nothing to order.
        break;
      case WEFT_COMMAND_TYPE_FILL:
        status = weft_inline_replay_fill(&command->fill, binding_table);
        break;
      case WEFT_COMMAND_TYPE_UPDATE:
        status = weft_inline_replay_update(&command->update, binding_table);
        break;
      case WEFT_COMMAND_TYPE_COPY:
        status = weft_inline_replay_copy(&command->copy, binding_table);
        break;
      case WEFT_COMMAND_TYPE_DISPATCH:
        status = weft_inline_replay_dispatch(&command->dispatch, binding_table,
                                             allocator);
        break;
      default:
        status = WEFT_STATUS(INTERNAL, "%s: unknown command type %d", kWhat,
                             (int)command->type);
        break;
    }
    status = weft_command_buffer_annotate_command(command_buffer, i, status);
  }
  return status;
}
