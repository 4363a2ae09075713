// weft: the local-task driver's scheduler options (see
// local_task_options.h).
#include "drivers/local_task/local_task_options.h"

#include <string.h>

#include "task/affinity_set.h"

weft_status_t weft_local_task_parse_topology_options(
    const weft_device_options_t* device_options,
    weft_topology_options_t* inout_options, uint32_t* inout_spin_us) {
  weft_topology_options_t options = *inout_options;
  uint32_t spin_us = *inout_spin_us;
  weft_status_t status = weft_device_options_get_u32(device_options, "workers",
                                                     &options.worker_count);
  if (weft_status_is_ok(status) &&
      options.worker_count > WEFT_TOPOLOGY_MAX_WORKER_COUNT) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "option 'workers=%s' is more than the limit of %u "
                         "workers",
                         weft_device_options_find(device_options, "workers"),
                         (unsigned)WEFT_TOPOLOGY_MAX_WORKER_COUNT);
  }
  if (weft_status_is_ok(status)) {
    status = weft_device_options_get_u32(device_options, "spin_us", &spin_us);
  }
  if (weft_status_is_ok(status) && spin_us > WEFT_LOCAL_TASK_MAX_SPIN_US) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "option 'spin_us=%s' is more than the limit of %u "
                         "microseconds",
                         weft_device_options_find(device_options, "spin_us"),
                         (unsigned)WEFT_LOCAL_TASK_MAX_SPIN_US);
  }
  const char* cpus = weft_device_options_find(device_options, "cpus");
  if (weft_status_is_ok(status) && cpus) {
    weft_affinity_set_t set;
    weft_affinity_set_initialize(weft_allocator_system(), &set);
    status = weft_affinity_set_parse(cpus, &set);
    if (weft_status_is_ok(status) && weft_affinity_set_is_empty(&set)) {
      status = WEFT_STATUS(INVALID_ARGUMENT,
                           "option 'cpus=%s' names no CPU; leave it out to "
                           "use every CPU",
                           cpus);
    } else if (!weft_status_is_ok(status)) {
      status = weft_status_annotate(status, "in option 'cpus=%s'", cpus);
    }
    weft_affinity_set_deinitialize(&set);
    options.cpus = cpus;
  }
  const char* nodes = weft_device_options_find(device_options, "nodes");
  if (weft_status_is_ok(status) && nodes) {
    if (strcmp(nodes, "current") == 0) {
      options.nodes = WEFT_TOPOLOGY_NODES_CURRENT;
    } else if (strcmp(nodes, "all") == 0) {
      options.nodes = WEFT_TOPOLOGY_NODES_ALL;
    } else {
      status =
          WEFT_STATUS(INVALID_ARGUMENT,
                      "option 'nodes=%s' is not 'current' or 'all'", nodes);
    }
  }
  if (weft_status_is_ok(status)) {
    *inout_options = options;
    *inout_spin_us = spin_us;
  }
  return status;
}
