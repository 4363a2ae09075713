// The CTS's kernels for CUDA: tests/cts/test_kernels.c's four kernels as
// CUDA C, with the same names and behaviour, following the parameter
// convention of include/weft/executable.h: each binding's device address,
// each binding's length in bytes (uint64), each constant (uint32), then a
// uint32_t* status of four words. Where the CPU kernel returns non-zero,
// the CUDA kernel reports that value (weft_fail: the first failing block
// stores the code, then its block index).
//
// Block sizes are the kernel table's (cts_cuda_kernel_table.c): 64 threads
// for scale_offset and abs_range (one element each, as a CPU workgroup
// covers 64), 1 for write_ids and fail. The CUDA test double
// (tests/cuda_double/cuda_double_kernels.c) runs host versions of these
// same bodies.

typedef unsigned int weft_u32;
typedef unsigned long long weft_u64;

// Reports |code| for this block unless another block reported first.
__device__ static void weft_fail(weft_u32* status, weft_u32 code) {
  if (atomicCAS(status, 0u, code) == 0u) {
    status[1] = blockIdx.x;
    status[2] = blockIdx.y;
    status[3] = blockIdx.z;
  }
}

// out[i] = in[i] * scale + offset for i < count; scale and offset are f32
// bit patterns. Status 2 when a binding is too small for |count|.
extern "C" __global__ void scale_offset(const float* in, float* out,
                                        weft_u64 in_length,
                                        weft_u64 out_length,
                                        weft_u32 scale_bits,
                                        weft_u32 offset_bits, weft_u32 count,
                                        weft_u32* status) {
  if ((weft_u64)count * sizeof(float) > in_length ||
      (weft_u64)count * sizeof(float) > out_length) {
    weft_fail(status, 2);
    return;
  }
  weft_u32 i = blockIdx.x * blockDim.x + threadIdx.x;
  // Rounded multiply, then rounded add: no fused multiply-add, so the
  // result is the CPU kernel's to the bit.
  if (i < count) {
    out[i] = __fadd_rn(__fmul_rn(in[i], __uint_as_float(scale_bits)),
                       __uint_as_float(offset_bits));
  }
}

// data[i] = abs(data[i]) for i in [first, first + count). Status 2 when
// the binding is too small.
extern "C" __global__ void abs_range(int* data, weft_u64 length,
                                     weft_u32 first, weft_u32 count,
                                     weft_u32* status) {
  weft_u32 end = first + count;  // wraps as the CPU kernel's does
  if ((weft_u64)end * sizeof(int) > length) {
    weft_fail(status, 2);
    return;
  }
  weft_u32 i = first + blockIdx.x * blockDim.x + threadIdx.x;
  if (i < end) data[i] = abs(data[i]);
}

// Block (x, y, z) writes (x, y, z, flat index) at its flat index. Status 2
// when the binding is too small.
extern "C" __global__ void write_ids(weft_u32* out, weft_u64 length,
                                     weft_u32* status) {
  weft_u32 flat =
      (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  if ((weft_u64)(flat + 1) * 4 * sizeof(weft_u32) > length) {
    weft_fail(status, 2);
    return;
  }
  out[flat * 4 + 0] = blockIdx.x;
  out[flat * 4 + 1] = blockIdx.y;
  out[flat * 4 + 2] = blockIdx.z;
  out[flat * 4 + 3] = flat;
}

// Fails (status 1) in block x == fail_x.
extern "C" __global__ void fail(weft_u32 fail_x, weft_u32* status) {
  if (blockIdx.x == fail_x) weft_fail(status, 1);
}
