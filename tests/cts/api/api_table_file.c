// api_null table: file.h, parameter_stream.h, driver.h.
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "api_table.h"

#define FILE_LENGTH 256
#define SECOND_NS (1000ll * 1000 * 1000)

//===----------------------------------------------------------------------===//
// file.h
//===----------------------------------------------------------------------===//

static void count_release(void* user_data, void* contents) {
  if (user_data) ++*(int*)user_data;
}

static void file_wrap_memory(api_call_t* call) {
  api_value(call, 0, "access");
  api_value(call, 2, "length");
  uint8_t contents[FILE_LENGTH];
  int release_count = 0;
  weft_file_t* file = NULL;
  api_status(call,
             weft_file_wrap_memory(
                 WEFT_FILE_ACCESS_READ | WEFT_FILE_ACCESS_WRITE,
                 api_ptr(call, 1, "contents", contents), FILE_LENGTH,
                 api_fn_present(call, 3, "release_fn") ? count_release : NULL,
                 api_ptr(call, 4, "release_user_data", &release_count),
                 api_allocator(call, 5, "allocator"),
                 api_out(call, 6, "out_file", &file, sizeof(file))));
  api_check_out(call, 6, &file, sizeof(file));
  if (api_ok(call)) weft_file_release(file);
  if (call->broken_index < 0 && release_count != 1) {
    api_problem(call, "release_fn ran %d times, expected once", release_count);
  }
  if (!api_ok(call) && release_count != 0) {
    api_problem(call, "release_fn ran %d times for a file never made",
                release_count);
  }
}

static void file_open(api_call_t* call) {
  api_value(call, 1, "access");
  api_value(call, 2, "flags");
  char path[64];
  if (!api_make_temp_file(call, FILE_LENGTH, path)) return;
  weft_file_t* file = NULL;
  api_status(call,
             weft_file_open(api_ptr(call, 0, "path", path),
                            WEFT_FILE_ACCESS_READ, WEFT_FILE_OPEN_FLAG_NONE,
                            api_allocator(call, 3, "allocator"),
                            api_out(call, 4, "out_file", &file, sizeof(file))));
  api_check_out(call, 4, &file, sizeof(file));
  if (api_ok(call)) weft_file_release(file);
  unlink(path);
}

static void file_from_fd(api_call_t* call) {
  api_value(call, 0, "fd");
  api_value(call, 1, "access");
  char path[64];
  if (!api_make_temp_file(call, FILE_LENGTH, path)) return;
  int fd = open(path, O_RDONLY);
  unlink(path);
  if (fd < 0) {
    api_problem(call, "setup: cannot open the temporary file");
    return;
  }
  weft_file_t* file = NULL;
  api_status(call,
             weft_file_from_fd(
                 fd, WEFT_FILE_ACCESS_READ, api_allocator(call, 2, "allocator"),
                 api_out(call, 3, "out_file", &file, sizeof(file))));
  api_check_out(call, 3, &file, sizeof(file));
  if (api_ok(call)) weft_file_release(file);
  close(fd);
}

// A memory file over |contents| (FILE_LENGTH bytes).
static weft_file_t* make_file(api_call_t* call, uint8_t* contents) {
  return api_make_memory_file(call, contents, FILE_LENGTH);
}

static void file_retain(api_call_t* call) {
  uint8_t contents[FILE_LENGTH];
  weft_file_t* file = make_file(call, contents);
  if (!file) return;
  weft_file_retain(api_ptr(call, 0, "file", file));
  if (!api_is_broken(call, 0)) weft_file_release(file);
  weft_file_release(file);
}

static void file_release(api_call_t* call) {
  uint8_t contents[FILE_LENGTH];
  weft_file_t* file = make_file(call, contents);
  if (!file) return;
  weft_file_release(api_ptr(call, 0, "file", file));
  if (api_is_broken(call, 0)) weft_file_release(file);
}

// The queries of a file, each neutral for NULL.
typedef enum file_query_e {
  QUERY_ACCESS = 0,
  QUERY_LENGTH = 1,
  QUERY_LENGTH_IS_KNOWN = 2,
  QUERY_MEMORY = 3,
  QUERY_FD = 4,
  QUERY_NAME = 5,
} file_query_t;

static void file_query(api_call_t* call, file_query_t query) {
  // An fd file for weft_file_fd (a memory file's fd is -1 already), a
  // memory file for the rest.
  uint8_t contents[FILE_LENGTH];
  weft_file_t* file = NULL;
  if (query == QUERY_FD) {
    char path[64];
    if (!api_make_temp_file(call, FILE_LENGTH, path)) return;
    api_setup(call,
              weft_file_open(path, WEFT_FILE_ACCESS_READ,
                             WEFT_FILE_OPEN_FLAG_NONE, call->allocator, &file),
              "weft_file_open");
    unlink(path);
  } else {
    file = make_file(call, contents);
  }
  if (!file) return;
  const weft_file_t* arg = api_ptr(call, 0, "file", file);
  bool baseline = call->broken_index < 0;
  switch (query) {
    case QUERY_ACCESS: {
      weft_file_access_t access = weft_file_access(arg);
      if (baseline && access == 0) api_problem(call, "no access");
      api_expect_neutral(call, access == 0, "%u, expected 0", access);
      break;
    }
    case QUERY_LENGTH: {
      uint64_t length = weft_file_length(arg);
      if (baseline && length != FILE_LENGTH) api_problem(call, "bad length");
      api_expect_neutral(call, length == 0, "%llu, expected 0",
                         (unsigned long long)length);
      break;
    }
    case QUERY_LENGTH_IS_KNOWN: {
      bool known = weft_file_length_is_known(arg);
      if (baseline && !known) api_problem(call, "unknown length");
      api_expect_neutral(call, !known, "true, expected false");
      break;
    }
    case QUERY_MEMORY: {
      void* memory = weft_file_memory(arg);
      if (baseline && memory != contents) api_problem(call, "bad memory");
      api_expect_neutral(call, memory == NULL, "%p, expected NULL", memory);
      break;
    }
    case QUERY_FD: {
      int fd = weft_file_fd(arg);
      if (baseline && fd < 0) api_problem(call, "no fd");
      api_expect_neutral(call, fd == -1, "%d, expected -1", fd);
      break;
    }
    case QUERY_NAME: {
      const char* name = weft_file_name(arg);
      if (baseline && (!name || !name[0])) api_problem(call, "no name");
      api_expect_neutral(call, name && !name[0], "'%s', expected \"\"",
                         name ? name : "(null)");
      break;
    }
  }
  weft_file_release(file);
}

static void file_access(api_call_t* call) { file_query(call, QUERY_ACCESS); }
static void file_length(api_call_t* call) { file_query(call, QUERY_LENGTH); }
static void file_length_is_known(api_call_t* call) {
  file_query(call, QUERY_LENGTH_IS_KNOWN);
}
static void file_memory(api_call_t* call) { file_query(call, QUERY_MEMORY); }
static void file_fd(api_call_t* call) { file_query(call, QUERY_FD); }
static void file_name(api_call_t* call) { file_query(call, QUERY_NAME); }

static void file_validate(api_call_t* call, bool write) {
  api_value(call, 1, "offset");
  api_value(call, 2, "length");
  uint8_t contents[FILE_LENGTH];
  weft_file_t* file = make_file(call, contents);
  if (!file) return;
  const weft_file_t* arg = api_ptr(call, 0, "file", file);
  api_status(call, write ? weft_file_validate_write(arg, 0, 64)
                         : weft_file_validate_read(arg, 0, 64));
  weft_file_release(file);
}

static void file_validate_read(api_call_t* call) { file_validate(call, false); }
static void file_validate_write(api_call_t* call) { file_validate(call, true); }

static void file_read(api_call_t* call) {
  api_value(call, 1, "offset");
  api_value(call, 3, "length");
  uint8_t contents[FILE_LENGTH] = {1, 2, 3};
  weft_file_t* file = make_file(call, contents);
  if (!file) return;
  uint8_t target[64];
  api_status(
      call, weft_file_read(api_ptr(call, 0, "file", file), 0,
                           api_ptr(call, 2, "target", target), sizeof(target)));
  weft_file_release(file);
}

static void file_write(api_call_t* call) {
  api_value(call, 1, "offset");
  api_value(call, 3, "length");
  uint8_t contents[FILE_LENGTH];
  memset(contents, 0, sizeof(contents));
  weft_file_t* file = make_file(call, contents);
  if (!file) return;
  uint8_t source[64] = {1, 2, 3};
  api_status(call, weft_file_write(api_ptr(call, 0, "file", file), 0,
                                   api_ptr(call, 2, "source", source),
                                   sizeof(source)));
  if (!api_ok(call) && contents[0] != 0) {
    api_problem(call, "the file was written");
  }
  weft_file_release(file);
}

//===----------------------------------------------------------------------===//
// parameter_stream.h
//===----------------------------------------------------------------------===//

// What a stream reads: FILE_LENGTH bytes of a memory file into a buffer.
typedef struct stream_setup_t {
  uint8_t contents[FILE_LENGTH];
  weft_file_t* file;
  weft_buffer_t* buffer;
  weft_parameter_span_t span;
  weft_parameter_stream_options_t options;
} stream_setup_t;

static bool stream_setup_initialize(api_call_t* call, stream_setup_t* setup) {
  memset(setup, 0, sizeof(*setup));
  setup->file = make_file(call, setup->contents);
  setup->buffer = api_make_buffer(call, FILE_LENGTH);
  weft_parameter_span_t span = {setup->file, 0, setup->buffer, 0, FILE_LENGTH};
  setup->span = span;
  weft_parameter_stream_options_initialize(&setup->options);
  return setup->file && setup->buffer;
}

static void stream_setup_deinitialize(stream_setup_t* setup) {
  weft_buffer_release(setup->buffer);
  weft_file_release(setup->file);
}

// Starts a stream over |setup| (the setup of another function's thunk).
static weft_parameter_stream_t* start_stream(api_call_t* call,
                                             stream_setup_t* setup) {
  weft_parameter_stream_t* stream = NULL;
  if (!api_setup(call,
                 weft_parameter_stream_start(call->device, &setup->span, 1,
                                             &setup->options, call->allocator,
                                             &stream),
                 "weft_parameter_stream_start")) {
    return NULL;
  }
  return stream;
}

static void parameter_stream_options_initialize(api_call_t* call) {
  weft_parameter_stream_options_t options;
  memset(&options, 0, sizeof(options));
  weft_parameter_stream_options_initialize(
      api_ptr(call, 0, "out_options", &options));
  if (call->broken_index < 0 &&
      options.max_reads_in_flight !=
          WEFT_PARAMETER_STREAM_DEFAULT_READS_IN_FLIGHT) {
    api_problem(call, "max_reads_in_flight %u", options.max_reads_in_flight);
  }
}

static void parameter_stream_start(api_call_t* call) {
  api_value(call, 2, "span_count");
  stream_setup_t setup;
  if (stream_setup_initialize(call, &setup)) {
    weft_parameter_stream_t* stream = NULL;
    api_status(call,
               weft_parameter_stream_start(
                   api_ptr(call, 0, "device", call->device),
                   api_ptr(call, 1, "spans", &setup.span), 1,
                   api_ptr(call, 3, "options", &setup.options),
                   api_allocator(call, 4, "allocator"),
                   api_out(call, 5, "out_stream", &stream, sizeof(stream))));
    api_check_out(call, 5, &stream, sizeof(stream));
    if (api_ok(call)) {
      api_setup(call,
                weft_parameter_stream_wait(
                    stream, weft_timeout_relative(5 * SECOND_NS)),
                "weft_parameter_stream_wait");
      weft_parameter_stream_release(stream);
    }
  }
  stream_setup_deinitialize(&setup);
}

static void parameter_stream_cancel(api_call_t* call) {
  stream_setup_t setup;
  if (stream_setup_initialize(call, &setup)) {
    weft_parameter_stream_t* stream = start_stream(call, &setup);
    if (stream) {
      weft_parameter_stream_cancel(api_ptr(call, 0, "stream", stream));
      weft_parameter_stream_release(stream);
    }
  }
  stream_setup_deinitialize(&setup);
}

static void parameter_stream_wait(api_call_t* call) {
  api_value(call, 1, "timeout");
  stream_setup_t setup;
  if (stream_setup_initialize(call, &setup)) {
    weft_parameter_stream_t* stream = start_stream(call, &setup);
    if (stream) {
      api_status(call, weft_parameter_stream_wait(
                           api_ptr(call, 0, "stream", stream),
                           weft_timeout_relative(5 * SECOND_NS)));
      weft_parameter_stream_release(stream);
    }
  }
  stream_setup_deinitialize(&setup);
}

static void parameter_stream_progress(api_call_t* call) {
  stream_setup_t setup;
  if (stream_setup_initialize(call, &setup)) {
    weft_parameter_stream_t* stream = start_stream(call, &setup);
    if (stream) {
      api_setup(call,
                weft_parameter_stream_wait(
                    stream, weft_timeout_relative(5 * SECOND_NS)),
                "weft_parameter_stream_wait");
      weft_parameter_progress_t progress =
          weft_parameter_stream_progress(api_ptr(call, 0, "stream", stream));
      if (call->broken_index < 0 && progress.bytes_loaded != FILE_LENGTH) {
        api_problem(call, "bytes_loaded %llu",
                    (unsigned long long)progress.bytes_loaded);
      }
      bool zero = !progress.bytes_loaded && !progress.bytes_total &&
                  !progress.spans_loaded && !progress.span_count &&
                  !progress.reads_in_flight;
      api_expect_neutral(
          call, zero, "{%llu, %llu, %u, %u, %u}, expected all zeros",
          (unsigned long long)progress.bytes_loaded,
          (unsigned long long)progress.bytes_total, progress.spans_loaded,
          progress.span_count, progress.reads_in_flight);
      weft_parameter_stream_release(stream);
    }
  }
  stream_setup_deinitialize(&setup);
}

static void parameter_stream_direct_io_used(api_call_t* call) {
  stream_setup_t setup;
  if (stream_setup_initialize(call, &setup)) {
    weft_parameter_stream_t* stream = start_stream(call, &setup);
    if (stream) {
      bool used = weft_parameter_stream_direct_io_used(
          api_ptr(call, 0, "stream", stream));
      api_expect_neutral(call, !used, "true, expected false");
      weft_parameter_stream_release(stream);
    }
  }
  stream_setup_deinitialize(&setup);
}

static void parameter_stream_release(api_call_t* call) {
  stream_setup_t setup;
  if (stream_setup_initialize(call, &setup)) {
    weft_parameter_stream_t* stream = start_stream(call, &setup);
    if (stream) {
      weft_parameter_stream_release(api_ptr(call, 0, "stream", stream));
      if (api_is_broken(call, 0)) weft_parameter_stream_release(stream);
    }
  }
  stream_setup_deinitialize(&setup);
}

static void parameter_stream_load(api_call_t* call) {
  api_value(call, 2, "span_count");
  stream_setup_t setup;
  if (stream_setup_initialize(call, &setup)) {
    api_status(call, weft_parameter_stream_load(
                         api_ptr(call, 0, "device", call->device),
                         api_ptr(call, 1, "spans", &setup.span), 1,
                         api_ptr(call, 3, "options", &setup.options),
                         api_allocator(call, 4, "allocator")));
  }
  stream_setup_deinitialize(&setup);
}

//===----------------------------------------------------------------------===//
// driver.h
//===----------------------------------------------------------------------===//

static bool parse_options(api_call_t* call, weft_device_options_t* options) {
  return api_setup(call,
                   weft_device_options_parse("local-task?workers=2", options),
                   "weft_device_options_parse");
}

// A failed parse leaves no options: count 0, no keys, and the driver name
// and path NULL or "" (the implementation empties them to "", which callers
// may print; the header's "set to NULL (or 0)" is read as "emptied").
static void device_options_parse(api_call_t* call) {
  weft_device_options_t options;
  api_status(call,
             weft_device_options_parse(
                 api_ptr(call, 0, "device_string", "local-task?workers=2"),
                 api_out(call, 1, "out_options", &options, sizeof(options))));
  if (!api_ok(call) && !api_is_broken(call, 1)) {
    bool empty_name = !options.driver_name || !options.driver_name[0];
    bool empty_path = !options.path || !options.path[0];
    if (options.count != 0 || !empty_name || !empty_path || options.keys[0]) {
      api_problem(call,
                  "out_options not emptied on failure (count %u, "
                  "driver_name %s, path %s)",
                  options.count, empty_name ? "empty" : "set",
                  empty_path ? "empty" : "set");
    }
  }
}

static void device_options_find(api_call_t* call) {
  weft_device_options_t options;
  if (!parse_options(call, &options)) return;
  const char* value =
      weft_device_options_find(api_ptr(call, 0, "options", &options),
                               api_ptr(call, 1, "key", "workers"));
  if (call->broken_index < 0 && (!value || strcmp(value, "2") != 0)) {
    api_problem(call, "returned '%s'", value ? value : "(null)");
  }
  api_expect_neutral(call, value == NULL, "'%s', expected NULL",
                     value ? value : "(null)");
}

// |inout_index| holds the default and is left unchanged on failure.
static void device_options_get_choice(api_call_t* call) {
  weft_device_options_t options;
  if (!parse_options(call, &options)) return;
  static const char* const kChoices[] = {"1", "2", "3"};
  uint32_t index = 7;
  api_status(call, weft_device_options_get_choice(
                       api_ptr(call, 0, "options", &options),
                       api_ptr(call, 1, "key", "workers"),
                       api_ptr(call, 2, "choices", kChoices), 3,
                       api_ptr(call, 4, "inout_index", &index)));
  uint32_t expected = api_ok(call) ? 1 : 7;
  if (index != expected) {
    api_problem(call, "inout_index is %u, expected %u", index, expected);
  }
}

// |inout_value| holds the default and is left unchanged on failure.
static void device_options_get_u32(api_call_t* call) {
  weft_device_options_t options;
  if (!parse_options(call, &options)) return;
  uint32_t value = 7;
  api_status(call, weft_device_options_get_u32(
                       api_ptr(call, 0, "options", &options),
                       api_ptr(call, 1, "key", "workers"),
                       api_ptr(call, 2, "inout_value", &value)));
  uint32_t expected = api_ok(call) ? 2 : 7;
  if (value != expected) {
    api_problem(call, "inout_value is %u, expected %u", value, expected);
  }
}

static void driver_registry_create_common(api_call_t* call, bool defaults) {
  weft_driver_registry_t* registry = NULL;
  weft_allocator_t allocator = api_allocator(call, 0, "allocator");
  weft_driver_registry_t** out =
      api_out(call, 1, "out_registry", &registry, sizeof(registry));
  api_status(call, defaults
                       ? weft_driver_registry_create_default(allocator, out)
                       : weft_driver_registry_create(allocator, out));
  api_check_out(call, 1, &registry, sizeof(registry));
  if (api_ok(call)) weft_driver_registry_release(registry);
}

static void driver_registry_create(api_call_t* call) {
  driver_registry_create_common(call, false);
}

static void driver_registry_create_default(api_call_t* call) {
  driver_registry_create_common(call, true);
}

static weft_driver_registry_t* make_registry(api_call_t* call) {
  weft_driver_registry_t* registry = NULL;
  api_setup(call,
            weft_driver_registry_create_default(call->allocator, &registry),
            "weft_driver_registry_create_default");
  return registry;
}

static void driver_registry_release(api_call_t* call) {
  weft_driver_registry_t* registry = make_registry(call);
  if (!registry) return;
  weft_driver_registry_release(api_ptr(call, 0, "registry", registry));
  if (api_is_broken(call, 0)) weft_driver_registry_release(registry);
}

static weft_status_t never_create_device(const weft_driver_t* driver,
                                         const char* device_string,
                                         const weft_device_options_t* options,
                                         weft_allocator_t allocator,
                                         weft_device_t** out_device) {
  *out_device = NULL;
  return WEFT_STATUS(UNIMPLEMENTED, "api_null's driver makes no devices");
}

static void driver_registry_register(api_call_t* call) {
  static const char* const kOptionNames[] = {NULL};
  static const weft_driver_t kDriver = {"api-null", "a driver never used",
                                        kOptionNames, never_create_device,
                                        false};
  weft_driver_registry_t* registry = make_registry(call);
  if (!registry) return;
  uint32_t count = weft_driver_registry_count(registry);
  api_status(call, weft_driver_registry_register(
                       api_ptr(call, 0, "registry", registry),
                       api_ptr(call, 1, "driver", &kDriver)));
  if (!api_ok(call) && weft_driver_registry_count(registry) != count) {
    api_problem(call, "a driver was registered");
  }
  weft_driver_registry_release(registry);
}

static void driver_registry_count(api_call_t* call) {
  weft_driver_registry_t* registry = make_registry(call);
  if (!registry) return;
  uint32_t count =
      weft_driver_registry_count(api_ptr(call, 0, "registry", registry));
  if (call->broken_index < 0 && count == 0) api_problem(call, "no drivers");
  api_expect_neutral(call, count == 0, "%u, expected 0", count);
  weft_driver_registry_release(registry);
}

static void driver_registry_get(api_call_t* call) {
  api_value(call, 1, "index");
  weft_driver_registry_t* registry = make_registry(call);
  if (!registry) return;
  const weft_driver_t* driver =
      weft_driver_registry_get(api_ptr(call, 0, "registry", registry), 0);
  if (call->broken_index < 0 && !driver) api_problem(call, "no driver 0");
  api_expect_neutral(call, driver == NULL, "%p, expected NULL",
                     (const void*)driver);
  weft_driver_registry_release(registry);
}

static void driver_registry_create_device(api_call_t* call) {
  weft_driver_registry_t* registry = make_registry(call);
  if (!registry) return;
  weft_device_t* device = NULL;
  api_status(call,
             weft_driver_registry_create_device(
                 api_ptr(call, 0, "registry", registry),
                 api_ptr(call, 1, "device_string", call->device_string),
                 api_allocator(call, 2, "allocator"),
                 api_out(call, 3, "out_device", &device, sizeof(device))));
  api_check_out(call, 3, &device, sizeof(device));
  if (api_ok(call)) weft_device_release(device);
  weft_driver_registry_release(registry);
}

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

const api_entry_t api_table_file[] = {
    {"weft_file_wrap_memory", file_wrap_memory, WEFT_STATUS_OK},
    {"weft_file_open", file_open, WEFT_STATUS_OK},
    {"weft_file_from_fd", file_from_fd, WEFT_STATUS_OK},
    {"weft_file_retain", file_retain, WEFT_STATUS_OK},
    {"weft_file_release", file_release, WEFT_STATUS_OK},
    {"weft_file_access", file_access, WEFT_STATUS_OK},
    {"weft_file_length", file_length, WEFT_STATUS_OK},
    {"weft_file_length_is_known", file_length_is_known, WEFT_STATUS_OK},
    {"weft_file_memory", file_memory, WEFT_STATUS_OK},
    {"weft_file_fd", file_fd, WEFT_STATUS_OK},
    {"weft_file_name", file_name, WEFT_STATUS_OK},
    {"weft_file_validate_read", file_validate_read, WEFT_STATUS_OK},
    {"weft_file_validate_write", file_validate_write, WEFT_STATUS_OK},
    {"weft_file_read", file_read, WEFT_STATUS_OK},
    {"weft_file_write", file_write, WEFT_STATUS_OK},
    {"weft_parameter_stream_options_initialize",
     parameter_stream_options_initialize, WEFT_STATUS_OK},
    {"weft_parameter_stream_start", parameter_stream_start, WEFT_STATUS_OK},
    {"weft_parameter_stream_cancel", parameter_stream_cancel, WEFT_STATUS_OK},
    {"weft_parameter_stream_wait", parameter_stream_wait, WEFT_STATUS_OK},
    {"weft_parameter_stream_progress", parameter_stream_progress,
     WEFT_STATUS_OK},
    {"weft_parameter_stream_direct_io_used", parameter_stream_direct_io_used,
     WEFT_STATUS_OK},
    {"weft_parameter_stream_release", parameter_stream_release, WEFT_STATUS_OK},
    {"weft_parameter_stream_load", parameter_stream_load, WEFT_STATUS_OK},
    {"weft_device_options_parse", device_options_parse, WEFT_STATUS_OK},
    {"weft_device_options_find", device_options_find, WEFT_STATUS_OK},
    {"weft_device_options_get_u32", device_options_get_u32, WEFT_STATUS_OK},
    {"weft_device_options_get_choice", device_options_get_choice,
     WEFT_STATUS_OK},
    {"weft_driver_registry_create", driver_registry_create, WEFT_STATUS_OK},
    {"weft_driver_registry_create_default", driver_registry_create_default,
     WEFT_STATUS_OK},
    {"weft_driver_registry_release", driver_registry_release, WEFT_STATUS_OK},
    {"weft_driver_registry_register", driver_registry_register, WEFT_STATUS_OK},
    {"weft_driver_registry_count", driver_registry_count, WEFT_STATUS_OK},
    {"weft_driver_registry_get", driver_registry_get, WEFT_STATUS_OK},
    {"weft_driver_registry_create_device", driver_registry_create_device,
     WEFT_STATUS_OK},
};
const size_t api_table_file_count =
    sizeof(api_table_file) / sizeof(api_table_file[0]);
