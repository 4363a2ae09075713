// CTS: the queue's transfer operations one at a time: fill, update, copy,
// barrier, read and write of a file, and execute of a command buffer with a
// binding table. Each signals once its work is visible; each result is read
// after waiting on that signal.
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cts.h"

#define ANY WEFT_QUEUE_AFFINITY_ANY

//===----------------------------------------------------------------------===//
// Fill, update, copy, barrier
//===----------------------------------------------------------------------===//

static void fill_whole_buffer(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 1024);
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1;
  weft_cts_queue_fill_u32(cts, weft_semaphore_list_empty(),
                          weft_cts_list1(&semaphore, &one), buffer, 0,
                          WEFT_WHOLE_BUFFER, 0xDEADBEEFu);
  WEFT_ASSERT_OK(weft_cts_wait(semaphore, 1));
  weft_cts_assert_words(cts, buffer, 0, 256, 0xDEADBEEFu);
  weft_semaphore_release(semaphore);
  weft_buffer_release(buffer);
}

static void fill_patterns_and_offsets(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 64);
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  uint64_t values[3] = {1, 2, 3};
  uint8_t p1 = 0x11;
  uint16_t p2 = 0x2233;
  uint32_t p4 = 0x44556677u;
  WEFT_ASSERT_OK(weft_device_queue_fill(
      cts->device, ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&semaphore, &values[0]), buffer, 1, 7, &p1, 1));
  WEFT_ASSERT_OK(weft_device_queue_fill(
      cts->device, ANY, weft_cts_list1(&semaphore, &values[0]),
      weft_cts_list1(&semaphore, &values[1]), buffer, 8, 8, &p2, 2));
  WEFT_ASSERT_OK(weft_device_queue_fill(
      cts->device, ANY, weft_cts_list1(&semaphore, &values[1]),
      weft_cts_list1(&semaphore, &values[2]), buffer, 16, 16, &p4, 4));
  WEFT_ASSERT_OK(weft_cts_wait(semaphore, 3));
  uint8_t bytes[64];
  weft_cts_read_buffer(cts, buffer, 0, bytes, sizeof(bytes));
  assert_int_equal(bytes[0], 0);
  for (int i = 1; i < 8; ++i) assert_int_equal(bytes[i], 0x11);
  for (int i = 8; i < 16; i += 2) {
    uint16_t v;
    memcpy(&v, &bytes[i], 2);
    assert_int_equal(v, 0x2233);
  }
  for (int i = 16; i < 32; i += 4) {
    uint32_t v;
    memcpy(&v, &bytes[i], 4);
    assert_int_equal(v, 0x44556677u);
  }
  for (int i = 32; i < 64; ++i) assert_int_equal(bytes[i], 0);
  weft_semaphore_release(semaphore);
  weft_buffer_release(buffer);
}

static void zero_length_ops_signal(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* a = weft_cts_allocate_buffer(cts, 16);
  weft_buffer_t* b = weft_cts_allocate_buffer(cts, 16);
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  uint64_t values[3] = {1, 2, 3};
  uint32_t pattern = 7;
  WEFT_ASSERT_OK(weft_device_queue_fill(
      cts->device, ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&semaphore, &values[0]), a, 4, 0, &pattern, 4));
  WEFT_ASSERT_OK(weft_device_queue_update(
      cts->device, ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&semaphore, &values[1]), NULL, a, 0, 0));
  WEFT_ASSERT_OK(weft_device_queue_copy(
      cts->device, ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&semaphore, &values[2]), a, 0, b, 0, 0));
  WEFT_ASSERT_OK(weft_cts_wait(semaphore, 3));
  weft_cts_assert_words(cts, a, 0, 4, 0);
  weft_semaphore_release(semaphore);
  weft_buffer_release(a);
  weft_buffer_release(b);
}

static void update_basic(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 32);
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1;
  const char data[] = "hello, weft queue";
  WEFT_ASSERT_OK(weft_device_queue_update(
      cts->device, ANY, weft_semaphore_list_empty(),
      weft_cts_list1(&semaphore, &one), data, buffer, 4, sizeof(data)));
  WEFT_ASSERT_OK(weft_cts_wait(semaphore, 1));
  char out[sizeof(data)];
  weft_cts_read_buffer(cts, buffer, 4, out, sizeof(out));
  assert_memory_equal(out, data, sizeof(data));
  weft_semaphore_release(semaphore);
  weft_buffer_release(buffer);
}

static void update_copies_source_at_call(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 64);
  weft_semaphore_t* gate = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* done = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1;
  uint8_t* source = malloc(64);
  memset(source, 0xAB, 64);
  WEFT_ASSERT_OK(weft_device_queue_update(
      cts->device, ANY, weft_cts_list1(&gate, &one),
      weft_cts_list1(&done, &one), source, buffer, 0, 64));
  // Mutate and free the source before the update may run.
  memset(source, 0x00, 64);
  free(source);
  assert_int_equal(weft_cts_query_value(done), 0);
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  WEFT_ASSERT_OK(weft_cts_wait(done, 1));
  weft_cts_assert_words(cts, buffer, 0, 16, 0xABABABABu);
  weft_semaphore_release(gate);
  weft_semaphore_release(done);
  weft_buffer_release(buffer);
}

static void copy_basic(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* source = weft_cts_allocate_buffer(cts, 128);
  weft_buffer_t* target = weft_cts_allocate_buffer(cts, 128);
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  uint64_t values[2] = {1, 2};
  weft_cts_queue_fill_u32(cts, weft_semaphore_list_empty(),
                          weft_cts_list1(&semaphore, &values[0]), source, 0,
                          128, 0x01020304u);
  WEFT_ASSERT_OK(weft_device_queue_copy(
      cts->device, ANY, weft_cts_list1(&semaphore, &values[0]),
      weft_cts_list1(&semaphore, &values[1]), source, 32, target, 64, 32));
  WEFT_ASSERT_OK(weft_cts_wait(semaphore, 2));
  weft_cts_assert_words(cts, target, 0, 16, 0);
  weft_cts_assert_words(cts, target, 64, 8, 0x01020304u);
  weft_cts_assert_words(cts, target, 96, 8, 0);
  weft_semaphore_release(semaphore);
  weft_buffer_release(source);
  weft_buffer_release(target);
}

static void copy_within_one_allocation(void** state) {
  // Disjoint ranges of the same buffer are fine.
  weft_cts_t* cts = *state;
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 64);
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  uint64_t values[2] = {1, 2};
  weft_cts_queue_fill_u32(cts, weft_semaphore_list_empty(),
                          weft_cts_list1(&semaphore, &values[0]), buffer, 0, 32,
                          0x5A5A5A5Au);
  WEFT_ASSERT_OK(weft_device_queue_copy(
      cts->device, ANY, weft_cts_list1(&semaphore, &values[0]),
      weft_cts_list1(&semaphore, &values[1]), buffer, 0, buffer, 32, 32));
  WEFT_ASSERT_OK(weft_cts_wait(semaphore, 2));
  weft_cts_assert_words(cts, buffer, 0, 16, 0x5A5A5A5Au);
  weft_semaphore_release(semaphore);
  weft_buffer_release(buffer);
}

static void barrier_signals(void** state) {
  weft_cts_t* cts = *state;
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1;
  WEFT_ASSERT_OK(weft_device_queue_barrier(cts->device, ANY,
                                           weft_semaphore_list_empty(),
                                           weft_cts_list1(&semaphore, &one)));
  WEFT_ASSERT_OK(weft_cts_wait(semaphore, 1));
  // A barrier with no lists at all is accepted and does nothing visible.
  WEFT_ASSERT_OK(weft_device_queue_barrier(cts->device, ANY,
                                           weft_semaphore_list_empty(),
                                           weft_semaphore_list_empty()));
  weft_semaphore_release(semaphore);
}

static void barrier_joins_and_orders(void** state) {
  // Two fills into halves, a barrier waiting on both, a copy after it.
  weft_cts_t* cts = *state;
  weft_buffer_t* source = weft_cts_allocate_buffer(cts, 64);
  weft_buffer_t* target = weft_cts_allocate_buffer(cts, 64);
  weft_semaphore_t* a = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* b = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* joined = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* gate = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1, two = 2;
  // Copy first (parks on the barrier), then the barrier, then the fills.
  WEFT_ASSERT_OK(weft_device_queue_copy(
      cts->device, ANY, weft_cts_list1(&joined, &one),
      weft_cts_list1(&joined, &two), source, 0, target, 0, 64));
  weft_semaphore_t* both[2] = {a, b};
  uint64_t both_values[2] = {1, 1};
  WEFT_ASSERT_OK(weft_device_queue_barrier(cts->device, ANY,
                                           weft_cts_list(2, both, both_values),
                                           weft_cts_list1(&joined, &one)));
  weft_cts_queue_fill_u32(cts, weft_cts_list1(&gate, &one),
                          weft_cts_list1(&a, &one), source, 0, 32, 0xAAAAAAAAu);
  weft_cts_queue_fill_u32(cts, weft_cts_list1(&gate, &one),
                          weft_cts_list1(&b, &one), source, 32, 32,
                          0xBBBBBBBBu);
  assert_int_equal(weft_cts_query_value(joined), 0);
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  WEFT_ASSERT_OK(weft_cts_wait(joined, 2));
  weft_cts_assert_words(cts, target, 0, 8, 0xAAAAAAAAu);
  weft_cts_assert_words(cts, target, 32, 8, 0xBBBBBBBBu);
  weft_semaphore_release(a);
  weft_semaphore_release(b);
  weft_semaphore_release(joined);
  weft_semaphore_release(gate);
  weft_buffer_release(source);
  weft_buffer_release(target);
}

//===----------------------------------------------------------------------===//
// Files
//===----------------------------------------------------------------------===//

static void read_write_memory_file(void** state) {
  weft_cts_t* cts = *state;
  uint8_t memory[128];
  for (int i = 0; i < 128; ++i) memory[i] = (uint8_t)i;
  weft_file_t* file = NULL;
  WEFT_ASSERT_OK(weft_file_wrap_memory(
      WEFT_FILE_ACCESS_READ | WEFT_FILE_ACCESS_WRITE, memory, sizeof(memory),
      NULL, NULL, cts->allocator, &file));
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 64);
  weft_semaphore_t* s = weft_cts_create_semaphore(cts, 0);
  uint64_t v[3] = {1, 2, 3};
  WEFT_ASSERT_OK(weft_device_queue_read(
      cts->device, ANY, weft_semaphore_list_empty(), weft_cts_list1(&s, &v[0]),
      file, 32, buffer, 0, 64));
  weft_cts_queue_fill_u32(cts, weft_cts_list1(&s, &v[0]),
                          weft_cts_list1(&s, &v[1]), buffer, 0, 4, 0xEEEEEEEEu);
  WEFT_ASSERT_OK(weft_device_queue_write(
      cts->device, ANY, weft_cts_list1(&s, &v[1]), weft_cts_list1(&s, &v[2]),
      buffer, 0, file, 0, 8));
  WEFT_ASSERT_OK(weft_cts_wait(s, 3));
  for (int i = 0; i < 4; ++i) assert_int_equal(memory[i], 0xEE);
  for (int i = 4; i < 8; ++i) assert_int_equal(memory[i], 32 + i);
  // Reading past the end of the file is a synchronous OUT_OF_RANGE.
  weft_semaphore_t* untouched = weft_cts_create_semaphore(cts, 0);
  WEFT_ASSERT_STATUS(
      OUT_OF_RANGE,
      weft_device_queue_read(cts->device, ANY, weft_semaphore_list_empty(),
                             weft_cts_list1(&untouched, &v[0]), file, 100,
                             buffer, 0, 64));
  assert_int_equal(weft_cts_query_value(untouched), 0);  // untouched
  weft_semaphore_release(untouched);
  weft_semaphore_release(s);
  weft_buffer_release(buffer);
  weft_file_release(file);
}

static void read_write_fd_file(void** state) {
  weft_cts_t* cts = *state;
  char path[] = "/tmp/weft_cts_queue_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  uint8_t data[256];
  for (int i = 0; i < 256; ++i) data[i] = (uint8_t)(255 - i);
  assert_int_equal(write(fd, data, sizeof(data)), (ssize_t)sizeof(data));
  weft_file_t* file = NULL;
  WEFT_ASSERT_OK(
      weft_file_from_fd(fd, WEFT_FILE_ACCESS_READ | WEFT_FILE_ACCESS_WRITE,
                        cts->allocator, &file));
  close(fd);
  unlink(path);
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, 128);
  weft_semaphore_t* s = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* gate = weft_cts_create_semaphore(cts, 0);
  uint64_t v[3] = {1, 2, 3};
  // Parked read, then a write back to a later offset, then a read of that.
  WEFT_ASSERT_OK(weft_device_queue_read(
      cts->device, ANY, weft_cts_list1(&gate, &v[0]), weft_cts_list1(&s, &v[0]),
      file, 0, buffer, 0, 128));
  WEFT_ASSERT_OK(weft_device_queue_write(
      cts->device, ANY, weft_cts_list1(&s, &v[0]), weft_cts_list1(&s, &v[1]),
      buffer, 0, file, 128, 64));
  WEFT_ASSERT_OK(weft_device_queue_read(
      cts->device, ANY, weft_cts_list1(&s, &v[1]), weft_cts_list1(&s, &v[2]),
      file, 128, buffer, 64, 64));
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  WEFT_ASSERT_OK(weft_cts_wait(s, 3));
  uint8_t out[128];
  weft_cts_read_buffer(cts, buffer, 0, out, sizeof(out));
  assert_memory_equal(out, data, 64);
  assert_memory_equal(out + 64, data, 64);
  weft_semaphore_release(s);
  weft_semaphore_release(gate);
  weft_buffer_release(buffer);
  weft_file_release(file);
}

//===----------------------------------------------------------------------===//
// Command buffers
//===----------------------------------------------------------------------===//

static void execute_command_buffer_with_binding_table(void** state) {
  weft_cts_t* cts = *state;
  weft_buffer_t* a = weft_cts_allocate_buffer(cts, 64);
  weft_buffer_t* b = weft_cts_allocate_buffer(cts, 64);
  weft_command_buffer_t* command_buffer = NULL;
  WEFT_ASSERT_OK(weft_command_buffer_create(
      cts->device, WEFT_COMMAND_BUFFER_MODE_REUSABLE, WEFT_COMMAND_CATEGORY_ANY,
      2, &command_buffer));
  WEFT_ASSERT_OK(weft_command_buffer_begin(command_buffer));
  uint32_t pattern = 0x0F0F0F0Fu;
  WEFT_ASSERT_OK(weft_command_buffer_fill(
      command_buffer, weft_make_indirect_buffer_ref(0, 0, 64), &pattern, 4));
  WEFT_ASSERT_OK(weft_command_buffer_barrier(command_buffer));
  WEFT_ASSERT_OK(weft_command_buffer_copy(
      command_buffer, weft_make_indirect_buffer_ref(0, 0, 32),
      weft_make_indirect_buffer_ref(1, 32, 32)));
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));

  weft_semaphore_t* s = weft_cts_create_semaphore(cts, 0);
  weft_semaphore_t* gate = weft_cts_create_semaphore(cts, 0);
  uint64_t one = 1;
  weft_buffer_binding_t bindings[2] = {{a, 0, 64}, {b, 0, 64}};
  weft_binding_table_t table = {2, bindings};
  WEFT_ASSERT_OK(weft_device_queue_execute(
      cts->device, ANY, weft_cts_list1(&gate, &one), weft_cts_list1(&s, &one),
      command_buffer, table));
  // The table was borrowed for the call only.
  memset(bindings, 0, sizeof(bindings));
  weft_command_buffer_release(command_buffer);
  WEFT_ASSERT_OK(weft_semaphore_signal(gate, 1));
  WEFT_ASSERT_OK(weft_cts_wait(s, 1));
  weft_cts_assert_words(cts, a, 0, 16, 0x0F0F0F0Fu);
  weft_cts_assert_words(cts, b, 0, 8, 0);
  weft_cts_assert_words(cts, b, 32, 8, 0x0F0F0F0Fu);
  // A missing table entry is a synchronous error.
  WEFT_ASSERT_OK(weft_command_buffer_create(
      cts->device, WEFT_COMMAND_BUFFER_MODE_ONE_SHOT, WEFT_COMMAND_CATEGORY_ANY,
      1, &command_buffer));
  WEFT_ASSERT_OK(weft_command_buffer_begin(command_buffer));
  WEFT_ASSERT_OK(weft_command_buffer_fill(
      command_buffer, weft_make_indirect_buffer_ref(0, 0, 64), &pattern, 4));
  WEFT_ASSERT_OK(weft_command_buffer_end(command_buffer));
  weft_binding_table_t empty_table = {0, NULL};
  weft_semaphore_t* untouched = weft_cts_create_semaphore(cts, 0);
  WEFT_ASSERT_STATUS(
      OUT_OF_RANGE,
      weft_device_queue_execute(cts->device, ANY, weft_semaphore_list_empty(),
                                weft_cts_list1(&untouched, &one),
                                command_buffer, empty_table));
  assert_int_equal(weft_cts_query_value(untouched), 0);  // untouched
  weft_command_buffer_release(command_buffer);
  weft_semaphore_release(untouched);
  weft_semaphore_release(s);
  weft_semaphore_release(gate);
  weft_buffer_release(a);
  weft_buffer_release(b);
}

int main(int argc, char** argv) {
  const struct CMUnitTest tests[] = {
      WEFT_CTS_CASE(fill_whole_buffer),
      WEFT_CTS_CASE(fill_patterns_and_offsets),
      WEFT_CTS_CASE(zero_length_ops_signal),
      WEFT_CTS_CASE(update_basic),
      WEFT_CTS_CASE(update_copies_source_at_call),
      WEFT_CTS_CASE(copy_basic),
      WEFT_CTS_CASE(copy_within_one_allocation),
      WEFT_CTS_CASE(barrier_signals),
      WEFT_CTS_CASE(barrier_joins_and_orders),
      WEFT_CTS_CASE(read_write_memory_file),
      WEFT_CTS_CASE(read_write_fd_file),
      WEFT_CTS_CASE(execute_command_buffer_with_binding_table),
  };
  return weft_cts_run("queue_transfer", tests, WEFT_CTS_COUNT(tests), argc,
                      argv);
}
