// weft-decode's latency summary (examples/decode/decode_latency.h) on
// sample sets whose figures are worked out by hand: none, one, unsorted
// ones, an outlier that the maximum and p99 must show, and 100 and 200
// samples where p99 is not the maximum.
// setjmp.h, stdarg.h and stddef.h must come before cmocka.h.
// clang-format off
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
// clang-format on

#include <math.h>
#include <stdint.h>

#include "decode_latency.h"

#define MS 1000000  // nanoseconds

// cmocka's assert_float_equal compares floats; these are doubles.
static void assert_ms(const char* field, double got, double want) {
  if (fabs(got - want) > 1e-9) {
    fail_msg("%s is %.9f ms, expected %.9f", field, got, want);
  }
}

static void assert_latency(int64_t* samples, uint32_t count, double min,
                           double mean, double p50, double p99, double max) {
  decode_latency_t latency;
  decode_latency_summarize(samples, count, &latency);
  assert_int_equal(latency.count, count);
  assert_ms("min", latency.min, min);
  assert_ms("mean", latency.mean, mean);
  assert_ms("p50", latency.p50, p50);
  assert_ms("p99", latency.p99, p99);
  assert_ms("max", latency.max, max);
}

static void no_samples(void** state) {
  (void)state;
  int64_t none[1] = {123};
  assert_latency(none, 0, 0, 0, 0, 0, 0);
}

static void one_sample(void** state) {
  (void)state;
  int64_t one[] = {5 * MS};
  assert_latency(one, 1, 5, 5, 5, 5, 5);
}

// Ten samples out of order: p50 is the 5th smallest (rank ceil(0.5 * 10)),
// p99 the 10th (rank ceil(9.9)), the largest; the samples come back sorted.
static void ten_unsorted(void** state) {
  (void)state;
  int64_t ten[] = {7 * MS, 1 * MS, 10 * MS, 3 * MS, 9 * MS,
                   2 * MS, 8 * MS, 4 * MS,  6 * MS, 5 * MS};
  assert_latency(ten, 10, 1, 5.5, 5, 10, 10);
  for (int i = 0; i < 10; ++i) assert_int_equal(ten[i], (i + 1) * MS);
}

// A slow first token among fast ones (what weft-decode sees: the first
// step pays for warming up): p99 of 8 is that token (rank ceil(7.92)),
// the mean 47 / 8.
static void outlier(void** state) {
  (void)state;
  int64_t eight[] = {40 * MS, 1 * MS, 1 * MS, 1 * MS,
                     1 * MS,  1 * MS, 1 * MS, 1 * MS};
  assert_latency(eight, 8, 1, 5.875, 1, 40, 40);
}

// Durations below a millisecond stay in the same unit: 0.25, 1.5, 0.75 ms.
static void fractions(void** state) {
  (void)state;
  int64_t three[] = {250000, 1500000, 750000};
  assert_latency(three, 3, 0.25, 2.5 / 3, 0.75, 1.5, 1.5);
}

// 1..100 ms and 1..200 ms, reversed: p99 is the 99th and the 198th sample.
static void hundreds(void** state) {
  (void)state;
  int64_t samples[200];
  for (int i = 0; i < 100; ++i) samples[i] = (int64_t)(100 - i) * MS;
  assert_latency(samples, 100, 1, 50.5, 50, 99, 100);
  for (int i = 0; i < 200; ++i) samples[i] = (int64_t)(200 - i) * MS;
  assert_latency(samples, 200, 1, 100.5, 100, 198, 200);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(no_samples), cmocka_unit_test(one_sample),
      cmocka_unit_test(ten_unsorted), cmocka_unit_test(outlier),
      cmocka_unit_test(fractions), cmocka_unit_test(hundreds),
  };
  return cmocka_run_group_tests_name("decode.latency", tests, NULL, NULL);
}
