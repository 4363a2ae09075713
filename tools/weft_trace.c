// weft-trace: reads a weft trace (Chrome trace event JSON) and
//
//   weft-trace TRACE.json               prints a summary: per queue-op type
//                                       the latency percentiles of each
//                                       phase, worker utilisation, sleeps and
//                                       wakes, file I/O, semaphore events
//   weft-trace --svg OUT.svg TRACE.json draws a timeline picture (SVG)
//   weft-trace --check TRACE.json       checks the trace: it parses, zones
//                                       balance per thread, timestamps never
//                                       go back on a thread, and every flow
//                                       has a start and an end with its steps
//                                       in time order
//   weft-trace --check-svg OUT.svg      checks an SVG is well formed
//
// The queue-op protocol it reads is the one src/base/trace.h describes:
// every event of an op is in category "queue" and carries the op's id;
// instants "submit", "ready" and "signal" (value 1 signalled, 0 failed) and
// a zone named after the op. Phases: wait = ready - submit, queue = zone
// begin - ready, execute = the zone's length, signal = signal - zone end;
// device = the length of the op's "X" zone on a device track (a GPU's time,
// measured by the device), where the driver records one.
// An op is asynchronous when its signal comes from another thread than the
// one that ran its zone (or from that thread after it started another op's
// zone): its execute phase then runs to the signal (or the zone's end, if
// later) and it has no signal phase.
//
// Exit codes: 0 done (check passed), 1 the trace or SVG has a problem or
// cannot be read, 2 bad usage.
#include "weft_trace.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_PROBLEM 1
#define EXIT_USAGE 2

static void print_usage(FILE* stream) {
  fprintf(stream,
          "Usage: weft-trace [--help] TRACE.json\n"
          "       weft-trace --svg OUT.svg TRACE.json\n"
          "       weft-trace --check TRACE.json\n"
          "       weft-trace --check-svg FILE.svg\n"
          "\n"
          "Summarises a weft trace (Chrome trace event JSON, as written with\n"
          "WEFT_TRACE=path.json): latency percentiles per queue-op type and\n"
          "phase (wait, queue, execute, signal), worker utilisation, sleeps\n"
          "and wakes, file I/O and semaphore events. --svg draws a timeline\n"
          "(one lane per thread); --check validates the trace (balanced\n"
          "zones per thread, ordered timestamps, connected flows);\n"
          "--check-svg validates an SVG file.\n");
}

//===----------------------------------------------------------------------===//
// Grouping by id
//===----------------------------------------------------------------------===//

// Orders event indices of |context| (the trace) by id, then time, then file
// position.
static int compare_by_id_then_time(const void* a, const void* b,
                                   void* context) {
  const trace_t* trace = (const trace_t*)context;
  const trace_event_t* x = &trace->events[*(const uint32_t*)a];
  const trace_event_t* y = &trace->events[*(const uint32_t*)b];
  if (x->id != y->id) return x->id < y->id ? -1 : 1;
  if (x->ts_ns != y->ts_ns) return x->ts_ns < y->ts_ns ? -1 : 1;
  return x->file_index < y->file_index ? -1 : x->file_index > y->file_index;
}

uint32_t* trace_collect_by_id(const trace_t* trace,
                              trace_event_filter_fn_t filter,
                              size_t* out_count) {
  uint32_t* indices =
      (uint32_t*)trace_realloc(NULL, sizeof(uint32_t) * trace->event_count);
  size_t count = 0;
  for (size_t i = 0; i < trace->event_count; ++i) {
    if (filter(&trace->events[i])) indices[count++] = (uint32_t)i;
  }
  qsort_r(indices, count, sizeof(uint32_t), compare_by_id_then_time,
          (void*)trace);
  *out_count = count;
  return indices;
}

//===----------------------------------------------------------------------===//
// --check
//===----------------------------------------------------------------------===//

bool trace_is_flow_event(const trace_event_t* event) {
  return event->phase == 's' || event->phase == 't' || event->phase == 'f';
}

// Checks every flow id: one start, one end, steps between them in time.
// Returns false and prints the first problem.
static bool check_flows(const trace_t* trace, size_t* out_flow_count,
                        size_t* out_cut_count) {
  size_t cut_count = 0;
  size_t count = 0;
  uint32_t* flows = trace_collect_by_id(trace, trace_is_flow_event, &count);
  bool ok = true;
  size_t flow_count = 0;
  for (size_t i = 0; ok && i < count;) {
    const trace_event_t* first = &trace->events[flows[i]];
    if (!first->has_id) {
      fprintf(stderr,
              "weft-trace: '%s': flow event #%zu ('%c' \"%s\") has no id\n",
              trace->path, first->file_index, first->phase, first->name);
      ok = false;
      break;
    }
    size_t end = i;
    size_t starts = 0, ends = 0;
    const trace_event_t* start = NULL;
    const trace_event_t* finish = NULL;
    while (end < count && trace->events[flows[end]].id == first->id) {
      const trace_event_t* event = &trace->events[flows[end]];
      if (event->phase == 's') {
        ++starts;
        if (!start) start = event;
      } else if (event->phase == 'f') {
        ++ends;
        finish = event;
      }
      ++end;
    }
    ++flow_count;
    char problem[256] = "";
    if (trace->dropped_events && starts + ends == 1) {
      // Half a flow, and the recorder dropped events: the other half is
      // among them.
      ++cut_count;
    } else if (starts != 1 || ends != 1) {
      snprintf(problem, sizeof(problem),
               "has %zu start%s and %zu end%s (wants one of each)", starts,
               starts == 1 ? "" : "s", ends, ends == 1 ? "" : "s");
    } else {
      // Sorted by time: the start must come first and the end last (ties
      // are fine).
      for (size_t j = i; j < end && !problem[0]; ++j) {
        const trace_event_t* event = &trace->events[flows[j]];
        if (event->ts_ns < start->ts_ns) {
          char at[32], started[32];
          trace_format_us(event->ts_ns, at, sizeof(at));
          trace_format_us(start->ts_ns, started, sizeof(started));
          snprintf(problem, sizeof(problem),
                   "has event #%zu ('%c') at %s us, before its start (%s us)",
                   event->file_index, event->phase, at, started);
        } else if (event->ts_ns > finish->ts_ns) {
          char at[32], ended[32];
          trace_format_us(event->ts_ns, at, sizeof(at));
          trace_format_us(finish->ts_ns, ended, sizeof(ended));
          snprintf(problem, sizeof(problem),
                   "has event #%zu ('%c') at %s us, after its end (%s us)",
                   event->file_index, event->phase, at, ended);
        }
      }
    }
    if (problem[0]) {
      fprintf(stderr, "weft-trace: '%s': flow id %" PRIu64 " (\"%s\") %s\n",
              trace->path, first->id, first->name, problem);
      ok = false;
    }
    i = end;
  }
  free(flows);
  *out_flow_count = flow_count;
  *out_cut_count = cut_count;
  return ok;
}

static int run_check(const char* path) {
  trace_t trace;
  int code = EXIT_PROBLEM;
  if (trace_load(path, &trace)) {
    size_t flow_count = 0;
    size_t cut_count = 0;
    if (trace.problem[0]) {
      fprintf(stderr, "weft-trace: '%s': %s\n", path, trace.problem);
    } else if (check_flows(&trace, &flow_count, &cut_count)) {
      if (trace.dropped_events) {
        printf("weft-trace: '%s': note: the recorder dropped %" PRIu64
               " events (its per-thread limit); %zu flows are cut short by "
               "that and not checked\n",
               path, trace.dropped_events, cut_count);
      }
      size_t zones = 0;
      for (size_t i = 0; i < trace.event_count; ++i) {
        zones += trace.events[i].phase == 'B' || trace.events[i].phase == 'X';
      }
      printf(
          "weft-trace: '%s': OK: %zu events, %zu zones, %zu flows, %u "
          "threads\n",
          path, trace.event_count, zones, flow_count, trace.thread_count);
      code = 0;
    }
  }
  trace_free(&trace);
  return code;
}

//===----------------------------------------------------------------------===//
// Summary: queue ops
//===----------------------------------------------------------------------===//

enum {
  PHASE_WAIT = 0,
  PHASE_QUEUE,
  PHASE_EXECUTE,
  PHASE_SIGNAL,
  PHASE_DEVICE,
  PHASE_COUNT,
};
static const char* const kPhaseNames[PHASE_COUNT] = {
    "wait", "queue", "execute", "signal", "device"};

typedef struct samples_t {
  int64_t* values;
  size_t count;
  size_t capacity;
} samples_t;

static void samples_add(samples_t* samples, int64_t value) {
  if (samples->count == samples->capacity) {
    samples->capacity = samples->capacity ? samples->capacity * 2 : 64;
    samples->values = (int64_t*)trace_realloc(
        samples->values, sizeof(int64_t) * samples->capacity);
  }
  samples->values[samples->count++] = value < 0 ? 0 : value;
}

static int compare_i64(const void* a, const void* b) {
  int64_t x = *(const int64_t*)a, y = *(const int64_t*)b;
  return x < y ? -1 : x > y;
}

// Nearest-rank percentile of sorted samples.
static int64_t samples_percentile(const samples_t* samples, double percent) {
  size_t rank = (size_t)ceil(percent / 100.0 * (double)samples->count);
  if (rank < 1) rank = 1;
  if (rank > samples->count) rank = samples->count;
  return samples->values[rank - 1];
}

typedef struct op_type_t {
  const char* name;
  size_t count;
  size_t failed;
  size_t async;
  samples_t phases[PHASE_COUNT];
} op_type_t;

static bool is_queue_op_event(const trace_event_t* event) {
  return event->has_id && strcmp(event->category, "queue") == 0 &&
         (event->phase == 'B' || event->phase == 'i' || event->phase == 'X');
}

static bool is_protocol_instant(const char* name) {
  return strcmp(name, "submit") == 0 || strcmp(name, "ready") == 0 ||
         strcmp(name, "signal") == 0;
}

static op_type_t* find_op_type(op_type_t** types, size_t* count,
                               const char* name) {
  for (size_t i = 0; i < *count; ++i) {
    if (strcmp((*types)[i].name, name) == 0) return &(*types)[i];
  }
  *types = (op_type_t*)trace_realloc(*types, sizeof(op_type_t) * (*count + 1));
  op_type_t* type = &(*types)[(*count)++];
  memset(type, 0, sizeof(*type));
  type->name = name;
  return type;
}

static int compare_op_types(const void* a, const void* b) {
  return strcmp(((const op_type_t*)a)->name, ((const op_type_t*)b)->name);
}

// True when, on the zone's thread, another op's queue zone begins between
// the zone's end and |until_ns| (so the thread moved on before the signal).
static bool thread_moved_on(const trace_t* trace, const trace_event_t* zone,
                            int64_t until_ns) {
  const trace_thread_t* thread = &trace->threads[zone->thread];
  bool moved = false;
  // A zone that never ended has no end position: nothing comes after it.
  uint32_t first = zone->end_position == UINT32_MAX ? thread->event_count
                                                    : zone->end_position + 1;
  for (uint32_t p = first; p < thread->event_count && !moved; ++p) {
    const trace_event_t* event = &trace->events[thread->events[p]];
    if (event->ts_ns > until_ns) break;
    moved = event->phase == 'B' && event->has_id && event->id != zone->id &&
            strcmp(event->category, "queue") == 0;
  }
  return moved;
}

// Adds one op (its queue events, sorted by time) to its type.
static void summarize_op(const trace_t* trace, const uint32_t* events,
                         size_t count, op_type_t** types, size_t* type_count) {
  const trace_event_t* submit = NULL;
  const trace_event_t* ready = NULL;
  const trace_event_t* signal = NULL;
  const trace_event_t* first_zone = NULL;
  const trace_event_t* last_zone = NULL;  // the zone that ends last
  const trace_event_t* device = NULL;     // its time on a device track
  for (size_t i = 0; i < count; ++i) {
    const trace_event_t* event = &trace->events[events[i]];
    if (event->phase == 'X') {
      device = event;
    } else if (event->phase == 'i') {
      if (strcmp(event->name, "submit") == 0 && !submit) submit = event;
      if (strcmp(event->name, "ready") == 0 && !ready) ready = event;
      if (strcmp(event->name, "signal") == 0) signal = event;
    } else if (!is_protocol_instant(event->name)) {
      if (!first_zone) first_zone = event;
      if (!last_zone || event->end_ns > last_zone->end_ns) last_zone = event;
    }
  }
  // Neither a zone nor a submit: not an op (a stray queue instant). An op
  // that ran only on a device is named by its device zone.
  const char* name = first_zone ? first_zone->name
                     : device   ? device->name
                                : "(no zone)";
  op_type_t* type = first_zone || submit || device
                        ? find_op_type(types, type_count, name)
                        : NULL;
  if (!type) {
    first_zone = NULL;
    submit = NULL;
    ready = NULL;
    signal = NULL;
    device = NULL;
  } else {
    ++type->count;
  }
  if (type && signal && signal->has_value && signal->value == 0) {
    ++type->failed;
  }
  if (submit && ready) {
    samples_add(&type->phases[PHASE_WAIT], ready->ts_ns - submit->ts_ns);
  }
  if (type && device) {
    samples_add(&type->phases[PHASE_DEVICE], device->end_ns - device->ts_ns);
  }
  if (ready && first_zone) {
    samples_add(&type->phases[PHASE_QUEUE], first_zone->ts_ns - ready->ts_ns);
  }
  if (first_zone) {
    bool async = signal && (signal->thread != last_zone->thread ||
                            thread_moved_on(trace, last_zone, signal->ts_ns));
    if (async) {
      // The work ran on after its zone (or finished inside it, on another
      // thread): execute spans both.
      ++type->async;
      int64_t end =
          signal->ts_ns > last_zone->end_ns ? signal->ts_ns : last_zone->end_ns;
      samples_add(&type->phases[PHASE_EXECUTE], end - first_zone->ts_ns);
    } else {
      samples_add(&type->phases[PHASE_EXECUTE],
                  last_zone->end_ns - first_zone->ts_ns);
      if (signal) {
        samples_add(&type->phases[PHASE_SIGNAL],
                    signal->ts_ns - last_zone->end_ns);
      }
    }
  }
}

static void print_queue_ops(const trace_t* trace) {
  size_t count = 0;
  uint32_t* events = trace_collect_by_id(trace, is_queue_op_event, &count);
  op_type_t* types = NULL;
  size_t type_count = 0;
  for (size_t i = 0; i < count;) {
    size_t end = i;
    uint64_t id = trace->events[events[i]].id;
    while (end < count && trace->events[events[end]].id == id) ++end;
    summarize_op(trace, events + i, end - i, &types, &type_count);
    i = end;
  }
  free(events);
  if (type_count > 0) {
    qsort(types, type_count, sizeof(op_type_t), compare_op_types);
  }
  printf("\nqueue ops (category \"queue\"): latency per phase, microseconds\n");
  if (type_count == 0) {
    printf("  none (no \"queue\" events with an op id)\n");
  } else {
    printf("  %-24s %7s %7s %6s  %-8s %8s %10s %10s %10s %10s\n", "op", "count",
           "failed", "async", "phase", "samples", "p50", "p90", "p99", "max");
  }
  for (size_t t = 0; t < type_count; ++t) {
    op_type_t* type = &types[t];
    for (int phase = 0; phase < PHASE_COUNT; ++phase) {
      samples_t* samples = &type->phases[phase];
      if (phase == 0) {
        printf("  %-24s %7zu %7zu %6zu  ", type->name, type->count,
               type->failed, type->async);
      } else {
        printf("  %-24s %7s %7s %6s  ", "", "", "", "");
      }
      printf("%-8s %8zu", kPhaseNames[phase], samples->count);
      if (samples->count == 0) {
        printf(" %10s %10s %10s %10s\n", "-", "-", "-", "-");
      } else {
        qsort(samples->values, samples->count, sizeof(int64_t), compare_i64);
        printf(" %10.3f %10.3f %10.3f %10.3f\n",
               (double)samples_percentile(samples, 50) / 1000.0,
               (double)samples_percentile(samples, 90) / 1000.0,
               (double)samples_percentile(samples, 99) / 1000.0,
               (double)samples->values[samples->count - 1] / 1000.0);
      }
      free(samples->values);
    }
  }
  free(types);
}

//===----------------------------------------------------------------------===//
// Summary: threads, file I/O, semaphores
//===----------------------------------------------------------------------===//

static bool is_named(const trace_event_t* event, const char* category,
                     const char* name) {
  return (event->phase == 'B' || event->phase == 'i') &&
         strcmp(event->category, category) == 0 &&
         strcmp(event->name, name) == 0;
}

static void print_threads(const trace_t* trace) {
  int64_t span = trace->max_ns - trace->min_ns;
  printf(
      "\nthreads: busy = time inside top-level zones, less \"sleep\" "
      "zones; util = busy / trace span (%.3f ms)\n",
      (double)span / 1e6);
  printf("  %-32s %9s %12s %7s %8s %8s\n", "thread", "events", "busy ms",
         "util %", "sleeps", "wakes");
  size_t total_sleeps = 0, total_wakes = 0;
  for (uint32_t t = 0; t < trace->thread_count; ++t) {
    const trace_thread_t* thread = &trace->threads[t];
    if (thread->event_count == 0) continue;
    int64_t busy = 0;
    size_t sleeps = 0, wakes = 0;
    for (uint32_t p = 0; p < thread->event_count; ++p) {
      const trace_event_t* event = &trace->events[thread->events[p]];
      if (event->phase == 'B' && event->depth == 0) {
        busy += event->end_ns - event->ts_ns;
      }
      // Time asleep is not busy, even inside a top-level zone.
      if (event->phase == 'B' && is_named(event, "task", "sleep")) {
        busy -= event->end_ns - event->ts_ns;
      }
      sleeps += is_named(event, "task", "sleep");
      wakes += is_named(event, "task", "wake");
    }
    total_sleeps += sleeps;
    total_wakes += wakes;
    char label[160];
    trace_thread_label(trace, t, label, sizeof(label));
    printf("  %-32s %9u %12.3f %7.1f %8zu %8zu\n", label, thread->event_count,
           (double)busy / 1e6,
           span > 0 ? 100.0 * (double)busy / (double)span : 0.0, sleeps, wakes);
  }
  printf("  %-32s %9zu %12s %7s %8zu %8zu\n", "total", trace->event_count, "",
         "", total_sleeps, total_wakes);
}

typedef struct name_count_t {
  const char* name;
  size_t count;
  uint64_t bytes;
  size_t with_value;
} name_count_t;

// Counts B and i events of |category| by name (and sums their values).
static name_count_t* count_by_name(const trace_t* trace, const char* category,
                                   size_t* out_count) {
  name_count_t* names = NULL;
  size_t count = 0;
  for (size_t i = 0; i < trace->event_count; ++i) {
    const trace_event_t* event = &trace->events[i];
    if ((event->phase != 'B' && event->phase != 'i') ||
        strcmp(event->category, category) != 0) {
      continue;
    }
    size_t n = 0;
    while (n < count && strcmp(names[n].name, event->name) != 0) ++n;
    if (n == count) {
      names =
          (name_count_t*)trace_realloc(names, sizeof(name_count_t) * ++count);
      memset(&names[n], 0, sizeof(names[n]));
      names[n].name = event->name;
    }
    ++names[n].count;
    if (event->has_value) {
      names[n].bytes += event->value;
      ++names[n].with_value;
    }
  }
  *out_count = count;
  return names;
}

static void print_file_io(const trace_t* trace) {
  size_t count = 0;
  name_count_t* names = count_by_name(trace, "file", &count);
  printf("\nfile I/O (category \"file\"): bytes = sum of the events' values\n");
  if (count == 0)
    printf("  none\n");
  else
    printf("  %-24s %9s %16s\n", "event", "count", "bytes");
  // No total row: a transfer's bytes appear under its submission, its
  // completion and (thread pool) its transfer, so a sum would count them
  // two or three times.
  for (size_t i = 0; i < count; ++i) {
    printf("  %-24s %9zu %16" PRIu64 "\n", names[i].name, names[i].count,
           names[i].bytes);
  }
  free(names);
}

static void print_semaphores(const trace_t* trace) {
  size_t count = 0;
  name_count_t* names = count_by_name(trace, "semaphore", &count);
  printf("\nsemaphores (category \"semaphore\")\n");
  if (count == 0)
    printf("  none\n");
  else
    printf("  %-24s %9s\n", "event", "count");
  for (size_t i = 0; i < count; ++i) {
    printf("  %-24s %9zu\n", names[i].name, names[i].count);
  }
  free(names);
}

//===----------------------------------------------------------------------===//
// Summary: channel transfers and their overlap with compute
//===----------------------------------------------------------------------===//

typedef struct interval_t {
  int64_t begin;
  int64_t end;
} interval_t;

static int compare_intervals(const void* a, const void* b) {
  const interval_t* x = (const interval_t*)a;
  const interval_t* y = (const interval_t*)b;
  return (x->begin > y->begin) - (x->begin < y->begin);
}

// Compute: dispatch regions (block zones) on any thread, and the queue
// dispatch and execute zones of drivers that run them inline.
static bool is_compute_zone(const trace_event_t* event) {
  return event->phase == 'B' &&
         (strcmp(event->category, "block") == 0 ||
          (strcmp(event->category, "queue") == 0 &&
           (strcmp(event->name, "queue_dispatch") == 0 ||
            strcmp(event->name, "queue_execute") == 0)));
}

// The union of every compute zone, sorted and merged; |*out_count| long.
static interval_t* compute_union(const trace_t* trace, size_t* out_count) {
  interval_t* intervals = NULL;
  size_t count = 0;
  for (size_t i = 0; i < trace->event_count; ++i) {
    const trace_event_t* event = &trace->events[i];
    if (!is_compute_zone(event) || event->end_ns <= event->ts_ns) continue;
    intervals = trace_realloc(intervals, (count + 1) * sizeof(*intervals));
    intervals[count].begin = event->ts_ns;
    intervals[count].end = event->end_ns;
    ++count;
  }
  if (count) qsort(intervals, count, sizeof(*intervals), compare_intervals);
  size_t merged = 0;
  for (size_t i = 0; i < count; ++i) {
    if (merged && intervals[i].begin <= intervals[merged - 1].end) {
      if (intervals[i].end > intervals[merged - 1].end) {
        intervals[merged - 1].end = intervals[i].end;
      }
    } else {
      intervals[merged++] = intervals[i];
    }
  }
  *out_count = merged;
  return intervals;
}

// Time of [begin, end) covered by |intervals| (sorted, disjoint).
static int64_t covered(const interval_t* intervals, size_t count,
                       int64_t begin, int64_t end) {
  int64_t total = 0;
  for (size_t i = 0; i < count && intervals[i].begin < end; ++i) {
    const int64_t b = intervals[i].begin > begin ? intervals[i].begin : begin;
    const int64_t e = intervals[i].end < end ? intervals[i].end : end;
    if (e > b) total += e - b;
  }
  return total;
}

typedef struct transfer_kind_t {
  const char* name;
  size_t count;
  uint64_t bytes;
  int64_t busy_ns;
  int64_t overlap_ns;
} transfer_kind_t;

static void print_channels(const trace_t* trace) {
  transfer_kind_t kinds[16];
  size_t kind_count = 0;
  size_t compute_count = 0;
  interval_t* compute = NULL;
  bool any = false;
  for (size_t i = 0; i < trace->event_count; ++i) {
    const trace_event_t* event = &trace->events[i];
    if (event->phase != 'X' || strcmp(event->category, "channel") != 0) {
      continue;
    }
    if (!any) {
      compute = compute_union(trace, &compute_count);
      any = true;
    }
    size_t k = 0;
    while (k < kind_count && strcmp(kinds[k].name, event->name) != 0) ++k;
    if (k == kind_count) {
      if (kind_count == 16) continue;
      memset(&kinds[k], 0, sizeof(kinds[k]));
      kinds[k].name = event->name;
      ++kind_count;
    }
    kinds[k].count += 1;
    kinds[k].bytes += event->has_bytes ? event->bytes : 0;
    kinds[k].busy_ns += event->end_ns - event->ts_ns;
    kinds[k].overlap_ns +=
        covered(compute, compute_count, event->ts_ns, event->end_ns);
  }
  if (!any) return;
  printf(
      "\nchannel transfers: bytes/s = bytes / time in flight; overlap = the "
      "part of that time some thread computed (dispatch regions)\n");
  printf("  %-24s %7s %14s %12s %12s %9s\n", "op", "count", "bytes",
         "in flight ms", "MB/s", "overlap %");
  for (size_t k = 0; k < kind_count; ++k) {
    const transfer_kind_t* kind = &kinds[k];
    printf("  %-24s %7zu %14" PRIu64 " %12.3f %12.1f %9.1f\n", kind->name,
           kind->count, kind->bytes, (double)kind->busy_ns / 1e6,
           kind->busy_ns > 0 ? (double)kind->bytes / 1e6 /
                                   ((double)kind->busy_ns / 1e9)
                             : 0.0,
           kind->busy_ns > 0
               ? 100.0 * (double)kind->overlap_ns / (double)kind->busy_ns
               : 0.0);
  }
  free(compute);
}

static int run_summary(const char* path) {
  trace_t trace;
  int code = EXIT_PROBLEM;
  if (trace_load(path, &trace)) {
    size_t zones = 0, instants = 0, flows = 0;
    for (size_t i = 0; i < trace.event_count; ++i) {
      char phase = trace.events[i].phase;
      zones += phase == 'B' || phase == 'X';
      instants += phase == 'i';
      flows += phase == 's' || phase == 't' || phase == 'f';
    }
    printf("trace %s\n", path);
    printf(
        "  %zu events (%zu zones, %zu instants, %zu flow events) on %u "
        "threads over %.3f ms\n",
        trace.event_count, zones, instants, flows, trace.thread_count,
        (double)(trace.max_ns - trace.min_ns) / 1e6);
    if (trace.problem[0]) {
      printf("  warning: %s (weft-trace --check tells more)\n", trace.problem);
    }
    print_queue_ops(&trace);
    print_threads(&trace);
    print_file_io(&trace);
    print_semaphores(&trace);
    print_channels(&trace);
    code = 0;
  }
  trace_free(&trace);
  return code;
}

static int run_svg(const char* out_path, const char* path) {
  trace_t trace;
  int code = EXIT_PROBLEM;
  if (trace_load(path, &trace)) {
    FILE* file = fopen(out_path, "w");
    if (!file) {
      fprintf(stderr, "weft-trace: cannot create '%s': %s\n", out_path,
              strerror(errno));
    } else {
      bool written = trace_write_svg(&trace, file);
      if (fclose(file) != 0 && written) {
        fprintf(stderr, "weft-trace: writing '%s' failed: %s\n", out_path,
                strerror(errno));
        written = false;
      }
      if (written) {
        printf("weft-trace: wrote %s (%u threads, %zu events)\n", out_path,
               trace.thread_count, trace.event_count);
        code = 0;
      }
    }
  }
  trace_free(&trace);
  return code;
}

int main(int argc, char** argv) {
  int code = EXIT_USAGE;
  if (argc == 2 &&
      (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    print_usage(stdout);
    code = 0;
  } else if (argc == 2 && argv[1][0] != '-') {
    code = run_summary(argv[1]);
  } else if (argc == 3 && strcmp(argv[1], "--check") == 0) {
    code = run_check(argv[2]);
  } else if (argc == 3 && strcmp(argv[1], "--check-svg") == 0) {
    code = trace_check_svg(argv[2]);
  } else if (argc == 4 && strcmp(argv[1], "--svg") == 0) {
    code = run_svg(argv[2], argv[3]);
  } else {
    print_usage(stderr);
  }
  return code;
}
