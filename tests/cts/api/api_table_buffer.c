// api_null table: buffer.h, command_buffer.h, executable.h.
#include <stdio.h>
#include <string.h>

#include "api_table.h"
#include "cts.h"

#define BUFFER_LENGTH 256

//===----------------------------------------------------------------------===//
// buffer.h
//===----------------------------------------------------------------------===//

static void buffer_params_canonicalize(api_call_t* call) {
  api_value(call, 0, "params");
  weft_buffer_params_t params = {0};
  params = weft_buffer_params_canonicalize(params);
  if (params.type == 0 || params.access == 0 || params.usage == 0) {
    api_problem(call, "left a zero field");
  }
}

static void buffer_retain(api_call_t* call) {
  weft_buffer_t* buffer = api_make_buffer(call, BUFFER_LENGTH);
  if (!buffer) return;
  weft_buffer_retain(api_ptr(call, 0, "buffer", buffer));
  if (!api_is_broken(call, 0)) weft_buffer_release(buffer);
  weft_buffer_release(buffer);
}

static void buffer_release(api_call_t* call) {
  weft_buffer_t* buffer = api_make_buffer(call, BUFFER_LENGTH);
  if (!buffer) return;
  weft_buffer_release(api_ptr(call, 0, "buffer", buffer));
  if (api_is_broken(call, 0)) weft_buffer_release(buffer);
}

// The integer queries of a buffer: each must be 0 for NULL.
typedef enum buffer_query_e {
  QUERY_BYTE_LENGTH = 0,
  QUERY_BYTE_OFFSET = 1,
  QUERY_MEMORY_TYPE = 2,
  QUERY_ALLOWED_ACCESS = 3,
  QUERY_ALLOWED_USAGE = 4,
} buffer_query_t;

static void buffer_query(api_call_t* call, buffer_query_t query) {
  weft_buffer_t* buffer = api_make_buffer(call, BUFFER_LENGTH);
  if (!buffer) return;
  const weft_buffer_t* arg = api_ptr(call, 0, "buffer", buffer);
  uint64_t value = 0;
  switch (query) {
    case QUERY_BYTE_LENGTH:
      value = weft_buffer_byte_length(arg);
      break;
    case QUERY_BYTE_OFFSET:
      value = weft_buffer_byte_offset(arg);
      break;
    case QUERY_MEMORY_TYPE:
      value = weft_buffer_memory_type(arg);
      break;
    case QUERY_ALLOWED_ACCESS:
      value = weft_buffer_allowed_access(arg);
      break;
    case QUERY_ALLOWED_USAGE:
      value = weft_buffer_allowed_usage(arg);
      break;
  }
  if (call->broken_index < 0 && query == QUERY_BYTE_LENGTH &&
      value != BUFFER_LENGTH) {
    api_problem(call, "byte length %llu", (unsigned long long)value);
  }
  api_expect_neutral(call, value == 0, "%llu, expected 0",
                     (unsigned long long)value);
  weft_buffer_release(buffer);
}

static void buffer_byte_length(api_call_t* call) {
  buffer_query(call, QUERY_BYTE_LENGTH);
}
static void buffer_byte_offset(api_call_t* call) {
  buffer_query(call, QUERY_BYTE_OFFSET);
}
static void buffer_memory_type(api_call_t* call) {
  buffer_query(call, QUERY_MEMORY_TYPE);
}
static void buffer_allowed_access(api_call_t* call) {
  buffer_query(call, QUERY_ALLOWED_ACCESS);
}
static void buffer_allowed_usage(api_call_t* call) {
  buffer_query(call, QUERY_ALLOWED_USAGE);
}

static void buffer_allocated_buffer(api_call_t* call) {
  weft_buffer_t* buffer = api_make_buffer(call, BUFFER_LENGTH);
  if (!buffer) return;
  weft_buffer_t* allocated =
      weft_buffer_allocated_buffer(api_ptr(call, 0, "buffer", buffer));
  if (call->broken_index < 0 && allocated != buffer) {
    api_problem(call, "a buffer is not its own allocated buffer");
  }
  api_expect_neutral(call, allocated == NULL, "%p, expected NULL",
                     (void*)allocated);
  weft_buffer_release(buffer);
}

static void buffer_subspan(api_call_t* call) {
  api_value(call, 1, "offset");
  api_value(call, 2, "length");
  weft_buffer_t* buffer = api_make_buffer(call, BUFFER_LENGTH);
  if (!buffer) return;
  weft_buffer_t* subspan = NULL;
  api_status(call, weft_buffer_subspan(api_ptr(call, 0, "buffer", buffer), 16,
                                       64, api_allocator(call, 3, "allocator"),
                                       api_out(call, 4, "out_buffer", &subspan,
                                               sizeof(subspan))));
  api_check_out(call, 4, &subspan, sizeof(subspan));
  if (api_ok(call)) weft_buffer_release(subspan);
  weft_buffer_release(buffer);
}

static void buffer_calculate_range(api_call_t* call) {
  api_value(call, 1, "offset");
  api_value(call, 2, "length");
  weft_buffer_t* buffer = api_make_buffer(call, BUFFER_LENGTH);
  if (!buffer) return;
  weft_device_size_t length = 0;
  api_status(call,
             weft_buffer_calculate_range(
                 api_ptr(call, 0, "buffer", buffer), 16, WEFT_WHOLE_BUFFER,
                 api_ptr(call, 3, "what", "api"),
                 api_out(call, 4, "out_length", &length, sizeof(length))));
  api_check_out(call, 4, &length, sizeof(length));
  if (call->broken_index < 0 && length != BUFFER_LENGTH - 16) {
    api_problem(call, "length %llu", (unsigned long long)length);
  }
  weft_buffer_release(buffer);
}

static void buffer_map_range(api_call_t* call) {
  api_value(call, 1, "mode");
  api_value(call, 2, "access");
  api_value(call, 3, "offset");
  api_value(call, 4, "length");
  weft_buffer_t* buffer = api_make_buffer(call, BUFFER_LENGTH);
  if (!buffer) return;
  weft_buffer_mapping_t mapping;
  api_status(call,
             weft_buffer_map_range(
                 api_ptr(call, 0, "buffer", buffer), WEFT_MAPPING_MODE_SCOPED,
                 WEFT_MEMORY_ACCESS_READ, 0, BUFFER_LENGTH,
                 api_out(call, 5, "out_mapping", &mapping, sizeof(mapping))));
  api_check_out(call, 5, &mapping, sizeof(mapping));
  if (api_ok(call)) weft_buffer_unmap_range(&mapping);
  weft_buffer_release(buffer);
}

// Maps the whole of |buffer| for writing into |mapping|.
static bool map_whole(api_call_t* call, weft_buffer_t* buffer,
                      weft_buffer_mapping_t* mapping) {
  return api_setup(
      call,
      weft_buffer_map_range(buffer, WEFT_MAPPING_MODE_SCOPED,
                            WEFT_MEMORY_ACCESS_ALL, 0, BUFFER_LENGTH, mapping),
      "weft_buffer_map_range");
}

static void buffer_unmap_range(api_call_t* call) {
  weft_buffer_t* buffer = api_make_buffer(call, BUFFER_LENGTH);
  if (!buffer) return;
  weft_buffer_mapping_t mapping;
  if (map_whole(call, buffer, &mapping)) {
    weft_buffer_unmap_range(api_ptr(call, 0, "mapping", &mapping));
    if (api_is_broken(call, 0)) weft_buffer_unmap_range(&mapping);
  }
  weft_buffer_release(buffer);
}

static void buffer_mapping_sync(api_call_t* call, bool flush) {
  api_value(call, 1, "offset");
  api_value(call, 2, "length");
  weft_buffer_t* buffer = api_make_buffer(call, BUFFER_LENGTH);
  if (!buffer) return;
  weft_buffer_mapping_t mapping;
  if (map_whole(call, buffer, &mapping)) {
    weft_buffer_mapping_t* arg = api_ptr(call, 0, "mapping", &mapping);
    api_status(call, flush ? weft_buffer_mapping_flush(arg, 0, 64)
                           : weft_buffer_mapping_invalidate(arg, 0, 64));
    weft_buffer_unmap_range(&mapping);
  }
  weft_buffer_release(buffer);
}

static void buffer_mapping_flush(api_call_t* call) {
  buffer_mapping_sync(call, true);
}

static void buffer_mapping_invalidate(api_call_t* call) {
  buffer_mapping_sync(call, false);
}

static void buffer_map_read(api_call_t* call) {
  api_value(call, 1, "offset");
  api_value(call, 3, "length");
  weft_buffer_t* buffer = api_make_buffer(call, BUFFER_LENGTH);
  if (!buffer) return;
  uint8_t bytes[64];
  api_status(call, weft_buffer_map_read(api_ptr(call, 0, "buffer", buffer), 0,
                                        api_ptr(call, 2, "target", bytes),
                                        sizeof(bytes)));
  weft_buffer_release(buffer);
}

static void buffer_map_write(api_call_t* call) {
  api_value(call, 1, "offset");
  api_value(call, 3, "length");
  weft_buffer_t* buffer = api_make_buffer(call, BUFFER_LENGTH);
  if (!buffer) return;
  uint8_t bytes[64] = {1, 2, 3};
  api_status(call, weft_buffer_map_write(api_ptr(call, 0, "buffer", buffer), 0,
                                         api_ptr(call, 2, "source", bytes),
                                         sizeof(bytes)));
  weft_buffer_release(buffer);
}

static void buffer_map_fill(api_call_t* call) {
  api_value(call, 1, "offset");
  api_value(call, 2, "length");
  api_value(call, 4, "pattern_length");
  weft_buffer_t* buffer = api_make_buffer(call, BUFFER_LENGTH);
  if (!buffer) return;
  uint32_t pattern = 0xabcdef01u;
  api_status(call, weft_buffer_map_fill(
                       api_ptr(call, 0, "buffer", buffer), 0, 64,
                       api_ptr(call, 3, "pattern", &pattern), sizeof(pattern)));
  weft_buffer_release(buffer);
}

static void buffer_map_copy(api_call_t* call) {
  api_value(call, 1, "source_offset");
  api_value(call, 3, "target_offset");
  api_value(call, 4, "length");
  weft_buffer_t* source = api_make_buffer(call, BUFFER_LENGTH);
  weft_buffer_t* target = api_make_buffer(call, BUFFER_LENGTH);
  if (source && target) {
    api_status(call,
               weft_buffer_map_copy(api_ptr(call, 0, "source", source), 0,
                                    api_ptr(call, 2, "target", target), 0, 64));
  }
  weft_buffer_release(source);
  weft_buffer_release(target);
}

//===----------------------------------------------------------------------===//
// command_buffer.h
//===----------------------------------------------------------------------===//

// A one-shot command buffer for every category, begun when |begin|.
static weft_command_buffer_t* make_command_buffer(api_call_t* call,
                                                  bool begin) {
  weft_command_buffer_t* command_buffer = NULL;
  if (!api_setup(call,
                 weft_command_buffer_create(
                     call->device, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT,
                     WEFT_COMMAND_CATEGORY_ANY, 0, &command_buffer),
                 "weft_command_buffer_create")) {
    return NULL;
  }
  if (begin && !api_setup(call, weft_command_buffer_begin(command_buffer),
                          "weft_command_buffer_begin")) {
    weft_command_buffer_release(command_buffer);
    return NULL;
  }
  return command_buffer;
}

static void command_buffer_create(api_call_t* call) {
  api_value(call, 1, "mode");
  api_value(call, 2, "categories");
  api_value(call, 3, "binding_capacity");
  weft_command_buffer_t* command_buffer = NULL;
  api_status(
      call, weft_command_buffer_create(
                api_ptr(call, 0, "device", call->device),
                WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, WEFT_COMMAND_CATEGORY_ANY, 0,
                api_out(call, 4, "out_command_buffer", &command_buffer,
                        sizeof(command_buffer))));
  api_check_out(call, 4, &command_buffer, sizeof(command_buffer));
  if (api_ok(call)) weft_command_buffer_release(command_buffer);
}

static void command_buffer_retain(api_call_t* call) {
  weft_command_buffer_t* command_buffer = make_command_buffer(call, false);
  if (!command_buffer) return;
  weft_command_buffer_retain(
      api_ptr(call, 0, "command_buffer", command_buffer));
  if (!api_is_broken(call, 0)) weft_command_buffer_release(command_buffer);
  weft_command_buffer_release(command_buffer);
}

static void command_buffer_release(api_call_t* call) {
  weft_command_buffer_t* command_buffer = make_command_buffer(call, false);
  if (!command_buffer) return;
  weft_command_buffer_release(
      api_ptr(call, 0, "command_buffer", command_buffer));
  if (api_is_broken(call, 0)) weft_command_buffer_release(command_buffer);
}

typedef enum command_buffer_query_e {
  QUERY_MODE = 0,
  QUERY_BINDING_CAPACITY = 1,
  QUERY_COMMAND_COUNT = 2,
} command_buffer_query_t;

static void command_buffer_query(api_call_t* call,
                                 command_buffer_query_t query) {
  weft_command_buffer_t* command_buffer = make_command_buffer(call, false);
  if (!command_buffer) return;
  const weft_command_buffer_t* arg =
      api_ptr(call, 0, "command_buffer", command_buffer);
  uint32_t value = query == QUERY_MODE ? weft_command_buffer_mode(arg)
                   : query == QUERY_BINDING_CAPACITY
                       ? weft_command_buffer_binding_capacity(arg)
                       : weft_command_buffer_command_count(arg);
  if (call->broken_index < 0 && query == QUERY_MODE &&
      value != WEFT_COMMAND_BUFFER_MODE_ONE_SHOT) {
    api_problem(call, "mode %u", value);
  }
  api_expect_neutral(call, value == 0, "%u, expected 0", value);
  weft_command_buffer_release(command_buffer);
}

static void command_buffer_mode(api_call_t* call) {
  command_buffer_query(call, QUERY_MODE);
}
static void command_buffer_binding_capacity(api_call_t* call) {
  command_buffer_query(call, QUERY_BINDING_CAPACITY);
}
static void command_buffer_command_count(api_call_t* call) {
  command_buffer_query(call, QUERY_COMMAND_COUNT);
}

static void command_buffer_begin(api_call_t* call) {
  weft_command_buffer_t* command_buffer = make_command_buffer(call, false);
  if (!command_buffer) return;
  api_status(call, weft_command_buffer_begin(
                       api_ptr(call, 0, "command_buffer", command_buffer)));
  weft_command_buffer_release(command_buffer);
}

static void command_buffer_end(api_call_t* call) {
  weft_command_buffer_t* command_buffer = make_command_buffer(call, true);
  if (!command_buffer) return;
  api_status(call, weft_command_buffer_end(
                       api_ptr(call, 0, "command_buffer", command_buffer)));
  weft_command_buffer_release(command_buffer);
}

static void command_buffer_barrier(api_call_t* call) {
  weft_command_buffer_t* command_buffer = make_command_buffer(call, true);
  if (!command_buffer) return;
  api_status(call, weft_command_buffer_barrier(
                       api_ptr(call, 0, "command_buffer", command_buffer)));
  weft_command_buffer_release(command_buffer);
}

static void command_buffer_fill(api_call_t* call) {
  api_value(call, 1, "target");
  api_value(call, 3, "pattern_length");
  weft_command_buffer_t* command_buffer = make_command_buffer(call, true);
  weft_buffer_t* buffer = api_make_buffer(call, BUFFER_LENGTH);
  if (command_buffer && buffer) {
    uint32_t pattern = 7;
    api_status(call,
               weft_command_buffer_fill(
                   api_ptr(call, 0, "command_buffer", command_buffer),
                   weft_make_buffer_ref(buffer, 0, 64),
                   api_ptr(call, 2, "pattern", &pattern), sizeof(pattern)));
  }
  weft_buffer_release(buffer);
  weft_command_buffer_release(command_buffer);
}

static void command_buffer_update(api_call_t* call) {
  api_value(call, 2, "target");
  weft_command_buffer_t* command_buffer = make_command_buffer(call, true);
  weft_buffer_t* buffer = api_make_buffer(call, BUFFER_LENGTH);
  if (command_buffer && buffer) {
    uint8_t bytes[64] = {1, 2, 3};
    api_status(call, weft_command_buffer_update(
                         api_ptr(call, 0, "command_buffer", command_buffer),
                         api_ptr(call, 1, "source", bytes),
                         weft_make_buffer_ref(buffer, 0, sizeof(bytes))));
  }
  weft_buffer_release(buffer);
  weft_command_buffer_release(command_buffer);
}

static void command_buffer_copy(api_call_t* call) {
  api_value(call, 1, "source");
  api_value(call, 2, "target");
  weft_command_buffer_t* command_buffer = make_command_buffer(call, true);
  weft_buffer_t* source = api_make_buffer(call, BUFFER_LENGTH);
  weft_buffer_t* target = api_make_buffer(call, BUFFER_LENGTH);
  if (command_buffer && source && target) {
    api_status(call, weft_command_buffer_copy(
                         api_ptr(call, 0, "command_buffer", command_buffer),
                         weft_make_buffer_ref(source, 0, 64),
                         weft_make_buffer_ref(target, 0, 64)));
  }
  weft_buffer_release(source);
  weft_buffer_release(target);
  weft_command_buffer_release(command_buffer);
}

static void command_buffer_dispatch(api_call_t* call) {
  api_value(call, 2, "kernel_ordinal");
  api_value(call, 4, "constant_count");
  api_value(call, 6, "binding_count");
  weft_command_buffer_t* command_buffer = make_command_buffer(call, true);
  weft_buffer_t* in = api_make_buffer(call, BUFFER_LENGTH);
  weft_buffer_t* out = api_make_buffer(call, BUFFER_LENGTH);
  weft_executable_t* kernels = api_kernels(call);
  uint32_t ordinal = 0;
  if (command_buffer && in && out && kernels &&
      api_setup(call,
                weft_executable_lookup_kernel(kernels, "scale_offset",
                                              &ordinal),
                "weft_executable_lookup_kernel")) {
    const uint32_t workgroup_count[3] = {1, 1, 1};
    const uint32_t constants[3] = {0x3f800000u, 0, 64};  // 1.0f, 0.0f, 64
    const weft_buffer_ref_t bindings[2] = {
        weft_make_buffer_ref(in, 0, BUFFER_LENGTH),
        weft_make_buffer_ref(out, 0, BUFFER_LENGTH),
    };
    api_status(call, weft_command_buffer_dispatch(
                         api_ptr(call, 0, "command_buffer", command_buffer),
                         api_ptr(call, 1, "executable", kernels), ordinal,
                         api_ptr(call, 3, "workgroup_count", workgroup_count),
                         3, api_ptr(call, 5, "constants", constants), 2,
                         api_ptr(call, 7, "bindings", bindings)));
  }
  weft_buffer_release(in);
  weft_buffer_release(out);
  weft_command_buffer_release(command_buffer);
}

//===----------------------------------------------------------------------===//
// executable.h
//===----------------------------------------------------------------------===//

static weft_executable_t* make_executable(api_call_t* call) {
  weft_executable_t* executable = NULL;
  api_setup(call,
            weft_device_create_executable(
                call->device,
                weft_cts_kernel_source(weft_device_driver_name(call->device)),
                &executable),
            "weft_device_create_executable");
  return executable;
}

static void executable_retain(api_call_t* call) {
  weft_executable_t* executable = make_executable(call);
  if (!executable) return;
  weft_executable_retain(api_ptr(call, 0, "executable", executable));
  if (!api_is_broken(call, 0)) weft_executable_release(executable);
  weft_executable_release(executable);
}

static void executable_release(api_call_t* call) {
  weft_executable_t* executable = make_executable(call);
  if (!executable) return;
  weft_executable_release(api_ptr(call, 0, "executable", executable));
  if (api_is_broken(call, 0)) weft_executable_release(executable);
}

static void executable_name(api_call_t* call) {
  const char* name =
      weft_executable_name(api_ptr(call, 0, "executable", api_kernels(call)));
  if (call->broken_index < 0 && (!name || !name[0])) {
    api_problem(call, "the test kernels have no name");
  }
  api_expect_neutral(call, name && !name[0], "'%s', expected \"\"",
                     name ? name : "(null)");
}

static void executable_kernel_count(api_call_t* call) {
  uint32_t count = weft_executable_kernel_count(
      api_ptr(call, 0, "executable", api_kernels(call)));
  if (call->broken_index < 0 && count == 0) api_problem(call, "no kernels");
  api_expect_neutral(call, count == 0, "%u, expected 0", count);
}

static void executable_format_name(api_call_t* call) {
  api_value(call, 0, "format");
  const char* name =
      weft_executable_format_name(WEFT_EXECUTABLE_FORMAT_CPU_SHARED_OBJECT);
  if (strcmp(name, "cpu-shared-object") != 0) {
    api_problem(call, "the name is '%s'", name);
  }
}

static void executable_format(api_call_t* call) {
  weft_executable_format_t format =
      weft_executable_format(api_ptr(call, 0, "executable", api_kernels(call)));
  const weft_executable_format_t expected =
      weft_cts_kernel_source(weft_device_driver_name(call->device)).format;
  if (call->broken_index < 0 && format != expected) {
    api_problem(call, "the test kernels' format is %d, expected %d",
                (int)format, (int)expected);
  }
  api_expect_neutral(call, format == WEFT_EXECUTABLE_FORMAT_NONE,
                     "%d, expected WEFT_EXECUTABLE_FORMAT_NONE", (int)format);
}

static void executable_kernel_info(api_call_t* call) {
  api_value(call, 1, "ordinal");
  const weft_kernel_info_t* kernel = weft_executable_kernel_info(
      api_ptr(call, 0, "executable", api_kernels(call)), 0);
  if (call->broken_index < 0 && !kernel) api_problem(call, "no kernel 0");
  api_expect_neutral(call, kernel == NULL, "%p, expected NULL",
                     (const void*)kernel);
}

// executable.h: "*out_ordinal is UINT32_MAX (never a kernel) on any
// failure" (0 is a kernel), not 0.
static void executable_lookup_kernel(api_call_t* call) {
  uint32_t ordinal = 0;
  api_status(call,
             weft_executable_lookup_kernel(
                 api_ptr(call, 0, "executable", api_kernels(call)),
                 api_ptr(call, 1, "name", "scale_offset"),
                 api_out(call, 2, "out_ordinal", &ordinal, sizeof(ordinal))));
  if (!api_ok(call) && !api_is_broken(call, 2) && ordinal != UINT32_MAX) {
    api_problem(call, "out_ordinal is %u on failure, expected UINT32_MAX",
                ordinal);
  }
}

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

const api_entry_t api_table_buffer[] = {
    {"weft_buffer_params_canonicalize", buffer_params_canonicalize,
     WEFT_STATUS_OK},
    {"weft_buffer_retain", buffer_retain, WEFT_STATUS_OK},
    {"weft_buffer_release", buffer_release, WEFT_STATUS_OK},
    {"weft_buffer_byte_length", buffer_byte_length, WEFT_STATUS_OK},
    {"weft_buffer_byte_offset", buffer_byte_offset, WEFT_STATUS_OK},
    {"weft_buffer_memory_type", buffer_memory_type, WEFT_STATUS_OK},
    {"weft_buffer_allowed_access", buffer_allowed_access, WEFT_STATUS_OK},
    {"weft_buffer_allowed_usage", buffer_allowed_usage, WEFT_STATUS_OK},
    {"weft_buffer_allocated_buffer", buffer_allocated_buffer, WEFT_STATUS_OK},
    {"weft_buffer_subspan", buffer_subspan, WEFT_STATUS_OK},
    {"weft_buffer_calculate_range", buffer_calculate_range, WEFT_STATUS_OK},
    {"weft_buffer_map_range", buffer_map_range, WEFT_STATUS_OK},
    {"weft_buffer_unmap_range", buffer_unmap_range, WEFT_STATUS_OK},
    {"weft_buffer_mapping_flush", buffer_mapping_flush, WEFT_STATUS_OK},
    {"weft_buffer_mapping_invalidate", buffer_mapping_invalidate,
     WEFT_STATUS_OK},
    {"weft_buffer_map_read", buffer_map_read, WEFT_STATUS_OK},
    {"weft_buffer_map_write", buffer_map_write, WEFT_STATUS_OK},
    {"weft_buffer_map_fill", buffer_map_fill, WEFT_STATUS_OK},
    {"weft_buffer_map_copy", buffer_map_copy, WEFT_STATUS_OK},
    {"weft_command_buffer_create", command_buffer_create, WEFT_STATUS_OK},
    {"weft_command_buffer_retain", command_buffer_retain, WEFT_STATUS_OK},
    {"weft_command_buffer_release", command_buffer_release, WEFT_STATUS_OK},
    {"weft_command_buffer_mode", command_buffer_mode, WEFT_STATUS_OK},
    {"weft_command_buffer_binding_capacity", command_buffer_binding_capacity,
     WEFT_STATUS_OK},
    {"weft_command_buffer_command_count", command_buffer_command_count,
     WEFT_STATUS_OK},
    {"weft_command_buffer_begin", command_buffer_begin, WEFT_STATUS_OK},
    {"weft_command_buffer_end", command_buffer_end, WEFT_STATUS_OK},
    {"weft_command_buffer_barrier", command_buffer_barrier, WEFT_STATUS_OK},
    {"weft_command_buffer_fill", command_buffer_fill, WEFT_STATUS_OK},
    {"weft_command_buffer_update", command_buffer_update, WEFT_STATUS_OK},
    {"weft_command_buffer_copy", command_buffer_copy, WEFT_STATUS_OK},
    {"weft_command_buffer_dispatch", command_buffer_dispatch, WEFT_STATUS_OK},
    {"weft_executable_retain", executable_retain, WEFT_STATUS_OK},
    {"weft_executable_release", executable_release, WEFT_STATUS_OK},
    {"weft_executable_name", executable_name, WEFT_STATUS_OK},
    {"weft_executable_kernel_count", executable_kernel_count, WEFT_STATUS_OK},
    {"weft_executable_format", executable_format, WEFT_STATUS_OK},
    {"weft_executable_format_name", executable_format_name, WEFT_STATUS_OK},
    {"weft_executable_kernel_info", executable_kernel_info, WEFT_STATUS_OK},
    {"weft_executable_lookup_kernel", executable_lookup_kernel, WEFT_STATUS_OK},
};
const size_t api_table_buffer_count =
    sizeof(api_table_buffer) / sizeof(api_table_buffer[0]);
