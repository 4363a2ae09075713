// weft._weft.File, the queue's read, write and host calls, and tracing
// (weft_python.h).
#include <string.h>

#include "weft_python.h"

//===----------------------------------------------------------------------===//
// File
//===----------------------------------------------------------------------===//

typedef struct weft_py_file_t {
  PyObject_HEAD
  weft_file_t* file;  // NULL once closed
} weft_py_file_t;

PyTypeObject weft_py_file_type;

static weft_file_t* weft_py_file_handle(PyObject* object, const char* what) {
  if (!PyObject_TypeCheck(object, &weft_py_file_type)) {
    PyErr_Format(PyExc_TypeError, "%s must be a weft.File, got %.100s", what,
                 Py_TYPE(object)->tp_name);
    return NULL;
  }
  weft_file_t* file = ((weft_py_file_t*)object)->file;
  if (!file) PyErr_Format(PyExc_ValueError, "%s: the file is closed", what);
  return file;
}

// File(path, mode="r"): "r" reads, "w" writes (created, truncated), "r+"
// both (created if missing, not truncated).
static int weft_py_file_init(weft_py_file_t* self, PyObject* args,
                             PyObject* kwargs) {
  static char* keywords[] = {"path", "mode", NULL};
  PyObject* path = NULL;
  const char* mode = "r";
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&|s:File", keywords,
                                   PyUnicode_FSConverter, &path, &mode)) {
    return -1;
  }
  weft_file_access_t access = 0;
  weft_file_open_flags_t flags = WEFT_FILE_OPEN_FLAG_NONE;
  if (strcmp(mode, "r") == 0) {
    access = WEFT_FILE_ACCESS_READ;
  } else if (strcmp(mode, "w") == 0) {
    access = WEFT_FILE_ACCESS_WRITE;
    flags = WEFT_FILE_OPEN_FLAG_CREATE | WEFT_FILE_OPEN_FLAG_TRUNCATE;
  } else if (strcmp(mode, "r+") == 0) {
    access = WEFT_FILE_ACCESS_READ | WEFT_FILE_ACCESS_WRITE;
    flags = WEFT_FILE_OPEN_FLAG_CREATE;
  } else {
    Py_DECREF(path);
    PyErr_Format(PyExc_ValueError, "mode must be 'r', 'w' or 'r+', got '%s'",
                 mode);
    return -1;
  }
  weft_file_release(self->file);
  self->file = NULL;
  weft_status_t status = weft_file_open(PyBytes_AS_STRING(path), access, flags,
                                        weft_py_allocator(), &self->file);
  Py_DECREF(path);
  return weft_py_ok(status) ? 0 : -1;
}

static void weft_py_file_dealloc(weft_py_file_t* self) {
  weft_file_t* file = self->file;
  self->file = NULL;
  WEFT_PY_RELEASE_WITHOUT_GIL(weft_file_release(file));
  Py_TYPE(self)->tp_free((PyObject*)self);
}

static PyObject* weft_py_file_close(weft_py_file_t* self, PyObject* unused) {
  weft_file_t* file = self->file;
  self->file = NULL;
  WEFT_PY_RELEASE_WITHOUT_GIL(weft_file_release(file));
  Py_RETURN_NONE;
}

static PyObject* weft_py_file_enter(weft_py_file_t* self, PyObject* unused) {
  if (!weft_py_file_handle((PyObject*)self, "File")) return NULL;
  return Py_NewRef(self);
}

static PyObject* weft_py_file_exit(weft_py_file_t* self, PyObject* args) {
  return weft_py_file_close(self, NULL);
}

static PyMethodDef weft_py_file_methods[] = {
    {"close", (PyCFunction)weft_py_file_close, METH_NOARGS,
     "close()\n\nDrops this object's reference (queued reads and writes "
     "keep theirs). Idempotent."},
    {"__enter__", (PyCFunction)weft_py_file_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)weft_py_file_exit, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

PyTypeObject weft_py_file_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "weft.File",
    .tp_doc = "File(path, mode='r')\n\nA file queue operations read and write "
              "(Device.read, Device.write): 'r', 'w' (created, truncated) "
              "or 'r+' (created if missing). NotFoundError and the like "
              "name the path and the system's reason.",
    .tp_basicsize = sizeof(weft_py_file_t),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)weft_py_file_init,
    .tp_dealloc = (destructor)weft_py_file_dealloc,
    .tp_methods = weft_py_file_methods,
};

//===----------------------------------------------------------------------===//
// Device.read, Device.write
//===----------------------------------------------------------------------===//

// read(file, target, file_offset=0, length=None, *, wait, signal): |target|
// a Buffer, Tensor or (buffer, offset, length); length None: the target's.
PyObject* weft_py_device_read(PyObject* self, PyObject* args,
                              PyObject* kwargs) {
  static char* keywords[] = {"file", "target", "file_offset", "wait", "signal",
                             NULL};
  PyObject *file_object, *target, *wait = NULL, *signal = NULL;
  unsigned long long file_offset = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|K$OO:read", keywords,
                                   &file_object, &target, &file_offset, &wait,
                                   &signal)) {
    return NULL;
  }
  weft_device_t* device = weft_py_device_handle(self, "Device");
  weft_file_t* file = device ? weft_py_file_handle(file_object, "file") : NULL;
  weft_buffer_ref_t ref;
  if (!file || !weft_py_buffer_ref_parse(target, "target", 0, &ref)) {
    return NULL;
  }
  if (ref.length == WEFT_WHOLE_BUFFER) {
    const uint64_t size = weft_buffer_byte_length(ref.buffer);
    ref.length = ref.offset < size ? size - ref.offset : 0;
  }
  weft_py_semaphore_list_t waits, signals;
  if (!weft_py_semaphore_list_parse(wait, "wait", &waits)) return NULL;
  if (!weft_py_semaphore_list_parse(signal, "signal", &signals)) {
    weft_py_semaphore_list_deinitialize(&waits);
    return NULL;
  }
  weft_status_t status = weft_device_queue_read(
      device, WEFT_QUEUE_AFFINITY_ANY, waits.list, signals.list, file,
      file_offset, ref.buffer, ref.offset, ref.length);
  weft_py_semaphore_list_deinitialize(&waits);
  weft_py_semaphore_list_deinitialize(&signals);
  if (!weft_py_ok(status)) return NULL;
  Py_RETURN_NONE;
}

// write(source, file, file_offset=0, *, wait, signal)
PyObject* weft_py_device_write(PyObject* self, PyObject* args,
                               PyObject* kwargs) {
  static char* keywords[] = {"source", "file", "file_offset", "wait", "signal",
                             NULL};
  PyObject *source, *file_object, *wait = NULL, *signal = NULL;
  unsigned long long file_offset = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|K$OO:write", keywords,
                                   &source, &file_object, &file_offset, &wait,
                                   &signal)) {
    return NULL;
  }
  weft_device_t* device = weft_py_device_handle(self, "Device");
  weft_file_t* file = device ? weft_py_file_handle(file_object, "file") : NULL;
  weft_buffer_ref_t ref;
  if (!file || !weft_py_buffer_ref_parse(source, "source", 0, &ref)) {
    return NULL;
  }
  if (ref.length == WEFT_WHOLE_BUFFER) {
    const uint64_t size = weft_buffer_byte_length(ref.buffer);
    ref.length = ref.offset < size ? size - ref.offset : 0;
  }
  weft_py_semaphore_list_t waits, signals;
  if (!weft_py_semaphore_list_parse(wait, "wait", &waits)) return NULL;
  if (!weft_py_semaphore_list_parse(signal, "signal", &signals)) {
    weft_py_semaphore_list_deinitialize(&waits);
    return NULL;
  }
  weft_status_t status = weft_device_queue_write(
      device, WEFT_QUEUE_AFFINITY_ANY, waits.list, signals.list, ref.buffer,
      ref.offset, file, file_offset, ref.length);
  weft_py_semaphore_list_deinitialize(&waits);
  weft_py_semaphore_list_deinitialize(&signals);
  if (!weft_py_ok(status)) return NULL;
  Py_RETURN_NONE;
}

//===----------------------------------------------------------------------===//
// Device.host_call
//===----------------------------------------------------------------------===//

// The status for the exception |value| a host function raised: a
// weft.Error keeps its code and message; anything else is UNKNOWN with the
// exception's type and text.
static weft_status_t weft_py_exception_status(PyObject* value) {
  weft_status_code_t code = WEFT_STATUS_UNKNOWN;
  // weft_py_error_class of no code is weft.Error itself.
  PyObject* code_object =
      PyObject_IsInstance(value, weft_py_error_class(WEFT_STATUS_OK)) == 1
          ? PyObject_GetAttrString(value, "code")
          : NULL;
  if (code_object && PyLong_Check(code_object)) {
    const long number = PyLong_AsLong(code_object);
    if (number > 0 && number < WEFT_STATUS_CODE_COUNT_ &&
        number != WEFT_STATUS_DEFERRED) {
      code = (weft_status_code_t)number;
    }
  }
  Py_XDECREF(code_object);
  PyErr_Clear();
  PyObject* text = PyObject_Str(value);
  const char* message = text ? PyUnicode_AsUTF8(text) : NULL;
  weft_status_t status = weft_status_make_(
      NULL, 0, code, "%s: %s (in a Python host call)",
      Py_TYPE(value)->tp_name, message ? message : "?");
  Py_XDECREF(text);
  PyErr_Clear();
  return status;
}

static weft_status_t weft_py_host_call(void* user_data,
                                       const uint64_t args[4],
                                       const weft_host_call_context_t* context) {
  PyObject* fn = (PyObject*)user_data;
  // Any thread: a queue's worker, or the submitting thread (local-sync).
  PyGILState_STATE gil = PyGILState_Ensure();
  weft_status_t status = WEFT_OK;
  if (weft_status_is_ok(context->not_run_status)) {
    PyObject* result = PyObject_CallNoArgs(fn);
    if (result) {
      Py_DECREF(result);
    } else {
      PyObject *type, *value, *traceback;
      PyErr_Fetch(&type, &value, &traceback);
      PyErr_NormalizeException(&type, &value, &traceback);
      status = value ? weft_py_exception_status(value)
                     : WEFT_STATUS(UNKNOWN, "a Python host call failed");
      Py_XDECREF(type);
      Py_XDECREF(value);
      Py_XDECREF(traceback);
    }
  }
  Py_DECREF(fn);  // the call owned its reference (run or not)
  PyGILState_Release(gil);
  return status;
}

// host_call(fn, *, wait, signal): fn() runs once the waits are reached.
PyObject* weft_py_device_host_call(PyObject* self, PyObject* args,
                                   PyObject* kwargs) {
  static char* keywords[] = {"fn", "wait", "signal", NULL};
  PyObject *fn, *wait = NULL, *signal = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OO:host_call", keywords,
                                   &fn, &wait, &signal)) {
    return NULL;
  }
  if (!PyCallable_Check(fn)) {
    PyErr_Format(PyExc_TypeError, "fn must be callable, got %.100s",
                 Py_TYPE(fn)->tp_name);
    return NULL;
  }
  weft_device_t* device = weft_py_device_handle(self, "Device");
  if (!device) return NULL;
  weft_py_semaphore_list_t waits, signals;
  if (!weft_py_semaphore_list_parse(wait, "wait", &waits)) return NULL;
  if (!weft_py_semaphore_list_parse(signal, "signal", &signals)) {
    weft_py_semaphore_list_deinitialize(&waits);
    return NULL;
  }
  Py_INCREF(fn);  // released by the call, run or told it will not run
  weft_status_t status = weft_device_queue_host_call(
      device, WEFT_QUEUE_AFFINITY_ANY, waits.list, signals.list,
      weft_py_host_call, fn, NULL, WEFT_HOST_CALL_FLAG_TOLD_IF_NOT_RUN);
  weft_py_semaphore_list_deinitialize(&waits);
  weft_py_semaphore_list_deinitialize(&signals);
  if (!weft_status_is_ok(status)) Py_DECREF(fn);  // never queued
  if (!weft_py_ok(status)) return NULL;
  Py_RETURN_NONE;
}

//===----------------------------------------------------------------------===//
// Tracing
//===----------------------------------------------------------------------===//

// trace_start(path): records a trace (Chrome's JSON) until trace_stop().
PyObject* weft_py_trace_start(PyObject* module, PyObject* path_object) {
  PyObject* path = NULL;
  if (!PyUnicode_FSConverter(path_object, &path)) return NULL;
  weft_status_t status = weft_trace_start(PyBytes_AS_STRING(path));
  Py_DECREF(path);
  if (!weft_py_ok(status)) return NULL;
  Py_RETURN_NONE;
}

PyObject* weft_py_trace_stop(PyObject* module, PyObject* unused) {
  weft_status_t status;
  Py_BEGIN_ALLOW_THREADS
  status = weft_trace_stop();
  Py_END_ALLOW_THREADS
  if (!weft_py_ok(status)) return NULL;
  Py_RETURN_NONE;
}

int weft_py_io_setup(PyObject* module) {
  if (PyType_Ready(&weft_py_file_type) < 0) return -1;
  return PyModule_AddObjectRef(module, "File", (PyObject*)&weft_py_file_type);
}
