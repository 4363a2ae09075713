// weft benchmarks: VM programs that use the hal module (see
// vm_hal_programs.h).
#include "vm_hal_programs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/atomics.h"
#include "base/thread.h"
#include "weft/weft.h"

// The MLP example's kernel library (examples/mlp/mlp_kernels.c), compiled
// into the bench instead of loaded as a shared object.
const weft_kernel_library_t* weft_kernel_library_query(uint32_t abi_version);

// How long any wait of the benchmarks may take before it is a failure.
#define WEFT_BENCH_VM_HAL_TIMEOUT_NS (30ll * 1000 * 1000 * 1000)

static weft_timeout_t weft_bench_vm_hal_timeout(void) {
  return weft_timeout_relative(WEFT_BENCH_VM_HAL_TIMEOUT_NS);
}

//===----------------------------------------------------------------------===//
// A device, the hal module and a program, linked
//===----------------------------------------------------------------------===//

typedef struct weft_bench_hal_vm_t {
  weft_device_t* device;
  weft_vm_module_t* hal;
  weft_vm_module_t* program;
  weft_vm_context_t* context;
} weft_bench_hal_vm_t;

// Opens |device_string| and links a program with the hal module (whose
// default device it is; |kernels|, when not NULL, is the static library
// "kernels"): |program_text| named |program_name|, or the file
// |program_name| when |program_text| is NULL.
static weft_status_t weft_bench_hal_vm_initialize(
    const char* device_string, const char* program_name,
    const char* program_text, weft_kernel_library_query_fn_t kernels,
    weft_bench_hal_vm_t* vm) {
  memset(vm, 0, sizeof(*vm));
  const weft_allocator_t allocator = weft_allocator_system();
  weft_status_t status =
      weft_device_create(device_string, allocator, &vm->device);
  if (weft_status_is_ok(status)) {
    const weft_hal_static_library_t library = {"kernels", kernels};
    const weft_hal_module_options_t options = {
        .device = vm->device,
        .static_library_count = kernels ? 1 : 0,
        .static_libraries = &library,
    };
    status = weft_hal_module_create(&options, allocator, &vm->hal);
  }
  if (weft_status_is_ok(status)) {
    status = program_text
                 ? weft_vm_module_load_bytes(
                       program_name, (const uint8_t*)program_text,
                       strlen(program_text), allocator, &vm->program)
                 : weft_vm_module_load_file(program_name, allocator,
                                            &vm->program);
  }
  if (weft_status_is_ok(status)) {
    weft_vm_module_t* modules[2] = {vm->program, vm->hal};
    status = weft_vm_context_create(modules, 2, allocator, &vm->context);
  }
  return status;
}

static void weft_bench_hal_vm_deinitialize(weft_bench_hal_vm_t* vm) {
  weft_vm_context_release(vm->context);
  weft_vm_module_release(vm->program);
  weft_vm_module_release(vm->hal);
  weft_device_release(vm->device);
}

// A ref to HAL object |object| (borrowed); it is always a known type here.
static weft_vm_value_t weft_bench_ref(void* object) {
  weft_vm_value_t value = {.type = WEFT_VM_TYPE_REF};
  weft_status_ignore(weft_hal_module_wrap(object, &value.ref));
  return value;
}

//===----------------------------------------------------------------------===//
// VmPipelines
//===----------------------------------------------------------------------===//

// Bytes per buffer, and the head of the target the third operation fills.
#define WEFT_BENCH_PIPELINE_BYTES 256
#define WEFT_BENCH_PIPELINE_HEAD_BYTES 16
#define WEFT_BENCH_PIPELINE_HEAD_PATTERN 0xeeeeeeeeu

// run(gate, a, b, length, pattern): fill a with pattern -> copy a to b ->
// fill b's first 16 bytes with 0xee, ordered by one semaphore at 1, 2, 3
// (the first waits on |gate|, null for none); awaits 3.
static const char kPipelineProgram[] =
    "module bench_pipelines\n"
    "import hal.device.default () -> (r<hal.device>)\n"
    "import hal.semaphore.create (r<hal.device>, i64) -> (r<hal.semaphore>)\n"
    "import hal.fence.at (r<hal.semaphore>, i64) -> (r<hal.fence>)\n"
    "import hal.fence.await (r<hal.fence>?, i64) -> (i32)\n"
    "import hal.queue.fill (r<hal.device>, r<hal.fence>?, r<hal.fence>?, "
    "r<hal.buffer>, i64, i64, i32, i32) -> ()\n"
    "import hal.queue.copy (r<hal.device>, r<hal.fence>?, r<hal.fence>?, "
    "r<hal.buffer>, i64, r<hal.buffer>, i64, i64) -> ()\n"
    "func @run (r<hal.fence>?, r<hal.buffer>, r<hal.buffer>, i64, i32) -> "
    "(i32) export\n"
    "  call.import hal.device.default() -> (r3)\n"
    "  const.i64 s2, 0\n"
    "  call.import hal.semaphore.create(r3, s2) -> (r4)\n"
    "  const.i64 s3, 1\n"
    "  call.import hal.fence.at(r4, s3) -> (r5)\n"
    "  const.i64 s4, 2\n"
    "  call.import hal.fence.at(r4, s4) -> (r6)\n"
    "  const.i64 s5, 3\n"
    "  call.import hal.fence.at(r4, s5) -> (r7)\n"
    "  const.i32 s6, 4\n"
    "  call.import hal.queue.fill(r3, r0, r5, r1, s2, s0, s1, s6) -> ()\n"
    "  call.import hal.queue.copy(r3, r5, r6, r1, s2, r2, s2, s0) -> ()\n"
    "  const.i64 s7, 16\n"
    "  const.i32 s8, 0xeeeeeeee\n"
    "  call.import hal.queue.fill(r3, r6, r7, r2, s2, s7, s8, s6) -> ()\n"
    "  const.i64 s9, -1\n"
    "  call.import hal.fence.await(r7, s9) -> (s10)\n"
    "  ret (s10)\n"
    "end\n";

typedef struct weft_bench_pipeline_thread_t {
  weft_bench_pipelines_t* pipelines;
  uint32_t index;
  weft_thread_t* thread;
  // The last round's result: written by the thread before it counts the
  // round done, taken by the host once every thread did.
  weft_status_t status;
} weft_bench_pipeline_thread_t;

struct weft_bench_pipelines_t {
  weft_bench_hal_vm_t vm;
  weft_vm_loop_t* loop;
  uint32_t count;
  // Each pipeline's source (a) and target (b).
  weft_buffer_t** sources;
  weft_buffer_t** targets;
  // One semaphore per pipeline submitted from C by the host (parked
  // measurement).
  weft_semaphore_t** semaphores;
  // Loop rounds: invocations that ended well, and the first failure.
  uint32_t completed;
  weft_status_t first_failure;
  // Thread rounds: round r starts when |go| reaches r and is over when
  // |done| does; |remaining| counts the threads still in the round.
  weft_bench_pipeline_thread_t* threads;
  uint32_t thread_count;
  weft_semaphore_t* go;
  weft_semaphore_t* done;
  uint64_t round;
  weft_atomic_uint32_t remaining;
};

// The 4-byte fill pattern of pipeline |index|.
static uint32_t weft_bench_pipeline_pattern(uint32_t index) {
  return 0xa5000000u | (index & 0xffffffu);
}

// Submits pipeline |index|'s three operations from C, the first after
// |gate| (may be empty): fill a, copy a to b, fill b's head, on a new
// semaphore at 1, 2 and 3 (one reference in |out_semaphore|, NULL on
// failure).
static weft_status_t weft_bench_pipeline_submit(weft_bench_pipelines_t* p,
                                                uint32_t index,
                                                weft_semaphore_list_t gate,
                                                weft_semaphore_t** out_semaphore) {
  *out_semaphore = NULL;
  weft_device_t* device = p->vm.device;
  weft_semaphore_t* semaphore = NULL;
  weft_status_t status = weft_device_create_semaphore(device, 0, &semaphore);
  const uint64_t values[3] = {1, 2, 3};
  const weft_semaphore_list_t at1 = {1, &semaphore, &values[0]};
  const weft_semaphore_list_t at2 = {1, &semaphore, &values[1]};
  const weft_semaphore_list_t at3 = {1, &semaphore, &values[2]};
  const uint32_t pattern = weft_bench_pipeline_pattern(index);
  const uint32_t head = WEFT_BENCH_PIPELINE_HEAD_PATTERN;
  if (weft_status_is_ok(status)) {
    status = weft_device_queue_fill(device, WEFT_QUEUE_AFFINITY_ANY, gate, at1,
                                    p->sources[index], 0,
                                    WEFT_BENCH_PIPELINE_BYTES, &pattern, 4);
  }
  if (weft_status_is_ok(status)) {
    status = weft_device_queue_copy(device, WEFT_QUEUE_AFFINITY_ANY, at1, at2,
                                    p->sources[index], 0, p->targets[index],
                                    0, WEFT_BENCH_PIPELINE_BYTES);
  }
  if (weft_status_is_ok(status)) {
    status = weft_device_queue_fill(device, WEFT_QUEUE_AFFINITY_ANY, at2, at3,
                                    p->targets[index], 0,
                                    WEFT_BENCH_PIPELINE_HEAD_BYTES, &head, 4);
  }
  if (weft_status_is_ok(status)) {
    *out_semaphore = semaphore;
  } else if (semaphore) {
    // Operations already accepted wait on values nobody will signal now.
    weft_semaphore_fail(semaphore, weft_status_clone(status));
    weft_semaphore_release(semaphore);
  }
  return status;
}

// A host thread's life: one pipeline per round, blocking on its last value,
// until |go| fails (destroy).
static int weft_bench_pipeline_thread_main(void* user_data) {
  weft_bench_pipeline_thread_t* thread =
      (weft_bench_pipeline_thread_t*)user_data;
  weft_bench_pipelines_t* p = thread->pipelines;
  const weft_timeout_t forever = {WEFT_TIMEOUT_ABSOLUTE,
                                  WEFT_TIME_INFINITE_FUTURE};
  for (uint64_t round = 1;; ++round) {
    weft_status_t status = weft_semaphore_wait(p->go, round, forever);
    if (!weft_status_is_ok(status)) {
      weft_status_free(status);
      break;
    }
    weft_semaphore_t* semaphore = NULL;
    status = weft_bench_pipeline_submit(p, thread->index,
                                        weft_semaphore_list_empty(),
                                        &semaphore);
    if (weft_status_is_ok(status)) {
      status = weft_semaphore_wait(semaphore, 3, weft_bench_vm_hal_timeout());
    }
    weft_semaphore_release(semaphore);
    thread->status = status;
    // Acq_rel: the last thread's decrement comes after every other
    // thread's (and their |status| writes); its signal of |done| then
    // publishes them all to the host.
    if (weft_atomic_fetch_sub(&p->remaining, 1u, memory_order_acq_rel) == 1) {
      weft_status_ignore(weft_semaphore_signal(p->done, round));
    }
  }
  return 0;
}

weft_status_t weft_bench_pipelines_create(
    const char* device_string, uint32_t count, int with_threads,
    weft_bench_pipelines_t** out_pipelines) {
  const weft_allocator_t allocator = weft_allocator_system();
  weft_bench_pipelines_t* p =
      (weft_bench_pipelines_t*)calloc(1, sizeof(weft_bench_pipelines_t));
  *out_pipelines = p;
  if (!p) return WEFT_STATUS(RESOURCE_EXHAUSTED, "bench pipelines");
  p->count = count;
  atomic_init(&p->remaining, 0u);
  weft_status_t status = weft_bench_hal_vm_initialize(
      device_string, "bench_pipelines.wvm", kPipelineProgram, NULL, &p->vm);
  if (weft_status_is_ok(status)) {
    const weft_vm_loop_options_t options = {0};
    status = weft_vm_loop_create(options, allocator, &p->loop);
  }
  if (weft_status_is_ok(status)) {
    p->sources = (weft_buffer_t**)calloc(count, sizeof(weft_buffer_t*));
    p->targets = (weft_buffer_t**)calloc(count, sizeof(weft_buffer_t*));
    p->semaphores =
        (weft_semaphore_t**)calloc(count, sizeof(weft_semaphore_t*));
    if (!p->sources || !p->targets || !p->semaphores) {
      status = WEFT_STATUS(RESOURCE_EXHAUSTED, "%u pipelines' buffers", count);
    }
  }
  const weft_buffer_params_t params = {0};
  for (uint32_t i = 0; weft_status_is_ok(status) && i < count; ++i) {
    status = weft_device_allocate_buffer(
        p->vm.device, params, WEFT_BENCH_PIPELINE_BYTES, &p->sources[i]);
    if (weft_status_is_ok(status)) {
      status = weft_device_allocate_buffer(
          p->vm.device, params, WEFT_BENCH_PIPELINE_BYTES, &p->targets[i]);
    }
  }
  if (weft_status_is_ok(status) && with_threads) {
    p->threads = (weft_bench_pipeline_thread_t*)calloc(
        count, sizeof(weft_bench_pipeline_thread_t));
    if (!p->threads) {
      status = WEFT_STATUS(RESOURCE_EXHAUSTED, "%u threads' records", count);
    }
    if (weft_status_is_ok(status)) {
      status = weft_semaphore_create(allocator, 0, &p->go);
    }
    if (weft_status_is_ok(status)) {
      status = weft_semaphore_create(allocator, 0, &p->done);
    }
    for (uint32_t i = 0; weft_status_is_ok(status) && i < count; ++i) {
      weft_bench_pipeline_thread_t* thread = &p->threads[i];
      thread->pipelines = p;
      thread->index = i;
      status = weft_thread_create(weft_bench_pipeline_thread_main, thread,
                                  NULL, allocator, &thread->thread);
      if (weft_status_is_ok(status)) ++p->thread_count;
    }
  }
  return status;
}

void weft_bench_pipelines_destroy(weft_bench_pipelines_t* p) {
  if (!p) return;
  if (p->go) {
    // Every thread's next wait fails: they leave their loops.
    weft_semaphore_fail(p->go,
                        WEFT_STATUS(CANCELLED, "the benchmark is over"));
  }
  for (uint32_t i = 0; i < p->thread_count; ++i) {
    weft_thread_join(p->threads[i].thread);
    weft_status_free(p->threads[i].status);
  }
  free(p->threads);
  weft_semaphore_release(p->go);
  weft_semaphore_release(p->done);
  weft_vm_loop_destroy(p->loop);
  weft_status_free(p->first_failure);
  for (uint32_t i = 0; i < p->count; ++i) {
    if (p->sources) weft_buffer_release(p->sources[i]);
    if (p->targets) weft_buffer_release(p->targets[i]);
  }
  free(p->sources);
  free(p->targets);
  free(p->semaphores);
  weft_bench_hal_vm_deinitialize(&p->vm);
  free(p);
}

// The loop's done function: counts the invocations that ended with the
// last value reached, keeps the first failure.
static void weft_bench_pipeline_done(void* user_data,
                                     weft_vm_loop_invocation_t* invocation,
                                     weft_status_t status,
                                     weft_vm_value_t* results,
                                     uint32_t result_count) {
  (void)invocation;
  weft_bench_pipelines_t* p = (weft_bench_pipelines_t*)user_data;
  if (weft_status_is_ok(status) && (result_count != 1 || results[0].i32)) {
    status = WEFT_STATUS(INTERNAL, "the pipeline's await returned %d",
                         result_count == 1 ? results[0].i32 : -1);
  }
  if (weft_status_is_ok(status)) {
    ++p->completed;
  } else if (weft_status_is_ok(p->first_failure)) {
    p->first_failure = status;
  } else {
    weft_status_free(status);
  }
}

// Submits one invocation of run per pipeline, each after |gate| (a fence
// ref, or null).
static weft_status_t weft_bench_pipelines_submit_all(
    weft_bench_pipelines_t* p, weft_vm_value_t gate) {
  weft_status_t status = WEFT_OK;
  p->completed = 0;
  for (uint32_t i = 0; weft_status_is_ok(status) && i < p->count; ++i) {
    const weft_vm_value_t args[5] = {
        gate,
        weft_bench_ref(p->sources[i]),
        weft_bench_ref(p->targets[i]),
        {.type = WEFT_VM_TYPE_I64, .i64 = WEFT_BENCH_PIPELINE_BYTES},
        {.type = WEFT_VM_TYPE_I32,
         .i32 = (int32_t)weft_bench_pipeline_pattern(i)},
    };
    status = weft_vm_loop_submit(p->loop, p->vm.context, "bench_pipelines.run",
                                 args, 5, 1, weft_bench_pipeline_done, p,
                                 NULL);
  }
  return status;
}

// Runs the loop until every invocation ended; fails with the first
// failure, or when some did not end well.
static weft_status_t weft_bench_pipelines_finish_loop(
    weft_bench_pipelines_t* p) {
  weft_status_t status = weft_vm_loop_run(
      p->loop, weft_time_now() + WEFT_BENCH_VM_HAL_TIMEOUT_NS);
  if (weft_status_is_ok(status)) {
    status = p->first_failure;
    p->first_failure = WEFT_OK;
  }
  if (weft_status_is_ok(status) && p->completed != p->count) {
    status = WEFT_STATUS(INTERNAL, "%u of %u pipelines completed",
                         p->completed, p->count);
  }
  return status;
}

weft_status_t weft_bench_pipelines_run_loop(weft_bench_pipelines_t* p) {
  weft_vm_value_t no_gate = {.type = WEFT_VM_TYPE_REF};
  weft_status_t status = weft_bench_pipelines_submit_all(p, no_gate);
  if (weft_status_is_ok(status)) {
    status = weft_bench_pipelines_finish_loop(p);
  }
  return status;
}

weft_status_t weft_bench_pipelines_run_threads(weft_bench_pipelines_t* p) {
  if (p->thread_count != p->count) {
    return WEFT_STATUS(FAILED_PRECONDITION, "%u of %u threads started",
                       p->thread_count, p->count);
  }
  ++p->round;
  // Relaxed: the release in the signal of |go| publishes it.
  weft_atomic_store(&p->remaining, p->count, memory_order_relaxed);
  weft_status_t status = weft_semaphore_signal(p->go, p->round);
  if (weft_status_is_ok(status)) {
    status = weft_semaphore_wait(p->done, p->round,
                                 weft_bench_vm_hal_timeout());
  }
  for (uint32_t i = 0; weft_status_is_ok(status) && i < p->count; ++i) {
    status = p->threads[i].status;
    p->threads[i].status = WEFT_OK;
  }
  return status;
}

weft_status_t weft_bench_pipelines_verify(weft_bench_pipelines_t* p,
                                          int through_loop) {
  const uint8_t zero = 0;
  weft_status_t status = WEFT_OK;
  for (uint32_t i = 0; weft_status_is_ok(status) && i < p->count; ++i) {
    status = weft_buffer_map_fill(p->targets[i], 0, WEFT_BENCH_PIPELINE_BYTES,
                                  &zero, 1);
  }
  if (weft_status_is_ok(status)) {
    status = through_loop ? weft_bench_pipelines_run_loop(p)
                          : weft_bench_pipelines_run_threads(p);
  }
  uint8_t bytes[WEFT_BENCH_PIPELINE_BYTES];
  for (uint32_t i = 0; weft_status_is_ok(status) && i < p->count; ++i) {
    status = weft_buffer_map_read(p->targets[i], 0, bytes, sizeof(bytes));
    const uint32_t pattern = weft_bench_pipeline_pattern(i);
    for (uint32_t j = 0; weft_status_is_ok(status) && j < sizeof(bytes); ++j) {
      const uint32_t word = j < WEFT_BENCH_PIPELINE_HEAD_BYTES
                                ? WEFT_BENCH_PIPELINE_HEAD_PATTERN
                                : pattern;
      const uint8_t expected = (uint8_t)(word >> (8 * (j % 4)));
      if (bytes[j] != expected) {
        status = WEFT_STATUS(DATA_LOSS,
                             "pipeline %u: byte %u of the target is 0x%02x, "
                             "expected 0x%02x",
                             i, j, bytes[j], expected);
      }
    }
  }
  return status;
}

weft_status_t weft_bench_pipelines_measure_parked(
    weft_bench_pipelines_t* p, int64_t (*heap_bytes)(void),
    int64_t* out_invocation_bytes, int64_t* out_c_bytes) {
  const weft_allocator_t allocator = weft_allocator_system();
  weft_status_t status = WEFT_OK;
  // The first pass warms the pools (op records, stacks); the second
  // measures.
  for (int pass = 0; pass < 2 && weft_status_is_ok(status); ++pass) {
    // From C: a semaphore and three queued operations per pipeline.
    weft_semaphore_t* gate = NULL;
    status = weft_device_create_semaphore(p->vm.device, 0, &gate);
    const uint64_t one = 1;
    const weft_semaphore_list_t gate_list = {1, &gate, &one};
    int64_t before = heap_bytes();
    uint32_t submitted = 0;
    for (; weft_status_is_ok(status) && submitted < p->count; ++submitted) {
      status = weft_bench_pipeline_submit(p, submitted, gate_list,
                                          &p->semaphores[submitted]);
    }
    if (weft_status_is_ok(status)) {
      *out_c_bytes = (heap_bytes() - before) / (int64_t)p->count;
    }
    if (gate) {
      weft_status_t open = weft_semaphore_signal(gate, 1);
      status = weft_status_join(status, open);
    }
    for (uint32_t i = 0; i < submitted; ++i) {
      if (p->semaphores[i] && weft_status_is_ok(status)) {
        status = weft_semaphore_wait(p->semaphores[i], 3,
                                     weft_bench_vm_hal_timeout());
      }
      weft_semaphore_release(p->semaphores[i]);
      p->semaphores[i] = NULL;
    }
    weft_semaphore_release(gate);
    gate = NULL;

    // Through the VM: every invocation parked on its await.
    weft_fence_t* fence = NULL;
    if (weft_status_is_ok(status)) {
      status = weft_device_create_semaphore(p->vm.device, 0, &gate);
    }
    if (weft_status_is_ok(status)) {
      status = weft_fence_create_at(gate, 1, allocator, &fence);
    }
    before = heap_bytes();
    if (weft_status_is_ok(status)) {
      status = weft_bench_pipelines_submit_all(p, weft_bench_ref(fence));
    }
    if (weft_status_is_ok(status)) {
      // A deadline already passed: runs every invocation to its await.
      status = weft_vm_loop_run(p->loop, weft_time_now());
      if (weft_status_code(status) == WEFT_STATUS_DEADLINE_EXCEEDED) {
        weft_status_free(status);
        status = WEFT_OK;
      }
    }
    if (weft_status_is_ok(status) &&
        weft_vm_loop_live_count(p->loop) != p->count) {
      status = WEFT_STATUS(INTERNAL, "%u of %u invocations parked",
                           weft_vm_loop_live_count(p->loop), p->count);
    }
    if (weft_status_is_ok(status)) {
      *out_invocation_bytes = (heap_bytes() - before) / (int64_t)p->count;
    }
    if (gate) {
      weft_status_t open = weft_semaphore_signal(gate, 1);
      status = weft_status_join(status, open);
    }
    if (weft_status_is_ok(status)) {
      status = weft_bench_pipelines_finish_loop(p);
    }
    weft_fence_release(fence);
    weft_semaphore_release(gate);
  }
  return status;
}

//===----------------------------------------------------------------------===//
// VmMlp
//===----------------------------------------------------------------------===//

// The dense kernel's outputs per workgroup (mlp_kernels.c; mlp.wvm
// dispatches ceil(N / 64) workgroups too).
#define WEFT_BENCH_MLP_OUTPUTS_PER_WORKGROUP 64

enum {
  WEFT_BENCH_MLP_X = 0,
  WEFT_BENCH_MLP_W1,
  WEFT_BENCH_MLP_B1,
  WEFT_BENCH_MLP_W2,
  WEFT_BENCH_MLP_B2,
  WEFT_BENCH_MLP_INPUT_COUNT,
};

struct weft_bench_mlp_t {
  weft_bench_hal_vm_t vm;
  uint32_t k1, n1, n2;
  float* host[WEFT_BENCH_MLP_INPUT_COUNT];
  weft_buffer_t* buffers[WEFT_BENCH_MLP_INPUT_COUNT];
  weft_hal_buffer_view_t* views[WEFT_BENCH_MLP_INPUT_COUNT];
  // The C path's kernel, made once, and its timeline.
  weft_executable_t* executable;
  uint32_t dense;
  weft_semaphore_t* semaphore;
  uint64_t value;
  // The last output of each path.
  weft_vm_value_t output_vm;
  weft_buffer_t* output_c;
};

// Deterministic inputs, small enough that sums stay moderate.
static float weft_bench_mlp_value(int input, uint64_t i) {
  static const uint32_t kMultiplier[WEFT_BENCH_MLP_INPUT_COUNT] = {37, 131, 17,
                                                                   71, 29};
  const int centered = (int)((i * kMultiplier[input] + (uint64_t)input) % 97u) -
                       48;
  return (float)centered / (input == WEFT_BENCH_MLP_X ? 48.0f : 1024.0f);
}

weft_status_t weft_bench_mlp_create(const char* device_string,
                                    const char* program_path, uint32_t k1,
                                    uint32_t n1, uint32_t n2,
                                    weft_bench_mlp_t** out_mlp) {
  const weft_allocator_t allocator = weft_allocator_system();
  weft_bench_mlp_t* m = (weft_bench_mlp_t*)calloc(1, sizeof(weft_bench_mlp_t));
  *out_mlp = m;
  if (!m) return WEFT_STATUS(RESOURCE_EXHAUSTED, "bench mlp");
  m->k1 = k1;
  m->n1 = n1;
  m->n2 = n2;
  weft_status_t status = weft_bench_hal_vm_initialize(
      device_string, program_path, NULL, weft_kernel_library_query, &m->vm);
  const uint32_t rank[WEFT_BENCH_MLP_INPUT_COUNT] = {1, 2, 1, 2, 1};
  const int64_t shapes[WEFT_BENCH_MLP_INPUT_COUNT][2] = {
      {k1, 0}, {k1, n1}, {n1, 0}, {n1, n2}, {n2, 0}};
  const weft_buffer_params_t params = {0};
  for (int i = 0; weft_status_is_ok(status) && i < WEFT_BENCH_MLP_INPUT_COUNT;
       ++i) {
    const uint64_t count =
        (uint64_t)shapes[i][0] * (rank[i] == 2 ? (uint64_t)shapes[i][1] : 1);
    m->host[i] = (float*)malloc(count * sizeof(float));
    if (!m->host[i]) {
      status = WEFT_STATUS(RESOURCE_EXHAUSTED, "mlp input %d", i);
      break;
    }
    for (uint64_t j = 0; j < count; ++j) {
      m->host[i][j] = weft_bench_mlp_value(i, j);
    }
    status = weft_device_allocate_buffer(m->vm.device, params,
                                         count * sizeof(float),
                                         &m->buffers[i]);
    if (weft_status_is_ok(status)) {
      status = weft_buffer_map_write(m->buffers[i], 0, m->host[i],
                                     count * sizeof(float));
    }
    if (weft_status_is_ok(status)) {
      status = weft_hal_buffer_view_create(
          m->buffers[i], 0,
          WEFT_HAL_ELEMENT_TYPE_F32, rank[i], shapes[i], allocator,
          &m->views[i]);
    }
  }
  if (weft_status_is_ok(status)) {
    status = weft_device_create_executable(
        m->vm.device, weft_executable_source_cpu_static(weft_kernel_library_query),
        &m->executable);
  }
  if (weft_status_is_ok(status)) {
    status = weft_executable_lookup_kernel(m->executable, "dense", &m->dense);
  }
  if (weft_status_is_ok(status)) {
    status = weft_device_create_semaphore(m->vm.device, 0, &m->semaphore);
  }
  return status;
}

void weft_bench_mlp_destroy(weft_bench_mlp_t* m) {
  if (!m) return;
  weft_vm_ref_release(m->output_vm.ref);
  weft_buffer_release(m->output_c);
  weft_semaphore_release(m->semaphore);
  weft_executable_release(m->executable);
  for (int i = 0; i < WEFT_BENCH_MLP_INPUT_COUNT; ++i) {
    weft_hal_buffer_view_release(m->views[i]);
    weft_buffer_release(m->buffers[i]);
    free(m->host[i]);
  }
  weft_bench_hal_vm_deinitialize(&m->vm);
  free(m);
}

weft_status_t weft_bench_mlp_forward_vm(weft_bench_mlp_t* m) {
  weft_vm_value_t args[WEFT_BENCH_MLP_INPUT_COUNT];
  for (int i = 0; i < WEFT_BENCH_MLP_INPUT_COUNT; ++i) {
    args[i].type = WEFT_VM_TYPE_REF;
    args[i].ref = weft_hal_module_wrap_buffer_view(m->views[i]);
  }
  weft_vm_value_t result = {0};
  weft_status_t status = weft_vm_invoke_sync(
      m->vm.context, "mlp.forward", args, WEFT_BENCH_MLP_INPUT_COUNT, &result,
      1, 0, weft_allocator_system());
  if (weft_status_is_ok(status)) {
    weft_vm_ref_release(m->output_vm.ref);
    m->output_vm = result;
  }
  return status;
}

// Queues one dense layer: out = act(w^T in + b) on |m|'s timeline from
// |wait_value| (0: no wait) to |signal_value|.
static weft_status_t weft_bench_mlp_dense(weft_bench_mlp_t* m,
                                          weft_buffer_t* in, weft_buffer_t* w,
                                          weft_buffer_t* b, weft_buffer_t* out,
                                          uint32_t k, uint32_t n,
                                          uint32_t relu, uint64_t wait_value,
                                          uint64_t signal_value) {
  const uint32_t constants[3] = {k, n, relu};
  const weft_buffer_ref_t bindings[4] = {
      weft_make_buffer_ref(in, 0, WEFT_WHOLE_BUFFER),
      weft_make_buffer_ref(w, 0, WEFT_WHOLE_BUFFER),
      weft_make_buffer_ref(b, 0, WEFT_WHOLE_BUFFER),
      weft_make_buffer_ref(out, 0, WEFT_WHOLE_BUFFER),
  };
  const uint32_t workgroups[3] = {
      (n + WEFT_BENCH_MLP_OUTPUTS_PER_WORKGROUP - 1) /
          WEFT_BENCH_MLP_OUTPUTS_PER_WORKGROUP,
      1, 1};
  const weft_semaphore_list_t wait =
      wait_value ? (weft_semaphore_list_t){1, &m->semaphore, &wait_value}
                 : weft_semaphore_list_empty();
  const weft_semaphore_list_t signal = {1, &m->semaphore, &signal_value};
  return weft_device_queue_dispatch(m->vm.device, WEFT_QUEUE_AFFINITY_ANY,
                                    wait, signal, m->executable, m->dense,
                                    workgroups, 3, constants, 4, bindings);
}

weft_status_t weft_bench_mlp_forward_c(weft_bench_mlp_t* m) {
  const weft_buffer_params_t params = {0};
  weft_buffer_t* hidden = NULL;
  weft_buffer_t* out = NULL;
  weft_status_t status = weft_device_allocate_buffer(
      m->vm.device, params, (uint64_t)m->n1 * sizeof(float), &hidden);
  if (weft_status_is_ok(status)) {
    status = weft_device_allocate_buffer(
        m->vm.device, params, (uint64_t)m->n2 * sizeof(float), &out);
  }
  const uint64_t start = m->value;
  if (weft_status_is_ok(status)) {
    status = weft_bench_mlp_dense(
        m, m->buffers[WEFT_BENCH_MLP_X], m->buffers[WEFT_BENCH_MLP_W1],
        m->buffers[WEFT_BENCH_MLP_B1], hidden, m->k1, m->n1, 1, 0, start + 1);
  }
  if (weft_status_is_ok(status)) {
    m->value = start + 1;
    status = weft_bench_mlp_dense(
        m, hidden, m->buffers[WEFT_BENCH_MLP_W2], m->buffers[WEFT_BENCH_MLP_B2],
        out, m->n1, m->n2, 0, start + 1, start + 2);
  }
  if (weft_status_is_ok(status)) {
    m->value = start + 2;
    status = weft_semaphore_wait(m->semaphore, m->value,
                                 weft_bench_vm_hal_timeout());
  }
  weft_buffer_release(hidden);
  if (weft_status_is_ok(status)) {
    weft_buffer_release(m->output_c);
    m->output_c = out;
  } else {
    weft_buffer_release(out);
  }
  return status;
}

weft_status_t weft_bench_mlp_check(weft_bench_mlp_t* m) {
  const size_t bytes = (size_t)m->n2 * sizeof(float);
  float* from_vm = (float*)malloc(bytes);
  float* from_c = (float*)malloc(bytes);
  double* hidden = (double*)malloc((size_t)m->n1 * sizeof(double));
  weft_status_t status =
      from_vm && from_c && hidden
          ? WEFT_OK
          : WEFT_STATUS(RESOURCE_EXHAUSTED, "mlp check buffers");
  if (weft_status_is_ok(status)) status = weft_bench_mlp_forward_vm(m);
  if (weft_status_is_ok(status)) status = weft_bench_mlp_forward_c(m);
  if (weft_status_is_ok(status)) {
    weft_hal_buffer_view_t* view = (weft_hal_buffer_view_t*)
        weft_hal_module_unwrap(m->output_vm.ref, &kWeftHalBufferViewType);
    if (!view || weft_hal_buffer_view_byte_length(view) != bytes) {
      status = WEFT_STATUS(INTERNAL, "mlp.forward returned no view of %zu "
                           "bytes", bytes);
    } else {
      status = weft_buffer_map_read(weft_hal_buffer_view_buffer(view),
                                    weft_hal_buffer_view_byte_offset(view),
                                    from_vm, bytes);
    }
  }
  if (weft_status_is_ok(status)) {
    status = weft_buffer_map_read(m->output_c, 0, from_c, bytes);
  }
  if (weft_status_is_ok(status) && memcmp(from_vm, from_c, bytes) != 0) {
    status = WEFT_STATUS(DATA_LOSS, "the VM's and C's outputs differ");
  }
  if (weft_status_is_ok(status)) {
    // The host, in double: y = w2^T relu(w1^T x + b1) + b2; each output
    // within 1e-4 of the sum of its terms' magnitudes.
    const float* const* in = (const float* const*)m->host;
    for (uint32_t n = 0; n < m->n1; ++n) {
      double sum = in[WEFT_BENCH_MLP_B1][n];
      for (uint32_t k = 0; k < m->k1; ++k) {
        sum += (double)in[WEFT_BENCH_MLP_X][k] *
               in[WEFT_BENCH_MLP_W1][(size_t)k * m->n1 + n];
      }
      hidden[n] = sum < 0.0 ? 0.0 : sum;
    }
    for (uint32_t n = 0; weft_status_is_ok(status) && n < m->n2; ++n) {
      double sum = in[WEFT_BENCH_MLP_B2][n];
      double magnitude = fabs(sum);
      for (uint32_t k = 0; k < m->n1; ++k) {
        const double term = hidden[k] * in[WEFT_BENCH_MLP_W2][(size_t)k * m->n2 + n];
        sum += term;
        magnitude += fabs(term);
      }
      if (fabs((double)from_vm[n] - sum) > 1e-4 * magnitude + 1e-6) {
        status = WEFT_STATUS(DATA_LOSS, "y[%u] is %.9g, the host says %.9g",
                             n, (double)from_vm[n], sum);
      }
    }
  }
  free(hidden);
  free(from_c);
  free(from_vm);
  return status;
}
