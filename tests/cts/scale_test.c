// CTS: dispatch sizes and command buffers with many regions.
//
// Dispatches of 1, 7, 1024 and 100,000 workgroups check every workgroup id
// (a multi-threaded driver splits them in tiles among workers). Command
// buffers with hundreds of commands, barriers and large updates force a
// block-compiling driver to split its blocks and to move through many
// regions; the results are checked against a host model that applies the
// same commands in order.
#include <stdlib.h>
#include <string.h>

#include "cts.h"

#define MS (1000ll * 1000ll)

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

// Allocates |length| bytes filled with the 4-byte |pattern|.
static weft_buffer_t* buffer_of(weft_cts_t* cts, weft_device_size_t length,
                                uint32_t pattern) {
  return weft_cts_allocate_filled_buffer(cts, length, &pattern, 4);
}

//===----------------------------------------------------------------------===//
// Dispatch sizes
//===----------------------------------------------------------------------===//

// Runs write_ids over |n| workgroups in a command buffer (direct binding, or
// indirect through a binding table at an offset) and checks every id.
static void command_buffer_write_ids(weft_cts_t* cts, uint32_t x, uint32_t y,
                                     uint32_t z, bool indirect) {
  const uint32_t n[3] = {x, y, z};
  weft_device_size_t length = (weft_device_size_t)x * y * z * 16;
  weft_device_size_t offset = indirect ? 256 : 0;
  weft_buffer_t* buffer = buffer_of(cts, offset + length, 0xDEADBEEFu);
  weft_command_buffer_t* command_buffer = weft_cts_begin_command_buffer(
      cts, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, indirect ? 1 : 0);
  weft_buffer_ref_t binding = indirect
                                  ? weft_make_indirect_buffer_ref(0, 0, length)
                                  : weft_make_buffer_ref(buffer, 0, length);
  WEFT_ASSERT_OK(weft_command_buffer_dispatch(
      command_buffer, cts->kernels,
      weft_cts_kernel_ordinal(cts->kernels, "write_ids"), n, 0, NULL, 1,
      &binding));
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  weft_buffer_binding_t entry = {buffer, offset, length};
  weft_binding_table_t table = {1, &entry};
  WEFT_ASSERT_OK(weft_cts_execute_and_wait(
      cts, command_buffer, indirect ? table : weft_binding_table_empty()));
  weft_cts_assert_ids(cts, buffer, offset, n);
  if (indirect) {
    // Nothing before the bound range was touched.
    uint32_t words[64];
    weft_cts_read_buffer(cts, buffer, 0, words, sizeof(words));
    for (int i = 0; i < 64; ++i) assert_int_equal(words[i], 0xDEADBEEFu);
  }
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(buffer);
}

static void command_buffer_workgroups_1(void** state) {
  command_buffer_write_ids(*state, 1, 1, 1, false);
}
static void command_buffer_workgroups_7(void** state) {
  command_buffer_write_ids(*state, 7, 1, 1, false);
}
static void command_buffer_workgroups_1024(void** state) {
  command_buffer_write_ids(*state, 1024, 1, 1, true);
}
static void command_buffer_workgroups_100000(void** state) {
  command_buffer_write_ids(*state, 100000, 1, 1, false);
}
static void command_buffer_workgroups_100000_3d_indirect(void** state) {
  command_buffer_write_ids(*state, 125, 40, 20, true);
}

static void queue_dispatch_workgroups_100000(void** state) {
  weft_cts_t* cts = *state;
  const uint32_t n[3] = {100000, 1, 1};
  weft_device_size_t length = (weft_device_size_t)n[0] * 16;
  weft_buffer_t* buffer = buffer_of(cts, length, 0xDEADBEEFu);
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1;
  weft_buffer_ref_t binding = weft_make_buffer_ref(buffer, 0, length);
  WEFT_ASSERT_OK(weft_device_queue_dispatch(
      cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&semaphore, &one), cts->kernels,
      weft_cts_kernel_ordinal(cts->kernels, "write_ids"), n, 0, NULL, 1,
      &binding));
  WEFT_ASSERT_OK(
      weft_semaphore_wait(semaphore, 1, weft_timeout_relative(60000 * MS)));
  weft_cts_assert_ids(cts, buffer, 0, n);
  weft_semaphore_release(semaphore);
  weft_buffer_release(buffer);
}

static void regions_of_alternating_sizes(void** state) {
  // Regions of 100,000, 1, 1024, 7, 1 and 100,000 workgroups separated by
  // barriers, each followed (after another barrier) by a copy of the
  // previous region's output: every region sees its predecessor complete.
  weft_cts_t* cts = *state;
  static const uint32_t kSizes[] = {100000, 1, 1024, 7, 1, 100000};
  enum { kRegions = sizeof(kSizes) / sizeof(kSizes[0]) };
  weft_device_size_t offsets[kRegions + 1];
  offsets[0] = 0;
  for (int i = 0; i < kRegions; ++i) {
    offsets[i + 1] = offsets[i] + (weft_device_size_t)kSizes[i] * 16;
  }
  weft_buffer_t* ids = buffer_of(cts, offsets[kRegions], 0xDEADBEEFu);
  weft_buffer_t* copies = buffer_of(cts, offsets[kRegions], 0xDEADBEEFu);
  weft_command_buffer_t* command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
  uint32_t ordinal = weft_cts_kernel_ordinal(cts->kernels, "write_ids");
  for (int i = 0; i < kRegions; ++i) {
    const uint32_t n[3] = {kSizes[i], 1, 1};
    weft_buffer_ref_t binding = weft_make_buffer_ref(
        ids, offsets[i], (weft_device_size_t)kSizes[i] * 16);
    WEFT_ASSERT_OK(weft_command_buffer_dispatch(
        command_buffer, cts->kernels, ordinal, n, 0, NULL, 1, &binding));
    if (i > 0) {
      // In the same region as dispatch i: the copy of region i - 1.
      weft_device_size_t length = offsets[i] - offsets[i - 1];
      WEFT_ASSERT_OK(weft_command_buffer_copy(
          command_buffer, weft_make_buffer_ref(ids, offsets[i - 1], length),
          weft_make_buffer_ref(copies, offsets[i - 1], length)));
    }
    WEFT_ASSERT_OK(weft_command_buffer_barrier(command_buffer));
  }
  weft_device_size_t last = offsets[kRegions] - offsets[kRegions - 1];
  WEFT_ASSERT_OK(weft_command_buffer_copy(
      command_buffer, weft_make_buffer_ref(ids, offsets[kRegions - 1], last),
      weft_make_buffer_ref(copies, offsets[kRegions - 1], last)));
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  WEFT_ASSERT_OK(weft_cts_execute_and_wait(cts, command_buffer,
                                           weft_binding_table_empty()));
  for (int i = 0; i < kRegions; ++i) {
    const uint32_t n[3] = {kSizes[i], 1, 1};
    weft_cts_assert_ids(cts, ids, offsets[i], n);
    weft_cts_assert_ids(cts, copies, offsets[i], n);
  }
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(ids);
  weft_buffer_release(copies);
}

static void many_dispatches_in_one_region(void** state) {
  // 64 dispatches with no barrier between them, of 1..64 x 17 workgroups,
  // each writing its own range: they may run in any order or together.
  weft_cts_t* cts = *state;
  enum { kDispatches = 64 };
  weft_device_size_t offsets[kDispatches + 1];
  offsets[0] = 0;
  for (uint32_t i = 0; i < kDispatches; ++i) {
    offsets[i + 1] = offsets[i] + (weft_device_size_t)(i + 1) * 17 * 16;
  }
  weft_buffer_t* buffer = buffer_of(cts, offsets[kDispatches], 0xDEADBEEFu);
  weft_command_buffer_t* command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
  uint32_t ordinal = weft_cts_kernel_ordinal(cts->kernels, "write_ids");
  for (uint32_t i = 0; i < kDispatches; ++i) {
    const uint32_t n[3] = {(i + 1) * 17, 1, 1};
    weft_buffer_ref_t binding =
        weft_make_buffer_ref(buffer, offsets[i], offsets[i + 1] - offsets[i]);
    WEFT_ASSERT_OK(weft_command_buffer_dispatch(
        command_buffer, cts->kernels, ordinal, n, 0, NULL, 1, &binding));
  }
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  WEFT_ASSERT_OK(weft_cts_execute_and_wait(cts, command_buffer,
                                           weft_binding_table_empty()));
  for (uint32_t i = 0; i < kDispatches; ++i) {
    const uint32_t n[3] = {(i + 1) * 17, 1, 1};
    weft_cts_assert_ids(cts, buffer, offsets[i], n);
  }
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(buffer);
}

static void thousand_regions_ping_pong(void** state) {
  // 1000 one-workgroup dispatches, each its own region, ping-ponging 64
  // floats between two buffers with out = in + 1: a region that started
  // before its predecessor finished would read a stale value.
  weft_cts_t* cts = *state;
  enum { kRegions = 1000, kElements = 64 };
  float initial[kElements];
  for (uint32_t i = 0; i < kElements; ++i) initial[i] = (float)i * 10.0f;
  weft_buffer_t* buffers[2] = {weft_cts_allocate_buffer(cts, sizeof(initial)),
                               buffer_of(cts, sizeof(initial), 0)};
  weft_cts_write_buffer(cts, buffers[0], 0, initial, sizeof(initial));
  weft_command_buffer_t* command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_REUSABLE, 0);
  uint32_t ordinal = weft_cts_kernel_ordinal(cts->kernels, "scale_offset");
  uint32_t constants[3] = {weft_cts_f32_bits(1.0f), weft_cts_f32_bits(1.0f),
                           kElements};
  const uint32_t n[3] = {1, 1, 1};
  for (uint32_t r = 0; r < kRegions; ++r) {
    weft_buffer_ref_t bindings[2] = {
        weft_make_buffer_ref(buffers[r % 2], 0, WEFT_WHOLE_BUFFER),
        weft_make_buffer_ref(buffers[(r + 1) % 2], 0, WEFT_WHOLE_BUFFER)};
    WEFT_ASSERT_OK(weft_command_buffer_dispatch(
        command_buffer, cts->kernels, ordinal, n, 3, constants, 2, bindings));
    WEFT_ASSERT_OK(weft_command_buffer_barrier(command_buffer));
  }
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  // Twice: the second run continues from where the first ended.
  for (uint32_t run = 1; run <= 2; ++run) {
    WEFT_ASSERT_OK(weft_cts_execute_and_wait(cts, command_buffer,
                                             weft_binding_table_empty()));
    float result[kElements];
    weft_cts_read_buffer(cts, buffers[kRegions % 2], 0, result, sizeof(result));
    for (uint32_t i = 0; i < kElements; ++i) {
      float expected = initial[i] + (float)(run * kRegions);
      if (result[i] != expected) {
        fail_msg("run %u element %u: %f, expected %f", run, i,
                 (double)result[i], (double)expected);
      }
    }
  }
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(buffers[0]);
  weft_buffer_release(buffers[1]);
}

//===----------------------------------------------------------------------===//
// A random program of many regions, checked against a host model
//===----------------------------------------------------------------------===//

enum {
  kProgramBytes = 256 * 1024,  // per buffer
  kLanes = 8,
  kLaneBytes = kProgramBytes / kLanes,
  kBigUpdateBytes = 64 * 1024,
};

// A small deterministic generator (the program must be the same each run).
typedef struct lcg_t {
  uint64_t state;
} lcg_t;

static uint32_t lcg_next(lcg_t* lcg) {
  lcg->state = lcg->state * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(lcg->state >> 33);
}

// A word the abs kernel may take (abs(INT32_MIN) is undefined).
static uint32_t lcg_word(lcg_t* lcg) {
  uint32_t word = lcg_next(lcg) ^ (lcg_next(lcg) << 16);
  return word == 0x80000000u ? 0x7FFFFFFFu : word;
}

// A word-aligned [offset, offset + length) within [base, base + span) of at
// least 4 bytes.
static void lcg_range(lcg_t* lcg, uint32_t base, uint32_t span,
                      uint32_t* out_offset, uint32_t* out_length) {
  uint32_t words = span / 4;
  uint32_t first = lcg_next(lcg) % words;
  uint32_t count = 1 + lcg_next(lcg) % (words - first);
  *out_offset = base + first * 4;
  *out_length = count * 4;
}

// The host's copy of the two buffers.
typedef struct program_model_t {
  uint8_t* bytes[2];
} program_model_t;

typedef struct program_t {
  weft_cts_t* cts;
  // NULL to apply the program to the model only.
  weft_command_buffer_t* command_buffer;
  // Buffer i of the program: a direct buffer or binding-table slot i.
  weft_buffer_t* buffers[2];
  bool indirect;
  program_model_t model;
  uint32_t abs_ordinal;
  uint32_t ids_ordinal;
  uint32_t commands;
  lcg_t lcg;
} program_t;

static weft_buffer_ref_t program_ref(program_t* program, uint32_t which,
                                     uint32_t offset, uint32_t length) {
  return program->indirect
             ? weft_make_indirect_buffer_ref(which, offset, length)
             : weft_make_buffer_ref(program->buffers[which], offset, length);
}

static void program_fill(program_t* program, uint32_t which, uint32_t offset,
                         uint32_t length) {
  uint32_t pattern = lcg_word(&program->lcg);
  if (program->command_buffer) {
    WEFT_ASSERT_OK(weft_command_buffer_fill(
        program->command_buffer, program_ref(program, which, offset, length),
        &pattern, 4));
  }
  for (uint32_t i = 0; i < length; i += 4) {
    memcpy(program->model.bytes[which] + offset + i, &pattern, 4);
  }
}

static void program_update(program_t* program, uint32_t which, uint32_t offset,
                           uint32_t length) {
  uint32_t* words = malloc(length);
  assert_non_null(words);
  for (uint32_t i = 0; i < length / 4; ++i) words[i] = lcg_word(&program->lcg);
  if (program->command_buffer) {
    WEFT_ASSERT_OK(weft_command_buffer_update(
        program->command_buffer, words,
        program_ref(program, which, offset, length)));
  }
  memcpy(program->model.bytes[which] + offset, words, length);
  free(words);  // the recording copied it
}

static void program_copy(program_t* program, uint32_t from,
                         uint32_t from_offset, uint32_t to, uint32_t to_offset,
                         uint32_t length) {
  if (program->command_buffer) {
    WEFT_ASSERT_OK(weft_command_buffer_copy(
        program->command_buffer,
        program_ref(program, from, from_offset, length),
        program_ref(program, to, to_offset, length)));
  }
  memmove(program->model.bytes[to] + to_offset,
          program->model.bytes[from] + from_offset, length);
}

static void program_abs(program_t* program, uint32_t which, uint32_t offset,
                        uint32_t length) {
  uint32_t count = length / 4;
  uint32_t constants[2] = {0, count};
  const uint32_t n[3] = {(count + 63) / 64, 1, 1};
  weft_buffer_ref_t binding = program_ref(program, which, offset, length);
  if (program->command_buffer) {
    WEFT_ASSERT_OK(weft_command_buffer_dispatch(
        program->command_buffer, program->cts->kernels, program->abs_ordinal, n,
        2, constants, 1, &binding));
  }
  for (uint32_t i = 0; i < length; i += 4) {
    int32_t value;
    memcpy(&value, program->model.bytes[which] + offset + i, 4);
    value = value < 0 ? -value : value;
    memcpy(program->model.bytes[which] + offset + i, &value, 4);
  }
}

static void program_ids(program_t* program, uint32_t which, uint32_t offset,
                        uint32_t length) {
  uint32_t count = length / 16;
  if (count == 0) return;
  const uint32_t n[3] = {count, 1, 1};
  weft_buffer_ref_t binding = program_ref(program, which, offset, count * 16);
  if (program->command_buffer) {
    WEFT_ASSERT_OK(weft_command_buffer_dispatch(
        program->command_buffer, program->cts->kernels, program->ids_ordinal, n,
        0, NULL, 1, &binding));
  }
  for (uint32_t x = 0; x < count; ++x) {
    uint32_t id[4] = {x, 0, 0, x};
    memcpy(program->model.bytes[which] + offset + x * 16, id, 16);
  }
}

// Records one command confined to lane |lane| (of either buffer).
static void program_lane_command(program_t* program, uint32_t lane) {
  uint32_t base = lane * kLaneBytes;
  uint32_t which = lcg_next(&program->lcg) % 2;
  uint32_t offset, length;
  switch (lcg_next(&program->lcg) % 5) {
    case 0:
      lcg_range(&program->lcg, base, kLaneBytes, &offset, &length);
      program_fill(program, which, offset, length);
      break;
    case 1:
      lcg_range(&program->lcg, base, kLaneBytes / 4, &offset, &length);
      program_update(program, which, offset, length);
      break;
    case 2: {
      // Between the buffers, at the same or another place in the lane.
      lcg_range(&program->lcg, base, kLaneBytes / 2, &offset, &length);
      uint32_t shift = (lcg_next(&program->lcg) % 2) * (kLaneBytes / 2);
      program_copy(program, which, offset, 1 - which, offset + shift, length);
      break;
    }
    case 3:
      lcg_range(&program->lcg, base, kLaneBytes, &offset, &length);
      program_abs(program, which, offset, length);
      break;
    default:
      lcg_range(&program->lcg, base, kLaneBytes, &offset, &length);
      program_ids(program, which, offset - (offset - base) % 16, length);
      break;
  }
  ++program->commands;
}

// Records |groups| regions: most hold one command per lane (no two touch
// the same bytes), some a single 64 KiB update or a whole-buffer copy.
static void program_record(program_t* program, uint32_t groups) {
  for (uint32_t g = 0; g < groups; ++g) {
    uint32_t kind = lcg_next(&program->lcg) % 8;
    if (kind == 0) {
      uint32_t which = lcg_next(&program->lcg) % 2;
      uint32_t offset = (lcg_next(&program->lcg) %
                         ((kProgramBytes - kBigUpdateBytes) / 4 + 1)) *
                        4;
      program_update(program, which, offset, kBigUpdateBytes);
      ++program->commands;
    } else if (kind == 1) {
      uint32_t which = lcg_next(&program->lcg) % 2;
      program_copy(program, which, 0, 1 - which, 0, kProgramBytes);
      ++program->commands;
    } else {
      for (uint32_t lane = 0; lane < kLanes; ++lane) {
        if (lcg_next(&program->lcg) % 4 != 0) {
          program_lane_command(program, lane);
        }
      }
    }
    if (program->command_buffer) {
      WEFT_ASSERT_OK(weft_command_buffer_barrier(program->command_buffer));
    }
  }
}

// Compares buffer |which| with the model, reporting the first difference.
static void program_check(program_t* program, weft_buffer_t* buffer,
                          uint32_t which, const char* what) {
  uint8_t* bytes = malloc(kProgramBytes);
  assert_non_null(bytes);
  weft_cts_read_buffer(program->cts, buffer, 0, bytes, kProgramBytes);
  const uint8_t* expected = program->model.bytes[which];
  for (uint32_t i = 0; i < kProgramBytes; ++i) {
    if (bytes[i] != expected[i]) {
      uint8_t actual = bytes[i];
      free(bytes);
      fail_msg("%s buffer %u byte %u: 0x%02x, expected 0x%02x", what, which, i,
               actual, expected[i]);
    }
  }
  free(bytes);
}

// Initialises a program over two fresh buffers of random words (also the
// model's starting point).
static void program_initialize(program_t* program, weft_cts_t* cts,
                               weft_command_buffer_mode_t mode, bool indirect,
                               uint64_t seed) {
  memset(program, 0, sizeof(*program));
  program->cts = cts;
  program->indirect = indirect;
  program->lcg.state = seed;
  program->abs_ordinal = weft_cts_kernel_ordinal(cts->kernels, "abs_range");
  program->ids_ordinal = weft_cts_kernel_ordinal(cts->kernels, "write_ids");
  for (uint32_t b = 0; b < 2; ++b) {
    program->model.bytes[b] = malloc(kProgramBytes);
    assert_non_null(program->model.bytes[b]);
    for (uint32_t i = 0; i < kProgramBytes; i += 4) {
      uint32_t word = lcg_word(&program->lcg);
      memcpy(program->model.bytes[b] + i, &word, 4);
    }
    program->buffers[b] = weft_cts_allocate_buffer(cts, kProgramBytes);
    weft_cts_write_buffer(cts, program->buffers[b], 0, program->model.bytes[b],
                          kProgramBytes);
  }
  program->command_buffer =
      weft_cts_begin_command_buffer(cts, mode, indirect ? 2 : 0);
}

static void program_deinitialize(program_t* program) {
  weft_command_buffer_release(program->command_buffer);
  for (uint32_t b = 0; b < 2; ++b) {
    weft_buffer_release(program->buffers[b]);
    free(program->model.bytes[b]);
  }
}

static void random_program_many_regions(void** state) {
  // About 150 regions and 600 commands, with 64 KiB updates: far more than
  // one block of any sensible size.
  weft_cts_t* cts = *state;
  program_t program;
  program_initialize(&program, cts, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, false,
                     0x5EEDF00Dull);
  program_record(&program, 150);
  WEFT_ASSERT_OK(weft_command_buffer_end(program.command_buffer));
  assert_true(program.commands >= 300);
  WEFT_ASSERT_OK(weft_cts_execute_and_wait(cts, program.command_buffer,
                                           weft_binding_table_empty()));
  program_check(&program, program.buffers[0], 0, "after one run:");
  program_check(&program, program.buffers[1], 1, "after one run:");
  program_deinitialize(&program);
}

static void random_program_reused_with_tables(void** state) {
  // The same kind of program, indirect, recorded once and run three times
  // in a row on one pair of buffers (the model applies it three times),
  // then once on a second pair holding the first pair's starting contents.
  weft_cts_t* cts = *state;
  program_t program;
  program_initialize(&program, cts, WEFT_COMMAND_BUFFER_MODE_REUSABLE, true,
                     0xC0FFEE11ull);
  // The second pair and its model start where the first pair starts.
  program_t second = program;
  second.command_buffer = NULL;  // model only
  for (uint32_t b = 0; b < 2; ++b) {
    second.model.bytes[b] = malloc(kProgramBytes);
    assert_non_null(second.model.bytes[b]);
    memcpy(second.model.bytes[b], program.model.bytes[b], kProgramBytes);
    second.buffers[b] = weft_cts_allocate_buffer(cts, kProgramBytes);
    weft_cts_write_buffer(cts, second.buffers[b], 0, second.model.bytes[b],
                          kProgramBytes);
  }
  lcg_t start = program.lcg;
  program_record(&program, 120);
  WEFT_ASSERT_OK(weft_command_buffer_end(program.command_buffer));
  weft_command_buffer_t* recorded = program.command_buffer;
  weft_buffer_binding_t entries[2] = {
      {program.buffers[0], 0, WEFT_WHOLE_BUFFER},
      {program.buffers[1], 0, WEFT_WHOLE_BUFFER}};
  weft_binding_table_t table = {2, entries};
  for (uint32_t run = 1; run <= 3; ++run) {
    WEFT_ASSERT_OK(weft_cts_execute_and_wait(cts, recorded, table));
    if (run > 1) {
      // Apply the program to the model once more.
      program.command_buffer = NULL;
      program.lcg = start;
      program_record(&program, 120);
      program.command_buffer = recorded;
    }
  }
  program_check(&program, program.buffers[0], 0, "after three runs:");
  program_check(&program, program.buffers[1], 1, "after three runs:");
  second.lcg = start;
  program_record(&second, 120);
  entries[0].buffer = second.buffers[0];
  entries[1].buffer = second.buffers[1];
  WEFT_ASSERT_OK(weft_cts_execute_and_wait(cts, recorded, table));
  program_check(&second, second.buffers[0], 0, "second pair:");
  program_check(&second, second.buffers[1], 1, "second pair:");
  program_deinitialize(&second);
  program_deinitialize(&program);
}

static void large_updates_chained_by_copies(void** state) {
  // Sixteen 64 KiB updates, each followed by a barrier and a copy of the
  // previous update's range into an output buffer: 1 MiB of recorded data.
  weft_cts_t* cts = *state;
  enum { kUpdates = 16 };
  weft_buffer_t* staging = buffer_of(cts, 2 * kBigUpdateBytes, 0);
  weft_buffer_t* output = buffer_of(cts, kUpdates * kBigUpdateBytes, 0);
  weft_command_buffer_t* command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
  uint32_t* data = malloc(kBigUpdateBytes);
  assert_non_null(data);
  for (uint32_t u = 0; u < kUpdates; ++u) {
    for (uint32_t i = 0; i < kBigUpdateBytes / 4; ++i) {
      data[i] = (u << 24) | i;
    }
    // Alternate halves of the staging buffer so an update can share a
    // region with the copy of the previous one.
    weft_device_size_t half = (u % 2) * kBigUpdateBytes;
    WEFT_ASSERT_OK(weft_command_buffer_update(
        command_buffer, data,
        weft_make_buffer_ref(staging, half, kBigUpdateBytes)));
    if (u > 0) {
      WEFT_ASSERT_OK(weft_command_buffer_copy(
          command_buffer,
          weft_make_buffer_ref(staging, ((u - 1) % 2) * kBigUpdateBytes,
                               kBigUpdateBytes),
          weft_make_buffer_ref(output, (u - 1) * kBigUpdateBytes,
                               kBigUpdateBytes)));
    }
    WEFT_ASSERT_OK(weft_command_buffer_barrier(command_buffer));
  }
  WEFT_ASSERT_OK(weft_command_buffer_copy(
      command_buffer,
      weft_make_buffer_ref(staging, ((kUpdates - 1) % 2) * kBigUpdateBytes,
                           kBigUpdateBytes),
      weft_make_buffer_ref(output, (kUpdates - 1) * kBigUpdateBytes,
                           kBigUpdateBytes)));
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  free(data);
  WEFT_ASSERT_OK(weft_cts_execute_and_wait(cts, command_buffer,
                                           weft_binding_table_empty()));
  uint32_t* words = malloc(kUpdates * kBigUpdateBytes);
  assert_non_null(words);
  weft_cts_read_buffer(cts, output, 0, words, kUpdates * kBigUpdateBytes);
  for (uint32_t u = 0; u < kUpdates; ++u) {
    for (uint32_t i = 0; i < kBigUpdateBytes / 4; ++i) {
      uint32_t word = words[u * (kBigUpdateBytes / 4) + i];
      if (word != ((u << 24) | i)) {
        free(words);
        fail_msg("update %u word %u: 0x%08x", u, i, word);
      }
    }
  }
  free(words);
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(staging);
  weft_buffer_release(output);
}

static void many_programs_in_flight(void** state) {
  // Four one-shot programs of 40 regions each, recorded up front and
  // submitted behind one gate: all in flight together on separate buffers.
  weft_cts_t* cts = *state;
  enum { kPrograms = 4 };
  program_t programs[kPrograms];
  weft_semaphore_t* gate = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* done[kPrograms];
  uint64_t one = 1;
  for (uint32_t p = 0; p < kPrograms; ++p) {
    program_initialize(&programs[p], cts, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT,
                       false, 1000 + p);
    program_record(&programs[p], 40);
    WEFT_ASSERT_OK(weft_command_buffer_end(programs[p].command_buffer));
    done[p] = weft_cts_create_semaphore(cts, 0);
    WEFT_ASSERT_OK(weft_device_queue_execute(
        cts->device, weft_cts_queue_bit(cts, p), weft_cts_list1(&gate, &one),
        weft_cts_list1(&done[p], &one), programs[p].command_buffer,
        weft_binding_table_empty()));
  }
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  for (uint32_t p = 0; p < kPrograms; ++p) {
    WEFT_ASSERT_OK(
        weft_semaphore_wait(done[p], 1, weft_timeout_relative(60000 * MS)));
  }
  for (uint32_t p = 0; p < kPrograms; ++p) {
    program_check(&programs[p], programs[p].buffers[0], 0, "in flight:");
    program_check(&programs[p], programs[p].buffers[1], 1, "in flight:");
    program_deinitialize(&programs[p]);
    weft_semaphore_release(done[p]);
  }
  weft_semaphore_release(gate);
}

int main(int argc, char** argv) {
  const struct CMUnitTest tests[] = {
      WEFT_CTS_CASE(command_buffer_workgroups_1),
      WEFT_CTS_CASE(command_buffer_workgroups_7),
      WEFT_CTS_CASE(command_buffer_workgroups_1024),
      WEFT_CTS_CASE(command_buffer_workgroups_100000),
      WEFT_CTS_CASE(command_buffer_workgroups_100000_3d_indirect),
      WEFT_CTS_CASE(queue_dispatch_workgroups_100000),
      WEFT_CTS_CASE(regions_of_alternating_sizes),
      WEFT_CTS_CASE(many_dispatches_in_one_region),
      WEFT_CTS_CASE(thousand_regions_ping_pong),
      WEFT_CTS_CASE(random_program_many_regions),
      WEFT_CTS_CASE(random_program_reused_with_tables),
      WEFT_CTS_CASE(large_updates_chained_by_copies),
      WEFT_CTS_CASE(many_programs_in_flight),
  };
  return weft_cts_run("scale", tests, WEFT_CTS_COUNT(tests), argc, argv);
}
