// Unit tests for the block builder: block layout and splitting, fixup
// kinds, immutability under concurrent submissions, one-dispatch
// recordings in caller storage, the command-buffer hook, recording errors.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
// clang-format off
#include <cmocka.h>
// clang-format on

#include "base/thread.h"
#include "block_test_util.h"
#include "hal/local/transient_buffer.h"
#include "weft/command_buffer.h"
#include "weft/device.h"

// Walks |recording|'s blocks checking the ISA invariants: every command is
// aligned and inside its block, blocks chain by BRANCH and end in RETURN,
// the command index lists the work commands in stream order, fixups are
// numbered consecutively. Returns the number of BARRIER commands.
static uint32_t check_layout(const weft_block_recording_t* recording) {
  uint32_t blocks = 0;
  uint32_t work = 0;
  uint32_t barriers = 0;
  uint32_t fixups = 0;
  for (const weft_block_t* block = recording->first_block; block;
       block = block->next) {
    ++blocks;
    assert_int_equal(block->first_fixup, fixups);
    fixups += block->fixup_count;
    assert_true(sizeof(weft_block_t) + block->command_bytes +
                    block->fixup_count * sizeof(weft_block_fixup_t) <=
                block->capacity);
    const weft_block_cmd_header_t* command = weft_block_first_command(block);
    const uint8_t* end = (const uint8_t*)command + block->command_bytes;
    bool ended = false;
    while (!ended) {
      assert_true((const uint8_t*)command < end);
      assert_int_equal((uintptr_t)command % WEFT_BLOCK_ALIGNMENT, 0);
      assert_int_equal(command->size % WEFT_BLOCK_ALIGNMENT, 0);
      switch (command->opcode) {
        case WEFT_BLOCK_OP_DISPATCH:
        case WEFT_BLOCK_OP_FILL:
        case WEFT_BLOCK_OP_COPY:
        case WEFT_BLOCK_OP_UPDATE:
          assert_true(work < recording->command_count);
          assert_ptr_equal(recording->commands[work], command);
          ++work;
          break;
        case WEFT_BLOCK_OP_BARRIER:
          ++barriers;
          break;
        case WEFT_BLOCK_OP_BRANCH:
          assert_ptr_equal(((const weft_block_cmd_branch_t*)command)->target,
                           block->next);
          ended = true;
          break;
        case WEFT_BLOCK_OP_RETURN:
          assert_null(block->next);
          ended = true;
          break;
        default:
          fail_msg("opcode %u", command->opcode);
      }
      assert_true((const uint8_t*)command + command->size <= end);
      command = weft_block_next_command(command);
    }
    assert_ptr_equal(command, end);
  }
  assert_int_equal(blocks, recording->block_count);
  assert_int_equal(work, recording->command_count);
  assert_int_equal(fixups, recording->fixup_count);
  uint32_t region_commands = 0;
  for (uint32_t r = 0; r < recording->region_count; ++r) {
    assert_int_equal(recording->regions[r].first_command, region_commands);
    assert_true(recording->regions[r].command_count > 0);
    region_commands += recording->regions[r].command_count;
  }
  assert_int_equal(region_commands, recording->command_count);
  return barriers;
}

static void empty_recording(void** state) {
  (void)state;
  test_commands_t list = {0};
  test_commands_push(&list, test_barrier());
  test_commands_push(&list, test_barrier());
  weft_block_recording_t* recording = test_build(&list, NULL);
  assert_int_equal(check_layout(recording), 0);
  assert_int_equal(recording->block_count, 1);
  assert_int_equal(recording->region_count, 0);
  assert_int_equal(recording->command_count, 0);
  weft_binding_table_t table = {0, NULL};
  assert_ok(test_run(recording, table, 1, 0));
  assert_ok(test_run(recording, table, 4, 0));
  weft_block_recording_free(recording);
  test_commands_free(&list);
}

// Hundreds of commands in regions of 10: blocks split with BRANCH and the
// result is right on one worker and on several.
static void many_commands_split_blocks(void** state) {
  (void)state;
  const uint32_t count = 600;
  weft_buffer_t* buffer = test_buffer(count * 4);
  test_commands_t list = {0};
  for (uint32_t i = 0; i < count; ++i) {
    test_commands_push(
        &list, test_fill(weft_make_buffer_ref(buffer, i * 4, 4), i * 3 + 1, 4));
    if (i % 10 == 9) test_commands_push(&list, test_barrier());
  }
  weft_block_recording_t* recording = test_build(&list, NULL);
  // The barrier after the last fill closes a region too.
  assert_int_equal(check_layout(recording), count / 10);
  assert_true(recording->block_count > 2);
  assert_int_equal(recording->region_count, count / 10);
  assert_int_equal(recording->command_count, count);
  // One buffer: mapped once while recording.
  assert_int_equal(recording->direct_mapping_count, 1);
  weft_binding_table_t table = {0, NULL};
  for (uint32_t workers = 1; workers <= 3; ++workers) {
    uint32_t zero = 0;
    assert_ok(weft_buffer_map_fill(buffer, 0, count * 4, &zero, 4));
    assert_ok(test_run(recording, table, workers, 0));
    uint32_t* data = (uint32_t*)test_read(buffer, 0, count * 4);
    for (uint32_t i = 0; i < count; ++i) assert_int_equal(data[i], i * 3 + 1);
    free(data);
  }
  weft_block_recording_free(recording);
  test_commands_free(&list);
  weft_buffer_release(buffer);
}

// Updates larger than a block are cut into pieces across blocks; with tiny
// blocks too.
static void large_updates_split(void** state) {
  (void)state;
  const uint32_t sizes[] = {1, 7, 64, 1000, 8192, 100000};
  const uint32_t block_sizes[] = {0, 256, 1024};
  for (size_t b = 0; b < sizeof(block_sizes) / sizeof(block_sizes[0]); ++b) {
    uint32_t total = 0;
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i) {
      total += sizes[i];
    }
    uint8_t* source = (uint8_t*)malloc(total);
    for (uint32_t i = 0; i < total; ++i) source[i] = (uint8_t)(i * 7 + b);
    weft_buffer_t* buffer = test_buffer(total + 16);
    test_commands_t list = {0};
    uint32_t offset = 0;
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i) {
      test_commands_push(
          &list, test_update(weft_make_buffer_ref(buffer, offset, sizes[i]),
                             source + offset));
      offset += sizes[i];
    }
    weft_block_builder_options_t options = {0};
    options.block_size = block_sizes[b];
    weft_block_recording_t* recording = test_build(&list, &options);
    check_layout(recording);
    uint32_t block_size =
        block_sizes[b] ? block_sizes[b] : WEFT_BLOCK_DEFAULT_BLOCK_SIZE;
    assert_true(recording->block_count >= total / block_size);
    // One fixup per update, however many pieces.
    assert_int_equal(recording->fixup_count, sizeof(sizes) / sizeof(sizes[0]));
    assert_true(recording->command_count > sizeof(sizes) / sizeof(sizes[0]));
    for (const weft_block_t* block = recording->first_block; block;
         block = block->next) {
      assert_int_equal(block->capacity, block_size);
    }
    weft_binding_table_t table = {0, NULL};
    assert_ok(test_run(recording, table, b == 0 ? 1 : 3, 0));
    uint8_t* data = (uint8_t*)test_read(buffer, 0, total + 16);
    assert_memory_equal(data, source, total);
    for (uint32_t i = total; i < total + 16; ++i) assert_int_equal(data[i], 0);
    free(data);
    weft_block_recording_free(recording);
    test_commands_free(&list);
    weft_buffer_release(buffer);
    free(source);
  }
}

// A dispatch whose constants exceed a block gets a block of its own size.
static void oversized_command_gets_own_block(void** state) {
  (void)state;
  weft_executable_t* executable = test_executable();
  weft_buffer_t* out = test_buffer(4);
  uint32_t* constants =
      (uint32_t*)malloc(TEST_SUM_CONSTANT_COUNT * sizeof(uint32_t));
  uint32_t expected = 0;
  for (uint32_t i = 0; i < TEST_SUM_CONSTANT_COUNT; ++i) {
    constants[i] = i * 31 + 1;
    expected += constants[i];
  }
  weft_buffer_ref_t binding = weft_make_buffer_ref(out, 0, WEFT_WHOLE_BUFFER);
  test_commands_t list = {0};
  test_commands_push(&list, test_fill(binding, 0, 4));
  test_commands_push(&list, test_barrier());
  test_commands_push(
      &list, test_dispatch(executable, KERNEL_SUM_CONSTANTS, 1, 1, 1,
                           TEST_SUM_CONSTANT_COUNT, constants, 1, &binding));
  test_commands_push(&list, test_barrier());
  test_commands_push(&list, test_fill(weft_make_buffer_ref(out, 0, 0), 0, 4));
  weft_block_recording_t* recording = test_build(&list, NULL);
  free(constants);  // copied into the recording
  check_layout(recording);
  assert_int_equal(recording->block_count, 3);
  assert_true(recording->first_block->next->capacity >
              WEFT_BLOCK_DEFAULT_BLOCK_SIZE);
  weft_binding_table_t table = {0, NULL};
  assert_ok(test_run(recording, table, 2, 0));
  uint32_t* data = (uint32_t*)test_read(out, 0, 4);
  assert_int_equal(*data, expected);
  free(data);
  weft_block_recording_free(recording);
  test_commands_free(&list);
  weft_buffer_release(out);
  weft_executable_release(executable);
}

// Returns the kind of the fixup with recording-wide index |index|.
static weft_block_fixup_kind_t fixup_kind(
    const weft_block_recording_t* recording, uint32_t index) {
  for (const weft_block_t* block = recording->first_block; block;
       block = block->next) {
    if (index < block->first_fixup + block->fixup_count) {
      return (weft_block_fixup_kind_t)weft_block_fixup(
                 block, index - block->first_fixup)
          ->kind;
    }
  }
  fail_msg("no fixup %u", index);
  return WEFT_BLOCK_FIXUP_DIRECT;
}

// DIRECT for a heap buffer, LATE for a transient one (recorded before its
// memory exists), INDIRECT for table slots; each resolves correctly.
static void fixup_kinds(void** state) {
  (void)state;
  weft_buffer_t* heap = test_buffer(64);
  weft_buffer_t* transient = NULL;
  assert_ok(weft_transient_buffer_create(
      weft_allocator_system(), (weft_buffer_params_t){0}, 64, &transient));
  weft_buffer_t* bound = test_buffer(256);
  test_commands_t list = {0};
  test_commands_push(
      &list, test_fill(weft_make_buffer_ref(heap, 0, 64), 0x11111111u, 4));
  test_commands_push(
      &list, test_fill(weft_make_buffer_ref(transient, 0, 64), 0x22222222u, 4));
  // Slot 3 from offset 16 to the end of its range.
  test_commands_push(
      &list, test_fill(weft_make_indirect_buffer_ref(3, 16, WEFT_WHOLE_BUFFER),
                       0x33333333u, 4));
  test_commands_push(&list, test_barrier());
  test_commands_push(&list, test_copy(weft_make_buffer_ref(transient, 0, 16),
                                      weft_make_indirect_buffer_ref(3, 0, 16)));
  weft_block_recording_t* recording = test_build(&list, NULL);
  check_layout(recording);
  assert_int_equal(recording->fixup_count, 5);
  assert_int_equal(fixup_kind(recording, 0), WEFT_BLOCK_FIXUP_DIRECT);
  assert_int_equal(fixup_kind(recording, 1), WEFT_BLOCK_FIXUP_LATE);
  assert_int_equal(fixup_kind(recording, 2), WEFT_BLOCK_FIXUP_INDIRECT);
  assert_int_equal(fixup_kind(recording, 3), WEFT_BLOCK_FIXUP_LATE);
  assert_int_equal(fixup_kind(recording, 4), WEFT_BLOCK_FIXUP_INDIRECT);
  assert_int_equal(recording->late_buffer_count, 1);
  assert_int_equal(recording->used_slot_count, 1);
  assert_int_equal(recording->used_slots[0], 3);
  assert_int_equal(recording->direct_mapping_count, 1);

  // Slot 3 binds [32, 128) of |bound|.
  weft_buffer_binding_t bindings[4] = {{0}};
  bindings[3].buffer = bound;
  bindings[3].offset = 32;
  bindings[3].length = 96;
  weft_binding_table_t table = {4, bindings};

  // Before the transient buffer has memory: FAILED_PRECONDITION.
  weft_block_processor_params_t params = {0};
  params.worker_count = 2;
  weft_block_processor_context_t* context = NULL;
  assert_status(
      weft_block_processor_context_create(recording, table, &params,
                                          weft_allocator_system(), &context),
      FAILED_PRECONDITION, "used before its alloca ran");
  assert_null(context);

  assert_ok(weft_transient_buffer_commit(transient));
  assert_ok(test_run(recording, table, 2, 0));
  uint32_t* heap_data = (uint32_t*)test_read(heap, 0, 64);
  uint32_t* transient_data = (uint32_t*)test_read(transient, 0, 64);
  uint32_t* bound_data = (uint32_t*)test_read(bound, 0, 256);
  for (uint32_t i = 0; i < 16; ++i) {
    assert_int_equal(heap_data[i], 0x11111111u);
    assert_int_equal(transient_data[i], 0x22222222u);
  }
  for (uint32_t i = 0; i < 64; ++i) {
    uint32_t expected = 0;
    if (i >= 8 && i < 12) expected = 0x22222222u;   // the copy: [32, 48)
    if (i >= 12 && i < 32) expected = 0x33333333u;  // the fill: [48, 128)
    assert_int_equal(bound_data[i], expected);
  }
  free(heap_data);
  free(transient_data);
  free(bound_data);

  // After its dealloca: FAILED_PRECONDITION again.
  assert_ok(weft_transient_buffer_decommit(transient));
  assert_status(
      weft_block_processor_context_create(recording, table, &params,
                                          weft_allocator_system(), &context),
      FAILED_PRECONDITION, "used after its dealloca ran");

  weft_block_recording_free(recording);
  test_commands_free(&list);
  weft_buffer_release(heap);
  weft_buffer_release(transient);
  weft_buffer_release(bound);
}

// Many references to the same few buffers and slots keep one mapping, one
// late buffer and one slot entry each.
static void fixups_deduplicate(void** state) {
  (void)state;
  weft_executable_t* executable = test_executable();
  weft_buffer_t* a = test_buffer(4096);
  weft_buffer_t* transient = NULL;
  assert_ok(weft_transient_buffer_create(
      weft_allocator_system(), (weft_buffer_params_t){0}, 4096, &transient));
  weft_buffer_ref_t bindings[2] = {
      weft_make_buffer_ref(a, 0, WEFT_WHOLE_BUFFER),
      weft_make_indirect_buffer_ref(5, 0, WEFT_WHOLE_BUFFER),
  };
  weft_buffer_ref_t late_bindings[2] = {
      weft_make_buffer_ref(transient, 0, 2048),
      weft_make_buffer_ref(transient, 2048, 2048),
  };
  test_commands_t list = {0};
  for (uint32_t i = 0; i < 100; ++i) {
    test_commands_push(&list, test_dispatch(executable, KERNEL_COUNT, 8, 1, 1,
                                            0, NULL, 2, bindings));
    test_commands_push(&list, test_dispatch(executable, KERNEL_COUNT, 8, 1, 1,
                                            0, NULL, 2, late_bindings));
    test_commands_push(&list, test_barrier());
  }
  weft_block_recording_t* recording = test_build(&list, NULL);
  check_layout(recording);
  assert_int_equal(recording->direct_mapping_count, 1);
  assert_int_equal(recording->late_buffer_count, 1);
  assert_int_equal(recording->used_slot_count, 1);
  assert_int_equal(recording->slot_limit, 6);
  assert_int_equal(recording->executable_count, 1);
  assert_int_equal(recording->fixup_count, 400);
  assert_int_equal(recording->region_count, 100);
  weft_block_recording_free(recording);
  test_commands_free(&list);
  weft_buffer_release(a);
  weft_buffer_release(transient);
  weft_executable_release(executable);
}

// --- Immutability: one recording, two concurrent submissions

typedef struct concurrent_run_t {
  const weft_block_recording_t* recording;
  weft_binding_table_t table;
  uint32_t worker_count;
  uint32_t repeat;
  weft_status_t status;
} concurrent_run_t;

static int concurrent_run_main(void* user_data) {
  concurrent_run_t* run = (concurrent_run_t*)user_data;
  for (uint32_t i = 0; i < run->repeat && weft_status_is_ok(run->status); ++i) {
    run->status = test_run(run->recording, run->table, run->worker_count, 0);
  }
  return 0;
}

// Copies every block of |recording| into one allocation (to compare later).
static uint8_t* snapshot(const weft_block_recording_t* recording,
                         size_t* out_size) {
  size_t size = 0;
  for (const weft_block_t* b = recording->first_block; b; b = b->next) {
    size += b->capacity;
  }
  uint8_t* copy = (uint8_t*)malloc(size);
  size_t offset = 0;
  for (const weft_block_t* b = recording->first_block; b; b = b->next) {
    memcpy(copy + offset, b, b->capacity);
    offset += b->capacity;
  }
  *out_size = size;
  return copy;
}

static void recording_runs_concurrently_with_itself(void** state) {
  (void)state;
  weft_executable_t* executable = test_executable();
  const uint32_t n = 64;
  // Slot 0: ping-pong input, slot 1: output, slot 2: 4-byte fill target.
  weft_buffer_ref_t forward[2] = {
      weft_make_indirect_buffer_ref(0, 0, WEFT_WHOLE_BUFFER),
      weft_make_indirect_buffer_ref(1, 0, WEFT_WHOLE_BUFFER),
  };
  weft_buffer_ref_t backward[2] = {forward[1], forward[0]};
  uint32_t constants[8][2];
  test_commands_t list = {0};
  test_commands_push(
      &list, test_fill(weft_make_indirect_buffer_ref(0, 0, n * 4), 0, 4));
  for (uint32_t k = 0; k < 8; ++k) {
    test_commands_push(&list, test_barrier());
    constants[k][0] = n;
    constants[k][1] = k;
    test_commands_push(
        &list, test_dispatch(executable, KERNEL_PING_PONG, n, 1, 1, 2,
                             constants[k], 2, k % 2 ? backward : forward));
  }
  test_commands_push(&list, test_barrier());
  test_commands_push(
      &list, test_copy(weft_make_indirect_buffer_ref(0, 0, WEFT_WHOLE_BUFFER),
                       weft_make_indirect_buffer_ref(2, 0, WEFT_WHOLE_BUFFER)));
  weft_block_builder_options_t options = {0};
  options.dispatch_tile_size = 1;
  weft_block_recording_t* recording = test_build(&list, &options);
  size_t before_size = 0;
  uint8_t* before = snapshot(recording, &before_size);

  weft_buffer_t* buffers[2][3];
  weft_buffer_binding_t bindings[2][3];
  concurrent_run_t runs[2];
  for (uint32_t r = 0; r < 2; ++r) {
    for (uint32_t s = 0; s < 3; ++s) {
      buffers[r][s] = test_buffer(n * 4 + 64);
      bindings[r][s].buffer = buffers[r][s];
      bindings[r][s].offset = r * 32;  // the two tables differ in offsets
      bindings[r][s].length = n * 4;
    }
    runs[r].recording = recording;
    runs[r].table.count = 3;
    runs[r].table.bindings = bindings[r];
    runs[r].worker_count = 2 + r;
    runs[r].repeat = 20;
    runs[r].status = WEFT_OK;
  }
  weft_thread_t* thread = NULL;
  assert_ok(weft_thread_create(concurrent_run_main, &runs[1], NULL,
                               weft_allocator_system(), &thread));
  concurrent_run_main(&runs[0]);
  weft_thread_join(thread);
  assert_ok(runs[0].status);
  assert_ok(runs[1].status);
  for (uint32_t r = 0; r < 2; ++r) {
    uint32_t* result = (uint32_t*)test_read(buffers[r][2], r * 32, n * 4);
    for (uint32_t i = 0; i < n; ++i) assert_int_equal(result[i], 8);
    free(result);
  }
  size_t after_size = 0;
  uint8_t* after = snapshot(recording, &after_size);
  assert_int_equal(before_size, after_size);
  assert_memory_equal(before, after, before_size);
  free(before);
  free(after);
  for (uint32_t r = 0; r < 2; ++r) {
    for (uint32_t s = 0; s < 3; ++s) weft_buffer_release(buffers[r][s]);
  }
  weft_block_recording_free(recording);
  test_commands_free(&list);
  weft_executable_release(executable);
}

// --- One-dispatch recordings in caller storage

static void dispatch_in_caller_storage(void** state) {
  (void)state;
  weft_executable_t* executable = test_executable();
  const uint32_t n = 1000;
  weft_buffer_t* transient = NULL;
  assert_ok(weft_transient_buffer_create(
      weft_allocator_system(), (weft_buffer_params_t){0}, n * 4, &transient));
  weft_buffer_t* owners = test_buffer(n * 4);
  weft_buffer_ref_t bindings[2] = {
      weft_make_buffer_ref(transient, 0, WEFT_WHOLE_BUFFER),
      weft_make_buffer_ref(owners, 0, WEFT_WHOLE_BUFFER),
  };
  const uint32_t count[3] = {n, 1, 1};
  size_t size = weft_block_recording_dispatch_storage_size(0, 2);
  uint8_t* storage = (uint8_t*)malloc(size + 1);
  weft_block_recording_t* recording = NULL;
  assert_status(weft_block_recording_initialize_dispatch(
                    executable, KERNEL_COUNT, count, 0, NULL, 2, bindings, 0,
                    storage + 1, size - 1, &recording),
                RESOURCE_EXHAUSTED, "needed");
  weft_buffer_ref_t past_end[2] = {bindings[0],
                                   weft_make_buffer_ref(owners, 4, n * 4)};
  assert_status(weft_block_recording_initialize_dispatch(
                    executable, KERNEL_COUNT, count, 0, NULL, 2, past_end, 0,
                    storage + 1, size, &recording),
                OUT_OF_RANGE, "binding 1");
  // Unaligned storage on purpose.
  assert_ok(weft_block_recording_initialize_dispatch(
      executable, KERNEL_COUNT, count, 0, NULL, 2, bindings, 0, storage + 1,
      size, &recording));
  assert_true(recording->in_place);
  assert_int_equal(recording->late_buffer_count, 2);
  check_layout(recording);
  assert_ok(weft_transient_buffer_commit(transient));
  // Context storage from the caller as well.
  size_t context_size = weft_block_processor_context_storage_size(recording);
  uint8_t* context_storage = (uint8_t*)malloc(context_size + 3);
  weft_block_processor_params_t params = {0};
  params.worker_count = 3;
  weft_block_processor_context_t* context = NULL;
  assert_ok(weft_block_processor_context_initialize(
      recording, (weft_binding_table_t){0, NULL}, &params, context_storage + 3,
      context_size, &context));
  assert_ok(test_run_threads(context, 3, 0));
  weft_block_processor_context_deinitialize(context);
  uint32_t* counters = (uint32_t*)test_read(transient, 0, n * 4);
  for (uint32_t i = 0; i < n; ++i) assert_int_equal(counters[i], 1);
  free(counters);
  // One worker, through weft_block_processor_run with caller storage.
  assert_ok(weft_block_processor_run(recording, (weft_binding_table_t){0, NULL},
                                     NULL, 0, context_storage, context_size,
                                     weft_allocator_system()));
  counters = (uint32_t*)test_read(transient, 0, n * 4);
  for (uint32_t i = 0; i < n; ++i) assert_int_equal(counters[i], 2);
  free(counters);
  weft_block_recording_deinitialize(recording);
  free(context_storage);
  free(storage);
  assert_ok(weft_transient_buffer_decommit(transient));
  weft_buffer_release(transient);
  weft_buffer_release(owners);

  // An empty dispatch records nothing.
  const uint32_t empty[3] = {4, 0, 1};
  size = weft_block_recording_dispatch_storage_size(0, 0);
  storage = (uint8_t*)malloc(size);
  assert_ok(weft_block_recording_initialize_dispatch(
      executable, KERNEL_EMPTY, empty, 0, NULL, 0, NULL, 0, storage, size,
      &recording));
  assert_int_equal(recording->region_count, 0);
  assert_ok(weft_block_processor_run(recording, (weft_binding_table_t){0, NULL},
                                     NULL, 0, NULL, 0,
                                     weft_allocator_system()));
  weft_block_recording_deinitialize(recording);
  free(storage);
  weft_executable_release(executable);
}

// --- The command buffer hook

// Records |command_buffer|: a fill of [0, 128) of |buffer|, a barrier, a
// copy of [0, 64) to slot 0.
static void record_fill_and_copy(weft_command_buffer_t* command_buffer,
                                 weft_buffer_t* buffer) {
  assert_ok(weft_command_buffer_begin(command_buffer));
  uint32_t pattern = 0xABABABABu;
  assert_ok(weft_command_buffer_fill(
      command_buffer, weft_make_buffer_ref(buffer, 0, 128), &pattern, 4));
  assert_ok(weft_command_buffer_barrier(command_buffer));
  assert_ok(weft_command_buffer_copy(command_buffer,
                                     weft_make_buffer_ref(buffer, 0, 64),
                                     weft_make_indirect_buffer_ref(0, 0, 64)));
  assert_ok(weft_command_buffer_end(command_buffer));
}

// Ending a command buffer on local-task compiles it (the device's finalize
// hook); local-sync has no hook and no recording.
static void command_buffer_end_compiles_on_local_task(void** state) {
  (void)state;
  weft_device_t* device = NULL;
  assert_ok(weft_device_create("local-task?workers=2", weft_allocator_system(),
                               &device));
  weft_buffer_t* buffer = test_buffer(256);
  weft_command_buffer_t* command_buffer = NULL;
  assert_ok(weft_command_buffer_create(
      device, WEFT_COMMAND_BUFFER_MODE_REUSABLE, WEFT_COMMAND_CATEGORY_ANY, 1,
      &command_buffer));
  assert_null(weft_block_command_buffer_recording(command_buffer));
  record_fill_and_copy(command_buffer, buffer);
  const weft_block_recording_t* recording =
      weft_block_command_buffer_recording(command_buffer);
  assert_non_null(recording);
  check_layout(recording);
  assert_int_equal(recording->region_count, 2);
  weft_buffer_binding_t binding = {buffer, 128, 128};
  assert_ok(test_run(recording, (weft_binding_table_t){1, &binding}, 2, 0));
  uint32_t* data = (uint32_t*)test_read(buffer, 0, 256);
  for (uint32_t i = 0; i < 48; ++i) assert_int_equal(data[i], 0xABABABABu);
  for (uint32_t i = 48; i < 64; ++i) assert_int_equal(data[i], 0);
  free(data);
  // Freed with the command buffer (LeakSanitizer checks).
  weft_command_buffer_release(command_buffer);
  weft_device_release(device);

  assert_ok(weft_device_create("local-sync", weft_allocator_system(), &device));
  assert_ok(weft_command_buffer_create(
      device, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, WEFT_COMMAND_CATEGORY_ANY, 1,
      &command_buffer));
  record_fill_and_copy(command_buffer, buffer);
  assert_null(weft_block_command_buffer_recording(command_buffer));
  weft_command_buffer_release(command_buffer);
  weft_device_release(device);
  weft_buffer_release(buffer);
}

// --- Recording errors

static void recording_errors(void** state) {
  (void)state;
  weft_executable_t* executable = test_executable();
  weft_buffer_t* buffer = test_buffer(64);
  weft_block_recording_t* recording = NULL;
  weft_allocator_t allocator = weft_allocator_system();

  weft_block_builder_options_t options = {0};
  options.block_size = 100;
  assert_status(weft_block_recording_build(NULL, 0, &options, allocator, "test",
                                           &recording),
                INVALID_ARGUMENT, "block size 100");
  options.block_size = 0;
  options.transfer_tile_bytes = 12;
  assert_status(weft_block_recording_build(NULL, 0, &options, allocator, "test",
                                           &recording),
                INVALID_ARGUMENT, "transfer tile of 12 bytes");

  // A dispatch not matching its kernel (binding count).
  weft_buffer_ref_t bindings[2] = {
      weft_make_buffer_ref(buffer, 0, WEFT_WHOLE_BUFFER),
      weft_make_buffer_ref(buffer, 0, WEFT_WHOLE_BUFFER),
  };
  test_commands_t list = {0};
  test_commands_push(&list, test_fill(bindings[0], 0, 4));
  test_commands_push(&list, test_dispatch(executable, KERNEL_COUNT, 4, 1, 1, 0,
                                          NULL, 1, bindings));
  assert_status(weft_block_recording_build(list.items, list.count, NULL,
                                           allocator, "test", &recording),
                INVALID_ARGUMENT, "expects 2 bindings, got 1");
  assert_null(recording);
  test_commands_free(&list);

  // A binding past the end of its buffer is named.
  weft_buffer_ref_t past_end[2] = {bindings[0],
                                   weft_make_buffer_ref(buffer, 60, 8)};
  test_commands_push(&list, test_dispatch(executable, KERNEL_COUNT, 4, 1, 1, 0,
                                          NULL, 2, past_end));
  assert_status(weft_block_recording_build(list.items, list.count, NULL,
                                           allocator, "test", &recording),
                OUT_OF_RANGE, "for binding 1");
  test_commands_free(&list);

  // Workgroup counts whose product overflows.
  test_commands_push(
      &list, test_dispatch(executable, KERNEL_EMPTY, UINT32_MAX, UINT32_MAX,
                           UINT32_MAX, 0, NULL, 0, NULL));
  assert_status(weft_block_recording_build(list.items, list.count, NULL,
                                           allocator, "test", &recording),
                INVALID_ARGUMENT, "overflow 64 bits");
  test_commands_free(&list);

  // A bad fill pattern, a direct range past the end.
  test_commands_push(&list, test_fill(bindings[0], 0, 3));
  assert_status(weft_block_recording_build(list.items, list.count, NULL,
                                           allocator, "test", &recording),
                INVALID_ARGUMENT, "pattern length 3");
  test_commands_free(&list);
  test_commands_push(&list,
                     test_fill(weft_make_buffer_ref(buffer, 32, 64), 0, 4));
  assert_status(weft_block_recording_build(list.items, list.count, NULL,
                                           allocator, "test", &recording),
                OUT_OF_RANGE, "command 0 (fill)");
  test_commands_free(&list);

  // Every allocation failing in turn: RESOURCE_EXHAUSTED, nothing leaked or
  // left retained (LeakSanitizer), until the build succeeds.
  uint8_t update_data[3000] = {1};
  weft_buffer_ref_t indirect[2] = {
      weft_make_indirect_buffer_ref(2, 0, 64),
      weft_make_indirect_buffer_ref(9, 0, 64),
  };
  for (uint32_t i = 0; i < 40; ++i) {
    test_commands_push(&list, test_fill(bindings[0], 0, 4));
    test_commands_push(
        &list, test_dispatch(executable, KERNEL_COUNT, 4, 1, 1, 0, NULL, 2,
                             i % 2 ? indirect : bindings));
    test_commands_push(&list, test_barrier());
  }
  test_commands_push(
      &list, test_update(weft_make_buffer_ref(buffer, 0, 64), update_data));
  weft_block_builder_options_t small = {0};
  small.block_size = 512;
  bool built = false;
  for (int64_t fail_at = 0; !built; ++fail_at) {
    weft_failing_allocator_t failing;
    weft_allocator_t failing_allocator =
        weft_failing_allocator_initialize(allocator, fail_at, &failing);
    weft_status_t status = weft_block_recording_build(
        list.items, list.count, &small, failing_allocator, "test", &recording);
    if (weft_status_is_ok(status)) {
      built = true;
      assert_true(fail_at > 10);
      weft_block_recording_free(recording);
    } else {
      assert_status(status, RESOURCE_EXHAUSTED, NULL);
      assert_null(recording);
    }
  }
  test_commands_free(&list);
  weft_buffer_release(buffer);
  weft_executable_release(executable);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(empty_recording),
      cmocka_unit_test(many_commands_split_blocks),
      cmocka_unit_test(large_updates_split),
      cmocka_unit_test(oversized_command_gets_own_block),
      cmocka_unit_test(fixup_kinds),
      cmocka_unit_test(fixups_deduplicate),
      cmocka_unit_test(recording_runs_concurrently_with_itself),
      cmocka_unit_test(dispatch_in_caller_storage),
      cmocka_unit_test(command_buffer_end_compiles_on_local_task),
      cmocka_unit_test(recording_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
