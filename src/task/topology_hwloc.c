// weft: the hwloc topology backend (built when WEFT_HAVE_HWLOC is defined;
// see src/task/topology_impl.h).
//
// The topology is loaded with HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED so that
// cores outside the process's cgroup cpuset still appear (and are reported
// as excluded, with the reason) instead of vanishing. The CPUs the process
// may use are the calling thread's binding (hwloc_get_cpubind) within
// hwloc's allowed cpuset.
//
// hwloc prints what it finds wrong with the machine on stderr (hwloc 2.9
// on Linux without /sys: "[hwloc/linux] failed to find sysfs cpu topology
// directory, aborting linux discovery.", then it reads the CPUs through
// CPUID). That is not the application's output: weft says in the
// explanation how the machine was read. hwloc takes the setting only from
// the environment (HWLOC_HIDE_ERRORS, read once per process; 2 hides all),
// so the first load sets HWLOC_HIDE_ERRORS=2 unless it is set already:
// HWLOC_HIDE_ERRORS=1 (hwloc's default) or 0 in the environment shows
// hwloc's messages again.

#include "task/topology_impl.h"

#if defined(WEFT_HAVE_HWLOC)

#include <hwloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_once_t weft_hwloc_quiet_once = PTHREAD_ONCE_INIT;

static void weft_hwloc_quiet(void) {
  // Overwrite 0: a value the user set stays.
  setenv("HWLOC_HIDE_ERRORS", "2", 0);
}

bool weft_topology_hwloc_available(void) { return true; }

// Copies a (finite) hwloc bitmap into |set|.
static weft_status_t weft_hwloc_copy_bitmap(hwloc_const_bitmap_t bitmap,
                                            weft_affinity_set_t* set) {
  weft_status_t status = WEFT_OK;
  weft_affinity_set_clear_all(set);
  for (int index = hwloc_bitmap_first(bitmap);
       weft_status_is_ok(status) && index >= 0;
       index = hwloc_bitmap_next(bitmap, index)) {
    status = weft_affinity_set_set(set, (uint32_t)index);
  }
  return status;
}

// The size of the nearest cache of |type| above |object|, or 0.
static uint64_t weft_hwloc_cache_size(hwloc_topology_t topology,
                                      hwloc_obj_type_t type,
                                      hwloc_obj_t object) {
  hwloc_obj_t cache = hwloc_get_ancestor_obj_by_type(topology, type, object);
  return cache && cache->attr ? (uint64_t)cache->attr->cache.size : 0;
}

static weft_status_t weft_hwloc_read_nodes(hwloc_topology_t topology,
                                           weft_topology_machine_t* machine) {
  weft_status_t status = WEFT_OK;
  hwloc_obj_t object = NULL;
  while (weft_status_is_ok(status) &&
         (object = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE,
                                              object)) != NULL) {
    weft_topology_node_t* node = NULL;
    uint32_t node_id = object->os_index == HWLOC_UNKNOWN_INDEX
                           ? object->logical_index
                           : object->os_index;
    status = weft_topology__machine_add_node(machine, node_id, &node);
    if (weft_status_is_ok(status)) {
      status = weft_hwloc_copy_bitmap(object->cpuset, &node->cpus);
    }
    if (weft_status_is_ok(status)) {
      weft_affinity_set_and(&node->cpus, &machine->online_cpus);
    }
  }
  if (weft_status_is_ok(status) && machine->node_count == 0) {
    weft_topology_node_t* node = NULL;
    status = weft_topology__machine_add_node(machine, 0, &node);
    if (weft_status_is_ok(status)) {
      status = weft_affinity_set_copy(&node->cpus, &machine->online_cpus);
    }
  }
  return status;
}

// Adds one core per hwloc Core object (per PU on machines without cores).
static weft_status_t weft_hwloc_read_cores(hwloc_topology_t topology,
                                           weft_topology_machine_t* machine) {
  weft_status_t status = WEFT_OK;
  hwloc_obj_type_t core_type =
      hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE
                                                             : HWLOC_OBJ_PU;
  int package_count = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PACKAGE);
  machine->package_count = package_count > 0 ? (uint32_t)package_count : 1;
  hwloc_obj_t object = NULL;
  while (weft_status_is_ok(status) &&
         (object = hwloc_get_next_obj_by_type(topology, core_type, object)) !=
             NULL) {
    if (!object->cpuset || hwloc_bitmap_iszero(object->cpuset)) continue;
    weft_topology_core_t* core = NULL;
    status = weft_topology__machine_add_core(machine, &core);
    if (weft_status_is_ok(status)) {
      status = weft_hwloc_copy_bitmap(object->cpuset, &core->cpus);
    }
    if (weft_status_is_ok(status)) {
      weft_affinity_set_and(&core->cpus, &machine->online_cpus);
      core->core_id = object->os_index == HWLOC_UNKNOWN_INDEX
                          ? object->logical_index
                          : object->os_index;
      hwloc_obj_t package =
          hwloc_get_ancestor_obj_by_type(topology, HWLOC_OBJ_PACKAGE, object);
      core->package_id = package && package->os_index != HWLOC_UNKNOWN_INDEX
                             ? package->os_index
                             : (package ? package->logical_index : 0);
      uint32_t first = weft_affinity_set_first(&core->cpus);
      uint32_t node_id =
          first == WEFT_AFFINITY_SET_NONE
              ? UINT32_MAX
              : weft_topology__machine_node_of_cpu(machine, first);
      core->node_id = node_id == UINT32_MAX ? 0 : node_id;
      core->l2_bytes =
          weft_hwloc_cache_size(topology, HWLOC_OBJ_L2CACHE, object);
      core->l3_bytes =
          weft_hwloc_cache_size(topology, HWLOC_OBJ_L3CACHE, object);
    }
  }
  return status;
}

// The calling thread's binding within hwloc's allowed cpuset, or
// sched_getaffinity when hwloc cannot tell.
static weft_status_t weft_hwloc_read_affinity(
    hwloc_topology_t topology, const weft_topology_test_hooks_t* hooks,
    weft_topology_machine_t* machine) {
  weft_status_t status = WEFT_OK;
  hwloc_bitmap_t binding = NULL;
  bool done = false;
  if (!(hooks && hooks->affinity_cpus) &&
      hwloc_topology_is_thissystem(topology)) {
    binding = hwloc_bitmap_alloc();
    if (binding &&
        hwloc_get_cpubind(topology, binding, HWLOC_CPUBIND_THREAD) == 0) {
      hwloc_bitmap_and(binding, binding,
                       hwloc_topology_get_allowed_cpuset(topology));
      hwloc_bitmap_and(binding, binding,
                       hwloc_topology_get_complete_cpuset(topology));
      status = weft_hwloc_copy_bitmap(binding, &machine->affinity_cpus);
      done = true;
    }
  } else if (!(hooks && hooks->affinity_cpus)) {
    // A synthetic topology without an affinity hook: everything.
    status =
        weft_affinity_set_copy(&machine->affinity_cpus, &machine->online_cpus);
    done = true;
  }
  if (weft_status_is_ok(status) && !done) {
    status = weft_topology__read_affinity(hooks, &machine->affinity_cpus);
  }
  if (binding) hwloc_bitmap_free(binding);
  return status;
}

// On Linux hwloc reads the machine from sysfs; when it could not (no
// /sys in a container) and another discovery stood in, says so in
// |machine|'s note: what hwloc's hidden message would have said.
static void weft_hwloc_note_discovery(hwloc_topology_t topology,
                                      weft_topology_machine_t* machine) {
  hwloc_obj_t root = hwloc_get_root_obj(topology);
  const char* os = hwloc_obj_get_info_by_name(root, "OSName");
  const char* backend = hwloc_obj_get_info_by_name(root, "Backend");
  if (!hwloc_topology_is_thissystem(topology) || !os || !backend ||
      strcmp(os, "Linux") != 0 || strcmp(backend, "Linux") == 0) {
    return;
  }
  snprintf(machine->note, sizeof(machine->note),
           "hwloc read the machine through its %s discovery, not Linux "
           "sysfs (%s)",
           backend,
           access("/sys/devices/system/cpu", F_OK) == 0
               ? "hwloc could not use /sys/devices/system/cpu"
               : "no /sys/devices/system/cpu: sysfs is not mounted here");
}

weft_status_t weft_topology__query_hwloc(
    const weft_topology_test_hooks_t* hooks, weft_topology_machine_t* machine) {
  weft_status_t status = WEFT_OK;
  hwloc_topology_t topology = NULL;
  bool initialized = false;
  pthread_once(&weft_hwloc_quiet_once, weft_hwloc_quiet);
  if (hwloc_topology_init(&topology) != 0) {
    status = WEFT_STATUS(INTERNAL, "topology: hwloc_topology_init failed");
  } else {
    initialized = true;
  }
  if (weft_status_is_ok(status) &&
      hwloc_topology_set_flags(topology,
                               HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED) != 0) {
    status = WEFT_STATUS(INTERNAL, "topology: hwloc_topology_set_flags failed");
  }
  if (weft_status_is_ok(status) && hooks && hooks->hwloc_synthetic &&
      hwloc_topology_set_synthetic(topology, hooks->hwloc_synthetic) != 0) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "topology: hwloc rejected the synthetic topology "
                         "'%s'",
                         hooks->hwloc_synthetic);
  }
  if (weft_status_is_ok(status) && hwloc_topology_load(topology) != 0) {
    status = WEFT_STATUS(INTERNAL, "topology: hwloc_topology_load failed");
  }
  if (weft_status_is_ok(status)) {
    // With INCLUDE_DISALLOWED the topology's cpuset holds every online PU.
    status = weft_hwloc_copy_bitmap(
        hwloc_topology_get_topology_cpuset(topology), &machine->online_cpus);
  }
  if (weft_status_is_ok(status) &&
      weft_affinity_set_is_empty(&machine->online_cpus)) {
    status = WEFT_STATUS(INTERNAL, "topology: hwloc found no CPU");
  }
  if (weft_status_is_ok(status))
    status = weft_hwloc_read_nodes(topology, machine);
  if (weft_status_is_ok(status))
    status = weft_hwloc_read_cores(topology, machine);
  if (weft_status_is_ok(status)) {
    status = weft_hwloc_read_affinity(topology, hooks, machine);
  }
  if (weft_status_is_ok(status)) weft_hwloc_note_discovery(topology, machine);
  if (initialized) hwloc_topology_destroy(topology);
  return status;
}

#else  // !WEFT_HAVE_HWLOC

bool weft_topology_hwloc_available(void) { return false; }

weft_status_t weft_topology__query_hwloc(
    const weft_topology_test_hooks_t* hooks, weft_topology_machine_t* machine) {
  (void)hooks;
  (void)machine;
  return WEFT_STATUS(UNAVAILABLE,
                     "topology: the hwloc backend was asked for, but weft "
                     "was built without hwloc (configure with "
                     "WEFT_ENABLE_HWLOC=ON and libhwloc-dev installed)");
}

#endif  // WEFT_HAVE_HWLOC
