// weft's CUDA test double: the host implementations of the kernels it can
// run. A TEST DOUBLE, never shipped or installed (see cuda_double.h).
//
// The CTS's CUDA kernels (tests/cts/cuda/cts_kernels.cu), line for line:
// each function below is its kernel's body with the loop over the block's
// threads made explicit. They follow the parameter convention of
// include/weft/executable.h: binding pointers, binding lengths (uint64),
// constants (uint32), then a uint32_t* status of four words where the
// first failing block stores its CPU return value, then its block index.
#include <string.h>

#include "cuda_double_impl.h"

// weft_fail of cts_kernels.cu: the first report wins.
static void weft_cuda_double_report(const weft_cuda_double_block_t* block,
                                    uint32_t* status, uint32_t code) {
  uint32_t expected = 0;
  if (__atomic_compare_exchange_n(status, &expected, code, false,
                                  __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    status[1] = block->block_idx.x;
    status[2] = block->block_idx.y;
    status[3] = block->block_idx.z;
  }
}

static void* weft_cuda_double_param_pointer(void* const* params, int index) {
  void* value;
  memcpy(&value, params[index], sizeof(value));
  return value;
}

static uint64_t weft_cuda_double_param_u64(void* const* params, int index) {
  uint64_t value;
  memcpy(&value, params[index], sizeof(value));
  return value;
}

static uint32_t weft_cuda_double_param_u32(void* const* params, int index) {
  uint32_t value;
  memcpy(&value, params[index], sizeof(value));
  return value;
}

static float weft_cuda_double_bits_to_f32(uint32_t bits) {
  float value;
  memcpy(&value, &bits, sizeof(value));
  return value;
}

// The block's threads along x (the CTS kernels are one-dimensional).
static uint32_t weft_cuda_double_threads_x(
    const weft_cuda_double_block_t* block) {
  return block->block_dim.x;
}

// "pp88444p": in, out, in_length, out_length, scale (f32 bits), offset
// (f32 bits), count, status. out[i] = in[i] * scale + offset for i < count,
// one element per thread; status 2 when a binding is too small for count.
static void weft_cuda_double_scale_offset(const weft_cuda_double_block_t* block,
                                          void* const* params) {
  const float* in = (const float*)weft_cuda_double_param_pointer(params, 0);
  float* out = (float*)weft_cuda_double_param_pointer(params, 1);
  uint64_t in_length = weft_cuda_double_param_u64(params, 2);
  uint64_t out_length = weft_cuda_double_param_u64(params, 3);
  float scale =
      weft_cuda_double_bits_to_f32(weft_cuda_double_param_u32(params, 4));
  float offset =
      weft_cuda_double_bits_to_f32(weft_cuda_double_param_u32(params, 5));
  uint32_t count = weft_cuda_double_param_u32(params, 6);
  uint32_t* status = (uint32_t*)weft_cuda_double_param_pointer(params, 7);
  for (uint32_t t = 0; t < weft_cuda_double_threads_x(block); ++t) {
    if ((uint64_t)count * sizeof(float) > in_length ||
        (uint64_t)count * sizeof(float) > out_length) {
      weft_cuda_double_report(block, status, 2);
      continue;
    }
    uint32_t i = block->block_idx.x * block->block_dim.x + t;
    if (i < count) out[i] = in[i] * scale + offset;
  }
}

// "p844p": data, length, first, count, status. data[i] = abs(data[i]) for
// i in [first, first + count), one element per thread; status 2 when the
// binding is too small.
static void weft_cuda_double_abs_range(const weft_cuda_double_block_t* block,
                                       void* const* params) {
  int32_t* data = (int32_t*)weft_cuda_double_param_pointer(params, 0);
  uint64_t length = weft_cuda_double_param_u64(params, 1);
  uint32_t first = weft_cuda_double_param_u32(params, 2);
  uint32_t count = weft_cuda_double_param_u32(params, 3);
  uint32_t* status = (uint32_t*)weft_cuda_double_param_pointer(params, 4);
  uint32_t end = first + count;  // wraps as the CPU kernel's does
  for (uint32_t t = 0; t < weft_cuda_double_threads_x(block); ++t) {
    if ((uint64_t)end * sizeof(int32_t) > length) {
      weft_cuda_double_report(block, status, 2);
      continue;
    }
    uint32_t i = first + block->block_idx.x * block->block_dim.x + t;
    if (i < end) {
      // abs without C's overflow: INT32_MIN stays INT32_MIN, as on a GPU.
      int32_t value = data[i];
      data[i] = value < 0 ? (int32_t)(0u - (uint32_t)value) : value;
    }
  }
}

// "p8p": out, length, status. Block (x, y, z) writes (x, y, z, flat) at
// its flat index; status 2 when the binding is too small.
static void weft_cuda_double_write_ids(const weft_cuda_double_block_t* block,
                                       void* const* params) {
  uint32_t* out = (uint32_t*)weft_cuda_double_param_pointer(params, 0);
  uint64_t length = weft_cuda_double_param_u64(params, 1);
  uint32_t* status = (uint32_t*)weft_cuda_double_param_pointer(params, 2);
  const weft_cuda_double_dim3_t* id = &block->block_idx;
  const weft_cuda_double_dim3_t* n = &block->grid_dim;
  uint32_t flat = (id->z * n->y + id->y) * n->x + id->x;
  for (uint32_t t = 0; t < weft_cuda_double_threads_x(block); ++t) {
    if ((uint64_t)(flat + 1) * 4 * sizeof(uint32_t) > length) {
      weft_cuda_double_report(block, status, 2);
      continue;
    }
    out[flat * 4 + 0] = id->x;
    out[flat * 4 + 1] = id->y;
    out[flat * 4 + 2] = id->z;
    out[flat * 4 + 3] = flat;
  }
}

// "4p": fail_x, status. Block x == fail_x stores 1.
static void weft_cuda_double_fail(const weft_cuda_double_block_t* block,
                                  void* const* params) {
  uint32_t fail_x = weft_cuda_double_param_u32(params, 0);
  uint32_t* status = (uint32_t*)weft_cuda_double_param_pointer(params, 1);
  if (block->block_idx.x == fail_x) weft_cuda_double_report(block, status, 1);
}

static const weft_cuda_double_kernel_t weft_cuda_double_kernels[] = {
    {"scale_offset", "pp88444p", weft_cuda_double_scale_offset},
    {"abs_range", "p844p", weft_cuda_double_abs_range},
    {"write_ids", "p8p", weft_cuda_double_write_ids},
    {"fail", "4p", weft_cuda_double_fail},
};

const weft_cuda_double_kernel_t* weft_cuda_double__find_kernel(
    const char* name) {
  size_t count =
      sizeof(weft_cuda_double_kernels) / sizeof(weft_cuda_double_kernels[0]);
  for (size_t i = 0; i < count; ++i) {
    if (strcmp(weft_cuda_double_kernels[i].name, name) == 0) {
      return &weft_cuda_double_kernels[i];
    }
  }
  return NULL;
}
