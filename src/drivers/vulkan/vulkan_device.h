// weft vulkan driver: the device.
//
// One device is one Vulkan logical device (vulkan_context.h) with one
// queue, a command pool, two private timeline semaphores and a completion
// thread:
//  - ops come through one submit entry (hal/queue_op.h). A transfer or
//    barrier whose waits are all reached on the host, or are on semaphores
//    of this device whose signalling op is already submitted, is recorded
//    into a command buffer and submitted at once: its native waits and
//    signals go into the submission (the GPU waits on and moves the
//    timelines itself), plus the private |completion| timeline at the op's
//    sequence number. Otherwise it is parked on the device's queue
//    scheduler (hal/queue_scheduler.h) and submitted on whichever thread
//    resolves its waits. No GPU queue ever holds a wait whose signal has
//    not been submitted: a wait on a host semaphore, another device's, or
//    a value of this device's not yet submitted is held in the scheduler.
//    With WEFT_VULKAN_MAX_IN_FLIGHT ops in flight, a ready op waits in the
//    waiting room instead, and the completion thread submits it when a
//    completion makes room.
//  - host ops (host calls, alloca, dealloca) run on the completion thread
//    once their waits are reached on the host; file reads and writes on
//    the transfer thread (vulkan_file.h), also once their waits are
//    reached on the host.
//  - the completion thread is the seed's listener: it waits
//    (vkWaitSemaphores, ANY) for the completion value of the oldest op in
//    flight on each queue that has one, or the private |wake| timeline
//    that the first op of an idle queue, host ops and shutdown move,
//    then publishes every signal the completed ops moved on the GPU to the
//    semaphores' bases, fails the signals of an op whose native wait
//    failed upstream, and retires them.
// vkQueueSubmit and the command pool are used under the device mutex (the
// spec's external synchronisation of a VkQueue and a VkCommandPool).
#ifndef WEFT_DRIVERS_VULKAN_VULKAN_DEVICE_H_
#define WEFT_DRIVERS_VULKAN_VULKAN_DEVICE_H_

#include <stdbool.h>

#include "base/condition.h"
#include "base/mutex.h"
#include "base/thread.h"
#include "drivers/vulkan/vulkan_context.h"
#include "drivers/vulkan/vulkan_file.h"
#include "hal/device_impl.h"
#include "hal/gpu/kernel_status.h"
#include "hal/queue_scheduler.h"

typedef struct weft_vulkan_op_t weft_vulkan_op_t;
// A host-visible buffer an op copies from (vulkan_queue.c).
typedef struct weft_vulkan_staging_t weft_vulkan_staging_t;

// Staging buffers are kept by size class, powers of two from 4 KiB to
// 64 MiB (larger ones are made for their op and freed after it), with at
// most WEFT_VULKAN_STAGING_IDLE_LIMIT bytes idle in all.
#define WEFT_VULKAN_STAGING_MIN_SHIFT 12
#define WEFT_VULKAN_STAGING_CLASSES 15
#define WEFT_VULKAN_STAGING_IDLE_LIMIT ((VkDeviceSize)64 << 20)

// A FIFO of ops linked through their |next|.
typedef struct weft_vulkan_op_fifo_t {
  weft_vulkan_op_t* head;
  weft_vulkan_op_t* tail;
} weft_vulkan_op_fifo_t;

// The most ops a device keeps submitted and not yet completed. More wait
// in the device's waiting room, in the order they became ready, until
// completions make room: what is in flight (command buffers, the driver's
// own per-submission state) then stays at one high-water mark whatever
// the burst, and a queue never holds an unbounded run of pending timeline
// operations.
#define WEFT_VULKAN_MAX_IN_FLIGHT 1024u

// Status slots per device, shared out between its queues: a dispatch
// takes one, an execute one per dispatch it records, until it completes.
#define WEFT_VULKAN_STATUS_SLOTS 4096u

// The most queues a device has ("queues=N").
#define WEFT_VULKAN_MAX_QUEUES 8u

// One weft queue: a Vulkan queue (shared with other weft queues when the
// family has fewer than the device has weft queues), the completion
// timeline its submissions signal at their sequence numbers, its ops in
// flight in that order, and its share of the status slots. Ops of one
// queue complete in sequence order, so its status ring frees in the order
// it allocates. Guarded by the device mutex (but for |held|).
typedef struct weft_vulkan_queue_t {
  VkQueue queue;
  VkSemaphore completion;
  // The last sequence number given to a submission (|completion| reaches
  // it when that submission is done).
  uint64_t submitted_sequence;
  weft_vulkan_op_fifo_t in_flight;
  // Slots [status_first, status_first + status_ring.capacity).
  uint32_t status_first;
  weft_gpu_status_ring_t status_ring;
  // The semaphores this queue's last completed op waited on in its
  // submission, retained until a later op of the queue completes or the
  // queue stops idle (vulkan_queue.c, "Held waits"). Only the completion
  // thread touches them, and the stop once that thread is joined.
  weft_semaphore_t** held;
  uint32_t held_count;
  uint32_t held_capacity;
} weft_vulkan_queue_t;

typedef struct weft_vulkan_device_t {
  weft_device_t base;
  weft_vulkan_context_t* context;  // retained
  // An op runs on queue (lowest set bit of its affinity) % queue_count.
  uint32_t queue_count;
  weft_vulkan_queue_t queues[WEFT_VULKAN_MAX_QUEUES];
  // Executes that ran their command buffer's recording
  // (vulkan_command_buffer.h), for the "vulkan.recorded_executes"
  // property. Guarded by |mutex|.
  uint64_t recorded_executes;
  // Semaphores its queues hold for their last completed ops (the
  // "vulkan.held_waits" property; see weft_vulkan_queue_t's |held|).
  weft_atomic_int64_t held_waits;
  // Ops wait on the GPU for values of this device's semaphores whose
  // signal is submitted ("gpu_waits=on", the default); off, every wait is
  // met on the host before the op is submitted.
  bool gpu_waits;

  // Guards everything below and the queues: the Vulkan queues, the pool,
  // the FIFOs and the wake protocol.
  weft_slim_mutex_t mutex;
  VkCommandPool command_pool;
  // Staging buffers of retired ops (unaligned fills, large or unaligned
  // updates), mapped, one free list per size class; |staging_idle_bytes|
  // is their total, |staging_made| how many were ever made (the
  // "vulkan.staging_buffers_made" property).
  weft_vulkan_staging_t* staging_free[WEFT_VULKAN_STAGING_CLASSES];
  VkDeviceSize staging_idle_bytes;
  uint64_t staging_made;
  // Command buffers of completed ops, reset and ready to record again.
  VkCommandBuffer* free_command_buffers;
  uint32_t free_command_buffer_count;
  uint32_t free_command_buffer_capacity;
  // Ops submitted to the GPU (every queue's) and about to be (at most
  // WEFT_VULKAN_MAX_IN_FLIGHT).
  uint32_t in_flight_count;
  // GPU ops ready to submit while WEFT_VULKAN_MAX_IN_FLIGHT are in flight.
  weft_vulkan_op_fifo_t waiting_room;
  // Host ops whose waits are reached, for the completion thread.
  weft_vulkan_op_fifo_t host_ready;
  // Moved by the host to wake the completion thread; |wake_value| is its
  // last value. |completion_waiting|: the thread is (about to be) inside
  // vkWaitSemaphores and has not been woken since.
  VkSemaphore wake;
  uint64_t wake_value;
  bool completion_waiting;
  // Host-visible, mapped status slots (hal/gpu/kernel_status.h) where
  // kernels report failure, |status_stride| bytes apart (a storage buffer
  // offset's alignment), each queue's from its own ring.
  VkBuffer status_buffer;
  VkDeviceMemory status_memory;
  uint8_t* status_mapping;
  VkDeviceSize status_stride;
  // Zero fills of new buffers the host cannot map, waited for at once.
  VkSemaphore immediate;
  uint64_t immediate_value;
  bool stopping;
  weft_thread_t* completion_thread;

  // File transfers (vulkan_file.h): READ and WRITE ops whose waits are
  // reached, in that order, for |transfer_thread|, which |transfer_wake|
  // wakes; |transfers_closing| tells it to end once the FIFO is empty.
  // Guarded by |mutex|.
  weft_vulkan_op_fifo_t transfers;
  weft_condition_t transfer_wake;
  bool transfers_closing;
  weft_thread_t* transfer_thread;
  // The transfer thread's own (sized by the device string).
  weft_vulkan_staging_ring_t staging;

  weft_queue_scheduler_t scheduler;
} weft_vulkan_device_t;

WEFT_DEVICE_DEFINE_CAST(weft_vulkan_device_t, weft_vulkan_device_cast)

// The queue (vulkan_queue.c).
void weft_vulkan_device_initialize_scheduler(weft_vulkan_device_t* device);
weft_status_t weft_vulkan_device_start_queue(weft_vulkan_device_t* device);
// Cancels held ops, lets every submitted op complete, joins the thread.
void weft_vulkan_device_stop_queue(weft_vulkan_device_t* device);
void weft_vulkan_device_free_queue(weft_vulkan_device_t* device);
weft_status_t weft_vulkan_device_queue_submit(weft_device_t* device,
                                              const weft_queue_op_t* op);
uint64_t weft_vulkan_device_for_each_pending(weft_device_t* device,
                                             weft_pending_op_visit_fn_t visit,
                                             void* user_data);
// Zeroes |buffer| and waits (weft_vulkan_zero_fn_t).
weft_status_t weft_vulkan_device_zero_buffer(void* device, VkBuffer buffer);

#endif  // WEFT_DRIVERS_VULKAN_VULKAN_DEVICE_H_
