// weft benchmarks: two-thread ping-pong (see pingpong.h).
#include "pingpong.h"

#include "base/atomics.h"
#include "base/futex.h"
#include "base/thread.h"
#include "weft/allocator.h"

// Whose move it is; the word both threads wait on.
enum {
  PINGPONG_TURN_CALLER = 0,
  PINGPONG_TURN_PARTNER = 1,
  PINGPONG_TURN_STOP = 2,
};

struct weft_bench_pingpong_t {
  weft_allocator_t allocator;
  weft_bench_pingpong_mode_t mode;
  weft_thread_t* partner;
  // Alone on its cache line so nothing else the threads touch shares it.
  _Alignas(64) weft_atomic_uint32_t turn;
};

// Waits until |pingpong->turn| is no longer |current| and returns the new
// value. Acquire: the other thread's writes before it handed the turn over
// are visible after the wait.
static uint32_t pingpong_wait_while(weft_bench_pingpong_t* pingpong,
                                    uint32_t current) {
  uint32_t value = weft_atomic_load(&pingpong->turn, memory_order_acquire);
  while (value == current) {
    if (pingpong->mode == WEFT_BENCH_PINGPONG_SPIN) {
      weft_cpu_relax();
    } else {
      weft_futex_wait(&pingpong->turn, current, WEFT_TIME_INFINITE_FUTURE);
    }
    // Acquire: as above.
    value = weft_atomic_load(&pingpong->turn, memory_order_acquire);
  }
  return value;
}

// Hands the turn over. Release: pairs with the acquire in the waiter.
static void pingpong_pass(weft_bench_pingpong_t* pingpong, uint32_t turn) {
  weft_atomic_store(&pingpong->turn, turn, memory_order_release);
  if (pingpong->mode == WEFT_BENCH_PINGPONG_FUTEX) {
    weft_futex_wake(&pingpong->turn, 1);
  }
}

static int pingpong_partner_main(void* user_data) {
  weft_bench_pingpong_t* pingpong = (weft_bench_pingpong_t*)user_data;
  while (pingpong_wait_while(pingpong, PINGPONG_TURN_CALLER) !=
         PINGPONG_TURN_STOP) {
    pingpong_pass(pingpong, PINGPONG_TURN_CALLER);
  }
  return 0;
}

weft_status_t weft_bench_pingpong_create(weft_bench_pingpong_mode_t mode,
                                         weft_bench_pingpong_t** out_pingpong) {
  *out_pingpong = NULL;
  weft_allocator_t allocator = weft_allocator_system();
  weft_bench_pingpong_t* pingpong = NULL;
  weft_status_t status =
      weft_allocator_malloc(allocator, sizeof(*pingpong), (void**)&pingpong);
  if (weft_status_is_ok(status)) {
    pingpong->allocator = allocator;
    pingpong->mode = mode;
    atomic_init(&pingpong->turn, PINGPONG_TURN_CALLER);
    weft_thread_params_t params = {.name = "pingpong", .cpu = -1};
    status = weft_thread_create(pingpong_partner_main, pingpong, &params,
                                allocator, &pingpong->partner);
  }
  if (weft_status_is_ok(status)) {
    *out_pingpong = pingpong;
  } else {
    weft_allocator_free(allocator, pingpong);
  }
  return status;
}

void weft_bench_pingpong_round_trip(weft_bench_pingpong_t* pingpong) {
  pingpong_pass(pingpong, PINGPONG_TURN_PARTNER);
  pingpong_wait_while(pingpong, PINGPONG_TURN_PARTNER);
}

void weft_bench_pingpong_destroy(weft_bench_pingpong_t* pingpong) {
  if (!pingpong) return;
  pingpong_pass(pingpong, PINGPONG_TURN_STOP);
  weft_thread_join(pingpong->partner);
  weft_allocator_free(pingpong->allocator, pingpong);
}
