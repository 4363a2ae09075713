// CTS: command buffers (recording states, fill/update/copy, binding tables,
// reuse, one-shot, recording and submit-time errors).
#include <stdlib.h>
#include <string.h>

#include "cts.h"

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

// Submits |command_buffer| expecting a synchronous rejection with |code|
// (message containing |needle|) that leaves the signal untouched.
static void expect_execute_rejected(weft_cts_t* cts,
                                    weft_command_buffer_t* command_buffer,
                                    weft_binding_table_t table,
                                    weft_status_code_t code,
                                    const char* needle) {
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  uint64_t value = 1;
  weft_cts_assert_status_contains(
      weft_device_queue_execute(
          cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_semaphore_list_empty(),
          weft_cts_list1(&semaphore, &value), command_buffer, table),
      code, needle);
  assert_int_equal(weft_cts_query_value(semaphore), 0);
  weft_semaphore_release(semaphore);
}

// Allocates a buffer of |length| bytes all set to |byte|.
static weft_buffer_t* buffer_of(weft_cts_t* cts, weft_device_size_t length,
                                uint8_t byte) {
  return weft_cts_allocate_filled_buffer(cts, length, &byte, 1);
}

// Asserts bytes [offset, offset + length) of |buffer| all equal |byte|.
static void assert_bytes(weft_cts_t* cts, weft_buffer_t* buffer,
                         weft_device_size_t offset, weft_device_size_t length,
                         uint8_t byte) {
  uint8_t* bytes = malloc(length ? (size_t)length : 1);
  weft_cts_read_buffer(cts, buffer, offset, bytes, length);
  for (weft_device_size_t i = 0; i < length; ++i) {
    if (bytes[i] != byte) {
      uint8_t actual = bytes[i];
      free(bytes);
      fail_msg("byte %llu is 0x%02x, expected 0x%02x",
               (unsigned long long)(offset + i), actual, byte);
    }
  }
  free(bytes);
}

//===----------------------------------------------------------------------===//
// Creation and recording states
//===----------------------------------------------------------------------===//

static void create_and_query(void** state) {
  weft_cts_t* cts = *state;
  weft_command_buffer_t* command_buffer =
      weft_cts_create_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_REUSABLE,
                                     WEFT_COMMAND_CATEGORY_TRANSFER, 3);
  assert_int_equal(weft_command_buffer_mode(command_buffer),
                   WEFT_COMMAND_BUFFER_MODE_REUSABLE);
  assert_int_equal(weft_command_buffer_binding_capacity(command_buffer), 3);
  assert_int_equal(weft_command_buffer_command_count(command_buffer), 0);
  weft_command_buffer_retain(command_buffer);
  weft_command_buffer_release(command_buffer);
  weft_command_buffer_release(command_buffer);
}

static void create_rejects_bad_mode_and_categories(void** state) {
  weft_cts_t* cts = *state;
  weft_command_buffer_t* command_buffer = NULL;
  weft_cts_assert_status_contains(
      weft_command_buffer_create(cts->device, 0, WEFT_COMMAND_CATEGORY_ANY, 0,
                                 &command_buffer),
      WEFT_STATUS_INVALID_ARGUMENT, "mode");
  weft_cts_assert_status_contains(
      weft_command_buffer_create(
          cts->device,
          WEFT_COMMAND_BUFFER_MODE_ONE_SHOT | WEFT_COMMAND_BUFFER_MODE_REUSABLE,
          WEFT_COMMAND_CATEGORY_ANY, 0, &command_buffer),
      WEFT_STATUS_INVALID_ARGUMENT, "mode");
  weft_cts_assert_status_contains(
      weft_command_buffer_create(cts->device, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT,
                                 0, 0, &command_buffer),
      WEFT_STATUS_INVALID_ARGUMENT, "categories");
  weft_cts_assert_status_contains(
      weft_command_buffer_create(cts->device, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT,
                                 0x10, 0, &command_buffer),
      WEFT_STATUS_INVALID_ARGUMENT, "categories");
  assert_null(command_buffer);
}

static void record_before_begin(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = buffer_of(cts, 16, 0);
  weft_command_buffer_t* command_buffer = weft_cts_create_command_buffer(
      cts, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, WEFT_COMMAND_CATEGORY_ANY, 0);
  weft_cts_assert_status_contains(
      weft_command_buffer_fill(command_buffer,
                               weft_make_buffer_ref(buffer, 0, 16),
                               &(uint8_t){1}, 1),
      WEFT_STATUS_FAILED_PRECONDITION, "begin");
  weft_cts_assert_status_contains(weft_command_buffer_barrier(command_buffer),
                                  WEFT_STATUS_FAILED_PRECONDITION, "begin");
  // Not a recording error: recording afterwards works.
  WEFT_ASSERT_OK(weft_command_buffer_begin(command_buffer));
  WEFT_ASSERT_OK(weft_command_buffer_fill(
      command_buffer, weft_make_buffer_ref(buffer, 0, 16), &(uint8_t){1}, 1));
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  WEFT_ASSERT_OK(weft_cts_execute_and_wait(cts, command_buffer,
                                           weft_binding_table_empty()));
  assert_bytes(cts, buffer, 0, 16, 1);
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(buffer);
}

static void double_begin(void** state) {
  weft_cts_t* cts = *state;
  weft_command_buffer_t* command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
  weft_cts_assert_status_contains(weft_command_buffer_begin(command_buffer),
                                  WEFT_STATUS_FAILED_PRECONDITION, "already");
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  weft_cts_assert_status_contains(weft_command_buffer_begin(command_buffer),
                                  WEFT_STATUS_FAILED_PRECONDITION, "already");
  weft_command_buffer_release(command_buffer);
}

static void end_without_begin(void** state) {
  weft_cts_t* cts = *state;
  weft_command_buffer_t* command_buffer = weft_cts_create_command_buffer(
      cts, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, WEFT_COMMAND_CATEGORY_ANY, 0);
  weft_cts_assert_status_contains(weft_command_buffer_end(command_buffer),
                                  WEFT_STATUS_FAILED_PRECONDITION, "begin");
  WEFT_ASSERT_OK(weft_command_buffer_begin(command_buffer));
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  weft_cts_assert_status_contains(weft_command_buffer_end(command_buffer),
                                  WEFT_STATUS_FAILED_PRECONDITION, "end");
  weft_command_buffer_release(command_buffer);
}

static void record_after_end(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = buffer_of(cts, 16, 0);
  weft_command_buffer_t* command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  weft_cts_assert_status_contains(
      weft_command_buffer_update(command_buffer, "0123456789abcdef",
                                 weft_make_buffer_ref(buffer, 0, 16)),
      WEFT_STATUS_FAILED_PRECONDITION, "end");
  assert_int_equal(weft_command_buffer_command_count(command_buffer), 0);
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(buffer);
}

static void execute_before_end(void** state) {
  weft_cts_t* cts = *state;
  weft_command_buffer_t* command_buffer = weft_cts_create_command_buffer(
      cts, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, WEFT_COMMAND_CATEGORY_ANY, 0);
  expect_execute_rejected(cts, command_buffer, weft_binding_table_empty(),
                          WEFT_STATUS_FAILED_PRECONDITION, "begin and end");
  WEFT_ASSERT_OK(weft_command_buffer_begin(command_buffer));
  expect_execute_rejected(cts, command_buffer, weft_binding_table_empty(),
                          WEFT_STATUS_FAILED_PRECONDITION, "still recording");
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  WEFT_ASSERT_OK(weft_cts_execute_and_wait(cts, command_buffer,
                                           weft_binding_table_empty()));
  weft_command_buffer_release(command_buffer);
}

static void empty_command_buffer_signals(void** state) {
  weft_cts_t* cts = *state;
  weft_command_buffer_t* command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
  WEFT_ASSERT_OK(weft_command_buffer_barrier(command_buffer));
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  assert_int_equal(weft_command_buffer_command_count(command_buffer), 1);
  WEFT_ASSERT_OK(weft_cts_execute_and_wait(cts, command_buffer,
                                           weft_binding_table_empty()));
  weft_command_buffer_release(command_buffer);
}

//===----------------------------------------------------------------------===//
// Fill
//===----------------------------------------------------------------------===//

#define FILL_BUFFER_LENGTH 1040

// Records and runs one fill per (offset, length) combination with a
// |pattern_length|-byte pattern; combinations misaligned for the pattern
// must be rejected at record time (and by end). Verifies every byte.
static void fill_table(weft_cts_t* cts, uint32_t pattern_length) {
  static const weft_device_size_t kLengths[] = {0, 1, 2,  3,  4,
                                                7, 8, 16, 64, 1000};
  static const weft_device_size_t kOffsets[] = {0, 1, 2, 4, 8};
  static const uint8_t kPattern[4] = {0xA1, 0xB2, 0xC3, 0xD4};
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, FILL_BUFFER_LENGTH);
  uint8_t* bytes = malloc(FILL_BUFFER_LENGTH);
  for (size_t l = 0; l < sizeof(kLengths) / sizeof(kLengths[0]); ++l) {
    for (size_t o = 0; o < sizeof(kOffsets) / sizeof(kOffsets[0]); ++o) {
      weft_device_size_t offset = kOffsets[o];
      weft_device_size_t length = kLengths[l];
      bool valid = offset % pattern_length == 0 && length % pattern_length == 0;
      weft_cts_fill_buffer(cts, buffer, 0, FILL_BUFFER_LENGTH, &(uint8_t){0xEE},
                           1);
      weft_command_buffer_t* command_buffer = weft_cts_begin_command_buffer(
          cts, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
      weft_status_t status = weft_command_buffer_fill(
          command_buffer, weft_make_buffer_ref(buffer, offset, length),
          kPattern, pattern_length);
      if (!valid) {
        weft_cts_assert_status_contains(status, WEFT_STATUS_INVALID_ARGUMENT,
                                        NULL);
        weft_cts_assert_status_contains(weft_command_buffer_end(command_buffer),
                                        WEFT_STATUS_INVALID_ARGUMENT, NULL);
        weft_command_buffer_release(command_buffer);
        continue;
      }
      WEFT_ASSERT_OK(status);
      WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
      WEFT_ASSERT_OK(weft_cts_execute_and_wait(cts, command_buffer,
                                               weft_binding_table_empty()));
      weft_command_buffer_release(command_buffer);
      weft_cts_read_buffer(cts, buffer, 0, bytes, FILL_BUFFER_LENGTH);
      for (weft_device_size_t i = 0; i < FILL_BUFFER_LENGTH; ++i) {
        uint8_t expected = 0xEE;
        if (i >= offset && i < offset + length) {
          expected = kPattern[(i - offset) % pattern_length];
        }
        if (bytes[i] != expected) {
          fail_msg(
              "pattern %u offset %llu length %llu: byte %llu is 0x%02x, "
              "expected 0x%02x",
              pattern_length, (unsigned long long)offset,
              (unsigned long long)length, (unsigned long long)i, bytes[i],
              expected);
        }
      }
    }
  }
  free(bytes);
  weft_buffer_release(buffer);
}

static void fill_pattern1_table(void** state) { fill_table(*state, 1); }
static void fill_pattern2_table(void** state) { fill_table(*state, 2); }
static void fill_pattern4_table(void** state) { fill_table(*state, 4); }

static void fill_whole_buffer(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = buffer_of(cts, 96, 0);
  weft_command_buffer_t* command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
  WEFT_ASSERT_OK(weft_command_buffer_fill(
      command_buffer, weft_make_buffer_ref(buffer, 32, WEFT_WHOLE_BUFFER),
      &(uint16_t){0x4242}, 2));
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  WEFT_ASSERT_OK(weft_cts_execute_and_wait(cts, command_buffer,
                                           weft_binding_table_empty()));
  assert_bytes(cts, buffer, 0, 32, 0);
  assert_bytes(cts, buffer, 32, 64, 0x42);
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(buffer);
}

static void fill_bad_pattern(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = buffer_of(cts, 64, 0);
  weft_command_buffer_t* command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
  const uint8_t pattern[8] = {0};
  weft_cts_assert_status_contains(
      weft_command_buffer_fill(command_buffer,
                               weft_make_buffer_ref(buffer, 0, 24), pattern, 3),
      WEFT_STATUS_INVALID_ARGUMENT, "3");
  weft_cts_assert_status_contains(
      weft_command_buffer_fill(command_buffer,
                               weft_make_buffer_ref(buffer, 0, 24), pattern, 8),
      WEFT_STATUS_INVALID_ARGUMENT, NULL);
  weft_cts_assert_status_contains(
      weft_command_buffer_fill(command_buffer,
                               weft_make_buffer_ref(buffer, 0, 24), pattern, 0),
      WEFT_STATUS_INVALID_ARGUMENT, NULL);
  weft_cts_assert_status_contains(
      weft_command_buffer_fill(command_buffer,
                               weft_make_buffer_ref(buffer, 0, 24), NULL, 4),
      WEFT_STATUS_INVALID_ARGUMENT, "NULL");
  assert_int_equal(weft_command_buffer_command_count(command_buffer), 0);
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(buffer);
}

static void fill_out_of_range(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = buffer_of(cts, 64, 0);
  weft_command_buffer_t* command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
  weft_cts_assert_status_contains(
      weft_command_buffer_fill(command_buffer,
                               weft_make_buffer_ref(buffer, 32, 64),
                               &(uint8_t){1}, 1),
      WEFT_STATUS_OUT_OF_RANGE, "64");
  weft_cts_assert_status_contains(
      weft_command_buffer_fill(
          command_buffer, weft_make_buffer_ref(buffer, 65, WEFT_WHOLE_BUFFER),
          &(uint8_t){1}, 1),
      WEFT_STATUS_OUT_OF_RANGE, NULL);
  // A later valid command records, but end reports the first error.
  WEFT_ASSERT_OK(weft_command_buffer_fill(
      command_buffer, weft_make_buffer_ref(buffer, 0, 64), &(uint8_t){1}, 1));
  weft_cts_assert_status_contains(weft_command_buffer_end(command_buffer),
                                  WEFT_STATUS_OUT_OF_RANGE, "[32, 96)");
  // And the command buffer cannot be submitted.
  expect_execute_rejected(cts, command_buffer, weft_binding_table_empty(),
                          WEFT_STATUS_FAILED_PRECONDITION, "recording failed");
  weft_command_buffer_release(command_buffer);
  assert_bytes(cts, buffer, 0, 64, 0);
  weft_buffer_release(buffer);
}

static void fill_without_transfer_usage(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = weft_cts_allocate_buffer_with_params(
      cts,
      (weft_buffer_params_t){.usage = WEFT_BUFFER_USAGE_DISPATCH_STORAGE |
                                      WEFT_BUFFER_USAGE_MAPPING},
      64);
  weft_command_buffer_t* command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
  weft_cts_assert_status_contains(
      weft_command_buffer_fill(command_buffer,
                               weft_make_buffer_ref(buffer, 0, 64),
                               &(uint8_t){1}, 1),
      WEFT_STATUS_PERMISSION_DENIED, "TRANSFER_TARGET");
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(buffer);
}

//===----------------------------------------------------------------------===//
// Update and copy
//===----------------------------------------------------------------------===//

static void update_copies_at_record_time(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = buffer_of(cts, 64, 0xEE);
  char source[17] = "0123456789abcdef";
  weft_command_buffer_t* command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
  WEFT_ASSERT_OK(weft_command_buffer_update(
      command_buffer, source, weft_make_buffer_ref(buffer, 8, 16)));
  memset(source, 'x', 16);
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  WEFT_ASSERT_OK(weft_cts_execute_and_wait(cts, command_buffer,
                                           weft_binding_table_empty()));
  char out[16];
  weft_cts_read_buffer(cts, buffer, 8, out, 16);
  assert_memory_equal(out, "0123456789abcdef", 16);
  assert_bytes(cts, buffer, 0, 8, 0xEE);
  assert_bytes(cts, buffer, 24, 40, 0xEE);
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(buffer);
}

static void update_errors(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = buffer_of(cts, 64, 0);
  weft_command_buffer_t* command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, 2);
  uint8_t data[128] = {0};
  weft_cts_assert_status_contains(
      weft_command_buffer_update(command_buffer, data,
                                 weft_make_buffer_ref(buffer, 60, 8)),
      WEFT_STATUS_OUT_OF_RANGE, NULL);
  weft_cts_assert_status_contains(
      weft_command_buffer_update(command_buffer, NULL,
                                 weft_make_buffer_ref(buffer, 0, 8)),
      WEFT_STATUS_INVALID_ARGUMENT, "NULL");
  // Through the table the length must be given.
  weft_cts_assert_status_contains(
      weft_command_buffer_update(
          command_buffer, data,
          weft_make_indirect_buffer_ref(1, 0, WEFT_WHOLE_BUFFER)),
      WEFT_STATUS_INVALID_ARGUMENT, "explicit length");
  assert_int_equal(weft_command_buffer_command_count(command_buffer), 0);
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(buffer);
}

static void large_update_and_many_commands(void** state) {
  weft_cts_t* cts = *state;
  const uint32_t kLarge = 20000;
  const uint32_t kSmall = 1000;
  weft_buffer_t* large = buffer_of(cts, kLarge, 0);
  weft_buffer_t* small = buffer_of(cts, kSmall * 4, 0);
  uint8_t* data = malloc(kLarge);
  for (uint32_t i = 0; i < kLarge; ++i) data[i] = (uint8_t)(i * 7);
  weft_command_buffer_t* command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
  WEFT_ASSERT_OK(weft_command_buffer_update(
      command_buffer, data, weft_make_buffer_ref(large, 0, kLarge)));
  for (uint32_t i = 0; i < kSmall; ++i) {
    uint32_t word = i * 3 + 1;
    WEFT_ASSERT_OK(weft_command_buffer_update(
        command_buffer, &word, weft_make_buffer_ref(small, i * 4, 4)));
  }
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  assert_int_equal(weft_command_buffer_command_count(command_buffer),
                   kSmall + 1);
  WEFT_ASSERT_OK(weft_cts_execute_and_wait(cts, command_buffer,
                                           weft_binding_table_empty()));
  uint8_t* out = malloc(kLarge);
  weft_cts_read_buffer(cts, large, 0, out, kLarge);
  assert_memory_equal(out, data, kLarge);
  uint32_t* words = (uint32_t*)out;
  weft_cts_read_buffer(cts, small, 0, words, kSmall * 4);
  for (uint32_t i = 0; i < kSmall; ++i) assert_int_equal(words[i], i * 3 + 1);
  free(out);
  free(data);
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(large);
  weft_buffer_release(small);
}

static void copy_between_buffers(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* source = weft_cts_allocate_buffer(cts, 64);
  uint8_t data[64];
  for (int i = 0; i < 64; ++i) data[i] = (uint8_t)(i + 1);
  weft_cts_write_buffer(cts, source, 0, data, 64);
  weft_buffer_t* target = buffer_of(cts, 128, 0xEE);
  weft_command_buffer_t* command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
  WEFT_ASSERT_OK(weft_command_buffer_copy(
      command_buffer, weft_make_buffer_ref(source, 16, 32),
      weft_make_buffer_ref(target, 64, 32)));
  // A whole-buffer length takes the other side's length.
  WEFT_ASSERT_OK(weft_command_buffer_copy(
      command_buffer, weft_make_buffer_ref(source, 0, 8),
      weft_make_buffer_ref(target, 0, WEFT_WHOLE_BUFFER)));
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  WEFT_ASSERT_OK(weft_cts_execute_and_wait(cts, command_buffer,
                                           weft_binding_table_empty()));
  uint8_t out[128];
  weft_cts_read_buffer(cts, target, 0, out, 128);
  assert_memory_equal(out, data, 8);
  assert_memory_equal(out + 64, data + 16, 32);
  for (int i = 8; i < 64; ++i) assert_int_equal(out[i], 0xEE);
  for (int i = 96; i < 128; ++i) assert_int_equal(out[i], 0xEE);
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(source);
  weft_buffer_release(target);
}

static void copy_errors(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = buffer_of(cts, 128, 0);
  weft_buffer_t* other = buffer_of(cts, 64, 0);
  weft_command_buffer_t* command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
  // Overlap within one buffer.
  weft_cts_assert_status_contains(
      weft_command_buffer_copy(command_buffer,
                               weft_make_buffer_ref(buffer, 0, 64),
                               weft_make_buffer_ref(buffer, 32, 64)),
      WEFT_STATUS_INVALID_ARGUMENT, NULL);
  // Explicit lengths that differ.
  weft_cts_assert_status_contains(
      weft_command_buffer_copy(command_buffer,
                               weft_make_buffer_ref(buffer, 0, 16),
                               weft_make_buffer_ref(other, 0, 32)),
      WEFT_STATUS_INVALID_ARGUMENT, "differ");
  // Two whole lengths resolving to different sizes.
  weft_cts_assert_status_contains(
      weft_command_buffer_copy(
          command_buffer, weft_make_buffer_ref(buffer, 0, WEFT_WHOLE_BUFFER),
          weft_make_buffer_ref(other, 0, WEFT_WHOLE_BUFFER)),
      WEFT_STATUS_INVALID_ARGUMENT, "differ");
  // Out of range.
  weft_cts_assert_status_contains(
      weft_command_buffer_copy(command_buffer,
                               weft_make_buffer_ref(buffer, 0, 100),
                               weft_make_buffer_ref(other, 0, 100)),
      WEFT_STATUS_OUT_OF_RANGE, NULL);
  // Adjacent, non-overlapping ranges of one buffer are fine.
  WEFT_ASSERT_OK(weft_command_buffer_copy(
      command_buffer, weft_make_buffer_ref(buffer, 0, 64),
      weft_make_buffer_ref(buffer, 64, 64)));
  assert_int_equal(weft_command_buffer_command_count(command_buffer), 1);
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(buffer);
  weft_buffer_release(other);
}

static void fill_copy_update_with_barriers(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = buffer_of(cts, 256, 0);
  weft_command_buffer_t* command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
  WEFT_ASSERT_OK(weft_command_buffer_fill(command_buffer,
                                          weft_make_buffer_ref(buffer, 0, 64),
                                          &(uint32_t){0x11111111u}, 4));
  WEFT_ASSERT_OK(weft_command_buffer_barrier(command_buffer));
  WEFT_ASSERT_OK(weft_command_buffer_update(
      command_buffer, "ABCDEFGH", weft_make_buffer_ref(buffer, 16, 8)));
  WEFT_ASSERT_OK(weft_command_buffer_barrier(command_buffer));
  WEFT_ASSERT_OK(weft_command_buffer_copy(
      command_buffer, weft_make_buffer_ref(buffer, 0, 64),
      weft_make_buffer_ref(buffer, 128, 64)));
  WEFT_ASSERT_OK(weft_command_buffer_barrier(command_buffer));
  WEFT_ASSERT_OK(weft_command_buffer_fill(command_buffer,
                                          weft_make_buffer_ref(buffer, 0, 16),
                                          &(uint8_t){0x22}, 1));
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  assert_int_equal(weft_command_buffer_command_count(command_buffer), 7);
  WEFT_ASSERT_OK(weft_cts_execute_and_wait(cts, command_buffer,
                                           weft_binding_table_empty()));
  uint8_t expected[256];
  memset(expected, 0, sizeof(expected));
  memset(expected, 0x11, 64);
  memcpy(expected + 16, "ABCDEFGH", 8);
  memcpy(expected + 128, expected, 64);
  memset(expected, 0x22, 16);
  uint8_t out[256];
  weft_cts_read_buffer(cts, buffer, 0, out, 256);
  assert_memory_equal(out, expected, 256);
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(buffer);
}

static void command_buffer_retains_buffers(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* scratch = buffer_of(cts, 32, 0);
  weft_buffer_t* result = buffer_of(cts, 32, 0);
  weft_command_buffer_t* command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
  WEFT_ASSERT_OK(weft_command_buffer_fill(command_buffer,
                                          weft_make_buffer_ref(scratch, 0, 32),
                                          &(uint8_t){0x5C}, 1));
  WEFT_ASSERT_OK(weft_command_buffer_barrier(command_buffer));
  WEFT_ASSERT_OK(weft_command_buffer_copy(command_buffer,
                                          weft_make_buffer_ref(scratch, 0, 32),
                                          weft_make_buffer_ref(result, 0, 32)));
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  weft_buffer_release(scratch);  // the command buffer keeps it alive
  WEFT_ASSERT_OK(weft_cts_execute_and_wait(cts, command_buffer,
                                           weft_binding_table_empty()));
  weft_command_buffer_release(command_buffer);
  assert_bytes(cts, result, 0, 32, 0x5C);
  weft_buffer_release(result);
}

//===----------------------------------------------------------------------===//
// Categories and binding capacity
//===----------------------------------------------------------------------===//

static void dispatch_in_transfer_only_buffer(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = buffer_of(cts, 64, 0);
  weft_command_buffer_t* command_buffer =
      weft_cts_create_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT,
                                     WEFT_COMMAND_CATEGORY_TRANSFER, 0);
  WEFT_ASSERT_OK(weft_command_buffer_begin(command_buffer));
  uint32_t ordinal = 0;
  WEFT_ASSERT_OK(
      weft_executable_lookup_kernel(cts->kernels, "write_ids", &ordinal));
  uint32_t workgroups[3] = {1, 1, 1};
  weft_buffer_ref_t binding = weft_make_buffer_ref(buffer, 0, 64);
  weft_cts_assert_status_contains(
      weft_command_buffer_dispatch(command_buffer, cts->kernels, ordinal,
                                   workgroups, 0, NULL, 1, &binding),
      WEFT_STATUS_INVALID_ARGUMENT,
      "command buffer was created without the DISPATCH category");
  // Transfers are fine.
  WEFT_ASSERT_OK(weft_command_buffer_fill(
      command_buffer, weft_make_buffer_ref(buffer, 0, 64), &(uint8_t){3}, 1));
  weft_cts_assert_status_contains(weft_command_buffer_end(command_buffer),
                                  WEFT_STATUS_INVALID_ARGUMENT,
                                  "DISPATCH category");
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(buffer);
}

static void transfer_in_dispatch_only_buffer(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = buffer_of(cts, 64, 0);
  weft_command_buffer_t* command_buffer =
      weft_cts_create_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT,
                                     WEFT_COMMAND_CATEGORY_DISPATCH, 0);
  WEFT_ASSERT_OK(weft_command_buffer_begin(command_buffer));
  weft_cts_assert_status_contains(
      weft_command_buffer_fill(command_buffer,
                               weft_make_buffer_ref(buffer, 0, 64),
                               &(uint8_t){3}, 1),
      WEFT_STATUS_INVALID_ARGUMENT, "TRANSFER category");
  weft_cts_assert_status_contains(
      weft_command_buffer_update(command_buffer, "abcd",
                                 weft_make_buffer_ref(buffer, 0, 4)),
      WEFT_STATUS_INVALID_ARGUMENT, "TRANSFER category");
  weft_cts_assert_status_contains(
      weft_command_buffer_copy(command_buffer,
                               weft_make_buffer_ref(buffer, 0, 4),
                               weft_make_buffer_ref(buffer, 8, 4)),
      WEFT_STATUS_INVALID_ARGUMENT, "TRANSFER category");
  // Barriers belong to every category.
  WEFT_ASSERT_OK(weft_command_buffer_barrier(command_buffer));
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(buffer);
}

static void slot_past_capacity(void** state) {
  weft_cts_t* cts = *state;
  weft_command_buffer_t* command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_REUSABLE, 2);
  weft_cts_assert_status_contains(
      weft_command_buffer_fill(command_buffer,
                               weft_make_indirect_buffer_ref(2, 0, 16),
                               &(uint8_t){1}, 1),
      WEFT_STATUS_OUT_OF_RANGE, "slot 2");
  WEFT_ASSERT_OK(weft_command_buffer_fill(
      command_buffer, weft_make_indirect_buffer_ref(1, 0, 16), &(uint8_t){1},
      1));
  weft_command_buffer_release(command_buffer);
  // Capacity 0: no indirect references at all.
  command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_REUSABLE, 0);
  weft_cts_assert_status_contains(
      weft_command_buffer_update(command_buffer, "abcd",
                                 weft_make_indirect_buffer_ref(0, 0, 4)),
      WEFT_STATUS_OUT_OF_RANGE, "capacity 0");
  weft_command_buffer_release(command_buffer);
}

//===----------------------------------------------------------------------===//
// Binding tables, reuse and one-shot
//===----------------------------------------------------------------------===//

// Records, through slots 0 (target) and 1 (source): fill slot 0 [0, 32)
// with 0x33, update slot 0 [32, 40), copy slot 1 [0, 16) to slot 0 [48, 64).
static weft_command_buffer_t* record_indirect(weft_cts_t* cts,
                                              weft_command_buffer_mode_t mode) {
  weft_command_buffer_t* command_buffer =
      weft_cts_begin_command_buffer(cts, mode, 2);
  WEFT_ASSERT_OK(weft_command_buffer_fill(
      command_buffer, weft_make_indirect_buffer_ref(0, 0, 32),
      &(uint32_t){0x33333333u}, 4));
  WEFT_ASSERT_OK(weft_command_buffer_update(
      command_buffer, "indirect", weft_make_indirect_buffer_ref(0, 32, 8)));
  WEFT_ASSERT_OK(weft_command_buffer_copy(
      command_buffer, weft_make_indirect_buffer_ref(1, 0, 16),
      weft_make_indirect_buffer_ref(0, 48, WEFT_WHOLE_BUFFER)));
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  return command_buffer;
}

// Checks the effect of record_indirect on |target| bound at |offset| with
// |source| holding |source_byte|.
static void check_indirect(weft_cts_t* cts, weft_buffer_t* target,
                           weft_device_size_t offset, uint8_t source_byte) {
  assert_bytes(cts, target, offset, 32, 0x33);
  char text[8];
  weft_cts_read_buffer(cts, target, offset + 32, text, 8);
  assert_memory_equal(text, "indirect", 8);
  assert_bytes(cts, target, offset + 48, 16, source_byte);
}

static void indirect_bindings(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* target = buffer_of(cts, 128, 0);
  weft_buffer_t* source = buffer_of(cts, 16, 0x77);
  weft_command_buffer_t* command_buffer =
      record_indirect(cts, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT);
  // Slot 0 is bound at offset 64 of the target, for exactly 64 bytes.
  weft_buffer_binding_t entries[2] = {{target, 64, 64},
                                      {source, 0, WEFT_WHOLE_BUFFER}};
  weft_binding_table_t table = {2, entries};
  WEFT_ASSERT_OK(weft_cts_execute_and_wait(cts, command_buffer, table));
  assert_bytes(cts, target, 0, 64, 0);
  check_indirect(cts, target, 64, 0x77);
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(target);
  weft_buffer_release(source);
}

static void reusable_with_two_tables(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* first = buffer_of(cts, 64, 0);
  weft_buffer_t* second = buffer_of(cts, 256, 0xEE);
  weft_buffer_t* source_a = buffer_of(cts, 16, 0xA0);
  weft_buffer_t* source_b = buffer_of(cts, 32, 0xB0);
  weft_command_buffer_t* command_buffer =
      record_indirect(cts, WEFT_COMMAND_BUFFER_MODE_REUSABLE);
  weft_buffer_binding_t entries_a[2] = {{first, 0, WEFT_WHOLE_BUFFER},
                                        {source_a, 0, 16}};
  weft_buffer_binding_t entries_b[2] = {{second, 128, 64}, {source_b, 16, 16}};
  weft_binding_table_t table_a = {2, entries_a};
  weft_binding_table_t table_b = {2, entries_b};
  WEFT_ASSERT_OK(weft_cts_execute_and_wait(cts, command_buffer, table_a));
  WEFT_ASSERT_OK(weft_cts_execute_and_wait(cts, command_buffer, table_b));
  check_indirect(cts, first, 0, 0xA0);
  check_indirect(cts, second, 128, 0xB0);
  assert_bytes(cts, second, 0, 128, 0xEE);
  assert_bytes(cts, second, 192, 64, 0xEE);
  // A third time with table a again after clearing.
  weft_cts_fill_buffer(cts, first, 0, 64, &(uint8_t){0}, 1);
  WEFT_ASSERT_OK(weft_cts_execute_and_wait(cts, command_buffer, table_a));
  check_indirect(cts, first, 0, 0xA0);
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(first);
  weft_buffer_release(second);
  weft_buffer_release(source_a);
  weft_buffer_release(source_b);
}

static void reusable_submitted_back_to_back(void** state) {
  // Two submissions with no semaphore between them: both must complete.
  weft_cts_t* cts = *state;
  weft_buffer_t* first = buffer_of(cts, 64, 0);
  weft_buffer_t* second = buffer_of(cts, 64, 0);
  weft_buffer_t* source = buffer_of(cts, 16, 0x44);
  weft_command_buffer_t* command_buffer =
      record_indirect(cts, WEFT_COMMAND_BUFFER_MODE_REUSABLE);
  weft_buffer_binding_t entries_a[2] = {{first, 0, 64}, {source, 0, 16}};
  weft_buffer_binding_t entries_b[2] = {{second, 0, 64}, {source, 0, 16}};
  weft_binding_table_t table_a = {2, entries_a};
  weft_binding_table_t table_b = {2, entries_b};
  weft_semaphore_t* semaphores[2] = {weft_cts_create_semaphore(cts, 0),
                                     weft_cts_create_semaphore(cts, 0)};
  uint64_t one = 1;
  WEFT_ASSERT_OK(weft_device_queue_execute(
      cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&semaphores[0], &one), command_buffer, table_a));
  WEFT_ASSERT_OK(weft_device_queue_execute(
      cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&semaphores[1], &one), command_buffer, table_b));
  // The caller's copies of the tables may go away after the call.
  memset(entries_a, 0, sizeof(entries_a));
  memset(entries_b, 0, sizeof(entries_b));
  WEFT_ASSERT_OK(weft_cts_wait(semaphores[0], 1));
  WEFT_ASSERT_OK(weft_cts_wait(semaphores[1], 1));
  check_indirect(cts, first, 0, 0x44);
  check_indirect(cts, second, 0, 0x44);
  weft_semaphore_release(semaphores[0]);
  weft_semaphore_release(semaphores[1]);
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(first);
  weft_buffer_release(second);
  weft_buffer_release(source);
}

static void one_shot_submitted_twice(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = buffer_of(cts, 16, 0);
  weft_command_buffer_t* command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
  WEFT_ASSERT_OK(weft_command_buffer_fill(
      command_buffer, weft_make_buffer_ref(buffer, 0, 16), &(uint8_t){9}, 1));
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  WEFT_ASSERT_OK(weft_cts_execute_and_wait(cts, command_buffer,
                                           weft_binding_table_empty()));
  expect_execute_rejected(cts, command_buffer, weft_binding_table_empty(),
                          WEFT_STATUS_FAILED_PRECONDITION, "already submitted");
  assert_bytes(cts, buffer, 0, 16, 9);
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(buffer);
}

static void one_shot_rejected_submit_can_be_retried(void** state) {
  // A submission rejected by validation does not use up a one-shot buffer.
  weft_cts_t* cts = *state;
  weft_buffer_t* target = buffer_of(cts, 64, 0);
  weft_buffer_t* source = buffer_of(cts, 16, 0x21);
  weft_command_buffer_t* command_buffer =
      record_indirect(cts, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT);
  weft_buffer_binding_t entries[2] = {{target, 0, 64}, {source, 0, 16}};
  weft_binding_table_t too_small = {1, entries};
  expect_execute_rejected(cts, command_buffer, too_small,
                          WEFT_STATUS_OUT_OF_RANGE, NULL);
  weft_binding_table_t table = {2, entries};
  WEFT_ASSERT_OK(weft_cts_execute_and_wait(cts, command_buffer, table));
  check_indirect(cts, target, 0, 0x21);
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(target);
  weft_buffer_release(source);
}

static void binding_table_too_small(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* target = buffer_of(cts, 64, 0);
  weft_command_buffer_t* command_buffer =
      record_indirect(cts, WEFT_COMMAND_BUFFER_MODE_REUSABLE);
  weft_buffer_binding_t entries[1] = {{target, 0, 64}};
  weft_binding_table_t table = {1, entries};
  expect_execute_rejected(cts, command_buffer, table, WEFT_STATUS_OUT_OF_RANGE,
                          "slot 1");
  expect_execute_rejected(cts, command_buffer, weft_binding_table_empty(),
                          WEFT_STATUS_OUT_OF_RANGE, "0 entries");
  assert_bytes(cts, target, 0, 64, 0);
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(target);
}

static void binding_table_missing_buffer(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* target = buffer_of(cts, 64, 0);
  weft_command_buffer_t* command_buffer =
      record_indirect(cts, WEFT_COMMAND_BUFFER_MODE_REUSABLE);
  weft_buffer_binding_t entries[2] = {{target, 0, 64}, {NULL, 0, 16}};
  weft_binding_table_t table = {2, entries};
  expect_execute_rejected(cts, command_buffer, table,
                          WEFT_STATUS_INVALID_ARGUMENT, "slot 1 has no buffer");
  // A NULL bindings array with a non-zero count.
  weft_binding_table_t broken = {2, NULL};
  expect_execute_rejected(cts, command_buffer, broken,
                          WEFT_STATUS_INVALID_ARGUMENT, NULL);
  assert_bytes(cts, target, 0, 64, 0);
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(target);
}

static void binding_table_range_too_small(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* target = buffer_of(cts, 256, 0);
  weft_buffer_t* source = buffer_of(cts, 16, 1);
  weft_command_buffer_t* command_buffer =
      record_indirect(cts, WEFT_COMMAND_BUFFER_MODE_REUSABLE);
  // Slot 0 needs 48 bytes (the update at [32, 40) and the copy from 48).
  weft_buffer_binding_t short_entries[2] = {{target, 0, 40}, {source, 0, 16}};
  weft_binding_table_t short_table = {2, short_entries};
  expect_execute_rejected(cts, command_buffer, short_table,
                          WEFT_STATUS_OUT_OF_RANGE, "slot 0");
  // The entry's own range past its buffer.
  weft_buffer_binding_t past_entries[2] = {{target, 200, 100}, {source, 0, 16}};
  weft_binding_table_t past_table = {2, past_entries};
  expect_execute_rejected(cts, command_buffer, past_table,
                          WEFT_STATUS_OUT_OF_RANGE, "slot 0");
  // The copy source is 16 bytes; slot 1 binds 8.
  weft_buffer_binding_t small_source[2] = {{target, 0, 64}, {source, 8, 8}};
  weft_binding_table_t small_table = {2, small_source};
  expect_execute_rejected(cts, command_buffer, small_table,
                          WEFT_STATUS_OUT_OF_RANGE, "slot 1");
  assert_bytes(cts, target, 0, 256, 0);
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(target);
  weft_buffer_release(source);
}

static void binding_table_usage_checked(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* read_only = weft_cts_allocate_buffer_with_params(
      cts,
      (weft_buffer_params_t){.usage = WEFT_BUFFER_USAGE_TRANSFER_SOURCE |
                                      WEFT_BUFFER_USAGE_MAPPING},
      64);
  weft_buffer_t* source = buffer_of(cts, 16, 1);
  weft_command_buffer_t* command_buffer =
      record_indirect(cts, WEFT_COMMAND_BUFFER_MODE_REUSABLE);
  weft_buffer_binding_t entries[2] = {{read_only, 0, 64}, {source, 0, 16}};
  weft_binding_table_t table = {2, entries};
  expect_execute_rejected(cts, command_buffer, table,
                          WEFT_STATUS_PERMISSION_DENIED, "TRANSFER_TARGET");
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(read_only);
  weft_buffer_release(source);
}

static void indirect_fill_alignment_checked_at_submit(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = buffer_of(cts, 64, 0);
  weft_command_buffer_t* command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_REUSABLE, 1);
  // Misaligned as recorded: rejected now.
  weft_cts_assert_status_contains(
      weft_command_buffer_fill(command_buffer,
                               weft_make_indirect_buffer_ref(0, 2, 8),
                               &(uint32_t){0xFFFFFFFFu}, 4),
      WEFT_STATUS_INVALID_ARGUMENT, NULL);
  weft_command_buffer_release(command_buffer);
  command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_REUSABLE, 1);
  WEFT_ASSERT_OK(weft_command_buffer_fill(
      command_buffer, weft_make_indirect_buffer_ref(0, 4, WEFT_WHOLE_BUFFER),
      &(uint32_t){0xFFFFFFFFu}, 4));
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  // Bound at offset 2: misaligned once resolved.
  weft_buffer_binding_t misaligned[1] = {{buffer, 2, 32}};
  weft_binding_table_t misaligned_table = {1, misaligned};
  expect_execute_rejected(cts, command_buffer, misaligned_table,
                          WEFT_STATUS_INVALID_ARGUMENT, "command 0 (fill)");
  // Bound for 30 bytes: the whole-buffer length (26) is not a multiple of 4.
  weft_buffer_binding_t odd_length[1] = {{buffer, 0, 30}};
  weft_binding_table_t odd_table = {1, odd_length};
  expect_execute_rejected(cts, command_buffer, odd_table,
                          WEFT_STATUS_INVALID_ARGUMENT, NULL);
  assert_bytes(cts, buffer, 0, 64, 0);
  weft_buffer_binding_t good[1] = {{buffer, 8, 32}};
  weft_binding_table_t good_table = {1, good};
  WEFT_ASSERT_OK(weft_cts_execute_and_wait(cts, command_buffer, good_table));
  assert_bytes(cts, buffer, 0, 12, 0);
  assert_bytes(cts, buffer, 12, 28, 0xFF);
  assert_bytes(cts, buffer, 40, 24, 0);
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(buffer);
}

static void indirect_copy_overlap_checked_at_submit(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = buffer_of(cts, 128, 0);
  weft_command_buffer_t* command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_REUSABLE, 2);
  WEFT_ASSERT_OK(weft_command_buffer_copy(
      command_buffer, weft_make_indirect_buffer_ref(0, 0, WEFT_WHOLE_BUFFER),
      weft_make_indirect_buffer_ref(1, 0, WEFT_WHOLE_BUFFER)));
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  // Both slots on one buffer, overlapping.
  weft_buffer_binding_t overlap[2] = {{buffer, 0, 64}, {buffer, 32, 64}};
  weft_binding_table_t overlap_table = {2, overlap};
  expect_execute_rejected(cts, command_buffer, overlap_table,
                          WEFT_STATUS_INVALID_ARGUMENT, "command 0 (copy)");
  // Whole lengths that resolve to different sizes.
  weft_buffer_binding_t uneven[2] = {{buffer, 0, 32}, {buffer, 64, 48}};
  weft_binding_table_t uneven_table = {2, uneven};
  expect_execute_rejected(cts, command_buffer, uneven_table,
                          WEFT_STATUS_INVALID_ARGUMENT, "differ");
  // Disjoint halves work.
  weft_cts_fill_buffer(cts, buffer, 0, 64, &(uint8_t){0x66}, 1);
  weft_buffer_binding_t halves[2] = {{buffer, 0, 64},
                                     {buffer, 64, WEFT_WHOLE_BUFFER}};
  weft_binding_table_t halves_table = {2, halves};
  WEFT_ASSERT_OK(weft_cts_execute_and_wait(cts, command_buffer, halves_table));
  assert_bytes(cts, buffer, 64, 64, 0x66);
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(buffer);
}

static void mixed_direct_and_indirect(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* direct = buffer_of(cts, 32, 0x10);
  weft_buffer_t* bound = buffer_of(cts, 32, 0);
  weft_command_buffer_t* command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_REUSABLE, 4);
  // Only slot 3 is used: the table needs 4 entries but 0-2 may be empty.
  WEFT_ASSERT_OK(weft_command_buffer_copy(
      command_buffer, weft_make_buffer_ref(direct, 0, 32),
      weft_make_indirect_buffer_ref(3, 0, WEFT_WHOLE_BUFFER)));
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  weft_buffer_binding_t entries[4] = {
      {NULL, 0, 0}, {NULL, 0, 0}, {NULL, 0, 0}, {bound, 0, 32}};
  weft_binding_table_t short_table = {3, entries};
  expect_execute_rejected(cts, command_buffer, short_table,
                          WEFT_STATUS_OUT_OF_RANGE, "slot 3");
  weft_binding_table_t table = {4, entries};
  WEFT_ASSERT_OK(weft_cts_execute_and_wait(cts, command_buffer, table));
  assert_bytes(cts, bound, 0, 32, 0x10);
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(direct);
  weft_buffer_release(bound);
}

//===----------------------------------------------------------------------===//
// Waits and transient buffers
//===----------------------------------------------------------------------===//

static void execute_waits_for_its_wait_list(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = buffer_of(cts, 32, 0);
  weft_command_buffer_t* command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
  WEFT_ASSERT_OK(weft_command_buffer_fill(command_buffer,
                                          weft_make_buffer_ref(buffer, 0, 32),
                                          &(uint8_t){0x31}, 1));
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  weft_semaphore_t* wait = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* signal = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1;
  WEFT_ASSERT_OK(weft_device_queue_execute(
      cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_cts_list1(&wait, &one),
      weft_cts_list1(&signal, &one), command_buffer,
      weft_binding_table_empty()));
  // The caller may release its reference: the queue holds one.
  weft_command_buffer_release(command_buffer);
  assert_int_equal(weft_cts_query_value(signal), 0);
  WEFT_ASSERT_OK(weft_semaphore_signal(wait, 1));
  WEFT_ASSERT_OK(weft_cts_wait(signal, 1));
  assert_bytes(cts, buffer, 0, 32, 0x31);
  weft_semaphore_release(wait);
  weft_semaphore_release(signal);
  weft_buffer_release(buffer);
}

static void transient_buffer_checked_when_run(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* gate = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* allocated = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* executed = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* freed = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* late = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1;
  weft_buffer_params_t params = {0};
  weft_buffer_t* transient = NULL;
  // The alloca waits on |gate|: the buffer has no memory while recording.
  WEFT_ASSERT_OK(weft_device_queue_alloca(
      cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_cts_list1(&gate, &one),
      weft_cts_list1(&allocated, &one), params, 64, &transient));
  weft_command_buffer_t* command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_REUSABLE, 0);
  WEFT_ASSERT_OK(weft_command_buffer_fill(
      command_buffer, weft_make_buffer_ref(transient, 0, WEFT_WHOLE_BUFFER),
      &(uint8_t){0x5A}, 1));
  // Ranges are still checked against its length.
  weft_cts_assert_status_contains(
      weft_command_buffer_fill(command_buffer,
                               weft_make_buffer_ref(transient, 0, 65),
                               &(uint8_t){0x5A}, 1),
      WEFT_STATUS_OUT_OF_RANGE, NULL);
  weft_command_buffer_release(command_buffer);
  command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_REUSABLE, 0);
  WEFT_ASSERT_OK(weft_command_buffer_fill(
      command_buffer, weft_make_buffer_ref(transient, 0, WEFT_WHOLE_BUFFER),
      &(uint8_t){0x5A}, 1));
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  WEFT_ASSERT_OK(weft_device_queue_execute(
      cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_cts_list1(&allocated, &one),
      weft_cts_list1(&executed, &one), command_buffer,
      weft_binding_table_empty()));
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  WEFT_ASSERT_OK(weft_cts_wait(executed, 1));
  assert_bytes(cts, transient, 0, 64, 0x5A);
  WEFT_ASSERT_OK(weft_device_queue_dealloca(
      cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_cts_list1(&executed, &one),
      weft_cts_list1(&freed, &one), transient));
  WEFT_ASSERT_OK(weft_cts_wait(freed, 1));
  // Executing after the dealloca fails the signal, saying the dealloca ran
  // and naming the command, the same way on every driver.
  WEFT_ASSERT_OK(weft_device_queue_execute(
      cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_cts_list1(&freed, &one),
      weft_cts_list1(&late, &one), command_buffer, weft_binding_table_empty()));
  weft_status_t late_status = weft_cts_wait(late, 1);
  char text[1024];
  weft_status_format(late_status, text, sizeof(text));
  weft_cts_assert_status_contains(late_status, WEFT_STATUS_FAILED_PRECONDITION,
                                  "after its dealloca ran");
  if (!strstr(text, "while executing command 0 (fill)")) {
    fail_msg("expected the command named in: %s", text);
  }
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(transient);
  weft_semaphore_release(gate);
  weft_semaphore_release(allocated);
  weft_semaphore_release(executed);
  weft_semaphore_release(freed);
  weft_semaphore_release(late);
}

//===----------------------------------------------------------------------===//
// Allocation failures
//===----------------------------------------------------------------------===//

// Records and runs a command buffer that grows its command array and
// payload chunks on a second device of the case's driver whose |allocator|
// fails from some allocation on. Returns true when the whole run succeeded
// (no failure was injected).
static bool record_and_run_with_allocator(weft_cts_t* cts,
                                          weft_allocator_t allocator) {
  // The second device's own kernels: a GPU runs only code it loaded.
  weft_executable_t* kernels = NULL;
  weft_device_t* device = NULL;
  weft_buffer_t* buffer = NULL;
  weft_command_buffer_t* command_buffer = NULL;
  weft_semaphore_t* semaphore = NULL;
  // Host-visible, so the result is read through a mapping: a copy on the
  // second device would allocate through the failing allocator, and a GPU
  // case's device cannot reach the second device's memory.
  weft_buffer_params_t params = {
      .type = WEFT_MEMORY_TYPE_HOST_VISIBLE | WEFT_MEMORY_TYPE_HOST_COHERENT,
      .usage = WEFT_BUFFER_USAGE_DEFAULT | WEFT_BUFFER_USAGE_MAPPING_SCOPED};
  const uint32_t kLength = 8192;
  uint8_t* data = malloc(kLength);
  for (uint32_t i = 0; i < kLength; ++i) data[i] = (uint8_t)(i * 13 + 5);
  weft_status_t status =
      weft_device_create(cts->device_string, allocator, &device);
  if (weft_status_is_ok(status)) {
    status = weft_device_create_executable(
        device, weft_cts_kernel_source(weft_device_driver_name(device)),
        &kernels);
  }
  if (weft_status_is_ok(status)) {
    status = weft_device_allocate_buffer(device, params, kLength, &buffer);
  }
  if (weft_status_is_ok(status)) {
    status = weft_command_buffer_create(
        device, WEFT_COMMAND_BUFFER_MODE_REUSABLE, WEFT_COMMAND_CATEGORY_ANY, 1,
        &command_buffer);
  }
  if (weft_status_is_ok(status)) {
    status = weft_command_buffer_begin(command_buffer);
  }
  // 40 small updates (array growth), one over a chunk, a dispatch.
  for (uint32_t i = 0; weft_status_is_ok(status) && i < 40; ++i) {
    status = weft_command_buffer_update(
        command_buffer, data + i * 16,
        weft_make_indirect_buffer_ref(0, i * 16, 16));
  }
  if (weft_status_is_ok(status)) {
    status = weft_command_buffer_update(
        command_buffer, data + 1024,
        weft_make_buffer_ref(buffer, 1024, kLength - 1024));
  }
  if (weft_status_is_ok(status)) {
    uint32_t ordinal = 0;
    weft_status_ignore(
        weft_executable_lookup_kernel(kernels, "write_ids", &ordinal));
    uint32_t workgroups[3] = {0, 1, 1};
    weft_buffer_ref_t binding =
        weft_make_buffer_ref(buffer, 0, WEFT_WHOLE_BUFFER);
    status = weft_command_buffer_dispatch(command_buffer, kernels, ordinal,
                                          workgroups, 0, NULL, 1, &binding);
  }
  if (weft_status_is_ok(status)) {
    status = weft_command_buffer_end(command_buffer);
  } else if (command_buffer) {
    // The first recording error comes back from end too.
    weft_status_code_t code = weft_status_code(status);
    weft_status_t end_status = weft_command_buffer_end(command_buffer);
    if (code == WEFT_STATUS_RESOURCE_EXHAUSTED) {
      assert_int_equal(weft_status_code(end_status), code);
    }
    weft_status_free(end_status);
  }
  if (weft_status_is_ok(status)) {
    status = weft_device_create_semaphore(device, 0, &semaphore);
  }
  if (weft_status_is_ok(status)) {
    weft_buffer_binding_t entry = {buffer, 0, 1024};
    weft_binding_table_t table = {1, &entry};
    uint64_t one = 1;
    weft_semaphore_list_t signal = {1, &semaphore, &one};
    status = weft_device_queue_execute(device, WEFT_QUEUE_AFFINITY_ANY,
                                       weft_semaphore_list_empty(), signal,
                                       command_buffer, table);
    if (weft_status_is_ok(status)) {
      status = weft_semaphore_wait(semaphore, 1, weft_timeout_infinite());
    }
  }
  bool passed = weft_status_is_ok(status);
  if (passed) {
    uint8_t* out = malloc(kLength);
    WEFT_ASSERT_OK(weft_buffer_map_read(buffer, 0, out, kLength));
    assert_memory_equal(out, data, 640);
    assert_memory_equal(out + 1024, data + 1024, kLength - 1024);
    free(out);
  } else if (!weft_status_is(status, WEFT_STATUS_RESOURCE_EXHAUSTED)) {
    char text[1024];
    weft_status_format(status, text, sizeof(text));
    weft_status_free(status);
    fail_msg("expected OK or RESOURCE_EXHAUSTED, got: %s", text);
  }
  weft_status_free(status);
  weft_semaphore_release(semaphore);
  weft_command_buffer_release(command_buffer);
  weft_executable_release(kernels);
  weft_buffer_release(buffer);
  weft_device_release(device);
  free(data);
  return passed;
}

static void recording_survives_allocation_failures(void** state) {
  weft_cts_t* cts = *state;
  bool passed = false;
  int64_t fail_at = 0;
  for (; !passed && fail_at < 10000; ++fail_at) {
    // Counts live allocations so each run can check it gave everything back.
    weft_cts_counting_allocator_t counter;
    weft_allocator_t counting =
        weft_cts_counting_allocator_initialize(cts->allocator, &counter);
    weft_failing_allocator_t failing_storage;
    weft_allocator_t failing =
        weft_failing_allocator_initialize(counting, fail_at, &failing_storage);
    passed = record_and_run_with_allocator(cts, failing);
    if (weft_cts_counting_allocator_live(&counter) != 0) {
      fail_msg("run failing allocation %lld leaked %lld allocations",
               (long long)fail_at,
               (long long)weft_cts_counting_allocator_live(&counter));
    }
  }
  assert_true(passed);
  // The device, buffer, command buffer, command array growth, payload
  // chunks and the submission all allocate: several runs had a failure.
  print_message("passed after %lld runs with an injected failure\n",
                (long long)(fail_at - 1));
  assert_true(fail_at > 6);
}

//===----------------------------------------------------------------------===//
// weft_binding_table_empty
//===----------------------------------------------------------------------===//

static void direct_only_with_empty_binding_table(void** state) {
  // A direct-only command buffer (binding capacity 0) executed twice with
  // weft_binding_table_empty(): fill a with -5, copy a -> b, abs() over b.
  // An indirect one given the empty table is rejected at submit.
  weft_cts_t* cts = *state;
  enum { kCount = 200 };  // 4 workgroups of abs_range, the last partial
  const weft_binding_table_t empty = weft_binding_table_empty();
  assert_int_equal(empty.count, 0);
  assert_null(empty.bindings);
  weft_buffer_t* a = buffer_of(cts, kCount * sizeof(int32_t), 0);
  weft_buffer_t* b = buffer_of(cts, kCount * sizeof(int32_t), 0);
  uint32_t abs_range = 0;
  WEFT_ASSERT_OK(
      weft_executable_lookup_kernel(cts->kernels, "abs_range", &abs_range));
  weft_command_buffer_t* command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_REUSABLE, 0);
  const int32_t minus_five = -5;
  WEFT_ASSERT_OK(weft_command_buffer_fill(
      command_buffer, weft_make_buffer_ref(a, 0, WEFT_WHOLE_BUFFER),
      &minus_five, sizeof(minus_five)));
  WEFT_ASSERT_OK(weft_command_buffer_barrier(command_buffer));
  WEFT_ASSERT_OK(weft_command_buffer_copy(
      command_buffer, weft_make_buffer_ref(a, 0, WEFT_WHOLE_BUFFER),
      weft_make_buffer_ref(b, 0, WEFT_WHOLE_BUFFER)));
  WEFT_ASSERT_OK(weft_command_buffer_barrier(command_buffer));
  const uint32_t workgroups[3] = {(kCount + 63) / 64, 1, 1};
  const uint32_t constants[2] = {0, kCount};
  const weft_buffer_ref_t binding =
      weft_make_buffer_ref(b, 0, WEFT_WHOLE_BUFFER);
  WEFT_ASSERT_OK(weft_command_buffer_dispatch(command_buffer, cts->kernels,
                                              abs_range, workgroups, 2,
                                              constants, 1, &binding));
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  for (int run = 0; run < 2; ++run) {
    WEFT_ASSERT_OK(weft_cts_execute_and_wait(cts, command_buffer, empty));
    int32_t values[kCount];
    weft_cts_read_buffer(cts, a, 0, values, sizeof(values));
    for (int i = 0; i < kCount; ++i) assert_int_equal(values[i], -5);
    weft_cts_read_buffer(cts, b, 0, values, sizeof(values));
    for (int i = 0; i < kCount; ++i) assert_int_equal(values[i], 5);
    weft_cts_fill_buffer(cts, b, 0, WEFT_WHOLE_BUFFER, &(uint8_t){0}, 1);
  }
  weft_command_buffer_release(command_buffer);

  // Slot 0 of an empty table does not exist.
  command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_REUSABLE, 1);
  WEFT_ASSERT_OK(weft_command_buffer_fill(
      command_buffer, weft_make_indirect_buffer_ref(0, 0, 16), &(uint8_t){1},
      1));
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  expect_execute_rejected(cts, command_buffer, empty, WEFT_STATUS_OUT_OF_RANGE,
                          "the table has 0 entries");
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(a);
  weft_buffer_release(b);
}

// A binding whose buffer cannot be mapped when the command buffer runs (a
// transient buffer after its dealloca) fails the execution naming the first
// command that uses the slot, the same way on every driver.
static void unmappable_binding_names_its_command(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* freed = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* done = weft_cts_create_semaphore(cts, 0);
  const uint64_t one = 1, two = 2;
  weft_buffer_t* transient = NULL;
  WEFT_ASSERT_OK(weft_device_queue_alloca(
      cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&freed, &one), (weft_buffer_params_t){0}, 64, &transient));
  WEFT_ASSERT_OK(weft_device_queue_dealloca(
      cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_cts_list1(&freed, &one),
      weft_cts_list1(&freed, &two), transient));
  WEFT_ASSERT_OK(weft_cts_wait(freed, 2));
  weft_buffer_t* plain = weft_cts_allocate_buffer(cts, 64);
  weft_command_buffer_t* command_buffer =
      weft_cts_begin_command_buffer(cts, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, 1);
  WEFT_ASSERT_OK(weft_command_buffer_fill(
      command_buffer, weft_make_buffer_ref(plain, 0, 64), &(uint8_t){1}, 1));
  WEFT_ASSERT_OK(weft_command_buffer_barrier(command_buffer));
  WEFT_ASSERT_OK(weft_command_buffer_fill(
      command_buffer, weft_make_indirect_buffer_ref(0, 0, WEFT_WHOLE_BUFFER),
      &(uint8_t){2}, 1));
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  weft_buffer_binding_t binding = {transient, 0, WEFT_WHOLE_BUFFER};
  WEFT_ASSERT_OK(weft_device_queue_execute(
      cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&done, &one), command_buffer,
      (weft_binding_table_t){1, &binding}));
  weft_status_t status = weft_cts_wait(done, 1);
  char text[1024];
  weft_status_format(status, text, sizeof(text));
  weft_cts_assert_status_contains(status, WEFT_STATUS_FAILED_PRECONDITION,
                                  "after its dealloca ran");
  if (!strstr(text, "while executing command 2 (fill)")) {
    fail_msg("expected command 2 named in: %s", text);
  }
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(plain);
  weft_buffer_release(transient);
  weft_semaphore_release(freed);
  weft_semaphore_release(done);
}

// README "Objects across devices": a command buffer recorded for another
// device (of the other CPU driver too) runs on this one, also after the
// device it was made for is gone (a recorded command buffer holds none).
static void command_buffer_from_another_device(void** state) {
  weft_cts_t* cts = *state;
  weft_cts_require(cts, WEFT_CTS_FEATURE_CPU_COMMAND_BUFFERS);
  const char* others[] = {"local-sync", "local-task?workers=1"};
  for (size_t d = 0; d < sizeof(others) / sizeof(others[0]); ++d) {
    weft_device_t* other = NULL;
    WEFT_ASSERT_OK(weft_device_create(others[d], cts->allocator, &other));
    weft_command_buffer_t* command_buffer = NULL;
    WEFT_ASSERT_OK(weft_command_buffer_create(
        other, WEFT_COMMAND_BUFFER_MODE_REUSABLE, WEFT_COMMAND_CATEGORY_ANY, 1,
        &command_buffer));
    WEFT_ASSERT_OK(weft_command_buffer_begin(command_buffer));
    const uint32_t pattern = 0xC0FFEE00u + (uint32_t)d;
    WEFT_ASSERT_OK(weft_command_buffer_fill(
        command_buffer, weft_make_indirect_buffer_ref(0, 0, WEFT_WHOLE_BUFFER),
        &pattern, 4));
    WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
    weft_device_release(other);
    weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 256);
    weft_buffer_binding_t binding = {buffer, 0, WEFT_WHOLE_BUFFER};
    WEFT_ASSERT_OK(weft_cts_execute_and_wait(
        cts, command_buffer, (weft_binding_table_t){1, &binding}));
    uint32_t words[64];
    weft_cts_read_buffer(cts, buffer, 0, words, sizeof(words));
    for (int i = 0; i < 64; ++i) assert_int_equal(words[i], pattern);
    weft_buffer_release(buffer);
    weft_command_buffer_release(command_buffer);
  }
}

int main(int argc, char** argv) {
  const struct CMUnitTest tests[] = {
      WEFT_CTS_CASE(create_and_query),
      WEFT_CTS_CASE(create_rejects_bad_mode_and_categories),
      WEFT_CTS_CASE(record_before_begin),
      WEFT_CTS_CASE(double_begin),
      WEFT_CTS_CASE(end_without_begin),
      WEFT_CTS_CASE(record_after_end),
      WEFT_CTS_CASE(execute_before_end),
      WEFT_CTS_CASE(empty_command_buffer_signals),
      WEFT_CTS_CASE(fill_pattern1_table),
      WEFT_CTS_CASE(fill_pattern2_table),
      WEFT_CTS_CASE(fill_pattern4_table),
      WEFT_CTS_CASE(fill_whole_buffer),
      WEFT_CTS_CASE(fill_bad_pattern),
      WEFT_CTS_CASE(fill_out_of_range),
      WEFT_CTS_CASE(fill_without_transfer_usage),
      WEFT_CTS_CASE(update_copies_at_record_time),
      WEFT_CTS_CASE(update_errors),
      WEFT_CTS_CASE(large_update_and_many_commands),
      WEFT_CTS_CASE(copy_between_buffers),
      WEFT_CTS_CASE(copy_errors),
      WEFT_CTS_CASE(fill_copy_update_with_barriers),
      WEFT_CTS_CASE(command_buffer_retains_buffers),
      WEFT_CTS_CASE(dispatch_in_transfer_only_buffer),
      WEFT_CTS_CASE(transfer_in_dispatch_only_buffer),
      WEFT_CTS_CASE(slot_past_capacity),
      WEFT_CTS_CASE(indirect_bindings),
      WEFT_CTS_CASE(reusable_with_two_tables),
      WEFT_CTS_CASE(reusable_submitted_back_to_back),
      WEFT_CTS_CASE(one_shot_submitted_twice),
      WEFT_CTS_CASE(one_shot_rejected_submit_can_be_retried),
      WEFT_CTS_CASE(binding_table_too_small),
      WEFT_CTS_CASE(binding_table_missing_buffer),
      WEFT_CTS_CASE(binding_table_range_too_small),
      WEFT_CTS_CASE(binding_table_usage_checked),
      WEFT_CTS_CASE(indirect_fill_alignment_checked_at_submit),
      WEFT_CTS_CASE(indirect_copy_overlap_checked_at_submit),
      WEFT_CTS_CASE(mixed_direct_and_indirect),
      WEFT_CTS_CASE(execute_waits_for_its_wait_list),
      WEFT_CTS_CASE(transient_buffer_checked_when_run),
      WEFT_CTS_CASE(recording_survives_allocation_failures),
      WEFT_CTS_CASE(direct_only_with_empty_binding_table),
      WEFT_CTS_CASE(unmappable_binding_names_its_command),
      WEFT_CTS_CASE(command_buffer_from_another_device),
  };
  return weft_cts_run("command_buffer", tests, WEFT_CTS_COUNT(tests), argc,
                      argv);
}
