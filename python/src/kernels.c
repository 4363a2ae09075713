// weft._weft.Executable and CommandBuffer, and the queue's dispatch and
// execute (weft_python.h): kernel libraries, dispatches of their kernels,
// and recorded command buffers.
#include <string.h>

#include "weft_python.h"

#define WEFT_PY_MAX_BINDINGS 64
#define WEFT_PY_MAX_CONSTANTS 256

//===----------------------------------------------------------------------===//
// Executable
//===----------------------------------------------------------------------===//

typedef struct weft_py_executable_t {
  PyObject_HEAD
  weft_executable_t* executable;  // NULL once closed
} weft_py_executable_t;

PyTypeObject weft_py_executable_type;

static weft_executable_t* weft_py_executable_handle(PyObject* object,
                                                    const char* what) {
  if (!PyObject_TypeCheck(object, &weft_py_executable_type)) {
    PyErr_Format(PyExc_TypeError, "%s must be a weft.Executable, got %.100s",
                 what, Py_TYPE(object)->tp_name);
    return NULL;
  }
  weft_executable_t* executable = ((weft_py_executable_t*)object)->executable;
  if (!executable) {
    PyErr_Format(PyExc_ValueError, "%s: the executable is closed", what);
  }
  return executable;
}

static PyObject* weft_py_executable_wrap(weft_executable_t* executable) {
  weft_py_executable_t* self =
      PyObject_New(weft_py_executable_t, &weft_py_executable_type);
  if (!self) {
    weft_executable_release(executable);
    return NULL;
  }
  self->executable = executable;
  return (PyObject*)self;
}

static void weft_py_executable_dealloc(weft_py_executable_t* self) {
  weft_executable_t* executable = self->executable;
  self->executable = NULL;
  WEFT_PY_RELEASE_WITHOUT_GIL(weft_executable_release(executable));
  Py_TYPE(self)->tp_free((PyObject*)self);
}

static PyObject* weft_py_executable_close(weft_py_executable_t* self,
                                          PyObject* unused) {
  weft_executable_t* executable = self->executable;
  self->executable = NULL;
  WEFT_PY_RELEASE_WITHOUT_GIL(weft_executable_release(executable));
  Py_RETURN_NONE;
}

// The ordinal of |kernel| (a name or an int), argument |argument| of
// |function|, in |executable|.
static bool weft_py_kernel_ordinal(weft_executable_t* executable,
                                   PyObject* kernel, const char* function,
                                   const char* argument, uint32_t* out) {
  if (PyUnicode_Check(kernel)) {
    const char* name = PyUnicode_AsUTF8(kernel);
    return name &&
           weft_py_ok(weft_executable_lookup_kernel(executable, name, out));
  }
  if (!PyLong_Check(kernel) && !PyIndex_Check(kernel)) {
    PyErr_Format(PyExc_TypeError,
                 "%s() argument '%s' must be a kernel's name (str) or its "
                 "ordinal (int), not %.100s",
                 function, argument, Py_TYPE(kernel)->tp_name);
    return false;
  }
  uint32_t ordinal = 0;
  if (!weft_py_u32(kernel, function, argument, &ordinal)) return false;
  if (ordinal >= weft_executable_kernel_count(executable)) {
    weft_py_raise(WEFT_STATUS(OUT_OF_RANGE,
                              "%s: kernel %u of '%s', which has %u", function,
                              ordinal, weft_executable_name(executable),
                              weft_executable_kernel_count(executable)));
    return false;
  }
  *out = ordinal;
  return true;
}

static PyObject* weft_py_executable_lookup(weft_py_executable_t* self,
                                           PyObject* name) {
  weft_executable_t* executable =
      weft_py_executable_handle((PyObject*)self, "Executable");
  uint32_t ordinal = 0;
  if (!executable ||
      !weft_py_kernel_ordinal(executable, name, "lookup", "name", &ordinal)) {
    return NULL;
  }
  return PyLong_FromUnsignedLong(ordinal);
}

static PyObject* weft_py_executable_get_kernels(weft_py_executable_t* self,
                                                void* unused) {
  weft_executable_t* executable =
      weft_py_executable_handle((PyObject*)self, "Executable");
  if (!executable) return NULL;
  const uint32_t count = weft_executable_kernel_count(executable);
  PyObject* list = PyList_New(count);
  for (uint32_t i = 0; list && i < count; ++i) {
    const weft_kernel_info_t* info = weft_executable_kernel_info(executable, i);
    PyObject* item = Py_BuildValue("(sII)", info->name, info->binding_count,
                                   info->constant_count);
    if (!item) {
      Py_CLEAR(list);
      break;
    }
    PyList_SET_ITEM(list, i, item);
  }
  return list;
}

static PyObject* weft_py_executable_get_name(weft_py_executable_t* self,
                                             void* unused) {
  weft_executable_t* executable =
      weft_py_executable_handle((PyObject*)self, "Executable");
  if (!executable) return NULL;
  return PyUnicode_FromString(weft_executable_name(executable));
}

static PyObject* weft_py_executable_repr(weft_py_executable_t* self) {
  if (!self->executable) {
    return PyUnicode_FromString("<weft.Executable (closed)>");
  }
  const uint32_t count = weft_executable_kernel_count(self->executable);
  return PyUnicode_FromFormat("<weft.Executable '%s', %u kernel%s>",
                              weft_executable_name(self->executable),
                              (unsigned)count, count == 1 ? "" : "s");
}

static PyMethodDef weft_py_executable_methods[] = {
    {"lookup", (PyCFunction)weft_py_executable_lookup, METH_O,
     "lookup($self, name, /)\n--\n\nThe ordinal (an int) of kernel |name| "
     "(NotFoundError listing the library's kernels); an ordinal is checked "
     "and returned as itself."},
    {"close", (PyCFunction)weft_py_executable_close, METH_NOARGS,
     "close($self, /)\n--\n\nDrops this object's reference. Idempotent."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef weft_py_executable_getset[] = {
    {"name", (getter)weft_py_executable_get_name, NULL, "The library's name.",
     NULL},
    {"kernels", (getter)weft_py_executable_get_kernels, NULL,
     "[(name, binding_count, constant_count), ...], by ordinal.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject weft_py_executable_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "weft.Executable",
    .tp_doc = "A kernel library on a device (Device.executable).",
    .tp_basicsize = sizeof(weft_py_executable_t),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)weft_py_executable_dealloc,
    .tp_repr = (reprfunc)weft_py_executable_repr,
    .tp_methods = weft_py_executable_methods,
    .tp_getset = weft_py_executable_getset,
};

//===----------------------------------------------------------------------===//
// References, constants and dispatch arguments
//===----------------------------------------------------------------------===//

// Names field |field| of reference |what|[|index|] (|index| < 0: |what|
// itself) into |name| for a message.
static const char* weft_py_buffer_ref_field(const char* what, Py_ssize_t index,
                                            int field, char* name,
                                            size_t capacity) {
  if (index < 0) {
    snprintf(name, capacity, "%s[%d]", what, field);
  } else {
    snprintf(name, capacity, "%s[%zd][%d]", what, index, field);
  }
  return name;
}

// Converts field |field| of a (buffer or slot, offset, length) reference
// with the one integer conversion, naming the field when refused.
static bool weft_py_buffer_ref_integer(PyObject* object,
                                       weft_py_integer_type_t type,
                                       const char* function, const char* what,
                                       Py_ssize_t index, int field,
                                       uint64_t* out) {
  if (weft_py_integer_try(object, type, out)) return true;
  char name[80];
  return weft_py_integer_refuse(
      object, type, function,
      weft_py_buffer_ref_field(what, index, field, name, sizeof(name)));
}

bool weft_py_buffer_ref_parse(PyObject* object, const char* function,
                              const char* what, Py_ssize_t index,
                              weft_buffer_ref_t* out) {
  PyObject* converted = NULL;
  if (PyObject_HasAttrString(object, "__weft_ref__")) {
    // A weft.Tensor: its (buffer, offset, length).
    converted = PyObject_GetAttrString(object, "__weft_ref__");
    if (!converted) return false;
    object = converted;
  }
  bool ok = false;
  if (PyObject_TypeCheck(object, &weft_py_buffer_type)) {
    weft_buffer_t* buffer = weft_py_buffer_handle(object, what);
    if (buffer) {
      *out = weft_make_buffer_ref(buffer, 0, WEFT_WHOLE_BUFFER);
      ok = true;
    }
  } else if (PyTuple_Check(object) && PyTuple_GET_SIZE(object) == 3) {
    PyObject* first = PyTuple_GET_ITEM(object, 0);
    PyObject* length_object = PyTuple_GET_ITEM(object, 2);
    uint64_t offset = 0;
    uint64_t length = WEFT_WHOLE_BUFFER;
    uint64_t slot = 0;
    const bool is_buffer = PyObject_TypeCheck(first, &weft_py_buffer_type);
    const bool is_slot =
        !is_buffer && (PyLong_Check(first) || PyIndex_Check(first));
    if (!is_buffer && !is_slot) {
      char name[80];
      PyErr_Format(PyExc_TypeError,
                   "%s() argument '%s' must be a weft.Buffer or a slot (an "
                   "int), not %.100s",
                   function,
                   weft_py_buffer_ref_field(what, index, 0, name,
                                            sizeof(name)),
                   Py_TYPE(first)->tp_name);
    } else {
      char name[80];
      ok = weft_py_buffer_ref_integer(PyTuple_GET_ITEM(object, 1),
                                      WEFT_PY_INTEGER_U64, function, what,
                                      index, 1, &offset) &&
           (length_object == Py_None ||
            weft_py_length(length_object, function,
                           weft_py_buffer_ref_field(what, index, 2, name,
                                                    sizeof(name)),
                           &length)) &&
           (is_buffer ||
            weft_py_buffer_ref_integer(first, WEFT_PY_INTEGER_U32, function,
                                       what, index, 0, &slot));
    }
    if (ok && is_buffer) {
      weft_buffer_t* buffer = weft_py_buffer_handle(first, what);
      ok = buffer != NULL;
      if (ok) *out = weft_make_buffer_ref(buffer, offset, length);
    } else if (ok) {
      *out = weft_make_indirect_buffer_ref((uint32_t)slot, offset, length);
    }
  }
  if (!ok && !PyErr_Occurred()) {
    char name[80];
    if (index < 0) {
      snprintf(name, sizeof(name), "%s", what);
    } else {
      snprintf(name, sizeof(name), "%s[%zd]", what, index);
    }
    PyErr_Format(PyExc_TypeError,
                 "%s() argument '%s' must be a weft.Buffer, a weft.Tensor, "
                 "(buffer, offset, length) or (slot, offset, length), got "
                 "%.100s",
                 function, name, Py_TYPE(object)->tp_name);
  }
  Py_XDECREF(converted);
  return ok;
}

// Reads |object| (a sequence) into at most |capacity| refs.
static bool weft_py_buffer_refs_parse(PyObject* object, const char* function,
                                      const char* what,
                                      weft_buffer_ref_t* refs,
                                      uint32_t capacity, uint32_t* out_count) {
  *out_count = 0;
  if (!object || object == Py_None) return true;
  PyObject* sequence = PySequence_Fast(object, "");
  if (!sequence) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "%s must be a sequence, got %.100s", what,
                 Py_TYPE(object)->tp_name);
    return false;
  }
  const Py_ssize_t count = PySequence_Fast_GET_SIZE(sequence);
  bool ok = count <= capacity;
  if (!ok) {
    PyErr_Format(PyExc_ValueError, "at most %u %s", capacity, what);
  }
  for (Py_ssize_t i = 0; ok && i < count; ++i) {
    ok = weft_py_buffer_ref_parse(PySequence_Fast_GET_ITEM(sequence, i),
                                  function, what, i, &refs[i]);
  }
  Py_DECREF(sequence);
  if (ok) *out_count = (uint32_t)count;
  return ok;
}

// Constants: a sequence of ints (each a 32-bit word, signed or not) or
// anything with the buffer protocol of 4-byte elements (a NumPy array of
// float32, uint32...).
static bool weft_py_constants_parse(PyObject* object, const char* function,
                                    uint32_t* constants,
                                    uint32_t* out_count) {
  *out_count = 0;
  if (!object || object == Py_None) return true;
  if (PyObject_CheckBuffer(object) && !PyUnicode_Check(object)) {
    Py_buffer view;
    if (PyObject_GetBuffer(object, &view, PyBUF_C_CONTIGUOUS) < 0) return false;
    const bool ok = view.len % 4 == 0 && view.len / 4 <= WEFT_PY_MAX_CONSTANTS;
    if (ok) {
      memcpy(constants, view.buf, (size_t)view.len);
      *out_count = (uint32_t)(view.len / 4);
    } else {
      PyErr_Format(PyExc_ValueError,
                   "constants must be whole 32-bit words, at most %d, got "
                   "%zd bytes",
                   WEFT_PY_MAX_CONSTANTS, view.len);
    }
    PyBuffer_Release(&view);
    return ok;
  }
  PyObject* sequence = PySequence_Fast(object, "");
  if (!sequence) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError,
                 "constants must be ints or an array of 32-bit values, got "
                 "%.100s",
                 Py_TYPE(object)->tp_name);
    return false;
  }
  const Py_ssize_t count = PySequence_Fast_GET_SIZE(sequence);
  bool ok = count <= WEFT_PY_MAX_CONSTANTS;
  if (!ok) PyErr_Format(PyExc_ValueError, "at most %d constants",
                        WEFT_PY_MAX_CONSTANTS);
  for (Py_ssize_t i = 0; ok && i < count; ++i) {
    PyObject* item = PySequence_Fast_GET_ITEM(sequence, i);
    uint64_t bits = 0;
    ok = weft_py_integer_try(item, WEFT_PY_INTEGER_WORD32, &bits);
    if (ok) {
      constants[i] = (uint32_t)bits;
    } else {
      // For a float the word's bits are ambiguous: numpy.float32 says.
      char name[32];
      snprintf(name, sizeof(name), "constants[%zd]", i);
      weft_py_integer_refuse(item, WEFT_PY_INTEGER_WORD32, function, name);
      if (PyErr_ExceptionMatches(PyExc_TypeError) && PyFloat_Check(item)) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError,
                     "%s() argument 'constants[%zd]' must be int (a 32-bit "
                     "word), not float: for a float, pass numpy.float32 "
                     "values",
                     function, i);
      }
    }
  }
  Py_DECREF(sequence);
  if (ok) *out_count = (uint32_t)count;
  return ok;
}

// Workgroups: an int (x) or (x[, y[, z]]), each a u32.
static bool weft_py_workgroups_parse(PyObject* object, const char* function,
                                     uint32_t out[3]) {
  out[0] = out[1] = out[2] = 1;
  if (!PyTuple_Check(object)) {
    if (!PyLong_Check(object) && !PyIndex_Check(object)) {
      PyErr_Format(PyExc_TypeError,
                   "%s() argument 'workgroups' must be an int or (x[, y[, "
                   "z]]), not %.100s",
                   function, Py_TYPE(object)->tp_name);
      return false;
    }
    return weft_py_u32(object, function, "workgroups", &out[0]);
  }
  const Py_ssize_t count = PyTuple_GET_SIZE(object);
  if (count < 1 || count > 3) {
    PyErr_Format(PyExc_TypeError,
                 "%s() argument 'workgroups' must be an int or (x[, y[, z]]), "
                 "got a tuple of %zd",
                 function, count);
    return false;
  }
  for (Py_ssize_t i = 0; i < count; ++i) {
    char name[32];
    snprintf(name, sizeof(name), "workgroups[%zd]", i);
    if (!weft_py_u32(PyTuple_GET_ITEM(object, i), function, name, &out[i])) {
      return false;
    }
  }
  return true;
}

// What a dispatch takes after (device or command buffer): executable,
// kernel, workgroups, constants, bindings.
typedef struct weft_py_dispatch_t {
  weft_executable_t* executable;
  uint32_t ordinal;
  uint32_t workgroups[3];
  uint32_t constants[WEFT_PY_MAX_CONSTANTS];
  uint32_t constant_count;
  weft_buffer_ref_t bindings[WEFT_PY_MAX_BINDINGS];
  uint32_t binding_count;
} weft_py_dispatch_t;

static bool weft_py_dispatch_parse(const char* function, PyObject* executable,
                                   PyObject* kernel, PyObject* workgroups,
                                   PyObject* constants, PyObject* bindings,
                                   weft_py_dispatch_t* out) {
  out->executable = weft_py_executable_handle(executable, "executable");
  return out->executable &&
         weft_py_kernel_ordinal(out->executable, kernel, function, "kernel",
                                &out->ordinal) &&
         weft_py_workgroups_parse(workgroups, function, out->workgroups) &&
         weft_py_constants_parse(constants, function, out->constants,
                                 &out->constant_count) &&
         weft_py_buffer_refs_parse(bindings, function, "bindings",
                                   out->bindings, WEFT_PY_MAX_BINDINGS,
                                   &out->binding_count);
}

//===----------------------------------------------------------------------===//
// CommandBuffer
//===----------------------------------------------------------------------===//

typedef struct weft_py_command_buffer_t {
  PyObject_HEAD
  weft_command_buffer_t* command_buffer;  // NULL once closed
} weft_py_command_buffer_t;

PyTypeObject weft_py_command_buffer_type;

static weft_command_buffer_t* weft_py_command_buffer_handle(PyObject* object,
                                                            const char* what) {
  if (!PyObject_TypeCheck(object, &weft_py_command_buffer_type)) {
    PyErr_Format(PyExc_TypeError,
                 "%s must be a weft.CommandBuffer, got %.100s", what,
                 Py_TYPE(object)->tp_name);
    return NULL;
  }
  weft_command_buffer_t* command_buffer =
      ((weft_py_command_buffer_t*)object)->command_buffer;
  if (!command_buffer) {
    PyErr_Format(PyExc_ValueError, "%s: the command buffer is closed", what);
  }
  return command_buffer;
}

static void weft_py_command_buffer_dealloc(weft_py_command_buffer_t* self) {
  weft_command_buffer_t* command_buffer = self->command_buffer;
  self->command_buffer = NULL;
  WEFT_PY_RELEASE_WITHOUT_GIL(weft_command_buffer_release(command_buffer));
  Py_TYPE(self)->tp_free((PyObject*)self);
}

static PyObject* weft_py_command_buffer_close(weft_py_command_buffer_t* self,
                                              PyObject* unused) {
  weft_command_buffer_t* command_buffer = self->command_buffer;
  self->command_buffer = NULL;
  WEFT_PY_RELEASE_WITHOUT_GIL(weft_command_buffer_release(command_buffer));
  Py_RETURN_NONE;
}

// Declares |command_buffer|, the live handle of |self|, returning NULL
// (with the error raised) when it is closed.
#define WEFT_PY_SELF_COMMAND_BUFFER(self)                            \
  weft_command_buffer_t* command_buffer =                            \
      weft_py_command_buffer_handle((PyObject*)(self), "CommandBuffer"); \
  if (!command_buffer) return NULL

static PyObject* weft_py_command_buffer_fill(weft_py_command_buffer_t* self,
                                             PyObject* args) {
  PyObject* target = NULL;
  Py_buffer pattern;
  if (!PyArg_ParseTuple(args, "Oy*:fill", &target, &pattern)) return NULL;
  weft_command_buffer_t* command_buffer =
      weft_py_command_buffer_handle((PyObject*)self, "CommandBuffer");
  weft_buffer_ref_t ref;
  PyObject* result = NULL;
  if (command_buffer &&
      weft_py_buffer_ref_parse(target, "fill", "target", -1, &ref) &&
      weft_py_ok(weft_command_buffer_fill(command_buffer, ref, pattern.buf,
                                          (uint32_t)pattern.len))) {
    result = Py_NewRef(Py_None);
  }
  PyBuffer_Release(&pattern);
  return result;
}

static PyObject* weft_py_command_buffer_update(weft_py_command_buffer_t* self,
                                               PyObject* args) {
  Py_buffer source;
  PyObject* target = NULL;
  if (!PyArg_ParseTuple(args, "y*O:update", &source, &target)) return NULL;
  weft_command_buffer_t* command_buffer =
      weft_py_command_buffer_handle((PyObject*)self, "CommandBuffer");
  weft_buffer_ref_t ref;
  PyObject* result = NULL;
  if (command_buffer &&
      weft_py_buffer_ref_parse(target, "update", "target", -1, &ref)) {
    if (ref.length == WEFT_WHOLE_BUFFER) ref.length = (uint64_t)source.len;
    if (weft_py_ok(weft_command_buffer_update(command_buffer, source.buf,
                                              ref))) {
      result = Py_NewRef(Py_None);
    }
  }
  PyBuffer_Release(&source);
  return result;
}

static PyObject* weft_py_command_buffer_copy(weft_py_command_buffer_t* self,
                                             PyObject* args) {
  PyObject* source = NULL;
  PyObject* target = NULL;
  if (!PyArg_ParseTuple(args, "OO:copy", &source, &target)) return NULL;
  WEFT_PY_SELF_COMMAND_BUFFER(self);
  weft_buffer_ref_t source_ref;
  weft_buffer_ref_t target_ref;
  if (!weft_py_buffer_ref_parse(source, "copy", "source", -1, &source_ref) ||
      !weft_py_buffer_ref_parse(target, "copy", "target", -1, &target_ref) ||
      !weft_py_ok(
          weft_command_buffer_copy(command_buffer, source_ref, target_ref))) {
    return NULL;
  }
  Py_RETURN_NONE;
}

static PyObject* weft_py_command_buffer_dispatch(
    weft_py_command_buffer_t* self, PyObject* args, PyObject* kwargs) {
  static char* keywords[] = {"executable", "kernel",   "workgroups",
                             "constants",  "bindings", NULL};
  PyObject *executable, *kernel, *workgroups, *constants = NULL,
                                               *bindings = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOO|OO:dispatch", keywords,
                                   &executable, &kernel, &workgroups,
                                   &constants, &bindings)) {
    return NULL;
  }
  WEFT_PY_SELF_COMMAND_BUFFER(self);
  weft_py_dispatch_t* dispatch = PyMem_Malloc(sizeof(*dispatch));
  if (!dispatch) return PyErr_NoMemory();
  PyObject* result = NULL;
  if (weft_py_dispatch_parse("dispatch", executable, kernel, workgroups,
                             constants, bindings, dispatch) &&
      weft_py_ok(weft_command_buffer_dispatch(
          command_buffer, dispatch->executable, dispatch->ordinal,
          dispatch->workgroups, dispatch->constant_count, dispatch->constants,
          dispatch->binding_count, dispatch->bindings))) {
    result = Py_NewRef(Py_None);
  }
  PyMem_Free(dispatch);
  return result;
}

static PyObject* weft_py_command_buffer_barrier(weft_py_command_buffer_t* self,
                                                PyObject* unused) {
  WEFT_PY_SELF_COMMAND_BUFFER(self);
  if (!weft_py_ok(weft_command_buffer_barrier(command_buffer))) return NULL;
  Py_RETURN_NONE;
}

static PyObject* weft_py_command_buffer_end(weft_py_command_buffer_t* self,
                                            PyObject* unused) {
  WEFT_PY_SELF_COMMAND_BUFFER(self);
  if (!weft_py_ok(weft_command_buffer_end(command_buffer))) return NULL;
  Py_RETURN_NONE;
}

static PyObject* weft_py_command_buffer_get_count(
    weft_py_command_buffer_t* self, void* unused) {
  WEFT_PY_SELF_COMMAND_BUFFER(self);
  return PyLong_FromUnsignedLong(
      weft_command_buffer_command_count(command_buffer));
}

static PyObject* weft_py_command_buffer_repr(weft_py_command_buffer_t* self) {
  weft_command_buffer_t* command_buffer = self->command_buffer;
  if (!command_buffer) {
    return PyUnicode_FromString("<weft.CommandBuffer (closed)>");
  }
  const uint32_t count = weft_command_buffer_command_count(command_buffer);
  const uint32_t slots = weft_command_buffer_binding_capacity(command_buffer);
  return PyUnicode_FromFormat(
      "<weft.CommandBuffer %s, %u command%s, %u binding slot%s>",
      (weft_command_buffer_mode(command_buffer) &
       WEFT_COMMAND_BUFFER_MODE_REUSABLE)
          ? "reusable"
          : "one-shot",
      (unsigned)count, count == 1 ? "" : "s", (unsigned)slots,
      slots == 1 ? "" : "s");
}

static PyMethodDef weft_py_command_buffer_methods[] = {
    {"fill", (PyCFunction)weft_py_command_buffer_fill, METH_VARARGS,
     "fill($self, target, pattern, /)\n--\n\nRecords a fill of |target| (a "
     "Buffer, a Tensor, (buffer, offset, length) or (slot, offset, "
     "length))."},
    {"update", (PyCFunction)weft_py_command_buffer_update, METH_VARARGS,
     "update($self, source, target, /)\n--\n\nRecords a write of "
     "|source|'s bytes (copied now)."},
    {"copy", (PyCFunction)weft_py_command_buffer_copy, METH_VARARGS,
     "copy($self, source, target, /)\n--\n\nRecords a copy between two "
     "references."},
    {"dispatch", (PyCFunction)(void (*)(void))weft_py_command_buffer_dispatch,
     METH_VARARGS | METH_KEYWORDS,
     "dispatch($self, /, executable, kernel, workgroups, constants=None, "
     "bindings=None)\n--\n\nRecords a dispatch (the arguments as "
     "Device.dispatch takes them)."},
    {"barrier", (PyCFunction)weft_py_command_buffer_barrier, METH_NOARGS,
     "barrier($self, /)\n--\n\nOrders what was recorded before it before "
     "what comes after."},
    {"end", (PyCFunction)weft_py_command_buffer_end, METH_NOARGS,
     "end($self, /)\n--\n\nFinishes recording (the first recording "
     "error, if any)."},
    {"close", (PyCFunction)weft_py_command_buffer_close, METH_NOARGS,
     "close($self, /)\n--\n\nDrops this object's reference. Idempotent."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef weft_py_command_buffer_getset[] = {
    {"command_count", (getter)weft_py_command_buffer_get_count, NULL,
     "Commands recorded so far.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject weft_py_command_buffer_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "weft.CommandBuffer",
    .tp_doc = "Commands recorded once and executed on a queue "
              "(Device.command_buffer, Device.execute).",
    .tp_basicsize = sizeof(weft_py_command_buffer_t),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)weft_py_command_buffer_dealloc,
    .tp_repr = (reprfunc)weft_py_command_buffer_repr,
    .tp_methods = weft_py_command_buffer_methods,
    .tp_getset = weft_py_command_buffer_getset,
};

//===----------------------------------------------------------------------===//
// Device methods
//===----------------------------------------------------------------------===//

PyObject* weft_py_device_executable(PyObject* self, PyObject* path_object) {
  weft_device_t* device = weft_py_device_handle(self, "Device");
  PyObject* path = NULL;
  if (!device || !PyUnicode_FSConverter(path_object, &path)) return NULL;
  weft_executable_t* executable = NULL;
  weft_status_t status = weft_device_create_executable(
      device, weft_executable_source_cpu_shared_object(PyBytes_AS_STRING(path)),
      &executable);
  Py_DECREF(path);
  if (!weft_py_ok(status)) return NULL;
  return weft_py_executable_wrap(executable);
}

// executable_gpu(format, data, kernels, name=None): a GPU driver's kernel
// library from bytes: "spirv" (vulkan), "cuda-ptx" or "cuda-image" (cuda),
// with its kernel table as [(name, binding_count, constant_count,
// (x, y, z) workgroup size), ...].
PyObject* weft_py_device_executable_gpu(PyObject* self, PyObject* args,
                                        PyObject* kwargs) {
  static char* keywords[] = {"format", "data", "kernels", "name", NULL};
  const char* format_name = NULL;
  Py_buffer data;
  PyObject* kernels = NULL;
  const char* name = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "sy*O|z:executable_gpu",
                                   keywords, &format_name, &data, &kernels,
                                   &name)) {
    return NULL;
  }
  weft_device_t* device = weft_py_device_handle(self, "Device");
  PyObject* sequence = NULL;
  weft_kernel_def_t* table = NULL;
  PyObject* result = NULL;
  weft_executable_format_t format = WEFT_EXECUTABLE_FORMAT_SPIRV;
  if (!device) goto done;
  if (strcmp(format_name, "spirv") == 0) {
    format = WEFT_EXECUTABLE_FORMAT_SPIRV;
  } else if (strcmp(format_name, "cuda-ptx") == 0) {
    format = WEFT_EXECUTABLE_FORMAT_CUDA_PTX;
  } else if (strcmp(format_name, "cuda-image") == 0) {
    format = WEFT_EXECUTABLE_FORMAT_CUDA_IMAGE;
  } else {
    PyErr_Format(PyExc_ValueError,
                 "format must be 'spirv', 'cuda-ptx' or 'cuda-image', got "
                 "'%s'",
                 format_name);
    goto done;
  }
  sequence = PySequence_Fast(kernels, "kernels must be a sequence");
  if (!sequence) goto done;
  const Py_ssize_t count = PySequence_Fast_GET_SIZE(sequence);
  table = PyMem_Calloc(count ? (size_t)count : 1, sizeof(*table));
  if (!table) {
    PyErr_NoMemory();
    goto done;
  }
  for (Py_ssize_t i = 0; i < count; ++i) {
    // Names borrowed from the tuples, alive while |sequence| is.
    PyObject* fields[5];
    if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(sequence, i), "sOO(OOO)",
                          &table[i].name, &fields[0], &fields[1], &fields[2],
                          &fields[3], &fields[4])) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError,
                   "kernels[%zd] must be (name, binding_count, "
                   "constant_count, (x, y, z))",
                   i);
      goto done;
    }
    uint32_t* values[5] = {&table[i].binding_count, &table[i].constant_count,
                           &table[i].workgroup_size[0],
                           &table[i].workgroup_size[1],
                           &table[i].workgroup_size[2]};
    for (int field = 0; field < 5; ++field) {
      uint64_t bits = 0;
      if (!weft_py_integer_try(fields[field], WEFT_PY_INTEGER_U32, &bits)) {
        char item[64];
        if (field < 2) {
          snprintf(item, sizeof(item), "kernels[%zd][%d]", i, field + 1);
        } else {
          snprintf(item, sizeof(item), "kernels[%zd][3][%d]", i, field - 2);
        }
        weft_py_integer_refuse(fields[field], WEFT_PY_INTEGER_U32,
                               "executable_gpu", item);
        goto done;
      }
      *values[field] = (uint32_t)bits;
    }
  }
  weft_executable_t* executable = NULL;
  const weft_executable_source_t source =
      format == WEFT_EXECUTABLE_FORMAT_SPIRV
          ? weft_executable_source_spirv(name, data.buf, (size_t)data.len,
                                         (uint32_t)count, table)
          : weft_executable_source_cuda(format, name, data.buf,
                                        (size_t)data.len, (uint32_t)count,
                                        table);
  if (weft_py_ok(weft_device_create_executable(device, source, &executable))) {
    result = weft_py_executable_wrap(executable);
  }
done:
  PyMem_Free(table);
  Py_XDECREF(sequence);
  PyBuffer_Release(&data);
  return result;
}

PyObject* weft_py_device_command_buffer(PyObject* self, PyObject* args,
                                        PyObject* kwargs) {
  static char* keywords[] = {"reusable", "binding_capacity", NULL};
  int reusable = 0;
  PyObject* capacity_object = NULL;
  uint32_t binding_capacity = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$pO:command_buffer",
                                   keywords, &reusable, &capacity_object) ||
      (capacity_object &&
       !weft_py_u32(capacity_object, "command_buffer", "binding_capacity",
                    &binding_capacity))) {
    return NULL;
  }
  weft_device_t* device = weft_py_device_handle(self, "Device");
  if (!device) return NULL;
  weft_command_buffer_t* command_buffer = NULL;
  weft_status_t status = weft_command_buffer_create(
      device,
      reusable ? WEFT_COMMAND_BUFFER_MODE_REUSABLE
               : WEFT_COMMAND_BUFFER_MODE_ONE_SHOT,
      WEFT_COMMAND_CATEGORY_ANY, binding_capacity, &command_buffer);
  if (weft_status_is_ok(status)) {
    status = weft_command_buffer_begin(command_buffer);
    if (!weft_status_is_ok(status)) {
      weft_command_buffer_release(command_buffer);
      command_buffer = NULL;
    }
  }
  if (!weft_py_ok(status)) return NULL;
  weft_py_command_buffer_t* object = PyObject_New(
      weft_py_command_buffer_t, &weft_py_command_buffer_type);
  if (!object) {
    weft_command_buffer_release(command_buffer);
    return NULL;
  }
  object->command_buffer = command_buffer;
  return (PyObject*)object;
}

PyObject* weft_py_device_dispatch(PyObject* self, PyObject* const* args,
                                  Py_ssize_t nargs, PyObject* kwnames) {
  static weft_py_parameters_t parameters = {
      .function = "dispatch", .positional = 5, .required = 3,
      .names = {"executable", "kernel", "workgroups", "constants", "bindings",
                "wait", "signal"}};
  PyObject* a[7];
  if (!weft_py_arguments_parse(&parameters, args, nargs, kwnames, a)) {
    return NULL;
  }
  weft_device_t* device = weft_py_device_handle(self, "Device");
  if (!device) return NULL;
  weft_py_dispatch_t* dispatch = PyMem_Malloc(sizeof(*dispatch));
  if (!dispatch) return PyErr_NoMemory();
  weft_py_queue_lists_t lists;
  PyObject* result = NULL;
  if (weft_py_dispatch_parse("dispatch", a[0], a[1], a[2], a[3], a[4],
                             dispatch) &&
      weft_py_queue_lists_parse("dispatch", a[5], a[6], &lists)) {
    result = weft_py_queue_lists_finish(
        &lists, weft_device_queue_dispatch(
                    device, WEFT_QUEUE_AFFINITY_ANY, lists.wait.list,
                    lists.signal.list, dispatch->executable,
                    dispatch->ordinal, dispatch->workgroups,
                    dispatch->constant_count, dispatch->constants,
                    dispatch->binding_count, dispatch->bindings));
  }
  PyMem_Free(dispatch);
  return result;
}

PyObject* weft_py_device_execute(PyObject* self, PyObject* const* args,
                                 Py_ssize_t nargs, PyObject* kwnames) {
  static weft_py_parameters_t parameters = {
      .function = "execute", .positional = 2, .required = 1,
      .names = {"command_buffer", "bindings", "wait", "signal"}};
  PyObject* a[4];
  if (!weft_py_arguments_parse(&parameters, args, nargs, kwnames, a)) {
    return NULL;
  }
  weft_device_t* device = weft_py_device_handle(self, "Device");
  weft_command_buffer_t* command_buffer =
      device ? weft_py_command_buffer_handle(a[0], "command_buffer") : NULL;
  weft_buffer_ref_t refs[WEFT_PY_MAX_BINDINGS];
  uint32_t count = 0;
  if (!command_buffer ||
      !weft_py_buffer_refs_parse(a[1], "execute", "bindings", refs,
                                 WEFT_PY_MAX_BINDINGS, &count)) {
    return NULL;
  }
  // The table: each entry a buffer range (refs, not slots).
  weft_buffer_binding_t table[WEFT_PY_MAX_BINDINGS];
  for (uint32_t i = 0; i < count; ++i) {
    if (!refs[i].buffer) {
      PyErr_Format(PyExc_TypeError,
                   "bindings[%u] must name a buffer, not a slot", i);
      return NULL;
    }
    table[i] = (weft_buffer_binding_t){refs[i].buffer, refs[i].offset,
                                       refs[i].length};
  }
  weft_py_queue_lists_t lists;
  if (!weft_py_queue_lists_parse("execute", a[2], a[3], &lists)) return NULL;
  return weft_py_queue_lists_finish(
      &lists, weft_device_queue_execute(device, WEFT_QUEUE_AFFINITY_ANY,
                                        lists.wait.list, lists.signal.list,
                                        command_buffer,
                                        (weft_binding_table_t){count, table}));
}

int weft_py_kernels_setup(PyObject* module) {
  if (PyType_Ready(&weft_py_executable_type) < 0 ||
      PyType_Ready(&weft_py_command_buffer_type) < 0 ||
      PyModule_AddObjectRef(module, "Executable",
                            (PyObject*)&weft_py_executable_type) < 0 ||
      PyModule_AddObjectRef(module, "CommandBuffer",
                            (PyObject*)&weft_py_command_buffer_type) < 0) {
    return -1;
  }
  return 0;
}
