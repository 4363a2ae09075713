// weft VM: values and refs.
//
// A ref is a counted reference to an object of a registered type: the
// type's descriptor says its name (what signatures check: "r<list>") and
// how to retain and release the object. The VM's own objects (lists, byte
// buffers) count themselves; a native module registers descriptors for its
// objects (the hal module's retain and release HAL resources).
#ifndef WEFT_VM_VALUE_H_
#define WEFT_VM_VALUE_H_

#include <stdbool.h>
#include <stdint.h>

#include "vm/bytecode.h"

typedef struct weft_vm_ref_type_t {
  const char* name;  // "list", "bytes", "hal.buffer"
  void (*retain)(void* object);
  void (*release)(void* object);
} weft_vm_ref_type_t;

typedef struct weft_vm_ref_t {
  void* object;  // NULL: the null ref
  const weft_vm_ref_type_t* type;
} weft_vm_ref_t;

// A value of any type, tagged (lists, invocation arguments and results).
typedef struct weft_vm_value_t {
  weft_vm_value_type_t type;
  union {
    int32_t i32;
    int64_t i64;
    float f32;
    double f64;
    uint64_t bits;
    weft_vm_ref_t ref;
  };
} weft_vm_value_t;

static inline weft_vm_ref_t weft_vm_ref_null(void) {
  weft_vm_ref_t ref = {NULL, NULL};
  return ref;
}

static inline bool weft_vm_ref_is_null(weft_vm_ref_t ref) {
  return ref.object == NULL;
}

static inline void weft_vm_ref_retain(weft_vm_ref_t ref) {
  if (ref.object) ref.type->retain(ref.object);
}

static inline void weft_vm_ref_release(weft_vm_ref_t ref) {
  if (ref.object) ref.type->release(ref.object);
}

// Stores |value| (retained) in |*slot|, releasing what was there.
static inline void weft_vm_ref_assign(weft_vm_ref_t* slot,
                                      weft_vm_ref_t value) {
  weft_vm_ref_retain(value);
  weft_vm_ref_t old = *slot;
  *slot = value;
  weft_vm_ref_release(old);
}

// Moves |*from| into |*slot| (no count change), leaving |*from| null.
static inline void weft_vm_ref_move(weft_vm_ref_t* slot, weft_vm_ref_t* from) {
  weft_vm_ref_t old = *slot;
  *slot = *from;
  *from = weft_vm_ref_null();
  weft_vm_ref_release(old);
}

#endif  // WEFT_VM_VALUE_H_
