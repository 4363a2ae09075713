// Uses an installed weft: creates a local-sync device, fills a buffer through
// a queue operation, waits on its semaphore and checks the contents.
#include <stdio.h>
#include <weft/weft.h>

static int check(weft_status_t status, const char* what) {
  if (weft_status_is_ok(status)) return 0;
  fprintf(stderr, "consumer: %s: ", what);
  weft_status_fprint(stderr, status);
  weft_status_free(status);
  return 1;
}

int main(void) {
  weft_device_t* device = NULL;
  weft_buffer_t* buffer = NULL;
  weft_semaphore_t* semaphore = NULL;
  int failed =
      check(weft_device_create("local-sync", weft_allocator_system(), &device),
            "weft_device_create");
  if (!failed) {
    weft_buffer_params_t params = {0, 0, 0};
    failed = check(weft_device_allocate_buffer(device, params, 64, &buffer),
                   "weft_device_allocate_buffer");
  }
  if (!failed) {
    failed = check(weft_device_create_semaphore(device, 0, &semaphore),
                   "weft_device_create_semaphore");
  }
  if (!failed) {
    const uint32_t pattern = 0xC0FFEEu;
    const uint64_t value = 1;
    weft_semaphore_list_t signal = {1, &semaphore, &value};
    failed =
        check(weft_device_queue_fill(device, WEFT_QUEUE_AFFINITY_ANY,
                                     weft_semaphore_list_empty(), signal,
                                     buffer, 0, 64, &pattern, sizeof(pattern)),
              "weft_device_queue_fill");
  }
  if (!failed) {
    failed = check(weft_semaphore_wait(semaphore, 1, weft_timeout_infinite()),
                   "weft_semaphore_wait");
  }
  uint32_t contents[16] = {0};
  if (!failed) {
    failed = check(weft_buffer_map_read(buffer, 0, contents, sizeof(contents)),
                   "weft_buffer_map_read");
  }
  for (int i = 0; i < 16 && !failed; ++i) {
    if (contents[i] != 0xC0FFEEu) {
      fprintf(stderr, "consumer: element %d is 0x%x\n", i, contents[i]);
      failed = 1;
    }
  }
  if (!failed) {
    printf("consumer: ok, %s device filled and read back\n",
           weft_device_driver_name(device));
  }
  if (semaphore) weft_semaphore_release(semaphore);
  if (buffer) weft_buffer_release(buffer);
  if (device) weft_device_release(device);
  return failed;
}
