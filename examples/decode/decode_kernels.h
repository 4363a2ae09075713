// weft decode example: the decoder's CPU kernels (weft/kernel_abi.h).
//
// Every kernel works on workgroups over output rows, and checks that each
// binding holds what its constants say (a short binding or a row that is
// not whole blocks of a known type returns 1, a token out of the
// vocabulary 2, a context or width longer than the scratch 3). Weights are
// f32, f16 or GGML's block types (a |dtype| constant is a decode_dtype_t;
// qkv's packs wq's, wk's and wv's in bytes 0, 1 and 2, ffn's w1's and
// w3's in bytes 0 and 1): f16 is converted in the kernel, and a block
// type's rows are dotted with the input quantized per block
// (decode_quant_dot.h). The token's products read their input prepared
// by a step before them: normalised by BATCH_RMSNORM and quantized by it
// or BATCH_QUANTIZE (run as a batch of one: binding 0 the token), into xq
// of DECODE_BATCH_QUANT_STRIDE(width) bytes in the forms the matrices'
// types read, so that no workgroup redoes it. Activations are f32.
// Epsilons travel as float bits.
//
// Ordinals (the order of decode_kernels_library()'s table):
//   EMBED       x = table[token]
//     bindings: table [vocab][dim], token u32, x [dim]
//     constants: dim, vocab, dtype                   workgroups: 1
//   QKV         q = Wq xn, k = Wk xn, v = Wv xn, then q and k rotated
//               (pairs (2i, 2i+1) of each head by the angle of pair i:
//               the rope row's cos and sin)
//     bindings: xn [dim], xq, wq, wk, wv, q [dim], k [kv_dim], v [kv_dim],
//               rope [head_size / 2][2] (cos, sin at this position)
//     constants: dim, kv_dim, head_size, dtypes       workgroups: rows / 16
//               (rows = dim + 2 kv_dim: q's, then k's, then v's)
//   ATTENTION   per query head h: softmax over positions t of
//               q_h . k_t / sqrt(head_size), then out_h = sum p_t v_t, with
//               k and v of kv head h / (n_heads / n_kv_heads)
//     bindings: q [dim], keys [(pos + 1)][kv_dim], values (same), out [dim]
//               (the position is the keys binding's length)
//     constants: n_heads, n_kv_heads, head_size       workgroups: n_heads
//   MATVEC_ADD  out += W x
//     bindings: x [cols], xq (x quantized; unread for f32 and f16 W),
//               W [rows][cols], out [rows]
//     constants: rows, cols, dtype                    workgroups: rows / 16
//   FFN         h = silu(W1 xn) * (W3 xn)
//     bindings: xn [dim], xq, w1, w3, h [hidden]
//     constants: dim, hidden, dtypes                  workgroups: hidden / 16
//   CLASSIFIER  logits = W xn
//     bindings: xn [dim], xq, W [vocab][dim], logits [vocab]
//     constants: dim, vocab, dtype                    workgroups:
//               ceil(vocab / DECODE_CLASSIFIER_ROWS)
//   ARGMAX      token = the first index of the largest logit
//     bindings: logits [vocab], token u32
//     constants: vocab                                workgroups: 1
//
// The batch kernels run B positions of the prompt at once (decode.h's
// batch). Binding 0 of each is the batch's tokens, u32 [B]: its length
// tells the kernel B, and workgroups past B return at once, so a
// recording sized for DECODE_BATCH_MAX serves any smaller batch.
// Activations are [B][width] row-major, a position a row; a row's
// quantized forms (xq) lie DECODE_BATCH_QUANT_STRIDE(width) bytes apart,
// Q8_K blocks then Q8_0 blocks, those |forms| (DECODE_BATCH_FORM_*) asks
// for, each activation quantized once for every matrix that reads it.
//   BATCH_EMBED      x[b] = table[tokens[b]]
//     bindings: tokens, table, x
//     constants: dim, vocab, dtype                    workgroups: B
//   BATCH_RMSNORM    xn[b] = rmsnorm(x[b]) * norm, quantized into xq[b]
//     bindings: tokens, x, norm, xn, xq
//     constants: dim, eps, forms                      workgroups: B
//   BATCH_QUANTIZE   x[b] quantized into xq[b]
//     bindings: tokens, x, xq
//     constants: width, forms                         workgroups: B
//   GEMM        out[b] = W x[b] (mode STORE), out[b] += W x[b] (ADD), or
//               out[b] = silu(W x[b]) * (W3 x[b]) (SWIGLU): tiles of T
//               rows of W (decode_gemm_tile_rows: 16, or 64 interleaved)
//               by DECODE_GEMM_COLUMNS positions, workgroup w the row
//               tile w % ceil(rows / T) of the column tile
//               w / ceil(rows / T); each row of a block type is dotted with
//               each column's quantized form (the matvec kernels'
//               products), f32 and f16 rows with the floats; four columns
//               at a time where the type has a four-column product (f32
//               and f16 on AVX2 and AVX-512, four rows at a time on
//               AVX-512; decode_quant_dot4), bit for bit the one-column
//               products
//     bindings: tokens, x [B][cols], xq, W [rows][cols], W3 (SWIGLU; else
//               any), out [B][rows]
//     constants: rows, cols, dtypes (W's byte 0, W3's byte 1), mode
//               workgroups: ceil(rows / T) * ceil(B / DECODE_GEMM_COLUMNS)
//   BATCH_ROPE       q[b] and k[b] rotated by rope row b (as QKV does)
//     bindings: tokens, q [B][dim], k [B][kv_dim], rope [B][head_size]
//     constants: dim, kv_dim, head_size               workgroups: B
//   BATCH_ATTENTION  causal: position p = end - B + b attends over cache
//               rows 0 .. p, as ATTENTION does for one position
//     bindings: tokens, q [B][dim], keys [end][kv_dim], values (same),
//               out [B][dim] (end is the keys binding's length)
//     constants: n_heads, n_kv_heads, head_size  workgroups: n_heads * B
//               (workgroup w: head w % n_heads of position w / n_heads;
//               with AVX-512 the CPU's runs positions 4k .. 4k + 3 of its
//               head in position 4k's workgroup, the others empty, with
//               the same results)
#ifndef WEFT_EXAMPLES_DECODE_DECODE_KERNELS_H_
#define WEFT_EXAMPLES_DECODE_DECODE_KERNELS_H_

#include "weft/kernel_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum decode_kernel_e {
  DECODE_KERNEL_EMBED = 0,
  DECODE_KERNEL_QKV,
  DECODE_KERNEL_ATTENTION,
  DECODE_KERNEL_MATVEC_ADD,
  DECODE_KERNEL_FFN,
  DECODE_KERNEL_CLASSIFIER,
  DECODE_KERNEL_ARGMAX,
  DECODE_KERNEL_BATCH_EMBED,
  DECODE_KERNEL_BATCH_RMSNORM,
  DECODE_KERNEL_BATCH_QUANTIZE,
  DECODE_KERNEL_GEMM,
  DECODE_KERNEL_BATCH_ROPE,
  DECODE_KERNEL_BATCH_ATTENTION,
  DECODE_KERNEL_COUNT,
} decode_kernel_t;

// GEMM's modes.
enum {
  DECODE_GEMM_STORE = 0,
  DECODE_GEMM_ADD = 1,
  DECODE_GEMM_SWIGLU = 2,
};

// The quantized forms BATCH_RMSNORM and BATCH_QUANTIZE write (bits): Q8_0
// for the 32-element types' weights (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1), Q8_K
// for the K types' (Q4_K, Q5_K, Q6_K).
enum {
  DECODE_BATCH_FORM_Q8_0 = 1u << 0,
  DECODE_BATCH_FORM_Q8_K = 1u << 1,
};

// The most positions one batch takes (its buffers' rows).
#define DECODE_BATCH_MAX 128u
// Positions of a GEMM tile (the weights of a tile's rows are read once
// for this many positions).
#define DECODE_GEMM_COLUMNS 32u
// Rows of W one GEMM workgroup takes where W is interleaved (by eight,
// decode_quant_x8.h: a product's paired activations then serve 8 groups
// of rows; by sixteen, decode_float_x16.h: 4 groups). Other types take
// DECODE_ROWS_PER_WORKGROUP (16).
#define DECODE_GEMM_X8_TILE_ROWS 64u
// The rows of a GEMM workgroup for W of |dtype|.
uint32_t decode_gemm_tile_rows(uint32_t dtype);
// Bytes between the quantized forms of two rows of |n| activations: room
// for both forms (a Q8_K block is 292 bytes, a Q8_0 block 34), rounded up
// to 16.
#define DECODE_BATCH_QUANT_STRIDE(n) \
  ((((uint64_t)(n) / 256u * 292u + (uint64_t)(n) / 32u * 34u) + 15u) & ~15ull)

// Rows of the classifier one workgroup computes.
#define DECODE_CLASSIFIER_ROWS 64u
// The longest context ATTENTION's scratch holds (a score per position),
// within local-task's per-worker scratch of 64 KiB, which a larger one
// would make every execute allocate beside it.
#define DECODE_MAX_CONTEXT 8192u

// The library: for weft_executable_source_cpu_static, and for baselines
// that call the kernels directly.
const weft_kernel_library_t* decode_kernels_query(uint32_t abi_version);
const weft_kernel_library_t* decode_kernels_library(void);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_EXAMPLES_DECODE_DECODE_KERNELS_H_
