// weft's Python extension (weft._weft): what its files share.
//
// A hand-written CPython extension over weft's public C API (see
// python/README.md): each weft handle is a Python object that
// holds one reference and drops it when the object dies or on close();
// weft statuses become exceptions of weft.Error's subclass for their code,
// carrying weft's whole message; waits run without the GIL in slices, so
// Ctrl-C (and other signals) reach Python while one waits.
#ifndef WEFT_PYTHON_WEFT_PYTHON_H_
#define WEFT_PYTHON_WEFT_PYTHON_H_

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdbool.h>
#include <stdint.h>

#include "weft/weft.h"

// The allocator every object the extension makes is made with: the
// system's, counting the blocks alive (weft._weft._live_allocations()), so
// tests can see that handles released in any order free everything.
weft_allocator_t weft_py_allocator(void);

// Raises the exception for |status| (consumed; must not be OK) and returns
// NULL, so a caller can `return weft_py_raise(status);`.
PyObject* weft_py_raise(weft_status_t status);

// Raises the exception for |status| (consumed) and returns false, or
// returns true for OK.
bool weft_py_ok(weft_status_t status);

// The exception class for |code| (borrowed).
PyObject* weft_py_error_class(weft_status_code_t code);

// Reads a failure's status code, argument |argument| of |function|: None
// (|out| left as it is), one of weft.Error's subclasses (its code:
// weft.CancelledError is CANCELLED), or the code as an int. TypeError for
// anything else, ValueError for weft.Error itself (no one code) and for
// an int that is not a failure's code (OK, DEFERRED, past the last).
bool weft_py_failure_code(PyObject* object, const char* function,
                          const char* argument, weft_status_code_t* out);

// Runs |statement|, which drops weft references, without the GIL: the
// last reference to a device makes it join its threads, and one of them
// may be in a host call waiting for the GIL.
#define WEFT_PY_RELEASE_WITHOUT_GIL(statement) \
  do {                                         \
    Py_BEGIN_ALLOW_THREADS statement;          \
    Py_END_ALLOW_THREADS                       \
  } while (0)

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

typedef struct weft_py_device_t {
  PyObject_HEAD
  weft_device_t* device;  // NULL once closed
  PyObject* weakrefs;     // Buffer.device refers to its device weakly
} weft_py_device_t;

typedef struct weft_py_semaphore_t {
  PyObject_HEAD
  weft_semaphore_t* semaphore;  // NULL once closed
} weft_py_semaphore_t;

typedef struct weft_py_buffer_t {
  PyObject_HEAD
  weft_buffer_t* buffer;  // NULL once closed
  // A persistent mapping of the whole buffer while Python holds views of
  // it (|exports| of them), for the buffer protocol.
  weft_buffer_mapping_t mapping;
  Py_ssize_t exports;
  // A weak reference to the weft.Device that allocated it (NULL when
  // none): whose queue copies a device-local buffer's bytes out.
  PyObject* device;
} weft_py_buffer_t;

extern PyTypeObject weft_py_device_type;
extern PyTypeObject weft_py_semaphore_type;
extern PyTypeObject weft_py_buffer_type;
extern PyTypeObject weft_py_notifier_type;
extern PyTypeObject weft_py_program_type;

// Each type's setup at module init (PyType_Ready and what it needs).
int weft_py_device_setup(PyObject* module);
int weft_py_semaphore_setup(PyObject* module);
int weft_py_buffer_setup(PyObject* module);
int weft_py_notifier_setup(PyObject* module);
int weft_py_program_setup(PyObject* module);
int weft_py_kernels_setup(PyObject* module);
int weft_py_io_setup(PyObject* module);

//===----------------------------------------------------------------------===//
// Arguments of the hot methods (METH_FASTCALL | METH_KEYWORDS)
//===----------------------------------------------------------------------===//

// The most parameters a method parsed this way has.
#define WEFT_PY_MAX_PARAMETERS 8

// A method's parameters: |names| in order (unused entries NULL); the first
// |positional| may come by position (the rest are keyword-only), the first
// |required| must be given. |function| names the method in messages
// ("fill" -> "fill() missing required argument 'pattern' (pos 2)"). One
// static instance per method, written only with the GIL held.
typedef struct weft_py_parameters_t {
  const char* function;
  const char* names[WEFT_PY_MAX_PARAMETERS + 1];
  int positional;
  int required;
  // The names as interned strs, made on first use: a keyword written in a
  // call is interned too, so most match by pointer.
  PyObject* keys[WEFT_PY_MAX_PARAMETERS];
} weft_py_parameters_t;

// Sorts a vectorcall's |nargs| positional |args| and the keywords named by
// |kwnames| (may be NULL) into |out|, one borrowed object per name of
// |parameters| (NULL where not given). False with TypeError raised, in
// PyArg_ParseTupleAndKeywords's words: too many arguments, a missing one,
// an unknown keyword, one given by name and position. Conversion is the
// caller's (weft_py_argument_*), in parameter order, so where a call has
// several faults the one reported may differ from PyArg's.
bool weft_py_arguments_parse(weft_py_parameters_t* parameters,
                             PyObject* const* args, Py_ssize_t nargs,
                             PyObject* kwnames, PyObject** out);
// Argument |index| of |parameters| (NULL: not given, |out| left as it is)
// as a uint64 (weft_py_integer).
bool weft_py_argument_u64(const weft_py_parameters_t* parameters, int index,
                          PyObject* object, uint64_t* out);
// PyArg's "y*": a contiguous buffer export of |object|, released by the
// caller (PyBuffer_Release) when true.
bool weft_py_argument_bytes(const weft_py_parameters_t* parameters, int index,
                            PyObject* object, Py_buffer* out);

//===----------------------------------------------------------------------===//
// Integer arguments: the one conversion every integer argument goes through
//===----------------------------------------------------------------------===//

// The C integer types integer arguments become; each is a range, and a
// value outside it is an OverflowError (never taken modulo 2**64).
typedef enum weft_py_integer_type_e {
  WEFT_PY_INTEGER_U64 = 0,  // [0, 2**64)
  WEFT_PY_INTEGER_U32,      // [0, 2**32)
  WEFT_PY_INTEGER_I64,      // [-2**63, 2**63)
  WEFT_PY_INTEGER_I32,      // [-2**31, 2**31)
  WEFT_PY_INTEGER_WORD32,   // [-2**31, 2**32): a 32-bit word, signed or not
  WEFT_PY_INTEGER_TYPE_COUNT_,
} weft_py_integer_type_t;

// Converts |object|, an int or anything with __index__ (NumPy's integers;
// not a float), to |type|: its value's 64 bits (two's complement for the
// signed types) in |out_bits|. False, with no exception set, when it is
// not an integer or is outside the range. For loops that name the item
// only when it is refused (weft_py_integer_refuse).
bool weft_py_integer_try(PyObject* object, weft_py_integer_type_t type,
                         uint64_t* out_bits);
// Raises the error for an |object| weft_py_integer_try refused and returns
// false: TypeError for what is not an integer, OverflowError for an
// integer outside |type|'s range (or what its __index__ raised), naming
// argument |argument| of |function| in CPython's words ("allocate()
// argument 'nbytes' must be int, not float"; "... must be a u64, an int
// in [0, 2**64); got -1").
bool weft_py_integer_refuse(PyObject* object, weft_py_integer_type_t type,
                            const char* function, const char* argument);
// Both: true with |out_bits| set, or false with the error raised.
bool weft_py_integer(PyObject* object, weft_py_integer_type_t type,
                     const char* function, const char* argument,
                     uint64_t* out_bits);

static inline bool weft_py_u64(PyObject* object, const char* function,
                               const char* argument, uint64_t* out) {
  return weft_py_integer(object, WEFT_PY_INTEGER_U64, function, argument, out);
}
static inline bool weft_py_u32(PyObject* object, const char* function,
                               const char* argument, uint32_t* out) {
  uint64_t bits = 0;
  if (!weft_py_integer(object, WEFT_PY_INTEGER_U32, function, argument,
                       &bits)) {
    return false;
  }
  *out = (uint32_t)bits;
  return true;
}
static inline bool weft_py_i64(PyObject* object, const char* function,
                               const char* argument, int64_t* out) {
  uint64_t bits = 0;
  if (!weft_py_integer(object, WEFT_PY_INTEGER_I64, function, argument,
                       &bits)) {
    return false;
  }
  *out = (int64_t)bits;
  return true;
}
static inline bool weft_py_i32(PyObject* object, const char* function,
                               const char* argument, int32_t* out) {
  uint64_t bits = 0;
  if (!weft_py_integer(object, WEFT_PY_INTEGER_I32, function, argument,
                       &bits)) {
    return false;
  }
  *out = (int32_t)(int64_t)bits;
  return true;
}

// A byte length argument: None is "to the end" (WEFT_WHOLE_BUFFER);
// otherwise a u64 other than WEFT_WHOLE_BUFFER itself, which would say
// "to the end" without None (ValueError).
bool weft_py_length(PyObject* object, const char* function,
                    const char* argument, uint64_t* out);

// _integer(value, type, function, argument) -> int: weft_py_integer for
// the Python layer (weft/__init__.py), |type| "u64", "u32", "i64" or
// "i32".
PyObject* weft_py_integer_check(PyObject* module, PyObject* const* args,
                                Py_ssize_t nargs);

// io.c: Device.read, Device.write, Device.host_call; trace_start/stop.
PyObject* weft_py_device_read(PyObject* self, PyObject* const* args,
                              Py_ssize_t nargs, PyObject* kwnames);
PyObject* weft_py_device_write(PyObject* self, PyObject* const* args,
                               Py_ssize_t nargs, PyObject* kwnames);
PyObject* weft_py_device_host_call(PyObject* self, PyObject* const* args,
                                   Py_ssize_t nargs, PyObject* kwnames);
PyObject* weft_py_device_load_parameters(PyObject* self, PyObject* args,
                                         PyObject* kwargs);
PyObject* weft_py_trace_start(PyObject* module, PyObject* path);
PyObject* weft_py_trace_stop(PyObject* module, PyObject* unused);

// Device methods of kernels.c: executable(path), command_buffer(...),
// dispatch(...), execute(...).
PyObject* weft_py_device_executable(PyObject* self, PyObject* path);
PyObject* weft_py_device_executable_gpu(PyObject* self, PyObject* args,
                                        PyObject* kwargs);
PyObject* weft_py_device_command_buffer(PyObject* self, PyObject* args,
                                        PyObject* kwargs);
PyObject* weft_py_device_dispatch(PyObject* self, PyObject* const* args,
                                  Py_ssize_t nargs, PyObject* kwnames);
PyObject* weft_py_device_execute(PyObject* self, PyObject* const* args,
                                 Py_ssize_t nargs, PyObject* kwnames);

// Reads a buffer reference: a Buffer (whole), a Tensor (its range),
// (buffer, offset, length) or (slot, offset, length) with length None for
// "to the end" (slot a u32, offset and length u64s). |what|[|index|] of
// |function| names it in errors; |index| < 0 when |what| is the reference
// itself, not an item of a list.
bool weft_py_buffer_ref_parse(PyObject* object, const char* function,
                              const char* what, Py_ssize_t index,
                              weft_buffer_ref_t* out);
// Turns a direct |ref|'s "to the end" length into the bytes left in its
// buffer past its offset.
void weft_py_buffer_ref_to_end(weft_buffer_ref_t* ref);

// The live handle of |object| (a Device, Semaphore or Buffer), or NULL
// with ValueError raised when it was closed ("the device is closed") or
// TypeError when it is of another type. |what| names the argument.
weft_device_t* weft_py_device_handle(PyObject* object, const char* what);
weft_semaphore_t* weft_py_semaphore_handle(PyObject* object, const char* what);
weft_buffer_t* weft_py_buffer_handle(PyObject* object, const char* what);

// A new Python object owning |semaphore|'s or |buffer|'s reference;
// |device| (may be NULL) the Device that allocated |buffer|, referred to
// weakly.
PyObject* weft_py_semaphore_wrap(weft_semaphore_t* semaphore);
PyObject* weft_py_buffer_wrap(weft_buffer_t* buffer, PyObject* device);

// dlpack_capsule(buffer, element_type, shape, byte_offset): a "dltensor"
// capsule over a host-visible buffer's memory (dlpack.c).
PyObject* weft_py_dlpack_capsule(PyObject* module, PyObject* args);

// A blocking wait weft_py_wait_in_slices runs: on |target| until
// |deadline|, DEADLINE_EXCEEDED when it passes first.
typedef weft_status_t (*weft_py_wait_fn_t)(void* target, weft_time_t deadline);
// After a slice's DEADLINE_EXCEEDED: the target's own failure (a semaphore
// failed with that code), or OK when only the slice ended.
typedef weft_status_t (*weft_py_wait_check_fn_t)(void* target);

// Runs |wait| on |target| until |deadline| without the GIL, in slices of
// 50 ms: between slices Python runs its signal handlers, so Ctrl-C
// interrupts the wait. |check| may be NULL (a slice's end is only that).
// Returns the wait's status (consumed by the caller), or false with the
// handler's exception raised.
bool weft_py_wait_in_slices(weft_py_wait_fn_t wait,
                            weft_py_wait_check_fn_t check, void* target,
                            weft_time_t deadline, weft_status_t* out_status);

// Converts a timeout in seconds (None: forever; 0: poll) to weft's.
bool weft_py_timeout(PyObject* seconds, weft_timeout_t* out_timeout);

//===----------------------------------------------------------------------===//
// Semaphore lists ([(semaphore, value), ...] or a fence-like sequence)
//===----------------------------------------------------------------------===//

// Room for lists without allocating.
#define WEFT_PY_LIST_INLINE 8

typedef struct weft_py_semaphore_list_t {
  weft_semaphore_list_t list;
  weft_semaphore_t* inline_semaphores[WEFT_PY_LIST_INLINE];
  uint64_t inline_values[WEFT_PY_LIST_INLINE];
  weft_semaphore_t** semaphores;  // allocated when longer
  uint64_t* values;
} weft_py_semaphore_list_t;

// Reads |object| (None, or an iterable of (Semaphore, value) pairs, each
// value a u64) into |out_list|. Borrowed semaphores: valid while |object|
// is. |what| names the argument of |function| in errors ("wait" of
// "fill"). Deinitialize after any result.
bool weft_py_semaphore_list_parse(PyObject* object, const char* function,
                                  const char* what,
                                  weft_py_semaphore_list_t* out_list);
void weft_py_semaphore_list_deinitialize(weft_py_semaphore_list_t* list);

// The wait= and signal= lists every queue operation takes.
typedef struct weft_py_queue_lists_t {
  weft_py_semaphore_list_t wait;
  weft_py_semaphore_list_t signal;
} weft_py_queue_lists_t;

// Reads both lists of |function|'s call (None: empty); false with the
// error raised.
bool weft_py_queue_lists_parse(const char* function, PyObject* wait,
                               PyObject* signal, weft_py_queue_lists_t* out);
// Frees the lists and makes the operation's result of |status| (consumed):
// None, or NULL with the error raised.
PyObject* weft_py_queue_lists_finish(weft_py_queue_lists_t* lists,
                                     weft_status_t status);

#endif  // WEFT_PYTHON_WEFT_PYTHON_H_
