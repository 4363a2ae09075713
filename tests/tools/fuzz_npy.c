// libFuzzer target for the .npy reader (tools/npy): any bytes either read
// as an array or fail with one of the reader's documented codes
// (INVALID_ARGUMENT, DATA_LOSS, OUT_OF_RANGE, RESOURCE_EXHAUSTED) leaving
// the array zeroed; no byte past the input is read (AddressSanitizer). An
// array read must write and read back the same: dtype, shape and bytes.
// Any broken promise aborts.
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npy/npy.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

static void fuzz_npy_check(weft_status_t status, const char* what) {
  if (weft_status_is_ok(status)) return;
  fprintf(stderr, "%s: %s\n", what, weft_status_message(status));
  abort();
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const weft_allocator_t allocator = weft_allocator_system();
  weft_npy_array_t array;
  weft_status_t status =
      weft_npy_read_memory(data, size, "fuzz.npy", allocator, &array);
  if (!weft_status_is_ok(status)) {
    const weft_status_code_t code = weft_status_code(status);
    if (code != WEFT_STATUS_INVALID_ARGUMENT &&
        code != WEFT_STATUS_DATA_LOSS && code != WEFT_STATUS_OUT_OF_RANGE &&
        code != WEFT_STATUS_RESOURCE_EXHAUSTED) {
      fprintf(stderr, "refused bytes gave an undocumented code: %s\n",
              weft_status_message(status));
      abort();
    }
    if (array.data || array.rank || array.byte_length) {
      fprintf(stderr, "a refused image left the array set\n");
      abort();
    }
    weft_status_free(status);
    return 0;
  }
  void* bytes = NULL;
  size_t length = 0;
  fuzz_npy_check(weft_npy_write_memory(&array, allocator, &bytes, &length),
                 "writing an array read");
  weft_npy_array_t again;
  fuzz_npy_check(
      weft_npy_read_memory(bytes, length, "rewritten.npy", allocator, &again),
      "reading what was written");
  if (again.dtype != array.dtype || again.rank != array.rank ||
      memcmp(again.shape, array.shape, sizeof(array.shape)) != 0 ||
      again.byte_length != array.byte_length ||
      (array.byte_length &&
       memcmp(again.data, array.data, array.byte_length) != 0)) {
    fprintf(stderr, "write + read changed the array\n");
    abort();
  }
  weft_npy_array_deinitialize(&again);
  weft_allocator_free(allocator, bytes);
  weft_npy_array_deinitialize(&array);
  return 0;
}
