// weft: element types of channel reductions (sizes and names are public
// in weft/channel.h) and the f16/bf16 <-> f32 conversions that carry half
// types through a backend without them.
#ifndef WEFT_CHANNEL_ELEMENT_H_
#define WEFT_CHANNEL_ELEMENT_H_

#include <stdbool.h>
#include <stdint.h>

#include "weft/channel.h"

// F16 or BF16.
bool weft_element_type_is_half(weft_element_type_t type);

// Converts |count| elements of half |type| (F16 or BF16) to f32, and back
// (round to nearest even; overflow to infinity; NaN stays NaN).
void weft_element_half_to_f32(weft_element_type_t type, const void* source,
                              float* target, uint64_t count);
void weft_element_f32_to_half(weft_element_type_t type, const float* source,
                              void* target, uint64_t count);

#endif  // WEFT_CHANNEL_ELEMENT_H_
