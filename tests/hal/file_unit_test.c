// Unit tests: files without a device (synchronous read/write, chunking and
// resumption, streams, errno translation, allocation failures).
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
// clang-format off
#include <cmocka.h>
// clang-format on

#include "hal/file_impl.h"

static void assert_ok(weft_status_t status) {
  if (!weft_status_is_ok(status)) {
    char text[1024];
    weft_status_format(status, text, sizeof(text));
    weft_status_free(status);
    fail_msg("unexpected error: %s", text);
  }
}

static void assert_status_text(weft_status_t status, weft_status_code_t code,
                               const char* needle) {
  char text[2048];
  weft_status_format(status, text, sizeof(text));
  weft_status_code_t actual = weft_status_code(status);
  weft_status_free(status);
  if (actual != code) {
    fail_msg("expected %s, got: %s", weft_status_code_string(code), text);
  }
  if (needle && !strstr(text, needle)) {
    fail_msg("expected '%s' in: %s", needle, text);
  }
}

static void make_bytes(uint8_t* bytes, size_t length, uint8_t seed) {
  for (size_t i = 0; i < length; ++i) bytes[i] = (uint8_t)(seed + i * 7);
}

// Creates a temp file with |length| bytes of |contents|; path into |path|.
static void make_temp_file(const void* contents, size_t length, char* path) {
  strcpy(path, "/tmp/weft_file_unit_XXXXXX");
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  if (length) assert_int_equal(write(fd, contents, length), (ssize_t)length);
  close(fd);
}

typedef struct release_record_t {
  int calls;
  void* contents;
} release_record_t;

static void record_release(void* user_data, void* contents) {
  release_record_t* record = (release_record_t*)user_data;
  ++record->calls;
  record->contents = contents;
}

//===----------------------------------------------------------------------===//
// Memory files
//===----------------------------------------------------------------------===//

static void memory_file_read_write(void** state) {
  (void)state;
  uint8_t contents[64];
  make_bytes(contents, sizeof(contents), 1);
  release_record_t record = {0, NULL};
  weft_file_t* file = NULL;
  assert_ok(weft_file_wrap_memory(
      WEFT_FILE_ACCESS_READ | WEFT_FILE_ACCESS_WRITE, contents, 64,
      record_release, &record, weft_allocator_system(), &file));
  uint8_t out[16];
  assert_ok(weft_file_read(file, 48, out, 16));
  assert_memory_equal(out, contents + 48, 16);
  memset(out, 0xAB, sizeof(out));
  assert_ok(weft_file_write(file, 0, out, 16));
  assert_int_equal(contents[15], 0xAB);
  assert_status_text(weft_file_read(file, 49, out, 16),
                     WEFT_STATUS_OUT_OF_RANGE,
                     "read of [49, 65) is past the end of memory file (64 "
                     "bytes)");
  assert_status_text(weft_file_write(file, 60, out, 8),
                     WEFT_STATUS_OUT_OF_RANGE, "memory files cannot grow");
  assert_ok(weft_file_read(file, 64, out, 0));
  assert_status_text(weft_file_read(file, UINT64_MAX - 2, out, 8),
                     WEFT_STATUS_OUT_OF_RANGE, "largest file offset");
  weft_file_retain(file);
  weft_file_release(file);
  assert_int_equal(record.calls, 0);
  weft_file_release(file);
  assert_int_equal(record.calls, 1);
  assert_ptr_equal(record.contents, contents);
}

static void memory_file_access(void** state) {
  (void)state;
  uint8_t contents[8] = {0};
  weft_file_t* file = NULL;
  assert_ok(weft_file_wrap_memory(WEFT_FILE_ACCESS_WRITE, contents, 8, NULL,
                                  NULL, weft_allocator_system(), &file));
  assert_status_text(weft_file_validate_read(file, 0, 1),
                     WEFT_STATUS_PERMISSION_DENIED,
                     "read of memory file: the file was opened without READ "
                     "access");
  weft_file_release(file);
  assert_ok(weft_file_wrap_memory(WEFT_FILE_ACCESS_READ, contents, 8, NULL,
                                  NULL, weft_allocator_system(), &file));
  assert_status_text(weft_file_validate_write(file, 0, 1),
                     WEFT_STATUS_PERMISSION_DENIED, "without WRITE access");
  weft_file_release(file);
  assert_status_text(weft_file_wrap_memory(0, contents, 8, NULL, NULL,
                                           weft_allocator_system(), &file),
                     WEFT_STATUS_INVALID_ARGUMENT, "READ, WRITE or both");
  assert_status_text(
      weft_file_wrap_memory(WEFT_FILE_ACCESS_READ, NULL, 8, NULL, NULL,
                            weft_allocator_system(), &file),
      WEFT_STATUS_INVALID_ARGUMENT, "NULL");
  assert_null(file);
  // An empty memory file.
  assert_ok(weft_file_wrap_memory(WEFT_FILE_ACCESS_READ, NULL, 0, NULL, NULL,
                                  weft_allocator_system(), &file));
  assert_int_equal(weft_file_length(file), 0);
  assert_ok(weft_file_read(file, 0, NULL, 0));
  weft_file_release(file);
}

//===----------------------------------------------------------------------===//
// fd files
//===----------------------------------------------------------------------===//

// Transfers split into many small chunks still move every byte.
static void chunked_transfers_complete(void** state) {
  (void)state;
  enum { kLength = 10007 };
  uint8_t* expected = malloc(kLength);
  uint8_t* actual = calloc(1, kLength);
  make_bytes(expected, kLength, 5);
  char path[64];
  make_temp_file(NULL, 0, path);
  weft_file_t* file = NULL;
  assert_ok(weft_file_open(path, WEFT_FILE_ACCESS_READ | WEFT_FILE_ACCESS_WRITE,
                           0, weft_allocator_system(), &file));
  unlink(path);
  weft_file_set_max_chunk_for_testing(file, 7);
  assert_ok(weft_file_write(file, 3, expected, kLength));
  assert_int_equal(weft_file_length(file), kLength + 3);
  weft_file_set_max_chunk_for_testing(file, 4096);
  assert_ok(weft_file_read(file, 3, actual, kLength));
  assert_memory_equal(actual, expected, kLength);
  weft_file_set_max_chunk_for_testing(file, 1);
  memset(actual, 0, kLength);
  assert_ok(weft_file_read(file, 1003, actual, 333));
  assert_memory_equal(actual, expected + 1000, 333);
  weft_file_release(file);
  free(expected);
  free(actual);
}

// A file shrunk behind our back: a zero-byte read before the end.
static void short_read_is_out_of_range(void** state) {
  (void)state;
  uint8_t contents[4096];
  make_bytes(contents, sizeof(contents), 9);
  char path[64];
  make_temp_file(contents, sizeof(contents), path);
  weft_file_t* file = NULL;
  assert_ok(weft_file_open(path, WEFT_FILE_ACCESS_READ, 0,
                           weft_allocator_system(), &file));
  assert_int_equal(truncate(path, 1000), 0);
  uint8_t out[2048];
  char expected[128];
  snprintf(expected, sizeof(expected), "short read at byte 1000 of '%s'",
           path);
  assert_status_text(weft_file_read(file, 500, out, 2000),
                     WEFT_STATUS_OUT_OF_RANGE, expected);
  // Reads before the cut still work.
  assert_ok(weft_file_read(file, 0, out, 1000));
  assert_memory_equal(out, contents, 1000);
  weft_file_release(file);
  unlink(path);
}

// A file grown by someone else is readable without reopening.
static void externally_grown_file(void** state) {
  (void)state;
  uint8_t contents[100];
  make_bytes(contents, sizeof(contents), 3);
  char path[64];
  make_temp_file(contents, 10, path);
  weft_file_t* file = NULL;
  assert_ok(weft_file_open(path, WEFT_FILE_ACCESS_READ, 0,
                           weft_allocator_system(), &file));
  assert_int_equal(weft_file_length(file), 10);
  int fd = open(path, O_WRONLY | O_APPEND);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, contents + 10, 90), 90);
  close(fd);
  uint8_t out[100];
  assert_ok(weft_file_read(file, 0, out, 100));
  assert_memory_equal(out, contents, 100);
  assert_int_equal(weft_file_length(file), 100);
  weft_file_release(file);
  unlink(path);
}

static void os_errors_are_translated(void** state) {
  (void)state;
  weft_file_t* file = NULL;
  // ENOSPC on /dev/full.
  if (access("/dev/full", W_OK) == 0) {
    assert_ok(weft_file_open("/dev/full", WEFT_FILE_ACCESS_WRITE, 0,
                             weft_allocator_system(), &file));
    assert_false(weft_file_length_is_known(file));
    uint8_t bytes[16] = {0};
    assert_status_text(weft_file_write(file, 0, bytes, sizeof(bytes)),
                       WEFT_STATUS_RESOURCE_EXHAUSTED,
                       "pwrite of '/dev/full' at offset 0: No space left");
    weft_file_release(file);
  }
  // Missing path and missing directory.
  assert_status_text(weft_file_open("/tmp/weft-no-such-file.bin",
                                    WEFT_FILE_ACCESS_READ, 0,
                                    weft_allocator_system(), &file),
                     WEFT_STATUS_NOT_FOUND,
                     "open of '/tmp/weft-no-such-file.bin': No such file");
  // Exclusive creation is not offered; unknown flags are refused.
  assert_status_text(weft_file_open("/tmp/x", WEFT_FILE_ACCESS_WRITE, 1u << 7,
                                    weft_allocator_system(), &file),
                     WEFT_STATUS_INVALID_ARGUMENT, "unknown flags 0x80");
  assert_status_text(weft_file_open("", WEFT_FILE_ACCESS_READ, 0,
                                    weft_allocator_system(), &file),
                     WEFT_STATUS_INVALID_ARGUMENT, "empty");
  // Bad descriptors.
  assert_status_text(weft_file_from_fd(-1, WEFT_FILE_ACCESS_READ,
                                       weft_allocator_system(), &file),
                     WEFT_STATUS_INVALID_ARGUMENT, "-1");
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  close(fds[1]);
  int closed = fds[1];
  assert_status_text(weft_file_from_fd(closed, WEFT_FILE_ACCESS_READ,
                                       weft_allocator_system(), &file),
                     WEFT_STATUS_INVALID_ARGUMENT, "Bad file descriptor");
  close(fds[0]);
  assert_null(file);
}

static void append_descriptor_refused_for_writes(void** state) {
  (void)state;
  char path[64];
  make_temp_file(NULL, 0, path);
  int fd = open(path, O_RDWR | O_APPEND);
  unlink(path);
  assert_true(fd >= 0);
  weft_file_t* file = NULL;
  assert_status_text(weft_file_from_fd(fd, WEFT_FILE_ACCESS_WRITE,
                                       weft_allocator_system(), &file),
                     WEFT_STATUS_INVALID_ARGUMENT, "O_APPEND");
  assert_ok(weft_file_from_fd(fd, WEFT_FILE_ACCESS_READ,
                              weft_allocator_system(), &file));
  weft_file_release(file);
  close(fd);
}

// Pipes: unknown length, sequential transfers at the stream position.
static void pipe_is_a_stream(void** state) {
  (void)state;
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  weft_file_t* reader = NULL;
  weft_file_t* writer = NULL;
  assert_ok(weft_file_from_fd(fds[0], WEFT_FILE_ACCESS_READ,
                              weft_allocator_system(), &reader));
  assert_ok(weft_file_from_fd(fds[1], WEFT_FILE_ACCESS_WRITE,
                              weft_allocator_system(), &writer));
  close(fds[0]);
  close(fds[1]);
  assert_true(weft_file_is_stream(reader));
  assert_false(weft_file_length_is_known(reader));
  assert_int_equal(weft_file_length(reader), 0);

  uint8_t data[300];
  make_bytes(data, sizeof(data), 17);
  weft_file_set_max_chunk_for_testing(writer, 64);
  assert_ok(weft_file_write(writer, 0, data, 200));
  assert_status_text(weft_file_write(writer, 0, data, 10),
                     WEFT_STATUS_INVALID_ARGUMENT,
                     "the stream can only continue at byte 200");
  assert_ok(weft_file_write(writer, 200, data + 200, 100));
  uint8_t out[300];
  // Submit-time validation accepts a later offset (queued transfers run in
  // order); the position is checked when the transfer runs.
  assert_ok(weft_file_validate_read(reader, 120, 180));
  assert_status_text(weft_file_read(reader, 120, out, 180),
                     WEFT_STATUS_INVALID_ARGUMENT,
                     "read at offset 120 of fd");
  assert_ok(weft_file_read(reader, 0, out, 120));
  assert_ok(weft_file_read(reader, 120, out + 120, 180));
  assert_memory_equal(out, data, sizeof(data));

  // End of stream before the requested end.
  assert_ok(weft_file_write(writer, 300, data, 10));
  weft_file_release(writer);
  char expected[64];
  snprintf(expected, sizeof(expected), "short read at byte 310 of fd %d",
           fds[0]);
  assert_status_text(weft_file_read(reader, 300, out, 50),
                     WEFT_STATUS_OUT_OF_RANGE, expected);
  weft_file_release(reader);
}

static int count_open_fds(void) {
  int count = 0;
  DIR* dir = opendir("/proc/self/fd");
  assert_non_null(dir);
  while (readdir(dir)) ++count;
  closedir(dir);
  return count;
}

static void allocation_failures_leak_nothing(void** state) {
  (void)state;
  weft_failing_allocator_t storage;
  weft_allocator_t failing =
      weft_failing_allocator_initialize(weft_allocator_system(), 0, &storage);
  uint8_t contents[8] = {0};
  release_record_t record = {0, NULL};
  weft_file_t* file = NULL;
  const int fds_before = count_open_fds();
  assert_status_text(
      weft_file_wrap_memory(WEFT_FILE_ACCESS_READ, contents, 8,
                            record_release, &record, failing, &file),
      WEFT_STATUS_RESOURCE_EXHAUSTED, NULL);
  assert_null(file);
  assert_int_equal(record.calls, 0);
  char path[64];
  make_temp_file(contents, sizeof(contents), path);
  assert_status_text(
      weft_file_open(path, WEFT_FILE_ACCESS_READ, 0, failing, &file),
      WEFT_STATUS_RESOURCE_EXHAUSTED, NULL);
  int fd = open(path, O_RDONLY);
  assert_true(fd >= 0);
  assert_status_text(
      weft_file_from_fd(fd, WEFT_FILE_ACCESS_READ, failing, &file),
      WEFT_STATUS_RESOURCE_EXHAUSTED, NULL);
  close(fd);
  assert_int_equal(count_open_fds(), fds_before);
  unlink(path);
  assert_null(file);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(memory_file_read_write),
      cmocka_unit_test(memory_file_access),
      cmocka_unit_test(chunked_transfers_complete),
      cmocka_unit_test(short_read_is_out_of_range),
      cmocka_unit_test(externally_grown_file),
      cmocka_unit_test(os_errors_are_translated),
      cmocka_unit_test(append_descriptor_refused_for_writes),
      cmocka_unit_test(pipe_is_a_stream),
      cmocka_unit_test(allocation_failures_leak_nothing),
  };
  return cmocka_run_group_tests_name("hal.file", tests, NULL, NULL);
}
