// CTS: a queue's memory holds steady under bursts. Four rounds of 10,000
// ops in flight on one queue (a chain parked behind a gate), then one host
// wait: memory after the fourth round is no higher than after the second
// (within what a pool's high-water mark may still rise, see below). Op
// records are pooled (hal/queue_scheduler.h): a burst leaves the pools at
// their high-water mark and the next one of the same size reuses them.
//
// Two figures after each round: the heap in use (glibc's mallinfo2, every
// arena: what weft and the driver hold) and resident memory
// (/proc/self/statm: that plus what the allocator keeps). Under a sanitizer
// the allocator is the sanitizer's (ASan keeps freed memory in
// quarantine), so the rounds still run and are checked, but the figures
// are only printed there.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <malloc.h>

#include "cts.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define WEFT_CTS_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define WEFT_CTS_SANITIZED 1
#endif
#endif
#ifndef WEFT_CTS_SANITIZED
#define WEFT_CTS_SANITIZED 0
#endif

#define ANY WEFT_QUEUE_AFFINITY_ANY

enum { kRoundOps = 10000, kRounds = 4, kWords = 256 };

// How far the fourth round may be above the second (see the checks).
#define kHeapSlack ((uint64_t)256 * 1024)
#define kResidentSlack ((uint64_t)1024 * 1024)

// Bytes the heap has handed out and not had back (every arena), or 0 where
// the C library does not say (not glibc).
static uint64_t heap_in_use_bytes(void) {
#if defined(__GLIBC__)
  const struct mallinfo2 info = mallinfo2();
  return (uint64_t)info.uordblks + (uint64_t)info.hblkhd;
#else
  return 0;
#endif
}

// Resident bytes of this process, or 0 when /proc is not there.
static uint64_t resident_bytes(void) {
  FILE* file = fopen("/proc/self/statm", "r");
  if (!file) return 0;
  unsigned long long size = 0, resident = 0;
  const int read = fscanf(file, "%llu %llu", &size, &resident);
  fclose(file);
  return read == 2 ? resident * (uint64_t)sysconf(_SC_PAGESIZE) : 0;
}

// One round: |kRoundOps| ops chained on |step| behind |gate| (fills and
// updates alternating over |kWords| words), released by one signal, then
// one wait. Checks the last words written.
static void run_round(weft_cts_t* cts, uint32_t round, weft_buffer_t* words,
                      uint64_t* values) {
  weft_semaphore_t* step = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* gate = weft_cts_create_semaphore(cts, 0);
  static const uint64_t kOne = 1;
  for (uint32_t i = 1; i <= kRoundOps; ++i) {
    weft_semaphore_t* waits[2] = {step, gate};
    const uint64_t wait_values[2] = {values[i - 1], kOne};
    const weft_semaphore_list_t wait_list =
        weft_cts_list(i == 1 ? 2 : 1, waits, wait_values);
    const weft_semaphore_list_t signal_list =
        weft_cts_list1(&step, &values[i]);
    const uint32_t word = round * kRoundOps + i;
    const weft_device_size_t offset = (i % kWords) * sizeof(uint32_t);
    if (i % 2) {
      WEFT_ASSERT_OK(weft_device_queue_fill(cts->device, ANY, wait_list,
                                            signal_list, words, offset,
                                            sizeof(word), &word, sizeof(word)));
    } else {
      WEFT_ASSERT_OK(weft_device_queue_update(cts->device, ANY, wait_list,
                                              signal_list, &word, words,
                                              offset, sizeof(word)));
    }
  }
  weft_cts_assert_not_reached(step, 1);
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  WEFT_ASSERT_OK(weft_cts_wait(step, kRoundOps));
  uint32_t written[kWords];
  weft_cts_read_buffer(cts, words, 0, written, sizeof(written));
  for (uint32_t i = kRoundOps - kWords + 1; i <= kRoundOps; ++i) {
    assert_int_equal(written[i % kWords], round * kRoundOps + i);
  }
  weft_semaphore_release(step);
  weft_semaphore_release(gate);
}

static void bursts_hold_memory_steady(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* words =
      weft_cts_allocate_buffer(cts, kWords * sizeof(uint32_t));
  uint64_t* values = malloc((kRoundOps + 1) * sizeof(uint64_t));
  assert_non_null(values);
  for (uint32_t i = 0; i <= kRoundOps; ++i) values[i] = i;
  uint64_t resident[kRounds];
  uint64_t in_use[kRounds];
  for (uint32_t round = 0; round < kRounds; ++round) {
    run_round(cts, round, words, values);
    resident[round] = resident_bytes();
    in_use[round] = heap_in_use_bytes();
  }
  fprintf(stderr,
          "cts.%s.queue_memory: after each round of %d ops: resident "
          "%.2f, %.2f, %.2f, %.2f MB; heap in use %.3f, %.3f, %.3f, %.3f "
          "MB%s\n",
          weft_cts_device_string(), kRoundOps, resident[0] / 1e6,
          resident[1] / 1e6, resident[2] / 1e6, resident[3] / 1e6,
          in_use[0] / 1e6, in_use[1] / 1e6, in_use[2] / 1e6, in_use[3] / 1e6,
          WEFT_CTS_SANITIZED ? " (sanitizer: not checked)" : "");
  if (!WEFT_CTS_SANITIZED && in_use[1] != 0) {
    // What weft holds: its pools keep their high-water mark. Anything kept
    // per op (26 bytes or more) would add more than the slack in a round
    // (a record per op: about 10 MB); a pool that follows what is in
    // flight may still rise when a later round has more in flight than
    // the first two (cuda: at most 1024 ops, so its events, about 150 KB
    // at most; a few KiB seen). vulkan's command buffers are bounded the
    // same way: one that outgrew the bound failed here (+1 to +5 MB).
    assert_true(in_use[3] <= in_use[1] + kHeapSlack);
  }
  if (!WEFT_CTS_SANITIZED && resident[1] != 0) {
    // What the process holds: the heap above plus the allocator's own
    // arenas, which may keep a little more for threads that free what
    // others allocated.
    assert_true(resident[3] <= resident[1] + kResidentSlack);
  }
  free(values);
  weft_buffer_release(words);
}

int main(int argc, char** argv) {
#if defined(__GLIBC__)
  // One malloc arena for every thread, so the resident figure follows the
  // heap rather than which thread's arena (the driver's, Mesa's, the
  // validation layer's) an allocation landed in: with one per thread, a
  // vulkan run on a loaded machine kept up to 1.4 MB more in round four
  // than in round two with the heap in use flat.
  mallopt(M_ARENA_MAX, 1);
#endif
  const struct CMUnitTest tests[] = {
      WEFT_CTS_CASE(bursts_hold_memory_steady),
  };
  return weft_cts_run("queue_memory", tests,
                      sizeof(tests) / sizeof(tests[0]), argc, argv);
}
