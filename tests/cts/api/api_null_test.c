// CTS: NULL arguments at every public entry point (issue 10).
//
// The contract, for every function declared in include/weft/*.h and the
// headers of its folders (include/weft/vm/*.h):
//  1. given NULL for a required pointer (a handle, an array with a non-zero
//     count, an out-parameter, a function pointer), a function returning
//     weft_status_t returns INVALID_ARGUMENT naming itself and the argument
//     ("weft_device_queue_fill: target is NULL");
//  2. and touches nothing: no semaphore signalled or failed, nothing left
//     allocated, every non-NULL out-parameter set to NULL/0;
//  3. a pointer is nullable exactly when the doc comment above the
//     declaration says "|name| may be NULL" (not followed by " when");
//     a nullable NULL is not refused as NULL;
//  4. functions returning no status do nothing and return a neutral value
//     (0, false, NULL, "", -1 for weft_file_fd, ...), and free a status
//     they were handed;
//  5. semaphore lists ({1, NULL, values}, {1, semaphores, NULL},
//     {1, {NULL}, values}) and binding tables ({1, NULL}) are refused like
//     NULL pointers, naming the argument;
//  6. an allocator {NULL, NULL} is INVALID_ARGUMENT mentioning "allocator".
//
// The headers are parsed (api_header_parser.c) and checked against the table
// (api_table_*.c): a function without an entry, or an entry without a
// function, fails the suite. Each call runs in a child process with its own
// device and a counting allocator, so a crash or a hang is reported as such
// ("weft_x(arg NULL) crashed with signal 11") and the run goes on; the
// child also reports what was left allocated once everything is released
// (and, under ASan, what LeakSanitizer finds). Every violation is printed,
// then the case fails with their count.
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "api_header_parser.h"
#include "api_table.h"
#include "cts.h"

#if defined(__SANITIZE_ADDRESS__)
#define API_NULL_HAVE_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define API_NULL_HAVE_LSAN 1
#endif
#endif
#if defined(API_NULL_HAVE_LSAN)
#include <sanitizer/lsan_interface.h>
#endif

#ifndef WEFT_PUBLIC_INCLUDE_DIR
#error "WEFT_PUBLIC_INCLUDE_DIR must name include/weft"
#endif

// How long one child may run (a hang is reported, not waited out).
#define API_CHILD_TIMEOUT_MS 20000

//===----------------------------------------------------------------------===//
// The table and the headers
//===----------------------------------------------------------------------===//

typedef struct api_table_part_t {
  const api_entry_t* entries;
  const size_t* count;
} api_table_part_t;

static const api_table_part_t kTableParts[] = {
    {api_table_base, &api_table_base_count},
    {api_table_buffer, &api_table_buffer_count},
    {api_table_semaphore, &api_table_semaphore_count},
    {api_table_file, &api_table_file_count},
    {api_table_device, &api_table_device_count},
    {api_table_channel, &api_table_channel_count},
    {api_table_vm, &api_table_vm_count},
};

static const api_entry_t* find_entry(const char* name) {
  for (size_t p = 0; p < WEFT_CTS_COUNT(kTableParts); ++p) {
    for (size_t i = 0; i < *kTableParts[p].count; ++i) {
      if (strcmp(kTableParts[p].entries[i].name, name) == 0) {
        return &kTableParts[p].entries[i];
      }
    }
  }
  return NULL;
}

static void parse_headers(api_function_list_t* list) {
  char error[1024];
  memset(list, 0, sizeof(*list));
  if (!api_parse_headers(WEFT_PUBLIC_INCLUDE_DIR, list, error, sizeof(error))) {
    fail_msg("parsing %s: %s", WEFT_PUBLIC_INCLUDE_DIR, error);
  }
}

// Every header function has an entry, every entry a header function, and no
// name is listed twice.
static void table_matches_headers(void** state) {
  api_function_list_t list;
  parse_headers(&list);
  uint32_t problems = 0;
  uint32_t arguments = 0;
  for (uint32_t i = 0; i < list.count; ++i) {
    const api_function_t* function = &list.functions[i];
    for (uint32_t j = 0; j < function->param_count; ++j) {
      const api_param_t* param = &function->params[j];
      arguments += param->is_pointer || param->is_semaphore_list ||
                   param->is_binding_table || param->is_allocator;
    }
    if (!find_entry(function->name)) {
      print_error(
          "%s:%d: %s has no entry in the api_null table "
          "(tests/cts/api/api_table_*.c)\n",
          function->header, function->line, function->name);
      ++problems;
    }
    for (uint32_t k = 0; k < i; ++k) {
      if (strcmp(list.functions[k].name, function->name) == 0) {
        print_error("%s is declared twice\n", function->name);
        ++problems;
      }
    }
  }
  uint32_t entries = 0;
  for (size_t p = 0; p < WEFT_CTS_COUNT(kTableParts); ++p) {
    for (size_t i = 0; i < *kTableParts[p].count; ++i) {
      const char* name = kTableParts[p].entries[i].name;
      ++entries;
      if (!api_function_list_find(&list, name)) {
        print_error("table entry %s is not declared in any public header\n",
                    name);
        ++problems;
      }
      if (find_entry(name) != &kTableParts[p].entries[i]) {
        print_error("table entry %s is listed twice\n", name);
        ++problems;
      }
    }
  }
  print_message(
      "api_null: %u functions in %s (%u pointer, list, table or "
      "allocator arguments), %u table entries\n",
      list.count, WEFT_PUBLIC_INCLUDE_DIR, arguments, entries);
  api_function_list_free(&list);
  if (problems)
    fail_msg("%u mismatches between the headers and the table", problems);
}

//===----------------------------------------------------------------------===//
// One call in a child process
//===----------------------------------------------------------------------===//

// What a child sends back: once after the call (stage 1), once after
// releasing everything (stage 2).
typedef struct api_report_t {
  int stage;
  bool has_status;
  weft_status_code_t code;
  uint32_t consulted;
  int64_t live_allocations;
  int leak_check_failed;
  char status_text[API_TEXT_CAPACITY];
  char problems[API_TEXT_CAPACITY];
} api_report_t;

static void write_report(int fd, const api_report_t* report) {
  const char* bytes = (const char*)report;
  size_t left = sizeof(*report);
  while (left > 0) {
    ssize_t written = write(fd, bytes, left);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return;
    bytes += written;
    left -= (size_t)written;
  }
}

// The signals cmocka turns into test failures. A child must die of them
// (or let a sanitizer report them), not longjmp back into the parent's
// copy of the test: main() saves the handlers cmocka replaces and the child
// puts them back.
static const int kCrashSignals[] = {SIGSEGV, SIGBUS, SIGILL,
                                    SIGFPE,  SIGSYS, SIGABRT};
static struct sigaction g_crash_actions[WEFT_CTS_COUNT(kCrashSignals)];

static void save_crash_handlers(void) {
  for (size_t i = 0; i < WEFT_CTS_COUNT(kCrashSignals); ++i) {
    sigaction(kCrashSignals[i], NULL, &g_crash_actions[i]);
  }
}

static void restore_crash_handlers(void) {
  for (size_t i = 0; i < WEFT_CTS_COUNT(kCrashSignals); ++i) {
    sigaction(kCrashSignals[i], &g_crash_actions[i], NULL);
  }
}

static const char* kernel_module_path(void) {
  const char* path = getenv("WEFT_CTS_KERNEL_LIBRARY");
  return path && path[0] ? path : WEFT_CTS_KERNEL_MODULE_PATH;
}

// Runs |entry| in this (child) process and reports to |fd|; never returns.
static void run_child(const api_entry_t* entry, const api_function_t* function,
                      int broken_index, api_variant_t variant, int fd) {
  restore_crash_handlers();
  // Counts live allocations of everything the child creates.
  weft_cts_counting_allocator_t counter;
  const weft_allocator_t counting =
      weft_cts_counting_allocator_initialize(weft_allocator_system(), &counter);
  api_call_t call;
  memset(&call, 0, sizeof(call));
  call.function = function;
  call.broken_index = broken_index;
  call.variant = variant;
  call.device_string = weft_cts_device_string();
  call.allocator = counting;
  call.kernel_module_path = kernel_module_path();
  // The kernels are made only for the functions that need them
  // (api_kernels): on a GPU driver they are compiled in every child.
  if (api_setup(&call,
                weft_device_create(call.device_string, counting, &call.device),
                "weft_device_create")) {
    entry->thunk(&call);
  }
  api_report_t report;
  memset(&report, 0, sizeof(report));
  report.stage = 1;
  report.has_status = call.has_status;
  report.code = call.code;
  report.consulted = call.consulted;
  memcpy(report.status_text, call.status_text, sizeof(report.status_text));
  memcpy(report.problems, call.problems, sizeof(report.problems));
  write_report(fd, &report);

  weft_executable_release(call.kernels);
  weft_device_release(call.device);
  report.stage = 2;
  report.live_allocations = weft_cts_counting_allocator_live(&counter);
#if defined(API_NULL_HAVE_LSAN)
  report.leak_check_failed = __lsan_do_recoverable_leak_check();
#endif
  write_report(fd, &report);
  close(fd);
  _exit(0);
}

// How one child ended.
#define API_STDERR_CAPACITY (32 * 1024)

typedef struct api_child_result_t {
  int reports;  // 0, 1 or 2 stages received
  api_report_t report;
  bool timed_out;
  int wait_status;
  // What the child wrote to stderr (a sanitizer's report, say).
  char stderr_text[API_STDERR_CAPACITY];
  size_t stderr_length;
} api_child_result_t;

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void run_in_child(const api_entry_t* entry,
                         const api_function_t* function, int broken_index,
                         api_variant_t variant, api_child_result_t* result) {
  memset(result, 0, sizeof(*result));
  int report_fds[2];
  int stderr_fds[2];
  if (pipe(report_fds) != 0 || pipe(stderr_fds) != 0) {
    fail_msg("pipe: %s", strerror(errno));
  }
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) fail_msg("fork: %s", strerror(errno));
  if (pid == 0) {
    close(report_fds[0]);
    close(stderr_fds[0]);
    dup2(stderr_fds[1], STDERR_FILENO);
    close(stderr_fds[1]);
    run_child(entry, function, broken_index, variant, report_fds[1]);
  }
  close(report_fds[1]);
  close(stderr_fds[1]);
  // Read whole reports and the child's stderr until both pipes reach EOF
  // (the child exited) or the deadline passes.
  api_report_t incoming;
  size_t have = 0;
  struct pollfd fds[2] = {{report_fds[0], POLLIN, 0},
                          {stderr_fds[0], POLLIN, 0}};
  int open_count = 2;
  int64_t deadline = now_ms() + API_CHILD_TIMEOUT_MS;
  while (open_count > 0) {
    int64_t left = deadline - now_ms();
    if (left <= 0) {
      result->timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    int ready = poll(fds, 2, (int)left);
    if (ready <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !fds[i].revents) continue;
      char scratch[4096];
      char* target = scratch;
      size_t room = sizeof(scratch);
      if (i == 0) {
        target = (char*)&incoming + have;
        room = sizeof(incoming) - have;
      }
      ssize_t got = read(fds[i].fd, target, room);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        fds[i].fd = -1;
        --open_count;
        continue;
      }
      if (i == 0) {
        have += (size_t)got;
        if (have == sizeof(incoming)) {
          result->report = incoming;
          ++result->reports;
          have = 0;
        }
      } else {
        size_t keep = API_STDERR_CAPACITY - 1 - result->stderr_length;
        if (keep > (size_t)got) keep = (size_t)got;
        memcpy(result->stderr_text + result->stderr_length, scratch, keep);
        result->stderr_length += keep;
      }
    }
  }
  close(report_fds[0]);
  close(stderr_fds[0]);
  while (waitpid(pid, &result->wait_status, 0) < 0 && errno == EINTR) {
  }
}

//===----------------------------------------------------------------------===//
// Judging a call
//===----------------------------------------------------------------------===//

typedef struct api_run_t {
  uint32_t violations;
  uint32_t calls;
} api_run_t;

static void violation(api_run_t* run, const char* format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void violation(api_run_t* run, const char* format, ...) {
  char text[3 * API_TEXT_CAPACITY];
  va_list args;
  va_start(args, format);
  vsnprintf(text, sizeof(text), format, args);
  va_end(args);
  print_error("VIOLATION %s\n", text);
  ++run->violations;
}

// "weft_x(arg NULL)", "weft_x(wait_list {count 1, values NULL})" or
// "weft_x(baseline)".
static void describe_call(const api_function_t* function, int broken_index,
                          api_variant_t variant, char* text, size_t capacity) {
  if (broken_index < 0) {
    snprintf(text, capacity, "%s(baseline: nothing NULL)", function->name);
  } else {
    snprintf(text, capacity, "%s(%s %s)", function->name,
             function->params[broken_index].name,
             api_variant_describe(variant));
  }
}

// The line of the child's stderr that says what a sanitizer found: its
// "SUMMARY: " line, else a "runtime error: " line (UBSan), else an
// "ERROR: " line; "" when there is none.
static void find_summary(const api_child_result_t* result, char* text,
                         size_t capacity) {
  static const char* const kMarkers[] = {
      "SUMMARY: ", "runtime error: ", "ERROR: ", "WARNING: "};
  text[0] = '\0';
  const char* all = result->stderr_text;
  for (size_t i = 0; i < WEFT_CTS_COUNT(kMarkers); ++i) {
    const char* hit = strstr(all, kMarkers[i]);
    if (!hit) continue;
    const char* line = hit;
    if (i == 0) {
      line = hit + strlen(kMarkers[0]);
    } else {
      while (line > all && line[-1] != '\n') --line;
    }
    size_t length = strcspn(line, "\n");
    snprintf(text, capacity, "%.*s", (int)length, line);
    return;
  }
}

// True when a sanitizer wrote a report to the child's stderr.
static bool child_stderr_has_report(const api_child_result_t* result) {
  const char* text = result->stderr_text;
  return strstr(text, "WARNING: ThreadSanitizer") ||
         strstr(text, "ERROR: AddressSanitizer") ||
         strstr(text, "ERROR: LeakSanitizer") ||
         strstr(text, "runtime error: ");
}

static void describe_exit(const api_child_result_t* result, char* text,
                          size_t capacity) {
  int status = result->wait_status;
  char summary[512];
  find_summary(result, summary, sizeof(summary));
  if (result->timed_out) {
    snprintf(text, capacity, "hung (killed after %d s)",
             API_CHILD_TIMEOUT_MS / 1000);
  } else if (WIFSIGNALED(status)) {
    snprintf(text, capacity, "crashed with signal %d (%s)", WTERMSIG(status),
             strsignal(WTERMSIG(status)));
  } else if (WIFEXITED(status) && summary[0]) {
    snprintf(text, capacity, "died with status %d: %s", WEXITSTATUS(status),
             summary);
  } else if (WIFEXITED(status)) {
    snprintf(text, capacity, "exited with status %d", WEXITSTATUS(status));
  } else {
    snprintf(text, capacity, "ended with wait status %d", status);
  }
}

// Prints what the child wrote to stderr, indented, under its violation.
static void print_child_stderr(const api_child_result_t* result) {
  const char* line = result->stderr_text;
  while (*line) {
    size_t length = strcspn(line, "\n");
    print_error("    | %.*s\n", (int)length, line);
    line += length;
    if (*line == '\n') ++line;
  }
}

// Checks the returned status of a broken call against rules 1, 3, 5, 6.
static void judge_status(api_run_t* run, const char* what,
                         const api_function_t* function,
                         const api_param_t* param, api_variant_t variant,
                         const api_report_t* report) {
  bool invalid = report->code == WEFT_STATUS_INVALID_ARGUMENT;
  const char* text = report->status_text;
  if (variant == API_VARIANT_NULL && param->is_nullable) {
    if (invalid && api_text_has_word(text, param->name)) {
      violation(run,
                "%s returned INVALID_ARGUMENT naming '%s', which the header "
                "says may be NULL: %s",
                what, param->name, text);
    }
  } else if (variant == API_VARIANT_ALLOCATOR_NULL) {
    if (!invalid || !strstr(text, "allocator")) {
      violation(run,
                "%s returned '%s', expected INVALID_ARGUMENT mentioning "
                "'allocator'",
                what, text);
    }
  } else if (!invalid || !strstr(text, function->name) ||
             !api_text_has_word(text, param->name)) {
    violation(run,
              "%s returned '%s', expected INVALID_ARGUMENT naming '%s' and "
              "'%s'",
              what, text, function->name, param->name);
  }
}

// Judges one call against the contract (see the top of the file).
static void judge_child(api_run_t* run, const api_entry_t* entry,
                        const api_function_t* function, int broken_index,
                        api_variant_t variant,
                        const api_child_result_t* result) {
  char what[256];
  describe_call(function, broken_index, variant, what, sizeof(what));
  const api_report_t* report = &result->report;
  char ended[768];
  describe_exit(result, ended, sizeof(ended));
  if (result->reports == 0) {
    violation(run, "%s %s", what, ended);
    return;
  }
  if (report->problems[0]) violation(run, "%s: %s", what, report->problems);
  if (broken_index >= 0 && !(report->consulted & (1u << broken_index))) {
    violation(run, "%s: table: the thunk never passes argument %d", what,
              broken_index);
  }
  bool returns_status = api_function_returns_status(function);
  if (returns_status != report->has_status) {
    // A setup failure already explains a missing status.
    if (!report->problems[0]) {
      violation(run, "%s: table: the thunk %s a status", what,
                report->has_status ? "recorded" : "did not record");
    }
  } else if (returns_status && broken_index < 0) {
    if (report->code != entry->baseline_code) {
      violation(run, "%s returned '%s', expected %s", what, report->status_text,
                weft_status_code_string(entry->baseline_code));
    }
  } else if (returns_status) {
    judge_status(run, what, function, &function->params[broken_index], variant,
                 report);
  }
  if (result->reports == 1) {
    violation(run,
              "%s %s while releasing what the call left (after it "
              "returned '%s')",
              what, ended, report->has_status ? report->status_text : "");
    return;
  }
  if (report->live_allocations != 0) {
    violation(run,
              "%s left %lld allocations live after everything was "
              "released",
              what, (long long)report->live_allocations);
  }
  if (report->leak_check_failed) {
    char summary[512];
    find_summary(result, summary, sizeof(summary));
    violation(run, "%s leaked memory: %s", what,
              summary[0] ? summary : "(see LeakSanitizer's report)");
  }
  if (!WIFEXITED(result->wait_status) ||
      WEXITSTATUS(result->wait_status) != 0) {
    violation(run, "%s %s after reporting", what, ended);
  } else if (child_stderr_has_report(result)) {
    // The child exits with _exit(0), so a sanitizer that only reports
    // (ThreadSanitizer, a recoverable UBSan check) changes no exit status.
    char summary[512];
    find_summary(result, summary, sizeof(summary));
    violation(run, "%s: a sanitizer reported: %s", what, summary);
  }
}

static void run_one(api_run_t* run, const api_entry_t* entry,
                    const api_function_t* function, int broken_index,
                    api_variant_t variant) {
  api_child_result_t result;  // 36 KiB, on the test thread's stack
  run_in_child(entry, function, broken_index, variant, &result);
  ++run->calls;
  judge_child(run, entry, function, broken_index, variant, &result);
  // A crash, a sanitizer's report or a leak: show what the child said.
  bool abnormal = result.timed_out || !WIFEXITED(result.wait_status) ||
                  WEXITSTATUS(result.wait_status) != 0 ||
                  result.report.leak_check_failed ||
                  child_stderr_has_report(&result);
  const char* verbose = getenv("WEFT_API_NULL_VERBOSE");
  if (verbose && verbose[0]) {
    char what[256];
    describe_call(function, broken_index, variant, what, sizeof(what));
    print_message(
        "  %s -> %s\n", what,
        result.report.has_status ? result.report.status_text : "(no status)");
  }
  if (result.stderr_length > 0 && (abnormal || (verbose && verbose[0]))) {
    print_child_stderr(&result);
  }
}

// Runs the baseline and every broken variant of every argument of
// |function|; returns the number of broken calls made.
static uint32_t run_function(api_run_t* run, const api_entry_t* entry,
                             const api_function_t* function) {
  static const api_variant_t kListVariants[] = {
      API_VARIANT_LIST_SEMAPHORES_NULL,
      API_VARIANT_LIST_VALUES_NULL,
      API_VARIANT_LIST_ENTRY_NULL,
  };
  run_one(run, entry, function, -1, API_VARIANT_NONE);
  uint32_t calls = 0;
  for (uint32_t i = 0; i < function->param_count; ++i) {
    const api_param_t* param = &function->params[i];
    if (param->is_pointer) {
      run_one(run, entry, function, (int)i, API_VARIANT_NULL);
      ++calls;
    } else if (param->is_semaphore_list) {
      for (size_t v = 0; v < WEFT_CTS_COUNT(kListVariants); ++v) {
        run_one(run, entry, function, (int)i, kListVariants[v]);
        ++calls;
      }
    } else if (param->is_binding_table) {
      run_one(run, entry, function, (int)i, API_VARIANT_TABLE_BINDINGS_NULL);
      ++calls;
    } else if (param->is_allocator) {
      run_one(run, entry, function, (int)i, API_VARIANT_ALLOCATOR_NULL);
      ++calls;
    }
  }
  return calls;
}

// Every function, every argument, in a child process each.
// WEFT_API_NULL_FILTER=substring runs only the functions whose name contains
// it; WEFT_API_NULL_VERBOSE=1 prints every call's status and the children's
// stderr.
static void null_arguments(void** state) {
  api_function_list_t list;
  parse_headers(&list);
  const char* filter = getenv("WEFT_API_NULL_FILTER");
  api_run_t run = {0, 0};
  uint32_t functions = 0;
  uint32_t broken_calls = 0;
  for (uint32_t i = 0; i < list.count; ++i) {
    const api_function_t* function = &list.functions[i];
    if (filter && filter[0] && !strstr(function->name, filter)) continue;
    const api_entry_t* entry = find_entry(function->name);
    if (!entry) continue;  // reported by table_matches_headers
    ++functions;
    broken_calls += run_function(&run, entry, function);
  }
  print_message(
      "api_null on %s: %u functions, %u broken calls (and %u "
      "baselines), %u violations\n",
      weft_cts_device_string(), functions, broken_calls, functions,
      run.violations);
  api_function_list_free(&list);
  if (run.violations) {
    fail_msg("%u violations of the NULL-argument contract (listed above)",
             run.violations);
  }
}

int main(int argc, char** argv) {
  // No per-case device: the parent stays single-threaded for fork(); each
  // child creates its own.
  save_crash_handlers();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(table_matches_headers),
      cmocka_unit_test(null_arguments),
  };
  return weft_cts_run("api_null", tests, WEFT_CTS_COUNT(tests), argc, argv);
}
