// CTS: buffers (allocation, parameters, ranges, subspans sharing their
// parent's memory). Contents go in and out through the queue (cts.h); what
// the host sees through a mapping is the buffer_mapping suite's.
#include <string.h>

#include "cts.h"

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

// Writes zeros over the whole buffer (drivers do not promise zeroed memory).
static void zero_buffer(weft_cts_t* cts, weft_buffer_t* buffer) {
  weft_cts_fill_buffer(cts, buffer, 0, WEFT_WHOLE_BUFFER, &(uint8_t){0}, 1);
}

//===----------------------------------------------------------------------===//
// Allocation and parameters
//===----------------------------------------------------------------------===//

static void allocate_sizes(void** state) {
  weft_cts_t* cts = *state;
  const weft_device_size_t sizes[] = {0, 1, 3, 63, 64, 65, 4096, 1 << 20};
  for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i) {
    weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, sizes[i]);
    assert_non_null(buffer);
    assert_int_equal(weft_buffer_byte_length(buffer), sizes[i]);
    assert_int_equal(weft_buffer_byte_offset(buffer), 0);
    assert_ptr_equal(weft_buffer_allocated_buffer(buffer), buffer);
    if (sizes[i] != 0) {
      uint8_t last = 0xA5;
      weft_cts_write_buffer(cts, buffer, sizes[i] - 1, &last, 1);
      uint8_t read_back = 0;
      weft_cts_read_buffer(cts, buffer, sizes[i] - 1, &read_back, 1);
      assert_int_equal(read_back, 0xA5);
    }
    weft_buffer_release(buffer);
  }
}

static void params_canonicalize(void** state) {
  (void)state;
  weft_buffer_params_t zero = {0};
  weft_buffer_params_t canonical = weft_buffer_params_canonicalize(zero);
  assert_int_equal(canonical.type, WEFT_MEMORY_TYPE_DEVICE_LOCAL |
                                       WEFT_MEMORY_TYPE_HOST_VISIBLE |
                                       WEFT_MEMORY_TYPE_HOST_COHERENT);
  assert_int_equal(canonical.access, WEFT_MEMORY_ACCESS_ALL);
  assert_int_equal(canonical.usage, WEFT_BUFFER_USAGE_DEFAULT);

  weft_buffer_params_t explicit_params = {WEFT_MEMORY_TYPE_HOST_VISIBLE,
                                          WEFT_MEMORY_ACCESS_READ,
                                          WEFT_BUFFER_USAGE_TRANSFER_SOURCE};
  weft_buffer_params_t kept = weft_buffer_params_canonicalize(explicit_params);
  assert_int_equal(kept.type, WEFT_MEMORY_TYPE_HOST_VISIBLE);
  assert_int_equal(kept.access, WEFT_MEMORY_ACCESS_READ);
  assert_int_equal(kept.usage, WEFT_BUFFER_USAGE_TRANSFER_SOURCE);
}

static void allocated_params_are_reported(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* defaults = weft_cts_allocate_buffer(cts, 128);
  assert_true(weft_buffer_memory_type(defaults) &
              WEFT_MEMORY_TYPE_HOST_VISIBLE);
  assert_int_equal(weft_buffer_allowed_access(defaults),
                   WEFT_MEMORY_ACCESS_ALL);
  assert_int_equal(
      weft_buffer_allowed_usage(defaults) & WEFT_BUFFER_USAGE_DEFAULT,
      WEFT_BUFFER_USAGE_DEFAULT);
  weft_buffer_release(defaults);

  weft_buffer_params_t narrow_params = {
      WEFT_MEMORY_TYPE_HOST_VISIBLE | WEFT_MEMORY_TYPE_HOST_COHERENT,
      WEFT_MEMORY_ACCESS_READ,
      WEFT_BUFFER_USAGE_TRANSFER_SOURCE | WEFT_BUFFER_USAGE_MAPPING_SCOPED};
  weft_buffer_t* narrow =
      weft_cts_allocate_buffer_with_params(cts, narrow_params, 256);
  assert_int_equal(weft_buffer_allowed_access(narrow), WEFT_MEMORY_ACCESS_READ);
  assert_int_equal(
      weft_buffer_allowed_usage(narrow) & WEFT_BUFFER_USAGE_TRANSFER_TARGET, 0);
  assert_true(weft_buffer_allowed_usage(narrow) &
              WEFT_BUFFER_USAGE_MAPPING_SCOPED);
  weft_buffer_release(narrow);
}

static void calculate_range_resolves_whole_buffer(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 100);
  weft_device_size_t length = 0;
  WEFT_ASSERT_OK(weft_buffer_calculate_range(buffer, 30, WEFT_WHOLE_BUFFER,
                                             "test", &length));
  assert_int_equal(length, 70);
  WEFT_ASSERT_OK(weft_buffer_calculate_range(buffer, 100, WEFT_WHOLE_BUFFER,
                                             "test", &length));
  assert_int_equal(length, 0);
  WEFT_ASSERT_OK(weft_buffer_calculate_range(buffer, 10, 90, "test", &length));
  assert_int_equal(length, 90);
  weft_cts_assert_status_contains_both(
      weft_buffer_calculate_range(buffer, 10, 91, "my_op", &length),
      WEFT_STATUS_OUT_OF_RANGE, "my_op: range [10, 101)", "(100 bytes)");
  weft_cts_assert_status_contains_both(
      weft_buffer_calculate_range(buffer, 101, WEFT_WHOLE_BUFFER, "my_op",
                                  &length),
      WEFT_STATUS_OUT_OF_RANGE, "offset 101", "(100 bytes)");
  // offset + length wraps around 2^64.
  weft_cts_assert_status_contains_both(
      weft_buffer_calculate_range(buffer, UINT64_MAX - 4, 16, "my_op", &length),
      WEFT_STATUS_OUT_OF_RANGE, "my_op", "overflows");
  weft_buffer_release(buffer);
}

//===----------------------------------------------------------------------===//
// Subspans
//===----------------------------------------------------------------------===//

static void subspan_shares_memory(void** state) {
  weft_cts_t* cts = *state;
  enum { kLength = 512 };
  weft_buffer_t* parent = weft_cts_allocate_buffer(cts, kLength);
  zero_buffer(cts, parent);
  weft_buffer_t* span = NULL;
  WEFT_ASSERT_OK(weft_buffer_subspan(parent, 128, 64, cts->allocator, &span));
  assert_int_equal(weft_buffer_byte_length(span), 64);
  assert_int_equal(weft_buffer_byte_offset(span), 128);
  assert_ptr_equal(weft_buffer_allocated_buffer(span), parent);
  assert_int_equal(weft_buffer_allowed_usage(span),
                   weft_buffer_allowed_usage(parent));

  // Writes through the subspan land in the parent at its offset...
  uint8_t data[64];
  weft_cts_make_bytes(data, sizeof(data), 9, 1);
  weft_cts_write_buffer(cts, span, 0, data, sizeof(data));
  uint8_t parent_view[64];
  weft_cts_read_buffer(cts, parent, 128, parent_view, sizeof(parent_view));
  weft_cts_assert_bytes_equal(parent_view, data, sizeof(data));
  // ...and writes to the parent are seen through the subspan.
  const uint16_t pattern = 0xBEEF;
  weft_cts_fill_buffer(cts, parent, 160, 8, &pattern, 2);
  uint8_t span_view[8];
  weft_cts_read_buffer(cts, span, 32, span_view, sizeof(span_view));
  for (int i = 0; i < 8; i += 2) {
    uint16_t value = 0;
    memcpy(&value, span_view + i, 2);
    assert_int_equal(value, 0xBEEF);
  }
  // The subspan keeps the parent alive.
  weft_buffer_release(parent);
  weft_cts_read_buffer(cts, span, 0, parent_view, 32);
  weft_cts_assert_bytes_equal(parent_view, data, 32);
  weft_buffer_release(span);
}

static void subspan_of_subspan(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* parent = weft_cts_allocate_buffer(cts, 1024);
  zero_buffer(cts, parent);
  weft_buffer_t* outer = NULL;
  weft_buffer_t* inner = NULL;
  WEFT_ASSERT_OK(weft_buffer_subspan(parent, 256, 512, cts->allocator, &outer));
  WEFT_ASSERT_OK(weft_buffer_subspan(outer, 64, WEFT_WHOLE_BUFFER,
                                     cts->allocator, &inner));
  assert_int_equal(weft_buffer_byte_offset(inner), 320);
  assert_int_equal(weft_buffer_byte_length(inner), 448);
  assert_ptr_equal(weft_buffer_allocated_buffer(inner), parent);

  const uint32_t word = 0x01020304u;
  weft_cts_fill_buffer(cts, inner, 444, 4, &word, 4);
  uint32_t read_back = 0;
  weft_cts_read_buffer(cts, parent, 764, &read_back, 4);
  assert_int_equal(read_back, word);
  weft_cts_read_buffer(cts, outer, 508, &read_back, 4);
  assert_int_equal(read_back, word);

  // Ranges are checked against the subspan, not the allocation.
  const uint8_t bytes[16] = {0};
  weft_cts_assert_status_contains_both(
      weft_device_queue_update(
          cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_semaphore_list_empty(),
          weft_semaphore_list_empty(), bytes, inner, 440, sizeof(bytes)),
      WEFT_STATUS_OUT_OF_RANGE, "[440, 456)", "448 bytes");
  weft_buffer_release(parent);
  weft_buffer_release(outer);
  weft_buffer_release(inner);
}

static void subspan_out_of_range(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* parent = weft_cts_allocate_buffer(cts, 256);
  weft_buffer_t* span = (weft_buffer_t*)(uintptr_t)1;
  weft_cts_assert_status_contains_both(
      weft_buffer_subspan(parent, 200, 100, cts->allocator, &span),
      WEFT_STATUS_OUT_OF_RANGE, "[200, 300)", "256 bytes");
  assert_null(span);
  weft_cts_assert_status_contains_both(
      weft_buffer_subspan(parent, 257, WEFT_WHOLE_BUFFER, cts->allocator,
                          &span),
      WEFT_STATUS_OUT_OF_RANGE, "257", "256 bytes");
  WEFT_ASSERT_OK(weft_buffer_subspan(parent, 256, 0, cts->allocator, &span));
  assert_int_equal(weft_buffer_byte_length(span), 0);
  weft_buffer_release(span);
  weft_buffer_t* outer = NULL;
  WEFT_ASSERT_OK(weft_buffer_subspan(parent, 16, 32, cts->allocator, &outer));
  weft_cts_assert_status_contains_both(
      weft_buffer_subspan(outer, 16, 17, cts->allocator, &span),
      WEFT_STATUS_OUT_OF_RANGE, "[16, 33)", "32 bytes");
  weft_buffer_release(outer);
  weft_buffer_release(parent);
}

int main(int argc, char** argv) {
  const struct CMUnitTest tests[] = {
      WEFT_CTS_CASE(allocate_sizes),
      WEFT_CTS_CASE(params_canonicalize),
      WEFT_CTS_CASE(allocated_params_are_reported),
      WEFT_CTS_CASE(calculate_range_resolves_whole_buffer),
      WEFT_CTS_CASE(subspan_shares_memory),
      WEFT_CTS_CASE(subspan_of_subspan),
      WEFT_CTS_CASE(subspan_out_of_range),
  };
  return weft_cts_run("buffer", tests, WEFT_CTS_COUNT(tests), argc, argv);
}
