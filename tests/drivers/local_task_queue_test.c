// local-task queue tests: what the CTS cannot say driver-neutrally.
//  - the submit -> run -> signal path allocates nothing once warm;
//  - releasing the device cancels parked and ready ops with CANCELLED naming
//    the op, lets running work finish, and never hangs;
//  - queues are independent (a blocked queue does not stop another);
//  - the device options and properties.
// setjmp.h, stdarg.h and stddef.h must come before cmocka.h.
// clang-format off
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
// clang-format on

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/atomics.h"
#include "base/thread.h"
#include "cts.h"
#include "weft/weft.h"

#define TEN_SECONDS (10ll * 1000 * 1000 * 1000)

static weft_device_t* create_device(const char* device_string,
                                    weft_allocator_t allocator) {
  weft_device_t* device = NULL;
  WEFT_ASSERT_OK(weft_device_create(device_string, allocator, &device));
  return device;
}

//===----------------------------------------------------------------------===//
// A kernel library: "add_one" adds 1 to each u32 of its binding, 64 per
// workgroup.
//===----------------------------------------------------------------------===//

static int add_one(const weft_dispatch_state_t* dispatch,
                   const weft_workgroup_state_t* workgroup) {
  uint32_t* data = (uint32_t*)dispatch->binding_ptrs[0];
  size_t count = dispatch->binding_lengths[0] / sizeof(uint32_t);
  size_t begin = (size_t)workgroup->workgroup_id[0] * 64;
  for (size_t i = begin; i < begin + 64 && i < count; ++i) data[i] += 1;
  return 0;
}

// How long a kernel that waits for the test (below) waits before it gives
// up and fails its dispatch with kGaveUp: a broken case then fails with a
// message instead of hanging. Never reached when the case works: what it
// waits for is an event of the case, not the clock.
#define GIVE_UP_NS (60ll * 1000 * 1000 * 1000)
enum { kGaveUp = 99 };

// Set on the test's main thread: the kernels below tell the workgroups that
// ran there (a waiting host that assists) from the workers'.
static _Thread_local int g_on_host_thread;
static weft_atomic_int32_t g_host_workgroups;
// Signalled to 1 by the first workgroup that runs on the host thread.
static weft_semaphore_t* g_host_ran;

// "count_host": counts the workgroups that run on the host thread.
static int count_host(const weft_dispatch_state_t* dispatch,
                      const weft_workgroup_state_t* workgroup) {
  if (g_on_host_thread) {
    weft_atomic_fetch_add(&g_host_workgroups, 1, memory_order_relaxed);
  }
  return 0;
}

// "await_host": a workgroup on the host thread counts itself (the first
// signals g_host_ran); one on a worker waits until a workgroup has run on
// the host, so the dispatch cannot complete unless the waiting host ran
// part of it, however the threads were scheduled. kGaveUp when none came.
static int await_host(const weft_dispatch_state_t* dispatch,
                      const weft_workgroup_state_t* workgroup) {
  if (g_on_host_thread) {
    if (weft_atomic_fetch_add(&g_host_workgroups, 1, memory_order_relaxed) ==
        0) {
      weft_status_ignore(weft_semaphore_signal(g_host_ran, 1));
    }
    return 0;
  }
  weft_status_t status =
      weft_semaphore_wait(g_host_ran, 1, weft_timeout_relative(GIVE_UP_NS));
  return weft_status_consume_code(status) == WEFT_STATUS_OK ? 0 : kGaveUp;
}

// Opened (to 1) by the test; "hold" waits for it.
static weft_semaphore_t* g_hold_gate;
// Signalled to 1 by the first workgroup of "hold" to start.
static weft_semaphore_t* g_hold_started;
static weft_atomic_int32_t g_hold_workgroups;

// "hold": each workgroup waits until g_hold_gate opens (the first signals
// g_hold_started as it starts): a dispatch that is running for as long
// as the test needs. kGaveUp when the gate never opened.
static int hold(const weft_dispatch_state_t* dispatch,
                const weft_workgroup_state_t* workgroup) {
  if (weft_atomic_fetch_add(&g_hold_workgroups, 1, memory_order_relaxed) == 0) {
    weft_status_ignore(weft_semaphore_signal(g_hold_started, 1));
  }
  weft_status_t status =
      weft_semaphore_wait(g_hold_gate, 1, weft_timeout_relative(GIVE_UP_NS));
  return weft_status_consume_code(status) == WEFT_STATUS_OK ? 0 : kGaveUp;
}

static const weft_kernel_def_t kKernels[] = {
    {"add_one", add_one, 1, 0, {64, 1, 1}, 0},
    {"count_host", count_host, 0, 0, {1, 1, 1}, 0},
    {"await_host", await_host, 0, 0, {1, 1, 1}, 0},
    {"hold", hold, 0, 0, {1, 1, 1}, 0},
};

static const weft_kernel_library_t kLibrary = {
    WEFT_KERNEL_ABI_VERSION, "local_task_queue_test", 4, kKernels};

static const weft_kernel_library_t* query_library(uint32_t abi_version) {
  return abi_version == WEFT_KERNEL_ABI_VERSION ? &kLibrary : NULL;
}

//===----------------------------------------------------------------------===//
// Steady state
//===----------------------------------------------------------------------===//

// One round of every op kind that must not allocate: a fill ready at
// submit, a fill parked behind a barrier released by the host, a dispatch
// and a command buffer execution; |round| numbers the semaphore values.
static void run_round(weft_device_t* device, weft_semaphore_t* semaphore,
                      weft_semaphore_t* gate, weft_buffer_t* buffer,
                      weft_executable_t* executable,
                      weft_command_buffer_t* command_buffer, uint64_t round) {
  uint64_t base = round * 5;
  uint64_t values[5] = {base + 1, base + 2, base + 3, base + 4, base + 5};
  uint32_t pattern = (uint32_t)round;
  weft_queue_affinity_t any = WEFT_QUEUE_AFFINITY_ANY;
  WEFT_ASSERT_OK(weft_device_queue_fill(
      device, any, weft_semaphore_list_empty(),
      weft_cts_list1(&semaphore, &values[0]), buffer, 0, 256, &pattern, 4));
  WEFT_ASSERT_OK(weft_cts_wait(semaphore, values[0]));
  uint64_t gate_value = round + 1;
  WEFT_ASSERT_OK(
      weft_device_queue_barrier(device, any, weft_cts_list1(&gate, &gate_value),
                                weft_cts_list1(&semaphore, &values[1])));
  WEFT_ASSERT_OK(weft_device_queue_fill(
      device, any, weft_cts_list1(&semaphore, &values[1]),
      weft_cts_list1(&semaphore, &values[2]), buffer, 0, 256, &pattern, 4));
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, gate_value));
  WEFT_ASSERT_OK(weft_cts_wait(semaphore, values[2]));
  uint32_t workgroups[3] = {64, 1, 1};
  weft_buffer_ref_t binding =
      weft_make_buffer_ref(buffer, 0, WEFT_WHOLE_BUFFER);
  WEFT_ASSERT_OK(weft_device_queue_dispatch(
      device, any, weft_cts_list1(&semaphore, &values[2]),
      weft_cts_list1(&semaphore, &values[3]), executable, 0, workgroups, 0,
      NULL, 1, &binding));
  weft_binding_table_t no_table = {0, NULL};
  WEFT_ASSERT_OK(weft_device_queue_execute(
      device, any, weft_cts_list1(&semaphore, &values[3]),
      weft_cts_list1(&semaphore, &values[4]), command_buffer, no_table));
  WEFT_ASSERT_OK(weft_cts_wait(semaphore, values[4]));
}

static void steady_state_allocates_nothing(void** state) {
  // Static: the last command buffer reference may be dropped by a retiring
  // op after this function returned, and with it the device (which then
  // shuts down on a thread of its own, still using the allocator).
  static weft_failing_allocator_t counter;
  weft_allocator_t allocator =
      weft_failing_allocator_initialize(weft_allocator_system(), -1, &counter);
  weft_device_t* device = create_device("local-task?workers=2", allocator);
  weft_semaphore_t* semaphore = NULL;
  weft_semaphore_t* gate = NULL;
  weft_buffer_t* buffer = NULL;
  weft_executable_t* executable = NULL;
  weft_command_buffer_t* command_buffer = NULL;
  WEFT_ASSERT_OK(weft_device_create_semaphore(device, 0, &semaphore));
  WEFT_ASSERT_OK(weft_device_create_semaphore(device, 0, &gate));
  WEFT_ASSERT_OK(weft_device_allocate_buffer(device, (weft_buffer_params_t){0},
                                        64 * 64 * sizeof(uint32_t), &buffer));
  WEFT_ASSERT_OK(weft_device_create_executable(
      device, weft_executable_source_cpu_static(query_library), &executable));
  WEFT_ASSERT_OK(weft_command_buffer_create(
      device, WEFT_COMMAND_BUFFER_MODE_REUSABLE, WEFT_COMMAND_CATEGORY_ANY, 0,
      &command_buffer));
  uint32_t workgroups[3] = {64, 1, 1};
  weft_buffer_ref_t binding =
      weft_make_buffer_ref(buffer, 0, WEFT_WHOLE_BUFFER);
  WEFT_ASSERT_OK(weft_command_buffer_begin(command_buffer));
  WEFT_ASSERT_OK(weft_command_buffer_dispatch(
      command_buffer, executable, 0, workgroups, 0, NULL, 1, &binding));
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));

  uint64_t round = 0;
  for (; round < 200; ++round) {
    run_round(device, semaphore, gate, buffer, executable, command_buffer,
              round);
  }
  int64_t warm = __atomic_load_n(&counter.request_count, __ATOMIC_RELAXED);
  for (; round < 1200; ++round) {
    run_round(device, semaphore, gate, buffer, executable, command_buffer,
              round);
  }
  // 5000 more ops. Records and spill blocks are only added when more are in
  // flight at once than ever before (an op retires just after the signal the
  // host already saw, so that can still happen now and then), never per op.
  int64_t after = __atomic_load_n(&counter.request_count, __ATOMIC_RELAXED);
  if (after - warm > 8) {
    fail_msg("%lld allocations for 5000 ops after warm-up",
             (long long)(after - warm));
  }

  weft_command_buffer_release(command_buffer);
  weft_executable_release(executable);
  weft_buffer_release(buffer);
  weft_semaphore_release(gate);
  weft_semaphore_release(semaphore);
  weft_device_release(device);
}

//===----------------------------------------------------------------------===//
// Shutdown
//===----------------------------------------------------------------------===//

static void release_cancels_parked_ops(void** state) {
  weft_device_t* device =
      create_device("local-task?queues=2", weft_allocator_system());
  weft_semaphore_t* gate = NULL;
  weft_semaphore_t* done[4] = {NULL, NULL, NULL, NULL};
  WEFT_ASSERT_OK(weft_semaphore_create(weft_allocator_system(), 0, &gate));
  for (int i = 0; i < 4; ++i) {
    WEFT_ASSERT_OK(weft_semaphore_create(weft_allocator_system(), 0, &done[i]));
  }
  weft_buffer_t* buffer = NULL;
  WEFT_ASSERT_OK(weft_device_allocate_buffer(device, (weft_buffer_params_t){0},
                                             64, &buffer));
  uint64_t one = 1;
  uint32_t pattern = 7;
  // Two ops on each queue, all waiting on |gate|.
  for (int i = 0; i < 4; ++i) {
    weft_queue_affinity_t affinity = (weft_queue_affinity_t)1 << (i % 2);
    if (i < 2) {
      WEFT_ASSERT_OK(weft_device_queue_barrier(device, affinity,
                                               weft_cts_list1(&gate, &one),
                                               weft_cts_list1(&done[i], &one)));
    } else {
      WEFT_ASSERT_OK(weft_device_queue_fill(
          device, affinity, weft_cts_list1(&gate, &one),
          weft_cts_list1(&done[i], &one), buffer, 0, 64, &pattern, 4));
    }
  }
  weft_device_release(device);
  // Every signal failed with CANCELLED naming its op, before the gate.
  for (int i = 0; i < 4; ++i) {
    weft_cts_assert_status_contains(
        weft_semaphore_wait(done[i], 1, weft_timeout_immediate()),
        WEFT_STATUS_CANCELLED,
        "was cancelled: the device was released while it waited");
    char text[512];
    weft_status_t status =
        weft_semaphore_wait(done[i], 1, weft_timeout_immediate());
    weft_status_format(status, text, sizeof(text));
    weft_status_free(status);
    assert_non_null(strstr(text, i < 2 ? "queue_barrier (waiting for"
                                       : "queue_fill (waiting for"));
  }
  // The gate itself is untouched and still usable.
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  for (int i = 0; i < 4; ++i) weft_semaphore_release(done[i]);
  weft_semaphore_release(gate);
  weft_buffer_release(buffer);
}

// A host call that signals |started|, then blocks until |release| is
// signalled (GIVE_UP_NS at most), then signals normally.
typedef struct blocking_call_t {
  weft_semaphore_t* started;
  weft_semaphore_t* release;
} blocking_call_t;

static void blocking_call_initialize(blocking_call_t* call) {
  WEFT_ASSERT_OK(
      weft_semaphore_create(weft_allocator_system(), 0, &call->started));
  WEFT_ASSERT_OK(
      weft_semaphore_create(weft_allocator_system(), 0, &call->release));
}

static void blocking_call_deinitialize(blocking_call_t* call) {
  weft_semaphore_release(call->started);
  weft_semaphore_release(call->release);
}

static weft_status_t blocking_host_call(
    void* user_data, const uint64_t args[4],
    const weft_host_call_context_t* context) {
  blocking_call_t* call = (blocking_call_t*)user_data;
  weft_status_ignore(weft_semaphore_signal(call->started, 1));
  // Bounded, so a case that fails before releasing it still ends.
  weft_status_ignore(
      weft_semaphore_wait(call->release, 1, weft_timeout_relative(GIVE_UP_NS)));
  return WEFT_OK;
}

// What release_later_main waits for and then does.
typedef struct release_later_t {
  // Fails with CANCELLED once the device's release has begun: an op's
  // signal, the op parked on a semaphore nothing signals before then.
  weft_semaphore_t* cancelled;
  // Signalled then.
  weft_semaphore_t* release;
} release_later_t;

// Signals |release| once |cancelled| failed: while the device that runs
// the op waiting for |release| is being released, whatever the scheduling.
static int release_later_main(void* user_data) {
  release_later_t* later = (release_later_t*)user_data;
  weft_status_ignore(weft_semaphore_wait(later->cancelled, 1,
                                         weft_timeout_relative(GIVE_UP_NS)));
  weft_status_ignore(weft_semaphore_signal(later->release, 1));
  return 0;
}

static void start_release_later(release_later_t* later,
                                weft_thread_t** out_thread) {
  weft_thread_params_t params;
  memset(&params, 0, sizeof(params));
  params.name = "release-later";
  params.cpu = -1;
  WEFT_ASSERT_OK(weft_thread_create(release_later_main, later, &params,
                                    weft_allocator_system(), out_thread));
}

// A host call running when the device is released finishes and signals; an
// op waiting for it is cancelled. The call holds its queue's control
// process, so the waiting op is on the second queue, whose control process
// publishes the cancellation: that tells release_later_main the release
// has begun, and only then does the call return.
static void release_lets_running_work_finish(void** state) {
  weft_device_t* device =
      create_device("local-task?workers=2&queues=2", weft_allocator_system());
  weft_semaphore_t* first = NULL;
  weft_semaphore_t* second = NULL;
  WEFT_ASSERT_OK(weft_semaphore_create(weft_allocator_system(), 0, &first));
  WEFT_ASSERT_OK(weft_semaphore_create(weft_allocator_system(), 0, &second));
  blocking_call_t call;
  blocking_call_initialize(&call);
  uint64_t one = 1;
  WEFT_ASSERT_OK(weft_device_queue_host_call(
      device, WEFT_QUEUE_AFFINITY_ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&first, &one), blocking_host_call, &call, NULL,
      WEFT_HOST_CALL_FLAG_NONE));
  // Parked (on queue 1) behind the running call: cancelled by the release.
  WEFT_ASSERT_OK(weft_device_queue_barrier(
      device, 2, weft_cts_list1(&first, &one), weft_cts_list1(&second, &one)));
  WEFT_ASSERT_OK(weft_cts_wait(call.started, 1));
  release_later_t later = {second, call.release};
  weft_thread_t* thread = NULL;
  start_release_later(&later, &thread);
  // Blocks until the call returns; the call's own signal is published.
  weft_device_release(device);
  weft_thread_join(thread);
  WEFT_ASSERT_OK(weft_semaphore_wait(first, 1, weft_timeout_immediate()));
  weft_cts_assert_status_contains(
      weft_semaphore_wait(second, 1, weft_timeout_immediate()),
      WEFT_STATUS_CANCELLED, "queue_barrier");
  blocking_call_deinitialize(&call);
  weft_semaphore_release(first);
  weft_semaphore_release(second);
}

// A dispatch running when the device is released runs to its end (device.h:
// ops already running finish), and one queued behind it never starts. The
// first holds two workers (two workgroups) until the release has begun,
// which a barrier on queue 1 parked on a semaphore nobody signals tells
// (the third worker publishes its cancellation): so both are known, with
// no timing.
static void release_lets_running_dispatch_finish(void** state) {
  // assist=0: this thread's waits must not run a workgroup of "hold".
  weft_device_t* device = create_device(
      "local-task?workers=3&queues=2&assist=0", weft_allocator_system());
  weft_executable_t* executable = NULL;
  WEFT_ASSERT_OK(weft_device_create_executable(
      device, weft_executable_source_cpu_static(query_library), &executable));
  weft_semaphore_t* first = NULL;
  weft_semaphore_t* second = NULL;
  weft_semaphore_t* never = NULL;
  weft_semaphore_t* parked = NULL;
  WEFT_ASSERT_OK(weft_semaphore_create(weft_allocator_system(), 0, &first));
  WEFT_ASSERT_OK(weft_semaphore_create(weft_allocator_system(), 0, &second));
  WEFT_ASSERT_OK(weft_semaphore_create(weft_allocator_system(), 0, &never));
  WEFT_ASSERT_OK(weft_semaphore_create(weft_allocator_system(), 0, &parked));
  WEFT_ASSERT_OK(
      weft_semaphore_create(weft_allocator_system(), 0, &g_hold_gate));
  WEFT_ASSERT_OK(
      weft_semaphore_create(weft_allocator_system(), 0, &g_hold_started));
  weft_atomic_store(&g_hold_workgroups, 0, memory_order_relaxed);
  const uint32_t workgroups[3] = {2, 1, 1};
  const uint32_t hold_kernel = weft_cts_kernel_ordinal(executable, "hold");
  uint64_t one = 1;
  WEFT_ASSERT_OK(weft_device_queue_barrier(
      device, 2, weft_cts_list1(&never, &one), weft_cts_list1(&parked, &one)));
  WEFT_ASSERT_OK(weft_device_queue_dispatch(
      device, WEFT_QUEUE_AFFINITY_ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&first, &one), executable, hold_kernel, workgroups, 0,
      NULL, 0, NULL));
  WEFT_ASSERT_OK(weft_device_queue_dispatch(
      device, WEFT_QUEUE_AFFINITY_ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&second, &one), executable, hold_kernel, workgroups, 0,
      NULL, 0, NULL));
  // The first is running (a workgroup started) and cannot end yet.
  WEFT_ASSERT_OK(weft_cts_wait(g_hold_started, 1));
  release_later_t later = {parked, g_hold_gate};
  weft_thread_t* thread = NULL;
  start_release_later(&later, &thread);
  weft_device_release(device);
  weft_thread_join(thread);
  WEFT_ASSERT_OK(weft_semaphore_wait(first, 1, weft_timeout_immediate()));
  weft_cts_assert_status_contains(
      weft_semaphore_wait(second, 1, weft_timeout_immediate()),
      WEFT_STATUS_CANCELLED,
      "was cancelled: the device was released before it ran");
  // Only the first dispatch's workgroups ran.
  assert_int_equal(weft_atomic_load(&g_hold_workgroups, memory_order_relaxed),
                   2);
  weft_semaphore_release(g_hold_started);
  weft_semaphore_release(g_hold_gate);
  weft_semaphore_release(parked);
  weft_semaphore_release(never);
  weft_semaphore_release(first);
  weft_semaphore_release(second);
  weft_executable_release(executable);
}

// A host call that releases the device it is given: the last reference.
static weft_status_t release_device_host_call(
    void* user_data, const uint64_t args[4],
    const weft_host_call_context_t* context) {
  weft_device_release((weft_device_t*)user_data);
  return WEFT_OK;
}

static void release_last_reference_on_a_worker(void** state) {
  for (int round = 0; round < 20; ++round) {
    // Static: the device may still be shutting down when this returns.
    // Counts live blocks: the device shuts down on a thread of its own,
    // and the test waits for it to free everything before it goes on.
    static weft_cts_counting_allocator_t counter;
    weft_allocator_t allocator = weft_cts_counting_allocator_initialize(
        weft_allocator_system(), &counter);
    weft_device_t* device = create_device("local-task?workers=2", allocator);
    weft_buffer_t* buffer = NULL;
    WEFT_ASSERT_OK(weft_device_allocate_buffer(
        device, (weft_buffer_params_t){0}, 1024, &buffer));
    weft_semaphore_t* gate = NULL;
    weft_semaphore_t* filled = NULL;
    weft_semaphore_t* done = NULL;
    WEFT_ASSERT_OK(weft_semaphore_create(weft_allocator_system(), 0, &gate));
    WEFT_ASSERT_OK(weft_semaphore_create(weft_allocator_system(), 0, &filled));
    WEFT_ASSERT_OK(weft_semaphore_create(weft_allocator_system(), 0, &done));
    uint64_t one = 1;
    uint32_t pattern = 3;
    WEFT_ASSERT_OK(weft_device_queue_fill(device, WEFT_QUEUE_AFFINITY_ANY,
                                          weft_cts_list1(&gate, &one),
                                          weft_cts_list1(&filled, &one), buffer,
                                          0, WEFT_WHOLE_BUFFER, &pattern, 4));
    // The host call gets the test's reference and drops it on a worker: the
    // device cannot join that worker, so it shuts down on a thread of its
    // own, after the call (already running) finishes and signals.
    WEFT_ASSERT_OK(weft_device_queue_host_call(
        device, WEFT_QUEUE_AFFINITY_ANY, weft_cts_list1(&filled, &one),
        weft_cts_list1(&done, &one), release_device_host_call, device, NULL,
        WEFT_HOST_CALL_FLAG_NONE));
    WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
    WEFT_ASSERT_OK(weft_cts_wait(done, 1));
    uint32_t words[256];
    WEFT_ASSERT_OK(weft_buffer_map_read(buffer, 0, words, sizeof(words)));
    for (int i = 0; i < 256; ++i) assert_int_equal(words[i], 3);
    weft_buffer_release(buffer);
    weft_semaphore_release(gate);
    weft_semaphore_release(filled);
    weft_semaphore_release(done);
    // The device shuts down on a thread of its own, and frees everything
    // it allocated there.
    assert_int_equal(
        weft_cts_counting_allocator_wait_all_freed(&counter, TEN_SECONDS), 0);
  }
}

//===----------------------------------------------------------------------===//
// Queues
//===----------------------------------------------------------------------===//

static void queues_are_independent(void** state) {
  weft_device_t* device =
      create_device("local-task?workers=2&queues=2", weft_allocator_system());
  int64_t value = 0;
  WEFT_ASSERT_OK(weft_device_query_i64(device, "queue.count", &value));
  assert_int_equal(value, 2);
  weft_semaphore_t* blocked = NULL;
  weft_semaphore_t* other = NULL;
  WEFT_ASSERT_OK(weft_semaphore_create(weft_allocator_system(), 0, &blocked));
  WEFT_ASSERT_OK(weft_semaphore_create(weft_allocator_system(), 0, &other));
  blocking_call_t call;
  blocking_call_initialize(&call);
  uint64_t one = 1;
  // Queue 0 is busy in a host call that only returns when queue 1's
  // barrier has signalled.
  WEFT_ASSERT_OK(weft_device_queue_host_call(
      device, 1, weft_semaphore_list_empty(), weft_cts_list1(&blocked, &one),
      blocking_host_call, &call, NULL, WEFT_HOST_CALL_FLAG_NONE));
  WEFT_ASSERT_OK(weft_cts_wait(call.started, 1));
  WEFT_ASSERT_OK(weft_device_queue_barrier(
      device, 2, weft_semaphore_list_empty(), weft_cts_list1(&other, &one)));
  WEFT_ASSERT_OK(weft_cts_wait(other, 1));
  WEFT_ASSERT_OK(weft_semaphore_signal(call.release, 1));
  WEFT_ASSERT_OK(weft_cts_wait(blocked, 1));
  blocking_call_deinitialize(&call);
  weft_semaphore_release(blocked);
  weft_semaphore_release(other);
  weft_device_release(device);
}

static void dump_pending_names_queue_and_waits(void** state) {
  weft_device_t* device =
      create_device("local-task?queues=3", weft_allocator_system());
  weft_semaphore_t* gate = NULL;
  weft_semaphore_t* done = NULL;
  WEFT_ASSERT_OK(weft_semaphore_create(weft_allocator_system(), 0, &gate));
  WEFT_ASSERT_OK(weft_semaphore_create(weft_allocator_system(), 0, &done));
  weft_semaphore_set_name(gate, "gate");
  uint64_t five = 5;
  uint64_t one = 1;
  // Affinity bit 5 selects queue 5 % 3 = 2.
  WEFT_ASSERT_OK(weft_device_queue_barrier(
      device, (weft_queue_affinity_t)1 << 5, weft_cts_list1(&gate, &five),
      weft_cts_list1(&done, &one)));
  char* text = weft_cts_dump_pending(device);
  assert_non_null(strstr(text, "1 pending operation"));
  assert_non_null(strstr(text, "3 queues"));
  assert_non_null(strstr(text, "queue_barrier on queue 2: waiting"));
  assert_non_null(strstr(text, "waits for semaphore 'gate' to reach 5: now 0"));
  free(text);
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 5));
  WEFT_ASSERT_OK(weft_cts_wait(done, 1));
  weft_semaphore_release(gate);
  weft_semaphore_release(done);
  weft_device_release(device);
}

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

static void options_and_properties(void** state) {
  weft_device_t* device = NULL;
  weft_cts_assert_status_contains(
      weft_device_create("local-task?queues=0", weft_allocator_system(),
                         &device),
      WEFT_STATUS_INVALID_ARGUMENT, "queues=0 is out of range");
  weft_cts_assert_status_contains(
      weft_device_create("local-task?queues=65", weft_allocator_system(),
                         &device),
      WEFT_STATUS_INVALID_ARGUMENT, "(1 to 64)");
  weft_cts_assert_status_contains(
      weft_device_create("local-task?queues=x", weft_allocator_system(),
                         &device),
      WEFT_STATUS_INVALID_ARGUMENT, "queues");
  weft_cts_assert_status_contains(
      weft_device_create("local-task?spin_us=99999999", weft_allocator_system(),
                         &device),
      WEFT_STATUS_INVALID_ARGUMENT, "spin_us");
  weft_cts_assert_status_contains(
      weft_device_create("local-task://x", weft_allocator_system(), &device),
      WEFT_STATUS_INVALID_ARGUMENT, "takes no path");
  weft_cts_assert_status_contains(
      weft_device_create("local-task?assist=65", weft_allocator_system(),
                         &device),
      WEFT_STATUS_INVALID_ARGUMENT, "assist=65 is out of range (0 to 64)");
  device = create_device("local-task?workers=3&spin_us=0&queues=4",
                         weft_allocator_system());
  int64_t value = 0;
  WEFT_ASSERT_OK(weft_device_query_i64(device, "worker.count", &value));
  assert_int_equal(value, 3);
  WEFT_ASSERT_OK(weft_device_query_i64(device, "queue.count", &value));
  assert_int_equal(value, 4);
  WEFT_ASSERT_OK(weft_device_query_i64(device, "dispatch.concurrent", &value));
  assert_int_equal(value, 1);
  WEFT_ASSERT_OK(weft_device_query_i64(device, "semaphore.host_wait", &value));
  assert_int_equal(value, 1);
  weft_cts_assert_status_contains(weft_device_query_i64(device, "nope", &value),
                                  WEFT_STATUS_NOT_FOUND, "known: queue.count");
  weft_device_release(device);
}

// assist: given, or by default 1 where the workers leave a CPU free or
// there is a standby worker to give its CPU (two workers or more), else 0.
static void assist_option(void** state) {
  int64_t value = 0;
  weft_device_t* device = create_device("local-task?workers=2&assist=3",
                                        weft_allocator_system());
  WEFT_ASSERT_OK(weft_device_query_i64(device, "assist.count", &value));
  assert_int_equal(value, 3);
  weft_device_release(device);
  const uint32_t cpus = weft_thread_available_cpu_count();
  char text[64];
  snprintf(text, sizeof(text), "local-task?workers=%u", cpus);
  device = create_device(text, weft_allocator_system());
  WEFT_ASSERT_OK(weft_device_query_i64(device, "assist.count", &value));
  // One worker on one CPU: no standby, no guest.
  assert_int_equal(value, cpus >= 2 ? 1 : 0);
  weft_device_release(device);
  if (cpus > 1) {
    snprintf(text, sizeof(text), "local-task?workers=%u", cpus - 1);
    device = create_device(text, weft_allocator_system());
    WEFT_ASSERT_OK(weft_device_query_i64(device, "assist.count", &value));
    assert_int_equal(value, 1);
    weft_device_release(device);
  }
}

// With one worker every dispatch runs on the control process.
static void one_worker_runs_dispatches(void** state) {
  weft_device_t* device =
      create_device("local-task?workers=1", weft_allocator_system());
  weft_executable_t* executable = NULL;
  WEFT_ASSERT_OK(weft_device_create_executable(
      device, weft_executable_source_cpu_static(query_library), &executable));
  weft_buffer_t* buffer = NULL;
  const uint32_t count = 64 * 1000;
  WEFT_ASSERT_OK(weft_device_allocate_buffer(
      device, (weft_buffer_params_t){0}, count * sizeof(uint32_t), &buffer));
  weft_semaphore_t* done = NULL;
  WEFT_ASSERT_OK(weft_semaphore_create(weft_allocator_system(), 0, &done));
  uint32_t workgroups[3] = {1000, 1, 1};
  weft_buffer_ref_t binding =
      weft_make_buffer_ref(buffer, 0, WEFT_WHOLE_BUFFER);
  for (uint64_t i = 1; i <= 3; ++i) {
    uint64_t previous = i - 1;
    WEFT_ASSERT_OK(weft_device_queue_dispatch(
        device, WEFT_QUEUE_AFFINITY_ANY, weft_cts_list1(&done, &previous),
        weft_cts_list1(&done, &i), executable, 0, workgroups, 0, NULL, 1,
        &binding));
  }
  WEFT_ASSERT_OK(weft_cts_wait(done, 3));
  uint32_t* words = malloc(count * sizeof(uint32_t));
  WEFT_ASSERT_OK(
      weft_buffer_map_read(buffer, 0, words, count * sizeof(uint32_t)));
  for (uint32_t i = 0; i < count; ++i) assert_int_equal(words[i], 3);
  free(words);
  weft_semaphore_release(done);
  weft_buffer_release(buffer);
  weft_executable_release(executable);
  weft_device_release(device);
}

//===----------------------------------------------------------------------===//
// Assisting waits
//===----------------------------------------------------------------------===//

// Dispatches 64 workgroups of |kernel| on |device_string| (one worker) and
// waits for them on this thread (a single-semaphore wait, or a list of two
// when |list_wait|), without a deadline: the kernels end on their own.
// Returns the wait's status; |out_host_workgroups| is how many ran here.
static weft_status_t host_workgroups_during_wait(const char* device_string,
                                                 const char* kernel,
                                                 bool list_wait,
                                                 int32_t* out_host_workgroups) {
  weft_device_t* device = create_device(device_string, weft_allocator_system());
  weft_executable_t* executable = NULL;
  WEFT_ASSERT_OK(weft_device_create_executable(
      device, weft_executable_source_cpu_static(query_library), &executable));
  // The semaphore's wait policy is read at its creation: spin (and so look
  // for work to run) rather than sleep whenever the device is idle for a
  // moment, however slow the machine; while the dispatch runs, the wait
  // keeps looking anyway (the assistant answers BUSY or RAN).
  setenv("WEFT_SPIN_US", "10000000", 1);
  weft_semaphore_t* done = NULL;
  WEFT_ASSERT_OK(weft_semaphore_create(weft_allocator_system(), 0, &done));
  unsetenv("WEFT_SPIN_US");
  WEFT_ASSERT_OK(
      weft_semaphore_create(weft_allocator_system(), 0, &g_host_ran));
  weft_atomic_store(&g_host_workgroups, 0, memory_order_relaxed);
  g_on_host_thread = 1;
  const uint32_t workgroups[3] = {64, 1, 1};
  uint64_t one = 1;
  WEFT_ASSERT_OK(weft_device_queue_dispatch(
      device, WEFT_QUEUE_AFFINITY_ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&done, &one), executable,
      weft_cts_kernel_ordinal(executable, kernel), workgroups, 0, NULL, 0,
      NULL));
  weft_status_t status = WEFT_OK;
  if (list_wait) {
    weft_semaphore_t* reached = NULL;
    WEFT_ASSERT_OK(weft_semaphore_create(weft_allocator_system(), 0, &reached));
    weft_semaphore_t* semaphores[2] = {done, reached};
    uint64_t values[2] = {1, 0};
    status = weft_semaphore_list_wait(
        WEFT_WAIT_MODE_ALL, (weft_semaphore_list_t){2, semaphores, values},
        weft_timeout_infinite());
    weft_semaphore_release(reached);
  } else {
    status = weft_semaphore_wait(done, 1, weft_timeout_infinite());
  }
  g_on_host_thread = 0;
  weft_semaphore_release(done);
  weft_executable_release(executable);
  weft_device_release(device);
  weft_semaphore_release(g_host_ran);
  g_host_ran = NULL;
  *out_host_workgroups =
      weft_atomic_load(&g_host_workgroups, memory_order_relaxed);
  return status;
}

// A host waiting for a dispatch runs some of its workgroups with assist=1,
// in a single wait and in a list wait: "await_host" cannot finish on the
// worker alone, so the wait ends only once this thread ran one (or fails
// with the kernel's kGaveUp when it never does). With assist=0 it runs none.
static void waiting_host_assists(void** state) {
  const char* assisted = "local-task?workers=1&assist=1";
  const char* alone = "local-task?workers=1&assist=0";
  for (int list_wait = 0; list_wait <= 1; ++list_wait) {
    int32_t host = 0;
    weft_status_t status =
        host_workgroups_during_wait(assisted, "await_host", list_wait, &host);
    if (!weft_status_is_ok(status)) {
      char text[512];
      weft_status_format(status, text, sizeof(text));
      weft_status_free(status);
      fail_msg("%s wait: the host never ran a workgroup: %s",
               list_wait ? "list" : "single", text);
    }
    assert_true(host > 0);
    WEFT_ASSERT_OK(
        host_workgroups_during_wait(alone, "count_host", list_wait, &host));
    assert_int_equal(host, 0);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(steady_state_allocates_nothing),
      cmocka_unit_test(release_cancels_parked_ops),
      cmocka_unit_test(release_lets_running_work_finish),
      cmocka_unit_test(release_lets_running_dispatch_finish),
      cmocka_unit_test(release_last_reference_on_a_worker),
      cmocka_unit_test(queues_are_independent),
      cmocka_unit_test(dump_pending_names_queue_and_waits),
      cmocka_unit_test(options_and_properties),
      cmocka_unit_test(one_worker_runs_dispatches),
      cmocka_unit_test(waiting_host_assists),
      cmocka_unit_test(assist_option),
  };
  return cmocka_run_group_tests_name("local_task.queue", tests, NULL, NULL);
}
