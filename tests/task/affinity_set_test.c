// Tests for affinity sets (src/task/affinity_set.h) and for pinning threads
// to a multi-word set (src/base/thread.h affinity_words).

#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/atomics.h"
#include "base/thread.h"
#include "task/affinity_set.h"

static const uint32_t kEdgeCpus[] = {0, 63, 64, 1023, 1024, 4095};
#define EDGE_COUNT (sizeof(kEdgeCpus) / sizeof(kEdgeCpus[0]))

// Asserts that |status| has |code| and that its message holds |needle|.
static void assert_status(weft_status_t status, weft_status_code_t code,
                          const char* needle) {
  if (weft_status_code(status) != code ||
      (needle && !strstr(weft_status_message(status), needle))) {
    weft_status_fprint(stderr, status);
    fail_msg("expected %s with '%s'", weft_status_code_string(code),
             needle ? needle : "");
  }
  weft_status_free(status);
}

static void test_empty(void** state) {
  (void)state;
  weft_affinity_set_t set;
  weft_affinity_set_initialize(weft_allocator_system(), &set);
  assert_int_equal(weft_affinity_set_count(&set), 0);
  assert_true(weft_affinity_set_is_empty(&set));
  assert_int_equal(weft_affinity_set_first(&set), WEFT_AFFINITY_SET_NONE);
  assert_int_equal(weft_affinity_set_last(&set), WEFT_AFFINITY_SET_NONE);
  assert_int_equal(weft_affinity_set_next(&set, 0), WEFT_AFFINITY_SET_NONE);
  assert_false(weft_affinity_set_test(&set, 0));
  assert_false(weft_affinity_set_test(&set, 100000));
  weft_affinity_set_clear(&set, 5000);  // no-op past the capacity
  char text[8] = "x";
  assert_int_equal(weft_affinity_set_format(&set, text, sizeof(text)), 0);
  assert_string_equal(text, "");
  weft_affinity_set_deinitialize(&set);
}

static void test_edge_bits(void** state) {
  (void)state;
  weft_affinity_set_t set;
  weft_affinity_set_initialize(weft_allocator_system(), &set);
  for (size_t i = 0; i < EDGE_COUNT; ++i) {
    assert_null(weft_affinity_set_set(&set, kEdgeCpus[i]));
    assert_int_equal(weft_affinity_set_count(&set), i + 1);
  }
  // Capacity covers the highest bit and no 64- or 1024-bit limit applies.
  assert_true(set.word_count >= 4096 / 64);
  for (size_t i = 0; i < EDGE_COUNT; ++i) {
    assert_true(weft_affinity_set_test(&set, kEdgeCpus[i]));
  }
  assert_false(weft_affinity_set_test(&set, 1));
  assert_false(weft_affinity_set_test(&set, 62));
  assert_false(weft_affinity_set_test(&set, 65));
  assert_false(weft_affinity_set_test(&set, 1022));
  assert_false(weft_affinity_set_test(&set, 1025));
  assert_false(weft_affinity_set_test(&set, 4094));
  assert_false(weft_affinity_set_test(&set, 4096));
  assert_int_equal(weft_affinity_set_first(&set), 0);
  assert_int_equal(weft_affinity_set_last(&set), 4095);

  // Iteration visits them in order.
  size_t visited = 0;
  for (uint32_t cpu = weft_affinity_set_first(&set);
       cpu != WEFT_AFFINITY_SET_NONE; cpu = weft_affinity_set_next(&set, cpu)) {
    assert_true(visited < EDGE_COUNT);
    assert_int_equal(cpu, kEdgeCpus[visited]);
    assert_int_equal(weft_affinity_set_nth(&set, (uint32_t)visited), cpu);
    ++visited;
  }
  assert_int_equal(visited, EDGE_COUNT);
  assert_int_equal(weft_affinity_set_nth(&set, EDGE_COUNT),
                   WEFT_AFFINITY_SET_NONE);
  assert_int_equal(weft_affinity_set_next(&set, 4095), WEFT_AFFINITY_SET_NONE);
  assert_int_equal(weft_affinity_set_next(&set, UINT32_MAX - 1),
                   WEFT_AFFINITY_SET_NONE);

  char text[64];
  size_t length = weft_affinity_set_format(&set, text, sizeof(text));
  assert_string_equal(text, "0,63-64,1023-1024,4095");
  assert_int_equal(length, strlen(text));

  // Clearing each edge bit leaves the others.
  for (size_t i = 0; i < EDGE_COUNT; ++i) {
    weft_affinity_set_clear(&set, kEdgeCpus[i]);
    assert_false(weft_affinity_set_test(&set, kEdgeCpus[i]));
    assert_int_equal(weft_affinity_set_count(&set), EDGE_COUNT - i - 1);
  }
  assert_true(weft_affinity_set_is_empty(&set));
  weft_affinity_set_deinitialize(&set);
}

static void test_ranges(void** state) {
  (void)state;
  weft_affinity_set_t set;
  weft_affinity_set_initialize(weft_allocator_system(), &set);
  assert_null(weft_affinity_set_set_range(&set, 60, 200));
  assert_int_equal(weft_affinity_set_count(&set), 141);
  assert_false(weft_affinity_set_test(&set, 59));
  assert_true(weft_affinity_set_test(&set, 60));
  assert_true(weft_affinity_set_test(&set, 128));
  assert_true(weft_affinity_set_test(&set, 200));
  assert_false(weft_affinity_set_test(&set, 201));
  assert_null(weft_affinity_set_set_range(&set, 0, 63));
  assert_null(weft_affinity_set_set_range(&set, 4095, 4095));
  assert_int_equal(weft_affinity_set_count(&set), 60 + 141 + 1);
  assert_int_equal(weft_affinity_set_nth(&set, 200), 200);
  assert_int_equal(weft_affinity_set_nth(&set, 201), 4095);
  assert_status(weft_affinity_set_set_range(&set, 5, 4),
                WEFT_STATUS_INVALID_ARGUMENT, "5-4");
  assert_status(weft_affinity_set_set(&set, WEFT_AFFINITY_SET_MAX_INDEX + 1),
                WEFT_STATUS_INVALID_ARGUMENT, "above the limit");
  weft_affinity_set_clear_all(&set);
  assert_true(weft_affinity_set_is_empty(&set));
  weft_affinity_set_deinitialize(&set);
}

static void test_set_operations(void** state) {
  (void)state;
  weft_allocator_t allocator = weft_allocator_system();
  weft_affinity_set_t a, b, c;
  weft_affinity_set_initialize(allocator, &a);
  weft_affinity_set_initialize(allocator, &b);
  weft_affinity_set_initialize(allocator, &c);
  assert_null(weft_affinity_set_parse("0-3,64,1023-1024", &a));
  assert_null(weft_affinity_set_parse("2-5,1024,4095", &b));

  // OR grows the target to the other's highest bit.
  assert_null(weft_affinity_set_copy(&c, &a));
  assert_true(weft_affinity_set_equal(&c, &a));
  assert_null(weft_affinity_set_or(&c, &b));
  char text[128];
  weft_affinity_set_format(&c, text, sizeof(text));
  assert_string_equal(text, "0-5,64,1023-1024,4095");

  // AND never allocates; a shorter other clears the rest.
  assert_null(weft_affinity_set_copy(&c, &a));
  weft_affinity_set_and(&c, &b);
  weft_affinity_set_format(&c, text, sizeof(text));
  assert_string_equal(text, "2-3,1024");
  assert_true(weft_affinity_set_intersects(&a, &b));
  assert_true(weft_affinity_set_is_subset(&c, &a));
  assert_true(weft_affinity_set_is_subset(&c, &b));
  assert_false(weft_affinity_set_is_subset(&a, &b));

  assert_null(weft_affinity_set_copy(&c, &a));
  weft_affinity_set_and_not(&c, &b);
  weft_affinity_set_format(&c, text, sizeof(text));
  assert_string_equal(text, "0-1,64,1023");

  // Equality ignores capacity: a set that grew and shrank equals a fresh one.
  weft_affinity_set_t d;
  weft_affinity_set_initialize(allocator, &d);
  assert_null(weft_affinity_set_set(&d, 4095));
  weft_affinity_set_clear(&d, 4095);
  assert_null(weft_affinity_set_set(&d, 1));
  weft_affinity_set_t e;
  weft_affinity_set_initialize(allocator, &e);
  assert_null(weft_affinity_set_set(&e, 1));
  assert_true(d.word_count > e.word_count);
  assert_true(weft_affinity_set_equal(&d, &e));
  assert_true(weft_affinity_set_equal(&e, &d));
  assert_null(weft_affinity_set_set(&e, 64));
  assert_false(weft_affinity_set_equal(&d, &e));
  weft_affinity_set_t empty;
  weft_affinity_set_initialize(allocator, &empty);
  assert_false(weft_affinity_set_intersects(&a, &empty));
  assert_true(weft_affinity_set_is_subset(&empty, &a));
  // Copying an empty set into a large one empties it.
  assert_null(weft_affinity_set_copy(&c, &empty));
  assert_true(weft_affinity_set_is_empty(&c));

  weft_affinity_set_deinitialize(&empty);
  weft_affinity_set_deinitialize(&e);
  weft_affinity_set_deinitialize(&d);
  weft_affinity_set_deinitialize(&c);
  weft_affinity_set_deinitialize(&b);
  weft_affinity_set_deinitialize(&a);
}

static void test_parse_format_round_trip(void** state) {
  (void)state;
  static const struct {
    const char* input;
    const char* formatted;
    uint32_t count;
  } kCases[] = {
      {"", "", 0},
      {"\n", "", 0},
      {"0", "0", 1},
      {"0-3,8,10-11", "0-3,8,10-11", 7},
      {"0-3,8,10-11\n", "0-3,8,10-11", 7},
      {" 1 , 2 - 4 ", "1-4", 4},
      {"5,4,3", "3-5", 3},
      {"0-1,1-2,2-3", "0-3", 4},
      {"63,64", "63-64", 2},
      {"0,63,64,1023,1024,4095", "0,63-64,1023-1024,4095", 6},
      {"0-4095", "0-4095", 4096},
      {"7-7", "7", 1},
  };
  weft_affinity_set_t set, again;
  weft_affinity_set_initialize(weft_allocator_system(), &set);
  weft_affinity_set_initialize(weft_allocator_system(), &again);
  for (size_t i = 0; i < sizeof(kCases) / sizeof(kCases[0]); ++i) {
    weft_status_t status = weft_affinity_set_parse(kCases[i].input, &set);
    if (!weft_status_is_ok(status)) {
      weft_status_fprint(stderr, status);
      fail_msg("parse '%s'", kCases[i].input);
    }
    assert_int_equal(weft_affinity_set_count(&set), kCases[i].count);
    char text[256];
    size_t length = weft_affinity_set_format(&set, text, sizeof(text));
    assert_string_equal(text, kCases[i].formatted);
    assert_int_equal(length, strlen(kCases[i].formatted));
    // And back.
    assert_null(weft_affinity_set_parse(text, &again));
    assert_true(weft_affinity_set_equal(&set, &again));
  }
  // Parsing replaces the previous contents.
  assert_null(weft_affinity_set_parse("4095", &set));
  assert_null(weft_affinity_set_parse("1", &set));
  assert_int_equal(weft_affinity_set_count(&set), 1);
  weft_affinity_set_deinitialize(&again);
  weft_affinity_set_deinitialize(&set);
}

static void test_format_truncates(void** state) {
  (void)state;
  weft_affinity_set_t set;
  weft_affinity_set_initialize(weft_allocator_system(), &set);
  assert_null(weft_affinity_set_parse("0-3,8,10-11,1000", &set));
  char text[8];
  memset(text, 'x', sizeof(text));
  size_t length = weft_affinity_set_format(&set, text, sizeof(text));
  assert_int_equal(length, strlen("0-3,8,10-11,1000"));
  assert_string_equal(text, "0-3,8,1");
  // A zero capacity only measures.
  assert_int_equal(weft_affinity_set_format(&set, NULL, 0), length);
  // Every bit of a wide alternating set formats and parses back.
  weft_affinity_set_t wide, back;
  weft_affinity_set_initialize(weft_allocator_system(), &wide);
  weft_affinity_set_initialize(weft_allocator_system(), &back);
  for (uint32_t cpu = 0; cpu < 5000; cpu += 2) {
    assert_null(weft_affinity_set_set(&wide, cpu));
  }
  size_t wide_length = weft_affinity_set_format(&wide, NULL, 0);
  char* wide_text = malloc(wide_length + 1);
  assert_non_null(wide_text);
  assert_int_equal(weft_affinity_set_format(&wide, wide_text, wide_length + 1),
                   wide_length);
  assert_int_equal(strlen(wide_text), wide_length);
  assert_null(weft_affinity_set_parse(wide_text, &back));
  assert_true(weft_affinity_set_equal(&wide, &back));
  assert_int_equal(weft_affinity_set_count(&back), 2500);
  free(wide_text);
  weft_affinity_set_deinitialize(&back);
  weft_affinity_set_deinitialize(&wide);
  weft_affinity_set_deinitialize(&set);
}

static void test_parse_errors(void** state) {
  (void)state;
  static const struct {
    const char* input;
    const char* needle;
  } kCases[] = {
      {"x", "expected a CPU number at position 0"},
      {"0-3x", "unexpected 'x' at position 3"},
      {"0,,1", "expected a CPU number at position 2"},
      {"0,", "expected a CPU number at position 2"},
      {",0", "expected a CPU number at position 0"},
      {"3-", "expected a CPU number at position 2"},
      {"5-3", "range 5-3 at position 0 ends before it starts"},
      {"1,7-2", "range 7-2 at position 2"},
      {"-1", "expected a CPU number at position 0"},
      {"0-3;8", "unexpected ';' at position 3"},
      {"1 2", "unexpected '2' at position 2"},
      {"99999999", "position 0 is above the limit"},
      {"0,18446744073709551617", "position 2 is above the limit"},
  };
  weft_affinity_set_t set;
  weft_affinity_set_initialize(weft_allocator_system(), &set);
  for (size_t i = 0; i < sizeof(kCases) / sizeof(kCases[0]); ++i) {
    assert_null(weft_affinity_set_parse("1-2", &set));
    weft_status_t status = weft_affinity_set_parse(kCases[i].input, &set);
    // The message quotes the input and says where.
    char quoted[64];
    snprintf(quoted, sizeof(quoted), "'%s'", kCases[i].input);
    if (!strstr(weft_status_message(status), quoted)) {
      weft_status_fprint(stderr, status);
      fail_msg("message does not quote %s", quoted);
    }
    assert_status(status, WEFT_STATUS_INVALID_ARGUMENT, kCases[i].needle);
    // On error the set is left empty.
    assert_true(weft_affinity_set_is_empty(&set));
  }
  weft_affinity_set_deinitialize(&set);
}

static void test_allocation_failure(void** state) {
  (void)state;
  weft_failing_allocator_t storage;
  weft_allocator_t allocator =
      weft_failing_allocator_initialize(weft_allocator_system(), 0, &storage);
  weft_affinity_set_t set;
  weft_affinity_set_initialize(allocator, &set);
  assert_status(weft_affinity_set_set(&set, 4095),
                WEFT_STATUS_RESOURCE_EXHAUSTED, NULL);
  assert_true(weft_affinity_set_is_empty(&set));
  assert_status(weft_affinity_set_parse("0-3", &set),
                WEFT_STATUS_RESOURCE_EXHAUSTED, NULL);
  weft_affinity_set_deinitialize(&set);
}

// Thread pinning with affinity words.

typedef struct probe_t {
  weft_atomic_int32_t cpu;
  weft_atomic_int32_t allowed_count;
} probe_t;

static int probe_main(void* user_data) {
  probe_t* probe = (probe_t*)user_data;
  cpu_set_t set;
  CPU_ZERO(&set);
  int32_t count = -1;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) count = CPU_COUNT(&set);
  weft_atomic_store(&probe->allowed_count, count, memory_order_relaxed);
  weft_atomic_store(&probe->cpu, sched_getcpu(), memory_order_relaxed);
  return 0;
}

static void test_thread_affinity_words(void** state) {
  (void)state;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  assert_int_equal(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
  // Pin to the highest allowed CPU through a multi-word set.
  int last = -1;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) last = cpu;
  }
  assert_true(last >= 0);
  uint64_t words[4096 / 64] = {0};
  assert_true(last < 4096 - 64);
  uint32_t word_count = (uint32_t)(last / 64) + 2;  // one spare empty word
  words[last / 64] |= UINT64_C(1) << (last % 64);
  probe_t probe = {0};
  weft_thread_params_t params = {
      .name = "pinned-set",
      .cpu = 0,  // ignored: the set wins
      .affinity_words = words,
      .affinity_word_count = word_count,
  };
  weft_thread_t* thread = NULL;
  assert_null(weft_thread_create(probe_main, &probe, &params,
                                 weft_allocator_system(), &thread));
  weft_thread_join(thread);
  assert_int_equal(weft_atomic_load(&probe.cpu, memory_order_relaxed), last);
  assert_int_equal(weft_atomic_load(&probe.allowed_count, memory_order_relaxed),
                   1);

  // Every allowed CPU at once: the thread may use all of them.
  memset(words, 0, sizeof(words));
  for (int cpu = 0; cpu <= last; ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) words[cpu / 64] |= UINT64_C(1) << (cpu % 64);
  }
  params.affinity_word_count = (uint32_t)(last / 64) + 1;
  assert_null(weft_thread_create(probe_main, &probe, &params,
                                 weft_allocator_system(), &thread));
  weft_thread_join(thread);
  assert_int_equal(weft_atomic_load(&probe.allowed_count, memory_order_relaxed),
                   CPU_COUNT(&allowed));

  // A set with no CPU is refused.
  memset(words, 0, sizeof(words));
  params.affinity_word_count = 3;
  assert_status(weft_thread_create(probe_main, &probe, &params,
                                   weft_allocator_system(), &thread),
                WEFT_STATUS_INVALID_ARGUMENT, "holds no CPU");
  assert_null(thread);

  // A CPU far past 1024 that the machine does not have is refused by the
  // kernel, with the set described.
  memset(words, 0, sizeof(words));
  words[4095 / 64] = UINT64_C(1) << (4095 % 64);
  params.affinity_word_count = 4096 / 64;
  weft_status_t status = weft_thread_create(probe_main, &probe, &params,
                                            weft_allocator_system(), &thread);
  if (weft_status_is_ok(status)) {
    // A machine with CPU 4095 allowed: fine.
    weft_thread_join(thread);
  } else {
    assert_status(status, WEFT_STATUS_INVALID_ARGUMENT, "cpu 4095");
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_empty),
      cmocka_unit_test(test_edge_bits),
      cmocka_unit_test(test_ranges),
      cmocka_unit_test(test_set_operations),
      cmocka_unit_test(test_parse_format_round_trip),
      cmocka_unit_test(test_format_truncates),
      cmocka_unit_test(test_parse_errors),
      cmocka_unit_test(test_allocation_failure),
      cmocka_unit_test(test_thread_affinity_words),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
