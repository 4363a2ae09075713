// weft: the cgroup CPU quota (see weft_topology__read_cgroup_quota).
//
// A quota does not say which CPUs the process may use (the cpuset
// controller does, and that shows in the affinity mask already); it says how
// much CPU time per period it gets. "cpu.max: 200000 100000" is two CPUs'
// worth: more busy workers than that only get throttled. The quota of every
// ancestor applies too, so the walk goes from the process's cgroup up to the
// hierarchy's root and keeps the tightest.
//
// Where the files are: /proc/self/cgroup gives the process's path in each
// hierarchy ("0::/path" for v2, "N:cpu,cpuacct:/path" for v1) and
// /proc/self/mountinfo where each hierarchy is mounted (and which of its
// folders: inside a container the mount root may be the container's own
// cgroup).

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "task/topology_impl.h"

#define WEFT_CGROUP_LINE_CAPACITY 4096

typedef struct weft_cgroup_mount_t {
  bool found;
  // The folder of the hierarchy that is mounted ("/" usually).
  char mount_root[PATH_MAX];
  // Where it is mounted.
  char mount_point[PATH_MAX];
} weft_cgroup_mount_t;

// Reads one line of |file| into |line|; a line longer than the buffer is
// skipped whole. Returns false at the end of the file.
static bool weft_cgroup_read_line(FILE* file, char* line, size_t capacity) {
  bool have_line = false;
  while (!have_line && fgets(line, (int)capacity, file)) {
    size_t length = strlen(line);
    if (length > 0 && line[length - 1] == '\n') {
      line[length - 1] = '\0';
      have_line = true;
    } else if (feof(file)) {
      have_line = true;
    } else {
      // Too long: drop the rest of this line.
      int c = 0;
      while ((c = fgetc(file)) != EOF && c != '\n') {
      }
    }
  }
  return have_line;
}

static FILE* weft_cgroup_open(const char* root, const char* path) {
  char full_path[PATH_MAX];
  int length = snprintf(full_path, sizeof(full_path), "%s%s", root, path);
  return length > 0 && (size_t)length < sizeof(full_path)
             ? fopen(full_path, "r")
             : NULL;
}

// True when the comma-separated |list| holds |token|.
static bool weft_cgroup_list_has(const char* list, size_t list_length,
                                 const char* token) {
  size_t token_length = strlen(token);
  bool found = false;
  const char* p = list;
  const char* end = list + list_length;
  while (!found && p < end) {
    const char* comma = memchr(p, ',', (size_t)(end - p));
    const char* item_end = comma ? comma : end;
    found = (size_t)(item_end - p) == token_length &&
            memcmp(p, token, token_length) == 0;
    p = item_end + 1;
  }
  return found;
}

// Finds the process's path in the v2 hierarchy (|v2|) or in the v1
// hierarchy holding the cpu controller.
static bool weft_cgroup_find_path(const char* root, bool v2, char* out_path,
                                  size_t capacity) {
  bool found = false;
  FILE* file = weft_cgroup_open(root, "/proc/self/cgroup");
  char line[WEFT_CGROUP_LINE_CAPACITY];
  while (file && !found && weft_cgroup_read_line(file, line, sizeof(line))) {
    char* first = strchr(line, ':');
    char* second = first ? strchr(first + 1, ':') : NULL;
    if (!second) continue;
    const char* controllers = first + 1;
    size_t controllers_length = (size_t)(second - controllers);
    bool match =
        v2 ? (first - line == 1 && line[0] == '0' && controllers_length == 0)
           : weft_cgroup_list_has(controllers, controllers_length, "cpu");
    if (match && strlen(second + 1) < capacity) {
      strcpy(out_path, second + 1);
      found = true;
    }
  }
  if (file) fclose(file);
  return found;
}

// Finds the mount of the v2 hierarchy (|v2|) or of the v1 one holding the
// cpu controller in mountinfo:
//   id parent major:minor root mount_point options [tags] - type source super
static void weft_cgroup_find_mount(const char* root, bool v2,
                                   weft_cgroup_mount_t* out_mount) {
  out_mount->found = false;
  FILE* file = weft_cgroup_open(root, "/proc/self/mountinfo");
  char line[WEFT_CGROUP_LINE_CAPACITY];
  while (file && !out_mount->found &&
         weft_cgroup_read_line(file, line, sizeof(line))) {
    char* fields[6] = {0};
    char* save = NULL;
    char* separator = strstr(line, " - ");
    if (!separator) continue;
    *separator = '\0';
    char* tail = separator + 3;
    size_t field_count = 0;
    for (char* token = strtok_r(line, " ", &save); token && field_count < 6;
         token = strtok_r(NULL, " ", &save)) {
      fields[field_count++] = token;
    }
    char* type = strtok_r(tail, " ", &save);
    char* source = type ? strtok_r(NULL, " ", &save) : NULL;
    char* super_options = source ? strtok_r(NULL, " ", &save) : NULL;
    if (field_count < 5 || !type) continue;
    bool match = v2 ? strcmp(type, "cgroup2") == 0
                    : strcmp(type, "cgroup") == 0 && super_options &&
                          weft_cgroup_list_has(super_options,
                                               strlen(super_options), "cpu");
    if (match && strlen(fields[3]) < sizeof(out_mount->mount_root) &&
        strlen(fields[4]) < sizeof(out_mount->mount_point)) {
      strcpy(out_mount->mount_root, fields[3]);
      strcpy(out_mount->mount_point, fields[4]);
      out_mount->found = true;
    }
  }
  if (file) fclose(file);
  if (!out_mount->found && v2 && !file) {
    // No mountinfo (a minimal container or test tree): assume the usual
    // place of a unified hierarchy.
    strcpy(out_mount->mount_root, "/");
    strcpy(out_mount->mount_point, "/sys/fs/cgroup");
    out_mount->found = true;
  }
}

// Reads the quota in |directory| (without |root|): v2 cpu.max
// "QUOTA PERIOD" or "max PERIOD", v1 cpu.cfs_quota_us (-1 = none) and
// cpu.cfs_period_us. Returns quota / period, or 0 when unlimited or absent.
static double weft_cgroup_read_quota(const char* root, const char* directory,
                                     bool v2) {
  double cpus = 0.0;
  char path[PATH_MAX];
  char text[128];
  int length = 0;
  if (v2) {
    length = snprintf(path, sizeof(path), "%s/cpu.max", directory);
    weft_status_t status =
        length < 0 || (size_t)length >= sizeof(path)
            ? WEFT_STATUS(OUT_OF_RANGE, "topology: cgroup path too long")
            : weft_topology__read_file(root, path, text, sizeof(text));
    double quota = 0.0;
    double period = 0.0;
    if (weft_status_is_ok(status) &&
        sscanf(text, "%lf %lf", &quota, &period) == 2 && quota > 0.0 &&
        period > 0.0) {
      cpus = quota / period;
    }
    weft_status_ignore(status);
  } else {
    char period_text[128];
    length = snprintf(path, sizeof(path), "%s/cpu.cfs_quota_us", directory);
    weft_status_t status =
        length < 0 || (size_t)length >= sizeof(path)
            ? WEFT_STATUS(OUT_OF_RANGE, "topology: cgroup path too long")
            : weft_topology__read_file(root, path, text, sizeof(text));
    length = snprintf(path, sizeof(path), "%s/cpu.cfs_period_us", directory);
    status = length < 0 || (size_t)length >= sizeof(path)
                 ? weft_status_join(
                       status, WEFT_STATUS(OUT_OF_RANGE,
                                           "topology: cgroup path too long"))
                 : weft_status_join(
                       status, weft_topology__read_file(root, path, period_text,
                                                        sizeof(period_text)));
    double quota = weft_status_is_ok(status) ? strtod(text, NULL) : 0.0;
    double period = weft_status_is_ok(status) ? strtod(period_text, NULL) : 0.0;
    if (quota > 0.0 && period > 0.0) cpus = quota / period;
    weft_status_ignore(status);
  }
  return cpus;
}

// Returns the folder of the process's cgroup in the v2 hierarchy (|v2|) or
// the v1 cpu hierarchy, as a path without |root|, and the length of its
// mount point (the walk's floor). False when there is none.
static bool weft_cgroup_find_directory(const char* root, bool v2,
                                       char* out_directory, size_t capacity,
                                       size_t* out_floor_length) {
  char cgroup_path[PATH_MAX];
  weft_cgroup_mount_t mount;
  bool found =
      weft_cgroup_find_path(root, v2, cgroup_path, sizeof(cgroup_path));
  if (found) {
    weft_cgroup_find_mount(root, v2, &mount);
    found = mount.found;
  }
  if (found) {
    // The part of the process's path below the mounted folder; a path
    // outside it (another namespace) falls back to the mount point.
    const char* relative = "";
    size_t root_length = strlen(mount.mount_root);
    if (strcmp(mount.mount_root, "/") == 0) {
      relative = cgroup_path;
    } else if (strncmp(cgroup_path, mount.mount_root, root_length) == 0 &&
               (cgroup_path[root_length] == '/' ||
                cgroup_path[root_length] == '\0')) {
      relative = cgroup_path + root_length;
    }
    int length =
        snprintf(out_directory, capacity, "%s%s", mount.mount_point, relative);
    found = length > 0 && (size_t)length < capacity;
    *out_floor_length = strlen(mount.mount_point);
    // Strip trailing slashes ("/sys/fs/cgroup/" for the root cgroup).
    while (found && (size_t)length > *out_floor_length &&
           out_directory[length - 1] == '/') {
      out_directory[--length] = '\0';
    }
  }
  return found;
}

// Walks from the process's cgroup folder up to the mount point, keeping
// the tightest quota in |inout_quota|.
static void weft_cgroup_walk(const char* root, bool v2,
                             weft_topology_cgroup_quota_t* inout_quota) {
  char directory[PATH_MAX];
  size_t floor_length = 0;
  bool done = !weft_cgroup_find_directory(root, v2, directory,
                                          sizeof(directory), &floor_length);
  while (!done) {
    double cpus = weft_cgroup_read_quota(root, directory, v2);
    if (cpus > 0.0 && (inout_quota->cpus == 0.0 || cpus < inout_quota->cpus)) {
      inout_quota->cpus = cpus;
      int length =
          snprintf(inout_quota->path, sizeof(inout_quota->path), "%s/%s",
                   directory, v2 ? "cpu.max" : "cpu.cfs_quota_us");
      if (length < 0 || (size_t)length >= sizeof(inout_quota->path)) {
        // Truncated: the quota still counts; mark the cut.
        memcpy(inout_quota->path + sizeof(inout_quota->path) - 4, "...", 4);
      }
    }
    char* slash = strrchr(directory, '/');
    done = strlen(directory) <= floor_length || !slash ||
           (size_t)(slash - directory) < floor_length;
    if (!done) *slash = '\0';
  }
}

void weft_topology__read_cgroup_quota(const char* root,
                                      weft_topology_cgroup_quota_t* out_quota) {
  out_quota->cpus = 0.0;
  out_quota->path[0] = '\0';
  weft_cgroup_walk(root, /*v2=*/true, out_quota);
  weft_cgroup_walk(root, /*v2=*/false, out_quota);
}
