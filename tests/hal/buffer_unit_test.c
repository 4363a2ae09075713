// Unit tests: heap and transient buffers, the shared buffer validation
// helpers, the queue-layer transfer entry points, allocation failures.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
// clang-format off
#include <cmocka.h>
// clang-format on

#include "base/atomics.h"
#include "base/thread.h"
#include "hal/buffer_impl.h"
#include "hal/buffer_validation.h"
#include "hal/local/heap_buffer.h"
#include "hal/local/transient_buffer.h"

static void assert_ok(weft_status_t status) {
  if (!weft_status_is_ok(status)) {
    char text[1024];
    weft_status_format(status, text, sizeof(text));
    weft_status_free(status);
    fail_msg("unexpected error: %s", text);
  }
}

static void assert_status_text(weft_status_t status, weft_status_code_t code,
                               const char* needle) {
  char text[1024];
  weft_status_format(status, text, sizeof(text));
  weft_status_code_t actual = weft_status_code(status);
  weft_status_free(status);
  if (actual != code) {
    fail_msg("expected %s, got: %s", weft_status_code_string(code), text);
  }
  if (needle && !strstr(text, needle)) {
    fail_msg("expected '%s' in: %s", needle, text);
  }
}

static weft_buffer_t* heap_buffer(weft_buffer_params_t params,
                                  weft_device_size_t length) {
  weft_buffer_t* buffer = NULL;
  assert_ok(weft_heap_buffer_allocate(weft_allocator_system(), params, length,
                                      &buffer));
  return buffer;
}

//===----------------------------------------------------------------------===//
// Heap buffers
//===----------------------------------------------------------------------===//

static void heap_allocate_is_aligned_and_zeroed(void** state) {
  (void)state;
  const weft_device_size_t sizes[] = {0, 1, 7, 64, 1000, 65536};
  for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i) {
    weft_buffer_t* buffer = heap_buffer((weft_buffer_params_t){0}, sizes[i]);
    assert_true(weft_buffer_is_heap(buffer));
    assert_false(weft_buffer_is_transient(buffer));
    weft_buffer_mapping_t mapping;
    assert_ok(weft_buffer_map_range(buffer, WEFT_MAPPING_MODE_SCOPED,
                                    WEFT_MEMORY_ACCESS_READ, 0,
                                    WEFT_WHOLE_BUFFER, &mapping));
    assert_int_equal((uintptr_t)mapping.contents % WEFT_HEAP_BUFFER_ALIGNMENT,
                     0);
    for (size_t j = 0; j < sizes[i]; ++j) {
      assert_int_equal(mapping.contents[j], 0);
    }
    weft_buffer_unmap_range(&mapping);
    weft_buffer_release(buffer);
  }
}

static void heap_allocate_canonicalizes_params(void** state) {
  (void)state;
  weft_buffer_t* buffer = heap_buffer((weft_buffer_params_t){0}, 16);
  weft_buffer_params_t canonical =
      weft_buffer_params_canonicalize((weft_buffer_params_t){0});
  assert_int_equal(weft_buffer_memory_type(buffer), canonical.type);
  assert_int_equal(weft_buffer_allowed_access(buffer), canonical.access);
  assert_int_equal(weft_buffer_allowed_usage(buffer), canonical.usage);
  weft_buffer_release(buffer);
}

typedef struct release_record_t {
  int calls;
  void* host_ptr;
} release_record_t;

static void record_release(void* user_data, void* host_ptr) {
  release_record_t* record = (release_record_t*)user_data;
  ++record->calls;
  record->host_ptr = host_ptr;
}

static void heap_wrap_calls_release_once(void** state) {
  (void)state;
  // Deliberately unaligned host memory.
  uint8_t storage[100];
  uint8_t* host = storage + 3;
  memset(storage, 0x11, sizeof(storage));
  release_record_t record = {0, NULL};
  weft_buffer_t* buffer = NULL;
  assert_ok(weft_heap_buffer_wrap(weft_allocator_system(),
                                  (weft_buffer_params_t){0}, host, 90,
                                  record_release, &record, &buffer));
  assert_int_equal(weft_buffer_byte_length(buffer), 90);
  const uint8_t byte = 0x77;
  assert_ok(weft_buffer_map_fill(buffer, 10, 5, &byte, 1));
  assert_int_equal(host[10], 0x77);
  assert_int_equal(host[14], 0x77);
  assert_int_equal(host[15], 0x11);
  weft_buffer_t* span = NULL;
  assert_ok(weft_buffer_subspan(buffer, 4, 8, weft_allocator_system(), &span));
  weft_buffer_release(buffer);
  assert_int_equal(record.calls, 0);
  weft_buffer_release(span);
  assert_int_equal(record.calls, 1);
  assert_ptr_equal(record.host_ptr, host);

  assert_status_text(
      weft_heap_buffer_wrap(weft_allocator_system(), (weft_buffer_params_t){0},
                            NULL, 4, NULL, NULL, &buffer),
      WEFT_STATUS_INVALID_ARGUMENT, "NULL");
  assert_null(buffer);
}

static void heap_allocation_failures(void** state) {
  (void)state;
  weft_failing_allocator_t storage;
  weft_allocator_t failing =
      weft_failing_allocator_initialize(weft_allocator_system(), 0, &storage);
  weft_buffer_t* buffer = NULL;
  assert_status_text(weft_heap_buffer_allocate(failing,
                                               (weft_buffer_params_t){0}, 128,
                                               &buffer),
                     WEFT_STATUS_RESOURCE_EXHAUSTED, "128 bytes");
  assert_null(buffer);
  release_record_t record = {0, NULL};
  uint8_t host[8];
  assert_status_text(
      weft_heap_buffer_wrap(failing, (weft_buffer_params_t){0}, host, 8,
                            record_release, &record, &buffer),
      WEFT_STATUS_RESOURCE_EXHAUSTED, NULL);
  assert_int_equal(record.calls, 0);
  // A subspan allocation failure leaves the parent untouched.
  weft_buffer_t* parent = heap_buffer((weft_buffer_params_t){0}, 64);
  assert_status_text(weft_buffer_subspan(parent, 8, 8, failing, &buffer),
                     WEFT_STATUS_RESOURCE_EXHAUSTED, NULL);
  assert_null(buffer);
  weft_buffer_release(parent);
  // Sizes beyond the host fail cleanly.
  assert_status_text(weft_heap_buffer_allocate(weft_allocator_system(),
                                               (weft_buffer_params_t){0},
                                               UINT64_MAX - 8, &buffer),
                     WEFT_STATUS_RESOURCE_EXHAUSTED, NULL);
}

//===----------------------------------------------------------------------===//
// Validation helpers
//===----------------------------------------------------------------------===//

static void validation_messages(void** state) {
  (void)state;
  weft_buffer_params_t params = {
      WEFT_MEMORY_TYPE_DEVICE_LOCAL, WEFT_MEMORY_ACCESS_READ,
      WEFT_BUFFER_USAGE_TRANSFER_SOURCE | WEFT_BUFFER_USAGE_MAPPING_SCOPED};
  weft_buffer_t* buffer = heap_buffer(params, 128);
  assert_ok(weft_buffer_validate_usage(
      buffer, WEFT_BUFFER_USAGE_TRANSFER_SOURCE, "queue_copy"));
  assert_status_text(
      weft_buffer_validate_usage(buffer,
                                 WEFT_BUFFER_USAGE_TRANSFER_TARGET |
                                     WEFT_BUFFER_USAGE_TRANSFER_SOURCE,
                                 "queue_fill"),
      WEFT_STATUS_PERMISSION_DENIED,
      "queue_fill: buffer allows usage TRANSFER_SOURCE|MAPPING_SCOPED but "
      "TRANSFER_TARGET is required");
  assert_status_text(
      weft_buffer_validate_access(
          buffer, WEFT_MEMORY_ACCESS_WRITE | WEFT_MEMORY_ACCESS_DISCARD, "op"),
      WEFT_STATUS_PERMISSION_DENIED,
      "op: buffer allows READ but WRITE|DISCARD was requested");
  assert_status_text(weft_buffer_validate_access(buffer, 0, "op"),
                     WEFT_STATUS_INVALID_ARGUMENT, "no memory access");
  assert_status_text(weft_buffer_validate_memory_type(
                         buffer, WEFT_MEMORY_TYPE_HOST_VISIBLE, "op"),
                     WEFT_STATUS_PERMISSION_DENIED,
                     "memory type DEVICE_LOCAL but HOST_VISIBLE is required");
  weft_device_size_t length = 0;
  assert_status_text(
      weft_buffer_validate_range(buffer, 256, 256, "queue_fill", &length),
      WEFT_STATUS_OUT_OF_RANGE,
      "queue_fill: range [256, 512) is past the end of the buffer (128 "
      "bytes)");
  assert_ok(weft_buffer_validate_fill_pattern(8, 16, 4, "op"));
  assert_status_text(weft_buffer_validate_fill_pattern(8, 16, 3, "op"),
                     WEFT_STATUS_INVALID_ARGUMENT, "pattern length 3");

  char text[WEFT_BUFFER_BITS_FORMAT_CAPACITY];
  assert_string_equal(weft_memory_access_format(0, text, sizeof(text)),
                      "NONE");
  assert_string_equal(
      weft_buffer_usage_format(WEFT_BUFFER_USAGE_DEFAULT, text, sizeof(text)),
      "TRANSFER_SOURCE|TRANSFER_TARGET|DISPATCH_STORAGE|MAPPING_SCOPED|"
      "MAPPING_PERSISTENT");
  assert_string_equal(weft_memory_type_format(1u << 7, text, sizeof(text)),
                      "0x80");
  // Tiny capacities truncate without overflowing.
  char tiny[4];
  weft_buffer_usage_format(WEFT_BUFFER_USAGE_DEFAULT, tiny, sizeof(tiny));
  assert_int_equal(strlen(tiny), 3);
  weft_buffer_release(buffer);
}

static void copy_overlap_through_subspans(void** state) {
  (void)state;
  weft_buffer_t* root = heap_buffer((weft_buffer_params_t){0}, 256);
  weft_buffer_t* other = heap_buffer((weft_buffer_params_t){0}, 256);
  weft_buffer_t* a = NULL;
  weft_buffer_t* b = NULL;
  assert_ok(weft_buffer_subspan(root, 0, 128, weft_allocator_system(), &a));
  assert_ok(weft_buffer_subspan(root, 64, 128, weft_allocator_system(), &b));
  // a[64, 96) is root[64, 96); b[0, 32) is root[64, 96).
  assert_status_text(
      weft_buffer_validate_copy_overlap(a, 64, b, 0, 32, "queue_copy"),
      WEFT_STATUS_INVALID_ARGUMENT, "at [64, 96) and [64, 96)");
  assert_ok(weft_buffer_validate_copy_overlap(a, 0, b, 0, 64, "queue_copy"));
  assert_ok(weft_buffer_validate_copy_overlap(a, 0, other, 0, 128, "op"));
  assert_ok(weft_buffer_validate_copy_overlap(a, 64, b, 0, 0, "op"));
  weft_buffer_release(a);
  weft_buffer_release(b);
  weft_buffer_release(other);
  weft_buffer_release(root);
}

// The queue layer's entry points skip mapping usage and memory type but
// not ranges.
static void transfer_entry_points_skip_mapping_checks(void** state) {
  (void)state;
  weft_buffer_params_t params = {WEFT_MEMORY_TYPE_DEVICE_LOCAL, 0,
                                 WEFT_BUFFER_USAGE_TRANSFER};
  weft_buffer_t* a = heap_buffer(params, 64);
  weft_buffer_t* b = heap_buffer(params, 64);
  const uint16_t pattern = 0x1234;
  uint8_t bytes[64];
  assert_status_text(weft_buffer_map_fill(a, 0, 64, &pattern, 2),
                     WEFT_STATUS_PERMISSION_DENIED, NULL);
  assert_ok(
      weft_buffer_map_fill_unchecked(a, 0, 64, &pattern, 2, "queue_fill"));
  assert_ok(weft_buffer_map_copy_unchecked(a, 0, b, 0, 64, "queue_copy"));
  assert_ok(weft_buffer_map_read_unchecked(b, 0, bytes, 64, "queue_read"));
  for (int i = 0; i < 64; i += 2) {
    uint16_t value = 0;
    memcpy(&value, bytes + i, 2);
    assert_int_equal(value, 0x1234);
  }
  assert_ok(weft_buffer_map_write_unchecked(b, 60, bytes, 4, "queue_update"));
  assert_status_text(
      weft_buffer_map_write_unchecked(b, 61, bytes, 4, "queue_update"),
      WEFT_STATUS_OUT_OF_RANGE, "queue_update: range [61, 65)");
  assert_status_text(
      weft_buffer_map_fill_unchecked(a, 1, 4, &pattern, 2, "queue_fill"),
      WEFT_STATUS_INVALID_ARGUMENT, "queue_fill: offset 1");
  assert_status_text(
      weft_buffer_map_copy_unchecked(a, 0, a, 8, 16, "queue_copy"),
      WEFT_STATUS_INVALID_ARGUMENT, "queue_copy");
  weft_buffer_mapping_t mapping;
  assert_ok(weft_buffer_map_range_unchecked(
      b, WEFT_MEMORY_ACCESS_WRITE, 8, WEFT_WHOLE_BUFFER, "dispatch", &mapping));
  assert_int_equal(mapping.byte_length, 56);
  weft_buffer_unmap_range(&mapping);
  weft_buffer_release(a);
  weft_buffer_release(b);
}

//===----------------------------------------------------------------------===//
// Transient buffers
//===----------------------------------------------------------------------===//

static void transient_lifecycle(void** state) {
  (void)state;
  weft_buffer_t* buffer = NULL;
  assert_ok(weft_transient_buffer_create(weft_allocator_system(),
                                         (weft_buffer_params_t){0}, 1000,
                                         &buffer));
  assert_true(weft_buffer_is_transient(buffer));
  assert_false(weft_buffer_is_heap(buffer));
  assert_false(weft_transient_buffer_is_committed(buffer));
  weft_buffer_t* span = NULL;
  assert_ok(
      weft_buffer_subspan(buffer, 100, 100, weft_allocator_system(), &span));
  assert_true(weft_buffer_is_transient(span));

  uint8_t bytes[16] = {0};
  assert_status_text(weft_buffer_map_read(span, 0, bytes, 16),
                     WEFT_STATUS_FAILED_PRECONDITION,
                     "transient buffer (1000 bytes) used before its alloca "
                     "ran");
  assert_status_text(weft_transient_buffer_decommit(buffer),
                     WEFT_STATUS_FAILED_PRECONDITION, "before its alloca");
  assert_status_text(weft_transient_buffer_commit(span),
                     WEFT_STATUS_INVALID_ARGUMENT, "not a transient");
  // Zero-length operations need no memory.
  assert_ok(weft_buffer_map_write(buffer, 0, bytes, 0));

  assert_ok(weft_transient_buffer_commit(buffer));
  assert_true(weft_transient_buffer_is_committed(span));
  assert_status_text(weft_transient_buffer_commit(buffer),
                     WEFT_STATUS_FAILED_PRECONDITION, "already committed");
  weft_buffer_mapping_t mapping;
  assert_ok(weft_buffer_map_range(buffer, WEFT_MAPPING_MODE_SCOPED,
                                  WEFT_MEMORY_ACCESS_WRITE, 0,
                                  WEFT_WHOLE_BUFFER, &mapping));
  assert_int_equal((uintptr_t)mapping.contents % WEFT_HEAP_BUFFER_ALIGNMENT,
                   0);
  memset(mapping.contents, 0x3C, 1000);
  weft_buffer_unmap_range(&mapping);
  assert_ok(weft_buffer_map_read(span, 0, bytes, 16));
  assert_int_equal(bytes[15], 0x3C);

  assert_ok(weft_transient_buffer_decommit(buffer));
  assert_status_text(weft_buffer_map_read(span, 0, bytes, 16),
                     WEFT_STATUS_FAILED_PRECONDITION,
                     "transient buffer (1000 bytes) used after its dealloca "
                     "ran");
  assert_status_text(weft_transient_buffer_decommit(buffer),
                     WEFT_STATUS_FAILED_PRECONDITION, "after its dealloca");
  assert_status_text(weft_transient_buffer_commit(buffer),
                     WEFT_STATUS_FAILED_PRECONDITION, "already decommitted");
  weft_buffer_release(span);
  weft_buffer_release(buffer);

  // Released while committed: the memory goes with it.
  assert_ok(weft_transient_buffer_create(weft_allocator_system(),
                                         (weft_buffer_params_t){0}, 64,
                                         &buffer));
  assert_ok(weft_transient_buffer_commit(buffer));
  weft_buffer_release(buffer);

  // Zero bytes commit without memory.
  assert_ok(weft_transient_buffer_create(weft_allocator_system(),
                                         (weft_buffer_params_t){0}, 0,
                                         &buffer));
  assert_ok(weft_transient_buffer_commit(buffer));
  assert_ok(weft_buffer_map_range(buffer, WEFT_MAPPING_MODE_SCOPED,
                                  WEFT_MEMORY_ACCESS_READ, 0, 0, &mapping));
  weft_buffer_unmap_range(&mapping);
  assert_ok(weft_transient_buffer_decommit(buffer));
  weft_buffer_release(buffer);
}

static void transient_commit_failure_can_retry(void** state) {
  (void)state;
  weft_failing_allocator_t storage;
  // Allocation 0 (the object) succeeds, 1 (the memory) fails.
  weft_allocator_t failing =
      weft_failing_allocator_initialize(weft_allocator_system(), 1, &storage);
  weft_buffer_t* buffer = NULL;
  assert_ok(weft_transient_buffer_create(failing, (weft_buffer_params_t){0},
                                         4096, &buffer));
  assert_status_text(weft_transient_buffer_commit(buffer),
                     WEFT_STATUS_RESOURCE_EXHAUSTED, "4096 bytes");
  assert_false(weft_transient_buffer_is_committed(buffer));
  uint8_t byte = 0;
  assert_status_text(weft_buffer_map_read(buffer, 0, &byte, 1),
                     WEFT_STATUS_FAILED_PRECONDITION, "before its alloca");
  storage.fail_at = -1;
  assert_ok(weft_transient_buffer_commit(buffer));
  assert_ok(weft_buffer_map_read(buffer, 4095, &byte, 1));
  assert_ok(weft_transient_buffer_decommit(buffer));
  weft_buffer_release(buffer);
}

typedef struct transient_race_t {
  weft_buffer_t* buffer;
  weft_atomic_uint32_t committed;
  uint32_t seen;
} transient_race_t;

static int transient_reader_main(void* user_data) {
  transient_race_t* race = (transient_race_t*)user_data;
  // Acquire: the writer's data happens-before our read.
  while (!weft_atomic_load(&race->committed, memory_order_acquire)) {
    weft_thread_yield();
  }
  weft_status_t status =
      weft_buffer_map_read(race->buffer, 60, &race->seen, sizeof(race->seen));
  if (!weft_status_is_ok(status)) race->seen = 0;
  weft_status_ignore(status);
  return 0;
}

// Commit and write on one thread, map on another: clean under TSan.
static void transient_commit_publishes_memory(void** state) {
  (void)state;
  for (int round = 0; round < 50; ++round) {
    transient_race_t race;
    race.seen = 0;
    atomic_init(&race.committed, 0);
    assert_ok(weft_transient_buffer_create(weft_allocator_system(),
                                           (weft_buffer_params_t){0}, 64,
                                           &race.buffer));
    weft_thread_t* reader = NULL;
    assert_ok(weft_thread_create(transient_reader_main, &race, NULL,
                                 weft_allocator_system(), &reader));
    assert_ok(weft_transient_buffer_commit(race.buffer));
    const uint32_t value = 0xC0FFEE00u + (uint32_t)round;
    assert_ok(weft_buffer_map_write(race.buffer, 60, &value, sizeof(value)));
    // Release: publishes the commit and the write to the reader.
    weft_atomic_store(&race.committed, 1, memory_order_release);
    weft_thread_join(reader);
    assert_int_equal(race.seen, value);
    assert_ok(weft_transient_buffer_decommit(race.buffer));
    weft_buffer_release(race.buffer);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(heap_allocate_is_aligned_and_zeroed),
      cmocka_unit_test(heap_allocate_canonicalizes_params),
      cmocka_unit_test(heap_wrap_calls_release_once),
      cmocka_unit_test(heap_allocation_failures),
      cmocka_unit_test(validation_messages),
      cmocka_unit_test(copy_overlap_through_subspans),
      cmocka_unit_test(transfer_entry_points_skip_mapping_checks),
      cmocka_unit_test(transient_lifecycle),
      cmocka_unit_test(transient_commit_failure_can_retry),
      cmocka_unit_test(transient_commit_publishes_memory),
  };
  return cmocka_run_group_tests_name("hal.buffer", tests, NULL, NULL);
}
