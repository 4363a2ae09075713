// weft example: the MLP's kernel library, built as a shared object that
// weft-run loads with --kernels.
//
//   "dense": y[n] = act(b[n] + sum_k x[k] * w[k][n]) for the workgroup's
//            64 outputs. Bindings: 0 x (f32, K), 1 w (f32, K x N, row
//            major), 2 b (f32, N), 3 y (f32, N). Constants: K, N, relu
//            (1: act = max(0, .), 0: identity).
#include <stddef.h>
#include <stdint.h>

#include "weft/kernel_abi.h"

#define MLP_OUTPUTS_PER_WORKGROUP 64

static int mlp_dense(const weft_dispatch_state_t* dispatch,
                     const weft_workgroup_state_t* workgroup) {
  const uint32_t k_count = dispatch->constants[0];
  const uint32_t n_count = dispatch->constants[1];
  const uint32_t relu = dispatch->constants[2];
  const float* x = (const float*)dispatch->binding_ptrs[0];
  const float* w = (const float*)dispatch->binding_ptrs[1];
  const float* b = (const float*)dispatch->binding_ptrs[2];
  float* y = (float*)dispatch->binding_ptrs[3];
  // Every binding must hold what the constants say.
  if (dispatch->binding_lengths[0] < (size_t)k_count * sizeof(float) ||
      dispatch->binding_lengths[1] <
          (size_t)k_count * n_count * sizeof(float) ||
      dispatch->binding_lengths[2] < (size_t)n_count * sizeof(float) ||
      dispatch->binding_lengths[3] < (size_t)n_count * sizeof(float)) {
    return 1;
  }
  const uint32_t first = workgroup->workgroup_id[0] * MLP_OUTPUTS_PER_WORKGROUP;
  uint32_t last = first + MLP_OUTPUTS_PER_WORKGROUP;
  if (last > n_count) last = n_count;
  for (uint32_t n = first; n < last; ++n) {
    float sum = b[n];
    for (uint32_t k = 0; k < k_count; ++k) {
      sum += x[k] * w[(size_t)k * n_count + n];
    }
    y[n] = (relu && sum < 0.0f) ? 0.0f : sum;
  }
  return 0;
}

static const weft_kernel_def_t kMlpKernels[] = {
    {"dense", mlp_dense, 4, 3, {MLP_OUTPUTS_PER_WORKGROUP, 1, 1}, 0},
};

static const weft_kernel_library_t kMlpLibrary = {
    WEFT_KERNEL_ABI_VERSION, "mlp_kernels", 1, kMlpKernels};

// The one symbol the library exports (WEFT_KERNEL_LIBRARY_QUERY_SYMBOL).
__attribute__((visibility("default"))) const weft_kernel_library_t*
weft_kernel_library_query(uint32_t abi_version);

const weft_kernel_library_t* weft_kernel_library_query(uint32_t abi_version) {
  return abi_version == WEFT_KERNEL_ABI_VERSION ? &kMlpLibrary : NULL;
}
