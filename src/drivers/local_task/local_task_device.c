// weft: the local-task device object and driver entry.
//
// Create: parse the options, query the topology, make the proactor (unless
// file_io=sync), start one executor with a worker per chosen group, then the
// queues' processes on it.
// Destroy (the last release) shuts down in this order:
//   1. mark the device shutting down (seq_cst);
//   2. every queue cancels its parked ops' waits, and its control process
//      fails every op that has not run yet with CANCELLED;
//   3. wait until every op retired (ops already running finish);
//   4. cancel the queues' processes and release the executor, which joins
//      every worker (none is left inside a drain);
//   5. destroy the proactor, which joins its threads: a file completion
//      touches the device after its op retired (the idle notification);
//   6. free the queues, the op records and the device.
// When the last release happens on one of the device's workers or inside a
// file completion on a proactor thread, steps 1-6 run on a detached thread
// instead (neither can join itself).
#include <stdalign.h>
#include "drivers/local_task/local_task_device.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/thread.h"
#include "drivers/local_task/block_builder.h"
#include "drivers/local_task/local_task_driver.h"
#include "drivers/local_task/local_task_options.h"
#include "hal/local/cpu_device.h"
#include "task/topology.h"

//===----------------------------------------------------------------------===//
// Queues
//===----------------------------------------------------------------------===//

weft_local_task_queue_t* weft_local_task_device_select_queue(
    weft_local_task_device_t* device, weft_queue_affinity_t affinity) {
  // Validation rejected affinity 0, so there is a lowest set bit.
  uint32_t bit = (uint32_t)__builtin_ctzll(affinity);
  return &device->queues[bit % device->queue_count];
}

// The device whose drain this thread is running, if any. Thread-local by
// necessity: only the thread itself can say whether it is one of the
// workers a destroy would have to join.
static _Thread_local weft_local_task_drain_mark_t weft_local_task_draining = {
    NULL, WEFT_LOCAL_TASK_NO_DRAINER};

weft_local_task_drain_mark_t weft_local_task_device_enter_drain(
    weft_local_task_device_t* device, uint32_t index) {
  weft_local_task_drain_mark_t previous = weft_local_task_draining;
  weft_local_task_draining.device = device;
  weft_local_task_draining.index = index;
  return previous;
}

void weft_local_task_device_exit_drain(weft_local_task_drain_mark_t previous) {
  weft_local_task_draining = previous;
}

bool weft_local_task_device_is_draining(
    const weft_local_task_device_t* device) {
  return weft_local_task_draining.device == device;
}

uint32_t weft_local_task_device_drainer_index(
    const weft_local_task_device_t* device) {
  return weft_local_task_draining.device == device
             ? weft_local_task_draining.index
             : WEFT_LOCAL_TASK_NO_DRAINER;
}

//===----------------------------------------------------------------------===//
// Destroy
//===----------------------------------------------------------------------===//

// Blocks until every op of |device| retired and no ready callback still
// touches the device.
static void weft_local_task_device_wait_idle(weft_local_task_device_t* device) {
  weft_queue_scheduler_wait_idle(&device->scheduler);
  // A ready function on a host thread may have pushed an op that has since
  // retired and still be on its way out (a few instructions: the wake).
  // Its op retired, so nothing will notify again: yield until it has left
  // instead of sleeping. Seq_cst: pairs with the ready function's
  // decrement, its last access.
  while (weft_atomic_load(&device->readying_count, memory_order_seq_cst)) {
    weft_thread_yield();
  }
}

// Frees what create made, in reverse; safe on a partly created device.
// |queue_started_count| queues have running processes.
static void weft_local_task_device_free(weft_local_task_device_t* device,
                                        uint32_t queue_started_count) {
  weft_allocator_t allocator = device->base.host_allocator;
  if (queue_started_count) {
    // Seq_cst: pairs with the retirers' decrement-then-load.
    weft_atomic_store(&device->shutting_down, 1u, memory_order_seq_cst);
    // Parked ops go to their queues' ready lists with CANCELLED.
    weft_queue_scheduler_cancel_parked(&device->scheduler);
    for (uint32_t i = 0; i < queue_started_count; ++i) {
      weft_local_task_queue_cancel_pending(&device->queues[i]);
    }
    weft_local_task_device_wait_idle(device);
    for (uint32_t i = 0; i < queue_started_count; ++i) {
      weft_local_task_queue_stop(&device->queues[i]);
    }
  }
  // Joins every worker; completes and releases any process still scheduled.
  weft_executor_release(device->executor);
  device->executor = NULL;
  // Every op retired, so nothing is submitted any more; joins the threads,
  // which may still be on their way out of a completion that touches the
  // device.
  if (device->proactor) weft_proactor_destroy(device->proactor);
  device->proactor = NULL;
  for (uint32_t i = 0; i < queue_started_count; ++i) {
    weft_local_task_queue_deinitialize(&device->queues[i]);
  }
  weft_allocator_free_aligned(allocator, device->queues);
  weft_allocator_free(allocator, device->drainer_seats);
  weft_queue_scheduler_deinitialize(&device->scheduler);
  weft_allocator_free(allocator, device->topology_explanation);
  weft_device_deinitialize(&device->base);
  weft_allocator_free_aligned(allocator, device);
}

static void* weft_local_task_device_reaper_main(void* user_data) {
  weft_local_task_device_t* device = (weft_local_task_device_t*)user_data;
  weft_local_task_device_free(device, device->queue_count);
  return NULL;
}

static void weft_local_task_device_destroy(weft_device_t* base_device) {
  weft_local_task_device_t* device = weft_local_task_device_cast(base_device);
  if (!weft_local_task_device_is_draining(device)) {
    weft_local_task_device_free(device, device->queue_count);
  } else {
    // On one of our own workers (inside a drain): hand the shutdown to a
    // detached thread, which joins this worker once its drain returns. The
    // device stays whole until then, so the drain may go on using it.
    pthread_attr_t attr;
    pthread_t thread;
    int result = pthread_attr_init(&attr);
    if (result == 0) {
      result = pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
      if (result == 0) {
        result = pthread_create(&thread, &attr,
                                weft_local_task_device_reaper_main, device);
      }
      pthread_attr_destroy(&attr);
    }
    if (result != 0) {
      // Nothing safe is left to do here: the workers cannot be joined from
      // one of them. Say so; the device stays allocated.
      fprintf(stderr,
              "weft: device '%s' released on its own worker and no thread "
              "could be started to shut it down (pthread_create: %d); it is "
              "left running\n",
              weft_device_id(base_device), result);
    }
  }
}

//===----------------------------------------------------------------------===//
// Properties, buffers, diagnostics
//===----------------------------------------------------------------------===//

static weft_status_t weft_local_task_device_query_i64(
    weft_device_t* base_device, const char* key, int64_t* out_value) {
  weft_local_task_device_t* device = weft_local_task_device_cast(base_device);
  const weft_device_property_t properties[] = {
      {"queue.count", device->queue_count},
      {"worker.count", device->worker_count},
      {"dispatch.concurrent", 1},
      {"semaphore.host_wait", 1},
      {"file_io.async", device->proactor != NULL},
      {"file_io.backend", device->file_io},
      {"assist.count", device->drainer_count - device->worker_count},
  };
  return weft_device_query_property(
      base_device, key, properties, sizeof(properties) / sizeof(properties[0]),
      out_value);
}

static void weft_local_task_device_describe(weft_device_t* base_device,
                                            FILE* stream) {
  weft_local_task_device_t* device = weft_local_task_device_cast(base_device);
  fprintf(stream, "  %u queue%s, %u worker%s\n", device->queue_count,
          device->queue_count == 1 ? "" : "s", device->worker_count,
          device->worker_count == 1 ? "" : "s");
  if (device->proactor) {
    uint64_t in_flight = weft_proactor_pending_count(device->proactor);
    fprintf(stream, "  file I/O: %s; %" PRIu64 " transfer%s in flight\n",
            weft_proactor_explanation(device->proactor), in_flight,
            in_flight == 1 ? "" : "s");
  } else {
    fprintf(stream, "  file I/O: sync (on the control process)\n");
  }
}

static uint64_t weft_local_task_device_for_each_pending(
    weft_device_t* base_device, weft_pending_op_visit_fn_t visit,
    void* user_data) {
  weft_local_task_device_t* device = weft_local_task_device_cast(base_device);
  // Read first: an op counted here and retired before the walk only makes
  // the "not listed" figure an overestimate, never negative below.
  int64_t live = weft_queue_scheduler_live_count(&device->scheduler);
  uint64_t described = weft_queue_scheduler_for_each_pending(
      &device->scheduler, visit, user_data);
  // Ready and running ops are counted, not described: their records may
  // retire and be reused while a report looks at them.
  return live > (int64_t)described ? (uint64_t)live - described : 0;
}

static const weft_device_vtable_t kWeftLocalTaskDeviceVtable = {
    .destroy = weft_local_task_device_destroy,
    .query_i64 = weft_local_task_device_query_i64,
    WEFT_CPU_DEVICE_ENTRIES,
    .for_each_pending = weft_local_task_device_for_each_pending,
    .describe = weft_local_task_device_describe,
    .queue_submit = weft_local_task_device_queue_submit,
    .command_buffer_finalize = weft_block_command_buffer_finalize,
};

const char* weft_local_task_device_topology_explanation(
    weft_device_t* base_device) {
  const char* explanation = NULL;
  if (base_device &&
      weft_device_vtable(base_device) == &kWeftLocalTaskDeviceVtable) {
    explanation = weft_local_task_device_cast(base_device)->topology_explanation;
  }
  return explanation;
}

const char* weft_local_task_device_file_io_explanation(
    weft_device_t* base_device) {
  const char* explanation = NULL;
  if (base_device &&
      weft_device_vtable(base_device) == &kWeftLocalTaskDeviceVtable) {
    weft_local_task_device_t* device = weft_local_task_device_cast(base_device);
    explanation = device->proactor
                      ? weft_proactor_explanation(device->proactor)
                      : "sync (file_io=sync): the control process reads and "
                        "writes fd files itself";
  }
  return explanation;
}

//===----------------------------------------------------------------------===//
// Create
//===----------------------------------------------------------------------===//

// The options a device string gives, parsed.
typedef struct weft_local_task_device_params_t {
  weft_topology_options_t topology;
  // Whether spin_us was given, and its value.
  bool has_spin_us;
  uint32_t spin_us;
  // assist=N: guests of the executor.
  uint32_t assist_count;
  uint32_t queue_count;
  // file_io: sync, or the proactor's backend.
  bool file_io_sync;
  weft_proactor_options_t proactor;
} weft_local_task_device_params_t;

static weft_status_t weft_local_task_parse_params(
    const char* device_string, const weft_device_options_t* options,
    weft_local_task_device_params_t* out_params) {
  weft_topology_options_initialize(&out_params->topology);
  out_params->has_spin_us =
      weft_device_options_find(options, "spin_us") != NULL;
  out_params->spin_us = 0;
  out_params->assist_count = WEFT_LOCAL_TASK_ASSIST_AUTO;
  out_params->queue_count = WEFT_LOCAL_TASK_DEFAULT_QUEUE_COUNT;
  out_params->file_io_sync = false;
  weft_proactor_options_initialize(&out_params->proactor);
  out_params->proactor.thread_name = "weft-io";
  weft_status_t status = weft_local_task_parse_topology_options(
      options, &out_params->topology, &out_params->spin_us);
  if (weft_status_is_ok(status)) {
    status = weft_device_options_get_u32(options, "assist",
                                         &out_params->assist_count);
  }
  if (weft_status_is_ok(status) &&
      weft_device_options_find(options, "assist") &&
      out_params->assist_count > WEFT_LOCAL_TASK_MAX_ASSIST_COUNT) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "device string '%s': assist=%u is out of range "
                         "(0 to %u)",
                         device_string, out_params->assist_count,
                         WEFT_LOCAL_TASK_MAX_ASSIST_COUNT);
  }
  if (weft_status_is_ok(status)) {
    status = weft_device_options_get_u32(options, "queues",
                                         &out_params->queue_count);
  }
  if (weft_status_is_ok(status) &&
      (out_params->queue_count == 0 ||
       out_params->queue_count > WEFT_LOCAL_TASK_MAX_QUEUE_COUNT)) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "device string '%s': queues=%u is out of range "
                         "(1 to %u)",
                         device_string, out_params->queue_count,
                         WEFT_LOCAL_TASK_MAX_QUEUE_COUNT);
  }
  const char* file_io = weft_device_options_find(options, "file_io");
  if (weft_status_is_ok(status) && file_io) {
    if (strcmp(file_io, "sync") == 0) {
      out_params->file_io_sync = true;
    } else {
      status =
          weft_proactor_backend_parse(file_io, &out_params->proactor.backend);
      if (!weft_status_is_ok(status)) {
        weft_status_ignore(status);
        status = WEFT_STATUS(INVALID_ARGUMENT,
                             "device string '%s': file_io=%s is not one of "
                             "auto, io_uring, threads, sync",
                             device_string, file_io);
      }
    }
  }
  if (weft_status_is_ok(status) &&
      weft_device_options_find(options, "file_io_depth")) {
    uint32_t depth = 0;
    status = weft_device_options_get_u32(options, "file_io_depth", &depth);
    if (weft_status_is_ok(status) &&
        (depth == 0 || depth > WEFT_LOCAL_TASK_MAX_FILE_IO_DEPTH)) {
      status =
          WEFT_STATUS(INVALID_ARGUMENT,
                      "device string '%s': file_io_depth=%u is out of "
                      "range (1 to %u)",
                      device_string, depth, WEFT_LOCAL_TASK_MAX_FILE_IO_DEPTH);
    }
    if (weft_status_is_ok(status)) {
      out_params->proactor.queue_depth = depth;
      out_params->proactor.thread_count =
          depth < WEFT_LOCAL_TASK_MAX_FILE_IO_THREADS
              ? depth
              : WEFT_LOCAL_TASK_MAX_FILE_IO_THREADS;
    }
  }
  return status;
}

// Makes |device|'s proactor as |params| say (none with file_io=sync).
static weft_status_t weft_local_task_create_proactor(
    const char* device_string, const weft_local_task_device_params_t* params,
    weft_local_task_device_t* device) {
  weft_status_t status = WEFT_OK;
  device->file_io = WEFT_LOCAL_TASK_FILE_IO_SYNC;
  if (!params->file_io_sync) {
    status = weft_proactor_create(
        &params->proactor, device->base.host_allocator, &device->proactor);
    if (!weft_status_is_ok(status)) {
      status = weft_status_annotate(
          status, "device string '%s': file_io=%s", device_string,
          weft_proactor_backend_name(params->proactor.backend));
    }
  }
  if (device->proactor) {
    device->file_io = weft_proactor_backend(device->proactor) ==
                              WEFT_PROACTOR_BACKEND_IO_URING
                          ? WEFT_LOCAL_TASK_FILE_IO_IO_URING
                          : WEFT_LOCAL_TASK_FILE_IO_THREADS;
  }
  return status;
}

// Keeps |topology|'s explanation in |device| with a line on the spin policy
// the executor ended up with, and why.
static weft_status_t weft_local_task_explain(
    weft_topology_t* topology, const weft_local_task_device_params_t* params,
    weft_local_task_device_t* device) {
  const char* base = topology->explanation ? topology->explanation : "";
  char spin[256];
  weft_duration_t spin_ns = weft_executor_spin_ns(device->executor);
  const char* why =
      topology->oversubscribed
          ? "off: workers outnumber the CPUs this process may use"
      : params->has_spin_us ? "from the device's spin_us option"
                            : "the process wait policy (WEFT_SPIN_US or its "
                              "default; spin_us= overrides)";
  snprintf(spin, sizeof(spin), "spin: idle workers spin %.0f us before "
           "sleeping (%s)\n", (double)spin_ns / 1e3, why);
  size_t base_length = strlen(base);
  size_t spin_length = strlen(spin);
  char* text = NULL;
  weft_status_t status = weft_allocator_malloc(
      device->base.host_allocator, base_length + spin_length + 1,
      (void**)&text);
  if (weft_status_is_ok(status)) {
    memcpy(text, base, base_length);
    memcpy(text + base_length, spin, spin_length + 1);
    device->topology_explanation = text;
  }
  return status;
}

// Starts the executor for |topology| and the spin option of |params|.
static weft_status_t weft_local_task_create_executor(
    const weft_topology_t* topology,
    const weft_local_task_device_params_t* params, weft_allocator_t allocator,
    weft_executor_t** out_executor) {
  weft_executor_options_t options;
  weft_executor_options_initialize(&options);
  options.worker_count = topology->worker_count;
  options.guest_count = params->assist_count;
  // Auto: one guest, so a waiting thread runs the compute it waits for:
  // on a CPU of its own where the workers leave one, else on the
  // standby's (the last worker steps aside while a host assists:
  // src/task/executor.c). Not with one worker on one CPU (no standby: the
  // host would only share that worker's CPU).
  if (params->assist_count == WEFT_LOCAL_TASK_ASSIST_AUTO) {
    options.guest_count =
        topology->worker_count < weft_thread_available_cpu_count() ||
                topology->worker_count >= 2
            ? 1
            : 0;
  }
  options.worker_local_memory_size = WEFT_LOCAL_TASK_WORKER_LOCAL_MEMORY_SIZE;
  if (params->has_spin_us) {
    options.spin_ns =
        (weft_duration_t)weft_topology_spin_us(topology, params->spin_us) *
        1000;
  }
  // Worker i runs on the CPUs of its group (copies of the set headers; the
  // words stay the topology's and are only read during create).
  weft_affinity_set_t* affinities = NULL;
  weft_status_t status =
      weft_allocator_malloc_array(allocator, topology->worker_count,
                                  sizeof(*affinities), (void**)&affinities);
  if (weft_status_is_ok(status)) {
    for (uint32_t i = 0; i < topology->worker_count; ++i) {
      affinities[i] = *weft_topology_worker_cpus(topology, i);
    }
    options.worker_affinities = affinities;
    status = weft_executor_create(&options, allocator, out_executor);
  }
  weft_allocator_free(allocator, affinities);
  return status;
}

static weft_status_t weft_local_task_driver_create_device(
    const weft_driver_t* driver, const char* device_string,
    const weft_device_options_t* options, weft_allocator_t allocator,
    weft_device_t** out_device) {
  *out_device = NULL;
  weft_local_task_device_params_t params;
  weft_status_t status =
      weft_local_task_parse_params(device_string, options, &params);
  weft_topology_t topology;
  memset(&topology, 0, sizeof(topology));
  if (weft_status_is_ok(status)) {
    status = weft_topology_initialize(&params.topology, allocator, &topology);
  }
  // workers=0 parses (0 is the topology's "auto") but is refused here: a
  // count of nothing is more likely a mistake than a way to ask for the
  // default, and no other local-task option reads 0 as "default". The
  // topology above was queried with the default, so the message can say
  // what leaving the option out gives.
  if (weft_status_is_ok(status) && params.topology.worker_count == 0 &&
      weft_device_options_find(options, "workers")) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "device string '%s': workers=0: a device needs at "
                         "least one worker; leave the option out for the "
                         "default (one per physical core this process may "
                         "use: %u here)",
                         device_string, topology.worker_count);
  }
  weft_local_task_device_t* device = NULL;
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc_aligned(allocator, sizeof(*device),
                                           alignof(weft_local_task_device_t),
                                           (void**)&device);
  }
  bool base_initialized = false;
  if (weft_status_is_ok(status)) {
    device->topology_explanation = NULL;
    atomic_init(&device->shutting_down, 0);
    atomic_init(&device->readying_count, 0u);
    weft_local_task_device_initialize_scheduler(device, allocator);
    status = weft_device_initialize(&kWeftLocalTaskDeviceVtable, device_string,
                                    driver->name, WEFT_DOMAIN_HOST, allocator,
                                    &device->base);
    // deinitialize is safe after a failed initialize (it frees the id).
    base_initialized = true;
  }
  if (weft_status_is_ok(status)) {
    status = weft_local_task_create_proactor(device_string, &params, device);
  }
  if (weft_status_is_ok(status)) {
    status = weft_local_task_create_executor(&topology, &params, allocator,
                                             &device->executor);
  }
  if (weft_status_is_ok(status)) {
    device->worker_count = weft_executor_worker_count(device->executor);
    device->drainer_count = weft_executor_drainer_count(device->executor);
    uint32_t cpus = weft_thread_available_cpu_count();
    uint32_t running = device->drainer_count < cpus ? device->drainer_count
                                                    : cpus;
    device->layout_drainer_count =
        running > device->worker_count ? running : device->worker_count;
    device->control_linger_ns = weft_executor_spin_ns(device->executor);
    status = weft_allocator_malloc(
        allocator, (size_t)device->drainer_count * sizeof(uint32_t),
        (void**)&device->drainer_seats);
  }
  if (weft_status_is_ok(status)) {
    for (uint32_t i = 0; i < device->drainer_count; ++i) {
      device->drainer_seats[i] =
          weft_executor_drainer_seat(device->executor, i);
    }
    status = weft_local_task_explain(&topology, &params, device);
  }
  if (weft_status_is_ok(status)) {
    if (device->control_linger_ns > WEFT_LOCAL_TASK_MAX_CONTROL_LINGER_NS) {
      device->control_linger_ns = WEFT_LOCAL_TASK_MAX_CONTROL_LINGER_NS;
    }
    // Aligned: each queue keeps its submit and run sides on lines of their
    // own. At most WEFT_LOCAL_TASK_MAX_QUEUE_COUNT: the product fits.
    status = weft_allocator_malloc_aligned(
        allocator, (size_t)params.queue_count * sizeof(device->queues[0]),
        alignof(weft_local_task_queue_t), (void**)&device->queues);
  }
  uint32_t queue_started_count = 0;
  if (weft_status_is_ok(status)) {
    device->queue_count = params.queue_count;
    for (uint32_t i = 0; weft_status_is_ok(status) && i < params.queue_count;
         ++i) {
      status = weft_local_task_queue_initialize(device, i, &device->queues[i]);
      if (weft_status_is_ok(status)) ++queue_started_count;
    }
  }
  weft_topology_deinitialize(&topology);
  if (weft_status_is_ok(status)) {
    *out_device = &device->base;
  } else if (base_initialized) {
    weft_local_task_device_free(device, queue_started_count);
  } else {
    weft_allocator_free_aligned(allocator, device);
  }
  return status;
}

static const char* const kWeftLocalTaskOptionNames[] = {
    "workers", "cpus",    "nodes",         "spin_us", "assist",
    "queues",  "file_io", "file_io_depth", NULL,
};

const weft_driver_t weft_local_task_driver = {
    .name = "local-task",
    .description =
        "runs queue operations on worker threads (one per physical core by "
        "default) through the cooperative task scheduler",
    .option_names = kWeftLocalTaskOptionNames,
    .create_device = weft_local_task_driver_create_device,
};
