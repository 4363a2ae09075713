// weft decode example: sampling the next token on the device.
//
// A kernel library of its own (weft/kernel_abi.h) with one kernel that
// takes argmax's place at the end of a token's command buffer when the
// temperature is above 0:
//
//   SAMPLE   token = a draw from softmax(logits / temperature), restricted
//            to the top_k largest logits (0: all), then to the fewest of
//            those, largest first, whose probabilities sum to top_p (1:
//            all), renormalized
//     bindings: logits [vocab] f32, history u32 [position + 1] (the
//               tokens so far; its length tells the position), token u32,
//               scratch [vocab] x 8 bytes
//     constants: vocab, temperature (float bits), top_k, top_p (float
//                bits), seed (low 32 bits), seed (high 32 bits)
//     workgroups: 1
//
// The draw is a pure function of (seed, position): a counter-based
// generator (SplitMix64's finalizer over the seed and the position) gives
// the uniform number, so a seed gives the same tokens on any device and
// any number of workers. Temperature 0 (or top_k 1) is argmax exactly:
// the first index of the largest logit. Candidates are ordered by logit,
// then by index, so ties never depend on the order of a sort.
#ifndef WEFT_EXAMPLES_DECODE_DECODE_SAMPLING_H_
#define WEFT_EXAMPLES_DECODE_DECODE_SAMPLING_H_

#include <stdint.h>

#include "weft/kernel_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct decode_sampling_t {
  float temperature;  // 0: greedy (argmax)
  uint32_t top_k;     // 0: no limit
  float top_p;        // 1: no limit; in (0, 1]
  uint64_t seed;
} decode_sampling_t;

enum { DECODE_SAMPLING_KERNEL_SAMPLE = 0 };

// Bytes of the scratch binding per vocabulary entry.
#define DECODE_SAMPLING_SCRATCH_PER_TOKEN 8u

// The uniform number in [0, 1) the draw at |position| uses.
double decode_sampling_uniform(uint64_t seed, uint32_t position);

const weft_kernel_library_t* decode_sampling_query(uint32_t abi_version);
const weft_kernel_library_t* decode_sampling_library(void);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_EXAMPLES_DECODE_DECODE_SAMPLING_H_
