// weft cuda driver: reusable command buffers as CUDA graphs.
//
// At end() a reusable command buffer recorded for a cuda device gets a
// graph holder (its driver data). The first execute builds the graph from
// the recorded commands with every reference resolved (direct ones, the
// binding table's, queue-ordered memory committed by then), instantiates
// it once, and launches it. Later executes recompute each node's
// parameters from their binding table and update only the nodes whose
// parameters changed (cuGraphExec*NodeSetParams), so rebinding costs one
// driver call per changed node and never a re-instantiation.
//
// The graph is a chain: a memset that clears the graph's status slots (one
// per dispatch), the commands in order (one stream's semantics: each after
// the last), and a copy of the slots into the execute op's own, whose
// destination is updated per launch. Kernels of the graph report into the
// graph's slots, so a failure in one launch is never lost to the next
// (launches of one graph exec run one after the other).
//
// One-shot command buffers are replayed onto the stream instead: building
// and instantiating a graph for one launch costs more than it saves.
#ifndef WEFT_DRIVERS_CUDA_CUDA_GRAPH_H_
#define WEFT_DRIVERS_CUDA_CUDA_GRAPH_H_

#include "drivers/cuda/cuda_device.h"
#include "weft/command_buffer.h"

typedef struct weft_cuda_graph_t weft_cuda_graph_t;

// The device's command_buffer_finalize hook: attaches a graph holder to a
// reusable |command_buffer|; nothing for one-shot ones.
weft_status_t weft_cuda_graph_finalize(weft_device_t* device,
                                       weft_command_buffer_t* command_buffer);

// The holder |command_buffer| has for |device|'s domain, or NULL (replay).
weft_cuda_graph_t* weft_cuda_graph_lookup(
    weft_cuda_device_t* device, const weft_command_buffer_t* command_buffer);

// Launches |graph| on |stream| with |binding_table|, building
// or updating it first, and copying its status slots to |status_slots| (one
// per dispatch of the command buffer) at the end. Called with the device mutex held and the context current.
weft_status_t weft_cuda_graph_launch(weft_cuda_device_t* device,
                                     CUstream stream,
                                     weft_cuda_graph_t* graph,
                                     const weft_command_buffer_t* command_buffer,
                                     weft_binding_table_t binding_table,
                                     CUdeviceptr status_slots);

#endif  // WEFT_DRIVERS_CUDA_CUDA_GRAPH_H_
