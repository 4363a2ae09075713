// weft hal module: hal.file.* (docs/VM.md, "The hal module").
#include <inttypes.h>

#include "modules/hal/arguments.h"
#include "modules/hal/module_impl.h"

// The bits of file.open's |mode|: weft_file_access_t in bits 0-1 (1 read,
// 2 write), weft_file_open_flags_t shifted by 2 (4 create, 8 truncate).
#define WEFT_HAL_FILE_MODE_ACCESS_MASK 0x3
#define WEFT_HAL_FILE_MODE_FLAGS_SHIFT 2
#define WEFT_HAL_FILE_MODE_MASK 0xF

// file.open(path, mode) -> (file)
static weft_status_t weft_hal_file_open(weft_vm_native_call_t* call) {
  static const char kFunction[] = "hal.file.open";
  const int32_t mode = call->args[1].i32;
  weft_hal_string_t path;
  weft_file_t* file = NULL;
  weft_status_t status = weft_hal_arg_string(kFunction, "path",
                                             call->args[0].ref,
                                             call->allocator, &path);
  if (weft_status_is_ok(status) &&
      ((mode & ~WEFT_HAL_FILE_MODE_MASK) ||
       !(mode & WEFT_HAL_FILE_MODE_ACCESS_MASK))) {
    status = weft_hal_argument_error(
        kFunction, "mode",
        "is 0x%" PRIx32 "; it takes 1 read and/or 2 write, plus 4 create "
        "and 8 truncate",
        (uint32_t)mode);
  }
  if (weft_status_is_ok(status)) {
    status = weft_file_open(
        path.text, (weft_file_access_t)(mode & WEFT_HAL_FILE_MODE_ACCESS_MASK),
        (weft_file_open_flags_t)(mode >> WEFT_HAL_FILE_MODE_FLAGS_SHIFT),
        weft_hal_state(call)->allocator, &file);
  }
  weft_hal_string_deinitialize(&path);
  weft_hal_set_result(call, 0, file);
  return status;
}

// file.length(file) -> (i64): the known length, -1 when unknown (a pipe).
static weft_status_t weft_hal_file_length(weft_vm_native_call_t* call) {
  const weft_file_t* file = (const weft_file_t*)call->args[0].ref.object;
  call->results[0].i64 = weft_file_length_is_known(file)
                             ? (int64_t)weft_file_length(file)
                             : -1;
  return WEFT_OK;
}

static const weft_vm_native_function_t kFunctions[] = {
    {"file.open", "(r<bytes>, i32) -> (r<hal.file>)", weft_hal_file_open},
    {"file.length", "(r<hal.file>) -> (i64)", weft_hal_file_length},
};

const weft_hal_function_table_t kWeftHalFileFunctions = {
    sizeof(kFunctions) / sizeof(kFunctions[0]), kFunctions};
