// weft decode example: Q4_0 matrices with their rows interleaved by eight,
// the form the CPU kernels repack a Q4_0 matrix into once it is loaded.
//
// A plain Q4_0 row is a run of 18-byte blocks, so a product takes one row
// at a time: each block's nibbles unpacked, multiplied and summed across
// the vector, and scaled, for 32 multiply-adds (decode_quant_dot.c: about
// four cycles a block on AVX2, the reason a 2-core Q4_0 decode was
// compute-bound). Here the blocks of 8 rows at the same block index lie
// together, 144 bytes ("a block of eight"): the 8 rows' f16 scales, then
// the 8 rows' 16 code bytes in 4-byte pieces, piece p of rows 0..7 (32
// bytes), for p = 0..3. A 32-byte load then holds 4 elements of each row
// in its own 32-bit lane (low nibbles: elements 4p..4p+3; high nibbles:
// 16+4p..16+4p+3), so an 8-bit multiply-add against those 4 activation
// codes broadcast keeps each row's sum in its lane: no sum across lanes,
// the 8 scales converted in one instruction, and each unpacked block
// serving every column of a batch. Its size is the plain form's (8 x 18),
// so the repack is in place and the matrix's bytes are unchanged.
//
// Per row and block the product is the integer sum(q a) - 8 sum(a) (q the
// unsigned nibble), exact, scaled by the row's d times the activation's
// d and added into the row's float sum with one fused multiply-add, block
// after block: the same operations in every version and for every column
// count, so every version gives the same bits, and a batch's product is
// bit for bit the token's.
#ifndef WEFT_EXAMPLES_DECODE_DECODE_QUANT_X8_H_
#define WEFT_EXAMPLES_DECODE_DECODE_QUANT_X8_H_

#include <stdint.h>

#include "decode_quant.h"
#include "decode_quant_dot.h"

#ifdef __cplusplus
extern "C" {
#endif

// Rows a block of eight interleaves, and its bytes.
#define DECODE_X8_ROWS 8u
#define DECODE_X8_BLOCK_BYTES (DECODE_X8_ROWS * 18u)
// The most columns one call of a product takes.
#define DECODE_X8_COLUMNS 4u

// Rewrites |rows| (a multiple of 8) rows of |cols| (a multiple of 32)
// Q4_0 elements at |matrix| into the interleaved form, in place, 8 rows
// at a time through |scratch| (8 rows' bytes: 8 x cols / 32 x 18).
void decode_q4_0_x8_pack(void* matrix, uint32_t rows, uint32_t cols,
                         void* scratch);
// The inverse: 8 plain rows at |out| from the group of 8 rows of |cols|
// elements at |group| (tests; the kernels' one-row fallback).
void decode_q4_0_x8_unpack(const void* group, uint32_t cols, void* out);

// For |count| rows (a multiple of 8) from |first| (a multiple of 8) of the
// interleaved [rows][cols] |matrix| and |columns| (1 to
// DECODE_X8_COLUMNS) activations quantized as Q8_0 blocks:
// out[c * out_stride + i] = row (first + i) . activations[c].
typedef void (*decode_q4_0_x8_dot_fn_t)(
    const void* matrix, uint32_t cols, uint32_t first, uint32_t count,
    const decode_block_q8_0_t* const* activations, uint32_t columns,
    float* out, uint32_t out_stride);

// |simd|'s version (NULL where this build has none; AVX-512 CPUs run the
// AVX2 one, and VNNI's where the CPU has it).
decode_q4_0_x8_dot_fn_t decode_q4_0_x8_dot_function(decode_simd_t simd);
// The version decode_quant_dot_select chose.
void decode_q4_0_x8_dot(const void* matrix, uint32_t cols, uint32_t first,
                        uint32_t count,
                        const decode_block_q8_0_t* const* activations,
                        uint32_t columns, float* out, uint32_t out_stride);
// Called by decode_quant_dot_select.
void decode_q4_0_x8_select(decode_simd_t simd);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_EXAMPLES_DECODE_DECODE_QUANT_X8_H_
