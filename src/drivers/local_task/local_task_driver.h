// weft: the local-task driver, which runs queue operations on a pool of
// worker threads through the cooperative task scheduler (src/task).
//
// Device string: "local-task[?workers=N&cpus=LIST&nodes=current|all&
// spin_us=N&queues=N]". See local_task_device.h for what each option does.
#ifndef WEFT_DRIVERS_LOCAL_TASK_LOCAL_TASK_DRIVER_H_
#define WEFT_DRIVERS_LOCAL_TASK_LOCAL_TASK_DRIVER_H_

#include "weft/driver.h"

// The driver named "local-task".
extern const weft_driver_t weft_local_task_driver;

#endif  // WEFT_DRIVERS_LOCAL_TASK_LOCAL_TASK_DRIVER_H_
