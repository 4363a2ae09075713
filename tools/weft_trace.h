// weft-trace: the trace model shared by its parts (loading in
// weft_trace_load.c; checking and summarising in weft_trace.c; the SVG
// timeline and the SVG checker in weft_trace_svg.c).
#ifndef WEFT_TOOLS_WEFT_TRACE_H_
#define WEFT_TOOLS_WEFT_TRACE_H_

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

// One trace event (metadata events are folded into the threads).
typedef struct trace_event_t {
  char phase;  // 'B', 'E', 'X', 'i', 's', 't', 'f' (or another letter)
  int64_t ts_ns;         // "ts" (microseconds) in nanoseconds
  uint32_t thread;       // index into trace_t.threads
  uint32_t position;     // index into its thread's event list
  const char* category;  // "" when absent (points into the JSON tree)
  const char* name;      // "" when absent
  uint64_t id;           // flows: "id"; others: args.id
  uint64_t value;        // args.value
  bool has_id;
  bool has_value;
  // Transfers (channel ops): args.bytes and args.peer (-1 when absent).
  uint64_t bytes;
  int64_t peer;
  bool has_bytes;
  // Zones (B): the matching E's time and position in the thread (the
  // thread's last time and UINT32_MAX when it never ends); the number of
  // zones open around it. Instants: the number of zones open around them.
  // Complete zones (X): "ts" + "dur", no position.
  int64_t end_ns;
  uint32_t end_position;
  uint32_t depth;
  size_t file_index;  // position in the file's event array
} trace_event_t;

typedef struct trace_thread_t {
  double pid;
  double tid;
  const char* name;  // from thread_name metadata, or NULL
  uint32_t* events;  // indices into trace_t.events, in file order
  uint32_t event_count;
  uint32_t event_capacity;
  uint32_t max_depth;  // deepest nesting of zones
} trace_thread_t;

typedef struct trace_t {
  const char* path;
  // Interned strings (names, categories): an open-addressing table.
  char** strings;
  uint32_t string_count;
  uint32_t string_capacity;
  trace_event_t* events;
  size_t event_count;
  trace_thread_t* threads;
  uint32_t thread_count;
  // Events the recorder dropped (its per-thread limit), from the threads'
  // metadata: flows cut short by them are not a problem.
  uint64_t dropped_events;
  int64_t min_ns;  // earliest and latest event time (0, 0: none)
  int64_t max_ns;
  // Problems found while matching zones, for --check: the first unmatched
  // END and the first thread left with open zones.
  char problem[512];
} trace_t;

// Loads |path| into |trace| (which trace_free then releases, whatever the
// result). Returns false, with a message on stderr, when the file cannot be
// read or is not a trace: not valid JSON, no event array, an event without
// "ph", a timed event without a numeric "ts" or "tid". Problems of order and
// balance are noted in |trace->problem| (for --check), not failures.
bool trace_load(const char* path, trace_t* trace);

// Frees what trace_load allocated.
void trace_free(trace_t* trace);

// realloc that exits the tool (status 1, with a message) when memory runs
// out; a zero size allocates one byte.
void* trace_realloc(void* pointer, size_t size);

// Formats |ns| as microseconds with three decimals.
void trace_format_us(int64_t ns, char* buffer, size_t capacity);

// Reads the whole of |path| (NUL-terminated; its length without the NUL in
// |out_length|). NULL, with a message on stderr, when it cannot be read.
// The caller frees the text.
char* trace_read_file(const char* path, size_t* out_length);

// Prints a thread's label ("name (tid N)") into |buffer|.
void trace_thread_label(const trace_t* trace, uint32_t thread, char* buffer,
                        size_t capacity);

typedef bool (*trace_event_filter_fn_t)(const trace_event_t* event);

// The indices of the events |filter| keeps, sorted by id, then time, then
// file position. The caller frees the array.
uint32_t* trace_collect_by_id(const trace_t* trace,
                              trace_event_filter_fn_t filter,
                              size_t* out_count);

// True for flow events ('s', 't', 'f').
bool trace_is_flow_event(const trace_event_t* event);

// Writes the timeline picture of |trace| to |file|. Returns false (with a
// message on stderr) when writing fails.
bool trace_write_svg(const trace_t* trace, FILE* file);

// Checks that |path| holds a well-formed standalone SVG document with at
// least one <rect>; prints the first problem (or a summary) and returns the
// exit code (0 when well formed).
int trace_check_svg(const char* path);

#endif  // WEFT_TOOLS_WEFT_TRACE_H_
