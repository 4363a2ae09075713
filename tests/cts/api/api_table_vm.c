// api_null table: vm/value.h, vm/list.h, vm/module.h, vm/context.h,
// vm/invocation.h, vm/loop.h, vm/hal.h, vm/tensor_type.h.
//
// Thunks build what they need through the public API: a small module from
// text (kApiModule), the hal module on the case's device, a context of
// both, lists, bytes, loops and buffer views. The wait-frame functions are
// called from inside a native function the thunk runs.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api_table.h"

// Module "api": add (scalars), and wait (awaits a fence through the hal
// module: a native call that yields).
static const char kApiModule[] =
    "module api\n"
    "import hal.fence.await (r<hal.fence>?, i64) -> (i32)\n"
    "func @add(i32, i32) -> (i32) export\n"
    "  add.i32 s2, s0, s1\n"
    "  ret (s2)\n"
    "end\n"
    "func @wait(r<hal.fence>?) -> (i32) export\n"
    "  const.i64 s0, -1\n"
    "  call.import hal.fence.await(r0, s0) -> (s1)\n"
    "  ret (s1)\n"
    "end\n";

// Module "decl": one function with declared values (vm/tensor_type.h).
static const char kDeclModule[] =
    "module decl\n"
    "func @scale(r<hal.buffer_view>, i32) -> (r<hal.buffer_view>) export\n"
    "  arg x: Kx4 f32\n"
    "  arg factor\n"
    "  result y: Kx4 f32\n"
    "  ret (r0)\n"
    "end\n";

#define API_BUFFER_LENGTH 256

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

// Module "api" loaded from kApiModule, or NULL.
static weft_vm_module_t* make_module(api_call_t* call) {
  weft_vm_module_t* module = NULL;
  api_setup(call,
            weft_vm_module_load_bytes("api.wvm", kApiModule,
                                      strlen(kApiModule), call->allocator,
                                      &module),
            "weft_vm_module_load_bytes");
  return module;
}

// The hal module with the case's device as its default, or NULL.
static weft_vm_module_t* make_hal(api_call_t* call) {
  weft_hal_module_options_t options = {.device = call->device};
  weft_vm_module_t* hal = NULL;
  api_setup(call, weft_hal_module_create(&options, call->allocator, &hal),
            "weft_hal_module_create");
  return hal;
}

// Module "api" and the hal module linked in a context.
typedef struct api_vm_t {
  weft_vm_module_t* modules[2];  // api, hal
  weft_vm_context_t* context;
} api_vm_t;

static bool vm_initialize(api_call_t* call, api_vm_t* vm) {
  memset(vm, 0, sizeof(*vm));
  vm->modules[0] = make_module(call);
  vm->modules[1] = vm->modules[0] ? make_hal(call) : NULL;
  if (vm->modules[1]) {
    api_setup(call,
              weft_vm_context_create(vm->modules, 2, call->allocator,
                                     &vm->context),
              "weft_vm_context_create");
  }
  return vm->context != NULL;
}

static void vm_deinitialize(api_vm_t* vm) {
  weft_vm_context_release(vm->context);
  weft_vm_module_release(vm->modules[1]);
  weft_vm_module_release(vm->modules[0]);
  memset(vm, 0, sizeof(*vm));
}

// A list of one i64, 7, or NULL.
static weft_vm_list_t* make_list(api_call_t* call) {
  weft_vm_list_t* list = NULL;
  if (!api_setup(call, weft_vm_list_create(call->allocator, 1, &list),
                 "weft_vm_list_create")) {
    return NULL;
  }
  const weft_vm_value_t seven = weft_vm_value_i64(7);
  if (!api_setup(call, weft_vm_list_resize(list, 1), "weft_vm_list_resize") ||
      !api_setup(call, weft_vm_list_set(list, 0, &seven), "weft_vm_list_set")) {
    weft_vm_list_release(list);
    list = NULL;
  }
  return list;
}

// Bytes holding "api", or NULL.
static weft_vm_bytes_t* make_bytes(api_call_t* call) {
  weft_vm_bytes_t* bytes = NULL;
  api_setup(call, weft_vm_bytes_create(call->allocator, "api", 3, &bytes),
            "weft_vm_bytes_create");
  return bytes;
}

// A loop, or NULL.
static weft_vm_loop_t* make_loop(api_call_t* call) {
  weft_vm_loop_options_t options = {0};
  weft_vm_loop_t* loop = NULL;
  api_setup(call, weft_vm_loop_create(options, call->allocator, &loop),
            "weft_vm_loop_create");
  return loop;
}

// A 4x4 f32 view of a fresh buffer at byte offset 16, or NULL; the buffer
// goes to |*out_buffer| (the caller's reference).
static weft_hal_buffer_view_t* make_view(api_call_t* call,
                                         weft_buffer_t** out_buffer) {
  *out_buffer = api_make_buffer(call, API_BUFFER_LENGTH);
  if (!*out_buffer) return NULL;
  const int64_t shape[2] = {4, 4};
  weft_hal_buffer_view_t* view = NULL;
  api_setup(call,
            weft_hal_buffer_view_create(*out_buffer, 16,
                                        WEFT_HAL_ELEMENT_TYPE_F32, 2, shape,
                                        call->allocator, &view),
            "weft_hal_buffer_view_create");
  return view;
}

// What an invocation on the loop ended with.
typedef struct loop_done_t {
  int calls;
  weft_status_code_t code;
  int32_t result;
} loop_done_t;

static void loop_done(void* user_data, weft_vm_loop_invocation_t* invocation,
                      weft_status_t status, weft_vm_value_t* results,
                      uint32_t result_count) {
  loop_done_t* done = (loop_done_t*)user_data;
  if (done) {
    ++done->calls;
    done->code = weft_status_code(status);
    done->result = result_count ? results[0].i32 : -1;
  }
  weft_status_free(status);
  for (uint32_t i = 0; i < result_count; ++i) {
    weft_vm_value_release(&results[i]);
  }
}

// Submits api.add(40, 2) to |loop|, checked as a setup step.
static bool submit_add(api_call_t* call, weft_vm_loop_t* loop, api_vm_t* vm,
                       loop_done_t* done) {
  const weft_vm_value_t args[2] = {weft_vm_value_i32(40),
                                   weft_vm_value_i32(2)};
  return api_setup(call,
                   weft_vm_loop_submit(loop, vm->context, "api.add", args, 2,
                                       1, loop_done, done, NULL),
                   "weft_vm_loop_submit");
}

//===----------------------------------------------------------------------===//
// vm/value.h
//===----------------------------------------------------------------------===//

static void value_type_name(api_call_t* call) {
  api_value(call, 0, "type");
  const char* name = weft_vm_value_type_name(WEFT_VM_TYPE_F32);
  if (strcmp(name, "f32") != 0) api_problem(call, "returned '%s'", name);
}

//===----------------------------------------------------------------------===//
// vm/list.h
//===----------------------------------------------------------------------===//

static void list_create(api_call_t* call) {
  api_value(call, 1, "capacity");
  weft_vm_list_t* list = NULL;
  api_status(call,
             weft_vm_list_create(api_allocator(call, 0, "allocator"), 4,
                                 api_out(call, 2, "out_list", &list,
                                         sizeof(list))));
  api_check_out(call, 2, &list, sizeof(list));
  if (api_ok(call)) weft_vm_list_release(list);
}

static void list_retain(api_call_t* call) {
  weft_vm_list_t* list = make_list(call);
  if (!list) return;
  weft_vm_list_retain(api_ptr(call, 0, "list", list));
  if (!api_is_broken(call, 0)) weft_vm_list_release(list);
  weft_vm_list_release(list);
}

static void list_release(api_call_t* call) {
  weft_vm_list_t* list = make_list(call);
  if (!list) return;
  weft_vm_list_release(api_ptr(call, 0, "list", list));
  if (api_is_broken(call, 0)) weft_vm_list_release(list);
}

static void list_size(api_call_t* call) {
  weft_vm_list_t* list = make_list(call);
  if (!list) return;
  uint32_t size = weft_vm_list_size(api_ptr(call, 0, "list", list));
  if (call->broken_index < 0 && size != 1) {
    api_problem(call, "size %u, expected 1", size);
  }
  api_expect_neutral(call, size == 0, "%u, expected 0", size);
  weft_vm_list_release(list);
}

static void list_resize(api_call_t* call) {
  api_value(call, 1, "size");
  weft_vm_list_t* list = make_list(call);
  if (!list) return;
  api_status(call, weft_vm_list_resize(api_ptr(call, 0, "list", list), 3));
  const uint32_t expected = api_ok(call) ? 3 : 1;
  if (weft_vm_list_size(list) != expected) {
    api_problem(call, "size %u, expected %u", weft_vm_list_size(list),
                expected);
  }
  weft_vm_list_release(list);
}

static void list_get(api_call_t* call) {
  api_value(call, 1, "index");
  api_value(call, 2, "type");
  weft_vm_list_t* list = make_list(call);
  if (!list) return;
  weft_vm_value_t value;
  api_status(call, weft_vm_list_get(api_ptr(call, 0, "list", list), 0,
                                    WEFT_VM_TYPE_I64,
                                    api_out(call, 3, "out_value", &value,
                                            sizeof(value))));
  api_check_out(call, 3, &value, sizeof(value));
  if (api_ok(call) && (value.type != WEFT_VM_TYPE_I64 || value.i64 != 7)) {
    api_problem(call, "read type %d value %lld, expected i64 7",
                (int)value.type, (long long)value.i64);
  }
  weft_vm_list_release(list);
}

static void list_set(api_call_t* call) {
  api_value(call, 1, "index");
  weft_vm_list_t* list = make_list(call);
  if (!list) return;
  const weft_vm_value_t eight = weft_vm_value_i64(8);
  api_status(call, weft_vm_list_set(api_ptr(call, 0, "list", list), 0,
                                    api_ptr(call, 2, "value", &eight)));
  weft_vm_value_t value = weft_vm_value_i32(0);
  weft_status_ignore(weft_vm_list_get(list, 0, WEFT_VM_TYPE_I64, &value));
  const int64_t expected = api_ok(call) ? 8 : 7;
  if (value.i64 != expected) {
    api_problem(call, "element 0 is %lld, expected %lld",
                (long long)value.i64, (long long)expected);
  }
  weft_vm_list_release(list);
}

static void bytes_create(api_call_t* call) {
  api_value(call, 2, "length");
  weft_vm_bytes_t* bytes = NULL;
  api_status(call, weft_vm_bytes_create(
                       api_allocator(call, 0, "allocator"),
                       api_ptr(call, 1, "data", "abc"), 3,
                       api_out(call, 3, "out_bytes", &bytes, sizeof(bytes))));
  api_check_out(call, 3, &bytes, sizeof(bytes));
  if (api_ok(call)) weft_vm_bytes_release(bytes);
}

static void bytes_retain(api_call_t* call) {
  weft_vm_bytes_t* bytes = make_bytes(call);
  if (!bytes) return;
  weft_vm_bytes_retain(api_ptr(call, 0, "bytes", bytes));
  if (!api_is_broken(call, 0)) weft_vm_bytes_release(bytes);
  weft_vm_bytes_release(bytes);
}

static void bytes_release(api_call_t* call) {
  weft_vm_bytes_t* bytes = make_bytes(call);
  if (!bytes) return;
  weft_vm_bytes_release(api_ptr(call, 0, "bytes", bytes));
  if (api_is_broken(call, 0)) weft_vm_bytes_release(bytes);
}

static void bytes_data(api_call_t* call) {
  weft_vm_bytes_t* bytes = make_bytes(call);
  if (!bytes) return;
  const uint8_t* data = weft_vm_bytes_data(api_ptr(call, 0, "bytes", bytes));
  if (call->broken_index < 0 && (!data || memcmp(data, "api", 3) != 0)) {
    api_problem(call, "the data is not \"api\"");
  }
  api_expect_neutral(call, data == NULL, "%p, expected NULL",
                     (const void*)data);
  weft_vm_bytes_release(bytes);
}

static void bytes_length(api_call_t* call) {
  weft_vm_bytes_t* bytes = make_bytes(call);
  if (!bytes) return;
  size_t length = weft_vm_bytes_length(api_ptr(call, 0, "bytes", bytes));
  if (call->broken_index < 0 && length != 3) {
    api_problem(call, "length %zu, expected 3", length);
  }
  api_expect_neutral(call, length == 0, "%zu, expected 0", length);
  weft_vm_bytes_release(bytes);
}

//===----------------------------------------------------------------------===//
// vm/module.h
//===----------------------------------------------------------------------===//

static void module_load_bytes(api_call_t* call) {
  api_value(call, 2, "length");
  weft_vm_module_t* module = NULL;
  api_status(call, weft_vm_module_load_bytes(
                       api_ptr(call, 0, "name", "api.wvm"),
                       api_ptr(call, 1, "data", kApiModule),
                       strlen(kApiModule), api_allocator(call, 3, "allocator"),
                       api_out(call, 4, "out_module", &module,
                               sizeof(module))));
  api_check_out(call, 4, &module, sizeof(module));
  if (api_ok(call)) weft_vm_module_release(module);
}

static void module_load_file(api_call_t* call) {
  char path[64] = "/tmp/weft_api_null_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) {
    api_problem(call, "setup: mkstemp failed");
    return;
  }
  const size_t length = strlen(kApiModule);
  const bool written = write(fd, kApiModule, length) == (ssize_t)length;
  close(fd);
  if (!written) {
    api_problem(call, "setup: writing %s failed", path);
  } else {
    weft_vm_module_t* module = NULL;
    api_status(call, weft_vm_module_load_file(
                         api_ptr(call, 0, "path", path),
                         api_allocator(call, 1, "allocator"),
                         api_out(call, 2, "out_module", &module,
                                 sizeof(module))));
    api_check_out(call, 2, &module, sizeof(module));
    if (api_ok(call)) weft_vm_module_release(module);
  }
  unlink(path);
}

static weft_status_t native_nop(weft_vm_native_call_t* native_call) {
  return WEFT_OK;
}

static const weft_vm_native_function_t kNopFunctions[] = {
    {"nop", "() -> ()", native_nop},
};

static void module_create_native(api_call_t* call) {
  const weft_vm_native_module_def_t def = {
      .name = "native",
      .function_count = 1,
      .functions = kNopFunctions,
  };
  weft_vm_module_t* module = NULL;
  api_status(call, weft_vm_module_create_native(
                       api_allocator(call, 0, "allocator"),
                       api_ptr(call, 1, "def", &def),
                       api_out(call, 2, "out_module", &module,
                               sizeof(module))));
  api_check_out(call, 2, &module, sizeof(module));
  if (api_ok(call) && weft_vm_module_function_count(module) != 1) {
    api_problem(call, "the module has %u functions, expected 1",
                weft_vm_module_function_count(module));
  }
  if (api_ok(call)) weft_vm_module_release(module);
}

static void module_retain(api_call_t* call) {
  weft_vm_module_t* module = make_module(call);
  if (!module) return;
  weft_vm_module_retain(api_ptr(call, 0, "module", module));
  if (!api_is_broken(call, 0)) weft_vm_module_release(module);
  weft_vm_module_release(module);
}

static void module_release(api_call_t* call) {
  weft_vm_module_t* module = make_module(call);
  if (!module) return;
  weft_vm_module_release(api_ptr(call, 0, "module", module));
  if (api_is_broken(call, 0)) weft_vm_module_release(module);
}

static void module_name(api_call_t* call) {
  weft_vm_module_t* module = make_module(call);
  if (!module) return;
  const char* name = weft_vm_module_name(api_ptr(call, 0, "module", module));
  if (call->broken_index < 0 && strcmp(name, "api") != 0) {
    api_problem(call, "returned '%s', expected 'api'", name);
  }
  api_expect_neutral(call, name && !name[0], "'%s', expected \"\"",
                     name ? name : "(null)");
  weft_vm_module_release(module);
}

static void module_function_count(api_call_t* call) {
  weft_vm_module_t* module = make_module(call);
  if (!module) return;
  uint32_t count =
      weft_vm_module_function_count(api_ptr(call, 0, "module", module));
  if (call->broken_index < 0 && count != 2) {
    api_problem(call, "returned %u, expected 2", count);
  }
  api_expect_neutral(call, count == 0, "%u, expected 0", count);
  weft_vm_module_release(module);
}

static void module_function_name(api_call_t* call) {
  api_value(call, 1, "index");
  weft_vm_module_t* module = make_module(call);
  if (!module) return;
  const char* name =
      weft_vm_module_function_name(api_ptr(call, 0, "module", module), 1);
  if (call->broken_index < 0 && strcmp(name, "wait") != 0) {
    api_problem(call, "returned '%s', expected 'wait'", name);
  }
  if (call->broken_index < 0 &&
      weft_vm_module_function_name(module, 2)[0] != '\0') {
    api_problem(call, "an index past the count does not give \"\"");
  }
  api_expect_neutral(call, name && !name[0], "'%s', expected \"\"",
                     name ? name : "(null)");
  weft_vm_module_release(module);
}

static void module_function_signature_text(api_call_t* call) {
  api_value(call, 1, "index");
  api_value(call, 3, "capacity");
  weft_vm_module_t* module = make_module(call);
  if (!module) return;
  static const char kExpected[] = "(i32,i32)->(i32)";
  char text[64] = "untouched";
  size_t length = weft_vm_module_function_signature_text(
      api_ptr(call, 0, "module", module), 0, api_ptr(call, 2, "buffer", text),
      sizeof(text));
  if (call->broken_index < 0 && strcmp(text, kExpected) != 0) {
    api_problem(call, "wrote '%s', expected '%s'", text, kExpected);
  }
  if (!api_is_broken(call, 0) && length != strlen(kExpected)) {
    api_problem(call, "returned %zu, expected %zu", length, strlen(kExpected));
  }
  api_expect_neutral(call, length == 0, "%zu, expected 0", length);
  weft_vm_module_release(module);
}

static void module_lookup(api_call_t* call) {
  weft_vm_module_t* module = make_module(call);
  if (!module) return;
  uint32_t index = 0;
  api_status(call, weft_vm_module_lookup(
                       api_ptr(call, 0, "module", module),
                       api_ptr(call, 1, "name", "wait"),
                       api_out(call, 2, "out_index", &index, sizeof(index))));
  api_check_out(call, 2, &index, sizeof(index));
  if (api_ok(call) && index != 1) {
    api_problem(call, "index %u, expected 1", index);
  }
  weft_vm_module_release(module);
}

// The wait-frame functions are called from a native function ("frame.wait",
// run with weft_vm_invoke_sync) that waits on |semaphore|, already at 1.
typedef struct frame_test_t {
  api_call_t* call;
  weft_semaphore_t* semaphore;
  // Which function the thunk breaks: begin or add.
  bool test_begin;
} frame_test_t;

static weft_status_t frame_create_state(void* user_data,
                                        weft_allocator_t allocator,
                                        void** out_state) {
  *out_state = user_data;
  return WEFT_OK;
}

static weft_status_t frame_wait(weft_vm_native_call_t* native_call) {
  frame_test_t* test = (frame_test_t*)native_call->module_state;
  api_call_t* call = test->call;
  if (native_call->pc == 1) {
    // Resumed: the wait's result is ours.
    weft_status_t result = native_call->wait_result;
    native_call->wait_result = WEFT_OK;
    return result;
  }
  weft_status_t status = WEFT_OK;
  if (test->test_begin) {
    api_value(call, 1, "mode");
    api_value(call, 2, "deadline");
    weft_vm_wait_frame_begin(api_ptr(call, 0, "call", native_call),
                             WEFT_WAIT_MODE_ALL, WEFT_TIME_INFINITE_FUTURE);
    // A begin that did nothing leaves nothing to wait for.
    if (api_is_broken(call, 0)) return WEFT_OK;
    status = weft_vm_wait_frame_add(native_call, test->semaphore, 1);
  } else {
    api_value(call, 2, "value");
    weft_vm_wait_frame_begin(native_call, WEFT_WAIT_MODE_ALL,
                             WEFT_TIME_INFINITE_FUTURE);
    if (!api_status(call, weft_vm_wait_frame_add(
                              api_ptr(call, 0, "call", native_call),
                              api_ptr(call, 1, "semaphore", test->semaphore),
                              1))) {
      return WEFT_OK;
    }
  }
  if (weft_status_is_ok(status)) {
    native_call->pc = 1;
    status = weft_status_from_code(WEFT_STATUS_DEFERRED);
  }
  return status;
}

static const weft_vm_native_function_t kFrameFunctions[] = {
    {"wait", "() -> ()", frame_wait},
};

static void wait_frame_run(api_call_t* call, bool test_begin) {
  frame_test_t test = {call, api_make_semaphore(call, 1), test_begin};
  if (!test.semaphore) return;
  const weft_vm_native_module_def_t def = {
      .name = "frame",
      .function_count = 1,
      .functions = kFrameFunctions,
      .create_state = frame_create_state,
      .user_data = &test,
  };
  weft_vm_module_t* module = NULL;
  weft_vm_context_t* context = NULL;
  if (api_setup(call,
                weft_vm_module_create_native(call->allocator, &def, &module),
                "weft_vm_module_create_native") &&
      api_setup(call,
                weft_vm_context_create(&module, 1, call->allocator, &context),
                "weft_vm_context_create")) {
    api_setup(call,
              weft_vm_invoke_sync(context, "frame.wait", NULL, 0, NULL, 0, 0,
                                  call->allocator),
              "weft_vm_invoke_sync(frame.wait)");
  }
  weft_vm_context_release(context);
  weft_vm_module_release(module);
  weft_semaphore_release(test.semaphore);
}

static void wait_frame_begin(api_call_t* call) { wait_frame_run(call, true); }

static void wait_frame_add(api_call_t* call) { wait_frame_run(call, false); }

//===----------------------------------------------------------------------===//
// vm/context.h
//===----------------------------------------------------------------------===//

static void context_create(api_call_t* call) {
  api_value(call, 1, "module_count");
  weft_vm_module_t* modules[2] = {make_module(call), NULL};
  modules[1] = modules[0] ? make_hal(call) : NULL;
  if (modules[1]) {
    weft_vm_context_t* context = NULL;
    api_status(call, weft_vm_context_create(
                         api_ptr(call, 0, "modules", modules), 2,
                         api_allocator(call, 2, "allocator"),
                         api_out(call, 3, "out_context", &context,
                                 sizeof(context))));
    api_check_out(call, 3, &context, sizeof(context));
    if (api_ok(call)) weft_vm_context_release(context);
  }
  weft_vm_module_release(modules[1]);
  weft_vm_module_release(modules[0]);
}

static void context_retain(api_call_t* call) {
  api_vm_t vm;
  if (vm_initialize(call, &vm)) {
    weft_vm_context_retain(api_ptr(call, 0, "context", vm.context));
    if (!api_is_broken(call, 0)) weft_vm_context_release(vm.context);
  }
  vm_deinitialize(&vm);
}

static void context_release(api_call_t* call) {
  api_vm_t vm;
  if (vm_initialize(call, &vm)) {
    weft_vm_context_release(api_ptr(call, 0, "context", vm.context));
    if (!api_is_broken(call, 0)) vm.context = NULL;
  }
  vm_deinitialize(&vm);
}

static void context_lookup(api_call_t* call) {
  api_vm_t vm;
  if (vm_initialize(call, &vm)) {
    weft_vm_module_t* module = NULL;
    uint32_t index = 0;
    api_status(call,
               weft_vm_context_lookup(
                   api_ptr(call, 0, "context", vm.context),
                   api_ptr(call, 1, "qualified_name", "api.wait"),
                   api_out(call, 2, "out_module", &module, sizeof(module)),
                   api_out(call, 3, "out_function_index", &index,
                           sizeof(index))));
    api_check_out(call, 2, &module, sizeof(module));
    api_check_out(call, 3, &index, sizeof(index));
    if (api_ok(call) && (module != vm.modules[0] || index != 1)) {
      api_problem(call, "found function %u of module '%s', expected api.wait",
                  index, weft_vm_module_name(module));
    }
  }
  vm_deinitialize(&vm);
}

//===----------------------------------------------------------------------===//
// vm/invocation.h
//===----------------------------------------------------------------------===//

static void invoke_sync(api_call_t* call) {
  api_value(call, 3, "arg_count");
  api_value(call, 5, "result_count");
  api_value(call, 6, "max_depth");
  api_vm_t vm;
  if (vm_initialize(call, &vm)) {
    const weft_vm_value_t args[2] = {weft_vm_value_i32(40),
                                     weft_vm_value_i32(2)};
    weft_vm_value_t results[1];
    memset(results, 0xA5, sizeof(results));
    api_status(call, weft_vm_invoke_sync(
                         api_ptr(call, 0, "context", vm.context),
                         api_ptr(call, 1, "qualified_name", "api.add"),
                         api_ptr(call, 2, "args", args), 2,
                         api_ptr(call, 4, "results", results), 1, 0,
                         api_allocator(call, 7, "allocator")));
    api_check_out(call, 4, results, sizeof(results));
    if (api_ok(call) && results[0].i32 != 42) {
      api_problem(call, "api.add(40, 2) returned %d", results[0].i32);
    }
  }
  vm_deinitialize(&vm);
}

//===----------------------------------------------------------------------===//
// vm/loop.h
//===----------------------------------------------------------------------===//

static void loop_create(api_call_t* call) {
  api_value(call, 0, "options");
  weft_vm_loop_options_t options = {0};
  weft_vm_loop_t* loop = NULL;
  api_status(call,
             weft_vm_loop_create(options, api_allocator(call, 1, "allocator"),
                                 api_out(call, 2, "out_loop", &loop,
                                         sizeof(loop))));
  api_check_out(call, 2, &loop, sizeof(loop));
  if (api_ok(call)) weft_vm_loop_destroy(loop);
}

static void loop_destroy(api_call_t* call) {
  api_vm_t vm;
  weft_vm_loop_t* loop = NULL;
  loop_done_t done = {0, WEFT_STATUS_OK, 0};
  if (vm_initialize(call, &vm) && (loop = make_loop(call)) &&
      submit_add(call, loop, &vm, &done)) {
    // Destroying a loop with a live invocation cancels it.
    weft_vm_loop_destroy(api_ptr(call, 0, "loop", loop));
    if (!api_is_broken(call, 0)) {
      loop = NULL;
      if (done.calls != 1 || done.code != WEFT_STATUS_CANCELLED) {
        api_problem(call, "done ran %d times with %s, expected once with "
                    "CANCELLED", done.calls,
                    weft_status_code_string(done.code));
      }
    }
  }
  weft_vm_loop_destroy(loop);
  vm_deinitialize(&vm);
}

static void loop_submit(api_call_t* call) {
  api_value(call, 4, "arg_count");
  api_value(call, 5, "result_count");
  api_vm_t vm;
  weft_vm_loop_t* loop = NULL;
  loop_done_t done = {0, WEFT_STATUS_OK, 0};
  if (vm_initialize(call, &vm) && (loop = make_loop(call))) {
    const weft_vm_value_t args[2] = {weft_vm_value_i32(40),
                                     weft_vm_value_i32(2)};
    weft_vm_loop_invocation_t* invocation = NULL;
    api_status(call,
               weft_vm_loop_submit(
                   api_ptr(call, 0, "loop", loop),
                   api_ptr(call, 1, "context", vm.context),
                   api_ptr(call, 2, "qualified_name", "api.add"),
                   api_ptr(call, 3, "args", args), 2, 1,
                   api_fn_present(call, 6, "done") ? loop_done : NULL,
                   api_ptr(call, 7, "user_data", &done),
                   api_out(call, 8, "out_invocation", &invocation,
                           sizeof(invocation))));
    api_check_out(call, 8, &invocation, sizeof(invocation));
    if (api_ok(call)) {
      api_setup(call, weft_vm_loop_run(loop, WEFT_TIME_INFINITE_FUTURE),
                "weft_vm_loop_run");
      const int expected_calls = api_is_broken(call, 7) ? 0 : 1;
      if (done.calls != expected_calls ||
          (expected_calls && (done.code != WEFT_STATUS_OK ||
                              done.result != 42))) {
        api_problem(call, "done ran %d times (%s, result %d)", done.calls,
                    weft_status_code_string(done.code), done.result);
      }
    } else if (weft_vm_loop_live_count(loop) != 0) {
      api_problem(call, "a refused submit left %u invocations live",
                  weft_vm_loop_live_count(loop));
    }
  }
  weft_vm_loop_destroy(loop);
  vm_deinitialize(&vm);
}

static void loop_cancel(api_call_t* call) {
  api_vm_t vm;
  weft_vm_loop_t* loop = NULL;
  weft_semaphore_t* semaphore = NULL;
  weft_fence_t* fence = NULL;
  loop_done_t done = {0, WEFT_STATUS_OK, 0};
  weft_vm_value_t arg = weft_vm_value_ref(weft_vm_ref_null());
  weft_vm_loop_invocation_t* invocation = NULL;
  if (vm_initialize(call, &vm) && (loop = make_loop(call)) &&
      (semaphore = api_make_semaphore(call, 0)) &&
      (fence = api_make_fence(call, semaphore, 1)) &&
      api_setup(call, weft_hal_module_wrap(fence, &arg.ref),
                "weft_hal_module_wrap") &&
      api_setup(call,
                weft_vm_loop_submit(loop, vm.context, "api.wait", &arg, 1, 1,
                                    loop_done, &done, &invocation),
                "weft_vm_loop_submit")) {
    // Runs it until it waits on the fence (a deadline already passed).
    weft_status_ignore(weft_vm_loop_run(loop, 0));
    weft_vm_loop_cancel(api_ptr(call, 0, "loop", loop),
                        api_ptr(call, 1, "invocation", invocation));
    // A cancel that did nothing: the fence lets the invocation end.
    if (call->broken_index >= 0) {
      api_setup(call, weft_semaphore_signal(semaphore, 1),
                "weft_semaphore_signal");
    }
    api_setup(call, weft_vm_loop_run(loop, WEFT_TIME_INFINITE_FUTURE),
              "weft_vm_loop_run");
    const weft_status_code_t expected = call->broken_index < 0
                                            ? WEFT_STATUS_CANCELLED
                                            : WEFT_STATUS_OK;
    if (done.calls != 1 || done.code != expected) {
      api_problem(call, "done ran %d times with %s, expected once with %s",
                  done.calls, weft_status_code_string(done.code),
                  weft_status_code_string(expected));
    }
  }
  weft_vm_loop_destroy(loop);
  weft_fence_release(fence);
  weft_semaphore_release(semaphore);
  vm_deinitialize(&vm);
}

static void loop_run(api_call_t* call) {
  api_value(call, 1, "deadline");
  api_vm_t vm;
  weft_vm_loop_t* loop = NULL;
  loop_done_t done = {0, WEFT_STATUS_OK, 0};
  if (vm_initialize(call, &vm) && (loop = make_loop(call)) &&
      submit_add(call, loop, &vm, &done)) {
    api_status(call, weft_vm_loop_run(api_ptr(call, 0, "loop", loop),
                                      WEFT_TIME_INFINITE_FUTURE));
    if (api_ok(call) && (done.calls != 1 || done.result != 42)) {
      api_problem(call, "done ran %d times (result %d)", done.calls,
                  done.result);
    }
  }
  weft_vm_loop_destroy(loop);
  vm_deinitialize(&vm);
}

static void loop_run_ready(api_call_t* call) {
  api_vm_t vm;
  weft_vm_loop_t* loop = NULL;
  loop_done_t done = {0, WEFT_STATUS_OK, 0};
  weft_time_t next = 0;
  if (vm_initialize(call, &vm) && (loop = make_loop(call)) &&
      submit_add(call, loop, &vm, &done)) {
    api_status(call, weft_vm_loop_run_ready(
                         api_ptr(call, 0, "loop", loop),
                         api_ptr(call, 1, "out_next_deadline", &next)));
    if (api_ok(call) &&
        (done.calls != 1 || done.result != 42 ||
         next != WEFT_TIME_INFINITE_FUTURE)) {
      api_problem(call, "done ran %d times (result %d), next deadline %lld",
                  done.calls, done.result, (long long)next);
    }
  }
  weft_vm_loop_destroy(loop);
  vm_deinitialize(&vm);
}

static void loop_live_count(api_call_t* call) {
  api_vm_t vm;
  weft_vm_loop_t* loop = NULL;
  loop_done_t done = {0, WEFT_STATUS_OK, 0};
  if (vm_initialize(call, &vm) && (loop = make_loop(call)) &&
      submit_add(call, loop, &vm, &done)) {
    uint32_t count = weft_vm_loop_live_count(api_ptr(call, 0, "loop", loop));
    if (call->broken_index < 0 && count != 1) {
      api_problem(call, "returned %u, expected 1", count);
    }
    api_expect_neutral(call, count == 0, "%u, expected 0", count);
  }
  weft_vm_loop_destroy(loop);
  vm_deinitialize(&vm);
}

//===----------------------------------------------------------------------===//
// vm/hal.h
//===----------------------------------------------------------------------===//

static void hal_module_create(api_call_t* call) {
  weft_hal_module_options_t options = {.device = call->device};
  weft_vm_module_t* module = NULL;
  api_status(call, weft_hal_module_create(
                       api_ptr(call, 0, "options", &options),
                       api_allocator(call, 1, "allocator"),
                       api_out(call, 2, "out_module", &module,
                               sizeof(module))));
  api_check_out(call, 2, &module, sizeof(module));
  if (api_ok(call) && strcmp(weft_vm_module_name(module), "hal") != 0) {
    api_problem(call, "the module is named '%s'", weft_vm_module_name(module));
  }
  if (api_ok(call)) weft_vm_module_release(module);
}

static void hal_module_wrap(api_call_t* call) {
  weft_vm_ref_t ref;
  api_status(call, weft_hal_module_wrap(
                       api_ptr(call, 0, "object", call->device),
                       api_out(call, 1, "out_ref", &ref, sizeof(ref))));
  api_check_out(call, 1, &ref, sizeof(ref));
  const bool broke_object = api_is_broken(call, 0);
  if (api_ok(call) && !broke_object &&
      (ref.object != call->device || ref.type != &kWeftHalDeviceType)) {
    api_problem(call, "the ref is not the device's");
  }
  if (api_ok(call) && broke_object && !weft_vm_ref_is_null(ref)) {
    api_problem(call, "a NULL object did not give the null ref");
  }
}

static void hal_module_unwrap(api_call_t* call) {
  api_value(call, 0, "ref");
  weft_vm_ref_t ref;
  if (!api_setup(call, weft_hal_module_wrap(call->device, &ref),
                 "weft_hal_module_wrap")) {
    return;
  }
  void* object =
      weft_hal_module_unwrap(ref, api_ptr(call, 1, "type", &kWeftHalDeviceType));
  if (call->broken_index < 0 && object != call->device) {
    api_problem(call, "returned %p, expected the device", object);
  }
  if (call->broken_index < 0 &&
      weft_hal_module_unwrap(ref, &kWeftHalBufferType) != NULL) {
    api_problem(call, "a device unwrapped as a buffer");
  }
  api_expect_neutral(call, object == NULL, "%p, expected NULL", object);
}

static void hal_module_wrap_buffer_view(api_call_t* call) {
  weft_buffer_t* buffer = NULL;
  weft_hal_buffer_view_t* view = make_view(call, &buffer);
  if (view) {
    weft_vm_ref_t ref =
        weft_hal_module_wrap_buffer_view(api_ptr(call, 0, "view", view));
    const bool expect_null = api_is_broken(call, 0);
    if (expect_null != weft_vm_ref_is_null(ref) ||
        (!expect_null &&
         (ref.object != view || ref.type != &kWeftHalBufferViewType))) {
      api_problem(call, "the ref is not %s", expect_null ? "null" : "the view");
    }
  }
  weft_hal_buffer_view_release(view);
  weft_buffer_release(buffer);
}

static void element_type_is_valid(api_call_t* call) {
  api_value(call, 0, "type");
  if (!weft_hal_element_type_is_valid(WEFT_HAL_ELEMENT_TYPE_F32) ||
      weft_hal_element_type_is_valid(WEFT_HAL_ELEMENT_TYPE_NONE)) {
    api_problem(call, "f32 is not valid, or none is");
  }
}

//===----------------------------------------------------------------------===//
// vm/tensor_type.h and the declaration checks of vm/hal.h
//===----------------------------------------------------------------------===//

// Module "decl" loaded from kDeclModule, or NULL.
static weft_vm_module_t* make_decl_module(api_call_t* call) {
  weft_vm_module_t* module = NULL;
  api_setup(call,
            weft_vm_module_load_bytes("decl.wvm", kDeclModule,
                                      sizeof(kDeclModule) - 1,
                                      call->allocator, &module),
            "weft_vm_module_load_bytes");
  return module;
}

static void vm_element_type_name(api_call_t* call) {
  api_value(call, 0, "type");
  const char* name = weft_vm_element_type_name(WEFT_VM_ELEMENT_TYPE_I16);
  if (strcmp(name, "i16") != 0) api_problem(call, "returned '%s'", name);
}

static void module_function_value_decl(api_call_t* call) {
  api_value(call, 1, "function");
  api_value(call, 2, "role");
  api_value(call, 3, "index");
  weft_vm_module_t* module = make_decl_module(call);
  if (!module) return;
  weft_vm_value_decl_t decl;
  memset(&decl, 0x5A, sizeof(decl));
  const bool found = weft_vm_module_function_value_decl(
      api_ptr(call, 0, "module", module), 0, WEFT_VM_VALUE_ARGUMENT, 0,
      api_ptr(call, 4, "out_decl", &decl));
  if (call->broken_index < 0 &&
      (!found || strcmp(decl.name, "x") != 0 || decl.type.rank != 2 ||
       decl.type.element_type != WEFT_VM_ELEMENT_TYPE_F32)) {
    api_problem(call, "did not read argument 0 as x: Kx4 f32");
  }
  if (api_is_broken(call, 0)) {
    if (found) api_problem(call, "returned true for a NULL module");
    if (decl.name == NULL || decl.name[0] || decl.type.rank != 0) {
      api_problem(call, "left *out_decl other than empty for a NULL module");
    }
  }
  api_expect_neutral(call, !found, "true, expected false");
  weft_vm_module_release(module);
}

static void module_function_symbol_count(api_call_t* call) {
  api_value(call, 1, "function");
  weft_vm_module_t* module = make_decl_module(call);
  if (!module) return;
  const uint32_t count = weft_vm_module_function_symbol_count(
      api_ptr(call, 0, "module", module), 0);
  if (call->broken_index < 0 && count != 1) {
    api_problem(call, "returned %u, expected 1 (K)", count);
  }
  api_expect_neutral(call, count == 0, "%u, expected 0", count);
  weft_vm_module_release(module);
}

// A 4x4 f32 view (make_view) checked against decl.scale's x: Kx4 f32.
static void hal_check_arguments(api_call_t* call) {
  api_value(call, 1, "function");
  api_value(call, 3, "arg_count");
  weft_vm_module_t* module = make_decl_module(call);
  weft_buffer_t* buffer = NULL;
  weft_hal_buffer_view_t* view = module ? make_view(call, &buffer) : NULL;
  if (view) {
    const weft_vm_value_t args[2] = {
        {.type = WEFT_VM_TYPE_REF,
         .ref = weft_hal_module_wrap_buffer_view(view)},
        weft_vm_value_i32(2)};
    weft_hal_tensor_check_t check;
    api_status(call, weft_hal_check_arguments(
                         api_ptr(call, 0, "module", module), 0,
                         api_ptr(call, 2, "args", args), 2,
                         api_ptr(call, 4, "out_check", &check)));
  }
  weft_hal_buffer_view_release(view);
  weft_buffer_release(buffer);
  weft_vm_module_release(module);
}

static void hal_check_results(api_call_t* call) {
  api_value(call, 2, "result_count");
  weft_vm_module_t* module = make_decl_module(call);
  weft_buffer_t* buffer = NULL;
  weft_hal_buffer_view_t* view = module ? make_view(call, &buffer) : NULL;
  weft_hal_tensor_check_t check;
  if (view) {
    const weft_vm_value_t values[2] = {
        {.type = WEFT_VM_TYPE_REF,
         .ref = weft_hal_module_wrap_buffer_view(view)},
        weft_vm_value_i32(2)};
    if (api_setup(call,
                  weft_hal_check_arguments(module, 0, values, 2, &check),
                  "weft_hal_check_arguments")) {
      api_status(call, weft_hal_check_results(
                           api_ptr(call, 0, "check", &check),
                           api_ptr(call, 1, "results", values), 1));
    }
  }
  weft_hal_buffer_view_release(view);
  weft_buffer_release(buffer);
  weft_vm_module_release(module);
}

static void element_type_size(api_call_t* call) {
  api_value(call, 0, "type");
  uint32_t size = weft_hal_element_type_size(WEFT_HAL_ELEMENT_TYPE_F64);
  if (size != 8) api_problem(call, "f64 has size %u", size);
}

static void element_type_name(api_call_t* call) {
  api_value(call, 0, "type");
  const char* name = weft_hal_element_type_name(WEFT_HAL_ELEMENT_TYPE_U16);
  if (strcmp(name, "u16") != 0) api_problem(call, "returned '%s'", name);
}

static void buffer_view_create(api_call_t* call) {
  api_value(call, 1, "byte_offset");
  api_value(call, 2, "element_type");
  api_value(call, 3, "rank");
  weft_buffer_t* buffer = api_make_buffer(call, API_BUFFER_LENGTH);
  if (!buffer) return;
  const int64_t shape[2] = {4, 4};
  weft_hal_buffer_view_t* view = NULL;
  api_status(call, weft_hal_buffer_view_create(
                       api_ptr(call, 0, "buffer", buffer), 16,
                       WEFT_HAL_ELEMENT_TYPE_F32, 2,
                       api_ptr(call, 4, "shape", shape),
                       api_allocator(call, 5, "allocator"),
                       api_out(call, 6, "out_view", &view, sizeof(view))));
  api_check_out(call, 6, &view, sizeof(view));
  if (api_ok(call) && weft_hal_buffer_view_byte_length(view) != 64) {
    api_problem(call, "byte length %llu, expected 64",
                (unsigned long long)weft_hal_buffer_view_byte_length(view));
  }
  if (api_ok(call)) weft_hal_buffer_view_release(view);
  weft_buffer_release(buffer);
}

static void buffer_view_retain(api_call_t* call) {
  weft_buffer_t* buffer = NULL;
  weft_hal_buffer_view_t* view = make_view(call, &buffer);
  if (view) {
    weft_hal_buffer_view_retain(api_ptr(call, 0, "view", view));
    if (!api_is_broken(call, 0)) weft_hal_buffer_view_release(view);
  }
  weft_hal_buffer_view_release(view);
  weft_buffer_release(buffer);
}

static void buffer_view_release(api_call_t* call) {
  weft_buffer_t* buffer = NULL;
  weft_hal_buffer_view_t* view = make_view(call, &buffer);
  if (view) {
    weft_hal_buffer_view_release(api_ptr(call, 0, "view", view));
    if (api_is_broken(call, 0)) weft_hal_buffer_view_release(view);
  }
  weft_buffer_release(buffer);
}

static void buffer_view_buffer(api_call_t* call) {
  weft_buffer_t* buffer = NULL;
  weft_hal_buffer_view_t* view = make_view(call, &buffer);
  if (view) {
    weft_buffer_t* viewed =
        weft_hal_buffer_view_buffer(api_ptr(call, 0, "view", view));
    if (call->broken_index < 0 && viewed != buffer) {
      api_problem(call, "returned %p, expected the buffer", (void*)viewed);
    }
    api_expect_neutral(call, viewed == NULL, "%p, expected NULL",
                       (void*)viewed);
  }
  weft_hal_buffer_view_release(view);
  weft_buffer_release(buffer);
}

// The integer accessors of a view (4x4 f32 at offset 16): each is 0 for
// NULL but dim's, which is -1.
typedef enum view_query_e {
  VIEW_BYTE_OFFSET = 0,
  VIEW_BYTE_LENGTH = 1,
  VIEW_ELEMENT_TYPE = 2,
  VIEW_RANK = 3,
  VIEW_DIM = 4,
} view_query_t;

static void view_query(api_call_t* call, view_query_t query) {
  weft_buffer_t* buffer = NULL;
  weft_hal_buffer_view_t* view = make_view(call, &buffer);
  if (view) {
    const weft_hal_buffer_view_t* arg = api_ptr(call, 0, "view", view);
    int64_t value = 0;
    int64_t expected = 0;
    int64_t neutral = 0;
    switch (query) {
      case VIEW_BYTE_OFFSET:
        value = (int64_t)weft_hal_buffer_view_byte_offset(arg);
        expected = 16;
        break;
      case VIEW_BYTE_LENGTH:
        value = (int64_t)weft_hal_buffer_view_byte_length(arg);
        expected = 64;
        break;
      case VIEW_ELEMENT_TYPE:
        value = weft_hal_buffer_view_element_type(arg);
        expected = WEFT_HAL_ELEMENT_TYPE_F32;
        break;
      case VIEW_RANK:
        value = weft_hal_buffer_view_rank(arg);
        expected = 2;
        break;
      case VIEW_DIM:
        api_value(call, 1, "index");
        value = weft_hal_buffer_view_dim(arg, 1);
        expected = 4;
        neutral = -1;
        break;
    }
    if (call->broken_index < 0 && value != expected) {
      api_problem(call, "returned %lld, expected %lld", (long long)value,
                  (long long)expected);
    }
    api_expect_neutral(call, value == neutral, "%lld, expected %lld",
                       (long long)value, (long long)neutral);
  }
  weft_hal_buffer_view_release(view);
  weft_buffer_release(buffer);
}

static void buffer_view_byte_offset(api_call_t* call) {
  view_query(call, VIEW_BYTE_OFFSET);
}
static void buffer_view_byte_length(api_call_t* call) {
  view_query(call, VIEW_BYTE_LENGTH);
}
static void buffer_view_element_type(api_call_t* call) {
  view_query(call, VIEW_ELEMENT_TYPE);
}
static void buffer_view_rank(api_call_t* call) { view_query(call, VIEW_RANK); }
static void buffer_view_dim(api_call_t* call) { view_query(call, VIEW_DIM); }

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

const api_entry_t api_table_vm[] = {
    // vm/value.h
    {"weft_vm_value_type_name", value_type_name, WEFT_STATUS_OK},
    // vm/list.h
    {"weft_vm_list_create", list_create, WEFT_STATUS_OK},
    {"weft_vm_list_retain", list_retain, WEFT_STATUS_OK},
    {"weft_vm_list_release", list_release, WEFT_STATUS_OK},
    {"weft_vm_list_size", list_size, WEFT_STATUS_OK},
    {"weft_vm_list_resize", list_resize, WEFT_STATUS_OK},
    {"weft_vm_list_get", list_get, WEFT_STATUS_OK},
    {"weft_vm_list_set", list_set, WEFT_STATUS_OK},
    {"weft_vm_bytes_create", bytes_create, WEFT_STATUS_OK},
    {"weft_vm_bytes_retain", bytes_retain, WEFT_STATUS_OK},
    {"weft_vm_bytes_release", bytes_release, WEFT_STATUS_OK},
    {"weft_vm_bytes_data", bytes_data, WEFT_STATUS_OK},
    {"weft_vm_bytes_length", bytes_length, WEFT_STATUS_OK},
    // vm/module.h
    {"weft_vm_module_load_bytes", module_load_bytes, WEFT_STATUS_OK},
    {"weft_vm_module_load_file", module_load_file, WEFT_STATUS_OK},
    {"weft_vm_module_retain", module_retain, WEFT_STATUS_OK},
    {"weft_vm_module_release", module_release, WEFT_STATUS_OK},
    {"weft_vm_module_name", module_name, WEFT_STATUS_OK},
    {"weft_vm_module_function_count", module_function_count, WEFT_STATUS_OK},
    {"weft_vm_module_function_name", module_function_name, WEFT_STATUS_OK},
    {"weft_vm_module_function_signature_text", module_function_signature_text,
     WEFT_STATUS_OK},
    {"weft_vm_module_lookup", module_lookup, WEFT_STATUS_OK},
    {"weft_vm_module_create_native", module_create_native, WEFT_STATUS_OK},
    {"weft_vm_wait_frame_begin", wait_frame_begin, WEFT_STATUS_OK},
    {"weft_vm_wait_frame_add", wait_frame_add, WEFT_STATUS_OK},
    // vm/context.h
    {"weft_vm_context_create", context_create, WEFT_STATUS_OK},
    {"weft_vm_context_retain", context_retain, WEFT_STATUS_OK},
    {"weft_vm_context_release", context_release, WEFT_STATUS_OK},
    {"weft_vm_context_lookup", context_lookup, WEFT_STATUS_OK},
    // vm/invocation.h
    {"weft_vm_invoke_sync", invoke_sync, WEFT_STATUS_OK},
    // vm/loop.h
    {"weft_vm_loop_create", loop_create, WEFT_STATUS_OK},
    {"weft_vm_loop_destroy", loop_destroy, WEFT_STATUS_OK},
    {"weft_vm_loop_submit", loop_submit, WEFT_STATUS_OK},
    {"weft_vm_loop_cancel", loop_cancel, WEFT_STATUS_OK},
    {"weft_vm_loop_run", loop_run, WEFT_STATUS_OK},
    {"weft_vm_loop_run_ready", loop_run_ready, WEFT_STATUS_OK},
    {"weft_vm_loop_live_count", loop_live_count, WEFT_STATUS_OK},
    // vm/hal.h
    {"weft_hal_module_create", hal_module_create, WEFT_STATUS_OK},
    {"weft_hal_module_wrap", hal_module_wrap, WEFT_STATUS_OK},
    {"weft_hal_module_unwrap", hal_module_unwrap, WEFT_STATUS_OK},
    {"weft_hal_module_wrap_buffer_view", hal_module_wrap_buffer_view,
     WEFT_STATUS_OK},
    {"weft_hal_element_type_is_valid", element_type_is_valid, WEFT_STATUS_OK},
    {"weft_hal_element_type_size", element_type_size, WEFT_STATUS_OK},
    {"weft_hal_element_type_name", element_type_name, WEFT_STATUS_OK},
    {"weft_hal_buffer_view_create", buffer_view_create, WEFT_STATUS_OK},
    {"weft_hal_buffer_view_retain", buffer_view_retain, WEFT_STATUS_OK},
    {"weft_hal_buffer_view_release", buffer_view_release, WEFT_STATUS_OK},
    {"weft_hal_buffer_view_buffer", buffer_view_buffer, WEFT_STATUS_OK},
    {"weft_hal_buffer_view_byte_offset", buffer_view_byte_offset,
     WEFT_STATUS_OK},
    {"weft_hal_buffer_view_byte_length", buffer_view_byte_length,
     WEFT_STATUS_OK},
    {"weft_hal_buffer_view_element_type", buffer_view_element_type,
     WEFT_STATUS_OK},
    {"weft_hal_buffer_view_rank", buffer_view_rank, WEFT_STATUS_OK},
    {"weft_hal_buffer_view_dim", buffer_view_dim, WEFT_STATUS_OK},
    {"weft_hal_check_arguments", hal_check_arguments, WEFT_STATUS_OK},
    {"weft_hal_check_results", hal_check_results, WEFT_STATUS_OK},
    // vm/tensor_type.h
    {"weft_vm_element_type_name", vm_element_type_name, WEFT_STATUS_OK},
    {"weft_vm_module_function_value_decl", module_function_value_decl,
     WEFT_STATUS_OK},
    {"weft_vm_module_function_symbol_count", module_function_symbol_count,
     WEFT_STATUS_OK},
};
const size_t api_table_vm_count = sizeof(api_table_vm) / sizeof(api_table_vm[0]);
