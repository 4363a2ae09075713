// weft VM: stacks (see stack.h).
#include "vm/stack.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

void weft_vm_stack_initialize(weft_allocator_t allocator, uint32_t max_depth,
                              weft_vm_stack_t* out_stack) {
  memset(out_stack, 0, sizeof(*out_stack));
  out_stack->allocator = allocator;
  out_stack->max_depth = max_depth ? max_depth : WEFT_VM_STACK_DEFAULT_MAX_DEPTH;
  out_stack->wait.allocator = allocator;
  weft_vm_wait_frame_clear(&out_stack->wait);
}

void weft_vm_stack_deinitialize(weft_vm_stack_t* stack) {
  while (stack->depth) weft_vm_stack_pop(stack);
  weft_vm_wait_frame_clear(&stack->wait);
  weft_status_free(stack->wait_result);
  weft_allocator_free(stack->allocator, stack->values);
  weft_allocator_free(stack->allocator, stack->frames);
  weft_allocator_free(stack->allocator, stack->scalars);
  weft_allocator_free(stack->allocator, stack->refs);
  memset(stack, 0, sizeof(*stack));
}

// Grows |*array| (of |element_size| elements, |*capacity| of them) to hold
// at least |needed|, doubling.
static weft_status_t weft_vm_stack_grow_slow(weft_allocator_t allocator,
                                             void** array, size_t element_size,
                                             uint32_t* capacity,
                                             uint64_t needed) {
  // The first allocation is what is needed (at least 2): a suspended
  // invocation should hold little more than its frames use.
  uint64_t new_capacity = *capacity ? (uint64_t)*capacity * 2
                                     : (needed > 2 ? needed : 2);
  while (new_capacity < needed) new_capacity *= 2;
  if (new_capacity > UINT32_MAX) {
    return WEFT_STATUS(RESOURCE_EXHAUSTED,
                       "a VM stack of %" PRIu64 " registers or frames",
                       needed);
  }
  weft_status_t status = weft_allocator_realloc(
      allocator, (size_t)new_capacity * element_size, array);
  if (weft_status_is_ok(status)) *capacity = (uint32_t)new_capacity;
  return status;
}

// Inline: a call that fits costs a compare.
static inline weft_status_t weft_vm_stack_grow(weft_allocator_t allocator,
                                               void** array,
                                               size_t element_size,
                                               uint32_t* capacity,
                                               uint64_t needed) {
  return needed <= *capacity
             ? WEFT_OK
             : weft_vm_stack_grow_slow(allocator, array, element_size,
                                       capacity, needed);
}

// The error weft_vm_stack_check_depth returns (out of line).
static weft_status_t weft_vm_stack_depth_error(const weft_vm_stack_t* stack,
                                               const char* module_name,
                                               const char* function_name) {
  return WEFT_STATUS(RESOURCE_EXHAUSTED,
                     "VM stack overflow: calling '%s.%s' at depth %" PRIu32
                     " (the limit is %" PRIu32 " frames)",
                     module_name ? module_name : "?",
                     function_name ? function_name : "?", stack->depth,
                     stack->max_depth);
}

// RESOURCE_EXHAUSTED when one more frame would pass the depth bound.
static inline weft_status_t weft_vm_stack_check_depth(
    const weft_vm_stack_t* stack, const char* module_name,
    const char* function_name) {
  return stack->depth < stack->max_depth
             ? WEFT_OK
             : weft_vm_stack_depth_error(stack, module_name, function_name);
}

weft_status_t weft_vm_stack_push(weft_vm_stack_t* stack,
                                 const weft_vm_instance_t* instance,
                                 const weft_vm_bytecode_t* bytecode,
                                 const weft_vm_function_t* function,
                                 uint32_t result_operands,
                                 weft_vm_frame_t** out_frame) {
  *out_frame = NULL;
  weft_status_t depth_status =
      weft_vm_stack_check_depth(stack, bytecode->name, function->name);
  if (!weft_status_is_ok(depth_status)) return depth_status;
  weft_status_t status = weft_vm_stack_grow(
      stack->allocator, (void**)&stack->frames, sizeof(*stack->frames),
      &stack->frame_capacity, (uint64_t)stack->depth + 1);
  if (weft_status_is_ok(status)) {
    status = weft_vm_stack_grow(
        stack->allocator, (void**)&stack->scalars, sizeof(*stack->scalars),
        &stack->scalar_capacity,
        (uint64_t)stack->scalar_top + function->scalar_count);
  }
  if (weft_status_is_ok(status)) {
    status = weft_vm_stack_grow(stack->allocator, (void**)&stack->refs,
                                sizeof(*stack->refs), &stack->ref_capacity,
                                (uint64_t)stack->ref_top + function->ref_count);
  }
  if (weft_status_is_ok(status)) {
    weft_vm_frame_t* frame = &stack->frames[stack->depth++];
    memset(frame, 0, sizeof(*frame));
    frame->instance = instance;
    frame->bytecode = bytecode;
    frame->function = function;
    frame->pc = 0;
    frame->scalar_base = stack->scalar_top;
    frame->ref_base = stack->ref_top;
    frame->result_operands = result_operands;
    if (function->scalar_count) {
      memset(stack->scalars + stack->scalar_top, 0,
             function->scalar_count * sizeof(*stack->scalars));
    }
    if (function->ref_count) {
      memset(stack->refs + stack->ref_top, 0,
             function->ref_count * sizeof(*stack->refs));
    }
    stack->scalar_top += function->scalar_count;
    stack->ref_top += function->ref_count;
    *out_frame = frame;
  }
  return status;
}

weft_status_t weft_vm_stack_push_native(weft_vm_stack_t* stack,
                                        const weft_vm_instance_t* instance,
                                        uint32_t function_index,
                                        uint32_t result_operands,
                                        weft_vm_frame_t** out_frame) {
  *out_frame = NULL;
  const weft_vm_module_t* module = instance->module;
  const weft_vm_native_function_t* native =
      &module->native->functions[function_index];
  const weft_vm_parsed_signature_t* signature =
      &module->native_parsed[function_index];
  weft_status_t status =
      weft_vm_stack_check_depth(stack, module->name, native->name);
  const uint32_t value_count =
      (uint32_t)signature->arg_count + signature->ret_count;
  if (weft_status_is_ok(status)) {
    status = weft_vm_stack_grow(
        stack->allocator, (void**)&stack->frames, sizeof(*stack->frames),
        &stack->frame_capacity, (uint64_t)stack->depth + 1);
  }
  if (weft_status_is_ok(status)) {
    status = weft_vm_stack_grow(stack->allocator, (void**)&stack->values,
                                sizeof(*stack->values), &stack->value_capacity,
                                (uint64_t)stack->value_top + value_count);
  }
  if (weft_status_is_ok(status)) {
    weft_vm_frame_t* frame = &stack->frames[stack->depth++];
    memset(frame, 0, sizeof(*frame));
    frame->instance = instance;
    frame->native = native;
    frame->native_signature = signature;
    frame->values_base = stack->value_top;
    frame->scalar_base = stack->scalar_top;
    frame->ref_base = stack->ref_top;
    frame->result_operands = result_operands;
    // Element by element: a function of no arguments and no results may
    // find |stack->values| still NULL.
    for (uint32_t i = 0; i < value_count; ++i) {
      stack->values[stack->value_top + i] =
          weft_vm_value_zero((weft_vm_value_type_t)signature->types[i]);
    }
    stack->value_top += value_count;
    *out_frame = frame;
  }
  return status;
}

void weft_vm_stack_pop(weft_vm_stack_t* stack) {
  weft_vm_frame_t* frame = &stack->frames[stack->depth - 1];
  for (uint32_t i = frame->ref_base; i < stack->ref_top; ++i) {
    weft_vm_ref_release(stack->refs[i]);
  }
  if (frame->native) {
    for (uint32_t i = frame->values_base; i < stack->value_top; ++i) {
      if (stack->values[i].type == WEFT_VM_TYPE_REF) {
        weft_vm_ref_release(stack->values[i].ref);
      }
    }
    stack->value_top = frame->values_base;
  }
  stack->scalar_top = frame->scalar_base;
  stack->ref_top = frame->ref_base;
  --stack->depth;
}

weft_status_t weft_vm_stack_annotate(const weft_vm_stack_t* stack,
                                     weft_status_t status) {
  if (weft_status_is_ok(status)) return status;
  char trace[1024];
  size_t used = 0;
  trace[0] = '\0';
  for (uint32_t i = stack->depth; i > 0 && used + 1 < sizeof(trace); --i) {
    const weft_vm_frame_t* frame = &stack->frames[i - 1];
    int written;
    if (frame->native) {
      written = snprintf(trace + used, sizeof(trace) - used, "%sat %s.%s (native)",
                         used ? ", " : "", frame->instance->module->name,
                         frame->native->name);
      if (written < 0) break;
      used += (size_t)written;
      if (used >= sizeof(trace)) used = sizeof(trace) - 1;
      continue;
    }
    const weft_vm_bytecode_t* bytecode = frame->bytecode;
    // The instruction running in this frame: the one before |pc|.
    const uint32_t index = frame->pc ? frame->pc - 1 : 0;
    const uint64_t code_index = (uint64_t)frame->function->code_offset + index;
    uint32_t line = 0;
    if (bytecode->lines && code_index < bytecode->code_count) {
      line = bytecode->lines[code_index];
    }
    if (line) {
      written = snprintf(trace + used, sizeof(trace) - used,
                         "%sat %s.%s (%s:%" PRIu32 ")", used ? ", " : "",
                         bytecode->name ? bytecode->name : "?",
                         frame->function->name ? frame->function->name : "?",
                         bytecode->source_name ? bytecode->source_name : "?",
                         line);
    } else {
      written = snprintf(trace + used, sizeof(trace) - used,
                         "%sat %s.%s (instruction %" PRIu32 ")",
                         used ? ", " : "",
                         bytecode->name ? bytecode->name : "?",
                         frame->function->name ? frame->function->name : "?",
                         index);
    }
    if (written < 0) break;
    used += (size_t)written;
    if (used >= sizeof(trace)) used = sizeof(trace) - 1;
  }
  return weft_status_annotate(status, "VM stack: %s", trace);
}
