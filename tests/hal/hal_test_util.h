// What the HAL's unit tests share. Include after cmocka.h.
#ifndef WEFT_TESTS_HAL_HAL_TEST_UTIL_H_
#define WEFT_TESTS_HAL_HAL_TEST_UTIL_H_

#include <stdio.h>

#include "weft/status.h"

// Fails the test, printing the status, when |expr| is not OK.
#define ASSERT_OK(expr)                     \
  do {                                      \
    weft_status_t status__ = (expr);        \
    if (!weft_status_is_ok(status__)) {     \
      weft_status_fprint(stderr, status__); \
      weft_status_free(status__);           \
      fail_msg("%s failed", #expr);         \
    }                                       \
  } while (0)

#endif  // WEFT_TESTS_HAL_HAL_TEST_UTIL_H_
