// weft._weft.Device: a device and its queue (weft_python.h).
#include <stddef.h>
#include <string.h>

#include "weft_python.h"

weft_device_t* weft_py_device_handle(PyObject* object, const char* what) {
  if (!PyObject_TypeCheck(object, &weft_py_device_type)) {
    PyErr_Format(PyExc_TypeError, "%s must be a weft.Device, got %.100s",
                 what, Py_TYPE(object)->tp_name);
    return NULL;
  }
  weft_device_t* device = ((weft_py_device_t*)object)->device;
  if (!device) PyErr_Format(PyExc_ValueError, "%s: the device is closed", what);
  return device;
}

static int weft_py_device_init(weft_py_device_t* self, PyObject* args,
                               PyObject* kwargs) {
  static char* keywords[] = {"device_string", NULL};
  const char* device_string = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s:Device", keywords,
                                   &device_string)) {
    return -1;
  }
  if (self->device) {
    PyErr_SetString(PyExc_RuntimeError, "Device.__init__ called twice");
    return -1;
  }
  weft_device_t* device = NULL;
  weft_status_t status =
      weft_device_create(device_string, weft_py_allocator(), &device);
  if (!weft_py_ok(status)) return -1;
  self->device = device;
  return 0;
}

static PyObject* weft_py_device_close(weft_py_device_t* self,
                                      PyObject* unused) {
  weft_device_t* device = self->device;
  self->device = NULL;
  if (device) {
    // Releasing may wait for the device's threads: without the GIL, so a
    // host call on another thread that needs it can finish.
    Py_BEGIN_ALLOW_THREADS
    weft_device_release(device);
    Py_END_ALLOW_THREADS
  }
  Py_RETURN_NONE;
}

static void weft_py_device_dealloc(weft_py_device_t* self) {
  if (self->weakrefs) PyObject_ClearWeakRefs((PyObject*)self);
  if (self->device) {
    weft_device_t* device = self->device;
    self->device = NULL;
    Py_BEGIN_ALLOW_THREADS
    weft_device_release(device);
    Py_END_ALLOW_THREADS
  }
  Py_TYPE(self)->tp_free((PyObject*)self);
}

static PyObject* weft_py_device_enter(weft_py_device_t* self,
                                      PyObject* unused) {
  if (!weft_py_device_handle((PyObject*)self, "Device")) return NULL;
  return Py_NewRef(self);
}

static PyObject* weft_py_device_exit(weft_py_device_t* self, PyObject* args) {
  return weft_py_device_close(self, NULL);
}

static PyObject* weft_py_device_query(weft_py_device_t* self, PyObject* key) {
  weft_device_t* device = weft_py_device_handle((PyObject*)self, "Device");
  if (!device) return NULL;
  const char* text = PyUnicode_AsUTF8(key);
  if (!text) return NULL;
  int64_t value = 0;
  if (!weft_py_ok(weft_device_query_i64(device, text, &value))) return NULL;
  return PyLong_FromLongLong(value);
}

static PyObject* weft_py_device_semaphore(weft_py_device_t* self,
                                          PyObject* args, PyObject* kwargs) {
  static char* keywords[] = {"initial_value", NULL};
  PyObject* initial_object = NULL;
  uint64_t initial_value = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:semaphore", keywords,
                                   &initial_object) ||
      (initial_object && !weft_py_u64(initial_object, "semaphore",
                                      "initial_value", &initial_value))) {
    return NULL;
  }
  weft_device_t* device = weft_py_device_handle((PyObject*)self, "Device");
  if (!device) return NULL;
  weft_semaphore_t* semaphore = NULL;
  if (!weft_py_ok(weft_device_create_semaphore(device, initial_value,
                                               &semaphore))) {
    return NULL;
  }
  return weft_py_semaphore_wrap(semaphore);
}

static PyObject* weft_py_device_allocate(weft_py_device_t* self,
                                         PyObject* args, PyObject* kwargs) {
  static char* keywords[] = {"nbytes", "host_visible", NULL};
  PyObject* nbytes_object = NULL;
  uint64_t nbytes = 0;
  int host_visible = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$p:allocate", keywords,
                                   &nbytes_object, &host_visible) ||
      !weft_py_u64(nbytes_object, "allocate", "nbytes", &nbytes)) {
    return NULL;
  }
  weft_device_t* device = weft_py_device_handle((PyObject*)self, "Device");
  if (!device) return NULL;
  // Type 0 is the default: device-local and host-visible where the device
  // has such memory (the CPU drivers, and GPUs' host memory otherwise).
  weft_buffer_params_t params = {0};
  if (!host_visible) params.type = WEFT_MEMORY_TYPE_DEVICE_LOCAL;
  weft_buffer_t* buffer = NULL;
  if (!weft_py_ok(
          weft_device_allocate_buffer(device, params, nbytes, &buffer))) {
    return NULL;
  }
  return weft_py_buffer_wrap(buffer, (PyObject*)self);
}

//===----------------------------------------------------------------------===//
// Queue operations: every one takes wait= and signal= lists of
// (Semaphore, value) pairs and returns None once submitted.
//===----------------------------------------------------------------------===//

// The parts every queue operation shares.
typedef struct weft_py_queue_args_t {
  weft_device_t* device;
  weft_py_queue_lists_t lists;
} weft_py_queue_args_t;

static bool weft_py_queue_args_parse(weft_py_device_t* self,
                                     const char* function, PyObject* wait,
                                     PyObject* signal,
                                     weft_py_queue_args_t* out) {
  out->device = weft_py_device_handle((PyObject*)self, "Device");
  return out->device &&
         weft_py_queue_lists_parse(function, wait, signal, &out->lists);
}

static PyObject* weft_py_device_fill(weft_py_device_t* self,
                                     PyObject* const* args, Py_ssize_t nargs,
                                     PyObject* kwnames) {
  static weft_py_parameters_t parameters = {
      .function = "fill", .positional = 4, .required = 2,
      .names = {"target", "pattern", "offset", "length", "wait", "signal"}};
  PyObject* a[6];
  Py_buffer pattern;
  uint64_t offset = 0;
  if (!weft_py_arguments_parse(&parameters, args, nargs, kwnames, a) ||
      !weft_py_argument_bytes(&parameters, 1, a[1], &pattern)) {
    return NULL;
  }
  weft_py_queue_args_t queue;
  weft_device_size_t length = 0;
  weft_buffer_t* buffer = NULL;
  PyObject* result = NULL;
  if (weft_py_argument_u64(&parameters, 2, a[2], &offset) &&
      (buffer = weft_py_buffer_handle(a[0], "target")) &&
      weft_py_length(a[3], "fill", "length", &length) &&
      weft_py_queue_args_parse(self, "fill", a[4], a[5], &queue)) {
    result = weft_py_queue_lists_finish(
        &queue.lists,
        weft_device_queue_fill(queue.device, WEFT_QUEUE_AFFINITY_ANY,
                               queue.lists.wait.list, queue.lists.signal.list,
                               buffer, offset, length, pattern.buf,
                               (uint32_t)pattern.len));
  }
  PyBuffer_Release(&pattern);
  return result;
}

static PyObject* weft_py_device_update(weft_py_device_t* self,
                                       PyObject* const* args, Py_ssize_t nargs,
                                       PyObject* kwnames) {
  static weft_py_parameters_t parameters = {
      .function = "update", .positional = 3, .required = 2,
      .names = {"source", "target", "offset", "wait", "signal"}};
  PyObject* a[5];
  Py_buffer source;
  uint64_t offset = 0;
  if (!weft_py_arguments_parse(&parameters, args, nargs, kwnames, a) ||
      !weft_py_argument_bytes(&parameters, 0, a[0], &source)) {
    return NULL;
  }
  weft_py_queue_args_t queue;
  weft_buffer_t* buffer = NULL;
  PyObject* result = NULL;
  if (weft_py_argument_u64(&parameters, 2, a[2], &offset) &&
      (buffer = weft_py_buffer_handle(a[1], "target")) &&
      weft_py_queue_args_parse(self, "update", a[3], a[4], &queue)) {
    // The bytes are copied during the call.
    result = weft_py_queue_lists_finish(
        &queue.lists,
        weft_device_queue_update(
            queue.device, WEFT_QUEUE_AFFINITY_ANY, queue.lists.wait.list,
            queue.lists.signal.list, source.buf, buffer, offset,
            (weft_device_size_t)source.len));
  }
  PyBuffer_Release(&source);
  return result;
}

static PyObject* weft_py_device_copy(weft_py_device_t* self,
                                     PyObject* const* args, Py_ssize_t nargs,
                                     PyObject* kwnames) {
  static weft_py_parameters_t parameters = {
      .function = "copy", .positional = 5, .required = 2,
      .names = {"source", "target", "source_offset", "target_offset", "length",
                "wait", "signal"}};
  PyObject* a[7];
  uint64_t source_offset = 0;
  uint64_t target_offset = 0;
  if (!weft_py_arguments_parse(&parameters, args, nargs, kwnames, a) ||
      !weft_py_argument_u64(&parameters, 2, a[2], &source_offset) ||
      !weft_py_argument_u64(&parameters, 3, a[3], &target_offset)) {
    return NULL;
  }
  weft_py_queue_args_t queue;
  weft_device_size_t length = 0;
  weft_buffer_t* source_buffer = weft_py_buffer_handle(a[0], "source");
  weft_buffer_t* target_buffer =
      source_buffer ? weft_py_buffer_handle(a[1], "target") : NULL;
  if (!target_buffer || !weft_py_length(a[4], "copy", "length", &length) ||
      !weft_py_queue_args_parse(self, "copy", a[5], a[6], &queue)) {
    return NULL;
  }
  // None: to the end of the source.
  weft_buffer_ref_t source_ref =
      weft_make_buffer_ref(source_buffer, source_offset, length);
  weft_py_buffer_ref_to_end(&source_ref);
  return weft_py_queue_lists_finish(
      &queue.lists,
      weft_device_queue_copy(queue.device, WEFT_QUEUE_AFFINITY_ANY,
                             queue.lists.wait.list, queue.lists.signal.list,
                             source_buffer, source_offset, target_buffer,
                             target_offset, source_ref.length));
}

static PyObject* weft_py_device_barrier(weft_py_device_t* self,
                                        PyObject* const* args,
                                        Py_ssize_t nargs, PyObject* kwnames) {
  static weft_py_parameters_t parameters = {
      .function = "barrier", .positional = 0, .required = 0,
      .names = {"wait", "signal"}};
  PyObject* a[2];
  weft_py_queue_args_t queue;
  if (!weft_py_arguments_parse(&parameters, args, nargs, kwnames, a) ||
      !weft_py_queue_args_parse(self, "barrier", a[0], a[1], &queue)) {
    return NULL;
  }
  return weft_py_queue_lists_finish(
      &queue.lists,
      weft_device_queue_barrier(queue.device, WEFT_QUEUE_AFFINITY_ANY,
                                queue.lists.wait.list,
                                queue.lists.signal.list));
}

//===----------------------------------------------------------------------===//
// The type
//===----------------------------------------------------------------------===//

static PyObject* weft_py_device_get_driver(weft_py_device_t* self,
                                           void* unused) {
  weft_device_t* device = weft_py_device_handle((PyObject*)self, "Device");
  if (!device) return NULL;
  return PyUnicode_FromString(weft_device_driver_name(device));
}

static PyObject* weft_py_device_get_id(weft_py_device_t* self, void* unused) {
  weft_device_t* device = weft_py_device_handle((PyObject*)self, "Device");
  if (!device) return NULL;
  return PyUnicode_FromString(weft_device_id(device));
}

static PyObject* weft_py_device_get_closed(weft_py_device_t* self,
                                           void* unused) {
  return PyBool_FromLong(self->device == NULL);
}

static PyObject* weft_py_device_repr(weft_py_device_t* self) {
  if (!self->device) return PyUnicode_FromString("<weft.Device (closed)>");
  return PyUnicode_FromFormat("<weft.Device '%s'>",
                              weft_device_id(self->device));
}

// load_parameters' signature below gives the defaults as numbers.
_Static_assert(WEFT_PARAMETER_STREAM_DEFAULT_READS_IN_FLIGHT == 16,
               "load_parameters' signature says max_reads_in_flight=16");
_Static_assert(WEFT_PARAMETER_STREAM_DEFAULT_CHUNK_SIZE == 4194304,
               "load_parameters' signature says chunk_size=4194304");

static PyMethodDef weft_py_device_methods[] = {
    {"close", (PyCFunction)weft_py_device_close, METH_NOARGS,
     "close($self, /)\n--\n\nDrops the device (operations already queued "
     "still run to their end; the device goes when they and every object "
     "made from it are gone). Idempotent."},
    {"__enter__", (PyCFunction)weft_py_device_enter, METH_NOARGS,
     "__enter__($self, /)\n--\n\nThe device; __exit__ closes it."},
    {"__exit__", (PyCFunction)weft_py_device_exit, METH_VARARGS,
     "__exit__($self, /, *exc_info)\n--\n\nCloses the device."},
    {"query", (PyCFunction)weft_py_device_query, METH_O,
     "query($self, key, /)\n--\n\nA device property, an int "
     "(\"queue.count\", \"worker.count\", ...); NotFoundError lists the "
     "known keys."},
    {"semaphore", (PyCFunction)(void (*)(void))weft_py_device_semaphore,
     METH_VARARGS | METH_KEYWORDS,
     "semaphore($self, /, initial_value=0)\n--\n\nA new Semaphore made by "
     "the device (the GPU drivers' live on the device)."},
    {"allocate", (PyCFunction)(void (*)(void))weft_py_device_allocate,
     METH_VARARGS | METH_KEYWORDS,
     "allocate($self, /, nbytes, *, host_visible=True)\n--\n\nA new Buffer "
     "of |nbytes| bytes (a u64), host-visible where the device allows "
     "(then it shares memory with NumPy); host_visible=False asks for "
     "device-local memory the host cannot map (a GPU's own; on the CPU "
     "drivers, memory the host is refused a mapping of)."},
    {"fill", (PyCFunction)(void (*)(void))weft_py_device_fill,
     METH_FASTCALL | METH_KEYWORDS,
     "fill($self, /, target, pattern, offset=0, length=None, *, wait=None, "
     "signal=None)\n--\n\nQueues a fill of [offset, offset + length) of "
     "|target| (None: to its end) with |pattern|, 1, 2 or 4 bytes (bytes, "
     "or a NumPy scalar). Runs once every (semaphore, value) of |wait| is "
     "reached, then signals |signal|."},
    {"update", (PyCFunction)(void (*)(void))weft_py_device_update,
     METH_FASTCALL | METH_KEYWORDS,
     "update($self, /, source, target, offset=0, *, wait=None, "
     "signal=None)\n--\n\nQueues a write of |source|'s bytes (anything "
     "with the buffer protocol: bytes, a NumPy array; copied now) into "
     "|target| at |offset|."},
    {"copy", (PyCFunction)(void (*)(void))weft_py_device_copy,
     METH_FASTCALL | METH_KEYWORDS,
     "copy($self, /, source, target, source_offset=0, target_offset=0, "
     "length=None, *, wait=None, signal=None)\n--\n\nQueues a copy "
     "between two buffers (length None: to the end of |source|)."},
    {"executable", (PyCFunction)weft_py_device_executable, METH_O,
     "executable($self, path, /)\n--\n\nA new Executable: a CPU kernel "
     "library from a shared object (what the CPU drivers run)."},
    {"executable_gpu",
     (PyCFunction)(void (*)(void))weft_py_device_executable_gpu,
     METH_VARARGS | METH_KEYWORDS,
     "executable_gpu($self, /, format, data, kernels, name=None)\n--\n\n"
     "A new Executable: a GPU driver's kernel library from bytes, format "
     "'spirv' (vulkan), 'cuda-ptx' or 'cuda-image' (cuda); |kernels| its "
     "table, [(name, binding_count, constant_count, (x, y, z) workgroup "
     "size), ...] (weft/executable.h says what each format expects)."},
    {"command_buffer",
     (PyCFunction)(void (*)(void))weft_py_device_command_buffer,
     METH_VARARGS | METH_KEYWORDS,
     "command_buffer($self, /, *, reusable=False, binding_capacity=0)\n--"
     "\n\nA new CommandBuffer, recording (end() it, then execute)."},
    {"dispatch", (PyCFunction)(void (*)(void))weft_py_device_dispatch,
     METH_FASTCALL | METH_KEYWORDS,
     "dispatch($self, /, executable, kernel, workgroups, constants=None, "
     "bindings=None, *, wait=None, signal=None)\n--\n\nQueues one kernel "
     "(a name or an ordinal) over |workgroups| (an int or (x, y, z)) with "
     "32-bit |constants| (ints, or an array such as numpy.float32 values) "
     "and |bindings| (Buffers, Tensors or (buffer, offset, length))."},
    {"execute", (PyCFunction)(void (*)(void))weft_py_device_execute,
     METH_FASTCALL | METH_KEYWORDS,
     "execute($self, /, command_buffer, bindings=None, *, wait=None, "
     "signal=None)\n--\n\nQueues a recorded command buffer; |bindings| "
     "fill its slots (its (slot, offset, length) references)."},
    {"read", (PyCFunction)(void (*)(void))weft_py_device_read,
     METH_FASTCALL | METH_KEYWORDS,
     "read($self, /, file, target, file_offset=0, *, wait=None, "
     "signal=None)\n--\n\nQueues a read of a weft.File into |target| (a "
     "Buffer, Tensor or (buffer, offset, length)), asynchronously where "
     "the system allows."},
    {"write", (PyCFunction)(void (*)(void))weft_py_device_write,
     METH_FASTCALL | METH_KEYWORDS,
     "write($self, /, source, file, file_offset=0, *, wait=None, "
     "signal=None)\n--\n\nQueues a write of |source| into a weft.File."},
    {"load_parameters",
     (PyCFunction)(void (*)(void))weft_py_device_load_parameters,
     METH_VARARGS | METH_KEYWORDS,
     "load_parameters($self, /, spans, *, max_reads_in_flight=16, "
     "chunk_size=4194304, direct_io=False)\n--\n\nA new ParameterStream "
     "loading file ranges into buffers, many reads in flight: |spans| "
     "[(file, file_offset, target), ...], each target a Buffer, Tensor or "
     "(buffer, offset, length); chunks of |chunk_size| bytes (4 MiB)."},
    {"host_call", (PyCFunction)(void (*)(void))weft_py_device_host_call,
     METH_FASTCALL | METH_KEYWORDS,
     "host_call($self, /, fn, *, wait=None, signal=None)\n--\n\nQueues "
     "fn() (with the GIL, on a queue's thread) once |wait| is reached; "
     "|signal| moves when it returns, or fails with its exception (a "
     "weft.Error keeps its code)."},
    {"barrier", (PyCFunction)(void (*)(void))weft_py_device_barrier,
     METH_FASTCALL | METH_KEYWORDS,
     "barrier($self, /, *, wait=None, signal=None)\n--\n\nSignals "
     "|signal| once |wait| is reached; orders nothing else."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef weft_py_device_getset[] = {
    {"driver", (getter)weft_py_device_get_driver, NULL,
     "The driver's name (\"local-task\").", NULL},
    {"id", (getter)weft_py_device_get_id, NULL,
     "The device's id, as messages name it.", NULL},
    {"closed", (getter)weft_py_device_get_closed, NULL,
     "True once close() was called.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject weft_py_device_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "weft.Device",
    .tp_doc = "Device(device_string)\n--\n\nA weft device from the same "
              "strings as C (\"local-task?workers=2\", \"local-sync\", "
              "\"vulkan\"). "
              "NotFoundError for an unknown driver and InvalidArgumentError "
              "for an unknown option, both listing the known names.",
    .tp_basicsize = sizeof(weft_py_device_t),
    .tp_weaklistoffset = offsetof(weft_py_device_t, weakrefs),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)weft_py_device_init,
    .tp_dealloc = (destructor)weft_py_device_dealloc,
    .tp_repr = (reprfunc)weft_py_device_repr,
    .tp_methods = weft_py_device_methods,
    .tp_getset = weft_py_device_getset,
};

int weft_py_device_setup(PyObject* module) {
  if (PyType_Ready(&weft_py_device_type) < 0) return -1;
  return PyModule_AddObjectRef(module, "Device",
                               (PyObject*)&weft_py_device_type);
}
