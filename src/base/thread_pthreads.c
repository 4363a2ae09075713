// weft: threads on pthreads (see src/base/thread.h).

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/thread.h"
#include "base/trace.h"
#include "base/wait_assist.h"

// Linux limits thread names to 15 characters plus the terminator.
#define WEFT_THREAD_NAME_CAPACITY 16

struct weft_thread_t {
  weft_allocator_t allocator;
  pthread_t handle;
  weft_thread_entry_fn_t entry;
  void* user_data;
  char name[WEFT_THREAD_NAME_CAPACITY];
};

static void* weft_thread_start(void* arg) {
  weft_thread_t* thread = (weft_thread_t*)arg;
  // weft's own threads never run another's work while they wait.
  weft_wait_assist_exclude_thread();
  if (thread->name[0]) {
    pthread_setname_np(pthread_self(), thread->name);
    // The thread's track in a trace carries the same name.
    weft_trace_set_thread_name(thread->name);
  }
  thread->entry(thread->user_data);
  return NULL;
}

static weft_status_code_t weft_thread_code_from_errno(int error) {
  weft_status_code_t code = WEFT_STATUS_INTERNAL;
  switch (error) {
    case EAGAIN:
      code = WEFT_STATUS_RESOURCE_EXHAUSTED;
      break;
    case EINVAL:
      code = WEFT_STATUS_INVALID_ARGUMENT;
      break;
    case EPERM:
      code = WEFT_STATUS_PERMISSION_DENIED;
      break;
    default:
      break;
  }
  return code;
}

// Builds the CPU set |params| asks for into |*out_cpu_set| (NULL when the
// thread is not pinned) and a short description of it for messages.
static weft_status_t weft_thread_make_cpu_set(
    const char* name, const weft_thread_params_t* params,
    cpu_set_t** out_cpu_set, size_t* out_set_size, char* description,
    size_t description_capacity) {
  weft_status_t status = WEFT_OK;
  *out_cpu_set = NULL;
  *out_set_size = 0;
  snprintf(description, description_capacity, "no affinity");
  // The highest CPU asked for, or -1.
  int64_t highest = -1;
  int64_t lowest = -1;
  uint32_t count = 0;
  if (params && params->affinity_word_count > 0) {
    for (uint32_t word = 0; word < params->affinity_word_count; ++word) {
      uint64_t bits = params->affinity_words[word];
      if (bits == 0) continue;
      if (lowest < 0) lowest = (int64_t)word * 64 + __builtin_ctzll(bits);
      highest = (int64_t)word * 64 + 63 - __builtin_clzll(bits);
      count += (uint32_t)__builtin_popcountll(bits);
    }
    if (highest < 0) {
      status = WEFT_STATUS(INVALID_ARGUMENT,
                           "thread_create: the affinity set of thread '%s' "
                           "(%u words) holds no CPU",
                           name, (unsigned)params->affinity_word_count);
    } else {
      if (count == 1) {
        snprintf(description, description_capacity, "cpu %lld",
                 (long long)lowest);
      } else {
        snprintf(description, description_capacity, "%u CPUs in [%lld, %lld]",
                 (unsigned)count, (long long)lowest, (long long)highest);
      }
    }
  } else if (params && params->cpu >= 0) {
    highest = params->cpu;
    snprintf(description, description_capacity, "cpu %d", (int)params->cpu);
  }
  cpu_set_t* cpu_set = NULL;
  if (weft_status_is_ok(status) && highest >= 0) {
    cpu_set = CPU_ALLOC((size_t)highest + 1);
    if (!cpu_set) {
      status = WEFT_STATUS(RESOURCE_EXHAUSTED,
                           "thread_create: cannot allocate a CPU set for %s "
                           "of thread '%s'",
                           description, name);
    }
  }
  if (cpu_set) {
    size_t set_size = CPU_ALLOC_SIZE((size_t)highest + 1);
    CPU_ZERO_S(set_size, cpu_set);
    if (params->affinity_word_count > 0) {
      for (uint32_t word = 0; word < params->affinity_word_count; ++word) {
        for (uint64_t bits = params->affinity_words[word]; bits != 0;
             bits &= bits - 1) {
          size_t cpu = (size_t)word * 64 + (size_t)__builtin_ctzll(bits);
          CPU_SET_S(cpu, set_size, cpu_set);
        }
      }
    } else {
      CPU_SET_S((size_t)params->cpu, set_size, cpu_set);
    }
    *out_cpu_set = cpu_set;
    *out_set_size = set_size;
  }
  return status;
}

weft_status_t weft_thread_create(weft_thread_entry_fn_t entry, void* user_data,
                                 const weft_thread_params_t* params,
                                 weft_allocator_t allocator,
                                 weft_thread_t** out_thread) {
  *out_thread = NULL;
  const char* name = params && params->name ? params->name : "";
  weft_thread_t* thread = NULL;
  cpu_set_t* cpu_set = NULL;
  size_t set_size = 0;
  char affinity[96];
  pthread_attr_t attr;
  bool attr_initialized = false;
  weft_status_t status = weft_thread_make_cpu_set(
      name, params, &cpu_set, &set_size, affinity, sizeof(affinity));
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc(allocator, sizeof(*thread), (void**)&thread);
  }
  if (weft_status_is_ok(status)) {
    thread->allocator = allocator;
    thread->entry = entry;
    thread->user_data = user_data;
    strncpy(thread->name, name, sizeof(thread->name) - 1);
    thread->name[sizeof(thread->name) - 1] = '\0';
    int error = pthread_attr_init(&attr);
    attr_initialized = error == 0;
    if (error != 0) {
      status = WEFT_STATUS(INTERNAL,
                           "thread_create: pthread_attr_init failed for "
                           "thread '%s': %s",
                           name, strerror(error));
    }
  }
  if (weft_status_is_ok(status) && cpu_set) {
    int error = pthread_attr_setaffinity_np(&attr, set_size, cpu_set);
    if (error != 0) {
      status = WEFT_STATUS(INVALID_ARGUMENT,
                           "thread_create: cannot pin thread '%s' to %s: %s",
                           name, affinity, strerror(error));
    }
  }
  if (weft_status_is_ok(status)) {
    int error =
        pthread_create(&thread->handle, &attr, weft_thread_start, thread);
    if (error != 0) {
      status = weft_status_make_(
          __FILE__, __LINE__, weft_thread_code_from_errno(error),
          "thread_create: pthread_create failed for thread '%s' (%s): %s",
          name, affinity, strerror(error));
    }
  }
  if (cpu_set) CPU_FREE(cpu_set);
  if (attr_initialized) pthread_attr_destroy(&attr);
  if (weft_status_is_ok(status)) {
    *out_thread = thread;
  } else {
    weft_allocator_free(allocator, thread);
  }
  return status;
}

void weft_thread_join(weft_thread_t* thread) {
  if (thread) {
    pthread_join(thread->handle, NULL);
    weft_allocator_free(thread->allocator, thread);
  }
}

uint64_t weft_thread_current_id(void) {
  return (uint64_t)syscall(SYS_gettid);
}

void weft_thread_yield(void) { sched_yield(); }

uint32_t weft_thread_available_cpu_count(void) {
  // The kernel's mask may be wider than glibc's fixed cpu_set_t (1024 CPUs);
  // grow a dynamically sized set until sched_getaffinity accepts it.
  uint32_t count = 0;
  for (size_t cpus = 1024; count == 0 && cpus <= (1u << 20); cpus *= 2) {
    cpu_set_t* set = CPU_ALLOC(cpus);
    if (!set) break;
    size_t set_size = CPU_ALLOC_SIZE(cpus);
    CPU_ZERO_S(set_size, set);
    int result = sched_getaffinity(0, set_size, set);
    if (result == 0) {
      count = (uint32_t)CPU_COUNT_S(set_size, set);
    }
    CPU_FREE(set);
    if (result != 0 && errno != EINVAL) break;
  }
  if (count == 0) {
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    count = online > 0 ? (uint32_t)online : 1;
  }
  return count;
}
