// weft: CPU topology for the task executor.
//
// A topology query answers "which CPUs may this process use, how are they
// grouped into physical cores, caches and NUMA nodes, and how many workers
// should run on them". It combines:
//   - the machine: hwloc when weft was built with it (WEFT_HAVE_HWLOC), or
//     Linux sysfs (/sys/devices/system/cpu, /sys/devices/system/node);
//   - the affinity mask of the calling thread (sched_getaffinity with a
//     dynamically sized set, so CPU numbers past 1023 work), which already
//     reflects taskset and a cgroup cpuset;
//   - the cgroup CPU quota (v2 cpu.max, v1 cpu.cfs_quota_us), which limits
//     how many CPUs' worth of time the process gets, not which CPUs;
//   - the options (weft_topology_options_t): a CPU list, which NUMA nodes,
//     how many workers. The caller fills them; the local-task driver reads
//     them from its device string (drivers/local_task/local_task_options.h).
// The result holds one group per physical core (its allowed CPUs, core and
// package id, NUMA node, L2/L3 sizes where known), the worker count, whether
// that oversubscribes the CPUs (then nobody should spin), and a readable
// explanation of every choice for weft-info.
//
// Where there is no /sys (some containers) the sysfs backend fails with
// NOT_FOUND and hwloc reads the CPUs another way (CPUID); the explanation
// says which. hwloc's own messages (it prints on stderr) are hidden: the
// first hwloc query sets HWLOC_HIDE_ERRORS=2 in the environment unless it
// is set (HWLOC_HIDE_ERRORS=1 or 0 shows them; topology_hwloc.c).
//
// Threading: a query reads files and the calling thread's affinity; the
// result is an immutable value that any thread may read. The first hwloc
// query's setenv must not race another thread's setenv or getenv.
#ifndef WEFT_TASK_TOPOLOGY_H_
#define WEFT_TASK_TOPOLOGY_H_

#include <stdbool.h>
#include <stdint.h>

#include "task/affinity_set.h"
#include "weft/allocator.h"
#include "weft/status.h"

// The largest worker count accepted.
#define WEFT_TOPOLOGY_MAX_WORKER_COUNT 65536u

typedef enum weft_topology_nodes_e {
  // Use the CPUs of every NUMA node the process may run on.
  WEFT_TOPOLOGY_NODES_ALL = 0,
  // Use only the NUMA node of the CPU the calling thread runs on.
  WEFT_TOPOLOGY_NODES_CURRENT = 1,
} weft_topology_nodes_t;

typedef enum weft_topology_backend_e {
  // hwloc when weft was built with it, sysfs otherwise.
  WEFT_TOPOLOGY_BACKEND_AUTO = 0,
  // hwloc; UNAVAILABLE when weft was built without it.
  WEFT_TOPOLOGY_BACKEND_HWLOC = 1,
  // Linux sysfs and sched_getaffinity.
  WEFT_TOPOLOGY_BACKEND_SYSFS = 2,
} weft_topology_backend_t;

// Replaces what a query reads from the running system, for tests.
typedef struct weft_topology_test_hooks_t {
  // A folder standing in for "/": the sysfs backend reads <root>/sys/...,
  // and the cgroup quota is read through <root>/proc/self/cgroup,
  // <root>/proc/self/mountinfo and the cgroup files under <root>. NULL reads
  // the real files.
  const char* root;
  // hwloc backend: a synthetic topology description
  // (hwloc_topology_set_synthetic) instead of this machine. NULL = real.
  const char* hwloc_synthetic;
  // A CPU list that replaces the calling thread's affinity mask; NULL reads
  // the real mask (then |root| and |hwloc_synthetic| should be NULL too).
  const char* affinity_cpus;
  // The CPU nodes=current treats as the caller's; -1 asks the kernel.
  int32_t current_cpu;
} weft_topology_test_hooks_t;

typedef struct weft_topology_options_t {
  // Number of workers; 0 = one per physical core the process may use,
  // capped by the cgroup CPU quota.
  uint32_t worker_count;
  // A CPU list restricting the CPUs used (borrowed for the duration of the
  // query); NULL = every CPU the process may use.
  const char* cpus;
  weft_topology_nodes_t nodes;
  weft_topology_backend_t backend;
  // NULL outside tests (borrowed for the duration of the query).
  const weft_topology_test_hooks_t* test_hooks;
} weft_topology_options_t;

// Sets |out_options| to the defaults: auto workers, all CPUs, all nodes,
// auto backend, no hooks.
void weft_topology_options_initialize(weft_topology_options_t* out_options);

// True when weft was built with hwloc.
bool weft_topology_hwloc_available(void);

// One group of CPUs a worker is pinned to: a physical core by default.
typedef struct weft_topology_group_t {
  // The CPUs of the core this process may use (its SMT siblings).
  weft_affinity_set_t cpus;
  // The core's id within its package (sysfs core_id / hwloc os_index).
  uint32_t core_id;
  uint32_t package_id;
  // The NUMA node holding the core (0 on machines without NUMA).
  uint32_t node_id;
  // Cache sizes in bytes seen by the core; 0 when unknown.
  uint64_t l2_bytes;
  uint64_t l3_bytes;
} weft_topology_group_t;

typedef struct weft_topology_t {
  weft_allocator_t allocator;
  // "hwloc" or "sysfs" (static strings).
  const char* backend;

  // One per physical core with at least one usable CPU, in ascending order
  // of their lowest CPU.
  uint32_t group_count;
  weft_topology_group_t* groups;

  // Workers to start: options.worker_count, or auto (see the options).
  uint32_t worker_count;
  // True when worker_count > effective_cpu_count: workers and waiters should
  // not spin, they would steal time from the thread they wait for.
  bool oversubscribed;

  // CPUs the machine has online, and how many packages and NUMA nodes.
  uint32_t machine_cpu_count;
  uint32_t package_count;
  uint32_t numa_node_count;

  // The CPUs the workers may use: online AND affinity mask AND cpus= AND
  // the node chosen by nodes=current.
  weft_affinity_set_t allowed_cpus;
  uint32_t allowed_cpu_count;
  // min(allowed_cpu_count, cgroup quota rounded up).
  uint32_t effective_cpu_count;
  // The cgroup CPU quota in CPUs (quota / period) and where it was found;
  // 0 and "" when there is none.
  double cgroup_quota_cpus;
  char cgroup_quota_path[256];

  // Online CPUs left out, by reason (each CPU is counted under the first
  // reason that removed it, in this order).
  weft_affinity_set_t excluded_by_affinity;  // the thread's affinity mask
  weft_affinity_set_t excluded_by_cpus;      // the cpus= option
  weft_affinity_set_t excluded_by_nodes;     // nodes=current
  // The NUMA node kept by nodes=current (UINT32_MAX when nodes=all).
  uint32_t current_node_id;

  // A multi-line human-readable account of the above, NUL-terminated.
  char* explanation;
} weft_topology_t;

// Queries the topology with |options| (NULL = defaults) into
// |out_topology|, which the caller deinitializes. INVALID_ARGUMENT when an
// option is malformed or leaves no CPU (the message says which option and
// which CPUs were allowed); UNAVAILABLE when the hwloc backend was asked for
// without hwloc; NOT_FOUND / INTERNAL when the system cannot be read (the
// message names the file or call).
weft_status_t weft_topology_initialize(const weft_topology_options_t* options,
                                       weft_allocator_t allocator,
                                       weft_topology_t* out_topology);

// Frees everything |topology| holds. Safe on a zeroed or failed topology.
void weft_topology_deinitialize(weft_topology_t* topology);

// Returns the group worker |worker_index| runs on: worker i uses group
// i % group_count.
uint32_t weft_topology_worker_group(const weft_topology_t* topology,
                                    uint32_t worker_index);

// Returns the CPUs worker |worker_index| should be pinned to (the CPU set of
// its group). The set lives as long as |topology|.
const weft_affinity_set_t* weft_topology_worker_cpus(
    const weft_topology_t* topology, uint32_t worker_index);

// Returns the spin budget to use given the one asked for: 0 when the
// topology is oversubscribed, |requested_spin_us| otherwise.
uint32_t weft_topology_spin_us(const weft_topology_t* topology,
                               uint32_t requested_spin_us);

#endif  // WEFT_TASK_TOPOLOGY_H_
