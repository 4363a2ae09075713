// weft-run: turning command-line inputs into VM values on a device, and
// results back into text or .npy files.
//
// Input forms (one --input per argument of the function, in order):
//   i32=7  i64=-3  f32=1.5  f64=2.5e3      a scalar of that type
//   4xf32=1 2 3 4   2x3xi32=1,2,3,4,5,6    a tensor: shape x element type,
//                                          then the elements (spaces or
//                                          commas), C order
//   f32=1.5 for an r<hal.buffer_view>      a rank-0 tensor
//   @path.npy                              a tensor from a NumPy file
// Tensors become buffer views over device buffers (the data goes in with
// a queue update). Element types: f16, f32, f64, i8, i16, i32, i64, u8,
// u16, u32, u64.
#ifndef WEFT_TOOLS_WEFT_RUN_TENSOR_IO_H_
#define WEFT_TOOLS_WEFT_RUN_TENSOR_IO_H_

#include <stdio.h>

#include "weft/device.h"
#include "weft/vm/value.h"

// Parses |text| as the input for an argument of |type| (|is_view| when
// the argument is a buffer view ref) and makes the value on |device|
// (refs: one reference, owned by the caller). INVALID_ARGUMENT saying what
// is wrong with the text; a .npy file's errors name the file.
weft_status_t weft_run_parse_input(const char* text, weft_vm_value_type_t type,
                                   bool is_view, weft_device_t* device,
                                   weft_vm_value_t* out_value);

// Prints |value| to |stream| the way inputs are written ("i32=42",
// "2x2xf32=1 2 3 4"), reading a buffer view back from |device|.
weft_status_t weft_run_print_value(const weft_vm_value_t* value,
                                   weft_device_t* device, FILE* stream);

// Writes buffer view |value| to |path| as a .npy file (INVALID_ARGUMENT
// for a value that is not a buffer view).
weft_status_t weft_run_write_npy(const weft_vm_value_t* value,
                                 weft_device_t* device, const char* path);

#endif  // WEFT_TOOLS_WEFT_RUN_TENSOR_IO_H_
