// out[i] = in[i] * scale + offset for i < count; scale and offset are f32
// bit patterns. Status 2 when a binding is too small for |count|. As
// tests/cts/test_kernels.c's scale_offset: a workgroup covers 64 elements.
#version 450
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer In { float in_data[]; };
layout(set = 0, binding = 1) writeonly buffer Out { float out_data[]; };
#define WEFT_STATUS_BINDING 2
#include "weft_status.glsl"
layout(push_constant) uniform Push {
  uvec3 workgroup_count;  // the whole grid's (see weft/executable.h)
  uint in_offset;
  uint out_offset;
  uint in_length;
  uint out_length;
  uint scale_bits;
  uint offset_bits;
  uint count;
};

void main() {
  // count * 4 > length, without the multiply overflowing.
  if (count > in_length / 4u || count > out_length / 4u) {
    weft_fail(2u);
    return;
  }
  uint i = gl_GlobalInvocationID.x;
  if (i < count) {
    // Rounded multiply, then rounded add: no fused multiply-add, so the
    // result is the CPU kernel's to the bit.
    precise float product =
        in_data[in_offset / 4u + i] * uintBitsToFloat(scale_bits);
    precise float sum = product + uintBitsToFloat(offset_bits);
    out_data[out_offset / 4u + i] = sum;
  }
}
