// weft._weft.Buffer: a device buffer, shared with NumPy through the buffer
// protocol where the host can map it (weft_python.h).
#include <string.h>

#include "weft_python.h"

weft_buffer_t* weft_py_buffer_handle(PyObject* object, const char* what) {
  if (!PyObject_TypeCheck(object, &weft_py_buffer_type)) {
    PyErr_Format(PyExc_TypeError, "%s must be a weft.Buffer, got %.100s",
                 what, Py_TYPE(object)->tp_name);
    return NULL;
  }
  weft_buffer_t* buffer = ((weft_py_buffer_t*)object)->buffer;
  if (!buffer) PyErr_Format(PyExc_ValueError, "%s: the buffer is closed", what);
  return buffer;
}

PyObject* weft_py_buffer_wrap(weft_buffer_t* buffer, PyObject* device) {
  PyObject* device_reference = device ? PyWeakref_NewRef(device, NULL) : NULL;
  weft_py_buffer_t* self =
      (device_reference || !device)
          ? PyObject_New(weft_py_buffer_t, &weft_py_buffer_type)
          : NULL;
  if (!self) {
    Py_XDECREF(device_reference);
    weft_buffer_release(buffer);
    return NULL;
  }
  self->buffer = buffer;
  memset(&self->mapping, 0, sizeof(self->mapping));
  self->exports = 0;
  self->device = device_reference;
  return (PyObject*)self;
}

static void weft_py_buffer_dealloc(weft_py_buffer_t* self) {
  // No export can outlive the object (each holds a reference to it).
  weft_buffer_t* buffer = self->buffer;
  self->buffer = NULL;
  Py_CLEAR(self->device);
  WEFT_PY_RELEASE_WITHOUT_GIL(weft_buffer_unmap_range(&self->mapping);
                              weft_buffer_release(buffer));
  Py_TYPE(self)->tp_free((PyObject*)self);
}

static PyObject* weft_py_buffer_close(weft_py_buffer_t* self,
                                      PyObject* unused) {
  if (self->exports) {
    PyErr_Format(PyExc_BufferError,
                 "Buffer.close: %zd view(s) of its memory (NumPy arrays, "
                 "memoryviews) are still alive",
                 self->exports);
    return NULL;
  }
  weft_buffer_t* buffer = self->buffer;
  self->buffer = NULL;
  WEFT_PY_RELEASE_WITHOUT_GIL(weft_buffer_release(buffer));
  Py_RETURN_NONE;
}

static PyObject* weft_py_buffer_enter(weft_py_buffer_t* self,
                                      PyObject* unused) {
  if (!weft_py_buffer_handle((PyObject*)self, "Buffer")) return NULL;
  return Py_NewRef(self);
}

static PyObject* weft_py_buffer_exit(weft_py_buffer_t* self, PyObject* args) {
  return weft_py_buffer_close(self, NULL);
}

// The buffer protocol: the whole buffer as unsigned bytes, mapped
// persistently while any view is alive. BufferError (with weft's reason)
// where the host cannot map it.
static int weft_py_buffer_getbuffer(weft_py_buffer_t* self, Py_buffer* view,
                                    int flags) {
  weft_buffer_t* buffer = weft_py_buffer_handle((PyObject*)self, "Buffer");
  if (!buffer) {
    view->obj = NULL;
    return -1;
  }
  if (self->exports == 0) {
    weft_status_t status = weft_buffer_map_range(
        buffer, WEFT_MAPPING_MODE_PERSISTENT,
        WEFT_MEMORY_ACCESS_READ | WEFT_MEMORY_ACCESS_WRITE, 0,
        WEFT_WHOLE_BUFFER, &self->mapping);
    if (!weft_status_is_ok(status)) {
      char text[512];
      weft_status_format(status, text, sizeof(text));
      weft_status_free(status);
      PyErr_Format(PyExc_BufferError,
                   "the buffer's memory cannot be mapped by the host (copy "
                   "it to a host-visible buffer with Device.copy, or read "
                   "it as a weft.Tensor, whose numpy() copies): %s",
                   text);
      view->obj = NULL;
      return -1;
    }
  }
  if (PyBuffer_FillInfo(view, (PyObject*)self, self->mapping.contents,
                        (Py_ssize_t)self->mapping.byte_length,
                        /*readonly=*/0, flags) < 0) {
    if (self->exports == 0) weft_buffer_unmap_range(&self->mapping);
    return -1;
  }
  ++self->exports;
  return 0;
}

static void weft_py_buffer_releasebuffer(weft_py_buffer_t* self,
                                         Py_buffer* view) {
  if (--self->exports == 0) weft_buffer_unmap_range(&self->mapping);
}

static PyBufferProcs weft_py_buffer_procs = {
    .bf_getbuffer = (getbufferproc)weft_py_buffer_getbuffer,
    .bf_releasebuffer = (releasebufferproc)weft_py_buffer_releasebuffer,
};

static Py_ssize_t weft_py_buffer_length(weft_py_buffer_t* self) {
  weft_buffer_t* buffer = weft_py_buffer_handle((PyObject*)self, "Buffer");
  if (!buffer) return -1;
  return (Py_ssize_t)weft_buffer_byte_length(buffer);
}

static PySequenceMethods weft_py_buffer_sequence = {
    .sq_length = (lenfunc)weft_py_buffer_length,
};

static PyObject* weft_py_buffer_get_nbytes(weft_py_buffer_t* self,
                                           void* unused) {
  weft_buffer_t* buffer = weft_py_buffer_handle((PyObject*)self, "Buffer");
  if (!buffer) return NULL;
  return PyLong_FromUnsignedLongLong(weft_buffer_byte_length(buffer));
}

static PyObject* weft_py_buffer_get_host_visible(weft_py_buffer_t* self,
                                                 void* unused) {
  weft_buffer_t* buffer = weft_py_buffer_handle((PyObject*)self, "Buffer");
  if (!buffer) return NULL;
  return PyBool_FromLong((weft_buffer_memory_type(buffer) &
                          WEFT_MEMORY_TYPE_HOST_VISIBLE) != 0);
}

static PyObject* weft_py_buffer_get_device(weft_py_buffer_t* self,
                                           void* unused) {
  // Borrowed from the weak reference (Py_None once the device is gone).
  PyObject* device = self->device ? PyWeakref_GetObject(self->device) : Py_None;
  return device ? Py_NewRef(device) : NULL;
}

static PyObject* weft_py_buffer_get_closed(weft_py_buffer_t* self,
                                           void* unused) {
  return PyBool_FromLong(self->buffer == NULL);
}

static PyObject* weft_py_buffer_repr(weft_py_buffer_t* self) {
  if (!self->buffer) return PyUnicode_FromString("<weft.Buffer (closed)>");
  return PyUnicode_FromFormat(
      "<weft.Buffer of %llu bytes>",
      (unsigned long long)weft_buffer_byte_length(self->buffer));
}

static PyMethodDef weft_py_buffer_methods[] = {
    {"close", (PyCFunction)weft_py_buffer_close, METH_NOARGS,
     "close($self, /)\n--\n\nDrops this object's reference (queued "
     "operations keep theirs). BufferError while NumPy arrays or "
     "memoryviews of it are alive. Idempotent."},
    {"__enter__", (PyCFunction)weft_py_buffer_enter, METH_NOARGS,
     "__enter__($self, /)\n--\n\nThe buffer; __exit__ closes it."},
    {"__exit__", (PyCFunction)weft_py_buffer_exit, METH_VARARGS,
     "__exit__($self, /, *exc_info)\n--\n\nCloses the buffer."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef weft_py_buffer_getset[] = {
    {"nbytes", (getter)weft_py_buffer_get_nbytes, NULL,
     "Its length in bytes.", NULL},
    {"host_visible", (getter)weft_py_buffer_get_host_visible, NULL,
     "Whether the host can map it (then memoryview(buffer) and "
     "numpy.asarray(buffer) share its memory).",
     NULL},
    {"device", (getter)weft_py_buffer_get_device, NULL,
     "The weft.Device that allocated it, or None once that object is gone "
     "(the buffer does not keep it alive).",
     NULL},
    {"closed", (getter)weft_py_buffer_get_closed, NULL,
     "True once close() was called.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject weft_py_buffer_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "weft.Buffer",
    .tp_doc = "A device buffer (Device.allocate). Where the host can map "
              "it, the buffer protocol exposes its bytes without a copy: "
              "numpy.asarray(buffer) is a uint8 array over its memory.",
    .tp_basicsize = sizeof(weft_py_buffer_t),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)weft_py_buffer_dealloc,
    .tp_repr = (reprfunc)weft_py_buffer_repr,
    .tp_as_buffer = &weft_py_buffer_procs,
    .tp_as_sequence = &weft_py_buffer_sequence,
    .tp_methods = weft_py_buffer_methods,
    .tp_getset = weft_py_buffer_getset,
};

int weft_py_buffer_setup(PyObject* module) {
  if (PyType_Ready(&weft_py_buffer_type) < 0) return -1;
  return PyModule_AddObjectRef(module, "Buffer",
                               (PyObject*)&weft_py_buffer_type);
}
