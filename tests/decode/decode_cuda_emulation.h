// A host emulation of the CUDA C that examples/decode/cuda/decode_kernels.cu
// uses, so that file compiles as C++ and its kernels run on the CPU
// (decode_cuda_emulation_test.cc). A TEST AID, not a CUDA implementation:
// every thread of a block is a host thread, __syncthreads a barrier of
// the block's threads, a warp shuffle a barrier of the warp's 32 threads
// around an exchange of values; blocks run one after another, so
// function-scope shared arrays ("static __shared__") are plain statics.
// What it cannot tell: the GPU's memory model and caches, its arithmetic
// (expf, sqrtf and division here are the host's), performance. What it
// does tell: indexing, the blocks' and threads' division of the work,
// the reductions, the barriers (a thread that skips one a thread of its
// block waits at hangs the test), the status words.
#ifndef WEFT_TESTS_DECODE_DECODE_CUDA_EMULATION_H_
#define WEFT_TESTS_DECODE_DECODE_CUDA_EMULATION_H_

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include <functional>

#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__

struct dim3 {
  unsigned x, y, z;
};

// What one emulated thread sees.
struct decode_cuda_emulation_thread_t {
  dim3 thread_idx;
  dim3 block_idx;
  dim3 block_dim;
  dim3 grid_dim;
};
extern thread_local decode_cuda_emulation_thread_t decode_cuda_emulation_self;
#define threadIdx (decode_cuda_emulation_self.thread_idx)
#define blockIdx (decode_cuda_emulation_self.block_idx)
#define blockDim (decode_cuda_emulation_self.block_dim)
#define gridDim (decode_cuda_emulation_self.grid_dim)

// The launch's dynamic shared memory in bytes.
unsigned decode_cuda_emulation_dynamic_shared_size();

void __syncthreads();

// The value of |value| in lane (this lane ^ |offset|) of the warp; every
// lane of the warp must call it (all of the decode's shuffles are whole
// warps').
uint32_t decode_cuda_emulation_shuffle(uint32_t value, int offset);

static inline float __shfl_xor_sync(unsigned mask, float value, int offset) {
  (void)mask;
  uint32_t bits;
  memcpy(&bits, &value, sizeof(bits));
  bits = decode_cuda_emulation_shuffle(bits, offset);
  memcpy(&value, &bits, sizeof(value));
  return value;
}

static inline unsigned __shfl_xor_sync(unsigned mask, unsigned value,
                                       int offset) {
  (void)mask;
  return decode_cuda_emulation_shuffle(value, offset);
}

static inline unsigned atomicCAS(unsigned* address, unsigned compare,
                                 unsigned value) {
  __atomic_compare_exchange_n(address, &compare, value, false,
                              __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return compare;  // the old value either way
}

struct float4 {
  float x, y, z, w;
};
struct uint4 {
  unsigned x, y, z, w;
};
struct uint2 {
  unsigned x, y;
};
static inline float4 make_float4(float x, float y, float z, float w) {
  return float4{x, y, z, w};
}

template <typename T>
static inline T __ldg(const T* pointer) {
  return *pointer;
}

// Rounded single operations (the host's are, with contraction off).
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float __fsub_rn(float a, float b) { return a - b; }
static inline float __fdiv_rn(float a, float b) { return a / b; }
static inline float __uint_as_float(unsigned bits) {
  float value;
  memcpy(&value, &bits, sizeof(value));
  return value;
}

static inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }

// IEEE half, as cuda_fp16.h's.
struct __half {
  unsigned short bits;
};
static inline __half __ushort_as_half(unsigned short bits) {
  return __half{bits};
}
static inline float __half2float(__half h) {
  const uint32_t sign = (uint32_t)(h.bits & 0x8000u) << 16;
  const uint32_t exponent = (h.bits >> 10) & 0x1Fu;
  const uint32_t mantissa = h.bits & 0x3FFu;
  uint32_t bits;
  if (exponent == 0x1Fu) {
    bits = sign | 0x7F800000u | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {
    // Subnormal: m 2^-24, exact in a float.
    const float value = (float)mantissa * 0x1.0p-24f;
    memcpy(&bits, &value, sizeof(bits));
    bits |= sign;
  }
  float value;
  memcpy(&value, &bits, sizeof(value));
  return value;
}

// Runs |kernel| (a call of an emulated __global__ function) over |grid|
// blocks of |block| threads (a multiple of 32, at most 1024) with
// |shared| bytes of dynamic shared memory (decode_scores must hold
// them): blocks in order, each block's threads at once.
void decode_cuda_emulation_launch(unsigned grid, unsigned block,
                                  unsigned shared,
                                  const std::function<void()>& kernel);

#endif  // WEFT_TESTS_DECODE_DECODE_CUDA_EMULATION_H_
