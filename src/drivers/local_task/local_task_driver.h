// weft: the local-task driver, which runs queue operations on a pool of
// worker threads through the cooperative task scheduler (src/task).
//
// Device string: "local-task[?workers=N&cpus=LIST&nodes=current|all&
// spin_us=N&queues=N&file_io=auto|io_uring|threads|sync&file_io_depth=N]".
// See local_task_device.h for what each option does.
#ifndef WEFT_DRIVERS_LOCAL_TASK_LOCAL_TASK_DRIVER_H_
#define WEFT_DRIVERS_LOCAL_TASK_LOCAL_TASK_DRIVER_H_

#include "weft/driver.h"

// The driver named "local-task".
extern const weft_driver_t weft_local_task_driver;

// One line saying how |device| moves the bytes of fd files and why
// ("io_uring (ring of 128 entries)", "threads: io_uring_queue_init failed:
// Operation not permitted", "sync: file_io=sync"), for weft-info. NULL when
// |device| is not a local-task device. Lives as long as the device.
const char* weft_local_task_device_file_io_explanation(weft_device_t* device);

// Several lines saying which CPUs, groups and NUMA nodes |device|'s workers
// use, which CPUs were left out and why (affinity mask, cpus=, nodes=,
// cgroup quota), and the spin policy and why, for weft-info. NULL when
// |device| is not a local-task device. Lives as long as the device.
const char* weft_local_task_device_topology_explanation(weft_device_t* device);

#endif  // WEFT_DRIVERS_LOCAL_TASK_LOCAL_TASK_DRIVER_H_
