// weft example: the data-parallel training step's CPU kernels
// (dp_kernels.h). Every kernel checks that its bindings hold what its
// constants say (returns 1 otherwise). Plain loops: the example is about
// ordering and communication, not kernel speed.
#include "dp_kernels.h"

#include <string.h>

static float bits_f32(uint32_t bits) {
  float value;
  memcpy(&value, &bits, sizeof(value));
  return value;
}

static int too_small(const weft_dispatch_state_t* dispatch, uint32_t binding,
                     size_t floats) {
  return dispatch->binding_lengths[binding] < floats * sizeof(float);
}

// out[b][j] = act(bias[j] + sum_i in[b][i] * w[i][j]); one workgroup per
// row b. params = [w (in x out) | bias (out)].
static int dp_forward(const weft_dispatch_state_t* d,
                      const weft_workgroup_state_t* wg) {
  const uint32_t batch = d->constants[0], in = d->constants[1],
                 out = d->constants[2], relu = d->constants[3];
  if (too_small(d, 0, (size_t)batch * in) ||
      too_small(d, 1, (size_t)in * out + out) ||
      too_small(d, 2, (size_t)batch * out)) {
    return 1;
  }
  const uint32_t b = wg->workgroup_id[0];
  const float* x = (const float*)d->binding_ptrs[0] + (size_t)b * in;
  const float* w = (const float*)d->binding_ptrs[1];
  const float* bias = w + (size_t)in * out;
  float* y = (float*)d->binding_ptrs[2] + (size_t)b * out;
  for (uint32_t j = 0; j < out; ++j) y[j] = bias[j];
  for (uint32_t i = 0; i < in; ++i) {
    const float xi = x[i];
    const float* row = w + (size_t)i * out;
    for (uint32_t j = 0; j < out; ++j) y[j] += xi * row[j];
  }
  if (relu) {
    for (uint32_t j = 0; j < out; ++j) y[j] = y[j] < 0.0f ? 0.0f : y[j];
  }
  return 0;
}

// dy[b][j] = (y[b][j] - t[b][j]) * scale; one workgroup per row.
static int dp_output_grad(const weft_dispatch_state_t* d,
                          const weft_workgroup_state_t* wg) {
  const uint32_t batch = d->constants[0], out = d->constants[1];
  const float scale = bits_f32(d->constants[2]);
  const size_t n = (size_t)batch * out;
  if (too_small(d, 0, n) || too_small(d, 1, n) || too_small(d, 2, n)) return 1;
  const size_t first = (size_t)wg->workgroup_id[0] * out;
  const float* y = (const float*)d->binding_ptrs[0] + first;
  const float* t = (const float*)d->binding_ptrs[1] + first;
  float* dy = (float*)d->binding_ptrs[2] + first;
  for (uint32_t j = 0; j < out; ++j) dy[j] = (y[j] - t[j]) * scale;
  return 0;
}

// grads = [dw (in x out) | dbias (out)]: dw[i][j] = sum_b a[b][i] g[b][j]
// (workgroup i < in), dbias[j] = sum_b g[b][j] (workgroup in).
static int dp_weight_grad(const weft_dispatch_state_t* d,
                          const weft_workgroup_state_t* wg) {
  const uint32_t batch = d->constants[0], in = d->constants[1],
                 out = d->constants[2];
  if (too_small(d, 0, (size_t)batch * in) ||
      too_small(d, 1, (size_t)batch * out) ||
      too_small(d, 2, (size_t)in * out + out)) {
    return 1;
  }
  const uint32_t i = wg->workgroup_id[0];
  const float* a = (const float*)d->binding_ptrs[0];
  const float* g = (const float*)d->binding_ptrs[1];
  float* row = (float*)d->binding_ptrs[2] + (size_t)i * out;
  for (uint32_t j = 0; j < out; ++j) row[j] = 0.0f;
  for (uint32_t b = 0; b < batch; ++b) {
    const float ai = i < in ? a[(size_t)b * in + i] : 1.0f;
    const float* gb = g + (size_t)b * out;
    for (uint32_t j = 0; j < out; ++j) row[j] += ai * gb[j];
  }
  return 0;
}

// dz[b][i] = (sum_j g[b][j] w[i][j]) * (h[b][i] > 0); one workgroup per
// row b.
static int dp_input_grad(const weft_dispatch_state_t* d,
                         const weft_workgroup_state_t* wg) {
  const uint32_t batch = d->constants[0], in = d->constants[1],
                 out = d->constants[2];
  if (too_small(d, 0, (size_t)batch * out) ||
      too_small(d, 1, (size_t)in * out + out) ||
      too_small(d, 2, (size_t)batch * in) ||
      too_small(d, 3, (size_t)batch * in)) {
    return 1;
  }
  const uint32_t b = wg->workgroup_id[0];
  const float* g = (const float*)d->binding_ptrs[0] + (size_t)b * out;
  const float* w = (const float*)d->binding_ptrs[1];
  const float* h = (const float*)d->binding_ptrs[2] + (size_t)b * in;
  float* dz = (float*)d->binding_ptrs[3] + (size_t)b * in;
  for (uint32_t i = 0; i < in; ++i) {
    float sum = 0.0f;
    const float* row = w + (size_t)i * out;
    for (uint32_t j = 0; j < out; ++j) sum += g[j] * row[j];
    dz[i] = h[i] > 0.0f ? sum : 0.0f;
  }
  return 0;
}

// params[k] -= rate * grads[k] over the workgroup's 1024 values.
static int dp_sgd(const weft_dispatch_state_t* d,
                  const weft_workgroup_state_t* wg) {
  const uint32_t count = d->constants[0];
  const float rate = bits_f32(d->constants[1]);
  if (too_small(d, 0, count) || too_small(d, 1, count)) return 1;
  float* params = (float*)d->binding_ptrs[0];
  const float* grads = (const float*)d->binding_ptrs[1];
  const uint32_t first = wg->workgroup_id[0] * DP_SGD_VALUES_PER_WORKGROUP;
  uint32_t last = first + DP_SGD_VALUES_PER_WORKGROUP;
  if (last > count) last = count;
  for (uint32_t k = first; k < last; ++k) params[k] -= rate * grads[k];
  return 0;
}

static const weft_kernel_def_t kDpKernels[DP_KERNEL_COUNT] = {
    [DP_KERNEL_FORWARD] = {"forward", dp_forward, 3, 4, {1, 1, 1}, 0},
    [DP_KERNEL_OUTPUT_GRAD] = {"output_grad", dp_output_grad, 3, 3,
                               {1, 1, 1}, 0},
    [DP_KERNEL_WEIGHT_GRAD] = {"weight_grad", dp_weight_grad, 3, 3,
                               {1, 1, 1}, 0},
    [DP_KERNEL_INPUT_GRAD] = {"input_grad", dp_input_grad, 4, 3, {1, 1, 1},
                              0},
    [DP_KERNEL_SGD] = {"sgd", dp_sgd, 2, 2, {DP_SGD_VALUES_PER_WORKGROUP, 1, 1},
                       0},
};

static const weft_kernel_library_t kDpLibrary = {
    WEFT_KERNEL_ABI_VERSION, "dp_kernels", DP_KERNEL_COUNT, kDpKernels};

const weft_kernel_library_t* dp_kernels_query(uint32_t abi_version) {
  return abi_version == WEFT_KERNEL_ABI_VERSION ? &kDpLibrary : NULL;
}
