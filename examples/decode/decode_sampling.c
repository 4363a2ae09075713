// weft decode example: the SAMPLE kernel (decode_sampling.h).
#include "decode_sampling.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

double decode_sampling_uniform(uint64_t seed, uint32_t position) {
  const uint64_t bits = splitmix64(seed ^ splitmix64(position));
  return (double)(bits >> 11) * 0x1.0p-53;
}

// A candidate: its logit and index; "a before b" is the larger logit, or
// the smaller index of equal ones.
typedef struct candidate_t {
  float logit;
  uint32_t index;
} candidate_t;

static bool candidate_before(const candidate_t* a, const candidate_t* b) {
  return a->logit > b->logit || (a->logit == b->logit && a->index < b->index);
}

static int candidate_compare(const void* a, const void* b) {
  return candidate_before((const candidate_t*)a, (const candidate_t*)b)   ? -1
         : candidate_before((const candidate_t*)b, (const candidate_t*)a) ? 1
                                                                          : 0;
}

static void candidate_swap(candidate_t* a, candidate_t* b) {
  const candidate_t t = *a;
  *a = *b;
  *b = t;
}

// Moves the |k| first candidates (by candidate_before) of |c|[0, n) to the
// front, in no order: quickselect with a median-of-three pivot.
static void candidates_select(candidate_t* c, uint32_t n, uint32_t k) {
  uint32_t low = 0;
  uint32_t high = n;  // [low, high) holds the k-th
  while (high - low > 1) {
    const uint32_t mid = low + (high - low) / 2;
    if (candidate_before(&c[mid], &c[low])) candidate_swap(&c[mid], &c[low]);
    if (candidate_before(&c[high - 1], &c[low])) {
      candidate_swap(&c[high - 1], &c[low]);
    }
    if (candidate_before(&c[high - 1], &c[mid])) {
      candidate_swap(&c[high - 1], &c[mid]);
    }
    const candidate_t pivot = c[mid];
    // Lomuto over [low, high): what comes before the pivot to the left.
    candidate_swap(&c[mid], &c[high - 1]);
    uint32_t store = low;
    for (uint32_t i = low; i < high - 1; ++i) {
      if (candidate_before(&c[i], &pivot)) candidate_swap(&c[i], &c[store++]);
    }
    candidate_swap(&c[store], &c[high - 1]);
    if (store == k - 1 || store == k) return;
    if (store > k) {
      high = store;
    } else {
      low = store + 1;
    }
  }
}

static float decode_float(uint32_t bits) {
  float value;
  memcpy(&value, &bits, sizeof(value));
  return value;
}

static uint32_t decode_argmax_of(const float* logits, uint32_t vocab) {
  uint32_t best = 0;
  for (uint32_t i = 1; i < vocab; ++i) {
    if (logits[i] > logits[best]) best = i;
  }
  return best;
}

static int decode_sample(const weft_dispatch_state_t* dispatch,
                         const weft_workgroup_state_t* workgroup) {
  (void)workgroup;
  const uint32_t* constants = dispatch->constants;
  const uint32_t vocab = constants[0];
  const float temperature = decode_float(constants[1]);
  const uint32_t top_k = constants[2];
  const float top_p = decode_float(constants[3]);
  const uint64_t seed = constants[4] | ((uint64_t)constants[5] << 32);
  const size_t* lengths = dispatch->binding_lengths;
  if (vocab == 0 || lengths[0] < vocab * 4ull || lengths[1] < 4 ||
      lengths[2] < 4 ||
      lengths[3] < (uint64_t)vocab * DECODE_SAMPLING_SCRATCH_PER_TOKEN) {
    return 1;
  }
  const float* logits = (const float*)dispatch->binding_ptrs[0];
  const uint32_t position = (uint32_t)(lengths[1] / 4 - 1);
  uint32_t* token = (uint32_t*)dispatch->binding_ptrs[2];
  if (!(temperature > 0.0f) || top_k == 1) {
    *token = decode_argmax_of(logits, vocab);
    return 0;
  }
  candidate_t* c = (candidate_t*)dispatch->binding_ptrs[3];
  for (uint32_t i = 0; i < vocab; ++i) c[i] = (candidate_t){logits[i], i};
  uint32_t n = vocab;
  const bool nucleus = top_p > 0.0f && top_p < 1.0f;
  if (top_k > 0 && top_k < vocab) {
    candidates_select(c, vocab, top_k);
    n = top_k;
    qsort(c, n, sizeof(*c), candidate_compare);
  }
  const float largest = logits[decode_argmax_of(logits, vocab)];
  double total = 0.0;
  for (uint32_t i = 0; i < n; ++i) {
    total += exp((double)(c[i].logit - largest) / temperature);
  }
  if (nucleus) {
    // The fewest, largest first, whose share reaches top_p: the largest m
    // put in order (m = 64, then 8 times more) until their sum reaches it,
    // so a sharp distribution never sorts the whole vocabulary.
    const double goal = top_p * total;
    for (uint32_t m = n < 64 ? n : 64;; m = n / 8 < m ? n : m * 8) {
      if (m < n && n == vocab) {
        candidates_select(c, n, m);
        qsort(c, m, sizeof(*c), candidate_compare);
      } else if (n == vocab) {
        qsort(c, n, sizeof(*c), candidate_compare);
      }
      double kept = 0.0;
      uint32_t i = 0;
      while (i < m && kept < goal) {
        kept += exp((double)(c[i].logit - largest) / temperature);
        ++i;
      }
      if (kept >= goal || m == n) {
        n = i;
        total = kept;
        break;
      }
    }
  }
  const double target = decode_sampling_uniform(seed, position) * total;
  double sum = 0.0;
  uint32_t chosen = c[n - 1].index;
  for (uint32_t i = 0; i < n; ++i) {
    sum += exp((double)(c[i].logit - largest) / temperature);
    if (target < sum) {
      chosen = c[i].index;
      break;
    }
  }
  *token = chosen;
  return 0;
}

static const weft_kernel_def_t kSamplingKernels[] = {
    {"sample", decode_sample, 4, 6, {1, 1, 1}, 0},
};

static const weft_kernel_library_t kSamplingLibrary = {
    WEFT_KERNEL_ABI_VERSION, "decode_sampling", 1, kSamplingKernels};

const weft_kernel_library_t* decode_sampling_query(uint32_t abi_version) {
  return abi_version == WEFT_KERNEL_ABI_VERSION ? &kSamplingLibrary : NULL;
}

const weft_kernel_library_t* decode_sampling_library(void) {
  return &kSamplingLibrary;
}
