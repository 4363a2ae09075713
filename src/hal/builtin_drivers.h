// weft: the drivers weft_device_create knows without a registry.
//
// Declared here for the HAL and defined by the drivers layer
// (src/drivers/builtin_drivers.c), so the HAL core names no driver: a build
// adds or leaves out a driver there alone.
#ifndef WEFT_HAL_BUILTIN_DRIVERS_H_
#define WEFT_HAL_BUILTIN_DRIVERS_H_

#include <stdint.h>

#include "weft/driver.h"

// The built-in drivers, in the order messages list them; |*out_count|
// receives how many.
const weft_driver_t* const* weft_builtin_drivers(uint32_t* out_count);

#endif  // WEFT_HAL_BUILTIN_DRIVERS_H_
