// Tests for src/hal/gpu/staged_transfer: file <-> staging ring <-> "device
// memory" for GPU drivers. The pretend device defers every copy until the
// piece is waited on (or the test drains it), as a GPU's copy engine would
// run behind the host: a piece reused before its copy finished would show
// as wrong bytes.
// cmocka needs these first.
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

#include "hal/gpu/staged_transfer.h"
#include "weft/file.h"

#include "hal_test_util.h"

enum { kPieceSize = 1000, kPieceCount = 3 };

// A copy queued on a piece and not yet run.
typedef struct pending_copy_t {
  bool queued;
  bool to_buffer;
  uint64_t buffer_offset;
  uint64_t length;
} pending_copy_t;

typedef struct fake_device_t {
  uint8_t staging[kPieceSize * kPieceCount];
  uint8_t* memory;  // the op's buffer
  pending_copy_t pending[kPieceCount];
  uint32_t copies;
  uint32_t max_queued;  // the most copies queued at once
} fake_device_t;

static void run_copy(fake_device_t* device, uint32_t piece) {
  pending_copy_t* copy = &device->pending[piece];
  if (!copy->queued) return;
  uint8_t* staging = device->staging + piece * kPieceSize;
  uint8_t* memory = device->memory + copy->buffer_offset;
  if (copy->to_buffer) {
    memcpy(memory, staging, copy->length);
  } else {
    memcpy(staging, memory, copy->length);
  }
  copy->queued = false;
}

static weft_status_t fake_copy(void* self, uint32_t piece, bool to_buffer,
                               uint64_t buffer_offset, uint64_t length) {
  fake_device_t* device = (fake_device_t*)self;
  // The utility must wait for a piece before queuing on it again.
  assert_false(device->pending[piece].queued);
  assert_true(length <= kPieceSize);
  device->pending[piece] =
      (pending_copy_t){true, to_buffer, buffer_offset, length};
  ++device->copies;
  uint32_t queued = 0;
  for (uint32_t i = 0; i < kPieceCount; ++i) {
    queued += device->pending[i].queued;
  }
  if (queued > device->max_queued) device->max_queued = queued;
  return WEFT_OK;
}

static weft_status_t fake_wait(void* self, uint32_t piece) {
  run_copy((fake_device_t*)self, piece);
  return WEFT_OK;
}

static void fake_drain(fake_device_t* device) {
  for (uint32_t i = 0; i < kPieceCount; ++i) run_copy(device, i);
}

// A temporary file holding |length| bytes of a pattern (or empty).
static weft_file_t* temp_file(uint64_t length, char* path, size_t capacity) {
  snprintf(path, capacity, "/tmp/weft-staged-XXXXXX");
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  for (uint64_t i = 0; i < length; ++i) {
    const uint8_t byte = (uint8_t)(i * 7 + 3);
    assert_int_equal(write(fd, &byte, 1), 1);
  }
  close(fd);
  weft_file_t* file = NULL;
  ASSERT_OK(weft_file_open(path, WEFT_FILE_ACCESS_READ | WEFT_FILE_ACCESS_WRITE,
                           0, weft_allocator_system(), &file));
  return file;
}

static weft_queue_op_t file_op(weft_queue_op_kind_t kind, weft_file_t* file,
                               uint64_t file_offset, uint64_t length) {
  weft_queue_op_t op;
  memset(&op, 0, sizeof(op));
  op.kind = kind;
  op.file.file = file;
  op.file.file_offset = file_offset;
  op.file.length = length;
  return op;
}

static weft_proactor_t* make_proactor(void) {
  weft_proactor_options_t options;
  weft_proactor_options_initialize(&options);
  options.backend = WEFT_PROACTOR_BACKEND_THREADS;
  options.thread_count = 2;
  weft_proactor_t* proactor = NULL;
  ASSERT_OK(weft_proactor_create(&options, weft_allocator_system(),
                                 &proactor));
  return proactor;
}

// Reads |length| bytes at |offset| of a file into device memory and writes
// them back to another offset, with and without a proactor.
static void round_trip(uint64_t offset, uint64_t length, bool use_proactor) {
  char path[64];
  const uint64_t file_length = offset + length;
  weft_file_t* file = temp_file(file_length, path, sizeof(path));
  weft_proactor_t* proactor = use_proactor ? make_proactor() : NULL;
  fake_device_t device;
  memset(&device, 0, sizeof(device));
  device.memory = calloc(1, length + 1);
  assert_non_null(device.memory);
  const weft_staging_ring_t ring = {device.staging, kPieceSize, kPieceCount};
  const weft_staged_transfer_device_t hooks = {&device, fake_copy, fake_wait};
  weft_queue_op_t read = file_op(WEFT_QUEUE_OP_READ, file, offset, length);
  ASSERT_OK(weft_staged_transfer_run(&ring, &hooks, proactor, &read));
  // The last copies are queued, not done: the driver orders what follows.
  // Write it after the end of what was there, with the read's last copies
  // still queued on their pieces (the write must wait for them before it
  // queues its own: fake_copy checks).
  const uint64_t pieces = (length + kPieceSize - 1) / kPieceSize;
  assert_int_equal(device.copies, pieces);
  weft_queue_op_t write =
      file_op(WEFT_QUEUE_OP_WRITE, file, file_length, length);
  ASSERT_OK(weft_staged_transfer_run(&ring, &hooks, proactor, &write));
  fake_drain(&device);
  for (uint64_t i = 0; i < length; ++i) {
    assert_int_equal(device.memory[i], (uint8_t)((offset + i) * 7 + 3));
  }
  assert_int_equal(device.copies, 2 * pieces);
  if (pieces >= kPieceCount) assert_int_equal(device.max_queued, kPieceCount);
  assert_int_equal(weft_file_length(file), file_length + length);
  uint8_t* back = malloc(length + 1);
  assert_non_null(back);
  ASSERT_OK(weft_file_read(file, file_length, back, length));
  assert_memory_equal(back, device.memory, length);
  free(back);
  free(device.memory);
  if (proactor) weft_proactor_destroy(proactor);
  weft_file_release(file);
  unlink(path);
}

static void sizes_without_proactor(void** state) {
  (void)state;
  const uint64_t lengths[] = {0,    1, kPieceSize - 1, kPieceSize,
                             3500, 20 * kPieceSize + 17};
  for (size_t i = 0; i < sizeof(lengths) / sizeof(lengths[0]); ++i) {
    round_trip(5, lengths[i], false);
  }
}

static void sizes_with_proactor(void** state) {
  (void)state;
  const uint64_t lengths[] = {0,    1, kPieceSize - 1, kPieceSize,
                             3500, 20 * kPieceSize + 17};
  for (size_t i = 0; i < sizeof(lengths) / sizeof(lengths[0]); ++i) {
    round_trip(5, lengths[i], true);
  }
}

// A file shorter than the read: OUT_OF_RANGE naming the file, and nothing
// left in flight on the staging.
static void short_read_fails_naming_the_file(void** state) {
  (void)state;
  for (int use_proactor = 0; use_proactor < 2; ++use_proactor) {
    char path[64];
    weft_file_t* file = temp_file(2500, path, sizeof(path));
    weft_proactor_t* proactor = use_proactor ? make_proactor() : NULL;
    fake_device_t device;
    memset(&device, 0, sizeof(device));
    device.memory = calloc(1, 6000);
    const weft_staging_ring_t ring = {device.staging, kPieceSize, kPieceCount};
    const weft_staged_transfer_device_t hooks = {&device, fake_copy,
                                                 fake_wait};
    weft_queue_op_t read = file_op(WEFT_QUEUE_OP_READ, file, 0, 6000);
    weft_status_t status =
        weft_staged_transfer_run(&ring, &hooks, proactor, &read);
    char message[512];
    weft_status_format(status, message, sizeof(message));
    assert_int_equal(weft_status_code(status), WEFT_STATUS_OUT_OF_RANGE);
    assert_non_null(strstr(message, path));
    weft_status_free(status);
    fake_drain(&device);
    // What was there arrived before the failure.
    for (uint64_t i = 0; i < 2000; ++i) {
      assert_int_equal(device.memory[i], (uint8_t)(i * 7 + 3));
    }
    free(device.memory);
    if (proactor) weft_proactor_destroy(proactor);
    weft_file_release(file);
    unlink(path);
  }
}

// A memory file takes the synchronous path even with a proactor.
static void memory_file(void** state) {
  (void)state;
  uint8_t contents[2345];
  for (size_t i = 0; i < sizeof(contents); ++i) contents[i] = (uint8_t)i;
  weft_file_t* file = NULL;
  ASSERT_OK(weft_file_wrap_memory(WEFT_FILE_ACCESS_READ, contents,
                                  sizeof(contents), NULL, NULL,
                                  weft_allocator_system(), &file));
  weft_proactor_t* proactor = make_proactor();
  fake_device_t device;
  memset(&device, 0, sizeof(device));
  device.memory = calloc(1, sizeof(contents));
  const weft_staging_ring_t ring = {device.staging, kPieceSize, kPieceCount};
  const weft_staged_transfer_device_t hooks = {&device, fake_copy, fake_wait};
  weft_queue_op_t read =
      file_op(WEFT_QUEUE_OP_READ, file, 0, sizeof(contents));
  ASSERT_OK(weft_staged_transfer_run(&ring, &hooks, proactor, &read));
  fake_drain(&device);
  assert_memory_equal(device.memory, contents, sizeof(contents));
  free(device.memory);
  weft_proactor_destroy(proactor);
  weft_file_release(file);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(sizes_without_proactor),
      cmocka_unit_test(sizes_with_proactor),
      cmocka_unit_test(short_read_fails_naming_the_file),
      cmocka_unit_test(memory_file),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
