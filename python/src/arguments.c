// Arguments (weft_python.h): the vectorcall arguments of the extension's
// hot methods (the part of PyArg_ParseTupleAndKeywords they use, worded as
// it words its errors, without walking a format string or building a dict
// of keywords per call), and the one conversion of integer arguments.
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
                          PyObject* object, uint64_t* out) {
  if (!object) return true;
  return weft_py_u64(object, parameters->function, parameters->names[index],
                     out);
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

//===----------------------------------------------------------------------===//
// Integer arguments
//===----------------------------------------------------------------------===//

// Each type's range and the words messages give it.
static const struct {
  int64_t min;
  uint64_t max;
  const char* name;  // _integer's name for it
  const char* noun;
  const char* range;
} kWeftPyIntegerTypes[WEFT_PY_INTEGER_TYPE_COUNT_] = {
    [WEFT_PY_INTEGER_U64] = {0, UINT64_MAX, "u64", "a u64", "[0, 2**64)"},
    [WEFT_PY_INTEGER_U32] = {0, UINT32_MAX, "u32", "a u32", "[0, 2**32)"},
    [WEFT_PY_INTEGER_I64] = {INT64_MIN, INT64_MAX, "i64", "an i64",
                             "[-2**63, 2**63)"},
    [WEFT_PY_INTEGER_I32] = {INT32_MIN, INT32_MAX, "i32", "an i32",
                             "[-2**31, 2**31)"},
    [WEFT_PY_INTEGER_WORD32] = {INT32_MIN, UINT32_MAX, "word32",
                                "a 32-bit word", "[-2**31, 2**32)"},
};

bool weft_py_integer_try(PyObject* object, weft_py_integer_type_t type,
                         uint64_t* out_bits) {
  if (type == WEFT_PY_INTEGER_U64 && PyLong_CheckExact(object)) {
    // The hot case (offsets, timeline values): CPython's own check
    // (OverflowError below 0 and from 2**64 on).
    const uint64_t bits = PyLong_AsUnsignedLongLong(object);
    if (bits == (uint64_t)-1 && PyErr_Occurred()) {
      PyErr_Clear();
      return false;
    }
    *out_bits = bits;
    return true;
  }
  PyObject* index = NULL;
  if (!PyLong_Check(object)) {
    // A float has no __index__: 1.5 is refused, not truncated.
    if (!PyIndex_Check(object)) return false;
    index = PyNumber_Index(object);
    if (!index) {
      PyErr_Clear();
      return false;
    }
    object = index;
  }
  const int64_t min = kWeftPyIntegerTypes[type].min;
  const uint64_t max = kWeftPyIntegerTypes[type].max;
  int overflow = 0;
  const long long value = PyLong_AsLongLongAndOverflow(object, &overflow);
  bool ok = false;
  uint64_t bits = 0;
  if (overflow == 0) {
    ok = !(value == -1 && PyErr_Occurred()) && value >= min &&
         (value < 0 || (uint64_t)value <= max);
    bits = (uint64_t)value;
  } else if (overflow > 0 && max > (uint64_t)INT64_MAX) {
    // Past int64: only a u64 has room (PyLong_AsUnsignedLongLong raises
    // OverflowError from 2**64 on).
    bits = PyLong_AsUnsignedLongLong(object);
    ok = !(bits == (uint64_t)-1 && PyErr_Occurred()) && bits <= max;
  }
  if (!ok) PyErr_Clear();
  Py_XDECREF(index);
  if (ok) *out_bits = bits;
  return ok;
}

bool weft_py_integer_refuse(PyObject* object, weft_py_integer_type_t type,
                            const char* function, const char* argument) {
  if (!PyLong_Check(object) && !PyIndex_Check(object)) {
    PyErr_Format(PyExc_TypeError,
                 "%s() argument '%s' must be int, not %.100s", function,
                 argument,
                 object == Py_None ? "None" : Py_TYPE(object)->tp_name);
    return false;
  }
  PyObject* index = PyNumber_Index(object);
  if (!index) return false;  // what its __index__ raised
  // An int past 4300 digits has no repr (CPython's limit on int to str).
  PyObject* text = PyObject_Repr(index);
  if (!text) {
    PyErr_Clear();
    text = PyUnicode_FromString("an int of more than 4300 digits");
  }
  Py_DECREF(index);
  if (!text) return false;
  PyErr_Format(PyExc_OverflowError,
               "%s() argument '%s' must be %s, an int in %s; got %U",
               function, argument, kWeftPyIntegerTypes[type].noun,
               kWeftPyIntegerTypes[type].range, text);
  Py_DECREF(text);
  return false;
}

bool weft_py_integer(PyObject* object, weft_py_integer_type_t type,
                     const char* function, const char* argument,
                     uint64_t* out_bits) {
  return weft_py_integer_try(object, type, out_bits) ||
         weft_py_integer_refuse(object, type, function, argument);
}

bool weft_py_length(PyObject* object, const char* function,
                    const char* argument, uint64_t* out) {
  if (!object || object == Py_None) {
    *out = WEFT_WHOLE_BUFFER;
    return true;
  }
  if (!weft_py_u64(object, function, argument, out)) return false;
  if (*out == WEFT_WHOLE_BUFFER) {
    PyErr_Format(PyExc_ValueError,
                 "%s() argument '%s' is 2**64 - 1, weft's \"to the end\" "
                 "(WEFT_WHOLE_BUFFER); pass None for that",
                 function, argument);
    return false;
  }
  return true;
}

PyObject* weft_py_integer_check(PyObject* module, PyObject* const* args,
                                Py_ssize_t nargs) {
  if (nargs != 4) {
    PyErr_Format(PyExc_TypeError,
                 "_integer() takes exactly 4 arguments (%zd given)", nargs);
    return NULL;
  }
  const char* type_name = PyUnicode_AsUTF8(args[1]);
  const char* function = type_name ? PyUnicode_AsUTF8(args[2]) : NULL;
  const char* argument = function ? PyUnicode_AsUTF8(args[3]) : NULL;
  if (!argument) return NULL;
  int type = 0;
  while (type < WEFT_PY_INTEGER_WORD32 &&
         strcmp(kWeftPyIntegerTypes[type].name, type_name) != 0) {
    ++type;
  }
  if (type == WEFT_PY_INTEGER_WORD32) {
    PyErr_Format(PyExc_ValueError,
                 "_integer(): type must be 'u64', 'u32', 'i64' or 'i32', "
                 "got '%s'",
                 type_name);
    return NULL;
  }
  uint64_t bits = 0;
  if (!weft_py_integer(args[0], (weft_py_integer_type_t)type, function,
                       argument, &bits)) {
    return NULL;
  }
  return type == WEFT_PY_INTEGER_U64 || type == WEFT_PY_INTEGER_U32
             ? PyLong_FromUnsignedLongLong(bits)
             : PyLong_FromLongLong((long long)bits);
}
