// weft: the executor (see src/task/executor.h). Stub: being implemented.

#include "task/executor.h"

void weft_executor_options_initialize(weft_executor_options_t* out_options) {
  out_options->worker_count = 0;
  out_options->spin_ns = WEFT_EXECUTOR_SPIN_DEFAULT;
  out_options->compute_slot_count = 0;
  out_options->worker_local_memory_size = 0;
  out_options->worker_affinities = NULL;
}

weft_status_t weft_executor_create(const weft_executor_options_t* options,
                                   weft_allocator_t allocator,
                                   weft_executor_t** out_executor) {
  (void)options;
  (void)allocator;
  *out_executor = NULL;
  return WEFT_STATUS(UNIMPLEMENTED, "executor_create: not implemented yet");
}

void weft_executor_retain(weft_executor_t* executor) { (void)executor; }
void weft_executor_release(weft_executor_t* executor) { (void)executor; }
uint32_t weft_executor_worker_count(const weft_executor_t* executor) {
  (void)executor;
  return 0;
}
void* weft_executor_worker_local_memory(weft_executor_t* executor,
                                        uint32_t worker_index,
                                        size_t* out_size) {
  (void)executor;
  (void)worker_index;
  if (out_size) *out_size = 0;
  return NULL;
}
weft_duration_t weft_executor_spin_ns(const weft_executor_t* executor) {
  (void)executor;
  return 0;
}
void weft_executor_schedule(weft_executor_t* executor,
                            weft_process_t* process) {
  (void)executor;
  (void)process;
}
void weft_executor_wake_workers(weft_executor_t* executor, uint32_t count) {
  (void)executor;
  (void)count;
}
