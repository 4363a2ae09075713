// CTS: buffers seen by the host through mappings: map_range and its
// modes, flush and invalidate, the map_read / map_write / map_fill /
// map_copy helpers, every range and permission error with the values in its
// message, and a transient buffer's memory seen before its alloca and after
// its dealloca. The one suite that maps buffers under test (others move
// contents through the queue, cts.h): it needs host-visible memory.
#include <stdlib.h>
#include <string.h>

#include "cts.h"

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static weft_buffer_t* allocate_with(weft_cts_t* cts, weft_memory_type_t type,
                                    weft_memory_access_t access,
                                    weft_buffer_usage_t usage,
                                    weft_device_size_t length) {
  return weft_cts_allocate_buffer_with_params(
      cts, (weft_buffer_params_t){type, access, usage}, length);
}

// The case's state, once it is known that the host can map the device's
// buffers (else the case is skipped).
static weft_cts_t* mapping_cts(void** state) {
  weft_cts_t* cts = *state;
  weft_cts_require(cts, WEFT_CTS_FEATURE_HOST_MAPPING);
  return cts;
}

// Reads through a mapping: the path under test here.
static void map_read(weft_buffer_t* buffer, weft_device_size_t offset,
                     void* out, weft_device_size_t length) {
  WEFT_ASSERT_OK(weft_buffer_map_read(buffer, offset, out, length));
}

// Writes zeros over the whole buffer (drivers do not promise zeroed memory).
static void zero_buffer(weft_buffer_t* buffer) {
  uint8_t zero = 0;
  WEFT_ASSERT_OK(weft_buffer_map_fill(buffer, 0, WEFT_WHOLE_BUFFER, &zero, 1));
}

//===----------------------------------------------------------------------===//
// Mapping
//===----------------------------------------------------------------------===//

static void map_whole(void** state) {
  weft_cts_t* cts = mapping_cts(state);
  enum { kLength = 1024 };
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, kLength);
  weft_buffer_mapping_t mapping;
  WEFT_ASSERT_OK(
      weft_buffer_map_range(buffer, WEFT_MAPPING_MODE_SCOPED,
                            WEFT_MEMORY_ACCESS_READ | WEFT_MEMORY_ACCESS_WRITE,
                            0, WEFT_WHOLE_BUFFER, &mapping));
  assert_ptr_equal(mapping.buffer, buffer);
  assert_int_equal(mapping.byte_offset, 0);
  assert_int_equal(mapping.byte_length, kLength);
  assert_non_null(mapping.contents);
  weft_cts_make_bytes(mapping.contents, kLength, 7, 3);
  WEFT_ASSERT_OK(weft_buffer_mapping_flush(&mapping, 0, WEFT_WHOLE_BUFFER));
  weft_buffer_unmap_range(&mapping);
  assert_null(mapping.buffer);

  uint8_t expected[kLength];
  uint8_t actual[kLength];
  weft_cts_make_bytes(expected, kLength, 7, 3);
  map_read(buffer, 0, actual, kLength);
  weft_cts_assert_bytes_equal(actual, expected, kLength);
  weft_buffer_release(buffer);
}

static void map_subrange(void** state) {
  weft_cts_t* cts = mapping_cts(state);
  enum { kLength = 256 };
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, kLength);
  zero_buffer(buffer);
  weft_buffer_mapping_t mapping;
  WEFT_ASSERT_OK(weft_buffer_map_range(buffer, WEFT_MAPPING_MODE_SCOPED,
                                       WEFT_MEMORY_ACCESS_WRITE, 64, 32,
                                       &mapping));
  assert_int_equal(mapping.byte_offset, 64);
  assert_int_equal(mapping.byte_length, 32);
  memset(mapping.contents, 0xEE, 32);
  weft_buffer_unmap_range(&mapping);

  // A whole-buffer-length mapping from an offset covers the rest.
  WEFT_ASSERT_OK(weft_buffer_map_range(buffer, WEFT_MAPPING_MODE_SCOPED,
                                       WEFT_MEMORY_ACCESS_READ, 200,
                                       WEFT_WHOLE_BUFFER, &mapping));
  assert_int_equal(mapping.byte_length, kLength - 200);
  weft_buffer_unmap_range(&mapping);

  uint8_t actual[kLength];
  map_read(buffer, 0, actual, kLength);
  for (size_t i = 0; i < kLength; ++i) {
    uint8_t expected = (i >= 64 && i < 96) ? 0xEE : 0;
    assert_int_equal(actual[i], expected);
  }
  weft_buffer_release(buffer);
}

static void mapping_retains_buffer(void** state) {
  weft_cts_t* cts = mapping_cts(state);
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 64);
  weft_buffer_mapping_t mapping;
  WEFT_ASSERT_OK(weft_buffer_map_range(buffer, WEFT_MAPPING_MODE_SCOPED,
                                       WEFT_MEMORY_ACCESS_WRITE, 0, 64,
                                       &mapping));
  // The mapping keeps the buffer alive after the caller's release.
  weft_buffer_release(buffer);
  memset(mapping.contents, 1, 64);
  weft_buffer_unmap_range(&mapping);
  // Unmapping a zeroed (or already unmapped) mapping is safe.
  weft_buffer_unmap_range(&mapping);
  weft_buffer_mapping_t zeroed;
  memset(&zeroed, 0, sizeof(zeroed));
  weft_buffer_unmap_range(&zeroed);
}

static void persistent_mapping_requires_usage(void** state) {
  weft_cts_t* cts = mapping_cts(state);
  weft_buffer_t* scoped_only = allocate_with(
      cts, 0, 0, WEFT_BUFFER_USAGE_TRANSFER | WEFT_BUFFER_USAGE_MAPPING_SCOPED,
      128);
  weft_buffer_mapping_t mapping;
  weft_cts_assert_status_contains_both(
      weft_buffer_map_range(scoped_only, WEFT_MAPPING_MODE_PERSISTENT,
                            WEFT_MEMORY_ACCESS_READ, 0, 128, &mapping),
      WEFT_STATUS_PERMISSION_DENIED, "MAPPING_PERSISTENT", NULL);
  assert_null(mapping.buffer);
  WEFT_ASSERT_OK(weft_buffer_map_range(scoped_only, WEFT_MAPPING_MODE_SCOPED,
                                       WEFT_MEMORY_ACCESS_READ, 0, 128,
                                       &mapping));
  weft_buffer_unmap_range(&mapping);
  weft_buffer_release(scoped_only);

  weft_buffer_t* persistent = allocate_with(
      cts, 0, 0,
      WEFT_BUFFER_USAGE_TRANSFER | WEFT_BUFFER_USAGE_MAPPING_PERSISTENT, 128);
  WEFT_ASSERT_OK(weft_buffer_map_range(persistent, WEFT_MAPPING_MODE_PERSISTENT,
                                       WEFT_MEMORY_ACCESS_WRITE, 0, 128,
                                       &mapping));
  memset(mapping.contents, 9, 128);
  weft_buffer_unmap_range(&mapping);
  weft_buffer_release(persistent);
}

static void flush_and_invalidate_ranges(void** state) {
  weft_cts_t* cts = mapping_cts(state);
  // Coherent (default) and non-coherent host-visible memory.
  weft_buffer_t* buffers[2] = {
      weft_cts_allocate_buffer(cts, 512),
      allocate_with(cts, WEFT_MEMORY_TYPE_HOST_VISIBLE, 0, 0, 512),
  };
  for (int i = 0; i < 2; ++i) {
    weft_buffer_mapping_t mapping;
    WEFT_ASSERT_OK(weft_buffer_map_range(
        buffers[i], WEFT_MAPPING_MODE_SCOPED,
        WEFT_MEMORY_ACCESS_READ | WEFT_MEMORY_ACCESS_WRITE, 128, 256,
        &mapping));
    memset(mapping.contents, 0x5A, 256);
    WEFT_ASSERT_OK(weft_buffer_mapping_flush(&mapping, 0, 256));
    WEFT_ASSERT_OK(weft_buffer_mapping_flush(&mapping, 16, 32));
    WEFT_ASSERT_OK(weft_buffer_mapping_flush(&mapping, 200, WEFT_WHOLE_BUFFER));
    WEFT_ASSERT_OK(weft_buffer_mapping_invalidate(&mapping, 0, 256));
    WEFT_ASSERT_OK(weft_buffer_mapping_invalidate(&mapping, 256, 0));
    // Ranges are relative to the mapping (256 bytes), not the buffer.
    weft_cts_assert_status_contains_both(
        weft_buffer_mapping_flush(&mapping, 128, 256), WEFT_STATUS_OUT_OF_RANGE,
        "[128, 384)", "256 bytes");
    weft_cts_assert_status_contains_both(
        weft_buffer_mapping_invalidate(&mapping, 300, 1),
        WEFT_STATUS_OUT_OF_RANGE, "[300, 301)", "256 bytes");
    weft_buffer_unmap_range(&mapping);
    uint8_t byte = 0;
    map_read(buffers[i], 383, &byte, 1);
    assert_int_equal(byte, 0x5A);
    weft_buffer_release(buffers[i]);
  }
}

//===----------------------------------------------------------------------===//
// Host transfers
//===----------------------------------------------------------------------===//

static void write_read_whole(void** state) {
  weft_cts_t* cts = mapping_cts(state);
  enum { kLength = 4096 };
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, kLength);
  uint8_t* expected = malloc(kLength);
  uint8_t* actual = malloc(kLength);
  weft_cts_make_bytes(expected, kLength, 1, 7);
  WEFT_ASSERT_OK(weft_buffer_map_write(buffer, 0, expected, kLength));
  map_read(buffer, 0, actual, kLength);
  weft_cts_assert_bytes_equal(actual, expected, kLength);
  free(expected);
  free(actual);
  weft_buffer_release(buffer);
}

static void write_read_at_offsets(void** state) {
  weft_cts_t* cts = mapping_cts(state);
  enum { kLength = 300 };
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, kLength);
  zero_buffer(buffer);
  uint8_t expected[kLength];
  memset(expected, 0, sizeof(expected));
  // Unaligned offsets and lengths, including the very last byte.
  const struct {
    size_t offset;
    size_t length;
  } ranges[] = {{1, 1}, {3, 17}, {61, 70}, {257, 43}};
  for (size_t r = 0; r < sizeof(ranges) / sizeof(ranges[0]); ++r) {
    weft_cts_make_bytes(expected + ranges[r].offset, ranges[r].length,
                        (uint8_t)(r * 40 + 1), 1);
    WEFT_ASSERT_OK(weft_buffer_map_write(buffer, ranges[r].offset,
                                         expected + ranges[r].offset,
                                         ranges[r].length));
  }
  uint8_t actual[kLength];
  map_read(buffer, 0, actual, kLength);
  weft_cts_assert_bytes_equal(actual, expected, kLength);
  uint8_t middle[17];
  map_read(buffer, 3, middle, sizeof(middle));
  weft_cts_assert_bytes_equal(middle, expected + 3, sizeof(middle));
  weft_buffer_release(buffer);
}

static void fill_patterns_whole(void** state) {
  weft_cts_t* cts = mapping_cts(state);
  enum { kLength = 64 };
  const uint8_t pattern[4] = {0x11, 0x22, 0x33, 0x44};
  const uint32_t pattern_lengths[] = {1, 2, 4};
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, kLength);
  for (size_t p = 0; p < 3; ++p) {
    uint32_t pattern_length = pattern_lengths[p];
    WEFT_ASSERT_OK(weft_buffer_map_fill(buffer, 0, WEFT_WHOLE_BUFFER, pattern,
                                        pattern_length));
    uint8_t actual[kLength];
    map_read(buffer, 0, actual, kLength);
    for (size_t i = 0; i < kLength; ++i) {
      assert_int_equal(actual[i], pattern[i % pattern_length]);
    }
  }
  weft_buffer_release(buffer);
}

static void fill_patterns_at_offsets(void** state) {
  weft_cts_t* cts = mapping_cts(state);
  enum { kLength = 128 };
  const uint8_t pattern[4] = {0xA1, 0xB2, 0xC3, 0xD4};
  const uint32_t pattern_lengths[] = {1, 2, 4};
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, kLength);
  for (size_t p = 0; p < 3; ++p) {
    uint32_t pattern_length = pattern_lengths[p];
    zero_buffer(buffer);
    // [12, 48): an offset and length that are multiples of 4 (and so of
    // every pattern length) but not of 8.
    WEFT_ASSERT_OK(
        weft_buffer_map_fill(buffer, 12, 36, pattern, pattern_length));
    uint8_t actual[kLength];
    map_read(buffer, 0, actual, kLength);
    for (size_t i = 0; i < kLength; ++i) {
      uint8_t expected =
          (i >= 12 && i < 48) ? pattern[(i - 12) % pattern_length] : 0;
      assert_int_equal(actual[i], expected);
    }
  }
  weft_buffer_release(buffer);
}

static void copy_between_buffers(void** state) {
  weft_cts_t* cts = mapping_cts(state);
  enum { kLength = 1000 };
  weft_buffer_t* source = weft_cts_allocate_buffer(cts, kLength);
  weft_buffer_t* target = weft_cts_allocate_buffer(cts, kLength);
  uint8_t expected[kLength];
  weft_cts_make_bytes(expected, kLength, 3, 5);
  WEFT_ASSERT_OK(weft_buffer_map_write(source, 0, expected, kLength));
  zero_buffer(target);
  WEFT_ASSERT_OK(weft_buffer_map_copy(source, 0, target, 0, kLength));
  uint8_t actual[kLength];
  map_read(target, 0, actual, kLength);
  weft_cts_assert_bytes_equal(actual, expected, kLength);

  // A subrange to a different offset.
  zero_buffer(target);
  WEFT_ASSERT_OK(weft_buffer_map_copy(source, 100, target, 7, 50));
  map_read(target, 0, actual, kLength);
  for (size_t i = 0; i < kLength; ++i) {
    uint8_t want = (i >= 7 && i < 57) ? expected[100 + i - 7] : 0;
    assert_int_equal(actual[i], want);
  }
  weft_buffer_release(source);
  weft_buffer_release(target);
}

static void copy_within_buffer(void** state) {
  weft_cts_t* cts = mapping_cts(state);
  enum { kLength = 256 };
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, kLength);
  uint8_t expected[kLength];
  weft_cts_make_bytes(expected, kLength, 0, 1);
  WEFT_ASSERT_OK(weft_buffer_map_write(buffer, 0, expected, kLength));
  // Adjacent, non-overlapping ranges are fine.
  WEFT_ASSERT_OK(weft_buffer_map_copy(buffer, 0, buffer, 128, 128));
  memcpy(expected + 128, expected, 128);
  uint8_t actual[kLength];
  map_read(buffer, 0, actual, kLength);
  weft_cts_assert_bytes_equal(actual, expected, kLength);

  // Overlapping ranges of one allocation are rejected and change nothing.
  weft_cts_assert_status_contains_both(
      weft_buffer_map_copy(buffer, 0, buffer, 64, 128),
      WEFT_STATUS_INVALID_ARGUMENT, "[0, 128)", "[64, 192)");
  weft_cts_assert_status_contains_both(
      weft_buffer_map_copy(buffer, 10, buffer, 10, 1),
      WEFT_STATUS_INVALID_ARGUMENT, "overlap", NULL);
  // The same through two subspans of the allocation.
  weft_buffer_t* low = NULL;
  weft_buffer_t* high = NULL;
  WEFT_ASSERT_OK(weft_buffer_subspan(buffer, 0, 128, cts->allocator, &low));
  WEFT_ASSERT_OK(weft_buffer_subspan(buffer, 100, 156, cts->allocator, &high));
  weft_cts_assert_status_contains_both(
      weft_buffer_map_copy(low, 100, high, 0, 28), WEFT_STATUS_INVALID_ARGUMENT,
      "overlap", NULL);
  WEFT_ASSERT_OK(weft_buffer_map_copy(low, 0, high, 28, 100));
  weft_buffer_release(low);
  weft_buffer_release(high);
  weft_buffer_release(buffer);
}

static void empty_ranges_are_noops(void** state) {
  weft_cts_t* cts = mapping_cts(state);
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 64);
  weft_buffer_t* other = weft_cts_allocate_buffer(cts, 64);
  const uint32_t pattern = 0xFFFFFFFFu;
  uint8_t byte = 0;
  WEFT_ASSERT_OK(weft_buffer_map_fill(buffer, 0, 0, &pattern, 4));
  WEFT_ASSERT_OK(weft_buffer_map_fill(buffer, 64, 0, &pattern, 4));
  WEFT_ASSERT_OK(weft_buffer_map_write(buffer, 64, &byte, 0));
  WEFT_ASSERT_OK(weft_buffer_map_read(buffer, 32, &byte, 0));
  WEFT_ASSERT_OK(weft_buffer_map_copy(buffer, 0, other, 64, 0));
  // Zero length at the same offset of one allocation is not an overlap.
  WEFT_ASSERT_OK(weft_buffer_map_copy(buffer, 8, buffer, 8, 0));
  weft_buffer_mapping_t mapping;
  WEFT_ASSERT_OK(weft_buffer_map_range(buffer, WEFT_MAPPING_MODE_SCOPED,
                                       WEFT_MEMORY_ACCESS_READ, 64,
                                       WEFT_WHOLE_BUFFER, &mapping));
  assert_int_equal(mapping.byte_length, 0);
  weft_buffer_unmap_range(&mapping);

  // An empty buffer maps, fills and copies empty ranges.
  weft_buffer_t* empty = weft_cts_allocate_buffer(cts, 0);
  WEFT_ASSERT_OK(
      weft_buffer_map_fill(empty, 0, WEFT_WHOLE_BUFFER, &pattern, 4));
  WEFT_ASSERT_OK(weft_buffer_map_copy(empty, 0, other, 0, 0));
  WEFT_ASSERT_OK(weft_buffer_map_range(empty, WEFT_MAPPING_MODE_SCOPED,
                                       WEFT_MEMORY_ACCESS_WRITE, 0,
                                       WEFT_WHOLE_BUFFER, &mapping));
  weft_buffer_unmap_range(&mapping);
  weft_buffer_release(empty);
  weft_buffer_release(other);
  weft_buffer_release(buffer);
}

//===----------------------------------------------------------------------===//
// Range errors
//===----------------------------------------------------------------------===//

static void map_offset_out_of_range(void** state) {
  weft_cts_t* cts = mapping_cts(state);
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 128);
  weft_buffer_mapping_t mapping;
  weft_cts_assert_status_contains_both(
      weft_buffer_map_range(buffer, WEFT_MAPPING_MODE_SCOPED,
                            WEFT_MEMORY_ACCESS_READ, 129, WEFT_WHOLE_BUFFER,
                            &mapping),
      WEFT_STATUS_OUT_OF_RANGE, "offset 129", "128 bytes");
  assert_null(mapping.buffer);
  weft_cts_assert_status_contains_both(
      weft_buffer_map_range(buffer, WEFT_MAPPING_MODE_SCOPED,
                            WEFT_MEMORY_ACCESS_READ, 256, 1, &mapping),
      WEFT_STATUS_OUT_OF_RANGE, "[256, 257)", "128 bytes");
  weft_buffer_release(buffer);
}

static void map_past_end_by_length(void** state) {
  weft_cts_t* cts = mapping_cts(state);
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 128);
  weft_buffer_mapping_t mapping;
  weft_cts_assert_status_contains_both(
      weft_buffer_map_range(buffer, WEFT_MAPPING_MODE_SCOPED,
                            WEFT_MEMORY_ACCESS_WRITE, 64, 65, &mapping),
      WEFT_STATUS_OUT_OF_RANGE, "[64, 129)", "128 bytes");
  weft_cts_assert_status_contains_both(
      weft_buffer_map_range(buffer, WEFT_MAPPING_MODE_SCOPED,
                            WEFT_MEMORY_ACCESS_WRITE, 8, UINT64_MAX - 4,
                            &mapping),
      WEFT_STATUS_OUT_OF_RANGE, "overflows", NULL);
  weft_buffer_release(buffer);
}

static void read_write_past_end(void** state) {
  weft_cts_t* cts = mapping_cts(state);
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 128);
  uint8_t data[512] = {0};
  weft_cts_assert_status_contains_both(
      weft_buffer_map_write(buffer, 256, data, 256), WEFT_STATUS_OUT_OF_RANGE,
      "buffer_map_write: range [256, 512) is past the end of "
      "the buffer (128 bytes)",
      NULL);
  weft_cts_assert_status_contains_both(
      weft_buffer_map_read(buffer, 100, data, 29), WEFT_STATUS_OUT_OF_RANGE,
      "buffer_map_read", "[100, 129)");
  weft_cts_assert_status_contains_both(
      weft_buffer_map_fill(buffer, 64, 128, data, 1), WEFT_STATUS_OUT_OF_RANGE,
      "buffer_map_fill", "[64, 192)");
  weft_buffer_t* other = weft_cts_allocate_buffer(cts, 64);
  weft_cts_assert_status_contains_both(
      weft_buffer_map_copy(buffer, 0, other, 32, 64), WEFT_STATUS_OUT_OF_RANGE,
      "buffer_map_copy", "[32, 96)");
  weft_cts_assert_status_contains_both(
      weft_buffer_map_copy(other, 60, buffer, 0, 8), WEFT_STATUS_OUT_OF_RANGE,
      "[60, 68)", "64 bytes");
  weft_buffer_release(other);
  weft_buffer_release(buffer);
}

static void fill_bad_pattern_length(void** state) {
  weft_cts_t* cts = mapping_cts(state);
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 96);
  const uint8_t pattern[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  weft_cts_assert_status_contains_both(
      weft_buffer_map_fill(buffer, 0, 96, pattern, 3),
      WEFT_STATUS_INVALID_ARGUMENT, "pattern length 3", NULL);
  weft_cts_assert_status_contains_both(
      weft_buffer_map_fill(buffer, 0, 96, pattern, 8),
      WEFT_STATUS_INVALID_ARGUMENT, "pattern length 8", NULL);
  weft_cts_assert_status_contains_both(
      weft_buffer_map_fill(buffer, 0, 96, pattern, 0),
      WEFT_STATUS_INVALID_ARGUMENT, "pattern length 0", NULL);
  weft_buffer_release(buffer);
}

static void fill_misaligned(void** state) {
  weft_cts_t* cts = mapping_cts(state);
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 96);
  const uint32_t pattern = 0x12345678u;
  weft_cts_assert_status_contains_both(
      weft_buffer_map_fill(buffer, 2, 8, &pattern, 4),
      WEFT_STATUS_INVALID_ARGUMENT, "offset 2", "pattern length (4 bytes)");
  weft_cts_assert_status_contains_both(
      weft_buffer_map_fill(buffer, 4, 6, &pattern, 4),
      WEFT_STATUS_INVALID_ARGUMENT, "length 6", "pattern length (4 bytes)");
  weft_cts_assert_status_contains_both(
      weft_buffer_map_fill(buffer, 1, 4, &pattern, 2),
      WEFT_STATUS_INVALID_ARGUMENT, "offset 1", "(2 bytes)");
  // WEFT_WHOLE_BUFFER is resolved before the check: 92 bytes from offset 4
  // are aligned, 10 bytes from offset 0 are not.
  WEFT_ASSERT_OK(
      weft_buffer_map_fill(buffer, 4, WEFT_WHOLE_BUFFER, &pattern, 4));
  weft_buffer_t* odd = weft_cts_allocate_buffer(cts, 10);
  weft_cts_assert_status_contains_both(
      weft_buffer_map_fill(odd, 0, WEFT_WHOLE_BUFFER, &pattern, 4),
      WEFT_STATUS_INVALID_ARGUMENT, "length 10", NULL);
  weft_buffer_release(odd);
  weft_buffer_release(buffer);
}

//===----------------------------------------------------------------------===//
// Permission errors
//===----------------------------------------------------------------------===//

static void map_without_mapping_usage(void** state) {
  weft_cts_t* cts = mapping_cts(state);
  weft_buffer_t* buffer =
      allocate_with(cts, 0, 0, WEFT_BUFFER_USAGE_TRANSFER, 128);
  weft_buffer_mapping_t mapping;
  weft_cts_assert_status_contains_both(
      weft_buffer_map_range(buffer, WEFT_MAPPING_MODE_SCOPED,
                            WEFT_MEMORY_ACCESS_READ, 0, 128, &mapping),
      WEFT_STATUS_PERMISSION_DENIED, "MAPPING_SCOPED", "TRANSFER_SOURCE");
  uint8_t data[16] = {0};
  weft_cts_assert_status_contains_both(
      weft_buffer_map_write(buffer, 0, data, 16), WEFT_STATUS_PERMISSION_DENIED,
      "buffer_map_write", "MAPPING_SCOPED");
  weft_cts_assert_status_contains_both(
      weft_buffer_map_read(buffer, 0, data, 16), WEFT_STATUS_PERMISSION_DENIED,
      "buffer_map_read", NULL);
  weft_buffer_release(buffer);
}

static void write_to_read_only_buffer(void** state) {
  weft_cts_t* cts = mapping_cts(state);
  weft_buffer_t* buffer =
      allocate_with(cts, 0, WEFT_MEMORY_ACCESS_READ, 0, 128);
  weft_buffer_mapping_t mapping;
  weft_cts_assert_status_contains_both(
      weft_buffer_map_range(buffer, WEFT_MAPPING_MODE_SCOPED,
                            WEFT_MEMORY_ACCESS_READ | WEFT_MEMORY_ACCESS_WRITE,
                            0, 128, &mapping),
      WEFT_STATUS_PERMISSION_DENIED,
      "buffer_map_range: buffer allows READ but WRITE was requested", NULL);
  uint32_t word = 1;
  weft_cts_assert_status_contains_both(
      weft_buffer_map_write(buffer, 0, &word, 4), WEFT_STATUS_PERMISSION_DENIED,
      "allows READ", "WRITE was requested");
  weft_cts_assert_status_contains_both(
      weft_buffer_map_fill(buffer, 0, 4, &word, 4),
      WEFT_STATUS_PERMISSION_DENIED, "WRITE", NULL);
  weft_buffer_t* other = weft_cts_allocate_buffer(cts, 128);
  weft_cts_assert_status_contains_both(
      weft_buffer_map_copy(other, 0, buffer, 0, 4),
      WEFT_STATUS_PERMISSION_DENIED, "WRITE", NULL);
  // Reading is allowed.
  WEFT_ASSERT_OK(weft_buffer_map_read(buffer, 0, &word, 4));
  WEFT_ASSERT_OK(weft_buffer_map_copy(buffer, 0, other, 0, 4));
  weft_buffer_release(other);
  weft_buffer_release(buffer);
}

static void map_device_local_only(void** state) {
  weft_cts_t* cts = mapping_cts(state);
  weft_buffer_t* buffer =
      allocate_with(cts, WEFT_MEMORY_TYPE_DEVICE_LOCAL, 0, 0, 256);
  weft_buffer_mapping_t mapping;
  weft_cts_assert_status_contains_both(
      weft_buffer_map_range(buffer, WEFT_MAPPING_MODE_SCOPED,
                            WEFT_MEMORY_ACCESS_READ, 0, 256, &mapping),
      WEFT_STATUS_PERMISSION_DENIED, "HOST_VISIBLE", "DEVICE_LOCAL");
  uint8_t byte = 0;
  weft_cts_assert_status_contains_both(
      weft_buffer_map_read(buffer, 0, &byte, 1), WEFT_STATUS_PERMISSION_DENIED,
      "HOST_VISIBLE", NULL);
  weft_buffer_release(buffer);
}

//===----------------------------------------------------------------------===//
// Transient buffers (queue_alloca / queue_dealloca)
//===----------------------------------------------------------------------===//

static void transient_buffer_lifetime(void** state) {
  weft_cts_t* cts = mapping_cts(state);
  weft_semaphore_t* gate = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* done = weft_cts_create_semaphore(cts, 0);
  const uint64_t one = 1;
  const uint64_t two = 2;
  weft_buffer_t* buffer = NULL;
  WEFT_ASSERT_OK(weft_device_queue_alloca(
      cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_cts_list1(&gate, &one),
      weft_cts_list1(&done, &one), (weft_buffer_params_t){0}, 4096, &buffer));
  assert_non_null(buffer);
  assert_int_equal(weft_buffer_byte_length(buffer), 4096);

  // The alloca waits on |gate|: no memory yet.
  uint32_t word = 0x0BADF00Du;
  weft_cts_assert_status_contains_both(
      weft_buffer_map_write(buffer, 0, &word, 4),
      WEFT_STATUS_FAILED_PRECONDITION, "4096 bytes", "before its alloca ran");

  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  WEFT_ASSERT_OK(weft_cts_wait(done, 1));
  WEFT_ASSERT_OK(weft_buffer_map_write(buffer, 4092, &word, 4));
  uint32_t read_back = 0;
  map_read(buffer, 4092, &read_back, 4);
  assert_int_equal(read_back, word);

  WEFT_ASSERT_OK(weft_device_queue_dealloca(
      cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_cts_list1(&done, &one),
      weft_cts_list1(&done, &two), buffer));
  WEFT_ASSERT_OK(weft_cts_wait(done, 2));
  weft_cts_assert_status_contains_both(
      weft_buffer_map_read(buffer, 0, &read_back, 4),
      WEFT_STATUS_FAILED_PRECONDITION, "4096 bytes", "after its dealloca ran");
  weft_buffer_release(buffer);
  weft_semaphore_release(gate);
  weft_semaphore_release(done);
}

int main(int argc, char** argv) {
  const struct CMUnitTest tests[] = {
      WEFT_CTS_CASE(map_whole),
      WEFT_CTS_CASE(map_subrange),
      WEFT_CTS_CASE(mapping_retains_buffer),
      WEFT_CTS_CASE(persistent_mapping_requires_usage),
      WEFT_CTS_CASE(flush_and_invalidate_ranges),
      WEFT_CTS_CASE(write_read_whole),
      WEFT_CTS_CASE(write_read_at_offsets),
      WEFT_CTS_CASE(fill_patterns_whole),
      WEFT_CTS_CASE(fill_patterns_at_offsets),
      WEFT_CTS_CASE(copy_between_buffers),
      WEFT_CTS_CASE(copy_within_buffer),
      WEFT_CTS_CASE(empty_ranges_are_noops),
      WEFT_CTS_CASE(map_offset_out_of_range),
      WEFT_CTS_CASE(map_past_end_by_length),
      WEFT_CTS_CASE(read_write_past_end),
      WEFT_CTS_CASE(fill_bad_pattern_length),
      WEFT_CTS_CASE(fill_misaligned),
      WEFT_CTS_CASE(map_without_mapping_usage),
      WEFT_CTS_CASE(write_to_read_only_buffer),
      WEFT_CTS_CASE(map_device_local_only),
      WEFT_CTS_CASE(transient_buffer_lifetime),
  };
  return weft_cts_run("buffer_mapping", tests, WEFT_CTS_COUNT(tests), argc,
                      argv);
}
