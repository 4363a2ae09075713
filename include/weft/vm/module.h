// weft VM: modules, bytecode or native.
//
// A module is a named set of functions: a bytecode module, loaded from the
// text format (.wvm) or the binary format (.wvmb, made by weft-asm), or a
// native module written in C. Both are ref-counted and immutable, so any
// thread may read one; a context (weft/vm/context.h) links modules
// together and runs their functions. docs/VM.md describes the formats and
// the instruction set.
//
// A native function declares its signature as a string ("(r<hal.fence>,
// i64) -> (i32)": i32, i64, f32, f64, r, r<NAME>, '?' for a nullable
// ref). It is called with its arguments checked against it (types, ref
// type names, and non-null where the signature says so) and fills its
// results. It may wait without blocking the thread: it describes a wait
// frame (ALL or ANY over (semaphore, value) sources, until a deadline)
// with weft_vm_wait_frame_begin and weft_vm_wait_frame_add, sets its |pc|
// to where it resumes and returns DEFERRED. Once the wait is over it is
// called again with that |pc| and the wait's result, its arguments and the
// results it wrote so far kept. weft_vm_invoke_sync blocks in place on the
// frame; the loop (weft/vm/loop.h) parks the invocation instead.
//
// NULL: pointer arguments are required unless the function's comment says
// "|x| may be NULL" (see "NULL arguments" in weft/status.h).
#ifndef WEFT_VM_MODULE_H_
#define WEFT_VM_MODULE_H_

#include <stddef.h>
#include <stdint.h>

#include "weft/allocator.h"
#include "weft/semaphore.h"
#include "weft/status.h"
#include "weft/time.h"
#include "weft/vm/value.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_vm_module_t weft_vm_module_t;

//===----------------------------------------------------------------------===//
// Loading and reading modules
//===----------------------------------------------------------------------===//

// Loads a bytecode module from |length| bytes of |data|: the binary format
// when they start with its magic ("WEFTVM\0\1"), the text format
// otherwise. |name| names the input in messages and, for text, is the
// source file of runtime errors ("at m.f (|name|:LINE)"). The module is
// validated; a malformed one is INVALID_ARGUMENT naming the place
// ("t.wvm:3:3: expected an opcode, found ..."). The caller owns the one
// reference. |data| may be NULL when |length| is 0.
weft_status_t weft_vm_module_load_bytes(const char* name, const void* data,
                                        size_t length,
                                        weft_allocator_t allocator,
                                        weft_vm_module_t** out_module);

// Reads the file at |path| and loads it as weft_vm_module_load_bytes does.
// The OS's reason (NOT_FOUND, PERMISSION_DENIED, ...) naming the path when
// it cannot be read.
weft_status_t weft_vm_module_load_file(const char* path,
                                       weft_allocator_t allocator,
                                       weft_vm_module_t** out_module);

// Adds a reference.
void weft_vm_module_retain(weft_vm_module_t* module);
// Drops a reference; the last frees the module (a native module's
// definition then gets its destroy hook).
void weft_vm_module_release(weft_vm_module_t* module);

// The module's name ("mlp", "hal"); valid while the module is.
const char* weft_vm_module_name(const weft_vm_module_t* module);

// The number of functions (exported or not, for a bytecode module).
uint32_t weft_vm_module_function_count(const weft_vm_module_t* module);

// The name of function |index| ("" past the count); valid while the
// module is.
const char* weft_vm_module_function_name(const weft_vm_module_t* module,
                                         uint32_t index);

// Writes the canonical signature of function |index| ("(i32,r?)->(f64)":
// no spaces; a bytecode function's refs without a declared type are "r?")
// into |buffer| and returns its length, excluding the NUL; at most
// |capacity| bytes are written, NUL-terminated when |capacity| > 0.
// Returns 0 (and writes "") past the count. |buffer| may be NULL: nothing
// is written (measure first).
size_t weft_vm_module_function_signature_text(const weft_vm_module_t* module,
                                              uint32_t index, char* buffer,
                                              size_t capacity);

// Finds the function called |name|. NOT_FOUND naming the module and
// listing its functions; *out_index is 0 on failure.
weft_status_t weft_vm_module_lookup(const weft_vm_module_t* module,
                                    const char* name, uint32_t* out_index);

//===----------------------------------------------------------------------===//
// Native modules
//===----------------------------------------------------------------------===//

// An opaque wait frame (one per invocation): what a native call waits on.
typedef struct weft_vm_wait_frame_t weft_vm_wait_frame_t;

// What a native function is called with.
typedef struct weft_vm_native_call_t {
  // The module's state in the calling context (what create_state made;
  // NULL without one).
  void* module_state;
  // The arguments, as many as the signature says (borrowed).
  const weft_vm_value_t* args;
  // The results, as many as the signature says, typed as it says: zero
  // and null refs at entry, kept across a wait. A ref stored here is
  // handed to the VM (store a reference of your own: retain what you
  // borrowed).
  weft_vm_value_t* results;
  // 0 at entry; on resume, what the function set before it returned
  // DEFERRED.
  uint32_t pc;
  // On resume: the wait's result, owned by the function (free it). OK when
  // the sources were reached; the bare DEADLINE_EXCEEDED code
  // (weft_status_from_code) when the deadline passed first; otherwise the
  // first failure (a semaphore's original status).
  weft_status_t wait_result;
  // Where weft_vm_wait_frame_begin and weft_vm_wait_frame_add write.
  weft_vm_wait_frame_t* wait;
  // The invocation's allocator, for anything the call allocates.
  weft_allocator_t allocator;
} weft_vm_native_call_t;

// A native function: OK with its results written, DEFERRED after
// describing a wait (see the top of this file), or a failure, which ends
// the invocation (the VM adds its stack to the message).
typedef weft_status_t (*weft_vm_native_fn_t)(weft_vm_native_call_t* call);

typedef struct weft_vm_native_function_t {
  const char* name;       // "fence.await"
  const char* signature;  // "(r<hal.fence>, i64) -> (i32)"
  weft_vm_native_fn_t fn;
} weft_vm_native_function_t;

// A native module's definition. The module reads it until its last
// reference goes, so it must stay valid that long (a static const in
// practice; a definition made at run time frees itself in |destroy|).
typedef struct weft_vm_native_module_def_t {
  const char* name;  // "hal"
  uint32_t function_count;
  const weft_vm_native_function_t* functions;
  // Optional: per-context state, made when a context links the module
  // (with the context's allocator) and destroyed with the context; the
  // functions find it in weft_vm_native_call_t.module_state.
  weft_status_t (*create_state)(void* user_data, weft_allocator_t allocator,
                                void** out_state);
  void (*destroy_state)(void* user_data, void* state);
  void* user_data;
  // Optional: called once when the module is freed (its last reference
  // released), after which the module reads nothing of the definition.
  void (*destroy)(void* user_data);
} weft_vm_native_module_def_t;

// Makes a module of |def| (borrowed, see above), parsing every function's
// signature. INVALID_ARGUMENT for a definition without a name, a function
// without a name, signature or implementation, or a bad signature (naming
// the module and the function). The caller owns the one reference.
weft_status_t weft_vm_module_create_native(
    weft_allocator_t allocator, const weft_vm_native_module_def_t* def,
    weft_vm_module_t** out_module);

// The most distinct semaphores one wait frame may hold.
#define WEFT_VM_WAIT_MAX_SOURCES 4096

// Starts describing a wait in |call|'s wait frame, emptying it: |mode|
// (ALL or ANY) over the sources added next, until |deadline| (absolute,
// weft_time_now's clock; WEFT_TIME_INFINITE_FUTURE for none).
void weft_vm_wait_frame_begin(weft_vm_native_call_t* call,
                              weft_wait_mode_t mode, weft_time_t deadline);

// Adds (|semaphore|, |value|) to |call|'s wait frame (the semaphore is
// retained until the wait ends), keeping the larger value for a semaphore
// already there. RESOURCE_EXHAUSTED past WEFT_VM_WAIT_MAX_SOURCES distinct
// semaphores. A function that returns DEFERRED must have added one source
// at least.
weft_status_t weft_vm_wait_frame_add(weft_vm_native_call_t* call,
                                     weft_semaphore_t* semaphore,
                                     uint64_t value);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_VM_MODULE_H_
