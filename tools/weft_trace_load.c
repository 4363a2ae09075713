// weft-trace: loading a trace. The file is read whole and scanned (and its
// JSON syntax checked) without building a tree; each event object is then
// parsed on its own with cJSON, copied into a compact trace_event_t and
// freed, and names are interned, so memory stays near the file's size plus
// ~100 bytes per event instead of a full cJSON tree (10x the file).
#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "weft_trace.h"

void* trace_realloc(void* pointer, size_t size) {
  void* result = realloc(pointer, size ? size : 1);
  if (!result) {
    fprintf(stderr, "weft-trace: out of memory (%zu bytes)\n", size);
    exit(1);
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
    text = (char*)trace_realloc(NULL, capacity);
    size_t got = 0;
    while ((got = fread(text + length, 1, capacity - length - 1, file)) > 0) {
      length += got;
      if (capacity - length - 1 == 0) {
        capacity *= 2;
        text = (char*)trace_realloc(text, capacity);
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
      exit(1);
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
    trace->threads = (trace_thread_t*)trace_realloc(
        trace->threads, sizeof(trace_thread_t) * trace->thread_count);
    trace_thread_t* thread = &trace->threads[index];
    memset(thread, 0, sizeof(*thread));
    thread->pid = pid;
    thread->tid = tid;
    map->slots[slot] = index + 1;
  }
  return index;
}

//===----------------------------------------------------------------------===//
// Interned strings
//===----------------------------------------------------------------------===//

static uint64_t string_hash(const char* text) {
  uint64_t hash = 1469598103934665603ull;
  for (const unsigned char* c = (const unsigned char*)text; *c; ++c) {
    hash = (hash ^ *c) * 1099511628211ull;
  }
  return hash;
}

// Returns the trace's copy of |text| (made on first sight; lives until
// trace_free).
static const char* trace_intern(trace_t* trace, const char* text) {
  if (trace->string_count * 2 + 2 > trace->string_capacity) {
    uint32_t capacity =
        trace->string_capacity ? trace->string_capacity * 2 : 256;
    char** slots = (char**)trace_realloc(NULL, sizeof(char*) * capacity);
    memset(slots, 0, sizeof(char*) * capacity);
    for (uint32_t i = 0; i < trace->string_capacity; ++i) {
      if (!trace->strings[i]) continue;
      uint32_t slot =
          (uint32_t)(string_hash(trace->strings[i]) & (capacity - 1));
      while (slots[slot]) slot = (slot + 1) & (capacity - 1);
      slots[slot] = trace->strings[i];
    }
    free(trace->strings);
    trace->strings = slots;
    trace->string_capacity = capacity;
  }
  uint32_t mask = trace->string_capacity - 1;
  uint32_t slot = (uint32_t)(string_hash(text) & mask);
  while (trace->strings[slot] && strcmp(trace->strings[slot], text) != 0) {
    slot = (slot + 1) & mask;
  }
  if (!trace->strings[slot]) {
    size_t length = strlen(text) + 1;
    trace->strings[slot] = (char*)trace_realloc(NULL, length);
    memcpy(trace->strings[slot], text, length);
    ++trace->string_count;
  }
  return trace->strings[slot];
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

void trace_format_us(int64_t ns, char* buffer, size_t capacity) {
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
          trace_format_us(event->ts_ns, now, sizeof(now));
          trace_format_us(previous->ts_ns, before, sizeof(before));
          snprintf(message, sizeof(message),
                   "thread %s: event #%zu ('%c' \"%s\") at %s us is earlier "
                   "than the one before it on the thread (%s us)",
                   label, event->file_index, event->phase, event->name, now,
                   before);
          trace_problem(trace, message);
        }
      }
      event->depth = depth;
      if (event->phase == 'X') {
        // Drawn one row below the zones open around it.
        if (depth + 1 > thread->max_depth) thread->max_depth = depth + 1;
      } else if (event->phase == 'B') {
        if (depth == stack_capacity) {
          stack_capacity = stack_capacity ? stack_capacity * 2 : 64;
          stack = (uint32_t*)trace_realloc(stack,
                                           sizeof(uint32_t) * stack_capacity);
        }
        stack[depth++] = thread->events[p];
        if (depth > thread->max_depth) thread->max_depth = depth;
      } else if (event->phase == 'E') {
        if (depth == 0) {
          char at[32];
          trace_format_us(event->ts_ns, at, sizeof(at));
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

//===----------------------------------------------------------------------===//
// Scanning the JSON text
//===----------------------------------------------------------------------===//

// Nesting deeper than this is refused (the scanner recurses).
#define JSON_MAX_DEPTH 256

typedef struct json_scanner_t {
  const char* text;
  size_t length;
  size_t position;
  const char* error;  // the first syntax problem (a static string)
} json_scanner_t;

static bool json_fail(json_scanner_t* scanner, const char* error) {
  if (!scanner->error) scanner->error = error;
  return false;
}

static char json_peek(const json_scanner_t* scanner) {
  return scanner->position < scanner->length ? scanner->text[scanner->position]
                                             : '\0';
}

static void json_skip_space(json_scanner_t* scanner) {
  while (scanner->position < scanner->length &&
         (json_peek(scanner) == ' ' || json_peek(scanner) == '\t' ||
          json_peek(scanner) == '\n' || json_peek(scanner) == '\r')) {
    ++scanner->position;
  }
}

static bool json_is_digit(char c) { return c >= '0' && c <= '9'; }

static bool json_is_hex(char c) {
  return json_is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// Moves past the string at the cursor ('"'), checking its escapes.
static bool json_skip_string(json_scanner_t* scanner) {
  bool ok = true;
  bool closed = false;
  ++scanner->position;  // '"'
  while (ok && !closed && scanner->position < scanner->length) {
    unsigned char c = (unsigned char)json_peek(scanner);
    ++scanner->position;
    if (c == '"') {
      closed = true;
    } else if (c < 0x20) {
      ok = json_fail(scanner, "a control character inside a string");
    } else if (c == '\\') {
      char escape = json_peek(scanner);
      ++scanner->position;
      if (escape == 'u') {
        for (int i = 0; ok && i < 4; ++i, ++scanner->position) {
          if (!json_is_hex(json_peek(scanner))) {
            ok = json_fail(scanner, "a \\u escape without 4 hex digits");
          }
        }
      } else if (!escape || !strchr("\"\\/bfnrt", escape)) {
        ok = json_fail(scanner, "an unknown escape in a string");
      }
    }
  }
  if (ok && !closed) ok = json_fail(scanner, "a string that never ends");
  return ok;
}

static bool json_skip_digits(json_scanner_t* scanner) {
  size_t start = scanner->position;
  while (json_is_digit(json_peek(scanner))) ++scanner->position;
  return scanner->position > start;
}

static bool json_skip_number(json_scanner_t* scanner) {
  bool ok = true;
  if (json_peek(scanner) == '-') ++scanner->position;
  if (json_peek(scanner) == '0') {
    ++scanner->position;
  } else {
    ok = json_skip_digits(scanner);
  }
  if (ok && json_peek(scanner) == '.') {
    ++scanner->position;
    ok = json_skip_digits(scanner);
  }
  if (ok && (json_peek(scanner) == 'e' || json_peek(scanner) == 'E')) {
    ++scanner->position;
    if (json_peek(scanner) == '+' || json_peek(scanner) == '-') {
      ++scanner->position;
    }
    ok = json_skip_digits(scanner);
  }
  return ok ? true : json_fail(scanner, "a malformed number");
}

static bool json_skip_literal(json_scanner_t* scanner, const char* literal) {
  size_t length = strlen(literal);
  bool ok = scanner->position + length <= scanner->length &&
            memcmp(scanner->text + scanner->position, literal, length) == 0;
  if (ok) {
    scanner->position += length;
  } else {
    json_fail(scanner, "an unknown word (not true, false or null)");
  }
  return ok;
}

static bool json_skip_value(json_scanner_t* scanner, int depth);

// Moves past the object or array at the cursor ('{' or '[').
static bool json_skip_container(json_scanner_t* scanner, int depth) {
  char close = json_peek(scanner) == '{' ? '}' : ']';
  bool object = close == '}';
  bool ok =
      depth < JSON_MAX_DEPTH || json_fail(scanner, "values nested too deeply");
  if (ok) ++scanner->position;
  json_skip_space(scanner);
  bool done = ok && json_peek(scanner) == close;
  if (done) ++scanner->position;
  while (ok && !done) {
    json_skip_space(scanner);
    if (object) {
      ok = json_peek(scanner) == '"'
               ? json_skip_string(scanner)
               : json_fail(scanner, "an object key that is not a string");
      json_skip_space(scanner);
      if (ok) {
        ok = json_peek(scanner) == ':' ||
             json_fail(scanner, "a missing ':' after an object key");
        ++scanner->position;
      }
    }
    if (ok) ok = json_skip_value(scanner, depth + 1);
    json_skip_space(scanner);
    if (ok && json_peek(scanner) == ',') {
      ++scanner->position;
    } else if (ok && json_peek(scanner) == close) {
      ++scanner->position;
      done = true;
    } else if (ok) {
      ok = json_fail(scanner, object ? "a missing ',' or '}' in an object"
                                     : "a missing ',' or ']' in an array");
    }
  }
  return ok;
}

static bool json_skip_value(json_scanner_t* scanner, int depth) {
  json_skip_space(scanner);
  char c = json_peek(scanner);
  bool ok = false;
  if (c == '{' || c == '[') {
    ok = json_skip_container(scanner, depth);
  } else if (c == '"') {
    ok = json_skip_string(scanner);
  } else if (c == '-' || json_is_digit(c)) {
    ok = json_skip_number(scanner);
  } else if (c == 't') {
    ok = json_skip_literal(scanner, "true");
  } else if (c == 'f') {
    ok = json_skip_literal(scanner, "false");
  } else if (c == 'n') {
    ok = json_skip_literal(scanner, "null");
  } else {
    ok = json_fail(scanner, c ? "a character that starts no value"
                              : "the text ends where a value should be");
  }
  return ok;
}

//===----------------------------------------------------------------------===//
// Events
//===----------------------------------------------------------------------===//

typedef struct trace_loader_t {
  trace_t* trace;
  thread_map_t map;
  size_t event_capacity;
  size_t index;  // position in the file's event array
} trace_loader_t;

// Adds the event object |item| (event #loader->index). False, with a
// message, when it is not an event.
static bool trace_add_event(trace_loader_t* loader, const cJSON* item) {
  trace_t* trace = loader->trace;
  const char* phase = json_string(item, "ph");
  const cJSON* pid = cJSON_GetObjectItemCaseSensitive(item, "pid");
  const cJSON* tid = cJSON_GetObjectItemCaseSensitive(item, "tid");
  const cJSON* ts = cJSON_GetObjectItemCaseSensitive(item, "ts");
  double pid_value = cJSON_IsNumber(pid) ? pid->valuedouble : 0.0;
  bool ok = true;
  if (!cJSON_IsObject(item) || !phase || !phase[0]) {
    fprintf(stderr,
            "weft-trace: '%s': event #%zu has no \"ph\" (phase) string\n",
            trace->path, loader->index);
    ok = false;
  } else if (phase[0] == 'M') {
    const char* name = json_string(item, "name");
    const cJSON* args = cJSON_GetObjectItemCaseSensitive(item, "args");
    const char* thread_name = json_string(args, "name");
    if (name && strcmp(name, "thread_name") == 0 && thread_name &&
        cJSON_IsNumber(tid)) {
      uint32_t t =
          trace_find_thread(trace, &loader->map, pid_value, tid->valuedouble);
      trace->threads[t].name = trace_intern(trace, thread_name);
      const cJSON* dropped =
          cJSON_GetObjectItemCaseSensitive(args, "dropped_events");
      if (cJSON_IsNumber(dropped) && dropped->valuedouble > 0) {
        trace->dropped_events += (uint64_t)dropped->valuedouble;
      }
    }
  } else if (!cJSON_IsNumber(ts) || !cJSON_IsNumber(tid)) {
    fprintf(stderr,
            "weft-trace: '%s': event #%zu ('%s' \"%s\") has no numeric "
            "\"%s\"\n",
            trace->path, loader->index, phase,
            json_string_or_empty(item, "name"),
            !cJSON_IsNumber(ts) ? "ts" : "tid");
    ok = false;
  } else {
    if (trace->event_count == loader->event_capacity) {
      loader->event_capacity =
          loader->event_capacity ? loader->event_capacity * 2 : 4096;
      trace->events = (trace_event_t*)trace_realloc(
          trace->events, sizeof(trace_event_t) * loader->event_capacity);
    }
    trace_event_t* event = &trace->events[trace->event_count];
    memset(event, 0, sizeof(*event));
    event->phase = phase[0] == 'I' ? 'i' : phase[0];
    event->ts_ns = llround(ts->valuedouble * 1000.0);
    event->category = trace_intern(trace, json_string_or_empty(item, "cat"));
    event->name = trace_intern(trace, json_string_or_empty(item, "name"));
    event->file_index = loader->index;
    event->end_position = UINT32_MAX;
    const cJSON* args = cJSON_GetObjectItemCaseSensitive(item, "args");
    bool is_flow =
        event->phase == 's' || event->phase == 't' || event->phase == 'f';
    event->has_id = json_u64(is_flow ? item : args, "id", &event->id);
    event->has_value = json_u64(args, "value", &event->value);
    event->has_bytes = json_u64(args, "bytes", &event->bytes);
    uint64_t peer = 0;
    event->peer = json_u64(args, "peer", &peer) ? (int64_t)peer : -1;
    if (event->phase == 'X') {
      // A zone given whole (a device's time on a track): its end is known.
      const cJSON* dur = cJSON_GetObjectItemCaseSensitive(item, "dur");
      const int64_t duration_ns =
          cJSON_IsNumber(dur) && dur->valuedouble > 0.0
              ? llround(dur->valuedouble * 1000.0)
              : 0;
      event->end_ns = event->ts_ns + duration_ns;
    }
    uint32_t t =
        trace_find_thread(trace, &loader->map, pid_value, tid->valuedouble);
    trace_thread_t* thread = &trace->threads[t];
    if (thread->event_count == thread->event_capacity) {
      thread->event_capacity =
          thread->event_capacity ? thread->event_capacity * 2 : 256;
      thread->events = (uint32_t*)trace_realloc(
          thread->events, sizeof(uint32_t) * thread->event_capacity);
    }
    event->thread = t;
    event->position = thread->event_count;
    thread->events[thread->event_count++] = (uint32_t)trace->event_count;
    if (trace->event_count == 0 || event->ts_ns < trace->min_ns) {
      trace->min_ns = event->ts_ns;
    }
    const int64_t last_ns = event->phase == 'X' ? event->end_ns : event->ts_ns;
    if (trace->event_count == 0 || last_ns > trace->max_ns) {
      trace->max_ns = last_ns;
    }
    ++trace->event_count;
  }
  return ok;
}

// Scans the event array at the cursor ('['), adding each element.
static bool trace_load_events(trace_loader_t* loader, json_scanner_t* scanner) {
  ++scanner->position;  // '['
  json_skip_space(scanner);
  bool done = json_peek(scanner) == ']';
  if (done) ++scanner->position;
  bool ok = true;
  while (ok && !done) {
    json_skip_space(scanner);
    size_t start = scanner->position;
    ok = json_skip_value(scanner, 1);
    if (ok) {
      cJSON* item = cJSON_ParseWithLength(scanner->text + start,
                                          scanner->position - start);
      // The scanner accepted it, so only memory can make this fail.
      ok = item ? trace_add_event(loader, item)
                : json_fail(scanner, "an event cJSON could not parse");
      cJSON_Delete(item);
      ++loader->index;
    }
    json_skip_space(scanner);
    if (ok && json_peek(scanner) == ',') {
      ++scanner->position;
    } else if (ok && json_peek(scanner) == ']') {
      ++scanner->position;
      done = true;
    } else if (ok) {
      ok = json_fail(scanner, "a missing ',' or ']' in the event array");
    }
  }
  return ok;
}

// Scans the whole document: a top-level event array, or an object whose
// "traceEvents" member is one (other members are only checked).
static bool trace_scan(trace_loader_t* loader, json_scanner_t* scanner,
                       bool* out_found) {
  *out_found = false;
  json_skip_space(scanner);
  bool ok = true;
  if (json_peek(scanner) == '[') {
    *out_found = true;
    ok = trace_load_events(loader, scanner);
  } else if (json_peek(scanner) == '{') {
    ++scanner->position;
    json_skip_space(scanner);
    bool done = json_peek(scanner) == '}';
    if (done) ++scanner->position;
    while (ok && !done) {
      json_skip_space(scanner);
      size_t key_start = scanner->position;
      ok = json_peek(scanner) == '"'
               ? json_skip_string(scanner)
               : json_fail(scanner, "an object key that is not a string");
      bool is_events =
          ok && scanner->position - key_start == strlen("\"traceEvents\"") &&
          memcmp(scanner->text + key_start, "\"traceEvents\"",
                 strlen("\"traceEvents\"")) == 0;
      json_skip_space(scanner);
      if (ok) {
        ok = json_peek(scanner) == ':' ||
             json_fail(scanner, "a missing ':' after an object key");
        ++scanner->position;
        json_skip_space(scanner);
      }
      if (ok && is_events && json_peek(scanner) == '[') {
        *out_found = true;
        ok = trace_load_events(loader, scanner);
      } else if (ok) {
        ok = json_skip_value(scanner, 1);
      }
      json_skip_space(scanner);
      if (ok && json_peek(scanner) == ',') {
        ++scanner->position;
      } else if (ok && json_peek(scanner) == '}') {
        ++scanner->position;
        done = true;
      } else if (ok) {
        ok = json_fail(scanner, "a missing ',' or '}' in an object");
      }
    }
  } else {
    ok = json_skip_value(scanner, 0);
  }
  json_skip_space(scanner);
  if (ok && scanner->position != scanner->length) {
    ok = json_fail(scanner, "more text after the JSON value");
  }
  return ok;
}

bool trace_load(const char* path, trace_t* trace) {
  memset(trace, 0, sizeof(*trace));
  trace->path = path;
  size_t length = 0;
  char* text = trace_read_file(path, &length);
  bool ok = text != NULL;
  trace_loader_t loader = {.trace = trace};
  json_scanner_t scanner = {.text = text, .length = length};
  bool found = false;
  if (ok) {
    ok = trace_scan(&loader, &scanner, &found);
    if (!ok && scanner.error) {
      size_t line = 1, column = 1;
      for (size_t i = 0; i < scanner.position && i < length; ++i) {
        if (text[i] == '\n') {
          ++line;
          column = 1;
        } else {
          ++column;
        }
      }
      fprintf(stderr,
              "weft-trace: '%s' is not valid JSON: %s at line %zu, column "
              "%zu (byte %zu)\n",
              path, scanner.error, line, column, scanner.position);
    }
  }
  if (ok && !found) {
    fprintf(stderr,
            "weft-trace: '%s' has no event array (neither a top-level array "
            "nor an object with \"traceEvents\")\n",
            path);
    ok = false;
  }
  free(text);
  free(loader.map.slots);
  if (ok) trace_match_zones(trace);
  return ok;
}

void trace_free(trace_t* trace) {
  for (uint32_t t = 0; t < trace->thread_count; ++t) {
    free(trace->threads[t].events);
  }
  free(trace->threads);
  free(trace->events);
  for (uint32_t i = 0; i < trace->string_capacity; ++i) {
    free(trace->strings[i]);
  }
  free(trace->strings);
}
