// weft: translating the OS's errno values into status codes.
//
// One table for every layer that calls the OS for I/O (files, the
// proactor), so the same failure gets the same code wherever it is met.
#ifndef WEFT_BASE_OS_ERROR_H_
#define WEFT_BASE_OS_ERROR_H_

#include "weft/status.h"

// The status code for |error| (an errno value): ENOENT is NOT_FOUND, EACCES
// PERMISSION_DENIED, EBADF/EISDIR/EINVAL INVALID_ARGUMENT, ENOSPC
// RESOURCE_EXHAUSTED, EIO DATA_LOSS, ... and UNKNOWN for the rest.
weft_status_code_t weft_status_code_from_errno(int error);

#endif  // WEFT_BASE_OS_ERROR_H_
