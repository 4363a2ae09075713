// Tests for src/vm/loop: many invocations on one thread, each yielding on
// its waits and handed back by semaphores signalled from other threads;
// ALL and ANY; deadlines as values; failures that reach only the
// invocations awaiting them; cancellation; turns that keep a busy
// invocation from starving a ready one; memory back to where it started.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
// clang-format off
#include <cmocka.h>
// clang-format on

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/thread.h"
#include "vm/assembler.h"
#include "vm/bytecode.h"
#include "vm/module_impl.h"
#include "vm_test_modules.h"
#include "weft/vm/loop.h"

#define expect_ok vm_test_expect_ok
#define expect_error vm_test_expect_error

// An allocator that counts live blocks, to see memory come back.
typedef struct counting_t {
  atomic_long live;
  // Every allocation made, freed or not.
  atomic_long made;
} counting_t;

static weft_status_t counting_ctl(void* self, weft_allocator_command_t command,
                                  size_t byte_length, void** inout_ptr) {
  counting_t* counting = (counting_t*)self;
  void** ptr = inout_ptr;
  weft_allocator_t system = weft_allocator_system();
  void* before = *ptr;
  weft_status_t status =
      system.ctl(system.self, command, byte_length, inout_ptr);
  if (weft_status_is_ok(status)) {
    if (command == WEFT_ALLOCATOR_COMMAND_FREE && before) {
      atomic_fetch_sub(&counting->live, 1);
    } else if (*ptr && (command == WEFT_ALLOCATOR_COMMAND_MALLOC ||
                        command == WEFT_ALLOCATOR_COMMAND_CALLOC ||
                        (command == WEFT_ALLOCATOR_COMMAND_REALLOC &&
                         !before))) {
      atomic_fetch_add(&counting->live, 1);
      atomic_fetch_add(&counting->made, 1);
    }
  }
  return status;
}

// What the done functions saw.
typedef struct outcomes_t {
  int done;
  int ok;
  int failed;
  int32_t last_code;
  char last_message[1024];
  // The user_data of the invocations in the order they ended.
  intptr_t order[16];
} outcomes_t;

static void record_done(void* user_data, weft_vm_loop_invocation_t* invocation,
                        weft_status_t status, weft_vm_value_t* results,
                        uint32_t result_count) {
  outcomes_t* outcomes = *(outcomes_t**)user_data;
  intptr_t tag = ((intptr_t*)user_data)[1];
  if (outcomes->done < 16) outcomes->order[outcomes->done] = tag;
  ++outcomes->done;
  if (weft_status_is_ok(status)) {
    ++outcomes->ok;
    outcomes->last_code = result_count ? results[0].i32 : -1;
  } else {
    ++outcomes->failed;
    weft_status_format(status, outcomes->last_message,
                       sizeof(outcomes->last_message));
    weft_status_free(status);
  }
}

// user_data for record_done: the outcomes and a tag.
typedef struct tagged_t {
  outcomes_t* outcomes;
  intptr_t tag;
} tagged_t;

static weft_semaphore_t* new_semaphore(weft_allocator_t allocator) {
  weft_semaphore_t* semaphore = NULL;
  expect_ok(weft_semaphore_create(allocator, 0, &semaphore));
  return semaphore;
}

typedef struct signaller_t {
  weft_semaphore_t** semaphores;
  int count;
  bool fail_odd;
} signaller_t;

static int signaller_main(void* user_data) {
  signaller_t* signaller = (signaller_t*)user_data;
  // Backwards, so the loop sees them out of submission order.
  for (int i = signaller->count - 1; i >= 0; --i) {
    if (signaller->fail_odd && (i % 2)) {
      weft_semaphore_fail(signaller->semaphores[i],
                          WEFT_STATUS(DATA_LOSS, "producer %d died", i));
    } else {
      weft_status_ignore(weft_semaphore_signal(signaller->semaphores[i], 1));
    }
  }
  return 0;
}

// 10,000 invocations, each awaiting its own semaphore, all on this thread;
// another thread signals them while the loop runs.
static void ten_thousand_awaits(void** state) {
  enum { kCount = 10000 };
  counting_t counting = {0};
  weft_allocator_t allocator = {&counting, counting_ctl};
  weft_vm_module_t* m = vm_test_make_m(VM_TEST_AWAIT_SIGNATURE, "add");
  weft_vm_context_t* context = vm_test_make_context(m);
  weft_vm_loop_t* loop = NULL;
  expect_ok(weft_vm_loop_create((weft_vm_loop_options_t){0}, allocator, &loop));
  weft_semaphore_t** semaphores = calloc(kCount, sizeof(*semaphores));
  outcomes_t outcomes = {0};
  tagged_t tagged = {&outcomes, 0};
  const long baseline = atomic_load(&counting.live);
  for (int i = 0; i < kCount; ++i) {
    semaphores[i] = new_semaphore(weft_allocator_system());
    weft_vm_value_t args[3] = {vm_test_semaphore_value(semaphores[i]),
                               {.type = WEFT_VM_TYPE_I64, .i64 = 1},
                               {.type = WEFT_VM_TYPE_I64, .i64 = -1}};
    // Half through bytecode (m.wait calls t.await), half straight to t.
    expect_ok(weft_vm_loop_submit(loop, context, i % 2 ? "m.wait" : "t.await",
                                  args, 3, 1, record_done, &tagged, NULL));
  }
  signaller_t signaller = {semaphores, kCount, false};
  weft_thread_t* thread = NULL;
  expect_ok(weft_thread_create(signaller_main, &signaller, NULL,
                               weft_allocator_system(), &thread));
  expect_ok(weft_vm_loop_run(loop, weft_time_now() + 60ll * 1000000000));
  weft_thread_join(thread);
  assert_int_equal(outcomes.done, kCount);
  assert_int_equal(outcomes.ok, kCount);
  assert_int_equal(outcomes.last_code, 0);
  assert_int_equal(weft_vm_loop_live_count(loop), 0);
  // Every invocation's memory is back.
  assert_int_equal(atomic_load(&counting.live), baseline);
  for (int i = 0; i < kCount; ++i) weft_semaphore_release(semaphores[i]);
  free(semaphores);
  weft_vm_loop_destroy(loop);
  weft_vm_context_release(context);
  weft_vm_module_release(m);
  assert_int_equal(atomic_load(&counting.live), 0);
}

// A wait the loop finds met while it spins resumes the native call in
// place (the stack's wait_spin hook): no wait set and no native frame, so
// nothing is allocated between the submit and the end. Deterministic: both
// semaphores are signalled before the run, so the spin's first look sees
// them (t.await2 defers without looking).
static void a_wait_met_while_spinning_resumes_in_place(void** state) {
  static const char kText[] =
      "module w\n"
      "import t.await2 (r<semaphore>, i64, r<semaphore>, i64, i32) -> (i32)\n"
      "func @both(r<semaphore>, r<semaphore>) -> (i32) export\n"
      "  const.i64 s0, 1\n"
      "  const.i32 s1, 0\n"
      "  call.import t.await2(r0, s0, r1, s0, s1) -> (s2)\n"
      "  ret (s2)\n"
      "end\n";
  weft_vm_bytecode_t* bytecode = NULL;
  expect_ok(weft_vm_assemble("w.wvm", kText, strlen(kText),
                             weft_allocator_system(), &bytecode));
  weft_vm_module_t* w = NULL;
  expect_ok(
      weft_vm_module_create_bytecode(weft_allocator_system(), bytecode, &w));
  weft_vm_context_t* context = vm_test_make_context(w);
  // The spin budget is the process's policy (none on one CPU): set it.
  setenv("WEFT_SPIN_US", "20", 1);
  counting_t counting = {0};
  weft_allocator_t allocator = {&counting, counting_ctl};
  weft_vm_loop_t* loop = NULL;
  expect_ok(weft_vm_loop_create((weft_vm_loop_options_t){0}, allocator, &loop));
  unsetenv("WEFT_SPIN_US");
  weft_semaphore_t* a = new_semaphore(weft_allocator_system());
  weft_semaphore_t* b = new_semaphore(weft_allocator_system());
  expect_ok(weft_semaphore_signal(a, 1));
  expect_ok(weft_semaphore_signal(b, 1));
  outcomes_t outcomes = {0};
  tagged_t tagged = {&outcomes, 1};
  weft_vm_value_t args[2] = {vm_test_semaphore_value(a),
                             vm_test_semaphore_value(b)};
  const long live = atomic_load(&counting.live);
  expect_ok(weft_vm_loop_submit(loop, context, "w.both", args, 2, 1,
                                record_done, &tagged, NULL));
  const long made = atomic_load(&counting.made);
  expect_ok(weft_vm_loop_run(loop, WEFT_TIME_INFINITE_FUTURE));
  assert_int_equal(outcomes.ok, 1);
  assert_int_equal(outcomes.last_code, 0);
  assert_int_equal(atomic_load(&counting.made), made);
  // What the submit allocated is back too.
  assert_int_equal(atomic_load(&counting.live), live);
  weft_semaphore_release(a);
  weft_semaphore_release(b);
  weft_vm_loop_destroy(loop);
  weft_vm_context_release(context);
  weft_vm_module_release(w);
}

static void count_ready(void* user_data) {
  atomic_fetch_add((atomic_int*)user_data, 1);
}

// A host that waits on something else than weft_vm_loop_run (an event
// loop): ready_fn says when an invocation can run again, run_ready runs
// what can run without sleeping and says the next deadline.
static void run_ready_for_event_loops(void** state) {
  // A deadline this case cannot outlive (ctest stops it long before): what
  // is checked while it stands does not depend on how fast this thread runs.
  const int64_t kHour = 3600ll * 1000000000;
  atomic_int readied = 0;
  weft_vm_module_t* m = vm_test_make_m(VM_TEST_AWAIT_SIGNATURE, "add");
  weft_vm_context_t* context = vm_test_make_context(m);
  weft_vm_loop_options_t options = {0};
  options.ready_fn = count_ready;
  options.ready_user_data = &readied;
  weft_vm_loop_t* loop = NULL;
  expect_ok(weft_vm_loop_create(options, weft_allocator_system(), &loop));
  weft_semaphore_t* forever = new_semaphore(weft_allocator_system());
  weft_semaphore_t* timed = new_semaphore(weft_allocator_system());
  outcomes_t outcomes = {0};
  tagged_t first = {&outcomes, 1};
  tagged_t second = {&outcomes, 2};
  tagged_t third = {&outcomes, 3};
  // One waits without a deadline, one for an hour.
  weft_vm_value_t args[3] = {vm_test_semaphore_value(forever),
                             {.type = WEFT_VM_TYPE_I64, .i64 = 1},
                             {.type = WEFT_VM_TYPE_I64, .i64 = -1}};
  expect_ok(weft_vm_loop_submit(loop, context, "m.wait", args, 3, 1,
                                record_done, &first, NULL));
  args[0] = vm_test_semaphore_value(timed);
  args[2].i64 = kHour;
  const weft_time_t submitted = weft_time_now();
  weft_vm_loop_invocation_t* hour = NULL;
  expect_ok(weft_vm_loop_submit(loop, context, "m.wait", args, 3, 1,
                                record_done, &second, &hour));
  weft_time_t next = 0;
  expect_ok(weft_vm_loop_run_ready(loop, &next));
  // Both wait; nothing ran to the end, and the next deadline is the timed
  // one's.
  assert_int_equal(outcomes.done, 0);
  assert_int_equal(weft_vm_loop_live_count(loop), 2);
  assert_true(next >= submitted + kHour);
  assert_true(next < WEFT_TIME_INFINITE_FUTURE);
  assert_int_equal(atomic_load(&readied), 0);
  // A signal readies the first (ready_fn), run_ready ends it.
  expect_ok(weft_semaphore_signal(forever, 1));
  assert_int_equal(atomic_load(&readied), 1);
  expect_ok(weft_vm_loop_run_ready(loop, &next));
  assert_int_equal(outcomes.done, 1);
  assert_int_equal(outcomes.order[0], 1);
  // One for 1 ms: its deadline is the next, and past it run_ready ends it
  // with the deadline as its value (however late this thread gets there).
  args[2].i64 = 1000000;
  expect_ok(weft_vm_loop_submit(loop, context, "m.wait", args, 3, 1,
                                record_done, &third, NULL));
  expect_ok(weft_vm_loop_run_ready(loop, &next));
  assert_true(next < submitted + kHour);
  while (outcomes.done < 2) {
    while (weft_time_now() < next) {
      struct timespec pause = {0, 1000000};
      nanosleep(&pause, NULL);
    }
    expect_ok(weft_vm_loop_run_ready(loop, &next));
  }
  assert_int_equal(outcomes.done, 2);
  assert_int_equal(outcomes.order[1], 3);
  assert_int_equal(outcomes.ok, 2);
  assert_int_equal(outcomes.last_code, WEFT_STATUS_DEADLINE_EXCEEDED);
  assert_int_equal(weft_vm_loop_live_count(loop), 1);
  assert_true(next >= submitted + kHour);
  // Cancelled, the hour's wait ends too, and nothing is left to wait for.
  weft_vm_loop_cancel(loop, hour);
  expect_ok(weft_vm_loop_run_ready(loop, &next));
  assert_int_equal(outcomes.done, 3);
  assert_int_equal(outcomes.failed, 1);
  assert_non_null(strstr(outcomes.last_message, "CANCELLED"));
  assert_int_equal(weft_vm_loop_live_count(loop), 0);
  assert_true(next == WEFT_TIME_INFINITE_FUTURE);
  weft_semaphore_release(timed);
  weft_semaphore_release(forever);
  weft_vm_loop_destroy(loop);
  weft_vm_context_release(context);
  weft_vm_module_release(m);
}

// A failed semaphore fails only the invocations that await it, each with
// the original message and its VM stack.
static void failures_reach_only_their_awaiters(void** state) {
  enum { kCount = 8 };
  weft_vm_module_t* m = vm_test_make_m(VM_TEST_AWAIT_SIGNATURE, "add");
  weft_vm_context_t* context = vm_test_make_context(m);
  weft_vm_loop_t* loop = NULL;
  expect_ok(weft_vm_loop_create((weft_vm_loop_options_t){0},
                                weft_allocator_system(), &loop));
  weft_semaphore_t* semaphores[kCount];
  outcomes_t outcomes = {0};
  tagged_t tagged = {&outcomes, 0};
  for (int i = 0; i < kCount; ++i) {
    semaphores[i] = new_semaphore(weft_allocator_system());
    weft_vm_value_t args[3] = {vm_test_semaphore_value(semaphores[i]),
                               {.type = WEFT_VM_TYPE_I64, .i64 = 1},
                               {.type = WEFT_VM_TYPE_I64, .i64 = -1}};
    expect_ok(weft_vm_loop_submit(loop, context, "m.wait", args, 3, 1,
                                  record_done, &tagged, NULL));
  }
  signaller_t signaller = {semaphores, kCount, true};
  weft_thread_t* thread = NULL;
  expect_ok(weft_thread_create(signaller_main, &signaller, NULL,
                               weft_allocator_system(), &thread));
  expect_ok(weft_vm_loop_run(loop, weft_time_now() + 60ll * 1000000000));
  weft_thread_join(thread);
  assert_int_equal(outcomes.ok, kCount / 2);
  assert_int_equal(outcomes.failed, kCount / 2);
  assert_non_null(strstr(outcomes.last_message, "DATA_LOSS"));
  assert_non_null(strstr(outcomes.last_message, "died"));
  assert_non_null(
      strstr(outcomes.last_message, "VM stack: at t.await (native), at m.wait"));
  for (int i = 0; i < kCount; ++i) weft_semaphore_release(semaphores[i]);
  weft_vm_loop_destroy(loop);
  weft_vm_context_release(context);
  weft_vm_module_release(m);
}

// ALL waits for both semaphores, ANY for the first.
static void all_and_any(void** state) {
  weft_vm_module_t* m = vm_test_make_m(VM_TEST_AWAIT_SIGNATURE, "add");
  weft_vm_context_t* context = vm_test_make_context(m);
  weft_vm_loop_t* loop = NULL;
  expect_ok(weft_vm_loop_create((weft_vm_loop_options_t){0},
                                weft_allocator_system(), &loop));
  weft_semaphore_t* a = new_semaphore(weft_allocator_system());
  weft_semaphore_t* b = new_semaphore(weft_allocator_system());
  outcomes_t outcomes = {0};
  tagged_t all_tag = {&outcomes, 1};
  tagged_t any_tag = {&outcomes, 2};
  weft_vm_value_t args[5] = {vm_test_semaphore_value(a),
                             {.type = WEFT_VM_TYPE_I64, .i64 = 1},
                             vm_test_semaphore_value(b),
                             {.type = WEFT_VM_TYPE_I64, .i64 = 1},
                             {.type = WEFT_VM_TYPE_I32, .i32 = 0}};
  expect_ok(weft_vm_loop_submit(loop, context, "t.await2", args, 5, 1,
                                record_done, &all_tag, NULL));
  args[4].i32 = 1;
  expect_ok(weft_vm_loop_submit(loop, context, "t.await2", args, 5, 1,
                                record_done, &any_tag, NULL));
  // Nothing reached yet: both wait (a deadline in the past ends the run).
  expect_error(weft_vm_loop_run(loop, weft_time_now()),
               WEFT_STATUS_DEADLINE_EXCEEDED, "2 invocations");
  expect_ok(weft_semaphore_signal(a, 1));
  // ANY is done; ALL still waits for b.
  expect_error(weft_vm_loop_run(loop, weft_time_now() + 20 * 1000000),
               WEFT_STATUS_DEADLINE_EXCEEDED, "1 invocations");
  assert_int_equal(outcomes.done, 1);
  assert_int_equal(outcomes.order[0], 2);
  expect_ok(weft_semaphore_signal(b, 1));
  expect_ok(weft_vm_loop_run(loop, WEFT_TIME_INFINITE_FUTURE));
  assert_int_equal(outcomes.done, 2);
  assert_int_equal(outcomes.order[1], 1);
  assert_int_equal(outcomes.ok, 2);
  weft_semaphore_release(a);
  weft_semaphore_release(b);
  weft_vm_loop_destroy(loop);
  weft_vm_context_release(context);
  weft_vm_module_release(m);
}

// A deadline is a value the program sees; cancelling ends an invocation
// with CANCELLED and takes its wait off the semaphore.
static void deadlines_and_cancellation(void** state) {
  weft_vm_module_t* m = vm_test_make_m(VM_TEST_AWAIT_SIGNATURE, "add");
  weft_vm_context_t* context = vm_test_make_context(m);
  weft_vm_loop_t* loop = NULL;
  expect_ok(weft_vm_loop_create((weft_vm_loop_options_t){0},
                                weft_allocator_system(), &loop));
  weft_semaphore_t* semaphore = new_semaphore(weft_allocator_system());
  outcomes_t outcomes = {0};
  tagged_t tagged = {&outcomes, 0};
  weft_vm_value_t args[3] = {vm_test_semaphore_value(semaphore),
                             {.type = WEFT_VM_TYPE_I64, .i64 = 1},
                             {.type = WEFT_VM_TYPE_I64, .i64 = 2000000}};
  expect_ok(weft_vm_loop_submit(loop, context, "m.wait", args, 3, 1,
                                record_done, &tagged, NULL));
  expect_ok(weft_vm_loop_run(loop, WEFT_TIME_INFINITE_FUTURE));
  assert_int_equal(outcomes.ok, 1);
  assert_int_equal(outcomes.last_code, WEFT_STATUS_DEADLINE_EXCEEDED);
  // Waiting forever, then cancelled.
  args[2].i64 = -1;
  weft_vm_loop_invocation_t* invocation = NULL;
  expect_ok(weft_vm_loop_submit(loop, context, "m.wait", args, 3, 1,
                                record_done, &tagged, &invocation));
  expect_error(weft_vm_loop_run(loop, weft_time_now() + 1000000),
               WEFT_STATUS_DEADLINE_EXCEEDED, "1 invocations");
  weft_vm_loop_cancel(loop, invocation);
  expect_ok(weft_vm_loop_run(loop, WEFT_TIME_INFINITE_FUTURE));
  assert_int_equal(outcomes.failed, 1);
  assert_non_null(strstr(outcomes.last_message, "CANCELLED"));
  // Its wait is off the semaphore: signalling it runs nothing.
  expect_ok(weft_semaphore_signal(semaphore, 1));
  assert_int_equal(outcomes.done, 2);
  weft_semaphore_release(semaphore);
  weft_vm_loop_destroy(loop);
  weft_vm_context_release(context);
  weft_vm_module_release(m);
}

// Destroying a loop with invocations still waiting ends them with
// CANCELLED through their done functions.
static void destroy_cancels_the_rest(void** state) {
  weft_vm_module_t* m = vm_test_make_m(VM_TEST_AWAIT_SIGNATURE, "add");
  weft_vm_context_t* context = vm_test_make_context(m);
  weft_vm_loop_t* loop = NULL;
  expect_ok(weft_vm_loop_create((weft_vm_loop_options_t){0},
                                weft_allocator_system(), &loop));
  weft_semaphore_t* semaphore = new_semaphore(weft_allocator_system());
  outcomes_t outcomes = {0};
  tagged_t tagged = {&outcomes, 0};
  weft_vm_value_t args[3] = {vm_test_semaphore_value(semaphore),
                             {.type = WEFT_VM_TYPE_I64, .i64 = 1},
                             {.type = WEFT_VM_TYPE_I64, .i64 = -1}};
  for (int i = 0; i < 3; ++i) {
    expect_ok(weft_vm_loop_submit(loop, context, "m.wait", args, 3, 1,
                                  record_done, &tagged, NULL));
  }
  expect_error(weft_vm_loop_run(loop, weft_time_now()),
               WEFT_STATUS_DEADLINE_EXCEEDED, "3 invocations");
  weft_vm_loop_destroy(loop);
  assert_int_equal(outcomes.failed, 3);
  assert_non_null(strstr(outcomes.last_message, "CANCELLED"));
  weft_semaphore_release(semaphore);
  weft_vm_context_release(context);
  weft_vm_module_release(m);
}

// A busy invocation yields at the end of every turn, so one submitted
// after it finishes first.
static void turns_keep_a_busy_invocation_from_starving_others(void** state) {
  // count(n: i32) -> (i32): while (n) n -= 1; ret (n)
  static const weft_vm_instruction_t kCode[] = {
      {.op = WEFT_VM_OP_CONST_I32, .a = 1, .imm = 1},
      {.op = WEFT_VM_OP_SUB_I32, .a = 0, .b = 0, .c = 1},
      {.op = WEFT_VM_OP_BR_IF, .a = 0, .imm = 1},
      {.op = WEFT_VM_OP_RET, .imm = 0},
  };
  static const uint16_t kOperands[] = {0};
  static const uint8_t kTypes[] = {WEFT_VM_TYPE_I32, WEFT_VM_TYPE_I32};
  static const weft_vm_function_t kFunction = {
      "count", {1, 1, kTypes, NULL}, 2, 0, 0, 4, WEFT_VM_FUNCTION_FLAG_EXPORT};
  weft_vm_bytecode_t* bytecode = NULL;
  expect_ok(weft_allocator_malloc(weft_allocator_system(), sizeof(*bytecode),
                                  (void**)&bytecode));
  *bytecode = (weft_vm_bytecode_t){
      .name = "busy",
      .function_count = 1,
      .functions = &kFunction,
      .code_count = 4,
      .code = kCode,
      .operand_count = 1,
      .operands = kOperands,
  };
  weft_vm_module_t* module = NULL;
  expect_ok(weft_vm_module_create_bytecode(weft_allocator_system(), bytecode,
                                           &module));
  weft_vm_context_t* context = NULL;
  expect_ok(weft_vm_context_create(&module, 1, weft_allocator_system(),
                                   &context));
  weft_vm_loop_t* loop = NULL;
  weft_vm_loop_options_t options = {.turn_budget = 1000};
  expect_ok(weft_vm_loop_create(options, weft_allocator_system(), &loop));
  outcomes_t outcomes = {0};
  tagged_t busy_tag = {&outcomes, 1};
  tagged_t quick_tag = {&outcomes, 2};
  weft_vm_value_t busy = {.type = WEFT_VM_TYPE_I32, .i32 = 1000000};
  weft_vm_value_t quick = {.type = WEFT_VM_TYPE_I32, .i32 = 10};
  expect_ok(weft_vm_loop_submit(loop, context, "busy.count", &busy, 1, 1,
                                record_done, &busy_tag, NULL));
  expect_ok(weft_vm_loop_submit(loop, context, "busy.count", &quick, 1, 1,
                                record_done, &quick_tag, NULL));
  expect_ok(weft_vm_loop_run(loop, WEFT_TIME_INFINITE_FUTURE));
  assert_int_equal(outcomes.done, 2);
  assert_int_equal(outcomes.order[0], 2);
  assert_int_equal(outcomes.order[1], 1);
  assert_int_equal(outcomes.last_code, 0);
  weft_vm_loop_destroy(loop);
  weft_vm_context_release(context);
  weft_vm_module_release(module);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ten_thousand_awaits),
      cmocka_unit_test(a_wait_met_while_spinning_resumes_in_place),
      cmocka_unit_test(run_ready_for_event_loops),
      cmocka_unit_test(failures_reach_only_their_awaiters),
      cmocka_unit_test(all_and_any),
      cmocka_unit_test(deadlines_and_cancellation),
      cmocka_unit_test(destroy_cancels_the_rest),
      cmocka_unit_test(turns_keep_a_busy_invocation_from_starving_others),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
