// weft example: the kernels of a two-layer MLP's training step
// (dp_kernels.c), over row-major f32 arrays. A layer's parameters are one
// buffer [w (in x out) | bias (out)], and its gradients the same layout, so
// each layer's gradients are one allreduce.
//
//   FORWARD      out = act(in w + bias)            workgroups: batch
//     bindings: in [batch][in], params, out [batch][out]
//     constants: batch, in, out, relu (1: max(0, .))
//   OUTPUT_GRAD  dy = (y - target) * scale         workgroups: batch
//     bindings: y, target, dy ([batch][out] each)
//     constants: batch, out, scale (f32 bits)
//   WEIGHT_GRAD  grads = [a^T g | sum_b g]         workgroups: in + 1
//     bindings: a [batch][in], g [batch][out], grads
//     constants: batch, in, out
//   INPUT_GRAD   dz = (g w^T) * (h > 0)            workgroups: batch
//     bindings: g [batch][out], params, h [batch][in], dz [batch][in]
//     constants: batch, in, out
//   SGD          params -= rate * grads            workgroups:
//     bindings: params, grads                      ceil(count / 1024)
//     constants: count, rate (f32 bits)
#ifndef WEFT_EXAMPLES_DP_TRAIN_DP_KERNELS_H_
#define WEFT_EXAMPLES_DP_TRAIN_DP_KERNELS_H_

#include "weft/kernel_abi.h"

typedef enum dp_kernel_e {
  DP_KERNEL_FORWARD = 0,
  DP_KERNEL_OUTPUT_GRAD,
  DP_KERNEL_WEIGHT_GRAD,
  DP_KERNEL_INPUT_GRAD,
  DP_KERNEL_SGD,
  DP_KERNEL_COUNT,
} dp_kernel_t;

#define DP_SGD_VALUES_PER_WORKGROUP 1024u

// For weft_executable_source_cpu_static.
const weft_kernel_library_t* dp_kernels_query(uint32_t abi_version);

#endif  // WEFT_EXAMPLES_DP_TRAIN_DP_KERNELS_H_
