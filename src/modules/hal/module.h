// weft hal module: the VM's access to the HAL.
//
// A native module named "hal" whose functions (docs/VM.md, "The hal
// module", has the table) create devices, semaphores, fences, buffers,
// buffer views, executables, command buffers and files, run every queue
// operation with a wait fence and a signal fence, and await fences and
// semaphores as coroutine yields: an await whose sources are not all
// reached enters a wait frame and returns DEFERRED, so the same function
// blocks in place under weft_vm_invoke_sync and parks the invocation on
// the loop (vm/loop.h). HAL errors reach the program as they are (the VM
// adds its stack); bad arguments are INVALID_ARGUMENT naming the function
// and the argument.
//
// Each context linking the module gets a state holding the default device
// (retained); the module itself keeps its options (a copy) until its last
// reference goes.
#ifndef WEFT_MODULES_HAL_MODULE_H_
#define WEFT_MODULES_HAL_MODULE_H_

#include <stdint.h>

#include "modules/hal/ref_types.h"
#include "vm/module.h"
#include "weft/device.h"
#include "weft/kernel_abi.h"

// A statically linked kernel library that programs open by name with
// hal.executable.static.
typedef struct weft_hal_static_library_t {
  const char* name;  // copied
  weft_kernel_library_query_fn_t query;
} weft_hal_static_library_t;

typedef struct weft_hal_module_options_t {
  // The device hal.device.default returns (retained by the module and by
  // each context's state). May be NULL.
  weft_device_t* device;
  // Or a device string ("local-task?workers=4") the module opens once, at
  // creation, for hal.device.default. May be NULL. Giving both |device| and
  // |device_string| is INVALID_ARGUMENT; giving neither leaves the module
  // without a default device (hal.device.default then fails with
  // FAILED_PRECONDITION; hal.device.open still works).
  const char* device_string;
  // Kernel libraries for hal.executable.static (copied; names must be
  // unique and non-empty). |static_libraries| may be NULL when
  // |static_library_count| is 0.
  uint32_t static_library_count;
  const weft_hal_static_library_t* static_libraries;
} weft_hal_module_options_t;

// Creates the "hal" native module with |options| (copied; |options| may be
// NULL: no default device, no static libraries). Fails with the device's
// error (annotated with the string) when |device_string| does not open,
// INVALID_ARGUMENT for contradicting options or a bad library entry. One
// reference (weft_vm_module_release).
weft_status_t weft_hal_module_create(const weft_hal_module_options_t* options,
                                     weft_allocator_t allocator,
                                     weft_vm_module_t** out_module);

#endif  // WEFT_MODULES_HAL_MODULE_H_
