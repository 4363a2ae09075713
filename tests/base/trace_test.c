// Tests for tracing: start/flush/stop, the JSON written (parsed back with
// cJSON), balance per thread across threads and sessions, instants, flows,
// the environment variable and bad paths.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// cmocka after the headers it needs (setjmp.h, stdarg.h, stddef.h).
// clang-format off
#include <cmocka.h>
// clang-format on
#include <cjson/cJSON.h>

#include "base/atomics.h"
#include "base/thread.h"
#include "base/trace.h"
#include "weft/time.h"
#include "weft/trace.h"

static char g_directory[64];

static void trace_path(const char* name, char* out_path, size_t capacity) {
  snprintf(out_path, capacity, "%s/%s", g_directory, name);
}

// Reads and parses |path|; fails the test when it is not valid JSON with a
// traceEvents array.
static cJSON* parse_trace(const char* path) {
  FILE* file = fopen(path, "rb");
  assert_non_null(file);
  assert_int_equal(fseek(file, 0, SEEK_END), 0);
  long length = ftell(file);
  assert_true(length > 0);
  assert_int_equal(fseek(file, 0, SEEK_SET), 0);
  char* text = (char*)malloc((size_t)length + 1);
  assert_non_null(text);
  assert_int_equal(fread(text, 1, (size_t)length, file), (size_t)length);
  text[length] = '\0';
  fclose(file);
  cJSON* root = cJSON_Parse(text);
  if (!root)
    fprintf(stderr, "%s does not parse near: %.40s\n", path,
            cJSON_GetErrorPtr());
  free(text);
  assert_non_null(root);
  assert_true(
      cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(root, "traceEvents")));
  const cJSON* unit = cJSON_GetObjectItemCaseSensitive(root, "displayTimeUnit");
  assert_true(cJSON_IsString(unit));
  assert_string_equal(unit->valuestring, "ns");
  return root;
}

static const cJSON* trace_events(const cJSON* root) {
  return cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
}

static const char* event_string(const cJSON* event, const char* key) {
  const cJSON* item = cJSON_GetObjectItemCaseSensitive(event, key);
  return cJSON_IsString(item) ? item->valuestring : "";
}

static double event_number(const cJSON* event, const char* key) {
  const cJSON* item = cJSON_GetObjectItemCaseSensitive(event, key);
  return cJSON_IsNumber(item) ? item->valuedouble : -1.0;
}

static double event_arg(const cJSON* event, const char* key) {
  const cJSON* args = cJSON_GetObjectItemCaseSensitive(event, "args");
  const cJSON* item = cJSON_GetObjectItemCaseSensitive(args, key);
  return cJSON_IsNumber(item) ? item->valuedouble : -1.0;
}

static bool is_phase(const cJSON* event, const char* phase) {
  return strcmp(event_string(event, "ph"), phase) == 0;
}

// Counts events with phase |phase| (and name |name| when not NULL).
static int count_events(const cJSON* root, const char* phase,
                        const char* name) {
  int count = 0;
  const cJSON* event = NULL;
  cJSON_ArrayForEach(event, trace_events(root)) {
    if (is_phase(event, phase) &&
        (!name || strcmp(event_string(event, "name"), name) == 0)) {
      ++count;
    }
  }
  return count;
}

// The tid of the thread named |name| in the metadata, or -1.
static int thread_tid(const cJSON* root, const char* name) {
  int tid = -1;
  const cJSON* event = NULL;
  cJSON_ArrayForEach(event, trace_events(root)) {
    if (is_phase(event, "M") &&
        strcmp(event_string(event, "name"), "thread_name") == 0) {
      const cJSON* args = cJSON_GetObjectItemCaseSensitive(event, "args");
      const cJSON* value = cJSON_GetObjectItemCaseSensitive(args, "name");
      if (cJSON_IsString(value) && strcmp(value->valuestring, name) == 0) {
        tid = (int)event_number(event, "tid");
      }
    }
  }
  return tid;
}

// Checks every thread's zones balance and its timestamps never go back;
// returns the number of B events.
static int check_balanced(const cJSON* root) {
  enum { kMaxTid = 256 };
  int depth[kMaxTid] = {0};
  double last_ts[kMaxTid];
  for (int i = 0; i < kMaxTid; ++i) last_ts[i] = -1.0;
  int begins = 0;
  const cJSON* event = NULL;
  cJSON_ArrayForEach(event, trace_events(root)) {
    if (is_phase(event, "M")) continue;
    int tid = (int)event_number(event, "tid");
    assert_true(tid > 0 && tid < kMaxTid);
    double ts = event_number(event, "ts");
    assert_true(ts >= 0.0);
    assert_true(ts >= last_ts[tid]);
    last_ts[tid] = ts;
    if (is_phase(event, "B")) {
      ++depth[tid];
      ++begins;
    } else if (is_phase(event, "E")) {
      assert_true(depth[tid] > 0);
      --depth[tid];
    }
  }
  for (int i = 0; i < kMaxTid; ++i) assert_int_equal(depth[i], 0);
  return begins;
}

// Runs first: the environment variable is read once per process.
static void test_environment_start(void** state) {
  (void)state;
  char path[128];
  trace_path("environment.json", path, sizeof(path));
  assert_int_equal(setenv("WEFT_TRACE", path, 1), 0);
  assert_false(weft_trace_is_enabled());
  weft_trace_initialize_from_environment();
  assert_true(weft_trace_is_enabled());
  WEFT_TRACE_BEGIN(WEFT_TRACE_CATEGORY_HOST, "from_environment");
  WEFT_TRACE_END();
  assert_null(weft_trace_stop());
  assert_false(weft_trace_is_enabled());

  cJSON* root = parse_trace(path);
  assert_int_equal(count_events(root, "B", "from_environment"), 1);
  assert_int_equal(count_events(root, "E", NULL), 1);
  cJSON_Delete(root);

  // Later calls do nothing, even with the variable changed.
  char other[128];
  trace_path("environment_again.json", other, sizeof(other));
  assert_int_equal(setenv("WEFT_TRACE", other, 1), 0);
  weft_trace_initialize_from_environment();
  assert_false(weft_trace_is_enabled());
  assert_int_not_equal(access(other, F_OK), 0);
  unsetenv("WEFT_TRACE");
  unlink(path);
}

static void test_start_flush_stop(void** state) {
  (void)state;
  char path[128];
  trace_path("start_flush_stop.json", path, sizeof(path));
  unlink(path);
  assert_null(weft_trace_start(path));
  assert_true(weft_trace_is_enabled());
  // The file exists (and parses) from the start.
  cJSON* root = parse_trace(path);
  assert_int_equal(count_events(root, "B", NULL), 0);
  cJSON_Delete(root);

  // A second start fails and names both paths; the trace goes on.
  weft_status_t status = weft_trace_start("/tmp/other.json");
  assert_true(weft_status_is(status, WEFT_STATUS_FAILED_PRECONDITION));
  assert_non_null(strstr(weft_status_message(status), path));
  weft_status_free(status);
  assert_true(weft_trace_is_enabled());

  WEFT_TRACE_BEGIN(WEFT_TRACE_CATEGORY_HOST, "first");
  WEFT_TRACE_END();
  assert_null(weft_trace_flush());
  root = parse_trace(path);
  assert_int_equal(count_events(root, "B", "first"), 1);
  assert_int_equal(count_events(root, "E", NULL), 1);
  cJSON_Delete(root);

  WEFT_TRACE_BEGIN(WEFT_TRACE_CATEGORY_HOST, "second");
  WEFT_TRACE_END();
  assert_null(weft_trace_stop());
  root = parse_trace(path);
  assert_int_equal(count_events(root, "B", "first"), 1);
  assert_int_equal(count_events(root, "B", "second"), 1);
  assert_int_equal(check_balanced(root), 2);
  cJSON_Delete(root);
  // No temporary file is left behind.
  char temporary[160];
  snprintf(temporary, sizeof(temporary), "%s.tmp", path);
  assert_int_not_equal(access(temporary, F_OK), 0);

  // Stop when off is OK; flush when off says tracing is off.
  assert_null(weft_trace_stop());
  status = weft_trace_flush();
  assert_true(weft_status_is(status, WEFT_STATUS_FAILED_PRECONDITION));
  weft_status_free(status);
  unlink(path);
}

typedef struct zone_thread_t {
  char name[32];
  int rounds;
} zone_thread_t;

static int zone_thread_main(void* user_data) {
  zone_thread_t* info = (zone_thread_t*)user_data;
  if (info->name[0]) weft_trace_set_thread_name(info->name);
  for (int i = 0; i < info->rounds; ++i) {
    WEFT_TRACE_BEGIN(WEFT_TRACE_CATEGORY_TASK, "outer");
    WEFT_TRACE_BEGIN_ID(WEFT_TRACE_CATEGORY_TASK, "middle", (uint64_t)i + 1);
    WEFT_TRACE_BEGIN_VALUE(WEFT_TRACE_CATEGORY_BLOCK, "inner", 0, (uint64_t)i);
    WEFT_TRACE_END();
    WEFT_TRACE_END();
    WEFT_TRACE_END();
  }
  return 0;
}

static void test_nested_zones_from_threads(void** state) {
  (void)state;
  char path[128];
  trace_path("threads.json", path, sizeof(path));
  assert_null(weft_trace_start(path));
  enum { kThreads = 4, kRounds = 500 };
  zone_thread_t infos[kThreads];
  weft_thread_t* threads[kThreads];
  for (int i = 0; i < kThreads; ++i) {
    snprintf(infos[i].name, sizeof(infos[i].name), "zone-thread-%d", i);
    infos[i].rounds = kRounds;
    assert_null(weft_thread_create(zone_thread_main, &infos[i], NULL,
                                   weft_allocator_system(), &threads[i]));
  }
  // A flush while they record reads only complete events.
  assert_null(weft_trace_flush());
  cJSON* root = parse_trace(path);
  check_balanced(root);
  cJSON_Delete(root);
  for (int i = 0; i < kThreads; ++i) weft_thread_join(threads[i]);
  assert_null(weft_trace_stop());

  root = parse_trace(path);
  assert_int_equal(check_balanced(root), kThreads * kRounds * 3);
  int tids[kThreads];
  for (int i = 0; i < kThreads; ++i) {
    tids[i] = thread_tid(root, infos[i].name);
    assert_true(tids[i] > 0);
    for (int j = 0; j < i; ++j) assert_int_not_equal(tids[i], tids[j]);
  }
  // Ids and values are args; zones without them have no args.
  const cJSON* event = NULL;
  int middles = 0;
  cJSON_ArrayForEach(event, trace_events(root)) {
    if (!is_phase(event, "B")) continue;
    const char* name = event_string(event, "name");
    if (strcmp(name, "middle") == 0) {
      assert_string_equal(event_string(event, "cat"), "task");
      assert_true(event_arg(event, "id") >= 1.0);
      ++middles;
    } else if (strcmp(name, "inner") == 0) {
      assert_string_equal(event_string(event, "cat"), "block");
      assert_true(event_arg(event, "value") >= 0.0);
      assert_null(cJSON_GetObjectItemCaseSensitive(
          cJSON_GetObjectItemCaseSensitive(event, "args"), "id"));
    } else {
      assert_null(cJSON_GetObjectItemCaseSensitive(event, "args"));
    }
  }
  assert_int_equal(middles, kThreads * kRounds);
  cJSON_Delete(root);
  unlink(path);
}

typedef struct busy_thread_t {
  weft_atomic_uint32_t* stop;
  uint64_t zones;
} busy_thread_t;

static int busy_thread_main(void* user_data) {
  busy_thread_t* busy = (busy_thread_t*)user_data;
  while (!weft_atomic_load(busy->stop, memory_order_relaxed)) {
    // Bursts of 8 zones, 20 us apart: a few hundred zones per session, so
    // the files stay small under the sanitizers.
    for (int i = 0; i < 8; ++i) {
      WEFT_TRACE_BEGIN(WEFT_TRACE_CATEGORY_TASK, "busy");
      WEFT_TRACE_INSTANT(WEFT_TRACE_CATEGORY_TASK, "tick", 0, busy->zones);
      WEFT_TRACE_END();
      ++busy->zones;
    }
    weft_sleep_until(weft_time_now() + 20000);
  }
  return 0;
}

// Flushes, stops and restarts while threads keep recording: every file
// written is complete and balanced (TSan checks the publication).
static void test_flush_and_restart_while_recording(void** state) {
  (void)state;
  char path[128];
  trace_path("restart.json", path, sizeof(path));
  enum { kThreads = 3 };
  weft_atomic_uint32_t stop = 0;
  busy_thread_t busy[kThreads];
  weft_thread_t* threads[kThreads];
  assert_null(weft_trace_start(path));
  for (int i = 0; i < kThreads; ++i) {
    busy[i] = (busy_thread_t){.stop = &stop};
    assert_null(weft_thread_create(busy_thread_main, &busy[i], NULL,
                                   weft_allocator_system(), &threads[i]));
  }
  for (int round = 0; round < 6; ++round) {
    weft_sleep_until(weft_time_now() + 2000000);
    if (round % 2 == 0) {
      assert_null(weft_trace_flush());
    } else {
      assert_null(weft_trace_stop());
      cJSON* root = parse_trace(path);
      check_balanced(root);
      cJSON_Delete(root);
      assert_null(weft_trace_start(path));
    }
    cJSON* root = parse_trace(path);
    check_balanced(root);
    cJSON_Delete(root);
  }
  weft_atomic_store(&stop, 1, memory_order_relaxed);
  for (int i = 0; i < kThreads; ++i) {
    weft_thread_join(threads[i]);
    assert_true(busy[i].zones > 0);
  }
  assert_null(weft_trace_stop());
  cJSON* root = parse_trace(path);
  check_balanced(root);
  cJSON_Delete(root);
  unlink(path);
}

static void test_thread_names_from_thread_create(void** state) {
  (void)state;
  char path[128];
  trace_path("names.json", path, sizeof(path));
  assert_null(weft_trace_start(path));
  zone_thread_t info = {.name = "", .rounds = 1};
  weft_thread_params_t params = {.name = "named-by-create", .cpu = -1};
  weft_thread_t* thread = NULL;
  assert_null(weft_thread_create(zone_thread_main, &info, &params,
                                 weft_allocator_system(), &thread));
  weft_thread_join(thread);
  assert_null(weft_trace_stop());
  cJSON* root = parse_trace(path);
  assert_true(thread_tid(root, "named-by-create") > 0);
  cJSON_Delete(root);
  unlink(path);
}

static void test_instants_with_values(void** state) {
  (void)state;
  char path[128];
  trace_path("instants.json", path, sizeof(path));
  assert_null(weft_trace_start(path));
  uint64_t id = weft_trace_next_id();
  WEFT_TRACE_INSTANT(WEFT_TRACE_CATEGORY_SEMAPHORE, "signal", 0, 5);
  WEFT_TRACE_INSTANT(WEFT_TRACE_CATEGORY_QUEUE, "submit", id, 0);
  WEFT_TRACE_INSTANT(WEFT_TRACE_CATEGORY_SEMAPHORE, "name with \"quotes\"\n", 0,
                     1ull << 40);
  assert_null(weft_trace_stop());
  cJSON* root = parse_trace(path);
  int seen = 0;
  const cJSON* event = NULL;
  cJSON_ArrayForEach(event, trace_events(root)) {
    if (!is_phase(event, "i")) continue;
    assert_string_equal(event_string(event, "s"), "t");
    const char* name = event_string(event, "name");
    if (strcmp(name, "signal") == 0) {
      assert_string_equal(event_string(event, "cat"), "semaphore");
      assert_true(event_arg(event, "value") == 5.0);
      assert_true(event_arg(event, "id") < 0.0);  // no id
      ++seen;
    } else if (strcmp(name, "submit") == 0) {
      assert_true(event_arg(event, "id") == (double)id);
      assert_true(event_arg(event, "value") == 0.0);
      ++seen;
    } else if (strcmp(name, "name with \"quotes\"\n") == 0) {
      assert_true(event_arg(event, "value") == (double)(1ull << 40));
      ++seen;
    }
  }
  assert_int_equal(seen, 3);
  cJSON_Delete(root);
  unlink(path);
}

typedef struct flow_thread_t {
  uint64_t id;
} flow_thread_t;

static int flow_end_main(void* user_data) {
  flow_thread_t* flow = (flow_thread_t*)user_data;
  WEFT_TRACE_BEGIN_ID(WEFT_TRACE_CATEGORY_QUEUE, "finish", flow->id);
  WEFT_TRACE_FLOW(WEFT_TRACE_CATEGORY_QUEUE, "op", flow->id,
                  WEFT_TRACE_FLOW_END);
  WEFT_TRACE_END();
  return 0;
}

static void test_flows_with_ids(void** state) {
  (void)state;
  char path[128];
  trace_path("flows.json", path, sizeof(path));
  assert_null(weft_trace_start(path));
  flow_thread_t flow = {.id = weft_trace_next_id()};
  assert_true(flow.id != 0);
  assert_true(weft_trace_next_id() > flow.id);
  WEFT_TRACE_BEGIN_ID(WEFT_TRACE_CATEGORY_QUEUE, "start", flow.id);
  WEFT_TRACE_FLOW(WEFT_TRACE_CATEGORY_QUEUE, "op", flow.id,
                  WEFT_TRACE_FLOW_START);
  WEFT_TRACE_FLOW(WEFT_TRACE_CATEGORY_QUEUE, "op", flow.id,
                  WEFT_TRACE_FLOW_STEP);
  WEFT_TRACE_END();
  weft_thread_t* thread = NULL;
  assert_null(weft_thread_create(flow_end_main, &flow, NULL,
                                 weft_allocator_system(), &thread));
  weft_thread_join(thread);
  assert_null(weft_trace_stop());

  cJSON* root = parse_trace(path);
  check_balanced(root);
  double start_ts = -1, step_ts = -1, end_ts = -1;
  int start_tid = -1, end_tid = -1;
  const cJSON* event = NULL;
  cJSON_ArrayForEach(event, trace_events(root)) {
    const char* ph = event_string(event, "ph");
    if (strcmp(ph, "s") != 0 && strcmp(ph, "t") != 0 && strcmp(ph, "f") != 0) {
      continue;
    }
    assert_true(event_number(event, "id") == (double)flow.id);
    assert_string_equal(event_string(event, "bp"), "e");
    assert_string_equal(event_string(event, "name"), "op");
    assert_string_equal(event_string(event, "cat"), "queue");
    if (ph[0] == 's') {
      start_ts = event_number(event, "ts");
      start_tid = (int)event_number(event, "tid");
    } else if (ph[0] == 't') {
      step_ts = event_number(event, "ts");
    } else {
      end_ts = event_number(event, "ts");
      end_tid = (int)event_number(event, "tid");
    }
  }
  assert_true(start_ts >= 0 && step_ts >= start_ts && end_ts >= step_ts);
  assert_true(start_tid > 0 && end_tid > 0 && start_tid != end_tid);
  cJSON_Delete(root);
  unlink(path);
}

static int open_zone_and_exit_main(void* user_data) {
  (void)user_data;
  WEFT_TRACE_BEGIN(WEFT_TRACE_CATEGORY_TASK, "left_open");
  return 0;
}

static void test_enable_disable_mid_zone(void** state) {
  (void)state;
  char path[128];
  trace_path("mid_zone.json", path, sizeof(path));
  // A zone begun before tracing starts: its END is not written.
  WEFT_TRACE_BEGIN(WEFT_TRACE_CATEGORY_HOST, "before");
  assert_null(weft_trace_start(path));
  WEFT_TRACE_END();
  // A zone still open when tracing stops ends at the stop.
  WEFT_TRACE_BEGIN(WEFT_TRACE_CATEGORY_HOST, "across_stop");
  WEFT_TRACE_BEGIN(WEFT_TRACE_CATEGORY_HOST, "inner_across_stop");
  // A thread that exits inside a zone: the zone ends at its exit.
  weft_thread_t* thread = NULL;
  assert_null(weft_thread_create(open_zone_and_exit_main, NULL, NULL,
                                 weft_allocator_system(), &thread));
  weft_thread_join(thread);
  assert_null(weft_trace_flush());
  cJSON* root = parse_trace(path);
  assert_int_equal(check_balanced(root), 3);
  cJSON_Delete(root);
  assert_null(weft_trace_stop());
  root = parse_trace(path);
  assert_int_equal(check_balanced(root), 3);
  assert_int_equal(count_events(root, "B", "before"), 0);
  assert_int_equal(count_events(root, "B", "across_stop"), 1);
  assert_int_equal(count_events(root, "B", "left_open"), 1);
  assert_int_equal(count_events(root, "E", NULL), 3);
  cJSON_Delete(root);

  // The ENDs arrive in the next session: left out there.
  assert_null(weft_trace_start(path));
  WEFT_TRACE_END();
  WEFT_TRACE_END();
  WEFT_TRACE_BEGIN(WEFT_TRACE_CATEGORY_HOST, "after");
  WEFT_TRACE_END();
  assert_null(weft_trace_stop());
  root = parse_trace(path);
  assert_int_equal(check_balanced(root), 1);
  assert_int_equal(count_events(root, "E", NULL), 1);
  assert_int_equal(count_events(root, "B", "across_stop"), 0);
  cJSON_Delete(root);
  unlink(path);
}

static void test_tracing_off_records_nothing(void** state) {
  (void)state;
  char path[128];
  trace_path("off.json", path, sizeof(path));
  assert_false(weft_trace_is_enabled());
  for (int i = 0; i < 100; ++i) {
    WEFT_TRACE_BEGIN(WEFT_TRACE_CATEGORY_HOST, "while_off");
    WEFT_TRACE_INSTANT(WEFT_TRACE_CATEGORY_HOST, "while_off_instant", 0, 1);
    WEFT_TRACE_FLOW(WEFT_TRACE_CATEGORY_HOST, "while_off_flow", 7,
                    WEFT_TRACE_FLOW_START);
    WEFT_TRACE_END();
  }
  assert_null(weft_trace_start(path));
  assert_null(weft_trace_stop());
  cJSON* root = parse_trace(path);
  // Only the metadata of the process.
  const cJSON* event = NULL;
  cJSON_ArrayForEach(event, trace_events(root)) {
    assert_true(is_phase(event, "M"));
  }
  cJSON_Delete(root);
  unlink(path);
}

static void test_bad_path_names_it(void** state) {
  (void)state;
  const char* bad = "/nonexistent-weft-directory/sub/trace.json";
  weft_status_t status = weft_trace_start(bad);
  assert_true(weft_status_is(status, WEFT_STATUS_NOT_FOUND));
  assert_non_null(strstr(weft_status_message(status), bad));
  weft_status_free(status);
  assert_false(weft_trace_is_enabled());
  status = weft_trace_start("");
  assert_true(weft_status_is(status, WEFT_STATUS_INVALID_ARGUMENT));
  weft_status_free(status);
  status = weft_trace_start(NULL);
  assert_true(weft_status_is(status, WEFT_STATUS_INVALID_ARGUMENT));
  weft_status_free(status);
  // A good path still works afterwards.
  char path[128];
  trace_path("after_bad.json", path, sizeof(path));
  assert_null(weft_trace_start(path));
  assert_null(weft_trace_stop());
  unlink(path);
}

static void test_many_events_cross_chunks(void** state) {
  (void)state;
  char path[128];
  trace_path("many.json", path, sizeof(path));
  assert_null(weft_trace_start(path));
  // Past the growing chunks (130,816 events) into fixed-size ones.
  enum { kZones = 70000 };
  for (int i = 0; i < kZones; ++i) {
    WEFT_TRACE_BEGIN_VALUE(WEFT_TRACE_CATEGORY_BLOCK, "tile", 0, (uint64_t)i);
    WEFT_TRACE_END();
  }
  assert_null(weft_trace_stop());
  cJSON* root = parse_trace(path);
  assert_int_equal(check_balanced(root), kZones);
  // In order: each zone's value is its index.
  int expected = 0;
  const cJSON* event = NULL;
  cJSON_ArrayForEach(event, trace_events(root)) {
    if (!is_phase(event, "B")) continue;
    assert_true(event_arg(event, "value") == (double)expected);
    ++expected;
  }
  cJSON_Delete(root);
  unlink(path);
}

// Past the per-thread limit (1,048,576 events) events are dropped and
// counted; a dropped BEGIN drops its END, so what is kept stays balanced.
// The file (80 MB) is scanned line by line: one event per line.
static void test_event_limit_drops_and_stays_balanced(void** state) {
  (void)state;
  char path[128];
  trace_path("limit.json", path, sizeof(path));
  assert_null(weft_trace_start(path));
  enum { kPairs = 600000, kLimit = 1 << 20 };
  WEFT_TRACE_BEGIN(WEFT_TRACE_CATEGORY_TASK, "outer");
  for (int i = 0; i < kPairs; ++i) {
    WEFT_TRACE_BEGIN(WEFT_TRACE_CATEGORY_BLOCK, "tile");
    WEFT_TRACE_END();
  }
  WEFT_TRACE_END();
  assert_null(weft_trace_stop());
  FILE* file = fopen(path, "r");
  assert_non_null(file);
  char line[512];
  long begins = 0, ends = 0, depth = 0;
  bool dropped_in_metadata = false, dropped_in_other_data = false;
  char expected[64];
  // Kept: the outer zone and (limit - 2) / 2 + 1 tiles (the last kept tile's
  // END is within the reserve).
  long kept_tiles = (kLimit - 2) / 2 + 1;
  snprintf(expected, sizeof(expected), "\"dropped_events\":%ld",
           (long)kPairs - kept_tiles);
  while (fgets(line, sizeof(line), file)) {
    if (strstr(line, "\"ph\":\"B\"")) {
      ++begins;
      ++depth;
    } else if (strstr(line, "\"ph\":\"E\"")) {
      ++ends;
      assert_true(--depth >= 0);
    }
    if (strstr(line, "\"thread_name\"") && strstr(line, expected)) {
      dropped_in_metadata = true;
    }
    if (strstr(line, "otherData") && strstr(line, expected)) {
      dropped_in_other_data = true;
    }
  }
  fclose(file);
  assert_int_equal(begins, kept_tiles + 1);
  assert_int_equal(ends, begins);
  assert_true(dropped_in_metadata);
  assert_true(dropped_in_other_data);
  unlink(path);
}

static int setup(void** state) {
  (void)state;
  snprintf(g_directory, sizeof(g_directory), "/tmp/weft_trace_test_XXXXXX");
  return mkdtemp(g_directory) ? 0 : -1;
}

static int teardown(void** state) {
  (void)state;
  return rmdir(g_directory);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      // First: the environment is read once per process.
      cmocka_unit_test(test_environment_start),
      cmocka_unit_test(test_start_flush_stop),
      cmocka_unit_test(test_nested_zones_from_threads),
      cmocka_unit_test(test_flush_and_restart_while_recording),
      cmocka_unit_test(test_thread_names_from_thread_create),
      cmocka_unit_test(test_instants_with_values),
      cmocka_unit_test(test_flows_with_ids),
      cmocka_unit_test(test_enable_disable_mid_zone),
      cmocka_unit_test(test_tracing_off_records_nothing),
      cmocka_unit_test(test_bad_path_names_it),
      cmocka_unit_test(test_many_events_cross_chunks),
      cmocka_unit_test(test_event_limit_drops_and_stays_balanced),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
