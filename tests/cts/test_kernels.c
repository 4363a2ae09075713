// The CTS test kernel library. Built twice: linked into the CTS (query
// function weft_cts_test_kernels_query) and as a loadable module exporting
// weft_kernel_library_query (WEFT_CTS_KERNELS_EXPORT_QUERY).
#include <stdlib.h>
#include <string.h>

#include "weft/kernel_abi.h"

#define ELEMENTS_PER_WORKGROUP 64u

static float bits_to_f32(uint32_t bits) {
  float value;
  memcpy(&value, &bits, sizeof(value));
  return value;
}

// out[i] = in[i] * scale + offset over this workgroup's 64 elements.
static int scale_offset(const weft_dispatch_state_t* dispatch,
                        const weft_workgroup_state_t* workgroup) {
  const float* in = (const float*)dispatch->binding_ptrs[0];
  float* out = (float*)dispatch->binding_ptrs[1];
  float scale = bits_to_f32(dispatch->constants[0]);
  float offset = bits_to_f32(dispatch->constants[1]);
  uint32_t count = dispatch->constants[2];
  uint32_t begin = workgroup->workgroup_id[0] * ELEMENTS_PER_WORKGROUP;
  uint32_t end = begin + ELEMENTS_PER_WORKGROUP;
  if (end > count) end = count;
  if ((size_t)count * sizeof(float) > dispatch->binding_lengths[0] ||
      (size_t)count * sizeof(float) > dispatch->binding_lengths[1]) {
    return 2;  // bindings too small for |count|
  }
  for (uint32_t i = begin; i < end; ++i) out[i] = in[i] * scale + offset;
  return 0;
}

// data[i] = abs(data[i]) for i in [first, first+count).
static int abs_range(const weft_dispatch_state_t* dispatch,
                     const weft_workgroup_state_t* workgroup) {
  int32_t* data = (int32_t*)dispatch->binding_ptrs[0];
  uint32_t first = dispatch->constants[0];
  uint32_t count = dispatch->constants[1];
  uint32_t begin = first + workgroup->workgroup_id[0] * ELEMENTS_PER_WORKGROUP;
  uint32_t end = begin + ELEMENTS_PER_WORKGROUP;
  if (end > first + count) end = first + count;
  if ((size_t)(first + count) * sizeof(int32_t) >
      dispatch->binding_lengths[0]) {
    return 2;
  }
  for (uint32_t i = begin; i < end; ++i) data[i] = abs(data[i]);
  return 0;
}

// Writes (x, y, z, flat index) of the workgroup at its flat index.
static int write_ids(const weft_dispatch_state_t* dispatch,
                     const weft_workgroup_state_t* workgroup) {
  uint32_t* out = (uint32_t*)dispatch->binding_ptrs[0];
  const uint32_t* id = workgroup->workgroup_id;
  const uint32_t* n = dispatch->workgroup_count;
  uint32_t flat = (id[2] * n[1] + id[1]) * n[0] + id[0];
  if ((size_t)(flat + 1) * 4 * sizeof(uint32_t) >
      dispatch->binding_lengths[0]) {
    return 2;
  }
  out[flat * 4 + 0] = id[0];
  out[flat * 4 + 1] = id[1];
  out[flat * 4 + 2] = id[2];
  out[flat * 4 + 3] = flat;
  return 0;
}

// Fails in workgroup x == constants[0].
static int fail(const weft_dispatch_state_t* dispatch,
                const weft_workgroup_state_t* workgroup) {
  return workgroup->workgroup_id[0] == dispatch->constants[0] ? 1 : 0;
}

static const weft_kernel_def_t kKernels[] = {
    {"scale_offset", scale_offset, 2, 3, {ELEMENTS_PER_WORKGROUP, 1, 1}, 0},
    {"abs_range", abs_range, 1, 2, {ELEMENTS_PER_WORKGROUP, 1, 1}, 0},
    {"write_ids", write_ids, 1, 0, {1, 1, 1}, 0},
    {"fail", fail, 0, 1, {1, 1, 1}, 0},
};

static const weft_kernel_library_t kLibrary = {
    WEFT_KERNEL_ABI_VERSION,
    "cts_test_kernels",
    sizeof(kKernels) / sizeof(kKernels[0]),
    kKernels,
};

#if defined(WEFT_CTS_KERNELS_EXPORT_QUERY)
const weft_kernel_library_t* weft_kernel_library_query(uint32_t abi_version);
__attribute__((visibility("default"))) const weft_kernel_library_t*
weft_kernel_library_query(uint32_t abi_version) {
  return abi_version == WEFT_KERNEL_ABI_VERSION ? &kLibrary : NULL;
}
#else
const weft_kernel_library_t* weft_cts_test_kernels_query(uint32_t abi_version);
const weft_kernel_library_t* weft_cts_test_kernels_query(uint32_t abi_version) {
  return abi_version == WEFT_KERNEL_ABI_VERSION ? &kLibrary : NULL;
}
#endif
