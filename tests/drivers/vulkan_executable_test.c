// vulkan executables: what the CTS cannot say driver-neutrally, the SPIR-V
// format's checks. Every malformed module or table is refused with a
// status naming what is wrong before Vulkan sees it (vkCreateShaderModule
// and vkCreateComputePipelines trust their input). Runs on the CTS's
// device (--driver "vulkan?validation=on"; skipped without one) with the
// CTS's SPIR-V kernels as the well-formed module to break.
// setjmp.h, stdarg.h and stddef.h must come before cmocka.h.
// clang-format off
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
// clang-format on

#include <stdlib.h>
#include <string.h>

#include "cts.h"
#include "vulkan/cts_vulkan_kernels.h"
#include "weft/weft.h"

// A copy of the CTS's module, as words, for a case to break.
typedef struct module_copy_t {
  uint32_t* words;
  size_t word_count;
} module_copy_t;

static module_copy_t copy_module(size_t extra_words) {
  module_copy_t copy;
  copy.word_count = weft_cts_vulkan_spirv_size / 4;
  copy.words = calloc(copy.word_count + extra_words, sizeof(uint32_t));
  assert_non_null(copy.words);
  memcpy(copy.words, weft_cts_vulkan_spirv, weft_cts_vulkan_spirv_size);
  return copy;
}

// Creates an executable of |words| with |table| and checks the refusal.
static void expect_refused(weft_cts_t* cts, const void* data, size_t size,
                           uint32_t kernel_count,
                           const weft_kernel_def_t* table,
                           weft_status_code_t code, const char* needle_a,
                           const char* needle_b) {
  weft_executable_t* executable = NULL;
  weft_status_t status = weft_device_create_executable(
      cts->device,
      weft_executable_source_spirv("broken", data, size, kernel_count, table),
      &executable);
  assert_null(executable);
  weft_cts_assert_status_contains_both(status, code, needle_a, needle_b);
}

static void the_cts_module_loads(void** state) {
  weft_cts_t* cts = *state;
  weft_executable_t* executable = NULL;
  WEFT_ASSERT_OK(weft_device_create_executable(
      cts->device,
      weft_executable_source_spirv("cts", weft_cts_vulkan_spirv,
                                   weft_cts_vulkan_spirv_size,
                                   weft_cts_gpu_kernel_count,
                                   weft_cts_gpu_kernel_table),
      &executable));
  assert_int_equal(weft_executable_format(executable),
                   WEFT_EXECUTABLE_FORMAT_SPIRV);
  assert_string_equal(weft_executable_format_name(WEFT_EXECUTABLE_FORMAT_SPIRV),
                      "spirv");
  assert_int_equal(weft_executable_kernel_count(executable), 4);
  uint32_t ordinal = 0;
  WEFT_ASSERT_OK(weft_executable_lookup_kernel(executable, "fail", &ordinal));
  assert_int_equal(ordinal, 3);
  weft_executable_release(executable);
}

static void not_spirv(void** state) {
  const uint32_t zeros[8] = {0};
  expect_refused(*state, zeros, sizeof(zeros), weft_cts_gpu_kernel_count,
                 weft_cts_gpu_kernel_table, WEFT_STATUS_INVALID_ARGUMENT,
                 "'broken' is not a SPIR-V module", "magic number");
}

static void not_whole_words(void** state) {
  expect_refused(*state, weft_cts_vulkan_spirv, weft_cts_vulkan_spirv_size - 2,
                 weft_cts_gpu_kernel_count, weft_cts_gpu_kernel_table,
                 WEFT_STATUS_INVALID_ARGUMENT, "whole 4-byte words", "broken");
}

static void shorter_than_a_header(void** state) {
  expect_refused(*state, weft_cts_vulkan_spirv, 12, weft_cts_gpu_kernel_count,
                 weft_cts_gpu_kernel_table, WEFT_STATUS_INVALID_ARGUMENT,
                 "has 3 words", "header");
}

static void instruction_past_the_end(void** state) {
  module_copy_t copy = copy_module(0);
  // The first instruction (after the 5-word header) claims 65535 words.
  copy.words[5] = (copy.words[5] & 0xFFFFu) | (0xFFFFu << 16);
  expect_refused(*state, copy.words, copy.word_count * 4,
                 weft_cts_gpu_kernel_count, weft_cts_gpu_kernel_table,
                 WEFT_STATUS_INVALID_ARGUMENT, "malformed",
                 "claims 65535 words");
  free(copy.words);
}

static void zero_length_instruction(void** state) {
  module_copy_t copy = copy_module(0);
  copy.words[5] &= 0xFFFFu;
  expect_refused(*state, copy.words, copy.word_count * 4,
                 weft_cts_gpu_kernel_count, weft_cts_gpu_kernel_table,
                 WEFT_STATUS_INVALID_ARGUMENT, "malformed", "claims 0 words");
  free(copy.words);
}

static void missing_entry_point_lists_those_there(void** state) {
  const weft_kernel_def_t table[] = {{"softmax", NULL, 1, 0, {64, 1, 1}, 0}};
  expect_refused(*state, weft_cts_vulkan_spirv, weft_cts_vulkan_spirv_size, 1,
                 table, WEFT_STATUS_INVALID_ARGUMENT,
                 "kernel 'softmax' is not a GLCompute entry point",
                 "scale_offset, abs_range, write_ids, fail");
}

static void workgroup_size_must_match(void** state) {
  const weft_kernel_def_t table[] = {
      {"scale_offset", NULL, 2, 3, {32, 1, 1}, 0}};
  expect_refused(*state, weft_cts_vulkan_spirv, weft_cts_vulkan_spirv_size, 1,
                 table, WEFT_STATUS_INVALID_ARGUMENT,
                 "workgroup size 32x1x1 in the table", "64x1x1 in the module");
}

static void local_memory_is_the_shaders(void** state) {
  const weft_kernel_def_t table[] = {{"fail", NULL, 0, 1, {1, 1, 1}, 1024}};
  expect_refused(*state, weft_cts_vulkan_spirv, weft_cts_vulkan_spirv_size, 1,
                 table, WEFT_STATUS_INVALID_ARGUMENT,
                 "1024 bytes of local memory", "'fail'");
}

static void too_many_push_constants(void** state) {
  // 4 * (3 + 2 * 2 + 200) bytes: more than any device's push constants.
  const weft_kernel_def_t table[] = {
      {"scale_offset", NULL, 2, 200, {64, 1, 1}, 0}};
  expect_refused(*state, weft_cts_vulkan_spirv, weft_cts_vulkan_spirv_size, 1,
                 table, WEFT_STATUS_INVALID_ARGUMENT,
                 "828 bytes of push constants", "'scale_offset'");
}

static void no_kernel_table(void** state) {
  expect_refused(*state, weft_cts_vulkan_spirv, weft_cts_vulkan_spirv_size, 0,
                 NULL, WEFT_STATUS_INVALID_ARGUMENT, "no kernel table",
                 "broken");
}

static void kernel_without_a_name(void** state) {
  const weft_kernel_def_t table[] = {{NULL, NULL, 0, 1, {1, 1, 1}, 0}};
  expect_refused(*state, weft_cts_vulkan_spirv, weft_cts_vulkan_spirv_size, 1,
                 table, WEFT_STATUS_INVALID_ARGUMENT, "kernel 0 has no name",
                 "broken");
}

static void workgroup_size_builtin_with_several_kernels(void** state) {
  // OpDecorate %1 BuiltIn WorkgroupSize, appended: glslang's constant in a
  // module of four kernels would size all four.
  module_copy_t copy = copy_module(4);
  copy.words[copy.word_count + 0] = (4u << 16) | 71u;
  copy.words[copy.word_count + 1] = 1;
  copy.words[copy.word_count + 2] = 11;
  copy.words[copy.word_count + 3] = 25;
  expect_refused(*state, copy.words, (copy.word_count + 4) * 4,
                 weft_cts_gpu_kernel_count, weft_cts_gpu_kernel_table,
                 WEFT_STATUS_INVALID_ARGUMENT, "WorkgroupSize built-in",
                 "4 entry points");
  free(copy.words);
}

static void other_formats_refused(void** state) {
  weft_cts_t* cts = *state;
  weft_executable_t* executable = NULL;
  weft_status_t status = weft_device_create_executable(
      cts->device,
      weft_executable_source_cuda(WEFT_EXECUTABLE_FORMAT_CUDA_PTX, "ptx",
                                  "// ptx", 6, weft_cts_gpu_kernel_count,
                                  weft_cts_gpu_kernel_table),
      &executable);
  assert_null(executable);
  weft_cts_assert_status_contains_both(status, WEFT_STATUS_INVALID_ARGUMENT,
                                       "format cuda-ptx", "takes spirv");
}

// The executable keeps its own hold on the Vulkan device: it outlives the
// weft device that made it and still dispatches on a new one.
static void outlives_its_device(void** state) {
  weft_cts_t* cts = *state;
  weft_device_t* device = NULL;
  WEFT_ASSERT_OK(weft_device_create(weft_cts_device_string(),
                                    weft_allocator_system(), &device));
  weft_executable_t* executable = NULL;
  WEFT_ASSERT_OK(weft_device_create_executable(
      device,
      weft_executable_source_spirv("cts", weft_cts_vulkan_spirv,
                                   weft_cts_vulkan_spirv_size,
                                   weft_cts_gpu_kernel_count,
                                   weft_cts_gpu_kernel_table),
      &executable));
  weft_device_release(device);
  assert_int_equal(weft_executable_kernel_count(executable), 4);
  weft_executable_release(executable);
  (void)cts;
}

int main(int argc, char** argv) {
  const struct CMUnitTest tests[] = {
      WEFT_CTS_CASE(the_cts_module_loads),
      WEFT_CTS_CASE(not_spirv),
      WEFT_CTS_CASE(not_whole_words),
      WEFT_CTS_CASE(shorter_than_a_header),
      WEFT_CTS_CASE(instruction_past_the_end),
      WEFT_CTS_CASE(zero_length_instruction),
      WEFT_CTS_CASE(missing_entry_point_lists_those_there),
      WEFT_CTS_CASE(workgroup_size_must_match),
      WEFT_CTS_CASE(local_memory_is_the_shaders),
      WEFT_CTS_CASE(too_many_push_constants),
      WEFT_CTS_CASE(no_kernel_table),
      WEFT_CTS_CASE(kernel_without_a_name),
      WEFT_CTS_CASE(workgroup_size_builtin_with_several_kernels),
      WEFT_CTS_CASE(other_formats_refused),
      WEFT_CTS_CASE(outlives_its_device),
  };
  return weft_cts_run("vulkan_executable", tests,
                      sizeof(tests) / sizeof(tests[0]), argc, argv);
}
