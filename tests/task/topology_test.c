// Tests for the topology query (src/task/topology.h): the real machine with
// each backend, synthetic machines (a fake sysfs/proc/cgroup tree for the
// sysfs backend, hwloc's synthetic topologies for the hwloc one), options,
// the cgroup quota, oversubscription and allocation failures. Reading the
// options from a device string is the local-task driver's
// (tests/local_task/options_test.c).

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "task/topology.h"

// The synthetic machine: 2 packages x 75 cores x 2 SMT threads = 300 CPUs,
// numbered as Linux does: CPU c is thread c / 150 of core (c % 150) % 75 in
// package (c % 150) / 75; one NUMA node per package; 1 MiB L2 per core,
// 32 MiB L3 per package.
#define FAKE_CPUS 300
#define FAKE_CORES_PER_PACKAGE 75
// An affinity mask with bits past 256: 10 whole cores of package 0 and one
// thread of 20 cores of package 1 -> 40 CPUs in 30 cores.
#define FAKE_AFFINITY "0-9,150-159,260-279"
#define FAKE_SYNTHETIC                                                      \
  "Package:2 NUMANode:1 L3Cache:1(size=33554432) L2Cache:75(size=1048576) " \
  "Core:1 PU:2(indexes=2*150:1*2)"

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static void assert_status(weft_status_t status, weft_status_code_t code,
                          const char* needle) {
  if (weft_status_code(status) != code ||
      (needle && !strstr(weft_status_message(status), needle))) {
    weft_status_fprint(stderr, status);
    fail_msg("expected %s with '%s'", weft_status_code_string(code),
             needle ? needle : "");
  }
  weft_status_free(status);
}

static void assert_ok(weft_status_t status) {
  if (!weft_status_is_ok(status)) {
    weft_status_fprint(stderr, status);
    fail_msg("expected OK");
  }
}

static void assert_set(const weft_affinity_set_t* set, const char* expected) {
  char text[1024];
  weft_affinity_set_format(set, text, sizeof(text));
  if (strcmp(text, expected) != 0) {
    fail_msg("set is '%s', expected '%s'", text, expected);
  }
}

static void assert_contains(const char* text, const char* needle) {
  if (!strstr(text, needle)) {
    fail_msg("'%s' not found in:\n%s", needle, text);
  }
}

// Writes |text| to <root>/<path>, creating the folders on the way.
static void write_file(const char* root, const char* path, const char* text) {
  char full[PATH_MAX];
  snprintf(full, sizeof(full), "%s%s", root, path);
  FILE* file = fopen(full, "w");
  for (char* slash = strchr(full + strlen(root) + 1, '/');
       !file && errno == ENOENT && slash; slash = strchr(slash + 1, '/')) {
    *slash = '\0';
    if (mkdir(full, 0755) != 0 && errno != EEXIST) {
      fail_msg("mkdir %s: %s", full, strerror(errno));
    }
    *slash = '/';
    errno = ENOENT;
  }
  if (!file) file = fopen(full, "w");
  if (!file) fail_msg("fopen %s: %s", full, strerror(errno));
  fputs(text, file);
  fclose(file);
}

static void write_filef(const char* root, const char* text, const char* format,
                        ...) __attribute__((format(printf, 3, 4)));
static void write_filef(const char* root, const char* text, const char* format,
                        ...) {
  char path[PATH_MAX];
  va_list args;
  va_start(args, format);
  vsnprintf(path, sizeof(path), format, args);
  va_end(args);
  write_file(root, path, text);
}

static int remove_entry(const char* path, const struct stat* st, int flag,
                        struct FTW* ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  return remove(path);
}

static void remove_tree(const char* root) {
  nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

// Creates an empty folder for a fake machine: on tmpfs (/dev/shm) where
// there is one, since the tests write and read thousands of small files.
static void make_temp_root(char* root, size_t capacity) {
  snprintf(root, capacity, "/dev/shm/weft-topology-XXXXXX");
  if (!mkdtemp(root)) {
    snprintf(root, capacity, "/tmp/weft-topology-XXXXXX");
    assert_non_null(mkdtemp(root));
  }
}

// Builds the 300-CPU machine's sysfs, /proc/self and cgroup v2 files
// (cpu.max 8 CPUs on the process's cgroup, 12 on its parent).
static void make_fake_machine(char* root, size_t capacity) {
  make_temp_root(root, capacity);
  write_file(root, "/sys/devices/system/cpu/online", "0-299\n");
  write_file(root, "/sys/devices/system/cpu/possible", "0-511\n");
  for (int cpu = 0; cpu < FAKE_CPUS; ++cpu) {
    int rem = cpu % 150;
    int package = rem / FAKE_CORES_PER_PACKAGE;
    int core = rem % FAKE_CORES_PER_PACKAGE;
    char text[64];
    snprintf(text, sizeof(text), "%d\n", core);
    write_filef(root, text, "/sys/devices/system/cpu/cpu%d/topology/core_id",
                cpu);
    snprintf(text, sizeof(text), "%d\n", package);
    write_filef(root, text,
                "/sys/devices/system/cpu/cpu%d/topology/physical_package_id",
                cpu);
    snprintf(text, sizeof(text), "%d,%d\n", rem, rem + 150);
    write_filef(root, text,
                "/sys/devices/system/cpu/cpu%d/topology/core_cpus_list", cpu);
    // Caches are read from the first CPU of each core (CPUs 0-149 here).
    if (cpu >= 150) continue;
    static const char* const kCaches[][3] = {{"1", "Data", "48K"},
                                             {"1", "Instruction", "32K"},
                                             {"2", "Unified", "1024K"},
                                             {"3", "Unified", "32M"}};
    for (int index = 0; index < 4; ++index) {
      write_filef(root, kCaches[index][0],
                  "/sys/devices/system/cpu/cpu%d/cache/index%d/level", cpu,
                  index);
      write_filef(root, kCaches[index][1],
                  "/sys/devices/system/cpu/cpu%d/cache/index%d/type", cpu,
                  index);
      write_filef(root, kCaches[index][2],
                  "/sys/devices/system/cpu/cpu%d/cache/index%d/size", cpu,
                  index);
    }
  }
  write_file(root, "/sys/devices/system/node/node0/cpulist", "0-74,150-224\n");
  write_file(root, "/sys/devices/system/node/node1/cpulist",
             "75-149,225-299\n");
  write_file(root, "/sys/devices/system/node/online", "0-1\n");
  write_file(root, "/proc/self/cgroup", "0::/weft.slice/test\n");
  write_file(root, "/proc/self/mountinfo",
             "22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n"
             "30 22 0:26 / /sys/fs/cgroup rw,nosuid,nodev - cgroup2 cgroup2 "
             "rw,nsdelegate\n");
  write_file(root, "/sys/fs/cgroup/cpu.max", "max 100000\n");
  write_file(root, "/sys/fs/cgroup/weft.slice/cpu.max", "1200000 100000\n");
  write_file(root, "/sys/fs/cgroup/weft.slice/test/cpu.max", "800000 100000\n");
}

static void init_hooks(weft_topology_test_hooks_t* hooks, const char* root) {
  memset(hooks, 0, sizeof(*hooks));
  hooks->root = root;
  hooks->affinity_cpus = FAKE_AFFINITY;
  hooks->current_cpu = -1;
}

static void init_options(weft_topology_options_t* options,
                         weft_topology_backend_t backend,
                         const weft_topology_test_hooks_t* hooks) {
  weft_topology_options_initialize(options);
  options->backend = backend;
  options->test_hooks = hooks;
}

//===----------------------------------------------------------------------===//
// The real machine
//===----------------------------------------------------------------------===//

static void check_real(weft_topology_backend_t backend,
                       weft_affinity_set_t* out_allowed) {
  weft_topology_options_t options;
  init_options(&options, backend, NULL);
  weft_topology_t topology;
  assert_ok(
      weft_topology_initialize(&options, weft_allocator_system(), &topology));
  printf("%s", topology.explanation);
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  assert_true(topology.group_count >= 1);
  assert_true(topology.worker_count >= 1);
  assert_true(topology.allowed_cpu_count >= 1);
  assert_true(topology.allowed_cpu_count <= (uint32_t)online);
  assert_true(topology.allowed_cpu_count <= topology.machine_cpu_count);
  assert_true(topology.effective_cpu_count <= topology.allowed_cpu_count);
  assert_true(topology.numa_node_count >= 1);
  assert_true(topology.package_count >= 1);
  assert_int_equal(topology.allowed_cpu_count,
                   weft_affinity_set_count(&topology.allowed_cpus));
  assert_true(strlen(topology.explanation) > 0);
  assert_contains(topology.explanation, topology.backend);
  // Auto workers never oversubscribe.
  assert_false(topology.oversubscribed);
  // Every group's CPUs are allowed, and together they are all allowed CPUs.
  uint32_t grouped = 0;
  for (uint32_t i = 0; i < topology.group_count; ++i) {
    assert_false(weft_affinity_set_is_empty(&topology.groups[i].cpus));
    assert_true(weft_affinity_set_is_subset(&topology.groups[i].cpus,
                                            &topology.allowed_cpus));
    grouped += weft_affinity_set_count(&topology.groups[i].cpus);
  }
  assert_int_equal(grouped, topology.allowed_cpu_count);
  assert_ok(weft_affinity_set_copy(out_allowed, &topology.allowed_cpus));
  weft_topology_deinitialize(&topology);
}

// Whether this machine has a sysfs CPU topology (a container may have no
// /sys): the sysfs backend reads nothing else; hwloc then reads the CPUs
// another way (CPUID) and says so in the explanation.
static bool have_sysfs_cpus(void) {
  return access("/sys/devices/system/cpu/present", R_OK) == 0;
}

static void test_real_machine(void** state) {
  (void)state;
  const bool sysfs = have_sysfs_cpus();
  if (!sysfs) {
    // The sysfs backend fails, naming the file it could not read.
    weft_topology_options_t options;
    init_options(&options, WEFT_TOPOLOGY_BACKEND_SYSFS, NULL);
    weft_topology_t topology;
    assert_status(
        weft_topology_initialize(&options, weft_allocator_system(), &topology),
        WEFT_STATUS_NOT_FOUND, "/sys/devices/system/cpu/present");
    weft_topology_deinitialize(&topology);
    if (!weft_topology_hwloc_available()) {
      print_message(
          "skipped: no /sys/devices/system/cpu here and no hwloc: "
          "nothing can read this machine\n");
      skip();
    }
  }
  weft_affinity_set_t auto_allowed, sysfs_allowed;
  weft_affinity_set_initialize(weft_allocator_system(), &auto_allowed);
  weft_affinity_set_initialize(weft_allocator_system(), &sysfs_allowed);
  check_real(WEFT_TOPOLOGY_BACKEND_AUTO, &auto_allowed);
  if (sysfs) {
    check_real(WEFT_TOPOLOGY_BACKEND_SYSFS, &sysfs_allowed);
    // Both backends agree on what this process may use.
    assert_true(weft_affinity_set_equal(&auto_allowed, &sysfs_allowed));
  } else {
    print_message(
        "no /sys/devices/system/cpu here: the sysfs backend is "
        "not compared\n");
    assert_true(weft_status_is_ok(
        weft_affinity_set_copy(&sysfs_allowed, &auto_allowed)));
  }
  if (weft_topology_hwloc_available()) {
    check_real(WEFT_TOPOLOGY_BACKEND_HWLOC, &auto_allowed);
    assert_true(weft_affinity_set_equal(&auto_allowed, &sysfs_allowed));
    weft_topology_options_t options;
    init_options(&options, WEFT_TOPOLOGY_BACKEND_HWLOC, NULL);
    weft_topology_t topology;
    assert_ok(
        weft_topology_initialize(&options, weft_allocator_system(), &topology));
    if (!sysfs) {
      // What hwloc's hidden message would have said.
      assert_contains(topology.explanation,
                      "no /sys/devices/system/cpu: sysfs is not mounted here");
    }
    weft_topology_deinitialize(&topology);
  } else {
    weft_topology_options_t options;
    init_options(&options, WEFT_TOPOLOGY_BACKEND_HWLOC, NULL);
    weft_topology_t topology;
    assert_status(
        weft_topology_initialize(&options, weft_allocator_system(), &topology),
        WEFT_STATUS_UNAVAILABLE, "built without hwloc");
    weft_topology_deinitialize(&topology);
  }
  // NULL options are the defaults.
  weft_topology_t topology;
  assert_ok(weft_topology_initialize(NULL, weft_allocator_system(), &topology));
  weft_topology_deinitialize(&topology);
  weft_affinity_set_deinitialize(&sysfs_allowed);
  weft_affinity_set_deinitialize(&auto_allowed);
}

static void test_real_machine_nodes_current(void** state) {
  (void)state;
  // The backend that can read this machine: sysfs where it is there.
  const weft_topology_backend_t backend = have_sysfs_cpus()
                                              ? WEFT_TOPOLOGY_BACKEND_SYSFS
                                              : WEFT_TOPOLOGY_BACKEND_AUTO;
  if (backend == WEFT_TOPOLOGY_BACKEND_AUTO &&
      !weft_topology_hwloc_available()) {
    print_message("skipped: no /sys/devices/system/cpu here and no hwloc\n");
    skip();
  }
  weft_topology_options_t options;
  init_options(&options, backend, NULL);
  options.nodes = WEFT_TOPOLOGY_NODES_CURRENT;
  weft_topology_t topology;
  assert_ok(
      weft_topology_initialize(&options, weft_allocator_system(), &topology));
  assert_true(topology.current_node_id != UINT32_MAX);
  assert_true(topology.group_count >= 1);
  assert_contains(topology.explanation, "nodes=current keeps NUMA node");
  weft_topology_deinitialize(&topology);
}

//===----------------------------------------------------------------------===//
// The synthetic 300-CPU machine
//===----------------------------------------------------------------------===//

// What both backends must agree on for the fake machine and FAKE_AFFINITY.
static void check_fake_machine(const weft_topology_t* topology,
                               const char* backend) {
  assert_string_equal(topology->backend, backend);
  assert_int_equal(topology->machine_cpu_count, FAKE_CPUS);
  assert_int_equal(topology->package_count, 2);
  assert_int_equal(topology->numa_node_count, 2);
  assert_int_equal(topology->allowed_cpu_count, 40);
  assert_set(&topology->allowed_cpus, FAKE_AFFINITY);
  assert_int_equal(weft_affinity_set_count(&topology->excluded_by_affinity),
                   260);
  assert_set(&topology->excluded_by_affinity, "10-149,160-259,280-299");
  assert_true(weft_affinity_set_is_empty(&topology->excluded_by_cpus));
  assert_true(weft_affinity_set_is_empty(&topology->excluded_by_nodes));
  assert_int_equal(topology->group_count, 30);
  // Groups 0-9: whole cores 0-9 of package 0 (both threads).
  for (uint32_t i = 0; i < 10; ++i) {
    const weft_topology_group_t* group = &topology->groups[i];
    assert_int_equal(weft_affinity_set_count(&group->cpus), 2);
    assert_true(weft_affinity_set_test(&group->cpus, i));
    assert_true(weft_affinity_set_test(&group->cpus, i + 150));
    assert_int_equal(group->core_id, i);
    assert_int_equal(group->package_id, 0);
    assert_int_equal(group->node_id, 0);
    assert_int_equal(group->l2_bytes, 1024 * 1024);
    assert_int_equal(group->l3_bytes, 32 * 1024 * 1024);
  }
  // Groups 10-29: the second thread of cores 35-54 of package 1, CPUs
  // 260-279 (all past 256).
  for (uint32_t i = 10; i < 30; ++i) {
    const weft_topology_group_t* group = &topology->groups[i];
    uint32_t cpu = 260 + (i - 10);
    assert_int_equal(weft_affinity_set_count(&group->cpus), 1);
    assert_true(weft_affinity_set_test(&group->cpus, cpu));
    assert_int_equal(group->package_id, 1);
    assert_int_equal(group->node_id, 1);
    assert_int_equal(group->l2_bytes, 1024 * 1024);
    assert_int_equal(group->l3_bytes, 32 * 1024 * 1024);
  }
  // cgroup quota: 8 CPUs on the process's cgroup (its parent allows 12).
  assert_true(topology->cgroup_quota_cpus > 7.99 &&
              topology->cgroup_quota_cpus < 8.01);
  assert_string_equal(topology->cgroup_quota_path,
                      "/sys/fs/cgroup/weft.slice/test/cpu.max");
  assert_int_equal(topology->effective_cpu_count, 8);
  // Auto workers: one per core (30), capped by the quota.
  assert_int_equal(topology->worker_count, 8);
  assert_false(topology->oversubscribed);
  assert_int_equal(weft_topology_spin_us(topology, 20), 20);
  const char* text = topology->explanation;
  assert_contains(text,
                  "300 CPUs online (0-299), 150 physical cores, "
                  "2 packages, 2 NUMA nodes");
  assert_contains(text,
                  "allowed: 40 CPUs (0-9,150-159,260-279) in 30 physical "
                  "cores");
  assert_contains(text,
                  "the affinity mask excludes 260 CPUs: "
                  "10-149,160-259,280-299");
  assert_contains(text,
                  "cgroup quota: 8.00 CPUs of time "
                  "(/sys/fs/cgroup/weft.slice/test/cpu.max): effective "
                  "CPUs 8");
  assert_contains(text,
                  "workers: 8 (auto: one per physical core, capped by "
                  "the cgroup quota)");
  assert_contains(text, "oversubscribed: no");
  assert_contains(text,
                  "group 0: CPUs 0,150, core 0, package 0, node 0 L2 1 "
                  "MiB L3 32 MiB");
  assert_contains(text, "group 29: CPUs 279");
}

static void test_fake_sysfs(void** state) {
  (void)state;
  char root[64];
  make_fake_machine(root, sizeof(root));
  weft_topology_test_hooks_t hooks;
  init_hooks(&hooks, root);
  weft_topology_options_t options;
  init_options(&options, WEFT_TOPOLOGY_BACKEND_SYSFS, &hooks);
  weft_topology_t topology;
  assert_ok(
      weft_topology_initialize(&options, weft_allocator_system(), &topology));
  printf("%s", topology.explanation);
  check_fake_machine(&topology, "sysfs");
  // sysfs core ids count within the package.
  assert_int_equal(topology.groups[10].core_id, 35);
  assert_int_equal(topology.groups[29].core_id, 54);

  // Per-worker affinity: worker i runs on group i % 30.
  for (uint32_t worker = 0; worker < 70; ++worker) {
    assert_int_equal(weft_topology_worker_group(&topology, worker),
                     worker % 30);
    assert_ptr_equal(weft_topology_worker_cpus(&topology, worker),
                     &topology.groups[worker % 30].cpus);
  }
  assert_set(weft_topology_worker_cpus(&topology, 31), "1,151");
  weft_topology_deinitialize(&topology);
  remove_tree(root);
}

static void test_fake_hwloc(void** state) {
  (void)state;
  if (!weft_topology_hwloc_available()) {
    printf("hwloc not built in: synthetic hwloc topology skipped\n");
    return;
  }
  char root[64];
  make_fake_machine(root, sizeof(root));
  weft_topology_test_hooks_t hooks;
  init_hooks(&hooks, root);
  hooks.hwloc_synthetic = FAKE_SYNTHETIC;
  weft_topology_options_t options;
  init_options(&options, WEFT_TOPOLOGY_BACKEND_HWLOC, &hooks);
  weft_topology_t topology;
  assert_ok(
      weft_topology_initialize(&options, weft_allocator_system(), &topology));
  printf("%s", topology.explanation);
  check_fake_machine(&topology, "hwloc");

  // The sysfs backend on the same machine forms the same groups.
  weft_topology_t sysfs;
  init_options(&options, WEFT_TOPOLOGY_BACKEND_SYSFS, &hooks);
  assert_ok(
      weft_topology_initialize(&options, weft_allocator_system(), &sysfs));
  assert_int_equal(sysfs.group_count, topology.group_count);
  for (uint32_t i = 0; i < sysfs.group_count; ++i) {
    assert_true(weft_affinity_set_equal(&sysfs.groups[i].cpus,
                                        &topology.groups[i].cpus));
  }
  weft_topology_deinitialize(&sysfs);
  weft_topology_deinitialize(&topology);

  // A malformed synthetic description is reported.
  hooks.hwloc_synthetic = "Package:banana";
  init_options(&options, WEFT_TOPOLOGY_BACKEND_HWLOC, &hooks);
  assert_status(
      weft_topology_initialize(&options, weft_allocator_system(), &topology),
      WEFT_STATUS_INVALID_ARGUMENT, "Package:banana");
  remove_tree(root);
}

static void test_fake_cpus_option(void** state) {
  (void)state;
  char root[64];
  make_fake_machine(root, sizeof(root));
  weft_topology_test_hooks_t hooks;
  init_hooks(&hooks, root);
  weft_topology_options_t options;
  init_options(&options, WEFT_TOPOLOGY_BACKEND_SYSFS, &hooks);
  options.cpus = "0-3,270-299,400";
  weft_topology_t topology;
  assert_ok(
      weft_topology_initialize(&options, weft_allocator_system(), &topology));
  assert_set(&topology.allowed_cpus, "0-3,270-279");
  assert_int_equal(topology.allowed_cpu_count, 14);
  assert_set(&topology.excluded_by_cpus, "4-9,150-159,260-269");
  assert_int_equal(topology.group_count, 14);
  // Cores 0-3 only have their first thread now.
  assert_set(&topology.groups[0].cpus, "0");
  assert_contains(topology.explanation,
                  "cpus=0-3,270-299,400 excludes 26 CPUs: "
                  "4-9,150-159,260-269");
  assert_contains(topology.explanation, "names CPUs not online (ignored): 400");
  weft_topology_deinitialize(&topology);

  // A list that leaves nothing this process may use.
  options.cpus = "10-20";
  assert_status(
      weft_topology_initialize(&options, weft_allocator_system(), &topology),
      WEFT_STATUS_INVALID_ARGUMENT,
      "option 'cpus=10-20' leaves no CPU: this process may use CPUs "
      "0-9,150-159,260-279");
  // A malformed list names the option and the position.
  options.cpus = "0-3x";
  assert_status(
      weft_topology_initialize(&options, weft_allocator_system(), &topology),
      WEFT_STATUS_INVALID_ARGUMENT, "position 3");
  remove_tree(root);
}

static void test_fake_nodes_current(void** state) {
  (void)state;
  char root[64];
  make_fake_machine(root, sizeof(root));
  weft_topology_test_hooks_t hooks;
  init_hooks(&hooks, root);
  hooks.current_cpu = 270;  // package 1, node 1
  weft_topology_options_t options;
  init_options(&options, WEFT_TOPOLOGY_BACKEND_SYSFS, &hooks);
  options.nodes = WEFT_TOPOLOGY_NODES_CURRENT;
  weft_topology_t topology;
  assert_ok(
      weft_topology_initialize(&options, weft_allocator_system(), &topology));
  assert_int_equal(topology.current_node_id, 1);
  assert_set(&topology.allowed_cpus, "260-279");
  assert_set(&topology.excluded_by_nodes, "0-9,150-159");
  assert_int_equal(topology.group_count, 20);
  assert_contains(topology.explanation,
                  "nodes=current keeps NUMA node 1 (the calling thread runs "
                  "on CPU 270)");
  assert_contains(topology.explanation,
                  "nodes=current excludes 20 CPUs: 0-9,150-159");
  weft_topology_deinitialize(&topology);

  hooks.current_cpu = 3;  // node 0
  assert_ok(
      weft_topology_initialize(&options, weft_allocator_system(), &topology));
  assert_int_equal(topology.current_node_id, 0);
  assert_set(&topology.allowed_cpus, "0-9,150-159");
  assert_int_equal(topology.group_count, 10);
  weft_topology_deinitialize(&topology);

  // cpus= keeps only node 0's CPUs but the thread runs on node 1.
  hooks.current_cpu = 270;
  options.cpus = "0-9";
  assert_status(
      weft_topology_initialize(&options, weft_allocator_system(), &topology),
      WEFT_STATUS_INVALID_ARGUMENT,
      "option 'nodes=current' leaves no CPU: the calling thread "
      "runs on CPU 270 in NUMA node 1");
  remove_tree(root);
}

static void test_fake_oversubscribed(void** state) {
  (void)state;
  char root[64];
  make_fake_machine(root, sizeof(root));
  weft_topology_test_hooks_t hooks;
  init_hooks(&hooks, root);
  weft_topology_options_t options;
  init_options(&options, WEFT_TOPOLOGY_BACKEND_SYSFS, &hooks);
  // 9 workers on 8 CPUs of quota: oversubscribed although 40 are allowed.
  options.worker_count = 9;
  weft_topology_t topology;
  assert_ok(
      weft_topology_initialize(&options, weft_allocator_system(), &topology));
  assert_int_equal(topology.worker_count, 9);
  assert_true(topology.oversubscribed);
  assert_int_equal(weft_topology_spin_us(&topology, 20), 0);
  assert_contains(topology.explanation, "workers: 9 (workers=9)");
  assert_contains(topology.explanation,
                  "oversubscribed: yes (9 workers on 8 effective CPUs); "
                  "spinning off");
  weft_topology_deinitialize(&topology);
  options.worker_count = 8;
  assert_ok(
      weft_topology_initialize(&options, weft_allocator_system(), &topology));
  assert_false(topology.oversubscribed);
  weft_topology_deinitialize(&topology);
  options.worker_count = WEFT_TOPOLOGY_MAX_WORKER_COUNT + 1;
  assert_status(
      weft_topology_initialize(&options, weft_allocator_system(), &topology),
      WEFT_STATUS_INVALID_ARGUMENT, "65537");
  remove_tree(root);
}

// Builds a 2-CPU machine without NUMA or cgroup files (and no mountinfo).
static void make_small_machine(char* root, size_t capacity) {
  make_temp_root(root, capacity);
  write_file(root, "/sys/devices/system/cpu/online", "0-1\n");
  for (int cpu = 0; cpu < 2; ++cpu) {
    char text[16];
    snprintf(text, sizeof(text), "%d\n", cpu);
    write_filef(root, text, "/sys/devices/system/cpu/cpu%d/topology/core_id",
                cpu);
    write_filef(root, "0\n",
                "/sys/devices/system/cpu/cpu%d/topology/physical_package_id",
                cpu);
    // Only the older name of the siblings file.
    write_filef(root, text,
                "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list",
                cpu);
  }
}

static void test_small_machine_oversubscribed(void** state) {
  (void)state;
  char root[64];
  make_small_machine(root, sizeof(root));
  weft_topology_test_hooks_t hooks;
  memset(&hooks, 0, sizeof(hooks));
  hooks.root = root;
  hooks.affinity_cpus = "0-1";
  hooks.current_cpu = 1;
  weft_topology_options_t options;
  init_options(&options, WEFT_TOPOLOGY_BACKEND_SYSFS, &hooks);
  options.worker_count = 8;
  weft_topology_t topology;
  assert_ok(
      weft_topology_initialize(&options, weft_allocator_system(), &topology));
  assert_int_equal(topology.machine_cpu_count, 2);
  assert_int_equal(topology.numa_node_count, 1);
  assert_int_equal(topology.group_count, 2);
  assert_int_equal(topology.allowed_cpu_count, 2);
  assert_int_equal(topology.effective_cpu_count, 2);
  assert_true(topology.cgroup_quota_cpus == 0.0);
  assert_int_equal(topology.worker_count, 8);
  assert_true(topology.oversubscribed);
  assert_int_equal(weft_topology_spin_us(&topology, 50), 0);
  assert_contains(topology.explanation, "cgroup quota: none");
  assert_contains(topology.explanation, "spinning off");
  // Workers 0-7 alternate between the two cores.
  assert_set(weft_topology_worker_cpus(&topology, 6), "0");
  assert_set(weft_topology_worker_cpus(&topology, 7), "1");
  weft_topology_deinitialize(&topology);

  // Auto: one worker per core, not oversubscribed; nodes=current works
  // without NUMA information (one node).
  options.worker_count = 0;
  options.nodes = WEFT_TOPOLOGY_NODES_CURRENT;
  assert_ok(
      weft_topology_initialize(&options, weft_allocator_system(), &topology));
  assert_int_equal(topology.worker_count, 2);
  assert_false(topology.oversubscribed);
  assert_int_equal(topology.current_node_id, 0);
  assert_int_equal(topology.allowed_cpu_count, 2);
  weft_topology_deinitialize(&topology);

  // A tree without the online list is reported with the file.
  remove_tree(root);
  make_temp_root(root, sizeof(root));
  assert_status(
      weft_topology_initialize(&options, weft_allocator_system(), &topology),
      WEFT_STATUS_NOT_FOUND, "/sys/devices/system/cpu/present");
  remove_tree(root);
}

// cgroup v1: the cpu controller mounted from inside a container (mount root
// /docker), quota 1.5 CPUs -> 2 effective CPUs.
static void test_fake_cgroup_v1(void** state) {
  (void)state;
  char root[64];
  make_fake_machine(root, sizeof(root));
  write_file(root, "/proc/self/cgroup",
             "12:pids:/docker/abc\n"
             "4:cpu,cpuacct:/docker/abc\n"
             "0::/\n");
  write_file(root, "/proc/self/mountinfo",
             "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
             "31 22 0:27 /docker /sys/fs/cgroup/cpu,cpuacct ro - cgroup "
             "cgroup rw,cpu,cpuacct\n"
             "32 22 0:28 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n");
  write_file(root, "/sys/fs/cgroup/cpu,cpuacct/abc/cpu.cfs_quota_us",
             "150000\n");
  write_file(root, "/sys/fs/cgroup/cpu,cpuacct/abc/cpu.cfs_period_us",
             "100000\n");
  write_file(root, "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
  write_file(root, "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
  weft_topology_test_hooks_t hooks;
  init_hooks(&hooks, root);
  weft_topology_options_t options;
  init_options(&options, WEFT_TOPOLOGY_BACKEND_SYSFS, &hooks);
  weft_topology_t topology;
  assert_ok(
      weft_topology_initialize(&options, weft_allocator_system(), &topology));
  assert_true(topology.cgroup_quota_cpus > 1.49 &&
              topology.cgroup_quota_cpus < 1.51);
  assert_string_equal(topology.cgroup_quota_path,
                      "/sys/fs/cgroup/cpu,cpuacct/abc/cpu.cfs_quota_us");
  assert_int_equal(topology.effective_cpu_count, 2);
  assert_int_equal(topology.worker_count, 2);
  assert_false(topology.oversubscribed);
  weft_topology_deinitialize(&topology);
  remove_tree(root);
}

//===----------------------------------------------------------------------===//
// Allocation failures
//===----------------------------------------------------------------------===//

// Fails allocation number fail_at = 0, step, 2 * step, ... until the query
// succeeds; every failure must be RESOURCE_EXHAUSTED and leave nothing
// behind (the sanitizer builds check for leaks).
static void sweep_allocation_failures(weft_topology_options_t* options,
                                      int64_t step) {
  bool succeeded = false;
  int64_t fail_at = 0;
  for (; !succeeded && fail_at < 100000; fail_at += step) {
    weft_failing_allocator_t storage;
    weft_allocator_t allocator = weft_failing_allocator_initialize(
        weft_allocator_system(), fail_at, &storage);
    weft_topology_t topology;
    weft_status_t status =
        weft_topology_initialize(options, allocator, &topology);
    if (weft_status_is_ok(status)) {
      succeeded = true;
      weft_topology_deinitialize(&topology);
    } else {
      if (weft_status_code(status) != WEFT_STATUS_RESOURCE_EXHAUSTED) {
        weft_status_fprint(stderr, status);
        fail_msg("fail_at %lld", (long long)fail_at);
      }
      weft_status_free(status);
      // A failed query holds nothing.
      assert_null(topology.groups);
      assert_null(topology.explanation);
    }
  }
  assert_true(succeeded);
  assert_true(fail_at > step);
}

static void test_allocation_failures(void** state) {
  (void)state;
  // Every allocation of a small machine's query, with every option.
  char root[64];
  make_small_machine(root, sizeof(root));
  weft_topology_test_hooks_t hooks;
  memset(&hooks, 0, sizeof(hooks));
  hooks.root = root;
  hooks.affinity_cpus = "0-1";
  hooks.current_cpu = 0;
  weft_topology_options_t options;
  init_options(&options, WEFT_TOPOLOGY_BACKEND_SYSFS, &hooks);
  options.cpus = "0-1,7";
  options.nodes = WEFT_TOPOLOGY_NODES_CURRENT;
  sweep_allocation_failures(&options, 1);
  remove_tree(root);

  // The 300-CPU machine: every 7th allocation (each query reads thousands
  // of files), and every one with hwloc's synthetic copy of it.
  make_fake_machine(root, sizeof(root));
  init_hooks(&hooks, root);
  hooks.current_cpu = 0;
  init_options(&options, WEFT_TOPOLOGY_BACKEND_SYSFS, &hooks);
  options.cpus = "0-5,150-155,260-300";
  options.nodes = WEFT_TOPOLOGY_NODES_CURRENT;
  sweep_allocation_failures(&options, 7);
  if (weft_topology_hwloc_available()) {
    hooks.hwloc_synthetic = FAKE_SYNTHETIC;
    options.backend = WEFT_TOPOLOGY_BACKEND_HWLOC;
    sweep_allocation_failures(&options, 1);
  }
  remove_tree(root);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_real_machine),
      cmocka_unit_test(test_real_machine_nodes_current),
      cmocka_unit_test(test_fake_sysfs),
      cmocka_unit_test(test_fake_hwloc),
      cmocka_unit_test(test_fake_cpus_option),
      cmocka_unit_test(test_fake_nodes_current),
      cmocka_unit_test(test_fake_oversubscribed),
      cmocka_unit_test(test_small_machine_oversubscribed),
      cmocka_unit_test(test_fake_cgroup_v1),
      cmocka_unit_test(test_allocation_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
