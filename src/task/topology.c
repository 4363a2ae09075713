// weft: topology queries, the part shared by the backends (see
// src/task/topology.h): options, groups, the worker count, oversubscription
// and the explanation.

#include "task/topology.h"

#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "task/topology_impl.h"

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

void weft_topology_options_initialize(weft_topology_options_t* out_options) {
  memset(out_options, 0, sizeof(*out_options));
  out_options->nodes = WEFT_TOPOLOGY_NODES_ALL;
  out_options->backend = WEFT_TOPOLOGY_BACKEND_AUTO;
}

//===----------------------------------------------------------------------===//
// Machine descriptions (shared by the backends)
//===----------------------------------------------------------------------===//

void weft_topology__machine_initialize(weft_allocator_t allocator,
                                       weft_topology_machine_t* out_machine) {
  memset(out_machine, 0, sizeof(*out_machine));
  out_machine->allocator = allocator;
  weft_affinity_set_initialize(allocator, &out_machine->online_cpus);
  weft_affinity_set_initialize(allocator, &out_machine->affinity_cpus);
}

void weft_topology__machine_deinitialize(weft_topology_machine_t* machine) {
  for (uint32_t i = 0; i < machine->core_count; ++i) {
    weft_affinity_set_deinitialize(&machine->cores[i].cpus);
  }
  for (uint32_t i = 0; i < machine->node_count; ++i) {
    weft_affinity_set_deinitialize(&machine->nodes[i].cpus);
  }
  weft_allocator_free(machine->allocator, machine->cores);
  weft_allocator_free(machine->allocator, machine->nodes);
  weft_affinity_set_deinitialize(&machine->online_cpus);
  weft_affinity_set_deinitialize(&machine->affinity_cpus);
  memset(machine, 0, sizeof(*machine));
}

// Grows |*inout_items| (of |element_size|) to hold one more than |count|.
static weft_status_t weft_topology_grow(weft_allocator_t allocator,
                                        uint32_t count,
                                        uint32_t* inout_capacity,
                                        size_t element_size,
                                        void** inout_items) {
  weft_status_t status = WEFT_OK;
  if (count == *inout_capacity) {
    uint32_t capacity = *inout_capacity ? *inout_capacity * 2 : 16;
    void* items = *inout_items;
    status = weft_allocator_realloc(allocator, (size_t)capacity * element_size,
                                    &items);
    if (weft_status_is_ok(status)) {
      *inout_items = items;
      *inout_capacity = capacity;
    }
  }
  return status;
}

weft_status_t weft_topology__machine_add_core(weft_topology_machine_t* machine,
                                              weft_topology_core_t** out_core) {
  *out_core = NULL;
  weft_status_t status = weft_topology_grow(
      machine->allocator, machine->core_count, &machine->core_capacity,
      sizeof(weft_topology_core_t), (void**)&machine->cores);
  if (weft_status_is_ok(status)) {
    weft_topology_core_t* core = &machine->cores[machine->core_count++];
    memset(core, 0, sizeof(*core));
    weft_affinity_set_initialize(machine->allocator, &core->cpus);
    *out_core = core;
  }
  return status;
}

weft_status_t weft_topology__machine_add_node(weft_topology_machine_t* machine,
                                              uint32_t node_id,
                                              weft_topology_node_t** out_node) {
  *out_node = NULL;
  weft_status_t status = weft_topology_grow(
      machine->allocator, machine->node_count, &machine->node_capacity,
      sizeof(weft_topology_node_t), (void**)&machine->nodes);
  if (weft_status_is_ok(status)) {
    weft_topology_node_t* node = &machine->nodes[machine->node_count++];
    node->node_id = node_id;
    weft_affinity_set_initialize(machine->allocator, &node->cpus);
    *out_node = node;
  }
  return status;
}

uint32_t weft_topology__machine_node_of_cpu(
    const weft_topology_machine_t* machine, uint32_t cpu) {
  uint32_t node_id = UINT32_MAX;
  for (uint32_t i = 0; node_id == UINT32_MAX && i < machine->node_count; ++i) {
    if (weft_affinity_set_test(&machine->nodes[i].cpus, cpu)) {
      node_id = machine->nodes[i].node_id;
    }
  }
  return node_id;
}

//===----------------------------------------------------------------------===//
// The explanation text
//===----------------------------------------------------------------------===//

// A growable string; the first failure sticks in |status|.
typedef struct weft_topology_text_t {
  weft_allocator_t allocator;
  char* data;
  size_t length;
  size_t capacity;
  weft_status_t status;
} weft_topology_text_t;

static void weft_topology_text_reserve(weft_topology_text_t* text,
                                       size_t extra) {
  if (weft_status_is_ok(text->status) &&
      text->length + extra + 1 > text->capacity) {
    size_t capacity = text->capacity ? text->capacity : 1024;
    while (capacity < text->length + extra + 1) capacity *= 2;
    void* data = text->data;
    text->status = weft_allocator_realloc(text->allocator, capacity, &data);
    if (weft_status_is_ok(text->status)) {
      text->data = (char*)data;
      text->capacity = capacity;
    }
  }
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void
weft_topology_text_append(weft_topology_text_t* text, const char* format, ...) {
  va_list args;
  va_start(args, format);
  int length = vsnprintf(NULL, 0, format, args);
  va_end(args);
  if (length > 0) weft_topology_text_reserve(text, (size_t)length);
  if (length > 0 && weft_status_is_ok(text->status)) {
    va_start(args, format);
    vsnprintf(text->data + text->length, (size_t)length + 1, format, args);
    va_end(args);
    text->length += (size_t)length;
  }
}

// Appends |set| as a CPU list.
static void weft_topology_text_append_set(weft_topology_text_t* text,
                                          const weft_affinity_set_t* set) {
  size_t length = weft_affinity_set_format(set, NULL, 0);
  weft_topology_text_reserve(text, length);
  if (weft_status_is_ok(text->status)) {
    weft_affinity_set_format(set, text->data + text->length, length + 1);
    text->length += length;
  }
}

// Appends a size as "512 KiB" / "32 MiB".
static void weft_topology_text_append_size(weft_topology_text_t* text,
                                           const char* label, uint64_t bytes) {
  if (bytes == 0) {
    // Unknown: say nothing.
  } else if (bytes % (1024u * 1024u) == 0) {
    weft_topology_text_append(text, " %s %llu MiB", label,
                              (unsigned long long)(bytes / (1024u * 1024u)));
  } else if (bytes % 1024u == 0) {
    weft_topology_text_append(text, " %s %llu KiB", label,
                              (unsigned long long)(bytes / 1024u));
  } else {
    weft_topology_text_append(text, " %s %llu bytes", label,
                              (unsigned long long)bytes);
  }
}

// Appends "  <why> excludes N CPUs: LIST\n" when |set| is not empty.
static void weft_topology_text_append_excluded(weft_topology_text_t* text,
                                               const char* why,
                                               const weft_affinity_set_t* set) {
  uint32_t count = weft_affinity_set_count(set);
  if (count) {
    weft_topology_text_append(text, "  %s excludes %u CPU%s: ", why,
                              (unsigned)count, count == 1 ? "" : "s");
    weft_topology_text_append_set(text, set);
    weft_topology_text_append(text, "\n");
  }
}

// The groups listed one per line before "... and N more".
#define WEFT_TOPOLOGY_EXPLAIN_GROUP_LIMIT 64

static weft_status_t weft_topology_explain(
    const weft_topology_options_t* options,
    const weft_topology_machine_t* machine,
    const weft_affinity_set_t* cpus_not_online, uint32_t current_cpu,
    weft_topology_t* topology) {
  weft_topology_text_t text = {.allocator = topology->allocator};
  weft_topology_text_append(&text, "topology (%s): %u CPUs online (",
                            topology->backend,
                            (unsigned)topology->machine_cpu_count);
  weft_topology_text_append_set(&text, &machine->online_cpus);
  weft_topology_text_append(
      &text, "), %u physical cores, %u package%s, %u NUMA node%s\n",
      (unsigned)machine->core_count, (unsigned)topology->package_count,
      topology->package_count == 1 ? "" : "s",
      (unsigned)topology->numa_node_count,
      topology->numa_node_count == 1 ? "" : "s");
  if (machine->note[0]) {
    weft_topology_text_append(&text, "  %s\n", machine->note);
  }

  weft_topology_text_append(&text, "allowed: %u CPU%s (",
                            (unsigned)topology->allowed_cpu_count,
                            topology->allowed_cpu_count == 1 ? "" : "s");
  weft_topology_text_append_set(&text, &topology->allowed_cpus);
  weft_topology_text_append(&text, ") in %u physical core%s\n",
                            (unsigned)topology->group_count,
                            topology->group_count == 1 ? "" : "s");
  weft_topology_text_append_excluded(&text, "the affinity mask",
                                     &topology->excluded_by_affinity);
  if (options->cpus) {
    char why[160];
    snprintf(why, sizeof(why), "cpus=%.120s", options->cpus);
    weft_topology_text_append_excluded(&text, why, &topology->excluded_by_cpus);
    if (!weft_affinity_set_is_empty(cpus_not_online)) {
      weft_topology_text_append(&text,
                                "  cpus=%s names CPUs not online "
                                "(ignored): ",
                                options->cpus);
      weft_topology_text_append_set(&text, cpus_not_online);
      weft_topology_text_append(&text, "\n");
    }
  }
  if (options->nodes == WEFT_TOPOLOGY_NODES_CURRENT) {
    weft_topology_text_append(&text,
                              "  nodes=current keeps NUMA node %u (the "
                              "calling thread runs on CPU %u)\n",
                              (unsigned)topology->current_node_id,
                              (unsigned)current_cpu);
    weft_topology_text_append_excluded(&text, "nodes=current",
                                       &topology->excluded_by_nodes);
  }

  if (topology->cgroup_quota_cpus > 0.0) {
    weft_topology_text_append(&text,
                              "cgroup quota: %.2f CPUs of time (%s): "
                              "effective CPUs %u\n",
                              topology->cgroup_quota_cpus,
                              topology->cgroup_quota_path,
                              (unsigned)topology->effective_cpu_count);
  } else {
    weft_topology_text_append(&text, "cgroup quota: none\n");
  }

  if (options->worker_count) {
    weft_topology_text_append(&text, "workers: %u (workers=%u)\n",
                              (unsigned)topology->worker_count,
                              (unsigned)options->worker_count);
  } else if (topology->worker_count < topology->group_count) {
    weft_topology_text_append(&text,
                              "workers: %u (auto: one per physical core, "
                              "capped by the cgroup quota)\n",
                              (unsigned)topology->worker_count);
  } else {
    weft_topology_text_append(&text,
                              "workers: %u (auto: one per physical core)\n",
                              (unsigned)topology->worker_count);
  }
  weft_topology_text_append(
      &text, "oversubscribed: %s (%u workers on %u effective CPUs); %s\n",
      topology->oversubscribed ? "yes" : "no", (unsigned)topology->worker_count,
      (unsigned)topology->effective_cpu_count,
      topology->oversubscribed ? "spinning off" : "spinning allowed");

  weft_topology_text_append(&text, "groups (worker i runs on group i %% %u):\n",
                            (unsigned)topology->group_count);
  for (uint32_t i = 0;
       i < topology->group_count && i < WEFT_TOPOLOGY_EXPLAIN_GROUP_LIMIT;
       ++i) {
    const weft_topology_group_t* group = &topology->groups[i];
    weft_topology_text_append(&text, "  group %u: CPUs ", (unsigned)i);
    weft_topology_text_append_set(&text, &group->cpus);
    weft_topology_text_append(
        &text, ", core %u, package %u, node %u", (unsigned)group->core_id,
        (unsigned)group->package_id, (unsigned)group->node_id);
    weft_topology_text_append_size(&text, "L2", group->l2_bytes);
    weft_topology_text_append_size(&text, "L3", group->l3_bytes);
    weft_topology_text_append(&text, "\n");
  }
  if (topology->group_count > WEFT_TOPOLOGY_EXPLAIN_GROUP_LIMIT) {
    weft_topology_text_append(
        &text, "  ... and %u more\n",
        (unsigned)(topology->group_count - WEFT_TOPOLOGY_EXPLAIN_GROUP_LIMIT));
  }
  if (weft_status_is_ok(text.status)) {
    topology->explanation = text.data;
  } else {
    weft_allocator_free(text.allocator, text.data);
  }
  return text.status;
}

//===----------------------------------------------------------------------===//
// The query
//===----------------------------------------------------------------------===//

// The CPU the calling thread runs on (or the hook's).
static uint32_t weft_topology_current_cpu(
    const weft_topology_test_hooks_t* hooks) {
  int cpu =
      hooks && hooks->current_cpu >= 0 ? hooks->current_cpu : sched_getcpu();
  return cpu >= 0 ? (uint32_t)cpu : 0;
}

// Applies cpus= and nodes= to topology->allowed_cpus, recording what each
// removed.
static weft_status_t weft_topology_restrict(
    const weft_topology_options_t* options,
    const weft_topology_machine_t* machine, weft_affinity_set_t* scratch,
    weft_affinity_set_t* cpus_not_online, uint32_t* out_current_cpu,
    weft_topology_t* topology) {
  // Online AND affinity.
  weft_status_t status =
      weft_affinity_set_copy(&topology->allowed_cpus, &machine->online_cpus);
  if (weft_status_is_ok(status)) {
    status = weft_affinity_set_copy(&topology->excluded_by_affinity,
                                    &machine->online_cpus);
  }
  if (weft_status_is_ok(status)) {
    weft_affinity_set_and(&topology->allowed_cpus, &machine->affinity_cpus);
    weft_affinity_set_and_not(&topology->excluded_by_affinity,
                              &machine->affinity_cpus);
    if (weft_affinity_set_is_empty(&topology->allowed_cpus)) {
      status = WEFT_STATUS(INTERNAL,
                           "topology: the affinity mask holds no online CPU");
    }
  }

  if (weft_status_is_ok(status) && options->cpus) {
    status = weft_affinity_set_parse(options->cpus, scratch);
    if (!weft_status_is_ok(status)) {
      status =
          weft_status_annotate(status, "in option 'cpus=%s'", options->cpus);
    }
    if (weft_status_is_ok(status)) {
      status = weft_affinity_set_copy(cpus_not_online, scratch);
    }
    if (weft_status_is_ok(status)) {
      weft_affinity_set_and_not(cpus_not_online, &machine->online_cpus);
      status = weft_affinity_set_copy(&topology->excluded_by_cpus,
                                      &topology->allowed_cpus);
    }
    if (weft_status_is_ok(status)) {
      weft_affinity_set_and_not(&topology->excluded_by_cpus, scratch);
      weft_affinity_set_and(&topology->allowed_cpus, scratch);
      if (weft_affinity_set_is_empty(&topology->allowed_cpus)) {
        char allowed[256];
        weft_affinity_set_format(&machine->affinity_cpus, allowed,
                                 sizeof(allowed));
        status = WEFT_STATUS(INVALID_ARGUMENT,
                             "option 'cpus=%s' leaves no CPU: this process "
                             "may use CPUs %s",
                             options->cpus, allowed);
      }
    }
  }

  *out_current_cpu = 0;
  topology->current_node_id = UINT32_MAX;
  if (weft_status_is_ok(status) &&
      options->nodes == WEFT_TOPOLOGY_NODES_CURRENT) {
    uint32_t cpu = weft_topology_current_cpu(options->test_hooks);
    uint32_t node_id = weft_topology__machine_node_of_cpu(machine, cpu);
    if (node_id == UINT32_MAX) {
      // Not in any node's list: use the node of the first allowed CPU.
      node_id = weft_topology__machine_node_of_cpu(
          machine, weft_affinity_set_first(&topology->allowed_cpus));
    }
    *out_current_cpu = cpu;
    topology->current_node_id = node_id == UINT32_MAX ? 0 : node_id;
    weft_affinity_set_clear_all(scratch);
    for (uint32_t i = 0; weft_status_is_ok(status) && i < machine->node_count;
         ++i) {
      if (machine->nodes[i].node_id == topology->current_node_id) {
        status = weft_affinity_set_or(scratch, &machine->nodes[i].cpus);
      }
    }
    if (weft_status_is_ok(status) && node_id == UINT32_MAX) {
      // No NUMA information at all: one node holds everything.
      status = weft_affinity_set_copy(scratch, &machine->online_cpus);
    }
    if (weft_status_is_ok(status)) {
      status = weft_affinity_set_copy(&topology->excluded_by_nodes,
                                      &topology->allowed_cpus);
    }
    if (weft_status_is_ok(status)) {
      weft_affinity_set_and_not(&topology->excluded_by_nodes, scratch);
      weft_affinity_set_and(&topology->allowed_cpus, scratch);
      if (weft_affinity_set_is_empty(&topology->allowed_cpus)) {
        status = WEFT_STATUS(INVALID_ARGUMENT,
                             "option 'nodes=current' leaves no CPU: the "
                             "calling thread runs on CPU %u in NUMA node %u, "
                             "which has no CPU left after the affinity mask "
                             "and cpus=%s",
                             (unsigned)cpu, (unsigned)topology->current_node_id,
                             options->cpus ? options->cpus : "(all)");
      }
    }
  }
  return status;
}

// Orders groups by their lowest CPU.
static int weft_topology_compare_groups(const void* a, const void* b) {
  uint32_t first_a =
      weft_affinity_set_first(&((const weft_topology_group_t*)a)->cpus);
  uint32_t first_b =
      weft_affinity_set_first(&((const weft_topology_group_t*)b)->cpus);
  return first_a < first_b ? -1 : (first_a > first_b ? 1 : 0);
}

// One group per core with an allowed CPU.
static weft_status_t weft_topology_build_groups(
    const weft_topology_machine_t* machine, weft_affinity_set_t* scratch,
    weft_topology_t* topology) {
  weft_status_t status = WEFT_OK;
  if (machine->core_count) {
    status = weft_allocator_malloc_array(
        topology->allocator, machine->core_count, sizeof(weft_topology_group_t),
        (void**)&topology->groups);
  }
  for (uint32_t i = 0; weft_status_is_ok(status) && i < machine->core_count;
       ++i) {
    const weft_topology_core_t* core = &machine->cores[i];
    status = weft_affinity_set_copy(scratch, &core->cpus);
    if (weft_status_is_ok(status)) {
      weft_affinity_set_and(scratch, &topology->allowed_cpus);
    }
    if (weft_status_is_ok(status) && !weft_affinity_set_is_empty(scratch)) {
      weft_topology_group_t* group = &topology->groups[topology->group_count++];
      weft_affinity_set_initialize(topology->allocator, &group->cpus);
      group->core_id = core->core_id;
      group->package_id = core->package_id;
      group->node_id = core->node_id;
      group->l2_bytes = core->l2_bytes;
      group->l3_bytes = core->l3_bytes;
      status = weft_affinity_set_copy(&group->cpus, scratch);
    }
  }
  // An allowed CPU no core claimed (a backend without core information for
  // it) becomes a group of its own, so no allowed CPU goes unused.
  if (weft_status_is_ok(status)) {
    status = weft_affinity_set_copy(scratch, &topology->allowed_cpus);
  }
  for (uint32_t i = 0; weft_status_is_ok(status) && i < topology->group_count;
       ++i) {
    weft_affinity_set_and_not(scratch, &topology->groups[i].cpus);
  }
  uint32_t orphan_count =
      weft_status_is_ok(status) ? weft_affinity_set_count(scratch) : 0;
  if (orphan_count) {
    void* groups = topology->groups;
    status =
        weft_allocator_realloc(topology->allocator,
                               (size_t)(topology->group_count + orphan_count) *
                                   sizeof(weft_topology_group_t),
                               &groups);
    if (weft_status_is_ok(status)) topology->groups = groups;
  }
  for (uint32_t cpu = orphan_count ? weft_affinity_set_first(scratch)
                                   : WEFT_AFFINITY_SET_NONE;
       weft_status_is_ok(status) && cpu != WEFT_AFFINITY_SET_NONE;
       cpu = weft_affinity_set_next(scratch, cpu)) {
    weft_topology_group_t* group = &topology->groups[topology->group_count++];
    memset(group, 0, sizeof(*group));
    weft_affinity_set_initialize(topology->allocator, &group->cpus);
    uint32_t node_id = weft_topology__machine_node_of_cpu(machine, cpu);
    group->core_id = cpu;
    group->node_id = node_id == UINT32_MAX ? 0 : node_id;
    status = weft_affinity_set_set(&group->cpus, cpu);
  }
  if (weft_status_is_ok(status) && topology->group_count > 1) {
    qsort(topology->groups, topology->group_count,
          sizeof(weft_topology_group_t), weft_topology_compare_groups);
  }
  return status;
}

// Worker count, cgroup quota, effective CPUs and oversubscription.
static void weft_topology_size_workers(const weft_topology_options_t* options,
                                       weft_topology_t* topology) {
  const char* root = options->test_hooks && options->test_hooks->root
                         ? options->test_hooks->root
                         : "";
  weft_topology_cgroup_quota_t quota;
  weft_topology__read_cgroup_quota(root, &quota);
  topology->cgroup_quota_cpus = quota.cpus;
  snprintf(topology->cgroup_quota_path, sizeof(topology->cgroup_quota_path),
           "%s", quota.path);
  topology->effective_cpu_count = topology->allowed_cpu_count;
  if (quota.cpus > 0.0) {
    // 1.5 CPUs of time keep two workers partly busy: round up, at least 1.
    double rounded = ceil(quota.cpus - 1e-9);
    uint32_t quota_cpus = rounded < 1.0                  ? 1u
                          : rounded > (double)UINT32_MAX ? UINT32_MAX
                                                         : (uint32_t)rounded;
    if (quota_cpus < topology->effective_cpu_count) {
      topology->effective_cpu_count = quota_cpus;
    }
  }
  if (options->worker_count) {
    topology->worker_count = options->worker_count;
  } else {
    topology->worker_count = topology->group_count;
    if (topology->worker_count > topology->effective_cpu_count) {
      topology->worker_count = topology->effective_cpu_count;
    }
    if (topology->worker_count == 0) topology->worker_count = 1;
  }
  topology->oversubscribed =
      topology->worker_count > topology->effective_cpu_count;
}

weft_status_t weft_topology_initialize(const weft_topology_options_t* options,
                                       weft_allocator_t allocator,
                                       weft_topology_t* out_topology) {
  weft_topology_options_t default_options;
  if (!options) {
    weft_topology_options_initialize(&default_options);
    options = &default_options;
  }
  memset(out_topology, 0, sizeof(*out_topology));
  out_topology->allocator = allocator;
  weft_affinity_set_initialize(allocator, &out_topology->allowed_cpus);
  weft_affinity_set_initialize(allocator, &out_topology->excluded_by_affinity);
  weft_affinity_set_initialize(allocator, &out_topology->excluded_by_cpus);
  weft_affinity_set_initialize(allocator, &out_topology->excluded_by_nodes);
  weft_topology_machine_t machine;
  weft_topology__machine_initialize(allocator, &machine);
  weft_affinity_set_t scratch;
  weft_affinity_set_initialize(allocator, &scratch);
  weft_affinity_set_t cpus_not_online;
  weft_affinity_set_initialize(allocator, &cpus_not_online);
  uint32_t current_cpu = 0;

  weft_status_t status = WEFT_OK;
  bool use_hwloc = options->backend == WEFT_TOPOLOGY_BACKEND_HWLOC ||
                   (options->backend == WEFT_TOPOLOGY_BACKEND_AUTO &&
                    weft_topology_hwloc_available());
  if (options->worker_count > WEFT_TOPOLOGY_MAX_WORKER_COUNT) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "topology: worker count %u is more than the limit "
                         "of %u",
                         (unsigned)options->worker_count,
                         (unsigned)WEFT_TOPOLOGY_MAX_WORKER_COUNT);
  } else if (use_hwloc) {
    out_topology->backend = "hwloc";
    status = weft_topology__query_hwloc(options->test_hooks, &machine);
  } else {
    out_topology->backend = "sysfs";
    status = weft_topology__query_sysfs(options->test_hooks, &machine);
  }
  if (weft_status_is_ok(status)) {
    out_topology->machine_cpu_count =
        weft_affinity_set_count(&machine.online_cpus);
    out_topology->package_count = machine.package_count;
    out_topology->numa_node_count = machine.node_count;
    status =
        weft_topology_restrict(options, &machine, &scratch, &cpus_not_online,
                               &current_cpu, out_topology);
  }
  if (weft_status_is_ok(status)) {
    out_topology->allowed_cpu_count =
        weft_affinity_set_count(&out_topology->allowed_cpus);
    status = weft_topology_build_groups(&machine, &scratch, out_topology);
  }
  if (weft_status_is_ok(status)) {
    weft_topology_size_workers(options, out_topology);
    status = weft_topology_explain(options, &machine, &cpus_not_online,
                                   current_cpu, out_topology);
  }

  weft_affinity_set_deinitialize(&cpus_not_online);
  weft_affinity_set_deinitialize(&scratch);
  weft_topology__machine_deinitialize(&machine);
  if (!weft_status_is_ok(status)) weft_topology_deinitialize(out_topology);
  return status;
}

void weft_topology_deinitialize(weft_topology_t* topology) {
  for (uint32_t i = 0; i < topology->group_count; ++i) {
    weft_affinity_set_deinitialize(&topology->groups[i].cpus);
  }
  if (topology->groups) {
    weft_allocator_free(topology->allocator, topology->groups);
  }
  if (topology->explanation) {
    weft_allocator_free(topology->allocator, topology->explanation);
  }
  weft_affinity_set_deinitialize(&topology->allowed_cpus);
  weft_affinity_set_deinitialize(&topology->excluded_by_affinity);
  weft_affinity_set_deinitialize(&topology->excluded_by_cpus);
  weft_affinity_set_deinitialize(&topology->excluded_by_nodes);
  weft_allocator_t allocator = topology->allocator;
  memset(topology, 0, sizeof(*topology));
  topology->allocator = allocator;
}

uint32_t weft_topology_worker_group(const weft_topology_t* topology,
                                    uint32_t worker_index) {
  return topology->group_count ? worker_index % topology->group_count : 0;
}

const weft_affinity_set_t* weft_topology_worker_cpus(
    const weft_topology_t* topology, uint32_t worker_index) {
  return topology->group_count
             ? &topology
                    ->groups[weft_topology_worker_group(topology, worker_index)]
                    .cpus
             : &topology->allowed_cpus;
}

uint32_t weft_topology_spin_us(const weft_topology_t* topology,
                               uint32_t requested_spin_us) {
  return topology->oversubscribed ? 0 : requested_spin_us;
}
