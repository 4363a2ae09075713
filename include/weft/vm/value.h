// weft VM: values and refs.
//
// A value is tagged: an i32, i64, f32 or f64 scalar, or a ref. A ref is a
// counted reference to an object of a registered type: the type's
// descriptor says its name (what signatures check: "r<list>") and how to
// retain and release the object. The VM's own objects (lists and bytes,
// weft/vm/list.h) count themselves; a native module declares a descriptor
// for each type of object it hands to programs (weft/vm/hal.h has the hal
// module's).
//
// Values are plain structs: copying one copies a ref without counting it.
// Who owns a ref in a value is said by each function taking or returning
// values (arguments are borrowed, results are the caller's).
//
// NULL: pointer arguments are required unless the function's comment says
// "|x| may be NULL" (see "NULL arguments" in weft/status.h).
#ifndef WEFT_VM_VALUE_H_
#define WEFT_VM_VALUE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

// The type of a value (and of a register, argument or result).
typedef enum weft_vm_value_type_e {
  WEFT_VM_TYPE_I32 = 0,
  WEFT_VM_TYPE_I64 = 1,
  WEFT_VM_TYPE_F32 = 2,
  WEFT_VM_TYPE_F64 = 3,
  WEFT_VM_TYPE_REF = 4,
  WEFT_VM_TYPE_COUNT_ = 5,
} weft_vm_value_type_t;

// Returns "i32", "i64", "f32", "f64" or "ref" ("?" for any other |type|).
const char* weft_vm_value_type_name(weft_vm_value_type_t type);

// True for the types held in the scalar register file (all but REF).
static inline bool weft_vm_value_type_is_scalar(weft_vm_value_type_t type) {
  return type != WEFT_VM_TYPE_REF;
}

// A registered ref type: its name as signatures write it ("list",
// "hal.buffer" for r<hal.buffer>) and how to count its objects. A
// descriptor is compared by address, so each type has exactly one, and it
// must outlive every ref of its type (a static const in practice).
typedef struct weft_vm_ref_type_t {
  const char* name;
  void (*retain)(void* object);
  void (*release)(void* object);
} weft_vm_ref_type_t;

// A reference to |object| of |type|; the null ref has a NULL object (and
// a NULL type).
typedef struct weft_vm_ref_t {
  void* object;
  const weft_vm_ref_type_t* type;
} weft_vm_ref_t;

// A value of any type, tagged: lists' elements, invocations' arguments and
// results, native functions' arguments and results.
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

// The null ref.
static inline weft_vm_ref_t weft_vm_ref_null(void) {
  weft_vm_ref_t ref;
  ref.object = NULL;
  ref.type = NULL;
  return ref;
}

// True for the null ref.
static inline bool weft_vm_ref_is_null(weft_vm_ref_t ref) {
  return ref.object == NULL;
}

// A ref to |object| of |type| as it is (no reference is taken); a NULL
// |object| gives the null ref.
static inline weft_vm_ref_t weft_vm_ref_wrap(void* object,
                                             const weft_vm_ref_type_t* type) {
  weft_vm_ref_t ref;
  ref.object = object;
  ref.type = object ? type : NULL;
  return ref;
}

// The object of |ref| when it is a ref of |type|, NULL otherwise (the null
// ref, or another type). Borrowed.
static inline void* weft_vm_ref_unwrap(weft_vm_ref_t ref,
                                       const weft_vm_ref_type_t* type) {
  return type && ref.object && ref.type == type ? ref.object : NULL;
}

// Adds a reference to |ref|'s object (nothing for the null ref).
static inline void weft_vm_ref_retain(weft_vm_ref_t ref) {
  if (ref.object) ref.type->retain(ref.object);
}

// Drops a reference to |ref|'s object (nothing for the null ref).
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

// Moves |*from| into |*slot| (no count change), leaving |*from| null and
// releasing what |*slot| held.
static inline void weft_vm_ref_move(weft_vm_ref_t* slot, weft_vm_ref_t* from) {
  weft_vm_ref_t old = *slot;
  *slot = *from;
  *from = weft_vm_ref_null();
  weft_vm_ref_release(old);
}

// A zero value of |type| (0, or the null ref for REF), every bit zeroed.
static inline weft_vm_value_t weft_vm_value_zero(weft_vm_value_type_t type) {
  weft_vm_value_t value;
  memset(&value, 0, sizeof(value));
  value.type = type;
  return value;
}

// Values of each type.
static inline weft_vm_value_t weft_vm_value_i32(int32_t i32) {
  weft_vm_value_t value = weft_vm_value_zero(WEFT_VM_TYPE_I32);
  value.i32 = i32;
  return value;
}

static inline weft_vm_value_t weft_vm_value_i64(int64_t i64) {
  weft_vm_value_t value = weft_vm_value_zero(WEFT_VM_TYPE_I64);
  value.i64 = i64;
  return value;
}

static inline weft_vm_value_t weft_vm_value_f32(float f32) {
  weft_vm_value_t value = weft_vm_value_zero(WEFT_VM_TYPE_F32);
  value.f32 = f32;
  return value;
}

static inline weft_vm_value_t weft_vm_value_f64(double f64) {
  weft_vm_value_t value = weft_vm_value_zero(WEFT_VM_TYPE_F64);
  value.f64 = f64;
  return value;
}

// A ref value holding |ref| as it is (no reference is taken).
static inline weft_vm_value_t weft_vm_value_ref(weft_vm_ref_t ref) {
  weft_vm_value_t value = weft_vm_value_zero(WEFT_VM_TYPE_REF);
  value.ref = ref;
  return value;
}

// Releases the ref |*value| holds, if any, and leaves it i32 0: how a
// caller drops the results it owns. |value| may be NULL (nothing happens).
static inline void weft_vm_value_release(weft_vm_value_t* value) {
  if (!value) return;
  if (value->type == WEFT_VM_TYPE_REF) weft_vm_ref_release(value->ref);
  *value = weft_vm_value_zero(WEFT_VM_TYPE_I32);
}

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_VM_VALUE_H_
