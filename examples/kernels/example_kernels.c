// weft example kernel library: see example_kernels.h.
//
// A kernel is a plain C function run once per workgroup. It sees the whole
// dispatch (workgroup count, constants, binding pointers and lengths) and its
// own workgroup id. It must not assume any order between workgroups: a
// multi-threaded driver runs them concurrently. Returning non-zero fails the
// dispatch with INTERNAL, naming the kernel and the workgroup.
#include "example_kernels.h"

#include <stddef.h>
#include <string.h>

// Constants are 32-bit words; floats travel as their bit patterns.
static float f32_from_bits(uint32_t bits) {
  float value;
  memcpy(&value, &bits, sizeof(value));
  return value;
}

// y[i] = a * x[i] + y[i] over this workgroup's slice of [0, count).
static int saxpy(const weft_dispatch_state_t* dispatch,
                 const weft_workgroup_state_t* workgroup) {
  const float* x = (const float*)dispatch->binding_ptrs[0];
  float* y = (float*)dispatch->binding_ptrs[1];
  const float a = f32_from_bits(dispatch->constants[0]);
  const uint32_t count = dispatch->constants[1];

  // Never trust the constants: refuse to touch memory past a binding.
  const size_t needed = (size_t)count * sizeof(float);
  if (needed > dispatch->binding_lengths[0] ||
      needed > dispatch->binding_lengths[1]) {
    return 1;
  }

  const uint32_t begin =
      workgroup->workgroup_id[0] * WEFT_EXAMPLE_SAXPY_WORKGROUP_ELEMENTS;
  uint32_t end = begin + WEFT_EXAMPLE_SAXPY_WORKGROUP_ELEMENTS;
  if (end > count) end = count;
  for (uint32_t i = begin; i < end; ++i) y[i] = a * x[i] + y[i];
  return 0;
}

static const weft_kernel_def_t kKernels[] = {
    {
        .name = "saxpy",
        .fn = saxpy,
        .binding_count = 2,
        .constant_count = 2,
        .workgroup_size = {WEFT_EXAMPLE_SAXPY_WORKGROUP_ELEMENTS, 1, 1},
        .local_memory_size = 0,
    },
};

static const weft_kernel_library_t kLibrary = {
    .abi_version = WEFT_KERNEL_ABI_VERSION,
    .name = "example_kernels",
    .kernel_count = sizeof(kKernels) / sizeof(kKernels[0]),
    .kernels = kKernels,
};

const weft_kernel_library_t* weft_example_kernels_query(uint32_t abi_version) {
  return abi_version == WEFT_KERNEL_ABI_VERSION ? &kLibrary : NULL;
}
