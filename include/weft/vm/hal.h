// weft VM: the hal module, programs' access to the HAL.
//
// A native module named "hal" whose functions (docs/VM.md, "The hal
// module", lists them) create devices, semaphores, fences, buffers,
// buffer views, executables, command buffers and files, run every queue
// operation with a wait fence and a signal fence, and await fences and
// semaphores as coroutine yields (blocking in place under
// weft_vm_invoke_sync, parking the invocation on the loop). HAL errors
// reach the program as they are; bad arguments are INVALID_ARGUMENT naming
// the function and the argument.
//
// C code hands HAL objects to programs as refs (weft_hal_module_wrap) and
// reads them back from results (weft_hal_module_unwrap). Tensors travel as
// buffer views: a buffer, a byte offset, an element type and a shape; a
// caller checks them against the tensor types a function declares with
// weft_hal_check_arguments and weft_hal_check_results.
//
// NULL: pointer arguments are required unless the function's comment says
// "|x| may be NULL" (see "NULL arguments" in weft/status.h).
#ifndef WEFT_VM_HAL_H_
#define WEFT_VM_HAL_H_

#include <stdbool.h>
#include <stdint.h>

#include "weft/allocator.h"
#include "weft/buffer.h"
#include "weft/device.h"
#include "weft/kernel_abi.h"
#include "weft/status.h"
#include "weft/vm/module.h"
#include "weft/vm/tensor_type.h"
#include "weft/vm/value.h"

#ifdef __cplusplus
extern "C" {
#endif

//===----------------------------------------------------------------------===//
// The module
//===----------------------------------------------------------------------===//

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

// Creates the "hal" native module with |options| (copied). Fails with the
// device's error (annotated with the string) when |device_string| does not
// open, INVALID_ARGUMENT for contradicting options or a bad library entry.
// The caller owns the one reference (weft_vm_module_release); each context
// linking it holds another. |options| may be NULL: no default device, no
// static libraries.
weft_status_t weft_hal_module_create(const weft_hal_module_options_t* options,
                                     weft_allocator_t allocator,
                                     weft_vm_module_t** out_module);

//===----------------------------------------------------------------------===//
// Refs of HAL objects
//===----------------------------------------------------------------------===//

// One ref type per HAL object type, named as signatures write them
// (r<hal.buffer>), counted through the type's retain and release.
extern const weft_vm_ref_type_t kWeftHalDeviceType;         // weft_device_t
extern const weft_vm_ref_type_t kWeftHalBufferType;         // weft_buffer_t
extern const weft_vm_ref_type_t kWeftHalBufferViewType;     // buffer views
extern const weft_vm_ref_type_t kWeftHalSemaphoreType;      // weft_semaphore_t
extern const weft_vm_ref_type_t kWeftHalFenceType;          // weft_fence_t
extern const weft_vm_ref_type_t kWeftHalExecutableType;     // weft_executable_t
extern const weft_vm_ref_type_t kWeftHalCommandBufferType;  // command buffers
extern const weft_vm_ref_type_t kWeftHalFileType;           // weft_file_t

// A ref to HAL object |object| (a weft_device_t*, weft_buffer_t*,
// weft_semaphore_t*, weft_fence_t*, weft_executable_t*,
// weft_command_buffer_t* or weft_file_t*), typed by what it is. Borrowed:
// no reference is taken, so the ref is valid while the caller holds
// |object| (arguments are retained by the call they are passed to). An
// object of no HAL type is INVALID_ARGUMENT naming its type id (and
// *out_ref is null). |object| may be NULL: the null ref.
weft_status_t weft_hal_module_wrap(void* object, weft_vm_ref_t* out_ref);

// The object of |ref| when it is a ref of |type| (one of the types above),
// NULL otherwise (a null ref or another type). Borrowed: retain it to keep
// it past the ref.
void* weft_hal_module_unwrap(weft_vm_ref_t ref, const weft_vm_ref_type_t* type);

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

// The numbers are the VM's: a program passes them as i32 to
// hal.buffer_view.create and reads them back from
// hal.buffer_view.element_type, so they never change.
typedef enum weft_hal_element_type_e {
  WEFT_HAL_ELEMENT_TYPE_NONE = 0,
  WEFT_HAL_ELEMENT_TYPE_F16 = 1,
  WEFT_HAL_ELEMENT_TYPE_F32 = 2,
  WEFT_HAL_ELEMENT_TYPE_F64 = 3,
  WEFT_HAL_ELEMENT_TYPE_I8 = 4,
  WEFT_HAL_ELEMENT_TYPE_I16 = 5,
  WEFT_HAL_ELEMENT_TYPE_I32 = 6,
  WEFT_HAL_ELEMENT_TYPE_I64 = 7,
  WEFT_HAL_ELEMENT_TYPE_U8 = 8,
  WEFT_HAL_ELEMENT_TYPE_U16 = 9,
  WEFT_HAL_ELEMENT_TYPE_U32 = 10,
  WEFT_HAL_ELEMENT_TYPE_U64 = 11,
  WEFT_HAL_ELEMENT_TYPE_COUNT_ = 12,
} weft_hal_element_type_t;

// True for every type above but NONE (and nothing out of range).
bool weft_hal_element_type_is_valid(int32_t type);

// The size of one element in bytes (0 for an invalid type).
uint32_t weft_hal_element_type_size(weft_hal_element_type_t type);

// "f32", "i8", ... ("none" for NONE or an invalid type).
const char* weft_hal_element_type_name(weft_hal_element_type_t type);

//===----------------------------------------------------------------------===//
// Buffer views
//===----------------------------------------------------------------------===//

// A buffer (retained), a byte offset into it, an element type and a shape
// of up to WEFT_HAL_BUFFER_VIEW_MAX_RANK int64 dimensions; its byte length,
// the product of the dimensions times the element size, fits the buffer
// from the offset. Ref-counted and immutable: any thread may read one.
typedef struct weft_hal_buffer_view_t weft_hal_buffer_view_t;

#define WEFT_HAL_BUFFER_VIEW_MAX_RANK 8

// Creates a view of |buffer| (retained) at |byte_offset| with |rank|
// dimensions |shape| of |element_type|. INVALID_ARGUMENT naming the
// argument for an offset or a dimension below 0, an invalid element type,
// a rank past WEFT_HAL_BUFFER_VIEW_MAX_RANK, a byte length that overflows
// or a view that does not fit the buffer (both lengths in the message).
// The caller owns the one reference. |shape| may be NULL when |rank| is 0
// (a scalar: one element).
weft_status_t weft_hal_buffer_view_create(
    weft_buffer_t* buffer, int64_t byte_offset,
    weft_hal_element_type_t element_type, uint32_t rank, const int64_t* shape,
    weft_allocator_t allocator, weft_hal_buffer_view_t** out_view);

// Adds a reference; any thread.
void weft_hal_buffer_view_retain(weft_hal_buffer_view_t* view);
// Drops a reference; the last releases the buffer and frees the view; any
// thread.
void weft_hal_buffer_view_release(weft_hal_buffer_view_t* view);

// A ref to |view| (borrowed, as weft_hal_module_wrap's). |view| may be
// NULL: the null ref.
weft_vm_ref_t weft_hal_module_wrap_buffer_view(weft_hal_buffer_view_t* view);

// The viewed buffer (borrowed: valid while the view is).
weft_buffer_t* weft_hal_buffer_view_buffer(const weft_hal_buffer_view_t* view);
// Where the view starts in its buffer, in bytes.
uint64_t weft_hal_buffer_view_byte_offset(const weft_hal_buffer_view_t* view);
// The product of the dimensions times the element size.
uint64_t weft_hal_buffer_view_byte_length(const weft_hal_buffer_view_t* view);
// The element type it was created with (NONE for a NULL view).
weft_hal_element_type_t weft_hal_buffer_view_element_type(
    const weft_hal_buffer_view_t* view);
// The number of dimensions (0 for a scalar).
uint32_t weft_hal_buffer_view_rank(const weft_hal_buffer_view_t* view);
// Dimension |index| (-1 past the rank, and for a NULL view).
int64_t weft_hal_buffer_view_dim(const weft_hal_buffer_view_t* view,
                                 uint32_t index);

//===----------------------------------------------------------------------===//
// Checking buffer views against declared tensor types
//===----------------------------------------------------------------------===//

// What checking a call's arguments learned, for checking its results: the
// size each of the function's symbols took and which value bound it (the
// first that used it). Read-only for the caller; filled by
// weft_hal_check_arguments, extended by weft_hal_check_results.
typedef struct weft_hal_tensor_check_t {
  const weft_vm_module_t* module;  // borrowed: keep it alive meanwhile
  uint32_t function;
  uint32_t symbol_count;
  // Per symbol: its size, or -1 while no value has used it.
  int64_t symbol_sizes[WEFT_VM_TENSOR_MAX_SYMBOLS];
  // Per bound symbol: the position (0-based) of the value that bound it
  // among the arguments, or among the results when |symbol_from_result|.
  uint32_t symbol_values[WEFT_VM_TENSOR_MAX_SYMBOLS];
  bool symbol_from_result[WEFT_VM_TENSOR_MAX_SYMBOLS];
} weft_hal_tensor_check_t;

// Checks |arg_count| |args| (borrowed; buffer views as refs,
// weft_hal_module_wrap_buffer_view) against the declarations of function
// |function| of |module| (weft/vm/tensor_type.h) and starts |*out_check|
// for weft_hal_check_results. Every argument declared with a tensor type
// must be a buffer view of its element type and rank, each dimension its
// static size, any size for '?', and for a symbol the size the first value
// using it gave (that value binds it). A function without declarations (a
// native one too) passes any values of the right count. INVALID_ARGUMENT
// naming the function, the argument (position and name), what was
// expected and what was given, with hints: "forward: argument 2 'w1' must
// be 64xN f32, got 128x64 f32 (transposed?; K is 64 from argument 1 'x')";
// also for a count other than the signature's, a function index past the
// module's, a scalar, null or another ref where a tensor goes. |args| may
// be NULL when |arg_count| is 0. Thread-safe: reads only.
weft_status_t weft_hal_check_arguments(const weft_vm_module_t* module,
                                       uint32_t function,
                                       const weft_vm_value_t* args,
                                       uint32_t arg_count,
                                       weft_hal_tensor_check_t* out_check);

// Checks |result_count| |results| of the call |check| began (after
// weft_hal_check_arguments succeeded) the same way: symbols the arguments
// bound keep their sizes, new ones are bound by the first result using
// them. INVALID_ARGUMENT as weft_hal_check_arguments's, naming the result
// ("forward: result 1 'y' must be 10 f32, got 9 f32 (N2 is 10 from
// argument 4 'w2')"). |results| may be NULL when |result_count| is 0.
weft_status_t weft_hal_check_results(weft_hal_tensor_check_t* check,
                                     const weft_vm_value_t* results,
                                     uint32_t result_count);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_VM_HAL_H_
