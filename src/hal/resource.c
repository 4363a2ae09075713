// weft: resource type names and domains (see resource.h and domain.h).
#include "hal/resource.h"

#include "hal/domain.h"

const char* weft_resource_type_name(weft_resource_type_t type) {
  static const char* const kNames[] = {
      "none",  "device",     "buffer",         "semaphore",
      "fence", "executable", "command buffer", "file",  "channel",
  };
  _Static_assert(
      sizeof(kNames) / sizeof(kNames[0]) == WEFT_RESOURCE_TYPE_COUNT_,
      "one name per resource type");
  return (unsigned)type < WEFT_RESOURCE_TYPE_COUNT_ ? kNames[type] : "none";
}

weft_domain_t weft_domain_next(void) {
  static weft_atomic_uint64_t next_domain = WEFT_DOMAIN_HOST + 1;
  // Relaxed: only uniqueness matters.
  return weft_atomic_fetch_add(&next_domain, 1, memory_order_relaxed);
}
