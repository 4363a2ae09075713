// Tests for src/hal/gpu/op_result: the one rule by which every GPU driver
// decides the status an op ended with. On semaphores of a local-sync
// device (the rule reads only the HAL's semaphore state):
//  - a failed wait the device met beats the device's own error, and of
//    two the earliest failure wins whatever the list order;
//  - a failed wait the host met (no bit in the mask) is ignored: that
//    wait was reached before the issue;
//  - with no failed device wait the device's error, then a kernel's status
//    slot, else OK.
// cmocka needs these first.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
// clang-format off
#include <cmocka.h>
// clang-format on

#include <stdio.h>
#include <string.h>

#include "hal/gpu/kernel_status.h"
#include "hal/gpu/op_result.h"
#include "weft/weft.h"

#include "hal_test_util.h"

// |status| (consumed) has |code| and |needle| in its message.
static void assert_status(weft_status_t status, weft_status_code_t code,
                          const char* needle) {
  char message[512] = {0};
  weft_status_format(status, message, sizeof(message));
  const weft_status_code_t got = weft_status_code(status);
  weft_status_free(status);
  if (got != code || (needle && !strstr(message, needle))) {
    fail_msg("expected code %d with '%s', got %d: %s", (int)code,
             needle ? needle : "", (int)got, message);
  }
}

typedef struct fixture_t {
  weft_device_t* device;
  weft_semaphore_t* semaphores[3];
  uint64_t values[3];
  weft_queue_op_t op;
} fixture_t;

static void fixture_open(fixture_t* f) {
  memset(f, 0, sizeof(*f));
  ASSERT_OK(
      weft_device_create("local-sync", weft_allocator_system(), &f->device));
  for (int i = 0; i < 3; ++i) {
    ASSERT_OK(weft_device_create_semaphore(f->device, 0, &f->semaphores[i]));
    f->values[i] = 1;
  }
  f->op.kind = WEFT_QUEUE_OP_BARRIER;
  f->op.device = f->device;
  f->op.wait_list = (weft_semaphore_list_t){3, f->semaphores, f->values};
}

static void fixture_close(fixture_t* f) {
  for (int i = 0; i < 3; ++i) weft_semaphore_release(f->semaphores[i]);
  weft_device_release(f->device);
}

static weft_status_t device_error(void) {
  return WEFT_STATUS(INTERNAL, "the device's own error");
}

static void earliest_device_wait_failure_wins(void** state) {
  (void)state;
  for (int later_first = 0; later_first < 2; ++later_first) {
    fixture_t f;
    fixture_open(&f);
    // Entries 0 and 2 met on the device; 2 fails first when |later_first|.
    weft_semaphore_t* first = f.semaphores[later_first ? 2 : 0];
    weft_semaphore_t* second = f.semaphores[later_first ? 0 : 2];
    weft_semaphore_fail(first, WEFT_STATUS(ABORTED, "the first failure"));
    weft_semaphore_fail(second, WEFT_STATUS(UNAVAILABLE, "the second one"));
    assert_status(weft_gpu_op_result(&f.op, 0x5, device_error(), NULL, 0, 0),
                  WEFT_STATUS_ABORTED, "the first failure");
    fixture_close(&f);
  }
}

static void host_met_failures_are_ignored(void** state) {
  (void)state;
  fixture_t f;
  fixture_open(&f);
  weft_semaphore_fail(f.semaphores[1],
                      WEFT_STATUS(ABORTED, "after it was met"));
  // Entry 1 was met on the host: the device's error, else OK.
  assert_status(weft_gpu_op_result(&f.op, 0x5, device_error(), NULL, 0, 0),
                WEFT_STATUS_INTERNAL, "the device's own error");
  ASSERT_OK(weft_gpu_op_result(&f.op, 0x5, WEFT_OK, NULL, 0, 0));
  ASSERT_OK(weft_gpu_op_result(&f.op, 0, WEFT_OK, NULL, 0, 0));
  // Now met on the device: its failure.
  assert_status(weft_gpu_op_result(&f.op, 0x2, device_error(), NULL, 0, 0),
                WEFT_STATUS_ABORTED, "after it was met");
  fixture_close(&f);
}

// The kernels' slots come last: a code in one fails the op unless a
// device wait failed or the device erred; slots without a code are OK.
static void kernel_slots_come_last(void** state) {
  (void)state;
  fixture_t f;
  fixture_open(&f);
  for (int i = 0; i < 3; ++i) {
    ASSERT_OK(weft_semaphore_signal(f.semaphores[i], 1));
  }
  weft_gpu_kernel_status_t slots[2];
  memset(slots, 0, sizeof(slots));
  ASSERT_OK(
      weft_gpu_op_result(&f.op, 0x7, WEFT_OK, slots, sizeof(slots[0]), 2));
  slots[1].code = 7;
  slots[1].block[0] = 3;
  assert_status(
      weft_gpu_op_result(&f.op, 0x7, WEFT_OK, slots, sizeof(slots[0]), 2),
      WEFT_STATUS_INTERNAL, "code 7");
  assert_status(weft_gpu_op_result(&f.op, 0x7, device_error(), slots,
                                   sizeof(slots[0]), 2),
                WEFT_STATUS_INTERNAL, "the device's own error");
  weft_semaphore_fail(f.semaphores[2], WEFT_STATUS(DATA_LOSS, "upstream"));
  assert_status(weft_gpu_op_result(&f.op, 0x7, device_error(), slots,
                                   sizeof(slots[0]), 2),
                WEFT_STATUS_DATA_LOSS, "upstream");
  fixture_close(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(earliest_device_wait_failure_wins),
      cmocka_unit_test(host_met_failures_are_ignored),
      cmocka_unit_test(kernel_slots_come_last),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
