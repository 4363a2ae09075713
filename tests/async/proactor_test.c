// Tests for the proactor (src/async/proactor.h).
//
// Every I/O case runs once per backend (io_uring, threads) in this binary;
// the io_uring cases skip, saying why, where the kernel refuses a ring.

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

// cmocka needs the headers above first.
#include <cmocka.h>

#if defined(__linux__)
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#endif

#include "async/proactor.h"
#include "base/thread.h"

#define KIB ((uint64_t)1024)
#define MIB (KIB * 1024)
#define GIB (MIB * 1024)

// The longest any case waits for its completions before failing.
#define TEST_WAIT_SECONDS 120

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

// The backend a case runs on (its cmocka prestate).
static weft_proactor_backend_t g_io_uring = WEFT_PROACTOR_BACKEND_IO_URING;
static weft_proactor_backend_t g_threads = WEFT_PROACTOR_BACKEND_THREADS;

static void assert_ok(weft_status_t status) {
  if (!weft_status_is_ok(status)) {
    char text[512];
    weft_status_format(status, text, sizeof(text));
    weft_status_free(status);
    fail_msg("unexpected status: %s", text);
  }
}

static void assert_contains(const char* text, const char* part) {
  if (!strstr(text, part)) {
    fail_msg("'%s' does not contain '%s'", text, part);
  }
}

// Options for the case's backend with the defaults.
static void init_options(void** state, weft_proactor_options_t* options) {
  weft_proactor_options_initialize(options);
  options->backend = *(weft_proactor_backend_t*)*state;
}

// Creates a proactor; skips the case (before it made anything else) when
// io_uring cannot be set up here.
static weft_proactor_t* create_or_skip(const weft_proactor_options_t* options) {
  weft_proactor_t* proactor = NULL;
  weft_status_t status =
      weft_proactor_create(options, weft_allocator_system(), &proactor);
  if (options->backend == WEFT_PROACTOR_BACKEND_IO_URING &&
      weft_status_is(status, WEFT_STATUS_UNAVAILABLE)) {
    print_message("skipping the io_uring case: %s\n",
                  weft_status_message(status));
    weft_status_free(status);
    skip();
  }
  assert_ok(status);
  assert_non_null(proactor);
  assert_int_equal(weft_proactor_backend(proactor), options->backend);
  return proactor;
}

// Counts completions; cases wait on it.
typedef struct tracker_t {
  pthread_mutex_t mutex;
  pthread_cond_t cond;
  uint32_t completed;
  // Completions must run on a proactor thread, never this one.
  uint64_t test_thread;
  bool on_test_thread;
} tracker_t;

typedef struct test_op_t {
  weft_proactor_op_t op;
  tracker_t* tracker;
  weft_status_t status;
  uint32_t calls;
  // Set by chained cases: submit |chain_next| from the callback.
  weft_proactor_t* chain_proactor;
  struct test_op_t* chain_next;
} test_op_t;

static void tracker_initialize(tracker_t* tracker) {
  memset(tracker, 0, sizeof(*tracker));
  pthread_mutex_init(&tracker->mutex, NULL);
  pthread_cond_init(&tracker->cond, NULL);
  tracker->test_thread = weft_thread_current_id();
}

static void tracker_deinitialize(tracker_t* tracker) {
  assert_false(tracker->on_test_thread);
  pthread_cond_destroy(&tracker->cond);
  pthread_mutex_destroy(&tracker->mutex);
}

static void on_complete(weft_proactor_op_t* op, weft_status_t status) {
  test_op_t* test_op = (test_op_t*)op->user_data;
  tracker_t* tracker = test_op->tracker;
  bool on_test_thread = weft_thread_current_id() == tracker->test_thread;
  if (test_op->chain_next) {
    weft_proactor_submit(test_op->chain_proactor, &test_op->chain_next->op);
  }
  pthread_mutex_lock(&tracker->mutex);
  test_op->status = status;
  ++test_op->calls;
  ++tracker->completed;
  if (on_test_thread) tracker->on_test_thread = true;
  pthread_cond_broadcast(&tracker->cond);
  pthread_mutex_unlock(&tracker->mutex);
}

// Waits until |count| ops completed (fails after TEST_WAIT_SECONDS).
static void tracker_wait(tracker_t* tracker, uint32_t count) {
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += TEST_WAIT_SECONDS;
  pthread_mutex_lock(&tracker->mutex);
  int result = 0;
  while (tracker->completed < count && result == 0) {
    result = pthread_cond_timedwait(&tracker->cond, &tracker->mutex, &deadline);
  }
  uint32_t completed = tracker->completed;
  pthread_mutex_unlock(&tracker->mutex);
  if (completed < count) {
    fail_msg("only %u of %u ops completed in %d s", completed, count,
             TEST_WAIT_SECONDS);
  }
}

static uint32_t tracker_completed(tracker_t* tracker) {
  pthread_mutex_lock(&tracker->mutex);
  uint32_t completed = tracker->completed;
  pthread_mutex_unlock(&tracker->mutex);
  return completed;
}

// Waits until the proactor counts nothing pending (callbacks returned).
static void wait_idle(weft_proactor_t* proactor) {
  for (int i = 0; i < 100000 && weft_proactor_pending_count(proactor) != 0;
       ++i) {
    usleep(100);
  }
  assert_int_equal(weft_proactor_pending_count(proactor), 0);
}

static void prepare_op(test_op_t* test_op, tracker_t* tracker,
                       weft_proactor_op_type_t type, int fd, uint64_t offset,
                       void* buffer, uint64_t length, const char* name) {
  memset(test_op, 0, sizeof(*test_op));
  test_op->tracker = tracker;
  test_op->op.type = type;
  test_op->op.fd = fd;
  test_op->op.offset = offset;
  test_op->op.buffer = buffer;
  test_op->op.length = length;
  test_op->op.name = name;
  test_op->op.callback = on_complete;
  test_op->op.user_data = test_op;
}

// Submits one op, waits for it and returns its status.
static weft_status_t run_op(weft_proactor_t* proactor,
                            weft_proactor_op_type_t type, int fd,
                            uint64_t offset, void* buffer, uint64_t length,
                            const char* name) {
  tracker_t tracker;
  tracker_initialize(&tracker);
  test_op_t test_op;
  prepare_op(&test_op, &tracker, type, fd, offset, buffer, length, name);
  weft_proactor_submit(proactor, &test_op.op);
  tracker_wait(&tracker, 1);
  assert_int_equal(test_op.calls, 1);
  tracker_deinitialize(&tracker);
  return test_op.status;
}

// The byte at file offset |offset| of every case's data: changes with each
// of the low three bytes, so a transfer to the wrong place shows.
static uint8_t pattern_byte(uint64_t offset, uint8_t seed) {
  return (uint8_t)(offset ^ (offset >> 8) ^ (offset >> 16) ^ (offset >> 24) ^
                   (offset >> 32) ^ seed);
}

static void fill_pattern(uint8_t* bytes, uint64_t length, uint64_t offset,
                         uint8_t seed) {
  for (uint64_t i = 0; i < length; ++i) {
    bytes[i] = pattern_byte(offset + i, seed);
  }
}

static void check_pattern(const uint8_t* bytes, uint64_t length,
                          uint64_t offset, uint8_t seed) {
  for (uint64_t i = 0; i < length; ++i) {
    if (bytes[i] != pattern_byte(offset + i, seed)) {
      fail_msg("byte at file offset %llu is %u, expected %u",
               (unsigned long long)(offset + i), bytes[i],
               pattern_byte(offset + i, seed));
    }
  }
}

// A temp file (read-write) holding |length| pattern bytes; "'path'" into
// |name| for messages.
static int make_temp_file(uint64_t length, uint8_t seed, char path[64],
                          char name[80]) {
  strcpy(path, "/tmp/weft_proactor_XXXXXX");
  int fd = mkstemp(path);
  if (fd < 0) fail_msg("mkstemp: %s", strerror(errno));
  snprintf(name, 80, "'%s'", path);
  if (length) {
    uint8_t* bytes = malloc(length);
    assert_non_null(bytes);
    fill_pattern(bytes, length, 0, seed);
    assert_int_equal(pwrite(fd, bytes, length, 0), (ssize_t)length);
    free(bytes);
  }
  return fd;
}

static void remove_temp_file(int fd, const char* path) {
  close(fd);
  unlink(path);
}

// What a direct read into a misaligned buffer does on the filesystem of
// |direct| (a descriptor opened with O_DIRECT): ext4 and xfs refuse it
// with EINVAL, tmpfs (Linux 6.6 on) takes O_DIRECT without alignment
// rules and reads. Learned from statx's STATX_DIOALIGN where the kernel
// reports it for the file, else by trying a plain pread into
// |misaligned|; |how| says which, for the log.
static bool misaligned_direct_read_fails(int direct, uint8_t* misaligned,
                                         char how[128]) {
#if defined(STATX_DIOALIGN)
  struct statx info;
  if (statx(direct, "", AT_EMPTY_PATH, STATX_DIOALIGN, &info) == 0 &&
      (info.stx_mask & STATX_DIOALIGN) && info.stx_dio_mem_align != 0) {
    snprintf(how, 128, "statx: direct I/O buffers aligned to %u bytes",
             info.stx_dio_mem_align);
    return info.stx_dio_mem_align > 1;
  }
#endif
  ssize_t read = pread(direct, misaligned, 4096, 0);
  int error = errno;
  snprintf(how, 128, "a misaligned direct pread: %s",
           read < 0 ? strerror(error) : "it read");
  return read < 0 && error == EINVAL;
}

//===----------------------------------------------------------------------===//
// Names, options, explanations
//===----------------------------------------------------------------------===//

static void test_backend_names(void** state) {
  (void)state;
  const weft_proactor_backend_t backends[] = {WEFT_PROACTOR_BACKEND_AUTO,
                                              WEFT_PROACTOR_BACKEND_IO_URING,
                                              WEFT_PROACTOR_BACKEND_THREADS};
  for (size_t i = 0; i < 3; ++i) {
    weft_proactor_backend_t parsed = WEFT_PROACTOR_BACKEND_AUTO;
    assert_ok(weft_proactor_backend_parse(
        weft_proactor_backend_name(backends[i]), &parsed));
    assert_int_equal(parsed, backends[i]);
  }
  assert_string_equal(weft_proactor_backend_name(WEFT_PROACTOR_BACKEND_AUTO),
                      "auto");
  assert_string_equal(
      weft_proactor_backend_name(WEFT_PROACTOR_BACKEND_IO_URING), "io_uring");
  assert_string_equal(weft_proactor_backend_name(WEFT_PROACTOR_BACKEND_THREADS),
                      "threads");
  weft_proactor_backend_t parsed = WEFT_PROACTOR_BACKEND_THREADS;
  weft_status_t status = weft_proactor_backend_parse("uring", &parsed);
  assert_int_equal(weft_status_code(status), WEFT_STATUS_INVALID_ARGUMENT);
  assert_contains(weft_status_message(status), "'uring'");
  assert_contains(weft_status_message(status), "auto, io_uring, threads");
  weft_status_free(status);
  assert_int_equal(parsed, WEFT_PROACTOR_BACKEND_THREADS);
}

static void expect_invalid_options(const weft_proactor_options_t* options,
                                   const char* part) {
  weft_proactor_t* proactor = (weft_proactor_t*)1;
  weft_status_t status =
      weft_proactor_create(options, weft_allocator_system(), &proactor);
  assert_int_equal(weft_status_code(status), WEFT_STATUS_INVALID_ARGUMENT);
  assert_contains(weft_status_message(status), part);
  weft_status_free(status);
  assert_null(proactor);
}

static void test_options_validation(void** state) {
  (void)state;
  weft_proactor_options_t options;
  weft_proactor_options_initialize(&options);
  assert_int_equal(options.backend, WEFT_PROACTOR_BACKEND_AUTO);
  assert_int_equal(options.queue_depth, WEFT_PROACTOR_DEFAULT_QUEUE_DEPTH);
  assert_int_equal(options.thread_count, WEFT_PROACTOR_DEFAULT_THREAD_COUNT);
  assert_int_equal(options.max_transfer, WEFT_PROACTOR_DEFAULT_MAX_TRANSFER);
  options.queue_depth = 0;
  expect_invalid_options(&options, "queue_depth 0");
  weft_proactor_options_initialize(&options);
  options.thread_count = 0;
  expect_invalid_options(&options, "thread_count 0");
  weft_proactor_options_initialize(&options);
  options.max_transfer = 0;
  expect_invalid_options(&options, "max_transfer 0");
  options.max_transfer = 0x7ffff001;
  expect_invalid_options(&options, "max_transfer 2147479553");
  weft_proactor_options_initialize(&options);
  options.backend = (weft_proactor_backend_t)7;
  expect_invalid_options(&options, "backend 7");
}

static void test_explanations(void** state) {
  (void)state;
#if defined(WEFT_HAVE_LIBURING)
  assert_true(weft_proactor_io_uring_built());
#else
  assert_false(weft_proactor_io_uring_built());
#endif
  // AUTO (NULL options: the defaults) names the backend it picked.
  weft_proactor_t* proactor = NULL;
  assert_ok(weft_proactor_create(NULL, weft_allocator_system(), &proactor));
  weft_proactor_backend_t backend = weft_proactor_backend(proactor);
  assert_int_not_equal(backend, WEFT_PROACTOR_BACKEND_AUTO);
  const char* explanation = weft_proactor_explanation(proactor);
  print_message("auto: %s\n", explanation);
  assert_true(strncmp(explanation, weft_proactor_backend_name(backend),
                      strlen(weft_proactor_backend_name(backend))) == 0);
  if (backend == WEFT_PROACTOR_BACKEND_THREADS) {
    // The fallback says why io_uring was not used.
    assert_contains(explanation, "threads (4): ");
    assert_true(strlen(explanation) > strlen("threads (4): "));
  } else {
    assert_contains(explanation, "io_uring: ring of 128 entries");
  }
  weft_proactor_destroy(proactor);

  weft_proactor_options_t options;
  weft_proactor_options_initialize(&options);
  options.backend = WEFT_PROACTOR_BACKEND_THREADS;
  options.thread_count = 3;
  assert_ok(weft_proactor_create(&options, weft_allocator_system(), &proactor));
  assert_string_equal(weft_proactor_explanation(proactor),
                      "threads (3): forced by the options");
  weft_proactor_destroy(proactor);

  options.backend = WEFT_PROACTOR_BACKEND_IO_URING;
  options.queue_depth = 100;
  weft_status_t status =
      weft_proactor_create(&options, weft_allocator_system(), &proactor);
  if (weft_status_is_ok(status)) {
    print_message("forced: %s\n", weft_proactor_explanation(proactor));
    assert_string_equal(weft_proactor_explanation(proactor),
                        "io_uring: ring of 128 entries, queue depth 100 "
                        "(forced by the options)");
    weft_proactor_destroy(proactor);
  } else {
    assert_int_equal(weft_status_code(status), WEFT_STATUS_UNAVAILABLE);
    assert_contains(weft_status_message(status), "io_uring");
    weft_status_free(status);
  }
  weft_proactor_destroy(NULL);
}

#if !defined(WEFT_HAVE_LIBURING)
static void test_io_uring_unavailable_without_liburing(void** state) {
  (void)state;
  weft_proactor_options_t options;
  weft_proactor_options_initialize(&options);
  options.backend = WEFT_PROACTOR_BACKEND_IO_URING;
  weft_proactor_t* proactor = (weft_proactor_t*)1;
  weft_status_t status =
      weft_proactor_create(&options, weft_allocator_system(), &proactor);
  assert_int_equal(weft_status_code(status), WEFT_STATUS_UNAVAILABLE);
  assert_contains(weft_status_message(status),
                  "the io_uring backend is unavailable: weft was built "
                  "without liburing (install liburing-dev)");
  weft_status_free(status);
  assert_null(proactor);
  options.backend = WEFT_PROACTOR_BACKEND_AUTO;
  assert_ok(weft_proactor_create(&options, weft_allocator_system(), &proactor));
  assert_int_equal(weft_proactor_backend(proactor),
                   WEFT_PROACTOR_BACKEND_THREADS);
  assert_string_equal(weft_proactor_explanation(proactor),
                      "threads (4): built without liburing");
  weft_proactor_destroy(proactor);
}
#endif  // !WEFT_HAVE_LIBURING

#if defined(WEFT_HAVE_LIBURING) && (defined(__x86_64__) || defined(__aarch64__))
#define TEST_SECCOMP 1
#if defined(__x86_64__)
#define TEST_AUDIT_ARCH AUDIT_ARCH_X86_64
#else
#define TEST_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

typedef struct refused_ring_t {
  // "" when the filter could not be installed (the case skips).
  char filter_error[128];
  weft_status_t forced_status;
  weft_proactor_backend_t auto_backend;
  char auto_explanation[256];
  // A read through the AUTO proactor of |fd| (made by the test thread).
  int fd;
  const char* name;
  weft_status_t read_status;
  uint8_t bytes[100];
} refused_ring_t;

// On its own thread (seccomp filters are per thread, inherited by the
// threads it starts, and end with it): refuse io_uring_setup with EPERM,
// as container runtimes do, then create proactors.
static int refused_ring_main(void* user_data) {
  refused_ring_t* result = (refused_ring_t*)user_data;
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TEST_AUDIT_ARCH, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog program = {
      .len = (unsigned short)(sizeof(filter) / sizeof(filter[0])),
      .filter = filter,
  };
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program, 0, 0) != 0) {
    snprintf(result->filter_error, sizeof(result->filter_error),
             "installing a seccomp filter: %s", strerror(errno));
    return 0;
  }
  weft_proactor_options_t options;
  weft_proactor_options_initialize(&options);
  options.backend = WEFT_PROACTOR_BACKEND_IO_URING;
  weft_proactor_t* proactor = NULL;
  result->forced_status =
      weft_proactor_create(&options, weft_allocator_system(), &proactor);
  weft_proactor_destroy(proactor);
  options.backend = WEFT_PROACTOR_BACKEND_AUTO;
  proactor = NULL;
  weft_status_t status =
      weft_proactor_create(&options, weft_allocator_system(), &proactor);
  if (weft_status_is_ok(status)) {
    result->auto_backend = weft_proactor_backend(proactor);
    snprintf(result->auto_explanation, sizeof(result->auto_explanation), "%s",
             weft_proactor_explanation(proactor));
    // The fallback works (checked by the test thread).
    result->read_status =
        run_op(proactor, WEFT_PROACTOR_OP_READ, result->fd, 0, result->bytes,
               sizeof(result->bytes), result->name);
    weft_proactor_destroy(proactor);
  } else {
    snprintf(result->auto_explanation, sizeof(result->auto_explanation),
             "create failed: %s", weft_status_message(status));
    weft_status_free(status);
  }
  return 0;
}

// A kernel that refuses rings: AUTO falls back to threads and says why;
// forcing io_uring is UNAVAILABLE with the reason.
static void test_refused_ring(void** state) {
  (void)state;
  refused_ring_t result;
  memset(&result, 0, sizeof(result));
  char path[64], name[80];
  result.fd = make_temp_file(sizeof(result.bytes), 11, path, name);
  result.name = name;
  weft_thread_t* thread = NULL;
  weft_thread_params_t params = {.name = "refused-ring", .cpu = -1};
  assert_ok(weft_thread_create(refused_ring_main, &result, &params,
                               weft_allocator_system(), &thread));
  weft_thread_join(thread);
  remove_temp_file(result.fd, path);
  if (result.filter_error[0]) {
    print_message("skipping: %s\n", result.filter_error);
    skip();
  }
  assert_int_equal(weft_status_code(result.forced_status),
                   WEFT_STATUS_UNAVAILABLE);
  assert_string_equal(weft_status_message(result.forced_status),
                      "proactor_create: the io_uring backend is unavailable: "
                      "io_uring_queue_init failed: Operation not permitted");
  weft_status_free(result.forced_status);
  print_message("auto: %s\n", result.auto_explanation);
  assert_int_equal(result.auto_backend, WEFT_PROACTOR_BACKEND_THREADS);
  assert_string_equal(result.auto_explanation,
                      "threads (4): io_uring_queue_init failed: Operation not "
                      "permitted");
  assert_ok(result.read_status);
  check_pattern(result.bytes, sizeof(result.bytes), 0, 11);
}
#endif  // TEST_SECCOMP

//===----------------------------------------------------------------------===//
// Transfers (each backend)
//===----------------------------------------------------------------------===//

static void test_round_trip(void** state) {
  weft_proactor_options_t options;
  init_options(state, &options);
  weft_proactor_t* proactor = create_or_skip(&options);
  char path[64], name[80];
  int fd = make_temp_file(0, 0, path, name);
  const uint64_t length = MIB + 17;
  const uint64_t far_offset = 3 * MIB + 5;
  uint8_t* source = malloc(length);
  uint8_t* target = malloc(length);
  fill_pattern(source, length, 0, 1);
  assert_ok(
      run_op(proactor, WEFT_PROACTOR_OP_WRITE, fd, 0, source, length, name));
  fill_pattern(source, length, far_offset, 1);
  assert_ok(run_op(proactor, WEFT_PROACTOR_OP_WRITE, fd, far_offset, source,
                   length, name));
  struct stat info;
  assert_int_equal(fstat(fd, &info), 0);
  assert_int_equal(info.st_size, far_offset + length);

  assert_ok(
      run_op(proactor, WEFT_PROACTOR_OP_READ, fd, 0, target, length, name));
  check_pattern(target, length, 0, 1);
  assert_ok(run_op(proactor, WEFT_PROACTOR_OP_READ, fd, far_offset, target,
                   length, name));
  check_pattern(target, length, far_offset, 1);
  // The hole between the two writes reads as zeros.
  memset(target, 0xff, 4096);
  assert_ok(
      run_op(proactor, WEFT_PROACTOR_OP_READ, fd, 2 * MIB, target, 4096, name));
  for (int i = 0; i < 4096; ++i) assert_int_equal(target[i], 0);

  wait_idle(proactor);
  weft_proactor_destroy(proactor);
  free(source);
  free(target);
  remove_temp_file(fd, path);
}

// max_transfer 4096: every transfer below is split and resumed.
static void test_split_transfers(void** state) {
  weft_proactor_options_t options;
  init_options(state, &options);
  options.max_transfer = 4096;
  weft_proactor_t* proactor = create_or_skip(&options);
  char path[64], name[80];
  int fd = make_temp_file(0, 0, path, name);
  enum { kOps = 24 };
  const uint64_t op_length = 3 * 4096 + 123;
  const uint64_t stride = op_length + 1000;  // unaligned offsets
  uint8_t* source = malloc(kOps * op_length);
  uint8_t* target = calloc(kOps, op_length);
  test_op_t* ops = calloc(kOps, sizeof(test_op_t));
  for (uint64_t i = 0; i < kOps; ++i) {
    fill_pattern(source + i * op_length, op_length, 7 + i * stride, 2);
  }
  tracker_t tracker;
  tracker_initialize(&tracker);
  for (uint64_t i = 0; i < kOps; ++i) {
    prepare_op(&ops[i], &tracker, WEFT_PROACTOR_OP_WRITE, fd, 7 + i * stride,
               source + i * op_length, op_length, name);
    weft_proactor_submit(proactor, &ops[i].op);
  }
  tracker_wait(&tracker, kOps);
  for (uint64_t i = 0; i < kOps; ++i) {
    assert_ok(ops[i].status);
    assert_int_equal(ops[i].calls, 1);
  }
  tracker_deinitialize(&tracker);
  tracker_initialize(&tracker);
  for (uint64_t i = 0; i < kOps; ++i) {
    prepare_op(&ops[i], &tracker, WEFT_PROACTOR_OP_READ, fd, 7 + i * stride,
               target + i * op_length, op_length, name);
    weft_proactor_submit(proactor, &ops[i].op);
  }
  tracker_wait(&tracker, kOps);
  for (uint64_t i = 0; i < kOps; ++i) {
    assert_ok(ops[i].status);
    assert_int_equal(ops[i].op.done, op_length);
    check_pattern(target + i * op_length, op_length, 7 + i * stride, 2);
  }
  tracker_deinitialize(&tracker);
  wait_idle(proactor);
  weft_proactor_destroy(proactor);
  free(ops);
  free(source);
  free(target);
  remove_temp_file(fd, path);
}

static void test_short_read(void** state) {
  weft_proactor_options_t options;
  init_options(state, &options);
  options.max_transfer = 256;  // the end is found after several calls
  weft_proactor_t* proactor = create_or_skip(&options);
  char path[64], name[80];
  int fd = make_temp_file(1000, 3, path, name);
  uint8_t target[4096];
  weft_status_t status =
      run_op(proactor, WEFT_PROACTOR_OP_READ, fd, 0, target, 4096, name);
  assert_int_equal(weft_status_code(status), WEFT_STATUS_OUT_OF_RANGE);
  char expected[160];
  snprintf(expected, sizeof(expected),
           "short read at byte 1000 of %s (reading [0, 4096))", name);
  assert_string_equal(weft_status_message(status), expected);
  weft_status_free(status);
  check_pattern(target, 1000, 0, 3);

  // Entirely past the end.
  status = run_op(proactor, WEFT_PROACTOR_OP_READ, fd, 5000, target, 10, name);
  assert_int_equal(weft_status_code(status), WEFT_STATUS_OUT_OF_RANGE);
  snprintf(expected, sizeof(expected),
           "short read at byte 5000 of %s (reading [5000, 5010))", name);
  assert_string_equal(weft_status_message(status), expected);
  weft_status_free(status);

  // Exactly to the end is fine; an empty op completes at once.
  assert_ok(
      run_op(proactor, WEFT_PROACTOR_OP_READ, fd, 600, target, 400, name));
  check_pattern(target, 400, 600, 3);
  assert_ok(run_op(proactor, WEFT_PROACTOR_OP_READ, fd, 5000, NULL, 0, name));
  wait_idle(proactor);
  weft_proactor_destroy(proactor);
  remove_temp_file(fd, path);
}

static void test_bad_descriptors(void** state) {
  weft_proactor_options_t options;
  init_options(state, &options);
  weft_proactor_t* proactor = create_or_skip(&options);
  char path[64], name[80];
  int fd = make_temp_file(4096, 4, path, name);
  uint8_t buffer[512] = {0};
  char expected[160];

  // Read from a descriptor opened write-only.
  int write_only = open(path, O_WRONLY | O_CLOEXEC);
  assert_true(write_only >= 0);
  weft_status_t status = run_op(proactor, WEFT_PROACTOR_OP_READ, write_only,
                                128, buffer, sizeof(buffer), name);
  assert_int_equal(weft_status_code(status), WEFT_STATUS_INVALID_ARGUMENT);
  snprintf(expected, sizeof(expected),
           "pread of %s at offset 128: Bad file descriptor", name);
  assert_string_equal(weft_status_message(status), expected);
  weft_status_free(status);
  close(write_only);

  // Write to a descriptor opened read-only.
  int read_only = open(path, O_RDONLY | O_CLOEXEC);
  assert_true(read_only >= 0);
  status = run_op(proactor, WEFT_PROACTOR_OP_WRITE, read_only, 0, buffer,
                  sizeof(buffer), name);
  assert_int_equal(weft_status_code(status), WEFT_STATUS_INVALID_ARGUMENT);
  snprintf(expected, sizeof(expected),
           "pwrite of %s at offset 0: Bad file descriptor", name);
  assert_string_equal(weft_status_message(status), expected);
  weft_status_free(status);
  close(read_only);

  // A directory; with no name the message says "fd N".
  int directory = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  assert_true(directory >= 0);
  status = run_op(proactor, WEFT_PROACTOR_OP_READ, directory, 0, buffer,
                  sizeof(buffer), NULL);
  assert_int_equal(weft_status_code(status), WEFT_STATUS_INVALID_ARGUMENT);
  snprintf(expected, sizeof(expected),
           "pread of fd %d at offset 0: Is a directory", directory);
  assert_string_equal(weft_status_message(status), expected);
  weft_status_free(status);
  close(directory);

  // A closed descriptor (a high number nothing else reuses meanwhile).
  int closed = fcntl(fd, F_DUPFD_CLOEXEC, 900);
  assert_true(closed >= 900);
  close(closed);
  status = run_op(proactor, WEFT_PROACTOR_OP_READ, closed, 0, buffer,
                  sizeof(buffer), "fd 900+");
  assert_int_equal(weft_status_code(status), WEFT_STATUS_INVALID_ARGUMENT);
  assert_string_equal(weft_status_message(status),
                      "pread of fd 900+ at offset 0: Bad file descriptor");
  weft_status_free(status);

  // O_DIRECT into a misaligned buffer, where the filesystem requires
  // alignment: io_uring's -EINVAL sends the op to the synchronous path,
  // where pread's genuine EINVAL is reported. Where it does not (tmpfs),
  // the read succeeds as a plain pread does.
  int direct = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
  if (direct >= 0) {
    uint8_t* aligned = aligned_alloc(4096, 8192);
    assert_non_null(aligned);
    char how[128];
    const bool must_fail =
        misaligned_direct_read_fails(direct, aligned + 1, how);
    print_message("O_DIRECT on %s: misaligned reads %s (%s)\n", path,
                  must_fail ? "fail" : "read", how);
    memset(aligned, 0, 8192);
    status = run_op(proactor, WEFT_PROACTOR_OP_READ, direct, 0, aligned + 1,
                    4096, name);
    if (must_fail) {
      assert_int_equal(weft_status_code(status), WEFT_STATUS_INVALID_ARGUMENT);
      snprintf(expected, sizeof(expected),
               "pread of %s at offset 0: Invalid argument", name);
      assert_string_equal(weft_status_message(status), expected);
      weft_status_free(status);
    } else {
      assert_ok(status);
      check_pattern(aligned + 1, 4096, 0, 4);
    }
    // Aligned, the same descriptor reads.
    assert_ok(run_op(proactor, WEFT_PROACTOR_OP_READ, direct, 0, aligned, 4096,
                     name));
    check_pattern(aligned, 4096, 0, 4);
    free(aligned);
    close(direct);
  } else {
    print_message("no O_DIRECT case: open(%s, O_DIRECT): %s\n", path,
                  strerror(errno));
  }

  // Offsets the OS cannot address, and a NULL buffer, fail in the callback.
  status = run_op(proactor, WEFT_PROACTOR_OP_READ, fd, UINT64_MAX - 10, buffer,
                  100, name);
  assert_int_equal(weft_status_code(status), WEFT_STATUS_INVALID_ARGUMENT);
  assert_contains(weft_status_message(status), "past the largest file offset");
  weft_status_free(status);
  status = run_op(proactor, WEFT_PROACTOR_OP_WRITE, fd, 0, NULL, 100, name);
  assert_int_equal(weft_status_code(status), WEFT_STATUS_INVALID_ARGUMENT);
  assert_contains(weft_status_message(status), "the buffer is NULL");
  weft_status_free(status);

  wait_idle(proactor);
  weft_proactor_destroy(proactor);
  remove_temp_file(fd, path);
}

// Many more reads than the proactor runs at once: all complete, any order.
static void test_many_in_flight(void** state) {
  weft_proactor_options_t options;
  init_options(state, &options);
  options.queue_depth = 8;
  options.thread_count = 2;
  weft_proactor_t* proactor = create_or_skip(&options);
  enum { kOps = 320 };
  const uint64_t op_length = 8 * KIB;
  char path[64], name[80];
  int fd = make_temp_file(kOps * op_length, 5, path, name);
  uint8_t* target = calloc(kOps, op_length);
  test_op_t* ops = calloc(kOps, sizeof(test_op_t));
  tracker_t tracker;
  tracker_initialize(&tracker);
  // Back to front, so the order of completion is nobody's natural order.
  for (int i = kOps - 1; i >= 0; --i) {
    prepare_op(&ops[i], &tracker, WEFT_PROACTOR_OP_READ, fd,
               (uint64_t)i * op_length, target + (uint64_t)i * op_length,
               op_length, name);
    weft_proactor_submit(proactor, &ops[i].op);
  }
  uint64_t pending = weft_proactor_pending_count(proactor);
  assert_true(pending <= kOps);
  tracker_wait(&tracker, kOps);
  for (int i = 0; i < kOps; ++i) {
    assert_ok(ops[i].status);
    assert_int_equal(ops[i].calls, 1);
    check_pattern(target + (uint64_t)i * op_length, op_length,
                  (uint64_t)i * op_length, 5);
  }
  tracker_deinitialize(&tracker);
  wait_idle(proactor);
  weft_proactor_destroy(proactor);
  free(ops);
  free(target);
  remove_temp_file(fd, path);
}

typedef struct submitter_t {
  weft_proactor_t* proactor;
  test_op_t* ops;
  uint32_t count;
} submitter_t;

static int submitter_main(void* user_data) {
  submitter_t* submitter = (submitter_t*)user_data;
  for (uint32_t i = 0; i < submitter->count; ++i) {
    weft_proactor_submit(submitter->proactor, &submitter->ops[i].op);
    if ((i & 31) == 0) weft_thread_yield();
  }
  return 0;
}

static void test_concurrent_submitters(void** state) {
  weft_proactor_options_t options;
  init_options(state, &options);
  options.queue_depth = 16;
  weft_proactor_t* proactor = create_or_skip(&options);
  enum { kThreads = 4, kOpsPerThread = 250, kOps = kThreads * kOpsPerThread };
  const uint64_t op_length = 4 * KIB;
  char path[64], name[80];
  int fd = make_temp_file(kOps * op_length, 6, path, name);
  uint8_t* target = calloc(kOps, op_length);
  test_op_t* ops = calloc(kOps, sizeof(test_op_t));
  tracker_t tracker;
  tracker_initialize(&tracker);
  for (int i = 0; i < kOps; ++i) {
    prepare_op(&ops[i], &tracker, WEFT_PROACTOR_OP_READ, fd,
               (uint64_t)i * op_length, target + (uint64_t)i * op_length,
               op_length, name);
  }
  submitter_t submitters[kThreads];
  weft_thread_t* threads[kThreads];
  for (int t = 0; t < kThreads; ++t) {
    submitters[t].proactor = proactor;
    submitters[t].ops = ops + t * kOpsPerThread;
    submitters[t].count = kOpsPerThread;
    weft_thread_params_t params = {.name = "submitter", .cpu = -1};
    assert_ok(weft_thread_create(submitter_main, &submitters[t], &params,
                                 weft_allocator_system(), &threads[t]));
  }
  for (int t = 0; t < kThreads; ++t) weft_thread_join(threads[t]);
  tracker_wait(&tracker, kOps);
  for (int i = 0; i < kOps; ++i) {
    assert_ok(ops[i].status);
    assert_int_equal(ops[i].calls, 1);
    check_pattern(target + (uint64_t)i * op_length, op_length,
                  (uint64_t)i * op_length, 6);
  }
  tracker_deinitialize(&tracker);
  wait_idle(proactor);
  weft_proactor_destroy(proactor);
  free(ops);
  free(target);
  remove_temp_file(fd, path);
}

// Callbacks that submit the next op (from the proactor's own thread).
static void test_submit_from_callback(void** state) {
  weft_proactor_options_t options;
  init_options(state, &options);
  options.queue_depth = 4;
  options.thread_count = 2;
  weft_proactor_t* proactor = create_or_skip(&options);
  enum { kOps = 200 };
  const uint64_t op_length = 512;
  char path[64], name[80];
  int fd = make_temp_file(kOps * op_length, 7, path, name);
  uint8_t* target = calloc(kOps, op_length);
  test_op_t* ops = calloc(kOps, sizeof(test_op_t));
  tracker_t tracker;
  tracker_initialize(&tracker);
  for (int i = 0; i < kOps; ++i) {
    prepare_op(&ops[i], &tracker, WEFT_PROACTOR_OP_READ, fd,
               (uint64_t)i * op_length, target + (uint64_t)i * op_length,
               op_length, name);
    ops[i].chain_proactor = proactor;
    ops[i].chain_next = i + 1 < kOps ? &ops[i + 1] : NULL;
  }
  weft_proactor_submit(proactor, &ops[0].op);
  tracker_wait(&tracker, kOps);
  for (int i = 0; i < kOps; ++i) {
    assert_ok(ops[i].status);
    check_pattern(target + (uint64_t)i * op_length, op_length,
                  (uint64_t)i * op_length, 7);
  }
  tracker_deinitialize(&tracker);
  wait_idle(proactor);
  weft_proactor_destroy(proactor);
  free(ops);
  free(target);
  remove_temp_file(fd, path);
}

// Destroy with ops still queued and in flight: it returns after every
// callback ran.
static void test_destroy_waits_for_callbacks(void** state) {
  weft_proactor_options_t options;
  init_options(state, &options);
  options.queue_depth = 4;
  options.thread_count = 2;
  options.max_transfer = 1024;
  weft_proactor_t* proactor = create_or_skip(&options);
  enum { kOps = 200 };
  const uint64_t op_length = 16 * KIB;
  char path[64], name[80];
  int fd = make_temp_file(kOps * op_length, 8, path, name);
  uint8_t* target = calloc(kOps, op_length);
  test_op_t* ops = calloc(kOps, sizeof(test_op_t));
  tracker_t tracker;
  tracker_initialize(&tracker);
  for (int i = 0; i < kOps; ++i) {
    prepare_op(&ops[i], &tracker, WEFT_PROACTOR_OP_READ, fd,
               (uint64_t)i * op_length, target + (uint64_t)i * op_length,
               op_length, name);
    weft_proactor_submit(proactor, &ops[i].op);
  }
  weft_proactor_destroy(proactor);
  assert_int_equal(tracker_completed(&tracker), kOps);
  for (int i = 0; i < kOps; ++i) {
    assert_int_equal(ops[i].calls, 1);
    assert_ok(ops[i].status);
    check_pattern(target + (uint64_t)i * op_length, op_length,
                  (uint64_t)i * op_length, 8);
  }
  tracker_deinitialize(&tracker);
  free(ops);
  free(target);
  remove_temp_file(fd, path);
}

// A sparse temp file of |size| bytes, or (the proactor destroyed) a skip
// when the filesystem refuses.
static int make_sparse_file(weft_proactor_t* proactor, uint64_t size,
                            char path[64], char name[80]) {
  int fd = make_temp_file(0, 0, path, name);
  if (ftruncate(fd, (off_t)size) != 0) {
    int error = errno;
    remove_temp_file(fd, path);
    weft_proactor_destroy(proactor);
    print_message("skipping: ftruncate to %llu bytes: %s\n",
                  (unsigned long long)size, strerror(error));
    skip();
  }
  return fd;
}

// 1 MiB blocks written and read across 2 GiB and 4 GiB and past 5 GiB.
static void test_sparse_file_past_4gib(void** state) {
  weft_proactor_options_t options;
  init_options(state, &options);
  weft_proactor_t* proactor = create_or_skip(&options);
  char path[64], name[80];
  int fd = make_sparse_file(proactor, 5 * GIB + 2 * MIB, path, name);
  const uint64_t offsets[] = {2 * GIB - 4096, 4 * GIB - 4096, 5 * GIB};
  const uint64_t length = MIB;
  uint8_t* source = malloc(length);
  uint8_t* target = malloc(length);
  for (int i = 0; i < 3; ++i) {
    fill_pattern(source, length, offsets[i], 9);
    assert_ok(run_op(proactor, WEFT_PROACTOR_OP_WRITE, fd, offsets[i], source,
                     length, name));
  }
  for (int i = 0; i < 3; ++i) {
    memset(target, 0, length);
    assert_ok(run_op(proactor, WEFT_PROACTOR_OP_READ, fd, offsets[i], target,
                     length, name));
    check_pattern(target, length, offsets[i], 9);
  }
  // A hole past 4 GiB reads as zeros.
  memset(target, 0xff, 4096);
  assert_ok(run_op(proactor, WEFT_PROACTOR_OP_READ, fd, 4 * GIB + 2 * MIB,
                   target, 4096, name));
  for (int i = 0; i < 4096; ++i) assert_int_equal(target[i], 0);
  // Short read found past 5 GiB.
  weft_status_t status = run_op(proactor, WEFT_PROACTOR_OP_READ, fd,
                                5 * GIB + MIB, target, 2 * MIB, name);
  assert_int_equal(weft_status_code(status), WEFT_STATUS_OUT_OF_RANGE);
  assert_contains(weft_status_message(status), "short read at byte 5370806272");
  weft_status_free(status);
  wait_idle(proactor);
  weft_proactor_destroy(proactor);
  free(source);
  free(target);
  remove_temp_file(fd, path);
}

// One transfer larger than max_transfer, crossing the 4 GiB offset.
static void test_split_transfer_across_4gib(void** state) {
  weft_proactor_options_t options;
  init_options(state, &options);
  options.max_transfer = MIB;
  weft_proactor_t* proactor = create_or_skip(&options);
  char path[64], name[80];
  int fd = make_sparse_file(proactor, 4 * GIB + 8 * MIB, path, name);
  const uint64_t offset = 4 * GIB - 3 * MIB - 1;
  const uint64_t length = 6 * MIB + 5;
  uint8_t* source = malloc(length);
  uint8_t* target = calloc(1, length);
  fill_pattern(source, length, offset, 10);
  assert_ok(run_op(proactor, WEFT_PROACTOR_OP_WRITE, fd, offset, source, length,
                   name));
  assert_ok(run_op(proactor, WEFT_PROACTOR_OP_READ, fd, offset, target, length,
                   name));
  check_pattern(target, length, offset, 10);
  wait_idle(proactor);
  weft_proactor_destroy(proactor);
  free(source);
  free(target);
  remove_temp_file(fd, path);
}

//===----------------------------------------------------------------------===//
// Main
//===----------------------------------------------------------------------===//

// One case per backend, named "test/io_uring" and "test/threads".
#define BOTH_BACKENDS(test)                             \
  {#test "/io_uring", test, NULL, NULL, &g_io_uring}, { \
#test "/threads", test, NULL, NULL, &g_threads      \
  }

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_backend_names),
    cmocka_unit_test(test_options_validation),
    cmocka_unit_test(test_explanations),
#if !defined(WEFT_HAVE_LIBURING)
    cmocka_unit_test(test_io_uring_unavailable_without_liburing),
#endif
#if defined(TEST_SECCOMP)
    cmocka_unit_test(test_refused_ring),
#endif
    BOTH_BACKENDS(test_round_trip),
    BOTH_BACKENDS(test_split_transfers),
    BOTH_BACKENDS(test_short_read),
    BOTH_BACKENDS(test_bad_descriptors),
    BOTH_BACKENDS(test_many_in_flight),
    BOTH_BACKENDS(test_concurrent_submitters),
    BOTH_BACKENDS(test_submit_from_callback),
    BOTH_BACKENDS(test_destroy_waits_for_callbacks),
    BOTH_BACKENDS(test_sparse_file_past_4gib),
    BOTH_BACKENDS(test_split_transfer_across_4gib),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
