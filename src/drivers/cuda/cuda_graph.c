// weft cuda driver: command buffers as CUDA graphs (see cuda_graph.h).
#include "drivers/cuda/cuda_graph.h"

#include <stdio.h>
#include <string.h>

#include "drivers/cuda/cuda_buffer.h"
#include "drivers/cuda/cuda_executable.h"
#include "hal/command_buffer_impl.h"

typedef enum weft_cuda_node_kind_e {
  WEFT_CUDA_NODE_EMPTY = 0,
  WEFT_CUDA_NODE_MEMSET = 1,
  WEFT_CUDA_NODE_COPY = 2,
  WEFT_CUDA_NODE_KERNEL = 3,
} weft_cuda_node_kind_t;

// One command's node: what it was built or last updated with.
typedef struct weft_cuda_graph_node_t {
  CUgraphNode node;
  weft_cuda_node_kind_t kind;
  CUDA_MEMSET_NODE_PARAMS memset;
  CUDA_MEMCPY3D copy;
  // KERNEL: binding pointers, binding lengths, then the status word
  // (|value_count| of them, in the graph's value array), and the kernel.
  uint64_t* values;
  uint32_t value_count;
  const weft_cuda_kernel_t* kernel;
  uint32_t grid[3];
} weft_cuda_graph_node_t;

struct weft_cuda_graph_t {
  weft_allocator_t allocator;
  weft_domain_t domain;
  weft_cuda_event_pool_t* pool;  // retained: the context
  // Built at the first execute.
  CUgraph graph;
  CUgraphExec exec;
  // The graph's status slots (device memory), one per dispatch.
  CUdeviceptr status;
  uint32_t status_slot_count;
  CUgraphNode status_copy_node;
  CUDA_MEMCPY3D status_copy;
  uint32_t node_count;  // one per command
  weft_cuda_graph_node_t* nodes;
  // Every kernel node's values, then as many again for recomputing.
  uint64_t* values;
  uint32_t value_count;
};

static void weft_cuda_graph_release_built(weft_cuda_graph_t* graph);

static void weft_cuda_graph_destroy(void* data) {
  weft_cuda_graph_t* graph = (weft_cuda_graph_t*)data;
  weft_cuda_event_pool_t* pool = graph->pool;
  const weft_cuda_symbols_t* symbols = pool->symbols;
  if (graph->graph &&
      symbols->cuCtxPushCurrent(pool->context) == CUDA_SUCCESS) {
    weft_cuda_graph_release_built(graph);
    CUcontext popped = NULL;
    symbols->cuCtxPopCurrent(&popped);
  }
  weft_allocator_free(graph->allocator, graph);
  weft_cuda_event_pool_release(pool);
}

weft_status_t weft_cuda_graph_finalize(weft_device_t* base_device,
                                       weft_command_buffer_t* command_buffer) {
  if (weft_command_buffer_mode(command_buffer) &
      WEFT_COMMAND_BUFFER_MODE_ONE_SHOT) {
    return WEFT_OK;
  }
  weft_cuda_device_t* device = weft_cuda_device_cast(base_device);
  weft_cuda_graph_t* graph = NULL;
  weft_status_t status = weft_allocator_malloc(
      base_device->host_allocator, sizeof(*graph), (void**)&graph);
  if (weft_status_is_ok(status)) {
    memset(graph, 0, sizeof(*graph));
    graph->allocator = base_device->host_allocator;
    graph->domain = base_device->domain;
    graph->pool = device->event_pool;
    weft_atomic_fetch_add(&graph->pool->ref_count, 1u, memory_order_relaxed);
    weft_command_buffer_set_driver_data(command_buffer, graph,
                                        weft_cuda_graph_destroy);
  }
  return status;
}

weft_cuda_graph_t* weft_cuda_graph_lookup(
    weft_cuda_device_t* device, const weft_command_buffer_t* command_buffer) {
  weft_cuda_graph_t* graph = (weft_cuda_graph_t*)weft_command_buffer_driver_data(
      command_buffer, weft_cuda_graph_destroy);
  return graph && graph->domain == device->base.domain ? graph : NULL;
}

//===----------------------------------------------------------------------===//
// Node parameters
//===----------------------------------------------------------------------===//

static void weft_cuda_copy_params(CUdeviceptr source, const void* host_source,
                                  CUdeviceptr target, size_t length,
                                  CUDA_MEMCPY3D* out_params) {
  memset(out_params, 0, sizeof(*out_params));
  if (host_source) {
    out_params->srcMemoryType = CU_MEMORYTYPE_HOST;
    out_params->srcHost = host_source;
  } else {
    out_params->srcMemoryType = CU_MEMORYTYPE_DEVICE;
    out_params->srcDevice = source;
  }
  out_params->dstMemoryType = CU_MEMORYTYPE_DEVICE;
  out_params->dstDevice = target;
  out_params->WidthInBytes = length;
  out_params->Height = 1;
  out_params->Depth = 1;
}

// Computes the node of |command| under |table| into |out_node| (kernel
// values into |values|).
static weft_status_t weft_cuda_graph_compute(const weft_command_t* command,
                                             weft_binding_table_t table,
                                             CUdeviceptr status_word,
                                             uint64_t* values,
                                             weft_cuda_graph_node_t* out_node) {
  memset(out_node, 0, sizeof(*out_node));
  out_node->kind = WEFT_CUDA_NODE_EMPTY;
  out_node->values = values;
  weft_status_t status = WEFT_OK;
  switch (command->type) {
    case WEFT_COMMAND_TYPE_BARRIER:
      break;
    case WEFT_COMMAND_TYPE_FILL: {
      weft_buffer_binding_t target;
      CUdeviceptr pointer = 0;
      status = weft_command_buffer_resolve_fill(&command->fill, table,
                                                "queue_execute", &target);
      if (weft_status_is_ok(status)) {
        status = weft_cuda_buffer_device_pointer(target.buffer, target.offset,
                                                 &pointer);
      }
      if (weft_status_is_ok(status) && target.length > 0) {
        const uint32_t size = command->fill.pattern_length;
        out_node->kind = WEFT_CUDA_NODE_MEMSET;
        out_node->memset.dst = pointer;
        out_node->memset.value = command->fill.pattern;
        out_node->memset.elementSize = size;
        out_node->memset.width = (size_t)target.length / size;
        out_node->memset.height = 1;
      }
      break;
    }
    case WEFT_COMMAND_TYPE_UPDATE: {
      weft_buffer_binding_t target;
      CUdeviceptr pointer = 0;
      status = weft_command_buffer_resolve_ref(command->update.target, table,
                                               "queue_execute", &target);
      if (weft_status_is_ok(status)) {
        status = weft_cuda_buffer_device_pointer(target.buffer, target.offset,
                                                 &pointer);
      }
      if (weft_status_is_ok(status) && target.length > 0) {
        out_node->kind = WEFT_CUDA_NODE_COPY;
        weft_cuda_copy_params(0, command->update.source, pointer,
                              (size_t)target.length, &out_node->copy);
      }
      break;
    }
    case WEFT_COMMAND_TYPE_COPY: {
      weft_buffer_binding_t source;
      weft_buffer_binding_t target;
      CUdeviceptr from = 0;
      CUdeviceptr to = 0;
      status = weft_command_buffer_resolve_copy(&command->copy, table,
                                                "queue_execute", &source,
                                                &target);
      if (weft_status_is_ok(status)) {
        status = weft_cuda_buffer_device_pointer(source.buffer, source.offset,
                                                 &from);
      }
      if (weft_status_is_ok(status)) {
        status = weft_cuda_buffer_device_pointer(target.buffer, target.offset,
                                                 &to);
      }
      if (weft_status_is_ok(status) && source.length > 0) {
        out_node->kind = WEFT_CUDA_NODE_COPY;
        weft_cuda_copy_params(from, NULL, to, (size_t)source.length,
                              &out_node->copy);
      }
      break;
    }
    case WEFT_COMMAND_TYPE_DISPATCH: {
      const weft_command_dispatch_t* dispatch = &command->dispatch;
      const weft_cuda_kernel_t* kernel = weft_cuda_executable_kernel(
          dispatch->executable, dispatch->kernel_ordinal);
      if (!kernel) {
        status = WEFT_STATUS(INVALID_ARGUMENT,
                             "executable '%s' is not a cuda executable",
                             weft_executable_name(dispatch->executable));
        break;
      }
      const uint32_t count = dispatch->binding_count;
      for (uint32_t b = 0; weft_status_is_ok(status) && b < count; ++b) {
        weft_buffer_binding_t binding;
        CUdeviceptr pointer = 0;
        status = weft_command_buffer_resolve_ref(dispatch->bindings[b], table,
                                                 "queue_execute", &binding);
        if (weft_status_is_ok(status)) {
          status = weft_cuda_buffer_device_pointer(binding.buffer,
                                                   binding.offset, &pointer);
        }
        values[b] = pointer;
        values[count + b] = binding.length;
      }
      values[2 * count] = status_word;  // this dispatch's own slot
      out_node->value_count = 2 * count + 1;
      out_node->kernel = kernel;
      memcpy(out_node->grid, dispatch->workgroup_count,
             sizeof(out_node->grid));
      if (out_node->grid[0] && out_node->grid[1] && out_node->grid[2]) {
        out_node->kind = WEFT_CUDA_NODE_KERNEL;
      }
      break;
    }
  }
  return status;
}

// The kernel node parameters of |node| (|params| receives the pointers to
// its values and |command|'s constants, |constants| their 4-byte copies).
static void weft_cuda_graph_kernel_params(const weft_command_t* command,
                                          const weft_cuda_graph_node_t* node,
                                          void** params, uint32_t* constants,
                                          CUDA_KERNEL_NODE_PARAMS* out_params) {
  const weft_command_dispatch_t* dispatch = &command->dispatch;
  const uint32_t count = dispatch->binding_count;
  uint32_t next = 0;
  for (uint32_t i = 0; i < 2 * count; ++i) params[next++] = &node->values[i];
  for (uint32_t i = 0; i < dispatch->constant_count; ++i) {
    constants[i] = dispatch->constants[i];
    params[next++] = &constants[i];
  }
  params[next] = &node->values[2 * count];
  memset(out_params, 0, sizeof(*out_params));
  out_params->func = node->kernel->function;
  out_params->gridDimX = node->grid[0];
  out_params->gridDimY = node->grid[1];
  out_params->gridDimZ = node->grid[2];
  out_params->blockDimX = node->kernel->block_size[0];
  out_params->blockDimY = node->kernel->block_size[1];
  out_params->blockDimZ = node->kernel->block_size[2];
  out_params->sharedMemBytes = node->kernel->shared_memory_size;
  out_params->kernelParams = params;
}

// Parameters of kernel nodes are built on the stack up to this count.
#define WEFT_CUDA_GRAPH_MAX_PARAMS 256

//===----------------------------------------------------------------------===//
// Building and updating
//===----------------------------------------------------------------------===//

static void weft_cuda_graph_release_built(weft_cuda_graph_t* graph) {
  const weft_cuda_symbols_t* symbols = graph->pool->symbols;
  if (graph->exec) symbols->cuGraphExecDestroy(graph->exec);
  if (graph->graph) symbols->cuGraphDestroy(graph->graph);
  if (graph->status) symbols->cuMemFree(graph->status);
  weft_allocator_free(graph->allocator, graph->nodes);
  weft_allocator_free(graph->allocator, graph->values);
  graph->exec = NULL;
  graph->graph = NULL;
  graph->status = 0;
  graph->nodes = NULL;
  graph->values = NULL;
  graph->node_count = 0;
  graph->value_count = 0;
}

// Builds and instantiates the graph of |commands| under |table|.
static weft_status_t weft_cuda_graph_build(
    weft_cuda_device_t* device, weft_cuda_graph_t* graph,
    const weft_command_buffer_t* command_buffer,
    const weft_command_t* commands, uint32_t command_count,
    weft_binding_table_t table) {
  const weft_cuda_symbols_t* symbols = device->symbols;
  uint32_t value_count = 0;
  for (uint32_t i = 0; i < command_count; ++i) {
    if (commands[i].type == WEFT_COMMAND_TYPE_DISPATCH) {
      value_count += 2 * commands[i].dispatch.binding_count + 1;
    }
  }
  weft_status_t status = weft_allocator_malloc_array(
      graph->allocator, command_count ? command_count : 1,
      sizeof(*graph->nodes), (void**)&graph->nodes);
  if (weft_status_is_ok(status)) {
    graph->node_count = command_count;
    // Twice: the built values, then room to recompute into.
    status = weft_allocator_malloc_array(graph->allocator,
                                         2 * (size_t)value_count + 1,
                                         sizeof(uint64_t),
                                         (void**)&graph->values);
    graph->value_count = value_count;
  }
  uint32_t dispatch_count = 0;
  for (uint32_t i = 0; i < command_count; ++i) {
    dispatch_count += commands[i].type == WEFT_COMMAND_TYPE_DISPATCH;
  }
  graph->status_slot_count = dispatch_count ? dispatch_count : 1;
  if (weft_status_is_ok(status)) {
    status = WEFT_CUDA_CALL(
        symbols,
        cuMemAlloc(&graph->status,
                   graph->status_slot_count * sizeof(weft_cuda_status_t)));
  }
  if (weft_status_is_ok(status)) {
    status = WEFT_CUDA_CALL(symbols, cuGraphCreate(&graph->graph, 0));
  }
  CUgraphNode last = NULL;
  if (weft_status_is_ok(status)) {
    const CUDA_MEMSET_NODE_PARAMS clear = {
        .dst = graph->status,
        .value = 0,
        .elementSize = 4,
        .width = graph->status_slot_count * sizeof(weft_cuda_status_t) / 4,
        .height = 1};
    status = WEFT_CUDA_CALL(
        symbols, cuGraphAddMemsetNode(&last, graph->graph, NULL, 0, &clear,
                                      device->context));
  }
  uint32_t next_value = 0;
  uint32_t dispatch_index = 0;
  for (uint32_t i = 0; weft_status_is_ok(status) && i < command_count; ++i) {
    weft_cuda_graph_node_t* node = &graph->nodes[i];
    status = weft_cuda_graph_compute(
        &commands[i], table,
        graph->status + dispatch_index * sizeof(weft_cuda_status_t),
        graph->values + next_value, node);
    dispatch_index += commands[i].type == WEFT_COMMAND_TYPE_DISPATCH;
    if (!weft_status_is_ok(status)) {
      // As on every driver: the command that met it is named.
      status = weft_command_buffer_annotate_command(command_buffer, i, status);
    }
    if (weft_status_is_ok(status)) next_value += node->value_count;
    const size_t dependency_count = last ? 1 : 0;
    if (weft_status_is_ok(status)) {
      switch (node->kind) {
        case WEFT_CUDA_NODE_EMPTY:
          status = WEFT_CUDA_CALL(
              symbols, cuGraphAddEmptyNode(&node->node, graph->graph, &last,
                                           dependency_count));
          break;
        case WEFT_CUDA_NODE_MEMSET:
          status = WEFT_CUDA_CALL(
              symbols,
              cuGraphAddMemsetNode(&node->node, graph->graph, &last,
                                   dependency_count, &node->memset,
                                   device->context));
          break;
        case WEFT_CUDA_NODE_COPY:
          status = WEFT_CUDA_CALL(
              symbols,
              cuGraphAddMemcpyNode(&node->node, graph->graph, &last,
                                   dependency_count, &node->copy,
                                   device->context));
          break;
        case WEFT_CUDA_NODE_KERNEL: {
          void* params[WEFT_CUDA_GRAPH_MAX_PARAMS];
          uint32_t constants[WEFT_CUDA_GRAPH_MAX_PARAMS];
          if (node->value_count + commands[i].dispatch.constant_count >
              WEFT_CUDA_GRAPH_MAX_PARAMS) {
            status = WEFT_STATUS(INVALID_ARGUMENT,
                                 "a dispatch of more than %u parameters",
                                 WEFT_CUDA_GRAPH_MAX_PARAMS);
            break;
          }
          CUDA_KERNEL_NODE_PARAMS kernel_params;
          weft_cuda_graph_kernel_params(&commands[i], node, params, constants,
                                        &kernel_params);
          status = WEFT_CUDA_CALL(
              symbols,
              cuGraphAddKernelNode(&node->node, graph->graph, &last,
                                   dependency_count, &kernel_params));
          break;
        }
      }
    }
    if (weft_status_is_ok(status)) last = node->node;
  }
  if (weft_status_is_ok(status)) {
    // The destination is the launching op's status word (set per launch);
    // the host's pinned status words are the first one for now.
    weft_cuda_copy_params(
        graph->status, NULL, device->status_slots_device,
        graph->status_slot_count * sizeof(weft_cuda_status_t),
        &graph->status_copy);
    status = WEFT_CUDA_CALL(
        symbols, cuGraphAddMemcpyNode(&graph->status_copy_node, graph->graph,
                                      &last, 1, &graph->status_copy,
                                      device->context));
  }
  if (weft_status_is_ok(status)) {
    status = WEFT_CUDA_CALL(symbols,
                            cuGraphInstantiate(&graph->exec, graph->graph, 0));
  }
  if (!weft_status_is_ok(status)) weft_cuda_graph_release_built(graph);
  return status;
}

// Recomputes every node under |table| and updates the ones that changed.
// Sets |*out_rebuild| when a node changed kind or an update was refused
// (the caller rebuilds the graph).
static weft_status_t weft_cuda_graph_update(
    weft_cuda_device_t* device, weft_cuda_graph_t* graph,
    const weft_command_buffer_t* command_buffer,
    const weft_command_t* commands, weft_binding_table_t table,
    bool* out_rebuild) {
  *out_rebuild = false;
  const weft_cuda_symbols_t* symbols = device->symbols;
  uint64_t* scratch = graph->values + graph->value_count;
  weft_status_t status = WEFT_OK;
  uint32_t dispatch_index = 0;
  for (uint32_t i = 0;
       weft_status_is_ok(status) && !*out_rebuild && i < graph->node_count;
       ++i) {
    weft_cuda_graph_node_t* node = &graph->nodes[i];
    weft_cuda_graph_node_t fresh;
    status = weft_cuda_graph_compute(
        &commands[i], table,
        graph->status + dispatch_index * sizeof(weft_cuda_status_t), scratch,
        &fresh);
    dispatch_index += commands[i].type == WEFT_COMMAND_TYPE_DISPATCH;
    if (!weft_status_is_ok(status)) {
      status = weft_command_buffer_annotate_command(command_buffer, i, status);
      break;
    }
    if (fresh.kind != node->kind) {
      *out_rebuild = true;
      break;
    }
    CUresult result = CUDA_SUCCESS;
    switch (node->kind) {
      case WEFT_CUDA_NODE_EMPTY:
        break;
      case WEFT_CUDA_NODE_MEMSET:
        if (memcmp(&fresh.memset, &node->memset, sizeof(fresh.memset)) != 0) {
          result = symbols->cuGraphExecMemsetNodeSetParams(
              graph->exec, node->node, &fresh.memset, device->context);
          node->memset = fresh.memset;
        }
        break;
      case WEFT_CUDA_NODE_COPY:
        if (memcmp(&fresh.copy, &node->copy, sizeof(fresh.copy)) != 0) {
          result = symbols->cuGraphExecMemcpyNodeSetParams(
              graph->exec, node->node, &fresh.copy, device->context);
          node->copy = fresh.copy;
        }
        break;
      case WEFT_CUDA_NODE_KERNEL:
        if (memcmp(fresh.values, node->values,
                   node->value_count * sizeof(uint64_t)) != 0) {
          memcpy(node->values, fresh.values,
                 node->value_count * sizeof(uint64_t));
          void* params[WEFT_CUDA_GRAPH_MAX_PARAMS];
          uint32_t constants[WEFT_CUDA_GRAPH_MAX_PARAMS];
          CUDA_KERNEL_NODE_PARAMS kernel_params;
          weft_cuda_graph_kernel_params(&commands[i], node, params, constants,
                                        &kernel_params);
          result = symbols->cuGraphExecKernelNodeSetParams(
              graph->exec, node->node, &kernel_params);
        }
        break;
    }
    // CUDA refuses some updates (another context's memory, a changed
    // shape): build the graph again instead.
    if (result != CUDA_SUCCESS) *out_rebuild = true;
  }
  return status;
}

weft_status_t weft_cuda_graph_launch(weft_cuda_device_t* device,
                                     CUstream stream,
                                     weft_cuda_graph_t* graph,
                                     const weft_command_buffer_t* command_buffer,
                                     weft_binding_table_t binding_table,
                                     CUdeviceptr status_word) {
  uint32_t command_count = 0;
  const weft_command_t* commands =
      weft_command_buffer_commands(command_buffer, &command_count);
  weft_status_t status = WEFT_OK;
  if (graph->exec) {
    bool rebuild = false;
    status = weft_cuda_graph_update(device, graph, command_buffer, commands,
                                    binding_table, &rebuild);
    if (weft_status_is_ok(status) && rebuild) {
      weft_cuda_graph_release_built(graph);
    }
  }
  if (weft_status_is_ok(status) && !graph->exec) {
    status = weft_cuda_graph_build(device, graph, command_buffer, commands,
                                   command_count, binding_table);
  }
  const weft_cuda_symbols_t* symbols = device->symbols;
  if (weft_status_is_ok(status) &&
      graph->status_copy.dstDevice != status_word) {
    graph->status_copy.dstDevice = status_word;
    status = WEFT_CUDA_CALL(
        symbols, cuGraphExecMemcpyNodeSetParams(graph->exec,
                                                graph->status_copy_node,
                                                &graph->status_copy,
                                                device->context));
  }
  if (weft_status_is_ok(status)) {
    status = WEFT_CUDA_CALL(symbols,
                            cuGraphLaunch(graph->exec, stream));
  }
  return status;
}
