// Tests for src/hal/driver_registry.c: device strings, the registry and
// weft_device_create's errors.
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

#include "weft/driver.h"

#include "hal_test_util.h"

// Asserts |status| has |code| and its message contains |needle|; frees it.
static void assert_status_contains(weft_status_t status,
                                   weft_status_code_t code,
                                   const char* needle) {
  char text[1024];
  weft_status_format(status, text, sizeof(text));
  weft_status_code_t actual = weft_status_code(status);
  weft_status_free(status);
  if (actual != code || !strstr(text, needle)) {
    fail_msg("expected %s containing \"%s\", got \"%s\"",
             weft_status_code_string(code), needle, text);
  }
}

static void parse_name_only(void** state) {
  weft_device_options_t options;
  ASSERT_OK(weft_device_options_parse("local-sync", &options));
  assert_string_equal(options.driver_name, "local-sync");
  assert_string_equal(options.path, "");
  assert_int_equal(options.count, 0);
}

static void parse_path_and_options(void** state) {
  weft_device_options_t options;
  ASSERT_OK(weft_device_options_parse("cuda://1?workers=4&spin_us=20&nodes=all",
                                      &options));
  assert_string_equal(options.driver_name, "cuda");
  assert_string_equal(options.path, "1");
  assert_int_equal(options.count, 3);
  assert_string_equal(weft_device_options_find(&options, "workers"), "4");
  assert_string_equal(weft_device_options_find(&options, "spin_us"), "20");
  assert_string_equal(weft_device_options_find(&options, "nodes"), "all");
  assert_null(weft_device_options_find(&options, "missing"));
  uint32_t workers = 0;
  ASSERT_OK(weft_device_options_get_u32(&options, "workers", &workers));
  assert_int_equal(workers, 4);
  uint32_t untouched = 77;
  ASSERT_OK(weft_device_options_get_u32(&options, "missing", &untouched));
  assert_int_equal(untouched, 77);
  assert_status_contains(
      weft_device_options_get_u32(&options, "nodes", &untouched),
      WEFT_STATUS_INVALID_ARGUMENT, "nodes=all");
  assert_int_equal(untouched, 77);
}

static void parse_empty_value_and_u32_errors(void** state) {
  weft_device_options_t options;
  ASSERT_OK(
      weft_device_options_parse("x?a=&b=4294967296&c=4294967295", &options));
  assert_string_equal(weft_device_options_find(&options, "a"), "");
  uint32_t value = 0;
  assert_status_contains(weft_device_options_get_u32(&options, "a", &value),
                         WEFT_STATUS_INVALID_ARGUMENT, "'a' is empty");
  assert_status_contains(weft_device_options_get_u32(&options, "b", &value),
                         WEFT_STATUS_INVALID_ARGUMENT, "larger than");
  ASSERT_OK(weft_device_options_get_u32(&options, "c", &value));
  assert_int_equal(value, 4294967295u);
}

// A choice: the index of the value among the names; absent keeps the
// default; anything else names the key, the choices and the value.
static void parse_choice(void** state) {
  weft_device_options_t options;
  ASSERT_OK(weft_device_options_parse("x?mode=fast&bad=slow&empty=",
                                      &options));
  static const char* const kModes[] = {"safe", "fast", "lazy"};
  uint32_t index = 0;
  ASSERT_OK(weft_device_options_get_choice(&options, "mode", kModes, 3,
                                           &index));
  assert_int_equal(index, 1);
  index = 2;
  ASSERT_OK(weft_device_options_get_choice(&options, "missing", kModes, 3,
                                           &index));
  assert_int_equal(index, 2);
  assert_status_contains(
      weft_device_options_get_choice(&options, "bad", kModes, 3, &index),
      WEFT_STATUS_INVALID_ARGUMENT,
      "option 'bad' must be 'safe', 'fast' or 'lazy' (got 'slow')");
  assert_status_contains(
      weft_device_options_get_choice(&options, "empty", kModes, 2, &index),
      WEFT_STATUS_INVALID_ARGUMENT,
      "option 'empty' must be 'safe' or 'fast' (got '')");
  assert_int_equal(index, 2);
  assert_status_contains(
      weft_device_options_get_choice(&options, "mode", kModes, 0, &index),
      WEFT_STATUS_INVALID_ARGUMENT, "has no choices");
}

static void parse_malformed(void** state) {
  weft_device_options_t options;
  assert_status_contains(weft_device_options_parse("", &options),
                         WEFT_STATUS_INVALID_ARGUMENT, "empty");
  assert_status_contains(weft_device_options_parse(NULL, &options),
                         WEFT_STATUS_INVALID_ARGUMENT,
                         "weft_device_options_parse: device_string is NULL");
  assert_status_contains(weft_device_options_parse("?a=1", &options),
                         WEFT_STATUS_INVALID_ARGUMENT, "empty driver name");
  assert_status_contains(weft_device_options_parse("a b", &options),
                         WEFT_STATUS_INVALID_ARGUMENT, "contains ' '");
  assert_status_contains(weft_device_options_parse("x?a", &options),
                         WEFT_STATUS_INVALID_ARGUMENT, "has no value");
  assert_status_contains(weft_device_options_parse("x?a=1&&b=2", &options),
                         WEFT_STATUS_INVALID_ARGUMENT, "empty option");
  assert_status_contains(weft_device_options_parse("x?", &options),
                         WEFT_STATUS_INVALID_ARGUMENT, "empty option");
  assert_status_contains(weft_device_options_parse("x?a=1&a=2", &options),
                         WEFT_STATUS_INVALID_ARGUMENT, "'a' given twice");
  assert_status_contains(weft_device_options_parse("x?=1", &options),
                         WEFT_STATUS_INVALID_ARGUMENT, "empty option key");
}

static void parse_limits(void** state) {
  weft_device_options_t options;
  char text[1024];
  // 16 options fit; a 17th does not.
  strcpy(text, "x?");
  for (int i = 0; i < WEFT_DEVICE_OPTION_MAX_COUNT; ++i) {
    char option[16];
    snprintf(option, sizeof(option), "%sk%d=%d", i ? "&" : "", i, i);
    strcat(text, option);
  }
  ASSERT_OK(weft_device_options_parse(text, &options));
  assert_int_equal(options.count, WEFT_DEVICE_OPTION_MAX_COUNT);
  strcat(text, "&extra=1");
  assert_status_contains(weft_device_options_parse(text, &options),
                         WEFT_STATUS_INVALID_ARGUMENT, "more than 16 options");
  // A string longer than the storage.
  memset(text, 'a', sizeof(text) - 1);
  text[sizeof(text) - 1] = '\0';
  assert_status_contains(weft_device_options_parse(text, &options),
                         WEFT_STATUS_INVALID_ARGUMENT, "bytes long");
}

// A custom driver whose devices are local-sync devices under another name.
static weft_status_t custom_create_device(const weft_driver_t* driver,
                                          const char* device_string,
                                          const weft_device_options_t* options,
                                          weft_allocator_t allocator,
                                          weft_device_t** out_device) {
  uint32_t level = 0;
  weft_status_t status = weft_device_options_get_u32(options, "level", &level);
  if (weft_status_is_ok(status) && level > 3) {
    status = WEFT_STATUS(OUT_OF_RANGE, "custom: level %u > 3", level);
  }
  if (weft_status_is_ok(status)) {
    status = weft_device_create("local-sync", allocator, out_device);
  }
  return status;
}

static const char* const kCustomOptions[] = {"level", "mode", NULL};

static const weft_driver_t kCustomDriver = {
    .name = "custom",
    .description = "a test driver",
    .option_names = kCustomOptions,
    .create_device = custom_create_device,
};

static void registry_empty(void** state) {
  weft_driver_registry_t* registry = NULL;
  ASSERT_OK(weft_driver_registry_create(weft_allocator_system(), &registry));
  assert_int_equal(weft_driver_registry_count(registry), 0);
  assert_null(weft_driver_registry_get(registry, 0));
  weft_device_t* device = NULL;
  assert_status_contains(
      weft_driver_registry_create_device(registry, "local-sync",
                                         weft_allocator_system(), &device),
      WEFT_STATUS_NOT_FOUND, "known drivers: (none)");
  assert_null(device);
  weft_driver_registry_release(registry);
}

static void registry_default_and_custom(void** state) {
  weft_driver_registry_t* registry = NULL;
  ASSERT_OK(
      weft_driver_registry_create_default(weft_allocator_system(), &registry));
  uint32_t builtin_count = weft_driver_registry_count(registry);
  assert_true(builtin_count >= 1);
  assert_string_equal(weft_driver_registry_get(registry, 0)->name,
                      "local-sync");
  ASSERT_OK(weft_driver_registry_register(registry, &kCustomDriver));
  assert_int_equal(weft_driver_registry_count(registry), builtin_count + 1);
  assert_ptr_equal(weft_driver_registry_get(registry, builtin_count),
                   &kCustomDriver);
  assert_status_contains(
      weft_driver_registry_register(registry, &kCustomDriver),
      WEFT_STATUS_ALREADY_EXISTS, "'custom' is already registered");

  weft_device_t* device = NULL;
  ASSERT_OK(weft_driver_registry_create_device(
      registry, "custom?level=2&mode=x", weft_allocator_system(), &device));
  assert_non_null(device);
  weft_device_release(device);
  device = NULL;
  assert_status_contains(
      weft_driver_registry_create_device(registry, "custom?level=9",
                                         weft_allocator_system(), &device),
      WEFT_STATUS_OUT_OF_RANGE, "level 9 > 3");
  assert_status_contains(
      weft_driver_registry_create_device(registry, "custom?speed=1",
                                         weft_allocator_system(), &device),
      WEFT_STATUS_INVALID_ARGUMENT,
      "driver 'custom' does not accept option 'speed'; accepted: level, mode");
  // A path: refused by the registry for a driver that takes none, handed
  // over to one that does.
  assert_status_contains(
      weft_driver_registry_create_device(registry, "custom://0",
                                         weft_allocator_system(), &device),
      WEFT_STATUS_INVALID_ARGUMENT,
      "device string 'custom://0': driver 'custom' takes no path (got '0')");
  weft_driver_t with_path = kCustomDriver;
  with_path.name = "custom-path";
  with_path.accepts_path = true;
  ASSERT_OK(weft_driver_registry_register(registry, &with_path));
  ASSERT_OK(weft_driver_registry_create_device(
      registry, "custom-path://0?level=1", weft_allocator_system(), &device));
  weft_device_release(device);
  device = NULL;
  assert_status_contains(
      weft_driver_registry_create_device(registry, "nope",
                                         weft_allocator_system(), &device),
      WEFT_STATUS_NOT_FOUND,
      "no driver named 'nope'; known drivers: local-sync");
  assert_null(device);
  weft_driver_registry_release(registry);
}

static void registry_many_drivers_grow(void** state) {
  // More drivers than the initial capacity; names must differ.
  static const char* const kNames[] = {"d0", "d1", "d2", "d3", "d4",
                                       "d5", "d6", "d7", "d8", "d9"};
  weft_driver_t drivers[10];
  weft_driver_registry_t* registry = NULL;
  ASSERT_OK(weft_driver_registry_create(weft_allocator_system(), &registry));
  for (int i = 0; i < 10; ++i) {
    drivers[i] = kCustomDriver;
    drivers[i].name = kNames[i];
    ASSERT_OK(weft_driver_registry_register(registry, &drivers[i]));
  }
  assert_int_equal(weft_driver_registry_count(registry), 10);
  for (int i = 0; i < 10; ++i) {
    assert_string_equal(weft_driver_registry_get(registry, (uint32_t)i)->name,
                        kNames[i]);
  }
  weft_driver_t bad = kCustomDriver;
  bad.name = "has space";
  assert_status_contains(weft_driver_registry_register(registry, &bad),
                         WEFT_STATUS_INVALID_ARGUMENT, "contains ' '");
  bad.name = "ok";
  bad.create_device = NULL;
  assert_status_contains(weft_driver_registry_register(registry, &bad),
                         WEFT_STATUS_INVALID_ARGUMENT,
                         "driver->create_device is NULL");
  weft_driver_registry_release(registry);
}

static void registry_allocation_failure(void** state) {
  // Every allocation point fails in turn; nothing leaks (checked by ASan).
  for (int64_t fail_at = 0; fail_at < 4; ++fail_at) {
    weft_failing_allocator_t storage;
    weft_allocator_t allocator = weft_failing_allocator_initialize(
        weft_allocator_system(), fail_at, &storage);
    weft_driver_registry_t* registry = NULL;
    weft_status_t status =
        weft_driver_registry_create_default(allocator, &registry);
    if (weft_status_is_ok(status)) {
      status = weft_driver_registry_register(registry, &kCustomDriver);
    }
    weft_device_t* device = NULL;
    if (weft_status_is_ok(status)) {
      status = weft_driver_registry_create_device(registry, "local-sync",
                                                  allocator, &device);
    }
    if (!weft_status_is_ok(status)) {
      assert_int_equal(weft_status_code(status),
                       WEFT_STATUS_RESOURCE_EXHAUSTED);
      assert_null(device);
    }
    weft_status_free(status);
    weft_device_release(device);
    weft_driver_registry_release(registry);
  }
}

static void device_create_errors(void** state) {
  weft_device_t* device = NULL;
  assert_status_contains(
      weft_device_create("foo", weft_allocator_system(), &device),
      WEFT_STATUS_NOT_FOUND,
      "no driver named 'foo'; known drivers: local-sync");
  assert_status_contains(
      weft_device_create("local-sync?x=1", weft_allocator_system(), &device),
      WEFT_STATUS_INVALID_ARGUMENT,
      "driver 'local-sync' does not accept option 'x'; accepted: (none)");
  assert_status_contains(
      weft_device_create("local-sync://0", weft_allocator_system(), &device),
      WEFT_STATUS_INVALID_ARGUMENT, "takes no path");
  assert_null(device);
  ASSERT_OK(weft_device_create("local-sync", weft_allocator_system(), &device));
  assert_string_equal(weft_device_id(device), "local-sync");
  assert_string_equal(weft_device_driver_name(device), "local-sync");
  weft_device_release(device);
}

// A near miss of a driver name or option key gets one suggestion, the
// closest (the first of equals); a far-off name gets none.
static void near_misses_are_suggested(void** state) {
  weft_device_t* device = NULL;
  // A swap of two letters. (The list goes on with the drivers this build
  // has, cuda where the toolkit was found.)
  assert_status_contains(
      weft_device_create("local-tsak", weft_allocator_system(), &device),
      WEFT_STATUS_NOT_FOUND,
      "no driver named 'local-tsak'; known drivers: local-sync, local-task");
  assert_status_contains(
      weft_device_create("local-tsak", weft_allocator_system(), &device),
      WEFT_STATUS_NOT_FOUND, "; did you mean 'local-task'?");
  // A missing letter in an option key.
  assert_status_contains(
      weft_device_create("local-task?worker=4", weft_allocator_system(),
                         &device),
      WEFT_STATUS_INVALID_ARGUMENT,
      "driver 'local-task' does not accept option 'worker'; accepted: "
      "workers, cpus, nodes, spin_us, assist, queues, file_io, file_io_depth; did "
      "you mean 'workers'?");
  // Two edits; the closest of several candidates wins.
  assert_status_contains(
      weft_device_create("local-task?spinus=1&file_io_dept=2",
                         weft_allocator_system(), &device),
      WEFT_STATUS_INVALID_ARGUMENT, "did you mean 'spin_us'?");
  assert_status_contains(
      weft_device_create("local-task?file_io_dept=2", weft_allocator_system(),
                         &device),
      WEFT_STATUS_INVALID_ARGUMENT, "did you mean 'file_io_depth'?");
  assert_status_contains(
      weft_device_create("locl-snc", weft_allocator_system(), &device),
      WEFT_STATUS_NOT_FOUND, "did you mean 'local-sync'?");
  assert_status_contains(
      weft_device_create("local-task?cpu=1", weft_allocator_system(), &device),
      WEFT_STATUS_INVALID_ARGUMENT, "did you mean 'cpus'?");
  // A tie (two edits from both) goes to the first listed.
  assert_status_contains(
      weft_device_create("local-sank", weft_allocator_system(), &device),
      WEFT_STATUS_NOT_FOUND, "did you mean 'local-sync'?");
  assert_null(device);

  // Far-off names, and short ones where two edits are most of the name,
  // get the list but no suggestion.
  static const struct {
    const char* device_string;
    weft_status_code_t code;
    const char* needle;
  } kFar[] = {
      {"metal", WEFT_STATUS_NOT_FOUND,
       "no driver named 'metal'; known drivers: local-sync, local-task"},
      {"local-threads", WEFT_STATUS_NOT_FOUND, "known drivers:"},
      {"local-task?threads=4", WEFT_STATUS_INVALID_ARGUMENT,
       "does not accept option 'threads'"},
      {"local-task?x=1", WEFT_STATUS_INVALID_ARGUMENT,
       "does not accept option 'x'"},
      {"local-task?file=1", WEFT_STATUS_INVALID_ARGUMENT,
       "does not accept option 'file'"},
      {"local-sync?workers=1", WEFT_STATUS_INVALID_ARGUMENT,
       "accepted: (none)"},
  };
  for (size_t i = 0; i < sizeof(kFar) / sizeof(kFar[0]); ++i) {
    weft_status_t status = weft_device_create(
        kFar[i].device_string, weft_allocator_system(), &device);
    char text[1024];
    weft_status_format(status, text, sizeof(text));
    weft_status_code_t code = weft_status_code(status);
    weft_status_free(status);
    if (code != kFar[i].code || !strstr(text, kFar[i].needle) ||
        strstr(text, "did you mean")) {
      fail_msg("'%s': expected %s containing \"%s\" and no suggestion, got "
               "\"%s\"",
               kFar[i].device_string, weft_status_code_string(kFar[i].code),
               kFar[i].needle, text);
    }
    assert_null(device);
  }
}

// A registry's own drivers and options get suggestions too; short names
// one edit apart ("d0", "d1") do not suggest each other.
static void registry_near_misses(void** state) {
  weft_driver_registry_t* registry = NULL;
  ASSERT_OK(weft_driver_registry_create(weft_allocator_system(), &registry));
  ASSERT_OK(weft_driver_registry_register(registry, &kCustomDriver));
  weft_driver_t short_name = kCustomDriver;
  short_name.name = "d0";
  ASSERT_OK(weft_driver_registry_register(registry, &short_name));
  weft_device_t* device = NULL;
  assert_status_contains(
      weft_driver_registry_create_device(registry, "custon",
                                         weft_allocator_system(), &device),
      WEFT_STATUS_NOT_FOUND,
      "no driver named 'custon'; known drivers: custom, d0; did you mean "
      "'custom'?");
  assert_status_contains(
      weft_driver_registry_create_device(registry, "custom?levle=1",
                                         weft_allocator_system(), &device),
      WEFT_STATUS_INVALID_ARGUMENT,
      "accepted: level, mode; did you mean 'level'?");
  weft_status_t status = weft_driver_registry_create_device(
      registry, "d1", weft_allocator_system(), &device);
  assert_int_equal(weft_status_code(status), WEFT_STATUS_NOT_FOUND);
  assert_null(strstr(weft_status_message(status), "did you mean"));
  weft_status_free(status);
  assert_null(device);
  weft_driver_registry_release(registry);
}

// workers=0 is refused (it used to mean the default) with a message that
// says what leaving the option out gives; workers=1 is the smallest count.
static void local_task_workers_zero_is_refused(void** state) {
  weft_device_t* device = NULL;
  weft_status_t status = weft_device_create("local-task?workers=0",
                                            weft_allocator_system(), &device);
  char text[1024];
  weft_status_format(status, text, sizeof(text));
  assert_int_equal(weft_status_code(status), WEFT_STATUS_INVALID_ARGUMENT);
  weft_status_free(status);
  assert_null(device);
  if (!strstr(text,
              "device string 'local-task?workers=0': workers=0: a device "
              "needs at least one worker; leave the option out for the "
              "default (one per physical core this process may use: ")) {
    fail_msg("unexpected message: %s", text);
  }
  // The default's worker count, as a device without the option reports it.
  ASSERT_OK(weft_device_create("local-task", weft_allocator_system(), &device));
  int64_t default_workers = 0;
  ASSERT_OK(weft_device_query_i64(device, "worker.count", &default_workers));
  weft_device_release(device);
  device = NULL;
  char expected[64];
  snprintf(expected, sizeof(expected), ": %lld here)",
           (long long)default_workers);
  if (!strstr(text, expected)) {
    fail_msg("expected \"%s\" in: %s", expected, text);
  }
  // With other options, still refused; workers=1 works.
  assert_status_contains(
      weft_device_create("local-task?spin_us=0&workers=0&queues=2",
                         weft_allocator_system(), &device),
      WEFT_STATUS_INVALID_ARGUMENT, "workers=0: a device needs at least one");
  assert_null(device);
  ASSERT_OK(weft_device_create("local-task?workers=1", weft_allocator_system(),
                               &device));
  int64_t workers = 0;
  ASSERT_OK(weft_device_query_i64(device, "worker.count", &workers));
  assert_int_equal(workers, 1);
  weft_device_release(device);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(parse_name_only),
      cmocka_unit_test(parse_path_and_options),
      cmocka_unit_test(parse_empty_value_and_u32_errors),
      cmocka_unit_test(parse_choice),
      cmocka_unit_test(parse_malformed),
      cmocka_unit_test(parse_limits),
      cmocka_unit_test(registry_empty),
      cmocka_unit_test(registry_default_and_custom),
      cmocka_unit_test(registry_many_drivers_grow),
      cmocka_unit_test(registry_allocation_failure),
      cmocka_unit_test(device_create_errors),
      cmocka_unit_test(near_misses_are_suggested),
      cmocka_unit_test(registry_near_misses),
      cmocka_unit_test(local_task_workers_zero_is_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
