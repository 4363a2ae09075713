// weft: what the topology backends (sysfs, hwloc) hand to the common code.
//
// A backend describes the machine: the online CPUs, each physical core with
// its CPUs, ids and caches, each NUMA node with its CPUs, and the calling
// thread's affinity mask. topology.c turns that into groups, applies the
// options and the cgroup quota, and writes the explanation.
#ifndef WEFT_TASK_TOPOLOGY_IMPL_H_
#define WEFT_TASK_TOPOLOGY_IMPL_H_

#include <stddef.h>

#include "task/topology.h"

typedef struct weft_topology_core_t {
  // Every online CPU of the core (SMT siblings), allowed or not.
  weft_affinity_set_t cpus;
  uint32_t core_id;
  uint32_t package_id;
  uint32_t node_id;
  uint64_t l2_bytes;
  uint64_t l3_bytes;
} weft_topology_core_t;

typedef struct weft_topology_node_t {
  uint32_t node_id;
  weft_affinity_set_t cpus;
} weft_topology_node_t;

typedef struct weft_topology_machine_t {
  weft_allocator_t allocator;
  weft_affinity_set_t online_cpus;
  // The calling thread's affinity mask (what the process may use).
  weft_affinity_set_t affinity_cpus;
  uint32_t core_count;
  uint32_t core_capacity;
  weft_topology_core_t* cores;
  uint32_t node_count;
  uint32_t node_capacity;
  weft_topology_node_t* nodes;
  uint32_t package_count;
  // A line the backend wants in the explanation about how it read the
  // machine (hwloc's discovery when not the usual one); "" for none.
  char note[192];
} weft_topology_machine_t;

void weft_topology__machine_initialize(weft_allocator_t allocator,
                                       weft_topology_machine_t* out_machine);
void weft_topology__machine_deinitialize(weft_topology_machine_t* machine);

// Appends a zeroed core (its |cpus| initialised empty) and returns it.
weft_status_t weft_topology__machine_add_core(weft_topology_machine_t* machine,
                                              weft_topology_core_t** out_core);

// Appends a node with id |node_id| (its |cpus| initialised empty).
weft_status_t weft_topology__machine_add_node(weft_topology_machine_t* machine,
                                              uint32_t node_id,
                                              weft_topology_node_t** out_node);

// Returns the id of the node holding |cpu|, or UINT32_MAX.
uint32_t weft_topology__machine_node_of_cpu(
    const weft_topology_machine_t* machine, uint32_t cpu);

// Fills |set| with the calling thread's affinity mask: the hook's
// affinity_cpus when given, otherwise sched_getaffinity with a set sized
// for any CPU count.
weft_status_t weft_topology__read_affinity(
    const weft_topology_test_hooks_t* hooks, weft_affinity_set_t* set);

// Reads <root><path> (root "" = the real file system) into |buffer| as a
// NUL-terminated string with trailing whitespace removed. NOT_FOUND naming
// the file when it cannot be opened; |buffer| is then "".
weft_status_t weft_topology__read_file(const char* root, const char* path,
                                       char* buffer, size_t buffer_capacity);

// Reads <root><path> as a CPU list into |set|.
weft_status_t weft_topology__read_cpu_list(const char* root, const char* path,
                                           weft_affinity_set_t* set);

// Backends. Each fills |machine| (initialised by the caller).
weft_status_t weft_topology__query_sysfs(
    const weft_topology_test_hooks_t* hooks, weft_topology_machine_t* machine);
weft_status_t weft_topology__query_hwloc(
    const weft_topology_test_hooks_t* hooks, weft_topology_machine_t* machine);

typedef struct weft_topology_cgroup_quota_t {
  // CPUs of time per period (quota / period); 0 when unlimited.
  double cpus;
  // The file that set the tightest quota (without the test root).
  char path[256];
} weft_topology_cgroup_quota_t;

// Finds the tightest CPU quota on the calling process's cgroup path (v2
// cpu.max, else v1 cpu.cfs_quota_us / cpu.cfs_period_us), walking up to the
// cgroup root. No cgroup or no quota is not an error: |out_quota| is zero.
void weft_topology__read_cgroup_quota(const char* root,
                                      weft_topology_cgroup_quota_t* out_quota);

#endif  // WEFT_TASK_TOPOLOGY_IMPL_H_
