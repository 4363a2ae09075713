// weft: drivers and the driver registry.
//
// A driver creates devices from a device string "name[://path][?k=v&k=v]".
// The registry is an instance (no process-global state); weft_device_create
// uses the built-in drivers.
//
// NULL: pointer arguments are required unless the function's comment says
// "|x| may be NULL" (see "NULL arguments" in weft/status.h).
#ifndef WEFT_DRIVER_H_
#define WEFT_DRIVER_H_

#include <stdbool.h>
#include <stdint.h>

#include "weft/allocator.h"
#include "weft/device.h"
#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_DEVICE_OPTION_MAX_COUNT 16

// A parsed device string. Strings point into |storage|.
typedef struct weft_device_options_t {
  const char* driver_name;
  const char* path;  // after "://", "" when absent
  uint32_t count;
  const char* keys[WEFT_DEVICE_OPTION_MAX_COUNT];
  const char* values[WEFT_DEVICE_OPTION_MAX_COUNT];
  char storage[512];
} weft_device_options_t;

// Parses |device_string|. INVALID_ARGUMENT on malformed strings, too many
// options or strings longer than the storage.
weft_status_t weft_device_options_parse(const char* device_string,
                                        weft_device_options_t* out_options);

// Returns the value of |key| or NULL (also when either argument is NULL).
const char* weft_device_options_find(const weft_device_options_t* options,
                                     const char* key);

// Parses option |key| as a non-negative integer into |inout_value|, which
// holds the default and is left unchanged when the option is absent or
// malformed (INVALID_ARGUMENT naming the key).
weft_status_t weft_device_options_get_u32(const weft_device_options_t* options,
                                          const char* key,
                                          uint32_t* inout_value);

// Parses option |key| as one of the |choice_count| names in |choices| into
// |inout_index| (the name's index), which holds the default and is left
// unchanged when the option is absent. Any other value is INVALID_ARGUMENT
// naming the key, the choices and the value: "option 'semaphores' must be
// 'events' or 'memory' (got 'words')".
weft_status_t weft_device_options_get_choice(
    const weft_device_options_t* options, const char* key,
    const char* const* choices, uint32_t choice_count, uint32_t* inout_index);

typedef struct weft_driver_t weft_driver_t;

struct weft_driver_t {
  const char* name;
  const char* description;
  // NULL-terminated list of the option keys this driver accepts.
  const char* const* option_names;
  // Creates a device from |options| (already checked against option_names,
  // and to have no path unless |accepts_path|).
  weft_status_t (*create_device)(const weft_driver_t* driver,
                                 const char* device_string,
                                 const weft_device_options_t* options,
                                 weft_allocator_t allocator,
                                 weft_device_t** out_device);
  // Whether a device string may have a path ("driver://path"); when false
  // (the default) one with a path is INVALID_ARGUMENT before create_device.
  bool accepts_path;
};

typedef struct weft_driver_registry_t weft_driver_registry_t;

// Creates an empty registry.
weft_status_t weft_driver_registry_create(
    weft_allocator_t allocator, weft_driver_registry_t** out_registry);
// Creates a registry holding the built-in drivers.
weft_status_t weft_driver_registry_create_default(
    weft_allocator_t allocator, weft_driver_registry_t** out_registry);
void weft_driver_registry_release(weft_driver_registry_t* registry);

// Registers |driver| (borrowed; must outlive the registry).
// ALREADY_EXISTS when the name is taken.
weft_status_t weft_driver_registry_register(weft_driver_registry_t* registry,
                                            const weft_driver_t* driver);

uint32_t weft_driver_registry_count(const weft_driver_registry_t* registry);
const weft_driver_t* weft_driver_registry_get(
    const weft_driver_registry_t* registry, uint32_t index);

// Creates a device from |device_string| with a registered driver. As with
// weft_device_create, an unknown driver is NOT_FOUND and an option the
// driver does not accept INVALID_ARGUMENT; both messages list the known
// names and end with "did you mean 'NAME'?" for a near miss (at most two
// edits, a swap of neighbours counting as one, and fewer than half the
// longer name's length; the closest wins, the first listed on a tie).
weft_status_t weft_driver_registry_create_device(
    weft_driver_registry_t* registry, const char* device_string,
    weft_allocator_t allocator, weft_device_t** out_device);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_DRIVER_H_
