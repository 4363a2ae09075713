// weft: the cuda driver, NVIDIA GPUs through the CUDA driver API (loaded at
// run time, cuda_symbols.h).
//
// Device strings: "cuda" (GPU 0), "cuda?device=N", and the options
// "completion=blocking|polling" (how ops' completions are learnt,
// cuda_device.h), "status_slots=N" (dispatches in flight at most) and
// "staging_piece=BYTES", "staging_pieces=N" (file transfers, cuda_file.c).
// Creating a device where there is no driver library or no GPU is
// UNAVAILABLE with the reason.
#ifndef WEFT_DRIVERS_CUDA_CUDA_DRIVER_H_
#define WEFT_DRIVERS_CUDA_CUDA_DRIVER_H_

#include "weft/driver.h"

extern const weft_driver_t weft_cuda_driver;

#endif  // WEFT_DRIVERS_CUDA_CUDA_DRIVER_H_
