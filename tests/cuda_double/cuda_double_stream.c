// weft's CUDA test double: streams, events and host functions. A TEST
// DOUBLE, never shipped or installed (see cuda_double.h).
//
// A stream is a worker thread running a FIFO of tasks in order, holding at
// most its queue depth of tasks not yet completed: a call that would queue
// one more blocks until the worker completes one, as a GPU's command queue
// fills behind an unmet wait. An event
// is a generation counter: each record starts a generation and queues a
// task that completes it; the event keeps the records not yet completed on
// a list, so "generation g completed" is exact whatever order records on
// different streams complete in.
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_double_impl.h"

// Enqueues that found their stream full (weft_cuda_double_full_queue_waits).
static atomic_uint_least64_t weft_cuda_double_full_waits;

WEFT_CUDA_DOUBLE_EXPORT uint64_t weft_cuda_double_full_queue_waits(void) {
  return atomic_load(&weft_cuda_double_full_waits);
}

struct CUstream_st {
  uint32_t magic;
  CUcontext context;
  pthread_t thread;
  pthread_mutex_t mutex;
  // Signalled when a task is queued or the stream shuts down.
  pthread_cond_t work_available;
  // Broadcast when a task completes (a full queue waits on it too).
  pthread_cond_t progress;
  weft_cuda_double_task_t* head;
  weft_cuda_double_task_t* tail;
  // Tasks queued and completed since creation.
  uint64_t submitted;
  uint64_t completed;
  bool shutting_down;
  // Value waits given up on because the stream was being destroyed.
  uint32_t abandoned_waits;
  // Fixed at creation (WEFT_CUDA_DOUBLE_LATENCY_US).
  uint64_t latency_us;
  // The most tasks queued and not completed (0: unbounded); fixed at
  // creation (weft_cuda_double_set_queue_depth).
  uint32_t queue_depth;
};

typedef struct weft_cuda_double_record_task_t weft_cuda_double_record_task_t;

struct CUevent_st {
  uint32_t magic;
  CUcontext context;
  unsigned int flags;
  pthread_mutex_t mutex;
  // Broadcast when a record completes.
  pthread_cond_t completed;
  // The handle's reference plus one per queued record or wait task: a
  // destroyed event lives until its last task has run.
  uint32_t reference_count;
  // The latest generation recorded (0: never recorded).
  uint64_t generation;
  // Records queued and not yet completed (any order).
  weft_cuda_double_record_task_t* pending;
  // The latest generation completed, and the host time it completed at.
  uint64_t timed_generation;
  uint64_t time_ns;
};

struct weft_cuda_double_record_task_t {
  weft_cuda_double_task_t base;
  CUevent event;
  uint64_t generation;
  // Next on the event's pending list.
  weft_cuda_double_record_task_t* next_pending;
};

typedef struct weft_cuda_double_wait_task_t {
  weft_cuda_double_task_t base;
  CUevent event;
  uint64_t generation;
} weft_cuda_double_wait_task_t;

typedef struct weft_cuda_double_host_task_t {
  weft_cuda_double_task_t base;
  CUhostFn fn;
  void* user_data;
} weft_cuda_double_host_task_t;

//===----------------------------------------------------------------------===//
// Streams
//===----------------------------------------------------------------------===//

static void weft_cuda_double_sleep_us(uint64_t microseconds) {
  struct timespec delay = {(time_t)(microseconds / 1000000),
                           (long)(microseconds % 1000000) * 1000};
  while (nanosleep(&delay, &delay) != 0) {
  }
}

// Runs the stream's tasks in order until it shuts down with none left.
static void* weft_cuda_double_stream_main(void* arg) {
  CUstream stream = (CUstream)arg;
  pthread_mutex_lock(&stream->mutex);
  for (;;) {
    while (!stream->head && !stream->shutting_down) {
      pthread_cond_wait(&stream->work_available, &stream->mutex);
    }
    weft_cuda_double_task_t* task = stream->head;
    if (!task) break;  // shutting down and drained
    stream->head = task->next;
    if (!stream->head) stream->tail = NULL;
    pthread_mutex_unlock(&stream->mutex);

    if (stream->latency_us) weft_cuda_double_sleep_us(stream->latency_us);
    task->run(task);
    free(task);

    pthread_mutex_lock(&stream->mutex);
    ++stream->completed;
    pthread_cond_broadcast(&stream->progress);
  }
  pthread_mutex_unlock(&stream->mutex);
  return NULL;
}

CUresult weft_cuda_double__check_stream(CUstream stream, CUcontext context) {
  // The NULL stream and the special handles are not objects to read.
  if (stream == NULL || stream == CU_STREAM_LEGACY ||
      stream == CU_STREAM_PER_THREAD) {
    return CUDA_ERROR_INVALID_HANDLE;
  }
  if (stream->magic != WEFT_CUDA_DOUBLE_MAGIC_STREAM) {
    return CUDA_ERROR_INVALID_HANDLE;
  }
  return !context || stream->context == context ? CUDA_SUCCESS
                                                : CUDA_ERROR_INVALID_CONTEXT;
}

weft_cuda_double_task_t* weft_cuda_double__task_allocate(
    size_t size, weft_cuda_double_task_fn_t run) {
  weft_cuda_double_task_t* task = (weft_cuda_double_task_t*)calloc(1, size);
  if (task) task->run = run;
  return task;
}

void weft_cuda_double__stream_enqueue(CUstream stream,
                                      weft_cuda_double_task_t* task) {
  task->next = NULL;
  pthread_mutex_lock(&stream->mutex);
  if (stream->queue_depth &&
      stream->submitted - stream->completed >= stream->queue_depth) {
    atomic_fetch_add(&weft_cuda_double_full_waits, 1);
  }
  while (stream->queue_depth &&
         stream->submitted - stream->completed >= stream->queue_depth) {
    pthread_cond_wait(&stream->progress, &stream->mutex);
  }
  if (stream->tail) {
    stream->tail->next = task;
  } else {
    stream->head = task;
  }
  stream->tail = task;
  ++stream->submitted;
  pthread_cond_signal(&stream->work_available);
  pthread_mutex_unlock(&stream->mutex);
}

bool weft_cuda_double__stream_is_shutting_down(CUstream stream) {
  pthread_mutex_lock(&stream->mutex);
  bool shutting_down = stream->shutting_down;
  pthread_mutex_unlock(&stream->mutex);
  return shutting_down;
}

void weft_cuda_double__stream_note_abandoned_wait(CUstream stream) {
  pthread_mutex_lock(&stream->mutex);
  ++stream->abandoned_waits;
  pthread_mutex_unlock(&stream->mutex);
}

WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuStreamCreate(CUstream* phStream,
                                                        unsigned int Flags) {
  CUcontext context = NULL;
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuStreamCreate, &context);
  if (result == CUDA_SUCCESS &&
      (!phStream || (Flags & ~(unsigned int)CU_STREAM_NON_BLOCKING))) {
    result = CUDA_ERROR_INVALID_VALUE;
  }
  CUstream stream = NULL;
  if (result == CUDA_SUCCESS) {
    stream = (CUstream)calloc(1, sizeof(*stream));
    if (!stream) result = CUDA_ERROR_OUT_OF_MEMORY;
  }
  if (result == CUDA_SUCCESS) {
    stream->magic = WEFT_CUDA_DOUBLE_MAGIC_STREAM;
    stream->context = context;
    stream->latency_us = weft_cuda_double__latency_us();
    stream->queue_depth = weft_cuda_double__queue_depth();
    pthread_mutex_init(&stream->mutex, NULL);
    pthread_cond_init(&stream->work_available, NULL);
    pthread_cond_init(&stream->progress, NULL);
    if (pthread_create(&stream->thread, NULL, weft_cuda_double_stream_main,
                       stream) != 0) {
      pthread_cond_destroy(&stream->progress);
      pthread_cond_destroy(&stream->work_available);
      pthread_mutex_destroy(&stream->mutex);
      free(stream);
      result = CUDA_ERROR_OUT_OF_MEMORY;
    } else {
      pthread_setname_np(stream->thread, "cuda-double");
      *phStream = stream;
    }
  }
  return result;
}

// Waits for the stream's queued work, then joins its worker. A value wait
// still unmet is abandoned after a grace period and the destroy fails with
// CUDA_ERROR_ILLEGAL_STATE (see cuda_double.h).
WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuStreamDestroy(CUstream hStream) {
  CUcontext context = NULL;
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuStreamDestroy, &context);
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double__check_stream(hStream, NULL);
  }
  if (result == CUDA_SUCCESS) {
    pthread_mutex_lock(&hStream->mutex);
    hStream->magic = 0;
    hStream->shutting_down = true;
    pthread_cond_signal(&hStream->work_available);
    pthread_mutex_unlock(&hStream->mutex);
    pthread_join(hStream->thread, NULL);
    // The worker has left: nothing else reads the stream now.
    if (hStream->abandoned_waits) result = CUDA_ERROR_ILLEGAL_STATE;
    pthread_cond_destroy(&hStream->progress);
    pthread_cond_destroy(&hStream->work_available);
    pthread_mutex_destroy(&hStream->mutex);
    free(hStream);
  }
  return result;
}

WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuStreamSynchronize(CUstream hStream) {
  CUcontext context = NULL;
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuStreamSynchronize, &context);
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double__check_stream(hStream, NULL);
  }
  if (result == CUDA_SUCCESS) {
    pthread_mutex_lock(&hStream->mutex);
    uint64_t target = hStream->submitted;
    while (hStream->completed < target) {
      pthread_cond_wait(&hStream->progress, &hStream->mutex);
    }
    pthread_mutex_unlock(&hStream->mutex);
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Host functions
//===----------------------------------------------------------------------===//

static void weft_cuda_double_host_task_run(weft_cuda_double_task_t* base) {
  weft_cuda_double_host_task_t* task = (weft_cuda_double_host_task_t*)base;
  task->fn(task->user_data);
}

WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuLaunchHostFunc(CUstream hStream,
                                                          CUhostFn fn,
                                                          void* userData) {
  CUcontext context = NULL;
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuLaunchHostFunc, &context);
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double__check_stream(hStream, context);
  }
  if (result == CUDA_SUCCESS && !fn) result = CUDA_ERROR_INVALID_VALUE;
  weft_cuda_double_host_task_t* task = NULL;
  if (result == CUDA_SUCCESS) {
    task = (weft_cuda_double_host_task_t*)weft_cuda_double__task_allocate(
        sizeof(*task), weft_cuda_double_host_task_run);
    if (!task) result = CUDA_ERROR_OUT_OF_MEMORY;
  }
  if (result == CUDA_SUCCESS) {
    task->fn = fn;
    task->user_data = userData;
    weft_cuda_double__stream_enqueue(hStream, &task->base);
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Events
//===----------------------------------------------------------------------===//

static bool weft_cuda_double_event_is_valid(CUevent event) {
  return event && event->magic == WEFT_CUDA_DOUBLE_MAGIC_EVENT;
}

// Whether |generation| of |event| is still queued. Called with the event's
// mutex held.
static bool weft_cuda_double_event_pending_locked(CUevent event,
                                                  uint64_t generation) {
  for (weft_cuda_double_record_task_t* record = event->pending; record;
       record = record->next_pending) {
    if (record->generation == generation) return true;
  }
  return false;
}

// Drops one reference; the last frees the event.
static void weft_cuda_double_event_release(CUevent event) {
  pthread_mutex_lock(&event->mutex);
  bool last = --event->reference_count == 0;
  pthread_mutex_unlock(&event->mutex);
  if (last) {
    pthread_cond_destroy(&event->completed);
    pthread_mutex_destroy(&event->mutex);
    free(event);
  }
}

static void weft_cuda_double_record_task_run(weft_cuda_double_task_t* base) {
  weft_cuda_double_record_task_t* task = (weft_cuda_double_record_task_t*)base;
  CUevent event = task->event;
  uint64_t now_ns = weft_cuda_double__now_ns();
  pthread_mutex_lock(&event->mutex);
  weft_cuda_double_record_task_t** link = &event->pending;
  while (*link != task) link = &(*link)->next_pending;
  *link = task->next_pending;
  if (task->generation > event->timed_generation) {
    event->timed_generation = task->generation;
    event->time_ns = now_ns;
  }
  pthread_cond_broadcast(&event->completed);
  pthread_mutex_unlock(&event->mutex);
  weft_cuda_double_event_release(event);
}

// Blocks the stream until the generation it waits for completes, however
// long: a wait on a record that never runs hangs, as on a GPU.
static void weft_cuda_double_wait_task_run(weft_cuda_double_task_t* base) {
  weft_cuda_double_wait_task_t* task = (weft_cuda_double_wait_task_t*)base;
  CUevent event = task->event;
  pthread_mutex_lock(&event->mutex);
  while (weft_cuda_double_event_pending_locked(event, task->generation)) {
    pthread_cond_wait(&event->completed, &event->mutex);
  }
  pthread_mutex_unlock(&event->mutex);
  weft_cuda_double_event_release(event);
}

WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuEventCreate(CUevent* phEvent,
                                                       unsigned int Flags) {
  CUcontext context = NULL;
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuEventCreate, &context);
  const unsigned int supported =
      CU_EVENT_DEFAULT | CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING;
  if (result == CUDA_SUCCESS && (!phEvent || (Flags & ~supported))) {
    result = CUDA_ERROR_INVALID_VALUE;
  }
  CUevent event = NULL;
  if (result == CUDA_SUCCESS) {
    event = (CUevent)calloc(1, sizeof(*event));
    if (!event) result = CUDA_ERROR_OUT_OF_MEMORY;
  }
  if (result == CUDA_SUCCESS) {
    event->magic = WEFT_CUDA_DOUBLE_MAGIC_EVENT;
    event->context = context;
    event->flags = Flags;
    event->reference_count = 1;
    pthread_mutex_init(&event->mutex, NULL);
    pthread_cond_init(&event->completed, NULL);
    *phEvent = event;
  }
  return result;
}

// Allowed with records queued: the event lives until they have run.
WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuEventDestroy(CUevent hEvent) {
  CUcontext context = NULL;
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuEventDestroy, &context);
  if (result == CUDA_SUCCESS && !weft_cuda_double_event_is_valid(hEvent)) {
    result = CUDA_ERROR_INVALID_HANDLE;
  }
  if (result == CUDA_SUCCESS) {
    pthread_mutex_lock(&hEvent->mutex);
    hEvent->magic = 0;
    pthread_mutex_unlock(&hEvent->mutex);
    weft_cuda_double_event_release(hEvent);
  }
  return result;
}

WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuEventRecord(CUevent hEvent,
                                                       CUstream hStream) {
  CUcontext context = NULL;
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuEventRecord, &context);
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double__check_stream(hStream, context);
  }
  if (result == CUDA_SUCCESS && !weft_cuda_double_event_is_valid(hEvent)) {
    result = CUDA_ERROR_INVALID_HANDLE;
  }
  // An event records only on streams of its own context.
  if (result == CUDA_SUCCESS && hEvent->context != hStream->context) {
    result = CUDA_ERROR_INVALID_HANDLE;
  }
  weft_cuda_double_record_task_t* task = NULL;
  if (result == CUDA_SUCCESS) {
    task = (weft_cuda_double_record_task_t*)weft_cuda_double__task_allocate(
        sizeof(*task), weft_cuda_double_record_task_run);
    if (!task) result = CUDA_ERROR_OUT_OF_MEMORY;
  }
  if (result == CUDA_SUCCESS) {
    task->event = hEvent;
    pthread_mutex_lock(&hEvent->mutex);
    task->generation = ++hEvent->generation;
    task->next_pending = hEvent->pending;
    hEvent->pending = task;
    ++hEvent->reference_count;
    pthread_mutex_unlock(&hEvent->mutex);
    weft_cuda_double__stream_enqueue(hStream, &task->base);
  }
  return result;
}

// Needs no current context (see cuda_double_impl.h).
WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuEventQuery(CUevent hEvent) {
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuEventQuery, NULL);
  if (result == CUDA_SUCCESS && !weft_cuda_double_event_is_valid(hEvent)) {
    result = CUDA_ERROR_INVALID_HANDLE;
  }
  if (result == CUDA_SUCCESS) {
    pthread_mutex_lock(&hEvent->mutex);
    if (weft_cuda_double_event_pending_locked(hEvent, hEvent->generation)) {
      result = CUDA_ERROR_NOT_READY;
    }
    pthread_mutex_unlock(&hEvent->mutex);
  }
  return result;
}

WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuEventSynchronize(CUevent hEvent) {
  CUcontext context = NULL;
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuEventSynchronize, &context);
  if (result == CUDA_SUCCESS && !weft_cuda_double_event_is_valid(hEvent)) {
    result = CUDA_ERROR_INVALID_HANDLE;
  }
  if (result == CUDA_SUCCESS) {
    pthread_mutex_lock(&hEvent->mutex);
    uint64_t generation = hEvent->generation;
    while (weft_cuda_double_event_pending_locked(hEvent, generation)) {
      pthread_cond_wait(&hEvent->completed, &hEvent->mutex);
    }
    pthread_mutex_unlock(&hEvent->mutex);
  }
  return result;
}

// The stream waits for the generation recorded latest at this call; an
// event never recorded, or already complete, queues nothing.
WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuStreamWaitEvent(CUstream hStream,
                                                           CUevent hEvent,
                                                           unsigned int Flags) {
  CUcontext context = NULL;
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuStreamWaitEvent, &context);
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double__check_stream(hStream, context);
  }
  if (result == CUDA_SUCCESS && !weft_cuda_double_event_is_valid(hEvent)) {
    result = CUDA_ERROR_INVALID_HANDLE;
  }
  if (result == CUDA_SUCCESS && Flags != CU_EVENT_WAIT_DEFAULT) {
    result = CUDA_ERROR_INVALID_VALUE;
  }
  // Allocated first so that nothing fails once the event is referenced.
  weft_cuda_double_wait_task_t* task = NULL;
  if (result == CUDA_SUCCESS) {
    task = (weft_cuda_double_wait_task_t*)weft_cuda_double__task_allocate(
        sizeof(*task), weft_cuda_double_wait_task_run);
    if (!task) result = CUDA_ERROR_OUT_OF_MEMORY;
  }
  if (result == CUDA_SUCCESS) {
    task->event = hEvent;
    pthread_mutex_lock(&hEvent->mutex);
    task->generation = hEvent->generation;
    bool pending =
        weft_cuda_double_event_pending_locked(hEvent, task->generation);
    if (pending) ++hEvent->reference_count;
    pthread_mutex_unlock(&hEvent->mutex);
    if (pending) {
      weft_cuda_double__stream_enqueue(hStream, &task->base);
    } else {
      free(task);
    }
  }
  return result;
}

// The host time |event|'s latest record completed at: INVALID_HANDLE when
// it has timing disabled or was never recorded, NOT_READY while pending.
static CUresult weft_cuda_double_event_time(CUevent event,
                                            uint64_t* out_time_ns) {
  if (!weft_cuda_double_event_is_valid(event) ||
      (event->flags & CU_EVENT_DISABLE_TIMING)) {
    return CUDA_ERROR_INVALID_HANDLE;
  }
  CUresult result = CUDA_SUCCESS;
  pthread_mutex_lock(&event->mutex);
  if (event->generation == 0) {
    result = CUDA_ERROR_INVALID_HANDLE;
  } else if (weft_cuda_double_event_pending_locked(event, event->generation)) {
    result = CUDA_ERROR_NOT_READY;
  } else {
    *out_time_ns = event->time_ns;
  }
  pthread_mutex_unlock(&event->mutex);
  return result;
}

WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI
cuEventElapsedTime(float* pMilliseconds, CUevent hStart, CUevent hEnd) {
  CUcontext context = NULL;
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuEventElapsedTime, &context);
  if (result == CUDA_SUCCESS && !pMilliseconds) {
    result = CUDA_ERROR_INVALID_VALUE;
  }
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double_event_time(hStart, &start_ns);
  }
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double_event_time(hEnd, &end_ns);
  }
  if (result == CUDA_SUCCESS) {
    *pMilliseconds = (float)(((double)end_ns - (double)start_ns) / 1e6);
  }
  return result;
}
