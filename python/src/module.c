// weft._weft: module init, errors, lists and timeouts (weft_python.h).
#include <stdatomic.h>
#include <string.h>

#include "weft_python.h"

//===----------------------------------------------------------------------===//
// The counting allocator
//===----------------------------------------------------------------------===//

static atomic_llong weft_py_live_allocations;

static weft_status_t weft_py_allocator_ctl(void* self,
                                           weft_allocator_command_t command,
                                           size_t byte_length,
                                           void** inout_ptr) {
  const weft_allocator_t system = weft_allocator_system();
  void* before = *inout_ptr;
  weft_status_t status =
      system.ctl(system.self, command, byte_length, inout_ptr);
  long long delta = 0;
  if (weft_status_is_ok(status)) {
    if (command == WEFT_ALLOCATOR_COMMAND_FREE) {
      delta = before ? -1 : 0;
    } else if (command == WEFT_ALLOCATOR_COMMAND_REALLOC) {
      delta = (before ? -1 : 0) + (*inout_ptr ? 1 : 0);
    } else {
      delta = *inout_ptr ? 1 : 0;
    }
  }
  atomic_fetch_add(&weft_py_live_allocations, delta);
  return status;
}

weft_allocator_t weft_py_allocator(void) {
  const weft_allocator_t allocator = {NULL, weft_py_allocator_ctl};
  return allocator;
}

static PyObject* weft_py_live_allocations_get(PyObject* module,
                                              PyObject* unused) {
  return PyLong_FromLongLong(atomic_load(&weft_py_live_allocations));
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

// One class per status code: weft.Error's subclasses, named after the code
// ("INVALID_ARGUMENT" -> InvalidArgumentError), some also deriving from the
// built-in a Python user would catch for it.
static PyObject* weft_py_errors[WEFT_STATUS_CODE_COUNT_];
static PyObject* weft_py_error_base;

PyObject* weft_py_error_class(weft_status_code_t code) {
  if ((int)code <= 0 || code >= WEFT_STATUS_CODE_COUNT_ ||
      !weft_py_errors[code]) {
    return weft_py_error_base;
  }
  return weft_py_errors[code];
}

PyObject* weft_py_raise(weft_status_t status) {
  const weft_status_code_t code = weft_status_code(status);
  char stack_text[1024];
  size_t length = weft_status_format(status, stack_text, sizeof(stack_text));
  char* text = stack_text;
  if (length >= sizeof(stack_text)) {
    // A long chain: format it whole.
    text = PyMem_Malloc(length + 1);
    if (text) {
      weft_status_format(status, text, length + 1);
    } else {
      text = stack_text;
    }
  }
  weft_status_free(status);
  PyObject* message = PyUnicode_DecodeUTF8(text, (Py_ssize_t)strlen(text),
                                           "replace");
  if (text != stack_text) PyMem_Free(text);
  if (!message) return NULL;
  PyObject* error = PyObject_CallOneArg(weft_py_error_class(code), message);
  Py_DECREF(message);
  if (!error) return NULL;
  PyObject* code_object = PyLong_FromLong((long)code);
  if (code_object) {
    PyObject_SetAttrString(error, "code", code_object);
    Py_DECREF(code_object);
  }
  PyErr_SetObject((PyObject*)Py_TYPE(error), error);
  Py_DECREF(error);
  return NULL;
}

bool weft_py_ok(weft_status_t status) {
  if (weft_status_is_ok(status)) return true;
  weft_py_raise(status);
  return false;
}

bool weft_py_failure_code(PyObject* object, const char* function,
                          const char* argument, weft_status_code_t* out) {
  if (object == Py_None) return true;
  int32_t code = 0;
  if (!PyType_Check(object) && !PyLong_Check(object) &&
      !PyIndex_Check(object)) {
    PyErr_Format(PyExc_TypeError,
                 "%s() argument '%s' must be one of weft.Error's subclasses "
                 "(weft.CancelledError, ...) or a status code (an int), not "
                 "%.100s",
                 function, argument, Py_TYPE(object)->tp_name);
    return false;
  }
  if (PyType_Check(object)) {
    PyObject* class_code =
        PyType_IsSubtype((PyTypeObject*)object,
                         (PyTypeObject*)weft_py_error_base) &&
                object != weft_py_error_base
            ? PyObject_GetAttrString(object, "code")
            : NULL;
    if (!class_code && object == weft_py_error_base) {
      PyErr_Format(PyExc_ValueError,
                   "%s() argument '%s' is weft.Error, the base of the error "
                   "classes, which has no one code: pass one of its "
                   "subclasses (weft.CancelledError, ...) or a status code",
                   function, argument);
      return false;
    }
    if (!class_code) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError,
                   "%s() argument '%s' must be one of weft.Error's "
                   "subclasses (weft.CancelledError, ...) or a status code, "
                   "not %.100s",
                   function, argument, ((PyTypeObject*)object)->tp_name);
      return false;
    }
    const bool read = weft_py_i32(class_code, function, argument, &code);
    Py_DECREF(class_code);
    if (!read) return false;
  } else if (!weft_py_i32(object, function, argument, &code)) {
    return false;
  }
  if (code <= WEFT_STATUS_OK || code >= WEFT_STATUS_CODE_COUNT_ ||
      code == WEFT_STATUS_DEFERRED) {
    PyErr_Format(PyExc_ValueError,
                 "%s() argument '%s' must be a failure's status code (1 to "
                 "%d, not DEFERRED), got %d",
                 function, argument, WEFT_STATUS_CODE_COUNT_ - 2, (int)code);
    return false;
  }
  *out = (weft_status_code_t)code;
  return true;
}

// "INVALID_ARGUMENT" -> "InvalidArgumentError" into |buffer|.
static void weft_py_error_name(weft_status_code_t code, char* buffer,
                               size_t capacity) {
  const char* name = weft_status_code_string(code);
  size_t used = 0;
  bool upper = true;
  for (const char* c = name; *c && used + 6 < capacity; ++c) {
    if (*c == '_') {
      upper = true;
      continue;
    }
    buffer[used++] = upper ? *c : (char)(*c - 'A' + 'a');
    upper = false;
  }
  memcpy(buffer + used, "Error", 6);
}

// The built-in an error class also derives from, or NULL.
static PyObject* weft_py_error_builtin(weft_status_code_t code) {
  switch (code) {
    case WEFT_STATUS_INVALID_ARGUMENT:
    case WEFT_STATUS_OUT_OF_RANGE:
      return PyExc_ValueError;
    case WEFT_STATUS_DEADLINE_EXCEEDED:
      return PyExc_TimeoutError;
    case WEFT_STATUS_NOT_FOUND:
      return PyExc_LookupError;
    case WEFT_STATUS_PERMISSION_DENIED:
      return PyExc_PermissionError;
    case WEFT_STATUS_UNIMPLEMENTED:
      return PyExc_NotImplementedError;
    default:
      return NULL;
  }
}

// A new exception class |qualified| ("weft.CancelledError") of |bases|
// (a class or a tuple) documented by |doc|, whose __text_signature__ is
// BaseException's "(*args)", so inspect.signature reads it. A class made
// by type() takes its text signature from the docstring it was made with
// ("Name(*args)\n--\n\n..." leading it) and keeps that; __doc__ is then
// set to the text alone, which help() shows.
static PyObject* weft_py_error_new(const char* qualified, PyObject* bases,
                                   const char* doc) {
  const char* name = strrchr(qualified, '.') + 1;
  PyObject* signed_doc =
      PyUnicode_FromFormat("%s(*args)\n--\n\n%s", name, doc);
  if (!signed_doc) return NULL;
  const char* text = PyUnicode_AsUTF8(signed_doc);
  PyObject* error =
      text ? PyErr_NewExceptionWithDoc(qualified, text, bases, NULL) : NULL;
  Py_DECREF(signed_doc);
  PyObject* plain_doc = error ? PyUnicode_FromString(doc) : NULL;
  if (error &&
      (!plain_doc || PyObject_SetAttrString(error, "__doc__", plain_doc) < 0)) {
    Py_CLEAR(error);
  }
  Py_XDECREF(plain_doc);
  return error;
}

static int weft_py_errors_setup(PyObject* module) {
  weft_py_error_base = weft_py_error_new(
      "weft.Error", PyExc_Exception,
      "A weft status that is not OK. str(error) is weft's whole message "
      "(the chain of what failed, where); .code is the status code "
      "(an int; weft.STATUS_CODES names them). Each code has its "
      "subclass (weft.CancelledError, ...), which Semaphore.fail also "
      "takes for the code.");
  if (!weft_py_error_base || PyModule_AddObjectRef(module, "Error",
                                                   weft_py_error_base) < 0) {
    return -1;
  }
  PyObject* codes = PyDict_New();
  if (!codes) return -1;
  for (int code = 1; code < WEFT_STATUS_CODE_COUNT_; ++code) {
    if (code == WEFT_STATUS_DEFERRED) continue;  // not an error
    char name[64];
    weft_py_error_name((weft_status_code_t)code, name, sizeof(name));
    char qualified[80];
    snprintf(qualified, sizeof(qualified), "weft.%s", name);
    PyObject* builtin = weft_py_error_builtin((weft_status_code_t)code);
    PyObject* bases = builtin
                          ? PyTuple_Pack(2, weft_py_error_base, builtin)
                          : PyTuple_Pack(1, weft_py_error_base);
    if (!bases) return -1;
    char doc[256];
    snprintf(doc, sizeof(doc),
             "weft's status %s (code %d) as an exception: a weft.Error%s%s.",
             weft_status_code_string((weft_status_code_t)code), code,
             builtin ? " and a " : "",
             builtin ? ((PyTypeObject*)builtin)->tp_name : "");
    weft_py_errors[code] = weft_py_error_new(qualified, bases, doc);
    Py_DECREF(bases);
    // The class knows its code, so one a program raises itself (a host
    // call's) carries it too.
    PyObject* class_code = PyLong_FromLong(code);
    if (!weft_py_errors[code] || !class_code ||
        PyObject_SetAttrString(weft_py_errors[code], "code", class_code) < 0 ||
        PyModule_AddObjectRef(module, name, weft_py_errors[code]) < 0) {
      Py_XDECREF(class_code);
      return -1;
    }
    Py_DECREF(class_code);
    PyObject* key = PyLong_FromLong(code);
    PyObject* value = PyUnicode_FromString(
        weft_status_code_string((weft_status_code_t)code));
    if (!key || !value || PyDict_SetItem(codes, key, value) < 0) {
      Py_XDECREF(key);
      Py_XDECREF(value);
      Py_DECREF(codes);
      return -1;
    }
    Py_DECREF(key);
    Py_DECREF(value);
  }
  const int added = PyModule_AddObjectRef(module, "STATUS_CODES", codes);
  Py_DECREF(codes);
  return added;
}

//===----------------------------------------------------------------------===//
// Timeouts and lists
//===----------------------------------------------------------------------===//

bool weft_py_timeout(PyObject* seconds, weft_timeout_t* out_timeout) {
  if (!seconds || seconds == Py_None) {
    *out_timeout = weft_timeout_infinite();
    return true;
  }
  const double value = PyFloat_AsDouble(seconds);
  if (value == -1.0 && PyErr_Occurred()) return false;
  if (!(value >= 0.0)) {
    PyErr_Format(PyExc_ValueError,
                 "timeout must be None or seconds >= 0, got %R", seconds);
    return false;
  }
  *out_timeout = value > 1e9 ? weft_timeout_infinite()
                             : weft_timeout_relative((int64_t)(value * 1e9));
  return true;
}

void weft_py_semaphore_list_deinitialize(weft_py_semaphore_list_t* list) {
  if (list->semaphores != list->inline_semaphores) {
    PyMem_Free(list->semaphores);
  }
  if (list->values != list->inline_values) PyMem_Free(list->values);
  list->semaphores = NULL;
  list->values = NULL;
  list->list = weft_semaphore_list_empty();
}

bool weft_py_semaphore_list_parse(PyObject* object, const char* function,
                                  const char* what,
                                  weft_py_semaphore_list_t* out_list) {
  out_list->list = weft_semaphore_list_empty();
  out_list->semaphores = out_list->inline_semaphores;
  out_list->values = out_list->inline_values;
  if (!object || object == Py_None) return true;
  PyObject* sequence = PySequence_Fast(
      object, "must be None or a sequence of (Semaphore, value) pairs");
  if (!sequence) {
    PyErr_Format(PyExc_TypeError,
                 "%s must be None or a sequence of (Semaphore, value) "
                 "pairs, got %.100s",
                 what, Py_TYPE(object)->tp_name);
    return false;
  }
  const Py_ssize_t count = PySequence_Fast_GET_SIZE(sequence);
  if (count > WEFT_PY_LIST_INLINE) {
    out_list->semaphores = PyMem_Calloc((size_t)count, sizeof(void*));
    out_list->values = PyMem_Calloc((size_t)count, sizeof(uint64_t));
    if (!out_list->semaphores || !out_list->values) {
      Py_DECREF(sequence);
      PyErr_NoMemory();
      return false;
    }
  }
  bool ok = true;
  for (Py_ssize_t i = 0; ok && i < count; ++i) {
    PyObject* pair = PySequence_Fast_GET_ITEM(sequence, i);
    PyObject* semaphore = NULL;
    uint64_t value = 0;
    if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
      PyErr_Format(PyExc_TypeError,
                   "%s[%zd] must be a (Semaphore, value) pair, got %.100s",
                   what, i, Py_TYPE(pair)->tp_name);
      ok = false;
      break;
    }
    semaphore = PyTuple_GET_ITEM(pair, 0);
    // The common case inline; the name of the item is formatted only for
    // an error (a snprintf per pair was most of a list's cost).
    out_list->semaphores[i] =
        PyObject_TypeCheck(semaphore, &weft_py_semaphore_type)
            ? ((weft_py_semaphore_t*)semaphore)->semaphore
            : NULL;
    if (!out_list->semaphores[i]) {
      char item[64];
      snprintf(item, sizeof(item), "%s[%zd][0]", what, i);
      weft_py_semaphore_handle(semaphore, item);
      ok = false;
      break;
    }
    PyObject* value_object = PyTuple_GET_ITEM(pair, 1);
    if (!weft_py_integer_try(value_object, WEFT_PY_INTEGER_U64, &value)) {
      char item[64];
      snprintf(item, sizeof(item), "%s[%zd][1]", what, i);
      weft_py_integer_refuse(value_object, WEFT_PY_INTEGER_U64, function,
                             item);
      ok = false;
      break;
    }
    out_list->values[i] = value;
  }
  Py_DECREF(sequence);
  if (!ok) {
    weft_py_semaphore_list_deinitialize(out_list);
    return false;
  }
  out_list->list.count = (uint32_t)count;
  out_list->list.semaphores = out_list->semaphores;
  out_list->list.values = out_list->values;
  return true;
}

bool weft_py_queue_lists_parse(const char* function, PyObject* wait,
                               PyObject* signal, weft_py_queue_lists_t* out) {
  if (!weft_py_semaphore_list_parse(wait, function, "wait", &out->wait)) {
    return false;
  }
  if (!weft_py_semaphore_list_parse(signal, function, "signal",
                                    &out->signal)) {
    weft_py_semaphore_list_deinitialize(&out->wait);
    return false;
  }
  return true;
}

PyObject* weft_py_queue_lists_finish(weft_py_queue_lists_t* lists,
                                     weft_status_t status) {
  weft_py_semaphore_list_deinitialize(&lists->wait);
  weft_py_semaphore_list_deinitialize(&lists->signal);
  if (!weft_py_ok(status)) return NULL;
  Py_RETURN_NONE;
}

// How long a wait runs without the GIL before Python checks for signals
// (Ctrl-C): short enough to feel immediate, long enough to cost nothing.
#define WEFT_PY_WAIT_SLICE_NS (50 * 1000 * 1000)

bool weft_py_wait_in_slices(weft_py_wait_fn_t wait,
                            weft_py_wait_check_fn_t check, void* target,
                            weft_time_t deadline, weft_status_t* out_status) {
  weft_status_t status = WEFT_OK;
  for (;;) {
    weft_time_t slice_end = weft_time_now() + WEFT_PY_WAIT_SLICE_NS;
    const bool last = deadline <= slice_end;
    if (last) slice_end = deadline;
    Py_BEGIN_ALLOW_THREADS
    status = wait(target, slice_end);
    Py_END_ALLOW_THREADS
    if (last || !weft_status_is(status, WEFT_STATUS_DEADLINE_EXCEEDED)) break;
    weft_status_free(status);
    status = check ? check(target) : WEFT_OK;
    if (!weft_status_is_ok(status)) break;
    if (PyErr_CheckSignals() < 0) {
      *out_status = WEFT_OK;
      return false;
    }
  }
  *out_status = status;
  return true;
}

void weft_py_buffer_ref_to_end(weft_buffer_ref_t* ref) {
  if (ref->buffer && ref->length == WEFT_WHOLE_BUFFER) {
    const uint64_t size = weft_buffer_byte_length(ref->buffer);
    ref->length = ref->offset < size ? size - ref->offset : 0;
  }
}

//===----------------------------------------------------------------------===//
// Module
//===----------------------------------------------------------------------===//

PyDoc_STRVAR(weft_py_drivers_doc,
             "drivers($module, /)\n--\n\n"
             "The drivers built into this weft, a list of (name, "
             "description) pairs (\"local-sync\", \"local-task\", ...).");

static PyObject* weft_py_drivers(PyObject* module, PyObject* unused) {
  weft_driver_registry_t* registry = NULL;
  weft_status_t status =
      weft_driver_registry_create_default(weft_py_allocator(), &registry);
  if (!weft_status_is_ok(status)) return weft_py_raise(status);
  PyObject* list = PyList_New(0);
  const uint32_t count = weft_driver_registry_count(registry);
  for (uint32_t i = 0; list && i < count; ++i) {
    const weft_driver_t* driver = weft_driver_registry_get(registry, i);
    PyObject* pair = Py_BuildValue("(ss)", driver->name,
                                   driver->description ? driver->description
                                                       : "");
    if (!pair || PyList_Append(list, pair) < 0) Py_CLEAR(list);
    Py_XDECREF(pair);
  }
  weft_driver_registry_release(registry);
  return list;
}

static PyMethodDef weft_py_methods[] = {
    {"drivers", weft_py_drivers, METH_NOARGS, weft_py_drivers_doc},
    {"dlpack_capsule", weft_py_dlpack_capsule, METH_VARARGS,
     "dlpack_capsule($module, buffer, element_type, shape, byte_offset, /)\n"
     "--\n\nA DLPack capsule over a host-visible buffer's memory "
     "(weft.Tensor's __dlpack__)."},
    {"trace_start", weft_py_trace_start, METH_O,
     "trace_start($module, path, /)\n--\n\nRecords what weft does (queue "
     "operations, waits, dispatches) into a Chrome trace at |path| "
     "(Perfetto opens it) until trace_stop()."},
    {"trace_stop", weft_py_trace_stop, METH_NOARGS,
     "trace_stop($module, /)\n--\n\nWrites and closes the trace."},
    {"_integer", (PyCFunction)(void (*)(void))weft_py_integer_check,
     METH_FASTCALL,
     "_integer($module, value, type, function, argument, /)\n--\n\n"
     "|value| as an int of |type| ('u64', 'u32', 'i64', 'i32'), refused as "
     "every integer argument of the package is (TypeError, "
     "OverflowError), naming |argument| of |function|; for weft's Python "
     "layer."},
    {"_live_allocations", weft_py_live_allocations_get, METH_NOARGS,
     "_live_allocations($module, /)\n--\n\nThe number of blocks the "
     "extension's objects hold (devices, semaphores and all they "
     "allocate); for tests."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef weft_py_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "weft._weft",
    .m_doc = "weft's C API for Python (use the weft package).",
    .m_size = -1,
    .m_methods = weft_py_methods,
};

// The extension's entry point (CPython finds it by name).
PyMODINIT_FUNC PyInit__weft(void);
PyMODINIT_FUNC PyInit__weft(void) {
  PyObject* module = PyModule_Create(&weft_py_module);
  if (!module) return NULL;
  if (weft_py_errors_setup(module) < 0 || weft_py_device_setup(module) < 0 ||
      weft_py_semaphore_setup(module) < 0 ||
      weft_py_buffer_setup(module) < 0 || weft_py_notifier_setup(module) < 0 ||
      weft_py_program_setup(module) < 0 || weft_py_kernels_setup(module) < 0 ||
      weft_py_io_setup(module) < 0) {
    Py_DECREF(module);
    return NULL;
  }
  return module;
}
