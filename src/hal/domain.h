// weft: domains, where a device's memory lives and its code runs.
//
// Every CPU driver's device is in the host domain (WEFT_DOMAIN_HOST): its
// buffers are host memory and its executables host code, so any of them
// serves any CPU device. A driver with memory and code of its own (a GPU)
// gives each device a domain of its own (weft_domain_next); validation
// then rejects a buffer or executable of one domain on a device of
// another, naming both, where it would otherwise fault.
#ifndef WEFT_HAL_DOMAIN_H_
#define WEFT_HAL_DOMAIN_H_

#include <stdint.h>

typedef uint64_t weft_domain_t;
#define WEFT_DOMAIN_HOST ((weft_domain_t)0)

// A domain no device has had before (never WEFT_DOMAIN_HOST).
weft_domain_t weft_domain_next(void);

#endif  // WEFT_HAL_DOMAIN_H_
