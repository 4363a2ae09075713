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
// begin - ready, execute = the zone's length, signal = signal - zone end.
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
// Loading
//===----------------------------------------------------------------------===//

static void* checked_realloc(void* pointer, size_t size) {
  void* result = realloc(pointer, size ? size : 1);
  if (!result) {
    fprintf(stderr, "weft-trace: out of memory (%zu bytes)\n", size);
    exit(EXIT_PROBLEM);
  }
  return result;
}

char* trace_read_file(const char* path, size_t* out_length) {
  char* text = NULL;
  size_t length = 0;
  FILE* file = fopen(path, "rb");
  if (!file) {
    fprintf(stderr, "weft-trace: cannot open '%s': %s\n", path,
            strerror(errno));
  } else {
    size_t capacity = 1 << 16;
    text = (char*)checked_realloc(NULL, capacity);
    size_t got = 0;
    while ((got = fread(text + length, 1, capacity - length - 1, file)) > 0) {
      length += got;
      if (capacity - length - 1 == 0) {
        capacity *= 2;
        text = (char*)checked_realloc(text, capacity);
      }
    }
    if (ferror(file)) {
      fprintf(stderr, "weft-trace: reading '%s' failed: %s\n", path,
              strerror(errno));
      free(text);
      text = NULL;
    } else {
      text[length] = '\0';
    }
    fclose(file);
  }
  *out_length = length;
  return text;
}

typedef struct thread_map_t {
  uint32_t* slots;  // thread index + 1; 0 empty
  uint32_t capacity;
} thread_map_t;

static uint64_t thread_key_hash(double pid, double tid) {
  uint64_t h = (uint64_t)(int64_t)pid * 0x9E3779B97F4A7C15ull;
  h ^= (uint64_t)(int64_t)tid + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
  return h * 0xBF58476D1CE4E5B9ull;
}

// Finds or adds the thread (pid, tid).
static uint32_t trace_find_thread(trace_t* trace, thread_map_t* map, double pid,
                                  double tid) {
  if ((trace->thread_count + 1) * 2 > map->capacity) {
    uint32_t capacity = map->capacity ? map->capacity * 2 : 64;
    uint32_t* slots = (uint32_t*)calloc(capacity, sizeof(uint32_t));
    if (!slots) {
      fprintf(stderr, "weft-trace: out of memory\n");
      exit(EXIT_PROBLEM);
    }
    for (uint32_t i = 0; i < trace->thread_count; ++i) {
      const trace_thread_t* thread = &trace->threads[i];
      uint64_t h = thread_key_hash(thread->pid, thread->tid);
      uint32_t slot = (uint32_t)(h & (capacity - 1));
      while (slots[slot]) slot = (slot + 1) & (capacity - 1);
      slots[slot] = i + 1;
    }
    free(map->slots);
    map->slots = slots;
    map->capacity = capacity;
  }
  uint64_t h = thread_key_hash(pid, tid);
  uint32_t slot = (uint32_t)(h & (map->capacity - 1));
  uint32_t index = UINT32_MAX;
  while (map->slots[slot] && index == UINT32_MAX) {
    const trace_thread_t* thread = &trace->threads[map->slots[slot] - 1];
    if (thread->pid == pid && thread->tid == tid) {
      index = map->slots[slot] - 1;
    } else {
      slot = (slot + 1) & (map->capacity - 1);
    }
  }
  if (index == UINT32_MAX) {
    index = trace->thread_count++;
    trace->threads = (trace_thread_t*)checked_realloc(
        trace->threads, sizeof(trace_thread_t) * trace->thread_count);
    trace_thread_t* thread = &trace->threads[index];
    memset(thread, 0, sizeof(*thread));
    thread->pid = pid;
    thread->tid = tid;
    map->slots[slot] = index + 1;
  }
  return index;
}

static const char* json_string(const cJSON* object, const char* key) {
  const cJSON* item = cJSON_GetObjectItemCaseSensitive(object, key);
  return cJSON_IsString(item) && item->valuestring ? item->valuestring : NULL;
}

static const char* json_string_or_empty(const cJSON* object, const char* key) {
  const char* value = json_string(object, key);
  return value ? value : "";
}

// Reads an unsigned integer given as a number or a string ("12", "0x1f").
static bool json_u64(const cJSON* object, const char* key,
                     uint64_t* out_value) {
  const cJSON* item = cJSON_GetObjectItemCaseSensitive(object, key);
  bool found = false;
  if (cJSON_IsNumber(item) && item->valuedouble >= 0) {
    *out_value = (uint64_t)item->valuedouble;
    found = true;
  } else if (cJSON_IsString(item) && item->valuestring) {
    char* end = NULL;
    errno = 0;
    unsigned long long value = strtoull(item->valuestring, &end, 0);
    if (errno == 0 && end != item->valuestring && *end == '\0') {
      *out_value = (uint64_t)value;
      found = true;
    }
  }
  return found;
}

void trace_thread_label(const trace_t* trace, uint32_t thread, char* buffer,
                        size_t capacity) {
  const trace_thread_t* t = &trace->threads[thread];
  if (t->name) {
    snprintf(buffer, capacity, "%s (tid %.0f)", t->name, t->tid);
  } else {
    snprintf(buffer, capacity, "tid %.0f", t->tid);
  }
}

static void format_us(int64_t ns, char* buffer, size_t capacity) {
  snprintf(buffer, capacity, "%.3f", (double)ns / 1000.0);
}

// Records |message| as the trace's first problem (later ones are dropped).
static void trace_problem(trace_t* trace, const char* message) {
  if (!trace->problem[0]) {
    snprintf(trace->problem, sizeof(trace->problem), "%s", message);
  }
}

// Matches zones per thread (end times, depths) and notes the first problem:
// a timestamp going back, an END with no open zone, zones never ended.
static void trace_match_zones(trace_t* trace) {
  uint32_t* stack = NULL;
  uint32_t stack_capacity = 0;
  for (uint32_t t = 0; t < trace->thread_count; ++t) {
    trace_thread_t* thread = &trace->threads[t];
    uint32_t depth = 0;
    char label[160];
    trace_thread_label(trace, t, label, sizeof(label));
    for (uint32_t p = 0; p < thread->event_count; ++p) {
      trace_event_t* event = &trace->events[thread->events[p]];
      char message[512];
      if (p > 0) {
        const trace_event_t* previous = &trace->events[thread->events[p - 1]];
        if (event->ts_ns < previous->ts_ns) {
          char now[32], before[32];
          format_us(event->ts_ns, now, sizeof(now));
          format_us(previous->ts_ns, before, sizeof(before));
          snprintf(message, sizeof(message),
                   "thread %s: event #%zu ('%c' \"%s\") at %s us is earlier "
                   "than the one before it on the thread (%s us)",
                   label, event->file_index, event->phase, event->name, now,
                   before);
          trace_problem(trace, message);
        }
      }
      event->depth = depth;
      if (event->phase == 'B') {
        if (depth == stack_capacity) {
          stack_capacity = stack_capacity ? stack_capacity * 2 : 64;
          stack = (uint32_t*)checked_realloc(stack,
                                             sizeof(uint32_t) * stack_capacity);
        }
        stack[depth++] = thread->events[p];
        if (depth > thread->max_depth) thread->max_depth = depth;
      } else if (event->phase == 'E') {
        if (depth == 0) {
          char at[32];
          format_us(event->ts_ns, at, sizeof(at));
          snprintf(message, sizeof(message),
                   "thread %s: event #%zu is an END at %s us with no zone "
                   "open",
                   label, event->file_index, at);
          trace_problem(trace, message);
        } else {
          trace_event_t* begin = &trace->events[stack[--depth]];
          begin->end_ns = event->ts_ns;
          begin->end_position = p;
          event->depth = depth;
        }
      }
    }
    int64_t last =
        thread->event_count > 0
            ? trace->events[thread->events[thread->event_count - 1]].ts_ns
            : 0;
    if (depth > 0) {
      const trace_event_t* open = &trace->events[stack[depth - 1]];
      char message[512];
      snprintf(message, sizeof(message),
               "thread %s: %u zone%s never end%s (the innermost: \"%s\", "
               "event #%zu)",
               label, depth, depth == 1 ? "" : "s", depth == 1 ? "s" : "",
               open->name, open->file_index);
      trace_problem(trace, message);
    }
    while (depth > 0) {
      trace_event_t* begin = &trace->events[stack[--depth]];
      begin->end_ns = last;
      begin->end_position = UINT32_MAX;
    }
  }
  free(stack);
}

// Loads |path|. Returns false (with a message) when it cannot be read or is
// not a trace: not JSON, no event array, an event without "ph", a timed
// event without a numeric "ts" or "tid".
static bool trace_load(const char* path, trace_t* trace) {
  memset(trace, 0, sizeof(*trace));
  trace->path = path;
  size_t length = 0;
  char* text = trace_read_file(path, &length);
  bool ok = text != NULL;
  if (ok) {
    trace->root = cJSON_ParseWithLength(text, length);
    if (!trace->root) {
      const char* where = cJSON_GetErrorPtr();
      size_t offset = where && where >= text && where <= text + length
                          ? (size_t)(where - text)
                          : 0;
      fprintf(stderr,
              "weft-trace: '%s' is not valid JSON (the parser stopped at "
              "byte %zu: \"%.32s\")\n",
              path, offset, where ? where : "");
      ok = false;
    }
  }
  free(text);
  const cJSON* array = NULL;
  if (ok) {
    array = cJSON_IsArray(trace->root)
                ? trace->root
                : cJSON_GetObjectItemCaseSensitive(trace->root, "traceEvents");
    if (!cJSON_IsArray(array)) {
      fprintf(stderr,
              "weft-trace: '%s' has no event array (neither a top-level "
              "array nor an object with \"traceEvents\")\n",
              path);
      ok = false;
    }
  }
  thread_map_t map = {0};
  size_t capacity = 0;
  size_t index = 0;
  const cJSON* item = NULL;
  if (ok) {
    cJSON_ArrayForEach(item, array) {
      const char* phase = json_string(item, "ph");
      if (!cJSON_IsObject(item) || !phase || !phase[0]) {
        fprintf(stderr,
                "weft-trace: '%s': event #%zu has no \"ph\" (phase) string\n",
                path, index);
        ok = false;
        break;
      }
      const cJSON* pid = cJSON_GetObjectItemCaseSensitive(item, "pid");
      const cJSON* tid = cJSON_GetObjectItemCaseSensitive(item, "tid");
      const cJSON* ts = cJSON_GetObjectItemCaseSensitive(item, "ts");
      double pid_value = cJSON_IsNumber(pid) ? pid->valuedouble : 0.0;
      if (phase[0] == 'M') {
        const char* name = json_string(item, "name");
        const cJSON* args = cJSON_GetObjectItemCaseSensitive(item, "args");
        const char* thread_name = json_string(args, "name");
        if (name && strcmp(name, "thread_name") == 0 && thread_name &&
            cJSON_IsNumber(tid)) {
          uint32_t t =
              trace_find_thread(trace, &map, pid_value, tid->valuedouble);
          trace->threads[t].name = thread_name;
        }
        ++index;
        continue;
      }
      if (!cJSON_IsNumber(ts) || !cJSON_IsNumber(tid)) {
        fprintf(stderr,
                "weft-trace: '%s': event #%zu ('%s' \"%s\") has no numeric "
                "\"%s\"\n",
                path, index, phase, json_string_or_empty(item, "name"),
                !cJSON_IsNumber(ts) ? "ts" : "tid");
        ok = false;
        break;
      }
      if (trace->event_count == capacity) {
        capacity = capacity ? capacity * 2 : 4096;
        trace->events = (trace_event_t*)checked_realloc(
            trace->events, sizeof(trace_event_t) * capacity);
      }
      trace_event_t* event = &trace->events[trace->event_count];
      memset(event, 0, sizeof(*event));
      event->phase = phase[0] == 'I' ? 'i' : phase[0];
      event->ts_ns = llround(ts->valuedouble * 1000.0);
      event->category = json_string_or_empty(item, "cat");
      event->name = json_string_or_empty(item, "name");
      event->file_index = index;
      event->end_position = UINT32_MAX;
      const cJSON* args = cJSON_GetObjectItemCaseSensitive(item, "args");
      bool is_flow =
          event->phase == 's' || event->phase == 't' || event->phase == 'f';
      event->has_id = json_u64(is_flow ? item : args, "id", &event->id);
      event->has_value = json_u64(args, "value", &event->value);
      uint32_t t = trace_find_thread(trace, &map, pid_value, tid->valuedouble);
      trace_thread_t* thread = &trace->threads[t];
      if (thread->event_count == thread->event_capacity) {
        thread->event_capacity =
            thread->event_capacity ? thread->event_capacity * 2 : 256;
        thread->events = (uint32_t*)checked_realloc(
            thread->events, sizeof(uint32_t) * thread->event_capacity);
      }
      event->thread = t;
      event->position = thread->event_count;
      thread->events[thread->event_count++] = (uint32_t)trace->event_count;
      if (trace->event_count == 0 || event->ts_ns < trace->min_ns) {
        trace->min_ns = event->ts_ns;
      }
      if (trace->event_count == 0 || event->ts_ns > trace->max_ns) {
        trace->max_ns = event->ts_ns;
      }
      ++trace->event_count;
      ++index;
    }
  }
  free(map.slots);
  if (ok) trace_match_zones(trace);
  return ok;
}

static void trace_free(trace_t* trace) {
  for (uint32_t t = 0; t < trace->thread_count; ++t) {
    free(trace->threads[t].events);
  }
  free(trace->threads);
  free(trace->events);
  cJSON_Delete(trace->root);
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
      (uint32_t*)checked_realloc(NULL, sizeof(uint32_t) * trace->event_count);
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
static bool check_flows(const trace_t* trace, size_t* out_flow_count) {
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
    if (starts != 1 || ends != 1) {
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
          format_us(event->ts_ns, at, sizeof(at));
          format_us(start->ts_ns, started, sizeof(started));
          snprintf(problem, sizeof(problem),
                   "has event #%zu ('%c') at %s us, before its start (%s us)",
                   event->file_index, event->phase, at, started);
        } else if (event->ts_ns > finish->ts_ns) {
          char at[32], ended[32];
          format_us(event->ts_ns, at, sizeof(at));
          format_us(finish->ts_ns, ended, sizeof(ended));
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
  return ok;
}

static int run_check(const char* path) {
  trace_t trace;
  int code = EXIT_PROBLEM;
  if (trace_load(path, &trace)) {
    size_t flow_count = 0;
    if (trace.problem[0]) {
      fprintf(stderr, "weft-trace: '%s': %s\n", path, trace.problem);
    } else if (check_flows(&trace, &flow_count)) {
      size_t zones = 0;
      for (size_t i = 0; i < trace.event_count; ++i) {
        zones += trace.events[i].phase == 'B';
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
  PHASE_COUNT,
};
static const char* const kPhaseNames[PHASE_COUNT] = {"wait", "queue", "execute",
                                                     "signal"};

typedef struct samples_t {
  int64_t* values;
  size_t count;
  size_t capacity;
} samples_t;

static void samples_add(samples_t* samples, int64_t value) {
  if (samples->count == samples->capacity) {
    samples->capacity = samples->capacity ? samples->capacity * 2 : 64;
    samples->values = (int64_t*)checked_realloc(
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
         (event->phase == 'B' || event->phase == 'i');
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
  *types =
      (op_type_t*)checked_realloc(*types, sizeof(op_type_t) * (*count + 1));
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
  for (size_t i = 0; i < count; ++i) {
    const trace_event_t* event = &trace->events[events[i]];
    if (event->phase == 'i') {
      if (strcmp(event->name, "submit") == 0 && !submit) submit = event;
      if (strcmp(event->name, "ready") == 0 && !ready) ready = event;
      if (strcmp(event->name, "signal") == 0) signal = event;
    } else if (!is_protocol_instant(event->name)) {
      if (!first_zone) first_zone = event;
      if (!last_zone || event->end_ns > last_zone->end_ns) last_zone = event;
    }
  }
  // Neither a zone nor a submit: not an op (a stray queue instant).
  op_type_t* type =
      first_zone || submit
          ? find_op_type(types, type_count,
                         first_zone ? first_zone->name : "(no zone)")
          : NULL;
  if (!type) {
    first_zone = NULL;
    submit = NULL;
    ready = NULL;
    signal = NULL;
  } else {
    ++type->count;
  }
  if (type && signal && signal->has_value && signal->value == 0) {
    ++type->failed;
  }
  if (submit && ready) {
    samples_add(&type->phases[PHASE_WAIT], ready->ts_ns - submit->ts_ns);
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
          (name_count_t*)checked_realloc(names, sizeof(name_count_t) * ++count);
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
  size_t total = 0;
  uint64_t total_bytes = 0;
  for (size_t i = 0; i < count; ++i) {
    printf("  %-24s %9zu %16" PRIu64 "\n", names[i].name, names[i].count,
           names[i].bytes);
    total += names[i].count;
    total_bytes += names[i].bytes;
  }
  if (count > 1) {
    printf("  %-24s %9zu %16" PRIu64 "\n", "total", total, total_bytes);
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

static int run_summary(const char* path) {
  trace_t trace;
  int code = EXIT_PROBLEM;
  if (trace_load(path, &trace)) {
    size_t zones = 0, instants = 0, flows = 0;
    for (size_t i = 0; i < trace.event_count; ++i) {
      char phase = trace.events[i].phase;
      zones += phase == 'B';
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
