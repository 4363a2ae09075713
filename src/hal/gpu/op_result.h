// weft: the status a GPU op ended with, one rule for every GPU driver.
//
// A GPU driver hands some of an op's waits to the device (a stream wait on
// an event or a memory word, a timeline semaphore in the submission): the
// device then runs the op once the value is there, and cannot tell a
// signal from the release a failed semaphore's waiters get. So at the
// op's completion, in this order (weft/semaphore.h's failure order):
//  1. a wait handed to the device whose semaphore has failed fails the
//     op (it ran on what it did not get): the earliest such failure, as
//     the status of an op that did not run, naming that wait; waits the
//     host saw reached before the issue were met, whatever came after;
//  2. else what issuing or completing the op on the device reported;
//  3. else the kernels' status slots (hal/gpu/kernel_status.h).
// The scheduler applies rule 1 to the waits it met on the host, before the
// op is issued (the earliest failure), so an op fails with the same status
// whichever side met its waits.
#ifndef WEFT_HAL_GPU_OP_RESULT_H_
#define WEFT_HAL_GPU_OP_RESULT_H_

#include <stddef.h>
#include <stdint.h>

#include "hal/queue_op.h"

// Bit i of a device-wait mask: entry i of the op's wait list was handed to
// the device. Entries past 63 have no bit: a driver meets those on the host
// (it holds the op until they are reached).
#define WEFT_GPU_MAX_DEVICE_WAITS 64u

// The status |op| ended with, by the rules above: |device_waits| the mask
// of the waits the device met, |device_status| (consumed; annotated by the
// caller) the device's own error, and |slot_count| kernel status slots at
// |slots|, |stride| bytes apart (none when 0).
weft_status_t weft_gpu_op_result(const weft_queue_op_t* op,
                                 uint64_t device_waits,
                                 weft_status_t device_status,
                                 const volatile void* slots, size_t stride,
                                 uint32_t slot_count);

#endif  // WEFT_HAL_GPU_OP_RESULT_H_
