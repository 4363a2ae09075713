// weft: the status a GPU op ended with (see op_result.h).
#include "hal/gpu/op_result.h"

#include "hal/gpu/kernel_status.h"
#include "hal/queue_completion.h"
#include "hal/semaphore_impl.h"

weft_status_t weft_gpu_op_result(const weft_queue_op_t* op,
                                 uint64_t device_waits,
                                 weft_status_t device_status,
                                 const volatile void* slots, size_t stride,
                                 uint32_t slot_count) {
  const uint32_t failed = device_waits
                              ? weft_semaphore_list_earliest_failure_masked(
                                    op->wait_list, device_waits)
                              : UINT32_MAX;
  if (failed != UINT32_MAX) {
    weft_status_free(device_status);
    uint64_t value = 0;
    weft_status_t failure =
        weft_semaphore_query(op->wait_list.semaphores[failed], &value);
    return weft_queue_op_not_run_status(op, failure, false);
  }
  if (!weft_status_is_ok(device_status) || slot_count == 0) {
    return device_status;
  }
  return weft_gpu_kernel_failure(op, slots, stride, slot_count);
}
