// weft: the built-in drivers (see hal/builtin_drivers.h).
#include "hal/builtin_drivers.h"

#include "drivers/local_sync/local_sync_driver.h"
#include "drivers/local_task/local_task_driver.h"
#if defined(WEFT_HAVE_CUDA)
#include "drivers/cuda/cuda_driver.h"
#endif
#if defined(WEFT_HAVE_VULKAN)
#include "drivers/vulkan/vulkan_driver.h"
#endif

static const weft_driver_t* const kWeftBuiltinDrivers[] = {
    &weft_local_sync_driver,
    &weft_local_task_driver,
#if defined(WEFT_HAVE_CUDA)
    &weft_cuda_driver,
#endif
#if defined(WEFT_HAVE_VULKAN)
    &weft_vulkan_driver,
#endif
};

const weft_driver_t* const* weft_builtin_drivers(uint32_t* out_count) {
  *out_count =
      (uint32_t)(sizeof(kWeftBuiltinDrivers) / sizeof(kWeftBuiltinDrivers[0]));
  return kWeftBuiltinDrivers;
}
