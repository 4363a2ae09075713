// Vectorcall arguments for the extension's hot methods (weft_python.h): the
// part of PyArg_ParseTupleAndKeywords they use, worded as it words its
// errors, without walking a format string or building a dict of keywords
// per call.
#include <string.h>

#include "weft_python.h"

// Interns |parameters|' names once (false with the error raised).
static bool weft_py_parameters_intern(weft_py_parameters_t* parameters,
                                      int count) {
  if (count == 0 || parameters->keys[0]) return true;
  for (int i = 0; i < count; ++i) {
    PyObject* key = PyUnicode_InternFromString(parameters->names[i]);
    if (!key) return false;
    parameters->keys[i] = key;  // kept for the life of the process
  }
  return true;
}

// The index of the parameter named |key| (a str), or -1.
static int weft_py_parameter_index(const weft_py_parameters_t* parameters,
                                   int count, PyObject* key) {
  for (int i = 0; i < count; ++i) {
    if (parameters->keys[i] == key) return i;
  }
  // A name built at run time (a ** dict's key) may not be interned.
  for (int i = 0; i < count; ++i) {
    if (PyUnicode_Compare(parameters->keys[i], key) == 0) return i;
  }
  return -1;
}

// PyArg's messages for too many arguments, given |count| parameters.
static bool weft_py_arguments_count_check(
    const weft_py_parameters_t* parameters, int count, Py_ssize_t nargs,
    Py_ssize_t nkwargs) {
  const char* function = parameters->function;
  if (nargs + nkwargs > count) {
    PyErr_Format(PyExc_TypeError,
                 "%s() takes at most %d %sargument%s (%zd given)", function,
                 count, nargs == 0 ? "keyword " : "", count == 1 ? "" : "s",
                 nargs + nkwargs);
    return false;
  }
  if (nargs > parameters->positional) {
    if (parameters->positional == 0) {
      PyErr_Format(PyExc_TypeError, "%s() takes no positional arguments",
                   function);
    } else {
      PyErr_Format(PyExc_TypeError,
                   "%s() takes %s %d positional argument%s (%zd given)",
                   function,
                   parameters->required < count ? "at most" : "exactly",
                   parameters->positional,
                   parameters->positional == 1 ? "" : "s", nargs);
    }
    return false;
  }
  return true;
}

bool weft_py_arguments_parse(weft_py_parameters_t* parameters,
                             PyObject* const* args, Py_ssize_t nargs,
                             PyObject* kwnames, PyObject** out) {
  int count = 0;
  while (parameters->names[count]) ++count;
  const Py_ssize_t nkwargs = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  if (nkwargs && !weft_py_parameters_intern(parameters, count)) return false;
  if (!weft_py_arguments_count_check(parameters, count, nargs, nkwargs)) {
    return false;
  }
  for (int i = 0; i < count; ++i) out[i] = i < nargs ? args[i] : NULL;
  // Keywords into their places; the first that names nothing, or a
  // parameter given by position, is reported after any missing argument
  // (PyArg's order). Vectorcall's keyword names are always str.
  Py_ssize_t bad_keyword = -1;
  int bad_index = -1;
  for (Py_ssize_t k = 0; k < nkwargs; ++k) {
    const int index = weft_py_parameter_index(parameters, count,
                                              PyTuple_GET_ITEM(kwnames, k));
    if (index >= nargs) {
      out[index] = args[nargs + k];
    } else if (bad_keyword < 0) {
      bad_keyword = k;
      bad_index = index;
    }
  }
  for (int i = 0; i < parameters->required; ++i) {
    if (!out[i]) {
      PyErr_Format(PyExc_TypeError,
                   "%s() missing required argument '%s' (pos %d)",
                   parameters->function, parameters->names[i], i + 1);
      return false;
    }
  }
  if (bad_keyword >= 0) {
    PyObject* key = PyTuple_GET_ITEM(kwnames, bad_keyword);
    if (bad_index < 0) {
      PyErr_Format(PyExc_TypeError,
                   "'%U' is an invalid keyword argument for %s()", key,
                   parameters->function);
    } else {
      PyErr_Format(PyExc_TypeError,
                   "argument for %s() given by name ('%s') and position (%d)",
                   parameters->function, parameters->names[bad_index],
                   bad_index + 1);
    }
    return false;
  }
  return true;
}

bool weft_py_argument_u64(const weft_py_parameters_t* parameters, int index,
                          PyObject* object, unsigned long long* out) {
  if (!object) return true;
  if (!PyLong_Check(object)) {
    PyErr_Format(PyExc_TypeError, "%s() argument %d must be int, not %.50s",
                 parameters->function, index + 1,
                 object == Py_None ? "None" : Py_TYPE(object)->tp_name);
    return false;
  }
  // Modulo 2**64, as PyArg's "K" takes it.
  const unsigned long long value = PyLong_AsUnsignedLongLongMask(object);
  if (value == (unsigned long long)-1 && PyErr_Occurred()) return false;
  *out = value;
  return true;
}

bool weft_py_argument_bytes(const weft_py_parameters_t* parameters, int index,
                            PyObject* object, Py_buffer* out) {
  // The exporter's own error where it has none to give.
  if (PyObject_GetBuffer(object, out, PyBUF_SIMPLE) < 0) return false;
  if (!PyBuffer_IsContiguous(out, 'C')) {
    PyBuffer_Release(out);
    PyErr_Format(PyExc_TypeError,
                 "%s() argument %d must be contiguous buffer, not %.50s",
                 parameters->function, index + 1, Py_TYPE(object)->tp_name);
    return false;
  }
  return true;
}
