// weft_mpi_bench: allreduce through a weft channel against MPI_Allreduce
// called directly, in one run on the same ranks (scripts/bench-mpi.sh runs
// it under mpiexec). Run by every rank; rank 0 prints the table.
//
// For each size (f32 elements, sum) and each repetition, the three rows
// run back to back, so drift on a shared machine hits them alike:
//   MPI_Allreduce           the direct call, out of place;
//   MPI nb                  MPI_Iallreduce + MPI_Wait: the non-blocking
//                           call weft's engine makes, without weft;
//   weft/local-sync         weft_channel_queue_allreduce on a local-sync
//                           device, then a host wait on its signal;
//   weft/local-task         the same on a local-task device.
// One sample is the mean time of |count| back-to-back ops after a barrier
// (ops of a rep chained by their semaphore, as a step's would be). The
// table gives medians over the repetitions, and weft's overhead over the
// direct call.
//
//   weft_mpi_bench [--sizes=4096,262144,...] [--reps=N]
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft/mpi.h"
#include "weft/weft.h"

#define MAX_SIZES 16
#define MAX_REPS 64

static void check(weft_status_t status, const char* what) {
  if (weft_status_is_ok(status)) return;
  fprintf(stderr, "weft_mpi_bench: %s: ", what);
  weft_status_fprint(stderr, status);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static int compare_doubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double median(double* values, int count) {
  qsort(values, count, sizeof(double), compare_doubles);
  return count % 2 ? values[count / 2]
                   : 0.5 * (values[count / 2 - 1] + values[count / 2]);
}

// Seconds per op of |count| MPI_Allreduce calls.
static double time_mpi(float* in, float* out, int elements, int count) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (int i = 0; i < count; ++i) {
    MPI_Allreduce(in, out, elements, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  }
  return (MPI_Wtime() - start) / count;
}

// Seconds per op of |count| MPI_Iallreduce + MPI_Wait pairs: the
// non-blocking call weft's engine makes, without weft.
static double time_mpi_nonblocking(float* in, float* out, int elements,
                                   int count) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (int i = 0; i < count; ++i) {
    MPI_Request request;
    MPI_Iallreduce(in, out, elements, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD,
                   &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  }
  return (MPI_Wtime() - start) / count;
}

typedef struct weft_row_t {
  weft_device_t* device;
  weft_buffer_t* in;
  weft_buffer_t* out;
  weft_semaphore_t* timeline;
  uint64_t value;
} weft_row_t;

static double time_weft(weft_channel_t* channel, weft_row_t* row,
                        uint64_t bytes, int count) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (int i = 0; i < count; ++i) {
    uint64_t wait = row->value;
    uint64_t signal = ++row->value;
    weft_semaphore_list_t waits = {1, &row->timeline, &wait};
    weft_semaphore_list_t signals = {1, &row->timeline, &signal};
    check(weft_channel_queue_allreduce(
              channel, row->device, WEFT_QUEUE_AFFINITY_ANY, waits, signals,
              weft_make_buffer_ref(row->in, 0, bytes),
              weft_make_buffer_ref(row->out, 0, bytes), WEFT_ELEMENT_TYPE_F32,
              WEFT_REDUCTION_SUM),
          "allreduce");
  }
  check(weft_semaphore_wait(row->timeline, row->value,
                            weft_timeout_infinite()),
        "wait");
  return (MPI_Wtime() - start) / count;
}

static int parse_sizes(const char* text, uint64_t* sizes) {
  int count = 0;
  while (*text && count < MAX_SIZES) {
    char* end = NULL;
    sizes[count++] = strtoull(text, &end, 10);
    text = *end == ',' ? end + 1 : end;
    if (end == text && *text) break;
  }
  return count;
}

int main(int argc, char** argv) {
  uint64_t sizes[MAX_SIZES] = {4096, 262144, 16u << 20, 256u << 20};
  int size_count = 4;
  int reps = 9;
  for (int i = 1; i < argc; ++i) {
    if (strncmp(argv[i], "--sizes=", 8) == 0) {
      size_count = parse_sizes(argv[i] + 8, sizes);
    } else if (strncmp(argv[i], "--reps=", 7) == 0) {
      reps = atoi(argv[i] + 7);
      if (reps < 1) reps = 1;
      if (reps > MAX_REPS) reps = MAX_REPS;
    }
  }
  weft_channel_t* channel = NULL;
  // Size agreement off: the direct call has none either (its cost is
  // measured separately below).
  check(weft_mpi_channel_create_from_environment(
            WEFT_CHANNEL_FLAG_NONE, weft_allocator_system(), &channel),
        "channel");
  weft_channel_t* checked = NULL;
  check(weft_mpi_channel_create(MPI_COMM_WORLD, "checked",
                                WEFT_CHANNEL_FLAG_CHECK_SIZES,
                                weft_allocator_system(), &checked),
        "checked channel");
  const int rank = weft_channel_rank(channel);
  const int ranks = weft_channel_size(channel);
  const char* const kDevices[2] = {"local-sync", "local-task?workers=1"};
  weft_row_t rows[2];
  memset(rows, 0, sizeof(rows));
  uint64_t largest = 0;
  for (int s = 0; s < size_count; ++s) {
    if (sizes[s] > largest) largest = sizes[s];
  }
  for (int d = 0; d < 2; ++d) {
    check(weft_device_create(kDevices[d], weft_allocator_system(),
                             &rows[d].device),
          kDevices[d]);
    const weft_buffer_params_t params = {0};
    check(weft_device_allocate_buffer(rows[d].device, params, largest,
                                      &rows[d].in),
          "buffer");
    check(weft_device_allocate_buffer(rows[d].device, params, largest,
                                      &rows[d].out),
          "buffer");
    check(weft_buffer_map_fill(rows[d].in, 0, largest, &(uint32_t){0x3F800000u},
                               4),
          "fill");
    check(weft_semaphore_create(weft_allocator_system(), 0, &rows[d].timeline),
          "semaphore");
  }
  float* in = malloc(largest);
  float* out = malloc(largest);
  for (uint64_t i = 0; i < largest / 4; ++i) in[i] = 1.0f;
  if (rank == 0) {
    printf("allreduce, f32 sum, %d ranks, median of %d repetitions\n", ranks,
           reps);
    printf("%10s %6s %12s %12s %12s %12s %12s %10s %10s\n", "bytes", "ops",
           "MPI us", "MPI nb us", "sync us", "task us", "checked us",
           "sync/MPI", "sync/nb");
  }
  for (int s = 0; s < size_count; ++s) {
    const uint64_t bytes = sizes[s];
    const int elements = (int)(bytes / 4);
    int count = (int)((256ull << 20) / bytes);
    if (count < 2) count = 2;
    if (count > 2000) count = 2000;
    double mpi[MAX_REPS], nb[MAX_REPS], sync[MAX_REPS], task[MAX_REPS],
        check_row[MAX_REPS];
    // One warm-up of each.
    time_mpi(in, out, elements, 1);
    time_weft(channel, &rows[0], bytes, 1);
    time_weft(channel, &rows[1], bytes, 1);
    time_weft(checked, &rows[0], bytes, 1);
    for (int r = 0; r < reps; ++r) {
      mpi[r] = time_mpi(in, out, elements, count);
      nb[r] = time_mpi_nonblocking(in, out, elements, count);
      sync[r] = time_weft(channel, &rows[0], bytes, count);
      task[r] = time_weft(channel, &rows[1], bytes, count);
      check_row[r] = time_weft(checked, &rows[0], bytes, count);
    }
    const double m = median(mpi, reps) * 1e6;
    const double mn = median(nb, reps) * 1e6;
    const double ms = median(sync, reps) * 1e6;
    const double mt = median(task, reps) * 1e6;
    const double mc = median(check_row, reps) * 1e6;
    if (rank == 0) {
      printf("%10" PRIu64 " %6d %12.2f %12.2f %12.2f %12.2f %12.2f %10.3f "
             "%10.3f\n",
             bytes, count, m, mn, ms, mt, mc, ms / m, ms / mn);
    }
  }
  float check_value = 0;
  check(weft_buffer_map_read(rows[0].out, 0, &check_value, 4), "read");
  if (check_value != (float)ranks) {
    fprintf(stderr, "rank %d: allreduce gave %g, expected %d\n", rank,
            check_value, ranks);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (int d = 0; d < 2; ++d) {
    weft_semaphore_release(rows[d].timeline);
    weft_buffer_release(rows[d].in);
    weft_buffer_release(rows[d].out);
    weft_device_release(rows[d].device);
  }
  free(in);
  free(out);
  weft_channel_release(checked);
  weft_channel_release(channel);
  return 0;
}
