// weft._weft.Notifier: semaphore timepoints delivered to an event loop
// (weft_python.h). A timepoint fires on whatever thread moves the
// semaphore, without the GIL: its callback only stores the status, pushes
// the record on a lock-free list and writes the notifier's eventfd. The
// loop's thread, which watches the eventfd (asyncio's add_reader), drains
// the list with the GIL and resolves each record's future. So no Python
// runs on a weft thread, and one thread awaits any number of semaphores.
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "weft_python.h"

typedef struct weft_py_notifier_t weft_py_notifier_t;

// One watched (semaphore, value): registered until it fires or is
// cancelled. Owned by the notifier's pending list until it fires, then by
// the fired list until drained.
typedef struct weft_py_watch_t {
  weft_timepoint_t timepoint;
  weft_py_notifier_t* notifier;
  weft_semaphore_t* semaphore;  // retained
  PyObject* future;             // strong reference
  weft_status_t status;         // set by the callback
  // Pending list (the loop's thread, with the GIL).
  struct weft_py_watch_t* prev;
  struct weft_py_watch_t* next;
  // Fired list (any thread, lock-free push; drained by the loop's thread).
  struct weft_py_watch_t* fired_next;
  // Its id, what cancel takes (0 once it left the pending list).
  uint64_t id;
} weft_py_watch_t;

struct weft_py_notifier_t {
  PyObject_HEAD
  int fd;
  _Atomic(weft_py_watch_t*) fired;
  weft_py_watch_t* pending;
  uint64_t next_id;
  Py_ssize_t pending_count;
};

// Pushes |watch| on the fired list and wakes the loop (any thread).
static void weft_py_watch_fired(void* user_data, weft_timepoint_t* timepoint,
                                weft_status_t status) {
  weft_py_watch_t* watch = (weft_py_watch_t*)user_data;
  weft_py_notifier_t* notifier = watch->notifier;
  watch->status = status;
  weft_py_watch_t* head = atomic_load(&notifier->fired);
  do {
    watch->fired_next = head;
  } while (!atomic_compare_exchange_weak(&notifier->fired, &head, watch));
  // Wake the loop once per batch: only the push onto an empty list writes.
  if (!head) {
    const uint64_t one = 1;
    ssize_t written;
    do {
      written = write(notifier->fd, &one, sizeof(one));
    } while (written < 0 && errno == EINTR);
  }
}

static void weft_py_pending_unlink(weft_py_notifier_t* notifier,
                                   weft_py_watch_t* watch) {
  if (watch->prev) {
    watch->prev->next = watch->next;
  } else {
    notifier->pending = watch->next;
  }
  if (watch->next) watch->next->prev = watch->prev;
  watch->prev = watch->next = NULL;
  watch->id = 0;
  --notifier->pending_count;
}

static void weft_py_watch_free(weft_py_watch_t* watch) {
  weft_semaphore_t* semaphore = watch->semaphore;
  WEFT_PY_RELEASE_WITHOUT_GIL(weft_semaphore_release(semaphore));
  weft_status_free(watch->status);
  Py_XDECREF(watch->future);
  PyMem_RawFree(watch);
}

static PyObject* weft_py_notifier_new(PyTypeObject* type, PyObject* args,
                                      PyObject* kwargs) {
  if (!PyArg_ParseTuple(args, ":Notifier")) return NULL;
  weft_py_notifier_t* self = (weft_py_notifier_t*)type->tp_alloc(type, 0);
  if (!self) return NULL;
  self->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (self->fd < 0) {
    PyErr_SetFromErrno(PyExc_OSError);
    Py_DECREF(self);
    return NULL;
  }
  atomic_init(&self->fired, NULL);
  self->next_id = 1;
  return (PyObject*)self;
}

// Resolves the futures of every fired watch (with the GIL).
static PyObject* weft_py_notifier_drain(weft_py_notifier_t* self,
                                        PyObject* unused) {
  if (self->fd >= 0) {
    uint64_t count = 0;
    while (read(self->fd, &count, sizeof(count)) < 0 && errno == EINTR) {
    }
  }
  weft_py_watch_t* watch = atomic_exchange(&self->fired, NULL);
  // The list is newest first: reverse it so futures resolve in firing
  // order.
  weft_py_watch_t* ordered = NULL;
  while (watch) {
    weft_py_watch_t* next = watch->fired_next;
    watch->fired_next = ordered;
    ordered = watch;
    watch = next;
  }
  PyObject* error = NULL;
  while (ordered) {
    watch = ordered;
    ordered = watch->fired_next;
    if (watch->id) weft_py_pending_unlink(self, watch);
    PyObject* done = PyObject_CallMethod(watch->future, "done", NULL);
    const int is_done = done ? PyObject_IsTrue(done) : -1;
    Py_XDECREF(done);
    PyObject* result = NULL;
    if (is_done == 0) {
      if (weft_status_is_ok(watch->status)) {
        result = PyObject_CallMethod(watch->future, "set_result", "O",
                                     Py_None);
      } else {
        weft_status_t status = watch->status;
        watch->status = WEFT_OK;
        weft_py_raise(status);
        PyObject *type, *value, *traceback;
        PyErr_Fetch(&type, &value, &traceback);
        PyErr_NormalizeException(&type, &value, &traceback);
        result = PyObject_CallMethod(watch->future, "set_exception", "O",
                                     value);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(traceback);
      }
    } else if (is_done > 0) {
      result = Py_NewRef(Py_None);  // cancelled meanwhile: nothing to say
    }
    if (!result && !error) {
      // Keep going (every record must be freed); report the first error.
      PyObject *type, *traceback;
      PyErr_Fetch(&type, &error, &traceback);
      PyErr_NormalizeException(&type, &error, &traceback);
      Py_XDECREF(type);
      Py_XDECREF(traceback);
    }
    PyErr_Clear();
    Py_XDECREF(result);
    weft_py_watch_free(watch);
  }
  if (error) {
    PyErr_SetObject((PyObject*)Py_TYPE(error), error);
    Py_DECREF(error);
    return NULL;
  }
  Py_RETURN_NONE;
}

// watch(semaphore, value, future) -> id: |future|'s result is set (or its
// exception, the failure's) once |semaphore| reaches |value|, when the
// loop next drains.
static PyObject* weft_py_notifier_watch(weft_py_notifier_t* self,
                                        PyObject* args) {
  PyObject* semaphore_object = NULL;
  PyObject* value_object = NULL;
  uint64_t value = 0;
  PyObject* future = NULL;
  if (!PyArg_ParseTuple(args, "OOO:watch", &semaphore_object, &value_object,
                        &future) ||
      !weft_py_u64(value_object, "watch", "value", &value)) {
    return NULL;
  }
  if (self->fd < 0) {
    PyErr_SetString(PyExc_ValueError, "the notifier is closed");
    return NULL;
  }
  weft_semaphore_t* semaphore =
      weft_py_semaphore_handle(semaphore_object, "semaphore");
  if (!semaphore) return NULL;
  weft_py_watch_t* watch = PyMem_RawCalloc(1, sizeof(*watch));
  if (!watch) return PyErr_NoMemory();
  watch->notifier = self;
  watch->semaphore = semaphore;
  weft_semaphore_retain(semaphore);
  watch->future = Py_NewRef(future);
  watch->id = self->next_id++;
  watch->next = self->pending;
  if (self->pending) self->pending->prev = watch;
  self->pending = watch;
  ++self->pending_count;
  const uint64_t id = watch->id;
  watch->timepoint.fn = weft_py_watch_fired;
  watch->timepoint.user_data = watch;
  // May fire at once (already reached or failed): then it is on the fired
  // list and the eventfd is written; the loop drains it next.
  weft_semaphore_register_timepoint(semaphore, value, &watch->timepoint);
  return PyLong_FromUnsignedLongLong(id);
}

// cancel(id): stops watching (a future cancelled meanwhile); a watch that
// already fired is left for drain.
static PyObject* weft_py_notifier_cancel(weft_py_notifier_t* self,
                                         PyObject* id_object) {
  uint64_t id = 0;
  if (!weft_py_u64(id_object, "cancel", "id", &id)) return NULL;
  for (weft_py_watch_t* watch = self->pending; watch; watch = watch->next) {
    if (watch->id != id) continue;
    if (weft_semaphore_cancel_timepoint(watch->semaphore, &watch->timepoint)) {
      weft_py_pending_unlink(self, watch);
      weft_py_watch_free(watch);
    }
    break;
  }
  Py_RETURN_NONE;
}

// Cancels every pending watch, drains what fired, closes the eventfd.
static PyObject* weft_py_notifier_close(weft_py_notifier_t* self,
                                        PyObject* unused) {
  weft_py_watch_t* watch = self->pending;
  while (watch) {
    weft_py_watch_t* next = watch->next;
    if (weft_semaphore_cancel_timepoint(watch->semaphore, &watch->timepoint)) {
      weft_py_pending_unlink(self, watch);
      PyObject* result = PyObject_CallMethod(watch->future, "cancel", NULL);
      Py_XDECREF(result);
      PyErr_Clear();
      weft_py_watch_free(watch);
    }
    watch = next;
  }
  // What fired meanwhile. A watch whose cancel found it firing is
  // detached from its semaphore but its callback may not have pushed it
  // yet: wait for it (the callback is a few instructions away), as it
  // must not touch this notifier after close.
  for (;;) {
    PyObject* drained = weft_py_notifier_drain(self, NULL);
    if (drained) {
      Py_DECREF(drained);
    } else {
      PyErr_WriteUnraisable((PyObject*)self);
    }
    if (!self->pending) break;
    Py_BEGIN_ALLOW_THREADS
    sched_yield();
    Py_END_ALLOW_THREADS
  }
  if (self->fd >= 0) {
    close(self->fd);
    self->fd = -1;
  }
  Py_RETURN_NONE;
}

static void weft_py_notifier_dealloc(weft_py_notifier_t* self) {
  PyObject* result = weft_py_notifier_close(self, NULL);
  Py_XDECREF(result);
  PyErr_Clear();
  Py_TYPE(self)->tp_free((PyObject*)self);
}

static PyObject* weft_py_notifier_fileno(weft_py_notifier_t* self,
                                         PyObject* unused) {
  if (self->fd < 0) {
    PyErr_SetString(PyExc_ValueError, "the notifier is closed");
    return NULL;
  }
  return PyLong_FromLong(self->fd);
}

static PyObject* weft_py_notifier_get_pending(weft_py_notifier_t* self,
                                              void* unused) {
  return PyLong_FromSsize_t(self->pending_count);
}

static PyObject* weft_py_notifier_repr(weft_py_notifier_t* self) {
  if (self->fd < 0) {
    return PyUnicode_FromString("<weft._weft.Notifier (closed)>");
  }
  return PyUnicode_FromFormat("<weft._weft.Notifier, %zd watch%s pending>",
                              self->pending_count,
                              self->pending_count == 1 ? "" : "es");
}

static PyMethodDef weft_py_notifier_methods[] = {
    {"watch", (PyCFunction)weft_py_notifier_watch, METH_VARARGS,
     "watch($self, semaphore, value, future, /)\n--\n\nSets |future|'s "
     "result (or its exception: the failure) once |semaphore| reaches "
     "|value|; returns an id (an int) for cancel()."},
    {"cancel", (PyCFunction)weft_py_notifier_cancel, METH_O,
     "cancel($self, id, /)\n--\n\nStops a watch whose future was "
     "cancelled."},
    {"drain", (PyCFunction)weft_py_notifier_drain, METH_NOARGS,
     "drain($self, /)\n--\n\nResolves the futures of the watches that "
     "fired (the loop's reader callback on fileno())."},
    {"fileno", (PyCFunction)weft_py_notifier_fileno, METH_NOARGS,
     "fileno($self, /)\n--\n\nThe eventfd (an int) that becomes readable "
     "when a watch fires."},
    {"close", (PyCFunction)weft_py_notifier_close, METH_NOARGS,
     "close($self, /)\n--\n\nCancels the futures of pending watches and "
     "closes the eventfd."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef weft_py_notifier_getset[] = {
    {"pending", (getter)weft_py_notifier_get_pending, NULL,
     "Watches registered and not yet drained.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject weft_py_notifier_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "weft._weft.Notifier",
    .tp_doc = "Notifier()\n--\n\nDelivers semaphore timepoints to one event loop "
              "through an eventfd (weft's asyncio support uses one per "
              "loop).",
    .tp_basicsize = sizeof(weft_py_notifier_t),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = weft_py_notifier_new,
    .tp_dealloc = (destructor)weft_py_notifier_dealloc,
    .tp_repr = (reprfunc)weft_py_notifier_repr,
    .tp_methods = weft_py_notifier_methods,
    .tp_getset = weft_py_notifier_getset,
};

int weft_py_notifier_setup(PyObject* module) {
  if (PyType_Ready(&weft_py_notifier_type) < 0) return -1;
  return PyModule_AddObjectRef(module, "Notifier",
                               (PyObject*)&weft_py_notifier_type);
}
