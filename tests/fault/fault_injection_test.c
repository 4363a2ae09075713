// Fault injection: runs a representative scenario (a device, an executable,
// buffers, a semaphore, a fence, a memory file, a fill -> copy -> dispatch ->
// execute -> read chain of queue operations and a command buffer with an
// update and a dispatch) with allocation number N failing, for N = 0, 1, 2,
// ... until the scenario runs with no injected failure.
//
// The scenario runs in two modes: "immediate" (each operation's waits are
// reached when it is submitted) and "gated" (the whole chain waits on a host
// semaphore signalled after the last submit, so every operation is parked
// first and runs when the host signals; a failed submit fails the gate, and
// the parked operations must unwind through their semaphores).
//
// Every run must either succeed or return RESOURCE_EXHAUSTED, never crash or
// hang, and give back every byte it took from the allocator (checked after
// each run by a counting allocator under the failing one; under ASan,
// LeakSanitizer checks the rest at exit). The last run must succeed and
// produce the right results.
//
// Environment: WEFT_CTS_DRIVER picks the device (default local-sync);
// WEFT_FAULT_VERBOSE=1 prints every run's outcome.
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
// clang-format off
#include <cmocka.h>
// clang-format on

#include "cts.h"
#include "weft/weft.h"

// Far more allocations than the scenario makes: a run count past this means
// the scenario never stops allocating, which is a bug of its own.
#define MAX_RUNS 20000

#define ELEMENTS 256u  // 4 workgroups of the 64-element test kernels

// --- The scenario -----------------------------------------------------------

typedef struct scenario_t {
  const char* device_string;
  weft_allocator_t allocator;
  // Gate the chain on a host semaphore signalled after the last submit.
  int gated;
  // Set when the scenario succeeded but computed wrong results.
  int wrong_results;
} scenario_t;

// Checks the three results of the chain; returns the status of reading them.
static weft_status_t verify(scenario_t* scenario, weft_buffer_t* read_target,
                            const float* file_data, weft_buffer_t* scaled,
                            weft_buffer_t* absolute) {
  float floats[ELEMENTS];
  int32_t ints[ELEMENTS];
  weft_status_t status =
      weft_buffer_map_read(scaled, 0, floats, sizeof(floats));
  for (uint32_t i = 0; weft_status_is_ok(status) && i < ELEMENTS; ++i) {
    if (floats[i] != 7.0f) scenario->wrong_results = 1;  // 2 * 3 + 1
  }
  if (weft_status_is_ok(status)) {
    status = weft_buffer_map_read(absolute, 0, ints, sizeof(ints));
  }
  for (uint32_t i = 0; weft_status_is_ok(status) && i < ELEMENTS; ++i) {
    if (ints[i] != (int32_t)i) scenario->wrong_results = 1;
  }
  if (weft_status_is_ok(status)) {
    status = weft_buffer_map_read(read_target, 0, floats, sizeof(floats));
  }
  if (weft_status_is_ok(status) &&
      memcmp(floats, file_data, sizeof(floats)) != 0) {
    scenario->wrong_results = 1;
  }
  return status;
}

// Runs the scenario once with |scenario->allocator|. Every object is released
// before it returns, whatever failed.
static weft_status_t run_scenario(scenario_t* scenario) {
  const weft_allocator_t allocator = scenario->allocator;
  const weft_device_size_t length = ELEMENTS * sizeof(float);
  weft_device_t* device = NULL;
  weft_executable_t* kernels = NULL;
  weft_buffer_t* filled = NULL;
  weft_buffer_t* copied = NULL;
  weft_buffer_t* scaled = NULL;
  weft_buffer_t* absolute = NULL;
  weft_semaphore_t* timeline = NULL;
  weft_semaphore_t* gate = NULL;
  weft_fence_t* fence = NULL;
  weft_command_buffer_t* command_buffer = NULL;
  weft_file_t* file = NULL;
  uint32_t scale_offset = 0, abs_range = 0;
  float file_data[ELEMENTS];
  int32_t signed_data[ELEMENTS];
  for (uint32_t i = 0; i < ELEMENTS; ++i) {
    file_data[i] = (float)i * 0.5f;
    signed_data[i] = (i % 2) ? -(int32_t)i : (int32_t)i;
  }

  weft_status_t status =
      weft_device_create(scenario->device_string, allocator, &device);
  if (weft_status_is_ok(status)) {
    status = weft_device_create_executable(
        device, weft_cts_kernel_source(weft_device_driver_name(device)),
        &kernels);
  }
  if (weft_status_is_ok(status)) {
    status =
        weft_executable_lookup_kernel(kernels, "scale_offset", &scale_offset);
  }
  if (weft_status_is_ok(status)) {
    status = weft_executable_lookup_kernel(kernels, "abs_range", &abs_range);
  }
  const weft_buffer_params_t params = {0, 0, 0};
  weft_buffer_t** buffers[] = {&filled, &copied, &scaled, &absolute};
  for (size_t i = 0; i < 4 && weft_status_is_ok(status); ++i) {
    status = weft_device_allocate_buffer(device, params, length, buffers[i]);
  }
  if (weft_status_is_ok(status)) {
    status = weft_device_create_semaphore(device, 0, &timeline);
  }
  if (weft_status_is_ok(status) && scenario->gated) {
    status = weft_semaphore_create(allocator, 0, &gate);
  }
  if (weft_status_is_ok(status)) {
    status = weft_fence_create(2, allocator, &fence);
  }
  if (weft_status_is_ok(status)) {
    status = weft_fence_insert(fence, timeline, 5);
  }
  if (weft_status_is_ok(status)) {
    status =
        weft_file_wrap_memory(WEFT_FILE_ACCESS_READ, file_data,
                              sizeof(file_data), NULL, NULL, allocator, &file);
  }

  // A one-shot command buffer: update |absolute| with signed values, then
  // abs() them in place.
  if (weft_status_is_ok(status)) {
    status = weft_command_buffer_create(
        device, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, WEFT_COMMAND_CATEGORY_ANY, 0,
        &command_buffer);
  }
  if (weft_status_is_ok(status)) {
    status = weft_command_buffer_begin(command_buffer);
  }
  if (weft_status_is_ok(status)) {
    status = weft_command_buffer_update(
        command_buffer, signed_data,
        weft_make_buffer_ref(absolute, 0, sizeof(signed_data)));
  }
  if (weft_status_is_ok(status)) {
    status = weft_command_buffer_barrier(command_buffer);
  }
  const uint32_t abs_constants[2] = {0, ELEMENTS};
  const uint32_t abs_workgroups[3] = {ELEMENTS / 64, 1, 1};
  const weft_buffer_ref_t abs_binding =
      weft_make_buffer_ref(absolute, 0, WEFT_WHOLE_BUFFER);
  if (weft_status_is_ok(status)) {
    status = weft_command_buffer_dispatch(command_buffer, kernels, abs_range,
                                          abs_workgroups, 2, abs_constants, 1,
                                          &abs_binding);
  }
  if (weft_status_is_ok(status)) {
    status = weft_command_buffer_end(command_buffer);
  }

  // The chain on one timeline: fill (1) -> copy (2) -> dispatch (3) ->
  // execute (4) -> read (5). |accepted| is the last value whose operation was
  // accepted: everything up to it will be signalled or failed.
  uint64_t values[6] = {0, 1, 2, 3, 4, 5};
  weft_semaphore_list_t at[6];
  for (int i = 0; i < 6; ++i) {
    at[i] = (weft_semaphore_list_t){1, &timeline, &values[i]};
  }
  const uint64_t gate_value = 1;
  const weft_semaphore_list_t first_waits =
      scenario->gated ? (weft_semaphore_list_t){1, &gate, &gate_value}
                      : weft_semaphore_list_empty();
  uint64_t accepted = 0;
  const float two = 2.0f;
  if (weft_status_is_ok(status)) {
    status =
        weft_device_queue_fill(device, WEFT_QUEUE_AFFINITY_ANY, first_waits,
                               at[1], filled, 0, length, &two, sizeof(two));
    if (weft_status_is_ok(status)) accepted = 1;
  }
  if (weft_status_is_ok(status)) {
    status = weft_device_queue_copy(device, WEFT_QUEUE_AFFINITY_ANY, at[1],
                                    at[2], filled, 0, copied, 0, length);
    if (weft_status_is_ok(status)) accepted = 2;
  }
  const uint32_t scale_constants[3] = {weft_cts_f32_bits(3.0f),
                                       weft_cts_f32_bits(1.0f), ELEMENTS};
  const uint32_t scale_workgroups[3] = {ELEMENTS / 64, 1, 1};
  const weft_buffer_ref_t scale_bindings[2] = {
      weft_make_buffer_ref(copied, 0, WEFT_WHOLE_BUFFER),
      weft_make_buffer_ref(scaled, 0, WEFT_WHOLE_BUFFER),
  };
  if (weft_status_is_ok(status)) {
    status = weft_device_queue_dispatch(
        device, WEFT_QUEUE_AFFINITY_ANY, at[2], at[3], kernels, scale_offset,
        scale_workgroups, 3, scale_constants, 2, scale_bindings);
    if (weft_status_is_ok(status)) accepted = 3;
  }
  if (weft_status_is_ok(status)) {
    weft_binding_table_t no_bindings = {0, NULL};
    status = weft_device_queue_execute(device, WEFT_QUEUE_AFFINITY_ANY, at[3],
                                       at[4], command_buffer, no_bindings);
    if (weft_status_is_ok(status)) accepted = 4;
  }
  if (weft_status_is_ok(status)) {
    status = weft_device_queue_read(device, WEFT_QUEUE_AFFINITY_ANY, at[4],
                                    at[5], file, 0, filled, 0, length);
    if (weft_status_is_ok(status)) accepted = 5;
  }

  if (gate) {
    // Open the gate: the parked chain runs (inline on local-sync). If a
    // submit failed, fail the gate instead so the parked part unwinds.
    if (weft_status_is_ok(status)) {
      status = weft_semaphore_signal(gate, gate_value);
    }
    if (!weft_status_is_ok(status)) {
      weft_semaphore_fail(gate, weft_status_clone(status));
    }
  }
  if (weft_status_is_ok(status)) {
    // Everything was accepted: the fence (timeline >= 5) reports the chain.
    status = weft_fence_wait(fence, weft_timeout_relative(10ll * 1000000000));
  } else if (accepted > 0) {
    // A submission failed: let the accepted part retire before releasing.
    // Its own outcome does not matter here; the first error is the result.
    weft_status_ignore(weft_semaphore_wait(
        timeline, accepted, weft_timeout_relative(10ll * 1000000000)));
  }
  if (weft_status_is_ok(status)) {
    status = verify(scenario, filled, file_data, scaled, absolute);
  }

  if (file) weft_file_release(file);
  if (command_buffer) weft_command_buffer_release(command_buffer);
  if (fence) weft_fence_release(fence);
  if (gate) weft_semaphore_release(gate);
  if (timeline) weft_semaphore_release(timeline);
  for (size_t i = 0; i < 4; ++i) {
    if (*buffers[i]) weft_buffer_release(*buffers[i]);
  }
  if (kernels) weft_executable_release(kernels);
  if (device) weft_device_release(device);
  return status;
}

// --- The test ---------------------------------------------------------------

// Runs the scenario with allocation N failing for N = 0, 1, ... until a run
// sees no injected failure, checking every run as described at the top.
static void run_every_failure(int gated) {
  const char* device_string = getenv("WEFT_CTS_DRIVER");
  if (!device_string || !*device_string) device_string = "local-sync";
  const char* verbose_env = getenv("WEFT_FAULT_VERBOSE");
  const int verbose = verbose_env && verbose_env[0] == '1';
  const char* mode = gated ? "gated" : "immediate";

  int64_t runs = 0, runs_with_failure = 0, final_allocations = -1;
  int finished = 0;
  for (int64_t fail_at = 0; fail_at < MAX_RUNS && !finished; ++fail_at) {
    // Live allocations must be 0 after every run.
    weft_cts_counting_allocator_t counter;
    const weft_allocator_t counting = weft_cts_counting_allocator_initialize(
        weft_allocator_system(), &counter);
    weft_failing_allocator_t failing;
    scenario_t scenario = {
        device_string,
        weft_failing_allocator_initialize(counting, fail_at, &failing), gated,
        0};
    weft_status_t status = run_scenario(&scenario);
    ++runs;
    const int64_t injected = failing.failure_count;
    const int64_t live = weft_cts_counting_allocator_live(&counter);
    const weft_status_code_t code = weft_status_code(status);
    if (verbose || (injected > 0 && code != WEFT_STATUS_RESOURCE_EXHAUSTED) ||
        (injected == 0 && code != WEFT_STATUS_OK)) {
      printf("%s run %lld: %lld requests, %lld failed, %lld live: ", mode,
             (long long)fail_at, (long long)failing.request_count,
             (long long)injected, (long long)live);
      if (weft_status_is_ok(status)) {
        printf("OK\n");
      } else {
        weft_status_fprint(stdout, status);
      }
      fflush(stdout);
    }
    weft_status_free(status);

    if (live != 0) {
      fail_msg("%s run %lld (allocation %lld fails): %lld allocations leaked",
               mode, (long long)fail_at, (long long)fail_at, (long long)live);
    }
    if (injected == 0) {
      // Nothing was injected: this is the full scenario and must pass.
      if (code != WEFT_STATUS_OK) {
        fail_msg("%s run %lld: failed with no injected failure", mode,
                 (long long)fail_at);
      }
      if (scenario.wrong_results) {
        fail_msg("%s run %lld: the scenario computed wrong results", mode,
                 (long long)fail_at);
      }
      final_allocations = failing.request_count;
      finished = 1;
    } else {
      ++runs_with_failure;
      if (code == WEFT_STATUS_OK) {
        fail_msg(
            "%s run %lld: allocation %lld failed but the scenario "
            "returned OK (an error was swallowed)",
            mode, (long long)fail_at, (long long)fail_at);
      } else if (code != WEFT_STATUS_RESOURCE_EXHAUSTED) {
        fail_msg("%s run %lld: expected RESOURCE_EXHAUSTED, got %s", mode,
                 (long long)fail_at, weft_status_code_string(code));
      }
    }
  }
  printf(
      "fault.injection %s on %s: %lld runs, %lld with an injected "
      "failure, final run made %lld allocations and passed\n",
      mode, device_string, (long long)runs, (long long)runs_with_failure,
      (long long)final_allocations);
  assert_true(finished);
  assert_true(runs_with_failure > 0);
}

static void immediate_chain(void** state) {
  (void)state;
  run_every_failure(/*gated=*/0);
}

static void gated_chain(void** state) {
  (void)state;
  run_every_failure(/*gated=*/1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(immediate_chain),
      cmocka_unit_test(gated_chain),
  };
  return cmocka_run_group_tests_name("fault", tests, NULL, NULL);
}
