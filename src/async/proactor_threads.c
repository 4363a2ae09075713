// weft: the proactor's thread-pool backend (see proactor.h).
//
// A FIFO of submitted ops under a slim mutex and |thread_count| threads that
// each take one op at a time, run the whole transfer with pread/pwrite
// (split and resumed as proactor_impl.h describes) and call its callback.
// Idle threads block on a notification; a submit notifies one of them.
#include <stdio.h>

#include "async/proactor_impl.h"
#include "base/mutex.h"
#include "base/notification.h"
#include "base/thread.h"
#include "base/trace.h"
#include "base/wait_policy.h"

typedef struct weft_proactor_threads_t {
  weft_proactor_t base;  // must be first
  weft_wait_policy_t wait_policy;
  // Guards |head|, |tail| and |stopping|.
  weft_slim_mutex_t mutex;
  weft_proactor_op_t* head;
  weft_proactor_op_t* tail;
  bool stopping;
  // Idle threads wait here for an op or the stop.
  weft_notification_t notification;
  uint32_t thread_count;
  weft_thread_t* threads[];
} weft_proactor_threads_t;

static const weft_proactor_vtable_t kWeftProactorThreadsVtable;

// Takes the oldest queued op, or NULL; sets |*out_stopping| when the queue
// is empty and destroy began.
static weft_proactor_op_t* weft_proactor_threads_pop(
    weft_proactor_threads_t* proactor, bool* out_stopping) {
  weft_slim_mutex_lock(&proactor->mutex);
  weft_proactor_op_t* op = proactor->head;
  if (op) {
    proactor->head = op->next;
    if (!proactor->head) proactor->tail = NULL;
    op->next = NULL;
  }
  *out_stopping = !op && proactor->stopping;
  weft_slim_mutex_unlock(&proactor->mutex);
  return op;
}

// True when a thread has something to do (an op, or the stop).
static bool weft_proactor_threads_has_work(weft_proactor_threads_t* proactor) {
  weft_slim_mutex_lock(&proactor->mutex);
  bool has_work = proactor->head != NULL || proactor->stopping;
  weft_slim_mutex_unlock(&proactor->mutex);
  return has_work;
}

static int weft_proactor_threads_main(void* user_data) {
  weft_proactor_threads_t* proactor = (weft_proactor_threads_t*)user_data;
  bool stopping = false;
  while (!stopping) {
    weft_proactor_op_t* op = weft_proactor_threads_pop(proactor, &stopping);
    if (op) {
      weft_status_t status = weft_proactor__check_op(op);
      if (weft_status_is_ok(status)) {
        WEFT_TRACE_BEGIN_VALUE(WEFT_TRACE_CATEGORY_FILE, "transfer", 0,
                               op->length);
        status = weft_proactor__transfer_sync(&proactor->base, op);
        WEFT_TRACE_END();
      }
      weft_proactor__complete(&proactor->base, op, status);
    } else if (!stopping) {
      weft_wait_token_t token =
          weft_notification_prepare_wait(&proactor->notification);
      if (weft_proactor_threads_has_work(proactor)) {
        weft_notification_cancel_wait(&proactor->notification);
      } else {
        weft_notification_commit_wait(&proactor->notification, token,
                                      proactor->wait_policy,
                                      WEFT_TIME_INFINITE_FUTURE);
      }
    }
  }
  return 0;
}

static void weft_proactor_threads_submit(weft_proactor_t* base_proactor,
                                         weft_proactor_op_t* op) {
  weft_proactor_threads_t* proactor = (weft_proactor_threads_t*)base_proactor;
  weft_slim_mutex_lock(&proactor->mutex);
  if (proactor->tail) {
    proactor->tail->next = op;
  } else {
    proactor->head = op;
  }
  proactor->tail = op;
  weft_slim_mutex_unlock(&proactor->mutex);
  weft_notification_notify(&proactor->notification, 1);
}

// Stops and joins the first |count| threads (each finishes the queue first).
static void weft_proactor_threads_stop(weft_proactor_threads_t* proactor,
                                       uint32_t count) {
  weft_slim_mutex_lock(&proactor->mutex);
  proactor->stopping = true;
  weft_slim_mutex_unlock(&proactor->mutex);
  weft_notification_notify(&proactor->notification, INT32_MAX);
  for (uint32_t i = 0; i < count; ++i) {
    weft_thread_join(proactor->threads[i]);
    proactor->threads[i] = NULL;
  }
}

static void weft_proactor_threads_destroy(weft_proactor_t* base_proactor) {
  weft_proactor_threads_t* proactor = (weft_proactor_threads_t*)base_proactor;
  weft_proactor_threads_stop(proactor, proactor->thread_count);
  weft_notification_deinitialize(&proactor->notification);
  weft_slim_mutex_deinitialize(&proactor->mutex);
  weft_allocator_free(proactor->base.allocator, proactor);
}

static const weft_proactor_vtable_t kWeftProactorThreadsVtable = {
    .destroy = weft_proactor_threads_destroy,
    .submit = weft_proactor_threads_submit,
};

weft_status_t weft_proactor__threads_create(
    const weft_proactor_options_t* options, const char* reason,
    weft_allocator_t allocator, weft_proactor_t** out_proactor) {
  weft_proactor_threads_t* proactor = NULL;
  uint32_t thread_count = options->thread_count;
  weft_status_t status = weft_allocator_malloc(
      allocator,
      sizeof(*proactor) + (size_t)thread_count * sizeof(proactor->threads[0]),
      (void**)&proactor);
  if (weft_status_is_ok(status)) {
    weft_proactor__initialize(
        &kWeftProactorThreadsVtable, WEFT_PROACTOR_BACKEND_THREADS, options,
        allocator, &proactor->base, "threads (%u): %s", thread_count, reason);
    proactor->wait_policy = weft_wait_policy_default();
    weft_slim_mutex_initialize(&proactor->mutex);
    weft_notification_initialize(&proactor->notification);
    proactor->thread_count = thread_count;
  }
  const char* prefix = options->thread_name ? options->thread_name : "weft-io";
  uint32_t started = 0;
  for (; weft_status_is_ok(status) && started < thread_count; ++started) {
    char name[32];
    snprintf(name, sizeof(name), "%s-%u", prefix, started);
    weft_thread_params_t params = {.name = name, .cpu = -1};
    status = weft_thread_create(weft_proactor_threads_main, proactor, &params,
                                allocator, &proactor->threads[started]);
    if (!weft_status_is_ok(status)) {
      status = weft_status_annotate(status, "starting proactor thread %u of %u",
                                    started, thread_count);
      break;
    }
  }
  if (weft_status_is_ok(status)) {
    *out_proactor = &proactor->base;
  } else if (proactor) {
    weft_proactor_threads_stop(proactor, started);
    weft_notification_deinitialize(&proactor->notification);
    weft_slim_mutex_deinitialize(&proactor->mutex);
    weft_allocator_free(allocator, proactor);
  }
  return status;
}
