// weft example: a data-parallel training step of a two-layer MLP over MPI.
//
// Every rank holds the same weights and computes the gradients of its
// share of the batch; the gradients are summed over the ranks with
// weft_channel_queue_allreduce and every rank applies the same update.
// Everything of a step is queued up front and ordered by semaphores: the
// second layer's gradients are reduced while the first layer's backward
// pass still runs, and the host waits once, at the end.
//
//   mpiexec -n 2 weft-example-dp-train [--device=local-task?workers=1]
//       [--steps=N] [--batch=GLOBAL] [--dims=IN,HIDDEN,OUT]
//       [--mode=queue|blocking|both]
//
// --mode=blocking runs the same kernels with a blocking MPI_Allreduce of
// each layer's gradients between the layers (the host waits for each
// layer's gradients first): the baseline the queued step is measured
// against. Every rank then checks its weights against a plain-C step over
// the whole batch in one process (max relative difference <= 1e-5) and
// exits non-zero if they differ.
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp_kernels.h"
#include "weft/mpi.h"
#include "weft/weft.h"

#define ANY WEFT_QUEUE_AFFINITY_ANY
#define LEARNING_RATE 0.05f

static int g_rank = 0;

static void check(weft_status_t status, const char* what) {
  if (weft_status_is_ok(status)) return;
  fprintf(stderr, "weft-example-dp-train: rank %d: %s: ", g_rank, what);
  weft_status_fprint(stderr, status);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static uint32_t f32_bits(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof(bits));
  return bits;
}

// A deterministic uniform value in [-scale, scale) from |*state|.
static float uniform(uint64_t* state, float scale) {
  *state = *state * 6364136223846793005ull + 1442695040888963407ull;
  return ((float)(*state >> 40) / (float)(1ull << 24) * 2.0f - 1.0f) * scale;
}

typedef struct shape_t {
  uint32_t batch;  // global
  uint32_t in, hidden, out;
} shape_t;

static size_t params1_count(const shape_t* s) {
  return (size_t)s->in * s->hidden + s->hidden;
}
static size_t params2_count(const shape_t* s) {
  return (size_t)s->hidden * s->out + s->out;
}

// The whole problem, the same on every rank: inputs, targets, weights.
typedef struct problem_t {
  float* x;   // [batch][in]
  float* t;   // [batch][out]
  float* p1;  // [in x hidden | hidden]
  float* p2;  // [hidden x out | out]
} problem_t;

static void problem_make(const shape_t* s, problem_t* p) {
  uint64_t state = 42;
  p->x = malloc((size_t)s->batch * s->in * 4);
  p->t = malloc((size_t)s->batch * s->out * 4);
  p->p1 = malloc(params1_count(s) * 4);
  p->p2 = malloc(params2_count(s) * 4);
  for (size_t i = 0; i < (size_t)s->batch * s->in; ++i) p->x[i] = uniform(&state, 1.0f);
  for (size_t i = 0; i < (size_t)s->batch * s->out; ++i) p->t[i] = uniform(&state, 1.0f);
  const float scale1 = 1.0f / sqrtf((float)s->in);
  const float scale2 = 1.0f / sqrtf((float)s->hidden);
  for (size_t i = 0; i < params1_count(s); ++i) p->p1[i] = uniform(&state, scale1);
  for (size_t i = 0; i < params2_count(s); ++i) p->p2[i] = uniform(&state, scale2);
}

static void problem_free(problem_t* p) {
  free(p->x);
  free(p->t);
  free(p->p1);
  free(p->p2);
}

//===----------------------------------------------------------------------===//
// The reference: one process, the whole batch, plain loops
//===----------------------------------------------------------------------===//

static void reference_step(const shape_t* s, const float* x, const float* t,
                           float* p1, float* p2) {
  const uint32_t B = s->batch, I = s->in, H = s->hidden, O = s->out;
  float* h = calloc((size_t)B * H, 4);
  float* y = calloc((size_t)B * O, 4);
  float* dy = calloc((size_t)B * O, 4);
  float* dz = calloc((size_t)B * H, 4);
  double* g1 = calloc(params1_count(s), sizeof(double));
  double* g2 = calloc(params2_count(s), sizeof(double));
  for (uint32_t b = 0; b < B; ++b) {
    for (uint32_t j = 0; j < H; ++j) {
      double sum = p1[(size_t)I * H + j];
      for (uint32_t i = 0; i < I; ++i) sum += (double)x[(size_t)b * I + i] * p1[(size_t)i * H + j];
      h[(size_t)b * H + j] = sum > 0 ? (float)sum : 0.0f;
    }
    for (uint32_t j = 0; j < O; ++j) {
      double sum = p2[(size_t)H * O + j];
      for (uint32_t i = 0; i < H; ++i) sum += (double)h[(size_t)b * H + i] * p2[(size_t)i * O + j];
      y[(size_t)b * O + j] = (float)sum;
      dy[(size_t)b * O + j] = (float)((sum - t[(size_t)b * O + j]) / B);
    }
    for (uint32_t i = 0; i < H; ++i) {
      double sum = 0;
      for (uint32_t j = 0; j < O; ++j) sum += (double)dy[(size_t)b * O + j] * p2[(size_t)i * O + j];
      dz[(size_t)b * H + i] = h[(size_t)b * H + i] > 0 ? (float)sum : 0.0f;
    }
  }
  for (uint32_t b = 0; b < B; ++b) {
    for (uint32_t i = 0; i <= H; ++i) {
      const double a = i < H ? h[(size_t)b * H + i] : 1.0;
      for (uint32_t j = 0; j < O; ++j) g2[(size_t)i * O + j] += a * dy[(size_t)b * O + j];
    }
    for (uint32_t i = 0; i <= I; ++i) {
      const double a = i < I ? x[(size_t)b * I + i] : 1.0;
      for (uint32_t j = 0; j < H; ++j) g1[(size_t)i * H + j] += a * dz[(size_t)b * H + j];
    }
  }
  for (size_t k = 0; k < params1_count(s); ++k) p1[k] -= LEARNING_RATE * (float)g1[k];
  for (size_t k = 0; k < params2_count(s); ++k) p2[k] -= LEARNING_RATE * (float)g2[k];
  free(h); free(y); free(dy); free(dz); free(g1); free(g2);
}

// The largest |a - b| / max(|b|, 1e-3).
static double max_relative_difference(const float* a, const float* b,
                                      size_t count) {
  double worst = 0;
  for (size_t k = 0; k < count; ++k) {
    const double scale = fabs(b[k]) > 1e-3 ? fabs(b[k]) : 1e-3;
    const double difference = fabs((double)a[k] - b[k]) / scale;
    if (difference > worst) worst = difference;
  }
  return worst;
}

//===----------------------------------------------------------------------===//
// The step on weft
//===----------------------------------------------------------------------===//

typedef struct trainer_t {
  shape_t shape;
  uint32_t local_batch;
  weft_channel_t* channel;
  weft_device_t* device;
  weft_executable_t* kernels;
  // x, t: this rank's rows; p1, p2: weights; h, y, dy, dz: activations and
  // their gradients; g1, g2: the layers' gradients, reduced in place.
  weft_buffer_t *x, *t, *p1, *p2, *h, *y, *dy, *dz, *g1, *g2;
  // compute: the chain of dispatches (6 per step); reduced1/2 and
  // updated1/2: one value per step.
  weft_semaphore_t *compute, *reduced1, *reduced2, *updated1, *updated2;
  uint64_t step;
} trainer_t;

static weft_buffer_t* make_buffer(trainer_t* tr, size_t floats,
                                  const float* data) {
  weft_buffer_t* buffer = NULL;
  const weft_buffer_params_t params = {0};
  check(weft_device_allocate_buffer(tr->device, params, floats * 4, &buffer),
        "allocate");
  if (data) check(weft_buffer_map_write(buffer, 0, data, floats * 4), "write");
  return buffer;
}

static weft_semaphore_t* make_semaphore(trainer_t* tr) {
  weft_semaphore_t* semaphore = NULL;
  check(weft_device_create_semaphore(tr->device, 0, &semaphore), "semaphore");
  return semaphore;
}

static void trainer_create(trainer_t* tr, const char* device_string,
                           const shape_t* shape, const problem_t* problem) {
  memset(tr, 0, sizeof(*tr));
  tr->shape = *shape;
  check(weft_mpi_channel_create_from_environment(WEFT_CHANNEL_FLAGS_DEFAULT,
                                                 weft_allocator_system(),
                                                 &tr->channel),
        "channel");
  g_rank = weft_channel_rank(tr->channel);
  const uint32_t ranks = (uint32_t)weft_channel_size(tr->channel);
  if (shape->batch % ranks) {
    fprintf(stderr, "weft-example-dp-train: the batch (%u) must split evenly "
                    "over %u ranks\n", shape->batch, ranks);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  tr->local_batch = shape->batch / ranks;
  check(weft_device_create(device_string, weft_allocator_system(),
                           &tr->device),
        device_string);
  check(weft_device_create_executable(
            tr->device, weft_executable_source_cpu_static(dp_kernels_query),
            &tr->kernels),
        "kernels");
  const shape_t* s = shape;
  const size_t first = (size_t)g_rank * tr->local_batch;
  tr->x = make_buffer(tr, (size_t)tr->local_batch * s->in, problem->x + first * s->in);
  tr->t = make_buffer(tr, (size_t)tr->local_batch * s->out, problem->t + first * s->out);
  tr->p1 = make_buffer(tr, params1_count(s), problem->p1);
  tr->p2 = make_buffer(tr, params2_count(s), problem->p2);
  tr->h = make_buffer(tr, (size_t)tr->local_batch * s->hidden, NULL);
  tr->y = make_buffer(tr, (size_t)tr->local_batch * s->out, NULL);
  tr->dy = make_buffer(tr, (size_t)tr->local_batch * s->out, NULL);
  tr->dz = make_buffer(tr, (size_t)tr->local_batch * s->hidden, NULL);
  tr->g1 = make_buffer(tr, params1_count(s), NULL);
  tr->g2 = make_buffer(tr, params2_count(s), NULL);
  tr->compute = make_semaphore(tr);
  tr->reduced1 = make_semaphore(tr);
  tr->reduced2 = make_semaphore(tr);
  tr->updated1 = make_semaphore(tr);
  tr->updated2 = make_semaphore(tr);
}

static void trainer_destroy(trainer_t* tr) {
  weft_buffer_t* buffers[] = {tr->x, tr->t, tr->p1, tr->p2, tr->h,
                              tr->y, tr->dy, tr->dz, tr->g1, tr->g2};
  for (size_t i = 0; i < sizeof(buffers) / sizeof(buffers[0]); ++i) {
    weft_buffer_release(buffers[i]);
  }
  weft_semaphore_t* semaphores[] = {tr->compute, tr->reduced1, tr->reduced2,
                                    tr->updated1, tr->updated2};
  for (size_t i = 0; i < 5; ++i) weft_semaphore_release(semaphores[i]);
  weft_executable_release(tr->kernels);
  weft_device_release(tr->device);
  weft_channel_release(tr->channel);
}

#define REF(buffer) weft_make_buffer_ref((buffer), 0, WEFT_WHOLE_BUFFER)

// Queues one dispatch waiting on |waits| and signalling |signal| = |value|.
static void dispatch(trainer_t* tr, weft_semaphore_list_t waits,
                     weft_semaphore_t* signal, uint64_t value,
                     dp_kernel_t kernel, uint32_t workgroups,
                     uint32_t constant_count, const uint32_t* constants,
                     uint32_t binding_count, const weft_buffer_ref_t* bindings) {
  const uint32_t counts[3] = {workgroups, 1, 1};
  weft_semaphore_list_t signals = {1, &signal, &value};
  check(weft_device_queue_dispatch(tr->device, ANY, waits, signals,
                                   tr->kernels, kernel, counts, constant_count,
                                   constants, binding_count, bindings),
        "dispatch");
}

static weft_semaphore_list_t on(weft_semaphore_t** semaphore, uint64_t* value) {
  return (weft_semaphore_list_t){1, semaphore, value};
}

// The forward pass and the second layer's gradients (4 dispatches).
static void queue_forward_and_layer2(trainer_t* tr, uint64_t base,
                                     weft_semaphore_list_t first_waits) {
  const shape_t* s = &tr->shape;
  const uint32_t B = tr->local_batch;
  uint64_t v[4] = {base + 1, base + 2, base + 3, base + 4};
  {
    const uint32_t c[] = {B, s->in, s->hidden, 1};
    const weft_buffer_ref_t b[] = {REF(tr->x), REF(tr->p1), REF(tr->h)};
    dispatch(tr, first_waits, tr->compute, v[0], DP_KERNEL_FORWARD, B, 4, c, 3, b);
  }
  {
    const uint32_t c[] = {B, s->hidden, s->out, 0};
    const weft_buffer_ref_t b[] = {REF(tr->h), REF(tr->p2), REF(tr->y)};
    dispatch(tr, on(&tr->compute, &v[0]), tr->compute, v[1], DP_KERNEL_FORWARD, B, 4, c, 3, b);
  }
  {
    const uint32_t c[] = {B, s->out, f32_bits(1.0f / (float)s->batch)};
    const weft_buffer_ref_t b[] = {REF(tr->y), REF(tr->t), REF(tr->dy)};
    dispatch(tr, on(&tr->compute, &v[1]), tr->compute, v[2], DP_KERNEL_OUTPUT_GRAD, B, 3, c, 3, b);
  }
  {
    const uint32_t c[] = {B, s->hidden, s->out};
    const weft_buffer_ref_t b[] = {REF(tr->h), REF(tr->dy), REF(tr->g2)};
    dispatch(tr, on(&tr->compute, &v[2]), tr->compute, v[3], DP_KERNEL_WEIGHT_GRAD, s->hidden + 1, 3, c, 3, b);
  }
}

// The first layer's gradients (2 dispatches after |base| + 4).
static void queue_layer1(trainer_t* tr, uint64_t base) {
  const shape_t* s = &tr->shape;
  const uint32_t B = tr->local_batch;
  uint64_t v[3] = {base + 4, base + 5, base + 6};
  {
    const uint32_t c[] = {B, s->hidden, s->out};
    const weft_buffer_ref_t b[] = {REF(tr->dy), REF(tr->p2), REF(tr->h), REF(tr->dz)};
    dispatch(tr, on(&tr->compute, &v[0]), tr->compute, v[1], DP_KERNEL_INPUT_GRAD, B, 3, c, 4, b);
  }
  {
    const uint32_t c[] = {B, s->in, s->hidden};
    const weft_buffer_ref_t b[] = {REF(tr->x), REF(tr->dz), REF(tr->g1)};
    dispatch(tr, on(&tr->compute, &v[1]), tr->compute, v[2], DP_KERNEL_WEIGHT_GRAD, s->in + 1, 3, c, 3, b);
  }
}

static void queue_sgd(trainer_t* tr, weft_semaphore_list_t waits,
                      weft_buffer_t* params, weft_buffer_t* grads,
                      size_t count, weft_semaphore_t* signal,
                      uint64_t value) {
  const uint32_t c[] = {(uint32_t)count, f32_bits(LEARNING_RATE)};
  const weft_buffer_ref_t b[] = {REF(params), REF(grads)};
  dispatch(tr, waits, signal, value, DP_KERNEL_SGD,
           (uint32_t)((count + DP_SGD_VALUES_PER_WORKGROUP - 1) /
                      DP_SGD_VALUES_PER_WORKGROUP),
           2, c, 2, b);
}

// Starts step |tr->step| + 1: its forward pass and layer 2's gradients,
// after the previous step's updates of both layers. Returns the step.
static uint64_t begin_step(trainer_t* tr) {
  const uint64_t step = ++tr->step;
  uint64_t previous = step - 1;
  weft_semaphore_t* updates[2] = {tr->updated1, tr->updated2};
  uint64_t update_values[2] = {previous, previous};
  queue_forward_and_layer2(tr, (step - 1) * 6,
                           (weft_semaphore_list_t){2, updates, update_values});
  return step;
}

// One step with everything on the queue; returns the value of
// |tr->updated1| and |tr->updated2| the step ends at.
static uint64_t queue_step(trainer_t* tr) {
  const uint64_t step = begin_step(tr);
  const uint64_t base = (step - 1) * 6;
  // Layer 2's gradients are reduced while layer 1's backward pass runs.
  uint64_t layer2_done = base + 4, layer1_done = base + 6;
  uint64_t this_step = step;
  check(weft_channel_queue_allreduce(
            tr->channel, tr->device, ANY, on(&tr->compute, &layer2_done),
            on(&tr->reduced2, &this_step), REF(tr->g2), REF(tr->g2),
            WEFT_ELEMENT_TYPE_F32, WEFT_REDUCTION_SUM),
        "allreduce g2");
  queue_layer1(tr, base);
  check(weft_channel_queue_allreduce(
            tr->channel, tr->device, ANY, on(&tr->compute, &layer1_done),
            on(&tr->reduced1, &this_step), REF(tr->g1), REF(tr->g1),
            WEFT_ELEMENT_TYPE_F32, WEFT_REDUCTION_SUM),
        "allreduce g1");
  // Layer 2's update also waits for layer 1's backward pass, which reads
  // its weights.
  weft_semaphore_t* waits2[2] = {tr->reduced2, tr->compute};
  uint64_t values2[2] = {step, layer1_done};
  queue_sgd(tr, (weft_semaphore_list_t){2, waits2, values2}, tr->p2, tr->g2,
            params2_count(&tr->shape), tr->updated2, step);
  queue_sgd(tr, on(&tr->reduced1, &this_step), tr->p1, tr->g1,
            params1_count(&tr->shape), tr->updated1, step);
  return step;
}

// A blocking MPI_Allreduce of |grads| in place, on the host.
static void host_allreduce(trainer_t* tr, weft_buffer_t* grads, size_t count) {
  weft_buffer_mapping_t mapping;
  check(weft_buffer_map_range(grads, WEFT_MAPPING_MODE_SCOPED,
                              WEFT_MEMORY_ACCESS_ALL, 0, WEFT_WHOLE_BUFFER,
                              &mapping),
        "map");
  MPI_Allreduce(MPI_IN_PLACE, mapping.contents, (int)count, MPI_FLOAT,
                MPI_SUM, MPI_COMM_WORLD);
  weft_buffer_unmap_range(&mapping);
}

static void wait_value(weft_semaphore_t* semaphore, uint64_t value) {
  check(weft_semaphore_wait(semaphore, value, weft_timeout_infinite()), "wait");
}

// The baseline: the same kernels, with the host waiting for each layer's
// gradients and reducing them with a blocking MPI_Allreduce.
static void blocking_step(trainer_t* tr) {
  const uint64_t step = begin_step(tr);
  const uint64_t base = (step - 1) * 6;
  wait_value(tr->compute, base + 4);
  host_allreduce(tr, tr->g2, params2_count(&tr->shape));
  queue_layer1(tr, base);
  wait_value(tr->compute, base + 6);
  host_allreduce(tr, tr->g1, params1_count(&tr->shape));
  uint64_t layer1_done = base + 6;
  queue_sgd(tr, on(&tr->compute, &layer1_done), tr->p2, tr->g2,
            params2_count(&tr->shape), tr->updated2, step);
  queue_sgd(tr, on(&tr->compute, &layer1_done), tr->p1, tr->g1,
            params1_count(&tr->shape), tr->updated1, step);
  wait_value(tr->updated1, step);
  wait_value(tr->updated2, step);
}

// Runs |steps| steps in |mode| from the problem's weights; returns the
// seconds per step and checks the weights against the reference.
static double run(const char* device_string, const shape_t* shape,
                  const problem_t* problem, const char* mode, int steps,
                  const float* expected1, const float* expected2,
                  int* failures) {
  trainer_t tr;
  trainer_create(&tr, device_string, shape, problem);
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  if (strcmp(mode, "queue") == 0) {
    uint64_t last = 0;
    for (int i = 0; i < steps; ++i) last = queue_step(&tr);
    wait_value(tr.updated1, last);
    wait_value(tr.updated2, last);
  } else {
    for (int i = 0; i < steps; ++i) blocking_step(&tr);
  }
  const double seconds = (MPI_Wtime() - start) / steps;
  const shape_t* s = shape;
  float* p1 = malloc(params1_count(s) * 4);
  float* p2 = malloc(params2_count(s) * 4);
  check(weft_buffer_map_read(tr.p1, 0, p1, params1_count(s) * 4), "read");
  check(weft_buffer_map_read(tr.p2, 0, p2, params2_count(s) * 4), "read");
  const double d1 = max_relative_difference(p1, expected1, params1_count(s));
  const double d2 = max_relative_difference(p2, expected2, params2_count(s));
  const double worst = d1 > d2 ? d1 : d2;
  const bool ok = worst <= 1e-5;
  if (!ok) ++*failures;
  if (g_rank == 0 || !ok) {
    printf("rank %d, %-8s %d steps: %8.3f ms per step; weights vs one "
           "process: max relative difference %.2e %s\n",
           g_rank, mode, steps, seconds * 1e3, worst, ok ? "(ok)" : "(TOO LARGE)");
  }
  free(p1);
  free(p2);
  trainer_destroy(&tr);
  return seconds;
}

static bool parse_dims(const char* text, shape_t* s) {
  return sscanf(text, "%u,%u,%u", &s->in, &s->hidden, &s->out) == 3 &&
         s->in && s->hidden && s->out;
}

int main(int argc, char** argv) {
  const char* device_string = "local-task";
  const char* mode = "both";
  int steps = 5;
  shape_t shape = {.batch = 64, .in = 256, .hidden = 512, .out = 256};
  for (int i = 1; i < argc; ++i) {
    const char* arg = argv[i];
    if (strncmp(arg, "--device=", 9) == 0) {
      device_string = arg + 9;
    } else if (strncmp(arg, "--steps=", 8) == 0) {
      steps = atoi(arg + 8);
    } else if (strncmp(arg, "--batch=", 8) == 0) {
      shape.batch = (uint32_t)atoi(arg + 8);
    } else if (strncmp(arg, "--dims=", 7) == 0) {
      if (!parse_dims(arg + 7, &shape)) {
        fprintf(stderr, "weft-example-dp-train: --dims wants IN,HIDDEN,OUT\n");
        return 2;
      }
    } else if (strncmp(arg, "--mode=", 7) == 0) {
      mode = arg + 7;
    } else {
      fprintf(stderr, "weft-example-dp-train: unknown argument '%s'\n", arg);
      return 2;
    }
  }
  if (steps < 1 || shape.batch < 1 ||
      (strcmp(mode, "queue") && strcmp(mode, "blocking") && strcmp(mode, "both"))) {
    fprintf(stderr, "weft-example-dp-train: --steps and --batch must be >= 1, "
                    "--mode queue, blocking or both\n");
    return 2;
  }
  problem_t problem;
  problem_make(&shape, &problem);
  // The reference: |steps| steps over the whole batch in this process.
  float* expected1 = malloc(params1_count(&shape) * 4);
  float* expected2 = malloc(params2_count(&shape) * 4);
  memcpy(expected1, problem.p1, params1_count(&shape) * 4);
  memcpy(expected2, problem.p2, params2_count(&shape) * 4);
  for (int i = 0; i < steps; ++i) {
    reference_step(&shape, problem.x, problem.t, expected1, expected2);
  }
  int failures = 0;
  double queued = 0, blocking = 0;
  if (strcmp(mode, "blocking") != 0) {
    queued = run(device_string, &shape, &problem, "queue", steps, expected1,
                 expected2, &failures);
  }
  if (strcmp(mode, "queue") != 0) {
    blocking = run(device_string, &shape, &problem, "blocking", steps,
                   expected1, expected2, &failures);
  }
  if (g_rank == 0 && queued > 0 && blocking > 0) {
    printf("queued step / blocking step: %.3f\n", queued / blocking);
  }
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  free(expected1);
  free(expected2);
  problem_free(&problem);
  if (g_rank == 0) printf(total ? "FAILED\n" : "ok\n");
  return total ? 1 : 0;
}
