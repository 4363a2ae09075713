// CTS: channel ops on the one-process channel (weft_channel_create_self),
// on every driver. They are queue ops: ordered by their waits and signals
// against other queue work, failing downstream with the original message,
// refusing bad arguments with the signals untouched, listed in hang
// reports while in flight, and going through staging where a buffer is
// not host-visible. Multi-rank behaviour is tests/channel (MPI).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cts.h"

#define ANY WEFT_QUEUE_AFFINITY_ANY

typedef struct channel_case_t {
  weft_cts_t* cts;
  weft_channel_t* channel;
} channel_case_t;

static weft_channel_t* make_channel(weft_cts_t* cts) {
  weft_channel_t* channel = NULL;
  WEFT_ASSERT_OK(weft_channel_create_self(cts->allocator, &channel));
  assert_int_equal(weft_channel_rank(channel), 0);
  assert_int_equal(weft_channel_size(channel), 1);
  assert_string_equal(weft_channel_name(channel), "self");
  return channel;
}

static weft_buffer_ref_t whole(weft_buffer_t* buffer, uint64_t length) {
  return weft_make_buffer_ref(buffer, 0, length);
}

// A buffer of |length| bytes holding |data|.
static weft_buffer_t* make_data(weft_cts_t* cts, const void* data,
                                uint64_t length) {
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, length);
  weft_cts_write_buffer(cts, buffer, 0, data, length);
  return buffer;
}

// A buffer the host cannot map: device-local only.
static weft_buffer_t* make_device_local(weft_cts_t* cts, uint64_t length) {
  weft_buffer_params_t params = {0};
  params.type = WEFT_MEMORY_TYPE_DEVICE_LOCAL;
  params.usage = WEFT_BUFFER_USAGE_TRANSFER | WEFT_BUFFER_USAGE_DISPATCH_STORAGE;
  return weft_cts_allocate_buffer_with_params(cts, params, length);
}

//===----------------------------------------------------------------------===//
// Results
//===----------------------------------------------------------------------===//

static void collectives_give_the_one_rank_result(void** state) {
  weft_cts_t* cts = *state;
  weft_channel_t* channel = make_channel(cts);
  const float values[4] = {1.5f, -2.0f, 3.25f, 1e6f};
  weft_buffer_t* source = make_data(cts, values, sizeof(values));
  weft_buffer_t* target = weft_cts_allocate_buffer(cts, sizeof(values));
  weft_semaphore_t* done = weft_cts_create_semaphore(cts, 0);
  uint64_t value = 1;
  const uint64_t n = sizeof(values);
  // Each collective in turn, chained on one timeline.
  WEFT_ASSERT_OK(weft_channel_queue_allreduce(
      channel, cts->device, ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&done, &value), whole(source, n), whole(target, n),
      WEFT_ELEMENT_TYPE_F32, WEFT_REDUCTION_SUM));
  WEFT_ASSERT_OK(weft_cts_wait(done, 1));
  float out[4] = {0};
  weft_cts_read_buffer(cts, target, 0, out, n);
  assert_memory_equal(out, values, n);
  typedef weft_status_t (*two_buffer_fn_t)(
      weft_channel_t*, weft_device_t*, weft_queue_affinity_t,
      weft_semaphore_list_t, weft_semaphore_list_t, weft_buffer_ref_t,
      weft_buffer_ref_t);
  const two_buffer_fn_t fns[2] = {weft_channel_queue_allgather,
                                  weft_channel_queue_alltoall};
  for (int i = 0; i < 2; ++i) {
    weft_cts_fill_buffer(cts, target, 0, n, &(uint32_t){0}, 4);
    uint64_t wait = value++;
    WEFT_ASSERT_OK(fns[i](channel, cts->device, ANY,
                          weft_cts_list1(&done, &wait),
                          weft_cts_list1(&done, &value), whole(source, n),
                          whole(target, n)));
    WEFT_ASSERT_OK(weft_cts_wait(done, value));
    memset(out, 0, sizeof(out));
    weft_cts_read_buffer(cts, target, 0, out, n);
    assert_memory_equal(out, values, n);
  }
  weft_cts_fill_buffer(cts, target, 0, n, &(uint32_t){0}, 4);
  uint64_t wait = value++;
  WEFT_ASSERT_OK(weft_channel_queue_reduce_scatter(
      channel, cts->device, ANY, weft_cts_list1(&done, &wait),
      weft_cts_list1(&done, &value), whole(source, n), whole(target, n),
      WEFT_ELEMENT_TYPE_F32, WEFT_REDUCTION_MAX));
  wait = value++;
  WEFT_ASSERT_OK(weft_channel_queue_broadcast(
      channel, cts->device, ANY, weft_cts_list1(&done, &wait),
      weft_cts_list1(&done, &value), whole(target, n), 0));
  wait = value++;
  WEFT_ASSERT_OK(weft_channel_queue_barrier(channel, cts->device, ANY,
                                            weft_cts_list1(&done, &wait),
                                            weft_cts_list1(&done, &value)));
  WEFT_ASSERT_OK(weft_cts_wait(done, value));
  memset(out, 0, sizeof(out));
  weft_cts_read_buffer(cts, target, 0, out, n);
  assert_memory_equal(out, values, n);
  weft_semaphore_release(done);
  weft_buffer_release(source);
  weft_buffer_release(target);
  weft_channel_release(channel);
}

static void half_types_round_trip_through_f32(void** state) {
  weft_cts_t* cts = *state;
  weft_channel_t* channel = make_channel(cts);
  // f16 1.0, -2.5, 65504 (max), 2^-24 (smallest subnormal); bf16 1.0,
  // -3.0, 1e38-ish, a NaN.
  const uint16_t f16[4] = {0x3C00, 0xC100, 0x7BFF, 0x0001};
  const uint16_t bf16[4] = {0x3F80, 0xC040, 0x7E96, 0x7FC0};
  const uint16_t* inputs[2] = {f16, bf16};
  const weft_element_type_t types[2] = {WEFT_ELEMENT_TYPE_F16,
                                        WEFT_ELEMENT_TYPE_BF16};
  for (int t = 0; t < 2; ++t) {
    weft_buffer_t* buffer = make_data(cts, inputs[t], 8);
    weft_semaphore_t* done = weft_cts_create_semaphore(cts, 0);
    uint64_t one = 1;
    // In place.
    WEFT_ASSERT_OK(weft_channel_queue_allreduce(
        channel, cts->device, ANY, weft_semaphore_list_empty(),
        weft_cts_list1(&done, &one), whole(buffer, 8), whole(buffer, 8),
        types[t], WEFT_REDUCTION_PRODUCT));
    WEFT_ASSERT_OK(weft_cts_wait(done, 1));
    uint16_t out[4] = {0};
    weft_cts_read_buffer(cts, buffer, 0, out, 8);
    assert_memory_equal(out, inputs[t], 8);
    weft_semaphore_release(done);
    weft_buffer_release(buffer);
  }
  weft_channel_release(channel);
}

static void send_meets_the_recv_of_its_tag(void** state) {
  weft_cts_t* cts = *state;
  weft_channel_t* channel = make_channel(cts);
  const uint32_t a[2] = {11, 12};
  const uint32_t b[2] = {21, 22};
  weft_buffer_t* source_a = make_data(cts, a, 8);
  weft_buffer_t* source_b = make_data(cts, b, 8);
  weft_buffer_t* target_a = weft_cts_allocate_buffer(cts, 8);
  weft_buffer_t* target_b = weft_cts_allocate_buffer(cts, 8);
  uint64_t values[1] = {1};
  weft_semaphore_t* s[4];
  for (int i = 0; i < 4; ++i) s[i] = weft_cts_create_semaphore(cts, 0);
  // The recvs start first, in the other order; tags decide.
  WEFT_ASSERT_OK(weft_channel_queue_recv(
      channel, cts->device, ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&s[0], &values[0]), whole(target_b, 8), 0, 2));
  WEFT_ASSERT_OK(weft_channel_queue_recv(
      channel, cts->device, ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&s[1], &values[0]), whole(target_a, 8), 0, 1));
  // Pending recvs are listed as in flight on the channel (once a queue
  // thread handed them over: local-task's run a moment after submit).
  char* report = weft_cts_dump_pending(cts->device);
  for (int attempt = 0; attempt < 1000 && !strstr(report, "tag 1, in flight");
       ++attempt) {
    free(report);
    struct timespec pause = {0, 10 * 1000 * 1000};
    nanosleep(&pause, NULL);
    report = weft_cts_dump_pending(cts->device);
  }
  assert_non_null(strstr(report, "channel_recv"));
  assert_non_null(strstr(report, "channel_recv on queue 0: in flight on a channel"));
  assert_non_null(strstr(
      report, "channel 'self' (rank 0 of 1): 8 bytes, with rank 0, tag 2, "
              "in flight for "));
  free(report);
  WEFT_ASSERT_OK(weft_channel_queue_send(
      channel, cts->device, ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&s[2], &values[0]), whole(source_a, 8), 0, 1));
  WEFT_ASSERT_OK(weft_channel_queue_send(
      channel, cts->device, ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&s[3], &values[0]), whole(source_b, 8), 0, 2));
  for (int i = 0; i < 4; ++i) WEFT_ASSERT_OK(weft_cts_wait(s[i], 1));
  uint32_t out[2];
  weft_cts_read_buffer(cts, target_a, 0, out, 8);
  assert_memory_equal(out, a, 8);
  weft_cts_read_buffer(cts, target_b, 0, out, 8);
  assert_memory_equal(out, b, 8);

  // A message of another size fails the recv, not the send.
  weft_buffer_t* small = weft_cts_allocate_buffer(cts, 4);
  weft_semaphore_t* recv_done = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* send_done = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1;
  WEFT_ASSERT_OK(weft_channel_queue_recv(
      channel, cts->device, ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&recv_done, &one), whole(small, 4), 0, 9));
  WEFT_ASSERT_OK(weft_channel_queue_send(
      channel, cts->device, ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&send_done, &one), whole(source_a, 8), 0, 9));
  WEFT_ASSERT_OK(weft_cts_wait(send_done, 1));
  weft_cts_assert_status_contains_both(
      weft_cts_wait(recv_done, 1), WEFT_STATUS_OUT_OF_RANGE,
      "recv from rank 0 (tag 9) on channel 'self'",
      "received 8 bytes, but the target has 4");
  for (int i = 0; i < 4; ++i) weft_semaphore_release(s[i]);
  weft_semaphore_release(recv_done);
  weft_semaphore_release(send_done);
  weft_buffer_release(small);
  weft_buffer_release(source_a);
  weft_buffer_release(source_b);
  weft_buffer_release(target_a);
  weft_buffer_release(target_b);
  weft_channel_release(channel);
}

//===----------------------------------------------------------------------===//
// Ordering and failure
//===----------------------------------------------------------------------===//

static void ordered_against_other_queue_work(void** state) {
  weft_cts_t* cts = *state;
  weft_channel_t* channel = make_channel(cts);
  weft_buffer_t* source = weft_cts_allocate_buffer(cts, 64);
  weft_buffer_t* target = weft_cts_allocate_buffer(cts, 64);
  weft_buffer_t* copy = weft_cts_allocate_buffer(cts, 64);
  weft_semaphore_t* timeline = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* gate = weft_cts_create_semaphore(cts, 0);
  uint64_t v[4] = {1, 2, 3, 1};
  const uint32_t pattern = 0xC0FFEEu;
  // gate -> fill source -> allreduce -> copy target: nothing runs before
  // the host opens the gate.
  WEFT_ASSERT_OK(weft_device_queue_fill(cts->device, ANY,
                                        weft_cts_list1(&gate, &v[3]),
                                        weft_cts_list1(&timeline, &v[0]),
                                        source, 0, 64, &pattern, 4));
  WEFT_ASSERT_OK(weft_channel_queue_allreduce(
      channel, cts->device, ANY, weft_cts_list1(&timeline, &v[0]),
      weft_cts_list1(&timeline, &v[1]), whole(source, 64), whole(target, 64),
      WEFT_ELEMENT_TYPE_I32, WEFT_REDUCTION_MIN));
  WEFT_ASSERT_OK(weft_device_queue_copy(cts->device, ANY,
                                        weft_cts_list1(&timeline, &v[1]),
                                        weft_cts_list1(&timeline, &v[2]),
                                        target, 0, copy, 0, 64));
  weft_cts_assert_not_reached(timeline, 1);
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  WEFT_ASSERT_OK(weft_cts_wait(timeline, 3));
  weft_cts_assert_words(cts, copy, 0, 16, pattern);
  weft_semaphore_release(timeline);
  weft_semaphore_release(gate);
  weft_buffer_release(source);
  weft_buffer_release(target);
  weft_buffer_release(copy);
  weft_channel_release(channel);
}

static void a_failed_wait_fails_downstream(void** state) {
  weft_cts_t* cts = *state;
  weft_channel_t* channel = make_channel(cts);
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 16);
  weft_semaphore_t* upstream = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* reduced = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* after = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1;
  WEFT_ASSERT_OK(weft_channel_queue_allreduce(
      channel, cts->device, ANY, weft_cts_list1(&upstream, &one),
      weft_cts_list1(&reduced, &one), whole(buffer, 16), whole(buffer, 16),
      WEFT_ELEMENT_TYPE_F64, WEFT_REDUCTION_SUM));
  WEFT_ASSERT_OK(weft_device_queue_barrier(cts->device, ANY,
                                           weft_cts_list1(&reduced, &one),
                                           weft_cts_list1(&after, &one)));
  weft_semaphore_fail(upstream,
                      WEFT_STATUS(DATA_LOSS, "the gradient was corrupted"));
  weft_cts_assert_status_contains(weft_cts_wait(reduced, 1),
                                  WEFT_STATUS_DATA_LOSS,
                                  "the gradient was corrupted");
  weft_cts_assert_status_contains(weft_cts_wait(after, 1),
                                  WEFT_STATUS_DATA_LOSS,
                                  "the gradient was corrupted");
  weft_semaphore_release(upstream);
  weft_semaphore_release(reduced);
  weft_semaphore_release(after);
  weft_buffer_release(buffer);
  // Returns: the op that never ran was freed when it was told.
  weft_channel_release(channel);
}

// A send that never starts still meets its recv, which fails instead of
// waiting forever.
static void a_send_that_never_started_fails_its_recv(void** state) {
  weft_cts_t* cts = *state;
  weft_channel_t* channel = make_channel(cts);
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 32);
  weft_semaphore_t* upstream = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* sent = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* received = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1;
  WEFT_ASSERT_OK(weft_channel_queue_recv(
      channel, cts->device, ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&received, &one), whole(buffer, 32), 0, 4));
  WEFT_ASSERT_OK(weft_channel_queue_send(
      channel, cts->device, ANY, weft_cts_list1(&upstream, &one),
      weft_cts_list1(&sent, &one), whole(buffer, 32), 0, 4));
  weft_semaphore_fail(upstream, WEFT_STATUS(UNAVAILABLE, "the sensor died"));
  weft_cts_assert_status_contains(weft_cts_wait(sent, 1),
                                  WEFT_STATUS_UNAVAILABLE, "the sensor died");
  weft_cts_assert_status_contains_both(
      weft_cts_wait(received, 1), WEFT_STATUS_ABORTED,
      "recv from rank 0 (tag 4) on channel 'self'",
      "rank 0 sent nothing: its send failed before it started");
  weft_semaphore_release(upstream);
  weft_semaphore_release(sent);
  weft_semaphore_release(received);
  weft_buffer_release(buffer);
  weft_channel_release(channel);
}

static void unmappable_memory_is_staged(void** state) {
  weft_cts_t* cts = *state;
  weft_channel_t* channel = make_channel(cts);
  const int32_t values[8] = {1, -2, 3, -4, 5, -6, 7, -8};
  weft_buffer_t* source = make_device_local(cts, sizeof(values));
  weft_cts_write_buffer(cts, source, 0, values, sizeof(values));
  weft_buffer_t* target = make_device_local(cts, sizeof(values));
  weft_semaphore_t* done = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1, two = 2;
  WEFT_ASSERT_OK(weft_channel_queue_send(
      channel, cts->device, ANY, weft_semaphore_list_empty(),
      weft_semaphore_list_empty(), whole(source, sizeof(values)), 0, 3));
  WEFT_ASSERT_OK(weft_channel_queue_recv(
      channel, cts->device, ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&done, &one), whole(target, sizeof(values)), 0, 3));
  WEFT_ASSERT_OK(weft_cts_wait(done, 1));
  int32_t out[8] = {0};
  weft_cts_read_buffer(cts, target, 0, out, sizeof(values));
  assert_memory_equal(out, values, sizeof(values));
  // In place, staged both ways.
  WEFT_ASSERT_OK(weft_channel_queue_allreduce(
      channel, cts->device, ANY, weft_cts_list1(&done, &one),
      weft_cts_list1(&done, &two), whole(target, sizeof(values)),
      whole(target, sizeof(values)), WEFT_ELEMENT_TYPE_I32,
      WEFT_REDUCTION_SUM));
  WEFT_ASSERT_OK(weft_cts_wait(done, 2));
  memset(out, 0, sizeof(out));
  weft_cts_read_buffer(cts, target, 0, out, sizeof(values));
  assert_memory_equal(out, values, sizeof(values));
  weft_semaphore_release(done);
  weft_buffer_release(source);
  weft_buffer_release(target);
  weft_channel_release(channel);
}

//===----------------------------------------------------------------------===//
// Bad arguments
//===----------------------------------------------------------------------===//

static void bad_arguments_are_refused_before_anything_runs(void** state) {
  weft_cts_t* cts = *state;
  weft_channel_t* channel = make_channel(cts);
  weft_buffer_t* a = weft_cts_allocate_buffer(cts, 64);
  weft_buffer_t* b = weft_cts_allocate_buffer(cts, 64);
  weft_semaphore_t* signal = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1;
  const weft_semaphore_list_t no_waits = weft_semaphore_list_empty();
  const weft_semaphore_list_t signals = weft_cts_list1(&signal, &one);
  weft_cts_assert_status_contains_both(
      weft_channel_queue_send(channel, cts->device, ANY, no_waits, signals,
                              whole(a, 64), 1, 0),
      WEFT_STATUS_INVALID_ARGUMENT, "weft_channel_queue_send",
      "peer 1 is not a rank of channel 'self' (ranks 0 to 0)");
  weft_cts_assert_status_contains_both(
      weft_channel_queue_recv(channel, cts->device, ANY, no_waits, signals,
                              whole(a, 64), 0, -3),
      WEFT_STATUS_INVALID_ARGUMENT, "weft_channel_queue_recv",
      "tag -3 is outside [0, ");
  weft_cts_assert_status_contains_both(
      weft_channel_queue_broadcast(channel, cts->device, ANY, no_waits,
                                   signals, whole(a, 64), 4),
      WEFT_STATUS_INVALID_ARGUMENT, "weft_channel_queue_broadcast",
      "root 4 is not a rank");
  weft_cts_assert_status_contains_both(
      weft_channel_queue_allreduce(channel, cts->device, ANY, no_waits,
                                   signals, whole(a, 64),
                                   weft_make_buffer_ref(b, 0, 32),
                                   WEFT_ELEMENT_TYPE_F32, WEFT_REDUCTION_SUM),
      WEFT_STATUS_INVALID_ARGUMENT, "the target has 32 bytes",
      "the source's length (64 bytes)");
  weft_cts_assert_status_contains_both(
      weft_channel_queue_allreduce(channel, cts->device, ANY, no_waits,
                                   signals, weft_make_buffer_ref(a, 0, 6),
                                   weft_make_buffer_ref(b, 0, 6),
                                   WEFT_ELEMENT_TYPE_F32, WEFT_REDUCTION_SUM),
      WEFT_STATUS_INVALID_ARGUMENT, "must be whole f32 elements",
      "(6 bytes)");
  weft_cts_assert_status_contains(
      weft_channel_queue_allreduce(channel, cts->device, ANY, no_waits,
                                   signals, whole(a, 64), whole(b, 64),
                                   (weft_element_type_t)99,
                                   WEFT_REDUCTION_SUM),
      WEFT_STATUS_INVALID_ARGUMENT, "unknown element type 99");
  weft_cts_assert_status_contains(
      weft_channel_queue_reduce_scatter(channel, cts->device, ANY, no_waits,
                                        signals, whole(a, 64), whole(b, 64),
                                        WEFT_ELEMENT_TYPE_I64,
                                        (weft_reduction_t)7),
      WEFT_STATUS_INVALID_ARGUMENT, "unknown reduction 7");
  weft_cts_assert_status_contains(
      weft_channel_queue_allgather(channel, cts->device, ANY, no_waits,
                                   signals, weft_make_buffer_ref(a, 0, 32),
                                   weft_make_buffer_ref(a, 16, 32)),
      WEFT_STATUS_INVALID_ARGUMENT, "overlap without being one range");
  weft_cts_assert_status_contains(
      weft_channel_queue_alltoall(channel, cts->device, ANY, no_waits,
                                  signals, whole(a, 64), whole(a, 64)),
      WEFT_STATUS_INVALID_ARGUMENT, "only allreduce works in place");
  weft_cts_assert_status_contains(
      weft_channel_queue_send(channel, cts->device, ANY, no_waits, signals,
                              weft_make_indirect_buffer_ref(0, 0, 8), 0, 0),
      WEFT_STATUS_INVALID_ARGUMENT, "indirect reference");
  weft_cts_assert_status_contains(
      weft_channel_queue_send(channel, cts->device, ANY, no_waits, signals,
                              weft_make_buffer_ref(a, 48, 32), 0, 0),
      WEFT_STATUS_OUT_OF_RANGE, "weft_channel_queue_send");
  weft_cts_assert_status_contains(
      weft_channel_queue_barrier(channel, cts->device, ANY,
                                 weft_cts_list1(&signal, &one), signals),
      WEFT_STATUS_INVALID_ARGUMENT, "weft_channel_queue_barrier");
  // Nothing was signalled or failed, and nothing is left in flight.
  weft_cts_assert_not_reached(signal, 1);
  weft_semaphore_release(signal);
  weft_buffer_release(a);
  weft_buffer_release(b);
  weft_channel_release(channel);
}

// Channel ops are zones of the channel's lane, with their bytes and peer.
static void ops_are_traced_with_bytes_and_peer(void** state) {
  weft_cts_t* cts = *state;
  char path[] = "/tmp/weft_cts_channel_trace_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  WEFT_ASSERT_OK(weft_trace_start(path));
  weft_channel_t* channel = make_channel(cts);
  weft_buffer_t* a = weft_cts_allocate_buffer(cts, 96);
  weft_buffer_t* b = weft_cts_allocate_buffer(cts, 96);
  weft_semaphore_t* done = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1, two = 2;
  WEFT_ASSERT_OK(weft_channel_queue_recv(
      channel, cts->device, ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&done, &one), whole(b, 96), 0, 6));
  WEFT_ASSERT_OK(weft_channel_queue_send(
      channel, cts->device, ANY, weft_semaphore_list_empty(),
      weft_semaphore_list_empty(), whole(a, 96), 0, 6));
  WEFT_ASSERT_OK(weft_channel_queue_allreduce(
      channel, cts->device, ANY, weft_cts_list1(&done, &one),
      weft_cts_list1(&done, &two), whole(a, 96), whole(b, 96),
      WEFT_ELEMENT_TYPE_F32, WEFT_REDUCTION_SUM));
  WEFT_ASSERT_OK(weft_cts_wait(done, 2));
  weft_semaphore_release(done);
  weft_buffer_release(a);
  weft_buffer_release(b);
  weft_channel_release(channel);
  WEFT_ASSERT_OK(weft_trace_stop());
  FILE* file = fopen(path, "r");
  assert_non_null(file);
  static char text[1 << 20];
  size_t length = fread(text, 1, sizeof(text) - 1, file);
  text[length] = '\0';
  fclose(file);
  unlink(path);
  assert_non_null(strstr(text, "\"name\":\"channel 'self' rank 0\""));
  const char* recv = strstr(text, "\"cat\":\"channel\",\"name\":\"channel_recv\"");
  assert_non_null(recv);
  assert_non_null(strstr(recv, "\"bytes\":96,\"peer\":0}"));
  const char* reduce =
      strstr(text, "\"cat\":\"channel\",\"name\":\"channel_allreduce\"");
  assert_non_null(reduce);
  const char* args = strstr(reduce, "\"args\":{");
  assert_non_null(args);
  assert_non_null(strstr(args, "\"bytes\":96}"));
}

static void split_gives_a_channel_or_none(void** state) {
  weft_cts_t* cts = *state;
  weft_channel_t* channel = make_channel(cts);
  weft_channel_t* sub = NULL;
  WEFT_ASSERT_OK(weft_channel_split(channel, 3, 0, &sub));
  assert_non_null(sub);
  assert_int_equal(weft_channel_size(sub), 1);
  weft_channel_release(sub);
  sub = (weft_channel_t*)0x1;
  WEFT_ASSERT_OK(weft_channel_split(channel, -1, 0, &sub));
  assert_null(sub);
  weft_channel_release(channel);
}

int main(int argc, char** argv) {
  const struct CMUnitTest tests[] = {
      WEFT_CTS_CASE(collectives_give_the_one_rank_result),
      WEFT_CTS_CASE(half_types_round_trip_through_f32),
      WEFT_CTS_CASE(send_meets_the_recv_of_its_tag),
      WEFT_CTS_CASE(ordered_against_other_queue_work),
      WEFT_CTS_CASE(a_failed_wait_fails_downstream),
      WEFT_CTS_CASE(a_send_that_never_started_fails_its_recv),
      WEFT_CTS_CASE(unmappable_memory_is_staged),
      WEFT_CTS_CASE(bad_arguments_are_refused_before_anything_runs),
      WEFT_CTS_CASE(ops_are_traced_with_bytes_and_peer),
      WEFT_CTS_CASE(split_gives_a_channel_or_none),
  };
  return weft_cts_run("channel", tests, WEFT_CTS_COUNT(tests), argc, argv);
}
