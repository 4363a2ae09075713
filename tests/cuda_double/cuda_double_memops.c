// weft's CUDA test double: stream memory operations (cuStreamWaitValue64,
// cuStreamWriteValue64). A TEST DOUBLE, never shipped or installed (see
// cuda_double.h).
//
// A wait is a stream task that returns once its condition holds on the
// 64-bit word; everything queued behind it on the stream waits with it. The
// word may change without the double being told (a host thread's plain
// atomic store into mapped memory), so a waiting worker polls it: a short
// spin, then sleeps doubling from 1 us to 100 us. A write task of any
// stream also broadcasts, so waiters on words other streams write re-check
// at once rather than at their next poll.
#include <stdlib.h>
#include <time.h>

#include "cuda_double_impl.h"

// Polls of an unmet word before the first sleep.
#define WEFT_CUDA_DOUBLE_WAIT_SPIN_COUNT 64
// The sleeps between polls double from the first to the last.
#define WEFT_CUDA_DOUBLE_WAIT_FIRST_SLEEP_NS 1000ull
#define WEFT_CUDA_DOUBLE_WAIT_LAST_SLEEP_NS 100000ull
// How long a wait still unmet while its stream is being destroyed keeps
// waiting before it is abandoned: room for a write already queued on
// another stream to land (see cuda_double.h).
#define WEFT_CUDA_DOUBLE_WAIT_ABANDON_NS 1000000000ull

// The flags a wait may carry: a condition in the low bits, FLUSH above.
#define WEFT_CUDA_DOUBLE_WAIT_CONDITION_MASK 0x3u

typedef struct weft_cuda_double_value_wait_task_t {
  weft_cuda_double_task_t base;
  CUstream stream;
  const uint64_t* word;
  uint64_t value;
  // One of CU_STREAM_WAIT_VALUE_GEQ, _EQ, _AND or _NOR.
  unsigned int condition;
} weft_cuda_double_value_wait_task_t;

typedef struct weft_cuda_double_value_write_task_t {
  weft_cuda_double_task_t base;
  uint64_t* word;
  uint64_t value;
  bool barrier;
} weft_cuda_double_value_write_task_t;

// What write tasks broadcast on. The condition uses CLOCK_MONOTONIC, so
// the sleeps between polls do not stretch when the wall clock moves.
static struct {
  pthread_once_t once;
  pthread_mutex_t mutex;
  pthread_cond_t written;
} weft_cuda_double_memops = {.once = PTHREAD_ONCE_INIT,
                             .mutex = PTHREAD_MUTEX_INITIALIZER};

static void weft_cuda_double_memops_initialize(void) {
  pthread_condattr_t attributes;
  pthread_condattr_init(&attributes);
  pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
  pthread_cond_init(&weft_cuda_double_memops.written, &attributes);
  pthread_condattr_destroy(&attributes);
}

// The documented conditions; GEQ is cyclic, as on the device: a word more
// than 2^63 past |value| reads as behind it.
static bool weft_cuda_double_wait_is_met(
    const weft_cuda_double_value_wait_task_t* task) {
  uint64_t word = __atomic_load_n(task->word, __ATOMIC_ACQUIRE);
  switch (task->condition) {
    case CU_STREAM_WAIT_VALUE_EQ:
      return word == task->value;
    case CU_STREAM_WAIT_VALUE_AND:
      return (word & task->value) != 0;
    case CU_STREAM_WAIT_VALUE_NOR:
      return ~(word | task->value) != 0;
    default:  // CU_STREAM_WAIT_VALUE_GEQ
      return (int64_t)(word - task->value) >= 0;
  }
}

static void weft_cuda_double_value_wait_task_run(
    weft_cuda_double_task_t* base) {
  weft_cuda_double_value_wait_task_t* task =
      (weft_cuda_double_value_wait_task_t*)base;
  for (int i = 0; i < WEFT_CUDA_DOUBLE_WAIT_SPIN_COUNT; ++i) {
    if (weft_cuda_double_wait_is_met(task)) return;
  }
  pthread_once(&weft_cuda_double_memops.once,
               weft_cuda_double_memops_initialize);
  uint64_t sleep_ns = WEFT_CUDA_DOUBLE_WAIT_FIRST_SLEEP_NS;
  uint64_t abandon_at_ns = 0;
  for (;;) {
    // Checked under the mutex a write broadcasts under, so a write lands
    // either before the check or during the sleep, never unseen between.
    pthread_mutex_lock(&weft_cuda_double_memops.mutex);
    bool met = weft_cuda_double_wait_is_met(task);
    if (!met) {
      uint64_t deadline_ns = weft_cuda_double__now_ns() + sleep_ns;
      struct timespec deadline = {(time_t)(deadline_ns / 1000000000ull),
                                  (long)(deadline_ns % 1000000000ull)};
      pthread_cond_timedwait(&weft_cuda_double_memops.written,
                             &weft_cuda_double_memops.mutex, &deadline);
    }
    pthread_mutex_unlock(&weft_cuda_double_memops.mutex);
    if (met) return;
    if (sleep_ns < WEFT_CUDA_DOUBLE_WAIT_LAST_SLEEP_NS) {
      sleep_ns *= 2;
      if (sleep_ns > WEFT_CUDA_DOUBLE_WAIT_LAST_SLEEP_NS) {
        sleep_ns = WEFT_CUDA_DOUBLE_WAIT_LAST_SLEEP_NS;
      }
    }
    // Outside the memops mutex: no path holds two of the double's locks.
    if (weft_cuda_double__stream_is_shutting_down(task->stream)) {
      uint64_t now_ns = weft_cuda_double__now_ns();
      if (abandon_at_ns == 0) {
        abandon_at_ns = now_ns + WEFT_CUDA_DOUBLE_WAIT_ABANDON_NS;
      } else if (now_ns >= abandon_at_ns &&
                 !weft_cuda_double_wait_is_met(task)) {
        weft_cuda_double__stream_note_abandoned_wait(task->stream);
        return;
      }
    }
  }
}

// Every earlier task of the stream has finished when this runs, so the
// barrier is a release store; without it the store is relaxed, and a
// reader that relied on the barrier has no ordering to stand on.
static void weft_cuda_double_value_write_task_run(
    weft_cuda_double_task_t* base) {
  weft_cuda_double_value_write_task_t* task =
      (weft_cuda_double_value_write_task_t*)base;
  __atomic_store_n(task->word, task->value,
                   task->barrier ? __ATOMIC_RELEASE : __ATOMIC_RELAXED);
  pthread_once(&weft_cuda_double_memops.once,
               weft_cuda_double_memops_initialize);
  pthread_mutex_lock(&weft_cuda_double_memops.mutex);
  pthread_cond_broadcast(&weft_cuda_double_memops.written);
  pthread_mutex_unlock(&weft_cuda_double_memops.mutex);
}

// The checks both calls make after the stream's: NOT_SUPPORTED while the
// device reports no 64-bit stream memory operations, then an 8-byte
// aligned word inside a live device, pool or mapped host allocation
// (INVALID_VALUE otherwise, where the GPU would fault later).
static CUresult weft_cuda_double_check_word(CUdeviceptr address) {
  if (!weft_cuda_double__stream_mem_ops_supported()) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  if (address % sizeof(uint64_t) != 0) return CUDA_ERROR_INVALID_VALUE;
  return weft_cuda_double__check_device_range(address, sizeof(uint64_t));
}

WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuStreamWaitValue64(
    CUstream stream, CUdeviceptr addr, cuuint64_t value, unsigned int flags) {
  CUcontext context = NULL;
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuStreamWaitValue64, &context);
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double__check_stream(stream, context);
  }
  if (result == CUDA_SUCCESS) result = weft_cuda_double_check_word(addr);
  unsigned int condition = flags & WEFT_CUDA_DOUBLE_WAIT_CONDITION_MASK;
  if (result == CUDA_SUCCESS &&
      (flags & ~(WEFT_CUDA_DOUBLE_WAIT_CONDITION_MASK |
                 (unsigned int)CU_STREAM_WAIT_VALUE_FLUSH))) {
    result = CUDA_ERROR_INVALID_VALUE;
  }
  // The device reports CAN_FLUSH_REMOTE_WRITES 0: it has no remote writes
  // to flush.
  if (result == CUDA_SUCCESS && (flags & CU_STREAM_WAIT_VALUE_FLUSH)) {
    result = CUDA_ERROR_NOT_SUPPORTED;
  }
  weft_cuda_double_value_wait_task_t* task = NULL;
  if (result == CUDA_SUCCESS) {
    task = (weft_cuda_double_value_wait_task_t*)weft_cuda_double__task_allocate(
        sizeof(*task), weft_cuda_double_value_wait_task_run);
    if (!task) result = CUDA_ERROR_OUT_OF_MEMORY;
  }
  if (result == CUDA_SUCCESS) {
    task->stream = stream;
    task->word = (const uint64_t*)(uintptr_t)addr;
    task->value = value;
    task->condition = condition;
    weft_cuda_double__stream_enqueue(stream, &task->base);
  }
  return result;
}

WEFT_CUDA_DOUBLE_EXPORT CUresult CUDAAPI cuStreamWriteValue64(
    CUstream stream, CUdeviceptr addr, cuuint64_t value, unsigned int flags) {
  CUcontext context = NULL;
  CUresult result = WEFT_CUDA_DOUBLE_ENTER(cuStreamWriteValue64, &context);
  if (result == CUDA_SUCCESS) {
    result = weft_cuda_double__check_stream(stream, context);
  }
  if (result == CUDA_SUCCESS) result = weft_cuda_double_check_word(addr);
  if (result == CUDA_SUCCESS &&
      (flags & ~(unsigned int)CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER)) {
    result = CUDA_ERROR_INVALID_VALUE;
  }
  weft_cuda_double_value_write_task_t* task = NULL;
  if (result == CUDA_SUCCESS) {
    task =
        (weft_cuda_double_value_write_task_t*)weft_cuda_double__task_allocate(
            sizeof(*task), weft_cuda_double_value_write_task_run);
    if (!task) result = CUDA_ERROR_OUT_OF_MEMORY;
  }
  if (result == CUDA_SUCCESS) {
    task->word = (uint64_t*)(uintptr_t)addr;
    task->value = value;
    task->barrier = !(flags & CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER);
    weft_cuda_double__stream_enqueue(stream, &task->base);
  }
  return result;
}
