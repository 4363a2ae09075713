// weft benchmarks: the one kernel library every implementation runs.
//
// weft dispatches these through a statically registered executable; the
// OpenMP, pthreadpool and serial baselines call the very same functions once
// per workgroup, with a dispatch state they build themselves, so every row
// of a benchmark measures the same machine code.
#ifndef WEFT_BENCH_BENCH_KERNELS_H_
#define WEFT_BENCH_BENCH_KERNELS_H_

#include <stdint.h>

#include "weft/kernel_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

// Elements of y = a*x + y one axpy workgroup covers.
#define WEFT_BENCH_AXPY_WORKGROUP_ELEMENTS 1024u
// Rows and columns of the output tile one matmul workgroup computes.
#define WEFT_BENCH_MATMUL_TILE 64u
// Rows of B the matmul kernel packs at a time (K must be a multiple).
#define WEFT_BENCH_MATMUL_PANEL_DEPTH 256u
// Scratch bytes per workgroup the matmul kernel needs: one packed panel of
// B (WEFT_BENCH_MATMUL_PANEL_DEPTH x 64 floats).
#define WEFT_BENCH_MATMUL_SCRATCH_BYTES \
  (WEFT_BENCH_MATMUL_PANEL_DEPTH * WEFT_BENCH_MATMUL_TILE * 4u)

// Kernel ordinals in the library returned by weft_bench_kernels_query.
typedef enum weft_bench_kernel_e {
  // Does nothing: measures the cost of running a workgroup.
  WEFT_BENCH_KERNEL_EMPTY = 0,
  // y[i] = a * x[i] + y[i]. Bindings: x, y. Constants: bits of a (float),
  // element count. Workgroup x covers WEFT_BENCH_AXPY_WORKGROUP_ELEMENTS.
  WEFT_BENCH_KERNEL_AXPY = 1,
  // C = A * B for row-major float matrices, one 64x64 tile of C per
  // workgroup (x: tile column, y: tile row). Bindings: A (M x K), B (K x N),
  // C (M x N). Constants: M, N, K; M and N multiples of
  // WEFT_BENCH_MATMUL_TILE, K a multiple of WEFT_BENCH_MATMUL_PANEL_DEPTH.
  // Packs B through WEFT_BENCH_MATMUL_SCRATCH_BYTES of workgroup scratch.
  WEFT_BENCH_KERNEL_MATMUL_TILE = 2,
  WEFT_BENCH_KERNEL_COUNT_ = 3,
} weft_bench_kernel_t;

// Returns the library table for |abi_version| (NULL if unsupported).
const weft_kernel_library_t* weft_bench_kernels_query(uint32_t abi_version);

// The kernel functions themselves, for the baselines.
int weft_bench_empty_kernel(const weft_dispatch_state_t* dispatch,
                            const weft_workgroup_state_t* workgroup);
int weft_bench_axpy_kernel(const weft_dispatch_state_t* dispatch,
                           const weft_workgroup_state_t* workgroup);
int weft_bench_matmul_tile_kernel(const weft_dispatch_state_t* dispatch,
                                  const weft_workgroup_state_t* workgroup);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_BENCH_BENCH_KERNELS_H_
