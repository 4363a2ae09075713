// weft: affinity sets (see src/task/affinity_set.h).

#include "task/affinity_set.h"

#include <stdio.h>
#include <string.h>

#define WEFT_AFFINITY_WORD_BITS 64u

static uint32_t weft_affinity_word_count_for(uint32_t bit_capacity) {
  return (uint32_t)(((uint64_t)bit_capacity + WEFT_AFFINITY_WORD_BITS - 1) /
                    WEFT_AFFINITY_WORD_BITS);
}

void weft_affinity_set_initialize(weft_allocator_t allocator,
                                  weft_affinity_set_t* out_set) {
  out_set->allocator = allocator;
  out_set->words = NULL;
  out_set->word_count = 0;
}

void weft_affinity_set_deinitialize(weft_affinity_set_t* set) {
  weft_allocator_free(set->allocator, set->words);
  set->words = NULL;
  set->word_count = 0;
}

weft_status_t weft_affinity_set_reserve(weft_affinity_set_t* set,
                                        uint32_t bit_capacity) {
  weft_status_t status = WEFT_OK;
  uint32_t word_count = weft_affinity_word_count_for(bit_capacity);
  if (bit_capacity > WEFT_AFFINITY_SET_MAX_INDEX + 1u) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "affinity_set_reserve: %u bits is more than the "
                         "limit of %u",
                         (unsigned)bit_capacity,
                         (unsigned)WEFT_AFFINITY_SET_MAX_INDEX + 1u);
  } else if (word_count > set->word_count) {
    // Grow geometrically so that setting ascending bits stays linear.
    uint32_t new_count = set->word_count * 2;
    if (new_count < word_count) new_count = word_count;
    uint32_t max_words =
        weft_affinity_word_count_for(WEFT_AFFINITY_SET_MAX_INDEX + 1u);
    if (new_count > max_words) new_count = max_words;
    void* words = set->words;
    status = weft_allocator_realloc(
        set->allocator, (size_t)new_count * sizeof(uint64_t), &words);
    if (weft_status_is_ok(status)) {
      set->words = (uint64_t*)words;
      memset(set->words + set->word_count, 0,
             (size_t)(new_count - set->word_count) * sizeof(uint64_t));
      set->word_count = new_count;
    } else {
      status = weft_status_annotate(status,
                                    "while growing an affinity set to %u bits",
                                    (unsigned)bit_capacity);
    }
  }
  return status;
}

void weft_affinity_set_clear_all(weft_affinity_set_t* set) {
  if (set->word_count) {
    memset(set->words, 0, (size_t)set->word_count * sizeof(uint64_t));
  }
}

weft_status_t weft_affinity_set_set(weft_affinity_set_t* set, uint32_t index) {
  return weft_affinity_set_set_range(set, index, index);
}

weft_status_t weft_affinity_set_set_range(weft_affinity_set_t* set,
                                          uint32_t first, uint32_t last) {
  weft_status_t status = WEFT_OK;
  if (first > last) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "affinity_set_set_range: range %u-%u ends before it "
                         "starts",
                         (unsigned)first, (unsigned)last);
  } else if (last > WEFT_AFFINITY_SET_MAX_INDEX) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "affinity_set_set: bit %u is above the limit %u",
                         (unsigned)last, (unsigned)WEFT_AFFINITY_SET_MAX_INDEX);
  } else {
    status = weft_affinity_set_reserve(set, last + 1);
  }
  if (weft_status_is_ok(status)) {
    uint32_t index = first;
    // Whole words at once where the range covers them.
    while (index <= last) {
      uint32_t word = index / WEFT_AFFINITY_WORD_BITS;
      uint32_t bit = index % WEFT_AFFINITY_WORD_BITS;
      uint32_t span = WEFT_AFFINITY_WORD_BITS - bit;
      if ((uint64_t)last - index + 1 < span) span = last - index + 1;
      uint64_t mask = span == WEFT_AFFINITY_WORD_BITS
                          ? ~UINT64_C(0)
                          : ((UINT64_C(1) << span) - 1) << bit;
      set->words[word] |= mask;
      if ((uint64_t)index + span > last) break;
      index += span;
    }
  }
  return status;
}

void weft_affinity_set_clear(weft_affinity_set_t* set, uint32_t index) {
  uint32_t word = index / WEFT_AFFINITY_WORD_BITS;
  if (word < set->word_count) {
    set->words[word] &= ~(UINT64_C(1) << (index % WEFT_AFFINITY_WORD_BITS));
  }
}

bool weft_affinity_set_test(const weft_affinity_set_t* set, uint32_t index) {
  uint32_t word = index / WEFT_AFFINITY_WORD_BITS;
  return word < set->word_count &&
         ((set->words[word] >> (index % WEFT_AFFINITY_WORD_BITS)) & 1u);
}

uint32_t weft_affinity_set_count(const weft_affinity_set_t* set) {
  uint32_t count = 0;
  for (uint32_t i = 0; i < set->word_count; ++i) {
    count += (uint32_t)__builtin_popcountll(set->words[i]);
  }
  return count;
}

bool weft_affinity_set_is_empty(const weft_affinity_set_t* set) {
  return weft_affinity_set_first(set) == WEFT_AFFINITY_SET_NONE;
}

// Returns the lowest set bit at or above |index|.
static uint32_t weft_affinity_set_find_from(const weft_affinity_set_t* set,
                                            uint64_t index) {
  uint32_t result = WEFT_AFFINITY_SET_NONE;
  uint64_t word = index / WEFT_AFFINITY_WORD_BITS;
  if (word < set->word_count) {
    uint64_t bits =
        set->words[word] & (~UINT64_C(0) << (index % WEFT_AFFINITY_WORD_BITS));
    while (bits == 0 && ++word < set->word_count) bits = set->words[word];
    if (bits != 0) {
      result = (uint32_t)(word * WEFT_AFFINITY_WORD_BITS +
                          (uint64_t)__builtin_ctzll(bits));
    }
  }
  return result;
}

uint32_t weft_affinity_set_first(const weft_affinity_set_t* set) {
  return weft_affinity_set_find_from(set, 0);
}

uint32_t weft_affinity_set_next(const weft_affinity_set_t* set,
                                uint32_t index) {
  return weft_affinity_set_find_from(set, (uint64_t)index + 1);
}

uint32_t weft_affinity_set_last(const weft_affinity_set_t* set) {
  uint32_t result = WEFT_AFFINITY_SET_NONE;
  for (uint32_t word = set->word_count; word > 0; --word) {
    uint64_t bits = set->words[word - 1];
    if (bits != 0) {
      result = (word - 1) * WEFT_AFFINITY_WORD_BITS + 63u -
               (uint32_t)__builtin_clzll(bits);
      break;
    }
  }
  return result;
}

uint32_t weft_affinity_set_nth(const weft_affinity_set_t* set, uint32_t n) {
  uint32_t result = WEFT_AFFINITY_SET_NONE;
  uint32_t remaining = n;
  for (uint32_t word = 0; word < set->word_count; ++word) {
    uint64_t bits = set->words[word];
    uint32_t count = (uint32_t)__builtin_popcountll(bits);
    if (remaining < count) {
      // Drop the lowest |remaining| bits; the answer is the next one.
      for (uint32_t i = 0; i < remaining; ++i) bits &= bits - 1;
      result = word * WEFT_AFFINITY_WORD_BITS + (uint32_t)__builtin_ctzll(bits);
      break;
    }
    remaining -= count;
  }
  return result;
}

weft_status_t weft_affinity_set_copy(weft_affinity_set_t* target,
                                     const weft_affinity_set_t* source) {
  weft_status_t status = WEFT_OK;
  if (target != source) {
    uint32_t last = weft_affinity_set_last(source);
    if (last != WEFT_AFFINITY_SET_NONE) {
      status = weft_affinity_set_reserve(target, last + 1);
    }
    if (weft_status_is_ok(status)) {
      weft_affinity_set_clear_all(target);
      uint32_t words = target->word_count < source->word_count
                           ? target->word_count
                           : source->word_count;
      if (words) {
        memcpy(target->words, source->words, (size_t)words * sizeof(uint64_t));
      }
    }
  }
  return status;
}

void weft_affinity_set_and(weft_affinity_set_t* target,
                           const weft_affinity_set_t* other) {
  for (uint32_t i = 0; i < target->word_count; ++i) {
    target->words[i] &= i < other->word_count ? other->words[i] : 0;
  }
}

void weft_affinity_set_and_not(weft_affinity_set_t* target,
                               const weft_affinity_set_t* other) {
  uint32_t words = target->word_count < other->word_count ? target->word_count
                                                          : other->word_count;
  for (uint32_t i = 0; i < words; ++i) target->words[i] &= ~other->words[i];
}

weft_status_t weft_affinity_set_or(weft_affinity_set_t* target,
                                   const weft_affinity_set_t* other) {
  weft_status_t status = WEFT_OK;
  uint32_t last = weft_affinity_set_last(other);
  if (last != WEFT_AFFINITY_SET_NONE) {
    status = weft_affinity_set_reserve(target, last + 1);
  }
  if (weft_status_is_ok(status) && last != WEFT_AFFINITY_SET_NONE) {
    for (uint32_t i = 0; i <= last / WEFT_AFFINITY_WORD_BITS; ++i) {
      target->words[i] |= other->words[i];
    }
  }
  return status;
}

bool weft_affinity_set_equal(const weft_affinity_set_t* a,
                             const weft_affinity_set_t* b) {
  uint32_t words =
      a->word_count > b->word_count ? a->word_count : b->word_count;
  bool equal = true;
  for (uint32_t i = 0; equal && i < words; ++i) {
    uint64_t wa = i < a->word_count ? a->words[i] : 0;
    uint64_t wb = i < b->word_count ? b->words[i] : 0;
    equal = wa == wb;
  }
  return equal;
}

bool weft_affinity_set_intersects(const weft_affinity_set_t* a,
                                  const weft_affinity_set_t* b) {
  uint32_t words =
      a->word_count < b->word_count ? a->word_count : b->word_count;
  bool intersects = false;
  for (uint32_t i = 0; !intersects && i < words; ++i) {
    intersects = (a->words[i] & b->words[i]) != 0;
  }
  return intersects;
}

bool weft_affinity_set_is_subset(const weft_affinity_set_t* subset,
                                 const weft_affinity_set_t* set) {
  bool is_subset = true;
  for (uint32_t i = 0; is_subset && i < subset->word_count; ++i) {
    uint64_t outer = i < set->word_count ? set->words[i] : 0;
    is_subset = (subset->words[i] & ~outer) == 0;
  }
  return is_subset;
}

static bool weft_affinity_is_digit(char c) { return c >= '0' && c <= '9'; }

static const char* weft_affinity_skip_spaces(const char* p) {
  while (*p == ' ' || *p == '\t') ++p;
  return p;
}

// Parses a decimal CPU number at |*inout_p|, advancing past it.
static weft_status_t weft_affinity_parse_number(const char* text,
                                                const char** inout_p,
                                                uint32_t* out_value) {
  weft_status_t status = WEFT_OK;
  const char* p = *inout_p;
  uint64_t value = 0;
  if (!weft_affinity_is_digit(*p)) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "cpu list '%s': expected a CPU number at position %zu",
                         text, (size_t)(p - text));
  }
  while (weft_status_is_ok(status) && weft_affinity_is_digit(*p)) {
    value = value * 10 + (uint64_t)(*p - '0');
    if (value > WEFT_AFFINITY_SET_MAX_INDEX) {
      status = WEFT_STATUS(INVALID_ARGUMENT,
                           "cpu list '%s': the CPU number at position %zu is "
                           "above the limit %u",
                           text, (size_t)(*inout_p - text),
                           (unsigned)WEFT_AFFINITY_SET_MAX_INDEX);
    }
    ++p;
  }
  if (weft_status_is_ok(status)) {
    *out_value = (uint32_t)value;
    *inout_p = p;
  }
  return status;
}

weft_status_t weft_affinity_set_parse(const char* text,
                                      weft_affinity_set_t* set) {
  weft_affinity_set_clear_all(set);
  weft_status_t status = WEFT_OK;
  const char* p = weft_affinity_skip_spaces(text);
  bool done = *p == '\0' || (*p == '\n' && p[1] == '\0');
  while (weft_status_is_ok(status) && !done) {
    const char* item = weft_affinity_skip_spaces(p);
    p = item;
    uint32_t first = 0;
    uint32_t last = 0;
    status = weft_affinity_parse_number(text, &p, &first);
    last = first;
    if (weft_status_is_ok(status)) {
      p = weft_affinity_skip_spaces(p);
      if (*p == '-') {
        p = weft_affinity_skip_spaces(p + 1);
        status = weft_affinity_parse_number(text, &p, &last);
        if (weft_status_is_ok(status) && last < first) {
          status = WEFT_STATUS(INVALID_ARGUMENT,
                               "cpu list '%s': range %u-%u at position %zu "
                               "ends before it starts",
                               text, (unsigned)first, (unsigned)last,
                               (size_t)(item - text));
        }
        p = weft_affinity_skip_spaces(p);
      }
    }
    if (weft_status_is_ok(status)) {
      status = weft_affinity_set_set_range(set, first, last);
    }
    if (weft_status_is_ok(status)) {
      if (*p == ',') {
        ++p;
      } else if (*p == '\0' || (*p == '\n' && p[1] == '\0')) {
        done = true;
      } else {
        status = WEFT_STATUS(INVALID_ARGUMENT,
                             "cpu list '%s': unexpected '%c' at position %zu "
                             "(expected ',', '-' or the end)",
                             text, *p, (size_t)(p - text));
      }
    }
  }
  if (!weft_status_is_ok(status)) weft_affinity_set_clear_all(set);
  return status;
}

size_t weft_affinity_set_format(const weft_affinity_set_t* set, char* buffer,
                                size_t buffer_capacity) {
  size_t length = 0;
  if (buffer_capacity > 0) buffer[0] = '\0';
  uint32_t first = weft_affinity_set_first(set);
  while (first != WEFT_AFFINITY_SET_NONE) {
    // Extend the run [first, last] while the next bit follows directly.
    uint32_t last = first;
    uint32_t next = weft_affinity_set_next(set, last);
    while (next != WEFT_AFFINITY_SET_NONE && next == last + 1) {
      last = next;
      next = weft_affinity_set_next(set, last);
    }
    char item[32];
    int item_length =
        last == first
            ? snprintf(item, sizeof(item), "%s%u", length ? "," : "",
                       (unsigned)first)
            : snprintf(item, sizeof(item), "%s%u-%u", length ? "," : "",
                       (unsigned)first, (unsigned)last);
    if (item_length > 0) {
      if (length + (size_t)item_length < buffer_capacity) {
        memcpy(buffer + length, item, (size_t)item_length + 1);
      } else if (length < buffer_capacity) {
        // Truncate, keeping the terminator.
        size_t room = buffer_capacity - length - 1;
        memcpy(buffer + length, item, room);
        buffer[length + room] = '\0';
      }
      length += (size_t)item_length;
    }
    first = next;
  }
  return length;
}
