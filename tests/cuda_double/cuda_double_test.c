// Tests of weft's CUDA test double (a TEST DOUBLE, never shipped; see
// cuda_double.h), loaded the way the cuda driver loads a driver library:
// dlopen by path, then every entry point of cuda_symbols.h resolved with
// dlsym under the name cuda.h's macros give it.
//
// main sets the double's environment before the first cuInit: 2 devices of
// 8 MiB each. `--no-device` runs only the WEFT_CUDA_DOUBLE_DEVICES=0 case,
// in a process of its own (ctest: cuda_double.no_device).
//
// Streams are gated where an order or a state in between is checked: a host
// function that blocks until the test opens the gate holds everything
// queued after it, so nothing depends on timing. The exceptions look for
// what must not happen yet (a wait passing early, an enqueue into a full
// stream returning): a short sleep first, so a slow machine can only miss
// such a bug, never fail a correct double; and the destroy of a stream
// whose wait is never met, which takes the double's 1 s grace.
// setjmp.h, stdarg.h and stddef.h must come before cmocka.h.
// clang-format off
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
// clang-format on

#include "cuda_double.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "drivers/cuda/cuda_symbols.h"
#if defined(WEFT_HAVE_CTS_CUDA_KERNELS)
#include "cts_cuda_kernels.h"
#endif

// Each device's memory, set for the double in main (8 MiB).
#define DEVICE_MEMORY 8388608

// The driver API, resolved from the double.
static weft_cuda_symbols_t cu;

// The double's test controls, resolved the same way.
static struct {
  __typeof__(weft_cuda_double_live_allocations)* live_allocations;
  __typeof__(weft_cuda_double_fail_next)* fail_next;
  __typeof__(weft_cuda_double_launch_count)* launch_count;
  __typeof__(weft_cuda_double_set_queue_depth)* set_queue_depth;
  __typeof__(weft_cuda_double_set_stream_mem_ops)* set_stream_mem_ops;
  __typeof__(weft_cuda_double_register_twins)* register_twins;
} controls;

static CUcontext context;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

// Fails the test unless |actual| is |expected|, naming both.
static void check_result(CUresult expected, CUresult actual, const char* call,
                         const char* file, int line) {
  if (expected == actual) return;
  const char* expected_name = NULL;
  const char* actual_name = NULL;
  cu.cuGetErrorName(expected, &expected_name);
  cu.cuGetErrorName(actual, &actual_name);
  fail_msg("%s:%d: %s returned %s (%d), expected %s (%d)", file, line, call,
           actual_name ? actual_name : "?", (int)actual,
           expected_name ? expected_name : "?", (int)expected);
}
#define EXPECT_CU(expected, call) \
  check_result((expected), (call), #call, __FILE__, __LINE__)
#define ASSERT_CU_OK(call) EXPECT_CU(CUDA_SUCCESS, call)

// dlopens the double and resolves every entry point and control; the
// library stays loaded for the process.
static void load_double(void) {
  void* library = dlopen(WEFT_CUDA_DOUBLE_PATH, RTLD_NOW | RTLD_LOCAL);
  if (!library) fail_msg("dlopen(%s): %s", WEFT_CUDA_DOUBLE_PATH, dlerror());
  cu.library = library;
#define RESOLVE(name)                                             \
  cu.name = (__typeof__(cu.name))dlsym(library, STRINGIFY(name)); \
  if (!cu.name) fail_msg("the double lacks %s", STRINGIFY(name));
  WEFT_CUDA_SYMBOLS(RESOLVE)
#undef RESOLVE
  controls.live_allocations = (__typeof__(controls.live_allocations))dlsym(
      library, "weft_cuda_double_live_allocations");
  controls.fail_next = (__typeof__(controls.fail_next))dlsym(
      library, "weft_cuda_double_fail_next");
  controls.launch_count = (__typeof__(controls.launch_count))dlsym(
      library, "weft_cuda_double_launch_count");
  assert_non_null(controls.live_allocations);
  assert_non_null(controls.fail_next);
  controls.set_queue_depth = (__typeof__(controls.set_queue_depth))dlsym(
      library, "weft_cuda_double_set_queue_depth");
  controls.set_stream_mem_ops = (__typeof__(controls.set_stream_mem_ops))dlsym(
      library, "weft_cuda_double_set_stream_mem_ops");
  controls.register_twins = (__typeof__(controls.register_twins))dlsym(
      library, "weft_cuda_double_register_twins");
  assert_non_null(controls.register_twins);
  assert_non_null(controls.launch_count);
  assert_non_null(controls.set_queue_depth);
  assert_non_null(controls.set_stream_mem_ops);
}

static uint32_t f32_bits(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof(bits));
  return bits;
}

static void sleep_ms(int milliseconds) {
  struct timespec delay = {milliseconds / 1000,
                           (long)(milliseconds % 1000) * 1000000};
  nanosleep(&delay, NULL);
}

static CUstream create_stream(void) {
  CUstream stream = NULL;
  ASSERT_CU_OK(cu.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  return stream;
}

static CUevent create_event(unsigned int flags) {
  CUevent event = NULL;
  ASSERT_CU_OK(cu.cuEventCreate(&event, flags));
  return event;
}

static CUdeviceptr allocate(size_t size) {
  CUdeviceptr pointer = 0;
  ASSERT_CU_OK(cu.cuMemAlloc(&pointer, size));
  return pointer;
}

// Copies |size| bytes of device memory at |src| to |dst| through |stream|
// and waits.
static void read_device(void* dst, CUdeviceptr src, size_t size,
                        CUstream stream) {
  ASSERT_CU_OK(
      cu.cuMemcpyAsync((CUdeviceptr)(uintptr_t)dst, src, size, stream));
  ASSERT_CU_OK(cu.cuStreamSynchronize(stream));
}

// A host function that holds its stream until the test opens it.
typedef struct gate_t {
  pthread_mutex_t mutex;
  pthread_cond_t opened;
  bool open;
} gate_t;

static void gate_initialize(gate_t* gate) {
  pthread_mutex_init(&gate->mutex, NULL);
  pthread_cond_init(&gate->opened, NULL);
  gate->open = false;
}

static void gate_deinitialize(gate_t* gate) {
  pthread_cond_destroy(&gate->opened);
  pthread_mutex_destroy(&gate->mutex);
}

static void CUDA_CB gate_wait(void* user_data) {
  gate_t* gate = (gate_t*)user_data;
  pthread_mutex_lock(&gate->mutex);
  while (!gate->open) pthread_cond_wait(&gate->opened, &gate->mutex);
  pthread_mutex_unlock(&gate->mutex);
}

static void gate_open(gate_t* gate) {
  pthread_mutex_lock(&gate->mutex);
  gate->open = true;
  pthread_cond_broadcast(&gate->opened);
  pthread_mutex_unlock(&gate->mutex);
}

// Queues a closed gate on |stream|.
static void gate_stream(gate_t* gate, CUstream stream) {
  gate_initialize(gate);
  ASSERT_CU_OK(cu.cuLaunchHostFunc(stream, gate_wait, gate));
}

// A log host functions append to in the order they run (only a stream's
// worker writes it; the test reads it after synchronizing).
typedef struct run_log_t {
  int entries[256];
  int count;
} run_log_t;

typedef struct log_entry_t {
  run_log_t* log;
  int value;
} log_entry_t;

static void CUDA_CB append_to_log(void* user_data) {
  log_entry_t* entry = (log_entry_t*)user_data;
  entry->log->entries[entry->log->count++] = entry->value;
}

static void CUDA_CB sleep_20ms(void* user_data) {
  (void)user_data;
  sleep_ms(20);
}

// The PTX the double accepts when nvcc is not there: the directives it
// requires and .entry lines in the forms nvcc writes them, with the
// parameter sizes of the CTS kernels.
static const char kHandWrittenPtx[] =
    "//\n// hand-written for the double's tests\n//\n"
    ".version 8.0\n"
    ".target sm_90\n"
    ".address_size 64\n"
    "// .entry commented_out(\n"
    "/* .entry also_commented_out( */\n"
    ".visible .entry scale_offset(\n"
    "\t.param .u64 p0, .param .u64 p1, .param .u64 p2, .param .u64 p3,\n"
    "\t.param .u32 p4, .param .u32 p5, .param .u32 p6, .param .u64 p7\n"
    ")\n{\n\tret;\n}\n"
    ".visible .entry abs_range(\n"
    "\t.param .u64 p0, .param .u64 p1, .param .u32 p2, .param .u32 p3,\n"
    "\t.param .u64 p4\n"
    ")\n{\n\tret;\n}\n"
    ".entry write_ids (\n"
    "\t.param .b64 p0, .param .b64 p1, .param .b64 p2\n"
    ")\n{\n\tret;\n}\n"
    ".visible .entry fail(\n\t.param .u32 p0,\n\t.param .u64 p1\n)\n"
    "{\n\tret;\n}\n"
    ".visible .entry no_host_implementation(\n)\n{\n\tret;\n}\n";

// The module the kernel tests launch from: nvcc's PTX of the CTS kernels
// where there is nvcc, the hand-written PTX otherwise.
static CUmodule load_cts_module(void) {
  CUmodule module = NULL;
#if defined(WEFT_HAVE_CTS_CUDA_KERNELS)
  ASSERT_CU_OK(cu.cuModuleLoadData(&module, weft_cts_cuda_ptx));
#else
  ASSERT_CU_OK(cu.cuModuleLoadData(&module, kHandWrittenPtx));
#endif
  return module;
}

static CUfunction get_function(CUmodule module, const char* name) {
  CUfunction function = NULL;
  ASSERT_CU_OK(cu.cuModuleGetFunction(&function, module, name));
  return function;
}

// scale_offset's parameters ("pp88444p") and the kernelParams array over
// them.
typedef struct scale_offset_args_t {
  CUdeviceptr in;
  CUdeviceptr out;
  uint64_t in_length;
  uint64_t out_length;
  uint32_t scale;
  uint32_t offset;
  uint32_t count;
  CUdeviceptr status;
  void* params[8];
} scale_offset_args_t;

static void scale_offset_args_initialize(scale_offset_args_t* args,
                                         CUdeviceptr in, CUdeviceptr out,
                                         uint64_t length, float scale,
                                         float offset, uint32_t count,
                                         CUdeviceptr status) {
  args->in = in;
  args->out = out;
  args->in_length = length;
  args->out_length = length;
  args->scale = f32_bits(scale);
  args->offset = f32_bits(offset);
  args->count = count;
  args->status = status;
  void* params[8] = {&args->in,         &args->out,   &args->in_length,
                     &args->out_length, &args->scale, &args->offset,
                     &args->count,      &args->status};
  memcpy(args->params, params, sizeof(params));
}

//===----------------------------------------------------------------------===//
// Setup
//===----------------------------------------------------------------------===//

static int group_setup(void** state) {
  (void)state;
  load_double();
  ASSERT_CU_OK(cu.cuInit(0));
  ASSERT_CU_OK(cu.cuDevicePrimaryCtxRetain(&context, 0));
  ASSERT_CU_OK(cu.cuCtxPushCurrent(context));
  return 0;
}

static int group_teardown(void** state) {
  (void)state;
  CUcontext popped = NULL;
  ASSERT_CU_OK(cu.cuCtxPopCurrent(&popped));
  assert_ptr_equal(popped, context);
  ASSERT_CU_OK(cu.cuDevicePrimaryCtxRelease(0));
  return 0;
}

//===----------------------------------------------------------------------===//
// Loading, devices, errors
//===----------------------------------------------------------------------===//

static void test_exports(void** state) {
  (void)state;
  // Versioned entry points under the names cuda.h's macros give them.
  assert_non_null(dlsym(cu.library, "cuMemAlloc_v2"));
  assert_non_null(dlsym(cu.library, "cuCtxPushCurrent_v2"));
  assert_non_null(dlsym(cu.library, "cuGraphInstantiateWithFlags"));
  assert_non_null(dlsym(cu.library, "cuGraphAddKernelNode_v2"));
  assert_non_null(dlsym(cu.library, "cuStreamWaitValue64_v2"));
  assert_non_null(dlsym(cu.library, "cuStreamWriteValue64_v2"));
  // Only the API and the controls are exported.
  assert_null(dlsym(cu.library, "weft_cuda_double__enter"));
  assert_null(dlsym(cu.library, "weft_cuda_double__find_kernel"));
}

static void test_devices(void** state) {
  (void)state;
  int count = 0;
  ASSERT_CU_OK(cu.cuDeviceGetCount(&count));
  assert_int_equal(count, 2);
  CUdevice device = -1;
  ASSERT_CU_OK(cu.cuDeviceGet(&device, 1));
  assert_int_equal(device, 1);
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cu.cuDeviceGet(&device, 2));
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cu.cuDeviceGet(&device, -1));

  char name[64];
  ASSERT_CU_OK(cu.cuDeviceGetName(name, sizeof(name), 0));
  assert_string_equal(name, "weft CUDA test double (CPU)");
  ASSERT_CU_OK(cu.cuDeviceGetName(name, 5, 0));
  assert_string_equal(name, "weft");

  size_t memory = 0;
  ASSERT_CU_OK(cu.cuDeviceTotalMem(&memory, 0));
  assert_int_equal(memory, DEVICE_MEMORY);

  int value = 0;
  ASSERT_CU_OK(cu.cuDeviceGetAttribute(
      &value, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0));
  assert_int_equal(value, 9);
  ASSERT_CU_OK(cu.cuDeviceGetAttribute(
      &value, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0));
  assert_int_equal(value, 0);
  ASSERT_CU_OK(cu.cuDeviceGetAttribute(
      &value, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, 1));
  assert_int_equal(value, 1);
  ASSERT_CU_OK(cu.cuDeviceGetAttribute(
      &value, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 0));
  assert_int_equal(value, 1024);
  ASSERT_CU_OK(
      cu.cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0));
  assert_int_equal(value, 32);
  EXPECT_CU(
      CUDA_ERROR_INVALID_VALUE,
      cu.cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_ECC_ENABLED, 0));

  int version = 0;
  ASSERT_CU_OK(cu.cuDriverGetVersion(&version));
  assert_int_equal(version, 13000);
}

static void test_error_names(void** state) {
  (void)state;
  const char* text = NULL;
  ASSERT_CU_OK(cu.cuGetErrorName(CUDA_ERROR_OUT_OF_MEMORY, &text));
  assert_string_equal(text, "CUDA_ERROR_OUT_OF_MEMORY");
  ASSERT_CU_OK(cu.cuGetErrorString(CUDA_ERROR_OUT_OF_MEMORY, &text));
  assert_string_equal(text, "out of memory");
  ASSERT_CU_OK(cu.cuGetErrorName(CUDA_ERROR_NO_BINARY_FOR_GPU, &text));
  assert_string_equal(text, "CUDA_ERROR_NO_BINARY_FOR_GPU");
  ASSERT_CU_OK(cu.cuGetErrorString(CUDA_ERROR_INVALID_CONTEXT, &text));
  assert_string_equal(text, "invalid device context");
  // Unknown errors: INVALID_VALUE and NULL, as the real driver does.
  text = "unchanged";
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu.cuGetErrorName((CUresult)12345, &text));
  assert_null(text);
  text = "unchanged";
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu.cuGetErrorString((CUresult)12345, &text));
  assert_null(text);
}

//===----------------------------------------------------------------------===//
// Streams, host functions, events
//===----------------------------------------------------------------------===//

// Fills, copies and host functions interleaved run in the order queued,
// behind a gate that holds them all until the last is queued.
static void test_stream_in_order(void** state) {
  (void)state;
  CUstream stream = create_stream();
  CUdeviceptr word = allocate(sizeof(uint32_t));
  uint32_t seen[8] = {0};
  gate_t gate;
  gate_stream(&gate, stream);
  for (uint32_t i = 0; i < 8; ++i) {
    ASSERT_CU_OK(cu.cuMemsetD32Async(word, 100 + i, 1, stream));
    ASSERT_CU_OK(cu.cuMemcpyAsync((CUdeviceptr)(uintptr_t)&seen[i], word,
                                  sizeof(uint32_t), stream));
  }
  // Nothing has run: the gate holds the stream.
  assert_int_equal(seen[0], 0);
  gate_open(&gate);
  ASSERT_CU_OK(cu.cuStreamSynchronize(stream));
  for (uint32_t i = 0; i < 8; ++i) assert_int_equal(seen[i], 100 + i);

  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cu.cuStreamSynchronize(NULL));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE,
            cu.cuMemsetD8Async(word, 0, 1, CU_STREAM_LEGACY));
  CUstream unmade = NULL;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu.cuStreamCreate(&unmade, 0x80));
  ASSERT_CU_OK(cu.cuMemFree(word));
  ASSERT_CU_OK(cu.cuStreamDestroy(stream));
  gate_deinitialize(&gate);
}

static void test_host_functions_in_order(void** state) {
  (void)state;
  CUstream stream = create_stream();
  run_log_t log = {.count = 0};
  log_entry_t entries[200];
  // A slow first function: later ones must still wait for it.
  ASSERT_CU_OK(cu.cuLaunchHostFunc(stream, sleep_20ms, NULL));
  for (int i = 0; i < 200; ++i) {
    entries[i] = (log_entry_t){&log, i};
    ASSERT_CU_OK(cu.cuLaunchHostFunc(stream, append_to_log, &entries[i]));
  }
  ASSERT_CU_OK(cu.cuStreamSynchronize(stream));
  assert_int_equal(log.count, 200);
  for (int i = 0; i < 200; ++i) assert_int_equal(log.entries[i], i);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu.cuLaunchHostFunc(stream, NULL, NULL));
  ASSERT_CU_OK(cu.cuStreamDestroy(stream));
}

static void CUDA_CB set_flag_after_20ms(void* user_data) {
  sleep_ms(20);
  *(int*)user_data = 1;
}

static void test_stream_destroy_waits(void** state) {
  (void)state;
  CUstream stream = create_stream();
  int flag = 0;
  ASSERT_CU_OK(cu.cuLaunchHostFunc(stream, set_flag_after_20ms, &flag));
  ASSERT_CU_OK(cu.cuStreamDestroy(stream));
  assert_int_equal(flag, 1);
}

static void test_event_not_ready_then_done(void** state) {
  (void)state;
  CUstream stream = create_stream();
  CUevent event = create_event(CU_EVENT_DISABLE_TIMING);
  // Never recorded: complete.
  ASSERT_CU_OK(cu.cuEventQuery(event));
  ASSERT_CU_OK(cu.cuEventSynchronize(event));

  gate_t gate;
  gate_stream(&gate, stream);
  ASSERT_CU_OK(cu.cuEventRecord(event, stream));
  EXPECT_CU(CUDA_ERROR_NOT_READY, cu.cuEventQuery(event));
  gate_open(&gate);
  ASSERT_CU_OK(cu.cuEventSynchronize(event));
  ASSERT_CU_OK(cu.cuEventQuery(event));

  // A new record makes it pending again.
  gate_t second;
  gate_stream(&second, stream);
  ASSERT_CU_OK(cu.cuEventRecord(event, stream));
  EXPECT_CU(CUDA_ERROR_NOT_READY, cu.cuEventQuery(event));
  gate_open(&second);
  ASSERT_CU_OK(cu.cuStreamSynchronize(stream));
  ASSERT_CU_OK(cu.cuEventQuery(event));

  CUevent unmade = NULL;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu.cuEventCreate(&unmade, 0x40));
  ASSERT_CU_OK(cu.cuEventDestroy(event));
  ASSERT_CU_OK(cu.cuStreamDestroy(stream));
  gate_deinitialize(&gate);
  gate_deinitialize(&second);
}

// Stream b waits for an event stream a records; b's work sees a's.
static void test_stream_wait_event_orders_streams(void** state) {
  (void)state;
  CUstream a = create_stream();
  CUstream b = create_stream();
  CUstream c = create_stream();
  CUevent recorded = create_event(CU_EVENT_DISABLE_TIMING);
  CUevent b_done = create_event(CU_EVENT_DISABLE_TIMING);
  CUdeviceptr word = allocate(sizeof(uint32_t));
  uint32_t seen = 0;

  gate_t gate;
  gate_stream(&gate, a);
  ASSERT_CU_OK(cu.cuMemsetD32Async(word, 7, 1, a));
  ASSERT_CU_OK(cu.cuEventRecord(recorded, a));
  ASSERT_CU_OK(cu.cuStreamWaitEvent(b, recorded, 0));
  ASSERT_CU_OK(
      cu.cuMemcpyAsync((CUdeviceptr)(uintptr_t)&seen, word, sizeof(seen), b));
  ASSERT_CU_OK(cu.cuEventRecord(b_done, b));

  // Recording the event again on an idle stream completes a later
  // generation; b still waits for the one current at its wait.
  ASSERT_CU_OK(cu.cuEventRecord(recorded, c));
  ASSERT_CU_OK(cu.cuStreamSynchronize(c));
  ASSERT_CU_OK(cu.cuEventQuery(recorded));
  sleep_ms(20);
  EXPECT_CU(CUDA_ERROR_NOT_READY, cu.cuEventQuery(b_done));

  gate_open(&gate);
  ASSERT_CU_OK(cu.cuEventSynchronize(b_done));
  assert_int_equal(seen, 7);

  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu.cuStreamWaitEvent(b, recorded, 1));
  ASSERT_CU_OK(cu.cuMemFree(word));
  ASSERT_CU_OK(cu.cuEventDestroy(recorded));
  ASSERT_CU_OK(cu.cuEventDestroy(b_done));
  ASSERT_CU_OK(cu.cuStreamDestroy(a));
  ASSERT_CU_OK(cu.cuStreamDestroy(b));
  ASSERT_CU_OK(cu.cuStreamDestroy(c));
  gate_deinitialize(&gate);
}

static void test_event_elapsed_time(void** state) {
  (void)state;
  CUstream stream = create_stream();
  CUevent start = create_event(CU_EVENT_DEFAULT);
  CUevent end = create_event(CU_EVENT_BLOCKING_SYNC);
  CUevent untimed = create_event(CU_EVENT_DISABLE_TIMING);
  float milliseconds = 0;
  // Never recorded.
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE,
            cu.cuEventElapsedTime(&milliseconds, start, end));

  gate_t gate;
  gate_stream(&gate, stream);
  ASSERT_CU_OK(cu.cuEventRecord(start, stream));
  ASSERT_CU_OK(cu.cuLaunchHostFunc(stream, sleep_20ms, NULL));
  ASSERT_CU_OK(cu.cuEventRecord(end, stream));
  ASSERT_CU_OK(cu.cuEventRecord(untimed, stream));
  EXPECT_CU(CUDA_ERROR_NOT_READY,
            cu.cuEventElapsedTime(&milliseconds, start, end));
  gate_open(&gate);
  ASSERT_CU_OK(cu.cuStreamSynchronize(stream));
  ASSERT_CU_OK(cu.cuEventElapsedTime(&milliseconds, start, end));
  // At least the 20 ms slept between the records; how much more depends on
  // when the stream's thread ran, so no upper bound.
  assert_true(milliseconds >= 19.0f);
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE,
            cu.cuEventElapsedTime(&milliseconds, start, untimed));

  ASSERT_CU_OK(cu.cuEventDestroy(start));
  ASSERT_CU_OK(cu.cuEventDestroy(end));
  ASSERT_CU_OK(cu.cuEventDestroy(untimed));
  ASSERT_CU_OK(cu.cuStreamDestroy(stream));
  gate_deinitialize(&gate);
}

// Destroying an event with a record and a wait queued: both still run
// (ASan and LSan check the event is freed once, after them).
static void test_event_destroy_while_pending(void** state) {
  (void)state;
  CUstream a = create_stream();
  CUstream b = create_stream();
  CUevent event = create_event(CU_EVENT_DISABLE_TIMING);
  run_log_t log = {.count = 0};
  log_entry_t entry = {&log, 42};
  gate_t gate;
  gate_stream(&gate, a);
  ASSERT_CU_OK(cu.cuEventRecord(event, a));
  ASSERT_CU_OK(cu.cuStreamWaitEvent(b, event, 0));
  ASSERT_CU_OK(cu.cuLaunchHostFunc(b, append_to_log, &entry));
  ASSERT_CU_OK(cu.cuEventDestroy(event));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cu.cuEventQuery(event));
  gate_open(&gate);
  ASSERT_CU_OK(cu.cuStreamSynchronize(b));
  assert_int_equal(log.count, 1);
  assert_int_equal(log.entries[0], 42);
  ASSERT_CU_OK(cu.cuStreamDestroy(a));
  ASSERT_CU_OK(cu.cuStreamDestroy(b));
  gate_deinitialize(&gate);
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

static void test_memset_and_memcpy(void** state) {
  (void)state;
  CUstream stream = create_stream();
  CUdeviceptr buffer = allocate(64);
  assert_int_equal(buffer % 256, 0);
  const uint8_t pattern[16] = {1, 2,  3,  4,  5,  6,  7,  8,
                               9, 10, 11, 12, 13, 14, 15, 16};
  ASSERT_CU_OK(cu.cuMemsetD8Async(buffer, 0xab, 64, stream));
  ASSERT_CU_OK(cu.cuMemsetD16Async(buffer + 2, 0x1234, 3, stream));
  ASSERT_CU_OK(cu.cuMemsetD32Async(buffer + 16, 0xdeadbeefu, 3, stream));
  ASSERT_CU_OK(
      cu.cuMemcpyHtoDAsync(buffer + 32, pattern, sizeof(pattern), stream));
  ASSERT_CU_OK(cu.cuMemcpyAsync(buffer + 48, buffer + 32, 8, stream));
  uint8_t result[64];
  read_device(result, buffer, sizeof(result), stream);

  uint8_t expected[64];
  memset(expected, 0xab, sizeof(expected));
  for (int i = 0; i < 3; ++i) {
    uint16_t value = 0x1234;
    memcpy(&expected[2 + 2 * i], &value, sizeof(value));
  }
  for (int i = 0; i < 3; ++i) {
    uint32_t value = 0xdeadbeefu;
    memcpy(&expected[16 + 4 * i], &value, sizeof(value));
  }
  memcpy(&expected[32], pattern, sizeof(pattern));
  memcpy(&expected[48], pattern, 8);
  assert_memory_equal(result, expected, sizeof(expected));

  // Misaligned elements, ranges past the allocation, unknown pointers.
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu.cuMemsetD16Async(buffer + 1, 0, 1, stream));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu.cuMemsetD32Async(buffer + 2, 0, 1, stream));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu.cuMemsetD8Async(buffer + 60, 0, 5, stream));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu.cuMemsetD8Async((CUdeviceptr)(uintptr_t)result, 0, 1, stream));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu.cuMemcpyHtoDAsync(buffer + 56, pattern, 16, stream));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu.cuMemcpyAsync((CUdeviceptr)(uintptr_t)result, buffer + 32, 33,
                             stream));
  CUdeviceptr empty = 0;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu.cuMemAlloc(&empty, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu.cuMemFree(buffer + 8));

  // Mapped host memory is its own device address.
  void* host = NULL;
  ASSERT_CU_OK(cu.cuMemHostAlloc(&host, 32, CU_MEMHOSTALLOC_DEVICEMAP));
  CUdeviceptr mapped = 0;
  ASSERT_CU_OK(cu.cuMemHostGetDevicePointer(&mapped, host, 0));
  assert_int_equal(mapped, (CUdeviceptr)(uintptr_t)host);
  ASSERT_CU_OK(cu.cuMemsetD32Async(mapped, 0x01020304u, 8, stream));
  ASSERT_CU_OK(cu.cuStreamSynchronize(stream));
  assert_int_equal(((uint32_t*)host)[7], 0x01020304u);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu.cuMemHostGetDevicePointer(&mapped, result, 0));
  void* unmade = NULL;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu.cuMemHostAlloc(&unmade, 32, 0x80));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu.cuMemFreeHost(result));
  assert_int_equal(controls.live_allocations(), 2);
  ASSERT_CU_OK(cu.cuMemFreeHost(host));
  ASSERT_CU_OK(cu.cuMemFree(buffer));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu.cuMemFree(buffer));
  assert_int_equal(controls.live_allocations(), 0);
  ASSERT_CU_OK(cu.cuStreamDestroy(stream));
}

static void test_out_of_memory(void** state) {
  (void)state;
  CUstream stream = create_stream();
  CUmemoryPool pool = NULL;
  ASSERT_CU_OK(cu.cuDeviceGetDefaultMemPool(&pool, 0));
  CUdeviceptr big = allocate(6u << 20);
  CUdeviceptr more = 0;
  EXPECT_CU(CUDA_ERROR_OUT_OF_MEMORY, cu.cuMemAlloc(&more, 4u << 20));
  EXPECT_CU(CUDA_ERROR_OUT_OF_MEMORY,
            cu.cuMemAllocFromPoolAsync(&more, 4u << 20, pool, stream));
  // Host memory is not the device's.
  void* host = NULL;
  ASSERT_CU_OK(cu.cuMemHostAlloc(&host, 4u << 20, 0));
  ASSERT_CU_OK(cu.cuMemFree(big));
  more = allocate(4u << 20);
  ASSERT_CU_OK(cu.cuMemFree(more));
  ASSERT_CU_OK(cu.cuMemFreeHost(host));
  ASSERT_CU_OK(cu.cuStreamDestroy(stream));
}

static void test_pool_alloc_free_async(void** state) {
  (void)state;
  CUstream stream = create_stream();
  CUmemoryPool pool = NULL;
  ASSERT_CU_OK(cu.cuDeviceGetDefaultMemPool(&pool, 0));
  cuuint64_t threshold = UINT64_MAX;
  ASSERT_CU_OK(cu.cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                                        &threshold));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu.cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH,
                                     &threshold));
  CUmemoryPool other = NULL;
  ASSERT_CU_OK(cu.cuDeviceGetDefaultMemPool(&other, 1));
  assert_ptr_not_equal(pool, other);

  gate_t gate;
  gate_stream(&gate, stream);
  CUdeviceptr memory = 0;
  ASSERT_CU_OK(cu.cuMemAllocFromPoolAsync(&memory, 256, pool, stream));
  assert_int_not_equal(memory, 0);
  // Another device's pool is not this context's.
  CUdeviceptr wrong = 0;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu.cuMemAllocFromPoolAsync(&wrong, 256, other, stream));
  uint32_t result[64] = {0};
  ASSERT_CU_OK(cu.cuMemsetD32Async(memory, 0x5a5a5a5au, 64, stream));
  ASSERT_CU_OK(cu.cuMemcpyAsync((CUdeviceptr)(uintptr_t)result, memory,
                                sizeof(result), stream));
  ASSERT_CU_OK(cu.cuMemFreeAsync(memory, stream));
  // Queued, not reached: still live, but unusable and not freeable again.
  assert_int_equal(controls.live_allocations(), 1);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu.cuMemFreeAsync(memory, stream));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu.cuMemFree(memory));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu.cuMemsetD8Async(memory, 0, 1, stream));
  gate_open(&gate);
  ASSERT_CU_OK(cu.cuStreamSynchronize(stream));
  assert_int_equal(controls.live_allocations(), 0);
  for (int i = 0; i < 64; ++i) assert_int_equal(result[i], 0x5a5a5a5au);
  ASSERT_CU_OK(cu.cuStreamDestroy(stream));
  gate_deinitialize(&gate);
}

//===----------------------------------------------------------------------===//
// Modules and kernels
//===----------------------------------------------------------------------===//

static void test_module_load_and_lookup(void** state) {
  (void)state;
  CUmodule module = NULL;
  ASSERT_CU_OK(cu.cuModuleLoadData(&module, kHandWrittenPtx));
  const char* found[] = {"scale_offset", "abs_range", "write_ids", "fail"};
  for (size_t i = 0; i < sizeof(found) / sizeof(found[0]); ++i) {
    CUfunction first = get_function(module, found[i]);
    CUfunction again = get_function(module, found[i]);
    assert_ptr_equal(first, again);
  }
  CUfunction function = NULL;
  // An entry without a host implementation, entries only in comments, and
  // a name that is no entry.
  EXPECT_CU(
      CUDA_ERROR_NOT_FOUND,
      cu.cuModuleGetFunction(&function, module, "no_host_implementation"));
  EXPECT_CU(CUDA_ERROR_NOT_FOUND,
            cu.cuModuleGetFunction(&function, module, "commented_out"));
  EXPECT_CU(CUDA_ERROR_NOT_FOUND,
            cu.cuModuleGetFunction(&function, module, "also_commented_out"));
  EXPECT_CU(CUDA_ERROR_NOT_FOUND,
            cu.cuModuleGetFunction(&function, module, "missing"));
  ASSERT_CU_OK(cu.cuModuleUnload(module));

  // A module whose PTX lacks a kernel the double implements.
  static const char kOnlyFail[] =
      ".version 8.0\n.target sm_90\n"
      ".visible .entry fail(.param .u32 a, .param .u64 b)\n{\n}\n";
  ASSERT_CU_OK(cu.cuModuleLoadData(&module, kOnlyFail));
  get_function(module, "fail");
  EXPECT_CU(CUDA_ERROR_NOT_FOUND,
            cu.cuModuleGetFunction(&function, module, "scale_offset"));
  ASSERT_CU_OK(cu.cuModuleUnload(module));

  // An entry whose parameters disagree with its host implementation's.
  static const char kWrongParams[] =
      ".version 8.0\n.target sm_90\n"
      ".visible .entry fail(.param .u64 a, .param .u64 b)\n{\n}\n";
  EXPECT_CU(CUDA_ERROR_INVALID_PTX, cu.cuModuleLoadData(&module, kWrongParams));

  // Binaries the double cannot run, and what is no module at all.
  static const uint32_t kFatbin[4] = {0xBA55ED50u, 0x00100001u, 0, 0};
  static const char kElf[] =
      "\x7f"
      "ELF\x02\x01\x01";
  EXPECT_CU(CUDA_ERROR_NO_BINARY_FOR_GPU,
            cu.cuModuleLoadData(&module, kFatbin));
  EXPECT_CU(CUDA_ERROR_NO_BINARY_FOR_GPU, cu.cuModuleLoadData(&module, kElf));
  EXPECT_CU(CUDA_ERROR_INVALID_IMAGE,
            cu.cuModuleLoadData(&module, "not a module"));
  EXPECT_CU(CUDA_ERROR_INVALID_IMAGE, cu.cuModuleLoadData(&module, ""));
}

// CPU twins: a weft CPU kernel run for the PTX entry of its name.
// twin_add: out[i] = in[i] + c over the workgroup's 4 elements; 7 when out
// is too short for them, 9 when its local memory (the launch's dynamic
// shared memory) is not zeroed; it then marks that memory.
static int twin_add(const weft_dispatch_state_t* dispatch,
                    const weft_workgroup_state_t* workgroup) {
  const float* in = (const float*)dispatch->binding_ptrs[0];
  float* out = (float*)dispatch->binding_ptrs[1];
  const uint32_t first =
      workgroup->workgroup_id[0] * dispatch->workgroup_size[0];
  const uint32_t last = first + dispatch->workgroup_size[0];
  if (dispatch->binding_lengths[0] < last * sizeof(float) ||
      dispatch->binding_lengths[1] < last * sizeof(float)) {
    return 7;
  }
  if (workgroup->local_memory_size >= sizeof(uint32_t)) {
    uint32_t* mark = (uint32_t*)workgroup->local_memory;
    if (*mark != 0) return 9;
    *mark = 1;
  }
  for (uint32_t i = first; i < last; ++i) {
    out[i] = in[i] + (float)dispatch->constants[0];
  }
  return 0;
}

// "fail" is the double's own kernel: registering a twin of that name
// changes nothing.
static int twin_never_runs(const weft_dispatch_state_t* dispatch,
                           const weft_workgroup_state_t* workgroup) {
  (void)dispatch;
  (void)workgroup;
  return 99;
}

static const weft_kernel_def_t kTwinDefs[] = {
    {"twin_add", twin_add, 2, 1, {4, 1, 1}, 0},
    {"fail", twin_never_runs, 0, 1, {1, 1, 1}, 0},
};
static const weft_kernel_library_t kTwinLibrary = {
    WEFT_KERNEL_ABI_VERSION, "twins", 2, kTwinDefs};

static void test_cpu_twins(void** state) {
  (void)state;
  controls.register_twins(&kTwinLibrary);
  controls.register_twins(&kTwinLibrary);  // again: the first stays
  static const char kTwinPtx[] =
      ".version 8.0\n.target sm_90\n.address_size 64\n"
      ".visible .entry twin_add(\n"
      "\t.param .u64 b0, .param .u64 b1, .param .u64 l0, .param .u64 l1,\n"
      "\t.param .u32 c0, .param .u64 status\n)\n{\n\tret;\n}\n"
      ".visible .entry fail(\n\t.param .u32 p0,\n\t.param .u64 p1\n)\n"
      "{\n\tret;\n}\n";
  CUmodule module = NULL;
  ASSERT_CU_OK(cu.cuModuleLoadData(&module, kTwinPtx));
  CUfunction add = get_function(module, "twin_add");
  CUfunction fail = get_function(module, "fail");
  CUstream stream = NULL;
  ASSERT_CU_OK(cu.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  enum { kCount = 16 };
  CUdeviceptr in = allocate(kCount * sizeof(float));
  CUdeviceptr out = allocate(kCount * sizeof(float));
  CUdeviceptr status = allocate(4 * sizeof(uint32_t));
  float input[kCount];
  for (int i = 0; i < kCount; ++i) input[i] = (float)i * 0.5f;
  ASSERT_CU_OK(cu.cuMemcpyHtoDAsync(in, input, sizeof(input), stream));
  ASSERT_CU_OK(cu.cuMemsetD32Async(out, 0, kCount, stream));
  ASSERT_CU_OK(cu.cuMemsetD32Async(status, 0, 4, stream));
  uint64_t in_length = kCount * sizeof(float);
  uint64_t out_length = kCount * sizeof(float);
  uint32_t constant = 3;
  void* params[6] = {&in,         &out,      &in_length,
                     &out_length, &constant, &status};
  // Four workgroups of four, each with 16 bytes of local memory.
  ASSERT_CU_OK(
      cu.cuLaunchKernel(add, 4, 1, 1, 4, 1, 1, 16, stream, params, NULL));
  float output[kCount];
  uint32_t report[4] = {1, 1, 1, 1};
  read_device(output, out, sizeof(output), stream);
  read_device(report, status, sizeof(report), stream);
  assert_int_equal(report[0], 0);
  for (int i = 0; i < kCount; ++i) assert_true(output[i] == input[i] + 3.0f);

  // Room for two workgroups only: blocks 2 and 3 fail, the first reports.
  out_length = 8 * sizeof(float);
  ASSERT_CU_OK(
      cu.cuLaunchKernel(add, 4, 1, 1, 4, 1, 1, 0, stream, params, NULL));
  read_device(report, status, sizeof(report), stream);
  assert_int_equal(report[0], 7);
  assert_int_equal(report[1], 2);
  assert_int_equal(report[2], 0);
  assert_int_equal(report[3], 0);

  // The double's own "fail" runs, not the twin of that name: block 1 fails
  // with its code 1, where the twin would store 99 for block 0.
  uint32_t fail_x = 1;
  void* fail_params[2] = {&fail_x, &status};
  ASSERT_CU_OK(cu.cuMemsetD32Async(status, 0, 4, stream));
  ASSERT_CU_OK(
      cu.cuLaunchKernel(fail, 3, 1, 1, 1, 1, 1, 0, stream, fail_params, NULL));
  read_device(report, status, sizeof(report), stream);
  assert_int_equal(report[0], 1);
  assert_int_equal(report[1], 1);
  ASSERT_CU_OK(cu.cuModuleUnload(module));

  // An entry whose parameters are not weft's for the twin's counts.
  static const char kWrongTwin[] =
      ".version 8.0\n.target sm_90\n"
      ".visible .entry twin_add(.param .u64 b0, .param .u64 b1)\n{\n}\n";
  EXPECT_CU(CUDA_ERROR_INVALID_PTX, cu.cuModuleLoadData(&module, kWrongTwin));
  ASSERT_CU_OK(cu.cuStreamDestroy(stream));
  ASSERT_CU_OK(cu.cuMemFree(in));
  ASSERT_CU_OK(cu.cuMemFree(out));
  ASSERT_CU_OK(cu.cuMemFree(status));
}

#if defined(WEFT_HAVE_CTS_CUDA_KERNELS)
// nvcc's PTX of the CTS kernels names every kernel of the table; its
// fatbin is a binary the double has no code for.
static void test_cts_module(void** state) {
  (void)state;
  assert_int_equal(weft_cts_cuda_ptx_size,
                   strlen((const char*)weft_cts_cuda_ptx));
  assert_int_equal(weft_cts_gpu_kernel_count, 4);
  CUmodule module = NULL;
  ASSERT_CU_OK(cu.cuModuleLoadData(&module, weft_cts_cuda_ptx));
  for (uint32_t i = 0; i < weft_cts_gpu_kernel_count; ++i) {
    assert_null(weft_cts_gpu_kernel_table[i].fn);
    get_function(module, weft_cts_gpu_kernel_table[i].name);
  }
  CUfunction function = NULL;
  EXPECT_CU(CUDA_ERROR_NOT_FOUND,
            cu.cuModuleGetFunction(&function, module, "missing"));
  ASSERT_CU_OK(cu.cuModuleUnload(module));

  assert_true(weft_cts_cuda_fatbin_size > 16);
  uint32_t magic;
  memcpy(&magic, weft_cts_cuda_fatbin, sizeof(magic));
  assert_int_equal(magic, 0xBA55ED50u);
  EXPECT_CU(CUDA_ERROR_NO_BINARY_FOR_GPU,
            cu.cuModuleLoadData(&module, weft_cts_cuda_fatbin));
}
#endif

// scale_offset over 100 elements in two blocks of 64, with its parameter
// storage overwritten before the (gated) launch runs; then too-small
// bindings (status 2) and fail (status 1 in one block).
static void test_launch_scale_offset_and_fail(void** state) {
  (void)state;
  enum { kCount = 100 };
  CUstream stream = create_stream();
  CUmodule module = load_cts_module();
  CUfunction scale_offset = get_function(module, "scale_offset");
  CUfunction fail = get_function(module, "fail");
  CUdeviceptr in = allocate(kCount * sizeof(float));
  CUdeviceptr out = allocate(kCount * sizeof(float));
  // Four words: the code, then the failing block's index.
  CUdeviceptr status = allocate(4 * sizeof(uint32_t));
  float input[kCount];
  for (int i = 0; i < kCount; ++i) input[i] = (float)i - 10.5f;
  ASSERT_CU_OK(cu.cuMemcpyHtoDAsync(in, input, sizeof(input), stream));
  ASSERT_CU_OK(cu.cuMemsetD32Async(out, 0, kCount, stream));
  ASSERT_CU_OK(cu.cuMemsetD32Async(status, 0, 4, stream));
  uint64_t launches = controls.launch_count();

  gate_t gate;
  gate_stream(&gate, stream);
  scale_offset_args_t args;
  scale_offset_args_initialize(&args, in, out, kCount * sizeof(float), 2.0f,
                               0.25f, kCount, status);
  ASSERT_CU_OK(cu.cuLaunchKernel(scale_offset, 2, 1, 1, 64, 1, 1, 0, stream,
                                 args.params, NULL));
  // The launch copied the values: clobbering them changes nothing.
  memset(&args, 0xff, sizeof(args));
  gate_open(&gate);
  float output[kCount];
  uint32_t status_word = 1;
  read_device(output, out, sizeof(output), stream);
  read_device(&status_word, status, sizeof(status_word), stream);
  assert_int_equal(status_word, 0);
  for (int i = 0; i < kCount; ++i) {
    assert_true(output[i] == input[i] * 2.0f + 0.25f);
  }

  // Bindings too small for the count: status 2, nothing written.
  ASSERT_CU_OK(cu.cuMemsetD32Async(out, 0, kCount, stream));
  scale_offset_args_initialize(&args, in, out, 64 * sizeof(float), 2.0f, 0.25f,
                               kCount, status);
  ASSERT_CU_OK(cu.cuLaunchKernel(scale_offset, 2, 1, 1, 64, 1, 1, 0, stream,
                                 args.params, NULL));
  read_device(&status_word, status, sizeof(status_word), stream);
  assert_int_equal(status_word, 2);
  read_device(output, out, sizeof(output), stream);
  assert_true(output[0] == 0.0f);

  // fail: status 1 when a block's x is fail_x, 0 when none is.
  uint32_t fail_x = 1;
  void* fail_params[2] = {&fail_x, &status};
  ASSERT_CU_OK(cu.cuMemsetD32Async(status, 0, 4, stream));
  ASSERT_CU_OK(
      cu.cuLaunchKernel(fail, 3, 1, 1, 1, 1, 1, 0, stream, fail_params, NULL));
  uint32_t report[4] = {0};
  read_device(report, status, sizeof(report), stream);
  assert_int_equal(report[0], 1);
  assert_int_equal(report[1], 1);  // the failing block's x
  assert_int_equal(report[2], 0);
  fail_x = 5;
  ASSERT_CU_OK(cu.cuMemsetD32Async(status, 0, 4, stream));
  ASSERT_CU_OK(
      cu.cuLaunchKernel(fail, 3, 1, 1, 1, 1, 1, 0, stream, fail_params, NULL));
  read_device(&status_word, status, sizeof(status_word), stream);
  assert_int_equal(status_word, 0);
  assert_int_equal(controls.launch_count() - launches, 4);

  // Shapes and shared memory the real driver refuses.
  EXPECT_CU(
      CUDA_ERROR_INVALID_VALUE,
      cu.cuLaunchKernel(fail, 0, 1, 1, 1, 1, 1, 0, stream, fail_params, NULL));
  EXPECT_CU(
      CUDA_ERROR_INVALID_VALUE,
      cu.cuLaunchKernel(fail, 1, 1, 1, 0, 1, 1, 0, stream, fail_params, NULL));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu.cuLaunchKernel(fail, 1, 1, 1, 1025, 1, 1, 0, stream, fail_params,
                              NULL));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu.cuLaunchKernel(fail, 1, 1, 1, 32, 32, 2, 0, stream, fail_params,
                              NULL));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu.cuLaunchKernel(fail, 1, 1, 1, 1, 1, 1, 64 * 1024, stream,
                              fail_params, NULL));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu.cuLaunchKernel(fail, 1, 1, 1, 1, 1, 1, 0, stream, NULL, NULL));
  EXPECT_CU(
      CUDA_ERROR_INVALID_HANDLE,
      cu.cuLaunchKernel(fail, 1, 1, 1, 1, 1, 1, 0, NULL, fail_params, NULL));
  // Raised dynamic shared memory: the launch goes through.
  ASSERT_CU_OK(cu.cuFuncSetAttribute(
      fail, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 64 * 1024));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu.cuFuncSetAttribute(fail, CU_FUNC_ATTRIBUTE_NUM_REGS, 1));
  ASSERT_CU_OK(cu.cuLaunchKernel(fail, 2, 1, 1, 1, 1, 1, 64 * 1024, stream,
                                 fail_params, NULL));
  ASSERT_CU_OK(cu.cuStreamSynchronize(stream));

  ASSERT_CU_OK(cu.cuMemFree(in));
  ASSERT_CU_OK(cu.cuMemFree(out));
  ASSERT_CU_OK(cu.cuMemFree(status));
  ASSERT_CU_OK(cu.cuModuleUnload(module));
  ASSERT_CU_OK(cu.cuStreamDestroy(stream));
  gate_deinitialize(&gate);
}

// abs_range and write_ids behave as the CPU kernels do.
static void test_launch_abs_range_and_write_ids(void** state) {
  (void)state;
  CUstream stream = create_stream();
  CUmodule module = load_cts_module();
  CUdeviceptr data = allocate(80 * sizeof(int32_t));
  CUdeviceptr ids = allocate(12 * 4 * sizeof(uint32_t));
  // Four words: the code, then the failing block's index.
  CUdeviceptr status = allocate(4 * sizeof(uint32_t));
  int32_t values[80];
  for (int i = 0; i < 80; ++i) values[i] = -i;
  ASSERT_CU_OK(cu.cuMemcpyHtoDAsync(data, values, sizeof(values), stream));
  ASSERT_CU_OK(cu.cuMemsetD32Async(status, 0, 4, stream));

  uint64_t length = sizeof(values);
  uint32_t first = 3;
  uint32_t count = 70;
  void* abs_params[5] = {&data, &length, &first, &count, &status};
  ASSERT_CU_OK(cu.cuLaunchKernel(get_function(module, "abs_range"), 2, 1, 1, 64,
                                 1, 1, 0, stream, abs_params, NULL));
  uint64_t ids_length = 12 * 4 * sizeof(uint32_t);
  void* ids_params[3] = {&ids, &ids_length, &status};
  ASSERT_CU_OK(cu.cuLaunchKernel(get_function(module, "write_ids"), 2, 3, 2, 1,
                                 1, 1, 0, stream, ids_params, NULL));
  int32_t result[80];
  uint32_t written[48];
  uint32_t status_word = 1;
  read_device(result, data, sizeof(result), stream);
  read_device(written, ids, sizeof(written), stream);
  read_device(&status_word, status, sizeof(status_word), stream);
  assert_int_equal(status_word, 0);
  for (int i = 0; i < 80; ++i) {
    assert_int_equal(result[i], i >= 3 && i < 73 ? i : -i);
  }
  for (uint32_t z = 0; z < 2; ++z) {
    for (uint32_t y = 0; y < 3; ++y) {
      for (uint32_t x = 0; x < 2; ++x) {
        uint32_t flat = (z * 3 + y) * 2 + x;
        assert_int_equal(written[flat * 4 + 0], x);
        assert_int_equal(written[flat * 4 + 1], y);
        assert_int_equal(written[flat * 4 + 2], z);
        assert_int_equal(written[flat * 4 + 3], flat);
      }
    }
  }
  // Past the end of the binding: status 2.
  count = 78;
  ASSERT_CU_OK(cu.cuLaunchKernel(get_function(module, "abs_range"), 2, 1, 1, 64,
                                 1, 1, 0, stream, abs_params, NULL));
  read_device(&status_word, status, sizeof(status_word), stream);
  assert_int_equal(status_word, 2);

  ASSERT_CU_OK(cu.cuMemFree(data));
  ASSERT_CU_OK(cu.cuMemFree(ids));
  ASSERT_CU_OK(cu.cuMemFree(status));
  ASSERT_CU_OK(cu.cuModuleUnload(module));
  ASSERT_CU_OK(cu.cuStreamDestroy(stream));
}

//===----------------------------------------------------------------------===//
// Graphs
//===----------------------------------------------------------------------===//

static CUDA_MEMSET_NODE_PARAMS fill_params(CUdeviceptr dst, uint32_t value,
                                           uint32_t element_size,
                                           size_t width) {
  CUDA_MEMSET_NODE_PARAMS params;
  memset(&params, 0, sizeof(params));
  params.dst = dst;
  params.value = value;
  params.elementSize = element_size;
  params.width = width;
  params.height = 1;
  return params;
}

static CUDA_MEMCPY3D copy_to_host_params(void* dst, CUdeviceptr src,
                                         size_t size) {
  CUDA_MEMCPY3D params;
  memset(&params, 0, sizeof(params));
  params.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  params.srcDevice = src;
  params.dstMemoryType = CU_MEMORYTYPE_HOST;
  params.dstHost = dst;
  params.WidthInBytes = size;
  params.Height = 1;
  params.Depth = 1;
  return params;
}

static CUDA_KERNEL_NODE_PARAMS kernel_params(CUfunction function,
                                             unsigned int grid_x,
                                             unsigned int block_x,
                                             void** params) {
  CUDA_KERNEL_NODE_PARAMS kernel;
  memset(&kernel, 0, sizeof(kernel));
  kernel.func = function;
  kernel.gridDimX = grid_x;
  kernel.gridDimY = 1;
  kernel.gridDimZ = 1;
  kernel.blockDimX = block_x;
  kernel.blockDimY = 1;
  kernel.blockDimZ = 1;
  kernel.kernelParams = params;
  return kernel;
}

typedef struct snapshot_t {
  const float* from;
  float values[4];
} snapshot_t;

static void CUDA_CB take_snapshot(void* user_data) {
  snapshot_t* snapshot = (snapshot_t*)user_data;
  memcpy(snapshot->values, snapshot->from, sizeof(snapshot->values));
}

// memset -> scale_offset -> memcpy to host, launched twice with the kernel
// node's scale changed on the exec in between. Both launches are queued
// behind a gate before either runs: the first must still use the old
// parameters.
static void test_graph_launch_and_update(void** state) {
  (void)state;
  enum { kCount = 4 };
  CUstream stream = create_stream();
  CUmodule module = load_cts_module();
  CUfunction scale_offset = get_function(module, "scale_offset");
  CUdeviceptr in = allocate(kCount * sizeof(float));
  CUdeviceptr out = allocate(kCount * sizeof(float));
  CUdeviceptr status = allocate(sizeof(uint32_t));
  ASSERT_CU_OK(cu.cuMemsetD32Async(status, 0, 1, stream));
  float host[kCount] = {0};

  CUgraph graph = NULL;
  ASSERT_CU_OK(cu.cuGraphCreate(&graph, 0));
  CUgraphNode fill = NULL;
  CUgraphNode kernel = NULL;
  CUgraphNode copy = NULL;
  CUDA_MEMSET_NODE_PARAMS fill_api = fill_params(in, f32_bits(1.5f), 4, kCount);
  ASSERT_CU_OK(
      cu.cuGraphAddMemsetNode(&fill, graph, NULL, 0, &fill_api, context));
  scale_offset_args_t args;
  scale_offset_args_initialize(&args, in, out, kCount * sizeof(float), 2.0f,
                               1.0f, kCount, status);
  CUDA_KERNEL_NODE_PARAMS kernel_api =
      kernel_params(scale_offset, 1, 64, args.params);
  ASSERT_CU_OK(cu.cuGraphAddKernelNode(&kernel, graph, &fill, 1, &kernel_api));
  CUDA_MEMCPY3D copy_api = copy_to_host_params(host, out, sizeof(host));
  ASSERT_CU_OK(
      cu.cuGraphAddMemcpyNode(&copy, graph, &kernel, 1, &copy_api, context));
  CUgraphExec exec = NULL;
  ASSERT_CU_OK(cu.cuGraphInstantiate(&exec, graph, 0));

  uint64_t launches = controls.launch_count();
  snapshot_t first = {.from = host};
  gate_t gate;
  gate_stream(&gate, stream);
  ASSERT_CU_OK(cu.cuGraphLaunch(exec, stream));
  ASSERT_CU_OK(cu.cuLaunchHostFunc(stream, take_snapshot, &first));
  scale_offset_args_initialize(&args, in, out, kCount * sizeof(float), 3.0f,
                               1.0f, kCount, status);
  kernel_api = kernel_params(scale_offset, 1, 64, args.params);
  ASSERT_CU_OK(cu.cuGraphExecKernelNodeSetParams(exec, kernel, &kernel_api));
  ASSERT_CU_OK(cu.cuGraphLaunch(exec, stream));
  gate_open(&gate);
  ASSERT_CU_OK(cu.cuStreamSynchronize(stream));
  for (int i = 0; i < kCount; ++i) {
    assert_true(first.values[i] == 4.0f);  // 1.5 * 2 + 1
    assert_true(host[i] == 5.5f);          // 1.5 * 3 + 1
  }
  assert_int_equal(controls.launch_count() - launches, 2);

  // Memset and memcpy nodes updated on the exec.
  fill_api = fill_params(in, f32_bits(-1.0f), 4, kCount);
  ASSERT_CU_OK(
      cu.cuGraphExecMemsetNodeSetParams(exec, fill, &fill_api, context));
  float other[kCount] = {0};
  copy_api = copy_to_host_params(other, out, sizeof(other));
  ASSERT_CU_OK(
      cu.cuGraphExecMemcpyNodeSetParams(exec, copy, &copy_api, context));
  ASSERT_CU_OK(cu.cuGraphLaunch(exec, stream));
  ASSERT_CU_OK(cu.cuStreamSynchronize(stream));
  for (int i = 0; i < kCount; ++i) {
    assert_true(other[i] == -2.0f);  // -1 * 3 + 1
    assert_true(host[i] == 5.5f);    // no longer written
  }
  uint32_t status_word = 1;
  read_device(&status_word, status, sizeof(status_word), stream);
  assert_int_equal(status_word, 0);

  // A node of the wrong kind, and what the double does not support.
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu.cuGraphExecMemsetNodeSetParams(exec, copy, &fill_api, context));
  CUgraphNode node = NULL;
  fill_api.height = 2;
  EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED,
            cu.cuGraphAddMemsetNode(&node, graph, NULL, 0, &fill_api, context));
  fill_api = fill_params(in + 2, 0, 4, 1);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu.cuGraphAddMemsetNode(&node, graph, NULL, 0, &fill_api, context));
  fill_api = fill_params(in, 0, 3, 1);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu.cuGraphAddMemsetNode(&node, graph, NULL, 0, &fill_api, context));
  copy_api.Height = 2;
  EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED,
            cu.cuGraphAddMemcpyNode(&node, graph, NULL, 0, &copy_api, context));
  copy_api = copy_to_host_params(other, out, sizeof(other));
  copy_api.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED,
            cu.cuGraphAddMemcpyNode(&node, graph, NULL, 0, &copy_api, context));
  EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED, cu.cuGraphInstantiate(&exec, graph, 1));

  ASSERT_CU_OK(cu.cuGraphExecDestroy(exec));
  ASSERT_CU_OK(cu.cuGraphDestroy(graph));
  ASSERT_CU_OK(cu.cuMemFree(in));
  ASSERT_CU_OK(cu.cuMemFree(out));
  ASSERT_CU_OK(cu.cuMemFree(status));
  ASSERT_CU_OK(cu.cuModuleUnload(module));
  ASSERT_CU_OK(cu.cuStreamDestroy(stream));
  gate_deinitialize(&gate);
}

// Dependencies order nodes; independent nodes run latest-added first.
static void test_graph_order(void** state) {
  (void)state;
  CUstream stream = create_stream();
  CUdeviceptr word = allocate(sizeof(uint32_t));
  CUgraph graph = NULL;
  ASSERT_CU_OK(cu.cuGraphCreate(&graph, 0));
  CUgraphNode first = NULL;
  CUgraphNode second = NULL;
  CUgraphNode join = NULL;
  CUDA_MEMSET_NODE_PARAMS ones = fill_params(word, 1, 4, 1);
  CUDA_MEMSET_NODE_PARAMS twos = fill_params(word, 2, 4, 1);
  ASSERT_CU_OK(cu.cuGraphAddMemsetNode(&first, graph, NULL, 0, &ones, context));
  ASSERT_CU_OK(
      cu.cuGraphAddMemsetNode(&second, graph, NULL, 0, &twos, context));
  CUgraphNode both[2] = {first, second};
  ASSERT_CU_OK(cu.cuGraphAddEmptyNode(&join, graph, both, 2));
  CUgraphExec independent = NULL;
  ASSERT_CU_OK(cu.cuGraphInstantiate(&independent, graph, 0));
  ASSERT_CU_OK(cu.cuGraphLaunch(independent, stream));
  uint32_t value = 0;
  read_device(&value, word, sizeof(value), stream);
  assert_int_equal(value, 1);  // "second" ran first
  ASSERT_CU_OK(cu.cuGraphExecDestroy(independent));
  ASSERT_CU_OK(cu.cuGraphDestroy(graph));

  // With the edge first -> second, second's value stays.
  ASSERT_CU_OK(cu.cuGraphCreate(&graph, 0));
  ASSERT_CU_OK(cu.cuGraphAddMemsetNode(&first, graph, NULL, 0, &ones, context));
  ASSERT_CU_OK(
      cu.cuGraphAddMemsetNode(&second, graph, &first, 1, &twos, context));
  // A dependency from another graph is refused.
  CUgraph other = NULL;
  ASSERT_CU_OK(cu.cuGraphCreate(&other, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu.cuGraphAddEmptyNode(&join, other, &first, 1));
  ASSERT_CU_OK(cu.cuGraphDestroy(other));
  CUgraphExec ordered = NULL;
  ASSERT_CU_OK(cu.cuGraphInstantiate(&ordered, graph, 0));
  ASSERT_CU_OK(cu.cuGraphLaunch(ordered, stream));
  read_device(&value, word, sizeof(value), stream);
  assert_int_equal(value, 2);

  // Memory freed after the node was made: the launch is refused.
  ASSERT_CU_OK(cu.cuMemFree(word));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu.cuGraphLaunch(ordered, stream));
  ASSERT_CU_OK(cu.cuGraphExecDestroy(ordered));
  ASSERT_CU_OK(cu.cuGraphDestroy(graph));
  ASSERT_CU_OK(cu.cuStreamDestroy(stream));
}

//===----------------------------------------------------------------------===//
// Stream memory operations and the queue depth
//===----------------------------------------------------------------------===//

// A 64-bit word of mapped host memory, as the driver's semaphores keep
// their payloads, and its device address.
typedef struct mapped_word_t {
  uint64_t* host;
  CUdeviceptr device;
} mapped_word_t;

static mapped_word_t allocate_mapped_word(uint64_t initial_value) {
  void* host = NULL;
  ASSERT_CU_OK(cu.cuMemHostAlloc(&host, 64, CU_MEMHOSTALLOC_DEVICEMAP));
  mapped_word_t word = {(uint64_t*)host, 0};
  ASSERT_CU_OK(cu.cuMemHostGetDevicePointer(&word.device, host, 0));
  __atomic_store_n(word.host, initial_value, __ATOMIC_RELEASE);
  return word;
}

static void free_mapped_word(mapped_word_t word) {
  ASSERT_CU_OK(cu.cuMemFreeHost(word.host));
}

// The driver's kind of store: a plain atomic store the double is not told
// about.
static void host_store(mapped_word_t word, uint64_t value) {
  __atomic_store_n(word.host, value, __ATOMIC_RELEASE);
}

// |event|, recorded behind a wait, is still pending a while later. (A wait
// that wrongly passed shows here; one that wrongly held shows in the
// synchronize that follows.)
static void expect_still_waiting(CUevent event) {
  sleep_ms(5);
  EXPECT_CU(CUDA_ERROR_NOT_READY, cu.cuEventQuery(event));
}

// Queues a wait for |condition| of |value| on |word| with an event behind
// it, stores each of |unmet| in turn (the stream stays held), then |met|
// (it goes on).
static void check_wait_condition(unsigned int condition, uint64_t value,
                                 uint64_t initial, const uint64_t* unmet,
                                 int unmet_count, uint64_t met) {
  CUstream stream = create_stream();
  CUevent event = create_event(CU_EVENT_DISABLE_TIMING);
  mapped_word_t word = allocate_mapped_word(initial);
  ASSERT_CU_OK(cu.cuStreamWaitValue64(stream, word.device, value, condition));
  ASSERT_CU_OK(cu.cuEventRecord(event, stream));
  expect_still_waiting(event);
  for (int i = 0; i < unmet_count; ++i) {
    host_store(word, unmet[i]);
    expect_still_waiting(event);
  }
  host_store(word, met);
  ASSERT_CU_OK(cu.cuStreamSynchronize(stream));
  ASSERT_CU_OK(cu.cuEventQuery(event));
  ASSERT_CU_OK(cu.cuEventDestroy(event));
  ASSERT_CU_OK(cu.cuStreamDestroy(stream));
  free_mapped_word(word);
}

// GEQ, the default: released by a host store it is never told about.
static void test_value_wait_released_by_host_store(void** state) {
  (void)state;
  const uint64_t unmet[] = {1, 4};
  check_wait_condition(CU_STREAM_WAIT_VALUE_GEQ, 5, 0, unmet, 2, 5);
  // Cyclic, as documented: (int64_t)(*addr - value) >= 0. UINT64_MAX is
  // behind 1, so it is no sentinel that releases every GEQ waiter;
  // INT64_MAX is ahead of every value below it.
  const uint64_t wrapped[] = {UINT64_MAX, (1ull << 63) + 1};
  check_wait_condition(CU_STREAM_WAIT_VALUE_GEQ, 1, 0, wrapped, 2, INT64_MAX);

  // A wait already met holds nothing.
  CUstream stream = create_stream();
  mapped_word_t word = allocate_mapped_word(9);
  ASSERT_CU_OK(cu.cuStreamWaitValue64(stream, word.device, 9, 0));
  ASSERT_CU_OK(cu.cuStreamSynchronize(stream));
  ASSERT_CU_OK(cu.cuStreamDestroy(stream));
  free_mapped_word(word);
}

static void test_value_wait_conditions(void** state) {
  (void)state;
  // EQ: past the value is not the value.
  const uint64_t eq_unmet[] = {9, 11};
  check_wait_condition(CU_STREAM_WAIT_VALUE_EQ, 10, 0, eq_unmet, 2, 10);
  // AND: any bit in common.
  const uint64_t and_unmet[] = {0x3, 0x10};
  check_wait_condition(CU_STREAM_WAIT_VALUE_AND, 0x4, 0, and_unmet, 2, 0xc);
  // NOR: any bit clear in both; the value sets all but the low four.
  const uint64_t nor_unmet[] = {0xf, 0xff};
  check_wait_condition(CU_STREAM_WAIT_VALUE_NOR, ~(uint64_t)0xf, 0xf, nor_unmet,
                       2, 0x7);
}

// A write op of another stream releases the wait at once, and what that
// stream wrote before it (device memory here) is what the released stream
// reads.
static void test_value_wait_released_by_other_stream(void** state) {
  (void)state;
  enum { kCount = 1024 };
  CUstream waiter = create_stream();
  CUstream writer = create_stream();
  CUdeviceptr data = allocate(kCount * sizeof(uint32_t));
  CUdeviceptr word = allocate(sizeof(uint64_t));
  ASSERT_CU_OK(cu.cuMemsetD32Async(data, 0, kCount, writer));
  ASSERT_CU_OK(cu.cuMemsetD32Async(word, 0, 2, writer));
  ASSERT_CU_OK(cu.cuStreamSynchronize(writer));

  ASSERT_CU_OK(cu.cuStreamWaitValue64(waiter, word, 3, 0));
  uint32_t* seen = (uint32_t*)calloc(kCount, sizeof(uint32_t));
  assert_non_null(seen);
  ASSERT_CU_OK(cu.cuMemcpyAsync((CUdeviceptr)(uintptr_t)seen, data,
                                kCount * sizeof(uint32_t), waiter));
  // The writer's fill and write are held until the waiter is waiting.
  gate_t gate;
  gate_stream(&gate, writer);
  ASSERT_CU_OK(cu.cuMemsetD32Async(data, 0xabcd1234u, kCount, writer));
  ASSERT_CU_OK(
      cu.cuStreamWriteValue64(writer, word, 3, CU_STREAM_WRITE_VALUE_DEFAULT));
  gate_open(&gate);
  ASSERT_CU_OK(cu.cuStreamSynchronize(waiter));
  for (int i = 0; i < kCount; ++i) assert_int_equal(seen[i], 0xabcd1234u);

  ASSERT_CU_OK(cu.cuStreamSynchronize(writer));
  free(seen);
  ASSERT_CU_OK(cu.cuMemFree(word));
  ASSERT_CU_OK(cu.cuMemFree(data));
  ASSERT_CU_OK(cu.cuStreamDestroy(writer));
  ASSERT_CU_OK(cu.cuStreamDestroy(waiter));
  gate_deinitialize(&gate);
}

// A write op runs in its stream's order: the host that sees the word sees
// the fill queued before it (the write's barrier, an acquire load here).
static void test_value_write_after_earlier_ops(void** state) {
  (void)state;
  enum { kCount = 4096 };
  CUstream stream = create_stream();
  mapped_word_t word = allocate_mapped_word(0);
  void* host = NULL;
  ASSERT_CU_OK(cu.cuMemHostAlloc(&host, kCount * sizeof(uint32_t),
                                 CU_MEMHOSTALLOC_DEVICEMAP));
  CUdeviceptr data = 0;
  ASSERT_CU_OK(cu.cuMemHostGetDevicePointer(&data, host, 0));
  gate_t gate;
  gate_stream(&gate, stream);
  ASSERT_CU_OK(cu.cuMemsetD32Async(data, 77, kCount, stream));
  ASSERT_CU_OK(cu.cuStreamWriteValue64(stream, word.device, 1, 0));
  ASSERT_CU_OK(cu.cuMemsetD32Async(data, 88, 1, stream));
  sleep_ms(5);
  assert_int_equal(__atomic_load_n(word.host, __ATOMIC_ACQUIRE), 0);
  gate_open(&gate);
  uint64_t deadline_ns = 0;
  {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    deadline_ns = (uint64_t)now.tv_sec * 1000000000ull + 10000000000ull;
  }
  while (__atomic_load_n(word.host, __ATOMIC_ACQUIRE) != 1) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if ((uint64_t)now.tv_sec * 1000000000ull > deadline_ns) {
      fail_msg("the write op did not land in 10 s");
    }
  }
  // The last element may already be 88; everything before it is 77.
  const uint32_t* elements = (const uint32_t*)host;
  for (int i = 1; i < kCount; ++i) assert_int_equal(elements[i], 77);
  ASSERT_CU_OK(cu.cuStreamSynchronize(stream));
  assert_int_equal(elements[0], 88);
  ASSERT_CU_OK(cu.cuStreamDestroy(stream));
  ASSERT_CU_OK(cu.cuMemFreeHost(host));
  free_mapped_word(word);
  gate_deinitialize(&gate);
}

static void test_value_ops_rejected(void** state) {
  (void)state;
  CUstream stream = create_stream();
  mapped_word_t word = allocate_mapped_word(0);
  CUdeviceptr small = allocate(12);
  uint64_t unregistered = 0;
  // Handles and addresses.
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE,
            cu.cuStreamWaitValue64(NULL, word.device, 1, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE,
            cu.cuStreamWriteValue64(CU_STREAM_LEGACY, word.device, 1, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu.cuStreamWaitValue64(stream, word.device + 4, 1, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu.cuStreamWriteValue64(stream, word.device + 4, 1, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu.cuStreamWaitValue64(
                stream, (CUdeviceptr)(uintptr_t)&unregistered, 1, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu.cuStreamWriteValue64(
                stream, (CUdeviceptr)(uintptr_t)&unregistered, 1, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cu.cuStreamWaitValue64(stream, 0, 1, 0));
  // 8 bytes at offset 8 of a 12-byte allocation run past its end.
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu.cuStreamWriteValue64(stream, small + 8, 1, 0));
  // Flags.
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu.cuStreamWaitValue64(stream, word.device, 1, 0x10));
  EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED,
            cu.cuStreamWaitValue64(stream, word.device, 1,
                                   CU_STREAM_WAIT_VALUE_FLUSH));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cu.cuStreamWriteValue64(stream, word.device, 1, 0x2));
  // Without a context.
  CUcontext popped = NULL;
  ASSERT_CU_OK(cu.cuCtxPopCurrent(&popped));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT,
            cu.cuStreamWaitValue64(stream, word.device, 1, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT,
            cu.cuStreamWriteValue64(stream, word.device, 1, 0));
  ASSERT_CU_OK(cu.cuCtxPushCurrent(popped));
  // Injected failures, by either name; nothing is queued.
  controls.fail_next("cuStreamWriteValue64", CUDA_ERROR_LAUNCH_FAILED);
  controls.fail_next("cuStreamWaitValue64_v2", CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_CU(CUDA_ERROR_LAUNCH_FAILED,
            cu.cuStreamWriteValue64(stream, word.device, 5, 0));
  EXPECT_CU(CUDA_ERROR_ILLEGAL_ADDRESS,
            cu.cuStreamWaitValue64(stream, word.device, 5, 0));
  ASSERT_CU_OK(cu.cuStreamSynchronize(stream));
  assert_int_equal(*word.host, 0);
  // A write to device memory and to a word of it at its last 8 bytes.
  ASSERT_CU_OK(cu.cuStreamWriteValue64(
      stream, small, 6, CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER));
  ASSERT_CU_OK(cu.cuStreamWriteValue64(stream, word.device + 56, 7, 0));
  ASSERT_CU_OK(cu.cuStreamSynchronize(stream));
  uint64_t read = 0;
  read_device(&read, small, sizeof(read), stream);
  assert_int_equal(read, 6);
  assert_int_equal(word.host[7], 7);

  ASSERT_CU_OK(cu.cuMemFree(small));
  free_mapped_word(word);
  ASSERT_CU_OK(cu.cuStreamDestroy(stream));
}

// The knob a driver's event fallback is tested with.
static void test_stream_mem_ops_knob(void** state) {
  (void)state;
  int value = -1;
  ASSERT_CU_OK(cu.cuDeviceGetAttribute(
      &value, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, 0));
  assert_int_equal(value, 1);
  ASSERT_CU_OK(cu.cuDeviceGetAttribute(
      &value, CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR, 1));
  assert_int_equal(value, 1);
  ASSERT_CU_OK(cu.cuDeviceGetAttribute(
      &value, CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES, 0));
  assert_int_equal(value, 0);

  CUstream stream = create_stream();
  mapped_word_t word = allocate_mapped_word(0);
  controls.set_stream_mem_ops(false);
  ASSERT_CU_OK(cu.cuDeviceGetAttribute(
      &value, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, 0));
  assert_int_equal(value, 0);
  ASSERT_CU_OK(cu.cuDeviceGetAttribute(
      &value, CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR, 0));
  assert_int_equal(value, 0);
  EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED,
            cu.cuStreamWaitValue64(stream, word.device, 0, 0));
  EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED,
            cu.cuStreamWriteValue64(stream, word.device, 1, 0));
  controls.set_stream_mem_ops(true);
  ASSERT_CU_OK(cu.cuStreamWriteValue64(stream, word.device, 1, 0));
  ASSERT_CU_OK(cu.cuStreamSynchronize(stream));
  assert_int_equal(*word.host, 1);
  free_mapped_word(word);
  ASSERT_CU_OK(cu.cuStreamDestroy(stream));
}

// Queues one host function from a thread of its own, so the test can see
// the call block.
typedef struct blocked_enqueue_t {
  CUstream stream;
  log_entry_t* entry;
  pthread_mutex_t mutex;
  pthread_cond_t returned_changed;
  bool returned;
  CUresult result;
} blocked_enqueue_t;

static void* blocked_enqueue_main(void* user_data) {
  blocked_enqueue_t* enqueue = (blocked_enqueue_t*)user_data;
  CUresult result = cu.cuCtxPushCurrent(context);
  if (result == CUDA_SUCCESS) {
    result =
        cu.cuLaunchHostFunc(enqueue->stream, append_to_log, enqueue->entry);
  }
  CUcontext popped = NULL;
  if (result == CUDA_SUCCESS) result = cu.cuCtxPopCurrent(&popped);
  pthread_mutex_lock(&enqueue->mutex);
  enqueue->result = result;
  enqueue->returned = true;
  pthread_cond_broadcast(&enqueue->returned_changed);
  pthread_mutex_unlock(&enqueue->mutex);
  return NULL;
}

// Whether the enqueue returned within |milliseconds|.
static bool blocked_enqueue_wait(blocked_enqueue_t* enqueue, int milliseconds) {
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += milliseconds / 1000;
  deadline.tv_nsec += (long)(milliseconds % 1000) * 1000000;
  if (deadline.tv_nsec >= 1000000000) {
    deadline.tv_sec += 1;
    deadline.tv_nsec -= 1000000000;
  }
  pthread_mutex_lock(&enqueue->mutex);
  while (!enqueue->returned &&
         pthread_cond_timedwait(&enqueue->returned_changed, &enqueue->mutex,
                                &deadline) == 0) {
  }
  bool returned = enqueue->returned;
  pthread_mutex_unlock(&enqueue->mutex);
  return returned;
}

// A stream of depth 4 holding an unmet wait and 3 functions: the fifth
// enqueue blocks its thread until the word is stored, then everything runs
// in order.
static void test_queue_depth_blocks_enqueue(void** state) {
  (void)state;
  controls.set_queue_depth(4);
  CUstream stream = create_stream();
  controls.set_queue_depth(1024);  // later streams: the default again
  mapped_word_t word = allocate_mapped_word(0);
  run_log_t log = {.count = 0};
  log_entry_t entries[4];
  ASSERT_CU_OK(cu.cuStreamWaitValue64(stream, word.device, 1, 0));
  for (int i = 0; i < 3; ++i) {
    entries[i] = (log_entry_t){&log, i};
    ASSERT_CU_OK(cu.cuLaunchHostFunc(stream, append_to_log, &entries[i]));
  }
  entries[3] = (log_entry_t){&log, 3};
  blocked_enqueue_t enqueue = {.stream = stream, .entry = &entries[3]};
  pthread_mutex_init(&enqueue.mutex, NULL);
  pthread_cond_init(&enqueue.returned_changed, NULL);
  pthread_t thread;
  assert_int_equal(
      pthread_create(&thread, NULL, blocked_enqueue_main, &enqueue), 0);
  bool returned_early = blocked_enqueue_wait(&enqueue, 50);
  host_store(word, 1);
  // The watchdog: a bound that never frees fails here, not by hanging.
  bool returned = blocked_enqueue_wait(&enqueue, 10000);
  if (!returned) fail_msg("the blocked enqueue did not return in 10 s");
  pthread_join(thread, NULL);
  assert_false(returned_early);
  EXPECT_CU(CUDA_SUCCESS, enqueue.result);
  ASSERT_CU_OK(cu.cuStreamSynchronize(stream));
  assert_int_equal(log.count, 4);
  for (int i = 0; i < 4; ++i) assert_int_equal(log.entries[i], i);
  ASSERT_CU_OK(cu.cuStreamDestroy(stream));
  free_mapped_word(word);
  pthread_cond_destroy(&enqueue.returned_changed);
  pthread_mutex_destroy(&enqueue.mutex);
}

static uint64_t now_ms(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (uint64_t)now.tv_sec * 1000u + (uint64_t)now.tv_nsec / 1000000u;
}

// Destroying a stream whose wait is never met: the wait is abandoned after
// the double's grace (1 s), what was behind it runs, and the destroy says
// ILLEGAL_STATE (see cuda_double.h). A write queued elsewhere that lands
// within the grace releases it as on a GPU.
static void test_stream_destroy_with_unmet_wait(void** state) {
  (void)state;
  CUstream stream = create_stream();
  CUevent event = create_event(CU_EVENT_DISABLE_TIMING);
  mapped_word_t word = allocate_mapped_word(0);
  CUdeviceptr behind = allocate(sizeof(uint32_t));
  ASSERT_CU_OK(cu.cuMemsetD32Async(behind, 0, 1, stream));
  ASSERT_CU_OK(cu.cuStreamWaitValue64(stream, word.device, 1, 0));
  ASSERT_CU_OK(cu.cuMemsetD32Async(behind, 42, 1, stream));
  ASSERT_CU_OK(cu.cuEventRecord(event, stream));
  uint64_t start_ms = now_ms();
  EXPECT_CU(CUDA_ERROR_ILLEGAL_STATE, cu.cuStreamDestroy(stream));
  uint64_t elapsed_ms = now_ms() - start_ms;
  assert_true(elapsed_ms >= 900);
  assert_true(elapsed_ms < 10000);
  ASSERT_CU_OK(cu.cuEventQuery(event));
  uint32_t value = 0;
  CUstream reader = create_stream();
  read_device(&value, behind, sizeof(value), reader);
  assert_int_equal(value, 42);

  // Released within the grace by another stream's write: no error.
  stream = create_stream();
  ASSERT_CU_OK(cu.cuStreamWaitValue64(stream, word.device, 2, 0));
  ASSERT_CU_OK(cu.cuLaunchHostFunc(reader, sleep_20ms, NULL));
  ASSERT_CU_OK(cu.cuStreamWriteValue64(reader, word.device, 2, 0));
  ASSERT_CU_OK(cu.cuStreamDestroy(stream));
  assert_int_equal(*word.host, 2);

  ASSERT_CU_OK(cu.cuStreamDestroy(reader));
  ASSERT_CU_OK(cu.cuEventDestroy(event));
  ASSERT_CU_OK(cu.cuMemFree(behind));
  free_mapped_word(word);
}

//===----------------------------------------------------------------------===//
// Contexts, injected failures, threads
//===----------------------------------------------------------------------===//

static void* allocate_without_context(void* user_data) {
  CUdeviceptr pointer = 0;
  *(CUresult*)user_data = cu.cuMemAlloc(&pointer, 16);
  return NULL;
}

static void test_invalid_context(void** state) {
  (void)state;
  CUstream stream = create_stream();
  CUevent event = create_event(CU_EVENT_DISABLE_TIMING);
  ASSERT_CU_OK(cu.cuEventRecord(event, stream));
  ASSERT_CU_OK(cu.cuStreamSynchronize(stream));

  // A thread that never pushed the context.
  pthread_t thread;
  CUresult thread_result = CUDA_SUCCESS;
  assert_int_equal(
      pthread_create(&thread, NULL, allocate_without_context, &thread_result),
      0);
  pthread_join(thread, NULL);
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, thread_result);

  // This thread with its context popped.
  CUcontext popped = NULL;
  ASSERT_CU_OK(cu.cuCtxPopCurrent(&popped));
  CUdeviceptr pointer = 0;
  CUstream other_stream = NULL;
  CUevent other_event = NULL;
  CUmodule module = NULL;
  CUgraph graph = NULL;
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cu.cuMemAlloc(&pointer, 16));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cu.cuStreamCreate(&other_stream, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cu.cuEventCreate(&other_event, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cu.cuEventRecord(event, stream));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cu.cuEventSynchronize(event));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cu.cuStreamSynchronize(stream));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT,
            cu.cuModuleLoadData(&module, kHandWrittenPtx));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cu.cuGraphCreate(&graph, 0));
  // Querying an event needs none.
  ASSERT_CU_OK(cu.cuEventQuery(event));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cu.cuCtxPopCurrent(&popped));
  ASSERT_CU_OK(cu.cuCtxPushCurrent(context));

  // Device 1's context: its streams take no work while device 0's is
  // current, and once released it cannot be pushed.
  CUcontext second = NULL;
  ASSERT_CU_OK(cu.cuDevicePrimaryCtxRetain(&second, 1));
  assert_ptr_not_equal(second, context);
  ASSERT_CU_OK(cu.cuCtxPushCurrent(second));
  CUstream second_stream = create_stream();
  ASSERT_CU_OK(cu.cuCtxPopCurrent(&popped));
  assert_ptr_equal(popped, second);
  CUdeviceptr word = allocate(sizeof(uint32_t));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT,
            cu.cuMemsetD32Async(word, 0, 1, second_stream));
  ASSERT_CU_OK(cu.cuStreamSynchronize(second_stream));
  ASSERT_CU_OK(cu.cuStreamDestroy(second_stream));
  // Released while current: the context is gone, the stack entry not.
  ASSERT_CU_OK(cu.cuCtxPushCurrent(second));
  ASSERT_CU_OK(cu.cuDevicePrimaryCtxRelease(1));
  EXPECT_CU(CUDA_ERROR_CONTEXT_IS_DESTROYED, cu.cuMemAlloc(&pointer, 16));
  ASSERT_CU_OK(cu.cuCtxPopCurrent(&popped));
  assert_ptr_equal(popped, second);
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cu.cuCtxPushCurrent(second));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cu.cuDevicePrimaryCtxRelease(1));

  ASSERT_CU_OK(cu.cuMemFree(word));
  ASSERT_CU_OK(cu.cuEventDestroy(event));
  ASSERT_CU_OK(cu.cuStreamDestroy(stream));
}

static void test_fail_next(void** state) {
  (void)state;
  CUdeviceptr pointer = 0;
  controls.fail_next("cuMemAlloc", CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_CU(CUDA_ERROR_OUT_OF_MEMORY, cu.cuMemAlloc(&pointer, 16));
  assert_int_equal(controls.live_allocations(), 0);
  // The exported name works too; two armed failures fire in order.
  controls.fail_next("cuMemAlloc_v2", CUDA_ERROR_UNKNOWN);
  controls.fail_next("cuMemAlloc", CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_CU(CUDA_ERROR_UNKNOWN, cu.cuMemAlloc(&pointer, 16));
  EXPECT_CU(CUDA_ERROR_ILLEGAL_ADDRESS, cu.cuMemAlloc(&pointer, 16));
  pointer = allocate(16);
  ASSERT_CU_OK(cu.cuMemFree(pointer));

  // Other entry points are unaffected by a failure armed for one.
  CUstream stream = create_stream();
  controls.fail_next("cuStreamSynchronize", CUDA_ERROR_LAUNCH_FAILED);
  ASSERT_CU_OK(cu.cuLaunchHostFunc(stream, sleep_20ms, NULL));
  EXPECT_CU(CUDA_ERROR_LAUNCH_FAILED, cu.cuStreamSynchronize(stream));
  ASSERT_CU_OK(cu.cuStreamSynchronize(stream));
  controls.fail_next("cuGraphInstantiate", CUDA_ERROR_OUT_OF_MEMORY);
  CUgraph graph = NULL;
  ASSERT_CU_OK(cu.cuGraphCreate(&graph, 0));
  CUgraphExec exec = NULL;
  EXPECT_CU(CUDA_ERROR_OUT_OF_MEMORY, cu.cuGraphInstantiate(&exec, graph, 0));
  ASSERT_CU_OK(cu.cuGraphDestroy(graph));
  controls.fail_next("cuEventQuery", CUDA_ERROR_NOT_READY);
  CUevent event = create_event(0);
  EXPECT_CU(CUDA_ERROR_NOT_READY, cu.cuEventQuery(event));
  ASSERT_CU_OK(cu.cuEventQuery(event));
  ASSERT_CU_OK(cu.cuEventDestroy(event));
  ASSERT_CU_OK(cu.cuStreamDestroy(stream));
}

// The driver's shape: one thread submits work and records events, one
// blocks in cuEventSynchronize on each in turn, one polls cuEventQuery
// without a context.
enum { kRounds = 200 };

typedef struct threads_test_t {
  CUstream stream;
  CUevent events[kRounds];
  pthread_mutex_t mutex;
  pthread_cond_t submitted_changed;
  int submitted;
  bool done;
  int counter;  // written by the stream's host functions only
  CUresult failures;
} threads_test_t;

static void CUDA_CB increment(void* user_data) {
  ++((threads_test_t*)user_data)->counter;
}

static void record_failure(threads_test_t* test, CUresult result) {
  if (result == CUDA_SUCCESS) return;
  pthread_mutex_lock(&test->mutex);
  test->failures = result;
  pthread_mutex_unlock(&test->mutex);
}

static void* submit_main(void* user_data) {
  threads_test_t* test = (threads_test_t*)user_data;
  record_failure(test, cu.cuCtxPushCurrent(context));
  for (int i = 0; i < kRounds; ++i) {
    record_failure(test, cu.cuLaunchHostFunc(test->stream, increment, test));
    record_failure(test, cu.cuEventRecord(test->events[i], test->stream));
    pthread_mutex_lock(&test->mutex);
    test->submitted = i + 1;
    pthread_cond_broadcast(&test->submitted_changed);
    pthread_mutex_unlock(&test->mutex);
  }
  CUcontext popped = NULL;
  record_failure(test, cu.cuCtxPopCurrent(&popped));
  return NULL;
}

static void* complete_main(void* user_data) {
  threads_test_t* test = (threads_test_t*)user_data;
  record_failure(test, cu.cuCtxPushCurrent(context));
  for (int i = 0; i < kRounds; ++i) {
    pthread_mutex_lock(&test->mutex);
    while (test->submitted <= i) {
      pthread_cond_wait(&test->submitted_changed, &test->mutex);
    }
    pthread_mutex_unlock(&test->mutex);
    record_failure(test, cu.cuEventSynchronize(test->events[i]));
    record_failure(test, cu.cuEventQuery(test->events[i]));
  }
  pthread_mutex_lock(&test->mutex);
  test->done = true;
  pthread_mutex_unlock(&test->mutex);
  CUcontext popped = NULL;
  record_failure(test, cu.cuCtxPopCurrent(&popped));
  return NULL;
}

static void* query_main(void* user_data) {
  threads_test_t* test = (threads_test_t*)user_data;
  for (int i = 0;; ++i) {
    pthread_mutex_lock(&test->mutex);
    bool done = test->done;
    int submitted = test->submitted;
    pthread_mutex_unlock(&test->mutex);
    if (done) break;
    if (submitted == 0) continue;
    CUresult result = cu.cuEventQuery(test->events[i % submitted]);
    if (result != CUDA_ERROR_NOT_READY) record_failure(test, result);
  }
  return NULL;
}

static void test_threads(void** state) {
  (void)state;
  threads_test_t test;
  memset(&test, 0, sizeof(test));
  pthread_mutex_init(&test.mutex, NULL);
  pthread_cond_init(&test.submitted_changed, NULL);
  test.stream = create_stream();
  for (int i = 0; i < kRounds; ++i) {
    test.events[i] = create_event(CU_EVENT_DISABLE_TIMING);
  }
  pthread_t threads[3];
  assert_int_equal(pthread_create(&threads[0], NULL, query_main, &test), 0);
  assert_int_equal(pthread_create(&threads[1], NULL, complete_main, &test), 0);
  assert_int_equal(pthread_create(&threads[2], NULL, submit_main, &test), 0);
  for (int i = 0; i < 3; ++i) pthread_join(threads[i], NULL);
  EXPECT_CU(CUDA_SUCCESS, test.failures);
  ASSERT_CU_OK(cu.cuStreamSynchronize(test.stream));
  assert_int_equal(test.counter, kRounds);
  for (int i = 0; i < kRounds; ++i)
    ASSERT_CU_OK(cu.cuEventDestroy(test.events[i]));
  ASSERT_CU_OK(cu.cuStreamDestroy(test.stream));
  pthread_cond_destroy(&test.submitted_changed);
  pthread_mutex_destroy(&test.mutex);
}

// Last: every test freed what it allocated.
// As in CUDA, a launch of an exec runs after every earlier launch of it,
// on whichever stream: a second stream's launch waits for one held behind
// an unmet wait, then both run in order.
static void test_graph_launches_in_order_across_streams(void** state) {
  (void)state;
  CUstream held = create_stream();
  CUstream other = create_stream();
  CUevent done = create_event(CU_EVENT_DISABLE_TIMING);
  CUdeviceptr word = allocate(sizeof(uint32_t));
  CUgraph graph = NULL;
  ASSERT_CU_OK(cu.cuGraphCreate(&graph, 0));
  CUgraphNode fill = NULL;
  CUDA_MEMSET_NODE_PARAMS sevens = fill_params(word, 7, 4, 1);
  ASSERT_CU_OK(cu.cuGraphAddMemsetNode(&fill, graph, NULL, 0, &sevens,
                                       context));
  CUgraphExec exec = NULL;
  ASSERT_CU_OK(cu.cuGraphInstantiate(&exec, graph, 0));
  mapped_word_t gate = allocate_mapped_word(0);
  ASSERT_CU_OK(cu.cuStreamWaitValue64(held, gate.device, 1,
                                      CU_STREAM_WAIT_VALUE_GEQ));
  ASSERT_CU_OK(cu.cuGraphLaunch(exec, held));
  ASSERT_CU_OK(cu.cuGraphLaunch(exec, other));
  ASSERT_CU_OK(cu.cuEventRecord(done, other));
  // The exec may go before its launches run: they keep what they need.
  ASSERT_CU_OK(cu.cuGraphExecDestroy(exec));
  expect_still_waiting(done);
  host_store(gate, 1);
  ASSERT_CU_OK(cu.cuStreamSynchronize(other));
  ASSERT_CU_OK(cu.cuStreamSynchronize(held));
  uint32_t value = 0;
  read_device(&value, word, sizeof(value), other);
  assert_int_equal(value, 7);
  ASSERT_CU_OK(cu.cuGraphDestroy(graph));
  ASSERT_CU_OK(cu.cuEventDestroy(done));
  ASSERT_CU_OK(cu.cuStreamDestroy(other));
  ASSERT_CU_OK(cu.cuStreamDestroy(held));
  free_mapped_word(gate);
  ASSERT_CU_OK(cu.cuMemFree(word));
}

static void test_no_live_allocations(void** state) {
  (void)state;
  assert_int_equal(controls.live_allocations(), 0);
}

//===----------------------------------------------------------------------===//
// No device (a process of its own)
//===----------------------------------------------------------------------===//

static void test_no_device(void** state) {
  (void)state;
  load_double();
  int count = -1;
  EXPECT_CU(CUDA_ERROR_NOT_INITIALIZED, cu.cuDeviceGetCount(&count));
  EXPECT_CU(CUDA_ERROR_NO_DEVICE, cu.cuInit(0));
  EXPECT_CU(CUDA_ERROR_NO_DEVICE, cu.cuInit(0));
  EXPECT_CU(CUDA_ERROR_NOT_INITIALIZED, cu.cuDeviceGetCount(&count));
  const char* name = NULL;
  ASSERT_CU_OK(cu.cuGetErrorName(CUDA_ERROR_NO_DEVICE, &name));
  assert_string_equal(name, "CUDA_ERROR_NO_DEVICE");
  int version = 0;
  ASSERT_CU_OK(cu.cuDriverGetVersion(&version));
  assert_int_equal(version, 13000);
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "--no-device") == 0) {
    setenv("WEFT_CUDA_DOUBLE_DEVICES", "0", 1);
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_no_device)};
    return cmocka_run_group_tests(tests, NULL, NULL);
  }
  // Before the first cuInit, which reads them; no thread runs yet.
  setenv("WEFT_CUDA_DOUBLE_DEVICES", "2", 1);
  setenv("WEFT_CUDA_DOUBLE_MEMORY", STRINGIFY(DEVICE_MEMORY), 1);
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_exports),
    cmocka_unit_test(test_devices),
    cmocka_unit_test(test_error_names),
    cmocka_unit_test(test_stream_in_order),
    cmocka_unit_test(test_host_functions_in_order),
    cmocka_unit_test(test_stream_destroy_waits),
    cmocka_unit_test(test_event_not_ready_then_done),
    cmocka_unit_test(test_stream_wait_event_orders_streams),
    cmocka_unit_test(test_event_elapsed_time),
    cmocka_unit_test(test_event_destroy_while_pending),
    cmocka_unit_test(test_memset_and_memcpy),
    cmocka_unit_test(test_out_of_memory),
    cmocka_unit_test(test_pool_alloc_free_async),
    cmocka_unit_test(test_module_load_and_lookup),
    cmocka_unit_test(test_cpu_twins),
#if defined(WEFT_HAVE_CTS_CUDA_KERNELS)
    cmocka_unit_test(test_cts_module),
#endif
    cmocka_unit_test(test_launch_scale_offset_and_fail),
    cmocka_unit_test(test_launch_abs_range_and_write_ids),
    cmocka_unit_test(test_graph_launch_and_update),
    cmocka_unit_test(test_graph_order),
    cmocka_unit_test(test_graph_launches_in_order_across_streams),
    cmocka_unit_test(test_value_wait_released_by_host_store),
    cmocka_unit_test(test_value_wait_conditions),
    cmocka_unit_test(test_value_wait_released_by_other_stream),
    cmocka_unit_test(test_value_write_after_earlier_ops),
    cmocka_unit_test(test_value_ops_rejected),
    cmocka_unit_test(test_stream_mem_ops_knob),
    cmocka_unit_test(test_queue_depth_blocks_enqueue),
    cmocka_unit_test(test_stream_destroy_with_unmet_wait),
    cmocka_unit_test(test_invalid_context),
    cmocka_unit_test(test_fail_next),
    cmocka_unit_test(test_threads),
    cmocka_unit_test(test_no_live_allocations),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
