// weft benchmarks: the kernel library (see bench_kernels.h).
#include "bench_kernels.h"

#include <string.h>

// Rows of C one register block of the matmul kernel accumulates.
#define MATMUL_BLOCK_ROWS 4u
// Columns of C one register block accumulates (two SSE vectors per row).
#define MATMUL_BLOCK_COLUMNS 8u

static float bits_to_f32(uint32_t bits) {
  float value;
  memcpy(&value, &bits, sizeof(value));
  return value;
}

int weft_bench_empty_kernel(const weft_dispatch_state_t* dispatch,
                            const weft_workgroup_state_t* workgroup) {
  (void)dispatch;
  (void)workgroup;
  return 0;
}

int weft_bench_axpy_kernel(const weft_dispatch_state_t* dispatch,
                           const weft_workgroup_state_t* workgroup) {
  const float* restrict x = (const float*)dispatch->binding_ptrs[0];
  float* restrict y = (float*)dispatch->binding_ptrs[1];
  float a = bits_to_f32(dispatch->constants[0]);
  uint32_t count = dispatch->constants[1];
  int result = 0;
  if ((size_t)count * sizeof(float) > dispatch->binding_lengths[0] ||
      (size_t)count * sizeof(float) > dispatch->binding_lengths[1]) {
    result = 2;  // bindings shorter than |count| elements
  } else {
    uint32_t begin =
        workgroup->workgroup_id[0] * WEFT_BENCH_AXPY_WORKGROUP_ELEMENTS;
    uint32_t end = begin + WEFT_BENCH_AXPY_WORKGROUP_ELEMENTS;
    if (end > count) end = count;
    for (uint32_t i = begin; i < end; ++i) y[i] = a * x[i] + y[i];
  }
  return result;
}

// Copies rows [k0, k0+WEFT_BENCH_MATMUL_PANEL_DEPTH) x columns
// [column0, column0+64) of B into |panel|, grouped by 8-column strips:
// panel[strip][kk][0..8) so a register block streams one contiguous strip.
static void matmul_pack_panel(const float* restrict b, uint32_t n, uint32_t k0,
                              uint32_t column0, float* restrict panel) {
  const uint32_t depth = WEFT_BENCH_MATMUL_PANEL_DEPTH;
  for (uint32_t kk = 0; kk < depth; ++kk) {
    const float* b_row = b + (size_t)(k0 + kk) * n + column0;
    for (uint32_t strip = 0;
         strip < WEFT_BENCH_MATMUL_TILE / MATMUL_BLOCK_COLUMNS; ++strip) {
      memcpy(panel + ((size_t)strip * depth + kk) * MATMUL_BLOCK_COLUMNS,
             b_row + strip * MATMUL_BLOCK_COLUMNS,
             MATMUL_BLOCK_COLUMNS * sizeof(float));
    }
  }
}

// Four floats in one SSE/NEON register (GCC and Clang vector extension),
// so the 4x8 register block below compiles to 8 vector accumulators
// whatever the auto-vectoriser decides.
typedef float matmul_vec4_t __attribute__((vector_size(16)));

static matmul_vec4_t matmul_load4(const float* source) {
  matmul_vec4_t value;
  memcpy(&value, source, sizeof(value));
  return value;
}

static void matmul_store4(float* target, matmul_vec4_t value) {
  memcpy(target, &value, sizeof(value));
}

// Adds A[rows, k0..k0+depth) * panel strip to C[rows, columns) for 4 rows
// and 8 columns, keeping the 32 sums in registers. |accumulate| false
// starts from zero (the first panel) instead of C's contents.
static void matmul_register_block(const float* restrict a,
                                  const float* restrict strip,
                                  float* restrict c, uint32_t n, uint32_t k,
                                  uint32_t row, uint32_t column, uint32_t k0,
                                  int accumulate) {
  matmul_vec4_t sums[MATMUL_BLOCK_ROWS][2];
  for (uint32_t r = 0; r < MATMUL_BLOCK_ROWS; ++r) {
    float* c_row = c + (size_t)(row + r) * n + column;
    matmul_vec4_t zero = {0.0f, 0.0f, 0.0f, 0.0f};
    sums[r][0] = accumulate ? matmul_load4(c_row) : zero;
    sums[r][1] = accumulate ? matmul_load4(c_row + 4) : zero;
  }
  const float* a_rows = a + (size_t)row * k + k0;
  for (uint32_t kk = 0; kk < WEFT_BENCH_MATMUL_PANEL_DEPTH; ++kk) {
    const float* b_row = strip + (size_t)kk * MATMUL_BLOCK_COLUMNS;
    matmul_vec4_t b_low = matmul_load4(b_row);
    matmul_vec4_t b_high = matmul_load4(b_row + 4);
    for (uint32_t r = 0; r < MATMUL_BLOCK_ROWS; ++r) {
      float a_value = a_rows[(size_t)r * k + kk];
      matmul_vec4_t a_broadcast = {a_value, a_value, a_value, a_value};
      sums[r][0] += a_broadcast * b_low;
      sums[r][1] += a_broadcast * b_high;
    }
  }
  for (uint32_t r = 0; r < MATMUL_BLOCK_ROWS; ++r) {
    float* c_row = c + (size_t)(row + r) * n + column;
    matmul_store4(c_row, sums[r][0]);
    matmul_store4(c_row + 4, sums[r][1]);
  }
}

int weft_bench_matmul_tile_kernel(const weft_dispatch_state_t* dispatch,
                                  const weft_workgroup_state_t* workgroup) {
  uint32_t m = dispatch->constants[0];
  uint32_t n = dispatch->constants[1];
  uint32_t k = dispatch->constants[2];
  uint32_t row0 = workgroup->workgroup_id[1] * WEFT_BENCH_MATMUL_TILE;
  uint32_t column0 = workgroup->workgroup_id[0] * WEFT_BENCH_MATMUL_TILE;
  int result = 0;
  if ((size_t)m * k * sizeof(float) > dispatch->binding_lengths[0] ||
      (size_t)k * n * sizeof(float) > dispatch->binding_lengths[1] ||
      (size_t)m * n * sizeof(float) > dispatch->binding_lengths[2]) {
    result = 2;  // bindings smaller than the shapes in the constants
  } else if (m % WEFT_BENCH_MATMUL_TILE || n % WEFT_BENCH_MATMUL_TILE ||
             k % WEFT_BENCH_MATMUL_PANEL_DEPTH || row0 >= m || column0 >= n) {
    result = 3;  // shape not tiled evenly or workgroup outside the matrix
  } else if (!workgroup->local_memory ||
             workgroup->local_memory_size < WEFT_BENCH_MATMUL_SCRATCH_BYTES) {
    result = 4;  // no room for the packed panel
  } else {
    const float* a = (const float*)dispatch->binding_ptrs[0];
    const float* b = (const float*)dispatch->binding_ptrs[1];
    float* c = (float*)dispatch->binding_ptrs[2];
    float* panel = (float*)workgroup->local_memory;
    for (uint32_t k0 = 0; k0 < k; k0 += WEFT_BENCH_MATMUL_PANEL_DEPTH) {
      matmul_pack_panel(b, n, k0, column0, panel);
      for (uint32_t j = 0; j < WEFT_BENCH_MATMUL_TILE;
           j += MATMUL_BLOCK_COLUMNS) {
        const float* strip = panel + (size_t)j * WEFT_BENCH_MATMUL_PANEL_DEPTH;
        for (uint32_t i = 0; i < WEFT_BENCH_MATMUL_TILE;
             i += MATMUL_BLOCK_ROWS) {
          matmul_register_block(a, strip, c, n, k, row0 + i, column0 + j, k0,
                                k0 != 0);
        }
      }
    }
  }
  return result;
}

static const weft_kernel_def_t kKernels[WEFT_BENCH_KERNEL_COUNT_] = {
    {"empty", weft_bench_empty_kernel, 0, 0, {1, 1, 1}, 0},
    {"axpy",
     weft_bench_axpy_kernel,
     2,
     2,
     {WEFT_BENCH_AXPY_WORKGROUP_ELEMENTS, 1, 1},
     0},
    {"matmul_tile",
     weft_bench_matmul_tile_kernel,
     3,
     3,
     {WEFT_BENCH_MATMUL_TILE, WEFT_BENCH_MATMUL_TILE, 1},
     WEFT_BENCH_MATMUL_SCRATCH_BYTES},
};

static const weft_kernel_library_t kLibrary = {
    WEFT_KERNEL_ABI_VERSION,
    "weft_bench_kernels",
    WEFT_BENCH_KERNEL_COUNT_,
    kKernels,
};

const weft_kernel_library_t* weft_bench_kernels_query(uint32_t abi_version) {
  return abi_version == WEFT_KERNEL_ABI_VERSION ? &kLibrary : NULL;
}
