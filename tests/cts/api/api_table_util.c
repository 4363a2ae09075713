// Helpers for the api_null thunks (see api_table.h).
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api_table.h"
#include "cts.h"

#define API_WAIT_NS (5ll * 1000 * 1000 * 1000)

const char* api_variant_describe(api_variant_t variant) {
  switch (variant) {
    case API_VARIANT_NONE:
      return "nothing broken";
    case API_VARIANT_NULL:
      return "NULL";
    case API_VARIANT_LIST_SEMAPHORES_NULL:
      return "{count 1, semaphores NULL}";
    case API_VARIANT_LIST_VALUES_NULL:
      return "{count 1, values NULL}";
    case API_VARIANT_LIST_ENTRY_NULL:
      return "{count 1, semaphores[0] NULL}";
    case API_VARIANT_TABLE_BINDINGS_NULL:
      return "{count 1, bindings NULL}";
    case API_VARIANT_ALLOCATOR_NULL:
      return "{NULL, NULL}";
  }
  return "?";
}

static void append_text(char* text, const char* format, va_list args) {
  size_t used = strlen(text);
  if (used + 3 >= API_TEXT_CAPACITY) return;
  if (used > 0) {
    memcpy(text + used, "; ", 3);
    used += 2;
  }
  vsnprintf(text + used, API_TEXT_CAPACITY - used, format, args);
}

void api_problem(api_call_t* call, const char* format, ...) {
  va_list args;
  va_start(args, format);
  append_text(call->problems, format, args);
  va_end(args);
}

// Marks argument |index| consulted and checks its name against the header.
static void api_note(api_call_t* call, int index, const char* name) {
  const api_function_t* function = call->function;
  if (index < 0 || (uint32_t)index >= function->param_count) {
    api_problem(call, "table: %s has no argument %d (thunk says '%s')",
                function->name, index, name);
    return;
  }
  call->consulted |= 1u << index;
  if (strcmp(function->params[index].name, name) != 0) {
    api_problem(call,
                "table: argument %d of %s is '%s' in the header, the thunk "
                "calls it '%s'",
                index, function->name, function->params[index].name, name);
  }
}

static bool is_identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_';
}

bool api_text_has_word(const char* text, const char* word) {
  size_t length = strlen(word);
  if (length == 0) return false;
  for (const char* hit = strstr(text, word); hit; hit = strstr(hit + 1, word)) {
    bool starts = hit == text || !is_identifier_char(hit[-1]);
    bool ends = !is_identifier_char(hit[length]);
    if (starts && ends) return true;
  }
  return false;
}

bool api_is_broken(api_call_t* call, int index) {
  return call->broken_index == index;
}

void* api_ptr(api_call_t* call, int index, const char* name,
              const void* valid) {
  api_note(call, index, name);
  return api_is_broken(call, index) ? NULL : (void*)valid;
}

bool api_fn_present(api_call_t* call, int index, const char* name) {
  api_note(call, index, name);
  return !api_is_broken(call, index);
}

void api_value(api_call_t* call, int index, const char* name) {
  api_note(call, index, name);
}

weft_semaphore_list_t api_list(api_call_t* call, int index, const char* name,
                               weft_semaphore_list_t valid) {
  api_note(call, index, name);
  if (!api_is_broken(call, index)) return valid;
  weft_semaphore_list_t list = valid;
  list.count = 1;
  switch (call->variant) {
    case API_VARIANT_LIST_SEMAPHORES_NULL:
      list.semaphores = NULL;
      break;
    case API_VARIANT_LIST_VALUES_NULL:
      list.values = NULL;
      break;
    case API_VARIANT_LIST_ENTRY_NULL:
      call->null_entry[0] = NULL;
      list.semaphores = call->null_entry;
      break;
    default:
      api_problem(call, "table: list argument '%s' broken as %s", name,
                  api_variant_describe(call->variant));
      break;
  }
  return list;
}

weft_binding_table_t api_bindings(api_call_t* call, int index, const char* name,
                                  weft_binding_table_t valid) {
  api_note(call, index, name);
  if (!api_is_broken(call, index)) return valid;
  weft_binding_table_t table = {1, NULL};
  return table;
}

weft_allocator_t api_allocator(api_call_t* call, int index, const char* name) {
  api_note(call, index, name);
  if (!api_is_broken(call, index)) return call->allocator;
  weft_allocator_t none = {NULL, NULL};
  return none;
}

void* api_out(api_call_t* call, int index, const char* name, void* storage,
              size_t size) {
  api_note(call, index, name);
  if (api_is_broken(call, index)) return NULL;
  if (size == sizeof(void*)) {
    void* sentinel = (void*)(uintptr_t)0x1;
    memcpy(storage, &sentinel, sizeof(sentinel));
  } else {
    memset(storage, 0xA5, size);
  }
  return storage;
}

void api_check_out(api_call_t* call, int index, const void* storage,
                   size_t size) {
  if (api_is_broken(call, index) || !call->has_status || api_ok(call)) return;
  const uint8_t* bytes = (const uint8_t*)storage;
  for (size_t i = 0; i < size; ++i) {
    if (bytes[i] != 0) {
      char shown[40] = "";
      for (size_t j = 0; j < size && j < 8; ++j) {
        snprintf(shown + 2 * j, sizeof(shown) - 2 * j, "%02x", bytes[j]);
      }
      api_problem(call, "%s not cleared on failure (left bytes %s%s)",
                  call->function->params[index].name, shown,
                  size > 8 ? "..." : "");
      return;
    }
  }
}

bool api_status(api_call_t* call, weft_status_t status) {
  if (call->has_status) {
    api_problem(call, "table: the thunk recorded two statuses");
  }
  call->has_status = true;
  call->code = weft_status_code(status);
  weft_status_format(status, call->status_text, sizeof(call->status_text));
  weft_status_free(status);
  return call->code == WEFT_STATUS_OK;
}

bool api_ok(const api_call_t* call) {
  return call->has_status && call->code == WEFT_STATUS_OK;
}

void api_expect_neutral(api_call_t* call, bool neutral, const char* format,
                        ...) {
  if (call->broken_index < 0 || neutral) return;
  const api_param_t* param = &call->function->params[call->broken_index];
  if (param->is_nullable && call->variant == API_VARIANT_NULL) return;
  char text[512];
  va_list args;
  va_start(args, format);
  vsnprintf(text, sizeof(text), format, args);
  va_end(args);
  api_problem(call, "returned %s", text);
}

bool api_setup(api_call_t* call, weft_status_t status, const char* what) {
  if (weft_status_is_ok(status)) return true;
  char text[1024];
  weft_status_format(status, text, sizeof(text));
  weft_status_free(status);
  api_problem(call, "setup: %s failed: %s", what, text);
  return false;
}

weft_executable_t* api_kernels(api_call_t* call) {
  if (!call->kernels) {
    api_setup(call,
              weft_device_create_executable(
                  call->device,
                  weft_cts_kernel_source(weft_device_driver_name(call->device)),
                  &call->kernels),
              "weft_device_create_executable");
  }
  return call->kernels;
}

weft_buffer_t* api_make_buffer(api_call_t* call, weft_device_size_t length) {
  weft_buffer_params_t params = {0};
  weft_buffer_t* buffer = NULL;
  api_setup(call,
            weft_device_allocate_buffer(call->device, params, length, &buffer),
            "weft_device_allocate_buffer");
  return buffer;
}

weft_semaphore_t* api_make_semaphore(api_call_t* call, uint64_t value) {
  weft_semaphore_t* semaphore = NULL;
  api_setup(call, weft_device_create_semaphore(call->device, value, &semaphore),
            "weft_device_create_semaphore");
  return semaphore;
}

weft_file_t* api_make_memory_file(api_call_t* call, void* contents,
                                  uint64_t length) {
  weft_file_t* file = NULL;
  api_setup(call,
            weft_file_wrap_memory(
                WEFT_FILE_ACCESS_READ | WEFT_FILE_ACCESS_WRITE, contents,
                length, NULL, NULL, call->allocator, &file),
            "weft_file_wrap_memory");
  return file;
}

bool api_make_temp_file(api_call_t* call, uint64_t length, char* path) {
  strcpy(path, "/tmp/weft_api_null_XXXXXX");
  int fd = mkstemp(path);
  if (fd < 0) {
    api_problem(call, "setup: mkstemp: %s", strerror(errno));
    return false;
  }
  bool ok = ftruncate(fd, (off_t)length) == 0;
  if (!ok) api_problem(call, "setup: ftruncate: %s", strerror(errno));
  close(fd);
  if (!ok) unlink(path);
  return ok;
}

weft_fence_t* api_make_fence(api_call_t* call, weft_semaphore_t* semaphore,
                             uint64_t value) {
  weft_fence_t* fence = NULL;
  api_setup(call,
            weft_fence_create_at(semaphore, value, call->allocator, &fence),
            "weft_fence_create_at");
  return fence;
}

bool api_queue_initialize(api_call_t* call, api_queue_t* queue) {
  memset(queue, 0, sizeof(*queue));
  queue->wait_semaphores[0] = api_make_semaphore(call, 1);
  queue->wait_values[0] = 1;
  queue->signal_semaphores[0] = api_make_semaphore(call, 0);
  queue->signal_values[0] = 1;
  if (!queue->wait_semaphores[0] || !queue->signal_semaphores[0]) {
    weft_semaphore_release(queue->wait_semaphores[0]);
    weft_semaphore_release(queue->signal_semaphores[0]);
    memset(queue, 0, sizeof(*queue));
    return false;
  }
  weft_semaphore_set_name(queue->wait_semaphores[0], "api_wait");
  weft_semaphore_set_name(queue->signal_semaphores[0], "api_signal");
  return true;
}

weft_semaphore_list_t api_queue_wait_list(api_call_t* call, api_queue_t* queue,
                                          int index) {
  weft_semaphore_list_t list = {1, queue->wait_semaphores, queue->wait_values};
  return api_list(call, index, "wait_list", list);
}

weft_semaphore_list_t api_queue_signal_list(api_call_t* call,
                                            api_queue_t* queue, int index) {
  weft_semaphore_list_t list = {1, queue->signal_semaphores,
                                queue->signal_values};
  return api_list(call, index, "signal_list", list);
}

void api_check_untouched(api_call_t* call, weft_semaphore_t* semaphore,
                         uint64_t value, const char* what) {
  uint64_t now = 0;
  weft_status_t status = weft_semaphore_query(semaphore, &now);
  if (!weft_status_is_ok(status)) {
    char text[512];
    weft_status_format(status, text, sizeof(text));
    api_problem(call, "%s was failed: %s", what, text);
  } else if (now != value) {
    api_problem(call, "%s moved from %llu to %llu", what,
                (unsigned long long)value, (unsigned long long)now);
  }
  weft_status_free(status);
}

void api_queue_finish(api_call_t* call, api_queue_t* queue) {
  weft_semaphore_t* signal = queue->signal_semaphores[0];
  if (api_ok(call)) {
    weft_status_t status =
        weft_semaphore_wait(signal, 1, weft_timeout_relative(API_WAIT_NS));
    if (!weft_status_is_ok(status)) {
      char text[512];
      weft_status_format(status, text, sizeof(text));
      api_problem(call, "the accepted operation did not signal: %s", text);
    }
    weft_status_free(status);
  } else {
    api_check_untouched(call, signal, 0, "the signal semaphore");
    api_check_untouched(call, queue->wait_semaphores[0], 1,
                        "the wait semaphore");
  }
  weft_semaphore_release(queue->wait_semaphores[0]);
  weft_semaphore_release(signal);
  memset(queue, 0, sizeof(*queue));
}
