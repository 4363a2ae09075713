// weft-example-command-buffer: record once, execute many times.
//
// The program to copy when the same work runs again and again (a model's
// step, a solver's iteration). It:
//   1. creates a device ("local-task" unless you name another), the example
//      kernel library and two float vectors x and y, filled from the host;
//   2. records ONE reusable command buffer, once: a dispatch of saxpy
//      (y = a*x + y) whose bindings are binding-table SLOTS, not buffers:
//        slot 0 -> x, slot 1 -> y   (bound at each execute)
//   3. executes it N times, all submitted at once, chained by ONE timeline
//      semaphore 'step':
//        execute i   waits step >= i,   signals step = i + 1
//   4. waits ONCE on the host, for step = N;
//   5. reads y back and checks every element against the host's
//      y0 + N * a * x.
//
// Usage: weft-example-command-buffer [DEVICE] [N] [COUNT]
//   DEVICE  a device string: "local-task" (default), "local-task?workers=4"
//           or "local-sync" (no threads: everything runs inline)
//   N       how many times to execute the command buffer (default 100, at
//           most 10000)
//   COUNT   the number of floats in x and y (default 65536)
// Exits 0 when y is right, 1 on any error or mismatch.
//
// Things worth knowing before you change it:
//   - Recording validates what it can see: the kernel's signature, the
//     slots against the binding capacity, direct buffers' usage and ranges.
//     An error is returned by the recording call and again by end, and such
//     a command buffer can never be executed.
//   - queue_execute validates the binding table against how the recording
//     uses each slot (a buffer in every used slot, the usage, long enough)
//     and returns the error without running anything. Errors found while it
//     runs (a kernel returning non-zero) fail its signal semaphores.
//   - A reusable command buffer may run concurrently with itself. Here every
//     execution updates y, so the semaphore chain is what keeps them in
//     order; drop it and the executions would race on y.
//   - The binding table is copied by queue_execute (a local array will do)
//     and each execute may bind other buffers or ranges to the same slots:
//     that is what indirect references are for. A command buffer with only
//     direct references is executed with weft_binding_table_empty().
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "example_kernels.h"
#include "weft/weft.h"

// The host side: y = y0 + N * a * x. Every value is a multiple of 0.25 and
// stays below 2^22 for N <= 10000, so every partial sum the device makes is
// exact in float and the device and the host must agree bit for bit.
static const float kA = 3.0f;
static const uint32_t kMaxExecutions = 10000;
static float input_x(uint32_t i) { return (float)(i % 64u) * 0.25f; }
static float input_y(uint32_t i) { return (float)(i % 1000u); }
static float expected_y(uint32_t i, uint32_t executions) {
  return (float)((double)input_y(i) +
                 (double)executions * (double)kA * (double)input_x(i));
}

static uint32_t f32_bits(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof(bits));
  return bits;
}

static int64_t elapsed_us(weft_time_t start_ns) {
  return (int64_t)((weft_time_now() - start_ns) / 1000);
}

// Compares |y| with the host's computation; prints the verify line.
// Returns the number of mismatching elements.
static uint32_t verify(const float* y, uint32_t count, uint32_t executions) {
  uint32_t mismatches = 0;
  for (uint32_t i = 0; i < count; ++i) {
    const float expected = expected_y(i, executions);
    if (f32_bits(y[i]) != f32_bits(expected)) {
      if (mismatches < 5) {
        fprintf(stderr, "  mismatch at [%u]: got %.9g, expected %.9g\n", i,
                (double)y[i], (double)expected);
      }
      ++mismatches;
    }
  }
  const uint32_t last = count - 1;
  printf(
      "  verify   %u elements, %u mismatches (y[%u] = %g + %u * %g * %g "
      "= %g)\n",
      count, mismatches, last, (double)input_y(last), executions, (double)kA,
      (double)input_x(last), (double)y[last]);
  return mismatches;
}

// The weft part. Every handle starts NULL; each step runs only if the ones
// before it succeeded; the releases at the end undo whatever was created.
// On success |y_out| (|count| floats) holds y read back from the device.
static weft_status_t run(const char* device_string, uint32_t executions,
                         uint32_t count, float* y_out) {
  const weft_allocator_t allocator = weft_allocator_system();
  const weft_device_size_t vector_bytes =
      (weft_device_size_t)count * sizeof(float);
  weft_device_t* device = NULL;
  weft_executable_t* kernels = NULL;
  weft_buffer_t* x = NULL;
  weft_buffer_t* y = NULL;
  weft_command_buffer_t* command_buffer = NULL;
  weft_semaphore_t* step = NULL;
  uint32_t saxpy = 0;

  weft_status_t status = weft_device_create(device_string, allocator, &device);
  if (weft_status_is_ok(status)) {
    status = weft_device_create_executable(
        device, weft_executable_source_cpu_static(weft_example_kernels_query),
        &kernels);
  }
  if (weft_status_is_ok(status)) {
    status = weft_executable_lookup_kernel(kernels, "saxpy", &saxpy);
  }

  // x and y are read and written by kernels and by the host (the mapping
  // usages); zero type and access mean the defaults.
  const weft_buffer_params_t params = {
      .usage = WEFT_BUFFER_USAGE_DISPATCH_STORAGE | WEFT_BUFFER_USAGE_MAPPING,
  };
  if (weft_status_is_ok(status)) {
    status = weft_device_allocate_buffer(device, params, vector_bytes, &x);
  }
  if (weft_status_is_ok(status)) {
    status = weft_device_allocate_buffer(device, params, vector_bytes, &y);
  }

  // Fill x and y from the host through mappings. Nothing is queued yet, so
  // nothing can race with these writes.
  float* host = (float*)malloc((size_t)vector_bytes);
  if (weft_status_is_ok(status) && !host) {
    status = WEFT_STATUS(RESOURCE_EXHAUSTED, "cannot allocate %u host floats",
                         count);
  }
  if (weft_status_is_ok(status)) {
    for (uint32_t i = 0; i < count; ++i) host[i] = input_x(i);
    status = weft_buffer_map_write(x, 0, host, vector_bytes);
  }
  if (weft_status_is_ok(status)) {
    for (uint32_t i = 0; i < count; ++i) host[i] = input_y(i);
    status = weft_buffer_map_write(y, 0, host, vector_bytes);
  }
  free(host);

  // --- Record once. ---------------------------------------------------------
  // REUSABLE: executed any number of times. Binding capacity 2: the
  // recording may use slots 0 and 1 of the table given at each execute.
  // The workgroup count and the constants are copied now and fixed; the
  // buffers behind the slots are not.
  const weft_time_t record_start = weft_time_now();
  if (weft_status_is_ok(status)) {
    status =
        weft_command_buffer_create(device, WEFT_COMMAND_BUFFER_MODE_REUSABLE,
                                   WEFT_COMMAND_CATEGORY_DISPATCH,
                                   /*binding_capacity=*/2, &command_buffer);
  }
  if (weft_status_is_ok(status)) {
    status = weft_command_buffer_begin(command_buffer);
  }
  const uint32_t workgroup_count[3] = {
      (count + WEFT_EXAMPLE_SAXPY_WORKGROUP_ELEMENTS - 1) /
          WEFT_EXAMPLE_SAXPY_WORKGROUP_ELEMENTS,
      1, 1};
  const uint32_t constants[2] = {f32_bits(kA), count};
  const weft_buffer_ref_t slots[2] = {
      weft_make_indirect_buffer_ref(/*slot=*/0, 0, WEFT_WHOLE_BUFFER),  // x
      weft_make_indirect_buffer_ref(/*slot=*/1, 0, WEFT_WHOLE_BUFFER),  // y
  };
  if (weft_status_is_ok(status)) {
    status =
        weft_command_buffer_dispatch(command_buffer, kernels, saxpy,
                                     workgroup_count, 2, constants, 2, slots);
  }
  // end returns the first recording error again; after it the command
  // buffer is immutable (local-task compiles it here, once).
  if (weft_status_is_ok(status)) {
    status = weft_command_buffer_end(command_buffer);
  }
  const int64_t record_us = elapsed_us(record_start);

  // One timeline semaphore orders every execution. Its name shows up in
  // error messages and in weft_device_dump_pending.
  if (weft_status_is_ok(status)) {
    status = weft_device_create_semaphore(device, 0, &step);
  }
  if (weft_status_is_ok(status)) weft_semaphore_set_name(step, "step");

  // --- Execute N times; nothing below blocks. -------------------------------
  // The table binds slot 0 to all of x and slot 1 to all of y. It is copied
  // by every queue_execute, which also checks it against the recording.
  const weft_buffer_binding_t bindings[2] = {
      {.buffer = x, .offset = 0, .length = WEFT_WHOLE_BUFFER},
      {.buffer = y, .offset = 0, .length = WEFT_WHOLE_BUFFER},
  };
  const weft_binding_table_t table = {2, bindings};
  const weft_time_t submit_start = weft_time_now();
  uint32_t submitted = 0;
  for (; weft_status_is_ok(status) && submitted < executions; ++submitted) {
    // Lists are borrowed for the call only: locals of the loop will do.
    const uint64_t wait_value = submitted;        // step >= i
    const uint64_t signal_value = submitted + 1;  // step = i + 1
    const weft_semaphore_list_t wait_list = {1, &step, &wait_value};
    const weft_semaphore_list_t signal_list = {1, &step, &signal_value};
    status =
        weft_device_queue_execute(device, WEFT_QUEUE_AFFINITY_ANY, wait_list,
                                  signal_list, command_buffer, table);
    if (!weft_status_is_ok(status)) break;  // |submitted| were accepted
  }
  const int64_t submit_us = elapsed_us(submit_start);

  // --- The one host wait. ---------------------------------------------------
  // Wait for every execution that was accepted, even after a submit error:
  // each one only waits for the one before it, so this cannot hang, and
  // nothing is left running when we release. A failure while running
  // fails 'step', which fails every later execution and returns here with
  // its original message.
  const weft_time_t wait_start = weft_time_now();
  if (submitted > 0) {
    weft_status_t wait_status = weft_semaphore_wait(
        step, submitted, weft_timeout_relative(60ll * 1000000000ll));
    if (weft_status_is_ok(status)) {
      status = wait_status;
    } else {
      weft_status_free(wait_status);  // report the submit error instead
    }
  }
  const int64_t wait_us = elapsed_us(wait_start);

  // Read y back through a mapping: the wait ordered the last execution
  // before this.
  if (weft_status_is_ok(status)) {
    status = weft_buffer_map_read(y, 0, y_out, vector_bytes);
  }
  if (weft_status_is_ok(status)) {
    printf("  record   1 reusable command buffer, %u command(s) in %" PRId64
           " us: dispatch %s:saxpy, %u workgroups, a = %g, x and y through "
           "slots 0 and 1\n",
           weft_command_buffer_command_count(command_buffer), record_us,
           weft_executable_name(kernels), workgroup_count[0], (double)kA);
    printf(
        "  submit   %u queue_execute (i waits step >= i, signals step = "
        "i + 1) in %" PRId64 " us\n",
        submitted, submit_us);
    printf("  wait     one host wait (step = %u) in %" PRId64 " us\n",
           submitted, wait_us);
    printf("  rate     %.2f us per execution, submit and wait together\n",
           (double)(submit_us + wait_us) / (double)submitted);
  }

  // Release in any order (nothing is in flight: we waited for it all).
  if (step) weft_semaphore_release(step);
  if (command_buffer) weft_command_buffer_release(command_buffer);
  if (y) weft_buffer_release(y);
  if (x) weft_buffer_release(x);
  if (kernels) weft_executable_release(kernels);
  if (device) weft_device_release(device);
  return status;
}

static void print_usage(FILE* stream) {
  fprintf(stream,
          "Usage: weft-example-command-buffer [DEVICE] [N] [COUNT]\n"
          "  DEVICE  device string (default \"local-task\"; e.g.\n"
          "          \"local-task?workers=4\" or \"local-sync\")\n"
          "  N       executions of the command buffer (default 100, at most "
          "%u)\n"
          "  COUNT   floats per vector (default 65536)\n",
          kMaxExecutions);
}

// Parses a decimal in [1, max] into |out|; prints why not and returns 1.
static int parse_count(const char* name, const char* text,
                       unsigned long long max, uint32_t* out) {
  char* end = NULL;
  unsigned long long value = strtoull(text, &end, 10);
  if (!end || end == text || *end != '\0' || value == 0 || value > max) {
    fprintf(stderr, "%s must be between 1 and %llu, got '%s'\n", name, max,
            text);
    return 1;
  }
  *out = (uint32_t)value;
  return 0;
}

int main(int argc, char** argv) {
  const char* device_string = "local-task";
  uint32_t executions = 100;
  uint32_t count = 1u << 16;
  if (argc > 1 &&
      (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    print_usage(stdout);
    return 0;
  }
  if (argc > 4) {
    print_usage(stderr);
    return 1;
  }
  if (argc > 1) device_string = argv[1];
  if ((argc > 2 && parse_count("N", argv[2], kMaxExecutions, &executions)) ||
      (argc > 3 && parse_count("COUNT", argv[3], 1ull << 24, &count))) {
    return 1;
  }

  printf(
      "weft-example-command-buffer: device \"%s\", %u executions over %u "
      "floats\n",
      device_string, executions, count);
  const weft_time_t start = weft_time_now();
  int result = 0;
  float* y = (float*)malloc((size_t)count * sizeof(float));
  if (!y) {
    fprintf(stderr, "cannot allocate %u floats\n", count);
    result = 1;
  }
  if (result == 0) {
    weft_status_t status = run(device_string, executions, count, y);
    if (!weft_status_is_ok(status)) {
      fflush(stdout);  // keep the report in order when both go to one place
      fprintf(stderr, "weft-example-command-buffer: ");
      weft_status_fprint(stderr, status);
      weft_status_free(status);
      result = 1;
    }
  }
  if (result == 0 && verify(y, count, executions) != 0) result = 1;
  free(y);
  printf("  total    %" PRId64 " us\n%s\n", elapsed_us(start),
         result == 0 ? "ok" : "FAILED");
  return result;
}
