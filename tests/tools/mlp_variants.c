// Test helper: wrong inputs for the MLP example, made from the right ones.
//
//   mlp_variants DIR
//
// reads DIR/x.npy (f32, [K]) and DIR/w1.npy (f32, [K, N]), as
// weft-example-mlp-reference generate writes them, and writes beside them
//   x-f64.npy         x as float64
//   x-i32.npy         x as int32
//   x-2xK2.npy        x reshaped to [2, K/2]
//   x-long.npy        x with one element more
//   w1-transposed.npy w1 transposed, [N, K]
// for the tests that weft-run refuses each before calling the program.
#include <stdio.h>
#include <string.h>

#include "npy/npy.h"

// Reports |status| (consumed) and returns 1, or 0 when it is OK.
static int report(weft_status_t status) {
  if (weft_status_is_ok(status)) return 0;
  weft_status_fprint(stderr, status);
  weft_status_free(status);
  return 1;
}

// Writes DIR/|name|.npy: |rank| dimensions |shape| of |dtype|, element i
// being |source|'s element i (converted), or 0 past its end.
static int write_variant(const char* dir, const char* name,
                         const weft_npy_array_t* source, weft_npy_dtype_t dtype,
                         uint32_t rank, const uint64_t* shape) {
  weft_npy_array_t array;
  int failed = report(weft_npy_array_initialize(
      dtype, rank, shape, weft_allocator_system(), &array));
  const float* values = (const float*)source->data;
  for (uint64_t i = 0; !failed && i < array.element_count; ++i) {
    const float value = i < source->element_count ? values[i] : 0.0f;
    if (dtype == WEFT_NPY_DTYPE_F64) {
      ((double*)array.data)[i] = value;
    } else if (dtype == WEFT_NPY_DTYPE_I32) {
      ((int32_t*)array.data)[i] = (int32_t)(value * 100.0f);
    } else {
      ((float*)array.data)[i] = value;
    }
  }
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s.npy", dir, name);
  if (!failed) failed = report(weft_npy_write_file(path, &array));
  weft_npy_array_deinitialize(&array);
  return failed;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "Usage: mlp_variants DIR\n");
    return 2;
  }
  const char* dir = argv[1];
  char path[4096];
  weft_npy_array_t x, w1;
  memset(&x, 0, sizeof(x));
  memset(&w1, 0, sizeof(w1));
  snprintf(path, sizeof(path), "%s/x.npy", dir);
  int failed = report(weft_npy_read_file(path, weft_allocator_system(), &x));
  snprintf(path, sizeof(path), "%s/w1.npy", dir);
  if (!failed) {
    failed = report(weft_npy_read_file(path, weft_allocator_system(), &w1));
  }
  if (!failed && (x.dtype != WEFT_NPY_DTYPE_F32 || x.rank != 1 ||
                  x.shape[0] % 2 != 0 || w1.dtype != WEFT_NPY_DTYPE_F32 ||
                  w1.rank != 2)) {
    fprintf(stderr, "mlp_variants: x must be f32 [K] (K even), w1 f32 [K, N]\n");
    failed = 1;
  }
  if (!failed) {
    const uint64_t k = x.shape[0];
    const uint64_t reshaped[2] = {2, k / 2};
    const uint64_t longer[1] = {k + 1};
    failed = write_variant(dir, "x-f64", &x, WEFT_NPY_DTYPE_F64, 1, x.shape) |
             write_variant(dir, "x-i32", &x, WEFT_NPY_DTYPE_I32, 1, x.shape) |
             write_variant(dir, "x-2xK2", &x, WEFT_NPY_DTYPE_F32, 2, reshaped) |
             write_variant(dir, "x-long", &x, WEFT_NPY_DTYPE_F32, 1, longer);
  }
  if (!failed) {
    // w1 transposed: [N, K], element (n, k) = w1[k, n].
    const uint64_t k = w1.shape[0];
    const uint64_t n = w1.shape[1];
    const uint64_t shape[2] = {n, k};
    weft_npy_array_t transposed;
    failed = report(weft_npy_array_initialize(
        WEFT_NPY_DTYPE_F32, 2, shape, weft_allocator_system(), &transposed));
    for (uint64_t row = 0; !failed && row < n; ++row) {
      for (uint64_t column = 0; column < k; ++column) {
        ((float*)transposed.data)[row * k + column] =
            ((const float*)w1.data)[column * n + row];
      }
    }
    snprintf(path, sizeof(path), "%s/w1-transposed.npy", dir);
    if (!failed) failed = report(weft_npy_write_file(path, &transposed));
    weft_npy_array_deinitialize(&transposed);
  }
  weft_npy_array_deinitialize(&x);
  weft_npy_array_deinitialize(&w1);
  return failed;
}
