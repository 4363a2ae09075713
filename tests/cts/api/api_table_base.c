// api_null table: status.h, allocator.h, time.h, trace.h, diagnostics.h.
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api_table.h"

//===----------------------------------------------------------------------===//
// status.h
//===----------------------------------------------------------------------===//

static weft_status_t make_planted(void) {
  return WEFT_STATUS(INTERNAL, "planted %d", 1);
}

static void status_code(api_call_t* call) {
  api_value(call, 0, "status");
  weft_status_t status = make_planted();
  weft_status_code_t code = weft_status_code(status);
  weft_status_free(status);
  if (code != WEFT_STATUS_INTERNAL) api_problem(call, "code %d", (int)code);
}

static void status_code_string(api_call_t* call) {
  api_value(call, 0, "code");
  const char* text = weft_status_code_string(WEFT_STATUS_INTERNAL);
  if (!text || strcmp(text, "INTERNAL") != 0) {
    api_problem(call, "returned '%s'", text ? text : "(null)");
  }
}

static void status_make(api_call_t* call) {
  api_value(call, 1, "line");
  api_value(call, 2, "code");
  api_value(call, 4, "...");
  api_status(call, weft_status_make_(api_ptr(call, 0, "file", "api.c"), 7,
                                     WEFT_STATUS_INTERNAL,
                                     api_ptr(call, 3, "format", "made %d"), 1));
}

static weft_status_t make_v(const char* file, const char* format, ...) {
  va_list args;
  va_start(args, format);
  weft_status_t status =
      weft_status_make_v_(file, 7, WEFT_STATUS_INTERNAL, format, args);
  va_end(args);
  return status;
}

static void status_make_v(api_call_t* call) {
  api_value(call, 1, "line");
  api_value(call, 2, "code");
  api_value(call, 4, "args");
  api_status(call, make_v(api_ptr(call, 0, "file", "api.c"),
                          api_ptr(call, 3, "format", "made %d"), 1));
}

static void status_message(api_call_t* call) {
  api_value(call, 0, "status");
  weft_status_t status = make_planted();
  const char* message = weft_status_message(status);
  if (!message || strcmp(message, "planted 1") != 0) {
    api_problem(call, "returned '%s'", message ? message : "(null)");
  }
  weft_status_free(status);
}

static void status_annotate(api_call_t* call) {
  api_value(call, 0, "status");
  api_value(call, 2, "...");
  api_status(call,
             weft_status_annotate(make_planted(),
                                  api_ptr(call, 1, "format", "while %d"), 2));
}

static void status_clone(api_call_t* call) {
  api_value(call, 0, "status");
  weft_status_t status = make_planted();
  api_status(call, weft_status_clone(status));
  weft_status_free(status);
}

static void status_join(api_call_t* call) {
  api_value(call, 0, "a");
  api_value(call, 1, "b");
  api_status(
      call, weft_status_join(make_planted(), WEFT_STATUS(DATA_LOSS, "second")));
}

static void status_free(api_call_t* call) {
  api_value(call, 0, "status");
  weft_status_free(make_planted());
}

static void status_consume_code(api_call_t* call) {
  api_value(call, 0, "status");
  weft_status_code_t code = weft_status_consume_code(make_planted());
  if (code != WEFT_STATUS_INTERNAL) api_problem(call, "code %d", (int)code);
}

static void status_format(api_call_t* call) {
  api_value(call, 2, "buffer_capacity");
  weft_status_t status = make_planted();
  char expected[512];
  size_t expected_length =
      weft_status_format(status, expected, sizeof(expected));
  char text[512];
  memset(text, 0, sizeof(text));
  size_t length =
      weft_status_format(status, api_ptr(call, 1, "buffer", text), 64);
  weft_status_free(status);
  if (length != expected_length) {
    api_problem(call, "returned %zu, expected the full length %zu", length,
                expected_length);
  }
  if (!api_is_broken(call, 1) && strncmp(text, expected, 63) != 0) {
    api_problem(call, "wrote '%s', expected the start of '%s'", text, expected);
  }
  api_value(call, 0, "status");
}

static void status_fprint(api_call_t* call) {
  api_value(call, 1, "status");
  FILE* stream = fopen("/dev/null", "w");
  if (!stream) {
    api_problem(call, "setup: cannot open /dev/null");
    return;
  }
  weft_status_t status = make_planted();
  weft_status_fprint(api_ptr(call, 0, "stream", stream), status);
  weft_status_free(status);
  fclose(stream);
}

//===----------------------------------------------------------------------===//
// allocator.h
//===----------------------------------------------------------------------===//

static void allocator_system(api_call_t* call) {
  weft_allocator_t allocator = weft_allocator_system();
  if (!allocator.ctl) api_problem(call, "returned no ctl function");
}

// malloc, malloc_uninitialized and malloc_array share one shape.
typedef enum malloc_kind_e {
  MALLOC_ZEROED = 0,
  MALLOC_UNINITIALIZED = 1,
  MALLOC_ARRAY = 2,
} malloc_kind_t;

static void allocator_malloc_common(api_call_t* call, malloc_kind_t kind) {
  void* ptr = NULL;
  weft_allocator_t allocator = api_allocator(call, 0, "allocator");
  weft_status_t status = WEFT_OK;
  if (kind == MALLOC_ARRAY) {
    api_value(call, 1, "count");
    api_value(call, 2, "element_size");
    status = weft_allocator_malloc_array(
        allocator, 4, 16, api_out(call, 3, "out_ptr", &ptr, sizeof(ptr)));
    api_status(call, status);
    api_check_out(call, 3, &ptr, sizeof(ptr));
  } else {
    api_value(call, 1, "byte_length");
    void** out = api_out(call, 2, "out_ptr", &ptr, sizeof(ptr));
    status = kind == MALLOC_ZEROED
                 ? weft_allocator_malloc(allocator, 64, out)
                 : weft_allocator_malloc_uninitialized(allocator, 64, out);
    api_status(call, status);
    api_check_out(call, 2, &ptr, sizeof(ptr));
  }
  if (api_ok(call)) weft_allocator_free(call->allocator, ptr);
}

static void allocator_malloc(api_call_t* call) {
  allocator_malloc_common(call, MALLOC_ZEROED);
}

static void allocator_malloc_uninitialized(api_call_t* call) {
  allocator_malloc_common(call, MALLOC_UNINITIALIZED);
}

static void allocator_malloc_array(api_call_t* call) {
  allocator_malloc_common(call, MALLOC_ARRAY);
}

static void allocator_realloc(api_call_t* call) {
  api_value(call, 1, "byte_length");
  void* ptr = NULL;
  if (!api_setup(call, weft_allocator_malloc(call->allocator, 16, &ptr),
                 "weft_allocator_malloc")) {
    return;
  }
  api_status(call,
             weft_allocator_realloc(api_allocator(call, 0, "allocator"), 64,
                                    api_ptr(call, 2, "inout_ptr", &ptr)));
  // On failure *inout_ptr is kept: either way |ptr| is what to free.
  weft_allocator_free(call->allocator, ptr);
}

static void allocator_free(api_call_t* call) {
  void* ptr = NULL;
  if (!api_setup(call, weft_allocator_malloc(call->allocator, 16, &ptr),
                 "weft_allocator_malloc")) {
    return;
  }
  weft_allocator_t allocator = api_allocator(call, 0, "allocator");
  if (api_is_broken(call, 0)) {
    // An allocator without ctl cannot free: give it memory no one frees.
    char unowned[16];
    weft_allocator_free(allocator, api_ptr(call, 1, "ptr", unowned));
    weft_allocator_free(call->allocator, ptr);
  } else {
    weft_allocator_free(allocator, api_ptr(call, 1, "ptr", ptr));
    if (api_is_broken(call, 1)) weft_allocator_free(call->allocator, ptr);
  }
}

static void allocator_malloc_aligned(api_call_t* call) {
  api_value(call, 1, "byte_length");
  api_value(call, 2, "alignment");
  void* ptr = NULL;
  weft_status_t status = weft_allocator_malloc_aligned(
      api_allocator(call, 0, "allocator"), 64, 64,
      api_out(call, 3, "out_ptr", &ptr, sizeof(ptr)));
  api_status(call, status);
  api_check_out(call, 3, &ptr, sizeof(ptr));
  if (api_ok(call)) weft_allocator_free_aligned(call->allocator, ptr);
}

static void allocator_free_aligned(api_call_t* call) {
  void* ptr = NULL;
  if (!api_setup(call,
                 weft_allocator_malloc_aligned(call->allocator, 16, 64, &ptr),
                 "weft_allocator_malloc_aligned")) {
    return;
  }
  weft_allocator_t allocator = api_allocator(call, 0, "allocator");
  if (api_is_broken(call, 0)) {
    // An allocator without ctl cannot free: give it memory no one frees
    // (aligned, with the word before it pointing at itself).
    void* unowned[4] = {NULL, NULL, NULL, NULL};
    unowned[0] = &unowned[1];
    weft_allocator_free_aligned(allocator, api_ptr(call, 1, "ptr", &unowned[1]));
    weft_allocator_free_aligned(call->allocator, ptr);
  } else {
    weft_allocator_free_aligned(allocator, api_ptr(call, 1, "ptr", ptr));
    if (api_is_broken(call, 1)) {
      weft_allocator_free_aligned(call->allocator, ptr);
    }
  }
}

static void failing_allocator_initialize(api_call_t* call) {
  api_value(call, 1, "fail_at");
  weft_failing_allocator_t storage;
  memset(&storage, 0, sizeof(storage));
  weft_allocator_t allocator =
      weft_failing_allocator_initialize(api_allocator(call, 0, "base"), -1,
                                        api_ptr(call, 2, "storage", &storage));
  if (api_is_broken(call, 2)) {
    api_expect_neutral(call, !allocator.self && !allocator.ctl,
                       "{%p, %s}, expected {NULL, NULL}", allocator.self,
                       allocator.ctl ? "ctl" : "NULL");
  } else if (call->broken_index < 0) {
    void* ptr = NULL;
    if (api_setup(call, weft_allocator_malloc(allocator, 8, &ptr),
                  "weft_allocator_malloc through the failing allocator")) {
      weft_allocator_free(allocator, ptr);
    }
  }
}

//===----------------------------------------------------------------------===//
// time.h
//===----------------------------------------------------------------------===//

static void time_now(api_call_t* call) {
  if (weft_time_now() <= 0) api_problem(call, "returned a time <= 0");
}

static void timeout_as_deadline(api_call_t* call) {
  api_value(call, 0, "timeout");
  weft_time_t deadline = weft_timeout_as_deadline(weft_timeout_infinite());
  if (deadline != WEFT_TIME_INFINITE_FUTURE) {
    api_problem(call, "returned %lld", (long long)deadline);
  }
}

static void deadline_remaining(api_call_t* call) {
  api_value(call, 0, "deadline_ns");
  if (weft_deadline_remaining(WEFT_TIME_INFINITE_PAST) != 0) {
    api_problem(call, "a past deadline has time remaining");
  }
}

static void sleep_until(api_call_t* call) {
  api_value(call, 0, "deadline_ns");
  weft_sleep_until(weft_time_now());
}

//===----------------------------------------------------------------------===//
// trace.h
//===----------------------------------------------------------------------===//

static void trace_start(api_call_t* call) {
  char path[64];
  if (!api_make_temp_file(call, 0, path)) return;
  if (api_status(call, weft_trace_start(api_ptr(call, 0, "path", path)))) {
    api_setup(call, weft_trace_stop(), "weft_trace_stop");
  }
  unlink(path);
}

static void trace_flush(api_call_t* call) {
  char path[64];
  if (!api_make_temp_file(call, 0, path)) return;
  if (api_setup(call, weft_trace_start(path), "weft_trace_start")) {
    api_status(call, weft_trace_flush());
    api_setup(call, weft_trace_stop(), "weft_trace_stop");
  }
  unlink(path);
}

static void trace_stop(api_call_t* call) {
  api_status(call, weft_trace_stop());
}

//===----------------------------------------------------------------------===//
// diagnostics.h
//===----------------------------------------------------------------------===//

static void watchdog_set(api_call_t* call) {
  api_value(call, 0, "limit_ns");
  api_value(call, 1, "action");
  weft_watchdog_set(0, WEFT_WATCHDOG_ACTION_REPORT);
}

static void watchdog_limit(api_call_t* call) {
  if (weft_watchdog_limit() < 0) api_problem(call, "a negative limit");
}

static void diagnostics_dump(api_call_t* call) {
  FILE* stream = fopen("/dev/null", "w");
  if (!stream) {
    api_problem(call, "setup: cannot open /dev/null");
    return;
  }
  weft_diagnostics_dump(api_ptr(call, 0, "stream", stream));
  fclose(stream);
}

static void diagnostics_find_cycles(api_call_t* call) {
  FILE* stream = fopen("/dev/null", "w");
  if (!stream) {
    api_problem(call, "setup: cannot open /dev/null");
    return;
  }
  uint32_t count =
      weft_diagnostics_find_cycles(api_ptr(call, 0, "stream", stream));
  api_expect_neutral(call, count == 0, "%u, expected 0", count);
  fclose(stream);
}

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

const api_entry_t api_table_base[] = {
    {"weft_status_code", status_code, WEFT_STATUS_OK},
    {"weft_status_code_string", status_code_string, WEFT_STATUS_OK},
    {"weft_status_make_", status_make, WEFT_STATUS_INTERNAL},
    {"weft_status_make_v_", status_make_v, WEFT_STATUS_INTERNAL},
    {"weft_status_message", status_message, WEFT_STATUS_OK},
    {"weft_status_annotate", status_annotate, WEFT_STATUS_INTERNAL},
    {"weft_status_clone", status_clone, WEFT_STATUS_INTERNAL},
    {"weft_status_join", status_join, WEFT_STATUS_INTERNAL},
    {"weft_status_free", status_free, WEFT_STATUS_OK},
    {"weft_status_consume_code", status_consume_code, WEFT_STATUS_OK},
    {"weft_status_format", status_format, WEFT_STATUS_OK},
    {"weft_status_fprint", status_fprint, WEFT_STATUS_OK},
    {"weft_allocator_system", allocator_system, WEFT_STATUS_OK},
    {"weft_allocator_malloc", allocator_malloc, WEFT_STATUS_OK},
    {"weft_allocator_malloc_uninitialized", allocator_malloc_uninitialized,
     WEFT_STATUS_OK},
    {"weft_allocator_realloc", allocator_realloc, WEFT_STATUS_OK},
    {"weft_allocator_malloc_array", allocator_malloc_array, WEFT_STATUS_OK},
    {"weft_allocator_free", allocator_free, WEFT_STATUS_OK},
    {"weft_allocator_malloc_aligned", allocator_malloc_aligned,
     WEFT_STATUS_OK},
    {"weft_allocator_free_aligned", allocator_free_aligned, WEFT_STATUS_OK},
    {"weft_failing_allocator_initialize", failing_allocator_initialize,
     WEFT_STATUS_OK},
    {"weft_time_now", time_now, WEFT_STATUS_OK},
    {"weft_timeout_as_deadline", timeout_as_deadline, WEFT_STATUS_OK},
    {"weft_deadline_remaining", deadline_remaining, WEFT_STATUS_OK},
    {"weft_sleep_until", sleep_until, WEFT_STATUS_OK},
    {"weft_trace_start", trace_start, WEFT_STATUS_OK},
    {"weft_trace_flush", trace_flush, WEFT_STATUS_OK},
    {"weft_trace_stop", trace_stop, WEFT_STATUS_OK},
    {"weft_watchdog_set", watchdog_set, WEFT_STATUS_OK},
    {"weft_watchdog_limit", watchdog_limit, WEFT_STATUS_OK},
    {"weft_diagnostics_dump", diagnostics_dump, WEFT_STATUS_OK},
    {"weft_diagnostics_find_cycles", diagnostics_find_cycles, WEFT_STATUS_OK},
};
const size_t api_table_base_count =
    sizeof(api_table_base) / sizeof(api_table_base[0]);
