// weft: the local-task device.
//
// One executor (src/task/executor.h) with one worker per physical core by
// default is shared by the device's queues. Each queue is a pair of
// persistent processes on it (local_task_queue.h): a control process that
// runs ready operations and a compute process that drains command buffers
// and dispatches on every worker.
//
// Options (device string "local-task?key=value&..."):
//   workers=N             worker threads (default: one per physical core the
//                         process may use, capped by the cgroup CPU quota)
//   cpus=LIST             restrict workers to these CPUs ("0-3,8")
//   nodes=current|all     NUMA nodes to use (default all)
//   spin_us=N             microseconds an idle worker spins before sleeping
//                         (default: the process wait policy; 0 when
//                         oversubscribed)
//   assist=N              application threads that may run the device's
//                         compute while they wait for it in a host wait
//                         (src/base/wait_assist.h), 0..64 (0: a waiting
//                         thread only spins and sleeps). Default: 1 when
//                         the workers leave a CPU free (workers=N-1 on N
//                         CPUs: the waiting thread is the Nth), else 0
//   queues=N              number of queues, 1..64 (default 1); affinity bit i
//                         selects queue i % N, ANY the lowest set bit's
//   file_io=auto|io_uring|threads|sync
//                         how queue_read/queue_write move the bytes of fd
//                         files (default auto): through a proactor owned by
//                         the device (src/async/proactor.h), so the control
//                         process submits and moves on and the completion
//                         signals from the proactor's thread; auto picks
//                         io_uring when the kernel allows it, threads
//                         otherwise; forcing io_uring where it is
//                         unavailable fails device creation (UNAVAILABLE,
//                         with the reason). sync makes no proactor: the
//                         control process reads and writes itself. Streams
//                         (pipes, sockets) and memory files always take the
//                         synchronous path.
//   file_io_depth=N       the proactor's size, 1..4096: the io_uring ring's
//                         entries, or the pool's threads (at most 64)
//                         (default 128 entries, 4 threads)
//
// Properties (weft_device_query_i64) besides the common ones:
//   file_io.async         1 when a proactor moves file bytes, else 0
//   file_io.backend       0 sync, 1 threads, 2 io_uring
//   assist.count          the assist=N in effect
//
// Lifetime: operations do not retain the device. Releasing the last
// reference shuts it down: operations still waiting are cancelled (their
// signal semaphores fail with CANCELLED naming the operation), running ones
// finish, every worker leaves, and everything is freed, on the releasing
// thread. When that thread is one of the device's own workers (an op
// retiring drops the last reference to a command buffer, which holds the
// device; a host call releases it), it cannot wait for itself: the same
// shutdown then runs on a short-lived detached thread of its own.
#ifndef WEFT_DRIVERS_LOCAL_TASK_LOCAL_TASK_DEVICE_H_
#define WEFT_DRIVERS_LOCAL_TASK_LOCAL_TASK_DEVICE_H_

#include <stdio.h>

#include "async/proactor.h"
#include "base/atomics.h"
#include "base/notification.h"
#include "drivers/local_task/local_task_queue.h"
#include "hal/device_impl.h"
#include "task/executor.h"

// The most queues one device may have (one per affinity bit).
#define WEFT_LOCAL_TASK_MAX_QUEUE_COUNT 64u
// Kernel scratch memory per worker; a recording whose kernels need more
// gets its own per-worker scratch in its op record.
#define WEFT_LOCAL_TASK_WORKER_LOCAL_MEMORY_SIZE (64u * 1024u)
// The most a control process lingers after its last op.
#define WEFT_LOCAL_TASK_MAX_CONTROL_LINGER_NS (20ll * 1000)
// Queues when the device string does not say.
#define WEFT_LOCAL_TASK_DEFAULT_QUEUE_COUNT 1u
// assist=N: its largest value (the executor's guest limit), and the value
// that stands for "not given" (auto).
#define WEFT_LOCAL_TASK_MAX_ASSIST_COUNT 64u
#define WEFT_LOCAL_TASK_ASSIST_AUTO UINT32_MAX
// The largest file_io_depth, and the most threads it gives a thread pool.
#define WEFT_LOCAL_TASK_MAX_FILE_IO_DEPTH 4096u
#define WEFT_LOCAL_TASK_MAX_FILE_IO_THREADS 64u

// How a device moves the bytes of fd files (the file_io.backend property).
typedef enum weft_local_task_file_io_e {
  WEFT_LOCAL_TASK_FILE_IO_SYNC = 0,
  WEFT_LOCAL_TASK_FILE_IO_THREADS = 1,
  WEFT_LOCAL_TASK_FILE_IO_IO_URING = 2,
} weft_local_task_file_io_t;

typedef struct weft_local_task_device_t {
  weft_device_t base;
  weft_executor_t* executor;
  uint32_t worker_count;
  // Workers plus assisting guests: the drainer indices a compute context
  // and its per-drainer scratch are sized for.
  uint32_t drainer_count;
  // Drainers a dispatch's tiles are laid out for: the workers, plus guests
  // while CPUs are left for them (a guest takes a worker's CPU, not one
  // more: block_processor.h's layout_worker_count).
  uint32_t layout_drainer_count;
  // Each drainer index's seat in a dispatch's claim lanes
  // (weft_executor_drainer_seat): |drainer_count| entries.
  uint32_t* drainer_seats;
  // How long a control process keeps draining (polling its ready list)
  // after it ran out of ops, before it lets its worker go: the worker's own
  // spin budget (0 when spinning is off), capped. The next op of a host
  // that submits right after its wait then needs no trip through the
  // executor's scheduling.
  weft_duration_t control_linger_ns;
  // Operation records, parking and the registry, shared by every queue of
  // the device (hal/queue_scheduler.h).
  weft_queue_scheduler_t scheduler;
  // Ready functions between their push and their last touch of the device
  // (they still touch it after the op may have retired): destroy waits for
  // this to drop to 0 before it frees anything.
  weft_atomic_uint32_t readying_count;
  // 1 once the device is shutting down (set by destroy, seq_cst).
  weft_atomic_uint32_t shutting_down;
  uint32_t queue_count;
  weft_local_task_queue_t* queues;  // |queue_count|, 64-byte aligned
  // Reads and writes of fd files (local_task_file.c); NULL with
  // file_io=sync. Destroyed after every op retired and before the device is
  // freed: a completion still touches the device after its op retired.
  weft_proactor_t* proactor;
  // The topology's account of the CPUs, groups and nodes chosen and why,
  // plus the spin policy (weft-info prints it); owned.
  char* topology_explanation;
  weft_local_task_file_io_t file_io;
} weft_local_task_device_t;

WEFT_DEVICE_DEFINE_CAST(weft_local_task_device_t, weft_local_task_device_cast)

// Returns the queue an operation with |affinity| (non-zero) runs on: the
// lowest set bit modulo the queue count.
weft_local_task_queue_t* weft_local_task_device_select_queue(
    weft_local_task_device_t* device, weft_queue_affinity_t affinity);

// What the calling thread is draining: a device (NULL: none) and the
// drainer index it drains with (WEFT_LOCAL_TASK_NO_DRAINER where it runs
// the device's work without one, as the file-completion thread does).
typedef struct weft_local_task_drain_mark_t {
  weft_local_task_device_t* device;
  uint32_t index;
} weft_local_task_drain_mark_t;
#define WEFT_LOCAL_TASK_NO_DRAINER UINT32_MAX

// Marks the calling thread as running a drain of |device| as drainer
// |index| and returns the previous mark, which the drain restores
// (weft_local_task_device_exit_drain) when it returns. A thread-local, so
// that destroy can tell when it runs on one of the device's own workers
// (see above), and an op made ready inside a drain can be issued there
// (local_task_queue.c).
weft_local_task_drain_mark_t weft_local_task_device_enter_drain(
    weft_local_task_device_t* device, uint32_t index);
void weft_local_task_device_exit_drain(weft_local_task_drain_mark_t previous);

// Whether the calling thread is inside a drain of |device| (see above).
bool weft_local_task_device_is_draining(const weft_local_task_device_t* device);

// The drainer index the calling thread drains |device| with, or
// WEFT_LOCAL_TASK_NO_DRAINER when it is not draining it as a drainer.
uint32_t weft_local_task_device_drainer_index(
    const weft_local_task_device_t* device);

#endif  // WEFT_DRIVERS_LOCAL_TASK_LOCAL_TASK_DEVICE_H_
