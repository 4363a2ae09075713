// data[i] = abs(data[i]) for i in [first, first + count). Status 2 when
// the binding is too small. As tests/cts/test_kernels.c's abs_range.
#version 450
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Data { int data[]; };
#define WEFT_STATUS_BINDING 1
#include "weft_status.glsl"
layout(push_constant) uniform Push {
  uvec3 workgroup_count;  // the whole grid's (see weft/executable.h)
  uint data_offset;
  uint data_length;
  uint first;
  uint count;
};

void main() {
  uint end = first + count;  // wraps as the CPU kernel's does
  if (end > data_length / 4u) {
    weft_fail(2u);
    return;
  }
  uint i = first + gl_GlobalInvocationID.x;
  if (i < end) data[data_offset / 4u + i] = abs(data[data_offset / 4u + i]);
}
