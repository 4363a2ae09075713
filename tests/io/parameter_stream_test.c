// Unit tests: parameter streaming (include/weft/parameter_stream.h), each
// run on local-sync (reads run inline, timepoints fire inside the submit)
// and local-task (reads complete on device threads).
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

#include "weft/weft.h"

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static void assert_ok(weft_status_t status) {
  if (!weft_status_is_ok(status)) {
    char text[2048];
    weft_status_format(status, text, sizeof(text));
    weft_status_free(status);
    fail_msg("unexpected error: %s", text);
  }
}

// Consumes |status|; fails unless it has |code| and both needles (each may
// be NULL) appear in its text. WEFT_TEST_VERBOSE=1 prints the text.
static void assert_status_text(weft_status_t status, weft_status_code_t code,
                               const char* needle, const char* needle2) {
  char text[4096];
  weft_status_format(status, text, sizeof(text));
  if (getenv("WEFT_TEST_VERBOSE")) printf("  status: %s\n", text);
  weft_status_code_t actual = weft_status_code(status);
  weft_status_free(status);
  if (actual != code) {
    fail_msg("expected %s, got: %s", weft_status_code_string(code), text);
  }
  if (needle && !strstr(text, needle)) {
    fail_msg("expected '%s' in: %s", needle, text);
  }
  if (needle2 && !strstr(text, needle2)) {
    fail_msg("expected '%s' in: %s", needle2, text);
  }
}

static uint8_t byte_at(uint32_t file_seed, uint64_t offset) {
  uint64_t x =
      offset * 0x9E3779B97F4A7C15ull + file_seed * 0xD1B54A32D192ED03ull;
  return (uint8_t)(x >> 56);
}

// Writes |length| bytes of the pattern for |seed| to a new temp file.
static void make_temp_file(uint32_t seed, uint64_t length, char* path) {
  strcpy(path, "/tmp/weft_parameter_stream_XXXXXX");
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  uint8_t block[8192];
  for (uint64_t done = 0; done < length;) {
    size_t n =
        (size_t)(length - done < sizeof(block) ? length - done : sizeof(block));
    for (size_t i = 0; i < n; ++i) block[i] = byte_at(seed, done + i);
    assert_int_equal(write(fd, block, n), (ssize_t)n);
    done += n;
  }
  close(fd);
}

static weft_file_t* open_file(const char* path) {
  weft_file_t* file = NULL;
  assert_ok(weft_file_open(path, WEFT_FILE_ACCESS_READ, 0,
                           weft_allocator_system(), &file));
  return file;
}

static weft_device_t* create_device(void** state) {
  const char* name = (const char*)*state;
  weft_device_t* device = NULL;
  assert_ok(weft_device_create(name, weft_allocator_system(), &device));
  return device;
}

static bool is_local_sync(void** state) {
  return strcmp((const char*)*state, "local-sync") == 0;
}

static weft_buffer_t* allocate_buffer(weft_device_t* device,
                                      weft_device_size_t length) {
  weft_buffer_params_t params;
  memset(&params, 0, sizeof(params));
  weft_buffer_t* buffer = NULL;
  assert_ok(weft_device_allocate_buffer(device, params, length, &buffer));
  return buffer;
}

// Fails unless [offset, offset+length) of |buffer| holds the file pattern
// for |seed| starting at |file_offset|.
static void check_contents(weft_buffer_t* buffer, weft_device_size_t offset,
                           uint32_t seed, uint64_t file_offset, uint64_t length,
                           uint32_t span_index) {
  if (length == 0) return;
  uint8_t* data = (uint8_t*)malloc((size_t)length);
  assert_non_null(data);
  assert_ok(weft_buffer_map_read(buffer, offset, data, length));
  for (uint64_t i = 0; i < length; ++i) {
    if (data[i] != byte_at(seed, file_offset + i)) {
      free(data);
      fail_msg("span %u: byte %llu is wrong", span_index,
               (unsigned long long)i);
    }
  }
  free(data);
}

// What the progress callback saw. The stream calls it from one pump at a
// time, ordered by the pump's hand-offs, so plain fields are enough.
typedef struct progress_record_t {
  uint32_t calls;
  uint64_t last_bytes;
  uint32_t last_spans;
  uint32_t max_in_flight;
  bool went_backwards;
  uint64_t total;
  // Cancel once this many bytes are loaded (0: never), through the
  // caller's stream variable: start sets it before the first read.
  uint64_t cancel_at;
  weft_parameter_stream_t** stream;
  // Stack addresses of a local in the callback.
  uintptr_t lowest_stack;
  uintptr_t highest_stack;
} progress_record_t;

static void record_progress(void* user_data,
                            const weft_parameter_progress_t* progress) {
  progress_record_t* record = (progress_record_t*)user_data;
  volatile char marker = 0;
  uintptr_t address = (uintptr_t)&marker;
  if (record->calls == 0 || address < record->lowest_stack) {
    record->lowest_stack = address;
  }
  if (record->calls == 0 || address > record->highest_stack) {
    record->highest_stack = address;
  }
  ++record->calls;
  if (progress->bytes_loaded < record->last_bytes ||
      progress->spans_loaded < record->last_spans) {
    record->went_backwards = true;
  }
  record->last_bytes = progress->bytes_loaded;
  record->last_spans = progress->spans_loaded;
  record->total = progress->bytes_total;
  if (progress->reads_in_flight > record->max_in_flight) {
    record->max_in_flight = progress->reads_in_flight;
  }
  if (record->cancel_at && progress->bytes_loaded >= record->cancel_at) {
    assert_non_null(*record->stream);
    weft_parameter_stream_cancel(*record->stream);
  }
}

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

// 64 spans from 3 files of mixed sizes into 4 buffers: chunk splits,
// zero-length spans, unaligned offsets.
static void many_spans(void** state) {
  weft_device_t* device = create_device(state);
  const uint64_t file_sizes[3] = {300001, 77777, (1u << 20) + 13};
  char paths[3][64];
  weft_file_t* files[3];
  for (uint32_t i = 0; i < 3; ++i) {
    make_temp_file(i + 1, file_sizes[i], paths[i]);
    files[i] = open_file(paths[i]);
  }
  enum { kSpanCount = 64, kBufferCount = 4 };
  weft_parameter_span_t spans[kSpanCount];
  weft_device_size_t buffer_used[kBufferCount] = {0};
  uint32_t seeds[kSpanCount];
  uint32_t rng = 12345;
  for (uint32_t i = 0; i < kSpanCount; ++i) {
    rng = rng * 1103515245u + 12345u;
    uint32_t f = (rng >> 16) % 3;
    rng = rng * 1103515245u + 12345u;
    uint64_t length = (i % 9 == 4) ? 0 : ((rng >> 8) % 60000) + 1;
    if (length > file_sizes[f]) length = file_sizes[f];
    rng = rng * 1103515245u + 12345u;
    uint64_t offset = (rng >> 4) % (file_sizes[f] - length + 1);
    uint32_t b = i % kBufferCount;
    spans[i] = (weft_parameter_span_t){files[f], offset, NULL,
                                       buffer_used[b] + 3, length};
    buffer_used[b] += length + 3;
    seeds[i] = f + 1;
  }
  weft_buffer_t* buffers[kBufferCount];
  for (uint32_t b = 0; b < kBufferCount; ++b) {
    buffers[b] = allocate_buffer(device, buffer_used[b] + 16);
  }
  uint64_t total = 0;
  for (uint32_t i = 0; i < kSpanCount; ++i) {
    spans[i].buffer = buffers[i % kBufferCount];
    total += spans[i].length;
  }

  progress_record_t record;
  memset(&record, 0, sizeof(record));
  weft_parameter_stream_options_t options;
  weft_parameter_stream_options_initialize(&options);
  options.max_reads_in_flight = 8;
  options.chunk_size = 16384;
  options.progress_fn = record_progress;
  options.progress_user_data = &record;
  weft_parameter_stream_t* stream = NULL;
  assert_ok(weft_parameter_stream_start(device, spans, kSpanCount, &options,
                                        weft_allocator_system(), &stream));
  assert_ok(weft_parameter_stream_wait(stream, weft_timeout_infinite()));
  // A second wait returns the same result.
  assert_ok(weft_parameter_stream_wait(stream, weft_timeout_immediate()));
  weft_parameter_progress_t progress = weft_parameter_stream_progress(stream);
  assert_int_equal(progress.bytes_loaded, total);
  assert_int_equal(progress.bytes_total, total);
  assert_int_equal(progress.spans_loaded, kSpanCount);
  assert_int_equal(progress.span_count, kSpanCount);
  assert_int_equal(progress.reads_in_flight, 0);
  assert_false(weft_parameter_stream_direct_io_used(stream));
  weft_parameter_stream_release(stream);

  assert_false(record.went_backwards);
  assert_int_equal(record.last_bytes, total);
  assert_int_equal(record.last_spans, kSpanCount);
  assert_int_equal(record.total, total);
  assert_true(record.calls > kSpanCount);  // chunks were split
  assert_true(record.max_in_flight <= 8);
  assert_int_equal(record.max_in_flight, 8);  // and the bound was reached

  for (uint32_t i = 0; i < kSpanCount; ++i) {
    check_contents(spans[i].buffer, spans[i].buffer_offset, seeds[i],
                   spans[i].file_offset, spans[i].length, i);
  }
  for (uint32_t b = 0; b < kBufferCount; ++b) weft_buffer_release(buffers[b]);
  for (uint32_t i = 0; i < 3; ++i) {
    weft_file_release(files[i]);
    unlink(paths[i]);
  }
  weft_device_release(device);
}

// One read at a time: never more than one in flight.
static void one_read_in_flight(void** state) {
  weft_device_t* device = create_device(state);
  char path[64];
  make_temp_file(7, 100000, path);
  weft_file_t* file = open_file(path);
  weft_buffer_t* buffer = allocate_buffer(device, 100000);
  weft_parameter_span_t span = {file, 0, buffer, 0, 100000};
  progress_record_t record;
  memset(&record, 0, sizeof(record));
  weft_parameter_stream_options_t options;
  weft_parameter_stream_options_initialize(&options);
  options.max_reads_in_flight = 1;
  options.chunk_size = 4096;
  options.progress_fn = record_progress;
  options.progress_user_data = &record;
  assert_ok(weft_parameter_stream_load(device, &span, 1, &options,
                                       weft_allocator_system()));
  assert_int_equal(record.calls, (100000 + 4095) / 4096);
  assert_int_equal(record.max_in_flight, 1);
  assert_int_equal(record.last_bytes, 100000);
  check_contents(buffer, 0, 7, 0, 100000, 0);
  weft_buffer_release(buffer);
  weft_file_release(file);
  unlink(path);
  weft_device_release(device);
}

// Memory files stream like fd files; direct I/O quietly reads normally.
static void memory_file(void** state) {
  weft_device_t* device = create_device(state);
  enum { kLength = 50000 };
  uint8_t* contents = (uint8_t*)malloc(kLength);
  assert_non_null(contents);
  for (uint32_t i = 0; i < kLength; ++i) contents[i] = byte_at(9, i);
  weft_file_t* file = NULL;
  assert_ok(weft_file_wrap_memory(WEFT_FILE_ACCESS_READ, contents, kLength,
                                  NULL, NULL, weft_allocator_system(), &file));
  weft_buffer_t* buffer = allocate_buffer(device, kLength);
  weft_parameter_span_t spans[2] = {
      {file, 0, buffer, 0, 20000},
      {file, 20000, buffer, 20000, kLength - 20000},
  };
  weft_parameter_stream_options_t options;
  weft_parameter_stream_options_initialize(&options);
  options.chunk_size = 3000;
  options.direct_io = true;
  weft_parameter_stream_t* stream = NULL;
  assert_ok(weft_parameter_stream_start(device, spans, 2, &options,
                                        weft_allocator_system(), &stream));
  assert_ok(weft_parameter_stream_wait(stream, weft_timeout_infinite()));
  assert_false(weft_parameter_stream_direct_io_used(stream));
  weft_parameter_stream_release(stream);
  check_contents(buffer, 0, 9, 0, kLength, 0);
  weft_buffer_release(buffer);
  weft_file_release(file);
  free(contents);
  weft_device_release(device);
}

// No spans, and only empty ones: the stream ends at once with OK.
static void empty_streams(void** state) {
  weft_device_t* device = create_device(state);
  assert_ok(weft_parameter_stream_load(device, NULL, 0, NULL,
                                       weft_allocator_system()));
  char path[64];
  make_temp_file(3, 10, path);
  weft_file_t* file = open_file(path);
  weft_buffer_t* buffer = allocate_buffer(device, 16);
  weft_parameter_span_t spans[2] = {{file, 0, buffer, 0, 0},
                                    {file, 10, buffer, 16, 0}};
  weft_parameter_stream_t* stream = NULL;
  assert_ok(weft_parameter_stream_start(device, spans, 2, NULL,
                                        weft_allocator_system(), &stream));
  assert_ok(weft_parameter_stream_wait(stream, weft_timeout_infinite()));
  assert_int_equal(weft_parameter_stream_progress(stream).spans_loaded, 2);
  weft_parameter_stream_release(stream);
  weft_buffer_release(buffer);
  weft_file_release(file);
  unlink(path);
  weft_device_release(device);
}

// 5000 chunks in one stream. On local-sync every read completes inside its
// submit, so a completion that started the next read itself would nest
// 5000 deep; the pump keeps the callback at one depth.
static void long_chain_does_not_grow_the_stack(void** state) {
  weft_device_t* device = create_device(state);
  enum { kChunks = 5000, kChunkSize = 64 };
  const uint64_t length = (uint64_t)kChunks * kChunkSize;
  char path[64];
  make_temp_file(5, length, path);
  weft_file_t* file = open_file(path);
  weft_buffer_t* buffer = allocate_buffer(device, length);
  weft_parameter_span_t span = {file, 0, buffer, 0, length};
  progress_record_t record;
  memset(&record, 0, sizeof(record));
  weft_parameter_stream_options_t options;
  weft_parameter_stream_options_initialize(&options);
  options.max_reads_in_flight = 4;
  options.chunk_size = kChunkSize;
  options.progress_fn = record_progress;
  options.progress_user_data = &record;
  assert_ok(weft_parameter_stream_load(device, &span, 1, &options,
                                       weft_allocator_system()));
  assert_int_equal(record.calls, kChunks);
  assert_int_equal(record.last_bytes, length);
  if (is_local_sync(state)) {
    // Every callback ran on this thread at (nearly) the same depth.
    assert_true(record.highest_stack - record.lowest_stack < 16384);
  }
  check_contents(buffer, 0, 5, 0, length, 0);
  weft_buffer_release(buffer);
  weft_file_release(file);
  unlink(path);
  weft_device_release(device);
}

//===----------------------------------------------------------------------===//
// Direct I/O
//===----------------------------------------------------------------------===//

// Unaligned offsets and lengths through O_DIRECT staging; the file's
// unaligned tail goes through the normal file.
static void direct_io_loads_unaligned_spans(void** state) {
  weft_device_t* device = create_device(state);
  const uint64_t file_size = (1u << 20) + 1234;
  char path[64];
  make_temp_file(11, file_size, path);
  weft_file_t* file = open_file(path);
  weft_buffer_t* buffer = allocate_buffer(device, 3u << 20);
  const weft_parameter_span_t spans[] = {
      {file, 0, buffer, 0, 4096},              // aligned
      {file, 1, buffer, 5000, 100000},         // unaligned both ends
      {file, 8191, buffer, 200001, 2},         // across a block boundary
      {file, 300000, buffer, 300000, 333333},  // several chunks
      {file, file_size - 5000, buffer, 700001, 5000},  // reaches the tail
      {file, 12345, buffer, 800000, 0},                // empty
      {file, 4096, buffer, 900000, file_size - 4096},  // nearly everything
  };
  const uint32_t span_count = sizeof(spans) / sizeof(spans[0]);
  weft_parameter_stream_options_t options;
  weft_parameter_stream_options_initialize(&options);
  options.chunk_size = 10000;  // rounded up to 12288
  options.max_reads_in_flight = 5;
  options.direct_io = true;
  weft_parameter_stream_t* stream = NULL;
  assert_ok(weft_parameter_stream_start(device, spans, span_count, &options,
                                        weft_allocator_system(), &stream));
  assert_ok(weft_parameter_stream_wait(stream, weft_timeout_infinite()));
  // /tmp is ext4 here; a file system without O_DIRECT would read normally.
  assert_true(weft_parameter_stream_direct_io_used(stream));
  weft_parameter_stream_release(stream);
  for (uint32_t i = 0; i < span_count; ++i) {
    check_contents(buffer, spans[i].buffer_offset, 11, spans[i].file_offset,
                   spans[i].length, i);
  }
  weft_buffer_release(buffer);
  weft_file_release(file);
  unlink(path);
  weft_device_release(device);
}

//===----------------------------------------------------------------------===//
// Cancellation and waiting
//===----------------------------------------------------------------------===//

static void cancel_from_progress(void** state) {
  weft_device_t* device = create_device(state);
  const uint64_t length = 1u << 20;
  char path[64];
  make_temp_file(13, length, path);
  weft_file_t* file = open_file(path);
  weft_buffer_t* buffer = allocate_buffer(device, length);
  weft_parameter_span_t spans[4];
  for (uint32_t i = 0; i < 4; ++i) {
    spans[i] = (weft_parameter_span_t){file, i * (length / 4), buffer,
                                       i * (length / 4), length / 4};
  }
  weft_parameter_stream_t* stream = NULL;
  progress_record_t record;
  memset(&record, 0, sizeof(record));
  record.cancel_at = length / 4;
  record.stream = &stream;
  weft_parameter_stream_options_t options;
  weft_parameter_stream_options_initialize(&options);
  options.max_reads_in_flight = 4;
  options.chunk_size = 4096;
  options.progress_fn = record_progress;
  options.progress_user_data = &record;
  assert_ok(weft_parameter_stream_start(device, spans, 4, &options,
                                        weft_allocator_system(), &stream));
  assert_status_text(
      weft_parameter_stream_wait(stream, weft_timeout_infinite()),
      WEFT_STATUS_CANCELLED, "cancelled after", NULL);
  weft_parameter_progress_t progress = weft_parameter_stream_progress(stream);
  // The reads in flight at the cancel finished; no new ones started.
  assert_true(progress.bytes_loaded >= length / 4);
  assert_true(progress.bytes_loaded <= length / 4 + 4 * 4096);
  assert_int_equal(progress.reads_in_flight, 0);
  assert_int_equal(progress.bytes_loaded, record.last_bytes);
  // Cancelling again (and waiting again) changes nothing.
  weft_parameter_stream_cancel(stream);
  assert_status_text(
      weft_parameter_stream_wait(stream, weft_timeout_immediate()),
      WEFT_STATUS_CANCELLED, NULL, NULL);
  weft_parameter_stream_release(stream);
  weft_buffer_release(buffer);
  weft_file_release(file);
  unlink(path);
  weft_device_release(device);
}

// Releasing a running stream cancels it and waits for its reads.
static void release_while_running(void** state) {
  weft_device_t* device = create_device(state);
  const uint64_t length = 4u << 20;
  char path[64];
  make_temp_file(17, length, path);
  weft_file_t* file = open_file(path);
  weft_buffer_t* buffer = allocate_buffer(device, length);
  weft_parameter_span_t span = {file, 0, buffer, 0, length};
  weft_parameter_stream_options_t options;
  weft_parameter_stream_options_initialize(&options);
  options.chunk_size = 4096;
  options.max_reads_in_flight = 3;
  for (int round = 0; round < 20; ++round) {
    weft_parameter_stream_t* stream = NULL;
    assert_ok(weft_parameter_stream_start(device, &span, 1, &options,
                                          weft_allocator_system(), &stream));
    weft_parameter_stream_release(stream);
  }
  weft_buffer_release(buffer);
  weft_file_release(file);
  unlink(path);
  weft_device_release(device);
}

// A stream whose read cannot finish yet (a pipe nobody wrote to) reports
// DEADLINE_EXCEEDED to an immediate wait and goes on. Pipes are streams:
// their chunks are read one at a time, in order. local-sync would block in
// start (its reads run inline), so it only checks a finished stream there.
static void wait_times_out_while_parked(void** state) {
  weft_device_t* device = create_device(state);
  weft_buffer_t* buffer = allocate_buffer(device, 8192);
  if (is_local_sync(state)) {
    char path[64];
    make_temp_file(19, 8192, path);
    weft_file_t* file = open_file(path);
    weft_parameter_span_t span = {file, 0, buffer, 0, 8192};
    weft_parameter_stream_t* stream = NULL;
    assert_ok(weft_parameter_stream_start(device, &span, 1, NULL,
                                          weft_allocator_system(), &stream));
    assert_ok(weft_parameter_stream_wait(stream, weft_timeout_immediate()));
    weft_parameter_stream_release(stream);
    weft_file_release(file);
    unlink(path);
  } else {
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    weft_file_t* file = NULL;
    assert_ok(weft_file_from_fd(fds[0], WEFT_FILE_ACCESS_READ,
                                weft_allocator_system(), &file));
    weft_parameter_span_t spans[2] = {{file, 0, buffer, 0, 4096},
                                      {file, 4096, buffer, 4096, 4096}};
    weft_parameter_stream_options_t options;
    weft_parameter_stream_options_initialize(&options);
    options.chunk_size = 1024;
    weft_parameter_stream_t* stream = NULL;
    assert_ok(weft_parameter_stream_start(device, spans, 2, &options,
                                          weft_allocator_system(), &stream));
    assert_status_text(
        weft_parameter_stream_wait(stream, weft_timeout_immediate()),
        WEFT_STATUS_DEADLINE_EXCEEDED, "still running", NULL);
    assert_status_text(
        weft_parameter_stream_wait(stream, weft_timeout_relative(1000000)),
        WEFT_STATUS_DEADLINE_EXCEEDED, "0 of 8192 bytes", NULL);
    assert_true(weft_parameter_stream_progress(stream).reads_in_flight <= 1);
    uint8_t bytes[8192];
    for (uint32_t i = 0; i < sizeof(bytes); ++i) bytes[i] = byte_at(23, i);
    assert_int_equal(write(fds[1], bytes, sizeof(bytes)),
                     (ssize_t)sizeof(bytes));
    assert_ok(weft_parameter_stream_wait(stream, weft_timeout_infinite()));
    weft_parameter_stream_release(stream);
    check_contents(buffer, 0, 23, 0, 8192, 0);
    weft_file_release(file);
    close(fds[0]);
    close(fds[1]);
  }
  weft_buffer_release(buffer);
  weft_device_release(device);
}

//===----------------------------------------------------------------------===//
// Failures
//===----------------------------------------------------------------------===//

// The file shrank after it was opened: the read past the new end fails with
// OUT_OF_RANGE ("short read") naming the span; the stream ends with it.
static void truncated_file(void** state) {
  weft_device_t* device = create_device(state);
  char path[64];
  make_temp_file(29, 65536, path);
  weft_file_t* file = open_file(path);
  assert_int_equal(truncate(path, 40000), 0);
  weft_buffer_t* buffer = allocate_buffer(device, 65536);
  weft_parameter_span_t spans[2] = {{file, 0, buffer, 0, 16384},
                                    {file, 16384, buffer, 16384, 49152}};
  weft_parameter_stream_options_t options;
  weft_parameter_stream_options_initialize(&options);
  options.chunk_size = 4096;
  options.max_reads_in_flight = 4;
  weft_parameter_stream_t* stream = NULL;
  assert_ok(weft_parameter_stream_start(device, spans, 2, &options,
                                        weft_allocator_system(), &stream));
  assert_status_text(
      weft_parameter_stream_wait(stream, weft_timeout_infinite()),
      WEFT_STATUS_OUT_OF_RANGE, "short read", "span 1 (file '/tmp/");
  weft_parameter_progress_t progress = weft_parameter_stream_progress(stream);
  assert_true(progress.bytes_loaded < 65536);
  assert_int_equal(progress.reads_in_flight, 0);
  weft_parameter_stream_release(stream);
  // What was read before the end is right.
  check_contents(buffer, 0, 29, 0, 16384, 0);
  weft_buffer_release(buffer);
  weft_file_release(file);
  unlink(path);
  weft_device_release(device);
}

// A descriptor that cannot be read (made write-only behind the file's
// back): the OS's reason, naming the descriptor and the span.
static void unreadable_file(void** state) {
  weft_device_t* device = create_device(state);
  char path[64];
  make_temp_file(31, 8192, path);
  int fd = open(path, O_RDONLY);
  assert_true(fd >= 0);
  weft_file_t* file = NULL;
  assert_ok(weft_file_from_fd(fd, WEFT_FILE_ACCESS_READ,
                              weft_allocator_system(), &file));
  int write_only = open(path, O_WRONLY);
  assert_true(write_only >= 0);
  assert_true(dup2(write_only, weft_file_fd(file)) >= 0);
  close(write_only);
  weft_buffer_t* buffer = allocate_buffer(device, 8192);
  weft_parameter_span_t span = {file, 0, buffer, 0, 8192};
  char name[32];
  snprintf(name, sizeof(name), "fd %d", fd);
  assert_status_text(weft_parameter_stream_load(device, &span, 1, NULL,
                                                weft_allocator_system()),
                     WEFT_STATUS_INVALID_ARGUMENT, name, "span 0");
  weft_buffer_release(buffer);
  weft_file_release(file);
  close(fd);
  unlink(path);
  weft_device_release(device);
}

// Errors found before any read name the span; nothing starts.
static void validation_names_the_span(void** state) {
  weft_device_t* device = create_device(state);
  char path[64];
  make_temp_file(37, 1000, path);
  weft_file_t* file = open_file(path);
  weft_file_t* write_only = NULL;
  assert_ok(weft_file_open(path, WEFT_FILE_ACCESS_WRITE, 0,
                           weft_allocator_system(), &write_only));
  weft_buffer_t* buffer = allocate_buffer(device, 1000);
  weft_buffer_params_t params;
  memset(&params, 0, sizeof(params));
  params.usage = WEFT_BUFFER_USAGE_DISPATCH_STORAGE | WEFT_BUFFER_USAGE_MAPPING;
  weft_buffer_t* no_transfer = NULL;
  assert_ok(weft_device_allocate_buffer(device, params, 1000, &no_transfer));
  const weft_allocator_t allocator = weft_allocator_system();
  weft_parameter_stream_t* stream = NULL;

  weft_parameter_span_t spans[3] = {{file, 0, buffer, 0, 10},
                                    {file, 10, buffer, 10, 10},
                                    {file, 20, buffer, 20, 10}};
  spans[2].file = write_only;
  assert_status_text(
      weft_parameter_stream_start(device, spans, 3, NULL, allocator, &stream),
      WEFT_STATUS_PERMISSION_DENIED, "span 2", "READ");
  assert_null(stream);
  spans[2].file = file;
  spans[1].file_offset = 995;  // past the end of the file
  assert_status_text(
      weft_parameter_stream_start(device, spans, 3, NULL, allocator, &stream),
      WEFT_STATUS_OUT_OF_RANGE, "span 1", "(1000 bytes)");
  spans[1].file_offset = 10;
  spans[0].buffer_offset = 995;  // past the end of the buffer
  assert_status_text(
      weft_parameter_stream_start(device, spans, 3, NULL, allocator, &stream),
      WEFT_STATUS_OUT_OF_RANGE, "span 0", NULL);
  spans[0].buffer_offset = 0;
  spans[1].buffer = no_transfer;
  assert_status_text(
      weft_parameter_stream_start(device, spans, 3, NULL, allocator, &stream),
      WEFT_STATUS_PERMISSION_DENIED, "span 1", "TRANSFER");
  spans[1].buffer = NULL;
  assert_status_text(
      weft_parameter_stream_start(device, spans, 3, NULL, allocator, &stream),
      WEFT_STATUS_INVALID_ARGUMENT, "span 1", "buffer is NULL");
  spans[1].buffer = buffer;
  weft_parameter_stream_options_t options;
  weft_parameter_stream_options_initialize(&options);
  options.max_reads_in_flight = 0;
  assert_status_text(weft_parameter_stream_start(device, spans, 3, &options,
                                                 allocator, &stream),
                     WEFT_STATUS_INVALID_ARGUMENT, "max_reads_in_flight", NULL);
  weft_parameter_stream_options_initialize(&options);
  options.chunk_size = 0;
  assert_status_text(weft_parameter_stream_start(device, spans, 3, &options,
                                                 allocator, &stream),
                     WEFT_STATUS_INVALID_ARGUMENT, "chunk_size", NULL);
  assert_status_text(
      weft_parameter_stream_start(device, NULL, 3, NULL, allocator, &stream),
      WEFT_STATUS_INVALID_ARGUMENT, "NULL", NULL);
  assert_null(stream);
  // And the fixed spans load.
  assert_ok(weft_parameter_stream_load(device, spans, 3, NULL, allocator));
  check_contents(buffer, 0, 37, 0, 30, 0);

  weft_buffer_release(no_transfer);
  weft_buffer_release(buffer);
  weft_file_release(write_only);
  weft_file_release(file);
  unlink(path);
  weft_device_release(device);
}

// Every allocation the stream makes may fail: start returns the error and
// leaks nothing; once enough succeed it loads.
static void allocation_failures(void** state) {
  weft_device_t* device = create_device(state);
  char path[64];
  make_temp_file(41, 50000, path);
  weft_file_t* file = open_file(path);
  weft_buffer_t* buffer = allocate_buffer(device, 50000);
  weft_parameter_span_t spans[2] = {{file, 1, buffer, 0, 20000},
                                    {file, 20001, buffer, 20000, 29999}};
  weft_parameter_stream_options_t options;
  weft_parameter_stream_options_initialize(&options);
  options.chunk_size = 8192;
  options.direct_io = true;
  bool loaded = false;
  for (int64_t fail_at = 0; !loaded && fail_at < 64; ++fail_at) {
    weft_failing_allocator_t storage;
    weft_allocator_t allocator = weft_failing_allocator_initialize(
        weft_allocator_system(), fail_at, &storage);
    weft_status_t status =
        weft_parameter_stream_load(device, spans, 2, &options, allocator);
    if (weft_status_is_ok(status)) {
      loaded = true;
    } else {
      assert_status_text(status, WEFT_STATUS_RESOURCE_EXHAUSTED, NULL, NULL);
    }
  }
  assert_true(loaded);
  check_contents(buffer, 0, 41, 1, 49999, 0);
  weft_buffer_release(buffer);
  weft_file_release(file);
  unlink(path);
  weft_device_release(device);
}

// Usage: test_hal_parameter_stream [LOCAL_TASK_DEVICE]
// The second half of the tests runs on LOCAL_TASK_DEVICE (default
// "local-task"), e.g. "local-task?file_io=threads" to pick a proactor
// backend.
int main(int argc, char** argv) {
  const char* local_task = argc > 1 ? argv[1] : "local-task";
  const struct CMUnitTest tests[] = {
// Named "<driver>/<test>" so a failure says which driver it ran on.
#define WEFT_PS_TESTS(driver, name)                                            \
  {name "/many_spans", many_spans, NULL, NULL, (void*)driver},                 \
      {name "/one_read_in_flight", one_read_in_flight, NULL, NULL,             \
       (void*)driver},                                                         \
      {name "/memory_file", memory_file, NULL, NULL, (void*)driver},           \
      {name "/empty_streams", empty_streams, NULL, NULL, (void*)driver},       \
      {name "/long_chain_does_not_grow_the_stack",                             \
       long_chain_does_not_grow_the_stack, NULL, NULL, (void*)driver},         \
      {name "/direct_io_loads_unaligned_spans",                                \
       direct_io_loads_unaligned_spans, NULL, NULL, (void*)driver},            \
      {name "/cancel_from_progress", cancel_from_progress, NULL, NULL,         \
       (void*)driver},                                                         \
      {name "/release_while_running", release_while_running, NULL, NULL,       \
       (void*)driver},                                                         \
      {name "/wait_times_out_while_parked", wait_times_out_while_parked, NULL, \
       NULL, (void*)driver},                                                   \
      {name "/truncated_file", truncated_file, NULL, NULL, (void*)driver},     \
      {name "/unreadable_file", unreadable_file, NULL, NULL, (void*)driver},   \
      {name "/validation_names_the_span", validation_names_the_span, NULL,     \
       NULL, (void*)driver},                                                   \
      {name "/allocation_failures", allocation_failures, NULL, NULL,           \
       (void*)driver}
      WEFT_PS_TESTS("local-sync", "local-sync"),
      WEFT_PS_TESTS(local_task, "local-task"),
  };
  return cmocka_run_group_tests_name("io.parameter_stream", tests, NULL, NULL);
}
