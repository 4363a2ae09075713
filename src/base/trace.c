// weft: tracing (see src/base/trace.h and include/weft/trace.h).
//
// State, all of it process-wide (a trace is of the whole process):
//  - weft_trace_enabled_flag, read by every macro with a relaxed load;
//  - a session generation, bumped by every weft_trace_start;
//  - one record per thread that has recorded an event, on a list guarded by
//    the list mutex (links, names, output indices);
//  - the control state (path, session start time, whether tracing is on),
//    changed by start, flush and stop, which the control mutex serialises.
//
// Recording: a thread finds its record through a thread-local pointer (the
// first event registers it, under the list mutex) and appends to chunks it
// owns: 256 events, then 512, doubling to 65536, then 65536 per chunk, so a
// thread that records ten events costs 12 KiB while a busy worker never
// copies what it recorded. A chunk is allocated when the previous one is
// full; nothing else on the recording path allocates or takes a lock. After
// writing an event the owner publishes (generation << 32 | event count) with
// a release store; a flush on another thread loads it with acquire and reads
// only the events below that count, which are complete and never change
// during the session.
//
// Sessions and memory: buffers are never freed while their thread may still
// append. A thread resets its own count when it sees a new generation, so
// weft_trace_start needs no handshake with threads that are mid-append: a
// straggler appending under the old generation writes past the count it
// published for that generation, which nobody reads any more. Records
// (with their chunks) are freed only after their thread has exited (a
// pthread key destructor marks them) and the session that saw them has been
// written: at the end of weft_trace_stop and at weft_trace_start. The
// records of live threads stay until the process exits.
//
// Limits: a thread keeps at most WEFT_TRACE_EVENTS_PER_THREAD events per
// session; past that, events are counted as dropped (the count is written
// in the thread's metadata) and a dropped BEGIN drops its END too, so the
// zones that were kept stay balanced. ENDs of kept zones have a small
// reserve past the limit.
//
// Writing: the whole file is rewritten at every flush (path.tmp, then
// rename), so it is always complete. Per thread, an END with no open zone
// (its BEGIN came before tracing started) is left out and zones still open
// get an END at the flush time, so every thread's zones balance.

#include "base/trace.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/mutex.h"
#include "base/os_error.h"
#include "weft/time.h"

//===----------------------------------------------------------------------===//
// Events and per-thread records
//===----------------------------------------------------------------------===//

// The most events one thread keeps in one session.
#define WEFT_TRACE_EVENTS_PER_THREAD (1u << 20)
// ENDs of recorded zones may go this far past the limit.
#define WEFT_TRACE_END_RESERVE 256u
// Chunk sizes: 256 << k events for the first chunks, then the maximum.
#define WEFT_TRACE_FIRST_CHUNK_EVENTS 256u
#define WEFT_TRACE_GROWING_CHUNKS 9u  // 256 .. 65536
#define WEFT_TRACE_MAX_CHUNK_EVENTS \
  (WEFT_TRACE_FIRST_CHUNK_EVENTS << (WEFT_TRACE_GROWING_CHUNKS - 1))
#define WEFT_TRACE_GROWING_TOTAL \
  (WEFT_TRACE_FIRST_CHUNK_EVENTS * ((1u << WEFT_TRACE_GROWING_CHUNKS) - 1))
#define WEFT_TRACE_MAX_CHUNKS                                     \
  (WEFT_TRACE_GROWING_CHUNKS +                                    \
   (WEFT_TRACE_EVENTS_PER_THREAD + WEFT_TRACE_END_RESERVE -       \
    WEFT_TRACE_GROWING_TOTAL + WEFT_TRACE_MAX_CHUNK_EVENTS - 1) / \
       WEFT_TRACE_MAX_CHUNK_EVENTS)
// Thread names, with the terminator.
#define WEFT_TRACE_NAME_CAPACITY 64

typedef enum weft_trace_phase_e {
  WEFT_TRACE_PHASE_BEGIN = 'B',
  WEFT_TRACE_PHASE_END = 'E',
  WEFT_TRACE_PHASE_INSTANT = 'i',
  WEFT_TRACE_PHASE_FLOW_START = 's',
  WEFT_TRACE_PHASE_FLOW_STEP = 't',
  WEFT_TRACE_PHASE_FLOW_END = 'f',
  // A zone given by its start and duration ("X"), on a track.
  WEFT_TRACE_PHASE_COMPLETE = 'X',
  // Not written itself: the args (|value| bytes, |id| peer + 1) of the
  // COMPLETE event recorded right after it on the same track.
  WEFT_TRACE_PHASE_TRANSFER_ARGS = 'a',
} weft_trace_phase_t;

enum {
  WEFT_TRACE_EVENT_HAS_VALUE = 1u << 0,
};

typedef struct weft_trace_event_t {
  weft_time_t time_ns;
  const char* category;
  const char* name;
  uint64_t id;  // 0: none
  uint64_t value;  // COMPLETE: the duration in nanoseconds
  uint8_t phase;  // weft_trace_phase_t
  uint8_t flags;  // WEFT_TRACE_EVENT_*
} weft_trace_event_t;

typedef struct weft_trace_thread_t {
  // List links, the output index and the name: under the list mutex.
  struct weft_trace_thread_t* next;
  uint32_t index;
  char name[WEFT_TRACE_NAME_CAPACITY];

  // (generation << 32) | events recorded in that generation. Stored by the
  // owner (release), loaded by flushes (acquire).
  weft_atomic_uint64_t published;
  // Events dropped in the published generation (reset by the owner before
  // its first publish of a generation).
  weft_atomic_uint64_t dropped;
  // Set by the owner's thread-exit destructor: the record may be freed.
  weft_atomic_uint32_t exited;

  // Owner-only state.
  uint32_t generation;
  uint32_t count;
  uint32_t depth;          // recorded zones still open
  uint32_t dropped_depth;  // zones open whose BEGIN was dropped
  uint32_t cursor_chunk;   // chunk the next event goes to (UINT32_MAX: none)
  uint32_t cursor_offset;
  uint32_t cursor_capacity;

  // Written by the owner when it allocates a chunk (before publishing any
  // event in it); read by flushes below the published count.
  weft_trace_event_t* chunks[WEFT_TRACE_MAX_CHUNKS];
} weft_trace_thread_t;

static inline uint32_t weft_trace_chunk_capacity(uint32_t chunk) {
  return chunk < WEFT_TRACE_GROWING_CHUNKS
             ? WEFT_TRACE_FIRST_CHUNK_EVENTS << chunk
             : WEFT_TRACE_MAX_CHUNK_EVENTS;
}

//===----------------------------------------------------------------------===//
// Process-wide state
//===----------------------------------------------------------------------===//

weft_atomic_uint32_t weft_trace_enabled_flag = 0;

// Bumped by every start; threads compare it with their record's.
static weft_atomic_uint32_t weft_trace_generation = 0;
static weft_atomic_uint64_t weft_trace_id_counter = 0;

// Guards the record list, record names and indices.
static weft_slim_mutex_t weft_trace_list_mutex = WEFT_SLIM_MUTEX_INITIALIZER;
static weft_trace_thread_t* weft_trace_threads = NULL;
static uint32_t weft_trace_next_index = 0;

// Serialises start, flush and stop; guards what follows.
static weft_slim_mutex_t weft_trace_control_mutex = WEFT_SLIM_MUTEX_INITIALIZER;
static bool weft_trace_active = false;
static char* weft_trace_path = NULL;
static weft_time_t weft_trace_session_start = 0;
static bool weft_trace_atexit_registered = false;

static _Thread_local weft_trace_thread_t* weft_trace_current_thread = NULL;
static _Thread_local char weft_trace_thread_name[WEFT_TRACE_NAME_CAPACITY];

static pthread_once_t weft_trace_key_once = PTHREAD_ONCE_INIT;
static pthread_key_t weft_trace_key;
static bool weft_trace_key_valid = false;

static pthread_once_t weft_trace_environment_once = PTHREAD_ONCE_INIT;

//===----------------------------------------------------------------------===//
// Recording
//===----------------------------------------------------------------------===//

// Runs at thread exit for every thread with a record: closes its open zones
// (so its track ends where the thread did) and lets the record be freed.
static void weft_trace_thread_exited(void* value) {
  weft_trace_thread_t* thread = (weft_trace_thread_t*)value;
  if (weft_trace_current_thread == thread) {
    if (weft_trace_is_enabled()) {
      for (uint32_t open = thread->depth; open > 0; --open) {
        weft_trace_end_();
      }
    }
    weft_trace_current_thread = NULL;
  }
  // Release: every write the owner made to the record happens-before the
  // reaper that sees the flag frees it.
  weft_atomic_store(&thread->exited, 1, memory_order_release);
}

static void weft_trace_create_key(void) {
  weft_trace_key_valid =
      pthread_key_create(&weft_trace_key, weft_trace_thread_exited) == 0;
}

// Makes a record named |name| and puts it on the list; NULL when it cannot
// be allocated (the events meant for it are then lost).
static weft_trace_thread_t* weft_trace_record_create(const char* name) {
  weft_trace_thread_t* thread =
      (weft_trace_thread_t*)calloc(1, sizeof(*thread));
  if (thread) {
    thread->cursor_chunk = UINT32_MAX;
    weft_slim_mutex_lock(&weft_trace_list_mutex);
    thread->index = ++weft_trace_next_index;
    if (name[0]) {
      snprintf(thread->name, sizeof(thread->name), "%s", name);
    } else {
      snprintf(thread->name, sizeof(thread->name), "thread-%u",
               (unsigned)thread->index);
    }
    thread->next = weft_trace_threads;
    weft_trace_threads = thread;
    weft_slim_mutex_unlock(&weft_trace_list_mutex);
  }
  return thread;
}

// Registers the calling thread's record; NULL when it cannot be allocated
// (the event is then lost).
static weft_trace_thread_t* weft_trace_register_thread(void) {
  pthread_once(&weft_trace_key_once, weft_trace_create_key);
  char name[WEFT_TRACE_NAME_CAPACITY] = "";
  if (weft_trace_thread_name[0]) {
    memcpy(name, weft_trace_thread_name, sizeof(name));
  } else if (pthread_getname_np(pthread_self(), name, sizeof(name)) != 0) {
    name[0] = '\0';
  }
  weft_trace_thread_t* thread = weft_trace_record_create(name);
  if (thread) {
    if (weft_trace_key_valid) {
      pthread_setspecific(weft_trace_key, thread);
    }
    weft_trace_current_thread = thread;
  }
  return thread;
}

// Starts the owner's buffer over for |generation| (chunks are kept).
static void weft_trace_thread_reset(weft_trace_thread_t* thread,
                                    uint32_t generation) {
  thread->generation = generation;
  thread->count = 0;
  thread->depth = 0;
  thread->dropped_depth = 0;
  thread->cursor_chunk = UINT32_MAX;
  thread->cursor_offset = 0;
  thread->cursor_capacity = 0;
  weft_atomic_store(&thread->dropped, 0, memory_order_relaxed);
}

// Makes room for one more event at the cursor; false when the chunk table is
// full or a chunk cannot be allocated.
static bool weft_trace_thread_reserve(weft_trace_thread_t* thread) {
  bool ok = true;
  if (thread->cursor_offset == thread->cursor_capacity) {
    uint32_t next = thread->cursor_chunk + 1;  // UINT32_MAX + 1 wraps to 0
    if (next >= WEFT_TRACE_MAX_CHUNKS) {
      ok = false;
    } else {
      if (!thread->chunks[next]) {
        thread->chunks[next] = (weft_trace_event_t*)malloc(
            sizeof(weft_trace_event_t) * weft_trace_chunk_capacity(next));
      }
      if (thread->chunks[next]) {
        thread->cursor_chunk = next;
        thread->cursor_offset = 0;
        thread->cursor_capacity = weft_trace_chunk_capacity(next);
      } else {
        ok = false;
      }
    }
  }
  return ok;
}

// Appends an event at |now| to |thread| (NULL: lost), which only the caller
// writes to.
static void weft_trace_append_to(weft_trace_thread_t* thread, weft_time_t now,
                                 weft_trace_phase_t phase, uint8_t flags,
                                 const char* category, const char* name,
                                 uint64_t id, uint64_t value) {
  bool record = thread != NULL;
  uint32_t generation =
      weft_atomic_load(&weft_trace_generation, memory_order_relaxed);
  if (record && thread->generation != generation) {
    // Acquire (pairs with the release bump in weft_trace_start; loaded again
    // only on a change, so the common path stays relaxed): the flushes of
    // earlier sessions, which read this buffer, happen-before the writes
    // that now reuse it.
    generation = weft_atomic_load(&weft_trace_generation, memory_order_acquire);
    weft_trace_thread_reset(thread, generation);
  }
  uint32_t limit = WEFT_TRACE_EVENTS_PER_THREAD;
  if (record && phase == WEFT_TRACE_PHASE_END) {
    if (thread->dropped_depth > 0) {
      // Closes a zone whose BEGIN was dropped: dropped with it (counted
      // once, with the BEGIN).
      --thread->dropped_depth;
      record = false;
    } else if (thread->depth == 0) {
      // Closes a zone opened before tracing started: nothing to record.
      record = false;
    }
    limit += WEFT_TRACE_END_RESERVE;
  }
  if (record &&
      (thread->count >= limit || !weft_trace_thread_reserve(thread))) {
    weft_atomic_fetch_add(&thread->dropped, 1, memory_order_relaxed);
    if (phase == WEFT_TRACE_PHASE_BEGIN) ++thread->dropped_depth;
    record = false;
  }
  if (record) {
    weft_trace_event_t* event =
        &thread->chunks[thread->cursor_chunk][thread->cursor_offset++];
    event->time_ns = now;
    event->category = category;
    event->name = name;
    event->id = id;
    event->value = value;
    event->phase = (uint8_t)phase;
    event->flags = flags;
    ++thread->count;
    if (phase == WEFT_TRACE_PHASE_BEGIN) {
      ++thread->depth;
    } else if (phase == WEFT_TRACE_PHASE_END) {
      --thread->depth;
    }
    // Release: the event's fields (and its chunk pointer) happen-before a
    // flush that reads this count.
    weft_atomic_store(&thread->published,
                      ((uint64_t)generation << 32) | thread->count,
                      memory_order_release);
  }
}

// Appends an event at the current time to the calling thread's record.
static void weft_trace_append(weft_trace_phase_t phase, uint8_t flags,
                              const char* category, const char* name,
                              uint64_t id, uint64_t value) {
  weft_time_t now = weft_time_now();
  weft_trace_thread_t* thread = weft_trace_current_thread;
  if (!thread) thread = weft_trace_register_thread();
  weft_trace_append_to(thread, now, phase, flags, category, name, id, value);
}

void weft_trace_begin_(const char* category, const char* name, uint64_t id,
                       uint64_t value, bool has_value) {
  weft_trace_append(WEFT_TRACE_PHASE_BEGIN,
                    has_value ? WEFT_TRACE_EVENT_HAS_VALUE : 0, category, name,
                    id, value);
}

void weft_trace_end_(void) {
  weft_trace_append(WEFT_TRACE_PHASE_END, 0, NULL, NULL, 0, 0);
}

void weft_trace_instant_(const char* category, const char* name, uint64_t id,
                         uint64_t value) {
  weft_trace_append(WEFT_TRACE_PHASE_INSTANT, WEFT_TRACE_EVENT_HAS_VALUE,
                    category, name, id, value);
}

void weft_trace_flow_(const char* category, const char* name, uint64_t id,
                      weft_trace_flow_phase_t phase) {
  weft_trace_phase_t trace_phase = WEFT_TRACE_PHASE_FLOW_STEP;
  if (phase == WEFT_TRACE_FLOW_START) {
    trace_phase = WEFT_TRACE_PHASE_FLOW_START;
  } else if (phase == WEFT_TRACE_FLOW_END) {
    trace_phase = WEFT_TRACE_PHASE_FLOW_END;
  }
  weft_trace_append(trace_phase, 0, category, name, id, 0);
}

weft_trace_track_t* weft_trace_track_create(const char* name) {
  return weft_trace_record_create(name ? name : "");
}

void weft_trace_track_release(weft_trace_track_t* track) {
  if (!track) return;
  // Release: the recorder's writes happen-before the reaper's free (as a
  // thread's at its exit).
  weft_atomic_store(&track->exited, 1, memory_order_release);
}

void weft_trace_track_complete_(weft_trace_track_t* track,
                                const char* category, const char* name,
                                uint64_t id, weft_time_t start_ns,
                                weft_duration_t duration_ns) {
  weft_trace_append_to(track, start_ns, WEFT_TRACE_PHASE_COMPLETE, 0,
                       category, name, id,
                       duration_ns > 0 ? (uint64_t)duration_ns : 0);
}

void weft_trace_track_transfer_(weft_trace_track_t* track,
                                const char* category, const char* name,
                                uint64_t id, weft_time_t start_ns,
                                weft_duration_t duration_ns, uint64_t bytes,
                                int32_t peer) {
  weft_trace_append_to(track, start_ns, WEFT_TRACE_PHASE_TRANSFER_ARGS, 0,
                       category, name, peer >= 0 ? (uint64_t)peer + 1 : 0,
                       bytes);
  weft_trace_track_complete_(track, category, name, id, start_ns,
                             duration_ns);
}

uint64_t weft_trace_next_id(void) {
  return weft_atomic_fetch_add(&weft_trace_id_counter, 1,
                               memory_order_relaxed) +
         1;
}

void weft_trace_set_thread_name(const char* name) {
  if (!name) name = "";
  size_t length = strlen(name);
  if (length >= WEFT_TRACE_NAME_CAPACITY) {
    length = WEFT_TRACE_NAME_CAPACITY - 1;
  }
  memcpy(weft_trace_thread_name, name, length);
  weft_trace_thread_name[length] = '\0';
  weft_trace_thread_t* thread = weft_trace_current_thread;
  if (thread && length > 0) {
    weft_slim_mutex_lock(&weft_trace_list_mutex);
    memcpy(thread->name, weft_trace_thread_name, sizeof(thread->name));
    weft_slim_mutex_unlock(&weft_trace_list_mutex);
  }
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

// What a flush reads of one record, copied under the list mutex.
typedef struct weft_trace_snapshot_t {
  const weft_trace_thread_t* thread;
  uint32_t count;
  uint64_t dropped;
  uint32_t index;
  char name[WEFT_TRACE_NAME_CAPACITY];
} weft_trace_snapshot_t;

static void weft_trace_write_string(FILE* file, const char* text) {
  fputc('"', file);
  for (const unsigned char* c = (const unsigned char*)(text ? text : ""); *c;
       ++c) {
    if (*c == '"' || *c == '\\') {
      fputc('\\', file);
      fputc(*c, file);
    } else if (*c < 0x20) {
      fprintf(file, "\\u%04x", (unsigned)*c);
    } else {
      fputc(*c, file);
    }
  }
  fputc('"', file);
}

// Writes a timestamp in microseconds with nanosecond digits, relative to
// the session start (earlier stragglers are clamped to it).
static void weft_trace_write_time(FILE* file, weft_time_t time_ns,
                                  weft_time_t start_ns) {
  int64_t relative = time_ns > start_ns ? time_ns - start_ns : 0;
  fprintf(file, "%" PRId64 ".%03d", relative / 1000, (int)(relative % 1000));
}

static void weft_trace_write_event(FILE* file, const weft_trace_event_t* event,
                                   const weft_trace_event_t* transfer,
                                   int pid, uint32_t tid, weft_time_t start_ns,
                                   bool* first) {
  fputs(*first ? "\n" : ",\n", file);
  *first = false;
  fprintf(file, "{\"ph\":\"%c\",\"ts\":", (char)event->phase);
  weft_trace_write_time(file, event->time_ns, start_ns);
  fprintf(file, ",\"pid\":%d,\"tid\":%u", pid, (unsigned)tid);
  if (event->phase != WEFT_TRACE_PHASE_END) {
    fputs(",\"cat\":", file);
    weft_trace_write_string(file, event->category);
    fputs(",\"name\":", file);
    weft_trace_write_string(file, event->name);
  }
  switch (event->phase) {
    case WEFT_TRACE_PHASE_INSTANT:
      fputs(",\"s\":\"t\"", file);
      break;
    case WEFT_TRACE_PHASE_FLOW_START:
    case WEFT_TRACE_PHASE_FLOW_STEP:
    case WEFT_TRACE_PHASE_FLOW_END:
      fprintf(file, ",\"id\":%" PRIu64 ",\"bp\":\"e\"", event->id);
      break;
    case WEFT_TRACE_PHASE_COMPLETE:
      fprintf(file, ",\"dur\":%" PRIu64 ".%03d", event->value / 1000,
              (int)(event->value % 1000));
      break;
    default:
      break;
  }
  bool is_flow = event->phase == WEFT_TRACE_PHASE_FLOW_START ||
                 event->phase == WEFT_TRACE_PHASE_FLOW_STEP ||
                 event->phase == WEFT_TRACE_PHASE_FLOW_END;
  bool has_id = event->id != 0 && !is_flow;
  bool has_value = (event->flags & WEFT_TRACE_EVENT_HAS_VALUE) != 0;
  if (has_id || has_value || transfer) {
    fputs(",\"args\":{", file);
    if (has_id) fprintf(file, "\"id\":%" PRIu64, event->id);
    if (has_value) {
      fprintf(file, "%s\"value\":%" PRIu64, has_id ? "," : "", event->value);
    }
    if (transfer) {
      fprintf(file, "%s\"bytes\":%" PRIu64, has_id || has_value ? "," : "",
              transfer->value);
      if (transfer->id) {
        fprintf(file, ",\"peer\":%" PRId64, (int64_t)transfer->id - 1);
      }
    }
    fputc('}', file);
  }
  fputc('}', file);
}

// Writes one thread's metadata and events, balanced: ENDs with no open zone
// are left out, zones still open end at |now|.
static void weft_trace_write_thread(FILE* file,
                                    const weft_trace_snapshot_t* snapshot,
                                    int pid, weft_time_t start_ns,
                                    weft_time_t now, bool* first) {
  fputs(*first ? "\n" : ",\n", file);
  *first = false;
  fprintf(file,
          "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%u,"
          "\"args\":{\"name\":",
          pid, (unsigned)snapshot->index);
  weft_trace_write_string(file, snapshot->name);
  if (snapshot->dropped > 0) {
    fprintf(file, ",\"dropped_events\":%" PRIu64, snapshot->dropped);
  }
  fputs("}},\n", file);
  fprintf(file,
          "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%d,\"tid\":%u,"
          "\"args\":{\"sort_index\":%u}}",
          pid, (unsigned)snapshot->index, (unsigned)snapshot->index);
  uint32_t depth = 0;
  uint32_t written = 0;
  weft_trace_event_t transfer;
  bool has_transfer = false;
  for (uint32_t chunk = 0; written < snapshot->count; ++chunk) {
    const weft_trace_event_t* events = snapshot->thread->chunks[chunk];
    uint32_t in_chunk = weft_trace_chunk_capacity(chunk);
    if (in_chunk > snapshot->count - written) {
      in_chunk = snapshot->count - written;
    }
    for (uint32_t i = 0; i < in_chunk; ++i) {
      const weft_trace_event_t* event = &events[i];
      if (event->phase == WEFT_TRACE_PHASE_TRANSFER_ARGS) {
        transfer = *event;
        has_transfer = true;
        continue;
      }
      if (event->phase == WEFT_TRACE_PHASE_END) {
        if (depth == 0) continue;
        --depth;
      } else if (event->phase == WEFT_TRACE_PHASE_BEGIN) {
        ++depth;
      }
      weft_trace_write_event(
          file, event,
          has_transfer && event->phase == WEFT_TRACE_PHASE_COMPLETE ? &transfer
                                                                    : NULL,
          pid, snapshot->index, start_ns, first);
      has_transfer = false;
    }
    written += in_chunk;
  }
  for (; depth > 0; --depth) {
    weft_trace_event_t end = {.time_ns = now, .phase = WEFT_TRACE_PHASE_END};
    weft_trace_write_event(file, &end, NULL, pid, snapshot->index, start_ns,
                           first);
  }
}

// Copies what a flush needs from every record that recorded events (or
// dropped some) in |generation|.
static weft_status_t weft_trace_take_snapshots(
    uint32_t generation, weft_trace_snapshot_t** out_snapshots,
    size_t* out_count) {
  weft_status_t status = WEFT_OK;
  *out_snapshots = NULL;
  *out_count = 0;
  weft_slim_mutex_lock(&weft_trace_list_mutex);
  size_t capacity = 0;
  for (weft_trace_thread_t* t = weft_trace_threads; t; t = t->next) {
    ++capacity;
  }
  weft_trace_snapshot_t* snapshots = NULL;
  if (capacity > 0) {
    snapshots = (weft_trace_snapshot_t*)calloc(capacity, sizeof(*snapshots));
    if (!snapshots) {
      status = WEFT_STATUS(RESOURCE_EXHAUSTED,
                           "trace_flush: cannot allocate the snapshot of %zu "
                           "threads (%zu bytes)",
                           capacity, capacity * sizeof(*snapshots));
    }
  }
  size_t count = 0;
  for (weft_trace_thread_t* t = weft_trace_threads; snapshots && t;
       t = t->next) {
    // Acquire: the events below the count (and their chunk pointers) were
    // written before the owner published it.
    uint64_t published = weft_atomic_load(&t->published, memory_order_acquire);
    if ((uint32_t)(published >> 32) != generation) continue;
    uint64_t dropped = weft_atomic_load(&t->dropped, memory_order_relaxed);
    uint32_t events = (uint32_t)published;
    if (events == 0 && dropped == 0) continue;
    weft_trace_snapshot_t* snapshot = &snapshots[count++];
    snapshot->thread = t;
    snapshot->count = events;
    snapshot->dropped = dropped;
    snapshot->index = t->index;
    memcpy(snapshot->name, t->name, sizeof(snapshot->name));
  }
  weft_slim_mutex_unlock(&weft_trace_list_mutex);
  // Threads in the order they first recorded (the list is newest first).
  for (size_t i = 0; i < count / 2; ++i) {
    weft_trace_snapshot_t swap = snapshots[i];
    snapshots[i] = snapshots[count - 1 - i];
    snapshots[count - 1 - i] = swap;
  }
  *out_snapshots = snapshots;
  *out_count = count;
  return status;
}

// Writes the current session to the trace path. Control mutex held.
static weft_status_t weft_trace_write_file_locked(const char* operation) {
  uint32_t generation =
      weft_atomic_load(&weft_trace_generation, memory_order_relaxed);
  weft_trace_snapshot_t* snapshots = NULL;
  size_t snapshot_count = 0;
  weft_status_t status =
      weft_trace_take_snapshots(generation, &snapshots, &snapshot_count);
  // Taken after the counts were read, so no written event is later.
  weft_time_t now = weft_time_now();
  const char* path = weft_trace_path;
  size_t path_length = strlen(path);
  char* temporary_path = NULL;
  FILE* file = NULL;
  if (weft_status_is_ok(status)) {
    temporary_path = (char*)malloc(path_length + sizeof(".tmp"));
    if (!temporary_path) {
      status = WEFT_STATUS(RESOURCE_EXHAUSTED,
                           "%s: cannot allocate the temporary name for trace "
                           "file '%s'",
                           operation, path);
    } else {
      memcpy(temporary_path, path, path_length);
      memcpy(temporary_path + path_length, ".tmp", sizeof(".tmp"));
    }
  }
  if (weft_status_is_ok(status)) {
    file = fopen(temporary_path, "w");
    if (!file) {
      int error = errno;
      status = weft_status_make_(
          __FILE__, __LINE__, weft_status_code_from_errno(error),
          "%s: cannot create trace file '%s' (writing '%s' first): %s",
          operation, path, temporary_path, strerror(error));
    }
  }
  if (weft_status_is_ok(status)) {
    int pid = (int)getpid();
    bool first = true;
    uint64_t dropped = 0;
    fputs("{\"traceEvents\":[", file);
    fputs("\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":", file);
    fprintf(file, "%d,\"tid\":0,\"args\":{\"name\":\"weft\"}}", pid);
    first = false;
    for (size_t i = 0; i < snapshot_count; ++i) {
      weft_trace_write_thread(file, &snapshots[i], pid,
                              weft_trace_session_start, now, &first);
      dropped += snapshots[i].dropped;
    }
    fprintf(file,
            "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"version\":\"weft "
            "trace 1\",\"dropped_events\":%" PRIu64 "}}\n",
            dropped);
    bool write_failed = ferror(file) != 0;
    int error = write_failed ? errno : 0;
    if (fclose(file) != 0 && !write_failed) {
      write_failed = true;
      error = errno;
    }
    if (write_failed) {
      status = weft_status_make_(
          __FILE__, __LINE__, weft_status_code_from_errno(error),
          "%s: writing trace file '%s' (as '%s') failed: %s", operation, path,
          temporary_path, strerror(error));
    } else if (rename(temporary_path, path) != 0) {
      error = errno;
      status = weft_status_make_(
          __FILE__, __LINE__, weft_status_code_from_errno(error),
          "%s: cannot rename '%s' to trace file '%s': %s", operation,
          temporary_path, path, strerror(error));
    }
    if (!weft_status_is_ok(status)) unlink(temporary_path);
  }
  free(temporary_path);
  free(snapshots);
  return status;
}

// Frees the records of threads that have exited. Control mutex held, so no
// flush is reading them.
static void weft_trace_reap_exited_locked(void) {
  weft_trace_thread_t* reaped = NULL;
  weft_slim_mutex_lock(&weft_trace_list_mutex);
  weft_trace_thread_t** link = &weft_trace_threads;
  while (*link) {
    weft_trace_thread_t* thread = *link;
    // Acquire: the owner's last writes happen-before the free below.
    if (weft_atomic_load(&thread->exited, memory_order_acquire)) {
      *link = thread->next;
      thread->next = reaped;
      reaped = thread;
    } else {
      link = &thread->next;
    }
  }
  weft_slim_mutex_unlock(&weft_trace_list_mutex);
  while (reaped) {
    weft_trace_thread_t* next = reaped->next;
    for (uint32_t i = 0; i < WEFT_TRACE_MAX_CHUNKS; ++i) {
      free(reaped->chunks[i]);
    }
    free(reaped);
    reaped = next;
  }
}

//===----------------------------------------------------------------------===//
// Control
//===----------------------------------------------------------------------===//

static void weft_trace_flush_at_exit(void) {
  if (!weft_trace_is_enabled()) return;
  weft_status_t status = weft_trace_flush();
  if (!weft_status_is_ok(status)) {
    fprintf(stderr, "weft: writing the trace at exit failed: ");
    weft_status_fprint(stderr, status);
    weft_status_free(status);
  }
}

weft_status_t weft_trace_start(const char* path) {
  weft_status_t status = WEFT_OK;
  if (!path || !path[0]) {
    status = WEFT_STATUS(INVALID_ARGUMENT, "weft_trace_start: path is %s",
                         path ? "empty" : "NULL");
  }
  weft_slim_mutex_lock(&weft_trace_control_mutex);
  if (weft_status_is_ok(status) && weft_trace_active) {
    status = WEFT_STATUS(FAILED_PRECONDITION,
                         "trace_start: already tracing into '%s' (asked for "
                         "'%s'); stop that trace first",
                         weft_trace_path, path);
  }
  if (weft_status_is_ok(status)) {
    size_t length = strlen(path) + 1;
    weft_trace_path = (char*)malloc(length);
    if (!weft_trace_path) {
      status =
          WEFT_STATUS(RESOURCE_EXHAUSTED,
                      "trace_start: cannot copy the trace path '%s'", path);
    } else {
      memcpy(weft_trace_path, path, length);
    }
  }
  if (weft_status_is_ok(status)) {
    weft_trace_reap_exited_locked();
    // Release: every flush of the sessions before (they read the buffers
    // that threads reuse when they see the new generation) happens-before
    // that reuse.
    weft_atomic_fetch_add(&weft_trace_generation, 1, memory_order_release);
    weft_trace_session_start = weft_time_now();
    // The file is created now, so a bad path fails here: an empty trace.
    status = weft_trace_write_file_locked("trace_start");
    if (!weft_status_is_ok(status)) {
      free(weft_trace_path);
      weft_trace_path = NULL;
    }
  }
  if (weft_status_is_ok(status)) {
    weft_trace_active = true;
    if (!weft_trace_atexit_registered) {
      weft_trace_atexit_registered = atexit(weft_trace_flush_at_exit) == 0;
    }
    weft_atomic_store(&weft_trace_enabled_flag, 1, memory_order_relaxed);
  }
  weft_slim_mutex_unlock(&weft_trace_control_mutex);
  return status;
}

weft_status_t weft_trace_flush(void) {
  weft_status_t status = WEFT_OK;
  weft_slim_mutex_lock(&weft_trace_control_mutex);
  if (!weft_trace_active) {
    status = WEFT_STATUS(FAILED_PRECONDITION,
                         "trace_flush: tracing is off (weft_trace_start or "
                         "WEFT_TRACE=path.json starts it)");
  } else {
    status = weft_trace_write_file_locked("trace_flush");
  }
  weft_slim_mutex_unlock(&weft_trace_control_mutex);
  return status;
}

weft_status_t weft_trace_stop(void) {
  weft_status_t status = WEFT_OK;
  weft_slim_mutex_lock(&weft_trace_control_mutex);
  if (weft_trace_active) {
    weft_atomic_store(&weft_trace_enabled_flag, 0, memory_order_relaxed);
    status = weft_trace_write_file_locked("trace_stop");
    weft_trace_active = false;
    free(weft_trace_path);
    weft_trace_path = NULL;
    weft_trace_reap_exited_locked();
  }
  weft_slim_mutex_unlock(&weft_trace_control_mutex);
  return status;
}

static void weft_trace_start_from_environment(void) {
  const char* path = getenv("WEFT_TRACE");
  if (!path || !path[0]) return;
  weft_status_t status = weft_trace_start(path);
  if (weft_status_is(status, WEFT_STATUS_FAILED_PRECONDITION)) {
    // Already tracing (started through the API): that trace goes on.
    weft_status_free(status);
  } else if (!weft_status_is_ok(status)) {
    fprintf(stderr, "weft: WEFT_TRACE=%s: tracing stays off: ", path);
    weft_status_fprint(stderr, status);
    weft_status_free(status);
  }
}

void weft_trace_initialize_from_environment(void) {
  pthread_once(&weft_trace_environment_once, weft_trace_start_from_environment);
}
