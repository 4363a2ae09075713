// weft VM: the declared names and tensor types of a function's values.
//
// A bytecode function may declare, for each argument and result, a name
// and, for a buffer view (r<hal.buffer_view> or r), a tensor type: an
// element type, a rank and per dimension a static size, '?' (any size) or
// a symbol that every value of the function using it must agree on
// (docs/VM.md, "Declarations"):
//
//   func @forward(r<hal.buffer_view>, r<hal.buffer_view>) -> (r<hal.buffer_view>)
//     arg x: K f32
//     arg w: KxN f32
//     result y: N f32
//
// The module keeps them (text and binary formats alike) and validates
// them at load; nothing in the VM acts on them. The hal module's checker
// (weft_hal_check_arguments in weft/vm/hal.h) compares buffer views
// against them, e.g. before weft-run calls a function.
//
// NULL: pointer arguments are required unless the function's comment says
// "|x| may be NULL" (see "NULL arguments" in weft/status.h).
#ifndef WEFT_VM_TENSOR_TYPE_H_
#define WEFT_VM_TENSOR_TYPE_H_

#include <stdbool.h>
#include <stdint.h>

#include "weft/vm/module.h"

#ifdef __cplusplus
extern "C" {
#endif

// Element types, numbered as the hal module's weft_hal_element_type_t
// (src/modules/hal/element_type.c asserts that they match).
typedef enum weft_vm_element_type_e {
  WEFT_VM_ELEMENT_TYPE_NONE = 0,  // no tensor type declared
  WEFT_VM_ELEMENT_TYPE_F16 = 1,
  WEFT_VM_ELEMENT_TYPE_F32 = 2,
  WEFT_VM_ELEMENT_TYPE_F64 = 3,
  WEFT_VM_ELEMENT_TYPE_I8 = 4,
  WEFT_VM_ELEMENT_TYPE_I16 = 5,
  WEFT_VM_ELEMENT_TYPE_I32 = 6,
  WEFT_VM_ELEMENT_TYPE_I64 = 7,
  WEFT_VM_ELEMENT_TYPE_U8 = 8,
  WEFT_VM_ELEMENT_TYPE_U16 = 9,
  WEFT_VM_ELEMENT_TYPE_U32 = 10,
  WEFT_VM_ELEMENT_TYPE_U64 = 11,
  WEFT_VM_ELEMENT_TYPE_COUNT_ = 12,
} weft_vm_element_type_t;

// The most dimensions a declared tensor type has (the hal module's buffer
// views have as many).
#define WEFT_VM_TENSOR_MAX_RANK 8
// The most symbols one function uses.
#define WEFT_VM_TENSOR_MAX_SYMBOLS 64

// What a declared dimension says.
typedef enum weft_vm_dim_kind_e {
  WEFT_VM_DIM_STATIC = 0,   // exactly |size|
  WEFT_VM_DIM_DYNAMIC = 1,  // any size ('?')
  WEFT_VM_DIM_SYMBOL = 2,   // the size of symbol |symbol|, whatever it is
} weft_vm_dim_kind_t;

typedef struct weft_vm_dim_t {
  weft_vm_dim_kind_t kind;
  int64_t size;             // STATIC: the size (>= 0); else 0
  uint32_t symbol;          // SYMBOL: the function's symbol index; else 0
  const char* symbol_name;  // SYMBOL: its name ("K"); else NULL
} weft_vm_dim_t;

// A tensor type: |element_type| NONE (and rank 0) when none is declared.
typedef struct weft_vm_tensor_type_t {
  weft_vm_element_type_t element_type;
  uint32_t rank;
  weft_vm_dim_t dims[WEFT_VM_TENSOR_MAX_RANK];  // the first |rank|
} weft_vm_tensor_type_t;

// One argument's or result's declaration. Strings are the module's (valid
// while it is).
typedef struct weft_vm_value_decl_t {
  const char* name;  // "x"; "" when nothing is declared
  weft_vm_tensor_type_t type;
} weft_vm_value_decl_t;

// Which of a function's values.
typedef enum weft_vm_value_role_e {
  WEFT_VM_VALUE_ARGUMENT = 0,
  WEFT_VM_VALUE_RESULT = 1,
} weft_vm_value_role_t;

// "f32", "i8", ...: the text format's names ("none" for NONE and for any
// value that is not an element type).
const char* weft_vm_element_type_name(weft_vm_element_type_t type);

// Reads the declaration of argument (|role| ARGUMENT) or result |index| of
// function |function| of |module| into |*out_decl| and returns true. A
// function declares all its arguments or none, and all its results or
// none; returns false, with |*out_decl| empty (name "", no tensor type),
// when they are not declared, for a native module's function and past the
// counts.
bool weft_vm_module_function_value_decl(const weft_vm_module_t* module,
                                        uint32_t function,
                                        weft_vm_value_role_t role,
                                        uint32_t index,
                                        weft_vm_value_decl_t* out_decl);

// The number of symbols function |function| of |module| uses (symbol
// indices are below it, numbered in order of first use, arguments before
// results); 0 without declarations and past the count.
uint32_t weft_vm_module_function_symbol_count(const weft_vm_module_t* module,
                                              uint32_t function);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_VM_TENSOR_TYPE_H_
