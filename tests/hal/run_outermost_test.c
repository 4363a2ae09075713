// Tests for weft_scheduled_op_run_outermost (src/hal/queue_scheduler.h),
// every driver's re-entry trampoline: an op readied while this thread runs
// another runs after it, from the outermost call's loop, in the order the
// ops were readied; the stack never holds two runs at once; the next
// outermost call on the thread starts afresh; and another trampoline's op
// (another driver's) runs at once inside.
// cmocka needs these first.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
// clang-format off
#include <cmocka.h>
// clang-format on

#include <string.h>

#include "hal/queue_scheduler.h"

enum { kOps = 15 };

static weft_scheduled_op_t g_ops[kOps];
static int g_order[kOps];
static int g_ran;
static int g_depth;
static int g_deepest;
static weft_scheduled_op_trampoline_t g_trampoline;

static int op_index(const weft_scheduled_op_t* op) { return (int)(op - g_ops); }

// Op i readies ops 2i + 1 and 2i + 2 (a binary tree of 15) while it runs.
static void run_tree(weft_scheduled_op_t* op) {
  ++g_depth;
  if (g_depth > g_deepest) g_deepest = g_depth;
  const int i = op_index(op);
  g_order[g_ran++] = i;
  for (int child = 2 * i + 1; child <= 2 * i + 2 && child < kOps; ++child) {
    weft_scheduled_op_run_outermost(&g_trampoline, &g_ops[child], run_tree);
  }
  --g_depth;
}

static void reset(void) {
  memset(g_ops, 0, sizeof(g_ops));
  memset(g_order, 0xff, sizeof(g_order));
  g_ran = 0;
  g_depth = 0;
  g_deepest = 0;
}

static void readied_ops_run_after_in_order(void** state) {
  (void)state;
  reset();
  weft_scheduled_op_run_outermost(&g_trampoline, &g_ops[0], run_tree);
  assert_int_equal(g_ran, kOps);
  // Breadth first: the order they were readied in.
  for (int i = 0; i < kOps; ++i) assert_int_equal(g_order[i], i);
  assert_int_equal(g_deepest, 1);
  // The next outermost call runs at once again.
  reset();
  weft_scheduled_op_run_outermost(&g_trampoline, &g_ops[kOps - 1], run_tree);
  assert_int_equal(g_ran, 1);
  assert_int_equal(g_order[0], kOps - 1);
}

// Another trampoline's op readied inside a run runs at once, nested: one
// driver's ops never wait behind another's.
static weft_scheduled_op_trampoline_t g_other;
static weft_scheduled_op_t g_other_op;
static int g_other_ran_at_depth;

static void run_other(weft_scheduled_op_t* op) {
  (void)op;
  g_other_ran_at_depth = g_depth;
}

static void run_and_ready_other(weft_scheduled_op_t* op) {
  ++g_depth;
  g_order[g_ran++] = op_index(op);
  weft_scheduled_op_run_outermost(&g_other, &g_other_op, run_other);
  --g_depth;
}

static void trampolines_are_independent(void** state) {
  (void)state;
  reset();
  g_other_ran_at_depth = -1;
  weft_scheduled_op_run_outermost(&g_trampoline, &g_ops[0],
                                  run_and_ready_other);
  assert_int_equal(g_ran, 1);
  assert_int_equal(g_other_ran_at_depth, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(readied_ops_run_after_in_order),
      cmocka_unit_test(trampolines_are_independent),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
