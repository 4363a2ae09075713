// weft decode example: the decoder's kernels in CUDA C, for f32 and f16
// weights (decode_cuda.h). Each is decode_kernels.c's kernel of the same
// name: the same bindings and constants in the same order, the same
// workgroups (a block is one), the same checks of the bindings' lengths
// and the same codes where they fail, reported as weft/executable.h's
// CUDA convention has it (weft_fail: the first failing block stores its
// code, then its block index). Parameters: each binding's device address,
// each binding's length in bytes (uint64), each constant (uint32), then
// the four status words.
//
// Block sizes are decode_cuda.h's. The products give a warp to a row:
// its lanes read the row in 16-byte loads (8 halves or 4 floats a lane,
// four loads in flight), so a warp reads 512 contiguous bytes at a time,
// and sum across the warp with shuffles. Sums run in another order than
// the CPU's (per lane, then across lanes), so results agree with the
// CPU kernels to rounding, not bit for bit; the rotary rotation, RMSNorm
// and SwiGLU take the CPU's operations in its order.
//
// Outside nvcc (no __CUDACC__) the file is C++ for the host emulation of
// tests/decode/decode_cuda_emulation_test.cc, which defines what CUDA
// would (threads, shuffles, barriers, the half type) and runs every
// kernel against its CPU twin: hence the function-scope shared arrays
// written "static __shared__" (what CUDA makes them anyway) and the two
// branches below.
#if defined(__CUDACC__)
#include <cuda_fp16.h>
#endif

#include "../decode_cuda.h"

typedef unsigned int u32;
typedef unsigned long long u64;

// decode_kernels.h's constants (that header is C for the host).
#define ROWS 16u                 // DECODE_ROWS_PER_WORKGROUP
#define CLASSIFIER_ROWS 64u      // DECODE_CLASSIFIER_ROWS
#define GEMM_COLUMNS 32u         // DECODE_GEMM_COLUMNS
#define GEMM_STORE 0u
#define GEMM_ADD 1u
#define GEMM_SWIGLU 2u
// DECODE_BATCH_QUANT_STRIDE(n).
__device__ __forceinline__ u64 quant_stride(u32 n) {
  return (((u64)n / 256u * 292u + (u64)n / 32u * 34u) + 15u) & ~15ull;
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

// Reports |code| for this block unless another block reported first.
__device__ static void weft_fail(u32* status, u32 code) {
  if (atomicCAS(status, 0u, code) == 0u) {
    status[1] = blockIdx.x;
    status[2] = blockIdx.y;
    status[3] = blockIdx.z;
  }
}

// Every thread of a block that found the same failure calls this: one
// reports it.
__device__ static void block_fail(u32* status, u32 code) {
  if (threadIdx.x == 0) weft_fail(status, code);
}

// Bytes of an element of |dtype|: 4 (f32), 2 (f16), 0 for a type the
// CUDA kernels do not take (the block types).
__device__ __forceinline__ u32 dtype_size(u32 dtype) {
  return dtype == DECODE_CUDA_DTYPE_F32   ? 4u
         : dtype == DECODE_CUDA_DTYPE_F16 ? 2u
                                          : 0u;
}

// Bytes of a [rows][cols] matrix of |dtype|.
__device__ __forceinline__ u64 matrix_bytes(u32 dtype, u64 rows, u32 cols) {
  return rows * cols * dtype_size(dtype);
}

// The type of matrix |i| of a packed dtype constant (a byte each).
__device__ __forceinline__ u32 packed_dtype(u32 packed, u32 i) {
  return (packed >> (8u * i)) & 0xFFu;
}

// The launch's dynamic shared memory in bytes (the local memory the CPU
// kernels check their scratch against).
__device__ __forceinline__ u32 dynamic_shared_size(void) {
#if defined(__CUDACC__)
  u32 size;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(size));
  return size;
#else
  return decode_cuda_emulation_dynamic_shared_size();
#endif
}

__device__ __forceinline__ float half_bits_to_float(u32 bits) {
  return __half2float(__ushort_as_half((unsigned short)(bits & 0xFFFFu)));
}

// Element |i| of the row of |dtype| at |row|.
__device__ __forceinline__ float weight_at(const unsigned char* row, u32 dtype,
                                           u32 i) {
  return dtype == DECODE_CUDA_DTYPE_F16
             ? half_bits_to_float(
                   __ldg((const unsigned short*)row + i))
             : __ldg((const float*)row + i);
}

__device__ __forceinline__ float warp_sum(float value) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    value += __shfl_xor_sync(0xFFFFFFFFu, value, offset);
  }
  return value;
}

__device__ __forceinline__ float warp_max(float value) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    value = fmaxf(value, __shfl_xor_sync(0xFFFFFFFFu, value, offset));
  }
  return value;
}

// The sum (|max| false) or the largest (|max| true) of every thread's
// |value|, returned to every thread. Blocks are whole warps; |scratch|
// holds 32 floats. Every thread of the block must call it.
__device__ float block_reduce(float value, bool max, float* scratch) {
  const u32 lane = threadIdx.x & 31u;
  const u32 warp = threadIdx.x >> 5;
  const u32 warps = blockDim.x >> 5;
  value = max ? warp_max(value) : warp_sum(value);
  __syncthreads();  // an earlier call's readers are done with scratch
  if (lane == 0) scratch[warp] = value;
  __syncthreads();
  if (warp == 0) {
    float total = lane < warps ? scratch[lane] : (max ? -INFINITY : 0.0f);
    total = max ? warp_max(total) : warp_sum(total);
    if (lane == 0) scratch[0] = total;
  }
  __syncthreads();
  return scratch[0];
}

// One step of warp_transpose_sum: lanes with bit |HALF| clear keep
// v[0..HALF) and send v[HALF..2 HALF) to the lane HALF away, which keeps
// the upper half and sends the lower.
template <u32 HALF>
__device__ __forceinline__ void transpose_step(float (&v)[32], u32 lane) {
  const bool upper = (lane & HALF) != 0;
#pragma unroll
  for (u32 i = 0; i < HALF; ++i) {
    const float send = upper ? v[i] : v[i + HALF];
    const float keep = upper ? v[i + HALF] : v[i];
    v[i] = keep + __shfl_xor_sync(0xFFFFFFFFu, send, (int)HALF);
  }
}

// The calling warp's 32 sums |v| (each lane's partial sums of 32 values)
// added across the warp: lane c returns the total of v[c]. Each step
// halves the values a lane holds: 31 shuffles, where a warp_sum of each
// would take 160.
__device__ __forceinline__ float warp_transpose_sum(float (&v)[32]) {
  const u32 lane = threadIdx.x & 31u;
  transpose_step<16>(v, lane);
  transpose_step<8>(v, lane);
  transpose_step<4>(v, lane);
  transpose_step<2>(v, lane);
  transpose_step<1>(v, lane);
  return v[0];
}

// Eight f16 weights (a 16-byte load) times x[0..8): |acc| + the products.
__device__ __forceinline__ float dot8_f16(uint4 w, const float4* x,
                                          float acc) {
  const float4 x0 = __ldg(x);
  const float4 x1 = __ldg(x + 1);
  acc = fmaf(half_bits_to_float(w.x), x0.x, acc);
  acc = fmaf(half_bits_to_float(w.x >> 16), x0.y, acc);
  acc = fmaf(half_bits_to_float(w.y), x0.z, acc);
  acc = fmaf(half_bits_to_float(w.y >> 16), x0.w, acc);
  acc = fmaf(half_bits_to_float(w.z), x1.x, acc);
  acc = fmaf(half_bits_to_float(w.z >> 16), x1.y, acc);
  acc = fmaf(half_bits_to_float(w.w), x1.z, acc);
  acc = fmaf(half_bits_to_float(w.w >> 16), x1.w, acc);
  return acc;
}

__device__ __forceinline__ float dot4_f32(float4 w, const float4* x,
                                          float acc) {
  const float4 v = __ldg(x);
  acc = fmaf(w.x, v.x, acc);
  acc = fmaf(w.y, v.y, acc);
  acc = fmaf(w.z, v.z, acc);
  acc = fmaf(w.w, v.w, acc);
  return acc;
}

// True when rows of |cols| elements of |dtype| at |w| and the input |x|
// can be read in 16-byte loads: both 16-byte aligned, rows whole loads.
__device__ __forceinline__ bool vector_rows(const void* w, u32 dtype, u32 cols,
                                            const float* x) {
  const u32 per_load = dtype == DECODE_CUDA_DTYPE_F16 ? 8u : 4u;
  return cols % per_load == 0 && ((u64)w & 15u) == 0 && ((u64)x & 15u) == 0;
}

// Row |r| of the [rows][cols] matrix |w| of |dtype| dotted with |x| by
// the calling warp; every lane returns the sum. |vector|: vector_rows.
__device__ __forceinline__ float warp_row_dot(const unsigned char* w, u32 dtype, u64 r,
                              u32 cols, const float* x, bool vector) {
  const u32 lane = threadIdx.x & 31u;
  const unsigned char* row = w + r * cols * dtype_size(dtype);
  float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
  if (vector && dtype == DECODE_CUDA_DTYPE_F16) {
    const uint4* rv = (const uint4*)row;
    const float4* xv = (const float4*)x;
    const u32 n = cols / 8u;
    u32 j = lane;
    // Four loads in flight a lane.
    for (; j + 96u < n; j += 128u) {
      const uint4 w0 = __ldg(rv + j);
      const uint4 w1 = __ldg(rv + j + 32u);
      const uint4 w2 = __ldg(rv + j + 64u);
      const uint4 w3 = __ldg(rv + j + 96u);
      a0 = dot8_f16(w0, xv + 2u * j, a0);
      a1 = dot8_f16(w1, xv + 2u * (j + 32u), a1);
      a2 = dot8_f16(w2, xv + 2u * (j + 64u), a2);
      a3 = dot8_f16(w3, xv + 2u * (j + 96u), a3);
    }
    for (; j < n; j += 32u) a0 = dot8_f16(__ldg(rv + j), xv + 2u * j, a0);
  } else if (vector) {
    const float4* rv = (const float4*)row;
    const float4* xv = (const float4*)x;
    const u32 n = cols / 4u;
    u32 j = lane;
    for (; j + 96u < n; j += 128u) {
      const float4 w0 = __ldg(rv + j);
      const float4 w1 = __ldg(rv + j + 32u);
      const float4 w2 = __ldg(rv + j + 64u);
      const float4 w3 = __ldg(rv + j + 96u);
      a0 = dot4_f32(w0, xv + j, a0);
      a1 = dot4_f32(w1, xv + j + 32u, a1);
      a2 = dot4_f32(w2, xv + j + 64u, a2);
      a3 = dot4_f32(w3, xv + j + 96u, a3);
    }
    for (; j < n; j += 32u) a0 = dot4_f32(__ldg(rv + j), xv + j, a0);
  } else {
    for (u32 i = lane; i < cols; i += 32u) {
      a0 = fmaf(weight_at(row, dtype, i), __ldg(x + i), a0);
    }
  }
  return warp_sum((a0 + a1) + (a2 + a3));
}

// SwiGLU's product of one hidden unit (decode_kernels.c's decode_swiglu,
// its operations in its order).
__device__ __forceinline__ float swiglu(float gate, float up) {
  return __fmul_rn(__fdiv_rn(gate, __fadd_rn(1.0f, expf(-gate))), up);
}

// Rotates the pair (v0, v1) by the angle whose cosine and sine are |c|
// and |s|, as decode_rope_rotate does: the first (|second| false) or the
// second element of the result.
__device__ __forceinline__ float rope_element(float v0, float v1, float c,
                                              float s, bool second) {
  return second ? __fadd_rn(__fmul_rn(v0, s), __fmul_rn(v1, c))
                : __fsub_rn(__fmul_rn(v0, c), __fmul_rn(v1, s));
}

// Rotates the (2i, 2i+1) pairs of |row| (|width| floats) by the angles of
// |rope| (head_size / 2 pairs of cos, sin), the block's threads over the
// pairs.
__device__ void rope_row(float* row, u32 width, const float* rope,
                         u32 head_size) {
  for (u32 p = threadIdx.x; 2u * p + 1u < width; p += blockDim.x) {
    const u32 r = 2u * p;
    const u32 pair = (r % head_size) / 2u;
    const float c = rope[2u * pair];
    const float s = rope[2u * pair + 1u];
    const float v0 = row[r];
    const float v1 = row[r + 1u];
    row[r] = rope_element(v0, v1, c, s, false);
    row[r + 1u] = rope_element(v0, v1, c, s, true);
  }
}

// One query head |q| (head_size floats) attending over the first
// |length| rows of |keys| and |values| ([length][kv_dim], kv head |kv_h|):
// softmax of q . k_t / sqrt(head_size), then |out| = sum p_t v_t
// (decode_kernels.c's decode_attend). |scores| holds |length| floats
// (dynamic shared memory); |partial| DECODE_CUDA_ATTENTION_THREADS floats,
// |scratch| 32. Every thread of the block must call it. A block is one
// head of one position (the CPU's workgroup), so a long context is long
// work for few blocks: splitting positions across blocks (flash
// decoding) would need workgroups the CPU kernels do not have.
__device__ void attend(const float* q, const float* keys, const float* values,
                       u32 kv_dim, u32 kv_h, u32 head_size, u32 length,
                       float* scores, float* partial, float* scratch,
                       float* out) {
  const float scale = 1.0f / sqrtf((float)head_size);
  const u64 head = (u64)kv_h * head_size;
  // A thread a position, its key's loads independent of each other (a
  // warp a position would wait for each position's loads in turn: a
  // latency per position, where the block has only a head's work). The
  // key rows are 16-byte aligned when head_size and kv_dim are multiples
  // of 4 and the bindings are.
  const bool vector = head_size % 4u == 0 && kv_dim % 4u == 0 &&
                      ((u64)keys & 15u) == 0 && ((u64)q & 15u) == 0;
  for (u32 t = threadIdx.x; t < length; t += blockDim.x) {
    const float* k = keys + (u64)t * kv_dim + head;
    float dot = 0.0f;
    if (vector) {
      const float4* k4 = (const float4*)k;
      const float4* q4 = (const float4*)q;
#pragma unroll 4
      for (u32 i = 0; i < head_size / 4u; ++i) {
        const float4 a = k4[i];
        const float4 b = q4[i];
        dot = fmaf(a.x, b.x, dot);
        dot = fmaf(a.y, b.y, dot);
        dot = fmaf(a.z, b.z, dot);
        dot = fmaf(a.w, b.w, dot);
      }
    } else {
      for (u32 i = 0; i < head_size; ++i) dot = fmaf(k[i], q[i], dot);
    }
    scores[t] = dot * scale;
  }
  __syncthreads();
  float max = -INFINITY;
  for (u32 t = threadIdx.x; t < length; t += blockDim.x) {
    max = fmaxf(max, scores[t]);
  }
  max = block_reduce(max, true, scratch);
  float total = 0.0f;
  for (u32 t = threadIdx.x; t < length; t += blockDim.x) {
    const float e = expf(scores[t] - max);
    scores[t] = e;
    total += e;
  }
  // block_reduce's barriers also make every score visible to every thread.
  total = block_reduce(total, false, scratch);
  const float inverse = 1.0f / total;
  if (head_size <= blockDim.x) {
    // Groups of head_size threads, each over every groups-th position,
    // then the groups' sums added in order.
    const u32 groups = blockDim.x / head_size;
    const u32 g = threadIdx.x / head_size;
    const u32 i = threadIdx.x % head_size;
    if (g < groups) {
      float acc = 0.0f;
#pragma unroll 4
      for (u32 t = g; t < length; t += groups) {
        acc = fmaf(scores[t] * inverse, values[(u64)t * kv_dim + head + i],
                   acc);
      }
      partial[g * head_size + i] = acc;
    }
    __syncthreads();
    if (threadIdx.x < head_size) {
      float sum = partial[threadIdx.x];
      for (u32 h = 1; h < groups; ++h) sum += partial[h * head_size + threadIdx.x];
      out[threadIdx.x] = sum;
    }
  } else {
    for (u32 i = threadIdx.x; i < head_size; i += blockDim.x) {
      float acc = 0.0f;
      for (u32 t = 0; t < length; ++t) {
        acc = fmaf(scores[t] * inverse, values[(u64)t * kv_dim + head + i],
                   acc);
      }
      out[i] = acc;
    }
  }
}

// The scores of attention and batch_attention: a float per position,
// the launch's dynamic shared memory (DECODE_MAX_CONTEXT * 4 bytes in
// the kernel table).
extern __shared__ float decode_scores[];

//===----------------------------------------------------------------------===//
// The token's kernels
//===----------------------------------------------------------------------===//

extern "C" __global__ void __launch_bounds__(DECODE_CUDA_ROW_WISE_THREADS)
    embed(const unsigned char* table, const u32* token, float* x,
          u64 table_length, u64 token_length, u64 x_length, u32 dim,
          u32 vocab, u32 dtype, u32* status) {
  if (dtype_size(dtype) == 0 ||
      table_length < matrix_bytes(dtype, vocab, dim) || token_length < 4 ||
      x_length < dim * 4ull) {
    block_fail(status, 1);
    return;
  }
  const u32 id = *token;
  if (id >= vocab) {
    block_fail(status, 2);
    return;
  }
  const unsigned char* row = table + matrix_bytes(dtype, id, dim);
  for (u32 i = threadIdx.x; i < dim; i += blockDim.x) {
    x[i] = weight_at(row, dtype, i);
  }
}

extern "C" __global__ void __launch_bounds__(DECODE_CUDA_ROW_THREADS)
    qkv(const float* xn, const unsigned char* xq, const unsigned char* wq,
        const unsigned char* wk, const unsigned char* wv, float* q, float* k,
        float* v, const float* rope, u64 xn_length, u64 xq_length,
        u64 wq_length, u64 wk_length, u64 wv_length, u64 q_length,
        u64 k_length, u64 v_length, u64 rope_length, u32 dim, u32 kv_dim,
        u32 head_size, u32 dtypes, u32* status) {
  (void)xq;
  static __shared__ float rows[ROWS];
  const u32 dtype_q = packed_dtype(dtypes, 0);
  const u32 dtype_k = packed_dtype(dtypes, 1);
  const u32 dtype_v = packed_dtype(dtypes, 2);
  if (dtype_size(dtype_q) == 0 || dtype_size(dtype_k) == 0 ||
      dtype_size(dtype_v) == 0 || head_size == 0 || xn_length < dim * 4ull ||
      xq_length < quant_stride(dim) ||
      wq_length < matrix_bytes(dtype_q, dim, dim) ||
      wk_length < matrix_bytes(dtype_k, kv_dim, dim) ||
      wv_length < matrix_bytes(dtype_v, kv_dim, dim) ||
      q_length < dim * 4ull || k_length < kv_dim * 4ull ||
      v_length < kv_dim * 4ull || rope_length < head_size * 4ull) {
    block_fail(status, 1);
    return;
  }
  // The block's rows lie in one of q, k or v (widths are multiples of
  // ROWS).
  u32 section = 0;
  u32 row0 = blockIdx.x * ROWS;
  if (row0 >= dim) {
    row0 -= dim;
    section = 1;
    if (row0 >= kv_dim) {
      row0 -= kv_dim;
      section = 2;
    }
  }
  const u32 limit = section == 0 ? dim : kv_dim;
  if (row0 + ROWS > limit) {
    block_fail(status, 1);
    return;
  }
  const unsigned char* w = section == 0 ? wq : section == 1 ? wk : wv;
  const u32 dtype = section == 0 ? dtype_q : section == 1 ? dtype_k : dtype_v;
  float* out = section == 0 ? q : section == 1 ? k : v;
  // Thread t < ROWS rotates row t: its pair (row0 + 2m, row0 + 2m + 1)'s
  // angle, loaded before the products so that its latency (the rotary
  // table is host memory on cuda) hides behind them.
  float cosine = 1.0f, sine = 0.0f;
  if (section < 2 && threadIdx.x < ROWS) {
    const u32 pair = ((row0 + (threadIdx.x & ~1u)) % head_size) / 2u;
    cosine = rope[2u * pair];
    sine = rope[2u * pair + 1u];
  }
  const bool vector = vector_rows(w, dtype, dim, xn);
  const u32 warp = threadIdx.x >> 5;
  for (u32 i = warp; i < ROWS; i += blockDim.x >> 5) {
    const float value = warp_row_dot(w, dtype, row0 + i, dim, xn, vector);
    if ((threadIdx.x & 31u) == 0) rows[i] = value;
  }
  __syncthreads();
  if (threadIdx.x < ROWS) {
    const u32 t = threadIdx.x;
    float value = rows[t];
    if (section < 2) {
      const u32 first = t & ~1u;
      value = rope_element(rows[first], rows[first + 1u], cosine, sine,
                           (t & 1u) != 0);
    }
    out[row0 + t] = value;
  }
}

extern "C" __global__ void __launch_bounds__(DECODE_CUDA_ATTENTION_THREADS)
    attention(const float* q, const float* keys, const float* values,
              float* out, u64 q_length, u64 keys_length, u64 values_length,
              u64 out_length, u32 n_heads, u32 n_kv_heads, u32 head_size,
              u32* status) {
  static __shared__ float partial[DECODE_CUDA_ATTENTION_THREADS];
  static __shared__ float scratch[32];
  // Counts the CPU kernel divides by without checking: 1 here.
  if (n_heads == 0 || n_kv_heads == 0 || head_size == 0 ||
      n_heads % n_kv_heads != 0 || blockIdx.x >= n_heads) {
    block_fail(status, 1);
    return;
  }
  const u32 dim = n_heads * head_size;
  const u32 kv_dim = n_kv_heads * head_size;
  const u64 row_bytes = kv_dim * 4ull;
  const u64 length = keys_length / row_bytes;
  if (q_length < dim * 4ull || length == 0 ||
      values_length < length * row_bytes || out_length < dim * 4ull) {
    block_fail(status, 1);
    return;
  }
  if (dynamic_shared_size() < length * sizeof(float)) {
    block_fail(status, 3);
    return;
  }
  const u32 h = blockIdx.x;
  attend(q + (u64)h * head_size, keys, values, kv_dim,
         h / (n_heads / n_kv_heads), head_size, (u32)length, decode_scores,
         partial, scratch, out + (u64)h * head_size);
}

extern "C" __global__ void __launch_bounds__(DECODE_CUDA_ROW_THREADS)
    matvec_add(const float* x, const unsigned char* xq, const unsigned char* w,
               float* out, u64 x_length, u64 xq_length, u64 w_length,
               u64 out_length, u32 rows, u32 cols, u32 dtype, u32* status) {
  (void)xq;
  if (dtype_size(dtype) == 0 || x_length < cols * 4ull ||
      xq_length < quant_stride(cols) ||
      w_length < matrix_bytes(dtype, rows, cols) ||
      out_length < rows * 4ull) {
    block_fail(status, 1);
    return;
  }
  const u32 first = blockIdx.x * ROWS;
  if (first + ROWS > rows) {
    block_fail(status, 1);
    return;
  }
  const bool vector = vector_rows(w, dtype, cols, x);
  for (u32 i = threadIdx.x >> 5; i < ROWS; i += blockDim.x >> 5) {
    const float value = warp_row_dot(w, dtype, first + i, cols, x, vector);
    if ((threadIdx.x & 31u) == 0) out[first + i] += value;
  }
}

extern "C" __global__ void __launch_bounds__(DECODE_CUDA_ROW_THREADS)
    ffn(const float* xn, const unsigned char* xq, const unsigned char* w1,
        const unsigned char* w3, float* h, u64 xn_length, u64 xq_length,
        u64 w1_length, u64 w3_length, u64 h_length, u32 dim, u32 hidden,
        u32 dtypes, u32* status) {
  (void)xq;
  const u32 dtype1 = packed_dtype(dtypes, 0);
  const u32 dtype3 = packed_dtype(dtypes, 1);
  if (dtype_size(dtype1) == 0 || dtype_size(dtype3) == 0 ||
      xn_length < dim * 4ull || xq_length < quant_stride(dim) ||
      w1_length < matrix_bytes(dtype1, hidden, dim) ||
      w3_length < matrix_bytes(dtype3, hidden, dim) ||
      h_length < hidden * 4ull) {
    block_fail(status, 1);
    return;
  }
  const u32 first = blockIdx.x * ROWS;
  if (first + ROWS > hidden) {
    block_fail(status, 1);
    return;
  }
  const bool vector1 = vector_rows(w1, dtype1, dim, xn);
  const bool vector3 = vector_rows(w3, dtype3, dim, xn);
  for (u32 i = threadIdx.x >> 5; i < ROWS; i += blockDim.x >> 5) {
    const float gate = warp_row_dot(w1, dtype1, first + i, dim, xn, vector1);
    const float up = warp_row_dot(w3, dtype3, first + i, dim, xn, vector3);
    if ((threadIdx.x & 31u) == 0) h[first + i] = swiglu(gate, up);
  }
}

extern "C" __global__ void __launch_bounds__(DECODE_CUDA_ROW_THREADS)
    classifier(const float* xn, const unsigned char* xq,
               const unsigned char* w, float* logits, u64 xn_length,
               u64 xq_length, u64 w_length, u64 logits_length, u32 dim,
               u32 vocab, u32 dtype, u32* status) {
  (void)xq;
  if (dtype_size(dtype) == 0 || xn_length < dim * 4ull ||
      xq_length < quant_stride(dim) ||
      w_length < matrix_bytes(dtype, vocab, dim) ||
      logits_length < vocab * 4ull) {
    block_fail(status, 1);
    return;
  }
  const u32 first = blockIdx.x * CLASSIFIER_ROWS;
  const u32 last = min(first + CLASSIFIER_ROWS, vocab);
  const bool vector = vector_rows(w, dtype, dim, xn);
  for (u32 r = first + (threadIdx.x >> 5); r < last; r += blockDim.x >> 5) {
    const float value = warp_row_dot(w, dtype, r, dim, xn, vector);
    if ((threadIdx.x & 31u) == 0) logits[r] = value;
  }
}

// Whether (value |v|, index |i|) comes before (|best|, |index|): the larger
// value, the smaller index of equal ones; UINT32_MAX is no index.
__device__ __forceinline__ bool argmax_before(float v, u32 i, float best,
                                              u32 index) {
  return i != 0xFFFFFFFFu &&
         (index == 0xFFFFFFFFu || v > best || (v == best && i < index));
}

extern "C" __global__ void __launch_bounds__(DECODE_CUDA_ARGMAX_THREADS)
    argmax(const float* logits, u32* token, u64 logits_length,
           u64 token_length, u32 vocab, u32* status) {
  static __shared__ float best_values[32];
  static __shared__ u32 best_indices[32];
  if (vocab == 0 || logits_length < vocab * 4ull || token_length < 4) {
    block_fail(status, 1);
    return;
  }
  // Each thread's first largest over its positions, in increasing order,
  // eight loads in flight (one block reads the whole vocabulary: its
  // loads' latency, not the bandwidth, is what it waits for).
  float best = -INFINITY;
  u32 index = 0xFFFFFFFFu;
  const u32 stride = blockDim.x;
  u32 i = threadIdx.x;
  for (; i + 7u * stride < vocab; i += 8u * stride) {
    float v[8];
#pragma unroll
    for (u32 k = 0; k < 8; ++k) v[k] = logits[i + k * stride];
#pragma unroll
    for (u32 k = 0; k < 8; ++k) {
      if (index == 0xFFFFFFFFu || v[k] > best) {
        best = v[k];
        index = i + k * stride;
      }
    }
  }
  for (; i < vocab; i += stride) {
    const float v = logits[i];
    if (index == 0xFFFFFFFFu || v > best) {
      best = v;
      index = i;
    }
  }
  for (int offset = 16; offset > 0; offset >>= 1) {
    const float other = __shfl_xor_sync(0xFFFFFFFFu, best, offset);
    const u32 other_index = __shfl_xor_sync(0xFFFFFFFFu, index, offset);
    if (argmax_before(other, other_index, best, index)) {
      best = other;
      index = other_index;
    }
  }
  const u32 lane = threadIdx.x & 31u;
  const u32 warp = threadIdx.x >> 5;
  if (lane == 0) {
    best_values[warp] = best;
    best_indices[warp] = index;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (u32 w = 1; w < (blockDim.x >> 5); ++w) {
      if (argmax_before(best_values[w], best_indices[w], best, index)) {
        best = best_values[w];
        index = best_indices[w];
      }
    }
    *token = index;
  }
}

//===----------------------------------------------------------------------===//
// The batch's kernels: binding 0 is the batch's tokens, u32 [B]; blocks
// past B return at once.
//===----------------------------------------------------------------------===//

extern "C" __global__ void __launch_bounds__(DECODE_CUDA_ROW_WISE_THREADS)
    batch_embed(const u32* tokens, const unsigned char* table, float* x,
                u64 tokens_length, u64 table_length, u64 x_length, u32 dim,
                u32 vocab, u32 dtype, u32* status) {
  const u32 batch = (u32)(tokens_length / 4);
  const u32 b = blockIdx.x;
  if (b >= batch) return;
  if (dtype_size(dtype) == 0 ||
      table_length < matrix_bytes(dtype, vocab, dim) ||
      x_length < (u64)batch * dim * 4) {
    block_fail(status, 1);
    return;
  }
  const u32 id = tokens[b];
  if (id >= vocab) {
    block_fail(status, 2);
    return;
  }
  const unsigned char* row = table + matrix_bytes(dtype, id, dim);
  float* out = x + (u64)b * dim;
  for (u32 i = threadIdx.x; i < dim; i += blockDim.x) {
    out[i] = weight_at(row, dtype, i);
  }
}

extern "C" __global__ void __launch_bounds__(DECODE_CUDA_ROW_WISE_THREADS)
    batch_rmsnorm(const u32* tokens, const float* x, const float* norm,
                  float* xn, unsigned char* xq, u64 tokens_length,
                  u64 x_length, u64 norm_length, u64 xn_length, u64 xq_length,
                  u32 dim, u32 eps_bits, u32 forms, u32* status) {
  (void)tokens;
  (void)xq;
  static __shared__ float scratch[32];
  const u32 batch = (u32)(tokens_length / 4);
  const u32 b = blockIdx.x;
  if (b >= batch) return;
  // No quantized forms on cuda (decode_cuda.h): a type not taken.
  if (forms != 0 || x_length < (u64)batch * dim * 4 ||
      norm_length < dim * 4ull || xn_length < (u64)batch * dim * 4 ||
      xq_length < batch * quant_stride(dim)) {
    block_fail(status, 1);
    return;
  }
  const float* row = x + (u64)b * dim;
  float sum = 0.0f;
  for (u32 i = threadIdx.x; i < dim; i += blockDim.x) {
    sum = fmaf(row[i], row[i], sum);
  }
  sum = block_reduce(sum, false, scratch);
  const float scale = 1.0f / sqrtf(sum / (float)dim + __uint_as_float(eps_bits));
  float* out = xn + (u64)b * dim;
  for (u32 i = threadIdx.x; i < dim; i += blockDim.x) {
    out[i] = __fmul_rn(__fmul_rn(row[i], scale), norm[i]);
  }
}

extern "C" __global__ void __launch_bounds__(DECODE_CUDA_QUANTIZE_THREADS)
    batch_quantize(const u32* tokens, const float* x, unsigned char* xq,
                   u64 tokens_length, u64 x_length, u64 xq_length, u32 n,
                   u32 forms, u32* status) {
  (void)tokens;
  (void)x;
  (void)xq;
  const u32 batch = (u32)(tokens_length / 4);
  if (blockIdx.x >= batch) return;
  // f32 and f16 rows read no quantized form; the block types' are not
  // taken on cuda (decode_cuda.h).
  if (forms != 0 || x_length < (u64)batch * n * 4 ||
      xq_length < batch * quant_stride(n)) {
    block_fail(status, 1);
  }
}

// Four weights of a row of |dtype| from element |k| (zeros past |cols|);
// |vector|: 16-byte aligned f32 or 8-byte aligned f16 rows, |cols| a
// multiple of 4.
__device__ __forceinline__ float4 load4(const unsigned char* row, u32 dtype,
                                        u32 k, u32 cols, bool vector) {
  if (vector) {
    if (k >= cols) return make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (dtype == DECODE_CUDA_DTYPE_F16) {
      const uint2 h = __ldg((const uint2*)(row + (u64)k * 2u));
      return make_float4(half_bits_to_float(h.x), half_bits_to_float(h.x >> 16),
                         half_bits_to_float(h.y),
                         half_bits_to_float(h.y >> 16));
    }
    return __ldg((const float4*)(row + (u64)k * 4u));
  }
  float v[4];
  for (u32 i = 0; i < 4; ++i) {
    v[i] = k + i < cols ? weight_at(row, dtype, k + i) : 0.0f;
  }
  return make_float4(v[0], v[1], v[2], v[3]);
}

__device__ __forceinline__ float dot4(float4 w, float4 x, float acc) {
  acc = fmaf(w.x, x.x, acc);
  acc = fmaf(w.y, x.y, acc);
  acc = fmaf(w.z, x.z, acc);
  acc = fmaf(w.w, x.w, acc);
  return acc;
}

// The elements of the GEMM's columns staged in shared memory at once.
#define GEMM_CHUNK 256u

// out[b] = W x[b] (STORE), out[b] += W x[b] (ADD), or
// out[b] = silu(W x[b]) * (W3 x[b]) (SWIGLU) for the tile of block w:
// rows (w % row_tiles) * 16 .. + 16 by positions (w / row_tiles) * 32 ..
// + 32. A warp a row (8 warps: two passes over the tile's 16); the
// tile's columns go through shared memory GEMM_CHUNK elements at a time,
// each lane holding a sum per column (and per column of W3), so every
// weight is loaded once for the tile's 32 positions.
extern "C" __global__ void __launch_bounds__(DECODE_CUDA_GEMM_THREADS)
    gemm(const u32* tokens, const float* x, const unsigned char* xq,
         const unsigned char* w, const unsigned char* w3, float* out,
         u64 tokens_length, u64 x_length, u64 xq_length, u64 w_length,
         u64 w3_length, u64 out_length, u32 rows, u32 cols, u32 dtypes,
         u32 mode, u32* status) {
  (void)tokens;
  (void)xq;
  static __shared__ float4 columns[GEMM_COLUMNS][GEMM_CHUNK / 4u];
  const u32 dtype = packed_dtype(dtypes, 0);
  const u32 dtype3 = packed_dtype(dtypes, 1);
  const u32 batch = (u32)(tokens_length / 4);
  const u32 row_tiles = (rows + ROWS - 1u) / ROWS;
  if (row_tiles == 0) {
    block_fail(status, 1);
    return;
  }
  const u32 first_row = blockIdx.x % row_tiles * ROWS;
  const u32 first_col = blockIdx.x / row_tiles * GEMM_COLUMNS;
  if (first_col >= batch) return;
  const bool swiglu_mode = mode == GEMM_SWIGLU;
  if (mode > GEMM_SWIGLU || dtype_size(dtype) == 0 ||
      (swiglu_mode && dtype_size(dtype3) == 0) ||
      x_length < (u64)batch * cols * 4 ||
      xq_length < batch * quant_stride(cols) ||
      w_length < matrix_bytes(dtype, rows, cols) ||
      (swiglu_mode && w3_length < matrix_bytes(dtype3, rows, cols)) ||
      out_length < (u64)batch * rows * 4) {
    block_fail(status, 1);
    return;
  }
  const u32 last_row = min(first_row + ROWS, rows);
  const u32 column_count = min(GEMM_COLUMNS, batch - first_col);
  const u32 lane = threadIdx.x & 31u;
  const u32 warp = threadIdx.x >> 5;
  const u32 warps = blockDim.x >> 5;
  const bool vector = cols % 4u == 0 && ((u64)w & 15u) == 0;
  const bool vector3 = cols % 4u == 0 && ((u64)w3 & 15u) == 0;
  // Warps over the tile's rows; the loops around the barriers are the
  // same for every thread.
  for (u32 base = 0; base < ROWS; base += warps) {
    const u32 r = first_row + base + warp;
    const bool active = base + warp < ROWS && r < last_row;
    const unsigned char* row = w + matrix_bytes(dtype, r, cols);
    const unsigned char* row3 =
        swiglu_mode ? w3 + matrix_bytes(dtype3, r, cols) : w3;
    float acc[GEMM_COLUMNS];
    float acc3[GEMM_COLUMNS];
#pragma unroll
    for (u32 c = 0; c < GEMM_COLUMNS; ++c) acc[c] = acc3[c] = 0.0f;
    for (u32 k0 = 0; k0 < cols; k0 += GEMM_CHUNK) {
      __syncthreads();  // the last chunk's readers are done
      float* staged = (float*)columns;
      for (u32 e = threadIdx.x; e < GEMM_COLUMNS * GEMM_CHUNK;
           e += blockDim.x) {
        const u32 c = e / GEMM_CHUNK;
        const u32 k = k0 + e % GEMM_CHUNK;
        staged[e] = c < column_count && k < cols
                        ? x[(u64)(first_col + c) * cols + k]
                        : 0.0f;
      }
      __syncthreads();
      if (!active) continue;
      // Lane l takes elements 4l .. 4l + 3 of each half of the chunk:
      // float4 reads of consecutive lanes, free of bank conflicts.
      const u32 k = k0 + 4u * lane;
      const float4 w0 = load4(row, dtype, k, cols, vector);
      const float4 w1 = load4(row, dtype, k + 128u, cols, vector);
      float4 u0 = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      float4 u1 = u0;
      if (swiglu_mode) {
        u0 = load4(row3, dtype3, k, cols, vector3);
        u1 = load4(row3, dtype3, k + 128u, cols, vector3);
      }
#pragma unroll
      for (u32 c = 0; c < GEMM_COLUMNS; ++c) {
        const float4 x0 = columns[c][lane];
        const float4 x1 = columns[c][32u + lane];
        acc[c] = dot4(w1, x1, dot4(w0, x0, acc[c]));
        if (swiglu_mode) acc3[c] = dot4(u1, x1, dot4(u0, x0, acc3[c]));
      }
    }
    if (!active) continue;
    // Lane c: column c's sums.
    const float value = warp_transpose_sum(acc);
    const float up = swiglu_mode ? warp_transpose_sum(acc3) : 0.0f;
    if (lane < column_count) {
      float* o = out + (u64)(first_col + lane) * rows + r;
      if (mode == GEMM_STORE) {
        *o = value;
      } else if (mode == GEMM_ADD) {
        *o += value;
      } else {
        *o = swiglu(value, up);
      }
    }
  }
}

extern "C" __global__ void __launch_bounds__(DECODE_CUDA_ROW_WISE_THREADS)
    batch_rope(const u32* tokens, float* q, float* k, const float* rope,
               u64 tokens_length, u64 q_length, u64 k_length,
               u64 rope_length, u32 dim, u32 kv_dim, u32 head_size,
               u32* status) {
  (void)tokens;
  const u32 batch = (u32)(tokens_length / 4);
  const u32 b = blockIdx.x;
  if (b >= batch) return;
  if (head_size == 0 || head_size % 2u != 0 ||
      q_length < (u64)batch * dim * 4 || k_length < (u64)batch * kv_dim * 4 ||
      rope_length < (u64)batch * head_size * 4) {
    block_fail(status, 1);
    return;
  }
  const float* row_rope = rope + (u64)b * head_size;
  rope_row(q + (u64)b * dim, dim, row_rope, head_size);
  rope_row(k + (u64)b * kv_dim, kv_dim, row_rope, head_size);
}

extern "C" __global__ void __launch_bounds__(DECODE_CUDA_ATTENTION_THREADS)
    batch_attention(const u32* tokens, const float* q, const float* keys,
                    const float* values, float* out, u64 tokens_length,
                    u64 q_length, u64 keys_length, u64 values_length,
                    u64 out_length, u32 n_heads, u32 n_kv_heads,
                    u32 head_size, u32* status) {
  (void)tokens;
  static __shared__ float partial[DECODE_CUDA_ATTENTION_THREADS];
  static __shared__ float scratch[32];
  // head_size 0 too, which the CPU kernel divides by.
  if (n_heads == 0 || n_kv_heads == 0 || head_size == 0 ||
      n_heads % n_kv_heads != 0) {
    block_fail(status, 1);
    return;
  }
  const u32 dim = n_heads * head_size;
  const u32 kv_dim = n_kv_heads * head_size;
  const u32 batch = (u32)(tokens_length / 4);
  // Block w is head w % n_heads of position w / n_heads.
  const u32 h = blockIdx.x % n_heads;
  const u32 b = blockIdx.x / n_heads;
  if (b >= batch) return;
  const u64 row_bytes = kv_dim * 4ull;
  // The cache prefix ends after the batch's last position.
  const u64 end = keys_length / row_bytes;
  if (end < batch || q_length < (u64)batch * dim * 4 ||
      values_length < end * row_bytes || out_length < (u64)batch * dim * 4) {
    block_fail(status, 1);
    return;
  }
  // Position end - batch + b attends over positions 0 .. itself.
  const u64 length = end - batch + b + 1;
  if (dynamic_shared_size() < length * sizeof(float)) {
    block_fail(status, 3);
    return;
  }
  attend(q + (u64)b * dim + (u64)h * head_size, keys, values, kv_dim,
         h / (n_heads / n_kv_heads), head_size, (u32)length, decode_scores,
         partial, scratch, out + (u64)b * dim + (u64)h * head_size);
}
