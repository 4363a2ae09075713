// weft: the ref-counted base every HAL object embeds at offset 0.
//
// The object's vtable pointer lives in the resource; each vtable starts with
// the object's destroy function, so retain/release work for every type.
#ifndef WEFT_HAL_RESOURCE_H_
#define WEFT_HAL_RESOURCE_H_

#include "base/atomics.h"

typedef struct weft_resource_t {
  weft_ref_count_t ref_count;
  // Points at a vtable whose first member is a weft_resource_destroy_fn_t.
  const void* vtable;
} weft_resource_t;

typedef void (*weft_resource_destroy_fn_t)(void* object);

static inline void weft_resource_initialize(const void* vtable,
                                            weft_resource_t* out_resource) {
  weft_ref_count_init(&out_resource->ref_count);
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
