// weft: the local-task driver's scheduler options, read from its device
// string.
//
// The task layer (src/task/topology.h) knows nothing of device strings: it
// takes a weft_topology_options_t. This is where the driver fills one from
// "local-task?workers=N&cpus=LIST&nodes=current|all&spin_us=N".
#ifndef WEFT_DRIVERS_LOCAL_TASK_LOCAL_TASK_OPTIONS_H_
#define WEFT_DRIVERS_LOCAL_TASK_LOCAL_TASK_OPTIONS_H_

#include <stdint.h>

#include "task/topology.h"
#include "weft/driver.h"
#include "weft/status.h"

// The largest spin_us=N accepted (10 s, as for WEFT_SPIN_US).
#define WEFT_LOCAL_TASK_MAX_SPIN_US 10000000u

// Reads the scheduler options of a device string into |inout_options| and
// |inout_spin_us|: workers=N (0 = auto, at most
// WEFT_TOPOLOGY_MAX_WORKER_COUNT), cpus=LIST (checked here; the option then
// points into |device_options|, which must outlive the query), nodes=
// current|all and spin_us=N (at most WEFT_LOCAL_TASK_MAX_SPIN_US). Options
// that are absent leave their output unchanged; other keys are ignored.
// INVALID_ARGUMENT naming the option and its value when one is malformed;
// the outputs are unchanged on error.
weft_status_t weft_local_task_parse_topology_options(
    const weft_device_options_t* device_options,
    weft_topology_options_t* inout_options, uint32_t* inout_spin_us);

#endif  // WEFT_DRIVERS_LOCAL_TASK_LOCAL_TASK_OPTIONS_H_
