// weft hal module: hal.queue.* (docs/VM.md, "The hal module").
//
// Every queue function takes the device, a wait fence and a signal fence
// first (null fences are empty lists) and maps to one
// weft_device_queue_* call on any queue. Validation errors come back at
// once; an accepted operation reports only through its signal fence.
#include "modules/hal/arguments.h"
#include "modules/hal/module_impl.h"

// The three leading arguments.
typedef struct weft_hal_queue_args_t {
  weft_device_t* device;
  weft_semaphore_list_t wait;
  weft_semaphore_list_t signal;
} weft_hal_queue_args_t;

static weft_hal_queue_args_t weft_hal_queue_args(
    const weft_vm_native_call_t* call) {
  weft_hal_queue_args_t args = {
      (weft_device_t*)call->args[0].ref.object,
      weft_hal_arg_fence_list(call->args[1].ref),
      weft_hal_arg_fence_list(call->args[2].ref),
  };
  return args;
}

static weft_buffer_t* weft_hal_buffer_arg(const weft_vm_native_call_t* call,
                                          uint32_t index) {
  return (weft_buffer_t*)call->args[index].ref.object;
}

// queue.alloca(device, wait, signal, length) -> (buffer)
static weft_status_t weft_hal_queue_alloca(weft_vm_native_call_t* call) {
  static const char kFunction[] = "hal.queue.alloca";
  const weft_hal_queue_args_t q = weft_hal_queue_args(call);
  uint64_t length = 0;
  weft_buffer_t* buffer = NULL;
  weft_status_t status =
      weft_hal_arg_size(kFunction, "length", call->args[3].i64, &length);
  if (weft_status_is_ok(status)) {
    const weft_buffer_params_t params = {0};
    status = weft_device_queue_alloca(q.device, WEFT_QUEUE_AFFINITY_ANY,
                                      q.wait, q.signal, params, length,
                                      &buffer);
  }
  weft_hal_set_result(call, 0, buffer);
  return status;
}

// queue.dealloca(device, wait, signal, buffer) -> ()
static weft_status_t weft_hal_queue_dealloca(weft_vm_native_call_t* call) {
  const weft_hal_queue_args_t q = weft_hal_queue_args(call);
  return weft_device_queue_dealloca(q.device, WEFT_QUEUE_AFFINITY_ANY, q.wait,
                                    q.signal, weft_hal_buffer_arg(call, 3));
}

// queue.fill(device, wait, signal, target, offset, length, pattern,
//            pattern_length) -> ()
static weft_status_t weft_hal_queue_fill(weft_vm_native_call_t* call) {
  static const char kFunction[] = "hal.queue.fill";
  static const weft_hal_size_arg_t kSizes[] = {{4, "offset"}, {5, "length"}};
  const weft_hal_queue_args_t q = weft_hal_queue_args(call);
  uint64_t sizes[2] = {0, 0};
  weft_hal_pattern_t pattern;
  weft_status_t status =
      weft_hal_arg_sizes(kFunction, call->args, kSizes, 2, sizes);
  if (weft_status_is_ok(status)) {
    status = weft_hal_arg_pattern(kFunction, call->args[6].i32,
                                  call->args[7].i32, &pattern);
  }
  if (weft_status_is_ok(status)) {
    status = weft_device_queue_fill(
        q.device, WEFT_QUEUE_AFFINITY_ANY, q.wait, q.signal,
        weft_hal_buffer_arg(call, 3), sizes[0], sizes[1], &pattern,
        (uint32_t)call->args[7].i32);
  }
  return status;
}

// queue.update(device, wait, signal, source, source_offset, target,
//              offset, length) -> ()
static weft_status_t weft_hal_queue_update(weft_vm_native_call_t* call) {
  static const char kFunction[] = "hal.queue.update";
  const weft_hal_queue_args_t q = weft_hal_queue_args(call);
  const uint8_t* source = NULL;
  uint64_t offset = 0;
  weft_status_t status = weft_hal_arg_bytes_range(
      kFunction, "source", call->args[3].ref, call->args[4].i64,
      call->args[7].i64, &source);
  if (weft_status_is_ok(status)) {
    status = weft_hal_arg_size(kFunction, "offset", call->args[6].i64, &offset);
  }
  if (weft_status_is_ok(status)) {
    status = weft_device_queue_update(q.device, WEFT_QUEUE_AFFINITY_ANY,
                                      q.wait, q.signal, source,
                                      weft_hal_buffer_arg(call, 5), offset,
                                      (uint64_t)call->args[7].i64);
  }
  return status;
}

// queue.copy(device, wait, signal, source, source_offset, target,
//            target_offset, length) -> ()
static weft_status_t weft_hal_queue_copy(weft_vm_native_call_t* call) {
  static const char kFunction[] = "hal.queue.copy";
  static const weft_hal_size_arg_t kSizes[] = {
      {4, "source_offset"}, {6, "target_offset"}, {7, "length"}};
  const weft_hal_queue_args_t q = weft_hal_queue_args(call);
  uint64_t sizes[3] = {0, 0, 0};
  weft_status_t status =
      weft_hal_arg_sizes(kFunction, call->args, kSizes, 3, sizes);
  if (weft_status_is_ok(status)) {
    status = weft_device_queue_copy(
        q.device, WEFT_QUEUE_AFFINITY_ANY, q.wait, q.signal,
        weft_hal_buffer_arg(call, 3), sizes[0], weft_hal_buffer_arg(call, 5),
        sizes[1], sizes[2]);
  }
  return status;
}

// queue.read(device, wait, signal, file, file_offset, target, offset,
//            length) -> ()
static weft_status_t weft_hal_queue_read(weft_vm_native_call_t* call) {
  static const char kFunction[] = "hal.queue.read";
  static const weft_hal_size_arg_t kSizes[] = {
      {4, "file_offset"}, {6, "offset"}, {7, "length"}};
  const weft_hal_queue_args_t q = weft_hal_queue_args(call);
  uint64_t sizes[3] = {0, 0, 0};
  weft_status_t status =
      weft_hal_arg_sizes(kFunction, call->args, kSizes, 3, sizes);
  if (weft_status_is_ok(status)) {
    status = weft_device_queue_read(
        q.device, WEFT_QUEUE_AFFINITY_ANY, q.wait, q.signal,
        (weft_file_t*)call->args[3].ref.object, sizes[0],
        weft_hal_buffer_arg(call, 5), sizes[1], sizes[2]);
  }
  return status;
}

// queue.write(device, wait, signal, source, source_offset, file,
//             file_offset, length) -> ()
static weft_status_t weft_hal_queue_write(weft_vm_native_call_t* call) {
  static const char kFunction[] = "hal.queue.write";
  static const weft_hal_size_arg_t kSizes[] = {
      {4, "source_offset"}, {6, "file_offset"}, {7, "length"}};
  const weft_hal_queue_args_t q = weft_hal_queue_args(call);
  uint64_t sizes[3] = {0, 0, 0};
  weft_status_t status =
      weft_hal_arg_sizes(kFunction, call->args, kSizes, 3, sizes);
  if (weft_status_is_ok(status)) {
    status = weft_device_queue_write(
        q.device, WEFT_QUEUE_AFFINITY_ANY, q.wait, q.signal,
        weft_hal_buffer_arg(call, 3), sizes[0],
        (weft_file_t*)call->args[5].ref.object, sizes[1], sizes[2]);
  }
  return status;
}

// queue.dispatch(device, wait, signal, executable, ordinal, x, y, z,
//                constants?, bindings?) -> ()
static weft_status_t weft_hal_queue_dispatch(weft_vm_native_call_t* call) {
  static const char kFunction[] = "hal.queue.dispatch";
  const weft_hal_queue_args_t q = weft_hal_queue_args(call);
  weft_hal_dispatch_args_t d;
  weft_status_t status = weft_hal_arg_dispatch(kFunction, call->args + 3,
                                               false, call->allocator, &d);
  if (weft_status_is_ok(status)) {
    status = weft_device_queue_dispatch(
        q.device, WEFT_QUEUE_AFFINITY_ANY, q.wait, q.signal, d.executable,
        d.ordinal, d.workgroup_count, d.constant_count, d.constants,
        d.binding_count, d.bindings);
  }
  weft_hal_dispatch_args_deinitialize(&d);
  return status;
}

// queue.execute(device, wait, signal, command_buffer, binding_table?) -> ()
static weft_status_t weft_hal_queue_execute(weft_vm_native_call_t* call) {
  static const char kFunction[] = "hal.queue.execute";
  const weft_hal_queue_args_t q = weft_hal_queue_args(call);
  weft_binding_table_t table = weft_binding_table_empty();
  weft_hal_scratch_t scratch;
  weft_hal_scratch_initialize(call->allocator, &scratch);
  weft_status_t status = weft_hal_arg_binding_table(
      kFunction, "binding_table", call->args[4].ref, &scratch, &table);
  if (weft_status_is_ok(status)) {
    status = weft_device_queue_execute(
        q.device, WEFT_QUEUE_AFFINITY_ANY, q.wait, q.signal,
        (weft_command_buffer_t*)call->args[3].ref.object, table);
  }
  weft_hal_scratch_deinitialize(&scratch);
  return status;
}

// queue.barrier(device, wait, signal) -> ()
static weft_status_t weft_hal_queue_barrier(weft_vm_native_call_t* call) {
  const weft_hal_queue_args_t q = weft_hal_queue_args(call);
  return weft_device_queue_barrier(q.device, WEFT_QUEUE_AFFINITY_ANY, q.wait,
                                   q.signal);
}

#define WEFT_HAL_QUEUE_PREFIX "r<hal.device>, r<hal.fence>?, r<hal.fence>?"

static const weft_vm_native_function_t kFunctions[] = {
    {"queue.alloca", "(" WEFT_HAL_QUEUE_PREFIX ", i64) -> (r<hal.buffer>)",
     weft_hal_queue_alloca},
    {"queue.dealloca", "(" WEFT_HAL_QUEUE_PREFIX ", r<hal.buffer>) -> ()",
     weft_hal_queue_dealloca},
    {"queue.fill",
     "(" WEFT_HAL_QUEUE_PREFIX ", r<hal.buffer>, i64, i64, i32, i32) -> ()",
     weft_hal_queue_fill},
    {"queue.update",
     "(" WEFT_HAL_QUEUE_PREFIX
     ", r<bytes>, i64, r<hal.buffer>, i64, i64) -> ()",
     weft_hal_queue_update},
    {"queue.copy",
     "(" WEFT_HAL_QUEUE_PREFIX
     ", r<hal.buffer>, i64, r<hal.buffer>, i64, i64) -> ()",
     weft_hal_queue_copy},
    {"queue.read",
     "(" WEFT_HAL_QUEUE_PREFIX ", r<hal.file>, i64, r<hal.buffer>, i64, i64) "
     "-> ()",
     weft_hal_queue_read},
    {"queue.write",
     "(" WEFT_HAL_QUEUE_PREFIX ", r<hal.buffer>, i64, r<hal.file>, i64, i64) "
     "-> ()",
     weft_hal_queue_write},
    {"queue.dispatch",
     "(" WEFT_HAL_QUEUE_PREFIX
     ", r<hal.executable>, i32, i32, i32, i32, r<list>?, r<list>?) -> ()",
     weft_hal_queue_dispatch},
    {"queue.execute",
     "(" WEFT_HAL_QUEUE_PREFIX ", r<hal.command_buffer>, r<list>?) -> ()",
     weft_hal_queue_execute},
    {"queue.barrier", "(" WEFT_HAL_QUEUE_PREFIX ") -> ()",
     weft_hal_queue_barrier},
};

const weft_hal_function_table_t kWeftHalQueueFunctions = {
    sizeof(kFunctions) / sizeof(kFunctions[0]), kFunctions};
