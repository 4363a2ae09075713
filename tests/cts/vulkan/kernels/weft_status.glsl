// The status a weft kernel reports failure through (weft/executable.h,
// SPIR-V executables): descriptor set 0, binding WEFT_STATUS_BINDING (the
// kernel's binding count), four words. Define WEFT_STATUS_BINDING first.
layout(set = 0, binding = WEFT_STATUS_BINDING) buffer WeftStatus {
  uint weft_status[4];
};

// Reports |code| for this workgroup unless another reported first.
void weft_fail(uint code) {
  if (atomicCompSwap(weft_status[0], 0u, code) == 0u) {
    weft_status[1] = gl_WorkGroupID.x;
    weft_status[2] = gl_WorkGroupID.y;
    weft_status[3] = gl_WorkGroupID.z;
  }
}
