// weft cuda driver: the device object and the driver entry (see
// cuda_device.h and cuda_driver.h).
#include <stdalign.h>
#include "drivers/cuda/cuda_device.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "drivers/cuda/cuda_buffer.h"
#include "drivers/cuda/cuda_driver.h"
#include "drivers/cuda/cuda_executable.h"
#include "drivers/cuda/cuda_graph.h"
#include "drivers/cuda/cuda_semaphore.h"
#include "hal/gpu/staged_transfer.h"

#define WEFT_CUDA_DEFAULT_STATUS_SLOTS 65536u
// File transfers: 8 pinned pieces of 4 MiB (32 MiB, allocated at the first
// read or write).

weft_status_t weft_cuda_device_push_context(weft_cuda_device_t* device) {
  return WEFT_CUDA_CALL(device->symbols, cuCtxPushCurrent(device->context));
}

void weft_cuda_device_pop_context(weft_cuda_device_t* device) {
  CUcontext popped = NULL;
  device->symbols->cuCtxPopCurrent(&popped);
}

//===----------------------------------------------------------------------===//
// Teardown
//===----------------------------------------------------------------------===//

// Frees what create made, in reverse; safe on a partly made device.
static void weft_cuda_device_free(weft_cuda_device_t* device) {
  const weft_cuda_symbols_t* symbols = device->symbols;
  weft_allocator_t allocator = device->base.host_allocator;
  if (device->event_pool) {
    const bool pushed =
        symbols->cuCtxPushCurrent(device->context) == CUDA_SUCCESS;
    if (pushed) {
      weft_cuda_device_free_staging(device);
      for (uint32_t i = 0; i < device->queue_count; ++i) {
        if (device->queues[i].stream) {
          symbols->cuStreamSynchronize(device->queues[i].stream);
          symbols->cuStreamDestroy(device->queues[i].stream);
        }
      }
      if (device->clock_stream) symbols->cuStreamDestroy(device->clock_stream);
      if (device->status_slots) symbols->cuMemFreeHost(device->status_slots);
      CUcontext popped = NULL;
      symbols->cuCtxPopCurrent(&popped);
    }
    weft_cuda_event_release(device->trace_epoch);
    weft_cuda_word_pool_release(device->word_pool);
    weft_cuda_event_pool_release(device->event_pool);
  }
  for (uint32_t i = 0; i < device->queue_count; ++i) {
    weft_trace_track_release(device->queues[i].trace_track);
  }
  weft_condition_deinitialize(&device->idle);
  weft_condition_deinitialize(&device->transfer_wake);
  weft_condition_deinitialize(&device->completion_wake);
  weft_condition_deinitialize(&device->submission_wake);
  weft_slim_mutex_deinitialize(&device->mutex);
  weft_queue_scheduler_deinitialize(&device->scheduler);
  weft_device_deinitialize(&device->base);
  weft_allocator_free_aligned(allocator, device);
}

// The last public reference is gone: held ops fail with CANCELLED, issued
// ones finish, then everything goes.
static void weft_cuda_device_destroy(weft_device_t* base_device) {
  weft_cuda_device_t* device = weft_cuda_device_cast(base_device);
  weft_cuda_device_stop_queue(device);
  weft_cuda_device_free(device);
}

//===----------------------------------------------------------------------===//
// Vtable entries
//===----------------------------------------------------------------------===//

static weft_status_t weft_cuda_device_query_i64(weft_device_t* base_device,
                                                const char* key,
                                                int64_t* out_value) {
  weft_cuda_device_t* device = weft_cuda_device_cast(base_device);
  const weft_device_property_t properties[] = {
      {"queue.count", device->queue_count},
      {"worker.count", 1},
      {"dispatch.concurrent", 1},
      {"semaphore.host_wait", 1},
      {"cuda.device", device->ordinal},
      {"cuda.compute_capability",
       device->compute_capability[0] * 10 + device->compute_capability[1]},
      {"cuda.total_memory", (int64_t)device->total_memory},
      {"cuda.driver_version", device->driver_version},
      {"cuda.memory_pools", device->memory_pool != NULL},
      {"cuda.stream_memory_ops", device->stream_memory_ops != 0},
      {"cuda.memory_semaphores",
       device->semaphore_mode == WEFT_CUDA_SEMAPHORES_MEMORY},
      {"cuda.completion_polling",
       device->completion_mode == WEFT_CUDA_COMPLETION_POLLING},
      {"cuda.staging_piece", (int64_t)device->staging_piece_size},
      {"cuda.staging_pieces", device->staging_piece_count},
  };
  return weft_device_query_property(
      base_device, key, properties, sizeof(properties) / sizeof(properties[0]),
      out_value);
}

static void weft_cuda_device_describe(weft_device_t* base_device,
                                      FILE* stream) {
  weft_cuda_device_t* device = weft_cuda_device_cast(base_device);
  fprintf(stream,
          "  GPU %d: %s, compute capability %d.%d, %.1f GiB, driver %d.%d, "
          "%u queue%s, semaphores on %s, completion by %s\n",
          device->ordinal, device->name, device->compute_capability[0],
          device->compute_capability[1],
          (double)device->total_memory / (1024.0 * 1024.0 * 1024.0),
          device->driver_version / 1000, (device->driver_version % 1000) / 10,
          device->queue_count, device->queue_count == 1 ? "" : "s",
          device->semaphore_mode == WEFT_CUDA_SEMAPHORES_MEMORY
              ? "memory words"
              : "events",
          device->completion_mode == WEFT_CUDA_COMPLETION_BLOCKING
              ? "blocking-sync events"
              : "polling");
}

static weft_status_t weft_cuda_device_allocate_buffer(
    weft_device_t* base_device, weft_buffer_params_t params,
    weft_device_size_t byte_length, weft_buffer_t** out_buffer) {
  weft_cuda_device_t* device = weft_cuda_device_cast(base_device);
  weft_status_t status = weft_cuda_device_push_context(device);
  if (weft_status_is_ok(status)) {
    CUstream streams[WEFT_CUDA_MAX_QUEUES];
    for (uint32_t i = 0; i < device->queue_count; ++i) {
      streams[i] = device->queues[i].stream;
    }
    status = weft_cuda_buffer_allocate(device->event_pool, streams,
                                       device->queue_count,
                                       base_device->domain,
                                       params, byte_length,
                                       base_device->host_allocator, out_buffer);
    weft_cuda_device_pop_context(device);
  }
  return status;
}

static weft_status_t weft_cuda_device_create_transient_buffer(
    weft_device_t* base_device, weft_buffer_params_t params,
    weft_device_size_t byte_length, weft_buffer_t** out_buffer) {
  weft_cuda_device_t* device = weft_cuda_device_cast(base_device);
  return weft_cuda_buffer_create_queue_ordered(
      device->event_pool, base_device->domain, params, byte_length,
      base_device->host_allocator, out_buffer);
}

static weft_status_t weft_cuda_device_create_executable(
    weft_device_t* base_device, weft_executable_source_t source,
    weft_executable_t** out_executable) {
  weft_cuda_device_t* device = weft_cuda_device_cast(base_device);
  if (source.format != WEFT_EXECUTABLE_FORMAT_CUDA_PTX &&
      source.format != WEFT_EXECUTABLE_FORMAT_CUDA_IMAGE) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "weft_device_create_executable: device '%s' does not "
                       "accept executables of format %s (%d); it takes "
                       "cuda-ptx and cuda-image",
                       weft_device_id(base_device),
                       weft_executable_format_name(source.format),
                       (int)source.format);
  }
  weft_status_t status = weft_cuda_device_push_context(device);
  if (weft_status_is_ok(status)) {
    status = weft_cuda_executable_create(device->event_pool,
                                         base_device->domain, source,
                                         base_device->host_allocator,
                                         out_executable);
    weft_cuda_device_pop_context(device);
  }
  return status;
}

static weft_status_t weft_cuda_device_create_semaphore(
    weft_device_t* base_device, uint64_t initial_value,
    weft_semaphore_t** out_semaphore) {
  weft_cuda_device_t* device = weft_cuda_device_cast(base_device);
  return weft_cuda_semaphore_create(base_device->domain, device->word_pool,
                                    initial_value, base_device->host_allocator,
                                    out_semaphore);
}

static const weft_device_vtable_t kWeftCudaDeviceVtable = {
    .destroy = weft_cuda_device_destroy,
    .query_i64 = weft_cuda_device_query_i64,
    .allocate_buffer = weft_cuda_device_allocate_buffer,
    .for_each_pending = weft_cuda_device_for_each_pending,
    .describe = weft_cuda_device_describe,
    .create_executable = weft_cuda_device_create_executable,
    .create_semaphore = weft_cuda_device_create_semaphore,
    .create_transient_buffer = weft_cuda_device_create_transient_buffer,
    .queue_submit = weft_cuda_device_queue_submit,
    .command_buffer_finalize = weft_cuda_graph_finalize,
};

//===----------------------------------------------------------------------===//
// Creation
//===----------------------------------------------------------------------===//

// Reads the GPU's properties into |device|.
static weft_status_t weft_cuda_device_query_gpu(weft_cuda_device_t* device) {
  const weft_cuda_symbols_t* symbols = device->symbols;
  weft_status_t status = WEFT_CUDA_CALL(
      symbols, cuDeviceGetName(device->name, (int)sizeof(device->name),
                               device->cu_device));
  if (weft_status_is_ok(status)) {
    status = WEFT_CUDA_CALL(
        symbols, cuDeviceTotalMem(&device->total_memory, device->cu_device));
  }
  if (weft_status_is_ok(status)) {
    status = WEFT_CUDA_CALL(
        symbols,
        cuDeviceGetAttribute(&device->compute_capability[0],
                             CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                             device->cu_device));
  }
  if (weft_status_is_ok(status)) {
    status = WEFT_CUDA_CALL(
        symbols,
        cuDeviceGetAttribute(&device->compute_capability[1],
                             CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                             device->cu_device));
  }
  if (weft_status_is_ok(status)) {
    status = WEFT_CUDA_CALL(symbols,
                            cuDriverGetVersion(&device->driver_version));
  }
  if (weft_status_is_ok(status)) {
    status = WEFT_CUDA_CALL(
        symbols,
        cuDeviceGetAttribute(&device->stream_memory_ops,
                             CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS,
                             device->cu_device));
  }
  return status;
}

// The streams, the memory pool, the status words and the word pool
// (context current).
static weft_status_t weft_cuda_device_create_resources(
    weft_cuda_device_t* device) {
  const weft_cuda_symbols_t* symbols = device->symbols;
  weft_status_t status = WEFT_OK;
  for (uint32_t i = 0; weft_status_is_ok(status) && i < device->queue_count;
       ++i) {
    device->queues[i].index = i;
    status = WEFT_CUDA_CALL(symbols, cuStreamCreate(&device->queues[i].stream,
                                                    CU_STREAM_NON_BLOCKING));
  }
  if (weft_status_is_ok(status) &&
      device->semaphore_mode == WEFT_CUDA_SEMAPHORES_MEMORY) {
    status = weft_cuda_word_pool_create(device->event_pool,
                                        device->base.host_allocator,
                                        &device->word_pool);
  }
  int pools_supported = 0;
  if (weft_status_is_ok(status)) {
    status = WEFT_CUDA_CALL(
        symbols,
        cuDeviceGetAttribute(&pools_supported,
                             CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED,
                             device->cu_device));
  }
  if (weft_status_is_ok(status) && pools_supported) {
    status = WEFT_CUDA_CALL(
        symbols,
        cuDeviceGetDefaultMemPool(&device->memory_pool, device->cu_device));
    if (weft_status_is_ok(status)) {
      // Keep freed memory in the pool instead of returning it at every
      // synchronisation: alloca/dealloca in a loop should cost nothing.
      cuuint64_t threshold = UINT64_MAX;
      status = WEFT_CUDA_CALL(
          symbols, cuMemPoolSetAttribute(device->memory_pool,
                                         CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                                         &threshold));
    }
  }
  if (weft_status_is_ok(status)) {
    char call[96];
    snprintf(call, sizeof(call), "cuMemHostAlloc(%u status slots)",
             device->status_slot_count);
    status = weft_cuda_result_to_status(
        symbols,
        symbols->cuMemHostAlloc(
            (void**)&device->status_slots,
            device->status_slot_count * sizeof(weft_cuda_status_t),
            CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE),
        call);
  }
  if (weft_status_is_ok(status)) {
    status = WEFT_CUDA_CALL(
        symbols, cuMemHostGetDevicePointer(&device->status_slots_device,
                                           device->status_slots, 0));
  }
  return status;
}

typedef struct weft_cuda_device_options_t {
  uint32_t ordinal;
  uint32_t queues;
  weft_cuda_completion_mode_t mode;
  weft_cuda_semaphore_mode_t semaphores;
  uint32_t status_slots;
  uint32_t staging_piece_size;
  uint32_t staging_pieces;
} weft_cuda_device_options_t;

static weft_status_t weft_cuda_parse_options(
    const char* device_string, const weft_device_options_t* options,
    weft_cuda_device_options_t* out) {
  uint32_t* out_ordinal = &out->ordinal;
  weft_cuda_completion_mode_t* out_mode = &out->mode;
  uint32_t* out_status_slots = &out->status_slots;
  weft_status_t status =
      weft_device_options_get_u32(options, "device", out_ordinal);
  if (weft_status_is_ok(status)) {
    status = weft_staging_options_parse(device_string, options,
                                        &out->staging_piece_size,
                                        &out->staging_pieces);
  }
  if (weft_status_is_ok(status)) {
    status = weft_device_options_get_u32(options, "status_slots",
                                         out_status_slots);
  }
  if (weft_status_is_ok(status)) {
    status = weft_device_options_get_u32(options, "queues", &out->queues);
  }
  if (weft_status_is_ok(status) &&
      (out->queues < 1 || out->queues > WEFT_CUDA_MAX_QUEUES)) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "device string '%s': queues must be 1 to %u (got %u)",
                         device_string, WEFT_CUDA_MAX_QUEUES, out->queues);
  }
  static const char* const kSemaphoreModes[] = {"events", "memory"};
  uint32_t semaphores = out->semaphores;
  if (weft_status_is_ok(status)) {
    status = weft_status_annotate(
        weft_device_options_get_choice(options, "semaphores", kSemaphoreModes,
                                       2, &semaphores),
        "in device string '%s'", device_string);
    out->semaphores = (weft_cuda_semaphore_mode_t)semaphores;
  }
  if (weft_status_is_ok(status) && *out_status_slots < 2) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "device string '%s': status_slots must be at least 2",
                         device_string);
  }
  static const char* const kCompletionModes[] = {"blocking", "polling"};
  uint32_t mode = *out_mode;
  if (weft_status_is_ok(status)) {
    status = weft_status_annotate(
        weft_device_options_get_choice(options, "completion",
                                       kCompletionModes, 2, &mode),
        "in device string '%s'", device_string);
    *out_mode = (weft_cuda_completion_mode_t)mode;
  }
  return status;
}

static weft_status_t weft_cuda_driver_create_device(
    const weft_driver_t* driver, const char* device_string,
    const weft_device_options_t* options, weft_allocator_t allocator,
    weft_device_t** out_device) {
  *out_device = NULL;
  weft_cuda_device_options_t parsed = {
      .ordinal = 0,
      .queues = 1,
      .mode = WEFT_CUDA_COMPLETION_BLOCKING,
      .semaphores = WEFT_CUDA_SEMAPHORES_EVENTS,
      .status_slots = WEFT_CUDA_DEFAULT_STATUS_SLOTS,
      .staging_piece_size = WEFT_STAGING_DEFAULT_PIECE_SIZE,
      .staging_pieces = WEFT_STAGING_DEFAULT_PIECES,
  };
  weft_status_t status =
      weft_cuda_parse_options(device_string, options, &parsed);
  const weft_cuda_symbols_t* symbols = NULL;
  if (weft_status_is_ok(status)) status = weft_cuda_symbols_get(&symbols);
  const uint32_t ordinal = parsed.ordinal;
  const weft_cuda_completion_mode_t mode = parsed.mode;
  int device_count = 0;
  if (weft_status_is_ok(status)) {
    status = WEFT_CUDA_CALL(symbols, cuDeviceGetCount(&device_count));
  }
  if (weft_status_is_ok(status) && (int64_t)ordinal >= device_count) {
    status = device_count == 0
                 ? WEFT_STATUS(UNAVAILABLE,
                               "device string '%s': this machine has no CUDA "
                               "GPU",
                               device_string)
                 : WEFT_STATUS(NOT_FOUND,
                               "device string '%s': there is no GPU %u (this "
                               "machine has %d)",
                               device_string, ordinal, device_count);
  }
  weft_cuda_device_t* device = NULL;
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc_aligned(allocator, sizeof(*device),
                                           alignof(weft_cuda_device_t),
                                           (void**)&device);
  }
  if (!weft_status_is_ok(status)) return status;
  memset(device, 0, sizeof(*device));
  weft_slim_mutex_initialize(&device->mutex);
  weft_condition_initialize(&device->submission_wake);
  weft_condition_initialize(&device->completion_wake);
  weft_condition_initialize(&device->idle);
  weft_condition_initialize(&device->transfer_wake);
  device->symbols = symbols;
  device->ordinal = (int)ordinal;
  device->completion_mode = mode;
  device->semaphore_mode = parsed.semaphores;
  device->queue_count = parsed.queues;
  device->status_slot_count = parsed.status_slots;
  weft_gpu_status_ring_initialize(device->status_slot_count,
                                  &device->status_ring);
  device->staging_piece_size = parsed.staging_piece_size;
  device->staging_piece_count = parsed.staging_pieces;
  status = weft_device_initialize(&kWeftCudaDeviceVtable, device_string,
                                  driver->name, weft_domain_next(), allocator,
                                  &device->base);
  if (!weft_status_is_ok(status)) {
    weft_condition_deinitialize(&device->idle);
    weft_condition_deinitialize(&device->transfer_wake);
    weft_condition_deinitialize(&device->completion_wake);
    weft_condition_deinitialize(&device->submission_wake);
    weft_slim_mutex_deinitialize(&device->mutex);
    weft_allocator_free_aligned(allocator, device);
    return status;
  }
  weft_cuda_device_initialize_scheduler(device);
  status = WEFT_CUDA_CALL(symbols, cuDeviceGet(&device->cu_device, (int)ordinal));
  if (weft_status_is_ok(status)) status = weft_cuda_device_query_gpu(device);
  if (weft_status_is_ok(status) &&
      device->semaphore_mode == WEFT_CUDA_SEMAPHORES_MEMORY &&
      !device->stream_memory_ops) {
    status = WEFT_STATUS(
        UNAVAILABLE,
        "device string '%s': semaphores=memory needs 64-bit stream memory "
        "operations (CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS), "
        "which GPU %u (%s) does not have; use semaphores=events",
        device_string, ordinal, device->name);
  }
  if (weft_status_is_ok(status)) {
    status = weft_cuda_event_pool_create(
        symbols, device->cu_device,
        mode == WEFT_CUDA_COMPLETION_BLOCKING ? CU_EVENT_BLOCKING_SYNC
                                              : CU_EVENT_DEFAULT,
        allocator, &device->event_pool);
  }
  if (weft_status_is_ok(status)) {
    device->context = device->event_pool->context;
    status = weft_cuda_device_push_context(device);
    if (weft_status_is_ok(status)) {
      status = weft_cuda_device_create_resources(device);
      weft_cuda_device_pop_context(device);
    }
  }
  if (weft_status_is_ok(status)) {
    status = weft_cuda_device_start_queue(device);
    if (!weft_status_is_ok(status)) weft_cuda_device_stop_queue(device);
  }
  if (!weft_status_is_ok(status)) {
    weft_cuda_device_free(device);
    return status;
  }
  *out_device = &device->base;
  return WEFT_OK;
}

static const char* const kWeftCudaOptionNames[] = {
    "device",         "queues",        "semaphores", "completion",
    "status_slots",   "staging_piece", "staging_pieces", NULL};

const weft_driver_t weft_cuda_driver = {
    .name = "cuda",
    .description =
        "NVIDIA GPUs through the CUDA driver API (libcuda.so.1, loaded at "
        "run time): a stream per queue, semaphores backed by events or by "
        "64-bit memory words the GPU waits on and writes, a pending queue "
        "and a completion thread",
    .option_names = kWeftCudaOptionNames,
    .create_device = weft_cuda_driver_create_device,
};
