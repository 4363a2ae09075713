// weft benchmarks: two-thread ping-pong, the physical limit of a
// cross-thread round trip that queue round trips are compared with.
#ifndef WEFT_BENCH_PINGPONG_H_
#define WEFT_BENCH_PINGPONG_H_

#include <stdbool.h>

#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_bench_pingpong_t weft_bench_pingpong_t;

typedef enum weft_bench_pingpong_mode_e {
  // Both threads block on a futex every time they wait; never spin.
  WEFT_BENCH_PINGPONG_FUTEX = 0,
  // Both threads spin on the shared word (with a CPU pause hint).
  WEFT_BENCH_PINGPONG_SPIN = 1,
} weft_bench_pingpong_mode_t;

// Starts a partner thread that answers every ball the caller throws.
weft_status_t weft_bench_pingpong_create(weft_bench_pingpong_mode_t mode,
                                         weft_bench_pingpong_t** out_pingpong);

// Hands the ball to the partner and returns once it came back. Only the
// thread that created |pingpong| may call this.
void weft_bench_pingpong_round_trip(weft_bench_pingpong_t* pingpong);

// Stops and joins the partner thread, then frees |pingpong| (NULL: no-op).
void weft_bench_pingpong_destroy(weft_bench_pingpong_t* pingpong);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_BENCH_PINGPONG_H_
