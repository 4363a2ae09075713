// weft decode example: GGUF metadata beyond the model's shape.
//
// decode_layout_read takes what the decoder needs from a GGUF file; the
// tokenizer needs more (tokenizer.ggml.*: vocabularies of tens of
// thousands of strings, their scores and types, merges). These read any
// metadata key whole, with every count and length checked against the
// file as decode_gguf.c checks the rest, and write a tokenizer's keys.
#ifndef WEFT_EXAMPLES_DECODE_DECODE_GGUF_H_
#define WEFT_EXAMPLES_DECODE_DECODE_GGUF_H_

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

// GGUF's value types (the spec's numbering).
typedef enum decode_gguf_type_e {
  DECODE_GGUF_UINT8 = 0,
  DECODE_GGUF_INT8 = 1,
  DECODE_GGUF_UINT16 = 2,
  DECODE_GGUF_INT16 = 3,
  DECODE_GGUF_UINT32 = 4,
  DECODE_GGUF_INT32 = 5,
  DECODE_GGUF_FLOAT32 = 6,
  DECODE_GGUF_BOOL = 7,
  DECODE_GGUF_STRING = 8,
  DECODE_GGUF_ARRAY = 9,
  DECODE_GGUF_UINT64 = 10,
  DECODE_GGUF_INT64 = 11,
  DECODE_GGUF_FLOAT64 = 12,
} decode_gguf_type_t;

// One metadata value, read whole. A scalar is an array of one: |count| is
// 1 and |element_type| its type; for an array |type| is DECODE_GGUF_ARRAY
// and |element_type| that of its elements (arrays of arrays are refused).
typedef struct decode_gguf_value_t {
  bool found;
  uint32_t type;
  uint32_t element_type;
  uint64_t count;
  // Numbers and booleans, converted (NULL for strings).
  double* numbers;
  // Strings: string i is |text| + |offsets|[i], NUL-terminated, of
  // |offsets|[i + 1] - |offsets|[i] - 1 bytes (it may hold NULs of its
  // own). NULL for numbers.
  char* text;
  uint64_t* offsets;
} decode_gguf_value_t;

// Reads the values of |key_count| |keys| from the GGUF v3 file at |path|
// into |out_values| (a key not there: found false). A value that is not
// one of GGUF's types, an array of arrays, or a count or length the file
// cannot hold is an error naming |path| and the key. Release each value
// with decode_gguf_value_deinitialize, also after an error.
weft_status_t decode_gguf_read_values(const char* path, uint32_t key_count,
                                      const char* const* keys,
                                      decode_gguf_value_t* out_values);
// The same over an open |file| of |file_size| bytes at any position.
weft_status_t decode_gguf_read_values_from(FILE* file, const char* path,
                                           uint64_t file_size,
                                           uint32_t key_count,
                                           const char* const* keys,
                                           decode_gguf_value_t* out_values);
void decode_gguf_value_deinitialize(decode_gguf_value_t* value);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_EXAMPLES_DECODE_DECODE_GGUF_H_
