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

static PyObject* weft_py_file_repr(weft_py_file_t* self) {
  if (!self->file) return PyUnicode_FromString("<weft.File (closed)>");
  return PyUnicode_FromFormat("<weft.File '%s'>", weft_file_name(self->file));
}

static PyMethodDef weft_py_file_methods[] = {
    {"close", (PyCFunction)weft_py_file_close, METH_NOARGS,
     "close($self, /)\n--\n\nDrops this object's reference (queued reads "
     "and writes keep theirs). Idempotent."},
    {"__enter__", (PyCFunction)weft_py_file_enter, METH_NOARGS,
     "__enter__($self, /)\n--\n\nThe file; __exit__ closes it."},
    {"__exit__", (PyCFunction)weft_py_file_exit, METH_VARARGS,
     "__exit__($self, /, *exc_info)\n--\n\nCloses the file."},
    {NULL, NULL, 0, NULL},
};

PyTypeObject weft_py_file_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "weft.File",
    .tp_doc = "File(path, mode='r')\n--\n\nA file queue operations read "
              "and write (Device.read, Device.write): 'r', 'w' (created, "
              "truncated) "
              "or 'r+' (created if missing). NotFoundError and the like "
              "name the path and the system's reason.",
    .tp_basicsize = sizeof(weft_py_file_t),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)weft_py_file_init,
    .tp_dealloc = (destructor)weft_py_file_dealloc,
    .tp_repr = (reprfunc)weft_py_file_repr,
    .tp_methods = weft_py_file_methods,
};

//===----------------------------------------------------------------------===//
// Device.read, Device.write
//===----------------------------------------------------------------------===//

// What read and write take: the file (argument |file_index|), a buffer
// reference (the other of the first two, to its end when its length is
// None), file_offset, wait and signal. False with the error raised; the
// lists are the caller's to finish when true.
typedef struct weft_py_file_transfer_t {
  weft_device_t* device;
  weft_file_t* file;
  weft_buffer_ref_t ref;
  uint64_t file_offset;
  weft_py_queue_lists_t lists;
} weft_py_file_transfer_t;

static bool weft_py_file_transfer_parse(PyObject* self,
                                        weft_py_parameters_t* parameters,
                                        PyObject* const* args,
                                        Py_ssize_t nargs, PyObject* kwnames,
                                        int file_index,
                                        weft_py_file_transfer_t* out) {
  PyObject* a[5];
  const int ref_index = 1 - file_index;
  out->file_offset = 0;
  if (!weft_py_arguments_parse(parameters, args, nargs, kwnames, a) ||
      !weft_py_argument_u64(parameters, 2, a[2], &out->file_offset)) {
    return false;
  }
  out->device = weft_py_device_handle(self, "Device");
  out->file = out->device ? weft_py_file_handle(a[file_index], "file") : NULL;
  if (!out->file ||
      !weft_py_buffer_ref_parse(a[ref_index], parameters->function,
                                parameters->names[ref_index], -1,
                                &out->ref)) {
    return false;
  }
  weft_py_buffer_ref_to_end(&out->ref);
  return weft_py_queue_lists_parse(parameters->function, a[3], a[4],
                                   &out->lists);
}

// read(file, target, file_offset=0, *, wait, signal): |target| a Buffer,
// Tensor or (buffer, offset, length); length None: to the buffer's end.
PyObject* weft_py_device_read(PyObject* self, PyObject* const* args,
                              Py_ssize_t nargs, PyObject* kwnames) {
  static weft_py_parameters_t parameters = {
      .function = "read", .positional = 3, .required = 2,
      .names = {"file", "target", "file_offset", "wait", "signal"}};
  weft_py_file_transfer_t read;
  if (!weft_py_file_transfer_parse(self, &parameters, args, nargs, kwnames,
                                   /*file_index=*/0, &read)) {
    return NULL;
  }
  return weft_py_queue_lists_finish(
      &read.lists,
      weft_device_queue_read(read.device, WEFT_QUEUE_AFFINITY_ANY,
                             read.lists.wait.list, read.lists.signal.list,
                             read.file, read.file_offset, read.ref.buffer,
                             read.ref.offset, read.ref.length));
}

// write(source, file, file_offset=0, *, wait, signal)
PyObject* weft_py_device_write(PyObject* self, PyObject* const* args,
                               Py_ssize_t nargs, PyObject* kwnames) {
  static weft_py_parameters_t parameters = {
      .function = "write", .positional = 3, .required = 2,
      .names = {"source", "file", "file_offset", "wait", "signal"}};
  weft_py_file_transfer_t write;
  if (!weft_py_file_transfer_parse(self, &parameters, args, nargs, kwnames,
                                   /*file_index=*/1, &write)) {
    return NULL;
  }
  return weft_py_queue_lists_finish(
      &write.lists,
      weft_device_queue_write(write.device, WEFT_QUEUE_AFFINITY_ANY,
                              write.lists.wait.list, write.lists.signal.list,
                              write.ref.buffer, write.ref.offset, write.file,
                              write.file_offset, write.ref.length));
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

static weft_status_t weft_py_host_call(
    void* user_data, const uint64_t args[4],
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
PyObject* weft_py_device_host_call(PyObject* self, PyObject* const* args,
                                   Py_ssize_t nargs, PyObject* kwnames) {
  static weft_py_parameters_t parameters = {
      .function = "host_call", .positional = 1, .required = 1,
      .names = {"fn", "wait", "signal"}};
  PyObject* a[3];
  if (!weft_py_arguments_parse(&parameters, args, nargs, kwnames, a)) {
    return NULL;
  }
  PyObject* fn = a[0];
  if (!PyCallable_Check(fn)) {
    PyErr_Format(PyExc_TypeError, "fn must be callable, got %.100s",
                 Py_TYPE(fn)->tp_name);
    return NULL;
  }
  weft_device_t* device = weft_py_device_handle(self, "Device");
  if (!device) return NULL;
  weft_py_queue_lists_t lists;
  if (!weft_py_queue_lists_parse("host_call", a[1], a[2], &lists)) {
    return NULL;
  }
  Py_INCREF(fn);  // released by the call, run or told it will not run
  weft_status_t status = weft_device_queue_host_call(
      device, WEFT_QUEUE_AFFINITY_ANY, lists.wait.list, lists.signal.list,
      weft_py_host_call, fn, NULL, WEFT_HOST_CALL_FLAG_TOLD_IF_NOT_RUN);
  if (!weft_status_is_ok(status)) Py_DECREF(fn);  // never queued
  return weft_py_queue_lists_finish(&lists, status);
}

//===----------------------------------------------------------------------===//
// ParameterStream
//===----------------------------------------------------------------------===//

typedef struct weft_py_stream_t {
  PyObject_HEAD
  weft_parameter_stream_t* stream;  // NULL once closed
  // Threads inside wait() (without the GIL): close() refuses meanwhile, as
  // the stream has no reference count to hold it by.
  int waiters;
} weft_py_stream_t;

PyTypeObject weft_py_stream_type;

static weft_parameter_stream_t* weft_py_stream_handle(weft_py_stream_t* self) {
  if (!self->stream) {
    PyErr_SetString(PyExc_ValueError, "the parameter stream is closed");
  }
  return self->stream;
}

static void weft_py_stream_dealloc(weft_py_stream_t* self) {
  weft_parameter_stream_t* stream = self->stream;
  self->stream = NULL;
  WEFT_PY_RELEASE_WITHOUT_GIL(weft_parameter_stream_release(stream));
  Py_TYPE(self)->tp_free((PyObject*)self);
}

static PyObject* weft_py_stream_close(weft_py_stream_t* self,
                                      PyObject* unused) {
  if (self->waiters) {
    PyErr_SetString(PyExc_RuntimeError,
                    "ParameterStream.close: another thread is in wait()");
    return NULL;
  }
  weft_parameter_stream_t* stream = self->stream;
  self->stream = NULL;
  if (stream) {
    WEFT_PY_RELEASE_WITHOUT_GIL(weft_parameter_stream_release(stream));
  }
  Py_RETURN_NONE;
}

static PyObject* weft_py_stream_cancel(weft_py_stream_t* self,
                                       PyObject* unused) {
  weft_parameter_stream_t* stream = weft_py_stream_handle(self);
  if (!stream) return NULL;
  weft_parameter_stream_cancel(stream);
  Py_RETURN_NONE;
}

static weft_status_t weft_py_stream_wait_until(void* stream,
                                               weft_time_t deadline) {
  return weft_parameter_stream_wait((weft_parameter_stream_t*)stream,
                                    weft_timeout_deadline(deadline));
}

// wait(timeout=None): without the GIL, in slices so Ctrl-C interrupts it.
static PyObject* weft_py_stream_wait(weft_py_stream_t* self, PyObject* args,
                                     PyObject* kwargs) {
  static char* keywords[] = {"timeout", NULL};
  PyObject* timeout_object = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:wait", keywords,
                                   &timeout_object)) {
    return NULL;
  }
  weft_parameter_stream_t* stream = weft_py_stream_handle(self);
  weft_timeout_t timeout;
  if (!stream || !weft_py_timeout(timeout_object, &timeout)) return NULL;
  weft_status_t status = WEFT_OK;
  ++self->waiters;
  const bool waited =
      weft_py_wait_in_slices(weft_py_stream_wait_until, NULL, stream,
                             weft_timeout_as_deadline(timeout), &status);
  --self->waiters;
  if (!waited || !weft_py_ok(status)) return NULL;
  Py_RETURN_NONE;
}

static PyObject* weft_py_stream_get_progress(weft_py_stream_t* self,
                                             void* unused) {
  weft_parameter_stream_t* stream = weft_py_stream_handle(self);
  if (!stream) return NULL;
  const weft_parameter_progress_t progress =
      weft_parameter_stream_progress(stream);
  return Py_BuildValue("{sKsKsIsIsI}", "bytes_loaded",
                       (unsigned long long)progress.bytes_loaded,
                       "bytes_total", (unsigned long long)progress.bytes_total,
                       "spans_loaded", progress.spans_loaded, "span_count",
                       progress.span_count, "reads_in_flight",
                       progress.reads_in_flight);
}

static PyObject* weft_py_stream_get_direct_io_used(weft_py_stream_t* self,
                                                   void* unused) {
  weft_parameter_stream_t* stream = weft_py_stream_handle(self);
  if (!stream) return NULL;
  return PyBool_FromLong(weft_parameter_stream_direct_io_used(stream));
}

static PyObject* weft_py_stream_repr(weft_py_stream_t* self) {
  if (!self->stream) {
    return PyUnicode_FromString("<weft.ParameterStream (closed)>");
  }
  const weft_parameter_progress_t progress =
      weft_parameter_stream_progress(self->stream);
  return PyUnicode_FromFormat(
      "<weft.ParameterStream %u of %u spans, %llu of %llu bytes loaded>",
      (unsigned)progress.spans_loaded, (unsigned)progress.span_count,
      (unsigned long long)progress.bytes_loaded,
      (unsigned long long)progress.bytes_total);
}

static PyMethodDef weft_py_stream_methods[] = {
    {"wait", (PyCFunction)(void (*)(void))weft_py_stream_wait,
     METH_VARARGS | METH_KEYWORDS,
     "wait($self, /, timeout=None)\n--\n\nBlocks (without the GIL; Ctrl-C "
     "interrupts) until every span is loaded (timeout in seconds; None: "
     "forever; a negative timeout is refused with ValueError); raises the "
     "first failure (naming its span), CancelledError after cancel(), "
     "DeadlineExceededError on timeout (the stream goes on)."},
    {"cancel", (PyCFunction)weft_py_stream_cancel, METH_NOARGS,
     "cancel($self, /)\n--\n\nStarts no more reads; the stream ends "
     "CANCELLED."},
    {"close", (PyCFunction)weft_py_stream_close, METH_NOARGS,
     "close($self, /)\n--\n\nCancels the stream if it still runs, waits "
     "for its reads and frees it. Idempotent."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef weft_py_stream_getset[] = {
    {"progress", (getter)weft_py_stream_get_progress, NULL,
     "{bytes_loaded, bytes_total, spans_loaded, span_count, "
     "reads_in_flight}.",
     NULL},
    {"direct_io_used", (getter)weft_py_stream_get_direct_io_used, NULL,
     "True when a chunk was read with O_DIRECT.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject weft_py_stream_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "weft.ParameterStream",
    .tp_doc = "File ranges loading into device buffers, many reads in "
              "flight (Device.load_parameters).",
    .tp_basicsize = sizeof(weft_py_stream_t),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)weft_py_stream_dealloc,
    .tp_repr = (reprfunc)weft_py_stream_repr,
    .tp_methods = weft_py_stream_methods,
    .tp_getset = weft_py_stream_getset,
};

// load_parameters(spans, *, max_reads_in_flight=16, chunk_size=4 MiB,
// direct_io=False) -> ParameterStream: |spans| [(file, file_offset,
// target), ...], |target| a Buffer, Tensor or (buffer, offset, length).
PyObject* weft_py_device_load_parameters(PyObject* self, PyObject* args,
                                         PyObject* kwargs) {
  static char* keywords[] = {"spans", "max_reads_in_flight", "chunk_size",
                             "direct_io", NULL};
  PyObject* spans_object = NULL;
  PyObject* max_reads_object = NULL;
  PyObject* chunk_size_object = NULL;
  uint32_t max_reads = WEFT_PARAMETER_STREAM_DEFAULT_READS_IN_FLIGHT;
  uint64_t chunk_size = WEFT_PARAMETER_STREAM_DEFAULT_CHUNK_SIZE;
  int direct_io = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OOp:load_parameters",
                                   keywords, &spans_object, &max_reads_object,
                                   &chunk_size_object, &direct_io) ||
      (max_reads_object &&
       !weft_py_u32(max_reads_object, "load_parameters",
                    "max_reads_in_flight", &max_reads)) ||
      (chunk_size_object &&
       !weft_py_u64(chunk_size_object, "load_parameters", "chunk_size",
                    &chunk_size))) {
    return NULL;
  }
  weft_device_t* device = weft_py_device_handle(self, "Device");
  if (!device) return NULL;
  PyObject* sequence = PySequence_Fast(spans_object, "spans must be a list");
  if (!sequence) return NULL;
  const Py_ssize_t count = PySequence_Fast_GET_SIZE(sequence);
  weft_parameter_span_t* spans =
      PyMem_Calloc(count ? (size_t)count : 1, sizeof(*spans));
  bool ok = spans != NULL;
  if (!ok) PyErr_NoMemory();
  for (Py_ssize_t i = 0; ok && i < count; ++i) {
    PyObject* file_object = NULL;
    PyObject* file_offset_object = NULL;
    uint64_t file_offset = 0;
    PyObject* target = NULL;
    weft_buffer_ref_t ref;
    ok = PyArg_ParseTuple(PySequence_Fast_GET_ITEM(sequence, i), "OOO",
                          &file_object, &file_offset_object, &target);
    if (!ok) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError,
                   "spans[%zd] must be (file, file_offset, target)", i);
      break;
    }
    if (!weft_py_integer_try(file_offset_object, WEFT_PY_INTEGER_U64,
                             &file_offset)) {
      char name[48];
      snprintf(name, sizeof(name), "spans[%zd][1]", i);
      ok = weft_py_integer_refuse(file_offset_object, WEFT_PY_INTEGER_U64,
                                  "load_parameters", name);
      break;
    }
    weft_file_t* file = weft_py_file_handle(file_object, "file");
    char target_name[48];
    snprintf(target_name, sizeof(target_name), "spans[%zd][2]", i);
    ok = file && weft_py_buffer_ref_parse(target, "load_parameters",
                                          target_name, -1, &ref);
    if (ok && !ref.buffer) {
      PyErr_Format(PyExc_TypeError, "spans[%zd]: a buffer, not a slot", i);
      ok = false;
    }
    if (ok) {
      weft_py_buffer_ref_to_end(&ref);
      spans[i] = (weft_parameter_span_t){file, file_offset, ref.buffer,
                                         ref.offset, ref.length};
    }
  }
  weft_parameter_stream_t* stream = NULL;
  if (ok) {
    weft_parameter_stream_options_t options;
    weft_parameter_stream_options_initialize(&options);
    options.max_reads_in_flight = max_reads;
    options.chunk_size = chunk_size;
    options.direct_io = direct_io != 0;
    // The stream retains its files and buffers.
    ok = weft_py_ok(weft_parameter_stream_start(device, spans,
                                                (uint32_t)count, &options,
                                                weft_py_allocator(), &stream));
  }
  PyMem_Free(spans);
  Py_DECREF(sequence);
  if (!ok) return NULL;
  weft_py_stream_t* object = PyObject_New(weft_py_stream_t,
                                          &weft_py_stream_type);
  if (!object) {
    weft_parameter_stream_release(stream);
    return NULL;
  }
  object->stream = stream;
  object->waiters = 0;
  return (PyObject*)object;
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
  if (PyType_Ready(&weft_py_file_type) < 0 ||
      PyType_Ready(&weft_py_stream_type) < 0 ||
      PyModule_AddObjectRef(module, "ParameterStream",
                            (PyObject*)&weft_py_stream_type) < 0) {
    return -1;
  }
  return PyModule_AddObjectRef(module, "File", (PyObject*)&weft_py_file_type);
}
