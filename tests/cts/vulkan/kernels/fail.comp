// Fails (status 1) in workgroup x == fail_x. As tests/cts/test_kernels.c's
// fail.
#version 450
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 1) in;
#define WEFT_STATUS_BINDING 0
#include "weft_status.glsl"
layout(push_constant) uniform Push {
  uvec3 workgroup_count;  // the whole grid's (see weft/executable.h)
  uint fail_x;
};

void main() {
  if (gl_WorkGroupID.x == fail_x) weft_fail(1u);
}
