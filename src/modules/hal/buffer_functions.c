// weft hal module: hal.buffer.* and hal.buffer_view.* (docs/VM.md, "The
// hal module").
#include <inttypes.h>

#include "modules/hal/arguments.h"
#include "modules/hal/buffer_view.h"
#include "modules/hal/module_impl.h"

// buffer.allocate(device, length) -> (buffer): default parameters (device
// local, host visible and coherent; every access and usage).
static weft_status_t weft_hal_buffer_allocate(weft_vm_native_call_t* call) {
  static const char kFunction[] = "hal.buffer.allocate";
  uint64_t length = 0;
  weft_buffer_t* buffer = NULL;
  weft_status_t status =
      weft_hal_arg_size(kFunction, "length", call->args[1].i64, &length);
  if (weft_status_is_ok(status)) {
    const weft_buffer_params_t params = {0};
    status = weft_device_allocate_buffer(
        (weft_device_t*)call->args[0].ref.object, params, length, &buffer);
  }
  weft_hal_set_result(call, 0, buffer);
  return status;
}

// buffer.length(buffer) -> (length)
static weft_status_t weft_hal_buffer_length(weft_vm_native_call_t* call) {
  call->results[0].i64 = (int64_t)weft_buffer_byte_length(
      (const weft_buffer_t*)call->args[0].ref.object);
  return WEFT_OK;
}

// buffer.subspan(buffer, offset, length) -> (buffer)
static weft_status_t weft_hal_buffer_subspan(weft_vm_native_call_t* call) {
  static const char kFunction[] = "hal.buffer.subspan";
  static const weft_hal_size_arg_t kSizes[] = {{1, "offset"}, {2, "length"}};
  uint64_t sizes[2] = {0, 0};
  weft_buffer_t* subspan = NULL;
  weft_status_t status =
      weft_hal_arg_sizes(kFunction, call->args, kSizes, 2, sizes);
  if (weft_status_is_ok(status)) {
    status = weft_buffer_subspan((weft_buffer_t*)call->args[0].ref.object,
                                 sizes[0], sizes[1],
                                 weft_hal_state(call)->allocator, &subspan);
  }
  weft_hal_set_result(call, 0, subspan);
  return status;
}

// buffer_view.create(buffer, byte_offset, element_type, shape) ->
// (buffer_view): |shape| a list of i64 dimensions.
static weft_status_t weft_hal_buffer_view_create_fn(
    weft_vm_native_call_t* call) {
  static const char kFunction[] = "hal.buffer_view.create";
  const weft_vm_list_t* shape_list =
      (const weft_vm_list_t*)call->args[3].ref.object;
  int64_t shape[WEFT_HAL_BUFFER_VIEW_MAX_RANK];
  weft_status_t status = WEFT_OK;
  if (shape_list->size > WEFT_HAL_BUFFER_VIEW_MAX_RANK) {
    status = weft_hal_argument_error(kFunction, "shape",
                                     "has rank %" PRIu32
                                     ", past the limit of %d",
                                     shape_list->size,
                                     WEFT_HAL_BUFFER_VIEW_MAX_RANK);
  }
  for (uint32_t i = 0; weft_status_is_ok(status) && i < shape_list->size;
       ++i) {
    const weft_vm_value_t* value = &shape_list->values[i];
    if (value->type != WEFT_VM_TYPE_I64) {
      char what[96];
      weft_hal_describe_value(value, what, sizeof(what));
      status = weft_hal_argument_error(
          kFunction, "shape", "element %" PRIu32 " is %s, not an i64", i, what);
    } else {
      shape[i] = value->i64;
    }
  }
  weft_hal_buffer_view_t* view = NULL;
  if (weft_status_is_ok(status)) {
    status = weft_hal_buffer_view_create_as(
        kFunction, (weft_buffer_t*)call->args[0].ref.object, call->args[1].i64,
        call->args[2].i32, shape_list->size, shape,
        weft_hal_state(call)->allocator, &view);
  }
  call->results[0].ref = weft_hal_module_wrap_buffer_view(view);
  return status;
}

static const weft_hal_buffer_view_t* weft_hal_view_arg(
    const weft_vm_native_call_t* call) {
  return (const weft_hal_buffer_view_t*)call->args[0].ref.object;
}

// buffer_view.buffer(buffer_view) -> (buffer)
static weft_status_t weft_hal_buffer_view_buffer_fn(
    weft_vm_native_call_t* call) {
  weft_buffer_t* buffer = weft_hal_buffer_view_buffer(weft_hal_view_arg(call));
  weft_buffer_retain(buffer);
  weft_hal_set_result(call, 0, buffer);
  return WEFT_OK;
}

// buffer_view.byte_offset(buffer_view) -> (i64)
static weft_status_t weft_hal_buffer_view_byte_offset_fn(
    weft_vm_native_call_t* call) {
  call->results[0].i64 =
      (int64_t)weft_hal_buffer_view_byte_offset(weft_hal_view_arg(call));
  return WEFT_OK;
}

// buffer_view.byte_length(buffer_view) -> (i64)
static weft_status_t weft_hal_buffer_view_byte_length_fn(
    weft_vm_native_call_t* call) {
  call->results[0].i64 =
      (int64_t)weft_hal_buffer_view_byte_length(weft_hal_view_arg(call));
  return WEFT_OK;
}

// buffer_view.element_type(buffer_view) -> (i32)
static weft_status_t weft_hal_buffer_view_element_type_fn(
    weft_vm_native_call_t* call) {
  call->results[0].i32 =
      (int32_t)weft_hal_buffer_view_element_type(weft_hal_view_arg(call));
  return WEFT_OK;
}

// buffer_view.rank(buffer_view) -> (i32)
static weft_status_t weft_hal_buffer_view_rank_fn(weft_vm_native_call_t* call) {
  call->results[0].i32 =
      (int32_t)weft_hal_buffer_view_rank(weft_hal_view_arg(call));
  return WEFT_OK;
}

// buffer_view.dim(buffer_view, index) -> (i64)
static weft_status_t weft_hal_buffer_view_dim_fn(weft_vm_native_call_t* call) {
  static const char kFunction[] = "hal.buffer_view.dim";
  const weft_hal_buffer_view_t* view = weft_hal_view_arg(call);
  const int32_t index = call->args[1].i32;
  const uint32_t rank = weft_hal_buffer_view_rank(view);
  if (index < 0 || (uint32_t)index >= rank) {
    return weft_hal_argument_error(kFunction, "index",
                                   "is %" PRId32 "; the view has rank %" PRIu32,
                                   index, rank);
  }
  call->results[0].i64 = weft_hal_buffer_view_dim(view, (uint32_t)index);
  return WEFT_OK;
}

// buffer_view.assert(buffer_view, name, element_type, shape) -> (): fails
// unless |buffer_view| has |element_type| and |shape| (a list of i64
// dimensions, -1 for any size), the message naming the value by the
// caller's |name| and saying what is wrong.
static weft_status_t weft_hal_buffer_view_assert_fn(
    weft_vm_native_call_t* call) {
  static const char kFunction[] = "hal.buffer_view.assert";
  const int32_t element_type = call->args[2].i32;
  const weft_vm_list_t* shape_list =
      (const weft_vm_list_t*)call->args[3].ref.object;
  weft_status_t status = WEFT_OK;
  if (!weft_hal_element_type_is_valid(element_type)) {
    status = weft_hal_argument_error(kFunction, "element_type",
                                     "is %" PRId32 ", not an element type",
                                     element_type);
  } else if (shape_list->size > WEFT_VM_TENSOR_MAX_RANK) {
    status = weft_hal_argument_error(kFunction, "shape",
                                     "has rank %" PRIu32
                                     ", past the limit of %d",
                                     shape_list->size, WEFT_VM_TENSOR_MAX_RANK);
  }
  weft_vm_tensor_type_t type;
  memset(&type, 0, sizeof(type));
  type.element_type = (weft_vm_element_type_t)element_type;
  type.rank = shape_list->size;
  for (uint32_t i = 0; weft_status_is_ok(status) && i < shape_list->size;
       ++i) {
    const weft_vm_value_t* value = &shape_list->values[i];
    if (value->type != WEFT_VM_TYPE_I64) {
      char what[96];
      weft_hal_describe_value(value, what, sizeof(what));
      status = weft_hal_argument_error(
          kFunction, "shape", "element %" PRIu32 " is %s, not an i64", i,
          what);
    } else if (value->i64 < -1) {
      status = weft_hal_argument_error(
          kFunction, "shape",
          "element %" PRIu32 " is %" PRId64 ", not a size or -1 (any size)",
          i, value->i64);
    } else if (value->i64 == -1) {
      type.dims[i].kind = WEFT_VM_DIM_DYNAMIC;
    } else {
      type.dims[i].kind = WEFT_VM_DIM_STATIC;
      type.dims[i].size = value->i64;
    }
  }
  weft_hal_string_t name;
  if (weft_status_is_ok(status)) {
    status = weft_hal_arg_string(kFunction, "name", call->args[1].ref,
                                 call->allocator, &name);
    if (weft_status_is_ok(status)) {
      char what[192];
      snprintf(what, sizeof(what), "%s: '%s'", kFunction, name.text);
      status = weft_hal_check_view(what, &type, &call->args[0]);
    }
    weft_hal_string_deinitialize(&name);
  }
  return status;
}

static const weft_vm_native_function_t kFunctions[] = {
    {"buffer.allocate", "(r<hal.device>, i64) -> (r<hal.buffer>)",
     weft_hal_buffer_allocate},
    {"buffer.length", "(r<hal.buffer>) -> (i64)", weft_hal_buffer_length},
    {"buffer.subspan", "(r<hal.buffer>, i64, i64) -> (r<hal.buffer>)",
     weft_hal_buffer_subspan},
    {"buffer_view.create",
     "(r<hal.buffer>, i64, i32, r<list>) -> (r<hal.buffer_view>)",
     weft_hal_buffer_view_create_fn},
    {"buffer_view.buffer", "(r<hal.buffer_view>) -> (r<hal.buffer>)",
     weft_hal_buffer_view_buffer_fn},
    {"buffer_view.byte_offset", "(r<hal.buffer_view>) -> (i64)",
     weft_hal_buffer_view_byte_offset_fn},
    {"buffer_view.byte_length", "(r<hal.buffer_view>) -> (i64)",
     weft_hal_buffer_view_byte_length_fn},
    {"buffer_view.element_type", "(r<hal.buffer_view>) -> (i32)",
     weft_hal_buffer_view_element_type_fn},
    {"buffer_view.rank", "(r<hal.buffer_view>) -> (i32)",
     weft_hal_buffer_view_rank_fn},
    {"buffer_view.dim", "(r<hal.buffer_view>, i32) -> (i64)",
     weft_hal_buffer_view_dim_fn},
    {"buffer_view.assert",
     "(r<hal.buffer_view>?, r<bytes>, i32, r<list>) -> ()",
     weft_hal_buffer_view_assert_fn},
};

const weft_hal_function_table_t kWeftHalBufferFunctions = {
    sizeof(kFunctions) / sizeof(kFunctions[0]), kFunctions};
