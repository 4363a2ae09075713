// CTS: devices and drivers. Creation by name, errors that list what is
// known, properties, the registry and diagnostics.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cts.h"

// The driver under test, as the default registry has it.
static const weft_driver_t* find_driver(weft_driver_registry_t* registry,
                                        const char* name) {
  for (uint32_t i = 0; i < weft_driver_registry_count(registry); ++i) {
    const weft_driver_t* driver = weft_driver_registry_get(registry, i);
    if (strcmp(driver->name, name) == 0) return driver;
  }
  fail_msg("no driver '%s' in the default registry", name);
  return NULL;
}

static void create_by_name(void** state) {
  weft_cts_t* cts = *state;
  weft_device_t* device = NULL;
  WEFT_ASSERT_OK(
      weft_device_create(cts->device_string, cts->allocator, &device));
  assert_non_null(device);
  // The driver name is the part of the device string before any path or
  // options.
  weft_device_options_t options;
  WEFT_ASSERT_OK(weft_device_options_parse(cts->device_string, &options));
  assert_string_equal(weft_device_driver_name(device), options.driver_name);
  weft_device_retain(device);
  weft_device_release(device);
  weft_device_release(device);
}

static void device_id_is_device_string(void** state) {
  weft_cts_t* cts = *state;
  assert_string_equal(weft_device_id(cts->device), cts->device_string);
  weft_allocator_t allocator = weft_device_host_allocator(cts->device);
  assert_ptr_equal(allocator.ctl, cts->allocator.ctl);
  assert_ptr_equal(allocator.self, cts->allocator.self);
}

static void unknown_driver_lists_known(void** state) {
  weft_cts_t* cts = *state;
  weft_device_t* device = NULL;
  weft_status_t status =
      weft_device_create("no-such-driver", cts->allocator, &device);
  assert_null(device);
  char text[1024];
  weft_status_format(status, text, sizeof(text));
  assert_int_equal(weft_status_code(status), WEFT_STATUS_NOT_FOUND);
  assert_non_null(strstr(text, "no driver named 'no-such-driver'"));
  assert_non_null(strstr(text, "known drivers: "));
  assert_non_null(strstr(text, weft_device_driver_name(cts->device)));
  weft_status_free(status);
}

static void unknown_option_lists_accepted(void** state) {
  weft_cts_t* cts = *state;
  weft_device_options_t options;
  WEFT_ASSERT_OK(weft_device_options_parse(cts->device_string, &options));
  char device_string[600];
  snprintf(device_string, sizeof(device_string), "%s?bogus_option=1",
           options.driver_name);
  // The message lists the driver's options as the registry has them, or
  // "(none)".
  weft_driver_registry_t* registry = NULL;
  WEFT_ASSERT_OK(
      weft_driver_registry_create_default(cts->allocator, &registry));
  const weft_driver_t* driver = find_driver(registry, options.driver_name);
  char accepted[256] = "";
  for (const char* const* name = driver->option_names; name && *name; ++name) {
    size_t used = strlen(accepted);
    snprintf(accepted + used, sizeof(accepted) - used, "%s%s", used ? ", " : "",
             *name);
  }
  char needle[512];
  snprintf(needle, sizeof(needle),
           "driver '%s' does not accept option 'bogus_option'; accepted: %s",
           options.driver_name, accepted[0] ? accepted : "(none)");
  weft_device_t* device = NULL;
  weft_cts_assert_status_contains(
      weft_device_create(device_string, cts->allocator, &device),
      WEFT_STATUS_INVALID_ARGUMENT, needle);
  assert_null(device);
  weft_driver_registry_release(registry);
}

// The CTS's feature table (cts.c) agrees with what the driver says of
// itself: the "queues" option is there exactly when QUEUES_OPTION is.
static void feature_table_matches_the_driver(void** state) {
  weft_cts_t* cts = *state;
  weft_driver_registry_t* registry = NULL;
  WEFT_ASSERT_OK(
      weft_driver_registry_create_default(cts->allocator, &registry));
  const weft_driver_t* driver =
      find_driver(registry, weft_device_driver_name(cts->device));
  bool takes_queues = false;
  for (const char* const* name = driver->option_names; name && *name; ++name) {
    takes_queues = takes_queues || strcmp(*name, "queues") == 0;
  }
  assert_int_equal(weft_cts_supports(cts, WEFT_CTS_FEATURE_QUEUES_OPTION),
                   takes_queues);
  weft_driver_registry_release(registry);
  // And a device with several queues says so.
  uint32_t count = weft_cts_ensure_queues(cts);
  assert_int_equal(weft_cts_supports(cts, WEFT_CTS_FEATURE_SEVERAL_QUEUES),
                   count >= 2);
  if (takes_queues) assert_true(count >= 2);
}

static void malformed_device_strings(void** state) {
  weft_cts_t* cts = *state;
  const char* driver_name = weft_device_driver_name(cts->device);
  char empty_options[256];
  snprintf(empty_options, sizeof(empty_options), "%s?", driver_name);
  char option_without_value[256];
  snprintf(option_without_value, sizeof(option_without_value), "%s?a",
           driver_name);
  weft_device_t* device = NULL;
  WEFT_ASSERT_STATUS(INVALID_ARGUMENT,
                     weft_device_create("", cts->allocator, &device));
  WEFT_ASSERT_STATUS(
      INVALID_ARGUMENT,
      weft_device_create(empty_options, cts->allocator, &device));
  WEFT_ASSERT_STATUS(
      INVALID_ARGUMENT,
      weft_device_create(option_without_value, cts->allocator, &device));
  WEFT_ASSERT_STATUS(INVALID_ARGUMENT,
                     weft_device_create("bad name", cts->allocator, &device));
  assert_null(device);
}

static void query_known_keys(void** state) {
  weft_cts_t* cts = *state;
  int64_t value = -1;
  WEFT_ASSERT_OK(weft_device_query_i64(cts->device, "queue.count", &value));
  assert_true(value >= 1);
  WEFT_ASSERT_OK(weft_device_query_i64(cts->device, "worker.count", &value));
  assert_true(value >= 1);
  WEFT_ASSERT_OK(
      weft_device_query_i64(cts->device, "dispatch.concurrent", &value));
  assert_true(value == 0 || value == 1);
  WEFT_ASSERT_OK(
      weft_device_query_i64(cts->device, "semaphore.host_wait", &value));
  assert_int_equal(value, 1);
  // What each driver reports for itself: tests/drivers.
}

static void query_unknown_key_not_found(void** state) {
  weft_cts_t* cts = *state;
  int64_t value = 1234;
  weft_cts_assert_status_contains(
      weft_device_query_i64(cts->device, "no.such.key", &value),
      WEFT_STATUS_NOT_FOUND, "'no.such.key'");
  // The message lists what the device does answer; the value reads 0.
  value = 1234;
  weft_cts_assert_status_contains(
      weft_device_query_i64(cts->device, "no.such.key", &value),
      WEFT_STATUS_NOT_FOUND, "known: queue.count, worker.count");
  assert_int_equal(value, 0);
  WEFT_ASSERT_STATUS(INVALID_ARGUMENT,
                     weft_device_query_i64(cts->device, NULL, &value));
}

// A driver registered at run time, delegating to the device under test.
static weft_status_t custom_create_device(const weft_driver_t* driver,
                                          const char* device_string,
                                          const weft_device_options_t* options,
                                          weft_allocator_t allocator,
                                          weft_device_t** out_device) {
  return weft_device_create(weft_cts_device_string(), allocator, out_device);
}

static const char* const kCustomOptions[] = {"flavor", NULL};

static const weft_driver_t kCustomDriver = {
    .name = "cts-custom",
    .description = "CTS test driver",
    .option_names = kCustomOptions,
    .create_device = custom_create_device,
};

static void registry_custom_driver(void** state) {
  weft_cts_t* cts = *state;
  weft_driver_registry_t* registry = NULL;
  WEFT_ASSERT_OK(
      weft_driver_registry_create_default(cts->allocator, &registry));
  uint32_t count = weft_driver_registry_count(registry);
  for (uint32_t i = 0; i < count; ++i) {
    const weft_driver_t* driver = weft_driver_registry_get(registry, i);
    assert_non_null(driver->name);
    assert_non_null(driver->description);
  }
  const char* driver_name = weft_device_driver_name(cts->device);
  assert_non_null(find_driver(registry, driver_name));
  assert_null(weft_driver_registry_get(registry, count));

  WEFT_ASSERT_OK(weft_driver_registry_register(registry, &kCustomDriver));
  assert_int_equal(weft_driver_registry_count(registry), count + 1);
  weft_cts_assert_status_contains(
      weft_driver_registry_register(registry, &kCustomDriver),
      WEFT_STATUS_ALREADY_EXISTS, "'cts-custom'");
  weft_driver_t duplicate_builtin = kCustomDriver;
  duplicate_builtin.name = driver_name;
  WEFT_ASSERT_STATUS(ALREADY_EXISTS, weft_driver_registry_register(
                                         registry, &duplicate_builtin));

  weft_device_t* device = NULL;
  WEFT_ASSERT_OK(weft_driver_registry_create_device(
      registry, "cts-custom?flavor=plain", cts->allocator, &device));
  assert_non_null(device);
  weft_device_release(device);
  device = NULL;
  weft_cts_assert_status_contains(
      weft_driver_registry_create_device(registry, "cts-custom?color=red",
                                         cts->allocator, &device),
      WEFT_STATUS_INVALID_ARGUMENT, "accepted: flavor");
  weft_cts_assert_status_contains(
      weft_driver_registry_create_device(registry, "missing", cts->allocator,
                                         &device),
      WEFT_STATUS_NOT_FOUND, "cts-custom");
  assert_null(device);
  weft_driver_registry_release(registry);
}

static void create_semaphore_and_buffer(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 7);
  uint64_t value = 0;
  WEFT_ASSERT_OK(weft_semaphore_query(semaphore, &value));
  assert_int_equal(value, 7);
  weft_semaphore_release(semaphore);

  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 256);
  assert_int_equal(weft_buffer_byte_length(buffer), 256);
  uint8_t bytes[256];
  weft_cts_read_buffer(cts, buffer, 0, bytes, sizeof(bytes));
  for (size_t i = 0; i < sizeof(bytes); ++i) assert_int_equal(bytes[i], 0);
  weft_buffer_release(buffer);
  WEFT_ASSERT_STATUS(INVALID_ARGUMENT,
                     weft_device_allocate_buffer(
                         cts->device, (weft_buffer_params_t){0}, 16, NULL));
}

static void dump_pending_lists_parked(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* wait = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* signal = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_set_name(wait, "upstream");
  weft_semaphore_set_name(signal, "downstream");
  uint64_t wait_value = 3;
  uint64_t signal_value = 1;
  WEFT_ASSERT_OK(weft_device_queue_barrier(
      cts->device, WEFT_QUEUE_AFFINITY_ANY, weft_cts_list1(&wait, &wait_value),
      weft_cts_list1(&signal, &signal_value)));

  char* text = weft_cts_dump_pending(cts->device);
  assert_non_null(strstr(text, "queue_barrier"));
  assert_non_null(strstr(text, "upstream"));
  assert_non_null(strstr(text, "3"));
  free(text);

  WEFT_ASSERT_OK(weft_semaphore_signal(wait, 3));
  WEFT_ASSERT_OK(weft_cts_wait(signal, 1));

  // Nothing pending any more: the report no longer names the barrier.
  text = weft_cts_dump_pending(cts->device);
  assert_null(strstr(text, "queue_barrier"));
  free(text);
  weft_semaphore_release(wait);
  weft_semaphore_release(signal);
}

// A second device of the case's driver whose allocator (returned in
// |*inout_allocator|, over the one given) counts live blocks in |counter|.
static weft_device_t* create_counted_device(
    weft_cts_t* cts, weft_cts_counting_allocator_t* counter,
    weft_allocator_t* inout_allocator) {
  *inout_allocator =
      weft_cts_counting_allocator_initialize(*inout_allocator, counter);
  weft_device_t* device = NULL;
  WEFT_ASSERT_OK(
      weft_device_create(cts->device_string, *inout_allocator, &device));
  return device;
}

// device.h's release contract, the same on every driver: releasing the
// last reference to a device fails every op still waiting with CANCELLED
// naming the op and the device; ops already running finish; and once the
// last reference to everything is gone nothing the device allocated
// remains (counted: objects reachable from the diagnostics registry are
// invisible to LeakSanitizer).
static void device_release_cancels_waiting_ops(void** state) {
  weft_cts_t* cts = *state;
  weft_cts_counting_allocator_t counter;
  weft_allocator_t allocator = weft_allocator_system();
  weft_device_t* device = create_counted_device(cts, &counter, &allocator);
  weft_semaphore_t* gate = NULL;
  weft_semaphore_t* filled = NULL;
  weft_semaphore_t* copied = NULL;
  WEFT_ASSERT_OK(weft_device_create_semaphore(device, 0, &gate));
  WEFT_ASSERT_OK(weft_device_create_semaphore(device, 0, &filled));
  WEFT_ASSERT_OK(weft_device_create_semaphore(device, 0, &copied));
  weft_semaphore_set_name(gate, "gate");
  weft_semaphore_set_name(filled, "filled");
  weft_semaphore_set_name(copied, "copied");
  weft_buffer_t* buffer = NULL;
  WEFT_ASSERT_OK(weft_device_allocate_buffer(device, (weft_buffer_params_t){0},
                                             256, &buffer));
  uint64_t one = 1;
  uint32_t pattern = 0xA5A5A5A5u;
  WEFT_ASSERT_OK(weft_device_queue_fill(
      device, WEFT_QUEUE_AFFINITY_ANY, weft_cts_list1(&gate, &one),
      weft_cts_list1(&filled, &one), buffer, 0, 128, &pattern, 4));
  WEFT_ASSERT_OK(weft_device_queue_copy(
      device, WEFT_QUEUE_AFFINITY_ANY, weft_cts_list1(&filled, &one),
      weft_cts_list1(&copied, &one), buffer, 0, buffer, 128, 128));
  weft_device_release(device);

  char expected[256];
  snprintf(expected, sizeof(expected),
           "queue_fill (waiting for 'gate' >= 1, signalling 'filled' = 1) on "
           "queue 0 of device '%s' was cancelled: the device was released "
           "while it waited",
           cts->device_string);
  weft_cts_assert_status_contains(
      weft_semaphore_wait(filled, 1, weft_timeout_immediate()),
      WEFT_STATUS_CANCELLED, expected);
  // The copy waited on the fill: cancelled too, named in its own link.
  weft_cts_assert_status_contains(
      weft_semaphore_wait(copied, 1, weft_timeout_immediate()),
      WEFT_STATUS_CANCELLED, "queue_copy (waiting for");
  // The gate is untouched and still usable; signalling it runs nothing.
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  weft_buffer_release(buffer);
  weft_semaphore_release(gate);
  weft_semaphore_release(filled);
  weft_semaphore_release(copied);
  assert_int_equal(weft_cts_counting_allocator_live(&counter), 0);
}

// Everything let go while an execute and a dispatch wait on a semaphore
// that only the (released) host could signal: nothing may stay allocated,
// not even through the command buffer, which holds no device once ended.
static void device_release_with_everything_let_go(void** state) {
  weft_cts_t* cts = *state;
  weft_cts_counting_allocator_t counter;
  weft_allocator_t allocator = weft_allocator_system();
  weft_device_t* device = create_counted_device(cts, &counter, &allocator);
  weft_semaphore_t* gate = NULL;
  weft_semaphore_t* step = NULL;
  WEFT_ASSERT_OK(weft_device_create_semaphore(device, 0, &gate));
  WEFT_ASSERT_OK(weft_device_create_semaphore(device, 0, &step));
  weft_buffer_t* buffer = NULL;
  WEFT_ASSERT_OK(weft_device_allocate_buffer(device, (weft_buffer_params_t){0},
                                             256, &buffer));
  weft_command_buffer_t* command_buffer = NULL;
  WEFT_ASSERT_OK(weft_command_buffer_create(
      device, WEFT_COMMAND_BUFFER_MODE_REUSABLE, WEFT_COMMAND_CATEGORY_ANY, 1,
      &command_buffer));
  WEFT_ASSERT_OK(weft_command_buffer_begin(command_buffer));
  uint32_t pattern = 7;
  WEFT_ASSERT_OK(weft_command_buffer_fill(
      command_buffer, weft_make_indirect_buffer_ref(0, 0, WEFT_WHOLE_BUFFER),
      &pattern, 4));
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  weft_buffer_binding_t binding = {buffer, 0, WEFT_WHOLE_BUFFER};
  weft_binding_table_t table = {1, &binding};
  uint64_t values[3] = {1, 2, 3};
  WEFT_ASSERT_OK(weft_device_queue_execute(
      device, WEFT_QUEUE_AFFINITY_ANY, weft_cts_list1(&gate, &values[0]),
      weft_cts_list1(&step, &values[0]), command_buffer, table));
  WEFT_ASSERT_OK(weft_device_queue_execute(
      device, WEFT_QUEUE_AFFINITY_ANY, weft_cts_list1(&step, &values[0]),
      weft_cts_list1(&step, &values[1]), command_buffer, table));
  weft_executable_t* kernels = NULL;
  WEFT_ASSERT_OK(weft_device_create_executable(
      device, weft_cts_kernel_source(weft_device_driver_name(device)),
      &kernels));
  uint32_t ordinal = 0;
  WEFT_ASSERT_OK(weft_executable_lookup_kernel(kernels, "write_ids", &ordinal));
  uint32_t workgroups[3] = {4, 1, 1};
  weft_buffer_ref_t ids = weft_make_buffer_ref(buffer, 0, 64);
  WEFT_ASSERT_OK(weft_device_queue_dispatch(
      device, WEFT_QUEUE_AFFINITY_ANY, weft_cts_list1(&step, &values[1]),
      weft_cts_list1(&step, &values[2]), kernels, ordinal, workgroups, 0, NULL,
      1, &ids));
  // Let go of everything, the semaphores first: only the ops hold them now.
  weft_semaphore_release(gate);
  weft_semaphore_release(step);
  weft_command_buffer_release(command_buffer);
  weft_executable_release(kernels);
  weft_buffer_release(buffer);
  weft_device_release(device);
  assert_int_equal(weft_cts_counting_allocator_live(&counter), 0);
}

// A host call that signals |started|, then waits (bounded) for the test to
// signal |releasing| as it releases the device.
typedef struct running_call_t {
  weft_semaphore_t* started;
  weft_semaphore_t* releasing;
  _Atomic(int) finished;
} running_call_t;

static weft_status_t running_call(void* user_data, const uint64_t args[4],
                                  const weft_host_call_context_t* context) {
  running_call_t* call = (running_call_t*)user_data;
  weft_status_ignore(weft_semaphore_signal(call->started, 1));
  // Should the test never say so, the call still ends (and the case fails
  // on |finished| coming too early).
  weft_status_ignore(weft_semaphore_wait(
      call->releasing, 1, weft_timeout_relative(2000ll * 1000 * 1000)));
  // Still running a little after the release began.
  weft_sleep_until(weft_time_now() + 20ll * 1000 * 1000);
  atomic_store(&call->finished, 1);
  return WEFT_OK;
}

static void* signal_gate_thread(void* user_data) {
  // On local-sync the op runs right here, inside the signal.
  weft_status_ignore(weft_semaphore_signal((weft_semaphore_t*)user_data, 1));
  return NULL;
}

// An op already running when the device is released finishes and signals;
// the device's memory goes once it has.
static void device_release_lets_running_ops_finish(void** state) {
  weft_cts_t* cts = *state;
  weft_cts_counting_allocator_t counter;
  weft_allocator_t allocator = weft_allocator_system();
  weft_device_t* device = create_counted_device(cts, &counter, &allocator);
  weft_semaphore_t* gate = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* done = weft_cts_create_semaphore(cts, 0);
  running_call_t call;
  call.started = weft_cts_create_semaphore(cts, 0);
  call.releasing = weft_cts_create_semaphore(cts, 0);
  atomic_init(&call.finished, 0);
  uint64_t one = 1;
  WEFT_ASSERT_OK(weft_device_queue_host_call(
      device, WEFT_QUEUE_AFFINITY_ANY, weft_cts_list1(&gate, &one),
      weft_cts_list1(&done, &one), running_call, &call, NULL,
      WEFT_HOST_CALL_FLAG_NONE));
  pthread_t thread;
  assert_int_equal(pthread_create(&thread, NULL, signal_gate_thread, gate), 0);
  WEFT_ASSERT_OK(weft_cts_wait(call.started, 1));
  WEFT_ASSERT_OK(weft_semaphore_signal(call.releasing, 1));
  weft_device_release(device);
  WEFT_ASSERT_OK(weft_cts_wait(done, 1));
  assert_int_equal(atomic_load(&call.finished), 1);
  pthread_join(thread, NULL);
  weft_semaphore_release(call.started);
  weft_semaphore_release(call.releasing);
  weft_semaphore_release(gate);
  weft_semaphore_release(done);
  // The op's thread lets go of the device after it signalled.
  assert_int_equal(weft_cts_counting_allocator_wait_all_freed(
                       &counter, 10ll * 1000 * 1000 * 1000),
                   0);
}

int main(int argc, char** argv) {
  const struct CMUnitTest tests[] = {
      WEFT_CTS_CASE(create_by_name),
      WEFT_CTS_CASE(device_id_is_device_string),
      WEFT_CTS_CASE(unknown_driver_lists_known),
      WEFT_CTS_CASE(unknown_option_lists_accepted),
      WEFT_CTS_CASE(feature_table_matches_the_driver),
      WEFT_CTS_CASE(malformed_device_strings),
      WEFT_CTS_CASE(query_known_keys),
      WEFT_CTS_CASE(query_unknown_key_not_found),
      WEFT_CTS_CASE(registry_custom_driver),
      WEFT_CTS_CASE(create_semaphore_and_buffer),
      WEFT_CTS_CASE(dump_pending_lists_parked),
      WEFT_CTS_CASE(device_release_cancels_waiting_ops),
      WEFT_CTS_CASE(device_release_with_everything_let_go),
      WEFT_CTS_CASE(device_release_lets_running_ops_finish),
  };
  return weft_cts_run("device", tests, WEFT_CTS_COUNT(tests), argc, argv);
}
