// The installed weft::weft_mpi: a channel from the environment (a
// singleton MPI job when run without mpiexec) reduces a buffer on a
// local-sync device.
#include <stdio.h>

#include "weft/mpi.h"
#include "weft/weft.h"

static int failed(weft_status_t status) {
  if (weft_status_is_ok(status)) return 0;
  weft_status_fprint(stderr, status);
  weft_status_free(status);
  return 1;
}

int main(void) {
  weft_channel_t* world = NULL;
  weft_device_t* device = NULL;
  weft_buffer_t* buffer = NULL;
  weft_semaphore_t* done = NULL;
  const weft_buffer_params_t params = {0};
  const float values[4] = {1, 2, 3, 4};
  int rc = failed(weft_mpi_channel_create_from_environment(
               WEFT_CHANNEL_FLAGS_DEFAULT, weft_allocator_system(), &world)) ||
           failed(weft_device_create("local-sync", weft_allocator_system(),
                                     &device)) ||
           failed(weft_device_allocate_buffer(device, params, 16, &buffer)) ||
           failed(weft_buffer_map_write(buffer, 0, values, 16)) ||
           failed(weft_semaphore_create(weft_allocator_system(), 0, &done));
  uint64_t one = 1;
  const weft_buffer_ref_t ref = weft_make_buffer_ref(buffer, 0, 16);
  rc = rc || failed(weft_channel_queue_allreduce(
                 world, device, WEFT_QUEUE_AFFINITY_ANY,
                 weft_semaphore_list_empty(),
                 (weft_semaphore_list_t){1, &done, &one}, ref, ref,
                 WEFT_ELEMENT_TYPE_F32, WEFT_REDUCTION_SUM)) ||
       failed(weft_semaphore_wait(done, 1, weft_timeout_infinite()));
  float out[4] = {0};
  rc = rc || failed(weft_buffer_map_read(buffer, 0, out, 16));
  const float size = (float)weft_channel_size(world);
  for (int i = 0; !rc && i < 4; ++i) rc = out[i] != values[i] * size;
  weft_semaphore_release(done);
  weft_buffer_release(buffer);
  weft_device_release(device);
  weft_channel_release(world);
  printf(rc ? "consumer_mpi: FAILED\n" : "consumer_mpi: ok\n");
  return rc;
}
