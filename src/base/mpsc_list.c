// weft: lock-free MPSC intrusive list (see src/base/mpsc_list.h).

#include "base/mpsc_list.h"

void weft_mpsc_list_initialize(weft_mpsc_list_t* list) {
  atomic_init(&list->head, NULL);
}

bool weft_mpsc_list_push(weft_mpsc_list_t* list, weft_mpsc_entry_t* entry) {
  weft_mpsc_entry_t* head =
      weft_atomic_load(&list->head, memory_order_relaxed);
  do {
    entry->next = head;
    // Release on success: the consumer that takes the chain must see the
    // entry's contents and its next link. Relaxed on failure: we only retry.
  } while (!weft_atomic_compare_exchange_weak(&list->head, &head, entry,
                                              memory_order_release,
                                              memory_order_relaxed));
  return head == NULL;
}

weft_mpsc_entry_t* weft_mpsc_list_pop_all(weft_mpsc_list_t* list) {
  // Acquire: pairs with the producers' release so every entry (and link) in
  // the chain is visible.
  weft_mpsc_entry_t* entry =
      weft_atomic_exchange(&list->head, NULL, memory_order_acquire);
  // The stack is newest-first; reverse it to push order.
  weft_mpsc_entry_t* reversed = NULL;
  while (entry) {
    weft_mpsc_entry_t* next = entry->next;
    entry->next = reversed;
    reversed = entry;
    entry = next;
  }
  return reversed;
}

bool weft_mpsc_list_is_empty(weft_mpsc_list_t* list) {
  return weft_atomic_load(&list->head, memory_order_relaxed) == NULL;
}
