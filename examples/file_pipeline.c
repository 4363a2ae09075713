// weft-example-pipeline: file -> buffer -> kernel -> buffer -> file.
//
// This is the program to copy when you start with weft. It:
//   1. writes two float vectors x and y to a temporary input file;
//   2. creates a device ("local-task", the threaded CPU driver, unless you
//      name another);
//   3. queues, all at once and without waiting in between:
//        read   input[x] -> buffer x     signals x_ready = 1
//        read   input[y] -> buffer y     signals y_ready = 1
//        saxpy  y = a*x + y              waits x_ready = 1 and y_ready = 1,
//                                        signals done = 1
//        write  buffer y -> output file  waits done = 1, signals done = 2
//   4. waits ONCE on the host, for done = 2;
//   5. reads the output file back with plain stdio and checks every element,
//      and a checksum, against the same computation done on the host.
//
// Usage: weft-example-pipeline [DEVICE] [COUNT]
//   DEVICE  a device string: "local-task" (default; one worker per
//           physical core), "local-task?workers=4&spin_us=50" (options:
//           workers, cpus, nodes, spin_us, queues) or "local-sync" (no
//           threads: everything runs inline)
//   COUNT   the number of floats in x and y (default 1048576)
// Exits 0 when the output is right, 1 on any error or mismatch.
//
// Things worth knowing before you change it:
//   - Semaphores are the only ordering. The two reads have no semaphore
//     between them, so the device may run them in any order or at the same
//     time; the dispatch names both in its wait list.
//   - A queue operation returns as soon as it is accepted. An error found
//     later (a short read, a failing kernel) fails the operation's signal
//     semaphores, which fails every operation waiting on them, and finally
//     the host wait, which returns the original error message.
//   - Objects are reference-counted: a queue operation retains what it uses
//     until it retires, so releasing your references early is safe.
//   - Every weft call returns a weft_status_t: NULL (WEFT_OK) on success, or
//     an error you must free (weft_status_fprint shows it).
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "example_kernels.h"
#include "weft/weft.h"

// The host side of the computation: y = a*x + y. The values are chosen so
// every result is exact in float, so the device and the host must agree bit
// for bit whatever instructions either uses.
static const float kA = 3.0f;
static float input_x(uint32_t i) { return (float)(i % 4096u) * 0.25f; }
static float input_y(uint32_t i) { return (float)(i % 1000u); }

// 64-bit FNV-1a over |length| bytes: a checksum both sides can compute.
static uint64_t fnv1a64(const void* data, size_t length) {
  const uint8_t* bytes = (const uint8_t*)data;
  uint64_t hash = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < length; ++i) {
    hash ^= bytes[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}

static uint32_t f32_bits(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof(bits));
  return bits;
}

static int64_t elapsed_us(weft_time_t start_ns) {
  return (int64_t)((weft_time_now() - start_ns) / 1000);
}

// Where the example keeps its two files.
typedef struct paths_t {
  char dir[256];
  char input[300];
  char output[300];
} paths_t;

// Creates a private temporary folder (under $TMPDIR or /tmp) and writes x
// then y, |count| floats each, to input.bin in it. Plain stdio: this is the
// "data comes from somewhere" part, not weft.
static int write_input_file(uint32_t count, paths_t* paths) {
  const char* tmp = getenv("TMPDIR");
  if (!tmp || !*tmp) tmp = "/tmp";
  snprintf(paths->dir, sizeof(paths->dir), "%s/weft-pipeline-XXXXXX", tmp);
  if (!mkdtemp(paths->dir)) {
    fprintf(stderr, "cannot create a folder under %s: %s\n", tmp,
            strerror(errno));
    return 1;
  }
  snprintf(paths->input, sizeof(paths->input), "%s/input.bin", paths->dir);
  snprintf(paths->output, sizeof(paths->output), "%s/output.bin", paths->dir);

  FILE* file = fopen(paths->input, "wb");
  int result = file ? 0 : 1;
  for (int vector = 0; vector < 2 && result == 0; ++vector) {
    for (uint32_t i = 0; i < count && result == 0; ++i) {
      float value = vector == 0 ? input_x(i) : input_y(i);
      if (fwrite(&value, sizeof(value), 1, file) != 1) result = 1;
    }
  }
  if (file && fclose(file) != 0) result = 1;
  if (result != 0) {
    fprintf(stderr, "cannot write %s: %s\n", paths->input, strerror(errno));
  }
  return result;
}

// Reads output.bin back and compares it with the host computation.
// Returns 0 when every element and the checksum match.
static int verify_output_file(const paths_t* paths, uint32_t count) {
  const size_t byte_length = (size_t)count * sizeof(float);
  float* expected = (float*)malloc(byte_length ? byte_length : 1);
  float* actual = (float*)malloc(byte_length ? byte_length : 1);
  int result = (expected && actual) ? 0 : 1;

  FILE* file = result == 0 ? fopen(paths->output, "rb") : NULL;
  if (result == 0 &&
      (!file || fread(actual, 1, byte_length, file) != byte_length)) {
    fprintf(stderr, "cannot read %u floats back from %s\n", count,
            paths->output);
    result = 1;
  }
  if (file) fclose(file);

  if (result == 0) {
    uint32_t mismatches = 0;
    double sum = 0.0;
    for (uint32_t i = 0; i < count; ++i) {
      expected[i] = kA * input_x(i) + input_y(i);
      sum += actual[i];
      if (f32_bits(actual[i]) != f32_bits(expected[i])) {
        if (mismatches < 5) {
          fprintf(stderr, "  mismatch at [%u]: got %.9g, expected %.9g\n", i,
                  (double)actual[i], (double)expected[i]);
        }
        ++mismatches;
      }
    }
    uint64_t checksum = fnv1a64(actual, byte_length);
    uint64_t expected_checksum = fnv1a64(expected, byte_length);
    printf("  verify   %u elements, %u mismatches, sum %.2f\n", count,
           mismatches, sum);
    printf("  checksum 0x%016" PRIx64 " (host 0x%016" PRIx64 ") %s\n", checksum,
           expected_checksum,
           checksum == expected_checksum ? "match" : "MISMATCH");
    if (mismatches != 0 || checksum != expected_checksum) result = 1;
  }
  free(expected);
  free(actual);
  return result;
}

// The weft part: everything from creating the device to the host wait.
// Every handle starts NULL; each step runs only if the ones before it
// succeeded; the releases at the end undo whatever was created. This is the
// "one exit path" shape used throughout weft.
static weft_status_t run_pipeline(const char* device_string, uint32_t count,
                                  const paths_t* paths) {
  const weft_allocator_t allocator = weft_allocator_system();
  const weft_device_size_t vector_bytes =
      (weft_device_size_t)count * sizeof(float);
  weft_device_t* device = NULL;
  weft_executable_t* kernels = NULL;
  weft_buffer_t* x = NULL;
  weft_buffer_t* y = NULL;
  weft_file_t* input = NULL;
  weft_file_t* output = NULL;
  weft_semaphore_t* x_ready = NULL;
  weft_semaphore_t* y_ready = NULL;
  weft_semaphore_t* done = NULL;
  uint32_t saxpy = 0;

  // A device comes from a string: the driver name plus options.
  weft_status_t status = weft_device_create(device_string, allocator, &device);

  // The kernel library is linked into this program: register it statically
  // and look the kernel up by name (the error lists the kernels it has).
  if (weft_status_is_ok(status)) {
    status = weft_device_create_executable(
        device, weft_executable_source_cpu_static(weft_example_kernels_query),
        &kernels);
  }
  if (weft_status_is_ok(status)) {
    status = weft_executable_lookup_kernel(kernels, "saxpy", &saxpy);
  }

  // Buffers say what they will be used for: file transfers and kernels.
  // Zero type and access mean "the defaults" (host-visible device memory,
  // every access).
  weft_buffer_params_t params = {
      .type = 0,
      .access = 0,
      .usage = WEFT_BUFFER_USAGE_TRANSFER | WEFT_BUFFER_USAGE_DISPATCH_STORAGE,
  };
  if (weft_status_is_ok(status)) {
    status = weft_device_allocate_buffer(device, params, vector_bytes, &x);
  }
  if (weft_status_is_ok(status)) {
    status = weft_device_allocate_buffer(device, params, vector_bytes, &y);
  }

  // Files: the input (read-only) and the output (created or truncated).
  if (weft_status_is_ok(status)) {
    status = weft_file_open(paths->input, WEFT_FILE_ACCESS_READ,
                            WEFT_FILE_OPEN_FLAG_NONE, allocator, &input);
  }
  if (weft_status_is_ok(status)) {
    status = weft_file_open(
        paths->output, WEFT_FILE_ACCESS_WRITE,
        WEFT_FILE_OPEN_FLAG_CREATE | WEFT_FILE_OPEN_FLAG_TRUNCATE, allocator,
        &output);
  }

  // Timeline semaphores, all starting at 0. Names show up in error messages
  // and in weft_device_dump_pending.
  if (weft_status_is_ok(status)) {
    status = weft_device_create_semaphore(device, 0, &x_ready);
  }
  if (weft_status_is_ok(status)) {
    status = weft_device_create_semaphore(device, 0, &y_ready);
  }
  if (weft_status_is_ok(status)) {
    status = weft_device_create_semaphore(device, 0, &done);
  }
  if (weft_status_is_ok(status)) {
    weft_semaphore_set_name(x_ready, "x_ready");
    weft_semaphore_set_name(y_ready, "y_ready");
    weft_semaphore_set_name(done, "done");
  }

  // Semaphore lists are borrowed for the duration of each call, so plain
  // local arrays do. "nothing" is the empty list.
  const weft_semaphore_list_t nothing = weft_semaphore_list_empty();
  const uint64_t one = 1, two = 2;
  const uint64_t ones[2] = {1, 1};
  weft_semaphore_t* both_inputs[2] = {x_ready, y_ready};
  const weft_semaphore_list_t x_ready_1 = {1, &x_ready, &one};
  const weft_semaphore_list_t y_ready_1 = {1, &y_ready, &one};
  const weft_semaphore_list_t inputs_ready = {2, both_inputs, ones};
  const weft_semaphore_list_t done_1 = {1, &done, &one};
  const weft_semaphore_list_t done_2 = {1, &done, &two};

  // --- Submit everything; nothing below blocks. ---------------------------
  const weft_time_t submit_start = weft_time_now();

  // x is the first |count| floats of the input file, y the next |count|.
  if (weft_status_is_ok(status)) {
    status = weft_device_queue_read(device, WEFT_QUEUE_AFFINITY_ANY, nothing,
                                    x_ready_1, input, /*file_offset=*/0, x,
                                    /*target_offset=*/0, vector_bytes);
  }
  if (weft_status_is_ok(status)) {
    status = weft_device_queue_read(device, WEFT_QUEUE_AFFINITY_ANY, nothing,
                                    y_ready_1, input, vector_bytes, y, 0,
                                    vector_bytes);
  }

  // One workgroup per WEFT_EXAMPLE_SAXPY_WORKGROUP_ELEMENTS elements. The
  // constants are copied by the call; the bindings name buffer ranges.
  const uint32_t workgroup_count[3] = {
      (count + WEFT_EXAMPLE_SAXPY_WORKGROUP_ELEMENTS - 1) /
          WEFT_EXAMPLE_SAXPY_WORKGROUP_ELEMENTS,
      1, 1};
  const uint32_t constants[2] = {f32_bits(kA), count};
  const weft_buffer_ref_t bindings[2] = {
      weft_make_buffer_ref(x, 0, WEFT_WHOLE_BUFFER),
      weft_make_buffer_ref(y, 0, WEFT_WHOLE_BUFFER),
  };
  if (weft_status_is_ok(status)) {
    status = weft_device_queue_dispatch(
        device, WEFT_QUEUE_AFFINITY_ANY, inputs_ready, done_1, kernels, saxpy,
        workgroup_count, 2, constants, 2, bindings);
  }

  // The same semaphore can be waited at one value and signalled at the next.
  if (weft_status_is_ok(status)) {
    status =
        weft_device_queue_write(device, WEFT_QUEUE_AFFINITY_ANY, done_1, done_2,
                                y, 0, output, /*file_offset=*/0, vector_bytes);
  }
  // If a submission above failed, the operations accepted before it still
  // run and signal (or fail) their semaphores: none of them waits on
  // something that will never come, so nothing is left hanging. A program
  // that submits work waiting on a later submission would call
  // weft_semaphore_fail on that semaphore here to unblock it.
  const int64_t submit_us = elapsed_us(submit_start);

  // --- The one host wait. ---------------------------------------------------
  // On local-task the work runs on the device's workers while this thread
  // waits here until the write has retired (on local-sync it already ran
  // inline during the submits, so this returns at once). An error anywhere
  // in the chain comes back here, with its original message.
  const weft_time_t wait_start = weft_time_now();
  if (weft_status_is_ok(status)) {
    status = weft_semaphore_wait(done, 2,
                                 weft_timeout_relative(60ll * 1000000000ll));
  }
  const int64_t wait_us = elapsed_us(wait_start);

  if (weft_status_is_ok(status)) {
    printf("  kernel   %s:saxpy, %u workgroups of %u elements, a = %g\n",
           weft_executable_name(kernels), workgroup_count[0],
           WEFT_EXAMPLE_SAXPY_WORKGROUP_ELEMENTS, (double)kA);
    printf("  submit   4 queue operations in %" PRId64 " us\n", submit_us);
    printf("  wait     one host wait (done = 2) in %" PRId64 " us\n", wait_us);
    printf("  output   %s (%" PRIu64 " bytes)\n", paths->output,
           (uint64_t)vector_bytes);
  }

  // Release in any order: operations still in flight hold their own
  // references. (Here nothing is in flight: we waited for the last one.)
  if (done) weft_semaphore_release(done);
  if (y_ready) weft_semaphore_release(y_ready);
  if (x_ready) weft_semaphore_release(x_ready);
  if (output) weft_file_release(output);
  if (input) weft_file_release(input);
  if (y) weft_buffer_release(y);
  if (x) weft_buffer_release(x);
  if (kernels) weft_executable_release(kernels);
  if (device) weft_device_release(device);
  return status;
}

static void print_usage(FILE* stream) {
  fprintf(stream,
          "Usage: weft-example-pipeline [DEVICE] [COUNT]\n"
          "  DEVICE  device string (default \"local-task\"; e.g.\n"
          "          \"local-task?workers=4\" or \"local-sync\")\n"
          "  COUNT   floats per vector (default 1048576)\n");
}

int main(int argc, char** argv) {
  const char* device_string = "local-task";
  uint32_t count = 1u << 20;
  if (argc > 1 &&
      (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    print_usage(stdout);
    return 0;
  }
  if (argc > 3) {
    print_usage(stderr);
    return 1;
  }
  if (argc > 1) device_string = argv[1];
  if (argc > 2) {
    char* end = NULL;
    unsigned long long value = strtoull(argv[2], &end, 10);
    if (!end || *end != '\0' || value == 0 || value > (1ull << 28)) {
      fprintf(stderr, "COUNT must be between 1 and %llu, got '%s'\n",
              1ull << 28, argv[2]);
      return 1;
    }
    count = (uint32_t)value;
  }

  printf("weft-example-pipeline: device \"%s\", %u floats per vector\n",
         device_string, count);
  paths_t paths;
  memset(&paths, 0, sizeof(paths));
  const weft_time_t start = weft_time_now();
  int result = write_input_file(count, &paths);
  if (result == 0) {
    printf("  input    %s (%" PRIu64 " bytes: x then y)\n", paths.input,
           (uint64_t)count * 2 * sizeof(float));
    weft_status_t status = run_pipeline(device_string, count, &paths);
    if (!weft_status_is_ok(status)) {
      fflush(stdout);  // keep the report in order when both go to one place
      fprintf(stderr, "weft-example-pipeline: ");
      weft_status_fprint(stderr, status);
      weft_status_free(status);
      result = 1;
    }
  }
  if (result == 0) result = verify_output_file(&paths, count);

  // Clean up the temporary files whatever happened.
  if (paths.output[0]) unlink(paths.output);
  if (paths.input[0]) unlink(paths.input);
  if (paths.dir[0]) rmdir(paths.dir);

  printf("  total    %" PRId64 " us\n%s\n", elapsed_us(start),
         result == 0 ? "ok" : "FAILED");
  return result;
}
