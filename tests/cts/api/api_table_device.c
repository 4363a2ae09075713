// api_null table: device.h (the device and its queue operations).
#include <stdio.h>
#include <string.h>

#include "api_table.h"
#include "cts.h"

#define BUFFER_LENGTH 256

//===----------------------------------------------------------------------===//
// The device
//===----------------------------------------------------------------------===//

static void device_create(api_call_t* call) {
  weft_device_t* device = NULL;
  api_status(call,
             weft_device_create(
                 api_ptr(call, 0, "device_string", call->device_string),
                 api_allocator(call, 1, "allocator"),
                 api_out(call, 2, "out_device", &device, sizeof(device))));
  api_check_out(call, 2, &device, sizeof(device));
  if (api_ok(call)) weft_device_release(device);
}

// A second device, so that releasing it cannot end the case's own.
static weft_device_t* make_device(api_call_t* call) {
  weft_device_t* device = NULL;
  api_setup(call,
            weft_device_create(call->device_string, call->allocator, &device),
            "weft_device_create");
  return device;
}

static void device_retain(api_call_t* call) {
  weft_device_t* device = make_device(call);
  if (!device) return;
  weft_device_retain(api_ptr(call, 0, "device", device));
  if (!api_is_broken(call, 0)) weft_device_release(device);
  weft_device_release(device);
}

static void device_release(api_call_t* call) {
  weft_device_t* device = make_device(call);
  if (!device) return;
  weft_device_release(api_ptr(call, 0, "device", device));
  if (api_is_broken(call, 0)) weft_device_release(device);
}

static void device_string_query(api_call_t* call, bool id) {
  const weft_device_t* arg = api_ptr(call, 0, "device", call->device);
  const char* text = id ? weft_device_id(arg) : weft_device_driver_name(arg);
  if (call->broken_index < 0 && (!text || !text[0])) {
    api_problem(call, "returned '%s'", text ? text : "(null)");
  }
  api_expect_neutral(call, text && !text[0], "'%s', expected \"\"",
                     text ? text : "(null)");
}

static void device_id(api_call_t* call) { device_string_query(call, true); }

static void device_driver_name(api_call_t* call) {
  device_string_query(call, false);
}

static void device_host_allocator(api_call_t* call) {
  weft_allocator_t allocator =
      weft_device_host_allocator(api_ptr(call, 0, "device", call->device));
  if (call->broken_index < 0 && allocator.self != call->allocator.self) {
    api_problem(call, "not the allocator the device was created with");
  }
  api_expect_neutral(call, !allocator.self && !allocator.ctl,
                     "{%p, %s}, expected {NULL, NULL}", allocator.self,
                     allocator.ctl ? "ctl" : "NULL");
}

static void device_query_i64(api_call_t* call) {
  int64_t value = 0;
  api_status(call, weft_device_query_i64(
                       api_ptr(call, 0, "device", call->device),
                       api_ptr(call, 1, "key", "queue.count"),
                       api_out(call, 2, "out_value", &value, sizeof(value))));
  api_check_out(call, 2, &value, sizeof(value));
  if (call->broken_index < 0 && value < 1) {
    api_problem(call, "queue.count %lld", (long long)value);
  }
}

static void device_create_semaphore(api_call_t* call) {
  api_value(call, 1, "initial_value");
  weft_semaphore_t* semaphore = NULL;
  api_status(call, weft_device_create_semaphore(
                       api_ptr(call, 0, "device", call->device), 0,
                       api_out(call, 2, "out_semaphore", &semaphore,
                               sizeof(semaphore))));
  api_check_out(call, 2, &semaphore, sizeof(semaphore));
  if (api_ok(call)) weft_semaphore_release(semaphore);
}

static void device_create_executable(api_call_t* call) {
  api_value(call, 1, "source");
  weft_executable_t* executable = NULL;
  api_status(
      call,
      weft_device_create_executable(
          api_ptr(call, 0, "device", call->device),
          // The CPU drivers load the kernels' shared object (the dlopen
          // path); other drivers take their own copy of the kernels.
          weft_cts_kernel_source(weft_device_driver_name(call->device))
                      .format == WEFT_EXECUTABLE_FORMAT_CPU_STATIC
              ? weft_executable_source_cpu_shared_object(
                    call->kernel_module_path)
              : weft_cts_kernel_source(weft_device_driver_name(call->device)),
          api_out(call, 2, "out_executable", &executable, sizeof(executable))));
  api_check_out(call, 2, &executable, sizeof(executable));
  if (api_ok(call)) weft_executable_release(executable);
}

static void device_allocate_buffer(api_call_t* call) {
  api_value(call, 1, "params");
  api_value(call, 2, "byte_length");
  weft_buffer_params_t params = {0};
  weft_buffer_t* buffer = NULL;
  api_status(
      call, weft_device_allocate_buffer(
                api_ptr(call, 0, "device", call->device), params, BUFFER_LENGTH,
                api_out(call, 3, "out_buffer", &buffer, sizeof(buffer))));
  api_check_out(call, 3, &buffer, sizeof(buffer));
  if (api_ok(call)) weft_buffer_release(buffer);
}

static void device_dump_pending(api_call_t* call) {
  FILE* stream = fopen("/dev/null", "w");
  if (!stream) {
    api_problem(call, "setup: cannot open /dev/null");
    return;
  }
  weft_device_dump_pending(api_ptr(call, 0, "device", call->device),
                           api_ptr(call, 1, "stream", stream));
  fclose(stream);
}

//===----------------------------------------------------------------------===//
// Queue operations
//===----------------------------------------------------------------------===//
//
// Every one takes (device, affinity, wait_list, signal_list, ...): these
// helpers pass the first four, and api_queue_finish checks that a refused
// operation touched neither semaphore.

static weft_device_t* queue_device(api_call_t* call) {
  api_value(call, 1, "affinity");
  return api_ptr(call, 0, "device", call->device);
}

static void device_queue_alloca(api_call_t* call) {
  api_value(call, 4, "params");
  api_value(call, 5, "byte_length");
  api_queue_t queue;
  if (!api_queue_initialize(call, &queue)) return;
  weft_buffer_params_t params = {0};
  weft_buffer_t* buffer = NULL;
  api_status(call,
             weft_device_queue_alloca(
                 queue_device(call), WEFT_QUEUE_AFFINITY_ANY,
                 api_queue_wait_list(call, &queue, 2),
                 api_queue_signal_list(call, &queue, 3), params, BUFFER_LENGTH,
                 api_out(call, 6, "out_buffer", &buffer, sizeof(buffer))));
  api_check_out(call, 6, &buffer, sizeof(buffer));
  api_queue_finish(call, &queue);
  if (api_ok(call)) weft_buffer_release(buffer);
}

static void device_queue_dealloca(api_call_t* call) {
  weft_buffer_params_t params = {0};
  weft_buffer_t* buffer = NULL;
  if (!api_setup(call,
                 weft_device_queue_alloca(call->device, WEFT_QUEUE_AFFINITY_ANY,
                                          weft_semaphore_list_empty(),
                                          weft_semaphore_list_empty(), params,
                                          BUFFER_LENGTH, &buffer),
                 "weft_device_queue_alloca")) {
    return;
  }
  api_queue_t queue;
  if (api_queue_initialize(call, &queue)) {
    api_status(call, weft_device_queue_dealloca(
                         queue_device(call), WEFT_QUEUE_AFFINITY_ANY,
                         api_queue_wait_list(call, &queue, 2),
                         api_queue_signal_list(call, &queue, 3),
                         api_ptr(call, 4, "buffer", buffer)));
    api_queue_finish(call, &queue);
  }
  weft_buffer_release(buffer);
}

static void device_queue_fill(api_call_t* call) {
  api_value(call, 5, "offset");
  api_value(call, 6, "length");
  api_value(call, 8, "pattern_length");
  weft_buffer_t* target = api_make_buffer(call, BUFFER_LENGTH);
  api_queue_t queue;
  if (target && api_queue_initialize(call, &queue)) {
    uint32_t pattern = 0x01020304u;
    api_status(call,
               weft_device_queue_fill(
                   queue_device(call), WEFT_QUEUE_AFFINITY_ANY,
                   api_queue_wait_list(call, &queue, 2),
                   api_queue_signal_list(call, &queue, 3),
                   api_ptr(call, 4, "target", target), 0, 64,
                   api_ptr(call, 7, "pattern", &pattern), sizeof(pattern)));
    api_queue_finish(call, &queue);
  }
  weft_buffer_release(target);
}

static void device_queue_update(api_call_t* call) {
  api_value(call, 6, "offset");
  api_value(call, 7, "length");
  weft_buffer_t* target = api_make_buffer(call, BUFFER_LENGTH);
  api_queue_t queue;
  if (target && api_queue_initialize(call, &queue)) {
    uint8_t source[64] = {1, 2, 3};
    api_status(call,
               weft_device_queue_update(
                   queue_device(call), WEFT_QUEUE_AFFINITY_ANY,
                   api_queue_wait_list(call, &queue, 2),
                   api_queue_signal_list(call, &queue, 3),
                   api_ptr(call, 4, "source", source),
                   api_ptr(call, 5, "target", target), 0, sizeof(source)));
    api_queue_finish(call, &queue);
  }
  weft_buffer_release(target);
}

static void device_queue_copy(api_call_t* call) {
  api_value(call, 5, "source_offset");
  api_value(call, 7, "target_offset");
  api_value(call, 8, "length");
  weft_buffer_t* source = api_make_buffer(call, BUFFER_LENGTH);
  weft_buffer_t* target = api_make_buffer(call, BUFFER_LENGTH);
  api_queue_t queue;
  if (source && target && api_queue_initialize(call, &queue)) {
    api_status(call, weft_device_queue_copy(
                         queue_device(call), WEFT_QUEUE_AFFINITY_ANY,
                         api_queue_wait_list(call, &queue, 2),
                         api_queue_signal_list(call, &queue, 3),
                         api_ptr(call, 4, "source", source), 0,
                         api_ptr(call, 6, "target", target), 0, 64));
    api_queue_finish(call, &queue);
  }
  weft_buffer_release(source);
  weft_buffer_release(target);
}

static void device_queue_read(api_call_t* call) {
  api_value(call, 5, "file_offset");
  api_value(call, 7, "target_offset");
  api_value(call, 8, "length");
  uint8_t contents[BUFFER_LENGTH] = {1, 2, 3};
  weft_file_t* file = api_make_memory_file(call, contents, sizeof(contents));
  weft_buffer_t* target = api_make_buffer(call, BUFFER_LENGTH);
  api_queue_t queue;
  if (file && target && api_queue_initialize(call, &queue)) {
    api_status(call, weft_device_queue_read(
                         queue_device(call), WEFT_QUEUE_AFFINITY_ANY,
                         api_queue_wait_list(call, &queue, 2),
                         api_queue_signal_list(call, &queue, 3),
                         api_ptr(call, 4, "file", file), 0,
                         api_ptr(call, 6, "target", target), 0, 64));
    api_queue_finish(call, &queue);
  }
  weft_buffer_release(target);
  weft_file_release(file);
}

static void device_queue_write(api_call_t* call) {
  api_value(call, 5, "source_offset");
  api_value(call, 7, "file_offset");
  api_value(call, 8, "length");
  uint8_t contents[BUFFER_LENGTH];
  memset(contents, 0, sizeof(contents));
  weft_file_t* file = api_make_memory_file(call, contents, sizeof(contents));
  weft_buffer_t* source = api_make_buffer(call, BUFFER_LENGTH);
  api_queue_t queue;
  if (file && source && api_queue_initialize(call, &queue)) {
    api_status(call, weft_device_queue_write(
                         queue_device(call), WEFT_QUEUE_AFFINITY_ANY,
                         api_queue_wait_list(call, &queue, 2),
                         api_queue_signal_list(call, &queue, 3),
                         api_ptr(call, 4, "source", source), 0,
                         api_ptr(call, 6, "file", file), 0, 64));
    api_queue_finish(call, &queue);
  }
  weft_buffer_release(source);
  weft_file_release(file);
}

static void device_queue_dispatch(api_call_t* call) {
  api_value(call, 5, "kernel_ordinal");
  api_value(call, 7, "constant_count");
  api_value(call, 9, "binding_count");
  weft_buffer_t* in = api_make_buffer(call, BUFFER_LENGTH);
  weft_buffer_t* out = api_make_buffer(call, BUFFER_LENGTH);
  weft_executable_t* kernels = api_kernels(call);
  uint32_t ordinal = 0;
  api_queue_t queue;
  if (in && out && kernels &&
      api_setup(call,
                weft_executable_lookup_kernel(kernels, "scale_offset",
                                              &ordinal),
                "weft_executable_lookup_kernel") &&
      api_queue_initialize(call, &queue)) {
    const uint32_t workgroup_count[3] = {1, 1, 1};
    const uint32_t constants[3] = {0x3f800000u, 0, 64};  // 1.0f, 0.0f, 64
    const weft_buffer_ref_t bindings[2] = {
        weft_make_buffer_ref(in, 0, BUFFER_LENGTH),
        weft_make_buffer_ref(out, 0, BUFFER_LENGTH),
    };
    api_status(call, weft_device_queue_dispatch(
                         queue_device(call), WEFT_QUEUE_AFFINITY_ANY,
                         api_queue_wait_list(call, &queue, 2),
                         api_queue_signal_list(call, &queue, 3),
                         api_ptr(call, 4, "executable", kernels), ordinal,
                         api_ptr(call, 6, "workgroup_count", workgroup_count),
                         3, api_ptr(call, 8, "constants", constants), 2,
                         api_ptr(call, 10, "bindings", bindings)));
    api_queue_finish(call, &queue);
  }
  weft_buffer_release(in);
  weft_buffer_release(out);
}

// A reusable command buffer filling binding-table slot 0, recorded.
static weft_command_buffer_t* make_indirect_command_buffer(api_call_t* call) {
  weft_command_buffer_t* command_buffer = NULL;
  if (!api_setup(call,
                 weft_command_buffer_create(
                     call->device, WEFT_COMMAND_BUFFER_MODE_REUSABLE,
                     WEFT_COMMAND_CATEGORY_ANY, 1, &command_buffer),
                 "weft_command_buffer_create")) {
    return NULL;
  }
  uint32_t pattern = 9;
  bool ok =
      api_setup(call, weft_command_buffer_begin(command_buffer),
                "weft_command_buffer_begin") &&
      api_setup(call,
                weft_command_buffer_fill(
                    command_buffer, weft_make_indirect_buffer_ref(0, 0, 64),
                    &pattern, sizeof(pattern)),
                "weft_command_buffer_fill") &&
      api_setup(call, weft_command_buffer_end(command_buffer),
                "weft_command_buffer_end");
  if (!ok) {
    weft_command_buffer_release(command_buffer);
    command_buffer = NULL;
  }
  return command_buffer;
}

static void device_queue_execute(api_call_t* call) {
  weft_buffer_t* buffer = api_make_buffer(call, BUFFER_LENGTH);
  weft_command_buffer_t* command_buffer =
      buffer ? make_indirect_command_buffer(call) : NULL;
  api_queue_t queue;
  if (command_buffer && api_queue_initialize(call, &queue)) {
    const weft_buffer_binding_t bindings[1] = {{buffer, 0, BUFFER_LENGTH}};
    weft_binding_table_t table = {1, bindings};
    api_status(call, weft_device_queue_execute(
                         queue_device(call), WEFT_QUEUE_AFFINITY_ANY,
                         api_queue_wait_list(call, &queue, 2),
                         api_queue_signal_list(call, &queue, 3),
                         api_ptr(call, 4, "command_buffer", command_buffer),
                         api_bindings(call, 5, "binding_table", table)));
    api_queue_finish(call, &queue);
  }
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(buffer);
}

static void device_queue_barrier(api_call_t* call) {
  api_queue_t queue;
  if (!api_queue_initialize(call, &queue)) return;
  api_status(call, weft_device_queue_barrier(
                       queue_device(call), WEFT_QUEUE_AFFINITY_ANY,
                       api_queue_wait_list(call, &queue, 2),
                       api_queue_signal_list(call, &queue, 3)));
  api_queue_finish(call, &queue);
}

static weft_status_t count_host_call(void* user_data, const uint64_t args[4],
                                     const weft_host_call_context_t* context) {
  // Ordered before the signal the caller waits on.
  if (user_data) ++*(int*)user_data;
  return WEFT_OK;
}

static void device_queue_host_call(api_call_t* call) {
  api_value(call, 7, "flags");
  api_queue_t queue;
  if (!api_queue_initialize(call, &queue)) return;
  int call_count = 0;
  const uint64_t args[4] = {1, 2, 3, 4};
  api_status(call,
             weft_device_queue_host_call(
                 queue_device(call), WEFT_QUEUE_AFFINITY_ANY,
                 api_queue_wait_list(call, &queue, 2),
                 api_queue_signal_list(call, &queue, 3),
                 api_fn_present(call, 4, "fn") ? count_host_call : NULL,
                 api_ptr(call, 5, "user_data", &call_count),
                 api_ptr(call, 6, "args", args), WEFT_HOST_CALL_FLAG_NONE));
  api_queue_finish(call, &queue);
  bool accepted = api_ok(call);
  int expected = accepted && !api_is_broken(call, 5) ? 1 : 0;
  if (call_count != expected) {
    api_problem(call, "the host function ran %d times, expected %d", call_count,
                expected);
  }
}

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

const api_entry_t api_table_device[] = {
    {"weft_device_create", device_create, WEFT_STATUS_OK},
    {"weft_device_retain", device_retain, WEFT_STATUS_OK},
    {"weft_device_release", device_release, WEFT_STATUS_OK},
    {"weft_device_id", device_id, WEFT_STATUS_OK},
    {"weft_device_driver_name", device_driver_name, WEFT_STATUS_OK},
    {"weft_device_host_allocator", device_host_allocator, WEFT_STATUS_OK},
    {"weft_device_query_i64", device_query_i64, WEFT_STATUS_OK},
    {"weft_device_create_semaphore", device_create_semaphore, WEFT_STATUS_OK},
    {"weft_device_create_executable", device_create_executable, WEFT_STATUS_OK},
    {"weft_device_allocate_buffer", device_allocate_buffer, WEFT_STATUS_OK},
    {"weft_device_dump_pending", device_dump_pending, WEFT_STATUS_OK},
    {"weft_device_queue_alloca", device_queue_alloca, WEFT_STATUS_OK},
    {"weft_device_queue_dealloca", device_queue_dealloca, WEFT_STATUS_OK},
    {"weft_device_queue_fill", device_queue_fill, WEFT_STATUS_OK},
    {"weft_device_queue_update", device_queue_update, WEFT_STATUS_OK},
    {"weft_device_queue_copy", device_queue_copy, WEFT_STATUS_OK},
    {"weft_device_queue_read", device_queue_read, WEFT_STATUS_OK},
    {"weft_device_queue_write", device_queue_write, WEFT_STATUS_OK},
    {"weft_device_queue_dispatch", device_queue_dispatch, WEFT_STATUS_OK},
    {"weft_device_queue_execute", device_queue_execute, WEFT_STATUS_OK},
    {"weft_device_queue_barrier", device_queue_barrier, WEFT_STATUS_OK},
    {"weft_device_queue_host_call", device_queue_host_call, WEFT_STATUS_OK},
};
const size_t api_table_device_count =
    sizeof(api_table_device) / sizeof(api_table_device[0]);
