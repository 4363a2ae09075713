// weft decode example: the decoder's kernels on a cuda device.
//
// cuda/decode_kernels.cu holds the CUDA C twins of decode_kernels.c's
// kernels for f32 and f16 weights: the same names, bindings, constants,
// workgroups (a block is one workgroup: 16 rows of a product, 64 of the
// classifier, one head of attention, one position of a batch kernel, a
// 16-row by 32-position tile of the GEMM) and failure codes (1 a short
// binding or a type the kernels do not take, 2 a token out of the
// vocabulary, 3 a context longer than the scores' shared memory), which a
// block reports in the status words of weft/executable.h's CUDA
// convention. nvcc compiles them to PTX at build time (compute_75: the
// oldest architecture CUDA 13 compiles for, so the driver's JIT runs them
// on any GPU from Turing on), embedded here.
//
// What the blocks are made of differs from the CPU's workgroup sizes
// (which the CPU kernels never read): the kernel table below gives each
// kernel the threads its CUDA body is written for (a warp per row of a
// product), and the CPU table's names, counts and local memory.
//
// Block types (Q8_0 ... Q6_K) have no CUDA kernels: BATCH_RMSNORM and
// BATCH_QUANTIZE asked for a quantized form fail with 1, as do the
// products given a block type's rows; decode_session_create refuses such
// a model on a cuda device before anything runs. SAMPLE
// (decode_sampling.h) has none either: decode_session_set_sampling
// refuses a temperature above 0 there (greedy argmax runs on the GPU).
#ifndef WEFT_EXAMPLES_DECODE_DECODE_CUDA_H_
#define WEFT_EXAMPLES_DECODE_DECODE_CUDA_H_

// Threads of each kernel's block (shared with cuda/decode_kernels.cu).
// The products (qkv, matvec_add, ffn, classifier): a warp per row, 16
// warps for a workgroup's 16 rows (4 rows a warp in the classifier's 64).
#define DECODE_CUDA_ROW_THREADS 512u
// gemm: a warp per row too, 8 warps in two passes over a tile's 16 rows
// (a lane keeps 64 sums, a column's and W3's for each of 32 positions:
// within the 255 registers 256 threads may use, where 512 spilled).
#define DECODE_CUDA_GEMM_THREADS 256u
// attention and batch_attention: warps over positions for the scores,
// then groups of head_size threads over positions for the output.
#define DECODE_CUDA_ATTENTION_THREADS 256u
// embed, batch_embed, batch_rmsnorm, batch_rope: threads over a row.
#define DECODE_CUDA_ROW_WISE_THREADS 256u
// argmax: one block over the vocabulary.
#define DECODE_CUDA_ARGMAX_THREADS 1024u
// batch_quantize: checks its bindings only (f32 and f16 read no
// quantized form).
#define DECODE_CUDA_QUANTIZE_THREADS 32u
// The weight types the CUDA kernels take (decode_dtype_t's values).
#define DECODE_CUDA_DTYPE_F32 0u
#define DECODE_CUDA_DTYPE_F16 1u

#ifndef __CUDACC__
#include <stdbool.h>

#include "decode_kernels.h"
#include "weft/weft.h"

#ifdef __cplusplus
extern "C" {
#endif

// True when this build embeds the CUDA kernels (nvcc was found).
bool decode_cuda_kernels_available(void);

// The source of the decoder's CUDA executable: the embedded PTX and a
// kernel table in |kernels| (DECODE_KERNEL_COUNT entries, in
// decode_kernels.h's order: names, binding and constant counts and local
// memory of decode_kernels_library()'s table, the block sizes above),
// which must outlive the executable's creation. UNAVAILABLE, saying so,
// where nvcc did not build them.
weft_status_t decode_cuda_executable_source(
    weft_kernel_def_t kernels[DECODE_KERNEL_COUNT],
    weft_executable_source_t* out_source);

// True when |device| is a cuda device (its executables are CUDA modules).
bool decode_cuda_is_device(const weft_device_t* device);

#ifdef __cplusplus
}  // extern "C"
#endif
#endif  // __CUDACC__

#endif  // WEFT_EXAMPLES_DECODE_DECODE_CUDA_H_
