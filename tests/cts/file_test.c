// CTS: files read and written by queue operations (memory and fd files),
// ordering through semaphores, synchronous validation, errors found while a
// transfer runs, large and sparse files, many transfers in flight.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cts.h"

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static void make_bytes(uint8_t* bytes, size_t length, uint8_t seed) {
  for (size_t i = 0; i < length; ++i) {
    bytes[i] = (uint8_t)(seed + i * 13 + (i >> 8));
  }
}

// Creates a temporary file under /tmp holding |length| bytes of |contents|
// (may be NULL for an empty file); its path goes to |path| (>= 64 bytes).
static void make_temp_file(const void* contents, size_t length, char* path) {
  strcpy(path, "/tmp/weft_cts_file_XXXXXX");
  int fd = mkstemp(path);
  if (fd < 0) fail_msg("mkstemp: %s", strerror(errno));
  size_t done = 0;
  while (done < length) {
    ssize_t n = write(fd, (const uint8_t*)contents + done, length - done);
    if (n <= 0) {
      close(fd);
      unlink(path);
      fail_msg("writing %s: %s", path, strerror(errno));
    }
    done += (size_t)n;
  }
  close(fd);
}

typedef enum file_kind_e {
  FILE_KIND_MEMORY = 0,
  FILE_KIND_FD = 1,
} file_kind_t;
static const char* const kFileKindNames[] = {"memory", "fd"};

static void free_contents(void* user_data, void* contents) {
  (void)user_data;
  free(contents);
}

// Creates a file of |kind| holding a copy of |length| bytes of |contents|.
// Fd files are unlinked at once (the open descriptor keeps them).
static weft_file_t* make_file(weft_cts_t* cts, file_kind_t kind,
                              weft_file_access_t access, const void* contents,
                              size_t length) {
  weft_file_t* file = NULL;
  if (kind == FILE_KIND_MEMORY) {
    void* copy = malloc(length ? length : 1);
    assert_non_null(copy);
    if (length) memcpy(copy, contents, length);
    WEFT_ASSERT_OK(weft_file_wrap_memory(access, copy, length, free_contents,
                                         NULL, cts->allocator, &file));
  } else {
    char path[64];
    make_temp_file(contents, length, path);
    weft_status_t status =
        weft_file_open(path, access, 0, cts->allocator, &file);
    unlink(path);
    WEFT_ASSERT_OK(status);
  }
  return file;
}

// Reads |length| bytes at |offset| straight from |file| (not via a queue).
static void read_file_directly(weft_file_t* file, uint64_t offset, void* out,
                               size_t length) {
  if (weft_file_memory(file)) {
    memcpy(out, (const uint8_t*)weft_file_memory(file) + offset, length);
  } else {
    ssize_t n = pread(weft_file_fd(file), out, length, (off_t)offset);
    assert_int_equal(n, (ssize_t)length);
  }
}

// queue_read with no waits, signalling (semaphore, value); waits for it.
static weft_status_t queue_read_and_wait(weft_cts_t* cts, weft_file_t* file,
                                         uint64_t file_offset,
                                         weft_buffer_t* target,
                                         weft_device_size_t target_offset,
                                         weft_device_size_t length) {
  weft_semaphore_t* done = weft_cts_create_semaphore(cts, 0);
  const uint64_t one = 1;
  return weft_cts_wait_submitted(
      done, weft_device_queue_read(cts->device, WEFT_QUEUE_AFFINITY_ANY,
                                   weft_semaphore_list_empty(),
                                   weft_cts_list1(&done, &one), file,
                                   file_offset, target, target_offset, length));
}

static weft_status_t queue_write_and_wait(
    weft_cts_t* cts, weft_buffer_t* source, weft_device_size_t source_offset,
    weft_file_t* file, uint64_t file_offset, weft_device_size_t length) {
  weft_semaphore_t* done = weft_cts_create_semaphore(cts, 0);
  const uint64_t one = 1;
  return weft_cts_wait_submitted(
      done, weft_device_queue_write(cts->device, WEFT_QUEUE_AFFINITY_ANY,
                                    weft_semaphore_list_empty(),
                                    weft_cts_list1(&done, &one), source,
                                    source_offset, file, file_offset, length));
}

//===----------------------------------------------------------------------===//
// Reads and writes
//===----------------------------------------------------------------------===//

static void read_whole(void** state) {
  weft_cts_t* cts = *state;
  enum { kLength = 4096 };
  uint8_t expected[kLength];
  make_bytes(expected, kLength, 1);
  for (int kind = 0; kind < 2; ++kind) {
    print_message("%s file\n", kFileKindNames[kind]);
    weft_file_t* file = make_file(cts, (file_kind_t)kind, WEFT_FILE_ACCESS_READ,
                                  expected, kLength);
    weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, kLength);
    WEFT_ASSERT_OK(queue_read_and_wait(cts, file, 0, buffer, 0, kLength));
    uint8_t actual[kLength];
    weft_cts_read_buffer(cts, buffer, 0, actual, kLength);
    weft_cts_assert_bytes_equal(actual, expected, kLength);
    weft_buffer_release(buffer);
    weft_file_release(file);
  }
}

static void read_subrange_at_offsets(void** state) {
  weft_cts_t* cts = *state;
  enum { kLength = 3000 };
  uint8_t contents[kLength];
  make_bytes(contents, kLength, 7);
  for (int kind = 0; kind < 2; ++kind) {
    print_message("%s file\n", kFileKindNames[kind]);
    weft_file_t* file = make_file(cts, (file_kind_t)kind, WEFT_FILE_ACCESS_READ,
                                  contents, kLength);
    weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 1024);
    const uint8_t zero = 0;
    weft_cts_fill_buffer(cts, buffer, 0, WEFT_WHOLE_BUFFER, &zero, 1);
    // File bytes [1001, 1501) into buffer bytes [37, 537).
    WEFT_ASSERT_OK(queue_read_and_wait(cts, file, 1001, buffer, 37, 500));
    // The file's last bytes, to the end of the buffer.
    WEFT_ASSERT_OK(
        queue_read_and_wait(cts, file, kLength - 100, buffer, 924, 100));
    uint8_t actual[1024];
    weft_cts_read_buffer(cts, buffer, 0, actual, sizeof(actual));
    for (size_t i = 0; i < sizeof(actual); ++i) {
      uint8_t want = 0;
      if (i >= 37 && i < 537) want = contents[1001 + i - 37];
      if (i >= 924) want = contents[kLength - 100 + i - 924];
      assert_int_equal(actual[i], want);
    }
    weft_buffer_release(buffer);
    weft_file_release(file);
  }
}

static void write_whole(void** state) {
  weft_cts_t* cts = *state;
  enum { kLength = 2048 };
  uint8_t zeros[kLength];
  memset(zeros, 0, sizeof(zeros));
  uint8_t expected[kLength];
  make_bytes(expected, kLength, 99);
  for (int kind = 0; kind < 2; ++kind) {
    print_message("%s file\n", kFileKindNames[kind]);
    weft_file_t* file = make_file(
        cts, (file_kind_t)kind, WEFT_FILE_ACCESS_READ | WEFT_FILE_ACCESS_WRITE,
        zeros, kLength);
    weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, kLength);
    weft_cts_write_buffer(cts, buffer, 0, expected, kLength);
    WEFT_ASSERT_OK(queue_write_and_wait(cts, buffer, 0, file, 0, kLength));
    uint8_t actual[kLength];
    read_file_directly(file, 0, actual, kLength);
    weft_cts_assert_bytes_equal(actual, expected, kLength);
    assert_int_equal(weft_file_length(file), kLength);
    weft_buffer_release(buffer);
    weft_file_release(file);
  }
}

static void write_subrange_at_offsets(void** state) {
  weft_cts_t* cts = *state;
  enum { kLength = 1000 };
  uint8_t original[kLength];
  make_bytes(original, kLength, 3);
  for (int kind = 0; kind < 2; ++kind) {
    print_message("%s file\n", kFileKindNames[kind]);
    weft_file_t* file = make_file(
        cts, (file_kind_t)kind, WEFT_FILE_ACCESS_READ | WEFT_FILE_ACCESS_WRITE,
        original, kLength);
    weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 256);
    uint8_t data[256];
    memset(data, 0xC7, sizeof(data));
    weft_cts_write_buffer(cts, buffer, 0, data, sizeof(data));
    // Buffer bytes [10, 110) to file bytes [333, 433).
    WEFT_ASSERT_OK(queue_write_and_wait(cts, buffer, 10, file, 333, 100));
    uint8_t actual[kLength];
    read_file_directly(file, 0, actual, kLength);
    for (size_t i = 0; i < kLength; ++i) {
      uint8_t want = (i >= 333 && i < 433) ? 0xC7 : original[i];
      assert_int_equal(actual[i], want);
    }
    assert_int_equal(weft_file_length(file), kLength);
    weft_buffer_release(buffer);
    weft_file_release(file);
  }
}

static void zero_length_transfers_signal(void** state) {
  weft_cts_t* cts = *state;
  uint8_t contents[16] = {0};
  for (int kind = 0; kind < 2; ++kind) {
    weft_file_t* file =
        make_file(cts, (file_kind_t)kind,
                  WEFT_FILE_ACCESS_READ | WEFT_FILE_ACCESS_WRITE, contents, 16);
    weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 16);
    WEFT_ASSERT_OK(queue_read_and_wait(cts, file, 16, buffer, 16, 0));
    WEFT_ASSERT_OK(queue_write_and_wait(cts, buffer, 0, file, 16, 0));
    assert_int_equal(weft_file_length(file), 16);
    weft_buffer_release(buffer);
    weft_file_release(file);
  }
}

//===----------------------------------------------------------------------===//
// Ordering
//===----------------------------------------------------------------------===//

// A write then a read of the same bytes, submitted before anything may run
// and ordered only by a semaphore between them.
static void chained_write_then_read(void** state) {
  weft_cts_t* cts = *state;
  enum { kLength = 8192 };
  uint8_t* zeros = calloc(1, kLength);
  uint8_t* expected = malloc(kLength);
  make_bytes(expected, kLength, 42);
  for (int kind = 0; kind < 2; ++kind) {
    print_message("%s file\n", kFileKindNames[kind]);
    // Pre-sized, so the read's range check (against the known length)
    // passes at submit; a read running first would see zeros.
    weft_file_t* file = make_file(
        cts, (file_kind_t)kind, WEFT_FILE_ACCESS_READ | WEFT_FILE_ACCESS_WRITE,
        zeros, kLength);
    weft_buffer_t* source = weft_cts_allocate_buffer(cts, kLength);
    weft_buffer_t* target = weft_cts_allocate_buffer(cts, kLength);
    weft_cts_write_buffer(cts, source, 0, expected, kLength);
    const uint8_t marker = 0xEE;
    weft_cts_fill_buffer(cts, target, 0, WEFT_WHOLE_BUFFER, &marker, 1);

    weft_semaphore_t* gate = weft_cts_create_semaphore(cts, 0);
    weft_semaphore_t* written = weft_cts_create_semaphore(cts, 0);
    weft_semaphore_t* read = weft_cts_create_semaphore(cts, 0);
    const uint64_t one = 1;
    WEFT_ASSERT_OK(weft_device_queue_write(
        cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_cts_list1(&gate, &one),
        weft_cts_list1(&written, &one), source, 0, file, 0, kLength));
    WEFT_ASSERT_OK(weft_device_queue_read(
        cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_cts_list1(&written, &one),
        weft_cts_list1(&read, &one), file, 0, target, 0, kLength));
    // Nothing may have run yet.
    assert_int_equal(weft_cts_query_value(written), 0);
    assert_int_equal(weft_cts_query_value(read), 0);
    uint8_t probe = 0;
    weft_cts_read_buffer(cts, target, 0, &probe, 1);
    assert_int_equal(probe, 0xEE);

    WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
    WEFT_ASSERT_OK(weft_cts_wait(read, 1));
    assert_int_equal(weft_cts_query_value(written), 1);
    uint8_t* actual = malloc(kLength);
    weft_cts_read_buffer(cts, target, 0, actual, kLength);
    weft_cts_assert_bytes_equal(actual, expected, kLength);
    free(actual);

    weft_semaphore_release(gate);
    weft_semaphore_release(written);
    weft_semaphore_release(read);
    weft_buffer_release(source);
    weft_buffer_release(target);
    weft_file_release(file);
  }
  free(zeros);
  free(expected);
}

// Read a file, take abs() of every element with a dispatch, write it back:
// three operations chained by one timeline semaphore.
static void read_modify_write(void** state) {
  weft_cts_t* cts = *state;
  enum { kCount = 300 };
  int32_t values[kCount];
  for (int i = 0; i < kCount; ++i) values[i] = (i % 3 == 0) ? -i : i * 2;
  uint32_t abs_range = 0;
  WEFT_ASSERT_OK(
      weft_executable_lookup_kernel(cts->kernels, "abs_range", &abs_range));
  for (int kind = 0; kind < 2; ++kind) {
    print_message("%s file\n", kFileKindNames[kind]);
    weft_file_t* file = make_file(
        cts, (file_kind_t)kind, WEFT_FILE_ACCESS_READ | WEFT_FILE_ACCESS_WRITE,
        values, sizeof(values));
    weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, sizeof(values));
    weft_semaphore_t* timeline = weft_cts_create_semaphore(cts, 0);
    const uint64_t values_at[4] = {0, 1, 2, 3};

    WEFT_ASSERT_OK(weft_device_queue_read(
        cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_semaphore_list_empty(),
        weft_cts_list1(&timeline, &values_at[1]), file, 0, buffer, 0,
        sizeof(values)));
    const uint32_t workgroups[3] = {(kCount + 63) / 64, 1, 1};
    const uint32_t constants[2] = {0, kCount};
    const weft_buffer_ref_t binding =
        weft_make_buffer_ref(buffer, 0, WEFT_WHOLE_BUFFER);
    WEFT_ASSERT_OK(weft_device_queue_dispatch(
        cts->device, WEFT_QUEUE_AFFINITY_ANY,
        weft_cts_list1(&timeline, &values_at[1]),
        weft_cts_list1(&timeline, &values_at[2]), cts->kernels, abs_range,
        workgroups, 2, constants, 1, &binding));
    WEFT_ASSERT_OK(
        weft_device_queue_write(cts->device, WEFT_QUEUE_AFFINITY_ANY,
                                weft_cts_list1(&timeline, &values_at[2]),
                                weft_cts_list1(&timeline, &values_at[3]),
                                buffer, 0, file, 0, sizeof(values)));
    WEFT_ASSERT_OK(weft_cts_wait(timeline, 3));

    int32_t actual[kCount];
    read_file_directly(file, 0, actual, sizeof(actual));
    for (int i = 0; i < kCount; ++i) {
      assert_int_equal(actual[i], values[i] < 0 ? -values[i] : values[i]);
    }
    weft_semaphore_release(timeline);
    weft_buffer_release(buffer);
    weft_file_release(file);
  }
}

// A failed wait fails the read's signal with the original message.
static void read_after_failed_wait(void** state) {
  weft_cts_t* cts = *state;
  uint8_t contents[64] = {0};
  weft_file_t* file =
      make_file(cts, FILE_KIND_FD, WEFT_FILE_ACCESS_READ, contents, 64);
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 64);
  weft_semaphore_t* gate = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* done = weft_cts_create_semaphore(cts, 0);
  const uint64_t one = 1;
  WEFT_ASSERT_OK(weft_device_queue_read(
      cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_cts_list1(&gate, &one),
      weft_cts_list1(&done, &one), file, 0, buffer, 0, 64));
  weft_semaphore_fail(gate, WEFT_STATUS(DATA_LOSS, "upstream lost chunk 17"));
  weft_cts_assert_status_contains_both(weft_cts_wait(done, 1),
                                       WEFT_STATUS_DATA_LOSS,
                                       "upstream lost chunk 17", NULL);
  weft_semaphore_release(gate);
  weft_semaphore_release(done);
  weft_buffer_release(buffer);
  weft_file_release(file);
}

//===----------------------------------------------------------------------===//
// Synchronous validation
//===----------------------------------------------------------------------===//

static void read_past_end_is_synchronous(void** state) {
  weft_cts_t* cts = *state;
  uint8_t contents[128];
  make_bytes(contents, sizeof(contents), 5);
  for (int kind = 0; kind < 2; ++kind) {
    print_message("%s file\n", kFileKindNames[kind]);
    weft_file_t* file =
        make_file(cts, (file_kind_t)kind, WEFT_FILE_ACCESS_READ, contents, 128);
    weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 512);
    weft_semaphore_t* done = weft_cts_create_semaphore(cts, 0);
    const uint64_t one = 1;
    weft_cts_assert_status_contains_both(
        weft_device_queue_read(
            cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_semaphore_list_empty(),
            weft_cts_list1(&done, &one), file, 64, buffer, 0, 128),
        WEFT_STATUS_OUT_OF_RANGE, "[64, 192) is past the end", "(128 bytes)");
    weft_cts_assert_status_contains_both(
        weft_device_queue_read(
            cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_semaphore_list_empty(),
            weft_cts_list1(&done, &one), file, 129, buffer, 0, 0),
        WEFT_STATUS_OUT_OF_RANGE, "past the end", NULL);
    // The signal semaphore is untouched: not signalled, not failed.
    assert_int_equal(weft_cts_query_value(done), 0);
    // The target range is checked too.
    weft_cts_assert_status_contains_both(
        weft_device_queue_read(
            cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_semaphore_list_empty(),
            weft_cts_list1(&done, &one), file, 0, buffer, 500, 100),
        WEFT_STATUS_OUT_OF_RANGE, "[500, 600)", "512 bytes");
    assert_int_equal(weft_cts_query_value(done), 0);
    weft_semaphore_release(done);
    weft_buffer_release(buffer);
    weft_file_release(file);
  }
}

static void write_to_read_only_file(void** state) {
  weft_cts_t* cts = *state;
  uint8_t contents[256] = {0};
  for (int kind = 0; kind < 2; ++kind) {
    print_message("%s file\n", kFileKindNames[kind]);
    weft_file_t* file =
        make_file(cts, (file_kind_t)kind, WEFT_FILE_ACCESS_READ, contents, 256);
    weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 256);
    weft_semaphore_t* done = weft_cts_create_semaphore(cts, 0);
    const uint64_t one = 1;
    weft_cts_assert_status_contains_both(
        weft_device_queue_write(
            cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_semaphore_list_empty(),
            weft_cts_list1(&done, &one), buffer, 0, file, 0, 256),
        WEFT_STATUS_PERMISSION_DENIED, "WRITE", weft_file_name(file));
    assert_int_equal(weft_cts_query_value(done), 0);
    weft_semaphore_release(done);
    weft_buffer_release(buffer);
    weft_file_release(file);
  }
  // And the other way round: reading a write-only file.
  char path[64];
  make_temp_file(contents, sizeof(contents), path);
  weft_file_t* write_only = NULL;
  WEFT_ASSERT_OK(weft_file_open(path, WEFT_FILE_ACCESS_WRITE, 0, cts->allocator,
                                &write_only));
  unlink(path);
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 256);
  weft_cts_assert_status_contains_both(
      queue_read_and_wait(cts, write_only, 0, buffer, 0, 16),
      WEFT_STATUS_PERMISSION_DENIED, "READ", path);
  weft_buffer_release(buffer);
  weft_file_release(write_only);
}

static void memory_file_cannot_grow(void** state) {
  weft_cts_t* cts = *state;
  uint8_t contents[100] = {0};
  weft_file_t* file =
      make_file(cts, FILE_KIND_MEMORY,
                WEFT_FILE_ACCESS_READ | WEFT_FILE_ACCESS_WRITE, contents, 100);
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 64);
  weft_semaphore_t* done = weft_cts_create_semaphore(cts, 0);
  const uint64_t one = 1;
  weft_cts_assert_status_contains_both(
      weft_device_queue_write(
          cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_semaphore_list_empty(),
          weft_cts_list1(&done, &one), buffer, 0, file, 50, 64),
      WEFT_STATUS_OUT_OF_RANGE, "[50, 114)", "cannot grow");
  assert_int_equal(weft_cts_query_value(done), 0);
  assert_int_equal(weft_file_length(file), 100);
  // Up to the end is fine.
  WEFT_ASSERT_OK(queue_write_and_wait(cts, buffer, 0, file, 36, 64));
  weft_semaphore_release(done);
  weft_buffer_release(buffer);
  weft_file_release(file);
}

static void open_missing_file(void** state) {
  weft_cts_t* cts = *state;
  const char* path = "/tmp/weft_cts_no_such_dir/missing_file.bin";
  weft_file_t* file = NULL;
  weft_cts_assert_status_contains_both(
      weft_file_open(path, WEFT_FILE_ACCESS_READ, 0, cts->allocator, &file),
      WEFT_STATUS_NOT_FOUND, path, "No such file");
  assert_null(file);
  // A directory is not a file.
  weft_cts_assert_status_contains_both(
      weft_file_open("/tmp", WEFT_FILE_ACCESS_READ, 0, cts->allocator, &file),
      WEFT_STATUS_INVALID_ARGUMENT, "'/tmp'", "directory");
  assert_null(file);
  // CREATE needs WRITE access.
  weft_cts_assert_status_contains_both(
      weft_file_open(path, WEFT_FILE_ACCESS_READ, WEFT_FILE_OPEN_FLAG_CREATE,
                     cts->allocator, &file),
      WEFT_STATUS_INVALID_ARGUMENT, "WRITE", NULL);
}

//===----------------------------------------------------------------------===//
// fd files
//===----------------------------------------------------------------------===//

static void file_length_and_names(void** state) {
  weft_cts_t* cts = *state;
  uint8_t contents[321] = {0};
  weft_file_t* memory =
      make_file(cts, FILE_KIND_MEMORY, WEFT_FILE_ACCESS_READ, contents, 321);
  assert_int_equal(weft_file_length(memory), 321);
  assert_true(weft_file_length_is_known(memory));
  assert_string_equal(weft_file_name(memory), "memory file");
  assert_non_null(weft_file_memory(memory));
  assert_int_equal(weft_file_fd(memory), -1);
  assert_int_equal(weft_file_access(memory), WEFT_FILE_ACCESS_READ);
  weft_file_release(memory);

  char path[64];
  make_temp_file(contents, sizeof(contents), path);
  weft_file_t* fd_file = NULL;
  WEFT_ASSERT_OK(
      weft_file_open(path, WEFT_FILE_ACCESS_READ, 0, cts->allocator, &fd_file));
  assert_int_equal(weft_file_length(fd_file), 321);
  assert_true(weft_file_length_is_known(fd_file));
  assert_string_equal(weft_file_name(fd_file), path);
  assert_null(weft_file_memory(fd_file));
  assert_true(weft_file_fd(fd_file) >= 0);
  weft_file_release(fd_file);

  // CREATE|TRUNCATE: a fresh empty file of known length 0.
  weft_file_t* truncated = NULL;
  WEFT_ASSERT_OK(
      weft_file_open(path, WEFT_FILE_ACCESS_READ | WEFT_FILE_ACCESS_WRITE,
                     WEFT_FILE_OPEN_FLAG_CREATE | WEFT_FILE_OPEN_FLAG_TRUNCATE,
                     cts->allocator, &truncated));
  assert_int_equal(weft_file_length(truncated), 0);
  assert_true(weft_file_length_is_known(truncated));
  weft_file_release(truncated);
  unlink(path);
}

static void fd_write_extends_length(void** state) {
  weft_cts_t* cts = *state;
  char path[64];
  make_temp_file(NULL, 0, path);
  weft_file_t* file = NULL;
  WEFT_ASSERT_OK(weft_file_open(path,
                                WEFT_FILE_ACCESS_READ | WEFT_FILE_ACCESS_WRITE,
                                0, cts->allocator, &file));
  unlink(path);
  assert_int_equal(weft_file_length(file), 0);
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 200);
  uint8_t data[200];
  make_bytes(data, sizeof(data), 77);
  weft_cts_write_buffer(cts, buffer, 0, data, sizeof(data));
  // Reading the empty file fails; writing past its end grows it.
  weft_cts_assert_status_contains_both(
      queue_read_and_wait(cts, file, 0, buffer, 0, 1), WEFT_STATUS_OUT_OF_RANGE,
      "(0 bytes)", NULL);
  WEFT_ASSERT_OK(queue_write_and_wait(cts, buffer, 0, file, 1000, 200));
  assert_int_equal(weft_file_length(file), 1200);
  weft_buffer_t* target = weft_cts_allocate_buffer(cts, 200);
  WEFT_ASSERT_OK(queue_read_and_wait(cts, file, 1000, target, 0, 200));
  uint8_t actual[200];
  weft_cts_read_buffer(cts, target, 0, actual, sizeof(actual));
  weft_cts_assert_bytes_equal(actual, data, sizeof(data));
  // The hole before it reads as zeros.
  WEFT_ASSERT_OK(queue_read_and_wait(cts, file, 500, target, 0, 200));
  weft_cts_read_buffer(cts, target, 0, actual, sizeof(actual));
  for (size_t i = 0; i < sizeof(actual); ++i) assert_int_equal(actual[i], 0);
  weft_buffer_release(target);
  weft_buffer_release(buffer);
  weft_file_release(file);
}

static void fd_file_from_descriptor(void** state) {
  weft_cts_t* cts = *state;
  uint8_t contents[777];
  make_bytes(contents, sizeof(contents), 11);
  char path[64];
  make_temp_file(contents, sizeof(contents), path);
  int fd = open(path, O_RDWR | O_CLOEXEC);
  unlink(path);
  assert_true(fd >= 0);
  weft_file_t* file = NULL;
  WEFT_ASSERT_OK(
      weft_file_from_fd(fd, WEFT_FILE_ACCESS_READ | WEFT_FILE_ACCESS_WRITE,
                        cts->allocator, &file));
  char expected_name[32];
  snprintf(expected_name, sizeof(expected_name), "fd %d", fd);
  assert_string_equal(weft_file_name(file), expected_name);
  assert_int_equal(weft_file_length(file), sizeof(contents));
  // The file holds its own descriptor: closing ours changes nothing.
  assert_int_not_equal(weft_file_fd(file), fd);
  close(fd);
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, sizeof(contents));
  WEFT_ASSERT_OK(
      queue_read_and_wait(cts, file, 0, buffer, 0, sizeof(contents)));
  uint8_t actual[sizeof(contents)];
  weft_cts_read_buffer(cts, buffer, 0, actual, sizeof(actual));
  weft_cts_assert_bytes_equal(actual, contents, sizeof(contents));
  WEFT_ASSERT_OK(queue_write_and_wait(cts, buffer, 0, file, 777, 100));
  assert_int_equal(weft_file_length(file), 877);
  weft_buffer_release(buffer);
  weft_file_release(file);

  // Access the descriptor does not allow is refused up front.
  make_temp_file(contents, 16, path);
  int read_only_fd = open(path, O_RDONLY | O_CLOEXEC);
  unlink(path);
  assert_true(read_only_fd >= 0);
  weft_cts_assert_status_contains_both(
      weft_file_from_fd(read_only_fd, WEFT_FILE_ACCESS_WRITE, cts->allocator,
                        &file),
      WEFT_STATUS_PERMISSION_DENIED, "read-only", "WRITE");
  assert_null(file);
  close(read_only_fd);
}

static void large_round_trip(void** state) {
  weft_cts_t* cts = *state;
  const size_t length = 256 * 1024 + 31;
  uint8_t* expected = malloc(length);
  uint8_t* actual = malloc(length);
  make_bytes(expected, length, 201);
  char path[64];
  make_temp_file(NULL, 0, path);
  weft_file_t* file = NULL;
  WEFT_ASSERT_OK(weft_file_open(path,
                                WEFT_FILE_ACCESS_READ | WEFT_FILE_ACCESS_WRITE,
                                0, cts->allocator, &file));
  unlink(path);
  weft_buffer_t* source = weft_cts_allocate_buffer(cts, length);
  weft_buffer_t* target = weft_cts_allocate_buffer(cts, length);
  weft_cts_write_buffer(cts, source, 0, expected, length);
  WEFT_ASSERT_OK(queue_write_and_wait(cts, source, 0, file, 0, length));
  assert_int_equal(weft_file_length(file), length);
  WEFT_ASSERT_OK(queue_read_and_wait(cts, file, 0, target, 0, length));
  weft_cts_read_buffer(cts, target, 0, actual, length);
  weft_cts_assert_bytes_equal(actual, expected, length);
  // Unaligned subrange.
  const uint8_t zero = 0;
  weft_cts_fill_buffer(cts, target, 0, WEFT_WHOLE_BUFFER, &zero, 1);
  WEFT_ASSERT_OK(queue_read_and_wait(cts, file, 4097, target, 3, 100001));
  weft_cts_read_buffer(cts, target, 3, actual, 100001);
  weft_cts_assert_bytes_equal(actual, expected + 4097, 100001);
  free(expected);
  free(actual);
  weft_buffer_release(source);
  weft_buffer_release(target);
  weft_file_release(file);
}

// A sparse file just past 2 GiB, read at its end: offsets beyond 31 bits.
static void sparse_file_past_2gib(void** state) {
  weft_cts_t* cts = *state;
  const uint64_t tail_offset = (uint64_t)2 << 30;
  const size_t tail_length = 4096;
  char path[64];
  make_temp_file(NULL, 0, path);
  int fd = open(path, O_RDWR | O_CLOEXEC);
  assert_true(fd >= 0);
  if (ftruncate(fd, (off_t)(tail_offset + tail_length)) != 0) {
    int error = errno;
    close(fd);
    unlink(path);
    print_message("skipped: %s refuses a sparse 2 GiB file: %s\n", path,
                  strerror(error));
    skip();
  }
  uint8_t tail[4096];
  make_bytes(tail, sizeof(tail), 123);
  ssize_t written = pwrite(fd, tail, sizeof(tail), (off_t)tail_offset);
  close(fd);
  if (written != (ssize_t)sizeof(tail)) {
    unlink(path);
    print_message("skipped: cannot write at 2 GiB in %s\n", path);
    skip();
  }
  weft_file_t* file = NULL;
  weft_status_t status =
      weft_file_open(path, WEFT_FILE_ACCESS_READ, 0, cts->allocator, &file);
  unlink(path);
  WEFT_ASSERT_OK(status);
  assert_int_equal(weft_file_length(file), tail_offset + tail_length);

  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 2 * tail_length);
  WEFT_ASSERT_OK(
      queue_read_and_wait(cts, file, tail_offset, buffer, 0, tail_length));
  uint8_t actual[4096];
  weft_cts_read_buffer(cts, buffer, 0, actual, sizeof(actual));
  weft_cts_assert_bytes_equal(actual, tail, sizeof(tail));
  // Across the 2 GiB boundary: the hole's zeros then the tail.
  WEFT_ASSERT_OK(
      queue_read_and_wait(cts, file, tail_offset - 64, buffer, 0, 128));
  weft_cts_read_buffer(cts, buffer, 0, actual, 128);
  for (size_t i = 0; i < 64; ++i) assert_int_equal(actual[i], 0);
  weft_cts_assert_bytes_equal(actual + 64, tail, 64);
  // One byte more is past the end, with the 64-bit numbers in the message.
  weft_cts_assert_status_contains_both(
      queue_read_and_wait(cts, file, tail_offset, buffer, 0, tail_length + 1),
      WEFT_STATUS_OUT_OF_RANGE, "[2147483648, 2147487745)",
      "(2147487744 bytes)");
  weft_buffer_release(buffer);
  weft_file_release(file);
}

//===----------------------------------------------------------------------===//
// Error paths found while the transfer runs
//===----------------------------------------------------------------------===//

// The file shrinks between submit (where the range check passes) and the
// read: the op fails with OUT_OF_RANGE at the first missing byte.
static void short_file_discovered_during_read(void** state) {
  weft_cts_t* cts = *state;
  const size_t length = 1024 * 1024;
  uint8_t* contents = malloc(length);
  make_bytes(contents, length, 17);
  char path[64];
  make_temp_file(contents, length, path);
  free(contents);
  weft_file_t* file = NULL;
  weft_status_t status =
      weft_file_open(path, WEFT_FILE_ACCESS_READ, 0, cts->allocator, &file);
  if (!weft_status_is_ok(status)) unlink(path);
  WEFT_ASSERT_OK(status);
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, length);
  weft_semaphore_t* gate = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* done = weft_cts_create_semaphore(cts, 0);
  const uint64_t one = 1;
  WEFT_ASSERT_OK(weft_device_queue_read(
      cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_cts_list1(&gate, &one),
      weft_cts_list1(&done, &one), file, 0, buffer, 0, length));
  // Behind weft's back, while the read waits.
  int truncate_result = truncate(path, 4096);
  int truncate_error = errno;
  unlink(path);
  if (truncate_result != 0) {
    fail_msg("truncate %s: %s", path, strerror(truncate_error));
  }
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  weft_cts_assert_status_contains_both(weft_cts_wait(done, 1),
                                       WEFT_STATUS_OUT_OF_RANGE,
                                       "short read at byte 4096", path);
  weft_semaphore_release(gate);
  weft_semaphore_release(done);
  weft_buffer_release(buffer);
  weft_file_release(file);
}

// A descriptor that cannot read: one opened write-only is refused when it
// is wrapped for READ; one that only names the file (O_PATH) is accepted
// (nothing says it cannot read until a read is tried) and the read fails.
static void descriptor_that_cannot_read(void** state) {
  weft_cts_t* cts = *state;
  uint8_t contents[4096];
  make_bytes(contents, sizeof(contents), 23);
  char path[64];
  make_temp_file(contents, sizeof(contents), path);
  int write_only_fd = open(path, O_WRONLY | O_CLOEXEC);
  int path_fd = open(path, O_PATH | O_CLOEXEC);
  unlink(path);
  assert_true(write_only_fd >= 0);
  assert_true(path_fd >= 0);
  char fd_name[32];
  snprintf(fd_name, sizeof(fd_name), "fd %d", write_only_fd);
  weft_file_t* file = NULL;
  weft_cts_assert_status_contains_both(
      weft_file_from_fd(write_only_fd, WEFT_FILE_ACCESS_READ, cts->allocator,
                        &file),
      WEFT_STATUS_PERMISSION_DENIED, fd_name, "write-only");
  assert_null(file);
  close(write_only_fd);

  WEFT_ASSERT_OK(
      weft_file_from_fd(path_fd, WEFT_FILE_ACCESS_READ, cts->allocator, &file));
  close(path_fd);
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, sizeof(contents));
  // Bad file descriptor, naming the descriptor the file was made from.
  snprintf(fd_name, sizeof(fd_name), "fd %d", path_fd);
  weft_cts_assert_status_contains_both(
      queue_read_and_wait(cts, file, 0, buffer, 0, sizeof(contents)),
      WEFT_STATUS_INVALID_ARGUMENT, fd_name, "queue_read");
  weft_buffer_release(buffer);
  weft_file_release(file);
}

// A directory is not a file, by path or by descriptor.
static void directory_is_refused(void** state) {
  weft_cts_t* cts = *state;
  char path[64];
  strcpy(path, "/tmp/weft_cts_dir_XXXXXX");
  assert_non_null(mkdtemp(path));
  weft_file_t* file = NULL;
  weft_status_t status =
      weft_file_open(path, WEFT_FILE_ACCESS_READ, 0, cts->allocator, &file);
  int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  rmdir(path);
  weft_cts_assert_status_contains_both(status, WEFT_STATUS_INVALID_ARGUMENT,
                                       path, "directory");
  assert_null(file);
  assert_true(fd >= 0);
  char fd_name[32];
  snprintf(fd_name, sizeof(fd_name), "fd %d", fd);
  weft_cts_assert_status_contains_both(
      weft_file_from_fd(fd, WEFT_FILE_ACCESS_READ, cts->allocator, &file),
      WEFT_STATUS_INVALID_ARGUMENT, fd_name, "directory");
  assert_null(file);
  close(fd);
}

// A descriptor number that is not open.
static void closed_descriptor(void** state) {
  weft_cts_t* cts = *state;
  // A high number nothing else in the process takes meanwhile (descriptors
  // are allocated lowest first).
  int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  assert_true(fd >= 0);
  int closed_fd = fcntl(fd, F_DUPFD_CLOEXEC, 900);
  close(fd);
  assert_true(closed_fd >= 900);
  close(closed_fd);
  char fd_name[32];
  snprintf(fd_name, sizeof(fd_name), "fd %d", closed_fd);
  weft_file_t* file = NULL;
  weft_cts_assert_status_contains_both(
      weft_file_from_fd(closed_fd, WEFT_FILE_ACCESS_READ, cts->allocator,
                        &file),
      WEFT_STATUS_INVALID_ARGUMENT, fd_name, "Bad file descriptor");
  assert_null(file);
}

//===----------------------------------------------------------------------===//
// Large offsets and many transfers
//===----------------------------------------------------------------------===//

// A sparse 5 GiB file written and read back through the queue across the
// 2 GiB and 4 GiB boundaries (offsets past 31 and 32 bits).
static void sparse_file_past_4gib(void** state) {
  weft_cts_t* cts = *state;
  const uint64_t file_length = (uint64_t)5 << 30;
  const size_t chunk = 1024 * 1024;
  char path[64];
  make_temp_file(NULL, 0, path);
  int fd = open(path, O_RDWR | O_CLOEXEC);
  assert_true(fd >= 0);
  int truncate_result = ftruncate(fd, (off_t)file_length);
  int truncate_error = errno;
  close(fd);
  if (truncate_result != 0) {
    unlink(path);
    print_message("skipped: %s refuses a sparse 5 GiB file: %s\n", path,
                  strerror(truncate_error));
    skip();
  }
  weft_file_t* file = NULL;
  weft_status_t status =
      weft_file_open(path, WEFT_FILE_ACCESS_READ | WEFT_FILE_ACCESS_WRITE, 0,
                     cts->allocator, &file);
  unlink(path);
  WEFT_ASSERT_OK(status);
  assert_int_equal(weft_file_length(file), file_length);

  uint8_t* expected = malloc(chunk);
  uint8_t* actual = malloc(chunk);
  weft_buffer_t* source = weft_cts_allocate_buffer(cts, chunk);
  weft_buffer_t* target = weft_cts_allocate_buffer(cts, chunk);
  // Each 1 MiB chunk straddles its boundary by half.
  const uint64_t offsets[2] = {((uint64_t)2 << 30) - chunk / 2,
                               ((uint64_t)4 << 30) - chunk / 2};
  for (int i = 0; i < 2; ++i) {
    make_bytes(expected, chunk, (uint8_t)(31 + i));
    weft_cts_write_buffer(cts, source, 0, expected, chunk);
    WEFT_ASSERT_OK(
        queue_write_and_wait(cts, source, 0, file, offsets[i], chunk));
  }
  assert_int_equal(weft_file_length(file), file_length);
  for (int i = 0; i < 2; ++i) {
    make_bytes(expected, chunk, (uint8_t)(31 + i));
    const uint8_t zero = 0;
    weft_cts_fill_buffer(cts, target, 0, WEFT_WHOLE_BUFFER, &zero, 1);
    WEFT_ASSERT_OK(
        queue_read_and_wait(cts, file, offsets[i], target, 0, chunk));
    weft_cts_read_buffer(cts, target, 0, actual, chunk);
    weft_cts_assert_bytes_equal(actual, expected, chunk);
    // And straight from the file, at the same offset.
    read_file_directly(file, offsets[i], actual, chunk);
    weft_cts_assert_bytes_equal(actual, expected, chunk);
  }
  // The end of the file, past 4 GiB: the hole reads as zeros.
  WEFT_ASSERT_OK(
      queue_read_and_wait(cts, file, file_length - chunk, target, 0, chunk));
  weft_cts_read_buffer(cts, target, 0, actual, chunk);
  for (size_t i = 0; i < chunk; ++i) assert_int_equal(actual[i], 0);
  free(expected);
  free(actual);
  weft_buffer_release(source);
  weft_buffer_release(target);
  weft_file_release(file);
}

// 300 reads released at once by one host signal, each with a semaphore of
// its own: more than a small proactor takes at a time (the depth-limited
// local-task variants run this too). All complete, in any order.
static void many_reads_in_flight(void** state) {
  weft_cts_t* cts = *state;
  enum { kReadCount = 300, kChunk = 4096 };
  const size_t length = (size_t)kReadCount * kChunk;
  uint8_t* contents = malloc(length);
  make_bytes(contents, length, 57);
  weft_file_t* file =
      make_file(cts, FILE_KIND_FD, WEFT_FILE_ACCESS_READ, contents, length);
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, length);
  const uint8_t marker = 0xEE;
  weft_cts_fill_buffer(cts, buffer, 0, WEFT_WHOLE_BUFFER, &marker, 1);
  weft_semaphore_t* gate = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t** done = calloc(kReadCount, sizeof(*done));
  const uint64_t one = 1;
  for (int i = 0; i < kReadCount; ++i) {
    done[i] = weft_cts_create_semaphore(cts, 0);
    // Backwards through the file, so completion order says nothing.
    uint64_t chunk_index = (uint64_t)(kReadCount - 1 - i);
    WEFT_ASSERT_OK(weft_device_queue_read(
        cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_cts_list1(&gate, &one),
        weft_cts_list1(&done[i], &one), file, chunk_index * kChunk, buffer,
        chunk_index * kChunk, kChunk));
  }
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  for (int i = 0; i < kReadCount; ++i) {
    WEFT_ASSERT_OK(weft_cts_wait(done[i], 1));
  }
  uint8_t* actual = malloc(length);
  weft_cts_read_buffer(cts, buffer, 0, actual, length);
  weft_cts_assert_bytes_equal(actual, contents, length);
  for (int i = 0; i < kReadCount; ++i) weft_semaphore_release(done[i]);
  free(done);
  free(actual);
  free(contents);
  weft_semaphore_release(gate);
  weft_buffer_release(buffer);
  weft_file_release(file);
}

int main(int argc, char** argv) {
  const struct CMUnitTest tests[] = {
      WEFT_CTS_CASE(read_whole),
      WEFT_CTS_CASE(read_subrange_at_offsets),
      WEFT_CTS_CASE(write_whole),
      WEFT_CTS_CASE(write_subrange_at_offsets),
      WEFT_CTS_CASE(zero_length_transfers_signal),
      WEFT_CTS_CASE(chained_write_then_read),
      WEFT_CTS_CASE(read_modify_write),
      WEFT_CTS_CASE(read_after_failed_wait),
      WEFT_CTS_CASE(read_past_end_is_synchronous),
      WEFT_CTS_CASE(write_to_read_only_file),
      WEFT_CTS_CASE(memory_file_cannot_grow),
      WEFT_CTS_CASE(open_missing_file),
      WEFT_CTS_CASE(file_length_and_names),
      WEFT_CTS_CASE(fd_write_extends_length),
      WEFT_CTS_CASE(fd_file_from_descriptor),
      WEFT_CTS_CASE(large_round_trip),
      WEFT_CTS_CASE(sparse_file_past_2gib),
      WEFT_CTS_CASE(short_file_discovered_during_read),
      WEFT_CTS_CASE(descriptor_that_cannot_read),
      WEFT_CTS_CASE(directory_is_refused),
      WEFT_CTS_CASE(closed_descriptor),
      WEFT_CTS_CASE(sparse_file_past_4gib),
      WEFT_CTS_CASE(many_reads_in_flight),
  };
  return weft_cts_run("file", tests, WEFT_CTS_COUNT(tests), argc, argv);
}
