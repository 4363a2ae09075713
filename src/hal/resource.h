// weft: the ref-counted base every HAL object embeds at offset 0.
//
// The object's vtable pointer lives in the resource; each vtable starts with
// the object's destroy function, so retain/release work for every type. The
// type id says what the object is, so a generic reference (a VM register, a
// list of objects) can be checked before it is cast.
#ifndef WEFT_HAL_RESOURCE_H_
#define WEFT_HAL_RESOURCE_H_

#include <stdbool.h>

#include "base/atomics.h"

typedef enum weft_resource_type_e {
  WEFT_RESOURCE_TYPE_NONE = 0,
  WEFT_RESOURCE_TYPE_DEVICE,
  WEFT_RESOURCE_TYPE_BUFFER,
  WEFT_RESOURCE_TYPE_SEMAPHORE,
  WEFT_RESOURCE_TYPE_FENCE,
  WEFT_RESOURCE_TYPE_EXECUTABLE,
  WEFT_RESOURCE_TYPE_COMMAND_BUFFER,
  WEFT_RESOURCE_TYPE_FILE,
  WEFT_RESOURCE_TYPE_CHANNEL,
  WEFT_RESOURCE_TYPE_COUNT_,
} weft_resource_type_t;

typedef struct weft_resource_t {
  weft_ref_count_t ref_count;
  weft_resource_type_t type;
  // Points at a vtable whose first member is a weft_resource_destroy_fn_t.
  const void* vtable;
} weft_resource_t;

// "buffer", "semaphore", ... ("none" for NONE or out of range).
const char* weft_resource_type_name(weft_resource_type_t type);

// The type of |object| (which starts with a weft_resource_t), NONE for
// NULL.
static inline weft_resource_type_t weft_resource_type(const void* object) {
  return object ? ((const weft_resource_t*)object)->type
                : WEFT_RESOURCE_TYPE_NONE;
}

// True when |object| is non-NULL and of |type|.
static inline bool weft_resource_is(const void* object,
                                    weft_resource_type_t type) {
  return object && ((const weft_resource_t*)object)->type == type;
}

typedef void (*weft_resource_destroy_fn_t)(void* object);

static inline void weft_resource_initialize(weft_resource_type_t type,
                                            const void* vtable,
                                            weft_resource_t* out_resource) {
  weft_ref_count_init(&out_resource->ref_count);
  out_resource->type = type;
  out_resource->vtable = vtable;
}

// |object| must start with a weft_resource_t. NULL is a no-op.
static inline void weft_resource_retain(void* object) {
  if (object) weft_ref_count_inc(&((weft_resource_t*)object)->ref_count);
}

static inline void weft_resource_release(void* object) {
  if (object && weft_ref_count_dec(&((weft_resource_t*)object)->ref_count)) {
    weft_resource_destroy_fn_t destroy =
        *(const weft_resource_destroy_fn_t*)((weft_resource_t*)object)->vtable;
    destroy(object);
  }
}

#endif  // WEFT_HAL_RESOURCE_H_
