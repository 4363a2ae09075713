// weft: the local-sync driver, which runs every queue operation inline.
//
// No threads: an operation whose waits are reached at submit runs inside the
// submit call; one whose waits are not yet reached is parked and runs on the
// thread that reaches them (a host signal or another operation), from a
// loop rather than by recursion. See local_sync_device.h.
#ifndef WEFT_DRIVERS_LOCAL_SYNC_LOCAL_SYNC_DRIVER_H_
#define WEFT_DRIVERS_LOCAL_SYNC_LOCAL_SYNC_DRIVER_H_

#include "weft/driver.h"

// The driver named "local-sync". Accepts no options and no path.
extern const weft_driver_t weft_local_sync_driver;

#endif  // WEFT_DRIVERS_LOCAL_SYNC_LOCAL_SYNC_DRIVER_H_
