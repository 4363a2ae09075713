// Channels over MPI, run by ctest through mpiexec (-n 2, and -n 4
// oversubscribed) on one driver (--driver). Every rank runs every case in
// the same order; a failed check prints the rank and the line and aborts
// the whole job (MPI_Abort), so no rank is left waiting, and ctest's
// timeout bounds a hang.
//
// Cases: every op on every element type and reduction against a host
// reference; ops chained by semaphores with dispatches between them; many
// collectives in flight on several queues; an op failing upstream on one
// rank failing on every rank; sizes the ranks disagree on; bad arguments
// refused before MPI is called; a rank that has not arrived listed in the
// hang report; split channels.
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cts.h"
#include "weft/mpi.h"
#include "weft/weft.h"

#define ANY WEFT_QUEUE_AFFINITY_ANY

static int g_rank = -1;

static void fail_at(int line, const char* format, ...) {
  fprintf(stderr, "rank %d: mpi_channel_test.c:%d: ", g_rank, line);
  va_list args;
  va_start(args, format);
  vfprintf(stderr, format, args);
  va_end(args);
  fputc('\n', stderr);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

#define CHECK(cond)                                  \
  do {                                               \
    if (!(cond)) fail_at(__LINE__, "%s", #cond);     \
  } while (0)

// OK, or the status printed and the job aborted.
static void check_ok_at(int line, weft_status_t status, const char* expr) {
  if (weft_status_is_ok(status)) return;
  char* text = NULL;
  size_t length = 0;
  FILE* stream = open_memstream(&text, &length);
  weft_status_fprint(stream, status);
  fclose(stream);
  fail_at(line, "%s: %s", expr, text);
}
#define CHECK_OK(expr) check_ok_at(__LINE__, (expr), #expr)

// |status| (consumed) has |code| and its text holds both needles.
static void check_status_at(int line, weft_status_t status,
                            weft_status_code_t code, const char* needle,
                            const char* needle2) {
  char* text = NULL;
  size_t length = 0;
  FILE* stream = open_memstream(&text, &length);
  weft_status_fprint(stream, status);
  fclose(stream);
  const weft_status_code_t actual = weft_status_code(status);
  weft_status_free(status);
  if (actual != code || (needle && !strstr(text, needle)) ||
      (needle2 && !strstr(text, needle2))) {
    fail_at(line, "expected %s with '%s' and '%s', got: %s",
            weft_status_code_string(code), needle ? needle : "",
            needle2 ? needle2 : "", text);
  }
  free(text);
}
#define CHECK_STATUS(expr, code, needle, needle2) \
  check_status_at(__LINE__, (expr), WEFT_STATUS_##code, needle, needle2)

typedef struct context_t {
  weft_channel_t* channel;
  weft_device_t* device;
  weft_executable_t* kernels;
  int rank;
  int size;
} context_t;

static weft_semaphore_t* make_semaphore(void) {
  weft_semaphore_t* semaphore = NULL;
  CHECK_OK(weft_semaphore_create(weft_allocator_system(), 0, &semaphore));
  return semaphore;
}

static weft_semaphore_list_t list1(weft_semaphore_t** semaphore,
                                   uint64_t* value) {
  weft_semaphore_list_t list = {1, semaphore, value};
  return list;
}

static weft_status_t wait_for(weft_semaphore_t* semaphore, uint64_t value) {
  return weft_semaphore_wait(semaphore, value,
                             weft_timeout_relative(30ll * 1000 * 1000 * 1000));
}

static weft_buffer_t* make_buffer(context_t* c, uint64_t length) {
  weft_buffer_t* buffer = NULL;
  const weft_buffer_params_t params = {0};
  CHECK_OK(weft_device_allocate_buffer(c->device, params, length, &buffer));
  return buffer;
}

static weft_buffer_ref_t whole(weft_buffer_t* buffer) {
  return weft_make_buffer_ref(buffer, 0, WEFT_WHOLE_BUFFER);
}

//===----------------------------------------------------------------------===//
// Host reference values
//===----------------------------------------------------------------------===//

// Small integers every type holds exactly, and whose sums and products
// over 4 ranks stay exact (|products| <= 16).
static double value_for(weft_reduction_t reduction, int rank, int i) {
  switch (reduction) {
    case WEFT_REDUCTION_SUM:
      return (double)((rank + 1) * (i % 5 + 1) - 3);
    case WEFT_REDUCTION_PRODUCT:
      return (double)((i + rank) % 3 == 0 ? -2 : 1);
    default:
      return (double)((i * 7 + rank * 3) % 11 - 5);
  }
}

static double reduce(weft_reduction_t reduction, double a, double b) {
  switch (reduction) {
    case WEFT_REDUCTION_SUM:
      return a + b;
    case WEFT_REDUCTION_PRODUCT:
      return a * b;
    case WEFT_REDUCTION_MIN:
      return a < b ? a : b;
    default:
      return a > b ? a : b;
  }
}

static uint16_t f32_to_bf16(float value) {
  uint32_t bits;
  memcpy(&bits, &value, 4);
  return (uint16_t)(bits >> 16);  // exact for the small integers used
}

static float bf16_to_f32(uint16_t value) {
  uint32_t bits = (uint32_t)value << 16;
  float out;
  memcpy(&out, &bits, 4);
  return out;
}

// Exact for integers of magnitude <= 2048.
static uint16_t f32_to_f16(float value) {
  if (value == 0) return 0;
  uint16_t sign = value < 0 ? 0x8000 : 0;
  float magnitude = fabsf(value);
  int exponent = 0;
  while (magnitude >= 2.0f) {
    magnitude /= 2.0f;
    ++exponent;
  }
  uint16_t mantissa = (uint16_t)((magnitude - 1.0f) * 1024.0f);
  return sign | (uint16_t)((exponent + 15) << 10) | mantissa;
}

static float f16_to_f32(uint16_t half) {
  if ((half & 0x7FFF) == 0) return 0.0f;
  int exponent = ((half >> 10) & 0x1F) - 15;
  float value = (1.0f + (float)(half & 0x3FF) / 1024.0f) * ldexpf(1.0f, exponent);
  return (half & 0x8000) ? -value : value;
}

static void store(weft_element_type_t type, void* data, int i, double value) {
  switch (type) {
    case WEFT_ELEMENT_TYPE_F32: ((float*)data)[i] = (float)value; break;
    case WEFT_ELEMENT_TYPE_F64: ((double*)data)[i] = value; break;
    case WEFT_ELEMENT_TYPE_I32: ((int32_t*)data)[i] = (int32_t)value; break;
    case WEFT_ELEMENT_TYPE_I64: ((int64_t*)data)[i] = (int64_t)value; break;
    case WEFT_ELEMENT_TYPE_F16: ((uint16_t*)data)[i] = f32_to_f16((float)value); break;
    default: ((uint16_t*)data)[i] = f32_to_bf16((float)value); break;
  }
}

static double load(weft_element_type_t type, const void* data, int i) {
  switch (type) {
    case WEFT_ELEMENT_TYPE_F32: return ((const float*)data)[i];
    case WEFT_ELEMENT_TYPE_F64: return ((const double*)data)[i];
    case WEFT_ELEMENT_TYPE_I32: return ((const int32_t*)data)[i];
    case WEFT_ELEMENT_TYPE_I64: return (double)((const int64_t*)data)[i];
    case WEFT_ELEMENT_TYPE_F16: return f16_to_f32(((const uint16_t*)data)[i]);
    default: return bf16_to_f32(((const uint16_t*)data)[i]);
  }
}

//===----------------------------------------------------------------------===//
// Cases
//===----------------------------------------------------------------------===//

// allreduce and reduce_scatter over every type and reduction.
static void reductions_match_the_host(context_t* c) {
  enum { kBlock = 9 };
  const int count = kBlock * c->size;
  weft_semaphore_t* done = make_semaphore();
  uint64_t value = 0;
  for (int t = 0; t < WEFT_ELEMENT_TYPE_COUNT; ++t) {
    const weft_element_type_t type = (weft_element_type_t)t;
    const uint32_t element = weft_element_type_size(type);
    for (int r = 0; r < WEFT_REDUCTION_COUNT; ++r) {
      const weft_reduction_t reduction = (weft_reduction_t)r;
      uint8_t data[8 * 64];
      for (int i = 0; i < count; ++i) {
        store(type, data, i, value_for(reduction, c->rank, i));
      }
      weft_buffer_t* source = make_buffer(c, (uint64_t)count * element);
      weft_buffer_t* target = make_buffer(c, (uint64_t)count * element);
      weft_buffer_t* block = make_buffer(c, (uint64_t)kBlock * element);
      CHECK_OK(weft_buffer_map_write(source, 0, data, count * element));
      uint64_t wait = value;
      uint64_t reduced = ++value;
      CHECK_OK(weft_channel_queue_allreduce(
          c->channel, c->device, ANY, list1(&done, &wait),
          list1(&done, &reduced), whole(source), whole(target), type,
          reduction));
      uint64_t scattered = ++value;
      CHECK_OK(weft_channel_queue_reduce_scatter(
          c->channel, c->device, ANY, list1(&done, &reduced),
          list1(&done, &scattered), whole(source), whole(block), type,
          reduction));
      CHECK_OK(wait_for(done, scattered));
      uint8_t out[8 * 64];
      uint8_t out_block[8 * 16];
      CHECK_OK(weft_buffer_map_read(target, 0, out, count * element));
      CHECK_OK(weft_buffer_map_read(block, 0, out_block, kBlock * element));
      for (int i = 0; i < count; ++i) {
        double expected = value_for(reduction, 0, i);
        for (int q = 1; q < c->size; ++q) {
          expected = reduce(reduction, expected, value_for(reduction, q, i));
        }
        if (load(type, out, i) != expected) {
          fail_at(__LINE__, "allreduce %s %s: element %d is %g, expected %g",
                  weft_element_type_name(type), weft_reduction_name(reduction),
                  i, load(type, out, i), expected);
        }
        const int mine = i - c->rank * kBlock;
        if (mine >= 0 && mine < kBlock && load(type, out_block, mine) != expected) {
          fail_at(__LINE__,
                  "reduce_scatter %s %s: element %d is %g, expected %g",
                  weft_element_type_name(type), weft_reduction_name(reduction),
                  mine, load(type, out_block, mine), expected);
        }
      }
      weft_buffer_release(source);
      weft_buffer_release(target);
      weft_buffer_release(block);
    }
  }
  weft_semaphore_release(done);
}

// allgather, broadcast, alltoall, send/recv around a ring, barrier.
static void data_movement_matches_the_host(context_t* c) {
  enum { kWords = 5 };
  const int size = c->size;
  uint32_t mine[kWords];
  for (int i = 0; i < kWords; ++i) mine[i] = (uint32_t)(c->rank * 100 + i);
  weft_buffer_t* source = make_buffer(c, sizeof(mine));
  CHECK_OK(weft_buffer_map_write(source, 0, mine, sizeof(mine)));
  weft_buffer_t* gathered = make_buffer(c, sizeof(mine) * size);
  weft_buffer_t* broadcast = make_buffer(c, sizeof(mine));
  CHECK_OK(weft_buffer_map_write(broadcast, 0, mine, sizeof(mine)));
  // alltoall: block j of rank r holds r * 1000 + j.
  uint32_t blocks[64];
  for (int j = 0; j < size; ++j) blocks[j] = (uint32_t)(c->rank * 1000 + j);
  weft_buffer_t* to_all = make_buffer(c, 4ull * size);
  CHECK_OK(weft_buffer_map_write(to_all, 0, blocks, 4ull * size));
  weft_buffer_t* from_all = make_buffer(c, 4ull * size);
  weft_buffer_t* ring = make_buffer(c, sizeof(mine));
  weft_semaphore_t* done = make_semaphore();
  uint64_t v[6] = {1, 2, 3, 4, 5, 6};
  CHECK_OK(weft_channel_queue_allgather(c->channel, c->device, ANY,
                                        weft_semaphore_list_empty(),
                                        list1(&done, &v[0]), whole(source),
                                        whole(gathered)));
  CHECK_OK(weft_channel_queue_broadcast(c->channel, c->device, ANY,
                                        list1(&done, &v[0]),
                                        list1(&done, &v[1]), whole(broadcast),
                                        size - 1));
  CHECK_OK(weft_channel_queue_alltoall(c->channel, c->device, ANY,
                                       list1(&done, &v[1]), list1(&done, &v[2]),
                                       whole(to_all), whole(from_all)));
  // The ring: the recv first, so the send of the left neighbour meets it
  // whenever it comes.
  weft_semaphore_t* received = make_semaphore();
  weft_semaphore_t* sent = make_semaphore();
  CHECK_OK(weft_channel_queue_recv(
      c->channel, c->device, ANY, weft_semaphore_list_empty(),
      list1(&received, &v[0]), whole(ring), (c->rank + size - 1) % size, 7));
  CHECK_OK(weft_channel_queue_send(
      c->channel, c->device, ANY, list1(&done, &v[2]), list1(&sent, &v[0]),
      whole(source), (c->rank + 1) % size, 7));
  CHECK_OK(weft_channel_queue_barrier(c->channel, c->device, ANY,
                                      list1(&sent, &v[0]), list1(&done, &v[3])));
  CHECK_OK(wait_for(done, 4));
  CHECK_OK(wait_for(received, 1));
  uint32_t out[64 * kWords];
  CHECK_OK(weft_buffer_map_read(gathered, 0, out, sizeof(mine) * size));
  for (int r = 0; r < size; ++r) {
    for (int i = 0; i < kWords; ++i) CHECK(out[r * kWords + i] == (uint32_t)(r * 100 + i));
  }
  CHECK_OK(weft_buffer_map_read(broadcast, 0, out, sizeof(mine)));
  for (int i = 0; i < kWords; ++i) CHECK(out[i] == (uint32_t)((size - 1) * 100 + i));
  CHECK_OK(weft_buffer_map_read(from_all, 0, out, 4ull * size));
  for (int r = 0; r < size; ++r) CHECK(out[r] == (uint32_t)(r * 1000 + c->rank));
  CHECK_OK(weft_buffer_map_read(ring, 0, out, sizeof(mine)));
  const int left = (c->rank + size - 1) % size;
  for (int i = 0; i < kWords; ++i) CHECK(out[i] == (uint32_t)(left * 100 + i));
  weft_semaphore_release(done);
  weft_semaphore_release(received);
  weft_semaphore_release(sent);
  weft_buffer_t* buffers[] = {source, gathered, broadcast, to_all, from_all, ring};
  for (size_t i = 0; i < sizeof(buffers) / sizeof(buffers[0]); ++i) {
    weft_buffer_release(buffers[i]);
  }
}

static uint32_t f32_bits(float value) {
  uint32_t bits;
  memcpy(&bits, &value, 4);
  return bits;
}

// dispatch (x * 2 + rank) -> allreduce -> dispatch (x * 0.5 + 1), one
// timeline, the host waiting only at the end.
static void chained_with_compute(context_t* c) {
  enum { kCount = 256 };
  uint32_t ordinal = 0;
  CHECK_OK(weft_executable_lookup_kernel(c->kernels, "scale_offset", &ordinal));
  float ones[kCount];
  for (int i = 0; i < kCount; ++i) ones[i] = (float)i;
  weft_buffer_t* input = make_buffer(c, sizeof(ones));
  CHECK_OK(weft_buffer_map_write(input, 0, ones, sizeof(ones)));
  weft_buffer_t* local = make_buffer(c, sizeof(ones));
  weft_buffer_t* reduced = make_buffer(c, sizeof(ones));
  weft_buffer_t* output = make_buffer(c, sizeof(ones));
  weft_semaphore_t* timeline = make_semaphore();
  uint64_t v[3] = {1, 2, 3};
  const uint32_t workgroups[3] = {kCount / 64, 1, 1};
  const uint32_t first[3] = {f32_bits(2.0f), f32_bits((float)c->rank), kCount};
  const uint32_t second[3] = {f32_bits(0.5f), f32_bits(1.0f), kCount};
  weft_buffer_ref_t bindings[2] = {whole(input), whole(local)};
  CHECK_OK(weft_device_queue_dispatch(
      c->device, ANY, weft_semaphore_list_empty(), list1(&timeline, &v[0]),
      c->kernels, ordinal, workgroups, 3, first, 2, bindings));
  CHECK_OK(weft_channel_queue_allreduce(
      c->channel, c->device, ANY, list1(&timeline, &v[0]),
      list1(&timeline, &v[1]), whole(local), whole(reduced),
      WEFT_ELEMENT_TYPE_F32, WEFT_REDUCTION_SUM));
  bindings[0] = whole(reduced);
  bindings[1] = whole(output);
  CHECK_OK(weft_device_queue_dispatch(
      c->device, ANY, list1(&timeline, &v[1]), list1(&timeline, &v[2]),
      c->kernels, ordinal, workgroups, 3, second, 2, bindings));
  CHECK_OK(wait_for(timeline, 3));
  float out[kCount];
  CHECK_OK(weft_buffer_map_read(output, 0, out, sizeof(out)));
  const float rank_sum = (float)(c->size * (c->size - 1) / 2);
  for (int i = 0; i < kCount; ++i) {
    const float expected = (2.0f * i * c->size + rank_sum) * 0.5f + 1.0f;
    if (out[i] != expected) {
      fail_at(__LINE__, "element %d is %g, expected %g", i, out[i], expected);
    }
  }
  weft_semaphore_release(timeline);
  weft_buffer_release(input);
  weft_buffer_release(local);
  weft_buffer_release(reduced);
  weft_buffer_release(output);
}

// A large allreduce goes in pieces (an uneven split here): every element
// still reduced once.
static void a_large_allreduce_in_pieces(context_t* c) {
  const uint64_t count = (6ull << 20) / 4 + 3;
  weft_buffer_t* buffer = make_buffer(c, count * 4);
  int32_t* data = malloc(count * 4);
  CHECK(data != NULL);
  for (uint64_t i = 0; i < count; ++i) data[i] = (int32_t)(i % 1000) + c->rank;
  CHECK_OK(weft_buffer_map_write(buffer, 0, data, count * 4));
  weft_semaphore_t* done = make_semaphore();
  uint64_t one = 1;
  CHECK_OK(weft_channel_queue_allreduce(
      c->channel, c->device, ANY, weft_semaphore_list_empty(),
      list1(&done, &one), whole(buffer), whole(buffer), WEFT_ELEMENT_TYPE_I32,
      WEFT_REDUCTION_SUM));
  CHECK_OK(wait_for(done, 1));
  CHECK_OK(weft_buffer_map_read(buffer, 0, data, count * 4));
  const int rank_sum = c->size * (c->size - 1) / 2;
  for (uint64_t i = 0; i < count; ++i) {
    if (data[i] != (int32_t)(i % 1000) * c->size + rank_sum) {
      fail_at(__LINE__, "element %" PRIu64 " is %d", i, data[i]);
    }
  }
  free(data);
  weft_semaphore_release(done);
  weft_buffer_release(buffer);
}

// 32 allreduces submitted at once over the device's queues, then waited.
static void many_in_flight_on_several_queues(context_t* c) {
  enum { kOps = 32, kCount = 1024 };
  weft_buffer_t* buffers[kOps];
  weft_semaphore_t* done[kOps];
  uint64_t one = 1;
  for (int k = 0; k < kOps; ++k) {
    buffers[k] = make_buffer(c, kCount * 4);
    int32_t data[kCount];
    for (int i = 0; i < kCount; ++i) data[i] = k + i + c->rank;
    CHECK_OK(weft_buffer_map_write(buffers[k], 0, data, sizeof(data)));
    done[k] = make_semaphore();
  }
  for (int k = 0; k < kOps; ++k) {
    CHECK_OK(weft_channel_queue_allreduce(
        c->channel, c->device, (weft_queue_affinity_t)1 << (k % 4),
        weft_semaphore_list_empty(), list1(&done[k], &one),
        whole(buffers[k]), whole(buffers[k]), WEFT_ELEMENT_TYPE_I32,
        WEFT_REDUCTION_SUM));
  }
  const int rank_sum = c->size * (c->size - 1) / 2;
  for (int k = 0; k < kOps; ++k) {
    CHECK_OK(wait_for(done[k], 1));
    int32_t data[kCount];
    CHECK_OK(weft_buffer_map_read(buffers[k], 0, data, sizeof(data)));
    for (int i = 0; i < kCount; ++i) {
      CHECK(data[i] == (k + i) * c->size + rank_sum);
    }
    weft_semaphore_release(done[k]);
    weft_buffer_release(buffers[k]);
  }
}

// Rank 0's allreduce fails upstream: it fails on every rank, downstream
// too, and the channel goes on.
static void a_failure_on_one_rank_fails_every_rank(context_t* c) {
  weft_buffer_t* buffer = make_buffer(c, 64);
  weft_semaphore_t* upstream = make_semaphore();
  weft_semaphore_t* reduced = make_semaphore();
  weft_semaphore_t* after = make_semaphore();
  uint64_t one = 1;
  CHECK_OK(weft_channel_queue_allreduce(
      c->channel, c->device, ANY,
      c->rank == 0 ? list1(&upstream, &one) : weft_semaphore_list_empty(),
      list1(&reduced, &one), whole(buffer), whole(buffer),
      WEFT_ELEMENT_TYPE_F32, WEFT_REDUCTION_SUM));
  CHECK_OK(weft_device_queue_barrier(c->device, ANY, list1(&reduced, &one),
                                     list1(&after, &one)));
  if (c->rank == 0) {
    weft_semaphore_fail(upstream,
                        WEFT_STATUS(DATA_LOSS, "rank 0 lost its gradients"));
    CHECK_STATUS(wait_for(after, 1), DATA_LOSS, "rank 0 lost its gradients",
                 NULL);
  } else {
    CHECK_STATUS(wait_for(after, 1), ABORTED,
                 "rank 0's op failed before it started", "allreduce on channel 'world'");
  }
  // A barrier too: it does not let the other ranks through.
  weft_semaphore_t* barrier_gate = make_semaphore();
  weft_semaphore_t* passed = make_semaphore();
  CHECK_OK(weft_channel_queue_barrier(
      c->channel, c->device, ANY,
      c->rank == 0 ? list1(&barrier_gate, &one) : weft_semaphore_list_empty(),
      list1(&passed, &one)));
  if (c->rank == 0) {
    weft_semaphore_fail(barrier_gate, WEFT_STATUS(CANCELLED, "rank 0 gave up"));
    CHECK_STATUS(wait_for(passed, 1), CANCELLED, "rank 0 gave up", NULL);
  } else {
    CHECK_STATUS(wait_for(passed, 1), ABORTED,
                 "rank 0's op failed before it started", "barrier on channel");
  }
  weft_semaphore_release(barrier_gate);
  weft_semaphore_release(passed);
  // In step: the next collective works everywhere.
  weft_semaphore_t* next = make_semaphore();
  CHECK_OK(weft_channel_queue_barrier(c->channel, c->device, ANY,
                                      weft_semaphore_list_empty(),
                                      list1(&next, &one)));
  CHECK_OK(wait_for(next, 1));
  // A send that never starts fails its recv on the other rank.
  if (c->size >= 2 && c->rank < 2) {
    weft_semaphore_t* p2p = make_semaphore();
    weft_semaphore_t* gate = make_semaphore();
    if (c->rank == 0) {
      CHECK_OK(weft_channel_queue_send(c->channel, c->device, ANY,
                                       list1(&gate, &one), list1(&p2p, &one),
                                       whole(buffer), 1, 11));
      weft_semaphore_fail(gate, WEFT_STATUS(CANCELLED, "the step was cancelled"));
      CHECK_STATUS(wait_for(p2p, 1), CANCELLED, "the step was cancelled", NULL);
    } else {
      CHECK_OK(weft_channel_queue_recv(c->channel, c->device, ANY,
                                       weft_semaphore_list_empty(),
                                       list1(&p2p, &one), whole(buffer), 0, 11));
      CHECK_STATUS(wait_for(p2p, 1), ABORTED, "rank 0 sent nothing",
                   "recv from rank 0 (tag 11)");
    }
    weft_semaphore_release(gate);
    weft_semaphore_release(p2p);
  }
  weft_semaphore_release(next);
  weft_semaphore_release(upstream);
  weft_semaphore_release(reduced);
  weft_semaphore_release(after);
  weft_buffer_release(buffer);
}

// Without the agreement, a rank whose op failed upstream contributes
// zeros: the others succeed with their own sum, it fails with its error.
static void without_agreement_a_failed_rank_contributes_zeros(context_t* c) {
  weft_channel_t* unchecked = NULL;
  CHECK_OK(weft_mpi_channel_create(MPI_COMM_WORLD, "unchecked",
                                   WEFT_CHANNEL_FLAG_NONE,
                                   weft_allocator_system(), &unchecked));
  weft_buffer_t* buffer = make_buffer(c, 16);
  const float mine[4] = {1.0f, 2.0f, 3.0f, (float)c->rank};
  CHECK_OK(weft_buffer_map_write(buffer, 0, mine, sizeof(mine)));
  weft_semaphore_t* upstream = make_semaphore();
  weft_semaphore_t* done = make_semaphore();
  uint64_t one = 1;
  CHECK_OK(weft_channel_queue_allreduce(
      unchecked, c->device, ANY,
      c->rank == 0 ? list1(&upstream, &one) : weft_semaphore_list_empty(),
      list1(&done, &one), whole(buffer), whole(buffer), WEFT_ELEMENT_TYPE_F32,
      WEFT_REDUCTION_SUM));
  if (c->rank == 0) {
    weft_semaphore_fail(upstream, WEFT_STATUS(DATA_LOSS, "no input on rank 0"));
    CHECK_STATUS(wait_for(done, 1), DATA_LOSS, "no input on rank 0", NULL);
  } else {
    CHECK_OK(wait_for(done, 1));
    float out[4];
    CHECK_OK(weft_buffer_map_read(buffer, 0, out, sizeof(out)));
    float rank_sum = 0;
    for (int r = 1; r < c->size; ++r) rank_sum += (float)r;
    CHECK(out[0] == (float)(c->size - 1) && out[1] == 2.0f * (c->size - 1) &&
          out[3] == rank_sum);
  }
  weft_semaphore_release(upstream);
  weft_semaphore_release(done);
  weft_buffer_release(buffer);
  weft_channel_release(unchecked);
}

// MPI's own errors come back named: a message longer than the recv's
// range is MPI_ERR_TRUNCATE on the receiving rank.
static void an_mpi_error_names_the_call_and_peer(context_t* c) {
  if (c->rank > 1) return;
  weft_buffer_t* buffer = make_buffer(c, 64);
  weft_semaphore_t* done = make_semaphore();
  uint64_t one = 1;
  if (c->rank == 0) {
    CHECK_OK(weft_channel_queue_recv(
        c->channel, c->device, ANY, weft_semaphore_list_empty(),
        list1(&done, &one), weft_make_buffer_ref(buffer, 0, 16), 1, 12));
    CHECK_STATUS(wait_for(done, 1), OUT_OF_RANGE,
                 "MPI_Irecv failed in recv from rank 1 (tag 12) on channel "
                 "'world' (rank 0 of ",
                 "MPI_ERR_TRUNCATE");
  } else {
    CHECK_OK(weft_channel_queue_send(c->channel, c->device, ANY,
                                     weft_semaphore_list_empty(),
                                     list1(&done, &one), whole(buffer), 0, 12));
    CHECK_OK(wait_for(done, 1));
  }
  weft_semaphore_release(done);
  weft_buffer_release(buffer);
}

static void mismatched_sizes_fail_on_every_rank(context_t* c) {
  weft_buffer_t* buffer = make_buffer(c, 64);
  weft_semaphore_t* done = make_semaphore();
  uint64_t one = 1;
  const uint64_t length = c->rank == 0 ? 32 : 64;
  CHECK_OK(weft_channel_queue_allreduce(
      c->channel, c->device, ANY, weft_semaphore_list_empty(),
      list1(&done, &one), weft_make_buffer_ref(buffer, 0, length),
      weft_make_buffer_ref(buffer, 0, length), WEFT_ELEMENT_TYPE_I64,
      WEFT_REDUCTION_MAX));
  CHECK_STATUS(wait_for(done, 1), INVALID_ARGUMENT,
               "the ranks disagree on its size",
               "the ranks have from 32 to 64 bytes");
  weft_semaphore_release(done);
  weft_buffer_release(buffer);
}

static void bad_arguments_never_reach_mpi(context_t* c) {
  weft_buffer_t* buffer = make_buffer(c, 64);
  weft_semaphore_t* signal = make_semaphore();
  uint64_t one = 1;
  CHECK_STATUS(weft_channel_queue_send(c->channel, c->device, ANY,
                                       weft_semaphore_list_empty(),
                                       list1(&signal, &one), whole(buffer),
                                       c->size, 0),
               INVALID_ARGUMENT, "is not a rank of channel 'world'", NULL);
  const int32_t limit = weft_channel_tag_limit(c->channel);
  CHECK(limit >= 32767);
  if (limit < INT32_MAX) {
    CHECK_STATUS(weft_channel_queue_recv(c->channel, c->device, ANY,
                                         weft_semaphore_list_empty(),
                                         list1(&signal, &one), whole(buffer),
                                         0, limit + 1),
                 INVALID_ARGUMENT, "is outside [0, ", NULL);
  }
  CHECK_STATUS(weft_channel_queue_allgather(c->channel, c->device, ANY,
                                            weft_semaphore_list_empty(),
                                            list1(&signal, &one),
                                            weft_make_buffer_ref(buffer, 0, 8),
                                            weft_make_buffer_ref(buffer, 8, 8)),
               INVALID_ARGUMENT, "size x the source's length", NULL);
  uint64_t value = 0;
  CHECK_OK(weft_semaphore_query(signal, &value));
  CHECK(value == 0);
  weft_semaphore_release(signal);
  weft_buffer_release(buffer);
  // Channels made from nothing usable.
  weft_channel_t* channel = (weft_channel_t*)0x1;
  CHECK_STATUS(weft_mpi_channel_create(MPI_COMM_NULL, "x", 0,
                                       weft_allocator_system(), &channel),
               INVALID_ARGUMENT, "MPI_COMM_NULL", NULL);
  CHECK(channel == NULL);
  CHECK_STATUS(weft_mpi_channel_create(MPI_COMM_WORLD, "x", 0x80,
                                       weft_allocator_system(), &channel),
               INVALID_ARGUMENT, "unknown flags", NULL);
  CHECK_STATUS(weft_mpi_channel_create(MPI_COMM_WORLD, "x", 0,
                                       weft_allocator_system(), NULL),
               INVALID_ARGUMENT, "out_channel is NULL", NULL);
}

// Rank 0 waits for a message rank 1 sends only after rank 0 looked at
// its hang report: the recv is listed as in flight, with its peer.
static void a_rank_not_arrived_is_in_the_report(context_t* c) {
  if (c->size < 2) return;
  weft_buffer_t* buffer = make_buffer(c, 16);
  weft_semaphore_t* done = make_semaphore();
  uint64_t one = 1;
  if (c->rank == 0) {
    CHECK_OK(weft_channel_queue_recv(c->channel, c->device, ANY,
                                     weft_semaphore_list_empty(),
                                     list1(&done, &one), whole(buffer), 1, 99));
    // A queue thread hands the recv to the channel soon after submit.
    char* text = NULL;
    for (int attempt = 0;; ++attempt) {
      size_t length = 0;
      FILE* stream = open_memstream(&text, &length);
      weft_device_dump_pending(c->device, stream);
      fclose(stream);
      if (strstr(text, "channel_recv on queue 0: in flight on a channel, "
                       "submitted") &&
          strstr(text, "channel 'world' (rank 0 of ") &&
          strstr(text, "16 bytes, with rank 1, tag 99, in flight for ")) {
        break;
      }
      if (attempt == 1000) {
        fail_at(__LINE__, "the report lacks the recv:\n%s", text);
      }
      free(text);
      struct timespec pause = {0, 10 * 1000 * 1000};
      nanosleep(&pause, NULL);
    }
    free(text);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (c->rank == 1) {
    CHECK_OK(weft_channel_queue_send(c->channel, c->device, ANY,
                                     weft_semaphore_list_empty(),
                                     list1(&done, &one), whole(buffer), 0, 99));
  }
  if (c->rank <= 1) CHECK_OK(wait_for(done, 1));
  weft_semaphore_release(done);
  weft_buffer_release(buffer);
}

static void split_channels_reduce_within_their_color(context_t* c) {
  weft_channel_t* sub = NULL;
  CHECK_OK(weft_channel_split(c->channel, c->rank % 2, -c->rank, &sub));
  CHECK(sub != NULL);
  const int members = (c->size - c->rank % 2 + 1) / 2;
  CHECK(weft_channel_size(sub) == members);
  char expected_name[32];
  snprintf(expected_name, sizeof(expected_name), "world/%d", c->rank % 2);
  CHECK(strcmp(weft_channel_name(sub), expected_name) == 0);
  weft_buffer_t* buffer = make_buffer(c, 4);
  int32_t mine = c->rank;
  CHECK_OK(weft_buffer_map_write(buffer, 0, &mine, 4));
  weft_semaphore_t* done = make_semaphore();
  uint64_t one = 1;
  CHECK_OK(weft_channel_queue_allreduce(sub, c->device, ANY,
                                        weft_semaphore_list_empty(),
                                        list1(&done, &one), whole(buffer),
                                        whole(buffer), WEFT_ELEMENT_TYPE_I32,
                                        WEFT_REDUCTION_SUM));
  CHECK_OK(wait_for(done, 1));
  int32_t sum = 0;
  CHECK_OK(weft_buffer_map_read(buffer, 0, &sum, 4));
  int32_t expected = 0;
  for (int r = c->rank % 2; r < c->size; r += 2) expected += r;
  CHECK(sum == expected);
  // A rank may stay out.
  weft_channel_t* none = (weft_channel_t*)0x1;
  CHECK_OK(weft_channel_split(c->channel, c->rank == 0 ? -1 : 1, 0, &none));
  CHECK((c->rank == 0) == (none == NULL));
  weft_channel_release(none);
  weft_semaphore_release(done);
  weft_buffer_release(buffer);
  weft_channel_release(sub);
}

int main(int argc, char** argv) {
  const char* driver = "local-task";
  for (int i = 1; i + 1 < argc; ++i) {
    if (strcmp(argv[i], "--driver") == 0) driver = argv[i + 1];
  }
  context_t c;
  memset(&c, 0, sizeof(c));
  weft_status_t status = weft_mpi_channel_create_from_environment(
      WEFT_CHANNEL_FLAGS_DEFAULT, weft_allocator_system(), &c.channel);
  if (!weft_status_is_ok(status)) {
    weft_status_fprint(stderr, status);
    weft_status_free(status);
    return 1;
  }
  c.rank = g_rank = weft_channel_rank(c.channel);
  c.size = weft_channel_size(c.channel);
  CHECK_OK(weft_device_create(driver, weft_allocator_system(), &c.device));
  CHECK_OK(weft_device_create_executable(
      c.device, weft_cts_kernel_source(weft_device_driver_name(c.device)),
      &c.kernels));
  static const struct {
    const char* name;
    void (*fn)(context_t*);
  } kCases[] = {
      {"reductions_match_the_host", reductions_match_the_host},
      {"data_movement_matches_the_host", data_movement_matches_the_host},
      {"chained_with_compute", chained_with_compute},
      {"many_in_flight_on_several_queues", many_in_flight_on_several_queues},
      {"a_large_allreduce_in_pieces", a_large_allreduce_in_pieces},
      {"a_failure_on_one_rank_fails_every_rank",
       a_failure_on_one_rank_fails_every_rank},
      {"without_agreement_a_failed_rank_contributes_zeros",
       without_agreement_a_failed_rank_contributes_zeros},
      {"an_mpi_error_names_the_call_and_peer",
       an_mpi_error_names_the_call_and_peer},
      {"mismatched_sizes_fail_on_every_rank",
       mismatched_sizes_fail_on_every_rank},
      {"bad_arguments_never_reach_mpi", bad_arguments_never_reach_mpi},
      {"a_rank_not_arrived_is_in_the_report",
       a_rank_not_arrived_is_in_the_report},
      {"split_channels_reduce_within_their_color",
       split_channels_reduce_within_their_color},
  };
  for (size_t i = 0; i < sizeof(kCases) / sizeof(kCases[0]); ++i) {
    kCases[i].fn(&c);
    MPI_Barrier(MPI_COMM_WORLD);
    if (c.rank == 0) printf("[ OK ] %s (%d ranks, %s)\n", kCases[i].name, c.size, driver);
  }
  weft_executable_release(c.kernels);
  weft_device_release(c.device);
  weft_channel_release(c.channel);
  if (c.rank == 0) printf("all %zu cases passed on %d ranks\n",
                          sizeof(kCases) / sizeof(kCases[0]), c.size);
  return 0;
}
