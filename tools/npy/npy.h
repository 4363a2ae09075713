// weft: reading and writing NumPy .npy files (for weft-run and the tests).
//
// A .npy file is a magic string, a version, a header length, a Python dict
// literal {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
// padded with spaces to end in '\n', and then the array's bytes in C
// (row-major) order. This reader accepts header versions 1.0, 2.0 and 3.0
// and the twelve dtypes below, stored little-endian ('<'), with no byte
// order ('|') or in native order ('='); the writer writes version 1.0 (2.0
// for a header of 64 KiB or more, which a rank of at most
// WEFT_NPY_MAX_RANK never needs) with the data at a multiple of 64 bytes,
// as NumPy does. weft runs only on little-endian hosts, so the bytes are
// never swapped.
//
// Errors name the file (or the name given for a memory image) in quotes and
// the field at fault, and never read past the bytes given:
//  - INVALID_ARGUMENT: not a .npy file (bad magic), a version other than
//    1.0, 2.0 or 3.0, a header that is not the dict above (garbage, a
//    missing, repeated or unknown key, a value of the wrong type), Fortran
//    order, an unsupported dtype or a big-endian one, bytes left over after
//    the data; and bad arguments (NULL, an inconsistent array to write).
//  - DATA_LOSS: the file ends early: inside the magic, the version, the
//    header, or the data ("data is 40 bytes but shape (3, 4) of f32 needs
//    48").
//  - OUT_OF_RANGE: a shape that weft cannot hold: more than
//    WEFT_NPY_MAX_RANK dimensions, a dimension past INT64_MAX, or an
//    element count or byte length that overflows 64 bits or size_t.
//  - RESOURCE_EXHAUSTED: the allocator failed.
//  - Operating system errors (open, read, write) carry the errno's code
//    (src/base/os_error.h: NOT_FOUND, PERMISSION_DENIED, ...) and its text.
//
// NULL: pointer arguments are required unless the function's comment says
// "|x| may be NULL" (see "NULL arguments" in weft/status.h).
// Threading: every function is reentrant; an array is not synchronised.
#ifndef WEFT_TOOLS_NPY_NPY_H_
#define WEFT_TOOLS_NPY_NPY_H_

#include <stddef.h>
#include <stdint.h>

#include "weft/allocator.h"
#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

// The most dimensions an array may have.
#define WEFT_NPY_MAX_RANK 8

// The element types weft reads and writes.
typedef enum weft_npy_dtype_e {
  WEFT_NPY_DTYPE_F16 = 0,  // IEEE half, '<f2'
  WEFT_NPY_DTYPE_F32 = 1,  // '<f4'
  WEFT_NPY_DTYPE_F64 = 2,  // '<f8'
  WEFT_NPY_DTYPE_I8 = 3,   // '|i1'
  WEFT_NPY_DTYPE_I16 = 4,  // '<i2'
  WEFT_NPY_DTYPE_I32 = 5,  // '<i4'
  WEFT_NPY_DTYPE_I64 = 6,  // '<i8'
  WEFT_NPY_DTYPE_U8 = 7,   // '|u1'
  WEFT_NPY_DTYPE_U16 = 8,  // '<u2'
  WEFT_NPY_DTYPE_U32 = 9,  // '<u4'
  WEFT_NPY_DTYPE_U64 = 10,  // '<u8'
  WEFT_NPY_DTYPE_BOOL = 11,  // one byte, 0 or 1, '|b1'
  WEFT_NPY_DTYPE_COUNT_ = 12,
} weft_npy_dtype_t;

// Returns weft's name of |dtype| ("f32", "bool"), or "" for a value that is
// not a dtype.
const char* weft_npy_dtype_name(weft_npy_dtype_t dtype);

// Returns the size of one element of |dtype| in bytes (bool: 1), or 0 for a
// value that is not a dtype.
size_t weft_npy_dtype_size(weft_npy_dtype_t dtype);

// Returns the descr string the writer puts in a header for |dtype| ("<f4",
// "|b1", "|u1", "<f2"), or "" for a value that is not a dtype.
const char* weft_npy_dtype_descr(weft_npy_dtype_t dtype);

// Looks up the dtype called |name| (weft's name as weft_npy_dtype_name
// gives it, e.g. "f32"). INVALID_ARGUMENT naming |name| and listing the
// dtypes when there is none; *out_dtype is then WEFT_NPY_DTYPE_COUNT_.
weft_status_t weft_npy_dtype_from_name(const char* name,
                                       weft_npy_dtype_t* out_dtype);

// An n-dimensional array in C order. Caller-owned storage: filled by
// weft_npy_array_initialize or a reader, emptied by
// weft_npy_array_deinitialize. To write bytes the caller holds elsewhere,
// a caller may also fill the fields itself (allocator zeroed) and never
// deinitialize it: the writers read only dtype, rank, shape,
// element_count, byte_length and data.
typedef struct weft_npy_array_t {
  weft_npy_dtype_t dtype;
  // Number of dimensions, 0 (a scalar: one element) to WEFT_NPY_MAX_RANK.
  uint32_t rank;
  // shape[0 .. rank) are the dimensions, outermost first; the rest are 0.
  // Each is at most INT64_MAX (NumPy's limit).
  uint64_t shape[WEFT_NPY_MAX_RANK];
  // The product of the dimensions (1 at rank 0; 0 when one is 0).
  uint64_t element_count;
  // element_count * weft_npy_dtype_size(dtype).
  size_t byte_length;
  // The elements, little-endian, byte_length bytes; NULL when byte_length
  // is 0. Allocated with |allocator| and as aligned as it aligns.
  void* data;
  // What |data| was allocated with (zeroed when the array owns nothing).
  weft_allocator_t allocator;
} weft_npy_array_t;

// Initializes |out_array| to a zero-filled array of |dtype| with the |rank|
// dimensions in |shape|, its data allocated with |allocator|. |shape| may be
// NULL when |rank| is 0. INVALID_ARGUMENT for a bad dtype; OUT_OF_RANGE for
// a rank past WEFT_NPY_MAX_RANK, a dimension past INT64_MAX or a size that
// overflows. On failure *out_array is zeroed.
weft_status_t weft_npy_array_initialize(weft_npy_dtype_t dtype, uint32_t rank,
                                        const uint64_t* shape,
                                        weft_allocator_t allocator,
                                        weft_npy_array_t* out_array);

// Frees the data of |array| with its allocator and zeroes it. |array| may be
// NULL, and a zeroed array is a no-op, so it is safe after any failure.
void weft_npy_array_deinitialize(weft_npy_array_t* array);

// Formats the shape of |array| as NumPy prints it: "()", "(3,)", "(3, 4)".
// Writes at most |capacity| bytes, always NUL-terminated when |capacity| >
// 0, and returns |buffer|. WEFT_NPY_SHAPE_STRING_CAPACITY always suffices.
#define WEFT_NPY_SHAPE_STRING_CAPACITY (WEFT_NPY_MAX_RANK * 22 + 3)
const char* weft_npy_array_format_shape(const weft_npy_array_t* array,
                                        char* buffer, size_t capacity);

// Reads the .npy file at |path| into |out_array|, its data allocated with
// |allocator|. The data is read straight into the array (no second copy);
// a file that is not a regular file (a pipe) is read whole first. See the
// top of this header for the errors; messages name the file as '|path|'.
// On failure *out_array is zeroed.
weft_status_t weft_npy_read_file(const char* path, weft_allocator_t allocator,
                                 weft_npy_array_t* out_array);

// Reads the .npy image in |bytes| (|byte_length| bytes, which must be the
// whole image: nothing before it and nothing after the data) into
// |out_array|, copying the data into memory allocated with |allocator|.
// |name| stands for the image in messages ("'name': ..."). |bytes| may be
// NULL when |byte_length| is 0. On failure *out_array is zeroed.
weft_status_t weft_npy_read_memory(const void* bytes, size_t byte_length,
                                   const char* name,
                                   weft_allocator_t allocator,
                                   weft_npy_array_t* out_array);

// Writes |array| to |path| as a .npy file, creating or truncating it.
// INVALID_ARGUMENT when the array's fields disagree (element_count is not
// the product of the shape, byte_length is not element_count times the
// element size, data is NULL with bytes to write) or the dtype or rank is
// not one weft has. On a failure after the file was opened it may be left
// partly written.
weft_status_t weft_npy_write_file(const char* path,
                                  const weft_npy_array_t* array);

// Writes |array| as a .npy image into memory allocated with |allocator|;
// *out_bytes (free it with weft_allocator_free and the same allocator) and
// *out_byte_length receive it. Errors as weft_npy_write_file. On failure
// *out_bytes is NULL and *out_byte_length 0.
weft_status_t weft_npy_write_memory(const weft_npy_array_t* array,
                                    weft_allocator_t allocator,
                                    void** out_bytes, size_t* out_byte_length);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_TOOLS_NPY_NPY_H_
