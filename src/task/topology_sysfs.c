// weft: the sysfs topology backend, and the file and affinity helpers both
// backends share (see src/task/topology_impl.h).
//
// Layout read (all under <root>, "" for the real system):
//   /sys/devices/system/cpu/online                        online CPUs
//   /sys/devices/system/cpu/cpuN/topology/core_cpus_list  SMT siblings
//     (thread_siblings_list on older kernels; the CPU alone when neither)
//   /sys/devices/system/cpu/cpuN/topology/core_id, physical_package_id
//   /sys/devices/system/cpu/cpuN/cache/indexK/{level,type,size}
//   /sys/devices/system/node/nodeN/cpulist                (optional)

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "task/topology_impl.h"

#define WEFT_SYSFS_CPU "/sys/devices/system/cpu"
#define WEFT_SYSFS_NODE "/sys/devices/system/node"

weft_status_t weft_topology__read_file(const char* root, const char* path,
                                       char* buffer, size_t buffer_capacity) {
  weft_status_t status = WEFT_OK;
  char full_path[PATH_MAX];
  buffer[0] = '\0';
  int path_length = snprintf(full_path, sizeof(full_path), "%s%s", root, path);
  FILE* file = NULL;
  if (path_length < 0 || (size_t)path_length >= sizeof(full_path)) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "topology: path '%s%s' is longer than %zu bytes", root,
                         path, sizeof(full_path) - 1);
  } else {
    file = fopen(full_path, "r");
    if (!file) {
      status = WEFT_STATUS(NOT_FOUND, "topology: cannot open '%s': %s",
                           full_path, strerror(errno));
    }
  }
  if (file) {
    size_t length = fread(buffer, 1, buffer_capacity - 1, file);
    buffer[length] = '\0';
    while (length > 0 &&
           (buffer[length - 1] == '\n' || buffer[length - 1] == ' ' ||
            buffer[length - 1] == '\t')) {
      buffer[--length] = '\0';
    }
    fclose(file);
  }
  return status;
}

weft_status_t weft_topology__read_cpu_list(const char* root, const char* path,
                                           weft_affinity_set_t* set) {
  // Most lists are short ("0-63"); a large machine's can be long
  // ("0,2,4,..."): start on the stack and move to the heap when it fills.
  char small[1024];
  char* text = small;
  size_t capacity = sizeof(small);
  size_t length = 0;
  weft_status_t status = WEFT_OK;
  char full_path[PATH_MAX];
  int path_length = snprintf(full_path, sizeof(full_path), "%s%s", root, path);
  FILE* file = NULL;
  if (path_length < 0 || (size_t)path_length >= sizeof(full_path)) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "topology: path '%s%s' is longer than %zu bytes", root,
                         path, sizeof(full_path) - 1);
  } else {
    file = fopen(full_path, "r");
    if (!file) {
      status = WEFT_STATUS(NOT_FOUND, "topology: cannot open '%s': %s",
                           full_path, strerror(errno));
    }
  }
  while (file && weft_status_is_ok(status)) {
    length += fread(text + length, 1, capacity - 1 - length, file);
    if (length < capacity - 1) break;  // the end of the file
    void* grown = text == small ? NULL : text;
    status = weft_allocator_realloc(set->allocator, capacity * 2, &grown);
    if (weft_status_is_ok(status)) {
      if (text == small) memcpy(grown, small, length);
      text = (char*)grown;
      capacity *= 2;
    }
  }
  if (file) fclose(file);
  if (weft_status_is_ok(status)) {
    text[length] = '\0';
    status = weft_affinity_set_parse(text, set);
    if (!weft_status_is_ok(status)) {
      status = weft_status_annotate(status, "while reading '%s'", full_path);
    }
  }
  if (text != small) weft_allocator_free(set->allocator, text);
  return status;
}

// Reads an unsigned decimal file; leaves |out_value| unchanged when the file
// is missing or malformed (some platforms omit these files).
static bool weft_sysfs_read_u32(const char* root, const char* path,
                                uint32_t* out_value) {
  char text[64];
  weft_status_t status =
      weft_topology__read_file(root, path, text, sizeof(text));
  bool found = weft_status_is_ok(status);
  weft_status_ignore(status);
  if (found) {
    char* end = NULL;
    unsigned long value = strtoul(text, &end, 10);
    found = end != text && value <= UINT32_MAX;
    if (found) *out_value = (uint32_t)value;
  }
  return found;
}

// Parses a cache size such as "48K", "2048K" or "32M" into bytes.
static uint64_t weft_sysfs_parse_size(const char* text) {
  char* end = NULL;
  unsigned long long value = strtoull(text, &end, 10);
  uint64_t bytes = (uint64_t)value;
  if (end && (*end == 'K' || *end == 'k')) bytes *= 1024u;
  if (end && (*end == 'M' || *end == 'm')) bytes *= 1024u * 1024u;
  if (end && (*end == 'G' || *end == 'g')) bytes *= 1024u * 1024u * 1024u;
  return bytes;
}

// Reads the L2 and L3 sizes cpu |cpu| sees.
static void weft_sysfs_read_caches(const char* root, uint32_t cpu,
                                   weft_topology_core_t* core) {
  for (uint32_t index = 0; index < 16; ++index) {
    char path[128];
    char text[64];
    uint32_t level = 0;
    snprintf(path, sizeof(path), WEFT_SYSFS_CPU "/cpu%u/cache/index%u/level",
             (unsigned)cpu, (unsigned)index);
    if (!weft_sysfs_read_u32(root, path, &level)) break;
    snprintf(path, sizeof(path), WEFT_SYSFS_CPU "/cpu%u/cache/index%u/type",
             (unsigned)cpu, (unsigned)index);
    weft_status_ignore(
        weft_topology__read_file(root, path, text, sizeof(text)));
    if (strcmp(text, "Instruction") == 0) continue;
    snprintf(path, sizeof(path), WEFT_SYSFS_CPU "/cpu%u/cache/index%u/size",
             (unsigned)cpu, (unsigned)index);
    weft_status_t status =
        weft_topology__read_file(root, path, text, sizeof(text));
    if (weft_status_is_ok(status)) {
      if (level == 2) core->l2_bytes = weft_sysfs_parse_size(text);
      if (level == 3) core->l3_bytes = weft_sysfs_parse_size(text);
    }
    weft_status_ignore(status);
  }
}

// Reads every nodeN/cpulist; a machine without the node folder is one node
// 0 holding every online CPU.
static weft_status_t weft_sysfs_read_nodes(const char* root,
                                           weft_topology_machine_t* machine) {
  weft_status_t status = WEFT_OK;
  char path[PATH_MAX];
  snprintf(path, sizeof(path), "%s" WEFT_SYSFS_NODE, root);
  DIR* dir = opendir(path);
  struct dirent* entry = NULL;
  while (dir && weft_status_is_ok(status) && (entry = readdir(dir)) != NULL) {
    char* end = NULL;
    if (strncmp(entry->d_name, "node", 4) != 0) continue;
    unsigned long node_id = strtoul(entry->d_name + 4, &end, 10);
    if (end == entry->d_name + 4 || *end != '\0' || node_id > UINT32_MAX) {
      continue;
    }
    weft_topology_node_t* node = NULL;
    status = weft_topology__machine_add_node(machine, (uint32_t)node_id, &node);
    if (weft_status_is_ok(status)) {
      char node_path[128];
      snprintf(node_path, sizeof(node_path), WEFT_SYSFS_NODE "/node%lu/cpulist",
               node_id);
      status = weft_topology__read_cpu_list(root, node_path, &node->cpus);
    }
  }
  if (dir) closedir(dir);
  if (weft_status_is_ok(status) && machine->node_count == 0) {
    weft_topology_node_t* node = NULL;
    status = weft_topology__machine_add_node(machine, 0, &node);
    if (weft_status_is_ok(status)) {
      status = weft_affinity_set_copy(&node->cpus, &machine->online_cpus);
    }
  }
  return status;
}

// Reads the SMT siblings of |cpu| into |set| (just |cpu| when the kernel
// does not say), restricted to online CPUs.
static weft_status_t weft_sysfs_read_siblings(const char* root, uint32_t cpu,
                                              const weft_affinity_set_t* online,
                                              weft_affinity_set_t* set) {
  static const char* const kNames[] = {"core_cpus_list",
                                       "thread_siblings_list"};
  weft_status_t status = WEFT_OK;
  bool found = false;
  for (size_t i = 0; !found && i < sizeof(kNames) / sizeof(kNames[0]); ++i) {
    char path[128];
    snprintf(path, sizeof(path), WEFT_SYSFS_CPU "/cpu%u/topology/%s",
             (unsigned)cpu, kNames[i]);
    status = weft_topology__read_cpu_list(root, path, set);
    found = weft_status_is_ok(status);
    if (weft_status_is(status, WEFT_STATUS_NOT_FOUND)) {
      weft_status_ignore(status);
      status = WEFT_OK;
    } else if (!found) {
      break;
    }
  }
  if (weft_status_is_ok(status) && !found) {
    weft_affinity_set_clear_all(set);
    status = weft_affinity_set_set(set, cpu);
  }
  if (weft_status_is_ok(status)) {
    weft_affinity_set_and(set, online);
    // A CPU always belongs to its own core, even if the file disagrees.
    status = weft_affinity_set_set(set, cpu);
  }
  return status;
}

weft_status_t weft_topology__query_sysfs(
    const weft_topology_test_hooks_t* hooks, weft_topology_machine_t* machine) {
  const char* root = hooks && hooks->root ? hooks->root : "";
  weft_status_t status = weft_topology__read_cpu_list(
      root, WEFT_SYSFS_CPU "/online", &machine->online_cpus);
  if (weft_status_is(status, WEFT_STATUS_NOT_FOUND)) {
    weft_status_ignore(status);
    status = weft_topology__read_cpu_list(root, WEFT_SYSFS_CPU "/present",
                                          &machine->online_cpus);
  }
  if (weft_status_is_ok(status) &&
      weft_affinity_set_is_empty(&machine->online_cpus)) {
    status = WEFT_STATUS(NOT_FOUND,
                         "topology: '%s" WEFT_SYSFS_CPU "/online' lists no CPU",
                         root);
  }
  if (weft_status_is_ok(status)) status = weft_sysfs_read_nodes(root, machine);

  // Walk the online CPUs; the first CPU of each core not yet seen reads the
  // core's siblings, ids and caches.
  weft_affinity_set_t seen;
  weft_affinity_set_initialize(machine->allocator, &seen);
  // Package ids seen, to count packages.
  weft_affinity_set_t packages;
  weft_affinity_set_initialize(machine->allocator, &packages);
  for (uint32_t cpu = weft_affinity_set_first(&machine->online_cpus);
       weft_status_is_ok(status) && cpu != WEFT_AFFINITY_SET_NONE;
       cpu = weft_affinity_set_next(&machine->online_cpus, cpu)) {
    if (weft_affinity_set_test(&seen, cpu)) continue;
    weft_topology_core_t* core = NULL;
    status = weft_topology__machine_add_core(machine, &core);
    if (weft_status_is_ok(status)) {
      status = weft_sysfs_read_siblings(root, cpu, &machine->online_cpus,
                                        &core->cpus);
    }
    if (weft_status_is_ok(status)) {
      // Siblings already claimed by an earlier core (inconsistent files)
      // stay with that core.
      weft_affinity_set_and_not(&core->cpus, &seen);
      status = weft_affinity_set_or(&seen, &core->cpus);
    }
    if (weft_status_is_ok(status)) {
      char path[128];
      core->core_id = cpu;
      snprintf(path, sizeof(path), WEFT_SYSFS_CPU "/cpu%u/topology/core_id",
               (unsigned)cpu);
      weft_sysfs_read_u32(root, path, &core->core_id);
      snprintf(path, sizeof(path),
               WEFT_SYSFS_CPU "/cpu%u/topology/physical_package_id",
               (unsigned)cpu);
      weft_sysfs_read_u32(root, path, &core->package_id);
      uint32_t node_id = weft_topology__machine_node_of_cpu(machine, cpu);
      core->node_id = node_id == UINT32_MAX ? 0 : node_id;
      weft_sysfs_read_caches(root, cpu, core);
      if (core->package_id <= WEFT_AFFINITY_SET_MAX_INDEX) {
        status = weft_affinity_set_set(&packages, core->package_id);
      }
    }
  }
  machine->package_count = weft_affinity_set_count(&packages);
  if (machine->package_count == 0) machine->package_count = 1;
  weft_affinity_set_deinitialize(&packages);
  weft_affinity_set_deinitialize(&seen);

  if (weft_status_is_ok(status)) {
    status = weft_topology__read_affinity(hooks, &machine->affinity_cpus);
  }
  return status;
}

weft_status_t weft_topology__read_affinity(
    const weft_topology_test_hooks_t* hooks, weft_affinity_set_t* set) {
  weft_status_t status = WEFT_OK;
  // glibc's cpu_set_t holds 1024 CPUs; the kernel's mask may be wider, and
  // sched_getaffinity fails with EINVAL when the set is smaller than it.
  // Grow a dynamically sized set until the kernel accepts it.
  bool done = false;
  if (hooks && hooks->affinity_cpus) {
    status = weft_affinity_set_parse(hooks->affinity_cpus, set);
    done = true;
  }
  for (size_t cpus = 1024; weft_status_is_ok(status) && !done; cpus *= 2) {
    cpu_set_t* cpu_set = CPU_ALLOC(cpus);
    size_t set_size = CPU_ALLOC_SIZE(cpus);
    if (!cpu_set) {
      status =
          WEFT_STATUS(RESOURCE_EXHAUSTED,
                      "topology: cannot allocate a CPU set for %zu CPUs", cpus);
    } else {
      CPU_ZERO_S(set_size, cpu_set);
      if (sched_getaffinity(0, set_size, cpu_set) == 0) {
        done = true;
        weft_affinity_set_clear_all(set);
        // CPU_ALLOC_SIZE rounds up to whole words: test every bit it holds.
        for (size_t cpu = 0; weft_status_is_ok(status) && cpu < set_size * 8;
             ++cpu) {
          if (CPU_ISSET_S(cpu, set_size, cpu_set)) {
            status = weft_affinity_set_set(set, (uint32_t)cpu);
          }
        }
      } else if (errno != EINVAL ||
                 cpus * 2 > WEFT_AFFINITY_SET_MAX_INDEX + 1u) {
        status = WEFT_STATUS(INTERNAL,
                             "topology: sched_getaffinity with a %zu-CPU set "
                             "failed: %s",
                             cpus, strerror(errno));
      }
    }
    if (cpu_set) CPU_FREE(cpu_set);
  }
  return status;
}
