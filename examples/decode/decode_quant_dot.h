// weft decode example: dot products of quantized weight rows with
// quantized activations (the formats: decode_quant.h).
//
// Each block type pairs with one activation format: Q8_0, Q4_0, Q4_1, Q5_0
// and Q5_1 weights with Q8_0 activations, Q4_K, Q5_K and Q6_K weights with
// Q8_K activations. A block's products are summed in integers and scaled
// once by the product of the two blocks' scales, as GGML's own kernels do.
//
// Q4_1 and Q5_1 (x = d q + m) pair in GGML with Q8_1, Q8_0 that carries
// s = d * (the sum of its codes) for the m term. Here they take the same
// Q8_0 blocks as the other 32-element types, and their product sums the
// activation's codes itself (one more integer multiply-add per block): a
// layer mixing Q4_1 with Q5_0 or Q8_0 (as llama.cpp's files do) then
// quantizes its input once, the batch's Q8_0 form serves them unchanged,
// and the sum is exact in integers rather than a rounded f16 s. Per
// block: d_w d_a sum(q a) + m d_a sum(a).
//
// Every product has a portable version and, on x86-64, AVX2 (with FMA and
// F16C) and AVX-512 (F and BW) versions written with intrinsics; the
// kernels use the best the CPU has (decode_quant_dot_select: on an
// AVX-512 CPU the AVX-512 version where it measured faster, Q6_K's, and
// the AVX2 one for the others).
#ifndef WEFT_EXAMPLES_DECODE_DECODE_QUANT_DOT_H_
#define WEFT_EXAMPLES_DECODE_DECODE_QUANT_DOT_H_

#include <stdint.h>

#include "decode_quant.h"

#ifdef __cplusplus
extern "C" {
#endif

// The instruction sets a product may be written for.
typedef enum decode_simd_e {
  DECODE_SIMD_PORTABLE = 0,
  DECODE_SIMD_AVX2 = 1,    // AVX2, FMA, F16C
  DECODE_SIMD_AVX512 = 2,  // AVX-512 F and BW (and the AVX2 set)
  DECODE_SIMD_COUNT,
} decode_simd_t;

// The best set this CPU (and build) has.
decode_simd_t decode_simd_best(void);

// The weights of a row of |n| elements (a multiple of the block) dotted
// with the activations quantized in the format their type pairs with.
typedef float (*decode_quant_dot_fn_t)(const void* weights,
                                       const void* activations, uint32_t n);

// True when |dtype|'s weights pair with Q8_K activations (Q4_K, Q5_K,
// Q6_K); the 32-element types pair with Q8_0 activations.
static inline bool decode_quant_uses_q8_k(decode_dtype_t dtype) {
  return dtype == DECODE_DTYPE_Q4_K || dtype == DECODE_DTYPE_Q5_K ||
         dtype == DECODE_DTYPE_Q6_K || dtype == DECODE_DTYPE_Q4_K_X8 ||
         dtype == DECODE_DTYPE_Q6_K_X8;
}

// |dtype|'s product written for |simd|; NULL for F32, F16 and other types,
// and where this build has no such version (not x86-64). Tests compare
// the versions; the kernels call decode_quant_dot.
decode_quant_dot_fn_t decode_quant_dot_function(decode_dtype_t dtype,
                                                decode_simd_t simd);

// Makes decode_quant_dot use |simd|'s versions (for AVX-512, those that
// measured faster than AVX2's; the portable ones until called). Not
// thread-safe: the kernels call it once, before any product.
void decode_quant_dot_select(decode_simd_t simd);

// Quantizes |n| activations |x| (a multiple of the block) into |out_blocks|
// in the format |dtype|'s weights pair with: Q8_K blocks (|q8_k|) or Q8_0
// (decode_quant.h), every version bit for bit the portable one's
// (decode_quant_activations_q8_0 and _q8_k), in |simd|'s version (NULL
// where this build has none; AVX-512's is AVX2's). The kernels call
// decode_quant_activations, in the selected version.
typedef void (*decode_quant_activations_fn_t)(const float* x, uint32_t n,
                                              void* out_blocks);
decode_quant_activations_fn_t decode_quant_activations_function(
    bool q8_k, decode_simd_t simd);
void decode_quant_activations(decode_dtype_t dtype, const float* x, uint32_t n,
                              void* out_blocks);

// |dtype|'s product in the selected version (|dtype| one of the eight
// block types).
float decode_quant_dot(decode_dtype_t dtype, const void* weights,
                       const void* activations, uint32_t n);

// One row of |dtype| with four columns of activations at once:
// |out|[c] = decode_quant_dot(dtype, weights, activations[c], n), bit for
// bit, each block decoded once for the four. NULL where the selected
// version has no such form (the portable versions, Q5_K and Q6_K), and for
// types that are not blocks. The batch's GEMM (decode_kernels.h) takes it.
typedef void (*decode_quant_dot4_fn_t)(const void* weights,
                                       const void* const* activations,
                                       uint32_t n, float* out);
decode_quant_dot4_fn_t decode_quant_dot4(decode_dtype_t dtype);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_EXAMPLES_DECODE_DECODE_QUANT_DOT_H_
