// weft: errno to status code (see os_error.h).
#include "base/os_error.h"

#include <errno.h>

weft_status_code_t weft_status_code_from_errno(int error) {
  switch (error) {
    case ENOENT:
    case ENOTDIR:
    case ENXIO:
      return WEFT_STATUS_NOT_FOUND;
    case EACCES:
    case EPERM:
    case EROFS:
    case ETXTBSY:
      return WEFT_STATUS_PERMISSION_DENIED;
    case EISDIR:
    case EBADF:
    case EINVAL:
    case ESPIPE:
    case ENAMETOOLONG:
    case ELOOP:
      return WEFT_STATUS_INVALID_ARGUMENT;
    case EEXIST:
      return WEFT_STATUS_ALREADY_EXISTS;
    case ENOSPC:
    case EDQUOT:
    case ENOMEM:
    case EMFILE:
    case ENFILE:
      return WEFT_STATUS_RESOURCE_EXHAUSTED;
    case EFBIG:
    case EOVERFLOW:
      return WEFT_STATUS_OUT_OF_RANGE;
    case EIO:
      return WEFT_STATUS_DATA_LOSS;
    case EAGAIN:
    case EBUSY:
      return WEFT_STATUS_UNAVAILABLE;
    case ETIMEDOUT:
      return WEFT_STATUS_DEADLINE_EXCEEDED;
    default:
      return WEFT_STATUS_UNKNOWN;
  }
}
