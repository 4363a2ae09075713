// weft decode example: f32 and f16 matrices with their rows interleaved by
// sixteen, the form a CPU device's float matrices take once loaded.
//
// A plain row's product with a column is a dot product across the
// vector's lanes: each lane sums every sixteenth element, and the lanes
// are summed at the end. A batch's tile must give the token's bits, so it
// kept one register per (row, column) and one reduction per output: a
// weight load and a column load for every four multiply-adds. Here the
// 16 rows of a group lie element by element (element k of rows 0..15,
// then element k + 1, ...), so one 16-lane load holds element k of 16
// rows and a multiply-add against column element k broadcast advances
// 16 rows' sums at once: no sum across lanes, and each load of the
// weights serves every column of a batch (an outer product, the shape of
// the peers' GEMMs).
//
// Each output is the sum over k in order of w[k] x[k], one fused
// multiply-add per element from +0 (C's fmaf in the portable version,
// the vector instructions elsewhere): the same operations in every
// version, for any column count and any range of whole groups, so a
// batch's product is bit for bit the token's. Its size is the plain
// form's (16 rows), so the repack is in place.
#ifndef WEFT_EXAMPLES_DECODE_DECODE_FLOAT_X16_H_
#define WEFT_EXAMPLES_DECODE_DECODE_FLOAT_X16_H_

#include <stdbool.h>
#include <stdint.h>

#include "decode_model.h"
#include "decode_quant_dot.h"

#ifdef __cplusplus
extern "C" {
#endif

// Rows a group interleaves.
#define DECODE_X16_ROWS 16u
// The most columns one call of a product takes.
#define DECODE_X16_COLUMNS 8u

// True for DECODE_DTYPE_F32_X16 and DECODE_DTYPE_F16_X16.
static inline bool decode_dtype_is_x16(uint32_t dtype) {
  return dtype == DECODE_DTYPE_F32_X16 || dtype == DECODE_DTYPE_F16_X16;
}
// The interleaved form of F32 or F16; 0 for the others.
uint32_t decode_x16_form(uint32_t dtype);

// Rewrites |rows| (a multiple of 16) rows of |cols| elements of the stored
// type of |x16| at |matrix| into the interleaved form, in place, 16 rows
// at a time through |scratch| (16 rows' bytes).
void decode_x16_pack(uint32_t x16, void* matrix, uint32_t rows, uint32_t cols,
                     void* scratch);
// The inverse: 16 plain rows at |out| from the group at |group| (tests).
void decode_x16_unpack(uint32_t x16, const void* group, uint32_t cols,
                       void* out);

// For |count| rows (a multiple of 16) from |first| (a multiple of 16) of
// the interleaved [rows][cols] |matrix| and |columns| (1 to
// DECODE_X16_COLUMNS) f32 columns |x|:
// out[c * out_stride + i] = row (first + i) . x[c].
typedef void (*decode_x16_dot_fn_t)(const void* matrix, uint32_t cols,
                                    uint32_t first, uint32_t count,
                                    const float* const* x, uint32_t columns,
                                    float* out, uint32_t out_stride);

// |x16|'s product in |simd|'s version (NULL where this build or CPU has
// none).
decode_x16_dot_fn_t decode_x16_dot_function(uint32_t x16, decode_simd_t simd);
// The version decode_x16_select chose (portable until then).
void decode_x16_dot(uint32_t x16, const void* matrix, uint32_t cols,
                    uint32_t first, uint32_t count, const float* const* x,
                    uint32_t columns, float* out, uint32_t out_stride);
// Chooses |simd|'s versions (called with the kernels' other choices).
void decode_x16_select(decode_simd_t simd);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_EXAMPLES_DECODE_DECODE_FLOAT_X16_H_
