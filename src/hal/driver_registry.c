// weft: device strings, the driver registry and weft_device_create.
//
// A device string is "name[://path][?key=value&key=value]". Parsing copies
// the string into the options' storage and cuts it in place, so the parsed
// names point into the options themselves (no allocation).
//
// weft_device_create uses a static const table of the built-in drivers; a
// registry instance holds any set of drivers (the built-ins for
// weft_driver_registry_create_default). Both paths share one lookup so their
// errors read the same.
#include <stdint.h>
#include <string.h>

#include "base/arguments.h"
#include "base/trace.h"
#include "hal/builtin_drivers.h"
#include "hal/diagnostics.h"
#include "weft/driver.h"

//===----------------------------------------------------------------------===//
// Device strings
//===----------------------------------------------------------------------===//

// Characters allowed in driver names and option keys.
static int weft_device_options_is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
}

// Checks that |name| is a non-empty run of name characters. |what| names the
// part ("driver name", "option key") for the message.
static weft_status_t weft_device_options_check_name(const char* device_string,
                                                    const char* what,
                                                    const char* name) {
  weft_status_t status = WEFT_OK;
  if (name[0] == '\0') {
    status = WEFT_STATUS(INVALID_ARGUMENT, "device string '%s': empty %s",
                         device_string, what);
  }
  for (const char* p = name; weft_status_is_ok(status) && *p; ++p) {
    if (!weft_device_options_is_name_char(*p)) {
      status = WEFT_STATUS(INVALID_ARGUMENT,
                           "device string '%s': %s '%s' contains '%c' "
                           "(allowed: letters, digits, '-', '_', '.')",
                           device_string, what, name, *p);
    }
  }
  return status;
}

// Splits "k=v&k2=v2" (cut in place) into |options|.
static weft_status_t weft_device_options_parse_query(
    const char* device_string, char* query, weft_device_options_t* options) {
  weft_status_t status = WEFT_OK;
  char* cursor = query;
  while (weft_status_is_ok(status) && cursor) {
    char* next = strchr(cursor, '&');
    if (next) *next++ = '\0';
    char* equals = strchr(cursor, '=');
    if (cursor[0] == '\0') {
      status = WEFT_STATUS(INVALID_ARGUMENT,
                           "device string '%s': empty option (stray '&' or "
                           "'?')",
                           device_string);
    } else if (!equals) {
      status = WEFT_STATUS(INVALID_ARGUMENT,
                           "device string '%s': option '%s' has no value "
                           "(expected '%s=VALUE')",
                           device_string, cursor, cursor);
    } else {
      *equals = '\0';
      status =
          weft_device_options_check_name(device_string, "option key", cursor);
    }
    if (weft_status_is_ok(status) &&
        weft_device_options_find(options, cursor)) {
      status = WEFT_STATUS(INVALID_ARGUMENT,
                           "device string '%s': option '%s' given twice",
                           device_string, cursor);
    }
    if (weft_status_is_ok(status) &&
        options->count == WEFT_DEVICE_OPTION_MAX_COUNT) {
      status = WEFT_STATUS(INVALID_ARGUMENT,
                           "device string '%s': more than %d options",
                           device_string, WEFT_DEVICE_OPTION_MAX_COUNT);
    }
    if (weft_status_is_ok(status)) {
      options->keys[options->count] = cursor;
      options->values[options->count] = equals + 1;
      ++options->count;
    }
    cursor = next;
  }
  return status;
}

weft_status_t weft_device_options_parse(const char* device_string,
                                        weft_device_options_t* out_options) {
  size_t length = device_string ? strlen(device_string) : 0;
  weft_status_t status = weft_arguments_require(
      __func__, "device_string,out_options",
      (const void* const[]){device_string, out_options}, 2);
  if (out_options) {
    memset(out_options, 0, sizeof(*out_options));
    out_options->driver_name = "";
    out_options->path = "";
  }
  if (!weft_status_is_ok(status)) {
    // Nothing to parse into.
  } else if (!device_string || length == 0) {
    status = WEFT_STATUS(INVALID_ARGUMENT, "device string is empty");
  } else if (length >= sizeof(out_options->storage)) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "device string is %zu bytes long; at most %zu are "
                         "accepted",
                         length, sizeof(out_options->storage) - 1);
  }
  char* query = NULL;
  if (weft_status_is_ok(status)) {
    char* storage = out_options->storage;
    memcpy(storage, device_string, length + 1);
    query = strchr(storage, '?');
    if (query) *query++ = '\0';
    char* scheme_end = strstr(storage, "://");
    if (scheme_end) {
      *scheme_end = '\0';
      out_options->path = scheme_end + 3;
    }
    out_options->driver_name = storage;
    status =
        weft_device_options_check_name(device_string, "driver name", storage);
  }
  if (weft_status_is_ok(status) && query) {
    status = weft_device_options_parse_query(device_string, query, out_options);
  }
  if (!weft_status_is_ok(status) && out_options) {
    memset(out_options, 0, sizeof(*out_options));
    out_options->driver_name = "";
    out_options->path = "";
  }
  return status;
}

const char* weft_device_options_find(const weft_device_options_t* options,
                                     const char* key) {
  const char* value = NULL;
  for (uint32_t i = 0; options && key && i < options->count && !value; ++i) {
    if (strcmp(options->keys[i], key) == 0) value = options->values[i];
  }
  return value;
}

weft_status_t weft_device_options_get_u32(const weft_device_options_t* options,
                                          const char* key,
                                          uint32_t* inout_value) {
  weft_status_t status = weft_arguments_require(
      __func__, "options,key,inout_value",
      (const void* const[]){options, key, inout_value}, 3);
  const char* text =
      weft_status_is_ok(status) ? weft_device_options_find(options, key) : NULL;
  uint64_t value = 0;
  if (!weft_status_is_ok(status) || !text) {
    // Absent: |inout_value| keeps its default.
  } else if (text[0] == '\0') {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "option '%s' is empty; expected a non-negative "
                         "integer",
                         key);
  }
  for (const char* p = text; text && weft_status_is_ok(status) && *p; ++p) {
    if (*p < '0' || *p > '9') {
      status = WEFT_STATUS(INVALID_ARGUMENT,
                           "option '%s=%s' is not a non-negative integer", key,
                           text);
    } else {
      value = value * 10 + (uint64_t)(*p - '0');
      if (value > UINT32_MAX) {
        status =
            WEFT_STATUS(INVALID_ARGUMENT, "option '%s=%s' is larger than %u",
                        key, text, (unsigned)UINT32_MAX);
      }
    }
  }
  if (text && weft_status_is_ok(status)) *inout_value = (uint32_t)value;
  return status;
}

static void weft_driver_append(char* buffer, size_t capacity,
                               const char* text);

weft_status_t weft_device_options_get_choice(
    const weft_device_options_t* options, const char* key,
    const char* const* choices, uint32_t choice_count, uint32_t* inout_index) {
  weft_status_t status = weft_arguments_require(
      __func__, "options,key,choices,inout_index",
      (const void* const[]){options, key, choices, inout_index}, 4);
  if (weft_status_is_ok(status) && choice_count == 0) {
    status = WEFT_STATUS(INVALID_ARGUMENT, "%s: option '%s' has no choices",
                         __func__, key);
  }
  const char* text =
      weft_status_is_ok(status) ? weft_device_options_find(options, key) : NULL;
  if (!text) return status;  // absent: the default stays
  char names[256] = "";
  for (uint32_t i = 0; i < choice_count; ++i) {
    if (choices[i] && strcmp(text, choices[i]) == 0) {
      *inout_index = i;
      return WEFT_OK;
    }
    if (i > 0) {
      weft_driver_append(names, sizeof(names),
                         i + 1 == choice_count ? " or " : ", ");
    }
    weft_driver_append(names, sizeof(names), "'");
    weft_driver_append(names, sizeof(names), choices[i] ? choices[i] : "");
    weft_driver_append(names, sizeof(names), "'");
  }
  return WEFT_STATUS(INVALID_ARGUMENT, "option '%s' must be %s (got '%s')",
                     key, names, text);
}

//===----------------------------------------------------------------------===//
// Driver lookup shared by the registry and weft_device_create
//===----------------------------------------------------------------------===//

// Appends |text| to |buffer| (capacity |capacity|, NUL-terminated), cutting
// it off with "..." when it does not fit.
static void weft_driver_append(char* buffer, size_t capacity,
                               const char* text) {
  size_t used = strlen(buffer);
  size_t text_length = strlen(text);
  if (used + text_length + 1 <= capacity) {
    memcpy(buffer + used, text, text_length + 1);
  } else if (capacity >= 4) {
    memcpy(buffer + capacity - 4, "...", 4);
  }
}

// The optimal string alignment distance between |a| and |b| (Levenshtein
// plus swaps of two adjacent characters: "tsak" -> "task" is 1), or
// SIZE_MAX when either is longer than the names it is meant for.
static size_t weft_driver_edit_distance(const char* a, const char* b) {
  enum { kMaxLength = 63 };
  size_t a_length = strlen(a);
  size_t b_length = strlen(b);
  if (a_length > kMaxLength || b_length > kMaxLength) return SIZE_MAX;
  // Three rows of the dynamic programme: i - 2, i - 1 and i.
  size_t rows[3][kMaxLength + 1];
  for (size_t j = 0; j <= b_length; ++j) rows[0][j] = j;
  for (size_t i = 1; i <= a_length; ++i) {
    size_t* before = rows[(i + 1) % 3];  // row i - 2
    size_t* previous = rows[(i + 2) % 3];
    size_t* current = rows[i % 3];
    current[0] = i;
    for (size_t j = 1; j <= b_length; ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      size_t best = previous[j - 1] + cost;                      // replace
      if (previous[j] + 1 < best) best = previous[j] + 1;        // delete
      if (current[j - 1] + 1 < best) best = current[j - 1] + 1;  // insert
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
          before[j - 2] + 1 < best) {
        best = before[j - 2] + 1;  // swap
      }
      current[j] = best;
    }
  }
  return rows[a_length % 3][b_length];
}

// How far |typed| is from |name| when it is a near miss worth suggesting:
// at most 2 edits and fewer than half the length of the longer of the two
// (so "d0" never suggests "d1"); SIZE_MAX otherwise. Callers keep the first
// name with the smallest distance.
static size_t weft_driver_near_miss(const char* typed, const char* name) {
  size_t distance = weft_driver_edit_distance(typed, name);
  size_t typed_length = strlen(typed);
  size_t name_length = strlen(name);
  size_t longer = typed_length > name_length ? typed_length : name_length;
  return distance <= 2 && distance * 2 < longer ? distance : SIZE_MAX;
}

// Checks the path and every option of |options| against what |driver|
// accepts.
static weft_status_t weft_driver_check_options(
    const weft_driver_t* driver, const char* device_string,
    const weft_device_options_t* options) {
  weft_status_t status = WEFT_OK;
  if (!driver->accepts_path && options->path[0] != '\0') {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "device string '%s': driver '%s' takes no path "
                         "(got '%s')",
                         device_string, driver->name, options->path);
  }
  for (uint32_t i = 0; i < options->count && weft_status_is_ok(status); ++i) {
    int accepted = 0;
    for (const char* const* name = driver->option_names; name && *name;
         ++name) {
      if (strcmp(*name, options->keys[i]) == 0) accepted = 1;
    }
    if (!accepted) {
      char list[256] = "";
      const char* suggestion = NULL;
      size_t best_distance = SIZE_MAX;
      for (const char* const* name = driver->option_names; name && *name;
           ++name) {
        if (list[0]) weft_driver_append(list, sizeof(list), ", ");
        weft_driver_append(list, sizeof(list), *name);
        size_t distance = weft_driver_near_miss(options->keys[i], *name);
        if (distance < best_distance) {
          suggestion = *name;
          best_distance = distance;
        }
      }
      status = WEFT_STATUS(INVALID_ARGUMENT,
                           "driver '%s' does not accept option '%s'; "
                           "accepted: %s%s%s%s",
                           driver->name, options->keys[i],
                           list[0] ? list : "(none)",
                           suggestion ? "; did you mean '" : "",
                           suggestion ? suggestion : "",
                           suggestion ? "'?" : "");
    }
  }
  return status;
}

// Parses |device_string|, finds its driver among |drivers| and creates the
// device. |function| names the public caller in argument errors.
static weft_status_t weft_driver_list_create_device(
    const char* function, const weft_driver_t* const* drivers,
    uint32_t driver_count, const char* device_string,
    weft_allocator_t allocator, weft_device_t** out_device) {
  // The options are ~1 KiB: fine on the stack of a create call.
  weft_device_options_t options;
  if (out_device) *out_device = NULL;
  weft_status_t status = weft_arguments_require(
      function, "device_string,out_device",
      (const void* const[]){device_string, out_device}, 2);
  if (weft_status_is_ok(status)) {
    status = weft_device_options_parse(device_string, &options);
  }
  const weft_driver_t* driver = NULL;
  for (uint32_t i = 0; weft_status_is_ok(status) && i < driver_count; ++i) {
    if (strcmp(drivers[i]->name, options.driver_name) == 0) {
      driver = drivers[i];
      break;
    }
  }
  if (weft_status_is_ok(status) && !driver) {
    char list[256] = "";
    const char* suggestion = NULL;
    size_t best_distance = SIZE_MAX;
    for (uint32_t i = 0; i < driver_count; ++i) {
      if (list[0]) weft_driver_append(list, sizeof(list), ", ");
      weft_driver_append(list, sizeof(list), drivers[i]->name);
      size_t distance =
          weft_driver_near_miss(options.driver_name, drivers[i]->name);
      if (distance < best_distance) {
        suggestion = drivers[i]->name;
        best_distance = distance;
      }
    }
    status = WEFT_STATUS(NOT_FOUND,
                         "no driver named '%s'; known drivers: %s%s%s%s",
                         options.driver_name, list[0] ? list : "(none)",
                         suggestion ? "; did you mean '" : "",
                         suggestion ? suggestion : "",
                         suggestion ? "'?" : "");
  }
  if (weft_status_is_ok(status)) {
    status = weft_driver_check_options(driver, device_string, &options);
  }
  if (weft_status_is_ok(status)) {
    weft_diagnostics_initialize_from_environment();
    weft_trace_initialize_from_environment();
    status = driver->create_device(driver, device_string, &options, allocator,
                                   out_device);
  }
  if (weft_status_is_ok(status)) {
    weft_diagnostics_register_device(*out_device);
  }
  return status;
}

weft_status_t weft_device_create(const char* device_string,
                                 weft_allocator_t allocator,
                                 weft_device_t** out_device) {
  uint32_t driver_count = 0;
  const weft_driver_t* const* drivers = weft_builtin_drivers(&driver_count);
  return weft_driver_list_create_device(__func__, drivers, driver_count,
                                        device_string, allocator, out_device);
}

//===----------------------------------------------------------------------===//
// weft_driver_registry_t
//===----------------------------------------------------------------------===//

struct weft_driver_registry_t {
  weft_allocator_t allocator;
  uint32_t count;
  uint32_t capacity;
  const weft_driver_t** drivers;
};

weft_status_t weft_driver_registry_create(
    weft_allocator_t allocator, weft_driver_registry_t** out_registry) {
  weft_driver_registry_t* registry = NULL;
  weft_status_t status = WEFT_OK;
  if (!out_registry) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "weft_driver_registry_create: out_registry is NULL");
  } else {
    *out_registry = NULL;
    status =
        weft_allocator_malloc(allocator, sizeof(*registry), (void**)&registry);
  }
  if (weft_status_is_ok(status)) {
    registry->allocator = allocator;
    *out_registry = registry;
  }
  return status;
}

weft_status_t weft_driver_registry_create_default(
    weft_allocator_t allocator, weft_driver_registry_t** out_registry) {
  weft_driver_registry_t* registry = NULL;
  if (out_registry) *out_registry = NULL;
  weft_status_t status = weft_arguments_require(
      __func__, "out_registry", (const void* const[]){out_registry}, 1);
  if (weft_status_is_ok(status)) {
    status = weft_driver_registry_create(allocator, &registry);
  }
  uint32_t driver_count = 0;
  const weft_driver_t* const* drivers = weft_builtin_drivers(&driver_count);
  for (uint32_t i = 0; weft_status_is_ok(status) && i < driver_count; ++i) {
    status = weft_driver_registry_register(registry, drivers[i]);
  }
  if (weft_status_is_ok(status)) {
    *out_registry = registry;
  } else {
    weft_driver_registry_release(registry);
  }
  return status;
}

void weft_driver_registry_release(weft_driver_registry_t* registry) {
  if (registry) {
    weft_allocator_t allocator = registry->allocator;
    weft_allocator_free(allocator, registry->drivers);
    weft_allocator_free(allocator, registry);
  }
}

weft_status_t weft_driver_registry_register(weft_driver_registry_t* registry,
                                            const weft_driver_t* driver) {
  weft_status_t status = weft_arguments_require(
      __func__, "registry,driver", (const void* const[]){registry, driver}, 2);
  if (weft_status_is_ok(status) && (!driver->name || !driver->create_device)) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "weft_driver_registry_register: driver->%s is NULL",
                         driver->name ? "create_device" : "name");
  } else if (weft_status_is_ok(status)) {
    status = weft_device_options_check_name(driver->name, "driver name",
                                            driver->name);
  }
  for (uint32_t i = 0; weft_status_is_ok(status) && i < registry->count; ++i) {
    if (strcmp(registry->drivers[i]->name, driver->name) == 0) {
      status = WEFT_STATUS(ALREADY_EXISTS,
                           "a driver named '%s' is already registered",
                           driver->name);
    }
  }
  if (weft_status_is_ok(status) && registry->count == registry->capacity) {
    uint32_t new_capacity = registry->capacity ? registry->capacity * 2 : 4;
    void* drivers = (void*)registry->drivers;
    status = weft_allocator_realloc(registry->allocator,
                                    new_capacity * sizeof(registry->drivers[0]),
                                    &drivers);
    if (weft_status_is_ok(status)) {
      registry->drivers = (const weft_driver_t**)drivers;
      registry->capacity = new_capacity;
    }
  }
  if (weft_status_is_ok(status)) {
    registry->drivers[registry->count++] = driver;
  }
  return status;
}

uint32_t weft_driver_registry_count(const weft_driver_registry_t* registry) {
  return registry ? registry->count : 0;
}

const weft_driver_t* weft_driver_registry_get(
    const weft_driver_registry_t* registry, uint32_t index) {
  return registry && index < registry->count ? registry->drivers[index] : NULL;
}

weft_status_t weft_driver_registry_create_device(
    weft_driver_registry_t* registry, const char* device_string,
    weft_allocator_t allocator, weft_device_t** out_device) {
  if (out_device) *out_device = NULL;
  weft_status_t status = weft_arguments_require(
      __func__, "registry", (const void* const[]){registry}, 1);
  if (weft_status_is_ok(status)) {
    status = weft_driver_list_create_device(
        __func__, registry->drivers, registry->count, device_string,
        allocator, out_device);
  }
  return status;
}
