// Tests for the lock-free MPSC intrusive list.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "base/mpsc_list.h"
#include "base/thread.h"

#define PRODUCERS 4
#define PUSHES_PER_PRODUCER 10000

typedef struct item_t {
  int producer;
  int sequence;
  weft_mpsc_entry_t entry;
  int seen;
} item_t;

static void test_single_thread_fifo(void** state) {
  (void)state;
  weft_mpsc_list_t list;
  weft_mpsc_list_initialize(&list);
  assert_true(weft_mpsc_list_is_empty(&list));
  assert_null(weft_mpsc_list_pop_all(&list));
  item_t items[5];
  for (int i = 0; i < 5; ++i) {
    items[i].sequence = i;
    // Only the first push finds the list empty.
    assert_int_equal(weft_mpsc_list_push(&list, &items[i].entry), i == 0);
  }
  assert_false(weft_mpsc_list_is_empty(&list));
  weft_mpsc_entry_t* entry = weft_mpsc_list_pop_all(&list);
  assert_true(weft_mpsc_list_is_empty(&list));
  for (int i = 0; i < 5; ++i) {
    assert_non_null(entry);
    item_t* item = weft_container_of(entry, item_t, entry);
    assert_int_equal(item->sequence, i);
    entry = entry->next;
  }
  assert_null(entry);
}

typedef struct producer_t {
  weft_mpsc_list_t* list;
  item_t* items;
} producer_t;

static int producer_main(void* user_data) {
  producer_t* producer = (producer_t*)user_data;
  for (int i = 0; i < PUSHES_PER_PRODUCER; ++i) {
    weft_mpsc_list_push(producer->list, &producer->items[i].entry);
    if ((i & 255) == 0) weft_thread_yield();
  }
  return 0;
}

static void test_producers_consumer(void** state) {
  (void)state;
  weft_mpsc_list_t list;
  weft_mpsc_list_initialize(&list);
  item_t* items =
      test_calloc((size_t)PRODUCERS * PUSHES_PER_PRODUCER, sizeof(item_t));
  producer_t producers[PRODUCERS];
  weft_thread_t* threads[PRODUCERS];
  for (int p = 0; p < PRODUCERS; ++p) {
    producers[p].list = &list;
    producers[p].items = items + (size_t)p * PUSHES_PER_PRODUCER;
    for (int i = 0; i < PUSHES_PER_PRODUCER; ++i) {
      producers[p].items[i].producer = p;
      producers[p].items[i].sequence = i;
    }
  }
  for (int p = 0; p < PRODUCERS; ++p) {
    weft_thread_params_t params = {.name = "producer", .cpu = -1};
    assert_null(weft_thread_create(producer_main, &producers[p], &params,
                                   weft_allocator_system(), &threads[p]));
  }
  // Consume concurrently with the producers until everything has arrived.
  int next_sequence[PRODUCERS] = {0};
  int total = 0;
  while (total < PRODUCERS * PUSHES_PER_PRODUCER) {
    weft_mpsc_entry_t* entry = weft_mpsc_list_pop_all(&list);
    if (!entry) weft_thread_yield();
    while (entry) {
      weft_mpsc_entry_t* next = entry->next;
      item_t* item = weft_container_of(entry, item_t, entry);
      assert_int_equal(item->seen, 0);
      item->seen = 1;
      // FIFO per producer.
      assert_int_equal(item->sequence, next_sequence[item->producer]);
      ++next_sequence[item->producer];
      ++total;
      entry = next;
    }
  }
  for (int p = 0; p < PRODUCERS; ++p) weft_thread_join(threads[p]);
  assert_true(weft_mpsc_list_is_empty(&list));
  for (int p = 0; p < PRODUCERS; ++p) {
    assert_int_equal(next_sequence[p], PUSHES_PER_PRODUCER);
  }
  for (int i = 0; i < PRODUCERS * PUSHES_PER_PRODUCER; ++i) {
    assert_int_equal(items[i].seen, 1);
  }
  test_free(items);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_single_thread_fifo),
      cmocka_unit_test(test_producers_consumer),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
