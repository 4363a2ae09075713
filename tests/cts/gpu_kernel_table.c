// The kernel table of the CTS's GPU kernels (see gpu_kernel_table.h).
#include "gpu_kernel_table.h"

const weft_kernel_def_t weft_cts_gpu_kernel_table[] = {
    {"scale_offset", NULL, 2, 3, {64, 1, 1}, 0},
    {"abs_range", NULL, 1, 2, {64, 1, 1}, 0},
    {"write_ids", NULL, 1, 0, {1, 1, 1}, 0},
    {"fail", NULL, 0, 1, {1, 1, 1}, 0},
};

const uint32_t weft_cts_gpu_kernel_count =
    sizeof(weft_cts_gpu_kernel_table) / sizeof(weft_cts_gpu_kernel_table[0]);
