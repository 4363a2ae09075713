// weft: affinity sets, CPU (or worker) bitmaps with no size limit.
//
// A set is an array of 64-bit words allocated from the set's allocator; it
// grows to cover the highest bit set, so a machine with 4096 CPUs (or CPU
// numbers past glibc's fixed 1024-bit cpu_set_t) needs nothing special. The
// words are visible so that callers can hand them to layers that take raw
// words (weft_thread_params_t::affinity_words).
//
// Threading: a set is a plain value; concurrent readers are fine, writers
// need exclusive access.
#ifndef WEFT_TASK_AFFINITY_SET_H_
#define WEFT_TASK_AFFINITY_SET_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/allocator.h"
#include "weft/status.h"

// Returned by first/next/last when there is no such bit.
#define WEFT_AFFINITY_SET_NONE UINT32_MAX

// The highest bit index a set accepts (parsing refuses larger numbers so that
// a typo such as "0-40000000" cannot allocate megabytes).
#define WEFT_AFFINITY_SET_MAX_INDEX ((1u << 22) - 1)

typedef struct weft_affinity_set_t {
  weft_allocator_t allocator;
  // |word_count| words; bit i of the set is bit (i % 64) of words[i / 64].
  // Words past the highest set bit may exist and are zero.
  uint64_t* words;
  uint32_t word_count;
} weft_affinity_set_t;

// Initialises |out_set| to the empty set; allocates nothing.
void weft_affinity_set_initialize(weft_allocator_t allocator,
                                  weft_affinity_set_t* out_set);

// Frees the words of |set| and leaves it empty (usable again).
void weft_affinity_set_deinitialize(weft_affinity_set_t* set);

// Makes room for bits [0, |bit_capacity|) without changing the contents.
// RESOURCE_EXHAUSTED when the words cannot be allocated; INVALID_ARGUMENT
// past WEFT_AFFINITY_SET_MAX_INDEX + 1.
weft_status_t weft_affinity_set_reserve(weft_affinity_set_t* set,
                                        uint32_t bit_capacity);

// Removes every bit (keeps the words allocated).
void weft_affinity_set_clear_all(weft_affinity_set_t* set);

// Adds |index|, growing the set when needed (RESOURCE_EXHAUSTED, or
// INVALID_ARGUMENT past WEFT_AFFINITY_SET_MAX_INDEX).
weft_status_t weft_affinity_set_set(weft_affinity_set_t* set, uint32_t index);

// Adds every index in [|first|, |last|] (inclusive), growing once.
weft_status_t weft_affinity_set_set_range(weft_affinity_set_t* set,
                                          uint32_t first, uint32_t last);

// Removes |index| (no-op when it is not in the set).
void weft_affinity_set_clear(weft_affinity_set_t* set, uint32_t index);

// True when |index| is in the set.
bool weft_affinity_set_test(const weft_affinity_set_t* set, uint32_t index);

// Returns the number of bits set.
uint32_t weft_affinity_set_count(const weft_affinity_set_t* set);

// True when no bit is set.
bool weft_affinity_set_is_empty(const weft_affinity_set_t* set);

// Returns the lowest bit set, or WEFT_AFFINITY_SET_NONE.
uint32_t weft_affinity_set_first(const weft_affinity_set_t* set);

// Returns the lowest bit set that is greater than |index|, or
// WEFT_AFFINITY_SET_NONE. Iterate with
//   for (i = first(s); i != NONE; i = next(s, i)).
uint32_t weft_affinity_set_next(const weft_affinity_set_t* set, uint32_t index);

// Returns the highest bit set, or WEFT_AFFINITY_SET_NONE.
uint32_t weft_affinity_set_last(const weft_affinity_set_t* set);

// Returns the |n|-th (0-based) bit set in ascending order, or
// WEFT_AFFINITY_SET_NONE when the set has fewer than n + 1 bits.
uint32_t weft_affinity_set_nth(const weft_affinity_set_t* set, uint32_t n);

// Makes |target| equal to |source| (target keeps its own allocator).
weft_status_t weft_affinity_set_copy(weft_affinity_set_t* target,
                                     const weft_affinity_set_t* source);

// target = target AND other. Never allocates.
void weft_affinity_set_and(weft_affinity_set_t* target,
                           const weft_affinity_set_t* other);

// target = target AND NOT other. Never allocates.
void weft_affinity_set_and_not(weft_affinity_set_t* target,
                               const weft_affinity_set_t* other);

// target = target OR other; grows |target| when |other| has higher bits.
weft_status_t weft_affinity_set_or(weft_affinity_set_t* target,
                                   const weft_affinity_set_t* other);

// True when both sets hold the same bits (capacities may differ).
bool weft_affinity_set_equal(const weft_affinity_set_t* a,
                             const weft_affinity_set_t* b);

// True when the sets share at least one bit.
bool weft_affinity_set_intersects(const weft_affinity_set_t* a,
                                  const weft_affinity_set_t* b);

// True when every bit of |subset| is in |set|.
bool weft_affinity_set_is_subset(const weft_affinity_set_t* subset,
                                 const weft_affinity_set_t* set);

// Replaces the contents of |set| with the CPU list |text|: comma-separated
// decimal numbers and inclusive ranges, e.g. "0-3,8,10-11" (the format of
// Linux's *_list files and taskset -c). Spaces around items and a trailing
// newline are accepted; "" is the empty set. Malformed input is
// INVALID_ARGUMENT naming the text and the 0-based position of the fault;
// on error |set| is left empty.
weft_status_t weft_affinity_set_parse(const char* text,
                                      weft_affinity_set_t* set);

// Writes |set| as a CPU list ("0-3,8,10-11"; "" when empty) into |buffer|,
// always NUL-terminated when |buffer_capacity| > 0, and returns the full
// length the list needs (excluding the terminator), like snprintf.
size_t weft_affinity_set_format(const weft_affinity_set_t* set, char* buffer,
                                size_t buffer_capacity);

#endif  // WEFT_TASK_AFFINITY_SET_H_
