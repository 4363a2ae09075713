// weft hal module: reading arguments (see arguments.h).
#include "modules/hal/arguments.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "modules/hal/ref_types.h"
#include "weft/fence.h"

// "<function>: argument '<argument>' <details>" with |code|.
#if defined(__GNUC__)
__attribute__((format(printf, 4, 0)))
#endif
static weft_status_t weft_hal_argument_status_v(weft_status_code_t code,
                                                const char* function,
                                                const char* argument,
                                                const char* format,
                                                va_list args) {
  char details[512];
  vsnprintf(details, sizeof(details), format, args);
  return weft_status_make_(__FILE__, __LINE__, code, "%s: argument '%s' %s",
                           function, argument, details);
}

weft_status_t weft_hal_argument_error(const char* function,
                                      const char* argument, const char* format,
                                      ...) {
  va_list args;
  va_start(args, format);
  weft_status_t status = weft_hal_argument_status_v(
      WEFT_STATUS_INVALID_ARGUMENT, function, argument, format, args);
  va_end(args);
  return status;
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static weft_status_t weft_hal_out_of_range(const char* function,
                                           const char* argument,
                                           const char* format, ...) {
  va_list args;
  va_start(args, format);
  weft_status_t status = weft_hal_argument_status_v(
      WEFT_STATUS_OUT_OF_RANGE, function, argument, format, args);
  va_end(args);
  return status;
}

weft_status_t weft_hal_arg_size(const char* function, const char* argument,
                                int64_t value, uint64_t* out_value) {
  *out_value = 0;
  if (value < 0) {
    return weft_hal_argument_error(function, argument,
                                   "is %" PRId64 "; must be >= 0", value);
  }
  *out_value = (uint64_t)value;
  return WEFT_OK;
}

weft_status_t weft_hal_arg_sizes(const char* function,
                                 const weft_vm_value_t* args,
                                 const weft_hal_size_arg_t* specs,
                                 uint32_t count, uint64_t* out_sizes) {
  weft_status_t status = WEFT_OK;
  for (uint32_t i = 0; weft_status_is_ok(status) && i < count; ++i) {
    status = weft_hal_arg_size(function, specs[i].name,
                               args[specs[i].index].i64, &out_sizes[i]);
  }
  return status;
}

weft_status_t weft_hal_arg_u32(const char* function, const char* argument,
                               int32_t value, uint32_t* out_value) {
  *out_value = 0;
  if (value < 0) {
    return weft_hal_argument_error(function, argument,
                                   "is %" PRId32 "; must be >= 0", value);
  }
  *out_value = (uint32_t)value;
  return WEFT_OK;
}

weft_status_t weft_hal_arg_failure_code(const char* function, int32_t code) {
  if (code <= WEFT_STATUS_OK || code >= WEFT_STATUS_CODE_COUNT_ ||
      code == WEFT_STATUS_DEFERRED) {
    return weft_hal_argument_error(function, "code",
                                   "is %" PRId32
                                   ", not a failure code (1 CANCELLED ... 16 "
                                   "UNAUTHENTICATED)",
                                   code);
  }
  return WEFT_OK;
}

weft_status_t weft_hal_program_failure(const char* function, int32_t code) {
  return weft_status_make_(__FILE__, __LINE__, (weft_status_code_t)code,
                           "failed by the program (%s)", function);
}

weft_semaphore_list_t weft_hal_arg_fence_list(weft_vm_ref_t fence) {
  return fence.object ? weft_fence_as_list((weft_fence_t*)fence.object)
                      : weft_semaphore_list_empty();
}

weft_status_t weft_hal_arg_string(const char* function, const char* argument,
                                  weft_vm_ref_t bytes,
                                  weft_allocator_t allocator,
                                  weft_hal_string_t* out_string) {
  out_string->text = out_string->inline_text;
  out_string->inline_text[0] = '\0';
  out_string->allocator = allocator;
  const weft_vm_bytes_t* source = (const weft_vm_bytes_t*)bytes.object;
  if (memchr(source->data, '\0', source->length)) {
    return weft_hal_argument_error(function, argument,
                                   "holds a NUL byte; it must be a string");
  }
  weft_status_t status = WEFT_OK;
  if (source->length >= sizeof(out_string->inline_text)) {
    status = weft_allocator_malloc(allocator, source->length + 1,
                                   (void**)&out_string->text);
  }
  if (weft_status_is_ok(status)) {
    memcpy(out_string->text, source->data, source->length);
    out_string->text[source->length] = '\0';
  } else {
    out_string->text = out_string->inline_text;
  }
  return status;
}

void weft_hal_string_deinitialize(weft_hal_string_t* string) {
  if (string->text != string->inline_text) {
    weft_allocator_free(string->allocator, string->text);
  }
  string->text = string->inline_text;
}

weft_status_t weft_hal_arg_bytes_range(const char* function,
                                       const char* argument,
                                       weft_vm_ref_t bytes, int64_t offset,
                                       int64_t length,
                                       const uint8_t** out_data) {
  *out_data = NULL;
  const weft_vm_bytes_t* source = (const weft_vm_bytes_t*)bytes.object;
  if (offset < 0 || length < 0) {
    return weft_hal_argument_error(function, argument,
                                   "range offset %" PRId64 " length %" PRId64
                                   " is negative",
                                   offset, length);
  }
  if ((uint64_t)offset > source->length ||
      (uint64_t)length > source->length - (uint64_t)offset) {
    return weft_hal_out_of_range(function, argument,
                                 "range [%" PRId64 ", %" PRId64
                                 ") is past the end of its %zu bytes",
                                 offset, offset + length, source->length);
  }
  *out_data = source->data + offset;
  return WEFT_OK;
}

weft_status_t weft_hal_arg_pattern(const char* function, int32_t pattern,
                                   int32_t pattern_length,
                                   weft_hal_pattern_t* out_pattern) {
  out_pattern->u32 = 0;
  switch (pattern_length) {
    case 1:
      out_pattern->u8 = (uint8_t)pattern;
      return WEFT_OK;
    case 2:
      out_pattern->u16 = (uint16_t)pattern;
      return WEFT_OK;
    case 4:
      out_pattern->u32 = (uint32_t)pattern;
      return WEFT_OK;
    default:
      return weft_hal_argument_error(function, "pattern_length",
                                     "is %" PRId32 "; must be 1, 2 or 4",
                                     pattern_length);
  }
}

void weft_hal_scratch_initialize(weft_allocator_t allocator,
                                 weft_hal_scratch_t* out_scratch) {
  out_scratch->data = out_scratch->inline_data;
  out_scratch->allocator = allocator;
}

void weft_hal_scratch_deinitialize(weft_hal_scratch_t* scratch) {
  if (scratch->data != scratch->inline_data) {
    weft_allocator_free(scratch->allocator, scratch->data);
  }
  scratch->data = scratch->inline_data;
}

// Room for |count| elements of |size| bytes in |scratch|.
static weft_status_t weft_hal_scratch_reserve(weft_hal_scratch_t* scratch,
                                              uint32_t count, size_t size,
                                              void** out_data) {
  *out_data = NULL;
  weft_status_t status = WEFT_OK;
  if ((size_t)count * size > sizeof(scratch->inline_data)) {
    void* data = NULL;
    status = weft_allocator_malloc_array(scratch->allocator, count, size,
                                         &data);
    if (weft_status_is_ok(status)) {
      weft_hal_scratch_deinitialize(scratch);
      scratch->data = data;
    }
  }
  if (weft_status_is_ok(status)) *out_data = scratch->data;
  return status;
}

void weft_hal_describe_value(const weft_vm_value_t* value, char* text,
                             size_t capacity) {
  if (value->type != WEFT_VM_TYPE_REF) {
    snprintf(text, capacity, "an %s",
             weft_vm_value_type_name(value->type));
  } else if (!value->ref.object) {
    snprintf(text, capacity, "null");
  } else {
    snprintf(text, capacity, "a '%s'", value->ref.type->name);
  }
}

weft_status_t weft_hal_arg_constants(const char* function, const char* argument,
                                     weft_vm_ref_t list,
                                     weft_hal_scratch_t* scratch,
                                     uint32_t* out_count,
                                     const uint32_t** out_constants) {
  *out_count = 0;
  *out_constants = NULL;
  const weft_vm_list_t* source = (const weft_vm_list_t*)list.object;
  if (!source || source->size == 0) return WEFT_OK;
  uint32_t* constants = NULL;
  weft_status_t status = weft_hal_scratch_reserve(
      scratch, source->size, sizeof(*constants), (void**)&constants);
  for (uint32_t i = 0; weft_status_is_ok(status) && i < source->size; ++i) {
    const weft_vm_value_t* value = &source->values[i];
    if (value->type == WEFT_VM_TYPE_I32 || value->type == WEFT_VM_TYPE_F32) {
      constants[i] = (uint32_t)value->bits;
    } else {
      char what[96];
      weft_hal_describe_value(value, what, sizeof(what));
      status = weft_hal_argument_error(
          function, argument,
          "element %" PRIu32 " is %s, not an i32 or f32", i, what);
    }
  }
  if (weft_status_is_ok(status)) {
    *out_count = source->size;
    *out_constants = constants;
  }
  return status;
}

// The range a hal.buffer or hal.buffer_view ref stands for; false for
// anything else.
static bool weft_hal_buffer_range(weft_vm_ref_t ref, weft_buffer_t** out_buffer,
                                  weft_device_size_t* out_offset,
                                  weft_device_size_t* out_length) {
  weft_buffer_t* buffer = weft_hal_module_unwrap(ref, &kWeftHalBufferType);
  if (buffer) {
    *out_buffer = buffer;
    *out_offset = 0;
    *out_length = WEFT_WHOLE_BUFFER;
    return true;
  }
  weft_hal_buffer_view_t* view =
      weft_hal_module_unwrap(ref, &kWeftHalBufferViewType);
  if (view) {
    *out_buffer = weft_hal_buffer_view_buffer(view);
    *out_offset = weft_hal_buffer_view_byte_offset(view);
    *out_length = weft_hal_buffer_view_byte_length(view);
    return true;
  }
  return false;
}

weft_status_t weft_hal_arg_buffer_refs(const char* function,
                                       const char* argument, weft_vm_ref_t list,
                                       bool allow_slots,
                                       weft_hal_scratch_t* scratch,
                                       uint32_t* out_count,
                                       const weft_buffer_ref_t** out_refs) {
  *out_count = 0;
  *out_refs = NULL;
  const weft_vm_list_t* source = (const weft_vm_list_t*)list.object;
  if (!source || source->size == 0) return WEFT_OK;
  weft_buffer_ref_t* refs = NULL;
  weft_status_t status = weft_hal_scratch_reserve(scratch, source->size,
                                                  sizeof(*refs), (void**)&refs);
  for (uint32_t i = 0; weft_status_is_ok(status) && i < source->size; ++i) {
    const weft_vm_value_t* value = &source->values[i];
    weft_buffer_ref_t* ref = &refs[i];
    if (value->type == WEFT_VM_TYPE_REF &&
        weft_hal_buffer_range(value->ref, &ref->buffer, &ref->offset,
                              &ref->length)) {
      ref->slot = 0;
    } else if (allow_slots && value->type == WEFT_VM_TYPE_I32 &&
               value->i32 >= 0) {
      *ref = weft_make_indirect_buffer_ref((uint32_t)value->i32, 0,
                                           WEFT_WHOLE_BUFFER);
    } else {
      char what[96];
      weft_hal_describe_value(value, what, sizeof(what));
      if (value->type == WEFT_VM_TYPE_I32 && allow_slots) {
        snprintf(what, sizeof(what), "slot %" PRId32, value->i32);
      }
      status = weft_hal_argument_error(
          function, argument, "element %" PRIu32 " is %s, not %s", i, what,
          allow_slots ? "a hal.buffer, a hal.buffer_view or a binding slot "
                        "(an i32 >= 0)"
                      : "a hal.buffer or a hal.buffer_view");
    }
  }
  if (weft_status_is_ok(status)) {
    *out_count = source->size;
    *out_refs = refs;
  }
  return status;
}

weft_status_t weft_hal_arg_binding_table(const char* function,
                                         const char* argument,
                                         weft_vm_ref_t list,
                                         weft_hal_scratch_t* scratch,
                                         weft_binding_table_t* out_table) {
  *out_table = weft_binding_table_empty();
  const weft_vm_list_t* source = (const weft_vm_list_t*)list.object;
  if (!source || source->size == 0) return WEFT_OK;
  weft_buffer_binding_t* bindings = NULL;
  weft_status_t status = weft_hal_scratch_reserve(
      scratch, source->size, sizeof(*bindings), (void**)&bindings);
  for (uint32_t i = 0; weft_status_is_ok(status) && i < source->size; ++i) {
    const weft_vm_value_t* value = &source->values[i];
    weft_buffer_binding_t* binding = &bindings[i];
    if (value->type != WEFT_VM_TYPE_REF ||
        !weft_hal_buffer_range(value->ref, &binding->buffer, &binding->offset,
                               &binding->length)) {
      char what[96];
      weft_hal_describe_value(value, what, sizeof(what));
      status = weft_hal_argument_error(
          function, argument,
          "element %" PRIu32 " is %s, not a hal.buffer or a hal.buffer_view",
          i, what);
    }
  }
  if (weft_status_is_ok(status)) {
    out_table->count = source->size;
    out_table->bindings = bindings;
  }
  return status;
}

weft_status_t weft_hal_arg_dispatch(const char* function,
                                    const weft_vm_value_t* args,
                                    bool allow_slots,
                                    weft_allocator_t allocator,
                                    weft_hal_dispatch_args_t* out_dispatch) {
  static const char* const kWorkgroupNames[3] = {"x", "y", "z"};
  weft_hal_dispatch_args_t* dispatch = out_dispatch;
  memset(dispatch, 0, offsetof(weft_hal_dispatch_args_t, constant_scratch));
  weft_hal_scratch_initialize(allocator, &dispatch->constant_scratch);
  weft_hal_scratch_initialize(allocator, &dispatch->binding_scratch);
  dispatch->executable = (weft_executable_t*)args[0].ref.object;
  weft_status_t status =
      weft_hal_arg_u32(function, "ordinal", args[1].i32, &dispatch->ordinal);
  for (uint32_t i = 0; weft_status_is_ok(status) && i < 3; ++i) {
    status = weft_hal_arg_u32(function, kWorkgroupNames[i], args[2 + i].i32,
                              &dispatch->workgroup_count[i]);
  }
  if (weft_status_is_ok(status)) {
    status = weft_hal_arg_constants(
        function, "constants", args[5].ref, &dispatch->constant_scratch,
        &dispatch->constant_count, &dispatch->constants);
  }
  if (weft_status_is_ok(status)) {
    status = weft_hal_arg_buffer_refs(
        function, "bindings", args[6].ref, allow_slots,
        &dispatch->binding_scratch, &dispatch->binding_count,
        &dispatch->bindings);
  }
  return status;
}

void weft_hal_dispatch_args_deinitialize(weft_hal_dispatch_args_t* dispatch) {
  weft_hal_scratch_deinitialize(&dispatch->binding_scratch);
  weft_hal_scratch_deinitialize(&dispatch->constant_scratch);
}

weft_status_t weft_hal_arg_recorded_buffer(const char* function,
                                           const char* slot_argument,
                                           weft_vm_ref_t buffer, int32_t slot,
                                           uint64_t offset, uint64_t length,
                                           weft_buffer_ref_t* out_ref) {
  if (buffer.object) {
    *out_ref = weft_make_buffer_ref((weft_buffer_t*)buffer.object, offset,
                                    length);
    return WEFT_OK;
  }
  *out_ref = weft_make_indirect_buffer_ref(0, offset, length);
  return weft_hal_arg_u32(function, slot_argument, slot, &out_ref->slot);
}
