// weft example: the MLP's data and its plain-C reference.
//
//   weft-example-mlp-reference generate DIR   writes x, w1, b1, w2, b2 and
//                                             expected (.npy) into DIR
//   weft-example-mlp-reference check Y.npy EXPECTED.npy
//                                             exit 0 when every element is
//                                             within 1e-5, 1 otherwise
//
// Sizes: x[64] -> 128 hidden (ReLU) -> 10 outputs. Values come from a fixed
// pseudo-random sequence, so every run (and machine) gets the same ones.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npy/npy.h"

enum { kInputs = 64, kHidden = 128, kOutputs = 10 };

// A value in [-1, 1) from a 32-bit linear congruential sequence.
static float next_value(uint32_t* state) {
  *state = *state * 1664525u + 1013904223u;
  return (float)(*state >> 8) / (float)(1u << 23) - 1.0f;
}

static int write_array(const char* dir, const char* name, uint32_t rank,
                       const uint64_t* shape, float* data) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s.npy", dir, name);
  weft_npy_array_t array;
  memset(&array, 0, sizeof(array));
  array.dtype = WEFT_NPY_DTYPE_F32;
  array.rank = rank;
  array.element_count = 1;
  for (uint32_t i = 0; i < rank; ++i) {
    array.shape[i] = shape[i];
    array.element_count *= shape[i];
  }
  array.byte_length = (size_t)array.element_count * sizeof(float);
  array.data = data;
  weft_status_t status = weft_npy_write_file(path, &array);
  if (!weft_status_is_ok(status)) {
    weft_status_fprint(stderr, status);
    weft_status_free(status);
    return 1;
  }
  return 0;
}

// y = act(w^T x + b), accumulated in the kernel's order.
static void dense(const float* x, const float* w, const float* b, float* y,
                  int k_count, int n_count, int relu) {
  for (int n = 0; n < n_count; ++n) {
    float sum = b[n];
    for (int k = 0; k < k_count; ++k) sum += x[k] * w[k * n_count + n];
    y[n] = (relu && sum < 0.0f) ? 0.0f : sum;
  }
}

static int generate(const char* dir) {
  static float x[kInputs], w1[kInputs * kHidden], b1[kHidden];
  static float w2[kHidden * kOutputs], b2[kOutputs], h[kHidden],
      y[kOutputs];
  uint32_t state = 12345u;
  for (int i = 0; i < kInputs; ++i) x[i] = next_value(&state);
  for (int i = 0; i < kInputs * kHidden; ++i) w1[i] = next_value(&state) / 8;
  for (int i = 0; i < kHidden; ++i) b1[i] = next_value(&state) / 4;
  for (int i = 0; i < kHidden * kOutputs; ++i) w2[i] = next_value(&state) / 8;
  for (int i = 0; i < kOutputs; ++i) b2[i] = next_value(&state) / 4;
  dense(x, w1, b1, h, kInputs, kHidden, 1);
  dense(h, w2, b2, y, kHidden, kOutputs, 0);
  const uint64_t x_shape[] = {kInputs};
  const uint64_t w1_shape[] = {kInputs, kHidden};
  const uint64_t b1_shape[] = {kHidden};
  const uint64_t w2_shape[] = {kHidden, kOutputs};
  const uint64_t y_shape[] = {kOutputs};
  return write_array(dir, "x", 1, x_shape, x) |
         write_array(dir, "w1", 2, w1_shape, w1) |
         write_array(dir, "b1", 1, b1_shape, b1) |
         write_array(dir, "w2", 2, w2_shape, w2) |
         write_array(dir, "b2", 1, y_shape, b2) |
         write_array(dir, "expected", 1, y_shape, y);
}

static int check(const char* actual_path, const char* expected_path) {
  weft_npy_array_t actual, expected;
  memset(&actual, 0, sizeof(actual));
  memset(&expected, 0, sizeof(expected));
  weft_status_t status =
      weft_npy_read_file(actual_path, weft_allocator_system(), &actual);
  if (weft_status_is_ok(status)) {
    status =
        weft_npy_read_file(expected_path, weft_allocator_system(), &expected);
  }
  int result = 1;
  if (!weft_status_is_ok(status)) {
    weft_status_fprint(stderr, status);
    weft_status_free(status);
  } else if (actual.dtype != WEFT_NPY_DTYPE_F32 ||
             actual.element_count != expected.element_count) {
    fprintf(stderr, "check: %s holds %llu %s elements, expected %llu f32\n",
            actual_path, (unsigned long long)actual.element_count,
            weft_npy_dtype_name(actual.dtype),
            (unsigned long long)expected.element_count);
  } else {
    const float* a = (const float*)actual.data;
    const float* e = (const float*)expected.data;
    double worst = 0;
    for (uint64_t i = 0; i < actual.element_count; ++i) {
      const double difference = fabs((double)a[i] - (double)e[i]);
      if (!(difference <= worst)) worst = difference;
    }
    printf("check: %llu outputs, largest difference %.3g (limit 1e-5)\n",
           (unsigned long long)actual.element_count, worst);
    result = worst <= 1e-5 ? 0 : 1;
  }
  weft_npy_array_deinitialize(&actual);
  weft_npy_array_deinitialize(&expected);
  return result;
}

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "generate") == 0) return generate(argv[2]);
  if (argc == 4 && strcmp(argv[1], "check") == 0) {
    return check(argv[2], argv[3]);
  }
  fprintf(stderr,
          "Usage: weft-example-mlp-reference generate DIR\n"
          "       weft-example-mlp-reference check Y.npy EXPECTED.npy\n");
  return 2;
}
