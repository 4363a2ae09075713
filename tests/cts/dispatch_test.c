// CTS: kernel dispatch through queue_dispatch and command buffers.
#include <stdlib.h>
#include <string.h>

#include "cts.h"

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

// Allocates a buffer holding a copy of |data|.
static weft_buffer_t* buffer_with(weft_cts_t* cts, const void* data,
                                  weft_device_size_t length) {
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, length);
  weft_cts_write_buffer(cts, buffer, 0, data, length);
  return buffer;
}

// Dispatches through the queue, signalling a fresh semaphore to 1, and
// returns the submit error or else the wait's result.
static weft_status_t queue_dispatch_and_wait(
    weft_cts_t* cts, weft_executable_t* executable, uint32_t ordinal,
    const uint32_t workgroup_count[3], uint32_t constant_count,
    const uint32_t* constants, uint32_t binding_count,
    const weft_buffer_ref_t* bindings) {
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  uint64_t value = 1;
  return weft_cts_wait_submitted(
      semaphore,
      weft_device_queue_dispatch(
          cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_semaphore_list_empty(),
          weft_cts_list1(&semaphore, &value), executable, ordinal,
          workgroup_count, constant_count, constants, binding_count, bindings));
}

// Runs write_ids over |n| through queue_dispatch and checks every id.
static void write_ids_case(weft_cts_t* cts, uint32_t x, uint32_t y,
                           uint32_t z) {
  const uint32_t n[3] = {x, y, z};
  weft_device_size_t length = (weft_device_size_t)x * y * z * 16;
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, length);
  weft_cts_fill_buffer(cts, buffer, 0, length, &(uint32_t){0xDEADBEEFu}, 4);
  weft_buffer_ref_t binding = weft_make_buffer_ref(buffer, 0, length);
  WEFT_ASSERT_OK(queue_dispatch_and_wait(
      cts, cts->kernels, weft_cts_kernel_ordinal(cts->kernels, "write_ids"), n,
      0, NULL, 1, &binding));
  weft_cts_assert_ids(cts, buffer, 0, n);
  weft_buffer_release(buffer);
}

//===----------------------------------------------------------------------===//
// A local library: many bindings, scratch memory, dispatch state
//===----------------------------------------------------------------------===//

#define MANY_BINDINGS 20

// Binding i (one u32) = i * 1000 + constant 0 + workgroup x (one
// workgroup writes; others check the lengths).
static int many_bindings(const weft_dispatch_state_t* dispatch,
                         const weft_workgroup_state_t* workgroup) {
  if (dispatch->binding_count != MANY_BINDINGS) return 3;
  for (uint32_t i = 0; i < MANY_BINDINGS; ++i) {
    if (dispatch->binding_lengths[i] != sizeof(uint32_t)) return 4;
    ((uint32_t*)dispatch->binding_ptrs[i])[0] =
        i * 1000 + dispatch->constants[0] + workgroup->workgroup_id[0];
  }
  return 0;
}

// Fills its scratch memory, sums it back and stores the sum, the scratch
// size and the dispatch's workgroup size at the workgroup's slot.
static int scratch_sum(const weft_dispatch_state_t* dispatch,
                       const weft_workgroup_state_t* workgroup) {
  uint32_t words = dispatch->constants[0];
  if (!workgroup->local_memory ||
      workgroup->local_memory_size < words * sizeof(uint32_t)) {
    return 5;
  }
  uint32_t* scratch = (uint32_t*)workgroup->local_memory;
  for (uint32_t i = 0; i < words; ++i) {
    scratch[i] = i + workgroup->workgroup_id[0];
  }
  uint32_t sum = 0;
  for (uint32_t i = 0; i < words; ++i) sum += scratch[i];
  uint32_t* out = (uint32_t*)dispatch->binding_ptrs[0];
  uint32_t* slot = out + workgroup->workgroup_id[0] * 4;
  slot[0] = sum;
  slot[1] = (uint32_t)workgroup->local_memory_size;
  slot[2] = dispatch->workgroup_size[0];
  slot[3] = dispatch->workgroup_size[1] * 100 + dispatch->workgroup_size[2];
  return 0;
}

static const weft_kernel_def_t kLocalKernels[] = {
    {"many_bindings", many_bindings, MANY_BINDINGS, 1, {1, 1, 1}, 0},
    {"scratch_small", scratch_sum, 1, 1, {8, 2, 3}, 256},
    {"scratch_large", scratch_sum, 1, 1, {16, 1, 1}, 64 * 1024},
};
static const weft_kernel_library_t kLocalLibrary = {
    WEFT_KERNEL_ABI_VERSION, "dispatch_test_local", 3, kLocalKernels};
static const weft_kernel_library_t* local_query(uint32_t abi_version) {
  return abi_version == WEFT_KERNEL_ABI_VERSION ? &kLocalLibrary : NULL;
}

//===----------------------------------------------------------------------===//
// Cases
//===----------------------------------------------------------------------===//

#define SCALE_COUNT 200u

static void queue_dispatch_scale_offset(void** state) {
  weft_cts_t* cts = *state;
  float in[SCALE_COUNT];
  for (uint32_t i = 0; i < SCALE_COUNT; ++i) in[i] = (float)i - 50.0f;
  weft_buffer_t* input = buffer_with(cts, in, sizeof(in));
  weft_buffer_t* output = weft_cts_allocate_buffer(cts, sizeof(in));
  weft_buffer_ref_t bindings[2] = {
      weft_make_buffer_ref(input, 0, WEFT_WHOLE_BUFFER),
      weft_make_buffer_ref(output, 0, sizeof(in)),
  };
  uint32_t constants[3] = {weft_cts_f32_bits(2.0f), weft_cts_f32_bits(0.5f),
                           SCALE_COUNT};
  uint32_t workgroups[3] = {(SCALE_COUNT + 63) / 64, 1, 1};
  WEFT_ASSERT_OK(queue_dispatch_and_wait(
      cts, cts->kernels, weft_cts_kernel_ordinal(cts->kernels, "scale_offset"),
      workgroups, 3, constants, 2, bindings));
  float out[SCALE_COUNT];
  weft_cts_read_buffer(cts, output, 0, out, sizeof(out));
  for (uint32_t i = 0; i < SCALE_COUNT; ++i) {
    assert_true(out[i] == in[i] * 2.0f + 0.5f);
  }
  weft_buffer_release(input);
  weft_buffer_release(output);
}

static void command_buffer_dispatch_scale_offset(void** state) {
  weft_cts_t* cts = *state;
  float in[SCALE_COUNT];
  for (uint32_t i = 0; i < SCALE_COUNT; ++i) in[i] = (float)i * 0.25f;
  weft_buffer_t* input = buffer_with(cts, in, sizeof(in));
  weft_buffer_t* output = weft_cts_allocate_buffer(cts, sizeof(in));
  weft_command_buffer_t* command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
  weft_buffer_ref_t bindings[2] = {
      weft_make_buffer_ref(input, 0, sizeof(in)),
      weft_make_buffer_ref(output, 0, WEFT_WHOLE_BUFFER),
  };
  uint32_t constants[3] = {weft_cts_f32_bits(-3.0f), weft_cts_f32_bits(1.0f),
                           SCALE_COUNT};
  uint32_t workgroups[3] = {(SCALE_COUNT + 63) / 64, 1, 1};
  WEFT_ASSERT_OK(weft_command_buffer_dispatch(
      command_buffer, cts->kernels,
      weft_cts_kernel_ordinal(cts->kernels, "scale_offset"), workgroups, 3,
      constants, 2, bindings));
  // Constants are copied at record time.
  constants[0] = weft_cts_f32_bits(100.0f);
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  WEFT_ASSERT_OK(weft_cts_execute_and_wait(cts, command_buffer,
                                           weft_binding_table_empty()));
  float out[SCALE_COUNT];
  weft_cts_read_buffer(cts, output, 0, out, sizeof(out));
  for (uint32_t i = 0; i < SCALE_COUNT; ++i) {
    assert_true(out[i] == in[i] * -3.0f + 1.0f);
  }
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(input);
  weft_buffer_release(output);
}

static void abs_on_subrange(void** state) {
  weft_cts_t* cts = *state;
  int32_t data[300];
  for (int32_t i = 0; i < 300; ++i) data[i] = (i % 3 == 0) ? -i : i;
  weft_buffer_t* buffer = buffer_with(cts, data, sizeof(data));
  // Elements [10, 110) of the binding, which starts 20 elements in.
  weft_buffer_ref_t binding =
      weft_make_buffer_ref(buffer, 20 * sizeof(int32_t), 200 * sizeof(int32_t));
  uint32_t constants[2] = {10, 100};
  uint32_t workgroups[3] = {2, 1, 1};
  WEFT_ASSERT_OK(queue_dispatch_and_wait(
      cts, cts->kernels, weft_cts_kernel_ordinal(cts->kernels, "abs_range"),
      workgroups, 2, constants, 1, &binding));
  int32_t out[300];
  weft_cts_read_buffer(cts, buffer, 0, out, sizeof(out));
  for (int32_t i = 0; i < 300; ++i) {
    bool in_range = i >= 30 && i < 130;
    assert_int_equal(out[i], in_range ? abs(data[i]) : data[i]);
  }
  weft_buffer_release(buffer);
}

static void write_ids_1(void** state) { write_ids_case(*state, 1, 1, 1); }
static void write_ids_7(void** state) { write_ids_case(*state, 7, 1, 1); }
static void write_ids_1024(void** state) { write_ids_case(*state, 1024, 1, 1); }
static void write_ids_3d(void** state) { write_ids_case(*state, 4, 3, 2); }

static void write_ids_in_command_buffer_3d(void** state) {
  weft_cts_t* cts = *state;
  const uint32_t n[3] = {5, 2, 3};
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 5 * 2 * 3 * 16);
  weft_command_buffer_t* command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_REUSABLE, 1);
  weft_buffer_ref_t binding =
      weft_make_indirect_buffer_ref(0, 0, WEFT_WHOLE_BUFFER);
  WEFT_ASSERT_OK(weft_command_buffer_dispatch(
      command_buffer, cts->kernels,
      weft_cts_kernel_ordinal(cts->kernels, "write_ids"), n, 0, NULL, 1,
      &binding));
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  weft_buffer_binding_t entry = {buffer, 0, WEFT_WHOLE_BUFFER};
  weft_binding_table_t table = {1, &entry};
  WEFT_ASSERT_OK(weft_cts_execute_and_wait(cts, command_buffer, table));
  weft_cts_assert_ids(cts, buffer, 0, n);
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(buffer);
}

static void several_kernels_with_barriers(void** state) {
  weft_cts_t* cts = *state;
  float in[128];
  for (uint32_t i = 0; i < 128; ++i) in[i] = (float)i;
  weft_buffer_t* input = buffer_with(cts, in, sizeof(in));
  weft_buffer_t* middle = weft_cts_allocate_buffer(cts, sizeof(in));
  weft_buffer_t* output = weft_cts_allocate_buffer(cts, sizeof(in));
  weft_buffer_t* ids = weft_cts_allocate_buffer(cts, 6 * 16);
  uint32_t scale_offset = weft_cts_kernel_ordinal(cts->kernels, "scale_offset");
  weft_command_buffer_t* command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
  uint32_t workgroups[3] = {2, 1, 1};
  weft_buffer_ref_t first[2] = {
      weft_make_buffer_ref(input, 0, WEFT_WHOLE_BUFFER),
      weft_make_buffer_ref(middle, 0, WEFT_WHOLE_BUFFER),
  };
  uint32_t first_constants[3] = {weft_cts_f32_bits(2.0f),
                                 weft_cts_f32_bits(0.0f), 128};
  WEFT_ASSERT_OK(weft_command_buffer_dispatch(command_buffer, cts->kernels,
                                              scale_offset, workgroups, 3,
                                              first_constants, 2, first));
  WEFT_ASSERT_OK(weft_command_buffer_barrier(command_buffer));
  weft_buffer_ref_t second[2] = {
      weft_make_buffer_ref(middle, 0, WEFT_WHOLE_BUFFER),
      weft_make_buffer_ref(output, 0, WEFT_WHOLE_BUFFER),
  };
  uint32_t second_constants[3] = {weft_cts_f32_bits(3.0f),
                                  weft_cts_f32_bits(1.0f), 128};
  WEFT_ASSERT_OK(weft_command_buffer_dispatch(command_buffer, cts->kernels,
                                              scale_offset, workgroups, 3,
                                              second_constants, 2, second));
  WEFT_ASSERT_OK(weft_command_buffer_barrier(command_buffer));
  // The output's first 16 bytes are copied over the ids buffer's last
  // workgroup slot after write_ids ran.
  uint32_t id_workgroups[3] = {3, 2, 1};
  weft_buffer_ref_t id_binding =
      weft_make_buffer_ref(ids, 0, WEFT_WHOLE_BUFFER);
  WEFT_ASSERT_OK(weft_command_buffer_dispatch(
      command_buffer, cts->kernels,
      weft_cts_kernel_ordinal(cts->kernels, "write_ids"), id_workgroups, 0,
      NULL, 1, &id_binding));
  WEFT_ASSERT_OK(weft_command_buffer_barrier(command_buffer));
  WEFT_ASSERT_OK(weft_command_buffer_copy(
      command_buffer, weft_make_buffer_ref(output, 0, 16),
      weft_make_buffer_ref(ids, 5 * 16, WEFT_WHOLE_BUFFER)));
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  assert_int_equal(weft_command_buffer_command_count(command_buffer), 7);
  WEFT_ASSERT_OK(weft_cts_execute_and_wait(cts, command_buffer,
                                           weft_binding_table_empty()));
  float out[128];
  weft_cts_read_buffer(cts, output, 0, out, sizeof(out));
  for (uint32_t i = 0; i < 128; ++i) assert_true(out[i] == in[i] * 6.0f + 1.0f);
  uint32_t id_words[24];
  weft_cts_read_buffer(cts, ids, 0, id_words, sizeof(id_words));
  for (uint32_t i = 0; i < 5; ++i) assert_int_equal(id_words[i * 4 + 3], i);
  assert_memory_equal(&id_words[20], out, 16);
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(input);
  weft_buffer_release(middle);
  weft_buffer_release(output);
  weft_buffer_release(ids);
}

static void zero_workgroups_is_a_noop(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 64);
  weft_cts_fill_buffer(cts, buffer, 0, 64, &(uint8_t){0xAB}, 1);
  weft_buffer_ref_t binding = weft_make_buffer_ref(buffer, 0, 64);
  uint32_t write_ids = weft_cts_kernel_ordinal(cts->kernels, "write_ids");
  const uint32_t empties[3][3] = {{0, 1, 1}, {4, 0, 1}, {4, 4, 0}};
  for (int i = 0; i < 3; ++i) {
    WEFT_ASSERT_OK(queue_dispatch_and_wait(cts, cts->kernels, write_ids,
                                           empties[i], 0, NULL, 1, &binding));
  }
  weft_command_buffer_t* command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
  WEFT_ASSERT_OK(weft_command_buffer_dispatch(command_buffer, cts->kernels,
                                              write_ids, empties[2], 0, NULL, 1,
                                              &binding));
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  WEFT_ASSERT_OK(weft_cts_execute_and_wait(cts, command_buffer,
                                           weft_binding_table_empty()));
  uint8_t bytes[64];
  weft_cts_read_buffer(cts, buffer, 0, bytes, sizeof(bytes));
  for (int i = 0; i < 64; ++i) assert_int_equal(bytes[i], 0xAB);
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(buffer);
}

static void failing_kernel_fails_the_signal(void** state) {
  weft_cts_t* cts = *state;
  uint32_t constants[1] = {3};
  uint32_t workgroups[3] = {8, 1, 1};
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  uint64_t value = 1;
  WEFT_ASSERT_OK(weft_device_queue_dispatch(
      cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&semaphore, &value), cts->kernels,
      weft_cts_kernel_ordinal(cts->kernels, "fail"), workgroups, 1, constants,
      0, NULL));
  weft_status_t status = weft_cts_wait(semaphore, 1);
  char text[1024];
  weft_status_format(status, text, sizeof(text));
  assert_int_equal(weft_status_code(status), WEFT_STATUS_INTERNAL);
  assert_non_null(strstr(text, "kernel 'fail'"));
  assert_non_null(strstr(text, "cts_test_kernels"));
  assert_non_null(strstr(text, "(3, 0, 0)"));
  assert_non_null(strstr(text, "code 1"));
  weft_status_free(status);
  // The query reports the same failure.
  uint64_t current = 0;
  weft_cts_assert_status_contains(weft_semaphore_query(semaphore, &current),
                                  WEFT_STATUS_INTERNAL, "(3, 0, 0)");
  weft_semaphore_release(semaphore);
}

static void failing_kernel_in_command_buffer(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 16);
  weft_command_buffer_t* command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
  WEFT_ASSERT_OK(weft_command_buffer_fill(
      command_buffer, weft_make_buffer_ref(buffer, 0, 16), &(uint8_t){1}, 1));
  // Barriers order the commands (without them they may run concurrently).
  WEFT_ASSERT_OK(weft_command_buffer_barrier(command_buffer));
  uint32_t constants[1] = {0};
  uint32_t workgroups[3] = {2, 1, 1};
  WEFT_ASSERT_OK(weft_command_buffer_dispatch(
      command_buffer, cts->kernels,
      weft_cts_kernel_ordinal(cts->kernels, "fail"), workgroups, 1, constants,
      0, NULL));
  WEFT_ASSERT_OK(weft_command_buffer_barrier(command_buffer));
  // May or may not run: the command before it failed (weft/device.h).
  WEFT_ASSERT_OK(weft_command_buffer_fill(
      command_buffer, weft_make_buffer_ref(buffer, 0, 16), &(uint8_t){2}, 1));
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  weft_status_t status = weft_cts_execute_and_wait(cts, command_buffer,
                                                   weft_binding_table_empty());
  char text[1024];
  weft_status_format(status, text, sizeof(text));
  assert_int_equal(weft_status_code(status), WEFT_STATUS_INTERNAL);
  assert_non_null(strstr(text, "(0, 0, 0)"));
  // The kernel and the command are named, the same way on every driver.
  assert_non_null(strstr(text, "kernel 'fail'"));
  if (!strstr(text, "while executing command 2 (dispatch 'fail')")) {
    fail_msg("expected the command named in: %s", text);
  }
  weft_status_free(status);
  // The command before the failure ran; the one after may have.
  uint8_t bytes[16];
  weft_cts_read_buffer(cts, buffer, 0, bytes, sizeof(bytes));
  for (int i = 0; i < 16; ++i) assert_true(bytes[i] == 1 || bytes[i] == 2);
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(buffer);
}

// Submits a dispatch expected to be rejected synchronously with |code|
// (message containing |needle|) and checks the signal was not touched.
static void expect_dispatch_rejected(weft_cts_t* cts, uint32_t ordinal,
                                     uint32_t constant_count,
                                     uint32_t binding_count,
                                     const weft_buffer_ref_t* bindings,
                                     weft_status_code_t code,
                                     const char* needle) {
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  uint64_t value = 1;
  uint32_t constants[4] = {weft_cts_f32_bits(1.0f), 0, 64, 0};
  uint32_t workgroups[3] = {1, 1, 1};
  weft_cts_assert_status_contains(
      weft_device_queue_dispatch(
          cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_semaphore_list_empty(),
          weft_cts_list1(&semaphore, &value), cts->kernels, ordinal, workgroups,
          constant_count, constants, binding_count, bindings),
      code, needle);
  assert_int_equal(weft_cts_query_value(semaphore), 0);
  weft_semaphore_release(semaphore);
}

static void wrong_constant_count_rejected(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 256);
  weft_buffer_ref_t bindings[2] = {
      weft_make_buffer_ref(buffer, 0, 256),
      weft_make_buffer_ref(buffer, 0, 256),
  };
  expect_dispatch_rejected(
      cts, weft_cts_kernel_ordinal(cts->kernels, "scale_offset"), 2, 2,
      bindings, WEFT_STATUS_INVALID_ARGUMENT,
      "kernel 'scale_offset' expects 3 constants, got 2");
  expect_dispatch_rejected(
      cts, weft_cts_kernel_ordinal(cts->kernels, "scale_offset"), 4, 2,
      bindings, WEFT_STATUS_INVALID_ARGUMENT, "expects 3 constants, got 4");
  weft_buffer_release(buffer);
}

static void wrong_binding_count_rejected(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 256);
  weft_buffer_ref_t bindings[3] = {
      weft_make_buffer_ref(buffer, 0, 256),
      weft_make_buffer_ref(buffer, 0, 256),
      weft_make_buffer_ref(buffer, 0, 256),
  };
  expect_dispatch_rejected(
      cts, weft_cts_kernel_ordinal(cts->kernels, "scale_offset"), 3, 1,
      bindings, WEFT_STATUS_INVALID_ARGUMENT, "expects 2 bindings, got 1");
  expect_dispatch_rejected(
      cts, weft_cts_kernel_ordinal(cts->kernels, "abs_range"), 2, 3, bindings,
      WEFT_STATUS_INVALID_ARGUMENT, "expects 1 bindings, got 3");
  weft_buffer_release(buffer);
}

static void bad_ordinal_rejected(void** state) {
  weft_cts_t* cts = *state;
  expect_dispatch_rejected(cts, 7, 0, 0, NULL, WEFT_STATUS_INVALID_ARGUMENT,
                           "kernel ordinal 7 out of range (4 kernels in "
                           "'cts_test_kernels')");
}

static void binding_out_of_range_rejected(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 64);
  weft_buffer_ref_t binding = weft_make_buffer_ref(buffer, 32, 64);
  expect_dispatch_rejected(cts,
                           weft_cts_kernel_ordinal(cts->kernels, "write_ids"),
                           0, 1, &binding, WEFT_STATUS_OUT_OF_RANGE, NULL);
  weft_buffer_release(buffer);
}

static void binding_without_dispatch_usage_rejected(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = weft_cts_allocate_buffer_with_params(
      cts,
      (weft_buffer_params_t){.usage = WEFT_BUFFER_USAGE_TRANSFER |
                                      WEFT_BUFFER_USAGE_MAPPING},
      64);
  weft_buffer_ref_t binding = weft_make_buffer_ref(buffer, 0, 64);
  expect_dispatch_rejected(
      cts, weft_cts_kernel_ordinal(cts->kernels, "write_ids"), 0, 1, &binding,
      WEFT_STATUS_PERMISSION_DENIED, "DISPATCH_STORAGE");
  // Recording it is rejected the same way.
  weft_command_buffer_t* command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
  uint32_t workgroups[3] = {1, 1, 1};
  weft_cts_assert_status_contains(
      weft_command_buffer_dispatch(
          command_buffer, cts->kernels,
          weft_cts_kernel_ordinal(cts->kernels, "write_ids"), workgroups, 0,
          NULL, 1, &binding),
      WEFT_STATUS_PERMISSION_DENIED, "DISPATCH_STORAGE");
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(buffer);
}

static void command_buffer_dispatch_counts_rejected(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 256);
  weft_buffer_ref_t bindings[2] = {
      weft_make_buffer_ref(buffer, 0, 256),
      weft_make_buffer_ref(buffer, 0, 256),
  };
  uint32_t constants[3] = {0, 0, 0};
  uint32_t workgroups[3] = {1, 1, 1};
  weft_command_buffer_t* command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
  uint32_t scale_offset = weft_cts_kernel_ordinal(cts->kernels, "scale_offset");
  weft_cts_assert_status_contains(
      weft_command_buffer_dispatch(command_buffer, cts->kernels, scale_offset,
                                   workgroups, 2, constants, 2, bindings),
      WEFT_STATUS_INVALID_ARGUMENT, "expects 3 constants, got 2");
  weft_cts_assert_status_contains(
      weft_command_buffer_dispatch(command_buffer, cts->kernels, scale_offset,
                                   workgroups, 3, constants, 1, bindings),
      WEFT_STATUS_INVALID_ARGUMENT, "expects 2 bindings, got 1");
  weft_cts_assert_status_contains(
      weft_command_buffer_dispatch(command_buffer, cts->kernels, 9, workgroups,
                                   3, constants, 2, bindings),
      WEFT_STATUS_INVALID_ARGUMENT, "out of range");
  assert_int_equal(weft_command_buffer_command_count(command_buffer), 0);
  // end() reports the first of them.
  weft_cts_assert_status_contains(weft_command_buffer_end(command_buffer),
                                  WEFT_STATUS_INVALID_ARGUMENT, "got 2");
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(buffer);
}

static void dispatch_waits_for_its_wait_list(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 4 * 16);
  weft_semaphore_t* wait = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* signal = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1;
  weft_buffer_ref_t binding = weft_make_buffer_ref(buffer, 0, 64);
  uint32_t workgroups[3] = {2, 2, 1};
  WEFT_ASSERT_OK(weft_device_queue_dispatch(
      cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_cts_list1(&wait, &one),
      weft_cts_list1(&signal, &one), cts->kernels,
      weft_cts_kernel_ordinal(cts->kernels, "write_ids"), workgroups, 0, NULL,
      1, &binding));
  assert_int_equal(weft_cts_query_value(signal), 0);
  WEFT_ASSERT_OK(weft_semaphore_signal(wait, 1));
  WEFT_ASSERT_OK(weft_cts_wait(signal, 1));
  weft_cts_assert_ids(cts, buffer, 0, workgroups);
  weft_semaphore_release(wait);
  weft_semaphore_release(signal);
  weft_buffer_release(buffer);
}

static void many_bindings_dispatch(void** state) {
  weft_cts_t* cts = *state;
  // A CPU kernel library of its own.
  weft_cts_require(cts, WEFT_CTS_FEATURE_CPU_KERNEL_LIBRARIES);
  weft_executable_t* executable = NULL;
  WEFT_ASSERT_OK(weft_device_create_executable(
      cts->device, weft_executable_source_cpu_static(local_query),
      &executable));
  weft_buffer_t* buffer =
      weft_cts_allocate_buffer(cts, MANY_BINDINGS * sizeof(uint32_t));
  weft_buffer_ref_t bindings[MANY_BINDINGS];
  for (uint32_t i = 0; i < MANY_BINDINGS; ++i) {
    bindings[i] =
        weft_make_buffer_ref(buffer, i * sizeof(uint32_t), sizeof(uint32_t));
  }
  uint32_t constants[1] = {7};
  uint32_t workgroups[3] = {1, 1, 1};
  WEFT_ASSERT_OK(queue_dispatch_and_wait(
      cts, executable, weft_cts_kernel_ordinal(executable, "many_bindings"),
      workgroups, 1, constants, MANY_BINDINGS, bindings));
  uint32_t words[MANY_BINDINGS];
  weft_cts_read_buffer(cts, buffer, 0, words, sizeof(words));
  for (uint32_t i = 0; i < MANY_BINDINGS; ++i) {
    assert_int_equal(words[i], i * 1000 + 7);
  }
  // And through a command buffer with every binding indirect.
  weft_command_buffer_t* command_buffer = weft_cts_begin_command_buffer(
      cts, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, MANY_BINDINGS);
  weft_buffer_binding_t entries[MANY_BINDINGS];
  for (uint32_t i = 0; i < MANY_BINDINGS; ++i) {
    bindings[i] = weft_make_indirect_buffer_ref(MANY_BINDINGS - 1 - i, 0,
                                                WEFT_WHOLE_BUFFER);
    entries[i].buffer = buffer;
    entries[i].offset = i * sizeof(uint32_t);
    entries[i].length = sizeof(uint32_t);
  }
  constants[0] = 9;
  WEFT_ASSERT_OK(weft_command_buffer_dispatch(
      command_buffer, executable,
      weft_cts_kernel_ordinal(executable, "many_bindings"), workgroups, 1,
      constants, MANY_BINDINGS, bindings));
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  weft_binding_table_t table = {MANY_BINDINGS, entries};
  WEFT_ASSERT_OK(weft_cts_execute_and_wait(cts, command_buffer, table));
  weft_cts_read_buffer(cts, buffer, 0, words, sizeof(words));
  for (uint32_t i = 0; i < MANY_BINDINGS; ++i) {
    // Binding i went to slot (19 - i), i.e. word (19 - i).
    assert_int_equal(words[MANY_BINDINGS - 1 - i], i * 1000 + 9);
  }
  weft_command_buffer_release(command_buffer);
  weft_executable_release(executable);
  weft_buffer_release(buffer);
}

static void scratch_memory(void** state) {
  weft_cts_t* cts = *state;
  // A CPU kernel library of its own.
  weft_cts_require(cts, WEFT_CTS_FEATURE_CPU_KERNEL_LIBRARIES);
  weft_executable_t* executable = NULL;
  WEFT_ASSERT_OK(weft_device_create_executable(
      cts->device, weft_executable_source_cpu_static(local_query),
      &executable));
  const char* const kNames[2] = {"scratch_small", "scratch_large"};
  const uint32_t kWords[2] = {64, 16 * 1024};
  for (int k = 0; k < 2; ++k) {
    weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 5 * 16);
    weft_buffer_ref_t binding =
        weft_make_buffer_ref(buffer, 0, WEFT_WHOLE_BUFFER);
    uint32_t constants[1] = {kWords[k]};
    uint32_t workgroups[3] = {5, 1, 1};
    WEFT_ASSERT_OK(queue_dispatch_and_wait(
        cts, executable, weft_cts_kernel_ordinal(executable, kNames[k]),
        workgroups, 1, constants, 1, &binding));
    uint32_t out[20];
    weft_cts_read_buffer(cts, buffer, 0, out, sizeof(out));
    // The library's own table says what each kernel asked for.
    const weft_kernel_def_t* kernel =
        &kLocalKernels[weft_cts_kernel_ordinal(executable, kNames[k])];
    for (uint32_t x = 0; x < 5; ++x) {
      uint32_t n = kWords[k];
      uint32_t expected = n * (n - 1) / 2 + x * n;
      assert_int_equal(out[x * 4 + 0], expected);
      assert_true(out[x * 4 + 1] >= kernel->local_memory_size);
      assert_int_equal(out[x * 4 + 2], kernel->workgroup_size[0]);
      assert_int_equal(out[x * 4 + 3], kernel->workgroup_size[1] * 100 +
                                           kernel->workgroup_size[2]);
    }
    weft_buffer_release(buffer);
  }
  weft_executable_release(executable);
}

int main(int argc, char** argv) {
  const struct CMUnitTest tests[] = {
      WEFT_CTS_CASE(queue_dispatch_scale_offset),
      WEFT_CTS_CASE(command_buffer_dispatch_scale_offset),
      WEFT_CTS_CASE(abs_on_subrange),
      WEFT_CTS_CASE(write_ids_1),
      WEFT_CTS_CASE(write_ids_7),
      WEFT_CTS_CASE(write_ids_1024),
      WEFT_CTS_CASE(write_ids_3d),
      WEFT_CTS_CASE(write_ids_in_command_buffer_3d),
      WEFT_CTS_CASE(several_kernels_with_barriers),
      WEFT_CTS_CASE(zero_workgroups_is_a_noop),
      WEFT_CTS_CASE(failing_kernel_fails_the_signal),
      WEFT_CTS_CASE(failing_kernel_in_command_buffer),
      WEFT_CTS_CASE(wrong_constant_count_rejected),
      WEFT_CTS_CASE(wrong_binding_count_rejected),
      WEFT_CTS_CASE(bad_ordinal_rejected),
      WEFT_CTS_CASE(binding_out_of_range_rejected),
      WEFT_CTS_CASE(binding_without_dispatch_usage_rejected),
      WEFT_CTS_CASE(command_buffer_dispatch_counts_rejected),
      WEFT_CTS_CASE(dispatch_waits_for_its_wait_list),
      WEFT_CTS_CASE(many_bindings_dispatch),
      WEFT_CTS_CASE(scratch_memory),
  };
  return weft_cts_run("dispatch", tests, WEFT_CTS_COUNT(tests), argc, argv);
}
