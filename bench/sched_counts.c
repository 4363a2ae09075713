// weft_sched_counts: the scheduler's cost model, counted.
//
// Runs DispatchTiles' dispatch (one dispatch of --workgroups empty
// workgroups, submitted and waited for by the host) on local-task at each
// worker count of --workers, and prints what one dispatch costs, averaged
// over --dispatches: the read-modify-writes on shared lines by the line,
// wakes and the deepest wake chain, futex calls, yields and clock reads,
// and the host's polls of the wait-assist table (src/base/sched_counters.h;
// the model is in src/task/README.md). Counts, not times: worker counts
// above the CPUs are fine (the counts of a design do not need the cores),
// but such an executor never spins (the oversubscription rule), so its
// syscall columns are those of sleeping workers.
//
//   weft_sched_counts [--workers=1,2,4,8,16,32] [--dispatches=200]
//                     [--workgroups=4096] [--options=spin_us=0&assist=1]
//                     [--op=dispatch|fill]
//
// --op=fill counts QueueRoundTrip's op instead: a 64-byte queue fill that
// the host waits for (what a queue op costs without compute).
//
// --options are appended to every device string ("local-task?workers=N&").
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/sched_counters.h"
#include "bench_kernels.h"
#include "weft/weft.h"

#define MAX_WORKER_COUNTS 16

typedef struct options_t {
  uint32_t worker_counts[MAX_WORKER_COUNTS];
  uint32_t worker_count_count;
  uint32_t dispatches;
  uint32_t workgroups;
  const char* extra;
  bool fill;  // --op=fill
} options_t;

static int usage(const char* message) {
  fprintf(stderr,
          "weft_sched_counts: %s\n"
          "usage: weft_sched_counts [--workers=1,2,4,...] [--dispatches=N] "
          "[--workgroups=N] [--options=key=value&...]\n",
          message);
  return 2;
}

// Parses a decimal in [1, limit]; false otherwise.
static bool parse_count(const char* text, uint32_t limit, uint32_t* out) {
  char* end = NULL;
  unsigned long long value = strtoull(text, &end, 10);
  if (end == text || (*end && *end != ',') || value < 1 || value > limit ||
      text[0] == '-') {
    return false;
  }
  *out = (uint32_t)value;
  return true;
}

static bool parse_options(int argc, char** argv, options_t* options) {
  const uint32_t defaults[] = {1, 2, 4, 8, 16, 32};
  memcpy(options->worker_counts, defaults, sizeof(defaults));
  options->worker_count_count = 6;
  options->dispatches = 200;
  options->workgroups = 4096;
  options->extra = "";
  options->fill = false;
  for (int i = 1; i < argc; ++i) {
    const char* arg = argv[i];
    if (strncmp(arg, "--workers=", 10) == 0) {
      options->worker_count_count = 0;
      for (const char* p = arg + 10; *p;) {
        if (options->worker_count_count == MAX_WORKER_COUNTS ||
            !parse_count(p, 1024,
                         &options->worker_counts[options->worker_count_count])) {
          return false;
        }
        ++options->worker_count_count;
        const char* comma = strchr(p, ',');
        if (!comma) break;
        p = comma + 1;
      }
      if (options->worker_count_count == 0) return false;
    } else if (strncmp(arg, "--dispatches=", 13) == 0) {
      if (!parse_count(arg + 13, 1000000, &options->dispatches)) return false;
    } else if (strncmp(arg, "--workgroups=", 13) == 0) {
      if (!parse_count(arg + 13, 1u << 24, &options->workgroups)) return false;
    } else if (strncmp(arg, "--options=", 10) == 0) {
      options->extra = arg + 10;
    } else if (strcmp(arg, "--op=fill") == 0) {
      options->fill = true;
    } else if (strcmp(arg, "--op=dispatch") == 0) {
      options->fill = false;
    } else {
      return false;
    }
  }
  return true;
}

static bool check(weft_status_t status, const char* what) {
  if (weft_status_is_ok(status)) return true;
  fprintf(stderr, "weft_sched_counts: %s: ", what);
  weft_status_fprint(stderr, status);
  fprintf(stderr, "\n");
  weft_status_free(status);
  return false;
}

// One dispatch (or, with |buffer|, a 64-byte fill of it) and its wait.
static bool dispatch_once(weft_device_t* device, weft_executable_t* kernels,
                          weft_buffer_t* buffer, weft_semaphore_t* semaphore,
                          uint64_t value, const uint32_t workgroups[3]) {
  weft_semaphore_t* semaphores[1] = {semaphore};
  uint64_t values[1] = {value};
  weft_semaphore_list_t signals = {1, semaphores, values};
  const uint32_t pattern = 0x5A5A5A5Au;
  weft_status_t submitted =
      buffer ? weft_device_queue_fill(device, WEFT_QUEUE_AFFINITY_ANY,
                                      weft_semaphore_list_empty(), signals,
                                      buffer, 0, 64, &pattern, sizeof(pattern))
             : weft_device_queue_dispatch(
                   device, WEFT_QUEUE_AFFINITY_ANY, weft_semaphore_list_empty(),
                   signals, kernels, WEFT_BENCH_KERNEL_EMPTY, workgroups, 0,
                   NULL, 0, NULL);
  return check(submitted, buffer ? "queue_fill" : "queue_dispatch") &&
         check(weft_semaphore_wait(semaphore, value, weft_timeout_relative(30ll * 1000 * 1000 * 1000)),
               "semaphore_wait");
}

// Counts --dispatches dispatches on |workers| workers into |out_counts|.
static bool measure(const options_t* options, uint32_t workers,
                    weft_sched_counts_t* out_counts) {
  char device_string[256];
  snprintf(device_string, sizeof(device_string), "local-task?workers=%u%s%s",
           workers, options->extra[0] ? "&" : "", options->extra);
  weft_device_t* device = NULL;
  weft_executable_t* kernels = NULL;
  weft_semaphore_t* semaphore = NULL;
  weft_buffer_t* buffer = NULL;
  bool ok =
      check(weft_device_create(device_string, weft_allocator_system(), &device),
            device_string) &&
      check(weft_device_create_executable(
                device, weft_executable_source_cpu_static(weft_bench_kernels_query),
                &kernels),
            "create_executable") &&
      check(weft_device_create_semaphore(device, 0, &semaphore),
            "create_semaphore") &&
      (!options->fill ||
       check(weft_device_allocate_buffer(device, (weft_buffer_params_t){0},
                                         64, &buffer),
             "allocate_buffer"));
  const uint32_t workgroups[3] = {options->workgroups, 1, 1};
  uint64_t value = 0;
  // Warm: every worker has run, every lazily made block exists.
  for (int i = 0; ok && i < 20; ++i) {
    ok = dispatch_once(device, kernels, buffer, semaphore, ++value,
                       workgroups);
  }
  // Let the warm-up's last drainers leave before the counts start.
  weft_sleep_until(weft_time_now() + 50 * 1000 * 1000);
  weft_sched_counters_reset();
  for (uint32_t i = 0; ok && i < options->dispatches; ++i) {
    ok = dispatch_once(device, kernels, buffer, semaphore, ++value,
                       workgroups);
  }
  weft_sched_counters_snapshot(out_counts);
  weft_buffer_release(buffer);
  weft_semaphore_release(semaphore);
  weft_executable_release(kernels);
  weft_device_release(device);
  return ok;
}

int main(int argc, char** argv) {
  options_t options;
  if (!parse_options(argc, argv, &options)) return usage("bad arguments");
  weft_sched_counters_enable(true);
  if (options.fill) {
    printf("counts per 64-byte queue fill, %u fills, ", options.dispatches);
  } else {
    printf("counts per dispatch of %u empty workgroups, %u dispatches, ",
           options.workgroups, options.dispatches);
  }
  printf("device 'local-task?workers=N%s%s'\n\n", options.extra[0] ? "&" : "",
         options.extra);
  printf("| counter |");
  for (uint32_t i = 0; i < options.worker_count_count; ++i) {
    printf(" N=%u |", options.worker_counts[i]);
  }
  printf("\n| --- |");
  for (uint32_t i = 0; i < options.worker_count_count; ++i) printf(" --- |");
  printf("\n");
  weft_sched_counts_t counts[MAX_WORKER_COUNTS];
  for (uint32_t i = 0; i < options.worker_count_count; ++i) {
    if (!measure(&options, options.worker_counts[i], &counts[i])) return 1;
  }
  for (int c = 0; c < WEFT_SCHED_COUNTER_COUNT; ++c) {
    printf("| %s |", weft_sched_counter_name((weft_sched_counter_t)c));
    for (uint32_t i = 0; i < options.worker_count_count; ++i) {
      printf(" %.2f |", (double)counts[i].values[c] / options.dispatches);
    }
    printf("\n");
  }
  printf("| max wake depth |");
  for (uint32_t i = 0; i < options.worker_count_count; ++i) {
    printf(" %u |", counts[i].max_wake_depth);
  }
  printf("\n");
  return 0;
}
