// Helpers shared by the block builder and block processor tests: a static
// kernel library, buffers, command construction and worker threads.
#ifndef WEFT_TESTS_LOCAL_TASK_BLOCK_TEST_UTIL_H_
#define WEFT_TESTS_LOCAL_TASK_BLOCK_TEST_UTIL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drivers/local_task/block_builder.h"
#include "drivers/local_task/block_processor.h"
#include "hal/command_buffer_impl.h"
#include "weft/buffer.h"
#include "weft/executable.h"
#include "weft/status.h"

// Kernel ordinals of the test library ("block_test").
enum {
  // Bindings: counters (uint32 per workgroup), owners (uint32 per
  // workgroup). Adds 1 to counters[flat] and stores processor_id + 1 in
  // owners[flat]. Constants: none.
  KERNEL_COUNT = 0,
  // Bindings: in, out (uint32 arrays of constants[0] elements). Constants:
  // n, expected. Fails with code 7 unless every in[j] == expected; then
  // writes out[flat] = expected + 1 for flat < n.
  KERNEL_PING_PONG = 1,
  // Fails with code constants[1] in flat workgroup constants[0]; else 0.
  // One binding (untouched).
  KERNEL_FAIL = 2,
  // 256 bytes of local memory. Bindings: owners (uint32 per workgroup),
  // scratch addresses (uint64 per workgroup). Constants: worker count.
  // Fills its scratch with processor_id, yields, checks it is unchanged
  // (code 5), fails with code 6 when processor_id >= the worker count.
  KERNEL_SCRATCH = 3,
  // Does nothing. No bindings, no constants.
  KERNEL_EMPTY = 4,
  // Binding: out (uint32 x 4 per workgroup): x, y, z, flat.
  KERNEL_IDS = 5,
  // 4096 constants; binding: out (uint32): the sum of the constants.
  KERNEL_SUM_CONSTANTS = 6,
  // Binding: flags (uint32 x 2). Sets flags[1] to 1 (started), then spins
  // (yielding) until flags[0] is non-zero.
  KERNEL_WAIT = 7,
};

#define TEST_SUM_CONSTANT_COUNT 4096u

void assert_ok_impl(weft_status_t status, const char* file, int line);
#define assert_ok(status) assert_ok_impl((status), __FILE__, __LINE__)
// Checks the code and that the formatted text contains |needle| (may be
// NULL); frees the status.
void assert_status_impl(weft_status_t status, weft_status_code_t code,
                        const char* needle, const char* file, int line);
#define assert_status(status, code, needle) \
  assert_status_impl((status), WEFT_STATUS_##code, (needle), __FILE__, __LINE__)

weft_executable_t* test_executable(void);
weft_buffer_t* test_buffer(weft_device_size_t length);
// Reads |length| bytes at |offset| of |buffer| into a new allocation the
// caller frees.
void* test_read(weft_buffer_t* buffer, weft_device_size_t offset,
                weft_device_size_t length);
void test_write(weft_buffer_t* buffer, weft_device_size_t offset,
                const void* data, weft_device_size_t length);

weft_command_t test_barrier(void);
weft_command_t test_fill(weft_buffer_ref_t target, uint32_t pattern,
                         uint32_t pattern_length);
weft_command_t test_update(weft_buffer_ref_t target, const void* data);
weft_command_t test_copy(weft_buffer_ref_t source, weft_buffer_ref_t target);
// |constants| and |bindings| must outlive the build.
weft_command_t test_dispatch(weft_executable_t* executable, uint32_t kernel,
                             uint32_t x, uint32_t y, uint32_t z,
                             uint32_t constant_count, const uint32_t* constants,
                             uint32_t binding_count,
                             const weft_buffer_ref_t* bindings);

// A growable list of commands (tests build hundreds).
typedef struct test_commands_t {
  weft_command_t* items;
  uint32_t count;
  uint32_t capacity;
} test_commands_t;
void test_commands_push(test_commands_t* list, weft_command_t command);
void test_commands_free(test_commands_t* list);

weft_block_recording_t* test_build(const test_commands_t* list,
                                   const weft_block_builder_options_t* options);

// Runs |context| to completion on |worker_count| threads (worker i drains
// as worker i with its own |scratch_size| bytes of scratch; 0 for none),
// then returns the consumed status.
weft_status_t test_run_threads(weft_block_processor_context_t* context,
                               uint32_t worker_count, size_t scratch_size);

// Creates a context with |worker_count| workers and runs it on that many
// threads; returns the status.
weft_status_t test_run(const weft_block_recording_t* recording,
                       weft_binding_table_t table, uint32_t worker_count,
                       weft_block_processor_flags_t flags);

#endif  // WEFT_TESTS_LOCAL_TASK_BLOCK_TEST_UTIL_H_
