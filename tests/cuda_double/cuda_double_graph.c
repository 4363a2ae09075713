// weft's CUDA test double: graphs and their executables. A TEST DOUBLE,
// never shipped or installed (see cuda_double.h).
//
// A graph is an array of nodes in the order added; a node depends only on
// earlier nodes. Instantiation copies the nodes' parameters into an exec
// and fixes a topological order; each cuGraphLaunch copies the exec's
// parameters as they are at the call into one stream task, so later
// cuGraphExec*SetParams calls change later launches only. As in CUDA, a
// launch runs after every earlier launch of the same exec, on whichever
// stream (a ticket order the exec and its queued launches share).
#include <stdlib.h>
#include <string.h>

#include "cuda_double_impl.h"

typedef enum weft_cuda_double_node_kind_e {
  WEFT_CUDA_DOUBLE_NODE_EMPTY,
  WEFT_CUDA_DOUBLE_NODE_KERNEL,
  WEFT_CUDA_DOUBLE_NODE_FILL,
  WEFT_CUDA_DOUBLE_NODE_COPY,
} weft_cuda_double_node_kind_t;

// How a copy endpoint's memory is checked: as device memory, as unified
// memory (host memory allowed), or not at all (host memory).
typedef enum weft_cuda_double_endpoint_kind_e {
  WEFT_CUDA_DOUBLE_ENDPOINT_HOST,
  WEFT_CUDA_DOUBLE_ENDPOINT_DEVICE,
  WEFT_CUDA_DOUBLE_ENDPOINT_UNIFIED,
} weft_cuda_double_endpoint_kind_t;

// What a node does, self-contained (copied into execs and launches).
typedef struct weft_cuda_double_node_params_t {
  weft_cuda_double_node_kind_t kind;
  union {
    weft_cuda_double_launch_t kernel;
    struct {
      CUdeviceptr dst;
      uint32_t value;
      uint32_t element_size;
      size_t count;
    } fill;
    struct {
      uintptr_t dst;
      uintptr_t src;
      weft_cuda_double_endpoint_kind_t dst_kind;
      weft_cuda_double_endpoint_kind_t src_kind;
      size_t size;
    } copy;
  };
} weft_cuda_double_node_params_t;

struct CUgraphNode_st {
  uint32_t magic;
  CUgraph graph;
  // The node's position in its graph, and in every exec made from it.
  uint32_t index;
  weft_cuda_double_node_params_t params;
  // Indices of the (earlier) nodes it depends on.
  uint32_t dependency_count;
  uint32_t* dependencies;
};

struct CUgraph_st {
  uint32_t magic;
  // CUDA graphs are not thread-safe objects; the lock keeps a misuse from
  // being a data race all the same.
  pthread_mutex_t mutex;
  CUgraphNode* nodes;
  uint32_t node_count;
  uint32_t node_capacity;
};

// The order of an exec's launches: each takes a ticket at its
// cuGraphLaunch and runs once every earlier ticket ran. Shared by the exec
// and its queued launches (an exec may be destroyed before they run).
typedef struct weft_cuda_double_launch_order_t {
  pthread_mutex_t mutex;
  pthread_cond_t done_changed;
  uint64_t next_ticket;
  uint64_t done;  // tickets that ran
  uint32_t ref_count;
} weft_cuda_double_launch_order_t;

static weft_cuda_double_launch_order_t* weft_cuda_double_launch_order_create(
    void) {
  weft_cuda_double_launch_order_t* order =
      (weft_cuda_double_launch_order_t*)calloc(1, sizeof(*order));
  if (order) {
    pthread_mutex_init(&order->mutex, NULL);
    pthread_cond_init(&order->done_changed, NULL);
    order->ref_count = 1;
  }
  return order;
}

static void weft_cuda_double_launch_order_release(
    weft_cuda_double_launch_order_t* order) {
  pthread_mutex_lock(&order->mutex);
  const bool last = --order->ref_count == 0;
  pthread_mutex_unlock(&order->mutex);
  if (last) {
    pthread_cond_destroy(&order->done_changed);
    pthread_mutex_destroy(&order->mutex);
    free(order);
  }
}

struct CUgraphExec_st {
  uint32_t magic;
  weft_cuda_double_launch_order_t* launch_order;
  CUcontext context;
  // The graph it was made from: only compared with nodes' graphs, never
  // read (it may be destroyed).
  CUgraph graph;
  // Guards params (set against launch).
  pthread_mutex_t mutex;
  uint32_t node_count;
  uint32_t kernel_node_count;
  weft_cuda_double_node_params_t* params;
  // A topological order of the node indices.
  uint32_t* order;
};

// One launch: the exec's parameters and order at the call, in the same
// allocation after the task.
typedef struct weft_cuda_double_graph_task_t {
  weft_cuda_double_task_t base;
  weft_cuda_double_launch_order_t* launch_order;  // a reference
  uint64_t ticket;
  uint32_t node_count;
  weft_cuda_double_node_params_t* params;
  uint32_t* order;
} weft_cuda_double_graph_task_t;

//===----------------------------------------------------------------------===//
// Node parameters
//===----------------------------------------------------------------------===//

static CUresult weft_cuda_double_node_check_ranges(
    const weft_cuda_double_node_params_t* params) {
  CUresult result = CUDA_SUCCESS;
  if (params->kind == WEFT_CUDA_DOUBLE_NODE_FILL) {
    result = weft_cuda_double__check_device_range(
        params->fill.dst, params->fill.count * params->fill.element_size);
  } else if (params->kind == WEFT_CUDA_DOUBLE_NODE_COPY) {
    const uintptr_t addresses[2] = {params->copy.dst, params->copy.src};
    const weft_cuda_double_endpoint_kind_t kinds[2] = {params->copy.dst_kind,
                                                       params->copy.src_kind};
    for (int i = 0; i < 2 && result == CUDA_SUCCESS; ++i) {
      if (kinds[i] == WEFT_CUDA_DOUBLE_ENDPOINT_DEVICE) {
        result = weft_cuda_double__check_device_range(addresses[i],
                                                      params->copy.size);
      } else if (kinds[i] == WEFT_CUDA_DOUBLE_ENDPOINT_UNIFIED) {
        result = weft_cuda_double__check_unified_range(addresses[i],
                                                       params->copy.size);
      } else if (params->copy.size && addresses[i] == 0) {
        result = CUDA_ERROR_INVALID_VALUE;
      }
    }
  }
  return result;
}

// A kernel node's parameters: a function of the current context (not a
// CUkernel), checked and captured as cuLaunchKernel does.
static CUresult weft_cuda_double_kernel_node_params(
    CUcontext context, const CUDA_KERNEL_NODE_PARAMS* api,
    weft_cuda_double_node_params_t* out_params) {
  if (!api || !api->func) return CUDA_ERROR_INVALID_VALUE;
  out_params->kind = WEFT_CUDA_DOUBLE_NODE_KERNEL;
  return weft_cuda_double__launch_capture(
      context, api->func, api->gridDimX, api->gridDimY, api->gridDimZ,
      api->blockDimX, api->blockDimY, api->blockDimZ, api->sharedMemBytes,
      api->kernelParams, api->extra, &out_params->kernel);
}

// A memset node's parameters: 1, 2 or 4-byte elements in one row
// (height 1), on the current context.
static CUresult weft_cuda_double_fill_node_params(
    CUcontext context, const CUDA_MEMSET_NODE_PARAMS* api, CUcontext ctx,
    weft_cuda_double_node_params_t* out_params) {
  if (!api) return CUDA_ERROR_INVALID_VALUE;
  if (ctx != context) return CUDA_ERROR_INVALID_CONTEXT;
  if (api->height != 1) return CUDA_ERROR_NOT_SUPPORTED;
  if ((api->elementSize != 1 && api->elementSize != 2 &&
       api->elementSize != 4) ||
      api->dst % api->elementSize != 0 ||
      api->width > SIZE_MAX / api->elementSize) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  out_params->kind = WEFT_CUDA_DOUBLE_NODE_FILL;
  out_params->fill.dst = api->dst;
  out_params->fill.value = api->value;
  out_params->fill.element_size = api->elementSize;
  out_params->fill.count = api->width;
  return weft_cuda_double_node_check_ranges(out_params);
}

// One side of a 1D copy: its address (|x| bytes in) and how to check it.
static CUresult weft_cuda_double_copy_endpoint(
    CUmemorytype type, const void* host, CUdeviceptr device, size_t x,
    uintptr_t* out_address, weft_cuda_double_endpoint_kind_t* out_kind) {
  switch (type) {
    case CU_MEMORYTYPE_HOST:
      *out_address = (uintptr_t)host + x;
      *out_kind = WEFT_CUDA_DOUBLE_ENDPOINT_HOST;
      return CUDA_SUCCESS;
    case CU_MEMORYTYPE_DEVICE:
      *out_address = (uintptr_t)device + x;
      *out_kind = WEFT_CUDA_DOUBLE_ENDPOINT_DEVICE;
      return CUDA_SUCCESS;
    case CU_MEMORYTYPE_UNIFIED:
      // Unified copies name their memory through the device pointer.
      *out_address = (uintptr_t)device + x;
      *out_kind = WEFT_CUDA_DOUBLE_ENDPOINT_UNIFIED;
      return CUDA_SUCCESS;
    default:
      return CUDA_ERROR_NOT_SUPPORTED;  // arrays
  }
}

// A memcpy node's parameters: 1D copies only (one row, one slice, no Y, Z
// or LOD offsets) between host, device or unified memory.
static CUresult weft_cuda_double_copy_node_params(
    CUcontext context, const CUDA_MEMCPY3D* api, CUcontext ctx,
    weft_cuda_double_node_params_t* out_params) {
  if (!api) return CUDA_ERROR_INVALID_VALUE;
  if (ctx != context) return CUDA_ERROR_INVALID_CONTEXT;
  if (api->Height != 1 || api->Depth != 1 || api->srcY || api->srcZ ||
      api->srcLOD || api->dstY || api->dstZ || api->dstLOD) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  out_params->kind = WEFT_CUDA_DOUBLE_NODE_COPY;
  out_params->copy.size = api->WidthInBytes;
  CUresult result = weft_cuda_double_copy_endpoint(
      api->dstMemoryType, api->dstHost, api->dstDevice, api->dstXInBytes,
      &out_params->copy.dst, &out_params->copy.dst_kind);
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double_copy_endpoint(
        api->srcMemoryType, api->srcHost, api->srcDevice, api->srcXInBytes,
        &out_params->copy.src, &out_params->copy.src_kind);
  }
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double_node_check_ranges(out_params);
  }
  return result;
}

static void weft_cuda_double_node_run(
    const weft_cuda_double_node_params_t* params) {
  switch (params->kind) {
    case WEFT_CUDA_DOUBLE_NODE_KERNEL:
      weft_cuda_double__launch_run(&params->kernel);
      break;
    case WEFT_CUDA_DOUBLE_NODE_FILL:
      weft_cuda_double__fill((void*)(uintptr_t)params->fill.dst,
                             params->fill.value, params->fill.element_size,
                             params->fill.count);
      break;
    case WEFT_CUDA_DOUBLE_NODE_COPY:
      if (params->copy.size) {
        memcpy((void*)params->copy.dst, (const void*)params->copy.src,
               params->copy.size);
      }
      break;
    case WEFT_CUDA_DOUBLE_NODE_EMPTY:
      break;
  }
}

//===----------------------------------------------------------------------===//
// Graphs
//===----------------------------------------------------------------------===//

static bool weft_cuda_double_graph_is_valid(CUgraph graph) {
  return graph && graph->magic == WEFT_CUDA_DOUBLE_MAGIC_GRAPH;
}

static bool weft_cuda_double_node_is_valid(CUgraphNode node) {
  return node && node->magic == WEFT_CUDA_DOUBLE_MAGIC_NODE;
}

WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuGraphCreate(CUgraph* phGraph,
                                                       unsigned int flags) {
  CUcontext context = NULL;
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuGraphCreate, &context);
  if (result == CUDA_SUCCESS && (!phGraph || flags != 0)) {
    result = CUDA_ERROR_INVALID_VALUE;
  }
  CUgraph graph = NULL;
  if (result == CUDA_SUCCESS) {
    graph = (CUgraph)calloc(1, sizeof(*graph));
    if (!graph) result = CUDA_ERROR_OUT_OF_MEMORY;
  }
  if (result == CUDA_SUCCESS) {
    graph->magic = WEFT_CUDA_DOUBLE_MAGIC_GRAPH;
    pthread_mutex_init(&graph->mutex, NULL);
    *phGraph = graph;
  }
  return result;
}

WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuGraphDestroy(CUgraph hGraph) {
  CUcontext context = NULL;
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuGraphDestroy, &context);
  if (result == CUDA_SUCCESS && !weft_cuda_double_graph_is_valid(hGraph)) {
    result = CUDA_ERROR_INVALID_VALUE;
  }
  if (result == CUDA_SUCCESS) {
    hGraph->magic = 0;
    for (uint32_t i = 0; i < hGraph->node_count; ++i) {
      hGraph->nodes[i]->magic = 0;
      free(hGraph->nodes[i]->dependencies);
      free(hGraph->nodes[i]);
    }
    free(hGraph->nodes);
    pthread_mutex_destroy(&hGraph->mutex);
    free(hGraph);
  }
  return result;
}

// Appends a node doing |params| after |dependencies| (nodes of |graph|).
static CUresult weft_cuda_double_graph_add(
    CUgraph graph, const CUgraphNode* dependencies, size_t dependency_count,
    const weft_cuda_double_node_params_t* params, CUgraphNode* out_node) {
  if (!out_node || !weft_cuda_double_graph_is_valid(graph) ||
      (dependency_count && !dependencies) || dependency_count > UINT32_MAX) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  CUgraphNode node = (CUgraphNode)calloc(1, sizeof(*node));
  uint32_t* indices =
      dependency_count ? (uint32_t*)calloc(dependency_count, sizeof(*indices))
                       : NULL;
  CUresult result = CUDA_SUCCESS;
  if (!node || (dependency_count && !indices)) {
    result = CUDA_ERROR_OUT_OF_MEMORY;
  }
  pthread_mutex_lock(&graph->mutex);
  for (size_t i = 0; i < dependency_count && result == CUDA_SUCCESS; ++i) {
    CUgraphNode dependency = dependencies[i];
    if (!weft_cuda_double_node_is_valid(dependency) ||
        dependency->graph != graph) {
      result = CUDA_ERROR_INVALID_VALUE;
    } else {
      indices[i] = dependency->index;
    }
  }
  if (result == CUDA_SUCCESS && graph->node_count == graph->node_capacity) {
    uint32_t capacity = graph->node_capacity ? graph->node_capacity * 2 : 8;
    CUgraphNode* nodes =
        (CUgraphNode*)realloc(graph->nodes, capacity * sizeof(*nodes));
    if (nodes) {
      graph->nodes = nodes;
      graph->node_capacity = capacity;
    } else {
      result = CUDA_ERROR_OUT_OF_MEMORY;
    }
  }
  if (result == CUDA_SUCCESS) {
    node->magic = WEFT_CUDA_DOUBLE_MAGIC_NODE;
    node->graph = graph;
    node->index = graph->node_count;
    node->params = *params;
    node->dependency_count = (uint32_t)dependency_count;
    node->dependencies = indices;
    graph->nodes[graph->node_count++] = node;
    *out_node = node;
  }
  pthread_mutex_unlock(&graph->mutex);
  if (result != CUDA_SUCCESS) {
    free(indices);
    free(node);
  }
  return result;
}

WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuGraphAddKernelNode(
    CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
    size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS* nodeParams) {
  CUcontext context = NULL;
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuGraphAddKernelNode, &context);
  weft_cuda_double_node_params_t params;
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double_kernel_node_params(context, nodeParams, &params);
  }
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double_graph_add(hGraph, dependencies, numDependencies,
                                        &params, phGraphNode);
  }
  return result;
}

WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuGraphAddMemsetNode(
    CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
    size_t numDependencies, const CUDA_MEMSET_NODE_PARAMS* memsetParams,
    CUcontext ctx) {
  CUcontext context = NULL;
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuGraphAddMemsetNode, &context);
  weft_cuda_double_node_params_t params;
  if (result == CUDA_SUCCESS) {
    result =
        weft_cuda_double_fill_node_params(context, memsetParams, ctx, &params);
  }
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double_graph_add(hGraph, dependencies, numDependencies,
                                        &params, phGraphNode);
  }
  return result;
}

WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuGraphAddMemcpyNode(
    CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
    size_t numDependencies, const CUDA_MEMCPY3D* copyParams, CUcontext ctx) {
  CUcontext context = NULL;
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuGraphAddMemcpyNode, &context);
  weft_cuda_double_node_params_t params;
  if (result == CUDA_SUCCESS) {
    result =
        weft_cuda_double_copy_node_params(context, copyParams, ctx, &params);
  }
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double_graph_add(hGraph, dependencies, numDependencies,
                                        &params, phGraphNode);
  }
  return result;
}

WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI
cuGraphAddEmptyNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                    const CUgraphNode* dependencies, size_t numDependencies) {
  CUcontext context = NULL;
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuGraphAddEmptyNode, &context);
  weft_cuda_double_node_params_t params;
  memset(&params, 0, sizeof(params));
  params.kind = WEFT_CUDA_DOUBLE_NODE_EMPTY;
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double_graph_add(hGraph, dependencies, numDependencies,
                                        &params, phGraphNode);
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Execs
//===----------------------------------------------------------------------===//

static bool weft_cuda_double_exec_is_valid(CUgraphExec exec) {
  return exec && exec->magic == WEFT_CUDA_DOUBLE_MAGIC_EXEC;
}

// Fills |order| with a topological order of |graph|'s nodes (Kahn's
// algorithm). Ready nodes run latest-added first: independent nodes then
// run in the reverse of the order they were added, so a driver that left
// out a dependency sees it. |scratch| has room for 2 * node_count entries.
// Called with the graph's mutex held.
static void weft_cuda_double_graph_order_locked(CUgraph graph,
                                                uint32_t* scratch,
                                                uint32_t* order) {
  uint32_t count = graph->node_count;
  // Each node's dependencies not yet ordered, and the ready nodes.
  uint32_t* pending = scratch;
  uint32_t* ready = scratch + count;
  uint32_t ready_count = 0;
  for (uint32_t i = 0; i < count; ++i) {
    pending[i] = graph->nodes[i]->dependency_count;
    if (pending[i] == 0) ready[ready_count++] = i;
  }
  uint32_t ordered = 0;
  while (ready_count) {
    uint32_t node = ready[--ready_count];
    order[ordered++] = node;
    // Only later nodes can depend on |node|.
    for (uint32_t later = node + 1; later < count; ++later) {
      const CUgraphNode successor = graph->nodes[later];
      for (uint32_t d = 0; d < successor->dependency_count; ++d) {
        if (successor->dependencies[d] == node && --pending[later] == 0) {
          ready[ready_count++] = later;
        }
      }
    }
  }
}

WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuGraphInstantiate(
    CUgraphExec* phGraphExec, CUgraph hGraph, unsigned long long flags) {
  CUcontext context = NULL;
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuGraphInstantiate, &context);
  if (result == CUDA_SUCCESS &&
      (!phGraphExec || !weft_cuda_double_graph_is_valid(hGraph))) {
    result = CUDA_ERROR_INVALID_VALUE;
  }
  // Instantiation flags (auto-free, device launch, upload, priority) ask
  // for what the double does not model.
  if (result == CUDA_SUCCESS && flags != 0) result = CUDA_ERROR_NOT_SUPPORTED;
  if (result != CUDA_SUCCESS) return result;

  CUgraphExec exec = (CUgraphExec)calloc(1, sizeof(*exec));
  weft_cuda_double_launch_order_t* launch_order =
      weft_cuda_double_launch_order_create();
  pthread_mutex_lock(&hGraph->mutex);
  uint32_t count = hGraph->node_count;
  size_t slots = count ? count : 1;
  weft_cuda_double_node_params_t* params =
      (weft_cuda_double_node_params_t*)calloc(slots, sizeof(*params));
  uint32_t* order = (uint32_t*)calloc(slots, sizeof(*order));
  uint32_t* scratch = (uint32_t*)calloc(2 * slots, sizeof(*scratch));
  if (!exec || !params || !order || !scratch || !launch_order) {
    result = CUDA_ERROR_OUT_OF_MEMORY;
  } else {
    for (uint32_t i = 0; i < count; ++i) {
      params[i] = hGraph->nodes[i]->params;
      if (params[i].kind == WEFT_CUDA_DOUBLE_NODE_KERNEL) {
        ++exec->kernel_node_count;
      }
    }
    weft_cuda_double_graph_order_locked(hGraph, scratch, order);
  }
  pthread_mutex_unlock(&hGraph->mutex);
  free(scratch);
  if (result == CUDA_SUCCESS) {
    exec->magic = WEFT_CUDA_DOUBLE_MAGIC_EXEC;
    exec->launch_order = launch_order;
    exec->context = context;
    exec->graph = hGraph;
    pthread_mutex_init(&exec->mutex, NULL);
    exec->node_count = count;
    exec->params = params;
    exec->order = order;
    *phGraphExec = exec;
  } else {
    if (launch_order) weft_cuda_double_launch_order_release(launch_order);
    free(order);
    free(params);
    free(exec);
  }
  return result;
}

// Launches already queued keep running: they own a copy of the exec.
WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI
cuGraphExecDestroy(CUgraphExec hGraphExec) {
  CUcontext context = NULL;
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuGraphExecDestroy, &context);
  if (result == CUDA_SUCCESS && !weft_cuda_double_exec_is_valid(hGraphExec)) {
    result = CUDA_ERROR_INVALID_VALUE;
  }
  if (result == CUDA_SUCCESS) {
    hGraphExec->magic = 0;
    weft_cuda_double_launch_order_release(hGraphExec->launch_order);
    free(hGraphExec->order);
    free(hGraphExec->params);
    pthread_mutex_destroy(&hGraphExec->mutex);
    free(hGraphExec);
  }
  return result;
}

static void weft_cuda_double_graph_task_run(weft_cuda_double_task_t* base) {
  weft_cuda_double_graph_task_t* task = (weft_cuda_double_graph_task_t*)base;
  weft_cuda_double_launch_order_t* order = task->launch_order;
  pthread_mutex_lock(&order->mutex);
  while (order->done != task->ticket) {
    pthread_cond_wait(&order->done_changed, &order->mutex);
  }
  pthread_mutex_unlock(&order->mutex);
  for (uint32_t i = 0; i < task->node_count; ++i) {
    weft_cuda_double_node_run(&task->params[task->order[i]]);
  }
  pthread_mutex_lock(&order->mutex);
  ++order->done;
  pthread_cond_broadcast(&order->done_changed);
  pthread_mutex_unlock(&order->mutex);
  weft_cuda_double_launch_order_release(order);
}

// Memory the nodes touch is checked again here: it may have been freed
// since the node was made.
WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuGraphLaunch(CUgraphExec hGraphExec,
                                                       CUstream hStream) {
  CUcontext context = NULL;
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuGraphLaunch, &context);
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double__check_stream(hStream, context);
  }
  if (result == CUDA_SUCCESS && !weft_cuda_double_exec_is_valid(hGraphExec)) {
    result = CUDA_ERROR_INVALID_VALUE;
  }
  if (result == CUDA_SUCCESS && hGraphExec->context != context) {
    result = CUDA_ERROR_INVALID_CONTEXT;
  }
  if (result != CUDA_SUCCESS) return result;

  // The task, then the parameters, then the order, in one allocation.
  uint32_t count = hGraphExec->node_count;
  size_t params_offset = sizeof(weft_cuda_double_graph_task_t);
  size_t order_offset =
      params_offset + count * sizeof(weft_cuda_double_node_params_t);
  weft_cuda_double_graph_task_t* task =
      (weft_cuda_double_graph_task_t*)weft_cuda_double__task_allocate(
          order_offset + count * sizeof(uint32_t),
          weft_cuda_double_graph_task_run);
  if (!task) return CUDA_ERROR_OUT_OF_MEMORY;
  task->node_count = count;
  task->params = (weft_cuda_double_node_params_t*)((char*)task + params_offset);
  task->order = (uint32_t*)((char*)task + order_offset);
  pthread_mutex_lock(&hGraphExec->mutex);
  if (count) {
    memcpy(task->params, hGraphExec->params, count * sizeof(*task->params));
    memcpy(task->order, hGraphExec->order, count * sizeof(*task->order));
  }
  uint32_t kernel_count = hGraphExec->kernel_node_count;
  pthread_mutex_unlock(&hGraphExec->mutex);
  for (uint32_t i = 0; i < count && result == CUDA_SUCCESS; ++i) {
    result = weft_cuda_double_node_check_ranges(&task->params[i]);
  }
  if (result == CUDA_SUCCESS) {
    weft_cuda_double_launch_order_t* order = hGraphExec->launch_order;
    pthread_mutex_lock(&order->mutex);
    ++order->ref_count;
    task->launch_order = order;
    task->ticket = order->next_ticket++;
    pthread_mutex_unlock(&order->mutex);
    weft_cuda_double__stream_enqueue(hStream, &task->base);
    weft_cuda_double__count_launches(kernel_count);
  } else {
    free(task);
  }
  return result;
}

// The exec's parameters for |node| (a node of the graph |exec| was made
// from, of |kind|), replaced by |params|.
static CUresult weft_cuda_double_exec_set(
    CUgraphExec exec, CUgraphNode node, weft_cuda_double_node_kind_t kind,
    const weft_cuda_double_node_params_t* params) {
  if (!weft_cuda_double_exec_is_valid(exec) ||
      !weft_cuda_double_node_is_valid(node) || node->graph != exec->graph ||
      node->index >= exec->node_count) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  CUresult result = CUDA_SUCCESS;
  pthread_mutex_lock(&exec->mutex);
  if (exec->params[node->index].kind != kind) {
    result = CUDA_ERROR_INVALID_VALUE;
  } else {
    exec->params[node->index] = *params;
  }
  pthread_mutex_unlock(&exec->mutex);
  return result;
}

WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI
cuGraphExecKernelNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                               const CUDA_KERNEL_NODE_PARAMS* nodeParams) {
  CUcontext context = NULL;
  CUresult result =
      WEFT_CUDA_DOUBLE_ENTER(cuGraphExecKernelNodeSetParams, &context);
  weft_cuda_double_node_params_t params;
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double_kernel_node_params(context, nodeParams, &params);
  }
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double_exec_set(hGraphExec, hNode,
                                       WEFT_CUDA_DOUBLE_NODE_KERNEL, &params);
  }
  return result;
}

WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuGraphExecMemsetNodeSetParams(
    CUgraphExec hGraphExec, CUgraphNode hNode,
    const CUDA_MEMSET_NODE_PARAMS* memsetParams, CUcontext ctx) {
  CUcontext context = NULL;
  CUresult result =
      WEFT_CUDA_DOUBLE_ENTER(cuGraphExecMemsetNodeSetParams, &context);
  weft_cuda_double_node_params_t params;
  if (result == CUDA_SUCCESS) {
    result =
        weft_cuda_double_fill_node_params(context, memsetParams, ctx, &params);
  }
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double_exec_set(hGraphExec, hNode,
                                       WEFT_CUDA_DOUBLE_NODE_FILL, &params);
  }
  return result;
}

WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI
cuGraphExecMemcpyNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                               const CUDA_MEMCPY3D* copyParams, CUcontext ctx) {
  CUcontext context = NULL;
  CUresult result =
      WEFT_CUDA_DOUBLE_ENTER(cuGraphExecMemcpyNodeSetParams, &context);
  weft_cuda_double_node_params_t params;
  if (result == CUDA_SUCCESS) {
    result =
        weft_cuda_double_copy_node_params(context, copyParams, ctx, &params);
  }
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double_exec_set(hGraphExec, hNode,
                                       WEFT_CUDA_DOUBLE_NODE_COPY, &params);
  }
  return result;
}
