// Workgroup (x, y, z) writes (x, y, z, flat index) at its flat index.
// Status 2 when the binding is too small. As tests/cts/test_kernels.c's
// write_ids.
#version 450
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) writeonly buffer Out { uint out_data[]; };
#define WEFT_STATUS_BINDING 1
#include "weft_status.glsl"
layout(push_constant) uniform Push {
  uvec3 workgroup_count;  // the whole grid's (see weft/executable.h)
  uint out_offset;
  uint out_length;
};

void main() {
  uvec3 id = gl_WorkGroupID;
  uvec3 n = workgroup_count;
  uint flat_index = (id.z * n.y + id.y) * n.x + id.x;
  if (flat_index + 1u > out_length / 16u) {
    weft_fail(2u);
    return;
  }
  uint at = out_offset / 4u + flat_index * 4u;
  out_data[at + 0u] = id.x;
  out_data[at + 1u] = id.y;
  out_data[at + 2u] = id.z;
  out_data[at + 3u] = flat_index;
}
