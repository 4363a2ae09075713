// weft._weft.Program: a VM module linked with the hal module on a device,
// whose exported functions Python calls (weft_python.h). The Python layer
// (weft/__init__.py, weft.Program) turns NumPy arrays into
// (bytes-like, element type name, shape) triples and back; this file makes
// buffer views of them on the device, checks them against the function's
// declared tensor types (weft_hal_check_arguments), invokes the function
// without the GIL (on a VM loop, in slices, so Ctrl-C reaches it) and
// reads the results back.
#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "weft_python.h"

#define WEFT_PY_PROGRAM_MAX_LIBRARIES 8
#define WEFT_PY_PROGRAM_MAX_VALUES 64

typedef struct weft_py_program_t {
  PyObject_HEAD
  PyObject* device_object;  // the weft.Device (kept alive)
  weft_device_t* device;    // retained
  weft_vm_module_t* hal;
  weft_vm_module_t* module;
  weft_vm_context_t* context;
  void* libraries[WEFT_PY_PROGRAM_MAX_LIBRARIES];  // dlopen handles
  uint32_t library_count;
  // The VM loop of call_async (made on first use) and the eventfd its
  // ready function writes.
  weft_vm_loop_t* loop;
  int loop_fd;
  // An idle VM loop for _call, kept between calls (NULL while a call has
  // it, or before the first); a call on another thread meanwhile makes
  // its own. Taken and given back with the GIL.
  weft_vm_loop_t* call_loop;
} weft_py_program_t;

static void weft_py_program_clear(weft_py_program_t* self) {
  // First, with the GIL: calls still on the VM loop end CANCELLED, their
  // done functions resolving their futures.
  if (self->loop) {
    weft_vm_loop_destroy(self->loop);
    self->loop = NULL;
    close(self->loop_fd);
  }
  self->loop_fd = -1;
  weft_vm_loop_t* call_loop = self->call_loop;
  self->call_loop = NULL;
  WEFT_PY_RELEASE_WITHOUT_GIL(weft_vm_loop_destroy(call_loop));
  weft_vm_context_t* context = self->context;
  weft_vm_module_t* module = self->module;
  weft_vm_module_t* hal = self->hal;
  weft_device_t* device = self->device;
  self->context = NULL;
  self->module = NULL;
  self->hal = NULL;
  self->device = NULL;
  WEFT_PY_RELEASE_WITHOUT_GIL(weft_vm_context_release(context);
                              weft_vm_module_release(module);
                              weft_vm_module_release(hal);
                              weft_device_release(device));
  for (uint32_t i = 0; i < self->library_count; ++i) {
    dlclose(self->libraries[i]);
  }
  self->library_count = 0;
  Py_CLEAR(self->device_object);
}

static void weft_py_program_dealloc(weft_py_program_t* self) {
  weft_py_program_clear(self);
  Py_TYPE(self)->tp_free((PyObject*)self);
}

// Opens kernel library |path| for hal.executable.static(dev, |name|).
static bool weft_py_program_open_library(weft_py_program_t* self,
                                         const char* name, const char* path,
                                         weft_hal_static_library_t* out) {
  if (self->library_count == WEFT_PY_PROGRAM_MAX_LIBRARIES) {
    PyErr_Format(PyExc_ValueError, "at most %d kernel libraries",
                 WEFT_PY_PROGRAM_MAX_LIBRARIES);
    return false;
  }
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* error = dlerror();
    weft_py_raise(WEFT_STATUS(NOT_FOUND, "kernels '%s' (%s): %s", name, path,
                              error ? error : "cannot load it"));
    return false;
  }
  void* symbol = dlsym(handle, WEFT_KERNEL_LIBRARY_QUERY_SYMBOL);
  if (!symbol) {
    dlclose(handle);
    weft_py_raise(WEFT_STATUS(NOT_FOUND, "kernels '%s' (%s) do not export %s",
                              name, path, WEFT_KERNEL_LIBRARY_QUERY_SYMBOL));
    return false;
  }
  self->libraries[self->library_count++] = handle;
  out->name = name;
  memcpy(&out->query, &symbol, sizeof(out->query));
  return true;
}

// Program(path, device, kernels={name: path})
static int weft_py_program_init(weft_py_program_t* self, PyObject* args,
                                PyObject* kwargs) {
  static char* keywords[] = {"path", "device", "kernels", NULL};
  PyObject* path_object = NULL;
  PyObject* device_object = NULL;
  PyObject* kernels = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&O|O:Program", keywords,
                                   PyUnicode_FSConverter, &path_object,
                                   &device_object, &kernels)) {
    return -1;
  }
  weft_py_program_clear(self);
  const char* path = PyBytes_AS_STRING(path_object);
  int result = -1;
  weft_device_t* device = weft_py_device_handle(device_object, "device");
  weft_hal_static_library_t libraries[WEFT_PY_PROGRAM_MAX_LIBRARIES];
  uint32_t library_count = 0;
  PyObject* items = NULL;
  if (device && kernels && kernels != Py_None) {
    if (!PyDict_Check(kernels)) {
      PyErr_Format(PyExc_TypeError,
                   "kernels must be a dict of name -> shared object path, "
                   "got %.100s",
                   Py_TYPE(kernels)->tp_name);
      device = NULL;
    } else {
      items = PyDict_Items(kernels);
      if (!items) device = NULL;
    }
  }
  for (Py_ssize_t i = 0; device && items && i < PyList_GET_SIZE(items); ++i) {
    PyObject* item = PyList_GET_ITEM(items, i);
    const char* name = PyUnicode_AsUTF8(PyTuple_GET_ITEM(item, 0));
    PyObject* library_path = NULL;
    if (!name || !PyUnicode_FSConverter(PyTuple_GET_ITEM(item, 1),
                                        &library_path)) {
      device = NULL;
      break;
    }
    const bool opened = weft_py_program_open_library(
        self, name, PyBytes_AS_STRING(library_path),
        &libraries[library_count]);
    Py_DECREF(library_path);
    if (!opened) {
      device = NULL;
      break;
    }
    ++library_count;
  }
  if (device) {
    weft_allocator_t allocator = weft_py_allocator();
    const weft_hal_module_options_t options = {
        .device = device,
        .static_library_count = library_count,
        .static_libraries = libraries,
    };
    weft_status_t status = weft_hal_module_create(&options, allocator,
                                                  &self->hal);
    if (weft_status_is_ok(status)) {
      status = weft_vm_module_load_file(path, allocator, &self->module);
    }
    if (weft_status_is_ok(status)) {
      weft_vm_module_t* modules[2] = {self->module, self->hal};
      status = weft_vm_context_create(modules, 2, allocator, &self->context);
    }
    if (weft_py_ok(status)) {
      weft_device_retain(device);
      self->device = device;
      self->device_object = Py_NewRef(device_object);
      result = 0;
    }
  }
  Py_XDECREF(items);
  Py_DECREF(path_object);
  if (result < 0) weft_py_program_clear(self);
  return result;
}

static bool weft_py_program_check_open(weft_py_program_t* self) {
  if (!self->context) {
    PyErr_SetString(PyExc_ValueError, "the program is closed");
    return false;
  }
  return true;
}

// The element type named |name| ("f32"), or NONE with ValueError raised.
static weft_hal_element_type_t weft_py_element_type(const char* name) {
  for (int type = 1; type < WEFT_HAL_ELEMENT_TYPE_COUNT_; ++type) {
    if (strcmp(weft_hal_element_type_name((weft_hal_element_type_t)type),
               name) == 0) {
      return (weft_hal_element_type_t)type;
    }
  }
  PyErr_Format(PyExc_ValueError, "'%s' is not an element type", name);
  return WEFT_HAL_ELEMENT_TYPE_NONE;
}

// Writes |length| bytes of |data| into |buffer| through the queue.
static weft_status_t weft_py_program_upload(weft_device_t* device,
                                            weft_buffer_t* buffer,
                                            const void* data,
                                            uint64_t length) {
  weft_semaphore_t* done = NULL;
  weft_status_t status =
      weft_semaphore_create(weft_py_allocator(), 0, &done);
  const uint64_t one = 1;
  if (weft_status_is_ok(status) && length) {
    status = weft_device_queue_update(
        device, WEFT_QUEUE_AFFINITY_ANY, weft_semaphore_list_empty(),
        (weft_semaphore_list_t){1, &done, (uint64_t*)&one}, data, buffer, 0,
        length);
    if (weft_status_is_ok(status)) {
      status = weft_semaphore_wait(done, 1, weft_timeout_infinite());
    }
  }
  weft_semaphore_release(done);
  return status;
}

// Makes the VM value for argument |index| of exported function |function|,
// |object|: a (data, element type, shape) triple becomes a buffer view on
// the device; an int or float becomes the signature's scalar type.
static bool weft_py_program_argument(weft_py_program_t* self,
                                     const char* function, PyObject* object,
                                     uint8_t type, uint32_t index,
                                     weft_vm_value_t* out) {
  memset(out, 0, sizeof(*out));
  out->type = (weft_vm_value_type_t)type;
  if (type == WEFT_VM_TYPE_REF) {
    if (object == Py_None) return true;  // null
    // A semaphore or a buffer as itself (the call's own reference).
    void* handle = NULL;
    if (PyObject_TypeCheck(object, &weft_py_semaphore_type)) {
      handle = weft_py_semaphore_handle(object, "argument");
    } else if (PyObject_TypeCheck(object, &weft_py_buffer_type)) {
      handle = weft_py_buffer_handle(object, "argument");
    } else {
      handle = (void*)1;  // neither: a tensor below
    }
    if (!handle) return false;
    if (handle != (void*)1) {
      if (!weft_py_ok(weft_hal_module_wrap(handle, &out->ref))) return false;
      weft_vm_ref_retain(out->ref);
      return true;
    }
    PyObject* data = NULL;
    const char* element_name = NULL;
    PyObject* shape = NULL;
    PyObject* offset_object = NULL;
    uint64_t byte_offset = 0;
    if (!PyTuple_Check(object) ||
        !PyArg_ParseTuple(object, "OsO|O", &data, &element_name, &shape,
                          &offset_object)) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError,
                   "%s() argument %u: a tensor (an array) goes here, got "
                   "%.100s",
                   function, index + 1, Py_TYPE(object)->tp_name);
      return false;
    }
    char name[48];
    snprintf(name, sizeof(name), "%u (its byte offset)", index + 1);
    if (offset_object &&
        !weft_py_u64(offset_object, function, name, &byte_offset)) {
      return false;
    }
    const weft_hal_element_type_t element = weft_py_element_type(element_name);
    if (!element) return false;
    int64_t dims[WEFT_HAL_BUFFER_VIEW_MAX_RANK];
    const Py_ssize_t rank = PyTuple_Check(shape) ? PyTuple_GET_SIZE(shape) : -1;
    if (rank < 0 || rank > WEFT_HAL_BUFFER_VIEW_MAX_RANK) {
      PyErr_Format(PyExc_ValueError, "argument %u: a shape of rank 0 to %d",
                   index + 1, WEFT_HAL_BUFFER_VIEW_MAX_RANK);
      return false;
    }
    for (Py_ssize_t i = 0; i < rank; ++i) {
      snprintf(name, sizeof(name), "%u (its shape[%zd])", index + 1, i);
      if (!weft_py_i64(PyTuple_GET_ITEM(shape, i), function, name,
                       &dims[i])) {
        return false;
      }
      if (dims[i] < 0) {
        PyErr_Format(PyExc_ValueError,
                     "%s() argument %u: shape[%zd] is %lld; a dimension is "
                     ">= 0",
                     function, index + 1, i, (long long)dims[i]);
        return false;
      }
    }
    weft_hal_buffer_view_t* view = NULL;
    if (PyObject_TypeCheck(data, &weft_py_buffer_type)) {
      // A weft.Tensor's buffer: viewed where it is, no copy.
      weft_buffer_t* buffer = weft_py_buffer_handle(data, "tensor");
      if (!buffer ||
          !weft_py_ok(weft_hal_buffer_view_create(
              buffer, byte_offset, element, (uint32_t)rank, dims,
              weft_py_allocator(), &view))) {
        return false;
      }
      out->ref = weft_hal_module_wrap_buffer_view(view);
      return true;
    }
    Py_buffer bytes;
    if (PyObject_GetBuffer(data, &bytes, PyBUF_C_CONTIGUOUS) < 0) return false;
    weft_buffer_t* buffer = NULL;
    weft_status_t status = weft_device_allocate_buffer(
        self->device, (weft_buffer_params_t){0}, (uint64_t)bytes.len,
        &buffer);
    if (weft_status_is_ok(status)) {
      Py_BEGIN_ALLOW_THREADS
      status = weft_py_program_upload(self->device, buffer, bytes.buf,
                                      (uint64_t)bytes.len);
      Py_END_ALLOW_THREADS
    }
    if (weft_status_is_ok(status)) {
      status = weft_hal_buffer_view_create(buffer, 0, element,
                                           (uint32_t)rank, dims,
                                           weft_py_allocator(), &view);
    }
    weft_buffer_release(buffer);
    PyBuffer_Release(&bytes);
    if (!weft_py_ok(status)) return false;
    out->ref = weft_hal_module_wrap_buffer_view(view);
    return true;
  }
  // A 0-d array (weft.Program makes NumPy scalars such) goes where a
  // scalar goes: its data, an int or a float to Python.
  if (PyTuple_Check(object) && PyTuple_GET_SIZE(object) >= 3 &&
      PyTuple_Check(PyTuple_GET_ITEM(object, 2)) &&
      PyTuple_GET_SIZE(PyTuple_GET_ITEM(object, 2)) == 0) {
    object = PyTuple_GET_ITEM(object, 0);
  }
  if (type == WEFT_VM_TYPE_I32 || type == WEFT_VM_TYPE_I64) {
    const weft_py_integer_type_t integer_type =
        type == WEFT_VM_TYPE_I32 ? WEFT_PY_INTEGER_I32 : WEFT_PY_INTEGER_I64;
    uint64_t bits = 0;
    if (weft_py_integer_try(object, integer_type, &bits)) {
      if (type == WEFT_VM_TYPE_I32) {
        out->i32 = (int32_t)(int64_t)bits;
      } else {
        out->i64 = (int64_t)bits;
      }
      return true;
    }
    char name[16];
    snprintf(name, sizeof(name), "%u", index + 1);
    return weft_py_integer_refuse(object, integer_type, function, name);
  }
  const double value = PyFloat_AsDouble(object);
  if (value == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "%s() argument %u: an %s goes here, got %R",
                 function, index + 1, type == WEFT_VM_TYPE_F32 ? "f32" : "f64",
                 object);
    return false;
  }
  if (type == WEFT_VM_TYPE_F32) {
    out->f32 = (float)value;
  } else {
    out->f64 = value;
  }
  return true;
}

// Reads buffer view |view| back: (bytearray, element type name, shape).
static PyObject* weft_py_program_view_result(weft_py_program_t* self,
                                             weft_vm_ref_t ref) {
  const weft_hal_buffer_view_t* view =
      weft_hal_module_unwrap(ref, &kWeftHalBufferViewType);
  if (!view) {
    if (weft_vm_ref_is_null(ref)) Py_RETURN_NONE;
    PyErr_Format(PyExc_TypeError, "a result is a %s ref, not a buffer view",
                 ref.type && ref.type->name ? ref.type->name : "?");
    return NULL;
  }
  const uint64_t length = weft_hal_buffer_view_byte_length(view);
  PyObject* data = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)length);
  if (!data) return NULL;
  weft_status_t status = WEFT_OK;
  if (length) {
    Py_BEGIN_ALLOW_THREADS
    // Through a host-visible copy, so any device's buffer reads back.
    weft_buffer_t* staging = NULL;
    weft_semaphore_t* done = NULL;
    const uint64_t one = 1;
    status = weft_device_allocate_buffer(self->device,
                                         (weft_buffer_params_t){0}, length,
                                         &staging);
    if (weft_status_is_ok(status)) {
      status = weft_semaphore_create(weft_py_allocator(), 0, &done);
    }
    if (weft_status_is_ok(status)) {
      status = weft_device_queue_copy(
          self->device, WEFT_QUEUE_AFFINITY_ANY, weft_semaphore_list_empty(),
          (weft_semaphore_list_t){1, &done, (uint64_t*)&one},
          weft_hal_buffer_view_buffer(view),
          weft_hal_buffer_view_byte_offset(view), staging, 0, length);
    }
    if (weft_status_is_ok(status)) {
      status = weft_semaphore_wait(done, 1, weft_timeout_infinite());
    }
    if (weft_status_is_ok(status)) {
      status = weft_buffer_map_read(staging, 0, PyByteArray_AS_STRING(data),
                                    length);
    }
    weft_semaphore_release(done);
    weft_buffer_release(staging);
    Py_END_ALLOW_THREADS
  }
  if (!weft_py_ok(status)) {
    Py_DECREF(data);
    return NULL;
  }
  const uint32_t rank = weft_hal_buffer_view_rank(view);
  PyObject* shape = PyTuple_New(rank);
  for (uint32_t i = 0; shape && i < rank; ++i) {
    PyTuple_SET_ITEM(shape, i,
                     PyLong_FromLongLong(weft_hal_buffer_view_dim(view, i)));
  }
  PyObject* result =
      shape ? Py_BuildValue(
                  "(NsN)", data,
                  weft_hal_element_type_name(
                      weft_hal_buffer_view_element_type(view)),
                  shape)
            : NULL;
  if (!result) {
    Py_XDECREF(shape);
    Py_DECREF(data);
  }
  return result;
}

static PyObject* weft_py_program_scalar_result(const weft_vm_value_t* value) {
  switch (value->type) {
    case WEFT_VM_TYPE_I32:
      return PyLong_FromLong(value->i32);
    case WEFT_VM_TYPE_I64:
      return PyLong_FromLongLong(value->i64);
    case WEFT_VM_TYPE_F32:
      return PyFloat_FromDouble(value->f32);
    default:
      return PyFloat_FromDouble(value->f64);
  }
}

// A call made ready: its function, the values made of the Python
// arguments (each ref the call's), and the declarations' check begun.
typedef struct weft_py_prepared_t {
  char qualified[512];
  weft_vm_module_t* module;
  uint32_t function;
  uint32_t counts[2];  // arguments, results
  uint8_t types[2 * WEFT_PY_PROGRAM_MAX_VALUES];
  weft_vm_value_t args[WEFT_PY_PROGRAM_MAX_VALUES];
  uint32_t made;
  weft_hal_tensor_check_t check;
} weft_py_prepared_t;

static void weft_py_prepared_free(weft_py_prepared_t* prepared) {
  if (!prepared) return;
  for (uint32_t i = 0; i < prepared->made; ++i) {
    if (prepared->args[i].type == WEFT_VM_TYPE_REF) {
      weft_vm_ref_release(prepared->args[i].ref);
    }
  }
  PyMem_Free(prepared);
}

// Reads the value types of |text|, a canonical signature ("(i32,
// r<hal.buffer_view>?)->(f32)": no spaces; each type i32, i64, f32, f64 or
// r, a ref with an optional <NAME> and '?').
static void weft_py_signature_types(const char* text, uint8_t* types,
                                    uint32_t counts[2]) {
  counts[0] = counts[1] = 0;
  uint32_t side = 0;
  const char* c = text;
  while (*c) {
    if (*c == '(' || *c == ',') {
      ++c;
      if (*c == ')') continue;
      uint8_t type = WEFT_VM_TYPE_REF;
      if (strncmp(c, "i32", 3) == 0) type = WEFT_VM_TYPE_I32;
      if (strncmp(c, "i64", 3) == 0) type = WEFT_VM_TYPE_I64;
      if (strncmp(c, "f32", 3) == 0) type = WEFT_VM_TYPE_F32;
      if (strncmp(c, "f64", 3) == 0) type = WEFT_VM_TYPE_F64;
      if (counts[side] < WEFT_PY_PROGRAM_MAX_VALUES) {
        types[side * WEFT_PY_PROGRAM_MAX_VALUES + counts[side]++] = type;
      }
      // Past the type (a ref's name may hold anything but '>').
      while (*c && *c != ',' && *c != ')') {
        if (*c == '<') {
          while (*c && *c != '>') ++c;
        }
        if (*c) ++c;
      }
    } else if (*c == ')') {
      ++c;
      if (c[0] == '-' && c[1] == '>') {
        side = 1;
        c += 2;
      }
    } else {
      ++c;
    }
  }
}

// Makes the call of exported function |name| with |sequence_object|'s
// arguments ready, checked against its declarations; NULL with the error
// raised.
static weft_py_prepared_t* weft_py_program_prepare(weft_py_program_t* self,
                                                   const char* name,
                                                   PyObject* sequence_object) {
  if (!weft_py_program_check_open(self)) return NULL;
  weft_py_prepared_t* prepared = PyMem_Calloc(1, sizeof(*prepared));
  if (!prepared) {
    PyErr_NoMemory();
    return NULL;
  }
  snprintf(prepared->qualified, sizeof(prepared->qualified), "%s.%s",
           weft_vm_module_name(self->module), name);
  if (!weft_py_ok(weft_vm_context_lookup(self->context, prepared->qualified,
                                         &prepared->module,
                                         &prepared->function))) {
    weft_py_prepared_free(prepared);
    return NULL;
  }
  char text[1024];
  weft_vm_module_function_signature_text(prepared->module, prepared->function,
                                         text, sizeof(text));
  weft_py_signature_types(text, prepared->types, prepared->counts);
  PyObject* sequence = PySequence_Fast(sequence_object, "args");
  if (!sequence) {
    weft_py_prepared_free(prepared);
    return NULL;
  }
  const Py_ssize_t given = PySequence_Fast_GET_SIZE(sequence);
  bool ok = (uint32_t)given == prepared->counts[0];
  if (!ok) {
    weft_py_raise(WEFT_STATUS(INVALID_ARGUMENT,
                              "%s takes %u arguments %s, %zd given", name,
                              prepared->counts[0], text, given));
  }
  for (uint32_t i = 0; ok && i < prepared->counts[0]; ++i) {
    ok = weft_py_program_argument(self, name,
                                  PySequence_Fast_GET_ITEM(sequence, i),
                                  prepared->types[i], i, &prepared->args[i]);
    if (ok) prepared->made = i + 1;
  }
  Py_DECREF(sequence);
  if (ok) {
    ok = weft_py_ok(weft_hal_check_arguments(
        prepared->module, prepared->function, prepared->args, prepared->made,
        &prepared->check));
  }
  if (!ok) {
    weft_py_prepared_free(prepared);
    return NULL;
  }
  return prepared;
}

// The Python list of |count| |results| of a call, once |status| (consumed)
// is OK and the results pass the declarations; NULL with the error raised.
// The results' refs are released either way.
static PyObject* weft_py_program_finish(weft_py_program_t* self,
                                        weft_py_prepared_t* prepared,
                                        weft_status_t status,
                                        weft_vm_value_t* results,
                                        uint32_t count) {
  if (weft_status_is_ok(status)) {
    status = weft_hal_check_results(&prepared->check, results, count);
  }
  PyObject* list = weft_py_ok(status) ? PyList_New(count) : NULL;
  for (uint32_t i = 0; list && i < count; ++i) {
    PyObject* item = results[i].type == WEFT_VM_TYPE_REF
                         ? weft_py_program_view_result(self, results[i].ref)
                         : weft_py_program_scalar_result(&results[i]);
    if (!item) {
      Py_CLEAR(list);
      break;
    }
    PyList_SET_ITEM(list, i, item);
  }
  for (uint32_t i = 0; results && i < count; ++i) {
    if (results[i].type == WEFT_VM_TYPE_REF) {
      weft_vm_ref_release(results[i].ref);
    }
  }
  return list;
}

// A _call's invocation on a VM loop of its own: what its done function
// (on the calling thread, inside weft_vm_loop_run, without the GIL) hands
// back: the status and the results, their refs now the call's.
typedef struct weft_py_call_t {
  weft_vm_loop_t* loop;
  bool ended;
  weft_status_t status;
  uint32_t result_count;
  weft_vm_value_t results[WEFT_PY_PROGRAM_MAX_VALUES];
} weft_py_call_t;

static void weft_py_program_call_done(void* user_data,
                                      weft_vm_loop_invocation_t* invocation,
                                      weft_status_t status,
                                      weft_vm_value_t* results,
                                      uint32_t result_count) {
  weft_py_call_t* call = (weft_py_call_t*)user_data;
  call->ended = true;
  call->status = status;
  call->result_count = result_count;
  if (result_count) {
    memcpy(call->results, results, result_count * sizeof(*results));
  }
}

// One slice of the call (weft_py_wait_in_slices): the loop runs it until
// it ends (OK) or |deadline| passes with it still waiting or running.
static weft_status_t weft_py_program_call_run(void* target,
                                              weft_time_t deadline) {
  return weft_vm_loop_run(((weft_py_call_t*)target)->loop, deadline);
}

// The loop for a call: the program's idle one, or a new one.
static weft_vm_loop_t* weft_py_program_take_call_loop(weft_py_program_t* self) {
  weft_vm_loop_t* loop = self->call_loop;
  self->call_loop = NULL;
  if (loop) return loop;
  // One invocation on it, so nothing to be fair to: long turns, as
  // weft_vm_invoke_sync runs them.
  weft_vm_loop_options_t options = {0};
  options.turn_budget = 1u << 20;
  if (!weft_py_ok(weft_vm_loop_create(options, weft_py_allocator(), &loop))) {
    return NULL;
  }
  return loop;
}

// Gives |loop| (idle) back to the program, or destroys it when the program
// already has one or was closed meanwhile.
static void weft_py_program_give_call_loop(weft_py_program_t* self,
                                           weft_vm_loop_t* loop) {
  if (!self->call_loop && self->context) {
    self->call_loop = loop;
    return;
  }
  WEFT_PY_RELEASE_WITHOUT_GIL(weft_vm_loop_destroy(loop));
}

// _call(name, args) -> list: calls exported function |name| with |args|
// (a sequence of tensors as triples, None, ints and floats) on this
// thread, without the GIL while it runs. The call runs on a VM loop in
// slices of weft_py_wait_in_slices, so a signal handler that raises
// (Ctrl-C's KeyboardInterrupt) ends it: the invocation is cancelled (a
// wait it is in ends; it ends CANCELLED at its next wait or turn), run to
// its end, its results released, and the handler's exception raised.
// Queue operations it already submitted are not withdrawn: they run once
// their waits are reached, or end with their device.
static PyObject* weft_py_program_call(weft_py_program_t* self,
                                      PyObject* call_args) {
  const char* name = NULL;
  PyObject* sequence_object = NULL;
  if (!PyArg_ParseTuple(call_args, "sO:_call", &name, &sequence_object)) {
    return NULL;
  }
  weft_py_prepared_t* prepared =
      weft_py_program_prepare(self, name, sequence_object);
  if (!prepared) return NULL;
  weft_py_call_t call;
  memset(&call, 0, sizeof(call));
  call.loop = weft_py_program_take_call_loop(self);
  if (!call.loop) {
    weft_py_prepared_free(prepared);
    return NULL;
  }
  PyObject* list = NULL;
  weft_vm_loop_invocation_t* invocation = NULL;
  weft_status_t status = weft_vm_loop_submit(
      call.loop, self->context, prepared->qualified, prepared->args,
      prepared->made, prepared->counts[1], weft_py_program_call_done, &call,
      &invocation);
  if (!weft_status_is_ok(status)) {
    weft_py_raise(status);  // |done| is never called for a refused submit
  } else {
    const bool ran = weft_py_wait_in_slices(weft_py_program_call_run, NULL,
                                            &call, WEFT_TIME_INFINITE_FUTURE,
                                            &status);
    if (!call.ended) {
      // Interrupted: the invocation ends before the loop is idle again.
      weft_vm_loop_cancel(call.loop, invocation);
      Py_BEGIN_ALLOW_THREADS
      weft_status_ignore(
          weft_vm_loop_run(call.loop, WEFT_TIME_INFINITE_FUTURE));
      Py_END_ALLOW_THREADS
    }
    if (ran && weft_status_is_ok(status)) {
      list = weft_py_program_finish(self, prepared, call.status, call.results,
                                    call.result_count);
    } else {
      // The handler's exception (or the loop's failure) stands; what the
      // invocation ended with is dropped.
      if (ran) weft_py_raise(status);
      const uint32_t count =
          weft_status_is_ok(call.status) ? call.result_count : 0;
      for (uint32_t i = 0; i < count; ++i) {
        if (call.results[i].type == WEFT_VM_TYPE_REF) {
          weft_vm_ref_release(call.results[i].ref);
        }
      }
      weft_status_free(call.status);
    }
  }
  weft_py_program_give_call_loop(self, call.loop);
  weft_py_prepared_free(prepared);
  return list;
}

//===----------------------------------------------------------------------===//
// Calls on the VM's loop, for asyncio (weft.Program.call_async)
//===----------------------------------------------------------------------===//

// An invocation on the program's VM loop: the future its results go to.
typedef struct weft_py_pending_call_t {
  weft_py_program_t* program;  // strong reference
  PyObject* future;            // strong reference
  weft_py_prepared_t* prepared;
} weft_py_pending_call_t;

// The VM loop's ready function (any thread): wakes the event loop.
static void weft_py_program_ready(void* user_data) {
  weft_py_program_t* self = (weft_py_program_t*)user_data;
  const uint64_t one = 1;
  ssize_t written;
  do {
    written = write(self->loop_fd, &one, sizeof(one));
  } while (written < 0 && errno == EINTR);
}

// The VM loop's done function: on the event loop's thread, inside _run
// (or _close), with the GIL.
static void weft_py_program_done(void* user_data,
                                 weft_vm_loop_invocation_t* invocation,
                                 weft_status_t status,
                                 weft_vm_value_t* results,
                                 uint32_t result_count) {
  weft_py_pending_call_t* pending = (weft_py_pending_call_t*)user_data;
  PyObject* list = weft_py_program_finish(pending->program, pending->prepared,
                                          status, results, result_count);
  // The call's error, taken before the future is asked anything.
  PyObject *type = NULL, *value = NULL, *traceback = NULL;
  if (!list) {
    PyErr_Fetch(&type, &value, &traceback);
    PyErr_NormalizeException(&type, &value, &traceback);
  }
  PyObject* done = PyObject_CallMethod(pending->future, "done", NULL);
  const int is_done = done ? PyObject_IsTrue(done) : 1;
  Py_XDECREF(done);
  PyObject* outcome = NULL;
  if (!is_done && list) {
    outcome = PyObject_CallMethod(pending->future, "set_result", "O", list);
  } else if (!is_done && value) {
    outcome =
        PyObject_CallMethod(pending->future, "set_exception", "O", value);
  }
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(traceback);
  if (!outcome && PyErr_Occurred()) {
    PyErr_WriteUnraisable(pending->future);
  }
  PyErr_Clear();
  Py_XDECREF(outcome);
  Py_XDECREF(list);
  weft_py_prepared_free(pending->prepared);
  Py_DECREF(pending->future);
  Py_DECREF((PyObject*)pending->program);
  PyMem_Free(pending);
}

// _loop_fd() -> int: the eventfd the event loop watches (the VM loop made
// on first use).
static PyObject* weft_py_program_loop_fd(weft_py_program_t* self,
                                         PyObject* unused) {
  if (!weft_py_program_check_open(self)) return NULL;
  if (!self->loop) {
    self->loop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (self->loop_fd < 0) return PyErr_SetFromErrno(PyExc_OSError);
    weft_vm_loop_options_t options = {0};
    options.ready_fn = weft_py_program_ready;
    options.ready_user_data = self;
    if (!weft_py_ok(weft_vm_loop_create(options, weft_py_allocator(),
                                        &self->loop))) {
      close(self->loop_fd);
      self->loop_fd = -1;
      return NULL;
    }
  }
  return PyLong_FromLong(self->loop_fd);
}

// _submit(name, args, future): queues the call on the VM loop; its results
// (or its error) go to |future| when _run runs it to the end.
static PyObject* weft_py_program_submit(weft_py_program_t* self,
                                        PyObject* call_args) {
  const char* name = NULL;
  PyObject* sequence_object = NULL;
  PyObject* future = NULL;
  if (!PyArg_ParseTuple(call_args, "sOO:_submit", &name, &sequence_object,
                        &future)) {
    return NULL;
  }
  if (!self->loop) {
    PyErr_SetString(PyExc_RuntimeError, "_loop_fd() first");
    return NULL;
  }
  weft_py_prepared_t* prepared =
      weft_py_program_prepare(self, name, sequence_object);
  if (!prepared) return NULL;
  weft_py_pending_call_t* pending = PyMem_Malloc(sizeof(*pending));
  if (!pending) {
    weft_py_prepared_free(prepared);
    return PyErr_NoMemory();
  }
  pending->program = (weft_py_program_t*)Py_NewRef((PyObject*)self);
  pending->future = Py_NewRef(future);
  pending->prepared = prepared;
  weft_status_t status = weft_vm_loop_submit(
      self->loop, self->context, prepared->qualified, prepared->args,
      prepared->made, prepared->counts[1], weft_py_program_done, pending,
      NULL);
  if (!weft_status_is_ok(status)) {
    // |done| is never called for a refused submit.
    weft_py_prepared_free(prepared);
    Py_DECREF(pending->future);
    Py_DECREF((PyObject*)pending->program);
    PyMem_Free(pending);
    return weft_py_raise(status);
  }
  Py_RETURN_NONE;
}

// _run() -> float or None: runs what is ready on the VM loop (done
// functions resolve futures); returns the seconds until the next
// deadline of a waiting call, or None.
static PyObject* weft_py_program_run(weft_py_program_t* self,
                                     PyObject* unused) {
  if (!self->loop) Py_RETURN_NONE;
  uint64_t count = 0;
  while (read(self->loop_fd, &count, sizeof(count)) < 0 && errno == EINTR) {
  }
  weft_time_t next = WEFT_TIME_INFINITE_FUTURE;
  if (!weft_py_ok(weft_vm_loop_run_ready(self->loop, &next))) return NULL;
  if (next == WEFT_TIME_INFINITE_FUTURE) Py_RETURN_NONE;
  const weft_time_t now = weft_time_now();
  return PyFloat_FromDouble(next > now ? (double)(next - now) / 1e9 : 0.0);
}

// functions() -> list[str]: the exported functions.
static PyObject* weft_py_program_functions(weft_py_program_t* self,
                                           PyObject* unused) {
  if (!weft_py_program_check_open(self)) return NULL;
  PyObject* list = PyList_New(0);
  const uint32_t count = weft_vm_module_function_count(self->module);
  for (uint32_t i = 0; list && i < count; ++i) {
    const char* name = weft_vm_module_function_name(self->module, i);
    char qualified[512];
    snprintf(qualified, sizeof(qualified), "%s.%s",
             weft_vm_module_name(self->module), name);
    weft_vm_module_t* found = NULL;
    uint32_t index = 0;
    weft_status_t status =
        weft_vm_context_lookup(self->context, qualified, &found, &index);
    if (!weft_status_is_ok(status)) {
      weft_status_free(status);  // not exported
      continue;
    }
    PyObject* item = PyUnicode_FromString(name);
    if (!item || PyList_Append(list, item) < 0) Py_CLEAR(list);
    Py_XDECREF(item);
  }
  return list;
}

static PyObject* weft_py_program_close(weft_py_program_t* self,
                                       PyObject* unused) {
  weft_py_program_clear(self);
  Py_RETURN_NONE;
}

static PyObject* weft_py_program_repr(weft_py_program_t* self) {
  if (!self->context) return PyUnicode_FromString("<weft.Program (closed)>");
  return PyUnicode_FromFormat("<weft.Program '%s' on '%s'>",
                              weft_vm_module_name(self->module),
                              weft_device_id(self->device));
}

static PyMethodDef weft_py_program_methods[] = {
    {"_call", (PyCFunction)weft_py_program_call, METH_VARARGS,
     "_call($self, name, args, /)\n--\n\nCalls exported function |name| "
     "and returns its results as a list: tensors "
     "as (data, element type, shape) triples (weft.Program converts NumPy "
     "arrays), checked against the function's declarations. A signal "
     "handler that raises (Ctrl-C) abandons the call: the invocation is "
     "cancelled and released, and its exception raised."},
    {"_loop_fd", (PyCFunction)weft_py_program_loop_fd, METH_NOARGS,
     "_loop_fd($self, /)\n--\n\nThe eventfd (an int) that becomes "
     "readable when a call on the program's VM loop can run "
     "(weft.Program.call_async)."},
    {"_submit", (PyCFunction)weft_py_program_submit, METH_VARARGS,
     "_submit($self, name, args, future, /)\n--\n\nQueues a call on the "
     "VM loop."},
    {"_run", (PyCFunction)weft_py_program_run, METH_NOARGS,
     "_run($self, /)\n--\n\nRuns what is ready on the VM loop; returns "
     "the seconds to the next deadline (a float), or None."},
    {"functions", (PyCFunction)weft_py_program_functions, METH_NOARGS,
     "functions($self, /)\n--\n\nThe names of the functions Python may "
     "call (those marked export), a list of str."},
    {"close", (PyCFunction)weft_py_program_close, METH_NOARGS,
     "close($self, /)\n--\n\nDrops the program, its context and its "
     "kernel libraries."},
    {NULL, NULL, 0, NULL},
};

PyTypeObject weft_py_program_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "weft._weft.Program",
    .tp_doc = "Program(path, device, kernels=None)\n--\n\nA VM module (.wvm or "
              ".wvmb) linked with the hal module on |device|; |kernels| maps "
              "the names hal.executable.static opens to kernel library "
              "paths. Use weft.Program.",
    .tp_basicsize = sizeof(weft_py_program_t),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)weft_py_program_init,
    .tp_dealloc = (destructor)weft_py_program_dealloc,
    .tp_repr = (reprfunc)weft_py_program_repr,
    .tp_methods = weft_py_program_methods,
};

int weft_py_program_setup(PyObject* module) {
  if (PyType_Ready(&weft_py_program_type) < 0) return -1;
  return PyModule_AddObjectRef(module, "Program",
                               (PyObject*)&weft_py_program_type);
}
