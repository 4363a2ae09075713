// Tests of hang reports: weft_device_dump_pending and weft_diagnostics_dump
// list stuck ops with their waits, the cycle search finds a planted cycle
// and nothing else, and the watchdog turns a stuck host wait into a report
// or DEADLINE_EXCEEDED; a wait no pending op will signal is marked as one
// only the host can satisfy. Each case runs on local-sync and local-task.
// clang-format off
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hal/diagnostics.h"
#include "weft/diagnostics.h"
#include "weft/weft.h"

static const char* const kDevices[] = {"local-sync", "local-task?workers=2"};
#define DEVICE_COUNT (sizeof(kDevices) / sizeof(kDevices[0]))

static void assert_ok(weft_status_t status) {
  if (!weft_status_is_ok(status)) {
    fprintf(stderr, "unexpected status: %s\n", weft_status_message(status));
    weft_status_free(status);
    fail();
  }
}

static weft_semaphore_t* make_semaphore(const char* name) {
  weft_semaphore_t* semaphore = NULL;
  assert_ok(weft_semaphore_create(weft_allocator_system(), 0, &semaphore));
  weft_semaphore_set_name(semaphore, name);
  return semaphore;
}

static weft_semaphore_list_t list1(weft_semaphore_t** semaphore,
                                   uint64_t* value) {
  weft_semaphore_list_t list = {1, semaphore, value};
  return list;
}

// Captures what |fn| writes to a stream; the caller frees the text.
static char* capture_device_dump(weft_device_t* device) {
  char* text = NULL;
  size_t length = 0;
  FILE* stream = open_memstream(&text, &length);
  assert_non_null(stream);
  weft_device_dump_pending(device, stream);
  fclose(stream);
  return text;
}

static char* capture_cycles(uint32_t* out_count) {
  char* text = NULL;
  size_t length = 0;
  FILE* stream = open_memstream(&text, &length);
  assert_non_null(stream);
  *out_count = weft_diagnostics_find_cycles(stream);
  fclose(stream);
  return text;
}

static void dump_lists_a_stuck_op(void** state) {
  (void)state;
  for (size_t d = 0; d < DEVICE_COUNT; ++d) {
    weft_device_t* device = NULL;
    assert_ok(weft_device_create(kDevices[d], weft_allocator_system(),
                                 &device));
    weft_semaphore_t* gate = make_semaphore("weights-loaded");
    weft_semaphore_t* done = make_semaphore("step-done");
    uint64_t seven = 7;
    uint64_t one = 1;
    assert_ok(weft_semaphore_signal(gate, 2));
    assert_ok(weft_device_queue_barrier(device, WEFT_QUEUE_AFFINITY_ANY,
                                        list1(&gate, &seven),
                                        list1(&done, &one)));
    char* text = capture_device_dump(device);
    // The op, its wait (name, wanted, now) and its signal.
    assert_non_null(strstr(text, "1 pending operation"));
    assert_non_null(strstr(text, "queue_barrier on queue 0: waiting"));
    assert_non_null(
        strstr(text, "waits for semaphore 'weights-loaded' to reach 7: now 2"));
    assert_non_null(strstr(text, "then signals semaphore 'step-done' to 1"));
    assert_non_null(strstr(text, "submitted"));
    free(text);

    // The process-wide report names the device too.
    text = NULL;
    size_t length = 0;
    FILE* stream = open_memstream(&text, &length);
    weft_diagnostics_dump(stream);
    fclose(stream);
    assert_non_null(strstr(text, kDevices[d]));
    assert_non_null(strstr(text, "'weights-loaded' to reach 7"));
    free(text);

    assert_ok(weft_semaphore_signal(gate, 7));
    assert_ok(weft_semaphore_wait(done, 1, weft_timeout_infinite()));
    // An op retires just after it signals: give it a moment to.
    text = capture_device_dump(device);
    for (int i = 0; i < 1000 && !strstr(text, "0 pending operations"); ++i) {
      free(text);
      struct timespec pause = {0, 1000000};
      nanosleep(&pause, NULL);
      text = capture_device_dump(device);
    }
    assert_non_null(strstr(text, "0 pending operations"));
    assert_null(strstr(text, "queue_barrier"));
    free(text);
    weft_semaphore_release(gate);
    weft_semaphore_release(done);
    weft_device_release(device);
  }
}

static void planted_two_op_cycle_is_found(void** state) {
  (void)state;
  for (size_t d = 0; d < DEVICE_COUNT; ++d) {
    weft_device_t* device = NULL;
    assert_ok(weft_device_create(kDevices[d], weft_allocator_system(),
                                 &device));
    weft_semaphore_t* a = make_semaphore("a");
    weft_semaphore_t* b = make_semaphore("b");
    uint64_t one = 1;
    // One barrier waits a >= 1 and signals b = 1, the other waits b >= 1
    // and signals a = 1: each waits on what only the other signals.
    assert_ok(weft_device_queue_barrier(device, WEFT_QUEUE_AFFINITY_ANY,
                                        list1(&a, &one), list1(&b, &one)));
    assert_ok(weft_device_queue_barrier(device, WEFT_QUEUE_AFFINITY_ANY,
                                        list1(&b, &one), list1(&a, &one)));
    uint32_t count = 0;
    char* text = capture_cycles(&count);
    assert_int_equal(count, 1);
    assert_non_null(strstr(text, "wait-for cycle 1 (2 operations"));
    assert_non_null(strstr(text, "waits for semaphore 'a' to reach 1"));
    assert_non_null(strstr(text, "waits for semaphore 'b' to reach 1"));
    free(text);
    // The device's own report ends with the cycle as well.
    text = capture_device_dump(device);
    assert_non_null(strstr(text, "wait-for cycle"));
    free(text);

    // Something outside weft breaks it: the host signals a.
    assert_ok(weft_semaphore_signal(a, 1));
    assert_ok(weft_semaphore_wait(b, 1, weft_timeout_infinite()));
    text = capture_cycles(&count);
    assert_int_equal(count, 0);
    free(text);
    weft_semaphore_release(a);
    weft_semaphore_release(b);
    weft_device_release(device);
  }
}

static void chains_and_host_waits_are_not_cycles(void** state) {
  (void)state;
  for (size_t d = 0; d < DEVICE_COUNT; ++d) {
    weft_device_t* device = NULL;
    assert_ok(weft_device_create(kDevices[d], weft_allocator_system(),
                                 &device));
    weft_semaphore_t* timeline = make_semaphore("timeline");
    weft_semaphore_t* other = make_semaphore("other");
    // A chain submitted in reverse: op i waits timeline >= i and signals
    // i + 1; only the host's signal of 1 starts it. Plus two ops that both
    // wait on the same value of a semaphore the other signals past it
    // (ambiguous signallers: never an edge).
    for (uint64_t i = 8; i >= 1; --i) {
      uint64_t wait_value = i;
      uint64_t signal_value = i + 1;
      assert_ok(weft_device_queue_barrier(
          device, WEFT_QUEUE_AFFINITY_ANY, list1(&timeline, &wait_value),
          list1(&timeline, &signal_value)));
    }
    // And a two-link chain on distinct semaphores: edges, but no cycle.
    weft_semaphore_t* s1 = make_semaphore("s1");
    weft_semaphore_t* s2 = make_semaphore("s2");
    weft_semaphore_t* s3 = make_semaphore("s3");
    uint64_t one = 1;
    assert_ok(weft_device_queue_barrier(device, WEFT_QUEUE_AFFINITY_ANY,
                                        list1(&s2, &one), list1(&s3, &one)));
    assert_ok(weft_device_queue_barrier(device, WEFT_QUEUE_AFFINITY_ANY,
                                        list1(&s1, &one), list1(&s2, &one)));
    uint64_t five = 5;
    uint64_t six = 6;
    assert_ok(weft_device_queue_barrier(device, WEFT_QUEUE_AFFINITY_ANY,
                                        list1(&other, &five),
                                        list1(&timeline, &six)));
    uint32_t count = 0;
    char* text = capture_cycles(&count);
    assert_int_equal(count, 0);
    assert_null(strstr(text, "wait-for cycle"));
    free(text);
    assert_ok(weft_semaphore_signal(timeline, 1));
    assert_ok(weft_semaphore_wait(timeline, 9, weft_timeout_infinite()));
    // The last barrier is still parked on |other|; release it.
    assert_ok(weft_semaphore_signal(other, 5));
    assert_ok(weft_semaphore_signal(s1, 1));
    assert_ok(weft_semaphore_wait(s3, 1, weft_timeout_infinite()));
    weft_semaphore_release(s1);
    weft_semaphore_release(s2);
    weft_semaphore_release(s3);
    weft_semaphore_release(timeline);
    weft_semaphore_release(other);
    weft_device_release(device);
  }
}

// Fails unless |text| contains |needle| (printing both otherwise).
static void assert_report_contains(const char* text, const char* needle) {
  if (!strstr(text, needle)) {
    fail_msg("the report lacks \"%s\":\n%s", needle, text);
  }
}

static void assert_report_lacks(const char* text, const char* needle) {
  if (strstr(text, needle)) {
    fail_msg("the report should not contain \"%s\":\n%s", needle, text);
  }
}

static void release_all(weft_semaphore_t** semaphores, size_t count) {
  for (size_t i = 0; i < count; ++i) weft_semaphore_release(semaphores[i]);
}

// A wait that no pending op will ever signal is marked; one that another
// pending op signals far enough is not; the mark goes once such an op is
// submitted.
static void waits_only_the_host_can_satisfy_are_marked(void** state) {
  (void)state;
  for (size_t d = 0; d < DEVICE_COUNT; ++d) {
    weft_device_t* device = NULL;
    assert_ok(weft_device_create(kDevices[d], weft_allocator_system(),
                                 &device));
    weft_semaphore_t* loaded = make_semaphore("loaded");
    weft_semaphore_t* gate = make_semaphore("gate");
    weft_semaphore_t* done = make_semaphore("done");
    weft_semaphore_t* later = make_semaphore("later");
    uint64_t one = 1;
    uint64_t five = 5;

    // Only the host can signal 'loaded': marked.
    assert_ok(weft_device_queue_barrier(device, WEFT_QUEUE_AFFINITY_ANY,
                                        list1(&loaded, &one),
                                        list1(&done, &one)));
    char* text = capture_device_dump(device);
    assert_report_contains(
        text,
        "    waits for semaphore 'loaded' to reach 1: now 0 -- nothing "
        "pending signals 'loaded': only the host can\n");
    free(text);

    // Now a pending op signals 'loaded' to 1 (once the host opens 'gate'):
    // the first wait is no longer marked, the new op's wait on 'gate' is.
    assert_ok(weft_device_queue_barrier(device, WEFT_QUEUE_AFFINITY_ANY,
                                        list1(&gate, &one),
                                        list1(&loaded, &one)));
    text = capture_device_dump(device);
    assert_report_contains(
        text, "    waits for semaphore 'loaded' to reach 1: now 0\n");
    assert_report_lacks(text, "signals 'loaded'");
    assert_report_contains(
        text,
        "    waits for semaphore 'gate' to reach 1: now 0 -- nothing pending "
        "signals 'gate': only the host can\n");
    assert_report_contains(text, "no wait-for cycle among them");
    free(text);

    // A wait for more than any pending op signals is marked with the
    // highest value they do reach.
    assert_ok(weft_device_queue_barrier(device, WEFT_QUEUE_AFFINITY_ANY,
                                        list1(&loaded, &five),
                                        list1(&later, &one)));
    text = capture_device_dump(device);
    assert_report_contains(
        text,
        "    waits for semaphore 'loaded' to reach 5: now 0 -- nothing "
        "pending signals 'loaded' past 1: only the host can\n");
    assert_report_contains(
        text, "    waits for semaphore 'loaded' to reach 1: now 0\n");
    free(text);

    // The host opens the gate and then steps 'loaded' past what the ops
    // signalled; everything retires.
    assert_ok(weft_semaphore_signal(gate, 1));
    assert_ok(weft_semaphore_wait(done, 1, weft_timeout_infinite()));
    assert_ok(weft_semaphore_signal(loaded, 5));
    assert_ok(weft_semaphore_wait(later, 1, weft_timeout_infinite()));
    weft_semaphore_t* all[] = {loaded, gate, done, later};
    release_all(all, 4);
    weft_device_release(device);
  }
}

// Work held outside a driver (a registered source, as a channel's
// transfers in flight are) is listed under its device with its age, and
// counts as the signaller of what it will signal.
typedef struct held_work_t {
  weft_device_t* device;
  weft_semaphore_t* semaphore;
  uint64_t value;
} held_work_t;

static void held_work_for_each(void* user_data, weft_device_t* device,
                               weft_pending_op_visit_fn_t visit,
                               void* visit_user_data) {
  held_work_t* work = (held_work_t*)user_data;
  if (device != work->device) return;
  weft_pending_op_t op = {
      .type_name = "channel_allreduce",
      .queue_index = 0,
      .state = "in flight on a channel",
      .detail = "channel 'world' (rank 0 of 2): 4096 bytes of f32, sum",
      .submit_time = weft_time_now() - 2000000,
      .wait_list = weft_semaphore_list_empty(),
      .signal_list = list1(&work->semaphore, &work->value),
  };
  visit(visit_user_data, &op);
}

static void a_registered_source_is_listed(void** state) {
  (void)state;
  for (size_t d = 0; d < DEVICE_COUNT; ++d) {
    weft_device_t* device = NULL;
    assert_ok(weft_device_create(kDevices[d], weft_allocator_system(),
                                 &device));
    weft_semaphore_t* reduced = make_semaphore("reduced");
    weft_semaphore_t* done = make_semaphore("done");
    uint64_t one = 1;
    assert_ok(weft_device_queue_barrier(device, WEFT_QUEUE_AFFINITY_ANY,
                                        list1(&reduced, &one),
                                        list1(&done, &one)));
    char* text = capture_device_dump(device);
    assert_report_contains(text, "nothing pending signals 'reduced'");
    free(text);

    held_work_t work = {device, reduced, 1};
    weft_diagnostics_source_t source = {
        .for_each_pending = held_work_for_each, .user_data = &work};
    weft_diagnostics_register_source(&source);
    text = capture_device_dump(device);
    assert_report_contains(
        text, "  channel_allreduce on queue 0: in flight on a channel, "
              "submitted ");
    assert_report_contains(
        text, "    channel 'world' (rank 0 of 2): 4096 bytes of f32, sum\n");
    assert_report_contains(text, "    then signals semaphore 'reduced' to 1\n");
    assert_report_lacks(text, "nothing pending signals 'reduced'");
    free(text);
    weft_diagnostics_unregister_source(&source);
    text = capture_device_dump(device);
    assert_report_lacks(text, "channel_allreduce");
    free(text);

    assert_ok(weft_semaphore_signal(reduced, 1));
    assert_ok(weft_semaphore_wait(done, 1, weft_timeout_infinite()));
    weft_semaphore_t* all[] = {reduced, done};
    release_all(all, 2);
    weft_device_release(device);
  }
}

// The signaller may be on another live device: a device's own report
// looks at every device's pending ops before marking a wait.
static void a_signaller_on_another_device_counts(void** state) {
  (void)state;
  weft_device_t* devices[DEVICE_COUNT] = {NULL};
  for (size_t d = 0; d < DEVICE_COUNT; ++d) {
    assert_ok(weft_device_create(kDevices[d], weft_allocator_system(),
                                 &devices[d]));
  }
  for (size_t d = 0; d < DEVICE_COUNT; ++d) {
    weft_device_t* waiter = devices[d];
    weft_device_t* signaller = devices[(d + 1) % DEVICE_COUNT];
    weft_semaphore_t* loaded = make_semaphore("loaded");
    weft_semaphore_t* gate = make_semaphore("gate");
    weft_semaphore_t* done = make_semaphore("done");
    uint64_t one = 1;
    assert_ok(weft_device_queue_barrier(waiter, WEFT_QUEUE_AFFINITY_ANY,
                                        list1(&loaded, &one),
                                        list1(&done, &one)));
    assert_ok(weft_device_queue_barrier(signaller, WEFT_QUEUE_AFFINITY_ANY,
                                        list1(&gate, &one),
                                        list1(&loaded, &one)));
    char* text = capture_device_dump(waiter);
    assert_report_contains(text, kDevices[d]);
    assert_report_contains(
        text, "    waits for semaphore 'loaded' to reach 1: now 0\n");
    // The other device's op is not printed in this device's report.
    assert_report_lacks(text, "'gate'");
    free(text);
    assert_ok(weft_semaphore_signal(gate, 1));
    assert_ok(weft_semaphore_wait(done, 1, weft_timeout_infinite()));
    weft_semaphore_t* all[] = {loaded, gate, done};
    release_all(all, 3);
  }
  for (size_t d = 0; d < DEVICE_COUNT; ++d) weft_device_release(devices[d]);
}

typedef struct blocking_call_t {
  atomic_uint started;
  atomic_uint release;
} blocking_call_t;

static weft_status_t blocking_call_fn(void* user_data, const uint64_t args[4],
                                      const weft_host_call_context_t* context) {
  (void)args;
  (void)context;
  blocking_call_t* call = (blocking_call_t*)user_data;
  atomic_store(&call->started, 1);
  while (atomic_load(&call->release) == 0) {
    struct timespec pause = {0, 100000};
    nanosleep(&pause, NULL);
  }
  return NULL;
}

// local-task lists parked ops and only counts running ones: while a
// running op might be the signaller, the mark says what it knows and no
// more.
static void marks_are_hedged_when_ops_are_not_listed(void** state) {
  (void)state;
  weft_device_t* device = NULL;
  assert_ok(weft_device_create("local-task?workers=2",
                               weft_allocator_system(), &device));
  weft_semaphore_t* loaded = make_semaphore("loaded");
  weft_semaphore_t* done = make_semaphore("done");
  uint64_t one = 1;
  blocking_call_t call;
  atomic_init(&call.started, 0);
  atomic_init(&call.release, 0);
  assert_ok(weft_device_queue_host_call(
      device, WEFT_QUEUE_AFFINITY_ANY, weft_semaphore_list_empty(),
      list1(&loaded, &one), blocking_call_fn, &call, NULL,
      WEFT_HOST_CALL_FLAG_NONE));
  while (atomic_load(&call.started) == 0) {
    struct timespec pause = {0, 100000};
    nanosleep(&pause, NULL);
  }
  assert_ok(weft_device_queue_barrier(device, WEFT_QUEUE_AFFINITY_ANY,
                                      list1(&loaded, &one),
                                      list1(&done, &one)));
  char* text = capture_device_dump(device);
  assert_report_contains(text, "(1 of them ready or running: not listed)");
  assert_report_contains(
      text,
      "    waits for semaphore 'loaded' to reach 1: now 0 -- no listed "
      "operation signals 'loaded' (1 ready or running operation not "
      "listed)\n");
  assert_report_lacks(text, "only the host can");
  free(text);
  atomic_store(&call.release, 1);
  assert_ok(weft_semaphore_wait(done, 1, weft_timeout_infinite()));
  weft_semaphore_t* all[] = {loaded, done};
  release_all(all, 2);
  weft_device_release(device);
}

static void watchdog_fails_a_stuck_wait(void** state) {
  (void)state;
  weft_semaphore_t* never = make_semaphore("never-signalled");
  weft_watchdog_set(30 * 1000000ll, WEFT_WATCHDOG_ACTION_FAIL);
  assert_int_equal(weft_watchdog_limit(), 30 * 1000000ll);
  weft_time_t start = weft_time_now();
  weft_status_t status =
      weft_semaphore_wait(never, 1, weft_timeout_infinite());
  assert_int_equal(weft_status_code(status), WEFT_STATUS_DEADLINE_EXCEEDED);
  assert_non_null(strstr(weft_status_message(status), "watchdog"));
  assert_non_null(strstr(weft_status_message(status), "'never-signalled'"));
  weft_status_free(status);
  assert_true(weft_time_now() - start >= 30 * 1000000ll);

  // A list wait (and so a fence wait) is watched the same way.
  weft_semaphore_t* other = make_semaphore("other");
  weft_semaphore_t* semaphores[2] = {never, other};
  uint64_t values[2] = {1, 1};
  weft_semaphore_list_t list = {2, semaphores, values};
  status = weft_semaphore_list_wait(WEFT_WAIT_MODE_ANY, list,
                                    weft_timeout_infinite());
  assert_int_equal(weft_status_code(status), WEFT_STATUS_DEADLINE_EXCEEDED);
  assert_non_null(strstr(weft_status_message(status), "any of"));
  weft_status_free(status);

  // A wait whose own deadline comes first is not the watchdog's business.
  status = weft_semaphore_wait(never, 1, weft_timeout_relative(1000000));
  assert_int_equal(weft_status_code(status), WEFT_STATUS_DEADLINE_EXCEEDED);
  assert_null(strstr(weft_status_message(status), "watchdog"));
  weft_status_free(status);
  weft_watchdog_set(0, WEFT_WATCHDOG_ACTION_REPORT);
  weft_semaphore_release(other);
  weft_semaphore_release(never);
}

// stderr, redirected into a temporary file while a case runs: where the
// watchdog prints its report (diagnostics.h).
typedef struct stderr_capture_t {
  FILE* file;
  int saved_fd;
} stderr_capture_t;

static void stderr_capture_begin(stderr_capture_t* capture) {
  fflush(stderr);
  capture->file = tmpfile();
  assert_non_null(capture->file);
  capture->saved_fd = dup(STDERR_FILENO);
  assert_true(capture->saved_fd >= 0);
  assert_true(dup2(fileno(capture->file), STDERR_FILENO) >= 0);
}

// The bytes written to stderr since stderr_capture_begin.
static off_t stderr_capture_size(stderr_capture_t* capture) {
  struct stat info;
  return fstat(fileno(capture->file), &info) == 0 ? info.st_size : 0;
}

// Restores stderr and returns what was written to it meanwhile (free it).
static char* stderr_capture_end(stderr_capture_t* capture) {
  fflush(stderr);
  assert_true(dup2(capture->saved_fd, STDERR_FILENO) >= 0);
  close(capture->saved_fd);
  size_t length = (size_t)stderr_capture_size(capture);
  char* text = calloc(1, length + 1);
  assert_non_null(text);
  rewind(capture->file);
  assert_int_equal(fread(text, 1, length, capture->file), length);
  fclose(capture->file);
  return text;
}

typedef struct late_signal_t {
  weft_semaphore_t* semaphore;
  stderr_capture_t* capture;
} late_signal_t;

// Signals once the watchdog's report has reached the captured stderr, so
// the wait overran its limit whatever the scheduling (or after 10 s, and
// the case then fails on the missing report).
static void* late_signal_main(void* arg) {
  late_signal_t* late = (late_signal_t*)arg;
  for (int i = 0; i < 10000 && stderr_capture_size(late->capture) == 0; ++i) {
    struct timespec pause = {0, 1000000};
    nanosleep(&pause, NULL);
  }
  weft_status_ignore(weft_semaphore_signal(late->semaphore, 1));
  return NULL;
}

static void watchdog_report_keeps_waiting(void** state) {
  (void)state;
  weft_semaphore_t* slow = make_semaphore("slow");
  weft_watchdog_set(20 * 1000000ll, WEFT_WATCHDOG_ACTION_REPORT);
  stderr_capture_t capture;
  stderr_capture_begin(&capture);
  late_signal_t late = {slow, &capture};
  pthread_t thread;
  assert_int_equal(pthread_create(&thread, NULL, late_signal_main, &late), 0);
  // The watchdog prints its report at 20 ms and the wait goes on until the
  // signal that follows the report.
  weft_status_t status = weft_semaphore_wait(slow, 1, weft_timeout_infinite());
  pthread_join(thread, NULL);
  weft_watchdog_set(0, WEFT_WATCHDOG_ACTION_REPORT);
  char* report = stderr_capture_end(&capture);
  assert_ok(status);
  assert_report_contains(report,
                         "weft watchdog: a host wait for semaphore 'slow' to "
                         "reach 1 has been blocked for ");
  assert_report_contains(report, "pending operations:");
  free(report);
  weft_semaphore_release(slow);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(dump_lists_a_stuck_op),
      cmocka_unit_test(planted_two_op_cycle_is_found),
      cmocka_unit_test(chains_and_host_waits_are_not_cycles),
      cmocka_unit_test(waits_only_the_host_can_satisfy_are_marked),
      cmocka_unit_test(a_signaller_on_another_device_counts),
      cmocka_unit_test(a_registered_source_is_listed),
      cmocka_unit_test(marks_are_hedged_when_ops_are_not_listed),
      cmocka_unit_test(watchdog_fails_a_stuck_wait),
      cmocka_unit_test(watchdog_report_keeps_waiting),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
