// weft-run: inputs and outputs (see tensor_io.h).
#include "tensor_io.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_number.h"
#include "npy/npy.h"
#include "weft/vm/hal.h"

// How long a queue transfer of weft-run's own may take.
#define WEFT_RUN_TRANSFER_TIMEOUT_NS (60ll * 1000 * 1000 * 1000)

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

static weft_hal_element_type_t weft_run_element_type_parse(const char* text,
                                                           size_t length) {
  for (int type = WEFT_HAL_ELEMENT_TYPE_NONE + 1;
       type < WEFT_HAL_ELEMENT_TYPE_COUNT_; ++type) {
    const char* name =
        weft_hal_element_type_name((weft_hal_element_type_t)type);
    if (strlen(name) == length && memcmp(name, text, length) == 0) {
      return (weft_hal_element_type_t)type;
    }
  }
  return WEFT_HAL_ELEMENT_TYPE_NONE;
}

// The element types follow NumPy's dtypes one for one (bool aside).
static weft_hal_element_type_t weft_run_element_type_from_npy(
    weft_npy_dtype_t dtype) {
  return dtype == WEFT_NPY_DTYPE_BOOL
             ? WEFT_HAL_ELEMENT_TYPE_NONE
             : (weft_hal_element_type_t)(dtype + 1);
}

static weft_npy_dtype_t weft_run_element_type_to_npy(
    weft_hal_element_type_t type) {
  return (weft_npy_dtype_t)(type - 1);
}

// IEEE half <-> float, round to nearest even.
static uint16_t weft_run_f32_to_f16(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof(bits));
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t exponent = (bits >> 23) & 0xffu;
  uint32_t mantissa = bits & 0x7fffffu;
  if (exponent == 0xff) {  // inf or NaN
    return (uint16_t)(sign | 0x7c00u | (mantissa ? 0x200u : 0));
  }
  int32_t half_exponent = (int32_t)exponent - 127 + 15;
  if (half_exponent >= 31) return (uint16_t)(sign | 0x7c00u);  // overflow
  if (half_exponent <= 0) {
    if (half_exponent < -10) return (uint16_t)sign;  // underflow to 0
    mantissa |= 0x800000u;
    const uint32_t shift = (uint32_t)(14 - half_exponent);
    uint32_t half = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1))) ++half;
    return (uint16_t)(sign | half);
  }
  uint32_t half = ((uint32_t)half_exponent << 10) | (mantissa >> 13);
  const uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1))) ++half;
  return (uint16_t)(sign | half);
}

static float weft_run_f16_to_f32(uint16_t half) {
  const uint32_t sign = (uint32_t)(half & 0x8000u) << 16;
  const uint32_t exponent = (half >> 10) & 0x1fu;
  uint32_t mantissa = half & 0x3ffu;
  uint32_t bits;
  if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int32_t e = -1;
      do {
        ++e;
        mantissa <<= 1;
      } while (!(mantissa & 0x400u));
      bits = sign | ((uint32_t)(127 - 15 - e) << 23) |
             ((mantissa & 0x3ffu) << 13);
    }
  } else if (exponent == 31) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else {
    bits = sign | ((exponent - 15 + 127) << 23) | (mantissa << 13);
  }
  float value;
  memcpy(&value, &bits, sizeof(value));
  return value;
}

//===----------------------------------------------------------------------===//
// Literals
//===----------------------------------------------------------------------===//

// Parses one element of |type| from [text, end) into |out| (little-endian,
// the type's size).
static bool weft_run_parse_element(const char* text, const char* end,
                                   weft_hal_element_type_t type, void* out) {
  char buffer[64];
  const size_t length = (size_t)(end - text);
  if (length == 0 || length >= sizeof(buffer)) return false;
  memcpy(buffer, text, length);
  buffer[length] = '\0';
  char* stop = NULL;
  errno = 0;
  switch (type) {
    case WEFT_HAL_ELEMENT_TYPE_F16:
    case WEFT_HAL_ELEMENT_TYPE_F32:
    case WEFT_HAL_ELEMENT_TYPE_F64: {
      const double value = strtod(buffer, &stop);
      if (*stop) return false;
      if (type == WEFT_HAL_ELEMENT_TYPE_F64) {
        memcpy(out, &value, 8);
      } else if (type == WEFT_HAL_ELEMENT_TYPE_F32) {
        const float narrow = (float)value;
        memcpy(out, &narrow, 4);
      } else {
        const uint16_t half = weft_run_f32_to_f16((float)value);
        memcpy(out, &half, 2);
      }
      return true;
    }
    case WEFT_HAL_ELEMENT_TYPE_I8:
    case WEFT_HAL_ELEMENT_TYPE_I16:
    case WEFT_HAL_ELEMENT_TYPE_I32:
    case WEFT_HAL_ELEMENT_TYPE_I64: {
      const long long value = strtoll(buffer, &stop, 0);
      if (*stop || errno) return false;
      const uint32_t size = weft_hal_element_type_size(type);
      const long long limit = size == 8 ? 0 : (1ll << (size * 8 - 1));
      if (size < 8 && (value < -limit || value >= limit)) return false;
      memcpy(out, &value, size);  // little-endian: the low bytes
      return true;
    }
    default: {
      if (buffer[0] == '-') return false;
      const unsigned long long value = strtoull(buffer, &stop, 0);
      if (*stop || errno) return false;
      const uint32_t size = weft_hal_element_type_size(type);
      if (size < 8 && value >> (size * 8)) return false;
      memcpy(out, &value, size);
      return true;
    }
  }
}

static bool weft_run_is_separator(char c) {
  return c == ' ' || c == ',' || c == '\t';
}

// A tensor literal "2x3xf32=..." parsed into host bytes.
typedef struct weft_run_tensor_t {
  weft_hal_element_type_t type;
  uint32_t rank;
  int64_t shape[WEFT_HAL_BUFFER_VIEW_MAX_RANK];
  size_t byte_length;
  uint8_t* data;  // malloc'd
} weft_run_tensor_t;

static weft_status_t weft_run_parse_tensor(const char* text,
                                           weft_run_tensor_t* out) {
  memset(out, 0, sizeof(*out));
  const char* equals = strchr(text, '=');
  if (!equals) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "input '%s': expected SHAPExTYPE=VALUES (e.g. "
                       "'4xf32=1 2 3 4') or @FILE.npy",
                       text);
  }
  // Dimensions, then the type after the last 'x'.
  const char* token = text;
  uint64_t count = 1;
  for (;;) {
    const char* x = memchr(token, 'x', (size_t)(equals - token));
    if (!x) break;
    char digits[24];
    uint64_t dim = 0;
    const size_t digit_count = (size_t)(x - token);
    if (digit_count < sizeof(digits)) {
      memcpy(digits, token, digit_count);
      digits[digit_count] = '\0';
    }
    if (digit_count >= sizeof(digits) ||
        !weft_cli_try_parse_u64(digits, 0, UINT32_MAX, &dim)) {
      return WEFT_STATUS(INVALID_ARGUMENT,
                         "input '%s': dimension %u is not a count (0 to %u)",
                         text, out->rank, (unsigned)UINT32_MAX);
    }
    if (out->rank == WEFT_HAL_BUFFER_VIEW_MAX_RANK) {
      return WEFT_STATUS(INVALID_ARGUMENT, "input '%s': more than %d dimensions",
                         text, WEFT_HAL_BUFFER_VIEW_MAX_RANK);
    }
    if (dim && count > UINT32_MAX / dim) {
      return WEFT_STATUS(INVALID_ARGUMENT, "input '%s': too many elements",
                         text);
    }
    count *= dim;
    out->shape[out->rank++] = (int64_t)dim;
    token = x + 1;
  }
  out->type = weft_run_element_type_parse(token, (size_t)(equals - token));
  if (out->type == WEFT_HAL_ELEMENT_TYPE_NONE) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "input '%s': unknown element type '%.*s' (expected f16, "
                       "f32, f64, i8, i16, i32, i64, u8, u16, u32 or u64)",
                       text, (int)(equals - token), token);
  }
  const uint32_t size = weft_hal_element_type_size(out->type);
  out->byte_length = (size_t)count * size;
  out->data = malloc(out->byte_length ? out->byte_length : 1);
  if (!out->data) return WEFT_STATUS(RESOURCE_EXHAUSTED, "input '%s'", text);
  const char* cursor = equals + 1;
  uint64_t parsed = 0;
  for (;;) {
    while (*cursor && weft_run_is_separator(*cursor)) ++cursor;
    if (!*cursor) break;
    const char* end = cursor;
    while (*end && !weft_run_is_separator(*end)) ++end;
    if (parsed == count ||
        !weft_run_parse_element(cursor, end, out->type,
                                out->data + parsed * size)) {
      free(out->data);
      out->data = NULL;
      return parsed == count
                 ? WEFT_STATUS(INVALID_ARGUMENT,
                               "input '%s': more than the %" PRIu64
                               " elements its shape holds",
                               text, count)
                 : WEFT_STATUS(INVALID_ARGUMENT,
                               "input '%s': element %" PRIu64
                               " ('%.*s') is not a %s",
                               text, parsed, (int)(end - cursor), cursor,
                               weft_hal_element_type_name(out->type));
    }
    ++parsed;
    cursor = end;
  }
  if (parsed != count) {
    free(out->data);
    out->data = NULL;
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "input '%s': %" PRIu64 " elements for a shape of %" PRIu64,
                       text, parsed, count);
  }
  return WEFT_OK;
}

// Reads a .npy file into a tensor.
static weft_status_t weft_run_read_npy(const char* path,
                                       weft_run_tensor_t* out) {
  memset(out, 0, sizeof(*out));
  weft_npy_array_t array;
  memset(&array, 0, sizeof(array));
  weft_status_t status =
      weft_npy_read_file(path, weft_allocator_system(), &array);
  if (weft_status_is_ok(status)) {
    out->type = weft_run_element_type_from_npy(array.dtype);
    if (out->type == WEFT_HAL_ELEMENT_TYPE_NONE) {
      status = WEFT_STATUS(INVALID_ARGUMENT,
                           "'%s': bool arrays are not a buffer view element "
                           "type",
                           path);
    } else if (array.rank > WEFT_HAL_BUFFER_VIEW_MAX_RANK) {
      status = WEFT_STATUS(INVALID_ARGUMENT, "'%s': more than %d dimensions",
                           path, WEFT_HAL_BUFFER_VIEW_MAX_RANK);
    }
  }
  if (weft_status_is_ok(status)) {
    out->rank = array.rank;
    for (uint32_t i = 0; i < array.rank; ++i) {
      out->shape[i] = (int64_t)array.shape[i];
    }
    out->byte_length = array.byte_length;
    out->data = malloc(array.byte_length ? array.byte_length : 1);
    if (!out->data) {
      status = WEFT_STATUS(RESOURCE_EXHAUSTED, "reading '%s'", path);
    } else if (array.byte_length) {
      memcpy(out->data, array.data, array.byte_length);
    }
  }
  weft_npy_array_deinitialize(&array);
  return status;
}

//===----------------------------------------------------------------------===//
// Device transfers
//===----------------------------------------------------------------------===//

// Runs |submit| (which signals |semaphore| to 1) and waits for it.
static weft_status_t weft_run_wait(weft_semaphore_t* semaphore,
                                   weft_status_t submit_status) {
  weft_status_t status = submit_status;
  if (weft_status_is_ok(status)) {
    const weft_timeout_t timeout = {WEFT_TIMEOUT_RELATIVE,
                                    WEFT_RUN_TRANSFER_TIMEOUT_NS};
    status = weft_semaphore_wait(semaphore, 1, timeout);
  }
  return status;
}

// Makes a buffer view on |device| holding |tensor|'s bytes.
static weft_status_t weft_run_upload(const weft_run_tensor_t* tensor,
                                     weft_device_t* device,
                                     weft_vm_value_t* out_value) {
  weft_buffer_t* buffer = NULL;
  weft_buffer_params_t params = {0};
  weft_status_t status =
      weft_device_allocate_buffer(device, params, tensor->byte_length, &buffer);
  weft_semaphore_t* semaphore = NULL;
  if (weft_status_is_ok(status) && tensor->byte_length) {
    status = weft_device_create_semaphore(device, 0, &semaphore);
    if (weft_status_is_ok(status)) {
      uint64_t one = 1;
      weft_semaphore_list_t signal = {1, &semaphore, &one};
      status = weft_run_wait(
          semaphore, weft_device_queue_update(
                         device, WEFT_QUEUE_AFFINITY_ANY,
                         weft_semaphore_list_empty(), signal, tensor->data,
                         buffer, 0, tensor->byte_length));
    }
  }
  weft_hal_buffer_view_t* view = NULL;
  if (weft_status_is_ok(status)) {
    status = weft_hal_buffer_view_create(buffer, 0, tensor->type, tensor->rank,
                                         tensor->shape, weft_allocator_system(),
                                         &view);
  }
  if (weft_status_is_ok(status)) {
    out_value->type = WEFT_VM_TYPE_REF;
    // The view's one reference becomes the value's.
    out_value->ref = weft_hal_module_wrap_buffer_view(view);
  }
  weft_semaphore_release(semaphore);
  weft_buffer_release(buffer);
  return status;
}

// Reads |view|'s bytes back from |device| into a malloc'd |*out_data|.
static weft_status_t weft_run_download(const weft_hal_buffer_view_t* view,
                                       weft_device_t* device,
                                       uint8_t** out_data) {
  const uint64_t length = weft_hal_buffer_view_byte_length(view);
  *out_data = malloc(length ? (size_t)length : 1);
  if (!*out_data) return WEFT_STATUS(RESOURCE_EXHAUSTED, "reading a result");
  if (!length) return WEFT_OK;
  // Through a host-visible staging buffer: the view's memory may be the
  // device's own.
  weft_buffer_params_t params = {
      .type = WEFT_MEMORY_TYPE_HOST_VISIBLE,
      .usage = WEFT_BUFFER_USAGE_TRANSFER | WEFT_BUFFER_USAGE_MAPPING_SCOPED,
  };
  weft_buffer_t* staging = NULL;
  weft_status_t status =
      weft_device_allocate_buffer(device, params, length, &staging);
  weft_semaphore_t* semaphore = NULL;
  if (weft_status_is_ok(status)) {
    status = weft_device_create_semaphore(device, 0, &semaphore);
  }
  if (weft_status_is_ok(status)) {
    uint64_t one = 1;
    weft_semaphore_list_t signal = {1, &semaphore, &one};
    status = weft_run_wait(
        semaphore,
        weft_device_queue_copy(device, WEFT_QUEUE_AFFINITY_ANY,
                               weft_semaphore_list_empty(), signal,
                               weft_hal_buffer_view_buffer(view),
                               weft_hal_buffer_view_byte_offset(view), staging,
                               0, length));
  }
  if (weft_status_is_ok(status)) {
    status = weft_buffer_map_read(staging, 0, *out_data, length);
  }
  weft_semaphore_release(semaphore);
  weft_buffer_release(staging);
  if (!weft_status_is_ok(status)) {
    free(*out_data);
    *out_data = NULL;
  }
  return status;
}

//===----------------------------------------------------------------------===//
// Inputs
//===----------------------------------------------------------------------===//

weft_status_t weft_run_parse_input(const char* text, weft_vm_value_type_t type,
                                   bool is_view, weft_device_t* device,
                                   weft_vm_value_t* out_value) {
  memset(out_value, 0, sizeof(*out_value));
  if (type == WEFT_VM_TYPE_REF) {
    if (!is_view) {
      return WEFT_STATUS(INVALID_ARGUMENT,
                         "input '%s': the argument is a ref other than "
                         "r<hal.buffer_view>, which weft-run cannot make",
                         text);
    }
    weft_run_tensor_t tensor;
    weft_status_t status = text[0] == '@' ? weft_run_read_npy(text + 1, &tensor)
                                          : weft_run_parse_tensor(text, &tensor);
    if (weft_status_is_ok(status)) {
      status = weft_run_upload(&tensor, device, out_value);
    }
    free(tensor.data);
    return status;
  }
  // A scalar: "TYPE=VALUE" naming the argument's type.
  static const struct {
    const char* name;
    weft_vm_value_type_t type;
    weft_hal_element_type_t element;
  } kScalars[] = {{"i32", WEFT_VM_TYPE_I32, WEFT_HAL_ELEMENT_TYPE_I32},
                  {"i64", WEFT_VM_TYPE_I64, WEFT_HAL_ELEMENT_TYPE_I64},
                  {"f32", WEFT_VM_TYPE_F32, WEFT_HAL_ELEMENT_TYPE_F32},
                  {"f64", WEFT_VM_TYPE_F64, WEFT_HAL_ELEMENT_TYPE_F64}};
  for (size_t i = 0; i < sizeof(kScalars) / sizeof(kScalars[0]); ++i) {
    if (kScalars[i].type != type) continue;
    const size_t name_length = strlen(kScalars[i].name);
    if (strncmp(text, kScalars[i].name, name_length) != 0 ||
        text[name_length] != '=') {
      return WEFT_STATUS(INVALID_ARGUMENT,
                         "input '%s': the argument is %s; write %s=VALUE",
                         text, kScalars[i].name, kScalars[i].name);
    }
    const char* value_text = text + name_length + 1;
    out_value->type = type;
    out_value->bits = 0;
    if (!weft_run_parse_element(value_text, value_text + strlen(value_text),
                                kScalars[i].element, &out_value->bits)) {
      return WEFT_STATUS(INVALID_ARGUMENT, "input '%s': '%s' is not a %s",
                         text, value_text, kScalars[i].name);
    }
    return WEFT_OK;
  }
  return WEFT_STATUS(INVALID_ARGUMENT, "input '%s': unknown argument type",
                     text);
}

//===----------------------------------------------------------------------===//
// Outputs
//===----------------------------------------------------------------------===//

// Prints one element of |type| at |data|.
static void weft_run_print_element(FILE* stream, weft_hal_element_type_t type,
                                   const uint8_t* data) {
  switch (type) {
    case WEFT_HAL_ELEMENT_TYPE_F16: {
      uint16_t half;
      memcpy(&half, data, 2);
      fprintf(stream, "%.9g", (double)weft_run_f16_to_f32(half));
      break;
    }
    case WEFT_HAL_ELEMENT_TYPE_F32: {
      float value;
      memcpy(&value, data, 4);
      fprintf(stream, "%.9g", (double)value);
      break;
    }
    case WEFT_HAL_ELEMENT_TYPE_F64: {
      double value;
      memcpy(&value, data, 8);
      fprintf(stream, "%.17g", value);
      break;
    }
    case WEFT_HAL_ELEMENT_TYPE_I8:
      fprintf(stream, "%d", (int)(int8_t)data[0]);
      break;
    case WEFT_HAL_ELEMENT_TYPE_I16: {
      int16_t value;
      memcpy(&value, data, 2);
      fprintf(stream, "%d", (int)value);
      break;
    }
    case WEFT_HAL_ELEMENT_TYPE_I32: {
      int32_t value;
      memcpy(&value, data, 4);
      fprintf(stream, "%" PRId32, value);
      break;
    }
    case WEFT_HAL_ELEMENT_TYPE_I64: {
      int64_t value;
      memcpy(&value, data, 8);
      fprintf(stream, "%" PRId64, value);
      break;
    }
    default: {
      uint64_t value = 0;
      memcpy(&value, data, weft_hal_element_type_size(type));
      fprintf(stream, "%" PRIu64, value);
      break;
    }
  }
}

weft_status_t weft_run_print_value(const weft_vm_value_t* value,
                                   weft_device_t* device, FILE* stream) {
  switch (value->type) {
    case WEFT_VM_TYPE_I32:
      fprintf(stream, "i32=%" PRId32 "\n", value->i32);
      return WEFT_OK;
    case WEFT_VM_TYPE_I64:
      fprintf(stream, "i64=%" PRId64 "\n", value->i64);
      return WEFT_OK;
    case WEFT_VM_TYPE_F32:
      fprintf(stream, "f32=%.9g\n", (double)value->f32);
      return WEFT_OK;
    case WEFT_VM_TYPE_F64:
      fprintf(stream, "f64=%.17g\n", value->f64);
      return WEFT_OK;
    default:
      break;
  }
  const weft_hal_buffer_view_t* view = (const weft_hal_buffer_view_t*)
      weft_hal_module_unwrap(value->ref, &kWeftHalBufferViewType);
  if (!view) {
    fprintf(stream, "ref=%s\n",
            value->ref.object ? value->ref.type->name : "null");
    return WEFT_OK;
  }
  uint8_t* data = NULL;
  weft_status_t status = weft_run_download(view, device, &data);
  if (!weft_status_is_ok(status)) return status;
  const weft_hal_element_type_t type = weft_hal_buffer_view_element_type(view);
  const uint32_t rank = weft_hal_buffer_view_rank(view);
  uint64_t count = 1;
  for (uint32_t i = 0; i < rank; ++i) {
    const int64_t dim = weft_hal_buffer_view_dim(view, i);
    fprintf(stream, "%" PRId64 "x", dim);
    count *= (uint64_t)dim;
  }
  fprintf(stream, "%s=", weft_hal_element_type_name(type));
  const uint32_t size = weft_hal_element_type_size(type);
  for (uint64_t i = 0; i < count; ++i) {
    if (i) fputc(' ', stream);
    weft_run_print_element(stream, type, data + i * size);
  }
  fputc('\n', stream);
  free(data);
  return WEFT_OK;
}

weft_status_t weft_run_write_npy(const weft_vm_value_t* value,
                                 weft_device_t* device, const char* path) {
  const weft_hal_buffer_view_t* view =
      value->type == WEFT_VM_TYPE_REF
          ? (const weft_hal_buffer_view_t*)weft_hal_module_unwrap(
                value->ref, &kWeftHalBufferViewType)
          : NULL;
  if (!view) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "output '@%s': only a buffer view result can be written "
                       "as .npy",
                       path);
  }
  uint8_t* data = NULL;
  weft_status_t status = weft_run_download(view, device, &data);
  if (!weft_status_is_ok(status)) return status;
  weft_npy_array_t array;
  memset(&array, 0, sizeof(array));
  array.dtype = weft_run_element_type_to_npy(
      weft_hal_buffer_view_element_type(view));
  array.rank = weft_hal_buffer_view_rank(view);
  uint64_t count = 1;
  for (uint32_t i = 0; i < array.rank; ++i) {
    array.shape[i] = (uint64_t)weft_hal_buffer_view_dim(view, i);
    count *= array.shape[i];
  }
  array.element_count = count;
  array.byte_length = (size_t)weft_hal_buffer_view_byte_length(view);
  array.data = data;
  status = weft_npy_write_file(path, &array);
  free(data);
  return status;
}
