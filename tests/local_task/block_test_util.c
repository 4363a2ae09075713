// Helpers for the block ISA tests (see block_test_util.h).
#include "block_test_util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
// clang-format off
#include <cmocka.h>
// clang-format on

#include "base/atomics.h"
#include "base/thread.h"
#include "hal/local/cpu_executable.h"
#include "hal/local/heap_buffer.h"

// --- Kernels

static uint32_t flat_id(const weft_dispatch_state_t* dispatch,
                        const weft_workgroup_state_t* workgroup) {
  const uint32_t* id = workgroup->workgroup_id;
  const uint32_t* n = dispatch->workgroup_count;
  return (id[2] * n[1] + id[1]) * n[0] + id[0];
}

static int count_kernel(const weft_dispatch_state_t* dispatch,
                        const weft_workgroup_state_t* workgroup) {
  uint32_t flat = flat_id(dispatch, workgroup);
  if ((size_t)(flat + 1) * 4 > dispatch->binding_lengths[0] ||
      (size_t)(flat + 1) * 4 > dispatch->binding_lengths[1]) {
    return 2;
  }
  uint32_t* counters = (uint32_t*)dispatch->binding_ptrs[0];
  uint32_t* owners = (uint32_t*)dispatch->binding_ptrs[1];
  __atomic_fetch_add(&counters[flat], 1u, __ATOMIC_RELAXED);
  __atomic_store_n(&owners[flat], workgroup->processor_id + 1,
                   __ATOMIC_RELAXED);
  return 0;
}

static int ping_pong_kernel(const weft_dispatch_state_t* dispatch,
                            const weft_workgroup_state_t* workgroup) {
  uint32_t n = dispatch->constants[0];
  uint32_t expected = dispatch->constants[1];
  const uint32_t* in = (const uint32_t*)dispatch->binding_ptrs[0];
  uint32_t* out = (uint32_t*)dispatch->binding_ptrs[1];
  if ((size_t)n * 4 > dispatch->binding_lengths[0] ||
      (size_t)n * 4 > dispatch->binding_lengths[1]) {
    return 2;
  }
  for (uint32_t j = 0; j < n; ++j) {
    if (in[j] != expected) return 7;
  }
  uint32_t flat = flat_id(dispatch, workgroup);
  if (flat < n) out[flat] = expected + 1;
  return 0;
}

static int fail_kernel(const weft_dispatch_state_t* dispatch,
                       const weft_workgroup_state_t* workgroup) {
  return flat_id(dispatch, workgroup) == dispatch->constants[0]
             ? (int)dispatch->constants[1]
             : 0;
}

static int scratch_kernel(const weft_dispatch_state_t* dispatch,
                          const weft_workgroup_state_t* workgroup) {
  uint32_t flat = flat_id(dispatch, workgroup);
  if (workgroup->processor_id >= dispatch->constants[0]) return 6;
  if (!workgroup->local_memory || workgroup->local_memory_size < 256) {
    return 4;
  }
  uint32_t* scratch = (uint32_t*)workgroup->local_memory;
  for (uint32_t i = 0; i < 64; ++i) scratch[i] = workgroup->processor_id;
  if (flat % 16 == 0) weft_thread_yield();
  for (uint32_t i = 0; i < 64; ++i) {
    if (scratch[i] != workgroup->processor_id) return 5;
  }
  uint32_t* owners = (uint32_t*)dispatch->binding_ptrs[0];
  uint64_t* addresses = (uint64_t*)dispatch->binding_ptrs[1];
  owners[flat] = workgroup->processor_id + 1;
  addresses[flat] = (uint64_t)(uintptr_t)workgroup->local_memory;
  return 0;
}

static int empty_kernel(const weft_dispatch_state_t* dispatch,
                        const weft_workgroup_state_t* workgroup) {
  return 0;
}

static int ids_kernel(const weft_dispatch_state_t* dispatch,
                      const weft_workgroup_state_t* workgroup) {
  uint32_t flat = flat_id(dispatch, workgroup);
  if ((size_t)(flat + 1) * 16 > dispatch->binding_lengths[0]) return 2;
  uint32_t* out = (uint32_t*)dispatch->binding_ptrs[0] + flat * 4;
  out[0] = workgroup->workgroup_id[0];
  out[1] = workgroup->workgroup_id[1];
  out[2] = workgroup->workgroup_id[2];
  out[3] = flat;
  return 0;
}

static int sum_constants_kernel(const weft_dispatch_state_t* dispatch,
                                const weft_workgroup_state_t* workgroup) {
  uint32_t sum = 0;
  for (uint32_t i = 0; i < dispatch->constant_count; ++i) {
    sum += dispatch->constants[i];
  }
  *(uint32_t*)dispatch->binding_ptrs[0] = sum;
  return 0;
}

static int wait_kernel(const weft_dispatch_state_t* dispatch,
                       const weft_workgroup_state_t* workgroup) {
  uint32_t* flags = (uint32_t*)dispatch->binding_ptrs[0];
  __atomic_store_n(&flags[1], 1u, __ATOMIC_RELEASE);
  while (__atomic_load_n(&flags[0], __ATOMIC_ACQUIRE) == 0) {
    weft_thread_yield();
  }
  return 0;
}

static const weft_kernel_def_t kKernels[] = {
    {"count", count_kernel, 2, 0, {1, 1, 1}, 0},
    {"ping_pong", ping_pong_kernel, 2, 2, {1, 1, 1}, 0},
    {"fail", fail_kernel, 1, 2, {1, 1, 1}, 0},
    {"scratch", scratch_kernel, 2, 1, {1, 1, 1}, 256},
    {"empty", empty_kernel, 0, 0, {1, 1, 1}, 0},
    {"ids", ids_kernel, 1, 0, {1, 1, 1}, 0},
    {"sum_constants",
     sum_constants_kernel,
     1,
     TEST_SUM_CONSTANT_COUNT,
     {1, 1, 1},
     0},
    {"wait", wait_kernel, 1, 0, {1, 1, 1}, 0},
};

static const weft_kernel_library_t kLibrary = {
    WEFT_KERNEL_ABI_VERSION,
    "block_test",
    sizeof(kKernels) / sizeof(kKernels[0]),
    kKernels,
};

static const weft_kernel_library_t* query(uint32_t abi_version) {
  return abi_version == WEFT_KERNEL_ABI_VERSION ? &kLibrary : NULL;
}

// --- Statuses

void assert_ok_impl(weft_status_t status, const char* file, int line) {
  if (!weft_status_is_ok(status)) {
    char text[1024];
    weft_status_format(status, text, sizeof(text));
    weft_status_free(status);
    fail_msg("%s:%d: unexpected error: %s", file, line, text);
  }
}

void assert_status_impl(weft_status_t status, weft_status_code_t code,
                        const char* needle, const char* file, int line) {
  char text[1024];
  weft_status_format(status, text, sizeof(text));
  weft_status_code_t actual = weft_status_code(status);
  weft_status_free(status);
  if (actual != code) {
    fail_msg("%s:%d: expected %s, got: %s", file, line,
             weft_status_code_string(code), text);
  }
  if (needle && !strstr(text, needle)) {
    fail_msg("%s:%d: expected '%s' in: %s", file, line, needle, text);
  }
}

// --- Objects

weft_executable_t* test_executable(void) {
  weft_executable_t* executable = NULL;
  assert_ok(weft_cpu_executable_create(weft_allocator_system(), "test",
                                       weft_executable_source_cpu_static(query),
                                       &executable));
  return executable;
}

weft_buffer_t* test_buffer(weft_device_size_t length) {
  weft_buffer_t* buffer = NULL;
  assert_ok(weft_heap_buffer_allocate(
      weft_allocator_system(), (weft_buffer_params_t){0}, length, &buffer));
  return buffer;
}

void* test_read(weft_buffer_t* buffer, weft_device_size_t offset,
                weft_device_size_t length) {
  void* data = malloc(length ? (size_t)length : 1);
  assert_non_null(data);
  assert_ok(weft_buffer_map_read(buffer, offset, data, length));
  return data;
}

void test_write(weft_buffer_t* buffer, weft_device_size_t offset,
                const void* data, weft_device_size_t length) {
  assert_ok(weft_buffer_map_write(buffer, offset, data, length));
}

// --- Commands

weft_command_t test_barrier(void) {
  weft_command_t command;
  memset(&command, 0, sizeof(command));
  command.type = WEFT_COMMAND_TYPE_BARRIER;
  return command;
}

weft_command_t test_fill(weft_buffer_ref_t target, uint32_t pattern,
                         uint32_t pattern_length) {
  weft_command_t command;
  memset(&command, 0, sizeof(command));
  command.type = WEFT_COMMAND_TYPE_FILL;
  command.fill.target = target;
  memcpy(&command.fill.pattern, &pattern, pattern_length);
  command.fill.pattern_length = pattern_length;
  return command;
}

weft_command_t test_update(weft_buffer_ref_t target, const void* data) {
  weft_command_t command;
  memset(&command, 0, sizeof(command));
  command.type = WEFT_COMMAND_TYPE_UPDATE;
  command.update.target = target;
  command.update.source = (const uint8_t*)data;
  return command;
}

weft_command_t test_copy(weft_buffer_ref_t source, weft_buffer_ref_t target) {
  weft_command_t command;
  memset(&command, 0, sizeof(command));
  command.type = WEFT_COMMAND_TYPE_COPY;
  command.copy.source = source;
  command.copy.target = target;
  return command;
}

weft_command_t test_dispatch(weft_executable_t* executable, uint32_t kernel,
                             uint32_t x, uint32_t y, uint32_t z,
                             uint32_t constant_count, const uint32_t* constants,
                             uint32_t binding_count,
                             const weft_buffer_ref_t* bindings) {
  weft_command_t command;
  memset(&command, 0, sizeof(command));
  command.type = WEFT_COMMAND_TYPE_DISPATCH;
  command.dispatch.executable = executable;
  command.dispatch.kernel_ordinal = kernel;
  command.dispatch.workgroup_count[0] = x;
  command.dispatch.workgroup_count[1] = y;
  command.dispatch.workgroup_count[2] = z;
  command.dispatch.constant_count = constant_count;
  command.dispatch.constants = constants;
  command.dispatch.binding_count = binding_count;
  command.dispatch.bindings = bindings;
  return command;
}

void test_commands_push(test_commands_t* list, weft_command_t command) {
  if (list->count == list->capacity) {
    list->capacity = list->capacity ? list->capacity * 2 : 16;
    list->items = (weft_command_t*)realloc(
        list->items, list->capacity * sizeof(weft_command_t));
    assert_non_null(list->items);
  }
  list->items[list->count++] = command;
}

void test_commands_free(test_commands_t* list) {
  free(list->items);
  memset(list, 0, sizeof(*list));
}

weft_block_recording_t* test_build(
    const test_commands_t* list, const weft_block_builder_options_t* options) {
  weft_block_recording_t* recording = NULL;
  assert_ok(weft_block_recording_build(list->items, list->count, options,
                                       weft_allocator_system(), "test",
                                       &recording));
  return recording;
}

// --- Threads

typedef struct test_worker_t {
  weft_block_processor_context_t* context;
  uint32_t index;
  void* scratch;
  size_t scratch_size;
} test_worker_t;

static int test_worker_main(void* user_data) {
  test_worker_t* worker = (test_worker_t*)user_data;
  for (;;) {
    weft_block_drain_result_t result = weft_block_processor_drain(
        worker->context, worker->index, worker->scratch, worker->scratch_size);
    if (result == WEFT_BLOCK_DRAIN_COMPLETED) break;
    if (result == WEFT_BLOCK_DRAIN_NO_WORK) weft_thread_yield();
  }
  return 0;
}

weft_status_t test_run_threads(weft_block_processor_context_t* context,
                               uint32_t worker_count, size_t scratch_size) {
  test_worker_t* workers =
      (test_worker_t*)calloc(worker_count, sizeof(test_worker_t));
  weft_thread_t** threads =
      (weft_thread_t**)calloc(worker_count, sizeof(weft_thread_t*));
  assert_non_null(workers);
  assert_non_null(threads);
  for (uint32_t i = 0; i < worker_count; ++i) {
    workers[i].context = context;
    workers[i].index = i;
    workers[i].scratch_size = scratch_size;
    workers[i].scratch = scratch_size ? malloc(scratch_size) : NULL;
  }
  for (uint32_t i = 1; i < worker_count; ++i) {
    assert_ok(weft_thread_create(test_worker_main, &workers[i], NULL,
                                 weft_allocator_system(), &threads[i]));
  }
  test_worker_main(&workers[0]);
  for (uint32_t i = 1; i < worker_count; ++i) weft_thread_join(threads[i]);
  assert_true(weft_block_processor_is_completed(context));
  assert_int_equal(weft_block_processor_desired_workers(context), 0);
  for (uint32_t i = 0; i < worker_count; ++i) free(workers[i].scratch);
  free(workers);
  free(threads);
  return weft_block_processor_consume_status(context);
}

weft_status_t test_run(const weft_block_recording_t* recording,
                       weft_binding_table_t table, uint32_t worker_count,
                       weft_block_processor_flags_t flags) {
  weft_block_processor_params_t params;
  memset(&params, 0, sizeof(params));
  params.worker_count = worker_count;
  params.flags = flags;
  weft_block_processor_context_t* context = NULL;
  weft_status_t status = weft_block_processor_context_create(
      recording, table, &params, weft_allocator_system(), &context);
  if (weft_status_is_ok(status)) {
    status = test_run_threads(context, worker_count,
                              recording->max_local_memory_size);
    weft_block_processor_context_free(context);
  }
  return status;
}
