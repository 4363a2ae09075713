// weft: the one atomics header. C11 <stdatomic.h> with short names.
// Every non-relaxed order at a call site carries a one-line reason.
#ifndef WEFT_BASE_ATOMICS_H_
#define WEFT_BASE_ATOMICS_H_

#include <stdatomic.h>
#include <stdint.h>

typedef _Atomic(int32_t) weft_atomic_int32_t;
typedef _Atomic(uint32_t) weft_atomic_uint32_t;
typedef _Atomic(int64_t) weft_atomic_int64_t;
typedef _Atomic(uint64_t) weft_atomic_uint64_t;
typedef _Atomic(intptr_t) weft_atomic_intptr_t;

#define weft_atomic_load(p, order) atomic_load_explicit((p), (order))
#define weft_atomic_store(p, v, order) atomic_store_explicit((p), (v), (order))
#define weft_atomic_fetch_add(p, v, order) \
  atomic_fetch_add_explicit((p), (v), (order))
#define weft_atomic_fetch_sub(p, v, order) \
  atomic_fetch_sub_explicit((p), (v), (order))
#define weft_atomic_fetch_or(p, v, order) \
  atomic_fetch_or_explicit((p), (v), (order))
#define weft_atomic_fetch_and(p, v, order) \
  atomic_fetch_and_explicit((p), (v), (order))
#define weft_atomic_exchange(p, v, order) \
  atomic_exchange_explicit((p), (v), (order))
#define weft_atomic_compare_exchange_weak(p, expected, desired, succ, fail) \
  atomic_compare_exchange_weak_explicit((p), (expected), (desired), (succ), \
                                        (fail))
#define weft_atomic_compare_exchange_strong(p, expected, desired, succ, fail) \
  atomic_compare_exchange_strong_explicit((p), (expected), (desired), (succ), \
                                          (fail))
#if defined(__SANITIZE_THREAD__)
// ThreadSanitizer does not model fences, and GCC rejects some of them
// under -Werror=tsan: a read-modify-write of the same order on a word of
// its own stands in (a full barrier on x86-64 and arm64, where TSan runs).
static inline void weft_atomic_thread_fence_tsan(memory_order order) {
  static weft_atomic_uint32_t word;
  (void)atomic_fetch_add_explicit(&word, 0, order);
}
#define weft_atomic_thread_fence(order) weft_atomic_thread_fence_tsan(order)
#else
#define weft_atomic_thread_fence(order) atomic_thread_fence(order)
#endif

// A spin-loop hint to the CPU.
static inline void weft_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

// Reference counting: increments are relaxed (the caller already holds a
// reference); the decrement that may free is acq_rel so every write made
// under any reference happens-before the destroy.
typedef weft_atomic_int32_t weft_ref_count_t;
static inline void weft_ref_count_init(weft_ref_count_t* rc) {
  atomic_init(rc, 1);
}
static inline void weft_ref_count_inc(weft_ref_count_t* rc) {
  weft_atomic_fetch_add(rc, 1, memory_order_relaxed);
}
// Returns 1 when the count reached zero and the object must be destroyed.
static inline int weft_ref_count_dec(weft_ref_count_t* rc) {
  return weft_atomic_fetch_sub(rc, 1, memory_order_acq_rel) == 1;
}

#endif  // WEFT_BASE_ATOMICS_H_
