// Tests for the hal module (src/modules/hal): every function called
// through weft_vm_invoke_sync on local-sync and local-task, results
// checked by mapping; argument errors naming the function and the
// argument; HAL errors passed through; module options. Awaits have their
// own program (hal_module_await_test.c).
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
// clang-format off
#include <cmocka.h>
// clang-format on

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cts.h"
#include "hal/resource.h"
#include "hal_module_test_util.h"
#include "modules/hal/ref_types.h"
#include "weft/vm/hal.h"
#include "weft/vm/invocation.h"

#define expect_ok vm_test_expect_ok
#define expect_error vm_test_expect_error
#define REF hal_test_ref
#define NUL hal_test_null
#define I32 hal_test_i32
#define I64 hal_test_i64

static void release_value(weft_vm_value_t value) {
  weft_vm_ref_release(value.ref);
}

// Reads |length| bytes of |buffer| at |offset| through a mapping.
static void read_back(weft_buffer_t* buffer, uint64_t offset, void* target,
                      uint64_t length) {
  expect_ok(weft_buffer_map_read(buffer, offset, target, length));
}

//===----------------------------------------------------------------------===//
// Devices
//===----------------------------------------------------------------------===//

static void devices_body(hal_test_t* t) {
  assert_string_equal(weft_device_id(t->device), t->device_string);
  weft_vm_bytes_t* key = hal_test_make_bytes("queue.count");
  weft_vm_value_t results[2] = {{0}};
  expect_ok(hal_test_call(t, "device.query",
                          HAL_ARGS(REF(t->device), hal_test_bytes(key)),
                          results, 2));
  assert_int_equal(results[0].i32, 0);
  assert_true(results[1].i64 >= 1);
  hal_test_release_bytes(key);
  // An unknown key is a value, not a failure.
  key = hal_test_make_bytes("no.such.key");
  expect_ok(hal_test_call(t, "device.query",
                          HAL_ARGS(REF(t->device), hal_test_bytes(key)),
                          results, 2));
  assert_int_equal(results[0].i32, WEFT_STATUS_NOT_FOUND);
  assert_int_equal(results[1].i64, 0);
  hal_test_release_bytes(key);
  // device.open makes another device of the same string.
  weft_vm_bytes_t* name = hal_test_make_bytes(t->device_string);
  weft_vm_value_t opened =
      hal_test_call_ok(t, "device.open", HAL_ARGS(hal_test_bytes(name)));
  assert_ptr_not_equal(opened.ref.object, t->device);
  assert_string_equal(weft_device_id((weft_device_t*)opened.ref.object),
                      t->device_string);
  release_value(opened);
  hal_test_release_bytes(name);
  // The device's own error, as it is.
  name = hal_test_make_bytes("local-tsak");
  expect_error(hal_test_call(t, "device.open", HAL_ARGS(hal_test_bytes(name)),
                             results, 1),
               WEFT_STATUS_NOT_FOUND, "did you mean 'local-task'?");
  hal_test_release_bytes(name);
}

static void devices(void** state) { hal_test_for_each_device(devices_body); }

//===----------------------------------------------------------------------===//
// Queue transfers: fill, update, copy, read, write, barrier
//===----------------------------------------------------------------------===//

static void transfers_body(hal_test_t* t) {
  weft_buffer_t* a = hal_test_allocate(t, 64);
  weft_buffer_t* b = hal_test_allocate(t, 64);
  weft_fence_t* filled = hal_test_new_fence(t);
  weft_fence_t* updated = hal_test_new_fence(t);
  weft_fence_t* copied = hal_test_new_fence(t);
  // fill a with 0xAB, then update [16, 27) with "hello world" (waiting on
  // the fill), then copy a to b (waiting on the update).
  expect_ok(hal_test_call(t, "queue.fill",
                          HAL_ARGS(REF(t->device), NUL(), REF(filled), REF(a),
                                   I64(0), I64(64), I32(0xAB), I32(1)),
                          NULL, 0));
  weft_vm_bytes_t* text = hal_test_make_bytes("xxhello world");
  expect_ok(hal_test_call(t, "queue.update",
                          HAL_ARGS(REF(t->device), REF(filled), REF(updated),
                                   hal_test_bytes(text), I64(2), REF(a),
                                   I64(16), I64(11)),
                          NULL, 0));
  expect_ok(hal_test_call(t, "queue.copy",
                          HAL_ARGS(REF(t->device), REF(updated), REF(copied),
                                   REF(a), I64(0), REF(b), I64(0), I64(64)),
                          NULL, 0));
  assert_int_equal(hal_test_await(t, copied, -1), 0);
  uint8_t bytes[64];
  read_back(b, 0, bytes, 64);
  assert_int_equal(bytes[0], 0xAB);
  assert_int_equal(bytes[15], 0xAB);
  assert_memory_equal(bytes + 16, "hello world", 11);
  assert_int_equal(bytes[27], 0xAB);
  // A 4-byte pattern is an integer of that width.
  weft_fence_t* filled4 = hal_test_new_fence(t);
  expect_ok(hal_test_call(t, "queue.fill",
                          HAL_ARGS(REF(t->device), NUL(), REF(filled4), REF(b),
                                   I64(8), I64(8), I32(0x01020304), I32(4)),
                          NULL, 0));
  assert_int_equal(hal_test_await(t, filled4, -1), 0);
  uint32_t words[2];
  read_back(b, 8, words, 8);
  assert_int_equal(words[0], 0x01020304);
  assert_int_equal(words[1], 0x01020304);
  // A barrier orders nothing but signals.
  weft_fence_t* barrier = hal_test_new_fence(t);
  expect_ok(hal_test_call(
      t, "queue.barrier", HAL_ARGS(REF(t->device), REF(filled4), REF(barrier)),
      NULL, 0));
  assert_int_equal(hal_test_await(t, barrier, -1), 0);
  hal_test_release_bytes(text);
  weft_fence_release(barrier);
  weft_fence_release(filled4);
  weft_fence_release(copied);
  weft_fence_release(updated);
  weft_fence_release(filled);
  weft_buffer_release(b);
  weft_buffer_release(a);
}

static void transfers(void** state) {
  hal_test_for_each_device(transfers_body);
}

// queue.read and queue.write through a memory file and through a file
// hal.file.open makes.
static void files_body(hal_test_t* t) {
  uint8_t contents[32];
  for (int i = 0; i < 32; ++i) contents[i] = (uint8_t)i;
  weft_file_t* memory = NULL;
  expect_ok(weft_file_wrap_memory(WEFT_FILE_ACCESS_READ | WEFT_FILE_ACCESS_WRITE,
                                  contents, sizeof(contents), NULL, NULL,
                                  weft_allocator_system(), &memory));
  weft_vm_value_t length =
      hal_test_call_ok(t, "file.length", HAL_ARGS(REF(memory)));
  assert_int_equal(length.i64, 32);
  weft_buffer_t* buffer = hal_test_allocate(t, 32);
  weft_fence_t* read = hal_test_new_fence(t);
  expect_ok(hal_test_call(t, "queue.read",
                          HAL_ARGS(REF(t->device), NUL(), REF(read), REF(memory),
                                   I64(8), REF(buffer), I64(0), I64(16)),
                          NULL, 0));
  assert_int_equal(hal_test_await(t, read, -1), 0);
  uint8_t bytes[16];
  read_back(buffer, 0, bytes, 16);
  assert_memory_equal(bytes, contents + 8, 16);
  // Write the first 4 bytes of the buffer (8..11) back at 0.
  weft_fence_t* written = hal_test_new_fence(t);
  expect_ok(hal_test_call(t, "queue.write",
                          HAL_ARGS(REF(t->device), REF(read), REF(written),
                                   REF(buffer), I64(0), REF(memory), I64(0),
                                   I64(4)),
                          NULL, 0));
  assert_int_equal(hal_test_await(t, written, -1), 0);
  assert_int_equal(contents[0], 8);
  assert_int_equal(contents[3], 11);
  // A temporary file: created and written by the program, then read back.
  char path[] = "/tmp/weft_hal_module_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  weft_vm_bytes_t* path_bytes = hal_test_make_bytes(path);
  weft_vm_value_t file = hal_test_call_ok(
      t, "file.open",
      HAL_ARGS(hal_test_bytes(path_bytes), I32(2 | 4 | 8)));  // write, create, truncate
  weft_fence_t* saved = hal_test_new_fence(t);
  expect_ok(hal_test_call(t, "queue.write",
                          HAL_ARGS(REF(t->device), NUL(), REF(saved),
                                   REF(buffer), I64(0), file, I64(0), I64(16)),
                          NULL, 0));
  assert_int_equal(hal_test_await(t, saved, -1), 0);
  release_value(file);
  file = hal_test_call_ok(t, "file.open",
                          HAL_ARGS(hal_test_bytes(path_bytes), I32(1)));
  length = hal_test_call_ok(t, "file.length", HAL_ARGS(file));
  assert_int_equal(length.i64, 16);
  weft_buffer_t* again = hal_test_allocate(t, 16);
  weft_fence_t* loaded = hal_test_new_fence(t);
  expect_ok(hal_test_call(t, "queue.read",
                          HAL_ARGS(REF(t->device), NUL(), REF(loaded), file,
                                   I64(0), REF(again), I64(0), I64(16)),
                          NULL, 0));
  assert_int_equal(hal_test_await(t, loaded, -1), 0);
  uint8_t reloaded[16];
  read_back(again, 0, reloaded, 16);
  assert_memory_equal(reloaded, bytes, 16);
  // A missing file is the HAL's error, with the path.
  weft_vm_bytes_t* missing = hal_test_make_bytes("/nonexistent/weft/file");
  expect_error(hal_test_call(t, "file.open",
                             HAL_ARGS(hal_test_bytes(missing), I32(1)), NULL,
                             0),
               WEFT_STATUS_NOT_FOUND, "/nonexistent/weft/file");
  // A mode without access, or with unknown bits.
  expect_error(hal_test_call(t, "file.open",
                             HAL_ARGS(hal_test_bytes(path_bytes), I32(16 | 1)),
                             NULL, 0),
               WEFT_STATUS_INVALID_ARGUMENT,
               "hal.file.open: argument 'mode' is 0x11");
  hal_test_release_bytes(missing);
  release_value(file);
  unlink(path);
  hal_test_release_bytes(path_bytes);
  weft_fence_release(loaded);
  weft_fence_release(saved);
  weft_fence_release(written);
  weft_fence_release(read);
  weft_buffer_release(again);
  weft_buffer_release(buffer);
  weft_file_release(memory);
}

static void files(void** state) { hal_test_for_each_device(files_body); }

// queue.alloca gives a buffer whose memory arrives with its signal;
// queue.dealloca returns it.
static void alloca_body(hal_test_t* t) {
  weft_fence_t* allocated = hal_test_new_fence(t);
  weft_vm_value_t buffer = hal_test_call_ok(
      t, "queue.alloca",
      HAL_ARGS(REF(t->device), NUL(), REF(allocated), I64(128)));
  assert_ptr_equal(buffer.ref.type, &kWeftHalBufferType);
  weft_fence_t* filled = hal_test_new_fence(t);
  expect_ok(hal_test_call(t, "queue.fill",
                          HAL_ARGS(REF(t->device), REF(allocated), REF(filled),
                                   buffer, I64(0), I64(128), I32(0x5A5A),
                                   I32(2)),
                          NULL, 0));
  assert_int_equal(hal_test_await(t, filled, -1), 0);
  uint16_t halves[64];
  read_back((weft_buffer_t*)buffer.ref.object, 0, halves, sizeof(halves));
  assert_int_equal(halves[0], 0x5A5A);
  assert_int_equal(halves[63], 0x5A5A);
  weft_fence_t* freed = hal_test_new_fence(t);
  expect_ok(hal_test_call(
      t, "queue.dealloca",
      HAL_ARGS(REF(t->device), REF(filled), REF(freed), buffer), NULL, 0));
  assert_int_equal(hal_test_await(t, freed, -1), 0);
  // The memory is gone: mapping it is the HAL's FAILED_PRECONDITION.
  expect_error(weft_buffer_map_read((weft_buffer_t*)buffer.ref.object, 0,
                                    halves, 2),
               WEFT_STATUS_FAILED_PRECONDITION, "");
  release_value(buffer);
  weft_fence_release(freed);
  weft_fence_release(filled);
  weft_fence_release(allocated);
}

static void alloca_dealloca(void** state) {
  hal_test_for_each_device(alloca_body);
}

//===----------------------------------------------------------------------===//
// Dispatch and command buffers, with the CTS test kernels
//===----------------------------------------------------------------------===//

enum { kElements = 100 };

// A buffer of kElements floats i * 0.5.
static weft_buffer_t* make_input(hal_test_t* t) {
  weft_buffer_t* buffer = hal_test_allocate(t, kElements * sizeof(float));
  float values[kElements];
  for (int i = 0; i < kElements; ++i) values[i] = (float)i * 0.5f;
  expect_ok(weft_buffer_map_write(buffer, 0, values, sizeof(values)));
  return buffer;
}

// out[i] == in[i] * 2 + 1 for every element.
static void check_scaled(weft_buffer_t* out) {
  float values[kElements];
  read_back(out, 0, values, sizeof(values));
  for (int i = 0; i < kElements; ++i) {
    assert_true(values[i] == (float)i * 0.5f * 2.0f + 1.0f);
  }
}

// Constants of scale_offset: scale 2 and offset 1 as f32 elements, the
// count as i32.
static weft_vm_list_t* scale_constants(void) {
  weft_vm_value_t values[3] = {{.type = WEFT_VM_TYPE_F32},
                               {.type = WEFT_VM_TYPE_F32},
                               I32(kElements)};
  values[0].f32 = 2.0f;
  values[1].f32 = 1.0f;
  return hal_test_make_list(values, 3);
}

// Opens the test kernels both ways: by registered name and from the
// shared object; returns the first and the ordinal of scale_offset.
static weft_executable_t* open_kernels(hal_test_t* t, int32_t* out_ordinal) {
  weft_vm_bytes_t* name = hal_test_make_bytes(HAL_TEST_LIBRARY);
  weft_vm_value_t executable = hal_test_call_ok(
      t, "executable.static", HAL_ARGS(REF(t->device), hal_test_bytes(name)));
  assert_ptr_equal(executable.ref.type, &kWeftHalExecutableType);
  weft_vm_bytes_t* kernel = hal_test_make_bytes("scale_offset");
  *out_ordinal = hal_test_call_ok(t, "executable.lookup",
                                  HAL_ARGS(executable, hal_test_bytes(kernel)))
                     .i32;
  assert_int_equal(*out_ordinal, 0);
  weft_vm_bytes_t* path = hal_test_make_bytes(WEFT_CTS_KERNEL_MODULE_PATH);
  weft_vm_value_t loaded = hal_test_call_ok(
      t, "executable.load", HAL_ARGS(REF(t->device), hal_test_bytes(path)));
  weft_vm_bytes_t* other = hal_test_make_bytes("write_ids");
  assert_int_equal(hal_test_call_ok(t, "executable.lookup",
                                    HAL_ARGS(loaded, hal_test_bytes(other)))
                       .i32,
                   2);
  // Names the module does not know, and kernels the library lacks.
  weft_vm_bytes_t* unknown = hal_test_make_bytes("nope");
  expect_error(hal_test_call(t, "executable.static",
                             HAL_ARGS(REF(t->device), hal_test_bytes(unknown)),
                             NULL, 0),
               WEFT_STATUS_NOT_FOUND,
               "no static library 'nope' (it has 1: 'cts_test_kernels')");
  expect_error(hal_test_call(t, "executable.lookup",
                             HAL_ARGS(loaded, hal_test_bytes(unknown)), NULL, 0),
               WEFT_STATUS_NOT_FOUND, "nope");
  release_value(loaded);
  hal_test_release_bytes(unknown);
  hal_test_release_bytes(other);
  hal_test_release_bytes(path);
  hal_test_release_bytes(kernel);
  hal_test_release_bytes(name);
  return (weft_executable_t*)executable.ref.object;
}

static void dispatch_body(hal_test_t* t) {
  int32_t ordinal = -1;
  weft_executable_t* executable = open_kernels(t, &ordinal);
  weft_buffer_t* in = make_input(t);
  weft_buffer_t* out = hal_test_allocate(t, kElements * sizeof(float));
  weft_vm_list_t* constants = scale_constants();
  // Input as a view of 100 f32, output as the whole buffer.
  weft_vm_list_t* shape = hal_test_make_list(HAL_ARGS(I64(kElements)));
  weft_vm_value_t view = hal_test_call_ok(
      t, "buffer_view.create",
      HAL_ARGS(REF(in), I64(0), I32(WEFT_HAL_ELEMENT_TYPE_F32),
               hal_test_list(shape)));
  weft_vm_list_t* bindings = hal_test_make_list(HAL_ARGS(view, REF(out)));
  weft_fence_t* done = hal_test_new_fence(t);
  expect_ok(hal_test_call(
      t, "queue.dispatch",
      HAL_ARGS(REF(t->device), NUL(), REF(done), REF(executable), I32(ordinal),
               I32(2), I32(1), I32(1), hal_test_list(constants),
               hal_test_list(bindings)),
      NULL, 0));
  assert_int_equal(hal_test_await(t, done, -1), 0);
  check_scaled(out);
  // A kernel that fails: the await fails with the dispatch's error.
  weft_fence_t* failed = hal_test_new_fence(t);
  weft_vm_list_t* fail_constants = hal_test_make_list(HAL_ARGS(I32(0)));
  expect_ok(hal_test_call(
      t, "queue.dispatch",
      HAL_ARGS(REF(t->device), NUL(), REF(failed), REF(executable), I32(3),
               I32(1), I32(1), I32(1), hal_test_list(fail_constants), NUL()),
      NULL, 0));
  weft_vm_value_t code = {0};
  expect_error(hal_test_call(t, "fence.await",
                             HAL_ARGS(REF(failed), I64(-1)), &code, 1),
               WEFT_STATUS_INTERNAL, "VM stack: at hal.fence.await (native)");
  hal_test_release_list(fail_constants);
  weft_fence_release(failed);
  weft_fence_release(done);
  hal_test_release_list(bindings);
  release_value(view);
  hal_test_release_list(shape);
  hal_test_release_list(constants);
  weft_buffer_release(out);
  weft_buffer_release(in);
  weft_executable_release(executable);
}

static void dispatch(void** state) { hal_test_for_each_device(dispatch_body); }

// A reusable command buffer over binding slots: dispatch scale_offset
// (slot 0 -> slot 1), barrier, copy slot 1 into a direct buffer, and fill
// and update a second direct buffer; executed twice with different tables
// (the second writing another output).
static void execute_body(hal_test_t* t) {
  int32_t ordinal = -1;
  weft_executable_t* executable = open_kernels(t, &ordinal);
  weft_buffer_t* in = make_input(t);
  weft_buffer_t* out = hal_test_allocate(t, kElements * sizeof(float));
  weft_buffer_t* copy = hal_test_allocate(t, kElements * sizeof(float));
  weft_buffer_t* misc = hal_test_allocate(t, 16);
  weft_vm_list_t* constants = scale_constants();
  weft_vm_list_t* slots = hal_test_make_list(HAL_ARGS(I32(0), I32(1)));
  weft_vm_bytes_t* text = hal_test_make_bytes("abcd");
  weft_vm_value_t cb = hal_test_call_ok(
      t, "command_buffer.create", HAL_ARGS(REF(t->device), I32(2), I32(2)));
  assert_ptr_equal(cb.ref.type, &kWeftHalCommandBufferType);
  expect_ok(hal_test_call(t, "command_buffer.begin", HAL_ARGS(cb), NULL, 0));
  expect_ok(hal_test_call(t, "command_buffer.dispatch",
                          HAL_ARGS(cb, REF(executable), I32(ordinal), I32(2),
                                   I32(1), I32(1), hal_test_list(constants),
                                   hal_test_list(slots)),
                          NULL, 0));
  expect_ok(hal_test_call(t, "command_buffer.barrier", HAL_ARGS(cb), NULL, 0));
  expect_ok(hal_test_call(t, "command_buffer.copy",
                          HAL_ARGS(cb, NUL(), I32(1), I64(0), REF(copy), I32(0),
                                   I64(0), I64(kElements * sizeof(float))),
                          NULL, 0));
  expect_ok(hal_test_call(t, "command_buffer.fill",
                          HAL_ARGS(cb, REF(misc), I32(0), I64(0), I64(16),
                                   I32(0x77), I32(1)),
                          NULL, 0));
  expect_ok(hal_test_call(t, "command_buffer.barrier", HAL_ARGS(cb), NULL, 0));
  expect_ok(hal_test_call(t, "command_buffer.update",
                          HAL_ARGS(cb, hal_test_bytes(text), I64(1), REF(misc),
                                   I32(0), I64(4), I64(3)),
                          NULL, 0));
  expect_ok(hal_test_call(t, "command_buffer.end", HAL_ARGS(cb), NULL, 0));
  weft_vm_list_t* table = hal_test_make_list(HAL_ARGS(REF(in), REF(out)));
  weft_fence_t* done = hal_test_new_fence(t);
  expect_ok(hal_test_call(t, "queue.execute",
                          HAL_ARGS(REF(t->device), NUL(), REF(done), cb,
                                   hal_test_list(table)),
                          NULL, 0));
  assert_int_equal(hal_test_await(t, done, -1), 0);
  check_scaled(out);
  check_scaled(copy);
  weft_buffer_t* out2 = hal_test_allocate(t, kElements * sizeof(float));
  expect_ok(weft_buffer_map_fill(copy, 0, kElements * sizeof(float),
                                 &(uint8_t){0}, 1));
  weft_vm_list_t* table2 = hal_test_make_list(HAL_ARGS(REF(in), REF(out2)));
  weft_fence_t* again = hal_test_new_fence(t);
  expect_ok(hal_test_call(t, "queue.execute",
                          HAL_ARGS(REF(t->device), REF(done), REF(again), cb,
                                   hal_test_list(table2)),
                          NULL, 0));
  assert_int_equal(hal_test_await(t, again, -1), 0);
  check_scaled(out2);
  check_scaled(copy);
  weft_fence_release(again);
  hal_test_release_list(table2);
  weft_buffer_release(out2);
  uint8_t bytes[16];
  read_back(misc, 0, bytes, 16);
  assert_int_equal(bytes[0], 0x77);
  assert_memory_equal(bytes + 4, "bcd", 3);
  assert_int_equal(bytes[7], 0x77);
  // A table too short for the slots is the HAL's error at execute, as it
  // is.
  weft_vm_list_t* short_table = hal_test_make_list(HAL_ARGS(REF(in)));
  weft_fence_t* never = hal_test_new_fence(t);
  expect_error(hal_test_call(t, "queue.execute",
                             HAL_ARGS(REF(t->device), NUL(), REF(never), cb,
                                      hal_test_list(short_table)),
                             NULL, 0),
               WEFT_STATUS_OUT_OF_RANGE,
               "weft_device_queue_execute: command 2 uses binding table slot 1 "
               "but the table has 1 entries");
  hal_test_release_list(short_table);
  weft_fence_release(never);
  weft_fence_release(done);
  hal_test_release_list(table);
  release_value(cb);
  hal_test_release_bytes(text);
  hal_test_release_list(slots);
  hal_test_release_list(constants);
  weft_buffer_release(misc);
  weft_buffer_release(copy);
  weft_buffer_release(out);
  weft_buffer_release(in);
  weft_executable_release(executable);
}

static void execute(void** state) { hal_test_for_each_device(execute_body); }

//===----------------------------------------------------------------------===//
// Buffers and buffer views
//===----------------------------------------------------------------------===//

static void buffers_and_views_body(hal_test_t* t) {
  weft_buffer_t* buffer = hal_test_allocate(t, 64);
  assert_int_equal(
      hal_test_call_ok(t, "buffer.length", HAL_ARGS(REF(buffer))).i64, 64);
  weft_vm_value_t subspan = hal_test_call_ok(
      t, "buffer.subspan", HAL_ARGS(REF(buffer), I64(16), I64(32)));
  assert_int_equal(hal_test_call_ok(t, "buffer.length", HAL_ARGS(subspan)).i64,
                   32);
  // [2, 3] of f32 at 8 is 24 bytes: fits the subspan's 32.
  weft_vm_list_t* shape = hal_test_make_list(HAL_ARGS(I64(2), I64(3)));
  weft_vm_value_t view = hal_test_call_ok(
      t, "buffer_view.create",
      HAL_ARGS(subspan, I64(8), I32(WEFT_HAL_ELEMENT_TYPE_F32),
               hal_test_list(shape)));
  assert_ptr_equal(view.ref.type, &kWeftHalBufferViewType);
  weft_vm_value_t viewed =
      hal_test_call_ok(t, "buffer_view.buffer", HAL_ARGS(view));
  assert_ptr_equal(viewed.ref.object, subspan.ref.object);
  release_value(viewed);
  assert_int_equal(
      hal_test_call_ok(t, "buffer_view.element_type", HAL_ARGS(view)).i32,
      WEFT_HAL_ELEMENT_TYPE_F32);
  assert_int_equal(hal_test_call_ok(t, "buffer_view.rank", HAL_ARGS(view)).i32,
                   2);
  assert_int_equal(
      hal_test_call_ok(t, "buffer_view.dim", HAL_ARGS(view, I32(1))).i64, 3);
  assert_int_equal(
      hal_test_call_ok(t, "buffer_view.byte_length", HAL_ARGS(view)).i64, 24);
  assert_int_equal(
      hal_test_call_ok(t, "buffer_view.byte_offset", HAL_ARGS(view)).i64, 8);
  expect_error(hal_test_call(t, "buffer_view.dim", HAL_ARGS(view, I32(2)),
                             NULL, 0),
               WEFT_STATUS_INVALID_ARGUMENT,
               "hal.buffer_view.dim: argument 'index' is 2; the view has rank "
               "2");
  // Views that do not fit, of unknown types, with bad shapes.
  static const struct {
    int64_t byte_offset;
    int32_t element_type;
    uint32_t rank;
    weft_vm_value_type_t dim_type;  // of the last dimension
    int64_t shape[9];
    const char* needle;
  } kBadViews[] = {
      {16, WEFT_HAL_ELEMENT_TYPE_F32, 2, WEFT_VM_TYPE_I64, {2, 3},
       "hal.buffer_view.create: argument 'shape' [2, 3] of f32 (24 bytes) at "
       "byte offset 16 does not fit the buffer of 32 bytes"},
      {0, 12, 2, WEFT_VM_TYPE_I64, {2, 3},
       "hal.buffer_view.create: argument 'element_type' is 12"},
      {-4, WEFT_HAL_ELEMENT_TYPE_U8, 2, WEFT_VM_TYPE_I64, {2, 3},
       "hal.buffer_view.create: argument 'byte_offset' is -4"},
      {0, WEFT_HAL_ELEMENT_TYPE_U8, 2, WEFT_VM_TYPE_I32, {2, 3},
       "hal.buffer_view.create: argument 'shape' element 1 is an i32, not an "
       "i64"},
      {0, WEFT_HAL_ELEMENT_TYPE_U8, 2, WEFT_VM_TYPE_I64, {2, -1},
       "argument 'shape' [2, -1] has dimension 1 below 0"},
      {0, WEFT_HAL_ELEMENT_TYPE_U8, 9, WEFT_VM_TYPE_I64,
       {1, 1, 1, 1, 1, 1, 1, 1, 1},
       "argument 'shape' has rank 9, past the limit of 8"},
      {0, WEFT_HAL_ELEMENT_TYPE_F64, 2, WEFT_VM_TYPE_I64, {INT64_MAX, 4},
       "argument 'shape' [9223372036854775807, 4] of f64 overflows 64 bits"},
  };
  for (size_t i = 0; i < sizeof(kBadViews) / sizeof(kBadViews[0]); ++i) {
    weft_vm_value_t dims[9];
    for (uint32_t d = 0; d < kBadViews[i].rank; ++d) {
      dims[d] = I64(kBadViews[i].shape[d]);
    }
    dims[kBadViews[i].rank - 1].type = kBadViews[i].dim_type;
    weft_vm_list_t* bad = hal_test_make_list(dims, kBadViews[i].rank);
    expect_error(hal_test_call(t, "buffer_view.create",
                               HAL_ARGS(subspan, I64(kBadViews[i].byte_offset),
                                        I32(kBadViews[i].element_type),
                                        hal_test_list(bad)),
                               NULL, 0),
                 WEFT_STATUS_INVALID_ARGUMENT, kBadViews[i].needle);
    hal_test_release_list(bad);
  }
  // A rank-0 view is one element.
  weft_vm_list_t* scalar = hal_test_make_list(NULL, 0);
  weft_vm_value_t one = hal_test_call_ok(
      t, "buffer_view.create",
      HAL_ARGS(REF(buffer), I64(60), I32(WEFT_HAL_ELEMENT_TYPE_I32),
               hal_test_list(scalar)));
  assert_int_equal(
      hal_test_call_ok(t, "buffer_view.byte_length", HAL_ARGS(one)).i64, 4);
  release_value(one);
  hal_test_release_list(scalar);
  // The subspan's own range check is the HAL's.
  expect_error(hal_test_call(t, "buffer.subspan",
                             HAL_ARGS(REF(buffer), I64(48), I64(32)), NULL, 0),
               WEFT_STATUS_OUT_OF_RANGE, "");
  release_value(view);
  hal_test_release_list(shape);
  release_value(subspan);
  weft_buffer_release(buffer);
}

static void buffers_and_views(void** state) {
  hal_test_for_each_device(buffers_and_views_body);
}

// Every element type has its size and name.
static void element_types(void** state) {
  static const struct {
    weft_hal_element_type_t type;
    uint32_t size;
    const char* name;
  } kTypes[] = {
      {WEFT_HAL_ELEMENT_TYPE_F16, 2, "f16"}, {WEFT_HAL_ELEMENT_TYPE_F32, 4, "f32"},
      {WEFT_HAL_ELEMENT_TYPE_F64, 8, "f64"}, {WEFT_HAL_ELEMENT_TYPE_I8, 1, "i8"},
      {WEFT_HAL_ELEMENT_TYPE_I16, 2, "i16"}, {WEFT_HAL_ELEMENT_TYPE_I32, 4, "i32"},
      {WEFT_HAL_ELEMENT_TYPE_I64, 8, "i64"}, {WEFT_HAL_ELEMENT_TYPE_U8, 1, "u8"},
      {WEFT_HAL_ELEMENT_TYPE_U16, 2, "u16"}, {WEFT_HAL_ELEMENT_TYPE_U32, 4, "u32"},
      {WEFT_HAL_ELEMENT_TYPE_U64, 8, "u64"},
  };
  for (size_t i = 0; i < sizeof(kTypes) / sizeof(kTypes[0]); ++i) {
    assert_true(weft_hal_element_type_is_valid(kTypes[i].type));
    assert_int_equal(weft_hal_element_type_size(kTypes[i].type), kTypes[i].size);
    assert_string_equal(weft_hal_element_type_name(kTypes[i].type),
                        kTypes[i].name);
  }
  assert_false(weft_hal_element_type_is_valid(0));
  assert_false(weft_hal_element_type_is_valid(WEFT_HAL_ELEMENT_TYPE_COUNT_));
  assert_false(weft_hal_element_type_is_valid(-1));
  assert_int_equal(weft_hal_element_type_size(WEFT_HAL_ELEMENT_TYPE_NONE), 0);
}

//===----------------------------------------------------------------------===//
// Argument errors and HAL errors
//===----------------------------------------------------------------------===//

// One bad call: the function, its arguments and what the error says.
typedef struct bad_call_t {
  const char* function;
  weft_vm_value_t args[10];
  uint32_t arg_count;
  weft_status_code_t code;
  const char* needle;
} bad_call_t;

static void argument_errors_body(hal_test_t* t) {
  weft_buffer_t* buffer = hal_test_allocate(t, 64);
  weft_semaphore_t* semaphore = NULL;
  expect_ok(weft_device_create_semaphore(t->device, 0, &semaphore));
  weft_vm_bytes_t* text = hal_test_make_bytes("0123456789");
  weft_vm_bytes_t* nul = NULL;
  expect_ok(weft_vm_bytes_create(weft_allocator_system(), "a\0b", 3, &nul));
  weft_vm_list_t* wrong_binding = hal_test_make_list(HAL_ARGS(REF(semaphore)));
  weft_vm_list_t* null_binding = hal_test_make_list(HAL_ARGS(NUL()));
  weft_vm_list_t* slot_binding = hal_test_make_list(HAL_ARGS(I32(0)));
  weft_vm_list_t* wide_constant = hal_test_make_list(HAL_ARGS(I64(1)));
  weft_vm_list_t* not_fences = hal_test_make_list(HAL_ARGS(REF(buffer)));
  int32_t ordinal = -1;
  weft_executable_t* executable = open_kernels(t, &ordinal);
  const weft_vm_value_t dev = REF(t->device);
  const weft_vm_value_t buf = REF(buffer);
  const weft_vm_value_t exe = REF(executable);
  const bad_call_t kCalls[] = {
      {"queue.fill", {dev, NUL(), NUL(), buf, I64(0), I64(-1), I32(0), I32(1)},
       8, WEFT_STATUS_INVALID_ARGUMENT,
       "hal.queue.fill: argument 'length' is -1; must be >= 0"},
      {"queue.fill", {dev, NUL(), NUL(), buf, I64(0), I64(4), I32(0), I32(3)},
       8, WEFT_STATUS_INVALID_ARGUMENT,
       "hal.queue.fill: argument 'pattern_length' is 3; must be 1, 2 or 4"},
      // Past the end of the buffer: the HAL's own error.
      {"queue.fill", {dev, NUL(), NUL(), buf, I64(32), I64(64), I32(0), I32(1)},
       8, WEFT_STATUS_OUT_OF_RANGE, "queue_fill"},
      {"queue.copy", {dev, NUL(), NUL(), buf, I64(-8), buf, I64(0), I64(4)}, 8,
       WEFT_STATUS_INVALID_ARGUMENT,
       "hal.queue.copy: argument 'source_offset' is -8"},
      {"queue.update",
       {dev, NUL(), NUL(), hal_test_bytes(text), I64(4), buf, I64(0), I64(8)},
       8, WEFT_STATUS_OUT_OF_RANGE,
       "hal.queue.update: argument 'source' range [4, 12) is past the end of "
       "its 10 bytes"},
      {"queue.update",
       {dev, NUL(), NUL(), hal_test_bytes(text), I64(0), buf, I64(0), I64(-1)},
       8, WEFT_STATUS_INVALID_ARGUMENT, "argument 'source' range offset 0 "
                                        "length -1 is negative"},
      {"queue.alloca", {dev, NUL(), NUL(), I64(-1)}, 4,
       WEFT_STATUS_INVALID_ARGUMENT, "hal.queue.alloca: argument 'length'"},
      {"queue.dispatch",
       {dev, NUL(), NUL(), exe, I32(2), I32(1), I32(1), I32(1), NUL(),
        hal_test_list(wrong_binding)},
       10, WEFT_STATUS_INVALID_ARGUMENT,
       "hal.queue.dispatch: argument 'bindings' element 0 is a "
       "'hal.semaphore', not a hal.buffer or a hal.buffer_view"},
      {"queue.dispatch",
       {dev, NUL(), NUL(), exe, I32(2), I32(1), I32(1), I32(1), NUL(),
        hal_test_list(null_binding)},
       10, WEFT_STATUS_INVALID_ARGUMENT,
       "argument 'bindings' element 0 is null"},
      // Slots are for recording only.
      {"queue.dispatch",
       {dev, NUL(), NUL(), exe, I32(2), I32(1), I32(1), I32(1), NUL(),
        hal_test_list(slot_binding)},
       10, WEFT_STATUS_INVALID_ARGUMENT,
       "argument 'bindings' element 0 is an i32, not a hal.buffer"},
      {"queue.dispatch",
       {dev, NUL(), NUL(), exe, I32(3), I32(1), I32(1), I32(1),
        hal_test_list(wide_constant), NUL()},
       10, WEFT_STATUS_INVALID_ARGUMENT,
       "hal.queue.dispatch: argument 'constants' element 0 is an i64, not an "
       "i32 or f32"},
      {"queue.dispatch",
       {dev, NUL(), NUL(), exe, I32(2), I32(-1), I32(1), I32(1), NUL(), NUL()},
       10, WEFT_STATUS_INVALID_ARGUMENT,
       "hal.queue.dispatch: argument 'x' is -1"},
      // The kernel's binding count is the HAL's to check.
      {"queue.dispatch",
       {dev, NUL(), NUL(), exe, I32(2), I32(1), I32(1), I32(1), NUL(), NUL()},
       10, WEFT_STATUS_INVALID_ARGUMENT, "write_ids"},
      {"queue.execute",
       {dev, NUL(), NUL(), NUL(), NUL()}, 5, WEFT_STATUS_INVALID_ARGUMENT,
       "hal.queue.execute: argument 3 is null"},
      {"semaphore.signal", {REF(semaphore), I64(-2)}, 2,
       WEFT_STATUS_INVALID_ARGUMENT, "hal.semaphore.signal: argument 'value'"},
      {"semaphore.fail", {REF(semaphore), I32(0)}, 2,
       WEFT_STATUS_INVALID_ARGUMENT,
       "hal.semaphore.fail: argument 'code' is 0, not a failure code"},
      {"semaphore.fail", {REF(semaphore), I32(WEFT_STATUS_DEFERRED)}, 2,
       WEFT_STATUS_INVALID_ARGUMENT, "not a failure code"},
      {"fence.at", {REF(semaphore), I64(-1)}, 2, WEFT_STATUS_INVALID_ARGUMENT,
       "hal.fence.at: argument 'value' is -1"},
      {"fence.await_list", {hal_test_list(not_fences), I64(0)}, 2,
       WEFT_STATUS_INVALID_ARGUMENT,
       "hal.fence.await_list: argument 'fences' element 0 is a 'hal.buffer', "
       "not a hal.fence"},
      {"device.open", {hal_test_bytes(nul)}, 1, WEFT_STATUS_INVALID_ARGUMENT,
       "hal.device.open: argument 'device_string' holds a NUL byte"},
      {"command_buffer.create", {dev, I32(1), I32(-3)}, 3,
       WEFT_STATUS_INVALID_ARGUMENT,
       "hal.command_buffer.create: argument 'binding_capacity' is -3"},
      // A ref of the wrong type never reaches the module: the VM's check.
      {"buffer.length", {REF(semaphore)}, 1, WEFT_STATUS_INVALID_ARGUMENT,
       "is a 'hal.semaphore', not a 'hal.buffer'"},
  };
  for (size_t i = 0; i < sizeof(kCalls) / sizeof(kCalls[0]); ++i) {
    weft_vm_value_t results[2] = {{0}};
    weft_status_t status = hal_test_call(t, kCalls[i].function, kCalls[i].args,
                                         kCalls[i].arg_count, results, 2);
    char text_out[2048];
    weft_status_format(status, text_out, sizeof(text_out));
    if (weft_status_code(status) != kCalls[i].code ||
        !strstr(text_out, kCalls[i].needle)) {
      weft_status_free(status);
      fail_msg("%s (case %zu): expected %s with '%s', got: %s",
               kCalls[i].function, i,
               weft_status_code_string(kCalls[i].code), kCalls[i].needle,
               text_out);
    }
    weft_status_free(status);
  }
  // Recording: a null buffer with a negative slot.
  weft_vm_value_t cb = hal_test_call_ok(
      t, "command_buffer.create", HAL_ARGS(dev, I32(1), I32(1)));
  expect_ok(hal_test_call(t, "command_buffer.begin", HAL_ARGS(cb), NULL, 0));
  expect_error(hal_test_call(t, "command_buffer.fill",
                             HAL_ARGS(cb, NUL(), I32(-1), I64(0), I64(4),
                                      I32(0), I32(1)),
                             NULL, 0),
               WEFT_STATUS_INVALID_ARGUMENT,
               "hal.command_buffer.fill: argument 'target_slot' is -1");
  weft_vm_list_t* bad_slot = hal_test_make_list(HAL_ARGS(I32(-2)));
  expect_error(hal_test_call(t, "command_buffer.dispatch",
                             HAL_ARGS(cb, exe, I32(2), I32(1), I32(1), I32(1),
                                      NUL(), hal_test_list(bad_slot)),
                             NULL, 0),
               WEFT_STATUS_INVALID_ARGUMENT,
               "argument 'bindings' element 0 is slot -2, not a hal.buffer, a "
               "hal.buffer_view or a binding slot");
  hal_test_release_list(bad_slot);
  release_value(cb);
  weft_executable_release(executable);
  hal_test_release_list(not_fences);
  hal_test_release_list(wide_constant);
  hal_test_release_list(slot_binding);
  hal_test_release_list(null_binding);
  hal_test_release_list(wrong_binding);
  hal_test_release_bytes(nul);
  hal_test_release_bytes(text);
  weft_semaphore_release(semaphore);
  weft_buffer_release(buffer);
}

// buffer_view.assert: a program's own check of a view against the element
// type and shape it expects, named by the caller.
static void buffer_view_assert_body(hal_test_t* t) {
  weft_buffer_t* buffer = hal_test_allocate(t, 256);
  weft_vm_list_t* shape = hal_test_make_list(HAL_ARGS(I64(16), I64(2)));
  weft_vm_value_t view = hal_test_call_ok(
      t, "buffer_view.create",
      HAL_ARGS(REF(buffer), I64(0), I32(WEFT_HAL_ELEMENT_TYPE_F32),
               hal_test_list(shape)));
  weft_vm_bytes_t* name = hal_test_make_bytes("w1");
  static const struct {
    int32_t element_type;
    uint32_t rank;
    int64_t shape[3];
    const char* needle;  // NULL: passes
  } kCases[] = {
      {WEFT_HAL_ELEMENT_TYPE_F32, 2, {16, 2}, NULL},
      {WEFT_HAL_ELEMENT_TYPE_F32, 2, {-1, 2}, NULL},
      {WEFT_HAL_ELEMENT_TYPE_F32, 2, {-1, -1}, NULL},
      {WEFT_HAL_ELEMENT_TYPE_F32, 2, {2, 16},
       "hal.buffer_view.assert: 'w1' must be 2x16 f32, got 16x2 f32 "
       "(transposed?; dimension 0 is 16, not 2)"},
      {WEFT_HAL_ELEMENT_TYPE_F16, 2, {16, 2},
       "'w1' must be 16x2 f16, got 16x2 f32 (element type f32, not f16)"},
      {WEFT_HAL_ELEMENT_TYPE_F32, 1, {32},
       "'w1' must be 32 f32, got 16x2 f32 (rank 2, not 1)"},
      {WEFT_HAL_ELEMENT_TYPE_F32, 2, {16, 3},
       "'w1' must be 16x3 f32, got 16x2 f32 (dimension 1 is 2, not 3)"},
      {WEFT_HAL_ELEMENT_TYPE_F32, 2, {-1, 3},
       "'w1' must be ?x3 f32, got 16x2 f32 (dimension 1 is 2, not 3)"},
      {99, 2, {16, 2},
       "hal.buffer_view.assert: argument 'element_type' is 99"},
      {WEFT_HAL_ELEMENT_TYPE_F32, 2, {-2, 2},
       "argument 'shape' element 0 is -2, not a size or -1 (any size)"},
  };
  for (size_t c = 0; c < sizeof(kCases) / sizeof(kCases[0]); ++c) {
    weft_vm_value_t dims[3];
    for (uint32_t i = 0; i < kCases[c].rank; ++i) {
      dims[i] = I64(kCases[c].shape[i]);
    }
    weft_vm_list_t* expected = hal_test_make_list(dims, kCases[c].rank);
    weft_status_t status = hal_test_call(
        t, "buffer_view.assert",
        HAL_ARGS(view, hal_test_bytes(name), I32(kCases[c].element_type),
                 hal_test_list(expected)),
        NULL, 0);
    if (kCases[c].needle) {
      expect_error(status, WEFT_STATUS_INVALID_ARGUMENT, kCases[c].needle);
    } else {
      expect_ok(status);
    }
    hal_test_release_list(expected);
  }
  // A null where a view is expected.
  weft_vm_list_t* expected = hal_test_make_list(HAL_ARGS(I64(-1)));
  expect_error(hal_test_call(t, "buffer_view.assert",
                             HAL_ARGS(NUL(), hal_test_bytes(name),
                                      I32(WEFT_HAL_ELEMENT_TYPE_F32),
                                      hal_test_list(expected)),
                             NULL, 0),
               WEFT_STATUS_INVALID_ARGUMENT,
               "'w1' must be a buffer view of ? f32, got null");
  hal_test_release_list(expected);
  hal_test_release_bytes(name);
  release_value(view);
  hal_test_release_list(shape);
  weft_buffer_release(buffer);
}

static void buffer_view_assert(void** state) {
  hal_test_for_each_device(buffer_view_assert_body);
}

static void argument_errors(void** state) {
  hal_test_for_each_device(argument_errors_body);
}

//===----------------------------------------------------------------------===//
// Options, wrapping
//===----------------------------------------------------------------------===//

static weft_vm_context_t* context_of(weft_vm_module_t* module) {
  weft_vm_context_t* context = NULL;
  expect_ok(weft_vm_context_create(&module, 1, weft_allocator_system(),
                                   &context));
  return context;
}

static void module_options(void** state) {
  // No options: no default device, but device.open works.
  weft_vm_module_t* module = NULL;
  expect_ok(weft_hal_module_create(NULL, weft_allocator_system(), &module));
  weft_vm_context_t* context = context_of(module);
  weft_vm_value_t result = {0};
  expect_error(weft_vm_invoke_sync(context, "hal.device.default", NULL, 0,
                                   &result, 1, 0, weft_allocator_system()),
               WEFT_STATUS_FAILED_PRECONDITION,
               "hal.device.default: the hal module was created without a "
               "default device");
  weft_vm_context_release(context);
  weft_vm_module_release(module);
  // A device given: the module and each context's state hold it.
  weft_device_t* device = NULL;
  expect_ok(weft_device_create("local-sync", weft_allocator_system(), &device));
  weft_hal_module_options_t options = {.device = device};
  expect_ok(weft_hal_module_create(&options, weft_allocator_system(), &module));
  context = context_of(module);
  weft_device_release(device);
  expect_ok(weft_vm_invoke_sync(context, "hal.device.default", NULL, 0,
                                &result, 1, 0, weft_allocator_system()));
  assert_ptr_equal(result.ref.object, device);
  weft_vm_ref_release(result.ref);
  weft_vm_module_release(module);
  // The context keeps the module (and its options) alive.
  expect_ok(weft_vm_invoke_sync(context, "hal.device.default", NULL, 0,
                                &result, 1, 0, weft_allocator_system()));
  weft_vm_ref_release(result.ref);
  weft_vm_context_release(context);
  // Contradicting options and bad libraries.
  options.device_string = "local-sync";
  expect_ok(weft_device_create("local-sync", weft_allocator_system(), &device));
  options.device = device;
  expect_error(weft_hal_module_create(&options, weft_allocator_system(),
                                      &module),
               WEFT_STATUS_INVALID_ARGUMENT, "both a device and a device string");
  assert_null(module);
  weft_device_release(device);
  const weft_hal_static_library_t twice[2] = {
      {"k", weft_cts_test_kernels_query}, {"k", weft_cts_test_kernels_query}};
  weft_hal_module_options_t libraries = {.static_library_count = 2,
                                         .static_libraries = twice};
  expect_error(weft_hal_module_create(&libraries, weft_allocator_system(),
                                      &module),
               WEFT_STATUS_INVALID_ARGUMENT,
               "static libraries 0 and 1 are both named 'k'");
  const weft_hal_static_library_t unnamed = {"", weft_cts_test_kernels_query};
  libraries = (weft_hal_module_options_t){.static_library_count = 1,
                                          .static_libraries = &unnamed};
  expect_error(weft_hal_module_create(&libraries, weft_allocator_system(),
                                      &module),
               WEFT_STATUS_INVALID_ARGUMENT, "static library 0 has no name");
  // A device string that does not open: the HAL's error, with the string.
  weft_hal_module_options_t bad = {.device_string = "local-snyc"};
  expect_error(weft_hal_module_create(&bad, weft_allocator_system(), &module),
               WEFT_STATUS_NOT_FOUND,
               "opening the default device 'local-snyc'");
  assert_null(module);
}

// A resource the module has no ref type for.
typedef struct fake_resource_t {
  weft_resource_t resource;
} fake_resource_t;

static void wrap(void** state) {
  hal_test_t t;
  hal_test_setup("local-sync", &t);
  weft_semaphore_t* semaphore = NULL;
  expect_ok(weft_semaphore_create(weft_allocator_system(), 0, &semaphore));
  weft_fence_t* fence = NULL;
  expect_ok(weft_fence_create(1, weft_allocator_system(), &fence));
  weft_buffer_t* buffer = hal_test_allocate(&t, 16);
  const struct {
    void* object;
    const char* name;
  } kObjects[] = {
      {t.device, "hal.device"},
      {semaphore, "hal.semaphore"},
      {fence, "hal.fence"},
      {buffer, "hal.buffer"},
  };
  for (size_t i = 0; i < sizeof(kObjects) / sizeof(kObjects[0]); ++i) {
    weft_vm_ref_t ref;
    expect_ok(weft_hal_module_wrap(kObjects[i].object, &ref));
    assert_ptr_equal(ref.object, kObjects[i].object);
    assert_string_equal(ref.type->name, kObjects[i].name);
    assert_ptr_equal(weft_hal_module_unwrap(ref, ref.type), kObjects[i].object);
  }
  assert_string_equal(weft_hal_ref_type(WEFT_RESOURCE_TYPE_EXECUTABLE)->name,
                      "hal.executable");
  assert_string_equal(
      weft_hal_ref_type(WEFT_RESOURCE_TYPE_COMMAND_BUFFER)->name,
      "hal.command_buffer");
  assert_string_equal(weft_hal_ref_type(WEFT_RESOURCE_TYPE_FILE)->name,
                      "hal.file");
  assert_null(weft_hal_ref_type(WEFT_RESOURCE_TYPE_NONE));
  assert_null(weft_hal_ref_type(WEFT_RESOURCE_TYPE_COUNT_));
  weft_vm_ref_t ref;
  expect_ok(weft_hal_module_wrap(NULL, &ref));
  assert_null(ref.object);
  fake_resource_t fake = {{0}};
  expect_error(weft_hal_module_wrap(&fake, &ref), WEFT_STATUS_INVALID_ARGUMENT,
               "has resource type 0");
  // Nor for channels (the module has no channel ops).
  weft_channel_t* channel = NULL;
  expect_ok(weft_channel_create_self(weft_allocator_system(), &channel));
  expect_error(weft_hal_module_wrap(channel, &ref),
               WEFT_STATUS_INVALID_ARGUMENT, "which the hal module has no ref");
  weft_channel_release(channel);
  // Unwrapping as another type gives NULL.
  expect_ok(weft_hal_module_wrap(buffer, &ref));
  assert_null(weft_hal_module_unwrap(ref, &kWeftHalFenceType));
  weft_buffer_release(buffer);
  weft_fence_release(fence);
  weft_semaphore_release(semaphore);
  hal_test_teardown(&t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(devices),
      cmocka_unit_test(transfers),
      cmocka_unit_test(files),
      cmocka_unit_test(alloca_dealloca),
      cmocka_unit_test(dispatch),
      cmocka_unit_test(execute),
      cmocka_unit_test(buffers_and_views),
      cmocka_unit_test(buffer_view_assert),
      cmocka_unit_test(element_types),
      cmocka_unit_test(argument_errors),
      cmocka_unit_test(module_options),
      cmocka_unit_test(wrap),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
