// weft: inline dispatch (see inline_dispatch.h).
#include "hal/local/inline_dispatch.h"

#include <stdalign.h>
#include <stddef.h>
#include <string.h>

#include "hal/buffer_impl.h"
#include "hal/executable_impl.h"
#include "hal/local/cpu_executable.h"

// Bindings up to this count live on the stack; above it one allocation
// holds the mappings, pointers and lengths.
#define WEFT_INLINE_DISPATCH_STACK_BINDINGS 16
// Kernel scratch memory up to this size lives on the stack.
#define WEFT_INLINE_DISPATCH_STACK_LOCAL_MEMORY 1024

// Maps every binding with the read/write access its buffer allows, filling
// |mappings|, |ptrs| and |lengths|. Zero-length bindings are not mapped
// (NULL pointer, length 0). Stops at the first failure; mappings made so
// far stay in |mappings| for the caller to unmap (unmapping a zeroed
// mapping is a no-op).
static weft_status_t weft_inline_dispatch_map_bindings(
    const weft_kernel_def_t* kernel, uint32_t binding_count,
    const weft_buffer_binding_t* bindings, weft_buffer_mapping_t* mappings,
    void** ptrs, size_t* lengths) {
  weft_status_t status = WEFT_OK;
  for (uint32_t i = 0; weft_status_is_ok(status) && i < binding_count; ++i) {
    const weft_buffer_binding_t* binding = &bindings[i];
    ptrs[i] = NULL;
    lengths[i] = 0;
    if (binding->length == 0) continue;
    weft_memory_access_t access =
        weft_buffer_allowed_access(binding->buffer) &
        (WEFT_MEMORY_ACCESS_READ | WEFT_MEMORY_ACCESS_WRITE);
    status = weft_buffer_map_range_unchecked(binding->buffer, access,
                                             binding->offset, binding->length,
                                             "dispatch", &mappings[i]);
    if (weft_status_is_ok(status)) {
      ptrs[i] = mappings[i].contents;
      lengths[i] = (size_t)mappings[i].byte_length;
    } else {
      status = weft_status_annotate(
          status, "while mapping binding %u of kernel '%s'", i, kernel->name);
    }
  }
  return status;
}

// Runs every workgroup in x, y, z order; stops at the first failure.
static weft_status_t weft_inline_dispatch_run_workgroups(
    const weft_executable_t* executable, const weft_kernel_def_t* kernel,
    const weft_dispatch_state_t* dispatch_state, void* local_memory) {
  weft_workgroup_state_t workgroup_state;
  memset(&workgroup_state, 0, sizeof(workgroup_state));
  workgroup_state.processor_id = 0;
  workgroup_state.local_memory = local_memory;
  workgroup_state.local_memory_size = kernel->local_memory_size;
  const uint32_t* count = dispatch_state->workgroup_count;
  int result = 0;
  for (uint32_t z = 0; result == 0 && z < count[2]; ++z) {
    workgroup_state.workgroup_id[2] = z;
    for (uint32_t y = 0; result == 0 && y < count[1]; ++y) {
      workgroup_state.workgroup_id[1] = y;
      for (uint32_t x = 0; result == 0 && x < count[0]; ++x) {
        workgroup_state.workgroup_id[0] = x;
        result = kernel->fn(dispatch_state, &workgroup_state);
      }
    }
  }
  weft_status_t status = WEFT_OK;
  if (result != 0) {
    status = WEFT_STATUS(INTERNAL,
                         "kernel '%s' (library '%s') failed in workgroup "
                         "(%u, %u, %u) with code %d",
                         kernel->name, weft_executable_name(executable),
                         workgroup_state.workgroup_id[0],
                         workgroup_state.workgroup_id[1],
                         workgroup_state.workgroup_id[2], result);
  }
  return status;
}

// Runs a dispatch with at least one workgroup: maps, runs, unmaps.
static weft_status_t weft_inline_dispatch_nonempty(
    weft_executable_t* executable, const weft_kernel_def_t* kernel,
    const uint32_t workgroup_count[3], uint32_t constant_count,
    const uint32_t* constants, uint32_t binding_count,
    const weft_buffer_binding_t* bindings, weft_allocator_t allocator) {
  // Binding storage: on the stack for small counts, else one allocation.
  weft_buffer_mapping_t stack_mappings[WEFT_INLINE_DISPATCH_STACK_BINDINGS];
  void* stack_ptrs[WEFT_INLINE_DISPATCH_STACK_BINDINGS];
  size_t stack_lengths[WEFT_INLINE_DISPATCH_STACK_BINDINGS];
  weft_buffer_mapping_t* mappings = stack_mappings;
  void** ptrs = stack_ptrs;
  size_t* lengths = stack_lengths;
  void* binding_storage = NULL;
  weft_status_t status = WEFT_OK;
  if (binding_count > WEFT_INLINE_DISPATCH_STACK_BINDINGS) {
    size_t entry_size =
        sizeof(weft_buffer_mapping_t) + sizeof(void*) + sizeof(size_t);
    status = weft_allocator_malloc_array(allocator, binding_count, entry_size,
                                         &binding_storage);
    if (weft_status_is_ok(status)) {
      // Mappings first: their alignment is the strictest of the three.
      mappings = (weft_buffer_mapping_t*)binding_storage;
      ptrs = (void**)(mappings + binding_count);
      lengths = (size_t*)(ptrs + binding_count);
    }
  }
  uint32_t mapping_count = 0;
  if (weft_status_is_ok(status)) {
    mapping_count = binding_count;
    memset(mappings, 0, binding_count * sizeof(*mappings));
    status = weft_inline_dispatch_map_bindings(kernel, binding_count, bindings,
                                               mappings, ptrs, lengths);
  }

  // Scratch memory: on the stack when small, else allocated.
  alignas(64)
      uint8_t stack_local_memory[WEFT_INLINE_DISPATCH_STACK_LOCAL_MEMORY];
  void* local_memory = NULL;
  void* allocated_local_memory = NULL;
  if (weft_status_is_ok(status) && kernel->local_memory_size > 0) {
    if (kernel->local_memory_size <= sizeof(stack_local_memory)) {
      local_memory = stack_local_memory;
    } else {
      status = weft_allocator_malloc_uninitialized(
          allocator, kernel->local_memory_size, &allocated_local_memory);
      local_memory = allocated_local_memory;
    }
  }

  if (weft_status_is_ok(status)) {
    weft_dispatch_state_t dispatch_state;
    memset(&dispatch_state, 0, sizeof(dispatch_state));
    memcpy(dispatch_state.workgroup_count, workgroup_count,
           sizeof(dispatch_state.workgroup_count));
    memcpy(dispatch_state.workgroup_size, kernel->workgroup_size,
           sizeof(dispatch_state.workgroup_size));
    dispatch_state.constant_count = constant_count;
    dispatch_state.constants = constants;
    dispatch_state.binding_count = binding_count;
    dispatch_state.binding_ptrs = ptrs;
    dispatch_state.binding_lengths = lengths;
    status = weft_inline_dispatch_run_workgroups(executable, kernel,
                                                 &dispatch_state, local_memory);
  }

  for (uint32_t i = 0; i < mapping_count; ++i) {
    weft_buffer_unmap_range(&mappings[i]);
  }
  weft_allocator_free(allocator, allocated_local_memory);
  weft_allocator_free(allocator, binding_storage);
  return status;
}

weft_status_t weft_inline_dispatch(
    weft_executable_t* executable, uint32_t kernel_ordinal,
    const uint32_t workgroup_count[3], uint32_t constant_count,
    const uint32_t* constants, uint32_t binding_count,
    const weft_buffer_binding_t* bindings, weft_allocator_t allocator) {
  const weft_kernel_def_t* kernel =
      weft_cpu_executable_kernel(executable, kernel_ordinal);
  weft_status_t status = WEFT_OK;
  if (!kernel) {
    // Not validated: report it as validation would.
    status = weft_dispatch_validate(executable, kernel_ordinal, workgroup_count,
                                    constant_count, binding_count,
                                    "inline_dispatch");
  } else if (workgroup_count[0] != 0 && workgroup_count[1] != 0 &&
             workgroup_count[2] != 0) {
    status = weft_inline_dispatch_nonempty(executable, kernel, workgroup_count,
                                           constant_count, constants,
                                           binding_count, bindings, allocator);
  }
  return status;
}
