// CTS: objects from elsewhere. Buffers, executables and semaphores made the
// way another driver would make them (through the HAL's implementation
// headers) meet the device under test: memory or code of another domain is
// rejected at submit and record, naming both sides, with the signals left
// alone; host-visible memory of another domain is reached through its own
// mapping; a driver's own semaphore type works on every device.
#include "hal/domain.h"

#include <stdlib.h>
#include <string.h>

#include "cts.h"
#include "hal/buffer_impl.h"
#include "hal/executable_impl.h"
#include "hal/semaphore_impl.h"

//===----------------------------------------------------------------------===//
// A foreign buffer: memory of a domain of its own, mapped (when it says it
// is host-visible) onto a static array.
//===----------------------------------------------------------------------===//

typedef struct foreign_buffer_t {
  weft_buffer_t base;
  uint8_t memory[256];
  int map_count;
} foreign_buffer_t;

static void foreign_buffer_destroy(weft_buffer_t* buffer) { free(buffer); }

static weft_status_t foreign_buffer_map_range(weft_buffer_t* buffer,
                                              weft_mapping_mode_t mode,
                                              weft_memory_access_t access,
                                              weft_device_size_t offset,
                                              weft_device_size_t length,
                                              void** out_host_ptr) {
  foreign_buffer_t* foreign = (foreign_buffer_t*)buffer;
  ++foreign->map_count;
  *out_host_ptr = foreign->memory + offset;
  return WEFT_OK;
}

static void foreign_buffer_unmap_range(weft_buffer_t* buffer,
                                       weft_device_size_t offset,
                                       weft_device_size_t length,
                                       void* host_ptr) {}

static weft_status_t foreign_buffer_no_op(weft_buffer_t* buffer,
                                          weft_device_size_t offset,
                                          weft_device_size_t length) {
  return WEFT_OK;
}

static const weft_buffer_vtable_t kForeignBufferVtable = {
    .destroy = foreign_buffer_destroy,
    .map_range = foreign_buffer_map_range,
    .unmap_range = foreign_buffer_unmap_range,
    .flush_range = foreign_buffer_no_op,
    .invalidate_range = foreign_buffer_no_op,
};

static foreign_buffer_t* create_foreign_buffer(bool host_visible) {
  foreign_buffer_t* buffer = calloc(1, sizeof(*buffer));
  assert_non_null(buffer);
  weft_buffer_params_t params = {0};
  const weft_buffer_placement_t placement = {
      .domain = weft_domain_next(),
      .flags = host_visible ? WEFT_BUFFER_PLACEMENT_HOST_VISIBLE
                            : WEFT_BUFFER_PLACEMENT_NONE,
  };
  weft_buffer_initialize(&kForeignBufferVtable, weft_allocator_system(), params,
                         placement, sizeof(buffer->memory), &buffer->base);
  return buffer;
}

//===----------------------------------------------------------------------===//
// A foreign executable: one kernel signature, code that runs elsewhere.
//===----------------------------------------------------------------------===//

static const weft_kernel_info_t kForeignKernels[] = {
    {"foreign_kernel", 1, 0},
};

static void foreign_executable_destroy(weft_executable_t* executable) {
  free(executable);
}

static const weft_executable_vtable_t kForeignExecutableVtable = {
    .destroy = foreign_executable_destroy,
};

static weft_executable_t* create_foreign_executable(void) {
  weft_executable_t* executable = calloc(1, sizeof(*executable));
  assert_non_null(executable);
  weft_executable_initialize(&kForeignExecutableVtable, weft_allocator_system(),
                             weft_domain_next(), WEFT_EXECUTABLE_FORMAT_NONE,
                             "foreign_library", 1, kForeignKernels, executable);
  return executable;
}

//===----------------------------------------------------------------------===//
// Cases
//===----------------------------------------------------------------------===//

static void unreachable_buffer_rejected_at_submit(void** state) {
  weft_cts_t* cts = *state;
  foreign_buffer_t* foreign = create_foreign_buffer(/*host_visible=*/false);
  weft_buffer_t* local = weft_cts_allocate_buffer(cts, 256);
  weft_semaphore_t* signal = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1;
  const uint32_t pattern = 7;
  weft_cts_assert_status_contains(
      weft_device_queue_fill(
          cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_semaphore_list_empty(),
          weft_cts_list1(&signal, &one), &foreign->base, 0, 16, &pattern, 4),
      WEFT_STATUS_INVALID_ARGUMENT, "cannot reach");
  weft_cts_assert_status_contains(
      weft_device_queue_copy(
          cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_semaphore_list_empty(),
          weft_cts_list1(&signal, &one), local, 0, &foreign->base, 0, 16),
      WEFT_STATUS_INVALID_ARGUMENT, "for the target");
  // The message names the device that cannot reach it.
  char needle[256];
  snprintf(needle, sizeof(needle), "device '%s'", weft_device_id(cts->device));
  weft_cts_assert_status_contains(
      weft_device_queue_update(
          cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_semaphore_list_empty(),
          weft_cts_list1(&signal, &one), &pattern, &foreign->base, 0, 4),
      WEFT_STATUS_INVALID_ARGUMENT, needle);
  // Nothing ran and nothing was signalled.
  assert_int_equal(weft_cts_query_value(signal), 0);
  assert_int_equal(foreign->map_count, 0);
  weft_semaphore_release(signal);
  weft_buffer_release(local);
  weft_buffer_release(&foreign->base);
}

static void unreachable_buffer_rejected_at_record_and_execute(void** state) {
  weft_cts_t* cts = *state;
  foreign_buffer_t* foreign = create_foreign_buffer(/*host_visible=*/false);
  weft_command_buffer_t* command_buffer = NULL;
  WEFT_ASSERT_OK(weft_command_buffer_create(
      cts->device, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, WEFT_COMMAND_CATEGORY_ANY,
      /*binding_capacity=*/1, &command_buffer));
  WEFT_ASSERT_OK(weft_command_buffer_begin(command_buffer));
  const uint32_t pattern = 7;
  weft_cts_assert_status_contains(
      weft_command_buffer_fill(command_buffer,
                               weft_make_buffer_ref(&foreign->base, 0, 16),
                               &pattern, 4),
      WEFT_STATUS_INVALID_ARGUMENT, "cannot reach");
  // An indirect fill records; the buffer bound at execute is checked there.
  weft_buffer_ref_t slot_ref = {NULL, 0, 0, 16};
  weft_status_free(weft_command_buffer_end(command_buffer));
  weft_command_buffer_release(command_buffer);
  WEFT_ASSERT_OK(weft_command_buffer_create(
      cts->device, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, WEFT_COMMAND_CATEGORY_ANY,
      /*binding_capacity=*/1, &command_buffer));
  WEFT_ASSERT_OK(weft_command_buffer_begin(command_buffer));
  WEFT_ASSERT_OK(
      weft_command_buffer_fill(command_buffer, slot_ref, &pattern, 4));
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  weft_semaphore_t* signal = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1;
  weft_buffer_binding_t binding = {&foreign->base, 0, 256};
  weft_binding_table_t table = {1, &binding};
  weft_cts_assert_status_contains(
      weft_device_queue_execute(
          cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_semaphore_list_empty(),
          weft_cts_list1(&signal, &one), command_buffer, table),
      WEFT_STATUS_INVALID_ARGUMENT, "binding table entry 0");
  assert_int_equal(weft_cts_query_value(signal), 0);
  assert_int_equal(foreign->map_count, 0);
  weft_semaphore_release(signal);
  weft_command_buffer_release(command_buffer);
  weft_buffer_release(&foreign->base);
}

// The host domain reaches host-visible memory of any domain, through that
// memory's own mapping.
static void host_visible_foreign_buffer_used_through_its_mapping(void** state) {
  weft_cts_t* cts = *state;
  weft_cts_require(cts, WEFT_CTS_FEATURE_HOST_DOMAIN);
  foreign_buffer_t* foreign = create_foreign_buffer(/*host_visible=*/true);
  weft_semaphore_t* signal = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1;
  const uint8_t pattern = 0x5a;
  WEFT_ASSERT_OK(weft_device_queue_fill(
      cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&signal, &one), &foreign->base, 8, 16, &pattern, 1));
  WEFT_ASSERT_OK(weft_cts_wait(signal, 1));
  assert_true(foreign->map_count >= 1);
  for (int i = 0; i < 256; ++i) {
    assert_int_equal(foreign->memory[i], (i >= 8 && i < 24) ? 0x5a : 0);
  }
  weft_semaphore_release(signal);
  weft_buffer_release(&foreign->base);
}

static void foreign_executable_rejected(void** state) {
  weft_cts_t* cts = *state;
  weft_executable_t* executable = create_foreign_executable();
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 64);
  weft_semaphore_t* signal = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1;
  uint32_t workgroups[3] = {1, 1, 1};
  weft_buffer_ref_t binding = weft_make_buffer_ref(buffer, 0, 64);
  weft_cts_assert_status_contains(
      weft_device_queue_dispatch(cts->device, WEFT_QUEUE_AFFINITY_ANY,
                                 weft_semaphore_list_empty(),
                                 weft_cts_list1(&signal, &one), executable, 0,
                                 workgroups, 0, NULL, 1, &binding),
      WEFT_STATUS_INVALID_ARGUMENT, "'foreign_library'");
  assert_int_equal(weft_cts_query_value(signal), 0);
  weft_command_buffer_t* command_buffer = NULL;
  WEFT_ASSERT_OK(weft_command_buffer_create(
      cts->device, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, WEFT_COMMAND_CATEGORY_ANY,
      0, &command_buffer));
  WEFT_ASSERT_OK(weft_command_buffer_begin(command_buffer));
  char needle[256];
  snprintf(needle, sizeof(needle), "device '%s'", weft_device_id(cts->device));
  weft_cts_assert_status_contains(
      weft_command_buffer_dispatch(command_buffer, executable, 0, workgroups, 0,
                                   NULL, 1, &binding),
      WEFT_STATUS_INVALID_ARGUMENT, needle);
  assert_int_equal(weft_command_buffer_command_count(command_buffer), 0);
  weft_status_free(weft_command_buffer_end(command_buffer));
  weft_command_buffer_release(command_buffer);
  weft_semaphore_release(signal);
  weft_buffer_release(buffer);
  weft_executable_release(executable);
}

//===----------------------------------------------------------------------===//
// A driver's own semaphore type
//===----------------------------------------------------------------------===//

typedef struct driver_semaphore_t {
  weft_semaphore_t base;
  int* destroy_count;
} driver_semaphore_t;

static void driver_semaphore_destroy(weft_semaphore_t* semaphore) {
  driver_semaphore_t* own = (driver_semaphore_t*)semaphore;
  ++*own->destroy_count;
  weft_semaphore_deinitialize(semaphore);
  free(own);
}

static const weft_semaphore_vtable_t kDriverSemaphoreVtable = {
    .destroy = driver_semaphore_destroy,
};

static void driver_semaphore_works_on_every_device(void** state) {
  weft_cts_t* cts = *state;
  int destroy_count = 0;
  driver_semaphore_t* own = calloc(1, sizeof(*own));
  assert_non_null(own);
  own->destroy_count = &destroy_count;
  weft_semaphore_initialize(&kDriverSemaphoreVtable, weft_allocator_system(), 0,
                            &own->base);
  weft_semaphore_t* semaphore = &own->base;
  // Recognisable by its vtable.
  assert_ptr_equal(weft_semaphore_vtable(semaphore), &kDriverSemaphoreVtable);
  weft_semaphore_set_name(semaphore, "driver's own");
  // The device under test waits on it and signals it like any other.
  weft_semaphore_t* done = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1;
  uint64_t two = 2;
  WEFT_ASSERT_OK(weft_device_queue_barrier(cts->device, WEFT_QUEUE_AFFINITY_ANY,
                                           weft_cts_list1(&semaphore, &one),
                                           weft_cts_list1(&semaphore, &two)));
  WEFT_ASSERT_OK(weft_device_queue_barrier(cts->device, WEFT_QUEUE_AFFINITY_ANY,
                                           weft_cts_list1(&semaphore, &two),
                                           weft_cts_list1(&done, &one)));
  WEFT_ASSERT_OK(weft_semaphore_signal(semaphore, 1));
  WEFT_ASSERT_OK(weft_cts_wait(done, 1));
  assert_int_equal(weft_cts_query_value(semaphore), 2);
  // A failure travels from it with its message.
  weft_semaphore_t* failed = weft_cts_create_semaphore(cts, 0);
  uint64_t three = 3;
  WEFT_ASSERT_OK(weft_device_queue_barrier(cts->device, WEFT_QUEUE_AFFINITY_ANY,
                                           weft_cts_list1(&semaphore, &three),
                                           weft_cts_list1(&failed, &one)));
  weft_semaphore_fail(semaphore,
                      WEFT_STATUS(DATA_LOSS, "the driver's event was lost"));
  weft_cts_assert_status_contains(weft_cts_wait(failed, 1), WEFT_STATUS_DATA_LOSS,
                         "the driver's event was lost");
  weft_semaphore_release(failed);
  weft_semaphore_release(done);
  assert_int_equal(destroy_count, 0);
  weft_semaphore_release(semaphore);
  // Retired ops let go of it by the time their device is gone (local-task
  // retires them on its workers, after they signalled).
  weft_device_release(cts->device);
  cts->device = NULL;
  assert_int_equal(destroy_count, 1);
}

int main(int argc, char** argv) {
  const struct CMUnitTest tests[] = {
      WEFT_CTS_CASE(unreachable_buffer_rejected_at_submit),
      WEFT_CTS_CASE(unreachable_buffer_rejected_at_record_and_execute),
      WEFT_CTS_CASE(host_visible_foreign_buffer_used_through_its_mapping),
      WEFT_CTS_CASE(foreign_executable_rejected),
      WEFT_CTS_CASE(driver_semaphore_works_on_every_device),
  };
  return weft_cts_run("domain", tests, WEFT_CTS_COUNT(tests), argc, argv);
}
