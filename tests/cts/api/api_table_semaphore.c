// api_null table: semaphore.h, fence.h.
#include <stdio.h>
#include <string.h>

#include "api_table.h"

#define SECOND_NS (1000ll * 1000 * 1000)

//===----------------------------------------------------------------------===//
// semaphore.h
//===----------------------------------------------------------------------===//

// Whether |semaphore| has failed (a query returns its failure).
static bool semaphore_has_failed(weft_semaphore_t* semaphore) {
  uint64_t value = 0;
  return weft_status_consume_code(weft_semaphore_query(semaphore, &value)) !=
         WEFT_STATUS_OK;
}

static void semaphore_create(api_call_t* call) {
  api_value(call, 1, "initial_value");
  weft_semaphore_t* semaphore = NULL;
  api_status(call,
             weft_semaphore_create(api_allocator(call, 0, "allocator"), 3,
                                   api_out(call, 2, "out_semaphore", &semaphore,
                                           sizeof(semaphore))));
  api_check_out(call, 2, &semaphore, sizeof(semaphore));
  if (api_ok(call)) weft_semaphore_release(semaphore);
}

static void semaphore_retain(api_call_t* call) {
  weft_semaphore_t* semaphore = api_make_semaphore(call, 0);
  if (!semaphore) return;
  weft_semaphore_retain(api_ptr(call, 0, "semaphore", semaphore));
  if (!api_is_broken(call, 0)) weft_semaphore_release(semaphore);
  weft_semaphore_release(semaphore);
}

static void semaphore_release(api_call_t* call) {
  weft_semaphore_t* semaphore = api_make_semaphore(call, 0);
  if (!semaphore) return;
  weft_semaphore_release(api_ptr(call, 0, "semaphore", semaphore));
  if (api_is_broken(call, 0)) weft_semaphore_release(semaphore);
}

static void semaphore_set_name(api_call_t* call) {
  weft_semaphore_t* semaphore = api_make_semaphore(call, 0);
  if (!semaphore) return;
  weft_semaphore_set_name(api_ptr(call, 0, "semaphore", semaphore),
                          api_ptr(call, 1, "name", "named"));
  const char* name = weft_semaphore_name(semaphore);
  const char* expected = call->broken_index < 0 ? "named" : "";
  if (!name || strcmp(name, expected) != 0) {
    api_problem(call, "the name is now '%s', expected '%s'",
                name ? name : "(null)", expected);
  }
  weft_semaphore_release(semaphore);
}

static void semaphore_name(api_call_t* call) {
  weft_semaphore_t* semaphore = api_make_semaphore(call, 0);
  if (!semaphore) return;
  weft_semaphore_set_name(semaphore, "named");
  const char* name =
      weft_semaphore_name(api_ptr(call, 0, "semaphore", semaphore));
  if (call->broken_index < 0 && (!name || strcmp(name, "named") != 0)) {
    api_problem(call, "returned '%s'", name ? name : "(null)");
  }
  api_expect_neutral(call, name && !name[0], "'%s', expected \"\"",
                     name ? name : "(null)");
  weft_semaphore_release(semaphore);
}

static void semaphore_query(api_call_t* call) {
  weft_semaphore_t* semaphore = api_make_semaphore(call, 5);
  if (!semaphore) return;
  uint64_t value = 0;
  api_status(call, weft_semaphore_query(
                       api_ptr(call, 0, "semaphore", semaphore),
                       api_out(call, 1, "out_value", &value, sizeof(value))));
  api_check_out(call, 1, &value, sizeof(value));
  if (call->broken_index < 0 && value != 5) {
    api_problem(call, "value %llu", (unsigned long long)value);
  }
  weft_semaphore_release(semaphore);
}

static void semaphore_signal(api_call_t* call) {
  api_value(call, 1, "value");
  weft_semaphore_t* semaphore = api_make_semaphore(call, 0);
  if (!semaphore) return;
  api_status(
      call, weft_semaphore_signal(api_ptr(call, 0, "semaphore", semaphore), 1));
  if (!api_ok(call)) api_check_untouched(call, semaphore, 0, "the semaphore");
  weft_semaphore_release(semaphore);
}

static void semaphore_fail(api_call_t* call) {
  api_value(call, 1, "status");
  weft_semaphore_t* semaphore = api_make_semaphore(call, 0);
  if (!semaphore) return;
  weft_semaphore_fail(api_ptr(call, 0, "semaphore", semaphore),
                      WEFT_STATUS(DATA_LOSS, "planted"));
  if (call->broken_index < 0 && !semaphore_has_failed(semaphore)) {
    api_problem(call, "the semaphore did not fail");
  }
  weft_semaphore_release(semaphore);
}

static void semaphore_wait(api_call_t* call) {
  api_value(call, 1, "value");
  api_value(call, 2, "timeout");
  weft_semaphore_t* semaphore = api_make_semaphore(call, 1);
  if (!semaphore) return;
  api_status(call, weft_semaphore_wait(api_ptr(call, 0, "semaphore", semaphore),
                                       1, weft_timeout_relative(SECOND_NS)));
  weft_semaphore_release(semaphore);
}

// A one-entry list over |semaphore| at |value| (caller-owned storage).
typedef struct list1_t {
  weft_semaphore_t* semaphores[1];
  uint64_t values[1];
} list1_t;

static weft_semaphore_list_t list1(list1_t* storage,
                                   weft_semaphore_t* semaphore,
                                   uint64_t value) {
  storage->semaphores[0] = semaphore;
  storage->values[0] = value;
  weft_semaphore_list_t list = {1, storage->semaphores, storage->values};
  return list;
}

static void semaphore_list_wait(api_call_t* call) {
  api_value(call, 0, "mode");
  api_value(call, 2, "timeout");
  weft_semaphore_t* semaphore = api_make_semaphore(call, 1);
  if (!semaphore) return;
  list1_t storage;
  api_status(call, weft_semaphore_list_wait(
                       WEFT_WAIT_MODE_ALL,
                       api_list(call, 1, "list", list1(&storage, semaphore, 1)),
                       weft_timeout_relative(SECOND_NS)));
  weft_semaphore_release(semaphore);
}

static void semaphore_list_signal(api_call_t* call) {
  weft_semaphore_t* semaphore = api_make_semaphore(call, 0);
  if (!semaphore) return;
  list1_t storage;
  api_status(call, weft_semaphore_list_signal(api_list(
                       call, 0, "list", list1(&storage, semaphore, 1))));
  if (!api_ok(call)) api_check_untouched(call, semaphore, 0, "the semaphore");
  weft_semaphore_release(semaphore);
}

static void semaphore_list_fail(api_call_t* call) {
  api_value(call, 1, "status");
  weft_semaphore_t* semaphore = api_make_semaphore(call, 0);
  if (!semaphore) return;
  list1_t storage;
  weft_semaphore_list_fail(
      api_list(call, 0, "list", list1(&storage, semaphore, 1)),
      WEFT_STATUS(DATA_LOSS, "planted"));
  if (call->broken_index < 0 && !semaphore_has_failed(semaphore)) {
    api_problem(call, "the semaphore did not fail");
  }
  weft_semaphore_release(semaphore);
}

static void semaphore_list_is_reached(api_call_t* call) {
  weft_semaphore_t* semaphore = api_make_semaphore(call, 1);
  if (!semaphore) return;
  list1_t storage;
  bool reached = weft_semaphore_list_is_reached(
      api_list(call, 0, "list", list1(&storage, semaphore, 1)));
  if (call->broken_index < 0 && !reached) {
    api_problem(call, "a reached list is not reached");
  }
  api_expect_neutral(call, !reached, "true, expected false");
  weft_semaphore_release(semaphore);
}

// What a timepoint callback saw.
typedef struct timepoint_record_t {
  weft_timepoint_t timepoint;
  int fire_count;
  weft_status_code_t code;
  char text[512];
} timepoint_record_t;

static void timepoint_record_fn(void* user_data, weft_timepoint_t* timepoint,
                                weft_status_t status) {
  timepoint_record_t* record = (timepoint_record_t*)user_data;
  // Single-threaded here: host semaphores fire on the signalling thread.
  ++record->fire_count;
  record->code = weft_status_code(status);
  weft_status_format(status, record->text, sizeof(record->text));
  weft_status_free(status);
}

static void timepoint_record_initialize(timepoint_record_t* record) {
  memset(record, 0, sizeof(*record));
  record->timepoint.fn = timepoint_record_fn;
  record->timepoint.user_data = record;
}

static void semaphore_register_timepoint(api_call_t* call) {
  api_value(call, 1, "value");
  weft_semaphore_t* semaphore = NULL;
  if (!api_setup(call, weft_semaphore_create(call->allocator, 0, &semaphore),
                 "weft_semaphore_create")) {
    return;
  }
  timepoint_record_t record;
  timepoint_record_initialize(&record);
  weft_semaphore_register_timepoint(
      api_ptr(call, 0, "semaphore", semaphore), 1,
      api_ptr(call, 2, "timepoint", &record.timepoint));
  if (api_is_broken(call, 0)) {
    // The callback fires once, with the error.
    if (record.fire_count != 1) {
      api_problem(call,
                  "the timepoint fired %d times, expected once with "
                  "INVALID_ARGUMENT",
                  record.fire_count);
    } else if (record.code != WEFT_STATUS_INVALID_ARGUMENT ||
               !strstr(record.text, "weft_semaphore_register_timepoint") ||
               !api_text_has_word(record.text, "semaphore")) {
      api_problem(call,
                  "the timepoint fired with '%s', expected "
                  "INVALID_ARGUMENT naming weft_semaphore_register_timepoint "
                  "and semaphore",
                  record.text);
    }
  } else if (!api_is_broken(call, 2)) {
    api_setup(call, weft_semaphore_signal(semaphore, 1),
              "weft_semaphore_signal");
    if (record.fire_count != 1 || record.code != WEFT_STATUS_OK) {
      api_problem(call, "the timepoint fired %d times ('%s')",
                  record.fire_count, record.text);
    }
  }
  weft_semaphore_release(semaphore);
}

static void semaphore_cancel_timepoint(api_call_t* call) {
  weft_semaphore_t* semaphore = NULL;
  if (!api_setup(call, weft_semaphore_create(call->allocator, 0, &semaphore),
                 "weft_semaphore_create")) {
    return;
  }
  timepoint_record_t record;
  timepoint_record_initialize(&record);
  weft_semaphore_register_timepoint(semaphore, 5, &record.timepoint);
  bool cancelled = weft_semaphore_cancel_timepoint(
      api_ptr(call, 0, "semaphore", semaphore),
      api_ptr(call, 1, "timepoint", &record.timepoint));
  if (call->broken_index < 0 && !cancelled) {
    api_problem(call, "a registered timepoint was not cancelled");
  }
  api_expect_neutral(call, !cancelled, "true, expected false");
  if (!cancelled) weft_semaphore_cancel_timepoint(semaphore, &record.timepoint);
  if (record.fire_count != 0) {
    api_problem(call, "the timepoint fired ('%s')", record.text);
  }
  weft_semaphore_release(semaphore);
}

//===----------------------------------------------------------------------===//
// fence.h
//===----------------------------------------------------------------------===//

static void fence_create(api_call_t* call) {
  api_value(call, 0, "capacity");
  weft_fence_t* fence = NULL;
  api_status(call, weft_fence_create(
                       4, api_allocator(call, 1, "allocator"),
                       api_out(call, 2, "out_fence", &fence, sizeof(fence))));
  api_check_out(call, 2, &fence, sizeof(fence));
  if (api_ok(call)) weft_fence_release(fence);
}

static void fence_create_at(api_call_t* call) {
  api_value(call, 1, "value");
  weft_semaphore_t* semaphore = api_make_semaphore(call, 0);
  if (!semaphore) return;
  weft_fence_t* fence = NULL;
  api_status(call, weft_fence_create_at(
                       api_ptr(call, 0, "semaphore", semaphore), 1,
                       api_allocator(call, 2, "allocator"),
                       api_out(call, 3, "out_fence", &fence, sizeof(fence))));
  api_check_out(call, 3, &fence, sizeof(fence));
  if (api_ok(call)) weft_fence_release(fence);
  weft_semaphore_release(semaphore);
}

static void fence_create_from_list(api_call_t* call) {
  weft_semaphore_t* semaphore = api_make_semaphore(call, 0);
  if (!semaphore) return;
  weft_semaphore_t* semaphores[1] = {semaphore};
  uint64_t values[1] = {1};
  weft_semaphore_list_t list = {1, semaphores, values};
  weft_fence_t* fence = NULL;
  api_status(call, weft_fence_create_from_list(
                       api_list(call, 0, "list", list),
                       api_allocator(call, 1, "allocator"),
                       api_out(call, 2, "out_fence", &fence, sizeof(fence))));
  api_check_out(call, 2, &fence, sizeof(fence));
  if (api_ok(call) && weft_fence_count(fence) != 1) {
    api_problem(call, "the fence holds %u entries, not 1",
                weft_fence_count(fence));
  }
  if (api_ok(call)) weft_fence_release(fence);
  weft_semaphore_release(semaphore);
}

// A fence over a fresh semaphore at |semaphore_value| holding |value|.
static weft_fence_t* make_fence(api_call_t* call, uint64_t semaphore_value,
                                uint64_t value,
                                weft_semaphore_t** out_semaphore) {
  *out_semaphore = api_make_semaphore(call, semaphore_value);
  if (!*out_semaphore) return NULL;
  weft_fence_t* fence = api_make_fence(call, *out_semaphore, value);
  if (!fence) {
    weft_semaphore_release(*out_semaphore);
    *out_semaphore = NULL;
  }
  return fence;
}

static void fence_retain(api_call_t* call) {
  weft_semaphore_t* semaphore = NULL;
  weft_fence_t* fence = make_fence(call, 0, 1, &semaphore);
  if (!fence) return;
  weft_fence_retain(api_ptr(call, 0, "fence", fence));
  if (!api_is_broken(call, 0)) weft_fence_release(fence);
  weft_fence_release(fence);
  weft_semaphore_release(semaphore);
}

static void fence_release(api_call_t* call) {
  weft_semaphore_t* semaphore = NULL;
  weft_fence_t* fence = make_fence(call, 0, 1, &semaphore);
  if (!fence) return;
  weft_fence_release(api_ptr(call, 0, "fence", fence));
  if (api_is_broken(call, 0)) weft_fence_release(fence);
  weft_semaphore_release(semaphore);
}

static void fence_insert(api_call_t* call) {
  api_value(call, 2, "value");
  weft_semaphore_t* semaphore = api_make_semaphore(call, 0);
  weft_fence_t* fence = NULL;
  if (semaphore &&
      api_setup(call, weft_fence_create(4, call->allocator, &fence),
                "weft_fence_create")) {
    api_status(call,
               weft_fence_insert(api_ptr(call, 0, "fence", fence),
                                 api_ptr(call, 1, "semaphore", semaphore), 1));
    uint32_t count = weft_fence_count(fence);
    if (count != (api_ok(call) ? 1u : 0u)) {
      api_problem(call, "the fence holds %u entries", count);
    }
  }
  weft_fence_release(fence);
  weft_semaphore_release(semaphore);
}

static void fence_extend(api_call_t* call) {
  weft_semaphore_t* semaphore = NULL;
  weft_fence_t* other = make_fence(call, 0, 1, &semaphore);
  weft_fence_t* fence = NULL;
  if (other && api_setup(call, weft_fence_create(4, call->allocator, &fence),
                         "weft_fence_create")) {
    api_status(call, weft_fence_extend(api_ptr(call, 0, "fence", fence),
                                       api_ptr(call, 1, "other", other)));
  }
  weft_fence_release(fence);
  weft_fence_release(other);
  weft_semaphore_release(semaphore);
}

static void fence_join(api_call_t* call) {
  api_value(call, 0, "count");
  weft_semaphore_t* semaphore = NULL;
  weft_fence_t* fences[1] = {make_fence(call, 0, 1, &semaphore)};
  if (!fences[0]) return;
  weft_fence_t* joined = NULL;
  api_status(call, weft_fence_join(
                       1, api_ptr(call, 1, "fences", fences),
                       api_allocator(call, 2, "allocator"),
                       api_out(call, 3, "out_fence", &joined, sizeof(joined))));
  api_check_out(call, 3, &joined, sizeof(joined));
  if (api_ok(call)) weft_fence_release(joined);
  weft_fence_release(fences[0]);
  weft_semaphore_release(semaphore);
}

static void fence_count(api_call_t* call) {
  weft_semaphore_t* semaphore = NULL;
  weft_fence_t* fence = make_fence(call, 0, 1, &semaphore);
  if (!fence) return;
  uint32_t count = weft_fence_count(api_ptr(call, 0, "fence", fence));
  if (call->broken_index < 0 && count != 1) {
    api_problem(call, "count %u", count);
  }
  api_expect_neutral(call, count == 0, "%u, expected 0", count);
  weft_fence_release(fence);
  weft_semaphore_release(semaphore);
}

static void fence_as_list(api_call_t* call) {
  weft_semaphore_t* semaphore = NULL;
  weft_fence_t* fence = make_fence(call, 0, 1, &semaphore);
  if (!fence) return;
  weft_semaphore_list_t list =
      weft_fence_as_list(api_ptr(call, 0, "fence", fence));
  if (call->broken_index < 0 && (list.count != 1 || !list.semaphores ||
                                 list.semaphores[0] != semaphore)) {
    api_problem(call, "the list does not hold the fence's semaphore");
  }
  api_expect_neutral(call, !list.count && !list.semaphores && !list.values,
                     "{%u, %p, %p}, expected {0, NULL, NULL}", list.count,
                     (void*)list.semaphores, (const void*)list.values);
  weft_fence_release(fence);
  weft_semaphore_release(semaphore);
}

static void fence_signal(api_call_t* call) {
  weft_semaphore_t* semaphore = NULL;
  weft_fence_t* fence = make_fence(call, 0, 1, &semaphore);
  if (!fence) return;
  api_status(call, weft_fence_signal(api_ptr(call, 0, "fence", fence)));
  if (!api_ok(call)) api_check_untouched(call, semaphore, 0, "the semaphore");
  weft_fence_release(fence);
  weft_semaphore_release(semaphore);
}

static void fence_fail(api_call_t* call) {
  api_value(call, 1, "status");
  weft_semaphore_t* semaphore = NULL;
  weft_fence_t* fence = make_fence(call, 0, 1, &semaphore);
  if (!fence) return;
  weft_fence_fail(api_ptr(call, 0, "fence", fence),
                  WEFT_STATUS(DATA_LOSS, "planted"));
  if (call->broken_index < 0 && !semaphore_has_failed(semaphore)) {
    api_problem(call, "the semaphore did not fail");
  }
  weft_fence_release(fence);
  weft_semaphore_release(semaphore);
}

static void fence_query(api_call_t* call) {
  weft_semaphore_t* semaphore = NULL;
  weft_fence_t* fence = make_fence(call, 1, 1, &semaphore);
  if (!fence) return;
  api_status(call, weft_fence_query(api_ptr(call, 0, "fence", fence)));
  weft_fence_release(fence);
  weft_semaphore_release(semaphore);
}

static void fence_wait(api_call_t* call) {
  api_value(call, 1, "timeout");
  weft_semaphore_t* semaphore = NULL;
  weft_fence_t* fence = make_fence(call, 1, 1, &semaphore);
  if (!fence) return;
  api_status(call, weft_fence_wait(api_ptr(call, 0, "fence", fence),
                                   weft_timeout_relative(SECOND_NS)));
  weft_fence_release(fence);
  weft_semaphore_release(semaphore);
}

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

const api_entry_t api_table_semaphore[] = {
    {"weft_semaphore_create", semaphore_create, WEFT_STATUS_OK},
    {"weft_semaphore_retain", semaphore_retain, WEFT_STATUS_OK},
    {"weft_semaphore_release", semaphore_release, WEFT_STATUS_OK},
    {"weft_semaphore_set_name", semaphore_set_name, WEFT_STATUS_OK},
    {"weft_semaphore_name", semaphore_name, WEFT_STATUS_OK},
    {"weft_semaphore_query", semaphore_query, WEFT_STATUS_OK},
    {"weft_semaphore_signal", semaphore_signal, WEFT_STATUS_OK},
    {"weft_semaphore_fail", semaphore_fail, WEFT_STATUS_OK},
    {"weft_semaphore_wait", semaphore_wait, WEFT_STATUS_OK},
    {"weft_semaphore_list_wait", semaphore_list_wait, WEFT_STATUS_OK},
    {"weft_semaphore_list_signal", semaphore_list_signal, WEFT_STATUS_OK},
    {"weft_semaphore_list_fail", semaphore_list_fail, WEFT_STATUS_OK},
    {"weft_semaphore_list_is_reached", semaphore_list_is_reached,
     WEFT_STATUS_OK},
    {"weft_semaphore_register_timepoint", semaphore_register_timepoint,
     WEFT_STATUS_OK},
    {"weft_semaphore_cancel_timepoint", semaphore_cancel_timepoint,
     WEFT_STATUS_OK},
    {"weft_fence_create", fence_create, WEFT_STATUS_OK},
    {"weft_fence_create_at", fence_create_at, WEFT_STATUS_OK},
    {"weft_fence_create_from_list", fence_create_from_list, WEFT_STATUS_OK},
    {"weft_fence_retain", fence_retain, WEFT_STATUS_OK},
    {"weft_fence_release", fence_release, WEFT_STATUS_OK},
    {"weft_fence_insert", fence_insert, WEFT_STATUS_OK},
    {"weft_fence_extend", fence_extend, WEFT_STATUS_OK},
    {"weft_fence_join", fence_join, WEFT_STATUS_OK},
    {"weft_fence_count", fence_count, WEFT_STATUS_OK},
    {"weft_fence_as_list", fence_as_list, WEFT_STATUS_OK},
    {"weft_fence_signal", fence_signal, WEFT_STATUS_OK},
    {"weft_fence_fail", fence_fail, WEFT_STATUS_OK},
    {"weft_fence_query", fence_query, WEFT_STATUS_OK},
    {"weft_fence_wait", fence_wait, WEFT_STATUS_OK},
};
const size_t api_table_semaphore_count =
    sizeof(api_table_semaphore) / sizeof(api_table_semaphore[0]);
