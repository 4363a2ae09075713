// local-task file I/O tests: what the CTS cannot say driver-neutrally.
//  - file_io=sync|threads|io_uring|auto is reported by the file_io.*
//    properties and the explanation, and bad values are clean errors;
//  - a forced io_uring the kernel refuses (a seccomp filter in a child
//    process) fails device creation with UNAVAILABLE, and auto falls back
//    to threads;
//  - releasing the device with many reads in flight on the proactor lets
//    them complete (or cancels those not started) and never hangs;
//  - the last device reference dropped inside a file completion (a host
//    call of another device runs on the proactor thread) shuts the device
//    down on a thread of its own;
//  - dump_pending says how files are moved.
// setjmp.h, stdarg.h and stddef.h must come before cmocka.h.
// clang-format off
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
// clang-format on

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "async/proactor.h"
#include "base/atomics.h"
#include "base/thread.h"
#include "cts.h"
#include "drivers/local_task/local_task_driver.h"
#include "weft/weft.h"

#define TEN_SECONDS (10ll * 1000 * 1000 * 1000)

static int64_t query(weft_device_t* device, const char* key) {
  int64_t value = -1;
  WEFT_ASSERT_OK(weft_device_query_i64(device, key, &value));
  return value;
}

// True when this machine can have an io_uring device; otherwise checks
// that asking for one is a clean UNAVAILABLE naming the option.
static bool io_uring_available(void) {
  weft_device_t* device = NULL;
  weft_status_t status = weft_device_create("local-task?file_io=io_uring",
                                            weft_allocator_system(), &device);
  bool available = weft_status_is_ok(status);
  if (available) {
    weft_device_release(device);
  } else {
    weft_cts_assert_status_contains(status, WEFT_STATUS_UNAVAILABLE,
                                    "file_io=io_uring");
  }
  return available;
}

// A temporary file of |length| bytes (byte i = i * 7 + i / 4096), already
// unlinked; returns its descriptor's weft file.
static weft_file_t* make_file(size_t length, weft_file_access_t access) {
  char path[64];
  strcpy(path, "/tmp/weft_lt_file_XXXXXX");
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  uint8_t* bytes = malloc(length ? length : 1);
  for (size_t i = 0; i < length; ++i) bytes[i] = (uint8_t)(i * 7 + i / 4096);
  size_t done = 0;
  while (done < length) {
    ssize_t n = write(fd, bytes + done, length - done);
    assert_true(n > 0);
    done += (size_t)n;
  }
  free(bytes);
  close(fd);
  weft_file_t* file = NULL;
  weft_status_t status =
      weft_file_open(path, access, 0, weft_allocator_system(), &file);
  unlink(path);
  WEFT_ASSERT_OK(status);
  return file;
}

static uint8_t expected_byte(size_t i) { return (uint8_t)(i * 7 + i / 4096); }

//===----------------------------------------------------------------------===//
// Options and properties
//===----------------------------------------------------------------------===//

static void properties_per_backend(void** state) {
  struct {
    const char* device_string;
    int64_t async;
    int64_t backend;  // -1: threads or io_uring
  } cases[] = {
      {"local-task?file_io=sync", 0, 0},
      {"local-task?file_io=threads", 1, 1},
      {"local-task?file_io=threads&file_io_depth=3", 1, 1},
      {"local-task?file_io=auto", 1, -1},
      {"local-task", 1, -1},
      {"local-task?file_io=io_uring", 1, 2},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    if (cases[i].backend == 2 && !io_uring_available()) {
      print_message("io_uring is unavailable here: skipping '%s'\n",
                    cases[i].device_string);
      continue;
    }
    weft_device_t* device = NULL;
    WEFT_ASSERT_OK(weft_device_create(cases[i].device_string,
                                      weft_allocator_system(), &device));
    assert_int_equal(query(device, "file_io.async"), cases[i].async);
    int64_t backend = query(device, "file_io.backend");
    if (cases[i].backend >= 0) {
      assert_int_equal(backend, cases[i].backend);
    } else {
      assert_true(backend == 1 || backend == 2);
    }
    const char* explanation =
        weft_local_task_device_file_io_explanation(device);
    assert_non_null(explanation);
    const char* backend_names[3] = {"sync", "threads", "io_uring"};
    if (!strstr(explanation, backend_names[backend])) {
      fail_msg("'%s': explanation '%s' does not name %s",
               cases[i].device_string, explanation, backend_names[backend]);
    }
    weft_device_release(device);
  }
  // Not a local-task device: no explanation, no property.
  weft_device_t* device = NULL;
  WEFT_ASSERT_OK(
      weft_device_create("local-sync", weft_allocator_system(), &device));
  assert_null(weft_local_task_device_file_io_explanation(device));
  weft_device_release(device);
}

static void bad_options_are_clean_errors(void** state) {
  weft_device_t* device = NULL;
  weft_cts_assert_status_contains(
      weft_device_create("local-task?file_io=uring", weft_allocator_system(),
                         &device),
      WEFT_STATUS_INVALID_ARGUMENT, "file_io=uring is not one of");
  weft_cts_assert_status_contains(
      weft_device_create("local-task?file_io_depth=0", weft_allocator_system(),
                         &device),
      WEFT_STATUS_INVALID_ARGUMENT, "file_io_depth=0");
  weft_cts_assert_status_contains(
      weft_device_create("local-task?file_io_depth=5000",
                         weft_allocator_system(), &device),
      WEFT_STATUS_INVALID_ARGUMENT, "1 to 4096");
  assert_null(device);
}

// Makes io_uring_setup fail with |error| for this process from now on.
// Returns false when the filter cannot be installed here.
static bool block_io_uring_setup(int error) {
#ifdef __NR_io_uring_setup
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
      BPF_STMT(BPF_RET | BPF_K,
               SECCOMP_RET_ERRNO | ((uint32_t)error & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog program = {
      (unsigned short)(sizeof(filter) / sizeof(filter[0])), filter};
  return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
         prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program, 0, 0) == 0;
#else
  (void)error;
  return false;
#endif
}

// The child of forced_io_uring_unavailable: exit 0 when the checks pass, 77
// when the filter cannot be installed, 1 otherwise (saying why).
static int refused_io_uring_child(void) {
  if (!block_io_uring_setup(EPERM)) return 77;
  int result = 0;
  weft_device_t* device = NULL;
  weft_status_t status = weft_device_create("local-task?file_io=io_uring",
                                            weft_allocator_system(), &device);
  char text[1024];
  weft_status_format(status, text, sizeof(text));
  if (!weft_status_is(status, WEFT_STATUS_UNAVAILABLE) ||
      !strstr(text, "file_io=io_uring")) {
    fprintf(stderr,
            "forced io_uring: expected UNAVAILABLE naming the option, "
            "got: %s\n",
            text);
    result = 1;
  }
  weft_status_free(status);
  weft_device_release(device);
  device = NULL;
  status = weft_device_create("local-task", weft_allocator_system(), &device);
  if (!weft_status_is_ok(status)) {
    weft_status_format(status, text, sizeof(text));
    fprintf(stderr, "auto: %s\n", text);
    weft_status_free(status);
    result = 1;
  } else {
    int64_t backend = -1;
    weft_status_ignore(
        weft_device_query_i64(device, "file_io.backend", &backend));
    const char* explanation =
        weft_local_task_device_file_io_explanation(device);
    if (backend != 1 || !strstr(explanation, "io_uring")) {
      fprintf(stderr,
              "auto: expected threads (1) saying why not io_uring, got %lld: "
              "%s\n",
              (long long)backend, explanation);
      result = 1;
    }
    weft_device_release(device);
  }
  return result;
}

// Runs first (before any test leaves threads behind): fork is only safe
// from a process with one thread.
static void forced_io_uring_unavailable(void** state) {
  if (!weft_proactor_io_uring_built()) {
    // Built without liburing: forcing it is refused anyway.
    assert_false(io_uring_available());
    return;
  }
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) _exit(refused_io_uring_child());
  int wait_status = 0;
  assert_int_equal(waitpid(pid, &wait_status, 0), pid);
  assert_true(WIFEXITED(wait_status));
  if (WEXITSTATUS(wait_status) == 77) {
    print_message("skipped: no seccomp filter can be installed here\n");
    skip();
  }
  assert_int_equal(WEXITSTATUS(wait_status), 0);
}

//===----------------------------------------------------------------------===//
// Shutdown and completions
//===----------------------------------------------------------------------===//

// 300 reads made ready at once, then the device released as soon as the
// first completed: each read either completed (its bytes are right) or was
// cancelled before it started; none hangs.
static void release_with_reads_in_flight(void** state) {
  const char* device_strings[] = {
      "local-task?file_io=threads&file_io_depth=2",
      "local-task?file_io=io_uring&file_io_depth=8",
  };
  enum { kReadCount = 300, kChunk = 4096 };
  for (size_t d = 0; d < 2; ++d) {
    if (d == 1 && !io_uring_available()) continue;
    weft_device_t* device = NULL;
    WEFT_ASSERT_OK(weft_device_create(device_strings[d],
                                      weft_allocator_system(), &device));
    weft_file_t* file =
        make_file((size_t)kReadCount * kChunk, WEFT_FILE_ACCESS_READ);
    weft_buffer_t* buffer = NULL;
    WEFT_ASSERT_OK(weft_device_allocate_buffer(
        device, (weft_buffer_params_t){0},
        (weft_device_size_t)kReadCount * kChunk, &buffer));
    weft_semaphore_t* gate = NULL;
    WEFT_ASSERT_OK(weft_semaphore_create(weft_allocator_system(), 0, &gate));
    weft_semaphore_t* done[kReadCount];
    const uint64_t one = 1;
    for (int i = 0; i < kReadCount; ++i) {
      WEFT_ASSERT_OK(
          weft_semaphore_create(weft_allocator_system(), 0, &done[i]));
      WEFT_ASSERT_OK(weft_device_queue_read(
          device, WEFT_QUEUE_AFFINITY_ANY, weft_cts_list1(&gate, &one),
          weft_cts_list1(&done[i], &one), file, (uint64_t)i * kChunk, buffer,
          (weft_device_size_t)i * kChunk, kChunk));
    }
    WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
    // Once the first read completed the rest are on the proactor or about
    // to be: release then.
    WEFT_ASSERT_OK(
        weft_semaphore_wait(done[0], 1, weft_timeout_relative(TEN_SECONDS)));
    weft_device_release(device);
    int completed = 0;
    uint8_t chunk[kChunk];
    for (int i = 0; i < kReadCount; ++i) {
      // Released: everything has ended.
      weft_status_t status =
          weft_semaphore_wait(done[i], 1, weft_timeout_immediate());
      if (weft_status_is_ok(status)) {
        ++completed;
        WEFT_ASSERT_OK(weft_buffer_map_read(
            buffer, (weft_device_size_t)i * kChunk, chunk, kChunk));
        for (size_t j = 0; j < kChunk; ++j) {
          assert_int_equal(chunk[j], expected_byte((size_t)i * kChunk + j));
        }
      } else {
        weft_cts_assert_status_contains(status, WEFT_STATUS_CANCELLED,
                                        "queue_read");
      }
      weft_semaphore_release(done[i]);
    }
    print_message("%s: %d of %d reads completed before the release\n",
                  device_strings[d], completed, kReadCount);
    weft_semaphore_release(gate);
    weft_buffer_release(buffer);
    weft_file_release(file);
  }
}

typedef struct release_call_t {
  weft_device_t* device;
  // The name of the thread the call ran on.
  char thread_name[16];
} release_call_t;

// A host call that drops the device's last reference.
static weft_status_t release_device_call(
    void* user_data, const uint64_t args[4],
    const weft_host_call_context_t* context) {
  release_call_t* call = (release_call_t*)user_data;
  pthread_getname_np(pthread_self(), call->thread_name,
                     sizeof(call->thread_name));
  weft_device_release(call->device);
  call->device = NULL;
  return WEFT_OK;
}

// local-sync runs a parked host call on the thread that reached its wait:
// here the proactor thread completing a read, and the call drops the
// local-task device's last reference from inside that completion.
static void release_last_reference_in_completion(void** state) {
  const char* device_strings[] = {
      "local-task?file_io=threads",
      "local-task?file_io=io_uring",
  };
  for (size_t d = 0; d < 2; ++d) {
    if (d == 1 && !io_uring_available()) continue;
    for (int round = 0; round < 10; ++round) {
      // Static: the device may still be freeing after this returns.
      // Counts live blocks, to see a device shut down on a thread of its
      // own finish freeing.
      static weft_cts_counting_allocator_t counter;
      weft_allocator_t allocator = weft_cts_counting_allocator_initialize(
          weft_allocator_system(), &counter);
      weft_device_t* sync_device = NULL;
      WEFT_ASSERT_OK(weft_device_create("local-sync", weft_allocator_system(),
                                        &sync_device));
      release_call_t call;
      memset(&call, 0, sizeof(call));
      WEFT_ASSERT_OK(
          weft_device_create(device_strings[d], allocator, &call.device));
      weft_file_t* file = make_file(8192, WEFT_FILE_ACCESS_READ);
      weft_buffer_t* buffer = NULL;
      WEFT_ASSERT_OK(weft_device_allocate_buffer(
          call.device, (weft_buffer_params_t){0}, 8192, &buffer));
      weft_semaphore_t* gate = NULL;
      weft_semaphore_t* read_done = NULL;
      weft_semaphore_t* released = NULL;
      WEFT_ASSERT_OK(weft_semaphore_create(weft_allocator_system(), 0, &gate));
      WEFT_ASSERT_OK(
          weft_semaphore_create(weft_allocator_system(), 0, &read_done));
      WEFT_ASSERT_OK(
          weft_semaphore_create(weft_allocator_system(), 0, &released));
      const uint64_t one = 1;
      const uint64_t no_args[4] = {0, 0, 0, 0};
      WEFT_ASSERT_OK(weft_device_queue_host_call(
          sync_device, WEFT_QUEUE_AFFINITY_ANY,
          weft_cts_list1(&read_done, &one), weft_cts_list1(&released, &one),
          release_device_call, &call, no_args, 0));
      // The read waits for |gate|, so this thread has let go of the device
      // (the host call holds the last reference) before the read can
      // complete: nothing here touches the device after that.
      weft_device_t* own_reference = call.device;
      weft_device_retain(own_reference);
      WEFT_ASSERT_OK(weft_device_queue_read(
          call.device, WEFT_QUEUE_AFFINITY_ANY, weft_cts_list1(&gate, &one),
          weft_cts_list1(&read_done, &one), file, 0, buffer, 0, 8192));
      weft_device_release(own_reference);
      WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
      WEFT_ASSERT_OK(
          weft_semaphore_wait(released, 1, weft_timeout_relative(TEN_SECONDS)));
      assert_null(call.device);
      // On the proactor's thread, inside the read's completion.
      if (strncmp(call.thread_name, "weft-io", 7) != 0) {
        fail_msg("the host call ran on thread '%s'", call.thread_name);
      }
      uint8_t bytes[8192];
      WEFT_ASSERT_OK(weft_buffer_map_read(buffer, 0, bytes, sizeof(bytes)));
      for (size_t i = 0; i < sizeof(bytes); ++i) {
        assert_int_equal(bytes[i], expected_byte(i));
      }
      weft_buffer_release(buffer);
      // The device shuts down on a thread of its own: wait for it to free
      // everything it allocated.
      assert_int_equal(
          weft_cts_counting_allocator_wait_all_freed(&counter, TEN_SECONDS), 0);
      weft_semaphore_release(gate);
      weft_semaphore_release(read_done);
      weft_semaphore_release(released);
      weft_file_release(file);
      weft_device_release(sync_device);
    }
  }
}

static void dump_pending_names_file_io(void** state) {
  weft_device_t* device = NULL;
  WEFT_ASSERT_OK(
      weft_device_create("local-task?file_io=threads&file_io_depth=2",
                         weft_allocator_system(), &device));
  char* text = weft_cts_dump_pending(device);
  if (!strstr(text, "file I/O: threads") ||
      !strstr(text, "0 transfers in flight") ||
      !strstr(text, "0 pending operations")) {
    fail_msg("unexpected dump: %s", text);
  }
  free(text);
  weft_device_release(device);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      // First: it forks.
      cmocka_unit_test(forced_io_uring_unavailable),
      cmocka_unit_test(properties_per_backend),
      cmocka_unit_test(bad_options_are_clean_errors),
      cmocka_unit_test(release_with_reads_in_flight),
      cmocka_unit_test(release_last_reference_in_completion),
      cmocka_unit_test(dump_pending_names_file_io),
  };
  return cmocka_run_group_tests_name("local_task.file", tests, NULL, NULL);
}
