// Unit tests for the block processor: the one-worker path, many threads
// draining one context, workgroup counts from 1 to 100,000, transfers split
// in tiles, region ordering, tile claiming across region transitions with
// stale workers, failures, processor ids and per-worker scratch memory,
// the lane a drainer's seat starts it on, the desired worker count,
// submission-time errors.
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
// clang-format off
#include <cmocka.h>
// clang-format on

#include "base/atomics.h"
#include "base/thread.h"
#include "block_test_util.h"
#include "hal/local/transient_buffer.h"
#include "weft/time.h"

static const weft_binding_table_t kNoTable = {0, NULL};

// --- One worker

static void single_worker_runs_everything_in_one_call(void** state) {
  (void)state;
  weft_executable_t* executable = test_executable();
  weft_buffer_t* a = test_buffer(1000);
  weft_buffer_t* b = test_buffer(1000);
  weft_buffer_t* ids = test_buffer(6 * 4 * 16);
  uint8_t update_data[100];
  for (uint32_t i = 0; i < sizeof(update_data); ++i)
    update_data[i] = (uint8_t)i;
  weft_buffer_ref_t id_binding =
      weft_make_buffer_ref(ids, 0, WEFT_WHOLE_BUFFER);
  test_commands_t list = {0};
  test_commands_push(&list,
                     test_fill(weft_make_buffer_ref(a, 0, 1000), 0x5A, 1));
  test_commands_push(&list, test_dispatch(executable, KERNEL_IDS, 3, 2, 1, 0,
                                          NULL, 1, &id_binding));
  test_commands_push(&list, test_barrier());
  test_commands_push(
      &list, test_update(weft_make_buffer_ref(a, 100, 100), update_data));
  test_commands_push(&list, test_barrier());
  test_commands_push(&list, test_copy(weft_make_buffer_ref(a, 0, 1000),
                                      weft_make_buffer_ref(b, 0, 1000)));
  weft_block_recording_t* recording = test_build(&list, NULL);

  weft_block_processor_params_t params = {0};
  params.worker_count = 1;
  weft_block_processor_context_t* context = NULL;
  assert_ok(weft_block_processor_context_create(
      recording, kNoTable, &params, weft_allocator_system(), &context));
  assert_int_equal(weft_block_processor_desired_workers(context), 1);
  assert_false(weft_block_processor_is_completed(context));
  assert_int_equal(weft_block_processor_drain(context, 0, NULL, 0),
                   WEFT_BLOCK_DRAIN_COMPLETED);
  assert_true(weft_block_processor_is_completed(context));
  assert_int_equal(weft_block_processor_desired_workers(context), 0);
  assert_int_equal(weft_block_processor_drain(context, 0, NULL, 0),
                   WEFT_BLOCK_DRAIN_COMPLETED);
  assert_ok(weft_block_processor_consume_status(context));
  weft_block_processor_context_free(context);

  uint8_t* data = (uint8_t*)test_read(b, 0, 1000);
  for (uint32_t i = 0; i < 1000; ++i) {
    uint8_t expected = i >= 100 && i < 200 ? (uint8_t)(i - 100) : 0x5A;
    assert_int_equal(data[i], expected);
  }
  free(data);
  uint32_t* id_data = (uint32_t*)test_read(ids, 0, 6 * 16);
  for (uint32_t flat = 0; flat < 6; ++flat) {
    assert_int_equal(id_data[flat * 4 + 0], flat % 3);
    assert_int_equal(id_data[flat * 4 + 1], flat / 3);
    assert_int_equal(id_data[flat * 4 + 2], 0);
    assert_int_equal(id_data[flat * 4 + 3], flat);
  }
  free(id_data);
  weft_block_recording_free(recording);
  test_commands_free(&list);
  weft_buffer_release(a);
  weft_buffer_release(b);
  weft_buffer_release(ids);
  weft_executable_release(executable);
}

// --- Many workers, many workgroups

// Every workgroup runs exactly once and sees a processor id below the
// worker count, for 1, 7, 1024 and 100,000 workgroups on 1, 2 and 7
// workers, with automatic and fixed tile sizes.
static void workgroups_run_exactly_once(void** state) {
  (void)state;
  weft_executable_t* executable = test_executable();
  const uint32_t counts[] = {1, 7, 1024, 100000};
  const uint32_t workers[] = {1, 2, 7};
  const uint32_t tile_sizes[] = {0, 1, 13};
  for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); ++c) {
    uint32_t n = counts[c];
    for (size_t t = 0; t < sizeof(tile_sizes) / sizeof(tile_sizes[0]); ++t) {
      weft_buffer_t* counters = test_buffer(n * 4);
      weft_buffer_t* owners = test_buffer(n * 4);
      weft_buffer_ref_t bindings[2] = {
          weft_make_buffer_ref(counters, 0, WEFT_WHOLE_BUFFER),
          weft_make_buffer_ref(owners, 0, WEFT_WHOLE_BUFFER),
      };
      test_commands_t list = {0};
      test_commands_push(&list, test_dispatch(executable, KERNEL_COUNT, n, 1, 1,
                                              0, NULL, 2, bindings));
      weft_block_builder_options_t options = {0};
      options.dispatch_tile_size = tile_sizes[t];
      weft_block_recording_t* recording = test_build(&list, &options);
      for (size_t w = 0; w < sizeof(workers) / sizeof(workers[0]); ++w) {
        uint32_t zero = 0;
        assert_ok(weft_buffer_map_fill(counters, 0, n * 4, &zero, 4));
        assert_ok(test_run(recording, kNoTable, workers[w], 0));
        uint32_t* counter_data = (uint32_t*)test_read(counters, 0, n * 4);
        uint32_t* owner_data = (uint32_t*)test_read(owners, 0, n * 4);
        for (uint32_t i = 0; i < n; ++i) {
          if (counter_data[i] != 1) {
            fail_msg("workgroup %u of %u ran %u times (%u workers, tile %u)", i,
                     n, counter_data[i], workers[w], tile_sizes[t]);
          }
          assert_true(owner_data[i] >= 1 && owner_data[i] <= workers[w]);
        }
        free(counter_data);
        free(owner_data);
      }
      weft_block_recording_free(recording);
      test_commands_free(&list);
      weft_buffer_release(counters);
      weft_buffer_release(owners);
    }
  }
  weft_executable_release(executable);
}

// Three-dimensional counts map tiles back to the right (x, y, z).
static void three_dimensional_ids(void** state) {
  (void)state;
  weft_executable_t* executable = test_executable();
  const uint32_t x = 37, y = 5, z = 3, n = x * y * z;
  weft_buffer_t* out = test_buffer(n * 16);
  weft_buffer_ref_t binding = weft_make_buffer_ref(out, 0, WEFT_WHOLE_BUFFER);
  test_commands_t list = {0};
  test_commands_push(&list, test_dispatch(executable, KERNEL_IDS, x, y, z, 0,
                                          NULL, 1, &binding));
  weft_block_builder_options_t options = {0};
  options.dispatch_tile_size = 7;  // tiles straddle rows and slices
  weft_block_recording_t* recording = test_build(&list, &options);
  assert_ok(test_run(recording, kNoTable, 3, 0));
  uint32_t* data = (uint32_t*)test_read(out, 0, n * 16);
  for (uint32_t flat = 0; flat < n; ++flat) {
    assert_int_equal(data[flat * 4 + 0], flat % x);
    assert_int_equal(data[flat * 4 + 1], (flat / x) % y);
    assert_int_equal(data[flat * 4 + 2], flat / (x * y));
    assert_int_equal(data[flat * 4 + 3], flat);
  }
  free(data);
  weft_block_recording_free(recording);
  test_commands_free(&list);
  weft_buffer_release(out);
  weft_executable_release(executable);
}

// Fills, copies and updates split into many tiles, over several regions.
static void transfers_in_tiles(void** state) {
  (void)state;
  const uint32_t size = 1u << 20;
  weft_buffer_t* a = test_buffer(size);
  weft_buffer_t* b = test_buffer(size);
  uint8_t* update_data = (uint8_t*)malloc(10000);
  for (uint32_t i = 0; i < 10000; ++i) update_data[i] = (uint8_t)(i * 13);
  test_commands_t list = {0};
  test_commands_push(&list,
                     test_fill(weft_make_buffer_ref(a, 0, size), 0xBEEF, 2));
  test_commands_push(&list, test_barrier());
  test_commands_push(&list, test_copy(weft_make_buffer_ref(a, 0, size),
                                      weft_make_buffer_ref(b, 0, size)));
  test_commands_push(&list, test_barrier());
  test_commands_push(
      &list, test_update(weft_make_buffer_ref(b, 8, 10000), update_data));
  test_commands_push(&list,
                     test_fill(weft_make_buffer_ref(b, 20003, 5001), 0x77, 1));
  test_commands_push(
      &list, test_fill(weft_make_buffer_ref(b, 40000, 40000), 0x01020304u, 4));
  weft_block_builder_options_t options = {0};
  options.transfer_tile_bytes = 4096;
  options.block_size = 1024;
  weft_block_recording_t* recording = test_build(&list, &options);
  free(update_data);
  for (uint32_t workers = 1; workers <= 4; workers += 3) {
    uint32_t zero = 0;
    assert_ok(weft_buffer_map_fill(b, 0, size, &zero, 4));
    assert_ok(test_run(recording, kNoTable, workers, 0));
    uint8_t* data = (uint8_t*)test_read(b, 0, size);
    for (uint32_t i = 0; i < size; ++i) {
      uint8_t expected = i % 2 ? 0xBE : 0xEF;
      if (i >= 8 && i < 10008) expected = (uint8_t)((i - 8) * 13);
      if (i >= 20003 && i < 25004) expected = 0x77;
      if (i >= 40000 && i < 80000) expected = (uint8_t)(4 - i % 4);
      if (data[i] != expected) {
        fail_msg("byte %u is 0x%02x, expected 0x%02x (%u workers)", i, data[i],
                 expected, workers);
      }
    }
    free(data);
  }
  weft_block_recording_free(recording);
  test_commands_free(&list);
  weft_buffer_release(a);
  weft_buffer_release(b);
}

// --- Regions and stale workers

typedef struct region_program_t {
  weft_executable_t* executable;
  weft_buffer_t* counters;  // region_count * n
  weft_buffer_t* owners;
  weft_buffer_t* ping[2];
  uint32_t (*constants)[2];
  weft_buffer_ref_t (*count_bindings)[2];
  weft_buffer_ref_t ping_bindings[2][2];
  test_commands_t list;
  weft_block_recording_t* recording;
  uint32_t region_count;
  uint32_t n;
  bool with_count;
} region_program_t;

// Region r runs COUNT over slice r of the counters (so a tile run in the
// wrong region, or twice, shows) and PING_PONG from ping[r % 2] to
// ping[1 - r % 2] expecting every element to be r (so a tile that ran
// before region r - 1 finished fails with code 7).
static void region_program_initialize(uint32_t region_count, uint32_t n,
                                      bool with_count,
                                      region_program_t* program) {
  memset(program, 0, sizeof(*program));
  program->executable = test_executable();
  program->region_count = region_count;
  program->n = n;
  program->with_count = with_count;
  program->counters = test_buffer((weft_device_size_t)region_count * n * 4);
  program->owners = test_buffer((weft_device_size_t)region_count * n * 4);
  program->ping[0] = test_buffer(n * 4);
  program->ping[1] = test_buffer(n * 4);
  program->constants = calloc(region_count, sizeof(*program->constants));
  program->count_bindings =
      calloc(region_count, sizeof(*program->count_bindings));
  for (uint32_t p = 0; p < 2; ++p) {
    program->ping_bindings[p][0] =
        weft_make_buffer_ref(program->ping[p], 0, WEFT_WHOLE_BUFFER);
    program->ping_bindings[p][1] =
        weft_make_buffer_ref(program->ping[1 - p], 0, WEFT_WHOLE_BUFFER);
  }
  for (uint32_t r = 0; r < region_count; ++r) {
    if (r > 0) test_commands_push(&program->list, test_barrier());
    program->count_bindings[r][0] =
        weft_make_buffer_ref(program->counters, (uint64_t)r * n * 4, n * 4);
    program->count_bindings[r][1] =
        weft_make_buffer_ref(program->owners, (uint64_t)r * n * 4, n * 4);
    if (with_count) {
      test_commands_push(
          &program->list,
          test_dispatch(program->executable, KERNEL_COUNT, n, 1, 1, 0, NULL, 2,
                        program->count_bindings[r]));
    }
    program->constants[r][0] = n;
    program->constants[r][1] = r;
    test_commands_push(
        &program->list,
        test_dispatch(program->executable, KERNEL_PING_PONG, n, 1, 1, 2,
                      program->constants[r], 2, program->ping_bindings[r % 2]));
  }
  weft_block_builder_options_t options = {0};
  options.dispatch_tile_size = 1;
  program->recording = test_build(&program->list, &options);
}

static void region_program_reset(region_program_t* program) {
  uint32_t zero = 0;
  assert_ok(weft_buffer_map_fill(
      program->counters, 0,
      (weft_device_size_t)program->region_count * program->n * 4, &zero, 4));
  assert_ok(
      weft_buffer_map_fill(program->ping[0], 0, program->n * 4, &zero, 4));
  assert_ok(
      weft_buffer_map_fill(program->ping[1], 0, program->n * 4, &zero, 4));
}

static void region_program_check(region_program_t* program) {
  uint32_t total = program->region_count * program->n;
  uint32_t* counters = (uint32_t*)test_read(program->counters, 0, total * 4);
  for (uint32_t i = 0; program->with_count && i < total; ++i) {
    if (counters[i] != 1) {
      fail_msg("region %u workgroup %u ran %u times", i / program->n,
               i % program->n, counters[i]);
    }
  }
  free(counters);
  uint32_t* last = (uint32_t*)test_read(
      program->ping[program->region_count % 2], 0, program->n * 4);
  for (uint32_t i = 0; i < program->n; ++i) {
    assert_int_equal(last[i], program->region_count);
  }
  free(last);
}

static void region_program_deinitialize(region_program_t* program) {
  weft_block_recording_free(program->recording);
  test_commands_free(&program->list);
  weft_buffer_release(program->counters);
  weft_buffer_release(program->owners);
  weft_buffer_release(program->ping[0]);
  weft_buffer_release(program->ping[1]);
  free(program->constants);
  free(program->count_bindings);
  weft_executable_release(program->executable);
}

// Tiles of region k + 1 see every write of region k.
static void regions_are_ordered(void** state) {
  (void)state;
  region_program_t program;
  region_program_initialize(40, 32, true, &program);
  assert_int_equal(program.recording->region_count, 40);
  for (uint32_t workers = 1; workers <= 8; workers *= 2) {
    for (uint32_t repeat = 0; repeat < 3; ++repeat) {
      region_program_reset(&program);
      assert_ok(test_run(program.recording, kNoTable, workers, 0));
      region_program_check(&program);
    }
  }
  region_program_deinitialize(&program);
}

typedef struct stale_state_t {
  weft_block_processor_context_t* context;
  weft_atomic_uint32_t regions_opened;
  weft_atomic_uint32_t hook_calls;
  // Hook calls that waited until the region they read had ended.
  weft_atomic_uint32_t stale_claims;
  // Set by worker 1 in its first hook call, as it starts waiting for the
  // region it read to end. Until then the other workers claim nothing, so
  // that region is still open when worker 1 reads it, and ends while it
  // waits: at least one stale claim per run, whatever the scheduling.
  weft_atomic_uint32_t arranged;
} stale_state_t;

// How long a hook waits for what the case arranges before it gives up
// (the case then fails on its counts): an event of the case, not the
// clock, ends every wait of a working run.
#define STALE_GIVE_UP_NS (60ll * 1000 * 1000 * 1000)

static void stale_region_ready(void* user_data, uint32_t desired_workers) {
  stale_state_t* stale = (stale_state_t*)user_data;
  weft_atomic_fetch_add(&stale->regions_opened, 1, memory_order_relaxed);
}

// Waits until region |epoch| has ended (region_ready ran epoch + 1 times)
// or the context completed; counts a stale claim in the first case.
static void stale_wait_for_region_end(stale_state_t* stale, uint32_t epoch) {
  weft_time_t deadline = weft_time_now() + STALE_GIVE_UP_NS;
  while (weft_atomic_load(&stale->regions_opened, memory_order_relaxed) <=
             epoch &&
         !weft_block_processor_is_completed(stale->context) &&
         weft_time_now() < deadline) {
    weft_thread_yield();
  }
  if (weft_atomic_load(&stale->regions_opened, memory_order_relaxed) > epoch) {
    weft_atomic_fetch_add(&stale->stale_claims, 1, memory_order_relaxed);
  }
}

// Worker 1's first call waits for the region it read to end while the
// others, held back until then, end it. After that, odd workers on every
// other claim stop between reading the claim word and claiming until the
// region they read has ended: their claim attempt then carries a stale
// epoch. Other calls shuffle timing with yields.
static void stale_claim_hook(void* user_data, uint32_t worker_index,
                             uint32_t epoch, uint32_t tile) {
  stale_state_t* stale = (stale_state_t*)user_data;
  uint32_t call =
      weft_atomic_fetch_add(&stale->hook_calls, 1, memory_order_relaxed);
  if (worker_index == 1 &&
      !weft_atomic_load(&stale->arranged, memory_order_relaxed)) {
    // Only worker 1 writes it. Release: the others that see it go on.
    weft_atomic_store(&stale->arranged, 1, memory_order_release);
    stale_wait_for_region_end(stale, epoch);
    return;
  }
  if (worker_index != 1) {
    weft_time_t deadline = weft_time_now() + STALE_GIVE_UP_NS;
    while (!weft_atomic_load(&stale->arranged, memory_order_acquire) &&
           weft_time_now() < deadline) {
      weft_thread_yield();
    }
  }
  if (worker_index % 2 == 1 && call % 2 == 0) {
    stale_wait_for_region_end(stale, epoch);
  } else if (call % 3 == 0) {
    weft_thread_yield();
  }
}

// Workers delayed between reading the claim word and claiming never claim
// a tile of a later region with a stale epoch: every tile runs exactly
// once, in its region, after the previous region finished.
static void stale_workers_cannot_claim_across_regions(void** state) {
  (void)state;
  region_program_t program;
  region_program_initialize(30, 24, true, &program);
  for (uint32_t attempt = 0; attempt < 10; ++attempt) {
    region_program_reset(&program);
    stale_state_t stale;
    memset(&stale, 0, sizeof(stale));
    weft_block_processor_params_t params = {0};
    params.worker_count = 4;
    params.region_ready = stale_region_ready;
    params.region_ready_user_data = &stale;
    params.claim_hook = stale_claim_hook;
    params.claim_hook_user_data = &stale;
    assert_ok(weft_block_processor_context_create(
        program.recording, kNoTable, &params, weft_allocator_system(),
        &stale.context));
    assert_ok(test_run_threads(stale.context, 4, 0));
    weft_block_processor_context_free(stale.context);
    region_program_check(&program);
    assert_int_equal(
        weft_atomic_load(&stale.regions_opened, memory_order_relaxed), 29);
    // The scenario happened (worker 1 at least tried a stale claim).
    assert_true(weft_atomic_load(&stale.stale_claims, memory_order_relaxed) >
                0);
  }
  region_program_deinitialize(&program);
}

// --- Failures

static void kernel_failure_stops_later_regions(void** state) {
  (void)state;
  weft_executable_t* executable = test_executable();
  weft_buffer_t* marker = test_buffer(4);
  weft_buffer_t* counters = test_buffer(1000 * 4);
  weft_buffer_t* owners = test_buffer(1000 * 4);
  weft_buffer_ref_t marker_ref = weft_make_buffer_ref(marker, 0, 4);
  weft_buffer_ref_t count_bindings[2] = {
      weft_make_buffer_ref(counters, 0, WEFT_WHOLE_BUFFER),
      weft_make_buffer_ref(owners, 0, WEFT_WHOLE_BUFFER),
  };
  const uint32_t fail_constants[2] = {555, 3};
  test_commands_t list = {0};
  test_commands_push(&list, test_fill(marker_ref, 1, 4));
  test_commands_push(&list, test_barrier());
  test_commands_push(&list, test_dispatch(executable, KERNEL_FAIL, 10, 10, 10,
                                          2, fail_constants, 1, &marker_ref));
  test_commands_push(&list, test_dispatch(executable, KERNEL_COUNT, 1000, 1, 1,
                                          0, NULL, 2, count_bindings));
  test_commands_push(&list, test_barrier());
  test_commands_push(&list, test_fill(marker_ref, 2, 4));
  for (uint32_t tile_size = 0; tile_size <= 1; ++tile_size) {
    weft_block_builder_options_t options = {0};
    options.dispatch_tile_size = tile_size;
    weft_block_recording_t* recording = test_build(&list, &options);
    for (uint32_t workers = 1; workers <= 4; ++workers) {
      assert_status(test_run(recording, kNoTable, workers, 0), INTERNAL,
                    "kernel 'fail' (library 'block_test') failed in workgroup "
                    "(5, 5, 5) with code 3");
      uint32_t* data = (uint32_t*)test_read(marker, 0, 4);
      assert_int_equal(*data, 1);  // the last region never ran
      free(data);
    }
    weft_block_recording_free(recording);
  }
  test_commands_free(&list);

  // Two failing dispatches in one region: one failure wins, the other is
  // freed; a context freed without consuming its failure leaks nothing.
  const uint32_t other_constants[2] = {7, 4};
  test_commands_push(&list, test_dispatch(executable, KERNEL_FAIL, 100, 1, 1, 2,
                                          fail_constants, 1, &marker_ref));
  test_commands_push(&list, test_dispatch(executable, KERNEL_FAIL, 100, 1, 1, 2,
                                          other_constants, 1, &marker_ref));
  weft_block_builder_options_t options = {0};
  options.dispatch_tile_size = 1;
  weft_block_recording_t* recording = test_build(&list, &options);
  assert_status(test_run(recording, kNoTable, 4, 0), INTERNAL,
                "with code 4");  // 555 is past the 100 workgroups
  weft_block_processor_params_t params = {0};
  params.worker_count = 2;
  weft_block_processor_context_t* context = NULL;
  assert_ok(weft_block_processor_context_create(
      recording, kNoTable, &params, weft_allocator_system(), &context));
  while (weft_block_processor_drain(context, 0, NULL, 0) !=
         WEFT_BLOCK_DRAIN_COMPLETED) {
  }
  weft_block_processor_context_free(context);
  weft_block_recording_free(recording);
  test_commands_free(&list);
  weft_buffer_release(marker);
  weft_buffer_release(counters);
  weft_buffer_release(owners);
  weft_executable_release(executable);
}

typedef struct abort_state_t {
  weft_block_processor_context_t* context;
  weft_atomic_uint32_t ready_count;
  weft_atomic_uint32_t aborted;
} abort_state_t;

static void abort_on_first_region_ready(void* user_data,
                                        uint32_t desired_workers) {
  abort_state_t* abort_state = (abort_state_t*)user_data;
  if (weft_atomic_fetch_add(&abort_state->ready_count, 1,
                            memory_order_relaxed) == 0) {
    weft_block_processor_abort(
        abort_state->context,
        WEFT_STATUS(CANCELLED, "test: the queue is shutting down"));
    // Release: the claim hook's acquire sees the abort recorded.
    weft_atomic_store(&abort_state->aborted, 1, memory_order_release);
  }
}

// Holds claims in regions after the first until the abort landed, so a
// worker cannot finish region 1 (and open region 2) while the thread that
// opened it is still on its way into the callback (a preempted thread made
// the test flaky on a loaded machine).
static void hold_claims_until_aborted(void* user_data, uint32_t worker_index,
                                      uint32_t epoch, uint32_t tile) {
  abort_state_t* abort_state = (abort_state_t*)user_data;
  while (epoch >= 1 &&
         !weft_atomic_load(&abort_state->aborted, memory_order_acquire)) {
    weft_thread_yield();
  }
}

// Aborting (as a cancelled queue does) skips what has not started: tiles of
// the region open when aborting that were not claimed yet are skipped, and
// later regions never open.
static void abort_skips_remaining_work(void** state) {
  (void)state;
  weft_executable_t* executable = test_executable();
  weft_buffer_t* counters = test_buffer(3 * 500 * 4);
  weft_buffer_t* owners = test_buffer(3 * 500 * 4);
  weft_buffer_ref_t bindings[3][2];
  test_commands_t list = {0};
  for (uint32_t r = 0; r < 3; ++r) {
    if (r > 0) test_commands_push(&list, test_barrier());
    bindings[r][0] = weft_make_buffer_ref(counters, r * 2000, 2000);
    bindings[r][1] = weft_make_buffer_ref(owners, r * 2000, 2000);
    test_commands_push(&list, test_dispatch(executable, KERNEL_COUNT, 500, 1, 1,
                                            0, NULL, 2, bindings[r]));
  }
  weft_block_builder_options_t options = {0};
  options.dispatch_tile_size = 1;
  weft_block_recording_t* recording = test_build(&list, &options);
  abort_state_t abort_state;
  memset(&abort_state, 0, sizeof(abort_state));
  weft_block_processor_params_t params = {0};
  params.worker_count = 3;
  params.region_ready = abort_on_first_region_ready;
  params.region_ready_user_data = &abort_state;
  params.claim_hook = hold_claims_until_aborted;
  params.claim_hook_user_data = &abort_state;
  assert_ok(weft_block_processor_context_create(recording, kNoTable, &params,
                                                weft_allocator_system(),
                                                &abort_state.context));
  assert_status(test_run_threads(abort_state.context, 3, 0), CANCELLED,
                "the queue is shutting down");
  weft_block_processor_context_free(abort_state.context);
  assert_int_equal(
      weft_atomic_load(&abort_state.ready_count, memory_order_relaxed), 1);
  uint32_t* data = (uint32_t*)test_read(counters, 0, 3 * 2000);
  for (uint32_t i = 0; i < 1500; ++i) {
    if (i < 500) {
      assert_int_equal(data[i], 1);
    } else if (i < 1000) {
      // Workers may have started region 1 before the abort landed.
      assert_true(data[i] <= 1);
    } else {
      assert_int_equal(data[i], 0);
    }
  }
  free(data);
  weft_block_recording_free(recording);
  test_commands_free(&list);
  weft_buffer_release(counters);
  weft_buffer_release(owners);
  weft_executable_release(executable);
}

// --- Processor ids and scratch

static void processor_ids_and_scratch_per_worker(void** state) {
  (void)state;
  weft_executable_t* executable = test_executable();
  const uint32_t n = 2000;
  const uint32_t worker_count = 6;
  weft_buffer_t* owners = test_buffer(n * 4);
  weft_buffer_t* addresses = test_buffer(n * 8);
  weft_buffer_ref_t bindings[2] = {
      weft_make_buffer_ref(owners, 0, WEFT_WHOLE_BUFFER),
      weft_make_buffer_ref(addresses, 0, WEFT_WHOLE_BUFFER),
  };
  test_commands_t list = {0};
  test_commands_push(&list, test_dispatch(executable, KERNEL_SCRATCH, n, 1, 1,
                                          1, &worker_count, 2, bindings));
  weft_block_builder_options_t options = {0};
  options.dispatch_tile_size = 3;
  weft_block_recording_t* recording = test_build(&list, &options);
  assert_int_equal(recording->max_local_memory_size, 256);
  assert_ok(test_run(recording, kNoTable, worker_count, 0));
  uint32_t* owner_data = (uint32_t*)test_read(owners, 0, n * 4);
  uint64_t* address_data = (uint64_t*)test_read(addresses, 0, n * 8);
  uint64_t address_of[6] = {0};
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t id = owner_data[i] - 1;
    assert_true(id < worker_count);
    if (address_of[id] == 0) address_of[id] = address_data[i];
    // A worker always gets its own scratch.
    assert_int_equal(address_of[id], address_data[i]);
  }
  for (uint32_t a = 0; a < worker_count; ++a) {
    for (uint32_t b = a + 1; b < worker_count; ++b) {
      if (address_of[a] && address_of[b]) {
        assert_true(address_of[a] != address_of[b]);
      }
    }
  }
  free(owner_data);
  free(address_data);

  // Scratch smaller than the kernel needs: RESOURCE_EXHAUSTED naming both.
  weft_block_processor_params_t params = {0};
  params.worker_count = 1;
  weft_block_processor_context_t* context = NULL;
  assert_ok(weft_block_processor_context_create(
      recording, kNoTable, &params, weft_allocator_system(), &context));
  uint8_t small[16];
  assert_int_equal(weft_block_processor_drain(context, 0, small, sizeof(small)),
                   WEFT_BLOCK_DRAIN_COMPLETED);
  assert_status(weft_block_processor_consume_status(context),
                RESOURCE_EXHAUSTED,
                "kernel 'scratch' (library 'block_test') needs 256 bytes of "
                "local memory but worker 0 has 16");
  weft_block_processor_context_free(context);
  weft_block_recording_free(recording);
  test_commands_free(&list);
  weft_buffer_release(owners);
  weft_buffer_release(addresses);
  weft_executable_release(executable);
}

// --- Seats

// Records the tile of each claim a drainer starts holding nothing.
typedef struct first_claims_t {
  uint32_t count;
  uint32_t tiles[8];
} first_claims_t;

static void record_first_claim(void* user_data, uint32_t worker_index,
                               uint32_t epoch, uint32_t tile) {
  first_claims_t* claims = (first_claims_t*)user_data;
  if (claims->count < 8) claims->tiles[claims->count] = tile;
  ++claims->count;
}

// The tile drainer |worker| claims first in one 8-tile dispatch laid out
// for two drainers (two lanes: tiles 0-3 and 4-7) among three worker
// indices, with |seats| (NULL: each index is its own seat).
static uint32_t first_tile_claimed(const weft_block_recording_t* recording,
                                   const uint32_t* seats, uint32_t worker) {
  first_claims_t claims = {0};
  weft_block_processor_params_t params = {0};
  params.worker_count = 3;
  params.layout_worker_count = 2;
  params.seats = seats;
  params.claim_hook = record_first_claim;
  params.claim_hook_user_data = &claims;
  weft_block_processor_context_t* context = NULL;
  assert_ok(weft_block_processor_context_create(
      recording, kNoTable, &params, weft_allocator_system(), &context));
  while (weft_block_processor_drain(context, worker, NULL, 0) !=
         WEFT_BLOCK_DRAIN_COMPLETED) {
  }
  assert_ok(weft_block_processor_consume_status(context));
  weft_block_processor_context_free(context);
  assert_true(claims.count >= 1);
  return claims.tiles[0];
}

// A drainer starts claiming on its seat's lane, not its index's: a host
// drainer (index 2) seated in the standby's place (seat 1) starts on lane
// 1, so it and worker 0 each keep a lane of their own from one dispatch to
// the next; without the seats index 2 shares worker 0's lane 0.
static void seats_pick_the_first_lane(void** state) {
  (void)state;
  weft_executable_t* executable = test_executable();
  test_commands_t list = {0};
  test_commands_push(&list, test_dispatch(executable, KERNEL_EMPTY, 8, 1, 1, 0,
                                          NULL, 0, NULL));
  weft_block_builder_options_t options = {0};
  options.dispatch_tile_size = 1;
  weft_block_recording_t* recording = test_build(&list, &options);
  const uint32_t seats[3] = {0, 1, 1};
  assert_int_equal(first_tile_claimed(recording, seats, 0), 0);
  assert_int_equal(first_tile_claimed(recording, seats, 1), 4);
  assert_int_equal(first_tile_claimed(recording, seats, 2), 4);
  assert_int_equal(first_tile_claimed(recording, NULL, 1), 4);
  assert_int_equal(first_tile_claimed(recording, NULL, 2), 0);
  weft_block_recording_free(recording);
  test_commands_free(&list);
  weft_executable_release(executable);
}

// --- Scheduling signals

typedef struct ready_log_t {
  uint32_t count;
  uint32_t desired[8];
} ready_log_t;

static void log_region_ready(void* user_data, uint32_t desired_workers) {
  ready_log_t* log = (ready_log_t*)user_data;
  if (log->count < 8) log->desired[log->count] = desired_workers;
  ++log->count;
}

// The worker opening a region reports min(tiles, workers); empty regions
// are skipped; completion reports 0.
static void desired_workers_follow_regions(void** state) {
  (void)state;
  weft_executable_t* executable = test_executable();
  weft_buffer_t* buffer = test_buffer(64);
  test_commands_t list = {0};
  test_commands_push(&list, test_dispatch(executable, KERNEL_EMPTY, 1, 1, 1, 0,
                                          NULL, 0, NULL));
  test_commands_push(&list, test_barrier());
  test_commands_push(&list, test_dispatch(executable, KERNEL_EMPTY, 100, 1, 1,
                                          0, NULL, 0, NULL));
  test_commands_push(&list, test_barrier());
  // A region whose only command is empty through the table (0 bytes).
  test_commands_push(
      &list,
      test_fill(weft_make_indirect_buffer_ref(0, 0, WEFT_WHOLE_BUFFER), 0, 4));
  test_commands_push(&list, test_barrier());
  test_commands_push(&list, test_dispatch(executable, KERNEL_EMPTY, 3, 1, 1, 0,
                                          NULL, 0, NULL));
  weft_block_builder_options_t options = {0};
  options.dispatch_tile_size = 1;
  weft_block_recording_t* recording = test_build(&list, &options);
  assert_int_equal(recording->region_count, 4);
  weft_buffer_binding_t binding = {buffer, 64, 0};
  ready_log_t log = {0};
  weft_block_processor_params_t params = {0};
  params.worker_count = 8;
  params.region_ready = log_region_ready;
  params.region_ready_user_data = &log;
  weft_block_processor_context_t* context = NULL;
  assert_ok(weft_block_processor_context_create(
      recording, (weft_binding_table_t){1, &binding}, &params,
      weft_allocator_system(), &context));
  assert_int_equal(weft_block_processor_desired_workers(context), 1);
  uint32_t calls = 0;
  weft_block_drain_result_t result;
  do {
    result = weft_block_processor_drain(context, 0, NULL, 0);
    assert_true(result != WEFT_BLOCK_DRAIN_NO_WORK);
    ++calls;
  } while (result != WEFT_BLOCK_DRAIN_COMPLETED);
  assert_true(calls >= 2);  // 104 tiles, at most 64 per call
  assert_int_equal(log.count, 2);
  assert_int_equal(log.desired[0], 8);
  assert_int_equal(log.desired[1], 3);
  assert_int_equal(weft_block_processor_desired_workers(context), 0);
  assert_ok(weft_block_processor_consume_status(context));
  weft_block_processor_context_free(context);
  weft_block_recording_free(recording);
  test_commands_free(&list);
  weft_buffer_release(buffer);
  weft_executable_release(executable);
}

typedef struct drain_once_t {
  weft_block_processor_context_t* context;
  weft_block_drain_result_t result;
} drain_once_t;

static int drain_once_main(void* user_data) {
  drain_once_t* drain = (drain_once_t*)user_data;
  drain->result = weft_block_processor_drain(drain->context, 0, NULL, 0);
  return 0;
}

// While the only tile of a region runs on one worker, another finds
// nothing to claim (NO_WORK); both see COMPLETED afterwards.
static void no_work_while_last_tile_runs(void** state) {
  (void)state;
  weft_executable_t* executable = test_executable();
  weft_buffer_t* flags = test_buffer(8);
  weft_buffer_ref_t binding = weft_make_buffer_ref(flags, 0, 8);
  test_commands_t list = {0};
  test_commands_push(&list, test_dispatch(executable, KERNEL_WAIT, 1, 1, 1, 0,
                                          NULL, 1, &binding));
  weft_block_recording_t* recording = test_build(&list, NULL);
  weft_buffer_mapping_t mapping;
  assert_ok(weft_buffer_map_range(flags, WEFT_MAPPING_MODE_SCOPED,
                                  WEFT_MEMORY_ACCESS_ALL, 0, 8, &mapping));
  uint32_t* words = (uint32_t*)mapping.contents;
  for (uint32_t exclusive = 0; exclusive <= 1; ++exclusive) {
    __atomic_store_n(&words[0], 0u, __ATOMIC_RELAXED);
    __atomic_store_n(&words[1], 0u, __ATOMIC_RELAXED);
    weft_block_processor_params_t params = {0};
    params.worker_count = 2;
    params.flags = exclusive ? 0 : WEFT_BLOCK_PROCESSOR_FLAG_NO_EXCLUSIVE;
    drain_once_t drain = {NULL, WEFT_BLOCK_DRAIN_NO_WORK};
    assert_ok(weft_block_processor_context_create(
        recording, kNoTable, &params, weft_allocator_system(), &drain.context));
    assert_int_equal(weft_block_processor_desired_workers(drain.context), 1);
    weft_thread_t* thread = NULL;
    assert_ok(weft_thread_create(drain_once_main, &drain, NULL,
                                 weft_allocator_system(), &thread));
    // Once the other worker runs the tile, this one finds nothing.
    while (__atomic_load_n(&words[1], __ATOMIC_ACQUIRE) == 0) {
      weft_thread_yield();
    }
    assert_int_equal(weft_block_processor_drain(drain.context, 1, NULL, 0),
                     WEFT_BLOCK_DRAIN_NO_WORK);
    assert_false(weft_block_processor_is_completed(drain.context));
    __atomic_store_n(&words[0], 1u, __ATOMIC_RELEASE);
    weft_thread_join(thread);
    assert_int_equal(drain.result, WEFT_BLOCK_DRAIN_COMPLETED);
    assert_int_equal(weft_block_processor_drain(drain.context, 1, NULL, 0),
                     WEFT_BLOCK_DRAIN_COMPLETED);
    assert_ok(weft_block_processor_consume_status(drain.context));
    weft_block_processor_context_free(drain.context);
  }
  weft_buffer_unmap_range(&mapping);
  weft_block_recording_free(recording);
  test_commands_free(&list);
  weft_buffer_release(flags);
  weft_executable_release(executable);
}

// --- Submission errors

static void submission_errors(void** state) {
  (void)state;
  weft_buffer_t* a = test_buffer(64);
  weft_buffer_t* b = test_buffer(128);
  test_commands_t list = {0};
  test_commands_push(
      &list, test_copy(weft_make_indirect_buffer_ref(0, 0, WEFT_WHOLE_BUFFER),
                       weft_make_indirect_buffer_ref(3, 0, WEFT_WHOLE_BUFFER)));
  test_commands_push(&list,
                     test_fill(weft_make_indirect_buffer_ref(1, 8, 32), 0, 4));
  weft_block_recording_t* recording = test_build(&list, NULL);
  weft_block_processor_params_t params = {0};
  params.worker_count = 2;
  weft_block_processor_context_t* context = NULL;
  weft_allocator_t allocator = weft_allocator_system();

  weft_buffer_binding_t bindings[4] = {
      {a, 0, 64}, {b, 0, 64}, {NULL, 0, 0}, {b, 64, 64}};
  assert_status(weft_block_processor_context_create(
                    recording, (weft_binding_table_t){2, bindings}, &params,
                    allocator, &context),
                OUT_OF_RANGE,
                "binding table slot 3 is past the end of the table (2 "
                "entries)");
  bindings[3].buffer = NULL;
  assert_status(weft_block_processor_context_create(
                    recording, (weft_binding_table_t){4, bindings}, &params,
                    allocator, &context),
                INVALID_ARGUMENT, "binding table slot 3 has no buffer");
  bindings[3].buffer = b;
  bindings[3].offset = 100;
  assert_status(weft_block_processor_context_create(
                    recording, (weft_binding_table_t){4, bindings}, &params,
                    allocator, &context),
                OUT_OF_RANGE, "binding table slot 3");
  bindings[3].offset = 64;
  bindings[1].length = 16;  // the fill needs [8, 40)
  assert_status(weft_block_processor_context_create(
                    recording, (weft_binding_table_t){4, bindings}, &params,
                    allocator, &context),
                OUT_OF_RANGE, "uses [8, 40) of binding table slot 1");
  bindings[1].length = 64;
  bindings[3].offset = 0;
  bindings[3].length = WEFT_WHOLE_BUFFER;  // 128 bytes vs slot 0's 64
  assert_status(weft_block_processor_context_create(
                    recording, (weft_binding_table_t){4, bindings}, &params,
                    allocator, &context),
                INVALID_ARGUMENT, "differ in length");
  bindings[3].length = 64;
  params.worker_count = 0;
  assert_status(weft_block_processor_context_create(
                    recording, (weft_binding_table_t){4, bindings}, &params,
                    allocator, &context),
                INVALID_ARGUMENT, "at least one worker");
  params.worker_count = 2;
  uint8_t storage[64];
  assert_status(weft_block_processor_context_initialize(
                    recording, (weft_binding_table_t){4, bindings}, &params,
                    storage, sizeof(storage), &context),
                RESOURCE_EXHAUSTED, "bytes of context storage given");
  // Allocation failure while creating.
  weft_failing_allocator_t failing;
  assert_status(
      weft_block_processor_context_create(
          recording, (weft_binding_table_t){4, bindings}, &params,
          weft_failing_allocator_initialize(allocator, 0, &failing), &context),
      RESOURCE_EXHAUSTED, NULL);
  assert_null(context);
  // And the table that works.
  assert_ok(test_run(recording, (weft_binding_table_t){4, bindings}, 2, 0));
  weft_block_recording_free(recording);
  test_commands_free(&list);
  weft_buffer_release(a);
  weft_buffer_release(b);
}

// Recordings whose regions have one tile each run on one worker even when
// many drain (and produce the same results).
static void one_tile_regions_run_exclusively(void** state) {
  (void)state;
  region_program_t program;
  region_program_initialize(20, 1, false, &program);
  weft_block_processor_params_t params = {0};
  params.worker_count = 4;
  for (uint32_t flags = 0; flags <= WEFT_BLOCK_PROCESSOR_FLAG_NO_EXCLUSIVE;
       flags += WEFT_BLOCK_PROCESSOR_FLAG_NO_EXCLUSIVE) {
    region_program_reset(&program);
    params.flags = flags;
    weft_block_processor_context_t* context = NULL;
    assert_ok(weft_block_processor_context_create(
        program.recording, kNoTable, &params, weft_allocator_system(),
        &context));
    assert_int_equal(weft_block_processor_desired_workers(context), 1);
    assert_ok(test_run_threads(context, 4, 0));
    weft_block_processor_context_free(context);
    region_program_check(&program);
  }
  region_program_deinitialize(&program);
}

// --- Scheduling cost (informational, not a timed assertion)

typedef struct spin_pool_t {
  weft_atomic_intptr_t context;   // the context to drain, or 0
  weft_atomic_uint32_t finished;  // helpers done with the current context
  weft_atomic_uint32_t stop;
} spin_pool_t;

typedef struct spin_helper_t {
  spin_pool_t* pool;
  uint32_t index;
} spin_helper_t;

static int spin_helper_main(void* user_data) {
  spin_helper_t* helper = (spin_helper_t*)user_data;
  spin_pool_t* pool = helper->pool;
  weft_block_processor_context_t* last = NULL;
  while (!weft_atomic_load(&pool->stop, memory_order_acquire)) {
    weft_block_processor_context_t* context =
        (weft_block_processor_context_t*)weft_atomic_load(&pool->context,
                                                          memory_order_acquire);
    if (!context || context == last) {
      weft_thread_yield();
      continue;
    }
    while (weft_block_processor_drain(context, helper->index, NULL, 0) !=
           WEFT_BLOCK_DRAIN_COMPLETED) {
    }
    last = context;
    weft_atomic_fetch_add(&pool->finished, 1, memory_order_release);
  }
  return 0;
}

// Prints the scheduling cost of an empty 4096-workgroup dispatch per
// workgroup on 1 and 2 workers (contexts in reused storage: no allocation).
static void empty_dispatch_scheduling_cost(void** state) {
  (void)state;
  weft_executable_t* executable = test_executable();
  test_commands_t list = {0};
  test_commands_push(&list, test_dispatch(executable, KERNEL_EMPTY, 4096, 1, 1,
                                          0, NULL, 0, NULL));
  weft_block_recording_t* recording = test_build(&list, NULL);
  size_t size = weft_block_processor_context_storage_size(recording);
  uint8_t* storage[2] = {malloc(size), malloc(size)};
  const uint32_t iterations = 500;
  for (uint32_t workers = 1; workers <= 2; ++workers) {
    spin_pool_t pool;
    atomic_init(&pool.context, 0);
    atomic_init(&pool.finished, 0);
    atomic_init(&pool.stop, 0);
    spin_helper_t helper = {&pool, 1};
    weft_thread_t* thread = NULL;
    if (workers == 2) {
      assert_ok(weft_thread_create(spin_helper_main, &helper, NULL,
                                   weft_allocator_system(), &thread));
    }
    weft_block_processor_params_t params = {0};
    params.worker_count = workers;
    weft_time_t start = weft_time_now();
    for (uint32_t i = 0; i < iterations; ++i) {
      weft_block_processor_context_t* context = NULL;
      assert_ok(weft_block_processor_context_initialize(
          recording, kNoTable, &params, storage[i % 2], size, &context));
      if (workers == 2) {
        weft_atomic_store(&pool.context, (intptr_t)context,
                          memory_order_release);
      }
      while (weft_block_processor_drain(context, 0, NULL, 0) !=
             WEFT_BLOCK_DRAIN_COMPLETED) {
      }
      if (workers == 2) {
        while (weft_atomic_load(&pool.finished, memory_order_acquire) < i + 1) {
          weft_thread_yield();
        }
      }
      weft_block_processor_context_deinitialize(context);
    }
    weft_time_t elapsed = weft_time_now() - start;
    weft_atomic_store(&pool.stop, 1, memory_order_release);
    weft_thread_join(thread);
    printf(
        "[ INFO     ] empty 4096-workgroup dispatch, %u worker%s: %.2f ns "
        "per workgroup\n",
        workers, workers > 1 ? "s" : "", (double)elapsed / iterations / 4096.0);
  }
  free(storage[0]);
  free(storage[1]);
  weft_block_recording_free(recording);
  test_commands_free(&list);
  weft_executable_release(executable);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(single_worker_runs_everything_in_one_call),
      cmocka_unit_test(workgroups_run_exactly_once),
      cmocka_unit_test(three_dimensional_ids),
      cmocka_unit_test(transfers_in_tiles),
      cmocka_unit_test(regions_are_ordered),
      cmocka_unit_test(stale_workers_cannot_claim_across_regions),
      cmocka_unit_test(kernel_failure_stops_later_regions),
      cmocka_unit_test(abort_skips_remaining_work),
      cmocka_unit_test(processor_ids_and_scratch_per_worker),
      cmocka_unit_test(seats_pick_the_first_lane),
      cmocka_unit_test(desired_workers_follow_regions),
      cmocka_unit_test(no_work_while_last_tile_runs),
      cmocka_unit_test(submission_errors),
      cmocka_unit_test(one_tile_regions_run_exclusively),
      cmocka_unit_test(empty_dispatch_scheduling_cost),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
