// cuda driver tests on the CUDA test double (tests/cuda_double): what the
// CTS cannot say driver-neutrally.
//  - the device's memory running out is RESOURCE_EXHAUSTED naming the
//    CUDA call and CUDA's own error (a child process with a small double);
//  - a CUDA error met while queuing an op fails its signals with the call
//    and the error named, and the device goes on working;
//  - cuda.stream_memory_ops says what the GPU reports for 64-bit stream
//    memory operations;
//  - completion=polling runs a chain of ops as the blocking mode does;
//  - a reusable command buffer is a graph: instantiated once, rebinding
//    its binding table updates the instance in place (no second
//    instantiation), and an update CUDA refuses rebuilds the graph;
//  - file reads and writes larger than all the staging pieces together go
//    through them in turns and arrive whole;
//  - with tracing on, each op's GPU time is a zone on the GPU's own track,
//    inside the op's submit..signal interval;
//  - memory-word semaphores (semaphores=memory) and queues=N: an op on one
//    stream waits on the GPU for another stream's signal (a word wait in
//    that form, an event wait in the other) while the signalling op is
//    still running; a kernel's failure releases the GPU waiters and
//    reaches every waiter with its message; values from 2^63 on (past
//    what a stream's cyclic compare orders) wait on the host; a release
//    lets ops waiting on the GPU finish; the options' refusals.
// The ctest entry sets WEFT_CUDA_DRIVER_LIBRARY to the double.
// setjmp.h, stdarg.h and stddef.h must come before cmocka.h.
// clang-format off
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
// clang-format on

#include <cuda.h>
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(WEFT_TEST_HAVE_CJSON)
#include <cjson/cJSON.h>
#endif

#include "cts.h"
#include "weft/weft.h"

#define TEN_SECONDS (10ll * 1000 * 1000 * 1000)

//===----------------------------------------------------------------------===//
// The double's controls
//===----------------------------------------------------------------------===//

typedef void (*fail_next_fn_t)(const char* entry_point, CUresult result);

// A symbol of the double the driver loaded (same path: same handle).
static void* double_symbol(const char* name) {
  const char* path = getenv("WEFT_CUDA_DRIVER_LIBRARY");
  assert_non_null(path);
  void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  assert_non_null(library);
  void* symbol = dlsym(library, name);
  assert_non_null(symbol);
  // The driver holds the library open: the symbol stays valid.
  dlclose(library);
  return symbol;
}

static void fail_next(const char* entry_point, CUresult result) {
  ((fail_next_fn_t)double_symbol("weft_cuda_double_fail_next"))(entry_point,
                                                               result);
}

static uint64_t call_count(const char* entry_point) {
  return ((uint64_t(*)(const char*))double_symbol(
      "weft_cuda_double_call_count"))(entry_point);
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static weft_device_t* create_device(const char* device_string) {
  weft_device_t* device = NULL;
  WEFT_ASSERT_OK(
      weft_device_create(device_string, weft_allocator_system(), &device));
  return device;
}

static weft_cts_t cts_for(weft_device_t* device, const char* device_string) {
  weft_cts_t cts = {
      .device_string = device_string,
      .allocator = weft_allocator_system(),
      .device = device,
      .queue_count = 1,
  };
  return cts;
}

static weft_buffer_t* allocate(weft_device_t* device,
                               weft_device_size_t length) {
  weft_buffer_params_t params = {0};
  weft_buffer_t* buffer = NULL;
  WEFT_ASSERT_OK(weft_device_allocate_buffer(device, params, length, &buffer));
  return buffer;
}

// Fills |length| bytes of |buffer| with |byte| through the queue, signalling
// a fresh semaphore, and returns the wait's result.
static weft_status_t fill_and_wait(weft_device_t* device,
                                   weft_buffer_t* buffer,
                                   weft_device_size_t length, uint8_t byte) {
  weft_semaphore_t* semaphore = NULL;
  WEFT_ASSERT_OK(weft_device_create_semaphore(device, 0, &semaphore));
  const uint64_t one = 1;
  weft_status_t status = weft_device_queue_fill(
      device, WEFT_QUEUE_AFFINITY_ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&semaphore, &one), buffer, 0, length, &byte, 1);
  return weft_cts_wait_submitted(semaphore, status);
}

static void expect_bytes(weft_cts_t* cts, weft_buffer_t* buffer,
                         weft_device_size_t length, uint8_t byte) {
  uint8_t* data = malloc(length);
  assert_non_null(data);
  weft_cts_read_buffer(cts, buffer, 0, data, length);
  for (weft_device_size_t i = 0; i < length; ++i) {
    if (data[i] != byte) {
      fail_msg("byte %zu is 0x%02x, expected 0x%02x", (size_t)i, data[i],
               byte);
    }
  }
  free(data);
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

static int allocate_past_memory(void) {
  weft_device_t* device = NULL;
  weft_status_t status =
      weft_device_create("cuda", weft_allocator_system(), &device);
  if (!weft_status_is_ok(status)) {
    weft_status_fprint(stderr, status);
    weft_status_free(status);
    return 1;
  }
  weft_buffer_params_t params = {.type = WEFT_MEMORY_TYPE_DEVICE_LOCAL};
  weft_buffer_t* buffer = NULL;
  status = weft_device_allocate_buffer(device, params, 8u << 20, &buffer);
  char text[512];
  weft_status_format(status, text, sizeof(text));
  const int result =
      weft_status_code(status) == WEFT_STATUS_RESOURCE_EXHAUSTED &&
              strstr(text, "cuMemAlloc") &&
              strstr(text, "CUDA_ERROR_OUT_OF_MEMORY") && buffer == NULL
          ? 0
          : 1;
  if (result) fprintf(stderr, "allocating past memory: %s\n", text);
  weft_status_free(status);
  // Smaller allocations still work.
  if (result == 0) {
    status = weft_device_allocate_buffer(device, params, 4096, &buffer);
    if (!weft_status_is_ok(status)) {
      weft_status_fprint(stderr, status);
      weft_status_free(status);
      weft_device_release(device);
      return 1;
    }
    weft_buffer_release(buffer);
  }
  weft_device_release(device);
  return result;
}

// The double reads its memory size at the first cuInit of the process: a
// child of its own, before this process initialises the double.
static void out_of_memory_names_call(void** state) {
  (void)state;
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    setenv("WEFT_CUDA_DOUBLE_MEMORY", "1048576", 1);
    _exit(allocate_past_memory());
  }
  int wstatus = 0;
  assert_int_equal(waitpid(pid, &wstatus, 0), pid);
  assert_true(WIFEXITED(wstatus));
  assert_int_equal(WEXITSTATUS(wstatus), 0);
}

static void queue_error_names_call(void** state) {
  (void)state;
  weft_device_t* device = create_device("cuda");
  weft_cts_t cts = cts_for(device, "cuda");
  weft_buffer_t* buffer = allocate(device, 4096);
  // A one-byte pattern is a cuMemsetD8Async on the dispatch stream.
  fail_next("cuMemsetD8Async", CUDA_ERROR_LAUNCH_FAILED);
  weft_cts_assert_status_contains_both(fill_and_wait(device, buffer, 4096, 7),
                                       WEFT_STATUS_INTERNAL,
                                       "cuMemsetD8Async",
                                       "CUDA_ERROR_LAUNCH_FAILED");
  // The error was the op's alone: the next fill works.
  WEFT_ASSERT_OK(fill_and_wait(device, buffer, 4096, 9));
  expect_bytes(&cts, buffer, 4096, 9);
  weft_buffer_release(buffer);
  weft_device_release(device);
}

//===----------------------------------------------------------------------===//
// Completion by polling
//===----------------------------------------------------------------------===//

// 64 fills, each waiting for the one before, then a copy; the semaphore
// reaches every value and the last fill's byte is what arrives.
static void polling_completion_runs_chain(void** state);

//===----------------------------------------------------------------------===//
// Capabilities
//===----------------------------------------------------------------------===//

typedef void (*set_stream_mem_ops_fn_t)(bool supported);

// cuda.stream_memory_ops is what the GPU reports for 64-bit stream memory
// operations: 1 on the double, 0 once it is told to report none.
static void stream_memory_ops_property(void** state) {
  (void)state;
  set_stream_mem_ops_fn_t set_stream_mem_ops = (set_stream_mem_ops_fn_t)
      double_symbol("weft_cuda_double_set_stream_mem_ops");
  for (int supported = 1; supported >= 0; --supported) {
    set_stream_mem_ops(supported != 0);
    weft_device_t* device = create_device("cuda");
    int64_t value = -1;
    WEFT_ASSERT_OK(
        weft_device_query_i64(device, "cuda.stream_memory_ops", &value));
    assert_int_equal(value, supported);
    weft_device_release(device);
  }
  set_stream_mem_ops(true);
}

static void polling_completion_runs_chain(void** state) {
  (void)state;
  const char* device_string = "cuda?completion=polling";
  weft_device_t* device = create_device(device_string);
  weft_cts_t cts = cts_for(device, device_string);
  int64_t mode = -1;
  WEFT_ASSERT_OK(
      weft_device_query_i64(device, "cuda.completion_polling", &mode));
  assert_int_equal(mode, 1);
  weft_buffer_t* source = allocate(device, 65536);
  weft_buffer_t* target = allocate(device, 65536);
  weft_semaphore_t* semaphore = NULL;
  WEFT_ASSERT_OK(weft_device_create_semaphore(device, 0, &semaphore));
  for (uint64_t i = 0; i < 64; ++i) {
    const uint8_t byte = (uint8_t)(i + 1);
    const uint64_t next = i + 1;
    WEFT_ASSERT_OK(weft_device_queue_fill(
        device, WEFT_QUEUE_AFFINITY_ANY,
        i ? weft_cts_list1(&semaphore, &i) : weft_semaphore_list_empty(),
        weft_cts_list1(&semaphore, &next), source, 0, 65536, &byte, 1));
  }
  const uint64_t after_fills = 64;
  const uint64_t done = 65;
  WEFT_ASSERT_OK(weft_device_queue_copy(
      device, WEFT_QUEUE_AFFINITY_ANY, weft_cts_list1(&semaphore, &after_fills),
      weft_cts_list1(&semaphore, &done), source, 0, target, 0, 65536));
  WEFT_ASSERT_OK(weft_cts_wait(semaphore, done));
  expect_bytes(&cts, target, 65536, 64);
  weft_semaphore_release(semaphore);
  weft_buffer_release(target);
  weft_buffer_release(source);
  weft_device_release(device);
}

//===----------------------------------------------------------------------===//
// Command buffers as graphs
//===----------------------------------------------------------------------===//

// A reusable command buffer filling binding slot 0 with 0x5A, then copying
// slot 0 to slot 1.
static weft_command_buffer_t* record_fill_copy(weft_device_t* device,
                                               weft_device_size_t length) {
  weft_command_buffer_t* command_buffer = NULL;
  WEFT_ASSERT_OK(weft_command_buffer_create(
      device, WEFT_COMMAND_BUFFER_MODE_REUSABLE, WEFT_COMMAND_CATEGORY_ANY, 2,
      &command_buffer));
  WEFT_ASSERT_OK(weft_command_buffer_begin(command_buffer));
  const uint8_t byte = 0x5A;
  WEFT_ASSERT_OK(weft_command_buffer_fill(
      command_buffer, weft_make_indirect_buffer_ref(0, 0, length), &byte, 1));
  WEFT_ASSERT_OK(weft_command_buffer_barrier(command_buffer));
  WEFT_ASSERT_OK(weft_command_buffer_copy(
      command_buffer, weft_make_indirect_buffer_ref(0, 0, length),
      weft_make_indirect_buffer_ref(1, 0, length)));
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  return command_buffer;
}

static weft_status_t execute_and_wait(weft_device_t* device,
                                      weft_command_buffer_t* command_buffer,
                                      weft_buffer_t* a, weft_buffer_t* b,
                                      weft_device_size_t length) {
  const weft_buffer_binding_t bindings[2] = {{a, 0, length}, {b, 0, length}};
  const weft_binding_table_t table = {2, bindings};
  weft_semaphore_t* semaphore = NULL;
  WEFT_ASSERT_OK(weft_device_create_semaphore(device, 0, &semaphore));
  const uint64_t one = 1;
  weft_status_t status = weft_device_queue_execute(
      device, WEFT_QUEUE_AFFINITY_ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&semaphore, &one), command_buffer, table);
  return weft_cts_wait_submitted(semaphore, status);
}

// Calls |entry_point| of the double with arguments it refuses, returning
// what it said: an armed failure still pending comes back instead of the
// double's own error.
static CUresult call_with_bad_arguments(const char* entry_point) {
  if (strcmp(entry_point, "cuGraphInstantiateWithFlags") == 0) {
    CUresult (*fn)(CUgraphExec*, CUgraph, unsigned long long) =
        (CUresult(*)(CUgraphExec*, CUgraph, unsigned long long))double_symbol(
            entry_point);
    return fn(NULL, NULL, 0);
  }
  CUresult (*fn)(CUgraphExec, CUgraphNode, const CUDA_MEMSET_NODE_PARAMS*,
                 CUcontext) =
      (CUresult(*)(CUgraphExec, CUgraphNode, const CUDA_MEMSET_NODE_PARAMS*,
                   CUcontext))double_symbol(entry_point);
  return fn(NULL, NULL, NULL, NULL);
}

static void graph_rebinding_updates_in_place(void** state) {
  (void)state;
  weft_device_t* device = create_device("cuda");
  weft_cts_t cts = cts_for(device, "cuda");
  const weft_device_size_t length = 8192;
  weft_buffer_t* buffers[4];
  for (int i = 0; i < 4; ++i) buffers[i] = allocate(device, length);
  weft_command_buffer_t* command_buffer = record_fill_copy(device, length);
  WEFT_ASSERT_OK(
      execute_and_wait(device, command_buffer, buffers[0], buffers[1], length));
  expect_bytes(&cts, buffers[1], length, 0x5A);

  // A second instantiation would meet this failure: rebinding must not
  // instantiate.
  fail_next("cuGraphInstantiateWithFlags", CUDA_ERROR_NOT_PERMITTED);
  WEFT_ASSERT_OK(
      execute_and_wait(device, command_buffer, buffers[2], buffers[3], length));
  expect_bytes(&cts, buffers[3], length, 0x5A);
  assert_int_equal(call_with_bad_arguments("cuGraphInstantiateWithFlags"),
                   CUDA_ERROR_NOT_PERMITTED);

  // An update CUDA refuses: the graph is built and instantiated again.
  WEFT_ASSERT_OK(fill_and_wait(device, buffers[1], length, 0));
  fail_next("cuGraphExecMemsetNodeSetParams", CUDA_ERROR_NOT_SUPPORTED);
  WEFT_ASSERT_OK(
      execute_and_wait(device, command_buffer, buffers[0], buffers[1], length));
  expect_bytes(&cts, buffers[1], length, 0x5A);
  // The armed refusal was used up by the driver (this call, from a thread
  // with no context, gets the double's own answer instead).
  assert_int_not_equal(
      call_with_bad_arguments("cuGraphExecMemsetNodeSetParams"),
      CUDA_ERROR_NOT_SUPPORTED);

  weft_command_buffer_release(command_buffer);
  for (int i = 0; i < 4; ++i) weft_buffer_release(buffers[i]);
  weft_device_release(device);
}

//===----------------------------------------------------------------------===//
// Files through staging pieces
//===----------------------------------------------------------------------===//

static void file_through_small_staging_pieces(void** state) {
  (void)state;
  // Two pieces of 4 KiB: a 100 KiB transfer takes 25 turns.
  const char* device_string = "cuda?staging_piece=4096&staging_pieces=2";
  weft_device_t* device = create_device(device_string);
  int64_t piece = 0;
  WEFT_ASSERT_OK(weft_device_query_i64(device, "cuda.staging_piece", &piece));
  assert_int_equal(piece, 4096);
  const size_t length = 100 * 1024 + 123;
  uint8_t* contents = malloc(length);
  uint8_t* back = calloc(1, length);
  assert_non_null(contents);
  assert_non_null(back);
  for (size_t i = 0; i < length; ++i) {
    contents[i] = (uint8_t)(i * 131 + (i >> 9));
  }
  weft_file_t* source = NULL;
  WEFT_ASSERT_OK(weft_file_wrap_memory(WEFT_FILE_ACCESS_READ, contents, length,
                                       NULL, NULL, weft_allocator_system(),
                                       &source));
  weft_file_t* target = NULL;
  WEFT_ASSERT_OK(weft_file_wrap_memory(WEFT_FILE_ACCESS_WRITE, back, length,
                                       NULL, NULL, weft_allocator_system(),
                                       &target));
  weft_buffer_t* buffer = allocate(device, length);
  weft_semaphore_t* semaphore = NULL;
  WEFT_ASSERT_OK(weft_device_create_semaphore(device, 0, &semaphore));
  const uint64_t one = 1;
  const uint64_t two = 2;
  WEFT_ASSERT_OK(weft_device_queue_read(
      device, WEFT_QUEUE_AFFINITY_ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&semaphore, &one), source, 0, buffer, 0, length));
  WEFT_ASSERT_OK(weft_device_queue_write(
      device, WEFT_QUEUE_AFFINITY_ANY, weft_cts_list1(&semaphore, &one),
      weft_cts_list1(&semaphore, &two), buffer, 0, target, 0, length));
  WEFT_ASSERT_OK(weft_cts_wait(semaphore, two));
  assert_memory_equal(contents, back, length);
  weft_semaphore_release(semaphore);
  weft_buffer_release(buffer);
  weft_file_release(target);
  weft_file_release(source);
  weft_device_release(device);
  free(back);
  free(contents);
}

//===----------------------------------------------------------------------===//
// GPU time in the trace
//===----------------------------------------------------------------------===//

#if defined(WEFT_TEST_HAVE_CJSON)

static cJSON* read_json(const char* path) {
  FILE* file = fopen(path, "rb");
  assert_non_null(file);
  fseek(file, 0, SEEK_END);
  long size = ftell(file);
  fseek(file, 0, SEEK_SET);
  char* text = malloc((size_t)size + 1);
  assert_non_null(text);
  assert_int_equal(fread(text, 1, (size_t)size, file), (size_t)size);
  text[size] = '\0';
  fclose(file);
  cJSON* root = cJSON_Parse(text);
  free(text);
  assert_non_null(root);
  return root;
}

static double number(const cJSON* object, const char* key) {
  const cJSON* item = cJSON_GetObjectItemCaseSensitive(object, key);
  assert_true(cJSON_IsNumber(item));
  return item->valuedouble;
}

static const char* string(const cJSON* object, const char* key) {
  const cJSON* item = cJSON_GetObjectItemCaseSensitive(object, key);
  return cJSON_IsString(item) ? item->valuestring : "";
}

// The "ts" of the queue instant |name| of op |id| (-1 when absent).
static double instant_time(const cJSON* events, const char* name, double id) {
  const cJSON* event = NULL;
  cJSON_ArrayForEach(event, events) {
    const cJSON* args = cJSON_GetObjectItemCaseSensitive(event, "args");
    if (strcmp(string(event, "ph"), "i") == 0 &&
        strcmp(string(event, "name"), name) == 0 && args &&
        cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(args, "id")) &&
        number(args, "id") == id) {
      return number(event, "ts");
    }
  }
  return -1.0;
}

static void gpu_time_on_own_track(void** state) {
  (void)state;
  char path[] = "/tmp/weft-cuda-trace-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  weft_device_t* device = create_device("cuda");
  WEFT_ASSERT_OK(weft_trace_start(path));
  weft_buffer_t* buffer = allocate(device, 1u << 20);
  for (int i = 0; i < 3; ++i) {
    WEFT_ASSERT_OK(fill_and_wait(device, buffer, 1u << 20, (uint8_t)i));
  }
  WEFT_ASSERT_OK(weft_trace_stop());
  weft_buffer_release(buffer);
  weft_device_release(device);

  cJSON* root = read_json(path);
  unlink(path);
  const cJSON* events = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
  // The GPU's track, by its name.
  double track = -1.0;
  const cJSON* event = NULL;
  cJSON_ArrayForEach(event, events) {
    const cJSON* args = cJSON_GetObjectItemCaseSensitive(event, "args");
    if (strcmp(string(event, "ph"), "M") == 0 &&
        strcmp(string(event, "name"), "thread_name") == 0 &&
        strcmp(string(args, "name"), "cuda: GPU 0 stream") == 0) {
      track = number(event, "tid");
    }
  }
  assert_true(track >= 0.0);
  int zones = 0;
  double previous_end = -1.0;
  cJSON_ArrayForEach(event, events) {
    if (strcmp(string(event, "ph"), "X") != 0) continue;
    assert_true(number(event, "tid") == track);
    assert_string_equal(string(event, "cat"), "queue");
    assert_string_equal(string(event, "name"), "queue_fill");
    const double ts = number(event, "ts");
    const double dur = number(event, "dur");
    assert_true(dur >= 0.0);
    // The stream runs the fills one after the other. A zone may start at
    // the very nanosecond the one before ended (the driver clamps it there
    // when its epoch's error would put it earlier, as under load), and
    // ts + dur, both printed to the nanosecond, is summed in binary
    // floating point here: compare within half a nanosecond, or the sum's
    // rounding fails the case (seen once in a loaded ctest -j2 run).
    assert_true(ts + 0.0005 >= previous_end);
    previous_end = ts + dur;
    // Inside the op's life: after its submit, done before its signal
    // (1 us for the rounding of the clocks' mapping).
    const double id =
        number(cJSON_GetObjectItemCaseSensitive(event, "args"), "id");
    const double submit = instant_time(events, "submit", id);
    const double signal = instant_time(events, "signal", id);
    assert_true(submit >= 0.0);
    assert_true(signal >= 0.0);
    if (ts + 1.0 < submit || ts + dur > signal + 1.0) {
      fail_msg("GPU zone [%.3f, %.3f] us is outside submit %.3f .. signal "
               "%.3f",
               ts, ts + dur, submit, signal);
    }
    ++zones;
  }
  assert_int_equal(zones, 3);
  cJSON_Delete(root);
}

#endif  // WEFT_TEST_HAVE_CJSON

//===----------------------------------------------------------------------===//
// Memory-word semaphores and several queues
//===----------------------------------------------------------------------===//

// "gate": a CPU twin (weft_cuda_double_register_twins) that holds its
// stream until the test opens the gate, then returns its constant (0, or
// a failure code): an op issued and not complete for as long as a case
// needs. Gives up after 30 s (code 99) rather than hang a broken test.
static atomic_int gate_open;

static int gate_kernel(const weft_dispatch_state_t* dispatch,
                       const weft_workgroup_state_t* workgroup) {
  (void)workgroup;
  for (int i = 0; i < 300000 && !atomic_load(&gate_open); ++i) {
    struct timespec delay = {0, 100000};
    nanosleep(&delay, NULL);
  }
  return atomic_load(&gate_open) ? (int)dispatch->constants[0] : 99;
}

static const weft_kernel_def_t kGateDefs[] = {
    {"gate", gate_kernel, 0, 1, {1, 1, 1}, 0},
};
static const weft_kernel_library_t kGateLibrary = {WEFT_KERNEL_ABI_VERSION,
                                                   "gate", 1, kGateDefs};
// The module the twin runs for: one entry taking weft's CUDA parameters
// (its constant, then the status words).
static const char kGatePtx[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry gate(\n\t.param .u32 c0,\n\t.param .u64 status\n)\n"
    "{\n\tret;\n}\n";

// A held stream takes ops behind it only up to the double's queue depth;
// past it the submitting thread (the test's) blocks, as behind a GPU's
// full queue, and could never open the gate: cases that hold a stream skip
// at a small depth (WEFT_CUDA_DOUBLE_QUEUE_DEPTH).
static void skip_unless_streams_can_be_held(void) {
  const char* depth = getenv("WEFT_CUDA_DOUBLE_QUEUE_DEPTH");
  if (depth && strtoul(depth, NULL, 10) != 0 &&
      strtoul(depth, NULL, 10) < 16) {
    print_message("skipped: the double's queue depth %s is below what the "
                  "ops behind a held stream need\n",
                  depth);
    skip();
  }
}

static weft_executable_t* create_gate(weft_device_t* device) {
  ((void (*)(const weft_kernel_library_t*))double_symbol(
      "weft_cuda_double_register_twins"))(&kGateLibrary);
  const weft_kernel_def_t table[] = {{"gate", NULL, 0, 1, {1, 1, 1}, 0}};
  weft_executable_t* executable = NULL;
  WEFT_ASSERT_OK(weft_device_create_executable(
      device,
      weft_executable_source_cuda(WEFT_EXECUTABLE_FORMAT_CUDA_PTX, "gate",
                                  kGatePtx, sizeof(kGatePtx), 1, table),
      &executable));
  return executable;
}

// Dispatches the gate on queue |queue| returning |code|, signalling
// |semaphore| to |value|.
static void dispatch_gate(weft_device_t* device, weft_executable_t* gate,
                          uint32_t queue, uint32_t code,
                          weft_semaphore_t* semaphore, uint64_t value) {
  const uint32_t one[3] = {1, 1, 1};
  WEFT_ASSERT_OK(weft_device_queue_dispatch(
      device, (weft_queue_affinity_t)1 << queue, weft_semaphore_list_empty(),
      weft_cts_list1(&semaphore, &value), gate, 0, one, 1, &code, 0, NULL));
}

// Fills |buffer| with |byte| on queue |queue| after |wait| reaches
// |wait_value|, then signals |signal| to |signal_value|.
static void fill_after(weft_device_t* device, uint32_t queue,
                       weft_semaphore_t* wait, uint64_t wait_value,
                       weft_semaphore_t* signal, uint64_t signal_value,
                       weft_buffer_t* buffer, uint8_t byte) {
  WEFT_ASSERT_OK(weft_device_queue_fill(
      device, (weft_queue_affinity_t)1 << queue,
      weft_cts_list1(&wait, &wait_value),
      weft_cts_list1(&signal, &signal_value), buffer, 0, 4096, &byte, 1));
}

static uint64_t current_value(weft_semaphore_t* semaphore) {
  uint64_t value = 0;
  WEFT_ASSERT_OK(weft_semaphore_query(semaphore, &value));
  return value;
}

// An op on queue 1 waits for an op of queue 0 that is still running: it
// is issued at once, waiting on the GPU (a word wait with memory words, an
// event wait with events), and runs once the other's signal lands.
static void gpu_waits_across_queues(const char* device_string, bool memory) {
  skip_unless_streams_can_be_held();
  weft_device_t* device = create_device(device_string);
  weft_cts_t cts = cts_for(device, device_string);
  int64_t value = -1;
  WEFT_ASSERT_OK(weft_device_query_i64(device, "queue.count", &value));
  assert_int_equal(value, 2);
  WEFT_ASSERT_OK(
      weft_device_query_i64(device, "cuda.memory_semaphores", &value));
  assert_int_equal(value, memory ? 1 : 0);
  weft_executable_t* gate = create_gate(device);
  weft_buffer_t* buffer = allocate(device, 4096);
  weft_semaphore_t* semaphore = NULL;
  WEFT_ASSERT_OK(weft_device_create_semaphore(device, 0, &semaphore));
  atomic_store(&gate_open, 0);
  const uint64_t word_waits = call_count("cuStreamWaitValue64");
  const uint64_t word_writes = call_count("cuStreamWriteValue64");
  const uint64_t event_waits = call_count("cuStreamWaitEvent");
  dispatch_gate(device, gate, 0, 0, semaphore, 1);
  fill_after(device, 1, semaphore, 1, semaphore, 2, buffer, 0x42);
  // Both are on the GPU: the fill waits there, the gate still runs.
  assert_int_equal(current_value(semaphore), 0);
  assert_int_equal(call_count("cuStreamWaitValue64") - word_waits,
                   memory ? 1 : 0);
  assert_int_equal(call_count("cuStreamWriteValue64") - word_writes,
                   memory ? 2 : 0);
  assert_int_equal(call_count("cuStreamWaitEvent") - event_waits,
                   memory ? 0 : 1);
  atomic_store(&gate_open, 1);
  WEFT_ASSERT_OK(weft_cts_wait(semaphore, 2));
  expect_bytes(&cts, buffer, 4096, 0x42);
  weft_semaphore_release(semaphore);
  weft_buffer_release(buffer);
  weft_executable_release(gate);
  weft_device_release(device);
}

static void gpu_waits_across_queues_on_words(void** state) {
  (void)state;
  gpu_waits_across_queues("cuda?semaphores=memory&queues=2", true);
}

static void gpu_waits_across_queues_on_events(void** state) {
  (void)state;
  gpu_waits_across_queues("cuda?semaphores=events&queues=2", false);
}

// A kernel fails while a chain waits for it on the GPU, on both queues:
// the GPU waiters are released (nothing hangs) and every signal after it,
// on this device and on a CPU device, carries the kernel's message.
static void word_failure_releases_gpu_waiters(void** state) {
  (void)state;
  skip_unless_streams_can_be_held();
  const char* device_string = "cuda?semaphores=memory&queues=2";
  weft_device_t* device = create_device(device_string);
  weft_executable_t* gate = create_gate(device);
  // One buffer per queue: the failure releases both queues' GPU waits at
  // once, and their fills then run side by side.
  weft_buffer_t* buffer = allocate(device, 4096);
  weft_buffer_t* other_buffer = allocate(device, 4096);
  weft_semaphore_t* semaphore = NULL;
  WEFT_ASSERT_OK(weft_device_create_semaphore(device, 0, &semaphore));
  weft_semaphore_t* last = NULL;
  WEFT_ASSERT_OK(weft_device_create_semaphore(device, 0, &last));
  weft_device_t* cpu = create_device("local-task?workers=1");
  weft_semaphore_t* cpu_done = NULL;
  WEFT_ASSERT_OK(weft_device_create_semaphore(cpu, 0, &cpu_done));
  atomic_store(&gate_open, 0);
  const uint64_t word_waits = call_count("cuStreamWaitValue64");
  dispatch_gate(device, gate, 0, 7, semaphore, 1);
  fill_after(device, 1, semaphore, 1, semaphore, 2, buffer, 1);
  fill_after(device, 0, semaphore, 2, last, 1, other_buffer, 2);
  const uint64_t one = 1;
  const uint8_t byte = 3;
  weft_buffer_t* cpu_buffer = NULL;
  WEFT_ASSERT_OK(weft_device_allocate_buffer(cpu, (weft_buffer_params_t){0},
                                             64, &cpu_buffer));
  WEFT_ASSERT_OK(weft_device_queue_fill(
      cpu, WEFT_QUEUE_AFFINITY_ANY, weft_cts_list1(&last, &one),
      weft_cts_list1(&cpu_done, &one), cpu_buffer, 0, 64, &byte, 1));
  assert_int_equal(call_count("cuStreamWaitValue64") - word_waits, 2);
  atomic_store(&gate_open, 1);
  const char* message = "kernel 'gate'";
  weft_cts_assert_status_contains(weft_cts_wait(semaphore, 1),
                                  WEFT_STATUS_INTERNAL, message);
  weft_cts_assert_status_contains(weft_cts_wait(semaphore, 2),
                                  WEFT_STATUS_INTERNAL, "with code 7");
  weft_cts_assert_status_contains(weft_cts_wait(last, 1),
                                  WEFT_STATUS_INTERNAL, message);
  weft_cts_assert_status_contains(weft_cts_wait(cpu_done, 1),
                                  WEFT_STATUS_INTERNAL, message);
  // An op submitted after the failure fails at once, with the message.
  weft_semaphore_t* after = NULL;
  WEFT_ASSERT_OK(weft_device_create_semaphore(device, 0, &after));
  fill_after(device, 1, semaphore, 1, after, 1, buffer, 4);
  weft_cts_assert_status_contains(weft_cts_wait(after, 1),
                                  WEFT_STATUS_INTERNAL, message);
  weft_semaphore_release(after);
  weft_buffer_release(cpu_buffer);
  weft_semaphore_release(cpu_done);
  weft_device_release(cpu);
  weft_semaphore_release(last);
  weft_semaphore_release(semaphore);
  weft_buffer_release(other_buffer);
  weft_buffer_release(buffer);
  weft_executable_release(gate);
  weft_device_release(device);
}

// A stream compares words cyclically (the difference as a signed 64-bit
// number), so from 2^63 on values are not ordered there: an op waiting for
// such a value of an op still running is held until the host sees it.
static void values_from_two_to_the_63_wait_on_the_host(void** state) {
  (void)state;
  skip_unless_streams_can_be_held();
  weft_device_t* device = create_device("cuda?semaphores=memory&queues=2");
  weft_executable_t* gate = create_gate(device);
  weft_buffer_t* buffer = allocate(device, 4096);
  weft_semaphore_t* semaphore = NULL;
  WEFT_ASSERT_OK(weft_device_create_semaphore(device, 0, &semaphore));
  const uint64_t high = ((uint64_t)1 << 63) + 1;
  atomic_store(&gate_open, 0);
  const uint64_t word_waits = call_count("cuStreamWaitValue64");
  dispatch_gate(device, gate, 0, 0, semaphore, high);
  fill_after(device, 1, semaphore, high, semaphore, high + 1, buffer, 9);
  assert_int_equal(call_count("cuStreamWaitValue64") - word_waits, 0);
  atomic_store(&gate_open, 1);
  WEFT_ASSERT_OK(weft_cts_wait(semaphore, high + 1));
  assert_true(current_value(semaphore) == high + 1);
  weft_semaphore_release(semaphore);
  weft_buffer_release(buffer);
  weft_executable_release(gate);
  weft_device_release(device);
}

static void* open_gate_later(void* unused) {
  (void)unused;
  struct timespec delay = {0, 20 * 1000 * 1000};
  nanosleep(&delay, NULL);
  atomic_store(&gate_open, 1);
  return NULL;
}

// Releasing the device while an op waits on the GPU for a word another
// op is still to write, and another op is held on a host semaphore nobody
// signals: the GPU work finishes (the release waits for it), the held op
// is cancelled, and the semaphores outlive the device.
static void release_with_gpu_word_waits(void** state) {
  (void)state;
  skip_unless_streams_can_be_held();
  weft_device_t* device = create_device("cuda?semaphores=memory&queues=2");
  weft_executable_t* gate = create_gate(device);
  weft_buffer_t* buffer = allocate(device, 4096);
  weft_semaphore_t* semaphore = NULL;
  WEFT_ASSERT_OK(weft_device_create_semaphore(device, 0, &semaphore));
  weft_semaphore_t* held = NULL;
  WEFT_ASSERT_OK(weft_device_create_semaphore(device, 0, &held));
  weft_semaphore_t* never = NULL;
  WEFT_ASSERT_OK(weft_semaphore_create(weft_allocator_system(), 0, &never));
  atomic_store(&gate_open, 0);
  dispatch_gate(device, gate, 0, 0, semaphore, 1);
  fill_after(device, 1, semaphore, 1, semaphore, 2, buffer, 5);
  fill_after(device, 1, never, 1, held, 1, buffer, 6);
  pthread_t opener;
  assert_int_equal(pthread_create(&opener, NULL, open_gate_later, NULL), 0);
  weft_executable_release(gate);
  weft_buffer_release(buffer);
  weft_device_release(device);
  assert_int_equal(pthread_join(opener, NULL), 0);
  WEFT_ASSERT_OK(weft_cts_wait(semaphore, 2));
  weft_cts_assert_status_contains(weft_cts_wait(held, 1),
                                  WEFT_STATUS_CANCELLED, "queue_fill");
  weft_semaphore_release(never);
  weft_semaphore_release(held);
  weft_semaphore_release(semaphore);
}

typedef struct gate_opener_t {
  atomic_int submitted;       // the test is done submitting
  uint64_t full_waits;        // the double's full-queue waits before
  atomic_int opened_blocked;  // it was not: a submit blocked, so it opened
} gate_opener_t;

// Opens the gate should a submit block in a full stream queue (a submitter
// blocked behind the held stream would otherwise wait for the gate's own
// way out): the double counts such waits as they start, so this needs no
// timer and fires however slowly the submitter runs.
static void* open_gate_if_blocked(void* user_data) {
  gate_opener_t* opener = (gate_opener_t*)user_data;
  uint64_t (*full_waits)(void) =
      (uint64_t(*)(void))double_symbol("weft_cuda_double_full_queue_waits");
  while (!atomic_load(&opener->submitted)) {
    if (full_waits() != opener->full_waits) {
      atomic_store(&opener->opened_blocked, 1);
      atomic_store(&gate_open, 1);
      break;
    }
    struct timespec delay = {0, 1000 * 1000};
    nanosleep(&delay, NULL);
  }
  return NULL;
}

// Behind a stream held by a running op, the driver queues at most
// WEFT_CUDA_MAX_STREAM_ENTRIES stream operations and holds the rest: 700
// fills (1400 operations, past the double's 1024 a stream holds, as a GPU
// blocks the host thread past about a thousand) are all submitted without
// the submitting thread blocking, and all run once the stream goes on.
static void held_stream_never_blocks_the_submitter(void** state) {
  (void)state;
  skip_unless_streams_can_be_held();
  enum { kFills = 700 };
  weft_device_t* device = create_device("cuda?semaphores=memory");
  weft_cts_t cts = cts_for(device, "cuda?semaphores=memory");
  weft_executable_t* gate = create_gate(device);
  weft_buffer_t* buffer = allocate(device, 4096);
  weft_semaphore_t* semaphore = NULL;
  WEFT_ASSERT_OK(weft_device_create_semaphore(device, 0, &semaphore));
  atomic_store(&gate_open, 0);
  gate_opener_t watch;
  atomic_init(&watch.submitted, 0);
  atomic_init(&watch.opened_blocked, 0);
  watch.full_waits =
      ((uint64_t(*)(void))double_symbol("weft_cuda_double_full_queue_waits"))();
  pthread_t opener;
  assert_int_equal(pthread_create(&opener, NULL, open_gate_if_blocked, &watch),
                   0);
  dispatch_gate(device, gate, 0, 0, semaphore, 1);
  for (uint64_t i = 1; i <= kFills; ++i) {
    const uint64_t next = i + 1;
    const uint8_t byte = (uint8_t)i;
    WEFT_ASSERT_OK(weft_device_queue_fill(
        device, WEFT_QUEUE_AFFINITY_ANY, weft_semaphore_list_empty(),
        weft_cts_list1(&semaphore, &next), buffer, 0, 4096, &byte, 1));
  }
  atomic_store(&watch.submitted, 1);
  assert_int_equal(pthread_join(opener, NULL), 0);
  // No submit blocked in the double.
  assert_int_equal(atomic_load(&watch.opened_blocked), 0);
  assert_int_equal(current_value(semaphore), 0);
  atomic_store(&gate_open, 1);
  WEFT_ASSERT_OK(weft_cts_wait(semaphore, kFills + 1));
  expect_bytes(&cts, buffer, 4096, (uint8_t)kFills);
  weft_semaphore_release(semaphore);
  weft_buffer_release(buffer);
  weft_executable_release(gate);
  weft_device_release(device);
}

// semaphores=memory needs 64-bit stream memory operations; the options'
// values are checked.
static void semaphore_and_queue_options_refused(void** state) {
  (void)state;
  set_stream_mem_ops_fn_t set_stream_mem_ops = (set_stream_mem_ops_fn_t)
      double_symbol("weft_cuda_double_set_stream_mem_ops");
  set_stream_mem_ops(false);
  weft_device_t* device = NULL;
  weft_cts_assert_status_contains(
      weft_device_create("cuda?semaphores=memory", weft_allocator_system(),
                         &device),
      WEFT_STATUS_UNAVAILABLE, "CAN_USE_64_BIT_STREAM_MEM_OPS");
  assert_null(device);
  // Events need nothing of the kind.
  device = create_device("cuda?semaphores=events");
  weft_device_release(device);
  set_stream_mem_ops(true);
  weft_cts_assert_status_contains(
      weft_device_create("cuda?semaphores=words", weft_allocator_system(),
                         &device),
      WEFT_STATUS_INVALID_ARGUMENT,
      "option 'semaphores' must be 'events' or 'memory' (got 'words')");
  weft_cts_assert_status_contains(
      weft_device_create("cuda?queues=0", weft_allocator_system(), &device),
      WEFT_STATUS_INVALID_ARGUMENT, "queues must be 1 to 8 (got 0)");
  assert_null(device);
}

//===----------------------------------------------------------------------===//
// When the GPU's work ended
//===----------------------------------------------------------------------===//

// What a timepoint saw when it fired: the end time the signal carried and
// the clock then.
typedef struct end_time_seen_t {
  weft_timepoint_t timepoint;
  _Atomic weft_time_t reached_at;
  _Atomic weft_time_t fired_at;
} end_time_seen_t;

static void end_time_fired(void* user_data, weft_timepoint_t* timepoint,
                           weft_status_t status) {
  weft_status_free(status);
  end_time_seen_t* seen = (end_time_seen_t*)user_data;
  atomic_store(&seen->reached_at, timepoint->reached_at);
  atomic_store(&seen->fired_at, weft_time_now());
}

// The signals of an op carry when its work ended on the GPU (the end
// event's time on the host clock, weft_timepoint_t's |reached_at|), not
// when the completion thread got to them: never 0, in issue order, after
// the submit and not after the timepoint fired. weft-decode's per-token
// latencies stand on it.
static void signals_carry_gpu_end_times(void** state) {
  (void)state;
  skip_unless_streams_can_be_held();
  weft_device_t* device = create_device("cuda");
  weft_executable_t* gate = create_gate(device);
  weft_buffer_t* buffer = allocate(device, 4096);
  weft_semaphore_t* semaphore = NULL;
  WEFT_ASSERT_OK(weft_device_create_semaphore(device, 0, &semaphore));
  end_time_seen_t seen[2];
  for (int i = 0; i < 2; ++i) {
    atomic_init(&seen[i].reached_at, 0);
    atomic_init(&seen[i].fired_at, 0);
    seen[i].timepoint.fn = end_time_fired;
    seen[i].timepoint.user_data = &seen[i];
    weft_semaphore_register_timepoint(semaphore, (uint64_t)i + 1,
                                      &seen[i].timepoint);
  }
  atomic_store(&gate_open, 0);
  const weft_time_t submitted = weft_time_now();
  dispatch_gate(device, gate, 0, 0, semaphore, 1);
  fill_after(device, 0, semaphore, 1, semaphore, 2, buffer, 0x42);
  atomic_store(&gate_open, 1);
  WEFT_ASSERT_OK(weft_cts_wait(semaphore, 2));
  // A timepoint fires before the signal returns, so both have fired.
  const weft_time_t gate_end = atomic_load(&seen[0].reached_at);
  const weft_time_t fill_end = atomic_load(&seen[1].reached_at);
  assert_true(gate_end != 0);
  assert_true(fill_end != 0);
  assert_true(submitted <= gate_end);
  assert_true(gate_end <= fill_end);
  assert_true(gate_end <= atomic_load(&seen[0].fired_at));
  assert_true(fill_end <= atomic_load(&seen[1].fired_at));
  weft_semaphore_release(semaphore);
  weft_buffer_release(buffer);
  weft_executable_release(gate);
  weft_device_release(device);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      // First: it forks before this process initialises the double.
      cmocka_unit_test(out_of_memory_names_call),
      cmocka_unit_test(queue_error_names_call),
      cmocka_unit_test(stream_memory_ops_property),
      cmocka_unit_test(polling_completion_runs_chain),
      cmocka_unit_test(graph_rebinding_updates_in_place),
      cmocka_unit_test(file_through_small_staging_pieces),
      cmocka_unit_test(gpu_waits_across_queues_on_words),
      cmocka_unit_test(gpu_waits_across_queues_on_events),
      cmocka_unit_test(word_failure_releases_gpu_waiters),
      cmocka_unit_test(values_from_two_to_the_63_wait_on_the_host),
      cmocka_unit_test(release_with_gpu_word_waits),
      cmocka_unit_test(held_stream_never_blocks_the_submitter),
      cmocka_unit_test(semaphore_and_queue_options_refused),
      cmocka_unit_test(signals_carry_gpu_end_times),
#if defined(WEFT_TEST_HAVE_CJSON)
      cmocka_unit_test(gpu_time_on_own_track),
#endif
  };
  return cmocka_run_group_tests_name("cuda.driver", tests, NULL, NULL);
}
