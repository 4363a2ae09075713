// weft hal module: buffer views checked against the tensor types a
// function declares (see weft/vm/hal.h, "Checking buffer views against
// declared tensor types").
//
// The declarations are the VM core's (weft/vm/tensor_type.h), which knows
// nothing of buffer views; the check lives here, beside them. A value is
// checked whole against the bindings the values before it made, its own
// new bindings kept aside and committed only when it passes, so a failure
// names the first value at fault and what the others said.
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/arguments.h"
#include "modules/hal/module_impl.h"
#include "vm/module_impl.h"
#include "weft/vm/hal.h"

// The value being checked, for messages.
typedef struct weft_hal_check_value_t {
  const char* function;  // the function's name
  bool is_result;
  uint32_t index;  // 0-based among the arguments or the results
  const weft_vm_value_decl_t* decl;
  // What messages call the value, when not "FUNCTION: argument N 'NAME'".
  const char* what;
} weft_hal_check_value_t;

// Appends to a fixed buffer (truncating); |*used| counts what was asked.
static void weft_hal_check_append(char* buffer, size_t capacity, size_t* used,
                                  const char* format, ...)
    __attribute__((format(printf, 4, 5)));

static void weft_hal_check_append(char* buffer, size_t capacity, size_t* used,
                                  const char* format, ...) {
  va_list args;
  va_start(args, format);
  const int length = *used < capacity
                         ? vsnprintf(buffer + *used, capacity - *used, format,
                                     args)
                         : 0;
  va_end(args);
  if (length > 0) *used += (size_t)length;
}

// Writes "64xK f32": |type| with each bound symbol as its size.
static void weft_hal_check_expected_text(const weft_vm_tensor_type_t* type,
                                         const int64_t* sizes, char* buffer,
                                         size_t capacity) {
  size_t used = 0;
  buffer[0] = '\0';
  for (uint32_t i = 0; i < type->rank; ++i) {
    const weft_vm_dim_t* dim = &type->dims[i];
    const char* x = i ? "x" : "";
    if (dim->kind == WEFT_VM_DIM_STATIC) {
      weft_hal_check_append(buffer, capacity, &used, "%s%" PRId64, x,
                            dim->size);
    } else if (dim->kind == WEFT_VM_DIM_SYMBOL && sizes[dim->symbol] >= 0) {
      weft_hal_check_append(buffer, capacity, &used, "%s%" PRId64, x,
                            sizes[dim->symbol]);
    } else if (dim->kind == WEFT_VM_DIM_SYMBOL) {
      weft_hal_check_append(buffer, capacity, &used, "%s%s", x,
                            dim->symbol_name);
    } else {
      weft_hal_check_append(buffer, capacity, &used, "%s?", x);
    }
  }
  weft_hal_check_append(buffer, capacity, &used, "%s%s", type->rank ? " " : "",
                        weft_vm_element_type_name(type->element_type));
}

// Writes "128x64 f32": what |view| is.
static void weft_hal_check_given_text(const weft_hal_buffer_view_t* view,
                                      char* buffer, size_t capacity) {
  size_t used = 0;
  buffer[0] = '\0';
  const uint32_t rank = weft_hal_buffer_view_rank(view);
  for (uint32_t i = 0; i < rank; ++i) {
    weft_hal_check_append(buffer, capacity, &used, "%s%" PRId64, i ? "x" : "",
                          weft_hal_buffer_view_dim(view, i));
  }
  weft_hal_check_append(
      buffer, capacity, &used, "%s%s", rank ? " " : "",
      weft_hal_element_type_name(weft_hal_buffer_view_element_type(view)));
}

// Writes "argument 1 'x'" for a value bound by |is_result| position |index|.
static void weft_hal_check_value_name(const weft_hal_tensor_check_t* check,
                                      bool is_result, uint32_t index,
                                      char* buffer, size_t capacity) {
  weft_vm_value_decl_t decl;
  weft_vm_module_function_value_decl(
      check->module, check->function,
      is_result ? WEFT_VM_VALUE_RESULT : WEFT_VM_VALUE_ARGUMENT, index, &decl);
  snprintf(buffer, capacity, "%s %" PRIu32 " '%s'",
           is_result ? "result" : "argument", index + 1, decl.name);
}

// True when |shape| (|rank| dimensions) fits |type|'s dimensions with
// |sizes| bound; unbound symbols bind as they go (in |sizes|, a copy).
static bool weft_hal_check_shape_fits(const weft_vm_tensor_type_t* type,
                                      const int64_t* shape, uint32_t rank,
                                      int64_t* sizes) {
  if (rank != type->rank) return false;
  for (uint32_t i = 0; i < rank; ++i) {
    const weft_vm_dim_t* dim = &type->dims[i];
    if (dim->kind == WEFT_VM_DIM_STATIC && shape[i] != dim->size) return false;
    if (dim->kind == WEFT_VM_DIM_SYMBOL) {
      if (sizes[dim->symbol] < 0) sizes[dim->symbol] = shape[i];
      if (sizes[dim->symbol] != shape[i]) return false;
    }
  }
  return true;
}

// Checks |value| against |at->decl|'s tensor type, binding its new symbols
// in |check| when it passes.
static weft_status_t weft_hal_check_value(weft_hal_tensor_check_t* check,
                                          const weft_hal_check_value_t* at,
                                          const weft_vm_value_t* value) {
  const weft_vm_tensor_type_t* type = &at->decl->type;
  char expected[WEFT_VM_TENSOR_MAX_RANK * 24 + 16];
  weft_hal_check_expected_text(type, check->symbol_sizes, expected,
                               sizeof(expected));
  char what[160];
  if (at->what) {
    snprintf(what, sizeof(what), "%s", at->what);
  } else {
    snprintf(what, sizeof(what), "%s: %s %" PRIu32 " '%s'", at->function,
             at->is_result ? "result" : "argument", at->index + 1,
             at->decl->name);
  }
  const weft_hal_buffer_view_t* view =
      value->type == WEFT_VM_TYPE_REF
          ? weft_hal_module_unwrap(value->ref, &kWeftHalBufferViewType)
          : NULL;
  if (!view) {
    char given[96];
    if (value->type != WEFT_VM_TYPE_REF) {
      snprintf(given, sizeof(given), "an %s scalar",
               weft_vm_value_type_name(value->type));
    } else if (weft_vm_ref_is_null(value->ref)) {
      snprintf(given, sizeof(given), "null");
    } else {
      snprintf(given, sizeof(given), "a %s ref",
               value->ref.type && value->ref.type->name ? value->ref.type->name
                                                        : "?");
    }
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "%s must be a buffer view of %s, got %s", what,
                       expected, given);
  }
  const uint32_t rank = weft_hal_buffer_view_rank(view);
  int64_t shape[WEFT_HAL_BUFFER_VIEW_MAX_RANK] = {0};
  for (uint32_t i = 0; i < rank && i < WEFT_HAL_BUFFER_VIEW_MAX_RANK; ++i) {
    shape[i] = weft_hal_buffer_view_dim(view, i);
  }
  const weft_vm_element_type_t element =
      (weft_vm_element_type_t)weft_hal_buffer_view_element_type(view);
  int64_t sizes[WEFT_VM_TENSOR_MAX_SYMBOLS];
  memcpy(sizes, check->symbol_sizes, sizeof(sizes));
  const bool fits = weft_hal_check_shape_fits(type, shape, rank, sizes);
  if (fits && element == type->element_type) {
    for (uint32_t s = 0; s < check->symbol_count; ++s) {
      if (check->symbol_sizes[s] < 0 && sizes[s] >= 0) {
        check->symbol_sizes[s] = sizes[s];
        check->symbol_values[s] = at->index;
        check->symbol_from_result[s] = at->is_result;
      }
    }
    return WEFT_OK;
  }
  // What is wrong, most telling first.
  char hints[320];
  size_t used = 0;
  hints[0] = '\0';
  const char* separator = "";
  if (!fits && rank >= 2) {
    int64_t reversed[WEFT_HAL_BUFFER_VIEW_MAX_RANK];
    for (uint32_t i = 0; i < rank; ++i) reversed[i] = shape[rank - 1 - i];
    memcpy(sizes, check->symbol_sizes, sizeof(sizes));
    if (weft_hal_check_shape_fits(type, reversed, rank, sizes)) {
      weft_hal_check_append(hints, sizeof(hints), &used, "transposed?");
      separator = "; ";
    }
  }
  if (element != type->element_type) {
    weft_hal_check_append(hints, sizeof(hints), &used,
                          "%selement type %s, not %s", separator,
                          weft_vm_element_type_name(element),
                          weft_vm_element_type_name(type->element_type));
    separator = "; ";
  }
  if (rank != type->rank) {
    weft_hal_check_append(hints, sizeof(hints), &used,
                          "%srank %" PRIu32 ", not %" PRIu32, separator, rank,
                          type->rank);
  } else if (!fits) {
    // The first dimension at fault, against the bindings so far (this
    // value's own included).
    memcpy(sizes, check->symbol_sizes, sizeof(sizes));
    for (uint32_t i = 0; i < rank; ++i) {
      const weft_vm_dim_t* dim = &type->dims[i];
      if (dim->kind == WEFT_VM_DIM_STATIC && shape[i] != dim->size) {
        weft_hal_check_append(hints, sizeof(hints), &used,
                              "%sdimension %" PRIu32 " is %" PRId64
                              ", not %" PRId64,
                              separator, i, shape[i], dim->size);
        break;
      }
      if (dim->kind != WEFT_VM_DIM_SYMBOL) continue;
      if (sizes[dim->symbol] < 0) {
        sizes[dim->symbol] = shape[i];
        continue;
      }
      if (sizes[dim->symbol] == shape[i]) continue;
      char source[128];
      if (check->symbol_sizes[dim->symbol] >= 0) {
        weft_hal_check_value_name(check,
                                  check->symbol_from_result[dim->symbol],
                                  check->symbol_values[dim->symbol], source,
                                  sizeof(source));
      } else {
        // Bound by an earlier dimension of this value.
        uint32_t first = 0;
        while (first < i && !(type->dims[first].kind == WEFT_VM_DIM_SYMBOL &&
                              type->dims[first].symbol == dim->symbol)) {
          ++first;
        }
        snprintf(source, sizeof(source), "its dimension %" PRIu32, first);
      }
      weft_hal_check_append(hints, sizeof(hints), &used,
                            "%s%s is %" PRId64 " from %s", separator,
                            dim->symbol_name, sizes[dim->symbol], source);
      break;
    }
  }
  char given[WEFT_HAL_BUFFER_VIEW_MAX_RANK * 24 + 16];
  weft_hal_check_given_text(view, given, sizeof(given));
  return WEFT_STATUS(INVALID_ARGUMENT, "%s must be %s, got %s (%s)", what,
                     expected, given, hints);
}

// Checks |count| |values| of |check|'s function (arguments, or results
// when |is_result|) against its declarations.
static weft_status_t weft_hal_check_values(weft_hal_tensor_check_t* check,
                                           bool is_result,
                                           const weft_vm_value_t* values,
                                           uint32_t count) {
  const weft_vm_signature_t signature =
      weft_vm_module_function_signature(check->module, check->function);
  const uint32_t expected_count =
      is_result ? signature.ret_count : signature.arg_count;
  const char* function =
      weft_vm_module_function_name(check->module, check->function);
  if (count != expected_count) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "%s: %" PRIu32 " %s given, it %s %" PRIu32, function,
                       count, is_result ? "results" : "arguments",
                       is_result ? "returns" : "takes", expected_count);
  }
  weft_status_t status = WEFT_OK;
  for (uint32_t i = 0; weft_status_is_ok(status) && i < count; ++i) {
    weft_vm_value_decl_t decl;
    if (!weft_vm_module_function_value_decl(
            check->module, check->function,
            is_result ? WEFT_VM_VALUE_RESULT : WEFT_VM_VALUE_ARGUMENT, i,
            &decl)) {
      break;  // nothing declared
    }
    if (decl.type.element_type == WEFT_VM_ELEMENT_TYPE_NONE) continue;
    const weft_hal_check_value_t at = {function, is_result, i, &decl, NULL};
    status = weft_hal_check_value(check, &at, &values[i]);
  }
  return status;
}

weft_status_t weft_hal_check_arguments(const weft_vm_module_t* module,
                                       uint32_t function,
                                       const weft_vm_value_t* args,
                                       uint32_t arg_count,
                                       weft_hal_tensor_check_t* out_check) {
  if (out_check) memset(out_check, 0, sizeof(*out_check));
  weft_status_t status = weft_arguments_require(
      __func__, "module,out_check", (const void* const[]){module, out_check},
      2);
  if (weft_status_is_ok(status)) {
    status = weft_arguments_require_one(__func__, "args", args || !arg_count);
  }
  if (weft_status_is_ok(status) &&
      function >= weft_vm_module_function_count(module)) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "%s: function %" PRIu32 " is past module '%s''s %" PRIu32
                         " functions",
                         __func__, function, weft_vm_module_name(module),
                         weft_vm_module_function_count(module));
  }
  if (!weft_status_is_ok(status)) return status;
  out_check->module = module;
  out_check->function = function;
  out_check->symbol_count =
      weft_vm_module_function_symbol_count(module, function);
  for (uint32_t i = 0; i < WEFT_VM_TENSOR_MAX_SYMBOLS; ++i) {
    out_check->symbol_sizes[i] = -1;
  }
  return weft_hal_check_values(out_check, false, args, arg_count);
}

weft_status_t weft_hal_check_results(weft_hal_tensor_check_t* check,
                                     const weft_vm_value_t* results,
                                     uint32_t result_count) {
  weft_status_t status = weft_arguments_require_one(__func__, "check", check);
  if (weft_status_is_ok(status)) {
    status =
        weft_arguments_require_one(__func__, "results", results || !result_count);
  }
  if (weft_status_is_ok(status) &&
      (!check->module ||
       check->function >= weft_vm_module_function_count(check->module))) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "%s: |check| was not started by "
                         "weft_hal_check_arguments",
                         __func__);
  }
  if (!weft_status_is_ok(status)) return status;
  return weft_hal_check_values(check, true, results, result_count);
}

weft_status_t weft_hal_check_view(const char* what,
                                  const weft_vm_tensor_type_t* type,
                                  const weft_vm_value_t* value) {
  weft_hal_tensor_check_t check;
  memset(&check, 0, sizeof(check));
  for (uint32_t i = 0; i < WEFT_VM_TENSOR_MAX_SYMBOLS; ++i) {
    check.symbol_sizes[i] = -1;
  }
  const weft_vm_value_decl_t decl = {"", *type};
  const weft_hal_check_value_t at = {
      .function = "", .is_result = false, .index = 0, .decl = &decl,
      .what = what};
  return weft_hal_check_value(&check, &at, value);
}
