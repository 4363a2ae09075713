// weft decode example: Q4_0, Q8_0, Q4_K and Q6_K matrices with their rows
// interleaved by eight, the form the CPU kernels repack such a matrix into once
// it is loaded.
//
// A plain row is a run of blocks (an f16 d, then 32 codes: 16 bytes of
// nibbles for Q4_0, 32 int8 for Q8_0), so a product takes one row at a
// time: each block's codes unpacked, multiplied, summed across the vector
// and scaled, for 32 multiply-adds (decode_quant_dot.c: about four cycles
// a Q4_0 block on AVX2, the reason a 2-core Q4_0 decode was
// compute-bound). Here the blocks of 8 rows at the same block index lie
// together ("a block of eight"): the 8 rows' f16 scales (16 bytes), then
// the 8 rows' code bytes in 4-byte pieces: piece p of rows 0..7 (32
// bytes), for p = 0..3 (Q4_0) or 0..7 (Q8_0). A 32-byte load then holds 4
// code bytes of each row in its own 32-bit lane (Q4_0: low nibbles are
// elements 4p..4p+3, high nibbles 16+4p..; Q8_0: elements 4p..4p+3), so an
// 8-bit multiply-add against those 4 activation codes broadcast keeps
// each row's sum in its lane: no sum across lanes, the 8 scales converted
// in one instruction, and each block of eight, once loaded, serving every
// column of a batch. Its size is the plain form's (8 blocks), so the
// repack is in place and the matrix's bytes are unchanged.
//
// Q4_K (super-blocks of 256: d and dmin, 8 sub-blocks of 32 with 6-bit
// scales and mins packed in 12 bytes, 128 code bytes) interleaves the
// same way: the 8 rows' d, their dmin, their packed scale bytes as three
// 32-byte vectors of each row's words 0, 1 and 2 (so the scales and mins
// of 8 rows come out in one pass, a row a lane), then the code bytes in
// 4-byte pieces (low nibbles: sub-block 2k, high: 2k + 1). Its product
// keeps sum_j sc_j sum(q a) and sum_j m_j sum(a) in int32 lanes, then
// scales each once per super-block.
//
// Q6_K (super-blocks of 256: 6-bit codes q + 32 in 4 low bits and 2 high
// ones, 16 int8 scales of 16 elements, d) keeps the rows' d, their scales
// as 4-byte pieces, the low 4 bits as Q4_K's nibble pieces and the high 2
// in pieces of their own (decode_quant_x8.c has the map); its product
// sums each scale group's integers, scales them in the lanes and takes 32
// sum(a) per group off through the Q8_K sums.
//
// With AVX-512 VNNI a call of 2 or more columns runs on 512 bits, two
// columns a register (each piece duplicated into both lanes of its row),
// the same operations lane by lane.
//
// Per row and block the product is the exact integer sum of code times
// activation code (Q4_0: sum(q a) - 8 sum(a), q the unsigned nibble),
// scaled by the row's d times the activation's d and added into the
// row's float sum with one fused multiply-add, block after block: the
// same operations in every version and for every column count, so every
// version gives the same bits, and a batch's product is bit for bit the
// token's.
#ifndef WEFT_EXAMPLES_DECODE_DECODE_QUANT_X8_H_
#define WEFT_EXAMPLES_DECODE_DECODE_QUANT_X8_H_

#include <stdbool.h>
#include <stdint.h>

#include "decode_quant.h"
#include "decode_quant_dot.h"

#ifdef __cplusplus
extern "C" {
#endif

// Rows a block of eight interleaves.
#define DECODE_X8_ROWS 8u
// The most columns one call of a product takes.
#define DECODE_X8_COLUMNS 8u

// True for the interleaved forms (DECODE_DTYPE_Q4_0_X8, _Q8_0_X8,
// _Q4_K_X8, _Q6_K_X8).
static inline bool decode_dtype_is_x8(uint32_t dtype) {
  return dtype == DECODE_DTYPE_Q4_0_X8 || dtype == DECODE_DTYPE_Q8_0_X8 ||
         dtype == DECODE_DTYPE_Q4_K_X8 || dtype == DECODE_DTYPE_Q6_K_X8;
}
// The interleaved form of a stored |dtype| (Q4_0, Q8_0, Q4_K, Q6_K); 0
// for the others.
uint32_t decode_x8_form(uint32_t dtype);

// Rewrites |rows| (a multiple of 8) rows of |cols| (a multiple of the
// block) elements of the stored type of |x8| at |matrix| into the interleaved
// form, in place, 8 rows at a time through |scratch| (8 rows' bytes).
void decode_x8_pack(uint32_t x8, void* matrix, uint32_t rows, uint32_t cols,
                    void* scratch);
// The inverse: 8 plain rows at |out| from the group of 8 rows of |cols|
// elements at |group| (tests).
void decode_x8_unpack(uint32_t x8, const void* group, uint32_t cols, void* out);

// For |count| rows (a multiple of 8) from |first| (a multiple of 8) of the
// interleaved [rows][cols] |matrix| and |columns| (1 to
// DECODE_X8_COLUMNS) activations quantized as the stored type pairs with
// (decode_quant_dot.h: Q8_0 blocks, Q8_K for Q4_K):
// out[c * out_stride + i] = row (first + i) . activations[c].
typedef void (*decode_x8_dot_fn_t)(const void* matrix, uint32_t cols,
                                   uint32_t first, uint32_t count,
                                   const void* const* activations,
                                   uint32_t columns, float* out,
                                   uint32_t out_stride);

// |x8|'s product in |simd|'s version (NULL where this build has none; an
// AVX-512 CPU runs AVX-512 VNNI's where it has VNNI, on 512 bits for 2 or
// more columns and 256 for one, else AVX2's).
decode_x8_dot_fn_t decode_x8_dot_function(uint32_t x8, decode_simd_t simd);
// The version decode_quant_dot_select chose.
void decode_x8_dot(uint32_t x8, const void* matrix, uint32_t cols,
                   uint32_t first, uint32_t count,
                   const void* const* activations, uint32_t columns, float* out,
                   uint32_t out_stride);
// Called by decode_quant_dot_select.
void decode_x8_select(decode_simd_t simd);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_EXAMPLES_DECODE_DECODE_QUANT_X8_H_
