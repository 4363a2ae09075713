// weft: checks of required pointer arguments at the public API.
//
// Every public function that returns a status checks its required pointers
// (handles, arrays with a non-zero count, out-parameters) before it touches
// anything, and answers a NULL one with INVALID_ARGUMENT naming itself and
// the argument: "weft_device_queue_fill: target is NULL". The check is
// inline and allocates nothing unless an argument is missing.
//
//   weft_status_t status = weft_arguments_require(
//       __func__, "device,target,pattern",
//       (const void* const[]){device, target, pattern}, 3);
#ifndef WEFT_BASE_ARGUMENTS_H_
#define WEFT_BASE_ARGUMENTS_H_

#include <stdbool.h>
#include <stdint.h>

#include "weft/status.h"

// Returns INVALID_ARGUMENT "|function|: NAME is NULL", NAME being entry
// |index| of the comma-separated |names|. Out of line: the error path.
weft_status_t weft_arguments_null_error(const char* function,
                                        const char* names, uint32_t index);

// OK when every one of the |count| |pointers| is set; otherwise the error
// above for the first NULL one. |names| lists them in order, comma-separated.
static inline weft_status_t weft_arguments_require(
    const char* function, const char* names, const void* const* pointers,
    uint32_t count) {
  uint32_t missing = count;
  for (uint32_t i = 0; i < count && missing == count; ++i) {
    if (!pointers[i]) missing = i;
  }
  return missing == count
             ? WEFT_OK
             : weft_arguments_null_error(function, names, missing);
}

// The same for one argument given as "is it present" (function pointers,
// which do not convert to const void*).
static inline weft_status_t weft_arguments_require_one(const char* function,
                                                       const char* name,
                                                       bool present) {
  return present ? WEFT_OK : weft_arguments_null_error(function, name, 0);
}

#endif  // WEFT_BASE_ARGUMENTS_H_
