// A GPU driver (vulkan, cuda) with the other drivers and the VM: what
// issues 21 and 24 ask of semaphores the GPU waits on and signals, beyond
// one device.
//  - a chain local-task -> GPU -> local-task through semaphores, the
//    last step reading the GPU's bytes through a mapping;
//  - a kernel's failure on the GPU reaching a host waiter, a CPU driver's
//    op and a VM await, each with the kernel's own message;
//  - ALL and ANY waits over a host semaphore and a GPU one;
//  - 10,000 chained dispatches with one host wait;
//  - releasing a device with ops held and ops on the GPU;
//  - a chain hopping across a device's queues;
//  - vulkan only: the "gpu_waits=off" device, which meets every wait on
//    the host; reusable command buffers recorded once; staging buffers
//    reused; a waited semaphore held until the queue's next op is done.
// Runs on the CTS's device: --driver "vulkan?validation=on" (Mesa's
// software device), "cuda" and "cuda?semaphores=memory" (on the CUDA test
// double, or a GPU); skipped without one.
// setjmp.h, stdarg.h and stddef.h must come before cmocka.h.
// clang-format off
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
// clang-format on

#include <stdio.h>
#include <string.h>

#include "cts.h"
#include "hal_module_test_util.h"
#include "weft/weft.h"

#define ANY WEFT_QUEUE_AFFINITY_ANY

// Skips a case that tests what only the vulkan driver has.
static void require_vulkan(weft_cts_t* cts) {
  if (strcmp(weft_device_driver_name(cts->device), "vulkan") != 0) {
    print_message("skipped: a vulkan driver case\n");
    skip();
  }
}

static const uint64_t kOne = 1;

//===----------------------------------------------------------------------===//
// local-task -> GPU -> local-task
//===----------------------------------------------------------------------===//

typedef struct relay_t {
  uint32_t steps;
  // What the last step saw in the GPU's buffer.
  weft_buffer_t* buffer;
  uint32_t words_seen[16];
  weft_status_t map_status;
} relay_t;

static weft_status_t first_step(void* user_data, const uint64_t args[4],
                                const weft_host_call_context_t* context) {
  relay_t* relay = (relay_t*)user_data;
  relay->steps = relay->steps * 10 + 1;
  return WEFT_OK;
}

static weft_status_t last_step(void* user_data, const uint64_t args[4],
                               const weft_host_call_context_t* context) {
  relay_t* relay = (relay_t*)user_data;
  relay->steps = relay->steps * 10 + 2;
  weft_buffer_mapping_t mapping;
  relay->map_status =
      weft_buffer_map_range(relay->buffer, WEFT_MAPPING_MODE_SCOPED,
                            WEFT_MEMORY_ACCESS_READ, 0, WEFT_WHOLE_BUFFER,
                            &mapping);
  if (weft_status_is_ok(relay->map_status)) {
    memcpy(relay->words_seen, mapping.contents, sizeof(relay->words_seen));
    weft_buffer_unmap_range(&mapping);
  }
  return WEFT_OK;
}

static void local_task_to_gpu_to_local_task(void** state) {
  weft_cts_t* cts = *state;
  weft_device_t* cpu = NULL;
  WEFT_ASSERT_OK(weft_device_create("local-task?workers=2", cts->allocator,
                                    &cpu));
  const weft_buffer_params_t params = {
      .type = WEFT_MEMORY_TYPE_HOST_VISIBLE | WEFT_MEMORY_TYPE_HOST_COHERENT,
      .usage = WEFT_BUFFER_USAGE_DEFAULT,
  };
  relay_t relay = {0};
  relay.buffer = weft_cts_allocate_buffer_with_params(cts, params, 64);
  weft_semaphore_t* gate = NULL;
  WEFT_ASSERT_OK(weft_semaphore_create(cts->allocator, 0, &gate));
  weft_semaphore_t* from_cpu = NULL;
  WEFT_ASSERT_OK(weft_device_create_semaphore(cpu, 0, &from_cpu));
  weft_semaphore_t* from_gpu = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* done = NULL;
  WEFT_ASSERT_OK(weft_device_create_semaphore(cpu, 0, &done));
  // Submitted last step first: each waits on a value not yet signalled.
  const uint64_t args[4] = {0};
  WEFT_ASSERT_OK(weft_device_queue_host_call(
      cpu, ANY, weft_cts_list1(&from_gpu, &kOne), weft_cts_list1(&done, &kOne),
      last_step, &relay, args, WEFT_HOST_CALL_FLAG_NONE));
  const uint32_t pattern = 0x5EEDF00Du;
  WEFT_ASSERT_OK(weft_device_queue_fill(
      cts->device, ANY, weft_cts_list1(&from_cpu, &kOne),
      weft_cts_list1(&from_gpu, &kOne), relay.buffer, 0, 64, &pattern, 4));
  WEFT_ASSERT_OK(weft_device_queue_host_call(
      cpu, ANY, weft_cts_list1(&gate, &kOne), weft_cts_list1(&from_cpu, &kOne),
      first_step, &relay, args, WEFT_HOST_CALL_FLAG_NONE));
  weft_cts_assert_not_reached(from_gpu, 1);
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  WEFT_ASSERT_OK(weft_cts_wait(done, 1));
  assert_int_equal(relay.steps, 12);
  WEFT_ASSERT_OK(relay.map_status);
  for (uint32_t i = 0; i < 16; ++i) {
    assert_int_equal(relay.words_seen[i], pattern);
  }
  weft_semaphore_release(gate);
  weft_semaphore_release(from_cpu);
  weft_semaphore_release(from_gpu);
  weft_semaphore_release(done);
  weft_buffer_release(relay.buffer);
  weft_device_release(cpu);
}

//===----------------------------------------------------------------------===//
// A GPU failure, everywhere downstream
//===----------------------------------------------------------------------===//

static weft_status_t never_runs(void* user_data, const uint64_t args[4],
                                const weft_host_call_context_t* context) {
  *(int*)user_data = 1;
  return WEFT_OK;
}

static void gpu_failure_reaches_host_cpu_and_vm(void** state) {
  weft_cts_t* cts = *state;
  static const char kMessage[] =
      "kernel 'fail' (library 'cts_test_kernels') failed in workgroup (2, 0, "
      "0) with code 1";
  weft_semaphore_t* gate = NULL;
  WEFT_ASSERT_OK(weft_semaphore_create(cts->allocator, 0, &gate));
  weft_semaphore_t* failed = weft_cts_create_semaphore(cts, 0);
  // The VM's context and its local-task device, a CPU op downstream.
  hal_test_t vm;
  hal_test_setup("local-task", &vm);
  weft_semaphore_t* downstream = NULL;
  WEFT_ASSERT_OK(weft_device_create_semaphore(vm.device, 0, &downstream));
  int ran = 0;
  const uint64_t args[4] = {0};
  WEFT_ASSERT_OK(weft_device_queue_host_call(
      vm.device, ANY, weft_cts_list1(&failed, &kOne),
      weft_cts_list1(&downstream, &kOne), never_runs, &ran, args,
      WEFT_HOST_CALL_FLAG_NONE));
  const uint32_t constants[1] = {2};
  const uint32_t workgroups[3] = {4, 1, 1};
  WEFT_ASSERT_OK(weft_device_queue_dispatch(
      cts->device, ANY, weft_cts_list1(&gate, &kOne),
      weft_cts_list1(&failed, &kOne), cts->kernels,
      weft_cts_kernel_ordinal(cts->kernels, "fail"), workgroups, 1, constants,
      0, NULL));
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  // The host waiter.
  weft_cts_assert_status_contains(weft_cts_wait(failed, 1),
                                  WEFT_STATUS_INTERNAL, kMessage);
  // The CPU driver's op did not run, and its signal carries the message.
  weft_cts_assert_status_contains(weft_cts_wait(downstream, 1),
                                  WEFT_STATUS_INTERNAL, kMessage);
  assert_int_equal(ran, 0);
  // The VM await.
  weft_fence_t* fence = NULL;
  WEFT_ASSERT_OK(weft_fence_create_at(failed, 1, cts->allocator, &fence));
  weft_vm_value_t code = {0};
  vm_test_expect_error(hal_test_call(&vm, "fence.await",
                                     HAL_ARGS(hal_test_ref(fence),
                                              hal_test_i64(-1)),
                                     &code, 1),
                       WEFT_STATUS_INTERNAL, kMessage);
  weft_fence_release(fence);
  weft_semaphore_release(downstream);
  hal_test_teardown(&vm);
  weft_semaphore_release(failed);
  weft_semaphore_release(gate);
}

//===----------------------------------------------------------------------===//
// ALL and ANY over host and GPU semaphores
//===----------------------------------------------------------------------===//

static void all_and_any_over_mixed_semaphores(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* host = NULL;
  WEFT_ASSERT_OK(weft_semaphore_create(cts->allocator, 0, &host));
  weft_semaphore_t* gpu = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* both[2] = {host, gpu};
  const uint64_t ones[2] = {1, 1};
  const weft_semaphore_list_t list = weft_cts_list(2, both, ones);
  // Neither reached: both modes time out.
  assert_int_equal(
      weft_status_consume_code(weft_semaphore_list_wait(
          WEFT_WAIT_MODE_ANY, list, weft_timeout_relative(10 * 1000000))),
      WEFT_STATUS_DEADLINE_EXCEEDED);
  // The GPU moves its semaphore: ANY is met, ALL is not.
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 64);
  const uint32_t pattern = 7;
  WEFT_ASSERT_OK(weft_device_queue_fill(cts->device, ANY,
                                        weft_semaphore_list_empty(),
                                        weft_cts_list1(&gpu, &kOne), buffer, 0,
                                        64, &pattern, 4));
  WEFT_ASSERT_OK(weft_semaphore_list_wait(WEFT_WAIT_MODE_ANY, list,
                                          weft_timeout_relative(60000000000)));
  assert_int_equal(
      weft_status_consume_code(weft_semaphore_list_wait(
          WEFT_WAIT_MODE_ALL, list, weft_timeout_relative(10 * 1000000))),
      WEFT_STATUS_DEADLINE_EXCEEDED);
  // The host's too: ALL is met.
  WEFT_ASSERT_OK(weft_semaphore_signal(host, 1));
  WEFT_ASSERT_OK(weft_semaphore_list_wait(WEFT_WAIT_MODE_ALL, list,
                                          weft_timeout_relative(60000000000)));
  // A failed GPU semaphore ends an ANY wait with its failure, though
  // the host semaphore's value is far off.
  weft_semaphore_t* failing = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* pair[2] = {host, failing};
  const uint64_t far[2] = {100, 1};
  weft_semaphore_fail(failing,
                      WEFT_STATUS(DATA_LOSS, "the checkpoint is gone"));
  weft_cts_assert_status_contains(
      weft_semaphore_list_wait(WEFT_WAIT_MODE_ANY, weft_cts_list(2, pair, far),
                               weft_timeout_relative(60000000000)),
      WEFT_STATUS_DATA_LOSS, "the checkpoint is gone");
  weft_semaphore_release(failing);
  weft_buffer_release(buffer);
  weft_semaphore_release(gpu);
  weft_semaphore_release(host);
}

//===----------------------------------------------------------------------===//
// 10,000 chained dispatches, one host wait
//===----------------------------------------------------------------------===//

static void ten_thousand_chained_dispatches(void** state) {
  weft_cts_t* cts = *state;
  enum { kOps = 10000, kCount = 64 };
  float initial[kCount];
  for (uint32_t i = 0; i < kCount; ++i) initial[i] = (float)i;
  weft_buffer_t* buffers[2] = {
      weft_cts_allocate_buffer(cts, sizeof(initial)),
      weft_cts_allocate_buffer(cts, sizeof(initial)),
  };
  weft_cts_write_buffer(cts, buffers[0], 0, initial, sizeof(initial));
  weft_semaphore_t* gate = NULL;
  WEFT_ASSERT_OK(weft_semaphore_create(cts->allocator, 0, &gate));
  weft_semaphore_t* step = weft_cts_create_semaphore(cts, 0);
  // Each dispatch adds 1 to every element, from one buffer into the other.
  const uint32_t constants[3] = {weft_cts_f32_bits(1.0f),
                                 weft_cts_f32_bits(1.0f), kCount};
  const uint32_t workgroups[3] = {1, 1, 1};
  const uint32_t kernel = weft_cts_kernel_ordinal(cts->kernels, "scale_offset");
  for (uint64_t i = 1; i <= kOps; ++i) {
    weft_semaphore_t* waits[2] = {step, gate};
    const uint64_t wait_values[2] = {i - 1, 1};
    const weft_buffer_ref_t bindings[2] = {
        weft_make_buffer_ref(buffers[(i - 1) % 2], 0, WEFT_WHOLE_BUFFER),
        weft_make_buffer_ref(buffers[i % 2], 0, WEFT_WHOLE_BUFFER),
    };
    WEFT_ASSERT_OK(weft_device_queue_dispatch(
        cts->device, ANY, weft_cts_list(i == 1 ? 2 : 1, waits, wait_values),
        weft_cts_list1(&step, &i), cts->kernels, kernel, workgroups, 3,
        constants, 2, bindings));
  }
  weft_cts_assert_not_reached(step, 1);
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  WEFT_ASSERT_OK(weft_cts_wait(step, kOps));
  float result[kCount];
  weft_cts_read_buffer(cts, buffers[kOps % 2], 0, result, sizeof(result));
  for (uint32_t i = 0; i < kCount; ++i) {
    assert_true(result[i] == initial[i] + (float)kOps);
  }
  weft_semaphore_release(step);
  weft_semaphore_release(gate);
  weft_buffer_release(buffers[0]);
  weft_buffer_release(buffers[1]);
}

//===----------------------------------------------------------------------===//
// Release with ops held and ops on the GPU
//===----------------------------------------------------------------------===//

// A chain short enough to be on the GPU whole when the device goes (below
// what the drivers keep in flight: cuda's WEFT_CUDA_MAX_STREAM_ENTRIES at
// three stream operations a fill); ops held back for room are "ready but
// not started", which a release cancels (weft/device.h).
static void release_with_held_and_gpu_ops(void** state) {
  weft_cts_t* cts = *state;
  enum { kChain = 150 };
  weft_device_t* device = NULL;
  WEFT_ASSERT_OK(weft_device_create(cts->device_string, cts->allocator,
                                    &device));
  weft_buffer_t* buffer = NULL;
  WEFT_ASSERT_OK(weft_device_allocate_buffer(
      device, (weft_buffer_params_t){0}, 4 * kChain, &buffer));
  weft_semaphore_t* chain = NULL;
  WEFT_ASSERT_OK(weft_device_create_semaphore(device, 0, &chain));
  weft_semaphore_t* never = NULL;
  WEFT_ASSERT_OK(weft_semaphore_create(cts->allocator, 0, &never));
  weft_semaphore_t* held = NULL;
  WEFT_ASSERT_OK(weft_device_create_semaphore(device, 0, &held));
  // Held: waits on a host semaphore nobody signals.
  const uint32_t pattern = 1;
  WEFT_ASSERT_OK(weft_device_queue_fill(device, ANY,
                                        weft_cts_list1(&never, &kOne),
                                        weft_cts_list1(&held, &kOne), buffer,
                                        0, 4, &pattern, 4));
  // On the GPU: a chain submitted at once, each op behind the one before.
  for (uint64_t i = 1; i <= kChain; ++i) {
    const uint64_t previous = i - 1;
    const uint32_t value = (uint32_t)i;
    WEFT_ASSERT_OK(weft_device_queue_fill(
        device, ANY, weft_cts_list1(&chain, &previous),
        weft_cts_list1(&chain, &i), buffer, 4 * (i - 1), 4, &value, 4));
  }
  weft_device_release(device);
  // The submitted chain completed; the held op was cancelled, named.
  WEFT_ASSERT_OK(weft_cts_wait(chain, kChain));
  weft_cts_assert_status_contains(weft_cts_wait(held, 1),
                                  WEFT_STATUS_CANCELLED, "queue_fill");
  weft_semaphore_release(held);
  weft_semaphore_release(never);
  weft_semaphore_release(chain);
  weft_buffer_release(buffer);
}

//===----------------------------------------------------------------------===//
// gpu_waits=off: the host round trip
//===----------------------------------------------------------------------===//

// Submits a chain of 64 fills on |device|, each after the one before it
// (op i on queue i % |queue_count|; the first behind a host gate, so the
// whole chain is submitted ahead of its values), opens the gate and checks
// that fill i wrote i * |multiplier|.
static void check_fill_chain(weft_cts_t* cts, weft_device_t* device,
                             uint32_t queue_count, uint32_t multiplier) {
  enum { kChain = 64 };
  weft_buffer_t* buffer = NULL;
  WEFT_ASSERT_OK(weft_device_allocate_buffer(
      device, (weft_buffer_params_t){0}, 4 * kChain, &buffer));
  weft_semaphore_t* chain = NULL;
  WEFT_ASSERT_OK(weft_device_create_semaphore(device, 0, &chain));
  weft_semaphore_t* gate = NULL;
  WEFT_ASSERT_OK(weft_semaphore_create(cts->allocator, 0, &gate));
  for (uint64_t i = 1; i <= kChain; ++i) {
    weft_semaphore_t* waits[2] = {chain, gate};
    const uint64_t wait_values[2] = {i - 1, 1};
    const uint32_t value = (uint32_t)i * multiplier;
    const weft_queue_affinity_t queue = (weft_queue_affinity_t)1
                                        << (i % queue_count);
    WEFT_ASSERT_OK(weft_device_queue_fill(
        device, queue, weft_cts_list(i == 1 ? 2 : 1, waits, wait_values),
        weft_cts_list1(&chain, &i), buffer, 4 * (i - 1), 4, &value, 4));
  }
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  WEFT_ASSERT_OK(weft_cts_wait(chain, kChain));
  uint32_t words[kChain];
  weft_cts_device_read_buffer(device, buffer, 0, words, sizeof(words));
  for (uint32_t i = 0; i < kChain; ++i) {
    assert_int_equal(words[i], (i + 1) * multiplier);
  }
  weft_semaphore_release(gate);
  weft_semaphore_release(chain);
  weft_buffer_release(buffer);
}

static void host_round_trip_option(void** state) {
  weft_cts_t* cts = *state;
  require_vulkan(cts);
  char device_string[256];
  weft_cts_device_string_with(cts, "gpu_waits=off", device_string,
                              sizeof(device_string));
  weft_device_t* device = NULL;
  WEFT_ASSERT_OK(weft_device_create(device_string, cts->allocator, &device));
  int64_t gpu_waits = -1;
  WEFT_ASSERT_OK(weft_device_query_i64(device, "vulkan.gpu_waits", &gpu_waits));
  assert_int_equal(gpu_waits, 0);
  // A chain submitted ahead of its values still runs in order: each op is
  // held until the host sees the one before it complete.
  check_fill_chain(cts, device, 1, 3);
  weft_device_release(device);
  // Anything but on or off is refused, naming the option.
  weft_cts_device_string_with(cts, "gpu_waits=maybe", device_string,
                              sizeof(device_string));
  weft_status_t status =
      weft_device_create(device_string, cts->allocator, &device);
  assert_null(device);
  weft_cts_assert_status_contains(
      status, WEFT_STATUS_INVALID_ARGUMENT,
      "option 'gpu_waits' must be 'on' or 'off' (got 'maybe')");
}

//===----------------------------------------------------------------------===//
// Several queues
//===----------------------------------------------------------------------===//

// "queues=N" gives a device N weft queues (vulkan: over the Vulkan queues
// its family has; Mesa's device has one, so all four share it, each with
// its own completion timeline; cuda: a stream each); a chain that hops
// between them runs in order.
static void chain_across_queues(void** state) {
  weft_cts_t* cts = *state;
  char device_string[256];
  weft_cts_device_string_with(cts, "queues=4", device_string,
                              sizeof(device_string));
  weft_device_t* device = NULL;
  WEFT_ASSERT_OK(weft_device_create(device_string, cts->allocator, &device));
  int64_t queues = 0;
  WEFT_ASSERT_OK(weft_device_query_i64(device, "queue.count", &queues));
  assert_int_equal(queues, 4);
  if (strcmp(weft_device_driver_name(device), "vulkan") == 0) {
    int64_t vk_queues = 0;
    WEFT_ASSERT_OK(
        weft_device_query_i64(device, "vulkan.queues", &vk_queues));
    assert_true(vk_queues >= 1 && vk_queues <= 4);
  }
  // Each op on the next queue, after the op before it on another.
  check_fill_chain(cts, device, 4, 7);
  weft_device_release(device);
  // More than the driver keeps is refused, naming the limit.
  weft_cts_device_string_with(cts, "queues=9", device_string,
                              sizeof(device_string));
  weft_status_t status =
      weft_device_create(device_string, cts->allocator, &device);
  assert_null(device);
  weft_cts_assert_status_contains(status, WEFT_STATUS_INVALID_ARGUMENT,
                                  "queues must be 1 to 8");
}

//===----------------------------------------------------------------------===//
// Reusable command buffers recorded once
//===----------------------------------------------------------------------===//

static int64_t recorded_executes(weft_device_t* device) {
  int64_t count = -1;
  WEFT_ASSERT_OK(
      weft_device_query_i64(device, "vulkan.recorded_executes", &count));
  return count;
}

// Executes |command_buffer| with |table| and waits; returns the status.
static weft_status_t execute_and_wait(weft_cts_t* cts,
                                      weft_command_buffer_t* command_buffer,
                                      weft_binding_table_t table) {
  weft_semaphore_t* done = weft_cts_create_semaphore(cts, 0);
  weft_status_t status = weft_device_queue_execute(
      cts->device, ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&done, &kOne), command_buffer, table);
  if (weft_status_is_ok(status)) status = weft_cts_wait(done, 1);
  weft_semaphore_release(done);
  return status;
}

// A reusable command buffer of direct references runs its recording on
// every execute (its results right each time, a kernel failure reported
// from its own status slots); one that takes a binding table, or a
// one-shot one, is recorded into each execute's op.
static void reusable_command_buffers_recorded_once(void** state) {
  weft_cts_t* cts = *state;
  require_vulkan(cts);
  enum { kCount = 128 };
  float input[kCount];
  for (uint32_t i = 0; i < kCount; ++i) input[i] = (float)i;
  weft_buffer_t* in = weft_cts_allocate_buffer(cts, sizeof(input));
  weft_buffer_t* out = weft_cts_allocate_buffer(cts, sizeof(input));
  weft_cts_write_buffer(cts, in, 0, input, sizeof(input));
  const uint32_t kernel = weft_cts_kernel_ordinal(cts->kernels, "scale_offset");
  const uint32_t constants[3] = {weft_cts_f32_bits(3.0f),
                                 weft_cts_f32_bits(1.0f), kCount};
  const uint32_t workgroups[3] = {kCount / 64, 1, 1};
  const weft_buffer_ref_t bindings[2] = {
      weft_make_buffer_ref(in, 0, WEFT_WHOLE_BUFFER),
      weft_make_buffer_ref(out, 0, WEFT_WHOLE_BUFFER),
  };
  weft_command_buffer_t* direct = NULL;
  WEFT_ASSERT_OK(weft_command_buffer_create(
      cts->device, WEFT_COMMAND_BUFFER_MODE_REUSABLE,
      WEFT_COMMAND_CATEGORY_ANY, 0, &direct));
  WEFT_ASSERT_OK(weft_command_buffer_begin(direct));
  WEFT_ASSERT_OK(weft_command_buffer_dispatch(direct, cts->kernels, kernel,
                                              workgroups, 3, constants, 2,
                                              bindings));
  WEFT_ASSERT_OK(weft_command_buffer_end(direct));
  const int64_t before = recorded_executes(cts->device);
  for (int run = 0; run < 3; ++run) {
    weft_cts_fill_buffer(cts, out, 0, sizeof(input), &(uint8_t){0}, 1);
    WEFT_ASSERT_OK(
        execute_and_wait(cts, direct, weft_binding_table_empty()));
    float output[kCount];
    weft_cts_read_buffer(cts, out, 0, output, sizeof(output));
    for (uint32_t i = 0; i < kCount; ++i) {
      assert_true(output[i] == input[i] * 3.0f + 1.0f);
    }
  }
  assert_int_equal(recorded_executes(cts->device), before + 3);

  // A kernel failure from the recording's slots, twice (the slots are
  // cleared for each execute: the second failure is its own).
  weft_command_buffer_t* failing = NULL;
  WEFT_ASSERT_OK(weft_command_buffer_create(
      cts->device, WEFT_COMMAND_BUFFER_MODE_REUSABLE,
      WEFT_COMMAND_CATEGORY_ANY, 0, &failing));
  WEFT_ASSERT_OK(weft_command_buffer_begin(failing));
  const uint32_t fail_at[1] = {1};
  const uint32_t two[3] = {2, 1, 1};
  WEFT_ASSERT_OK(weft_command_buffer_dispatch(
      failing, cts->kernels, weft_cts_kernel_ordinal(cts->kernels, "fail"),
      two, 1, fail_at, 0, NULL));
  WEFT_ASSERT_OK(weft_command_buffer_end(failing));
  for (int run = 0; run < 2; ++run) {
    weft_cts_assert_status_contains(
        execute_and_wait(cts, failing, weft_binding_table_empty()),
        WEFT_STATUS_INTERNAL, "failed in workgroup (1, 0, 0) with code 1");
  }
  assert_int_equal(recorded_executes(cts->device), before + 5);

  // Through a binding table: recorded into each op.
  weft_command_buffer_t* indirect = NULL;
  WEFT_ASSERT_OK(weft_command_buffer_create(
      cts->device, WEFT_COMMAND_BUFFER_MODE_REUSABLE,
      WEFT_COMMAND_CATEGORY_ANY, 2, &indirect));
  WEFT_ASSERT_OK(weft_command_buffer_begin(indirect));
  const weft_buffer_ref_t slots[2] = {
      weft_make_indirect_buffer_ref(0, 0, WEFT_WHOLE_BUFFER),
      weft_make_indirect_buffer_ref(1, 0, WEFT_WHOLE_BUFFER),
  };
  WEFT_ASSERT_OK(weft_command_buffer_dispatch(indirect, cts->kernels, kernel,
                                              workgroups, 3, constants, 2,
                                              slots));
  WEFT_ASSERT_OK(weft_command_buffer_end(indirect));
  const weft_buffer_binding_t entries[2] = {
      {in, 0, WEFT_WHOLE_BUFFER},
      {out, 0, WEFT_WHOLE_BUFFER},
  };
  const weft_binding_table_t table = {2, entries};
  WEFT_ASSERT_OK(execute_and_wait(cts, indirect, table));
  assert_int_equal(recorded_executes(cts->device), before + 5);

  weft_command_buffer_release(indirect);
  weft_command_buffer_release(failing);
  weft_command_buffer_release(direct);
  weft_buffer_release(out);
  weft_buffer_release(in);
}

// weft_device_queue_update of |length| bytes of |source| at |offset|,
// waited for.
static void update_and_wait(weft_cts_t* cts, weft_buffer_t* buffer,
                            weft_device_size_t offset, const void* source,
                            weft_device_size_t length) {
  weft_semaphore_t* done = weft_cts_create_semaphore(cts, 0);
  WEFT_ASSERT_OK(weft_device_queue_update(
      cts->device, ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&done, &kOne), source, buffer, offset, length));
  WEFT_ASSERT_OK(weft_cts_wait(done, 1));
  weft_semaphore_release(done);
}

static int64_t staging_buffers_made(weft_device_t* device) {
  int64_t count = -1;
  WEFT_ASSERT_OK(
      weft_device_query_i64(device, "vulkan.staging_buffers_made", &count));
  return count;
}

// Updates and fills the GPU cannot do in place (unaligned, or updates
// larger than a command buffer carries) copy from staging buffers, which
// the device keeps for the next op of their size class: 100 rounds of an
// unaligned update, an unaligned fill and a 70,000-byte update make one
// buffer of each class, and every round's bytes land.
static void staging_buffers_reused(void** state) {
  weft_cts_t* cts = *state;
  require_vulkan(cts);
  enum { kLength = 80000, kBig = 70000, kRounds = 100 };
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, kLength);
  static uint8_t source[kBig];
  static uint8_t seen[kLength];
  const int64_t before = staging_buffers_made(cts->device);
  for (uint32_t round = 0; round < kRounds; ++round) {
    for (uint32_t i = 0; i < kBig; ++i) {
      source[i] = (uint8_t)(round * 7 + i);
    }
    update_and_wait(cts, buffer, 3, source, 5001);
    const uint8_t pattern = (uint8_t)(0xA0 + round % 16);
    weft_cts_fill_buffer(cts, buffer, 6001, 999, &pattern, 1);
    update_and_wait(cts, buffer, 8000, source, kBig);
    weft_cts_read_buffer(cts, buffer, 0, seen, kLength);
    assert_memory_equal(seen + 3, source, 5001);
    for (uint32_t i = 6001; i < 7000; ++i) {
      assert_int_equal(seen[i], pattern);
    }
    assert_memory_equal(seen + 8000, source, kBig);
  }
  // One per size class used (8 KiB, 4 KiB and 128 KiB here), whatever the
  // number of rounds; a buffer per op would have made 300.
  const int64_t made = staging_buffers_made(cts->device) - before;
  assert_true(made >= 1);
  assert_true(made <= 3);
  weft_buffer_release(buffer);
}

//===----------------------------------------------------------------------===//
// Waited semaphores held past their op
//===----------------------------------------------------------------------===//

static int64_t held_waits(weft_device_t* device) {
  int64_t count = -1;
  WEFT_ASSERT_OK(weft_device_query_i64(device, "vulkan.held_waits", &count));
  return count;
}

static weft_status_t nothing(void* user_data, const uint64_t args[4],
                             const weft_host_call_context_t* context) {
  (void)user_data;
  (void)args;
  (void)context;
  return WEFT_OK;
}

// Returns once the device's completion thread has finished with the op
// that signals |semaphore| = |value|: a host call behind it runs on that
// thread after it, and signals a host semaphore.
static void after_completion_of(weft_cts_t* cts, weft_semaphore_t* semaphore,
                                uint64_t value) {
  weft_semaphore_t* seen = NULL;
  WEFT_ASSERT_OK(weft_semaphore_create(cts->allocator, 0, &seen));
  const uint64_t args[4] = {0};
  WEFT_ASSERT_OK(weft_device_queue_host_call(
      cts->device, ANY, weft_cts_list1(&semaphore, &value),
      weft_cts_list1(&seen, &kOne), nothing, NULL, args,
      WEFT_HOST_CALL_FLAG_NONE));
  WEFT_ASSERT_OK(weft_cts_wait(seen, 1));
  weft_semaphore_release(seen);
}

// A semaphore an op waited on in its submission outlives the op by one
// op of the queue: Mesa's emulated timelines release a submission's wait
// points on their submit thread after its signals are visible, so the
// device keeps the semaphore until a later submission completes (or the
// device goes), even when its owner lets go at once.
static void waited_semaphores_held_one_op(void** state) {
  weft_cts_t* cts = *state;
  require_vulkan(cts);
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 64);
  weft_semaphore_t* upstream = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* done = weft_cts_create_semaphore(cts, 0);
  const uint64_t two = 2;
  weft_cts_queue_fill_u32(cts, weft_semaphore_list_empty(),
                          weft_cts_list1(&upstream, &kOne), buffer, 0, 16, 7);
  weft_cts_queue_fill_u32(cts, weft_cts_list1(&upstream, &kOne),
                          weft_cts_list1(&done, &kOne), buffer, 16, 16, 7);
  after_completion_of(cts, done, 1);
  // The first fill let go of what earlier cases left held; the second
  // fill's wait is held; its owner's release leaves it alive.
  assert_int_equal(held_waits(cts->device), 1);
  weft_semaphore_release(upstream);
  assert_int_equal(held_waits(cts->device), 1);
  // A later op of the queue without waits completes: it goes.
  weft_cts_queue_fill_u32(cts, weft_semaphore_list_empty(),
                          weft_cts_list1(&done, &two), buffer, 32, 16, 7);
  after_completion_of(cts, done, 2);
  assert_int_equal(held_waits(cts->device), 0);
  weft_semaphore_release(done);
  weft_buffer_release(buffer);
}

int main(int argc, char** argv) {
  const struct CMUnitTest tests[] = {
      WEFT_CTS_CASE(local_task_to_gpu_to_local_task),
      WEFT_CTS_CASE(gpu_failure_reaches_host_cpu_and_vm),
      WEFT_CTS_CASE(all_and_any_over_mixed_semaphores),
      WEFT_CTS_CASE(ten_thousand_chained_dispatches),
      WEFT_CTS_CASE(release_with_held_and_gpu_ops),
      WEFT_CTS_CASE(host_round_trip_option),
      WEFT_CTS_CASE(chain_across_queues),
      WEFT_CTS_CASE(reusable_command_buffers_recorded_once),
      WEFT_CTS_CASE(staging_buffers_reused),
      WEFT_CTS_CASE(waited_semaphores_held_one_op),
  };
  return weft_cts_run("gpu_cross_driver", tests,
                      sizeof(tests) / sizeof(tests[0]), argc, argv);
}
