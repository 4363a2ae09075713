// trace_producer TRACE.json: writes a synthetic trace through weft's tracing
// API for the weft-trace tests. It plays a small runtime: a host thread
// submits queue ops following the protocol of src/base/trace.h (submit,
// ready, the op's zone, signal, linked by a flow), worker threads run them
// (dispatches with nested block regions; file reads complete on an I/O
// thread, asynchronously), workers sleep and wake, semaphores signal and
// sometimes fail. Exits 0 when the trace was written.
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/thread.h"
#include "base/trace.h"
#include "weft/time.h"
#include "weft/trace.h"

enum {
  kWorkerCount = 4,
  kOpCount = 240,
  kOpTypeCount = 4,
};

typedef enum op_type_e {
  OP_FILL = 0,
  OP_COPY,
  OP_DISPATCH,
  OP_READ,
} op_type_t;

static const char* const kOpNames[kOpTypeCount] = {
    "queue_fill", "queue_copy", "queue_dispatch", "queue_read"};

typedef struct op_t {
  op_type_t type;
  uint64_t id;
  bool ready_at_submit;
  bool fails;
  uint64_t bytes;
} op_t;

// A FIFO of op indices guarded by a mutex; the consumers sleep on |cond|.
typedef struct op_queue_t {
  pthread_mutex_t mutex;
  pthread_cond_t cond;
  // Broadcast when a consumer goes to sleep (queue_wait_sleepers).
  pthread_cond_t sleeping;
  uint32_t sleepers;
  uint32_t items[kOpCount];
  uint32_t head;
  uint32_t tail;
  bool closed;
} op_queue_t;

typedef struct producer_t {
  op_t ops[kOpCount];
  op_queue_t work;  // host -> workers
  op_queue_t io;    // workers -> the I/O thread
  uint64_t semaphore_value;
  pthread_mutex_t semaphore_mutex;
} producer_t;

static void queue_initialize(op_queue_t* queue) {
  memset(queue, 0, sizeof(*queue));
  pthread_mutex_init(&queue->mutex, NULL);
  pthread_cond_init(&queue->cond, NULL);
  pthread_cond_init(&queue->sleeping, NULL);
}

static void queue_deinitialize(op_queue_t* queue) {
  pthread_cond_destroy(&queue->sleeping);
  pthread_cond_destroy(&queue->cond);
  pthread_mutex_destroy(&queue->mutex);
}

static void queue_push(op_queue_t* queue, uint32_t item) {
  pthread_mutex_lock(&queue->mutex);
  queue->items[queue->tail++] = item;
  pthread_cond_signal(&queue->cond);
  pthread_mutex_unlock(&queue->mutex);
}

static void queue_close(op_queue_t* queue) {
  pthread_mutex_lock(&queue->mutex);
  queue->closed = true;
  pthread_cond_broadcast(&queue->cond);
  pthread_mutex_unlock(&queue->mutex);
}

// Pops an item into |out_item|; sleeps (a "sleep" zone, then a "wake"
// instant) while the queue is empty. False once it is closed and empty.
static bool queue_pop(op_queue_t* queue, uint32_t* out_item) {
  bool got = false;
  pthread_mutex_lock(&queue->mutex);
  while (queue->head == queue->tail && !queue->closed) {
    WEFT_TRACE_BEGIN(WEFT_TRACE_CATEGORY_TASK, "sleep");
    ++queue->sleepers;
    pthread_cond_broadcast(&queue->sleeping);
    pthread_cond_wait(&queue->cond, &queue->mutex);
    --queue->sleepers;
    WEFT_TRACE_END();
    WEFT_TRACE_INSTANT(WEFT_TRACE_CATEGORY_TASK, "wake", 0, 0);
  }
  if (queue->head != queue->tail) {
    *out_item = queue->items[queue->head++];
    got = true;
  }
  pthread_mutex_unlock(&queue->mutex);
  return got;
}

// Waits until |count| consumers sleep in queue_pop (the queue empty).
static void queue_wait_sleepers(op_queue_t* queue, uint32_t count) {
  pthread_mutex_lock(&queue->mutex);
  while (queue->sleepers < count) {
    pthread_cond_wait(&queue->sleeping, &queue->mutex);
  }
  pthread_mutex_unlock(&queue->mutex);
}

static void spin_for(weft_duration_t duration_ns) {
  weft_time_t until = weft_time_now() + duration_ns;
  while (weft_time_now() < until) {
  }
}

// Publishes the op's signal: the protocol's "signal" instant (1 signalled,
// 0 failed) and the flow's end, inside a semaphore zone.
static void signal_op(producer_t* producer, const op_t* op) {
  WEFT_TRACE_BEGIN(WEFT_TRACE_CATEGORY_SEMAPHORE, "publish");
  WEFT_TRACE_INSTANT(WEFT_TRACE_CATEGORY_QUEUE, "signal", op->id,
                     op->fails ? 0 : 1);
  WEFT_TRACE_FLOW(WEFT_TRACE_CATEGORY_QUEUE, "op", op->id, WEFT_TRACE_FLOW_END);
  if (op->fails) {
    WEFT_TRACE_INSTANT(WEFT_TRACE_CATEGORY_SEMAPHORE, "fail", 0, 0);
  } else {
    pthread_mutex_lock(&producer->semaphore_mutex);
    uint64_t value = ++producer->semaphore_value;
    pthread_mutex_unlock(&producer->semaphore_mutex);
    WEFT_TRACE_INSTANT(WEFT_TRACE_CATEGORY_SEMAPHORE, "signal", 0, value);
  }
  WEFT_TRACE_END();
}

static int worker_main(void* user_data) {
  producer_t* producer = (producer_t*)user_data;
  uint32_t index = 0;
  while (queue_pop(&producer->work, &index)) {
    op_t* op = &producer->ops[index];
    if (!op->ready_at_submit) {
      // The op's last wait is reached here.
      WEFT_TRACE_BEGIN(WEFT_TRACE_CATEGORY_TASK, "resolve_waits");
      WEFT_TRACE_INSTANT(WEFT_TRACE_CATEGORY_QUEUE, "ready", op->id, 0);
      WEFT_TRACE_FLOW(WEFT_TRACE_CATEGORY_QUEUE, "op", op->id,
                      WEFT_TRACE_FLOW_STEP);
      WEFT_TRACE_END();
    }
    WEFT_TRACE_BEGIN_ID(WEFT_TRACE_CATEGORY_QUEUE, kOpNames[op->type], op->id);
    switch (op->type) {
      case OP_FILL:
      case OP_COPY:
        spin_for(5000 + (weft_duration_t)(index % 7) * 1000);
        break;
      case OP_DISPATCH:
        for (int region = 0; region < 2; ++region) {
          WEFT_TRACE_BEGIN_VALUE(WEFT_TRACE_CATEGORY_BLOCK, "region", 0,
                                 (uint64_t)(16 + region));
          WEFT_TRACE_BEGIN(WEFT_TRACE_CATEGORY_BLOCK, "tiles");
          spin_for(4000);
          WEFT_TRACE_END();
          WEFT_TRACE_END();
        }
        break;
      case OP_READ:
        WEFT_TRACE_BEGIN_VALUE(WEFT_TRACE_CATEGORY_FILE, "read_issue", 0,
                               op->bytes);
        spin_for(1000);
        WEFT_TRACE_END();
        queue_push(&producer->io, index);
        break;
    }
    WEFT_TRACE_END();
    if (op->type != OP_READ) signal_op(producer, op);
  }
  return 0;
}

// Completes file reads: the asynchronous part of OP_READ.
static int io_main(void* user_data) {
  producer_t* producer = (producer_t*)user_data;
  uint32_t index = 0;
  while (queue_pop(&producer->io, &index)) {
    op_t* op = &producer->ops[index];
    WEFT_TRACE_BEGIN_VALUE(WEFT_TRACE_CATEGORY_FILE, "read_complete", 0,
                           op->bytes);
    spin_for(8000);
    WEFT_TRACE_END();
    signal_op(producer, op);
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: trace_producer TRACE.json\n");
    return 2;
  }
  weft_status_t status = weft_trace_start(argv[1]);
  if (!weft_status_is_ok(status)) {
    weft_status_fprint(stderr, status);
    weft_status_free(status);
    return 1;
  }
  weft_trace_set_thread_name("host");
  static producer_t producer;
  queue_initialize(&producer.work);
  queue_initialize(&producer.io);
  pthread_mutex_init(&producer.semaphore_mutex, NULL);

  weft_thread_t* workers[kWorkerCount] = {0};
  weft_thread_t* io_thread = NULL;
  for (int i = 0; i < kWorkerCount && weft_status_is_ok(status); ++i) {
    char name[32];
    snprintf(name, sizeof(name), "weft-worker-%d", i);
    weft_thread_params_t params = {.name = name, .cpu = -1};
    status = weft_thread_create(worker_main, &producer, &params,
                                weft_allocator_system(), &workers[i]);
  }
  if (weft_status_is_ok(status)) {
    weft_thread_params_t params = {.name = "weft-io", .cpu = -1};
    status = weft_thread_create(io_main, &producer, &params,
                                weft_allocator_system(), &io_thread);
  }
  // Every worker is asleep before the first op: each has a track in the
  // trace (the summary's worker table lists weft-worker-0), however late
  // its thread first ran.
  if (weft_status_is_ok(status)) {
    queue_wait_sleepers(&producer.work, kWorkerCount);
  }
  for (uint32_t i = 0; i < kOpCount && weft_status_is_ok(status); ++i) {
    op_t* op = &producer.ops[i];
    op->type = (op_type_t)(i % kOpTypeCount);
    op->id = weft_trace_next_id();
    op->ready_at_submit = i % 3 != 0;
    op->fails = op->type == OP_FILL && i % 20 == 0;
    op->bytes = op->type == OP_READ ? 4096u * (1 + (i / 4) % 4) : 0;
    WEFT_TRACE_BEGIN(WEFT_TRACE_CATEGORY_HOST, "queue_submit");
    WEFT_TRACE_INSTANT(WEFT_TRACE_CATEGORY_QUEUE, "submit", op->id, 0);
    WEFT_TRACE_FLOW(WEFT_TRACE_CATEGORY_QUEUE, "op", op->id,
                    WEFT_TRACE_FLOW_START);
    if (op->ready_at_submit) {
      WEFT_TRACE_INSTANT(WEFT_TRACE_CATEGORY_QUEUE, "ready", op->id, 0);
      WEFT_TRACE_FLOW(WEFT_TRACE_CATEGORY_QUEUE, "op", op->id,
                      WEFT_TRACE_FLOW_STEP);
    }
    WEFT_TRACE_END();
    queue_push(&producer.work, i);
    // Bursts of 16, then a pause: the workers go to sleep between them.
    if (i % 16 == 15) weft_sleep_until(weft_time_now() + 200000);
  }
  queue_close(&producer.work);
  for (int i = 0; i < kWorkerCount; ++i) weft_thread_join(workers[i]);
  queue_close(&producer.io);
  weft_thread_join(io_thread);

  if (weft_status_is_ok(status)) {
    status = weft_trace_stop();
  } else {
    weft_status_ignore(weft_trace_stop());
  }
  pthread_mutex_destroy(&producer.semaphore_mutex);
  queue_deinitialize(&producer.io);
  queue_deinitialize(&producer.work);
  int code = 0;
  if (!weft_status_is_ok(status)) {
    weft_status_fprint(stderr, status);
    weft_status_free(status);
    code = 1;
  } else {
    printf("trace_producer: wrote %s (%d ops on %d workers)\n", argv[1],
           kOpCount, kWorkerCount);
  }
  return code;
}
