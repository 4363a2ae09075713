// weft-example-params: load a parameter file into device buffers.
//
// A model's weights usually sit in one file as tensors back to back. This
// program:
//   1. writes such a file: 32 tensors of varying sizes (floats, each
//      starting on a 64-byte boundary) to a private temporary folder;
//   2. creates a device ("local-task" unless you name another) and one
//      buffer per tensor;
//   3. streams every tensor into its buffer with one parameter stream
//      (up to 16 reads of at most 1 MiB in flight), printing progress while
//      it waits;
//   4. prints the throughput and checks every byte of every buffer.
//
// Usage: weft-example-params [DEVICE] [MIB] [direct]
//   DEVICE  a device string (default "local-task"; "local-sync" runs
//           everything inline inside the start call)
//   MIB     about how many MiB of parameters to write (default 256)
//   direct  read with O_DIRECT where the file system supports it
// Exits 0 when every tensor arrived intact, 1 on any error or mismatch.
//
// The file was just written, so it is in the page cache: the figure is the
// speed of the copy path, not of the disk (use "direct" to bypass the cache).
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "weft/weft.h"

enum { kTensorCount = 32 };

// Where each tensor lives in the file, and how long it is.
typedef struct tensor_t {
  uint64_t offset;
  uint64_t length;
} tensor_t;

// The value of element |j| of tensor |i|: exact in float and different in
// every tensor, so a tensor loaded into the wrong buffer is caught.
static float tensor_value(uint32_t i, uint64_t j) {
  return (float)(i * 1000u) + (float)(j % 997u) * 0.5f;
}

// Sizes vary from 1/8 to 13/8 of the average, rounded to whole floats.
static void plan_tensors(uint64_t total_bytes, tensor_t* tensors) {
  const uint64_t average = total_bytes / kTensorCount;
  uint64_t offset = 0;
  for (uint32_t i = 0; i < kTensorCount; ++i) {
    uint64_t length = average * (1 + (i * 7) % 13) / 8 / 4 * 4;
    if (length == 0) length = 4;
    tensors[i].offset = offset;
    tensors[i].length = length;
    offset = (offset + length + 63) / 64 * 64;
  }
}

// Writes the tensors to |path| with plain stdio.
static int write_parameter_file(const char* path, const tensor_t* tensors) {
  FILE* file = fopen(path, "wb");
  int result = file ? 0 : 1;
  for (uint32_t i = 0; i < kTensorCount && result == 0; ++i) {
    if (fseek(file, (long)tensors[i].offset, SEEK_SET) != 0) result = 1;
    for (uint64_t j = 0; j < tensors[i].length / 4 && result == 0; ++j) {
      float value = tensor_value(i, j);
      if (fwrite(&value, sizeof(value), 1, file) != 1) result = 1;
    }
  }
  if (file && fclose(file) != 0) result = 1;
  if (result != 0) {
    fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
  }
  return result;
}

// Counts mismatching floats in tensor |i|'s buffer.
static uint64_t count_mismatches(weft_buffer_t* buffer, uint32_t i,
                                 uint64_t length, weft_status_t* status) {
  float* values = (float*)malloc(length);
  uint64_t mismatches = 0;
  *status = values ? weft_buffer_map_read(buffer, 0, values, length)
                   : WEFT_STATUS(RESOURCE_EXHAUSTED, "no host memory");
  for (uint64_t j = 0; weft_status_is_ok(*status) && j < length / 4; ++j) {
    if (values[j] != tensor_value(i, j)) ++mismatches;
  }
  free(values);
  return mismatches;
}

// Called after every chunk, on whichever thread completed it. Calls come
// one at a time, and the last one happens before the stream's wait
// returns, so plain fields are enough.
typedef struct stream_stats_t {
  uint32_t chunks;
  uint32_t most_reads_in_flight;
} stream_stats_t;

static void on_progress(void* user_data,
                        const weft_parameter_progress_t* progress) {
  stream_stats_t* stats = (stream_stats_t*)user_data;
  ++stats->chunks;
  if (progress->reads_in_flight > stats->most_reads_in_flight) {
    stats->most_reads_in_flight = progress->reads_in_flight;
  }
}

int main(int argc, char** argv) {
  const char* device_string = argc > 1 ? argv[1] : "local-task";
  const uint64_t mib = argc > 2 ? strtoull(argv[2], NULL, 10) : 256;
  const bool direct = argc > 3 && strcmp(argv[3], "direct") == 0;

  tensor_t tensors[kTensorCount];
  plan_tensors((mib ? mib : 1) << 20, tensors);
  const char* tmp = getenv("TMPDIR");
  char dir[256], path[300];
  snprintf(dir, sizeof(dir), "%s/weft-params-XXXXXX",
           tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    fprintf(stderr, "cannot create a folder in %s: %s\n", dir, strerror(errno));
    return 1;
  }
  snprintf(path, sizeof(path), "%s/params.bin", dir);
  int result = write_parameter_file(path, tensors);

  weft_allocator_t allocator = weft_allocator_system();
  weft_status_t status = WEFT_OK;
  weft_device_t* device = NULL;
  weft_file_t* file = NULL;
  weft_buffer_t* buffers[kTensorCount] = {NULL};
  if (result == 0) {
    status = weft_device_create(device_string, allocator, &device);
  }
  if (weft_status_is_ok(status) && result == 0) {
    status = weft_file_open(path, WEFT_FILE_ACCESS_READ, 0, allocator, &file);
  }

  // One span per tensor: file range -> whole buffer.
  weft_parameter_span_t spans[kTensorCount];
  uint64_t total = 0;
  for (uint32_t i = 0;
       i < kTensorCount && weft_status_is_ok(status) && result == 0; ++i) {
    weft_buffer_params_t params = {0, 0, 0};  // the defaults
    status = weft_device_allocate_buffer(device, params, tensors[i].length,
                                         &buffers[i]);
    spans[i] = (weft_parameter_span_t){file, tensors[i].offset, buffers[i], 0,
                                       tensors[i].length};
    total += tensors[i].length;
  }

  stream_stats_t stats = {0, 0};
  weft_parameter_stream_options_t options;
  weft_parameter_stream_options_initialize(&options);
  options.max_reads_in_flight = 16;
  options.chunk_size = 1 << 20;
  options.direct_io = direct;
  options.progress_fn = on_progress;
  options.progress_user_data = &stats;
  weft_parameter_stream_t* stream = NULL;
  weft_time_t start_ns = weft_time_now();
  if (weft_status_is_ok(status) && result == 0) {
    printf("streaming %d tensors (%.1f MiB) from %s on %s\n", kTensorCount,
           total / 1048576.0, path, device_string);
    status = weft_parameter_stream_start(device, spans, kTensorCount, &options,
                                         allocator, &stream);
  }
  // Wait in slices of 20 ms, printing progress between them.
  while (weft_status_is_ok(status) && stream) {
    status =
        weft_parameter_stream_wait(stream, weft_timeout_relative(20000000));
    if (!weft_status_is(status, WEFT_STATUS_DEADLINE_EXCEEDED)) break;
    weft_status_free(status);
    status = WEFT_OK;
    weft_parameter_progress_t progress = weft_parameter_stream_progress(stream);
    printf("  %6.1f of %.1f MiB, %u of %u tensors, %u reads in flight\n",
           progress.bytes_loaded / 1048576.0, total / 1048576.0,
           progress.spans_loaded, progress.span_count,
           progress.reads_in_flight);
  }
  double seconds = (double)(weft_time_now() - start_ns) / 1e9;
  if (weft_status_is_ok(status) && stream) {
    printf(
        "loaded   %.1f MiB in %.3f s: %.2f GB/s (%u chunks, up to %u "
        "reads in flight, O_DIRECT %s)\n",
        total / 1048576.0, seconds, total / seconds / 1e9, stats.chunks,
        stats.most_reads_in_flight,
        weft_parameter_stream_direct_io_used(stream) ? "used" : "not used");
  }
  weft_parameter_stream_release(stream);

  uint64_t mismatches = 0;
  for (uint32_t i = 0;
       i < kTensorCount && weft_status_is_ok(status) && result == 0; ++i) {
    mismatches += count_mismatches(buffers[i], i, tensors[i].length, &status);
  }
  if (weft_status_is_ok(status) && result == 0) {
    printf("verify   %d tensors, %" PRIu64 " mismatching floats\n",
           kTensorCount, mismatches);
    if (mismatches != 0) result = 1;
  }
  if (!weft_status_is_ok(status)) {
    weft_status_fprint(stderr, status);
    weft_status_free(status);
    result = 1;
  }

  for (uint32_t i = 0; i < kTensorCount; ++i) {
    if (buffers[i]) weft_buffer_release(buffers[i]);
  }
  if (file) weft_file_release(file);
  if (device) weft_device_release(device);
  unlink(path);
  rmdir(dir);
  return result;
}
