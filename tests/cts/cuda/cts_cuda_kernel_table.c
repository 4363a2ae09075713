// The kernel table of the CTS's CUDA kernels: what their module does not
// say about them (see WEFT_EXECUTABLE_FORMAT_CUDA_* in
// include/weft/executable.h). The same names, counts and workgroup sizes as
// tests/cts/test_kernels.c, so one CTS runs on every driver.
#include "cts_cuda_kernels.h"

const weft_kernel_def_t weft_cts_cuda_kernel_table[] = {
    {"scale_offset", NULL, 2, 3, {64, 1, 1}, 0},
    {"abs_range", NULL, 1, 2, {64, 1, 1}, 0},
    {"write_ids", NULL, 1, 0, {1, 1, 1}, 0},
    {"fail", NULL, 0, 1, {1, 1, 1}, 0},
};

const uint32_t weft_cts_cuda_kernel_count =
    sizeof(weft_cts_cuda_kernel_table) / sizeof(weft_cts_cuda_kernel_table[0]);
