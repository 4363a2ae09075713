// weft._weft.Semaphore: a timeline semaphore (weft_python.h).
#include <string.h>

#include "weft_python.h"

weft_semaphore_t* weft_py_semaphore_handle(PyObject* object,
                                           const char* what) {
  if (!PyObject_TypeCheck(object, &weft_py_semaphore_type)) {
    PyErr_Format(PyExc_TypeError, "%s must be a weft.Semaphore, got %.100s",
                 what, Py_TYPE(object)->tp_name);
    return NULL;
  }
  weft_semaphore_t* semaphore = ((weft_py_semaphore_t*)object)->semaphore;
  if (!semaphore) {
    PyErr_Format(PyExc_ValueError, "%s: the semaphore is closed", what);
  }
  return semaphore;
}

PyObject* weft_py_semaphore_wrap(weft_semaphore_t* semaphore) {
  weft_py_semaphore_t* self = PyObject_New(weft_py_semaphore_t,
                                           &weft_py_semaphore_type);
  if (!self) {
    weft_semaphore_release(semaphore);
    return NULL;
  }
  self->semaphore = semaphore;
  return (PyObject*)self;
}

static int weft_py_semaphore_init(weft_py_semaphore_t* self, PyObject* args,
                                  PyObject* kwargs) {
  static char* keywords[] = {"initial_value", "name", NULL};
  PyObject* initial_object = NULL;
  uint64_t initial_value = 0;
  const char* name = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O$z:Semaphore", keywords,
                                   &initial_object, &name) ||
      (initial_object && !weft_py_u64(initial_object, "Semaphore",
                                      "initial_value", &initial_value))) {
    return -1;
  }
  if (self->semaphore) {
    PyErr_SetString(PyExc_RuntimeError, "Semaphore.__init__ called twice");
    return -1;
  }
  weft_semaphore_t* semaphore = NULL;
  if (!weft_py_ok(weft_semaphore_create(weft_py_allocator(), initial_value,
                                        &semaphore))) {
    return -1;
  }
  if (name) weft_semaphore_set_name(semaphore, name);
  self->semaphore = semaphore;
  return 0;
}

static void weft_py_semaphore_dealloc(weft_py_semaphore_t* self) {
  weft_semaphore_t* semaphore = self->semaphore;
  self->semaphore = NULL;
  WEFT_PY_RELEASE_WITHOUT_GIL(weft_semaphore_release(semaphore));
  Py_TYPE(self)->tp_free((PyObject*)self);
}

static PyObject* weft_py_semaphore_close(weft_py_semaphore_t* self,
                                         PyObject* unused) {
  weft_semaphore_t* semaphore = self->semaphore;
  self->semaphore = NULL;
  WEFT_PY_RELEASE_WITHOUT_GIL(weft_semaphore_release(semaphore));
  Py_RETURN_NONE;
}

static PyObject* weft_py_semaphore_enter(weft_py_semaphore_t* self,
                                         PyObject* unused) {
  if (!weft_py_semaphore_handle((PyObject*)self, "Semaphore")) return NULL;
  return Py_NewRef(self);
}

static PyObject* weft_py_semaphore_exit(weft_py_semaphore_t* self,
                                        PyObject* args) {
  return weft_py_semaphore_close(self, NULL);
}

static PyObject* weft_py_semaphore_query(weft_py_semaphore_t* self,
                                         PyObject* unused) {
  weft_semaphore_t* semaphore =
      weft_py_semaphore_handle((PyObject*)self, "Semaphore");
  if (!semaphore) return NULL;
  uint64_t value = 0;
  if (!weft_py_ok(weft_semaphore_query(semaphore, &value))) return NULL;
  return PyLong_FromUnsignedLongLong(value);
}

static PyObject* weft_py_semaphore_signal(weft_py_semaphore_t* self,
                                          PyObject* value_object) {
  weft_semaphore_t* semaphore =
      weft_py_semaphore_handle((PyObject*)self, "Semaphore");
  if (!semaphore) return NULL;
  uint64_t value = 0;
  if (!weft_py_u64(value_object, "signal", "value", &value) ||
      !weft_py_ok(weft_semaphore_signal(semaphore, value))) {
    return NULL;
  }
  Py_RETURN_NONE;
}

static PyObject* weft_py_semaphore_fail(weft_py_semaphore_t* self,
                                        PyObject* args, PyObject* kwargs) {
  static char* keywords[] = {"message", "code", NULL};
  const char* message = NULL;
  PyObject* code_object = Py_None;
  weft_status_code_t code = WEFT_STATUS_ABORTED;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s|O:fail", keywords,
                                   &message, &code_object) ||
      !weft_py_failure_code(code_object, "fail", "code", &code)) {
    return NULL;
  }
  weft_semaphore_t* semaphore =
      weft_py_semaphore_handle((PyObject*)self, "Semaphore");
  if (!semaphore) return NULL;
  weft_semaphore_fail(semaphore, weft_status_make_(NULL, 0,
                                                   (weft_status_code_t)code,
                                                   "%s", message));
  Py_RETURN_NONE;
}

// What a semaphore wait slices: the semaphore and the value.
typedef struct weft_py_semaphore_wait_t {
  weft_semaphore_t* semaphore;
  uint64_t value;
} weft_py_semaphore_wait_t;

static weft_status_t weft_py_semaphore_wait_until(void* target,
                                                  weft_time_t deadline) {
  weft_py_semaphore_wait_t* wait = (weft_py_semaphore_wait_t*)target;
  return weft_semaphore_wait(wait->semaphore, wait->value,
                             weft_timeout_deadline(deadline));
}

// A slice's DEADLINE_EXCEEDED, or the semaphore failed with that code:
// query reports such a failure.
static weft_status_t weft_py_semaphore_wait_check(void* target) {
  uint64_t current = 0;
  return weft_semaphore_query(((weft_py_semaphore_wait_t*)target)->semaphore,
                              &current);
}

static PyObject* weft_py_semaphore_wait(weft_py_semaphore_t* self,
                                        PyObject* const* args,
                                        Py_ssize_t nargs, PyObject* kwnames) {
  static weft_py_parameters_t parameters = {
      .function = "wait", .positional = 2, .required = 1,
      .names = {"value", "timeout"}};
  PyObject* a[2];
  uint64_t value = 0;
  if (!weft_py_arguments_parse(&parameters, args, nargs, kwnames, a) ||
      !weft_py_argument_u64(&parameters, 0, a[0], &value)) {
    return NULL;
  }
  weft_semaphore_t* semaphore =
      weft_py_semaphore_handle((PyObject*)self, "Semaphore");
  weft_timeout_t timeout;
  if (!semaphore || !weft_py_timeout(a[1], &timeout)) return NULL;
  // Reached already: no need to let go of the GIL (a failure is left to
  // the wait, which reports it in its own words).
  uint64_t current = 0;
  weft_status_t queried = weft_semaphore_query(semaphore, &current);
  if (weft_status_is_ok(queried) && current >= value) Py_RETURN_NONE;
  weft_status_ignore(queried);
  // Its own reference while the GIL is let go (another thread may close
  // the Python object meanwhile).
  weft_semaphore_retain(semaphore);
  weft_py_semaphore_wait_t wait = {semaphore, value};
  weft_status_t status = WEFT_OK;
  const bool waited = weft_py_wait_in_slices(
      weft_py_semaphore_wait_until, weft_py_semaphore_wait_check, &wait,
      weft_timeout_as_deadline(timeout), &status);
  WEFT_PY_RELEASE_WITHOUT_GIL(weft_semaphore_release(semaphore));
  if (!waited || !weft_py_ok(status)) return NULL;
  Py_RETURN_NONE;
}

// at(value): the awaitable of weft._asyncio.wait (imported on first use,
// so the extension does not load asyncio for programs that never await;
// kept, as an import per call cost more than the rest of the await's setup).
static PyObject* weft_py_asyncio_wait;

static PyObject* weft_py_semaphore_at(weft_py_semaphore_t* self,
                                      PyObject* value_object) {
  // Refused here, not when awaited.
  uint64_t checked = 0;
  if (!weft_py_semaphore_handle((PyObject*)self, "Semaphore") ||
      !weft_py_u64(value_object, "at", "value", &checked)) {
    return NULL;
  }
  if (!weft_py_asyncio_wait) {
    PyObject* module = PyImport_ImportModule("weft._asyncio");
    if (!module) return NULL;
    weft_py_asyncio_wait = PyObject_GetAttrString(module, "wait");
    Py_DECREF(module);
    if (!weft_py_asyncio_wait) return NULL;
  }
  PyObject* value = PyLong_FromUnsignedLongLong(checked);
  if (!value) return NULL;
  PyObject* args[2] = {(PyObject*)self, value};
  PyObject* awaitable = PyObject_Vectorcall(weft_py_asyncio_wait, args, 2,
                                            NULL);
  Py_DECREF(value);
  return awaitable;
}

static PyObject* weft_py_semaphore_get_name(weft_py_semaphore_t* self,
                                            void* unused) {
  weft_semaphore_t* semaphore =
      weft_py_semaphore_handle((PyObject*)self, "Semaphore");
  if (!semaphore) return NULL;
  return PyUnicode_FromString(weft_semaphore_name(semaphore));
}

static int weft_py_semaphore_set_name(weft_py_semaphore_t* self,
                                      PyObject* name, void* unused) {
  weft_semaphore_t* semaphore =
      weft_py_semaphore_handle((PyObject*)self, "Semaphore");
  if (!semaphore) return -1;
  if (!name) {
    PyErr_SetString(PyExc_AttributeError, "the name cannot be deleted");
    return -1;
  }
  const char* text = PyUnicode_AsUTF8(name);
  if (!text) return -1;
  weft_semaphore_set_name(semaphore, text);
  return 0;
}

static PyObject* weft_py_semaphore_get_closed(weft_py_semaphore_t* self,
                                              void* unused) {
  return PyBool_FromLong(self->semaphore == NULL);
}

static PyObject* weft_py_semaphore_repr(weft_py_semaphore_t* self) {
  if (!self->semaphore) {
    return PyUnicode_FromString("<weft.Semaphore (closed)>");
  }
  char label[128];
  const char* name = weft_semaphore_name(self->semaphore);
  snprintf(label, sizeof(label), "%s", name);
  return PyUnicode_FromFormat("<weft.Semaphore '%s'>", label);
}

static PyMethodDef weft_py_semaphore_methods[] = {
    {"close", (PyCFunction)weft_py_semaphore_close, METH_NOARGS,
     "close($self, /)\n--\n\nDrops this object's reference (operations "
     "that signal or wait on it keep theirs). Idempotent."},
    {"__enter__", (PyCFunction)weft_py_semaphore_enter, METH_NOARGS,
     "__enter__($self, /)\n--\n\nThe semaphore; __exit__ closes it."},
    {"__exit__", (PyCFunction)weft_py_semaphore_exit, METH_VARARGS,
     "__exit__($self, /, *exc_info)\n--\n\nCloses the semaphore."},
    {"query", (PyCFunction)weft_py_semaphore_query, METH_NOARGS,
     "query($self, /)\n--\n\nThe current value (an int); raises the "
     "failure (its original message) once the semaphore has failed."},
    {"signal", (PyCFunction)weft_py_semaphore_signal, METH_O,
     "signal($self, value, /)\n--\n\nMoves the value to |value| (a u64) "
     "from the host (InvalidArgumentError unless it is ahead)."},
    {"fail", (PyCFunction)(void (*)(void))weft_py_semaphore_fail,
     METH_VARARGS | METH_KEYWORDS,
     "fail($self, /, message, code=None)\n--\n\nFails the semaphore: "
     "every waiter, and every operation waiting on it, gets |message| as "
     "the error of |code|: one of weft.Error's subclasses "
     "(weft.CancelledError, ...) or its status code (an int; "
     "weft.STATUS_CODES names them); None is ABORTED "
     "(weft.AbortedError)."},
    {"wait", (PyCFunction)(void (*)(void))weft_py_semaphore_wait,
     METH_FASTCALL | METH_KEYWORDS,
     "wait($self, /, value, timeout=None)\n--\n\nBlocks until the value "
     "reaches |value| (a u64) (timeout in seconds; None: forever; 0: a "
     "poll; a negative timeout is refused with ValueError), without "
     "holding the GIL; Ctrl-C interrupts it. DeadlineExceededError on "
     "timeout; the failure's own error when the semaphore failed."},
    {"at", (PyCFunction)weft_py_semaphore_at, METH_O,
     "at($self, value, /)\n--\n\nAn awaitable: `await semaphore.at(value)` "
     "waits on the running asyncio loop, without a thread: weft's "
     "timepoint wakes the loop. Raises the failure if the semaphore fails "
     "first; cancelling the awaiting task stops the watch."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef weft_py_semaphore_getset[] = {
    {"name", (getter)weft_py_semaphore_get_name,
     (setter)weft_py_semaphore_set_name,
     "The name messages use for it (\"\" when none).", NULL},
    {"closed", (getter)weft_py_semaphore_get_closed, NULL,
     "True once close() was called.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject weft_py_semaphore_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "weft.Semaphore",
    .tp_doc = "Semaphore(initial_value=0, *, name=None)\n--\n\n"
              "A host timeline semaphore: a 64-bit value (every u64, from "
              "|initial_value|) that only moves forward, or fails with a "
              "message. Any device's operations may wait on it and signal "
              "it (Device.semaphore makes one on the device).",
    .tp_basicsize = sizeof(weft_py_semaphore_t),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)weft_py_semaphore_init,
    .tp_dealloc = (destructor)weft_py_semaphore_dealloc,
    .tp_repr = (reprfunc)weft_py_semaphore_repr,
    .tp_methods = weft_py_semaphore_methods,
    .tp_getset = weft_py_semaphore_getset,
};

int weft_py_semaphore_setup(PyObject* module) {
  if (PyType_Ready(&weft_py_semaphore_type) < 0) return -1;
  return PyModule_AddObjectRef(module, "Semaphore",
                               (PyObject*)&weft_py_semaphore_type);
}
