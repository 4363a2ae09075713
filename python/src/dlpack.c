// DLPack for weft tensors (weft_python.h): a host-visible buffer's memory
// handed to another framework (NumPy, PyTorch, JAX) without a copy, as a
// "dltensor" capsule of DLPack's DLManagedTensor (Debian's libdlpack-dev).
// The capsule holds an export of the weft.Buffer (the buffer protocol's,
// which keeps it mapped and alive) until the consumer calls the deleter.
#include <string.h>

#include "weft_python.h"

#if !defined(WEFT_HAVE_DLPACK)

PyObject* weft_py_dlpack_capsule(PyObject* module, PyObject* args) {
  PyErr_SetString(PyExc_NotImplementedError,
                  "this weft was built without DLPack's header "
                  "(libdlpack-dev)");
  return NULL;
}

#else

#include <dlpack/dlpack.h>

typedef struct weft_py_dlpack_t {
  DLManagedTensor managed;
  Py_buffer export;  // of the weft.Buffer: mapped while this lives
  int64_t shape[WEFT_HAL_BUFFER_VIEW_MAX_RANK];
} weft_py_dlpack_t;

static void weft_py_dlpack_delete(DLManagedTensor* managed) {
  weft_py_dlpack_t* tensor = (weft_py_dlpack_t*)managed->manager_ctx;
  // A consumer may call this from any thread, with or without the GIL.
  PyGILState_STATE gil = PyGILState_Ensure();
  PyBuffer_Release(&tensor->export);
  PyGILState_Release(gil);
  PyMem_RawFree(tensor);
}

static void weft_py_dlpack_capsule_destructor(PyObject* capsule) {
  // Consumed capsules are renamed "used_dltensor"; the consumer owns those.
  if (!PyCapsule_IsValid(capsule, "dltensor")) return;
  DLManagedTensor* managed =
      (DLManagedTensor*)PyCapsule_GetPointer(capsule, "dltensor");
  if (managed && managed->deleter) managed->deleter(managed);
}

// The DLPack type of element type |name|, or false with ValueError.
static bool weft_py_dlpack_type(const char* name, DLDataType* out) {
  static const struct {
    const char* name;
    uint8_t code;
    uint8_t bits;
  } kTypes[] = {
      {"f16", kDLFloat, 16}, {"f32", kDLFloat, 32}, {"f64", kDLFloat, 64},
      {"i8", kDLInt, 8},     {"i16", kDLInt, 16},   {"i32", kDLInt, 32},
      {"i64", kDLInt, 64},   {"u8", kDLUInt, 8},    {"u16", kDLUInt, 16},
      {"u32", kDLUInt, 32},  {"u64", kDLUInt, 64},
  };
  for (size_t i = 0; i < sizeof(kTypes) / sizeof(kTypes[0]); ++i) {
    if (strcmp(kTypes[i].name, name) == 0) {
      *out = (DLDataType){kTypes[i].code, kTypes[i].bits, 1};
      return true;
    }
  }
  PyErr_Format(PyExc_ValueError, "'%s' is not an element type", name);
  return false;
}

// dlpack_capsule(buffer, element_type, shape, byte_offset) -> capsule
PyObject* weft_py_dlpack_capsule(PyObject* module, PyObject* args) {
  PyObject* buffer_object = NULL;
  const char* element_name = NULL;
  PyObject* shape = NULL;
  PyObject* offset_object = NULL;
  uint64_t byte_offset = 0;
  if (!PyArg_ParseTuple(args, "OsO!O:dlpack_capsule", &buffer_object,
                        &element_name, &PyTuple_Type, &shape,
                        &offset_object) ||
      !weft_py_u64(offset_object, "dlpack_capsule", "byte_offset",
                   &byte_offset)) {
    return NULL;
  }
  if (!weft_py_buffer_handle(buffer_object, "buffer")) return NULL;
  DLDataType dtype;
  if (!weft_py_dlpack_type(element_name, &dtype)) return NULL;
  const Py_ssize_t rank = PyTuple_GET_SIZE(shape);
  if (rank > WEFT_HAL_BUFFER_VIEW_MAX_RANK) {
    PyErr_Format(PyExc_ValueError, "rank %zd is past weft's limit of %d",
                 rank, WEFT_HAL_BUFFER_VIEW_MAX_RANK);
    return NULL;
  }
  weft_py_dlpack_t* tensor = PyMem_RawCalloc(1, sizeof(*tensor));
  if (!tensor) return PyErr_NoMemory();
  // The byte size, checked: a product past 2**64 would wrap into one that
  // fits. A zero dimension makes any size 0.
  uint64_t bytes = dtype.bits / 8;
  bool too_large = false;
  bool empty = false;
  for (Py_ssize_t i = 0; i < rank; ++i) {
    char name[32];
    snprintf(name, sizeof(name), "shape[%zd]", i);
    if (!weft_py_i64(PyTuple_GET_ITEM(shape, i), "dlpack_capsule", name,
                     &tensor->shape[i])) {
      PyMem_RawFree(tensor);
      return NULL;
    }
    if (tensor->shape[i] < 0) {
      PyErr_Format(PyExc_ValueError,
                   "dlpack_capsule() argument 'shape[%zd]' is %lld; a "
                   "dimension is >= 0",
                   i, (long long)tensor->shape[i]);
      PyMem_RawFree(tensor);
      return NULL;
    }
    const uint64_t dim = (uint64_t)tensor->shape[i];
    if (dim == 0) empty = true;
    if (dim && bytes > UINT64_MAX / dim) too_large = true;
    bytes *= dim;
  }
  if (empty) bytes = 0;
  if (too_large && !empty) {
    PyErr_SetString(PyExc_ValueError,
                    "dlpack_capsule(): the shape's byte size is past 2**64");
    PyMem_RawFree(tensor);
    return NULL;
  }
  // The export maps the buffer (BufferError where the host cannot).
  if (PyObject_GetBuffer(buffer_object, &tensor->export, PyBUF_WRITABLE) < 0) {
    PyMem_RawFree(tensor);
    return NULL;
  }
  if (byte_offset > (uint64_t)tensor->export.len ||
      bytes > (uint64_t)tensor->export.len - byte_offset) {
    PyErr_Format(PyExc_ValueError,
                 "%llu bytes at offset %llu do not fit the buffer's %zd",
                 (unsigned long long)bytes, byte_offset, tensor->export.len);
    PyBuffer_Release(&tensor->export);
    PyMem_RawFree(tensor);
    return NULL;
  }
  DLTensor* dl = &tensor->managed.dl_tensor;
  dl->data = tensor->export.buf;
  dl->device = (DLDevice){kDLCPU, 0};
  dl->ndim = (int)rank;
  dl->dtype = dtype;
  dl->shape = tensor->shape;
  dl->strides = NULL;  // C order
  dl->byte_offset = byte_offset;
  tensor->managed.manager_ctx = tensor;
  tensor->managed.deleter = weft_py_dlpack_delete;
  PyObject* capsule = PyCapsule_New(&tensor->managed, "dltensor",
                                    weft_py_dlpack_capsule_destructor);
  if (!capsule) weft_py_dlpack_delete(&tensor->managed);
  return capsule;
}

#endif  // WEFT_HAVE_DLPACK
