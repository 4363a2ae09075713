// weft-example-vm-pipelines: many pipelines in flight from one host thread,
// through the VM's loop.
//
// The program (vm_pipelines.wvm) does the work; this driver only sets it up
// and checks what it did. It:
//   1. writes an input file: for each pipeline i, COUNT floats x_i then
//      COUNT floats y_i;
//   2. links the program with the native hal module on DEVICE, with the
//      example kernel library (examples/kernels) registered as "kernels";
//   3. calls the program's @open once, synchronously: it looks the saxpy
//      kernel up and opens the input and output files;
//   4. submits one invocation of @run per pipeline to a VM loop. Each one
//      queues read -> saxpy -> write, ordered by fences, and awaits its last
//      fence: a coroutine yield, so the loop's thread (this one) goes on to
//      the next pipeline while the device works on the ones before;
//   5. runs the loop until every invocation ended, then reads the output
//      file back with plain stdio and checks every element of every
//      pipeline, y_i = a * x_i + y_i, against the host.
//
// Usage: weft-example-vm-pipelines [DEVICE] [PIPELINES] [COUNT] [PROGRAM]
//   DEVICE     a device string (default "local-task"; "local-sync" runs
//              every queue operation inside its submit call)
//   PIPELINES  how many pipelines (default 64)
//   COUNT      floats per pipeline (default 16384)
//   PROGRAM    the .wvm (or .wvmb) program (default: the one next to this
//              file in the source tree)
// Exits 0 when every pipeline succeeded and every output element is right,
// 1 otherwise. With WEFT_TRACE=path.json the run is traced (the queue
// operations of different pipelines overlap in the timeline).
//
// The VM has no public API yet (include/weft/vm/ is to come), so this
// example uses the runtime's internal VM headers, as weft-run does.
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "example_kernels.h"
#include "weft/weft.h"

#ifndef WEFT_VM_PIPELINES_PROGRAM
#define WEFT_VM_PIPELINES_PROGRAM "vm_pipelines.wvm"
#endif

// The host side: y = a * x + y with values chosen so that every result is
// exact in float (the device and the host agree bit for bit).
static const float kA = 3.0f;
static float input_x(uint64_t i) { return (float)(i % 4096u) * 0.25f; }
static float input_y(uint64_t i) { return (float)(i % 1000u); }

// How long the loop may run before the example reports a hang.
static const int64_t kRunTimeoutNs = 120ll * 1000 * 1000 * 1000;

typedef struct options_t {
  const char* device;
  uint32_t pipelines;
  uint32_t count;
  const char* program;
} options_t;

typedef struct paths_t {
  char dir[256];
  char input[300];
  char output[300];
} paths_t;

// What one pipeline's invocation ended with.
typedef struct pipeline_t {
  bool done;
  weft_status_t status;  // owned
  int32_t await_result;  // @run's result: 0 when the write was reached
} pipeline_t;

static uint32_t f32_bits(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof(bits));
  return bits;
}

// Element |j| of pipeline |i|'s x or y: the global element index keeps the
// chunks distinct.
static uint64_t global_index(const options_t* options, uint32_t pipeline,
                             uint32_t j) {
  return (uint64_t)pipeline * options->count + j;
}

// Creates a private folder under $TMPDIR (or /tmp) and writes input.bin:
// per pipeline, x then y. Plain stdio: the data comes from somewhere.
static int write_input_file(const options_t* options, paths_t* paths) {
  const char* tmp = getenv("TMPDIR");
  if (!tmp || !*tmp) tmp = "/tmp";
  snprintf(paths->dir, sizeof(paths->dir), "%s/weft-vm-pipelines-XXXXXX",
           tmp);
  if (!mkdtemp(paths->dir)) {
    fprintf(stderr, "cannot create a folder under %s: %s\n", tmp,
            strerror(errno));
    paths->dir[0] = '\0';
    return 1;
  }
  snprintf(paths->input, sizeof(paths->input), "%s/input.bin", paths->dir);
  snprintf(paths->output, sizeof(paths->output), "%s/output.bin", paths->dir);

  float* chunk = (float*)malloc((size_t)options->count * sizeof(float));
  FILE* file = chunk ? fopen(paths->input, "wb") : NULL;
  int result = file ? 0 : 1;
  for (uint32_t i = 0; i < options->pipelines && result == 0; ++i) {
    for (int vector = 0; vector < 2 && result == 0; ++vector) {
      for (uint32_t j = 0; j < options->count; ++j) {
        const uint64_t g = global_index(options, i, j);
        chunk[j] = vector == 0 ? input_x(g) : input_y(g);
      }
      if (fwrite(chunk, sizeof(float), options->count, file) !=
          options->count) {
        result = 1;
      }
    }
  }
  if (file && fclose(file) != 0) result = 1;
  if (result != 0) {
    fprintf(stderr, "cannot write %s: %s\n", paths->input, strerror(errno));
  }
  free(chunk);
  return result;
}

// Reads output.bin back and checks every pipeline's chunk. Returns 0 when
// every element matches.
static int verify_output_file(const options_t* options,
                              const paths_t* paths) {
  float* chunk = (float*)malloc((size_t)options->count * sizeof(float));
  FILE* file = chunk ? fopen(paths->output, "rb") : NULL;
  if (!file) {
    fprintf(stderr, "cannot open %s: %s\n", paths->output, strerror(errno));
    free(chunk);
    return 1;
  }
  uint64_t mismatches = 0;
  uint32_t bad_pipelines = 0;
  int result = 0;
  for (uint32_t i = 0; i < options->pipelines && result == 0; ++i) {
    if (fread(chunk, sizeof(float), options->count, file) != options->count) {
      fprintf(stderr, "%s is short: pipeline %u's chunk is missing\n",
              paths->output, i);
      result = 1;
      break;
    }
    uint64_t before = mismatches;
    for (uint32_t j = 0; j < options->count; ++j) {
      const uint64_t g = global_index(options, i, j);
      const float expected = kA * input_x(g) + input_y(g);
      if (f32_bits(chunk[j]) != f32_bits(expected)) {
        if (mismatches < 5) {
          fprintf(stderr,
                  "  mismatch in pipeline %u at [%u]: got %.9g, expected "
                  "%.9g\n",
                  i, j, (double)chunk[j], (double)expected);
        }
        ++mismatches;
      }
    }
    if (mismatches != before) ++bad_pipelines;
  }
  fclose(file);
  free(chunk);
  if (result == 0) {
    printf("  verify   %u pipelines, %" PRIu64
           " elements, %" PRIu64 " mismatches (%u pipelines wrong)\n",
           options->pipelines, (uint64_t)options->pipelines * options->count,
           mismatches, bad_pipelines);
    if (mismatches != 0) result = 1;
  }
  return result;
}

// The loop's done function: keeps what the invocation ended with.
static void pipeline_done(void* user_data,
                          weft_vm_loop_invocation_t* invocation,
                          weft_status_t status, weft_vm_value_t* results,
                          uint32_t result_count) {
  (void)invocation;
  pipeline_t* pipeline = (pipeline_t*)user_data;
  pipeline->done = true;
  pipeline->status = status;
  pipeline->await_result = result_count == 1 ? results[0].i32 : -1;
}

// A `bytes` ref holding |text| (one reference, owned by the caller).
static weft_status_t make_bytes(const char* text, weft_vm_value_t* out_value) {
  weft_vm_bytes_t* bytes = NULL;
  weft_status_t status = weft_vm_bytes_create(weft_allocator_system(), text,
                                              strlen(text), &bytes);
  out_value->type = WEFT_VM_TYPE_REF;
  out_value->ref.object = bytes;
  out_value->ref.type = bytes ? &kWeftVmBytesType : NULL;
  return status;
}

static void release_values(weft_vm_value_t* values, uint32_t count) {
  for (uint32_t i = 0; i < count; ++i) {
    if (values[i].type == WEFT_VM_TYPE_REF) weft_vm_ref_release(values[i].ref);
  }
}

// Sums up the pipelines: OK when every one ended OK with a reached fence,
// else the first failure (annotated with its pipeline) and a count.
static weft_status_t collect_results(const options_t* options,
                                     pipeline_t* pipelines) {
  weft_status_t first = WEFT_OK;
  uint32_t failed = 0;
  for (uint32_t i = 0; i < options->pipelines; ++i) {
    pipeline_t* pipeline = &pipelines[i];
    weft_status_t status = pipeline->status;
    pipeline->status = WEFT_OK;
    if (!pipeline->done) {
      status = WEFT_STATUS(INTERNAL, "pipeline %u never ended", i);
    } else if (weft_status_is_ok(status) && pipeline->await_result != 0) {
      status = WEFT_STATUS(INTERNAL,
                           "pipeline %u: the await returned code %d", i,
                           pipeline->await_result);
    }
    if (weft_status_is_ok(status)) continue;
    ++failed;
    if (weft_status_is_ok(first)) {
      first = weft_status_annotate(status, "in pipeline %u", i);
    } else {
      weft_status_free(status);
    }
  }
  if (failed > 0) {
    first = weft_status_annotate(first, "%u of %u pipelines failed", failed,
                                 options->pipelines);
  }
  return first;
}

// Everything one run holds; run_release frees what was made.
typedef struct run_t {
  weft_vm_module_t* hal;
  weft_vm_module_t* program;
  weft_vm_context_t* context;
  weft_vm_loop_t* loop;
  pipeline_t* pipelines;
  // @open's results: executable, saxpy ordinal, input file, output file.
  weft_vm_value_t opened[4];
} run_t;

static void run_release(run_t* run, uint32_t pipeline_count) {
  // The loop first: destroying it ends (cancels) invocations still live,
  // which then release what they hold.
  weft_vm_loop_destroy(run->loop);
  if (run->pipelines) {
    for (uint32_t i = 0; i < pipeline_count; ++i) {
      weft_status_free(run->pipelines[i].status);
    }
    free(run->pipelines);
  }
  release_values(run->opened, 4);
  weft_vm_context_release(run->context);
  weft_vm_module_release(run->program);
  weft_vm_module_release(run->hal);
}

// Links the program with the hal module and calls @open.
static weft_status_t run_prepare(const options_t* options,
                                 const paths_t* paths, run_t* run) {
  const weft_allocator_t allocator = weft_allocator_system();
  const weft_hal_static_library_t library = {"kernels",
                                             weft_example_kernels_query};
  const weft_hal_module_options_t hal_options = {
      .device_string = options->device,
      .static_library_count = 1,
      .static_libraries = &library,
  };
  weft_status_t status =
      weft_hal_module_create(&hal_options, allocator, &run->hal);
  if (weft_status_is_ok(status)) {
    status =
        weft_vm_module_load_file(options->program, allocator, &run->program);
  }
  if (weft_status_is_ok(status)) {
    weft_vm_module_t* modules[2] = {run->program, run->hal};
    status = weft_vm_context_create(modules, 2, allocator, &run->context);
  }
  weft_vm_value_t paths_args[2] = {{0}, {0}};
  if (weft_status_is_ok(status)) status = make_bytes(paths->input, &paths_args[0]);
  if (weft_status_is_ok(status)) {
    status = make_bytes(paths->output, &paths_args[1]);
  }
  if (weft_status_is_ok(status)) {
    status = weft_vm_invoke_sync(run->context, "pipelines.open", paths_args, 2,
                                 run->opened, 4, 0, allocator);
  }
  release_values(paths_args, 2);
  return status;
}

// Submits one @run invocation per pipeline, runs the loop once until
// nothing is runnable (every invocation ran to its await: those whose write
// was not reached yet are parked), then to the end.
static weft_status_t run_pipelines(const options_t* options, run_t* run,
                                   uint32_t* out_parked,
                                   int64_t* out_first_pass_ns,
                                   int64_t* out_total_ns) {
  const weft_allocator_t allocator = weft_allocator_system();
  weft_status_t status = WEFT_OK;
  run->pipelines = (pipeline_t*)calloc(options->pipelines, sizeof(pipeline_t));
  if (!run->pipelines) {
    status = WEFT_STATUS(RESOURCE_EXHAUSTED, "%u pipeline records",
                         options->pipelines);
  }
  if (weft_status_is_ok(status)) {
    const weft_vm_loop_options_t loop_options = {0};
    status = weft_vm_loop_create(loop_options, allocator, &run->loop);
  }
  const weft_time_t start = weft_time_now();
  for (uint32_t i = 0; weft_status_is_ok(status) && i < options->pipelines;
       ++i) {
    const weft_vm_value_t args[7] = {
        run->opened[0],  // executable
        run->opened[2],  // input
        run->opened[3],  // output
        run->opened[1],  // saxpy ordinal
        {.type = WEFT_VM_TYPE_I64, .i64 = i},
        {.type = WEFT_VM_TYPE_I64, .i64 = options->count},
        {.type = WEFT_VM_TYPE_F32, .f32 = kA},
    };
    status = weft_vm_loop_submit(run->loop, run->context, "pipelines.run",
                                 args, 7, 1, pipeline_done,
                                 &run->pipelines[i], NULL);
  }
  // A deadline already passed: the loop runs what is runnable and returns
  // DEADLINE_EXCEEDED once every live invocation is waiting.
  if (weft_status_is_ok(status)) {
    status = weft_vm_loop_run(run->loop, weft_time_now());
    if (weft_status_code(status) == WEFT_STATUS_DEADLINE_EXCEEDED) {
      weft_status_free(status);
      status = WEFT_OK;
    }
    *out_parked = weft_vm_loop_live_count(run->loop);
    *out_first_pass_ns = (int64_t)(weft_time_now() - start);
  }
  if (weft_status_is_ok(status)) {
    status = weft_vm_loop_run(run->loop, weft_time_now() + kRunTimeoutNs);
    *out_total_ns = (int64_t)(weft_time_now() - start);
  }
  if (weft_status_is_ok(status)) {
    status = collect_results(options, run->pipelines);
  }
  return status;
}

static weft_status_t run_example(const options_t* options,
                                 const paths_t* paths) {
  run_t run;
  memset(&run, 0, sizeof(run));
  uint32_t parked = 0;
  int64_t first_pass_ns = 0;
  int64_t total_ns = 0;
  weft_status_t status = run_prepare(options, paths, &run);
  if (weft_status_is_ok(status)) {
    status = run_pipelines(options, &run, &parked, &first_pass_ns, &total_ns);
  }
  if (weft_status_is_ok(status)) {
    const uint64_t chunk_bytes = (uint64_t)options->count * sizeof(float);
    printf("  kernel   saxpy (ordinal %d), a = %g, %u workgroups per "
           "pipeline\n",
           run.opened[1].i32, (double)kA,
           (options->count + WEFT_EXAMPLE_SAXPY_WORKGROUP_ELEMENTS - 1) /
               WEFT_EXAMPLE_SAXPY_WORKGROUP_ELEMENTS);
    printf("  loop     %u invocations on one thread; %u parked on their "
           "last fence at once after the first pass (%" PRId64 " us)\n",
           options->pipelines, parked, first_pass_ns / 1000);
    printf("  run      %u pipelines x 3 queue operations in %" PRId64
           " us (%.2f us per pipeline)\n",
           options->pipelines, total_ns / 1000,
           (double)total_ns / 1000.0 / options->pipelines);
    printf("  bytes    %" PRIu64 " read, %" PRIu64 " written\n",
           2 * chunk_bytes * options->pipelines,
           chunk_bytes * options->pipelines);
  }
  run_release(&run, options->pipelines);
  return status;
}

static void print_usage(FILE* stream) {
  fprintf(stream,
          "Usage: weft-example-vm-pipelines [DEVICE] [PIPELINES] [COUNT] "
          "[PROGRAM]\n"
          "  DEVICE     device string (default \"local-task\"; e.g.\n"
          "             \"local-task?workers=4\" or \"local-sync\")\n"
          "  PIPELINES  pipelines in flight (default 64)\n"
          "  COUNT      floats per pipeline (default 16384)\n"
          "  PROGRAM    the program (default %s)\n",
          WEFT_VM_PIPELINES_PROGRAM);
}

// Parses a positive integer up to |max| into |*out|; false with a message
// otherwise.
static bool parse_count(const char* name, const char* text,
                        unsigned long long max, uint32_t* out) {
  char* end = NULL;
  errno = 0;
  unsigned long long value = strtoull(text, &end, 10);
  if (errno != 0 || !end || end == text || *end != '\0' || value == 0 ||
      value > max || text[0] == '-') {
    fprintf(stderr, "%s must be between 1 and %llu, got '%s'\n", name, max,
            text);
    return false;
  }
  *out = (uint32_t)value;
  return true;
}

int main(int argc, char** argv) {
  if (argc > 1 &&
      (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    print_usage(stdout);
    return 0;
  }
  if (argc > 5) {
    print_usage(stderr);
    return 1;
  }
  options_t options = {"local-task", 64, 16384, WEFT_VM_PIPELINES_PROGRAM};
  if (argc > 1) options.device = argv[1];
  if (argc > 2 &&
      !parse_count("PIPELINES", argv[2], 1ull << 20, &options.pipelines)) {
    return 1;
  }
  if (argc > 3 && !parse_count("COUNT", argv[3], 1ull << 24, &options.count)) {
    return 1;
  }
  if (argc > 4) options.program = argv[4];
  // The input holds 2 x PIPELINES x COUNT floats: keep it under 8 GiB.
  if ((uint64_t)options.pipelines * options.count > (1ull << 30)) {
    fprintf(stderr, "PIPELINES x COUNT must be at most %llu\n", 1ull << 30);
    return 1;
  }

  printf("weft-example-vm-pipelines: device \"%s\", %u pipelines of %u "
         "floats\n",
         options.device, options.pipelines, options.count);
  printf("  program  %s\n", options.program);
  paths_t paths;
  memset(&paths, 0, sizeof(paths));
  const weft_time_t start = weft_time_now();
  int result = write_input_file(&options, &paths);
  if (result == 0) {
    printf("  input    %s (%" PRIu64 " bytes: x then y per pipeline)\n",
           paths.input,
           (uint64_t)options.pipelines * options.count * 2 * sizeof(float));
    weft_status_t status = run_example(&options, &paths);
    if (!weft_status_is_ok(status)) {
      fflush(stdout);  // keep the report in order when both go to one place
      fprintf(stderr, "weft-example-vm-pipelines: ");
      weft_status_fprint(stderr, status);
      weft_status_free(status);
      result = 1;
    }
  }
  if (result == 0) result = verify_output_file(&options, &paths);

  if (paths.output[0]) unlink(paths.output);
  if (paths.input[0]) unlink(paths.input);
  if (paths.dir[0]) rmdir(paths.dir);

  printf("  total    %" PRId64 " us\n%s\n",
         (int64_t)(weft_time_now() - start) / 1000,
         result == 0 ? "ok" : "FAILED");
  return result;
}
