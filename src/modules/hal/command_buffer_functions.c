// weft hal module: hal.command_buffer.* (docs/VM.md, "The hal module").
//
// Recording functions name a buffer directly or, with a null buffer, a
// binding table slot resolved when hal.queue.execute runs the command
// buffer.
#include "modules/hal/arguments.h"
#include "modules/hal/module_impl.h"

static weft_command_buffer_t* weft_hal_command_buffer_arg(
    const weft_vm_native_call_t* call) {
  return (weft_command_buffer_t*)call->args[0].ref.object;
}

// command_buffer.create(device, mode, binding_capacity) ->
// (command_buffer): |mode| 1 one-shot, 2 reusable; every category.
static weft_status_t weft_hal_command_buffer_create(
    weft_vm_native_call_t* call) {
  static const char kFunction[] = "hal.command_buffer.create";
  uint32_t binding_capacity = 0;
  weft_command_buffer_t* command_buffer = NULL;
  weft_status_t status = weft_hal_arg_u32(kFunction, "binding_capacity",
                                          call->args[2].i32, &binding_capacity);
  if (weft_status_is_ok(status)) {
    status = weft_command_buffer_create(
        (weft_device_t*)call->args[0].ref.object,
        (weft_command_buffer_mode_t)call->args[1].i32,
        WEFT_COMMAND_CATEGORY_ANY, binding_capacity, &command_buffer);
  }
  weft_hal_set_result(call, 0, command_buffer);
  return status;
}

// command_buffer.begin(command_buffer) -> ()
static weft_status_t weft_hal_command_buffer_begin(
    weft_vm_native_call_t* call) {
  return weft_command_buffer_begin(weft_hal_command_buffer_arg(call));
}

// command_buffer.end(command_buffer) -> ()
static weft_status_t weft_hal_command_buffer_end(weft_vm_native_call_t* call) {
  return weft_command_buffer_end(weft_hal_command_buffer_arg(call));
}

// command_buffer.barrier(command_buffer) -> ()
static weft_status_t weft_hal_command_buffer_barrier(
    weft_vm_native_call_t* call) {
  return weft_command_buffer_barrier(weft_hal_command_buffer_arg(call));
}

// command_buffer.fill(command_buffer, target?, target_slot, offset,
//                     length, pattern, pattern_length) -> ()
static weft_status_t weft_hal_command_buffer_fill(weft_vm_native_call_t* call) {
  static const char kFunction[] = "hal.command_buffer.fill";
  static const weft_hal_size_arg_t kSizes[] = {{3, "offset"}, {4, "length"}};
  uint64_t sizes[2] = {0, 0};
  weft_hal_pattern_t pattern;
  weft_buffer_ref_t target;
  weft_status_t status =
      weft_hal_arg_sizes(kFunction, call->args, kSizes, 2, sizes);
  if (weft_status_is_ok(status)) {
    status = weft_hal_arg_recorded_buffer(kFunction, "target_slot",
                                          call->args[1].ref, call->args[2].i32,
                                          sizes[0], sizes[1], &target);
  }
  if (weft_status_is_ok(status)) {
    status = weft_hal_arg_pattern(kFunction, call->args[5].i32,
                                  call->args[6].i32, &pattern);
  }
  if (weft_status_is_ok(status)) {
    status = weft_command_buffer_fill(weft_hal_command_buffer_arg(call),
                                      target, &pattern,
                                      (uint32_t)call->args[6].i32);
  }
  return status;
}

// command_buffer.update(command_buffer, source, source_offset, target?,
//                       target_slot, offset, length) -> ()
static weft_status_t weft_hal_command_buffer_update(
    weft_vm_native_call_t* call) {
  static const char kFunction[] = "hal.command_buffer.update";
  const uint8_t* source = NULL;
  uint64_t offset = 0;
  weft_buffer_ref_t target;
  weft_status_t status = weft_hal_arg_bytes_range(
      kFunction, "source", call->args[1].ref, call->args[2].i64,
      call->args[6].i64, &source);
  if (weft_status_is_ok(status)) {
    status = weft_hal_arg_size(kFunction, "offset", call->args[5].i64, &offset);
  }
  if (weft_status_is_ok(status)) {
    status = weft_hal_arg_recorded_buffer(
        kFunction, "target_slot", call->args[3].ref, call->args[4].i32, offset,
        (uint64_t)call->args[6].i64, &target);
  }
  if (weft_status_is_ok(status)) {
    status = weft_command_buffer_update(weft_hal_command_buffer_arg(call),
                                        source, target);
  }
  return status;
}

// command_buffer.copy(command_buffer, source?, source_slot, source_offset,
//                     target?, target_slot, target_offset, length) -> ()
static weft_status_t weft_hal_command_buffer_copy(weft_vm_native_call_t* call) {
  static const char kFunction[] = "hal.command_buffer.copy";
  static const weft_hal_size_arg_t kSizes[] = {
      {3, "source_offset"}, {6, "target_offset"}, {7, "length"}};
  uint64_t sizes[3] = {0, 0, 0};
  weft_buffer_ref_t source;
  weft_buffer_ref_t target;
  weft_status_t status =
      weft_hal_arg_sizes(kFunction, call->args, kSizes, 3, sizes);
  if (weft_status_is_ok(status)) {
    status = weft_hal_arg_recorded_buffer(kFunction, "source_slot",
                                          call->args[1].ref, call->args[2].i32,
                                          sizes[0], sizes[2], &source);
  }
  if (weft_status_is_ok(status)) {
    status = weft_hal_arg_recorded_buffer(kFunction, "target_slot",
                                          call->args[4].ref, call->args[5].i32,
                                          sizes[1], sizes[2], &target);
  }
  if (weft_status_is_ok(status)) {
    status = weft_command_buffer_copy(weft_hal_command_buffer_arg(call),
                                      source, target);
  }
  return status;
}

// command_buffer.dispatch(command_buffer, executable, ordinal, x, y, z,
//                         constants?, bindings?) -> (): bindings may hold
// i32 binding table slots.
static weft_status_t weft_hal_command_buffer_dispatch(
    weft_vm_native_call_t* call) {
  static const char kFunction[] = "hal.command_buffer.dispatch";
  weft_hal_dispatch_args_t d;
  weft_status_t status = weft_hal_arg_dispatch(kFunction, call->args + 1,
                                               true, call->allocator, &d);
  if (weft_status_is_ok(status)) {
    status = weft_command_buffer_dispatch(
        weft_hal_command_buffer_arg(call), d.executable, d.ordinal,
        d.workgroup_count, d.constant_count, d.constants, d.binding_count,
        d.bindings);
  }
  weft_hal_dispatch_args_deinitialize(&d);
  return status;
}

#define WEFT_HAL_CB "r<hal.command_buffer>"

static const weft_vm_native_function_t kFunctions[] = {
    {"command_buffer.create", "(r<hal.device>, i32, i32) -> (" WEFT_HAL_CB ")",
     weft_hal_command_buffer_create},
    {"command_buffer.begin", "(" WEFT_HAL_CB ") -> ()",
     weft_hal_command_buffer_begin},
    {"command_buffer.end", "(" WEFT_HAL_CB ") -> ()",
     weft_hal_command_buffer_end},
    {"command_buffer.barrier", "(" WEFT_HAL_CB ") -> ()",
     weft_hal_command_buffer_barrier},
    {"command_buffer.fill",
     "(" WEFT_HAL_CB ", r<hal.buffer>?, i32, i64, i64, i32, i32) -> ()",
     weft_hal_command_buffer_fill},
    {"command_buffer.update",
     "(" WEFT_HAL_CB ", r<bytes>, i64, r<hal.buffer>?, i32, i64, i64) -> ()",
     weft_hal_command_buffer_update},
    {"command_buffer.copy",
     "(" WEFT_HAL_CB
     ", r<hal.buffer>?, i32, i64, r<hal.buffer>?, i32, i64, i64) -> ()",
     weft_hal_command_buffer_copy},
    {"command_buffer.dispatch",
     "(" WEFT_HAL_CB
     ", r<hal.executable>, i32, i32, i32, i32, r<list>?, r<list>?) -> ()",
     weft_hal_command_buffer_dispatch},
};

const weft_hal_function_table_t kWeftHalCommandBufferFunctions = {
    sizeof(kFunctions) / sizeof(kFunctions[0]), kFunctions};
